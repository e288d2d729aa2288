//! Counts on the real shared traces. A `harness = false` test binary
//! (`testdata::run_tests`): a test whose trace is absent shows as `ignored`,
//! with where to get the trace printed above the results, and fails under
//! `CI=true`.

use lrugen_trace::testdata::{find_shared_trace, run_tests, shared_trace, TraceTest};
use lrugen_trace::{
    load_dense, load_dense_with, open, open_records, write_trace, CsvParams, KeySpace, ReadOptions, TraceFormat,
    TraceOp, TraceRecord, WriterOptions,
};

fn check_counts(path: &std::path::Path, requests: u64, unique: u32) {
    let name = path.display();
    let d = load_dense(path, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.nr_requests, requests, "{name} requests");
    assert_eq!(d.pages.len() as u64, requests, "{name} pages.len()");
    assert_eq!(d.nr_unique, unique, "{name} unique");
    assert!(d.pages.iter().all(|&p| p < d.nr_unique));
}

const OLTP: &str = "arc/OLTP.lis.zst";
const P3: &str = "arc/P3.lis.zst";
const P12: &str = "arc/P12.lis.zst";
const CP_BIN: &str = "cloudphysics/cloudPhysicsIO.oracleGeneral.bin";
const CP_CSV: &str = "cloudphysics/cloudPhysicsIO.csv";

fn main() -> std::process::ExitCode {
    let t = |name, traces, run| TraceTest { name, traces, run };
    run_tests(vec![
        t("oltp_counts", &[OLTP], |p| check_counts(&p[0], 914_145, 186_880)),
        t("p3_counts", &[P3], |p| check_counts(&p[0], 3_912_296, 762_543)),
        t("p12_counts", &[P12], |p| check_counts(&p[0], 13_208_930, 3_153_310)),
        t("cloudphysics_oracle_general_counts", &[CP_BIN], |p| {
            check_counts(&p[0], 113_872, 48_974)
        }),
        t("cloudphysics_oracle_matches_csv", &[CP_BIN, CP_CSV], |p| {
            cloudphysics_oracle_matches_csv(&p[0], &p[1])
        }),
        t(
            "cloudphysics_csv_reader_matches_oracle_general",
            &[CP_BIN, CP_CSV],
            |p| cloudphysics_csv_reader_matches_oracle_general(&p[0], &p[1]),
        ),
        t("cloudphysics_csv_page_expansion", &[CP_CSV], |p| {
            cloudphysics_csv_page_expansion(&p[0])
        }),
        t("cloudphysics_round_trips_through_lrugen_format", &[CP_CSV], |p| {
            cloudphysics_round_trip(&p[0])
        }),
        t("oltp_round_trips_through_lrugen_format", &[OLTP], |p| {
            oltp_round_trip(&p[0])
        }),
        t("missing_shared_trace_policy", &[], |_| missing_shared_trace_policy()),
    ])
}

/// The oracleGeneral sample holds the same requests as the CSV: the obj_id of
/// record i is the lbn of CSV row i.
fn cloudphysics_oracle_matches_csv(bin: &std::path::Path, csv: &std::path::Path) {
    let text = std::fs::read_to_string(csv).unwrap();
    let lbns = text
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().and_then(|f| f.trim().parse::<u64>().ok()).unwrap());
    let keys = open(bin, Some(TraceFormat::OracleGeneral)).unwrap();
    let mut n = 0;
    for (key, lbn) in keys.zip(lbns) {
        assert_eq!(key.unwrap(), lbn, "record {}", n + 1);
        n += 1;
    }
    assert_eq!(n, 113_872);
}

fn cloudphysics_csv_options() -> ReadOptions {
    ReadOptions {
        format: Some(TraceFormat::Csv),
        csv: Some(CsvParams::cloudphysics()),
        ..Default::default()
    }
}

/// The csv read through the csv reader with the CloudPhysics preset gives the
/// oracleGeneral stream record for record: same keys, same times.
fn cloudphysics_csv_reader_matches_oracle_general(bin: &std::path::Path, csv: &std::path::Path) {
    let oracle = open_records(bin, &ReadOptions::default()).unwrap();
    let mut csv_records = open_records(csv, &cloudphysics_csv_options()).unwrap();
    let (mut n, mut reads, mut writes) = (0u64, 0u64, 0u64);
    for (o, c) in oracle.zip(csv_records.by_ref()) {
        let (o, c) = (o.unwrap(), c.unwrap());
        n += 1;
        assert_eq!(c.key, o.key, "record {n}");
        assert_eq!(c.time, o.time, "record {n}");
        match c.op {
            TraceOp::Read => reads += 1,
            TraceOp::Write => writes += 1,
            op => panic!("record {n}: {op}"),
        }
    }
    assert!(csv_records.next().is_none());
    assert_eq!(n, 113_872);
    assert_eq!((reads, writes), (46_974, 66_898));
    // Detection without options: the header selects the preset.
    let d = load_dense(csv, None).unwrap();
    let d2 = load_dense_with(csv, &cloudphysics_csv_options()).unwrap();
    assert_eq!(d, d2);
}

/// Each request expanded to the 4 KiB pages it touches (lbn × 512 bytes,
/// size bytes): the counts of shared/traces/README.md.
fn cloudphysics_csv_page_expansion(csv: &std::path::Path) {
    let d = load_dense_with(csv, &cloudphysics_csv_options()).unwrap();
    assert_eq!(d.nr_requests, 1_141_869);
    assert_eq!(d.nr_unique, 269_210);
}

/// A real trace saved in lrugen's format and read back: the same records,
/// and the same dense trace.
fn cloudphysics_round_trip(csv: &std::path::Path) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let recs: Vec<TraceRecord> = open_records(csv, &cloudphysics_csv_options())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let out = dir.join("cloudphysics.lrugen");
    let options = WriterOptions {
        key_space: KeySpace::Blocks(512),
        zstd_level: Some(3),
        record_count: None,
    };
    write_trace(&out, options, recs.iter().copied()).unwrap();
    let mut back = open_records(&out, &ReadOptions::default()).unwrap();
    let back_recs: Vec<TraceRecord> = back.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(back_recs, recs);
    assert_eq!(back.key_space(), KeySpace::Blocks(512));
    let d = load_dense(&out, None).unwrap();
    assert_eq!((d.nr_requests, d.nr_unique), (1_141_869, 269_210));
}

/// OLTP saved in lrugen's format and read back: the same dense trace.
fn oltp_round_trip(oltp: &std::path::Path) {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("OLTP.lrugen");
    let recs = open_records(oltp, &ReadOptions::default()).unwrap().map(Result::unwrap);
    let options = WriterOptions {
        zstd_level: Some(3),
        ..Default::default()
    };
    assert_eq!(write_trace(&out, options, recs).unwrap(), 914_145);
    assert_eq!(load_dense(&out, None).unwrap(), load_dense(oltp, None).unwrap());
}

/// A missing trace skips (returns `None`) on a developer machine and fails
/// under `CI=true`; the reason says where to get it.
fn missing_shared_trace_policy() {
    let name = "arc/NO-SUCH-TRACE.lis.zst";
    if lrugen_trace::testdata::in_ci() {
        assert!(std::panic::catch_unwind(|| shared_trace(name)).is_err());
    } else {
        assert!(shared_trace(name).is_none());
    }
    let why = find_shared_trace(name).unwrap_err();
    assert!(why.contains("lrugen traces fetch NO-SUCH-TRACE"), "{why}");
    assert!(why.contains("moka-rs/cache-trace"), "{why}");
    let why = find_shared_trace("cloudphysics/cloudPhysicsIO.csv.missing").unwrap_err();
    assert!(why.contains("1a1a11a/libCacheSim"), "{why}");
}

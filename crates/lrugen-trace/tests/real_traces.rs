//! Counts on the real shared traces (skipped with a note when they are
//! absent, failing under `CI=true`).

use lrugen_trace::testdata::shared_trace;
use lrugen_trace::{load_dense, open, TraceFormat};

fn check_counts(name: &str, requests: u64, unique: u32) {
    let Some(path) = shared_trace(name) else {
        return;
    };
    let d = load_dense(&path, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.nr_requests, requests, "{name} requests");
    assert_eq!(d.pages.len() as u64, requests, "{name} pages.len()");
    assert_eq!(d.nr_unique, unique, "{name} unique");
    assert!(d.pages.iter().all(|&p| p < d.nr_unique));
}

#[test]
fn oltp_counts() {
    check_counts("arc/OLTP.lis.zst", 914_145, 186_880);
}

#[test]
fn p3_counts() {
    check_counts("arc/P3.lis.zst", 3_912_296, 762_543);
}

#[test]
fn p12_counts() {
    check_counts("arc/P12.lis.zst", 13_208_930, 3_153_310);
}

#[test]
fn cloudphysics_oracle_general_counts() {
    check_counts("cloudphysics/cloudPhysicsIO.oracleGeneral.bin", 113_872, 48_974);
}

/// The oracleGeneral sample holds the same requests as the CSV: the obj_id of
/// record i is the lbn of CSV row i.
#[test]
fn cloudphysics_oracle_matches_csv() {
    let (Some(bin), Some(csv)) = (
        shared_trace("cloudphysics/cloudPhysicsIO.oracleGeneral.bin"),
        shared_trace("cloudphysics/cloudPhysicsIO.csv"),
    ) else {
        return;
    };
    let text = std::fs::read_to_string(csv).unwrap();
    let lbns = text
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().and_then(|f| f.trim().parse::<u64>().ok()).unwrap());
    let keys = open(&bin, Some(TraceFormat::OracleGeneral)).unwrap();
    let mut n = 0;
    for (key, lbn) in keys.zip(lbns) {
        assert_eq!(key.unwrap(), lbn, "record {}", n + 1);
        n += 1;
    }
    assert_eq!(n, 113_872);
}

/// A missing trace skips (returns `None`) on a developer machine and fails
/// under `CI=true`.
#[test]
fn missing_shared_trace_policy() {
    let name = "arc/NO-SUCH-TRACE.lis.zst";
    if lrugen_trace::testdata::in_ci() {
        assert!(std::panic::catch_unwind(|| shared_trace(name)).is_err());
    } else {
        assert!(shared_trace(name).is_none());
    }
}

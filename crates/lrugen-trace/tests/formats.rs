//! The record readers (fio iolog, valgrind lackey, csv, lcs, lrugen) on the
//! checked-in samples, malformed inputs, and property tests.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use lrugen_trace::{
    lcs_header, load_dense, load_dense_with, open, open_records, open_with, write_trace, CsvParams, CsvReader,
    IologReader, KeySpace, LackeyReader, LcsReader, LcsRecord, Location, LrugenReader, LrugenWriter, ReadOptions,
    RecordReader, TraceError, TraceErrorKind, TraceFormat, TraceOp, TraceReader, TraceRecord, WriterOptions,
    LCS_RECORD_SIZES,
};
use proptest::prelude::*;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lrugen-trace-formats-{name}"))
}

fn records(path: &Path, options: &ReadOptions) -> Result<Vec<TraceRecord>, TraceError> {
    open_records(path, options)?.collect()
}

fn keys(path: &Path, options: &ReadOptions) -> Result<Vec<u64>, TraceError> {
    open_with(path, options)?.collect()
}

fn mem_records(
    bytes: &[u8],
    format: TraceFormat,
    name: &str,
    options: &ReadOptions,
) -> Result<Vec<TraceRecord>, TraceError> {
    RecordReader::new(Cursor::new(bytes), format, name, options).collect()
}

fn mem_err(bytes: &[u8], format: TraceFormat, name: &str) -> TraceError {
    mem_records(bytes, format, name, &ReadOptions::default()).unwrap_err()
}

fn rec(op: TraceOp, key: u64, len: u32, file: u32, time: u64) -> TraceRecord {
    TraceRecord {
        op,
        key,
        len,
        file,
        time,
    }
}

use TraceOp::{Datasync, Fetch, Load, Read, Store, Sync, Trim, Write};

const F1: u64 = 1 << 52;

// ---- samples

#[test]
fn iolog_v2_sample() {
    let path = data("tiny-v2.iolog");
    let opts = ReadOptions::default();
    assert_eq!(
        records(&path, &opts).unwrap(),
        [
            rec(Read, 0, 4096, 0, 0),
            rec(Write, 4095, 2, 0, 0),
            rec(Read, 8192, 8192, 1, 0),
            rec(Sync, 0, 0, 0, 0),
            rec(Trim, 0, 4096, 1, 0),
            rec(Datasync, 0, 0, 1, 0),
            rec(Read, 0, 4096, 0, 0),
        ]
    );
    // Page keys: accesses only; the write crosses a page boundary; file 1's
    // pages carry the file index above bit 52.
    assert_eq!(keys(&path, &opts).unwrap(), [0, 0, 1, F1 | 2, F1 | 3, 0]);
    let d = load_dense(&path, None).unwrap();
    assert_eq!(d.pages, [0, 0, 1, 2, 3, 0]);
    assert_eq!(d.nr_unique, 4);
    let r = open_records(&path, &opts).unwrap();
    assert_eq!(r.format(), TraceFormat::Iolog);
    assert_eq!(r.key_space(), KeySpace::Bytes);
    let mut r = IologReader::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()), &path);
    assert_eq!(r.by_ref().count(), 7);
    assert_eq!(r.version(), 2);
    let files: Vec<(&str, bool)> = r.files().iter().map(|f| (f.name.as_str(), f.open)).collect();
    assert_eq!(files, [("/data/a", false), ("/data/b", false)]);
}

#[test]
fn iolog_v3_sample() {
    let path = data("tiny-v3.iolog");
    let ms = 1_000_000;
    assert_eq!(
        records(&path, &ReadOptions::default()).unwrap(),
        [
            rec(Read, 1 << 20, 4096, 0, 2 * ms),
            rec(Write, 0, 512, 0, 5 * ms),
            rec(Read, 4096, 12288, 0, 5 * ms),
        ]
    );
    assert_eq!(keys(&path, &ReadOptions::default()).unwrap(), [256, 0, 1, 2, 3]);
    // fio's own writer logs microseconds: the tick is an option.
    let us = ReadOptions {
        iolog_tick_ns: Some(1_000),
        ..Default::default()
    };
    assert_eq!(records(&path, &us).unwrap()[0].time, 2_000);
}

#[test]
fn lackey_sample() {
    let path = data("tiny.lackey");
    assert_eq!(
        records(&path, &ReadOptions::default()).unwrap(),
        [
            rec(Fetch, 0x0401_0173, 3, 0, 0),
            rec(Load, 0x7_ff00_0398, 8, 0, 0),
            rec(Store, 0x7_ff00_0ffe, 4, 0, 0),
            rec(Load, 0x0421_b8e0, 4, 0, 0),
            rec(Store, 0x0421_b8e0, 4, 0, 0),
            rec(Fetch, 0x0401_ffff, 2, 0, 0),
        ]
    );
    assert_eq!(
        keys(&path, &ReadOptions::default()).unwrap(),
        [0x4010, 0x7ff000, 0x7ff000, 0x7ff001, 0x421b, 0x421b, 0x401f, 0x4020]
    );
}

#[test]
fn real_valgrind_output() {
    // The head and tail of `valgrind --tool=lackey --trace-mem=yes /bin/true`.
    let path = data("valgrind-true.lackey");
    let recs = records(&path, &ReadOptions::default()).unwrap();
    // 34 access lines, one of them a modify (load + store).
    assert_eq!(recs.len(), 35);
    assert_eq!(recs[0], rec(Fetch, 0x0401_ab70, 3, 0, 0));
    assert_eq!(recs[2], rec(Store, 0x1f_ff00_0778, 8, 0, 0));
    // Detected from the content, whatever the name.
    let renamed = tmp("valgrind.out");
    std::fs::copy(&path, &renamed).unwrap();
    assert_eq!(
        open_records(&renamed, &ReadOptions::default()).unwrap().format(),
        TraceFormat::Lackey
    );
}

#[test]
fn csv_cloudphysics_sample() {
    let path = data("tiny-cloudphysics.csv");
    let expected = [
        rec(Write, 42_932_745, 512, 0, 5_633_898),
        rec(Write, 42_932_746, 512, 0, 5_633_898),
        rec(Read, 40_409_911, 6656, 0, 5_633_899),
        rec(Read, 8, 4096, 0, 5_633_900),
    ];
    // Without parameters the CloudPhysics header selects the preset.
    assert_eq!(records(&path, &ReadOptions::default()).unwrap(), expected);
    let preset = ReadOptions {
        csv: Some(CsvParams::cloudphysics()),
        ..Default::default()
    };
    assert_eq!(records(&path, &preset).unwrap(), expected);
    let r = open_records(&path, &preset).unwrap();
    assert_eq!(r.key_space(), KeySpace::Blocks(512));
    // lbn × 512: 42932745 → byte 21981565440 = page 5366593 + 512 bytes;
    // 40409911 → page 5051238 + 3584 bytes, 6656 bytes reach into 5051240.
    assert_eq!(
        keys(&path, &preset).unwrap(),
        [5_366_593, 5_366_593, 5_051_238, 5_051_239, 5_051_240, 1]
    );
    // The same as libCacheSim's -t string (with block-size, lrugen's addition).
    let t: CsvParams =
        "time-col=2, obj-id-col=5, obj-size-col=4, op-col=3, delimiter=,, has-header=true, block-size=512"
            .parse()
            .unwrap();
    assert_eq!(t, CsvParams::cloudphysics());
}

#[test]
fn csv_key_value_sample() {
    let path = data("tiny-kv.tsv");
    let params: CsvParams =
        "time-col=1, obj-id-col=2, obj-size-col=3, op-col=4, delimiter=\\t, has-header=true, obj-id-is-num=false"
            .parse()
            .unwrap();
    let opts = ReadOptions {
        format: Some(TraceFormat::Csv),
        csv: Some(params),
        ..Default::default()
    };
    let recs = records(&path, &opts).unwrap();
    assert_eq!(recs.len(), 3);
    assert_eq!((recs[0].op, recs[0].len, recs[0].time), (Read, 100, 10));
    assert_eq!((recs[1].op, recs[1].len, recs[1].time), (Write, 2000, 11));
    assert_eq!((recs[2].op, recs[2].key), (Trim, recs[0].key));
    assert_ne!(recs[0].key, recs[1].key);
    // Objects are pages; the delete is not an access.
    assert_eq!(keys(&path, &opts).unwrap(), [recs[0].key, recs[1].key]);
}

#[test]
fn lcs_samples() {
    let path = data("tiny-v1.lcs");
    let recs = records(&path, &ReadOptions::default()).unwrap();
    let k: Vec<u64> = recs.iter().map(|r| r.key).collect();
    assert_eq!(k, [7, 3, 7, 1 << 40, 3]);
    assert!(recs.iter().all(|r| r.op == Read && r.len == 4096));
    assert_eq!(recs[4].time, 1004);
    // The same requests as the oracleGeneral sample.
    assert_eq!(
        load_dense(&path, None).unwrap(),
        load_dense(&data("tiny.oracleGeneral.bin"), None).unwrap()
    );
    let mut r = LcsReader::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()), &path);
    assert!(r.next_raw().unwrap().is_some());
    let h = r.header().unwrap();
    assert_eq!((h.size, h.version, h.n_req), (8192, 1, Some(5)));

    let path = data("tiny-v2.lcs");
    assert_eq!(
        records(&path, &ReadOptions::default()).unwrap(),
        [
            rec(Read, 11, 4096, 0, 50),
            rec(Write, 12, 4096, 0, 51),
            rec(Read, 13, 4096, 0, 52),
            rec(Write, 11, 4096, 0, 53),
            rec(Trim, 11, 4096, 0, 54),
        ]
    );
    assert_eq!(keys(&path, &ReadOptions::default()).unwrap(), [11, 12, 13, 11]);
    let mut r = LcsReader::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()), &path);
    let raw: Vec<LcsRecord> = std::iter::from_fn(|| r.next_raw().unwrap()).collect();
    assert_eq!(raw[0].tenant, 5);
    assert_eq!(raw[3].tenant, 7);
    assert_eq!(raw[1].obj_size, 200);
    assert_eq!(raw[0].next_access_vtime, 4);
    let h = r.header().unwrap();
    assert_eq!((h.size, h.version, h.n_req), (1024, 2, None));
}

#[test]
fn every_lcs_version() {
    for v in 1..=8u8 {
        let mut bytes = lcs_header(8192, v, 3);
        for i in 0..3u64 {
            let r = LcsRecord {
                clock_time: i as u32,
                obj_id: 100 + i,
                obj_size: 4096,
                op: if v >= 2 { 13 } else { 0 },
                ..Default::default()
            };
            bytes.extend_from_slice(&r.encode(v));
        }
        let recs = mem_records(&bytes, TraceFormat::Lcs, "t.lcs", &ReadOptions::default()).unwrap();
        let k: Vec<u64> = recs.iter().map(|r| r.key).collect();
        assert_eq!(k, [100, 101, 102], "v{v}");
        let op = if v >= 2 { Write } else { Read };
        assert!(recs.iter().all(|r| r.op == op), "v{v}");
        assert_eq!(bytes.len(), 8192 + 3 * LCS_RECORD_SIZES[usize::from(v)]);
    }
    // The oldest 1024-byte header: a struct-format string, the version at 1008.
    let mut h = vec![0u8; 1024];
    h[..8].copy_from_slice(&0x1234_5678_9abc_def0u64.to_le_bytes());
    h[8..14].copy_from_slice(b"<IQIq\0");
    h[1004..1008].copy_from_slice(&24u32.to_le_bytes());
    h[1008..1016].copy_from_slice(&1u64.to_le_bytes());
    h[1016..].copy_from_slice(&0x1234_5678_9abc_def0u64.to_le_bytes());
    h.extend_from_slice(
        &LcsRecord {
            obj_id: 9,
            ..Default::default()
        }
        .encode(1),
    );
    let recs = mem_records(&h, TraceFormat::Lcs, "old.lcs", &ReadOptions::default()).unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].key, 9);
}

/// The lrugen format is pinned by a checked-in file: a change of encoding
/// must be a new format version. `LRUGEN_BLESS=1` rewrites the file.
#[test]
fn lrugen_golden_file() {
    let path = data("tiny.lrugen");
    let recs = [
        rec(Read, 4096, 4096, 0, 0),
        rec(Write, 8192, 100, 1, 1_000_000),
        rec(Load, 4096, 100, 1, 999_000),
        rec(Store, u64::MAX, 8, 0, 999_000),
        rec(Fetch, 0, 8, 0, 2_000_000),
        rec(Sync, 0, 0, 2, 2_000_000),
        rec(Datasync, 0, 0, 2, 2_000_000),
        rec(Trim, 1 << 40, 4096, 2, 3_000_000),
    ];
    let options = WriterOptions {
        key_space: KeySpace::Bytes,
        zstd_level: None,
        record_count: None,
    };
    if std::env::var_os("LRUGEN_BLESS").is_some() {
        write_trace(&path, options, recs).unwrap();
    }
    let read = records(&path, &ReadOptions::default()).unwrap();
    assert_eq!(read, recs);
    let bytes = std::fs::read(&path).unwrap();
    let mut r = LrugenReader::new(&bytes[..], "golden");
    assert!(r.next().is_some());
    let h = r.header().unwrap();
    assert_eq!(
        (h.version, h.key_space, h.compressed, h.record_count),
        (1, KeySpace::Bytes, false, Some(8))
    );
    // The same records written again give the same bytes (header count patched).
    let again = tmp("golden-again.lrugen");
    write_trace(&again, options, recs).unwrap();
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&path).unwrap());
    // Page keys of a byte-addressed lrugen trace.
    let k = keys(&path, &ReadOptions::default()).unwrap();
    assert_eq!(k, [1, F1 | 2, F1 | 1, u64::MAX >> 12, 1 << 52, 0]);
}

#[test]
fn lrugen_files_compressed_and_not() {
    let recs: Vec<TraceRecord> = (0..10_000u64)
        .map(|i| rec(Read, (i * 7919) % 5000, 4096, 0, i))
        .collect();
    let mut sizes = Vec::new();
    for (name, level, count) in [("plain.lrugen", None, None), ("z.lrugen", Some(3), Some(10_000))] {
        let path = tmp(name);
        let options = WriterOptions {
            key_space: KeySpace::Pages,
            zstd_level: level,
            record_count: count,
        };
        assert_eq!(write_trace(&path, options, recs.iter().copied()).unwrap(), 10_000);
        assert_eq!(records(&path, &ReadOptions::default()).unwrap(), recs);
        let d = load_dense(&path, None).unwrap();
        assert_eq!((d.nr_requests, d.nr_unique), (10_000, 5000));
        sizes.push(std::fs::metadata(&path).unwrap().len());
    }
    assert!(sizes[0] < 10_000 * 6, "{sizes:?}");
    assert!(sizes[1] < sizes[0], "{sizes:?}");
    // A file compressed as a whole by the zstd tool is read too.
    let whole = tmp("whole.lrugen.zst");
    std::fs::write(
        &whole,
        zstd::encode_all(&std::fs::read(tmp("plain.lrugen")).unwrap()[..], 3).unwrap(),
    )
    .unwrap();
    assert_eq!(records(&whole, &ReadOptions::default()).unwrap(), recs);
}

#[test]
fn writer_checks_declared_count() {
    let options = WriterOptions {
        record_count: Some(2),
        ..Default::default()
    };
    let mut w = LrugenWriter::new(Vec::new(), options).unwrap();
    w.write(&TraceRecord::default()).unwrap();
    assert!(w.finish().is_err());
    let mut w = LrugenWriter::new(Vec::new(), options).unwrap();
    for _ in 0..2 {
        w.write(&TraceRecord::default()).unwrap();
    }
    assert!(w.write(&TraceRecord::default()).is_err());
}

#[test]
fn detection_prefers_magic_then_name_then_content() {
    // An iolog named .csv: the first line wins.
    let p = tmp("iolog-named.csv");
    std::fs::copy(data("tiny-v3.iolog"), &p).unwrap();
    assert_eq!(
        open_records(&p, &ReadOptions::default()).unwrap().format(),
        TraceFormat::Iolog
    );
    // lcs and lrugen without extensions.
    for (src, f) in [("tiny-v2.lcs", TraceFormat::Lcs), ("tiny.lrugen", TraceFormat::Lrugen)] {
        let p = tmp(&format!("{src}-noext"));
        std::fs::copy(data(src), &p).unwrap();
        assert_eq!(open_records(&p, &ReadOptions::default()).unwrap().format(), f);
        assert_eq!(open(&p, None).unwrap().format(), f);
    }
    // zstd-compressed iolog without a name hint.
    let p = tmp("iolog-z");
    std::fs::write(
        &p,
        zstd::encode_all(&std::fs::read(data("tiny-v2.iolog")).unwrap()[..], 3).unwrap(),
    )
    .unwrap();
    assert_eq!(keys(&p, &ReadOptions::default()).unwrap(), [0, 0, 1, F1 | 2, F1 | 3, 0]);
    // The explicit format overrides everything.
    let err = records(&data("tiny-v2.iolog"), &ReadOptions::format(TraceFormat::Lackey)).unwrap_err();
    assert_eq!(err.location(), Some(Location::Line(1)));
}

// ---- malformed inputs: the message names the file, the place and the expectation

fn assert_msg(err: &TraceError, prefix: &str, contains: &str) {
    let msg = err.to_string();
    assert!(msg.starts_with(prefix), "{msg}\n  does not start with {prefix}");
    assert!(msg.contains(contains), "{msg}\n  does not contain {contains}");
}

#[test]
fn bad_iologs() {
    let f = TraceFormat::Iolog;
    let e = mem_err(b"fio version 4 iolog\n", f, "x.iolog");
    assert_eq!(
        e.to_string(),
        "x.iolog:1: expected the first line \"fio version 2 iolog\" or \"fio version 3 iolog\", \
         found \"fio version 4 iolog\""
    );
    let e = mem_err(b"fio version 2 iolog\nf add\nf open\nf rename 0 1\n", f, "x.iolog");
    assert_msg(
        &e,
        "x.iolog:4: expected an action add, open, close, read",
        "found \"rename\"",
    );
    let e = mem_err(b"fio version 2 iolog\nf add\ng read 0 4096\n", f, "x.iolog");
    assert_eq!(
        e.to_string(),
        "x.iolog:3: expected a file named by an earlier \"add\" action, found \"g\""
    );
    let e = mem_err(b"fio version 2 iolog\nf open\n", f, "x.iolog");
    assert_msg(&e, "x.iolog:2: expected a file named by an earlier", "found \"f\"");
    let e = mem_err(b"fio version 2 iolog\nf add\nf read 0\n", f, "x.iolog");
    assert_msg(
        &e,
        "x.iolog:3: expected \"<file> add|open|close\"",
        "found \"f read 0\"",
    );
    let e = mem_err(b"fio version 2 iolog\nf add\nf read 0 4096 9\n", f, "x.iolog");
    assert_msg(&e, "x.iolog:3: expected", "found \"f read 0 4096 9\"");
    let e = mem_err(b"fio version 2 iolog\nf add\nf read -1 4096\n", f, "x.iolog");
    assert_msg(&e, "x.iolog:3: expected", "found \"f read -1 4096\"");
    let e = mem_err(b"fio version 2 iolog\nf add\nf write 0 4294967296\n", f, "x.iolog");
    assert_msg(&e, "x.iolog:3: expected a length of at most 4294967295 bytes", "found");
    let e = mem_err(b"fio version 3 iolog\n0 f add\nf read 0 1\n", f, "v3.iolog");
    assert_msg(
        &e,
        "v3.iolog:3: expected \"<ms> <file> add|open|close\"",
        "found \"f read 0 1\"",
    );
    let e = mem_err(b"fio version 3 iolog\n18446744073709551615 f add\n", f, "v3.iolog");
    assert_msg(
        &e,
        "v3.iolog:2: expected a timestamp whose value in ns fits in 64 bits",
        "found",
    );
    // A v2 line in a v3 log.
    let e = mem_err(
        b"fio version 3 iolog\n0 f add\n0 f open\nf read 0 4096\n",
        f,
        "v3.iolog",
    );
    assert_eq!(e.location(), Some(Location::Line(4)));
    // An empty file has no records; a header-only log neither.
    assert!(mem_records(b"", f, "e", &ReadOptions::default()).unwrap().is_empty());
    assert!(mem_records(b"fio version 2 iolog\n", f, "e", &ReadOptions::default())
        .unwrap()
        .is_empty());
    // The file name appears in errors from open().
    let p = tmp("bad.iolog");
    std::fs::write(&p, "fio version 2 iolog\nf add\nf read x 1\n").unwrap();
    let e = keys(&p, &ReadOptions::default()).unwrap_err();
    assert_msg(&e, &format!("{}:3: expected", p.display()), "found \"f read x 1\"");
}

#[test]
fn bad_lackey() {
    let f = TraceFormat::Lackey;
    let e = mem_err(b"==1== hi\nI  0400,3\nX 0400,3\n", f, "t.lackey");
    assert_eq!(
        e.to_string(),
        "t.lackey:3: expected \"I  <hex addr>,<len>\", \" L|S|M <hex addr>,<len>\" or a \"==pid==\" line, \
         found \"X 0400,3\""
    );
    for (input, line) in [
        (&b" L 0x0400,3\n"[..], 1),
        (b"I  0400,3\n L 0400\n", 2),
        (b" L 0400,3,4\n", 1),
        (b" L 1ffffffffffffffff,3\n", 1),
        (b"I  zz,3\n", 1),
        (b"L 0400,3\n", 1),
    ] {
        let e = mem_err(input, f, "t.lackey");
        assert_eq!(e.location(), Some(Location::Line(line)), "{e}");
        assert!(
            e.to_string()
                .starts_with(&format!("t.lackey:{line}: expected \"I  <hex addr>")),
            "{e}"
        );
    }
    let e = mem_err(b" S 0400,4294967296\n", f, "t.lackey");
    assert_msg(
        &e,
        "t.lackey:1: expected an access length of at most 4294967295 bytes",
        "found",
    );
}

#[test]
fn bad_csv() {
    let f = TraceFormat::Csv;
    let e = mem_err(b"a,b,c\n1,2,3\n", f, "t.csv");
    assert_msg(
        &e,
        "t.csv:1: expected the CloudPhysics header \"version,time,op,size,lbn\"",
        "found \"a,b,c\"",
    );
    let cp = ReadOptions {
        csv: Some(CsvParams::cloudphysics()),
        ..Default::default()
    };
    let bad = |input: &[u8]| mem_records(input, f, "t.csv", &cp).unwrap_err();
    let h = "version,time,op,size,lbn\n1,5,28,512,9\n";
    let e = bad(format!("{h}1,5,28,512\n").as_bytes());
    assert_msg(
        &e,
        "t.csv:3: expected as many delimited fields as the highest column parameter",
        "found \"4 fields: 1,5,28,512\"",
    );
    let e = bad(format!("{h}1,5,28,512,x9\n").as_bytes());
    assert_msg(&e, "t.csv:3: expected an unsigned decimal object id", "found \"x9\"");
    let e = bad(format!("{h}1,5,2b,512,9\n").as_bytes());
    assert_msg(&e, "t.csv:3: expected an op in the op column", "found \"2b\"");
    let e = bad(format!("{h}1,5,28,-512,9\n").as_bytes());
    assert_msg(&e, "t.csv:3: expected an object size in bytes", "found \"-512\"");
    let e = bad(format!("{h}1,soon,28,512,9\n").as_bytes());
    assert_msg(&e, "t.csv:3: expected a non-negative time", "found \"soon\"");
    let e = bad(format!("{h}1,5,28,512,36028797018963968\n").as_bytes());
    assert_msg(
        &e,
        "t.csv:3: expected obj-id × block-size + obj-size to fit in 64 bits",
        "found",
    );
}

#[test]
fn bad_lcs() {
    let f = TraceFormat::Lcs;
    let e = mem_err(b"not an lcs trace at all", f, "t.lcs");
    assert_eq!(
        e.to_string(),
        "t.lcs:byte offset 0: expected the lcs start magic 0x123456789abcdef0 (little-endian), \
         found \"0x6c206e6120746f6e\""
    );
    // Start magic, but no end magic at 8184 or 1016.
    let mut h = lcs_header(8192, 1, 0);
    h[8184..].fill(0);
    let e = mem_err(&h, f, "t.lcs");
    assert_eq!(
        e.to_string(),
        "t.lcs:byte offset 8184: expected the lcs end magic 0x123456789abcdef0 at byte offset 8184 \
         (8192-byte header) or 1016 (1024-byte header), found \"0x0000000000000000 at 8184 and \
         0x0000000000000000 at 1016\""
    );
    // Shorter than either header: the error is where the data ends (fuzzing found it at 8184).
    let e = mem_err(&lcs_header(8192, 1, 0)[..100], f, "t.lcs");
    assert_msg(
        &e,
        "t.lcs:byte offset 100: expected the lcs end magic",
        "found \"end of file after 100 bytes\"",
    );
    // Long enough for a 1024-byte header only: 1016 is where the end magic was missed.
    let mut h = lcs_header(8192, 1, 0);
    h.truncate(1500);
    let e = mem_err(&h, f, "t.lcs");
    assert_msg(
        &e,
        "t.lcs:byte offset 1016: expected the lcs end magic",
        "found \"0x0000000000000000 at 1016 and end of file after 1500 bytes\"",
    );
    let e = mem_err(&lcs_header(8192, 9, 0), f, "t.lcs");
    assert_eq!(
        e.to_string(),
        "t.lcs:byte offset 8: expected an lcs record version from 1 to 8, found \"9\""
    );
    // A truncated v2 record.
    let mut b = lcs_header(1024, 2, 0);
    b.extend_from_slice(&LcsRecord::default().encode(2));
    b.extend_from_slice(&[1, 2, 3]);
    let e = mem_err(&b, f, "t.lcs");
    assert_eq!(
        e.to_string(),
        "t.lcs:record 2 (byte offset 1052): truncated record, expected 28 bytes, found 3"
    );
    // An op libCacheSim does not define.
    let mut b = lcs_header(8192, 3, 0);
    b.extend_from_slice(
        &LcsRecord {
            op: 255,
            ..Default::default()
        }
        .encode(3),
    );
    let e = mem_err(&b, f, "t.lcs");
    assert_eq!(
        e.to_string(),
        "t.lcs:record 1 (byte offset 8192): expected an lcs op code from 0 to 14 (libCacheSim's req_op_e), \
         found \"255\""
    );
}

fn lrugen_bytes(recs: &[TraceRecord], options: WriterOptions) -> Vec<u8> {
    let mut w = LrugenWriter::new(Vec::new(), options).unwrap();
    for r in recs {
        w.write(r).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn bad_lrugen() {
    let f = TraceFormat::Lrugen;
    let recs = [rec(Read, 1 << 30, 4096, 0, 0), rec(Write, 5, 10, 3, 7)];
    let good = lrugen_bytes(&recs, WriterOptions::default());
    // Header, 6 + 9 bytes of records (the second with len, file and time), end marker.
    assert_eq!(good.len(), 32 + 6 + 9 + 2);
    assert_eq!(mem_records(&good, f, "t", &ReadOptions::default()).unwrap(), recs);

    let e = mem_err(b"LRUGENXX", f, "t.lrugen");
    assert_eq!(
        e.to_string(),
        "t.lrugen:byte offset 0: expected the magic \"LRUGENTR\", found \"LRUGENXX\""
    );
    let e = mem_err(&good[..20], f, "t.lrugen");
    assert_msg(
        &e,
        "t.lrugen:byte offset 20: expected a 32-byte header",
        "found \"the end of the file at byte offset 20\"",
    );
    let e = mem_err(b"", f, "t.lrugen");
    assert_msg(&e, "t.lrugen:byte offset 0: expected the magic", "an empty file");
    let mut b = good.clone();
    b[8] = 2;
    let e = mem_err(&b, f, "t.lrugen");
    assert_eq!(
        e.to_string(),
        "t.lrugen:byte offset 8: expected format version 1, found \"2\""
    );
    let mut b = good.clone();
    b[10] = 4;
    assert_msg(
        &mem_err(&b, f, "t.lrugen"),
        "t.lrugen:byte offset 10: expected flags",
        "0x0004",
    );
    let mut b = good.clone();
    b[12] = 2;
    assert_msg(
        &mem_err(&b, f, "t.lrugen"),
        "t.lrugen:byte offset 12: expected a key space",
        "key space 2, block size 0",
    );
    let mut b = good.clone();
    b[21] = 1;
    assert_msg(
        &mem_err(&b, f, "t.lrugen"),
        "t.lrugen:byte offset 20: expected reserved header bytes to be 0",
        "found",
    );
    let mut b = good.clone();
    b[24] = 1;
    assert_msg(
        &mem_err(&b, f, "t.lrugen"),
        "t.lrugen:byte offset 24: expected a record count of 0",
        "found \"1\"",
    );

    // Cut inside the second record's key delta.
    let e = mem_err(&good[..39], f, "t.lrugen");
    assert_eq!(
        e.to_string(),
        "t.lrugen:record 2 (byte offset 38): expected a varint key delta, \
         found \"the end of the file at byte offset 39\""
    );
    // Cut before the end marker.
    let e = mem_err(&good[..47], f, "t.lrugen");
    assert_eq!(
        e.to_string(),
        "t.lrugen:record 3 (byte offset 47): expected a record tag (op 0-7, bits 6-7 clear) or the end \
         marker 0xFF, found \"the end of the file at byte offset 47\""
    );
    // A corrupted tag.
    let mut b = good.clone();
    b[38] = 0x41;
    assert_msg(
        &mem_err(&b, f, "t.lrugen"),
        "t.lrugen:record 2 (byte offset 38): expected a record tag",
        "found \"0x41\"",
    );
    // A wrong count after the end marker.
    let mut b = good.clone();
    b[48] = 3;
    assert_msg(
        &mem_err(&b, f, "t.lrugen"),
        "t.lrugen:record 3 (byte offset 47): expected the end marker's record count to equal the records read",
        "count 3, 2 records read",
    );
    // Bytes after the end marker.
    let mut b = good.clone();
    b.push(0);
    assert_msg(
        &mem_err(&b, f, "t.lrugen"),
        "t.lrugen:byte offset 49: expected the end of the file after the end marker",
        "found",
    );
    // The header's count disagrees.
    let mut b = good.clone();
    b[10] = 1;
    b[24] = 1;
    assert_msg(
        &mem_err(&b, f, "t.lrugen"),
        "t.lrugen:record 2 (byte offset 38): expected as many records as the header's record count",
        "found \"record 2 after 1 records\"",
    );
    // A length varint above 32 bits.
    let mut b = good[..38].to_vec();
    b.extend_from_slice(&[0x08, 0x00, 0x80, 0x80, 0x80, 0x80, 0x10]);
    assert_msg(
        &mem_err(&b, f, "t.lrugen"),
        "t.lrugen:record 2 (byte offset 38): expected a varint length of at most 32 bits",
        "found \"4294967296 at byte offset 40\"",
    );
    // A corrupted zstd body is a read error at the record.
    let mut z = lrugen_bytes(
        &recs,
        WriterOptions {
            zstd_level: Some(3),
            ..Default::default()
        },
    );
    let n = z.len();
    z[n - 4..].fill(0xff);
    z.truncate(n - 2);
    let e = mem_err(&z, f, "z.lrugen");
    assert!(e.to_string().starts_with("z.lrugen:"), "{e}");
    assert!(
        matches!(e.kind(), TraceErrorKind::Read { .. } | TraceErrorKind::Parse { .. }),
        "{e}"
    );
}

#[test]
fn too_many_files_for_page_keys() {
    let mut log = String::from("fio version 2 iolog\n");
    for i in 0..4097 {
        log.push_str(&format!("f{i} add\n"));
    }
    log.push_str("f4096 read 0 1\n");
    let mut r = TraceReader::new(Cursor::new(log.as_bytes()), TraceFormat::Iolog, "many.iolog");
    let e = r.next().unwrap().unwrap_err();
    assert_eq!(
        e.to_string(),
        "many.iolog:4099: expected at most 4096 files (page keys hold the file index in 12 bits), \
         found \"file index 4096\""
    );
    assert!(r.next().is_none());
    // The records themselves are fine.
    let recs = mem_records(
        log.as_bytes(),
        TraceFormat::Iolog,
        "many.iolog",
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(recs[0].file, 4096);
}

// ---- property tests

fn any_op() -> impl Strategy<Value = TraceOp> {
    (0u8..8).prop_map(|c| TraceOp::from_code(c).unwrap())
}

fn any_record() -> impl Strategy<Value = TraceRecord> {
    (
        any_op(),
        prop_oneof![any::<u64>(), 0u64..1000],
        prop_oneof![any::<u32>(), Just(4096u32)],
        prop_oneof![Just(0u32), 0u32..4, any::<u32>()],
        prop_oneof![any::<u64>(), 0u64..1_000_000],
    )
        .prop_map(|(op, key, len, file, time)| TraceRecord {
            op,
            key,
            len,
            file,
            time,
        })
}

fn any_space() -> impl Strategy<Value = KeySpace> {
    prop_oneof![
        Just(KeySpace::Pages),
        Just(KeySpace::Bytes),
        (1u32..=u32::MAX).prop_map(KeySpace::Blocks)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn lrugen_round_trip(
        recs in prop::collection::vec(any_record(), 0..300),
        space in any_space(),
        zstd_level in prop_oneof![Just(None), Just(Some(1))],
        declare in any::<bool>(),
    ) {
        let options = WriterOptions {
            key_space: space,
            zstd_level,
            record_count: declare.then_some(recs.len() as u64),
        };
        let bytes = lrugen_bytes(&recs, options);
        let mut r = LrugenReader::new(&bytes[..], "p.lrugen");
        let back: Vec<TraceRecord> = r.by_ref().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&back, &recs);
        let h = r.header().unwrap();
        prop_assert_eq!(h.key_space, space);
        prop_assert_eq!(h.record_count, options.record_count);
        // Every strict prefix is an error, never a shorter trace.
        for cut in [0, bytes.len() / 3, bytes.len() / 2, bytes.len().saturating_sub(1)] {
            if cut < bytes.len() && cut > 0 {
                let res: Result<Vec<TraceRecord>, _> = LrugenReader::new(&bytes[..cut], "p").collect();
                prop_assert!(res.is_err(), "prefix of {} bytes accepted", cut);
            }
        }
    }

    #[test]
    fn lrugen_file_round_trip(recs in prop::collection::vec(any_record(), 0..50), z in any::<bool>()) {
        let path = tmp(&format!("prop-{}-{}.lrugen", recs.len(), z));
        let options = WriterOptions { zstd_level: z.then_some(1), ..Default::default() };
        write_trace(&path, options, recs.iter().copied()).unwrap();
        let back = records(&path, &ReadOptions::default()).unwrap();
        prop_assert_eq!(back, recs);
    }

    #[test]
    fn iolog_round_trip(
        lines in prop::collection::vec((0usize..3, 0usize..5, any::<u64>(), any::<u32>(), 0u64..1 << 40), 0..60),
        v3 in any::<bool>(),
    ) {
        let names = ["a", "/dev/sdb", "x y"];
        let actions = ["read", "write", "sync", "datasync", "trim"];
        let ops = [Read, Write, Sync, Datasync, Trim];
        let mut text = format!("fio version {} iolog\n", if v3 { 3 } else { 2 });
        for n in &names[..2] {
            text.push_str(&if v3 { format!("0 {n} add\n") } else { format!("{n} add\n") });
        }
        let mut expected = Vec::new();
        for &(file, action, offset, len, t) in &lines {
            let file = file % 2;
            let prefix = if v3 { format!("{t} ") } else { String::new() };
            text.push_str(&format!("{prefix}{} {} {offset} {len}\n", names[file], actions[action]));
            expected.push(rec(ops[action], offset, len, file as u32, if v3 { t * 1_000_000 } else { 0 }));
        }
        let got = mem_records(text.as_bytes(), TraceFormat::Iolog, "p.iolog", &ReadOptions::default()).unwrap();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn lackey_round_trip(lines in prop::collection::vec((0usize..4, any::<u64>(), any::<u32>()), 0..60)) {
        let mut text = String::from("==7== Lackey\n");
        let mut expected = Vec::new();
        for &(kind, addr, len) in &lines {
            let line = match kind {
                0 => format!("I  {addr:08x},{len}\n"),
                k => format!(" {} {addr:x},{len}\n", ["L", "S", "M"][k - 1]),
            };
            text.push_str(&line);
            match kind {
                0 => expected.push(rec(Fetch, addr, len, 0, 0)),
                1 => expected.push(rec(Load, addr, len, 0, 0)),
                2 => expected.push(rec(Store, addr, len, 0, 0)),
                _ => {
                    expected.push(rec(Load, addr, len, 0, 0));
                    expected.push(rec(Store, addr, len, 0, 0));
                }
            }
        }
        let got = mem_records(text.as_bytes(), TraceFormat::Lackey, "p.lackey", &ReadOptions::default()).unwrap();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn csv_round_trip(rows in prop::collection::vec((any::<u32>(), 0u64..1 << 40, any::<u32>(), any::<bool>()), 0..60)) {
        let mut text = String::from("version,time,op,size,lbn\n");
        let mut expected = Vec::new();
        for &(t, lbn, size, write) in &rows {
            text.push_str(&format!("1,{t},{},{size},{lbn}\n", if write { "2a" } else { "28" }));
            expected.push(rec(if write { Write } else { Read }, lbn, size, 0, u64::from(t)));
        }
        let got = mem_records(text.as_bytes(), TraceFormat::Csv, "p.csv", &ReadOptions::default()).unwrap();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn lcs_round_trip(
        version in 1u8..=8,
        old_header in any::<bool>(),
        recs in prop::collection::vec((any::<u32>(), any::<u64>(), 0u8..15, 0u32..1 << 24), 0..50),
    ) {
        let mut bytes = lcs_header(if old_header { 1024 } else { 8192 }, version, recs.len() as u64);
        let mut expected = Vec::new();
        for &(t, id, op, tenant) in &recs {
            let op = if version == 1 { 0 } else { op };
            let r = LcsRecord { clock_time: t, obj_id: id, obj_size: 4096, op, tenant, ttl: 0, next_access_vtime: -1 };
            bytes.extend_from_slice(&r.encode(version));
            expected.push(r.to_trace_record().unwrap());
        }
        let got = mem_records(&bytes, TraceFormat::Lcs, "p.lcs", &ReadOptions::default()).unwrap();
        prop_assert_eq!(got, expected);
    }

    #[test]
    fn pages_cover_exactly_the_bytes(key in any::<u64>(), len in 0u32..100_000, bs in 1u32..10_000) {
        let r = rec(Read, key, len, 0, 0);
        let pages: Vec<u64> = r.pages(KeySpace::Bytes).collect();
        if len == 0 {
            prop_assert!(pages.is_empty());
        } else {
            let start = u128::from(key);
            let end = start + u128::from(len) - 1;
            prop_assert_eq!(pages.len() as u128, (end >> 12) - (start >> 12) + 1);
            prop_assert_eq!(u128::from(pages[0]), start >> 12);
        }
        let key = key >> 32;
        let r = rec(Read, key, len, 0, 0);
        let pages: Vec<u64> = r.pages(KeySpace::Blocks(bs)).collect();
        if len > 0 {
            let start = u128::from(key) * u128::from(bs);
            prop_assert_eq!(u128::from(pages[0]), start >> 12);
            prop_assert_eq!(u128::from(*pages.last().unwrap()), (start + u128::from(len) - 1) >> 12);
        }
        prop_assert_eq!(rec(Read, key, len, 0, 0).pages(KeySpace::Pages).collect::<Vec<_>>(), vec![key]);
    }

    #[test]
    fn never_panics_on_garbage(
        prefix in 0usize..6,
        bytes in prop::collection::vec(any::<u8>(), 0..400),
    ) {
        let prefixes: [Vec<u8>; 6] = [
            Vec::new(),
            b"fio version 2 iolog\nf add\n".to_vec(),
            b"fio version 3 iolog\n0 f add\n".to_vec(),
            lcs_header(1024, 3, 0),
            lrugen_bytes(&[], WriterOptions::default())[..32].to_vec(),
            b"version,time,op,size,lbn\n".to_vec(),
        ];
        let mut input = prefixes[prefix].clone();
        input.extend_from_slice(&bytes);
        for format in TraceFormat::ALL {
            let _ = mem_records(&input, format, "garbage", &ReadOptions::default());
            let _: Vec<_> = TraceReader::new(Cursor::new(&input), format, "garbage").collect();
        }
        let opts = ReadOptions { csv: Some("obj-id-col=3, time-col=1, op-col=2, obj-size-col=4, block-size=4096".parse().unwrap()), ..Default::default() };
        let _ = mem_records(&input, TraceFormat::Csv, "garbage", &opts);
        let _: Vec<_> = TraceReader::with_options(Cursor::new(&input), TraceFormat::Csv, "garbage", &opts).collect();
    }

    #[test]
    fn never_panics_on_garbage_lines(lines in prop::collection::vec("[ IiLSM=0-9a-f,x\\-]{0,24}", 0..30)) {
        let body = lines.join("\n");
        for head in ["", "fio version 2 iolog\na add\n", "fio version 3 iolog\n1 a add\n", "version,time,op,size,lbn\n"] {
            let input = format!("{head}{body}");
            for format in [TraceFormat::Iolog, TraceFormat::Lackey, TraceFormat::Csv, TraceFormat::Arc] {
                let _ = mem_records(input.as_bytes(), format, "lines", &ReadOptions::default());
            }
        }
    }
}

#[test]
fn csv_reader_direct() {
    let input = "1 9 4096\n2 10 4096\n";
    let params: CsvParams = "time-col=1, obj-id-col=2, obj-size-col=3, delimiter=space"
        .parse()
        .unwrap();
    let r = CsvReader::new(Cursor::new(input), "s.txt", Some(params));
    let k: Vec<u64> = r.map(|r| r.unwrap().key).collect();
    assert_eq!(k, [9, 10]);
    let r = LackeyReader::new(Cursor::new("I  10,1\n"), "l");
    assert_eq!(r.count(), 1);
    let opts = ReadOptions {
        format: Some(TraceFormat::Csv),
        csv: Some("obj-id-col=1, block-size=512".parse().unwrap()),
        ..Default::default()
    };
    let p = tmp("blocks.csv");
    std::fs::write(&p, "8\n9\n").unwrap();
    let d = load_dense_with(&p, &opts).unwrap();
    // Block 8 (bytes 4096..4607) is page 1; block 9 too.
    assert_eq!(d.pages, [0, 0]);
}

/// `index32`/`index64`: flat little-endian page indices, one per reference, told by the
/// `.index32`/`.index64` name or `--format`; the same keys through the key and record readers; a
/// cut record and a set high bit are errors naming the record and byte offset.
#[test]
fn index_files_read_flat_page_indices() {
    let keys = [5u64, 7, 5, 1, 0, 1 << 20];
    for (ext, width) in [("index32", 4usize), ("index64", 8)] {
        let bytes: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()[..width].to_vec()).collect();
        let path = tmp(&format!("pages.{ext}"));
        std::fs::write(&path, &bytes).unwrap();
        let got: Vec<u64> = lrugen_trace::open(&path, None).unwrap().map(|k| k.unwrap()).collect();
        assert_eq!(got, keys, "{ext}");
        let recs: Vec<_> = lrugen_trace::open_records(&path, &lrugen_trace::ReadOptions::default())
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(recs.iter().map(|r| r.key).collect::<Vec<_>>(), keys, "{ext} records");
        assert!(recs
            .iter()
            .all(|r| r.op == lrugen_trace::TraceOp::Read && r.len == 4096));

        let mut cut = bytes.clone();
        cut.truncate(bytes.len() - 1);
        std::fs::write(&path, &cut).unwrap();
        let e = lrugen_trace::open(&path, None)
            .unwrap()
            .find_map(|k| k.err())
            .unwrap()
            .to_string();
        assert!(e.contains("pages.") && e.contains("record 6"), "{ext}: {e}");

        let mut high = bytes.clone();
        high[2 * width + width - 1] |= 0x80;
        std::fs::write(&path, &high).unwrap();
        let e = lrugen_trace::open(&path, None)
            .unwrap()
            .find_map(|k| k.err())
            .unwrap()
            .to_string();
        assert!(e.contains("record 3") && e.contains("high bit"), "{ext}: {e}");
        // the record reader splits it off as the file mark (file 1) of a mixed trace
        let recs: Vec<_> = lrugen_trace::open_records(&path, &lrugen_trace::ReadOptions::default())
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(
            recs.iter().map(|r| r.key).collect::<Vec<_>>(),
            keys,
            "{ext} masked keys"
        );
        assert_eq!(
            recs.iter().map(|r| r.file).collect::<Vec<_>>(),
            [0, 0, 1, 0, 0, 0],
            "{ext}"
        );
    }
    // a name that tells nothing: an error naming the --format values, index32 among them
    let path = tmp("pages.bin");
    std::fs::write(&path, [1u8, 0, 0, 0]).unwrap();
    let e = lrugen_trace::open(&path, None).err().expect("no format").to_string();
    assert!(e.contains("pages.bin"), "{e}");
    let got: Vec<u64> = lrugen_trace::open(&path, Some(lrugen_trace::TraceFormat::Index32))
        .unwrap()
        .map(|k| k.unwrap())
        .collect();
    assert_eq!(got, [1]);
}

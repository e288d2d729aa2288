//! Reader tests on small checked-in samples and on malformed inputs.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use lrugen_trace::{
    load_dense, open, Location, OracleRecord, TraceError, TraceErrorKind, TraceFormat, TraceReader, ORACLE_RECORD_SIZE,
    ZSTD_MAGIC,
};
use proptest::prelude::*;

const TINY_LIS_KEYS: [u64; 7] = [0, 1, 100, 1, 2, 3, 100];
const TINY_ORACLE_KEYS: [u64; 5] = [7, 3, 7, 1 << 40, 3];

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lrugen-trace-{name}"))
}

fn keys(path: &Path, format: Option<TraceFormat>) -> Result<Vec<u64>, TraceError> {
    open(path, format)?.collect()
}

fn read_mem(bytes: &[u8], format: TraceFormat, name: &str) -> Result<Vec<u64>, TraceError> {
    TraceReader::new(Cursor::new(bytes), format, name).collect()
}

#[test]
fn samples_match_their_description() {
    for name in ["tiny.lis", "tiny.lis.zst", "zstd-without-extension.lis"] {
        assert_eq!(keys(&data(name), None).unwrap(), TINY_LIS_KEYS, "{name}");
    }
    for name in ["tiny.oracleGeneral.bin", "tiny.oracleGeneral.bin.zst"] {
        assert_eq!(keys(&data(name), None).unwrap(), TINY_ORACLE_KEYS, "{name}");
    }
    // The full records of the binary sample.
    let bytes = std::fs::read(data("tiny.oracleGeneral.bin")).unwrap();
    let recs: Vec<OracleRecord> = bytes
        .chunks_exact(ORACLE_RECORD_SIZE)
        .map(|c| OracleRecord::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(recs.len(), 5);
    assert_eq!(recs[0].clock_time, 1000);
    assert_eq!(recs[0].obj_size, 4096);
    let next: Vec<i64> = recs.iter().map(|r| r.next_access_vtime).collect();
    assert_eq!(next, [3, 5, -1, -1, -1]);
}

#[test]
fn compression_is_detected_by_magic() {
    let r = open(&data("zstd-without-extension.lis"), None).unwrap();
    assert!(r.into_inner().is_compressed());
    let r = open(&data("tiny.lis"), None).unwrap();
    assert!(!r.into_inner().is_compressed());
    assert!(std::fs::read(data("tiny.lis.zst")).unwrap().starts_with(&ZSTD_MAGIC));
}

#[test]
fn explicit_format_overrides_name() {
    // A .lis file read as oracleGeneral: 45 bytes = one record and 21 bytes.
    let err = keys(&data("tiny.lis"), Some(TraceFormat::OracleGeneral)).unwrap_err();
    assert!(matches!(err.kind(), TraceErrorKind::Truncated { found: 21, .. }));
    // The Cargo.toml of this crate, declared as ARC text: a parse error on line 1.
    let toml = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let err = keys(&toml, Some(TraceFormat::Arc)).unwrap_err();
    assert_eq!(err.location(), Some(Location::Line(1)));
}

#[test]
fn dense_loading() {
    for name in ["tiny.lis", "tiny.lis.zst"] {
        let d = load_dense(&data(name), None).unwrap();
        assert_eq!(d.pages, [0, 1, 2, 1, 3, 4, 2]);
        assert_eq!(d.nr_unique, 5);
        assert_eq!(d.nr_requests, 7);
    }
    let d = load_dense(&data("tiny.oracleGeneral.bin.zst"), None).unwrap();
    assert_eq!(d.pages, [0, 1, 0, 2, 1]);
    assert_eq!(d.nr_unique, 3);
    assert_eq!(d.nr_requests, 5);
}

#[test]
fn zero_blocks_and_blank_lines_yield_nothing() {
    let k = read_mem(b"5 0 0 0\n\n  \n9 2 0 1", TraceFormat::Arc, "t.lis").unwrap();
    assert_eq!(k, [9, 10]);
    assert!(read_mem(b"", TraceFormat::Arc, "t.lis").unwrap().is_empty());
    assert!(read_mem(b"", TraceFormat::OracleGeneral, "t.bin").unwrap().is_empty());
    // CRLF line ends and tabs are whitespace.
    let k = read_mem(b"1\t1\t0\t0\r\n2 1 0 1\r\n", TraceFormat::Arc, "t.lis").unwrap();
    assert_eq!(k, [1, 2]);
    // The largest key.
    let k = read_mem(b"18446744073709551614 2 0 0\n", TraceFormat::Arc, "t.lis").unwrap();
    assert_eq!(k, [u64::MAX - 1, u64::MAX]);
}

// ---- malformed inputs: each message names the file, the place, the expectation

#[test]
fn bad_arc_line() {
    let text = "1 1 0 0\n".repeat(16) + "12 x\n1 1 0 0\n";
    let mut r = TraceReader::new(Cursor::new(text.as_bytes()), TraceFormat::Arc, "OLTP.lis");
    let res: Vec<_> = r.by_ref().collect();
    assert_eq!(res.len(), 17);
    let err = res[16].as_ref().unwrap_err();
    assert_eq!(
        err.to_string(),
        "OLTP.lis:17: expected 4 whitespace-separated integers \
         \"start_block n_blocks ignored request_number\", found \"12 x\""
    );
    assert_eq!(err.location(), Some(Location::Line(17)));
    assert_eq!(err.path(), Path::new("OLTP.lis"));
    // Fused after the error.
    assert!(r.next().is_none());
    assert_eq!(r.path(), Path::new("OLTP.lis"));
    assert_eq!(r.format(), TraceFormat::Arc);
}

#[test]
fn arc_malformed_variants() {
    let cases: &[(&[u8], u64)] = &[
        (b"1 2 3\n", 1),
        (b"1 1 0 0\n1 2 3 4 5\n", 2),
        (b"1 1 0 0\n\n-1 2 3 4\n", 3),
        (b"99999999999999999999 1 0 0\n", 1),
        (b"1 1 0 0x\n", 1),
        (b"\xff\xfe 1 0 0\n", 1),
        (b"1 1 0 0\n2 1 0 0\n3 1 0 0\n\x00", 4),
    ];
    for &(input, line) in cases {
        let err = read_mem(input, TraceFormat::Arc, "bad.lis").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!("bad.lis:{line}: expected 4 whitespace-separated")),
            "{msg}"
        );
        assert!(msg.contains("found \""), "{msg}");
        assert_eq!(err.location(), Some(Location::Line(line)));
    }
}

#[test]
fn arc_range_overflow() {
    let err = read_mem(b"18446744073709551615 2 0 0\n", TraceFormat::Arc, "big.lis").unwrap_err();
    assert_eq!(
        err.to_string(),
        "big.lis:1: expected start_block + n_blocks - 1 to fit in 64 bits, \
         found \"18446744073709551615 2 0 0\""
    );
}

#[test]
fn long_bad_line_is_shortened() {
    let line = "7".repeat(10_000) + "\n";
    let err = read_mem(line.as_bytes(), TraceFormat::Arc, "long.lis").unwrap_err();
    assert!(err.to_string().len() < 400);
}

#[test]
fn truncated_oracle_record() {
    let mut bytes = Vec::new();
    for id in 0..4u64 {
        let r = OracleRecord {
            obj_id: id,
            ..Default::default()
        };
        bytes.extend_from_slice(&r.to_le_bytes());
    }
    bytes.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7]);
    let res: Vec<_> =
        TraceReader::new(Cursor::new(&bytes), TraceFormat::OracleGeneral, "trace.oracleGeneral").collect();
    assert_eq!(res.len(), 5);
    assert_eq!(
        res[4].as_ref().unwrap_err().to_string(),
        "trace.oracleGeneral:record 5 (byte offset 96): truncated record, expected 24 bytes, found 7"
    );
    assert_eq!(
        res[4].as_ref().unwrap_err().location(),
        Some(Location::Record { record: 5, offset: 96 })
    );
}

#[test]
fn truncated_oracle_file() {
    let path = tmp("truncated.oracleGeneral.bin");
    let mut bytes = std::fs::read(data("tiny.oracleGeneral.bin")).unwrap();
    bytes.truncate(2 * ORACLE_RECORD_SIZE + 10);
    std::fs::write(&path, &bytes).unwrap();
    let err = keys(&path, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}:record 3 (byte offset 48): truncated record, expected 24 bytes, found 10",
            path.display()
        )
    );
}

#[test]
fn missing_file() {
    let path = data("no-such-trace.lis");
    let err = keys(&path, None).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("cannot open trace {}: No such file or directory", path.display())
    );
    assert!(std::error::Error::source(&err).is_some());
    assert!(load_dense(&path, None).is_err());
}

#[test]
fn unknown_extension() {
    let path = data("README.md");
    let err = keys(&path, None).unwrap_err();
    assert!(matches!(err.kind(), TraceErrorKind::UnknownFormat));
    let msg = err.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    for known in [".lis", ".lis.zst", ".oracleGeneral", ".oracleGeneral.bin.zst"] {
        assert!(msg.contains(known), "{msg}");
    }
}

#[test]
fn corrupt_zstd_stream() {
    let path = tmp("corrupt.lis.zst");
    let mut bytes = ZSTD_MAGIC.to_vec();
    bytes.extend_from_slice(&[0xff; 64]);
    std::fs::write(&path, &bytes).unwrap();
    let err = keys(&path, None).unwrap_err();
    assert!(matches!(err.kind(), TraceErrorKind::Read { .. }), "{err}");
    assert!(err
        .to_string()
        .starts_with(&format!("{}:1: read error", path.display())));

    // A compressed trace cut in the middle.
    let path = tmp("cut.lis.zst");
    let full = zstd::encode_all(&b"1 1 0 0\n".repeat(10_000)[..], 3).unwrap();
    std::fs::write(&path, &full[..full.len() / 2]).unwrap();
    let err = keys(&path, None).unwrap_err();
    assert!(matches!(err.kind(), TraceErrorKind::Read { .. }), "{err}");
}

#[test]
fn tiny_files_do_not_confuse_detection() {
    // Shorter than the zstd magic: read as is.
    let path = tmp("two-bytes.oracleGeneral");
    std::fs::write(&path, [0x28, 0xb5]).unwrap();
    let err = keys(&path, None).unwrap_err();
    assert!(matches!(err.kind(), TraceErrorKind::Truncated { found: 2, .. }));
    let path = tmp("empty.lis.zst");
    std::fs::write(&path, []).unwrap();
    assert!(keys(&path, None).unwrap().is_empty());
}

// ---- property tests

fn oracle_bytes(recs: &[(u32, u64, u32, i64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(recs.len() * ORACLE_RECORD_SIZE);
    for &(clock_time, obj_id, obj_size, next_access_vtime) in recs {
        let r = OracleRecord {
            clock_time,
            obj_id,
            obj_size,
            next_access_vtime,
        };
        out.extend_from_slice(&r.to_le_bytes());
    }
    out
}

/// A reader that hands out at most `chunk` bytes per fill, to exercise
/// records that straddle buffer refills.
struct Chunky<'a> {
    data: &'a [u8],
    chunk: usize,
}

impl std::io::Read for Chunky<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

proptest! {
    #[test]
    fn oracle_round_trip(
        recs in prop::collection::vec(any::<(u32, u64, u32, i64)>(), 0..200),
        chunk in 1usize..64,
        buf_cap in 1usize..100,
    ) {
        let bytes = oracle_bytes(&recs);
        let expected: Vec<u64> = recs.iter().map(|r| r.1).collect();
        let got = read_mem(&bytes, TraceFormat::OracleGeneral, "p.oracleGeneral").unwrap();
        prop_assert_eq!(&got, &expected);
        let input = std::io::BufReader::with_capacity(buf_cap, Chunky { data: &bytes, chunk });
        let got: Vec<u64> = TraceReader::new(input, TraceFormat::OracleGeneral, "p")
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(&got, &expected);
        let z = zstd::encode_all(&bytes[..], 1).unwrap();
        let dec = std::io::BufReader::new(zstd::Decoder::new(&z[..]).unwrap());
        let got: Vec<u64> = TraceReader::new(dec, TraceFormat::OracleGeneral, "p.zst")
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(&got, &expected);
    }

    #[test]
    fn arc_round_trip(lines in prop::collection::vec((0u64..1 << 40, 0u64..5, any::<i32>()), 0..100)) {
        let mut text = String::new();
        let mut expected = Vec::new();
        for (i, &(start, n, ignored)) in lines.iter().enumerate() {
            text.push_str(&format!("{start} {n} {ignored} {i}\n"));
            expected.extend(start..start + n);
        }
        prop_assert_eq!(read_mem(text.as_bytes(), TraceFormat::Arc, "p.lis").unwrap(), expected);
    }

    #[test]
    fn never_panics_on_garbage(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        for format in TraceFormat::ALL {
            let _ = read_mem(&bytes, format, "garbage");
        }
    }
}

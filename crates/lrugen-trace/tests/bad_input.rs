//! Bad input never panics: every reader, fed near-valid garbage (a valid
//! header or first line, then random lines built from the format's own
//! tokens, or random bytes after a valid binary header), yields records or an
//! error naming the stream and, for a parse error, the line or record where
//! it stopped — never a panic.

use std::io::Cursor;

use lrugen_trace::{
    lcs_header, CsvParams, LrugenWriter, ReadOptions, RecordReader, TraceError, TraceErrorKind, TraceFormat,
    TraceReader, WriterOptions, LCS_HEADER_SIZE, LCS_OLD_HEADER_SIZE, LRUGENTR_MAGIC,
};
use proptest::prelude::*;

const NAME: &str = "bad-input-stream";

/// Records and page keys of `bytes` (each capped, since a garbage line may
/// legally name billions of pages); panics only if a reader does.
fn read_both(bytes: &[u8], format: TraceFormat, options: &ReadOptions) -> Result<(), TestCaseError> {
    let mut records = RecordReader::new(Cursor::new(bytes), format, NAME, options);
    for r in records.by_ref().take(20_000) {
        if let Err(e) = r {
            check_error(&e)?;
        }
    }
    let mut keys = TraceReader::with_options(Cursor::new(bytes), format, NAME, options);
    for k in keys.by_ref().take(20_000) {
        if let Err(e) = k {
            check_error(&e)?;
        }
    }
    Ok(())
}

/// The error names the stream; a parse error also says where and what was expected.
fn check_error(e: &TraceError) -> Result<(), TestCaseError> {
    let msg = e.to_string();
    prop_assert!(msg.contains(NAME), "error does not name the stream: {}", msg);
    if let TraceErrorKind::Parse { expected, .. } = e.kind() {
        prop_assert!(e.location().is_some(), "parse error without a location: {}", msg);
        prop_assert!(!expected.is_empty());
        prop_assert!(msg.contains("expected"), "{}", msg);
    }
    Ok(())
}

/// Tokens that appear in the text formats, numbers at the edges of their
/// ranges, and noise.
const TOKENS: &[&str] = &[
    "0",
    "1",
    "7",
    "4095",
    "4096",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "+5",
    "1.5",
    "1e9",
    "0x10",
    "ff",
    "FFFFFFFFFFFFFFFF",
    "1FFFFFFFFFFFFFFFF",
    "a",
    "/dev/sdb",
    "add",
    "open",
    "close",
    "read",
    "write",
    "sync",
    "datasync",
    "trim",
    "wait",
    "I",
    "L",
    "S",
    "M",
    "==1==",
    "28",
    "2a",
    "r",
    "w",
    "\"",
    "\"x,y\"",
    ",",
    ",,",
    "\t",
    " ",
    "é",
    "\r",
];

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(TOKENS).prop_map(str::to_string),
        1 => "[ -~]{0,6}",
    ]
}

/// One line of tokens joined by one of the separators of the text formats.
fn line() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(token(), 0..6),
        prop::sample::select(&[" ", "  ", ",", "\t", ""][..]),
        prop::sample::select(&["", " ", "  ", "I  ", " L ", " S ", " M "][..]),
    )
        .prop_map(|(tokens, sep, lead)| format!("{lead}{}", tokens.join(sep)))
}

fn lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(line(), 0..12)
}

fn text(first: &str, lines: &[String]) -> Vec<u8> {
    let mut s = String::from(first);
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s.into_bytes()
}

/// Column parameters as a user may build them (the fields are public).
fn csv_params() -> impl Strategy<Value = CsvParams> {
    (
        0usize..5,
        prop::option::of(0usize..5),
        prop::option::of(0usize..5),
        prop::option::of(0usize..5),
        prop::sample::select(&[b',', b'\t', b' ', b'"'][..]),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(prop_oneof![Just(0u32), Just(1), Just(512), Just(u32::MAX)]),
    )
        .prop_map(|(id, time, size, op, delimiter, has_header, num, block)| CsvParams {
            obj_id_col: id,
            time_col: time,
            obj_size_col: size,
            op_col: op,
            delimiter,
            has_header,
            obj_id_is_num: num,
            block_size: block,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn text_formats_never_panic(
        lines in lines(),
        first in prop::sample::select(&["", "fio version 2 iolog\n", "fio version 3 iolog\n",
            "==7== Lackey\n", "version,time,op,size,lbn\n", "1 2 3 4\n"][..]),
    ) {
        let bytes = text(first, &lines);
        for format in [TraceFormat::Arc, TraceFormat::Iolog, TraceFormat::Lackey, TraceFormat::Csv] {
            read_both(&bytes, format, &ReadOptions::format(format))?;
        }
        let tiny_ticks = ReadOptions { iolog_tick_ns: Some(u64::MAX), ..ReadOptions::format(TraceFormat::Iolog) };
        read_both(&bytes, TraceFormat::Iolog, &tiny_ticks)?;
    }

    #[test]
    fn csv_with_any_params_never_panics(lines in lines(), params in csv_params()) {
        let options = ReadOptions { csv: Some(params), ..ReadOptions::format(TraceFormat::Csv) };
        read_both(&text("", &lines), TraceFormat::Csv, &options)?;
    }

    #[test]
    fn csv_param_text_never_panics(s in "[a-z=,\\\\ 0-9-]{0,40}", t in prop::sample::select(&[
        "obj-id-col=", "delimiter=", "delimiter=,", "block-size=", "preset=", "has-header=", ","][..])) {
        let _ = format!("{t}{s}").parse::<CsvParams>();
        let _ = format!("{s}{t}").parse::<CsvParams>();
    }

    #[test]
    fn lcs_with_any_header_never_panics(
        version in 0u8..=12,
        old in any::<bool>(),
        n_req in any::<u64>(),
        body in prop::collection::vec(any::<u8>(), 0..400),
    ) {
        let size = if old { LCS_OLD_HEADER_SIZE } else { LCS_HEADER_SIZE };
        let mut bytes = lcs_header(size, version, n_req);
        bytes.extend_from_slice(&body);
        read_both(&bytes, TraceFormat::Lcs, &ReadOptions::default())?;
        read_both(&body, TraceFormat::OracleGeneral, &ReadOptions::default())?;
    }

    #[test]
    fn lrugen_garbage_never_panics(
        header in prop::collection::vec(any::<u8>(), 0..40),
        body in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        let mut bytes = LRUGENTR_MAGIC.to_vec();
        bytes.extend_from_slice(&header);
        bytes.extend_from_slice(&body);
        read_both(&bytes, TraceFormat::Lrugen, &ReadOptions::default())?;
    }

    #[test]
    fn lrugen_corrupted_never_panics(
        recs in prop::collection::vec((any::<u64>(), any::<u32>(), 0u32..5000, any::<u64>()), 1..40),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        zstd in any::<bool>(),
    ) {
        let options = WriterOptions { zstd_level: zstd.then_some(1), ..Default::default() };
        let mut w = LrugenWriter::new(Vec::new(), options).unwrap();
        for &(key, len, file, time) in &recs {
            let r = lrugen_trace::TraceRecord { op: lrugen_trace::TraceOp::Write, key, len, file, time };
            w.write(&r).unwrap();
        }
        let mut bytes = w.finish().unwrap();
        for (at, x) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= x | 1;
        }
        read_both(&bytes, TraceFormat::Lrugen, &ReadOptions::default())?;
    }
}

/// The column checks of hand-built parameters: a column 0 is reported, not
/// an index out of bounds.
#[test]
fn csv_column_zero_is_an_error() {
    let params = CsvParams {
        obj_id_col: 0,
        ..CsvParams::default()
    };
    let options = ReadOptions {
        csv: Some(params),
        ..ReadOptions::format(TraceFormat::Csv)
    };
    let e = RecordReader::new(Cursor::new(&b"1,2\n"[..]), TraceFormat::Csv, "c.csv", &options)
        .collect::<Result<Vec<_>, _>>()
        .unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("c.csv:"), "{msg}");
    assert!(msg.contains("column numbers from 1"), "{msg}");
}

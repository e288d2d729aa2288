// SPDX-License-Identifier: GPL-2.0-only
//! The bodies of lrugen's fuzz targets: one function per target, taking the fuzzer's bytes, calling
//! the real parser and asserting what must hold for any input: no panic, errors whose text is
//! not empty and names the line or record it is about (within the input), and where a format has
//! a writer, that what was read writes and reads back the same.
//!
//! The libFuzzer harness (`fuzz/fuzz_targets/<target>.rs`, nightly, `cargo fuzz run <target>`)
//! and the stable replay of the checked-in corpus (`tests/corpus.rs`, part of `cargo test`) both
//! call these functions, so that every input the fuzzer kept, and every crash it found, is
//! checked on every test run. See `docs/fuzzing.md`.
//!
//! Bodies read from memory only (no files), and bound how much of an input they expand (an ARC
//! line may name 2^64 pages), so that an execution costs microseconds.

use std::io::{BufReader, Read};
use std::path::Path;

use lrugen::experiment::{ExpError, Experiment};
use lrugen::reclaim::mglru::debugfs;
use lrugen::reclaim::mglru::sysfs;
use lrugen::reclaim::mglru::Profile;
use lrugen_kernel::serial;
use lrugen_replay::OpFile;
use lrugen_trace::{
    lcs_header, CsvParams, KeySpace, Location, LrugenReader, LrugenWriter, ReadOptions, RecordReader, TraceError,
    TraceFormat, TraceReader, TraceRecord, WriterOptions, LCS_HEADER_SIZE, ZSTD_MAGIC,
};

/// A target's body.
pub type Body = fn(&[u8]);

/// The targets, by the name of their corpus directory and `fuzz_targets/` file.
pub const TARGETS: &[(&str, Body)] = &[
    ("traces", traces),
    ("experiment_toml", experiment_toml),
    ("op_file", op_file),
    ("debugfs_cmd", debugfs_cmd),
    ("control", control),
    ("serial_log", serial_log),
    ("bench_inputs", bench_inputs),
];

/// The name trace errors are given (no file is opened).
const TRACE_PATH: &str = "fuzz-input";
/// Records (or page keys) read from one input at most.
const MAX_ITEMS: usize = 4096;
/// Decompressed bytes read from one zstd input at most.
const MAX_UNZSTD: u64 = 64 * 1024;
/// The zstd window the `zstd` selector allows (1 MiB): a frame asking for more is refused.
const ZSTD_WINDOW_LOG_MAX: u32 = 20;

/// What the first byte of a `traces` input selects (modulo the count).
pub const TRACE_SELECTORS: &[&str] = &[
    "arc",
    "oracleGeneral",
    "csv",
    "lcs",
    "iolog",
    "lackey",
    "lrugen",
    "zstd",
    "lcs-records",
];

/// Every trace reader. Byte 0 selects the format ([`TRACE_SELECTORS`]); byte 1 the capacity of
/// a `BufReader` the input is also read through (0: none; else 1..=64 bytes, so that records
/// and lines straddle buffer refills), which must give the same records and error. The rest is
/// the trace, except: `csv` takes its first line as column parameters (`CsvParams`, which must
/// print and parse back to themselves; when they do not parse, the CloudPhysics header is
/// required); `zstd` is a zstd stream (1 MiB window at most, 64 KiB decompressed at most) whose
/// content is read as the format its first bytes tell; `lcs-records` is a version byte and lcs
/// records after an 8192-byte header made here (the fuzzer's inputs are shorter than a header).
pub fn traces(data: &[u8]) {
    let [sel, buf, body @ ..] = data else { return };
    let cap = match *buf {
        0 => None,
        b => Some(1 + usize::from(b % 64)),
    };
    let plain = |format| check_trace(format, body, &ReadOptions::format(format), cap, true);
    match TRACE_SELECTORS[usize::from(*sel) % TRACE_SELECTORS.len()] {
        "arc" => plain(TraceFormat::Arc),
        "oracleGeneral" => plain(TraceFormat::OracleGeneral),
        "lcs" => plain(TraceFormat::Lcs),
        "iolog" => plain(TraceFormat::Iolog),
        "lackey" => plain(TraceFormat::Lackey),
        "lrugen" => plain(TraceFormat::Lrugen),
        "csv" => {
            let (first, rest) = match body.iter().position(|&c| c == b'\n') {
                Some(i) => (&body[..i], &body[i + 1..]),
                None => (body, &[][..]),
            };
            let params = match String::from_utf8_lossy(first).parse::<CsvParams>() {
                Ok(p) => {
                    let text = p.to_string();
                    assert_eq!(
                        text.parse::<CsvParams>().as_ref(),
                        Ok(&p),
                        "csv parameters print as {text:?}"
                    );
                    Some(p)
                }
                Err(e) => {
                    assert!(!e.is_empty());
                    None
                }
            };
            let options = ReadOptions {
                format: Some(TraceFormat::Csv),
                csv: params,
                iolog_tick_ns: None,
            };
            check_trace(TraceFormat::Csv, rest, &options, cap, true);
        }
        "zstd" => {
            // What opening a file does: zstd by its magic, then the format by the content's.
            if !body.starts_with(&ZSTD_MAGIC) {
                assert_eq!(TraceFormat::from_magic(body), TraceFormat::from_magic(body));
                let _ = TraceFormat::sniff(body);
                return;
            }
            let Ok(mut dec) = zstd::stream::read::Decoder::new(body) else {
                return;
            };
            if dec.window_log_max(ZSTD_WINDOW_LOG_MAX).is_err() {
                return;
            }
            let mut out = Vec::new();
            if dec.take(MAX_UNZSTD).read_to_end(&mut out).is_err() {
                return;
            }
            if let Some(format) = TraceFormat::from_magic(&out).or_else(|| TraceFormat::sniff(&out)) {
                check_trace(format, &out, &ReadOptions::format(format), cap, true);
            }
        }
        "lcs-records" => {
            let [version, records @ ..] = body else { return };
            let version = 1 + version % 8;
            let mut trace = lcs_header(LCS_HEADER_SIZE, version, 0);
            trace.extend_from_slice(records);
            check_trace(
                TraceFormat::Lcs,
                &trace,
                &ReadOptions::format(TraceFormat::Lcs),
                cap,
                true,
            );
        }
        _ => unreachable!(),
    }
}

/// One reading of a trace: the records (or the text of the error that ended them) and whether
/// the reader stopped at [`MAX_ITEMS`].
#[derive(Debug, PartialEq)]
struct Reading {
    records: Vec<TraceRecord>,
    error: Option<String>,
    location: Option<Location>,
    key_space: KeySpace,
}

fn read_records<R: std::io::BufRead>(mut r: RecordReader<R>, data: &[u8], offsets_in_input: bool) -> Reading {
    let mut records = Vec::new();
    let mut error = None;
    let mut location = None;
    for item in r.by_ref().take(MAX_ITEMS) {
        match item {
            Ok(rec) => records.push(rec),
            Err(e) => {
                check_trace_error(&e, data, offsets_in_input);
                location = e.location();
                error = Some(e.to_string());
                break;
            }
        }
    }
    if error.is_some() {
        assert!(r.next().is_none(), "the record reader goes on after an error");
    }
    Reading {
        records,
        error,
        location,
        key_space: r.key_space(),
    }
}

/// What every trace error must say: the stream's name, and a location within the input.
fn check_trace_error(e: &TraceError, data: &[u8], offsets_in_input: bool) {
    let msg = e.to_string();
    assert!(msg.starts_with(TRACE_PATH), "error does not name the input: {msg}");
    let Some(at) = e.location() else { return };
    assert!(
        msg.contains(&at.to_string()),
        "error does not name its location {at}: {msg}"
    );
    let len = data.len() as u64;
    match at {
        Location::Line(n) => {
            let lines = data.iter().filter(|&&c| c == b'\n').count() as u64 + 1;
            assert!((1..=lines).contains(&n), "line {n} of {lines}: {msg}");
        }
        Location::Record { record, offset } => {
            assert!(record >= 1, "{msg}");
            assert!(
                !offsets_in_input || offset <= len,
                "offset {offset} past {len} bytes: {msg}"
            );
        }
        Location::Byte(offset) => {
            assert!(
                !offsets_in_input || offset <= len,
                "offset {offset} past {len} bytes: {msg}"
            );
        }
    }
}

fn check_trace(format: TraceFormat, data: &[u8], options: &ReadOptions, cap: Option<usize>, offsets: bool) {
    // lrugen traces may hold a zstd body: their offsets count decompressed bytes
    let offsets = offsets && format != TraceFormat::Lrugen;
    let direct = read_records(RecordReader::new(data, format, TRACE_PATH, options), data, offsets);
    if let Some(cap) = cap {
        let small = BufReader::with_capacity(cap, data);
        let buffered = read_records(RecordReader::new(small, format, TRACE_PATH, options), data, offsets);
        assert_eq!(direct, buffered, "reading through a {cap}-byte buffer differs");
    }

    // The page keys.
    let mut keys = Vec::new();
    let mut key_error = None;
    let mut pages = TraceReader::with_options(data, format, TRACE_PATH, options);
    for item in pages.by_ref().take(MAX_ITEMS) {
        match item {
            Ok(k) => keys.push(k),
            Err(e) => {
                check_trace_error(&e, data, offsets);
                key_error = Some(e.location());
                break;
            }
        }
    }
    if key_error.is_some() {
        assert!(pages.next().is_none(), "the page reader goes on after an error");
    }
    if format == TraceFormat::OracleGeneral {
        // The fast key reader and the record reader agree.
        let n = keys.len().min(direct.records.len());
        let rec_keys: Vec<u64> = direct.records[..n].iter().map(|r| r.key).collect();
        assert_eq!(keys[..n], rec_keys[..], "oracleGeneral keys differ between the readers");
        if keys.len() < MAX_ITEMS && direct.records.len() < MAX_ITEMS {
            assert_eq!(keys.len(), direct.records.len());
            assert_eq!(key_error, direct.error.as_ref().map(|_| direct.location));
        }
    }

    // What was read writes and reads back the same, as an lrugen trace, plain and compressed
    // (compressed only for short ones: an encoder costs).
    if direct.records.is_empty() {
        return;
    }
    for zstd_level in [None, Some(1)] {
        if zstd_level.is_some() && direct.records.len() > 16 {
            continue;
        }
        let options = WriterOptions {
            key_space: direct.key_space,
            zstd_level,
            record_count: Some(direct.records.len() as u64),
        };
        let mut w = LrugenWriter::new(Vec::new(), options).expect("writer to memory");
        for r in &direct.records {
            w.write(r).expect("write to memory");
        }
        let bytes = w.finish().expect("finish in memory");
        let mut back = LrugenReader::new(&bytes[..], TRACE_PATH);
        let again: Vec<TraceRecord> = back
            .by_ref()
            .collect::<Result<_, _>>()
            .expect("reading back what was written");
        assert_eq!(again, direct.records, "lrugen trace round trip");
        assert_eq!(back.header().map(|h| h.key_space), Some(direct.key_space));
    }
}

/// The name experiment errors are given (no file is read; the folder does not exist, so that
/// workload paths are all missing).
const EXP_PATH: &str = "/nonexistent-lrugen-fuzz/exp.toml";

/// Experiment TOML files ([`Experiment::parse`]): an error names the file and a line within the
/// text.
pub fn experiment_toml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match Experiment::parse(&text, Path::new(EXP_PATH)) {
        Ok(_) => {}
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.starts_with(EXP_PATH), "error does not name the file: {msg}");
            assert!(msg.len() > EXP_PATH.len() + 2, "no message: {msg}");
            if let ExpError::Parse { line, column, .. } = e {
                let lines = text.split('\n').count();
                if let Some(l) = line {
                    assert!((1..=lines).contains(&l), "line {l} of {lines}: {msg}");
                }
                assert!(column.is_none_or(|c| c >= 1), "{msg}");
            }
        }
    }
}

/// Op files ([`OpFile::parse`]): an error names a line within the text; what parses prints
/// ([`OpFile::to_text`]) and parses back to itself.
pub fn op_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match OpFile::parse(&text) {
        Ok(f) => {
            let again = f.to_text();
            assert_eq!(OpFile::parse(&again).as_ref(), Ok(&f), "op file prints as {again:?}");
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains(&format!("line {}", e.line)) && !e.msg.is_empty(), "{msg}");
            let lines = text.lines().count().max(1);
            assert!((1..=lines).contains(&e.line), "line {} of {lines}: {msg}", e.line);
        }
    }
}

/// `lru_gen` in debugfs. Byte 0 selects: even, the output parser ([`debugfs::parse`]: an error
/// names a line within the text; every lruvec it reads has generations);
/// odd, the write grammar under 6.1 (`1 mod 4`) or mainline (`3 mod 4`)
/// ([`debugfs::parse_commands`]: the commands iterator agrees with it; every command prints as a
/// text that parses back to it; an error names its command's index and errno).
pub fn debugfs_cmd(data: &[u8]) {
    let [sel, body @ ..] = data else { return };
    let text = String::from_utf8_lossy(body);
    if sel % 2 == 0 {
        match debugfs::parse(&text) {
            Ok(lruvecs) => {
                // every lruvec has its generations (the kernel prints at least two per node);
                // the format may stay untold: a short text whose header layout and lines fit
                // more than one kernel's output parses with no format (`detect_format`: None)
                assert!(
                    lruvecs.iter().all(|lv| !lv.gens.is_empty()),
                    "a lruvec without generations"
                );
                let _ = debugfs::detect_format(&text);
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with(&format!("line {}: expected ", e.line)), "{msg}");
                let lines = text.lines().count() + 1;
                assert!((1..=lines).contains(&e.line), "line {} of {lines}: {msg}", e.line);
            }
        }
        let _ = debugfs::detect_format(&text);
        return;
    }
    let profile = if sel % 4 == 1 { Profile::V6_1 } else { Profile::MAINLINE };
    let all = debugfs::parse_commands(&text, profile);
    let mut ok = Vec::new();
    let mut first_err = None;
    for c in debugfs::commands(&text, profile) {
        match c {
            Ok(c) => ok.push(c),
            Err(e) => {
                assert!(first_err.is_none(), "two errors from one write");
                first_err = Some(e);
            }
        }
    }
    match all {
        Ok(cmds) => {
            assert!(
                first_err.is_none() && cmds == ok,
                "commands() and parse_commands() differ"
            );
            assert!(!cmds.is_empty());
            for c in &cmds {
                let printed = c.to_string();
                assert_eq!(
                    debugfs::parse_commands(&printed, profile),
                    Ok(vec![c.clone()]),
                    "{c:?} prints as {printed:?}"
                );
            }
        }
        Err(e) => {
            assert_eq!(first_err.as_ref(), Some(&e), "commands() and parse_commands() differ");
            assert_eq!(
                e.index,
                ok.len(),
                "the error's index is not the count of commands before it"
            );
            let msg = e.to_string();
            assert!(msg.contains(e.errno.name()) && !e.reason.is_empty(), "{msg}");
        }
    }
}

/// `kstrtouint(s, 0, &v)` written out plainly, to check the parser against.
fn reference_kstrtouint(s: &[u8]) -> Option<u32> {
    let s = s.strip_suffix(b"\n").unwrap_or(s);
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let hex = s.len() > 2 && s[0] == b'0' && (s[1] == b'x' || s[1] == b'X') && s[2].is_ascii_hexdigit();
    let (digits, radix) = if hex {
        (&s[2..], 16)
    } else if s.first() == Some(&b'0') {
        (s, 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.iter().all(|&c| char::from(c).is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(digits).ok()?, radix).ok()
}

/// The `/sys/kernel/mm/lru_gen` control files. Byte 0 selects: even, a write to `enabled`
/// ([`sysfs::parse_enabled`]); odd, to `min_ttl_ms` ([`sysfs::parse_min_ttl_ms`]). Both are
/// checked against a plain reading of the kernel's rules, and a value read is read again the
/// same from its decimal, hex and octal forms.
pub fn control(data: &[u8]) {
    let [sel, buf @ ..] = data else { return };
    memory_reclaim_write(buf);
    limit_write(buf);
    control_script(buf);
    if sel % 2 == 0 {
        let got = sysfs::parse_enabled(buf);
        let want = match buf.first().map(u8::to_ascii_lowercase) {
            Some(b'y') => Some(7),
            Some(b'n') => Some(0),
            _ => reference_kstrtouint(buf).map(|v| v & sysfs::CAPS_MASK),
        };
        assert_eq!(got.ok(), want, "enabled write {buf:?}");
        if let Some(v) = want {
            for s in [format!("{v}\n"), format!("0x{v:x}"), format!("0{v:o}")] {
                assert_eq!(sysfs::parse_enabled(s.as_bytes()), Ok(v), "{s:?}");
            }
        }
    } else {
        let got = sysfs::parse_min_ttl_ms(buf);
        let want = reference_kstrtouint(buf);
        assert_eq!(got.ok(), want, "min_ttl_ms write {buf:?}");
        if let Some(v) = want {
            for s in [format!("{v}\n"), format!("0X{v:X}"), format!("+0{v:o}\n")] {
                assert_eq!(sysfs::parse_min_ttl_ms(s.as_bytes()), Ok(v), "{s:?}");
            }
        }
        assert_eq!(debugfs::kstrtouint(buf).ok(), want, "kstrtouint {buf:?}");
    }
}

/// Any bytes as a `memory.max`/`high`/`low`/`min` value (`page_counter_memparse(buf, "max")`):
/// never a panic; an accepted size printed back in bytes reads back as the same pages.
fn limit_write(buf: &[u8]) {
    use lrugen::control::memcg::page_counter_memparse;
    use lrugen::reclaim::memory_reclaim::PAGE_COUNTER_MAX;
    let Ok(text) = std::str::from_utf8(buf) else { return };
    if let Ok(pages) = page_counter_memparse(text) {
        let back = if pages == PAGE_COUNTER_MAX {
            "max".to_string()
        } else {
            format!("{}\n", pages * 4096)
        };
        assert_eq!(page_counter_memparse(&back), Ok(pages), "{text:?} -> {back:?}");
    }
}

/// Any bytes as a control script (`lrugen run --ctl`): never a panic, and an error names a line
/// of the input.
fn control_script(buf: &[u8]) {
    let Ok(text) = std::str::from_utf8(buf) else { return };
    match lrugen::control::Script::parse(text, std::path::Path::new("fuzz.toml")) {
        Ok(s) => {
            for a in &s.actions {
                assert!(
                    a.line >= 1 && a.line <= text.lines().count().max(1),
                    "line {} of {text:?}",
                    a.line
                );
            }
        }
        Err(e) => {
            if let Some((line, _)) = e.at {
                assert!(line >= 1 && line <= text.lines().count() + 1, "{e} in {text:?}");
            }
        }
    }
}

/// Any bytes as a `memory.reclaim` write under every kernel preset: never a panic; what 6.1
/// accepts (other than the empty write) 6.12 reads as the same pages without a swappiness; what
/// 6.12 accepts 6.17 and 7.2 read the same; an accepted request printed back as bytes and its
/// swappiness reads back as the same request.
fn memory_reclaim_write(buf: &[u8]) {
    use lrugen::reclaim::memory_reclaim::{parse, PAGE_COUNTER_MAX};
    use lrugen::reclaim::mglru::Switches;
    let Ok(text) = std::str::from_utf8(buf) else { return };
    let old = parse(text, &Switches::V6_1);
    let new = parse(text, &Switches::V6_12);
    if let Ok(r) = old {
        if !text.trim_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']).is_empty() && r.nr_pages < PAGE_COUNTER_MAX {
            assert_eq!(new, Ok(r), "6.1 accepts {text:?}, 6.12 reads it otherwise");
        }
        assert_eq!(r.swappiness, None);
    }
    if let Ok(r) = new {
        assert_eq!(parse(text, &Switches::V6_17), Ok(r), "{text:?}");
        assert_eq!(parse(text, &Switches::V7_2), Ok(r), "{text:?}");
        if let Some(bytes) = r.nr_pages.checked_mul(4096) {
            let again = match r.swappiness {
                Some(s) => format!("{bytes} swappiness={s}"),
                None => format!("{bytes}"),
            };
            assert_eq!(parse(&again, &Switches::V6_12), Ok(r), "{text:?} as {again:?}");
        }
    }
}

/// The guest's serial log ([`serial::parse_serial`], [`serial::sections`],
/// [`serial::counters`], [`serial::last_dump`]): never a panic, an error with a message, and
/// every section found is a text between its markers.
pub fn serial_log(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let sections = serial::sections(&text);
    for (name, body) in &sections {
        assert!(text.contains(name.as_str()), "section name {name:?} not in the log");
        let _ = serial::counters(body);
        // every line of a section is a line of the log (carriage returns dropped)
        assert!(body.is_empty() || body.ends_with('\n'));
    }
    let _ = serial::last_dump(&text, "memory.stat");
    match serial::parse_serial(&text) {
        Ok(run) => {
            assert!(sections.contains_key("replay") && sections.contains_key("uname"));
            let _ = run;
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

/// The benchmarks' own inputs: byte 0 selects, even, a YCSB workload properties file
/// ([`lrugen::workload::gen::properties::parse`], then the properties over CoreWorkload's
/// defaults), odd, a fio job file ([`lrugen::workload::gen::fiojob::JobFile`]). Never a panic;
/// an error names a line within the input; a job file read gives a workload that validates.
pub fn bench_inputs(data: &[u8]) {
    use lrugen::workload::gen::{fiojob, properties, ycsb};
    let [sel, buf @ ..] = data else { return };
    let text = String::from_utf8_lossy(buf);
    let lines = text.lines().count();
    if sel % 2 == 0 {
        match properties::parse(&text) {
            Err(e) => assert!(e.line >= 1 && e.line <= lines, "line {} of {lines}", e.line),
            Ok(props) => {
                for p in &props {
                    assert!(p.line >= 1 && p.line <= lines);
                }
                let map: std::collections::BTreeMap<String, String> = props
                    .into_iter()
                    .filter(|p| !ycsb::RUN_PROPERTIES.contains(&p.key.as_str()))
                    .map(|p| (p.key, p.value))
                    .collect();
                if let Ok((w, effects)) = ycsb::YcsbWorkload::core_defaults().with_properties(&map) {
                    assert_eq!(effects.len(), map.len());
                    assert!(w.record_bytes() >= 1);
                }
            }
        }
    } else {
        match fiojob::JobFile::parse(&text).and_then(|f| f.to_run()) {
            Err(e) => assert!(e.line <= lines, "line {} of {lines}", e.line),
            Ok(run) => {
                run.workload.validate().expect("a job file's workload validates");
                assert!(run.jobs >= 1);
                if let (Some(rt), Some(ramp)) = (run.runtime_ns, run.ramp_ns) {
                    assert!(rt >= ramp, "the ramp is within the run");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_kstrtouint_reads_the_kernels_forms() {
        assert_eq!(reference_kstrtouint(b"10\n"), Some(10));
        assert_eq!(reference_kstrtouint(b"0x1f"), Some(31));
        assert_eq!(reference_kstrtouint(b"017"), Some(15));
        assert_eq!(reference_kstrtouint(b"+0"), Some(0));
        for s in [
            &b""[..],
            b"0x",
            b"08",
            b"1 ",
            b" 1",
            b"-1",
            b"4294967296",
            b"+",
            b"0x+1",
            b"1\n\n",
        ] {
            assert_eq!(reference_kstrtouint(s), None, "{s:?}");
        }
    }
}

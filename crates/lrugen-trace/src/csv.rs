//! Delimited text traces with libCacheSim's column parameters.

use std::fmt;
use std::io::BufRead;
use std::path::PathBuf;
use std::str::FromStr;

use crate::error::TraceError;
use crate::record::{KeySpace, TraceOp, TraceRecord, PAGE_SIZE};
use crate::text::{line_reader_accessors, parse_u64, Lines};

/// The header line of the CloudPhysics sample (`cloudPhysicsIO.csv`).
pub const CLOUDPHYSICS_HEADER: &str = "version,time,op,size,lbn";

const COLUMNS_EXPECTED: &str = "csv parameters with column numbers from 1";
const NO_PARAMS_EXPECTED: &str = "the CloudPhysics header \"version,time,op,size,lbn\" (other csv traces need \
     column parameters, e.g. \"time-col=2, obj-id-col=5, obj-size-col=4, op-col=3, has-header=true\")";
const FIELDS_EXPECTED: &str = "as many delimited fields as the highest column parameter";
const ID_EXPECTED: &str = "an unsigned decimal object id in the obj-id column (or obj-id-is-num=false)";
const SIZE_EXPECTED: &str = "an object size in bytes, at most 4294967295, in the obj-size column";
const TIME_EXPECTED: &str = "a non-negative time (integer or decimal) in the time column";
const OP_EXPECTED: &str = "an op in the op column: read, get, gets, write, set, add, replace, cas, append, \
     prepend, incr, decr, update, delete, or a SCSI opcode 08/28/88/a8 (read), 0a/2a/8a/aa (write)";
const RANGE_EXPECTED: &str = "obj-id × block-size + obj-size to fit in 64 bits";

/// Column parameters of a delimited trace, as libCacheSim's
/// `-t "time-col=N, obj-id-col=N, obj-size-col=N, op-col=N, delimiter=C,
/// has-header=true"`. Columns count from 1.
///
/// Beyond libCacheSim: `block-size=N` says the id column is a block number of
/// `N` bytes (a block trace; records then expand into the pages of their byte
/// range, see [`KeySpace::Blocks`]); without it ids are objects, one page each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvParams {
    /// Column of the object id (or block number): `obj-id-col`.
    pub obj_id_col: usize,
    /// Column of the time, if any: `time-col`.
    pub time_col: Option<usize>,
    /// Column of the size in bytes, if any: `obj-size-col`.
    pub obj_size_col: Option<usize>,
    /// Column of the operation, if any: `op-col`.
    pub op_col: Option<usize>,
    /// The field delimiter (one byte): `delimiter`. Default `,`.
    pub delimiter: u8,
    /// Whether the first line is a header to skip: `has-header`. Default false.
    pub has_header: bool,
    /// Whether ids are decimal numbers (`obj-id-is-num`, default true here);
    /// otherwise they are hashed (FNV-1a, 64 bits).
    pub obj_id_is_num: bool,
    /// Bytes per id unit for block traces: `block-size` (lrugen's addition).
    pub block_size: Option<u32>,
}

impl Default for CsvParams {
    fn default() -> Self {
        CsvParams {
            obj_id_col: 1,
            time_col: None,
            obj_size_col: None,
            op_col: None,
            delimiter: b',',
            has_header: false,
            obj_id_is_num: true,
            block_size: None,
        }
    }
}

impl CsvParams {
    /// The CloudPhysics block I/O sample (`version,time,op,size,lbn`): key the
    /// lbn (512-byte blocks), op `28` read / `2a` write, size in bytes, time
    /// the `time` column; the header is skipped.
    pub fn cloudphysics() -> CsvParams {
        CsvParams {
            obj_id_col: 5,
            time_col: Some(2),
            obj_size_col: Some(4),
            op_col: Some(3),
            delimiter: b',',
            has_header: true,
            obj_id_is_num: true,
            block_size: Some(512),
        }
    }

    /// The key space of the records: blocks with `block-size`, else pages.
    pub fn key_space(&self) -> KeySpace {
        match self.block_size {
            Some(size) => KeySpace::Blocks(size),
            None => KeySpace::Pages,
        }
    }

    fn max_col(&self) -> usize {
        [Some(self.obj_id_col), self.time_col, self.obj_size_col, self.op_col]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(1)
    }
}

/// Parses libCacheSim's `-t` syntax: comma-separated `key=value` pairs,
/// whitespace ignored, keys `obj-id-col`, `time-col`, `obj-size-col`,
/// `op-col` (or the `-field` aliases), `delimiter` (one character, also
/// `\t`, `tab`, `comma`, `space`; `delimiter=,` works), `has-header`,
/// `obj-id-is-num` (`true`/`false`), `block-size`; `cnt-col`,
/// `next-access-col` and `ttl-col` are accepted and ignored. `preset=cloudphysics`
/// starts from [`CsvParams::cloudphysics`]. `obj-id-col` is required (unless
/// a preset gives it).
impl FromStr for CsvParams {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut p = CsvParams::default();
        let mut have_id = false;
        let mut rest = s.trim();
        while !rest.is_empty() {
            let Some(eq) = rest.find('=') else {
                return Err(format!("csv parameter \"{rest}\" is not key=value"));
            };
            let key = rest[..eq].trim().to_ascii_lowercase();
            let after = rest[eq + 1..].trim_start();
            // The delimiter's value may itself be a comma.
            let (value, next) = if key == "delimiter" && after.starts_with(',') {
                let next = after[1..].trim_start();
                (",", next.strip_prefix(',').unwrap_or(next))
            } else {
                match after.find(',') {
                    Some(c) => (after[..c].trim(), &after[c + 1..]),
                    None => (after.trim(), ""),
                }
            };
            rest = next.trim_start();
            let col = |v: &str| -> Result<usize, String> {
                match v.parse::<usize>() {
                    Ok(n) if n >= 1 => Ok(n),
                    _ => Err(format!("csv parameter {key}={v}: expected a column number from 1")),
                }
            };
            let boolean = |v: &str| -> Result<bool, String> {
                match v.to_ascii_lowercase().as_str() {
                    "true" | "1" | "yes" => Ok(true),
                    "false" | "0" | "no" => Ok(false),
                    _ => Err(format!("csv parameter {key}={v}: expected true or false")),
                }
            };
            match key.as_str() {
                "obj-id-col" | "obj-id-field" => {
                    p.obj_id_col = col(value)?;
                    have_id = true;
                }
                "time-col" | "time-field" => p.time_col = Some(col(value)?),
                "obj-size-col" | "obj-size-field" | "size-col" | "size-field" => p.obj_size_col = Some(col(value)?),
                "op-col" | "op-field" => p.op_col = Some(col(value)?),
                "cnt-col" | "cnt-field" | "next-access-col" | "next-access-field" | "ttl-col" | "ttl-field" => {
                    col(value)?;
                }
                "delimiter" => {
                    p.delimiter = match value {
                        "\\t" | "tab" => b'\t',
                        "comma" => b',',
                        "space" | "" => b' ',
                        v if v.len() == 1 => v.as_bytes()[0],
                        v => return Err(format!("csv parameter delimiter={v}: expected one character")),
                    }
                }
                "has-header" => p.has_header = boolean(value)?,
                "obj-id-is-num" => p.obj_id_is_num = boolean(value)?,
                "block-size" => match value.parse::<u32>() {
                    Ok(n) if n >= 1 => p.block_size = Some(n),
                    _ => return Err(format!("csv parameter block-size={value}: expected bytes, from 1")),
                },
                "preset" if value.eq_ignore_ascii_case("cloudphysics") => {
                    p = CsvParams::cloudphysics();
                    have_id = true;
                }
                _ => {
                    return Err(format!(
                        "unknown csv parameter \"{key}\"; known: obj-id-col, time-col, obj-size-col, op-col, \
                         delimiter, has-header, obj-id-is-num, block-size, preset=cloudphysics"
                    ))
                }
            }
        }
        if !have_id {
            return Err("csv parameters need obj-id-col=N".to_string());
        }
        Ok(p)
    }
}

impl fmt::Display for CsvParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "obj-id-col={}", self.obj_id_col)?;
        if let Some(c) = self.time_col {
            write!(f, ", time-col={c}")?;
        }
        if let Some(c) = self.obj_size_col {
            write!(f, ", obj-size-col={c}")?;
        }
        if let Some(c) = self.op_col {
            write!(f, ", op-col={c}")?;
        }
        match self.delimiter {
            b'\t' => f.write_str(", delimiter=\\t")?,
            // `delimiter= ,` would read back as a comma: spell the space out
            b' ' => f.write_str(", delimiter=space")?,
            d => write!(f, ", delimiter={}", d as char)?,
        }
        write!(
            f,
            ", has-header={}, obj-id-is-num={}",
            self.has_header, self.obj_id_is_num
        )?;
        if let Some(b) = self.block_size {
            write!(f, ", block-size={b}")?;
        }
        Ok(())
    }
}

/// Streams the records of a delimited trace.
///
/// `key` is the id column (a block number with `block-size`), `len` the size
/// column (else the block size, else 4096), `op` from the op column (else
/// `Read`), `time` the time column (decimals truncated; else 0). Without
/// parameters ([`CsvReader::new`] with `None`) the first line must be the
/// CloudPhysics header, and [`CsvParams::cloudphysics`] is used. Fields may
/// be enclosed in double quotes; surrounding whitespace is ignored.
pub struct CsvReader<R> {
    lines: Lines<R>,
    params: Option<CsvParams>,
    max_col: usize,
    started: bool,
    /// Reused field boundaries of the current line.
    fields: Vec<(usize, usize)>,
    done: bool,
}

line_reader_accessors!(CsvReader);

impl<R: BufRead> CsvReader<R> {
    /// Reads a delimited trace from `input` (already decompressed); `path`
    /// names it in errors.
    pub fn new(input: R, path: impl Into<PathBuf>, params: Option<CsvParams>) -> Self {
        CsvReader {
            lines: Lines::new(input, path),
            max_col: params.as_ref().map_or(0, CsvParams::max_col),
            params,
            started: false,
            fields: Vec::with_capacity(8),
            done: false,
        }
    }

    /// The parameters in use (`None` before the first line when they are to
    /// be taken from the header).
    pub fn params(&self) -> Option<&CsvParams> {
        self.params.as_ref()
    }

    /// The key space of the records, when the parameters are known.
    pub fn key_space(&self) -> KeySpace {
        match &self.params {
            Some(p) => p.key_space(),
            None => CsvParams::cloudphysics().key_space(),
        }
    }

    fn start(&mut self) -> Result<bool, TraceError> {
        self.started = true;
        // The fields are public: a hand-built column 0 is refused here (the
        // `-t` parser refuses it too) rather than indexing before column 1.
        if let Some(p) = &self.params {
            if [Some(p.obj_id_col), p.time_col, p.obj_size_col, p.op_col].contains(&Some(0)) {
                return Err(self.lines.error_found(COLUMNS_EXPECTED, p.to_string()));
            }
        }
        match &self.params {
            Some(p) if !p.has_header => Ok(true),
            Some(_) => self.lines.advance(),
            None => {
                if !self.lines.advance()? {
                    return Ok(false);
                }
                if self.lines.line().trim_ascii() != CLOUDPHYSICS_HEADER.as_bytes() {
                    return Err(self.lines.error(NO_PARAMS_EXPECTED));
                }
                let p = CsvParams::cloudphysics();
                self.max_col = p.max_col();
                self.params = Some(p);
                Ok(true)
            }
        }
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if !self.started && !self.start()? {
            return Ok(None);
        }
        let Some(p) = &self.params else {
            return Ok(None);
        };
        if !self.lines.advance_nonblank()? {
            return Ok(None);
        }
        let line = self.lines.line();
        split_fields(line, p.delimiter, &mut self.fields);
        if self.fields.len() < self.max_col {
            let found = format!("{} fields: {}", self.fields.len(), crate::reader::excerpt(line));
            return Err(self.lines.error_found(FIELDS_EXPECTED, found));
        }
        let field = |col: usize| {
            let (a, b) = self.fields[col - 1];
            &line[a..b]
        };
        let id = field(p.obj_id_col);
        let key = if p.obj_id_is_num {
            match parse_u64(id) {
                Some(k) => k,
                None => return Err(self.lines.error_found(ID_EXPECTED, lossy(id))),
            }
        } else {
            fnv1a(id)
        };
        let len = match p.obj_size_col {
            Some(c) => match parse_u64(field(c)).and_then(|s| u32::try_from(s).ok()) {
                Some(s) => s,
                None => return Err(self.lines.error_found(SIZE_EXPECTED, lossy(field(c)))),
            },
            None => p.block_size.unwrap_or(PAGE_SIZE as u32),
        };
        if let Some(bs) = p.block_size {
            let end = u128::from(key) * u128::from(bs) + u128::from(len);
            if end > u128::from(u64::MAX) {
                return Err(self.lines.error(RANGE_EXPECTED));
            }
        }
        let time = match p.time_col {
            Some(c) => match parse_time(field(c)) {
                Some(t) => t,
                None => return Err(self.lines.error_found(TIME_EXPECTED, lossy(field(c)))),
            },
            None => 0,
        };
        let op = match p.op_col {
            Some(c) => match parse_op(field(c)) {
                Some(op) => op,
                None => return Err(self.lines.error_found(OP_EXPECTED, lossy(field(c)))),
            },
            None => TraceOp::Read,
        };
        Ok(Some(TraceRecord {
            op,
            key,
            len,
            file: 0,
            time,
        }))
    }
}

crate::record::record_iterator!(CsvReader);

fn lossy(s: &[u8]) -> String {
    crate::reader::excerpt(s)
}

/// Splits `line` at `delim` outside double quotes into trimmed field ranges
/// (surrounding quotes removed).
fn split_fields(line: &[u8], delim: u8, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let mut start = 0;
    let mut quoted = false;
    for (i, &c) in line.iter().enumerate() {
        if c == b'"' {
            quoted = !quoted;
        } else if c == delim && !quoted {
            out.push(trim_field(line, start, i));
            start = i + 1;
        }
    }
    out.push(trim_field(line, start, line.len()));
}

fn trim_field(line: &[u8], mut a: usize, mut b: usize) -> (usize, usize) {
    while a < b && line[a].is_ascii_whitespace() {
        a += 1;
    }
    while b > a && line[b - 1].is_ascii_whitespace() {
        b -= 1;
    }
    if b - a >= 2 && line[a] == b'"' && line[b - 1] == b'"' {
        (a + 1, b - 1)
    } else {
        (a, b)
    }
}

/// An integer, or a decimal truncated to an integer.
fn parse_time(s: &[u8]) -> Option<u64> {
    if let Some(t) = parse_u64(s) {
        return Some(t);
    }
    let text = std::str::from_utf8(s).ok()?;
    if !text
        .bytes()
        .all(|c| c.is_ascii_digit() || c == b'.' || c == b'e' || c == b'E' || c == b'+')
    {
        return None;
    }
    let v: f64 = text.parse().ok()?;
    // `as` saturates; reject what would not fit.
    (0.0..18_446_744_073_709_551_616.0).contains(&v).then_some(v as u64)
}

/// Operation names of libCacheSim (`req_op_e`) and SCSI READ/WRITE opcodes.
pub(crate) fn parse_op(s: &[u8]) -> Option<TraceOp> {
    let mut buf = [0u8; 8];
    if s.len() > buf.len() {
        return None;
    }
    buf[..s.len()].copy_from_slice(s);
    buf[..s.len()].make_ascii_lowercase();
    Some(match &buf[..s.len()] {
        b"read" | b"r" | b"get" | b"gets" | b"08" | b"28" | b"88" | b"a8" => TraceOp::Read,
        b"write" | b"w" | b"set" | b"add" | b"replace" | b"cas" | b"append" | b"prepend" | b"incr" | b"decr"
        | b"update" | b"0a" | b"2a" | b"8a" | b"aa" => TraceOp::Write,
        b"delete" | b"trim" => TraceOp::Trim,
        _ => return None,
    })
}

/// FNV-1a, 64 bits: the id of a non-numeric object name.
pub(crate) fn fnv1a(s: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &c in s {
        h ^= u64::from(c);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Whether `head` starts with the CloudPhysics header.
pub(crate) fn sniff(head: &[u8]) -> bool {
    let first = head.split(|&c| c == b'\n').next().unwrap_or(b"");
    first.trim_ascii() == CLOUDPHYSICS_HEADER.as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuzzing found `delimiter=space` printed as `delimiter= `, which reads back as a comma.
    #[test]
    fn every_delimiter_prints_and_parses_back() {
        for d in (0x21u8..0x7f).chain([b' ', b'\t']) {
            let p = CsvParams {
                delimiter: d,
                ..CsvParams::default()
            };
            let text = p.to_string();
            assert_eq!(text.parse::<CsvParams>(), Ok(p), "{text:?}");
        }
        let p: CsvParams = "obj-id-col=2, delimiter=space".parse().unwrap();
        assert_eq!(
            p.to_string(),
            "obj-id-col=2, delimiter=space, has-header=false, obj-id-is-num=true"
        );
    }

    #[test]
    fn params() {
        let p: CsvParams = "time-col=2, obj-id-col=5, obj-size-col=4, op-col=3, delimiter=,, has-header=true"
            .parse()
            .unwrap();
        assert_eq!(p.obj_id_col, 5);
        assert_eq!(p.time_col, Some(2));
        assert_eq!(p.delimiter, b',');
        assert!(p.has_header);
        assert_eq!(p.block_size, None);
        let p: CsvParams = "obj-id-field=1,delimiter=\\t,obj-id-is-num=false".parse().unwrap();
        assert_eq!(p.delimiter, b'\t');
        assert!(!p.obj_id_is_num);
        let p: CsvParams = "preset=cloudphysics".parse().unwrap();
        assert_eq!(p, CsvParams::cloudphysics());
        assert_eq!(p.to_string().parse::<CsvParams>().unwrap(), p);
        assert!("time-col=2".parse::<CsvParams>().unwrap_err().contains("obj-id-col"));
        assert!("obj-id-col=0".parse::<CsvParams>().is_err());
        assert!("obj-id-col=1, colour=red"
            .parse::<CsvParams>()
            .unwrap_err()
            .contains("unknown"));
        assert!("obj-id-col".parse::<CsvParams>().is_err());
    }

    #[test]
    fn fields_and_values() {
        let mut f = Vec::new();
        split_fields(b" a ,\"b,c\", d", b',', &mut f);
        let line = b" a ,\"b,c\", d";
        let got: Vec<&[u8]> = f.iter().map(|&(a, b)| &line[a..b]).collect();
        assert_eq!(got, [&b"a"[..], b"b,c", b"d"]);
        assert_eq!(parse_time(b"12.9"), Some(12));
        assert_eq!(parse_time(b"-1"), None);
        assert_eq!(parse_time(b"1e30"), None);
        assert_eq!(parse_op(b"2A"), Some(TraceOp::Write));
        assert_eq!(parse_op(b"28"), Some(TraceOp::Read));
        assert_eq!(parse_op(b"xx"), None);
        assert_eq!(parse_op(b"a-very-long-op"), None);
    }
}

//! fio iolog versions 2 and 3 (`write_iolog=` / `read_iolog=`).
//!
//! Version 2: the first line is `fio version 2 iolog`; then one action per
//! line, `<file> add|open|close` or `<file> read|write|sync|datasync|trim
//! <offset> <length>` (bytes). Version 3 (`fio version 3 iolog`) starts every
//! line with a timestamp. fio's `wait` action (a replay delay) is accepted and
//! yields no record.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::PathBuf;

use crate::error::TraceError;
use crate::record::{TraceOp, TraceRecord};
use crate::text::{line_reader_accessors, parse_u64, split_ws, Lines};

/// The first line of a version 2 iolog.
pub const IOLOG_V2_HEADER: &str = "fio version 2 iolog";
/// The first line of a version 3 iolog.
pub const IOLOG_V3_HEADER: &str = "fio version 3 iolog";

/// Nanoseconds per tick of iolog v3 timestamps by default: milliseconds, as
/// the project's trace specification says. (fio's own writer, `log_io_u` in
/// `iolog.c`, prints `utime_since_now()`, i.e. microseconds; give 1,000 with
/// [`IologReader::with_tick_ns`] for such logs.)
pub const IOLOG_V3_TICK_NS: u64 = 1_000_000;

const HEADER_EXPECTED: &str = "the first line \"fio version 2 iolog\" or \"fio version 3 iolog\"";
const V2_EXPECTED: &str =
    "\"<file> add|open|close\" or \"<file> read|write|sync|datasync|trim|wait <offset> <length>\"";
const V3_EXPECTED: &str =
    "\"<ms> <file> add|open|close\" or \"<ms> <file> read|write|sync|datasync|trim|wait <offset> <length>\"";
const ACTION_EXPECTED: &str = "an action add, open, close, read, write, sync, datasync, trim or wait";
const FILE_EXPECTED: &str = "a file named by an earlier \"add\" action";
const LENGTH_EXPECTED: &str = "a length of at most 4294967295 bytes";
const TIME_EXPECTED: &str = "a timestamp whose value in ns fits in 64 bits";

/// The state of a file named in an iolog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IologFile {
    /// The name as written in the log.
    pub name: String,
    /// Whether the last `open`/`close` action left it open.
    pub open: bool,
}

/// Streams the records of a fio iolog (v2 or v3, from the first line).
///
/// Files are numbered by the first appearance of their name (the `file` field
/// of the records); `add`, `open` and `close` are tracked and yield no record;
/// an action on a file never added is an error, as in fio. Lines are read into
/// one reused buffer; memory grows only with the number of distinct files.
pub struct IologReader<R> {
    lines: Lines<R>,
    version: u8,
    tick_ns: u64,
    names: HashMap<Vec<u8>, u32>,
    files: Vec<IologFile>,
    done: bool,
}

line_reader_accessors!(IologReader);

impl<R: BufRead> IologReader<R> {
    /// Reads an iolog from `input` (already decompressed); `path` names it in
    /// errors.
    pub fn new(input: R, path: impl Into<PathBuf>) -> Self {
        IologReader {
            lines: Lines::new(input, path),
            version: 0,
            tick_ns: IOLOG_V3_TICK_NS,
            names: HashMap::new(),
            files: Vec::new(),
            done: false,
        }
    }

    /// Sets the length of one v3 timestamp tick in ns (default
    /// [`IOLOG_V3_TICK_NS`], milliseconds).
    pub fn with_tick_ns(mut self, tick_ns: u64) -> Self {
        self.tick_ns = tick_ns;
        self
    }

    /// The log's version (2 or 3), or 0 before the first line is read.
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The files seen so far, by index.
    pub fn files(&self) -> &[IologFile] {
        &self.files
    }

    fn read_header(&mut self) -> Result<bool, TraceError> {
        if !self.lines.advance()? {
            return Ok(false);
        }
        let line = self.lines.line();
        let trimmed = line.trim_ascii_end();
        self.version = if trimmed == IOLOG_V2_HEADER.as_bytes() {
            2
        } else if trimmed == IOLOG_V3_HEADER.as_bytes() {
            3
        } else {
            return Err(self.lines.error(HEADER_EXPECTED));
        };
        Ok(true)
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if self.version == 0 && !self.read_header()? {
            return Ok(None);
        }
        loop {
            if !self.lines.advance_nonblank()? {
                return Ok(None);
            }
            let line = self.lines.line();
            let mut f = [&b""[..]; 5];
            let n = split_ws(line, &mut f);
            let (time, f, n, shape) = if self.version == 3 {
                let Some(t) = parse_u64(f[0]) else {
                    return Err(self.lines.error(V3_EXPECTED));
                };
                let Some(ns) = t.checked_mul(self.tick_ns) else {
                    return Err(self.lines.error(TIME_EXPECTED));
                };
                (ns, [f[1], f[2], f[3], f[4], b""], n.saturating_sub(1), V3_EXPECTED)
            } else {
                (0, f, n, V2_EXPECTED)
            };
            let (name, action) = (f[0], f[1]);
            let op = match action {
                b"add" | b"open" | b"close" => {
                    if n != 2 {
                        return Err(self.lines.error(shape));
                    }
                    file_action(&mut self.names, &mut self.files, &self.lines, name, action)?;
                    continue;
                }
                b"read" => TraceOp::Read,
                b"write" => TraceOp::Write,
                b"sync" => TraceOp::Sync,
                b"datasync" => TraceOp::Datasync,
                b"trim" => TraceOp::Trim,
                b"wait" => {
                    if n != 4 || parse_u64(f[2]).is_none() || parse_u64(f[3]).is_none() {
                        return Err(self.lines.error(shape));
                    }
                    continue;
                }
                _ if n >= 2 => {
                    let found = String::from_utf8_lossy(action).into_owned();
                    return Err(self.lines.error_found(ACTION_EXPECTED, found));
                }
                _ => return Err(self.lines.error(shape)),
            };
            if n != 4 {
                return Err(self.lines.error(shape));
            }
            let (Some(offset), Some(length)) = (parse_u64(f[2]), parse_u64(f[3])) else {
                return Err(self.lines.error(shape));
            };
            let Ok(len) = u32::try_from(length) else {
                return Err(self.lines.error(LENGTH_EXPECTED));
            };
            let Some(&file) = self.names.get(name) else {
                let found = String::from_utf8_lossy(name).into_owned();
                return Err(self.lines.error_found(FILE_EXPECTED, found));
            };
            return Ok(Some(TraceRecord {
                op,
                key: offset,
                len,
                file,
                time,
            }));
        }
    }
}

/// Applies `add`, `open` or `close` to the file table.
fn file_action<R: BufRead>(
    names: &mut HashMap<Vec<u8>, u32>,
    files: &mut Vec<IologFile>,
    lines: &Lines<R>,
    name: &[u8],
    action: &[u8],
) -> Result<(), TraceError> {
    let index = match names.get(name) {
        Some(&i) => i,
        None if action == b"add" => {
            let i = files.len() as u32;
            names.insert(name.to_vec(), i);
            files.push(IologFile {
                name: String::from_utf8_lossy(name).into_owned(),
                open: false,
            });
            i
        }
        None => {
            let found = String::from_utf8_lossy(name).into_owned();
            return Err(lines.error_found(FILE_EXPECTED, found));
        }
    };
    let file = &mut files[index as usize];
    match action {
        b"open" => file.open = true,
        b"close" => file.open = false,
        _ => {}
    }
    Ok(())
}

crate::record::record_iterator!(IologReader);

//! valgrind lackey memory traces (`valgrind --tool=lackey --trace-mem=yes`).
//!
//! One access per line: `I  <addr>,<len>` (instruction fetch, in column 0),
//! ` L <addr>,<len>` (load), ` S <addr>,<len>` (store) and ` M <addr>,<len>`
//! (modify: a load then a store of the same bytes). Addresses are hex without
//! `0x`, lengths decimal. valgrind's own `==pid== …` lines and blank lines are
//! skipped.

use std::io::BufRead;
use std::path::PathBuf;

use crate::error::TraceError;
use crate::record::{TraceOp, TraceRecord};
use crate::text::{is_blank, line_reader_accessors, parse_hex_u64, parse_u64, Lines};

const EXPECTED: &str = "\"I  <hex addr>,<len>\", \" L|S|M <hex addr>,<len>\" or a \"==pid==\" line";
const LENGTH_EXPECTED: &str = "an access length of at most 4294967295 bytes";

/// Streams the records of a valgrind lackey trace: `Fetch`, `Load` and
/// `Store` with `key` the byte address, `len` the access size, `time` 0.
/// A modify (`M`) yields a `Load` then a `Store`.
pub struct LackeyReader<R> {
    lines: Lines<R>,
    /// The store half of a modify, yielded after its load.
    pending: Option<TraceRecord>,
    done: bool,
}

line_reader_accessors!(LackeyReader);

impl<R: BufRead> LackeyReader<R> {
    /// Reads a lackey trace from `input` (already decompressed); `path` names
    /// it in errors.
    pub fn new(input: R, path: impl Into<PathBuf>) -> Self {
        LackeyReader {
            lines: Lines::new(input, path),
            pending: None,
            done: false,
        }
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            if !self.lines.advance_nonblank()? {
                return Ok(None);
            }
            let line = self.lines.line();
            if is_valgrind_line(line) {
                continue;
            }
            let Some((kind, addr, len)) = parse_line(line) else {
                return Err(self.lines.error(EXPECTED));
            };
            let Ok(len) = u32::try_from(len) else {
                return Err(self.lines.error(LENGTH_EXPECTED));
            };
            let rec = |op| TraceRecord {
                op,
                key: addr,
                len,
                file: 0,
                time: 0,
            };
            return Ok(Some(match kind {
                b'I' => rec(TraceOp::Fetch),
                b'L' => rec(TraceOp::Load),
                b'S' => rec(TraceOp::Store),
                _ => {
                    self.pending = Some(rec(TraceOp::Store));
                    rec(TraceOp::Load)
                }
            }));
        }
    }
}

/// `==1234== …`: valgrind's own output.
fn is_valgrind_line(line: &[u8]) -> bool {
    let Some(rest) = line.strip_prefix(b"==") else {
        return false;
    };
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && rest[digits..].starts_with(b"==")
}

/// Parses an access line into (kind, address, length). `I` must be in column
/// 0; `L`, `S`, `M` are preceded by one space (more whitespace is tolerated).
fn parse_line(line: &[u8]) -> Option<(u8, u64, u64)> {
    let (kind, rest) = match line.split_first()? {
        (b'I', rest) => (b'I', rest),
        (c, _) if c.is_ascii_whitespace() => {
            let body = line.trim_ascii_start();
            let (&k, rest) = body.split_first()?;
            if !matches!(k, b'L' | b'S' | b'M') {
                return None;
            }
            (k, rest)
        }
        _ => return None,
    };
    if !rest.first()?.is_ascii_whitespace() {
        return None;
    }
    let rest = rest.trim_ascii();
    let comma = rest.iter().position(|&c| c == b',')?;
    let addr = parse_hex_u64(&rest[..comma])?;
    let len = parse_u64(&rest[comma + 1..])?;
    Some((kind, addr, len))
}

impl<R: BufRead> Iterator for LackeyReader<R> {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(r) = self.pending.take() {
            return Some(Ok(r));
        }
        if self.done {
            return None;
        }
        let r = self.next_record().transpose();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }
}

impl<R: BufRead> std::iter::FusedIterator for LackeyReader<R> {}

/// Whether `head` (the first bytes of a file) looks like a lackey trace: its
/// first non-blank line is a valgrind `==pid==` line or an access line.
pub(crate) fn sniff(head: &[u8]) -> bool {
    head.split(|&c| c == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .find(|l| !is_blank(l))
        .is_some_and(|l| is_valgrind_line(l) || parse_line(l).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(parse_line(b"I  04010173,3"), Some((b'I', 0x0401_0173, 3)));
        assert_eq!(parse_line(b" L 7ff000398,8"), Some((b'L', 0x7ff0_00398, 8)));
        assert_eq!(parse_line(b" M 0421b8e0,4 "), Some((b'M', 0x0421_b8e0, 4)));
        assert_eq!(parse_line(b" I 0400,3"), None);
        assert_eq!(parse_line(b"L 0400,3"), None);
        assert_eq!(parse_line(b" L0400,3"), None);
        assert_eq!(parse_line(b" L 0x0400,3"), None);
        assert_eq!(parse_line(b" L 0400"), None);
        assert_eq!(parse_line(b" L 0400,-3"), None);
        assert!(is_valgrind_line(b"==12345== Lackey, an example Valgrind tool"));
        assert!(!is_valgrind_line(b"==x== a"));
        assert!(sniff(b"==1== hello\nI  0400,3\n"));
        assert!(sniff(b"\nI  0400,3\n"));
        assert!(!sniff(b"version,time,op,size,lbn\n"));
    }
}

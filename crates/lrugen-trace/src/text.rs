//! Shared plumbing of the text readers: one reused line buffer, line
//! numbers, and errors naming the file, the line and the expectation.

use std::io::BufRead;
use std::path::PathBuf;

use crate::error::{Location, TraceError, TraceErrorKind};
use crate::reader::excerpt;

/// A text input read line by line into one reused buffer.
pub(crate) struct Lines<R> {
    pub(crate) input: R,
    pub(crate) path: PathBuf,
    line: Vec<u8>,
    /// Lines read so far (the current line's 1-based number).
    pub(crate) line_no: u64,
    /// End of the current line's content (without `\r\n`).
    end: usize,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(input: R, path: impl Into<PathBuf>) -> Self {
        Lines {
            input,
            path: path.into(),
            line: Vec::with_capacity(128),
            line_no: 0,
            end: 0,
        }
    }

    /// Reads the next line; `Ok(false)` at the end of the input.
    pub(crate) fn advance(&mut self) -> Result<bool, TraceError> {
        self.line.clear();
        self.end = 0;
        match self.input.read_until(b'\n', &mut self.line) {
            Ok(0) => Ok(false),
            Ok(_) => {
                self.line_no += 1;
                let mut end = self.line.len();
                while end > 0 && (self.line[end - 1] == b'\n' || self.line[end - 1] == b'\r') {
                    end -= 1;
                }
                self.end = end;
                Ok(true)
            }
            Err(source) => {
                let at = Location::Line(self.line_no + 1);
                Err(TraceError::new(self.path.clone(), TraceErrorKind::Read { at, source }))
            }
        }
    }

    /// Reads lines up to the next one that is not blank; `Ok(false)` at the end of the input.
    pub(crate) fn advance_nonblank(&mut self) -> Result<bool, TraceError> {
        while self.advance()? {
            if !is_blank(self.line()) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The current line without its end-of-line bytes.
    #[inline]
    pub(crate) fn line(&self) -> &[u8] {
        &self.line[..self.end]
    }

    /// A parse error about the current line.
    pub(crate) fn error(&self, expected: &'static str) -> TraceError {
        self.error_found(expected, excerpt(&self.line))
    }

    /// A parse error about the current line with a custom "found" text.
    pub(crate) fn error_found(&self, expected: &'static str, found: String) -> TraceError {
        TraceError::new(
            self.path.clone(),
            TraceErrorKind::Parse {
                at: Location::Line(self.line_no),
                expected,
                found,
            },
        )
    }
}

/// The accessors every [`Lines`]-based reader has (`position`, `into_inner`,
/// `path`), for a reader struct with a `lines: Lines<R>` field.
macro_rules! line_reader_accessors {
    ($reader:ident) => {
        impl<R> $reader<R> {
            /// Lines read so far.
            pub fn position(&self) -> $crate::error::Location {
                $crate::error::Location::Line(self.lines.line_no)
            }

            /// Gives the input back.
            pub fn into_inner(self) -> R {
                self.lines.input
            }

            /// The name used in error messages.
            pub fn path(&self) -> &std::path::Path {
                &self.lines.path
            }
        }
    };
}
pub(crate) use line_reader_accessors;

/// Whether the line is empty or only whitespace.
pub(crate) fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Parses an unsigned decimal integer (the whole slice).
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(v)
}

/// Parses an unsigned hexadecimal integer without `0x` (the whole slice).
pub(crate) fn parse_hex_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = (c as char).to_digit(16)?;
        v = v << 4 | u64::from(d);
    }
    Some(v)
}

/// Splits off whitespace-separated fields into `out`; returns how many there
/// were (at most `out.len()` are stored; more are counted).
pub(crate) fn split_ws<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> usize {
    let mut n = 0;
    for field in line.split(u8::is_ascii_whitespace).filter(|f| !f.is_empty()) {
        if n < out.len() {
            out[n] = field;
        }
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"+1"), None);
        assert_eq!(parse_hex_u64(b"7ff000398"), Some(0x7ff0_00398));
        assert_eq!(parse_hex_u64(b"FFFFFFFFFFFFFFFF"), Some(u64::MAX));
        assert_eq!(parse_hex_u64(b"1FFFFFFFFFFFFFFFF"), None);
        assert_eq!(parse_hex_u64(b"0x1"), None);
        let mut f = [&b""[..]; 3];
        assert_eq!(split_ws(b" a  b\tc d ", &mut f), 4);
        assert_eq!(f, [&b"a"[..], b"b", b"c"]);
    }
}

//! Compressed-file input, and the fast page-key reader of ARC and
//! oracleGeneral traces.

use std::fs::File;
use std::io::{self, BufRead, BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};

use crate::error::{Location, TraceError, TraceErrorKind};
use crate::oracle::{obj_id_of, ORACLE_RECORD_SIZE};

/// The first four bytes of every zstd frame.
pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Buffer size of the file and decompressor readers.
const BUF_SIZE: usize = 128 * 1024;

/// Longest excerpt of a bad line quoted in an error message, in bytes.
const MAX_FOUND: usize = 120;

const ARC_EXPECTED: &str = "4 whitespace-separated integers \"start_block n_blocks ignored request_number\"";
const ARC_RANGE_EXPECTED: &str = "start_block + n_blocks - 1 to fit in 64 bits";

/// A trace file opened by [`crate::open`]: buffered, and decompressed on the fly when
/// it starts with the zstd magic bytes.
pub struct FileInput(Input);

enum Input {
    Plain(BufReader<File>),
    Zstd(BufReader<zstd::Decoder<'static, BufReader<File>>>),
}

impl FileInput {
    /// Opens `path`, looking at its first bytes to decide whether it is
    /// zstd-compressed. A file shorter than four bytes is read as is.
    pub fn open(path: &Path) -> io::Result<FileInput> {
        let mut file = BufReader::with_capacity(BUF_SIZE, File::open(path)?);
        // For a regular file the first fill reads min(size, BUF_SIZE) bytes.
        let compressed = fill_buf_retry(&mut file)?.starts_with(&ZSTD_MAGIC);
        Ok(FileInput(if compressed {
            let dec = zstd::Decoder::with_buffer(file)?;
            Input::Zstd(BufReader::with_capacity(BUF_SIZE, dec))
        } else {
            Input::Plain(file)
        }))
    }

    /// Whether the file is being decompressed.
    pub fn is_compressed(&self) -> bool {
        matches!(self.0, Input::Zstd(_))
    }
}

impl Read for FileInput {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.0 {
            Input::Plain(r) => r.read(buf),
            Input::Zstd(r) => r.read(buf),
        }
    }
}

impl BufRead for FileInput {
    #[inline]
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match &mut self.0 {
            Input::Plain(r) => r.fill_buf(),
            Input::Zstd(r) => r.fill_buf(),
        }
    }

    #[inline]
    fn consume(&mut self, amt: usize) {
        match &mut self.0 {
            Input::Plain(r) => r.consume(amt),
            Input::Zstd(r) => r.consume(amt),
        }
    }
}

pub(crate) fn fill_buf_retry<R: BufRead>(r: &mut R) -> io::Result<&[u8]> {
    loop {
        match r.fill_buf() {
            // Re-borrow outside the match to please the borrow checker.
            Ok(_) => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    r.fill_buf()
}

/// The fast page-key reader of ARC and oracleGeneral traces (see
/// [`crate::TraceReader`]).
pub(crate) struct KeyReader<R> {
    input: R,
    path: PathBuf,
    format: KeyFormat,
    done: bool,
    /// Reused line buffer (ARC).
    line: Vec<u8>,
    /// Lines read so far (ARC).
    line_no: u64,
    /// Next key of the current ARC line's block range.
    next_key: u64,
    /// Keys left in the current ARC line's block range.
    remaining: u64,
    /// Complete records read so far (oracleGeneral).
    record_no: u64,
    /// Index formats: yield a set high bit (a record reader splits it off as the file mark)
    /// instead of refusing it.
    keep_high_bit: bool,
}

impl<R: BufRead> KeyReader<R> {
    /// Reads `format` from `input`, which must already be decompressed.
    /// `path` names the stream in error messages.
    pub(crate) fn new(input: R, format: KeyFormat, path: impl Into<PathBuf>) -> Self {
        KeyReader {
            input,
            path: path.into(),
            format,
            done: false,
            line: Vec::with_capacity(128),
            line_no: 0,
            next_key: 0,
            remaining: 0,
            record_no: 0,
            keep_high_bit: false,
        }
    }

    /// An index reader that yields keys with their high bit (see [`KeyFormat::high_bit`]).
    pub(crate) fn keeping_high_bit(mut self) -> Self {
        self.keep_high_bit = true;
        self
    }

    /// The format read.
    pub(crate) fn format(&self) -> KeyFormat {
        self.format
    }

    /// The name used in error messages.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// How far the reader got: lines read (ARC) or complete records read
    /// (oracleGeneral, with the byte offset of the next record).
    pub(crate) fn position(&self) -> Location {
        match self.format {
            KeyFormat::Arc => Location::Line(self.line_no),
            KeyFormat::Oracle | KeyFormat::Index32 | KeyFormat::Index64 => Location::Record {
                record: self.record_no,
                offset: self.record_no * self.format.record_size() as u64,
            },
        }
    }

    /// Gives the input back.
    pub(crate) fn into_inner(self) -> R {
        self.input
    }

    fn error(&self, kind: TraceErrorKind) -> TraceError {
        TraceError::new(self.path.clone(), kind)
    }

    fn next_record_location(&self) -> Location {
        Location::Record {
            record: self.record_no + 1,
            offset: self.record_no * self.format.record_size() as u64,
        }
    }

    /// Reads ARC lines until one with at least one block; returns its first key.
    fn next_arc(&mut self) -> Result<Option<u64>, TraceError> {
        loop {
            self.line.clear();
            let n = match self.input.read_until(b'\n', &mut self.line) {
                Ok(n) => n,
                Err(source) => {
                    let at = Location::Line(self.line_no + 1);
                    return Err(self.error(TraceErrorKind::Read { at, source }));
                }
            };
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            match parse_arc_line(&self.line) {
                Ok(None) | Ok(Some((_, 0))) => continue,
                Ok(Some((start, count))) => {
                    if start.checked_add(count - 1).is_none() {
                        return Err(self.parse_error(ARC_RANGE_EXPECTED));
                    }
                    self.next_key = start.wrapping_add(1);
                    self.remaining = count - 1;
                    return Ok(Some(start));
                }
                Err(()) => return Err(self.parse_error(ARC_EXPECTED)),
            }
        }
    }

    fn parse_error(&self, expected: &'static str) -> TraceError {
        let at = Location::Line(self.line_no);
        let found = excerpt(&self.line);
        self.error(TraceErrorKind::Parse { at, expected, found })
    }

    /// Reads one oracleGeneral record; returns its `obj_id`.
    fn next_oracle(&mut self) -> Result<Option<u64>, TraceError> {
        self.next_fixed::<ORACLE_RECORD_SIZE>(obj_id_of)
    }

    /// Reads one page index of `N` bytes (little-endian); a set high bit is refused: it marks a
    /// file page of a mixed trace, which a stream of page keys cannot express.
    fn next_index<const N: usize>(&mut self) -> Result<Option<u64>, TraceError> {
        let key = self.next_fixed::<N>(|b| {
            let mut v = [0u8; 8];
            v[..N].copy_from_slice(b);
            u64::from_le_bytes(v)
        })?;
        match key {
            Some(k) if !self.keep_high_bit && k >> (N * 8 - 1) != 0 => Err(self.error(TraceErrorKind::Parse {
                at: Location::Record {
                    record: self.record_no,
                    offset: (self.record_no - 1) * N as u64,
                },
                expected: "a page index with the high bit clear (a set high bit marks a file page, \
                           which only a mixed replay can express)",
                found: format!("{k:#x}"),
            })),
            k => Ok(k),
        }
    }

    /// Reads one fixed-size record of `N` bytes and returns `key` of it.
    fn next_fixed<const N: usize>(&mut self, key: impl Fn(&[u8; N]) -> u64) -> Result<Option<u64>, TraceError> {
        // Fast path: a whole record in the buffer.
        let first = match fill_buf_retry(&mut self.input) {
            Ok(buf) => buf.first_chunk::<N>().map(&key),
            Err(source) => {
                let at = self.next_record_location();
                return Err(self.error(TraceErrorKind::Read { at, source }));
            }
        };
        if let Some(k) = first {
            self.input.consume(N);
            self.record_no += 1;
            return Ok(Some(k));
        }
        // Slow path: the record straddles buffer refills, or the stream ends.
        let mut rec = [0u8; N];
        let mut got = 0;
        while got < N {
            let buf = match fill_buf_retry(&mut self.input) {
                Ok(buf) => buf,
                Err(source) => {
                    let at = self.next_record_location();
                    return Err(self.error(TraceErrorKind::Read { at, source }));
                }
            };
            if buf.is_empty() {
                break;
            }
            let take = buf.len().min(N - got);
            rec[got..got + take].copy_from_slice(&buf[..take]);
            self.input.consume(take);
            got += take;
        }
        match got {
            0 => Ok(None),
            n if n == N => {
                self.record_no += 1;
                Ok(Some(key(&rec)))
            }
            found => {
                let at = self.next_record_location();
                Err(self.error(TraceErrorKind::Truncated { at, expected: N, found }))
            }
        }
    }
}

impl<R: BufRead> Iterator for KeyReader<R> {
    type Item = Result<u64, TraceError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining > 0 {
            self.remaining -= 1;
            let key = self.next_key;
            self.next_key = key.wrapping_add(1);
            return Some(Ok(key));
        }
        if self.done {
            return None;
        }
        let r = match self.format {
            KeyFormat::Arc => self.next_arc(),
            KeyFormat::Oracle => self.next_oracle(),
            KeyFormat::Index32 => self.next_index::<4>(),
            KeyFormat::Index64 => self.next_index::<8>(),
        };
        match r {
            Ok(Some(key)) => Some(Ok(key)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<R: BufRead> std::iter::FusedIterator for KeyReader<R> {}

/// The formats [`KeyReader`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyFormat {
    Arc,
    Oracle,
    /// Flat little-endian `u32` page indices.
    Index32,
    /// Flat little-endian `u64` page indices.
    Index64,
}

impl KeyFormat {
    /// The high bit of an index record, which marks a file page in a mixed trace (0 for the
    /// other formats).
    pub(crate) fn high_bit(self) -> u64 {
        match self {
            KeyFormat::Index32 => 1 << 31,
            KeyFormat::Index64 => 1 << 63,
            KeyFormat::Arc | KeyFormat::Oracle => 0,
        }
    }

    /// Bytes per record of a binary format (0 for ARC text).
    fn record_size(self) -> usize {
        match self {
            KeyFormat::Arc => 0,
            KeyFormat::Oracle => ORACLE_RECORD_SIZE,
            KeyFormat::Index32 => 4,
            KeyFormat::Index64 => 8,
        }
    }
}

/// Parses `start_block n_blocks ignored request_number`. `Ok(None)` for a
/// blank line; `Err(())` for anything but exactly four integers (the first two
/// unsigned, the last two optionally signed), each fitting in 64 bits.
fn parse_arc_line(line: &[u8]) -> Result<Option<(u64, u64)>, ()> {
    let mut fields = [0u64; 4];
    let mut n = 0;
    let mut i = 0;
    let len = line.len();
    loop {
        while i < len && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == len {
            break;
        }
        if n == fields.len() {
            return Err(());
        }
        if n >= 2 && (line[i] == b'-' || line[i] == b'+') {
            i += 1;
        }
        let start = i;
        let mut v: u64 = 0;
        while i < len && line[i].is_ascii_digit() {
            let d = u64::from(line[i] - b'0');
            v = v.checked_mul(10).and_then(|v| v.checked_add(d)).ok_or(())?;
            i += 1;
        }
        if i == start || (i < len && !line[i].is_ascii_whitespace()) {
            return Err(());
        }
        fields[n] = v;
        n += 1;
    }
    match n {
        0 => Ok(None),
        4 => Ok(Some((fields[0], fields[1]))),
        _ => Err(()),
    }
}

/// The line without its end-of-line bytes, lossily decoded and shortened.
pub(crate) fn excerpt(line: &[u8]) -> String {
    let mut end = line.len();
    while end > 0 && (line[end - 1] == b'\n' || line[end - 1] == b'\r') {
        end -= 1;
    }
    let s = String::from_utf8_lossy(&line[..end.min(MAX_FOUND)]);
    if end > MAX_FOUND {
        format!("{s}…")
    } else {
        s.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        assert_eq!(parse_arc_line(b"1 2 0 0\n"), Ok(Some((1, 2))));
        assert_eq!(parse_arc_line(b"  7\t3 -1 +5\r\n"), Ok(Some((7, 3))));
        assert_eq!(parse_arc_line(b"\n"), Ok(None));
        assert_eq!(parse_arc_line(b"   \r\n"), Ok(None));
        assert_eq!(parse_arc_line(b""), Ok(None));
        assert_eq!(parse_arc_line(b"18446744073709551615 1 0 0"), Ok(Some((u64::MAX, 1))));
        assert_eq!(parse_arc_line(b"18446744073709551616 1 0 0"), Err(()));
        assert_eq!(parse_arc_line(b"12 x"), Err(()));
        assert_eq!(parse_arc_line(b"1 2 3"), Err(()));
        assert_eq!(parse_arc_line(b"1 2 3 4 5"), Err(()));
        assert_eq!(parse_arc_line(b"-1 2 3 4"), Err(()));
        assert_eq!(parse_arc_line(b"1 2 3 4x"), Err(()));
        assert_eq!(parse_arc_line(b"1 2 - 4"), Err(()));
        assert_eq!(parse_arc_line(b"1,2,3,4"), Err(()));
    }

    #[test]
    fn excerpt_shortens() {
        assert_eq!(excerpt(b"12 x\r\n"), "12 x");
        let long = vec![b'9'; 500];
        let e = excerpt(&long);
        assert!(e.ends_with('…') && e.len() < 200);
        // Cutting inside a multi-byte character does not panic.
        let mut s = vec![b'a'; MAX_FOUND - 1];
        s.extend_from_slice("é".as_bytes());
        let _ = excerpt(&s);
    }
}

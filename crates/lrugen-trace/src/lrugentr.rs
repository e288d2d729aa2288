//! lrugen's own compact binary trace (`LRUGENTR`), writer and reader.
//!
//! # Format, version 1
//!
//! A 32-byte header, little-endian, always uncompressed:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `LRUGENTR` |
//! | 8 | 2 | format version, 1 |
//! | 10 | 2 | flags: bit 0 `COUNT` (the record count is valid), bit 1 `ZSTD` (the body is one zstd stream); other bits 0 |
//! | 12 | 1 | key space: 0 pages, 1 bytes, 2 blocks ([`KeySpace`]) |
//! | 13 | 3 | reserved, 0 |
//! | 16 | 4 | block size in bytes (key space 2), else 0 |
//! | 20 | 4 | reserved, 0 |
//! | 24 | 8 | record count (with `COUNT`), else 0 |
//!
//! The body (zstd-compressed as a whole when `ZSTD` is set) is a sequence of
//! records, each relative to the previous one (initially key 0, len 4096,
//! file 0, time 0), then an end marker:
//!
//! * a tag byte: bits 0–2 the op ([`TraceOp::code`]), bit 3 `LEN`, bit 4
//!   `FILE`, bit 5 `TIME`, bits 6–7 zero;
//! * the key delta (`key − previous key`, wrapping), zigzag LEB128 varint;
//! * with `LEN`: the length, LEB128 (else unchanged);
//! * with `FILE`: the file index, LEB128 (else unchanged);
//! * with `TIME`: the time delta (wrapping), zigzag LEB128 (else unchanged);
//! * the end marker: the byte `0xFF` and the record count, LEB128; then the
//!   end of the file.
//!
//! A page trace of reads costs 2–4 bytes a record before compression.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, ErrorKind, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Location, TraceError, TraceErrorKind};
use crate::record::{KeySpace, TraceOp, TraceRecord, PAGE_SIZE};

/// The magic bytes at the start of an lrugen trace.
pub const LRUGENTR_MAGIC: [u8; 8] = *b"LRUGENTR";
/// The format version written by this crate.
pub const LRUGENTR_VERSION: u16 = 1;
/// Size of the header.
pub const LRUGENTR_HEADER_SIZE: usize = 32;

const FLAG_COUNT: u16 = 1;
const FLAG_ZSTD: u16 = 2;
const TAG_LEN: u8 = 1 << 3;
const TAG_FILE: u8 = 1 << 4;
const TAG_TIME: u8 = 1 << 5;
const TAG_END: u8 = 0xFF;

const INITIAL: TraceRecord = TraceRecord {
    op: TraceOp::Read,
    key: 0,
    len: PAGE_SIZE as u32,
    file: 0,
    time: 0,
};

/// How to write an lrugen trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriterOptions {
    /// What the records' keys count (stored in the header, so that a reader
    /// expands records into pages as the writer meant).
    pub key_space: KeySpace,
    /// Compress the body with zstd at this level (1..=22; 3 is a good
    /// default), or not at all.
    pub zstd_level: Option<i32>,
    /// The number of records, when known in advance: stored in the header and
    /// checked by [`LrugenWriter::finish`].
    pub record_count: Option<u64>,
}

/// The header of an lrugen trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LrugenHeader {
    /// Format version.
    pub version: u16,
    /// What the keys count.
    pub key_space: KeySpace,
    /// Whether the body is zstd-compressed.
    pub compressed: bool,
    /// The record count, if the header has it.
    pub record_count: Option<u64>,
}

impl LrugenHeader {
    fn encode(&self) -> [u8; LRUGENTR_HEADER_SIZE] {
        let mut h = [0u8; LRUGENTR_HEADER_SIZE];
        h[0..8].copy_from_slice(&LRUGENTR_MAGIC);
        h[8..10].copy_from_slice(&self.version.to_le_bytes());
        let mut flags = 0;
        if self.record_count.is_some() {
            flags |= FLAG_COUNT;
        }
        if self.compressed {
            flags |= FLAG_ZSTD;
        }
        h[10..12].copy_from_slice(&flags.to_le_bytes());
        let (space, block) = match self.key_space {
            KeySpace::Pages => (0, 0),
            KeySpace::Bytes => (1, 0),
            KeySpace::Blocks(size) => (2, size),
        };
        h[12] = space;
        h[16..20].copy_from_slice(&block.to_le_bytes());
        h[24..32].copy_from_slice(&self.record_count.unwrap_or(0).to_le_bytes());
        h
    }
}

enum Sink<W: Write> {
    Plain(BufWriter<W>),
    Zstd(zstd::Encoder<'static, BufWriter<W>>),
}

/// Writes an lrugen trace, streaming (a zstd encoder when compressing).
pub struct LrugenWriter<W: Write> {
    sink: Sink<W>,
    prev: TraceRecord,
    written: u64,
    declared: Option<u64>,
}

impl<W: Write> LrugenWriter<W> {
    /// Writes the header to `out` and prepares for records.
    pub fn new(out: W, options: WriterOptions) -> io::Result<Self> {
        if let KeySpace::Blocks(0) = options.key_space {
            return Err(io::Error::new(ErrorKind::InvalidInput, "block size 0"));
        }
        let header = LrugenHeader {
            version: LRUGENTR_VERSION,
            key_space: options.key_space,
            compressed: options.zstd_level.is_some(),
            record_count: options.record_count,
        };
        let mut out = BufWriter::with_capacity(128 * 1024, out);
        out.write_all(&header.encode())?;
        let sink = match options.zstd_level {
            Some(level) => Sink::Zstd(zstd::Encoder::new(out, level)?),
            None => Sink::Plain(out),
        };
        Ok(LrugenWriter {
            sink,
            prev: INITIAL,
            written: 0,
            declared: options.record_count,
        })
    }

    /// Records written so far.
    pub fn records_written(&self) -> u64 {
        self.written
    }

    fn out(&mut self) -> &mut dyn Write {
        match &mut self.sink {
            Sink::Plain(w) => w,
            Sink::Zstd(w) => w,
        }
    }

    /// Appends one record.
    ///
    /// # Errors
    /// Write errors, and `InvalidInput` past the declared record count.
    pub fn write(&mut self, r: &TraceRecord) -> io::Result<()> {
        if self.declared.is_some_and(|n| self.written >= n) {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                "more records than the record count given in WriterOptions",
            ));
        }
        let mut buf = [0u8; 1 + 10 + 5 + 5 + 10];
        let mut tag = r.op.code();
        if r.len != self.prev.len {
            tag |= TAG_LEN;
        }
        if r.file != self.prev.file {
            tag |= TAG_FILE;
        }
        if r.time != self.prev.time {
            tag |= TAG_TIME;
        }
        buf[0] = tag;
        let mut n = 1;
        n += put_varint(&mut buf[n..], zigzag(r.key.wrapping_sub(self.prev.key)));
        if tag & TAG_LEN != 0 {
            n += put_varint(&mut buf[n..], u64::from(r.len));
        }
        if tag & TAG_FILE != 0 {
            n += put_varint(&mut buf[n..], u64::from(r.file));
        }
        if tag & TAG_TIME != 0 {
            n += put_varint(&mut buf[n..], zigzag(r.time.wrapping_sub(self.prev.time)));
        }
        self.out().write_all(&buf[..n])?;
        self.prev = *r;
        self.written += 1;
        Ok(())
    }

    /// Writes the end marker, finishes compression, flushes, and gives the
    /// output back.
    ///
    /// # Errors
    /// Write errors, and `InvalidInput` if fewer records were written than the
    /// declared count.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(n) = self.declared {
            if n != self.written {
                return Err(io::Error::new(
                    ErrorKind::InvalidInput,
                    format!("{} records written, {n} declared in WriterOptions", self.written),
                ));
            }
        }
        let mut buf = [0u8; 11];
        buf[0] = TAG_END;
        let n = 1 + put_varint(&mut buf[1..], self.written);
        self.out().write_all(&buf[..n])?;
        let out = match self.sink {
            Sink::Plain(w) => w,
            Sink::Zstd(z) => z.finish()?,
        };
        out.into_inner().map_err(io::IntoInnerError::into_error)
    }
}

impl LrugenWriter<File> {
    /// Creates (or truncates) `path` and writes the header.
    pub fn create(path: &Path, options: WriterOptions) -> io::Result<Self> {
        LrugenWriter::new(File::create(path)?, options)
    }

    /// Like [`LrugenWriter::finish`], and when no record count was declared,
    /// writes the final count into the header (which must be at the start of
    /// the file, as with [`LrugenWriter::create`]).
    pub fn finish_file(self) -> io::Result<File> {
        let declared = self.declared.is_some();
        let (count, compressed) = (self.written, matches!(self.sink, Sink::Zstd(_)));
        let mut file = self.finish()?;
        if !declared {
            let h = LrugenHeader {
                version: LRUGENTR_VERSION,
                key_space: KeySpace::Pages, // not rewritten
                compressed,
                record_count: Some(count),
            }
            .encode();
            file.seek(SeekFrom::Start(10))?;
            file.write_all(&h[10..12])?;
            file.seek(SeekFrom::Start(24))?;
            file.write_all(&h[24..32])?;
            file.seek(SeekFrom::End(0))?;
            file.flush()?;
        }
        Ok(file)
    }
}

/// Writes `records` to a new lrugen trace at `path`; returns the count.
pub fn write_trace<I>(path: &Path, options: WriterOptions, records: I) -> io::Result<u64>
where
    I: IntoIterator<Item = TraceRecord>,
{
    let mut w = LrugenWriter::create(path, options)?;
    for r in records {
        w.write(&r)?;
    }
    let n = w.records_written();
    w.finish_file()?;
    Ok(n)
}

#[inline]
fn zigzag(v: u64) -> u64 {
    let s = v as i64;
    ((s << 1) ^ (s >> 63)) as u64
}

#[inline]
fn unzigzag(v: u64) -> u64 {
    ((v >> 1) as i64 ^ -((v & 1) as i64)) as u64
}

#[inline]
fn put_varint(buf: &mut [u8], mut v: u64) -> usize {
    let mut i = 0;
    while v >= 0x80 {
        buf[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    buf[i] = v as u8;
    i + 1
}

enum Body<R: BufRead> {
    Raw(R),
    Zstd(BufReader<zstd::Decoder<'static, R>>),
    Gone,
}

/// Streams the records of an lrugen trace.
pub struct LrugenReader<R: BufRead> {
    body: Body<R>,
    path: PathBuf,
    header: Option<LrugenHeader>,
    /// Bytes of the (decompressed) stream consumed, header included.
    offset: u64,
    record_no: u64,
    prev: TraceRecord,
    done: bool,
}

const MAGIC_EXPECTED: &str = "the magic \"LRUGENTR\"";
const VERSION_EXPECTED: &str = "format version 1";
const FLAGS_EXPECTED: &str = "flags with only bits 0 (count) and 1 (zstd)";
const SPACE_EXPECTED: &str = "a key space 0 (pages), 1 (bytes) or 2 (blocks, with a non-zero block size)";
const RESERVED_EXPECTED: &str = "reserved header bytes to be 0";
const COUNT_EXPECTED: &str = "a record count of 0 when the count flag is clear";
const TAG_EXPECTED: &str = "a record tag (op 0-7, bits 6-7 clear) or the end marker 0xFF";
const KEY_EXPECTED: &str = "a varint key delta";
const LEN_EXPECTED: &str = "a varint length of at most 32 bits";
const FILE_EXPECTED: &str = "a varint file index of at most 32 bits";
const TIME_EXPECTED: &str = "a varint time delta";
const END_COUNT_EXPECTED: &str = "a varint record count after the end marker";
const END_MATCH_EXPECTED: &str = "the end marker's record count to equal the records read";
const HEADER_MATCH_EXPECTED: &str = "as many records as the header's record count";
const EOF_EXPECTED: &str = "the end of the file after the end marker";

impl<R: BufRead> LrugenReader<R> {
    /// Reads an lrugen trace from `input` (not decompressed: a zstd body is
    /// decompressed here; a file compressed as a whole with the `zstd` tool is
    /// decompressed by [`crate::open`] before it gets here). `path` names it
    /// in errors.
    pub fn new(input: R, path: impl Into<PathBuf>) -> Self {
        LrugenReader {
            body: Body::Raw(input),
            path: path.into(),
            header: None,
            offset: 0,
            record_no: 0,
            prev: INITIAL,
            done: false,
        }
    }

    /// The header, once read (after the first call to `next`).
    pub fn header(&self) -> Option<LrugenHeader> {
        self.header
    }

    /// Records read so far, and the byte offset of the next one.
    pub fn position(&self) -> Location {
        Location::Record {
            record: self.record_no,
            offset: self.offset,
        }
    }

    /// The name used in error messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Gives the input back (dropping a zstd decoder); `None` only when the
    /// zstd decoder could not be created (which consumed the input).
    pub fn into_input(self) -> Option<R> {
        match self.body {
            Body::Raw(r) => Some(r),
            Body::Zstd(d) => Some(d.into_inner().finish()),
            Body::Gone => None,
        }
    }

    fn error(&self, kind: TraceErrorKind) -> TraceError {
        TraceError::new(self.path.clone(), kind)
    }

    fn parse_error(&self, at: Location, expected: &'static str, found: String) -> TraceError {
        self.error(TraceErrorKind::Parse { at, expected, found })
    }

    /// The next byte of the stream, `None` at its end.
    #[inline]
    fn byte(&mut self, at: Location) -> Result<Option<u8>, TraceError> {
        let input: &mut dyn BufRead = match &mut self.body {
            Body::Raw(r) => r,
            Body::Zstd(r) => r,
            Body::Gone => return Ok(None),
        };
        loop {
            match input.fill_buf() {
                Ok([]) => return Ok(None),
                Ok(buf) => {
                    let b = buf[0];
                    input.consume(1);
                    self.offset += 1;
                    return Ok(Some(b));
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(TraceError::new(self.path.clone(), TraceErrorKind::Read { at, source }));
                }
            }
        }
    }

    /// A LEB128 varint of at most `bits` bits.
    fn varint(&mut self, at: Location, bits: u32, expected: &'static str) -> Result<u64, TraceError> {
        let field = self.offset;
        let mut v: u64 = 0;
        let mut shift = 0;
        loop {
            let Some(b) = self.byte(at)? else {
                return Err(self.parse_error(
                    at,
                    expected,
                    format!("the end of the file at byte offset {}", self.offset),
                ));
            };
            let low = u64::from(b & 0x7f);
            if shift >= 64 || (shift > 0 && low >> (64 - shift) != 0) {
                return Err(self.parse_error(
                    at,
                    expected,
                    format!("a varint overflowing 64 bits at byte offset {field}"),
                ));
            }
            v |= low << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        if bits < 64 && v >> bits != 0 {
            return Err(self.parse_error(at, expected, format!("{v} at byte offset {field}")));
        }
        Ok(v)
    }

    fn read_header(&mut self) -> Result<Option<LrugenHeader>, TraceError> {
        let mut h = [0u8; LRUGENTR_HEADER_SIZE];
        let mut n = 0;
        while n < h.len() {
            match self.byte(Location::Byte(n as u64))? {
                Some(b) => {
                    h[n] = b;
                    n += 1;
                }
                None => break,
            }
        }
        if n == 0 {
            return Ok(None);
        }
        let at = |o: u64| Location::Byte(o);
        if n < 8 || h[0..8] != LRUGENTR_MAGIC {
            let found = crate::reader::excerpt(&h[..n.min(8)]);
            return Err(self.parse_error(at(0), MAGIC_EXPECTED, found));
        }
        if n < LRUGENTR_HEADER_SIZE {
            let found = format!("the end of the file at byte offset {n}");
            return Err(self.parse_error(at(n as u64), "a 32-byte header", found));
        }
        let u16_at = |o: usize| u16::from_le_bytes([h[o], h[o + 1]]);
        let u32_at = |o: usize| u32::from_le_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
        let version = u16_at(8);
        if version != LRUGENTR_VERSION {
            return Err(self.parse_error(at(8), VERSION_EXPECTED, version.to_string()));
        }
        let flags = u16_at(10);
        if flags & !(FLAG_COUNT | FLAG_ZSTD) != 0 {
            return Err(self.parse_error(at(10), FLAGS_EXPECTED, format!("{flags:#06x}")));
        }
        let block = u32_at(16);
        let key_space = match (h[12], block) {
            (0, 0) => KeySpace::Pages,
            (1, 0) => KeySpace::Bytes,
            (2, b) if b > 0 => KeySpace::Blocks(b),
            (s, b) => return Err(self.parse_error(at(12), SPACE_EXPECTED, format!("key space {s}, block size {b}"))),
        };
        if h[13..16] != [0; 3] || u32_at(20) != 0 {
            let o: usize = if h[13..16] != [0; 3] { 13 } else { 20 };
            let found = format!("{:02x?}", &h[o..o + 3]);
            return Err(self.parse_error(at(o as u64), RESERVED_EXPECTED, found));
        }
        let count = u64::from_le_bytes(h[24..32].try_into().unwrap_or([0; 8]));
        if flags & FLAG_COUNT == 0 && count != 0 {
            return Err(self.parse_error(at(24), COUNT_EXPECTED, count.to_string()));
        }
        let header = LrugenHeader {
            version,
            key_space,
            compressed: flags & FLAG_ZSTD != 0,
            record_count: (flags & FLAG_COUNT != 0).then_some(count),
        };
        if header.compressed {
            let Body::Raw(raw) = std::mem::replace(&mut self.body, Body::Gone) else {
                return Ok(Some(header));
            };
            match zstd::Decoder::with_buffer(raw) {
                Ok(d) => self.body = Body::Zstd(BufReader::with_capacity(128 * 1024, d)),
                Err(source) => return Err(self.error(TraceErrorKind::Read { at: at(32), source })),
            }
        }
        Ok(Some(header))
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        let header = match self.header {
            Some(h) => h,
            None => match self.read_header()? {
                Some(h) => {
                    self.header = Some(h);
                    h
                }
                None => {
                    let found = "an empty file".to_string();
                    return Err(self.parse_error(Location::Byte(0), MAGIC_EXPECTED, found));
                }
            },
        };
        let at = Location::Record {
            record: self.record_no + 1,
            offset: self.offset,
        };
        let Some(tag) = self.byte(at)? else {
            let found = format!("the end of the file at byte offset {}", self.offset);
            return Err(self.parse_error(at, TAG_EXPECTED, found));
        };
        if tag == TAG_END {
            let count = self.varint(at, 64, END_COUNT_EXPECTED)?;
            if count != self.record_no {
                let found = format!("count {count}, {} records read", self.record_no);
                return Err(self.parse_error(at, END_MATCH_EXPECTED, found));
            }
            if let Some(n) = header.record_count {
                if n != self.record_no {
                    let found = format!("{} records, header says {n}", self.record_no);
                    return Err(self.parse_error(at, HEADER_MATCH_EXPECTED, found));
                }
            }
            let end = self.offset;
            if self.byte(Location::Byte(end))?.is_some() {
                let found = format!("more bytes at byte offset {end}");
                return Err(self.parse_error(Location::Byte(end), EOF_EXPECTED, found));
            }
            return Ok(None);
        }
        if tag & 0xC0 != 0 {
            let found = format!("{tag:#04x}");
            return Err(self.parse_error(at, TAG_EXPECTED, found));
        }
        if header.record_count.is_some_and(|n| self.record_no >= n) {
            let found = format!("record {} after {} records", self.record_no + 1, self.record_no);
            return Err(self.parse_error(at, HEADER_MATCH_EXPECTED, found));
        }
        let op = TraceOp::from_code(tag & 7).unwrap_or_default();
        let key = self.prev.key.wrapping_add(unzigzag(self.varint(at, 64, KEY_EXPECTED)?));
        let len = if tag & TAG_LEN != 0 {
            self.varint(at, 32, LEN_EXPECTED)? as u32
        } else {
            self.prev.len
        };
        let file = if tag & TAG_FILE != 0 {
            self.varint(at, 32, FILE_EXPECTED)? as u32
        } else {
            self.prev.file
        };
        let time = if tag & TAG_TIME != 0 {
            self.prev
                .time
                .wrapping_add(unzigzag(self.varint(at, 64, TIME_EXPECTED)?))
        } else {
            self.prev.time
        };
        let r = TraceRecord {
            op,
            key,
            len,
            file,
            time,
        };
        self.prev = r;
        self.record_no += 1;
        Ok(Some(r))
    }
}

crate::record::record_iterator!(LrugenReader);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        for v in [0, 1, 127, 128, 300, u64::MAX, u64::MAX - 1, 1 << 63] {
            let mut b = [0u8; 10];
            let n = put_varint(&mut b, v);
            let mut r = LrugenReader::new(&b[..n], "v");
            assert_eq!(r.varint(Location::Byte(0), 64, "x").unwrap(), v);
        }
        for d in [0u64, 1, u64::MAX, 5u64.wrapping_sub(9), 1 << 63] {
            assert_eq!(unzigzag(zigzag(d)), d);
        }
        assert_eq!(zigzag(u64::MAX), 1); // -1
                                         // Eleven continuation bytes overflow.
        let b = [0xffu8; 11];
        let mut r = LrugenReader::new(&b[..], "v");
        assert!(r.varint(Location::Byte(0), 64, "x").is_err());
        // The tenth byte may only hold one bit.
        let mut b = [0xffu8; 10];
        b[9] = 0x02;
        let mut r = LrugenReader::new(&b[..], "v");
        assert!(r.varint(Location::Byte(0), 64, "x").is_err());
    }
}

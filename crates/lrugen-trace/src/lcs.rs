//! libCacheSim's `lcs` binary traces (a header, then records v1..v8), and
//! `oracleGeneral` read as headerless lcs v1 records.
//!
//! Header: 8192 bytes (`u64 start_magic; u64 version; 8000-byte stat whose
//! second field is n_req; u64 unused[21]; u64 end_magic`), or one of two
//! earlier 1024-byte forms (the version at offset 8, or, in the oldest one
//! with a struct-format string, at offset 1008 after the record size at
//! 1004). The end magic is looked for at offset 8184, then 1016; anything else
//! is refused. All little-endian and packed.
//!
//! Records: v1 `u32 clock_time; u64 obj_id; u32 obj_size; i64 next` (24
//! bytes, = oracleGeneral); v2 adds `u32 op:8 (low bits), tenant:24` before
//! `next` (28); v3 `u32 clock_time; u64 obj_id; i64 obj_size; u32 op/tenant;
//! u32 ttl; i64 next` (36); v4..v8 append 1, 2, 4, 8, 16 `u32` features to v3
//! (40, 44, 52, 68, 100 bytes).

use std::io::{BufRead, ErrorKind};
use std::path::{Path, PathBuf};

use crate::error::{Location, TraceError, TraceErrorKind};
use crate::record::{TraceOp, TraceRecord, PAGE_SIZE};

/// The start and end magic of an lcs header (`0x123456789abcdef0`, stored
/// little-endian).
pub const LCS_MAGIC: u64 = 0x1234_5678_9abc_def0;

/// Size of the current lcs header.
pub const LCS_HEADER_SIZE: usize = 8192;

/// Size of the earlier lcs headers.
pub const LCS_OLD_HEADER_SIZE: usize = 1024;

/// Record size of lcs versions 1..=8 (index = version).
pub const LCS_RECORD_SIZES: [usize; 9] = [0, 24, 28, 36, 40, 44, 52, 68, 100];

/// One lcs record with every field but the features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LcsRecord {
    /// Request time (libCacheSim uses seconds).
    pub clock_time: u32,
    /// Object id (hash of a key, or a logical block address).
    pub obj_id: u64,
    /// Object size in bytes (`u32` in v1/v2).
    pub obj_size: i64,
    /// libCacheSim's `req_op_e` (0 = nop; v1 has none).
    pub op: u8,
    /// Tenant (24 bits; v2+).
    pub tenant: u32,
    /// Time to live (v3+).
    pub ttl: u32,
    /// 1-based index of the next request to the object, or −1.
    pub next_access_vtime: i64,
}

impl LcsRecord {
    /// The record as lrugen sees it: the object is one page (`key` obj_id,
    /// `len` 4096), `time` the clock time, `op` from libCacheSim's op code
    /// (nop/get/gets/read → `Read`; set/add/cas/replace/append/prepend/incr/
    /// decr/write/update → `Write`; delete → `Trim`), or `None` for an op code
    /// libCacheSim does not define (15..=255, including its `OP_INVALID`).
    pub fn to_trace_record(&self) -> Option<TraceRecord> {
        let op = match self.op {
            0 | 1 | 2 | 12 => TraceOp::Read,
            3..=8 | 10 | 11 | 13 | 14 => TraceOp::Write,
            9 => TraceOp::Trim,
            _ => return None,
        };
        Some(TraceRecord {
            op,
            key: self.obj_id,
            len: PAGE_SIZE as u32,
            file: 0,
            time: u64::from(self.clock_time),
        })
    }

    /// Decodes a record of lcs `version` (1..=8) from `b`, which holds at
    /// least [`LCS_RECORD_SIZES`]`[version]` bytes.
    pub fn decode(version: u8, b: &[u8]) -> LcsRecord {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| {
            u64::from_le_bytes([
                b[o],
                b[o + 1],
                b[o + 2],
                b[o + 3],
                b[o + 4],
                b[o + 5],
                b[o + 6],
                b[o + 7],
            ])
        };
        let mut r = LcsRecord {
            clock_time: u32_at(0),
            obj_id: u64_at(4),
            ..Default::default()
        };
        match version {
            1 => {
                r.obj_size = i64::from(u32_at(12));
                r.next_access_vtime = u64_at(16) as i64;
            }
            2 => {
                r.obj_size = i64::from(u32_at(12));
                let w = u32_at(16);
                r.op = w as u8;
                r.tenant = w >> 8;
                r.next_access_vtime = u64_at(20) as i64;
            }
            _ => {
                r.obj_size = u64_at(12) as i64;
                let w = u32_at(20);
                r.op = w as u8;
                r.tenant = w >> 8;
                r.ttl = u32_at(24);
                r.next_access_vtime = u64_at(28) as i64;
            }
        }
        r
    }
}

const START_EXPECTED: &str = "the lcs start magic 0x123456789abcdef0 (little-endian)";
const END_EXPECTED: &str =
    "the lcs end magic 0x123456789abcdef0 at byte offset 8184 (8192-byte header) or 1016 (1024-byte header)";
const VERSION_EXPECTED: &str = "an lcs record version from 1 to 8";
const OP_EXPECTED: &str = "an lcs op code from 0 to 14 (libCacheSim's req_op_e)";

/// The header of an lcs trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LcsHeader {
    /// Header size in bytes (8192 or 1024; 0 for oracleGeneral).
    pub size: usize,
    /// Record version, 1..=8.
    pub version: u8,
    /// The number of requests recorded in an 8192-byte header's stat.
    pub n_req: Option<u64>,
}

/// Streams lcs (or oracleGeneral) records.
pub struct LcsReader<R> {
    input: R,
    path: PathBuf,
    header: Option<LcsHeader>,
    /// Header bytes read past the header (the records after a 1024-byte header).
    pending: Vec<u8>,
    pending_pos: usize,
    record_no: u64,
    done: bool,
}

impl<R: BufRead> LcsReader<R> {
    /// Reads an lcs trace (header first) from `input` (already decompressed);
    /// `path` names it in errors.
    pub fn new(input: R, path: impl Into<PathBuf>) -> Self {
        LcsReader {
            input,
            path: path.into(),
            header: None,
            pending: Vec::new(),
            pending_pos: 0,
            record_no: 0,
            done: false,
        }
    }

    /// Reads oracleGeneral records (lcs v1 without a header).
    pub fn oracle_general(input: R, path: impl Into<PathBuf>) -> Self {
        let mut r = LcsReader::new(input, path);
        r.header = Some(LcsHeader {
            size: 0,
            version: 1,
            n_req: None,
        });
        r
    }

    /// The header, once read (after the first call to `next`).
    pub fn header(&self) -> Option<LcsHeader> {
        self.header
    }

    /// Complete records read so far, and the byte offset of the next one.
    pub fn position(&self) -> Location {
        self.location(self.record_no)
    }

    /// Gives the input back.
    pub fn into_inner(self) -> R {
        self.input
    }

    fn location(&self, records_before: u64) -> Location {
        let (size, rs) = match self.header {
            Some(h) => (h.size as u64, LCS_RECORD_SIZES[usize::from(h.version)] as u64),
            None => (0, 0),
        };
        Location::Record {
            record: records_before + 1,
            offset: size + records_before * rs,
        }
    }

    fn error(&self, kind: TraceErrorKind) -> TraceError {
        TraceError::new(self.path.clone(), kind)
    }

    fn parse_error(&self, at: Location, expected: &'static str, found: String) -> TraceError {
        self.error(TraceErrorKind::Parse { at, expected, found })
    }

    /// Fills `out` from the pending bytes, then the input; returns how many
    /// bytes were read (fewer only at the end of the input).
    fn read_full(&mut self, out: &mut [u8], at: Location) -> Result<usize, TraceError> {
        let mut got = 0;
        if self.pending_pos < self.pending.len() {
            let n = (self.pending.len() - self.pending_pos).min(out.len());
            out[..n].copy_from_slice(&self.pending[self.pending_pos..self.pending_pos + n]);
            self.pending_pos += n;
            got = n;
            if self.pending_pos == self.pending.len() {
                self.pending = Vec::new();
                self.pending_pos = 0;
            }
        }
        while got < out.len() {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(source) => return Err(self.error(TraceErrorKind::Read { at, source })),
            };
            if buf.is_empty() {
                break;
            }
            let n = buf.len().min(out.len() - got);
            out[got..got + n].copy_from_slice(&buf[..n]);
            self.input.consume(n);
            got += n;
        }
        Ok(got)
    }

    fn read_header(&mut self) -> Result<Option<LcsHeader>, TraceError> {
        let mut h = vec![0u8; LCS_HEADER_SIZE];
        let n = self.read_full(&mut h, Location::Byte(0))?;
        if n == 0 {
            return Ok(None);
        }
        let u64_at = |o: usize| -> Option<u64> { Some(u64::from_le_bytes(h.get(o..o + 8)?.try_into().ok()?)) };
        let hex_at = |o: usize| match u64_at(o) {
            Some(v) if o + 8 <= n => format!("0x{v:016x}"),
            _ => format!("end of file after {n} bytes"),
        };
        if n < 8 || u64_at(0) != Some(LCS_MAGIC) {
            return Err(self.parse_error(Location::Byte(0), START_EXPECTED, hex_at(0)));
        }
        let (size, version_at) = if n >= LCS_HEADER_SIZE && u64_at(8184) == Some(LCS_MAGIC) {
            (LCS_HEADER_SIZE, 8)
        } else if n >= LCS_OLD_HEADER_SIZE && u64_at(1016) == Some(LCS_MAGIC) {
            // Two 1024-byte forms: version at 8, or (format-string form) at 1008.
            let v8 = u64_at(8).unwrap_or(0);
            if (1..=8).contains(&v8) {
                (LCS_OLD_HEADER_SIZE, 8)
            } else {
                (LCS_OLD_HEADER_SIZE, 1008)
            }
        } else {
            // Where the end magic was missed: 8184 when the data reaches it, else 1016 (the only
            // place looked at), else where the data ends.
            let (at, found) = if n >= LCS_HEADER_SIZE {
                (8184, format!("{} at 8184 and {} at 1016", hex_at(8184), hex_at(1016)))
            } else if n >= LCS_OLD_HEADER_SIZE {
                (
                    1016,
                    format!("{} at 1016 and end of file after {n} bytes", hex_at(1016)),
                )
            } else {
                (n, format!("end of file after {n} bytes"))
            };
            return Err(self.parse_error(Location::Byte(at as u64), END_EXPECTED, found));
        };
        let version = u64_at(version_at).unwrap_or(0);
        if !(1..=8).contains(&version) {
            return Err(self.parse_error(Location::Byte(version_at as u64), VERSION_EXPECTED, version.to_string()));
        }
        let n_req = (size == LCS_HEADER_SIZE).then(|| u64_at(24).unwrap_or(0));
        h.truncate(n);
        h.drain(..size);
        self.pending = h;
        self.pending_pos = 0;
        Ok(Some(LcsHeader {
            size,
            version: version as u8,
            n_req,
        }))
    }

    /// The next record with all its fields.
    pub fn next_raw(&mut self) -> Result<Option<LcsRecord>, TraceError> {
        let header = match self.header {
            Some(h) => h,
            None => match self.read_header()? {
                Some(h) => {
                    self.header = Some(h);
                    h
                }
                None => return Ok(None),
            },
        };
        let size = LCS_RECORD_SIZES[usize::from(header.version)];
        let at = self.location(self.record_no);
        let mut buf = [0u8; 100];
        let got = self.read_full(&mut buf[..size], at)?;
        match got {
            0 => Ok(None),
            n if n == size => {
                self.record_no += 1;
                Ok(Some(LcsRecord::decode(header.version, &buf[..size])))
            }
            found => Err(self.error(TraceErrorKind::Truncated {
                at,
                expected: size,
                found,
            })),
        }
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        let Some(raw) = self.next_raw()? else {
            return Ok(None);
        };
        match raw.to_trace_record() {
            Some(r) => Ok(Some(r)),
            None => {
                let at = self.location(self.record_no - 1);
                Err(self.parse_error(at, OP_EXPECTED, raw.op.to_string()))
            }
        }
    }

    /// The name used in error messages.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

crate::record::record_iterator!(LcsReader);

/// Encodes an lcs header of `size` (8192 or 1024) bytes for `version` with
/// `n_req` in the stat (8192-byte form), for tests and conversions.
pub fn lcs_header(size: usize, version: u8, n_req: u64) -> Vec<u8> {
    let mut h = vec![0u8; size];
    h[0..8].copy_from_slice(&LCS_MAGIC.to_le_bytes());
    h[8..16].copy_from_slice(&u64::from(version).to_le_bytes());
    if size == LCS_HEADER_SIZE {
        h[16..24].copy_from_slice(&1u64.to_le_bytes()); // stat version
        h[24..32].copy_from_slice(&n_req.to_le_bytes());
    }
    h[size - 8..].copy_from_slice(&LCS_MAGIC.to_le_bytes());
    h
}

impl LcsRecord {
    /// Encodes the record in the layout of lcs `version` (1..=8; features zero).
    pub fn encode(&self, version: u8) -> Vec<u8> {
        let mut b = Vec::with_capacity(LCS_RECORD_SIZES[usize::from(version.clamp(1, 8))]);
        b.extend_from_slice(&self.clock_time.to_le_bytes());
        b.extend_from_slice(&self.obj_id.to_le_bytes());
        let op_tenant = u32::from(self.op) | (self.tenant << 8);
        match version {
            0 | 1 => b.extend_from_slice(&(self.obj_size as u32).to_le_bytes()),
            2 => {
                b.extend_from_slice(&(self.obj_size as u32).to_le_bytes());
                b.extend_from_slice(&op_tenant.to_le_bytes());
            }
            _ => {
                b.extend_from_slice(&self.obj_size.to_le_bytes());
                b.extend_from_slice(&op_tenant.to_le_bytes());
                b.extend_from_slice(&self.ttl.to_le_bytes());
            }
        }
        b.extend_from_slice(&self.next_access_vtime.to_le_bytes());
        b.resize(LCS_RECORD_SIZES[usize::from(version.clamp(1, 8))], 0);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode() {
        for v in 1..=8u8 {
            let r = LcsRecord {
                clock_time: 7,
                obj_id: 1 << 40,
                obj_size: 4096,
                op: if v >= 2 { 13 } else { 0 },
                tenant: if v >= 2 { 0xab_cdef } else { 0 },
                ttl: if v >= 3 { 99 } else { 0 },
                next_access_vtime: -1,
            };
            let b = r.encode(v);
            assert_eq!(b.len(), LCS_RECORD_SIZES[usize::from(v)]);
            assert_eq!(LcsRecord::decode(v, &b), r, "v{v}");
        }
    }
}

//! Streaming readers for page-reference and operation traces, lrugen's own
//! binary trace format, and dense id compaction.
//!
//! Formats read ([`TraceFormat`]), each plain or zstd-compressed as a whole
//! (compression is detected from the zstd magic bytes `28 B5 2F FD`, not from
//! the name):
//!
//! * [`TraceFormat::Arc`]: the text traces of the ARC paper (Megiddo and
//!   Modha, FAST 2003). One request per line, `start_block n_blocks ignored
//!   request_number`; each line expands into the `n_blocks` consecutive page
//!   keys `start_block, start_block + 1, …`.
//! * [`TraceFormat::OracleGeneral`]: libCacheSim's binary `oracleGeneral`
//!   format, packed little-endian records of 24 bytes ([`OracleRecord`]); each
//!   record is one reference to the page `obj_id`.
//! * [`TraceFormat::Lcs`]: libCacheSim's `lcs` (header, records v1..v8,
//!   [`LcsReader`]).
//! * [`TraceFormat::Csv`]: delimited text with libCacheSim's column
//!   parameters ([`CsvParams`], [`CsvReader`]), e.g. the CloudPhysics sample.
//! * [`TraceFormat::Iolog`]: fio iolog v2 and v3 ([`IologReader`]).
//! * [`TraceFormat::Lackey`]: valgrind lackey memory traces ([`LackeyReader`]).
//! * [`TraceFormat::Lrugen`]: lrugen's own compact binary trace
//!   ([`LrugenWriter`], [`LrugenReader`]), to save and replay any workload.
//!
//! [`RecordReader`] ([`open_records`]) streams [`TraceRecord`]s (op, key,
//! length, file, time) of any format; [`TraceRecord::pages`] expands one into
//! the 4 KiB pages it touches. [`TraceReader`] ([`open`]) streams page keys in
//! bounded memory; [`load_dense`] loads a whole trace and renumbers its keys
//! `0..nr_unique` for simulators, and [`spill_dense`] does the same in
//! bounded memory, keeping the ids in an [`IdFile`] (in memory up to
//! [`MEM_IDS`], beyond that in an unnamed temporary file) that is read back in
//! chunks ([`IdCursor`]) as many times as needed.
//!
//! ```no_run
//! use lrugen_trace::{load_dense, open, TraceError};
//! use std::path::Path;
//!
//! # fn main() -> Result<(), TraceError> {
//! let mut n = 0u64;
//! for key in open(Path::new("OLTP.lis.zst"), None)? {
//!     let _page: u64 = key?;
//!     n += 1;
//! }
//! let dense = load_dense(Path::new("OLTP.lis.zst"), None)?;
//! assert_eq!(dense.nr_requests, n);
//! # Ok(())
//! # }
//! ```
//!
//! Saving records in lrugen's format and reading them back:
//!
//! ```
//! use lrugen_trace::{KeySpace, LrugenReader, LrugenWriter, TraceOp, TraceRecord, WriterOptions};
//!
//! let recs = [
//!     TraceRecord { op: TraceOp::Read, key: 4096, len: 4096, file: 0, time: 0 },
//!     TraceRecord { op: TraceOp::Write, key: 8192, len: 100, file: 1, time: 5 },
//! ];
//! let options = WriterOptions { key_space: KeySpace::Bytes, zstd_level: Some(3), record_count: None };
//! let mut w = LrugenWriter::new(Vec::new(), options).unwrap();
//! for r in &recs {
//!     w.write(r).unwrap();
//! }
//! let bytes = w.finish().unwrap();
//! let back: Vec<TraceRecord> = LrugenReader::new(&bytes[..], "mem").collect::<Result<_, _>>().unwrap();
//! assert_eq!(back, recs);
//! ```

#![warn(missing_docs)]

mod csv;
mod dense;
mod error;
mod format;
mod iolog;
mod lackey;
mod lcs;
mod lrugentr;
mod oracle;
mod reader;
mod record;
mod spill;
mod stream;
pub mod testdata;
mod text;

pub use csv::{CsvParams, CsvReader, CLOUDPHYSICS_HEADER};
pub use dense::{load_dense, load_dense_with, spill_dense, spill_dense_with, DenseIds, DenseTrace, SpilledTrace};
pub use error::{Location, TraceError, TraceErrorKind};
pub use format::TraceFormat;
pub use iolog::{IologFile, IologReader, IOLOG_V2_HEADER, IOLOG_V3_HEADER, IOLOG_V3_TICK_NS};
pub use lackey::LackeyReader;
pub use lcs::{
    lcs_header, LcsHeader, LcsReader, LcsRecord, LCS_HEADER_SIZE, LCS_MAGIC, LCS_OLD_HEADER_SIZE, LCS_RECORD_SIZES,
};
pub use lrugentr::{
    write_trace, LrugenHeader, LrugenReader, LrugenWriter, WriterOptions, LRUGENTR_HEADER_SIZE, LRUGENTR_MAGIC,
    LRUGENTR_VERSION,
};
pub use oracle::{OracleRecord, ORACLE_RECORD_SIZE};
pub use reader::{FileInput, ZSTD_MAGIC};
pub use record::{
    page_key, KeySpace, PageRange, TraceOp, TraceRecord, PAGE_KEY_MAX_FILE, PAGE_KEY_PAGE_BITS, PAGE_SHIFT, PAGE_SIZE,
};
pub use spill::{le_ids, IdCursor, IdFile, IdWriter, CHUNK_IDS, MEM_IDS};
pub use stream::{open, open_records, open_with, ReadOptions, RecordReader, TraceReader};

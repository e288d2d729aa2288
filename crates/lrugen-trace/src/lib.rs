//! Streaming readers for page-reference traces, and dense id compaction.
//!
//! Two formats are read, each plain or zstd-compressed (compression is
//! detected from the zstd magic bytes `28 B5 2F FD`, not from the name):
//!
//! * [`TraceFormat::Arc`]: the text traces of the ARC paper (Megiddo and
//!   Modha, FAST 2003). One request per line, `start_block n_blocks ignored
//!   request_number`; each line expands into the `n_blocks` consecutive page
//!   keys `start_block, start_block + 1, …`.
//! * [`TraceFormat::OracleGeneral`]: libCacheSim's binary `oracleGeneral`
//!   format, packed little-endian records of 24 bytes ([`OracleRecord`]); each
//!   record is one reference to the page `obj_id`.
//!
//! [`TraceReader`] streams page keys in bounded memory; [`load_dense`] loads a
//! whole trace and renumbers its keys `0..nr_unique` for simulators.
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

#![warn(missing_docs)]

mod dense;
mod error;
mod format;
mod oracle;
mod reader;
pub mod testdata;

pub use dense::{load_dense, DenseTrace};
pub use error::{Location, TraceError, TraceErrorKind};
pub use format::TraceFormat;
pub use oracle::{OracleRecord, ORACLE_RECORD_SIZE};
pub use reader::{open, FileInput, TraceReader, ZSTD_MAGIC};

//! The error type of every reader in this crate.

use std::error::Error;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Where in a trace an error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// A 1-based line number of a text trace.
    Line(u64),
    /// A 1-based record number of a binary trace and the byte offset of the
    /// record's first byte in the (decompressed) stream.
    Record {
        /// 1-based record number.
        record: u64,
        /// Byte offset of the record's first byte.
        offset: u64,
    },
    /// A byte offset in a binary trace's header (or past its last record).
    Byte(u64),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Location::Line(line) => write!(f, "{line}"),
            Location::Record { record, offset } => {
                write!(f, "record {record} (byte offset {offset})")
            }
            Location::Byte(offset) => write!(f, "byte offset {offset}"),
        }
    }
}

/// What went wrong; see [`TraceError::kind`].
#[derive(Debug)]
#[non_exhaustive]
pub enum TraceErrorKind {
    /// The file could not be opened (or its first bytes could not be read).
    Open(io::Error),
    /// No format was given and none could be derived from the file name.
    UnknownFormat,
    /// Reading (or decompressing) failed in the middle of the stream.
    Read {
        /// Where the reader was.
        at: Location,
        /// The underlying error (zstd errors surface as `io::Error` too).
        source: io::Error,
    },
    /// A text line does not have the expected shape.
    Parse {
        /// Where the line is.
        at: Location,
        /// What was expected, in words.
        expected: &'static str,
        /// The offending text (possibly shortened, lossily decoded).
        found: String,
    },
    /// A binary trace ends in the middle of a record.
    Truncated {
        /// Where the incomplete record starts.
        at: Location,
        /// Size of a complete record.
        expected: usize,
        /// Bytes actually present.
        found: usize,
    },
    /// The trace has more distinct pages than dense `u32` ids can number.
    TooManyPages {
        /// The largest number of distinct pages supported.
        limit: u64,
    },
    /// The temporary copy of the trace's dense ids (see
    /// [`crate::spill_dense`]) could not be written.
    Spill(io::Error),
}

/// An error while opening, reading or compacting a trace.
///
/// It always names the file; parse and read errors also name the line
/// (text traces) or the record and byte offset (binary traces), and say what
/// was expected and what was found. The value is one pointer wide so that
/// `Result<u64, TraceError>` stays small in the readers' hot loops.
pub struct TraceError(Box<Inner>);

struct Inner {
    path: PathBuf,
    kind: TraceErrorKind,
}

impl TraceError {
    /// Builds an error about `path`.
    pub fn new(path: impl Into<PathBuf>, kind: TraceErrorKind) -> Self {
        TraceError(Box::new(Inner {
            path: path.into(),
            kind,
        }))
    }

    /// The file (or stream name) the error is about.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// What went wrong.
    pub fn kind(&self) -> &TraceErrorKind {
        &self.0.kind
    }

    /// Where in the trace it went wrong, when that is known.
    pub fn location(&self) -> Option<Location> {
        match self.0.kind {
            TraceErrorKind::Read { at, .. }
            | TraceErrorKind::Parse { at, .. }
            | TraceErrorKind::Truncated { at, .. } => Some(at),
            _ => None,
        }
    }
}

/// `io::Error`'s message without the trailing " (os error N)".
fn io_message(e: &io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.0.path.display();
        match &self.0.kind {
            TraceErrorKind::Open(e) => write!(f, "cannot open trace {path}: {}", io_message(e)),
            TraceErrorKind::UnknownFormat => write!(
                f,
                "{path}: cannot tell the trace format from the file name or its first bytes; \
                 known names: ARC text (.lis, .lis.zst), libCacheSim oracleGeneral (.oracleGeneral, \
                 .oracleGeneral.bin, .oracleGeneral.zst, .oracleGeneral.bin.zst), fio iolog (.iolog), \
                 valgrind lackey (.lackey), csv (.csv), libCacheSim lcs (.lcs), lrugen (.lrugen), \
                 flat little-endian page indices (.index32, .index64), each optionally .zst; for \
                 another name, give the format (lrugen run, bench and kernel: --format NAME, one of \
                 arc, oracleGeneral, iolog, lackey, csv, lcs, lrugen, index32, index64)"
            ),
            TraceErrorKind::Read { at, source } => {
                write!(f, "{path}:{at}: read error: {}", io_message(source))
            }
            TraceErrorKind::Parse { at, expected, found } => {
                write!(f, "{path}:{at}: expected {expected}, found \"{found}\"")
            }
            TraceErrorKind::Truncated { at, expected, found } => write!(
                f,
                "{path}:{at}: truncated record, expected {expected} bytes, found {found}"
            ),
            TraceErrorKind::TooManyPages { limit } => write!(
                f,
                "{path}: more than {limit} distinct pages, too many for dense u32 ids"
            ),
            TraceErrorKind::Spill(e) => write!(
                f,
                "{path}: cannot write the temporary copy of its page ids in {}: {}",
                std::env::temp_dir().display(),
                io_message(e)
            ),
        }
    }
}

impl fmt::Debug for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceError")
            .field("path", &self.0.path)
            .field("kind", &self.0.kind)
            .finish()
    }
}

impl Error for TraceError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.0.kind {
            TraceErrorKind::Open(e) | TraceErrorKind::Read { source: e, .. } | TraceErrorKind::Spill(e) => Some(e),
            _ => None,
        }
    }
}

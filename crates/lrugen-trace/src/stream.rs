//! Opening traces: format detection, the general record reader, and the page
//! key reader built on it.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::csv::{CsvParams, CsvReader};
use crate::error::{Location, TraceError, TraceErrorKind};
use crate::format::TraceFormat;
use crate::iolog::{IologReader, IOLOG_V3_TICK_NS};
use crate::lackey::LackeyReader;
use crate::lcs::LcsReader;
use crate::lrugentr::LrugenReader;
use crate::reader::{fill_buf_retry, FileInput, KeyFormat, KeyReader};
use crate::record::{page_key, KeySpace, PageRange, TraceOp, TraceRecord, PAGE_KEY_MAX_FILE, PAGE_SIZE};

/// How to read a trace: everything is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// The format; `None` detects it (see [`open_records`]).
    pub format: Option<TraceFormat>,
    /// Column parameters of a csv trace; `None` accepts only a csv whose
    /// first line is the CloudPhysics header (then [`CsvParams::cloudphysics`]).
    pub csv: Option<CsvParams>,
    /// Nanoseconds per fio iolog v3 timestamp tick; `None` is
    /// [`IOLOG_V3_TICK_NS`] (milliseconds).
    pub iolog_tick_ns: Option<u64>,
}

impl ReadOptions {
    /// Options with only the format set.
    pub fn format(format: TraceFormat) -> ReadOptions {
        ReadOptions {
            format: Some(format),
            ..Default::default()
        }
    }
}

enum Records<R: BufRead> {
    Arc(KeyReader<R>),
    Lcs(LcsReader<R>),
    Iolog(IologReader<R>),
    Lackey(LackeyReader<R>),
    Csv(CsvReader<R>),
    Lrugen(LrugenReader<R>),
}

/// Streams the [`TraceRecord`]s of a trace of any format, in bounded memory.
///
/// Per format: ARC lines yield one `Read` of 4096 bytes per page (`key` the
/// page); oracleGeneral and lcs records one record per request (`key` the
/// object id, `len` 4096, `time` the clock time; lcs ops as in
/// [`crate::LcsRecord::to_trace_record`]); fio iologs, lackey, csv and lrugen
/// traces as their readers describe ([`IologReader`], [`LackeyReader`],
/// [`CsvReader`], [`LrugenReader`]). [`RecordReader::key_space`] says what
/// the keys count. After the first `Err` the iterator is exhausted.
pub struct RecordReader<R: BufRead> {
    inner: Records<R>,
    format: TraceFormat,
}

impl<R: BufRead> RecordReader<R> {
    /// Reads `format` from `input`, which must already be decompressed (a
    /// whole-file zstd compression; the zstd body of an lrugen trace is
    /// handled by its reader). `path` names the stream in errors.
    pub fn new(input: R, format: TraceFormat, path: impl Into<PathBuf>, options: &ReadOptions) -> Self {
        let path = path.into();
        let inner = match format {
            TraceFormat::Arc => Records::Arc(KeyReader::new(input, KeyFormat::Arc, path)),
            TraceFormat::OracleGeneral => Records::Lcs(LcsReader::oracle_general(input, path)),
            TraceFormat::Lcs => Records::Lcs(LcsReader::new(input, path)),
            TraceFormat::Iolog => Records::Iolog(
                IologReader::new(input, path).with_tick_ns(options.iolog_tick_ns.unwrap_or(IOLOG_V3_TICK_NS)),
            ),
            TraceFormat::Lackey => Records::Lackey(LackeyReader::new(input, path)),
            TraceFormat::Csv => Records::Csv(CsvReader::new(input, path, options.csv.clone())),
            TraceFormat::Lrugen => Records::Lrugen(LrugenReader::new(input, path)),
            TraceFormat::Index32 => Records::Arc(KeyReader::new(input, KeyFormat::Index32, path).keeping_high_bit()),
            TraceFormat::Index64 => Records::Arc(KeyReader::new(input, KeyFormat::Index64, path).keeping_high_bit()),
        };
        RecordReader { inner, format }
    }

    /// The format being read.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// What the records' keys count: pages for ARC, oracleGeneral and lcs;
    /// bytes for fio iologs and lackey; for csv, blocks with a block size
    /// (the CloudPhysics preset: 512) or else pages; for lrugen traces what
    /// the header says (known after the first record is read; pages before).
    pub fn key_space(&self) -> KeySpace {
        match &self.inner {
            Records::Arc(_) | Records::Lcs(_) => KeySpace::Pages,
            Records::Iolog(_) | Records::Lackey(_) => KeySpace::Bytes,
            Records::Csv(r) => r.key_space(),
            Records::Lrugen(r) => r.header().map_or(KeySpace::Pages, |h| h.key_space),
        }
    }

    /// How far the reader got: lines read (text) or records read and the
    /// byte offset of the next one (binary).
    pub fn position(&self) -> Location {
        match &self.inner {
            Records::Arc(r) => r.position(),
            Records::Lcs(r) => r.position(),
            Records::Iolog(r) => r.position(),
            Records::Lackey(r) => r.position(),
            Records::Csv(r) => r.position(),
            Records::Lrugen(r) => r.position(),
        }
    }

    /// Gives the input back; `None` only when an lrugen trace's zstd decoder
    /// could not be created (which consumed the input).
    pub fn into_input(self) -> Option<R> {
        match self.inner {
            Records::Arc(r) => Some(r.into_inner()),
            Records::Lcs(r) => Some(r.into_inner()),
            Records::Iolog(r) => Some(r.into_inner()),
            Records::Lackey(r) => Some(r.into_inner()),
            Records::Csv(r) => Some(r.into_inner()),
            Records::Lrugen(r) => r.into_input(),
        }
    }

    /// The name used in error messages.
    pub fn path(&self) -> &Path {
        match &self.inner {
            Records::Arc(r) => r.path(),
            Records::Lcs(r) => r.path(),
            Records::Iolog(r) => r.path(),
            Records::Lackey(r) => r.path(),
            Records::Csv(r) => r.path(),
            Records::Lrugen(r) => r.path(),
        }
    }

    /// The file names of a fio iolog, by index (empty for other formats).
    pub fn file_names(&self) -> Vec<String> {
        match &self.inner {
            Records::Iolog(r) => r.files().iter().map(|f| f.name.clone()).collect(),
            _ => Vec::new(),
        }
    }
}

impl<R: BufRead> Iterator for RecordReader<R> {
    type Item = Result<TraceRecord, TraceError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Records::Arc(r) => {
                // an index record's high bit marks a file page of a mixed trace: file 1
                let high = r.format().high_bit();
                r.next().map(|k| {
                    k.map(|key| TraceRecord {
                        op: TraceOp::Read,
                        key: key & !high,
                        len: PAGE_SIZE as u32,
                        file: u32::from(key & high != 0),
                        time: 0,
                    })
                })
            }
            Records::Lcs(r) => r.next(),
            Records::Iolog(r) => r.next(),
            Records::Lackey(r) => r.next(),
            Records::Csv(r) => r.next(),
            Records::Lrugen(r) => r.next(),
        }
    }
}

impl<R: BufRead> std::iter::FusedIterator for RecordReader<R> {}

const FILES_EXPECTED: &str = "at most 4096 files (page keys hold the file index in 12 bits)";

/// The pages of a record stream, as [`TraceReader`] yields them.
struct RecordPages<R: BufRead> {
    records: RecordReader<R>,
    pages: PageRange,
    file: u32,
    done: bool,
}

enum Mode<R: BufRead> {
    Keys(KeyReader<R>),
    Records(Box<RecordPages<R>>),
}

/// Streams the page keys of a trace from any [`BufRead`], in bounded memory.
///
/// Yields one `Ok(key)` per page reference, in trace order. ARC lines expand
/// into `n_blocks` consecutive keys; a line with `n_blocks = 0` is legal and
/// yields nothing (it is a request of no pages), and blank lines are skipped.
/// The last two ARC fields are not used but must be integers (an optional
/// sign is allowed there). oracleGeneral and lcs records yield their
/// `obj_id`. Other formats yield the pages each data access touches
/// ([`TraceRecord::pages`] in the reader's [`KeySpace`]; sync, datasync and
/// trim are skipped), combined with the file index by [`page_key`] (file 0
/// keeps the page number).
///
/// After the first `Err` the iterator is exhausted (it is fused). Reading
/// never panics and never allocates per line or per record: one line buffer
/// is reused.
pub struct TraceReader<R: BufRead> {
    mode: Mode<R>,
    format: TraceFormat,
}

impl<R: BufRead> TraceReader<R> {
    /// Reads `format` from `input`, which must already be decompressed.
    /// `path` names the stream in error messages. A csv trace must then start
    /// with the CloudPhysics header (see [`TraceReader::with_options`]).
    pub fn new(input: R, format: TraceFormat, path: impl Into<PathBuf>) -> Self {
        TraceReader::with_options(input, format, path, &ReadOptions::default())
    }

    /// Like [`TraceReader::new`], with csv parameters and the iolog clock.
    pub fn with_options(input: R, format: TraceFormat, path: impl Into<PathBuf>, options: &ReadOptions) -> Self {
        let mode = match format {
            TraceFormat::Arc => Mode::Keys(KeyReader::new(input, KeyFormat::Arc, path)),
            TraceFormat::OracleGeneral => Mode::Keys(KeyReader::new(input, KeyFormat::Oracle, path)),
            TraceFormat::Index32 => Mode::Keys(KeyReader::new(input, KeyFormat::Index32, path)),
            TraceFormat::Index64 => Mode::Keys(KeyReader::new(input, KeyFormat::Index64, path)),
            _ => return TraceReader::from_records(RecordReader::new(input, format, path, options)),
        };
        TraceReader { mode, format }
    }

    /// The page keys of a record stream.
    pub fn from_records(records: RecordReader<R>) -> Self {
        let format = records.format();
        TraceReader {
            mode: Mode::Records(Box::new(RecordPages {
                records,
                pages: PageRange::default(),
                file: 0,
                done: false,
            })),
            format,
        }
    }

    /// The format being read.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The name used in error messages.
    pub fn path(&self) -> &Path {
        match &self.mode {
            Mode::Keys(r) => r.path(),
            Mode::Records(r) => r.records.path(),
        }
    }

    /// How far the reader got: lines read (text) or complete records read
    /// and the byte offset of the next record (binary).
    pub fn position(&self) -> Location {
        match &self.mode {
            Mode::Keys(r) => r.position(),
            Mode::Records(r) => r.records.position(),
        }
    }

    /// Gives the input back (see [`TraceReader::into_inner`]); `None` only
    /// when an lrugen trace's zstd decoder could not be created (which
    /// consumed the input).
    pub fn into_input(self) -> Option<R> {
        match self.mode {
            Mode::Keys(r) => Some(r.into_inner()),
            Mode::Records(r) => r.records.into_input(),
        }
    }

    /// Gives the input back. For an lrugen trace with a zstd body, the
    /// decoder is dropped and the input may have been read past the data
    /// consumed so far.
    ///
    /// # Panics
    /// If the input was lost because an lrugen trace's zstd decoder could not
    /// be created (out of memory); [`TraceReader::into_input`] returns `None`
    /// then.
    pub fn into_inner(self) -> R {
        match self.into_input() {
            Some(r) => r,
            None => panic!("the input was consumed by a zstd decoder that failed to initialize"),
        }
    }
}

impl<R: BufRead> RecordPages<R> {
    #[inline]
    fn next_key(&mut self) -> Option<Result<u64, TraceError>> {
        loop {
            if let Some(page) = self.pages.next() {
                return match page_key(self.file, page) {
                    Some(key) => Some(Ok(key)),
                    None => {
                        self.done = true;
                        self.pages = PageRange::default();
                        Some(Err(self.files_error()))
                    }
                };
            }
            if self.done {
                return None;
            }
            match self.records.next() {
                Some(Ok(r)) if r.op.is_access() => {
                    if r.file > PAGE_KEY_MAX_FILE {
                        self.done = true;
                        return Some(Err(self.files_error()));
                    }
                    self.pages = r.pages(self.records.key_space());
                    self.file = r.file;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                None => {
                    self.done = true;
                    return None;
                }
            }
        }
    }

    fn files_error(&self) -> TraceError {
        TraceError::new(
            self.path(),
            TraceErrorKind::Parse {
                at: self.records.position(),
                expected: FILES_EXPECTED,
                found: format!("file index {}", self.file.max(PAGE_KEY_MAX_FILE + 1)),
            },
        )
    }

    fn path(&self) -> PathBuf {
        self.records.path().to_path_buf()
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<u64, TraceError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.mode {
            Mode::Keys(r) => r.next(),
            Mode::Records(r) => r.next_key(),
        }
    }
}

impl<R: BufRead> std::iter::FusedIterator for TraceReader<R> {}

/// Opens `path` and settles its format: `options.format` when given, else the
/// magic of its first (decompressed) bytes, else its name, else a guess from
/// its first line.
fn open_input(path: &Path, options: &ReadOptions) -> Result<(FileInput, TraceFormat), TraceError> {
    let mut input = FileInput::open(path).map_err(|e| TraceError::new(path, TraceErrorKind::Open(e)))?;
    if let Some(f) = options.format {
        return Ok((input, f));
    }
    let head = match fill_buf_retry(&mut input) {
        Ok(head) => head,
        Err(source) => {
            // Where the reader would have met the error.
            let at = match TraceFormat::from_path(path) {
                Some(TraceFormat::Arc | TraceFormat::Iolog | TraceFormat::Lackey | TraceFormat::Csv) => {
                    Location::Line(1)
                }
                Some(TraceFormat::OracleGeneral | TraceFormat::Index32 | TraceFormat::Index64) => {
                    Location::Record { record: 1, offset: 0 }
                }
                _ => Location::Byte(0),
            };
            return Err(TraceError::new(path, TraceErrorKind::Read { at, source }));
        }
    };
    let format = TraceFormat::from_magic(head)
        .or_else(|| TraceFormat::from_path(path))
        .or_else(|| TraceFormat::sniff(head));
    match format {
        Some(f) => Ok((input, f)),
        None => Err(TraceError::new(path, TraceErrorKind::UnknownFormat)),
    }
}

/// Opens a trace file for streaming page keys.
///
/// The format is `format` when given, otherwise detected as in
/// [`open_records`]. Compression is detected from the zstd magic bytes
/// whatever the name says.
///
/// # Errors
/// [`TraceErrorKind::Open`] if the file cannot be opened or its first bytes
/// read, [`TraceErrorKind::UnknownFormat`] if `format` is `None` and the
/// format cannot be told.
pub fn open(path: &Path, format: Option<TraceFormat>) -> Result<TraceReader<FileInput>, TraceError> {
    open_with(
        path,
        &ReadOptions {
            format,
            ..Default::default()
        },
    )
}

/// Like [`open`], with csv parameters and the iolog clock.
pub fn open_with(path: &Path, options: &ReadOptions) -> Result<TraceReader<FileInput>, TraceError> {
    let (input, format) = open_input(path, options)?;
    Ok(TraceReader::with_options(input, format, path, options))
}

/// Opens a trace file for streaming [`TraceRecord`]s.
///
/// The format is `options.format` when given; otherwise a magic number or
/// fixed first line (`LRUGENTR`, the lcs magic, `fio version N iolog`), then
/// the file name ([`TraceFormat::from_path`]), then a guess from the first
/// line (the CloudPhysics csv header, a lackey line). Compression is detected
/// from the zstd magic bytes.
///
/// # Errors
/// As [`open`].
pub fn open_records(path: &Path, options: &ReadOptions) -> Result<RecordReader<FileInput>, TraceError> {
    let (input, format) = open_input(path, options)?;
    Ok(RecordReader::new(input, format, path, options))
}

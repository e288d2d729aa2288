//! The general operation record and its expansion into 4 KiB pages.

use std::fmt;

/// Size of a page in bytes: records expand into pages of this size.
pub const PAGE_SIZE: u64 = 4096;

/// `log2(PAGE_SIZE)`.
pub const PAGE_SHIFT: u32 = 12;

/// Bits of a combined page key ([`page_key`]) that hold the page number; the
/// bits above hold the file index.
pub const PAGE_KEY_PAGE_BITS: u32 = 52;

/// Largest file index a combined page key can hold (4095).
pub const PAGE_KEY_MAX_FILE: u32 = (1 << (64 - PAGE_KEY_PAGE_BITS)) - 1;

/// What a trace record does.
///
/// `Read`/`Write` are file or block I/O (fio iolog, block traces, object
/// traces); `Load`/`Store`/`Fetch` are memory accesses (valgrind lackey).
/// `Sync`, `Datasync` and `Trim` are fio iolog actions that move no data
/// through the page cache; [`TraceOp::is_access`] is false for them and the
/// page-key reader skips them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TraceOp {
    /// A read of `len` bytes (file, block device or cache object).
    #[default]
    Read,
    /// A write of `len` bytes.
    Write,
    /// A data load from memory.
    Load,
    /// A data store to memory.
    Store,
    /// An instruction fetch.
    Fetch,
    /// `fsync` of the file (fio `sync`).
    Sync,
    /// `fdatasync` of the file (fio `datasync`).
    Datasync,
    /// A discard of the range (fio `trim`; libCacheSim `delete`).
    Trim,
}

impl TraceOp {
    /// Every op, in the order of their codes in lrugen's binary trace.
    pub const ALL: [TraceOp; 8] = [
        TraceOp::Read,
        TraceOp::Write,
        TraceOp::Load,
        TraceOp::Store,
        TraceOp::Fetch,
        TraceOp::Sync,
        TraceOp::Datasync,
        TraceOp::Trim,
    ];

    /// Whether the op touches the data of its range (read, write, load,
    /// store, fetch), as opposed to sync, datasync and trim.
    pub fn is_access(self) -> bool {
        matches!(
            self,
            TraceOp::Read | TraceOp::Write | TraceOp::Load | TraceOp::Store | TraceOp::Fetch
        )
    }

    /// Whether the op modifies the data (write, store).
    pub fn is_write(self) -> bool {
        matches!(self, TraceOp::Write | TraceOp::Store)
    }

    /// The op's code in lrugen's binary trace (0..=7, the index in [`TraceOp::ALL`]).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The op with code `code`, if any.
    pub fn from_code(code: u8) -> Option<TraceOp> {
        TraceOp::ALL.get(usize::from(code)).copied()
    }

    /// A lower-case name: `read`, `write`, `load`, `store`, `fetch`, `sync`,
    /// `datasync`, `trim`.
    pub fn name(self) -> &'static str {
        match self {
            TraceOp::Read => "read",
            TraceOp::Write => "write",
            TraceOp::Load => "load",
            TraceOp::Store => "store",
            TraceOp::Fetch => "fetch",
            TraceOp::Sync => "sync",
            TraceOp::Datasync => "datasync",
            TraceOp::Trim => "trim",
        }
    }
}

impl fmt::Display for TraceOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One operation of a trace.
///
/// What `key` means depends on the trace's [`KeySpace`] (see
/// [`crate::RecordReader::key_space`]): a page number (ARC, oracleGeneral,
/// lcs: objects are pages), a byte offset or address (fio iolog, lackey), or a
/// block number (block traces in csv, e.g. the CloudPhysics lbn).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TraceRecord {
    /// What the operation does.
    pub op: TraceOp,
    /// Object id or page number, byte offset or address, or block number.
    pub key: u64,
    /// Bytes; 4096 for page and object traces.
    pub len: u32,
    /// File index for fio iologs (files numbered by first appearance of their
    /// name, from 0), 0 otherwise.
    pub file: u32,
    /// Time in ns (fio iolog v3) or in the trace's own clock (csv, lcs,
    /// oracleGeneral); 0 if the trace has none.
    pub time: u64,
}

/// What a record's `key` counts, which decides the pages it touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum KeySpace {
    /// `key` is a page (or object) number: a record touches the one page
    /// `key`, whatever its `len`.
    #[default]
    Pages,
    /// `key` is a byte offset or address: a record touches the pages of the
    /// bytes `key .. key + len`.
    Bytes,
    /// `key` is a block number of this many bytes: a record touches the pages
    /// of the bytes `key × size .. key × size + len`.
    Blocks(u32),
}

impl TraceRecord {
    /// The 4 KiB pages the record touches, in ascending order.
    ///
    /// With [`KeySpace::Pages`] that is the one page `key`. Otherwise the
    /// record covers `len` bytes from its byte address (`key`, or `key ×
    /// block size`); an access crossing a page boundary touches both pages,
    /// and `len = 0` touches none. Byte addresses are computed without overflow
    /// (an access may end past `u64::MAX`); page numbers past `u64::MAX` are
    /// clamped.
    pub fn pages(&self, space: KeySpace) -> PageRange {
        let start = match space {
            KeySpace::Pages => {
                return PageRange {
                    next: self.key,
                    last: self.key,
                    done: false,
                }
            }
            KeySpace::Bytes => u128::from(self.key),
            KeySpace::Blocks(size) => u128::from(self.key) * u128::from(size),
        };
        if self.len == 0 {
            return PageRange::EMPTY;
        }
        let end = start + u128::from(self.len) - 1;
        let page = |b: u128| u64::try_from(b >> PAGE_SHIFT).unwrap_or(u64::MAX);
        PageRange {
            next: page(start),
            last: page(end),
            done: false,
        }
    }
}

/// Iterator over the pages of a record ([`TraceRecord::pages`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRange {
    next: u64,
    last: u64,
    done: bool,
}

impl Default for PageRange {
    /// No pages.
    fn default() -> Self {
        PageRange::EMPTY
    }
}

impl PageRange {
    const EMPTY: PageRange = PageRange {
        next: 1,
        last: 0,
        done: true,
    };

    /// Number of pages left.
    pub fn count_pages(&self) -> u64 {
        if self.done {
            0
        } else {
            (self.last - self.next).saturating_add(1)
        }
    }
}

impl Iterator for PageRange {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.done {
            return None;
        }
        let p = self.next;
        if p == self.last {
            self.done = true;
        } else {
            self.next = p + 1;
        }
        Some(p)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.count_pages()).unwrap_or(usize::MAX);
        (n, usize::try_from(self.count_pages()).ok())
    }
}

impl std::iter::FusedIterator for PageRange {}

/// A single `u64` key for page `page` of file `file`: the page number in the
/// low 52 bits and the file index above. File 0 leaves the page unchanged, so
/// single-file traces keep their page numbers. `None` if the file index is
/// above [`PAGE_KEY_MAX_FILE`] or a non-zero file's page does not fit in 52
/// bits.
pub fn page_key(file: u32, page: u64) -> Option<u64> {
    if file == 0 {
        return Some(page);
    }
    if file > PAGE_KEY_MAX_FILE || page >> PAGE_KEY_PAGE_BITS != 0 {
        return None;
    }
    Some(u64::from(file) << PAGE_KEY_PAGE_BITS | page)
}

/// `Iterator` + `FusedIterator` for a reader with a `done: bool` field and a
/// `next_record(&mut self) -> Result<Option<TraceRecord>, TraceError>` method: it yields records
/// until the end or the first error (included), then nothing.
macro_rules! record_iterator {
    ($reader:ident) => {
        impl<R: std::io::BufRead> Iterator for $reader<R> {
            type Item = Result<$crate::TraceRecord, $crate::TraceError>;

            fn next(&mut self) -> Option<Self::Item> {
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

        impl<R: std::io::BufRead> std::iter::FusedIterator for $reader<R> {}
    };
}
pub(crate) use record_iterator;

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: u64, len: u32) -> TraceRecord {
        TraceRecord {
            key,
            len,
            ..Default::default()
        }
    }

    #[test]
    fn expansion() {
        let p = |r: TraceRecord, s| r.pages(s).collect::<Vec<_>>();
        assert_eq!(p(rec(7, 100_000), KeySpace::Pages), [7]);
        assert_eq!(p(rec(4096, 4096), KeySpace::Bytes), [1]);
        assert_eq!(p(rec(4095, 2), KeySpace::Bytes), [0, 1]);
        assert_eq!(p(rec(4094, 2), KeySpace::Bytes), [0]);
        assert_eq!(p(rec(0, 0), KeySpace::Bytes), [] as [u64; 0]);
        assert_eq!(p(rec(8, 4096), KeySpace::Blocks(512)), [1]);
        assert_eq!(p(rec(9, 4096), KeySpace::Blocks(512)), [1, 2]);
        assert_eq!(p(rec(u64::MAX, 8), KeySpace::Bytes), [u64::MAX >> 12, 1 << 52]);
        assert_eq!(p(rec(u64::MAX, 8), KeySpace::Blocks(u32::MAX)), [u64::MAX]);
        assert_eq!(rec(0, 3 * 4096 + 1).pages(KeySpace::Bytes).count_pages(), 4);
    }

    #[test]
    fn keys_and_codes() {
        assert_eq!(page_key(0, u64::MAX), Some(u64::MAX));
        assert_eq!(page_key(1, 5), Some(1 << 52 | 5));
        assert_eq!(page_key(4095, (1 << 52) - 1), Some(u64::MAX));
        assert_eq!(page_key(4096, 0), None);
        assert_eq!(page_key(1, 1 << 52), None);
        for op in TraceOp::ALL {
            assert_eq!(TraceOp::from_code(op.code()), Some(op));
        }
        assert_eq!(TraceOp::from_code(8), None);
    }
}

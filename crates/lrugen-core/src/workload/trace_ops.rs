// SPDX-License-Identifier: GPL-2.0-only
//! A trace replayed as memory accesses, not only as buffered reads: `--access mmap|anon|mixed`.
//!
//! Which record kinds each access can express (anything else is an error naming the record, never
//! a silent reinterpretation):
//!
//! | access | I/O records (read, write) | lackey loads, stores | lackey fetches | index, high bit clear | index, high bit set |
//! |---|---|---|---|---|---|
//! | `file` (the stream of [`super::load_trace_as`]) | buffered reads | error | error | buffered reads | error |
//! | `mmap` | loads, stores through a file mapping | error | error | loads | error |
//! | `anon` | error | anon loads, stores | left out | anon loads | error |
//! | `mixed` | buffered reads (writes: writes) | anon loads, stores | loads of an executable file mapping | anon loads | buffered reads |
//!
//! An index record names a page and nothing else: the first reference to an anon page is
//! replayed as a store (so that the page holds data, as the workload that made the trace had
//! written it), the later ones as loads.
//!
//! A trace's pages are numbered in order of first use, so the file of its file pages has
//! read-ahead and mmap read-around off (`ra_pages` 0, `POSIX_FADV_RANDOM`), as neighbouring
//! numbers are not neighbouring pages of the traced file; the mappings have no `madvise` advice,
//! so their accessed bits count.
//!
//! The trace is read once and spilled (an unnamed temporary file, as [`super::LoadedTrace`]):
//! per reference one `u32`, bit 31 a write, bit 30 a file page, the rest the page's dense id
//! among the pages of its kind (anon or file), numbered in order of first appearance.

use lrugen_trace::{IdCursor, IdFile, KeySpace, ReadOptions, TraceFormat, TraceOp};
use serde::{Deserialize, Serialize};
use std::path::Path;

use super::WorkloadError;

/// How a trace's records are replayed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceAccess {
    /// Buffered 4 KiB reads of one file's pages (`pread`).
    #[default]
    File,
    /// Loads (and stores, for writes) through a shared mapping of one file.
    Mmap,
    /// Loads and stores of one anonymous region (lackey, index files).
    Anon,
    /// Each record as its kind says: anon loads and stores, buffered file reads, executable
    /// file-mapping fetches.
    Mixed,
}

impl TraceAccess {
    /// Its name on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            TraceAccess::File => "file",
            TraceAccess::Mmap => "mmap",
            TraceAccess::Anon => "anon",
            TraceAccess::Mixed => "mixed",
        }
    }
}

impl std::str::FromStr for TraceAccess {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "file" => Ok(TraceAccess::File),
            "mmap" => Ok(TraceAccess::Mmap),
            "anon" => Ok(TraceAccess::Anon),
            "mixed" => Ok(TraceAccess::Mixed),
            _ => Err(format!("unknown access \"{s}\": expected file, mmap, anon or mixed")),
        }
    }
}

/// How the file pages of a trace are touched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilePages {
    /// Buffered reads and writes.
    Io,
    /// Loads and stores through a shared mapping.
    Mapped,
    /// Instruction fetches: loads of an executable private mapping.
    Exec,
}

/// Bit of a spilled reference: a write (store).
pub const WRITE_BIT: u32 = 1 << 31;
/// Bit of a spilled reference: a file page.
pub const FILE_BIT: u32 = 1 << 30;
/// Most distinct pages of one kind.
pub const MAX_PAGES: u32 = FILE_BIT - 1;

/// A trace read as typed references and spilled to disk; cloning shares the file.
#[derive(Clone, Debug)]
pub struct TraceOps {
    /// The references (see the module documentation).
    pub refs: IdFile,
    /// Distinct anon pages.
    pub nr_anon: u32,
    /// Distinct file pages.
    pub nr_file: u32,
    /// How the file pages are touched.
    pub file_pages: FilePages,
    /// Whether any reference writes.
    pub writes: bool,
}

impl TraceOps {
    /// A cursor over the references from the first.
    pub fn cursor(&self) -> IdCursor {
        self.refs.cursor(0)
    }
}

/// Read `path` (in `format`, `None`: told by its name or first bytes) for replay as `access`
/// (not [`TraceAccess::File`], which [`super::load_trace_as`] reads).
pub fn load_trace_ops(
    path: &Path,
    format: Option<TraceFormat>,
    access: TraceAccess,
) -> Result<TraceOps, WorkloadError> {
    let err = |e: lrugen_trace::TraceError| WorkloadError(e.to_string());
    let mut records = lrugen_trace::open_records(
        path,
        &ReadOptions {
            format,
            ..Default::default()
        },
    )
    .map_err(err)?;
    let told = records.format();
    let space: KeySpace = records.key_space();
    let file_pages = match (access, told) {
        (TraceAccess::Mmap, _) => FilePages::Mapped,
        (_, TraceFormat::Lackey) => FilePages::Exec,
        _ => FilePages::Io,
    };
    let index = matches!(told, TraceFormat::Index32 | TraceFormat::Index64);
    let spill = |e: std::io::Error| WorkloadError(format!("{}: writing its temporary copy: {e}", path.display()));
    let mut w = IdFile::writer().map_err(spill)?;
    let mut ids: [lrugen_trace::DenseIds; 2] = Default::default();
    let mut writes = false;
    while let Some(r) = records.next() {
        let r = r.map_err(err)?;
        if !r.op.is_access() {
            continue;
        }
        // (is a file page, is a write), or why the access cannot express the record
        let kind: Result<Option<(bool, bool)>, &str> = match (r.op, access) {
            _ if index && r.file == 1 => match access {
                TraceAccess::Mixed => Ok(Some((true, false))),
                _ => Err("its high bit marks a file page; only --access mixed replays it"),
            },
            (TraceOp::Read | TraceOp::Write, _) if index => {
                Ok(Some((access == TraceAccess::Mmap, false)))
            }
            (TraceOp::Read | TraceOp::Write, TraceAccess::Anon) => {
                Err("it is a read or write of a file; anon replays memory loads and stores (lackey, index files), mixed replays both")
            }
            (TraceOp::Read | TraceOp::Write, _) => Ok(Some((true, r.op == TraceOp::Write))),
            (TraceOp::Load | TraceOp::Store, TraceAccess::Anon | TraceAccess::Mixed) => {
                Ok(Some((false, r.op == TraceOp::Store)))
            }
            (TraceOp::Fetch, TraceAccess::Anon) => Ok(None),
            (TraceOp::Fetch, TraceAccess::Mixed) => Ok(Some((true, false))),
            (TraceOp::Load | TraceOp::Store | TraceOp::Fetch, _) => {
                Err("it is a memory access (lackey); --access anon or mixed replays it")
            }
            _ => Ok(None),
        };
        let (file, write) = match kind {
            Ok(Some(k)) => k,
            Ok(None) => continue,
            Err(why) => {
                return Err(WorkloadError(format!(
                    "{}:{}: --access {} cannot replay this record ({:?}): {why}",
                    path.display(),
                    records.position(),
                    access.name(),
                    r.op
                )))
            }
        };
        writes |= write;
        for page in r.pages(space) {
            let key = lrugen_trace::page_key(r.file * u32::from(!index), page).ok_or_else(|| {
                WorkloadError(format!(
                    "{}:{}: file index {} out of range",
                    path.display(),
                    records.position(),
                    r.file
                ))
            })?;
            let m = &mut ids[file as usize];
            let before = m.len();
            let id = m.id(key).filter(|&id| id < MAX_PAGES).ok_or_else(|| {
                WorkloadError(format!(
                    "{}: more than {MAX_PAGES} distinct pages of one kind",
                    path.display()
                ))
            })?;
            let first = m.len() > before;
            // an index record says no more than "this page": an anon page's first reference
            // stores to it (a load of an untouched anon page maps the zero page and holds no
            // memory), the later ones load
            let write = write || (index && !file && first);
            let v = id | if file { FILE_BIT } else { 0 } | if write { WRITE_BIT } else { 0 };
            w.push(v).map_err(spill)?;
        }
    }
    let refs = w.finish().map_err(spill)?;
    if refs.is_empty() {
        return Err(WorkloadError(format!(
            "{}: the trace holds no access --access {} replays",
            path.display(),
            access.name()
        )));
    }
    Ok(TraceOps {
        refs,
        nr_anon: ids[0].len(),
        nr_file: ids[1].len(),
        file_pages,
        writes,
    })
}

// SPDX-License-Identifier: GPL-2.0-only
//! Workloads: what tasks do to memory, as a stream of operations.
//!
//! An [`Op`] is one page-sized operation of one task: a buffered read or write of a file page, or a
//! load or store at a virtual page. A workload is set up on the machine (files, address spaces,
//! VMAs) and then yields operations. Each yielded [`Step`] also carries a dense `key` naming the
//! page, so the reference cache policies (LRU, OPT) can run the very same stream without a machine,
//! and a `measure` flag that is false during a warm-up phase (e.g. populating anon memory).
//!
//! The workload engine with tasks in virtual time extends this stream (mmap/munmap, fork/exit,
//! think time); the operations here are the page-level core it decomposes into.

pub mod dist;

use crate::mm::memcg::MemcgId;
use crate::mm::pagecache::Advice;
use crate::mm::vm::vmf;
use crate::mm::Machine;
use dist::{Dist, Sampler};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One page-sized operation of one task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Buffered read (`pread`) of one page.
    Read {
        /// Task (address space id).
        task: u32,
        /// File id.
        file: u32,
        /// Page index.
        index: u64,
    },
    /// Buffered write of one page.
    Write {
        /// Task.
        task: u32,
        /// File id.
        file: u32,
        /// Page index.
        index: u64,
    },
    /// A load from a virtual page.
    Load {
        /// Task.
        task: u32,
        /// Virtual page number.
        vpn: u32,
    },
    /// A store to a virtual page.
    Store {
        /// Task.
        task: u32,
        /// Virtual page number.
        vpn: u32,
    },
}

/// One operation with its dense page key and whether it is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The operation.
    pub op: Op,
    /// Dense id of the page it touches (`0..nr_keys`).
    pub key: u32,
    /// False during warm-up.
    pub measure: bool,
}

/// What to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadSpec {
    /// fio-like buffered random reads over a set of files (`--rw=randread --buffered=1`).
    FileRead {
        /// Number of files.
        files: u32,
        /// Pages per file.
        file_pages: u64,
        /// Offset distribution over all pages of all files.
        dist: Dist,
        /// Reads to issue.
        accesses: u64,
    },
    /// An anon region populated with stores, then random loads and stores.
    Anon {
        /// Pages in the region.
        pages: u64,
        /// Fraction of accesses that are stores.
        write_ratio: f64,
        /// Page distribution.
        dist: Dist,
        /// Accesses to issue after the populate phase.
        accesses: u64,
    },
    /// A trace replayed as buffered 4 KiB reads of one file opened with `POSIX_FADV_RANDOM`.
    Trace {
        /// The trace file.
        path: PathBuf,
    },
}

impl WorkloadSpec {
    /// Check the parameters (sizes, ratios) without building anything, so that a bad workload is
    /// refused before a machine is built for it.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        match self {
            WorkloadSpec::FileRead { files, file_pages, .. } => {
                if *files == 0 || *file_pages == 0 {
                    return Err(WorkloadError(
                        "file-read workload needs at least one file of at least one page".into(),
                    ));
                }
                match (*files as u64).checked_mul(*file_pages) {
                    Some(total) if total <= u32::MAX as u64 => Ok(()),
                    _ => Err(WorkloadError(format!(
                        "file-read workload of {files} files x {file_pages} pages is too large (max {} pages)",
                        u32::MAX
                    ))),
                }
            }
            WorkloadSpec::Anon { pages, write_ratio, .. } => {
                if *pages == 0 || *pages > (1 << 26) {
                    return Err(WorkloadError(format!(
                        "anon workload needs 1..={} pages, got {pages}",
                        1u64 << 26
                    )));
                }
                if !(0.0..=1.0).contains(write_ratio) {
                    return Err(WorkloadError(format!("write ratio {write_ratio} is not in [0, 1]")));
                }
                Ok(())
            }
            WorkloadSpec::Trace { .. } => Ok(()),
        }
    }

    /// A short human-readable description.
    pub fn describe(&self) -> String {
        match self {
            WorkloadSpec::FileRead {
                files,
                file_pages,
                dist,
                accesses,
            } => format!(
                "buffered {dist} reads, {files} files x {} MiB, {accesses} reads",
                file_pages * 4 / 1024
            ),
            WorkloadSpec::Anon {
                pages,
                write_ratio,
                dist,
                accesses,
            } => format!(
                "anon {dist} loads/stores ({:.0}% stores), {} MiB, {accesses} accesses",
                write_ratio * 100.0,
                pages * 4 / 1024
            ),
            WorkloadSpec::Trace { path } => format!(
                "trace {}",
                path.file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ),
        }
    }
}

/// A workload bound to a machine: the stream of steps.
pub struct Stream {
    kind: StreamKind,
    /// Number of distinct page keys.
    pub nr_keys: u32,
    /// Steps still to come (including warm-up).
    pub len: u64,
    done: u64,
}

enum StreamKind {
    FileRead {
        task: u32,
        files: Vec<u32>,
        file_pages: u64,
        sampler: Box<Sampler>,
    },
    Anon {
        task: u32,
        base: u32,
        pages: u64,
        write_ratio: f64,
        sampler: Box<Sampler>,
        rng: Box<rand::rngs::StdRng>,
        populate: u64,
    },
    Trace {
        task: u32,
        file: u32,
        pages: std::sync::Arc<Vec<u32>>,
    },
}

/// Errors setting up a workload (bad trace, bad parameters).
#[derive(Debug)]
pub struct WorkloadError(pub String);

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WorkloadError {}

/// A loaded trace, shared between the runs of a comparison.
pub type LoadedTrace = std::sync::Arc<Vec<u32>>;

/// Load a trace as dense page ids.
pub fn load_trace(path: &std::path::Path) -> Result<(LoadedTrace, u32), WorkloadError> {
    let t = lrugen_trace::load_dense(path, None).map_err(|e| WorkloadError(e.to_string()))?;
    if t.pages.is_empty() {
        return Err(WorkloadError(format!("{}: the trace holds no request", path.display())));
    }
    Ok((std::sync::Arc::new(t.pages), t.nr_unique))
}

impl Stream {
    /// Set the workload up on `m` inside `memcg` and return its stream. A trace must have been
    /// loaded with [`load_trace`] (pass it as `trace`).
    pub fn new(
        spec: &WorkloadSpec,
        m: &mut Machine,
        memcg: MemcgId,
        seed: u64,
        trace: Option<(LoadedTrace, u32)>,
    ) -> Result<Stream, WorkloadError> {
        let task = m.create_mm(memcg);
        match spec {
            WorkloadSpec::FileRead {
                files,
                file_pages,
                dist,
                accesses,
            } => {
                spec.validate()?;
                let total = *files as u64 * file_pages;
                let ids = (0..*files)
                    .map(|i| m.create_file(&format!("file{i}"), *file_pages, Advice::Normal))
                    .collect();
                Ok(Stream {
                    kind: StreamKind::FileRead {
                        task,
                        files: ids,
                        file_pages: *file_pages,
                        sampler: Box::new(Sampler::new(*dist, total, seed)),
                    },
                    nr_keys: total as u32,
                    len: *accesses,
                    done: 0,
                })
            }
            WorkloadSpec::Anon {
                pages,
                write_ratio,
                dist,
                accesses,
            } => {
                spec.validate()?;
                let base = m.mmap(task, *pages as u32, vmf::WRITE, None);
                use rand::SeedableRng;
                Ok(Stream {
                    kind: StreamKind::Anon {
                        task,
                        base,
                        pages: *pages,
                        write_ratio: *write_ratio,
                        sampler: Box::new(Sampler::new(*dist, *pages, seed)),
                        rng: Box::new(rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed)),
                        populate: *pages,
                    },
                    nr_keys: *pages as u32,
                    len: *pages + *accesses,
                    done: 0,
                })
            }
            WorkloadSpec::Trace { path } => {
                let (pages, nr_unique) = match trace {
                    Some(t) => t,
                    None => load_trace(path)?,
                };
                let name = path
                    .file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "trace".into());
                let file = m.create_file(&name, nr_unique as u64, Advice::Random);
                Ok(Stream {
                    len: pages.len() as u64,
                    kind: StreamKind::Trace { task, file, pages },
                    nr_keys: nr_unique,
                    done: 0,
                })
            }
        }
    }

    /// Steps issued so far.
    pub fn done(&self) -> u64 {
        self.done
    }
}

impl Iterator for Stream {
    type Item = Step;

    #[inline]
    fn next(&mut self) -> Option<Step> {
        if self.done >= self.len {
            return None;
        }
        let i = self.done;
        self.done += 1;
        Some(match &mut self.kind {
            StreamKind::FileRead {
                task,
                files,
                file_pages,
                sampler,
            } => {
                let key = sampler.next_key();
                let file = files[(key / *file_pages) as usize];
                Step {
                    op: Op::Read {
                        task: *task,
                        file,
                        index: key % *file_pages,
                    },
                    key: key as u32,
                    measure: true,
                }
            }
            StreamKind::Anon {
                task,
                base,
                pages,
                write_ratio,
                sampler,
                rng,
                populate,
            } => {
                if i < *populate {
                    Step {
                        op: Op::Store {
                            task: *task,
                            vpn: *base + i as u32,
                        },
                        key: i as u32,
                        measure: false,
                    }
                } else {
                    use rand::RngExt;
                    let key = sampler.next_key() % *pages;
                    let vpn = *base + key as u32;
                    let op = if rng.random::<f64>() < *write_ratio {
                        Op::Store { task: *task, vpn }
                    } else {
                        Op::Load { task: *task, vpn }
                    };
                    Step {
                        op,
                        key: key as u32,
                        measure: true,
                    }
                }
            }
            StreamKind::Trace { task, file, pages } => {
                let key = pages[i as usize];
                Step {
                    op: Op::Read {
                        task: *task,
                        file: *file,
                        index: key as u64,
                    },
                    key,
                    measure: true,
                }
            }
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let r = (self.len - self.done) as usize;
        (r, Some(r))
    }
}

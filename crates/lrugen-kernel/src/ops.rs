// SPDX-License-Identifier: GPL-2.0-only
//! Op files for `lrugen kernel`: the built-in workloads (buffered reads, mmap loads, anon, a mix
//! of file reads and anon accesses), traces, and any lrugen workload stream (an experiment's),
//! converted step by step into the replayer's ops.

use crate::Error;
use lrugen::mm::memcg::MemcgId;
use lrugen::mm::vm::vmf;
use lrugen::mm::Machine;
use lrugen::workload::dist::{Dist, Sampler};
use lrugen::workload::{Op, Step};
pub use lrugen_replay::{FileAdvice, OpFile, ReplayFile, ReplayOp};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the built-in workload or a trace touches its pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Buffered 4 KiB `pread`s of one file.
    File,
    /// Loads through a shared read-only mapping of one file.
    Mmap,
    /// Loads and stores of an anon region (populated first), swapped out under pressure.
    Anon,
    /// File reads and anon accesses interleaved, one of each in turn.
    Mixed,
    /// A hot file read over and over (after one unmeasured pass) while a cold file is read once,
    /// page after page, its reads spread evenly among the hot ones ([`hot_and_cold`]).
    HotCold,
}

impl std::str::FromStr for Access {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "file" => Ok(Access::File),
            "mmap" => Ok(Access::Mmap),
            "anon" => Ok(Access::Anon),
            "mixed" => Ok(Access::Mixed),
            "hotcold" => Ok(Access::HotCold),
            _ => Err(format!("expected file, mmap, anon, mixed or hotcold, found '{s}'")),
        }
    }
}

impl Access {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Access::File => "file",
            Access::Mmap => "mmap",
            Access::Anon => "anon",
            Access::Mixed => "mixed",
            Access::HotCold => "hotcold",
        }
    }
}

/// [`FileAdvice`] in JSON (`"random"`, `"normal"`).
#[derive(Serialize, Deserialize)]
#[serde(remote = "FileAdvice", rename_all = "lowercase")]
enum FileAdviceDef {
    Random,
    Normal,
}

/// A built-in workload of `lrugen kernel`, everything that determines its op file: what
/// `--access`, `--size`, `--anon-size`, `--hot-size`, `--accesses`, `--dist`, `--write-ratio`,
/// `--advice`, `--seed`, `--every` and `--madv-hugepage` say. Kept in a fixture so that a test rebuilds the very ops
/// the kernel ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BuiltIn {
    /// How the pages are touched.
    pub access: Access,
    /// Pages of the (cold, for `hotcold`) file.
    pub file_pages: u64,
    /// Pages of the anon region (`anon`, `mixed`).
    pub anon_pages: u64,
    /// Pages of the hot file (`hotcold`).
    pub hot_pages: u64,
    /// Measured accesses.
    pub accesses: u64,
    /// Page distribution (of the hot file for `hotcold`).
    pub dist: Dist,
    /// Fraction of anon accesses that are stores.
    pub write_ratio: f64,
    /// Advice the files are opened and mapped with.
    #[serde(with = "FileAdviceDef")]
    pub advice: FileAdvice,
    /// Seed.
    pub seed: u64,
    /// Measured accesses per window.
    pub window: u64,
    /// `--madv-hugepage`: the anon region advised `MADV_HUGEPAGE` (and mapped 2 MiB-aligned by
    /// the replayer; `anon N hugepage` in the op file). Absent from fixtures made without it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hugepage: bool,
}

impl BuiltIn {
    /// The op file.
    pub fn ops(&self) -> Result<OpFile, Error> {
        let (d, seed, w) = (self.dist, self.seed, self.window);
        let mut o = match self.access {
            Access::File => crate::file_read_ops(self.file_pages, self.accesses, d, seed, w),
            Access::Mmap => mmap_reads(self.file_pages, self.accesses, d, seed, w),
            Access::Anon => crate::anon_ops(self.anon_pages, self.accesses, d, self.write_ratio, seed, w)?,
            Access::Mixed => file_and_anon(
                self.file_pages,
                self.anon_pages,
                self.accesses,
                d,
                self.write_ratio,
                seed,
                w,
            ),
            Access::HotCold => hot_and_cold(self.hot_pages, self.file_pages, self.accesses, d, seed, w)?,
        };
        for f in &mut o.files {
            f.advice = self.advice;
        }
        o.anon_hugepage = self.hugepage && o.anon_pages > 0;
        Ok(o)
    }

    /// One line for the report.
    pub fn describe(&self) -> String {
        let mib = |p: u64| p as f64 / 256.0;
        let w = match self.access {
            Access::File => format!("{} buffered reads of a {} MiB file", self.accesses, mib(self.file_pages)),
            Access::Mmap => format!("{} mmap loads of a {} MiB file", self.accesses, mib(self.file_pages)),
            Access::Anon => format!(
                "{} loads/stores ({}% stores) of a {} MiB anon region",
                self.accesses,
                self.write_ratio * 100.0,
                mib(self.anon_pages)
            ),
            Access::Mixed => format!(
                "{} accesses alternating buffered reads of a {} MiB file and loads/stores ({}% stores) of a {} MiB anon region",
                self.accesses,
                mib(self.file_pages),
                self.write_ratio * 100.0,
                mib(self.anon_pages)
            ),
            Access::HotCold => format!(
                "{} buffered reads: a {} MiB hot file (one pass first) under one pass over a {} MiB cold file",
                self.accesses,
                mib(self.hot_pages),
                mib(self.file_pages)
            ),
        };
        let advice = match self.advice {
            FileAdvice::Random => "",
            FileAdvice::Normal => ", MADV_NORMAL",
        };
        let huge = if self.hugepage && matches!(self.access, Access::Anon | Access::Mixed) {
            ", MADV_HUGEPAGE"
        } else {
            ""
        };
        format!("{w}{huge}, {}{advice}, seed {}", self.dist, self.seed)
    }
}

/// A hot set under a one-pass cold stream: file 0 (`hot_pages` pages) read once in order (not
/// measured), then `accesses` measured buffered reads of which `cold_pages` read file 1 once, page
/// 0 to the last, spread evenly (access `i` is cold when `⌊(i+1)·C/A⌋ > ⌊i·C/A⌋`), and the rest
/// read pages of file 0 drawn from `dist` with `seed`.
pub fn hot_and_cold(
    hot_pages: u64,
    cold_pages: u64,
    accesses: u64,
    dist: Dist,
    seed: u64,
    window: u64,
) -> Result<OpFile, Error> {
    if hot_pages == 0 || cold_pages == 0 || cold_pages > accesses {
        return Err(Error::Config(format!(
            "a hot/cold workload needs a hot and a cold file of at least one page and at least as many accesses as cold pages (hot {hot_pages}, cold {cold_pages}, accesses {accesses})"
        )));
    }
    let mut s = Sampler::new(dist, hot_pages, seed);
    let mut ops = Vec::with_capacity((hot_pages + accesses + 1) as usize);
    ops.extend((0..hot_pages).map(|index| ReplayOp::Read { file: 0, index }));
    ops.push(ReplayOp::MeasureStart);
    let mut cold = 0u64;
    for i in 0..accesses {
        let c = (i as u128 + 1) * cold_pages as u128 / accesses as u128;
        ops.push(if c > cold as u128 {
            cold += 1;
            ReplayOp::Read {
                file: 1,
                index: cold - 1,
            }
        } else {
            ReplayOp::Read {
                file: 0,
                index: s.next_key(),
            }
        });
    }
    debug_assert_eq!(cold, cold_pages);
    let file = |id: u32, pages: u64| ReplayFile {
        id,
        path: format!("file{id}"),
        pages,
        advice: FileAdvice::Random,
    };
    Ok(OpFile {
        anon_hugepage: false,
        lockstep: 0,
        ctl: Vec::new(),
        memcgs: Vec::new(),
        tasks: Vec::new(),
        window,
        files: vec![file(0, hot_pages), file(1, cold_pages)],
        anon_pages: 0,
        ops,
    })
}

fn one_file(pages: u64) -> Vec<ReplayFile> {
    vec![ReplayFile {
        id: 0,
        path: "file0".into(),
        pages,
        advice: FileAdvice::Random,
    }]
}

/// `accesses` loads of pages of one file of `file_pages` pages through a shared read-only
/// mapping, pages drawn from `dist` with `seed` (the same pages as [`crate::file_read_ops`]).
pub fn mmap_reads(file_pages: u64, accesses: u64, dist: Dist, seed: u64, window: u64) -> OpFile {
    let mut s = Sampler::new(dist, file_pages, seed);
    OpFile {
        anon_hugepage: false,
        lockstep: 0,
        ctl: Vec::new(),
        memcgs: Vec::new(),
        tasks: Vec::new(),
        window,
        files: one_file(file_pages),
        anon_pages: 0,
        ops: (0..accesses)
            .map(|_| ReplayOp::MmapLoad {
                file: 0,
                index: s.next_key(),
            })
            .collect(),
    }
}

/// splitmix64: the coin of [`file_and_anon`]'s stores.
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A file and an anon region side by side: `anon_pages` stores populating the region (not
/// measured), then `accesses` accesses alternating between a buffered read of a page of the file
/// (`file_pages` pages) and a load or store (stores with probability `write_ratio`) of an anon
/// page, both drawn from `dist` (independent samplers seeded from `seed`).
pub fn file_and_anon(
    file_pages: u64,
    anon_pages: u64,
    accesses: u64,
    dist: Dist,
    write_ratio: f64,
    seed: u64,
    window: u64,
) -> OpFile {
    let mut fs = Sampler::new(dist, file_pages, seed);
    let mut an = Sampler::new(dist, anon_pages, seed ^ 0xa110c);
    let mut coin = seed ^ 0x5707e;
    let mut ops = Vec::with_capacity((anon_pages + accesses + 1) as usize);
    ops.extend((0..anon_pages).map(|vpn| ReplayOp::Store { vpn }));
    ops.push(ReplayOp::MeasureStart);
    for i in 0..accesses {
        ops.push(if i % 2 == 0 {
            ReplayOp::Read {
                file: 0,
                index: fs.next_key(),
            }
        } else {
            let vpn = an.next_key();
            if ((splitmix(&mut coin) >> 11) as f64) < write_ratio * (1u64 << 53) as f64 {
                ReplayOp::Store { vpn }
            } else {
                ReplayOp::Load { vpn }
            }
        });
    }
    OpFile {
        anon_hugepage: false,
        lockstep: 0,
        ctl: Vec::new(),
        memcgs: Vec::new(),
        tasks: Vec::new(),
        window,
        files: one_file(file_pages),
        anon_pages,
        ops,
    }
}

/// A trace (dense page ids, as `lrugen::workload::load_trace` gives them) as buffered reads
/// (`mmap: false`) or mmap loads of one file of `nr_pages` pages, page id = page index.
pub fn trace_ops(pages: &[u32], nr_pages: u32, mmap: bool, window: u64) -> OpFile {
    OpFile {
        anon_hugepage: false,
        lockstep: 0,
        ctl: Vec::new(),
        memcgs: Vec::new(),
        tasks: Vec::new(),
        window,
        files: one_file(nr_pages as u64),
        anon_pages: 0,
        ops: pages
            .iter()
            .map(|&p| {
                let index = p as u64;
                if mmap {
                    ReplayOp::MmapLoad { file: 0, index }
                } else {
                    ReplayOp::Read { file: 0, index }
                }
            })
            .collect(),
    }
}

/// The op file of a trace read as typed references (`lrugen kernel --trace F --access anon|mixed`,
/// [`lrugen::workload::trace_ops`]): anon references as loads and stores of the replayer's anon
/// region (page `id`), file pages as `pread`/`pwrite` of one file. Not expressible, and refused:
/// file pages reached through a mapping (the replayer maps its files shared and without
/// `PROT_EXEC`, so neither stores to them nor instruction fetches are what the model replays).
pub fn typed_trace_ops(t: &lrugen::workload::trace_ops::TraceOps, window: u64) -> Result<OpFile, Error> {
    use lrugen::workload::trace_ops::{FilePages, FILE_BIT, MAX_PAGES, WRITE_BIT};
    if t.nr_file > 0 && t.file_pages != FilePages::Io {
        return Err(Error::Config(
            "a trace whose file pages are mapped (instruction fetches, --access mmap with writes) \
             cannot be replayed on the kernel: the replayer's file mappings are shared and not \
             executable; --access anon leaves the fetches out"
                .into(),
        ));
    }
    let mut ops = Vec::with_capacity(t.refs.len() as usize);
    let mut c = t.cursor();
    while let Some(v) = c
        .next_id()
        .map_err(|e| Error::Config(format!("reading back the trace's references: {e}")))?
    {
        let id = u64::from(v & MAX_PAGES);
        let write = v & WRITE_BIT != 0;
        ops.push(match (v & FILE_BIT != 0, write) {
            (false, false) => ReplayOp::Load { vpn: id },
            (false, true) => ReplayOp::Store { vpn: id },
            (true, false) => ReplayOp::Read { file: 0, index: id },
            (true, true) => ReplayOp::Write { file: 0, index: id },
        });
    }
    Ok(OpFile {
        anon_hugepage: false,
        lockstep: 0,
        ctl: Vec::new(),
        memcgs: Vec::new(),
        tasks: Vec::new(),
        window,
        files: if t.nr_file > 0 {
            one_file(u64::from(t.nr_file))
        } else {
            Vec::new()
        },
        anon_pages: u64::from(t.nr_anon),
        ops,
    })
}

/// One step of a stream with the request it belongs to ([`lrugen::workload::Stream::request`]):
/// `true` when the step ends a benchmark request.
pub type TaskStep = (Step, bool);

/// Convert a workload stream on machine `m` into an op file of one task: [`from_streams`] of it
/// alone.
pub fn from_stream(m: &Machine, steps: impl IntoIterator<Item = Step>, window: u64) -> Result<OpFile, Error> {
    from_streams(m, vec![steps.into_iter().map(|s| (s, false)).collect()], window, 0)
}

/// Convert the streams of an engine run (one per task, as `sim::task_streams` makes them) on
/// machine `m` into an op file with one replay task per stream (a process of its own in the
/// guest). Files keep the machine's ids (those the streams touch are declared, named `fID`, with
/// their sizes) and are shared by the tasks; the anonymous VMAs a stream touches are laid out one
/// after another in its task's anon region, in order of first use; a load from a file VMA becomes
/// an mmap load of the file page it maps. A step that ends a benchmark request is followed by a
/// `q` mark. Think time becomes `t` ops (a sleep), and `think_ns` (the engine's think time after
/// every operation) a `t` after every op. A stream's forks, exits, anonymous mmaps, munmaps and
/// madvises become the process ops of version 7 (`fork` … `exit` blocks, numbered regions): a
/// child forked by the stream runs its ops while its parent waits, as in the build workload, where
/// make forks one compiler after another. Not expressible, and refused naming the task and step:
/// an op of a parent while its child lives, the exit of the stream's own task, a file mmap, a
/// store to a file mapping, a step outside any VMA or on a page unmapped before, and unmeasured
/// accesses after a task's measured ones have begun.
pub fn from_streams(m: &Machine, streams: Vec<Vec<TaskStep>>, window: u64, think_ns: u64) -> Result<OpFile, Error> {
    let mut used_files: BTreeMap<u32, u64> = BTreeMap::new();
    let n = streams.len();
    let mut tasks = Vec::with_capacity(n);
    // the memcg of each task's address space (its first step's)
    let mut memcgs: Vec<MemcgId> = Vec::with_capacity(n);
    for (ti, steps) in streams.into_iter().enumerate() {
        if let Some(mm) = steps.first().and_then(|s| m.mms.get(s.0.op.task() as usize)) {
            memcgs.push(mm.memcg);
        }
        let mut ops = Vec::new();
        // (address space, VMA start) -> offset in the anon region
        let mut anon: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        let mut anon_pages = 0u64;
        let mut measuring = false;
        let mut warm = false;
        // the stream's live processes, innermost last, each with its mmapped regions; the first
        // is the replay task's own process, which every address space of the stream's setup
        // maps into (their anon VMAs one after another in region 0), whichever runs a step
        let mut procs: Vec<Process> = vec![Process {
            mm: steps.first().map_or(0, |s| s.0.op.task()),
            regions: BTreeMap::new(),
            unmapped: Vec::new(),
            next_region: 1,
        }];
        for (i, (s, ends_request)) in steps.into_iter().enumerate() {
            let bad = |what: String| {
                Error::Config(if n > 1 {
                    format!("task {ti} step {i}: {what} cannot be replayed on the kernel")
                } else {
                    format!("step {i}: {what} cannot be replayed on the kernel")
                })
            };
            if let Op::Think { ns, .. } = s.op {
                ops.push(ReplayOp::Think { ns });
                continue;
            }
            let task = s.op.task();
            if procs.len() == 1 {
                procs[0].mm = task;
            }
            let top = procs.last().expect("a process").mm;
            if task != top {
                return Err(bad(format!(
                    "an op of task {task} while task {top} runs (the replayer runs a forked child while its parent waits)"
                )));
            }
            // the address space whose setup VMAs the current process sees (a child inherits them)
            let root = procs[0].mm;
            if let Some(op) = process_op(m, &mut procs, root, &mut anon, &mut anon_pages, &s.op).map_err(bad)? {
                ops.push(op);
                if think_ns > 0 {
                    ops.push(ReplayOp::Think { ns: think_ns });
                }
                continue;
            }
            if s.measure && !measuring {
                if warm {
                    ops.push(ReplayOp::MeasureStart);
                }
                measuring = true;
            } else if !s.measure {
                if measuring {
                    return Err(bad(format!(
                        "an unmeasured {:?} after measured steps (the replayer measures everything after its one `w` marker)",
                        s.op
                    )));
                }
                warm = true;
            }
            let op = match s.op {
                Op::Read { file, index, .. } | Op::Write { file, index, .. } => {
                    let f = m
                        .files
                        .get(file as usize)
                        .ok_or_else(|| bad(format!("file {file} (not on the machine)")))?;
                    used_files.insert(file, f.size);
                    if matches!(s.op, Op::Read { .. }) {
                        ReplayOp::Read { file, index }
                    } else {
                        ReplayOp::Write { file, index }
                    }
                }
                Op::Load { task, vpn } | Op::Store { task, vpn } => {
                    let store = matches!(s.op, Op::Store { .. });
                    let top = procs.last().expect("a process");
                    if top.unmapped.iter().any(|&(a, b)| (a..b).contains(&vpn)) {
                        return Err(bad(format!("an access of task {task} at page {vpn}, unmapped before,")));
                    }
                    if let Some((region, page)) = top.region_of(vpn) {
                        if store {
                            ReplayOp::RegionStore { region, page }
                        } else {
                            ReplayOp::RegionLoad { region, page }
                        }
                    } else {
                        // a forked child's mappings from before its fork are its root's
                        let v = setup_vma(m, root, task, vpn).map_err(bad)?;
                        if v.flags & vmf::ANON != 0 {
                            let vpn = region0_page(&mut anon, &mut anon_pages, root, &v, vpn);
                            if store {
                                ReplayOp::Store { vpn }
                            } else {
                                ReplayOp::Load { vpn }
                            }
                        } else if store {
                            return Err(bad(format!("a store to a file mapping (task {task}, file {})", v.file)));
                        } else {
                            let size = m.files[v.file as usize].size;
                            used_files.insert(v.file, size);
                            ReplayOp::MmapLoad {
                                file: v.file,
                                index: (vpn - v.start + v.pgoff) as u64,
                            }
                        }
                    }
                }
                Op::Exit { .. }
                | Op::Think { .. }
                | Op::Fork { .. }
                | Op::Mmap { .. }
                | Op::Munmap { .. }
                | Op::Madvise { .. }
                | Op::Mbind { .. } => unreachable!("handled above"),
            };
            ops.push(op);
            if ends_request && s.measure {
                ops.push(ReplayOp::RequestEnd);
            }
            if think_ns > 0 {
                ops.push(ReplayOp::Think { ns: think_ns });
            }
        }
        if !measuring {
            return Err(Error::Config(if n > 1 {
                format!("task {ti} of the workload has no measured step")
            } else {
                "the workload has no measured step".into()
            }));
        }
        tasks.push(lrugen_replay::ReplayTask {
            anon_hugepage: false,
            anon_pages,
            ops,
        });
    }
    let memcgs = task_memcg_names(m, &memcgs)?;
    let mut it = tasks.into_iter();
    let first = it
        .next()
        .ok_or_else(|| Error::Config("the workload has no task".into()))?;
    Ok(OpFile {
        anon_hugepage: false,
        lockstep: 0,
        ctl: Vec::new(),
        memcgs,
        window,
        files: used_files
            .into_iter()
            .map(|(id, pages)| ReplayFile {
                id,
                path: format!("f{id}"),
                pages,
                advice: FileAdvice::Random,
            })
            .collect(),
        anon_pages: first.anon_pages,
        ops: first.ops,
        tasks: it.collect(),
    })
}

/// A process of a stream being converted ([`from_streams`]): its address space, the anon regions
/// it mmapped (first vpn -> (region id, pages)), the ranges it unmapped (which no later access
/// may touch: the replayer's parser would refuse it in the guest) and the next region id it gives.
#[derive(Clone)]
struct Process {
    mm: u32,
    regions: BTreeMap<u32, (u16, u32)>,
    unmapped: Vec<(u32, u32)>,
    next_region: u16,
}

impl Process {
    /// The (region, page) of `vpn` in a region this process mmapped.
    fn region_of(&self, vpn: u32) -> Option<(u16, u64)> {
        let (&start, &(region, pages)) = self.regions.range(..=vpn).next_back()?;
        (vpn - start < pages).then_some((region, u64::from(vpn - start)))
    }
}

/// The VMA that the machine's setup gave the stream's root task `root` at `vpn`, as seen by `task`
/// (the root or a child forked from it, which inherits its mappings).
fn setup_vma(m: &Machine, root: u32, task: u32, vpn: u32) -> Result<lrugen::mm::vm::Vma, String> {
    let mm = m
        .mms
        .get(root as usize)
        .ok_or_else(|| format!("task {root} (no such address space)"))?;
    mm.find_vma(vpn)
        .map(|i| mm.vmas[i])
        .ok_or_else(|| format!("an access of task {task} at page {vpn}, outside its VMAs,"))
}

/// The page of region 0 (the task's `anon` region, where the anonymous VMAs of the setup are laid
/// out one after another in order of first use) that holds `vpn` of VMA `v` of `root`.
fn region0_page(
    anon: &mut BTreeMap<(u32, u32), u64>,
    anon_pages: &mut u64,
    root: u32,
    v: &lrugen::mm::vm::Vma,
    vpn: u32,
) -> u64 {
    let base = *anon.entry((root, v.start)).or_insert_with(|| {
        let b = *anon_pages;
        *anon_pages += (v.end - v.start) as u64;
        b
    });
    base + (vpn - v.start) as u64
}

/// The (region, first page) of `pages` pages at `vpn` of process `top`: within one region it
/// mmapped, or within one anonymous mapping of the setup (region 0).
fn region_range(
    m: &Machine,
    top: &Process,
    root: u32,
    anon: &mut BTreeMap<(u32, u32), u64>,
    anon_pages: &mut u64,
    vpn: u32,
    pages: u32,
) -> Result<(u16, u32), String> {
    if let Some((region, page)) = top.region_of(vpn) {
        let (_, size) = top.regions[&(vpn - page as u32)];
        if page + u64::from(pages) > u64::from(size) {
            return Err(format!(
                "a range of {pages} pages at page {vpn} past the end of its mmap"
            ));
        }
        return Ok((region, page as u32));
    }
    let v = setup_vma(m, root, top.mm, vpn)?;
    if v.flags & vmf::ANON == 0 || u64::from(vpn) + u64::from(pages) > u64::from(v.end) {
        return Err(format!(
            "a range of {pages} pages at page {vpn} that is not within one anonymous mapping"
        ));
    }
    Ok((0, region0_page(anon, anon_pages, root, &v, vpn) as u32))
}

/// The replay op of a stream's process op (fork, exit, mmap, munmap, madvise) run by the innermost
/// of `procs`, which it updates; `None` for any other op.
fn process_op(
    m: &Machine,
    procs: &mut Vec<Process>,
    root: u32,
    anon: &mut BTreeMap<(u32, u32), u64>,
    anon_pages: &mut u64,
    op: &Op,
) -> Result<Option<ReplayOp>, String> {
    let top = procs.last_mut().expect("a process");
    let out = match *op {
        Op::Fork { child, .. } => {
            let mut p = top.clone();
            p.mm = child;
            procs.push(p);
            ReplayOp::Fork
        }
        Op::Exit { task } => {
            if procs.len() < 2 {
                return Err(format!("the exit of the stream's own task {task}"));
            }
            procs.pop();
            ReplayOp::Exit
        }
        Op::Mmap {
            task, vpn, pages, file, ..
        } => {
            if file != lrugen::workload::ANON_FILE {
                return Err(format!("an mmap of file {file} by task {task}"));
            }
            let region = top.next_region;
            if u64::from(region) + 1 >= lrugen_replay::MAX_REGIONS {
                return Err(format!(
                    "more than {} mmaps in one process",
                    lrugen_replay::MAX_REGIONS - 2
                ));
            }
            top.next_region += 1;
            top.regions.insert(vpn, (region, pages));
            ReplayOp::Mmap {
                region,
                pages: u64::from(pages),
            }
        }
        Op::Munmap { vpn, pages, .. } => {
            let (region, first) = region_range(m, top, root, anon, anon_pages, vpn, pages)?;
            top.unmapped.push((vpn, vpn + pages));
            if region > 0 && first == 0 && top.regions.get(&vpn).is_some_and(|r| r.1 == pages) {
                top.regions.remove(&vpn);
            }
            ReplayOp::Munmap { region, first, pages }
        }
        Op::Mbind { vpn, pages, node, .. } => {
            let (region, first) = region_range(m, top, root, anon, anon_pages, vpn, pages)?;
            ReplayOp::Mbind {
                region,
                node: if node == lrugen::mm::vm::MPOL_DEFAULT {
                    lrugen_replay::MBIND_DEFAULT
                } else {
                    u16::from(node)
                },
                first,
                pages,
            }
        }
        Op::Madvise { vpn, pages, advice, .. } => {
            let (region, first) = region_range(m, top, root, anon, anon_pages, vpn, pages)?;
            ReplayOp::Madvise {
                region,
                advice: replay_advice(advice),
                first,
                pages,
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}

/// The op file's advice for the model's.
fn replay_advice(a: lrugen::workload::Madv) -> lrugen_replay::Advice {
    use lrugen::workload::Madv;
    use lrugen_replay::Advice;
    match a {
        Madv::Normal => Advice::Normal,
        Madv::Random => Advice::Random,
        Madv::Sequential => Advice::Sequential,
        Madv::DontNeed => Advice::DontNeed,
        Madv::Cold => Advice::Cold,
        Madv::PageOut => Advice::PageOut,
        Madv::HugePage => Advice::HugePage,
        Madv::NoHugePage => Advice::NoHugePage,
    }
}

/// The op file's memcgs of tasks whose address spaces are in `memcgs`: none when they share one
/// (the workload memcg), else their names, each a child of one parent (a mix whose parts name
/// their memcgs). Anything else the guest's `/init` cannot make.
fn task_memcg_names(m: &Machine, memcgs: &[MemcgId]) -> Result<Vec<String>, Error> {
    if memcgs.windows(2).all(|w| w[0] == w[1]) {
        return Ok(Vec::new());
    }
    let parent = m.memcgs[memcgs[0]].parent;
    memcgs
        .iter()
        .map(|&c| {
            let mc = &m.memcgs[c];
            let name = mc.path.rsplit('/').next().unwrap_or("");
            if mc.parent != parent || parent.is_none() || !lrugen_replay::valid_memcg_name(name) {
                return Err(Error::Config(format!(
                    "the tasks run in memcgs the guest cannot make ({}): expected children of one memcg",
                    memcgs
                        .iter()
                        .map(|&c| m.memcgs[c].path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            Ok(name.to_string())
        })
        .collect()
}

/// An experiment's workload as an op file: its streams generated as `sim::run` generates them
/// (`sim::task_streams` on a machine built by `sim::build_machine` from `cfg`, with `cfg.seed`:
/// one stream per task, `jobs` copies of the workload, each part of a mix as many times as it
/// says, a YCSB job's clients and an fio job's in-flight I/Os as tasks of their own), then
/// [`from_streams`], one replay task (a process) per stream.
pub fn experiment_ops(cfg: &lrugen::sim::RunConfig, window: u64) -> Result<OpFile, Error> {
    let (mut m, t): (Machine, MemcgId) = lrugen::sim::build_machine(cfg).map_err(|e| Error::Config(e.to_string()))?;
    let streams = lrugen::sim::task_streams(cfg, &mut m, t, None).map_err(|e| Error::Config(e.to_string()))?;
    let steps: Vec<Vec<TaskStep>> = streams
        .into_iter()
        .map(|mut s| {
            let mut v = Vec::new();
            while let Some(step) = s.next() {
                let last = s.request().is_some_and(|r| r.last);
                v.push((step, last));
            }
            v
        })
        .collect();
    let think = cfg.engine.as_ref().map_or(0, |e| e.think_ns);
    let mut ops = from_streams(&m, steps, window, think)?;
    if let Some(t) = cfg.machine.tiers.as_ref().filter(|t| !t.placement.is_empty()) {
        let anon_vmas = |mm: &lrugen::mm::vm::MmStruct| mm.vmas.iter().filter(|v| v.is_anon()).count();
        if m.mms.iter().any(|mm| anon_vmas(mm) > 1) {
            return Err(Error::Config(
                "[machine.tiers] placement: the guest places a task's one anonymous region (its op file's region 0); \
                 this workload maps more than one"
                    .into(),
            ));
        }
        add_placement(&mut ops, &t.placement)?;
    }
    Ok(ops)
}

/// `[machine.tiers] placement` as `mbind` ops (version 8) of each task's anon region (region 0,
/// one anonymous mapping in the model): before the task's first op, an `mbind … preferred NODE`
/// per rule over the pages the model's placement gives that node
/// ([`lrugen::mm::tiers::Tiers::place`]: the first rule with `from <= i / pages < to`; written
/// in reverse so that the first rule's policy is the one a page keeps), and right after the `w`
/// that ends the populate pass, `mbind 0 0 PAGES default`: the pages stay where the populate
/// pass put them, and NUMA balancing may migrate them (a VMA policy without `MPOL_F_MOF` is not
/// migrated on a hint fault, `mpol_misplaced`), swap-ins allocate on the CPU's node, as the
/// model's do. A task with anon memory and no populate pass (no `w`) is an error: its faults
/// would be measured under the placement, which the kernel's would not keep.
pub fn add_placement(ops: &mut OpFile, rules: &[lrugen::mm::tiers::Placement]) -> Result<(), Error> {
    let place = |pages: u64| -> Vec<ReplayOp> {
        let mut v = Vec::new();
        let at = |i: u64| i as f64 / pages as f64;
        for r in rules.iter().rev() {
            let first = (0..pages).find(|&i| at(i) >= r.from).unwrap_or(pages);
            let end = (first..pages).find(|&i| at(i) >= r.to).unwrap_or(pages);
            if end > first {
                v.push(ReplayOp::Mbind {
                    region: 0,
                    node: r.node as u16,
                    first: first as u32,
                    pages: (end - first) as u32,
                });
            }
        }
        v
    };
    let fix = |i: usize, pages: u64, list: &mut Vec<ReplayOp>| -> Result<(), Error> {
        if pages == 0 {
            return Ok(());
        }
        let w = list.iter().position(|o| *o == ReplayOp::MeasureStart).ok_or_else(|| {
            Error::Config(format!(
                "task {i}: [machine.tiers] placement needs a populate pass before the measured accesses"
            ))
        })?;
        list.insert(
            w + 1,
            ReplayOp::Mbind {
                region: 0,
                node: lrugen_replay::MBIND_DEFAULT,
                first: 0,
                pages: pages as u32,
            },
        );
        let mut head = place(pages);
        head.append(list);
        *list = head;
        Ok(())
    };
    fix(0, ops.anon_pages, &mut ops.ops)?;
    for (i, t) in ops.tasks.iter_mut().enumerate() {
        fix(i + 1, t.anon_pages, &mut t.ops)?;
    }
    Ok(())
}

/// The CPUs an experiment's engine runs its tasks on (the guest's `-smp`): its `[engine] cpus`,
/// or 1 without the engine.
pub fn experiment_cpus(cfg: &lrugen::sim::RunConfig) -> u32 {
    cfg.engine.as_ref().map_or(1, |e| e.cpus.max(1))
}
/// The control files and actions a control script may have in `lrugen kernel --ctl` (the
/// replayer's control ops: [`lrugen_replay::CtlTarget`]).
pub const GUEST_CTL: &str = "writes of lru_gen and memory.reclaim and reads of lru_gen, lru_gen_full, \
                             memory.stat and vmstat, of the workload memcg, at measured accesses (`at`, `every`)";

/// `ops` with the actions of control script `script` (`lrugen run --ctl`'s format, docs/control.md)
/// as control ops at their places: an action at `at = N` (and every `every` after it) runs right
/// after the op that is the N-th measured access (N = 0: before the first op), as the model's
/// control script runs it after that step; actions due at one place run in the script's order.
/// The guest can do [`GUEST_CTL`] only: any other file, a `memcg`, `mkdir`/`rmdir`, `at_step` or
/// `at_ms`, a place beyond the workload's measured accesses, an op file of several tasks or one
/// whose task runs in a child memcg (`lrugen-ops 4`) is an
/// error naming the script's line.
pub fn add_ctl(ops: &OpFile, script: &lrugen::control::Script, name: &str) -> Result<OpFile, Error> {
    use lrugen::control::{CtlFile, Unit};
    use lrugen_replay::{CtlOp, CtlTarget};
    if script.actions.is_empty() {
        return Ok(ops.clone());
    }
    if ops.nr_tasks() > 1 {
        return Err(Error::Config(format!(
            "{name}: control actions in a workload of {} tasks: the guest runs them in a one-task replay only",
            ops.nr_tasks()
        )));
    }
    if let Some(m) = ops.memcgs.first() {
        return Err(Error::Config(format!(
            "{name}: control actions in a workload that runs in memcg {m} below the workload memcg: the \
             guest's replayer would write its own memcg's memory.reclaim, the model the workload memcg's"
        )));
    }
    let measuring_from = ops.ops.iter().position(|o| *o == ReplayOp::MeasureStart);
    let is_access = |o: &ReplayOp| {
        matches!(
            o,
            ReplayOp::Read { .. }
                | ReplayOp::Write { .. }
                | ReplayOp::MmapLoad { .. }
                | ReplayOp::Load { .. }
                | ReplayOp::Store { .. }
        )
    };
    // the op index after which measured access n (1-based) is done: after[n - 1]
    let after: Vec<usize> = ops
        .ops
        .iter()
        .enumerate()
        .filter(|(i, o)| measuring_from.is_none_or(|w| *i > w) && is_access(o))
        .map(|(i, _)| i + 1)
        .collect();
    let total = after.len() as u64;
    // (op index to insert before, action index, control op)
    let mut at: Vec<(usize, usize, CtlOp)> = Vec::new();
    for (ai, a) in script.actions.iter().enumerate() {
        let err = |why: String| Error::Config(format!("{name}:{}: {why}", a.line));
        if a.when.unit != Unit::Accesses {
            return Err(err(format!(
                "`{}`: the guest places actions by measured accesses only (`at`, `every`)",
                if a.when.unit == Unit::Steps { "at_step" } else { "at_ms" }
            )));
        }
        if a.memcg.is_some() {
            return Err(err(format!(
                "`memcg`: the guest writes and reads the workload memcg's files only ({GUEST_CTL})"
            )));
        }
        let file = match (a.file, a.write.is_some()) {
            (CtlFile::LruGen, _) => CtlTarget::LruGen,
            (CtlFile::LruGenFull, false) => CtlTarget::LruGenFull,
            (CtlFile::MemoryReclaim, true) => CtlTarget::MemoryReclaim,
            (CtlFile::MemoryStat, false) => CtlTarget::MemoryStat,
            (CtlFile::Vmstat, false) => CtlTarget::Vmstat,
            (f, w) => {
                return Err(err(format!(
                    "{} {}: the guest replayer cannot do it; it does {GUEST_CTL}",
                    if w { "a write of" } else { "a read of" },
                    f.name()
                )))
            }
        };
        if a.when.at > total {
            return Err(err(format!(
                "at = {}: beyond the workload's {total} measured accesses",
                a.when.at
            )));
        }
        let mut n = a.when.at;
        loop {
            let pos = if n == 0 { 0 } else { after[n as usize - 1] };
            at.push((
                pos,
                ai,
                CtlOp {
                    file,
                    write: a.write.clone(),
                },
            ));
            match a.when.every {
                Some(e) if n + e <= total => n += e,
                _ => break,
            }
        }
    }
    at.sort_by_key(|x| (x.0, x.1));
    let mut out = OpFile {
        ops: Vec::with_capacity(ops.ops.len() + at.len()),
        ..ops.clone()
    };
    let mut next = at.into_iter().peekable();
    for i in 0..=ops.ops.len() {
        while let Some((_, _, op)) = next.next_if(|x| x.0 == i) {
            out.ops.push(ReplayOp::Ctl {
                id: out.ctl.len() as u32,
            });
            out.ctl.push(op);
        }
        if let Some(o) = ops.ops.get(i) {
            out.ops.push(*o);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lrugen_replay::{CtlOp, CtlTarget};

    fn script(text: &str) -> lrugen::control::Script {
        lrugen::control::Script::parse(text, std::path::Path::new("s.toml")).unwrap()
    }

    /// A populate pass, `w`, then three measured reads.
    fn base() -> OpFile {
        OpFile::parse("lrugen-ops 1\nfile 0 f 8\nanon 2\ns 0\ns 1\nw 0\nr 0 1\nr 0 2\nr 0 3\n").unwrap()
    }

    #[test]
    fn actions_go_after_the_measured_access_they_name() {
        let s = script(
            "[[action]]\nat = 2\nwrite = \"lru_gen\"\nvalue = \"+ {memcg} 0 {max_seq}\"\n\
             [[action]]\nat = 0\nread = \"lru_gen_full\"\n\
             [[action]]\nat = 1\nevery = 1\nwrite = \"memory.reclaim\"\nvalue = \"1M\"\n",
        );
        let o = add_ctl(&base(), &s, "s.toml").unwrap();
        let c = |id| ReplayOp::Ctl { id };
        let (r1, r2, r3) = (
            ReplayOp::Read { file: 0, index: 1 },
            ReplayOp::Read { file: 0, index: 2 },
            ReplayOp::Read { file: 0, index: 3 },
        );
        let (s0, s1) = (ReplayOp::Store { vpn: 0 }, ReplayOp::Store { vpn: 1 });
        // at 0: before the first op; at 1, 2, 3: after that measured read; at 2 in the order of
        // the script (the lru_gen write first)
        assert_eq!(
            o.ops,
            [c(0), s0, s1, ReplayOp::MeasureStart, r1, c(1), r2, c(2), c(3), r3, c(4)]
        );
        let w = |file, t: &str| CtlOp {
            file,
            write: Some(t.into()),
        };
        assert_eq!(
            o.ctl,
            [
                CtlOp {
                    file: CtlTarget::LruGenFull,
                    write: None
                },
                w(CtlTarget::MemoryReclaim, "1M"),
                w(CtlTarget::LruGen, "+ {memcg} 0 {max_seq}"),
                w(CtlTarget::MemoryReclaim, "1M"),
                w(CtlTarget::MemoryReclaim, "1M"),
            ]
        );
        assert_eq!(o.version(), 3);
        assert_eq!(OpFile::parse(&o.to_text()).unwrap(), o);
        // no actions: the op file unchanged
        assert_eq!(add_ctl(&base(), &script(""), "s.toml").unwrap(), base());
    }

    /// Reads of `memory.stat` and `vmstat` become the replayer's version-6 control ops, and the
    /// file is written as version 6.
    #[test]
    fn reads_of_counters_files_are_version_6_ops() {
        let s =
            script("[[action]]\nat = 1\nevery = 2\nread = \"memory.stat\"\n[[action]]\nat = 2\nread = \"vmstat\"\n");
        let o = add_ctl(&base(), &s, "s.toml").unwrap();
        let r = |file| CtlOp { file, write: None };
        assert_eq!(
            o.ctl,
            [r(CtlTarget::MemoryStat), r(CtlTarget::Vmstat), r(CtlTarget::MemoryStat)]
        );
        assert_eq!(o.version(), 6);
        let text = o.to_text();
        assert!(text.starts_with("lrugen-ops 6\n"), "{text}");
        assert!(
            text.contains("\ncr memory.stat\n") && text.contains("\ncr vmstat\n"),
            "{text}"
        );
        assert_eq!(OpFile::parse(&text).unwrap(), o);
    }

    #[test]
    fn what_the_guest_cannot_do_is_refused_naming_the_line() {
        for (text, expect) in [
            (
                "[[action]]\nat = 1\nwrite = \"memory.max\"\nvalue = \"1M\"\n",
                "s.toml:1: a write of memory.max: the guest replayer cannot do it",
            ),
            (
                "[[action]]\nat = 1\nread = \"memory.events\"\n",
                "s.toml:1: a read of memory.events",
            ),
            (
                "\n[[action]]\nat_step = 1\nread = \"lru_gen\"\n",
                "s.toml:2: `at_step`: the guest places actions by measured accesses only",
            ),
            ("[[action]]\nat_ms = 1\nread = \"lru_gen\"\n", "`at_ms`"),
            ("[[action]]\nat = 1\nmkdir = \"a\"\n", "a write of mkdir"),
            (
                "[[action]]\nat = 1\nmemcg = \"a\"\nread = \"lru_gen\"\n",
                "`memcg`: the guest writes and reads the workload memcg's files only",
            ),
            (
                "[[action]]\nat = 4\nread = \"lru_gen\"\n",
                "at = 4: beyond the workload's 3 measured accesses",
            ),
        ] {
            let e = add_ctl(&base(), &script(text), "s.toml").unwrap_err().to_string();
            assert!(e.contains(expect), "{text}: {e}");
        }
        let two = OpFile::parse("lrugen-ops 2\nfile 0 f 8\ntask 0\nr 0 1\ntask 1\nr 0 2\n").unwrap();
        let e = add_ctl(&two, &script("[[action]]\nat = 1\nread = \"lru_gen\"\n"), "s.toml").unwrap_err();
        assert!(e.to_string().contains("a workload of 2 tasks"), "{e}");
        let child = OpFile::parse("lrugen-ops 4\nfile 0 f 8\ntask 0 memcg a\nr 0 1\n").unwrap();
        let e = add_ctl(&child, &script("[[action]]\nat = 1\nread = \"lru_gen\"\n"), "s.toml").unwrap_err();
        assert!(
            e.to_string().contains("runs in memcg a below the workload memcg"),
            "{e}"
        );
    }
}

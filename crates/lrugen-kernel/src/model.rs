// SPDX-License-Identifier: GPL-2.0-only
//! The model side of `lrugen kernel`: an op file replayed on lrugen's simulated machine exactly as
//! the guest replays it (one process; files opened `POSIX_FADV_RANDOM` and mapped shared,
//! read-only and `MADV_RANDOM`, or `NORMAL` both, as their `file` lines say; one private
//! anonymous region), sampled at the replayer's window
//! boundaries (every `window` measured accesses, and at the end).

use crate::report::Settings;
use crate::Error;
use lrugen::kernel::Kernel;
use lrugen::mm::memcg::MemcgId;
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vm::vmf;
use lrugen::mm::Machine;
use lrugen::mm::{MachineConfig, StepClock};
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::Mglru;
use lrugen::reclaim::mglru::{MglruConfig, Profile};
use lrugen::sim::MemcgConfig;
use lrugen::sim::{self, KernelRunOptions, PolicyKind, RunConfig, RunResult};
use lrugen::workload::WorkloadSpec;
use lrugen::workload::{Op, Step, Stream};
use lrugen_replay::{CtlTarget, FileAdvice, OpFile, ReplayOp};
use std::collections::BTreeMap;

/// Where the guest put the replayer's mappings, as far as reclaim can tell: each mapping's first
/// page within its PMD table (address / 4 KiB mod 512). MGLRU's page-table walk keeps its Bloom
/// filter and its "one young PTE per cache line" test per PMD table, and look-around's window
/// stops at the PMD's bounds, so which pages share a table changes what aging and eviction find
/// young (the 6.12 MGLRU `anon-gauss` shape's misses move by 3 % over offsets in the model). The
/// guest's `mmap` places a mapping at a random page offset (ASLR; no THP alignment for sizes that
/// are not multiples of 2 MiB from 6.12), so the model reads it off the replayer's
/// `/proc/self/smaps` ([`Layout::from_smaps`]); without one, mappings start PMD-aligned.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The anon region's offset in its PMD table, pages.
    pub anon: Option<u32>,
    /// Where the replayer's op list lies against the anon region ([`OpListPlace`]).
    pub op_list: OpListPlace,
    /// Each mmapped file's (by the op file's path) offset in its PMD table, pages.
    pub files: BTreeMap<String, u32>,
    /// The pages of the replayer's `[heap]` (its `Rss` plus `Swap`: every page it wrote, resident
    /// or swapped out), when the smaps shows them. The heap is what the replayer's allocator
    /// (glibc's, linked statically) left there, and it depends on the op file's text: a text
    /// under glibc's mmap threshold (128 KiB) is read into the heap, parsed and freed, and its
    /// pages and those of the op list's first, smaller allocations stay resident, never touched
    /// again; a larger text is mapped and unmapped. [`crate::REPLAYER_HEAP_PAGES`] without it.
    pub heap_pages: Option<u64>,
    /// The page tables the guest's replayer has, when the smaps shows where all the workload's
    /// mappings are: the model charges them instead of its per-address-space estimate
    /// ([`lrugen::mm::KmemConfig::mm_pgtable_pages`], `mm_pud_pages`).
    pub pgtables: Option<ReplayerPageTables>,
    /// The guest's clock over the replay, when the capture recorded it: (measured accesses, guest
    /// `CLOCK_MONOTONIC` ns since the start of measurement) at the end of each window. The model
    /// then spends each window's time evenly over its steps instead of [`GUEST_CLOCK`]'s
    /// per-kind costs, so its statistics flusher (every 2 s) and rate-limited flushes fall where
    /// the kernel's did, to within a window: a disk read's virtual time is anything from 0.3 to
    /// 150 ms over boots and kernels (the traces' `index-mixed`: 0.84 s for the whole replay on
    /// 6.12 and 7.2, 305 s on 6.1), and from 6.12 the classic LRU deactivates and tests refaults
    /// only on flushed statistics (`reclaim_ratelimited_stats_flush`). Empty: [`GUEST_CLOCK`]
    /// (before the first measured step too).
    pub guest_clock: Vec<(u64, u64)>,
    /// The pages of the data disk's ext4 metadata the replay's first file access reads into the
    /// block device's page cache and the filesystem keeps ([`crate::data_disk_metadata_pages`],
    /// by the kernel that ran); 0 before [`Layout::with_kernel`].
    pub bdev_metadata_pages: u64,
    /// The guest's vCPUs (`-smp`; 0 or 1: one). The model runs task `i` of a multi-task replay on
    /// CPU `i mod cpus` (the setup on CPU 0), so that each task charges through its own CPU's
    /// memcg charge stock and swap slot cache, as the guest's tasks, one per vCPU, do.
    pub cpus: u32,
}

/// The page tables of the guest's replayer, counted off its `smaps` as the kernel allocates them:
/// a PTE table for every 2 MiB-aligned range of addresses that holds a page the process touched
/// (a mapping with `Rss` or `Swap` above 0: a page faulted in, resident or swapped out; the
/// kernel frees no page table while the process lives), a PMD table for every 1 GiB range, a PUD
/// table for every 512 GiB range (and one PGD). Which of them `memory.stat` `pagetables` shows is
/// the kernel's (the profile's `pud_pgtable_stats`, `pgd_pgtable_stats`):
/// [`Self::pagetables`]. A mapping that only partly spans a range it did not touch counts it
/// anyway (smaps has one count per mapping): one table too many in a few of the shapes' captures,
/// none in the traces'.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayerPageTables {
    /// PTE tables of the workload's mappings (its anon region, its mmapped files): the ones the
    /// model allocates itself, for the same mappings at the same offsets ([`Layout`]).
    pub workload_pte: u64,
    /// PTE tables of the replayer's own mappings (its binary's, its heap, stack, op list, vDSO)
    /// that no workload mapping shares.
    pub own_pte: u64,
    /// PMD tables (every mapping's, the workload's too).
    pub pmd: u64,
    /// PUD tables.
    pub pud: u64,
}

impl ReplayerPageTables {
    /// The kernel's `memory.stat` `pagetables` of the replayer, pages: its PTE and PMD tables,
    /// its PUD tables if `pud` (6.7 on), its PGD if `pgd` (6.14 on).
    pub fn pagetables(&self, pud: bool, pgd: bool) -> u64 {
        self.workload_pte + self.own_pte + self.pmd + if pud { self.pud } else { 0 } + u64::from(pgd)
    }
}

/// Where the guest's replayer has its op list (the `Vec` of its parsed ops, an anonymous mapping
/// of its own once glibc's doubling takes it over the mmap threshold) against the anon region,
/// which it maps afterwards: `mmap` places mappings top-down, so the region usually ends where the
/// op list starts, and the two share the PTE table at that boundary (every `anon-gauss` capture
/// of the shapes). Which pages share a table changes what MGLRU's walk and look-around find
/// (`walk_mm` walks a shared table once, for both mappings), so the model maps the op list where
/// the guest had it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpListPlace {
    /// In a mapping of its own, with the replayer's fixed pages, PMD-aligned after the
    /// workload's mappings: no smaps said otherwise (or there is no anon region).
    #[default]
    Own,
    /// In a mapping of its own starting right where the anon region ends.
    After,
    /// In the anon region's own mapping, after its pages: the kernel merged the two (a region
    /// mapped right below an op list mapping with no anon_vma yet).
    Merged,
}

/// Pages per PMD table (x86-64: 2 MiB / 4 KiB).
const PTRS_PER_PMD: u32 = 512;

/// One mapping of a `smaps` text: its addresses, its path if any, and the KiB of it the process
/// touched (`Rss` plus `Swap`: above 0 when a page of it was faulted in).
struct SmapsVma<'a> {
    start: u64,
    end: u64,
    path: Option<&'a str>,
    kb: u64,
    /// `Rss:` or `Swap:` lines seen.
    counted: bool,
}

impl Layout {
    /// The layout of `ops`'s mappings in a replayer's `smaps` text: the anon region is the
    /// anonymous mapping (no path) of exactly its size, a file's mapping the one whose path ends
    /// with the file's. An anon region mapped right below the replayer's op list (its `Vec`, in a
    /// mapping of its own when glibc's doubling takes it over the mmap threshold; `mmap` places
    /// mappings top-down) is merged with it into one mapping by the kernel: without a mapping of
    /// its size, the region is the first pages of an anonymous mapping larger by what the op list
    /// can take (its bytes to twice them, plus a page). Mappings not found are left PMD-aligned;
    /// one task only (a multi-task replay's tasks are processes of their own).
    pub fn from_smaps(smaps: &str, ops: &OpFile) -> Layout {
        let mut l = Layout::default();
        if ops.nr_tasks() > 1 {
            return l;
        }
        let mut vmas: Vec<SmapsVma> = Vec::new();
        for line in smaps.lines() {
            let mut f = line.split_whitespace();
            let first = f.next();
            if let (Some(v), Some("Rss:" | "Swap:")) = (vmas.last_mut(), first) {
                v.kb += f.next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                v.counted = true;
                continue;
            }
            let Some((a, b)) = first.and_then(|r| r.split_once('-')) else {
                continue;
            };
            let (Ok(start), Ok(end)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) else {
                continue;
            };
            // perms, offset, dev, inode, then the path if any
            let rest: Vec<&str> = f.collect();
            if rest.len() < 4 || end <= start {
                continue;
            }
            vmas.push(SmapsVma {
                start,
                end,
                path: rest.get(4).copied(),
                kb: 0,
                counted: false,
            });
        }
        let off = |addr: u64| ((addr >> 12) % PTRS_PER_PMD as u64) as u32;
        let pages = |v: &SmapsVma| (v.end - v.start) >> 12;
        // the workload's parts of mappings: (index in vmas, its pages from the mapping's start)
        let mut workload: Vec<(usize, u64)> = Vec::new();
        if ops.anon_pages > 0 {
            let list = ops.ops.len() as u64 * std::mem::size_of::<ReplayOp>() as u64;
            let merged = |v: &SmapsVma| {
                let extra = pages(v).saturating_sub(ops.anon_pages);
                list >= 64 << 10 && extra >= list.div_ceil(4096) && extra <= (2 * list).div_ceil(4096) + 1
            };
            let list_pages = list.div_ceil(4096);
            // the op list's own mapping: its bytes to twice them (glibc's doubling), plus a page
            let holds_list =
                |v: &SmapsVma| v.path.is_none() && pages(v) >= list_pages && pages(v) <= (2 * list).div_ceil(4096) + 1;
            let exact = vmas.iter().position(|v| v.path.is_none() && pages(v) == ops.anon_pages);
            let anon = exact.or_else(|| vmas.iter().position(|v| v.path.is_none() && merged(v)));
            if let Some(i) = anon {
                l.anon = Some(off(vmas[i].start));
                workload.push((i, ops.anon_pages));
                l.op_list = if exact.is_none() {
                    OpListPlace::Merged
                } else if vmas.get(i + 1).is_some_and(|v| v.start == vmas[i].end && holds_list(v)) {
                    OpListPlace::After
                } else {
                    OpListPlace::Own
                };
            }
        }
        // the files the model maps (those the ops load through a mapping), and of them found
        let mmapped = |id: u32| {
            ops.ops
                .iter()
                .any(|o| matches!(o, ReplayOp::MmapLoad { file, .. } if *file == id))
        };
        let mut mapped = 0;
        for file in &ops.files {
            let suffix = format!("/{}", file.path);
            if let Some(i) = vmas
                .iter()
                .position(|v| v.path.is_some_and(|p| p.ends_with(&suffix)) && pages(v) == file.pages)
            {
                l.files.insert(file.path.clone(), off(vmas[i].start));
                if mmapped(file.id) {
                    workload.push((i, file.pages));
                    mapped += 1;
                }
            }
        }
        if let Some(h) = vmas.iter().find(|v| v.path == Some("[heap]") && v.counted) {
            l.heap_pages = Some(h.kb / 4);
        }
        let found = vmas.iter().any(|v| v.kb > 0)
            && (ops.anon_pages == 0 || l.anon.is_some())
            && mapped == ops.files.iter().filter(|file| mmapped(file.id)).count();
        if found {
            l.pgtables = Some(page_tables(&vmas, &workload));
        }
        l
    }
}

impl Layout {
    /// This layout as the model uses it for the replay of a trace (`trace`) or of another
    /// workload: the replayer's page tables read off the smaps ([`Self::pgtables`]) for a trace's
    /// only. On the shapes' fixtures (built-in workloads in 32 MiB memcgs) they give the model the
    /// kernel's page tables too, but they moved the misses of MGLRU `anon-gauss` both ways (6.12:
    /// +1.6 to +1.5 %, into its tolerance; 7.2: -2.2 to -3.0 %, out of it; a page of capacity
    /// moves single boots by up to 150 misses there; measured before [`OpListPlace`]), so those keep the per-address-space
    /// estimate they were calibrated with ([`lrugen::mm::KmemConfig::kernel`]) until the rest
    /// of their kernel memory is.
    pub fn for_replay(mut self, trace: bool) -> Layout {
        if !trace {
            self.pgtables = None;
        }
        self
    }

    /// With the guest's vCPUs ([`Layout::cpus`]).
    pub fn with_cpus(mut self, cpus: u64) -> Layout {
        self.cpus = u32::try_from(cpus).unwrap_or(u32::MAX);
        self
    }

    /// With what the kernel `release` that ran puts in the memcg besides the replay's pages: the
    /// data disk's metadata ([`Layout::bdev_metadata_pages`]), which on 6.1 depends on whether
    /// the guest had `swap`.
    pub fn with_kernel(mut self, release: &str, swap: bool) -> Layout {
        self.bdev_metadata_pages = crate::data_disk_metadata_pages(release, swap);
        self
    }

    /// With [`Layout::guest_clock`] read off the capture's `windows` (one task only, and only
    /// when every window has its time: fixtures made before it was recorded have none).
    pub fn with_guest_clock(mut self, windows: &[crate::Window], ops: &OpFile) -> Layout {
        self.guest_clock.clear();
        if ops.nr_tasks() > 1 || windows.is_empty() || windows.iter().any(|w| w.ns == 0) {
            return self;
        }
        let mut accesses = 0;
        let mut last = 0;
        for w in windows {
            if w.ns < last {
                self.guest_clock.clear();
                return self;
            }
            accesses += w.accesses;
            last = w.ns;
            self.guest_clock.push((accesses, w.ns));
        }
        self
    }
}

/// [`ReplayerPageTables`] of the mappings `vmas`, of which `workload` are the workload's (index,
/// and its pages from the mapping's start; any rest of the mapping is the replayer's).
fn page_tables(vmas: &[SmapsVma], workload: &[(usize, u64)]) -> ReplayerPageTables {
    use std::collections::BTreeSet;
    // the ranges [start, end) covers at a level of `shift` bits
    let ranges = |start: u64, end: u64, shift: u32| (start >> shift)..=((end - 1) >> shift);
    let (mut work, mut own, mut pmd, mut pud) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for (i, v) in vmas.iter().enumerate().filter(|(_, v)| v.kb > 0) {
        pmd.extend(ranges(v.start, v.end, 30));
        pud.extend(ranges(v.start, v.end, 39));
        let split = match workload.iter().find(|w| w.0 == i) {
            Some(&(_, pages)) => {
                let split = (v.start + (pages << 12)).min(v.end);
                work.extend(ranges(v.start, split, 21));
                split
            }
            None => v.start,
        };
        if split < v.end {
            own.extend(ranges(split, v.end, 21));
        }
    }
    ReplayerPageTables {
        workload_pte: work.len() as u64,
        own_pte: own.difference(&work).count() as u64,
        pmd: pmd.len() as u64,
        pud: pud.len() as u64,
    }
}

/// `mmap` of `pages` at the next free place of `task` with its first page at `off` within its PMD
/// table (the guest's layout), or PMD-aligned without one.
fn map_at(
    m: &mut Machine,
    task: u32,
    pages: u32,
    flags: u32,
    file: Option<(u32, u32)>,
    off: Option<u32>,
) -> Result<u32, Error> {
    let Some(off) = off else {
        return Ok(m.mmap(task, pages, flags, file));
    };
    let at = (m.mms[task as usize].next_vpn as u64).next_multiple_of(PTRS_PER_PMD as u64) + (off % PTRS_PER_PMD) as u64;
    let at = u32::try_from(at).map_err(|_| Error::Config(format!("no room for a mapping of {pages} pages")))?;
    m.mmap_fixed(task, at, pages, flags, file).map_err(Error::Config)?;
    Ok(at)
}

/// The processes of one replay task as the model follows its process ops (op file version 7): the
/// address space and regions of each live process, the one running the ops (the innermost child)
/// last. A `fork` makes a child of the current process (an address space reserved in its memcg,
/// forked when the step runs), an `exit` tears it down, and `mmap` maps a region at the next
/// PMD-aligned page after the process's mappings (the guest's `mmap` puts it where its layout has
/// room; the model has no smaps of such a short-lived mapping to read the offset from).
struct Procs {
    /// Every live process, innermost last.
    stack: Vec<Proc>,
    memcg: MemcgId,
}

/// A live process of [`Procs`].
#[derive(Clone)]
struct Proc {
    /// Its address space.
    mm: u32,
    /// Its regions by id: (first vpn, first key).
    regions: BTreeMap<u16, (u32, u64)>,
    /// The first page after its mappings.
    next_vpn: u32,
}

impl Procs {
    /// The task's process `mm` in `memcg`, with region 0 at `region0` (first vpn, first key);
    /// mapped after every mapping `m` has for `mm` now.
    fn new(m: &Machine, mm: u32, memcg: MemcgId, region0: Option<(u32, u64)>) -> Procs {
        let regions = region0.map(|r| (0u16, r)).into_iter().collect();
        Procs {
            stack: vec![Proc {
                mm,
                regions,
                next_vpn: m.mms[mm as usize].next_vpn,
            }],
            memcg,
        }
    }

    /// The address space of the process running the ops.
    fn mm(&self) -> u32 {
        self.stack.last().expect("a process").mm
    }

    /// Whether a forked child runs the ops.
    fn in_child(&self) -> bool {
        self.stack.len() > 1
    }

    /// The (first vpn, first key) of region `r` of the current process.
    fn region(&self, r: u16) -> Result<(u32, u64), Error> {
        self.stack
            .last()
            .and_then(|p| p.regions.get(&r).copied())
            .ok_or_else(|| Error::Config(format!("region {r} is not mapped in the process")))
    }

    /// The model's step for `op` and its page key, or `None` for ops that are no process op.
    /// A `mmap` takes its region's keys from `keys`.
    fn step(&mut self, m: &mut Machine, op: ReplayOp, keys: &mut u64) -> Result<Option<(Op, u64)>, Error> {
        let task = self.mm();
        let no_key = u64::from(lrugen::workload::NO_KEY);
        let step = match op {
            ReplayOp::Fork => {
                let child = m.reserve_mm(self.memcg);
                let mut p = self.stack.last().expect("a process").clone();
                p.mm = child;
                self.stack.push(p);
                (Op::Fork { task, child }, no_key)
            }
            ReplayOp::Exit => {
                if !self.in_child() {
                    return Err(Error::Config("an exit outside a forked child".into()));
                }
                self.stack.pop();
                (Op::Exit { task }, no_key)
            }
            ReplayOp::Mmap { region, pages } => {
                let top = self.stack.last_mut().expect("a process");
                let vpn = top.next_vpn.next_multiple_of(PTRS_PER_PMD);
                let pages32 = u32::try_from(pages).map_err(|_| Error::Config(format!("a region of {pages} pages")))?;
                top.next_vpn = vpn
                    .checked_add(pages32)
                    .ok_or_else(|| Error::Config(format!("no room for region {region} of {pages} pages")))?;
                top.regions.insert(region, (vpn, *keys));
                *keys += pages;
                let op = Op::Mmap {
                    task,
                    vpn,
                    pages: pages32,
                    file: lrugen::workload::ANON_FILE,
                    pgoff: 0,
                    flags: vmf::WRITE as u8,
                    compressed_pct: 0,
                };
                (op, no_key)
            }
            ReplayOp::Munmap { region, first, pages } => {
                let (vpn, _) = self.region(region)?;
                (
                    Op::Munmap {
                        task,
                        vpn: vpn + first,
                        pages,
                    },
                    no_key,
                )
            }
            ReplayOp::Madvise {
                region,
                advice,
                first,
                pages,
            } => {
                let (vpn, _) = self.region(region)?;
                (
                    Op::Madvise {
                        task,
                        vpn: vpn + first,
                        pages,
                        advice: madv(advice),
                    },
                    no_key,
                )
            }
            ReplayOp::Mbind {
                region,
                node,
                first,
                pages,
            } => {
                let (vpn, _) = self.region(region)?;
                let node = if node == lrugen_replay::MBIND_DEFAULT {
                    lrugen::mm::vm::MPOL_DEFAULT
                } else {
                    node as u8
                };
                (
                    Op::Mbind {
                        task,
                        vpn: vpn + first,
                        pages,
                        node,
                    },
                    no_key,
                )
            }
            ReplayOp::RegionLoad { region, page } | ReplayOp::RegionStore { region, page } => {
                let (vpn, key) = self.region(region)?;
                let vpn = vpn + page as u32;
                let op = if matches!(op, ReplayOp::RegionLoad { .. }) {
                    Op::Load { task, vpn }
                } else {
                    Op::Store { task, vpn }
                };
                (op, key + page)
            }
            _ => return Ok(None),
        };
        Ok(Some(step))
    }
}

/// The model's advice for an op file's.
fn madv(a: lrugen_replay::Advice) -> lrugen::workload::Madv {
    use lrugen::workload::Madv;
    use lrugen_replay::Advice;
    match a {
        Advice::Normal => Madv::Normal,
        Advice::Random => Madv::Random,
        Advice::Sequential => Madv::Sequential,
        Advice::DontNeed => Madv::DontNeed,
        Advice::Cold => Madv::Cold,
        Advice::PageOut => Madv::PageOut,
        Advice::HugePage => Madv::HugePage,
        Advice::NoHugePage => Madv::NoHugePage,
    }
}

/// Set the op file's process up on `m` in memcg `t` and return its steps and the number of page
/// keys (file pages, then anon pages: key = the page's place in that order).
pub fn steps(ops: &OpFile, m: &mut Machine, t: MemcgId) -> Result<(Vec<Step>, u32), Error> {
    steps_of(ops, m, t, true, &Layout::default(), &mut Vec::new())
}

/// [`steps`], with the replayer's own op list (`replayer`) or the workload alone; the control
/// ops' places go to `ctl_at` as (steps before it, its id).
fn steps_of(
    ops: &OpFile,
    m: &mut Machine,
    t: MemcgId,
    replayer: bool,
    layout: &Layout,
    ctl_at: &mut Vec<(u64, u32)>,
) -> Result<(Vec<Step>, u32), Error> {
    if ops.nr_tasks() > 1 {
        if !ops.ctl.is_empty() {
            return Err(Error::Config(
                "control ops in a multi-task op file: the model places them in the replay of one task only".into(),
            ));
        }
        let meta = if replayer { layout.bdev_metadata_pages } else { 0 };
        return multi_steps(ops, m, t, replayer, meta).map(|(s, n, _)| (s, n));
    }
    let memcg = task_memcgs(ops, m, t)[0];
    let task = m.create_mm(memcg);
    // replay file id -> (model file, first key, vpn of its mapping if mmapped)
    let mut files: BTreeMap<u32, (u32, u64, Option<u32>)> = BTreeMap::new();
    let mut keys = 0u64;
    for f in &ops.files {
        if f.pages > u32::MAX as u64 {
            return Err(Error::Config(format!(
                "file {} of {} pages is too large for the model",
                f.id, f.pages
            )));
        }
        let (advice, vm_flags) = match f.advice {
            FileAdvice::Random => (Advice::Random, vmf::RAND_READ),
            FileAdvice::Normal => (Advice::Normal, 0),
        };
        let id = m.create_file(&f.path, f.pages, advice);
        let mapped = ops
            .ops
            .iter()
            .any(|o| matches!(o, ReplayOp::MmapLoad { file, .. } if *file == f.id));
        let off = layout.files.get(&f.path).copied();
        let base = if mapped {
            Some(map_at(m, task, f.pages as u32, vm_flags, Some((id, 0)), off)?)
        } else {
            None
        };
        files.insert(f.id, (id, keys, base));
        keys += f.pages;
    }
    // The replayer's own memory is anon memory charged to the memcg like the workload's, which
    // reclaim swaps out where there is swap. Its fixed pages (binary data, stack, heap) are
    // written as it starts; the hot ones among them are touched all through the replay, one
    // every op in turn, the rest never again. Its op list is written whole before the replay,
    // then read once, in order, a page every OPS_PER_PAGE ops; it lies where the guest had it
    // against the anon region (`Layout::op_list`), the fixed pages in a mapping of their own.
    let heap = layout.heap_pages.unwrap_or(crate::REPLAYER_HEAP_PAGES);
    let fixed = if replayer {
        crate::REPLAYER_FIXED_PAGES - crate::REPLAYER_HEAP_PAGES + heap
    } else {
        0
    };
    let own_pages = if replayer {
        crate::replayer_own_pages(ops) - crate::REPLAYER_FIXED_PAGES + fixed
    } else {
        0
    };
    let list_pages = own_pages - fixed;
    let place = if list_pages > 0 && ops.anon_pages > 0 {
        layout.op_list
    } else {
        OpListPlace::Own
    };
    let anon_key = keys;
    let anon_base = if ops.anon_pages > 0 {
        // `anon N hugepage`: the replayer's madvise(MADV_HUGEPAGE) of the whole fresh mapping
        // sets VM_HUGEPAGE on it (`hugepage_madvise`)
        let flags = if ops.anon_hugepage {
            lrugen::mm::thp::hugepage_madvise(vmf::WRITE, true)
        } else {
            vmf::WRITE
        };
        let merged = if place == OpListPlace::Merged { list_pages } else { 0 };
        Some(map_at(
            m,
            task,
            (ops.anon_pages + merged) as u32,
            flags,
            None,
            layout.anon,
        )?)
    } else {
        None
    };
    keys += ops.anon_pages;
    let hot = if own_pages > 0 { crate::REPLAYER_HOT_PAGES } else { 0 };
    let own_key = keys;
    let list_base = match (place, anon_base) {
        (OpListPlace::Merged, Some(a)) => Some(a + ops.anon_pages as u32),
        (OpListPlace::After, Some(a)) => {
            let at = a + ops.anon_pages as u32;
            m.mmap_fixed(task, at, list_pages as u32, vmf::WRITE, None)
                .map_err(Error::Config)?;
            Some(at)
        }
        _ => None,
    };
    // the mapping of the fixed pages, and of the op list too unless it lies by the region
    let own_mapped = if list_base.is_some() { fixed } else { own_pages };
    let own_base = (own_mapped > 0).then(|| m.mmap(task, own_mapped as u32, vmf::WRITE, None));
    // page `p` of the replayer's own pages (fixed ones first, then the op list)
    let own_vpn = move |base: u32, p: u64| -> u32 {
        match list_base {
            Some(l) if p >= fixed => l + (p - fixed) as u32,
            _ => base + p as u32,
        }
    };
    keys += own_pages;
    if let (Some(base), Some(p)) = (own_base, layout.pgtables) {
        // The replayer's page tables besides the workload's PTE tables are the guest's: those of
        // its own mappings, its PMD and PUD tables. The model's own pages are one mapping, which
        // starts PMD-aligned after the workload's (`mmap`) and gets PTE tables of its own as its
        // pages are written: those count towards the guest's.
        let span = |a: u32, n: u64| {
            if n == 0 {
                0
            } else {
                u64::from((a + n as u32 - 1) / PTRS_PER_PMD - a / PTRS_PER_PMD + 1)
            }
        };
        // an op list by the region shares the region's last table unless it starts a table
        let list_tables = list_base.map_or(0, |l| span(l, list_pages) - u64::from(l % PTRS_PER_PMD != 0));
        let own_tables = span(base, own_mapped) + list_tables;
        let pgd = m.cfg.kmem.mm_pgd_pages;
        m.set_mm_pgtables(task, [(p.own_pte + p.pmd).saturating_sub(own_tables), p.pud, pgd]);
    }
    let meta_key = keys;
    let meta_pages = if replayer && !ops.files.is_empty() {
        layout.bdev_metadata_pages
    } else {
        0
    };
    keys += meta_pages;
    if keys > u32::MAX as u64 {
        return Err(Error::Config(format!("{keys} pages are too many for the model")));
    }
    let mut measure = !ops.ops.contains(&ReplayOp::MeasureStart);
    let mut out = Vec::with_capacity(ops.ops.len() * (1 + usize::from(hot > 0)) + 2 * own_pages as usize);
    if let Some(base) = own_base {
        out.extend((0..own_pages).map(|p| {
            Step::new(
                Op::Store {
                    task,
                    vpn: own_vpn(base, p),
                },
                (own_key + p) as u32,
                false,
            )
        }));
    }
    if meta_pages > 0 {
        out.extend(data_disk_metadata(m, task, meta_key, meta_pages));
    }
    let per_page = (4096 / std::mem::size_of::<ReplayOp>()) as u64;
    let file = |id: u32| {
        files
            .get(&id)
            .copied()
            .ok_or_else(|| Error::Config(format!("file {id} is not declared")))
    };
    // a load (or a store) of the replayer's own page `p` by `task`, not measured
    let own_touch =
        |task: u32, base: u32, p: u64, store: bool| own_page_step(task, own_vpn(base, p), own_key + p, store);
    let mut procs = Procs::new(m, task, memcg, anon_base.map(|b| (b, anon_key)));
    for (i, op) in ops.ops.iter().enumerate() {
        // the process running the op: the task, or a child it forked
        let task = procs.mm();
        if let Some(base) = own_base {
            let i = i as u64;
            if hot > 0 {
                // a forked child writes its copies of the hot stack and data pages
                out.push(own_touch(task, base, i % hot, procs.in_child()));
            }
            if i % per_page == 0 && i / per_page < own_pages - fixed {
                out.push(own_touch(task, base, fixed + i / per_page, false));
            }
        }
        if let Some((op, key)) = procs.step(m, *op, &mut keys)? {
            let access = matches!(op, Op::Load { .. } | Op::Store { .. });
            out.push(Step {
                op,
                key: key as u32,
                measure: measure && access,
                alloc_page_first: replayer && mincore_first(&op),
            });
            continue;
        }
        let (op, key) = match *op {
            ReplayOp::MeasureStart => {
                measure = true;
                continue;
            }
            // one process: no other task to give the time to
            ReplayOp::Think { .. } | ReplayOp::RequestEnd => continue,
            // run by the control script after the steps so far (`ctl_script`)
            ReplayOp::Ctl { id } => {
                ctl_at.push((out.len() as u64, id));
                continue;
            }
            ReplayOp::Read { file: f, index } | ReplayOp::Write { file: f, index } => {
                let (id, k, _) = file(f)?;
                let op = if matches!(op, ReplayOp::Read { .. }) {
                    Op::Read { task, file: id, index }
                } else {
                    Op::Write { task, file: id, index }
                };
                (op, k + index)
            }
            ReplayOp::MmapLoad { file: f, index } => {
                let (_, k, base) = file(f)?;
                let vpn = base.expect("mapped above") + index as u32;
                (Op::Load { task, vpn }, k + index)
            }
            ReplayOp::Load { vpn } | ReplayOp::Store { vpn } => {
                let base = anon_base.ok_or_else(|| Error::Config("an anon access without an anon region".into()))?;
                let v = base + vpn as u32;
                let op = if matches!(op, ReplayOp::Load { .. }) {
                    Op::Load { task, vpn: v }
                } else {
                    Op::Store { task, vpn: v }
                };
                (op, anon_key + vpn)
            }
            _ => unreachable!("process ops are Procs::step's"),
        };
        out.push(Step {
            op,
            key: key as u32,
            measure,
            alloc_page_first: replayer && mincore_first(&op),
        });
    }
    if keys > u32::MAX as u64 {
        return Err(Error::Config(format!("{keys} pages are too many for the model")));
    }
    Ok((out, keys as u32))
}

/// An unmeasured load (or, `store`, a store) by `task` of the replayer's own page at `vpn`, with
/// page key `key`: the replayer touching its stack, data, heap or op list.
fn own_page_step(task: u32, vpn: u32, key: u64, store: bool) -> Step {
    let op = if store {
        Op::Store { task, vpn }
    } else {
        Op::Load { task, vpn }
    };
    Step::new(op, key as u32, false)
}

/// Whether the replayer calls `mincore()` before `op`, taking and freeing a `GFP_USER` page
/// ([`Step::alloc_page_first`]): before each of its accesses (reads, writes, mmap loads, anon
/// loads and stores), to tell a miss; not before its process ops. A 7.2 guest traced with
/// `--ftrace vmscan/mm_vmscan_direct_reclaim_begin --ftrace-stacktrace` (anon-gauss at 1.5x
/// memory) had 120 of its 123 direct reclaims in `__x64_sys_mincore`.
fn mincore_first(op: &Op) -> bool {
    matches!(
        op,
        Op::Read { .. } | Op::Write { .. } | Op::Load { .. } | Op::Store { .. }
    )
}

/// Virtual time an op of a multi-task replay takes in its interleaving of the tasks
/// (`multi_steps`; think time adds its own).
pub const INTERLEAVE_OP_NS: u64 = 1_000;

/// The replayer's own private pages in each process of a multi-task replay: the copies its
/// writes make of the parent's stack, data and heap pages after the fork (the hot ones,
/// [`crate::REPLAYER_HOT_PAGES`]), and its map of touched anon pages (a byte per page of its
/// region), allocated after the fork.
pub fn replayer_task_pages(anon_pages: u64) -> u64 {
    crate::REPLAYER_HOT_PAGES + anon_pages.div_ceil(4096)
}

/// The reads that bring `pages` of the data disk's metadata into the page cache at the replay's
/// first file access ([`crate::data_disk_metadata_pages`]): a file of its own whose buffers the
/// filesystem holds, read by `task` (so charged to its memcg), not measured; keys from `key`.
fn data_disk_metadata(m: &mut Machine, task: u32, key: u64, pages: u64) -> Vec<Step> {
    let id = m.create_file("vda (ext4 metadata)", pages, Advice::Normal);
    m.files[id as usize].bdev_metadata = true;
    m.files[id as usize].buffers_in_bh_lru = true;
    (0..pages)
        .map(|index| Step::new(Op::Read { task, file: id, index }, (key + index) as u32, false))
        .collect()
}

/// The memcg of each task of `ops`: `t`, or the children of `t` the op file names (created here
/// in order of first use, as the guest's `/init` makes them).
fn task_memcgs(ops: &OpFile, m: &mut Machine, t: MemcgId) -> Vec<MemcgId> {
    if ops.memcgs.is_empty() {
        return vec![t; ops.nr_tasks()];
    }
    let mut made: Vec<(&str, MemcgId)> = Vec::new();
    ops.memcgs
        .iter()
        .map(|name| match made.iter().find(|x| x.0 == name) {
            Some(x) => x.1,
            None => {
                let id = m.create_memcg(t, name);
                made.push((name, id));
                id
            }
        })
        .collect()
}

/// The steps of a multi-task op file, as the guest runs it: the parent process (an address space
/// holding the replayer's fixed pages and the whole op list, written as it parses the file, then
/// left alone while it waits) forks one process per task; each (an address space of its own in
/// the memcg, every file the ops map mapped in it as the parent's mappings are inherited) writes
/// its private pages ([`replayer_task_pages`]), then replays its ops, touching its hot pages one
/// an op in turn and reading its part of the parent's op list in order. The tasks' ops are
/// interleaved in a virtual time where every op takes [`INTERLEAVE_OP_NS`] and a think op its
/// time (ties to the lower task): with no think time, one op of each task in turn. In lockstep
/// (`lockstep K`) the interleaving is the guest's rounds: the ops up to each task's `K`-th
/// access of the round, task by task, then the next round (think time then changes nothing:
/// the others wait for the sleeper at the round's end). The third
/// value is the replay task of every step (`u32::MAX` for the setup's).
fn multi_steps(
    ops: &OpFile,
    m: &mut Machine,
    t: MemcgId,
    replayer: bool,
    metadata_pages: u64,
) -> Result<(Vec<Step>, u32, Vec<u32>), Error> {
    let n = ops.nr_tasks();
    // the parent runs in task 0's memcg, each task in its own (guest: `--memcgs`)
    let memcgs = task_memcgs(ops, m, t);
    let parent = m.create_mm(memcgs[0]);
    // each task a process the parent forks inside the memcg
    let mms: Vec<u32> = memcgs.iter().map(|&c| m.create_forked_mm(c)).collect();
    let mut keys = 0u64;
    // replay file id -> (model file, first key, vpn of its mapping in each task's mm)
    let mut files: BTreeMap<u32, (u32, u64, Vec<u32>)> = BTreeMap::new();
    for f in &ops.files {
        if f.pages > u32::MAX as u64 {
            return Err(Error::Config(format!(
                "file {} of {} pages is too large for the model",
                f.id, f.pages
            )));
        }
        let (advice, vm_flags) = match f.advice {
            FileAdvice::Random => (Advice::Random, vmf::RAND_READ),
            FileAdvice::Normal => (Advice::Normal, 0),
        };
        let id = m.create_file(&f.path, f.pages, advice);
        let mapped = ops
            .all_ops()
            .any(|o| matches!(o, ReplayOp::MmapLoad { file, .. } if *file == f.id));
        let bases = if mapped {
            mms.iter()
                .map(|&mm| m.mmap(mm, f.pages as u32, vm_flags, Some((id, 0))))
                .collect()
        } else {
            Vec::new()
        };
        files.insert(f.id, (id, keys, bases));
        keys += f.pages;
    }
    // each task's anon region: (first key, base vpn)
    let mut anon = Vec::with_capacity(n);
    for (i, &mm) in mms.iter().enumerate() {
        let (pages, _) = ops.task(i);
        let flags = if ops.anon_hugepage(i) {
            lrugen::mm::thp::hugepage_madvise(vmf::WRITE, true)
        } else {
            vmf::WRITE
        };
        anon.push((keys, (pages > 0).then(|| m.mmap(mm, pages as u32, flags, None))));
        keys += pages;
    }
    // the parent's own pages: fixed, then the op list (every task's)
    let nr_ops: u64 = (0..n).map(|i| ops.task(i).1.len() as u64).sum();
    let per_page = (4096 / std::mem::size_of::<ReplayOp>()) as u64;
    let (fixed, list) = if replayer {
        (
            crate::REPLAYER_FIXED_PAGES,
            (nr_ops * std::mem::size_of::<ReplayOp>() as u64).div_ceil(4096),
        )
    } else {
        (0, 0)
    };
    let parent_key = keys;
    let parent_base = (fixed + list > 0).then(|| m.mmap(parent, (fixed + list) as u32, vmf::WRITE, None));
    keys += fixed + list;
    // the data disk's metadata: the parent opens the files before it forks the tasks (traced: the
    // block device's pages are added by the parent's pid), so they are charged to its memcg
    let meta_key = keys;
    let meta_pages = if ops.files.is_empty() { 0 } else { metadata_pages };
    keys += meta_pages;
    // each task's private pages
    let mut own = Vec::with_capacity(n);
    for (i, &mm) in mms.iter().enumerate() {
        let pages = if replayer {
            replayer_task_pages(ops.task(i).0)
        } else {
            0
        };
        own.push((
            keys,
            pages,
            (pages > 0).then(|| m.mmap(mm, pages as u32, vmf::WRITE, None)),
        ));
        keys += pages;
    }
    // each task's processes (version 7's forks and regions), after its every mapping above
    let mut procs: Vec<Procs> = mms
        .iter()
        .enumerate()
        .map(|(i, &mm)| Procs::new(m, mm, memcgs[i], anon[i].1.map(|b| (b, anon[i].0))))
        .collect();
    if keys > u32::MAX as u64 {
        return Err(Error::Config(format!("{keys} pages are too many for the model")));
    }
    let mut out = Vec::new();
    let mut owner = Vec::new();
    // the replayer's own page `p` of a mapping at `base` whose first key is `key`
    let store = |task: u32, base: u32, key: u64, p: u64| own_page_step(task, base + p as u32, key + p, true);
    if let Some(base) = parent_base {
        for p in 0..fixed + list {
            out.push(store(parent, base, parent_key, p));
            owner.push(u32::MAX);
        }
    }
    if meta_pages > 0 {
        for step in data_disk_metadata(m, parent, meta_key, meta_pages) {
            out.push(step);
            owner.push(u32::MAX);
        }
    }
    for (i, &(key, pages, base)) in own.iter().enumerate() {
        if let Some(base) = base {
            for p in 0..pages {
                out.push(store(mms[i], base, key, p));
                owner.push(u32::MAX);
            }
        }
    }
    // every task's steps with the virtual time of their op
    let mut timed: Vec<(u64, u32, Step)> = Vec::with_capacity(nr_ops as usize * 2);
    let mut list_at = 0u64; // the task's first op in the parent's op list
    for (i, procs) in procs.iter_mut().enumerate() {
        let (_, tops) = ops.task(i);
        let mut measure = !tops.contains(&ReplayOp::MeasureStart);
        let mut now = 0u64;
        let mut done_accesses = 0u64;
        let hot = if replayer { crate::REPLAYER_HOT_PAGES } else { 0 };
        for (j, op) in tops.iter().enumerate() {
            let at = if ops.lockstep > 0 {
                // the round of this task's next access
                done_accesses / u64::from(ops.lockstep)
            } else {
                now
            };
            done_accesses += u64::from(op.is_access());
            now += INTERLEAVE_OP_NS;
            // the process running the op: the task, or a child it forked
            let mm = procs.mm();
            if let (Some(base), true) = (own[i].2, hot > 0) {
                // a forked child writes its copies of the hot stack and data pages
                let p = j as u64 % hot;
                let s = own_page_step(mm, base + p as u32, own[i].0 + p, procs.in_child());
                timed.push((at, i as u32, s));
            }
            if let Some(base) = parent_base {
                let g = list_at + j as u64;
                if g % per_page == 0 || j == 0 {
                    let p = fixed + g / per_page;
                    timed.push((
                        at,
                        i as u32,
                        own_page_step(parent, base + p as u32, parent_key + p, false),
                    ));
                }
            }
            let (op, key, measured) = if let Some((op, key)) = procs.step(m, *op, &mut keys)? {
                let access = matches!(op, Op::Load { .. } | Op::Store { .. });
                (op, key, measure && access)
            } else {
                let (op, key) = match *op {
                    ReplayOp::MeasureStart => {
                        measure = true;
                        continue;
                    }
                    ReplayOp::RequestEnd => continue,
                    ReplayOp::Ctl { .. } => {
                        return Err(Error::Config(
                            "control ops in a multi-task op file: the model places them in the replay of one task only"
                                .into(),
                        ))
                    }
                    ReplayOp::Think { ns } => {
                        now += ns;
                        continue;
                    }
                    ReplayOp::Read { file: f, index } | ReplayOp::Write { file: f, index } => {
                        let (id, k, _) = files
                            .get(&f)
                            .ok_or_else(|| Error::Config(format!("file {f} is not declared")))?;
                        let op = if matches!(op, ReplayOp::Read { .. }) {
                            Op::Read {
                                task: mm,
                                file: *id,
                                index,
                            }
                        } else {
                            Op::Write {
                                task: mm,
                                file: *id,
                                index,
                            }
                        };
                        (op, k + index)
                    }
                    ReplayOp::MmapLoad { file: f, index } => {
                        let (_, k, bases) = files
                            .get(&f)
                            .ok_or_else(|| Error::Config(format!("file {f} is not declared")))?;
                        (
                            Op::Load {
                                task: mm,
                                vpn: bases[i] + index as u32,
                            },
                            k + index,
                        )
                    }
                    ReplayOp::Load { vpn } | ReplayOp::Store { vpn } => {
                        let (k, base) = anon[i];
                        let base = base
                            .ok_or_else(|| Error::Config(format!("task {i}: an anon access without an anon region")))?;
                        let v = base + vpn as u32;
                        let op = if matches!(op, ReplayOp::Load { .. }) {
                            Op::Load { task: mm, vpn: v }
                        } else {
                            Op::Store { task: mm, vpn: v }
                        };
                        (op, k + vpn)
                    }
                    _ => unreachable!("process ops are Procs::step's"),
                };
                (op, key, measure)
            };
            timed.push((
                at,
                i as u32,
                Step {
                    op,
                    key: key as u32,
                    measure: measured,
                    alloc_page_first: replayer && mincore_first(&op),
                },
            ));
        }
        list_at += tops.len() as u64;
    }
    if keys > u32::MAX as u64 {
        return Err(Error::Config(format!("{keys} pages are too many for the model")));
    }
    // stable: a task's steps of one op keep their order
    timed.sort_by_key(|&(at, i, _)| (at, i));
    for (_, i, s) in timed {
        out.push(s);
        owner.push(i);
    }
    Ok((out, keys as u32, owner))
}

/// What one task of a replay counted (the replayer's `lrugen-replay task` line, or the model's
/// replay of the same task).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TaskCount {
    /// Measured accesses.
    pub accesses: u64,
    /// Of which misses.
    pub misses: u64,
    /// Of which minor faults (first touches of anon pages, whole-page writes of uncached pages).
    pub minor: u64,
    /// Benchmark requests completed while measuring (`q` marks).
    pub requests: u64,
    /// Of which had a miss.
    pub missed_requests: u64,
}

/// [`run`] of a (multi-task) op file, with each task's counts: the model's minor faults per task
/// are what the replayer counts (first touches of the task's anon pages while measuring, as in
/// [`run`], and whole-page writes of uncached pages); requests are counted by the op file's `q` marks, a request missing when one of its
/// ops did.
pub fn run_tasks(ops: &OpFile, cfg: &RunConfig) -> Result<(RunResult, Vec<TaskCount>), Error> {
    run_tasks_at(ops, cfg, &Layout::default())
}

/// The op file of one task replayed as [`run_tasks_at`] does, but under the virtual-time engine
/// `ecfg` ([`sim::run_engine`]): with [`lrugen::sim::engine::KswapdMode::Task`], kswapd runs as a
/// task of its own beside the replay instead of inline when woken, so the replay's allocations
/// race it (docs/global-pressure.md, example `global-engine`). Control ops are not run.
///
/// The swap device is the guest's where `cfg` has one the engine must price as such: a guest
/// that swaps to zram (`cfg.machine.zram_ratio`) swaps to the engine's zram at that ratio, whose
/// compression and decompression are CPU time of the reclaiming and faulting tasks (kswapd's
/// compression takes the CPU from the replayer it shares), whatever `ecfg.swap_device` says;
/// `ecfg.swap_device` prices a swap disk.
pub fn run_engine_at(
    ops: &OpFile,
    cfg: &RunConfig,
    layout: &Layout,
    ecfg: &lrugen::sim::engine::EngineConfig,
) -> Result<RunResult, Error> {
    if ops.nr_tasks() > 1 || !ops.ctl.is_empty() {
        return Err(Error::Config(
            "the engine replays an op file of one task without control ops".into(),
        ));
    }
    let with_zram;
    let ecfg = match cfg.machine.zram_ratio {
        Some(ratio) if ecfg.swap_device.compression_ratio != Some(ratio) => {
            let mut e = ecfg.clone();
            e.swap_device = lrugen::mm::device::DeviceSpec::preset("zram").map_err(Error::Config)?;
            e.swap_device.compression_ratio = Some(ratio);
            with_zram = e;
            &with_zram
        }
        _ => ecfg,
    };
    let (mut m, t) = sim::build_machine(cfg).map_err(|e| Error::Config(e.to_string()))?;
    let (steps, nr) = steps_of(ops, &mut m, t, true, layout, &mut Vec::new())?;
    let stream = vec![Stream::from_steps(steps, nr)];
    let err = |e: sim::RunError| Error::Config(format!("model: {e}"));
    match cfg.policy {
        PolicyKind::Mglru => {
            let p = Mglru::new(&m, cfg.mglru.clone());
            sim::run_engine(Kernel::new(m, p), t, stream, ecfg, None).map_err(err)
        }
        PolicyKind::Classic => {
            let p = Classic::with_profile(&m, cfg.mglru.profile);
            sim::run_engine(Kernel::new(m, p), t, stream, ecfg, None).map_err(err)
        }
        p => Err(Error::Config(format!("policy {} is not a kernel policy", p.name()))),
    }
}

/// [`run_tasks`] with the guest's [`Layout`] of the mappings.
pub fn run_tasks_at(ops: &OpFile, cfg: &RunConfig, layout: &Layout) -> Result<(RunResult, Vec<TaskCount>), Error> {
    // the scheduler slice a woken kswapd waits for is that of a CPU it shares with the replayer;
    // a guest of several vCPUs has one free for it
    let one_cpu;
    let cfg = if layout.cpus > 1 && cfg.machine.sched_slice_ns > 0 {
        let mut c = cfg.clone();
        c.machine.sched_slice_ns = 0;
        one_cpu = c;
        &one_cpu
    } else {
        cfg
    };
    let (mut m, t) = sim::build_machine(cfg).map_err(|e| Error::Config(e.to_string()))?;
    let mut ctl_at = Vec::new();
    let (steps, nr, owner) = if ops.nr_tasks() > 1 {
        multi_steps(ops, &mut m, t, true, layout.bdev_metadata_pages)?
    } else {
        // one process: every measured step is the task's (its own pages' steps are unmeasured)
        let (s, n) = steps_of(ops, &mut m, t, true, layout, &mut ctl_at)?;
        let owner = vec![0; s.len()];
        (s, n, owner)
    };
    let cfg = &with_ctl(cfg, ops, &ctl_at)?;
    let outcomes = std::cell::RefCell::new(Vec::with_capacity(steps.len()));
    let measured: Vec<bool> = steps.iter().map(|s| s.measure).collect();
    let clock = GuestClock::of(&steps, layout);
    // each task on its own CPU of the guest's (the setup and the one-task replay on CPU 0)
    let cpu_of: Vec<u32> = if layout.cpus > 1 && ops.nr_tasks() > 1 {
        owner
            .iter()
            .map(|&o| if o == u32::MAX { 0 } else { o % layout.cpus })
            .collect()
    } else {
        Vec::new()
    };
    let mut r = replay(
        cfg,
        m,
        t,
        Stream::from_steps(steps, nr),
        ops.window,
        Some(&outcomes),
        Pace { clock, cpu_of: &cpu_of },
    )?;
    let outcomes = outcomes.into_inner();
    let mut per = vec![TaskCount::default(); ops.nr_tasks()];
    for ((&o, &i), &meas) in outcomes.iter().zip(&owner).zip(&measured) {
        if i == u32::MAX || !meas {
            continue;
        }
        let c = &mut per[i as usize];
        c.accesses += 1;
        c.misses += u64::from(o == sim::OUTCOME_MISS);
    }
    // requests and first touches, walking each task's ops against its measured outcomes
    let mut by_task: Vec<Vec<u8>> = vec![Vec::new(); ops.nr_tasks()];
    for ((&o, &i), &meas) in outcomes.iter().zip(&owner).zip(&measured) {
        if i != u32::MAX && meas {
            by_task[i as usize].push(o);
        }
    }
    for (i, c) in per.iter_mut().enumerate() {
        let (anon, tops) = ops.task(i);
        let one = OpFile {
            anon_pages: anon,
            ops: tops.to_vec(),
            ..OpFile::default()
        };
        c.minor = replayer_minor(&one);
        let mut res = by_task[i].iter();
        let mut measuring = !tops.contains(&ReplayOp::MeasureStart);
        let mut missed = false;
        for op in tops {
            match op {
                ReplayOp::MeasureStart => measuring = true,
                ReplayOp::Think { .. } => {}
                ReplayOp::RequestEnd => {
                    if measuring {
                        c.requests += 1;
                        c.missed_requests += u64::from(missed);
                    }
                    missed = false;
                }
                _ if measuring && op.is_access() => {
                    let o = res.next().copied();
                    missed |= o == Some(sim::OUTCOME_MISS);
                    // a whole-page write of an uncached page: minor to the replayer too
                    c.minor += u64::from(matches!(op, ReplayOp::Write { .. }) && o == Some(sim::OUTCOME_MINOR));
                }
                _ => {}
            }
        }
    }
    r.minor_faults = per.iter().map(|c| c.minor).sum();
    Ok((r, per))
}

/// Where an OOM kill ended the model's replay of `ops` (as [`run_tasks_at`] replayed it with `cfg`
/// and `layout` into `r`), in the replayer's terms ([`crate::OomKilled`]): the access ops
/// completed before the kill, populate pass included (the steps of the replayer's own pages not
/// counted; every task's, in the model's interleaving, for several), and the measured accesses
/// among them. `None` when no kill ended it.
pub fn oom_killed(
    ops: &OpFile,
    cfg: &RunConfig,
    layout: &Layout,
    r: &RunResult,
) -> Result<Option<crate::OomKilled>, Error> {
    let Some(done) = r.killed_after_steps else {
        return Ok(None);
    };
    let (mut m, t) = sim::build_machine(cfg).map_err(|e| Error::Config(e.to_string()))?;
    let (steps, keys) = if ops.nr_tasks() > 1 {
        let meta = layout.bdev_metadata_pages;
        multi_steps(ops, &mut m, t, true, meta).map(|(s, n, _)| (s, n))?
    } else {
        steps_of(ops, &mut m, t, true, layout, &mut Vec::new())?
    };
    // the workload's pages come first in the keys (files, then the anon regions), the
    // replayer's own after them, and the regions `mmap` ops map last
    let workload =
        ops.files.iter().map(|f| f.pages).sum::<u64>() + (0..ops.nr_tasks()).map(|i| ops.task(i).0).sum::<u64>();
    let mapped: u64 = ops
        .all_ops()
        .map(|o| match o {
            ReplayOp::Mmap { pages, .. } => *pages,
            _ => 0,
        })
        .sum();
    let regions = u64::from(keys).saturating_sub(mapped)..u64::from(keys);
    let done = steps
        .iter()
        .take(done as usize)
        .filter(|s| u64::from(s.key) < workload || regions.contains(&u64::from(s.key)))
        .count() as u64;
    Ok(Some(crate::OomKilled {
        ops: done,
        accesses: r.accesses,
    }))
}

/// Replay `ops` on the model configured by `cfg` (machine, memcg, policy and MGLRU settings; its
/// workload is ignored), recording a sample (misses so far, generations) after every
/// `ops.window` measured accesses and at the end. `minor_faults` counts what the replayer counts
/// as minor: measured first touches of anon pages ([`replayer_minor`]); a fault that finds its
/// page in the swap cache is a hit to the replayer (`mincore` sees the page), as to the model's
/// `misses`.
pub fn run(ops: &OpFile, cfg: &RunConfig) -> Result<RunResult, Error> {
    run_at(ops, cfg, &Layout::default())
}

/// [`run`] with the guest's [`Layout`] of the mappings.
pub fn run_at(ops: &OpFile, cfg: &RunConfig, layout: &Layout) -> Result<RunResult, Error> {
    let mut r = run_of(ops, cfg, true, layout)?;
    r.minor_faults = replayer_minor(ops);
    Ok(r)
}

/// The replayer's minor faults of `ops`: measured loads and stores that are the first touch of
/// their anon page in the process that makes them (warm-up included; a child forked by a `fork`
/// op starts with its parent's touched pages, and `munmap` or `madvise … dontneed` makes the next
/// touch a first one again, as the replayer counts them).
pub fn replayer_minor(ops: &OpFile) -> u64 {
    (0..ops.nr_tasks())
        .map(|i| {
            let (anon, tops) = ops.task(i);
            task_minor(anon, tops)
        })
        .sum()
}

/// [`replayer_minor`] of one task with an anon region of `anon` pages.
fn task_minor(anon: u64, ops: &[ReplayOp]) -> u64 {
    use lrugen_replay::Advice;
    // each live process's regions' touched pages, innermost last
    let mut stack: Vec<BTreeMap<u16, Vec<bool>>> = vec![BTreeMap::from([(0, vec![false; anon as usize])])];
    let mut measuring = !ops.contains(&ReplayOp::MeasureStart);
    let mut n = 0;
    for op in ops {
        let top = stack.last_mut().expect("a process");
        let (region, page) = match *op {
            ReplayOp::MeasureStart => {
                measuring = true;
                continue;
            }
            ReplayOp::Fork => {
                let copy = top.clone();
                stack.push(copy);
                continue;
            }
            ReplayOp::Exit => {
                if stack.len() > 1 {
                    stack.pop();
                }
                continue;
            }
            ReplayOp::Mmap { region, pages } => {
                top.insert(region, vec![false; pages as usize]);
                continue;
            }
            ReplayOp::Munmap { region, first, pages }
            | ReplayOp::Madvise {
                region,
                advice: Advice::DontNeed,
                first,
                pages,
            } => {
                if let Some(t) = top.get_mut(&region) {
                    let len = t.len();
                    let (a, b) = (first as usize, (first + pages) as usize);
                    if let Some(r) = t.get_mut(a..b.min(len)) {
                        r.fill(false);
                    }
                }
                continue;
            }
            ReplayOp::Load { vpn } | ReplayOp::Store { vpn } => (0, vpn),
            ReplayOp::RegionLoad { region, page } | ReplayOp::RegionStore { region, page } => (region, page),
            _ => continue,
        };
        if let Some(t) = top.get_mut(&region).and_then(|t| t.get_mut(page as usize)) {
            n += u64::from(measuring && !*t);
            *t = true;
        }
    }
    n
}

/// [`run`] of the workload's ops alone, without the replayer's own pages: the model's own run
/// of the same workload, step for step.
pub fn run_workload_only(ops: &OpFile, cfg: &RunConfig) -> Result<RunResult, Error> {
    run_of(ops, cfg, false, &Layout::default())
}

fn run_of(ops: &OpFile, cfg: &RunConfig, replayer: bool, layout: &Layout) -> Result<RunResult, Error> {
    let (mut m, t) = sim::build_machine(cfg).map_err(|e| Error::Config(e.to_string()))?;
    let mut ctl_at = Vec::new();
    let (steps, nr) = steps_of(ops, &mut m, t, replayer, layout, &mut ctl_at)?;
    let cfg = &with_ctl(cfg, ops, &ctl_at)?;
    let clock = GuestClock::of(&steps, layout);
    let pace = Pace { clock, cpu_of: &[] };
    replay(cfg, m, t, Stream::from_steps(steps, nr), ops.window, None, pace)
}

/// `cfg` with the control script that runs `ops`' control ops where the replayer runs them
/// (`ctl_at`: steps before each and its id), as the replayer does each: a `/proc/vmstat` read,
/// the write, another `/proc/vmstat` read and a read of `lru_gen` (a read op: the file alone).
/// [`ctl_results`] reads the log back. `cfg` itself when `ops` has none.
fn with_ctl(cfg: &RunConfig, ops: &OpFile, ctl_at: &[(u64, u32)]) -> Result<RunConfig, Error> {
    use lrugen::control::{Action, CtlFile, Script, Unit, When};
    let mut c = cfg.clone();
    if ctl_at.is_empty() {
        return Ok(c);
    }
    if let Some(m) = ops.memcgs.first() {
        return Err(Error::Config(format!(
            "control ops in an op file whose task runs in memcg {m} below the workload memcg: the \
             replayer writes its own memcg's files, the model the workload memcg's"
        )));
    }
    if cfg.ctl.is_some() {
        return Err(Error::Config(
            "an op file with control ops and a control script of the run's: expected one of them".into(),
        ));
    }
    let mut actions = Vec::with_capacity(4 * ctl_at.len());
    for &(at, id) in ctl_at {
        let op = ops
            .ctl
            .get(id as usize)
            .ok_or_else(|| Error::Config(format!("control op {id} is not in the op file")))?;
        let when = When {
            unit: Unit::Steps,
            at,
            every: None,
        };
        let file = match op.file {
            CtlTarget::LruGen => CtlFile::LruGen,
            CtlTarget::LruGenFull => CtlFile::LruGenFull,
            CtlTarget::MemoryReclaim => CtlFile::MemoryReclaim,
            CtlTarget::MemoryStat => CtlFile::MemoryStat,
            CtlTarget::Vmstat => CtlFile::Vmstat,
        };
        let act = |file, write: Option<String>| Action {
            when,
            file,
            write,
            memcg: None,
            line: id as usize,
        };
        match &op.write {
            Some(text) => {
                actions.push(act(CtlFile::Vmstat, None));
                actions.push(act(file, Some(text.clone())));
                actions.push(act(CtlFile::Vmstat, None));
                actions.push(act(CtlFile::LruGen, None));
            }
            None => actions.push(act(file, None)),
        }
    }
    c.ctl = Some(Script { actions });
    Ok(c)
}

/// The control ops' results in a model run's control log (the actions `with_ctl` put in its
/// script), in the form of the kernel's ([`crate::CtlResult`]).
pub fn ctl_results(ops: &OpFile, log: &[lrugen::control::Record]) -> Result<Vec<crate::CtlResult>, Error> {
    let mut out = Vec::new();
    let mut it = log.iter();
    let bad = |why: &str| Error::Config(format!("the model's control log: {why}"));
    while let Some(first) = it.next() {
        let id = first.line as u32;
        let op = ops
            .ctl
            .get(id as usize)
            .ok_or_else(|| bad("an action of no control op"))?;
        let mut res = crate::CtlResult {
            id,
            file: op.file.name().to_string(),
            accesses: first.accesses,
            ..Default::default()
        };
        if op.write.is_some() {
            let mut next = || it.next().ok_or_else(|| bad("a write without its reads"));
            let (w, after, shown) = (next()?, next()?, next()?);
            let before = crate::serial::counters(first.text.as_deref().unwrap_or(""));
            res.vmstat_delta = crate::serial::counters(after.text.as_deref().unwrap_or(""))
                .into_iter()
                .map(|(k, v)| {
                    let d = v.wrapping_sub(before.get(&k).copied().unwrap_or(0));
                    (k, d)
                })
                .filter(|(_, d)| *d != 0)
                .collect();
            res.write = w.write.clone();
            if !w.ok {
                res.errno = w.errno.clone();
                res.why = w.text.clone();
            }
            res.text = shown.text.clone().unwrap_or_default();
        } else {
            if !first.ok {
                res.errno = first.errno.clone();
            }
            res.text = first.text.clone().unwrap_or_default();
        }
        out.push(res);
    }
    Ok(out)
}

/// The guest's clock of a replay ([`Layout::guest_clock`]) by steps: the first measured step,
/// and for each window the step after its last access and the guest's time then.
struct GuestClock {
    first: u64,
    ends: Vec<(u64, u64)>,
}

impl GuestClock {
    fn of(steps: &[Step], layout: &Layout) -> Option<GuestClock> {
        let first = steps.iter().position(|s| s.measure)? as u64;
        let mut ends = Vec::with_capacity(layout.guest_clock.len());
        let mut windows = layout.guest_clock.iter().peekable();
        let mut accesses = 0;
        for (i, s) in steps.iter().enumerate() {
            accesses += u64::from(s.measure);
            while let Some(&&(a, ns)) = windows.peek() {
                if a > accesses {
                    break;
                }
                ends.push((i as u64 + 1, ns));
                windows.next();
            }
        }
        (!ends.is_empty()).then_some(GuestClock { first, ends })
    }

    /// The hook of [`sim::run_kernel_between`]: from the first measured step on, each step of a
    /// window takes an equal share of the guest's time over it (after the last window, the last
    /// window's share); `at` is the index of the window in effect plus one, 0 before.
    fn set<P: lrugen::reclaim::Policy>(&self, k: &mut Kernel<P>, steps: u64, at: &mut usize) {
        if steps < self.first {
            return;
        }
        let mut i = at.saturating_sub(1);
        while i + 1 < self.ends.len() && self.ends[i].0 <= steps {
            i += 1;
        }
        if *at == i + 1 {
            return;
        }
        *at = i + 1;
        let (s0, t0) = if i == 0 { (self.first, 0) } else { self.ends[i - 1] };
        let (s1, t1) = self.ends[i];
        k.m.cfg.clock = StepClock {
            access_ns: (t1 - t0) / s1.saturating_sub(s0).max(1),
            minor_fault_ns: 0,
            read_io_ns: 0,
            swap_in_ns: 0,
        };
    }
}

fn replay(
    cfg: &RunConfig,
    m: Machine,
    t: MemcgId,
    stream: Stream,
    window: u64,
    outcomes: Option<&std::cell::RefCell<Vec<u8>>>,
    pace: Pace<'_>,
) -> Result<RunResult, Error> {
    let Pace { clock, cpu_of } = pace;
    let opts = KernelRunOptions {
        sample_every: Some(window.max(1)),
        measured: true,
        ctl: cfg.ctl.as_ref(),
        outcomes,
        ..Default::default()
    };
    let err = |e: sim::RunError| Error::Config(format!("model: {e}"));
    let start = std::time::Instant::now();
    let mut at = 0;
    let mut r = match (cfg.policy, clock.is_none() && cpu_of.is_empty()) {
        (PolicyKind::Mglru, true) => {
            let p = Mglru::new(&m, cfg.mglru.clone());
            sim::run_kernel(Kernel::new(m, p), t, stream, &opts, &mut |_, _| {}).map_err(err)?
        }
        (PolicyKind::Classic, true) => {
            let p = Classic::with_profile(&m, cfg.mglru.profile);
            sim::run_kernel(Kernel::new(m, p), t, stream, &opts, &mut |_, _| {}).map_err(err)?
        }
        (PolicyKind::Mglru, false) => {
            let p = Mglru::new(&m, cfg.mglru.clone());
            sim::run_kernel_between(Kernel::new(m, p), t, stream, &opts, &mut |_, _| {}, |k, s, _| {
                before_step(k, s, clock.as_ref(), &mut at, cpu_of)
            })
            .map_err(err)?
        }
        (PolicyKind::Classic, false) => {
            let p = Classic::with_profile(&m, cfg.mglru.profile);
            sim::run_kernel_between(Kernel::new(m, p), t, stream, &opts, &mut |_, _| {}, |k, s, _| {
                before_step(k, s, clock.as_ref(), &mut at, cpu_of)
            })
            .map_err(err)?
        }
        (p, _) => return Err(Error::Config(format!("policy {} is not a kernel policy", p.name()))),
    };
    r.wall_seconds = start.elapsed().as_secs_f64();
    r.workload = "op file".into();
    Ok(r)
}

/// What changes before each step of a replay: the guest's clock ([`GuestClock`], if the capture
/// has one) and the CPU the step runs on (by step; empty: CPU 0 throughout).
struct Pace<'a> {
    clock: Option<GuestClock>,
    cpu_of: &'a [u32],
}

/// Before step `steps` of a replay: the guest's clock for it ([`GuestClock::set`]) and the CPU it
/// runs on (`cpu_of`, by step; empty: CPU 0 throughout).
fn before_step<P: lrugen::reclaim::Policy>(
    k: &mut Kernel<P>,
    steps: u64,
    clock: Option<&GuestClock>,
    at: &mut usize,
    cpu_of: &[u32],
) {
    if let Some(c) = clock {
        c.set(k, steps, at);
    }
    if let Some(&cpu) = cpu_of.get(steps as usize) {
        k.m.cpu = cpu;
    }
}

/// The model profile for a kernel release: its own preset. 6.1.y → `6.1`, 6.12.y → `6.12`,
/// 7.x → `7.2` (the only 7.x modelled), 6.13–6.19 → `6.17` (the kernel spec's ≈6.17,
/// `kernel-mglru.md` §§2–13); anything older than 6.12 but not 6.1 (6.2–6.11) → `6.12`, the
/// preset with the 6.3–6.12 changes and none of the 6.14 rework.
pub fn profile_for_release(release: &str) -> Profile {
    let mut it = release.split(|c: char| !c.is_ascii_digit());
    let major: u32 = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
    let minor: u32 = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
    match (major, minor) {
        (6, 1) => Profile::V6_1,
        (6, 0..=12) => Profile::V6_12,
        (6, _) => Profile::V6_17,
        (m, _) if m >= 7 => Profile::V7_2,
        _ => Profile::V6_1,
    }
}

/// The guest's virtual clock per step (`-icount shift=0,sleep=off`, read off the windows'
/// `CLOCK_MONOTONIC`): a zram swap-in takes about 100 µs of virtual time (0.09–0.13 ms per miss
/// on Debian 6.12 anon-gauss), but a read from the virtio disk idles the vCPU and the clock jumps
/// to the next timer while it waits, 4–15 ms a miss (6.1 and 6.12 hot-cold: 11.8 and 14.8 ms,
/// 6.12 mixed: 5.3 ms). The memcg statistics flusher runs every 2 s of that clock, so how many
/// reclaim passes see one flush depends on it. A replay whose capture recorded its windows' times
/// runs on those instead from its first measured step ([`Layout::guest_clock`]); this clock is
/// for the steps before, and for captures without them.
pub const GUEST_CLOCK: StepClock = StepClock {
    access_ns: 100,
    minor_fault_ns: 1_000,
    read_io_ns: 10_000_000,
    swap_in_ns: 100_000,
};

/// The model's configuration for an op file the kernel ran with `s` (under global pressure, no
/// `memory.max` and the guest's zones in `s.zones`: no memcg limit, on [`global_machine`]): a memcg of
/// `s.model_capacity_pages` (the kernel's `memory.max`, [`crate::KernelRun::model_capacity_for`])
/// charged with the kernel memory the kernel charges ([`lrugen::mm::KmemConfig::kernel`]), the
/// swap, swappiness, zram ratio, read-ahead, `min_ttl_ms` and `lru_gen` capabilities of the run,
/// and `profile` (normally [`profile_for_release`] of the kernel that ran).
pub fn config(s: &Settings, profile: Profile) -> Result<RunConfig, Error> {
    let policy: PolicyKind = s.lru.parse().map_err(|e: String| Error::Config(format!("lru: {e}")))?;
    let caps = match s.lru_gen_enabled.as_str() {
        "y" => 0x7,
        "n" => 0,
        x => u32::from_str_radix(x.trim_start_matches("0x"), 16)
            .map_err(|_| Error::Config(format!("lru_gen_enabled: expected y, n or 0xBITS, found '{x}'")))?,
    };
    let cap = s.model_capacity_pages.max(1);
    let swap_pages = s.swap_mib << 8;
    // global pressure: the guest's own zones, and no limit on the memcg
    let global = s.memcg_max_bytes == 0 && !s.zones.is_empty();
    let mut machine = if global {
        global_machine_of(&s.zones, swap_pages, s.numa_mib.len().max(1))?
    } else {
        MachineConfig::simple(cap * 4 + 65_536 + swap_pages, swap_pages)
    };
    machine.swappiness = s.swappiness.unwrap_or(60);
    if let Some(kb) = s.read_ahead_kb {
        machine.ra_pages = u64::from(kb / 4);
    }
    machine.clock = GUEST_CLOCK;
    machine.kmem = lrugen::mm::KmemConfig::kernel();
    if s.swap == "zram" {
        // no measurement (nothing swapped): zram's usual 3:1
        machine.zram_ratio = Some(s.zram_ratio.unwrap_or(3.0));
    }
    // the guest's vm.page-cluster; its swap disk is virtio-blk, which declares itself neither
    // synchronous nor non-rotational: read-ahead by swap offset (`nr_rotate_swap`)
    machine.page_cluster = s.page_cluster;
    machine.swap_rotational = s.swap == "disk";
    machine.thp = s.thp;
    // EEVDF's base slice on one vCPU (applied where the profile has `eevdf_run_to_parity`;
    // `run_tasks_at` leaves it out for a guest of several vCPUs, where kswapd has a CPU free)
    machine.sched_slice_ns = GUEST_SCHED_SLICE_NS;
    if let Some(t) = &s.tiers {
        if !global {
            return Err(Error::Config(
                "memory tiers: the model runs a guest of several nodes under global pressure only (--memcg-max max)"
                    .into(),
            ));
        }
        // the guest's clock: what its scans cost it (as `GUEST_CLOCK` for the rest)
        machine.tiers = Some(lrugen::mm::tiers::TierConfig {
            scan_pte_ns: GUEST_SCAN_PTE_NS,
            ..t.clone()
        });
    }
    let mut cfg = RunConfig::new(
        machine,
        MemcgConfig {
            max: (!global).then_some(cap),
            ..Default::default()
        },
        WorkloadSpec::Trace {
            path: "kernel-run".into(),
            format: None,
            access: Default::default(),
        },
        policy,
    );
    cfg.mglru = MglruConfig {
        profile,
        caps,
        min_ttl_ms: s.min_ttl_ms.unwrap_or(0) as u64,
        ..Default::default()
    };
    Ok(cfg)
}

/// The guests' scheduler slice, ns: `base_slice_ns` on one CPU, 0.75 ms × (1 + ilog2(1))
/// (`kernel/sched/fair.c`, `sysctl_sched_base_slice` scaled by `update_sysctl`).
pub const GUEST_SCHED_SLICE_NS: u64 = 750_000;

/// The machine of a global-pressure run: one node with the guest's zones as `/proc/zoneinfo`
/// showed them before the workload (x86's DMA and DMA32, and Normal above 4 GiB), each with its
/// managed pages, the pages the kernel already used, its watermarks and its `lowmem_reserve`,
/// and kswapd sleeping as the kernel's ([`MachineConfig::x86`]).
pub fn global_machine(zones: &[crate::zoneinfo::ZoneInfo], swap_pages: u64) -> Result<MachineConfig, Error> {
    global_machine_of(zones, swap_pages, 1)
}

/// The model's `[machine.tiers]` for a guest of `nodes` nodes given `knobs`: each node's abstract
/// distance the start of the memory tier the guest put it in (`memory_tiers`, the
/// [`crate::KernelRun::memory_tiers`] lines `memory_tierN NODELIST`: tier N is
/// `N << MEMTIER_CHUNK_BITS`), DRAM's for a node in none; no placement (the op file's `mbind` ops
/// place the pages).
pub fn guest_tiers(
    knobs: &lrugen::mm::tiers::TierConfig,
    memory_tiers: &str,
    nodes: usize,
) -> lrugen::mm::tiers::TierConfig {
    let mut adistance = vec![lrugen::mm::tiers::MEMTIER_ADISTANCE_DRAM; nodes];
    for l in memory_tiers.lines() {
        let mut it = l.split_whitespace();
        let (Some(t), Some(list)) = (it.next(), it.next()) else {
            continue;
        };
        let Some(tier) = t.strip_prefix("memory_tier").and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        for part in list.split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
                for d in adistance.iter_mut().take(b + 1).skip(a) {
                    *d = tier << lrugen::mm::tiers::MEMTIER_CHUNK_BITS;
                }
            }
        }
    }
    lrugen::mm::tiers::TierConfig {
        adistance,
        placement: Vec::new(),
        ..knobs.clone()
    }
}

/// What NUMA balancing's scan costs the guest per PTE it makes PROT_NONE, ns of its
/// `-icount` clock ([`lrugen::mm::tiers::TierConfig::scan_pte_ns`], set by [`config`] for a
/// guest with tiers): `task_numa_work` traced with kprobes on Debian 6.12 (the tiering
/// fixture's workload with node 0 at 256 MiB to hold the trace buffer, 2026-12-06): 329 scans,
/// 198 of which updated PTEs (median 298 µs each), 67.3 ms in those for 107,292 PTEs updated;
/// the other 131 took 1-10 µs.
pub const GUEST_SCAN_PTE_NS: u64 = 627;

/// [`global_machine`] of a guest of `nodes` NUMA nodes (`lrugen kernel --numa`): each node with
/// its own zones as the guest's `/proc/zoneinfo` showed them.
pub fn global_machine_of(
    zones: &[crate::zoneinfo::ZoneInfo],
    swap_pages: u64,
    nodes: usize,
) -> Result<MachineConfig, Error> {
    let mut layout = vec![Vec::new(); nodes];
    let mut boot = vec![Vec::new(); nodes];
    let shmem = crate::zoneinfo::unmapped_shmem(zones);
    for (z, &shmem) in zones.iter().zip(&shmem).filter(|(z, _)| z.managed > 0) {
        let n = z.node as usize;
        if n >= nodes {
            return Err(Error::Config(format!(
                "zones: node {} (zone {}): the model's guest has {nodes} node{}",
                z.node,
                z.name,
                if nodes == 1 { "" } else { "s" }
            )));
        }
        let t = z.zone_type().ok_or_else(|| {
            Error::Config(format!(
                "zones: zone {} with managed pages is not one the model has",
                z.name
            ))
        })?;
        layout[n].push((t, z.managed));
        boot[n].push(lrugen::mm::node::ZoneBoot { shmem, ..z.boot() });
    }
    if let Some(n) = layout.iter().position(|l| l.is_empty()) {
        return Err(Error::Config(if nodes == 1 {
            "zones: no zone with managed pages".into()
        } else {
            format!("zones: node {n} has no zone with managed pages")
        }));
    }
    Ok(MachineConfig {
        nodes: layout,
        zone_boot: boot,
        ..MachineConfig::x86(0, swap_pages)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model's configuration of an MGLRU run on the 6.12 preset at a capacity of 4,096 pages.
    fn mglru_6_12_at_4096() -> RunConfig {
        let s = Settings {
            lru: "mglru".into(),
            lru_gen_enabled: "y".into(),
            model_capacity_pages: 4096,
            ..Default::default()
        };
        config(&s, Profile::V6_12).unwrap()
    }

    #[test]
    fn minor_faults_are_the_replayers_first_touches() {
        let ops = OpFile {
            anon_hugepage: false,
            lockstep: 0,
            ctl: Vec::new(),
            memcgs: Vec::new(),
            tasks: Vec::new(),
            window: 0,
            files: vec![],
            anon_pages: 4,
            ops: vec![
                ReplayOp::Store { vpn: 0 },
                ReplayOp::MeasureStart,
                ReplayOp::Load { vpn: 0 },
                ReplayOp::Load { vpn: 1 },
                ReplayOp::Store { vpn: 1 },
                ReplayOp::Store { vpn: 3 },
            ],
        };
        assert_eq!(
            replayer_minor(&ops),
            2,
            "pages 1 and 3; page 0 was touched in the warm-up"
        );
    }

    /// Version 7's process ops on the model: a child forked after the warm-up maps a region,
    /// fills it, copies a page of its parent's on write, unmaps half the region, zaps two pages
    /// and touches one again, and exits; the parent goes on. Minor faults are the replayer's
    /// first touches per process, every measured access is counted, and at the end only the
    /// parent's two pages are left (the child's region and copy went with it), in the one-task
    /// replay and as a task of a multi-task file.
    #[test]
    fn a_forked_child_maps_fills_unmaps_and_exits() {
        let body = "anon 4\ns 0\ns 1\nw 0\nfork\nmmap 1 8\n\
                    s 1 0\ns 1 1\ns 1 2\ns 1 3\ns 1 4\ns 1 5\ns 1 6\ns 1 7\n\
                    l 0\ns 0\nmunmap 1 4 4\nmadvise 1 0 2 dontneed\ns 1 0\nexit\nl 1\n";
        let one = OpFile::parse(&format!("lrugen-ops 7\nwindow 0\ntask 0\n{body}")).unwrap();
        // 8 first touches of region 1 and one after MADV_DONTNEED; pages 0 and 1 of region 0
        // were the parent's before the fork
        assert_eq!(replayer_minor(&one), 9);
        let anon_at_end = |r: &RunResult| {
            r.memory_stat
                .as_ref()
                .expect("memory.stat")
                .get(lrugen::mm::vmstat::Stat::NrAnonPages)
        };
        let r = run_workload_only(&one, &mglru_6_12_at_4096()).unwrap();
        // the model's own minor faults count the child's copy-on-write fault of page 0 too
        assert_eq!((r.accesses, r.minor_faults, r.misses), (12, 10, 0));
        assert_eq!(run(&one, &mglru_6_12_at_4096()).unwrap().minor_faults, 9);
        assert_eq!(anon_at_end(&r), 2, "the parent's pages 0 and 1");
        // the same ops as task 1 of two (task 0 reads a file)
        let two = OpFile::parse(&format!(
            "lrugen-ops 7\nwindow 0\nfile 0 f 4\ntask 0\nr 0 1\nr 0 2\ntask 1\n{body}"
        ))
        .unwrap();
        let (r, per) = run_tasks(&two, &mglru_6_12_at_4096()).unwrap();
        assert_eq!((per[1].accesses, per[1].minor, per[1].misses), (12, 9, 0));
        assert_eq!(per[0].accesses, 2);
        assert_eq!(r.error, None);
    }

    #[test]
    fn global_pressure_runs_on_the_guests_zones_without_a_limit() {
        use crate::zoneinfo::ZoneInfo;
        let zone = |name: &str, managed, free, protection: Vec<u64>| ZoneInfo {
            name: name.into(),
            managed,
            free,
            min: 34,
            low: 42,
            high: 50,
            protection,
            ..Default::default()
        };
        let zones = vec![
            zone("DMA", 3840, 3808, vec![0, 181, 181, 181, 181]),
            zone("DMA32", 50_601, 41_519, vec![0; 5]),
            zone("Normal", 0, 0, vec![0; 5]),
        ];
        let s = Settings {
            lru: "mglru".into(),
            lru_gen_enabled: "y".into(),
            swap: "zram".into(),
            swap_mib: 256,
            zones: zones.clone(),
            ..Default::default()
        };
        let cfg = config(&s, Profile::V6_12).unwrap();
        assert_eq!(cfg.memcg.max, None);
        let m = &cfg.machine;
        assert_eq!(
            m.nodes,
            vec![vec![
                (lrugen::mm::node::ZoneType::Dma, 3840),
                (lrugen::mm::node::ZoneType::Dma32, 50_601)
            ]]
        );
        assert!(m.lowmem_reserve && m.kswapd_sleep);
        assert_eq!(m.zone_boot[0][0].lowmem_reserve, Some(181));
        assert_eq!(m.zone_boot[0][1].used, 50_601 - 41_519);
        // under a limit, the zones are not used
        let limited = Settings {
            memcg_max_bytes: 32 << 20,
            model_capacity_pages: 8192,
            ..s.clone()
        };
        let cfg = config(&limited, Profile::V6_12).unwrap();
        assert_eq!(cfg.memcg.max, Some(8192));
        assert!(!cfg.machine.lowmem_reserve && cfg.machine.zone_boot.is_empty());
        // zones the model cannot have
        let mut bad = zones.clone();
        bad[2] = zone("Device", 10, 10, vec![0; 5]);
        let e = global_machine(&bad, 0).unwrap_err().to_string();
        assert!(e.contains("zone Device"), "{e}");
        let e = global_machine(&zones[2..], 0).unwrap_err().to_string();
        assert!(e.contains("no zone with managed pages"), "{e}");
        let mut other = zones;
        other[1].node = 1;
        let e = global_machine(&other, 0).unwrap_err().to_string();
        assert!(e.contains("node 1"), "{e}");
    }

    #[test]
    fn the_model_profile_follows_the_kernel_release() {
        assert_eq!(profile_for_release("6.1.0-57-amd64"), Profile::V6_1);
        assert_eq!(profile_for_release("6.12.117+deb12-amd64"), Profile::V6_12);
        assert_eq!(profile_for_release("7.2.13+deb14-amd64"), Profile::V7_2);
        assert_eq!(profile_for_release("6.10.3"), Profile::V6_12);
        assert_eq!(profile_for_release("6.17.0"), Profile::V6_17);
    }

    /// The replayer's `smaps` (header lines as Debian 6.12 prints them, the counters between
    /// them cut): the anon region is found by its size, the file mapping by its path, each at its
    /// page offset in its PMD table; the model maps them there, above what it mapped before.
    /// The guest's clock is the windows' ends, accesses and time summed up; none for a
    /// multi-task replay, a window without its time or a clock that goes back.
    #[test]
    fn the_guest_clock_is_read_off_the_windows() {
        let ops = OpFile::parse("lrugen-ops 1\nanon 2\ns 1\n").unwrap();
        let w = |accesses, ns| crate::Window {
            accesses,
            misses: 0,
            minor: 0,
            ns,
            kswapd_ns: 0,
        };
        let l = Layout::default().with_guest_clock(&[w(300, 5_000), w(300, 7_000), w(120, 7_500)], &ops);
        assert_eq!(l.guest_clock, vec![(300, 5_000), (600, 7_000), (720, 7_500)]);
        for bad in [&[w(300, 5_000), w(300, 0)][..], &[w(300, 5_000), w(300, 4_000)], &[]] {
            assert!(
                Layout::default().with_guest_clock(bad, &ops).guest_clock.is_empty(),
                "{bad:?}"
            );
        }
        let two = OpFile::parse("lrugen-ops 2\nwindow 10\ntask 0\nanon 2\ns 1\ntask 1\nanon 2\ns 1\n").unwrap();
        assert!(Layout::default()
            .with_guest_clock(&[w(2, 5_000)], &two)
            .guest_clock
            .is_empty());
    }

    #[test]
    fn layout_is_read_off_smaps_and_used() {
        let smaps = "\
55557e5c5000-55557e5e7000 rw-p 00000000 00:00 0                          [heap]
Size:                136 kB
7f1d28c9a000-7f1d2afcd000 rw-p 00000000 00:00 0 
Size:              36044 kB
7f1d2afcd000-7f1d2b1ce000 rw-p 00000000 00:00 0 
7f1d2c000000-7f1d30000000 r--s 00000000 fe:00 12                         /mnt/data/f0
Size:              65536 kB
7ffd1c3d1000-7ffd1c3f2000 rw-p 00000000 00:00 0                          [stack]
";
        let ops = OpFile {
            anon_hugepage: false,
            lockstep: 0,
            ctl: Vec::new(),
            memcgs: Vec::new(),
            window: 0,
            files: vec![lrugen_replay::ReplayFile {
                id: 0,
                path: "f0".into(),
                pages: 16384,
                advice: FileAdvice::Random,
            }],
            anon_pages: 9011,
            ops: vec![ReplayOp::MmapLoad { file: 0, index: 3 }, ReplayOp::Load { vpn: 5 }],
            tasks: Vec::new(),
        };
        let l = Layout::from_smaps(smaps, &ops);
        assert_eq!(l.anon, Some(0x28c9a % 512));
        assert_eq!(l.files.get("f0"), Some(&0));
        assert_eq!(Layout::from_smaps("", &ops), Layout::default());
        // the model's mappings start at those offsets
        let mut m = Machine::new(lrugen::mm::MachineConfig::simple(4096, 0));
        let t = m.create_memcg(lrugen::mm::memcg::ROOT_MEMCG, "t");
        let at = |l: &Layout| {
            let mut m = m.clone();
            let (steps, _) = steps_of(&ops, &mut m, t, false, l, &mut Vec::new()).unwrap();
            steps.iter().map(|s| s.op).collect::<Vec<_>>()
        };
        let shifted = Layout {
            anon: Some(154),
            op_list: OpListPlace::Own,
            files: [("f0".to_string(), 7)].into(),
            heap_pages: None,
            pgtables: None,
            guest_clock: Vec::new(),
            bdev_metadata_pages: 0,
            cpus: 0,
        };
        let (a, b) = (at(&Layout::default()), at(&shifted));
        let vpn = |op: &Op| match op {
            Op::Load { vpn, .. } => *vpn,
            o => panic!("{o:?}"),
        };
        assert_eq!(vpn(&a[0]) % 512, 3);
        assert_eq!(vpn(&b[0]) % 512, 10);
        assert_eq!(vpn(&a[1]) % 512, 5);
        assert_eq!(vpn(&b[1]) % 512, 159);
    }

    /// An op list in the mapping right after the anon region (the guest's `mmap` placed the
    /// region below it) is read as such, and the model's replayer writes and reads its op list
    /// there, in a mapping of its own that starts where the region ends, its fixed pages in
    /// another; a larger mapping holding both (merged by the kernel) keeps them in one.
    #[test]
    fn an_op_list_right_after_the_region_is_mapped_there() {
        let smaps = "\
7f1d28c9a000-7f1d2afcd000 rw-p 00000000 00:00 0 
Rss:               36044 kB
7f1d2afcd000-7f1d2b1ce000 rw-p 00000000 00:00 0 
Rss:                1604 kB
7ffd1c3d1000-7ffd1c3f2000 rw-p 00000000 00:00 0                          [stack]
Rss:                 132 kB
";
        let mut ops = OpFile {
            anon_pages: 9011,
            ops: vec![ReplayOp::Load { vpn: 5 }; 100_000],
            ..OpFile::default()
        };
        let l = Layout::from_smaps(smaps, &ops);
        assert_eq!(l.anon, Some(0x28c9a % 512));
        assert_eq!(l.op_list, OpListPlace::After);
        let mut m = Machine::new(lrugen::mm::MachineConfig::simple(65_536, 0));
        let t = m.create_memcg(lrugen::mm::memcg::ROOT_MEMCG, "t");
        let (steps, _) = steps_of(&ops, &mut m, t, true, &l, &mut Vec::new()).unwrap();
        let vmas = &m.mms[0].vmas;
        let region = vmas.iter().find(|v| v.end - v.start == 9011).expect("the region");
        let list = vmas
            .iter()
            .find(|v| v.start == region.end)
            .expect("a mapping right after the region");
        let lists = crate::replayer_own_pages(&ops) - crate::REPLAYER_FIXED_PAGES;
        assert_eq!(u64::from(list.end - list.start), lists);
        // the op list's pages are written there before the replay, the first one read with op 0
        let touched = |v: &lrugen::mm::vm::Vma| {
            steps
                .iter()
                .filter(
                    |s| matches!(s.op, Op::Store { vpn, .. } | Op::Load { vpn, .. } if vpn >= v.start && vpn < v.end),
                )
                .count()
        };
        assert!(touched(list) as u64 >= lists, "{vmas:?}");
        // merged: one mapping, the region's pages then the op list's
        ops.anon_pages = 9011;
        let merged = "\
7f1d28c9a000-7f1d2b1ce000 rw-p 00000000 00:00 0 
Rss:               37648 kB
";
        let l = Layout::from_smaps(merged, &ops);
        assert_eq!(l.op_list, OpListPlace::Merged);
        let mut m = Machine::new(lrugen::mm::MachineConfig::simple(65_536, 0));
        let t = m.create_memcg(lrugen::mm::memcg::ROOT_MEMCG, "t");
        steps_of(&ops, &mut m, t, true, &l, &mut Vec::new()).unwrap();
        let vmas = &m.mms[0].vmas;
        assert!(
            vmas.iter().any(|v| u64::from(v.end - v.start) == 9011 + lists),
            "{vmas:?}"
        );
        // no smaps: PMD-aligned, the op list with the fixed pages
        assert_eq!(Layout::from_smaps("", &ops).op_list, OpListPlace::Own);
    }

    /// The replayer's heap is its `Rss` plus its `Swap` in smaps, and the model's replayer writes
    /// that many fixed pages: a smaller op text leaves a larger heap (glibc), and the model's
    /// process grows by the difference from [`crate::REPLAYER_HEAP_PAGES`], nothing else.
    /// In lockstep the tasks' accesses come in the guest's rounds: each task's next K, task by
    /// task, a sleeper holding the others back (its think time changes nothing); free running,
    /// one op of each in turn with think time pushing the sleeper's later ops back.
    #[test]
    fn lockstep_interleaves_by_rounds() {
        let loads = |n: u64| (0..n).map(|v| ReplayOp::Load { vpn: v }).collect::<Vec<_>>();
        let mut t0 = loads(4);
        t0.insert(
            1,
            ReplayOp::Think {
                ns: 50 * INTERLEAVE_OP_NS,
            },
        );
        let ops = OpFile {
            anon_pages: 4,
            ops: t0,
            tasks: vec![
                lrugen_replay::ReplayTask {
                    anon_hugepage: false,
                    anon_pages: 6,
                    ops: loads(6),
                },
                lrugen_replay::ReplayTask {
                    anon_hugepage: false,
                    anon_pages: 1,
                    ops: loads(1),
                },
            ],
            ..OpFile::default()
        };
        // the measured steps' tasks in order (the replayer's own pages are not measured)
        let order = |ops: &OpFile| {
            let mut m = Machine::new(lrugen::mm::MachineConfig::simple(4096, 0));
            let t = m.create_memcg(lrugen::mm::memcg::ROOT_MEMCG, "t");
            let (steps, _, owner) = multi_steps(ops, &mut m, t, false, 0).unwrap();
            steps
                .iter()
                .zip(&owner)
                .filter(|(s, _)| s.measure)
                .map(|(_, &o)| o)
                .collect::<Vec<u32>>()
        };
        assert_eq!(order(&ops), [0, 1, 2, 1, 1, 1, 1, 1, 0, 0, 0]);
        let two = OpFile {
            lockstep: 2,
            ..ops.clone()
        };
        assert_eq!(order(&two), [0, 0, 1, 1, 2, 0, 0, 1, 1, 1, 1]);
        let one = OpFile { lockstep: 1, ..ops };
        assert_eq!(order(&one), [0, 1, 2, 0, 1, 0, 1, 0, 1, 1, 1]);
    }

    #[test]
    fn the_replayers_heap_is_read_off_smaps() {
        let smaps = "\
55557e5c5000-55557e600000 rw-p 00000000 00:00 0                          [heap]
Size:                236 kB
Rss:                  20 kB
Pss:                  20 kB
Swap:                212 kB
7f1d28c9a000-7f1d28c9c000 rw-p 00000000 00:00 0 
Rss:                   8 kB
Swap:                  0 kB
";
        let ops = OpFile {
            anon_hugepage: false,
            lockstep: 0,
            ctl: Vec::new(),
            memcgs: Vec::new(),
            window: 0,
            files: Vec::new(),
            anon_pages: 2,
            ops: vec![ReplayOp::Load { vpn: 1 }],
            tasks: Vec::new(),
        };
        let l = Layout::from_smaps(smaps, &ops);
        assert_eq!(
            l.heap_pages,
            Some(58),
            "5 resident + 53 swapped, the next mapping's not counted"
        );
        assert_eq!(Layout::from_smaps("", &ops).heap_pages, None);
        let mut m = Machine::new(lrugen::mm::MachineConfig::simple(4096, 0));
        let t = m.create_memcg(lrugen::mm::memcg::ROOT_MEMCG, "t");
        let writes = |l: &Layout| {
            let mut m = m.clone();
            let (steps, _) = steps_of(&ops, &mut m, t, true, l, &mut Vec::new()).unwrap();
            steps.iter().filter(|s| matches!(s.op, Op::Store { .. })).count() as u64
        };
        let base = writes(&Layout::default());
        assert_eq!(base, crate::replayer_own_pages(&ops));
        assert_eq!(writes(&l), base + 58 - crate::REPLAYER_HEAP_PAGES);
    }

    /// The replayer's `smaps` at the end of Debian 6.12's MGLRU `lackey-anon` replay (fixture
    /// `traces/debian-6.12-mglru-lackey-anon.json`, header, `Rss` and `Swap` lines): the anon
    /// region (600 pages) was mapped right below the op list's mapping (33 pages) and merged with
    /// it. Its page tables are 2 PTE tables of the workload, 3 of the replayer's own (heap, the
    /// 2 MiB past the op list that only the binary's pages touch, stack), 3 PMD and 3 PUD tables:
    /// 11, the kernel's `memory.stat` `pagetables` (45,056 bytes) on 6.12, which counts PUD
    /// tables but not the PGD. The model, charging the replayer's own from that and its
    /// workload's PTE tables as it maps them, ends with the same 11.
    #[test]
    fn the_replayers_page_tables_are_read_off_smaps() {
        let smaps = "\
55556a328000-55556a34a000 rw-p 00000000 00:00 0                          [heap]
Rss:                  36 kB
Swap:                 84 kB
7f315e07a000-7f315e2f3000 rw-p 00000000 00:00 0 
Rss:                1760 kB
Swap:                752 kB
7f315e2f3000-7f315e2f4000 ---p 00000000 00:00 0 
Rss:                   0 kB
Swap:                  0 kB
7f315e2f4000-7f315e2f6000 rw-p 00000000 00:00 0 
Rss:                   0 kB
Swap:                  0 kB
7f315e2f6000-7f315e2fa000 r--p 00000000 00:00 0                          [vvar]
Rss:                   0 kB
Swap:                  0 kB
7f315e2fa000-7f315e2fc000 r-xp 00000000 00:00 0                          [vdso]
Rss:                   4 kB
Swap:                  0 kB
7f315e2fc000-7f315e341000 r--p 00000000 00:02 10                         /bin/lrugen-replay
Rss:                  96 kB
Swap:                  0 kB
7f315e341000-7f315e41c000 r-xp 00044000 00:02 10                         /bin/lrugen-replay
Rss:                 336 kB
Swap:                  0 kB
7f315e41c000-7f315e423000 r--p 0011e000 00:02 10                         /bin/lrugen-replay
Rss:                  12 kB
Swap:                 16 kB
7f315e423000-7f315e427000 rw-p 00124000 00:02 10                         /bin/lrugen-replay
Rss:                   8 kB
Swap:                  8 kB
7f315e427000-7f315e42d000 rw-p 00000000 00:00 0 
Rss:                   4 kB
Swap:                  8 kB
7ffd4f9ac000-7ffd4f9cd000 rw-p 00000000 00:00 0                          [stack]
Rss:                   8 kB
Swap:                  0 kB
";
        // the trace's shape: 7,566 accesses over 600 anon pages, every page touched
        let ops = OpFile {
            anon_hugepage: false,
            lockstep: 0,
            window: 0,
            files: Vec::new(),
            anon_pages: 600,
            ops: (0..7566).map(|i| ReplayOp::Load { vpn: i % 600 }).collect(),
            tasks: Vec::new(),
            ctl: Vec::new(),
            memcgs: Vec::new(),
        };
        let l = Layout::from_smaps(smaps, &ops);
        assert_eq!(l.anon, Some(0x7a), "the merged mapping's first 600 pages");
        assert_eq!(l.heap_pages, Some(30));
        let pt = l.pgtables.expect("every workload mapping found");
        assert_eq!(
            pt,
            ReplayerPageTables {
                workload_pte: 2,
                own_pte: 3,
                pmd: 3,
                pud: 3
            }
        );
        let kernel = 45_056 / 4096;
        assert_eq!(pt.pagetables(true, false), kernel);
        assert_eq!(
            pt.pagetables(false, false),
            8,
            "6.1 counts neither PUD tables nor the PGD"
        );
        let cfg = mglru_6_12_at_4096();
        let pagetables = |l: &Layout| {
            let r = run_at(&ops, &cfg, l).unwrap();
            r.memcg(lrugen::mm::vmstat::Stat::NrPageTablePages) as u64
        };
        assert_eq!(pagetables(&l), kernel);
        // without the count, the per-address-space estimate: 7 + 2 PUD tables, and PTE tables
        // for the workload's 2 and the model's own mapping
        let estimate = Layout {
            pgtables: None,
            ..l.clone()
        };
        assert_eq!(pagetables(&estimate), 7 + 2 + 2 + 1);
        // a short op list is not mapped on its own, so a larger anonymous mapping is not the
        // region merged with it: nothing found, no count
        let short = OpFile {
            ops: ops.ops[..100].to_vec(),
            ..ops.clone()
        };
        let l = Layout::from_smaps(smaps, &short);
        assert_eq!((l.anon, l.pgtables), (None, None));
    }

    /// The control ops of an op file run in the model where the replayer runs them: after the
    /// steps before them, in order, each with the measured accesses done, its errno and `lru_gen`
    /// after it; the placeholders are the model's (its memcg id, its sequence numbers).
    /// A task in a child memcg (`lrugen-ops 4`) runs its control ops on its own memcg's files in
    /// the guest: the model, which writes the workload memcg's, refuses them; without control ops
    /// the task's pages are charged to the child, counted in the workload memcg above it.
    #[test]
    fn a_task_in_a_child_memcg() {
        let cfg = mglru_6_12_at_4096();
        let ctl = OpFile::parse("lrugen-ops 4\nfile 0 f 4\ntask 0 memcg a\nr 0 1\ncr lru_gen\n").unwrap();
        let e = run(&ctl, &cfg).unwrap_err().to_string();
        assert!(e.contains("runs in memcg a below the workload memcg"), "{e}");
        let plain = OpFile::parse("lrugen-ops 4\nfile 0 f 4\ntask 0 memcg a\nr 0 1\nr 0 2\n").unwrap();
        let r = run(&plain, &cfg).unwrap();
        assert_eq!(r.misses, 2);
        assert!(
            r.memcg(lrugen::mm::vmstat::Stat::NrFilePages) >= 2,
            "counted up the tree"
        );
    }

    #[test]
    fn control_ops_run_at_their_places() {
        let text = "lrugen-ops 3\nwindow 0\nfile 0 f 64\ntask 0\ncr lru_gen\nr 0 1\nr 0 2\n\
                    c lru_gen + {memcg} {node} {max_seq} 1 1\nc lru_gen - {memcg} 0 {max_seq}\nr 0 3\n\
                    c memory.reclaim 1M swappiness=0\n";
        let ops = OpFile::parse(text).unwrap();
        let cfg = mglru_6_12_at_4096();
        let r = run(&ops, &cfg).unwrap();
        let res = ctl_results(&ops, &r.ctl).unwrap();
        assert_eq!(res.iter().map(|c| c.id).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(res.iter().map(|c| c.accesses).collect::<Vec<_>>(), [0, 2, 2, 3]);
        let seqs = |c: &crate::CtlResult| {
            crate::ctl::lruvec(&c.text, "/t")
                .unwrap()
                .gens
                .iter()
                .map(|g| g.seq)
                .collect::<Vec<_>>()
        };
        assert_eq!(seqs(&res[0]), [0, 1, 2, 3]);
        assert_eq!(res[1].write.as_deref(), Some("+ 2 0 3 1 1"));
        assert_eq!((res[1].errno.as_ref(), seqs(&res[1])), (None, vec![1, 2, 3, 4]));
        // the two youngest generations cannot be evicted
        assert_eq!(res[2].write.as_deref(), Some("- 2 0 4"));
        assert_eq!(res[2].errno.as_deref(), Some("EINVAL"));
        // 6.12 takes swappiness=0; three file pages cannot make 1M
        assert_eq!(res[3].errno.as_deref(), Some("EAGAIN"));
        assert!(
            res[3].vmstat_delta.get("pgsteal_file").is_some_and(|&v| v > 0),
            "{:?}",
            res[3].vmstat_delta
        );
        // the op file without its control ops replays the same accesses
        let plain = OpFile::parse("lrugen-ops 1\nwindow 0\nfile 0 f 64\nr 0 1\nr 0 2\nr 0 3\n").unwrap();
        assert_eq!(run(&plain, &cfg).unwrap().misses, r.misses);
        // a run's own control script and the op file's cannot both be given
        let mut both = cfg.clone();
        both.ctl = Some(lrugen::control::Script::default());
        assert!(run(&ops, &both)
            .unwrap_err()
            .to_string()
            .contains("expected one of them"));
    }

    /// A guest that swaps to zram swaps to the engine's zram, whatever device the engine
    /// configuration names: its swap-ins are decompression on the task's CPU, not waits for a
    /// device, where a guest's swap disk is the configuration's (an NVMe SSD by default).
    #[test]
    fn the_engine_swaps_where_the_guest_did() {
        let mut text = String::from("lrugen-ops 1\nanon 2048\n");
        for round in 0..3 {
            for p in 0..2048 {
                text.push_str(if round == 0 { "s " } else { "l " });
                text.push_str(&format!("{p}\n"));
            }
        }
        let ops = OpFile::parse(&text).unwrap();
        let run = |swap: &str| {
            let s = Settings {
                lru: "classic".into(),
                lru_gen_enabled: "n".into(),
                swap: swap.into(),
                swap_mib: 64,
                model_capacity_pages: 1024,
                ..Default::default()
            };
            let cfg = config(&s, Profile::V6_12).unwrap();
            let ecfg = lrugen::sim::engine::EngineConfig {
                cpus: 1,
                ..Default::default()
            };
            assert_eq!(ecfg.swap_device.name, "nvme");
            let r = run_engine_at(&ops, &cfg, &Layout::default(), &ecfg).unwrap();
            let e = r.engine.clone().unwrap();
            (r.vm(lrugen::mm::vmstat::Stat::Pswpin), e.time.io_wait_ns)
        };
        let (zram_ins, zram_wait) = run("zram");
        let (disk_ins, disk_wait) = run("disk");
        assert!(zram_ins > 1000 && disk_ins > 1000, "{zram_ins} {disk_ins}");
        assert_eq!(zram_wait, 0, "zram swap-ins are CPU time");
        assert!(disk_wait > 0, "disk swap-ins wait for the device");
    }

    /// The replayer's `mincore()` page (`Step::alloc_page_first`): one page allocated and freed
    /// before each of its accesses, in the inline replay and under the engine alike, and none in
    /// the workload's own replay (`run_workload_only`). With room for everything nothing else is
    /// freed, so `pgfree` counts exactly those pages.
    #[test]
    fn each_replayer_access_allocates_and_frees_a_page() {
        let mut text = String::from("lrugen-ops 1\nfile 0 f 16\nanon 32\n");
        for p in 0..32 {
            text.push_str(&format!("s {p}\nl {p}\n"));
        }
        for i in 0..16 {
            text.push_str(&format!("r 0 {i}\n"));
        }
        let ops = OpFile::parse(&text).unwrap();
        let accesses = 2 * 32 + 16;
        let s = Settings {
            lru: "mglru".into(),
            lru_gen_enabled: "y".into(),
            swap: "none".into(),
            model_capacity_pages: 8192,
            ..Default::default()
        };
        let cfg = config(&s, Profile::V6_12).unwrap();
        let pgfree = |r: &RunResult| r.vm(lrugen::mm::vmstat::Stat::Pgfree);
        let (inline, _) = run_tasks_at(&ops, &cfg, &Layout::default()).unwrap();
        assert_eq!(pgfree(&inline), accesses, "inline");
        let ecfg = lrugen::sim::engine::EngineConfig {
            cpus: 1,
            ..Default::default()
        };
        let engine = run_engine_at(&ops, &cfg, &Layout::default(), &ecfg).unwrap();
        assert_eq!(pgfree(&engine), accesses, "engine");
        assert_eq!(pgfree(&run_workload_only(&ops, &cfg).unwrap()), 0, "the workload alone");
    }

    #[test]
    fn config_takes_the_run_settings() {
        let s = Settings {
            lru: "mglru".into(),
            lru_gen_enabled: "0x0003".into(),
            swappiness: Some(10),
            swap: "zram".into(),
            swap_mib: 64,
            read_ahead_kb: Some(0),
            model_capacity_pages: 7000,
            ..Default::default()
        };
        let c = config(&s, Profile::V6_12).unwrap();
        assert_eq!(c.memcg.max, Some(7000));
        assert_eq!(c.machine.swappiness, 10);
        assert_eq!(c.machine.ra_pages, 0);
        assert_eq!(c.machine.zram_ratio, Some(3.0));
        assert_eq!(c.mglru.caps, 3);
        assert_eq!(c.mglru.profile, Profile::V6_12);
        let bad = Settings {
            lru_gen_enabled: "maybe".into(),
            ..s
        };
        assert!(config(&bad, Profile::V6_1).unwrap_err().to_string().contains("0xBITS"));
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen explain`: why one policy misses more than another on the same stream.
//!
//! Two runs replay the identical stream (lrugen is deterministic), each with a [`Recorder`] in
//! [`Machine::explain`]. The recorder joins the stream's page keys to the machine's frames: after
//! every step the replay loop tags the frame the step touched with its key
//! ([`Recorder::after_step`]); reclaim reports each eviction with what the policy knew of the folio
//! ([`Recorder::evicted`], from `lru_gen_eviction` and `workingset_eviction`) and each refault's
//! verdict ([`Recorder::refault_verdict`]); `Machine::free_frame` drops the tag
//! ([`Recorder::freed`]). Everything is kept in dense arrays indexed by key or frame id: no hashing,
//! and nothing at all when the recorder is off (one `Option` test at each site).
//!
//! [`compare`] then decomposes Δ = misses(A) − misses(B). Every measured miss falls in exactly one
//! class of each dimension, so the per-class Δ values of a dimension sum to Δ exactly:
//!
//! * page type (file / anon) and region (a file, or the anon memory of a task);
//! * access frequency: the page's measured accesses over the run (1, 2–3, 4–7, …), the same in
//!   both runs;
//! * reuse distance: the distinct pages accessed since the page's previous access (its LRU stack
//!   distance), in units of `memory.max`, the same in both runs: a perfect LRU of `memory.max`
//!   pages hits exactly the accesses below 1;
//! * page outcome: each page's misses under A against B (which pages one policy kept and the
//!   other thrashed);
//! * mechanism, from what happened in the run itself: first access; evicted after one access
//!   since it was brought in; evicted after reuse — each split by the refault's verdict (recent,
//!   not recent, no shadow); not resident without an eviction recorded (freed, or read ahead and
//!   evicted before its access);
//! * the context of the eviction before a miss, three dimensions of it (each with a class for
//!   misses no eviction preceded): the MGLRU PID controller's tier protection in the scan that
//!   evicted the page ([`Recorder::scan`], [`Recorder::tier_protected`]); aging passes
//!   (`inc_max_seq`, [`Recorder::aged`]) while the page was resident; and the type reclaim
//!   scanned, anon (swapped out) or file (dropped), with how it was chosen ([`TypeChoice`]);
//! * over time: misses per window of steps.
//!
//! Per run, the policy's own view of its evictions: MGLRU's generation age (`max_seq − min_seq`)
//! and tier, the classic LRU's `PG_workingset`/`PG_referenced`, with the misses they caused.

pub mod cost;
pub mod report;
pub mod study;

use crate::kernel::Access;
use crate::mm::folio::FolioId;
use crate::mm::pagecache::Slot;
use crate::mm::vm::pte;
use crate::mm::Machine;
use crate::workload::{Op, Step, NO_KEY};
use serde::Serialize;

/// What the policy knew of a folio when it evicted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evicted {
    /// MGLRU: generations between the youngest and the oldest of its type (`max_seq − min_seq`),
    /// and the folio's tier.
    Mglru {
        /// `max_seq − min_seq[type]`.
        age: u64,
        /// The tier of its refs.
        tier: usize,
    },
    /// Classic LRU: its `PG_workingset` and `PG_referenced`.
    Classic {
        /// `PG_workingset`.
        workingset: bool,
        /// `PG_referenced`.
        referenced: bool,
    },
}

/// MGLRU ages kept apart (older ones share the last row).
const AGES: usize = 8;
/// Tiers kept apart.
const TIERS: usize = crate::reclaim::mglru::state::MAX_NR_TIERS;
/// Detail classes: MGLRU's ages × tiers; the classic LRU's four use the first ones.
const DETAILS: usize = AGES * TIERS;

impl Evicted {
    fn index(self) -> usize {
        match self {
            Evicted::Mglru { age, tier } => (age.min(AGES as u64 - 1) as usize) * TIERS + tier.min(TIERS - 1),
            Evicted::Classic { workingset, referenced } => usize::from(workingset) * 2 + usize::from(referenced),
        }
    }
}

/// Mechanism classes, in report order.
pub const MECHANISMS: [&str; 8] = [
    "first access",
    "evicted after one access, refault recent",
    "evicted after one access, refault not recent",
    "evicted after one access, no shadow",
    "evicted after reuse, refault recent",
    "evicted after reuse, refault not recent",
    "evicted after reuse, no shadow",
    "not resident, no eviction recorded",
];
const FIRST: usize = 0;
const OTHER: usize = 7;

/// Classes of the MGLRU PID controller's tier protection in the scan that evicted the page
/// (`get_tier_idx`, or 6.1's `get_type_to_scan`, against `sort_folio`'s protection).
pub const TIER_CLASSES: [&str; 4] = [
    NOT_EVICTED,
    "evicted from a tier below ones its scan protected",
    "evicted, its scan protected no tier",
    "evicted by the classic LRU (no tiers)",
];

/// Classes of MGLRU aging between the page's coming in and its eviction (`inc_max_seq`).
pub const AGING_CLASSES: [&str; 4] = [
    NOT_EVICTED,
    "evicted before any aging pass since it came in",
    "evicted after aging passes",
    "evicted by the classic LRU (no generations)",
];

/// Classes of the type reclaim evicted the page from, and how the type was chosen.
pub const TYPE_CLASSES: [&str; 8] = [
    NOT_EVICTED,
    "anon swapped out, type forced",
    "anon swapped out, type balanced by swappiness",
    "anon swapped out, the chosen type had nothing to scan",
    "file dropped, type forced",
    "file dropped, type balanced by swappiness",
    "file dropped, the chosen type had nothing to scan",
    "evicted outside a reclaim scan",
];

/// The first class of the eviction-context dimensions: misses with no eviction before them.
const NOT_EVICTED: &str = "not evicted (first access, or no eviction recorded)";

/// How reclaim chose the type (anon or file) of the scan it evicts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeChoice {
    /// No choice: a rule did (MGLRU: swappiness 0/1 or 200 and up, 6.1's `min_seq` rule;
    /// classic: `SCAN_FILE`/`SCAN_ANON` of `get_scan_count`: no swap, swappiness 0 in a memcg,
    /// cache trim mode, tiny file lists).
    Forced,
    /// Balanced by swappiness against refaults (MGLRU's PID on the types) or reclaim cost
    /// (classic's `SCAN_FRACT`, and `SCAN_EQUAL`).
    Balanced,
    /// MGLRU: the type chosen had nothing to scan, so `isolate_folios` took the other one.
    Fallback,
}

/// A scan's context, as reclaim set it (`SCAN_NONE`: outside a scan).
const SCAN_NONE: u8 = 0;

/// Reuse-distance classes, in units of `memory.max` (distinct pages accessed since the page's
/// previous access).
pub const DISTANCES: [&str; 7] = [
    "first access",
    "distance < 1/4 memory.max",
    "distance 1/4-1/2 memory.max",
    "distance 1/2-1 memory.max",
    "distance 1-2 memory.max",
    "distance 2-4 memory.max",
    "distance >= 4 memory.max",
];

/// Page-outcome classes: each page's measured misses under A against B.
pub const OUTCOMES: [&str; 5] = [
    "as many misses under both",
    "more under A, none under B (B kept it)",
    "more under A, some under B too",
    "more under B, none under A (A kept it)",
    "more under B, some under A too",
];

/// Frequency buckets: 1, 2–3, 4–7, … up to this many, the last open.
const FREQS: usize = 16;

/// Region tag bit: the anon memory of a task (the low bits), else a file id.
const ANON_REGION: u32 = 1 << 31;
const NO_REGION: u32 = u32::MAX;
/// Frame verdicts.
const NO_VERDICT: u8 = 0;
const RECENT: u8 = 1;
const NOT_RECENT: u8 = 2;
/// A key's eviction record: 0 none, else `1 | reused << 1 | detail << 2 | protected << 8 |
/// never aged << 9 | type class << 10`.
const EVICTED: u32 = 1;
const REUSED: u32 = 2;
const DETAIL_MASK: u32 = 0x3f;
const PROTECTED: u32 = 1 << 8;
const NEVER_AGED: u32 = 1 << 9;
const TYPE_SHIFT: u32 = 10;

/// What one run records (see the module's documentation). Built by `sim::run_recorded`.
#[derive(Clone, Debug)]
pub struct Recorder {
    /// Per frame: the key + 1 of the page it holds (0: untagged).
    frame_key: Vec<u32>,
    /// Per frame: the verdict of the refault that brought it in, until its first access.
    frame_verdict: Vec<u8>,
    /// Per frame: its lruvec's aging passes when it was tagged.
    frame_aged: Vec<u32>,
    /// Per lruvec: MGLRU aging passes (`inc_max_seq`) so far.
    aging: Vec<u32>,
    /// The reclaim scan running: its type choice + 1 (`SCAN_NONE`: none), and the folios it
    /// protected by tier.
    scan_choice: u8,
    scan_protected: u32,
    /// Reuse distances of the stream.
    reuse: Reuse,
    /// Per key: measured accesses.
    accesses: Vec<u32>,
    /// Per key: measured misses.
    misses: Vec<u32>,
    /// Per key: accesses since it was brought in.
    uses: Vec<u32>,
    /// Per key: the eviction that took it out, while it is out.
    evict: Vec<u32>,
    /// Per key: its region.
    region: Vec<u32>,
    step: u64,
    window_steps: u64,
    memcg_max: u64,
    windows: Vec<u64>,
    mech: [u64; MECHANISMS.len()],
    distance: [u64; DISTANCES.len()],
    detail_evictions: [u64; DETAILS],
    detail_misses: [u64; DETAILS],
    tiers: [u64; TIER_CLASSES.len()],
    aged: [u64; AGING_CLASSES.len()],
    types: [u64; TYPE_CLASSES.len()],
    untagged_evictions: u64,
    mglru: bool,
    /// Engine runs: per task, the offset of its stream's keys (the tasks of one job share its
    /// files and its keys, the jobs' keys follow one another), and its job.
    task_base: Vec<u32>,
    task_job: Vec<u32>,
    /// Per key: the job that touched it first (`NO_REGION`: none, or not an engine run).
    job: Vec<u32>,
    job_names: Vec<String>,
}

impl Recorder {
    /// A recorder for a machine of `frames` page frames, a stream of `nr_keys` keys and `steps`
    /// steps cut into `windows` windows, in a memcg of `memcg_max` pages.
    pub fn new(frames: u64, nr_keys: u32, steps: u64, windows: u64, memcg_max: u64) -> Recorder {
        let n = nr_keys as usize;
        let windows = windows.max(1);
        Recorder {
            frame_key: vec![0; frames as usize],
            frame_verdict: vec![NO_VERDICT; frames as usize],
            frame_aged: vec![0; frames as usize],
            aging: Vec::new(),
            scan_choice: SCAN_NONE,
            scan_protected: 0,
            reuse: Reuse::new(n),
            accesses: vec![0; n],
            misses: vec![0; n],
            uses: vec![0; n],
            evict: vec![0; n],
            region: vec![NO_REGION; n],
            step: 0,
            window_steps: steps.div_ceil(windows).max(1),
            memcg_max: memcg_max.max(1),
            windows: vec![0; windows as usize],
            mech: [0; MECHANISMS.len()],
            distance: [0; DISTANCES.len()],
            detail_evictions: [0; DETAILS],
            detail_misses: [0; DETAILS],
            tiers: [0; TIER_CLASSES.len()],
            aged: [0; AGING_CLASSES.len()],
            types: [0; TYPE_CLASSES.len()],
            untagged_evictions: 0,
            mglru: false,
            task_base: Vec::new(),
            task_job: Vec::new(),
            job: Vec::new(),
            job_names: Vec::new(),
        }
    }

    /// An engine run's tasks: per task its job, and per job its keys (the largest of its
    /// streams': a job's streams share its file or table) and its name. The keys of job `j` are
    /// offset by those of the jobs before it, so that a page's key is the same in two runs of the
    /// same tasks whatever order their steps interleave in.
    pub fn set_tasks(&mut self, task_job: Vec<u32>, job_keys: &[u32], job_names: Vec<String>) {
        let mut base = Vec::with_capacity(job_keys.len());
        let mut sum = 0u32;
        for &n in job_keys {
            base.push(sum);
            sum = sum.saturating_add(n);
        }
        self.task_base = task_job
            .iter()
            .map(|&j| base.get(j as usize).copied().unwrap_or(0))
            .collect();
        self.task_job = task_job;
        self.job_names = job_names;
        let n = sum as usize;
        self.reuse = Reuse::new(n);
        self.job = vec![NO_REGION; n];
        for v in [&mut self.accesses, &mut self.misses, &mut self.uses, &mut self.evict] {
            v.clear();
            v.resize(n, 0);
        }
        self.region.clear();
        self.region.resize(n, NO_REGION);
    }

    #[inline]
    fn frame(&mut self, id: FolioId) -> usize {
        let i = id as usize;
        if i >= self.frame_key.len() {
            self.frame_key.resize(i + 1, 0);
            self.frame_verdict.resize(i + 1, NO_VERDICT);
            self.frame_aged.resize(i + 1, 0);
        }
        i
    }

    fn aging_of(&mut self, lv: usize) -> &mut u32 {
        if lv >= self.aging.len() {
            self.aging.resize(lv + 1, 0);
        }
        &mut self.aging[lv]
    }

    /// MGLRU opened a new youngest generation in lruvec `lv` (`inc_max_seq`): an aging pass.
    pub fn aged(&mut self, lv: usize) {
        let a = self.aging_of(lv);
        *a = a.wrapping_add(1);
    }

    /// Reclaim starts a scan of a type chosen so (MGLRU: `isolate_folios`, once per type it
    /// tries; classic: `shrink_lruvec` after `get_scan_count`). Evictions until [`Self::scan_end`]
    /// are of this scan.
    pub fn scan(&mut self, choice: TypeChoice) {
        self.scan_choice = 1 + choice as u8;
        self.scan_protected = 0;
    }

    /// MGLRU's `sort_folio` moved a folio to the next generation because its tier is above the
    /// scan's tier index (the PID controller protected it).
    pub fn tier_protected(&mut self) {
        self.scan_protected = self.scan_protected.saturating_add(1);
    }

    /// The scan begun by [`Self::scan`] is over.
    pub fn scan_end(&mut self) {
        self.scan_choice = SCAN_NONE;
        self.scan_protected = 0;
    }

    fn key(&mut self, key: u32) -> usize {
        let k = key as usize;
        if k >= self.accesses.len() {
            let n = k + 1;
            self.accesses.resize(n, 0);
            self.misses.resize(n, 0);
            self.uses.resize(n, 0);
            self.evict.resize(n, 0);
            self.region.resize(n, NO_REGION);
            if !self.job.is_empty() {
                self.job.resize(n, NO_REGION);
            }
        }
        k
    }

    /// Reclaim evicts frame `id` (its shadow is being made), an anon folio if `anon`, from
    /// lruvec `lv`.
    pub fn evicted(&mut self, id: FolioId, lv: usize, anon: bool, what: Evicted) {
        self.mglru = matches!(what, Evicted::Mglru { .. });
        let i = self.frame(id);
        let d = what.index();
        self.detail_evictions[d] += 1;
        let mut rec = EVICTED | (d as u32) << 2;
        if self.scan_protected > 0 {
            rec |= PROTECTED;
        }
        if *self.aging_of(lv) == self.frame_aged[i] {
            rec |= NEVER_AGED;
        }
        let ty = match self.scan_choice {
            SCAN_NONE => TYPE_CLASSES.len() as u32 - 1,
            c => u32::from(c) + if anon { 0 } else { 3 },
        };
        rec |= ty << TYPE_SHIFT;
        match std::mem::take(&mut self.frame_key[i]) {
            0 => self.untagged_evictions += 1,
            k => {
                let k = (k - 1) as usize;
                let reused = if self.uses[k] >= 2 { REUSED } else { 0 };
                self.evict[k] = rec | reused;
            }
        }
    }

    /// A refault's verdict for the folio `id` brought in where a shadow was.
    pub fn refault_verdict(&mut self, id: FolioId, recent: bool) {
        let i = self.frame(id);
        self.frame_verdict[i] = if recent { RECENT } else { NOT_RECENT };
    }

    /// Frame `id` is freed.
    pub fn freed(&mut self, id: FolioId) {
        let i = self.frame(id);
        self.frame_key[i] = 0;
        self.frame_verdict[i] = NO_VERDICT;
    }

    /// The replay loop ran step `s` with outcome `a` on machine `m`.
    pub fn after_step(m: &mut Machine, s: &Step, a: Access) {
        let Some(mut x) = m.explain.take() else {
            return;
        };
        x.record(m, s, a);
        m.explain = Some(x);
    }

    /// The engine ran task `task`'s step `s` with outcome `a` on machine `m`; `measure`: whether
    /// the engine counts it (a step of fio's ramp is not).
    pub fn after_task_step(m: &mut Machine, task: usize, s: &Step, a: Access, measure: bool) {
        let Some(mut x) = m.explain.take() else {
            return;
        };
        let mut s = *s;
        s.measure = measure;
        let job = x.task_job.get(task).copied().unwrap_or(0);
        if s.key != NO_KEY {
            s.key = s.key.saturating_add(x.task_base.get(task).copied().unwrap_or(0));
            if let Some(j) = x.job.get_mut(s.key as usize) {
                if *j == NO_REGION {
                    *j = job;
                }
            }
        }
        x.record(m, &s, a);
        m.explain = Some(x);
    }

    fn record(&mut self, m: &Machine, s: &Step, a: Access) {
        let step = self.step;
        self.step += 1;
        if s.key == NO_KEY {
            return;
        }
        let (frame, task) = match s.op {
            Op::Read { file, index, .. } | Op::Write { file, index, .. } => {
                match m.files.get(file as usize).map(|f| f.slot(index)) {
                    Some(Slot::Folio(id)) => (Some(id), None),
                    _ => (None, None),
                }
            }
            Op::Load { task, vpn } | Op::Store { task, vpn } => {
                let e = m.pte_or_none(task, vpn);
                let present = e & pte::PRESENT != 0;
                (present.then_some(e & pte::PFN_MASK), Some(task))
            }
            _ => return,
        };
        let k = self.key(s.key);
        if self.region[k] == NO_REGION {
            // anon memory is the task's (named by it), a file page its file's; a load that maps
            // the zero page has no frame and is anon
            self.region[k] = match (frame.map(|id| m.folios[id]), task) {
                (Some(f), Some(t)) if f.is_anon() => ANON_REGION | t,
                (Some(f), _) if !f.is_anon() => f.mapping,
                (_, Some(t)) => ANON_REGION | t,
                _ => NO_REGION,
            };
        }
        let dist = self.reuse.access(k);
        let verdict = frame.map_or(NO_VERDICT, |id| self.frame_verdict[id as usize]);
        if s.measure {
            self.accesses[k] += 1;
            if a == Access::Major {
                self.misses[k] += 1;
                let w = ((step / self.window_steps) as usize).min(self.windows.len() - 1);
                self.windows[w] += 1;
                self.distance[distance_class(dist, self.memcg_max)] += 1;
                let e = self.evict[k];
                let evicted = dist.is_some() && e & EVICTED != 0;
                let (tier, aged, ty) = match (evicted, self.mglru) {
                    (false, _) => (0, 0, 0),
                    (true, false) => (3, 3, e >> TYPE_SHIFT),
                    (true, true) => (
                        if e & PROTECTED != 0 { 1 } else { 2 },
                        if e & NEVER_AGED != 0 { 1 } else { 2 },
                        e >> TYPE_SHIFT,
                    ),
                };
                self.tiers[tier] += 1;
                self.aged[aged] += 1;
                self.types[ty as usize] += 1;
                let mech = if dist.is_none() {
                    FIRST
                } else if e & EVICTED == 0 {
                    OTHER
                } else {
                    self.detail_misses[((e >> 2) & DETAIL_MASK) as usize] += 1;
                    let base = if e & REUSED != 0 { 4 } else { 1 };
                    base + match verdict {
                        RECENT => 0,
                        NOT_RECENT => 1,
                        _ => 2,
                    }
                };
                self.mech[mech] += 1;
            }
        }
        if let Some(id) = frame {
            let i = self.frame(id);
            self.frame_verdict[i] = NO_VERDICT;
            if self.frame_key[i] != s.key + 1 {
                self.frame_key[i] = s.key + 1;
                // aging passes of its lruvec from here on count as having seen it
                let f = m.folios[id];
                let lv = m.lruvec(f.memcg, f.node());
                self.frame_aged[i] = *self.aging_of(lv);
                self.uses[k] = 1;
                self.evict[k] = 0;
            } else {
                self.uses[k] = self.uses[k].saturating_add(1);
            }
        }
    }

    /// The recording of the finished run (region names read from `m`).
    pub fn finish(self, m: &Machine) -> Recording {
        let mut regions: Vec<u32> = self.region.iter().copied().filter(|&r| r != NO_REGION).collect();
        regions.sort_unstable();
        regions.dedup();
        let region_names = regions
            .iter()
            .map(|&r| {
                if r & ANON_REGION != 0 {
                    (r, format!("anon of task {}", r & !ANON_REGION))
                } else {
                    let name = m.files.get(r as usize).map_or("?", |f| f.name.as_str());
                    // two files of one name (each part of a mix names its own `fio.0.0`): by id
                    let twice = regions.iter().any(|&o| {
                        o != r && o & ANON_REGION == 0 && m.files.get(o as usize).is_some_and(|f| f.name == name)
                    });
                    if twice {
                        (r, format!("file {name} (id {r})"))
                    } else {
                        (r, format!("file {name}"))
                    }
                }
            })
            .collect();
        let details = (0..DETAILS)
            .filter(|&d| self.detail_evictions[d] > 0 || self.detail_misses[d] > 0)
            .map(|d| Detail {
                class: detail_label(self.mglru, d),
                evictions: self.detail_evictions[d],
                misses: self.detail_misses[d],
            })
            .collect();
        Recording {
            steps: self.step,
            window_steps: self.window_steps,
            memcg_max: self.memcg_max,
            accesses: self.accesses,
            misses: self.misses,
            region: self.region,
            region_names,
            windows: self.windows,
            mechanism: self.mech.to_vec(),
            tiers: self.tiers.to_vec(),
            aging: self.aged.to_vec(),
            types: self.types.to_vec(),
            distance: self.distance.to_vec(),
            details,
            untagged_evictions: self.untagged_evictions,
            job: self.job,
            job_names: self.job_names,
            task_job: self.task_job,
        }
    }
}

/// Reuse distances (LRU stack distances) of a stream of keys, in O(log n) per access and memory
/// proportional to the keys, not the stream: a Fenwick tree over the slots of the keys' last
/// accesses, in access order; when the slots run out, the live ones are renumbered densely.
#[derive(Clone, Debug)]
struct Reuse {
    /// Fenwick tree (1-based) of occupied slots.
    tree: Vec<u32>,
    /// Per slot: key + 1 (0: free).
    slot_key: Vec<u32>,
    /// Per key: slot + 1 of its last access (0: never accessed).
    key_slot: Vec<u32>,
    /// The next free slot.
    next: usize,
    /// Occupied slots (keys seen).
    live: u64,
}

impl Reuse {
    fn new(nr_keys: usize) -> Reuse {
        let cap = (2 * nr_keys).max(64);
        Reuse {
            tree: vec![0; cap + 1],
            slot_key: vec![0; cap],
            key_slot: vec![0; nr_keys],
            next: 0,
            live: 0,
        }
    }

    fn add(&mut self, slot: usize, v: i32) {
        let mut i = slot + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(v);
            i += i & i.wrapping_neg();
        }
    }

    /// Occupied slots in `0..=slot`.
    fn upto(&self, slot: usize) -> u64 {
        let (mut i, mut n) = (slot + 1, 0u64);
        while i > 0 {
            n += self.tree[i] as u64;
            i &= i - 1;
        }
        n
    }

    /// Renumber the occupied slots `0..live`, in order (and make room when the keys have grown
    /// past half the slots).
    fn compact(&mut self) {
        let live = self.live as usize;
        let cap = self.slot_key.len().max(2 * live + 64);
        let mut keys = Vec::with_capacity(live);
        keys.extend(self.slot_key.iter().copied().filter(|&k| k != 0));
        self.slot_key.clear();
        self.slot_key.resize(cap, 0);
        for (i, &k) in keys.iter().enumerate() {
            self.slot_key[i] = k;
            self.key_slot[(k - 1) as usize] = i as u32 + 1;
        }
        // the tree of `live` ones from slot 0, built in O(n)
        self.tree.clear();
        self.tree.resize(cap + 1, 0);
        for i in 1..=cap {
            self.tree[i] += u32::from(i <= live);
            let j = i + (i & i.wrapping_neg());
            if j <= cap {
                self.tree[j] += self.tree[i];
            }
        }
        self.next = live;
    }

    /// Key `k` is accessed: the distinct keys accessed since its previous access, `None` for its
    /// first.
    fn access(&mut self, k: usize) -> Option<u64> {
        if k >= self.key_slot.len() {
            self.key_slot.resize(k + 1, 0);
        }
        let dist = match self.key_slot[k] {
            0 => None,
            s => {
                let s = (s - 1) as usize;
                let d = self.live - self.upto(s);
                self.add(s, -1);
                self.slot_key[s] = 0;
                self.live -= 1;
                Some(d)
            }
        };
        if self.next == self.slot_key.len() {
            self.compact();
        }
        let slot = self.next;
        self.add(slot, 1);
        self.slot_key[slot] = k as u32 + 1;
        self.key_slot[k] = slot as u32 + 1;
        self.next += 1;
        self.live += 1;
        dist
    }
}

fn distance_class(dist: Option<u64>, max: u64) -> usize {
    let Some(d) = dist else {
        return 0;
    };
    // in quarters of memory.max
    let q = d.saturating_mul(4) / max;
    match q {
        0 => 1,
        1 => 2,
        2 | 3 => 3,
        4..=7 => 4,
        8..=15 => 5,
        _ => 6,
    }
}

fn detail_label(mglru: bool, d: usize) -> String {
    if mglru {
        let (age, tier) = (d / TIERS, d % TIERS);
        let age = if age == AGES - 1 {
            format!(">={age}")
        } else {
            age.to_string()
        };
        format!("age {age}, tier {tier}")
    } else {
        format!("workingset={}, referenced={}", d >= 2, d % 2 == 1)
    }
}

fn freq_label(b: usize) -> String {
    let lo = 1u64 << b;
    if b == FREQS - 1 {
        format!(">={lo} accesses")
    } else if lo == 1 {
        "1 access".into()
    } else {
        format!("{lo}-{} accesses", 2 * lo - 1)
    }
}

/// Evictions of one class of the policy's own view, with the measured misses they caused.
#[derive(Clone, Debug, Serialize)]
pub struct Detail {
    /// `age A, tier T` (MGLRU) or `workingset=W, referenced=R` (classic).
    pub class: String,
    /// Evictions over the run (warm-up included).
    pub evictions: u64,
    /// Measured misses of pages last evicted so.
    pub misses: u64,
}

/// What a [`Recorder`] saw over a run.
#[derive(Clone, Debug)]
pub struct Recording {
    /// Steps replayed.
    pub steps: u64,
    /// Steps per window.
    pub window_steps: u64,
    /// `memory.max` (pages), the unit of the reuse distance.
    pub memcg_max: u64,
    /// Per key: measured accesses.
    pub accesses: Vec<u32>,
    /// Per key: measured misses.
    pub misses: Vec<u32>,
    /// Per key: region tag.
    pub region: Vec<u32>,
    /// Region tags and their names.
    pub region_names: Vec<(u32, String)>,
    /// Measured misses per window.
    pub windows: Vec<u64>,
    /// Measured misses per mechanism ([`MECHANISMS`]).
    pub mechanism: Vec<u64>,
    /// Measured misses per tier-protection class of their last eviction ([`TIER_CLASSES`]).
    pub tiers: Vec<u64>,
    /// Measured misses per aging class of their last eviction ([`AGING_CLASSES`]).
    pub aging: Vec<u64>,
    /// Measured misses per type class of their last eviction ([`TYPE_CLASSES`]).
    pub types: Vec<u64>,
    /// Measured misses per reuse distance ([`DISTANCES`]).
    pub distance: Vec<u64>,
    /// The policy's own view of its evictions.
    pub details: Vec<Detail>,
    /// Evictions of frames never accessed since they were brought in (read-ahead).
    pub untagged_evictions: u64,
    /// Engine runs: per key, the job that touched it first (`u32::MAX`: none); empty otherwise.
    pub job: Vec<u32>,
    /// Engine runs: the jobs' names.
    pub job_names: Vec<String>,
    /// Engine runs: per task, its job.
    pub task_job: Vec<u32>,
}

impl Recording {
    /// Measured misses, summed over the pages.
    pub fn total_misses(&self) -> u64 {
        self.misses.iter().map(|&m| m as u64).sum()
    }
}

/// One class of a dimension: misses under A and B and Δ = A − B.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Row {
    /// The class.
    pub class: String,
    /// Misses under A.
    pub a: u64,
    /// Misses under B.
    pub b: u64,
    /// `a − b`.
    pub delta: i64,
}

/// One dimension of the decomposition.
#[derive(Clone, Debug, Serialize)]
pub struct Dimension {
    /// Its name.
    pub name: String,
    /// Its classes, each miss in exactly one.
    pub rows: Vec<Row>,
}

/// One run's side of an explanation.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    /// The policy as given.
    pub policy: String,
    /// Measured misses.
    pub misses: u64,
    /// Its evictions, by what the policy knew of them.
    pub evictions: Vec<Detail>,
    /// Evictions of pages read ahead and never accessed.
    pub untagged_evictions: u64,
}

/// Misses of one window of steps.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Window {
    /// First step.
    pub start: u64,
    /// One past the last step.
    pub end: u64,
    /// Misses under A.
    pub a: u64,
    /// Misses under B.
    pub b: u64,
    /// `a − b`.
    pub delta: i64,
}

/// Δ = misses(A) − misses(B), decomposed.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// Run A.
    pub a: Side,
    /// Run B.
    pub b: Side,
    /// `a.misses − b.misses`.
    pub delta: i64,
    /// The dimensions (page type, region, access frequency, reuse gap, mechanism).
    pub dimensions: Vec<Dimension>,
    /// Misses per window.
    pub windows: Vec<Window>,
}

fn row(class: String, a: u64, b: u64) -> Row {
    Row {
        class,
        a,
        b,
        delta: a as i64 - b as i64,
    }
}

/// Classes of a per-key dimension, in the order of their keys.
fn by_key(a: &Recording, b: &Recording, class_of: impl Fn(usize) -> (u64, String)) -> Vec<Row> {
    let mut rows: std::collections::BTreeMap<u64, Row> = Default::default();
    let n = a.misses.len().max(b.misses.len());
    for k in 0..n {
        let (ma, mb) = (
            a.misses.get(k).copied().unwrap_or(0) as u64,
            b.misses.get(k).copied().unwrap_or(0) as u64,
        );
        if ma == 0 && mb == 0 {
            continue;
        }
        let (order, class) = class_of(k);
        let r = rows.entry(order).or_insert_with(|| row(class, 0, 0));
        r.a += ma;
        r.b += mb;
        r.delta += ma as i64 - mb as i64;
    }
    rows.into_values().collect()
}

fn dimension(name: &str, rows: Vec<Row>) -> Dimension {
    Dimension {
        name: name.into(),
        rows,
    }
}

/// Decompose the difference in misses between recordings `a` and `b` of the same stream.
pub fn compare(name_a: &str, a: &Recording, name_b: &str, b: &Recording) -> Explanation {
    let region_of = |k: usize| a.region.get(k).or(b.region.get(k)).copied().unwrap_or(NO_REGION);
    let name_of = |r: u32| {
        a.region_names
            .iter()
            .chain(&b.region_names)
            .find(|(t, _)| *t == r)
            .map_or_else(|| "unknown".to_string(), |(_, n)| n.clone())
    };
    let accesses = |k: usize| a.accesses.get(k).or(b.accesses.get(k)).copied().unwrap_or(0);
    let page_type = by_key(a, b, |k| {
        if region_of(k) & ANON_REGION != 0 && region_of(k) != NO_REGION {
            (1, "anon".into())
        } else {
            (0, "file".into())
        }
    });
    let region = by_key(a, b, |k| {
        let r = region_of(k);
        (r as u64, name_of(r))
    });
    let freq = by_key(a, b, |k| {
        let n = accesses(k).max(1);
        let b = ((31 - n.leading_zeros()) as usize).min(FREQS - 1);
        (b as u64, freq_label(b))
    });
    let outcome = by_key(a, b, |k| {
        let (ma, mb) = (
            a.misses.get(k).copied().unwrap_or(0),
            b.misses.get(k).copied().unwrap_or(0),
        );
        let o = match (ma.cmp(&mb), ma, mb) {
            (std::cmp::Ordering::Equal, _, _) => 0,
            (std::cmp::Ordering::Greater, _, 0) => 1,
            (std::cmp::Ordering::Greater, _, _) => 2,
            (std::cmp::Ordering::Less, 0, _) => 3,
            (std::cmp::Ordering::Less, _, _) => 4,
        };
        (o as u64, OUTCOMES[o].to_string())
    });
    let fixed = |names: &[&str], xa: &[u64], xb: &[u64]| -> Vec<Row> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| row(n.to_string(), xa[i], xb[i]))
            .filter(|r| r.a > 0 || r.b > 0)
            .collect()
    };
    let mut dimensions = vec![
        dimension("page type", page_type),
        dimension("region", region),
        dimension("access frequency", freq),
        dimension(
            "reuse distance (distinct pages since the previous access)",
            fixed(&DISTANCES, &a.distance, &b.distance),
        ),
        dimension("page outcome", outcome),
        dimension("mechanism", fixed(&MECHANISMS, &a.mechanism, &b.mechanism)),
        dimension(
            "mechanism: tier protection in the evicting scan",
            fixed(&TIER_CLASSES, &a.tiers, &b.tiers),
        ),
        dimension(
            "mechanism: aging before the eviction",
            fixed(&AGING_CLASSES, &a.aging, &b.aging),
        ),
        dimension(
            "mechanism: type reclaim chose (swapped vs dropped)",
            fixed(&TYPE_CLASSES, &a.types, &b.types),
        ),
    ];
    if !a.job.is_empty() || !b.job.is_empty() {
        // engine runs: the task (job) whose stream touched the page; all in the one memcg
        let job_of = |k: usize| a.job.get(k).or(b.job.get(k)).copied().unwrap_or(NO_REGION);
        let names = if a.job_names.is_empty() {
            &b.job_names
        } else {
            &a.job_names
        };
        let task = by_key(a, b, |k| {
            let j = job_of(k);
            let name = names.get(j as usize).cloned().unwrap_or_else(|| "no task".to_string());
            (u64::from(j), name)
        });
        dimensions.insert(
            2,
            Dimension {
                name: "task (the job whose stream touched the page; one memcg)".into(),
                rows: task,
            },
        );
    }
    let windows = (0..a.windows.len().max(b.windows.len()))
        .map(|i| {
            let (wa, wb) = (
                a.windows.get(i).copied().unwrap_or(0),
                b.windows.get(i).copied().unwrap_or(0),
            );
            let start = i as u64 * a.window_steps;
            Window {
                start,
                end: (start + a.window_steps).min(a.steps.max(b.steps)),
                a: wa,
                b: wb,
                delta: wa as i64 - wb as i64,
            }
        })
        .collect();
    let side = |policy: &str, r: &Recording| Side {
        policy: policy.into(),
        misses: r.total_misses(),
        evictions: r.details.clone(),
        untagged_evictions: r.untagged_evictions,
    };
    Explanation {
        a: side(name_a, a),
        b: side(name_b, b),
        delta: a.total_misses() as i64 - b.total_misses() as i64,
        dimensions,
        windows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_classes_are_quarters_of_memory_max() {
        assert_eq!(distance_class(None, 100), 0);
        assert_eq!(distance_class(Some(0), 100), 1);
        assert_eq!(distance_class(Some(24), 100), 1);
        assert_eq!(distance_class(Some(25), 100), 2);
        assert_eq!(distance_class(Some(99), 100), 3);
        assert_eq!(distance_class(Some(100), 100), 4);
        assert_eq!(distance_class(Some(399), 100), 5);
        assert_eq!(distance_class(Some(400), 100), 6);
    }

    /// The reuse distance of each access, by a plain LRU stack.
    fn naive(keys: &[usize]) -> Vec<Option<u64>> {
        let mut stack: Vec<usize> = Vec::new();
        keys.iter()
            .map(|&k| {
                let d = stack.iter().rposition(|&x| x == k).map(|i| {
                    stack.remove(i);
                    (stack.len() - i) as u64
                });
                stack.push(k);
                d
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn reuse_distances_are_lru_stack_distances(
            keys in proptest::collection::vec(0usize..40, 0..600),
            declared in 0usize..50,
        ) {
            // `declared` below the keys used makes the tracker grow, and a small one compacts often
            let mut r = Reuse::new(declared);
            let got: Vec<Option<u64>> = keys.iter().map(|&k| r.access(k)).collect();
            proptest::prop_assert_eq!(got, naive(&keys));
        }
    }

    #[test]
    fn eviction_records_keep_their_fields_apart() {
        // detail, flags and type class in one u32 without overlap
        const {
            assert!(DETAILS as u32 <= DETAIL_MASK + 1);
            assert!((DETAIL_MASK << 2) < PROTECTED);
            assert!(PROTECTED < NEVER_AGED && NEVER_AGED < 1 << TYPE_SHIFT);
        }
        // the scan's type choice and the folio's type pick the type class
        let mut r = Recorder::new(4, 2, 10, 1, 4);
        r.scan(TypeChoice::Fallback);
        r.tier_protected();
        r.frame_key[1] = 2;
        r.evicted(1, 0, false, Evicted::Mglru { age: 2, tier: 0 });
        let e = r.evict[1];
        assert_eq!(
            TYPE_CLASSES[(e >> TYPE_SHIFT) as usize],
            "file dropped, the chosen type had nothing to scan"
        );
        assert!(e & PROTECTED != 0 && e & NEVER_AGED != 0);
        r.scan_end();
        r.aged(0);
        r.frame_key[2] = 1;
        r.evicted(2, 0, true, Evicted::Mglru { age: 2, tier: 1 });
        let e = r.evict[0];
        assert_eq!(
            TYPE_CLASSES[(e >> TYPE_SHIFT) as usize],
            "evicted outside a reclaim scan"
        );
        assert!(e & PROTECTED == 0 && e & NEVER_AGED == 0);
        assert_eq!((e >> 2) & DETAIL_MASK, 2 * TIERS as u32 + 1);
    }

    #[test]
    fn detail_indices_stay_in_range() {
        assert_eq!(Evicted::Mglru { age: 100, tier: 9 }.index(), DETAILS - 1);
        assert_eq!(
            Evicted::Classic {
                workingset: true,
                referenced: true
            }
            .index(),
            3
        );
        assert_eq!(freq_label(0), "1 access");
        assert_eq!(freq_label(2), "4-7 accesses");
    }
}

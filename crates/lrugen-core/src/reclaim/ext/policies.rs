// SPDX-License-Identifier: GPL-2.0-only
//! cache_ext's example policies written against [`CacheExtOps`]: FIFO, MRU, LFU (their
//! "sampling" policy), S3-FIFO, LHD and the GET-SCAN policy of the LevelDB evaluation. Each keeps
//! the logic of the example in cache_ext's `policies/` (docs/cache-ext.md says where it is
//! simplified). Their programs only watch the files of one directory (`inode_in_watchlist`); here
//! every page-cache folio of the attached memcg is relevant. BPF hash maps keyed by folio pointer
//! are dense arrays indexed by folio id.

use super::{
    CacheExtCtx, CacheExtOps, EvictionCtx, FolioMap, FolioView, IterAction, IterMode, IterateOpts, ListId,
    SamplingOptions,
};
use crate::mm::folio::FolioId;
use crate::mm::memcg::MemcgId;
use std::collections::{HashMap, VecDeque};

/// A policy shipped with lrugen, chosen by name (`cache_ext:<name>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shipped {
    /// `cache_ext_fifo`.
    Fifo,
    /// `cache_ext_mru`.
    Mru,
    /// `cache_ext_sampling`: LFU by sampling.
    Lfu,
    /// `cache_ext_s3fifo`.
    S3Fifo,
    /// `cache_ext_lhd`.
    Lhd,
    /// `cache_ext_get_scan`.
    GetScan,
}

/// What a shipped policy may need from the run: which tasks scan (GET-SCAN's `scan_pids`).
#[derive(Clone, Debug, Default)]
pub struct PolicyEnv {
    /// The tasks (mm ids) whose page-cache insertions are scans: by name, the tasks of a mix's
    /// last part.
    pub scan_tasks: Vec<u32>,
}

impl Shipped {
    /// Every shipped policy.
    pub const ALL: [Shipped; 6] = [
        Shipped::Fifo,
        Shipped::Mru,
        Shipped::Lfu,
        Shipped::S3Fifo,
        Shipped::Lhd,
        Shipped::GetScan,
    ];

    /// Its name after `cache_ext:`.
    pub fn name(self) -> &'static str {
        match self {
            Shipped::Fifo => "fifo",
            Shipped::Mru => "mru",
            Shipped::Lfu => "lfu",
            Shipped::S3Fifo => "s3fifo",
            Shipped::Lhd => "lhd",
            Shipped::GetScan => "get_scan",
        }
    }

    /// Its full name, `cache_ext:<name>`.
    pub fn full_name(self) -> &'static str {
        match self {
            Shipped::Fifo => "cache_ext:fifo",
            Shipped::Mru => "cache_ext:mru",
            Shipped::Lfu => "cache_ext:lfu",
            Shipped::S3Fifo => "cache_ext:s3fifo",
            Shipped::Lhd => "cache_ext:lhd",
            Shipped::GetScan => "cache_ext:get_scan",
        }
    }

    /// Parse `cache_ext:<name>`; `None` when `s` does not start with `cache_ext:`, `Some(Err)`
    /// naming the valid ones when the name is unknown.
    pub fn parse(s: &str) -> Option<Result<Shipped, String>> {
        let name = s.strip_prefix("cache_ext:")?;
        Some(Shipped::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| {
            let all: Vec<_> = Shipped::ALL.iter().map(|p| p.full_name()).collect();
            format!("unknown cache_ext policy '{s}': expected one of {}", all.join(", "))
        }))
    }

    /// The policy, boxed.
    pub fn build(self, env: &PolicyEnv) -> Box<dyn CacheExtOps + Send> {
        match self {
            Shipped::Fifo => Box::new(Fifo::default()),
            Shipped::Mru => Box::new(Mru::default()),
            Shipped::Lfu => Box::new(Lfu::default()),
            Shipped::S3Fifo => Box::new(S3Fifo::default()),
            Shipped::Lhd => Box::new(Lhd::default()),
            Shipped::GetScan => Box::new(GetScan::new(env.scan_tasks.clone())),
        }
    }
}

/// Not a candidate cache_ext's examples would pick: not up to date, off the LRU, dirty or under
/// writeback.
fn busy(f: &FolioView<'_>) -> bool {
    !f.test_uptodate() || !f.test_lru() || f.test_dirty() || f.test_writeback()
}

/// A per-folio map (a BPF hash map keyed by folio pointer).
fn dense<T: Clone + Default>(ctx: &CacheExtCtx<'_>) -> FolioMap<T> {
    FolioMap::with_capacity(ctx.nr_folios())
}

/// FIFO: insert at the tail, evict from the head.
#[derive(Clone, Debug, Default)]
pub struct Fifo {
    main_list: ListId,
}

impl CacheExtOps for Fifo {
    fn name(&self) -> &str {
        "fifo"
    }
    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String> {
        self.main_list = ctx.new_list(memcg);
        Ok(())
    }
    fn folio_added(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let _ = ctx.list_add_tail(self.main_list, folio);
    }
    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, ectx: &mut EvictionCtx, memcg: MemcgId) {
        let _ = ctx.list_iterate(
            memcg,
            self.main_list,
            |_, f| {
                if busy(&f) {
                    IterAction::Continue
                } else {
                    IterAction::Evict
                }
            },
            ectx,
        );
    }
}

/// MRU: a new or accessed folio goes to the head; eviction takes from the head (the most
/// recently used), skipping up to 200 folios not up to date or off the LRU.
#[derive(Clone, Debug, Default)]
pub struct Mru {
    mru_list: ListId,
}

impl CacheExtOps for Mru {
    fn name(&self) -> &str {
        "mru"
    }
    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String> {
        self.mru_list = ctx.new_list(memcg);
        Ok(())
    }
    fn folio_added(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let _ = ctx.list_add(self.mru_list, folio);
    }
    fn folio_accessed(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let _ = ctx.list_move(self.mru_list, folio, false);
    }
    fn folio_evicted(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let _ = ctx.list_del(folio);
    }
    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, ectx: &mut EvictionCtx, memcg: MemcgId) {
        let _ = ctx.list_iterate(
            memcg,
            self.mru_list,
            |idx, f| {
                if idx < 200 && (!f.test_uptodate() || !f.test_lru()) {
                    IterAction::Continue
                } else {
                    IterAction::Evict
                }
            },
            ectx,
        );
    }
}

/// LFU by sampling (cache_ext's `sampling` policy): access counts per folio; each candidate is
/// the least frequently used of 20 folios taken from the head of the list.
#[derive(Clone, Debug, Default)]
pub struct Lfu {
    sampling_list: ListId,
    accesses: FolioMap<u64>,
}

impl CacheExtOps for Lfu {
    fn name(&self) -> &str {
        "lfu"
    }
    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String> {
        self.sampling_list = ctx.new_list(memcg);
        self.accesses = dense(ctx);
        Ok(())
    }
    fn folio_added(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        if ctx.list_add_tail(self.sampling_list, folio).is_ok() {
            self.accesses.set(folio, 1);
        }
    }
    fn folio_accessed(&mut self, _ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        *self.accesses.get_mut(folio) += 1;
    }
    fn folio_evicted(&mut self, _ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        self.accesses.set(folio, 0);
    }
    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, ectx: &mut EvictionCtx, memcg: MemcgId) {
        let accesses = &self.accesses;
        let _ = ctx.list_sample(
            memcg,
            self.sampling_list,
            |f| {
                if busy(&f) {
                    i64::MAX
                } else {
                    accesses.get(f.id()) as i64
                }
            },
            &SamplingOptions { sample_size: 20 },
            ectx,
        );
    }
}

/// S3-FIFO: a small FIFO for new folios, a main FIFO for folios used again or seen recently
/// (a ghost of evicted pages); frequencies capped at 3.
#[derive(Clone, Debug, Default)]
pub struct S3Fifo {
    main_list: ListId,
    small_list: ListId,
    cache_size: i64,
    small_list_size: i64,
    main_list_size: i64,
    freq: FolioMap<i64>,
    in_main: FolioMap<bool>,
    /// The ghost map: (file, index) → the insertion stamp still in `ghost_fifo`.
    ghost: HashMap<(u32, u64), u64>,
    ghost_fifo: VecDeque<((u32, u64), u64)>,
    ghost_stamp: u64,
}

impl S3Fifo {
    fn ghost_insert(&mut self, key: (u32, u64)) {
        self.ghost_stamp += 1;
        self.ghost.insert(key, self.ghost_stamp);
        self.ghost_fifo.push_back((key, self.ghost_stamp));
        // an LRU hash of cache_size entries: the oldest insertions go first
        let cap = self.cache_size.max(1) as usize;
        while self.ghost.len() > cap {
            let Some((k, stamp)) = self.ghost_fifo.pop_front() else {
                break;
            };
            if self.ghost.get(&k) == Some(&stamp) {
                self.ghost.remove(&k);
            }
        }
        if self.ghost_fifo.len() > 4 * cap {
            let ghost = &self.ghost;
            self.ghost_fifo.retain(|(k, s)| ghost.get(k) == Some(s));
        }
    }

    fn evict_main(&mut self, ctx: &mut CacheExtCtx<'_>, ectx: &mut EvictionCtx, memcg: MemcgId) {
        let mut opts = IterateOpts {
            continue_list: None,
            continue_mode: IterMode::Tail,
            evict_list: None,
            evict_mode: IterMode::Tail,
            ..Default::default()
        };
        // four passes, each evicting what its decrement brings below 0, 1, 2, 3
        for threshold in 0..4i64 {
            if threshold > 0 && ectx.nr_folios_to_evict >= ectx.request_nr_folios_to_evict {
                return;
            }
            let freq = &mut self.freq;
            let r = ctx.list_iterate_extended(
                memcg,
                self.main_list,
                |_, f| {
                    if busy(&f) {
                        return IterAction::Continue;
                    }
                    let v = freq.get_mut(f.id());
                    *v -= 1;
                    if *v < threshold {
                        IterAction::Evict
                    } else {
                        IterAction::Continue
                    }
                },
                &mut opts,
                ectx,
            );
            if r.is_err() {
                return;
            }
        }
    }

    fn evict_small(&mut self, ctx: &mut CacheExtCtx<'_>, ectx: &mut EvictionCtx, memcg: MemcgId) {
        let mut opts = IterateOpts {
            continue_list: Some(self.main_list),
            continue_mode: IterMode::Tail,
            evict_list: None,
            evict_mode: IterMode::Tail,
            ..Default::default()
        };
        let (freq, in_main) = (&self.freq, &mut self.in_main);
        let r = ctx.list_iterate_extended(
            memcg,
            self.small_list,
            |_, f| {
                if busy(&f) {
                    return IterAction::Continue;
                }
                if freq.get(f.id()) > 1 {
                    in_main.set(f.id(), true);
                    return IterAction::Continue;
                }
                IterAction::Evict
            },
            &mut opts,
            ectx,
        );
        if r.is_err() {
            return;
        }
        let moved = opts.nr_folios_continue as i64;
        self.small_list_size = (self.small_list_size - moved).max(0);
        self.main_list_size += moved;
    }
}

impl CacheExtOps for S3Fifo {
    fn name(&self) -> &str {
        "s3fifo"
    }
    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String> {
        self.main_list = ctx.new_list(memcg);
        self.small_list = ctx.new_list(memcg);
        // set from user space: the cgroup's size in pages
        self.cache_size = ctx.memcg_pages(memcg) as i64;
        self.freq = dense(ctx);
        self.in_main = dense(ctx);
        Ok(())
    }
    fn folio_added(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let f = ctx.folio(folio);
        let in_ghost = self.ghost.remove(&(f.ino(), f.index())).is_some();
        let list = if in_ghost {
            self.main_list_size += 1;
            self.main_list
        } else {
            self.small_list_size += 1;
            self.small_list
        };
        self.in_main.set(folio, in_ghost);
        self.freq.set(folio, 0);
        let _ = ctx.list_add_tail(list, folio);
    }
    fn folio_accessed(&mut self, _ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let v = self.freq.get_mut(folio);
        *v = (*v + 1).min(3);
    }
    fn folio_evicted(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let f = ctx.folio(folio);
        self.ghost_insert((f.ino(), f.index()));
        if self.in_main.get(folio) {
            self.main_list_size -= 1;
        } else {
            self.small_list_size -= 1;
        }
        self.freq.set(folio, 0);
        self.in_main.set(folio, false);
    }
    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, ectx: &mut EvictionCtx, memcg: MemcgId) {
        if self.small_list_size >= self.cache_size / 15 || self.main_list_size <= 2 * self.small_list_size {
            self.evict_small(ctx, ectx, memcg);
        } else {
            self.evict_main(ctx, ectx, memcg);
        }
    }
}

/// LHD's constants (`cache_ext_lhd.bpf.h`).
mod lhd {
    pub const HIT_AGE_CLASSES: usize = 16;
    pub const INITIAL_AGE_COARSENING_SHIFT: u64 = 10;
    pub const REQS_PER_RECONFIG: u64 = 1 << 20;
    pub const MAX_AGE: usize = 1 << 14;
    pub const MAX_AGE_MASK: usize = MAX_AGE - 1;
    pub const DEFAULT_APP_ID: u64 = 1;
    pub const HIT_SCALING_FACTOR: u64 = 1 << 20;
    pub const HIT_DENSITY_SCALING_FACTOR: u64 = 1 << 20;
    pub const NUM_OBJECTS_SCALING_FACTOR: u64 = 1 << 20;
    pub const TOTAL_EVENTS_THRESH: u64 = HIT_SCALING_FACTOR / 100_000;
    pub const AGE_COARSENING_ERROR_TOLERANCE: u64 = 100;
}

#[derive(Clone, Debug)]
struct LhdClass {
    hits: Vec<u64>,
    evictions: Vec<u64>,
    hit_densities: Vec<u64>,
}

#[derive(Clone, Copy, Debug, Default)]
struct LhdMeta {
    last_access_time: u64,
    last_hit_age: u64,
    last_last_hit_age: u64,
}

/// LHD (least hit density, Beckmann et al., NSDI 2018) as cache_ext's example has it: per class
/// of (recent hit ages) and age, hits and evictions, turned into a hit density every
/// `reqs_per_reconfig` events; each candidate is the lowest density of 16 sampled folios.
#[derive(Clone, Debug)]
pub struct Lhd {
    lhd_list: ListId,
    /// Events between reconfigurations (cache_ext: 2^20, its user space calling `reconfigure`).
    pub reqs_per_reconfig: u64,
    next_reconfiguration: u64,
    num_reconfigurations: u32,
    age_coarsening_shift: u64,
    ewma_num_objects: u64,
    ewma_num_objects_mass: u64,
    ewma_victim_hit_density: u64,
    timestamp: u64,
    overflows: u64,
    num_objects: u64,
    /// The classes of the one application id every folio has (`DEFAULT_APP_ID`); cache_ext
    /// allocates 16 applications' worth.
    classes: Vec<LhdClass>,
    meta: FolioMap<LhdMeta>,
}

impl Default for Lhd {
    fn default() -> Self {
        Lhd {
            lhd_list: 0,
            reqs_per_reconfig: lhd::REQS_PER_RECONFIG,
            next_reconfiguration: lhd::REQS_PER_RECONFIG,
            num_reconfigurations: 0,
            age_coarsening_shift: lhd::INITIAL_AGE_COARSENING_SHIFT,
            ewma_num_objects: 0,
            ewma_num_objects_mass: 0,
            ewma_victim_hit_density: 0,
            timestamp: 0,
            overflows: 0,
            num_objects: 0,
            classes: Vec::new(),
            meta: FolioMap::default(),
        }
    }
}

impl Lhd {
    /// LHD reconfiguring every `n` events.
    pub fn with_reconfig_every(n: u64) -> Self {
        Lhd {
            reqs_per_reconfig: n.max(1),
            next_reconfiguration: n.max(1),
            ..Default::default()
        }
    }

    fn hit_age_to_class(mut hit_age: u64) -> usize {
        if hit_age == 0 {
            return 0;
        }
        let mut class = 0;
        while hit_age < lhd::MAX_AGE as u64 && class < lhd::HIT_AGE_CLASSES - 1 {
            hit_age <<= 1;
            class += 1;
        }
        class
    }

    fn class_of(m: &LhdMeta) -> usize {
        Self::hit_age_to_class(m.last_hit_age + m.last_last_hit_age)
    }

    fn get_age(&mut self, m: &LhdMeta) -> usize {
        let age = (self.timestamp - m.last_access_time) >> self.age_coarsening_shift;
        if age >= lhd::MAX_AGE as u64 {
            self.overflows += 1;
            return lhd::MAX_AGE - 1;
        }
        age as usize
    }

    fn hit_density(&self, m: &LhdMeta) -> u64 {
        let age = (self.timestamp - m.last_access_time) >> self.age_coarsening_shift;
        if age >= lhd::MAX_AGE as u64 - 1 {
            return 0;
        }
        self.classes[Self::class_of(m)].hit_densities[age as usize & lhd::MAX_AGE_MASK]
    }

    fn tick(&mut self) {
        self.timestamp += 1;
        self.next_reconfiguration -= 1;
        if self.next_reconfiguration == 0 {
            self.next_reconfiguration = self.reqs_per_reconfig;
            self.num_reconfigurations += 1;
            self.reconfigure();
        }
    }

    /// `reconfigure`: decay the statistics, adapt the age coarsening, model the hit densities.
    fn reconfigure(&mut self) {
        let decay = |v: u64| v * 9 / 10;
        for c in &mut self.classes {
            for i in 0..lhd::MAX_AGE {
                c.hits[i] = decay(c.hits[i]);
                c.evictions[i] = decay(c.evictions[i]);
            }
        }
        self.adapt_age_coarsening();
        for c in &mut self.classes {
            let mut total_hits = c.hits[lhd::MAX_AGE - 1];
            let mut total_events = total_hits + c.evictions[lhd::MAX_AGE - 1];
            let mut lifetime = total_events;
            for j in 2..=lhd::MAX_AGE {
                let index = lhd::MAX_AGE - j;
                total_hits += c.hits[index];
                total_events += c.evictions[index];
                lifetime += total_events;
                c.hit_densities[index] = if total_events > lhd::TOTAL_EVENTS_THRESH {
                    total_hits * lhd::HIT_DENSITY_SCALING_FACTOR / lifetime
                } else {
                    0
                };
            }
        }
        self.overflows = 0;
    }

    fn adapt_age_coarsening(&mut self) {
        let decay = |v: u64| v * 9 / 10;
        self.ewma_num_objects = decay(self.ewma_num_objects) + self.num_objects * lhd::NUM_OBJECTS_SCALING_FACTOR;
        self.ewma_num_objects_mass = decay(self.ewma_num_objects_mass) + 1;
        let coarsening = self.ewma_num_objects / self.ewma_num_objects_mass.max(1);
        let optimal = coarsening * lhd::AGE_COARSENING_ERROR_TOLERANCE / lhd::MAX_AGE as u64;
        if self.num_reconfigurations == 5 || self.num_reconfigurations == 25 {
            let mut log2 = 1u64;
            while (1u64 << log2) * lhd::NUM_OBJECTS_SCALING_FACTOR < optimal && log2 < 63 {
                log2 += 1;
            }
            let delta = log2 as i64 - self.age_coarsening_shift as i64;
            self.age_coarsening_shift = log2;
            self.ewma_num_objects *= 8;
            self.ewma_num_objects_mass *= 8;
            if delta < 0 {
                self.stretch((-delta) as u32);
            } else if delta > 0 {
                self.compress(delta as u32);
            }
        }
    }

    /// `stretch_distribution` (index arithmetic as cache_ext has it).
    fn stretch(&mut self, shift: u32) {
        let (max, mask) = (lhd::MAX_AGE, lhd::MAX_AGE_MASK);
        for c in &mut self.classes {
            let init_age = max >> shift.min(31);
            for j in init_age..max - 1 {
                c.hits[max - 1] += c.hits[j];
                c.evictions[max - 1] = c.evictions[j];
            }
            for j in 2..=max {
                let index = (max - j) & mask;
                let src = (j >> shift.min(31)) & mask;
                c.hits[index] = c.hits[src] >> shift.min(63);
                c.evictions[index] = c.evictions[src] >> shift.min(63);
            }
        }
    }

    /// `compress_distribution`.
    fn compress(&mut self, shift: u32) {
        let (max, mask) = (lhd::MAX_AGE, lhd::MAX_AGE_MASK);
        let shift = shift.min(14);
        for c in &mut self.classes {
            for j in 0..max >> shift {
                c.hits[j & mask] = c.hits[(j << shift) & mask];
                c.evictions[j & mask] = c.evictions[(j << shift) & mask];
                for k in 1..(1usize << shift) {
                    c.hits[j & mask] += c.hits[((j << shift) + k) & mask];
                    c.evictions[j & mask] += c.evictions[((j << shift) + k) & mask];
                }
            }
            for j in max >> shift..max - 1 {
                c.hits[j & mask] = 0;
                c.evictions[j & mask] = 0;
            }
        }
    }
}

impl CacheExtOps for Lhd {
    fn name(&self) -> &str {
        "lhd"
    }
    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String> {
        self.lhd_list = ctx.new_list(memcg);
        // the initial densities of the application's classes: i is the class id (app × 16 + c)
        self.classes = (0..lhd::HIT_AGE_CLASSES)
            .map(|c| {
                let i = lhd::DEFAULT_APP_ID as usize * lhd::HIT_AGE_CLASSES + c;
                LhdClass {
                    hits: vec![0; lhd::MAX_AGE],
                    evictions: vec![0; lhd::MAX_AGE],
                    hit_densities: (0..lhd::MAX_AGE)
                        .map(|j| lhd::HIT_DENSITY_SCALING_FACTOR * (i as u64 + 1) / (j as u64 + 1))
                        .collect(),
                }
            })
            .collect();
        self.meta = dense(ctx);
        Ok(())
    }
    fn folio_added(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        if ctx.list_add_tail(self.lhd_list, folio).is_err() {
            return;
        }
        self.meta.set(
            folio,
            LhdMeta {
                last_access_time: self.timestamp,
                last_hit_age: 0,
                last_last_hit_age: lhd::MAX_AGE as u64,
            },
        );
        self.num_objects += 1;
        self.tick();
    }
    fn folio_accessed(&mut self, _ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let mut d = self.meta.get(folio);
        let age = self.get_age(&d);
        let class = Self::class_of(&d);
        d.last_last_hit_age = d.last_hit_age;
        d.last_hit_age = age as u64;
        d.last_access_time = self.timestamp;
        self.meta.set(folio, d);
        self.classes[class].hits[age] += lhd::HIT_SCALING_FACTOR;
        self.tick();
    }
    fn folio_evicted(&mut self, _ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let d = self.meta.get(folio);
        let age = self.get_age(&d);
        let class = Self::class_of(&d);
        self.classes[class].evictions[age] += lhd::HIT_SCALING_FACTOR;
        self.num_objects = self.num_objects.saturating_sub(1);
        let hd = self.classes[class].hit_densities[age];
        self.ewma_victim_hit_density = self.ewma_victim_hit_density * 9 / 10 + hd / 10;
        self.meta.set(folio, LhdMeta::default());
    }
    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, ectx: &mut EvictionCtx, memcg: MemcgId) {
        let me = &*self;
        let _ = ctx.list_sample(
            memcg,
            self.lhd_list,
            |f| {
                if busy(&f) {
                    i64::MAX
                } else {
                    me.hit_density(&me.meta.get(f.id())) as i64
                }
            },
            &SamplingOptions { sample_size: 16 },
            ectx,
        );
    }
}

/// The GET-SCAN policy of cache_ext's LevelDB evaluation: folios a scanning task brings in go to
/// a list of their own, which eviction samples first (LFU over 5 folios, an SST's last page, its
/// index, kept), until fewer than 5,000 scan pages remain; then the general list.
#[derive(Clone, Debug, Default)]
pub struct GetScan {
    lists: [ListId; 2],
    scan_tasks: Vec<u32>,
    scan_pages: i64,
    /// Below this many scan pages, eviction samples the general list (cache_ext: 1,000 × the
    /// sampling rate of 5, sized for its multi-GiB cgroups).
    pub min_scan_pages: i64,
    accesses: FolioMap<u64>,
    touched_by_scan: FolioMap<bool>,
}

const LIST_GENERAL: usize = 0;
const LIST_FOR_SCANS: usize = 1;

impl GetScan {
    /// The policy, with the tasks (mm ids) that scan (cache_ext's `scan_pids` map, filled from
    /// user space).
    pub fn new(scan_tasks: Vec<u32>) -> Self {
        GetScan {
            scan_tasks,
            min_scan_pages: 1000 * 5,
            ..Default::default()
        }
    }

    /// [`GetScan::new`], sampling the scan list while it holds at least `min_scan_pages`.
    pub fn with_min_scan_pages(scan_tasks: Vec<u32>, min_scan_pages: i64) -> Self {
        GetScan {
            min_scan_pages,
            ..Self::new(scan_tasks)
        }
    }

    /// Pages a scan brought in still cached.
    pub fn scan_pages(&self) -> i64 {
        self.scan_pages
    }
}

impl CacheExtOps for GetScan {
    fn name(&self) -> &str {
        "get_scan"
    }
    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String> {
        self.lists = [ctx.new_list(memcg), ctx.new_list(memcg)];
        self.accesses = dense(ctx);
        self.touched_by_scan = dense(ctx);
        Ok(())
    }
    fn folio_added(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let scan = ctx.current_task().is_some_and(|t| self.scan_tasks.contains(&t));
        let list = self.lists[if scan { LIST_FOR_SCANS } else { LIST_GENERAL }];
        if ctx.list_add_tail(list, folio).is_err() {
            return;
        }
        if scan {
            self.scan_pages += 1;
        }
        self.accesses.set(folio, 1);
        self.touched_by_scan.set(folio, scan);
    }
    fn folio_accessed(&mut self, _ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        *self.accesses.get_mut(folio) += 1;
    }
    fn folio_evicted(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let _ = ctx.list_del(folio);
        if self.touched_by_scan.get(folio) {
            self.scan_pages -= 1;
        }
        self.accesses.set(folio, 0);
        self.touched_by_scan.set(folio, false);
    }
    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, ectx: &mut EvictionCtx, memcg: MemcgId) {
        let sampling_rate = 5;
        if self.scan_pages == 0 {
            return;
        }
        let which = if self.scan_pages < self.min_scan_pages {
            LIST_GENERAL
        } else {
            LIST_FOR_SCANS
        };
        let accesses = &self.accesses;
        let _ = ctx.list_sample(
            memcg,
            self.lists[which],
            |f| {
                let mut score = accesses.get(f.id()) as i64;
                if f.is_last_page_in_file() {
                    score += 100_000;
                }
                score
            },
            &SamplingOptions {
                sample_size: sampling_rate as u32,
            },
            ectx,
        );
    }
}

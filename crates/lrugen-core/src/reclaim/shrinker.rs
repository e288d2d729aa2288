// SPDX-License-Identifier: GPL-2.0-only
//! The slab shrinkers reclaim calls after each lruvec (`shrink_slab`): of the kernel's, the one
//! that changes page reclaim's results, the page cache's shadow-node shrinker
//! (`mm/workingset.c`: `count_shadow_nodes`, `scan_shadow_nodes`, `shadow_lru_isolate`), run as
//! `do_shrink_slab` runs every shrinker (`mm/shrinker.c`; `mm/vmscan.c` in 6.1).
//!
//! An xarray leaf that holds only shadow entries sits on its memcg's shadow-node list
//! ([`crate::mm::pagecache::ShadowLru`]). When a memcg has more such leaves than an eighth of
//! its LRU and slab pages, the shrinker deletes the oldest, with their shadow entries: a later
//! fault on one of those pages is a plain miss, not a refault.
//!
//! The shrinker runs on the leaves that [`crate::mm::KmemConfig::xa_nodes`] charges to memcgs.
//! With it off, nothing runs and shadow entries stay until their slot is reused: the model's
//! behaviour before the shrinker existed. (A kernel booted with `cgroup.memory=nokmem` would
//! still shrink them, all on the root's list, under global reclaim; that is not modelled.)

use super::Policy;
use crate::mm::memcg::MemcgId;
use crate::mm::vmstat::Stat;
use crate::mm::{Machine, PAGE_SIZE};

/// `SHRINK_BATCH`: objects a shrinker scans per call.
pub const SHRINK_BATCH: i64 = 128;

/// `XA_CHUNK_SHIFT - 3`: a memcg keeps at most one shadow-only leaf per 8 of its pages, a worst
/// case density of one eighth of a leaf's 64 slots.
const SHADOW_LIMIT_SHIFT: u32 = 3;

/// `count_shadow_nodes`: how many of lruvec (memcg, node)'s shadow-only leaves are over its
/// limit (0 when none, or none over).
pub fn count_shadow_nodes<P: Policy>(m: &Machine, p: &P, memcg: MemcgId, node: usize) -> i64 {
    let nodes = m.shadow_lru.len(m.lruvec(memcg, node)) as i64;
    if nodes == 0 {
        return 0;
    }
    let local = |s| m.lruvec_state_local(memcg, node, s).max(0);
    // The kernel reads the last rstat flush (`mem_cgroup_flush_stats_ratelimited` just before,
    // 6.12 on); the model reads the exact counts, which that flush follows within 4 s.
    let lru = if p.switches().workingset_lruvec_lru_size && !p.memcg_lru_zone_sizes() {
        local(Stat::NrUnevictable)
    } else {
        Stat::LRU_LISTS.into_iter().map(local).sum()
    };
    let slab = (local(Stat::NrSlabReclaimableB) as u64 / PAGE_SIZE) as i64
        + (local(Stat::NrSlabUnreclaimableB) as u64 / PAGE_SIZE) as i64;
    let max_nodes = (lru + slab) >> SHADOW_LIMIT_SHIFT;
    (nodes - max_nodes).max(0)
}

/// `shrink_slab` for lruvec (memcg, node) at reclaim priority `priority`: the shadow shrinker
/// through `do_shrink_slab` (`seeks = 0`: half of what is over the limit per call, plus the work
/// deferred from earlier calls shifted down by the priority, in batches of [`SHRINK_BATCH`]
/// while at least a batch, or everything over the limit, is left; what is not done is deferred,
/// up to twice what is over). Returns the leaves freed.
pub fn shrink_slab<P: Policy>(m: &mut Machine, p: &P, node: usize, memcg: MemcgId, priority: i32) -> u64 {
    if !m.cfg.kmem.xa_nodes {
        return 0;
    }
    let freeable = count_shadow_nodes(m, p, memcg, node);
    if freeable == 0 {
        return 0;
    }
    let lv = m.lruvec(memcg, node);
    m.shadow_lru.ensure(lv + 1);
    let nr = std::mem::take(&mut m.shadow_lru.deferred[lv]);
    let delta = freeable / 2;
    let mut total_scan = ((nr >> priority) + delta).min(2 * freeable);
    let (mut scanned, mut freed) = (0i64, 0u64);
    while total_scan >= SHRINK_BATCH || total_scan >= freeable {
        let nr_to_scan = SHRINK_BATCH.min(total_scan);
        // `list_lru_walk_one` visits at most `nr_to_scan` leaves, oldest first; every one is
        // deleted (the trylocks of `shadow_lru_isolate` never fail here)
        for _ in 0..nr_to_scan {
            if !m.reclaim_shadow_leaf(lv) {
                break;
            }
            freed += 1;
        }
        m.count_vm_events(Stat::SlabsScanned, nr_to_scan as u64);
        total_scan -= nr_to_scan;
        scanned += nr_to_scan;
    }
    m.shadow_lru.deferred[lv] = (nr + delta - scanned).max(0).min(2 * freeable);
    freed
}

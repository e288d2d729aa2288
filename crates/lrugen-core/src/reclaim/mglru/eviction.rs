// SPDX-License-Identifier: GPL-2.0-only
//! Eviction: consuming generations (`kernel-mglru.md` §5).
//!
//! `try_to_shrink_lruvec` asks `get_nr_to_scan` how much to scan (aging first when too few
//! generations are left), then calls `evict_folios` in batches: `isolate_folios` picks the type
//! and the tier index with the PID controller, `scan_folios` walks the oldest generation from its
//! tail and `sort_folio` moves away what should not be evicted (promoted by a walk, protected by
//! its tier, ineligible, waiting for writeback); the rest is isolated and handed to the shared
//! `shrink_folio_list`. Survivors are put back, clean ones retried once.

use super::memcg_lru::{MemcgLruOp, Seg, MEMCG_NR_BINS, NO_MEMCG};
use super::state::{MAX_LRU_BATCH, MAX_NR_ZONES, MIN_LRU_BATCH};
use super::{evictable_min_seq, gen_from_seq, hist_from_seq, pid, type_range, Mglru};
use super::{MAX_NR_GENS, MIN_NR_GENS};
use crate::mm::folio::{pg, FolioId, ANON, FILE, NIL};
use crate::mm::memcg::{MemcgId, ROOT_MEMCG};
use crate::mm::node::{Zone, WMARK_HIGH, WMARK_LOW, WMARK_PROMO};
use crate::mm::vmstat::Stat;
use crate::mm::{LruLockSite, Machine};
use crate::reclaim::vmscan::{self, count_scan, mark_isolated};
use crate::reclaim::{Reclaimer, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};

/// Free swap slots available to `memcg` (`mem_cgroup_get_nr_swap_pages`).
fn nr_swap_pages(m: &Machine, memcg: MemcgId) -> u64 {
    m.swap.nr_free().min(m.memcgs.swap_margin(memcg))
}

/// `get_swappiness`: 0 when anon cannot be reclaimed (fewer than `MIN_LRU_BATCH` free swap
/// slots and the node cannot demote, or `!may_swap` in mainline); otherwise the proactive
/// override or the memcg's.
pub fn get_swappiness(p: &Mglru, m: &Machine, memcg: MemcgId, node: usize, sc: &ScanControl) -> u32 {
    if p.sw().eviction_path_aging && !sc.may_swap {
        return 0;
    }
    if !crate::reclaim::tiering::can_demote(m, node, sc) && nr_swap_pages(m, memcg) < MIN_LRU_BATCH {
        return 0;
    }
    sc.swappiness.unwrap_or(m.memcgs[memcg].swappiness)
}

/// `fls_long`.
fn fls(x: u64) -> i64 {
    64 - x.leading_zeros() as i64
}

/// `set_initial_priority` (mainline root reclaim and kswapd): start at the priority where
/// `(reclaimable >> priority)` is about `nr_to_reclaim`.
pub fn set_initial_priority(p: &Mglru, m: &Machine, node: usize, sc: &mut ScanControl) {
    if !p.sw().eviction_path_aging || sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
        return;
    }
    let mut reclaimable = m.lruvec_state(ROOT_MEMCG, node, Stat::NrInactiveFile).max(0) as u64;
    if sc.may_swap && m.swap.nr_free() > 0 || crate::reclaim::tiering::can_demote(m, node, sc) {
        reclaimable += m.lruvec_state(ROOT_MEMCG, node, Stat::NrInactiveAnon).max(0) as u64;
    }
    let prio = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
    sc.priority = prio.clamp(DEF_PRIORITY as i64 / 2, DEF_PRIORITY as i64) as i32;
}

/// Nothing to prepare: MGLRU does not use the classic `prepare_scan_control` state.
pub fn prepare_node(_p: &mut Mglru, _m: &mut Machine, _node: usize, _sc: &mut ScanControl) {}

/// Whether this is root reclaim (`root_reclaim`).
fn root_reclaim(sc: &ScanControl) -> bool {
    sc.target_memcg.is_none_or(|t| t == ROOT_MEMCG)
}

/// The lruvecs of a node pass. 6.1 (`memcg_lru` off) and memcg reclaim: the classic memcg
/// iteration (`shrink_node_memcgs`). Root reclaim with the memcg LRU: `lru_gen_shrink_node`
/// (`set_initial_priority`, then `shrink_many`).
pub fn shrink_node(p: &mut Mglru, m: &mut Machine, node: usize, sc: &mut ScanControl) {
    if !p.sw().memcg_lru || !root_reclaim(sc) {
        vmscan::shrink_node_memcgs(m, p, node, sc);
        return;
    }
    if !sc.may_writepage || !sc.may_unmap {
        return;
    }
    set_initial_priority(p, m, node, sc);
    let kswapd = sc.reclaimer == Reclaimer::Kswapd;
    let saved = sc.nr_reclaimed;
    if kswapd {
        sc.nr_reclaimed = 0;
    }
    // kswapd's lru_gen_age_node and 6.12's shrink_one compute the protection top-down
    m.memcgs.calculate_protection(ROOT_MEMCG);
    p.mm_walk = set_mm_walk(p, sc);
    shrink_many(p, m, node, sc);
    // clear_mm_walk
    p.mm_walk = false;
    if kswapd {
        sc.nr_reclaimed += saved;
    }
}

/// `shrink_many`: reclaim the memcgs of the old generation of `node`'s memcg LRU, bin by bin from
/// a random one, each from its head, applying what `shrink_one` returned to a memcg once the walk
/// has moved past it; stop when `should_abort_scan` says so or every bin was walked. A memcg
/// rotated to the tail of a bin not yet walked (or of this one) is met again in this walk.
fn shrink_many(p: &mut Mglru, m: &mut Machine, node: usize, sc: &mut ScanControl) {
    let gen = p.memcg_lru[node].old_gen();
    let first_bin = p.get_random_u32_below(MEMCG_NR_BINS as u32) as usize;
    let mut bin = first_bin;
    loop {
        let mut op = MemcgLruOp::Nop;
        let mut last = NO_MEMCG;
        let mut pos = p.memcg_lru[node].fifo[gen][bin].head;
        let mut aborted = false;
        while pos != NO_MEMCG {
            if op != MemcgLruOp::Nop {
                p.lru_gen_rotate_memcg(last, node, op);
                op = MemcgLruOp::Nop;
            }
            let memcg = pos;
            let link = p.memcg_link(memcg, node);
            if link.gen != gen {
                pos = link.next;
                continue;
            }
            op = shrink_one(p, m, memcg, node, sc);
            last = memcg;
            if should_abort_scan(p, m, node, sc) {
                aborted = true;
                break;
            }
            // the walk reads the next entry before the op moves this one
            pos = p.memcg_link(memcg, node).next;
        }
        if op != MemcgLruOp::Nop {
            p.lru_gen_rotate_memcg(last, node, op);
        }
        // single-threaded, the walk never ends on another list's nulls marker: no restart
        if aborted {
            return;
        }
        bin = (bin + 1) % MEMCG_NR_BINS;
        if bin == first_bin {
            return;
        }
    }
}

/// `lruvec_is_sizable`: whether the evictable pages of lruvec (memcg, node) are worth a visit at
/// this priority (`total >> priority`; any page at all once the memcg is offline).
pub fn lruvec_is_sizable(p: &Mglru, m: &Machine, memcg: MemcgId, node: usize, sc: &ScanControl) -> bool {
    let swappiness = get_swappiness(p, m, memcg, node, sc);
    let total = p.evictable_size(p.lv(memcg, node), swappiness);
    if m.memcgs[memcg].online() {
        (total >> sc.priority) != 0
    } else {
        total != 0
    }
}

/// `shrink_one`: reclaim lruvec (memcg, node) for root reclaim and say where the memcg goes in
/// the memcg LRU: below `memory.min`, young; below `memory.low`, one pass at the tail first;
/// aged in the eviction path, young; too small to help, one retry at the tail, then young.
pub fn shrink_one(p: &mut Mglru, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl) -> MemcgLruOp {
    if m.memcgs.below_min(None, memcg) {
        return MemcgLruOp::Young;
    }
    if m.memcgs.below_low(None, memcg) {
        if p.memcg_link(memcg, node).seg != Seg::Tail {
            return MemcgLruOp::Tail;
        }
        m.memcgs[memcg].events.low += 1;
    }
    let rotate = try_to_shrink_lruvec(p, m, memcg, node, sc);
    crate::reclaim::shrinker::shrink_slab(m, p, node, memcg, sc.priority);
    if rotate && m.memcgs[memcg].online() {
        return MemcgLruOp::Young;
    }
    if !rotate && lruvec_is_sizable(p, m, memcg, node, sc) {
        return MemcgLruOp::Nop;
    }
    // one retry if offlined or too small
    if p.memcg_link(memcg, node).seg != Seg::Tail {
        MemcgLruOp::Tail
    } else {
        MemcgLruOp::Young
    }
}

/// `lru_gen_shrink_lruvec` for lruvec (memcg, node): memcg reclaim (and all reclaim in 6.1).
/// With the memcg LRU, a lruvec that aged moves to the young generation.
pub fn shrink_lruvec(p: &mut Mglru, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl) {
    p.mm_walk = set_mm_walk(p, sc);
    shrink_lruvec_walk(p, m, memcg, node, sc);
    // clear_mm_walk
    p.mm_walk = false;
}

/// `set_mm_walk` at the start of `lru_gen_shrink_lruvec` and `lru_gen_shrink_node`: whether a
/// walk is attached before any aging. kswapd's (the node's own) always; from 6.3
/// (`proactive_mm_walk`) a proactive reclaimer's too (`force_alloc`); 6.1 asks for the node's
/// walk, which only kswapd gets.
fn set_mm_walk(p: &Mglru, sc: &ScanControl) -> bool {
    sc.reclaimer == Reclaimer::Kswapd || (sc.reclaimer == Reclaimer::Proactive && p.sw().proactive_mm_walk)
}

fn shrink_lruvec_walk(p: &mut Mglru, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl) {
    if p.sw().eviction_path_aging {
        if try_to_shrink_lruvec(p, m, memcg, node, sc) && p.sw().memcg_lru {
            p.lru_gen_rotate_memcg(memcg, node, MemcgLruOp::Young);
        }
    } else {
        shrink_lruvec_6_1(p, m, memcg, node, sc);
    }
}

/// Proportional memory.min/low protection of the scan budget (`apply_proportional_protection`;
/// the switch `mglru_proportional_protection`, off in 6.12).
fn apply_protection(p: &Mglru, m: &Machine, memcg: MemcgId, sc: &ScanControl, size: u64) -> u64 {
    if !p.sw().mglru_proportional_protection || Some(memcg) == sc.target_memcg || memcg == ROOT_MEMCG {
        return size;
    }
    let mc = &m.memcgs[memcg];
    let (emin, elow) = (mc.emin, mc.elow);
    if emin == 0 && elow == 0 {
        return size;
    }
    let protection = if sc.memcg_low_reclaim { emin } else { emin.max(elow) };
    let usage = mc.usage.max(protection);
    (size - size * protection / (usage + 1)).max(SWAP_CLUSTER_MAX)
}

/// Mainline `get_nr_to_scan`: the scan budget, or −1 when the lruvec aged (or is below
/// `memory.min`) and scanning should stop.
fn get_nr_to_scan(
    p: &mut Mglru,
    m: &mut Machine,
    memcg: MemcgId,
    node: usize,
    sc: &ScanControl,
    swappiness: u32,
) -> i64 {
    if m.memcgs.below_min(sc.target_memcg, memcg) {
        return -1;
    }
    let lv = p.lv(memcg, node);
    let (need, total) = p.should_run_aging(lv, swappiness);
    // try to scrape all its memory if this memcg was deleted
    if total > 0 && !m.memcgs[memcg].online() {
        return total as i64;
    }
    let total = apply_protection(p, m, memcg, sc, total);
    if !need || sc.priority == DEF_PRIORITY {
        return (total >> sc.priority) as i64;
    }
    let seq = p.lruvecs[lv].max_seq;
    if p.try_to_inc_max_seq(m, lv, seq, swappiness, false) {
        -1
    } else {
        0
    }
}

/// Mainline `should_abort_scan`.
fn should_abort_scan(p: &Mglru, m: &Machine, node: usize, sc: &ScanControl) -> bool {
    if !root_reclaim(sc) && !p.sw().memcg_reclaim_early_stop {
        return false;
    }
    if sc.nr_reclaimed >= sc.nr_to_reclaim.max(2 << sc.order) {
        return true;
    }
    if sc.reclaimer != Reclaimer::Kswapd || sc.order > 0 {
        return false;
    }
    // memory-tiering mode: kswapd reclaims to the promo watermark
    let mark = if m.tiers.as_ref().is_some_and(|t| t.tiering()) {
        WMARK_PROMO
    } else {
        WMARK_HIGH
    };
    eligible_zones_all(m, node, sc, |zi, z| {
        m.zone_watermark_ok(node, zi, z.wmark(mark) + MIN_LRU_BATCH)
    })
}

/// Whether `ok(zone index, zone)` holds for every managed zone of `node` the reclaim may use
/// (indices up to `sc.reclaim_idx`): the watermark loop that ends both `should_abort_scan`s.
fn eligible_zones_all(m: &Machine, node: usize, sc: &ScanControl, ok: impl Fn(usize, &Zone) -> bool) -> bool {
    m.nodes[node]
        .zones
        .iter()
        .enumerate()
        .take(sc.reclaim_idx.saturating_add(1))
        .all(|(zi, z)| z.managed == 0 || ok(zi, z))
}

/// 7.2 `try_to_shrink_lruvec` (`kernel-mglru.md` §17.2): one budget, batches of at most
/// `MIN_LRU_BATCH` folios, aging whenever `should_run_aging` asks (two generations: at any
/// priority), root reclaim stopping after the batch that followed an aging attempt, the flushers
/// woken per batch (`handle_reclaim_writeback`). Returns whether the lruvec should rotate.
fn try_to_shrink_lruvec_7_2(p: &mut Mglru, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl) -> bool {
    let swappiness = get_swappiness(p, m, memcg, node, sc);
    let lv = p.lv(memcg, node);
    let total = p.evictable_size(lv, swappiness);
    // get_nr_to_scan: all of a deleted memcg's evictable pages, else the protected share
    let mut budget = if m.memcgs[memcg].online() {
        apply_protection(p, m, memcg, sc, total) >> sc.priority
    } else {
        total
    };
    let mut rotate = false;
    while budget > 0 {
        if m.memcgs.below_min(sc.target_memcg, memcg) {
            return true;
        }
        let lg = &p.lruvecs[lv];
        let ems = evictable_min_seq(p.sw(), lg, swappiness);
        let need = ems + MIN_NR_GENS > lg.max_seq || (ems + MIN_NR_GENS == lg.max_seq && sc.priority < DEF_PRIORITY);
        if need {
            let seq = lg.max_seq;
            rotate |= p.try_to_inc_max_seq(m, lv, seq, swappiness, false);
        }
        let dirty0 = sc.stat.nr_unqueued_dirty;
        let taken0 = sc.nr_file_taken;
        let delta = evict_folios(p, m, memcg, node, sc, swappiness, budget.min(MIN_LRU_BATCH));
        let dirty = sc.stat.nr_unqueued_dirty - dirty0;
        if dirty > 0 && dirty == sc.nr_file_taken - taken0 {
            vmscan::flush_dirty_file(m, p, node);
        }
        if delta == 0 || should_abort_scan(p, m, node, sc) || (need && root_reclaim(sc)) {
            break;
        }
        budget = budget.saturating_sub(delta);
    }
    rotate
}

/// Mainline `try_to_shrink_lruvec`. Returns whether the lruvec should rotate (it aged).
pub fn try_to_shrink_lruvec(p: &mut Mglru, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl) -> bool {
    if p.sw().reclaim_loop_single_budget {
        return try_to_shrink_lruvec_7_2(p, m, memcg, node, sc);
    }
    let swappiness = get_swappiness(p, m, memcg, node, sc);
    let dirty0 = sc.stat.nr_unqueued_dirty;
    let taken0 = sc.nr_file_taken;
    let mut scanned = 0u64;
    let nr_to_scan;
    loop {
        let n = get_nr_to_scan(p, m, memcg, node, sc, swappiness);
        if n <= 0 {
            nr_to_scan = n;
            break;
        }
        let delta = evict_folios(p, m, memcg, node, sc, swappiness, n as u64);
        if delta == 0 {
            nr_to_scan = n;
            break;
        }
        scanned += delta;
        if scanned >= n as u64 || should_abort_scan(p, m, node, sc) {
            nr_to_scan = n;
            break;
        }
    }
    let dirty = sc.stat.nr_unqueued_dirty - dirty0;
    if dirty > 0 && dirty == sc.nr_file_taken - taken0 {
        vmscan::flush_dirty_file(m, p, node);
    }
    nr_to_scan < 0
}

/// 6.1 `lru_gen_shrink_lruvec` with its `get_nr_to_scan` and `should_abort_scan`.
fn shrink_lruvec_6_1(p: &mut Mglru, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl) {
    let lv = p.lv(memcg, node);
    let start_max_seq = p.lruvecs[lv].max_seq;
    let reclaimed0 = sc.nr_reclaimed;
    let kswapd = sc.reclaimer == Reclaimer::Kswapd;
    let mut need_aging;
    let mut need_swapping = false;
    let mut scanned = 0u64;
    loop {
        let base = get_swappiness(p, m, memcg, node, sc);
        let swappiness = if sc.may_swap {
            base
        } else if !sc.cgroup_reclaim() && base != 0 {
            1
        } else {
            0
        };
        // get_nr_to_scan
        if m.memcgs.below_min(sc.target_memcg, memcg)
            || (m.memcgs.below_low(sc.target_memcg, memcg) && !sc.memcg_low_reclaim)
        {
            return;
        }
        let (need, total) = p.should_run_aging(lv, swappiness);
        need_aging = need;
        let mut nr_to_scan = total >> sc.priority;
        if need {
            let lg = &p.lruvecs[lv];
            let min = lg.min_seq[if swappiness == 0 { FILE } else { ANON }];
            let max_seq = lg.max_seq;
            if sc.priority == DEF_PRIORITY {
                if min + MIN_NR_GENS > max_seq {
                    nr_to_scan = 0;
                }
            } else if kswapd {
                nr_to_scan = 0;
            } else if !p.try_to_inc_max_seq(m, lv, max_seq, swappiness, false) {
                let lg = &p.lruvecs[lv];
                if lg.min_seq[if swappiness == 0 { FILE } else { ANON }] + MIN_NR_GENS > lg.max_seq {
                    nr_to_scan = 0;
                }
            }
        }
        if nr_to_scan == 0 {
            return;
        }
        // 6.1 evict_folios sets need_swapping for every batch that isolated anon
        // (`type == LRU_GEN_ANON` with a non-empty list), swapped out or not
        let anon_isolated0 = m.events.get(Stat::PgscanAnon);
        let delta = evict_folios(p, m, memcg, node, sc, swappiness, u64::MAX);
        if m.events.get(Stat::PgscanAnon) > anon_isolated0 {
            need_swapping = true;
        }
        if delta == 0 {
            return;
        }
        scanned += delta;
        if scanned >= nr_to_scan {
            break;
        }
        if should_abort_scan_6_1(p, m, lv, node, start_max_seq, sc, need_swapping) {
            break;
        }
    }
    if sc.nr_reclaimed - reclaimed0 >= MIN_LRU_BATCH && !need_aging {
        sc.memcgs_need_aging = false;
    }
}

/// 6.1 `should_abort_scan`.
fn should_abort_scan_6_1(
    p: &Mglru,
    m: &Machine,
    lv: usize,
    node: usize,
    seq: u64,
    sc: &mut ScanControl,
    need_swapping: bool,
) -> bool {
    let kswapd = sc.reclaimer == Reclaimer::Kswapd;
    if !kswapd {
        if p.lruvecs[lv].max_seq - seq > 1 {
            return true;
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim && need_swapping {
            return true;
        }
        if sc.cgroup_reclaim() {
            return false;
        }
    } else if sc.nr_reclaimed - sc.last_reclaimed < sc.nr_to_reclaim {
        return false;
    }
    if sc.priority > DEF_PRIORITY - 2 {
        return false;
    }
    let mark = if kswapd { WMARK_HIGH } else { WMARK_LOW };
    if !eligible_zones_all(m, node, sc, |_, z| z.free >= z.wmark(mark)) {
        return false;
    }
    sc.nr_reclaimed += MIN_LRU_BATCH;
    true
}

/// `evict_folios`: one batch. Returns the pages scanned (+1 if min_seq advanced), 0 to stop.
pub fn evict_folios(
    p: &mut Mglru,
    m: &mut Machine,
    memcg: MemcgId,
    node: usize,
    sc: &mut ScanControl,
    swappiness: u32,
    nr_to_scan: u64,
) -> u64 {
    let lv = p.lv(memcg, node);
    let sw = *p.sw();
    let mut list = std::mem::take(&mut p.scratch);
    list.clear();
    if sw.reclaim_loop_single_budget {
        // 7.2: drop the generations emptied by frees before choosing what to scan
        p.try_to_inc_min_seq(lv, swappiness);
    }
    p.lock_scanned = 0;
    let (mut scanned, ty) = isolate_folios(p, m, memcg, node, sc, swappiness, nr_to_scan, &mut list);
    // one lru_lock hold from the first try_to_inc_min_seq to the last, over every folio looked at
    m.lru_lock_held(m.lruvec(memcg, node), LruLockSite::Isolate, p.lock_scanned);
    if sw.reclaim_loop_single_budget {
        // 7.2: exactly the pages examined; 0 only when nothing can be evicted
        if scanned > 0 {
            p.try_to_inc_min_seq(lv, swappiness);
        }
    } else {
        scanned += p.try_to_inc_min_seq(lv, swappiness) as u64;
    }
    let lg = &p.lruvecs[lv];
    let stop = if sw.reclaim_loop_single_budget {
        scanned == 0
    } else if sw.aging_feedback_rework {
        evictable_min_seq(&sw, lg, swappiness) + MIN_NR_GENS > lg.max_seq
    } else {
        let t = if swappiness == 0 { FILE } else { ANON };
        lg.max_seq + 1 - lg.min_seq[t] == MIN_NR_GENS
    };
    if stop {
        scanned = 0;
    }
    if list.is_empty() {
        p.scratch = list;
        if let Some(x) = m.explain.as_deref_mut() {
            x.scan_end();
        }
        return scanned;
    }
    let (_, steal_ev) = vmscan::scan_event(sc.reclaimer, p.sw().proactive_reclaim_stats);
    let typed = if ty == FILE {
        Stat::PgstealFile
    } else {
        Stat::PgstealAnon
    };
    let mut skip_retry = false;
    let [mut clean, mut back] = std::mem::take(&mut p.evict_scratch);
    loop {
        let before = sc.stat;
        let reclaimed = vmscan::shrink_folio_list(m, p, &mut list, sc, false);
        sc.nr_reclaimed += reclaimed;
        if m.ftrace.is_some() {
            vmscan::trace_shrink_inactive(m, sc, &before, scanned, reclaimed, ty == FILE);
        }
        clean.clear();
        back.clear();
        // survivors in the order shrink_folio_list saw them (the kernel's reverse walk of its
        // list, whose tail is the first folio processed)
        for &id in list.iter() {
            let f = m.folios[id];
            if !f.evictable() {
                back.push(id);
                continue;
            }
            match sw.workingset_protection_rework {
                false => {
                    if f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)) {
                        if f.test(pg::WORKINGSET) {
                            m.folios[id].set(pg::REFERENCED);
                        }
                        back.push(id);
                        continue;
                    }
                    if skip_retry
                        || f.test(pg::ACTIVE)
                        || f.test(pg::REFERENCED)
                        || f.mapped()
                        || f.test(pg::DIRTY)
                        || f.test(pg::WRITEBACK)
                    {
                        let fm = &mut m.folios[id];
                        fm.clear(p.refs_flags());
                        fm.set(pg::ACTIVE);
                        back.push(id);
                        continue;
                    }
                    clean.push(id);
                }
                true => {
                    if !skip_retry && !f.test(pg::ACTIVE) && !f.mapped() && !f.test(pg::DIRTY) && !f.test(pg::WRITEBACK)
                    {
                        clean.push(id);
                        continue;
                    }
                    // don't add rejected folios to the oldest generation
                    let lg = &p.lruvecs[lv];
                    if p.folio_seq(lg, &f, false) == lg.min_seq[f.lru_type()] {
                        let fm = &mut m.folios[id];
                        fm.clear(p.refs_flags());
                        fm.set(pg::ACTIVE);
                    }
                    back.push(id);
                }
            }
        }
        // move_folios_to_lru takes folios from the list tail: the same order
        m.lru_lock_held(m.lruvec(memcg, node), LruLockSite::Putback, back.len() as u64);
        for &id in back.iter() {
            p.putback(m, id);
        }
        count_scan(m, memcg, sc, steal_ev, typed, reclaimed, sw.node_reclaim_stats);
        // on the second pass nothing is retried, so `clean` is empty
        if clean.is_empty() {
            break;
        }
        skip_retry = true;
        list.clear();
        list.extend_from_slice(&clean);
    }
    list.clear();
    p.scratch = list;
    p.evict_scratch = [clean, back];
    if let Some(x) = m.explain.as_deref_mut() {
        x.scan_end();
    }
    scanned
}

/// `isolate_folios`: choose the type and tier, then scan; try the other type if nothing came out.
/// Returns (scanned, type scanned).
#[allow(clippy::too_many_arguments)]
fn isolate_folios(
    p: &mut Mglru,
    m: &mut Machine,
    memcg: MemcgId,
    node: usize,
    sc: &mut ScanControl,
    swappiness: u32,
    nr_to_scan: u64,
    list: &mut Vec<FolioId>,
) -> (u64, usize) {
    let lv = p.lv(memcg, node);
    let (mut ty, mut tier, forced) = pid::select_type_how(&p.lruvecs[lv], p.sw(), p.nr_hist, swappiness);
    let tries = type_range(p.sw(), swappiness).len();
    let mut scanned = 0;
    for i in 0..tries {
        let t = tier.unwrap_or_else(|| pid::get_tier_idx(&p.lruvecs[lv], p.sw(), p.nr_hist, ty));
        if let Some(x) = m.explain.as_deref_mut() {
            use crate::explain::TypeChoice;
            x.scan(match (i, forced) {
                (0, true) => TypeChoice::Forced,
                (0, false) => TypeChoice::Balanced,
                _ => TypeChoice::Fallback,
            });
        }
        scanned = scan_folios(p, m, memcg, node, sc, ty, t, nr_to_scan, list);
        if scanned > 0 {
            break;
        }
        ty = 1 - ty;
        tier = None;
    }
    (scanned, ty)
}

/// `scan_folios`: sort or isolate folios from the tail of the oldest generation of `ty`.
#[allow(clippy::too_many_arguments)]
fn scan_folios(
    p: &mut Mglru,
    m: &mut Machine,
    memcg: MemcgId,
    node: usize,
    sc: &mut ScanControl,
    ty: usize,
    tier: usize,
    nr_to_scan: u64,
    list: &mut Vec<FolioId>,
) -> u64 {
    let lv = p.lv(memcg, node);
    let lg = &p.lruvecs[lv];
    if lg.max_seq + 1 - lg.min_seq[ty] == MIN_NR_GENS {
        return 0;
    }
    let gen = gen_from_seq(lg.min_seq[ty]);
    let mut remaining = if p.sw().scan_batch_bounded {
        nr_to_scan.min(MAX_LRU_BATCH)
    } else {
        MAX_LRU_BATCH
    };
    let (mut scanned, mut sorted, mut isolated, mut skipped) = (0u64, 0u64, 0u64, 0u64);
    let reclaim_idx = sc.reclaim_idx.min(MAX_NR_ZONES - 1);
    for i in (1..=MAX_NR_ZONES).rev() {
        let zone = (reclaim_idx + i) % MAX_NR_ZONES;
        let mut moved: Vec<FolioId> = Vec::new();
        loop {
            let id = p.lruvecs[lv].folios[gen][ty][zone].tail;
            if id == NIL {
                break;
            }
            // `delta`: every count in pages (`folio_nr_pages`)
            let delta = u64::from(m.folios.nr_pages(id));
            scanned += delta;
            if sort_folio(p, m, lv, id, sc, tier) {
                sorted += delta;
            } else if isolate_folio(p, m, id, sc) {
                list.push(id);
                isolated += delta;
            } else {
                m.folios.list_del(&mut p.lruvecs[lv].folios[gen][ty][zone], id);
                moved.push(id);
                skipped += delta;
            }
            remaining -= 1;
            if remaining == 0 || isolated.max(skipped) >= MIN_LRU_BATCH {
                break;
            }
        }
        if !moved.is_empty() {
            for &id in &moved {
                m.folios.list_add(&mut p.lruvecs[lv].folios[gen][ty][zone], id);
            }
            let s = [
                Stat::PgskipDma,
                Stat::PgskipDma32,
                Stat::PgskipNormal,
                Stat::PgskipMovable,
            ][zone];
            m.count_vm_events(s, skipped);
            skipped = 0;
        }
        if remaining == 0 || isolated >= MIN_LRU_BATCH {
            break;
        }
    }
    m.count_scanned(sorted);
    p.lock_scanned += scanned;
    let (scan_ev, _) = vmscan::scan_event(sc.reclaimer, p.sw().proactive_reclaim_stats);
    let typed = if ty == FILE { Stat::PgscanFile } else { Stat::PgscanAnon };
    let node_stats = p.sw().node_reclaim_stats;
    count_scan(m, memcg, sc, scan_ev, typed, isolated, node_stats);
    if sorted > 0 {
        if node_stats || !sc.cgroup_reclaim() {
            m.count_vm_events(Stat::Pgrefill, sorted);
        }
        m.count_memcg_events(memcg, Stat::Pgrefill, sorted);
    }
    // the pages taken, against which the flusher wake-up compares the unqueued dirty ones:
    // `sc->nr.file_taken` of the 6.12.y fix, or 7.2's per-batch `handle_reclaim_writeback(isolated)`,
    // which no longer needs that fix's counters (7.2 removed `sc->file_taken`); only file batches
    // can have unqueued dirty folios, so counting file pages is enough for both
    if (p.sw().dirty_throttling_counts || p.sw().reclaim_loop_single_budget) && ty == FILE {
        sc.nr_file_taken += isolated;
    }
    if isolated > 0 || remaining == 0 || p.sw().reclaim_loop_single_budget {
        scanned
    } else {
        0
    }
}

/// Move folio `id` (on a list of lruvec `lv`) to the head or tail of generation `gen`'s list.
pub(crate) fn relink(p: &mut Mglru, m: &mut Machine, lv: usize, id: FolioId, from_gen: usize, gen: usize, tail: bool) {
    let f = m.folios[id];
    let (t, z) = (f.lru_type(), f.zone());
    let lg = &mut p.lruvecs[lv];
    m.folios.list_del(&mut lg.folios[from_gen][t][z], id);
    if tail {
        m.folios.list_add_tail(&mut lg.folios[gen][t][z], id);
    } else {
        m.folios.list_add(&mut lg.folios[gen][t][z], id);
    }
    m.folios[id].set_list_gen(gen);
}

/// `sort_folio`: true if the folio was moved instead of being a candidate for isolation.
fn sort_folio(p: &mut Mglru, m: &mut Machine, lv: usize, id: FolioId, sc: &mut ScanControl, tier_idx: usize) -> bool {
    let f = m.folios[id];
    let delta = u64::from(m.folios.nr_pages(id));
    let (t, z) = (f.lru_type(), f.zone());
    let gen = f.gen_counter() as usize - 1;
    let lg = &p.lruvecs[lv];
    let min_gen = gen_from_seq(lg.min_seq[t]);
    let refs = p.folio_lru_refs(&f);
    let ws = f.test(pg::WORKINGSET);
    let sw = *p.sw();
    let tier = pid::tier_from_refs(&sw, refs, ws);
    // the list the folio is physically on is the oldest generation's
    let on_gen = min_gen;
    // unevictable
    if !f.evictable() {
        if !sw.workingset_protection_rework {
            return false; // the generic path culls it
        }
        p.del(m, id, true);
        m.count_vm_events(Stat::UnevictablePgsCulled, delta);
        let fm = &mut m.folios[id];
        fm.set(pg::UNEVICTABLE | pg::LRU);
        fm.clear(pg::ACTIVE);
        m.folios.list_add(&mut p.unevictable[lv], id);
        m.update_lru_size(id, crate::mm::Lru::Unevictable, 1);
        return true;
    }
    // promoted by a page-table walk or look-around
    if gen != min_gen {
        relink(p, m, lv, id, on_gen, gen, false);
        return true;
    }
    // protected by its tier
    // v3: FG's counter never saturates (an overflow promotes at access time)
    let saturated = if sw.fg_unified_refs {
        false
    } else if sw.workingset_protection_rework {
        refs + ws as u32 == 5
    } else {
        refs == 4
    };
    // MGLRU-FG ablation: no eviction-time tier protection
    let protect = !(sw.fg_unified_refs && sw.fg_no_tier_protection) && tier > tier_idx;
    if protect || saturated {
        if protect {
            if let Some(x) = m.explain.as_deref_mut() {
                x.tier_protected();
            }
        }
        let hist = hist_from_seq(p.lruvecs[lv].min_seq[t], p.nr_hist);
        let new_gen = p.folio_inc_gen(m, id, false);
        match sw.workingset_protection_rework {
            false => {
                relink(p, m, lv, id, on_gen, new_gen, true);
                if tier > 0 {
                    p.lruvecs[lv].protected[hist][t][tier - 1] += delta;
                }
                if !sw.workingset_activate_at_refault {
                    let s = if t == FILE {
                        Stat::WorkingsetActivateFile
                    } else {
                        Stat::WorkingsetActivateAnon
                    };
                    m.mod_lruvec_state(f.memcg, f.node(), s, delta as i64);
                }
            }
            true => {
                relink(p, m, lv, id, on_gen, new_gen, false);
                if !saturated {
                    p.lruvecs[lv].protected[hist][t][tier] += delta;
                }
            }
        }
        return true;
    }
    // ineligible
    if z > sc.reclaim_idx.min(MAX_NR_ZONES - 1) || (sw.workingset_protection_rework && !f.test(pg::LRU)) {
        let new_gen = p.folio_inc_gen(m, id, false);
        relink(p, m, lv, id, on_gen, new_gen, true);
        return true;
    }
    if sw.dirty_throttling_counts && t == FILE && f.test(pg::DIRTY) {
        sc.nr_file_taken += 1;
        if !f.test(pg::WRITEBACK) {
            sc.stat.nr_unqueued_dirty += 1;
        }
    }
    // waiting for writeback (7.2 and 6.12.117: isolated, shrink_folio_list reactivates them)
    if !sw.dirty_writeback_reactivation && (f.test(pg::WRITEBACK) || (t == FILE && f.test(pg::DIRTY))) {
        let new_gen = p.folio_inc_gen(m, id, true);
        relink(p, m, lv, id, on_gen, new_gen, false);
        return true;
    }
    let _ = MAX_NR_GENS;
    false
}

/// `isolate_folio`: take a candidate off its generation list for `shrink_folio_list`.
fn isolate_folio(p: &mut Mglru, m: &mut Machine, id: FolioId, sc: &ScanControl) -> bool {
    let f = m.folios[id];
    let rework = p.sw().workingset_protection_rework;
    if !rework {
        if !sc.may_unmap && f.mapped() {
            return false;
        }
        if !sc.may_writepage && (f.test(pg::DIRTY) || (f.is_anon() && !f.test(pg::SWAPCACHE))) {
            return false;
        }
    }
    {
        let fg = p.sw().fg_unified_refs;
        let fm = &mut m.folios[id];
        // v3: `folio_test_referenced` is refs ≥ 1, so an unreferenced folio has nothing to clear
        if !fg && !fm.test(pg::REFERENCED) {
            if rework {
                fm.set_refs(0);
            } else {
                fm.clear(pg::REFS_MASK | pg::REFERENCED | pg::WORKINGSET);
            }
        }
        fm.clear(pg::RECLAIM);
        if !rework {
            fm.clear(pg::REFERENCED);
        }
    }
    p.del(m, id, true);
    mark_isolated(m, id);
    true
}

// SPDX-License-Identifier: GPL-2.0-only
//! The shared half of `mm/vmscan.c`: `shrink_folio_list`, `shrink_node`, the priority loop of
//! direct and memcg reclaim (`do_try_to_free_pages`), and kswapd's `balance_pgdat`.
//!
//! I/O is synchronous in this model (as on zram or a ramdisk): a swap-out completes inside
//! `pageout`, so the folio is freed in the same pass, and the flusher cleans dirty file folios when
//! reclaim wakes it. Dirty file folios are never written by reclaim itself, as in mainline.

use super::{FolioRef, Policy, Reclaimer, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::mm::folio::{pg, FolioId, ANON, FILE};
use crate::mm::memcg::{MemcgId, ReclaimCookie, ROOT_MEMCG};
use crate::mm::node::{WMARK_HIGH, WMARK_MIN, WMARK_PROMO};
use crate::mm::vmstat::Stat;
use crate::mm::Machine;

/// The `pgscan_*`/`pgsteal_*` event of a reclaimer (`reclaimer_offset`): proactive reclaim
/// (`memory.reclaim`, and the debugfs `-` on the same kernels) has events of its own where the
/// profile's `proactive_reclaim_stats` says so (6.15 on), and counts as direct reclaim before.
pub fn scan_event(r: Reclaimer, proactive_stats: bool) -> (Stat, Stat) {
    match r {
        Reclaimer::Kswapd => (Stat::PgscanKswapd, Stat::PgstealKswapd),
        Reclaimer::Proactive if proactive_stats => (Stat::PgscanProactive, Stat::PgstealProactive),
        Reclaimer::Direct | Reclaimer::Proactive => (Stat::PgscanDirect, Stat::PgstealDirect),
    }
}

/// Count `n` scanned or stolen pages of `memcg`'s lruvec: the reclaimer's event globally only for
/// non-cgroup reclaim, always for the memcg; the per-type event always globally.
/// `node_stats` (7.2, "mm: move pgscan, pgsteal, pgrefill to node stats"): counted for cgroup
/// reclaim too.
pub fn count_scan(m: &mut Machine, memcg: MemcgId, sc: &ScanControl, ev: Stat, typed: Stat, n: u64, node_stats: bool) {
    if n == 0 {
        return;
    }
    if node_stats || !sc.cgroup_reclaim() {
        m.count_vm_events(ev, n);
    }
    m.count_memcg_events(memcg, ev, n);
    m.count_vm_events(typed, n);
}

/// Isolate bookkeeping: the folio leaves its list (done by the policy) and is now private to reclaim.
#[inline]
pub fn mark_isolated(m: &mut Machine, id: FolioId) {
    let f = &mut m.folios[id];
    f.clear(pg::LRU);
    f.set(pg::ISOLATED);
    let (mc, n, t) = (f.memcg, f.node(), f.lru_type());
    let s = if t == FILE {
        Stat::NrIsolatedFile
    } else {
        Stat::NrIsolatedAnon
    };
    let nr = i64::from(m.folios.nr_pages(id));
    m.mod_lruvec_state(mc, n, s, nr);
}

/// Undo [`mark_isolated`] before the folio goes back on a list or is freed.
#[inline]
pub fn clear_isolated(m: &mut Machine, id: FolioId) {
    let f = &mut m.folios[id];
    debug_assert!(f.test(pg::ISOLATED));
    f.clear(pg::ISOLATED);
    let (mc, n, t) = (f.memcg, f.node(), f.lru_type());
    let s = if t == FILE {
        Stat::NrIsolatedFile
    } else {
        Stat::NrIsolatedAnon
    };
    let nr = i64::from(m.folios.nr_pages(id));
    m.mod_lruvec_state(mc, n, s, -nr);
}

/// `add_to_swap`: give an anon folio a swap slot and put it in the swap cache, dirty.
/// Fails when swap is full or the memcg's swap limit is reached.
pub fn add_to_swap(m: &mut Machine, id: FolioId) -> bool {
    let memcg = m.folios[id].memcg;
    let Some(slot) = m.swap_acquire(memcg) else {
        return false;
    };
    m.swap_cache_add(id, slot);
    m.folio_mark_dirty(id);
    true
}

/// Free a folio that is off every list and unmapped: uncharge and return the frame (a large
/// folio: its pages and its block, [`Machine::free_large`]).
pub fn free_folio(m: &mut Machine, id: FolioId) {
    if m.folios[id].test(pg::HEAD) {
        m.free_large(id);
        return;
    }
    m.uncharge(id);
    m.free_frame(id);
}

/// `shrink_folio_list`: try to reclaim every isolated folio of `list` (all from lruvec (memcg,
/// node)). Freed folios are removed from `list`; survivors stay in it, with `PG_active` set on
/// those to activate, for the policy to put back. Returns the number of pages reclaimed.
///
/// On a node with a lower memory tier and demotion enabled ([`super::tiering::can_demote`]),
/// folios that would be reclaimed are demoted instead ([`super::tiering::demote_folio_list`]),
/// counting as reclaimed and in `pgdemote_*`; those that cannot be go through reclaim again
/// without demotion (except in proactive reclaim, where they are kept).
pub fn shrink_folio_list<P: Policy>(
    m: &mut Machine,
    p: &mut P,
    list: &mut Vec<FolioId>,
    sc: &mut ScanControl,
    ignore_references: bool,
) -> u64 {
    let node = list.first().map(|&id| m.folios[id].node());
    let do_demote = node.is_some_and(|n| super::tiering::can_demote(m, n, sc));
    let mut demote = Vec::new();
    let mut nr_reclaimed = shrink_folio_pass(m, p, list, sc, ignore_references, do_demote.then_some(&mut demote));
    if let (Some(n), false) = (node, demote.is_empty()) {
        let memcg = m.folios[demote[0]].memcg;
        let nr_demoted = super::tiering::demote_folio_list(m, p, &mut demote, n);
        nr_reclaimed += nr_demoted;
        sc.stat.nr_demoted += nr_demoted;
        if nr_demoted > 0 {
            let ev = super::tiering::demote_event(sc.reclaimer, p.switches().proactive_reclaim_stats);
            m.mod_lruvec_state(memcg, n, ev, nr_demoted as i64);
        }
        if sc.reclaimer != Reclaimer::Proactive {
            // the folios not demoted are reclaimed from this tier after all
            nr_reclaimed += shrink_folio_pass(m, p, &mut demote, sc, ignore_references, None);
        }
        list.append(&mut demote);
    }
    nr_reclaimed
}

/// One pass of [`shrink_folio_list`] over `list`; with `demote`, folios to reclaim go there
/// instead (still isolated).
fn shrink_folio_pass<P: Policy>(
    m: &mut Machine,
    p: &mut P,
    list: &mut Vec<FolioId>,
    sc: &mut ScanControl,
    ignore_references: bool,
    mut demote: Option<&mut Vec<FolioId>>,
) -> u64 {
    let mut nr_reclaimed = 0;
    let mut pgactivate = 0;
    let mut survivors = 0;
    let mut isolated = IsolatedDrop::default();
    // try_to_unmap with TTU_BATCH_FLUSH: one TLB flush (with its IPIs) for the whole list
    let mut unmapped = false;
    m.count_scanned(list.len() as u64);
    let mut i = 0;
    while i < list.len() {
        let id = list[i];
        i += 1;
        sc.nr_scanned += u64::from(m.folios.nr_pages(id));
        let keep = 'decide: {
            let f = m.folios[id];
            if !f.evictable() {
                break 'decide Outcome::Activate;
            }
            if !sc.may_unmap && f.mapped() {
                break 'decide Outcome::Keep;
            }
            // MGLRU (6.1–6.13): a walk or a look-around found this mapped folio young while it was
            // isolated (`folio_update_gen` marks it `PG_referenced`): keep it, without an rmap walk.
            if p.keep_referenced_mapped() && !ignore_references && f.mapped() && f.test(pg::REFERENCED) {
                break 'decide Outcome::Keep;
            }
            // folio_check_dirty_writeback: only file folios are the flushers' business
            if f.is_file_lru() {
                if f.test(pg::DIRTY) || f.test(pg::WRITEBACK) {
                    sc.stat.nr_dirty += 1;
                }
                if f.test(pg::DIRTY) && !f.test(pg::WRITEBACK) {
                    sc.stat.nr_unqueued_dirty += 1;
                }
            }
            let references = if ignore_references {
                FolioRef::Reclaim
            } else {
                p.check_references(m, id, sc)
            };
            match references {
                FolioRef::Activate => break 'decide Outcome::Activate,
                FolioRef::Keep => {
                    sc.stat.nr_ref_keep += 1;
                    break 'decide Outcome::Keep;
                }
                FolioRef::Reclaim | FolioRef::ReclaimClean => {}
            }
            // Before reclaiming it, try to move it to a lower tier.
            if let Some(d) = demote.as_deref_mut() {
                d.push(id);
                break 'decide Outcome::Demote;
            }
            // Anon: allocate swap and put it in the swap cache.
            if f.lru_type() == ANON && f.is_anon() && !f.test(pg::SWAPCACHE) {
                if !sc.may_swap {
                    break 'decide Outcome::Activate;
                }
                if f.test(pg::HEAD) {
                    // a large folio: swapped out whole into one free cluster, else split and
                    // swapped out page by page (the tails come next in the list)
                    add_large_to_swap(m, p, id, list, i - 1, sc);
                    if !m.folios[id].test(pg::SWAPCACHE) && !add_to_swap(m, id) {
                        break 'decide Outcome::Activate;
                    }
                } else if !add_to_swap(m, id) {
                    break 'decide Outcome::Activate;
                }
            }
            if m.folios[id].mapped() {
                m.try_to_unmap(id);
                unmapped = true;
                if m.folios[id].mapped() {
                    sc.stat.nr_unmap_fail += 1;
                    break 'decide Outcome::Activate;
                }
            }
            if m.folios[id].test(pg::DIRTY) {
                if m.folios[id].is_file_lru() {
                    // Mainline: reclaim never writes file folios; tag for immediate reclaim once
                    // the flusher has cleaned them, and keep them out of the way.
                    let (mc, n) = (m.folios[id].memcg, m.folios[id].node());
                    m.mod_node_state(mc, n, Stat::NrVmscanImmediateReclaim, 1);
                    m.folios[id].set(pg::RECLAIM);
                    break 'decide Outcome::Activate;
                }
                if references == FolioRef::ReclaimClean || !sc.may_writepage {
                    break 'decide Outcome::Keep;
                }
                // pageout(): is_page_cache_freeable counts a reference too many while a per-CPU
                // batch holds the folio (PAGE_KEEP): not written
                if m.lru_activate.holds(id) {
                    break 'decide Outcome::Keep;
                }
                // pageout(): synchronous swap write (zram: compress into the pool)
                let slot = m.folios[id].swap_slot();
                if !m.zram_store(id, slot) {
                    break 'decide Outcome::Activate;
                }
                // shmem_writeout: the written folio leaves its file's page cache for a swap entry
                // there, which holds the slot (undone in the kernel when the write fails)
                if m.is_boot_shmem(id) && !m.boot_shmem_holds(id) {
                    m.boot_shmem_hold_slot(id);
                }
                m.folios[id].clear(pg::DIRTY);
                let (mc, n) = (m.folios[id].memcg, m.folios[id].node());
                m.mod_node_state(mc, n, Stat::NrVmscanWrite, 1);
                // the write completes at once: `__folio_end_writeback`
                m.mod_node_state(mc, n, Stat::NrWritten, 1);
                m.count_pswpout(id);
                // 6.1 on zram: counted for a large folio's whole write in `add_large_to_swap`
                if m.swap_io_counts_pgpg() {
                    m.count_vm_events(Stat::Pgpgout, 4);
                }
                sc.stat.nr_pageout += 1;
            }
            // folio_has_private: filemap_release_folio fails while a CPU's bh LRU holds its buffers
            if !m.folios[id].is_anon() && m.files[m.folios[id].mapping as usize].buffers_in_bh_lru {
                break 'decide Outcome::Activate;
            }
            // __remove_mapping: folio_ref_freeze fails while a per-CPU batch holds the folio
            if m.lru_activate.holds(id) {
                break 'decide Outcome::Keep;
            }
            let shadow = p.eviction_shadow(m, id, sc.target_memcg);
            if m.folios[id].test(pg::SWAPCACHE) {
                m.swap_cache_delete(id, Some(shadow));
            } else {
                m.page_cache_delete(id, Some(shadow));
            }
            Outcome::Free
        };
        match keep {
            Outcome::Free => {
                isolated.clear(m, id);
                free_folio(m, id);
                nr_reclaimed += 1;
            }
            Outcome::Activate => {
                let f = m.folios[id];
                if f.test(pg::SWAPCACHE) && (m.swap.is_full() || f.test(pg::MLOCKED)) {
                    m.folio_free_swap(id);
                }
                if f.evictable() {
                    let nr = u64::from(m.folios.nr_pages(id));
                    m.folios[id].set(pg::ACTIVE);
                    sc.stat.nr_activate[f.lru_type()] += nr;
                    m.count_memcg_events(f.memcg, Stat::Pgactivate, nr);
                    pgactivate += nr;
                }
                list[survivors] = id;
                survivors += 1;
            }
            Outcome::Keep => {
                list[survivors] = id;
                survivors += 1;
            }
            Outcome::Demote => {}
        }
    }
    isolated.apply(m);
    list.truncate(survivors);
    m.count_vm_events(Stat::Pgactivate, pgactivate);
    if unmapped {
        m.count_tlb_flush();
    }
    nr_reclaimed
}

/// `add_to_swap` of the isolated large anon folio `id` at `list[pos]` (`shrink_folio_list`):
/// a free cluster of swap for all its pages swaps it out whole (`thp_swpout`); the model then
/// splits it with each page in the swap cache at its slot of the cluster and dirty, so that its
/// pages are unmapped, written and freed one by one in this pass, as the kernel does the whole
/// folio at once (one shadow per page: their eviction counters differ by up to 511). No cluster:
/// `split_folio_to_list` and `thp_swpout_fallback` (6.12 on: also in the memcg), the head left
/// for `add_to_swap` of order 0. Either way the tails follow `id` in `list`, and `nr_scanned`
/// drops by the pages they bring, counted again as each passes (`sc->nr_scanned -= nr - 1`).
fn add_large_to_swap<P: Policy>(
    m: &mut Machine,
    p: &mut P,
    id: FolioId,
    list: &mut Vec<FolioId>,
    pos: usize,
    sc: &mut ScanControl,
) {
    let nr = m.folios.nr_pages(id);
    let slots = m.swap_acquire_cluster(m.folios[id].memcg, nr);
    super::huge_memory::split_folio(m, p, id, Some((list, pos)));
    sc.nr_scanned -= u64::from(nr) - 1;
    m.count_scanned(u64::from(nr) - 1);
    match slots {
        Some(first) => {
            for k in 0..nr {
                m.swap_cache_add(id + k, first + k);
                m.folio_mark_dirty(id + k);
            }
            count_thp_event(m, p, id, Stat::ThpSwpout);
            // 6.1: `zram_rw_page` refuses a large folio, which `__swap_writepage` then writes
            // whole by a bio, counted in `pgpgout` (its pages' writes below count nothing)
            if !m.swap_io_counts_pgpg() {
                m.count_vm_events(Stat::Pgpgout, 4 * u64::from(nr));
            }
        }
        None => {
            m.count_vm_events(Stat::ThpSplitPage, 1);
            count_thp_event(m, p, id, Stat::ThpSwpoutFallback);
        }
    }
}

/// `thp_swpout` or `thp_swpout_fallback` of folio `id`: globally, and in its memcg from 6.12
/// (`memcg_thp_swpout_stats`).
fn count_thp_event<P: Policy>(m: &mut Machine, p: &P, id: FolioId, s: Stat) {
    if p.switches().memcg_thp_swpout_stats {
        m.count_events(m.folios[id].memcg, s, 1);
    } else {
        m.count_vm_events(s, 1);
    }
}

/// [`clear_isolated`] of the folios [`shrink_folio_pass`] frees, with the counters' updates
/// folded: the rstat bookkeeping of each is counted at once, in order with the other updates, and
/// the `NR_ISOLATED_{ANON,FILE}` decrements of consecutive folios of one lruvec are added up and
/// applied (walking up the memcg tree once) when the lruvec changes or the pass ends, as the
/// kernel's per-CPU deltas fold them. Nothing reads those two counters in between: they are read
/// by reports and the invariant checker, between operations and after `shrink_node`.
#[derive(Default)]
struct IsolatedDrop {
    /// The lruvec (memcg, node) of the pending decrements.
    lruvec: (MemcgId, usize),
    /// Pending decrements by LRU type (anon, file).
    n: [i64; 2],
}

impl IsolatedDrop {
    /// [`clear_isolated`] of `id`, its counters' update pending.
    #[inline]
    fn clear(&mut self, m: &mut Machine, id: FolioId) {
        let f = &mut m.folios[id];
        debug_assert!(f.test(pg::ISOLATED));
        f.clear(pg::ISOLATED);
        let (lruvec, t) = ((f.memcg, f.node()), f.lru_type());
        m.rstat.updated(1);
        if lruvec != self.lruvec {
            self.apply(m);
            self.lruvec = lruvec;
        }
        self.n[t] += 1;
    }

    /// Apply the pending decrements.
    #[inline]
    fn apply(&mut self, m: &mut Machine) {
        let (mc, n) = self.lruvec;
        for (t, s) in [(ANON, Stat::NrIsolatedAnon), (FILE, Stat::NrIsolatedFile)] {
            if self.n[t] != 0 {
                m.add_lruvec_counters(mc, n, s, -self.n[t]);
                self.n[t] = 0;
            }
        }
    }
}

enum Outcome {
    Free,
    Demote,
    Activate,
    Keep,
}

/// `wakeup_flusher_threads` in a synchronous model: write back every dirty file folio of the node
/// now. A folio tagged `PG_reclaim` is rotated to the tail of its list once clean
/// (`folio_rotate_reclaimable`).
pub fn flush_dirty_file<P: Policy>(m: &mut Machine, p: &mut P, node: usize) {
    let n = m.folios.len() as FolioId;
    for id in 0..n {
        let f = m.folios[id];
        if f.test(pg::ALLOCATED) && f.node() == node && f.is_file_lru() && !f.is_anon() && f.test(pg::DIRTY) {
            super::writeback::write_folio(m, p, id);
        }
    }
}

/// Whether reclaim must leave `memcg` alone (`mem_cgroup_below_min`, or `mem_cgroup_below_low`
/// on the first round); a memcg reclaimed below `memory.low` counts a `low` event.
pub fn memcg_protected(m: &mut Machine, memcg: MemcgId, sc: &mut ScanControl) -> bool {
    let target = sc.target_memcg;
    if m.memcgs.below_min(target, memcg) {
        return true;
    }
    if m.memcgs.below_low(target, memcg) {
        if !sc.memcg_low_reclaim {
            sc.memcg_low_skipped = true;
            return true;
        }
        m.memcgs[memcg].events.low += 1;
    }
    false
}

/// `shrink_node_memcgs`: shrink the memcgs of the reclaim target's subtree on `node`, honouring
/// `memory.min` and `memory.low`: its lruvec, then its slab (`shrink_slab`). With
/// `incremental_cgroup_iteration` (6.11+), direct and memcg reclaim walk with the reclaim cookie:
/// the walk resumes after the memcg the last one stopped at, ends at the end of the subtree, and
/// stops once `nr_to_reclaim` pages are reclaimed; kswapd and a `memcg_full_walk` retry walk the
/// whole subtree. Without it (6.1), every walk is a whole one.
pub fn shrink_node_memcgs<P: Policy>(m: &mut Machine, p: &mut P, node: usize, sc: &mut ScanControl) {
    let target = sc.target_memcg.unwrap_or(ROOT_MEMCG);
    let partial =
        p.switches().incremental_cgroup_iteration && sc.reclaimer != super::Reclaimer::Kswapd && !sc.memcg_full_walk;
    let mut cookie = ReclaimCookie { node, generation: 0 };
    m.memcgs.calculate_protection(target);
    let mut memcg = m.mem_cgroup_iter(target, None, partial.then_some(&mut cookie));
    while let Some(mc) = memcg {
        if !memcg_protected(m, mc, sc) {
            p.shrink_lruvec(m, mc, node, sc);
            super::shrinker::shrink_slab(m, p, node, mc, sc.priority);
            // partial walks stop once the goal is reached (`mem_cgroup_iter_break`: the
            // iterator keeps this memcg as its position)
            if partial && sc.nr_reclaimed >= sc.nr_to_reclaim {
                break;
            }
        }
        memcg = m.mem_cgroup_iter(target, Some(mc), partial.then_some(&mut cookie));
    }
}

/// `shrink_node`: one pass over a node.
pub fn shrink_node<P: Policy>(m: &mut Machine, p: &mut P, node: usize, sc: &mut ScanControl) {
    let before = sc.nr_reclaimed;
    // every reclaim path drains the local CPU's lru_add batch before it isolates folios
    super::lru_add_drain(m, p);
    p.prepare_node(m, node, sc);
    p.shrink_node_lruvecs(m, node, sc);
    // on progress, a kswapd that gave up on the node runs again (`kswapd_try_clear_hopeless`:
    // on 7.x only once the node is balanced)
    if sc.nr_reclaimed > before
        && (!p.switches().kswapd_clear_hopeless_balanced || pgdat_balanced(m, node, sc.reclaim_idx))
    {
        m.nodes[node].kswapd_failures = 0;
    }
    if m.debug_checks && m.check_failure.is_none() {
        if let Err(e) = super::check::check_invariants(m, p) {
            m.check_failure = Some(format!(
                "after shrink_node (node {node}, priority {}): {e}",
                sc.priority
            ));
        }
    }
}

/// `do_try_to_free_pages`: the priority loop shared by direct and memcg reclaim.
pub fn do_try_to_free_pages<P: Policy>(m: &mut Machine, p: &mut P, sc: &mut ScanControl, nodes: NodeOrder) -> u64 {
    let initial_priority = sc.priority;
    loop {
        loop {
            sc.nr_scanned = 0;
            for n in nodes.iter() {
                shrink_node(m, p, n, sc);
            }
            if sc.nr_reclaimed >= sc.nr_to_reclaim {
                break;
            }
            if sc.priority < DEF_PRIORITY - 2 {
                sc.may_writepage = true;
            }
            if sc.priority == 0 {
                break;
            }
            sc.priority -= 1;
        }
        let target = sc.target_memcg.unwrap_or(ROOT_MEMCG);
        for n in nodes.iter() {
            p.snapshot_refaults(m, target, n);
        }
        if sc.nr_reclaimed > 0 {
            return sc.nr_reclaimed;
        }
        // partial walks may have seen too few memcgs to make progress: retry with full walks
        // before giving up (`incremental_cgroup_iteration`)
        if p.switches().incremental_cgroup_iteration && !sc.memcg_full_walk {
            sc.priority = initial_priority;
            sc.memcg_full_walk = true;
            continue;
        }
        // An active list was skipped for want of deactivation: retry deactivating everything
        // before breaching memory.low (the kernel tries this first).
        if sc.skipped_deactivate {
            sc.priority = initial_priority;
            sc.force_deactivate = true;
            sc.skipped_deactivate = false;
            continue;
        }
        // Untapped cgroup reserves? Don't OOM, retry.
        if sc.memcg_low_skipped {
            sc.priority = initial_priority;
            sc.force_deactivate = false;
            sc.memcg_low_reclaim = true;
            sc.memcg_low_skipped = false;
            continue;
        }
        return 0;
    }
}

/// Nodes in fallback order starting at one node (the zonelist, by node): a value, so that an
/// allocation does not build a list.
#[derive(Clone, Copy, Debug)]
pub struct NodeOrder {
    start: usize,
    n: usize,
}

impl NodeOrder {
    /// The nodes, `start` first.
    #[inline]
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let (start, n) = (self.start, self.n);
        (0..n).map(move |i| (start + i) % n)
    }
}

/// Nodes in fallback order starting at `node` (the zonelist, by node).
#[inline]
pub fn node_order(m: &Machine, node: usize) -> NodeOrder {
    NodeOrder {
        start: node,
        n: m.nr_nodes(),
    }
}

/// The highest zone an allocation may be given (`gfp_zone` of its flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GfpZone {
    /// `GFP_HIGHUSER_MOVABLE`: user pages and the page cache, any zone.
    Movable,
    /// `GFP_USER` and `GFP_KERNEL`: none above ZONE_NORMAL.
    Normal,
}

impl GfpZone {
    /// The flags as the kernel's tracepoints print them (`show_gfp_flags`).
    pub fn flags_name(self) -> &'static str {
        match self {
            GfpZone::Movable => "GFP_HIGHUSER_MOVABLE",
            GfpZone::Normal => "GFP_USER",
        }
    }

    /// The zone type of the flags.
    pub fn zone_type(self) -> crate::mm::node::ZoneType {
        match self {
            GfpZone::Movable => crate::mm::node::ZoneType::Movable,
            GfpZone::Normal => crate::mm::node::ZoneType::Normal,
        }
    }

    /// The index in `node`'s zones of the highest zone the allocation may use (`reclaim_idx`):
    /// the last of a kind no higher than the flags' (the first zone if none is).
    pub fn highest_zone(self, m: &Machine, node: usize) -> usize {
        let zones = &m.nodes[node].zones;
        match self {
            GfpZone::Movable => zones.len() - 1,
            GfpZone::Normal => zones.iter().rposition(|z| z.kind <= self.zone_type()).unwrap_or(0),
        }
    }
}

/// `try_to_free_pages`: direct reclaim for an allocation on `node`. Counts `allocstall_<zone>`.
pub fn try_to_free_pages<P: Policy>(m: &mut Machine, p: &mut P, node: usize, gfp: GfpZone) -> u64 {
    let reclaim_idx = gfp.highest_zone(m, node);
    let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Direct, None, reclaim_idx);
    // counted by the allocation's highest zone: on an x86 machine that of its flags whichever
    // zones there are (`gfp_zone`: ZONE_MOVABLE for user pages and the page cache, ZONE_NORMAL
    // for `GFP_USER`)
    let top = if m.cfg.lowmem_reserve {
        gfp.zone_type()
    } else {
        m.nodes[node].zones[reclaim_idx].kind
    };
    let stall = match top {
        crate::mm::node::ZoneType::Dma => Stat::AllocstallDma,
        crate::mm::node::ZoneType::Dma32 => Stat::AllocstallDma32,
        crate::mm::node::ZoneType::Normal => Stat::AllocstallNormal,
        crate::mm::node::ZoneType::Movable => Stat::AllocstallMovable,
    };
    m.count_vm_events(stall, 1);
    let nodes = node_order(m, node);
    if m.ftrace.is_some() {
        let ids = m.reclaim_trace_ids(None);
        m.trace(
            crate::mm::ftrace::Event::DirectReclaimBegin,
            format_args!("order=0 gfp_flags={}{ids}", gfp.flags_name()),
        );
    }
    let nr_reclaimed = do_try_to_free_pages(m, p, &mut sc, nodes);
    if m.ftrace.is_some() {
        let ids = m.reclaim_trace_ids(None);
        m.trace(
            crate::mm::ftrace::Event::DirectReclaimEnd,
            format_args!("nr_reclaimed={nr_reclaimed}{ids}"),
        );
    }
    nr_reclaimed
}

/// `try_to_free_mem_cgroup_pages`: memcg limit (or high) reclaim of at least `nr` pages.
pub fn try_to_free_mem_cgroup_pages<P: Policy>(
    m: &mut Machine,
    p: &mut P,
    memcg: MemcgId,
    nr: u64,
    may_swap: bool,
) -> u64 {
    let mut sc = ScanControl::new(nr.max(SWAP_CLUSTER_MAX), Reclaimer::Direct, Some(memcg), usize::MAX);
    sc.may_swap = may_swap;
    let nodes = node_order(m, 0);
    if m.ftrace.is_some() {
        let ids = m.reclaim_trace_ids(Some(memcg));
        m.trace(
            crate::mm::ftrace::Event::MemcgReclaimBegin,
            format_args!("order=0 gfp_flags=GFP_HIGHUSER_MOVABLE{ids}"),
        );
    }
    let nr_reclaimed = do_try_to_free_pages(m, p, &mut sc, nodes);
    if m.ftrace.is_some() {
        let ids = m.reclaim_trace_ids(Some(memcg));
        m.trace(
            crate::mm::ftrace::Event::MemcgReclaimEnd,
            format_args!("nr_reclaimed={nr_reclaimed}{ids}"),
        );
    }
    nr_reclaimed
}

/// `pgdat_balanced`: some eligible zone (up to `highest_zoneidx`; `usize::MAX`, memcg reclaim's
/// `reclaim_idx`, is every zone) is above its high watermark.
pub fn pgdat_balanced(m: &Machine, node: usize, highest_zoneidx: usize) -> bool {
    // memory-tiering mode: kswapd balances to the promo watermark, to make room for promotion
    let mark = if m.tiers.as_ref().is_some_and(|t| t.tiering()) {
        WMARK_PROMO
    } else {
        WMARK_HIGH
    };
    let mut any = false;
    for (zi, z) in m.nodes[node]
        .zones
        .iter()
        .enumerate()
        .take(highest_zoneidx.saturating_add(1))
    {
        if z.managed == 0 {
            continue;
        }
        any = true;
        if m.zone_watermark_ok(node, zi, z.wmark(mark)) {
            return true;
        }
    }
    !any
}

/// `allow_direct_reclaim` is not modelled; this reports whether free memory is below the min
/// watermark of every zone (used by the allocator).
pub fn below_min(m: &Machine, node: usize) -> bool {
    m.nodes[node]
        .zones
        .iter()
        .enumerate()
        .all(|(zi, z)| !m.zone_watermark_ok(node, zi, z.wmark(WMARK_MIN)))
}

/// One run of kswapd's `balance_pgdat` on a node, in progress: the engine that runs kswapd as a
/// task of its own advances it one priority pass at a time ([`balance_pgdat_step`]).
#[derive(Clone, Debug)]
pub struct KswapdRun {
    /// Its node.
    pub node: usize,
    highest: usize,
    sc: ScanControl,
    /// The loop stopped because the node was balanced (`goto out`, which skips the failure
    /// count), not because the priority ran out.
    balanced: bool,
}

/// Run `f` in kswapd's context: its reclaim work is counted as kswapd's, not the task's.
fn in_kswapd_ctx<R>(m: &mut Machine, f: impl FnOnce(&mut Machine) -> R) -> R {
    m.work();
    let saved = std::mem::replace(&mut m.ctx, crate::mm::CTX_KSWAPD);
    let r = f(m);
    m.work();
    m.ctx = saved;
    r
}

/// Start `balance_pgdat` on `node` (counts `pageoutrun`).
pub fn balance_pgdat_begin(m: &mut Machine, node: usize) -> KswapdRun {
    let highest = m.nodes[node].kswapd_highest_zoneidx.min(m.nodes[node].zones.len() - 1);
    m.count_vm_events(Stat::Pageoutrun, 1);
    // set_reclaim_active: the zones' per-CPU lists hold little while kswapd reclaims
    for z in m.nodes[node].zones.iter_mut().take(highest + 1) {
        if z.managed > 0 {
            z.reclaim_active = true;
        }
    }
    KswapdRun {
        node,
        highest,
        sc: ScanControl::new(0, Reclaimer::Kswapd, None, highest),
        balanced: false,
    }
}

/// One pass of `balance_pgdat`'s loop at the current priority: age, then `kswapd_shrink_node`.
/// Returns false when the run is over (the node is balanced, or priority ran out).
pub fn balance_pgdat_step<P: Policy>(m: &mut Machine, p: &mut P, run: &mut KswapdRun) -> bool {
    let (node, highest) = (run.node, run.highest);
    in_kswapd_ctx(m, |m| {
        let sc = &mut run.sc;
        if pgdat_balanced(m, node, highest) {
            run.balanced = true;
            return false;
        }
        let before = sc.nr_reclaimed;
        let mut raise_priority = true;
        p.age_node(m, node, sc);
        if sc.priority < DEF_PRIORITY - 2 {
            sc.may_writepage = true;
        }
        sc.nr_scanned = 0;
        // kswapd_shrink_node
        sc.nr_to_reclaim = m.nodes[node]
            .zones
            .iter()
            .take(highest + 1)
            .filter(|z| z.managed > 0)
            .map(|z| z.wmark(WMARK_HIGH).max(SWAP_CLUSTER_MAX))
            .sum();
        shrink_node(m, p, node, sc);
        if sc.nr_scanned >= sc.nr_to_reclaim {
            raise_priority = false;
        }
        let reclaimed = sc.nr_reclaimed - before;
        if raise_priority || reclaimed == 0 {
            sc.priority -= 1;
        }
        sc.priority >= 1
    })
}

/// Finish a `balance_pgdat` run: count a failure if the priority ran out with nothing reclaimed
/// (a run that found the node balanced is no failure, even if it reclaimed nothing: under the
/// engine the tasks may free memory between passes), and let kswapd sleep. Returns the pages
/// reclaimed.
pub fn balance_pgdat_end<P: Policy>(m: &mut Machine, p: &mut P, run: KswapdRun) -> u64 {
    let node = run.node;
    in_kswapd_ctx(m, |m| {
        if !run.balanced && run.sc.nr_reclaimed == 0 {
            m.nodes[node].kswapd_failures += 1;
        }
        p.snapshot_refaults(m, ROOT_MEMCG, node);
        m.nodes[node].kswapd_woken = false;
        // clear_reclaim_active
        for z in m.nodes[node].zones.iter_mut() {
            z.reclaim_active = false;
        }
    });
    run.sc.nr_reclaimed
}

/// `balance_pgdat`: kswapd reclaims `node` until a zone is above its high watermark.
pub fn balance_pgdat<P: Policy>(m: &mut Machine, p: &mut P, node: usize) -> u64 {
    let mut run = balance_pgdat_begin(m, node);
    while balance_pgdat_step(m, p, &mut run) {}
    balance_pgdat_end(m, p, run)
}

/// `trace_mm_vmscan_lru_shrink_inactive` of one `shrink_folio_list` pass: `nr_scanned` and
/// `nr_reclaimed` as the caller counted them, the pass's statistics (`sc.stat` less `before`).
#[cold]
pub fn trace_shrink_inactive(
    m: &mut Machine,
    sc: &ScanControl,
    before: &super::ReclaimStat,
    nr_scanned: u64,
    nr_reclaimed: u64,
    file: bool,
) {
    let (a, b) = (&sc.stat, before);
    m.trace(
        crate::mm::ftrace::Event::ShrinkInactive,
        format_args!(
            "nid=0 nr_scanned={nr_scanned} nr_reclaimed={nr_reclaimed} nr_dirty={} nr_writeback={} \
             nr_congested=0 nr_immediate={} nr_activate_anon={} nr_activate_file={} nr_ref_keep={} \
             nr_unmap_fail={} priority={} flags={}",
            a.nr_dirty - b.nr_dirty,
            a.nr_writeback - b.nr_writeback,
            a.nr_immediate - b.nr_immediate,
            a.nr_activate[0] - b.nr_activate[0],
            a.nr_activate[1] - b.nr_activate[1],
            a.nr_ref_keep - b.nr_ref_keep,
            a.nr_unmap_fail - b.nr_unmap_fail,
            sc.priority,
            crate::mm::ftrace::reclaim_flags(file)
        ),
    );
}

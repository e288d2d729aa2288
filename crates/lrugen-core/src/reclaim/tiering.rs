// SPDX-License-Identifier: GPL-2.0-only
//! Demotion and promotion between memory tiers: `can_demote` and `demote_folio_list`
//! (`mm/vmscan.c`), NUMA balancing in memory-tiering mode (`task_numa_work`'s scan that makes
//! PTEs PROT_NONE, `do_numa_page`'s hint fault, `should_numa_migrate_memory` with the hot
//! threshold and the promotion rate limit, `numa_promotion_adjust_threshold`, in
//! `kernel/sched/fair.c`), and `migrate_misplaced_folio` (`mm/migrate.c`). The tiers themselves
//! are [`crate::mm::tiers`]; docs/memory-tiers.md.
//!
//! Time: the kernel's clocks (jiffies, the access time kept in a folio) are the model's virtual
//! time (`Machine::now_ns`: the step clock, or the engine's), in ms.

use super::vmscan::{clear_isolated, mark_isolated};
use super::{AddCtx, Policy, Reclaimer, ScanControl, MAX_RECLAIM_RETRIES};
use crate::mm::folio::{pg, FolioId};
use crate::mm::memcg::ROOT_MEMCG;
use crate::mm::node::{WMARK_HIGH, WMARK_LOW, WMARK_MIN, WMARK_PROMO};
use crate::mm::vm::{pte, PTRS_PER_PTE};
use crate::mm::vmstat::Stat;
use crate::mm::Machine;

/// `NUMA_MIGRATION_ADJUST_STEPS`: the hot threshold moves by `2 * threshold / 16` per period.
const NUMA_MIGRATION_ADJUST_STEPS: u64 = 16;
/// `pgdat_free_space_enough`: at least 1 GiB free above the promo watermark (or 1/16 of the node).
const FREE_SPACE_ENOUGH_PAGES: u64 = (1 << 30) >> 12;

/// `can_demote`: demotion is enabled, the node has a lower tier, and this reclaim may demote
/// (`sc->no_demotion` is set by `reclaim_pages`). Without tiers, never.
#[inline]
pub fn can_demote(m: &Machine, node: usize, sc: &ScanControl) -> bool {
    match &m.tiers {
        None => false,
        Some(t) => !sc.no_demotion && t.can_demote(node),
    }
}

/// The `pgdemote_*` item of a reclaimer (`PGDEMOTE_KSWAPD + reclaimer_offset`): proactive
/// reclaim has its own where the profile's `proactive_reclaim_stats` says so.
pub fn demote_event(r: Reclaimer, proactive_stats: bool) -> Stat {
    match r {
        Reclaimer::Kswapd => Stat::PgdemoteKswapd,
        Reclaimer::Proactive if proactive_stats => Stat::PgdemoteProactive,
        Reclaimer::Direct | Reclaimer::Proactive => Stat::PgdemoteDirect,
    }
}

/// Wake kswapd on `node` from an allocation that does not reclaim (`GFP_NOWAIT`): under the
/// engine it starts as a task; without it, the synchronous model runs it when the operation
/// returns to user space ([`Machine::kswapd_pending`]), or sooner if an allocation enters the
/// slow path, since reclaim cannot run inside reclaim.
fn wake_kswapd_nowait(m: &mut Machine, node: usize) {
    let highest = m.nodes[node].zones.len() - 1;
    if m.nodes[node].kswapd_failures >= MAX_RECLAIM_RETRIES || super::vmscan::pgdat_balanced(m, node, highest) {
        return;
    }
    m.nodes[node].kswapd_woken = true;
    m.nodes[node].kswapd_highest_zoneidx = highest;
    m.kswapd_pending = true;
}

/// A frame on `node` only (`__GFP_THISNODE`) without direct reclaim: above the low watermark
/// at once, else (waking kswapd there) above the min watermark.
fn alloc_nowait(m: &mut Machine, node: usize) -> Option<FolioId> {
    for mark in [WMARK_LOW, WMARK_MIN] {
        for zi in (0..m.nodes[node].zones.len()).rev() {
            let w = m.nodes[node].zones[zi].wmark(mark);
            if m.zone_watermark_ok(node, zi, w) {
                return m.take_frame(node, zi);
            }
        }
        if mark == WMARK_LOW {
            wake_kswapd_nowait(m, node);
        }
    }
    None
}

/// Put a migrated folio (isolated) on its LRU list: `folio_add_lru(dst)`, through the per-CPU
/// batch.
fn putback_new<P: Policy>(m: &mut Machine, p: &mut P, id: FolioId) {
    clear_isolated(m, id);
    p.lru_add_prepare(m, id, AddCtx::default());
    if m.lru_add.push(id) >= p.folio_batch_size() || m.lru_cache_disabled {
        super::lru_add_drain(m, p);
    }
}

/// Migrate isolated folio `src` into `dst`, a frame just taken, and put the new folio on its
/// LRU list; counts `pgmigrate_success`.
fn migrate_to<P: Policy>(m: &mut Machine, p: &mut P, src: FolioId, dst: FolioId) {
    // folio_migrate_flags: the access time goes with the folio, unless it moves to a top tier
    let node = m.folios[dst].node();
    if let Some(t) = m.tiers.as_deref_mut() {
        if t.tiering() && !t.toptier[node] {
            let at = t.access_ms.get(src as usize).copied().unwrap_or(0);
            t.set_access_time(dst, at);
        }
    }
    m.move_folio(src, dst);
    m.count_vm_events(Stat::PgmigrateSuccess, 1);
    putback_new(m, p, dst);
}

/// `demote_folio_list`: migrate the isolated folios of `list` from `node` to its demotion
/// target (`alloc_demote_folio`: the preferred node only first, then any node of a lower tier,
/// nearest first, never reclaiming). Demoted folios leave `list`; the others stay in it.
/// Returns the number demoted.
pub fn demote_folio_list<P: Policy>(m: &mut Machine, p: &mut P, list: &mut Vec<FolioId>, node: usize) -> u64 {
    let Some(t) = &m.tiers else { return 0 };
    let Some(target) = t.demotion_target(node) else {
        return 0;
    };
    let lower = t.lower[node];
    let mut demoted = 0;
    let mut kept = 0;
    for i in 0..list.len() {
        let id = list[i];
        // a reference held by a per-CPU batch: `folio_ref_freeze` fails, migration too
        let dst = if m.lru_activate.holds(id) {
            None
        } else {
            alloc_nowait(m, target).or_else(|| {
                (0..m.nr_nodes())
                    .filter(|&n| n != target && lower & (1 << n) != 0)
                    .find_map(|n| alloc_nowait(m, n))
            })
        };
        match dst {
            Some(dst) => {
                migrate_to(m, p, id, dst);
                demoted += 1;
            }
            None => {
                list[kept] = id;
                kept += 1;
            }
        }
    }
    list.truncate(kept);
    demoted
}

/// The node a new anon page at `vpn` of `task` is first allocated on: its VMA's `mbind` policy
/// ([`crate::mm::vm::Vma::policy`]), else the experiment's placement
/// ([`crate::mm::tiers::TierConfig::placement`]), else the CPU's node.
pub fn fault_node(m: &Machine, task: u32, vpn: u32) -> usize {
    if m.nr_nodes() == 1 {
        return 0;
    }
    let mm = &m.mms[task as usize];
    let vma = mm.find_vma(vpn).map(|vi| &mm.vmas[vi]);
    if let Some(v) = vma.filter(|v| v.policy != crate::mm::vm::MPOL_DEFAULT) {
        return usize::from(v.policy);
    }
    let Some(t) = &m.tiers else { return 0 };
    match vma {
        Some(v) => t.place(v.start, v.end, vpn),
        None => t.cpu_node,
    }
}

/// The node the tasks run on (`numa_node_id()`): 0 without tiers.
#[inline]
pub fn local_node(m: &Machine) -> usize {
    m.tiers.as_ref().map_or(0, |t| t.cpu_node)
}

fn now_ms(m: &Machine) -> u64 {
    m.now_ns / 1_000_000
}

/// `task_scan_min`: the scan period of a task of `rss` resident pages, ms: the minimum period
/// (`scan_period_min_ms`) spread over the task's scan windows (its memory in `scan_size_mb`
/// pieces), but at least a window of the 2,560 MB/s `MAX_SCAN_WINDOW` rate.
pub fn task_scan_min(cfg: &crate::mm::tiers::TierConfig, rss: u64) -> u64 {
    const MAX_SCAN_WINDOW: u64 = 2560;
    let size = cfg.scan_size_mb.max(1);
    let windows = if size < MAX_SCAN_WINDOW {
        MAX_SCAN_WINDOW / size
    } else {
        1
    };
    let floor = 1000 / windows;
    let scan_pages = size << 8;
    let nr_windows = rss.max(1).div_ceil(scan_pages).max(1);
    floor.max(cfg.scan_period_ms / nr_windows)
}

/// `task_numa_work`, if `task`'s scan is due: from where its last scan stopped, make the PTEs of
/// up to `scan_size_mb` of its address space PROT_NONE (`change_prot_numa`; at most 8 times as
/// much address space covered), skipping what `folio_can_map_prot_numa` skips (in
/// memory-tiering mode only, top-tier folios; dirty file folios), and record the time in each
/// slow-tier folio (`folio_xchg_access_time`). Counts `numa_pte_updates`.
///
/// When the next scan comes follows `task_tick_numa` and the scan's own bookkeeping: the task's
/// period is [`task_scan_min`] of its memory at its first scan (`task_scan_start`; in
/// memory-tiering mode no fault statistics adapt it: `task_numa_fault` ignores faults on slow
/// memory, and fast memory is not scanned); each scan moves the task's `node_stamp` on by two
/// ticks and by 32 times the runtime it took ([`crate::mm::tiers::TierConfig::scan_pte_ns`] per
/// PTE updated), and the tick checks `runtime > node_stamp + period`: the next scan is at the
/// first tick (`HZ`) after `now + period + 2 ticks + 32 × cost`. The task's runtime is taken as
/// the machine's time (the task runs whenever the replay does).
#[cold]
pub fn task_numa_work(m: &mut Machine, task: u32) {
    let now = m.now_ns;
    let rss = {
        let mm = &m.mms[task as usize];
        mm.rss_anon + mm.rss_file
    };
    let Some(t) = m.tiers.as_deref_mut() else { return };
    if !t.tiering() {
        return;
    }
    let ti = task as usize;
    if t.scan.len() <= ti {
        t.scan.resize(ti + 1, Default::default());
    }
    let ms = 1_000_000u64;
    if t.scan[ti].next_ns == 0 {
        // the first tick of the task: its scans start after the scan delay
        t.scan[ti].next_ns = now + t.cfg.scan_delay_ms * ms;
    } else if now >= t.scan[ti].next_ns {
        if t.scan[ti].period_ns == 0 {
            t.scan[ti].period_ns = task_scan_min(&t.cfg, rss) * ms;
        }
        let pages = t.cfg.scan_size_mb << 8;
        let start = t.scan[ti].offset;
        let (off, updates) = change_prot_numa(m, task, start, pages);
        let t = m.tiers.as_deref_mut().expect("tiers");
        let s = &mut t.scan[ti];
        s.offset = off;
        let tick = 1_000_000_000 / crate::mm::HZ;
        let stamp = now + s.period_ns + 2 * tick + 32 * updates * t.cfg.scan_pte_ns;
        s.next_ns = (stamp / tick + 1) * tick;
    }
    // the earliest scan due among the live tasks seen so far (a task seen for the first time
    // is picked up when this one passes; a task that exited no longer counts)
    let t = m.tiers.as_deref().expect("tiers");
    let mms = &m.mms;
    m.numa_next_scan_ns = t
        .scan
        .iter()
        .enumerate()
        .filter(|&(i, s)| s.next_ns != 0 && mms.get(i).is_some_and(|mm| mm.alive))
        .map(|(_, s)| s.next_ns)
        .min()
        .unwrap_or(0);
}

/// The scan of [`task_numa_work`] from `start`; returns where the next one starts (0 past the
/// end of the address space) and the PTEs it made PROT_NONE.
fn change_prot_numa(m: &mut Machine, task: u32, start: u32, pages: u64) -> (u32, u64) {
    let now = now_ms(m) as u32;
    let mut budget = pages as i64;
    let mut virt = (pages * 8) as i64;
    let mut updates = 0u64;
    // count_memcg_events_mm: the mm's memcg counts them too
    let memcg = m.mms[task as usize].memcg;
    let nv = m.mms[task as usize].vmas.len();
    let first = m.mms[task as usize].vmas.partition_point(|v| v.end <= start);
    for vi in first..nv {
        let v = m.mms[task as usize].vmas[vi];
        let mut a = v.start.max(start);
        while a < v.end {
            if budget <= 0 || virt <= 0 {
                m.count_events(memcg, Stat::NumaPteUpdates, updates);
                return (a, updates);
            }
            // one PMD's worth of PTEs at a time (the kernel's range is HPAGE aligned)
            let end = ((a / PTRS_PER_PTE as u32 + 1) * PTRS_PER_PTE as u32).min(v.end);
            let mut chunk = 0;
            if m.mms[task as usize].pmd_index_checked(a).is_some() {
                for vpn in a..end {
                    let e = m.pte(task, vpn);
                    if e & pte::PRESENT == 0 || e & pte::PROTNONE != 0 {
                        continue;
                    }
                    let id = e & pte::PFN_MASK;
                    let f = m.folios[id];
                    let t = m.tiers.as_deref_mut().expect("tiers");
                    if t.toptier[f.node()] || (f.is_file_lru() && f.test(pg::DIRTY)) {
                        continue;
                    }
                    t.set_access_time(id, now);
                    *m.pte_mut(task, vpn) = e | pte::PROTNONE;
                    chunk += 1;
                }
            }
            updates += chunk;
            let len = i64::from(end - a);
            if chunk > 0 {
                budget -= len;
            }
            virt -= len;
            a = end;
        }
    }
    m.count_events(memcg, Stat::NumaPteUpdates, updates);
    (0, updates)
}

/// `pgdat_free_space_enough`: a zone of `node` has 1 GiB (or 1/16 of the node) free above its
/// promo watermark, and its `lowmem_reserve` against `ZONE_MOVABLE` (`zone_watermark_ok`).
fn free_space_enough(m: &Machine, node: usize) -> bool {
    let n = &m.nodes[node];
    let enough = FREE_SPACE_ENOUGH_PAGES.max(n.managed() >> 4);
    (0..n.zones.len())
        .rev()
        .any(|zi| n.zones[zi].managed > 0 && m.zone_watermark_ok(node, zi, n.zones[zi].wmark(WMARK_PROMO) + enough))
}

/// `migrate_balanced_pgdat`: a zone of `node` stays above its high watermark, and its
/// `lowmem_reserve` against `ZONE_MOVABLE` (`zone_watermark_ok` of classzone `ZONE_MOVABLE`:
/// a DMA zone drained down to its reserve does not count), after taking `nr` pages.
fn migrate_balanced(m: &Machine, node: usize, nr: u64) -> bool {
    let n = &m.nodes[node];
    (0..n.zones.len())
        .rev()
        .any(|zi| n.zones[zi].managed > 0 && m.zone_watermark_ok(node, zi, n.zones[zi].wmark(WMARK_HIGH) + nr))
}

/// `should_numa_migrate_memory` in memory-tiering mode for a folio `id` on a slow node, to
/// `dst` (a top-tier node): yes when `dst` has plenty of free memory; otherwise only if the
/// hint-fault latency (now minus the time the scan made it PROT_NONE) is under the hot
/// threshold (adjusted every `scan_period_max_ms` so that candidates match the rate limit) and
/// the candidates of the last second on `dst` stay under the promotion rate limit. Counts
/// `pgpromote_candidate` for every folio that passes the threshold.
fn should_promote(m: &mut Machine, id: FolioId, dst: usize) -> bool {
    if free_space_enough(m, dst) {
        m.tiers.as_deref_mut().expect("tiers").promo[dst].threshold = 0;
        return true;
    }
    let now = now_ms(m);
    let t = m.tiers.as_deref_mut().expect("tiers");
    let def_th = t.cfg.hot_threshold_ms;
    let rate_limit = t.cfg.promote_rate_limit_mbps << 8;
    // numa_promotion_adjust_threshold
    let period = t.cfg.scan_period_max_ms;
    let st = &mut t.promo[dst];
    if now.saturating_sub(st.th_start) > period {
        st.th_start = now;
        let ref_cand = rate_limit * period / 1000;
        let diff_cand = st.nr_cand - st.th_nr_cand;
        let unit_th = def_th * 2 / NUMA_MIGRATION_ADJUST_STEPS;
        let mut th = if st.threshold != 0 { st.threshold } else { def_th };
        if diff_cand > ref_cand * 11 / 10 {
            th = th.saturating_sub(unit_th).max(unit_th);
        } else if diff_cand < ref_cand * 9 / 10 {
            th = (th + unit_th).min(def_th * 2);
        }
        st.th_nr_cand = st.nr_cand;
        st.threshold = th;
    }
    let th = if st.threshold != 0 { st.threshold } else { def_th };
    // numa_hint_fault_latency: the access time is kept in ms, modulo 2^32 here
    let at = t.access_ms.get(id as usize).copied().unwrap_or(0);
    let latency = u64::from((now as u32).wrapping_sub(at));
    if latency >= th {
        return false;
    }
    // numa_promotion_rate_limit
    st.nr_cand += 1;
    let nr_cand = st.nr_cand;
    if now.saturating_sub(st.rl_start) > 1000 {
        st.rl_start = now;
        st.rl_nr_cand = nr_cand;
    }
    let limited = nr_cand - st.rl_nr_cand >= rate_limit;
    m.mod_node_state(ROOT_MEMCG, dst, Stat::PgpromoteCandidate, 1);
    !limited
}

/// `do_numa_page`: the hint fault of a load or store at `vpn` whose PTE the scan made
/// PROT_NONE. The PTE is made accessible again (young, dirty on a store); `numa_hint_faults`
/// (and `_local` when the folio is on the CPU's node) counted; a slow-tier folio that
/// `should_promote` lets through is migrated to the CPU's node (`migrate_misplaced_folio`)
/// if that node stays above its high watermark, counting `numa_pages_migrated` and
/// `pgpromote_success`; if it does not, kswapd is woken there to make room (it then balances
/// to the promo watermark) and the folio stays where it is.
#[cold]
pub fn do_numa_page<P: Policy>(m: &mut Machine, p: &mut P, task: u32, vpn: u32, write: bool) {
    let e = m.pte(task, vpn);
    debug_assert!(e & pte::PRESENT != 0 && e & pte::PROTNONE != 0);
    *m.pte_mut(task, vpn) = (e & !pte::PROTNONE) | pte::YOUNG | if write { pte::DIRTY } else { 0 };
    let id = e & pte::PFN_MASK;
    let Some(t) = m.tiers.as_deref() else { return };
    let (node, dst, memcg) = (m.folios[id].node(), t.cpu_node, m.folios[id].memcg);
    let toptier = t.toptier[node];
    m.count_events(memcg, Stat::NumaHintFaults, 1);
    if node == dst {
        m.count_vm_events(Stat::NumaHintFaultsLocal, 1);
    }
    if toptier || node == dst || !should_promote(m, id, dst) {
        return;
    }
    // migrate_misplaced_folio_prepare
    if m.folios[id].is_file_lru() && m.folios[id].test(pg::DIRTY) {
        return;
    }
    if !migrate_balanced(m, dst, 1) {
        super::alloc::wakeup_kswapd(m, p, dst);
        return;
    }
    // folio_isolate_lru: not while it waits in a per-CPU batch
    if !m.folios[id].test(pg::LRU) || m.lru_activate.holds(id) {
        return;
    }
    p.isolate_folio(m, id);
    mark_isolated(m, id);
    let Some(new) = alloc_nowait(m, dst) else {
        clear_isolated(m, id);
        p.add_folio(m, id);
        return;
    };
    migrate_to(m, p, id, new);
    m.count_events(memcg, Stat::NumaPagesMigrated, 1);
    m.mod_lruvec_state(memcg, dst, Stat::PgpromoteSuccess, 1);
}

/// An anonymous VMA of a live address space and its resident pages on each node: a line of
/// `/proc/PID/numa_maps` (`N0=… N1=…`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct VmaNodes {
    /// The address space.
    pub mm: u32,
    /// First virtual page.
    pub start: u32,
    /// One past the last.
    pub end: u32,
    /// Resident pages per node.
    pub nodes: Vec<u64>,
}

/// [`VmaNodes`] of every anonymous VMA of every live address space, in address order.
pub fn vma_nodes(m: &Machine) -> Vec<VmaNodes> {
    let mut out = Vec::new();
    for mm in m.mms.iter().filter(|mm| mm.alive) {
        for v in mm.vmas.iter().filter(|v| v.is_anon()) {
            let mut nodes = vec![0; m.nr_nodes()];
            for vpn in v.start..v.end {
                if mm.pmd_index_checked(vpn).is_none() {
                    continue;
                }
                let e = m.pte(mm.id, vpn);
                if e & pte::PRESENT != 0 && e & pte::ZERO == 0 {
                    nodes[m.folios[e & pte::PFN_MASK].node()] += 1;
                }
            }
            out.push(VmaNodes {
                mm: mm.id,
                start: v.start,
                end: v.end,
                nodes,
            });
        }
    }
    out
}

/// The pages of every address space's ranges that the placement puts on a lower tier
/// ([`crate::mm::tiers::TierConfig::placement`] rules naming a node that is not top-tier) that
/// are now resident on a top-tier node: for an experiment that starts its hot pages on the slow
/// node, the hot pages promoted so far. `None` without such a rule.
pub fn slow_placed_on_top(m: &Machine) -> Option<u64> {
    let t = m.tiers.as_deref()?;
    let rules: Vec<_> = t.cfg.placement.iter().filter(|r| !t.toptier[r.node]).collect();
    if rules.is_empty() {
        return None;
    }
    let mut n = 0;
    for mm in m.mms.iter().filter(|mm| mm.alive) {
        for v in &mm.vmas {
            for vpn in v.start..v.end {
                if rules.iter().all(|r| t.place(v.start, v.end, vpn) != r.node) {
                    continue;
                }
                if mm.pmd_index_checked(vpn).is_none() {
                    continue;
                }
                let e = m.pte(mm.id, vpn);
                if e & pte::PRESENT != 0 && t.toptier[m.folios[e & pte::PFN_MASK].node()] {
                    n += 1;
                }
            }
        }
    }
    Some(n)
}

// SPDX-License-Identifier: GPL-2.0-only
//! Getting a page: the allocator's fast and slow paths, memcg charging with limit reclaim, and the
//! OOM killer (`mm/page_alloc.c`, `mm/memcontrol.c`, `mm/oom_kill.c`).
//!
//! Without the virtual-time engine, kswapd runs synchronously when woken (it reclaims the node to
//! its high watermark before the allocation retries), which models a kswapd that keeps up. Under the
//! engine ([`Machine::kswapd_async`]), waking kswapd only marks the node, and the engine runs
//! `balance_pgdat` as a task of its own on a CPU, concurrently with the tasks, which meanwhile
//! allocate down to the min watermark and then reclaim directly, as on a real machine.

use super::vmscan::{self, balance_pgdat, pgdat_balanced, try_to_free_mem_cgroup_pages, try_to_free_pages, GfpZone};
use super::{Policy, MAX_RECLAIM_RETRIES};
use crate::mm::folio::{pg, FolioId};
use crate::mm::memcg::{MemcgId, OverLimit};
use crate::mm::node::{WMARK_HIGH, WMARK_LOW, WMARK_MIN};
use crate::mm::vm::{pmd_is_table, pte, vmf, MmStruct, Vma, PMD_NONE, PMD_YOUNG, PTRS_PER_PTE};
use crate::mm::vmstat::Stat;
use crate::mm::Machine;

/// Why memory could not be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// The node is out of memory and the OOM killer found nothing to kill.
    NoMemory,
    /// The memcg is at its limit and its OOM killer found nothing to kill.
    MemcgOom(MemcgId),
}

impl std::fmt::Display for AllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AllocError::NoMemory => write!(f, "out of memory: no reclaimable page and no process to kill"),
            AllocError::MemcgOom(m) => write!(f, "memcg {m} out of memory: no reclaimable page and no process to kill"),
        }
    }
}

/// `get_page_from_freelist`'s zone: the first, in the zonelist's order (nodes from the
/// preferred one, each node's zones from the highest `gfp` allows down), above watermark `mark`.
/// A zone found at or below its high watermark on the way is marked `ZONE_BELOW_HIGH` (its
/// per-CPU list then shrinks as pages are freed, [`crate::mm::node::Pcp`]); one above it is
/// taken at once, as the kernel does before it checks `mark`.
fn zone_above(m: &mut Machine, nodes: vmscan::NodeOrder, mark: usize, gfp: GfpZone) -> Option<(usize, usize)> {
    for n in nodes.iter() {
        for zi in (0..=gfp.highest_zone(m, n)).rev() {
            if m.nodes[n].zones[zi].pcp.on && !m.nodes[n].zones[zi].below_high {
                let high = m.nodes[n].zones[zi].wmark(WMARK_HIGH);
                if m.zone_watermark_ok(n, zi, high) {
                    return Some((n, zi));
                }
                m.nodes[n].zones[zi].below_high = true;
            }
            let w = m.nodes[n].zones[zi].wmark(mark);
            if m.zone_watermark_ok(n, zi, w) {
                return Some((n, zi));
            }
        }
    }
    None
}

/// `drain_all_pages`: the per-CPU lists of every zone back to the buddy allocator (direct
/// reclaim's allocation that still fails after reclaim, `__alloc_pages_direct_reclaim`).
/// Returns the pages drained.
fn drain_all_pages(m: &mut Machine) -> u64 {
    m.nodes
        .iter_mut()
        .flat_map(|n| n.zones.iter_mut())
        .map(|z| z.drain_pcp())
        .sum()
}

/// `decay_pcp_high` of every zone's per-CPU list once per [`PCP_DECAY_NS`] of virtual time
/// (`vmstat_update`'s period, `sysctl_stat_interval`), seen at the next allocation.
#[cold]
fn decay_pcp_lists(m: &mut Machine) {
    for z in m.nodes.iter_mut().flat_map(|n| n.zones.iter_mut()) {
        z.decay_pcp_high();
    }
    m.pcp_decay_due_ns = m.now_ns + PCP_DECAY_NS;
}

/// `sysctl_stat_interval` (`HZ`): how often `vmstat_update` decays the per-CPU lists, ns.
pub const PCP_DECAY_NS: u64 = 1_000_000_000;

/// `wakeup_kswapd`: wake kswapd on `node` unless it is balanced or has failed too often; it runs
/// here and now unless the engine runs it as a task ([`Machine::kswapd_async`]). A wakeup during
/// kswapd's short sleep counts `kswapd_low_wmark_hit_quickly`
/// ([`crate::mm::MachineConfig::kswapd_sleep`]).
pub fn wakeup_kswapd<P: Policy>(m: &mut Machine, p: &mut P, node: usize) {
    let highest = m.nodes[node].zones.len() - 1;
    if m.nodes[node].kswapd_failures >= MAX_RECLAIM_RETRIES || pgdat_balanced(m, node, highest) {
        return;
    }
    if let Some(until) = m.nodes[node].kswapd_short_sleep_until.take() {
        if m.now_ns < until {
            m.count_vm_events(Stat::KswapdLowWmarkHitQuickly, 1);
        }
    }
    m.nodes[node].kswapd_woken = true;
    m.nodes[node].kswapd_highest_zoneidx = highest;
    if m.cfg.kswapd && !m.kswapd_async && !kswapd_deferred(m) {
        kswapd_run(m, p, node);
    }
}

/// With [`crate::mm::MachineConfig::sched_slice_ns`] and the profile's `eevdf_run_to_parity`
/// ([`Machine::kswapd_wait_slice_ns`]): a kswapd woken now waits for the running task's slice to
/// end ([`Machine::kswapd_due_ns`]; it runs at the start of the first operation past that
/// time, or when one that waited for a read returns to user space).
fn kswapd_deferred(m: &mut Machine) -> bool {
    let slice = m.kswapd_wait_slice_ns;
    if slice == 0 {
        return false;
    }
    let due = m.task_picked_ns.saturating_add(slice);
    if m.now_ns >= due {
        return false;
    }
    m.kswapd_due_ns = Some(m.kswapd_due_ns.map_or(due, |d| d.min(due)));
    m.kswapd_pending = true;
    true
}

/// Virtual time of kswapd's short sleep in `kswapd_try_to_sleep` (`HZ/10`), ns.
pub const KSWAPD_SHORT_SLEEP_NS: u64 = 100_000_000;

/// kswapd, run here and now: `balance_pgdat`, then `kswapd_try_to_sleep`
/// ([`crate::mm::MachineConfig::kswapd_sleep`]): a node left balanced (or hopeless) puts it into
/// its short sleep; one left below its high watermark counts `kswapd_high_wmark_hit_quickly` and
/// kswapd runs again, up to [`MAX_RECLAIM_RETRIES`] runs in a row (the kernel's kswapd would go
/// on while the tasks run; inline, a node that reclaim cannot balance, as when zram's pool grows
/// by more than swapping out frees, must give the task back its turn).
fn kswapd_run<P: Policy>(m: &mut Machine, p: &mut P, node: usize) {
    m.kswapd_due_ns = None;
    for _ in 0..=MAX_RECLAIM_RETRIES {
        balance_pgdat(m, p, node);
        // the kswapds that reclaim without waiting woke meanwhile (demotion's allocations on
        // a lower tier, `reclaim::tiering`) run now, in node order
        if m.tiers.is_some() {
            for n in 0..m.nr_nodes() {
                if n != node && m.nodes[n].kswapd_woken {
                    balance_pgdat(m, p, n);
                }
            }
        }
        // kswapd ran on the CPU: switching back marks the current task's mm used again, and
        // the task starts a new slice
        if let Some(t) = m.current_task {
            m.lru_gen_use_mm(t, "kswapd_ran");
        }
        m.task_picked_ns = m.now_ns;
        if !m.cfg.kswapd_sleep {
            return;
        }
        if kswapd_may_sleep(m, node) {
            m.nodes[node].kswapd_short_sleep_until = Some(m.now_ns + KSWAPD_SHORT_SLEEP_NS);
            return;
        }
        m.count_vm_events(Stat::KswapdHighWmarkHitQuickly, 1);
        let highest = m.nodes[node].zones.len() - 1;
        m.nodes[node].kswapd_woken = true;
        m.nodes[node].kswapd_highest_zoneidx = highest;
    }
    m.nodes[node].kswapd_woken = false;
}

/// `prepare_kswapd_sleep`: the node is hopeless (left to direct reclaim) or balanced.
fn kswapd_may_sleep(m: &Machine, node: usize) -> bool {
    let highest = m.nodes[node].zones.len() - 1;
    m.nodes[node].kswapd_failures >= MAX_RECLAIM_RETRIES || pgdat_balanced(m, node, highest)
}

/// Run the kswapds woken where reclaim could not run ([`Machine::kswapd_pending`]), in node
/// order, unless the engine runs kswapd as a task of its own.
#[cold]
pub fn run_pending_kswapd<P: Policy>(m: &mut Machine, p: &mut P) {
    if let Some(due) = m.kswapd_due_ns {
        if m.now_ns < due && !m.io_waited {
            // the task's slice goes on
            return;
        }
    }
    m.kswapd_pending = false;
    m.kswapd_due_ns = None;
    if !m.cfg.kswapd || m.kswapd_async {
        return;
    }
    for node in 0..m.nodes.len() {
        if m.nodes[node].kswapd_woken {
            kswapd_run(m, p, node);
        }
    }
}

/// The end of kswapd's short sleeps that are over by now (seen at the next allocation): a node
/// below its high watermark again counts `kswapd_high_wmark_hit_quickly` and kswapd reclaims; a
/// balanced one sends kswapd to sleep until woken.
#[cold]
fn kswapd_short_sleeps_end<P: Policy>(m: &mut Machine, p: &mut P) {
    for node in 0..m.nodes.len() {
        if m.nodes[node].kswapd_short_sleep_until.is_some_and(|t| m.now_ns >= t) {
            m.nodes[node].kswapd_short_sleep_until = None;
            if !kswapd_may_sleep(m, node) {
                m.count_vm_events(Stat::KswapdHighWmarkHitQuickly, 1);
                let highest = m.nodes[node].zones.len() - 1;
                m.nodes[node].kswapd_woken = true;
                m.nodes[node].kswapd_highest_zoneidx = highest;
                if m.cfg.kswapd && !m.kswapd_async && !kswapd_deferred(m) {
                    kswapd_run(m, p, node);
                }
            }
        }
    }
}

/// `__alloc_pages`: an order-0 frame of user memory (`GFP_HIGHUSER_MOVABLE`), preferably on
/// `node`. Runs kswapd, direct reclaim and the global OOM killer as the kernel does.
pub fn alloc_frame<P: Policy>(m: &mut Machine, p: &mut P, node: usize) -> Result<FolioId, AllocError> {
    let (n, zi) = alloc_zone(m, p, node, GfpZone::Movable)?;
    m.take_frame(n, zi).ok_or(AllocError::NoMemory)
}

/// An order-0 `GFP_USER` page allocated and freed at once, as `mincore()` takes and frees its
/// buffer on every call ([`crate::workload::Step::alloc_page_first`]): the allocator's paths
/// of [`alloc_frame`] (kswapd woken below the low watermark, direct reclaim below the min one,
/// counted in `allocstall_normal`), `pgalloc_*` and `pgfree` counted, and no frame kept (the
/// free list is left as it was).
pub fn alloc_user_page_and_free<P: Policy>(m: &mut Machine, p: &mut P, node: usize) -> Result<(), AllocError> {
    let (n, zi) = alloc_zone(m, p, node, GfpZone::Normal)?;
    match m.nodes[n].zones[zi].pcp_take_and_give() {
        None => return Err(AllocError::NoMemory),
        Some(true) => m.zone_above_high_again(n),
        Some(false) => {}
    }
    let kind = m.nodes[n].zones[zi].kind;
    m.count_vm_events(crate::mm::pgalloc_stat(kind), 1);
    m.count_vm_events(Stat::Pgfree, 1);
    Ok(())
}

/// `__alloc_pages` of an order-0 page up to `gfp`'s zone, preferably on `node`: the zone that
/// gives it, after kswapd, direct reclaim and the global OOM killer as the kernel runs them.
fn alloc_zone<P: Policy>(m: &mut Machine, p: &mut P, node: usize, gfp: GfpZone) -> Result<(usize, usize), AllocError> {
    if m.cfg.kswapd_sleep && !m.kswapd_async {
        kswapd_short_sleeps_end(m, p);
    }
    if m.now_ns >= m.pcp_decay_due_ns {
        decay_pcp_lists(m);
    }
    let nodes = vmscan::node_order(m, node);
    if let Some(z) = zone_above(m, nodes, WMARK_LOW, gfp) {
        return Ok(z);
    }
    // slow path
    for n in nodes.iter() {
        wakeup_kswapd(m, p, n);
    }
    if let Some(z) = zone_above(m, nodes, WMARK_MIN, gfp) {
        return Ok(z);
    }
    let mut no_progress = 0;
    loop {
        let progress = try_to_free_pages(m, p, node, gfp) > 0;
        if let Some(z) = zone_above(m, nodes, WMARK_MIN, gfp) {
            return Ok(z);
        }
        // pages held on the per-CPU lists: drain them and try once more
        if progress && drain_all_pages(m) > 0 {
            if let Some(z) = zone_above(m, nodes, WMARK_MIN, gfp) {
                return Ok(z);
            }
        }
        if progress {
            no_progress = 0;
        } else {
            no_progress += 1;
        }
        if no_progress > MAX_RECLAIM_RETRIES {
            if out_of_memory(m, p, None) {
                no_progress = 0;
                continue;
            }
            // No victim: dip into the reserves as a last resort, then fail.
            return zone_with_any(m, nodes, gfp).ok_or(AllocError::NoMemory);
        }
    }
}

/// The first zone, in the zonelist's order, with a free page at all.
fn zone_with_any(m: &Machine, nodes: vmscan::NodeOrder, gfp: GfpZone) -> Option<(usize, usize)> {
    for n in nodes.iter() {
        for zi in (0..=gfp.highest_zone(m, n)).rev() {
            if m.nodes[n].zones[zi].free_frames() > 0 {
                return Some((n, zi));
            }
        }
    }
    None
}

/// `try_charge_memcg`: charge folio `id` to `memcg`, reclaiming from the memcg over its limit and
/// invoking the memcg OOM killer after `MAX_RECLAIM_RETRIES` fruitless attempts. Pages over
/// `memory.high` are added to `over_high` for reclaim on return to user space.
pub fn charge<P: Policy>(
    m: &mut Machine,
    p: &mut P,
    id: FolioId,
    memcg: MemcgId,
    over_high: &mut u64,
) -> Result<(), AllocError> {
    let mut retries = MAX_RECLAIM_RETRIES;
    let mut drained = false;
    let mut first = true;
    loop {
        // after the first try fails, `try_charge_memcg`'s batch is the page itself
        let r = if first {
            m.memcgs.charge_pages(m.cpu, memcg, 1)
        } else {
            m.memcgs.charge_pages_retry(m.cpu, memcg, 1)
        };
        first = false;
        match r {
            Ok(()) => {
                m.folios[id].memcg = memcg;
                m.folios[id].set(pg::CHARGED);
                if !m.memcgs.over_high(memcg).is_empty() {
                    *over_high += 1;
                }
                return Ok(());
            }
            Err(OverLimit(over)) => {
                m.memcgs[over].events.max += 1;
                let reclaimed = try_to_free_mem_cgroup_pages(m, p, over, 1, true);
                if m.memcgs.margin(over) >= 1 {
                    continue;
                }
                // no room made: the CPUs' charge stocks go back first (`drain_all_stock`)
                if m.memcgs.drain_all_stock_once(over, &mut drained) {
                    continue;
                }
                if reclaimed > 0 {
                    continue;
                }
                if retries > 0 {
                    retries -= 1;
                    continue;
                }
                m.memcgs[over].events.oom += 1;
                if out_of_memory(m, p, Some(over)) {
                    retries = MAX_RECLAIM_RETRIES;
                    continue;
                }
                return Err(AllocError::MemcgOom(over));
            }
        }
    }
}

/// The reclaim `try_charge_memcg` does for a PMD-sized folio charged with `GFP_TRANSHUGE` (a
/// `MADV_HUGEPAGE` VMA's fault under `defrag` `madvise`, the default; `vma_thp_gfp_mask` leaves
/// `__GFP_NORETRY` out for it): while the charge of 512 pages to `memcg` would fail, reclaim 512
/// pages from the memcg over its limit (`try_to_free_mem_cgroup_pages`, swapping allowed),
/// counting a `max` event each time, up to `MAX_RECLAIM_RETRIES` + 1 times; no retry after a
/// reclaim that made progress but too little room (only orders up to `PAGE_ALLOC_COSTLY_ORDER`
/// get that) and no OOM kill (`mem_cgroup_oom` skips a costly order): the charge then fails and
/// the fault falls back to order 0 ([`crate::mm::thp::alloc_anon_thp`] charges, or counts
/// `thp_fault_fallback_charge`). A reclaim that left too little room drains the CPUs' charge
/// stocks once before the next try (`drain_all_stock`). The same in 6.1, 6.12 and 7.2. Without
/// `MADV_HUGEPAGE` (`GFP_TRANSHUGE_LIGHT`) the charge cannot block: nothing is reclaimed or
/// drained. Not modelled: the allocation's own direct reclaim and compaction (the model's zones
/// hand out free 2 MiB blocks or none).
pub fn reclaim_for_thp_charge<P: Policy>(m: &mut Machine, p: &mut P, memcg: MemcgId) {
    let nr = u64::from(crate::mm::thp::HPAGE_PMD_NR);
    let mut retries = MAX_RECLAIM_RETRIES;
    let mut drained = false;
    loop {
        let over = match m.memcgs.try_charge(memcg, nr) {
            Ok(()) => {
                m.memcgs.uncharge(memcg, nr);
                return;
            }
            Err(OverLimit(over)) => over,
        };
        m.memcgs[over].events.max += 1;
        try_to_free_mem_cgroup_pages(m, p, over, nr, true);
        if m.memcgs.margin(over) >= nr {
            continue;
        }
        if m.memcgs.drain_all_stock_once(over, &mut drained) {
            continue;
        }
        if retries == 0 {
            return;
        }
        retries -= 1;
    }
}

/// Reclaim what kernel memory ([`crate::mm::KmemConfig`]) charged over a `memory.max`: the
/// kernel's `__GFP_ACCOUNT` allocations go through `try_charge_memcg` and reclaim from the memcg
/// at its limit before they charge, OOM-killing in it when reclaim cannot make room. The model
/// charges those objects where it allocates them, with no policy at hand, and calls this at the
/// end of the operation ([`Machine::kmem_over`]); a page charge in between reclaims the excess
/// on its own ([`charge`]).
#[cold]
pub fn reclaim_kmem_excess<P: Policy>(m: &mut Machine, p: &mut P) {
    m.kmem_over = false;
    for c in 0..m.memcgs.len() as MemcgId {
        let mut retries = MAX_RECLAIM_RETRIES;
        loop {
            let mc = &m.memcgs[c];
            let excess = mc.usage.saturating_sub(mc.max);
            if excess == 0 {
                break;
            }
            // pages in the CPUs' stocks are charged and unused: the forced charge would have
            // taken them first (`consume_stock`), so they go back before anything is reclaimed
            if m.memcgs.subtree(c).iter().any(|&d| m.memcgs.stocked(d) > 0) {
                m.memcgs.drain_all_stock(c);
                continue;
            }
            m.memcgs[c].events.max += 1;
            if try_to_free_mem_cgroup_pages(m, p, c, excess, true) > 0 {
                continue;
            }
            if retries > 0 {
                retries -= 1;
                continue;
            }
            m.memcgs[c].events.oom += 1;
            if !out_of_memory(m, p, Some(c)) {
                // Nothing left to kill: the allocation would have failed; its charge stays.
                break;
            }
            retries = MAX_RECLAIM_RETRIES;
        }
    }
}

/// `mem_cgroup_handle_over_high` → `reclaim_high`: reclaim from every memcg above `memory.high`
/// on the way up from `memcg`, `nr` pages each (at least `SWAP_CLUSTER_MAX`).
pub fn reclaim_high<P: Policy>(m: &mut Machine, p: &mut P, memcg: MemcgId, nr: u64) {
    for over in m.memcgs.over_high(memcg) {
        if m.memcgs[over].parent.is_none() {
            continue;
        }
        m.memcgs[over].events.high += 1;
        try_to_free_mem_cgroup_pages(m, p, over, nr, true);
    }
}

/// `out_of_memory`: kill the process with the highest badness (resident pages plus swap entries
/// plus page tables) in the memcg subtree, or anywhere for global OOM. Returns whether one died.
pub fn out_of_memory<P: Policy>(m: &mut Machine, p: &mut P, memcg: Option<MemcgId>) -> bool {
    let mut chosen: Option<(u32, u64)> = None;
    for mm in &m.mms {
        if !mm.alive {
            continue;
        }
        if let Some(t) = memcg {
            if !m.memcgs.is_descendant(mm.memcg, t) {
                continue;
            }
        }
        let tables = mm.pmds.iter().filter(|&&x| pmd_is_table(x)).count() as u64;
        let points = mm.rss_anon + mm.rss_file + mm.swap_ents + tables;
        if chosen.is_none_or(|(_, best)| points > best) {
            chosen = Some((mm.id, points));
        }
    }
    let Some((victim, _)) = chosen else {
        return false;
    };
    let vm = m.mms[victim as usize].memcg;
    m.count_vm_events(Stat::OomKill, 1);
    m.memcgs[vm].events.oom_kill += 1;
    release_mm(m, p, victim);
    true
}

/// `exit_mmap`: tear down an address space: unmap every page, free anon folios no longer mapped,
/// drop swap entries, free the page tables, leave the anon family and the files' mappings.
pub fn release_mm<P: Policy>(m: &mut Machine, p: &mut P, mm: u32) {
    for vi in 0..m.mms[mm as usize].vmas.len() {
        let v = m.mms[mm as usize].vmas[vi];
        zap_range(m, p, mm, &v, v.start, v.end);
    }
    let mmr = &mut m.mms[mm as usize];
    let tables: Vec<u32> = mmr
        .pmds
        .iter()
        .filter(|&&x| pmd_is_table(x))
        .map(|&x| x & !PMD_YOUNG)
        .collect();
    mmr.pmds.iter_mut().for_each(|x| *x = PMD_NONE);
    mmr.alive = false;
    let root = mmr.anon_root;
    let nr = tables.len() as i64;
    for t in tables {
        m.ptes.free(t);
    }
    m.pte_table_kmem(mm, -nr);
    m.mm_kmem(mm, -1);
    m.mms[root as usize].anon_family.retain(|&x| x != mm);
    for f in m.files.iter_mut() {
        f.mappings.retain(|&(x, _)| x != mm);
    }
}

/// `zap_pte_range` over `[start, end)` of VMA `vma` of `mm`: anon folios lose this mapping (and
/// are freed when nobody maps them and no swap entry still needs them), file folios are unmapped
/// (a dirty PTE dirties the folio; a young one marks it accessed if the VMA has recency, or in
/// 6.1 if it is not `VM_SEQ_READ`), swap
/// entries release their slot reference, zero-page PTEs are cleared. PTE tables stay.
pub fn zap_range<P: Policy>(m: &mut Machine, p: &mut P, mm: u32, vma: &Vma, start: u32, end: u32) {
    if start >= end {
        return;
    }
    let base = crate::mm::vm::MMAP_BASE_VPN;
    let (first, last) = (MmStruct::pmd_index(start), MmStruct::pmd_index(end - 1));
    for pi in first..=last {
        let mut pmd = m.mms[mm as usize].pmds[pi];
        let tbase = base + (pi * PTRS_PER_PTE) as u32;
        if !pmd_is_table(pmd) {
            if pmd == PMD_NONE {
                continue;
            }
            // zap_pmd_range on a huge PMD: the whole 2 MiB goes at once (zap_huge_pmd), part of
            // it splits the PMD first (and in the model the folio)
            if start <= tbase && end >= tbase + PTRS_PER_PTE as u32 {
                let head = m.unmap_huge_pmd(mm, tbase);
                if m.folios[head].mapcount == 0 && !m.folios[head].test(pg::ISOLATED) {
                    free_anon_folio(m, p, head);
                }
                continue;
            }
            if !super::huge_memory::split_huge_pmd(m, p, mm, tbase) {
                continue;
            }
            pmd = m.mms[mm as usize].pmds[pi];
        }
        let table = pmd & !PMD_YOUNG;
        for vpn in start.max(tbase)..end.min(tbase + PTRS_PER_PTE as u32) {
            let i = (vpn - tbase) as usize;
            let e = m.ptes.table(table)[i];
            if e & pte::PRESENT != 0 {
                let id = e & pte::PFN_MASK;
                if m.folios[id].is_anon() {
                    m.ptes.table_mut(table)[i] = pte::NONE;
                    m.mms[mm as usize].rss_anon -= 1;
                    drop_anon_mapping(m, p, id);
                } else {
                    m.unmap_one(id, mm, vpn);
                    // zap_present_folio_ptes: what the task used stays warm (6.1: unless the
                    // VMA is VM_SEQ_READ; `vma_has_recency`: unless it has no recency)
                    let recency = if p.switches().vma_has_recency {
                        vma.has_recency()
                    } else {
                        vma.flags & vmf::SEQ_READ == 0
                    };
                    if e & pte::YOUNG != 0 && recency {
                        p.mark_accessed(m, id);
                    }
                    if vma.flags & vmf::LOCKED != 0 && m.folios[id].mapcount == 0 {
                        munlock_folio(m, p, id);
                    }
                }
            } else if e & pte::SWAP != 0 {
                m.ptes.table_mut(table)[i] = pte::NONE;
                m.mms[mm as usize].swap_ents -= 1;
                put_swap_entry(m, p, e & pte::PFN_MASK);
            } else if e & pte::ZERO != 0 {
                m.ptes.table_mut(table)[i] = pte::NONE;
            }
        }
    }
}

/// An anon folio lost one mapping (its PTE and the mm's rss already updated by the caller). When
/// the last mapping goes, `NR_ANON_PAGES` drops and the folio is freed
/// (`free_pages_and_swap_cache`), unless it is in the swap cache and a swap entry still refers to
/// its slot: then it stays cached on its LRU list for that entry's owner to fault in.
pub fn drop_anon_mapping<P: Policy>(m: &mut Machine, p: &mut P, id: FolioId) {
    let f = &mut m.folios[id];
    f.mapcount -= 1;
    if f.mapcount > 0 {
        return;
    }
    let (mc, n) = (f.memcg, f.node());
    m.mod_lruvec_state(mc, n, Stat::NrAnonPages, -1);
    let f = m.folios[id];
    if f.test(pg::SWAPCACHE) && m.swap.count(f.swap_slot()) > 0 {
        return;
    }
    free_anon_folio(m, p, id);
}

/// `munlock_folio` of a folio whose last `VM_LOCKED` mapping went: it becomes evictable again
/// and moves from the unevictable list to an evictable one.
pub fn munlock_folio<P: Policy>(m: &mut Machine, p: &mut P, id: FolioId) {
    if !m.folios[id].test_clear(pg::MLOCKED) {
        return;
    }
    if m.folios[id].test(pg::LRU) {
        p.del_folio(m, id);
        p.add_folio(m, id);
    }
}

/// Drop one PTE reference to a swap slot (`free_swap_and_cache`): when the last reference goes,
/// an unmapped swap-cache folio is freed too, and the slot is released.
pub fn put_swap_entry<P: Policy>(m: &mut Machine, p: &mut P, slot: u32) {
    let (left, cached) = m.swap.put(slot);
    if left > 0 {
        return;
    }
    match cached {
        Some(id) => {
            if m.folios[id].mapcount == 0 && m.folios[id].test(pg::LRU) {
                free_anon_folio(m, p, id);
            }
        }
        None => m.swap_release(slot),
    }
}

/// Free an unmapped anon folio that is on an LRU list (process exit, last unmap).
pub fn free_anon_folio<P: Policy>(m: &mut Machine, p: &mut P, id: FolioId) {
    if m.folios[id].test(pg::LRU) {
        p.del_folio(m, id);
    }
    if m.folios[id].test(pg::SWAPCACHE) {
        m.swap_cache_delete(id, None);
    }
    m.folio_clear_dirty(id);
    vmscan::free_folio(m, id);
}

// SPDX-License-Identifier: GPL-2.0-only
//! Page reclaim: the engine every policy shares, and the one interface policies implement.
//!
//! The engine (`vmscan`, `alloc`, `oom`) holds everything the kernel does the same way whatever
//! the LRU: the allocation slow path with its watermark checks, kswapd's `balance_pgdat`, direct
//! reclaim, memcg limit reclaim, `shrink_folio_list` (rmap unmap, swap-out, dirty pages, shadow
//! entries, freeing) and the OOM killer. A [`Policy`] owns the LRU lists and decides what to scan:
//! `classic` (active/inactive with workingset refault detection) and, next, MGLRU.
//!
//! Policies are plugged in statically (`Kernel<P: Policy>`), so the per-access hooks
//! (`mark_accessed`, `add_folio`) are direct calls with no dynamic dispatch.

pub mod alloc;
pub mod check;
pub mod classic;
pub mod ext;
pub mod huge_memory;
pub mod killswitch;
pub mod memory_reclaim;
pub mod mglru;
pub mod shrinker;
pub mod tiering;
pub mod vmscan;
pub mod writeback;

use crate::mm::folio::{pg, FolioId, ListHead};
use crate::mm::memcg::MemcgId;
use crate::mm::Machine;
use mglru::Switches;

/// `DEF_PRIORITY`: reclaim scans `size >> priority` per pass, from 12 down to 0.
pub const DEF_PRIORITY: i32 = 12;
/// `SWAP_CLUSTER_MAX`.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// `MAX_RECLAIM_RETRIES`.
pub const MAX_RECLAIM_RETRIES: u32 = 16;

/// Who is reclaiming (`reclaimer_offset`): selects `pgscan_kswapd` versus `pgscan_direct` etc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reclaimer {
    /// kswapd.
    Kswapd,
    /// Direct reclaim (including memcg limit reclaim).
    Direct,
    /// Proactive reclaim (`memory.reclaim`, debugfs): counted as direct before 6.17.
    Proactive,
}

/// Per-pass statistics of `shrink_folio_list` (`struct reclaim_stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReclaimStat {
    /// Dirty folios seen.
    pub nr_dirty: u64,
    /// Dirty folios not queued for writeback.
    pub nr_unqueued_dirty: u64,
    /// Folios under writeback seen.
    pub nr_writeback: u64,
    /// Folios marked for immediate reclaim.
    pub nr_immediate: u64,
    /// Folios written out (swap-out).
    pub nr_pageout: u64,
    /// Folios activated, per type.
    pub nr_activate: [u64; 2],
    /// Folios kept because referenced.
    pub nr_ref_keep: u64,
    /// Folios kept because unmapping failed.
    pub nr_unmap_fail: u64,
    /// Folios demoted to a lower tier instead of reclaimed (`nr_demoted`).
    pub nr_demoted: u64,
}

/// `struct scan_control`: what one reclaim invocation is asked to do, and what it did.
#[derive(Clone, Debug)]
pub struct ScanControl {
    /// Pages to reclaim before stopping.
    pub nr_to_reclaim: u64,
    /// Memcg limit reclaim target; `None` for global reclaim.
    pub target_memcg: Option<MemcgId>,
    /// Highest zone index that may be reclaimed from.
    pub reclaim_idx: usize,
    /// Allocation order.
    pub order: u32,
    /// Scan priority: `size >> priority` per list per pass.
    pub priority: i32,
    /// Whether dirty pages may be written (swap-out).
    pub may_writepage: bool,
    /// Whether mapped pages may be unmapped.
    pub may_unmap: bool,
    /// Whether anon pages may be swapped.
    pub may_swap: bool,
    /// Who reclaims.
    pub reclaimer: Reclaimer,
    /// Swappiness override (proactive reclaim), else the memcg's.
    pub swappiness: Option<u32>,
    /// Classic: deactivation allowed per type (bit 0 anon, bit 1 file).
    pub may_deactivate: u8,
    /// Classic: deactivate regardless of `inactive_is_low`.
    pub force_deactivate: bool,
    /// Classic: an active list was skipped because deactivation was not allowed.
    pub skipped_deactivate: bool,
    /// Classic: reclaim file only while the inactive file list is big enough.
    pub cache_trim_mode: bool,
    /// Classic: file LRU too small; reclaim anon.
    pub file_is_tiny: bool,
    /// Classic: snapshot of the anon IO cost at the start of the node pass.
    pub anon_cost: u64,
    /// Classic: snapshot of the file IO cost.
    pub file_cost: u64,
    /// Reclaim below `memory.low` allowed (second round).
    pub memcg_low_reclaim: bool,
    /// A memcg was skipped for being below `memory.low`.
    pub memcg_low_skipped: bool,
    /// Pages scanned so far.
    pub nr_scanned: u64,
    /// Pages reclaimed so far.
    pub nr_reclaimed: u64,
    /// Accumulated `shrink_folio_list` statistics.
    pub stat: ReclaimStat,
    /// File pages taken for reclaim (`sc->nr.file_taken`).
    pub nr_file_taken: u64,
    /// `sc->last_reclaimed` (6.1 kswapd).
    pub last_reclaimed: u64,
    /// `sc->memcgs_need_aging` (6.1 kswapd).
    pub memcgs_need_aging: bool,
    /// `sc->memcg_full_walk`: walk the whole memcg subtree, without the reclaim cookie
    /// (`incremental_cgroup_iteration`'s retry before giving up).
    pub memcg_full_walk: bool,
    /// `sc->no_demotion`: reclaim without demotion (`reclaim_pages`, MADV_PAGEOUT).
    pub no_demotion: bool,
}

impl ScanControl {
    /// A scan control for reclaiming `nr` pages with the given reclaimer and target.
    pub fn new(nr: u64, reclaimer: Reclaimer, target: Option<MemcgId>, reclaim_idx: usize) -> Self {
        ScanControl {
            nr_to_reclaim: nr,
            target_memcg: target,
            reclaim_idx,
            order: 0,
            priority: DEF_PRIORITY,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            reclaimer,
            swappiness: None,
            may_deactivate: 0,
            force_deactivate: false,
            skipped_deactivate: false,
            cache_trim_mode: false,
            file_is_tiny: false,
            anon_cost: 0,
            file_cost: 0,
            memcg_low_reclaim: false,
            memcg_low_skipped: false,
            nr_scanned: 0,
            nr_reclaimed: 0,
            stat: ReclaimStat::default(),
            nr_file_taken: 0,
            last_reclaimed: 0,
            memcgs_need_aging: true,
            memcg_full_walk: false,
            no_demotion: false,
        }
    }
    /// Whether this is memcg limit (cgroup) reclaim (`cgroup_reclaim`).
    pub fn cgroup_reclaim(&self) -> bool {
        self.target_memcg.is_some()
    }
    /// Whether this is global reclaim (`global_reclaim`).
    pub fn global_reclaim(&self) -> bool {
        self.target_memcg.is_none()
    }
}

/// Result of the reference check in `shrink_folio_list` (`enum folio_references`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FolioRef {
    /// Reclaim it.
    Reclaim,
    /// Reclaim only if clean.
    ReclaimClean,
    /// Put it back where it was.
    Keep,
    /// Activate it.
    Activate,
}

/// Context of a folio being added to the LRU (`folio_add_lru`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddCtx {
    /// Added while the task is in a page fault on a VMA with recency (`current->in_lru_fault`).
    pub in_fault: bool,
    /// Read ahead or around a fault: not the page the fault asked for (only meaningful with
    /// `in_fault`; the `readahead_placement` variant places such folios as if not in a fault).
    pub readahead: bool,
}

/// A list the invariant checker should walk: its owner lruvec and what the policy calls it.
pub struct ListRef<'a> {
    /// Owning memcg.
    pub memcg: MemcgId,
    /// Owning node.
    pub node: usize,
    /// Policy-specific name, for messages.
    pub name: String,
    /// The list.
    pub list: &'a ListHead,
}

/// A page-reclaim policy: owns the LRU lists of every lruvec and decides what reclaim scans.
///
/// The engine guarantees: folios passed to `add_folio` are allocated, charged, not on any list and
/// not isolated; `PG_active` on entry is a placement request (a refault activation, or a folio
/// coming back from reclaim). Folios passed to `del_folio` are on one of the policy's lists.
/// During `shrink_lruvec` the policy isolates folios (clearing `PG_lru`, setting `PG_ISOLATED`),
/// hands them to [`vmscan::shrink_folio_list`], and puts the survivors back.
pub trait Policy {
    /// Short name (`classic`, `mglru`).
    fn name(&self) -> &'static str;

    /// A memcg was created: make room for its lruvecs.
    fn memcg_created(&mut self, m: &Machine, memcg: MemcgId);

    /// `memcg` was removed (`rmdir`; `mem_cgroup_css_offline`), after the machine's half
    /// ([`Machine::memcg_offline`]). MGLRU: `lru_gen_offline_memcg`. Default: nothing (its folios
    /// stay on its lruvecs).
    fn memcg_offline(&mut self, _m: &mut Machine, _memcg: MemcgId) {}

    /// The LRU half of 7.2's `memcg_reparent_objcgs` (switch `reparent_lru_folios`): move the
    /// folios on `child`'s lists to `parent`'s (`lru_gen_reparent_memcg` or
    /// `lru_reparent_memcg`), before the machine relabels them ([`Machine::reparent_folios`]).
    fn reparent_lru(&mut self, _m: &mut Machine, _child: MemcgId, _parent: MemcgId) {}

    /// Offline `memcg` holds nothing any more and is released (`mem_cgroup_css_released`),
    /// before the machine frees it. MGLRU: `lru_gen_release_memcg`. Default: nothing.
    fn memcg_released(&mut self, _m: &Machine, _memcg: MemcgId) {}

    /// A process address space was created after the policy (`lru_gen_add_mm` at fork/exec).
    fn mm_created(&mut self, _m: &Machine, _mm: u32) {}

    /// Put a folio on an LRU list: `lru_add` when the per-CPU batch drains
    /// ([`lru_add_drain`]), or a folio put back directly.
    fn add_folio(&mut self, m: &mut Machine, id: FolioId);

    /// What `folio_add_lru` does to a new folio before it waits in the per-CPU `lru_add` batch
    /// (MGLRU: a folio added inside a fault is marked hot). Default: nothing.
    fn lru_add_prepare(&mut self, _m: &mut Machine, _id: FolioId, _ctx: AddCtx) {}

    /// The size of the per-CPU `lru_add` folio batch of the kernel modelled: `PAGEVEC_SIZE` 15
    /// in 6.1, `FOLIO_BATCH_SIZE` 31 in 6.12 and 7.2 (the sources read).
    fn folio_batch_size(&self) -> usize {
        LRU_ADD_BATCH_MAX
    }

    /// `lru_activate`: the folio (on its LRU list, `PG_lru`) leaves the per-CPU `lru_activate`
    /// batch ([`folio_activate_drain`]); an inactive evictable one is re-added with `PG_active`
    /// (MGLRU: to the youngest generation), counting `pgactivate`. Policies queue activations
    /// with [`folio_activate`], never calling this directly.
    fn lru_activate(&mut self, m: &mut Machine, id: FolioId);

    /// Remove a folio from its LRU list because it is being freed outside reclaim (truncation,
    /// unmap of its last user, process exit).
    fn del_folio(&mut self, m: &mut Machine, id: FolioId);

    /// `lru_add_split_folio` (`lru_add_page_tail` in 6.1) of a large folio split while on its LRU
    /// list: `tail`, now an order-0 folio with the head's LRU flags (`PG_lru`, `PG_active`,
    /// MGLRU's generation and refs), goes on the head's list right before the head, toward the
    /// young end (`list_add_tail(&tail->lru, &head->lru)`). Sizes do not move: the head's pages
    /// counted the tails ([`crate::reclaim::huge_memory::split_folio`]).
    fn add_split_tail(&mut self, m: &mut Machine, head: FolioId, tail: FolioId);

    /// `folio_isolate_lru` outside reclaim (a NUMA hint fault's promotion): take an LRU folio
    /// off its list (MGLRU: a folio of an active generation keeps `PG_active`, for
    /// `folio_migrate_flags`). The caller marks it isolated.
    fn isolate_folio(&mut self, m: &mut Machine, id: FolioId) {
        self.del_folio(m, id);
    }

    /// `folio_mark_accessed`: a file-descriptor access (buffered read or write).
    fn mark_accessed(&mut self, m: &mut Machine, id: FolioId);

    /// `folio_deactivate` (`MADV_COLD`): move an evictable LRU folio toward eviction, counting
    /// `pgdeactivate` where the kernel does.
    fn deactivate(&mut self, m: &mut Machine, id: FolioId);

    /// The kernel behaviour switches of the policy's profile. The kernel code around the policy
    /// reads the switches that are not the LRU's own from here: `pageout_ignore_references`
    /// (`madvise_cold_or_pageout_pte_range`, `reclaim_pages`) and `vma_has_recency`
    /// (`zap_pte_range`), for either LRU.
    fn switches(&self) -> &Switches;

    /// Called once per node pass before the memcgs are shrunk (`prepare_scan_control`).
    fn prepare_node(&mut self, _m: &mut Machine, _node: usize, _sc: &mut ScanControl) {}

    /// Shrink the lruvecs of `node` that this reclaim targets (the part of `shrink_node` after
    /// `prepare_scan_control`). The default is the classic `shrink_node_memcgs`; MGLRU's root
    /// reclaim (`lru_gen_shrink_node`) replaces it.
    fn shrink_node_lruvecs(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl)
    where
        Self: Sized,
    {
        vmscan::shrink_node_memcgs(m, self, node, sc);
    }

    /// `shrink_lruvec`: reclaim from lruvec (memcg, node).
    fn shrink_lruvec(&mut self, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl);

    /// Whether the policy's list sizes reach the memcg's per-zone LRU sizes (`lru_zone_size`,
    /// `mem_cgroup_update_lru_size`, what `lruvec_lru_size` reads): the classic LRU's do;
    /// MGLRU's do not (`lru_gen_update_size` calls `__update_lru_size` only), except for the
    /// unevictable list, which it leaves to the classic code.
    fn memcg_lru_zone_sizes(&self) -> bool {
        true
    }

    /// `kswapd_age_node`: background aging before kswapd shrinks the node.
    fn age_node(&mut self, _m: &mut Machine, _node: usize, _sc: &mut ScanControl) {}

    /// `snapshot_refaults` at the end of a reclaim invocation, for lruvec (target, node).
    fn snapshot_refaults(&mut self, _m: &Machine, _target: MemcgId, _node: usize) {}

    /// Whether `shrink_folio_list` keeps a mapped folio that has `PG_referenced`, without an rmap
    /// walk: the multi-gen LRU up to 6.13, whose page-table walks and look-around mark a folio they
    /// find young while it is isolated `PG_referenced` instead of promoting it ("folio_update_gen()
    /// tried to promote this page?"). Mainline's `PG_referenced` is the second-chance mark instead.
    fn keep_referenced_mapped(&self) -> bool {
        false
    }

    /// `folio_check_references`: decide what `shrink_folio_list` does with an isolated folio.
    fn check_references(&mut self, m: &mut Machine, id: FolioId, sc: &ScanControl) -> FolioRef;

    /// `workingset_eviction`: the shadow entry to leave for a folio being reclaimed.
    fn eviction_shadow(&mut self, m: &mut Machine, id: FolioId, target: Option<MemcgId>) -> u64;

    /// `workingset_refault`: a folio is being instantiated where `shadow` was left; may set
    /// `PG_active`/`PG_workingset` before `add_folio` runs.
    fn refault(&mut self, m: &mut Machine, id: FolioId, shadow: u64, in_fault: bool);

    /// `folio_rotate_reclaimable`: writeback ended on a `PG_reclaim` folio that is on a list; move
    /// it to the tail so the next scan reclaims it. Counts `pgrotated`.
    fn rotate_reclaimable(&mut self, m: &mut Machine, id: FolioId);

    /// The text of `/sys/kernel/debug/lru_gen` (`full` false) or `lru_gen_full` (`full` true), for
    /// policies that have it.
    fn debugfs(&self, _m: &Machine, _full: bool) -> Option<String> {
        None
    }

    /// Access-time promotions so far (MGLRU-FG's one-generation steps on an fd access; not a
    /// kernel counter): 0 for policies without them.
    fn promotions(&self) -> u64 {
        0
    }

    /// The generations of `memcg` summed over nodes, oldest first: (seq, anon pages, file pages),
    /// for policies that have generations.
    fn generations(&self, _m: &Machine, _memcg: MemcgId) -> Option<Vec<(u64, u64, u64)>> {
        None
    }

    /// Execute a write to `/sys/kernel/debug/lru_gen`, for policies that have it.
    fn debugfs_write(&mut self, _m: &mut Machine, _input: &str) -> Result<(), String> {
        Err(format!("policy {} has no /sys/kernel/debug/lru_gen", self.name()))
    }

    /// `(min_seq[anon], min_seq[file], max_seq)` of lruvec (memcg, node), for policies with
    /// generations (what a user-space agent reads off `lru_gen` before it writes a command).
    fn seqs(&self, _memcg: MemcgId, _node: usize) -> Option<(u64, u64, u64)> {
        None
    }

    /// `/sys/kernel/mm/lru_gen/enabled` as `enabled_show` prints it: the capability bits in
    /// effect (`LRU_GEN_CORE` when MGLRU runs; the walk and non-leaf bits when the capability is
    /// on and the hardware has the accessed bit).
    fn lru_gen_caps(&self) -> u32 {
        0
    }

    /// `enabled_store` after parsing: set the capability bits `caps`. `Err`: why the model cannot
    /// (switching `LRU_GEN_CORE` needs a policy that converts its lists, the kill switch).
    fn set_lru_gen_caps(&mut self, _m: &mut Machine, caps: u32) -> Result<(), String> {
        if caps & 1 != 0 {
            return Err(format!(
                "enabled: switching the multi-gen LRU on under {} needs the kill switch",
                self.name()
            ));
        }
        Ok(())
    }

    /// `lru_gen_min_ttl`, in jiffies (`/sys/kernel/mm/lru_gen/min_ttl_ms`).
    fn min_ttl_jiffies(&self) -> u64 {
        0
    }

    /// `min_ttl_ms_store` after parsing: set `lru_gen_min_ttl` to `jiffies`.
    fn set_min_ttl_jiffies(&mut self, _jiffies: u64) -> Result<(), String> {
        Err(format!("min_ttl_ms: {} keeps no thrashing protection", self.name()))
    }

    /// Every list, for the invariant checker.
    fn lists(&self) -> Vec<ListRef<'_>>;

    /// Policy-specific invariants (list sizes against counters, and so on).
    fn check(&self, m: &Machine) -> Result<(), String>;
}

/// The largest per-CPU `lru_add` batch of any kernel modelled (`FOLIO_BATCH_SIZE`).
pub const LRU_ADD_BATCH_MAX: usize = 31;

/// A per-CPU folio batch of the one CPU modelled (`struct folio_batch` in `cpu_fbatches`), each
/// entry holding a reference on its folio.
///
/// As `lru_add` ([`Machine::lru_add`]): a new folio waits here, charged, in the page cache or the
/// page tables, but not `PG_lru` and so invisible to reclaim, until the batch is full or drained
/// ([`lru_add_drain`]). Flags set meanwhile (a buffered read's `folio_mark_accessed`) are what
/// `lru_add` places it by.
///
/// As `lru_activate` ([`Machine::lru_activate`]): a folio [`folio_activate`] queued stays where it
/// is on its list, `PG_lru`, until the batch fills or drains; meanwhile the batch's reference
/// keeps reclaim from freeing it (see [`FolioBatch::holds`]).
#[derive(Clone, Debug)]
pub struct FolioBatch {
    ids: [FolioId; LRU_ADD_BATCH_MAX],
    len: usize,
}

/// The batch of new folios (`cpu_fbatches.lru_add`).
pub type LruAddBatch = FolioBatch;

impl Default for FolioBatch {
    fn default() -> Self {
        FolioBatch {
            ids: [crate::mm::folio::NIL; LRU_ADD_BATCH_MAX],
            len: 0,
        }
    }
}

impl FolioBatch {
    /// The folios waiting, oldest first (a folio queued twice appears twice).
    pub fn folios(&self) -> &[FolioId] {
        &self.ids[..self.len]
    }

    /// Whether the batch holds a reference on `id`: reclaim cannot free it
    /// (`is_page_cache_freeable` and `__remove_mapping`'s `folio_ref_freeze` see one reference
    /// too many).
    #[inline]
    pub fn holds(&self, id: FolioId) -> bool {
        self.len > 0 && self.folios().contains(&id)
    }

    /// Add a folio; returns the number waiting.
    pub fn push(&mut self, id: FolioId) -> usize {
        debug_assert!(self.len < LRU_ADD_BATCH_MAX);
        self.ids[self.len] = id;
        self.len += 1;
        self.len
    }

    /// Forget `id` (it is being freed before the batch drained: the kernel's extra reference
    /// would free it at the drain); false if it is not waiting. Every entry of it goes.
    pub fn remove(&mut self, id: FolioId) -> bool {
        let before = self.len;
        let mut kept = 0;
        for i in 0..self.len {
            if self.ids[i] != id {
                self.ids[kept] = self.ids[i];
                kept += 1;
            }
        }
        self.len = kept;
        kept < before
    }

    /// Take every folio out (`folio_batch_move_lru` empties the batch); returns the ids and
    /// their number.
    fn take(&mut self) -> ([FolioId; LRU_ADD_BATCH_MAX], usize) {
        let n = self.len;
        self.len = 0;
        (self.ids, n)
    }
}

/// `folio_activate`: queue an inactive, evictable LRU folio in the per-CPU `lru_activate` batch
/// (`folio_batch_add_and_move`); the batch moves when full ([`Policy::folio_batch_size`]) or when
/// `lru_cache_disable` is in force, and at every [`lru_add_drain`]. Until then the folio stays
/// where it is, and reclaim that reaches it cannot free it. The same folio may be queued twice
/// (it is still inactive and `PG_lru`); each entry then activates it.
pub fn folio_activate<P: Policy>(m: &mut Machine, p: &mut P, id: FolioId) {
    let f = m.folios[id];
    if f.test(pg::ACTIVE) || f.test(pg::UNEVICTABLE) || !f.test(pg::LRU) {
        return;
    }
    if m.lru_activate.push(id) >= p.folio_batch_size() || m.lru_cache_disabled {
        folio_activate_drain(m, p);
    }
}

/// `folio_activate_drain` (`folio_batch_move_lru` with `lru_activate`): activate every queued
/// folio still on its LRU list, in the order queued; a folio isolated meanwhile is passed over
/// (`folio_test_clear_lru` fails), its activation lost. One `lru_lock` hold per run of folios of
/// one lruvec.
pub fn folio_activate_drain<P: Policy>(m: &mut Machine, p: &mut P) {
    let (batch, n) = m.lru_activate.take();
    let mut runs = LockRuns::new(crate::mm::LruLockSite::Batch);
    for &id in &batch[..n] {
        if !m.folios[id].test(pg::LRU) {
            continue;
        }
        runs.folio(m, id);
        p.lru_activate(m, id);
    }
    runs.end(m);
}

/// `folio_batch_move_lru`'s locking: one `lru_lock` hold per run of folios of one lruvec, at
/// `site`.
struct LockRuns {
    site: crate::mm::LruLockSite,
    lv: usize,
    run: u64,
}

impl LockRuns {
    fn new(site: crate::mm::LruLockSite) -> Self {
        LockRuns {
            site,
            lv: usize::MAX,
            run: 0,
        }
    }

    /// Folio `id` is moved next: a hold ends where the lruvec changes.
    fn folio(&mut self, m: &mut Machine, id: FolioId) {
        let f = m.folios[id];
        let l = m.lruvec(f.memcg, f.node());
        if l != self.lv && self.run > 0 {
            m.lru_lock_held(self.lv, self.site, self.run);
            self.run = 0;
        }
        self.lv = l;
        self.run += 1;
    }

    /// The batch is done: the last hold ends.
    fn end(self, m: &mut Machine) {
        if self.run > 0 {
            m.lru_lock_held(self.lv, self.site, self.run);
        }
    }
}

/// `lru_add_drain_all` (`mm/swap.c`): every CPU's batches drained ([`lru_add_drain`]; one CPU
/// modelled) and every CPU's buffer-head LRU invalidated (`lru_add_and_bh_lrus_drain`, the
/// per-CPU work, read in Debian 6.12.118 and 7.2.13; 6.1's proactive-reclaim fixture frees its
/// metadata folios at the same point), which drops the references that kept metadata folios'
/// buffers busy ([`crate::mm::pagecache::File::buffers_in_bh_lru`]). Of the paths the model
/// has, only `memory.reclaim` calls it, before its last attempt.
pub fn lru_add_drain_all<P: Policy>(m: &mut Machine, p: &mut P) {
    lru_add_drain(m, p);
    for f in m.files.iter_mut() {
        f.buffers_in_bh_lru = false;
    }
}

/// `lru_add_drain`: put every folio waiting in the `lru_add` batch on its LRU list, oldest
/// first, then activate the folios waiting in the `lru_activate` batch
/// ([`folio_activate_drain`], last in `lru_add_drain_cpu` as in the kernel). The kernel drains
/// the local CPU's batches at the start of reclaim (`shrink_inactive_list`,
/// `shrink_active_list`, `lru_gen_shrink_lruvec`, `lru_gen_shrink_node`), in `madvise`,
/// `munmap` and `exit_mmap`; with one CPU modelled these are the batches, whoever reclaims.
pub fn lru_add_drain<P: Policy>(m: &mut Machine, p: &mut P) {
    while m.lru_add.len > 0 {
        let n = m.lru_add.len;
        let batch = m.lru_add.ids;
        m.lru_add.len = 0;
        let mut runs = LockRuns::new(crate::mm::LruLockSite::Add);
        for &id in &batch[..n] {
            runs.folio(m, id);
            p.add_folio(m, id);
        }
        runs.end(m);
    }
    if m.lru_activate.len > 0 {
        folio_activate_drain(m, p);
    }
}

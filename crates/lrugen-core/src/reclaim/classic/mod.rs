// SPDX-License-Identifier: GPL-2.0-only
//! The classic LRU: active and inactive lists per type, with workingset refault detection
//! (`mm/vmscan.c` `shrink_lruvec` and friends, `mm/swap.c` `folio_mark_accessed`).
//!
//! New folios enter the inactive list of their type; a second file-descriptor access
//! (`folio_mark_accessed`) or a reference found through the page tables at reclaim time
//! (`folio_check_references`) promotes them to the active list. Reclaim scans the inactive lists
//! from the tail; when an inactive list is too small relative to its active list
//! (`inactive_is_low`), or refaults show a new working set forming, `shrink_active_list` moves
//! folios from the tail of the active list to the inactive list, setting `PG_workingset`.
//! `get_scan_count` splits the scan between anon and file by swappiness and recent IO cost.
//!
//! The kernel version is a [`Profile`], the same value MGLRU reads: the classic LRU reads the
//! switches of the changes that touched it (`vma_has_recency` in `folio_referenced` and
//! `zap_pte_range`, `pageout_ignore_references` in `madvise`, `node_reclaim_stats` for
//! `pgscan`/`pgsteal`/`pgrefill`, `lru_cost_rotations` and `lru_note_cost_skips_zero` in
//! `lru_note_cost`, `reclaim_ratelimited_stats_flush` in `prepare_scan_control`); the other
//! switches are MGLRU's and change nothing here.

pub mod workingset;

use super::mglru::{Preset, Profile, Switches};
use super::vmscan::{self, clear_isolated, count_scan};
use super::{FolioRef, ListRef, Policy, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use crate::mm::folio::{pg, FolioId, ListHead, ANON, FILE, NIL};
use crate::mm::memcg::{MemcgId, ROOT_MEMCG};
use crate::mm::node::WMARK_HIGH;
use crate::mm::vm::vmf;
use crate::mm::vmstat::Stat;
use crate::mm::{Lru, LruLockSite, Machine, FBATCH_DEACTIVATE, FBATCH_ROTATE};

/// `SWAP_CLUSTER_MAX_SKIPPED`: zone-skipped folios tolerated per isolation.
const SWAP_CLUSTER_MAX_SKIPPED: u64 = SWAP_CLUSTER_MAX << 10;

/// Names of the lists, as `/proc/meminfo` and `memory.stat` name them.
pub const LRU_NAMES: [&str; 5] = [
    "inactive_anon",
    "active_anon",
    "inactive_file",
    "active_file",
    "unevictable",
];

/// Deactivation bits of `scan_control.may_deactivate`.
const DEACTIVATE_ANON: u8 = 1;
const DEACTIVATE_FILE: u8 = 2;

/// Classic per-lruvec state.
#[derive(Clone, Debug, Default)]
pub struct Lruvec {
    /// The five lists, indexed by [`Lru`].
    pub lists: [ListHead; 5],
    /// Recent anon IO cost (`lruvec->anon_cost`).
    pub anon_cost: u64,
    /// Recent file IO cost.
    pub file_cost: u64,
    /// Eviction/activation clock (`lruvec->nonresident_age`).
    pub nonresident_age: u64,
    /// `WORKINGSET_ACTIVATE_*` snapshot at the end of the last reclaim (`lruvec->refaults`).
    pub refaults: [i64; 2],
}

/// The classic active/inactive LRU policy.
#[derive(Clone, Debug)]
pub struct Classic {
    /// Lruvecs indexed like `Machine::lruvec(memcg, node)`.
    pub lruvecs: Vec<Lruvec>,
    /// `bucket_order` of the shadow clock.
    pub bucket_order: u32,
    nr_nodes: usize,
    scratch: Vec<FolioId>,
    /// `shrink_active_list`'s `l_hold`, `l_active` and `l_inactive`, kept between calls so that
    /// reclaim does not allocate.
    active_scratch: [Vec<FolioId>; 3],
    profile: Profile,
    /// `/sys/kernel/mm/lru_gen/` as written while the multi-gen LRU is off: the walk and
    /// non-leaf capability bits (shown by `enabled`, read by nothing here) and `min_ttl` in
    /// jiffies (kept for when it is switched on).
    lru_gen_sysfs: (u32, u64),
}

/// How `get_scan_count` balances anon and file (`enum scan_balance`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanBalance {
    /// Scan lists relative to their size.
    Equal,
    /// Scan by swappiness and cost fractions.
    Fract,
    /// Anon only.
    Anon,
    /// File only.
    File,
}

/// `inactive_is_low` for given inactive and active sizes in pages.
pub fn inactive_is_low_sizes(inactive: u64, active: u64) -> bool {
    let gb = (inactive + active) >> (30 - 12);
    let ratio = if gb > 0 { crate::mm::node::int_sqrt(10 * gb) } else { 1 };
    inactive * ratio < active
}

impl Classic {
    /// A classic LRU for machine `m`, as `mainline` ([`Profile::MAINLINE`]).
    pub fn new(m: &Machine) -> Self {
        Self::with_profile(m, Profile::MAINLINE)
    }

    /// A classic LRU for machine `m` as the kernel `profile` has it.
    pub fn with_profile(m: &Machine, profile: Profile) -> Self {
        Classic {
            lruvecs: vec![Lruvec::default(); m.memcgs.len() * m.nr_nodes()],
            bucket_order: workingset::bucket_order(m.cfg.total_pages()),
            nr_nodes: m.nr_nodes(),
            scratch: Vec::with_capacity(SWAP_CLUSTER_MAX as usize),
            active_scratch: Default::default(),
            profile,
            lru_gen_sysfs: (0, 0),
        }
    }

    /// The kernel profile.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    #[inline]
    fn sw(&self) -> &Switches {
        &self.profile.switches
    }

    /// The list a folio is on or would go on (`folio_lru_list`).
    pub fn folio_lru_list(m: &Machine, id: FolioId) -> Lru {
        let f = m.folios[id];
        if f.test(pg::UNEVICTABLE) {
            return Lru::Unevictable;
        }
        Lru::of(f.lru_type(), f.test(pg::ACTIVE))
    }

    /// `lruvec_add_folio`: at the head of its list.
    pub(crate) fn lruvec_add(&mut self, m: &mut Machine, id: FolioId) {
        let lru = Self::folio_lru_list(m, id);
        let f = m.folios[id];
        let lv = m.lruvec(f.memcg, f.node());
        m.folios.list_add(&mut self.lruvecs[lv].lists[lru as usize], id);
        m.folios[id].set(pg::LRU);
        m.update_lru_size(id, lru, 1);
    }

    /// `lruvec_del_folio`.
    pub(crate) fn lruvec_del(&mut self, m: &mut Machine, id: FolioId) {
        let lru = Self::folio_lru_list(m, id);
        let f = m.folios[id];
        let lv = m.lruvec(f.memcg, f.node());
        m.folios.list_del(&mut self.lruvecs[lv].lists[lru as usize], id);
        m.update_lru_size(id, lru, -1);
    }

    /// Local size of list `lru` in lruvec (memcg, node) over zones ≤ `reclaim_idx`
    /// (`lruvec_lru_size`).
    fn lru_size(&self, m: &Machine, memcg: MemcgId, node: usize, lru: Lru) -> u64 {
        // in pages: the list's length while every folio is one page
        m.lruvec_state_local(memcg, node, Stat::LRU_LISTS[lru as usize]) as u64
    }

    /// `inactive_is_low` of lruvec (memcg, node), hierarchical sizes as of the last rstat flush
    /// (`lruvec_page_state`).
    pub fn inactive_is_low(m: &Machine, memcg: MemcgId, node: usize, file: bool) -> bool {
        let (i, a) = if file {
            (Stat::NrInactiveFile, Stat::NrActiveFile)
        } else {
            (Stat::NrInactiveAnon, Stat::NrActiveAnon)
        };
        let inactive = m.lruvec_state_flushed(memcg, node, i).max(0) as u64;
        let active = m.lruvec_state_flushed(memcg, node, a).max(0) as u64;
        inactive_is_low_sizes(inactive, active)
    }

    /// Whether anon can be reclaimed in `memcg` on `node` (`can_reclaim_anon_pages`): swap has
    /// room, or the node can demote.
    fn can_reclaim_anon(m: &Machine, memcg: MemcgId, node: usize, sc: &ScanControl) -> bool {
        m.swap.nr_free() > 0 && m.memcgs.swap_margin(memcg) > 0 || super::tiering::can_demote(m, node, sc)
    }

    /// Swappiness in effect for `memcg` (`mem_cgroup_swappiness`, or the proactive override).
    fn swappiness(m: &Machine, memcg: MemcgId, sc: &ScanControl) -> u32 {
        sc.swappiness.unwrap_or(m.memcgs[memcg].swappiness)
    }

    /// `get_scan_count`: how many pages to scan from each evictable list of lruvec (memcg, node).
    pub fn get_scan_count(
        &self,
        m: &Machine,
        memcg: MemcgId,
        node: usize,
        sc: &mut ScanControl,
    ) -> ([u64; 4], ScanBalance) {
        let swappiness = Self::swappiness(m, memcg, sc);
        let mut fraction = [0u64; 2];
        let mut denominator = 0u64;
        // no swap, or cgroup reclaim with swappiness 0: file only
        let balance = if !sc.may_swap
            || !Self::can_reclaim_anon(m, memcg, node, sc)
            || (sc.cgroup_reclaim() && swappiness == 0)
        {
            ScanBalance::File
        } else if swappiness == 201 {
            ScanBalance::Anon
        } else if sc.priority == 0 && swappiness > 0 {
            ScanBalance::Equal
        } else if sc.file_is_tiny {
            ScanBalance::Anon
        } else if sc.cache_trim_mode {
            ScanBalance::File
        } else {
            // calculate_pressure_balance
            let total = sc.anon_cost + sc.file_cost;
            let anon_cost = total + sc.anon_cost;
            let file_cost = total + sc.file_cost;
            let total = anon_cost + file_cost;
            let ap = swappiness as u64 * (total + 1) / (anon_cost + 1);
            let fp = (200 - swappiness.min(200)) as u64 * (total + 1) / (file_cost + 1);
            fraction = [ap, fp];
            denominator = ap + fp;
            ScanBalance::Fract
        };
        let (emin, elow) = if Some(memcg) == sc.target_memcg || memcg == ROOT_MEMCG {
            (0, 0)
        } else {
            (m.memcgs[memcg].emin, m.memcgs[memcg].elow)
        };
        let mut nr = [0u64; 4];
        let online = m.memcgs[memcg].online();
        for lru in Lru::EVICTABLE {
            let file = lru.is_file() as usize;
            let size = self.lru_size(m, memcg, node, lru);
            let mut scan = if emin > 0 || elow > 0 {
                let cgroup_size = m.memcgs[memcg].usage;
                let protection = if !sc.memcg_low_reclaim && elow > emin {
                    sc.memcg_low_skipped = true;
                    elow
                } else {
                    emin
                };
                let cgroup_size = cgroup_size.max(protection);
                let s = size - size * protection / (cgroup_size + 1);
                s.max(SWAP_CLUSTER_MAX)
            } else {
                size
            };
            scan >>= sc.priority;
            // a removed memcg's remaining pages are scraped out: at least a batch, and the
            // proportional share rounded up
            if scan == 0 && !online {
                scan = size.min(SWAP_CLUSTER_MAX);
            }
            nr[lru as usize] = match balance {
                ScanBalance::Equal => scan,
                ScanBalance::Fract if !online => (scan * fraction[file])
                    .checked_add(denominator.saturating_sub(1))
                    .map_or(0, |x| x.checked_div(denominator).unwrap_or(0)),
                ScanBalance::Fract => (scan * fraction[file]).checked_div(denominator).unwrap_or(0),
                ScanBalance::File => {
                    if file == 1 {
                        scan
                    } else {
                        0
                    }
                }
                ScanBalance::Anon => {
                    if file == 0 {
                        scan
                    } else {
                        0
                    }
                }
            };
        }
        (nr, balance)
    }

    /// `isolate_lru_folios`: take up to `nr_to_scan` folios from the tail of `lru`, skipping
    /// folios of zones above `reclaim_idx` (counted in `pgskip_<zone>`, spliced back to the head).
    /// Returns the number of folios looked at (`nr_scanned`).
    #[allow(clippy::too_many_arguments)] // the kernel's isolate_lru_folios signature
    fn isolate(
        &mut self,
        m: &mut Machine,
        memcg: MemcgId,
        node: usize,
        lru: Lru,
        nr_to_scan: u64,
        sc: &ScanControl,
        dst: &mut Vec<FolioId>,
    ) -> u64 {
        let lv = m.lruvec(memcg, node);
        let mut scan = 0;
        let mut total_scan = 0;
        let mut skipped: Vec<FolioId> = Vec::new();
        let mut rotate: Vec<FolioId> = Vec::new();
        // nr_zone_taken: the list sizes and NR_ISOLATED change once for the batch
        let mut zone_taken = [0i64; crate::reclaim::mglru::state::MAX_NR_ZONES];
        while scan < nr_to_scan {
            let id = self.lruvecs[lv].lists[lru as usize].tail;
            if id == NIL {
                break;
            }
            // every count in pages (`folio_nr_pages`)
            let nr = u64::from(m.folios.nr_pages(id));
            total_scan += nr;
            let f = m.folios[id];
            m.folios.list_del(&mut self.lruvecs[lv].lists[lru as usize], id);
            if f.zone() > sc.reclaim_idx {
                skipped.push(id);
                if skipped.len() as u64 >= SWAP_CLUSTER_MAX_SKIPPED {
                    break;
                }
                continue;
            }
            scan += nr;
            if !sc.may_unmap && f.mapped() {
                rotate.push(id);
                continue;
            }
            debug_assert_eq!((f.memcg, f.node()), (memcg, node), "a folio on another lruvec's list");
            debug_assert_eq!(
                f.lru_type() == FILE,
                lru.is_file(),
                "a folio on a list of the other type"
            );
            let fm = &mut m.folios[id];
            fm.clear(pg::LRU);
            fm.set(pg::ISOLATED);
            zone_taken[f.zone()] += nr as i64;
            dst.push(id);
        }
        let nr_taken: i64 = zone_taken.iter().sum();
        if nr_taken > 0 {
            // update_lru_sizes, then NR_ISOLATED_{ANON,FILE}: for the rstat bookkeeping, as many
            // one-page updates as the folio-by-folio calls made
            m.update_lru_sizes(memcg, node, lru, &zone_taken.map(|n| -n));
            let isolated = if lru.is_file() {
                Stat::NrIsolatedFile
            } else {
                Stat::NrIsolatedAnon
            };
            m.mod_lruvec_state_pages(memcg, node, isolated, nr_taken);
        }
        // Skipped and rotated folios go back to the head, in the order they were taken.
        for &id in skipped.iter().chain(rotate.iter()) {
            m.folios.list_add(&mut self.lruvecs[lv].lists[lru as usize], id);
        }
        // the whole isolation ran under the lruvec's lru_lock
        m.lru_lock_held(lv, LruLockSite::Isolate, total_scan);
        for &id in &skipped {
            let z = m.folios[id].zone();
            let s = [
                Stat::PgskipDma,
                Stat::PgskipDma32,
                Stat::PgskipNormal,
                Stat::PgskipMovable,
            ][z.min(3)];
            m.count_vm_events(s, 1);
        }
        total_scan
    }

    /// `move_folios_to_lru`: put back what reclaim did not free. Active folios age the
    /// non-resident clock; unevictable ones go to the unevictable list.
    pub(crate) fn move_folios_to_lru(&mut self, m: &mut Machine, list: &mut Vec<FolioId>) {
        for &id in list.iter() {
            clear_isolated(m, id);
            if !m.folios[id].evictable() {
                m.folios[id].clear(pg::ACTIVE);
                m.folios[id].set(pg::UNEVICTABLE);
                m.count_vm_events(Stat::UnevictablePgsCulled, 1);
            }
            self.lruvec_add(m, id);
            if m.folios[id].test(pg::ACTIVE) {
                let f = m.folios[id];
                let nr = u64::from(m.folios.nr_pages(id));
                self.age_nonresident(m, f.memcg, f.node(), nr);
            }
        }
        list.clear();
    }

    /// `shrink_inactive_list`.
    pub fn shrink_inactive_list(
        &mut self,
        m: &mut Machine,
        memcg: MemcgId,
        node: usize,
        lru: Lru,
        nr_to_scan: u64,
        sc: &mut ScanControl,
    ) -> u64 {
        let file = lru.is_file();
        let mut list = std::mem::take(&mut self.scratch);
        let nr_scanned = self.isolate(m, memcg, node, lru, nr_to_scan, sc, &mut list);
        let nr_taken: u64 = list.iter().map(|&id| u64::from(m.folios.nr_pages(id))).sum();
        let (scan_ev, steal_ev) = vmscan::scan_event(sc.reclaimer, self.sw().proactive_reclaim_stats);
        count_scan(
            m,
            memcg,
            sc,
            scan_ev,
            if file { Stat::PgscanFile } else { Stat::PgscanAnon },
            nr_scanned,
            self.sw().node_reclaim_stats,
        );
        if nr_taken == 0 {
            self.scratch = list;
            return 0;
        }
        let before = sc.stat;
        let nr_reclaimed = vmscan::shrink_folio_list(m, self, &mut list, sc, false);
        m.lru_lock_held(m.lruvec(memcg, node), LruLockSite::Putback, list.len() as u64);
        self.move_folios_to_lru(m, &mut list);
        self.scratch = list;
        count_scan(
            m,
            memcg,
            sc,
            steal_ev,
            if file { Stat::PgstealFile } else { Stat::PgstealAnon },
            nr_reclaimed,
            self.sw().node_reclaim_stats,
        );
        if m.ftrace.is_some() {
            vmscan::trace_shrink_inactive(m, sc, &before, nr_scanned, nr_reclaimed, file);
        }
        let nr_pageout = sc.stat.nr_pageout - before.nr_pageout;
        if self.sw().lru_cost_rotations {
            self.lru_note_cost(m, memcg, node, file, nr_pageout, nr_scanned - nr_reclaimed);
        } else {
            self.lru_note_cost_pages(m, memcg, node, file, nr_pageout);
        }
        // All isolated folios were dirty and not queued for writeback: nudge the flushers.
        if sc.stat.nr_unqueued_dirty - before.nr_unqueued_dirty == nr_taken {
            vmscan::flush_dirty_file(m, self, node);
        }
        nr_reclaimed
    }

    /// `shrink_active_list`: move folios from the tail of the active list to the inactive list
    /// (setting `PG_workingset`), except referenced executable file folios, which rotate.
    pub fn shrink_active_list(
        &mut self,
        m: &mut Machine,
        memcg: MemcgId,
        node: usize,
        lru: Lru,
        nr_to_scan: u64,
        sc: &mut ScanControl,
    ) {
        let file = lru.is_file();
        let [mut hold, mut active, mut inactive] = std::mem::take(&mut self.active_scratch);
        let nr_scanned = self.isolate(m, memcg, node, lru, nr_to_scan, sc, &mut hold);
        // 7.2 (`node_reclaim_stats`): a node statistic, counted for cgroup reclaim too
        if self.sw().node_reclaim_stats || !sc.cgroup_reclaim() {
            m.count_vm_events(Stat::Pgrefill, nr_scanned);
        }
        m.count_memcg_events(memcg, Stat::Pgrefill, nr_scanned);
        let mut nr_rotated = 0;
        m.count_scanned(hold.len() as u64);
        for &id in &hold {
            let f = m.folios[id];
            if !f.evictable() {
                // putback_lru_page
                clear_isolated(m, id);
                m.folios[id].clear(pg::ACTIVE);
                m.folios[id].set(pg::UNEVICTABLE);
                self.lruvec_add(m, id);
                continue;
            }
            let r = m.folio_referenced(id, sc.target_memcg, self.sw().vma_has_recency);
            if r.ptes > 0 && r.vm_flags & vmf::EXEC != 0 && f.is_file_lru() {
                nr_rotated += u64::from(m.folios.nr_pages(id));
                active.push(id);
                continue;
            }
            m.folios[id].clear(pg::ACTIVE);
            m.folios[id].set(pg::WORKINGSET);
            inactive.push(id);
        }
        let nr_deactivate: u64 = inactive.iter().map(|&id| u64::from(m.folios.nr_pages(id))).sum();
        // l_active/l_inactive are built with list_add and move_folios_to_lru takes from their
        // tails: folios go back in the order they were isolated. One hold for both lists (6.1,
        // 6.12; 7.2's move_folios_to_lru takes the lock per list).
        m.lru_lock_held(
            m.lruvec(memcg, node),
            LruLockSite::Putback,
            (active.len() + inactive.len()) as u64,
        );
        self.move_folios_to_lru(m, &mut active);
        self.move_folios_to_lru(m, &mut inactive);
        hold.clear();
        self.active_scratch = [hold, active, inactive];
        m.count_events(memcg, Stat::Pgdeactivate, nr_deactivate);
        // 6.x: only when something rotated (`if (nr_rotated)`), since a zero-cost call would still
        // decay the costs through lru_note_cost's halving; 7.2 (`lru_note_cost_skips_zero`) takes
        // the lock and calls `lru_note_cost_unlock_irq` every time, which returns at once on zero
        if self.sw().lru_cost_rotations && (nr_rotated > 0 || self.sw().lru_note_cost_skips_zero) {
            self.lru_note_cost(m, memcg, node, file, 0, nr_rotated);
        }
    }

    pub(crate) fn shrink_list(
        &mut self,
        m: &mut Machine,
        memcg: MemcgId,
        node: usize,
        lru: Lru,
        nr_to_scan: u64,
        sc: &mut ScanControl,
    ) -> u64 {
        if lru.is_active() {
            let bit = if lru.is_file() {
                DEACTIVATE_FILE
            } else {
                DEACTIVATE_ANON
            };
            if sc.may_deactivate & bit != 0 {
                self.shrink_active_list(m, memcg, node, lru, nr_to_scan, sc);
            } else {
                sc.skipped_deactivate = true;
            }
            return 0;
        }
        self.shrink_inactive_list(m, memcg, node, lru, nr_to_scan, sc)
    }
}

impl Policy for Classic {
    fn add_split_tail(&mut self, m: &mut Machine, head: FolioId, tail: FolioId) {
        let lru = Self::folio_lru_list(m, head);
        let f = m.folios[head];
        let lv = m.lruvec(f.memcg, f.node());
        m.folios
            .list_add_before(&mut self.lruvecs[lv].lists[lru as usize], head, tail);
    }

    fn name(&self) -> &'static str {
        if self.profile == Profile::MAINLINE {
            return "classic";
        }
        match self.profile.preset {
            Preset::V6_1 => "classic-6.1",
            Preset::V6_12 => "classic-6.12",
            Preset::V6_17 => "classic-6.17",
            Preset::V7_2 => "classic-7.2",
            Preset::MglruFg => "classic-mglru-fg",
        }
    }

    fn switches(&self) -> &Switches {
        self.sw()
    }

    fn reparent_lru(&mut self, m: &mut Machine, child: MemcgId, parent: MemcgId) {
        // lru_reparent_memcg: each list to the tail of the parent's (the unevictable one too:
        // the model keeps its folios on a list), the costs added; the sizes move with the
        // statistics (`Machine::reparent_folios`)
        for node in 0..m.nr_nodes() {
            let (c, p) = (m.lruvec(child, node), m.lruvec(parent, node));
            for lru in 0..self.lruvecs[c].lists.len() {
                let mut from = std::mem::take(&mut self.lruvecs[c].lists[lru]);
                let mut to = self.lruvecs[p].lists[lru];
                m.folios.list_splice_tail(&mut from, &mut to);
                self.lruvecs[p].lists[lru] = to;
            }
            let (a, f) = (self.lruvecs[c].anon_cost, self.lruvecs[c].file_cost);
            self.lruvecs[p].anon_cost += a;
            self.lruvecs[p].file_cost += f;
        }
    }

    fn memcg_created(&mut self, m: &Machine, _memcg: MemcgId) {
        self.lruvecs.resize(m.memcgs.len() * m.nr_nodes(), Lruvec::default());
    }

    fn add_folio(&mut self, m: &mut Machine, id: FolioId) {
        if !m.folios[id].evictable() {
            m.folios[id].clear(pg::ACTIVE);
            m.folios[id].set(pg::UNEVICTABLE);
            m.count_vm_events(Stat::UnevictablePgsCulled, 1);
        }
        self.lruvec_add(m, id);
    }

    fn del_folio(&mut self, m: &mut Machine, id: FolioId) {
        self.lruvec_del(m, id);
        let f = &mut m.folios[id];
        f.clear(pg::LRU | pg::ACTIVE | pg::UNEVICTABLE);
    }

    fn lru_activate(&mut self, m: &mut Machine, id: FolioId) {
        // lru_activate: move an inactive LRU folio to the active list
        let f = m.folios[id];
        if f.test(pg::ACTIVE) || f.test(pg::UNEVICTABLE) {
            return;
        }
        self.lruvec_del(m, id);
        m.folios[id].set(pg::ACTIVE);
        self.lruvec_add(m, id);
        m.count_events(f.memcg, Stat::Pgactivate, 1);
    }

    fn deactivate(&mut self, m: &mut Machine, id: FolioId) {
        // lru_deactivate: only active, evictable LRU folios move
        let f = m.folios[id];
        if !f.test(pg::LRU) || f.test(pg::UNEVICTABLE) || !f.test(pg::ACTIVE) {
            return;
        }
        self.lruvec_del(m, id);
        m.folios[id].clear(pg::ACTIVE | pg::REFERENCED);
        self.lruvec_add(m, id);
        m.count_events(f.memcg, Stat::Pgdeactivate, 1);
        let lv = m.lruvec(f.memcg, f.node());
        m.fbatch_add(FBATCH_DEACTIVATE, self.folio_batch_size(), lv);
    }

    fn mark_accessed(&mut self, m: &mut Machine, id: FolioId) {
        let f = m.folios[id];
        if !f.test(pg::REFERENCED) {
            m.folios[id].set(pg::REFERENCED);
        } else if f.test(pg::UNEVICTABLE) {
            // Unevictable folios are not on an LRU that can be activated.
        } else if !f.test(pg::ACTIVE) {
            if f.test(pg::LRU) {
                crate::reclaim::folio_activate(m, self, id);
            } else {
                m.folios[id].set(pg::ACTIVE);
            }
            m.folios[id].clear(pg::REFERENCED);
            // workingset_activation
            self.age_nonresident(m, f.memcg, f.node(), 1);
        }
    }

    fn prepare_node(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl) {
        let target = sc.target_memcg.unwrap_or(ROOT_MEMCG);
        let lv = m.lruvec(target, node);
        if self.sw().reclaim_ratelimited_stats_flush {
            m.flush_stats_ratelimited();
        } else {
            m.flush_stats();
        }
        sc.anon_cost = self.lruvecs[lv].anon_cost;
        sc.file_cost = self.lruvecs[lv].file_cost;
        if !sc.force_deactivate {
            let r = m.lruvec_state_flushed(target, node, Stat::WorkingsetActivateAnon);
            if r != self.lruvecs[lv].refaults[ANON] || Self::inactive_is_low(m, target, node, false) {
                sc.may_deactivate |= DEACTIVATE_ANON;
            } else {
                sc.may_deactivate &= !DEACTIVATE_ANON;
            }
            let r = m.lruvec_state_flushed(target, node, Stat::WorkingsetActivateFile);
            if r != self.lruvecs[lv].refaults[FILE] || Self::inactive_is_low(m, target, node, true) {
                sc.may_deactivate |= DEACTIVATE_FILE;
            } else {
                sc.may_deactivate &= !DEACTIVATE_FILE;
            }
        } else {
            sc.may_deactivate = DEACTIVATE_ANON | DEACTIVATE_FILE;
        }
        let file = m.lruvec_state_flushed(target, node, Stat::NrInactiveFile).max(0) as u64;
        sc.cache_trim_mode = (file >> sc.priority) > 0 && sc.may_deactivate & DEACTIVATE_FILE == 0;
        if !sc.cgroup_reclaim() {
            let total_high: u64 = m.nodes[node]
                .zones
                .iter()
                .filter(|z| z.managed > 0)
                .map(|z| z.wmark(WMARK_HIGH))
                .sum();
            let free = m.nodes[node].free();
            let file = m.lru_pages(ROOT_MEMCG, node, FILE);
            let anon = m.lruvec_state(ROOT_MEMCG, node, Stat::NrInactiveAnon).max(0) as u64;
            sc.file_is_tiny =
                file + free <= total_high && sc.may_deactivate & DEACTIVATE_ANON == 0 && (anon >> sc.priority) > 0;
        }
    }

    fn shrink_lruvec(&mut self, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl) {
        let (mut nr, balance) = self.get_scan_count(m, memcg, node, sc);
        if let Some(x) = m.explain.as_deref_mut() {
            x.scan(match balance {
                ScanBalance::File | ScanBalance::Anon => crate::explain::TypeChoice::Forced,
                ScanBalance::Fract | ScanBalance::Equal => crate::explain::TypeChoice::Balanced,
            });
        }
        let targets = nr;
        let nr_to_reclaim = sc.nr_to_reclaim;
        let mut nr_reclaimed = 0;
        // Global direct reclaim at DEF_PRIORITY scans its whole target; the others stop once
        // nr_to_reclaim is met, after one nudge towards proportionality (below).
        let proportional_reclaim =
            !sc.cgroup_reclaim() && sc.reclaimer != super::Reclaimer::Kswapd && sc.priority == DEF_PRIORITY;
        const IA: usize = Lru::InactiveAnon as usize;
        const AA: usize = Lru::ActiveAnon as usize;
        const IF: usize = Lru::InactiveFile as usize;
        const AF: usize = Lru::ActiveFile as usize;
        while nr[IA] > 0 || nr[AF] > 0 || nr[IF] > 0 {
            for lru in Lru::EVICTABLE {
                let i = lru as usize;
                if nr[i] > 0 {
                    let n = nr[i].min(SWAP_CLUSTER_MAX);
                    nr[i] -= n;
                    nr_reclaimed += self.shrink_list(m, memcg, node, lru, n, sc);
                }
            }
            if nr_reclaimed < nr_to_reclaim || proportional_reclaim {
                continue;
            }
            let nr_file = nr[IF] + nr[AF];
            let nr_anon = nr[IA] + nr[AA];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (stop, other, percentage) = if nr_file > nr_anon {
                let t = targets[IA] + targets[AA] + 1;
                (IA, IF, nr_anon * 100 / t)
            } else {
                let t = targets[IF] + targets[AF] + 1;
                (IF, IA, nr_file * 100 / t)
            };
            nr[stop] = 0;
            nr[stop + 1] = 0;
            for l in [other, other + 1] {
                let scanned = targets[l] - nr[l];
                nr[l] = targets[l] * (100 - percentage) / 100;
                nr[l] -= nr[l].min(scanned);
            }
            // No `scan_adjusted` latch since 6.0 ("fix extreme overreclaim and swap floods"): the
            // next batch is the last, as the smaller type's zeroed count breaks the loop above.
        }
        sc.nr_reclaimed += nr_reclaimed;
        if (m.swap.nr_slots > 0 || super::tiering::can_demote(m, node, sc))
            && Self::inactive_is_low(m, memcg, node, false)
        {
            self.shrink_active_list(m, memcg, node, Lru::ActiveAnon, SWAP_CLUSTER_MAX, sc);
        }
        if let Some(x) = m.explain.as_deref_mut() {
            x.scan_end();
        }
    }

    fn age_node(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl) {
        // kswapd_age_node: deactivate anon if the node's inactive anon list is low.
        if (m.swap.nr_slots == 0 && !super::tiering::can_demote(m, node, sc))
            || !Self::inactive_is_low(m, ROOT_MEMCG, node, false)
        {
            return;
        }
        let mut next = m.memcgs.iter_next_live(ROOT_MEMCG, None);
        while let Some(memcg) = next {
            next = m.memcgs.iter_next_live(ROOT_MEMCG, Some(memcg));
            self.shrink_active_list(m, memcg, node, Lru::ActiveAnon, SWAP_CLUSTER_MAX, sc);
        }
    }

    fn snapshot_refaults(&mut self, m: &Machine, target: MemcgId, node: usize) {
        let lv = m.lruvec(target, node);
        self.lruvecs[lv].refaults = [
            m.lruvec_state_flushed(target, node, Stat::WorkingsetActivateAnon),
            m.lruvec_state_flushed(target, node, Stat::WorkingsetActivateFile),
        ];
    }

    fn check_references(&mut self, m: &mut Machine, id: FolioId, sc: &ScanControl) -> FolioRef {
        let r = m.folio_referenced(id, sc.target_memcg, self.sw().vma_has_recency);
        // PG_referenced is test-and-cleared before the VM_LOCKED check, so an mlocked folio loses it.
        let referenced_folio = m.folios[id].test_clear(pg::REFERENCED);
        if r.vm_flags & vmf::LOCKED != 0 {
            return FolioRef::Activate;
        }
        let file = m.folios[id].is_file_lru();
        if r.ptes > 0 {
            m.folios[id].set(pg::REFERENCED);
            if referenced_folio || r.ptes > 1 {
                return FolioRef::Activate;
            }
            if r.vm_flags & vmf::EXEC != 0 && file {
                return FolioRef::Activate;
            }
            return FolioRef::Keep;
        }
        if referenced_folio && file {
            return FolioRef::ReclaimClean;
        }
        FolioRef::Reclaim
    }

    fn eviction_shadow(&mut self, m: &mut Machine, id: FolioId, target: Option<MemcgId>) -> u64 {
        self.workingset_eviction(m, id, target)
    }

    fn refault(&mut self, m: &mut Machine, id: FolioId, shadow: u64, _in_fault: bool) {
        self.workingset_refault(m, id, shadow);
    }

    fn rotate_reclaimable(&mut self, m: &mut Machine, id: FolioId) {
        let f = m.folios[id];
        if f.test(pg::UNEVICTABLE) {
            return;
        }
        // lru_move_tail (6.1's lru_move_tail_fn, 6.12, 7.2): off its list, `PG_active` cleared,
        // onto the tail of the inactive list, whichever list it was on. Reclaim activates the
        // dirty file folio it tags `PG_reclaim`, so this is how that folio comes back to be
        // reclaimed once the flusher has cleaned it.
        self.lruvec_del(m, id);
        m.folios[id].clear(pg::ACTIVE);
        let lru = Self::folio_lru_list(m, id);
        let lv = m.lruvec(f.memcg, f.node());
        m.folios.list_add_tail(&mut self.lruvecs[lv].lists[lru as usize], id);
        m.update_lru_size(id, lru, 1);
        m.count_vm_events(Stat::Pgrotated, 1);
        m.fbatch_add(FBATCH_ROTATE, self.folio_batch_size(), lv);
    }

    fn folio_batch_size(&self) -> usize {
        // `PAGEVEC_SIZE` 15 in 6.1, `FOLIO_BATCH_SIZE` 31 from 6.12: the per-CPU batches are
        // the kernel's, whichever LRU runs
        if self.profile.switches.folio_batch_size_31 {
            crate::reclaim::LRU_ADD_BATCH_MAX
        } else {
            15
        }
    }

    fn lru_gen_caps(&self) -> u32 {
        self.lru_gen_sysfs.0
    }

    fn set_lru_gen_caps(&mut self, _m: &mut Machine, caps: u32) -> Result<(), String> {
        if caps & 1 != 0 {
            return Err("enabled: switching the multi-gen LRU on under the classic LRU needs the kill switch".into());
        }
        // the model's machine has the x86 accessed bits, so both show as written
        self.lru_gen_sysfs.0 = caps & 0x6;
        Ok(())
    }

    fn min_ttl_jiffies(&self) -> u64 {
        self.lru_gen_sysfs.1
    }

    fn set_min_ttl_jiffies(&mut self, jiffies: u64) -> Result<(), String> {
        self.lru_gen_sysfs.1 = jiffies;
        Ok(())
    }

    fn lists(&self) -> Vec<ListRef<'_>> {
        let mut out = Vec::with_capacity(self.lruvecs.len() * 5);
        for (lv, l) in self.lruvecs.iter().enumerate() {
            let memcg = (lv / self.nr_nodes) as MemcgId;
            let node = lv % self.nr_nodes;
            for (i, list) in l.lists.iter().enumerate() {
                out.push(ListRef {
                    memcg,
                    node,
                    name: LRU_NAMES[i].to_string(),
                    list,
                });
            }
        }
        out
    }

    fn check(&self, m: &Machine) -> Result<(), String> {
        // folios per node, zone and list, over all memcgs: the zone items (`nr_zone_*`)
        let mut zone_count = vec![[[0i64; 5]; crate::reclaim::mglru::state::MAX_NR_ZONES]; m.nr_nodes()];
        for memcg in m.memcgs.iter().map(|c| c.id) {
            for (node, zone_count) in zone_count.iter_mut().enumerate() {
                let lv = &self.lruvecs[m.lruvec(memcg, node)];
                for (i, stat) in Stat::LRU_LISTS.into_iter().enumerate() {
                    let mut bad = None;
                    let mut pages = 0i64;
                    m.folios.walk_list(&lv.lists[i], |id| {
                        if Self::folio_lru_list(m, id) as usize != i && bad.is_none() {
                            bad = Some(id);
                        }
                        let nr = i64::from(m.folios.nr_pages(id));
                        zone_count[m.folios[id].zone()][i] += nr;
                        pages += nr;
                        Ok(())
                    })?;
                    if let Some(id) = bad {
                        return Err(format!(
                            "folio {id} on list {} of memcg {memcg} node {node} has flags {:#x} of list {:?}",
                            LRU_NAMES[i],
                            m.folios[id].flags,
                            Self::folio_lru_list(m, id)
                        ));
                    }
                    let local = m.lruvec_state_local(memcg, node, stat);
                    if pages != local {
                        return Err(format!(
                            "memcg {memcg} node {node}: list {i} holds {pages} pages but {} = {local}",
                            stat.name()
                        ));
                    }
                }
            }
        }
        let zone_stats = [
            Stat::NrZoneInactiveAnon,
            Stat::NrZoneActiveAnon,
            Stat::NrZoneInactiveFile,
            Stat::NrZoneActiveFile,
            Stat::NrZoneUnevictable,
        ];
        for (node, zones) in m.zone_stats.iter().enumerate() {
            for (zone, counters) in zones.iter().enumerate() {
                for (i, &stat) in zone_stats.iter().enumerate() {
                    let (want, got) = (zone_count[node][zone][i], counters.get(stat));
                    if want != got {
                        return Err(format!(
                            "node {node} zone {zone}: {want} pages on {} lists but {} = {got}",
                            LRU_NAMES[i],
                            stat.name()
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

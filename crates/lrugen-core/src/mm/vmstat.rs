// SPDX-License-Identifier: GPL-2.0-only
//! Counters under their kernel names: `/proc/vmstat`, `memory.events` (and the counters
//! `memory.stat` prints, [`super::memory_stat`]).
//!
//! One enum, [`Stat`], lists every counter the model maintains, in the order `/proc/vmstat` prints
//! them (zone items, node items, then vm events; `mm/vmstat.c` `vmstat_text`). Items the model does
//! not maintain are not printed: a reader diffing against a real kernel sees exactly what is modelled.
//! The THP items (`nr_anon_transparent_hugepages`, `thp_*`) are printed whatever the
//! `transparent_hugepage` knob, as a kernel with `CONFIG_TRANSPARENT_HUGEPAGE` prints them; those
//! the model does not count (khugepaged's, file THPs', the deferred split queue's, the huge zero
//! page's, `thp_split_page_failed`) are left out (docs/thp.md, "Counters").
//!
//! Node items and memcg-visible events are kept per lruvec (memcg × node), both local and
//! hierarchical (every update walks up the memcg tree, as the kernel's rstat flush would aggregate),
//! so `memory.stat` and `workingset_test_recent` read hierarchical values in O(1). Global vm events
//! are kept apart because the kernel counts some events globally only for non-cgroup reclaim.

use std::fmt::Write as _;

macro_rules! stats {
    ($( $variant:ident = $name:literal : $kind:ident ),* $(,)?) => {
        /// A counter, named as the kernel names it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u8)]
        pub enum Stat { $( #[doc = $name] $variant ),* }
        impl Stat {
            /// Every counter, in `/proc/vmstat` order.
            pub const ALL: &'static [Stat] = &[ $( Stat::$variant ),* ];
            /// The kernel's name of the counter.
            pub const fn name(self) -> &'static str {
                match self { $( Stat::$variant => $name ),* }
            }
            /// Whether the item is a zone/node state (a gauge) or a vm event (monotonic).
            pub const fn kind(self) -> StatKind {
                match self { $( Stat::$variant => StatKind::$kind ),* }
            }
        }
    };
}

/// What kind of counter a [`Stat`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatKind {
    /// Per-zone gauge (`enum zone_stat_item`).
    Zone,
    /// Per-node (and per-lruvec) gauge or counter (`enum node_stat_item`).
    Node,
    /// Monotonic vm event (`enum vm_event_item`).
    Event,
    /// A memcg-only item (`enum memcg_stat_item`): in `memory.stat`, not in `/proc/vmstat`.
    Memcg,
}

stats! {
    NrFreePages = "nr_free_pages": Zone,
    NrZoneInactiveAnon = "nr_zone_inactive_anon": Zone,
    NrZoneActiveAnon = "nr_zone_active_anon": Zone,
    NrZoneInactiveFile = "nr_zone_inactive_file": Zone,
    NrZoneActiveFile = "nr_zone_active_file": Zone,
    NrZoneUnevictable = "nr_zone_unevictable": Zone,
    NrMlock = "nr_mlock": Zone,
    NrZspages = "nr_zspages": Zone,
    NrInactiveAnon = "nr_inactive_anon": Node,
    NrActiveAnon = "nr_active_anon": Node,
    NrInactiveFile = "nr_inactive_file": Node,
    NrActiveFile = "nr_active_file": Node,
    NrUnevictable = "nr_unevictable": Node,
    NrSlabReclaimableB = "nr_slab_reclaimable": Node,
    NrSlabUnreclaimableB = "nr_slab_unreclaimable": Node,
    NrIsolatedAnon = "nr_isolated_anon": Node,
    NrIsolatedFile = "nr_isolated_file": Node,
    WorkingsetNodes = "workingset_nodes": Node,
    WorkingsetRefaultAnon = "workingset_refault_anon": Node,
    WorkingsetRefaultFile = "workingset_refault_file": Node,
    WorkingsetActivateAnon = "workingset_activate_anon": Node,
    WorkingsetActivateFile = "workingset_activate_file": Node,
    WorkingsetRestoreAnon = "workingset_restore_anon": Node,
    WorkingsetRestoreFile = "workingset_restore_file": Node,
    WorkingsetNodereclaim = "workingset_nodereclaim": Node,
    NrAnonPages = "nr_anon_pages": Node,
    NrMapped = "nr_mapped": Node,
    NrFilePages = "nr_file_pages": Node,
    NrDirty = "nr_dirty": Node,
    NrWriteback = "nr_writeback": Node,
    // the guest's boot shmem only (`mm::BootShmem`); the model has no other shmem
    NrShmem = "nr_shmem": Node,
    NrAnonThps = "nr_anon_transparent_hugepages": Node,
    NrVmscanWrite = "nr_vmscan_write": Node,
    NrVmscanImmediateReclaim = "nr_vmscan_immediate_reclaim": Node,
    NrDirtied = "nr_dirtied": Node,
    NrWritten = "nr_written": Node,
    // kept in KiB, as the kernel keeps `NR_KERNEL_STACK_KB` (`/proc/vmstat` prints it as is,
    // `memory.stat` `kernel_stack` in bytes)
    NrKernelStackKb = "nr_kernel_stack": Node,
    NrPageTablePages = "nr_page_table_pages": Node,
    NrSwapcached = "nr_swapcached": Node,
    PgpromoteSuccess = "pgpromote_success": Node,
    PgpromoteCandidate = "pgpromote_candidate": Node,
    PgdemoteKswapd = "pgdemote_kswapd": Node,
    PgdemoteDirect = "pgdemote_direct": Node,
    PgdemoteProactive = "pgdemote_proactive": Node,
    Pgpgin = "pgpgin": Event,
    Pgpgout = "pgpgout": Event,
    Pswpin = "pswpin": Event,
    Pswpout = "pswpout": Event,
    PgallocDma = "pgalloc_dma": Event,
    PgallocDma32 = "pgalloc_dma32": Event,
    PgallocNormal = "pgalloc_normal": Event,
    PgallocMovable = "pgalloc_movable": Event,
    AllocstallDma = "allocstall_dma": Event,
    AllocstallDma32 = "allocstall_dma32": Event,
    AllocstallNormal = "allocstall_normal": Event,
    AllocstallMovable = "allocstall_movable": Event,
    PgskipDma = "pgskip_dma": Event,
    PgskipDma32 = "pgskip_dma32": Event,
    PgskipNormal = "pgskip_normal": Event,
    PgskipMovable = "pgskip_movable": Event,
    Pgfree = "pgfree": Event,
    Pgactivate = "pgactivate": Event,
    Pgdeactivate = "pgdeactivate": Event,
    Pgfault = "pgfault": Event,
    Pgmajfault = "pgmajfault": Event,
    Pgrefill = "pgrefill": Event,
    PgstealKswapd = "pgsteal_kswapd": Event,
    PgstealDirect = "pgsteal_direct": Event,
    PgstealProactive = "pgsteal_proactive": Event,
    PgscanKswapd = "pgscan_kswapd": Event,
    PgscanDirect = "pgscan_direct": Event,
    PgscanProactive = "pgscan_proactive": Event,
    PgscanDirectThrottle = "pgscan_direct_throttle": Event,
    PgscanAnon = "pgscan_anon": Event,
    PgscanFile = "pgscan_file": Event,
    PgstealAnon = "pgsteal_anon": Event,
    PgstealFile = "pgsteal_file": Event,
    SlabsScanned = "slabs_scanned": Event,
    KswapdLowWmarkHitQuickly = "kswapd_low_wmark_hit_quickly": Event,
    KswapdHighWmarkHitQuickly = "kswapd_high_wmark_hit_quickly": Event,
    Pageoutrun = "pageoutrun": Event,
    Pgrotated = "pgrotated": Event,
    OomKill = "oom_kill": Event,
    NumaPteUpdates = "numa_pte_updates": Event,
    NumaHintFaults = "numa_hint_faults": Event,
    NumaHintFaultsLocal = "numa_hint_faults_local": Event,
    NumaPagesMigrated = "numa_pages_migrated": Event,
    PgmigrateSuccess = "pgmigrate_success": Event,
    UnevictablePgsCulled = "unevictable_pgs_culled": Event,
    UnevictablePgsScanned = "unevictable_pgs_scanned": Event,
    UnevictablePgsRescued = "unevictable_pgs_rescued": Event,
    ThpFaultAlloc = "thp_fault_alloc": Event,
    ThpFaultFallback = "thp_fault_fallback": Event,
    ThpFaultFallbackCharge = "thp_fault_fallback_charge": Event,
    ThpSplitPage = "thp_split_page": Event,
    ThpSplitPmd = "thp_split_pmd": Event,
    ThpSwpout = "thp_swpout": Event,
    ThpSwpoutFallback = "thp_swpout_fallback": Event,
    SwapRa = "swap_ra": Event,
    SwapRaHit = "swap_ra_hit": Event,
    MemcgKmem = "kernel": Memcg,
}

impl Stat {
    /// The LRU list sizes (`NR_LRU_BASE + lru` for each `enum lru_list`), in the kernel's order.
    pub const LRU_LISTS: [Stat; 5] = [
        Stat::NrInactiveAnon,
        Stat::NrActiveAnon,
        Stat::NrInactiveFile,
        Stat::NrActiveFile,
        Stat::NrUnevictable,
    ];

    /// Whether the item is kept in bytes (`NR_SLAB_RECLAIMABLE_B`, `NR_SLAB_UNRECLAIMABLE_B`):
    /// `/proc/vmstat` prints it in pages, `memory.stat` in bytes.
    pub const fn in_bytes(self) -> bool {
        matches!(self, Stat::NrSlabReclaimableB | Stat::NrSlabUnreclaimableB)
    }

    /// Whether `/proc/vmstat` prints the item in PMD-sized pages though it is kept in pages
    /// (`vmstat_item_print_in_thp`: `NR_ANON_THPS`, of the THP items the model keeps);
    /// `memory.stat` prints it in bytes.
    pub const fn in_thps(self) -> bool {
        matches!(self, Stat::NrAnonThps)
    }
}

/// Number of counters.
pub const NR_STATS: usize = Stat::ALL.len();

/// A full set of counters (used for lruvec-local, lruvec-hierarchical and global values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counters(pub [i64; NR_STATS]);

impl Default for Counters {
    fn default() -> Self {
        Counters([0; NR_STATS])
    }
}

impl Counters {
    /// Value of `s`.
    #[inline]
    pub fn get(&self, s: Stat) -> i64 {
        self.0[s as usize]
    }
    /// Add `d` to `s`.
    #[inline]
    pub fn add(&mut self, s: Stat, d: i64) {
        self.0[s as usize] += d;
    }
    /// Element-wise sum.
    pub fn add_all(&mut self, o: &Counters) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            *a += *b;
        }
    }
    /// The value as `/proc/vmstat` shows it: pages for the items kept in bytes
    /// ([`Stat::in_bytes`], `global_node_page_state_pages`), PMD-sized pages for
    /// `nr_anon_transparent_hugepages` ([`Stat::in_thps`]), the value itself for the others.
    pub fn shown(&self, s: Stat) -> i64 {
        if s.in_bytes() {
            self.get(s) >> 12
        } else if s.in_thps() {
            self.get(s) / i64::from(super::thp::HPAGE_PMD_NR)
        } else {
            self.get(s)
        }
    }
    /// `self - earlier`, element-wise (for deltas between two snapshots).
    pub fn delta(&self, earlier: &Counters) -> Counters {
        let mut c = self.clone();
        for (a, b) in c.0.iter_mut().zip(earlier.0.iter()) {
            *a -= *b;
        }
        c
    }
}

/// The items `/proc/vmstat` prints (every [`Stat`] but the memcg-only ones), in its order.
pub fn proc_vmstat_items() -> impl Iterator<Item = Stat> {
    Stat::ALL.iter().copied().filter(|s| s.kind() != StatKind::Memcg)
}

/// Format counters as `/proc/vmstat` does: `name value` per line, in kernel order (byte items in
/// pages, [`Counters::shown`]).
pub fn format_proc_vmstat(c: &Counters) -> String {
    let mut out = String::new();
    for s in proc_vmstat_items() {
        let _ = writeln!(out, "{} {}", s.name(), c.shown(s));
    }
    out
}

/// Per-memcg events of `memory.events` (`enum memcg_memory_event`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemcgEvents {
    /// Reclaimed while below `memory.low` (protection breached).
    pub low: u64,
    /// Over `memory.high`: reclaim forced.
    pub high: u64,
    /// Charge hit `memory.max`.
    pub max: u64,
    /// OOM condition reached.
    pub oom: u64,
    /// Processes killed by the OOM killer.
    pub oom_kill: u64,
    /// Group kills.
    pub oom_group_kill: u64,
}

impl MemcgEvents {
    /// `memory.events` text.
    pub fn format(&self) -> String {
        format!(
            "low {}\nhigh {}\nmax {}\noom {}\noom_kill {}\noom_group_kill {}\n",
            self.low, self.high, self.max, self.oom, self.oom_kill, self.oom_group_kill
        )
    }
    /// Element-wise sum (hierarchical view).
    pub fn add_all(&mut self, o: &MemcgEvents) {
        self.low += o.low;
        self.high += o.high;
        self.max += o.max;
        self.oom += o.oom;
        self.oom_kill += o.oom_kill;
        self.oom_group_kill += o.oom_group_kill;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_ordered_by_kind() {
        let mut names: Vec<_> = Stat::ALL.iter().map(|s| s.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), NR_STATS);
        // zone items, then node items, then events, as /proc/vmstat prints them
        let kinds: Vec<_> = Stat::ALL.iter().map(|s| s.kind() as u8).collect();
        assert!(kinds.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn proc_vmstat_format() {
        let mut c = Counters::default();
        c.add(Stat::PgscanKswapd, 42);
        c.add(Stat::NrSlabReclaimableB, 3 * 4096 + 100);
        c.add(Stat::MemcgKmem, 7);
        let text = format_proc_vmstat(&c);
        assert!(text.starts_with("nr_free_pages 0\n"));
        assert!(text.contains("\npgscan_kswapd 42\n"));
        assert!(text.contains("\nnr_slab_reclaimable 3\n"), "bytes shown in pages");
        assert!(
            !text.lines().any(|l| l.starts_with("kernel ")),
            "a memcg-only item is not in /proc/vmstat"
        );
        assert!(
            text.contains("\nnr_kernel_stack 0\nnr_page_table_pages 0\n"),
            "in the kernel's order"
        );
        assert_eq!(text.lines().count(), NR_STATS - 1);
    }

    /// `nr_anon_transparent_hugepages` is kept in pages and printed in 2 MiB pages, in the
    /// kernel's place among the node items; the THP events follow `unevictable_pgs_rescued` in
    /// `vmstat_text`'s order (the same in 6.1, 6.12 and 7.2 for the events the model counts).
    #[test]
    fn thp_items_in_the_kernels_order_and_unit() {
        let mut c = Counters::default();
        c.add(Stat::NrAnonThps, 3 * 512);
        c.add(Stat::ThpFaultAlloc, 3);
        c.add(Stat::ThpSwpoutFallback, 1);
        let text = format_proc_vmstat(&c);
        assert!(
            text.contains("\nnr_writeback 0\nnr_shmem 0\nnr_anon_transparent_hugepages 3\nnr_vmscan_write 0\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "\nunevictable_pgs_rescued 0\nthp_fault_alloc 3\nthp_fault_fallback 0\n\
                 thp_fault_fallback_charge 0\nthp_split_page 0\nthp_split_pmd 0\nthp_swpout 0\n\
                 thp_swpout_fallback 1\nswap_ra 0\n"
            ),
            "{text}"
        );
    }
}

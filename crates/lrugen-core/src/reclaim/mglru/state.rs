// SPDX-License-Identifier: GPL-2.0-only
//! MGLRU state: constants, the kernel profiles (switches and presets), and the per-lruvec `lru_gen_folio` and
//! `lru_gen_mm_state` (`include/linux/mmzone.h`).

use super::bloom::BloomFilter;
use crate::mm::folio::ListHead;
use serde::{Deserialize, Serialize};

/// `MIN_NR_GENS`: the two youngest generations are never evicted (the "active" ones).
pub const MIN_NR_GENS: u64 = 2;
/// `MAX_NR_GENS`: generations per type.
pub const MAX_NR_GENS: usize = 4;
/// `MAX_NR_TIERS`.
pub const MAX_NR_TIERS: usize = 4;
/// `MIN_LRU_BATCH` (`BITS_PER_LONG`).
pub const MIN_LRU_BATCH: u64 = 64;
/// `MAX_LRU_BATCH`.
pub const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * 64;
/// `MAX_NR_ZONES` (zones per node in this model).
pub const MAX_NR_ZONES: usize = 4;
/// History slots when `CONFIG_LRU_GEN_STATS` is on (`NR_HIST_GENS`); 1 otherwise.
pub const MAX_NR_HIST_GENS: usize = MAX_NR_GENS;
/// mm-walk statistics slots (6 in 6.1: `LOYNFA`; 4 in mainline: `TYFA`).
pub const MAX_NR_MM_STATS: usize = 6;
/// `SWAPPINESS_ANON_ONLY` (mainline): proactive reclaim of anon only.
pub const SWAPPINESS_ANON_ONLY: u32 = 201;

/// Declares [`Switches`]: one `bool` per kernel change, with its name list and by-name access.
macro_rules! switches {
    ($( $(#[$meta:meta])* $name:ident ),* $(,)?) => {
        /// The behaviour switches of a kernel profile: one per kernel change that altered MGLRU's
        /// behaviour (or the classic LRU's, or both: one switch), and per proposed variant, named
        /// after it, `true` when the change is in (the newer behaviour). Every
        /// place that behaves differently across kernels reads exactly one of these
        /// (`if self.sw().vma_has_recency { … }`); no code asks for a version. A [`Profile`] is a
        /// preset of them ([`Preset`]) with any switches flipped on top. See `kernel-mglru.md`
        /// §14 and §17; "first release unconfirmed" means that only the switch's state in the
        /// kernels read (6.1.192, 6.12.117, the 6.17 description, 7.2.13) is established.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Switches {
            $( $(#[$meta])* pub $name: bool, )*
        }

        impl Switches {
            /// The switch names, in declaration order (oldest kernel change first).
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            /// The switch called `name`.
            pub fn get(&self, name: &str) -> Option<bool> {
                match name {
                    $(stringify!($name) => Some(self.$name),)*
                    _ => None,
                }
            }

            /// Set the switch called `name`; false if there is none.
            pub fn set(&mut self, name: &str, on: bool) -> bool {
                match name {
                    $(stringify!($name) => { self.$name = on; true })*
                    _ => false,
                }
            }

            const ALL_OFF: Switches = Switches { $($name: false,)* };
        }
    };
}

switches! {
    /// 6.3, "mm: add vma_has_recency()" (Yu Zhao): the rmap walk of `folio_referenced` skips
    /// VMAs without recency (`VM_SEQ_READ`, `VM_RAND_READ`; `invalid_folio_referenced_vma`), so a
    /// young PTE in an `MADV_RANDOM` mapping no longer counts. Off: 6.1, where only MGLRU's
    /// look-around skips them and the young bit still counts unless `VM_SEQ_READ`.
    vma_has_recency,
    /// 6.3, e4dde56cd208 "mm: multi-gen LRU: per-node lru_gen_folio lists" (Yu Zhao): the memcg
    /// LRU (`reclaim::mglru::memcg_lru`). Root reclaim goes through `lru_gen_shrink_node`:
    /// `shrink_many` walks the old generation of the node's memcg LRU from a random bin, and
    /// `shrink_one`'s verdict rotates each memcg (young once it aged, one retry at the tail when
    /// too small or below `memory.low`, young when below `memory.min`); memcg reclaim that ages
    /// a lruvec moves it to the young generation too. Off (6.1): root reclaim is the classic
    /// `shrink_node_memcgs` walk of the whole tree, in tree order.
    memcg_lru,
    /// 6.3, "mm: multi-gen LRU: remove aging fairness safeguard" and "… remove eviction fairness
    /// safeguard" (Yu Zhao), with `set_initial_priority` and the watermark `should_abort_scan`
    /// (≈6.7, "mm/mglru: try to stop at high watermarks"): kswapd no longer ages every memcg in
    /// `lru_gen_age_node` (only `min_ttl` is left there); aging happens in the eviction path
    /// (`get_nr_to_scan`), the lruvec loop is `try_to_shrink_lruvec`, `!may_swap` makes
    /// swappiness 0. Off: 6.1's `lru_gen_shrink_lruvec`.
    eviction_path_aging,
    /// Between 6.3 and 6.12 (first release unconfirmed; 6.3's "mm: multi-gen LRU: simplify
    /// lru_gen_look_around()" (T.J. Alumbaugh) first updated every generation in place, a later
    /// change went to activation; Debian 6.12.118 and 7.2.13 activate): look-around without a
    /// page-table walk attached (every reclaimer but kswapd) hands each young neighbour outside
    /// `max_seq` to `folio_activate` (the `lru_activate` batch: a physical move to `max_seq`,
    /// counted in `pgactivate`), so eviction later finds no lazily promoted neighbour to sort
    /// (`pgrefill` 0 on the 6.12 `mmap-normal` fixture). With a walk, generations are updated in
    /// place. Off: 6.1's bitmap, activating the neighbours only when fewer than `PAGEVEC_SIZE`
    /// (15), else updating their generations in place under the `lru_lock`. From 6.14,
    /// `workingset_protection_rework`'s look-around (`walk_update_folio`: `lru_gen_set_refs` on
    /// every young neighbour, activating those outside `max_seq`) replaces this path, which then
    /// does not read the switch.
    look_around_activate,
    /// ≈6.5, "mm: vmscan: make rotations a secondary factor in balancing anon vs file" (Johannes
    /// Weiner; the classic LRU only; first release unconfirmed: off in 6.1.192, on in 6.12.118): `lru_note_cost` weighs a page of I/O as `SWAP_CLUSTER_MAX`
    /// and adds the CPU work of rotations (`shrink_inactive_list`'s scanned but not reclaimed,
    /// `shrink_active_list`'s rotated), so `get_scan_count` leans away from the type whose
    /// folios keep coming back. Off (6.1): a cost is one per page written out or refaulted from
    /// the workingset, and rotations cost nothing.
    lru_cost_rotations,
    /// After 6.12 (in Debian 7.2.13, not in 6.12.118; first release unconfirmed, the 6.17
    /// description does not say), Hugh Dickins' "mm: optimize lru_note_cost() by adding
    /// lru_note_cost_unlock_irq()" (the classic LRU only): `lru_note_cost_unlock_irq` returns at
    /// once when the cost is zero, so a `shrink_inactive_list` batch that wrote nothing out and
    /// reclaimed every folio it scanned no longer walks the lruvec and its ancestors, and no longer
    /// halves both costs where they exceed a quarter of an LRU that has shrunk since the last
    /// note: the anon/file balance `get_scan_count` reads decays only when a cost is added. Off
    /// (6.1, 6.12): every `lru_note_cost` call from `shrink_inactive_list` decays, cost or not,
    /// and `shrink_active_list` calls it only with rotations; on, `shrink_active_list` takes the
    /// lock for it after every pass (`lruvec_lock_irq` + `lru_note_cost_unlock_irq`, 7.2.13's
    /// `mm/vmscan.c`), rotations or not.
    lru_note_cost_skips_zero,
    /// 6.9, "mm: madvise: pageout: ignore references rather than clearing young" (Barry Song):
    /// `MADV_PAGEOUT` leaves the accessed bits and reclaims ignoring references. Off: 6.1,
    /// where `MADV_COLD`/`PAGEOUT` both clear young PTEs and `reclaim_pages` checks references.
    pageout_ignore_references,
    /// 6.11, 6be5e186fd65 "mm: vmscan: restore incremental cgroup iteration" (Johannes Weiner),
    /// with "mm: vmscan: reset sc->priority on retry" (Shakeel Butt): `shrink_node_memcgs` walks
    /// the tree with the per-node reclaim cookie of the reclaim's target (`mem_cgroup_iter`'s
    /// `position` and `generation`), so direct and memcg reclaim resume where the last walk
    /// stopped and stop once `nr_to_reclaim` pages are reclaimed; kswapd always walks the whole
    /// tree, and `do_try_to_free_pages` retries with full walks (`memcg_full_walk`) before it
    /// gives up. Off (6.1): every walk visits the whole subtree from its root.
    incremental_cgroup_iteration,
    /// 6.11, "mm: multi-gen LRU: use {ptep,pmdp}_clear_young_notify()" (Yu Zhao; the
    /// `kernel-mglru.md` §17 table's "look-around returns bool, clears the target PTE itself";
    /// checked in Debian 6.12.118's `lru_gen_look_around`): look-around first clears the accessed
    /// bit of the PTE that rmap found, returns whether it was young, and counts it in `young`;
    /// its window then skips that PTE (no longer young), so the isolated folio under eviction is
    /// not marked `PG_referenced` by its own look-around. `folio_check_references` then sees one
    /// young PTE and no `PG_referenced`: `FOLIOREF_KEEP` (`nr_ref_keep`), where 6.1 activates it
    /// (`pgactivate`). Either way `evict_folios` puts it back to `max_seq - 1` (refs and flags
    /// reset, `PG_active` set), so this moves the counters, not the placement. A window of one
    /// page returns at once. Off: 6.1, where `folio_referenced_one` hands a young PTE to
    /// look-around, whose window clears it with its neighbours and marks the isolated target
    /// `PG_referenced`. From 6.14 `workingset_protection_rework` does the same and does not
    /// read this switch.
    look_around_clears_target,
    /// 6.12, "mm: vmscan: use ratelimited memcg stats flush in the reclaim" (Shakeel Butt): the
    /// classic LRU's `prepare_scan_control` flushes the memcg statistics only when the last flush
    /// is more than 4 s old (`mem_cgroup_flush_stats_ratelimited`), so between the flush
    /// worker's 2-second runs it reads frozen `WORKINGSET_ACTIVATE_*` and list sizes: it sees new
    /// refaults, and deactivates because of them, once per flush period (`mm::rstat`). Off: 6.1's
    /// `mem_cgroup_flush_stats()`, a flush whenever more than 64 updates per CPU are pending.
    reclaim_ratelimited_stats_flush,
    /// ≤6.12 (first release unconfirmed; the sources read: Debian 6.1.192's `PAGEVEC_SIZE` is
    /// 15, 6.12.118's `PAGEVEC_SIZE` and 7.2.13's `FOLIO_BATCH_SIZE` are 31): the per-CPU
    /// `lru_add` batch holds 31 folios. A buffered read marks its new folio accessed while it
    /// waits there, so where placement reads `PG_referenced` (`folio_seq_referenced`) all but
    /// the folio that fills the batch land a generation younger. Off: 15. The batch is the
    /// kernel's, so the classic LRU reads this switch too (`Classic::folio_batch_size`).
    folio_batch_size_31,
    /// 6.12.y, "mm: vmscan: fix dirty folios throttling on cgroup v1 for MGLRU" (Jingxiang Zeng;
    /// in 6.12.117): `sort_folio` counts dirty file folios into `nr_file_taken` and
    /// `nr_unqueued_dirty`, and the lruvec loop wakes the flushers when all taken file folios
    /// were unqueued dirty. Changes nothing once `dirty_writeback_reactivation` isolates dirty
    /// folios (6.12.117) or `reclaim_loop_single_budget` wakes the flushers per batch (7.2, whose
    /// series removed `sc->file_taken`).
    dirty_throttling_counts,
    /// ≤6.12 (first release unconfirmed; `kernel-mglru.md` §17.1 rows 9, 24): with the 6.1
    /// refault test, `workingset_refault` counts every refault on the same lruvec and
    /// `workingset_activate` every recent one, instead of `sort_folio` counting
    /// `workingset_activate` when it protects a tier (6.1).
    workingset_activate_at_refault,
    /// 6.13, "mm/mglru: reset page lru tier bits when activating" (Wei Xu; backported to 6.12.y,
    /// in Debian 6.12.118): `lru_gen_add_folio` of a `PG_active` folio clears its refs and
    /// `PG_referenced` (not `PG_workingset`), and look-around clears all of them before
    /// `folio_activate`; so a refault in a fault (refs saturated + `PG_workingset`, then
    /// `PG_active`) lands in `max_seq` at tier 1, not tier 3. Superseded by
    /// `workingset_protection_rework` (6.14), which places and counts refs its own way and does
    /// not read this switch. Off: 6.1, where an activated folio keeps its refs.
    activate_clears_refs,
    /// 6.14, "mm/mglru: rework aging feedback" (Yu Zhao): anon and file `min_seq` move
    /// independently within ±1 generation (`try_to_inc_min_seq`), `evictable_min_seq` decides
    /// aging, the stop of a batch, `min_ttl`, the first row of `lru_gen` and the end of a
    /// debugfs `-`; no young/old balance in `should_run_aging`; debugfs `+` takes a swappiness
    /// and fails with `EEXIST` when it created nothing. Off: `min_seq[anon]` ≤ `min_seq[file]`.
    aging_feedback_rework,
    /// 6.14, "mm/mglru: rework type selection" (Yu Zhao): `get_type_to_scan` compares the sum
    /// of all tiers, the tier index is always against the type's own tier 0 with gains 2 : 3;
    /// no `min_seq` shortcut. Off: PID on tier 0, gains 1 : 2, tier index vs the other type.
    type_selection_rework,
    /// 6.14, "mm/mglru: rework refault detection" (Yu Zhao): a refault is recent while its
    /// generation is within `MAX_NR_GENS` of `max_seq`; `workingset_refault` always,
    /// `workingset_activate` only in a fault, `PG_workingset` and `workingset_restore` from the
    /// shadow's workingset bit. Off: token `min_seq` must equal the current one.
    refault_detection_rework,
    /// 6.14, "mm/mglru: rework workingset protection" (Yu Zhao): refs = mask + 1 while
    /// `PG_referenced`, `PG_workingset` = tier 3, saturation at refs + workingset = 5
    /// (`refs_plus_workingset_saturation`), the rmap and walk "second chance"
    /// (`lru_gen_set_refs`), `lru_gen_folio_seq` placement (`PG_active` → `max_seq − 1`),
    /// `folio_inc_gen` keeps `PG_workingset`, `lru_gen_clear_refs` on deactivation,
    /// `protected[tier]` (not `tier − 1`), protected folios to the head of `min_seq + 1`,
    /// `inc_min_seq` counting what it moves, the put-back rule for rejected folios. Off: the
    /// 6.1/6.12 encoding (2nd access sets `PG_workingset`, tier = order_base_2(refs + 1)).
    workingset_protection_rework,
    /// ≈6.14 (first release unconfirmed; 6.12 still has `walk->can_swap`, §17.1 row 7): the
    /// page-table walk carries a swappiness (201 skips file VMAs), `get_pfn_folio` requires a
    /// folio on an MGLRU list, and a walk needs the `MM_WALK` capability even when forced.
    walk_swappiness,
    /// Between 6.1 and 6.12 (first release unconfirmed: Debian 6.1.192's `walk_pmd_range` tests
    /// the non-leaf PMD accessed bit in every walk, 6.12.118's only under `!walk->force_scan &&
    /// should_clear_pmd_young()`): a forced walk (an mm new to the list, a forced `+`) neither
    /// skips a PMD table whose non-leaf accessed bit is clear nor clears the bit, so the next
    /// walk still finds every table the task touched. Off (6.1): tested and cleared in every
    /// walk, so the walk after a forced one visits only the tables used since. The same rework
    /// moved the young test of a huge PMD into `get_pmd_pfn`, which skips an old one without
    /// counting it `MM_LEAF_OLD` (6.1 counts it).
    forced_walk_keeps_nonleaf_young,
    /// 6.15, "mm: add swappiness=max arg to memory.reclaim for only anon reclaim" (Zhongkun He):
    /// swappiness 201 (`SWAPPINESS_ANON_ONLY`; debugfs `max`) reclaims anon only.
    swappiness_max,
    /// 6.7, "mm: add swapiness= arg to memory.reclaim" (Dan Schatzberg): `memory.reclaim` takes
    /// `swappiness=N` keys after the size, and its size no longer goes through
    /// `page_counter_memparse` (an empty write is `EINVAL`, not `PAGE_COUNTER_MAX` pages; the
    /// count is no longer capped). Off (6.1): the size alone (`reclaim::memory_reclaim`).
    memory_reclaim_swappiness,
    /// ≤6.12 (first release unconfirmed; "mm: memcg: use larger batches for proactive reclaim",
    /// T.J. Mercier): each `memory.reclaim` iteration asks for a quarter of what is left (at
    /// least `SWAP_CLUSTER_MAX`). Off (6.1): all that is left. (The kernels between had a cap of
    /// `SWAP_CLUSTER_MAX` per iteration, not a preset here.)
    memory_reclaim_quarter_batch,
    /// 6.17 (first release unconfirmed, `kernel-mglru.md` §14 "Scan budget"): `scan_folios`
    /// examines at most `min(nr_to_scan, MAX_LRU_BATCH)` folios and a debugfs `-` batch is
    /// `MAX_LRU_BATCH`. Off: `MAX_LRU_BATCH` per call, whatever the budget.
    scan_batch_bounded,
    /// ≤6.12 (first release unconfirmed, §17.0): four mm-walk statistics (`TYFA`) and the `x`
    /// markers (`RTx`/`xxx`) in `lru_gen_full`, whose mm-stats line needs a walk state. Off:
    /// 6.1's six `LOYNFA` statistics and blank markers.
    mm_stats_tyfa,
    /// 7.2, "mm/mglru: use the common routine for dirty/writeback reactivation" (of "mm/mglru:
    /// improve reclaim loop and dirty folio handling"; backported to 6.12.117): `sort_folio` has
    /// no dirty/writeback branch; such folios are isolated, and `shrink_folio_list` marks dirty
    /// file folios `PG_reclaim`, counts `nr_vmscan_immediate_reclaim` and activates them
    /// (`pgactivate`). Off: `sort_folio` moves them to `min_seq + 1` with `PG_reclaim`.
    dirty_writeback_reactivation,
    /// 7.2, "mm/mglru: use folio_mark_accessed to replace folio_set_active": a folio added in a
    /// fault on a VMA with recency gets `PG_active` only with `PG_workingset`; any other gets
    /// `folio_mark_accessed` (`PG_referenced`, refs 1). Off: every such folio gets `PG_active`.
    fault_mark_accessed,
    /// 7.2 (`kernel-mglru.md` §17.1 row 3; the commit is one of the 7.2 reclaim series,
    /// subject unconfirmed): `lru_gen_folio_seq` places a non-active, non-tail folio with
    /// `PG_referenced` (not only `PG_workingset`) in `max_seq − 2`, so a folio referenced while
    /// in the per-CPU add batch lands a generation younger.
    folio_seq_referenced,
    /// 7.2 (§17.1 row 6, subject unconfirmed): `lru_gen_set_refs` in three steps: no refs →
    /// `PG_referenced`, KEEP; refs ≤ 1 → `folio_mark_accessed`, ACTIVATE; more → `PG_workingset`,
    /// ACTIVATE. Off (6.14–6.17): the second sighting sets `PG_workingset`.
    set_refs_three_step,
    /// 7.2, "mm/mglru: improve reclaim loop and dirty folio handling" (the series; §17.1 rows
    /// 11–14, §17.2): the lruvec budget is computed once, batches of at most 64 folios, aging at
    /// any priority when only two generations are left, root reclaim stops after the first batch
    /// that followed an aging attempt, `evict_folios` returns exactly the pages examined and
    /// flushes empty generations before and after isolating, the flushers are woken per batch,
    /// and a debugfs `-` asks each batch for what is left of its `nr_to_reclaim` (at most
    /// `MAX_LRU_BATCH`: `- ... 64` that reclaims 63 of its first batch scans one folio more, not
    /// 64; `tests/ctl.rs`).
    reclaim_loop_single_budget,
    /// 7.2 (§17.1 row 17, of the reclaim-loop series): `should_abort_scan` also stops memcg
    /// reclaim once `nr_to_reclaim` pages are reclaimed. Off: memcg reclaim never stops early.
    memcg_reclaim_early_stop,
    /// 7.2, "mm: move pgscan, pgsteal, pgrefill to node stats" (JP Kobryn; §17.1 row 30):
    /// `pgscan_*`, `pgsteal_*` and `pgrefill` are lruvec statistics, counted in `/proc/vmstat`
    /// for memcg reclaim too, and `memory.stat` prints them among its state items (after
    /// `pgdemote_*`, `pgrefill` last, before `pgpromote_success`) rather than among the events
    /// (`mm::memory_stat`). Off: the global events leave cgroup reclaim out.
    node_reclaim_stats,
    /// 7.2 (Debian 7.2.13's `should_try_to_free_swap`, "Always try to free swap cache for
    /// SWP_SYNCHRONOUS_IO devices"; first release unconfirmed): every swap fault on zram frees
    /// the folio's swap slot once no other swap entry holds it, whether the folio was read or
    /// found in the swap cache. Off (6.1–6.17): only a read of a slot that one PTE referenced
    /// bypasses the swap cache and frees it ("skip swapcache" in `do_swap_page`); a swap-cache
    /// hit keeps its slot.
    sync_io_always_frees_swap,
    /// 7.2 (§17.1 row 24): a recent refault counts `workingset_activate` only if it also restores
    /// `PG_workingset` from the shadow, in a fault. Off (6.14–6.17): every recent refault in a
    /// fault counts it.
    workingset_activate_needs_workingset,
    /// 7.2 (Debian 7.2.13's `mm/workingset.c`), "mm: workingset: use lruvec_lru_size() to get
    /// the number of lru pages" (Qi Zheng, of the series reparenting LRU folios of dying memcgs,
    /// v6 March 2026; first release unconfirmed): the shadow shrinker's limit
    /// (`count_shadow_nodes`: a memcg keeps at most (LRU + slab pages) / 8 shadow-only leaves)
    /// reads the LRU pages from the memcg's per-zone LRU sizes (`lruvec_lru_size`), which MGLRU
    /// never updates (`lru_gen_update_size` calls `__update_lru_size` only), so under MGLRU a
    /// memcg's limit counts only its unevictable and slab pages and its shadow-only leaves are
    /// reclaimed far sooner (the 7.2 MGLRU `hot-cold` fixture: 256 leaves, none on 6.1/6.12 or
    /// under the classic LRU). Off (6.1–6.17): its `NR_LRU_*` statistics, which both LRUs keep.
    workingset_lruvec_lru_size,
    /// 7.2 (Debian 7.2.13's `memcg_reparent_objcgs` in `mm/memcontrol.c`, `lru_gen_reparent_memcg`
    /// and `max_lru_gen_memcg` in `mm/vmscan.c`, `lru_reparent_memcg` in `mm/swap.c`; Qi Zheng's
    /// and Muchun Song's series reparenting the LRU folios of dying memcgs, of which
    /// `workingset_lruvec_lru_size` is part; first release unconfirmed): removing a memcg
    /// (`rmdir`, `mem_cgroup_css_offline`) moves its LRU folios to its parent at once: the
    /// classic lists spliced to the tail of the parent's, MGLRU's generation lists to the tail
    /// of the parent's list of the same generation slot after the parent was aged to
    /// `MAX_NR_GENS` generations without a walk; the folios and their statistics are the
    /// parent's from then on, and the removed memcg is freed once no swap entry records its id.
    /// Off (6.1–6.17): the removed memcg stays a zombie holding its folios, charged and on its
    /// own lruvecs, until reclaim of its ancestors has taken them all.
    reparent_lru_folios,
    /// Variant, not merged (off in every kernel preset; `variants.md` §2.7): Barry Song's
    /// readahead placement (2026, LWN 1060967 and 1072866): only the folio a fault on a VMA with
    /// recency asked for gets the in-fault treatment (`PG_active`, or 7.2's
    /// `folio_mark_accessed`); the folios read around or ahead of it in the same fault are added
    /// as outside a fault (oldest placement), since most of them are never touched. Off: every
    /// folio read in the fault is placed young. The refault accounting of those folios is
    /// unchanged (still "in a fault"); the proposal's exact form is inferred from the placement
    /// rules.
    readahead_placement,
    /// Variant, not merged (off in every kernel preset; `variants.md` §2.5): Kairui Song's
    /// refault distance for MGLRU ("workingset, lru_gen: apply refault-distance based
    /// re-activation", RFC, Sept 2023; again in "mm/mglru: MGLRU-FG and refault distance
    /// support", RFC 00/32, May 2026): each lruvec counts its evictions (`LruGen::evictions`), a
    /// shadow also keeps that clock, and a refault whose distance (evictions since) is at most the
    /// classic workingset size (`workingset_test_recent`'s formula, anon included when swap is
    /// usable) gets `PG_active`, so it is placed in `max_seq − 1` (`max_seq` with
    /// `PG_workingset`; 6.1's placement: `max_seq`). The shadow token then keeps 16 bits of
    /// `min_seq` and the clock the other 18 (a distance of 2^18 evictions or more wraps).
    /// Counters are unchanged (no `workingset_activate` of its own). Off: no distance check;
    /// also off under `fg_unified_refs` (MGLRU-FG v3 has no refault distance).
    refault_distance,
    /// MGLRU-FG (Kairui Song, "mm/mglru: frequency guided promotion (MGLRU-FG)", v3, Oct 2026,
    /// on mm-new; not merged; `variants.md` §1). v3: one access counter `refs` in
    /// `0..=LRU_REFS_MAX` (7) replaces `PG_referenced`/`PG_workingset` and the refs field
    /// (bit 0 in `PG_referenced`, bit 1 in `PG_workingset`, bit 2 in the refs field: the
    /// intermediate encoding, no new flag bit); REFERENCED = 1, WORKINGSET = 2, ACTIVATED = 3 are
    /// thresholds on it; tier = `fls(refs − 1)`; placement keyed on `refs ≥ 2`; the shadow keeps
    /// the tier and `refs ≥ 2`; no refault distance (the RFC had one; v3 dropped it).
    fg_unified_refs,
    /// MGLRU-FG v3 (needs `fg_unified_refs`): an fd access that would take `refs` past 7 moves
    /// the folio to the next generation (capped at `max_seq`, lazily: `sort_folio` relinks it)
    /// and sets `refs` to 3.
    fg_access_promotion,
    /// MGLRU-FG v3 (needs `fg_unified_refs`): an fd access to a folio of its type's `min_seq`
    /// that leaves `refs ≥ 2` moves it to `min_seq + 1` (lazily).
    fg_min_seq_promotion,
    /// MGLRU-FG v3: the PID controller's `get_tier_idx` gains go back to 1 : 2 (setpoint :
    /// process variable) from 6.14's 2 : 3.
    fg_pid_gains_1_2,
    /// MGLRU-FG ablation (`variants.md` §1.4 "Interaction with PID tier protection", inferred;
    /// off in every preset): with `fg_unified_refs`, `sort_folio` no longer protects a folio
    /// whose tier is above the PID's `tier_idx`; only access-time promotion protects fd-accessed
    /// folios. Off: the header's "protected by folio_inc_lru_refs/inc_gen" (both mechanisms).
    fg_no_tier_protection,
    /// 6.14–6.15, Kairui Song's swap allocator series ("mm, swap: rework of swap allocator
    /// locks" and "mm, swap_slots: remove slot cache for freeing path" in 6.14, "mm, swap: use
    /// percpu cluster as allocation fast path" and "mm, swap: remove swap slot cache" in 6.15;
    /// one switch, as no preset lies between): a CPU allocates swap slots from a cluster of its
    /// own and takes the device's lock only for a new cluster (512 slots), and freeing takes only
    /// the cluster's lock. Off (6.1, 6.12): per-CPU slot caches refilled and returned 64 slots at
    /// a time under `si->lock`. Machine-wide, not MGLRU's: the classic LRU's runs read it too.
    /// Changes no counter, only the engine's lock timeline (`tests/contention.rs`).
    swap_percpu_cluster,
    /// MGLRU-FG, RFC 00/32 ("MGLRU-FG and refault distance support", May 2026; off in the
    /// `mglru-fg` preset, v3 as modelled having dropped it): with `fg_unified_refs`, a refault
    /// whose distance (evictions of the lruvec since the folio's, inferred) is within
    /// `refault_threshold_pct` of the workingset size (the classic formula, inferred) gets
    /// `PG_active` (placement `max_seq − 1`, or `max_seq` if workingset) and counts
    /// `workingset_activate`.
    fg_refault_distance,
    /// 6.7, "mm: add statistics for PUD level pagetable" (Baolin Wang): `pud_alloc_one` calls
    /// `pagetable_pud_ctor`, so an address space's PUD tables count in `NR_PAGETABLE`
    /// (`memory.stat` `pagetables`, `/proc/vmstat` `nr_page_table_pages`). They are charged to the
    /// memcg either way (`GFP_PGTABLE_USER`); off (6.1), `memory.stat` shows them only in
    /// `kernel`. Machine-wide, read by both LRUs (`Machine::pud_pgtable_stats`); changes no
    /// reclaim decision.
    pud_pgtable_stats,
    /// 6.14, 68c601de75d8 "mm: introduce ctor/dtor at PGD level" (Kevin Brodsky): the PGD is
    /// counted in `NR_PAGETABLE` too (`pagetable_pgd_ctor`, x86 through the generic
    /// `__pgd_alloc`). Off (6.1, 6.12): charged, shown only in `kernel`.
    pgd_pgtable_stats,
    /// 7.2 (Debian 7.2.13's `do_swap_page`: every swap-cache miss on a `SWP_SYNCHRONOUS_IO`
    /// device goes to `swapin_sync`, "Swapin bypasses readahead", part of the swap-table rework
    /// of the swap cache; first release unconfirmed): a fault on zram (or a RAM disk) never
    /// reads ahead. Off (6.1–6.17): only a slot one PTE references bypasses the swap cache and
    /// read-ahead; a slot that fork shares is read through `swapin_readahead`, with
    /// `vm.page-cluster`'s window around it. Machine-wide: both LRUs read it.
    sync_io_skips_readahead,
    /// 6.15, Hao Jia's "mm: vmscan: split proactive reclaim statistics from direct reclaim
    /// statistics" (the release from a third-party note; Debian 7.2.13's `reclaimer_offset` and
    /// the ctl fixtures confirm it there, 6.12 has it not): reclaim with `sc->proactive`
    /// (`memory.reclaim`, and the debugfs `-`, whose scan control is proactive too) counts
    /// `pgscan_proactive`/`pgsteal_proactive` instead of `pgscan_direct`/`pgsteal_direct`, and
    /// `memory.stat` prints them and `pgdemote_proactive` (`mm::memory_stat`).
    /// Off (6.1, 6.12): direct. Read by both LRUs; changes no reclaim decision.
    proactive_reclaim_stats,
    /// 7.x (Debian 7.2.13's `lru_gen_seq_show` and `lru_gen_seq_write`; the change itself not
    /// identified, 6.17 has it not): `mem_cgroup_id()` is the 64-bit cgroup id, so the debugfs
    /// `lru_gen` header is `memcg %llu %s` (unpadded: `memcg 28 /t` in the 7.2 guest) and the
    /// `+`/`-` commands read a 64-bit id. Off: `memcg %5hu %s`, a 16-bit id right-aligned in
    /// five columns. Changes only the text.
    lru_gen_memcg_id_u64,
    /// After 6.12 (first release unconfirmed; Debian 6.12.118's `get_nr_to_scan` scales nothing,
    /// 7.2.13's goes through `apply_proportional_protection`; the model's 6.17 has it): an
    /// lruvec's scan budget is scaled down by how much of its memcg's usage `memory.min`/`low`
    /// protects, as the classic LRU's `get_scan_count` does, so a mostly protected memcg gives
    /// little at each priority and its unprotected siblings give first. Off: the whole budget
    /// until the memcg is below its protection.
    mglru_proportional_protection,
    /// 6.3, "mm: multi-gen LRU: clarify scan_control flags" (Yu Zhao): `lru_gen_shrink_lruvec`
    /// and `lru_gen_shrink_node` call `set_mm_walk(…, sc->proactive)`, so proactive reclaim
    /// (`memory.reclaim`) has a page-table walk attached from its start and its look-around
    /// updates generations in place. Off (6.1: `set_mm_walk(pgdat)`): only kswapd starts with
    /// one; any other reclaimer gets one from its first aging on, until the end of the pass.
    proactive_mm_walk,
    /// 6.3, 3222d8c2a7f8 "block: remove ->rw_page" (Christoph Hellwig; the series "remove
    /// ->rw_page"): swap I/O to a synchronous device (zram, brd) goes through `submit_bio` like
    /// any other, so it counts `pgpgin`/`pgpgout`. Off (6.1): such a device has a `->rw_page`
    /// (which is also what makes it `SWP_SYNCHRONOUS_IO`), `swap_readpage` reads through
    /// `bdev_read_page` and `__swap_writepage` writes through `bdev_write_page`, neither of which
    /// counts `pgpgin`/`pgpgout`; only a large folio, which `zram_rw_page` refuses, is written
    /// by a bio and counted (a 6.1 guest swapping to zram shows `pgpgin 0` and `pgpgout` 2048
    /// per THP swapped out whole). Machine-wide (`Machine::swap_io_counts_pgpg`): both LRUs read
    /// it. Changes only those two counters.
    remove_rw_page,
    /// 6.3, "mm: vmscan: split khugepaged stats from direct reclaim stats" (Johannes Weiner):
    /// `memory.stat` prints `pgscan_khugepaged` and `pgsteal_khugepaged` (the model has no
    /// khugepaged: 0) and its `pgscan`/`pgsteal` sums include them (`mm::memory_stat`). Off
    /// (6.1): no such lines. Changes only the `memory.stat` text.
    memcg_khugepaged_reclaim_stats,
    /// 6.8, "mm: memcg: add per-memcg zswap writeback stat" (Domenico Cerasuolo): `memory.stat`
    /// prints `zswpwb` (no zswap in the model: 0). Off (6.1). Changes only the text.
    memcg_zswap_writeback_stat,
    /// Between 6.1 and 6.12 (≈6.8, "mm: memcg: add THP swap out info for anonymous reclaim",
    /// Xin Hao; first release unconfirmed: Debian 6.12.118's `memcg_vm_event_stat[]` has it,
    /// 6.1.192's not): `memory.stat` prints `thp_swpout` and `thp_swpout_fallback`, which the
    /// memcg counts from then on (`count_memcg_folio_events` beside `count_vm_event` in
    /// `swap_writepage` and `shrink_folio_list`). Off (6.1).
    memcg_thp_swpout_stats,
    /// 6.11, "mm,memcg: provide per-cgroup counters for NUMA balancing operations" (Kaiyang
    /// Zhao): `memory.stat` prints `pgdemote_kswapd`, `pgdemote_direct`, `pgdemote_khugepaged`
    /// and (`CONFIG_NUMA_BALANCING`) `pgpromote_success` after the workingset lines, and the
    /// events `numa_pages_migrated`, `numa_pte_updates`, `numa_hint_faults` at the end: the
    /// model's tiering (`reclaim::tiering`) counts all but the khugepaged one. Off (6.1): none of
    /// them per memcg. Changes only the text.
    memcg_numa_balancing_stats,
    /// 6.12, "mm: count zeromap read and set for swapout and swapin" (Barry Song): `memory.stat`
    /// prints `swpin_zero` and `swpout_zero` (the model knows no page contents, so no page is
    /// known to be zero-filled: 0). Off (6.1). Changes only the text.
    memcg_swap_zero_stats,
    /// After 6.12 (≈6.15, Jingxiang Zeng's per-memcg swap-in/out counters; first release
    /// unconfirmed: Debian 6.12.118's `memcg_vm_event_stat[]` has them not, 7.2.13's has them
    /// first): `memory.stat` prints `pswpin` and `pswpout` before the other events, the pages
    /// the memcg's folios were swapped in and out (`count_memcg_folio_events` in
    /// `mm/page_io.c`; the model counts them per memcg on every kernel). Off (6.1, 6.12).
    /// Changes only the text.
    memcg_swap_io_stats,
    /// 7.x (Debian 7.2.13's `memory_stats[]`; the change itself not identified, 6.12 has it
    /// not): `memory.stat` prints `zswap_incomp` after `zswapped` (no zswap in the model: 0).
    /// Off (6.1–6.17). Changes only the text.
    memcg_zswap_incomp_stat,
    /// 7.x ("memcg: multi-memcg percpu charge cache", Shakeel Butt, 2025; in Debian 7.2.13's
    /// mm/memcontrol.c, not in 6.12.118's; first release unconfirmed): a CPU's charge stock
    /// caches up to `NR_MEMCG_STOCK` (7) memcgs, a refill for one not cached takes a free slot
    /// or drains the one at `drain_idx` (round robin), a refill of more than a batch goes
    /// straight back to the page counter, and draining a CPU's stock drains all its slots. Off
    /// (6.1, 6.12): one memcg per CPU, drained whenever another one's pages are stocked.
    /// Machine-wide (`Memcgs::stock_slots`); with one memcg per CPU it changes nothing.
    memcg_stock_multi,
    /// 7.x (Debian 7.2.13's `include/trace/events/vmscan.h`; 6.12.118's prints neither field;
    /// the change itself not identified): the tracepoints `mm_vmscan_direct_reclaim_begin`/`_end`
    /// and `mm_vmscan_memcg_reclaim_begin`/`_end` end with `pid=%d memcg_id=%llu %s`: the
    /// reclaiming task's pid, `mem_cgroup_id()` of the memcg reclaimed (0 for direct reclaim,
    /// which passes none) and `(in-irq)` or nothing, so the line ends in a space. Off (6.1, 6.12,
    /// 6.17): `order=%d gfp_flags=%s` and `nr_reclaimed=%lu` alone. Changes only the
    /// `lrugen kernel --ftrace` text of the model.
    vmscan_reclaim_trace_ids,
    /// 6.6, EEVDF (147f3efaa241 "sched/fair: Implement an EEVDF-like scheduling policy", Peter
    /// Zijlstra) with `RUN_TO_PARITY` (63304558ba5d "sched/eevdf: Curb wakeup-preemption"): a
    /// waking task does not preempt the running one before that one has had its slice since it
    /// was picked, so a kswapd woken by an allocation waits, on a CPU it shares with the
    /// allocating task, while that task allocates down to the min watermark and reclaims
    /// directly. Off (6.1, CFS): a kswapd that slept long wakes with the sleeper credit and
    /// preempts at the task's next preemption point. The scheduler's, not MGLRU's: machine-wide,
    /// read by both LRUs, and only where the machine has a slice
    /// ([`crate::mm::MachineConfig::sched_slice_ns`]; the kernel comparisons give the guest's).
    eevdf_run_to_parity,
    /// 6.7, Huang Ying's series "mm: PCP high auto-tuning" ("mm: tune PCP high automatically",
    /// "mm, pcp: decrease PCP high if free pages < high watermark", "mm, page_alloc: scale the
    /// number of pages that are batch allocated", "mm, pcp: reduce detecting time of consecutive
    /// high order page freeing"): a zone's per-CPU page list ([`crate::mm::node::Pcp`]) tunes
    /// its `high` between `high_min` and `high_max` (up at refills while the zone is above its
    /// high watermark, down by the run of frees below it and under kswapd, an eighth a second in
    /// `decay_pcp_high`), doubles its refill batch over a run of allocations, and sizes a flush
    /// by the run of frees. Off (6.1): `high` stays where `zone_highsize` set it, a refill takes
    /// one `batch`, a flush at `high` (at `min(batch << 2, high)` while kswapd reclaims the zone)
    /// frees `batch << free_factor` pages, doubling over a run of flushes with no allocation
    /// between, and nothing decays. The page allocator's, not MGLRU's: machine-wide, read by
    /// both LRUs, and only where the machine has per-CPU lists (built from a guest's zones,
    /// [`crate::mm::node::ZoneBoot::pcp`]).
    pcp_high_auto_tune,
    /// 7.x (first release unconfirmed; Debian 7.2.13's `kswapd_try_clear_hopeless`, 6.12.118
    /// has it not), Jiayuan Chen's "mm/vmscan: mitigate spurious kswapd_failures reset from
    /// direct reclaim": a `shrink_node` pass (and MGLRU's `lru_gen_shrink_node`) that reclaimed
    /// something resets the node's `kswapd_failures` only if the node is then balanced
    /// (`pgdat_balanced` up to the pass's `reclaim_idx`), so that memcg reclaim that keeps
    /// succeeding (a `memory.high` or `memory.max` squeeze) no longer revives a kswapd that gave
    /// up on a node it cannot balance. Off (6.1, 6.12): any progress resets it. Read by both
    /// LRUs' reclaim (`reclaim::vmscan::shrink_node`).
    kswapd_clear_hopeless_balanced,
    /// 7.x (first release unconfirmed; Debian 7.2.13's `free_frozen_page_commit` calls
    /// `kswapd_clear_hopeless(…, KSWAPD_CLEAR_HOPELESS_PCP)`, 6.12.118 has it not): an order-0
    /// free that brings a zone marked `ZONE_BELOW_HIGH` back above its high watermark (clearing
    /// the flag) also resets the node's `kswapd_failures`, if kswapd had given up on the node and
    /// another memory node follows it (a fallback node, through which allocations may have
    /// avoided the direct reclaim that would otherwise have revived kswapd). Off: only reclaim
    /// resets it. Machine-wide (`Machine::free_frame`), and only where the zones have per-CPU
    /// lists with auto-tuning (`pcp_high_auto_tune`, which keeps `ZONE_BELOW_HIGH`) on a machine
    /// of several nodes.
    pcp_free_clears_hopeless,
}

impl Switches {
    /// Debian 6.1.192: the series as merged (v14/v15).
    pub const V6_1: Switches = Switches::ALL_OFF;
    /// Debian 6.12.117: the 6.3–6.12 changes, none of the 6.14 rework (`kernel-mglru.md` §17.3).
    pub const V6_12: Switches = Switches {
        vma_has_recency: true,
        lru_cost_rotations: true,
        memcg_lru: true,
        eviction_path_aging: true,
        pageout_ignore_references: true,
        incremental_cgroup_iteration: true,
        reclaim_ratelimited_stats_flush: true,
        look_around_activate: true,
        look_around_clears_target: true,
        activate_clears_refs: true,
        folio_batch_size_31: true,
        dirty_throttling_counts: true,
        workingset_activate_at_refault: true,
        mm_stats_tyfa: true,
        dirty_writeback_reactivation: true,
        memory_reclaim_swappiness: true,
        memory_reclaim_quarter_batch: true,
        pud_pgtable_stats: true,
        forced_walk_keeps_nonleaf_young: true,
        proactive_mm_walk: true,
        memcg_khugepaged_reclaim_stats: true,
        memcg_zswap_writeback_stat: true,
        memcg_thp_swpout_stats: true,
        memcg_numa_balancing_stats: true,
        memcg_swap_zero_stats: true,
        remove_rw_page: true,
        eevdf_run_to_parity: true,
        pcp_high_auto_tune: true,
        ..Switches::ALL_OFF
    };
    /// The kernel spec's ≈6.17 (`kernel-mglru.md` §§2–13), the model's former "mainline".
    pub const V6_17: Switches = Switches {
        swap_percpu_cluster: true,
        proactive_reclaim_stats: true,
        pgd_pgtable_stats: true,
        aging_feedback_rework: true,
        type_selection_rework: true,
        refault_detection_rework: true,
        workingset_protection_rework: true,
        walk_swappiness: true,
        swappiness_max: true,
        scan_batch_bounded: true,
        mglru_proportional_protection: true,
        memcg_swap_io_stats: true,
        dirty_writeback_reactivation: false,
        ..Switches::V6_12
    };
    /// Debian 7.2.13.
    pub const V7_2: Switches = Switches {
        lru_note_cost_skips_zero: true,
        dirty_writeback_reactivation: true,
        fault_mark_accessed: true,
        folio_seq_referenced: true,
        set_refs_three_step: true,
        reclaim_loop_single_budget: true,
        memcg_reclaim_early_stop: true,
        node_reclaim_stats: true,
        workingset_activate_needs_workingset: true,
        sync_io_always_frees_swap: true,
        sync_io_skips_readahead: true,
        workingset_lruvec_lru_size: true,
        reparent_lru_folios: true,
        lru_gen_memcg_id_u64: true,
        kswapd_clear_hopeless_balanced: true,
        pcp_free_clears_hopeless: true,
        memcg_zswap_incomp_stat: true,
        memcg_stock_multi: true,
        vmscan_reclaim_trace_ids: true,
        ..Switches::V6_17
    };
    /// MGLRU-FG v3 on top of the newest kernel preset (7.2): every `fg_*` switch on.
    pub const MGLRU_FG: Switches = Switches {
        fg_unified_refs: true,
        fg_access_promotion: true,
        fg_min_seq_promotion: true,
        fg_pid_gains_1_2: true,
        ..Switches::V7_2
    };
}

/// A named set of switches: the kernels the model knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Preset {
    /// Debian 6.1.192.
    #[serde(rename = "6.1")]
    V6_1,
    /// Debian 6.12.117.
    #[serde(rename = "6.12")]
    V6_12,
    /// The ≈6.17 kernel of `kernel-mglru.md` §§2–13.
    #[serde(rename = "6.17")]
    V6_17,
    /// Debian 7.2.13.
    #[serde(rename = "7.2")]
    V7_2,
    /// MGLRU-FG v3 (a proposed variant, not a kernel): 7.2 plus the `fg_*` switches.
    #[serde(rename = "mglru-fg")]
    MglruFg,
}

impl Preset {
    /// Every kernel preset, oldest first (the variant presets, [`Preset::MglruFg`], are not kernels
    /// and are left out).
    pub const ALL: [Preset; 4] = [Preset::V6_1, Preset::V6_12, Preset::V6_17, Preset::V7_2];
    /// What `mainline` stands for: the newest kernel preset, 7.2 (issue 10: "`mainline` (= the
    /// newest)"). It was 6.17 while the 7.2 preset missed 15 % more than Debian 7.2.13 on the
    /// legacy mixed fixture; that kernel turned out bimodal there (six boots: 9,743–9,890 or
    /// 10,941–11,241 misses) with the 7.2 preset in its upper mode
    /// (`crates/lrugen-kernel/tests/fixture_vs_model.rs`, `mixed_model_vs_debian_7_2`), and the
    /// 7.2 shapes hold (`crates/lrugen-kernel/tests/shapes.rs`).
    pub const MAINLINE: Preset = Preset::V7_2;

    /// Its name on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            Preset::V6_1 => "6.1",
            Preset::V6_12 => "6.12",
            Preset::V6_17 => "6.17",
            Preset::V7_2 => "7.2",
            Preset::MglruFg => "mglru-fg",
        }
    }

    /// Its switches.
    pub fn switches(self) -> Switches {
        match self {
            Preset::V6_1 => Switches::V6_1,
            Preset::V6_12 => Switches::V6_12,
            Preset::V6_17 => Switches::V6_17,
            Preset::V7_2 => Switches::V7_2,
            Preset::MglruFg => Switches::MGLRU_FG,
        }
    }
}

/// Which kernel's MGLRU to model: a preset, and its switches (the preset's, possibly with some
/// flipped). Every place that depends on the kernel reads one switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Profile {
    /// The preset the switches started from.
    pub preset: Preset,
    /// The switches in effect.
    pub switches: Switches,
}

impl Default for Profile {
    fn default() -> Self {
        Profile::MAINLINE
    }
}

impl Profile {
    /// The 6.1 preset.
    pub const V6_1: Profile = Profile::of(Preset::V6_1);
    /// The 6.12 preset.
    pub const V6_12: Profile = Profile::of(Preset::V6_12);
    /// The 6.17 preset.
    pub const V6_17: Profile = Profile::of(Preset::V6_17);
    /// The 7.2 preset.
    pub const V7_2: Profile = Profile::of(Preset::V7_2);
    /// The MGLRU-FG v3 variant (7.2 + `fg_*`).
    pub const MGLRU_FG: Profile = Profile::of(Preset::MglruFg);
    /// `mainline`: the newest preset.
    pub const MAINLINE: Profile = Profile::of(Preset::MAINLINE);

    /// A preset with its own switches.
    pub const fn of(preset: Preset) -> Profile {
        let switches = match preset {
            Preset::V6_1 => Switches::V6_1,
            Preset::V6_12 => Switches::V6_12,
            Preset::V6_17 => Switches::V6_17,
            Preset::V7_2 => Switches::V7_2,
            Preset::MglruFg => Switches::MGLRU_FG,
        };
        Profile { preset, switches }
    }

    /// The preset's name (`6.1`, `6.12`, `6.17`, `7.2`, `mglru-fg`).
    pub fn name(&self) -> &'static str {
        self.preset.name()
    }

    /// The switches that differ from the preset's, with their values, in declaration order.
    pub fn flipped(&self) -> Vec<(&'static str, bool)> {
        let base = self.preset.switches();
        Switches::NAMES
            .iter()
            .filter_map(|&n| {
                let v = self.switches.get(n)?;
                (base.get(n) != Some(v)).then_some((n, v))
            })
            .collect()
    }

    /// The preset's name followed by the flipped switches: `7.2`, `7.2+vma_has_recency=false`.
    pub fn label(&self) -> String {
        let mut s = self.name().to_string();
        for (n, v) in self.flipped() {
            s.push_str(&format!("+{n}={v}"));
        }
        s
    }

    /// Flip switch `name` to `on`; an error naming the valid switches if there is none.
    pub fn set_switch(&mut self, name: &str, on: bool) -> Result<(), String> {
        if self.switches.set(name, on) {
            Ok(())
        } else {
            Err(format!(
                "unknown MGLRU switch '{name}': expected one of {}",
                Switches::NAMES.join(", ")
            ))
        }
    }

    /// Apply a `NAME=true|false` assignment (the command line's `--switch`).
    pub fn apply_assignment(&mut self, text: &str) -> Result<(), String> {
        let Some((name, value)) = text.split_once('=') else {
            return Err(format!("expected NAME=true or NAME=false, found '{text}'"));
        };
        let on = match value.trim() {
            "true" | "1" | "on" => true,
            "false" | "0" | "off" => false,
            v => return Err(format!("switch '{}': expected true or false, found '{v}'", name.trim())),
        };
        self.set_switch(name.trim(), on)
    }

    /// Number of mm-walk statistics (`NR_MM_STATS`).
    pub fn nr_mm_stats(&self) -> usize {
        if self.switches.mm_stats_tyfa {
            4
        } else {
            6
        }
    }
    /// Letters of the mm-walk statistics in `lru_gen_full`.
    pub fn mm_stat_chars(&self) -> &'static str {
        if self.switches.mm_stats_tyfa {
            "TYFA"
        } else {
            "LOYNFA"
        }
    }
}

/// The profile names `from_str` accepts (for help texts and errors).
pub const PROFILE_NAMES: &str = "6.1, 6.12, 6.17, 7.2, mainline or mglru-fg";

impl std::str::FromStr for Profile {
    type Err = String;
    /// A preset name, optionally followed by flipped switches as [`Profile::label`] prints them:
    /// `7.2`, `mglru-fg+fg_refault_distance=true+fg_pid_gains_1_2=false`.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.split('+');
        let preset = parts.next().unwrap_or_default();
        let mut profile = Profile::of(preset_from_str(preset)?);
        for a in parts {
            profile.apply_assignment(a).map_err(|e| format!("profile '{s}': {e}"))?;
        }
        Ok(profile)
    }
}

/// A preset by name (`mainline` is the newest kernel one).
fn preset_from_str(s: &str) -> Result<Preset, String> {
    {
        let p = match s {
            "6.1" | "v6.1" => Preset::V6_1,
            "6.12" | "v6.12" => Preset::V6_12,
            "6.17" | "v6.17" => Preset::V6_17,
            "7.2" | "v7.2" => Preset::V7_2,
            "mainline" => Preset::MAINLINE,
            "mglru-fg" | "fg" => Preset::MglruFg,
            _ => return Err(format!("unknown kernel profile '{s}': expected {PROFILE_NAMES}")),
        };
        Ok(p)
    }
}

/// mm-walk statistics indices. Mainline: `MM_LEAF_TOTAL`, `MM_LEAF_YOUNG`, `MM_NONLEAF_FOUND`,
/// `MM_NONLEAF_ADDED`; 6.1 adds `MM_LEAF_OLD` and `MM_NONLEAF_TOTAL`. Stored here in the 6.1
/// layout; mainline shows indices 0, 2, 4, 5.
pub mod mm_stat {
    /// Leaf entries seen.
    pub const LEAF_TOTAL: usize = 0;
    /// Old leaf entries (6.1).
    pub const LEAF_OLD: usize = 1;
    /// Young leaf entries.
    pub const LEAF_YOUNG: usize = 2;
    /// Non-leaf entries seen (6.1).
    pub const NONLEAF_TOTAL: usize = 3;
    /// Non-leaf entries found in the Bloom filter.
    pub const NONLEAF_FOUND: usize = 4;
    /// Non-leaf entries added to the Bloom filter.
    pub const NONLEAF_ADDED: usize = 5;
    /// Mainline's four, in `TYFA` order.
    pub const MAINLINE: [usize; 4] = [LEAF_TOTAL, LEAF_YOUNG, NONLEAF_FOUND, NONLEAF_ADDED];
}

/// Where the mms added since the last walk start (`mm_state->tail`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MmTail {
    /// Never walked: every mm counts as new (the kernel's NULL tail).
    #[default]
    Unset,
    /// No mm was added since the last walk (the tail points at the list head).
    End,
    /// The first mm added since the last walk.
    Mm(u32),
}

/// `struct lru_gen_mm_state`: where the page-table walk of this lruvec stands.
#[derive(Clone, Debug, Default)]
pub struct MmState {
    /// First mm added since the last iteration.
    pub tail: MmTail,
    /// Set to `max_seq` after each full iteration over the mm list.
    pub seq: u64,
    /// Walk statistics per history slot.
    pub stats: [[u64; MAX_NR_MM_STATS]; MAX_NR_HIST_GENS],
    /// The double-buffered Bloom filters (`None` until first reset, as the kernel allocates lazily).
    pub filters: [Option<BloomFilter>; 2],
}

/// `struct lru_gen_folio`: the generations of one lruvec.
#[derive(Clone, Debug)]
pub struct LruGen {
    /// Youngest generation number (shared by both types).
    pub max_seq: u64,
    /// Oldest generation number per type (anon, file).
    pub min_seq: [u64; 2],
    /// Birth time (jiffies) of each generation slot.
    pub timestamps: [u64; MAX_NR_GENS],
    /// The lists `[gen][type][zone]`; head = youngest end.
    pub folios: [[[ListHead; MAX_NR_ZONES]; 2]; MAX_NR_GENS],
    /// Page counts `[gen][type][zone]` (may lag the lists while a walk batch is pending).
    pub nr_pages: [[[i64; MAX_NR_ZONES]; 2]; MAX_NR_GENS],
    /// EMA of refaulted pages per type and tier.
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// EMA of evicted + protected pages per type and tier.
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    /// Pages protected per history slot, type and tier (6.1 uses slots `tier − 1`).
    pub protected: [[[u64; MAX_NR_TIERS]; 2]; MAX_NR_HIST_GENS],
    /// Pages evicted per history slot, type and tier.
    pub evicted: [[[u64; MAX_NR_TIERS]; 2]; MAX_NR_HIST_GENS],
    /// Recent refaults per history slot, type and tier.
    pub refaulted: [[[u64; MAX_NR_TIERS]; 2]; MAX_NR_HIST_GENS],
    /// Page-table walk state.
    pub mm_state: MmState,
    /// Folios evicted so far: the non-resident clock of the `refault_distance` variant
    /// (`lruvec->evictions` in Kairui Song's series; unused otherwise).
    pub evictions: u64,
    /// MGLRU-FG with `fg_refault_distance`: evictions of this lruvec so far (the clock of the
    /// refault distance, as the classic LRU's `nonresident_age`; not propagated to ancestors).
    pub nonresident_age: u64,
    /// Its place in its node's memcg LRU (`gen`, `seg`, `list`; `memcg_lru`).
    pub memcg_list: super::memcg_lru::MemcgLink,
}

impl LruGen {
    /// `lru_gen_init_lruvec`: `max_seq = MIN_NR_GENS + 1`, `min_seq = 0`, all timestamps `now`.
    pub fn new(now: u64) -> Self {
        LruGen {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0, 0],
            timestamps: [now; MAX_NR_GENS],
            folios: Default::default(),
            nr_pages: Default::default(),
            avg_refaulted: Default::default(),
            avg_total: Default::default(),
            protected: Default::default(),
            evicted: Default::default(),
            refaulted: Default::default(),
            mm_state: MmState {
                seq: MIN_NR_GENS,
                ..Default::default()
            },
            evictions: 0,
            nonresident_age: 0,
            memcg_list: Default::default(),
        }
    }

    /// Pages of `type` in generation slot `gen`, over all zones, clamped at 0 (as debugfs reads them).
    pub fn gen_pages(&self, gen: usize, t: usize) -> u64 {
        self.nr_pages[gen][t].iter().map(|&n| n.max(0) as u64).sum()
    }
}

/// `lru_gen_from_seq`.
#[inline]
pub fn gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS as u64) as usize
}

/// `lru_hist_from_seq` for `nr_hist` history slots.
#[inline]
pub fn hist_from_seq(seq: u64, nr_hist: usize) -> usize {
    (seq % nr_hist as u64) as usize
}

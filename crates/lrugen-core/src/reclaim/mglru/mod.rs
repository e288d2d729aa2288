// SPDX-License-Identifier: GPL-2.0-only
//! The multi-gen LRU (`lru_gen`): generations instead of two lists, tiers fed by a PID controller
//! on refaults, page-table walks with Bloom filters, rmap look-around (`mm/vmscan.c`, the lru_gen
//! half; `Documentation/mm/multigen_lru.rst`).
//!
//! The sections follow the kernel's: the folio flags and placement (this file), aging
//! (`aging`: generations, the mm list, the page-table walk, look-around), eviction (`eviction`),
//! refaults (`workingset`), the PID controller (`pid`), Bloom filters (`bloom`) and debugfs
//! (`debugfs`). The kernel is a value ([`Profile`]): a preset (`6.1`, `6.12`, `6.17`, `7.2`;
//! `mainline` = the newest) of behaviour switches ([`Switches`], one per kernel change), any of
//! which a run may flip; every difference between kernels reads one switch. The variant
//! MGLRU-FG (v3) is the preset `mglru-fg`: 7.2 plus the `fg_*` switches (`variants.md` §1).

pub mod admin;
pub mod aging;
pub mod bloom;
pub mod debugfs;
pub mod eviction;
pub mod memcg_lru;
pub mod pid;
pub mod state;
pub mod sysfs;
pub mod workingset;

use super::{AddCtx, FolioRef, ListRef, Policy, ScanControl};
use crate::mm::folio::{pg, Folio, FolioId, ListHead, ANON, FILE};
use crate::mm::memcg::MemcgId;
use crate::mm::vmstat::Stat;
use crate::mm::{Lru, Machine, FBATCH_DEACTIVATE, FBATCH_ROTATE};
pub use state::{
    gen_from_seq, hist_from_seq, LruGen, Preset, Profile, Switches, MAX_NR_GENS, MAX_NR_TIERS, MIN_NR_GENS,
};

/// `/sys/kernel/mm/lru_gen/enabled` capability bits.
pub mod caps {
    /// `LRU_GEN_CORE`.
    pub const CORE: u32 = 0x1;
    /// `LRU_GEN_MM_WALK`: clear accessed bits in leaf PTEs in batches via page-table walks.
    pub const MM_WALK: u32 = 0x2;
    /// `LRU_GEN_NONLEAF_YOUNG`: also clear accessed bits in non-leaf PMDs.
    pub const NONLEAF_YOUNG: u32 = 0x4;
}

/// MGLRU configuration of a run.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct MglruConfig {
    /// Kernel profile.
    pub profile: Profile,
    /// `enabled` capability bits (default 0x7).
    pub caps: u32,
    /// `arch_has_hw_pte_young()`: the MMU sets accessed bits in PTEs. Without it, accesses are
    /// seen only through rmap and look-around (the kernel emulates the bit with faults, and never
    /// walks page tables).
    pub hw_pte_young: bool,
    /// `arch_has_hw_nonleaf_pmd_young()`: the MMU sets accessed bits in non-leaf PMD entries.
    pub hw_nonleaf_pmd_young: bool,
    /// `CONFIG_LRU_GEN_STATS` (4 history slots instead of 1).
    pub stats: bool,
    /// `/sys/kernel/mm/lru_gen/min_ttl_ms`.
    pub min_ttl_ms: u64,
    /// MGLRU-FG's numeric and named parameters (`[mglru.fg]`; read only under `fg_unified_refs`).
    #[serde(default)]
    pub fg: FgParams,
}

/// When an fd access promotes a folio under MGLRU-FG (`variants.md` §1.4 "Trigger and reset").
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromoteTrigger {
    /// The access that would take `refs` past `refs_max` promotes (v3 as modelled; inferred).
    Exceed,
    /// The access that takes `refs` to `refs_max` promotes.
    Reach,
}

/// How an access-time promotion is applied (`variants.md` §1.4 "How the promotion is applied").
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromotionMode {
    /// Only the gen counter (and the sizes) change; `sort_folio` relinks the folio later, as after
    /// a page-table walk (`folio_update_gen`). Inferred.
    Lazy,
    /// The folio moves to the head of its new generation's list at once.
    Eager,
}

/// MGLRU-FG's inferred or unknown points that are numbers or named choices (`variants.md` §1.4,
/// §1.7), `[mglru.fg]` in an experiment file (sweepable: `"mglru.fg.reset_refs" = [0, 1, 3]`).
/// The yes/no points are switches (`fg_no_tier_protection`, `fg_refault_distance`). Defaults are
/// the `mglru-fg` preset as modelled (v3); where `variants.md` §1.7 suggests another value, the
/// field says so. Settled from source: the tier mapping `fls(refs − 1)`, WORKINGSET = 2 (RFC
/// 06/32), placement keyed on `refs ≥ WORKINGSET`, `REFERENCED < ACTIVATED` (build check), the
/// bit layout (`mm_inline.h` of a tree with the series); one generation per promotion (06/32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FgParams {
    /// `LRU_REFS_MAX`, the counter's ceiling: 7 (v3 as modelled: three bits, no new flag bit;
    /// `variants.md` §1.7 gives 8). At most 8 (`fls(LRU_REFS_MAX − 1) ≤ MAX_NR_TIERS − 1`), more
    /// than `reset_refs` and at least `LRU_REFS_WORKINGSET` + 1.
    pub refs_max: u32,
    /// `LRU_REFS_REFERENCED`, what `folio_set_referenced` raises `refs` to and
    /// `folio_test_referenced` tests: 1 (inferred from the bit layout: `PG_referenced` is bit 0);
    /// 1..=`LRU_REFS_WORKINGSET` here (the build check asks for below `ACTIVATED`).
    pub refs_referenced: u32,
    /// `refs` after an access-time promotion: 3 (v3 as modelled, `LRU_REFS_ACTIVATED`; RFC 06/32
    /// says the promotion "resets the reference times count", `variants.md` §1.7: 0 or 1).
    pub reset_refs: u32,
    /// Which access promotes: `exceed` (v3 as modelled) or `reach`.
    pub promote_trigger: PromoteTrigger,
    /// Generations per access-time promotion: 1 (RFC 06/32: "one gen at a time"), capped at
    /// `max_seq`. 1..=3.
    pub promote_step: u32,
    /// `lazy` (inferred, as modelled) or `eager`.
    pub promotion_mode: PromotionMode,
    /// The page-table path (`folio_inc_lru_refs_walk`, rmap and walk): a young PTE promotes (walk:
    /// to `max_seq`; rmap: activates) a folio whose `refs` is at least this, raising `refs` to at
    /// least WORKINGSET; below it the sighting adds one reference. 1 (inferred: the 7.2 "second
    /// chance" on the unified counter); 0 promotes on the first sighting. 0..=`refs_max`.
    pub walk_min_refs: u32,
    /// With `fg_refault_distance`: activate a refault whose distance is at most this percentage
    /// of the workingset size (the classic formula of `workingset_test_recent`): 100 (inferred,
    /// as the 2023 RFC). 1..=1000.
    pub refault_threshold_pct: u32,
}

impl Default for FgParams {
    fn default() -> Self {
        FgParams {
            refs_max: pid::FG_REFS_MAX,
            refs_referenced: pid::FG_REFS_REFERENCED,
            reset_refs: pid::FG_REFS_ACTIVATED,
            promote_trigger: PromoteTrigger::Exceed,
            promote_step: 1,
            promotion_mode: PromotionMode::Lazy,
            walk_min_refs: 1,
            refault_threshold_pct: 100,
        }
    }
}

impl FgParams {
    /// Check the values against each other and the kernel's build-time checks; an error names
    /// the field and what was expected.
    pub fn check(&self) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((format!("mglru.fg.{k}"), m));
        let ws = pid::FG_REFS_WORKINGSET;
        if self.refs_max <= ws || self.refs_max > pid::FG_REFS_STORE_MAX {
            return e(
                "refs_max",
                format!(
                    "LRU_REFS_MAX {} out of range {}..={} (above LRU_REFS_WORKINGSET {ws}; fls(LRU_REFS_MAX - 1) <= MAX_NR_TIERS - 1)",
                    self.refs_max,
                    ws + 1,
                    pid::FG_REFS_STORE_MAX
                ),
            );
        }
        if self.refs_referenced == 0 || self.refs_referenced > ws {
            return e(
                "refs_referenced",
                format!(
                    "LRU_REFS_REFERENCED {} out of range 1..={ws} (at most LRU_REFS_WORKINGSET)",
                    self.refs_referenced
                ),
            );
        }
        if self.reset_refs >= self.refs_max {
            return e(
                "reset_refs",
                format!("reset_refs {} is not below refs_max {}", self.reset_refs, self.refs_max),
            );
        }
        if !(1..=3).contains(&self.promote_step) {
            return e(
                "promote_step",
                format!("promote_step {} out of range 1..=3 generations", self.promote_step),
            );
        }
        if self.walk_min_refs > self.refs_max {
            return e(
                "walk_min_refs",
                format!(
                    "walk_min_refs {} is above refs_max {}",
                    self.walk_min_refs, self.refs_max
                ),
            );
        }
        if !(1..=1000).contains(&self.refault_threshold_pct) {
            return e(
                "refault_threshold_pct",
                format!(
                    "refault_threshold_pct {} out of range 1..=1000 (percent of the workingset size)",
                    self.refault_threshold_pct
                ),
            );
        }
        Ok(())
    }
}

impl Default for MglruConfig {
    fn default() -> Self {
        MglruConfig {
            profile: Profile::MAINLINE,
            caps: caps::CORE | caps::MM_WALK | caps::NONLEAF_YOUNG,
            hw_pte_young: true,
            hw_nonleaf_pmd_young: true,
            stats: false,
            min_ttl_ms: 0,
            fg: FgParams::default(),
        }
    }
}

/// The multi-gen LRU policy.
#[derive(Clone, Debug)]
pub struct Mglru {
    /// Configuration.
    pub cfg: MglruConfig,
    /// Per lruvec (memcg × node) generations.
    pub lruvecs: Vec<LruGen>,
    /// Per lruvec unevictable list (MGLRU leaves unevictable folios on the classic list).
    pub unevictable: Vec<ListHead>,
    /// History slots (`NR_HIST_GENS`).
    pub nr_hist: usize,
    pub(crate) nr_nodes: usize,
    pub(crate) scratch: Vec<FolioId>,
    /// `evict_folios`'s `clean` and survivor lists, kept between calls so that eviction does not
    /// allocate.
    pub(crate) evict_scratch: [Vec<FolioId>; 2],
    /// `folio_referenced`'s mappings and look-around's neighbours, kept between calls.
    pub(crate) rmap_scratch: Vec<(u32, u32, crate::mm::vm::Vma)>,
    pub(crate) look_scratch: Vec<FolioId>,
    /// Whether the reclaim in progress has a page-table walk attached
    /// (`current->reclaim_state->mm_walk`): kswapd's always; another reclaimer's from the
    /// aging that allocated one (`try_to_inc_max_seq`'s `set_mm_walk(NULL, true)`) or from its
    /// start (`sc->proactive` from 6.3, a debugfs write) until the end of its
    /// `lru_gen_shrink_lruvec` or `lru_gen_shrink_node` (`clear_mm_walk`). Look-around with a walk
    /// attached updates generations in place instead of activating.
    pub(crate) mm_walk: bool,
    /// Folios `scan_folios` looked at in the `isolate_folios` in progress (the length of its
    /// `lru_lock` hold).
    pub(crate) lock_scanned: u64,
    /// MGLRU-FG access-time promotions (`fg_mark_accessed` moving a folio up), for the reports.
    pub fg_promotions: u64,
    /// Per node, the memcg LRU (`pgdat->memcg_lru`; read by root reclaim under `memcg_lru`).
    pub memcg_lru: Vec<memcg_lru::MemcgLru>,
    /// The state of the policy's random stream (`get_random_u32_below`), seeded from the
    /// machine's [`Machine::random_seed`].
    pub(crate) rng: u64,
}

impl Mglru {
    /// An MGLRU for machine `m`.
    pub fn new(m: &Machine, cfg: MglruConfig) -> Self {
        let n = m.memcgs.len() * m.nr_nodes();
        let now = m.jiffies();
        let mut p = Mglru {
            nr_hist: if cfg.stats { state::MAX_NR_HIST_GENS } else { 1 },
            cfg,
            lruvecs: (0..n).map(|_| LruGen::new(now)).collect(),
            unevictable: vec![ListHead::default(); n],
            nr_nodes: m.nr_nodes(),
            scratch: Vec::new(),
            evict_scratch: Default::default(),
            rmap_scratch: Vec::new(),
            look_scratch: Vec::new(),
            mm_walk: false,
            lock_scanned: 0,
            fg_promotions: 0,
            memcg_lru: vec![memcg_lru::MemcgLru::default(); m.nr_nodes()],
            rng: crate::workload::dist::mix64(m.random_seed ^ 0x6d65_6d63_675f_6c72),
        };
        // the memcgs the machine already has come online in the order they were created
        for memcg in 0..m.memcgs.len() {
            p.lru_gen_online_memcg(memcg as MemcgId);
        }
        p
    }

    /// The profile.
    #[inline]
    pub fn profile(&self) -> Profile {
        self.cfg.profile
    }

    /// The behaviour switches of the profile.
    #[inline]
    pub fn sw(&self) -> &Switches {
        &self.cfg.profile.switches
    }

    /// Lruvec index of a folio.
    #[inline]
    pub(crate) fn lv_of(&self, f: &Folio) -> usize {
        f.memcg as usize * self.nr_nodes + f.node()
    }

    /// Lruvec index of (memcg, node).
    #[inline]
    pub fn lv(&self, memcg: MemcgId, node: usize) -> usize {
        memcg as usize * self.nr_nodes + node
    }

    /// The generations of lruvec (memcg, node).
    pub fn lrugen(&self, memcg: MemcgId, node: usize) -> &LruGen {
        &self.lruvecs[self.lv(memcg, node)]
    }

    /// Whether the page-table walk may run (`should_walk_mmu`).
    pub fn should_walk_mmu(&self) -> bool {
        self.cfg.hw_pte_young && self.cfg.caps & caps::MM_WALK != 0
    }

    /// Whether non-leaf PMD accessed bits are used (`should_clear_pmd_young`).
    pub fn should_clear_pmd_young(&self) -> bool {
        self.cfg.hw_nonleaf_pmd_young && self.cfg.caps & caps::NONLEAF_YOUNG != 0
    }

    // ---------------------------------------------------------------------------------------------
    // Folio flags: refs and tiers (profile-dependent encoding, kernel-mglru.md §2.1 and §14)
    // ---------------------------------------------------------------------------------------------

    /// `LRU_REFS_FLAGS` of the profile, with the refs mask.
    #[inline]
    pub fn refs_flags(&self) -> u32 {
        // v3: the whole counter lives in these three places
        if self.sw().workingset_protection_rework && !self.sw().fg_unified_refs {
            pg::REFS_MASK | pg::REFERENCED
        } else {
            pg::REFS_MASK | pg::REFERENCED | pg::WORKINGSET
        }
    }

    /// `folio_lru_refs`: 6.1 counts accesses beyond the first (mask + workingset, 0..=4);
    /// mainline counts all (mask + 1 while referenced, else 0).
    #[inline]
    pub fn folio_lru_refs(&self, f: &Folio) -> u32 {
        pid::folio_lru_refs(self.sw(), f.flags)
    }

    /// The tier of a folio.
    #[inline]
    pub fn folio_tier(&self, f: &Folio) -> usize {
        pid::tier_from_refs(self.sw(), self.folio_lru_refs(f), f.test(pg::WORKINGSET))
    }

    /// `lru_gen_inc_refs` (mainline) / `folio_inc_refs` (6.1): one more file-descriptor access.
    pub fn inc_refs(&self, f: &mut Folio) {
        if f.test(pg::UNEVICTABLE) {
            return;
        }
        if self.sw().fg_unified_refs {
            // v3 `folio_inc_lru_refs`: one more access, saturating here; the overflow promotion
            // needs the lruvec and is done by `fg_mark_accessed`
            let refs = pid::fg_refs(f.flags);
            pid::fg_set_refs(&mut f.flags, (refs + 1).min(self.cfg.fg.refs_max));
            return;
        }
        if self.sw().workingset_protection_rework {
            if !f.test(pg::REFERENCED) {
                f.set(pg::REFERENCED);
                f.set_refs(0);
            } else if f.refs() < 3 {
                f.set_refs(f.refs() + 1);
            } else {
                f.set(pg::WORKINGSET);
            }
        } else if !f.test(pg::REFERENCED) {
            f.set(pg::REFERENCED);
        } else if !f.test(pg::WORKINGSET) {
            f.set(pg::WORKINGSET);
        } else if f.refs() < 3 {
            f.set_refs(f.refs() + 1);
        }
    }

    /// `lru_gen_set_refs` (6.14+): a young PTE seen through rmap. The first sighting only sets
    /// `PG_referenced` (returns false); a later one clears the refs, sets `PG_workingset` and asks
    /// for activation (returns true). 7.2 (`set_refs_three_step`): a folio with refs ≤ 1 gets one
    /// more reference (`folio_mark_accessed`) and is activated without `PG_workingset`.
    pub fn set_refs(&self, f: &mut Folio) -> bool {
        if self.sw().fg_unified_refs {
            // v3 (inferred: the rmap path keeps 7.2's steps on the unified counter): below
            // `walk_min_refs` (1) one more reference, keep; otherwise at least WORKINGSET, activate
            return self.fg_young_sighting(f);
        }
        if !f.test(pg::REFERENCED) && !f.test(pg::WORKINGSET) {
            f.set(pg::REFERENCED);
            return false;
        }
        if self.sw().set_refs_three_step && self.folio_lru_refs(f) <= 1 {
            self.inc_refs(f);
            return true;
        }
        f.clear(pg::REFS_MASK | pg::REFERENCED);
        f.set(pg::WORKINGSET);
        true
    }

    /// MGLRU-FG: a young PTE seen through rmap or a page-table walk (`folio_inc_lru_refs_walk`,
    /// inferred; `FgParams::walk_min_refs`). True if the folio is to be promoted (walk: to
    /// `max_seq`; rmap: activated), with `refs` raised to at least WORKINGSET; otherwise the
    /// sighting counts one reference (at least `LRU_REFS_REFERENCED`).
    pub fn fg_young_sighting(&self, f: &mut Folio) -> bool {
        let fg = self.cfg.fg;
        let refs = pid::fg_refs(f.flags);
        if refs < fg.walk_min_refs {
            let r = (refs + 1).max(fg.refs_referenced).min(fg.refs_max);
            pid::fg_set_refs(&mut f.flags, r);
            return false;
        }
        pid::fg_set_refs(&mut f.flags, refs.max(pid::FG_REFS_WORKINGSET));
        true
    }

    /// `folio_test_workingset`: v3 `refs ≥ LRU_REFS_WORKINGSET` under FG, else the flag.
    #[inline]
    pub fn test_workingset(&self, f: &Folio) -> bool {
        if self.sw().fg_unified_refs {
            pid::fg_refs(f.flags) >= pid::FG_REFS_WORKINGSET
        } else {
            f.test(pg::WORKINGSET)
        }
    }

    /// `folio_test_referenced`: v3 `refs ≥ LRU_REFS_REFERENCED` under FG, else the flag.
    #[inline]
    pub fn test_referenced(&self, f: &Folio) -> bool {
        if self.sw().fg_unified_refs {
            pid::fg_refs(f.flags) >= self.cfg.fg.refs_referenced
        } else {
            f.test(pg::REFERENCED)
        }
    }

    /// MGLRU-FG v3 `folio_mark_accessed` → `folio_inc_lru_refs`: one more fd access, with the
    /// access-time promotions (`fg_access_promotion`, `fg_min_seq_promotion`). A promotion only
    /// rewrites the gen counter (and the sizes); `sort_folio` relinks the folio, as after a
    /// page-table walk (inferred: lazy, as `folio_update_gen`; `variants.md` §1.4).
    pub fn fg_mark_accessed(&mut self, m: &mut Machine, id: FolioId) {
        let f = m.folios[id];
        if f.test(pg::UNEVICTABLE) {
            return;
        }
        let refs = pid::fg_refs(f.flags);
        let sw = *self.sw();
        let fg = self.cfg.fg;
        let on_list = f.test(pg::LRU) && f.gen_counter() != 0 && !f.test(pg::ISOLATED);
        // v3: an overflow past LRU_REFS_MAX moves the folio up, refs restart at `reset_refs` (3);
        // `reach` promotes on the access that takes refs to LRU_REFS_MAX instead (inferred)
        let fires = match fg.promote_trigger {
            PromoteTrigger::Exceed => refs >= fg.refs_max,
            PromoteTrigger::Reach => refs + 1 >= fg.refs_max,
        };
        let (new_refs, mut target) = if fires && sw.fg_access_promotion && on_list {
            (fg.reset_refs, Some(fg.promote_step as u64))
        } else {
            ((refs + 1).min(fg.refs_max), None)
        };
        let mut fm = f;
        pid::fg_set_refs(&mut fm.flags, new_refs);
        m.folios[id] = fm;
        if !on_list {
            return;
        }
        let lv = self.lv_of(&f);
        let lg = &self.lruvecs[lv];
        let t = f.lru_type();
        let gen = f.gen_counter() as usize - 1;
        // the folio's seq: the one in min_seq..=max_seq whose slot is its gen
        let seq = (lg.min_seq[t]..=lg.max_seq)
            .find(|&s| gen_from_seq(s) == gen)
            .unwrap_or(lg.max_seq);
        // v3: an access to a folio of min_seq with refs ≥ 2 moves it to min_seq + 1
        if target.is_none() && sw.fg_min_seq_promotion && seq == lg.min_seq[t] && new_refs >= pid::FG_REFS_WORKINGSET {
            target = Some(1);
        }
        let Some(step) = target else {
            return;
        };
        // inferred: capped at max_seq
        let new_seq = (seq + step).min(lg.max_seq);
        if new_seq == seq {
            return;
        }
        let new_gen = gen_from_seq(new_seq);
        m.folios[id].set_gen_counter(new_gen as u32 + 1);
        let f = m.folios[id];
        self.update_size(m, id, &f, Some(gen), Some(new_gen));
        self.fg_promotions += 1;
        if fg.promotion_mode == PromotionMode::Eager {
            let on = f.list_gen();
            eviction::relink(self, m, lv, id, on, new_gen, false);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Placement and sizes (`lru_gen_add_folio`, `lru_gen_del_folio`, `lru_gen_update_size`)
    // ---------------------------------------------------------------------------------------------

    /// Whether generation slot `gen` counts as active (`lru_gen_is_active`).
    #[inline]
    pub fn is_active_gen(lg: &LruGen, gen: usize) -> bool {
        gen == gen_from_seq(lg.max_seq) || gen == gen_from_seq(lg.max_seq - 1)
    }

    /// `lru_gen_update_size`: move the pages of folio `id` (`f`, its record) from slot `old` to
    /// slot `new` (`None` = off the lists), keeping the active/inactive compatibility counters.
    /// Counted in pages (`folio_nr_pages`). Always inlined: every add and del calls it, and with
    /// the folio's id as an argument the compiler stopped inlining it (+4 % instructions on
    /// MGLRU's replay of OLTP).
    #[inline(always)]
    pub fn update_size(&mut self, m: &mut Machine, id: FolioId, f: &Folio, old: Option<usize>, new: Option<usize>) {
        let lv = self.lv_of(f);
        let (t, z) = (f.lru_type(), f.zone());
        let nr = i64::from(m.folios.nr_pages(id));
        let lg = &mut self.lruvecs[lv];
        if let Some(o) = old {
            lg.nr_pages[o][t][z] -= nr;
        }
        if let Some(n) = new {
            lg.nr_pages[n][t][z] += nr;
        }
        let lru = |active: bool| Lru::of(t, active);
        match (old, new) {
            (None, Some(n)) => m.update_lru_size_raw(f.memcg, f.node(), z, lru(Self::is_active_gen(lg, n)), nr),
            (Some(o), None) => m.update_lru_size_raw(f.memcg, f.node(), z, lru(Self::is_active_gen(lg, o)), -nr),
            (Some(o), Some(n)) => {
                if !Self::is_active_gen(lg, o) && Self::is_active_gen(lg, n) {
                    m.update_lru_size_raw(f.memcg, f.node(), z, lru(false), -nr);
                    m.update_lru_size_raw(f.memcg, f.node(), z, lru(true), nr);
                }
            }
            (None, None) => {}
        }
    }

    /// The seq a folio is (re)added to (`lru_gen_folio_seq`, or 6.1's inline choice).
    pub fn folio_seq(&self, lg: &LruGen, f: &Folio, reclaiming: bool) -> u64 {
        let t = f.lru_type();
        let min_seq = lg.min_seq[t];
        if !self.sw().workingset_protection_rework {
            return if f.test(pg::ACTIVE) {
                lg.max_seq
            } else if (t == ANON && !f.test(pg::SWAPCACHE))
                || (f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)))
            {
                lg.max_seq - 1
            } else if reclaiming || min_seq + MIN_NR_GENS >= lg.max_seq {
                min_seq
            } else {
                min_seq + 1
            };
        }
        // v3: placement keyed on refs ≥ LRU_REFS_WORKINGSET (the 7.2 PG_referenced row is gone)
        let fg = self.sw().fg_unified_refs;
        let ws = if fg {
            (pid::fg_refs(f.flags) >= pid::FG_REFS_WORKINGSET) as u64
        } else {
            f.test(pg::WORKINGSET) as u64
        };
        let g = if f.test(pg::ACTIVE) {
            MIN_NR_GENS - ws
        } else if reclaiming {
            MAX_NR_GENS as u64
        } else if (t == ANON && !f.test(pg::SWAPCACHE))
            || (f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)))
        {
            MIN_NR_GENS
        } else if self.sw().folio_seq_referenced && !fg {
            MAX_NR_GENS as u64 - (ws != 0 || f.test(pg::REFERENCED)) as u64
        } else {
            MAX_NR_GENS as u64 - ws
        };
        (lg.max_seq + 1).saturating_sub(g).max(min_seq)
    }

    /// `lru_gen_add_folio`: place an evictable folio on its generation list (tail if
    /// `reclaiming`, as `folio_rotate_reclaimable` and `inc_min_seq` do).
    pub fn add(&mut self, m: &mut Machine, id: FolioId, reclaiming: bool) {
        let f = m.folios[id];
        let lv = self.lv_of(&f);
        let seq = self.folio_seq(&self.lruvecs[lv], &f, reclaiming);
        let gen = gen_from_seq(seq);
        let sw = self.sw();
        let clear_refs = f.test(pg::ACTIVE) && sw.activate_clears_refs && !sw.workingset_protection_rework;
        {
            let fm = &mut m.folios[id];
            fm.set_gen_counter(gen as u32 + 1);
            if clear_refs {
                // keeps PG_workingset, for the refault's PSI accounting
                fm.clear(pg::REFS_MASK | pg::REFERENCED);
            }
            fm.clear(pg::ACTIVE);
            fm.set(pg::LRU);
        }
        let f = m.folios[id];
        self.update_size(m, id, &f, None, Some(gen));
        m.folios[id].set_list_gen(gen);
        let list = &mut self.lruvecs[lv].folios[gen][f.lru_type()][f.zone()];
        if reclaiming {
            m.folios.list_add_tail(list, id);
        } else {
            m.folios.list_add(list, id);
        }
    }

    /// `lru_gen_del_folio`: take a folio off its generation list. Unless `reclaiming`, a folio in
    /// an active generation gets `PG_active` so it can be re-added young.
    pub fn del(&mut self, m: &mut Machine, id: FolioId, reclaiming: bool) {
        let f = m.folios[id];
        let gen = f.gen_counter() as usize - 1;
        let lv = self.lv_of(&f);
        let active = !reclaiming && Self::is_active_gen(&self.lruvecs[lv], gen);
        {
            let fm = &mut m.folios[id];
            fm.set_gen_counter(0);
            if active {
                fm.set(pg::ACTIVE);
            }
        }
        self.update_size(m, id, &f, Some(gen), None);
        // sizes follow the gen counter; the links, the list the folio is on (lazy sorting)
        let on = m.folios[id].list_gen();
        m.folios
            .list_del(&mut self.lruvecs[lv].folios[on][f.lru_type()][f.zone()], id);
    }

    /// Put a folio on the unevictable list (`lruvec_add_folio` for `LRU_UNEVICTABLE`).
    fn add_unevictable(&mut self, m: &mut Machine, id: FolioId) {
        let f = m.folios[id];
        let lv = self.lv_of(&f);
        {
            let fm = &mut m.folios[id];
            fm.clear(pg::ACTIVE);
            fm.set(pg::UNEVICTABLE | pg::LRU);
        }
        m.folios.list_add(&mut self.unevictable[lv], id);
        m.update_lru_size(id, Lru::Unevictable, 1);
    }

    /// `folio_putback_lru` / `move_folios_to_lru` for one folio coming back from reclaim.
    pub(crate) fn putback(&mut self, m: &mut Machine, id: FolioId) {
        super::vmscan::clear_isolated(m, id);
        if !m.folios[id].evictable() {
            m.count_vm_events(Stat::UnevictablePgsCulled, 1);
            self.add_unevictable(m, id);
        } else {
            self.add(m, id, false);
        }
    }

    /// `folio_activate`: queue the folio in the per-CPU `lru_activate` batch
    /// ([`crate::reclaim::folio_activate`]); [`Policy::lru_activate`] moves it when the batch does.
    pub fn activate(&mut self, m: &mut Machine, id: FolioId) {
        crate::reclaim::folio_activate(m, self, id);
    }

    /// `lru_activate`: re-add an LRU folio with `PG_active` (to `max_seq`); counts `pgactivate`.
    fn lru_activate_folio(&mut self, m: &mut Machine, id: FolioId) {
        let f = m.folios[id];
        if !f.test(pg::LRU) || f.test(pg::ACTIVE) || f.test(pg::UNEVICTABLE) || f.gen_counter() == 0 {
            return;
        }
        self.del(m, id, false);
        m.folios[id].set(pg::ACTIVE);
        self.add(m, id, false);
        m.count_events(f.memcg, Stat::Pgactivate, 1);
    }

    /// Evictable pages of lruvec `lv` over all generations of the types that `swappiness` allows.
    pub fn evictable_size(&self, lv: usize, swappiness: u32) -> u64 {
        let lg = &self.lruvecs[lv];
        let mut total = 0;
        for t in type_range(self.sw(), swappiness) {
            for seq in lg.min_seq[t]..=lg.max_seq {
                total += lg.gen_pages(gen_from_seq(seq), t);
            }
        }
        total
    }
}

/// The types reclaim may touch at `swappiness`: 0 → file only; 201 (mainline) → anon only.
pub fn type_range(sw: &Switches, swappiness: u32) -> std::ops::Range<usize> {
    let min_type = if swappiness == 0 { FILE } else { ANON };
    let max_type = if sw.swappiness_max && swappiness >= state::SWAPPINESS_ANON_ONLY {
        ANON
    } else {
        FILE
    };
    min_type..max_type + 1
}

/// `evictable_min_seq`: the oldest generation among the types `swappiness` allows.
pub fn evictable_min_seq(sw: &Switches, lg: &LruGen, swappiness: u32) -> u64 {
    type_range(sw, swappiness)
        .map(|t| lg.min_seq[t])
        .min()
        .unwrap_or(lg.min_seq[FILE])
}

impl Policy for Mglru {
    fn add_split_tail(&mut self, m: &mut Machine, head: FolioId, tail: FolioId) {
        let f = m.folios[head];
        let lv = self.lv_of(&f);
        let list = if f.gen_counter() == 0 {
            &mut self.unevictable[lv]
        } else {
            &mut self.lruvecs[lv].folios[f.list_gen()][f.lru_type()][f.zone()]
        };
        m.folios.list_add_before(list, head, tail);
    }

    fn name(&self) -> &'static str {
        if self.profile() == Profile::MAINLINE {
            return "mglru";
        }
        match self.profile().preset {
            Preset::V6_1 => "mglru-6.1",
            Preset::V6_12 => "mglru-6.12",
            Preset::V6_17 => "mglru-6.17",
            Preset::V7_2 => "mglru-7.2",
            Preset::MglruFg => "mglru-fg",
        }
    }

    fn memcg_created(&mut self, m: &Machine, memcg: MemcgId) {
        let now = m.jiffies();
        let n = m.memcgs.len() * m.nr_nodes();
        while self.lruvecs.len() < n {
            self.lruvecs.push(LruGen::new(now));
            self.unevictable.push(ListHead::default());
        }
        // mem_cgroup_css_online
        self.lru_gen_online_memcg(memcg);
    }

    fn memcg_offline(&mut self, _m: &mut Machine, memcg: MemcgId) {
        self.lru_gen_offline_memcg(memcg);
    }

    fn reparent_lru(&mut self, m: &mut Machine, child: MemcgId, parent: MemcgId) {
        for node in 0..self.nr_nodes {
            self.lru_gen_reparent_memcg(m, child, parent, node);
        }
    }

    fn memcg_released(&mut self, _m: &Machine, memcg: MemcgId) {
        self.lru_gen_release_memcg(memcg);
    }

    fn mm_created(&mut self, m: &Machine, mm: u32) {
        // lru_gen_add_mm: the first mm added since the last walk of each of its lruvecs is where
        // that walk's force-scanned tail starts
        let memcg = m.mms[mm as usize].memcg;
        for node in 0..m.nr_nodes() {
            let lv = self.lv(memcg, node);
            let st = &mut self.lruvecs[lv].mm_state;
            if st.tail == state::MmTail::End {
                st.tail = state::MmTail::Mm(mm);
            }
        }
    }

    fn add_folio(&mut self, m: &mut Machine, id: FolioId) {
        if !m.folios[id].evictable() {
            m.count_vm_events(Stat::UnevictablePgsCulled, 1);
            self.add_unevictable(m, id);
            return;
        }
        self.add(m, id, false);
    }

    fn folio_batch_size(&self) -> usize {
        if self.sw().folio_batch_size_31 {
            crate::reclaim::LRU_ADD_BATCH_MAX
        } else {
            15
        }
    }

    fn lru_add_prepare(&mut self, m: &mut Machine, id: FolioId, ctx: AddCtx) {
        // folio_add_lru: a folio added inside a fault on a VMA with recency is hot (7.2:
        // referenced if it is not already, unless it is a workingset folio); with
        // `readahead_placement`, only the folio the fault asked for
        if ctx.in_fault && m.folios[id].evictable() && !(ctx.readahead && self.sw().readahead_placement) {
            if self.sw().fault_mark_accessed && !self.test_workingset(&m.folios[id]) {
                if self.sw().fg_unified_refs || !m.folios[id].test(pg::REFERENCED) {
                    let mut f = m.folios[id];
                    self.inc_refs(&mut f);
                    m.folios[id] = f;
                }
            } else {
                m.folios[id].set(pg::ACTIVE);
            }
        }
    }

    fn del_folio(&mut self, m: &mut Machine, id: FolioId) {
        let f = m.folios[id];
        if f.test(pg::UNEVICTABLE) {
            let lv = self.lv_of(&f);
            m.folios.list_del(&mut self.unevictable[lv], id);
            m.update_lru_size(id, Lru::Unevictable, -1);
        } else {
            self.del(m, id, true);
        }
        m.folios[id].clear(pg::LRU | pg::ACTIVE | pg::UNEVICTABLE);
    }

    fn isolate_folio(&mut self, m: &mut Machine, id: FolioId) {
        if m.folios[id].test(pg::UNEVICTABLE) {
            self.del_folio(m, id);
            return;
        }
        // lru_gen_del_folio(reclaiming = false): an active generation's folio keeps PG_active
        self.del(m, id, false);
        m.folios[id].clear(pg::LRU);
    }

    fn lru_activate(&mut self, m: &mut Machine, id: FolioId) {
        self.lru_activate_folio(m, id);
    }

    fn deactivate(&mut self, m: &mut Machine, id: FolioId) {
        let f = m.folios[id];
        if !f.test(pg::LRU) || f.test(pg::UNEVICTABLE) || f.gen_counter() == 0 {
            return;
        }
        if self.sw().workingset_protection_rework {
            // lru_gen_clear_refs: forget the references; a folio already in the oldest
            // generation of its type stays where it is, uncounted
            m.folios[id].clear(pg::REFS_MASK | pg::REFERENCED | pg::WORKINGSET);
            let lg = &self.lruvecs[self.lv_of(&f)];
            if f.gen_counter() as usize - 1 == gen_from_seq(lg.min_seq[f.lru_type()]) {
                return;
            }
        }
        // lru_deactivate: every MGLRU folio is re-added as inactive (workingset kept in 6.1/6.12)
        self.del(m, id, false);
        m.folios[id].clear(pg::ACTIVE | pg::REFERENCED);
        self.add(m, id, false);
        m.count_events(f.memcg, Stat::Pgdeactivate, 1);
        m.fbatch_add(FBATCH_DEACTIVATE, self.folio_batch_size(), m.lruvec(f.memcg, f.node()));
    }

    fn switches(&self) -> &Switches {
        self.sw()
    }

    fn mark_accessed(&mut self, m: &mut Machine, id: FolioId) {
        if self.sw().fg_unified_refs {
            self.fg_mark_accessed(m, id);
            return;
        }
        let mut f = m.folios[id];
        self.inc_refs(&mut f);
        m.folios[id] = f;
    }

    fn prepare_node(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl) {
        eviction::prepare_node(self, m, node, sc);
    }

    fn shrink_node_lruvecs(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl) {
        eviction::shrink_node(self, m, node, sc);
    }

    fn shrink_lruvec(&mut self, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl) {
        eviction::shrink_lruvec(self, m, memcg, node, sc);
    }

    fn age_node(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl) {
        // lru_gen_age_node runs under kswapd's own walk (set_mm_walk(pgdat), clear_mm_walk)
        self.mm_walk = true;
        aging::age_node(self, m, node, sc);
        self.mm_walk = false;
    }

    fn memcg_lru_zone_sizes(&self) -> bool {
        false
    }

    fn keep_referenced_mapped(&self) -> bool {
        !self.sw().workingset_protection_rework
    }

    fn check_references(&mut self, m: &mut Machine, id: FolioId, sc: &ScanControl) -> FolioRef {
        aging::check_references(self, m, id, sc)
    }

    fn eviction_shadow(&mut self, m: &mut Machine, id: FolioId, _target: Option<MemcgId>) -> u64 {
        workingset::lru_gen_eviction(self, m, id)
    }

    fn refault(&mut self, m: &mut Machine, id: FolioId, shadow: u64, in_fault: bool) {
        workingset::lru_gen_refault(self, m, id, shadow, in_fault);
    }

    fn rotate_reclaimable(&mut self, m: &mut Machine, id: FolioId) {
        let f = m.folios[id];
        if f.test(pg::UNEVICTABLE) || f.gen_counter() == 0 {
            return;
        }
        // lru_move_tail: delete and re-add at the tail of the oldest possible generation
        self.del(m, id, true);
        self.add(m, id, true);
        m.count_vm_events(Stat::Pgrotated, 1);
        m.fbatch_add(FBATCH_ROTATE, self.folio_batch_size(), m.lruvec(f.memcg, f.node()));
    }

    fn debugfs(&self, m: &Machine, full: bool) -> Option<String> {
        Some(self.debugfs_read(m, full))
    }

    fn promotions(&self) -> u64 {
        self.fg_promotions
    }

    fn generations(&self, m: &Machine, memcg: MemcgId) -> Option<Vec<(u64, u64, u64)>> {
        let mut out: Vec<(u64, u64, u64)> = Vec::new();
        for node in 0..m.nr_nodes() {
            let lg = &self.lruvecs[self.lv(memcg, node)];
            let start = lg.min_seq[ANON].min(lg.min_seq[FILE]);
            for seq in start..=lg.max_seq {
                let g = gen_from_seq(seq);
                let anon = if seq >= lg.min_seq[ANON] {
                    lg.gen_pages(g, ANON)
                } else {
                    0
                };
                let file = if seq >= lg.min_seq[FILE] {
                    lg.gen_pages(g, FILE)
                } else {
                    0
                };
                match out.iter_mut().find(|x| x.0 == seq) {
                    Some(x) => {
                        x.1 += anon;
                        x.2 += file;
                    }
                    None => out.push((seq, anon, file)),
                }
            }
        }
        Some(out)
    }

    fn debugfs_write(&mut self, m: &mut Machine, input: &str) -> Result<(), String> {
        Mglru::debugfs_write(self, m, input).map_err(|e| e.to_string())
    }

    fn seqs(&self, memcg: MemcgId, node: usize) -> Option<(u64, u64, u64)> {
        let lg = self.lrugen(memcg, node);
        Some((lg.min_seq[ANON], lg.min_seq[FILE], lg.max_seq))
    }

    fn lru_gen_caps(&self) -> u32 {
        let mut c = self.cfg.caps & caps::CORE;
        if self.should_walk_mmu() {
            c |= caps::MM_WALK;
        }
        if self.should_clear_pmd_young() {
            c |= caps::NONLEAF_YOUNG;
        }
        c
    }

    fn set_lru_gen_caps(&mut self, _m: &mut Machine, c: u32) -> Result<(), String> {
        if c & caps::CORE == 0 {
            return Err("enabled: switching the multi-gen LRU off needs the kill switch".into());
        }
        self.cfg.caps = c & (caps::CORE | caps::MM_WALK | caps::NONLEAF_YOUNG);
        Ok(())
    }

    fn min_ttl_jiffies(&self) -> u64 {
        crate::control::msecs_to_jiffies(self.cfg.min_ttl_ms)
    }

    fn set_min_ttl_jiffies(&mut self, jiffies: u64) -> Result<(), String> {
        self.cfg.min_ttl_ms = jiffies * (1000 / crate::mm::HZ);
        Ok(())
    }

    fn lists(&self) -> Vec<ListRef<'_>> {
        let mut out = Vec::new();
        for (lv, lg) in self.lruvecs.iter().enumerate() {
            let memcg = (lv / self.nr_nodes) as MemcgId;
            let node = lv % self.nr_nodes;
            for (g, by_type) in lg.folios.iter().enumerate() {
                for (t, by_zone) in by_type.iter().enumerate() {
                    for (z, list) in by_zone.iter().enumerate() {
                        out.push(ListRef {
                            memcg,
                            node,
                            name: format!("gen {g} type {t} zone {z}"),
                            list,
                        });
                    }
                }
            }
            out.push(ListRef {
                memcg,
                node,
                name: "unevictable".into(),
                list: &self.unevictable[lv],
            });
        }
        out
    }

    fn check(&self, m: &Machine) -> Result<(), String> {
        aging::check_lruvecs(self, m)?;
        self.check_memcg_lru()
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! The PID controller on refaults (`vmscan.c`, "PID controller"; `kernel-mglru.md` §4.9, §5.3, §5.5, §7.3).
//!
//! For every (history slot, type, tier) the lruvec counts pages evicted, pages protected (moved one
//! generation younger instead of being evicted) and pages that refaulted while their generation was
//! still recent. The *process variable* is a tier's refault rate `refaulted / (evicted + protected)`;
//! the *setpoint* is the refault rate of tier 0 (of the same type, or in 6.1's type choice of the
//! other type). The P term is the current history slot of `min_seq`, the I term the exponential
//! moving average of the previous generations (`avg_*`, factor ½, folded by [`reset_ctrl_pos`]);
//! there is no D term. The output is twofold: which type to evict from first ([`select_type`]) and
//! up to which tier folios are eligible ([`get_tier_idx`]; tiers above it are protected).
//!
//! Everything here is a pure function of an [`LruGen`]. The two profiles differ as follows
//! (`kernel-mglru.md` §14, §17.1 rows 1, 8, 9):
//!
//! | | the 6.1 preset (6.1.192) | the mainline preset |
//! |---|---|---|
//! | `protected` slot of tier `t` | `t − 1` (tier 0 is never protected; index 3 unused) | `t` |
//! | `read_ctrl_pos` | one tier | one tier, or all four for `tier == MAX_NR_TIERS` |
//! | type choice | 0 → file; older anon `min_seq` → anon; 1 → file; 200 → anon; else PID on tier 0 | ≤ 1 → file; ≥ 200 → anon; else PID on the sum of all tiers |
//! | tier index after a PID type choice | chosen type's tiers vs the other type's tier 0 | always [`get_tier_idx`] |
//! | `get_tier_idx` gains (sp : pv) | 1 : 2 | 2 : 3 |
//! | `refs` of a folio | refs mask + `PG_workingset` | refs mask + 1 if `PG_referenced`, else 0 |
//! | tier of `refs` | `order_base_2(refs + 1)` | `PG_workingset` ? 3 : `order_base_2(refs)` |
//!
//! Arithmetic is that of the kernel's `unsigned long` on a 64-bit machine: sums and products wrap
//! modulo 2^64 (they cannot overflow with realistic page counts, but the products of
//! [`positive_ctrl_err`] would panic in debug builds instead of wrapping as the kernel's do).

use super::state::{hist_from_seq, LruGen, Switches, MAX_NR_HIST_GENS, MAX_NR_TIERS, MIN_LRU_BATCH};
use crate::mm::folio::{pg, ANON, FILE};

/// `MAX_SWAPPINESS`.
const MAX_SWAPPINESS: u32 = 200;

/// One side of the controller (`struct ctrl_pos`): a refault count, the matching eviction +
/// protection count, and the gain the comparison weights them with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtrlPos {
    /// Refaulted pages (average + current slot).
    pub refaulted: u64,
    /// Evicted + protected pages (average + current slot).
    pub total: u64,
    /// Gain (weight) of this side. In 6.1 the kernel's `int` gain is converted to `unsigned long`,
    /// so a negative gain appears here as its two's complement (see [`select_type`]).
    pub gain: u64,
}

/// Index into the 4-wide `LruGen::protected[hist][type]` array where tier `tier`'s protected pages
/// are kept, or `None` if the profile has no slot for it.
///
/// 6.1 declares `protected[..][..][MAX_NR_TIERS - 1]` because tier 0 is never protected: tier `t`
/// lives at `t − 1` and index 3 of our array is unused. Mainline keeps tier `t` at `t`.
/// `sort_folio` and the debugfs reader must use the same mapping.
#[inline]
pub fn protected_idx(sw: &Switches, tier: usize) -> Option<usize> {
    debug_assert!(tier < MAX_NR_TIERS);
    if sw.workingset_protection_rework {
        Some(tier)
    } else {
        tier.checked_sub(1)
    }
}

#[inline]
fn check_nr_hist(nr_hist: usize) {
    debug_assert!(
        nr_hist == 1 || nr_hist == MAX_NR_HIST_GENS,
        "nr_hist must be 1 or {MAX_NR_HIST_GENS}, got {nr_hist}"
    );
}

/// Adds one tier's average and current-slot counts into `pos`.
#[inline]
fn add_tier(pos: &mut CtrlPos, lg: &LruGen, sw: &Switches, hist: usize, ty: usize, tier: usize) {
    pos.refaulted = pos
        .refaulted
        .wrapping_add(lg.avg_refaulted[ty][tier])
        .wrapping_add(lg.refaulted[hist][ty][tier]);
    pos.total = pos
        .total
        .wrapping_add(lg.avg_total[ty][tier])
        .wrapping_add(lg.evicted[hist][ty][tier]);
    if let Some(p) = protected_idx(sw, tier) {
        pos.total = pos.total.wrapping_add(lg.protected[hist][ty][p]);
    }
}

/// `read_ctrl_pos`: the controller input of type `ty` at `tier`, weighted by `gain`.
///
/// Reads history slot `hist(min_seq[ty])` plus the moving averages. `tier` in `0..MAX_NR_TIERS`
/// reads that tier; `tier == MAX_NR_TIERS` (mainline only) sums all four tiers, as mainline's
/// type selection does. The 6.1 profile panics on `tier == MAX_NR_TIERS` (6.1 never asks for it).
pub fn read_ctrl_pos(lg: &LruGen, sw: &Switches, nr_hist: usize, ty: usize, tier: usize, gain: u64) -> CtrlPos {
    check_nr_hist(nr_hist);
    let hist = hist_from_seq(lg.min_seq[ty], nr_hist);
    let tiers = if sw.type_selection_rework {
        assert!(tier <= MAX_NR_TIERS, "tier {tier} out of range");
        tier % MAX_NR_TIERS..=tier.min(MAX_NR_TIERS - 1)
    } else {
        assert!(tier < MAX_NR_TIERS, "6.1 reads one tier at a time (tier {tier})");
        tier..=tier
    };
    let mut pos = CtrlPos {
        refaulted: 0,
        total: 0,
        gain,
    };
    for t in tiers {
        add_tier(&mut pos, lg, sw, hist, ty, t);
    }
    pos
}

/// `positive_ctrl_err`: true if the process variable `pv` is not above the setpoint `sp`, i.e. `pv`
/// has fewer than `MIN_LRU_BATCH` refaults, or its gain-weighted refault rate is at most that of
/// `sp`: `pv.refaulted · (sp.total + 64) · sp.gain ≤ (sp.refaulted + 1) · pv.total · pv.gain`.
/// The `+ 64` and `+ 1` damp small samples. Same in both profiles.
pub fn positive_ctrl_err(sp: &CtrlPos, pv: &CtrlPos) -> bool {
    if pv.refaulted < MIN_LRU_BATCH {
        return true;
    }
    let lhs = pv
        .refaulted
        .wrapping_mul(sp.total.wrapping_add(MIN_LRU_BATCH))
        .wrapping_mul(sp.gain);
    let rhs = sp
        .refaulted
        .wrapping_add(1)
        .wrapping_mul(pv.total)
        .wrapping_mul(pv.gain);
    lhs <= rhs
}

/// The first tier in `1..MAX_NR_TIERS` whose `pv` (read with `pv_gain`) fails against `sp`, minus
/// one; `MAX_NR_TIERS − 1` if none fails.
fn first_failing_tier(lg: &LruGen, sw: &Switches, nr_hist: usize, sp: &CtrlPos, ty: usize, pv_gain: u64) -> usize {
    for tier in 1..MAX_NR_TIERS {
        let pv = read_ctrl_pos(lg, sw, nr_hist, ty, tier, pv_gain);
        if !positive_ctrl_err(sp, &pv) {
            return tier - 1;
        }
    }
    MAX_NR_TIERS - 1
}

/// `get_tier_idx`: the highest tier of `ty` that may be evicted; tiers above it are protected.
///
/// The setpoint is tier 0 of `ty`; tiers 1, 2, 3 are compared in turn and the scan stops at the
/// first one refaulting more than the setpoint allows. The gains leave a margin for noise: 1 : 2 in
/// 6.1, 2 : 3 in mainline. 0 protects tiers 1–3; 3 protects nothing by tier.
pub fn get_tier_idx(lg: &LruGen, sw: &Switches, nr_hist: usize, ty: usize) -> usize {
    // v3: FG's PID gains are 1 : 2 (`fg_pid_gains_1_2`)
    let (sp_gain, pv_gain) = if sw.type_selection_rework && !sw.fg_pid_gains_1_2 {
        (2, 3)
    } else {
        (1, 2)
    };
    let sp = read_ctrl_pos(lg, sw, nr_hist, ty, 0, sp_gain);
    first_failing_tier(lg, sw, nr_hist, &sp, ty, pv_gain)
}

/// `get_type_to_scan` of 6.1: PID on tier 0 of anon (gain `swappiness`) against tier 0 of file
/// (gain `200 − swappiness`), then the tier index of the chosen type against the *other* type's
/// tier 0, with the same per-type gains.
fn get_type_to_scan_v6_1(lg: &LruGen, sw: &Switches, nr_hist: usize, swappiness: u32) -> (usize, usize) {
    let p = sw;
    // The kernel computes `int gain[] = { swappiness, 200 - swappiness }` and converts to unsigned
    // long in positive_ctrl_err; a swappiness above 200 (impossible in 6.1) would wrap.
    let gain = [
        u64::from(swappiness),
        u64::from(MAX_SWAPPINESS).wrapping_sub(u64::from(swappiness)),
    ];
    let sp = read_ctrl_pos(lg, p, nr_hist, ANON, 0, gain[ANON]);
    let pv = read_ctrl_pos(lg, p, nr_hist, FILE, 0, gain[FILE]);
    let ty = if positive_ctrl_err(&sp, &pv) { FILE } else { ANON };
    let other = 1 - ty;
    let sp = read_ctrl_pos(lg, p, nr_hist, other, 0, gain[other]);
    (ty, first_failing_tier(lg, p, nr_hist, &sp, ty, gain[ty]))
}

/// The type `isolate_folios` tries first, and the tier index if the choice computed it
/// (6.1's `get_type_to_scan` returns it through a pointer; mainline never does). When the tier is
/// `None` the caller uses [`get_tier_idx`]; it does so also for the second type if the first one
/// scanned nothing.
///
/// * 6.1 (`isolate_folios` in 6.1.192): swappiness 0 → file; anon if `min_seq[anon] <
///   min_seq[file]`; 1 → file; 200 → anon; otherwise the PID of `get_type_to_scan_v6_1`, which
///   also yields the tier. 6.1 accepts swappiness 0..=200 only; a larger value is computed as the
///   kernel's arithmetic would (file gain `200 − swappiness` wraps), not rejected.
/// * Mainline (`get_type_to_scan`): ≤ 1 → file; ≥ 200 (including `SWAPPINESS_ANON_ONLY`) → anon;
///   otherwise anon's sum over all tiers (gain `swappiness`) against file's (gain
///   `200 − swappiness`): file unless file's weighted refault rate is the higher. No `min_seq`
///   shortcut.
pub fn select_type(lg: &LruGen, sw: &Switches, nr_hist: usize, swappiness: u32) -> (usize, Option<usize>) {
    let (ty, tier, _) = select_type_how(lg, sw, nr_hist, swappiness);
    (ty, tier)
}

/// [`select_type`], and whether a rule forced the type (`true`) rather than the PID controller
/// weighing the types' refaults by swappiness (`false`): `lrugen explain`'s type classes.
pub fn select_type_how(lg: &LruGen, sw: &Switches, nr_hist: usize, swappiness: u32) -> (usize, Option<usize>, bool) {
    check_nr_hist(nr_hist);
    if !sw.type_selection_rework {
        return if swappiness == 0 {
            (FILE, None, true)
        } else if lg.min_seq[ANON] < lg.min_seq[FILE] {
            (ANON, None, true)
        } else if swappiness == 1 {
            (FILE, None, true)
        } else if swappiness == MAX_SWAPPINESS {
            (ANON, None, true)
        } else {
            let (ty, tier) = get_type_to_scan_v6_1(lg, sw, nr_hist, swappiness);
            (ty, Some(tier), false)
        };
    }
    if swappiness <= 1 {
        return (FILE, None, true);
    }
    if swappiness >= MAX_SWAPPINESS {
        return (ANON, None, true);
    }
    let all = MAX_NR_TIERS;
    let sp = read_ctrl_pos(lg, sw, nr_hist, ANON, all, u64::from(swappiness));
    let pv = read_ctrl_pos(lg, sw, nr_hist, FILE, all, u64::from(MAX_SWAPPINESS - swappiness));
    (if positive_ctrl_err(&sp, &pv) { FILE } else { ANON }, None, false)
}

/// `reset_ctrl_pos`, called with the LRU lock held when a sequence number advances.
///
/// * `carryover` (just **before** `min_seq[ty]` is incremented): for every tier fold history slot
///   `hist(min_seq[ty])` into the averages, `avg_refaulted = (avg_refaulted + refaulted) / 2` and
///   `avg_total = (avg_total + evicted + protected) / 2` (integer division); with one history slot
///   (`nr_hist == 1`) the slot is then cleared, since it is reused by the next generation.
/// * not `carryover` (just before `max_seq` is incremented; once per type): with `nr_hist > 1`,
///   clear slot `hist(max_seq + 1)` of `ty`, which the new youngest generation will reuse; with one
///   slot, nothing.
///
/// Clearing zeroes refaulted, evicted and the profile's protected slots (6.1: indices 0..=2 only).
pub fn reset_ctrl_pos(lg: &mut LruGen, sw: &Switches, nr_hist: usize, ty: usize, carryover: bool) {
    check_nr_hist(nr_hist);
    let clear = if carryover { nr_hist == 1 } else { nr_hist > 1 };
    if !carryover && !clear {
        return;
    }
    let seq = if carryover { lg.min_seq[ty] } else { lg.max_seq + 1 };
    let hist = hist_from_seq(seq, nr_hist);
    for tier in 0..MAX_NR_TIERS {
        let prot = protected_idx(sw, tier);
        if carryover {
            let sum = lg.avg_refaulted[ty][tier].wrapping_add(lg.refaulted[hist][ty][tier]);
            lg.avg_refaulted[ty][tier] = sum / 2;
            let mut sum = lg.avg_total[ty][tier].wrapping_add(lg.evicted[hist][ty][tier]);
            if let Some(p) = prot {
                sum = sum.wrapping_add(lg.protected[hist][ty][p]);
            }
            lg.avg_total[ty][tier] = sum / 2;
        }
        if clear {
            lg.refaulted[hist][ty][tier] = 0;
            lg.evicted[hist][ty][tier] = 0;
            if let Some(p) = prot {
                lg.protected[hist][ty][p] = 0;
            }
        }
    }
}

/// `order_base_2`: ⌈log2 n⌉, with 0 and 1 both giving 0.
#[inline]
fn order_base_2(n: u32) -> usize {
    if n > 1 {
        (u32::BITS - (n - 1).leading_zeros()) as usize
    } else {
        0
    }
}

/// `folio_lru_refs`: the refs of a folio's flags word (`pg::*` bits), in the profile's encoding.
///
/// * 6.1: refs mask + `PG_workingset` (0..=4): the 2nd fd access sets `PG_workingset`, the 3rd to
///   5th bump the mask, so N ≥ 1 accesses give N − 1.
/// * Mainline: 0 without `PG_referenced`, else mask + 1 (1..=4): N accesses give N up to 4;
///   the 5th sets `PG_workingset`, which [`tier_from_refs`] takes separately.
#[inline]
pub fn folio_lru_refs(sw: &Switches, flags: u32) -> u32 {
    if sw.fg_unified_refs {
        return fg_refs(flags);
    }
    let mask = (flags & pg::REFS_MASK) >> pg::REFS_SHIFT;
    if !sw.workingset_protection_rework {
        mask + u32::from(flags & pg::WORKINGSET != 0)
    } else if flags & pg::REFERENCED == 0 {
        0
    } else {
        mask + 1
    }
}

/// MGLRU-FG v3 `LRU_REFS_MAX` as modelled (the default of `FgParams::refs_max`): 0..=7.
pub const FG_REFS_MAX: u32 = 7;
/// MGLRU-FG v3 `LRU_REFS_REFERENCED`: `folio_test_referenced` is `refs ≥ 1`.
pub const FG_REFS_REFERENCED: u32 = 1;
/// MGLRU-FG v3 `LRU_REFS_WORKINGSET`: `folio_test_workingset` is `refs ≥ 2`.
pub const FG_REFS_WORKINGSET: u32 = 2;
/// MGLRU-FG v3 `LRU_REFS_ACTIVATED` (= `LRU_REFS_PROTECTED`): a folio counts as active, and an
/// overflowing one restarts, at 3.
pub const FG_REFS_ACTIVATED: u32 = 3;

/// The largest `LRU_REFS_MAX` the tier mapping allows: `fls(LRU_REFS_MAX − 1) ≤ MAX_NR_TIERS − 1`
/// (the header's build check), so 8 with four tiers.
pub const FG_REFS_STORE_MAX: u32 = 1 << (MAX_NR_TIERS - 1);

/// MGLRU-FG `lru_refs_from_flags` (settled: the header of a tree with the series): bit 0 of the
/// counter is `PG_referenced`, bit 1 `PG_workingset`, the bits above them the refs field
/// (`LRU_REFS_WIDTH` = 2 bits here, so up to 15 can be stored; `LRU_REFS_MAX` ≤ 8 is used).
#[inline]
pub fn fg_refs(flags: u32) -> u32 {
    u32::from(flags & pg::REFERENCED != 0)
        | u32::from(flags & pg::WORKINGSET != 0) << 1
        | ((flags & pg::REFS_MASK) >> pg::REFS_SHIFT) << 2
}

/// MGLRU-FG `lru_refs_set_flags`: store `refs` (0..=`FG_REFS_STORE_MAX`) in the flags word.
#[inline]
pub fn fg_set_refs(flags: &mut u32, refs: u32) {
    debug_assert!(refs <= FG_REFS_STORE_MAX);
    *flags &= !(pg::REFERENCED | pg::WORKINGSET | pg::REFS_MASK);
    if refs & 1 != 0 {
        *flags |= pg::REFERENCED;
    }
    if refs & 2 != 0 {
        *flags |= pg::WORKINGSET;
    }
    *flags |= ((refs >> 2) << pg::REFS_SHIFT) & pg::REFS_MASK;
}

/// `lru_tier_from_refs`: the tier of `refs` as returned by [`folio_lru_refs`] for the same profile
/// (or as rebuilt from a shadow entry), and `workingset` = `PG_workingset`.
///
/// * 6.1: `order_base_2(refs + 1)`; `workingset` is ignored because 6.1's refs already count it.
/// * Mainline: 3 if `workingset`, else `order_base_2(refs)`.
///
/// Either way N accesses through file descriptors land in tier `order_base_2(N)`: N ≤ 1 → 0,
/// 2 → 1, 3–4 → 2, ≥ 5 → 3.
#[inline]
pub fn tier_from_refs(sw: &Switches, refs: u32, workingset: bool) -> usize {
    if sw.fg_unified_refs {
        // v3: tier = fls(refs − 1) for refs ≥ 2 (ceil(log2 refs)): 0,1 → 0; 2 → 1; 3–4 → 2;
        // 5–8 → 3. PG_workingset is bit 1 of refs, not a tier of its own.
        debug_assert!(refs <= FG_REFS_STORE_MAX, "refs {refs} above LRU_REFS_MAX");
        return if refs < FG_REFS_WORKINGSET {
            0
        } else {
            (32 - (refs - 1).leading_zeros()) as usize
        };
    }
    debug_assert!(refs <= 4, "refs {refs} above BIT(LRU_REFS_WIDTH)");
    if !sw.workingset_protection_rework {
        order_base_2(refs + 1)
    } else if workingset {
        MAX_NR_TIERS - 1
    } else {
        order_base_2(refs)
    }
}

/// The tier of a folio's flags word: [`tier_from_refs`] of [`folio_lru_refs`].
#[inline]
pub fn folio_tier(sw: &Switches, flags: u32) -> usize {
    tier_from_refs(sw, folio_lru_refs(sw, flags), flags & pg::WORKINGSET != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two kernels these tests pin down: 6.1 and the 6.14 rework (both 6.17 and 7.2).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Profile {
        V6_1,
        Mainline,
    }

    impl Profile {
        fn sw(self) -> Switches {
            match self {
                Profile::V6_1 => Switches::V6_1,
                Profile::Mainline => Switches::V6_17,
            }
        }
    }

    // The functions under test, called with a profile (the code itself reads the switches).
    fn protected_idx(p: Profile, tier: usize) -> Option<usize> {
        super::protected_idx(&p.sw(), tier)
    }
    fn read_ctrl_pos(lg: &LruGen, p: Profile, nr_hist: usize, ty: usize, tier: usize, gain: u64) -> CtrlPos {
        super::read_ctrl_pos(lg, &p.sw(), nr_hist, ty, tier, gain)
    }
    fn get_tier_idx(lg: &LruGen, p: Profile, nr_hist: usize, ty: usize) -> usize {
        super::get_tier_idx(lg, &p.sw(), nr_hist, ty)
    }
    fn select_type(lg: &LruGen, p: Profile, nr_hist: usize, swappiness: u32) -> (usize, Option<usize>) {
        super::select_type(lg, &p.sw(), nr_hist, swappiness)
    }
    fn reset_ctrl_pos(lg: &mut LruGen, p: Profile, nr_hist: usize, ty: usize, carryover: bool) {
        super::reset_ctrl_pos(lg, &p.sw(), nr_hist, ty, carryover)
    }
    fn tier_from_refs(p: Profile, refs: u32, workingset: bool) -> usize {
        super::tier_from_refs(&p.sw(), refs, workingset)
    }
    fn folio_lru_refs(p: Profile, flags: u32) -> u32 {
        super::folio_lru_refs(&p.sw(), flags)
    }
    fn folio_tier(p: Profile, flags: u32) -> usize {
        super::folio_tier(&p.sw(), flags)
    }

    /// The 6.12 preset reads the PID statistics as 6.1 does (the rework is 6.14).
    #[test]
    fn v6_12_pid_is_6_1s() {
        let mut g = LruGen::new(0);
        g.max_seq = 7;
        g.min_seq = [5, 5];
        g.refaulted[0][FILE] = [99, 100, 101, 0];
        g.evicted[0][FILE] = [136, 60, 100, 0];
        g.protected[0][FILE] = [40, 0, 0, 0];
        for s in [1, 60, 100, 150] {
            assert_eq!(
                super::select_type(&g, &Switches::V6_12, 1, s),
                super::select_type(&g, &Switches::V6_1, 1, s)
            );
        }
        assert_eq!(
            super::get_tier_idx(&g, &Switches::V6_12, 1, FILE),
            super::get_tier_idx(&g, &Switches::V6_1, 1, FILE)
        );
    }

    const BOTH: [Profile; 2] = [Profile::V6_1, Profile::Mainline];
    const HISTS: [usize; 2] = [1, MAX_NR_HIST_GENS];

    /// An lruvec with `min_seq` = [5, 5] (slot 1 of 4, slot 0 of 1) and no history.
    fn lg() -> LruGen {
        let mut lg = LruGen::new(0);
        lg.max_seq = 7;
        lg.min_seq = [5, 5];
        lg
    }

    /// History slot of `ty`'s `min_seq`.
    fn h(lg: &LruGen, nr_hist: usize, ty: usize) -> usize {
        hist_from_seq(lg.min_seq[ty], nr_hist)
    }

    /// Records refaults and evictions of `ty`/`tier` in the current slot.
    fn put(lg: &mut LruGen, nr_hist: usize, ty: usize, tier: usize, refaulted: u64, evicted: u64) {
        let h = h(lg, nr_hist, ty);
        lg.refaulted[h][ty][tier] = refaulted;
        lg.evicted[h][ty][tier] = evicted;
    }

    /// Records protected pages of `ty`/`tier` in the current slot, in the profile's layout.
    fn protect(lg: &mut LruGen, p: Profile, nr_hist: usize, ty: usize, tier: usize, n: u64) {
        let h = h(lg, nr_hist, ty);
        lg.protected[h][ty][protected_idx(p, tier).unwrap()] = n;
    }

    fn pos(refaulted: u64, total: u64, gain: u64) -> CtrlPos {
        CtrlPos { refaulted, total, gain }
    }

    // ---------------------------------------------------------------- positive_ctrl_err

    #[test]
    fn few_refaults_are_always_positive() {
        // sp refault rate (0+1)/(1000+64) ≈ 0.001; pv 63/1: the cross-multiplication alone says
        // 63·1064·1 = 67032 > (0+1)·1·2 = 2 (negative), but 63 < MIN_LRU_BATCH wins.
        let sp = pos(0, 1000, 1);
        assert!(positive_ctrl_err(&sp, &pos(63, 1, 2)));
        // 64 refaults are no longer "few": 64·1064·1 = 68096 > 2.
        assert!(!positive_ctrl_err(&sp, &pos(64, 1, 2)));
        // Zero refaults over zero total (empty history) is positive.
        assert!(positive_ctrl_err(&pos(0, 0, 1), &pos(0, 0, 2)));
    }

    #[test]
    fn cross_multiplication_boundary() {
        // sp = {99, 136, 1}: (sp.refaulted + 1) = 100, (sp.total + 64) = 200.
        let sp = pos(99, 136, 1);
        // pv = {100, 100, 2}: lhs = 100·200·1 = 20000, rhs = 100·100·2 = 20000 → equal → true.
        assert!(positive_ctrl_err(&sp, &pos(100, 100, 2)));
        // one more refault: lhs = 101·200·1 = 20200 > 20000 → false.
        assert!(!positive_ctrl_err(&sp, &pos(101, 100, 2)));
        // one less total: rhs = 100·99·2 = 19800 < 20000 → false.
        assert!(!positive_ctrl_err(&sp, &pos(100, 99, 2)));
        // gains matter: with pv gain 1, rhs = 10000 → false; with sp gain 0, lhs = 0 → true.
        assert!(!positive_ctrl_err(&sp, &pos(100, 100, 1)));
        assert!(positive_ctrl_err(&pos(99, 136, 0), &pos(100, 100, 1)));
    }

    #[test]
    fn products_wrap_like_unsigned_long() {
        // pv.gain = 2^64 − 1 (6.1's int −1): rhs = 100·100·(2^64−1) ≡ 2^64 − 10000, huge → true.
        assert!(positive_ctrl_err(&pos(99, 136, 1), &pos(100, 100, u64::MAX)));
        // lhs = 2^32 · (2^32 − 64 + 64) · 1 = 2^64 ≡ 0 → true although pv refaults far more.
        assert!(positive_ctrl_err(&pos(0, (1 << 32) - 64, 1), &pos(1 << 32, 1, 1)));
    }

    // ---------------------------------------------------------------- read_ctrl_pos

    #[test]
    fn read_ctrl_pos_reads_min_seq_slot_and_averages() {
        for p in BOTH {
            for nr_hist in HISTS {
                let mut g = lg();
                let hf = h(&g, nr_hist, FILE);
                g.avg_refaulted[FILE] = [1, 2, 3, 4];
                g.avg_total[FILE] = [10, 20, 30, 40];
                g.refaulted[hf][FILE] = [100, 200, 300, 400];
                g.evicted[hf][FILE] = [1000, 2000, 3000, 4000];
                g.protected[hf][FILE] = [5, 6, 7, 8];
                if nr_hist > 1 {
                    // another slot and the other type are not read
                    g.refaulted[(hf + 1) % nr_hist][FILE] = [7777; 4];
                    g.evicted[(hf + 1) % nr_hist][FILE] = [7777; 4];
                }
                g.refaulted[hf][ANON] = [9999; 4];
                // 6.1: tier t adds protected[t−1] (tier 0 none, index 3 never);
                // mainline: tier t adds protected[t].
                let prot: [u64; 4] = match p {
                    Profile::V6_1 => [0, 5, 6, 7],
                    Profile::Mainline => [5, 6, 7, 8],
                };
                for (t, prot_t) in prot.into_iter().enumerate() {
                    let got = read_ctrl_pos(&g, p, nr_hist, FILE, t, 3);
                    let refaulted = (t as u64 + 1) * 101; // avg t+1 + slot 100(t+1)
                    let total = (t as u64 + 1) * 1010 + prot_t; // avg 10(t+1) + evicted 1000(t+1)
                    assert_eq!(got, pos(refaulted, total, 3), "{p:?} nr_hist {nr_hist} tier {t}");
                }
                if p == Profile::Mainline {
                    // tier == MAX_NR_TIERS sums all: refaulted 101·(1+2+3+4) = 1010,
                    // total 1010·10 + (5+6+7+8) = 10126.
                    assert_eq!(
                        read_ctrl_pos(&g, p, nr_hist, FILE, MAX_NR_TIERS, 7),
                        pos(1010, 10126, 7)
                    );
                }
            }
        }
    }

    #[test]
    #[should_panic]
    fn v6_1_has_no_all_tiers_read() {
        read_ctrl_pos(&lg(), Profile::V6_1, 1, ANON, MAX_NR_TIERS, 1);
    }

    // ---------------------------------------------------------------- get_tier_idx

    #[test]
    fn tier_idx_empty_history_protects_nothing() {
        for p in BOTH {
            for nr_hist in HISTS {
                assert_eq!(get_tier_idx(&lg(), p, nr_hist, ANON), 3);
                assert_eq!(get_tier_idx(&lg(), p, nr_hist, FILE), 3);
            }
        }
    }

    #[test]
    fn tier_idx_v6_1_gains_1_2() {
        let p = Profile::V6_1;
        for nr_hist in HISTS {
            // Tier 0 (setpoint, gain 1): refaulted 99, evicted 136, no protected slot.
            // pv at tier t (gain 2) passes iff pv.r·(136+64)·1 ≤ (99+1)·pv.t·2, i.e. pv.r ≤ pv.t.
            let base = |g: &mut LruGen| put(g, nr_hist, FILE, 0, 99, 136);

            // 0: tier 1 = {101, 60 evicted + 40 protected (slot 0)}: 101·200 = 20200 > 100·100·2 = 20000.
            let mut g = lg();
            base(&mut g);
            put(&mut g, nr_hist, FILE, 1, 101, 60);
            protect(&mut g, p, nr_hist, FILE, 1, 40);
            assert_eq!(
                g.protected[h(&g, nr_hist, FILE)][FILE][0],
                40,
                "6.1 keeps tier 1 at index 0"
            );
            assert_eq!(get_tier_idx(&g, p, nr_hist, FILE), 0);

            // 1: tier 1 = {100, 60 + 40}: 20000 ≤ 20000 passes (equality);
            //    tier 2 = {101, 100 evicted}: 20200 > 20000 fails.
            let mut g = lg();
            base(&mut g);
            put(&mut g, nr_hist, FILE, 1, 100, 60);
            protect(&mut g, p, nr_hist, FILE, 1, 40);
            put(&mut g, nr_hist, FILE, 2, 101, 100);
            assert_eq!(get_tier_idx(&g, p, nr_hist, FILE), 1);
            // The same 40 protected pages at index 1 (mainline's slot for tier 1) count for tier 2
            // instead: tier 1 = {100, 60}: 20000 > 100·60·2 = 12000 fails → 0.
            let hf = h(&g, nr_hist, FILE);
            g.protected[hf][FILE] = [0, 40, 0, 0];
            assert_eq!(get_tier_idx(&g, p, nr_hist, FILE), 0);

            // 2: tiers 1, 2 = {100, 100} pass; tier 3 = {150, 50 evicted + 50 protected (slot 2)}:
            //    150·200 = 30000 > 100·100·2 = 20000 fails.
            let mut g = lg();
            base(&mut g);
            put(&mut g, nr_hist, FILE, 1, 100, 100);
            put(&mut g, nr_hist, FILE, 2, 100, 100);
            put(&mut g, nr_hist, FILE, 3, 150, 50);
            protect(&mut g, p, nr_hist, FILE, 3, 50);
            assert_eq!(get_tier_idx(&g, p, nr_hist, FILE), 2);

            // 3: tier 3 = {90, 100}: 18000 ≤ 20000 passes → nothing protected by tier.
            let hf = h(&g, nr_hist, FILE);
            g.refaulted[hf][FILE][3] = 90;
            assert_eq!(get_tier_idx(&g, p, nr_hist, FILE), 3);
            // index 3 of our array is not a 6.1 slot: it changes nothing.
            g.protected[hf][FILE][3] = 1_000_000;
            assert_eq!(get_tier_idx(&g, p, nr_hist, FILE), 3);
            // the anon type has its own (empty) history
            assert_eq!(get_tier_idx(&g, p, nr_hist, ANON), 3);
        }
    }

    #[test]
    fn tier_idx_mainline_gains_2_3() {
        let p = Profile::Mainline;
        for nr_hist in HISTS {
            // Tier 0 (setpoint, gain 2): refaulted 99, total 100 evicted + 36 protected = 136
            // (mainline counts tier-0 protection). pv at tier t (gain 3) passes iff
            // pv.r·(136+64)·2 ≤ (99+1)·pv.t·3, i.e. 400·pv.r ≤ 300·pv.t, i.e. pv.r/pv.t ≤ 0.75.
            let base = |g: &mut LruGen| {
                put(g, nr_hist, ANON, 0, 99, 100);
                protect(g, p, nr_hist, ANON, 0, 36);
            };

            // 0: tier 1 = {80, 100}: 400·80 = 32000 > 300·100 = 30000 fails. (6.1's 1:2 would
            //    pass it: 80·200·1 = 16000 ≤ 100·100·2 = 20000.)
            let mut g = lg();
            base(&mut g);
            put(&mut g, nr_hist, ANON, 1, 80, 100);
            assert_eq!(get_tier_idx(&g, p, nr_hist, ANON), 0);

            // 1: tier 1 = {75, 60 evicted + 40 protected (slot 1)}: 30000 ≤ 30000 passes;
            //    tier 2 = {76, 100}: 30400 > 30000 fails.
            let mut g = lg();
            base(&mut g);
            put(&mut g, nr_hist, ANON, 1, 75, 60);
            protect(&mut g, p, nr_hist, ANON, 1, 40);
            assert_eq!(
                g.protected[h(&g, nr_hist, ANON)][ANON][1],
                40,
                "mainline keeps tier 1 at index 1"
            );
            put(&mut g, nr_hist, ANON, 2, 76, 100);
            assert_eq!(get_tier_idx(&g, p, nr_hist, ANON), 1);

            // 2: tier 2 = {60, 80}: 24000 ≤ 24000 passes; tier 3 = {100, 100}: 40000 > 30000 fails.
            let ha = h(&g, nr_hist, ANON);
            g.refaulted[ha][ANON][2] = 60;
            g.evicted[ha][ANON][2] = 80;
            put(&mut g, nr_hist, ANON, 3, 100, 100);
            assert_eq!(get_tier_idx(&g, p, nr_hist, ANON), 2);

            // 3: tier 3 = {63, 10}: 63 < 64 refaults → positive regardless of the rate.
            put(&mut g, nr_hist, ANON, 3, 63, 10);
            assert_eq!(get_tier_idx(&g, p, nr_hist, ANON), 3);
        }
    }

    #[test]
    fn tier_idx_uses_averages() {
        // Only the averages are set (a previous generation's history): 6.1, tier 0 = {99, 136},
        // tier 1 = avg {101, 100}: 101·200·1 = 20200 > 100·100·2 = 20000 → 0. Adding 1 to the
        // current slot's evictions of tier 1 makes it 100·101·2 = 20200 ≥ 20200 → passes → 3.
        let mut g = lg();
        g.avg_refaulted[FILE] = [99, 101, 0, 0];
        g.avg_total[FILE] = [136, 100, 0, 0];
        assert_eq!(get_tier_idx(&g, Profile::V6_1, 4, FILE), 0);
        g.evicted[h(&g, 4, FILE)][FILE][1] = 1;
        assert_eq!(get_tier_idx(&g, Profile::V6_1, 4, FILE), 3);
    }

    // ---------------------------------------------------------------- select_type

    /// Anon tier 0 = {99, 136}; file tier 0 = {100, 300}, tier 1 = {70, 60}, tier 2 = {71, 60}
    /// (all evictions, no protection, so both profiles read the same numbers).
    fn history(nr_hist: usize) -> LruGen {
        let mut g = lg();
        put(&mut g, nr_hist, ANON, 0, 99, 136);
        put(&mut g, nr_hist, FILE, 0, 100, 300);
        put(&mut g, nr_hist, FILE, 1, 70, 60);
        put(&mut g, nr_hist, FILE, 2, 71, 60);
        g
    }

    #[test]
    fn select_type_shortcuts() {
        for nr_hist in HISTS {
            for g in [lg(), history(nr_hist)] {
                for p in BOTH {
                    assert_eq!(select_type(&g, p, nr_hist, 0), (FILE, None));
                    assert_eq!(select_type(&g, p, nr_hist, 1), (FILE, None));
                    assert_eq!(select_type(&g, p, nr_hist, 200), (ANON, None));
                }
                assert_eq!(select_type(&g, Profile::Mainline, nr_hist, 201), (ANON, None));
            }
            // Empty history, PID range: pv.refaulted = 0 < 64 → file. 6.1 also computes the tier
            // against anon's tier 0: every file tier has 0 refaults → 3.
            for s in [60, 100, 199] {
                assert_eq!(select_type(&lg(), Profile::V6_1, nr_hist, s), (FILE, Some(3)));
                assert_eq!(select_type(&lg(), Profile::Mainline, nr_hist, s), (FILE, None));
            }
            // 6.1 with 201 (out of its range): gain[file] = 200 − 201 wraps to 2^64 − 1, but with no
            // refaults the "< 64" rule decides → file, tier 3.
            assert_eq!(select_type(&lg(), Profile::V6_1, nr_hist, 201), (FILE, Some(3)));
        }
    }

    #[test]
    fn select_type_v6_1_min_seq_shortcut() {
        for nr_hist in HISTS {
            let mut g = history(nr_hist);
            // anon one generation older than file: anon first, tier left to get_tier_idx — even at
            // swappiness 1 (the shortcut comes first), but not at 0.
            g.min_seq = [4, 5];
            for s in [1, 60, 100, 199, 200, 201] {
                assert_eq!(
                    select_type(&g, Profile::V6_1, nr_hist, s),
                    (ANON, None),
                    "swappiness {s}"
                );
            }
            assert_eq!(select_type(&g, Profile::V6_1, nr_hist, 0), (FILE, None));
            // file older than anon is no shortcut: the PID runs (see select_type_v6_1_pid).
            g.min_seq = [5, 4];
            assert_eq!(select_type(&g, Profile::V6_1, nr_hist, 1), (FILE, None));
            // mainline has no such shortcut: empty history → file.
            let mut g = lg();
            g.min_seq = [4, 5];
            assert_eq!(select_type(&g, Profile::Mainline, nr_hist, 60), (FILE, None));
        }
    }

    #[test]
    fn select_type_v6_1_pid() {
        let p = Profile::V6_1;
        for nr_hist in HISTS {
            let g = history(nr_hist);
            // Type: sp = anon tier 0 {99, 136, s}, pv = file tier 0 {100, 300, 200 − s}.
            // file iff 100·(136+64)·s ≤ (99+1)·300·(200 − s) ⇔ 20000·s ≤ 30000·(200 − s) ⇔ s ≤ 120.
            //   s=60:  1,200,000 ≤ 4,200,000 → file     s=100: 2,000,000 ≤ 3,000,000 → file
            //   s=120: 2,400,000 ≤ 2,400,000 → file     s=121: 2,420,000 > 2,370,000 → anon
            //   s=199: 3,980,000 > 30,000 → anon
            // Tier (file chosen): sp = anon tier 0 with gain s, pv = file tier t with gain 200 − s:
            //   pass iff pv.r·200·s ≤ 100·pv.t·(200 − s).
            //   s=60:  tier 1 {70, 60}: 840,000 ≤ 840,000 passes; tier 2 {71, 60}: 852,000 fails → 1.
            //   s=100: tier 1: 1,400,000 > 600,000 fails → 0.
            //   s=120: tier 1: 1,680,000 > 480,000 fails → 0.
            // Tier (anon chosen): sp = file tier 0 {100, 300, 200 − s}, anon tiers 1..3 have no
            // refaults → 3.
            assert_eq!(select_type(&g, p, nr_hist, 60), (FILE, Some(1)));
            assert_eq!(select_type(&g, p, nr_hist, 100), (FILE, Some(0)));
            assert_eq!(select_type(&g, p, nr_hist, 120), (FILE, Some(0)));
            assert_eq!(select_type(&g, p, nr_hist, 121), (ANON, Some(3)));
            assert_eq!(select_type(&g, p, nr_hist, 199), (ANON, Some(3)));
            // get_tier_idx against file's own tier 0 {100, 300} with 1:2 would differ at s=60:
            // tier 1: 70·364·1 = 25480 > 101·60·2 = 12120 → 0.
            assert_eq!(get_tier_idx(&g, p, nr_hist, FILE), 0);
            // 201 (not a 6.1 value), as the C arithmetic would run it: gain[file] = 2^64 − 1.
            //   type: 100·200·201 = 4,020,000 ≤ 100·300·(2^64−1) ≡ 2^64 − 30,000 → file;
            //   tiers: 70·200·201 = 2,814,000 ≤ 2^64 − 6,000; 71·…·201 = 2,854,200 ≤ 2^64 − 6,000;
            //   tier 3 empty → 3.
            assert_eq!(select_type(&g, p, nr_hist, 201), (FILE, Some(3)));
        }
    }

    #[test]
    fn select_type_mainline_pid() {
        let p = Profile::Mainline;
        for nr_hist in HISTS {
            let g = history(nr_hist);
            // sp = anon, all tiers: {99, 136, s}; pv = file, all tiers: {100+70+71 = 241,
            // 300+60+60 = 420, 200 − s}. file iff 241·200·s ≤ 100·420·(200 − s)
            // ⇔ 48200·s ≤ 42000·(200 − s) ⇔ s ≤ 8,400,000 / 90,200 = 93.1.
            //   s=60:  2,892,000 ≤ 5,880,000 → file
            //   s=93:  4,482,600 ≤ 4,494,000 → file     s=94: 4,530,800 > 4,452,000 → anon
            //   s=100: 4,820,000 > 4,200,000 → anon (6.1 picks file here: it looks at tier 0 only)
            //   s=199: 9,591,800 > 42,000 → anon
            assert_eq!(select_type(&g, p, nr_hist, 60), (FILE, None));
            assert_eq!(select_type(&g, p, nr_hist, 93), (FILE, None));
            assert_eq!(select_type(&g, p, nr_hist, 94), (ANON, None));
            assert_eq!(select_type(&g, p, nr_hist, 100), (ANON, None));
            assert_eq!(select_type(&g, p, nr_hist, 199), (ANON, None));
            assert_eq!(select_type(&g, p, nr_hist, 200), (ANON, None));
            assert_eq!(select_type(&g, p, nr_hist, 201), (ANON, None));
        }
    }

    #[test]
    fn select_type_reads_each_types_own_slot() {
        // nr_hist 4, min_seq = [6, 5]: anon reads slot 2, file slot 1. Anon refaults in slot 1
        // (file's slot) are not anon's current history.
        let p = Profile::Mainline;
        let mut g = lg();
        g.min_seq = [6, 5];
        put(&mut g, 4, FILE, 0, 100, 100);
        g.refaulted[1][ANON][0] = 1_000_000;
        // anon {0, 0, 60}, file {100, 100, 140}: 100·64·60 = 384,000 > 1·100·140 → anon.
        assert_eq!(select_type(&g, p, 4, 60), (ANON, None));
        g.refaulted[2][ANON][0] = 1_000_000;
        // anon {1e6, 0}: 384,000 ≤ 1,000,001·100·140 → file.
        assert_eq!(select_type(&g, p, 4, 60), (FILE, None));
    }

    // ---------------------------------------------------------------- reset_ctrl_pos

    fn filled(nr_hist: usize) -> LruGen {
        let mut g = lg();
        for hist in 0..nr_hist {
            for ty in [ANON, FILE] {
                g.refaulted[hist][ty] = [5, 6, 7, 8];
                g.evicted[hist][ty] = [31, 32, 33, 34];
                g.protected[hist][ty] = [10, 20, 30, 40];
            }
        }
        g.avg_refaulted = [[10, 11, 12, 13]; 2];
        g.avg_total = [[100, 100, 100, 100]; 2];
        g
    }

    #[test]
    fn carryover_halves_into_the_average() {
        for nr_hist in HISTS {
            for p in BOTH {
                let mut g = filled(nr_hist);
                let before = g.clone();
                reset_ctrl_pos(&mut g, p, nr_hist, FILE, true);
                // avg_refaulted = (avg + refaulted) / 2: (10+5)/2 = 7, (11+6)/2 = 8, (12+7)/2 = 9,
                // (13+8)/2 = 10 (integer division).
                assert_eq!(g.avg_refaulted[FILE], [7, 8, 9, 10]);
                // avg_total = (avg + evicted + protected) / 2 with the profile's protected slot:
                //   6.1:      (100+31)/2 = 65, (100+32+10)/2 = 71, (100+33+20)/2 = 76, (100+34+30)/2 = 82
                //   mainline: (100+31+10)/2 = 70, (100+32+20)/2 = 76, (100+33+30)/2 = 81, (100+34+40)/2 = 87
                let want = match p {
                    Profile::V6_1 => [65, 71, 76, 82],
                    Profile::Mainline => [70, 76, 81, 87],
                };
                assert_eq!(g.avg_total[FILE], want, "{p:?}");
                // the other type is untouched
                assert_eq!(g.avg_refaulted[ANON], before.avg_refaulted[ANON]);
                assert_eq!(g.avg_total[ANON], before.avg_total[ANON]);
                assert_eq!(g.refaulted[0][ANON], before.refaulted[0][ANON]);
                if nr_hist == 1 {
                    // one slot: it is cleared for the next generation (6.1: protected 0..=2 only)
                    assert_eq!(g.refaulted[0][FILE], [0; 4]);
                    assert_eq!(g.evicted[0][FILE], [0; 4]);
                    let prot = match p {
                        Profile::V6_1 => [0, 0, 0, 40],
                        Profile::Mainline => [0; 4],
                    };
                    assert_eq!(g.protected[0][FILE], prot);
                } else {
                    // four slots: carryover never clears; max_seq's advance does
                    assert_eq!(g.refaulted, before.refaulted);
                    assert_eq!(g.evicted, before.evicted);
                    assert_eq!(g.protected, before.protected);
                }
            }
        }
    }

    #[test]
    fn carryover_reads_the_slot_of_min_seq() {
        // nr_hist 4, min_seq[anon] = 6 → slot 2. Only slot 2 feeds the average.
        let mut g = lg();
        g.min_seq[ANON] = 6;
        g.refaulted[1][ANON] = [1000; 4];
        g.refaulted[2][ANON] = [8, 0, 0, 3];
        reset_ctrl_pos(&mut g, Profile::Mainline, 4, ANON, true);
        // (0 + 8)/2 = 4, (0 + 3)/2 = 1
        assert_eq!(g.avg_refaulted[ANON], [4, 0, 0, 1]);
    }

    #[test]
    fn ema_converges_geometrically() {
        // One slot, 100 refaults of 200 evictions per generation, starting from nothing:
        // a' = (a + 100)/2: 0 → 50 → 75 → 87 → 93 → 96 → 98 → 99 → 99 (floors);
        // t' = (t + 200)/2: 0 → 100 → 150 → 175 → 187 → 193 → 196 → 198 → 199.
        let want_r = [50, 75, 87, 93, 96, 98, 99, 99];
        let want_t = [100, 150, 175, 187, 193, 196, 198, 199];
        for p in BOTH {
            let mut g = lg();
            for i in 0..want_r.len() {
                put(&mut g, 1, ANON, 0, 100, 200);
                reset_ctrl_pos(&mut g, p, 1, ANON, true);
                g.min_seq[ANON] += 1;
                assert_eq!((g.avg_refaulted[ANON][0], g.avg_total[ANON][0]), (want_r[i], want_t[i]));
            }
        }
    }

    #[test]
    fn max_seq_advance_clears_the_next_slot() {
        for p in BOTH {
            // four slots: max_seq = 7 → clear slot hist(8) = 0 of the given type only.
            let mut g = filled(4);
            let before = g.clone();
            reset_ctrl_pos(&mut g, p, 4, ANON, false);
            assert_eq!(g.refaulted[0][ANON], [0; 4]);
            assert_eq!(g.evicted[0][ANON], [0; 4]);
            let prot = match p {
                Profile::V6_1 => [0, 0, 0, 40],
                Profile::Mainline => [0; 4],
            };
            assert_eq!(g.protected[0][ANON], prot);
            for hist in 1..4 {
                assert_eq!(g.refaulted[hist], before.refaulted[hist]);
                assert_eq!(g.evicted[hist], before.evicted[hist]);
                assert_eq!(g.protected[hist], before.protected[hist]);
            }
            assert_eq!(g.refaulted[0][FILE], before.refaulted[0][FILE]);
            assert_eq!(g.avg_refaulted, before.avg_refaulted);
            assert_eq!(g.avg_total, before.avg_total);

            // one slot: nothing to do (the slot is cleared by carryover instead).
            let mut g = filled(1);
            let before = g.clone();
            reset_ctrl_pos(&mut g, p, 1, ANON, false);
            assert_eq!(g.refaulted, before.refaulted);
            assert_eq!(g.evicted, before.evicted);
            assert_eq!(g.protected, before.protected);
            assert_eq!(g.avg_total, before.avg_total);
        }
    }

    // ---------------------------------------------------------------- tiers

    #[test]
    fn order_base_2_values() {
        let want = [0, 0, 1, 2, 2, 3, 3, 3, 3, 4];
        for (n, w) in want.iter().enumerate() {
            assert_eq!(order_base_2(n as u32), *w, "order_base_2({n})");
        }
    }

    #[test]
    fn tier_from_refs_tables() {
        // 6.1: order_base_2(refs + 1): refs 0..=4 → obase2(1..=5) = 0, 1, 2, 2, 3; the workingset
        // argument is already inside refs.
        for ws in [false, true] {
            let got: Vec<usize> = (0..=4).map(|r| tier_from_refs(Profile::V6_1, r, ws)).collect();
            assert_eq!(got, [0, 1, 2, 2, 3]);
        }
        // Mainline: order_base_2(refs): refs 0..=4 → 0, 0, 1, 2, 2; PG_workingset → 3.
        let got: Vec<usize> = (0..=4).map(|r| tier_from_refs(Profile::Mainline, r, false)).collect();
        assert_eq!(got, [0, 0, 1, 2, 2]);
        for r in 0..=4 {
            assert_eq!(tier_from_refs(Profile::Mainline, r, true), 3);
        }
    }

    /// One `folio_mark_accessed` in each profile (`folio_inc_refs` 6.1, `lru_gen_inc_refs` mainline).
    fn fd_access(p: Profile, flags: u32) -> u32 {
        let mask = (flags & pg::REFS_MASK) >> pg::REFS_SHIFT;
        let with_mask = |m: u32| (flags & !pg::REFS_MASK) | (m << pg::REFS_SHIFT);
        match p {
            Profile::V6_1 => {
                if flags & pg::REFERENCED == 0 {
                    flags | pg::REFERENCED
                } else if flags & pg::WORKINGSET == 0 {
                    flags | pg::WORKINGSET
                } else {
                    with_mask((mask + 1).min(3))
                }
            }
            Profile::Mainline => {
                if flags & pg::REFERENCED == 0 {
                    (flags & !pg::REFS_MASK) | pg::REFERENCED
                } else if mask < 3 {
                    with_mask(mask + 1)
                } else {
                    flags | pg::WORKINGSET
                }
            }
        }
    }

    #[test]
    fn n_fd_accesses_to_tier() {
        // N accesses → tier order_base_2(N): N ≤ 1 → 0, 2 → 1, 3–4 → 2, ≥ 5 → 3.
        let want_tier = [0, 0, 1, 2, 2, 3, 3, 3];
        // 6.1 refs = mask + workingset: N=0: 0; 1: ref → 0; 2: +ws → 1; 3..5: mask 1..3 → 2..4; then 4.
        // mainline refs = referenced ? mask + 1 : 0: 0, 1, 2, 3, 4, 4 (+ws), 4, 4.
        let want_refs = |p: Profile| match p {
            Profile::V6_1 => [0, 0, 1, 2, 3, 4, 4, 4],
            Profile::Mainline => [0, 1, 2, 3, 4, 4, 4, 4],
        };
        for p in BOTH {
            let mut flags = pg::LRU | pg::ALLOCATED;
            for (n, (refs, tier)) in want_refs(p).into_iter().zip(want_tier).enumerate() {
                assert_eq!(folio_lru_refs(p, flags), refs, "{p:?} N={n} refs");
                assert_eq!(folio_tier(p, flags), tier, "{p:?} N={n} tier");
                flags = fd_access(p, flags);
            }
        }
    }

    #[test]
    fn refs_encodings_differ() {
        // The same flags word means different things: workingset alone is tier 3 in mainline but
        // refs 1 → tier 1 in 6.1; a mask without PG_referenced counts in 6.1 only.
        let ws = pg::WORKINGSET;
        assert_eq!(folio_tier(Profile::Mainline, ws), 3);
        assert_eq!(folio_tier(Profile::V6_1, ws), 1);
        let mask2 = 2 << pg::REFS_SHIFT;
        assert_eq!(folio_lru_refs(Profile::V6_1, mask2), 2);
        assert_eq!(folio_lru_refs(Profile::Mainline, mask2), 0);
        assert_eq!(folio_lru_refs(Profile::Mainline, mask2 | pg::REFERENCED), 3);
    }

    #[test]
    fn protected_idx_mapping() {
        assert_eq!(
            (0..4).map(|t| protected_idx(Profile::V6_1, t)).collect::<Vec<_>>(),
            [None, Some(0), Some(1), Some(2)]
        );
        assert_eq!(
            (0..4).map(|t| protected_idx(Profile::Mainline, t)).collect::<Vec<_>>(),
            [Some(0), Some(1), Some(2), Some(3)]
        );
    }
}

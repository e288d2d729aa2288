// SPDX-License-Identifier: GPL-2.0-only
//! Refaults under MGLRU (`mm/workingset.c`, `lru_gen_eviction`, `lru_gen_test_recent`,
//! `lru_gen_refault`; `kernel-mglru.md` §7).
//!
//! The shadow of an evicted folio holds a token: the `min_seq` of its type when it was evicted and
//! its refs (accesses through file descriptors beyond the first), plus the workingset bit. A
//! refault is "recent" while the lruvec has not aged far past that generation (mainline: within
//! `MAX_NR_GENS` of `max_seq`; 6.1: the same `min_seq` still). Recent refaults are counted per tier
//! in `refaulted[]`, the numerator of the PID controller; `evicted[]` counts the denominator at
//! shadow time.

use super::{gen_from_seq, hist_from_seq, pid, Mglru, MAX_NR_GENS};
use crate::mm::folio::{pg, FolioId, FILE};
use crate::mm::Machine;
use crate::reclaim::classic::workingset::workingset_size;
use crate::reclaim::classic::workingset::{refault_stats, Shadow, EVICTION_MASK};

/// `LRU_REFS_WIDTH`.
const REFS_WIDTH: u32 = 2;
/// `refault_distance` variant: bits of the shadow's eviction field kept for the token
/// (16 of `min_seq`, 2 of refs); the clock has the rest.
const DISTANCE_TOKEN_BITS: u32 = 18;
const DISTANCE_TOKEN_MASK: u64 = (1 << DISTANCE_TOKEN_BITS) - 1;
const DISTANCE_CLOCK_MASK: u64 = EVICTION_MASK >> DISTANCE_TOKEN_BITS;

/// Whether the `refault_distance` variant is in effect (not under MGLRU-FG, which dropped it).
fn distance_on(p: &Mglru) -> bool {
    p.sw().refault_distance && !p.sw().fg_unified_refs
}

/// MGLRU-FG with `fg_refault_distance` (inferred token layout): generation bits of the token;
/// the eviction clock takes the bits above them.
const FG_SEQ_BITS: u32 = 14;
/// Eviction clock bits of an FG refault-distance token.
const FG_AGE_BITS: u32 = super::super::classic::workingset::EVICTION_BITS - REFS_WIDTH - FG_SEQ_BITS;

/// Whether the shadows carry an eviction clock (MGLRU-FG with `fg_refault_distance`).
fn fg_distance(p: &Mglru) -> bool {
    p.sw().fg_unified_refs && p.sw().fg_refault_distance
}

/// Low clock bits an FG refault-distance shadow drops so that the clock of the machine fits
/// (`bucket_order` for `FG_AGE_BITS`).
fn fg_bucket_order(m: &Machine) -> u32 {
    let total = m.cfg.total_pages();
    let max_order = 64 - total.saturating_sub(1).leading_zeros();
    max_order.saturating_sub(FG_AGE_BITS)
}

/// `lru_gen_eviction`: the shadow of a folio being reclaimed; counts `evicted[]`.
pub fn lru_gen_eviction(p: &mut Mglru, m: &mut Machine, id: FolioId) -> u64 {
    let f = m.folios[id];
    let t = f.lru_type();
    let refs = p.folio_lru_refs(&f);
    let fg = p.sw().fg_unified_refs;
    let ws = p.test_workingset(&f);
    let tier = pid::tier_from_refs(p.sw(), refs, ws);
    let lv = p.lv_of(&f);
    let min_seq = p.lruvecs[lv].min_seq[t];
    if let Some(x) = m.explain.as_deref_mut() {
        x.evicted(
            id,
            lv,
            t != FILE,
            crate::explain::Evicted::Mglru {
                age: p.lruvecs[lv].max_seq - min_seq,
                tier,
            },
        )
    }
    // v3 (inferred: the token layout): FG's 0..=7 does not fit the 2-bit field, so the shadow
    // keeps the tier there, and `refs ≥ 2` as its workingset bit
    let low = if fg { tier as u64 } else { refs.saturating_sub(1) as u64 };
    let mut token = (min_seq << REFS_WIDTH) | low;
    if distance_on(p) {
        // refault_distance: the eviction clock above the (narrower) token
        let clock = p.lruvecs[lv].evictions & DISTANCE_CLOCK_MASK;
        token = (clock << DISTANCE_TOKEN_BITS) | (token & DISTANCE_TOKEN_MASK);
        p.lruvecs[lv].evictions += 1;
    } else if fg_distance(p) {
        let age = p.lruvecs[lv].nonresident_age >> fg_bucket_order(m);
        let seq_mask = (1u64 << FG_SEQ_BITS) - 1;
        token = ((age & ((1 << FG_AGE_BITS) - 1)) << (FG_SEQ_BITS + REFS_WIDTH))
            | ((min_seq & seq_mask) << REFS_WIDTH)
            | low;
        p.lruvecs[lv].nonresident_age += 1;
    }
    let hist = hist_from_seq(min_seq, p.nr_hist);
    p.lruvecs[lv].evicted[hist][t][tier] += 1;
    let workingset = if p.sw().workingset_protection_rework {
        ws
    } else {
        refs != 0
    };
    Shadow {
        eviction: token & EVICTION_MASK,
        memcg: f.memcg,
        node: f.node(),
        workingset,
    }
    .pack()
}

/// `lru_gen_test_recent`: whether the shadow's generation is still recent in its lruvec.
/// Returns (recent, lruvec index) or `None` if the lruvec does not exist.
pub fn lru_gen_test_recent(p: &Mglru, m: &Machine, s: &Shadow, t: usize) -> Option<bool> {
    if s.memcg as usize >= m.memcgs.len() || s.node >= m.nr_nodes() {
        return None;
    }
    let lg = &p.lruvecs[p.lv(s.memcg, s.node)];
    let (mask, token_seq) = if distance_on(p) {
        (
            DISTANCE_TOKEN_MASK >> REFS_WIDTH,
            (s.eviction & DISTANCE_TOKEN_MASK) >> REFS_WIDTH,
        )
    } else if fg_distance(p) {
        let mask = (1u64 << FG_SEQ_BITS) - 1;
        (mask, (s.eviction >> REFS_WIDTH) & mask)
    } else {
        (EVICTION_MASK >> REFS_WIDTH, s.eviction >> REFS_WIDTH)
    };
    Some(if p.sw().refault_detection_rework {
        (lg.max_seq & mask).abs_diff(token_seq) < MAX_NR_GENS as u64
    } else {
        token_seq == lg.min_seq[t] & mask
    })
}

/// `refault_distance` variant: whether the evictions since the shadow's are at most the
/// workingset size of the evicting lruvec, as the classic `workingset_test_recent` sizes it
/// (MGLRU's active/inactive sizes: the two youngest generations are "active").
fn refault_distance_within_workingset(p: &Mglru, m: &Machine, s: &Shadow, file: bool) -> bool {
    let lg = &p.lruvecs[p.lv(s.memcg, s.node)];
    let clock = s.eviction >> DISTANCE_TOKEN_BITS;
    let distance = lg.evictions.wrapping_sub(clock) & DISTANCE_CLOCK_MASK;
    distance <= workingset_size(m, s.memcg, s.node, file)
}

/// MGLRU-FG refault distance (RFC 00/32; inferred as the classic `workingset_test_recent`): the
/// evictions of the lruvec since the shadow's, against `refault_threshold_pct` of the workingset
/// size (active file, plus inactive file for an anon refault, plus anon while swap has room).
fn fg_refault_within(p: &Mglru, m: &Machine, s: &Shadow, file: bool) -> bool {
    let lg = &p.lruvecs[p.lv(s.memcg, s.node)];
    let order = fg_bucket_order(m);
    let age_mask = (1u64 << FG_AGE_BITS) - 1;
    let evicted_at = (s.eviction >> (FG_SEQ_BITS + REFS_WIDTH)) & age_mask;
    let now = (lg.nonresident_age >> order) & age_mask;
    let distance = (now.wrapping_sub(evicted_at) & age_mask) << order;
    distance * 100 <= workingset_size(m, s.memcg, s.node, file) * p.cfg.fg.refault_threshold_pct as u64
}

/// `lru_gen_refault`: a folio is instantiated where `shadow` was.
pub fn lru_gen_refault(p: &mut Mglru, m: &mut Machine, id: FolioId, shadow: u64, in_fault: bool) {
    let mut s = Shadow::unpack(shadow);
    // `mem_cgroup_from_id`: the id of a removed memcg no longer resolves, and
    // `mem_cgroup_lruvec(NULL, pgdat)` is the root's lruvec
    if (s.memcg as usize) < m.memcgs.len() {
        s.memcg = m.memcgs.from_id(s.memcg).unwrap_or(crate::mm::memcg::ROOT_MEMCG);
    }
    let f = m.folios[id];
    let t = f.lru_type();
    // a refault into another lruvec (memcg or node changed) counts nothing
    if s.node != f.node() || s.memcg != f.memcg {
        return;
    }
    let Some(recent) = lru_gen_test_recent(p, m, &s, t) else {
        return;
    };
    if let Some(x) = m.explain.as_deref_mut() {
        x.refault_verdict(id, recent)
    }
    let lv = p.lv_of(&f);
    let (refault, activate, restore) = refault_stats(t == FILE);
    if distance_on(p) || fg_distance(p) {
        // the distance test reads the lruvec sizes as `workingset_test_recent` does
        m.flush_stats_ratelimited();
    }
    if distance_on(p) && refault_distance_within_workingset(p, m, &s, t == FILE) {
        m.folios[id].set(pg::ACTIVE);
    }
    let sw = *p.sw();
    if sw.fg_unified_refs {
        // v3: no refault distance (the RFC 00/32 had one; v3 dropped it): the 7.2 accounting,
        // with the tier from the shadow and workingset restored as refs = LRU_REFS_WORKINGSET
        m.mod_lruvec_state(f.memcg, f.node(), refault, 1);
        // RFC 00/32 (`fg_refault_distance`): a refault within the workingset size is activated,
        // recent or not (the distance is its own test, as in the classic LRU)
        let distance_activated = fg_distance(p) && fg_refault_within(p, m, &s, t == FILE);
        if distance_activated {
            m.folios[id].set(pg::ACTIVE);
            m.mod_lruvec_state(f.memcg, f.node(), activate, 1);
        }
        if !recent {
            return;
        }
        let tier = (s.eviction & 3) as usize;
        let hist = hist_from_seq(p.lruvecs[lv].min_seq[t], p.nr_hist);
        p.lruvecs[lv].refaulted[hist][t][tier] += 1;
        if !distance_activated && in_fault && (s.workingset || !sw.workingset_activate_needs_workingset) {
            m.mod_lruvec_state(f.memcg, f.node(), activate, 1);
        }
        if s.workingset {
            pid::fg_set_refs(&mut m.folios[id].flags, pid::FG_REFS_WORKINGSET);
            m.mod_lruvec_state(f.memcg, f.node(), restore, 1);
        }
        return;
    }
    match sw.refault_detection_rework {
        false => {
            // 6.12: every refault on the same lruvec counts, every recent one activates
            if sw.workingset_activate_at_refault {
                m.mod_lruvec_state(f.memcg, f.node(), refault, 1);
            }
            if !recent {
                return;
            }
            let hist = hist_from_seq(p.lruvecs[lv].min_seq[t], p.nr_hist);
            let refs = (s.eviction & 3) as u32 + s.workingset as u32;
            let tier = pid::tier_from_refs(&sw, refs, false);
            p.lruvecs[lv].refaulted[hist][t][tier] += 1;
            if sw.workingset_activate_at_refault {
                m.mod_lruvec_state(f.memcg, f.node(), activate, 1);
            } else {
                m.mod_lruvec_state(f.memcg, f.node(), refault, 1);
            }
            if in_fault || refs >= (1 << REFS_WIDTH) - 1 {
                let fm = &mut m.folios[id];
                fm.set_refs(3);
                fm.set(pg::WORKINGSET);
                m.mod_lruvec_state(f.memcg, f.node(), restore, 1);
            }
        }
        true => {
            m.mod_lruvec_state(f.memcg, f.node(), refault, 1);
            if !recent {
                return;
            }
            let refs = (s.eviction & 3) as u32 + 1;
            let tier = pid::tier_from_refs(&sw, refs, s.workingset);
            let hist = hist_from_seq(p.lruvecs[lv].min_seq[t], p.nr_hist);
            p.lruvecs[lv].refaulted[hist][t][tier] += 1;
            if in_fault && (s.workingset || !sw.workingset_activate_needs_workingset) {
                m.mod_lruvec_state(f.memcg, f.node(), activate, 1);
            }
            if s.workingset {
                m.folios[id].set(pg::WORKINGSET);
                m.mod_lruvec_state(f.memcg, f.node(), restore, 1);
            } else {
                m.folios[id].set_refs(refs - 1);
            }
        }
    }
    let _ = gen_from_seq;
}

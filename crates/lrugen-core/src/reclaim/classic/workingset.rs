// SPDX-License-Identifier: GPL-2.0-only
//! Classic workingset refault detection (`mm/workingset.c`, the non-MGLRU half).
//!
//! Each lruvec keeps a `nonresident_age` clock that advances on every eviction and activation
//! (and propagates to the ancestors' lruvecs). An evicted folio leaves a shadow entry holding the
//! clock of the lruvec that reclaimed it, that memcg's id, the node and its `PG_workingset` bit.
//! When the page faults back in, the refault distance — how far the clock moved since — is
//! compared with the workingset size: if the page would have stayed resident had the active list
//! given it room, it is activated at once (`workingset_activate_*`), and if it was part of the
//! workingset before, its refault counts as a restore (`workingset_restore_*`) and as IO cost.

use super::Classic;
use crate::mm::folio::{pg, FolioId};
use crate::mm::memcg::{MemcgId, ROOT_MEMCG};
use crate::mm::vmstat::Stat;
use crate::mm::{LruLockSite, Machine};

/// Bits of the shadow entry the kernel spends on node, memcg id and the workingset flag
/// (`EVICTION_SHIFT` on Debian's x86-64 config: 1 workingset + 10 node bits + 16 memcg bits + the
/// xarray value tag), leaving `EVICTION_BITS` = 64 − 28 = 36 bits of eviction clock.
pub const EVICTION_SHIFT: u32 = 28;
/// Eviction clock bits.
pub const EVICTION_BITS: u32 = 64 - EVICTION_SHIFT;
/// Mask of the eviction clock.
pub const EVICTION_MASK: u64 = (1 << EVICTION_BITS) - 1;

/// A classic shadow entry, unpacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shadow {
    /// Eviction clock (`nonresident_age >> bucket_order`), masked.
    pub eviction: u64,
    /// Memcg of the lruvec that reclaimed it.
    pub memcg: MemcgId,
    /// Node.
    pub node: usize,
    /// `PG_workingset` at eviction.
    pub workingset: bool,
}

impl Shadow {
    /// Pack into at most 62 bits (`pack_shadow`).
    pub fn pack(&self) -> u64 {
        ((self.eviction & EVICTION_MASK) << 26)
            | ((self.memcg as u64) << 10)
            | (((self.node as u64) & 0x1ff) << 1)
            | self.workingset as u64
    }
    /// Unpack (`unpack_shadow`).
    pub fn unpack(v: u64) -> Self {
        Shadow {
            eviction: (v >> 26) & EVICTION_MASK,
            memcg: ((v >> 10) & 0xffff) as MemcgId,
            node: ((v >> 1) & 0x1ff) as usize,
            workingset: v & 1 != 0,
        }
    }
}

/// The `workingset_refault`, `workingset_activate` and `workingset_restore` items of the file or
/// anon LRU, which a refault counts in both LRU implementations.
pub(crate) fn refault_stats(file: bool) -> (Stat, Stat, Stat) {
    if file {
        (
            Stat::WorkingsetRefaultFile,
            Stat::WorkingsetActivateFile,
            Stat::WorkingsetRestoreFile,
        )
    } else {
        (
            Stat::WorkingsetRefaultAnon,
            Stat::WorkingsetActivateAnon,
            Stat::WorkingsetRestoreAnon,
        )
    }
}

/// `bucket_order`: how many low bits of the clock the shadow drops so that the clock of a machine
/// with `total_pages` fits in `EVICTION_BITS` (`workingset_init`).
pub fn bucket_order(total_pages: u64) -> u32 {
    let max_order = 64 - (total_pages.saturating_sub(1)).leading_zeros();
    max_order.saturating_sub(EVICTION_BITS)
}

impl Classic {
    /// `workingset_age_nonresident`: advance the clock of lruvec (memcg, node) and its ancestors.
    pub fn age_nonresident(&mut self, m: &Machine, memcg: MemcgId, node: usize, nr: u64) {
        let mut cur = Some(memcg);
        while let Some(c) = cur {
            let lv = m.lruvec(c, node);
            self.lruvecs[lv].nonresident_age += nr;
            cur = m.memcgs[c].parent;
        }
    }

    /// `workingset_eviction`: the shadow for a folio reclaimed on behalf of `target`.
    pub fn workingset_eviction(&mut self, m: &mut Machine, id: FolioId, target: Option<MemcgId>) -> u64 {
        let f = m.folios[id];
        let lv = m.lruvec(f.memcg, f.node());
        if let Some(x) = m.explain.as_deref_mut() {
            x.evicted(
                id,
                lv,
                !f.is_file_lru(),
                crate::explain::Evicted::Classic {
                    workingset: f.test(pg::WORKINGSET),
                    referenced: f.test(pg::REFERENCED),
                },
            )
        }
        let memcg = target.unwrap_or(ROOT_MEMCG);
        let node = f.node();
        let lv = m.lruvec(memcg, node);
        let eviction = self.lruvecs[lv].nonresident_age >> self.bucket_order;
        self.age_nonresident(m, memcg, node, 1);
        Shadow {
            eviction: eviction & EVICTION_MASK,
            memcg,
            node,
            workingset: f.test(pg::WORKINGSET),
        }
        .pack()
    }

    /// `workingset_test_recent`: whether the refault distance of `shadow` is within the workingset
    /// size of the lruvec that evicted it. Returns (recent, workingset bit).
    pub fn workingset_test_recent(&self, m: &Machine, shadow: u64, file: bool) -> (bool, bool) {
        let s = Shadow::unpack(shadow);
        // `mem_cgroup_from_id` + `mem_cgroup_tryget`: the id of a removed memcg no longer
        // resolves and the refault is not recent (ids are never reused here)
        if m.memcgs.from_id(s.memcg).is_none() {
            return (false, s.workingset);
        }
        let lv = m.lruvec(s.memcg, s.node);
        let refault = self.lruvecs[lv].nonresident_age;
        let distance = refault.wrapping_sub(s.eviction << self.bucket_order) & EVICTION_MASK;
        (distance <= workingset_size(m, s.memcg, s.node, file), s.workingset)
    }

    /// `workingset_refault`: account a refault of folio `id` and activate it if recent.
    pub fn workingset_refault(&mut self, m: &mut Machine, id: FolioId, shadow: u64) {
        let f = m.folios[id];
        let file = f.is_file_lru();
        let (memcg, node) = (f.memcg, f.node());
        let (refault, activate, restore) = refault_stats(file);
        m.mod_lruvec_state(memcg, node, refault, 1);
        // 6.1's `mem_cgroup_flush_stats_delayed`, later `workingset_test_recent`'s rate-limited flush
        m.flush_stats_ratelimited();
        let (recent, workingset) = self.workingset_test_recent(m, shadow, file);
        if let Some(x) = m.explain.as_deref_mut() {
            x.refault_verdict(id, recent)
        }
        if !recent {
            return;
        }
        m.folios[id].set(pg::ACTIVE);
        self.age_nonresident(m, memcg, node, 1);
        m.mod_lruvec_state(memcg, node, activate, 1);
        if workingset {
            m.folios[id].set(pg::WORKINGSET);
            self.lru_note_cost_refault(m, memcg, node, file);
            m.mod_lruvec_state(memcg, node, restore, 1);
        }
    }

    /// `lru_note_cost_refault`: a restored workingset page costs one IO of its type.
    fn lru_note_cost_refault(&mut self, m: &mut Machine, memcg: MemcgId, node: usize, file: bool) {
        // in the fault, not reclaim: its lock holds are priced as the folio batches' are
        let cost = if self.sw().lru_cost_rotations {
            crate::reclaim::SWAP_CLUSTER_MAX
        } else {
            1
        };
        self.add_cost(m, memcg, node, file, cost, LruLockSite::Batch);
    }

    /// `lru_note_cost`: `nr_io * SWAP_CLUSTER_MAX + nr_rotated` added to the type's cost in the
    /// lruvec and every ancestor; both costs halve when they exceed a quarter of the LRU.
    pub fn lru_note_cost(
        &mut self,
        m: &mut Machine,
        memcg: MemcgId,
        node: usize,
        file: bool,
        nr_io: u64,
        nr_rotated: u64,
    ) {
        self.add_cost(
            m,
            memcg,
            node,
            file,
            nr_io * crate::reclaim::SWAP_CLUSTER_MAX + nr_rotated,
            LruLockSite::Seq,
        );
    }

    /// 6.1's `lru_note_cost` (without `lru_cost_rotations`): one per page of I/O.
    pub fn lru_note_cost_pages(&mut self, m: &mut Machine, memcg: MemcgId, node: usize, file: bool, nr_pages: u64) {
        self.add_cost(m, memcg, node, file, nr_pages, LruLockSite::Seq);
    }

    /// `cost` added to the type's cost in the lruvec and every ancestor, both costs halved when
    /// they exceed a quarter of the LRU (a cost of zero only decays them, and not at all with
    /// `lru_note_cost_skips_zero`).
    /// Each level under its own `lru_lock` hold: bookkeeping in reclaim, a hold outside reclaim
    /// for a refault (`site`).
    fn add_cost(&mut self, m: &mut Machine, memcg: MemcgId, node: usize, file: bool, cost: u64, site: LruLockSite) {
        // 7.2 (`lru_note_cost_skips_zero`): nothing to note, no decay; the caller's hold of the
        // lruvec's lock is all there is
        if cost == 0 && self.sw().lru_note_cost_skips_zero {
            m.lru_lock_held(m.lruvec(memcg, node), site, 0);
            return;
        }
        let mut cur = Some(memcg);
        while let Some(c) = cur {
            let lv = m.lruvec(c, node);
            m.lru_lock_held(lv, site, 0);
            let l = &mut self.lruvecs[lv];
            if file {
                l.file_cost += cost;
            } else {
                l.anon_cost += cost;
            }
            let lru_size = m.lru_pages(c, node, 0) + m.lru_pages(c, node, 1);
            if l.anon_cost + l.file_cost > lru_size / 4 {
                l.anon_cost /= 2;
                l.file_cost /= 2;
            }
            cur = m.memcgs[c].parent;
        }
    }
}

/// The workingset size a refault distance is compared with in `workingset_test_recent`: the
/// lruvec's active file pages, plus its inactive file pages for an anon refault, plus its anon
/// pages (active; inactive too for a file refault) while swap has room for them. The sizes are
/// those of the last rstat flush (`lruvec_page_state`; the caller flushes rate-limited first).
pub fn workingset_size(m: &Machine, memcg: crate::mm::memcg::MemcgId, node: usize, file: bool) -> u64 {
    let st = |x: Stat| m.lruvec_state_flushed(memcg, node, x).max(0) as u64;
    let mut size = st(Stat::NrActiveFile);
    if !file {
        size += st(Stat::NrInactiveFile);
    }
    if m.swap.nr_free() > 0 && m.memcgs.swap_margin(memcg) > 0 {
        size += st(Stat::NrActiveAnon);
        if file {
            size += st(Stat::NrInactiveAnon);
        }
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn shadow_roundtrip(e in 0u64..(1 << EVICTION_BITS), memcg in any::<u16>(), node in 0usize..512, ws in any::<bool>()) {
            let s = Shadow { eviction: e, memcg, node, workingset: ws };
            let v = s.pack();
            prop_assert!(v <= crate::mm::pagecache::SHADOW_MASK);
            prop_assert_eq!(Shadow::unpack(v), s);
        }
    }

    #[test]
    fn bucket_order_is_zero_below_2_to_the_36() {
        assert_eq!(bucket_order(1 << 20), 0);
        assert_eq!(bucket_order(1 << 36), 0);
        assert_eq!(bucket_order((1 << 36) + 1), 1);
    }
}

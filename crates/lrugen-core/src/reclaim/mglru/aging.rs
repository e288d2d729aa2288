// SPDX-License-Identifier: GPL-2.0-only
//! Aging: producing generations (`kernel-mglru.md` §4, §6, §10).
//!
//! `inc_max_seq` opens a new youngest generation; before that, `try_to_inc_max_seq` walks the page
//! tables of every mm of the memcg that ran since the last walk (the mm list with its per-node
//! "used" bits), clearing accessed bits and promoting the folios found young to the youngest
//! generation (`folio_update_gen`: only the gen counter changes; the folio is relinked lazily by
//! `sort_folio`). PTE tables are visited only where the non-leaf PMD accessed bit and the Bloom
//! filter of the previous walk say they are worth it. At eviction, rmap finds young PTEs and looks
//! around them (`lru_gen_look_around`), feeding the Bloom filter for the next walk.

use super::bloom::{reset_bloom_filter, test_bloom_filter, update_bloom_filter};
use super::state::{mm_stat, MmTail, MIN_LRU_BATCH};
use super::{evictable_min_seq, gen_from_seq, hist_from_seq, pid, type_range, LruGen, Mglru};
use super::{MAX_NR_GENS, MIN_NR_GENS};
use crate::mm::folio::{pg, FolioId, ANON, FILE};
use crate::mm::memcg::MemcgId;
use crate::mm::vm::{pte, vmf, MmStruct, Vma, MMAP_BASE_VPN, PMD_NONE, PMD_YOUNG, PTRS_PER_PTE};
use crate::mm::{Lru, LruLockSite, Machine};
use crate::reclaim::{FolioRef, Reclaimer, ScanControl, DEF_PRIORITY};

/// `suitable_to_scan`: at least one young PTE per cache line of PTEs (8 on x86-64) on average.
#[inline]
pub fn suitable_to_scan(total: u64, young: u64) -> bool {
    young * 8 >= total
}

/// A stable "address" of a PMD entry, the Bloom filter item (`pmd + i` in the kernel).
#[inline]
pub fn pmd_item(mm: u32, pmd_index: usize) -> u64 {
    0xffff_8880_0000_0000 + ((mm as u64) << 24) + (pmd_index as u64) * 8
}

/// Walk-local state (`struct lru_gen_mm_walk`).
pub struct Walk {
    /// Lruvec being aged.
    pub lv: usize,
    /// Its memcg and node.
    pub memcg: MemcgId,
    /// Node.
    pub node: usize,
    /// The max_seq this walk works towards.
    pub seq: u64,
    /// Swappiness (6.1: `can_swap` = swappiness != 0).
    pub swappiness: u32,
    /// Scan regardless of the used bits and the Bloom filter.
    pub force_scan: bool,
    /// Pending size deltas `[gen][type][zone]` (`update_batch_size`).
    pub nr_pages: [[[i64; super::state::MAX_NR_ZONES]; 2]; MAX_NR_GENS],
    /// Pending updates.
    pub batched: u64,
    /// Walk statistics.
    pub mm_stats: [u64; super::state::MAX_NR_MM_STATS],
}

impl Walk {
    fn new(lv: usize, memcg: MemcgId, node: usize, seq: u64, swappiness: u32, force_scan: bool) -> Self {
        Walk {
            lv,
            memcg,
            node,
            seq,
            swappiness,
            force_scan,
            nr_pages: Default::default(),
            batched: 0,
            mm_stats: [0; super::state::MAX_NR_MM_STATS],
        }
    }
}

impl Mglru {
    // ---------------------------------------------------------------------------------------------
    // Folio gen updates
    // ---------------------------------------------------------------------------------------------

    /// `folio_update_gen`: a young PTE was seen by a page-table walk or look-around with a walk.
    /// Returns the folio's old gen if it moved to `gen`, else `None`.
    pub fn folio_update_gen(&self, m: &mut Machine, id: FolioId, gen: usize) -> Option<usize> {
        let rework = self.sw().workingset_protection_rework;
        let refs_flags = self.refs_flags();
        let fg = self.sw().fg_unified_refs;
        let f = &mut m.folios[id];
        if fg {
            // v3 (inferred, `variants.md` §1.6 rule 2): the walk's second chance on the unified
            // counter; a young folio goes to `gen` with refs at least WORKINGSET
            // (`FgParams::walk_min_refs`)
            if f.gen_counter() == 0 {
                let refs = pid::fg_refs(f.flags);
                if refs < self.cfg.fg.walk_min_refs {
                    self.fg_young_sighting(f);
                }
                return None;
            }
            if !self.fg_young_sighting(f) {
                return None;
            }
            let old = f.gen_counter() as usize - 1;
            f.set_gen_counter(gen as u32 + 1);
            return Some(old);
        }
        if rework {
            // second chance: the first sighting only marks the folio referenced
            if !f.test(pg::REFERENCED) && !f.test(pg::WORKINGSET) {
                f.set(pg::REFERENCED);
                f.set_refs(0);
                return None;
            }
            if f.gen_counter() == 0 {
                return None;
            }
        } else if f.gen_counter() == 0 {
            f.set(pg::REFERENCED);
            return None;
        }
        let old = f.gen_counter() as usize - 1;
        f.clear(refs_flags);
        if rework {
            f.set(pg::WORKINGSET);
        }
        f.set_gen_counter(gen as u32 + 1);
        Some(old)
    }

    /// `folio_inc_gen`: move a folio of the oldest generation to `min_seq + 1` (protection,
    /// ineligible zone, window slide) clearing its refs; `reclaiming` also sets `PG_reclaim`.
    /// Returns the new gen (the current one if a walk promoted it meanwhile). Updates sizes.
    pub fn folio_inc_gen(&mut self, m: &mut Machine, id: FolioId, reclaiming: bool) -> usize {
        let f = m.folios[id];
        let t = f.lru_type();
        let lv = self.lv_of(&f);
        let old_gen = gen_from_seq(self.lruvecs[lv].min_seq[t]);
        let cur = f.gen_counter() as usize - 1;
        if cur != old_gen {
            return cur;
        }
        let new_gen = (old_gen + 1) % MAX_NR_GENS;
        {
            let fm = &mut m.folios[id];
            fm.clear(self.refs_flags());
            fm.set_gen_counter(new_gen as u32 + 1);
            if reclaiming {
                fm.set(pg::RECLAIM);
            }
        }
        self.update_size(m, id, &f, Some(old_gen), Some(new_gen));
        new_gen
    }

    // ---------------------------------------------------------------------------------------------
    // Generations: inc_min_seq, try_to_inc_min_seq, inc_max_seq
    // ---------------------------------------------------------------------------------------------

    /// Whether `ty` can be evicted at `swappiness` (6.1: anon needs `can_swap`).
    fn type_evictable(&self, ty: usize, swappiness: u32) -> bool {
        type_range(self.sw(), swappiness).contains(&ty)
    }

    /// `inc_min_seq`: retire the oldest generation of `ty`, moving its folios to `min_seq + 1`
    /// (or, for a type that cannot be evicted, aliasing them into the new youngest slot).
    fn inc_min_seq(&mut self, m: &mut Machine, lv: usize, ty: usize, swappiness: u32) {
        if self.type_evictable(ty, swappiness) {
            let old_gen = gen_from_seq(self.lruvecs[lv].min_seq[ty]);
            let hist = hist_from_seq(self.lruvecs[lv].min_seq[ty], self.nr_hist);
            for zone in 0..super::state::MAX_NR_ZONES {
                loop {
                    let id = self.lruvecs[lv].folios[old_gen][ty][zone].tail;
                    if id == crate::mm::folio::NIL {
                        break;
                    }
                    let f = m.folios[id];
                    // mainline counts every folio it moves, walk-promoted ones included, except
                    // saturated ones ("don't count the workingset being lazily promoted", §4.7)
                    if self.sw().workingset_protection_rework {
                        let refs = self.folio_lru_refs(&f);
                        let ws = f.test(pg::WORKINGSET);
                        // v3: FG's counter overflows into a promotion, it never saturates
                        let saturated = !self.sw().fg_unified_refs && refs + ws as u32 == 5;
                        if !saturated {
                            let tier = pid::tier_from_refs(self.sw(), refs, ws);
                            self.lruvecs[lv].protected[hist][ty][tier] += 1;
                        }
                    }
                    let new_gen = self.folio_inc_gen(m, id, false);
                    let lg = &mut self.lruvecs[lv];
                    m.folios.list_del(&mut lg.folios[old_gen][ty][zone], id);
                    m.folios.list_add_tail(&mut lg.folios[new_gen][ty][zone], id);
                    m.folios[id].set_list_gen(new_gen);
                }
            }
        }
        let (sw, nr_hist) = (*self.sw(), self.nr_hist);
        pid::reset_ctrl_pos(&mut self.lruvecs[lv], &sw, nr_hist, ty, true);
        self.lruvecs[lv].min_seq[ty] += 1;
    }

    /// `try_to_inc_min_seq`: drop empty oldest generations. Returns whether any min_seq moved.
    pub fn try_to_inc_min_seq(&mut self, lv: usize, swappiness: u32) -> bool {
        let sw = *self.sw();
        let lg = &self.lruvecs[lv];
        let mut min_seq = lg.min_seq;
        for t in type_range(&sw, swappiness) {
            while min_seq[t] + MIN_NR_GENS <= lg.max_seq {
                let gen = gen_from_seq(min_seq[t]);
                if lg.folios[gen][t].iter().any(|l| !l.is_empty()) {
                    break;
                }
                min_seq[t] += 1;
            }
        }
        if !sw.aging_feedback_rework {
            if swappiness != 0 {
                min_seq[ANON] = min_seq[ANON].min(min_seq[FILE]);
                min_seq[FILE] = min_seq[ANON].max(lg.min_seq[FILE]);
            }
        } else if swappiness > 0 && swappiness <= 200 {
            let s = lg.max_seq - MIN_NR_GENS;
            if min_seq[ANON] > s && min_seq[FILE] < s {
                min_seq[ANON] = s;
            } else if min_seq[FILE] > s && min_seq[ANON] < s {
                min_seq[FILE] = s;
            }
        }
        let mut success = false;
        for t in type_range(&sw, swappiness) {
            if min_seq[t] == self.lruvecs[lv].min_seq[t] {
                continue;
            }
            pid::reset_ctrl_pos(&mut self.lruvecs[lv], &sw, self.nr_hist, t, true);
            self.lruvecs[lv].min_seq[t] = min_seq[t];
            success = true;
        }
        success
    }

    /// `inc_max_seq`: open a new youngest generation.
    pub fn inc_max_seq(&mut self, m: &mut Machine, lv: usize, swappiness: u32) {
        let memcg = (lv / self.nr_nodes) as MemcgId;
        let node = lv % self.nr_nodes;
        m.lru_lock_held(m.lruvec(memcg, node), LruLockSite::Seq, 0);
        for ty in [FILE, ANON] {
            let lg = &self.lruvecs[lv];
            if lg.max_seq - lg.min_seq[ty] + 1 != MAX_NR_GENS as u64 {
                continue;
            }
            self.inc_min_seq(m, lv, ty, swappiness);
        }
        // compatibility counters: max_seq−1 becomes inactive, max_seq+1 becomes active
        let lg = &self.lruvecs[lv];
        let prev = gen_from_seq(lg.max_seq - 1);
        let next = gen_from_seq(lg.max_seq + 1);
        let deltas: Vec<(usize, usize, i64)> = (0..2)
            .flat_map(|t| (0..super::state::MAX_NR_ZONES).map(move |z| (t, z)))
            .map(|(t, z)| (t, z, lg.nr_pages[prev][t][z] - lg.nr_pages[next][t][z]))
            .filter(|x| x.2 != 0)
            .collect();
        for (t, z, d) in deltas {
            m.update_lru_size_raw(memcg, node, z, Lru::of(t, false), d);
            m.update_lru_size_raw(memcg, node, z, Lru::of(t, true), -d);
        }
        let (sw, nr_hist) = (*self.sw(), self.nr_hist);
        for t in [ANON, FILE] {
            pid::reset_ctrl_pos(&mut self.lruvecs[lv], &sw, nr_hist, t, false);
        }
        let lg = &mut self.lruvecs[lv];
        lg.timestamps[next] = m.jiffies();
        lg.max_seq += 1;
        if let Some(x) = m.explain.as_deref_mut() {
            x.aged(lv);
        }
    }

    /// `try_to_inc_max_seq`: walk the mm list (if walks are possible) and open a new generation.
    /// Returns whether a generation was created.
    pub fn try_to_inc_max_seq(
        &mut self,
        m: &mut Machine,
        lv: usize,
        seq: u64,
        swappiness: u32,
        force_scan: bool,
    ) -> bool {
        if seq <= self.lruvecs[lv].mm_state.seq {
            return false;
        }
        let memcg = (lv / self.nr_nodes) as MemcgId;
        let node = lv % self.nr_nodes;
        let walk_allowed = if self.sw().walk_swappiness {
            self.should_walk_mmu()
        } else {
            // 6.1: a forced scan walks even without the capability
            force_scan || self.should_walk_mmu()
        };
        let (walked, skipped) = if !walk_allowed {
            // iterate_mm_list_nowalk
            let st = &mut self.lruvecs[lv].mm_state;
            st.seq += 1;
            self.reset_mm_stats(lv, None, true);
            (0, 0)
        } else {
            // set_mm_walk(NULL, true): the walk stays attached until the caller's clear_mm_walk
            self.mm_walk = true;
            let mut walk = Walk::new(lv, memcg, node, seq, swappiness, force_scan);
            self.iterate_and_walk(m, &mut walk)
        };
        self.inc_max_seq(m, lv, swappiness);
        if m.ftrace.is_some() {
            m.trace(
                crate::mm::ftrace::Event::Age,
                format_args!(
                    "(try_to_inc_max_seq) memcg_id={} nid={node} max_seq={} swappiness={swappiness} \
                     force_scan={} walk={} mms_walked={walked} mms_skipped={skipped}",
                    super::admin::memcg_kernel_id(memcg),
                    self.lruvecs[lv].max_seq,
                    u8::from(force_scan),
                    u8::from(walk_allowed)
                ),
            );
        }
        true
    }

    /// `reset_mm_stats`: fold a walk's statistics into the lruvec's and, at the end of an
    /// iteration with several history slots, clear the next slot.
    fn reset_mm_stats(&mut self, lv: usize, walk: Option<&mut Walk>, last: bool) {
        let nr_hist = self.nr_hist;
        let st = &mut self.lruvecs[lv].mm_state;
        if let Some(w) = walk {
            let hist = hist_from_seq(w.seq, nr_hist);
            for (i, v) in w.mm_stats.iter_mut().enumerate() {
                st.stats[hist][i] += *v;
                *v = 0;
            }
        }
        if nr_hist > 1 && last {
            let hist = hist_from_seq(st.seq + 1, nr_hist);
            st.stats[hist] = Default::default();
        }
    }

    /// `iterate_mm_list` + `walk_mm` over every mm of the memcg: a full round in one go (this
    /// model has a single reclaimer at a time).
    /// Returns how many mms it walked and how many `should_skip_mm` skipped.
    fn iterate_and_walk(&mut self, m: &mut Machine, w: &mut Walk) -> (u32, u32) {
        let mms: Vec<u32> = m
            .mms
            .iter()
            .filter(|x| x.alive && x.memcg == w.memcg)
            .map(|x| x.id)
            .collect();
        let mut first = true;
        let (mut walked, mut skipped) = (0, 0);
        for mm in mms {
            // force scan for those added after the last iteration
            let tail = self.lruvecs[w.lv].mm_state.tail;
            if tail == MmTail::Unset || tail == MmTail::Mm(mm) {
                self.lruvecs[w.lv].mm_state.tail = MmTail::End;
                w.force_scan = true;
            }
            if self.should_skip_mm(m, mm, w) {
                skipped += 1;
                continue;
            }
            walked += 1;
            if first {
                reset_bloom_filter(&mut self.lruvecs[w.lv].mm_state, w.seq + 1);
                first = false;
            }
            self.walk_mm(m, mm, w);
            self.reset_mm_stats(w.lv, Some(w), false);
        }
        let st = &mut self.lruvecs[w.lv].mm_state;
        st.seq += 1;
        self.reset_mm_stats(w.lv, Some(w), true);
        (walked, skipped)
    }

    /// `should_skip_mm`: not used on this node since the last walk (unless forced), or too small.
    fn should_skip_mm(&self, m: &mut Machine, mm: u32, w: &Walk) -> bool {
        let bit = 1u64 << (w.node % 64);
        let x = &mut m.mms[mm as usize];
        if !w.force_scan && x.lru_gen_bitmap & bit == 0 {
            return true;
        }
        x.lru_gen_bitmap &= !bit;
        let size: u64 = type_range(self.sw(), w.swappiness)
            .map(|t| if t == FILE { x.rss_file } else { x.rss_anon })
            .sum();
        size < MIN_LRU_BATCH
    }

    /// `should_skip_vma`: the VMA filter of the walk.
    fn should_skip_vma(&self, m: &Machine, vma: &Vma, w: &Walk) -> bool {
        if vma.flags & (vmf::LOCKED | vmf::SEQ_READ | vmf::RAND_READ) != 0 {
            return true;
        }
        if vma.is_anon() {
            return w.swappiness == 0;
        }
        let _ = m;
        // file VMAs: all skipped when only anon may be reclaimed (mainline swappiness 201)
        self.sw().walk_swappiness && w.swappiness > 200
    }

    /// `walk_mm`: walk every eligible VMA of `mm`, PMD by PMD. A PTE table is walked once: the
    /// walk of the table where a VMA ends goes on into the next eligible VMAs that share it
    /// (`walk_pte_range`'s `get_next_vma(PMD_MASK, PAGE_SIZE)`), and the walk of the PMDs
    /// resumes at the next table boundary (`walk_pmd_range`'s `get_next_vma(PUD_MASK,
    /// PMD_SIZE)`), so a table two VMAs share is tested (its accessed bit, the Bloom filter) and
    /// scanned once, for both.
    fn walk_mm(&mut self, m: &mut Machine, mm: u32, w: &mut Walk) {
        let vmas = m.mms[mm as usize].vmas.clone();
        // the first PMD the walk has not reached yet
        let mut next_pi = 0;
        for (i, vma) in vmas.iter().enumerate() {
            if self.should_skip_vma(m, vma, w) {
                continue;
            }
            let first = MmStruct::pmd_index(vma.start).max(next_pi);
            let last = MmStruct::pmd_index(vma.end - 1);
            for pi in first..=last {
                self.walk_pmd(m, mm, &vmas[i..], pi, w);
            }
            next_pi = next_pi.max(last + 1);
        }
        self.flush_batch(m, w);
    }

    /// One PMD entry of `walk_pmd_range`: skip non-present entries, test (and clear) the non-leaf
    /// accessed bit, consult the Bloom filter, walk the PTE table, carry it over to the next
    /// filter if it was dense with young entries.
    /// `walk_pmd_range` on PMD `pi`, reached from `vmas[0]`; `vmas` goes on with the VMAs after
    /// it, which the PTE walk enters where they share the table.
    fn walk_pmd(&mut self, m: &mut Machine, mm: u32, vmas: &[Vma], pi: usize, w: &mut Walk) {
        let pmd = m.mms[mm as usize].pmds[pi];
        if !crate::mm::vm::pmd_is_table(pmd) {
            w.mm_stats[mm_stat::LEAF_TOTAL] += 1;
            if pmd != PMD_NONE {
                self.walk_huge_pmd(m, mm, pi, pmd, w);
            }
            return;
        }
        w.mm_stats[mm_stat::NONLEAF_TOTAL] += 1;
        m.count_pmds(1, 0);
        let nonleaf = self.should_clear_pmd_young();
        // 6.1: the non-leaf accessed bit is tested (and cleared, walk_pmd_range_locked) even
        // in a forced scan; 6.12 on: only in a walk that is not forced
        if nonleaf && (!w.force_scan || !self.sw().forced_walk_keeps_nonleaf_young) {
            if pmd & PMD_YOUNG == 0 {
                return;
            }
            m.mms[mm as usize].pmds[pi] &= !PMD_YOUNG;
        }
        let item = pmd_item(mm, pi);
        m.count_pmds(0, u64::from(!w.force_scan));
        if !w.force_scan && !test_bloom_filter(&self.lruvecs[w.lv].mm_state, w.seq, item) {
            return;
        }
        w.mm_stats[mm_stat::NONLEAF_FOUND] += 1;
        let base = MMAP_BASE_VPN + (pi * PTRS_PER_PTE) as u32;
        let table_end = base + PTRS_PER_PTE as u32;
        let (mut total, mut young) = (0, 0);
        for (j, vma) in vmas.iter().enumerate() {
            if vma.start >= table_end {
                break;
            }
            if j > 0 && self.should_skip_vma(m, vma, w) {
                continue;
            }
            let (t, y) = self.walk_pte_range(
                m,
                pmd & !PMD_YOUNG,
                base,
                vma.start.max(base),
                vma.end.min(table_end),
                w,
            );
            total += t;
            young += y;
        }
        if !suitable_to_scan(total, young) {
            return;
        }
        w.mm_stats[mm_stat::NONLEAF_ADDED] += 1;
        m.count_pmds(0, 1);
        update_bloom_filter(&mut self.lruvecs[w.lv].mm_state, w.seq + 1, item);
    }

    /// A huge PMD in `walk_pmd_range`, and `walk_pmd_range_locked` on it (done at once, not
    /// batched with its neighbours): an old one is skipped (6.1 counts it `MM_LEAF_OLD`; from the
    /// rework of `forced_walk_keeps_nonleaf_young` on, `get_pmd_pfn` skips it uncounted); a young
    /// one whose folio qualifies (`get_pfn_folio`) has its accessed bit cleared, counts
    /// `MM_LEAF_YOUNG`, passes its dirty bit on as a PTE's would, and its folio moves to the
    /// walk's generation, all its pages in the batch.
    fn walk_huge_pmd(&mut self, m: &mut Machine, mm: u32, pi: usize, pmd: u32, w: &mut Walk) {
        m.count_pmds(1, 0);
        if pmd & pte::YOUNG == 0 {
            if !self.sw().forced_walk_keeps_nonleaf_young {
                w.mm_stats[mm_stat::LEAF_OLD] += 1;
            }
            return;
        }
        let id = pmd & pte::PFN_MASK;
        if !self.pfn_folio_ok(m, id, w.memcg, w.node, w.swappiness) {
            return;
        }
        m.mms[mm as usize].pmds[pi] &= !pte::YOUNG;
        w.mm_stats[mm_stat::LEAF_YOUNG] += 1;
        self.propagate_dirty(m, id, pmd);
        self.walk_update_gen(m, w, id, gen_from_seq(w.seq));
    }

    /// The walk found folio `id` young: `folio_update_gen` to `new_gen`, its pages moved in the
    /// walk's batch (`update_batch_size`) when its generation changed.
    #[inline]
    fn walk_update_gen(&mut self, m: &mut Machine, w: &mut Walk, id: FolioId, new_gen: usize) {
        if let Some(old) = self.folio_update_gen(m, id, new_gen) {
            if old != new_gen {
                let f = m.folios[id];
                let delta = i64::from(m.folios.nr_pages(id));
                w.nr_pages[old][f.lru_type()][f.zone()] -= delta;
                w.nr_pages[new_gen][f.lru_type()][f.zone()] += delta;
                w.batched += 1;
            }
        }
    }

    /// `walk_pte_range` over `[start, end)` of one VMA in the PTE table `table` (first page
    /// `base`): clear young PTEs and promote their folios to the walk's generation. Returns (PTEs
    /// looked at, young PTEs found), for the caller's `suitable_to_scan` over the whole table.
    fn walk_pte_range(
        &mut self,
        m: &mut Machine,
        table: u32,
        base: u32,
        start: u32,
        end: u32,
        w: &mut Walk,
    ) -> (u64, u64) {
        let new_gen = gen_from_seq(w.seq);
        let (mut total, mut young) = (0u64, 0u64);
        for vpn in start..end {
            total += 1;
            w.mm_stats[mm_stat::LEAF_TOTAL] += 1;
            let i = (vpn - base) as usize;
            let e = m.ptes.table(table)[i];
            if e & pte::PRESENT == 0 {
                continue;
            }
            if e & pte::YOUNG == 0 {
                w.mm_stats[mm_stat::LEAF_OLD] += 1;
                continue;
            }
            let id = e & pte::PFN_MASK;
            if !self.pfn_folio_ok(m, id, w.memcg, w.node, w.swappiness) {
                continue;
            }
            m.ptes.table_mut(table)[i] &= !pte::YOUNG;
            young += 1;
            w.mm_stats[mm_stat::LEAF_YOUNG] += 1;
            self.propagate_dirty(m, id, e);
            self.walk_update_gen(m, w, id, new_gen);
        }
        m.count_ptes(total);
        (total, young)
    }

    /// `get_pfn_folio` (+ mainline's MGLRU-list requirement): the folio is on this node, charged to
    /// this memcg, and of a type the walk may touch.
    fn pfn_folio_ok(&self, m: &Machine, id: FolioId, memcg: MemcgId, node: usize, swappiness: u32) -> bool {
        let f = &m.folios[id];
        if f.node() != node || f.memcg != memcg {
            return false;
        }
        if !f.is_file_lru() && swappiness == 0 {
            return false;
        }
        !self.sw().walk_swappiness || f.gen_counter() != 0
    }

    /// A dirty PTE makes its folio dirty (except anon not yet in the swap cache).
    fn propagate_dirty(&self, m: &mut Machine, id: FolioId, e: u32) {
        let f = m.folios[id];
        if e & pte::DIRTY != 0
            && !f.test(pg::DIRTY)
            && !(f.is_anon() && f.test(pg::SWAPBACKED) && !f.test(pg::SWAPCACHE))
        {
            m.folio_mark_dirty(id);
        }
    }

    /// `reset_batch_size`: apply the walk's pending size deltas and compat counters.
    pub fn flush_batch(&mut self, m: &mut Machine, w: &mut Walk) {
        if w.batched == 0 {
            return;
        }
        w.batched = 0;
        m.lru_lock_held(m.lruvec(w.memcg, w.node), LruLockSite::Seq, 0);
        for g in 0..MAX_NR_GENS {
            for t in 0..2 {
                for z in 0..super::state::MAX_NR_ZONES {
                    let d = std::mem::take(&mut w.nr_pages[g][t][z]);
                    if d == 0 {
                        continue;
                    }
                    let lg = &mut self.lruvecs[w.lv];
                    lg.nr_pages[g][t][z] += d;
                    let active = Self::is_active_gen(lg, g);
                    m.update_lru_size_raw(w.memcg, w.node, z, Lru::of(t, active), d);
                }
            }
        }
    }

    /// `should_run_aging`. Returns (need aging, evictable pages — before the priority shift).
    pub fn should_run_aging(&self, lv: usize, swappiness: u32) -> (bool, u64) {
        let lg = &self.lruvecs[lv];
        let sw = self.sw();
        match sw.aging_feedback_rework {
            false => {
                let (mut old, mut young, mut total) = (0, 0, 0);
                for t in type_range(sw, swappiness) {
                    for seq in lg.min_seq[t]..=lg.max_seq {
                        let size = lg.gen_pages(gen_from_seq(seq), t);
                        total += size;
                        if seq == lg.max_seq {
                            young += size;
                        } else if seq + MIN_NR_GENS == lg.max_seq {
                            old += size;
                        }
                    }
                }
                let min = lg.min_seq[if swappiness == 0 { FILE } else { ANON }];
                let need = if min + MIN_NR_GENS > lg.max_seq {
                    true
                } else if min + MIN_NR_GENS < lg.max_seq {
                    false
                } else {
                    young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total
                };
                (need, total)
            }
            true => {
                let ems = evictable_min_seq(sw, lg, swappiness);
                if ems + MIN_NR_GENS > lg.max_seq {
                    return (true, 0);
                }
                (ems + MIN_NR_GENS == lg.max_seq, self.evictable_size(lv, swappiness))
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // rmap: folio_check_references and look-around
    // ---------------------------------------------------------------------------------------------

    /// `lru_gen_look_around` for the young PTE at (mm, vpn) of an isolated folio under eviction.
    /// The target's own accessed bit has been cleared by the caller (6.11+:
    /// `look_around_clears_target`, and the 6.14 rework) or is cleared here as part of the window
    /// (6.1).
    fn look_around(&mut self, m: &mut Machine, mm: u32, vpn: u32, vma: &Vma, target: FolioId, walk_attached: bool) {
        // the neighbours to move, in a buffer kept between calls (eviction does not allocate)
        let mut to_update = std::mem::take(&mut self.look_scratch);
        to_update.clear();
        self.look_around_into(m, mm, vpn, vma, target, walk_attached, &mut to_update);
        self.look_scratch = to_update;
    }

    #[allow(clippy::too_many_arguments)]
    fn look_around_into(
        &mut self,
        m: &mut Machine,
        mm: u32,
        vpn: u32,
        vma: &Vma,
        target: FolioId,
        walk_attached: bool,
        to_update: &mut Vec<FolioId>,
    ) {
        let f = m.folios[target];
        let (memcg, node) = (f.memcg, f.node());
        let lv = self.lv(memcg, node);
        let max_seq = self.lruvecs[lv].max_seq;
        let new_gen = gen_from_seq(max_seq);
        let pmd_base = vpn - (vpn - MMAP_BASE_VPN) % PTRS_PER_PTE as u32;
        let mut start = vma.start.max(pmd_base);
        let mut end = vma.end.min(pmd_base + PTRS_PER_PTE as u32);
        let batch = MIN_LRU_BATCH as u32;
        if end - start > batch {
            if vpn - start < batch / 2 {
                end = start + batch;
            } else if end - vpn < batch / 2 {
                start = end - batch;
            } else {
                start = vpn - batch / 2;
                end = vpn + batch / 2;
            }
        }
        let rework = self.sw().workingset_protection_rework;
        let sw_look_around_activate = self.sw().look_around_activate;
        // 6.11+: the caller cleared the target's bit and counted it; a window of one page ends here
        let clears_target = rework || self.sw().look_around_clears_target;
        if clears_target && end - start == 1 {
            return;
        }
        let pi = MmStruct::pmd_index(vpn);
        let pmd = m.mms[mm as usize].pmds[pi];
        if !crate::mm::vm::pmd_is_table(pmd) {
            // look-around runs for PTE-mapped folios only (`lru_gen_look_around`)
            return;
        }
        let table = pmd & !PMD_YOUNG;
        m.count_ptes((end - start) as u64);
        // 6.1: the swappiness filter of get_pfn_folio is `!walk || walk->can_swap`
        let swappiness = 1;
        let mut young: u64 = if clears_target { 1 } else { 0 };
        for v in start..end {
            let i = (v - pmd_base) as usize;
            let e = m.ptes.table(table)[i];
            if e & pte::PRESENT == 0 || e & pte::YOUNG == 0 {
                continue;
            }
            let id = e & pte::PFN_MASK;
            if !self.pfn_folio_ok(m, id, memcg, node, swappiness) {
                continue;
            }
            m.ptes.table_mut(table)[i] &= !pte::YOUNG;
            young += 1;
            self.propagate_dirty(m, id, e);
            // every young neighbour; what each kernel does with it is decided below
            to_update.push(id);
        }
        if suitable_to_scan(end as u64 - start as u64, young) {
            m.count_pmds(0, 1);
            update_bloom_filter(&mut self.lruvecs[lv].mm_state, max_seq, pmd_item(mm, pi));
        }
        // a neighbour isolated meanwhile (the target, or one under another reclaim) has no gen
        let isolated = |m: &Machine, id: FolioId| m.folios[id].gen_counter() == 0;
        let in_new_gen = |m: &Machine, id: FolioId| m.folios[id].gen_counter() as usize == new_gen + 1;
        match (rework, sw_look_around_activate, walk_attached) {
            // 6.14+ (walk_update_folio): every young neighbour, wherever it is; with a walk
            // folio_update_gen (its second chance included), else lru_gen_set_refs and an
            // activation of a folio outside max_seq
            (true, _, true) | (false, true, true) => {
                for &id in to_update.iter() {
                    if let Some(old) = self.folio_update_gen(m, id, new_gen) {
                        if old != new_gen {
                            let f = m.folios[id];
                            self.update_size(m, id, &f, Some(old), Some(new_gen));
                        }
                    }
                }
            }
            (true, _, false) => {
                for &id in to_update.iter() {
                    let mut f = m.folios[id];
                    let activate = self.set_refs(&mut f);
                    m.folios[id] = f;
                    if activate && !isolated(m, id) && !in_new_gen(m, id) {
                        self.activate(m, id);
                    }
                }
            }
            // 6.12 without a walk: folio_activate (refs cleared first from 6.13's fix)
            (false, true, false) => {
                for &id in to_update.iter() {
                    if isolated(m, id) {
                        m.folios[id].set(pg::REFERENCED);
                    } else if !in_new_gen(m, id) {
                        if self.sw().activate_clears_refs {
                            // folio_clear_lru_refs
                            m.folios[id].clear(pg::REFS_MASK | pg::REFERENCED | pg::WORKINGSET);
                        }
                        self.activate(m, id);
                    }
                }
            }
            // 6.1: the bitmap of neighbours outside max_seq
            (false, false, _) => {
                for &id in to_update.iter() {
                    if isolated(m, id) {
                        m.folios[id].set(pg::REFERENCED);
                    }
                }
                to_update.retain(|&id| !isolated(m, id) && !in_new_gen(m, id));
                if !walk_attached && to_update.len() < 15 {
                    for &id in to_update.iter() {
                        self.activate(m, id);
                    }
                    return;
                }
                // without a walk: the generations are updated under the lru_lock
                if !walk_attached {
                    m.lru_lock_held(m.lruvec(memcg, node), LruLockSite::Seq, to_update.len() as u64);
                }
                for &id in to_update.iter() {
                    if let Some(old) = self.folio_update_gen(m, id, new_gen) {
                        if old != new_gen {
                            let f = m.folios[id];
                            self.update_size(m, id, &f, Some(old), Some(new_gen));
                        }
                    }
                }
            }
        }
    }

    /// `folio_referenced` with MGLRU: every young PTE mapping the folio is handed to look-around.
    /// Returns (young PTEs, union of their VMA flags).
    fn folio_referenced(&mut self, m: &mut Machine, id: FolioId, sc: &ScanControl) -> (u32, u32) {
        // the mappings, in a buffer kept between calls (eviction does not allocate)
        let mut maps = std::mem::take(&mut self.rmap_scratch);
        maps.clear();
        let r = self.folio_referenced_in(m, id, sc, &mut maps);
        self.rmap_scratch = maps;
        r
    }

    fn folio_referenced_in(
        &mut self,
        m: &mut Machine,
        id: FolioId,
        sc: &ScanControl,
        maps: &mut Vec<(u32, u32, Vma)>,
    ) -> (u32, u32) {
        let memcgs = &m.memcgs;
        let mms = &m.mms;
        m.rmap_walk(id, |mm, vpn, vma| {
            if let Some(t) = sc.target_memcg {
                if !memcgs.is_descendant(mms[mm as usize].memcg, t) {
                    return true;
                }
            }
            maps.push((mm, vpn, *vma));
            true
        });
        let walk_attached = self.mm_walk || sc.reclaimer == Reclaimer::Kswapd;
        let (mut referenced, mut flags) = (0, 0);
        for &(mm, vpn, vma) in maps.iter() {
            if vma.flags & vmf::LOCKED != 0 {
                return (referenced, flags | vmf::LOCKED);
            }
            // invalid_folio_referenced_vma (6.3): mappings without recency are not looked at
            if self.sw().vma_has_recency && !vma.has_recency() {
                continue;
            }
            let young = m.pte(mm, vpn) & pte::YOUNG != 0;
            if m.ftrace.is_some() {
                m.trace_referenced_one(vpn, vma.start, young);
            }
            let mut r = 0;
            // 6.11+ (and the 6.14 rework): look-around clears the target's own bit first
            match self.sw().workingset_protection_rework || self.sw().look_around_clears_target {
                true => {
                    if !young {
                        continue;
                    }
                    *m.pte_mut(mm, vpn) &= !pte::YOUNG;
                    if vma.has_recency() {
                        self.look_around(m, mm, vpn, &vma, id, walk_attached);
                    }
                    r += 1;
                }
                false => {
                    if young && vma.has_recency() {
                        // the window includes the target, whose young bit it clears
                        self.look_around(m, mm, vpn, &vma, id, walk_attached);
                        r += 1;
                    }
                    // ptep_clear_flush_young_notify
                    let p = m.pte_mut(mm, vpn);
                    if *p & pte::YOUNG != 0 {
                        *p &= !pte::YOUNG;
                        if vma.flags & vmf::SEQ_READ == 0 {
                            r += 1;
                        }
                    }
                }
            }
            if r > 0 {
                referenced += r;
                flags |= vma.flags;
            }
        }
        (referenced, flags)
    }
}

/// `folio_check_references` under MGLRU.
pub fn check_references(p: &mut Mglru, m: &mut Machine, id: FolioId, sc: &ScanControl) -> FolioRef {
    let (ptes, flags) = p.folio_referenced(m, id, sc);
    if flags & vmf::LOCKED != 0 {
        if !p.sw().workingset_protection_rework {
            // the classic check clears PG_referenced before it looks at VM_LOCKED
            m.folios[id].clear(pg::REFERENCED);
        }
        return FolioRef::Activate;
    }
    match p.sw().workingset_protection_rework {
        true => {
            if ptes == 0 {
                return FolioRef::Reclaim;
            }
            let mut f = m.folios[id];
            let act = p.set_refs(&mut f);
            m.folios[id] = f;
            if act {
                FolioRef::Activate
            } else {
                FolioRef::Keep
            }
        }
        false => {
            // the classic two-touch logic
            let referenced_folio = m.folios[id].test_clear(pg::REFERENCED);
            let file = m.folios[id].is_file_lru();
            if ptes > 0 {
                m.folios[id].set(pg::REFERENCED);
                if referenced_folio || ptes > 1 || (flags & vmf::EXEC != 0 && file) {
                    return FolioRef::Activate;
                }
                return FolioRef::Keep;
            }
            if referenced_folio && file {
                return FolioRef::ReclaimClean;
            }
            FolioRef::Reclaim
        }
    }
}

/// `lru_gen_age_node` (kswapd, every `balance_pgdat` iteration). 6.1: ages every memcg whose
/// lruvec needs it (`age_lruvec`) and OOM-kills if `min_ttl` protects every generation; mainline
/// only implements `min_ttl` here (aging happens in the eviction path).
pub fn age_node(p: &mut Mglru, m: &mut Machine, node: usize, sc: &mut ScanControl) {
    // msecs_to_jiffies when written: rounded up (1 ms is one jiffy at HZ=250)
    let min_ttl = crate::control::msecs_to_jiffies(p.cfg.min_ttl_ms);
    let now = m.jiffies();
    let sw = *p.sw();
    if !sw.eviction_path_aging {
        sc.last_reclaimed = sc.nr_reclaimed;
        if !sc.memcgs_need_aging {
            sc.memcgs_need_aging = true;
            return;
        }
    }
    if sw.eviction_path_aging {
        super::eviction::set_initial_priority(p, m, node, sc);
    }
    let mut success = false;
    let root = crate::mm::memcg::ROOT_MEMCG;
    // `mem_cgroup_calculate_protection(NULL, memcg)` per memcg: aging charges nothing, so the
    // protections computed once before the walk are the ones each step would compute
    m.memcgs.calculate_protection(root);
    let mut next = m.memcgs.iter_next_live(root, None);
    while let Some(memcg) = next {
        next = m.memcgs.iter_next_live(root, Some(memcg));
        if m.memcgs.below_min(None, memcg) {
            continue;
        }
        let lv = p.lv(memcg, node);
        let swappiness = super::eviction::get_swappiness(p, m, memcg, node, sc);
        let (need, total) = p.should_run_aging(lv, swappiness);
        let nr_to_scan = total >> sc.priority;
        let lg = &p.lruvecs[lv];
        match sw.eviction_path_aging {
            false => {
                if min_ttl > 0 {
                    let birth = lg.timestamps[gen_from_seq(lg.min_seq[FILE])];
                    if birth + min_ttl > now {
                        continue;
                    }
                    if nr_to_scan == 0 && sc.priority != DEF_PRIORITY {
                        continue;
                    }
                }
                if need {
                    let seq = lg.max_seq;
                    p.try_to_inc_max_seq(m, lv, seq, swappiness, false);
                }
                success = true;
            }
            true => {
                // lruvec_is_reclaimable: sizable and its oldest evictable generation (6.12: its
                // oldest file generation) older than min_ttl
                let sizable = (p.evictable_size(lv, swappiness) >> sc.priority) != 0;
                let oldest = if sw.aging_feedback_rework {
                    evictable_min_seq(&sw, lg, swappiness)
                } else {
                    lg.min_seq[FILE]
                };
                let birth = lg.timestamps[gen_from_seq(oldest)];
                if min_ttl == 0 || (sizable && now > birth + min_ttl) {
                    success = true;
                }
            }
        }
    }
    if success || min_ttl == 0 || sc.order > 0 {
        return;
    }
    crate::reclaim::alloc::out_of_memory(m, p, None);
}

/// MGLRU's own invariants: every folio's gen within `[min_seq, max_seq]` of its type (modulo the
/// aliasing of a type that cannot be evicted), list contents matching the gen counter, type and
/// zone, page counts per generation equal to the lists, the seq window valid, and the
/// active/inactive counters matching the generations.
#[allow(clippy::needless_range_loop)] // [gen][type][zone] indices name the kernel's arrays
pub fn check_lruvecs(p: &Mglru, m: &Machine) -> Result<(), String> {
    for (lv, lg) in p.lruvecs.iter().enumerate() {
        let memcg = (lv / p.nr_nodes) as MemcgId;
        let node = lv % p.nr_nodes;
        for t in 0..2 {
            let n = lg.max_seq + 1 - lg.min_seq[t];
            if !(MIN_NR_GENS..=MAX_NR_GENS as u64).contains(&n) {
                return Err(format!(
                    "memcg {memcg} node {node}: type {t} has {n} generations (min_seq {}, max_seq {})",
                    lg.min_seq[t], lg.max_seq
                ));
            }
        }
        let mut active = [0i64; 2];
        let mut inactive = [0i64; 2];
        for g in 0..MAX_NR_GENS {
            for t in 0..2 {
                for z in 0..super::state::MAX_NR_ZONES {
                    let list = &lg.folios[g][t][z];
                    let mut bad = None;
                    m.folios.walk_list(list, |id| {
                        let f = &m.folios[id];
                        if bad.is_none()
                            && (f.lru_type() != t
                                || f.zone() != z
                                || f.gen_counter() == 0
                                || f.test(pg::ACTIVE)
                                || f.test(pg::UNEVICTABLE)
                                || m.folios[id].list_gen() != g)
                        {
                            bad = Some(id);
                        }
                        Ok(())
                    })?;
                    if let Some(id) = bad {
                        let f = &m.folios[id];
                        return Err(format!(
                            "folio {id} on gen {g} type {t} zone {z} of memcg {memcg} node {node} has type {}, zone {}, gen counter {}, flags {:#x}, recorded list {}",
                            f.lru_type(), f.zone(), f.gen_counter(), f.flags, m.folios[id].list_gen()
                        ));
                    }
                    // page counts: folios whose gen counter says g (they may sit on another list
                    // until sort_folio relinks them)
                    let _ = list;
                }
            }
        }
        let mut counted = [[[0i64; super::state::MAX_NR_ZONES]; 2]; MAX_NR_GENS];
        for g in 0..MAX_NR_GENS {
            for t in 0..2 {
                for z in 0..super::state::MAX_NR_ZONES {
                    m.folios.walk_list(&lg.folios[g][t][z], |id| {
                        let fg = m.folios[id].gen_counter() as usize - 1;
                        counted[fg][t][z] += i64::from(m.folios.nr_pages(id));
                        Ok(())
                    })?;
                }
            }
        }
        for g in 0..MAX_NR_GENS {
            for t in 0..2 {
                for z in 0..super::state::MAX_NR_ZONES {
                    if counted[g][t][z] != lg.nr_pages[g][t][z] {
                        return Err(format!(
                            "memcg {memcg} node {node}: gen {g} type {t} zone {z} holds {} folios but nr_pages {}",
                            counted[g][t][z], lg.nr_pages[g][t][z]
                        ));
                    }
                    if counted[g][t][z] > 0 {
                        let seqs_live = (lg.min_seq[t]..=lg.max_seq).any(|s| gen_from_seq(s) == g);
                        if !seqs_live {
                            return Err(format!(
                                "memcg {memcg} node {node}: {} folios of type {t} in gen {g}, outside [min_seq {}, max_seq {}]",
                                counted[g][t][z], lg.min_seq[t], lg.max_seq
                            ));
                        }
                    }
                    if Mglru::is_active_gen(lg, g) {
                        active[t] += counted[g][t][z];
                    } else {
                        inactive[t] += counted[g][t][z];
                    }
                }
            }
        }
        use crate::mm::vmstat::Stat;
        let st = |s: Stat| m.lruvec_state_local(memcg, node, s);
        let want = [
            (Stat::NrInactiveAnon, inactive[ANON]),
            (Stat::NrActiveAnon, active[ANON]),
            (Stat::NrInactiveFile, inactive[FILE]),
            (Stat::NrActiveFile, active[FILE]),
            (Stat::NrUnevictable, p.unevictable[lv].len as i64),
        ];
        for (s, v) in want {
            if st(s) != v {
                return Err(format!(
                    "memcg {memcg} node {node}: {} = {} but the generations hold {v}",
                    s.name(),
                    st(s)
                ));
            }
        }
    }
    let _ = LruGen::new;
    Ok(())
}

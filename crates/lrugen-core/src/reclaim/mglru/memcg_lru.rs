// SPDX-License-Identifier: GPL-2.0-only
//! The memcg LRU (`kernel-mglru.md` §2.5, §8; `mm/vmscan.c`, "memcg LRU"; 6.3+, the switch
//! `memcg_lru`).
//!
//! Root reclaim does not walk the memcg tree: each node keeps its memcgs (their lruvecs on that
//! node) in two generations, old and young, each sharded into `MEMCG_NR_BINS` bins that are
//! virtually cut into a head, a default and a tail segment. `shrink_many` starts at a random bin
//! of the old generation and reclaims the memcgs in it from the head; what `shrink_one` returns
//! says where each goes next (`lru_gen_rotate_memcg`): a memcg that aged in the eviction path
//! moves to the young generation, one that is too small gets one retry at the tail before it
//! does too. When the old generation empties, the per-node `seq` advances and the young
//! generation becomes the old one, so every eligible memcg's `max_seq` is incremented in turn.
//! A memcg comes online at the tail of a random bin of the old generation and goes to the head
//! of the old generation when it is taken offline.
//!
//! The bins are intrusive doubly linked lists through the lruvecs (`LruGen::memcg_list`), so
//! rotating a memcg allocates nothing; `get_random_u32_below` is the policy's own seeded stream
//! (`Mglru::get_random_u32_below`), so a run's seed fixes every bin chosen.

use crate::mm::memcg::MemcgId;
use crate::mm::Machine;
use crate::reclaim::mglru::{Lru, MAX_NR_GENS};

/// `MEMCG_NR_GENS`: three slots for two valid generations (old = `seq`, young = `seq + 1`), so
/// that a stale lockless `seq − 1` cannot read as young (`include/linux/mmzone.h`, 6.12, 7.2).
pub const MEMCG_NR_GENS: usize = 3;
/// `MEMCG_NR_BINS`: the random shards of a generation.
pub const MEMCG_NR_BINS: usize = 8;

/// No memcg (the end of a bin, the kernel's nulls marker).
pub const NO_MEMCG: MemcgId = MemcgId::MAX;

/// What to do with a memcg after `shrink_one` (and the other triggers): the `MEMCG_LRU_*` ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgLruOp {
    /// `MEMCG_LRU_NOP` (0): stay where it is.
    Nop,
    /// `MEMCG_LRU_HEAD`: to the head of a random bin of its generation, segment head.
    Head,
    /// `MEMCG_LRU_TAIL`: to the tail of a random bin of its generation, segment tail.
    Tail,
    /// `MEMCG_LRU_OLD`: to the head of a random bin of the old generation, default segment.
    Old,
    /// `MEMCG_LRU_YOUNG`: to the tail of a random bin of the young generation, default segment.
    Young,
}

/// The segment a memcg was last put in (`lrugen->seg`): the default one, or the head or tail
/// by `MEMCG_LRU_HEAD`/`MEMCG_LRU_TAIL`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Seg {
    /// 0: neither.
    #[default]
    Default,
    /// `MEMCG_LRU_HEAD`.
    Head,
    /// `MEMCG_LRU_TAIL`.
    Tail,
}

/// A lruvec's place in its node's memcg LRU (`lrugen->gen`, `lrugen->seg`, `lrugen->list`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemcgLink {
    /// Its memcg generation slot (`seq % MEMCG_NR_GENS` or `(seq + 1) % MEMCG_NR_GENS`).
    pub gen: usize,
    /// The bin it is in.
    pub bin: usize,
    /// Its segment.
    pub seg: Seg,
    /// The previous memcg of its bin, or [`NO_MEMCG`].
    pub prev: MemcgId,
    /// The next memcg of its bin, or [`NO_MEMCG`] (the nulls marker).
    pub next: MemcgId,
    /// On a list (`!hlist_nulls_unhashed`): online or offline but not yet released.
    pub linked: bool,
}

impl Default for MemcgLink {
    fn default() -> Self {
        MemcgLink {
            gen: 0,
            bin: 0,
            seg: Seg::Default,
            prev: NO_MEMCG,
            next: NO_MEMCG,
            linked: false,
        }
    }
}

/// One bin: its first and last memcg.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bin {
    /// First (head), or [`NO_MEMCG`].
    pub head: MemcgId,
    /// Last (tail), or [`NO_MEMCG`].
    pub tail: MemcgId,
}

impl Default for Bin {
    fn default() -> Self {
        Bin {
            head: NO_MEMCG,
            tail: NO_MEMCG,
        }
    }
}

/// `struct lru_gen_memcg` (`pgdat->memcg_lru`): one node's memcg LRU.
#[derive(Clone, Debug, Default)]
pub struct MemcgLru {
    /// The per-node memcg generation counter: `seq % MEMCG_NR_GENS` is the old generation.
    pub seq: u64,
    /// Lruvecs per generation slot.
    pub nr_memcgs: [u64; MEMCG_NR_GENS],
    /// The bins, `[gen][bin]`.
    pub fifo: [[Bin; MEMCG_NR_BINS]; MEMCG_NR_GENS],
}

/// `get_memcg_gen`.
#[inline]
pub fn get_memcg_gen(seq: u64) -> usize {
    (seq % MEMCG_NR_GENS as u64) as usize
}

impl MemcgLru {
    /// The old generation's slot.
    #[inline]
    pub fn old_gen(&self) -> usize {
        get_memcg_gen(self.seq)
    }

    /// The young generation's slot.
    #[inline]
    pub fn young_gen(&self) -> usize {
        get_memcg_gen(self.seq + 1)
    }

    /// The memcgs of bin `bin` of generation slot `gen`, head first (allocates: for tests and
    /// the checker).
    pub fn bin_memcgs(&self, links: impl Fn(MemcgId) -> MemcgLink, gen: usize, bin: usize) -> Vec<MemcgId> {
        let mut out = Vec::new();
        let mut pos = self.fifo[gen][bin].head;
        while pos != NO_MEMCG {
            out.push(pos);
            pos = links(pos).next;
        }
        out
    }
}

use super::Mglru;

impl Mglru {
    /// `get_random_u32_below(n)`: the next draw of the policy's seeded stream (splitmix64), in
    /// `0..n`. The kernel's bins are random; the model's are fixed by the run's seed.
    pub fn get_random_u32_below(&mut self, n: u32) -> u32 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let x = crate::workload::dist::mix64(self.rng);
        (((x >> 32) * n as u64) >> 32) as u32
    }

    /// The place of lruvec (memcg, node) in the node's memcg LRU.
    #[inline]
    pub fn memcg_link(&self, memcg: MemcgId, node: usize) -> MemcgLink {
        self.lruvecs[self.lv(memcg, node)].memcg_list
    }

    /// The memcgs of `node`'s bin `bin` in generation slot `gen`, head first.
    pub fn memcg_bin(&self, node: usize, gen: usize, bin: usize) -> Vec<MemcgId> {
        self.memcg_lru[node].bin_memcgs(|c| self.memcg_link(c, node), gen, bin)
    }

    /// `hlist_nulls_del_rcu`: unlink (memcg, node) from its bin.
    fn memcg_unlink(&mut self, memcg: MemcgId, node: usize) {
        let lv = self.lv(memcg, node);
        let l = self.lruvecs[lv].memcg_list;
        debug_assert!(l.linked);
        if l.prev != NO_MEMCG {
            let p = self.lv(l.prev, node);
            self.lruvecs[p].memcg_list.next = l.next;
        } else {
            self.memcg_lru[node].fifo[l.gen][l.bin].head = l.next;
        }
        if l.next != NO_MEMCG {
            let n = self.lv(l.next, node);
            self.lruvecs[n].memcg_list.prev = l.prev;
        } else {
            self.memcg_lru[node].fifo[l.gen][l.bin].tail = l.prev;
        }
        let link = &mut self.lruvecs[lv].memcg_list;
        link.prev = NO_MEMCG;
        link.next = NO_MEMCG;
        link.linked = false;
    }

    /// `hlist_nulls_add_head_rcu`/`_add_tail_rcu`: link (memcg, node) into bin `bin` of `gen`.
    fn memcg_link_into(&mut self, memcg: MemcgId, node: usize, gen: usize, bin: usize, head: bool) {
        let lv = self.lv(memcg, node);
        let b = self.memcg_lru[node].fifo[gen][bin];
        let (prev, next) = if head { (NO_MEMCG, b.head) } else { (b.tail, NO_MEMCG) };
        {
            let link = &mut self.lruvecs[lv].memcg_list;
            link.gen = gen;
            link.bin = bin;
            link.prev = prev;
            link.next = next;
            link.linked = true;
        }
        if prev != NO_MEMCG {
            let p = self.lv(prev, node);
            self.lruvecs[p].memcg_list.next = memcg;
        } else {
            self.memcg_lru[node].fifo[gen][bin].head = memcg;
        }
        if next != NO_MEMCG {
            let n = self.lv(next, node);
            self.lruvecs[n].memcg_list.prev = memcg;
        } else {
            self.memcg_lru[node].fifo[gen][bin].tail = memcg;
        }
    }

    /// One fewer lruvec in generation slot `gen`: when the old generation empties, the young one
    /// becomes old (`seq` advances).
    fn memcg_lru_dec(&mut self, node: usize, gen: usize) {
        let l = &mut self.memcg_lru[node];
        l.nr_memcgs[gen] -= 1;
        if l.nr_memcgs[gen] == 0 && gen == l.old_gen() {
            l.seq += 1;
        }
    }

    /// `lru_gen_rotate_memcg`: apply `op` to lruvec (memcg, node), to a random bin.
    pub fn lru_gen_rotate_memcg(&mut self, memcg: MemcgId, node: usize, op: MemcgLruOp) {
        let bin = self.get_random_u32_below(MEMCG_NR_BINS as u32) as usize;
        let lv = self.lv(memcg, node);
        let old = self.lruvecs[lv].memcg_list.gen;
        let (mut new, mut seg) = (old, Seg::Default);
        match op {
            MemcgLruOp::Head => seg = Seg::Head,
            MemcgLruOp::Tail => seg = Seg::Tail,
            MemcgLruOp::Old => new = self.memcg_lru[node].old_gen(),
            MemcgLruOp::Young => new = self.memcg_lru[node].young_gen(),
            MemcgLruOp::Nop => debug_assert!(false, "lru_gen_rotate_memcg with no op"),
        }
        if !self.lruvecs[lv].memcg_list.linked {
            return;
        }
        self.memcg_unlink(memcg, node);
        self.lruvecs[lv].memcg_list.seg = seg;
        self.memcg_link_into(memcg, node, new, bin, matches!(op, MemcgLruOp::Head | MemcgLruOp::Old));
        self.memcg_lru[node].nr_memcgs[new] += 1;
        self.memcg_lru_dec(node, old);
    }

    /// `lru_gen_online_memcg`: on every node, to the tail of one random bin of the old
    /// generation.
    pub fn lru_gen_online_memcg(&mut self, memcg: MemcgId) {
        if self.memcg_link(memcg, 0).linked {
            return;
        }
        let bin = self.get_random_u32_below(MEMCG_NR_BINS as u32) as usize;
        for node in 0..self.nr_nodes {
            let gen = self.memcg_lru[node].old_gen();
            self.memcg_link_into(memcg, node, gen, bin, false);
            self.memcg_lru[node].nr_memcgs[gen] += 1;
        }
    }

    /// `lru_gen_offline_memcg`: `MEMCG_LRU_OLD` on every node.
    pub fn lru_gen_offline_memcg(&mut self, memcg: MemcgId) {
        for node in 0..self.nr_nodes {
            self.lru_gen_rotate_memcg(memcg, node, MemcgLruOp::Old);
        }
    }

    /// `lru_gen_release_memcg`: off the memcg LRU of every node.
    pub fn lru_gen_release_memcg(&mut self, memcg: MemcgId) {
        for node in 0..self.nr_nodes {
            let l = self.memcg_link(memcg, node);
            if !l.linked {
                continue;
            }
            self.memcg_unlink(memcg, node);
            self.memcg_lru_dec(node, l.gen);
        }
    }

    /// 7.2 `max_lru_gen_memcg`: age lruvec (memcg, node) without a walk
    /// (`try_to_inc_max_seq_nowalk`) until both types have `MAX_NR_GENS` generations, so that
    /// every generation slot of a child is one of its own.
    pub fn max_lru_gen_memcg(&mut self, m: &mut Machine, memcg: MemcgId, node: usize) {
        let lv = self.lv(memcg, node);
        let swappiness = m.memcgs[memcg].swappiness;
        for ty in 0..2 {
            while self.lruvecs[lv].max_seq - self.lruvecs[lv].min_seq[ty] + 1 < MAX_NR_GENS as u64 {
                let lg = &mut self.lruvecs[lv];
                if lg.max_seq > lg.mm_state.seq {
                    lg.mm_state.seq += 1;
                }
                self.inc_max_seq(m, lv, swappiness);
            }
        }
    }

    /// 7.2 `lru_gen_reparent_memcg` on `node`: the parent aged to `MAX_NR_GENS` generations
    /// ([`Self::max_lru_gen_memcg`]), each generation list of the child spliced to the tail of
    /// the parent's list of the same slot (the child's folios taken as colder; the slot may be a
    /// younger or older generation in the parent: the kernel accepts the inversion), with the
    /// page counts; where the slot is active in one and inactive in the other the
    /// active/inactive sizes are corrected (`__update_lru_size`). The unevictable list is
    /// spliced too (the kernel keeps no such list; the model does).
    pub fn lru_gen_reparent_memcg(&mut self, m: &mut Machine, child: MemcgId, parent: MemcgId, node: usize) {
        self.max_lru_gen_memcg(m, parent, node);
        let (c, p) = (self.lv(child, node), self.lv(parent, node));
        for ty in 0..2 {
            let nr_gens = self.lruvecs[c].max_seq - self.lruvecs[c].min_seq[ty] + 1;
            for i in 0..nr_gens {
                let gen = super::state::gen_from_seq(self.lruvecs[c].max_seq - i);
                let child_active = Self::is_active_gen(&self.lruvecs[c], gen);
                let parent_active = Self::is_active_gen(&self.lruvecs[p], gen);
                for zone in 0..super::state::MAX_NR_ZONES {
                    let mut from = std::mem::take(&mut self.lruvecs[c].folios[gen][ty][zone]);
                    let mut to = self.lruvecs[p].folios[gen][ty][zone];
                    m.folios.list_splice_tail(&mut from, &mut to);
                    self.lruvecs[p].folios[gen][ty][zone] = to;
                    let n = std::mem::take(&mut self.lruvecs[c].nr_pages[gen][ty][zone]);
                    self.lruvecs[p].nr_pages[gen][ty][zone] += n;
                    if child_active != parent_active {
                        m.update_lru_size_raw(child, node, zone, Lru::of(ty, child_active), -n);
                        m.update_lru_size_raw(parent, node, zone, Lru::of(ty, parent_active), n);
                    }
                }
            }
        }
        let mut from = std::mem::take(&mut self.unevictable[c]);
        let mut to = self.unevictable[p];
        m.folios.list_splice_tail(&mut from, &mut to);
        self.unevictable[p] = to;
    }

    /// `lru_gen_soft_reclaim` (cgroup v1's soft limit exceeded): `MEMCG_LRU_HEAD` unless it is
    /// already at the head. The model has no v1 soft limit; this is the call the kernel makes.
    pub fn lru_gen_soft_reclaim(&mut self, memcg: MemcgId, node: usize) {
        if self.memcg_link(memcg, node).seg != Seg::Head {
            self.lru_gen_rotate_memcg(memcg, node, MemcgLruOp::Head);
        }
    }

    /// The memcg LRU's invariants on every node: each linked lruvec is in exactly one bin of
    /// the generation it records, old or young; the links agree both ways; `nr_memcgs` counts
    /// them.
    pub fn check_memcg_lru(&self) -> Result<(), String> {
        let nr_memcgs = self.lruvecs.len() / self.nr_nodes;
        for node in 0..self.nr_nodes {
            let l = &self.memcg_lru[node];
            let mut seen = vec![false; nr_memcgs];
            for gen in 0..MEMCG_NR_GENS {
                let mut count = 0;
                for bin in 0..MEMCG_NR_BINS {
                    let mut prev = NO_MEMCG;
                    let mut pos = l.fifo[gen][bin].head;
                    while pos != NO_MEMCG {
                        let link = self.memcg_link(pos, node);
                        if seen[pos as usize] {
                            return Err(format!("memcg LRU node {node}: memcg {pos} linked twice"));
                        }
                        seen[pos as usize] = true;
                        if !link.linked || link.gen != gen || link.bin != bin || link.prev != prev {
                            return Err(format!(
                                "memcg LRU node {node}: memcg {pos} in gen {gen} bin {bin} records gen {} bin {} prev {} linked {}",
                                link.gen, link.bin, link.prev, link.linked
                            ));
                        }
                        if gen != l.old_gen() && gen != l.young_gen() {
                            return Err(format!(
                                "memcg LRU node {node}: memcg {pos} in gen slot {gen}, neither old nor young (seq {})",
                                l.seq
                            ));
                        }
                        count += 1;
                        prev = pos;
                        pos = link.next;
                    }
                    if l.fifo[gen][bin].tail != prev {
                        return Err(format!(
                            "memcg LRU node {node}: gen {gen} bin {bin} tail is not its last memcg"
                        ));
                    }
                }
                if count != l.nr_memcgs[gen] {
                    return Err(format!(
                        "memcg LRU node {node}: gen {gen} holds {count} memcgs, nr_memcgs says {}",
                        l.nr_memcgs[gen]
                    ));
                }
            }
            for (memcg, &s) in seen.iter().enumerate() {
                if !s && self.memcg_link(memcg as MemcgId, node).linked {
                    return Err(format!("memcg LRU node {node}: memcg {memcg} linked but in no bin"));
                }
            }
        }
        Ok(())
    }
}

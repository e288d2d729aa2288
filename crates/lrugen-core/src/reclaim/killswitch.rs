// SPDX-License-Identifier: GPL-2.0-only
//! The MGLRU kill switch, live: `/sys/kernel/mm/lru_gen/enabled` read and written in the middle of
//! a run, with the lists converted both ways (`mm/vmscan.c`: `enabled_show`, `enabled_store`,
//! `lru_gen_change_state`, `fill_evictable`, `drain_evictable`; docs/kill-switch.md).
//!
//! A kernel built with `CONFIG_LRU_GEN` has both LRUs in every lruvec: the classic lists
//! (`lruvec->lists`) and the generations (`lruvec->lrugen`); the core capability says which one
//! holds the evictable folios. [`Switchable`] is that pair: a [`Classic`] and an [`Mglru`] built
//! from the same profile, one of them live, implementing [`Policy`] by handing every call to the
//! live one. Turning the core capability on or off ([`Switchable::change_state`]) walks every
//! lruvec (memcg × node) and moves each folio across, as the kernel's fill and drain do:
//!
//! * on (`fill_evictable`): the four evictable classic lists in `enum lru_list` order, each from
//!   its tail (oldest first), taken off as `lruvec_del_folio` does and placed as
//!   `lru_gen_add_folio(reclaiming = false)` places a folio, `PG_active` included: an active folio
//!   goes to `max_seq` with `PG_workingset`, `max_seq - 1` without; an inactive one as a new folio
//!   would (anon not in the swap cache: `max_seq - 1`; file: the oldest generations, by
//!   `PG_referenced`/`PG_workingset` in 7.2). `PG_active` is cleared, as `lru_gen_add_folio` does.
//! * off (`drain_evictable`): every generation list in slot order (gen 0..4, then type, then
//!   zone; slots, not seqs), each from its tail, taken off as `lru_gen_del_folio(reclaiming =
//!   false)` does (`PG_active` set if the folio's generation is one of the two youngest,
//!   `lru_gen_is_active`) and added as `lruvec_add_folio` does (head of its active or inactive
//!   list).
//!
//! The unevictable folios are on `LRU_UNEVICTABLE` in either mode: they change owner here (the two
//! policies keep their own copy of that list), in order, and no counter moves. The generations'
//! seqs, timestamps, PID history and mm walk state are kept while MGLRU is off, as the kernel
//! keeps `lrugen` (the next fill places folios relative to the old `max_seq`); so are the classic
//! lruvecs' `nonresident_age` and costs while MGLRU is on, and their `refaults` snapshot is taken
//! at the end of each reclaim whatever the state, as the kernel's LRU-agnostic `snapshot_refaults`.
//!
//! Shadow entries are not converted: the kernel packs both LRUs' shadows the same way (memcg id,
//! node, workingset bit, and an eviction field), and `workingset_refault`/`workingset_test_recent`
//! decode whatever shadow they find with the decoder of the mode in force at the refault. So does
//! this model: `eviction_shadow` and `refault` go to the live policy, which unpacks the bits as
//! its own. An MGLRU token (`min_seq << 2 | refs - 1`) read by the classic LRU is a small clock
//! value, and its refault distance is `nonresident_age` minus it (usually large: not activated);
//! a classic shadow read by MGLRU carries the memcg that reclaimed (the root for global reclaim),
//! so a folio refaulting into another memcg counts nothing at all (`lru_gen_refault` returns
//! when the lruvec differs), and its clock read as a token is recent only if
//! `nonresident_age >> bucket_order >> 2` happens to lie within `MAX_NR_GENS` of `max_seq`.
//!
//! What is not modelled: the kernel converts under each lruvec's `lru_lock` in batches of
//! `MAX_LRU_BATCH`, dropping the lock and calling `cond_resched` between them, with the
//! `lru_switch` static key telling reclaim, `folio_check_references` and look-around that a
//! switch is in progress; here a write happens between two operations and converts every lruvec
//! at once, so nothing ever sees a half-converted machine.

use super::classic::Classic;
use super::mglru::debugfs::Errno;
use super::mglru::state::MAX_NR_ZONES;
use super::mglru::{caps, sysfs, Mglru, MglruConfig, Switches, MAX_NR_GENS};
use super::{AddCtx, FolioRef, ListRef, Policy, ScanControl};
use crate::mm::folio::{FolioId, ListHead, NIL};
use crate::mm::memcg::{MemcgId, ROOT_MEMCG};
use crate::mm::{Lru, Machine};

/// The classic lists `fill_evictable` empties, in `enum lru_list` order (`for_each_evictable_lru`).
const EVICTABLE: [Lru; 4] = [Lru::InactiveAnon, Lru::ActiveAnon, Lru::InactiveFile, Lru::ActiveFile];

/// Both LRUs of a `CONFIG_LRU_GEN` kernel, one of them live: the policy of a run that writes
/// `/sys/kernel/mm/lru_gen/enabled` while it runs. Plain runs use [`Classic`] or [`Mglru`]
/// directly (`Kernel<Classic>`, `Kernel<Mglru>`), so that only a run with a switch pays for the
/// dispatch.
#[derive(Clone, Debug)]
pub struct Switchable {
    /// The classic LRU (the evictable folios' owner while MGLRU is off).
    pub classic: Classic,
    /// The multi-gen LRU (their owner while it is on). Its `cfg.caps` are the `enabled` bits,
    /// bit 0 kept equal to whether it is live.
    pub mglru: Mglru,
}

/// Call `$body` with `$p` bound to the live policy.
macro_rules! live {
    ($self:expr, $p:ident => $body:expr) => {
        if $self.enabled() {
            let $p = &$self.mglru;
            $body
        } else {
            let $p = &$self.classic;
            $body
        }
    };
    (mut $self:expr, $p:ident => $body:expr) => {
        if $self.enabled() {
            let $p = &mut $self.mglru;
            $body
        } else {
            let $p = &mut $self.classic;
            $body
        }
    };
}

impl Switchable {
    /// Both LRUs for machine `m`, from `cfg` (the classic LRU with `cfg.profile`), MGLRU live if
    /// `enabled`, with the other capability bits `cfg.caps`'s; with MGLRU off every capability
    /// is off, as after `echo n` or on a kernel built without `CONFIG_LRU_GEN_ENABLED` (whose
    /// capability keys all start false).
    pub fn new(m: &Machine, cfg: &MglruConfig, enabled: bool) -> Self {
        let mut mglru = Mglru::new(m, cfg.clone());
        mglru.cfg.caps = if enabled {
            (cfg.caps & sysfs::CAPS_MASK) | caps::CORE
        } else {
            0
        };
        Switchable {
            classic: Classic::with_profile(m, cfg.profile),
            mglru,
        }
    }

    /// Whether MGLRU is live (`lru_gen_enabled()`: the core capability).
    #[inline]
    pub fn enabled(&self) -> bool {
        self.mglru.cfg.caps & caps::CORE != 0
    }

    /// The capability bits as set (bit 0 the core switch, whatever the hardware).
    pub fn caps(&self) -> u32 {
        self.mglru.cfg.caps
    }

    /// The bits `enabled_show` reports: the core switch, the page-table walk only where the MMU
    /// sets PTE accessed bits (`should_walk_mmu`), the non-leaf PMD bit only where it sets those
    /// (`should_clear_pmd_young`).
    pub fn enabled_caps(&self) -> u32 {
        let mut c = 0;
        if self.enabled() {
            c |= caps::CORE;
        }
        if self.mglru.should_walk_mmu() {
            c |= caps::MM_WALK;
        }
        if self.mglru.should_clear_pmd_young() {
            c |= caps::NONLEAF_YOUNG;
        }
        c
    }

    /// A read of `enabled` (`enabled_show`): `0x%04x` and a newline, e.g. `0x0007\n`.
    pub fn enabled_show(&self) -> String {
        format!("{:#06x}\n", self.enabled_caps())
    }

    /// A write of `buf` to `enabled` (`enabled_store`): read by [`sysfs::parse_enabled`]; then
    /// each capability in turn, the core one through [`Switchable::change_state`] (converting
    /// the lists if it changes), the others set or cleared. Returns the bytes consumed (all of
    /// them), or `EINVAL` with nothing changed.
    pub fn enabled_store(&mut self, m: &mut Machine, buf: &[u8]) -> Result<usize, Errno> {
        let bits = sysfs::parse_enabled(buf)?;
        self.store_caps(m, bits);
        Ok(buf.len())
    }

    /// The capability loop of `enabled_store` for parsed bits `bits`.
    fn store_caps(&mut self, m: &mut Machine, bits: u32) {
        for cap in [caps::CORE, caps::MM_WALK, caps::NONLEAF_YOUNG] {
            let on = bits & cap != 0;
            if cap == caps::CORE {
                self.change_state(m, on);
            } else if on {
                self.mglru.cfg.caps |= cap;
            } else {
                self.mglru.cfg.caps &= !cap;
            }
        }
    }

    /// `lru_gen_change_state`: make MGLRU live (`enabled`) or not, moving every evictable folio
    /// of every lruvec to the other LRU. Nothing happens if it already is as asked.
    pub fn change_state(&mut self, m: &mut Machine, enabled: bool) {
        if enabled == self.enabled() {
            return;
        }
        if enabled {
            self.mglru.cfg.caps |= caps::CORE;
        } else {
            self.mglru.cfg.caps &= !caps::CORE;
        }
        let mut memcg = m.memcgs.iter_next_live(ROOT_MEMCG, None);
        while let Some(c) = memcg {
            for node in 0..m.nr_nodes() {
                if enabled {
                    self.fill_evictable(m, c, node);
                } else {
                    self.drain_evictable(m, c, node);
                }
                self.move_unevictable(m, c, node, enabled);
            }
            memcg = m.memcgs.iter_next_live(ROOT_MEMCG, Some(c));
        }
    }

    /// `fill_evictable`: every folio of lruvec (memcg, node)'s classic evictable lists onto its
    /// generations, oldest first.
    fn fill_evictable(&mut self, m: &mut Machine, memcg: MemcgId, node: usize) {
        let lv = m.lruvec(memcg, node);
        for lru in EVICTABLE {
            loop {
                let id = self.classic.lruvecs[lv].lists[lru as usize].tail;
                if id == NIL {
                    break;
                }
                debug_assert_eq!(Classic::folio_lru_list(m, id), lru);
                debug_assert_eq!(m.folios[id].gen_counter(), 0);
                self.classic.lruvec_del(m, id);
                self.mglru.add(m, id, false);
            }
        }
    }

    /// `drain_evictable`: every folio of lruvec (memcg, node)'s generations onto the classic
    /// lists, by slot, type and zone, each list oldest first.
    fn drain_evictable(&mut self, m: &mut Machine, memcg: MemcgId, node: usize) {
        let lv = self.mglru.lv(memcg, node);
        for gen in 0..MAX_NR_GENS {
            for t in 0..2 {
                for z in 0..MAX_NR_ZONES {
                    loop {
                        let id = self.mglru.lruvecs[lv].folios[gen][t][z].tail;
                        if id == NIL {
                            break;
                        }
                        self.mglru.del(m, id, false);
                        self.classic.lruvec_add(m, id);
                    }
                }
            }
        }
    }

    /// The unevictable list of lruvec (memcg, node) handed to the LRU going live, in order (one
    /// list in the kernel: no counter changes).
    fn move_unevictable(&mut self, m: &mut Machine, memcg: MemcgId, node: usize, to_mglru: bool) {
        let (clv, mlv) = (m.lruvec(memcg, node), self.mglru.lv(memcg, node));
        let (from, to): (&mut ListHead, &mut ListHead) = if to_mglru {
            (
                &mut self.classic.lruvecs[clv].lists[Lru::Unevictable as usize],
                &mut self.mglru.unevictable[mlv],
            )
        } else {
            (
                &mut self.mglru.unevictable[mlv],
                &mut self.classic.lruvecs[clv].lists[Lru::Unevictable as usize],
            )
        };
        while from.tail != NIL {
            let id = from.tail;
            m.folios.list_del(from, id);
            m.folios.list_add(to, id);
        }
    }

    /// The dormant LRU holds nothing: no folio on its lists, no pages in its generations.
    fn check_dormant(&self) -> Result<(), String> {
        let lists = if self.enabled() {
            self.classic.lists()
        } else {
            self.mglru.lists()
        };
        if let Some(l) = lists.iter().find(|l| l.list.len != 0) {
            return Err(format!(
                "dormant LRU: list {} of memcg {} node {} holds {} folios",
                l.name, l.memcg, l.node, l.list.len
            ));
        }
        if !self.enabled() {
            for (lv, lg) in self.mglru.lruvecs.iter().enumerate() {
                if lg.nr_pages.iter().flatten().flatten().any(|&n| n != 0) {
                    return Err(format!("MGLRU is off but lruvec {lv} counts pages in its generations"));
                }
            }
        }
        Ok(())
    }
}

impl Policy for Switchable {
    fn name(&self) -> &'static str {
        live!(self, p => p.name())
    }

    fn memcg_created(&mut self, m: &Machine, memcg: MemcgId) {
        // both LRUs exist in every lruvec (`lru_gen_init_lruvec` whatever the state)
        self.classic.memcg_created(m, memcg);
        self.mglru.memcg_created(m, memcg);
    }

    fn memcg_offline(&mut self, m: &mut Machine, memcg: MemcgId) {
        self.classic.memcg_offline(m, memcg);
        self.mglru.memcg_offline(m, memcg);
    }

    fn reparent_lru(&mut self, m: &mut Machine, child: MemcgId, parent: MemcgId) {
        // `lru_gen_enabled()` picks the one that holds the folios
        live!(mut self, p => p.reparent_lru(m, child, parent))
    }

    fn memcg_released(&mut self, m: &Machine, memcg: MemcgId) {
        self.classic.memcg_released(m, memcg);
        self.mglru.memcg_released(m, memcg);
    }

    fn mm_created(&mut self, m: &Machine, mm: u32) {
        // `lru_gen_add_mm` runs at fork whatever the state
        self.classic.mm_created(m, mm);
        self.mglru.mm_created(m, mm);
    }

    fn add_folio(&mut self, m: &mut Machine, id: FolioId) {
        live!(mut self, p => p.add_folio(m, id))
    }

    fn lru_add_prepare(&mut self, m: &mut Machine, id: FolioId, ctx: AddCtx) {
        live!(mut self, p => p.lru_add_prepare(m, id, ctx))
    }

    fn folio_batch_size(&self) -> usize {
        live!(self, p => p.folio_batch_size())
    }

    fn del_folio(&mut self, m: &mut Machine, id: FolioId) {
        live!(mut self, p => p.del_folio(m, id))
    }

    fn add_split_tail(&mut self, m: &mut Machine, head: FolioId, tail: FolioId) {
        live!(mut self, p => p.add_split_tail(m, head, tail))
    }

    fn mark_accessed(&mut self, m: &mut Machine, id: FolioId) {
        live!(mut self, p => p.mark_accessed(m, id))
    }

    fn lru_activate(&mut self, m: &mut Machine, id: FolioId) {
        live!(mut self, p => p.lru_activate(m, id))
    }

    fn deactivate(&mut self, m: &mut Machine, id: FolioId) {
        live!(mut self, p => p.deactivate(m, id))
    }

    fn switches(&self) -> &Switches {
        live!(self, p => p.switches())
    }

    fn prepare_node(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl) {
        live!(mut self, p => p.prepare_node(m, node, sc))
    }

    fn shrink_node_lruvecs(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl) {
        live!(mut self, p => p.shrink_node_lruvecs(m, node, sc))
    }

    fn shrink_lruvec(&mut self, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl) {
        live!(mut self, p => p.shrink_lruvec(m, memcg, node, sc))
    }

    fn memcg_lru_zone_sizes(&self) -> bool {
        live!(self, p => p.memcg_lru_zone_sizes())
    }

    fn age_node(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl) {
        live!(mut self, p => p.age_node(m, node, sc))
    }

    fn snapshot_refaults(&mut self, m: &Machine, target: MemcgId, node: usize) {
        // `lruvec->refaults` is the lruvec's, not the classic LRU's: reclaim snapshots it at the
        // end of every invocation whatever the state, so a switch to classic reads a fresh one
        self.classic.snapshot_refaults(m, target, node);
        self.mglru.snapshot_refaults(m, target, node);
    }

    fn keep_referenced_mapped(&self) -> bool {
        live!(self, p => p.keep_referenced_mapped())
    }

    fn check_references(&mut self, m: &mut Machine, id: FolioId, sc: &ScanControl) -> FolioRef {
        live!(mut self, p => p.check_references(m, id, sc))
    }

    fn eviction_shadow(&mut self, m: &mut Machine, id: FolioId, target: Option<MemcgId>) -> u64 {
        // `workingset_eviction`: the encoder of the mode in force
        live!(mut self, p => p.eviction_shadow(m, id, target))
    }

    fn refault(&mut self, m: &mut Machine, id: FolioId, shadow: u64, in_fault: bool) {
        // `workingset_refault`: the decoder of the mode in force, whoever made the shadow
        live!(mut self, p => p.refault(m, id, shadow, in_fault))
    }

    fn rotate_reclaimable(&mut self, m: &mut Machine, id: FolioId) {
        live!(mut self, p => p.rotate_reclaimable(m, id))
    }

    fn debugfs(&self, m: &Machine, full: bool) -> Option<String> {
        // the lru_gen files read the generations in either state (empty while MGLRU is off)
        self.mglru.debugfs(m, full)
    }

    fn promotions(&self) -> u64 {
        self.mglru.promotions()
    }

    fn generations(&self, m: &Machine, memcg: MemcgId) -> Option<Vec<(u64, u64, u64)>> {
        self.mglru.generations(m, memcg)
    }

    fn seqs(&self, memcg: MemcgId, node: usize) -> Option<(u64, u64, u64)> {
        self.mglru.seqs(memcg, node)
    }

    fn lru_gen_caps(&self) -> u32 {
        self.enabled_caps()
    }

    fn set_lru_gen_caps(&mut self, m: &mut Machine, caps: u32) -> Result<(), String> {
        self.store_caps(m, caps);
        Ok(())
    }

    fn min_ttl_jiffies(&self) -> u64 {
        // `lru_gen_min_ttl` is the kernel's, whichever LRU runs
        self.mglru.min_ttl_jiffies()
    }

    fn set_min_ttl_jiffies(&mut self, jiffies: u64) -> Result<(), String> {
        self.mglru.set_min_ttl_jiffies(jiffies)
    }

    fn debugfs_write(&mut self, m: &mut Machine, input: &str) -> Result<(), String> {
        // `lru_gen_seq_write` does not look at the state: with MGLRU off it ages and evicts the
        // (empty) generations
        Policy::debugfs_write(&mut self.mglru, m, input)
    }

    fn lists(&self) -> Vec<ListRef<'_>> {
        // both LRUs' lists: the checker then finds a folio on one list of each
        let mut out = self.classic.lists();
        out.extend(self.mglru.lists());
        out
    }

    fn check(&self, m: &Machine) -> Result<(), String> {
        self.check_dormant()?;
        live!(self, p => p.check(m))
    }
}

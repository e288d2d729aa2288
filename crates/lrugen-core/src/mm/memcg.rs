// SPDX-License-Identifier: GPL-2.0-only
//! Memory cgroups: the tree, limits, page counters, and per-memcg events.
//!
//! The page counter is hierarchical as in the kernel (`page_counter_try_charge`): a charge raises the
//! usage of the memcg and of every ancestor, and fails at the first one that would exceed its
//! `memory.max`.
//!
//! The per-CPU charge stock is modelled (`memcg_stock_pcp`, [`Memcgs::charge_pages`]): an order-0
//! charge that the CPU's stock cannot serve charges a batch of `MEMCG_CHARGE_BATCH` (64) pages to
//! the page counter and keeps the rest in the stock, which later charges on that CPU consume and
//! kernel-memory uncharges refill. The stock's pages are in `usage` (`memory.current`, the limit
//! checks) but in no folio: so `usage` runs up to 63 pages per CPU above the charged pages, a
//! 2 MiB charge that cannot reclaim (`GFP_TRANSHUGE_LIGHT`) fails that much earlier, and a charge
//! that reclaimed without making room drains every CPU's stock before its next try
//! (`drain_all_stock`), as do `memory.max`/`memory.high` writes and a memcg's removal. A charge
//! retried after a failure charges its own pages only ([`Memcgs::charge_pages_retry`]), so under
//! steady pressure the stock stays empty, as the kernel's does.

use super::vmstat::MemcgEvents;

/// Index of a memcg (also its `mem_cgroup_id`; the root is 0 here and printed as the kernel's id).
pub type MemcgId = u16;
/// The root memcg.
pub const ROOT_MEMCG: MemcgId = 0;

/// "No limit" (`PAGE_COUNTER_MAX`).
pub const PAGE_COUNTER_MAX: u64 = u64::MAX / 2;

/// Where a memcg is in its life (`mem_cgroup_css_online`, `_offline`, `_released`/`_free`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemcgState {
    /// Created and not removed (`mem_cgroup_online`).
    #[default]
    Online,
    /// Removed (`rmdir`: `mem_cgroup_css_offline` ran) but still pinned by the folios charged to
    /// it or by the swap entries that record its id: a "zombie". Reclaim still visits it
    /// (`mem_cgroup_iter`'s `css_tryget` succeeds) and scrapes all it holds; a swap-out or
    /// swap-in charges its nearest online ancestor instead.
    Offline,
    /// Released and freed (`mem_cgroup_css_released`, `_free`): nothing is charged to it, walks
    /// skip it, and its id no longer resolves.
    Freed,
}

/// One memory cgroup.
#[derive(Clone, Debug)]
pub struct Memcg {
    /// Its id.
    pub id: MemcgId,
    /// Path below the cgroup root, e.g. `/` or `/t`.
    pub path: String,
    /// Parent (none for the root).
    pub parent: Option<MemcgId>,
    /// Children, in creation order.
    pub children: Vec<MemcgId>,
    /// `memory.max` in pages.
    pub max: u64,
    /// `memory.high` in pages.
    pub high: u64,
    /// `memory.low` in pages.
    pub low: u64,
    /// `memory.min` in pages.
    pub min: u64,
    /// `memory.swap.max` in pages.
    pub swap_max: u64,
    /// `memory.swappiness` (cgroup v1 knob; v2 inherits `vm.swappiness`).
    pub swappiness: u32,
    /// Hierarchical usage in pages (`memory.current`).
    pub usage: u64,
    /// Pages charged to this memcg itself (not descendants), the stocked ones excepted.
    pub usage_local: u64,
    /// Pages charged to this memcg itself that sit in CPUs' charge stocks (in `usage`, in no
    /// folio or kernel object).
    pub stocked: u64,
    /// Hierarchical swap usage in pages (`memory.swap.current`).
    pub swap_usage: u64,
    /// Swap entries recorded with this memcg's id (`swap_cgroup`), each pinning its id.
    pub swap_local: u64,
    /// Online, offline (a zombie) or freed.
    pub state: MemcgState,
    /// `memory.events` (local; the file shows hierarchical sums).
    pub events: MemcgEvents,
    /// Slab bytes charged to it (`obj_cgroup`); the whole pages they need are in `usage`.
    pub slab_bytes: u64,
    /// Slab bytes (reclaimable, unreclaimable) allocated or freed since its statistics last saw
    /// them (the per-CPU object stock's batching).
    pub slab_stat_pending: [i64; 2],
    /// Effective protection computed for the current reclaim (`memory.emin`/`elow`).
    pub emin: u64,
    /// Effective low protection.
    pub elow: u64,
}

impl Memcg {
    /// `mem_cgroup_online`.
    #[inline]
    pub fn online(&self) -> bool {
        self.state == MemcgState::Online
    }

    /// A memcg with no limits, no protection and nothing charged.
    fn unlimited(id: MemcgId, path: String, parent: Option<MemcgId>, swappiness: u32) -> Memcg {
        Memcg {
            id,
            path,
            parent,
            children: vec![],
            max: PAGE_COUNTER_MAX,
            high: PAGE_COUNTER_MAX,
            low: 0,
            min: 0,
            swap_max: PAGE_COUNTER_MAX,
            swappiness,
            usage: 0,
            usage_local: 0,
            stocked: 0,
            swap_usage: 0,
            swap_local: 0,
            state: MemcgState::Online,
            events: MemcgEvents::default(),
            slab_bytes: 0,
            slab_stat_pending: [0; 2],
            emin: 0,
            elow: 0,
        }
    }
}

/// `struct mem_cgroup_reclaim_iter` of one (memcg, node): where the last reclaim walk rooted at
/// that memcg stopped, shared by every walk that passes a reclaim cookie.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReclaimIter {
    /// The memcg the last walk returned (`iter->position`), `None` at the start of a cycle.
    pub position: Option<MemcgId>,
    /// Completed cycles (`iter->generation`).
    pub generation: u64,
}

/// `struct mem_cgroup_reclaim_cookie`: a walk's node and the cycle it joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReclaimCookie {
    /// The node reclaimed.
    pub node: usize,
    /// The iterator's generation when the walk started.
    pub generation: u64,
}

/// Pages a CPU's charge stock holds for one memcg before it is drained, and the batch an order-0
/// charge takes from the page counter (`MEMCG_CHARGE_BATCH`).
pub const MEMCG_CHARGE_BATCH: u64 = 64;

/// Memcgs one CPU's charge stock holds with switch `memcg_stock_multi` (`NR_MEMCG_STOCK`); 1
/// without it.
pub const NR_MEMCG_STOCK: usize = 7;

/// One CPU's charge stock (`struct memcg_stock_pcp`): pages charged to the page counter of the
/// memcgs it caches and not used yet.
#[derive(Clone, Copy, Debug, Default)]
struct ChargeStock {
    /// The memcg of each slot (`cached[]`; one slot before 6.16).
    cached: [Option<MemcgId>; NR_MEMCG_STOCK],
    /// Its pages (`nr_pages[]`).
    nr: [u8; NR_MEMCG_STOCK],
    /// The slot a refill for a memcg not cached replaces when none is free (`drain_idx`).
    drain_idx: u8,
}

/// The memcg tree.
#[derive(Clone, Debug)]
pub struct Memcgs {
    list: Vec<Memcg>,
    /// Each CPU's charge stock, grown as CPUs charge.
    stocks: Vec<ChargeStock>,
    /// Slots per CPU stock: 0 (no stock), 1, or [`NR_MEMCG_STOCK`] (switch `memcg_stock_multi`;
    /// [`Memcgs::set_stock_slots`]).
    stock_slots: usize,
    /// Offline memcgs not freed yet.
    pub zombies: u32,
    /// An offline memcg's last page or swap entry went since the last reap: one may be freed
    /// (`Kernel::reap_memcgs` looks, at the next return to user space; nothing is scanned per
    /// step while none can be).
    pub reap_pending: bool,
}

/// Why a charge failed: the memcg whose limit was hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverLimit(pub MemcgId);

impl Memcgs {
    /// A tree with only the root.
    pub fn new(swappiness: u32) -> Self {
        Memcgs {
            list: vec![Memcg::unlimited(ROOT_MEMCG, "/".into(), None, swappiness)],
            stocks: Vec::new(),
            stock_slots: 0,
            zombies: 0,
            reap_pending: false,
        }
    }

    /// Create a child of `parent` named `name` with no limits; returns its id.
    pub fn create(&mut self, parent: MemcgId, name: &str) -> MemcgId {
        let id = self.list.len() as MemcgId;
        let p = &self.list[parent as usize];
        let path = if p.path == "/" {
            format!("/{name}")
        } else {
            format!("{}/{name}", p.path)
        };
        let swappiness = p.swappiness;
        self.list.push(Memcg::unlimited(id, path, Some(parent), swappiness));
        self.list[parent as usize].children.push(id);
        id
    }

    /// Number of memcgs.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether only... never true: the root always exists.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// All memcgs in id order.
    pub fn iter(&self) -> impl Iterator<Item = &Memcg> {
        self.list.iter()
    }

    /// Find by path (an online memcg: a removed one has no directory).
    pub fn by_path(&self, path: &str) -> Option<MemcgId> {
        self.list.iter().find(|m| m.path == path && m.online()).map(|m| m.id)
    }

    /// Whether `m` is `ancestor` or below it.
    pub fn is_descendant(&self, mut m: MemcgId, ancestor: MemcgId) -> bool {
        loop {
            if m == ancestor {
                return true;
            }
            match self.list[m as usize].parent {
                Some(p) => m = p,
                None => return false,
            }
        }
    }

    /// Pre-order walk of the subtree rooted at `root` (`mem_cgroup_iter` order).
    pub fn subtree(&self, root: MemcgId) -> Vec<MemcgId> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(m) = stack.pop() {
            out.push(m);
            for &c in self.list[m as usize].children.iter().rev() {
                stack.push(c);
            }
        }
        out
    }

    /// The memcg after `prev` in a pre-order walk of the subtree rooted at `root` (`root` itself
    /// when `prev` is `None`; `None` after the last), in [`Memcgs::subtree`]'s order
    /// (`mem_cgroup_iter`). A cursor rather than a list, so that reclaim walks the tree without
    /// allocating and while it changes the memcgs it visits.
    #[inline]
    pub fn iter_next(&self, root: MemcgId, prev: Option<MemcgId>) -> Option<MemcgId> {
        let Some(mut cur) = prev else {
            return Some(root);
        };
        if let Some(&c) = self.list[cur as usize].children.first() {
            return Some(c);
        }
        while cur != root {
            let parent = self.list[cur as usize].parent?;
            let siblings = &self.list[parent as usize].children;
            let at = siblings.iter().position(|&c| c == cur)?;
            if let Some(&next) = siblings.get(at + 1) {
                return Some(next);
            }
            cur = parent;
        }
        None
    }

    /// [`Memcgs::iter_next`] skipping freed memcgs: the walk `mem_cgroup_iter` makes, whose
    /// `css_tryget` accepts an offline memcg (its folios are still to be reclaimed) but not a
    /// freed one.
    #[inline]
    pub fn iter_next_live(&self, root: MemcgId, prev: Option<MemcgId>) -> Option<MemcgId> {
        let mut next = self.iter_next(root, prev);
        while let Some(c) = next {
            if self.list[c as usize].state != MemcgState::Freed {
                break;
            }
            next = self.iter_next(root, Some(c));
        }
        next
    }

    /// Charge `nr` pages to `m` and its ancestors (`page_counter_try_charge`). On failure nothing is
    /// charged and the memcg whose `memory.max` was hit is returned.
    #[inline]
    pub fn try_charge(&mut self, m: MemcgId, nr: u64) -> Result<(), OverLimit> {
        self.check_limits(m, nr)?;
        self.force_charge(m, nr);
        Ok(())
    }

    /// `try_charge_memcg`'s page-counter part for `nr` pages charged to `m` on CPU `cpu`, with
    /// the CPU's charge stock: an order-0 charge (up to `MEMCG_CHARGE_BATCH` pages) is served by
    /// the stock if it holds enough for `m` (`consume_stock`); otherwise a batch of
    /// `MEMCG_CHARGE_BATCH` pages (or `nr`, if larger) is charged and what `nr` does not use goes
    /// to the stock (`refill_stock`); if the batch does not fit, `nr` alone. On failure nothing
    /// is charged and the memcg whose `memory.max` was hit is returned. The root memcg is charged
    /// without a stock.
    #[inline]
    pub fn charge_pages(&mut self, cpu: u32, m: MemcgId, nr: u64) -> Result<(), OverLimit> {
        if m == ROOT_MEMCG || self.stock_slots == 0 {
            return self.try_charge(m, nr);
        }
        self.charge_stocked(cpu, m, nr)
    }

    /// [`Self::charge_pages`] with a stock (out of line: runs without kernel memory, the
    /// default, keep the plain charge inline on their miss path).
    #[inline(never)]
    fn charge_stocked(&mut self, cpu: u32, m: MemcgId, nr: u64) -> Result<(), OverLimit> {
        if self.consume_stock(cpu, m, nr) {
            return Ok(());
        }
        let batch = nr.max(MEMCG_CHARGE_BATCH);
        if batch > nr && self.check_limits(m, batch).is_ok() {
            self.counter_add(m, batch as i64);
            self.list[m as usize].usage_local += nr;
            self.list[m as usize].stocked += batch - nr;
            self.refill_stock(cpu, m, batch - nr);
            return Ok(());
        }
        self.try_charge(m, nr)
    }

    /// A retry of `try_charge_memcg` after its first try failed: its `batch` is `nr` from then
    /// on, so a retry takes from the stock if the stock can serve it (`consume_stock` runs
    /// on every retry) but charges only `nr` and never refills the stock. So under steady
    /// pressure, where every charge reclaims first, the stock stays empty (traced on 6.12: after
    /// each 64-page reclaim the retry charges 1 page, and the next charges find 63 pages of room,
    /// too few for a batch).
    #[inline]
    pub fn charge_pages_retry(&mut self, cpu: u32, m: MemcgId, nr: u64) -> Result<(), OverLimit> {
        if m != ROOT_MEMCG && self.stock_slots > 0 && self.consume_stock(cpu, m, nr) {
            return Ok(());
        }
        self.try_charge(m, nr)
    }

    /// Uncharge `nr` pages of kernel memory from `m` on CPU `cpu` (`obj_cgroup_uncharge_pages`):
    /// they go to the CPU's stock (`refill_stock`), not straight back to the page counter.
    pub fn uncharge_kmem(&mut self, cpu: u32, m: MemcgId, nr: u64) {
        // an offline memcg's stocks were drained when it went (`mem_cgroup_css_offline`)
        if m == ROOT_MEMCG || self.stock_slots == 0 || !self.list[m as usize].online() {
            return self.uncharge(m, nr);
        }
        let l = &mut self.list[m as usize];
        l.usage_local -= nr;
        l.stocked += nr;
        self.refill_stock(cpu, m, nr);
        self.note_unpinned(m);
    }

    /// Slots per CPU stock from now on ([`NR_MEMCG_STOCK`] with switch `memcg_stock_multi`,
    /// else 1; 0: no stock, [`crate::mm::KmemConfig::charge_stock`] off); the slots beyond are
    /// drained.
    pub fn set_stock_slots(&mut self, n: usize) {
        assert!(n <= NR_MEMCG_STOCK, "{n} stock slots");
        for cpu in 0..self.stocks.len() {
            for i in n..NR_MEMCG_STOCK {
                self.drain_slot(cpu, i);
            }
            if usize::from(self.stocks[cpu].drain_idx) >= n.max(1) {
                self.stocks[cpu].drain_idx = 0;
            }
        }
        self.stock_slots = n;
    }

    /// Pages the CPU stocks hold for `m` itself.
    pub fn stocked(&self, m: MemcgId) -> u64 {
        self.list[m as usize].stocked
    }

    /// The stocks' invariants: each memcg's `stocked` is what the CPUs' slots hold for it, no
    /// slot holds more than `MEMCG_CHARGE_BATCH`, a slot with pages names a memcg, no memcg
    /// has two slots on one CPU, and only online memcgs other than the root are cached.
    pub fn check_stocks(&self) -> Result<(), String> {
        let mut sum = vec![0u64; self.list.len()];
        for (cpu, st) in self.stocks.iter().enumerate() {
            for i in 0..NR_MEMCG_STOCK {
                let nr = u64::from(st.nr[i]);
                let Some(c) = st.cached[i] else {
                    if nr > 0 {
                        return Err(format!("cpu {cpu} stock slot {i}: {nr} pages of no memcg"));
                    }
                    continue;
                };
                if i >= self.stock_slots || nr > MEMCG_CHARGE_BATCH {
                    return Err(format!(
                        "cpu {cpu} stock slot {i} of {} slots holds {nr} pages",
                        self.stock_slots
                    ));
                }
                if c == ROOT_MEMCG || !self.list[c as usize].online() {
                    return Err(format!("cpu {cpu} stocks memcg {c}, the root or offline"));
                }
                if st.cached[..i].contains(&Some(c)) {
                    return Err(format!("cpu {cpu} stocks memcg {c} in two slots"));
                }
                sum[c as usize] += nr;
            }
        }
        for mc in &self.list {
            if mc.stocked != sum[mc.id as usize] {
                return Err(format!(
                    "memcg {} ({}): {} pages stocked but the CPUs' stocks hold {}",
                    mc.id, mc.path, mc.stocked, sum[mc.id as usize]
                ));
            }
        }
        Ok(())
    }

    /// Empty every CPU's stock that holds pages of `root` or a descendant (`drain_all_stock`;
    /// the kernel drains other CPUs' stocks from a work item, the model at once). With
    /// `memcg_stock_multi` a CPU's whole stock goes (`drain_stock_fully`).
    pub fn drain_all_stock(&mut self, root: MemcgId) {
        for cpu in 0..self.stocks.len() {
            let st = self.stocks[cpu];
            let needed = (0..self.stock_slots)
                .any(|i| st.nr[i] > 0 && st.cached[i].is_some_and(|c| self.is_descendant(c, root)));
            if needed {
                for i in 0..self.stock_slots {
                    self.drain_slot(cpu, i);
                }
            }
        }
    }

    /// [`Self::drain_all_stock`] the first time a loop asks (`drained` false), as the kernel's
    /// charge and limit-write loops drain once (`bool drained`); whether it drained now.
    pub fn drain_all_stock_once(&mut self, root: MemcgId, drained: &mut bool) -> bool {
        if *drained {
            return false;
        }
        *drained = true;
        self.drain_all_stock(root);
        true
    }

    /// `consume_stock`: take `nr` pages for `m` from CPU `cpu`'s stock if it caches `m` with
    /// that many.
    fn consume_stock(&mut self, cpu: u32, m: MemcgId, nr: u64) -> bool {
        if nr > MEMCG_CHARGE_BATCH {
            return false;
        }
        let Some(st) = self.stocks.get_mut(cpu as usize) else {
            return false;
        };
        for i in 0..self.stock_slots {
            if st.cached[i] != Some(m) {
                continue;
            }
            if u64::from(st.nr[i]) < nr {
                return false;
            }
            st.nr[i] -= nr as u8;
            let l = &mut self.list[m as usize];
            l.stocked -= nr;
            l.usage_local += nr;
            return true;
        }
        false
    }

    /// `refill_stock`: put `nr` pages already in `m`'s `usage` (and counted in its `stocked`)
    /// into CPU `cpu`'s stock. One slot (before 6.16): a stock caching another memcg is drained
    /// first. Several (`memcg_stock_multi`): `m`'s slot, else a free one, else the one at
    /// `drain_idx`, drained; more than a batch goes straight back to the page counter. Either
    /// way a slot over `MEMCG_CHARGE_BATCH` is drained.
    fn refill_stock(&mut self, cpu: u32, m: MemcgId, nr: u64) {
        let cpu = cpu as usize;
        if self.stocks.len() <= cpu {
            self.stocks.resize(cpu + 1, ChargeStock::default());
        }
        let multi = self.stock_slots > 1;
        if multi && nr > MEMCG_CHARGE_BATCH {
            self.list[m as usize].stocked -= nr;
            self.counter_add(m, -(nr as i64));
            return;
        }
        let st = &self.stocks[cpu];
        let slot = match (0..self.stock_slots).find(|&i| st.cached[i] == Some(m)) {
            Some(i) => i,
            None => {
                let i = if multi {
                    match (0..self.stock_slots).find(|&i| st.cached[i].is_none()) {
                        Some(i) => i,
                        None => {
                            let i = usize::from(st.drain_idx);
                            self.stocks[cpu].drain_idx = ((i + 1) % self.stock_slots) as u8;
                            i
                        }
                    }
                } else {
                    0
                };
                self.drain_slot(cpu, i);
                self.stocks[cpu].cached[i] = Some(m);
                i
            }
        };
        let have = u64::from(self.stocks[cpu].nr[slot]);
        if have + nr > MEMCG_CHARGE_BATCH {
            // the slot overflows and goes back whole, the pages just added with it
            self.list[m as usize].stocked -= nr;
            self.counter_add(m, -(nr as i64));
            self.drain_slot(cpu, slot);
        } else {
            self.stocks[cpu].nr[slot] = (have + nr) as u8;
        }
    }

    /// `drain_stock`: return slot `i` of CPU `cpu`'s stock to its memcg's page counter and
    /// forget the memcg.
    fn drain_slot(&mut self, cpu: usize, i: usize) {
        let st = &mut self.stocks[cpu];
        let Some(c) = st.cached[i].take() else {
            return;
        };
        let nr = u64::from(std::mem::take(&mut st.nr[i]));
        if nr > 0 {
            self.list[c as usize].stocked -= nr;
            self.counter_add(c, -(nr as i64));
        }
        self.note_unpinned(c);
    }

    /// Whether `nr` more pages charged to `m` stay within every `memory.max` up the tree.
    #[inline]
    fn check_limits(&self, m: MemcgId, nr: u64) -> Result<(), OverLimit> {
        let mut cur = Some(m);
        while let Some(c) = cur {
            let mc = &self.list[c as usize];
            if mc.usage + nr > mc.max {
                return Err(OverLimit(c));
            }
            cur = mc.parent;
        }
        Ok(())
    }

    /// Add `d` pages to the page counters of `m` and its ancestors (`usage` only).
    fn counter_add(&mut self, m: MemcgId, d: i64) {
        let mut cur = Some(m);
        while let Some(c) = cur {
            let l = &mut self.list[c as usize];
            l.usage = l.usage.wrapping_add_signed(d);
            cur = l.parent;
        }
    }

    /// Charge without checking limits (`page_counter_charge`).
    pub fn force_charge(&mut self, m: MemcgId, nr: u64) {
        self.list[m as usize].usage_local += nr;
        let mut cur = Some(m);
        while let Some(c) = cur {
            self.list[c as usize].usage += nr;
            cur = self.list[c as usize].parent;
        }
    }

    /// Uncharge `nr` pages from `m` and its ancestors.
    pub fn uncharge(&mut self, m: MemcgId, nr: u64) {
        self.list[m as usize].usage_local -= nr;
        self.note_unpinned(m);
        let mut cur = Some(m);
        while let Some(c) = cur {
            self.list[c as usize].usage -= nr;
            cur = self.list[c as usize].parent;
        }
    }

    /// Flag a reap when `m` is offline and holds no page or swap entry of its own any more.
    #[inline]
    fn note_unpinned(&mut self, m: MemcgId) {
        let l = &self.list[m as usize];
        if l.state == MemcgState::Offline && l.usage_local == 0 && l.swap_local == 0 && l.stocked == 0 {
            self.reap_pending = true;
        }
    }

    /// Move `nr` pages charged locally to `from` to its parent `to` (the memcgs above `to` see
    /// no change): a reparenting.
    pub fn move_local(&mut self, from: MemcgId, to: MemcgId, nr: u64) {
        debug_assert_eq!(self.list[from as usize].parent, Some(to));
        let f = &mut self.list[from as usize];
        f.usage_local -= nr;
        self.note_unpinned(from);
        let f = &mut self.list[from as usize];
        f.usage -= nr;
        self.list[to as usize].usage_local += nr;
    }

    /// Charge or uncharge swap usage (`memory.swap.current`) up the tree.
    pub fn swap_charge(&mut self, m: MemcgId, delta: i64) {
        let l = &mut self.list[m as usize];
        l.swap_local = (l.swap_local as i64 + delta) as u64;
        self.note_unpinned(m);
        let mut cur = Some(m);
        while let Some(c) = cur {
            let mc = &mut self.list[c as usize];
            mc.swap_usage = (mc.swap_usage as i64 + delta) as u64;
            cur = mc.parent;
        }
    }

    /// `m` if it is online, else its nearest online ancestor (`mem_cgroup_id_get_online`,
    /// `parent_mem_cgroup` until `mem_cgroup_online`; the root is always online).
    pub fn online_ancestor(&self, mut m: MemcgId) -> MemcgId {
        while !self.list[m as usize].online() {
            match self.list[m as usize].parent {
                Some(p) => m = p,
                None => break,
            }
        }
        m
    }

    /// Whether any child of `m` is online (`css_has_online_children`).
    pub fn has_online_children(&self, m: MemcgId) -> bool {
        self.list[m as usize]
            .children
            .iter()
            .any(|&c| self.list[c as usize].online())
    }

    /// `mem_cgroup_from_id`: the memcg a shadow entry's id names, if the id still resolves. The
    /// id of an online memcg does; a removed memcg's id is erased once its last id reference
    /// goes (`mem_cgroup_id_put` at offline, then one per swap entry recording it), so an
    /// offline memcg's id resolves only while swap entries record it.
    pub fn from_id(&self, m: MemcgId) -> Option<MemcgId> {
        let mc = self.list.get(m as usize)?;
        match mc.state {
            MemcgState::Online => Some(m),
            MemcgState::Offline if mc.swap_local > 0 => Some(m),
            _ => None,
        }
    }

    /// Pages still chargeable to `m` before any ancestor hits its limit (`mem_cgroup_margin`).
    pub fn margin(&self, m: MemcgId) -> u64 {
        let mut margin = u64::MAX;
        let mut cur = Some(m);
        while let Some(c) = cur {
            let mc = &self.list[c as usize];
            margin = margin.min(mc.max.saturating_sub(mc.usage));
            cur = mc.parent;
        }
        margin
    }

    /// Swap pages still available to `m` under its and its ancestors' `memory.swap.max`.
    pub fn swap_margin(&self, m: MemcgId) -> u64 {
        let mut margin = u64::MAX;
        let mut cur = Some(m);
        while let Some(c) = cur {
            let mc = &self.list[c as usize];
            margin = margin.min(mc.swap_max.saturating_sub(mc.swap_usage));
            cur = mc.parent;
        }
        margin
    }

    /// The memcgs from `m` up to the root whose usage exceeds `memory.high`.
    pub fn over_high(&self, m: MemcgId) -> Vec<MemcgId> {
        let mut out = vec![];
        let mut cur = Some(m);
        while let Some(c) = cur {
            let mc = &self.list[c as usize];
            if mc.usage > mc.high {
                out.push(c);
            }
            cur = mc.parent;
        }
        out
    }

    /// `mem_cgroup_below_min(target, memcg)`: whether reclaim must leave `memcg` alone because its
    /// usage is at or below its effective `memory.min` (`emin >= usage`, so an empty memcg is below
    /// it, as in the kernel). The reclaim target itself is never protected
    /// (`mem_cgroup_unprotected`: its `emin` is computed as 0 anyway, so on 6.1, which lacks that
    /// test, only an empty target differs, and an empty target has nothing to reclaim), nor is the
    /// root. `target` is `None` where the kernel passes `NULL` (MGLRU's `shrink_one`,
    /// `lruvec_is_reclaimable`).
    #[inline]
    pub fn below_min(&self, target: Option<MemcgId>, memcg: MemcgId) -> bool {
        let mc = &self.list[memcg as usize];
        memcg != ROOT_MEMCG && Some(memcg) != target && mc.emin >= mc.usage
    }

    /// `mem_cgroup_below_low(target, memcg)`: the same against the effective `memory.low`.
    #[inline]
    pub fn below_low(&self, target: Option<MemcgId>, memcg: MemcgId) -> bool {
        let mc = &self.list[memcg as usize];
        memcg != ROOT_MEMCG && Some(memcg) != target && mc.elow >= mc.usage
    }

    /// Compute effective protections `emin`/`elow` for a reclaim rooted at `root`
    /// (`mem_cgroup_calculate_protection`, recursive protection off): the reclaim root itself is
    /// unprotected; a child of the root gets its own `min`/`low`; deeper memcgs get their share of the
    /// parent's effective protection in proportion to their protected usage.
    pub fn calculate_protection(&mut self, root: MemcgId) {
        let mut next = self.iter_next(root, None);
        while let Some(id) = next {
            next = self.iter_next(root, Some(id));
            let (parent, usage, min, low) = {
                let m = &self.list[id as usize];
                (m.parent, m.usage, m.min, m.low)
            };
            let (emin, elow) = if id == root {
                (0, 0)
            } else if parent == Some(root) {
                (min.min(usage), low.min(usage))
            } else {
                let p = parent.expect("non-root has a parent");
                let pm = &self.list[p as usize];
                let (pemin, pelow, pusage) = (pm.emin, pm.elow, pm.usage);
                let siblings_min: u64 = pm
                    .children
                    .iter()
                    .map(|&c| self.list[c as usize].min.min(self.list[c as usize].usage))
                    .sum();
                let siblings_low: u64 = pm
                    .children
                    .iter()
                    .map(|&c| self.list[c as usize].low.min(self.list[c as usize].usage))
                    .sum();
                let eff = |own: u64, parent_eff: u64, siblings: u64| {
                    let own = own.min(usage);
                    if own == 0 || pusage == 0 {
                        0
                    } else if siblings > parent_eff && siblings > 0 {
                        own.min((parent_eff as u128 * own as u128 / siblings as u128) as u64)
                    } else {
                        own
                    }
                };
                (eff(min, pemin, siblings_min), eff(low, pelow, siblings_low))
            };
            let m = &mut self.list[id as usize];
            m.emin = emin;
            m.elow = elow;
        }
    }

    /// Hierarchical `memory.events` of `m`.
    pub fn events_hierarchical(&self, m: MemcgId) -> MemcgEvents {
        let mut e = MemcgEvents::default();
        let mut next = self.iter_next(m, None);
        while let Some(c) = next {
            e.add_all(&self.list[c as usize].events);
            next = self.iter_next(m, Some(c));
        }
        e
    }
}

impl std::ops::Index<MemcgId> for Memcgs {
    type Output = Memcg;
    fn index(&self, id: MemcgId) -> &Memcg {
        &self.list[id as usize]
    }
}

impl std::ops::IndexMut<MemcgId> for Memcgs {
    fn index_mut(&mut self, id: MemcgId) -> &mut Memcg {
        &mut self.list[id as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reap is asked for only when an offline memcg's own last page or swap entry goes: not
    /// for an online memcg that empties, not while the offline one still holds something, so
    /// that the return to user space scans nothing while no zombie can be freed.
    #[test]
    fn a_reap_is_pending_only_when_an_offline_memcg_empties() {
        let mut t = Memcgs::new(60);
        let a = t.create(ROOT_MEMCG, "a");
        t.force_charge(a, 3);
        t.swap_charge(a, 1);
        t.uncharge(a, 1);
        assert!(!t.reap_pending, "online");
        t[a].state = MemcgState::Offline;
        t.uncharge(a, 2);
        assert!(!t.reap_pending, "a swap entry still records it");
        t.swap_charge(a, -1);
        assert!(t.reap_pending);
    }

    /// A tree with one memcg `a` of `memory.max` `max` under the root, one stock slot per CPU.
    fn stocked_memcg(max: u64) -> (Memcgs, MemcgId) {
        let mut t = Memcgs::new(60);
        t.set_stock_slots(1);
        let a = t.create(ROOT_MEMCG, "a");
        t[a].max = max;
        (t, a)
    }

    /// `usage` of every memcg is what it and its descendants hold, charged or stocked.
    fn usage_adds_up(t: &Memcgs) {
        for mc in t.iter() {
            let sub: u64 = t.subtree(mc.id).iter().map(|&c| t[c].usage_local + t[c].stocked).sum();
            assert_eq!(mc.usage, sub, "memcg {}", mc.id);
        }
        t.check_stocks().unwrap();
    }

    /// `try_charge_memcg` on an empty stock charges a batch of 64 pages and keeps 63; the next
    /// 63 order-0 charges on that CPU take from the stock and leave `usage` alone; the 65th
    /// charges a batch again. Another CPU has a stock of its own.
    #[test]
    fn an_order0_charge_takes_a_batch_and_stocks_the_rest() {
        let (mut t, a) = stocked_memcg(PAGE_COUNTER_MAX);
        t.charge_pages(0, a, 1).unwrap();
        assert_eq!((t[a].usage, t[a].usage_local, t.stocked(a)), (64, 1, 63));
        for _ in 0..63 {
            t.charge_pages(0, a, 1).unwrap();
        }
        assert_eq!((t[a].usage, t[a].usage_local, t.stocked(a)), (64, 64, 0));
        t.charge_pages(0, a, 1).unwrap();
        assert_eq!((t[a].usage, t.stocked(a)), (128, 63));
        t.charge_pages(1, a, 1).unwrap();
        assert_eq!((t[a].usage, t.stocked(a)), (192, 126));
        usage_adds_up(&t);
        t.drain_all_stock(a);
        assert_eq!((t[a].usage, t[a].usage_local, t.stocked(a)), (66, 66, 0));
        usage_adds_up(&t);
    }

    /// Near the limit the batch does not fit and the page is charged alone; a 2 MiB charge
    /// never uses the stock, and the stocked pages count against it, so it fails while the
    /// pages in folios alone would leave room (the THP fault without reclaim,
    /// `GFP_TRANSHUGE_LIGHT`); after `drain_all_stock` it fits.
    #[test]
    fn stocked_pages_count_against_the_limit() {
        let (mut t, a) = stocked_memcg(560);
        t.charge_pages(0, a, 1).unwrap();
        t.charge_pages(0, a, 20).unwrap();
        assert_eq!((t[a].usage, t[a].usage_local, t.stocked(a)), (64, 21, 43));
        assert_eq!(t.charge_pages(0, a, 512), Err(OverLimit(a)));
        assert_eq!(t[a].usage, 64);
        t.drain_all_stock(ROOT_MEMCG);
        t.charge_pages(0, a, 512).unwrap();
        assert_eq!((t[a].usage, t[a].usage_local, t.stocked(a)), (533, 533, 0));
        // 67 pages of room: a batch of 64 fits
        t[a].max = 600;
        t.charge_pages(0, a, 1).unwrap();
        assert_eq!((t[a].usage, t.stocked(a)), (597, 63));
        t.drain_all_stock(a);
        // 66 pages of room: no batch, one page at a time
        t[a].max = 535;
        t.charge_pages(0, a, 1).unwrap();
        assert_eq!((t[a].usage, t.stocked(a)), (535, 0));
        assert_eq!(t.charge_pages(0, a, 1), Err(OverLimit(a)));
        usage_adds_up(&t);
    }

    /// A charge that failed and reclaimed retries without a batch: with 64 pages of room made,
    /// the retry charges its page alone and stocks nothing; a later first try batches again.
    #[test]
    fn a_retry_charges_its_pages_alone() {
        let (mut t, a) = stocked_memcg(128);
        t.force_charge(a, 128);
        assert_eq!(t.charge_pages(0, a, 1), Err(OverLimit(a)));
        t.uncharge(a, 64); // reclaim
        t.charge_pages_retry(0, a, 1).unwrap();
        assert_eq!((t[a].usage, t.stocked(a)), (65, 0));
        t.uncharge(a, 1);
        t.charge_pages(0, a, 1).unwrap();
        assert_eq!((t[a].usage, t.stocked(a)), (128, 63));
        // a retry still takes from the stock
        t.charge_pages_retry(0, a, 1).unwrap();
        assert_eq!((t[a].usage, t.stocked(a)), (128, 62));
        usage_adds_up(&t);
    }

    /// One slot per CPU (6.1, 6.12): stocking another memcg's pages drains the first's.
    /// Seven (`memcg_stock_multi`, 7.2): both stay, an eighth memcg replaces slot
    /// `drain_idx`, round robin; draining a CPU's stock for one memcg drains all its slots.
    #[test]
    fn one_slot_or_seven_per_cpu() {
        let mut t = Memcgs::new(60);
        t.set_stock_slots(1);
        let m: Vec<MemcgId> = (0..8).map(|i| t.create(ROOT_MEMCG, &format!("m{i}"))).collect();
        t.charge_pages(0, m[0], 1).unwrap();
        t.charge_pages(0, m[1], 1).unwrap();
        assert_eq!((t.stocked(m[0]), t[m[0]].usage), (0, 1));
        assert_eq!(t.stocked(m[1]), 63);
        usage_adds_up(&t);
        t.drain_all_stock(ROOT_MEMCG);
        t.set_stock_slots(NR_MEMCG_STOCK);
        for &c in &m[..7] {
            t.charge_pages(0, c, 1).unwrap();
        }
        assert!(m[..7].iter().all(|&c| t.stocked(c) == 63));
        t.charge_pages(0, m[7], 1).unwrap();
        assert_eq!((t.stocked(m[0]), t.stocked(m[1]), t.stocked(m[7])), (0, 63, 63));
        t.charge_pages(0, m[0], 1).unwrap();
        assert_eq!((t.stocked(m[0]), t.stocked(m[1])), (63, 0), "slot 1 goes next");
        usage_adds_up(&t);
        t.drain_all_stock(m[2]);
        assert!(m.iter().all(|&c| t.stocked(c) == 0), "the whole CPU's stock");
        t.charge_pages(0, m[3], 1).unwrap();
        t.set_stock_slots(1);
        usage_adds_up(&t);
    }

    /// Without a stock (`KmemConfig::charge_stock` off, the default of runs without kernel
    /// memory) a charge is exactly its pages and an uncharge returns them.
    #[test]
    fn no_stock_charges_the_pages_alone() {
        let mut t = Memcgs::new(60);
        let a = t.create(ROOT_MEMCG, "a");
        t[a].max = 10;
        t.charge_pages(0, a, 1).unwrap();
        t.charge_pages(1, a, 9).unwrap();
        assert_eq!(t.charge_pages(0, a, 1), Err(OverLimit(a)));
        t.uncharge_kmem(0, a, 4);
        assert_eq!((t[a].usage, t[a].usage_local, t.stocked(a)), (6, 6, 0));
        usage_adds_up(&t);
    }

    /// Kernel memory freed goes to the stock (`obj_cgroup_uncharge_pages` → `refill_stock`): up
    /// to a batch it stays charged; a slot past `MEMCG_CHARGE_BATCH` goes back whole. 7.2
    /// returns a refill of more than a batch at once.
    #[test]
    fn kmem_uncharges_refill_the_stock() {
        for slots in [1, NR_MEMCG_STOCK] {
            let mut t = Memcgs::new(60);
            t.set_stock_slots(slots);
            let a = t.create(ROOT_MEMCG, "a");
            t.force_charge(a, 200);
            t.uncharge_kmem(0, a, 10);
            assert_eq!((t[a].usage, t[a].usage_local, t.stocked(a)), (200, 190, 10));
            t.uncharge_kmem(0, a, 54);
            assert_eq!((t[a].usage, t.stocked(a)), (200, 64));
            t.uncharge_kmem(0, a, 1);
            assert_eq!((t[a].usage, t.stocked(a)), (135, 0));
            t.uncharge_kmem(0, a, 100);
            assert_eq!((t[a].usage, t[a].usage_local, t.stocked(a)), (35, 35, 0));
            usage_adds_up(&t);
        }
    }

    proptest::proptest! {
        /// Any mix of charges, kernel-memory uncharges, folio uncharges and drains on 3 CPUs
        /// and a small tree keeps `usage` equal to what the subtree holds, charged or stocked,
        /// each slot within a batch, and `memory.max` unbroken by `charge_pages`.
        #[test]
        fn stocks_keep_the_counts(
            multi in proptest::bool::ANY,
            ops in proptest::collection::vec((0u8..5, 0u32..3, 0usize..3, 1u64..80), 1..200),
        ) {
            let mut t = Memcgs::new(60);
            t.set_stock_slots(if multi { NR_MEMCG_STOCK } else { 1 });
            let a = t.create(ROOT_MEMCG, "a");
            let b = t.create(a, "b");
            let c = t.create(a, "c");
            t[a].max = 700;
            let ids = [a, b, c];
            for (op, cpu, who, nr) in ops {
                let m = ids[who];
                match op {
                    0 | 1 => {
                        let nr = if op == 0 { 1 } else { nr };
                        let before = t[m].usage_local;
                        match t.charge_pages(cpu, m, nr) {
                            Ok(()) => proptest::prop_assert_eq!(t[m].usage_local, before + nr),
                            Err(_) => proptest::prop_assert_eq!(t[m].usage_local, before),
                        }
                    }
                    2 => {
                        let nr = nr.min(t[m].usage_local);
                        t.uncharge_kmem(cpu, m, nr);
                    }
                    3 => {
                        let nr = nr.min(t[m].usage_local);
                        t.uncharge(m, nr);
                    }
                    _ => t.drain_all_stock(m),
                }
                proptest::prop_assert!(t[a].usage <= 700);
                usage_adds_up(&t);
            }
            t.drain_all_stock(ROOT_MEMCG);
            proptest::prop_assert!(ids.iter().all(|&m| t.stocked(m) == 0 && t[m].usage == t.subtree(m).iter().map(|&c| t[c].usage_local).sum::<u64>()));
        }
    }

    #[test]
    fn hierarchical_charge_fails_at_the_ancestor_limit() {
        let mut t = Memcgs::new(60);
        let a = t.create(ROOT_MEMCG, "a");
        let b = t.create(a, "b");
        t[a].max = 10;
        assert!(t.try_charge(b, 10).is_ok());
        assert_eq!(t.try_charge(b, 1), Err(OverLimit(a)));
        assert_eq!((t[b].usage, t[a].usage, t[ROOT_MEMCG].usage), (10, 10, 10));
        assert_eq!(t.margin(b), 0);
        t.uncharge(b, 4);
        assert_eq!(t.margin(b), 4);
        assert_eq!(t[b].path, "/a/b");
        assert_eq!(t.subtree(ROOT_MEMCG), vec![0, 1, 2]);
    }

    #[test]
    fn protection_is_capped_by_usage() {
        let mut t = Memcgs::new(60);
        let a = t.create(ROOT_MEMCG, "a");
        t[a].low = 100;
        t.force_charge(a, 40);
        t.calculate_protection(ROOT_MEMCG);
        assert_eq!(t[a].elow, 40);
        assert_eq!(t[ROOT_MEMCG].elow, 0);
    }

    proptest::proptest! {
        /// The cursor walk visits the subtree of every memcg in `subtree`'s order, whatever the
        /// shape of the tree.
        #[test]
        fn iter_next_walks_each_subtree_in_pre_order(parents in proptest::collection::vec(0usize..64, 0..40)) {
            let mut t = Memcgs::new(1 << 20);
            for (i, p) in parents.iter().enumerate() {
                // a parent among the memcgs made so far (root and the first i)
                let parent = (p % (i + 1)) as MemcgId;
                t.create(parent, &format!("m{i}"));
            }
            for root in 0..=parents.len() as MemcgId {
                let mut walked = Vec::new();
                let mut next = t.iter_next(root, None);
                while let Some(c) = next {
                    walked.push(c);
                    next = t.iter_next(root, Some(c));
                }
                proptest::prop_assert_eq!(walked, t.subtree(root));
            }
        }
    }
}

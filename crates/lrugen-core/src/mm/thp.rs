// SPDX-License-Identifier: GPL-2.0-only
//! Transparent huge pages: the `transparent_hugepage` knob and which anonymous faults may be
//! served by a PMD-sized folio (mm/huge_memory.c, include/linux/huge_mm.h, docs/thp.md).
//!
//! This is the first slice of large folios: the knob ([`Thp`], a machine setting), the VMA flags
//! `MADV_HUGEPAGE`/`MADV_NOHUGEPAGE` set (`hugepage_madvise`, `vmf::HUGEPAGE`/`vmf::NOHUGEPAGE`),
//! and the decision a fault makes ([`fault_allows_pmd`]). What is modelled and what is not yet
//! is listed in docs/thp.md.

use super::folio::{pg, FolioId, NIL};
use super::memcg::MemcgId;
use super::node::{ZoneType, WMARK_HIGH, WMARK_LOW};
use super::vm::{pmd_trans_huge, pte, vmf, MmStruct, Vma, PMD_HUGE, PMD_NONE, PTRS_PER_PTE};
use super::vmstat::Stat;
use super::Machine;

/// Order of a PMD-mapped folio (`HPAGE_PMD_ORDER`): 2 MiB of 4 KiB pages.
pub const HPAGE_PMD_ORDER: u32 = 9;
/// Pages of a PMD-mapped folio (`HPAGE_PMD_NR`).
pub const HPAGE_PMD_NR: u32 = 1 << HPAGE_PMD_ORDER;

const _: () = assert!(HPAGE_PMD_NR as usize == PTRS_PER_PTE);

/// `/sys/kernel/mm/transparent_hugepage/enabled`.
///
/// The model's default is `never`, which every run had before THP was modelled, and which the
/// kernel fixtures' guests boot with (`transparent_hugepage=never` on their command line);
/// Debian's kernels default to `always` (`CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Thp {
    /// Every anonymous mapping that can take a PMD-sized folio gets one at its first fault
    /// (`TRANSPARENT_HUGEPAGE_FLAG`), unless `MADV_NOHUGEPAGE`.
    Always,
    /// Only mappings advised `MADV_HUGEPAGE` (`TRANSPARENT_HUGEPAGE_REQ_MADV_FLAG`).
    Madvise,
    /// None (neither flag set).
    #[default]
    Never,
}

impl Thp {
    /// The knob's value as the sysfs file and the boot parameter spell it.
    pub fn name(self) -> &'static str {
        match self {
            Thp::Always => "always",
            Thp::Madvise => "madvise",
            Thp::Never => "never",
        }
    }

    /// Parse `always`, `madvise` or `never` (the words the sysfs file accepts).
    pub fn parse(s: &str) -> Option<Thp> {
        match s {
            "always" => Some(Thp::Always),
            "madvise" => Some(Thp::Madvise),
            "never" => Some(Thp::Never),
            _ => None,
        }
    }

    /// Whether it is `never` (serialised only when it is not, so that the configuration of every
    /// run made before THP existed reads back the same).
    pub fn is_never(&self) -> bool {
        *self == Thp::Never
    }

    /// The sysfs part of the VMA check (`hugepage_flags_enabled` and
    /// `hugepage_flags_always`, or `VM_HUGEPAGE`): whether a VMA with `vm_flags` may have a
    /// PMD-sized folio as far as the knob says.
    #[inline]
    pub fn enabled_for(self, vm_flags: u32) -> bool {
        match self {
            Thp::Always => true,
            Thp::Madvise => vm_flags & vmf::HUGEPAGE != 0,
            Thp::Never => false,
        }
    }
}

/// `hugepage_madvise`: the VMA flags after `MADV_HUGEPAGE` (`huge` true) or `MADV_NOHUGEPAGE`.
/// The same in 6.1, 6.12 and 7.2 (6.1 also registers the mm with khugepaged, which the model
/// does not have).
pub fn hugepage_madvise(flags: u32, huge: bool) -> u32 {
    if huge {
        (flags & !vmf::NOHUGEPAGE) | vmf::HUGEPAGE
    } else {
        (flags & !vmf::HUGEPAGE) | vmf::NOHUGEPAGE
    }
}

/// Whether an anonymous fault at `vpn` may allocate a PMD-sized folio, as far as the VMA and the
/// knob decide: `hugepage_vma_check(vma, vm_flags, false, true, true)` (6.1) or
/// `thp_vma_allowable_order(vma, vm_flags, TVA_IN_PF | TVA_ENFORCE_SYSFS, PMD_ORDER)` (6.12;
/// 7.2's `TVA_PAGEFAULT`), then `transhuge_vma_suitable` in `do_huge_pmd_anonymous_page`: not
/// `VM_NOHUGEPAGE`, enabled by the knob, anonymous, and the aligned 2 MiB range around `vpn`
/// inside the VMA. Whether a PTE table is already there (`pmd_none`) is the caller's to check.
#[inline]
pub fn fault_allows_pmd(thp: Thp, vma: &Vma, vpn: u32) -> bool {
    if vma.flags & vmf::NOHUGEPAGE != 0 || !thp.enabled_for(vma.flags) || !vma.is_anon() {
        return false;
    }
    let start = vpn & !(HPAGE_PMD_NR - 1);
    start >= vma.start && start as u64 + HPAGE_PMD_NR as u64 <= vma.end as u64
}

/// The THP events (`enum vm_event_item`'s `THP_*`) and `NR_ANON_THPS` the model counts,
/// machine-wide: a snapshot of their [`Stat`]s ([`Machine::thp_stats`]), for tests and reports.
/// `/proc/vmstat` prints them as the kernel does (`nr_anon_transparent_hugepages` in 2 MiB pages),
/// `memory.stat` its per-memcg lines (`anon_thp`, `thp_fault_alloc`, and from 6.12
/// `thp_swpout`, `thp_swpout_fallback`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThpStats {
    /// `thp_fault_alloc`.
    pub fault_alloc: u64,
    /// `thp_fault_fallback`.
    pub fault_fallback: u64,
    /// `thp_fault_fallback_charge`.
    pub fault_fallback_charge: u64,
    /// `thp_split_pmd`.
    pub split_pmd: u64,
    /// `thp_swpout`: large folios swapped out whole.
    pub swpout: u64,
    /// `thp_swpout_fallback`: large folios split because no swap cluster could take them.
    pub swpout_fallback: u64,
    /// `thp_split_page`.
    pub split_page: u64,
    /// `nr_anon_transparent_hugepages` in pages (`NR_ANON_THPS`; the file divides by 512,
    /// `memory.stat`'s `anon_thp` multiplies by the page size).
    pub nr_anon_thps: i64,
}

impl Machine {
    /// The THP counters now ([`ThpStats`]): the global events and the root's `NR_ANON_THPS`.
    pub fn thp_stats(&self) -> ThpStats {
        let e = |s: Stat| self.events.get(s) as u64;
        ThpStats {
            fault_alloc: e(Stat::ThpFaultAlloc),
            fault_fallback: e(Stat::ThpFaultFallback),
            fault_fallback_charge: e(Stat::ThpFaultFallbackCharge),
            split_pmd: e(Stat::ThpSplitPmd),
            swpout: e(Stat::ThpSwpout),
            swpout_fallback: e(Stat::ThpSwpoutFallback),
            split_page: e(Stat::ThpSplitPage),
            nr_anon_thps: (0..self.nodes.len())
                .map(|n| self.lruvec_state(super::memcg::ROOT_MEMCG, n, Stat::NrAnonThps))
                .sum(),
        }
    }
}

/// Why a PMD-sized folio could not be had: the fault falls back to order 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThpFallback {
    /// No zone had an aligned free block above its low watermark (`thp_fault_fallback`).
    Alloc,
    /// The memcg had no room for 512 pages without reclaim (`thp_fault_fallback` and
    /// `thp_fault_fallback_charge`).
    Charge,
}

/// Allocate and charge a PMD-sized anon folio on `node` (or the next nodes) for `memcg`, as
/// `vma_thp_gfp_mask` under the default `defrag` (`madvise`) asks for a VMA without
/// `MADV_HUGEPAGE`: `GFP_TRANSHUGE_LIGHT`, no reclaim, no kswapd wakeup, no compaction. A zone
/// gives a block if it stays above its low watermark after it (`zone_watermark_ok` of order 9)
/// and has an aligned free block ([`super::node::Zone::take_block`]); the charge
/// (`mem_cgroup_charge`, `try_charge_memcg` that may not block) succeeds only within
/// `memory.max`, and raises no `max` event. Counts `pgalloc_*` by 512, and on failure
/// `thp_fault_fallback` (and `_charge`). On success the folio is allocated, charged, order 9
/// (`pg::HEAD`) and in flight ([`Machine::in_flight`]); the caller makes it anon and maps it
/// ([`Machine::map_folio_pmd`]).
///
/// Not modelled yet: `MADV_HUGEPAGE` VMAs' direct reclaim and compaction (`GFP_TRANSHUGE`), the
/// other `defrag` settings, the memcg's reclaim for such a charge.
pub fn alloc_anon_thp(m: &mut Machine, node: usize, memcg: MemcgId) -> Result<FolioId, ThpFallback> {
    let nr = u64::from(HPAGE_PMD_NR);
    let mut got = None;
    'nodes: for n in crate::reclaim::vmscan::node_order(m, node).iter() {
        for zi in (0..m.nodes[n].zones.len()).rev() {
            let z = &mut m.nodes[n].zones[zi];
            // __zone_watermark_ok: free less the block's pages but one above the mark + reserve
            let above = |z: &super::node::Zone, mark: u64| z.free >= nr && z.free - (nr - 1) > mark + z.lowmem_reserve;
            // get_page_from_freelist marks a zone found at or below its high watermark
            if z.pcp.on && !z.below_high && !above(z, z.wmark(WMARK_HIGH)) {
                z.below_high = true;
            }
            if !above(z, z.wmark(WMARK_LOW)) {
                continue;
            }
            if let Some(h) = m.nodes[n].zones[zi].take_block(&mut m.folios) {
                got = Some((h, m.nodes[n].zones[zi].kind));
                break 'nodes;
            }
        }
    }
    let Some((head, kind)) = got else {
        m.count_vm_events(Stat::ThpFaultFallback, 1);
        return Err(ThpFallback::Alloc);
    };
    m.folios[head].set(pg::ALLOCATED);
    m.folios.prep_large(head, HPAGE_PMD_ORDER);
    let s = match kind {
        ZoneType::Dma => Stat::PgallocDma,
        ZoneType::Dma32 => Stat::PgallocDma32,
        ZoneType::Normal => Stat::PgallocNormal,
        ZoneType::Movable => Stat::PgallocMovable,
    };
    m.count_vm_events(s, nr);
    if m.memcgs.charge_pages(m.cpu, memcg, nr).is_err() {
        m.free_large(head);
        m.count_vm_events(Stat::ThpFaultFallback, 1);
        m.count_vm_events(Stat::ThpFaultFallbackCharge, 1);
        return Err(ThpFallback::Charge);
    }
    m.folios[head].memcg = memcg;
    m.folios[head].set(pg::CHARGED);
    m.in_flight = head;
    Ok(head)
}

impl Machine {
    /// Map the PMD-sized anon folio `head` at `haddr` (2 MiB aligned) of `mm` by one huge PMD,
    /// young, and dirty if `write` (`folio_add_new_anon_rmap` + `set_pmd_at`,
    /// `map_anon_folio_pmd` in 7.2): its rmap root and page are set, `NR_ANON_MAPPED` and the
    /// mm's rss grow by 512, `NR_ANON_THPS` by 512 pages, and the PTE table deposited for a later
    /// split is charged as a page table. No PTE table may be there.
    pub fn map_folio_pmd(&mut self, mm: u32, haddr: u32, head: FolioId, write: bool) {
        debug_assert_eq!(haddr % HPAGE_PMD_NR, 0);
        debug_assert_eq!(self.folios.nr_pages(head), HPAGE_PMD_NR);
        let pi = MmStruct::pmd_index(haddr);
        debug_assert_eq!(self.mms[mm as usize].pmds[pi], PMD_NONE, "a PTE table is there");
        let root = self.mms[mm as usize].anon_root;
        self.folios[head].set(pg::ANON | pg::SWAPBACKED);
        self.set_anon_rmap(head, root, haddr);
        self.mms[mm as usize].pmds[pi] =
            pte::PRESENT | pte::YOUNG | if write { pte::DIRTY } else { 0 } | PMD_HUGE | head;
        // the PTE table a split will need, allocated and deposited now (`pte_alloc_one`,
        // `pgtable_trans_huge_deposit`): charged as a page table from the fault on
        self.pte_table_kmem(mm, 1);
        let nr = i64::from(HPAGE_PMD_NR);
        self.mms[mm as usize].rss_anon += nr as u64;
        let f = &mut self.folios[head];
        f.mapcount += 1;
        let (memcg, node) = (f.memcg, f.node());
        if f.mapcount == 1 {
            self.mod_lruvec_state(memcg, node, Stat::NrAnonPages, nr);
            self.mod_lruvec_state(memcg, node, Stat::NrAnonThps, nr);
        }
    }

    /// Remove the huge PMD mapping `haddr` of `mm` (`zap_huge_pmd` without the freeing): the PMD
    /// becomes none, a dirty PMD dirties the folio, rss and, with the last mapping,
    /// `NR_ANON_MAPPED` and `NR_ANON_THPS` drop by 512. Returns the folio, which the caller frees
    /// or keeps.
    pub fn unmap_huge_pmd(&mut self, mm: u32, haddr: u32) -> FolioId {
        let pi = MmStruct::pmd_index(haddr);
        let pmd = self.mms[mm as usize].pmds[pi];
        debug_assert!(pmd_trans_huge(pmd));
        let head = pmd & pte::PFN_MASK;
        self.mms[mm as usize].pmds[pi] = PMD_NONE;
        // zap_deposited_table
        self.pte_table_kmem(mm, -1);
        if pmd & pte::DIRTY != 0 {
            self.folio_mark_dirty(head);
        }
        let nr = i64::from(HPAGE_PMD_NR);
        self.mms[mm as usize].rss_anon -= nr as u64;
        let f = &mut self.folios[head];
        f.mapcount -= 1;
        let (memcg, node) = (f.memcg, f.node());
        if f.mapcount == 0 {
            self.mod_lruvec_state(memcg, node, Stat::NrAnonPages, -nr);
            self.mod_lruvec_state(memcg, node, Stat::NrAnonThps, -nr);
        }
        head
    }

    /// Free a large folio that is off every list and unmapped (`free_unref_page` of order 9
    /// after `folio_undo_large_rmappable`): uncharged by its pages if charged, its frames back to
    /// their zone as one block; counts `pgfree` by its pages.
    pub fn free_large(&mut self, head: FolioId) {
        let f = self.folios[head];
        debug_assert!(f.test(pg::ALLOCATED | pg::HEAD));
        debug_assert!(!f.test(pg::LRU) && f.mapcount == 0);
        let nr = u64::from(self.folios.nr_pages(head));
        if self.folios[head].test_clear(pg::CHARGED) {
            self.memcgs.uncharge(f.memcg, nr);
        }
        self.lru_add.remove(head);
        self.lru_activate.remove(head);
        if self.in_flight == head {
            self.in_flight = NIL;
        }
        self.folios.clear_large(head);
        self.nodes[f.node()].zones[f.zone()].give_block(&mut self.folios, head);
        self.count_vm_events(Stat::Pgfree, nr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::memcg::ROOT_MEMCG;
    use crate::mm::vm::MMAP_BASE_VPN;
    use crate::mm::MachineConfig;

    fn vma(start: u32, pages: u32, flags: u32) -> Vma {
        Vma {
            start,
            end: start + pages,
            flags,
            file: 0,
            pgoff: 0,
            compressed_pct: 0,
            swap_ra: Default::default(),
            policy: crate::mm::vm::MPOL_DEFAULT,
        }
    }

    #[test]
    fn knob_words_round_trip() {
        for t in [Thp::Always, Thp::Madvise, Thp::Never] {
            assert_eq!(Thp::parse(t.name()), Some(t));
        }
        assert_eq!(Thp::parse("Always"), None);
        assert_eq!(Thp::parse("[always]"), None);
        assert_eq!(Thp::default(), Thp::Never);
    }

    #[test]
    fn madvise_flags_exclude_each_other() {
        let f = hugepage_madvise(vmf::ANON | vmf::NOHUGEPAGE, true);
        assert_eq!(f, vmf::ANON | vmf::HUGEPAGE);
        let f = hugepage_madvise(f, false);
        assert_eq!(f, vmf::ANON | vmf::NOHUGEPAGE);
    }

    #[test]
    fn knob_and_flags_decide() {
        let base = MMAP_BASE_VPN; // 2 MiB aligned
        let plain = vma(base, 1024, vmf::ANON);
        let advised = vma(base, 1024, vmf::ANON | vmf::HUGEPAGE);
        let refused = vma(base, 1024, vmf::ANON | vmf::NOHUGEPAGE);
        assert!(fault_allows_pmd(Thp::Always, &plain, base + 3));
        assert!(!fault_allows_pmd(Thp::Madvise, &plain, base + 3));
        assert!(fault_allows_pmd(Thp::Madvise, &advised, base + 700));
        assert!(!fault_allows_pmd(Thp::Always, &refused, base));
        for v in [&plain, &advised, &refused] {
            assert!(!fault_allows_pmd(Thp::Never, v, base));
        }
        let file = vma(base, 1024, vmf::HUGEPAGE);
        assert!(!fault_allows_pmd(Thp::Always, &file, base));
    }

    #[test]
    fn the_aligned_range_must_fit_in_the_vma() {
        let base = MMAP_BASE_VPN;
        // [base + 1, base + 1025): the first 2 MiB range starts before it, the second fits
        let v = vma(base + 1, 1024, vmf::ANON);
        assert!(!fault_allows_pmd(Thp::Always, &v, base + 5));
        assert!(fault_allows_pmd(Thp::Always, &v, base + 512));
        assert!(fault_allows_pmd(Thp::Always, &v, base + 1023));
        let short = vma(base + 512, 511, vmf::ANON);
        assert!(!fault_allows_pmd(Thp::Always, &short, base + 512));
    }

    /// A machine of `pages` with a memcg limited to `max` pages and an address space in it with
    /// an anon VMA of 4 MiB at `MMAP_BASE_VPN`.
    fn machine(pages: u64, max: u64) -> (Machine, MemcgId, u32) {
        let mut m = Machine::new(MachineConfig::simple(pages, 0));
        let t = m.create_memcg(ROOT_MEMCG, "t");
        m.memcgs[t].max = max;
        let mm = m.create_mm(t);
        m.mmap_fixed(mm, MMAP_BASE_VPN, 1024, vmf::ANON | vmf::WRITE, None)
            .unwrap();
        (m, t, mm)
    }

    #[test]
    fn a_pmd_sized_folio_is_allocated_charged_and_freed_whole() {
        let (mut m, t, _) = machine(8192, 4096);
        let free0 = m.nodes[0].free();
        let head = alloc_anon_thp(&mut m, 0, t).unwrap();
        assert_eq!(head % HPAGE_PMD_NR, 0);
        assert_eq!(m.folios.nr_pages(head), 512);
        assert!(m.folios[head].test(pg::ALLOCATED | pg::HEAD | pg::CHARGED));
        assert_eq!((m.folios[head].memcg, m.in_flight), (t, head));
        assert_eq!(m.memcgs[t].usage, 512);
        assert_eq!(m.nodes[0].free(), free0 - 512);
        assert_eq!(m.vmstat().get(Stat::PgallocNormal), 512);
        m.in_flight = NIL;
        m.free_large(head);
        assert_eq!((m.memcgs[t].usage, m.nodes[0].free()), (0, free0));
        assert_eq!(m.vmstat().get(Stat::Pgfree), 512);
        // the block comes back as a block
        assert_eq!(alloc_anon_thp(&mut m, 0, t), Ok(head));
    }

    #[test]
    fn no_room_in_the_memcg_or_the_zone_falls_back() {
        // 511 pages of room in the memcg: the charge fails, nothing stays allocated or charged
        let (mut m, t, _) = machine(8192, 511);
        let free0 = m.nodes[0].free();
        assert_eq!(alloc_anon_thp(&mut m, 0, t), Err(ThpFallback::Charge));
        assert_eq!((m.memcgs[t].usage, m.nodes[0].free(), m.in_flight), (0, free0, NIL));
        assert_eq!(
            (m.thp_stats().fault_fallback, m.thp_stats().fault_fallback_charge),
            (1, 1)
        );
        assert_eq!(
            m.memcgs[t].events.max, 0,
            "a charge that may not block raises no max event"
        );
        // a zone that would go below its low watermark gives no block
        let (mut m, t, _) = machine(1024, 4096);
        let low = m.nodes[0].zones[0].wmark(WMARK_LOW);
        assert!(1024 - 511 <= low + 512, "1024 pages: low watermark {low}");
        let r = alloc_anon_thp(&mut m, 0, t);
        let fits = 1024 - 511 > low;
        assert_eq!(r.is_ok(), fits);
        // fragmentation: every fresh frame handed out one by one leaves no block
        let (mut m, t, _) = machine(8192, 8192);
        let z = &mut m.nodes[0].zones[0];
        let mut taken = Vec::new();
        while let Some(id) = z.take(&mut m.folios) {
            taken.push(id);
        }
        for id in taken {
            m.nodes[0].zones[0].give(&mut m.folios, id);
        }
        assert_eq!(alloc_anon_thp(&mut m, 0, t), Err(ThpFallback::Alloc));
        assert_eq!(
            (m.thp_stats().fault_fallback, m.thp_stats().fault_fallback_charge),
            (1, 0)
        );
    }

    #[test]
    fn one_huge_pmd_maps_the_folio_with_one_young_bit() {
        let (mut m, t, mm) = machine(8192, 4096);
        let head = alloc_anon_thp(&mut m, 0, t).unwrap();
        m.in_flight = NIL;
        let haddr = MMAP_BASE_VPN + 512;
        m.map_folio_pmd(mm, haddr, head, true);
        assert_eq!(m.mms[mm as usize].rss_anon, 512);
        assert_eq!(m.lruvec_state(t, 0, Stat::NrAnonPages), 512);
        assert_eq!(m.thp_stats().nr_anon_thps, 512);
        assert_eq!(m.folios[head].index, haddr);
        // every page reads as the head, present, young and dirty; the next 2 MiB has nothing
        for vpn in [haddr, haddr + 1, haddr + 511] {
            assert_eq!(m.pte(mm, vpn), pte::PRESENT | pte::YOUNG | pte::DIRTY | head);
            assert_eq!(m.pte_or_none(mm, vpn), m.pte(mm, vpn));
        }
        assert_eq!(m.pte(mm, haddr - 1), pte::NONE);
        assert_eq!(m.ptes.live(), 0, "no PTE table");
        // the rmap walk finds it once; folio_referenced sees one reference and clears it
        let mut found = Vec::new();
        m.rmap_walk(head, |x, vpn, _| {
            found.push((x, vpn));
            true
        });
        assert_eq!(found, vec![(mm, haddr)]);
        assert_eq!(m.folio_referenced(head, None, true).ptes, 1);
        assert_eq!(m.pte(mm, haddr + 7) & pte::YOUNG, 0);
        assert_eq!(m.folio_referenced(head, None, true).ptes, 0);
        // an access anywhere in the 2 MiB sets the one young bit, as the MMU does
        *m.pte_mut(mm, haddr + 300) |= pte::YOUNG;
        assert_ne!(m.pte(mm, haddr) & pte::YOUNG, 0);
        assert_eq!(m.folio_referenced(head, None, true).ptes, 1);
        assert_eq!(m.ptes.live(), 0, "still no PTE table");
        // unmapped whole: everything back, the dirty bit to the folio
        assert_eq!(m.unmap_huge_pmd(mm, haddr), head);
        assert!(m.folios[head].test(pg::DIRTY));
        assert_eq!((m.mms[mm as usize].rss_anon, m.thp_stats().nr_anon_thps), (0, 0));
        assert_eq!(m.lruvec_state(t, 0, Stat::NrAnonPages), 0);
        assert_eq!(m.pte(mm, haddr), pte::NONE);
        m.folio_clear_dirty(head);
        m.free_large(head);
        assert_eq!(m.memcgs[t].usage, 0);
    }
}

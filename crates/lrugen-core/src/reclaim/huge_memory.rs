// SPDX-License-Identifier: GPL-2.0-only
//! Splitting a PMD-sized anon folio (mm/huge_memory.c: `__split_huge_pmd`, `__split_huge_page`):
//! the huge PMD becomes the PTE table deposited at the fault, and the folio 512 order-0 folios,
//! each on its head's LRU list next to it, or on reclaim's private list. docs/thp.md.
//!
//! The model splits the PMD and the folio together: the kernel can leave a folio PTE-mapped and
//! large (a partial unmap queues it for the deferred split shrinker; `try_to_unmap` with
//! `TTU_SPLIT_HUGE_PMD` swaps it out whole), the model has no PTE-mapped large folio yet.

use super::Policy;
use crate::mm::folio::{pg, FolioId};
use crate::mm::thp::HPAGE_PMD_NR;
use crate::mm::vm::{pmd_trans_huge, pte, MmStruct};
use crate::mm::vmstat::Stat;
use crate::mm::Machine;

/// Split the PMD-sized folio that a huge PMD of `mm` maps at `haddr`, where the kernel splits
/// the PMD alone (`__split_huge_pmd`: a partial unmap, `MADV_COLD`/`PAGEOUT` of part of it, and
/// in the model also fork, whose `copy_huge_pmd` is not modelled): the folio is split with it
/// ([`split_folio`]), after the `lru_add` batch is drained if the folio waits in it. Returns
/// false, splitting nothing, if reclaim holds the folio isolated.
pub fn split_huge_pmd<P: Policy>(m: &mut Machine, p: &mut P, mm: u32, haddr: u32) -> bool {
    let pmd = m.mms[mm as usize].pmds[MmStruct::pmd_index(haddr)];
    debug_assert!(pmd_trans_huge(pmd));
    let head = pmd & pte::PFN_MASK;
    if m.folios[head].test(pg::ISOLATED) {
        return false;
    }
    if !m.folios[head].test(pg::LRU) {
        super::lru_add_drain(m, p);
    }
    split_folio(m, p, head, None);
    m.count_vm_events(Stat::ThpSplitPage, 1);
    true
}

/// The flags a tail takes from its head when the folio is split (`__split_huge_page_tail`'s
/// copy, plus what the model keeps in `flags` besides the kernel's page flags: allocated, anon,
/// charged, isolated, MGLRU's list generation, node and zone).
const TAIL_FLAGS: u32 = !pg::HEAD;

/// `split_folio` (`split_huge_page_to_list`) of the PMD-sized anon folio `head`, with
/// `__split_huge_pmd` of its huge PMD first if mapped: afterwards `head` and its 511 tails are
/// order-0 folios, each mapped by a PTE of the table deposited at the fault (young if the PMD was,
/// the PMD's dirty bit moved to the folio and so to every page), charged, with the head's LRU
/// state. A head on an LRU list gets its tails right before it (toward the young end,
/// [`Policy::add_split_tail`]); an isolated head gets them in `list` right after position `pos`
/// (reclaim processes them next: `list_add_tail` onto the folio list that `lru_to_folio` takes
/// from), first tail first. Counts `thp_split_pmd` (`try_to_unmap`'s `TTU_SPLIT_HUGE_PMD` counts
/// it too when reclaim swaps the folio out whole) and `NR_ANON_THPS` drops; `thp_split_page` is
/// the caller's to count, as the model also splits a folio the kernel swaps out whole (which
/// counts none).
/// Sizes in pages do not move. The folio must be on a list or isolated (drain the `lru_add`
/// batch first), not in the swap cache.
pub fn split_folio<P: Policy>(m: &mut Machine, p: &mut P, head: FolioId, list: Option<(&mut Vec<FolioId>, usize)>) {
    debug_assert_eq!(m.folios.nr_pages(head), HPAGE_PMD_NR);
    let h = m.folios[head];
    debug_assert!(h.is_anon() && !h.test(pg::SWAPCACHE));
    debug_assert!(h.test(pg::LRU) != h.test(pg::ISOLATED), "split of a folio in flight");
    let haddr = h.index;
    let root = m.anon_root(head);
    // __split_huge_pmd: the PMD's mapping (at most one: fork does not share a huge PMD yet)
    let mut mapper = None;
    m.rmap_walk(head, |mm, vpn, _| {
        mapper = Some((mm, vpn));
        false
    });
    debug_assert_eq!(h.mapcount as usize, mapper.is_some() as usize);
    if let Some((mm, vpn)) = mapper {
        let pi = MmStruct::pmd_index(vpn);
        let pmd = m.mms[mm as usize].pmds[pi];
        debug_assert!(pmd_trans_huge(pmd));
        let young = pmd & pte::YOUNG != 0;
        if pmd & pte::DIRTY != 0 {
            // 6.12 on: `folio_set_dirty`; 6.1's `SetPageDirty` of the head: the tails copy it
            m.folio_mark_dirty(head);
        }
        // the deposited table (charged at the fault) replaces the PMD
        let table = m.ptes.alloc();
        m.mms[mm as usize].pmds[pi] = table | crate::mm::vm::PMD_YOUNG;
        let t = m.ptes.table_mut(table);
        for (i, e) in t.iter_mut().enumerate() {
            *e = pte::PRESENT | if young { pte::YOUNG } else { 0 } | (head + i as u32);
        }
        m.count_vm_events(Stat::ThpSplitPmd, 1);
        m.mod_lruvec_state(h.memcg, h.node(), Stat::NrAnonThps, -i64::from(HPAGE_PMD_NR));
    }
    let h = m.folios[head];
    m.folios.clear_large(head);
    for i in 1..HPAGE_PMD_NR {
        let t = head + i;
        let f = &mut m.folios[t];
        f.flags = h.flags & TAIL_FLAGS;
        f.memcg = h.memcg;
        f.mapcount = h.mapcount;
        m.set_anon_rmap(t, root, haddr + i);
    }
    if h.test(pg::LRU) {
        for i in (1..HPAGE_PMD_NR).rev() {
            p.add_split_tail(m, head, head + i);
        }
    } else if let Some((list, pos)) = list {
        list.splice(pos + 1..pos + 1, (1..HPAGE_PMD_NR).map(|i| head + i));
    } else {
        debug_assert!(false, "an isolated folio split without its list");
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! Address-space system calls: `mmap` at a fixed address, `munmap`, `madvise` and `fork`
//! (mm/mmap.c, mm/madvise.c, kernel/fork.c), and the copy-on-write fault that fork makes
//! necessary (`wp_page_copy`).
//!
//! Each returns [`Access::Minor`] so that the virtual-time engine prices the system call like a
//! minor fault; the reclaim `MADV_PAGEOUT` does runs in the task's context and is priced from
//! [`Machine::work`](crate::mm::Machine::work) on top.

use super::{Access, AccessError, Kernel};
use crate::mm::folio::{pg, FolioId, NIL};
use crate::mm::vm::{pte, vmf, Madv, MmStruct, Vma, MMAP_BASE_VPN, PMD_NONE, PMD_YOUNG, PTRS_PER_PTE};
use crate::mm::vmstat::Stat;
use crate::reclaim::alloc::{drop_anon_mapping, zap_range};
use crate::reclaim::vmscan::{clear_isolated, mark_isolated, shrink_folio_list};
use crate::reclaim::{AddCtx, Policy, Reclaimer, ScanControl, SWAP_CLUSTER_MAX};

impl<P: Policy> Kernel<P> {
    fn live(&mut self, task: u32) -> Result<(), AccessError> {
        self.check_alive(task)
    }

    /// `mmap(MAP_FIXED_NOREPLACE)` of `pages` pages at `vpn`: anonymous if `file` is `None`, else
    /// `file` from page offset `pgoff`. `flags` are `vmf::*` bits; `compressed_pct` is the zram
    /// compressibility of anon pages (0: the machine's default). Overlapping a VMA is an error.
    pub fn mmap(
        &mut self,
        task: u32,
        vpn: u32,
        pages: u32,
        flags: u32,
        file: Option<(u32, u32)>,
        compressed_pct: u8,
    ) -> Result<Access, AccessError> {
        self.live(task)?;
        self.m
            .mmap_fixed(task, vpn, pages, flags, file)
            .map_err(|e| AccessError::Fault(format!("task {task}: {e}")))?;
        let mm = &mut self.m.mms[task as usize];
        let vi = mm.find_vma(vpn).expect("the new VMA");
        mm.vmas[vi].compressed_pct = compressed_pct.min(100);
        Ok(Access::Minor)
    }

    /// `munmap` of `[vpn, vpn + pages)`: zap the pages, split or trim the VMAs at the edges,
    /// remove those inside, free the PTE tables no VMA uses any more. Unmapped holes are fine.
    pub fn munmap(&mut self, task: u32, vpn: u32, pages: u32) -> Result<Access, AccessError> {
        self.live(task)?;
        let (start, end) = range(task, vpn, pages)?;
        self.m.split_vma(task, start);
        self.m.split_vma(task, end);
        loop {
            let mm = &self.m.mms[task as usize];
            let vi = mm.vma_from(start);
            let Some(&v) = mm.vmas.get(vi).filter(|v| v.start < end) else {
                break;
            };
            zap_range(&mut self.m, &mut self.p, task, &v, v.start, v.end);
            self.m.remove_vma(task, vi);
        }
        self.m.free_unused_tables(task, start, end);
        Ok(Access::Minor)
    }

    /// `madvise` of `[vpn, vpn + pages)`, which must be mapped entirely (else `ENOMEM`);
    /// `DONTNEED`, `COLD` and `PAGEOUT` refuse `VM_LOCKED` VMAs (`EINVAL`).
    pub fn madvise(&mut self, task: u32, vpn: u32, pages: u32, advice: Madv) -> Result<Access, AccessError> {
        self.live(task)?;
        let (start, end) = range(task, vpn, pages)?;
        let vmas = self.vmas_in(task, start, end)?;
        if matches!(advice, Madv::DontNeed | Madv::Cold | Madv::PageOut) {
            if let Some(v) = vmas.iter().find(|v| v.flags & vmf::LOCKED != 0) {
                return Err(AccessError::Fault(format!(
                    "task {task}: madvise({advice:?}) of the locked VMA [{:#x}, {:#x})",
                    v.start, v.end
                )));
            }
        }
        match advice {
            Madv::Normal | Madv::Random | Madv::Sequential => {
                let set = match advice {
                    Madv::Random => vmf::RAND_READ,
                    Madv::Sequential => vmf::SEQ_READ,
                    _ => 0,
                };
                self.m.split_vma(task, start);
                self.m.split_vma(task, end);
                let mm = &mut self.m.mms[task as usize];
                let first = mm.vma_from(start);
                for v in mm.vmas[first..].iter_mut().take_while(|v| v.start < end) {
                    v.flags = (v.flags & !(vmf::SEQ_READ | vmf::RAND_READ)) | set;
                }
            }
            Madv::HugePage | Madv::NoHugePage => {
                // madvise_update_vma: the range gets VMAs of its own with the new flags
                self.m.split_vma(task, start);
                self.m.split_vma(task, end);
                let mm = &mut self.m.mms[task as usize];
                let first = mm.vma_from(start);
                for v in mm.vmas[first..].iter_mut().take_while(|v| v.start < end) {
                    v.flags = crate::mm::thp::hugepage_madvise(v.flags, advice == Madv::HugePage);
                }
            }
            Madv::DontNeed => {
                for v in &vmas {
                    zap_range(&mut self.m, &mut self.p, task, v, v.start.max(start), v.end.min(end));
                }
            }
            Madv::Cold | Madv::PageOut => {
                for v in &vmas {
                    self.cold_or_pageout(task, v.start.max(start), v.end.min(end), advice == Madv::PageOut);
                }
            }
        }
        Ok(Access::Minor)
    }

    /// `mbind(2)` of `[vpn, vpn + pages)` without flags, which must be mapped entirely (else
    /// `EFAULT`): the range gets VMAs of its own with the policy (`mbind_range`). Pages already
    /// present stay where they are; faults after it allocate on the preferred node first
    /// ([`crate::reclaim::tiering::fault_node`]). A node the machine does not have is `EINVAL`.
    /// The VMAs are not merged again when their policies match once more: the kernel's
    /// `vma_modify_policy` merges neighbours only if their `anon_vma`s are compatible, and pieces
    /// faulted under different policies got `anon_vma`s of their own (`find_mergeable_anon_vma`
    /// compares policies), which the model does not track; a Debian 6.12 guest's `numa_maps`
    /// after the placement of `lrugen kernel --numa` showed the three pieces unmerged.
    pub fn mbind(&mut self, task: u32, vpn: u32, pages: u32, node: u8) -> Result<Access, AccessError> {
        self.live(task)?;
        if node != crate::mm::vm::MPOL_DEFAULT && usize::from(node) >= self.m.nr_nodes() {
            return Err(AccessError::Fault(format!(
                "task {task}: mbind to node {node}: the machine has {} nodes",
                self.m.nr_nodes()
            )));
        }
        let (start, end) = range(task, vpn, pages)?;
        self.vmas_in(task, start, end)?;
        self.m.split_vma(task, start);
        self.m.split_vma(task, end);
        let mm = &mut self.m.mms[task as usize];
        let first = mm.vma_from(start);
        for v in mm.vmas[first..].iter_mut().take_while(|v| v.start < end) {
            v.policy = node;
        }
        Ok(Access::Minor)
    }

    /// The VMAs covering `[start, end)`, which must leave no hole.
    fn vmas_in(&self, task: u32, start: u32, end: u32) -> Result<Vec<Vma>, AccessError> {
        let mm = &self.m.mms[task as usize];
        let vmas: Vec<Vma> = mm.vmas[mm.vma_from(start)..]
            .iter()
            .take_while(|v| v.start < end)
            .copied()
            .collect();
        let mut at = start;
        for v in &vmas {
            if v.start > at {
                break;
            }
            at = v.end;
        }
        if at < end {
            return Err(AccessError::Fault(format!(
                "task {task}: madvise of [{start:#x}, {end:#x}) includes the unmapped page {at:#x}"
            )));
        }
        Ok(vmas)
    }

    /// `madvise_cold_or_pageout_pte_range` over `[start, end)` of one VMA, one PTE table at a time:
    /// folios on an LRU list that only this process maps lose their references (and, unless
    /// PAGEOUT with `pageout_ignore_references` (6.9), their PTE accessed bits); COLD deactivates them, PAGEOUT isolates them and hands
    /// each table's batch to `reclaim_pages`.
    fn cold_or_pageout(&mut self, task: u32, start: u32, end: u32, pageout: bool) {
        let legacy = !self.p.switches().pageout_ignore_references;
        let mut list: Vec<FolioId> = Vec::new();
        for pi in MmStruct::pmd_index(start)..=MmStruct::pmd_index(end - 1) {
            let mut pmd = self.m.mms[task as usize].pmds[pi];
            if !crate::mm::vm::pmd_is_table(pmd) {
                if pmd == PMD_NONE {
                    continue;
                }
                // madvise_cold_or_pageout_pte_range's huge PMD: the model splits it and goes on
                // page by page (the kernel handles a PMD wholly in the range as one folio)
                let haddr = MMAP_BASE_VPN + (pi * PTRS_PER_PTE) as u32;
                if !crate::reclaim::huge_memory::split_huge_pmd(&mut self.m, &mut self.p, task, haddr) {
                    continue;
                }
                pmd = self.m.mms[task as usize].pmds[pi];
            }
            let table = pmd & !PMD_YOUNG;
            let base = MMAP_BASE_VPN + (pi * PTRS_PER_PTE) as u32;
            let (s, e) = (start.max(base), end.min(base + PTRS_PER_PTE as u32));
            self.m.count_ptes((e - s) as u64);
            for vpn in s..e {
                let i = (vpn - base) as usize;
                let x = self.m.ptes.table(table)[i];
                if x & pte::PRESENT == 0 {
                    continue; // none, swap entries and the zero page
                }
                let id = x & pte::PFN_MASK;
                let f = self.m.folios[id];
                if !f.test(pg::LRU) || f.mapcount != 1 {
                    continue;
                }
                if (!pageout || legacy) && x & pte::YOUNG != 0 {
                    self.m.ptes.table_mut(table)[i] &= !pte::YOUNG;
                }
                self.m.folios[id].clear(pg::REFERENCED);
                if !legacy && f.test(pg::ACTIVE) {
                    self.m.folios[id].set(pg::WORKINGSET);
                }
                if !pageout {
                    self.p.deactivate(&mut self.m, id);
                } else if !f.test(pg::UNEVICTABLE) {
                    // folio_isolate_lru (an unevictable one would be put straight back)
                    self.p.del_folio(&mut self.m, id);
                    mark_isolated(&mut self.m, id);
                    list.push(id);
                }
            }
            if !list.is_empty() {
                self.reclaim_pages(&mut list, !legacy);
            }
        }
    }

    /// `reclaim_pages`: run isolated folios through `shrink_folio_list`, one node at a time, and
    /// put the survivors back (`folio_putback_lru`). Counts what `shrink_folio_list` counts
    /// (swap-outs, `pgactivate`), not `pgscan`/`pgsteal`, which only the LRU scanners count.
    fn reclaim_pages(&mut self, list: &mut Vec<FolioId>, ignore_references: bool) {
        let mut rest = std::mem::take(list);
        while !rest.is_empty() {
            let nid = self.m.folios[rest[0]].node();
            let split = rest
                .iter()
                .position(|&id| self.m.folios[id].node() != nid)
                .unwrap_or(rest.len());
            let mut batch: Vec<FolioId> = rest.drain(..split).collect();
            for &id in &batch {
                self.m.folios[id].clear(pg::ACTIVE);
            }
            let zones = self.m.nodes[nid].zones.len() - 1;
            let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Direct, None, zones);
            // reclaim_folio_list: MADV_PAGEOUT reclaims, it does not demote
            sc.no_demotion = true;
            shrink_folio_list(&mut self.m, &mut self.p, &mut batch, &mut sc, ignore_references);
            for id in batch {
                clear_isolated(&mut self.m, id);
                self.p.add_folio(&mut self.m, id);
            }
        }
    }

    /// `fork`: `child` (reserved with [`crate::mm::Machine::reserve_mm`]) becomes a copy of
    /// `task`'s address space in its memcg (see [`crate::mm::Machine::fork_mm`]) and joins the
    /// MGLRU mm list (`lru_gen_add_mm`).
    pub fn fork(&mut self, task: u32, child: u32) -> Result<Access, AccessError> {
        self.live(task)?;
        if child as usize >= self.m.mms.len() || !self.m.mms[child as usize].unborn {
            return Err(AccessError::Fault(format!(
                "task {task}: fork into task {child}, which is not a reserved, unborn address space"
            )));
        }
        // copy_huge_pmd (the child shares the PMD-sized folio) is not modelled: the parent's
        // huge PMDs are split first, and their pages shared as order-0 pages (docs/thp.md)
        let huge: Vec<u32> = self.m.mms[task as usize]
            .pmds
            .iter()
            .enumerate()
            .filter(|&(_, &pmd)| crate::mm::vm::pmd_trans_huge(pmd))
            .map(|(pi, _)| MMAP_BASE_VPN + (pi * PTRS_PER_PTE) as u32)
            .collect();
        for haddr in huge {
            crate::reclaim::huge_memory::split_huge_pmd(&mut self.m, &mut self.p, task, haddr);
        }
        self.m.fork_mm(task, child);
        self.p.mm_created(&self.m, child);
        Ok(Access::Minor)
    }

    /// Whether a store to the present anon folio `id` must copy it (`wp_can_reuse_anon_folio`
    /// fails): another PTE maps it, or a swap entry still refers to its swap-cache copy.
    pub(super) fn cow_needed(&self, id: FolioId) -> bool {
        let f = &self.m.folios[id];
        f.is_anon() && (f.mapcount > 1 || (f.test(pg::SWAPCACHE) && self.m.swap.count(f.swap_slot()) > 0))
    }

    /// `wp_page_copy`: a store by `task` at `vpn` to the shared anon folio `old`: allocate and
    /// charge a new folio, map it in place of `old` (which loses this mapping) and add it to the
    /// LRU. A minor fault; `count` false when called from inside another fault (`do_swap_page`).
    pub(super) fn wp_page_copy(
        &mut self,
        task: u32,
        vpn: u32,
        old: FolioId,
        count: bool,
    ) -> Result<Access, AccessError> {
        let memcg = self.m.mms[task as usize].memcg;
        if count {
            self.m.count_events(memcg, Stat::Pgfault, 1);
        }
        let vma = {
            let mm = &self.m.mms[task as usize];
            mm.vmas[mm.find_vma(vpn).expect("a present PTE lies in a VMA")]
        };
        let id = self.new_folio(0, memcg)?;
        let gone = !self.m.mms[task as usize].alive;
        if gone || self.m.pte(task, vpn) & (pte::PRESENT | pte::PFN_MASK) != pte::PRESENT | old {
            // killed, or reclaim changed the PTE while we allocated: drop the copy
            self.m.in_flight = NIL;
            self.m.uncharge(id);
            self.m.free_frame(id);
            if gone {
                return Err(AccessError::Killed(task));
            }
            return self.access(task, vpn, true);
        }
        {
            let root = self.m.mms[task as usize].anon_root;
            self.m.folios[id].set(pg::ANON | pg::SWAPBACKED);
            self.m.set_anon_rmap(id, root, vpn);
        }
        *self.m.pte_mut(task, vpn) = pte::NONE;
        self.m.mms[task as usize].rss_anon -= 1;
        drop_anon_mapping(&mut self.m, &mut self.p, old);
        self.m.map_folio(task, vpn, id, true);
        self.add_lru(
            id,
            AddCtx {
                in_fault: vma.has_recency(),
                readahead: false,
            },
        );
        if vma.flags & vmf::LOCKED != 0 {
            self.mlock_vpn(task, vpn);
        }
        if count {
            self.return_to_user();
        }
        Ok(Access::Minor)
    }
}

/// `[vpn, vpn + pages)` as a checked range.
fn range(task: u32, vpn: u32, pages: u32) -> Result<(u32, u32), AccessError> {
    let end = vpn as u64 + pages as u64;
    if pages == 0 || vpn < MMAP_BASE_VPN || end > crate::mm::vm::MAX_VPN as u64 {
        return Err(AccessError::Fault(format!(
            "task {task}: bad range of {pages} pages at {vpn:#x}"
        )));
    }
    Ok((vpn, end as u32))
}

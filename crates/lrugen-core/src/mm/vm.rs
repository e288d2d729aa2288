// SPDX-License-Identifier: GPL-2.0-only
//! Address spaces: VMAs and two-level page tables with hardware accessed and dirty bits.
//!
//! Each `MmStruct` (a process's `mm_struct`) holds its VMAs and a dense PMD array covering the
//! address range it has mapped; a PMD entry points to a PTE table of 512 entries (one 2 MiB
//! region), and carries its own accessed bit (the non-leaf PMD accessed bit, set by the hardware on
//! every walk through it on x86). A PTE is a `u32`: present (folio id, accessed, dirty), a swap
//! entry, or none. The simulated MMU sets the accessed bit on every load and store and the dirty
//! bit on stores, exactly what MGLRU's page-table walk and rmap look-around later read and clear.
//!
//! Addresses are handed out by a bump allocator from `MMAP_BASE`, 2 MiB aligned, or chosen by the
//! caller (`MAP_FIXED_NOREPLACE`); the PMD array grows to cover the highest mapping, so it stays
//! dense. Virtual page numbers fit in 32 bits (16 TiB of address space per mm).
//!
//! Anonymous memory of a fork family shares one reverse-map root (the kernel's root `anon_vma`):
//! an anon folio's `mapping` is the root mm id and its `index` the virtual page, which fork keeps,
//! so the rmap walk visits every family member whose PTE at that page maps the folio.

use super::memcg::MemcgId;

/// PTEs per PTE table (`PTRS_PER_PTE`).
pub const PTRS_PER_PTE: usize = 512;
/// First mmap address, in pages.
pub const MMAP_BASE_VPN: u32 = 0x1000_0000 >> 12;

/// One past the highest virtual page a mapping may use (keeps the dense PMD array of one mm
/// within 4 Mi entries, i.e. 16 MiB).
pub const MAX_VPN: u32 = MMAP_BASE_VPN + (1 << 31);

/// PTE bits.
pub mod pte {
    /// Present: low bits are a folio id.
    pub const PRESENT: u32 = 1 << 31;
    /// Accessed ("young").
    pub const YOUNG: u32 = 1 << 30;
    /// Dirty.
    pub const DIRTY: u32 = 1 << 29;
    /// Not present, holds a swap slot in the low bits.
    pub const SWAP: u32 = 1 << 28;
    /// Maps the shared zero page (a read fault on untouched anon memory).
    pub const ZERO: u32 = 1 << 27;
    /// With [`PRESENT`]: made PROT_NONE by NUMA balancing's scan (`change_prot_numa`): the folio
    /// stays mapped, and the next access is a hint fault (`do_numa_page`). The bit is
    /// [`ZERO`]'s, which only a PTE without [`PRESENT`] uses.
    pub const PROTNONE: u32 = 1 << 27;
    /// Folio id or swap slot.
    pub const PFN_MASK: u32 = (1 << 27) - 1;
    /// No mapping.
    pub const NONE: u32 = 0;
}

/// PMD entry bit: the non-leaf accessed bit.
pub const PMD_YOUNG: u32 = 1 << 31;
/// PMD entry: no PTE table.
pub const PMD_NONE: u32 = u32::MAX;
/// PMD entry bit: a leaf mapping a PMD-sized folio (`pmd_trans_huge`). Such an entry is laid
/// out as a PTE (`pte::PRESENT`, `pte::YOUNG`, `pte::DIRTY`, the head folio's id) with this bit,
/// which a PTE table's index (below 2^28) never has; [`PMD_NONE`] has it too, so one test tells
/// a PTE table from both (`pmd_is_table`), and the huge case is resolved behind it.
pub const PMD_HUGE: u32 = 1 << 28;

/// Whether a PMD entry points to a PTE table (not [`PMD_NONE`], not a huge PMD).
#[inline]
pub fn pmd_is_table(pmd: u32) -> bool {
    pmd & PMD_HUGE == 0
}

/// Whether a PMD entry maps a PMD-sized folio (`pmd_trans_huge`).
#[inline]
pub fn pmd_trans_huge(pmd: u32) -> bool {
    pmd & PMD_HUGE != 0 && pmd != PMD_NONE
}

/// The PTE that every page of a PMD entry's range reads as, for an entry that is not a table:
/// `pte::NONE` for [`PMD_NONE`], else the huge PMD's present, young and dirty bits and its folio.
#[inline]
pub fn pmd_leaf_pte(pmd: u32) -> u32 {
    if pmd == PMD_NONE {
        pte::NONE
    } else {
        pmd & !PMD_HUGE
    }
}

/// VMA flags.
pub mod vmf {
    /// Anonymous mapping.
    pub const ANON: u32 = 1 << 0;
    /// `VM_SEQ_READ` (MADV_SEQUENTIAL).
    pub const SEQ_READ: u32 = 1 << 1;
    /// `VM_RAND_READ` (MADV_RANDOM).
    pub const RAND_READ: u32 = 1 << 2;
    /// `VM_LOCKED` (mlock).
    pub const LOCKED: u32 = 1 << 3;
    /// `VM_EXEC`.
    pub const EXEC: u32 = 1 << 4;
    /// `VM_WRITE`.
    pub const WRITE: u32 = 1 << 5;
    /// `VM_HUGEPAGE` (MADV_HUGEPAGE): THP under `transparent_hugepage=madvise`.
    pub const HUGEPAGE: u32 = 1 << 6;
    /// `VM_NOHUGEPAGE` (MADV_NOHUGEPAGE): never THP.
    pub const NOHUGEPAGE: u32 = 1 << 7;
}

/// `madvise` advice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
#[serde(rename_all = "kebab-case")]
pub enum Madv {
    /// `MADV_NORMAL`: clear `VM_SEQ_READ`/`VM_RAND_READ`.
    Normal,
    /// `MADV_RANDOM`: set `VM_RAND_READ`.
    Random,
    /// `MADV_SEQUENTIAL`: set `VM_SEQ_READ`.
    Sequential,
    /// `MADV_DONTNEED`: zap the range, keep the VMAs (anon reads back as zeroes).
    DontNeed,
    /// `MADV_COLD`: deactivate the pages only this process maps.
    Cold,
    /// `MADV_PAGEOUT`: reclaim the pages only this process maps.
    PageOut,
    /// `MADV_HUGEPAGE`: set `VM_HUGEPAGE`, clear `VM_NOHUGEPAGE` (`hugepage_madvise`).
    #[serde(rename = "hugepage")]
    HugePage,
    /// `MADV_NOHUGEPAGE`: set `VM_NOHUGEPAGE`, clear `VM_HUGEPAGE`.
    #[serde(rename = "nohugepage")]
    NoHugePage,
}

/// A virtual memory area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vma {
    /// First virtual page.
    pub start: u32,
    /// One past the last virtual page.
    pub end: u32,
    /// `vmf::*` flags.
    pub flags: u32,
    /// Backing file (file mappings).
    pub file: u32,
    /// File page offset of `start`.
    pub pgoff: u32,
    /// Size of its pages once compressed by zram, in percent of a page (e.g. 33 for data that
    /// compresses 3:1, 100 for incompressible data); 0 = the machine's default.
    pub compressed_pct: u8,
    /// `swap_readahead_info`: the VMA-based swap read-ahead's state.
    pub swap_ra: super::swap::VmaRa,
    /// Its NUMA memory policy (`vma->vm_policy`, set by `mbind(2)`): `MPOL_PREFERRED` of this
    /// node, or [`MPOL_DEFAULT`] (the task's policy: the local node first, then the fallback
    /// order).
    pub policy: u8,
}

/// [`Vma::policy`] of a VMA without a policy of its own (`MPOL_DEFAULT`).
pub const MPOL_DEFAULT: u8 = u8::MAX;

impl Vma {
    /// Whether it is anonymous.
    pub fn is_anon(&self) -> bool {
        self.flags & vmf::ANON != 0
    }
    /// `vma_has_recency`: false for `VM_SEQ_READ`/`VM_RAND_READ`.
    pub fn has_recency(&self) -> bool {
        self.flags & (vmf::SEQ_READ | vmf::RAND_READ) == 0
    }
    /// Number of pages.
    pub fn pages(&self) -> u32 {
        self.end - self.start
    }
}

/// A process address space (`mm_struct`).
#[derive(Clone, Debug)]
pub struct MmStruct {
    /// Its id.
    pub id: u32,
    /// Memcg of its owner (new anon pages are charged here).
    pub memcg: MemcgId,
    /// The memcg its kernel memory (the `mm_struct`'s slab and other pages, its page tables) is
    /// charged to: where it was created (a move to another memcg leaves the charges where they
    /// were), or that memcg's parent once it is removed (`memcg_reparent_objcgs`).
    pub kmem_memcg: MemcgId,
    /// VMAs, sorted by start, never overlapping.
    pub vmas: Vec<Vma>,
    /// PMD entries from `MMAP_BASE_VPN`, one per 2 MiB: PTE table index | `PMD_YOUNG`, or `PMD_NONE`.
    pub pmds: Vec<u32>,
    /// Next free virtual page for mmap.
    pub next_vpn: u32,
    /// Resident anon pages (`MM_ANONPAGES`).
    pub rss_anon: u64,
    /// Resident file pages (`MM_FILEPAGES`).
    pub rss_file: u64,
    /// Swap entries (`MM_SWAPENTS`).
    pub swap_ents: u64,
    /// False once the process exited or was OOM-killed.
    pub alive: bool,
    /// MGLRU: per-node "used since the last walk" bitmap (`mm->lru_gen.bitmap`).
    pub lru_gen_bitmap: u64,
    /// Reserved for a child not forked yet (`alive` is false until the fork).
    pub unborn: bool,
    /// Its process was forked inside its memcg (a child of `fork`, a task of a multi-task
    /// replay): the task's kernel stack and slab ([`crate::mm::KmemConfig::task_stack_pages`],
    /// [`crate::mm::KmemConfig::task_slab_bytes`]) are charged there with its other kernel memory.
    /// A process started outside (the replayer of one task, which the guest's `/init` forks before
    /// moving it into the memcg) has them charged elsewhere.
    pub forked_in_memcg: bool,
    /// The page tables charged for it besides the PTE tables of its mappings (PMD tables and
    /// the rest, PUD tables, PGD; [`crate::mm::KmemConfig`]), as charged when it was created or
    /// forked or later set ([`crate::mm::Machine::set_mm_pgtables`]): what its exit uncharges.
    pub pgtables: [u64; 3],
    /// Root of its fork family's anon reverse map (its own id unless forked).
    pub anon_root: u32,
    /// On a family root: the live members (itself included while it lives), in fork order.
    pub anon_family: Vec<u32>,
}

impl MmStruct {
    /// Index of the VMA containing `vpn`.
    pub fn find_vma(&self, vpn: u32) -> Option<usize> {
        let i = self.vmas.partition_point(|v| v.end <= vpn);
        (i < self.vmas.len() && self.vmas[i].start <= vpn).then_some(i)
    }
    /// Index of the first VMA ending after `vpn` (the VMA containing it, or the next one).
    pub fn vma_from(&self, vpn: u32) -> usize {
        self.vmas.partition_point(|v| v.end <= vpn)
    }
    /// PMD slot of `vpn`.
    #[inline]
    pub fn pmd_index(vpn: u32) -> usize {
        ((vpn - MMAP_BASE_VPN) as usize) / PTRS_PER_PTE
    }
    /// PMD slot of `vpn` if this mm's page tables cover it.
    #[inline]
    pub fn pmd_index_checked(&self, vpn: u32) -> Option<usize> {
        if vpn < MMAP_BASE_VPN {
            return None;
        }
        let i = Self::pmd_index(vpn);
        (i < self.pmds.len()).then_some(i)
    }
}

/// All PTE tables of all address spaces.
#[derive(Clone, Debug, Default)]
pub struct PteTables {
    tables: Vec<[u32; PTRS_PER_PTE]>,
    free: Vec<u32>,
}

impl PteTables {
    /// Allocate an empty PTE table.
    pub fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            self.tables[i as usize] = [pte::NONE; PTRS_PER_PTE];
            i
        } else {
            self.tables.push([pte::NONE; PTRS_PER_PTE]);
            debug_assert!(self.tables.len() <= PMD_HUGE as usize, "PTE table index past PMD_HUGE");
            (self.tables.len() - 1) as u32
        }
    }
    /// Free a PTE table.
    pub fn free(&mut self, i: u32) {
        self.free.push(i);
    }
    /// The PTE table `i`.
    #[inline]
    pub fn table(&self, i: u32) -> &[u32; PTRS_PER_PTE] {
        &self.tables[i as usize]
    }
    /// The PTE table `i`, if it exists.
    #[inline]
    pub fn get(&self, i: u32) -> Option<&[u32; PTRS_PER_PTE]> {
        self.tables.get(i as usize)
    }
    /// The PTE table `i`, mutably.
    #[inline]
    pub fn table_mut(&mut self, i: u32) -> &mut [u32; PTRS_PER_PTE] {
        &mut self.tables[i as usize]
    }
    /// Number of live PTE tables (`nr_page_table_pages`).
    pub fn live(&self) -> usize {
        self.tables.len() - self.free.len()
    }
    /// Bytes held by the tables (live or free for reuse).
    pub fn bytes(&self) -> u64 {
        (self.tables.capacity() * PTRS_PER_PTE * 4 + self.free.capacity() * 4) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_vma_by_page() {
        let mm = MmStruct {
            id: 0,
            memcg: 0,
            kmem_memcg: 0,
            forked_in_memcg: false,
            vmas: vec![
                Vma {
                    start: 10,
                    end: 20,
                    flags: vmf::ANON,
                    file: 0,
                    pgoff: 0,
                    compressed_pct: 0,
                    swap_ra: Default::default(),
                    policy: MPOL_DEFAULT,
                },
                Vma {
                    start: 30,
                    end: 31,
                    flags: vmf::ANON,
                    file: 0,
                    pgoff: 0,
                    compressed_pct: 0,
                    swap_ra: Default::default(),
                    policy: MPOL_DEFAULT,
                },
            ],
            pmds: vec![],
            pgtables: [0; 3],
            next_vpn: 0,
            rss_anon: 0,
            rss_file: 0,
            swap_ents: 0,
            alive: true,
            lru_gen_bitmap: 0,
            unborn: false,
            anon_root: 0,
            anon_family: vec![0],
        };
        assert_eq!(mm.find_vma(9), None);
        assert_eq!(mm.find_vma(10), Some(0));
        assert_eq!(mm.find_vma(19), Some(0));
        assert_eq!(mm.find_vma(20), None);
        assert_eq!(mm.find_vma(30), Some(1));
        assert_eq!(mm.find_vma(31), None);
    }
}

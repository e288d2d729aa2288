// SPDX-License-Identifier: GPL-2.0-only
//! The simulated machine: the kernel's substrate that every reclaim policy runs on.
//!
//! [`Machine`] owns the folio table, nodes and zones, memcgs, files and their page cache, address
//! spaces with page tables, the swap device, and the counters. It knows how to allocate and free a
//! page frame, charge it, insert it into the page cache or swap cache, map and unmap it, and walk
//! the reverse map. It never decides what to evict: that is `reclaim`'s job.

pub mod device;
pub mod folio;
pub mod ftrace;
pub mod memcg;
pub mod memory_stat;
pub mod node;
pub mod pagecache;
pub mod rstat;
pub mod swap;
pub mod thp;
pub mod tiers;
pub mod vm;
pub mod vmstat;
pub mod zram;

use folio::{pg, FolioId, Folios, ANON, FILE};
use memcg::{MemcgId, Memcgs, ROOT_MEMCG};
use node::{Node, Zone, ZoneType};
use pagecache::{Advice, File, Slot};
use swap::Swap;
use vm::{
    pmd_is_table, pmd_leaf_pte, pte, MmStruct, PteTables, Vma, MAX_VPN, MMAP_BASE_VPN, PMD_HUGE, PMD_NONE, PMD_YOUNG,
    PTRS_PER_PTE,
};
use vmstat::{Counters, Stat};

/// Page size in bytes.
pub const PAGE_SIZE: u64 = 4096;
/// Timer frequency (`CONFIG_HZ`; Debian's x86-64 kernels use 250).
pub const HZ: u64 = 250;

/// The kernel's `enum lru_list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lru {
    /// `LRU_INACTIVE_ANON`
    InactiveAnon = 0,
    /// `LRU_ACTIVE_ANON`
    ActiveAnon = 1,
    /// `LRU_INACTIVE_FILE`
    InactiveFile = 2,
    /// `LRU_ACTIVE_FILE`
    ActiveFile = 3,
    /// `LRU_UNEVICTABLE`
    Unevictable = 4,
}

impl Lru {
    /// The list for a type and activity.
    pub fn of(lru_type: usize, active: bool) -> Lru {
        match (lru_type, active) {
            (ANON, false) => Lru::InactiveAnon,
            (ANON, true) => Lru::ActiveAnon,
            (_, false) => Lru::InactiveFile,
            (_, true) => Lru::ActiveFile,
        }
    }
    /// All evictable lists (`for_each_evictable_lru`).
    pub const EVICTABLE: [Lru; 4] = [Lru::InactiveAnon, Lru::ActiveAnon, Lru::InactiveFile, Lru::ActiveFile];
    /// Whether an active list.
    pub fn is_active(self) -> bool {
        matches!(self, Lru::ActiveAnon | Lru::ActiveFile)
    }
    /// Whether a file list.
    pub fn is_file(self) -> bool {
        matches!(self, Lru::InactiveFile | Lru::ActiveFile)
    }
    fn node_stat(self) -> Stat {
        [
            Stat::NrInactiveAnon,
            Stat::NrActiveAnon,
            Stat::NrInactiveFile,
            Stat::NrActiveFile,
            Stat::NrUnevictable,
        ][self as usize]
    }
    fn zone_stat(self) -> Stat {
        [
            Stat::NrZoneInactiveAnon,
            Stat::NrZoneActiveAnon,
            Stat::NrZoneInactiveFile,
            Stat::NrZoneActiveFile,
            Stat::NrZoneUnevictable,
        ][self as usize]
    }
}

/// Description of the machine to build.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct MachineConfig {
    /// Per node, its zones and their managed pages.
    pub nodes: Vec<Vec<(ZoneType, u64)>>,
    /// Swap device size in pages (0: no swap).
    pub swap_pages: u64,
    /// `vm.swappiness` (0..=200).
    pub swappiness: u32,
    /// `vm.min_free_kbytes` override.
    pub min_free_kbytes: Option<u64>,
    /// `vm.watermark_scale_factor` (default 10).
    pub watermark_scale_factor: u64,
    /// Default read-ahead window in pages (`read_ahead_kb / 4`, default 32).
    pub ra_pages: u64,
    /// Run kswapd when woken (synchronously, before the allocation retries). Off: direct reclaim
    /// only.
    #[serde(default = "yes")]
    pub kswapd: bool,
    /// The swap device is zram with this default compression ratio (uncompressed : compressed):
    /// compressed pages take memory from the node (the zram pool), as on a real machine.
    #[serde(default)]
    pub zram_ratio: Option<f64>,
    /// `vm.page-cluster`: swap read-ahead reads up to `2^page_cluster` pages around a swap
    /// fault on a device that is not `SWP_SYNCHRONOUS_IO` (0..=31; the kernel's default 3;
    /// 0: one page per fault). `kernel::swapin_readahead`, docs/swap-devices.md.
    #[serde(default = "page_cluster_default")]
    pub page_cluster: u32,
    /// The swap device is `SWP_SYNCHRONOUS_IO` (`bdev_synchronous`: zram, brd, pmem): a fault on
    /// a slot one PTE references reads it around the swap cache, with no read-ahead. zram
    /// (`zram_ratio`) is synchronous whatever this says.
    #[serde(default)]
    pub swap_synchronous: bool,
    /// The swap device is rotational (not `bdev_nonrot`): `swapon` counts it in
    /// `nr_rotate_swap`, which turns VMA-based swap read-ahead off for every device, leaving the
    /// read-ahead of an aligned cluster of swap offsets (`swap_cluster_readahead`).
    #[serde(default)]
    pub swap_rotational: bool,
    /// What each step costs on the clock when no virtual-time engine prices it.
    #[serde(default)]
    pub clock: StepClock,
    /// The kernel memory charged to memcgs besides their pages.
    #[serde(default)]
    pub kmem: KmemConfig,
    /// Memory tiers, demotion and NUMA balancing in memory-tiering mode (`[machine.tiers]`;
    /// `None`: one tier, every page on node 0; docs/memory-tiers.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiers: Option<tiers::TierConfig>,
    /// Each zone keeps its `lowmem_reserve` (`setup_per_zone_lowmem_reserve`, the default
    /// `sysctl_lowmem_reserve_ratio`) out of reach of the model's allocations, whose highest zone is
    /// the node's highest: a lower zone (DMA under DMA32) is used only down to its watermark plus
    /// its reserve, and counts as balanced for kswapd only above them (as on an x86 machine,
    /// [`node::x86_zones`]). Off: no reserve (a machine of one zone has none anyway).
    #[serde(default)]
    pub lowmem_reserve: bool,
    /// Per node, per zone, how the zone starts ([`node::ZoneBoot`]: pages the kernel already used,
    /// the watermarks and reserve it computed at boot); empty: every zone starts empty, its
    /// watermarks and reserve computed here. Given, it has one entry per zone of [`Self::nodes`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zone_boot: Vec<Vec<node::ZoneBoot>>,
    /// kswapd goes to sleep as `kswapd_try_to_sleep` does (without the engine): after a
    /// `balance_pgdat` that left the node balanced, a short sleep of `HZ/10` of virtual time; a
    /// wakeup within it counts `kswapd_low_wmark_hit_quickly`; at its end a node below its high
    /// watermark again counts `kswapd_high_wmark_hit_quickly` and kswapd reclaims at once
    /// (checked at the next allocation); a node left unbalanced counts
    /// `kswapd_high_wmark_hit_quickly` and kswapd runs again. Off: kswapd runs only when woken.
    #[serde(default)]
    pub kswapd_sleep: bool,
    /// The scheduler's slice (ns) on the one CPU that kswapd shares with the running task,
    /// without the engine, on kernels whose profile has `eevdf_run_to_parity` (6.6 on): a
    /// kswapd woken while the task has had less than this much time since it got the CPU does
    /// not run before the task has had it (then at the start of the next operation: the tick
    /// preempts user space too), or until the task waits for a read (a page-cache miss's own
    /// page, a swap-in from a device that is not synchronous; asynchronous read-ahead does not
    /// wait), whichever comes first; meanwhile the task allocates down to the min watermark and
    /// reclaims directly. The
    /// kernel's `base_slice_ns` is 0.75 ms on one CPU. 0 (the default, as the model's default
    /// clock is not a machine's): kswapd runs inside the allocation that wakes it, as a wakeup
    /// preemption at once would have it (6.1's CFS). The kernel comparisons give the guest's
    /// (`lrugen_kernel::model::config`). The engine has its own
    /// ([`crate::sim::engine::EngineConfig::sched_slice_ns`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sched_slice_ns: u64,
    /// `/sys/kernel/mm/transparent_hugepage/enabled` (`[machine] thp`, `lrugen run --thp`):
    /// default `never`, as every run had it before THP was modelled; docs/thp.md.
    #[serde(default, skip_serializing_if = "thp::Thp::is_never")]
    pub thp: thp::Thp,
}

/// Whether a `u64` setting is at its default of 0 (serde: left out of the output).
fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The kernel memory a memcg is charged for besides its anon and file pages (`memory.stat`
/// `kernel`, `pagetables`, `slab`): with it, `memory.max` holds what it holds in the kernel,
/// without an "effective capacity" worked out by hand. Each part is a switch; sizes are x86-64's.
///
/// Charged where it is allocated, without reclaim (the kernel's `__GFP_ACCOUNT` allocations
/// reclaim in `try_charge_memcg` first): a page charge later in the same operation reclaims the
/// excess, or [`crate::reclaim::alloc::reclaim_kmem_excess`] at its end. It takes no page frames
/// from the zones, so it counts against `memory.max` but not against the node's free memory
/// (the kernel's does: global reclaim sees these pages as used).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KmemConfig {
    /// Page tables (`GFP_PGTABLE_USER`, charged to the mm's memcg; `pagetables`): each PTE table
    /// as the model allocates and frees it, and [`Self::mm_pgtable_pages`] per address space.
    pub page_tables: bool,
    /// Page tables of an address space besides the PTE tables of its mappings that every kernel
    /// counts in `pagetables`: the PMD tables (one per GiB of address space in use: the
    /// replayer's binary and heap, its mappings and its stack make 3) and the PTE tables of its
    /// text, data, heap and stack. 7: the replayer of `lrugen kernel` on Debian 6.1, where only
    /// these levels are counted, has 6-8 `pagetables` more than the PTE tables of its mappings.
    /// An estimate, for an address space whose page tables are not known; a known count replaces
    /// it and [`Self::mm_pud_pages`] ([`Machine::set_mm_pgtables`]: `lrugen kernel`'s replayer of
    /// a trace, read off its smaps).
    pub mm_pgtable_pages: u64,
    /// Its PUD tables (one per 512 GiB of address space in use: 2 or 3 for the replayer, as
    /// its stack shares the mappings' 512 GiB or not), charged on every kernel
    /// (`GFP_PGTABLE_USER`) and counted in `pagetables` from 6.7 on
    /// ([`Machine::pud_pgtable_stats`]), in `kernel` only before: 2.
    pub mm_pud_pages: u64,
    /// Its PGD (one page; two with page-table isolation, which the guests' CPU model does not
    /// need), charged on every kernel and counted in `pagetables` from 6.14 on
    /// ([`Machine::pgd_pgtable_stats`]): 1.
    pub mm_pgd_pages: u64,
    /// Slab of an address space that does not grow with its pages (`vm_area_struct`s, `anon_vma`s,
    /// `mm_struct`; `slab_unreclaimable`), bytes: 10,240, the 2.3-2.7 pages the replayer's memcg
    /// holds on those kernels.
    pub mm_slab_bytes: u64,
    /// Other kernel memory of an address space that `memory.stat` shows only in `kernel`
    /// (`kernel` less `pagetables` and `slab`), pages: 4. The replayer's on the 42 shape
    /// fixtures is 6.2 pages on Debian 6.1, 4.0 on 6.12 and 2.0 on 7.2, and with its page tables
    /// it adds up to 13-14 pages on each: the PUD tables and the PGD that 6.1 shows here and
    /// newer kernels as page tables ([`Self::mm_pud_pages`], [`Self::mm_pgd_pages`]), and 4
    /// pages that are neither.
    pub mm_other_pages: u64,
    /// The page cache's xarray nodes (`radix_tree_node`, 576 bytes, `SLAB_ACCOUNT`;
    /// `slab_reclaimable`), charged to the memcg that first cached a page of the file: they hold
    /// the shadow entries of evicted pages, so they grow with the file pages ever cached, not
    /// with those resident (the replayer's 80 MiB file: 326 nodes, 46 pages), up to the shadow
    /// shrinker's limit (`reclaim::shrinker`, which runs on the nodes charged here).
    pub xa_nodes: bool,
    /// A file's inode and dentry (`ext4_inode_info`, `dentry` and what the filesystem keeps with
    /// them; `slab_reclaimable`), bytes, charged with its first cached page: 6,144, from the
    /// 3.6-7.4 KB per file that the replayer's memcg holds besides its xarray nodes.
    pub file_slab_bytes: u64,
    /// A forked process's kernel stack (`THREAD_SIZE`, 16 KiB on x86-64 with `KASAN` off; vmap
    /// stacks are charged to the memcg since 5.9, `memcg_charge_kernel_stack`), pages: 4. Every
    /// task of the multi-task fixtures shows them in `kernel_stack` (16 pages for 4 tasks), the
    /// one-task replayer none (forked outside the memcg). Counted in `kernel` and in
    /// `kernel_stack` (`nr_kernel_stack`, KiB; a stack of a task outside a memcg is not counted
    /// anywhere, so `/proc/vmstat` shows only the memcgs' tasks' stacks).
    pub task_stack_pages: u64,
    /// A forked process's slab besides its address space's (`task_struct`, `signal_struct`,
    /// `sighand_struct`, `files_struct`, `fs_struct`, `cred`, `pid`; `slab_unreclaimable`),
    /// bytes: 9,216. The multi-task fixtures' `slab_unreclaimable` less
    /// [`Self::mm_slab_bytes`] per process is 7.3-9.8 KB per forked task on Debian 6.12 (fio and
    /// YCSB, 4 tasks; 11.4 KB with sibling memcgs).
    pub task_slab_bytes: u64,
    /// The per-CPU charge stock (`memcg_stock_pcp`, [`memcg::Memcgs::charge_pages`]): pages
    /// charged to `memory.current` ahead of use in batches of 64, and kernel memory's uncharges
    /// kept there, as every kernel does. Off: `memory.current` is exactly the pages and kernel
    /// objects charged (what a capacity taken from the pages a kernel held at the end, net of
    /// its stock, assumes).
    pub charge_stock: bool,
}

/// `sizeof(struct xa_node)` on 64-bit kernels: the `radix_tree_node` slab object.
pub const XA_NODE_BYTES: u64 = 576;

impl Default for KmemConfig {
    /// Nothing charged ([`KmemConfig::none`]), which also leaves the shadow shrinker idle
    /// (`reclaim::shrinker`): the default keeps the results that runs without kernel memory have
    /// always had. Kernel comparisons (`lrugen kernel`) and experiments that ask for it use
    /// [`KmemConfig::kernel`].
    fn default() -> Self {
        KmemConfig::none()
    }
}

impl KmemConfig {
    /// No kernel memory charged: memcgs are charged their pages only.
    pub fn none() -> Self {
        KmemConfig {
            page_tables: false,
            mm_pgtable_pages: 0,
            mm_pud_pages: 0,
            mm_pgd_pages: 0,
            mm_slab_bytes: 0,
            mm_other_pages: 0,
            xa_nodes: false,
            file_slab_bytes: 0,
            task_stack_pages: 0,
            task_slab_bytes: 0,
            charge_stock: false,
        }
    }

    /// What Debian's 6.1, 6.12 and 7.2 kernels charge (the sizes documented on each field).
    pub fn kernel() -> Self {
        KmemConfig {
            page_tables: true,
            mm_pgtable_pages: 7,
            mm_pud_pages: 2,
            mm_pgd_pages: 1,
            mm_slab_bytes: 10_240,
            mm_other_pages: 4,
            xa_nodes: true,
            file_slab_bytes: 6_144,
            task_stack_pages: 4,
            task_slab_bytes: 9_216,
            charge_stock: true,
        }
    }
}

/// The virtual time an operation takes outside the virtual-time engine (`Kernel::step`). The
/// clock drives generation ages, `min_ttl_ms`, the flusher's and the memcg statistics flusher's
/// periods; the engine prices each event itself instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StepClock {
    /// Any access, ns.
    pub access_ns: u64,
    /// Extra for a fault served without I/O, ns.
    pub minor_fault_ns: u64,
    /// Extra for a read from storage (a page-cache miss, a file fault), ns.
    pub read_io_ns: u64,
    /// Extra for a swap-in, ns.
    pub swap_in_ns: u64,
}

impl Default for StepClock {
    /// 100 ns an access, 1 µs a minor fault, 100 µs a read from fast storage or swap.
    fn default() -> Self {
        StepClock {
            access_ns: 100,
            minor_fault_ns: 1_000,
            read_io_ns: 100_000,
            swap_in_ns: 100_000,
        }
    }
}

fn yes() -> bool {
    true
}

/// The kernel's default `vm.page-cluster` (`swap_setup`: 3 on machines with more than 16 MiB).
pub const PAGE_CLUSTER_DEFAULT: u32 = 3;
/// The largest `vm.page-cluster` the sysctl accepts (`page_cluster_max`).
pub const PAGE_CLUSTER_MAX: u32 = 31;

fn page_cluster_default() -> u32 {
    PAGE_CLUSTER_DEFAULT
}

impl MachineConfig {
    /// One node with one NORMAL zone of `pages` pages and `swap_pages` of swap.
    pub fn simple(pages: u64, swap_pages: u64) -> Self {
        MachineConfig {
            nodes: vec![vec![(ZoneType::Normal, pages)]],
            swap_pages,
            swappiness: 60,
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            ra_pages: 32,
            kswapd: true,
            zram_ratio: None,
            page_cluster: PAGE_CLUSTER_DEFAULT,
            swap_synchronous: false,
            swap_rotational: false,
            clock: StepClock::default(),
            kmem: KmemConfig::default(),
            tiers: None,
            lowmem_reserve: false,
            zone_boot: Vec::new(),
            kswapd_sleep: false,
            sched_slice_ns: 0,
            thp: thp::Thp::Never,
        }
    }

    /// One node with the zones x86 builds for `ram_pages` of memory ([`node::x86_zones`]: DMA,
    /// DMA32, Normal above 4 GiB), each zone's `lowmem_reserve` kept and kswapd sleeping as the
    /// kernel's does ([`Self::lowmem_reserve`], [`Self::kswapd_sleep`]), and `swap_pages` of
    /// swap. Every page of each zone is managed and free (a guest's kernel manages fewer and uses
    /// some: [`Self::zone_boot`]).
    pub fn x86(ram_pages: u64, swap_pages: u64) -> Self {
        MachineConfig {
            nodes: vec![node::x86_zones(ram_pages)],
            lowmem_reserve: true,
            kswapd_sleep: true,
            ..Self::simple(0, swap_pages)
        }
    }

    /// Total managed pages.
    pub fn total_pages(&self) -> u64 {
        self.nodes.iter().flatten().map(|z| z.1).sum()
    }
}

/// Result of an rmap walk for references (`folio_referenced`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Referenced {
    /// PTEs found young (and cleared).
    pub ptes: u32,
    /// Union of the flags of the VMAs that referenced it (`VM_LOCKED` stops the walk).
    pub vm_flags: u32,
}

/// Reclaim work done in one context, for pricing it in virtual time (not kernel counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Work {
    /// Folios looked at by reclaim (isolated, sorted, deactivated).
    pub folios_scanned: u64,
    /// Mappings visited by rmap walks.
    pub rmap_walks: u64,
    /// PTEs looked at by page-table walks and look-around.
    pub ptes_walked: u64,
    /// Present PMD entries looked at by MGLRU's page-table walk (`walk_pmd_range`).
    pub pmds_walked: u64,
    /// Tests and updates of MGLRU's Bloom filter of PTE tables (`test_bloom_filter`,
    /// `update_bloom_filter`).
    pub bloom_ops: u64,
    /// TLB flushes of `shrink_folio_list` (`try_to_unmap_flush`: one per call that unmapped a
    /// folio, with its shootdown IPIs, as `TTU_BATCH_FLUSH` batches them).
    pub tlb_flushes: u64,
    /// Acquisitions of an lruvec's `lru_lock` by reclaim (isolation, putback, generation and cost
    /// bookkeeping; [`LruLockSite`] other than `Batch`).
    pub lru_lock_rounds: u64,
    /// Folios put back on an LRU list under `lru_lock` (`move_folios_to_lru`).
    pub folios_putback: u64,
    /// Acquisitions of `lru_lock` outside reclaim: per-CPU folio batch flushes
    /// (`folio_batch_move_lru`: the `lru_add`, `activate`, `rotate` and `deactivate` batches) and
    /// `lru_note_cost_refault`.
    pub batch_rounds: u64,
    /// Folios added to an LRU list by `lru_add` flushes.
    pub folios_added: u64,
    /// Folios moved within the LRU lists by `activate`, `rotate` and `deactivate` flushes.
    pub folios_moved: u64,
    /// Acquisitions of the swap device's lock (`si->lock`): a per-CPU slot cache refilled or
    /// flushed, or a new cluster taken ([`Machine::swap_percpu_cluster`]).
    pub swap_lock_rounds: u64,
    /// Swap slots allocated or freed in those batches: scanned under the device's lock up to
    /// 6.12, under the allocating CPU's own cluster's lock from 6.15 (CPU time either way).
    pub swap_slots_locked: u64,
}

/// Where an lruvec's `lru_lock` is held, which decides what the hold costs per folio
/// (`sim::engine::Costs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LruLockSite {
    /// `isolate_lru_folios` (classic) or `isolate_folios`/`scan_folios` (MGLRU, with the sorting
    /// and `try_to_inc_min_seq` it does under the same hold): per folio looked at.
    Isolate,
    /// `move_folios_to_lru`: per folio put back.
    Putback,
    /// An `lru_add` batch flush: per folio added. Not reclaim.
    Add,
    /// An `activate`, `rotate` or `deactivate` batch flush (per folio moved), or
    /// `lru_note_cost_refault` (no folio). Not reclaim.
    Batch,
    /// Bookkeeping without list walks: `lru_note_cost` per level, `inc_max_seq`,
    /// `reset_batch_size` after an mm walk, 6.1's look-around updating generations under the lock
    /// (per folio updated).
    Seq,
    /// Not an `lru_lock`: the swap device's lock, taken to allocate or free a batch of slots
    /// (per slot). Its holds are on a timeline of their own.
    Swap,
}

/// One hold of an `lru_lock`, logged for the engine's lock model (`sim::locks`) while
/// [`Machine::lock_log_on`] is set.
#[derive(Clone, Copy, Debug)]
pub struct LockHold {
    /// The context ([`CTX_TASK`], [`CTX_KSWAPD`]).
    pub ctx: u8,
    /// Where.
    pub site: LruLockSite,
    /// The lruvec whose lock it is.
    pub lruvec: u32,
    /// Folios handled under it.
    pub folios: u32,
    /// The context's work before the hold began (where in the operation it happens).
    pub before: Work,
}

/// The per-CPU folio batches besides `lru_add` and `lru_activate` (modelled folio by folio:
/// `reclaim::FolioBatch`) whose flushes take `lru_lock`: `folio_rotate_reclaimable`'s
/// (`cpu_fbatches.lru_move_tail`).
pub const FBATCH_ROTATE: usize = 0;
/// `folio_deactivate`'s batch (`cpu_fbatches.lru_deactivate`).
pub const FBATCH_DEACTIVATE: usize = 1;

/// [`Machine`]'s `lruvec_parent` of the root memcg's lruvecs: none.
const NO_LRUVEC: u32 = u32::MAX;

/// Who the machine is working for: a task (including its direct reclaim) or kswapd.
pub const CTX_TASK: usize = 0;
/// kswapd's context.
pub const CTX_KSWAPD: usize = 1;

/// [`Machine::state_bytes`] split between resident and non-resident pages
/// ([`Machine::state_split`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateSplit {
    /// The state of the resident pages and the model's fixed structures: `state_bytes` less
    /// `nonresident_bytes`.
    pub resident_bytes: u64,
    /// The state kept for pages that are not resident: `nonresident_file_bytes`, the swap slots
    /// of swapped-out pages, the PTEs holding their swap entries (4 bytes each) and the folio
    /// records of the zram pool's frames.
    pub nonresident_bytes: u64,
    /// File pages not resident that the page cache remembers (its shadow entries).
    pub nonresident_file_pages: u64,
    /// The page cache's bytes kept for them: the shadow entries' share of the leaves they are in
    /// ([`pagecache::File::shadow_state`]) and the shadow-node list.
    pub nonresident_file_bytes: u64,
    /// Swapped-out pages (swap slots referenced by PTEs, their page not in the swap cache).
    pub swapped_pages: u64,
}

/// The simulated machine.
#[derive(Clone, Debug)]
pub struct Machine {
    /// Reclaim work per context ([`CTX_TASK`], [`CTX_KSWAPD`]).
    pub work: [Work; 2],
    /// The context reclaim currently runs in.
    pub ctx: usize,
    /// Log each `lru_lock` hold in [`Machine::lock_log`] (set by the engine, which drains it
    /// after every operation; off elsewhere, so that the log does not grow).
    pub lock_log_on: bool,
    /// The CPU the current operation runs on (the engine's; 0 without it): whose per-CPU swap
    /// slot cache or cluster an allocation uses.
    pub cpu: u32,
    /// From the profile (`swap_percpu_cluster`): swap slots come from per-CPU clusters, the
    /// device lock taken once per new cluster of `SWAPFILE_CLUSTER` slots and not to free;
    /// otherwise from per-CPU slot caches refilled and flushed `SWAP_BATCH` slots at a time
    /// under it.
    pub swap_percpu_cluster: bool,
    /// From the profile (`pud_pgtable_stats`): an address space's PUD tables
    /// ([`KmemConfig::mm_pud_pages`]) count in `pagetables`. Set before the first address space
    /// is created ([`Machine::apply_switches`]).
    pub pud_pgtable_stats: bool,
    /// From the profile (`remove_rw_page`): swap I/O goes through `submit_bio` on every device
    /// ([`Machine::swap_io_counts_pgpg`]).
    pub remove_rw_page: bool,
    /// From the profile (`pcp_free_clears_hopeless`): a free that clears a zone's
    /// `ZONE_BELOW_HIGH` revives a kswapd that gave up on the node ([`Machine::free_frame`]).
    pub pcp_free_clears_hopeless: bool,
    /// From the profile (`pgd_pgtable_stats`): its PGD ([`KmemConfig::mm_pgd_pages`]) counts in
    /// `pagetables`.
    pub pgd_pgtable_stats: bool,
    /// From the profile (`vmscan_reclaim_trace_ids`): the direct and memcg reclaim tracepoints
    /// end with `pid=` and `memcg_id=` ([`Machine::reclaim_trace_ids`]).
    pub reclaim_trace_ids: bool,
    /// Per CPU: slots left in its slot cache or cluster, and frees until its return cache flushes.
    swap_left: Vec<[u32; 2]>,
    /// The holds of the operation in progress.
    pub lock_log: Vec<LockHold>,
    /// Folios waiting in each per-CPU batch of [`FBATCH_ROTATE`] etc. (counted only: the
    /// model moves the folio at once; the count says when the kernel's flush takes the lock).
    fbatch_pending: [u32; 2],
    /// rmap walks counted from `&self` methods.
    rmap_count: std::cell::Cell<u64>,
    /// How it was built.
    pub cfg: MachineConfig,
    /// Every page frame.
    pub folios: Folios,
    /// Nodes.
    pub nodes: Vec<Node>,
    /// Memcg tree.
    pub memcgs: Memcgs,
    /// Files.
    pub files: Vec<File>,
    /// Address spaces.
    pub mms: Vec<MmStruct>,
    /// PTE tables.
    pub ptes: PteTables,
    /// Swap device.
    pub swap: Swap,
    /// Per lruvec (memcg × node) node items and memcg events, hierarchical.
    pub lruvec_stats: Vec<Counters>,
    /// Per lruvec, local (this memcg only).
    pub lruvec_stats_local: Vec<Counters>,
    /// Per lruvec, its parent memcg's lruvec on the same node, or [`NO_LRUVEC`] for the root's:
    /// the walk up the memcg tree of every counter update, as a chain of dense indices (a memcg's
    /// parent never changes).
    lruvec_parent: Vec<u32>,
    /// Per lruvec (memcg × node), the reclaim iterator of walks rooted at that memcg on that node
    /// (`memcg->nodeinfo[nid]->iter`; `Machine::mem_cgroup_iter`).
    pub reclaim_iter: Vec<memcg::ReclaimIter>,
    /// The lruvec statistics as of the last rstat flush, which reclaim's heuristics read.
    pub rstat: rstat::Rstat,
    /// Per (node, zone) zone items.
    pub zone_stats: Vec<Vec<Counters>>,
    /// Global vm events (`count_vm_events`).
    pub events: Counters,
    /// Virtual time in nanoseconds.
    pub now_ns: u64,
    /// Run the invariant checker after every `shrink_node` pass.
    pub debug_checks: bool,
    /// The seed of the kernel's randomness (`get_random_u32_below`: the memcg LRU's bins), the
    /// run's seed; the policy draws from a stream of its own seeded with it.
    pub random_seed: u64,
    /// First invariant violation found by `debug_checks`.
    pub check_failure: Option<String>,
    /// Kernel memory was charged over a `memory.max` since the last [`crate::reclaim::alloc::reclaim_kmem_excess`]
    /// (the kernel reclaims before it charges; the model charges where the object is allocated,
    /// without the policy at hand, and reclaims at the end of the operation).
    pub kmem_over: bool,
    /// A kswapd was woken where reclaim cannot run (an allocation without direct reclaim inside
    /// reclaim or migration, [`crate::reclaim::tiering`]) and has not run yet: the synchronous
    /// model runs it when the operation returns to user space
    /// ([`crate::reclaim::alloc::run_pending_kswapd`]), as the kernel's thread would run once
    /// the task lets the CPU go.
    pub kswapd_pending: bool,
    /// With [`MachineConfig::sched_slice_ns`]: the virtual time at which the task running got
    /// the CPU (after kswapd ran, or after it waited for a read).
    pub task_picked_ns: u64,
    /// The slice a woken kswapd waits for: [`MachineConfig::sched_slice_ns`] where the profile
    /// has `eevdf_run_to_parity`, else 0 ([`Machine::apply_switches`]).
    pub kswapd_wait_slice_ns: u64,
    /// With [`MachineConfig::sched_slice_ns`]: when a woken kswapd may take the CPU
    /// ([`crate::reclaim::alloc::run_pending_kswapd`]).
    pub kswapd_due_ns: Option<u64>,
    /// When `vmstat_update` next decays the per-CPU lists' `high`
    /// ([`crate::reclaim::alloc::PCP_DECAY_NS`], [`node::Zone::decay_pcp_high`]).
    pub pcp_decay_due_ns: u64,
    /// The running operation waited for a read (a file page from storage, a swap-in from a
    /// device that is not synchronous): a deferred kswapd runs at its end.
    pub io_waited: bool,
    /// The guest's shmem at boot ([`node::ZoneBoot::shmem`]).
    pub boot_shmem: BootShmem,
    /// Folio allocated by a fault or read path and not yet on an LRU list (the checker's
    /// "in flight" exception), or `NIL`.
    pub in_flight: FolioId,
    /// The per-CPU `lru_add` batch (`reclaim::LruAddBatch`): new folios not yet on an LRU.
    pub lru_add: crate::reclaim::LruAddBatch,
    /// The per-CPU `lru_activate` batch: folios `folio_activate` queued, still on their lists
    /// (`reclaim::folio_activate`).
    pub lru_activate: crate::reclaim::FolioBatch,
    /// `lru_cache_disable()` in effect: a new folio goes on its LRU list at once instead of
    /// waiting in the batch (the kernel does this around migration; the lifecycle tests use it
    /// to see every step).
    pub lru_cache_disabled: bool,
    /// The task running on the (single) CPU, if any (`current`).
    pub current_task: Option<u32>,
    /// kswapd runs as a task of the virtual-time engine: waking it only sets
    /// [`node::Node::kswapd_woken`], and the engine advances `balance_pgdat` in virtual time.
    /// False (the default): kswapd runs synchronously when woken.
    pub kswapd_async: bool,
    /// When the flusher next wakes for periodic writeback (`wb_wakeup_delayed`), ns; `u64::MAX`
    /// while no inode is dirty.
    pub wb_wakeup: u64,
    /// zram: the pool's page frames and the compressed bytes they hold.
    pub zram_pool: Vec<FolioId>,
    /// zram: compressed bytes stored.
    pub zram_bytes: u64,
    /// zram: what `mm_stat` and `io_stat` count.
    pub zram_stats: zram::ZramStats,
    /// zram: its compressor (`comp_algorithm`; the swap device's, lzo-rle unless it names one).
    pub zram_algorithm: zram::ZramAlgorithm,
    /// Swap-outs (`pswpout`) by the `compressed_pct` of the region the page belongs to (index 0:
    /// regions that give none, and pages not in an anon region), whatever the swap device.
    pub pswpout_by_pct: Box<[u64; 101]>,
    /// The page cache's xarray leaves that hold only shadow entries, per lruvec
    /// (`shadow_nodes`), for the shadow shrinker (`reclaim::shrinker`).
    pub shadow_lru: pagecache::ShadowLru,
    /// `lrugen explain`'s recorder (off: `None`; see [`crate::explain`]).
    pub explain: Option<Box<crate::explain::Recorder>>,
    /// The run's reclaim events, traced as the kernel's tracepoints print them (off: `None`;
    /// [`ftrace`]).
    pub ftrace: Option<Box<ftrace::Ftrace>>,
    /// Memory tiers ([`MachineConfig::tiers`]; `None` when not configured).
    pub tiers: Option<Box<tiers::Tiers>>,
    /// When NUMA balancing's next scan may be due (`reclaim::tiering::task_numa_work`), ns;
    /// `u64::MAX` unless it runs in memory-tiering mode.
    pub numa_next_scan_ns: u64,
}

/// Hint the CPU to load the cache line holding `*r` (read, all cache levels) and go on without
/// waiting: the replay loop issues it a few operations ahead for the page-cache slot and the
/// folio an operation will touch, so that their memory latency overlaps the work in between. It
/// changes no value; on other architectures it does nothing. (Plain LRU's, shared.)
pub use lrugen_cache::prefetch;

/// The guest's shmem at boot that no process maps ([`node::ZoneBoot::shmem`]): a Debian guest's
/// initramfs, unpacked into the tmpfs root before any cgroup existed. The model has no shmem
/// file system; what reclaim does with these folios is what it does with an unmapped anon
/// folio, so they are anon folios of an address space of their own (`mm`, dead: no process,
/// no page tables, never walked and never an OOM victim) in the root memcg, swap-backed, on the
/// anon LRU as `folio_add_lru` puts a new one (classic: inactive; MGLRU: `max_seq - 1`). When
/// reclaim swaps one out, the swap entry that `shmem_writeout` leaves in the file's page cache
/// holds its slot (`swap_shmem_alloc`): `slots`, one reference each, so that the slot and its
/// zram data stay, as the kernel's do. Nothing reads them back (no process touches them).
#[derive(Clone, Debug, Default)]
pub struct BootShmem {
    /// (node, zone, pages) not yet put on the LRU (`Kernel::new` does).
    pub pending: Vec<(usize, usize, u64)>,
    /// The address space that is their rmap root, once they exist.
    pub mm: Option<u32>,
    /// The swap slots their page cache's swap entries hold.
    pub slots: Vec<u32>,
}

impl Machine {
    /// Take a frame of zone `zone` of `node` for what the kernel had at boot ([`BootShmem`]):
    /// no allocation event (it was allocated before the workload's counters start).
    pub fn take_boot_frame(&mut self, node: usize, zone: usize) -> Option<FolioId> {
        let id = self.nodes[node].zones[zone].take_buddy(&mut self.folios)?;
        self.folios[id].set(pg::ALLOCATED);
        Some(id)
    }

    /// The rmap root of the boot shmem ([`BootShmem::mm`]), made on first use: an address
    /// space of the root memcg that is no process.
    pub fn boot_shmem_mm(&mut self) -> u32 {
        if let Some(mm) = self.boot_shmem.mm {
            return mm;
        }
        let mm = self.new_mm(memcg::ROOT_MEMCG);
        self.mms[mm as usize].alive = false;
        self.boot_shmem.mm = Some(mm);
        mm
    }

    /// Whether folio `id` (anon) is one of the boot shmem's ([`BootShmem`]).
    #[inline]
    pub fn is_boot_shmem(&self, id: FolioId) -> bool {
        self.boot_shmem.mm.is_some_and(|mm| self.anon_root(id) == mm)
    }

    /// Whether boot shmem folio `id` was written out: in the swap cache, with its slot held by
    /// the file's swap entry (no PTE ever holds one of these slots, so any count is that entry).
    /// A boot shmem folio outside the swap cache, or in it but not yet written, is still in its
    /// file's page cache and counts in `nr_shmem`.
    #[inline]
    pub fn boot_shmem_holds(&self, id: FolioId) -> bool {
        let f = self.folios[id];
        f.test(pg::SWAPCACHE) && self.swap.count(f.swap_slot()) > 0
    }

    /// `shmem_writeout` of boot shmem folio `id`, in the swap cache and written: the file's page
    /// cache keeps a swap entry for it, one more reference to its slot ([`BootShmem::slots`]).
    pub fn boot_shmem_hold_slot(&mut self, id: FolioId) {
        let slot = self.folios[id].swap_slot();
        self.swap.dup(slot, id);
        self.boot_shmem.slots.push(slot);
        // out of the file's page cache (`shmem_delete_from_page_cache`)
        let (mc, n) = (self.folios[id].memcg, self.folios[id].node());
        self.mod_lruvec_state(mc, n, Stat::NrShmem, -1);
    }
}

impl Machine {
    /// Build a machine from `cfg`.
    pub fn new(cfg: MachineConfig) -> Self {
        let total = cfg.total_pages() as usize;
        let folios = Folios::with_capacity(total.min(1 << 20));
        let mut first: FolioId = 0;
        let mut boot_shmem = Vec::new();
        let mut nodes = Vec::new();
        for (nid, zones) in cfg.nodes.iter().enumerate() {
            let wm = node::compute_wmarks(zones, cfg.min_free_kbytes, cfg.watermark_scale_factor);
            let reserve = node::lowmem_reserve(zones, node::LOWMEM_RESERVE_RATIO);
            let boot = cfg.zone_boot.get(nid);
            let zones = zones
                .iter()
                .zip(wm)
                .enumerate()
                .map(|(zi, (&(t, m), w))| {
                    let b = boot.and_then(|b| b.get(zi)).copied().unwrap_or_default();
                    let w = match b.wmark {
                        Some([min, low, high]) => [min, low, high, high + (high - low)],
                        None => w,
                    };
                    let mut z = Zone::new(nid, zi, t, m, w, first);
                    if cfg.lowmem_reserve {
                        z.lowmem_reserve = b.lowmem_reserve.unwrap_or(reserve[zi]);
                    }
                    let shmem = b.shmem.min(b.used);
                    z.take_boot(b.used - shmem);
                    if let Some(pcp) = b.pcp {
                        z.set_pcp(pcp);
                    }
                    if shmem > 0 {
                        boot_shmem.push((nid, zi, shmem));
                    }
                    first += m as FolioId;
                    z
                })
                .collect();
            nodes.push(Node {
                id: nid,
                zones,
                kswapd_failures: 0,
                kswapd_woken: false,
                kswapd_highest_zoneidx: 0,
                kswapd_short_sleep_until: None,
            });
        }
        let nr_nodes = nodes.len();
        let zone_stats = nodes.iter().map(|n| vec![Counters::default(); n.zones.len()]).collect();
        let tiers = cfg.tiers.as_ref().map(|t| {
            // checked where the configuration is read (`experiment::spec`); a configuration built
            // in code with a bad table is a bug of its caller
            let t = tiers::Tiers::new(t, nr_nodes, total).unwrap_or_else(|(k, e)| panic!("{k}: {e}"));
            Box::new(t)
        });
        let numa_next_scan_ns = if tiers.as_ref().is_some_and(|t| t.tiering()) {
            0
        } else {
            u64::MAX
        };
        Machine {
            boot_shmem: BootShmem {
                pending: boot_shmem,
                ..Default::default()
            },
            tiers,
            numa_next_scan_ns,
            memcgs: Memcgs::new(cfg.swappiness),
            swap: Swap::new(cfg.swap_pages),
            cfg,
            folios,
            nodes,
            files: vec![],
            mms: vec![],
            ptes: PteTables::default(),
            lruvec_stats: vec![Counters::default(); nr_nodes],
            lruvec_stats_local: vec![Counters::default(); nr_nodes],
            lruvec_parent: vec![NO_LRUVEC; nr_nodes],
            reclaim_iter: vec![memcg::ReclaimIter::default(); nr_nodes],
            rstat: rstat::Rstat::new(nr_nodes),
            zone_stats,
            events: Counters::default(),
            now_ns: 0,
            debug_checks: false,
            random_seed: 0,
            check_failure: None,
            kmem_over: false,
            kswapd_pending: false,
            task_picked_ns: 0,
            kswapd_wait_slice_ns: 0,
            kswapd_due_ns: None,
            pcp_decay_due_ns: crate::reclaim::alloc::PCP_DECAY_NS,
            io_waited: false,
            in_flight: folio::NIL,
            lru_add: Default::default(),
            lru_activate: Default::default(),
            lru_cache_disabled: false,
            current_task: None,
            kswapd_async: false,
            wb_wakeup: u64::MAX,
            zram_pool: Vec::new(),
            zram_bytes: 0,
            zram_stats: zram::ZramStats::default(),
            zram_algorithm: zram::ZramAlgorithm::LzoRle,
            pswpout_by_pct: Box::new([0; 101]),
            shadow_lru: pagecache::ShadowLru::default(),
            explain: None,
            ftrace: None,
            work: [Work::default(); 2],
            ctx: CTX_TASK,
            lock_log_on: false,
            cpu: 0,
            swap_percpu_cluster: false,
            pud_pgtable_stats: false,
            remove_rw_page: true,
            pcp_free_clears_hopeless: false,
            reclaim_trace_ids: false,
            pgd_pgtable_stats: false,
            swap_left: Vec::new(),
            lock_log: Vec::new(),
            fbatch_pending: [0; 2],
            rmap_count: std::cell::Cell::new(0),
        }
    }

    /// Bytes of model state that grow with the pages a run touches: the folio table, page-cache
    /// slots, page tables and swap arrays (what `budget::check_machine` compares with the limit).
    pub fn state_bytes(&self) -> u64 {
        let folios = self.folios.len() as u64 * std::mem::size_of::<folio::Folio>() as u64;
        let files: u64 = self
            .files
            .iter()
            .map(|f| f.slots.bytes() + f.leaves.capacity() as u64 * std::mem::size_of::<pagecache::Leaf>() as u64)
            .sum::<u64>()
            + self.shadow_lru.bytes();
        let pmds: u64 = self.mms.iter().map(|m| m.pmds.capacity() as u64 * 4).sum::<u64>()
            + self.tiers.as_ref().map_or(0, |t| t.state_bytes());
        folios + files + pmds + self.ptes.bytes() + self.swap.bytes()
    }

    /// [`Machine::state_bytes`] split by the pages it is kept for: the state of pages not
    /// resident (the page cache's shadow entries with their share of its leaves, the shadow
    /// values' store and the shadow-node list; the swap slots of swapped-out pages, the PTEs
    /// holding their swap entries, their shadow entries in the swap cache and the folio records
    /// of the zram pool's frames), the rest being that of the resident pages and the model's
    /// fixed structures.
    pub fn state_split(&self) -> StateSplit {
        let (mut pages, mut bytes) = (0, self.shadow_lru.bytes());
        for f in &self.files {
            let (p, b) = f.shadow_state();
            pages += p;
            bytes += b;
        }
        let swapped = self.swap.swapped_out();
        let total = self.state_bytes();
        // a swapped-out page's swap slot (its bytes in the per-slot arrays, and its shadow entry
        // in the swap cache with the entry's share of the cache's table), the PTEs holding its
        // swap entry (4 bytes each in their tables), and the folio records of the zram pool's
        // frames that hold the compressed pages
        let slots = swapped * Swap::SLOT_BYTES + self.swap.shadow_bytes();
        let ptes = self.swap.swapped_out_ptes() * 4;
        let zram = self.zram_pool.len() as u64 * std::mem::size_of::<folio::Folio>() as u64;
        let nonresident = (bytes + slots + ptes + zram).min(total);
        StateSplit {
            resident_bytes: total - nonresident,
            nonresident_bytes: nonresident,
            nonresident_file_pages: pages,
            nonresident_file_bytes: bytes.min(nonresident),
            swapped_pages: swapped,
        }
    }

    /// Number of nodes.
    #[inline]
    pub fn nr_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Lruvec index of (memcg, node).
    #[inline]
    pub fn lruvec(&self, memcg: MemcgId, node: usize) -> usize {
        memcg as usize * self.nodes.len() + node
    }

    /// Create a memcg below `parent`.
    pub fn create_memcg(&mut self, parent: MemcgId, name: &str) -> MemcgId {
        let id = self.memcgs.create(parent, name);
        for node in 0..self.nodes.len() {
            self.lruvec_parent.push(self.lruvec(parent, node) as u32);
            self.lruvec_stats.push(Counters::default());
            self.lruvec_stats_local.push(Counters::default());
            self.rstat.flushed.push(Counters::default());
            self.reclaim_iter.push(memcg::ReclaimIter::default());
        }
        id
    }

    /// `mem_cgroup_iter`: the memcg after `prev` in a pre-order walk of `root`'s subtree
    /// (`root` first), or `None` at the end. With a reclaim cookie, the walk is the one shared
    /// through `root`'s iterator on the cookie's node: a new walk (`prev` `None`) joins the
    /// current cycle where the last walk left it, and returns `None` when a cycle ends (starting
    /// a new one at `root` if it had not returned anything yet); a walk whose cycle another
    /// walk completed meanwhile ends.
    pub fn mem_cgroup_iter(
        &mut self,
        root: MemcgId,
        prev: Option<MemcgId>,
        reclaim: Option<&mut memcg::ReclaimCookie>,
    ) -> Option<MemcgId> {
        let Some(cookie) = reclaim else {
            return self.memcgs.iter_next_live(root, prev);
        };
        let i = self.lruvec(root, cookie.node);
        loop {
            let it = self.reclaim_iter[i];
            if prev.is_none() {
                cookie.generation = it.generation;
            } else if cookie.generation != it.generation {
                return None;
            }
            let next = self.memcgs.iter_next_live(root, it.position);
            let it = &mut self.reclaim_iter[i];
            it.position = next;
            if next.is_none() {
                it.generation += 1;
                if prev.is_none() {
                    continue;
                }
            }
            return next;
        }
    }

    /// The machine's half of `mem_cgroup_css_offline` (`rmdir`) of `memcg`, whose tasks are gone
    /// and whose children are offline: protection dropped (`memory.min`/`low` set to 0), its
    /// kernel memory handed to its parent (`memcg_offline_kmem` → `memcg_reparent_objcgs`: the
    /// objects charged to it are charged to the parent from now on, and so are the mm's and
    /// files' kernel objects that name it). Its folios stay charged to it (6.x: a zombie until
    /// they are reclaimed; the policy's `memcg_offline` moves them on the kernels that reparent
    /// LRU folios).
    pub fn memcg_offline(&mut self, memcg: MemcgId) {
        let parent = self.memcgs[memcg].parent.expect("the root is never taken offline");
        {
            let mc = &mut self.memcgs[memcg];
            mc.state = memcg::MemcgState::Offline;
            mc.min = 0;
            mc.low = 0;
        }
        self.memcgs.zombies += 1;
        let mut kmem = 0;
        for node in 0..self.nr_nodes() {
            for s in [
                Stat::MemcgKmem,
                Stat::NrPageTablePages,
                Stat::NrSlabReclaimableB,
                Stat::NrSlabUnreclaimableB,
            ] {
                let v = self.lruvec_state_local(memcg, node, s);
                if v != 0 {
                    self.mod_lruvec_state(memcg, node, s, -v);
                    self.mod_lruvec_state(parent, node, s, v);
                    if s == Stat::MemcgKmem {
                        kmem += v;
                    }
                }
            }
        }
        self.memcgs.move_local(memcg, parent, kmem as u64);
        let (bytes, pending) = {
            let mc = &mut self.memcgs[memcg];
            (
                std::mem::take(&mut mc.slab_bytes),
                std::mem::take(&mut mc.slab_stat_pending),
            )
        };
        let pm = &mut self.memcgs[parent];
        pm.slab_bytes += bytes;
        pm.slab_stat_pending[0] += pending[0];
        pm.slab_stat_pending[1] += pending[1];
        for mm in self.mms.iter_mut() {
            if mm.kmem_memcg == memcg {
                mm.kmem_memcg = parent;
            }
        }
        for f in self.files.iter_mut() {
            if f.kmem_memcg == Some(memcg) {
                f.kmem_memcg = Some(parent);
            }
        }
        self.memcgs.drain_all_stock(memcg);
    }

    /// The folio half of 7.2's `memcg_reparent_objcgs` (switch `reparent_lru_folios`), after the
    /// policy moved `child`'s lists ([`crate::reclaim::Policy::reparent_lru`]): every folio of
    /// `child` is its parent's from now on (the kernel repoints the `obj_cgroup` the folios
    /// name), with the pages charged to it and its lruvec statistics (the node items; the
    /// ancestors' hierarchical counts do not change).
    pub fn reparent_folios(&mut self, child: MemcgId) {
        let parent = self.memcgs[child].parent.expect("the root is never taken offline");
        for id in 0..self.folios.len() as FolioId {
            let f = &mut self.folios[id];
            if f.test(pg::ALLOCATED) && f.memcg == child {
                f.memcg = parent;
            }
        }
        let nr = self.memcgs[child].usage_local;
        self.memcgs.move_local(child, parent, nr);
        for node in 0..self.nr_nodes() {
            for &s in Stat::ALL {
                if s.kind() != vmstat::StatKind::Node {
                    continue;
                }
                let v = self.lruvec_state_local(child, node, s);
                if v != 0 {
                    self.mod_lruvec_state(child, node, s, -v);
                    self.mod_lruvec_state(parent, node, s, v);
                }
            }
        }
    }

    /// Whether offline `memcg` holds nothing any more: no page charged to it and no swap entry
    /// recording its id (the references that keep a removed memcg's css alive).
    pub fn memcg_unpinned(&self, memcg: MemcgId) -> bool {
        let mc = &self.memcgs[memcg];
        mc.state == memcg::MemcgState::Offline && mc.usage_local == 0 && mc.swap_local == 0 && mc.stocked == 0
    }

    /// The machine's half of `mem_cgroup_css_released` + `_free` of an unpinned offline memcg:
    /// freed, and every reclaim iterator of it and its ancestors that stopped at it reset
    /// (`invalidate_reclaim_iterators`).
    pub fn memcg_free(&mut self, memcg: MemcgId) {
        debug_assert!(self.memcg_unpinned(memcg));
        self.memcgs[memcg].state = memcg::MemcgState::Freed;
        self.memcgs.zombies -= 1;
        let mut cur = Some(memcg);
        while let Some(c) = cur {
            for node in 0..self.nr_nodes() {
                let i = self.lruvec(c, node);
                if self.reclaim_iter[i].position == Some(memcg) {
                    self.reclaim_iter[i].position = None;
                }
            }
            cur = self.memcgs[c].parent;
        }
    }

    /// Add a file of `size` pages; returns its id.
    pub fn create_file(&mut self, name: &str, size: u64, advice: Advice) -> u32 {
        self.files.push(File::new(name, size, self.cfg.ra_pages, advice));
        (self.files.len() - 1) as u32
    }

    /// Create an address space charged to `memcg`; returns its id.
    pub fn create_mm(&mut self, memcg: MemcgId) -> u32 {
        let id = self.new_mm(memcg);
        self.mm_kmem(id, 1);
        id
    }

    /// [`Machine::create_mm`] for a process forked inside `memcg` (a task the replayer of
    /// `lrugen kernel` forks there): its task's kernel stack and slab are charged there too
    /// ([`vm::MmStruct::forked_in_memcg`]).
    pub fn create_forked_mm(&mut self, memcg: MemcgId) -> u32 {
        let id = self.new_mm(memcg);
        self.mms[id as usize].forked_in_memcg = true;
        self.mm_kmem(id, 1);
        id
    }

    /// Take the machine-wide behaviour of a kernel profile's switches (those read outside the
    /// reclaim policy): the swap allocator's clusters, the scheduler's slice that a woken kswapd
    /// waits for, how the per-CPU page lists tune themselves, and which page-table levels count in
    /// `pagetables`. The latter only while no address space exists, so that page tables are
    /// uncounted where they were counted (`sim::build_machine` applies the run's profile before
    /// the first one).
    pub fn apply_switches(&mut self, s: &crate::reclaim::mglru::Switches) {
        self.swap_percpu_cluster = s.swap_percpu_cluster;
        self.remove_rw_page = s.remove_rw_page;
        self.pcp_free_clears_hopeless = s.pcp_free_clears_hopeless;
        self.reclaim_trace_ids = s.vmscan_reclaim_trace_ids;
        self.kswapd_wait_slice_ns = if s.eevdf_run_to_parity {
            self.cfg.sched_slice_ns
        } else {
            0
        };
        for z in self.nodes.iter_mut().flat_map(|n| n.zones.iter_mut()) {
            z.pcp.auto_tune = s.pcp_high_auto_tune;
        }
        self.memcgs
            .set_stock_slots(match (self.cfg.kmem.charge_stock, s.memcg_stock_multi) {
                (false, _) => 0,
                (true, false) => 1,
                (true, true) => memcg::NR_MEMCG_STOCK,
            });
        if self.mms.is_empty() {
            self.pud_pgtable_stats = s.pud_pgtable_stats;
            self.pgd_pgtable_stats = s.pgd_pgtable_stats;
        }
    }

    /// Charge (`sign` 1) or uncharge (-1) the kernel memory of address space `mm` that does not
    /// grow with its mappings ([`KmemConfig`]) to its memcg: when it is created or forked, when
    /// it exits.
    pub fn mm_kmem(&mut self, mm: u32, sign: i64) {
        let k = self.cfg.kmem;
        let memcg = self.mms[mm as usize].kmem_memcg;
        if k.page_tables {
            let pgtables = if sign > 0 {
                [k.mm_pgtable_pages, k.mm_pud_pages, k.mm_pgd_pages]
            } else {
                self.mms[mm as usize].pgtables
            };
            self.charge_mm_pgtables(mm, pgtables, sign);
            self.mms[mm as usize].pgtables = if sign > 0 { pgtables } else { [0; 3] };
        }
        if k.mm_other_pages > 0 {
            self.kmem_pages(memcg, sign * k.mm_other_pages as i64, false);
        }
        if k.mm_slab_bytes > 0 {
            self.kmem_slab(memcg, sign * k.mm_slab_bytes as i64, false);
        }
        if self.mms[mm as usize].forked_in_memcg {
            if k.task_stack_pages > 0 {
                self.kmem_pages(memcg, sign * k.task_stack_pages as i64, false);
                // `account_kernel_stack`: NR_KERNEL_STACK_KB of the memcg's lruvec
                let kb = sign * (k.task_stack_pages * PAGE_SIZE / 1024) as i64;
                self.mod_lruvec_state(memcg, 0, Stat::NrKernelStackKb, kb);
            }
            if k.task_slab_bytes > 0 {
                self.kmem_slab(memcg, sign * k.task_slab_bytes as i64, false);
            }
        }
    }

    /// Charge (`sign` 1) or uncharge (-1) page tables of `mm` besides its mappings' PTE tables:
    /// `[PMD tables and the rest, PUD tables, PGD]`, each level counted in `pagetables` as the
    /// profile's switches say.
    fn charge_mm_pgtables(&mut self, mm: u32, pgtables: [u64; 3], sign: i64) {
        let memcg = self.mms[mm as usize].kmem_memcg;
        let counted = [true, self.pud_pgtable_stats, self.pgd_pgtable_stats];
        for (pages, counted) in pgtables.into_iter().zip(counted) {
            if pages > 0 {
                self.kmem_pages(memcg, sign * pages as i64, counted);
            }
        }
    }

    /// Replace the page tables charged for address space `mm` besides its mappings' PTE tables
    /// (`[PMD tables and the rest, PUD tables, PGD]`, the [`KmemConfig`] sizes at its creation)
    /// by `pgtables`, for a process whose page tables are known: the replayer of a kernel run,
    /// read off its `smaps`. Without [`KmemConfig::page_tables`], nothing is charged.
    pub fn set_mm_pgtables(&mut self, mm: u32, pgtables: [u64; 3]) {
        if !self.cfg.kmem.page_tables {
            return;
        }
        let old = self.mms[mm as usize].pgtables;
        self.charge_mm_pgtables(mm, old, -1);
        self.charge_mm_pgtables(mm, pgtables, 1);
        self.mms[mm as usize].pgtables = pgtables;
    }

    /// Charge (`d` > 0) or uncharge `|d|` pages of kernel memory to `memcg` (`__memcg_kmem_charge_page`:
    /// `memory.current` and `kernel`; `pagetables` too for page tables), without reclaim
    /// ([`KmemConfig`]), through this CPU's charge stock: a charge takes from it or charges a
    /// batch, an uncharge refills it (`obj_cgroup_uncharge_pages`).
    pub fn kmem_pages(&mut self, memcg: MemcgId, d: i64, pgtable: bool) {
        if d > 0 {
            if self.memcgs.charge_pages(self.cpu, memcg, d as u64).is_err() {
                self.memcgs.force_charge(memcg, d as u64);
            }
            if self.memcgs.try_charge(memcg, 0).is_err() {
                self.kmem_over = true;
            }
        } else {
            self.memcgs.uncharge_kmem(self.cpu, memcg, d.unsigned_abs());
        }
        self.mod_lruvec_state(memcg, 0, Stat::MemcgKmem, d);
        if pgtable {
            self.mod_lruvec_state(memcg, 0, Stat::NrPageTablePages, d);
        }
    }

    /// Charge (`bytes` > 0) or uncharge slab objects to `memcg` (`obj_cgroup_charge`): whole pages
    /// of `memory.current` and `kernel` as the bytes need them, and the byte counts
    /// (`slab_reclaimable` or `slab_unreclaimable`) passed on to the statistics once more than a
    /// page of change has gathered, as the per-CPU object stock does (`mod_objcg_state`).
    pub fn kmem_slab(&mut self, memcg: MemcgId, bytes: i64, reclaimable: bool) {
        let mc = &mut self.memcgs[memcg];
        let before = mc.slab_bytes.div_ceil(PAGE_SIZE);
        mc.slab_bytes = mc.slab_bytes.saturating_add_signed(bytes);
        let after = mc.slab_bytes.div_ceil(PAGE_SIZE);
        let k = usize::from(!reclaimable);
        mc.slab_stat_pending[k] += bytes;
        let pending = mc.slab_stat_pending[k];
        if pending.unsigned_abs() > PAGE_SIZE {
            mc.slab_stat_pending[k] = 0;
            let s = if reclaimable {
                Stat::NrSlabReclaimableB
            } else {
                Stat::NrSlabUnreclaimableB
            };
            self.mod_lruvec_state(memcg, 0, s, pending);
        }
        if after != before {
            self.kmem_pages(memcg, after as i64 - before as i64, false);
        }
    }

    /// The page cache's kernel objects of file `file` grew or shrank by `nodes` xarray nodes (and,
    /// at its first cached page, by its inode and dentry), charged to the memcg of `folio`'s
    /// first predecessor in the file ([`KmemConfig`]).
    fn file_kmem(&mut self, file: u32, nodes: i64, memcg: MemcgId) {
        let k = self.cfg.kmem;
        let f = &mut self.files[file as usize];
        let owner = match f.kmem_memcg {
            Some(m) => m,
            None => {
                f.kmem_memcg = Some(memcg);
                // a block device's inode is made at boot, charged to no memcg
                if k.file_slab_bytes > 0 && !f.bdev_metadata {
                    self.kmem_slab(memcg, k.file_slab_bytes as i64, true);
                }
                memcg
            }
        };
        if k.xa_nodes && nodes != 0 {
            self.kmem_slab(owner, nodes * XA_NODE_BYTES as i64, true);
        }
    }

    fn new_mm(&mut self, memcg: MemcgId) -> u32 {
        // An anon folio in the swap cache kept its rmap root in 30 bits of the slot's cache entry
        // until its slot's class took it (see `mm::folio`); the bound stays. Unreachable in
        // practice: 2^30 address spaces would take far more than any memory budget (each is over
        // a hundred bytes).
        assert!(
            self.mms.len() <= pagecache::FOLIO_EXTRA_MAX as usize,
            "too many address spaces: at most {} (2^30) per machine, the mm ids an anon folio's \
             swap-cache entry can name",
            pagecache::FOLIO_EXTRA_MAX as u64 + 1
        );
        let id = self.mms.len() as u32;
        self.mms.push(MmStruct {
            id,
            memcg,
            kmem_memcg: memcg,
            vmas: vec![],
            pmds: vec![],
            pgtables: [0; 3],
            next_vpn: MMAP_BASE_VPN,
            rss_anon: 0,
            rss_file: 0,
            swap_ents: 0,
            alive: true,
            lru_gen_bitmap: !0,
            unborn: false,
            forked_in_memcg: false,
            anon_root: id,
            anon_family: vec![id],
        });
        id
    }

    /// Reserve an address-space id for a child a later fork creates (`alive` false, `unborn`
    /// true until then), so that a workload can name its children deterministically at setup.
    pub fn reserve_mm(&mut self, memcg: MemcgId) -> u32 {
        let id = self.new_mm(memcg);
        let mm = &mut self.mms[id as usize];
        mm.alive = false;
        mm.unborn = true;
        mm.anon_family.clear();
        id
    }

    /// `mmap`: add a VMA of `pages` pages (anon if `file` is `None`), 2 MiB aligned, above every
    /// mapping made so far; returns the first virtual page.
    pub fn mmap(&mut self, mm: u32, pages: u32, flags: u32, file: Option<(u32, u32)>) -> u32 {
        let start = self.mms[mm as usize].next_vpn;
        self.insert_vma(mm, Self::new_vma(start, pages, flags, file));
        start
    }

    /// `mmap(MAP_FIXED_NOREPLACE)`: map `pages` pages at exactly `vpn`; an error if the range
    /// overlaps a VMA, is empty, lies below `MMAP_BASE` or past the 32-bit page space, or the file
    /// does not exist.
    pub fn mmap_fixed(
        &mut self,
        mm: u32,
        vpn: u32,
        pages: u32,
        flags: u32,
        file: Option<(u32, u32)>,
    ) -> Result<(), String> {
        let end = vpn as u64 + pages as u64;
        if pages == 0 || vpn < MMAP_BASE_VPN || end > MAX_VPN as u64 {
            return Err(format!(
                "mm {mm}: cannot map {pages} pages at {vpn:#x} (the range must be non-empty and within \
                 [{MMAP_BASE_VPN:#x}, {MAX_VPN:#x}))"
            ));
        }
        if let Some((f, _)) = file {
            if f as usize >= self.files.len() {
                return Err(format!("mm {mm}: mmap of file {f}, which does not exist"));
            }
        }
        let m = &self.mms[mm as usize];
        let i = m.vma_from(vpn);
        if let Some(v) = m.vmas.get(i).filter(|v| (v.start as u64) < end) {
            return Err(format!(
                "mm {mm}: mmap of [{vpn:#x}, {end:#x}) overlaps the VMA [{:#x}, {:#x})",
                v.start, v.end
            ));
        }
        self.insert_vma(mm, Self::new_vma(vpn, pages, flags, file));
        Ok(())
    }

    fn new_vma(start: u32, pages: u32, flags: u32, file: Option<(u32, u32)>) -> Vma {
        let (file, pgoff, flags) = match file {
            Some((f, off)) => (f, off, flags & !vm::vmf::ANON),
            None => (0, 0, flags | vm::vmf::ANON),
        };
        Vma {
            compressed_pct: 0,
            swap_ra: Default::default(),
            policy: vm::MPOL_DEFAULT,
            start,
            end: start + pages,
            flags,
            file,
            pgoff,
        }
    }

    /// Insert a VMA that overlaps none, growing the PMD array to cover it, moving the bump
    /// allocator past it, and registering it with its file. Returns its index.
    pub fn insert_vma(&mut self, mm: u32, vma: Vma) -> usize {
        let m = &mut self.mms[mm as usize];
        let i = m.vma_from(vma.start);
        debug_assert!(i == m.vmas.len() || m.vmas[i].start >= vma.end, "overlapping VMA");
        m.vmas.insert(i, vma);
        let need = MmStruct::pmd_index(vma.end - 1) + 1;
        if m.pmds.len() < need {
            m.pmds.resize(need, PMD_NONE);
        }
        let align = PTRS_PER_PTE as u64;
        let next = ((vma.end as u64).div_ceil(align) * align).min(MAX_VPN as u64) as u32;
        m.next_vpn = m.next_vpn.max(next);
        if !vma.is_anon() {
            self.files[vma.file as usize].mappings.push((mm, vma.start));
        }
        i
    }

    /// `split_vma`: make a VMA boundary at `at` if a VMA strictly contains it. The upper part keeps
    /// every attribute with its file offset advanced, and is registered with the file.
    pub fn split_vma(&mut self, mm: u32, at: u32) {
        let m = &mut self.mms[mm as usize];
        let Some(vi) = m.find_vma(at) else { return };
        let v = m.vmas[vi];
        if v.start == at {
            return;
        }
        let mut hi = v;
        hi.start = at;
        if !v.is_anon() {
            hi.pgoff += at - v.start;
        }
        m.vmas[vi].end = at;
        m.vmas.insert(vi + 1, hi);
        if !v.is_anon() {
            self.files[v.file as usize].mappings.push((mm, at));
        }
    }

    /// Remove VMA `vi` of `mm` (its pages already zapped), unregistering it from its file.
    pub fn remove_vma(&mut self, mm: u32, vi: usize) -> Vma {
        let v = self.mms[mm as usize].vmas.remove(vi);
        if !v.is_anon() {
            let maps = &mut self.files[v.file as usize].mappings;
            if let Some(j) = maps.iter().position(|&x| x == (mm, v.start)) {
                maps.swap_remove(j);
            }
        }
        v
    }

    /// Free the PTE tables of `mm` covering `[start, end)` that no VMA uses any more
    /// (`free_pgtables` after an unmap).
    pub fn free_unused_tables(&mut self, mm: u32, start: u32, end: u32) {
        if start >= end {
            return;
        }
        let (first, last) = (MmStruct::pmd_index(start), MmStruct::pmd_index(end - 1));
        let last = last.min(self.mms[mm as usize].pmds.len().saturating_sub(1));
        for pi in first..=last {
            let m = &self.mms[mm as usize];
            if pi >= m.pmds.len() {
                break;
            }
            let pmd = m.pmds[pi];
            if !pmd_is_table(pmd) {
                debug_assert!(pmd == PMD_NONE, "a huge PMD outside every VMA");
                continue;
            }
            let base = MMAP_BASE_VPN + (pi * PTRS_PER_PTE) as u32;
            let i = m.vma_from(base);
            if m.vmas.get(i).is_some_and(|v| v.start < base + PTRS_PER_PTE as u32) {
                continue;
            }
            debug_assert!(self.ptes.table(pmd & !PMD_YOUNG).iter().all(|&e| e == pte::NONE));
            self.ptes.free(pmd & !PMD_YOUNG);
            self.mms[mm as usize].pmds[pi] = PMD_NONE;
            self.pte_table_kmem(mm, -1);
        }
    }

    /// The address-space half of `fork` (`dup_mmap`): `child`, reserved with [`Self::reserve_mm`],
    /// gets a copy of `parent`'s VMAs (without `VM_LOCKED`, which fork does not inherit) in the
    /// parent's memcg and joins its anon family. File VMAs are registered with their files but
    /// their PTEs are not copied (`copy_page_range` skips VMAs without anon pages); in anon VMAs,
    /// present anon folios become shared (one more mapping, the child's PTE old), swap entries take
    /// another reference on their slot, and zero-page PTEs are copied.
    pub fn fork_mm(&mut self, parent: u32, child: u32) {
        let p = &self.mms[parent as usize];
        let (memcg, root, next_vpn, npmds) = (p.memcg, p.anon_root, p.next_vpn, p.pmds.len());
        let vmas: Vec<Vma> = p
            .vmas
            .iter()
            .map(|v| Vma {
                flags: v.flags & !vm::vmf::LOCKED,
                ..*v
            })
            .collect();
        {
            let c = &mut self.mms[child as usize];
            c.memcg = memcg;
            c.vmas = vmas.clone();
            c.pmds = vec![PMD_NONE; npmds];
            c.next_vpn = next_vpn;
            c.rss_anon = 0;
            c.rss_file = 0;
            c.swap_ents = 0;
            c.alive = true;
            c.unborn = false;
            // lru_gen_init_mm: not used on any node until it first runs (lru_gen_use_mm)
            c.lru_gen_bitmap = 0;
            c.anon_root = root;
            c.anon_family.clear();
            c.forked_in_memcg = true;
        }
        self.mm_kmem(child, 1);
        self.mms[root as usize].anon_family.push(child);
        for v in &vmas {
            if !v.is_anon() {
                self.files[v.file as usize].mappings.push((child, v.start));
                continue;
            }
            let (first, last) = (MmStruct::pmd_index(v.start), MmStruct::pmd_index(v.end - 1));
            for pi in first..=last {
                let pmd = self.mms[parent as usize].pmds[pi];
                if !pmd_is_table(pmd) {
                    // copy_huge_pmd is not modelled yet (docs/thp.md)
                    debug_assert!(pmd == PMD_NONE, "fork of a huge PMD");
                    continue;
                }
                let base = MMAP_BASE_VPN + (pi * PTRS_PER_PTE) as u32;
                let (s, e) = (v.start.max(base), v.end.min(base + PTRS_PER_PTE as u32));
                for vpn in s..e {
                    let x = self.ptes.table(pmd & !PMD_YOUNG)[(vpn - base) as usize];
                    if x & pte::PRESENT != 0 {
                        let id = x & pte::PFN_MASK;
                        debug_assert!(self.folios[id].is_anon());
                        self.folios[id].mapcount += 1;
                        self.mms[child as usize].rss_anon += 1;
                    } else if x & pte::SWAP != 0 {
                        // a swap entry in the parent holds the slot already
                        self.swap.dup(x & pte::PFN_MASK, folio::NIL);
                        self.mms[child as usize].swap_ents += 1;
                    } else if x & pte::ZERO == 0 {
                        continue;
                    }
                    *self.pte_mut(child, vpn) = x & !pte::YOUNG;
                }
            }
        }
    }

    /// The live address spaces of folio `id`'s anon family (its rmap root's members).
    pub fn anon_family(&self, id: FolioId) -> &[u32] {
        &self.mms[self.anon_root(id) as usize].anon_family
    }

    /// The mm id of anon folio `id`'s rmap root (`folio->mapping`'s anon_vma, in the model the
    /// fork family's first address space): in `mapping`, or in its swap slot's class while
    /// `PG_swapcache` (see `mm::folio`).
    #[inline]
    pub fn anon_root(&self, id: FolioId) -> u32 {
        let f = &self.folios[id];
        debug_assert!(f.is_anon());
        if f.test(pg::SWAPCACHE) {
            self.swap.cache_root(f.mapping)
        } else {
            f.mapping
        }
    }

    /// The object folio `id` belongs to (`folio->mapping`): its file id, or for an anon folio its
    /// rmap root's mm id.
    #[inline]
    pub fn folio_mapping(&self, id: FolioId) -> u32 {
        if self.folios[id].is_anon() {
            self.anon_root(id)
        } else {
            self.folios[id].mapping
        }
    }

    /// Make folio `id` anon page `vpn` of `root`'s fork family (`__folio_set_anon`): the rmap
    /// root goes to `mapping`, or to its swap slot's class while the folio is in the swap cache.
    #[inline]
    pub fn set_anon_rmap(&mut self, id: FolioId, root: u32, vpn: u32) {
        let f = &mut self.folios[id];
        f.index = vpn;
        if f.test(pg::SWAPCACHE) {
            let slot = f.mapping;
            self.swap.set_cache_root(slot, root);
        } else {
            f.mapping = root;
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Counters
    // ---------------------------------------------------------------------------------------------

    /// `mod_lruvec_state`: a node item of lruvec (memcg, node), hierarchically.
    #[inline]
    pub fn mod_lruvec_state(&mut self, memcg: MemcgId, node: usize, s: Stat, d: i64) {
        self.rstat.updated(d.unsigned_abs());
        self.add_lruvec_counters(memcg, node, s, d);
    }

    /// A node item the kernel keeps outside the memcg statistics (`__mod_node_page_state`,
    /// `node_stat_mod_folio`: `nr_dirtied`, `nr_written`, `nr_vmscan_write`,
    /// `nr_vmscan_immediate_reclaim`, `workingset_nodes`): `/proc/vmstat` shows it, and it feeds
    /// no rstat flush. The model keeps it on lruvec (memcg, node), without the rstat bookkeeping
    /// of [`Machine::mod_lruvec_state`].
    #[inline]
    pub fn mod_node_state(&mut self, memcg: MemcgId, node: usize, s: Stat, d: i64) {
        self.add_lruvec_counters(memcg, node, s, d);
    }

    /// [`Machine::add_lruvec_counters`] of lruvec `lv`.
    #[inline]
    fn add_lruvec_counters_at(&mut self, mut lv: usize, s: Stat, d: i64) {
        self.lruvec_stats_local[lv].add(s, d);
        loop {
            self.lruvec_stats[lv].add(s, d);
            match self.lruvec_parent[lv] {
                NO_LRUVEC => break,
                p => lv = p as usize,
            }
        }
    }

    /// The counters of [`Machine::mod_lruvec_state`] (local, then up the memcg tree), without the
    /// rstat bookkeeping: for [`Machine::mod_node_state`], and for updates whose rstat
    /// bookkeeping was counted where they happened ([`rstat::Rstat::updated`]) and whose counters
    /// are folded into one update (the kernel's per-CPU deltas) before anything reads them.
    #[inline]
    pub(crate) fn add_lruvec_counters(&mut self, memcg: MemcgId, node: usize, s: Stat, d: i64) {
        self.add_lruvec_counters_at(self.lruvec(memcg, node), s, d);
    }

    /// [`Machine::mod_lruvec_state`] of `d` pages changed one at a time, done at once: the
    /// counters move by `d` and the rstat bookkeeping sees `|d|` updates of one page
    /// ([`rstat::Rstat::updated_units`]), as the per-page calls would leave them.
    #[inline]
    pub fn mod_lruvec_state_pages(&mut self, memcg: MemcgId, node: usize, s: Stat, d: i64) {
        self.rstat.updated_units(d.unsigned_abs());
        self.add_lruvec_counters(memcg, node, s, d);
    }

    /// Hierarchical node item of lruvec (memcg, node) (`lruvec_page_state`).
    #[inline]
    pub fn lruvec_state(&self, memcg: MemcgId, node: usize, s: Stat) -> i64 {
        self.lruvec_stats[memcg as usize * self.nodes.len() + node].get(s)
    }

    /// Local (non-hierarchical) node item of lruvec (memcg, node) (`lruvec_page_state_local`).
    #[inline]
    pub fn lruvec_state_local(&self, memcg: MemcgId, node: usize, s: Stat) -> i64 {
        self.lruvec_stats_local[memcg as usize * self.nodes.len() + node].get(s)
    }

    /// `count_vm_events`: global only.
    #[inline]
    pub fn count_vm_events(&mut self, s: Stat, n: u64) {
        self.events.add(s, n as i64);
    }

    /// `count_memcg_events`: the memcg's copy (on its node-0 lruvec, hierarchically).
    #[inline]
    pub fn count_memcg_events(&mut self, memcg: MemcgId, s: Stat, n: u64) {
        self.mod_lruvec_state(memcg, 0, s, n as i64);
    }

    /// Both the global and the memcg copy of an event.
    #[inline]
    pub fn count_events(&mut self, memcg: MemcgId, s: Stat, n: u64) {
        self.count_vm_events(s, n);
        self.count_memcg_events(memcg, s, n);
    }

    /// `__update_lru_size` for lruvec (memcg, node), zone `zone`, without a folio at hand.
    #[inline]
    pub fn update_lru_size_raw(&mut self, memcg: MemcgId, node: usize, zone: usize, lru: Lru, d: i64) {
        if d == 0 {
            return;
        }
        self.mod_lruvec_state(memcg, node, lru.node_stat(), d);
        self.zone_stats[node][zone].add(lru.zone_stat(), d);
    }

    /// The reclaim work done so far per context, with the rmap walks folded in.
    pub fn work(&mut self) -> [Work; 2] {
        let n = self.rmap_count.replace(0);
        self.work[self.ctx].rmap_walks += n;
        self.work
    }

    /// Count folios looked at by reclaim in the current context.
    #[inline]
    pub fn count_scanned(&mut self, n: u64) {
        self.work[self.ctx].folios_scanned += n;
    }

    /// `lru_lock` of lruvec `lruvec` held at `site` over `folios` folios in the current context:
    /// counted, and logged for the engine when [`Machine::lock_log_on`].
    #[inline]
    pub fn lru_lock_held(&mut self, lruvec: usize, site: LruLockSite, folios: u64) {
        let n = self.rmap_count.replace(0);
        self.work[self.ctx].rmap_walks += n;
        // the counts before this hold, for the engine's log only (a copy of 12 counters per hold)
        let before = self.lock_log_on.then(|| self.work[self.ctx]);
        let w = &mut self.work[self.ctx];
        match site {
            LruLockSite::Add => {
                w.batch_rounds += 1;
                w.folios_added += folios;
            }
            LruLockSite::Batch => {
                w.batch_rounds += 1;
                w.folios_moved += folios;
            }
            LruLockSite::Putback => {
                w.lru_lock_rounds += 1;
                w.folios_putback += folios;
            }
            LruLockSite::Isolate | LruLockSite::Seq => w.lru_lock_rounds += 1,
            // not an lru_lock: its holds are logged by `swap_lock_tick`, never here
            LruLockSite::Swap => {}
        }
        if let Some(before) = before {
            self.lock_log.push(LockHold {
                ctx: self.ctx as u8,
                site,
                lruvec: lruvec as u32,
                folios: folios.min(u32::MAX as u64) as u32,
                before,
            });
        }
    }

    /// A folio added to per-CPU batch `kind` ([`FBATCH_ROTATE`] etc.) of `size` folios
    /// (`PAGEVEC_SIZE` 15 or `FOLIO_BATCH_SIZE` 31): when it fills, its flush holds the
    /// `lru_lock` of `lruvec` (the lruvec of the folio that filled it) over the batch.
    #[inline]
    pub fn fbatch_add(&mut self, kind: usize, size: usize, lruvec: usize) {
        let p = &mut self.fbatch_pending[kind];
        *p += 1;
        if *p as usize >= size {
            let n = *p as u64;
            *p = 0;
            self.lru_lock_held(lruvec, LruLockSite::Batch, n);
        }
    }

    /// Count PTEs looked at by a walk in the current context.
    #[inline]
    pub fn count_ptes(&mut self, n: u64) {
        self.work[self.ctx].ptes_walked += n;
    }

    /// Count PMD entries looked at and Bloom filter operations of an MGLRU page-table walk in the
    /// current context.
    #[inline]
    pub fn count_pmds(&mut self, pmds: u64, bloom_ops: u64) {
        let w = &mut self.work[self.ctx];
        w.pmds_walked += pmds;
        w.bloom_ops += bloom_ops;
    }

    /// Count a batched TLB flush of reclaim (`try_to_unmap_flush`) in the current context.
    #[inline]
    pub fn count_tlb_flush(&mut self) {
        self.work[self.ctx].tlb_flushes += 1;
    }

    /// Jiffies at the current virtual time (`HZ` = [`HZ`]).
    #[inline]
    pub fn jiffies(&self) -> u64 {
        self.now_ns / (1_000_000_000 / HZ)
    }

    /// `update_lru_size`: a folio of `(memcg, node, zone)` joins (`+1`) or leaves (`-1`) list
    /// `lru`, counted in pages (`d` times `folio_nr_pages`).
    #[inline]
    pub fn update_lru_size(&mut self, id: FolioId, lru: Lru, d: i64) {
        let f = self.folios[id];
        let d = d * i64::from(self.folios.nr_pages(id));
        let (memcg, node, zone) = (f.memcg, f.node(), f.zone());
        self.mod_lruvec_state(memcg, node, lru.node_stat(), d);
        self.zone_stats[node][zone].add(lru.zone_stat(), d);
    }

    /// `update_lru_sizes`: `nr_zone[zone]` folios of each zone of lruvec `(memcg, node)` joined
    /// (> 0) or left (< 0) list `lru` together (all joined or all left), as
    /// [`Machine::update_lru_size`] one at a time would count them.
    pub fn update_lru_sizes(&mut self, memcg: MemcgId, node: usize, lru: Lru, nr_zone: &[i64]) {
        debug_assert!(nr_zone.iter().all(|&n| n >= 0) || nr_zone.iter().all(|&n| n <= 0));
        let mut total = 0;
        for (zone, &n) in nr_zone.iter().enumerate() {
            if n != 0 {
                self.zone_stats[node][zone].add(lru.zone_stat(), n);
                total += n;
            }
        }
        if total != 0 {
            self.mod_lruvec_state_pages(memcg, node, lru.node_stat(), total);
        }
    }

    /// `/proc/vmstat` counters: node items summed over nodes, zone items, global events.
    pub fn vmstat(&self) -> Counters {
        let mut c = Counters::default();
        for &s in Stat::ALL {
            let v = match s.kind() {
                vmstat::StatKind::Zone if s == Stat::NrFreePages => self.nodes.iter().map(|n| n.free() as i64).sum(),
                vmstat::StatKind::Zone => self.zone_stats.iter().flatten().map(|z| z.get(s)).sum(),
                vmstat::StatKind::Node | vmstat::StatKind::Memcg => {
                    (0..self.nodes.len()).map(|n| self.lruvec_state(ROOT_MEMCG, n, s)).sum()
                }
                vmstat::StatKind::Event => self.events.get(s),
            };
            c.add(s, v);
        }
        c
    }

    /// `lru_gen_use_mm`: mark `mm` used on every node, so that the next walk visits it (`why`:
    /// what the model took for a context switch to it, for the trace).
    #[inline]
    pub fn lru_gen_use_mm(&mut self, mm: u32, why: &'static str) {
        self.mms[mm as usize].lru_gen_bitmap = !0;
        if self.ftrace.is_some() {
            self.trace(ftrace::Event::UseMm, format_args!("(lru_gen_use_mm) mm={mm} why={why}"));
        }
    }

    /// Trace `folio_referenced_one` of the mapping of `vpn` in `vma` (its PTE `young` or not).
    #[cold]
    pub fn trace_referenced_one(&mut self, vpn: u32, vma_start: u32, young: bool) {
        self.trace(
            ftrace::Event::Referenced,
            format_args!(
                "(folio_referenced_one) addr=0x{:x} vma_start=0x{:x} young={}",
                u64::from(vpn) << 12,
                u64::from(vma_start) << 12,
                u8::from(young)
            ),
        );
    }

    /// Trace event `e` if it is traced ([`ftrace`]): by kswapd when reclaim runs in its context
    /// ([`CTX_KSWAPD`]), else by the current task.
    #[cold]
    pub fn trace(&mut self, e: ftrace::Event, fields: std::fmt::Arguments) {
        let (now, who) = (self.now_ns, self.trace_who());
        if let Some(t) = self.ftrace.as_deref_mut() {
            t.emit(now, who, e, fields);
        }
    }

    /// Who a traced event is by: `None` for kswapd, else the current task.
    fn trace_who(&self) -> Option<u32> {
        (self.ctx != CTX_KSWAPD).then(|| self.current_task.unwrap_or(0))
    }

    /// The end of a direct or memcg reclaim tracepoint's line on the kernels that print it
    /// (`vmscan_reclaim_trace_ids`): ` pid=PID memcg_id=ID ` with the pid of the line's task
    /// (kswapd's 0, as [`ftrace::Ftrace::emit`] prints it) and `mem_cgroup_id()` of `memcg` (0
    /// for none; the trailing space is the kernel's empty `(in-irq)` field); empty elsewhere.
    pub fn reclaim_trace_ids(&self, memcg: Option<MemcgId>) -> String {
        if !self.reclaim_trace_ids {
            return String::new();
        }
        let pid = self.trace_who().unwrap_or(0);
        let id = memcg.map_or(0, crate::reclaim::mglru::admin::memcg_kernel_id);
        format!(" pid={pid} memcg_id={id} ")
    }

    /// Hierarchical counters of `memcg` summed over nodes (`memory.stat`'s source).
    pub fn memcg_stat(&self, memcg: MemcgId) -> Counters {
        let mut c = Counters::default();
        for n in 0..self.nodes.len() {
            c.add_all(&self.lruvec_stats[self.lruvec(memcg, n)]);
        }
        c
    }

    // ---------------------------------------------------------------------------------------------
    // Page frames
    // ---------------------------------------------------------------------------------------------

    /// Whether `zone` of `node` is above watermark `mark` after taking one page
    /// (`zone_watermark_ok` for order 0, with the zone's `lowmem_reserve` against the model's
    /// allocations: [`MachineConfig::lowmem_reserve`]).
    #[inline]
    pub fn zone_watermark_ok(&self, node: usize, zone: usize, mark: u64) -> bool {
        let z = &self.nodes[node].zones[zone];
        z.free > mark + z.lowmem_reserve
    }

    /// Take a free frame from `zone` of `node` and mark it allocated (`rmqueue`); counts `pgalloc_*`.
    pub fn take_frame(&mut self, node: usize, zone: usize) -> Option<FolioId> {
        let z = &mut self.nodes[node].zones[zone];
        let id = z.take(&mut self.folios)?;
        let kind = z.kind;
        self.folios[id].set(pg::ALLOCATED);
        self.count_vm_events(pgalloc_stat(kind), 1);
        Some(id)
    }

    /// Free a frame that is off every list, unmapped and uncharged by the caller (`free_unref_page`).
    pub fn free_frame(&mut self, id: FolioId) {
        let f = self.folios[id];
        debug_assert!(f.test(pg::ALLOCATED));
        debug_assert!(!f.test(pg::LRU) && f.mapcount == 0);
        self.lru_add.remove(id);
        // freed outside reclaim (the kernel frees it when the batch lets go): forget it
        self.lru_activate.remove(id);
        if let Some(x) = self.explain.as_deref_mut() {
            x.freed(id)
        }
        if self.nodes[f.node()].zones[f.zone()].give(&mut self.folios, id) {
            self.zone_above_high_again(f.node());
        }
        self.count_vm_events(Stat::Pgfree, 1);
    }

    /// A free cleared `ZONE_BELOW_HIGH` of a zone of `node`: with the profile's
    /// `pcp_free_clears_hopeless`, a kswapd that gave up on the node runs again, if a fallback
    /// node follows it (`kswapd_clear_hopeless(pgdat, KSWAPD_CLEAR_HOPELESS_PCP)`).
    pub fn zone_above_high_again(&mut self, node: usize) {
        if self.pcp_free_clears_hopeless
            && self.nodes[node].kswapd_failures >= crate::reclaim::MAX_RECLAIM_RETRIES
            && node + 1 < self.nodes.len()
        {
            self.nodes[node].kswapd_failures = 0;
        }
    }

    /// Uncharge a folio from its memcg (`mem_cgroup_uncharge`).
    pub fn uncharge(&mut self, id: FolioId) {
        if self.folios[id].test_clear(pg::CHARGED) {
            let m = self.folios[id].memcg;
            self.memcgs.uncharge(m, 1);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Page cache and swap cache
    // ---------------------------------------------------------------------------------------------

    /// Insert a charged folio into the page cache at (file, index); returns the shadow it replaced.
    pub fn page_cache_insert(&mut self, id: FolioId, file: u32, index: u64) -> Option<u64> {
        let f = &mut self.files[file as usize];
        let ch = f.set_slot(index, Slot::Folio(id));
        let old = ch.old;
        debug_assert!(!matches!(old, Slot::Folio(_)));
        f.nr_pages += 1;
        {
            let fo = &mut self.folios[id];
            fo.mapping = file;
            fo.index = index as u32;
        }
        let (m, n) = (self.folios[id].memcg, self.folios[id].node());
        if ch.born {
            self.files[file as usize].leaves[ch.leaf as usize].nid = n as u8;
        }
        if ch.nodes != 0 || self.files[file as usize].kmem_memcg.is_none() {
            self.file_kmem(file, ch.nodes, m);
        }
        if ch.shadow_only.is_some() {
            self.shadow_leaf_changed(file, index, ch);
        }
        self.mod_lruvec_state(m, n, Stat::NrFilePages, 1);
        match old {
            Slot::Shadow(s) => Some(s),
            _ => None,
        }
    }

    /// Remove a page-cache folio, leaving `shadow` in its slot (`__filemap_remove_folio`).
    pub fn page_cache_delete(&mut self, id: FolioId, shadow: Option<u64>) {
        let fo = self.folios[id];
        let f = &mut self.files[fo.mapping as usize];
        let index = fo.index as u64;
        let ch = f.set_slot(index, shadow.map_or(Slot::Empty, Slot::Shadow));
        f.nr_pages -= 1;
        if ch.nodes != 0 {
            self.file_kmem(fo.mapping, ch.nodes, fo.memcg);
        }
        if ch.shadow_only.is_some() {
            self.shadow_leaf_changed(fo.mapping, index, ch);
        }
        self.mod_lruvec_state(fo.memcg, fo.node(), Stat::NrFilePages, -1);
        if fo.test(pg::DIRTY) {
            self.mod_lruvec_state(fo.memcg, fo.node(), Stat::NrDirty, -1);
            self.files[fo.mapping as usize].nr_dirty -= 1;
        }
    }

    /// The lruvec whose shadow-node list holds file `file`'s leaf on node `nid`: that of the
    /// memcg its xarray nodes are charged to, or the root's when they are not charged
    /// ([`KmemConfig::xa_nodes`] off, as with `cgroup.memory=nokmem`).
    fn shadow_lruvec(&self, file: u32, nid: usize) -> usize {
        let owner = match self.files[file as usize].kmem_memcg {
            Some(m) if self.cfg.kmem.xa_nodes => m,
            _ => memcg::ROOT_MEMCG,
        };
        self.lruvec(owner, nid)
    }

    /// A leaf of file `file` (that of `index`) came to hold only shadow entries, or stopped:
    /// put it on its shadow-node list or take it off (`workingset_update_node`), counting
    /// `workingset_nodes` (a node item the kernel keeps outside the memcg statistics; the model
    /// keeps it on the lruvec, without the rstat bookkeeping).
    #[cold]
    fn shadow_leaf_changed(&mut self, file: u32, index: u64, ch: pagecache::SlotChange) {
        let leaf = self.files[file as usize].leaves[ch.leaf as usize];
        let nid = leaf.nid as usize;
        let lv = self.shadow_lruvec(file, nid);
        self.shadow_lru.ensure(self.lruvec_stats.len());
        if ch.shadow_only == Some(true) {
            let h = self.shadow_lru.add(
                lv,
                pagecache::ShadowLeaf {
                    file,
                    leaf: index >> pagecache::CHUNK_SHIFT,
                    chunk: ch.leaf,
                },
            );
            self.files[file as usize].leaves[ch.leaf as usize].lru = h;
            self.add_lruvec_counters_at(lv, Stat::WorkingsetNodes, 1);
        } else {
            self.shadow_lru.del(leaf.lru);
            self.files[file as usize].leaves[ch.leaf as usize].lru = pagecache::NOT_LISTED;
            self.add_lruvec_counters_at(lv, Stat::WorkingsetNodes, -1);
        }
    }

    /// Reclaim the oldest leaf on lruvec `lv`'s shadow-node list (`shadow_lru_isolate`): take it
    /// off the list, delete it with its shadow entries (`xa_delete_node`; refaults on those pages
    /// are no longer recognised), uncharge its nodes and count `workingset_nodereclaim`. False if
    /// the list is empty.
    pub fn reclaim_shadow_leaf(&mut self, lv: usize) -> bool {
        let Some((h, l)) = self.shadow_lru.oldest(lv) else {
            return false;
        };
        self.shadow_lru.del(h);
        self.add_lruvec_counters_at(lv, Stat::WorkingsetNodes, -1);
        let f = &mut self.files[l.file as usize];
        f.leaves[l.chunk as usize].lru = pagecache::NOT_LISTED;
        let nodes = f.delete_shadow_leaf(l.leaf);
        let owner = (lv / self.nodes.len()) as MemcgId;
        if nodes != 0 {
            self.file_kmem(l.file, nodes, owner);
        }
        self.mod_lruvec_state(owner, lv % self.nodes.len(), Stat::WorkingsetNodereclaim, 1);
        true
    }

    /// Add an anon folio to the swap cache at `slot` (`add_to_swap_cache`).
    pub fn swap_cache_add(&mut self, id: FolioId, slot: u32) -> Option<u64> {
        let fo = &mut self.folios[id];
        debug_assert!(fo.is_anon() && !fo.test(pg::SWAPCACHE));
        // the rmap root moves to the slot's class, the slot takes its place (see `mm::folio`)
        let old = self.swap.cache_add(slot, id, fo.mapping);
        fo.set(pg::SWAPCACHE);
        fo.mapping = slot;
        let (m, n) = (fo.memcg, fo.node());
        self.mod_lruvec_state(m, n, Stat::NrSwapcached, 1);
        old
    }

    /// Remove a folio from the swap cache, leaving `shadow` (`__delete_from_swap_cache`); frees the
    /// slot if no PTE references it any more.
    pub fn swap_cache_delete(&mut self, id: FolioId, shadow: Option<u64>) {
        let fo = self.folios[id];
        let slot = fo.swap_slot();
        let root = self.swap.cache_delete(slot, shadow);
        let f = &mut self.folios[id];
        f.clear(pg::SWAPCACHE);
        f.mapping = root;
        self.mod_lruvec_state(fo.memcg, fo.node(), Stat::NrSwapcached, -1);
        if self.swap.count(slot) == 0 {
            self.swap_release(slot);
        }
    }

    /// Whether the swap I/O of an order-0 folio counts `pgpgin`/`pgpgout` (`submit_bio`): always
    /// from 6.3; in 6.1 (switch `remove_rw_page` off) not on a synchronous device, whose
    /// `->rw_page` (`bdev_read_page`, `bdev_write_page`) bypasses the block layer's accounting.
    #[inline]
    pub fn swap_io_counts_pgpg(&self) -> bool {
        self.remove_rw_page || !self.swap_synchronous()
    }

    /// Whether the swap device is `SWP_SYNCHRONOUS_IO` (zram, or a device configured so: brd,
    /// pmem).
    #[inline]
    pub fn swap_synchronous(&self) -> bool {
        self.cfg.zram_ratio.is_some() || self.cfg.swap_synchronous
    }

    /// `swap_use_vma_readahead`: swap read-ahead by virtual address, unless a rotational swap
    /// device is on (`nr_rotate_swap`), which leaves read-ahead by swap offset.
    #[inline]
    pub fn swap_vma_readahead(&self) -> bool {
        !self.cfg.swap_rotational
    }

    /// Allocate a swap slot charged to `memcg` (`folio_alloc_swap` + `mem_cgroup_try_charge_swap`).
    pub fn swap_acquire(&mut self, memcg: MemcgId) -> Option<u32> {
        // `__mem_cgroup_try_charge_swap`: a folio of a removed memcg charges (and records) its
        // nearest online ancestor
        let memcg = self.memcgs.online_ancestor(memcg);
        if self.memcgs.swap_margin(memcg) == 0 {
            return None;
        }
        let slot = self.swap.alloc()?;
        self.swap.set_owner(slot, memcg);
        self.memcgs.swap_charge(memcg, 1);
        self.swap_lock_tick(0);
        Some(slot)
    }

    /// Allocate a free cluster of `n` slots charged to `memcg` for a large folio
    /// (`folio_alloc_swap` of a large folio: `get_swap_pages` for its pages, bypassing the
    /// per-CPU slot cache; `mem_cgroup_try_charge_swap` of its pages). `None`: no free cluster,
    /// or the memcg's swap limit has no room for them.
    pub fn swap_acquire_cluster(&mut self, memcg: MemcgId, n: u32) -> Option<u32> {
        let memcg = self.memcgs.online_ancestor(memcg);
        if self.memcgs.swap_margin(memcg) < u64::from(n) {
            return None;
        }
        let first = self.swap.alloc_cluster(n)?;
        for s in first..first + n {
            self.swap.set_owner(s, memcg);
        }
        self.memcgs.swap_charge(memcg, i64::from(n));
        Some(first)
    }

    /// A slot allocated (`kind` 0) or freed (1) on the current CPU: when its per-CPU slot cache
    /// or cluster runs out (or its return cache fills), the swap device's lock is taken for the
    /// batch (`get_swap_pages` refilling `SWAP_BATCH` = 64 slots, `swapcache_free_entries`
    /// returning 64; from 6.15 a new cluster of 512 slots for the allocating CPU, and frees take
    /// only the cluster's own lock, not modelled).
    fn swap_lock_tick(&mut self, kind: usize) {
        let batch = match (self.swap_percpu_cluster, kind) {
            (false, _) => 64,
            (true, 0) => 512,
            (true, _) => return,
        };
        let cpu = self.cpu as usize;
        if self.swap_left.len() <= cpu {
            self.swap_left.resize(cpu + 1, [0, 0]);
        }
        let left = &mut self.swap_left[cpu][kind];
        if *left == 0 {
            *left = batch;
            let w = &mut self.work[self.ctx];
            let before = *w;
            w.swap_lock_rounds += 1;
            w.swap_slots_locked += u64::from(batch);
            if self.lock_log_on {
                self.lock_log.push(LockHold {
                    ctx: self.ctx as u8,
                    site: LruLockSite::Swap,
                    lruvec: u32::MAX,
                    // up to 6.12 the slots are scanned under the device's lock; from 6.15 it is
                    // held only to take a free cluster, whose slots are scanned under its own
                    folios: if self.swap_percpu_cluster { 0 } else { batch },
                    before,
                });
            }
        }
        *left -= 1;
    }

    /// The `compressed_pct` of the anon region folio `id` belongs to: the VMA of the first member
    /// of its fork family that still has one at its page (0: none given, or not anon).
    pub fn folio_compressed_pct(&self, id: FolioId) -> u8 {
        let f = self.folios[id];
        if !f.is_anon() {
            return 0;
        }
        self.mms[self.anon_root(id) as usize]
            .anon_family
            .iter()
            .find_map(|&mm| {
                let x = &self.mms[mm as usize];
                x.find_vma(f.index).map(|vi| x.vmas[vi].compressed_pct)
            })
            .unwrap_or(0)
    }

    /// zram's `mm_stat` and `io_stat` now (`None` unless the swap device is zram).
    pub fn zram_report(&self) -> Option<zram::ZramReport> {
        self.cfg.zram_ratio?;
        Some(zram::ZramReport::new(
            self.zram_algorithm,
            &self.zram_stats,
            self.zram_bytes,
            self.zram_pool.len() as u64,
        ))
    }

    /// Swap-outs by region compressibility since `before` (a copy of `pswpout_by_pct`):
    /// (`compressed_pct`, pages) for each class that has any.
    pub fn pswpout_classes(&self, before: &[u64; 101]) -> Vec<(u8, u64)> {
        (0..=100u8)
            .map(|p| (p, self.pswpout_by_pct[p as usize] - before[p as usize]))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// Count a swap-out of folio `id` (`pswpout`, globally and for its memcg:
    /// `count_memcg_folio_events` in `swap_writepage`) and its region's compressibility class.
    pub fn count_pswpout(&mut self, id: FolioId) {
        let memcg = self.folios[id].memcg;
        self.count_events(memcg, Stat::Pswpout, 1);
        let pct = self.folio_compressed_pct(id).min(100);
        self.pswpout_by_pct[pct as usize] += 1;
    }

    /// zram: store the compressed copy of anon folio `id` in `slot`, growing the pool (its pages
    /// are taken from the node regardless of watermarks, as zsmalloc's allocations may dip into
    /// reserves). A page that compresses to zsmalloc's huge-class size or more is stored whole
    /// (`huge_pages`). Returns false if no page could be had (`failed_writes`).
    pub fn zram_store(&mut self, id: FolioId, slot: u32) -> bool {
        let Some(ratio) = self.cfg.zram_ratio else {
            return true;
        };
        self.zram_free(slot);
        let f = self.folios[id];
        let pct = match self.folio_compressed_pct(id) {
            0 => (100.0 / ratio.max(1.0)).round() as u64,
            p => p as u64,
        };
        // zram_write_page: what the page compresses to, kept as its percentage (the bytes are a
        // function of it, `swap::zram_stored_bytes`)
        let pct = pct.clamp(1, 100) as u8;
        let bytes = swap::zram_stored_bytes(pct);
        let huge = bytes == PAGE_SIZE;
        self.zram_bytes += bytes;
        self.swap.set_zram_pct(slot, pct);
        while (self.zram_pool.len() as u64) < self.zram_bytes.div_ceil(PAGE_SIZE) {
            let node = f.node();
            let zone = (0..self.nodes[node].zones.len())
                .rev()
                .find(|&z| self.nodes[node].zones[z].free_frames() > 0);
            let Some(z) = zone else {
                self.zram_free(slot);
                self.zram_stats.failed_writes += 1;
                return false;
            };
            let frame = self.take_frame(node, z).expect("a free frame");
            self.folios[frame].set(pg::ZSPAGE);
            self.zone_stats[node][z].add(Stat::NrZspages, 1);
            self.zram_pool.push(frame);
        }
        let st = &mut self.zram_stats;
        st.pages_stored += 1;
        st.max_used_pages = st.max_used_pages.max(self.zram_pool.len() as u64);
        if huge {
            st.huge_pages += 1;
            st.huge_pages_since += 1;
        }
        true
    }

    /// zram: drop the compressed copy held for `slot`, shrinking the pool.
    pub fn zram_free(&mut self, slot: u32) {
        let pct = self.swap.zram_pct(slot);
        if pct == 0 {
            return;
        }
        self.swap.set_zram_pct(slot, 0);
        let b = swap::zram_stored_bytes(pct);
        self.zram_stats.pages_stored -= 1;
        if b == PAGE_SIZE {
            self.zram_stats.huge_pages -= 1;
        }
        self.zram_bytes -= b;
        while self.zram_pool.len() as u64 > self.zram_bytes.div_ceil(PAGE_SIZE) {
            let frame = self.zram_pool.pop().expect("a pool page");
            let (n, z) = (self.folios[frame].node(), self.folios[frame].zone());
            self.zone_stats[n][z].add(Stat::NrZspages, -1);
            self.free_frame(frame);
        }
    }

    /// Release a slot no PTE and no swap-cache folio holds, uncharging its memcg.
    pub fn swap_release(&mut self, slot: u32) {
        if self.cfg.zram_ratio.is_some() {
            // swap_slot_free_notify: zram counts every slot swap frees
            self.zram_stats.notify_free += 1;
        }
        self.zram_free(slot);
        let owner = self.swap.owner(slot);
        self.memcgs.swap_charge(owner, -1);
        self.swap.free_slot(slot);
        self.swap_lock_tick(1);
    }

    /// Drop a swap-cache folio's slot while keeping the folio (`folio_free_swap`): only when no PTE
    /// still holds the entry. Returns whether it was freed.
    pub fn folio_free_swap(&mut self, id: FolioId) -> bool {
        let fo = self.folios[id];
        if !fo.test(pg::SWAPCACHE) || self.swap.count(fo.swap_slot()) > 0 {
            return false;
        }
        self.swap_cache_delete(id, None);
        self.folios[id].set(pg::DIRTY);
        true
    }

    // ---------------------------------------------------------------------------------------------
    // Page tables and rmap
    // ---------------------------------------------------------------------------------------------

    /// The PTE of `vpn` in `mm`, or `pte::NONE` when no PTE table covers it. Under a huge PMD
    /// every page reads as the PMD's present, young and dirty bits and its head folio
    /// ([`vm::pmd_leaf_pte`]).
    #[inline]
    pub fn pte(&self, mm: u32, vpn: u32) -> u32 {
        let m = &self.mms[mm as usize];
        let pmd = m.pmds[MmStruct::pmd_index(vpn)];
        if !pmd_is_table(pmd) {
            return pmd_leaf_pte(pmd);
        }
        self.ptes.table(pmd & !PMD_YOUNG)[(vpn as usize) % PTRS_PER_PTE]
    }

    /// `vpn`'s PTE where its table exists, without a bounds failure (`None` for an unknown mm, an
    /// address its page tables do not cover, or no PTE table).
    #[inline]
    fn pte_entry(&self, mm: u32, vpn: u32) -> Option<&u32> {
        let m = self.mms.get(mm as usize)?;
        let pmd = m.pmds.get(m.pmd_index_checked(vpn)?)?;
        if !pmd_is_table(*pmd) {
            // a huge PMD is its pages' PTE
            return (*pmd != PMD_NONE).then_some(pmd);
        }
        self.ptes
            .get(*pmd & !PMD_YOUNG)
            .map(|t| &t[(vpn as usize) % PTRS_PER_PTE])
    }

    /// The cache line of `vpn`'s PTE, if its PTE table exists (a hint, see [`prefetch`]).
    #[inline]
    pub fn prefetch_pte(&self, mm: u32, vpn: u32) {
        if let Some(e) = self.pte_entry(mm, vpn) {
            prefetch(e);
        }
    }

    /// `vpn`'s PTE, `pte::NONE` where the mm or its table does not exist.
    #[inline]
    pub fn pte_or_none(&self, mm: u32, vpn: u32) -> u32 {
        // a huge PMD's own bit is no PTE bit (it is `pte::SWAP`'s)
        self.pte_entry(mm, vpn)
            .map_or(pte::NONE, |&e| if e & pte::PRESENT != 0 { e & !PMD_HUGE } else { e })
    }

    /// Mutable PTE of `vpn`, allocating the PTE table if needed: a new table's PMD entry is
    /// installed accessed (x86's `pmd_populate` writes `_PAGE_TABLE`, which has `_PAGE_ACCESSED`).
    /// Writing a PTE is software's doing and leaves the PMD entry's accessed bit alone; the MMU
    /// sets it when it walks the table for an access ([`Machine::pmd_mkyoung`]). Under a huge
    /// PMD it is the PMD itself, whose young and dirty bits are the PTE's: set or clear those,
    /// never store a whole PTE value there (split the PMD first).
    #[inline]
    pub fn pte_mut(&mut self, mm: u32, vpn: u32) -> &mut u32 {
        self.pte_slot(mm, vpn, false)
    }

    /// Mutable PTE of `vpn` for an access the MMU makes: [`Machine::pte_mut`] and
    /// [`Machine::pmd_mkyoung`] in one lookup.
    #[inline]
    pub fn pte_mut_walked(&mut self, mm: u32, vpn: u32) -> &mut u32 {
        self.pte_slot(mm, vpn, true)
    }

    /// [`Machine::pte_mut`], the PMD entry made young too if `walked`.
    #[inline(always)]
    fn pte_slot(&mut self, mm: u32, vpn: u32, walked: bool) -> &mut u32 {
        let pi = MmStruct::pmd_index(vpn);
        let mut pmd = self.mms[mm as usize].pmds[pi];
        if !pmd_is_table(pmd) {
            if pmd != PMD_NONE {
                return &mut self.mms[mm as usize].pmds[pi];
            }
            pmd = self.ptes.alloc() | PMD_YOUNG;
            self.pte_table_kmem(mm, 1);
            self.mms[mm as usize].pmds[pi] = pmd;
        } else if walked && pmd & PMD_YOUNG == 0 {
            self.mms[mm as usize].pmds[pi] = pmd | PMD_YOUNG;
        }
        &mut self.ptes.table_mut(pmd & !PMD_YOUNG)[(vpn as usize) % PTRS_PER_PTE]
    }

    /// The MMU walked the page table to `vpn` for an access: x86 sets the non-leaf PMD entry's
    /// accessed bit (a huge PMD's own bit is its PTE's, set by the access itself).
    #[inline]
    pub fn pmd_mkyoung(&mut self, mm: u32, vpn: u32) {
        let pi = MmStruct::pmd_index(vpn);
        let pmd = &mut self.mms[mm as usize].pmds[pi];
        if pmd_is_table(*pmd) {
            *pmd |= PMD_YOUNG;
        }
    }

    /// `nr` PTE tables of `mm` allocated (> 0) or freed, charged to its memcg ([`KmemConfig`]).
    #[cold]
    pub fn pte_table_kmem(&mut self, mm: u32, nr: i64) {
        if self.cfg.kmem.page_tables {
            let memcg = self.mms[mm as usize].kmem_memcg;
            self.kmem_pages(memcg, nr, true);
        }
    }

    /// Map folio `id` at `vpn` of `mm` young (and dirty if `write`), as the fault handler does.
    pub fn map_folio(&mut self, mm: u32, vpn: u32, id: FolioId, write: bool) {
        let v = pte::PRESENT | pte::YOUNG | if write { pte::DIRTY } else { 0 } | id;
        *self.pte_mut(mm, vpn) = v;
        let f = &mut self.folios[id];
        f.mapcount += 1;
        let anon = f.is_anon();
        let (m, n) = (f.memcg, f.node());
        let mmr = &mut self.mms[mm as usize];
        if anon {
            mmr.rss_anon += 1;
        } else {
            mmr.rss_file += 1;
        }
        if self.folios[id].mapcount == 1 {
            let s = if anon { Stat::NrAnonPages } else { Stat::NrMapped };
            self.mod_lruvec_state(m, n, s, 1);
        }
    }

    /// Visit every (mm, vpn) whose PTE maps folio `id` (the rmap walk). The callback returns false
    /// to stop the walk.
    pub fn rmap_walk(&self, id: FolioId, mut f: impl FnMut(u32, u32, &Vma) -> bool) {
        let fo = self.folios[id];
        if fo.mapcount == 0 {
            return;
        }
        self.rmap_count.set(self.rmap_count.get() + fo.mapcount as u64);
        if fo.is_anon() {
            // the anon_vma walk: every family member whose PTE at the page maps this folio
            for &mmid in &self.mms[self.anon_root(id) as usize].anon_family {
                let mm = &self.mms[mmid as usize];
                if !mm.alive || mm.pmd_index_checked(fo.index).is_none() {
                    continue;
                }
                let p = self.pte(mmid, fo.index);
                if p & pte::PRESENT == 0 || p & pte::PFN_MASK != id {
                    continue;
                }
                if let Some(vi) = mm.find_vma(fo.index) {
                    if !f(mmid, fo.index, &mm.vmas[vi]) {
                        return;
                    }
                }
            }
            return;
        }
        for &(mmid, start) in &self.files[fo.mapping as usize].mappings {
            let mm = &self.mms[mmid as usize];
            if !mm.alive {
                continue;
            }
            let Some(vi) = mm.find_vma(start) else { continue };
            let vma = &mm.vmas[vi];
            debug_assert_eq!(vma.start, start, "stale i_mmap entry");
            let idx = fo.index;
            if idx < vma.pgoff || idx - vma.pgoff >= vma.pages() {
                continue;
            }
            let vpn = vma.start + (idx - vma.pgoff);
            let p = self.pte(mmid, vpn);
            if p & pte::PRESENT != 0 && p & pte::PFN_MASK == id && !f(mmid, vpn, vma) {
                return;
            }
        }
    }

    /// `folio_referenced`: test and clear the accessed bit of every PTE mapping the folio. With a
    /// target memcg, mappings of other memcgs' processes are skipped (`invalid_folio_referenced_vma`).
    /// A `VM_LOCKED` mapping stops the walk and is reported in `vm_flags`. `vma_has_recency`
    /// (6.3, "mm: add vma_has_recency()"): mappings without recency (`VM_SEQ_READ`,
    /// `VM_RAND_READ`) are skipped too, their accessed bits left alone; without it (6.1) every
    /// young bit is cleared and counts unless the mapping is `VM_SEQ_READ`.
    pub fn folio_referenced(&mut self, id: FolioId, target: Option<MemcgId>, vma_has_recency: bool) -> Referenced {
        if self.folios[id].mapcount == 0 {
            // what the walk below gives an unmapped folio (`rmap_walk` returns at once), without
            // building its result list: most folios reclaim looks at are unmapped page cache
            return Referenced::default();
        }
        let mut hits: smallvec_like::Few = Default::default();
        let mut r = Referenced::default();
        let memcgs = &self.memcgs;
        let mms = &self.mms;
        self.rmap_walk(id, |mm, vpn, vma| {
            if let Some(t) = target {
                if !memcgs.is_descendant(mms[mm as usize].memcg, t) {
                    return true;
                }
            }
            if vma_has_recency && !vma.has_recency() {
                return true;
            }
            if vma.flags & vm::vmf::LOCKED != 0 {
                r.vm_flags |= vm::vmf::LOCKED;
                return false;
            }
            hits.push((mm, vpn, vma.flags));
            true
        });
        for &(mm, vpn, flags) in hits.iter() {
            if self.ftrace.is_some() {
                let x = &self.mms[mm as usize];
                let start = x.find_vma(vpn).map_or(vpn, |i| x.vmas[i].start);
                let young = self.pte(mm, vpn) & pte::YOUNG != 0;
                self.trace_referenced_one(vpn, start, young);
            }
            let p = self.pte_mut(mm, vpn);
            if *p & pte::YOUNG != 0 {
                *p &= !pte::YOUNG;
                // 6.1: "Don't treat a reference through a sequentially read mapping as such."
                if flags & vm::vmf::SEQ_READ == 0 {
                    r.ptes += 1;
                    r.vm_flags |= flags;
                }
            }
        }
        r
    }

    /// `try_to_unmap`: replace every PTE mapping the folio with a swap entry (anon, which must be in
    /// the swap cache) or with nothing (file); dirty PTE bits move to the folio.
    pub fn try_to_unmap(&mut self, id: FolioId) {
        let mut maps: smallvec_like::Few = Default::default();
        self.rmap_walk(id, |mm, vpn, vma| {
            maps.push((mm, vpn, vma.flags));
            true
        });
        for &(mm, vpn, _) in maps.iter() {
            self.unmap_one(id, mm, vpn);
        }
        debug_assert_eq!(self.folios[id].mapcount, 0);
    }

    /// Remove one mapping of folio `id` at (mm, vpn).
    pub fn unmap_one(&mut self, id: FolioId, mm: u32, vpn: u32) {
        let anon = self.folios[id].is_anon();
        let old = *self.pte_mut(mm, vpn);
        debug_assert!(old & pte::PRESENT != 0 && old & pte::PFN_MASK == id);
        if old & pte::DIRTY != 0 {
            self.folio_mark_dirty(id);
        }
        let new = if anon {
            debug_assert!(self.folios[id].test(pg::SWAPCACHE));
            let slot = self.folios[id].swap_slot();
            self.swap.dup(slot, id);
            self.mms[mm as usize].swap_ents += 1;
            pte::SWAP | slot
        } else {
            pte::NONE
        };
        *self.pte_mut(mm, vpn) = new;
        let m = &mut self.mms[mm as usize];
        if anon {
            m.rss_anon -= 1;
        } else {
            m.rss_file -= 1;
        }
        let f = &mut self.folios[id];
        f.mapcount -= 1;
        if f.mapcount == 0 {
            let (mc, n) = (f.memcg, f.node());
            let s = if anon { Stat::NrAnonPages } else { Stat::NrMapped };
            self.mod_lruvec_state(mc, n, s, -1);
        }
    }

    /// `migrate_folio` + `remove_migration_ptes`: move isolated folio `src` (off every LRU list)
    /// into the free frame `dst` just taken on another node: its flags, mapping, charge and
    /// mappings go with it (every PTE, its page-cache or swap-cache slot, the node items it
    /// counts in), and `src`'s frame is freed. The memcg charge moves (`mem_cgroup_migrate`):
    /// usage does not change. `dst` is isolated too; the caller puts it on an LRU list.
    pub fn move_folio(&mut self, src: FolioId, dst: FolioId) {
        let f = self.folios[src];
        debug_assert!(!f.test(pg::LRU) && f.test(pg::ISOLATED));
        let (n0, n1) = (f.node(), self.folios[dst].node());
        let mut maps: smallvec_like::Few = Default::default();
        self.rmap_walk(src, |mm, vpn, _| {
            maps.push((mm, vpn, 0));
            true
        });
        for &(mm, vpn, _) in maps.iter() {
            let p = self.pte_mut(mm, vpn);
            *p = (*p & !pte::PFN_MASK) | dst;
        }
        {
            let keep = pg::NODE_MASK | pg::ZONE_MASK;
            let d = &mut self.folios[dst];
            let here = d.flags & keep;
            *d = f;
            d.flags = (f.flags & !(keep | pg::GEN_MASK | pg::LIST_GEN_MASK)) | here;
            d.prev = folio::NIL;
            d.next = folio::NIL;
        }
        let anon = f.is_anon();
        if f.test(pg::SWAPCACHE) {
            let slot = f.swap_slot();
            self.swap.cache_move(slot, dst);
        } else if !anon {
            self.files[f.mapping as usize].set_slot(f.index as u64, Slot::Folio(dst));
        }
        let isolated = if f.is_file_lru() {
            Stat::NrIsolatedFile
        } else {
            Stat::NrIsolatedAnon
        };
        // the boot shmem's folios still in its page cache ([`BootShmem`])
        let shmem = anon && self.is_boot_shmem(src) && !self.boot_shmem_holds(src);
        for (s, on) in [
            (Stat::NrAnonPages, anon && f.mapped()),
            (Stat::NrMapped, !anon && f.mapped()),
            (Stat::NrFilePages, !anon),
            (Stat::NrDirty, !anon && f.test(pg::DIRTY)),
            (Stat::NrSwapcached, f.test(pg::SWAPCACHE)),
            (Stat::NrShmem, shmem),
            (isolated, true),
        ] {
            if on {
                self.mod_lruvec_state(f.memcg, n0, s, -1);
                self.mod_lruvec_state(f.memcg, n1, s, 1);
            }
        }
        let s = &mut self.folios[src];
        s.mapcount = 0;
        s.clear(pg::ISOLATED | pg::CHARGED | pg::SWAPCACHE | pg::DIRTY);
        self.free_frame(src);
    }

    /// `folio_mark_dirty`, with `nr_dirty` accounting for file folios.
    pub fn folio_mark_dirty(&mut self, id: FolioId) {
        let f = &mut self.folios[id];
        if f.test(pg::DIRTY) {
            return;
        }
        f.set(pg::DIRTY);
        if !f.is_anon() {
            let (m, n, file) = (f.memcg, f.node(), f.mapping);
            self.mod_lruvec_state(m, n, Stat::NrDirty, 1);
            self.mod_node_state(m, n, Stat::NrDirtied, 1);
            let now = self.now_ns;
            let fl = &mut self.files[file as usize];
            if fl.nr_dirty == 0 {
                // __mark_inode_dirty: the inode joins its memcg's writeback list
                fl.dirtied_when = now;
                fl.wb_memcg = m;
                if self.wb_wakeup == u64::MAX {
                    self.wb_wakeup = now + crate::reclaim::writeback::DIRTY_WRITEBACK_INTERVAL_NS;
                }
            }
            fl.nr_dirty += 1;
        }
    }

    /// `folio_clear_dirty_for_io` for a file folio: the data went to storage.
    pub fn folio_clear_dirty(&mut self, id: FolioId) {
        let f = &mut self.folios[id];
        if !f.test_clear(pg::DIRTY) {
            return;
        }
        if !f.is_anon() {
            let (m, n, file) = (f.memcg, f.node(), f.mapping);
            self.mod_lruvec_state(m, n, Stat::NrDirty, -1);
            self.files[file as usize].nr_dirty -= 1;
        }
    }

    /// Pages on the LRU lists of type `t` in lruvec (memcg, node), hierarchical.
    pub fn lru_pages(&self, memcg: MemcgId, node: usize, t: usize) -> u64 {
        let (i, a) = if t == FILE {
            (Stat::NrInactiveFile, Stat::NrActiveFile)
        } else {
            (Stat::NrInactiveAnon, Stat::NrActiveAnon)
        };
        (self.lruvec_state(memcg, node, i) + self.lruvec_state(memcg, node, a)).max(0) as u64
    }
}

/// A tiny fixed-capacity vector for rmap results, so rmap walks do not allocate for the common
/// case of one or a few mappings.
mod smallvec_like {
    /// Up to 8 inline entries, spilling to the heap beyond.
    #[derive(Default)]
    pub struct Few {
        inline: [(u32, u32, u32); 8],
        n: usize,
        spill: Vec<(u32, u32, u32)>,
    }
    impl Few {
        pub fn push(&mut self, v: (u32, u32, u32)) {
            if self.n < 8 {
                self.inline[self.n] = v;
                self.n += 1;
            } else {
                self.spill.push(v);
            }
        }
        pub fn iter(&self) -> impl Iterator<Item = &(u32, u32, u32)> {
            self.inline[..self.n].iter().chain(self.spill.iter())
        }
    }
}

/// The `pgalloc_*` event of a page allocated from a zone of `kind`.
pub fn pgalloc_stat(kind: ZoneType) -> Stat {
    match kind {
        ZoneType::Dma => Stat::PgallocDma,
        ZoneType::Dma32 => Stat::PgallocDma32,
        ZoneType::Normal => Stat::PgallocNormal,
        ZoneType::Movable => Stat::PgallocMovable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anon_map_unmap_goes_through_swap_entry() {
        let mut m = Machine::new(MachineConfig::simple(1024, 64));
        let mm = m.create_mm(ROOT_MEMCG);
        let va = m.mmap(mm, 4, 0, None);
        let id = m.take_frame(0, 0).unwrap();
        m.memcgs.force_charge(ROOT_MEMCG, 1);
        {
            let f = &mut m.folios[id];
            f.set(pg::ANON | pg::SWAPBACKED);
        }
        m.set_anon_rmap(id, mm, va + 1);
        m.map_folio(mm, va + 1, id, true);
        assert_eq!(m.lruvec_state(ROOT_MEMCG, 0, Stat::NrAnonPages), 1);
        let r = m.folio_referenced(id, None, true);
        assert_eq!(r.ptes, 1);
        assert_eq!(m.folio_referenced(id, None, true).ptes, 0, "young bit was cleared");
        let slot = m.swap.alloc().unwrap();
        m.swap_cache_add(id, slot);
        m.try_to_unmap(id);
        assert!(m.folios[id].test(pg::DIRTY), "dirty PTE bit moved to the folio");
        assert_eq!(m.pte(mm, va + 1), pte::SWAP | slot);
        assert_eq!(m.swap.count(slot), 1);
        assert_eq!(
            m.swap.cache_slot(slot),
            Slot::Folio(id),
            "an entry holds the slot: the folio is found by it"
        );
        assert_eq!(m.mms[mm as usize].rss_anon, 0);
        assert_eq!(m.lruvec_state(ROOT_MEMCG, 0, Stat::NrAnonPages), 0);
    }

    /// An anon folio in the swap cache keeps its slot in `mapping` and its rmap root in the slot's
    /// class (the 24-byte folio record has no `private` word): the rmap walk still finds
    /// every PTE of the fork family, a late `set_anon_rmap` (a swap-in learning its page) and a
    /// migration keep the root, and leaving the swap cache gives `mapping` back to the root.
    #[test]
    fn a_swap_cache_folio_keeps_its_rmap_root_in_the_cache_entry() {
        let mut m = Machine::new(MachineConfig::simple(1024, 64));
        for _ in 0..3 {
            m.create_mm(ROOT_MEMCG);
        }
        let root = m.create_mm(ROOT_MEMCG);
        let va = m.mmap(root, 4, 0, None);
        let id = m.take_frame(0, 0).unwrap();
        m.memcgs.force_charge(ROOT_MEMCG, 1);
        m.folios[id].set(pg::ANON | pg::SWAPBACKED);
        m.set_anon_rmap(id, root, va + 1);
        m.map_folio(root, va + 1, id, true);
        let child = m.reserve_mm(ROOT_MEMCG);
        m.fork_mm(root, child);
        assert_eq!(m.folios[id].mapcount, 2);
        let walk = |m: &Machine, id| {
            let mut v = vec![];
            m.rmap_walk(id, |mm, vpn, _| {
                v.push((mm, vpn));
                true
            });
            v.sort();
            v
        };
        let both = vec![(root, va + 1), (child, va + 1)];
        assert_eq!(walk(&m, id), both);

        let _ = m.swap.alloc().unwrap();
        let slot = m.swap.alloc().unwrap();
        assert_ne!(slot, root);
        m.swap_cache_add(id, slot);
        assert_eq!((m.folios[id].mapping, m.folios[id].swap_slot()), (slot, slot));
        assert_eq!(m.anon_root(id), root);
        assert_eq!(m.folio_mapping(id), root);
        assert!(m.swap.cached(slot));
        assert_eq!(walk(&m, id), both, "the rmap of a swap-cache folio");
        m.set_anon_rmap(id, root, va + 1);
        assert_eq!((m.folios[id].mapping, m.anon_root(id)), (slot, root));

        m.folios[id].set(pg::ISOLATED);
        let dst = m.take_frame(0, 0).unwrap();
        m.move_folio(id, dst);
        assert!(m.swap.cached(slot));
        assert_eq!((m.folios[dst].swap_slot(), m.anon_root(dst)), (slot, root));
        assert_eq!(walk(&m, dst), both, "the PTEs follow the migration");

        m.swap_cache_delete(dst, None);
        assert!(!m.folios[dst].test(pg::SWAPCACHE));
        assert_eq!((m.folios[dst].mapping, m.anon_root(dst)), (root, root));
        assert!(!m.swap.cached(slot));
        assert_eq!(m.swap.cache_slot(slot), Slot::Empty);
        assert_eq!(walk(&m, dst), both);
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! Nodes and zones: managed pages, free lists and the min/low/high watermarks.
//!
//! Watermarks are computed as `__setup_per_zone_wmarks` and `calculate_min_free_kbytes` do
//! (`mm/page_alloc.c`): `min_free_kbytes = clamp(int_sqrt(lowmem_kbytes * 16), 128, 262144)`, each
//! zone's `min` is its share of that by managed pages, `delta = max(min / 4, managed *
//! watermark_scale_factor / 10000)`, `low = min + delta`, `high = low + delta`, `promo = high + delta`.
//!
//! A machine laid out as x86 builds it ([`x86_zones`]: DMA below 16 MiB, DMA32 below 4 GiB, Normal
//! above) also has each zone's `lowmem_reserve` (`setup_per_zone_lowmem_reserve` with the default
//! `sysctl_lowmem_reserve_ratio`, [`lowmem_reserve`]): pages an allocation that may use a higher
//! zone leaves to the allocations that cannot, added to every watermark check of the zone.

use super::folio::{FolioId, Folios, NIL};

/// Zone types, in `enum zone_type` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ZoneType {
    /// ZONE_DMA (first 16 MiB on x86).
    Dma,
    /// ZONE_DMA32 (first 4 GiB).
    Dma32,
    /// ZONE_NORMAL.
    Normal,
    /// ZONE_MOVABLE.
    Movable,
}

impl ZoneType {
    /// The kernel's lower-case zone name (used in `pgskip_<zone>`, `allocstall_<zone>`).
    pub fn name(self) -> &'static str {
        match self {
            ZoneType::Dma => "dma",
            ZoneType::Dma32 => "dma32",
            ZoneType::Normal => "normal",
            ZoneType::Movable => "movable",
        }
    }
}

/// Watermark indices (`enum zone_watermarks`).
pub const WMARK_MIN: usize = 0;
/// Low watermark: kswapd is woken below it.
pub const WMARK_LOW: usize = 1;
/// High watermark: kswapd sleeps above it.
pub const WMARK_HIGH: usize = 2;
/// Promo watermark (memory tiering).
pub const WMARK_PROMO: usize = 3;

/// One zone of a node.
#[derive(Clone, Debug)]
pub struct Zone {
    /// Node id.
    pub node: usize,
    /// Index of the zone within its node.
    pub zidx: usize,
    /// Its type.
    pub kind: ZoneType,
    /// Pages the buddy allocator manages (`zone_managed_pages`).
    pub managed: u64,
    /// Free pages (`NR_FREE_PAGES`).
    pub free: u64,
    /// min, low, high, promo.
    pub wmark: [u64; 4],
    /// `lowmem_reserve[]` of the zone against the allocations the model makes (user pages and page
    /// cache, whose highest zone is the node's highest): added to every watermark it is checked
    /// against ([`super::Machine::zone_watermark_ok`]). 0 unless the machine asks for it
    /// ([`super::MachineConfig::lowmem_reserve`]).
    pub lowmem_reserve: u64,
    /// Pages in use before the workload starts ([`ZoneBoot::used`]): never handed out.
    pub boot_used: u64,
    /// The zone's per-CPU page list ([`Pcp`]), off unless the zone's boot state gives one.
    pub pcp: Pcp,
    /// `ZONE_BELOW_HIGH`: an allocation found the zone at or below its high watermark; the
    /// per-CPU list then shrinks as pages are freed ([`Pcp`]). Cleared by a free that flushes the
    /// list with the zone above its high watermark again.
    pub below_high: bool,
    /// `ZONE_RECLAIM_ACTIVE`: kswapd is in `balance_pgdat` for this zone (`set_reclaim_active`);
    /// the per-CPU list then holds at most `batch << 2` pages.
    pub reclaim_active: bool,
    /// First folio id of this zone (ids are contiguous per zone).
    pub first_folio: FolioId,
    /// Folios of this zone never handed out yet (ids `first_folio + managed - fresh ..`).
    fresh: u64,
    /// Free list head (LIFO, like the per-cpu page lists).
    free_head: FolioId,
    /// Free blocks of [`HUGE_BLOCK`] frames, aligned to their size, that a large folio freed
    /// whole (LIFO through the first frame's `next`): what [`Zone::take_block`] hands out first.
    /// Order-0 frames are never merged into blocks (no buddy coalescing, no compaction).
    block_head: FolioId,
}

/// Frames of the one large-folio size the model allocates (`HPAGE_PMD_NR`).
pub const HUGE_BLOCK: u64 = crate::mm::thp::HPAGE_PMD_NR as u64;

impl Zone {
    /// Watermark `w` (`WMARK_*`).
    pub fn wmark(&self, w: usize) -> u64 {
        self.wmark[w]
    }
}

/// A NUMA node (`pg_data_t`).
#[derive(Clone, Debug)]
pub struct Node {
    /// Node id.
    pub id: usize,
    /// Zones from lowest to highest.
    pub zones: Vec<Zone>,
    /// `kswapd_failures`: consecutive balance_pgdat runs that reclaimed nothing.
    pub kswapd_failures: u32,
    /// Whether kswapd has been woken and not yet run (`kswapd_wait` pending).
    pub kswapd_woken: bool,
    /// Highest zone index kswapd was asked to balance.
    pub kswapd_highest_zoneidx: usize,
    /// kswapd is in the short sleep of `kswapd_try_to_sleep` until this virtual time, ns
    /// (`schedule_timeout(HZ/10)`): a wakeup before it counts `kswapd_low_wmark_hit_quickly`, an
    /// unbalanced node at its end `kswapd_high_wmark_hit_quickly`
    /// ([`super::MachineConfig::kswapd_sleep`]).
    pub kswapd_short_sleep_until: Option<u64>,
}

impl Node {
    /// Total free pages of the buddy allocator (`NR_FREE_PAGES`: the per-CPU lists' are not in it).
    pub fn free(&self) -> u64 {
        self.zones.iter().map(|z| z.free).sum()
    }
    /// Free frames in all: the buddy allocator's and the per-CPU lists' ([`Zone::free_frames`]).
    pub fn free_frames(&self) -> u64 {
        self.zones.iter().map(|z| z.free_frames()).sum()
    }
    /// Total managed pages.
    pub fn managed(&self) -> u64 {
        self.zones.iter().map(|z| z.managed).sum()
    }
}

/// Integer square root (`int_sqrt`).
pub fn int_sqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// `calculate_min_free_kbytes` for `lowmem_pages` of 4 KiB.
pub fn min_free_kbytes(lowmem_pages: u64) -> u64 {
    let lowmem_kbytes = lowmem_pages * 4;
    int_sqrt(lowmem_kbytes * 16).clamp(128, 262_144)
}

/// Compute watermarks for zones with the given managed sizes (`__setup_per_zone_wmarks`).
/// `min_free_kbytes` of `None` uses the kernel's default formula.
pub fn compute_wmarks(
    managed: &[(ZoneType, u64)],
    min_free_kbytes_override: Option<u64>,
    watermark_scale_factor: u64,
) -> Vec<[u64; 4]> {
    let lowmem: u64 = managed
        .iter()
        .filter(|(t, _)| *t != ZoneType::Movable)
        .map(|(_, m)| *m)
        .sum();
    let mfk = min_free_kbytes_override.unwrap_or_else(|| min_free_kbytes(lowmem));
    let pages_min = mfk >> 2; // kbytes to 4 KiB pages (PAGE_SHIFT - 10)
    managed
        .iter()
        .map(|&(t, m)| {
            let min = if t == ZoneType::Movable {
                (m / 1024).clamp(32, 128)
            } else {
                (pages_min * m).checked_div(lowmem).unwrap_or(0)
            };
            let delta = (min / 4).max(m * watermark_scale_factor / 10_000);
            let low = min + delta;
            let high = low + delta;
            [min, low, high, high + delta]
        })
        .collect()
}

/// `sysctl_lowmem_reserve_ratio`'s defaults, by zone type (DMA, DMA32, Normal, Movable): a zone
/// keeps the managed pages of the zones above it divided by its ratio (0: none).
pub const LOWMEM_RESERVE_RATIO: [u64; 4] = [256, 256, 32, 0];

/// `setup_per_zone_lowmem_reserve` for one node's zones: each zone's reserve against an allocation
/// whose highest zone is the highest zone type (ZONE_MOVABLE, that of user pages and the page
/// cache): the managed pages of the zones of higher types, divided by the zone's ratio; 0 for a
/// zone with a ratio of 0 or no managed pages.
pub fn lowmem_reserve(zones: &[(ZoneType, u64)], ratio: [u64; 4]) -> Vec<u64> {
    zones
        .iter()
        .map(|&(t, managed)| {
            let r = ratio[t as usize];
            if r == 0 || managed == 0 {
                return 0;
            }
            let upper: u64 = zones.iter().filter(|(u, _)| *u > t).map(|(_, m)| m).sum();
            upper / r
        })
        .collect()
}

/// Pages of 4 KiB below 16 MiB (`MAX_DMA_PFN`) and below 4 GiB (`MAX_DMA32_PFN`).
pub const X86_DMA_PFN: u64 = 4096;
/// See [`X86_DMA_PFN`].
pub const X86_DMA32_PFN: u64 = 1 << 20;

/// The zones x86-64 builds for `ram_pages` of memory from physical address 0 (`zone_sizes_init`):
/// DMA up to 16 MiB (from pfn 1: the first page is the BIOS's), DMA32 up to 4 GiB, Normal above;
/// a zone with no page is left out (a guest of 4 GiB or less has no Normal zone). The sizes are the
/// spans; the kernel manages fewer pages of each (its image, `memmap`, firmware reservations),
/// which a machine that is to match a guest takes from that guest's `/proc/zoneinfo`.
pub fn x86_zones(ram_pages: u64) -> Vec<(ZoneType, u64)> {
    let dma = ram_pages.min(X86_DMA_PFN).saturating_sub(1);
    let dma32 = ram_pages.min(X86_DMA32_PFN).saturating_sub(X86_DMA_PFN);
    let normal = ram_pages.saturating_sub(X86_DMA32_PFN);
    [
        (ZoneType::Dma, dma),
        (ZoneType::Dma32, dma32),
        (ZoneType::Normal, normal),
    ]
    .into_iter()
    .filter(|z| z.1 > 0)
    .collect()
}

/// How a zone starts, as a running kernel left it: what `/proc/zoneinfo` shows of it before the
/// workload. Each part left at its default is worked out as the kernel would at boot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZoneBoot {
    /// Pages in use before the workload starts (managed less free, less the free pages of the
    /// per-CPU lists: the kernel's own memory, the initramfs), never freed.
    pub used: u64,
    /// min, low and high as the kernel computed them (`__setup_per_zone_wmarks` ran while fewer
    /// pages were managed: the initramfs is freed later), `None`: computed from the managed pages.
    pub wmark: Option<[u64; 3]>,
    /// `lowmem_reserve` against the highest zone as the kernel computed it (its `protection:`
    /// line's last value), `None`: computed ([`lowmem_reserve`]).
    pub lowmem_reserve: Option<u64>,
    /// Of [`Self::used`], the pages of the guest's shmem that no process maps (a Debian guest's
    /// initramfs: its files in the tmpfs root): swap-backed folios of the root memcg on the
    /// anon LRU, which reclaim swaps out as `shmem_writeout` does, where the rest of `used`
    /// stays for good (`Kernel::new` puts them on the LRU, [`crate::mm::Machine::boot_shmem`]).
    pub shmem: u64,
    /// The per-CPU page list as the guest had it (`/proc/zoneinfo`'s pagesets), `None`: no
    /// per-CPU list (every free page in the buddy allocator's count). Its `count` pages are free
    /// pages outside [`Self::used`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pcp: Option<PcpBoot>,
}

/// `CONFIG_PCP_BATCH_SCALE_MAX` (Debian's: the default, 5): how far a run of allocations or
/// frees with no other in between scales the per-CPU list's batch up (`batch << n`).
pub const PCP_BATCH_SCALE_MAX: u32 = 5;

/// A per-CPU page list's state as `/proc/zoneinfo` prints it (`count`, `high`, `batch`, and from
/// 6.13 `high_min`, `high_max`; one CPU's: the guests the model is built from have one vCPU).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcpBoot {
    /// Free pages on the list.
    pub count: u64,
    /// `pcp->high`, where auto-tuning left it.
    pub high: u64,
    /// `pcp->high_min` (`zone_highsize` of the low watermark).
    pub high_min: u64,
    /// `pcp->high_max` (`zone_highsize` of an eighth of the managed pages).
    pub high_max: u64,
    /// `pcp->batch`.
    pub batch: u64,
}

/// One CPU's per-CPU page list of a zone (`struct per_cpu_pages`, `mm/page_alloc.c`): order-0
/// pages freed go onto it and allocations take from it, refilling it from the buddy allocator a
/// batch at a time when it is empty. Its pages are free but not in `NR_FREE_PAGES`
/// ([`Zone::free`]), which every watermark check reads. It is drained whole when direct reclaim's
/// allocation still fails (`drain_all_pages`). How its `high` and batches move depends on the
/// kernel ([`Pcp::auto_tune`], the profile's switch `pcp_high_auto_tune`):
/// * 6.7 and later (the same code in 6.12 and 7.2): `high` tunes itself: it grows by a batch at
///   each refill while the zone is above its high watermark, shrinks by the run of frees while
///   the zone is below it (`ZONE_BELOW_HIGH`) and to `batch << 2` while kswapd reclaims
///   (`ZONE_RECLAIM_ACTIVE`), and decays by an eighth a second ([`Zone::decay_pcp_high`]); a run
///   of allocations doubles the refill batch, a run of frees sizes a flush.
/// * 6.1: `high` stays where it was set (`zone_highsize`: the low watermark on one CPU); a refill
///   takes one batch; a free reaching `high` (`min(batch << 2, high)` while kswapd reclaims the
///   zone) flushes `batch << free_factor` pages, `free_factor` growing by one per flush and
///   halving per allocation; nothing decays.
///
/// Large folios (order 9) bypass it in the model (the kernel's THP list,
/// which holds at most one, is not modelled), and one list stands for the kernel's per
/// migratetype lists (their count is one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pcp {
    /// Whether the zone has one ([`ZoneBoot::pcp`]).
    pub on: bool,
    /// Free pages on it (`pcp->count`).
    pub count: u64,
    /// `pcp->high`.
    pub high: u64,
    /// `pcp->high_min`.
    pub high_min: u64,
    /// `pcp->high_max`.
    pub high_max: u64,
    /// `pcp->batch`.
    pub batch: u64,
    /// `pcp->alloc_factor`: doubles the refill batch per refill with no free in between.
    pub alloc_factor: u32,
    /// `pcp->free_count`: the run of frees, which sizes a flush.
    pub free_count: u64,
    /// 6.1's `pcp->free_factor`: a flush frees `batch << free_factor` pages (without auto-tuning).
    pub free_factor: u32,
    /// Whether `high` tunes itself (6.7 on, the profile's `pcp_high_auto_tune`; set by
    /// `Machine::apply_switches`, on until then): see [`Pcp`].
    pub auto_tune: bool,
}

impl Pcp {
    /// The list of boot state `b` (a `high_max` below `high_min` taken as `high_min`: the
    /// kernel's `clamp` would not order them either).
    pub fn from_boot(b: PcpBoot) -> Pcp {
        Pcp {
            on: true,
            count: b.count,
            high: b.high,
            high_min: b.high_min,
            high_max: b.high_max.max(b.high_min),
            batch: b.batch.max(1),
            alloc_factor: 0,
            free_count: 0,
            free_factor: 0,
            auto_tune: true,
        }
    }
}

impl Zone {
    /// Build a zone of `managed` pages with folio ids `first..first + managed`. The folio records
    /// are created lazily, when a frame is first handed out, so a machine costs memory in
    /// proportion to what its workload touches, not to its size.
    pub fn new(node: usize, zidx: usize, kind: ZoneType, managed: u64, wmark: [u64; 4], first: FolioId) -> Zone {
        Zone {
            node,
            zidx,
            kind,
            managed,
            free: managed,
            wmark,
            lowmem_reserve: 0,
            boot_used: 0,
            pcp: Pcp::default(),
            below_high: false,
            reclaim_active: false,
            first_folio: first,
            fresh: managed,
            free_head: NIL,
            block_head: NIL,
        }
    }

    /// Take `pages` out of the zone for good, before anything is allocated: what the kernel used
    /// before the workload started ([`ZoneBoot::used`]).
    pub fn take_boot(&mut self, pages: u64) {
        let n = pages.min(self.free).min(self.fresh);
        self.free -= n;
        self.fresh -= n;
        self.boot_used += n;
    }

    /// Give the zone its per-CPU list ([`Pcp`]) as the guest had it: its `count` pages move
    /// out of [`Self::free`] onto the list.
    pub fn set_pcp(&mut self, b: PcpBoot) {
        let mut p = Pcp::from_boot(b);
        p.count = p.count.min(self.free);
        self.free -= p.count;
        self.pcp = p;
    }

    /// Free frames in all: the buddy allocator's ([`Self::free`]) and the per-CPU list's.
    pub fn free_frames(&self) -> u64 {
        self.free + self.pcp.count
    }

    /// Take one free folio (caller has checked watermarks): from the per-CPU list where the
    /// zone has one (`rmqueue_pcplist`), else from the buddy allocator. `None` if the zone is
    /// empty.
    pub fn take(&mut self, folios: &mut Folios) -> Option<FolioId> {
        if self.pcp.on {
            if !self.pcp_take() {
                return None;
            }
        } else {
            if self.free == 0 {
                return None;
            }
            self.free -= 1;
        }
        Some(self.pop(folios))
    }

    /// Take one free folio from the buddy allocator, bypassing the per-CPU list (the guest's
    /// boot memory, which was allocated before the list held what it holds). `None` if empty.
    pub fn take_buddy(&mut self, folios: &mut Folios) -> Option<FolioId> {
        if self.free == 0 {
            return None;
        }
        self.free -= 1;
        Some(self.pop(folios))
    }

    /// The per-CPU list's side of an order-0 allocation (`rmqueue_pcplist`): the free run
    /// halves; an empty list is refilled from the buddy allocator (`nr_pcp_alloc`,
    /// `rmqueue_bulk`); one page leaves it. False if the zone has no free page.
    fn pcp_take(&mut self) -> bool {
        if self.pcp.auto_tune {
            self.pcp.free_count >>= 1;
        } else {
            self.pcp.free_factor >>= 1;
        }
        if self.pcp.count == 0 {
            let want = self.nr_pcp_alloc();
            let got = want.min(self.free);
            self.free -= got;
            self.pcp.count += got;
            if got == 0 {
                return false;
            }
        }
        self.pcp.count -= 1;
        true
    }

    /// `nr_pcp_alloc` for order 0: how many pages a refill takes from the buddy allocator.
    fn nr_pcp_alloc(&mut self) -> u64 {
        let p = &mut self.pcp;
        let base = p.batch;
        if !p.auto_tune {
            // 6.1's `__rmqueue_pcplist`: one batch (`max(batch >> order, 2)` when above 1)
            return base;
        }
        p.high = p.high.clamp(p.high_min, p.high_max);
        let mut high = p.high;
        // a list that is off or still the boot pageset
        if high < base {
            return 1;
        }
        let mut batch = base << p.alloc_factor;
        // with a larger high the next refills need not come
        if p.high_min != p.high_max && !self.below_high {
            high = (high + batch).min(p.high_max);
            p.high = high;
        }
        let max_nr_alloc = high.saturating_sub(p.count + base).max(base);
        // a run of allocations with no free between doubles the batch
        if batch <= max_nr_alloc && p.alloc_factor < PCP_BATCH_SCALE_MAX {
            p.alloc_factor += 1;
        }
        batch = batch.min(max_nr_alloc);
        batch
    }

    /// `nr_pcp_high`: the count at which a free flushes the list, adjusting `pcp->high` as the
    /// zone's state asks (no high-order frees in the model: `free_high` is never set).
    fn nr_pcp_high(&mut self) -> u64 {
        let (below_high, reclaim_active) = (self.below_high, self.reclaim_active);
        let p = &mut self.pcp;
        let batch = p.batch;
        if !p.auto_tune {
            // 6.1: the list's own `high`, limited while reclaim is active
            return match p.high {
                0 => 0,
                high if reclaim_active => (batch << 2).min(high),
                high => high,
            };
        }
        let high = p.high.clamp(p.high_min, p.high_max);
        p.high = high;
        if high == 0 {
            return 0;
        }
        if reclaim_active {
            let free_count = p.free_count.max(batch);
            p.high = high.saturating_sub(free_count).max(p.high_min);
            return (batch << 2).min(p.high);
        }
        if p.high_min == p.high_max {
            return high;
        }
        if below_high {
            let free_count = p.free_count.max(batch);
            p.high = high.saturating_sub(free_count).max(p.high_min);
            p.count.max(p.high_min)
        } else {
            if p.count >= high {
                // large enough to hold a batch of freed pages
                let need = p.free_count + batch;
                if p.high < need {
                    p.high = need.clamp(p.high_min, p.high_max);
                }
            }
            high
        }
    }

    /// `nr_pcp_free`: how many pages a flush gives back to the buddy allocator.
    fn nr_pcp_free(&mut self, high: u64) -> u64 {
        let batch = self.pcp.batch;
        // a list that is off or still the boot pageset
        if high < batch {
            return 1;
        }
        if !self.pcp.auto_tune {
            // 6.1: the batch doubled per flush since the last allocation
            let p = &mut self.pcp;
            let max_nr_free = high - batch;
            let scaled = batch << p.free_factor;
            if scaled < max_nr_free && p.free_factor < PCP_BATCH_SCALE_MAX {
                p.free_factor += 1;
            }
            return scaled.max(batch).min(max_nr_free);
        }
        // the run of frees, at least a batch, leaving at least a batch (`clamp_t`: the upper
        // bound wins when they cross)
        self.pcp.free_count.max(batch).min(high - batch)
    }

    /// The per-CPU list's side of an order-0 free (`free_frozen_page_commit`): the page goes onto
    /// the list; at `nr_pcp_high` a flush moves `nr_pcp_free` pages to the buddy allocator, and a
    /// zone below its high watermark that is above it again (its reserve included, as
    /// `zone_watermark_ok` checks it) loses `ZONE_BELOW_HIGH` (then true).
    fn pcp_give(&mut self) -> bool {
        let batch = self.pcp.batch;
        self.pcp.alloc_factor >>= 1;
        self.pcp.count += 1;
        if self.pcp.auto_tune && self.pcp.free_count < batch << PCP_BATCH_SCALE_MAX {
            self.pcp.free_count += 1;
        }
        let high = self.nr_pcp_high();
        if self.pcp.count < high {
            return false;
        }
        let n = self.nr_pcp_free(high).min(self.pcp.count);
        self.pcp.count -= n;
        self.free += n;
        // `ZONE_BELOW_HIGH` is 6.7's (auto-tuning): a 6.1 list neither reads nor clears it
        if self.pcp.auto_tune && self.below_high && self.free > self.wmark[WMARK_HIGH] + self.lowmem_reserve {
            self.below_high = false;
            return true;
        }
        false
    }

    /// An order-0 page allocated and freed at once through the per-CPU list (the replayer's
    /// `mincore()` buffer page, [`crate::mm::Machine`]'s `alloc_user_page_and_free`), with no
    /// frame taken: the list's counts and tuning move as they would. `None` if the zone has no
    /// free page, else whether the free cleared `ZONE_BELOW_HIGH`.
    pub fn pcp_take_and_give(&mut self) -> Option<bool> {
        if !self.pcp.on {
            return (self.free > 0).then_some(false);
        }
        if !self.pcp_take() {
            return None;
        }
        Some(self.pcp_give())
    }

    /// `decay_pcp_high` (from `vmstat_update`, every `sysctl_stat_interval`): `high` falls by an
    /// eighth (at most to the count less a full batch, at least to `high_min`), and what the list
    /// holds above it goes back to the buddy allocator.
    pub fn decay_pcp_high(&mut self) {
        // 6.1 has no `decay_pcp_high`
        if !self.pcp.on || !self.pcp.auto_tune {
            return;
        }
        let p = &mut self.pcp;
        if p.high > p.high_min {
            p.high = p
                .count
                .saturating_sub(p.batch << PCP_BATCH_SCALE_MAX)
                .max(p.high - (p.high >> 3))
                .max(p.high_min);
        }
        let n = p.count.saturating_sub(p.high);
        p.count -= n;
        self.free += n;
    }

    /// `drain_all_pages` of this zone: every page of its per-CPU list back to the buddy
    /// allocator. Returns how many.
    pub fn drain_pcp(&mut self) -> u64 {
        let n = self.pcp.count;
        self.pcp.count = 0;
        self.free += n;
        n
    }

    /// Pop a frame off the free frames (one exists: the caller has counted it out).
    fn pop(&mut self, folios: &mut Folios) -> FolioId {
        if self.free_head != NIL {
            let id = self.free_head;
            self.free_head = folios[id].next;
            folios[id].next = NIL;
            id
        } else if self.fresh > 0 {
            let id = self.first_folio + (self.managed - self.fresh) as FolioId;
            self.fresh -= 1;
            folios.materialize(id, self.node, self.zidx);
            id
        } else {
            // only free blocks left: break one (`expand`), its other frames to the free list
            let head = self.block_head;
            debug_assert!(head != NIL);
            self.block_head = folios[head].next;
            folios[head].next = NIL;
            for id in (head + 1..head + HUGE_BLOCK as FolioId).rev() {
                folios[id].next = self.free_head;
                self.free_head = id;
            }
            head
        }
    }

    /// Take a free block of [`HUGE_BLOCK`] frames aligned to its size (`rmqueue` of order 9; the
    /// caller has checked watermarks): a block a large folio freed, else the next aligned block of
    /// the frames never handed out (those skipped to align it go to the free list). `None` if
    /// neither has one: the zone's free frames are too fragmented. Returns the first frame.
    pub fn take_block(&mut self, folios: &mut Folios) -> Option<FolioId> {
        if self.free < HUGE_BLOCK {
            return None;
        }
        let head = if self.block_head != NIL {
            let head = self.block_head;
            self.block_head = folios[head].next;
            folios[head].next = NIL;
            head
        } else {
            let next = u64::from(self.first_folio) + (self.managed - self.fresh);
            let head = next.next_multiple_of(HUGE_BLOCK);
            let end = u64::from(self.first_folio) + self.managed;
            if head + HUGE_BLOCK > end {
                return None;
            }
            for id in next..head + HUGE_BLOCK {
                folios.materialize(id as FolioId, self.node, self.zidx);
            }
            // the frames before the block: free order-0 frames now (lowest id taken first)
            for id in (next..head).rev() {
                let id = id as FolioId;
                folios[id].next = self.free_head;
                self.free_head = id;
            }
            self.fresh -= head + HUGE_BLOCK - next;
            head as FolioId
        };
        self.free -= HUGE_BLOCK;
        Some(head)
    }

    /// Return a block taken by [`Zone::take_block`] whole: its records reset, onto the block list.
    pub fn give_block(&mut self, folios: &mut Folios, head: FolioId) {
        debug_assert!(u64::from(head) % HUGE_BLOCK == 0 && self.contains(head));
        for id in head..head + HUGE_BLOCK as FolioId {
            folios.reset(id);
        }
        folios[head].next = self.block_head;
        self.block_head = head;
        self.free += HUGE_BLOCK;
    }

    /// Return a folio to the free frames: onto the per-CPU list where the zone has one
    /// (`free_frozen_page_commit`), else to the buddy allocator. True if the free cleared the
    /// zone's `ZONE_BELOW_HIGH`.
    pub fn give(&mut self, folios: &mut Folios, id: FolioId) -> bool {
        folios.reset(id);
        folios[id].next = self.free_head;
        self.free_head = id;
        if self.pcp.on {
            self.pcp_give()
        } else {
            self.free += 1;
            false
        }
    }

    /// Whether `id` belongs to this zone.
    pub fn contains(&self, id: FolioId) -> bool {
        id >= self.first_folio && (id - self.first_folio) < self.managed as FolioId
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A zone of `managed` frames from frame `first`, its folio records in `t`.
    fn zone_at(first: FolioId, managed: u64) -> (Zone, Folios) {
        let mut t = Folios::with_capacity(0);
        for _ in 0..first {
            t.push_free(0, 0);
        }
        (Zone::new(0, 1, ZoneType::Normal, managed, [0; 4], first), t)
    }

    #[test]
    fn a_block_is_aligned_and_the_frames_skipped_are_free() {
        // frames 100..2148: the first aligned block is 512..1024
        let (mut z, mut t) = zone_at(100, 2048);
        assert_eq!(z.take(&mut t), Some(100));
        assert_eq!(z.take_block(&mut t), Some(512));
        assert_eq!(z.free, 2048 - 1 - 512);
        // the 411 frames 101..512 skipped are handed out first, lowest first
        assert_eq!(z.take(&mut t), Some(101));
        assert_eq!(z.take_block(&mut t), Some(1024));
        // 1536..2148 holds no aligned block of 512 within the zone: 1536 + 512 = 2048 fits
        assert_eq!(z.take_block(&mut t), Some(1536));
        assert_eq!(z.take_block(&mut t), None, "2048..2148 is not a block");
        assert!(t[1536].node() == 0 && t[1536].zone() == 1 && t[2047].zone() == 1);
        // a freed block is reused whole
        z.give_block(&mut t, 1024);
        assert_eq!(z.take_block(&mut t), Some(1024));
    }

    #[test]
    fn order_0_breaks_a_free_block_when_nothing_else_is_free() {
        let (mut z, mut t) = zone_at(0, 1024);
        let a = z.take_block(&mut t).unwrap();
        let b = z.take_block(&mut t).unwrap();
        assert_eq!((a, b, z.free), (0, 512, 0));
        assert_eq!(z.take(&mut t), None);
        z.give_block(&mut t, b);
        assert_eq!(z.take(&mut t), Some(512));
        assert_eq!(z.take(&mut t), Some(513));
        assert_eq!(z.take_block(&mut t), None, "the block was broken");
        assert_eq!(z.free, 510);
    }

    #[derive(Debug, Clone)]
    enum ZoneOp {
        Take,
        Give(usize),
        TakeBlock,
        GiveBlock(usize),
    }

    proptest! {
        /// Order-0 frames and blocks of 512 never overlap, blocks are aligned, every frame is the
        /// zone's, and the free frames (the buddy allocator's and the per-CPU list's, where the
        /// zone has one) are the managed pages less those handed out; an allocation fails only
        /// when nothing (order 0) or no block (order 9) is left.
        #[test]
        fn frames_and_blocks_are_handed_out_once(
            first in 0u32..1500,
            managed in 1u64..3000,
            ops in proptest::collection::vec(prop_oneof![
                4 => Just(ZoneOp::Take),
                2 => (0usize..1000).prop_map(ZoneOp::Give),
                1 => Just(ZoneOp::TakeBlock),
                1 => (0usize..10).prop_map(ZoneOp::GiveBlock),
            ], 0..400),
            pcp in proptest::option::of((0u64..50, 0u64..600, 1u64..16, any::<bool>())),
        ) {
            let (mut z, mut t) = zone_at(first, managed);
            // with a per-CPU list (its boot count, a high, a batch, auto-tuned (6.7 on) or fixed
            // (6.1)): its pages are free frames
            if let Some((count, high, batch, auto_tune)) = pcp {
                z.set_pcp(PcpBoot { count, high, high_min: high.min(100), high_max: high, batch });
                z.pcp.auto_tune = auto_tune;
            }
            let mut small: Vec<FolioId> = Vec::new();
            let mut blocks: Vec<FolioId> = Vec::new();
            let mut owned = std::collections::BTreeSet::new();
            for op in ops {
                match op {
                    ZoneOp::Take => match z.take(&mut t) {
                        Some(id) => {
                            prop_assert!(z.contains(id));
                            prop_assert!(owned.insert(id), "frame {} handed out twice", id);
                            small.push(id);
                        }
                        None => {
                            prop_assert_eq!(owned.len() as u64, managed);
                            prop_assert_eq!(z.free_frames(), 0);
                        }
                    },
                    ZoneOp::Give(i) => {
                        if !small.is_empty() {
                            let id = small.swap_remove(i % small.len());
                            owned.remove(&id);
                            z.give(&mut t, id);
                        }
                    }
                    ZoneOp::TakeBlock => match z.take_block(&mut t) {
                        Some(h) => {
                            prop_assert_eq!(u64::from(h) % HUGE_BLOCK, 0);
                            for id in h..h + HUGE_BLOCK as FolioId {
                                prop_assert!(z.contains(id));
                                prop_assert!(owned.insert(id), "frame {} handed out twice", id);
                                prop_assert_eq!((t[id].node(), t[id].zone()), (0, 1));
                            }
                            blocks.push(h);
                        }
                        None => {
                            // no free aligned block anywhere: every aligned block of the zone has
                            // a frame handed out, or a frame on the order-0 free list; or the
                            // buddy allocator has fewer than a block's pages, the per-CPU list
                            // holding the rest
                            prop_assert!(z.block_head == NIL || z.free < HUGE_BLOCK);
                        }
                    },
                    ZoneOp::GiveBlock(i) => {
                        if !blocks.is_empty() {
                            let h = blocks.swap_remove(i % blocks.len());
                            for id in h..h + HUGE_BLOCK as FolioId {
                                owned.remove(&id);
                            }
                            z.give_block(&mut t, h);
                        }
                    }
                }
                prop_assert_eq!(z.free_frames(), managed - owned.len() as u64);
            }
        }
    }

    /// A zone of 10,000 frames with the 7.2 guest's node-0 per-CPU list (batch 7, high_min 310,
    /// high_max 3,888), empty, and that zone's watermarks (min 248, low 310, high 372).
    fn pcp_zone(high: u64) -> (Zone, Folios) {
        let (mut z, t) = zone_at(0, 10_000);
        z.wmark = [248, 310, 372, 434];
        z.set_pcp(PcpBoot {
            count: 0,
            high,
            high_min: 310,
            high_max: 3_888,
            batch: 7,
        });
        (z, t)
    }

    #[test]
    fn a_run_of_allocations_refills_the_list_in_doubling_batches() {
        // nr_pcp_alloc: each refill with no free in between doubles the batch (alloc_factor, up
        // to CONFIG_PCP_BATCH_SCALE_MAX = 5: 7 << 5 = 224), and a zone above its high watermark
        // grows pcp->high by the batch each time
        let (mut z, mut t) = pcp_zone(310);
        let mut refills = Vec::new();
        for n in 1..=1_000u64 {
            let before = z.free;
            z.take(&mut t).unwrap();
            if z.free != before {
                refills.push(before - z.free);
            }
            // every frame is free in the buddy allocator, on the list, or handed out
            assert_eq!(z.free + z.pcp.count + n, 10_000);
        }
        assert_eq!(&refills[..7], &[7, 14, 28, 56, 112, 224, 224]);
        assert!(z.pcp.high > 310 && z.pcp.high <= 3_888, "high grew: {}", z.pcp.high);
        // the watermark checks see only the buddy allocator's pages
        assert!(z.free < 10_000 - 1_000);
    }

    #[test]
    fn a_run_of_frees_flushes_at_high_by_the_run_s_length() {
        let (mut z, mut t) = pcp_zone(310);
        let ids: Vec<FolioId> = (0..6_000).map(|_| z.take(&mut t).unwrap()).collect();
        let high = z.pcp.high;
        assert_eq!(high, 3_888, "a long run of refills takes high to high_max");
        let (free0, count0) = (z.free, z.pcp.count);
        let mut flushes = Vec::new();
        for &id in &ids {
            let before = z.free;
            z.give(&mut t, id);
            if z.free != before {
                flushes.push((z.free - before, z.pcp.count));
            }
        }
        assert_eq!(z.free + z.pcp.count, free0 + count0 + 6_000);
        // nr_pcp_free: the run of frees (at most batch << 5 = 224), within [batch, high - batch];
        // the list is flushed first when it reaches pcp->high, which a zone above its high
        // watermark keeps
        assert!(!flushes.is_empty());
        assert_eq!(flushes[0].0, 224, "{flushes:?}");
        assert!(flushes.iter().all(|&(_, c)| c < high), "{flushes:?}, high {high}");
    }

    /// 200 pages taken from `(z, t)`, its list drained, then freed with `ZONE_RECLAIM_ACTIVE`
    /// set: the list never reaches four batches (`min(batch << 2, pcp->high)`, 28).
    fn free_under_kswapd(z: &mut Zone, t: &mut Folios) {
        let ids: Vec<FolioId> = (0..200).map(|_| z.take(t).unwrap()).collect();
        z.drain_pcp();
        z.reclaim_active = true;
        for &id in &ids {
            z.give(t, id);
            assert!(z.pcp.count < 28, "count {}", z.pcp.count);
        }
    }

    #[test]
    fn while_kswapd_reclaims_the_list_holds_four_batches() {
        // ZONE_RECLAIM_ACTIVE: nr_pcp_high returns min(batch << 2, pcp->high) and lowers
        // pcp->high by the run of frees, down to high_min
        let (mut z, mut t) = pcp_zone(1_000);
        free_under_kswapd(&mut z, &mut t);
        assert_eq!(z.pcp.high, 310, "lowered to high_min");
    }

    #[test]
    fn below_the_high_watermark_the_list_shrinks_as_pages_are_freed() {
        // ZONE_BELOW_HIGH: each free lowers pcp->high by the run of frees (to high_min), and a
        // flush that leaves the zone above its high watermark clears the flag
        let (mut z, mut t) = pcp_zone(2_000);
        let ids: Vec<FolioId> = (0..9_800).map(|_| z.take(&mut t).unwrap()).collect();
        z.drain_pcp();
        assert!(z.free < 372);
        z.below_high = true;
        let mut cleared_at = None;
        for (i, &id) in ids.iter().enumerate() {
            z.give(&mut t, id);
            if cleared_at.is_none() && !z.below_high {
                cleared_at = Some(i);
                assert!(z.free > 372, "cleared above the high watermark only: {}", z.free);
            }
        }
        assert!(cleared_at.is_some());
        assert!(z.pcp.high < 2_000);
    }

    #[test]
    fn decay_takes_an_eighth_of_high_and_drain_empties_the_list() {
        let (mut z, mut t) = pcp_zone(2_000);
        let ids: Vec<FolioId> = (0..1_500).map(|_| z.take(&mut t).unwrap()).collect();
        for &id in &ids {
            z.give(&mut t, id);
        }
        let (high, count, free) = (z.pcp.high, z.pcp.count, z.free);
        z.decay_pcp_high();
        // decay_pcp_high: max3(count - (batch << 5), high - high / 8, high_min)
        let want = count.saturating_sub(224).max(high - high / 8).max(310);
        assert_eq!(z.pcp.high, want);
        assert_eq!(z.pcp.count, count.min(want));
        assert_eq!(z.free + z.pcp.count, free + count);
        let n = z.drain_pcp();
        assert_eq!((z.pcp.count, z.free), (0, free + count));
        assert_eq!(n, count.min(want));
    }

    /// [`pcp_zone`] as 6.1 has it (no auto-tuning, `high` fixed at `high`).
    fn pcp_zone_6_1(high: u64) -> (Zone, Folios) {
        let (mut z, t) = pcp_zone(high);
        z.pcp.auto_tune = false;
        (z, t)
    }

    #[test]
    fn without_auto_tuning_a_refill_takes_one_batch_and_high_stays() {
        // 6.1's __rmqueue_pcplist: rmqueue_bulk of pcp->batch pages, whatever the run
        let (mut z, mut t) = pcp_zone_6_1(310);
        let mut refills = Vec::new();
        for _ in 0..1_000 {
            let before = z.free;
            z.take(&mut t).unwrap();
            if z.free != before {
                refills.push(before - z.free);
            }
        }
        assert_eq!(refills.len(), 143, "1,000 pages in batches of 7: {refills:?}");
        assert!(refills.iter().all(|&n| n == 7), "{refills:?}");
        assert_eq!(z.pcp.high, 310);
        // nor does a second go by (no decay_pcp_high in 6.1)
        let ids: Vec<FolioId> = (0..300).map(|_| z.take(&mut t).unwrap()).collect();
        for &id in &ids {
            z.give(&mut t, id);
        }
        let (count, free) = (z.pcp.count, z.free);
        z.decay_pcp_high();
        assert_eq!((z.pcp.high, z.pcp.count, z.free), (310, count, free));
    }

    #[test]
    fn without_auto_tuning_a_run_of_flushes_doubles_the_batch() {
        // 6.1's nr_pcp_free: at pcp->high (310), batch << free_factor pages, free_factor growing
        // by one per flush up to CONFIG_PCP_BATCH_SCALE_MAX (5) while below high - batch (303),
        // clamped to [batch, high - batch]; an allocation halves free_factor
        let (mut z, mut t) = pcp_zone_6_1(310);
        let ids: Vec<FolioId> = (0..5_000).map(|_| z.take(&mut t).unwrap()).collect();
        z.drain_pcp();
        let mut flushes = Vec::new();
        for &id in &ids[..2_000] {
            let before = z.free;
            z.give(&mut t, id);
            if z.free != before {
                flushes.push(z.free - before);
            }
            assert!(z.pcp.count < 310, "flushed at high");
        }
        assert_eq!(&flushes[..7], &[7, 14, 28, 56, 112, 224, 224], "{flushes:?}");
        assert_eq!(z.pcp.free_factor, 5);
        z.take(&mut t).unwrap();
        assert_eq!(z.pcp.free_factor, 2, "an allocation halves it");
        // a list whose high leaves less than the doubled batch: clamped to high - batch
        let (mut z, mut t) = pcp_zone_6_1(40);
        let ids: Vec<FolioId> = (0..500).map(|_| z.take(&mut t).unwrap()).collect();
        z.drain_pcp();
        let mut flushes = Vec::new();
        for &id in &ids {
            let before = z.free;
            z.give(&mut t, id);
            if z.free != before {
                flushes.push(z.free - before);
            }
        }
        assert_eq!(&flushes[..4], &[7, 14, 28, 33], "{flushes:?}");
        assert_eq!(z.pcp.high, 40, "high stays");
    }

    #[test]
    fn without_auto_tuning_kswapd_limits_the_list_to_four_batches() {
        // 6.1's nr_pcp_high under ZONE_RECLAIM_ACTIVE: min(batch << 2, high), high untouched
        let (mut z, mut t) = pcp_zone_6_1(1_000);
        free_under_kswapd(&mut z, &mut t);
        assert_eq!(z.pcp.high, 1_000, "fixed");
        // and a list with high 0 (nr_pcp_free's `high < batch`) gives each freed page back at
        // once, one page per flush
        let (mut z, mut t) = pcp_zone_6_1(0);
        let a = z.take(&mut t).unwrap();
        let (count, free) = (z.pcp.count, z.free);
        z.give(&mut t, a);
        assert_eq!((z.pcp.count, z.free), (count, free + 1));
    }

    #[test]
    fn a_disabled_list_passes_every_page_through() {
        // a list whose bounds are 0 (the boot pageset's): nr_pcp_alloc's and nr_pcp_free's
        // `high < batch` case, a refill of one page, a flush of one
        let (mut z, mut t) = zone_at(0, 100);
        z.set_pcp(PcpBoot {
            count: 0,
            high: 0,
            high_min: 0,
            high_max: 0,
            batch: 1,
        });
        let a = z.take(&mut t).unwrap();
        assert_eq!((z.free, z.pcp.count), (99, 0));
        z.give(&mut t, a);
        assert_eq!((z.free, z.pcp.count), (100, 0));
    }

    #[test]
    fn min_free_kbytes_matches_kernel_table() {
        // The kernel's comment table: 16MB: 512k, 32MB: 724k, 64MB: 1024k, 128MB: 1448k,
        // 256MB: 2048k, 512MB: 2896k, 1024MB: 4096k, 2048MB: 5792k, 4096MB: 8192k, 16GB: 16384k.
        for (mb, kb) in [
            (16u64, 512u64),
            (32, 724),
            (64, 1024),
            (128, 1448),
            (256, 2048),
            (512, 2896),
            (1024, 4096),
            (2048, 5792),
            (4096, 8192),
            (16384, 16384),
        ] {
            assert_eq!(min_free_kbytes(mb * 256), kb, "{mb} MB");
        }
        assert_eq!(min_free_kbytes(1), 128);
        assert_eq!(min_free_kbytes(1 << 40), 262_144);
    }

    #[test]
    fn watermarks_of_a_one_gib_normal_zone() {
        let w = compute_wmarks(&[(ZoneType::Normal, 262_144)], None, 10);
        // min_free_kbytes 4096 -> 1024 pages; delta = max(256, 262) = 262
        assert_eq!(w[0], [1024, 1286, 1548, 1810]);
    }

    #[test]
    fn x86_builds_zones_by_physical_address() {
        // 256 MiB: DMA (pfn 1..4096) and DMA32, no Normal zone
        assert_eq!(
            x86_zones(65_536),
            vec![(ZoneType::Dma, 4095), (ZoneType::Dma32, 61_440)]
        );
        // 8 GiB: 4 GiB above the DMA32 limit are Normal
        assert_eq!(
            x86_zones(2 << 20),
            vec![
                (ZoneType::Dma, 4095),
                (ZoneType::Dma32, 1_044_480),
                (ZoneType::Normal, 1 << 20)
            ]
        );
        // 8 MiB: DMA only
        assert_eq!(x86_zones(2048), vec![(ZoneType::Dma, 2047)]);
    }

    #[test]
    fn lowmem_reserve_is_the_upper_zones_over_the_ratio() {
        // the 256 MiB guest of the global-pressure fixtures (Debian 6.12): its DMA zone's
        // `protection: (0, 181, 181, 181, 181)` with 46,400 DMA32 pages managed when it was set
        let r = lowmem_reserve(
            &[(ZoneType::Dma, 3840), (ZoneType::Dma32, 46_400)],
            LOWMEM_RESERVE_RATIO,
        );
        assert_eq!(r, vec![181, 0]);
        // three zones: DMA keeps (DMA32 + Normal) / 256, DMA32 Normal / 256, Normal nothing
        let r = lowmem_reserve(
            &[
                (ZoneType::Dma, 3975),
                (ZoneType::Dma32, 1_000_000),
                (ZoneType::Normal, 1 << 20),
            ],
            LOWMEM_RESERVE_RATIO,
        );
        assert_eq!(r, vec![(1_000_000 + (1 << 20)) / 256, (1 << 20) / 256, 0]);
        // a zone with no managed page or a ratio of 0 keeps nothing
        let r = lowmem_reserve(&[(ZoneType::Dma, 0), (ZoneType::Dma32, 1000)], [0, 256, 32, 0]);
        assert_eq!(r, vec![0, 0]);
    }

    #[test]
    fn the_guests_watermarks_follow_from_the_managed_pages_at_boot() {
        // Debian 6.12 in 256 MiB: DMA min/low/high 34/42/50, DMA32 413/516/619 (zoneinfo), set
        // while DMA32 managed 46,400 pages (before the initramfs was freed)
        let w = compute_wmarks(&[(ZoneType::Dma, 3840), (ZoneType::Dma32, 46_400)], None, 10);
        assert_eq!(w[0][..3], [34, 42, 50]);
        assert_eq!(w[1][..3], [413, 516, 619]);
    }

    #[test]
    fn boot_pages_are_never_handed_out() {
        let mut f = Folios::with_capacity(4);
        let mut z = Zone::new(0, 0, ZoneType::Dma32, 4, [0; 4], 0);
        z.take_boot(3);
        assert_eq!((z.free, z.boot_used), (1, 3));
        // the boot's pages are the zone's first ids
        assert_eq!(z.take(&mut f), Some(3));
        assert_eq!(z.take(&mut f), None);
    }

    #[test]
    fn free_list_reuses_lifo() {
        let mut f = Folios::with_capacity(4);
        let mut z = Zone::new(0, 0, ZoneType::Normal, 4, [0; 4], 0);
        let a = z.take(&mut f).unwrap();
        let b = z.take(&mut f).unwrap();
        assert_eq!((a, b), (0, 1));
        z.give(&mut f, a);
        assert_eq!(z.take(&mut f), Some(a));
        assert_eq!(z.free, 2);
        assert_eq!(z.take(&mut f), Some(2));
        assert_eq!(z.take(&mut f), Some(3));
        assert_eq!(z.take(&mut f), None);
    }
}

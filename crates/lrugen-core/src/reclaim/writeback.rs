// SPDX-License-Identifier: GPL-2.0-only
//! Writeback of dirty file pages by the flusher (`mm/page-writeback.c`, `fs/fs-writeback.c`).
//!
//! A buffered write that dirties a page calls [`balance_dirty_pages`]. As in the kernel, two
//! writeback domains are checked: the global one and the memcg of the dirtier. Each has a dirty
//! threshold of `vm.dirty_ratio` (20%) and a background threshold of `vm.dirty_background_ratio`
//! (10%) of its dirtyable memory: globally the free pages above the reserves plus the file LRU
//! pages; in a memcg its file LRU pages plus the smaller of its headroom below `memory.max`/`high`
//! and the clean pages outside it (`mdtc_calc_avail`). Background writeback starts when the
//! global dirty count passes its background threshold, or either domain passes its free-run
//! ceiling (halfway between the two thresholds), and the flusher then writes inodes, oldest
//! dirtied first, [`MIN_WRITEBACK_PAGES`] at a time from where the inode's last writeback ended,
//! until both domains are back under their background thresholds (`wb_over_bg_thresh`). Every
//! [`DIRTY_WRITEBACK_INTERVAL_NS`] while inodes are dirty the flusher also wakes on its own
//! ([`periodic`]): it writes every inode dirtied more than [`DIRTY_EXPIRE_NS`] ago
//! (`wb_check_old_data_flush`) and does background writeback if a domain is over its background
//! threshold (`wb_check_background_flush`).
//!
//! Simplified: the write completes at once (the engine prices it as device time through
//! `pgpgout`), so no page is ever under writeback and writers are never throttled (dirty pages
//! never pass the free-run ceiling); the domains are checked on every dirtied page rather than
//! every `nr_dirtied_pause` pages (tried: with the kernel's rate limit the sort fixtures leave ~6% of
//! the shuffle file dirty and resident at the end of the write phase, which the kernel has written
//! back by then through a path not modelled yet); an inode belongs to the memcg that dirtied it
//! first.

use super::Policy;
use crate::mm::folio::{pg, FolioId};
use crate::mm::memcg::{MemcgId, ROOT_MEMCG};
use crate::mm::node::WMARK_HIGH;
use crate::mm::pagecache::Slot;
use crate::mm::vmstat::Stat;
use crate::mm::Machine;

/// `vm.dirty_ratio`, percent.
pub const DIRTY_RATIO: u64 = 20;
/// `vm.dirty_background_ratio`, percent.
pub const DIRTY_BACKGROUND_RATIO: u64 = 10;
/// `vm.dirty_writeback_centisecs` (500), in ns.
pub const DIRTY_WRITEBACK_INTERVAL_NS: u64 = 5_000_000_000;
/// `vm.dirty_expire_centisecs` (3000), in ns.
pub const DIRTY_EXPIRE_NS: u64 = 30_000_000_000;
/// `MIN_WRITEBACK_PAGES`: what the flusher writes of one inode before it looks again.
pub const MIN_WRITEBACK_PAGES: u64 = 1024;
const PAGE_SIZE: u64 = 4096;

/// A writeback domain's state (`struct dirty_throttle_control`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Domain {
    /// Dirtyable pages.
    pub avail: u64,
    /// Dirty pages.
    pub dirty: u64,
    /// `vm.dirty_ratio` of `avail`.
    pub thresh: u64,
    /// `vm.dirty_background_ratio` of `avail`.
    pub bg_thresh: u64,
}

impl Domain {
    /// `domain_dirty_limits` for `avail` dirtyable pages, with the ratios in per-`PAGE_SIZE` units
    /// as the kernel computes them.
    pub fn new(avail: u64, dirty: u64) -> Domain {
        let ratio = DIRTY_RATIO * PAGE_SIZE / 100;
        let bg_ratio = DIRTY_BACKGROUND_RATIO * PAGE_SIZE / 100;
        let thresh = ratio * avail / PAGE_SIZE;
        let mut bg_thresh = bg_ratio * avail / PAGE_SIZE;
        if bg_thresh >= thresh {
            bg_thresh = thresh / 2;
        }
        Domain {
            avail,
            dirty,
            thresh,
            bg_thresh,
        }
    }
    /// `dirty_freerun_ceiling`: halfway between the background and the dirty threshold.
    pub fn freerun_ceiling(&self) -> u64 {
        (self.thresh + self.bg_thresh) / 2
    }
}

/// The global domain: `global_dirtyable_memory` (free pages above the reserves, plus file LRU
/// pages, plus one) and `NR_FILE_DIRTY`.
pub fn global_domain(m: &Machine) -> Domain {
    let (mut free, mut reserve) = (0u64, 0u64);
    for n in &m.nodes {
        for z in &n.zones {
            free += z.free;
            reserve += z.wmark(WMARK_HIGH);
        }
    }
    let nn = m.nodes.len();
    let mut file = 0i64;
    let mut dirty = 0i64;
    for node in 0..nn {
        file += m.lruvec_state(ROOT_MEMCG, node, Stat::NrInactiveFile)
            + m.lruvec_state(ROOT_MEMCG, node, Stat::NrActiveFile);
        dirty += m.lruvec_state(ROOT_MEMCG, node, Stat::NrDirty);
    }
    let avail = free - free.min(reserve) + file.max(0) as u64 + 1;
    Domain::new(avail, dirty.max(0) as u64)
}

/// The domain of `memcg` (none for the root): `mem_cgroup_wb_stats` and `mdtc_calc_avail`.
pub fn memcg_domain(m: &Machine, memcg: MemcgId, global: &Domain) -> Option<Domain> {
    if memcg == ROOT_MEMCG {
        return None;
    }
    let nn = m.nodes.len();
    let (mut file, mut dirty) = (0i64, 0i64);
    for node in 0..nn {
        file += m.lruvec_state(memcg, node, Stat::NrInactiveFile) + m.lruvec_state(memcg, node, Stat::NrActiveFile);
        dirty += m.lruvec_state(memcg, node, Stat::NrDirty);
    }
    let (file, dirty) = (file.max(0) as u64, dirty.max(0) as u64);
    // the headroom below memory.max and memory.high, the tightest over the memcg and its
    // ancestors below the root
    let mut headroom = u64::MAX;
    let mut c = memcg;
    while c != ROOT_MEMCG {
        let mc = &m.memcgs[c];
        let ceiling = mc.max.min(mc.high);
        headroom = headroom.min(ceiling - ceiling.min(mc.usage));
        match mc.parent {
            Some(p) => c = p,
            None => break,
        }
    }
    let clean = file - file.min(dirty);
    let global_clean = global.avail - global.avail.min(global.dirty);
    let other_clean = global_clean - global_clean.min(clean);
    Some(Domain::new(file + headroom.min(other_clean), dirty))
}

/// `wb_over_bg_thresh` for the writeback of `memcg`.
fn over_bg_thresh(m: &Machine, memcg: MemcgId) -> bool {
    let g = global_domain(m);
    if g.dirty > g.bg_thresh {
        return true;
    }
    memcg_domain(m, memcg, &g).is_some_and(|d| d.dirty > d.bg_thresh)
}

/// Write one dirty page-cache folio (`folio_clear_dirty_for_io` and its completion): it is clean
/// at once; a folio tagged for immediate reclaim goes to the tail of its list
/// (`folio_rotate_reclaimable`).
pub fn write_folio<P: Policy>(m: &mut Machine, p: &mut P, id: FolioId) {
    let (memcg, node) = (m.folios[id].memcg, m.folios[id].node());
    m.folio_clear_dirty(id);
    m.mod_node_state(memcg, node, Stat::NrWritten, 1);
    m.count_vm_events(Stat::Pgpgout, 4);
    if m.folios[id].test_clear(pg::RECLAIM) && m.folios[id].test(pg::LRU) {
        p.rotate_reclaimable(m, id);
    }
}

/// `writeback_single_inode` of file `file`: write up to `max` dirty pages from its
/// `writeback_index` on, wrapping around once. Returns the pages written.
fn write_inode<P: Policy>(m: &mut Machine, p: &mut P, file: u32, max: u64) -> u64 {
    let size = m.files[file as usize].size;
    let start = m.files[file as usize].writeback_index.min(size);
    let mut written = 0;
    let mut end = start;
    for i in (start..size).chain(0..start) {
        if written >= max || m.files[file as usize].nr_dirty == 0 {
            break;
        }
        if let Slot::Folio(id) = m.files[file as usize].slot(i) {
            if m.folios[id].test(pg::DIRTY) {
                write_folio(m, p, id);
                written += 1;
            }
        }
        end = i + 1;
    }
    m.files[file as usize].writeback_index = if end >= size { 0 } else { end };
    written
}

/// The dirty inode of `memcg`'s writeback (any memcg's for the root) dirtied first.
fn oldest_dirty_inode(m: &Machine, memcg: MemcgId, older_than: u64) -> Option<u32> {
    m.files
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.nr_dirty > 0
                && f.dirtied_when < older_than
                && (memcg == ROOT_MEMCG || m.memcgs.is_descendant(f.wb_memcg, memcg))
        })
        .min_by_key(|(i, f)| (f.dirtied_when, *i))
        .map(|(i, _)| i as u32)
}

/// Background writeback of `memcg`'s writeback (`wb_writeback` of a background work item): write
/// inodes oldest-dirtied first until both domains are under their background thresholds.
fn background_writeback<P: Policy>(m: &mut Machine, p: &mut P, memcg: MemcgId) {
    while over_bg_thresh(m, memcg) {
        // the global domain over its threshold: the flusher writes every memcg's inodes
        let g = global_domain(m);
        let scope = if g.dirty > g.bg_thresh { ROOT_MEMCG } else { memcg };
        let Some(file) = oldest_dirty_inode(m, scope, u64::MAX) else {
            break;
        };
        if write_inode(m, p, file, MIN_WRITEBACK_PAGES) == 0 {
            break;
        }
    }
}

/// `balance_dirty_pages` after a buffered write dirtied a page charged to `memcg`: start
/// background writeback when the global domain is over its background threshold or a domain is
/// over its free-run ceiling.
pub fn balance_dirty_pages<P: Policy>(m: &mut Machine, p: &mut P, memcg: MemcgId) {
    let g = global_domain(m);
    let start = g.dirty > g.bg_thresh
        || g.dirty > g.freerun_ceiling()
        || memcg_domain(m, memcg, &g).is_some_and(|d| d.dirty > d.freerun_ceiling());
    if start {
        background_writeback(m, p, memcg);
    }
}

/// The flusher's periodic wakeup, if it is due ([`Machine::wb_wakeup`]): write every inode
/// dirtied more than [`DIRTY_EXPIRE_NS`] ago, then do background writeback of every memcg whose
/// domain is over its background threshold; wake again in [`DIRTY_WRITEBACK_INTERVAL_NS`] while
/// inodes stay dirty.
#[inline]
pub fn periodic<P: Policy>(m: &mut Machine, p: &mut P) {
    if m.now_ns < m.wb_wakeup {
        return;
    }
    periodic_slow(m, p);
}

#[cold]
fn periodic_slow<P: Policy>(m: &mut Machine, p: &mut P) {
    let now = m.now_ns;
    if let Some(expired) = now.checked_sub(DIRTY_EXPIRE_NS) {
        while let Some(file) = oldest_dirty_inode(m, ROOT_MEMCG, expired + 1) {
            let n = m.files[file as usize].nr_dirty;
            write_inode(m, p, file, n);
        }
    }
    let mut owners: Vec<MemcgId> = m.files.iter().filter(|f| f.nr_dirty > 0).map(|f| f.wb_memcg).collect();
    owners.sort_unstable();
    owners.dedup();
    for memcg in owners {
        background_writeback(m, p, memcg);
    }
    m.wb_wakeup = if m.files.iter().any(|f| f.nr_dirty > 0) {
        now + DIRTY_WRITEBACK_INTERVAL_NS
    } else {
        u64::MAX
    };
}

// SPDX-License-Identifier: GPL-2.0-only
//! Swap: one swap device with slots, reference counts, and the swap cache.
//!
//! A slot's `count` is the number of PTEs holding its swap entry (`swap_map`); its cache slot holds
//! the folio while it is in the swap cache (`SWAP_HAS_CACHE`), or the shadow entry left when that
//! folio was reclaimed. Slots are handed out lowest-free-first, which keeps runs deterministic (the
//! kernel's per-cpu clusters would do the same on one CPU for a fresh device). I/O completes
//! synchronously, as on zram or a ramdisk (`SWP_SYNCHRONOUS_IO`); asynchronous devices with
//! writeback in flight come with the device model.
//!
//! The per-slot arrays cover the slots used so far, not the device: as slots are handed out
//! lowest-free-first, every slot in use lies below the high-water mark `fresh`, and the arrays grow
//! with it, so a large swap device costs memory only for the pages swapped to it.

use super::folio::FolioId;
use super::pagecache::{PackedSlot, Slot};
use std::collections::BTreeSet;

/// The swap device.
#[derive(Clone, Debug, Default)]
pub struct Swap {
    /// Total slots (pages).
    pub nr_slots: u64,
    /// PTE references per slot (slots below the high-water mark).
    pub count: Vec<u16>,
    /// Swap cache: folio or shadow per slot (slots below the high-water mark).
    pub cache: Vec<PackedSlot>,
    /// Memcg charged for each slot (`swap_cgroup`; slots below the high-water mark).
    pub owner: Vec<u16>,
    /// zram: compressed bytes stored for each slot (0: nothing stored; a page stored whole,
    /// zram's huge page: 4096; slots below the high-water mark).
    pub zbytes: Vec<u16>,
    /// The cluster read-ahead's state (`swapin_nr_pages`' statics).
    pub ra: ClusterRa,
    free: BTreeSet<u32>,
    /// Slots never used (`nr_slots - fresh ..` are free and not in `free`).
    fresh: u32,
}

impl Swap {
    /// A device of `nr_slots` pages (0 = no swap).
    pub fn new(nr_slots: u64) -> Self {
        Swap {
            nr_slots,
            count: Vec::new(),
            cache: Vec::new(),
            owner: Vec::new(),
            zbytes: Vec::new(),
            ra: ClusterRa::new(),
            free: BTreeSet::new(),
            fresh: 0,
        }
    }
    /// Free slots (`get_nr_swap_pages`).
    pub fn nr_free(&self) -> u64 {
        self.free.len() as u64 + (self.nr_slots - self.fresh as u64)
    }
    /// Whether more than half the device is used (`vm_swap_full`).
    pub fn is_full(&self) -> bool {
        self.nr_free() * 2 < self.nr_slots
    }
    /// Allocate a slot (`folio_alloc_swap`).
    pub fn alloc(&mut self) -> Option<u32> {
        if let Some(s) = self.free.pop_first() {
            Some(s)
        } else if (self.fresh as u64) < self.nr_slots {
            // the growth point: one more slot below the high-water mark
            self.fresh += 1;
            self.count.push(0);
            self.cache.push(PackedSlot::default());
            self.owner.push(0);
            self.zbytes.push(0);
            Some(self.fresh - 1)
        } else {
            None
        }
    }
    /// Allocate the `n` slots (a power of two) of one free cluster aligned to `n`: a large
    /// folio's (`swap_alloc_cluster` in 6.1, `cluster_alloc_swap_entry` of its order in 6.12 and
    /// 7.2: only a wholly free cluster will do). The lowest free one below the high-water mark,
    /// else the next aligned one above it (the slots skipped to align it become free). Returns
    /// the first slot.
    pub fn alloc_cluster(&mut self, n: u32) -> Option<u32> {
        debug_assert!(n.is_power_of_two());
        // a free cluster among the slots handed out before
        let mut it = self.free.iter().copied().filter(|s| s % n == 0);
        let below = loop {
            let Some(s) = it.next() else { break None };
            if s + n <= self.fresh && self.free.range(s..s + n).count() == n as usize {
                break Some(s);
            }
        };
        if let Some(s) = below {
            for x in s..s + n {
                self.free.remove(&x);
            }
            return Some(s);
        }
        let s = self.fresh.next_multiple_of(n);
        if u64::from(s) + u64::from(n) > self.nr_slots {
            return None;
        }
        for x in self.fresh..s + n {
            self.count.push(0);
            self.cache.push(PackedSlot::default());
            self.owner.push(0);
            self.zbytes.push(0);
            if x < s {
                self.free.insert(x);
            }
        }
        self.fresh = s + n;
        Some(s)
    }
    /// Return a slot to the free pool; its shadow is dropped.
    pub fn free_slot(&mut self, s: u32) {
        debug_assert_eq!(self.count[s as usize], 0);
        self.cache[s as usize] = PackedSlot::default();
        self.free.insert(s);
    }
    /// Swap-cache slot of `s`.
    #[inline]
    pub fn cache_slot(&self, s: u32) -> Slot {
        self.cache.get(s as usize).map_or(Slot::Empty, |c| c.get())
    }
    /// Set the swap-cache slot of `s`.
    #[inline]
    pub fn set_cache_slot(&mut self, s: u32, v: Slot) {
        self.cache[s as usize] = PackedSlot::pack(v);
    }
    /// Put anon folio `f` in the swap cache at `s`, keeping its rmap root `root` in the entry (the
    /// folio's `mapping` holds the slot meanwhile; see `mm::folio`).
    #[inline]
    pub fn set_cache_folio(&mut self, s: u32, f: FolioId, root: u32) {
        self.cache[s as usize] = PackedSlot::pack_folio_with(f, root);
    }
    /// The rmap root (an mm id) of the anon folio the swap cache holds at `s`.
    #[inline]
    pub fn cache_root(&self, s: u32) -> u32 {
        debug_assert!(matches!(self.cache_slot(s), Slot::Folio(_)));
        self.cache[s as usize].folio_extra()
    }
    /// Whether the slot is allocated (referenced by PTEs or held by the swap cache).
    pub fn in_use(&self, s: u32) -> bool {
        self.count.get(s as usize).is_some_and(|&c| c > 0) || matches!(self.cache_slot(s), Slot::Folio(_))
    }
    /// Slots ever handed out (the high-water mark the per-slot arrays cover).
    pub fn high_water(&self) -> u32 {
        self.fresh
    }
    /// Bytes per slot of the per-slot arrays, as [`Swap::bytes`] counts them (`count`, `cache`,
    /// `owner`, `zbytes`).
    pub const SLOT_BYTES: u64 = 2 + 8 + 2 + 2;
    /// Swapped-out pages: slots referenced by PTEs whose page is not in the swap cache (not
    /// resident).
    pub fn swapped_out(&self) -> u64 {
        (0..self.count.len() as u32)
            .filter(|&s| self.count[s as usize] > 0 && !matches!(self.cache_slot(s), Slot::Folio(_)))
            .count() as u64
    }
    /// PTEs that hold the swap entries of swapped-out pages ([`Swap::swapped_out`]'s slots'
    /// references).
    pub fn swapped_out_ptes(&self) -> u64 {
        (0..self.count.len() as u32)
            .filter(|&s| self.count[s as usize] > 0 && !matches!(self.cache_slot(s), Slot::Folio(_)))
            .map(|s| u64::from(self.count[s as usize]))
            .sum()
    }
    /// Bytes held by the per-slot arrays and the free set.
    pub fn bytes(&self) -> u64 {
        (self.count.capacity() * 2 + self.cache.capacity() * 8 + self.owner.capacity() * 2 + self.zbytes.capacity() * 2)
            as u64
            + self.free.len() as u64 * 8
    }
}

/// The machine-wide state of the read-ahead of swap offsets (`swap_cluster_readahead`), which the
/// kernel keeps in `swapin_nr_pages`' statics and `swapin_readahead_hits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterRa {
    /// `swapin_readahead_hits`: read-ahead folios found in the swap cache by faults since the
    /// last window was sized (4 at boot, so that the first fault reads a window).
    pub hits: u32,
    /// `prev_offset`: the offset of the last fault that sized a window with no hits.
    pub prev_offset: u64,
    /// `last_readahead_pages`: the last window.
    pub last_pages: u32,
}

impl ClusterRa {
    /// The state at boot.
    pub const fn new() -> Self {
        ClusterRa {
            hits: 4,
            prev_offset: 0,
            last_pages: 0,
        }
    }
}

impl Default for ClusterRa {
    fn default() -> Self {
        Self::new()
    }
}

/// A VMA's `swap_readahead_info`: the page of its last swap fault, the window that fault read and
/// the read-ahead folios its faults found in the swap cache since. A new VMA reads as 4 hits
/// (`GET_SWAP_RA_VAL`), so its first swap fault reads a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VmaRa {
    /// The virtual page of the last fault (`SWAP_RA_ADDR`).
    pub vpn: u32,
    /// `SWAP_RA_WIN`: pages read around it.
    pub win: u8,
    /// `SWAP_RA_HITS` (at most [`SWAP_RA_HITS_MAX`]).
    pub hits: u8,
}

/// `SWAP_RA_HITS_MAX`: the hits field's width (`PAGE_SHIFT / 2` bits).
pub const SWAP_RA_HITS_MAX: u8 = 63;
/// `SWAP_RA_ORDER_CEILING`: VMA read-ahead reads at most `2^5` pages whatever `page-cluster` says.
pub const SWAP_RA_ORDER_CEILING: u32 = 5;

impl VmaRa {
    /// A VMA that never swapped in.
    pub const fn new() -> Self {
        VmaRa {
            vpn: 0,
            win: 0,
            hits: 4,
        }
    }
}

impl Default for VmaRa {
    fn default() -> Self {
        Self::new()
    }
}

/// `__swapin_nr_pages`: the window of a swap fault at `offset` after one at `prev_offset` that read
/// `prev_win` pages, with `hits` read-ahead pages used since. No hits: 2 pages if the fault is next
/// to the previous one, else 1; otherwise `hits + 2` rounded up to a power of two (at least 4).
/// At most `max_pages`, and never under half the previous window (it shrinks by halves).
pub fn swapin_nr_pages(prev_offset: u64, offset: u64, hits: u32, max_pages: u32, prev_win: u32) -> u32 {
    let mut pages = hits + 2;
    if pages == 2 {
        // the kernel compares unsigned offsets: 0 - 1 wraps
        if offset != prev_offset.wrapping_add(1) && offset != prev_offset.wrapping_sub(1) {
            pages = 1;
        }
    } else {
        pages = pages.next_power_of_two().max(4);
    }
    pages.min(max_pages).max(prev_win / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_grows_with_hits_and_shrinks_by_halves() {
        // a first fault: 4 hits at boot give 6, rounded up to 8
        assert_eq!(swapin_nr_pages(0, 100, 4, 8, 0), 8);
        assert_eq!(swapin_nr_pages(0, 100, 4, 32, 0), 8);
        // no hits: a neighbour of the last fault reads 2, any other page 1, but never less than
        // half the last window
        assert_eq!(swapin_nr_pages(99, 100, 0, 8, 0), 2);
        assert_eq!(swapin_nr_pages(101, 100, 0, 8, 0), 2);
        assert_eq!(swapin_nr_pages(50, 100, 0, 8, 0), 1);
        assert_eq!(swapin_nr_pages(50, 100, 0, 8, 8), 4);
        assert_eq!(swapin_nr_pages(50, 100, 0, 8, 4), 2);
        assert_eq!(swapin_nr_pages(50, 100, 0, 8, 2), 1);
        // hits: hits + 2 rounded up to a power of two, at least 4, at most the maximum
        assert_eq!(swapin_nr_pages(50, 100, 1, 8, 0), 4);
        assert_eq!(swapin_nr_pages(50, 100, 3, 8, 0), 8);
        assert_eq!(swapin_nr_pages(50, 100, 7, 8, 0), 8);
        assert_eq!(swapin_nr_pages(50, 100, 7, 32, 0), 16);
        // offset 0 after 0: the wrapped 0 - 1 is no neighbour
        assert_eq!(swapin_nr_pages(0, 0, 0, 8, 0), 1);
        assert_eq!(swapin_nr_pages(0, 1, 0, 8, 0), 2);
    }

    #[test]
    fn lowest_free_first() {
        let mut s = Swap::new(3);
        assert_eq!((s.alloc(), s.alloc()), (Some(0), Some(1)));
        s.free_slot(0);
        assert_eq!(s.alloc(), Some(0));
        assert_eq!(s.alloc(), Some(2));
        assert_eq!(s.alloc(), None);
        assert_eq!(s.nr_free(), 0);
        assert!(s.is_full());
    }

    #[test]
    fn a_large_device_costs_only_the_slots_used() {
        let mut s = Swap::new(1 << 40);
        assert_eq!(s.bytes(), 0);
        for want in 0..10 {
            assert_eq!(s.alloc(), Some(want));
        }
        assert_eq!((s.high_water(), s.count.len()), (10, 10));
        assert_eq!(s.cache_slot(1_000_000), Slot::Empty);
        assert!(!s.in_use(1_000_000));
        assert!(s.bytes() < 1024);
    }
}

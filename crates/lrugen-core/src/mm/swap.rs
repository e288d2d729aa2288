// SPDX-License-Identifier: GPL-2.0-only
//! Swap: one swap device with slots, reference counts, and the swap cache.
//!
//! A slot's count is the number of PTEs holding its swap entry (`swap_map`); a folio in the swap
//! cache holds it too (`SWAP_HAS_CACHE`), or, once that folio was reclaimed, the shadow entry it
//! left. Slots are handed out lowest-free-first, which keeps runs deterministic (the kernel's
//! per-cpu clusters would do the same on one CPU for a fresh device). I/O completes
//! synchronously, as on zram or a ramdisk (`SWP_SYNCHRONOUS_IO`); asynchronous devices with
//! writeback in flight come with the device model.
//!
//! The per-slot arrays cover the slots used so far, not the device: as slots are handed out
//! lowest-free-first, every slot in use lies below the high-water mark `fresh`, and the arrays grow
//! with it, so a large swap device costs memory only for the pages swapped to it.
//!
//! Three bytes per slot (since 2026-12-06; fourteen before), because almost every resident page
//! of a run that swaps keeps its slot while in the swap cache:
//!
//! * `map`, a byte (the kernel's `swap_map`): the count in 7 bits (127: the count is in
//!   `continued`, as `COUNT_CONTINUED` sends the kernel to a continuation page) and
//!   [`HAS_CACHE`];
//! * `class`, two bytes: the slot's owner (`swap_cgroup`), the rmap root of the folio the swap
//!   cache holds there (the folio's `mapping` holds the slot meanwhile, see `mm::folio`) and the
//!   size zram stores for it (as the percentage it was compressed to), interned: a run has few
//!   such triples ([`SlotClass`]; past 65,535 of them a slot's own goes to `escaped`);
//! * the swap cache's entries (`cache`, a [`PageSlots`] by slot, leaves of 64 slots keeping only
//!   their entries in use): the shadow entry of a swapped-out page, and the folio of a slot that a
//!   swap entry holds while the folio is in the swap cache (a fault on that entry looks it up). A
//!   folio in the swap cache that no entry holds (a swapped-in page, mapped) needs no entry: it
//!   knows its slot, and nothing looks it up by slot.
//!
//! No hashing on the way of a fault: a class is interned through a memo of the last ones used
//! (a hash map only when the memo misses: a new owner, root or size).

use super::folio::{FolioId, NIL};
use super::memcg::MemcgId;
use super::pagecache::{PageSlots, Slot};
use std::collections::{BTreeMap, HashMap};

/// `SWAP_HAS_CACHE`: a folio in the swap cache holds the slot.
pub const HAS_CACHE: u8 = 0x80;
/// The count field of `map` (7 bits).
const COUNT_MASK: u8 = 0x7f;
/// A count of this or more lives in `continued` (`COUNT_CONTINUED`).
const COUNT_CONTINUED: u8 = COUNT_MASK;
/// A class's root when no folio is in the swap cache at its slot.
pub const NO_ROOT: u32 = u32::MAX;

/// What a slot in use records besides its count: the memcg charged for it (`swap_cgroup`), the
/// rmap root (an mm id) of the anon folio the swap cache holds at it ([`NO_ROOT`]: none), and,
/// on zram, the percentage of a page its compressed copy takes (0: nothing stored; 1..=100, the
/// size [`zram_stored_bytes`] gives). Interned per swap device (`Swap::class`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlotClass {
    /// `swap_cgroup`'s record.
    pub owner: MemcgId,
    /// The swap-cache folio's rmap root, or [`NO_ROOT`].
    pub root: u32,
    /// zram: the compressed copy's size as a percentage of a page (0: none).
    pub zpct: u8,
}

impl SlotClass {
    /// A slot just allocated, or free.
    pub const NONE: SlotClass = SlotClass {
        owner: 0,
        root: NO_ROOT,
        zpct: 0,
    };
    #[inline(always)]
    fn key(self) -> u64 {
        (u64::from(self.root) << 32) | (u64::from(self.owner) << 8) | u64::from(self.zpct)
    }
}

/// The bytes zram stores for a page compressed to `pct` % of its size (1..=100): a page that
/// compresses to zsmalloc's huge-class size or more is stored whole (`huge_pages`).
pub fn zram_stored_bytes(pct: u8) -> u64 {
    let bytes = super::PAGE_SIZE * u64::from(pct.clamp(1, 100)) / 100;
    if bytes >= super::zram::HUGE_CLASS_SIZE {
        super::PAGE_SIZE
    } else {
        bytes
    }
}

/// The classes of a swap device's slots: code → class, and back through a memo of the last few
/// classes interned (then a hash map).
#[derive(Clone, Debug)]
struct Classes {
    list: Vec<SlotClass>,
    index: HashMap<SlotClass, u16>,
    /// The last classes interned, by key, round robin.
    memo: [(u64, u16); 4],
    next: usize,
    /// The code that sends a slot's class to `escaped` (`u16::MAX`; lower in tests).
    escape: u16,
}

impl Classes {
    /// No class yet: [`SlotClass::NONE`] takes code 0 when the first slot is handed out
    /// ([`Classes::first`]), so that a machine without swap holds nothing here.
    fn new(escape: u16) -> Self {
        Classes {
            list: Vec::new(),
            index: HashMap::new(),
            memo: [(SlotClass::NONE.key(), 0); 4],
            next: 0,
            escape,
        }
    }
    /// Code 0, [`SlotClass::NONE`] (the class of a slot handed out, and of a free one).
    #[cold]
    fn first(&mut self) {
        self.list.push(SlotClass::NONE);
        self.index.insert(SlotClass::NONE, 0);
    }
    /// The code of `c`, interning it; `escape` when the codes are used up.
    #[inline]
    fn code(&mut self, c: SlotClass) -> u16 {
        let k = c.key();
        for &(mk, code) in &self.memo {
            if mk == k {
                return code;
            }
        }
        self.code_slow(c)
    }
    #[cold]
    fn code_slow(&mut self, c: SlotClass) -> u16 {
        let code = match self.index.get(&c) {
            Some(&code) => code,
            None if self.list.len() < usize::from(self.escape) => {
                let code = self.list.len() as u16;
                self.list.push(c);
                self.index.insert(c, code);
                code
            }
            None => return self.escape,
        };
        self.memo[self.next] = (c.key(), code);
        self.next = (self.next + 1) % self.memo.len();
        code
    }
    fn bytes(&self) -> u64 {
        // the list, and the map at about its entries and a control byte each
        (self.list.capacity() * std::mem::size_of::<SlotClass>()
            + self.index.capacity() * (std::mem::size_of::<(SlotClass, u16)>() + 1)) as u64
    }
}

/// Free slots below the high-water mark, a bit each, with a bit per word of them that has any
/// (found lowest first without a scan of the whole map).
#[derive(Clone, Debug, Default)]
struct FreeSlots {
    bits: Vec<u64>,
    summary: Vec<u64>,
    /// No word of `summary` below this one has a bit set.
    low: usize,
    n: u32,
}

impl FreeSlots {
    fn contains(&self, s: u32) -> bool {
        self.bits.get(s as usize / 64).is_some_and(|w| w & (1 << (s % 64)) != 0)
    }
    fn insert(&mut self, s: u32) {
        let w = s as usize / 64;
        if w >= self.bits.len() {
            self.bits.resize(w + 1, 0);
            self.summary.resize(self.bits.len().div_ceil(64), 0);
        }
        debug_assert!(!self.contains(s));
        self.bits[w] |= 1 << (s % 64);
        self.summary[w / 64] |= 1 << (w % 64);
        self.low = self.low.min(w / 64);
        self.n += 1;
    }
    fn remove(&mut self, s: u32) {
        debug_assert!(self.contains(s));
        let w = s as usize / 64;
        self.bits[w] &= !(1 << (s % 64));
        if self.bits[w] == 0 {
            self.summary[w / 64] &= !(1 << (w % 64));
        }
        self.n -= 1;
    }
    /// The lowest free slot, if any.
    fn first(&mut self) -> Option<u32> {
        if self.n == 0 {
            return None;
        }
        while self.summary[self.low] == 0 {
            self.low += 1;
        }
        let w = self.low * 64 + self.summary[self.low].trailing_zeros() as usize;
        Some((w * 64) as u32 + self.bits[w].trailing_zeros())
    }
    /// The free slots from the lowest up.
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.bits
            .iter()
            .enumerate()
            .filter(|(_, &b)| b != 0)
            .flat_map(|(w, &b)| {
                (0..64u32)
                    .filter(move |i| b & (1 << i) != 0)
                    .map(move |i| w as u32 * 64 + i)
            })
    }
    fn bytes(&self) -> u64 {
        (self.bits.capacity() + self.summary.capacity()) as u64 * 8
    }
}

/// The swap device.
#[derive(Clone, Debug)]
pub struct Swap {
    /// Total slots (pages).
    pub nr_slots: u64,
    /// Per slot below the high-water mark: its count and [`HAS_CACHE`] (`swap_map`).
    map: Vec<u8>,
    /// Per slot below the high-water mark: the code of its [`SlotClass`].
    class: Vec<u16>,
    /// The counts of 127 or more (`map` says [`COUNT_CONTINUED`]).
    continued: BTreeMap<u32, u32>,
    classes: Classes,
    /// The classes of slots whose code is the escape (every code in use).
    escaped: BTreeMap<u32, SlotClass>,
    /// The swap cache's entries: shadows, and the folios of cached slots that entries hold.
    cache: PageSlots,
    /// The cluster read-ahead's state (`swapin_nr_pages`' statics).
    pub ra: ClusterRa,
    free: FreeSlots,
    /// Slots never used (`nr_slots - fresh ..` are free and not in `free`).
    fresh: u32,
}

impl Default for Swap {
    fn default() -> Self {
        Swap::new(0)
    }
}

impl Swap {
    /// A device of `nr_slots` pages (0 = no swap).
    pub fn new(nr_slots: u64) -> Self {
        Swap::with_class_limit(nr_slots, u16::MAX)
    }
    /// A device whose slots' classes escape to a map of their own once `limit` are interned (the
    /// default, `u16::MAX`, leaves 65,535; tests take fewer).
    pub fn with_class_limit(nr_slots: u64, limit: u16) -> Self {
        Swap {
            nr_slots,
            map: Vec::new(),
            class: Vec::new(),
            continued: BTreeMap::new(),
            classes: Classes::new(limit.max(1)),
            escaped: BTreeMap::new(),
            cache: PageSlots::for_pages(nr_slots.min(1 << 32)),
            ra: ClusterRa::new(),
            free: FreeSlots::default(),
            fresh: 0,
        }
    }
    /// Free slots (`get_nr_swap_pages`).
    pub fn nr_free(&self) -> u64 {
        u64::from(self.free.n) + (self.nr_slots - self.fresh as u64)
    }
    /// Whether more than half the device is used (`vm_swap_full`).
    pub fn is_full(&self) -> bool {
        self.nr_free() * 2 < self.nr_slots
    }
    /// One more slot below the high-water mark: the per-slot arrays grow by a sixteenth at a time.
    fn grow(&mut self) {
        if self.map.len() == self.map.capacity() {
            if self.map.is_empty() {
                self.classes.first();
            }
            let more = (self.map.len() / 16).max(64);
            self.map.reserve_exact(more);
            self.class.reserve_exact(more);
        }
        self.map.push(0);
        self.class.push(0);
        self.fresh += 1;
    }
    /// Allocate a slot (`folio_alloc_swap`).
    pub fn alloc(&mut self) -> Option<u32> {
        if let Some(s) = self.free.first() {
            self.free.remove(s);
            Some(s)
        } else if (self.fresh as u64) < self.nr_slots {
            // the growth point: one more slot below the high-water mark
            self.grow();
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
        let below = self
            .free
            .iter()
            .filter(|s| s % n == 0)
            .find(|&s| s + n <= self.fresh && (s..s + n).all(|x| self.free.contains(x)));
        if let Some(s) = below {
            for x in s..s + n {
                self.free.remove(x);
            }
            return Some(s);
        }
        let s = self.fresh.next_multiple_of(n);
        if u64::from(s) + u64::from(n) > self.nr_slots {
            return None;
        }
        for x in self.fresh..s + n {
            self.grow();
            if x < s {
                self.free.insert(x);
            }
        }
        Some(s)
    }
    /// Return a slot to the free pool; its shadow is dropped.
    pub fn free_slot(&mut self, s: u32) {
        debug_assert_eq!(self.map[s as usize], 0, "a slot freed while held");
        self.cache.replace(u64::from(s), Slot::Empty);
        if self.class[s as usize] == self.classes.escape {
            self.escaped.remove(&s);
        }
        self.class[s as usize] = 0;
        self.free.insert(s);
    }

    /// PTEs holding the swap entry of `s` (`swap_count`; 0 beyond the high-water mark).
    #[inline]
    pub fn count(&self, s: u32) -> u32 {
        match self.map.get(s as usize) {
            Some(&m) if m & COUNT_MASK == COUNT_CONTINUED => self.continued[&s],
            Some(&m) => u32::from(m & COUNT_MASK),
            None => 0,
        }
    }
    /// Set the count of `s` the long way (to or from a continued count).
    #[cold]
    fn set_count(&mut self, s: u32, c: u32) {
        let m = &mut self.map[s as usize];
        if *m & COUNT_MASK == COUNT_CONTINUED {
            self.continued.remove(&s);
        }
        if c >= u32::from(COUNT_CONTINUED) {
            *m = (*m & HAS_CACHE) | COUNT_CONTINUED;
            self.continued.insert(s, c);
        } else {
            *m = (*m & HAS_CACHE) | c as u8;
        }
    }
    /// One more PTE holds the swap entry of `s` (`swap_duplicate`, or `try_to_unmap` writing it):
    /// `folio` is the folio the swap cache holds at `s` if any ([`NIL`] where the slot has an
    /// entry holding it already), which an entry can then look up.
    #[inline]
    pub fn dup(&mut self, s: u32, folio: FolioId) {
        let m = self.map[s as usize];
        if m == HAS_CACHE {
            // the first entry of a cached slot: its folio is looked up by the slot from now on
            debug_assert_ne!(folio, NIL, "the first entry of a cached slot needs its folio");
            self.cache.replace(u64::from(s), Slot::Folio(folio));
        }
        if m & COUNT_MASK < COUNT_CONTINUED - 1 {
            self.map[s as usize] = m + 1;
        } else {
            let c = self.count(s);
            self.set_count(s, c + 1);
        }
    }
    /// One PTE less holds the swap entry of `s`: the count left, and the swap-cache folio of a
    /// slot no entry holds any more (which is then looked up by slot no more).
    #[inline]
    pub fn put(&mut self, s: u32) -> (u32, Option<FolioId>) {
        let m = self.map[s as usize];
        let c = if m & COUNT_MASK != COUNT_CONTINUED {
            debug_assert!(m & COUNT_MASK > 0, "swap slot {s}: a reference put that no entry held");
            self.map[s as usize] = m - 1;
            u32::from(m & COUNT_MASK) - 1
        } else {
            let c = self.count(s) - 1;
            self.set_count(s, c);
            c
        };
        if c == 0 && m & HAS_CACHE != 0 {
            match self.cache.replace(u64::from(s), Slot::Empty).old {
                Slot::Folio(f) => return (0, Some(f)),
                x => unreachable!("swap slot {s}: a cached slot held by an entry has {x:?}"),
            }
        }
        (c, None)
    }
    /// Whether a folio in the swap cache holds `s` (`SWAP_HAS_CACHE`).
    #[inline]
    pub fn cached(&self, s: u32) -> bool {
        self.map.get(s as usize).is_some_and(|&m| m & HAS_CACHE != 0)
    }
    /// The swap-cache entry of `s` as a fault on a swap entry holding it sees it: the folio the
    /// swap cache holds there, the shadow its last folio left, or nothing. Only for a slot that
    /// a swap entry holds (count > 0): a cached folio no entry holds is not kept by slot.
    #[inline]
    pub fn cache_slot(&self, s: u32) -> Slot {
        debug_assert!(
            !self.cached(s) || self.count(s) > 0,
            "swap slot {s}: the swap-cache folio of a slot no entry holds is not looked up by slot"
        );
        if (s as usize) < self.map.len() {
            self.cache.get(u64::from(s))
        } else {
            Slot::Empty
        }
    }
    /// Put anon folio `f` in the swap cache at `s` with its rmap root `root` (the folio's
    /// `mapping` holds the slot meanwhile; see `mm::folio`): the shadow entry it replaces, if any.
    #[inline]
    pub fn cache_add(&mut self, s: u32, f: FolioId, root: u32) -> Option<u64> {
        debug_assert!(!self.cached(s));
        // a slot no entry holds has nothing in the table (no shadow either: it was free)
        let old = if self.map[s as usize] != 0 {
            self.cache.replace(u64::from(s), Slot::Folio(f)).old
        } else {
            Slot::Empty
        };
        self.map[s as usize] |= HAS_CACHE;
        self.update(s, |c| c.root = root);
        match old {
            Slot::Shadow(v) => Some(v),
            _ => None,
        }
    }
    /// Take the folio out of the swap cache at `s`, leaving `shadow` where an entry holds the
    /// slot (a slot none holds is released, and a shadow would go with it): its rmap root.
    #[inline]
    pub fn cache_delete(&mut self, s: u32, shadow: Option<u64>) -> u32 {
        debug_assert!(self.cached(s));
        let root = self.cache_root(s);
        if self.map[s as usize] != HAS_CACHE {
            self.cache
                .replace(u64::from(s), shadow.map_or(Slot::Empty, Slot::Shadow));
        }
        self.map[s as usize] &= !HAS_CACHE;
        self.update(s, |c| c.root = NO_ROOT);
        root
    }
    /// The swap-cache folio at `s` moved to frame `to` (`migrate_folio`).
    pub fn cache_move(&mut self, s: u32, to: FolioId) {
        debug_assert!(self.cached(s));
        if self.count(s) > 0 {
            self.cache.replace(u64::from(s), Slot::Folio(to));
        }
    }
    /// The rmap root (an mm id) of the anon folio the swap cache holds at `s`.
    #[inline]
    pub fn cache_root(&self, s: u32) -> u32 {
        debug_assert!(self.cached(s));
        self.class_of(s).root
    }
    /// Set the rmap root of the anon folio the swap cache holds at `s`.
    #[inline]
    pub fn set_cache_root(&mut self, s: u32, root: u32) {
        debug_assert!(self.cached(s) && root != NO_ROOT);
        self.update(s, |c| c.root = root);
    }
    /// The memcg charged for `s` (`lookup_swap_cgroup_id`).
    #[inline]
    pub fn owner(&self, s: u32) -> MemcgId {
        self.class_of(s).owner
    }
    /// Record the memcg charged for `s` (`swap_cgroup_record`).
    #[inline]
    pub fn set_owner(&mut self, s: u32, owner: MemcgId) {
        self.update(s, |c| c.owner = owner);
    }
    /// zram: the percentage of a page the copy stored for `s` takes (0: none).
    #[inline]
    pub fn zram_pct(&self, s: u32) -> u8 {
        self.class_of(s).zpct
    }
    /// zram: record the copy stored for `s` (`pct` 1..=100; 0: none).
    #[inline]
    pub fn set_zram_pct(&mut self, s: u32, pct: u8) {
        debug_assert!(pct <= 100);
        self.update(s, |c| c.zpct = pct);
    }
    /// The class of slot `s`.
    #[inline]
    pub fn class_of(&self, s: u32) -> SlotClass {
        let code = self.class[s as usize];
        if code == self.classes.escape {
            self.escaped[&s]
        } else {
            self.classes.list[code as usize]
        }
    }
    /// Change the class of slot `s` by `f`: its code, interned, or the escape.
    #[inline(always)]
    fn update(&mut self, s: u32, f: impl FnOnce(&mut SlotClass)) {
        let old = self.class[s as usize];
        let esc = self.classes.escape;
        let cur = if old == esc {
            self.escaped[&s]
        } else {
            self.classes.list[old as usize]
        };
        let mut c = cur;
        f(&mut c);
        if c == cur {
            return;
        }
        let code = self.classes.code(c);
        if code == esc || old == esc {
            self.escape(s, c, code);
        }
        self.class[s as usize] = code;
    }
    /// The class of slot `s` goes to `escaped` (no code left for it), or leaves it.
    #[cold]
    fn escape(&mut self, s: u32, c: SlotClass, code: u16) {
        if code == self.classes.escape {
            self.escaped.insert(s, c);
        } else {
            self.escaped.remove(&s);
        }
    }
    /// Whether the slot is allocated (referenced by PTEs or held by the swap cache).
    pub fn in_use(&self, s: u32) -> bool {
        self.map.get(s as usize).is_some_and(|&m| m != 0)
    }
    /// Slots ever handed out (the high-water mark the per-slot arrays cover).
    pub fn high_water(&self) -> u32 {
        self.fresh
    }
    /// Bytes per slot of the per-slot arrays (`map` and `class`), as [`Swap::bytes`] counts them
    /// (with their room to grow).
    pub const SLOT_BYTES: u64 = 1 + 2;
    /// Swapped-out pages: slots referenced by PTEs whose page is not in the swap cache (not
    /// resident).
    pub fn swapped_out(&self) -> u64 {
        self.map.iter().filter(|&&m| m != 0 && m & HAS_CACHE == 0).count() as u64
    }
    /// PTEs that hold the swap entries of swapped-out pages ([`Swap::swapped_out`]'s slots'
    /// references).
    pub fn swapped_out_ptes(&self) -> u64 {
        (0..self.fresh)
            .filter(|&s| self.map[s as usize] != 0 && !self.cached(s))
            .map(|s| u64::from(self.count(s)))
            .sum()
    }
    /// Bytes of the swap cache's entries kept for swapped-out pages: the shadow values whole,
    /// and of the rest of the table (its entries, leaves, blocks and directory) the shadow
    /// entries' share by count. The folio entries' share is the resident pages'.
    pub fn shadow_bytes(&self) -> u64 {
        let shadows = self.cache.shadows.len();
        let entries: u64 = self.cache.chunks_live().map(|(_, n)| u64::from(n)).sum();
        let table = self.cache.bytes() - self.cache.shadows.bytes();
        self.cache.shadows.bytes() + table * shadows / entries.max(1)
    }
    /// Shadow entries in the swap cache.
    pub fn nr_shadows(&self) -> u64 {
        self.cache.shadows.len()
    }
    /// The entries of the swap cache by slot (shadows, and folios of slots entries hold).
    pub fn cache_entries(&self) -> impl Iterator<Item = (u32, Slot)> + '_ {
        self.cache.iter().map(|(s, e)| (s as u32, e))
    }
    /// Bytes held by the per-slot arrays, the free map, the classes and the swap cache.
    pub fn bytes(&self) -> u64 {
        (self.map.capacity() + self.class.capacity() * 2) as u64
            + self.free.bytes()
            + self.classes.bytes()
            + (self.continued.len() + self.escaped.len()) as u64 * 16
            + self.cache.bytes()
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

    /// The reference model of a slot in use.
    #[derive(Clone, Copy, Debug, Default)]
    struct RefSlot {
        count: u32,
        cached: Option<(FolioId, u32)>,
        shadow: Option<u64>,
        owner: MemcgId,
        zpct: u8,
    }

    /// What the device says of every slot matches the reference model.
    fn same(s: &Swap, slots: &BTreeMap<u32, RefSlot>, free: &std::collections::BTreeSet<u32>, fresh: u32) {
        assert_eq!(s.high_water(), fresh);
        assert_eq!(s.nr_free(), free.len() as u64 + s.nr_slots - u64::from(fresh));
        for x in 0..fresh + 2 {
            match slots.get(&x) {
                Some(r) => {
                    assert!(s.in_use(x) || (r.count == 0 && r.cached.is_none()));
                    assert_eq!(s.count(x), r.count, "slot {x}");
                    assert_eq!(s.cached(x), r.cached.is_some(), "slot {x}");
                    let c = s.class_of(x);
                    assert_eq!((c.owner, c.zpct), (r.owner, r.zpct), "slot {x}");
                    assert_eq!(c.root, r.cached.map_or(NO_ROOT, |(_, root)| root), "slot {x}");
                    if r.count > 0 {
                        let want = match (r.cached, r.shadow) {
                            (Some((f, _)), _) => Slot::Folio(f),
                            (None, Some(v)) => Slot::Shadow(v),
                            (None, None) => Slot::Empty,
                        };
                        assert_eq!(s.cache_slot(x), want, "slot {x}");
                    }
                }
                None => {
                    assert!(!s.in_use(x) && !s.cached(x) && s.count(x) == 0, "slot {x}");
                    assert_eq!(s.cache_slot(x), Slot::Empty, "slot {x}");
                    assert_eq!(free.contains(&x), x < fresh, "slot {x}");
                    if x < fresh {
                        assert_eq!(s.class_of(x), SlotClass::NONE);
                    }
                }
            }
        }
        let swapped = slots.values().filter(|r| r.count > 0 && r.cached.is_none());
        assert_eq!(s.swapped_out(), swapped.clone().count() as u64);
        assert_eq!(s.swapped_out_ptes(), swapped.map(|r| u64::from(r.count)).sum::<u64>());
        let shadows = slots
            .values()
            .filter(|r| r.cached.is_none() && r.shadow.is_some())
            .count();
        assert_eq!(s.nr_shadows(), shadows as u64);
    }

    proptest::proptest! {
        /// The device (count byte and its continuation, interned classes and their escape, the
        /// swap cache's entries kept only for slots entries hold, the free map) against a plain
        /// model of each slot, under random allocation, references, swap-cache adds and deletes,
        /// migrations and records.
        #[test]
        fn slots_match_a_reference_model(
            limit in 1u16..6,
            nr in 1u64..300,
            ops in proptest::collection::vec((0u8..12, proptest::prelude::any::<u32>(), 0u32..200), 1..400),
        ) {
            let mut s = Swap::with_class_limit(nr, limit);
            let mut slots: BTreeMap<u32, RefSlot> = BTreeMap::new();
            let mut free = std::collections::BTreeSet::new();
            let mut fresh = 0u32;
            let mut next_folio: FolioId = 1;
            for (op, a, b) in ops {
                let pick = |slots: &BTreeMap<u32, RefSlot>, f: &dyn Fn(&RefSlot) -> bool| -> Option<u32> {
                    let v: Vec<u32> = slots.iter().filter(|(_, r)| f(r)).map(|(&k, _)| k).collect();
                    (!v.is_empty()).then(|| v[a as usize % v.len()])
                };
                match op {
                    0 | 1 => {
                        let want = free.iter().next().copied().or(((fresh as u64) < nr).then_some(fresh));
                        let got = s.alloc();
                        proptest::prop_assert_eq!(got, want);
                        if let Some(x) = got {
                            if !free.remove(&x) {
                                fresh += 1;
                            }
                            slots.insert(x, RefSlot::default());
                        }
                    }
                    2 => {
                        let n = 1u32 << (b % 5);
                        let below = free.iter().copied().filter(|x| x % n == 0).find(|&x| {
                            x + n <= fresh && (x..x + n).all(|y| free.contains(&y))
                        });
                        let want = below.or_else(|| {
                            let x = fresh.next_multiple_of(n);
                            (u64::from(x) + u64::from(n) <= nr).then_some(x)
                        });
                        let got = s.alloc_cluster(n);
                        proptest::prop_assert_eq!(got, want);
                        if let Some(x) = got {
                            if below.is_none() {
                                free.extend(fresh..x);
                                fresh = x + n;
                            }
                            for y in x..x + n {
                                free.remove(&y);
                                slots.insert(y, RefSlot::default());
                            }
                        }
                    }
                    3 | 4 => {
                        // a PTE takes the entry (try_to_unmap, or a fork's copy)
                        if let Some(x) = pick(&slots, &|_| true) {
                            let r = slots.get_mut(&x).unwrap();
                            // many references at once sometimes, past the byte's count
                            let times = if b % 7 == 0 { 130 } else { 1 };
                            for _ in 0..times {
                                // the folio is needed (and known) only for the first entry
                                let f = match r.cached {
                                    Some((f, _)) if r.count == 0 => f,
                                    _ => NIL,
                                };
                                s.dup(x, f);
                                r.count += 1;
                            }
                        }
                    }
                    5 => {
                        if let Some(x) = pick(&slots, &|r| r.count > 0) {
                            let r = slots.get_mut(&x).unwrap();
                            r.count -= 1;
                            let want = (r.count, if r.count == 0 { r.cached.map(|(f, _)| f) } else { None });
                            proptest::prop_assert_eq!(s.put(x), want);
                            if r.count == 0 && r.cached.is_none() {
                                s.free_slot(x);
                                slots.remove(&x);
                                free.insert(x);
                            }
                        }
                    }
                    6 => {
                        if let Some(x) = pick(&slots, &|r| r.cached.is_none()) {
                            let r = slots.get_mut(&x).unwrap();
                            let (f, root) = (next_folio, b * 1000 + (a % 3));
                            next_folio += 1;
                            proptest::prop_assert_eq!(s.cache_add(x, f, root), r.shadow.take());
                            r.cached = Some((f, root));
                        }
                    }
                    7 => {
                        if let Some(x) = pick(&slots, &|r| r.cached.is_some()) {
                            let r = slots.get_mut(&x).unwrap();
                            let shadow = (b % 2 == 0).then_some(u64::from(a) << 3);
                            proptest::prop_assert_eq!(s.cache_delete(x, shadow), r.cached.unwrap().1);
                            r.cached = None;
                            r.shadow = shadow;
                            if r.count == 0 {
                                s.free_slot(x);
                                slots.remove(&x);
                                free.insert(x);
                            }
                        }
                    }
                    8 => {
                        if let Some(x) = pick(&slots, &|r| r.cached.is_some()) {
                            let r = slots.get_mut(&x).unwrap();
                            let f = next_folio;
                            next_folio += 1;
                            s.cache_move(x, f);
                            r.cached = r.cached.map(|(_, root)| (f, root));
                            proptest::prop_assert_eq!(s.cache_root(x), r.cached.unwrap().1);
                        }
                    }
                    9 => {
                        if let Some(x) = pick(&slots, &|r| r.cached.is_some()) {
                            let r = slots.get_mut(&x).unwrap();
                            let root = b % 4;
                            s.set_cache_root(x, root);
                            r.cached = r.cached.map(|(f, _)| (f, root));
                        }
                    }
                    10 => {
                        if let Some(x) = pick(&slots, &|_| true) {
                            let owner = (b % 4) as MemcgId;
                            s.set_owner(x, owner);
                            slots.get_mut(&x).unwrap().owner = owner;
                        }
                    }
                    _ => {
                        if let Some(x) = pick(&slots, &|_| true) {
                            let pct = (b % 101) as u8;
                            s.set_zram_pct(x, pct);
                            slots.get_mut(&x).unwrap().zpct = pct;
                        }
                    }
                }
                // a slot no entry and no folio holds goes back (the machine releases it so)
                let idle: Vec<u32> = slots
                    .iter()
                    .filter(|(_, r)| r.count == 0 && r.cached.is_none() && op > 2)
                    .map(|(&k, _)| k)
                    .collect();
                for x in idle {
                    // its class goes with it
                    slots.remove(&x);
                    s.free_slot(x);
                    free.insert(x);
                }
                same(&s, &slots, &free, fresh);
            }
        }
    }

    #[test]
    fn zram_sizes_from_percentages() {
        assert_eq!(zram_stored_bytes(1), 40);
        assert_eq!(zram_stored_bytes(50), 2048);
        assert_eq!(zram_stored_bytes(88), 3604);
        // 89 % is 3,645 bytes, past the huge class: stored whole
        assert_eq!(zram_stored_bytes(89), 4096);
        assert_eq!(zram_stored_bytes(100), 4096);
    }

    #[test]
    fn a_large_device_costs_only_the_slots_used() {
        let mut s = Swap::new(1 << 40);
        assert_eq!(s.bytes(), 0);
        for want in 0..10 {
            assert_eq!(s.alloc(), Some(want));
        }
        assert_eq!(s.high_water(), 10);
        assert_eq!((s.count(9), s.count(10)), (0, 0));
        assert_eq!(s.cache_slot(1_000_000), Slot::Empty);
        assert!(!s.in_use(1_000_000));
        assert!(s.bytes() < 1024);
    }
}

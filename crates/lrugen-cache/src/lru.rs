// SPDX-License-Identifier: GPL-2.0-only
//! Plain LRU over dense page ids.

use lrugen_trace::DenseTrace;

use crate::CacheResult;

/// A slot's neighbours in the recency list: `links[slot] = [prev, next]`.
const PREV: usize = 0;
const NEXT: usize = 1;
/// The slot of a page that is not resident, and the `head` of an empty list (slots are numbered
/// from 1).
const NONE: u32 = 0;

/// Plain LRU over dense page ids, every miss admitted.
///
/// Each resident page holds one of `capacity` slots; `slot_of[page]` is its slot (`NONE`, 0, when
/// not resident), so that one 4-byte load says whether a page is resident and where it sits, and
/// the per-page array starts as zeroed memory that the allocator need not write. The recency list
/// lives in the slots (`links[slot] = [prev, next]`, `pages[slot]` its page): it is circular,
/// without a sentinel, `head` the most recently used slot and `tail = prev[head]` the least
/// recently used. The list takes room for the cache's pages only, not for every page of the
/// trace, so on a small cache it stays in the CPU's first-level cache whatever the trace's
/// footprint.
///
/// Every access takes a slot out of the list and puts it at the front: the page's own on a hit,
/// the least recently used on a miss (which is then given to the page). That is the same code
/// for both, chosen by a select rather than a branch: hits and misses alternate without a
/// pattern. [`Lru::access`] is O(1), hashes nothing and allocates nothing, except when a page id
/// beyond the arrays is first seen (they grow then; size them up front with
/// [`Lru::with_pages`]). [`Lru::run`] and [`Lru::access_le_chunk`] replay many ids in one loop
/// that checks the ids against the arrays once per call, not once per access.
///
/// A capacity of 0 pages is allowed: every access misses and nothing is kept.
#[derive(Debug, Clone)]
pub struct Lru {
    /// Per page id: its slot, or [`NONE`].
    slot_of: Vec<u32>,
    /// Per slot (slot 0 unused): `[prev, next]`.
    links: Vec<[u32; 2]>,
    /// Per slot (slot 0 unused): its page.
    pages: Vec<u32>,
    /// The most recently used slot ([`NONE`] while the cache is empty).
    head: u32,
    /// The least recently used slot, `prev[head]` ([`NONE`] while the cache is empty).
    tail: u32,
    /// Slots in use, `1..=len`.
    len: u32,
    /// The largest `len` (the capacity, or fewer slots than ids can name).
    slots: u32,
    capacity: usize,
    requests: u64,
    hits: u64,
}

impl Lru {
    /// An empty cache of `capacity` pages; its arrays grow with the page ids
    /// seen.
    pub fn new(capacity: usize) -> Self {
        Self::with_pages(capacity, 0)
    }

    /// An empty cache of `capacity` pages with arrays sized for page ids
    /// `0..nr_pages` (4 bytes per page, and 12 per page the cache can hold).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        // no more slots than pages can ever be resident (ids stop two short of `u32::MAX`)
        let slots = capacity.min(u32::MAX as usize - 2) as u32;
        let room = slots.min(nr_pages) as usize + 1;
        let mut lru = Lru {
            slot_of: Vec::new(),
            links: Vec::with_capacity(room),
            pages: Vec::with_capacity(room),
            head: NONE,
            tail: NONE,
            len: 0,
            slots,
            capacity,
            requests: 0,
            hits: 0,
        };
        lru.links.push([NONE; 2]);
        lru.pages.push(0);
        // the arrays' bound (a hint: an id beyond it grows them when seen)
        lru.grow((nr_pages as usize).min(u32::MAX as usize - 1));
        lru
    }

    /// Capacity in pages.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of resident pages.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no page is resident.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `page` is resident (no side effect on recency or counts).
    pub fn contains(&self, page: u32) -> bool {
        self.slot_of.get(page as usize).is_some_and(|&s| s != NONE)
    }

    /// References `page`: returns `true` on a hit. The page becomes the most
    /// recently used; on a miss it is admitted, evicting the least recently
    /// used page if the cache is full.
    ///
    /// # Panics
    /// If `page >= u32::MAX - 1` (reserved; dense ids never reach it).
    #[inline]
    pub fn access(&mut self, page: u32) -> bool {
        self.access_ids::<false>(|_| page, 1, page) != 0
    }

    /// Accesses every page of `pages` in order; returns the counts of this
    /// call only.
    pub fn run(&mut self, pages: &[u32]) -> CacheResult {
        let max = pages.iter().copied().max().unwrap_or(0);
        // SAFETY: `access_ids` asks for `i < pages.len()` only
        let hits = self.access_ids_for_size(|i| *unsafe { pages.get_unchecked(i) }, pages.len(), max);
        CacheResult::new(pages.len() as u64, hits)
    }

    /// Accesses the page ids of `chunk` in order, little-endian `u32`s as a
    /// spilled trace stores them ([`lrugen_trace::le_ids`]; a trailing
    /// partial id is ignored); returns the hits among them.
    pub fn access_le_chunk(&mut self, chunk: &[u8]) -> u64 {
        let id = |i: usize| {
            // SAFETY: `access_ids` asks for `i < chunk.len() / 4` only
            let b = unsafe { chunk.get_unchecked(4 * i..4 * i + 4) };
            u32::from_le_bytes([b[0], b[1], b[2], b[3]])
        };
        self.access_ids_for_size(id, chunk.len() / 4, le_max(chunk))
    }

    /// [`Lru::access_ids`] with the prefetching that suits the cache's size: beyond
    /// [`DEEP_SLOTS`] slots the list no longer stays in the first-level cache, and the loop also
    /// asks for the slot's links and page ahead of time.
    #[inline(always)]
    fn access_ids_for_size(&mut self, id: impl Fn(usize) -> u32, n: usize, max: u32) -> u64 {
        if self.slots > DEEP_SLOTS {
            self.access_ids::<true>(id, n, max)
        } else {
            self.access_ids::<false>(id, n, max)
        }
    }

    /// The replay loop: accesses the ids `id(0)`, … `id(n - 1)` in order, whose
    /// largest is `max` (every caller computes it from the same ids); returns
    /// the hits. It calls `id(i)` with `i < n` only.
    ///
    /// Before the loop, `slot_of` is grown for `max`, and `links` and `pages`
    /// for the slots this call can add (at most `n`, up to `slots`); from then
    /// on every index the loop uses is in bounds: a page index is an id (at
    /// most `max`) or a slot's page, which only ever holds ids the loop stored;
    /// a slot index is `head` or `tail`, one read from `slot_of` or from a
    /// slot's links (which only ever hold slots `1..=len`), or a new slot
    /// `len + 1`, below the arrays' length. So the loop indexes without bounds
    /// checks; no array shrinks or moves inside it.
    ///
    /// With `DEEP`, it prefetches in two stages: the slot of the page `2 × AHEAD` accesses on,
    /// and the links and page of the slot of the page `AHEAD` on (read from the line the first
    /// stage brought in; a hint only, so a slot that has changed by then costs nothing but the
    /// wasted load).
    #[inline(always)]
    fn access_ids<const DEEP: bool>(&mut self, id: impl Fn(usize) -> u32, n: usize, max: u32) -> u64 {
        if max as usize >= self.slot_of.len() {
            self.grow(max as usize + 1);
        }
        self.requests += n as u64;
        if self.slots == 0 || n == 0 {
            return 0;
        }
        let (slots, mut len) = (self.slots, self.len);
        let (mut head, mut tail) = (self.head, self.tail);
        let room = slots.min(len.saturating_add(n.min(u32::MAX as usize) as u32)) as usize + 1;
        if room > self.links.len() {
            self.links.resize(room, [NONE; 2]);
            self.pages.resize(room, 0);
        }
        let slot_of = self.slot_of.as_mut_slice();
        let links = self.links.as_mut_slice();
        let pages = self.pages.as_mut_slice();
        let mut hits = 0u64;
        // SAFETY (all four): the index is in bounds by the argument above,
        // checked in debug builds.
        macro_rules! slot_of {
            ($p:expr) => {{
                let p = $p as usize;
                debug_assert!(p < slot_of.len());
                unsafe { slot_of.get_unchecked_mut(p) }
            }};
        }
        macro_rules! links {
            ($s:expr) => {{
                let s = $s as usize;
                debug_assert!(s != 0 && s <= len as usize && s < links.len());
                unsafe { links.get_unchecked_mut(s) }
            }};
        }
        macro_rules! page {
            ($s:expr) => {{
                let s = $s as usize;
                debug_assert!(s != 0 && s <= len as usize && s < pages.len());
                unsafe { pages.get_unchecked_mut(s) }
            }};
        }
        for i in 0..n {
            // the page `AHEAD` accesses on (or the last): its slot's line is
            // loaded while the accesses in between run
            if DEEP {
                prefetch(slot_of!(id((i + 2 * AHEAD).min(n - 1))));
                let s = *slot_of!(id((i + AHEAD).min(n - 1))) as usize;
                // `s` is a slot `1..=len` or NONE (0): in bounds either way
                debug_assert!(s < links.len() && s < pages.len());
                prefetch(unsafe { links.get_unchecked(s) });
                prefetch(unsafe { pages.get_unchecked(s) });
            } else {
                prefetch(slot_of!(id((i + AHEAD).min(n - 1))));
            }
            let page = id(i);
            debug_assert!(page <= max, "page id {page} above the bound {max} given");
            let s = *slot_of!(page);
            if len < slots && s == NONE {
                // filling up (only then is this branch taken: it is predicted)
                len += 1;
                let new = len;
                if head == NONE {
                    *links!(new) = [new, new];
                    tail = new;
                } else {
                    *links!(new) = [tail, head];
                    links!(tail)[NEXT] = new;
                    links!(head)[PREV] = new;
                }
                *page!(new) = page;
                *slot_of!(page) = new;
                head = new;
                continue;
            }
            let hit = s != NONE;
            hits += hit as u64;
            // The slot to move to the front: the page's own on a hit, the
            // least recently used on a miss. Chosen without a branch (a
            // mispredicted one would cost more than the loop's whole body).
            let out = if hit { s } else { tail };
            // Unlink it and link it in again between the tail and the head of
            // what is left: for the head or the tail that is where it was (its
            // own neighbours), for any other slot the list's two ends. With one
            // page it links the slot to itself. `head` and `tail` are kept in
            // registers, so that the only load a miss waits for is the tail
            // slot's links (which give the next tail).
            let [prev, next] = *links!(out);
            links!(prev)[NEXT] = next;
            links!(next)[PREV] = prev;
            let front = if out == head { next } else { head };
            let last = if out == head || out == tail { prev } else { tail };
            *links!(out) = [last, front];
            links!(last)[NEXT] = out;
            links!(front)[PREV] = out;
            tail = if out == tail { prev } else { tail };
            head = out;
            // The slot's page is `page` now: on a miss the old one (the
            // evicted page) is no longer resident; on a hit it is `page`.
            let old = std::mem::replace(page!(out), page);
            *slot_of!(old) = NONE;
            *slot_of!(page) = out;
        }
        self.len = len;
        self.head = head;
        self.tail = tail;
        self.hits += hits;
        hits
    }

    /// Counts since creation (or the last [`Lru::reset_stats`]).
    pub fn result(&self) -> CacheResult {
        CacheResult::new(self.requests, self.hits)
    }

    /// Zeroes the counts, keeping the cache contents (e.g. after warm-up).
    pub fn reset_stats(&mut self) {
        self.requests = 0;
        self.hits = 0;
    }

    /// The resident pages from the most to the least recently used.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut s = self.head as usize;
        (0..self.len).map(move |_| {
            let page = self.pages[s];
            s = self.links[s][NEXT] as usize;
            page
        })
    }

    /// Makes room for page ids `0..nr_pages`.
    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        // page ids u32::MAX - 1 and u32::MAX stay reserved, as the trace's dense ids promise
        assert!(
            nr_pages < u32::MAX as usize,
            "page ids u32::MAX - 1 and u32::MAX are reserved"
        );
        if self.slot_of.is_empty() {
            // zeroed memory from the allocator: for a large array, pages the kernel maps on first
            // touch instead of a write of every byte up front
            self.slot_of = vec![NONE; nr_pages];
        } else if nr_pages > self.slot_of.len() {
            self.slot_of.resize(nr_pages, NONE);
        }
    }
}

/// How many accesses ahead the replay loop asks for a page's slot.
const AHEAD: usize = 8;

/// The cache size (slots) above which the replay loop prefetches in two stages: the list's 12
/// bytes a slot then take more than 192 KiB, beyond a first-level cache. Measured on the ARC
/// traces (docs/performance.md, "Plain LRU's two-stage prefetch"): two stages are 10–15 % slower
/// at 1,000 and 5,000 slots, where the list stays in the first-level cache, and faster at 65,536.
const DEEP_SLOTS: u32 = 1 << 14;

/// Hint the CPU to load the cache line holding `*r` and go on without waiting; it changes no
/// value, and on other architectures than x86-64 it does nothing.
#[inline(always)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 of the address of a live reference: a hint that neither reads memory
    // into a value nor faults.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>((r as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// The largest of the little-endian `u32` ids of `chunk` (0 if none; a trailing partial id is
/// ignored), as [`lrugen_trace::le_ids`] reads them: eight lanes at a time, which the compiler
/// turns into vector loads and maxima, so that checking a chunk's ids against the arrays costs a
/// fraction of an instruction per id.
fn le_max(chunk: &[u8]) -> u32 {
    let id = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let mut lanes = [0u32; 8];
    let mut blocks = chunk.chunks_exact(32);
    for b in &mut blocks {
        for (j, m) in lanes.iter_mut().enumerate() {
            *m = (*m).max(id(&b[4 * j..4 * j + 4]));
        }
    }
    let tail = lrugen_trace::le_ids(blocks.remainder()).fold(0, u32::max);
    lanes.into_iter().fold(tail, u32::max)
}

/// Simulates plain LRU with `capacity` pages over a whole trace.
pub fn lru(trace: &DenseTrace, capacity: usize) -> CacheResult {
    Lru::with_pages(capacity, trace.nr_unique).run(&trace.pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sequence() {
        let mut c = Lru::new(2);
        assert!(!c.access(1));
        assert!(!c.access(2));
        assert!(c.access(1));
        assert!(!c.access(3)); // evicts 2
        assert!(!c.contains(2));
        assert!(c.contains(1) && c.contains(3));
        assert_eq!(c.iter().collect::<Vec<_>>(), [3, 1]);
        assert!(!c.access(2)); // evicts 1
        assert_eq!(c.iter().collect::<Vec<_>>(), [2, 3]);
        assert_eq!(c.result(), CacheResult::new(5, 1));
        assert_eq!(c.len(), 2);
        c.reset_stats();
        assert_eq!(c.result(), CacheResult::default());
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn capacity_zero_and_one() {
        let mut c = Lru::new(0);
        assert!(!c.access(5));
        assert!(!c.access(5));
        assert!(c.is_empty());
        let mut c = Lru::new(1);
        assert!(!c.access(5));
        assert!(c.access(5));
        assert!(!c.access(6));
        assert!(!c.access(5));
    }

    /// The chunked replay and `run` make the decisions of one access at a time, on ids in any
    /// order (growing the arrays mid-stream too), and `le_max` is the ids' maximum.
    #[test]
    fn chunks_match_single_accesses() {
        let mut x = 12345u64;
        let ids: Vec<u32> = (0..5000)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // a small hot set, a larger warm one, and ids growing through the run
                match (x >> 60) % 4 {
                    0 => (x >> 33) as u32 % 8,
                    1 => (x >> 33) as u32 % 200,
                    _ => (x >> 33) as u32 % (50 + i),
                }
            })
            .collect();
        let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
        for cap in [0, 1, 2, 7, 64, 1000] {
            let mut one = Lru::new(cap);
            let hits: Vec<bool> = ids.iter().map(|&p| one.access(p)).collect();
            let mut chunked = Lru::new(cap);
            let mut n = 0;
            for c in bytes.chunks(4 * 37) {
                n += chunked.access_le_chunk(c);
            }
            let mut whole = Lru::with_pages(cap, 10);
            let r = whole.run(&ids);
            let want = hits.iter().filter(|&&h| h).count() as u64;
            assert_eq!((n, r.hits), (want, want), "capacity {cap}");
            assert_eq!(chunked.result(), one.result());
            for c in [&chunked, &whole] {
                assert_eq!(c.iter().collect::<Vec<_>>(), one.iter().collect::<Vec<_>>());
                assert_eq!(c.len(), one.len());
                assert!((0..6000).all(|p| c.contains(p) == one.contains(p)));
            }
        }
        for n in 0..70 {
            let b = &bytes[..4 * n + n % 4];
            assert_eq!(le_max(b), ids[..n].iter().copied().max().unwrap_or(0), "{n} ids");
        }
    }

    /// Above `DEEP_SLOTS` the chunked replay runs the two-stage prefetching loop; its decisions
    /// are those of one access at a time (the one-stage loop), while the cache fills and once it
    /// is full, with ids growing past the arrays mid-stream.
    #[test]
    fn the_two_stage_loop_decides_as_single_accesses() {
        let cap = DEEP_SLOTS as usize + 1000;
        let mut x = 99u64;
        let ids: Vec<u32> = (0..200_000u32)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let r = (x >> 33) as u32;
                // a hot set inside the cache, and a range that grows to about twice the cache
                if r % 3 == 0 {
                    r % 5000
                } else {
                    r % (1000 + i / 5)
                }
            })
            .collect();
        let mut one = Lru::new(cap);
        let hits: u64 = ids.iter().map(|&p| one.access(p) as u64).sum();
        let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
        let mut chunked = Lru::new(cap);
        let n: u64 = bytes.chunks(4 * 4099).map(|c| chunked.access_le_chunk(c)).sum();
        assert!(chunked.slots > DEEP_SLOTS && chunked.len() == cap, "{}", chunked.len());
        assert_eq!(n, hits);
        assert!(hits > 0 && hits < ids.len() as u64);
        assert_eq!(chunked.iter().collect::<Vec<_>>(), one.iter().collect::<Vec<_>>());
    }

    #[test]
    #[should_panic(expected = "reserved")]
    fn reserved_ids() {
        Lru::new(1).access(u32::MAX - 1);
    }

    #[test]
    fn grows_for_large_ids() {
        let mut c = Lru::new(3);
        assert!(!c.access(1000));
        assert!(!c.access(0));
        assert!(c.access(1000));
        assert!(!c.contains(100_000));
    }
}

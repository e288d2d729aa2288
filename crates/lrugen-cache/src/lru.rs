// SPDX-License-Identifier: GPL-2.0-only
//! Plain LRU over dense page ids.

use lrugen_trace::DenseTrace;

use crate::CacheResult;

/// Index of the list's sentinel node; page `p` lives at node `p + 1`.
const HEAD: usize = 0;
const PREV: usize = 0;
const NEXT: usize = 1;
/// The `prev` of a node whose page is not resident (no node has this index: page ids stop two
/// short of `u32::MAX`).
const NONE: u32 = u32::MAX;

/// Plain LRU over dense page ids, every miss admitted.
///
/// The recency list is intrusive and circular: `links[node] = [prev, next]`
/// with node 0 the sentinel (its `next` is the most recently used page, its
/// `prev` the least recently used) and page `p` at node `p + 1`. Prev and next
/// are interleaved so that touching a node costs one cache line, and a page
/// that is not resident has `prev == NONE`, so that one load says both whether
/// the page is resident and where it sits. [`Lru::access`] is O(1), hashes
/// nothing and allocates nothing, except when a page id beyond the arrays is
/// first seen (they grow then; size them up front with [`Lru::with_pages`]).
/// [`Lru::run`] and [`Lru::access_le_chunk`] replay many ids in one loop that
/// checks the ids against the arrays once per call, not once per access.
///
/// A capacity of 0 pages is allowed: every access misses and nothing is
/// kept.
#[derive(Debug, Clone)]
pub struct Lru {
    links: Vec<[u32; 2]>,
    len: usize,
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
    /// `0..nr_pages` (8 bytes per page).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        let mut lru = Lru {
            links: vec![[HEAD as u32; 2]],
            len: 0,
            capacity,
            requests: 0,
            hits: 0,
        };
        // the arrays' bound (a hint: an id beyond it grows them when seen)
        lru.grow((nr_pages as usize).min(NONE as usize - 1));
        lru
    }

    /// Capacity in pages.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of resident pages.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no page is resident.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `page` is resident (no side effect on recency or counts).
    pub fn contains(&self, page: u32) -> bool {
        self.links.get(page as usize + 1).is_some_and(|l| l[PREV] != NONE)
    }

    /// References `page`: returns `true` on a hit. The page becomes the most
    /// recently used; on a miss it is admitted, evicting the least recently
    /// used page if the cache is full.
    ///
    /// # Panics
    /// If `page >= u32::MAX - 1` (reserved; dense ids never reach it).
    #[inline]
    pub fn access(&mut self, page: u32) -> bool {
        self.access_ids(std::iter::once(page), 1, page) != 0
    }

    /// Accesses every page of `pages` in order; returns the counts of this
    /// call only.
    pub fn run(&mut self, pages: &[u32]) -> CacheResult {
        let max = pages.iter().copied().max().unwrap_or(0);
        let hits = self.access_ids(pages.iter().copied(), pages.len(), max);
        CacheResult::new(pages.len() as u64, hits)
    }

    /// Accesses the page ids of `chunk` in order, little-endian `u32`s as a
    /// spilled trace stores them ([`lrugen_trace::le_ids`]; a trailing
    /// partial id is ignored); returns the hits among them.
    pub fn access_le_chunk(&mut self, chunk: &[u8]) -> u64 {
        self.access_ids(lrugen_trace::le_ids(chunk), chunk.len() / 4, le_max(chunk))
    }

    /// The replay loop: accesses the `n` ids of `ids` in order, every one of
    /// them at most `max`; returns the hits.
    ///
    /// The arrays are grown for `max` once, before the loop, and every index
    /// the loop uses is a node `< links.len()` from then on: an id's node
    /// (`id + 1 <= max + 1`), the sentinel, or a `prev`/`next` read from
    /// `links`, which only ever holds nodes and the sentinel (`NONE` is only
    /// ever stored in and compared with a `prev`, never followed). So the loop
    /// indexes without bounds checks; `links` neither shrinks nor moves inside
    /// it.
    #[inline(always)]
    fn access_ids(&mut self, ids: impl Iterator<Item = u32>, n: usize, max: u32) -> u64 {
        let nodes = max as usize + 2;
        if nodes > self.links.len() {
            self.grow(nodes - 1);
        }
        self.requests += n as u64;
        if self.capacity == 0 {
            return 0;
        }
        let (capacity, mut len) = (self.capacity, self.len);
        let links = self.links.as_mut_slice();
        let mut hits = 0u64;
        // SAFETY (all four): `i < links.len()` by the argument above, checked
        // in debug builds.
        macro_rules! at {
            ($i:expr) => {{
                let i = $i as usize;
                debug_assert!(i < links.len());
                *unsafe { links.get_unchecked(i) }
            }};
        }
        macro_rules! set_prev {
            ($i:expr, $v:expr) => {{
                let (i, v) = ($i as usize, $v);
                debug_assert!(i < links.len());
                unsafe { links.get_unchecked_mut(i)[PREV] = v };
            }};
        }
        macro_rules! set_next {
            ($i:expr, $v:expr) => {{
                let (i, v) = ($i as usize, $v);
                debug_assert!(i < links.len());
                unsafe { links.get_unchecked_mut(i)[NEXT] = v };
            }};
        }
        macro_rules! set {
            ($i:expr, $v:expr) => {{
                let (i, v) = ($i as usize, $v);
                debug_assert!(i < links.len());
                unsafe { *links.get_unchecked_mut(i) = v };
            }};
        }
        for id in ids {
            debug_assert!(id <= max, "page id {id} above the bound {max} given");
            // `id <= max` keeps the node inside the arrays even if a caller's
            // bound were wrong: the safety argument does not rest on it
            let node = id.min(max) + 1;
            let hit = at!(node)[PREV] != NONE;
            if len < capacity && !hit {
                // filling up (only then is this branch taken: it is predicted)
                len += 1;
            } else {
                hits += hit as u64;
                // The node to take out of the list: the page itself on a hit,
                // the least recently used page (the sentinel's `prev`) on a
                // miss. Chosen without a branch: hits and misses alternate
                // without a pattern, and a mispredicted branch would cost more
                // than the loop's whole body.
                let victim = at!(HEAD)[PREV];
                let mask = (hit as u32).wrapping_neg();
                let out = victim ^ ((victim ^ node) & mask);
                // unlink it (on a hit it may be the first: then this sets the
                // sentinel's `next` and the push below restores it); its
                // `[NONE, NONE]` marks an evicted page not resident and is
                // overwritten by the push on a hit
                let [prev, next] = at!(out);
                set_next!(prev, next);
                set_prev!(next, prev);
                set!(out, [NONE, NONE]);
            }
            // push the page to the front
            let first = at!(HEAD)[NEXT];
            set!(node, [HEAD as u32, first]);
            set_prev!(first, node);
            set_next!(HEAD, node);
        }
        self.len = len;
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
        let mut node = self.links[HEAD][NEXT] as usize;
        std::iter::from_fn(move || {
            if node == HEAD {
                return None;
            }
            let page = node as u32 - 1;
            node = self.links[node][NEXT] as usize;
            Some(page)
        })
    }

    /// Makes room for page ids `0..nr_pages`.
    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        // the largest node, `nr_pages`, must stay below `NONE`
        assert!(
            nr_pages < NONE as usize,
            "page ids u32::MAX - 1 and u32::MAX are reserved"
        );
        if nr_pages + 1 > self.links.len() {
            self.links.resize(nr_pages + 1, [NONE; 2]);
        }
    }
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

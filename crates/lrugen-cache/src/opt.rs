//! Belady's OPT with forced admission: in memory ([`NextUse`], [`Opt`]) and
//! in bounded memory over a trace spilled to disk ([`NextUseFile`],
//! [`OptCache`], [`OptStream`]).

use std::collections::{BTreeSet, BinaryHeap};
use std::io;

use lrugen_trace::{DenseTrace, IdCursor, IdFile, SpilledTrace, CHUNK_IDS};

use crate::CacheResult;

/// The next-use position of every reference of a trace.
///
/// `get(i)` is the position of the next reference to `pages[i]` after `i`,
/// or, when the page is never referenced again, the sentinel `n + pages[i]`
/// (`n` the trace length). All values of live pages are therefore distinct,
/// and every sentinel is farther than every real position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextUse {
    next: Vec<u32>,
    nr_unique: u32,
}

impl NextUse {
    /// One backward pass over `pages`, whose ids must be `< nr_unique`.
    ///
    /// # Panics
    /// If a page id is `>= nr_unique`, or if `pages.len() + nr_unique`
    /// exceeds 2³² (positions and sentinels must fit in `u32`).
    pub fn compute(pages: &[u32], nr_unique: u32) -> NextUse {
        let n = pages.len();
        assert!(
            n as u64 + u64::from(nr_unique) <= 1u64 << 32,
            "trace too long for u32 next-use positions: {n} requests + {nr_unique} pages > 2^32"
        );
        let mut last: Vec<u32> = (0..nr_unique).map(|p| n as u32 + p).collect();
        let mut next = vec![0u32; n];
        for (i, &p) in pages.iter().enumerate().rev() {
            let slot = &mut last[p as usize];
            next[i] = *slot;
            *slot = i as u32;
        }
        NextUse { next, nr_unique }
    }

    /// Computes the next uses of a dense trace.
    pub fn of(trace: &DenseTrace) -> NextUse {
        Self::compute(&trace.pages, trace.nr_unique)
    }

    /// The next-use positions (sentinels `>= len()` for never again).
    pub fn as_slice(&self) -> &[u32] {
        &self.next
    }

    /// The trace length.
    pub fn len(&self) -> usize {
        self.next.len()
    }

    /// Whether the trace is empty.
    pub fn is_empty(&self) -> bool {
        self.next.is_empty()
    }

    /// The number of distinct pages given to [`NextUse::compute`].
    pub fn nr_unique(&self) -> u32 {
        self.nr_unique
    }
}

/// Belady's OPT with forced admission, stepping through a trace.
///
/// Every miss admits the faulting page; on a miss with a full cache the
/// resident page whose next use is farthest is evicted (pages never used
/// again first). Resident pages are kept in a max-heap of their next-use
/// positions. A hit leaves its old entry behind (lazy deletion); such stale
/// entries are always smaller than the current position while every live one
/// is larger, so the heap's maximum is always live and eviction needs no
/// check. Stale entries are purged when the heap exceeds twice the capacity,
/// which keeps it O(C) and the cost O(log C) amortised per access.
#[derive(Debug, Clone)]
pub struct Opt<'a> {
    pages: &'a [u32],
    next: &'a [u32],
    pos: usize,
    capacity: usize,
    len: usize,
    resident: crate::PageSet,
    heap: BinaryHeap<u32>,
    hits: u64,
}

impl<'a> Opt<'a> {
    /// A simulation of `pages` with `capacity` pages, positioned before the
    /// first reference. `next` must be `NextUse::compute(pages, _)`.
    ///
    /// # Panics
    /// If `next` is not as long as `pages`.
    pub fn new(pages: &'a [u32], next: &'a NextUse, capacity: usize) -> Self {
        assert_eq!(pages.len(), next.len(), "NextUse of another trace");
        let heap_cap = capacity.min(pages.len()).saturating_mul(2) + 1;
        Opt {
            pages,
            next: next.as_slice(),
            pos: 0,
            capacity,
            len: 0,
            resident: crate::PageSet::with_pages(next.nr_unique() as usize),
            heap: BinaryHeap::with_capacity(heap_cap),
            hits: 0,
        }
    }

    /// Simulates the next reference: `Some(true)` on a hit, `Some(false)` on
    /// a miss, `None` at the end of the trace.
    #[inline]
    pub fn step(&mut self) -> Option<bool> {
        let i = self.pos;
        let &page = self.pages.get(i)?;
        self.pos = i + 1;
        let p = page as usize;
        let next = self.next[i];
        if self.resident.contains(p) {
            self.hits += 1;
            // The entry `i` of this page is now stale.
            self.heap.push(next);
            if self.heap.len() > 2 * self.capacity + 16 {
                self.heap.retain(|&k| k as usize > i);
            }
            return Some(true);
        }
        if self.capacity == 0 {
            return Some(false);
        }
        if self.len == self.capacity {
            // Replace the maximum in place: one sift-down instead of a pop
            // and a push.
            let mut top = self.heap.peek_mut().expect("a full cache has live entries");
            let victim_key = std::mem::replace(&mut *top, next);
            drop(top);
            let n = self.pages.len();
            let victim = if (victim_key as usize) < n {
                self.pages[victim_key as usize] as usize
            } else {
                victim_key as usize - n
            };
            debug_assert!(victim_key as usize > i && victim != p);
            self.resident.remove(victim);
        } else {
            self.len += 1;
            self.heap.push(next);
        }
        self.resident.insert(p);
        Some(false)
    }

    /// Simulates the rest of the trace; returns the counts from the start.
    pub fn run(&mut self) -> CacheResult {
        while self.step().is_some() {}
        self.result()
    }

    /// Counts of the references simulated so far.
    pub fn result(&self) -> CacheResult {
        CacheResult::new(self.pos as u64, self.hits)
    }

    /// How many references have been simulated.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Number of resident pages.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no page is resident.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `page` is resident.
    pub fn contains(&self, page: u32) -> bool {
        self.resident.contains(page as usize)
    }
}

/// Simulates Belady's OPT (forced admission) with `capacity` pages over a
/// whole trace, next-use precomputation included.
///
/// # Panics
/// As [`NextUse::compute`]: if `nr_requests + nr_unique > 2³²`.
pub fn opt(trace: &DenseTrace, capacity: usize) -> CacheResult {
    let next = NextUse::of(trace);
    Opt::new(&trace.pages, &next, capacity).run()
}

/// The same simulation as [`opt`] with a `BTreeSet` of next-use positions
/// instead of a heap (hits remove their entry eagerly). Kept as an
/// independent cross-check and for the benchmark that chose the heap.
///
/// # Panics
/// As [`opt`].
pub fn opt_btree(trace: &DenseTrace, capacity: usize) -> CacheResult {
    let next = NextUse::of(trace);
    let pages = &trace.pages;
    let n = pages.len();
    let mut set = BTreeSet::new();
    let mut hits = 0u64;
    if capacity > 0 {
        for (i, &nu) in next.as_slice().iter().enumerate() {
            // A page is resident iff its entry `i` (its next use) is in the set.
            if set.remove(&(i as u32)) {
                hits += 1;
            } else if set.len() == capacity {
                set.pop_last();
            }
            set.insert(nu);
        }
    }
    CacheResult::new(n as u64, hits)
}

/// The next-use value of a reference whose page is never referenced again
/// (in a [`NextUseFile`]).
pub const NEVER: u32 = u32::MAX;

/// The next-use position of every reference of a spilled trace, in a
/// temporary file: [`NextUse`] in bounded memory.
///
/// Entry `i` is the position of the next reference to page `pages[i]` after
/// `i`, or [`NEVER`]. Computed by one backward pass over the trace's ids,
/// a chunk at a time: the chunks are read from the last to the first, each
/// is walked backwards against the last position seen of every page (4 bytes
/// per distinct page, the only state that grows), and its next uses are
/// written at the chunk's place in the output file.
#[derive(Debug, Clone)]
pub struct NextUseFile {
    next: IdFile,
}

impl NextUseFile {
    /// The next uses of `pages`, whose ids are expected `< nr_unique` (a
    /// larger id is accepted: the per-page state grows to it).
    ///
    /// # Errors
    /// On an I/O error of the temporary files, or when the trace has
    /// `u32::MAX` references or more (positions are 32-bit and [`NEVER`] is
    /// reserved).
    pub fn compute(pages: &IdFile, nr_unique: u32) -> io::Result<NextUseFile> {
        let n = pages.len();
        if n >= u64::from(NEVER) {
            return Err(io::Error::other(format!(
                "OPT numbers the references of a trace with 32 bits: {n} references are too many \
                 (at most {})",
                NEVER - 1
            )));
        }
        let next = IdFile::zeroed(n)?;
        let mut last = vec![NEVER; nr_unique as usize];
        let mut chunk = vec![0u32; CHUNK_IDS];
        let mut end = n;
        while end > 0 {
            let start = end.saturating_sub(CHUNK_IDS as u64);
            let len = (end - start) as usize;
            let ids = &mut chunk[..len];
            pages.read_at(start, ids)?;
            for (k, id) in ids.iter_mut().enumerate().rev() {
                let p = *id as usize;
                if p >= last.len() {
                    last.resize(p + 1, NEVER);
                }
                // the chunk's id becomes its next use in place
                *id = std::mem::replace(&mut last[p], (start + k as u64) as u32);
            }
            next.write_at(start, ids)?;
            end = start;
        }
        Ok(NextUseFile { next })
    }

    /// The next-use file ([`NEVER`] for never again).
    pub fn as_file(&self) -> &IdFile {
        &self.next
    }

    /// The trace length.
    pub fn len(&self) -> u64 {
        self.next.len()
    }

    /// Whether the trace is empty.
    pub fn is_empty(&self) -> bool {
        self.next.is_empty()
    }
}

/// Belady's OPT with forced admission, fed one reference at a time with its
/// next use: the state of [`OptStream`], O(C + distinct pages) memory
/// whatever the trace length.
///
/// The same decisions as [`Opt`]: resident pages are kept in a max-heap
/// keyed on next use, here `next << 32 | page` so that the victim's page is
/// in its key (no look-up into the trace). Live keys have distinct next uses
/// (or [`NEVER`], then ordered by page, as [`NextUse`]'s sentinels
/// `n + page` are), and stale entries left by hits are smaller than every
/// live one, so the evictions are [`Opt`]'s exactly.
#[derive(Debug, Clone)]
pub struct OptCache {
    capacity: usize,
    len: usize,
    resident: crate::PageSet,
    heap: BinaryHeap<u64>,
    pos: u64,
    hits: u64,
}

impl OptCache {
    /// An empty cache of `capacity` pages, sized for page ids
    /// `0..nr_pages` (it grows past them) and a trace of `nr_requests`
    /// references (bounds the heap's first allocation).
    pub fn new(capacity: usize, nr_pages: u32, nr_requests: u64) -> Self {
        let heap_cap = (capacity as u64).min(nr_requests).saturating_mul(2) + 1;
        OptCache {
            capacity,
            len: 0,
            resident: crate::PageSet::with_pages(nr_pages as usize),
            heap: BinaryHeap::with_capacity(heap_cap.min(1 << 24) as usize),
            pos: 0,
            hits: 0,
        }
    }

    /// References `page`, whose next reference is at position `next`
    /// (positions count the references given to this cache from 0; [`NEVER`]
    /// for never again): `true` on a hit. `next` must be the page's true next
    /// use, as [`NextUseFile`] gives it; then the result is OPT's.
    #[inline]
    pub fn access(&mut self, page: u32, next: u32) -> bool {
        let i = self.pos;
        self.pos += 1;
        let p = page as usize;
        let key = (u64::from(next) << 32) | u64::from(page);
        if self.resident.contains(p) {
            self.hits += 1;
            // The entry `i` of this page is now stale.
            self.heap.push(key);
            if self.heap.len() > 2 * self.capacity + 16 {
                self.heap.retain(|&k| k >> 32 > i);
            }
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        if self.len == self.capacity {
            let Some(mut top) = self.heap.peek_mut() else {
                unreachable!("a full cache has live entries")
            };
            let victim_key = std::mem::replace(&mut *top, key);
            drop(top);
            let victim = (victim_key & 0xffff_ffff) as usize;
            debug_assert!(victim_key >> 32 > i && victim != p);
            self.resident.remove(victim);
        } else {
            self.len += 1;
            self.heap.push(key);
        }
        self.resident.reserve(p + 1);
        self.resident.insert(p);
        false
    }

    /// Counts of the references so far.
    pub fn result(&self) -> CacheResult {
        CacheResult::new(self.pos, self.hits)
    }

    /// Number of resident pages.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no page is resident.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `page` is resident.
    pub fn contains(&self, page: u32) -> bool {
        self.resident.contains(page as usize)
    }
}

/// Belady's OPT over a spilled trace in bounded memory: the second pass,
/// reading the trace's ids and their next uses ([`NextUseFile`]) forward
/// together, a chunk of each at a time.
#[derive(Debug, Clone)]
pub struct OptStream {
    pages: IdCursor,
    next: IdCursor,
    cache: OptCache,
}

impl OptStream {
    /// A simulation of `pages` with `capacity` pages, positioned before the
    /// first reference; `next` must be `NextUseFile::compute(pages, _)`.
    ///
    /// # Errors
    /// If `next` is not as long as `pages`.
    pub fn new(pages: &IdFile, next: &NextUseFile, nr_unique: u32, capacity: usize) -> io::Result<Self> {
        if pages.len() != next.len() {
            return Err(io::Error::other(format!(
                "next uses of another trace: {} references, {} next uses",
                pages.len(),
                next.len()
            )));
        }
        Ok(OptStream {
            pages: pages.cursor(0),
            next: next.as_file().cursor(0),
            cache: OptCache::new(capacity, nr_unique, pages.len()),
        })
    }

    /// Simulates the next reference: `Some(true)` on a hit, `Some(false)` on
    /// a miss, `None` at the end of the trace.
    ///
    /// # Errors
    /// On an I/O error reading the temporary files.
    #[inline]
    pub fn step(&mut self) -> io::Result<Option<bool>> {
        let Some(page) = self.pages.next_id()? else {
            return Ok(None);
        };
        let next = self.next.next_id()?.unwrap_or(NEVER);
        Ok(Some(self.cache.access(page, next)))
    }

    /// Simulates the rest of the trace; returns the counts from the start.
    ///
    /// # Errors
    /// As [`OptStream::step`].
    pub fn run(&mut self) -> io::Result<CacheResult> {
        while self.step()?.is_some() {}
        Ok(self.result())
    }

    /// Counts of the references simulated so far.
    pub fn result(&self) -> CacheResult {
        self.cache.result()
    }

    /// The cache.
    pub fn cache(&self) -> &OptCache {
        &self.cache
    }
}

/// Simulates Belady's OPT (forced admission) with `capacity` pages over a
/// spilled trace in bounded memory: [`opt`]'s result, both passes on disk.
///
/// # Errors
/// As [`NextUseFile::compute`] and [`OptStream::step`].
pub fn opt_spilled(trace: &SpilledTrace, capacity: usize) -> io::Result<CacheResult> {
    let next = NextUseFile::compute(&trace.pages, trace.nr_unique)?;
    OptStream::new(&trace.pages, &next, trace.nr_unique, capacity)?.run()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_use_sentinels() {
        let nu = NextUse::compute(&[0, 1, 0, 2, 1], 3);
        assert_eq!(nu.as_slice(), [2, 4, 5, 7, 6]);
    }

    #[test]
    fn textbook_example() {
        // 7 0 1 2 0 3 0 4 2 3 0 3 2 with 3 frames: 7 faults, 6 hits.
        let t = DenseTrace::from_keys([7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2]);
        assert_eq!(opt(&t, 3), CacheResult::new(13, 6));
        assert_eq!(opt_btree(&t, 3), CacheResult::new(13, 6));
        assert_eq!(opt(&t, 0).hits, 0);
        assert_eq!(opt_btree(&t, 0).hits, 0);
        assert_eq!(opt(&t, 100).hits, 13 - 6);
    }

    #[test]
    fn next_use_file_matches_memory() {
        // across chunk boundaries: a page every 3 and a page every 70,001 references
        let keys: Vec<u64> = (0..3 * CHUNK_IDS as u64 + 5)
            .map(|i| if i % 3 == 0 { i % 70_001 } else { 1 << 40 | (i % 97) })
            .collect();
        let d = DenseTrace::from_keys(keys.iter().copied());
        let s = SpilledTrace::from_keys(keys).unwrap();
        let mem = NextUse::of(&d);
        let file = NextUseFile::compute(&s.pages, s.nr_unique)
            .unwrap()
            .as_file()
            .to_vec()
            .unwrap();
        let n = d.pages.len() as u32;
        let as_file: Vec<u32> = mem.as_slice().iter().map(|&x| if x >= n { NEVER } else { x }).collect();
        assert_eq!(file, as_file);
        for cap in [0, 1, 50, 1000, 100_000] {
            assert_eq!(opt_spilled(&s, cap).unwrap(), opt(&d, cap), "capacity {cap}");
        }
    }

    #[test]
    fn cache_of_next_uses() {
        // the textbook trace, next uses by hand: 7 0 1 2 0 3 0 4 2 3 0 3 2
        let pages = [0, 1, 2, 3, 1, 4, 1, 5, 3, 4, 1, 4, 3];
        let nu = NextUse::compute(&pages, 6);
        let mut c = OptCache::new(3, 6, pages.len() as u64);
        for (i, &p) in pages.iter().enumerate() {
            let next = nu.as_slice()[i];
            c.access(p, if next as usize >= pages.len() { NEVER } else { next });
        }
        assert_eq!(c.result(), CacheResult::new(13, 6));
        assert_eq!(c.len(), 3);
        assert!(c.contains(3) && !c.is_empty());
    }

    #[test]
    fn stepping() {
        let t = DenseTrace::from_keys([1, 2, 1, 3, 2]);
        let nu = NextUse::of(&t);
        let mut o = Opt::new(&t.pages, &nu, 2);
        let steps: Vec<bool> = std::iter::from_fn(|| o.step()).collect();
        assert_eq!(steps, [false, false, true, false, true]);
        assert_eq!(o.result(), CacheResult::new(5, 2));
        assert_eq!(o.position(), 5);
        assert_eq!(o.len(), 2);
        assert!(o.step().is_none());
    }
}

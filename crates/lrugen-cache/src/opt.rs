//! Belady's OPT with forced admission.

use std::collections::{BTreeSet, BinaryHeap};

use lrugen_trace::DenseTrace;

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
    resident: Vec<u64>,
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
            resident: vec![0; (next.nr_unique() as usize).div_ceil(64)],
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
        let (word, bit) = (p >> 6, 1u64 << (p & 63));
        let next = self.next[i];
        if self.resident[word] & bit != 0 {
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
            self.resident[victim >> 6] &= !(1u64 << (victim & 63));
        } else {
            self.len += 1;
            self.heap.push(next);
        }
        self.resident[word] |= bit;
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
        let p = page as usize;
        self.resident.get(p >> 6).is_some_and(|w| w & (1u64 << (p & 63)) != 0)
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

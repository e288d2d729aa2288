//! Plain LRU over dense page ids.

use lrugen_trace::DenseTrace;

use crate::CacheResult;

/// Index of the list's sentinel node; page `p` lives at node `p + 1`.
const HEAD: usize = 0;
const PREV: usize = 0;
const NEXT: usize = 1;

/// Plain LRU over dense page ids, every miss admitted.
///
/// The recency list is intrusive and circular: `links[node] = [prev, next]`
/// with node 0 the sentinel (its `next` is the most recently used page, its
/// `prev` the least recently used) and page `p` at node `p + 1`. Prev and next
/// are interleaved so that touching a node costs one cache line. A bitset
/// says which pages are resident. [`Lru::access`] is O(1), hashes nothing and
/// allocates nothing, except when a page id beyond the arrays is first seen
/// (they grow then; size them up front with [`Lru::with_pages`]).
///
/// A capacity of 0 pages is allowed: every access misses and nothing is
/// kept.
#[derive(Debug, Clone)]
pub struct Lru {
    links: Vec<[u32; 2]>,
    resident: crate::PageSet,
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
    /// `0..nr_pages` (8 bytes and 1 bit per page).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        let mut lru = Lru {
            links: vec![[HEAD as u32; 2]],
            resident: crate::PageSet::default(),
            len: 0,
            capacity,
            requests: 0,
            hits: 0,
        };
        lru.grow(nr_pages as usize);
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
        self.resident.contains(page as usize)
    }

    /// References `page`: returns `true` on a hit. The page becomes the most
    /// recently used; on a miss it is admitted, evicting the least recently
    /// used page if the cache is full.
    ///
    /// # Panics
    /// If `page == u32::MAX` (reserved; dense ids never reach it).
    #[inline]
    pub fn access(&mut self, page: u32) -> bool {
        let p = page as usize;
        let node = p + 1;
        if node >= self.links.len() {
            self.grow(node);
        }
        self.requests += 1;
        if self.resident.contains(p) {
            self.hits += 1;
            if self.links[HEAD][NEXT] as usize != node {
                self.unlink(node);
                self.push_front(node);
            }
            return true;
        }
        if self.capacity == 0 {
            return false;
        }
        if self.len == self.capacity {
            let victim = self.links[HEAD][PREV] as usize;
            self.unlink(victim);
            self.resident.remove(victim - 1);
        } else {
            self.len += 1;
        }
        self.push_front(node);
        self.resident.insert(p);
        false
    }

    /// Accesses every page of `pages` in order; returns the counts of this
    /// call only.
    pub fn run(&mut self, pages: &[u32]) -> CacheResult {
        let hits0 = self.hits;
        for &p in pages {
            self.access(p);
        }
        CacheResult::new(pages.len() as u64, self.hits - hits0)
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

    #[inline]
    fn unlink(&mut self, node: usize) {
        let [prev, next] = self.links[node];
        self.links[prev as usize][NEXT] = next;
        self.links[next as usize][PREV] = prev;
    }

    #[inline]
    fn push_front(&mut self, node: usize) {
        let first = self.links[HEAD][NEXT];
        self.links[node] = [HEAD as u32, first];
        self.links[first as usize][PREV] = node as u32;
        self.links[HEAD][NEXT] = node as u32;
    }

    /// Makes room for page ids `0..nr_pages`.
    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        assert!(nr_pages <= u32::MAX as usize, "page id u32::MAX is reserved");
        if nr_pages + 1 > self.links.len() {
            self.links.resize(nr_pages + 1, [HEAD as u32; 2]);
        }
        self.resident.reserve(nr_pages);
    }
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

    #[test]
    fn grows_for_large_ids() {
        let mut c = Lru::new(3);
        assert!(!c.access(1000));
        assert!(!c.access(0));
        assert!(c.access(1000));
        assert!(!c.contains(100_000));
    }
}

//! S3-FIFO: a small FIFO filtering one-hit wonders, a main FIFO with reinsertion, a ghost FIFO.

use super::Counts;
use crate::list::Queues;

/// The queues, also the values of `loc` (0 is "nowhere").
const SMALL: usize = 0;
const MAIN: usize = 1;
const GHOST: usize = 2;
const NOWHERE: u8 = 3;

/// Small queue share of the capacity (libCacheSim `small-size-ratio`).
pub const SMALL_SIZE_RATIO: f64 = 0.1;
/// Ghost queue size relative to the capacity (`ghost-size-ratio`).
pub const GHOST_SIZE_RATIO: f64 = 0.9;
/// Hits in the small queue that move a page to the main queue (`move-to-main-threshold`).
pub const MOVE_TO_MAIN_THRESHOLD: u8 = 2;

/// S3-FIFO (Yang et al., SOSP 2023) as libCacheSim implements it (`S3FIFO`, `S3FIFO.c`, default
/// parameters `small-size-ratio=0.1, ghost-size-ratio=0.9, move-to-main-threshold=2`).
///
/// Queues of `S = ⌊C·0.1⌋` (small), `C − S` (main) and `⌊C·0.9⌋` (ghost, ids only) pages. A miss
/// enters the small queue, or the main queue when its id was in the ghost queue; every hit
/// increments the page's counter. Eviction takes from the main queue when it is over its size or
/// the small queue is empty, from the small queue otherwise:
///
/// * small tail with a counter ≥ 2: moved to the main head with its counter reset to 0 (the next
///   small tail is examined); below 2: evicted into the ghost queue (a FIFO of its own size).
/// * main tail with a counter ≥ 1: reinserted at the main head with `min(counter, 3) − 1`;
///   0: evicted (not into the ghost).
///
/// Before the cache first evicts, a miss that finds the small queue full enters the main queue
/// (libCacheSim's `S3FIFO.c` of December 2024 does this; its `S3FIFOv0.c`, the original, does
/// not), so the pages admitted while the cache fills are not pushed through the small queue.
///
/// Where this differs from the paper (which moves a small-queue page on a single hit, keeps a
/// 2-bit counter and sizes the ghost like the main queue), libCacheSim is followed: the threshold
/// is 2 hits, the counter is unbounded (kept here saturating at 255, which changes no decision),
/// a page moved to main starts there at 0 (libCacheSim creates a new object), and the ghost
/// holds `⌊0.9·C⌋` ids. Also as libCacheSim: nothing is admitted when `S = 0`, and when `S = 1` a
/// miss that was not a ghost hit evicts but is not admitted (`S3FIFO_insert` refuses an object
/// of at least the small queue's size).
#[derive(Debug, Clone)]
pub struct S3Fifo {
    q: Queues<3>,
    loc: Vec<u8>,
    freq: Vec<u8>,
    capacity: usize,
    small_capacity: usize,
    main_capacity: usize,
    ghost_capacity: usize,
    has_evicted: bool,
    counts: Counts,
}

impl S3Fifo {
    /// An empty cache of `capacity` pages with arrays for page ids `0..nr_pages` (they grow on
    /// a larger id).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        // libCacheSim: `(int64_t)cache_size * ratio`, truncated.
        let small_capacity = (capacity as f64 * SMALL_SIZE_RATIO) as usize;
        S3Fifo {
            q: Queues::with_pages(nr_pages as usize),
            loc: vec![NOWHERE; nr_pages as usize],
            freq: vec![0; nr_pages as usize],
            capacity,
            small_capacity,
            main_capacity: capacity - small_capacity,
            ghost_capacity: (capacity as f64 * GHOST_SIZE_RATIO) as usize,
            has_evicted: false,
            counts: Counts::default(),
        }
    }

    /// References `page`; `true` on a hit.
    #[inline]
    pub fn access(&mut self, page: u32) -> bool {
        let p = page as usize;
        if p >= self.loc.len() {
            self.grow(p + 1);
        }
        let loc = self.loc[p] as usize;
        if loc == SMALL || loc == MAIN {
            self.freq[p] = self.freq[p].saturating_add(1);
            return self.counts.hit();
        }
        self.counts.miss();
        let ghost_hit = loc == GHOST;
        if ghost_hit {
            self.q.remove(GHOST, page);
            self.loc[p] = NOWHERE;
        }
        if self.small_capacity < 1 {
            return false;
        }
        while self.q.len(SMALL) + self.q.len(MAIN) + 1 > self.capacity {
            self.evict();
        }
        if ghost_hit {
            self.insert(MAIN, page);
        } else if self.small_capacity > 1 {
            // Until the first eviction, a miss finding the small queue full enters main.
            let q = if !self.has_evicted && self.q.len(SMALL) >= self.small_capacity {
                MAIN
            } else {
                SMALL
            };
            self.insert(q, page);
        }
        false
    }

    #[inline]
    fn insert(&mut self, q: usize, page: u32) {
        self.q.push_head(q, page);
        self.loc[page as usize] = q as u8;
        self.freq[page as usize] = 0;
    }

    fn evict(&mut self) {
        self.has_evicted = true;
        if self.q.len(MAIN) > self.main_capacity || self.q.len(SMALL) == 0 {
            self.evict_main();
        } else {
            self.evict_small();
        }
    }

    /// Moves small tails seen again to the main queue until one is evicted into the ghost (or
    /// the small queue is empty).
    fn evict_small(&mut self) {
        while let Some(tail) = self.q.tail(SMALL) {
            self.q.remove(SMALL, tail);
            if self.freq[tail as usize] >= MOVE_TO_MAIN_THRESHOLD {
                self.insert(MAIN, tail);
            } else {
                self.loc[tail as usize] = NOWHERE;
                self.insert_ghost(tail);
                return;
            }
        }
    }

    /// Reinserts main tails seen again, with one reference less, until one is evicted.
    fn evict_main(&mut self) {
        while let Some(tail) = self.q.tail(MAIN) {
            let t = tail as usize;
            if self.freq[t] >= 1 {
                self.q.move_to_head(MAIN, MAIN, tail);
                self.freq[t] = self.freq[t].min(3) - 1;
            } else {
                self.q.remove(MAIN, tail);
                self.loc[t] = NOWHERE;
                return;
            }
        }
    }

    /// libCacheSim's `ghost->get`: the ghost is a FIFO cache of ids.
    fn insert_ghost(&mut self, page: u32) {
        if self.ghost_capacity == 0 {
            return;
        }
        if self.q.len(GHOST) == self.ghost_capacity {
            let old = self.q.tail(GHOST).expect("a full ghost has a tail");
            self.q.remove(GHOST, old);
            self.loc[old as usize] = NOWHERE;
        }
        self.q.push_head(GHOST, page);
        self.loc[page as usize] = GHOST as u8;
    }

    fn resident_len(&self) -> usize {
        self.q.len(SMALL) + self.q.len(MAIN)
    }

    fn is_resident(&self, page: usize) -> bool {
        self.loc
            .get(page)
            .is_some_and(|&l| l as usize == SMALL || l as usize == MAIN)
    }

    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        self.q.reserve(nr_pages);
        self.loc.resize(nr_pages, NOWHERE);
        self.freq.resize(nr_pages, 0);
    }
}

super::impl_policy!(S3Fifo);

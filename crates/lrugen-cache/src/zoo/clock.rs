//! CLOCK: FIFO with one reference bit, a referenced tail page reinserted at the head.

use super::Counts;
use crate::list::Queues;

const Q: usize = 0;

/// Where a page is: not resident, or resident with its reference bit clear or set.
const ABSENT: u8 = 0;
const CLEAR: u8 = 1;
const REFERENCED: u8 = 2;

/// CLOCK with a 1-bit reference counter (libCacheSim `Clock`, `Clock.c`, default parameters
/// `init-freq=0, n-bit-counter=1`).
///
/// libCacheSim keeps the clock as a FIFO queue rather than a ring with a hand: a miss inserts
/// the page at the head with its bit clear, a hit sets the bit, and eviction looks at the tail:
/// a page with its bit set has it cleared and moves to the head (the hand passing it), the
/// first page with its bit clear is evicted. This is the same order of inspection as the
/// paper's circular buffer (second chance).
#[derive(Debug, Clone)]
pub struct Clock {
    q: Queues<1>,
    state: Vec<u8>,
    capacity: usize,
    counts: Counts,
}

impl Clock {
    /// An empty cache of `capacity` pages with arrays for page ids `0..nr_pages` (they grow on
    /// a larger id).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        Clock {
            q: Queues::with_pages(nr_pages as usize),
            state: vec![ABSENT; nr_pages as usize],
            capacity,
            counts: Counts::default(),
        }
    }

    /// References `page`; `true` on a hit.
    #[inline]
    pub fn access(&mut self, page: u32) -> bool {
        let p = page as usize;
        if p >= self.state.len() {
            self.grow(p + 1);
        }
        if self.state[p] != ABSENT {
            self.state[p] = REFERENCED;
            return self.counts.hit();
        }
        self.counts.miss();
        if self.capacity == 0 {
            return false;
        }
        if self.q.len(Q) == self.capacity {
            self.evict();
        }
        self.q.push_head(Q, page);
        self.state[p] = CLEAR;
        false
    }

    /// Clears the bits of referenced tail pages, moving them to the head, until the tail's bit
    /// is clear; evicts that page.
    fn evict(&mut self) {
        loop {
            let tail = self.q.tail(Q).expect("a full cache has a tail");
            if self.state[tail as usize] == REFERENCED {
                self.state[tail as usize] = CLEAR;
                self.q.move_to_head(Q, Q, tail);
            } else {
                self.q.remove(Q, tail);
                self.state[tail as usize] = ABSENT;
                return;
            }
        }
    }

    fn resident_len(&self) -> usize {
        self.q.len(Q)
    }

    fn is_resident(&self, page: usize) -> bool {
        self.state.get(page).is_some_and(|&s| s != ABSENT)
    }

    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        self.q.reserve(nr_pages);
        self.state.resize(nr_pages, ABSENT);
    }
}

super::impl_policy!(Clock);

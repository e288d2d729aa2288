//! SIEVE: FIFO order, a hand that moves from the tail toward the head and stays where it
//! evicted.

use super::Counts;
use crate::list::Queues;

const Q: usize = 0;

const ABSENT: u8 = 0;
const UNVISITED: u8 = 1;
const VISITED: u8 = 2;

/// SIEVE (Zhang et al., NSDI 2024; libCacheSim `Sieve`, `Sieve.c`).
///
/// New pages enter at the head unvisited; a hit marks the page visited and moves nothing. To
/// evict, the hand (starting at the tail when it has none) walks toward the head clearing
/// visited marks and evicts the first unvisited page; the hand then rests on the page newer
/// than the victim, or returns to the tail next time when the victim was the head. As in the
/// paper.
#[derive(Debug, Clone)]
pub struct Sieve {
    q: Queues<1>,
    state: Vec<u8>,
    hand: Option<u32>,
    capacity: usize,
    counts: Counts,
}

impl Sieve {
    /// An empty cache of `capacity` pages with arrays for page ids `0..nr_pages` (they grow on
    /// a larger id).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        Sieve {
            q: Queues::with_pages(nr_pages as usize),
            state: vec![ABSENT; nr_pages as usize],
            hand: None,
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
            self.state[p] = VISITED;
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
        self.state[p] = UNVISITED;
        false
    }

    fn evict(&mut self) {
        let tail = self.q.tail(Q).expect("a full cache has a tail");
        let mut page = self.hand.unwrap_or(tail);
        while self.state[page as usize] == VISITED {
            self.state[page as usize] = UNVISITED;
            page = self.q.newer(page).unwrap_or(tail);
        }
        self.hand = self.q.newer(page);
        self.q.remove(Q, page);
        self.state[page as usize] = ABSENT;
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

super::impl_policy!(Sieve);

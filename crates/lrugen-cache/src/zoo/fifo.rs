//! FIFO: evict the oldest admission, hits change nothing.

use super::Counts;
use crate::list::Queues;

const Q: usize = 0;

/// FIFO over dense page ids, every miss admitted (libCacheSim `FIFO`, `FIFO.c`).
///
/// One queue in admission order; a hit leaves it as it is; a miss with a full cache evicts the
/// tail. A capacity of 0 keeps nothing (libCacheSim's `cache_can_insert_default` refuses an
/// object larger than the cache).
#[derive(Debug, Clone)]
pub struct Fifo {
    q: Queues<1>,
    resident: Vec<bool>,
    capacity: usize,
    counts: Counts,
}

impl Fifo {
    /// An empty cache of `capacity` pages with arrays for page ids `0..nr_pages` (they grow on
    /// a larger id).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        Fifo {
            q: Queues::with_pages(nr_pages as usize),
            resident: vec![false; nr_pages as usize],
            capacity,
            counts: Counts::default(),
        }
    }

    /// References `page`; `true` on a hit.
    #[inline]
    pub fn access(&mut self, page: u32) -> bool {
        let p = page as usize;
        if p >= self.resident.len() {
            self.grow(p + 1);
        }
        if self.resident[p] {
            return self.counts.hit();
        }
        self.counts.miss();
        if self.capacity == 0 {
            return false;
        }
        if self.q.len(Q) == self.capacity {
            let victim = self.q.tail(Q).expect("a full cache has a tail");
            self.q.remove(Q, victim);
            self.resident[victim as usize] = false;
        }
        self.q.push_head(Q, page);
        self.resident[p] = true;
        false
    }

    /// The resident pages from the newest admission to the oldest.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.q.iter(Q)
    }

    fn resident_len(&self) -> usize {
        self.q.len(Q)
    }

    fn is_resident(&self, page: usize) -> bool {
        self.resident.get(page).copied().unwrap_or(false)
    }

    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        self.q.reserve(nr_pages);
        self.resident.resize(nr_pages, false);
    }
}

super::impl_policy!(Fifo);

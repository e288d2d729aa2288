//! 2Q: a FIFO for first references (A1in), a ghost FIFO of its evictions (A1out), an LRU (Am).

use super::Counts;
use crate::list::Queues;

const AIN: usize = 0;
const AM: usize = 1;
const AOUT: usize = 2;
const NOWHERE: u8 = 3;

/// A1in's share of the capacity (libCacheSim `Ain-size-ratio`).
pub const AIN_SIZE_RATIO: f64 = 0.25;
/// A1out's size relative to the capacity (`Aout-size-ratio`).
pub const AOUT_SIZE_RATIO: f64 = 0.5;

/// 2Q, the full version (Johnson and Shasha, VLDB 1994), as libCacheSim implements it (`TwoQ`,
/// `TwoQ.c`, default parameters `Ain-size-ratio=0.25, Aout-size-ratio=0.5`).
///
/// A1in holds `Kin = ⌊0.25·C⌋` pages, A1out `⌊0.5·C⌋` ids, Am `C − Kin` pages. A hit in A1in
/// changes nothing, a hit in Am moves the page to Am's head. A miss whose id is in A1out enters
/// Am (the id leaves A1out), any other miss enters A1in. To make room: when A1in holds more than
/// `Kin`, its tail goes to A1out (a FIFO of its own size); otherwise Am's LRU page is evicted.
///
/// As in the paper, with libCacheSim's details: Am is itself a cache of `C − Kin` pages, so a
/// page entering a full Am evicts Am's LRU page even when A1in is below `Kin`; and nothing is
/// admitted when `Kin = 0` (`C < 4`: `TwoQ_can_insert` asks that a page fit in A1in).
#[derive(Debug, Clone)]
pub struct TwoQ {
    q: Queues<3>,
    loc: Vec<u8>,
    capacity: usize,
    ain_capacity: usize,
    am_capacity: usize,
    aout_capacity: usize,
    counts: Counts,
}

impl TwoQ {
    /// An empty cache of `capacity` pages with arrays for page ids `0..nr_pages` (they grow on
    /// a larger id).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        let ain_capacity = (capacity as f64 * AIN_SIZE_RATIO) as usize;
        TwoQ {
            q: Queues::with_pages(nr_pages as usize),
            loc: vec![NOWHERE; nr_pages as usize],
            capacity,
            ain_capacity,
            am_capacity: capacity - ain_capacity,
            aout_capacity: (capacity as f64 * AOUT_SIZE_RATIO) as usize,
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
        if loc == AIN {
            return self.counts.hit();
        }
        if loc == AM {
            self.q.move_to_head(AM, AM, page);
            return self.counts.hit();
        }
        self.counts.miss();
        let ghost_hit = loc == AOUT;
        if ghost_hit {
            self.q.remove(AOUT, page);
            self.loc[p] = NOWHERE;
        }
        if self.ain_capacity < 1 {
            return false;
        }
        while self.q.len(AIN) + self.q.len(AM) + 1 > self.capacity {
            self.evict();
        }
        if ghost_hit {
            while self.q.len(AM) + 1 > self.am_capacity {
                self.drop_tail(AM);
            }
            self.q.push_head(AM, page);
            self.loc[p] = AM as u8;
        } else {
            self.q.push_head(AIN, page);
            self.loc[p] = AIN as u8;
        }
        false
    }

    fn evict(&mut self) {
        if self.q.len(AIN) > self.ain_capacity {
            let tail = self.q.tail(AIN).expect("A1in over its size has a tail");
            self.q.remove(AIN, tail);
            self.loc[tail as usize] = NOWHERE;
            if self.aout_capacity > 0 {
                if self.q.len(AOUT) == self.aout_capacity {
                    self.drop_tail(AOUT);
                }
                self.q.push_head(AOUT, tail);
                self.loc[tail as usize] = AOUT as u8;
            }
        } else {
            self.drop_tail(AM);
        }
    }

    fn drop_tail(&mut self, q: usize) {
        let tail = self.q.tail(q).expect("dropping from a non-empty queue");
        self.q.remove(q, tail);
        self.loc[tail as usize] = NOWHERE;
    }

    fn resident_len(&self) -> usize {
        self.q.len(AIN) + self.q.len(AM)
    }

    fn is_resident(&self, page: usize) -> bool {
        self.loc
            .get(page)
            .is_some_and(|&l| l as usize == AIN || l as usize == AM)
    }

    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        self.q.reserve(nr_pages);
        self.loc.resize(nr_pages, NOWHERE);
    }
}

super::impl_policy!(TwoQ);

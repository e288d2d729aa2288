//! ARC: recency (T1) and frequency (T2) lists with ghosts (B1, B2) steering their target sizes.

use super::Counts;
use crate::list::Queues;

const T1: usize = 0;
const T2: usize = 1;
const B1: usize = 2;
const B2: usize = 3;
const NOWHERE: u8 = 4;

/// ARC (Megiddo and Modha, FAST 2003) as libCacheSim implements it (`ARC`, `ARC.c`).
///
/// `T1` holds pages seen once recently, `T2` pages seen at least twice, `B1`/`B2` the ids last
/// evicted from each; `p` (a float, as libCacheSim keeps it) is `T1`'s target size. A hit in
/// `T1` or `T2` moves the page to `T2`'s head. A hit on a ghost in `B1` raises `p` by
/// `max(|B2|/|B1|, 1)` (at most `C`), in `B2` lowers it by `max(|B1|/|B2|, 1)` (at least 0); the
/// id leaves the ghost, counts as a miss and the page enters `T2`. A page never seen (or
/// forgotten) enters `T1`. Evicting for a ghost hit is the paper's REPLACE (`T1`'s tail to `B1`
/// if `T1` is non-empty and `|T1| > p`, or `|T1| = p` for a `B2` hit, or `T2` is empty;
/// otherwise `T2`'s tail to `B2`); for a page in no list it is the paper's case IV: when
/// `|T1| + |B1| = C`, `B1`'s tail is dropped and REPLACE runs, or with `B1` empty `T1`'s tail is
/// dropped without a ghost; otherwise, when the four lists hold `2C` ids, `B2`'s tail is dropped,
/// and REPLACE runs.
///
/// This is the paper's algorithm, with libCacheSim's two readings of it: REPLACE runs only when
/// the cache is full (after a ghost hit with room left nothing is evicted), and the
/// `|T1| + |B1| = C` test is made before REPLACE on every miss, as in the paper.
#[derive(Debug, Clone)]
pub struct Arc {
    q: Queues<4>,
    loc: Vec<u8>,
    p: f64,
    capacity: usize,
    counts: Counts,
}

impl Arc {
    /// An empty cache of `capacity` pages with arrays for page ids `0..nr_pages` (they grow on
    /// a larger id).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        Arc {
            q: Queues::with_pages(nr_pages as usize),
            loc: vec![NOWHERE; nr_pages as usize],
            p: 0.0,
            capacity,
            counts: Counts::default(),
        }
    }

    /// `T1`'s target size `p`.
    pub fn target_t1(&self) -> f64 {
        self.p
    }

    /// References `page`; `true` on a hit.
    #[inline]
    pub fn access(&mut self, page: u32) -> bool {
        let p = page as usize;
        if p >= self.loc.len() {
            self.grow(p + 1);
        }
        let loc = self.loc[p] as usize;
        match loc {
            T1 | T2 => {
                self.q.move_to_head(loc, T2, page);
                self.loc[p] = T2 as u8;
                return self.counts.hit();
            }
            B1 => {
                let delta = (self.q.len(B2) as f64 / self.q.len(B1) as f64).max(1.0);
                self.p = (self.p + delta).min(self.capacity as f64);
            }
            B2 => {
                let delta = (self.q.len(B1) as f64 / self.q.len(B2) as f64).max(1.0);
                self.p = (self.p - delta).max(0.0);
            }
            _ => {}
        }
        self.counts.miss();
        let ghost_hit = loc == B1 || loc == B2;
        if ghost_hit {
            self.q.remove(loc, page);
            self.loc[p] = NOWHERE;
        }
        if self.capacity == 0 {
            return false;
        }
        while self.q.len(T1) + self.q.len(T2) + 1 > self.capacity {
            if ghost_hit {
                self.replace(loc == B2);
            } else {
                self.evict_miss();
            }
        }
        let to = if ghost_hit { T2 } else { T1 };
        self.q.push_head(to, page);
        self.loc[p] = to as u8;
        false
    }

    /// The paper's case IV: room for a page in no list.
    fn evict_miss(&mut self) {
        let c = self.capacity;
        if self.q.len(T1) + self.q.len(B1) + 1 > c {
            if self.q.len(B1) > 0 {
                self.drop_tail(B1);
                self.replace(false);
            } else {
                self.drop_tail(T1);
            }
        } else {
            let total = self.q.len(T1) + self.q.len(B1) + self.q.len(T2) + self.q.len(B2);
            if total >= 2 * c && self.q.len(B2) > 0 {
                self.drop_tail(B2);
            }
            self.replace(false);
        }
    }

    /// The paper's REPLACE: `T1`'s tail to `B1` or `T2`'s tail to `B2`.
    fn replace(&mut self, hit_in_b2: bool) {
        let t1 = self.q.len(T1);
        let t1f = t1 as f64;
        let from_t1 = (t1 > 0 && (t1f > self.p || (t1f == self.p && hit_in_b2))) || self.q.len(T2) == 0;
        let (from, to) = if from_t1 { (T1, B1) } else { (T2, B2) };
        let tail = self.q.tail(from).expect("REPLACE on a full cache");
        self.q.move_to_head(from, to, tail);
        self.loc[tail as usize] = to as u8;
    }

    fn drop_tail(&mut self, q: usize) {
        let tail = self.q.tail(q).expect("dropping from a non-empty list");
        self.q.remove(q, tail);
        self.loc[tail as usize] = NOWHERE;
    }

    fn resident_len(&self) -> usize {
        self.q.len(T1) + self.q.len(T2)
    }

    fn is_resident(&self, page: usize) -> bool {
        self.loc
            .get(page)
            .is_some_and(|&l| l as usize == T1 || l as usize == T2)
    }

    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        self.q.reserve(nr_pages);
        self.loc.resize(nr_pages, NOWHERE);
    }
}

super::impl_policy!(Arc);

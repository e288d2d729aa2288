//! LIRS: low inter-reference recency set, a stack S of recent pages and a queue Q of resident
//! HIR pages.

use super::Counts;
use crate::list::Queues;

/// Per-page bits: which of the three queues hold the page, and the flags of its copy in S.
const IN_S: u8 = 1;
const IN_Q: u8 = 2;
const IN_NH: u8 = 4;
/// S's copy is a LIR page.
const LIR: u8 = 8;
/// S's copy is resident.
const RESIDENT: u8 = 16;

/// The HIR share of the capacity (libCacheSim's `hirs_ratio`, fixed).
pub const HIRS_RATIO: f64 = 0.01;

/// LIRS (Jiang and Zhang, SIGMETRICS 2002) as libCacheSim implements it (`LIRS`, `LIRS.c`).
///
/// `Lhirs = max(1, ⌊0.01·C⌋)` pages are for resident HIR pages (queue Q), `Llirs = C − Lhirs`
/// for LIR pages. S is the LIRS stack (LIR pages, resident and non-resident HIR pages, most
/// recent on top), pruned so that its bottom is a LIR page; NH lists S's non-resident HIR pages
/// in the order they left the cache. Each of S, Q, NH is an LRU list of its own (libCacheSim
/// runs three LRU caches), so a page may be on several at once; every reference moves the
/// page's entries in S and in Q to their tops.
///
/// * A LIR page hit: S is pruned.
/// * A resident HIR page in S hit: it leaves Q and becomes LIR; while the LIR pages fill
///   `Llirs`, S's bottom LIR page moves to Q (evicting Q's bottom page if Q is full) and S is
///   pruned.
/// * A resident HIR page not in S hit: while the LIR pages fill `Llirs`, S's bottom LIR page
///   moves to Q as above; the page is pushed on S as a resident HIR page (and stays in Q).
/// * A miss on a non-resident HIR page in S: LIR bottoms move to Q while the LIR pages fill
///   `Llirs`, the page leaves NH and becomes a resident LIR page.
/// * A miss on a page in no list: while both the LIR and HIR parts are full, Q's bottom page is
///   evicted (non-resident in S if S holds it); then it becomes LIR if the LIR part has room,
///   else a resident HIR page on S and Q.
///
/// After every reference, while S holds more than `2C` entries, NH's oldest page is forgotten
/// (it leaves S and NH).
///
/// Where libCacheSim differs from the paper, it is followed: the paper leaves the LIR set alone
/// on a hit to a resident HIR page outside S (libCacheSim may demote a LIR page to Q there, even
/// though the page stays HIR); the paper bounds S's non-resident entries implicitly (libCacheSim
/// caps S at `2C` entries through NH); pruning stops at S's last entry.
///
/// One libCacheSim quirk is kept because its hit counts depend on it: when a hit on a resident
/// HIR page outside S demotes a LIR page and Q is full, the page evicted from Q can be the hit
/// page itself (Q's bottom); libCacheSim then pushes it on S still marked resident, so later
/// references hit it although no count holds it. [`CachePolicy::len`](super::CachePolicy::len)
/// counts the pages libCacheSim counts (at most `C`); [`CachePolicy::contains`](super::CachePolicy::contains)
/// answers as a hit would, so it can say yes for a few more (see the unit test
/// `uncounted_resident`).
#[derive(Debug, Clone)]
pub struct Lirs {
    s: Queues<1>,
    q: Queues<1>,
    nh: Queues<1>,
    bits: Vec<u8>,
    capacity: usize,
    lirs_limit: usize,
    hirs_limit: usize,
    lirs_count: usize,
    hirs_count: usize,
    /// libCacheSim's `occupied_byte` of the LIRS cache, kept as libCacheSim keeps it.
    occupied: usize,
    counts: Counts,
}

impl Lirs {
    /// An empty cache of `capacity` pages with arrays for page ids `0..nr_pages` (they grow on
    /// a larger id).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        let hirs_limit = ((HIRS_RATIO * capacity as f64) as usize).max(1);
        let n = nr_pages as usize;
        Lirs {
            s: Queues::with_pages(n),
            q: Queues::with_pages(n),
            nh: Queues::with_pages(n),
            bits: vec![0; n],
            capacity,
            lirs_limit: capacity.saturating_sub(hirs_limit),
            hirs_limit,
            lirs_count: 0,
            hirs_count: 0,
            occupied: 0,
            counts: Counts::default(),
        }
    }

    /// References `page`; `true` on a hit.
    #[inline]
    pub fn access(&mut self, page: u32) -> bool {
        let p = page as usize;
        if p >= self.bits.len() {
            self.grow(p + 1);
        }
        let hit = self.find(page);
        if hit {
            self.counts.hit();
        } else {
            self.counts.miss();
            self.admit(page);
        }
        self.limit_stack();
        hit
    }

    /// libCacheSim's `LIRS_find`: `true` on a hit.
    fn find(&mut self, page: u32) -> bool {
        let b = self.bits[page as usize];
        if b & IN_S != 0 {
            self.s.move_to_head(0, 0, page);
        }
        if b & IN_Q != 0 {
            self.q.move_to_head(0, 0, page);
        }
        if b & IN_S != 0 {
            if b & LIR != 0 {
                self.prune();
                return true;
            }
            if b & RESIDENT == 0 {
                return false;
            }
            // a resident HIR page in S becomes LIR
            if b & IN_Q != 0 {
                self.hirs_count -= 1;
                self.q.remove(0, page);
                self.bits[page as usize] &= !IN_Q;
                self.occupied -= 1;
            }
            while self.lirs_count + 1 > self.lirs_limit && self.evict_lir() {}
            self.bits[page as usize] |= LIR;
            self.lirs_count += 1;
            self.occupied += 1;
            return true;
        }
        if b & IN_Q != 0 {
            // a resident HIR page outside S: back on S, still HIR
            while self.lirs_count + 1 > self.lirs_limit && self.evict_lir() {}
            self.s.push_head(0, page);
            self.bits[page as usize] |= IN_S | RESIDENT;
            self.bits[page as usize] &= !LIR;
            return true;
        }
        false
    }

    /// A miss: libCacheSim's `LIRS_can_insert`, evictions and `LIRS_insert`. Whether the page
    /// is (still) in S is asked again at each step, as libCacheSim looks it up again: demoting a
    /// LIR page prunes S, which can take the page off S's bottom.
    fn admit(&mut self, page: u32) {
        let p = page as usize;
        if self.capacity == 0 {
            return;
        }
        if self.bits[p] & IN_S != 0 {
            while self.lirs_count + 1 > self.lirs_limit && self.evict_lir() {}
            if self.bits[p] & IN_NH != 0 {
                self.nh.remove(0, page);
                self.bits[p] &= !IN_NH;
            }
        } else {
            if self.lirs_limit < 1 {
                return;
            }
            while self.lirs_count + 1 > self.lirs_limit && self.hirs_count + 1 > self.hirs_limit && self.evict_hir() {}
        }
        while self.occupied + 1 > self.capacity {
            let before = self.occupied;
            if self.bits[p] & IN_S != 0 {
                while self.hirs_count >= self.hirs_limit && self.evict_hir() {}
                self.evict_lir();
            } else if self.lirs_count + 1 > self.lirs_limit && self.hirs_count + 1 > self.hirs_limit {
                self.evict_hir();
            }
            if self.occupied >= before {
                // libCacheSim would spin (or fail) here; no trace it finishes reaches this state
                debug_assert!(false, "LIRS: eviction made no room");
                break;
            }
        }
        if self.bits[p] & IN_S != 0 {
            self.bits[p] |= LIR | RESIDENT;
            self.lirs_count += 1;
        } else if self.lirs_count < self.lirs_limit {
            self.s.push_head(0, page);
            self.bits[p] |= IN_S | LIR | RESIDENT;
            self.lirs_count += 1;
        } else {
            self.s.push_head(0, page);
            self.q.push_head(0, page);
            self.bits[p] = (self.bits[p] & !LIR) | IN_S | IN_Q | RESIDENT;
            self.hirs_count += 1;
        }
        self.occupied += 1;
    }

    /// S's bottom page (a LIR page) leaves S and becomes a resident HIR page in Q; S is pruned.
    /// `false` when S is empty.
    fn evict_lir(&mut self) -> bool {
        let Some(tail) = self.s.tail(0) else {
            return false;
        };
        let t = tail as usize;
        self.lirs_count = self.lirs_count.saturating_sub(1);
        self.s.remove(0, tail);
        self.bits[t] &= !(IN_S | LIR | RESIDENT);
        self.occupied -= 1;
        while self.hirs_count + 1 > self.hirs_limit && self.evict_hir() {}
        if self.bits[t] & IN_Q == 0 {
            self.q.push_head(0, tail);
            self.bits[t] |= IN_Q;
        }
        self.hirs_count += 1;
        self.occupied += 1;
        self.prune();
        true
    }

    /// Q's bottom page is evicted; in S it stays as a non-resident HIR page (and joins NH).
    /// `false` when Q is empty.
    fn evict_hir(&mut self) -> bool {
        let Some(tail) = self.q.tail(0) else {
            return false;
        };
        let t = tail as usize;
        self.hirs_count -= 1;
        self.q.remove(0, tail);
        self.bits[t] &= !IN_Q;
        if self.bits[t] & IN_S != 0 {
            self.bits[t] &= !RESIDENT;
            if self.bits[t] & IN_NH == 0 {
                self.nh.push_head(0, tail);
                self.bits[t] |= IN_NH;
            }
        }
        self.occupied -= 1;
        true
    }

    /// Removes HIR entries from S's bottom until a LIR page (or S's last entry) is there.
    fn prune(&mut self) {
        while let Some(tail) = self.s.tail(0) {
            if Some(tail) == self.s.head(0) || self.bits[tail as usize] & LIR != 0 {
                break;
            }
            let t = tail as usize;
            if self.bits[t] & RESIDENT == 0 && self.bits[t] & IN_NH != 0 {
                self.nh.remove(0, tail);
                self.bits[t] &= !IN_NH;
            }
            self.s.remove(0, tail);
            self.bits[t] &= !(IN_S | LIR | RESIDENT);
        }
    }

    /// Forgets NH's oldest pages while S holds more than `2C` entries.
    fn limit_stack(&mut self) {
        while self.s.len(0) > 2 * self.capacity {
            let Some(old) = self.nh.tail(0) else {
                break;
            };
            let o = old as usize;
            self.nh.remove(0, old);
            if self.bits[o] & IN_S != 0 {
                self.s.remove(0, old);
            }
            self.bits[o] &= !(IN_NH | IN_S | LIR | RESIDENT);
        }
    }

    fn resident_len(&self) -> usize {
        self.lirs_count + self.hirs_count
    }

    fn is_resident(&self, page: usize) -> bool {
        self.bits
            .get(page)
            .is_some_and(|&b| b & IN_Q != 0 || (b & IN_S != 0 && b & RESIDENT != 0))
    }

    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        self.s.reserve(nr_pages);
        self.q.reserve(nr_pages);
        self.nh.reserve(nr_pages);
        self.bits.resize(nr_pages, 0);
    }
}

super::impl_policy!(Lirs);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CachePolicy;

    /// C = 9: `Lhirs = 1`, `Llirs = 8`. Pages 0-7 become LIR, 8 a resident HIR page; the hit on
    /// 8 makes it LIR and demotes 1 to Q; the hit on 1 (in Q only) demotes 2, which evicts Q's
    /// bottom, 1 itself, and 1 is pushed on S still resident: 9 pages answer as resident, 8 are
    /// counted, and the next reference to 1 hits.
    #[test]
    fn uncounted_resident() {
        let mut c = Lirs::with_pages(9, 10);
        for p in 0..9 {
            assert!(!c.access(p));
        }
        assert!(c.access(0) && c.access(8) && c.access(1));
        assert_eq!(c.len(), 8);
        assert_eq!((0..10).filter(|&p| c.contains(p)).count(), 9);
        assert!(c.access(1), "libCacheSim hits the page it evicted from Q");
        // now a LIR page, counted again
        assert_eq!(c.len(), 9);
    }
}

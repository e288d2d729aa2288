//! W-TinyLFU: a small window LRU in front of a segmented-LRU main cache, with a count-min sketch
//! deciding which of the window's victim and the main cache's victim stays.

use super::Counts;
use crate::list::Queues;

const WINDOW: usize = 0;
/// The SLRU's probationary segment (libCacheSim's segment 0).
const PROBATION: usize = 1;
/// The SLRU's protected segment (segment 1).
const PROTECTED: usize = 2;
const NOWHERE: u8 = 3;

/// The window's share of the capacity (libCacheSim `window-size`).
pub const WINDOW_SIZE: f64 = 0.01;
/// The main SLRU's segment sizes, probationary : protected (`SLRU_init(…, "seg-size=1:4")`).
pub const SEG_SIZE: [u64; 2] = [1, 4];
/// The sketch's target error rate for `C_main` entries (`minimalIncrementCBF_init(…, 0.001)`).
pub const SKETCH_ERROR: f64 = 0.001;
/// Main-cache hits between two halvings of the sketch, per page of the main cache.
pub const SAMPLE_FACTOR: u64 = 32;

/// The two seeds libCacheSim hashes an id with (`HASH_SEED0`, `HASH_SEED1`).
const SEEDS: [u64; 2] = [0x1234_5678, 0x1234_4321];

/// W-TinyLFU (Einziger, Friedman and Manes, ACM ToS 2017) as libCacheSim implements it
/// (`WTinyLFU`, `WTinyLFU.c` with `main-cache=SLRU, window-size=0.01`; its sketch is
/// `minimalIncrementCBF.c`).
///
/// The window is an LRU of `W = ⌊0.01·C⌋` pages, the main cache an SLRU of `M = C − W` pages in
/// two segments, probationary `⌊M/5⌋` and protected `⌊4M/5⌋`. A miss enters the window. When the
/// cache is full, the window's LRU page is the candidate: while the main cache has room it moves
/// there (entering the lowest segment with room); otherwise it replaces the main cache's victim
/// (the probationary LRU page, or the protected one when probation is empty) if the sketch counts
/// it strictly more often, and is dropped if not. A hit in the window moves the page to the
/// window's head; a hit in main moves it to the protected head (from probation, the protected
/// LRU page is demoted to the probationary head).
///
/// The sketch is a count-min sketch of `⌈bpe·M⌉` 32-bit counters and `k = ⌈ln 2·bpe⌉` rows
/// (`bpe = −ln 0.001 / ln² 2`, so k = 10), indexed by `(a + i·b) mod n` for the low 32 bits `a`,
/// `b` of XXH64 of the id's 8 little-endian bytes under two seeds. An add increments all `k`
/// counters (libCacheSim's "minimal increment" name notwithstanding), the estimate is their
/// minimum. Adds: every miss admitted, every hit in main (not in the window), and every window
/// candidate once decided. The sketch halves all counters after every `32·M` hits in main.
///
/// Departures from the paper that libCacheSim makes and this follows: no doorkeeper (a Bloom
/// filter in front of the sketch in the paper); the aging counts main-cache hits, not all
/// accesses; until the main cache is first full the window grows past `W` (only the total is
/// bounded) and is then drained into main; hits in the window are not counted; and nothing is
/// admitted when `W = 0` (C < 100) or the probationary segment has no room (`⌊M/5⌋ = 0`).
///
/// The sketch hashes ids: the same decisions as libCacheSim need the ids libCacheSim sees.
/// [`WTinyLfu::with_pages`] hashes the dense page id itself (libCacheSim run on the renumbered
/// trace); [`WTinyLfu::with_keys`] hashes each page's original key. The hash pair of each page is
/// computed once, when the page's arrays are made, not per access.
#[derive(Debug, Clone)]
pub struct WTinyLfu {
    q: Queues<3>,
    loc: Vec<u8>,
    /// `[a, b]` of each page (the two 32-bit hashes of its key).
    hash: Vec<[u32; 2]>,
    sketch: Vec<u32>,
    rows: u32,
    capacity: usize,
    window_capacity: usize,
    main_capacity: usize,
    seg_capacity: [usize; 2],
    /// Main-cache hits since the last halving, and the count that triggers one.
    hits_since_decay: u64,
    decay_every: u64,
    counts: Counts,
}

impl WTinyLfu {
    /// An empty cache of `capacity` pages with arrays for page ids `0..nr_pages` (they grow on
    /// a larger id); the sketch hashes each page's id.
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        let mut c = Self::empty(capacity);
        c.grow(nr_pages as usize);
        c
    }

    /// An empty cache of `capacity` pages whose sketch hashes `keys[page]` for page `page` (the
    /// original ids of a renumbered trace, as libCacheSim sees them); pages beyond `keys` hash
    /// their own id.
    pub fn with_keys(capacity: usize, keys: &[u64]) -> Self {
        let mut c = Self::empty(capacity);
        c.hash = keys.iter().map(|&k| hash_pair(k)).collect();
        c.grow(keys.len());
        c
    }

    fn empty(capacity: usize) -> Self {
        // `cache_size *= window_size` on an integer: the product truncated
        let window_capacity = (capacity as f64 * WINDOW_SIZE) as usize;
        let main_capacity = capacity - window_capacity;
        let sum = (SEG_SIZE[0] + SEG_SIZE[1]) as f64;
        let seg = |i: usize| (SEG_SIZE[i] as f64 / sum * main_capacity as f64) as usize;
        let (rows, counters) = sketch_shape(main_capacity);
        WTinyLfu {
            q: Queues::with_pages(0),
            loc: Vec::new(),
            hash: Vec::new(),
            sketch: vec![0; counters],
            rows,
            capacity,
            window_capacity,
            main_capacity,
            seg_capacity: [seg(0), seg(1)],
            hits_since_decay: 0,
            decay_every: SAMPLE_FACTOR * main_capacity as u64,
            counts: Counts::default(),
        }
    }

    /// The window's size `W` and the main cache's `M` and segment sizes, in pages.
    pub fn sizes(&self) -> (usize, usize, [usize; 2]) {
        (self.window_capacity, self.main_capacity, self.seg_capacity)
    }

    /// The sketch's estimate of how often `page` was counted.
    pub fn estimate(&self, page: u32) -> u32 {
        let [a, b] = self.page_hash(page);
        let n = self.sketch.len() as u32;
        (0..self.rows)
            .map(|i| self.sketch[(a.wrapping_add(i.wrapping_mul(b)) % n) as usize])
            .min()
            .unwrap_or(u32::MAX)
    }

    /// References `page`; `true` on a hit.
    #[inline]
    pub fn access(&mut self, page: u32) -> bool {
        let p = page as usize;
        if p >= self.loc.len() {
            self.grow(p + 1);
        }
        match self.loc[p] as usize {
            WINDOW => {
                self.q.move_to_head(WINDOW, WINDOW, page);
                return self.counts.hit();
            }
            PROTECTED => {
                self.q.move_to_head(PROTECTED, PROTECTED, page);
                self.main_hit(page);
                return self.counts.hit();
            }
            PROBATION => {
                self.promote(page);
                self.main_hit(page);
                return self.counts.hit();
            }
            _ => {}
        }
        self.counts.miss();
        // WTinyLFU_can_insert: room in the window and in the probationary segment
        if self.window_capacity < 1 || self.main_capacity < 1 || self.seg_capacity[0] < 1 {
            return false;
        }
        while self.resident_len() + 1 > self.capacity {
            self.evict();
        }
        self.q.push_head(WINDOW, page);
        self.loc[p] = WINDOW as u8;
        self.add(page);
        false
    }

    /// Counts a hit in main and ages the sketch every `32·M` of them.
    fn main_hit(&mut self, page: u32) {
        self.add(page);
        self.hits_since_decay += 1;
        if self.hits_since_decay >= self.decay_every {
            self.hits_since_decay = 0;
            for c in &mut self.sketch {
                *c >>= 1;
            }
        }
    }

    /// A probationary hit: to the protected head; protected overflow cools to probation, and a
    /// probation over its size evicts (`SLRU_find`, `SLRU_cool`).
    fn promote(&mut self, page: u32) {
        self.q.move_to_head(PROBATION, PROTECTED, page);
        self.loc[page as usize] = PROTECTED as u8;
        while self.q.len(PROTECTED) > self.seg_capacity[1] {
            let tail = self.q.tail(PROTECTED).expect("an over-full segment has a tail");
            self.q.move_to_head(PROTECTED, PROBATION, tail);
            self.loc[tail as usize] = PROBATION as u8;
            while self.q.len(PROBATION) > self.seg_capacity[0] {
                self.main_evict();
            }
        }
    }

    fn main_len(&self) -> usize {
        self.q.len(PROBATION) + self.q.len(PROTECTED)
    }

    /// The main cache's victim: the LRU page of the lowest non-empty segment (`SLRU_to_evict`).
    fn main_victim(&self) -> Option<u32> {
        self.q.tail(PROBATION).or_else(|| self.q.tail(PROTECTED))
    }

    fn main_evict(&mut self) {
        let v = self.main_victim().expect("evicting from a non-empty main cache");
        self.q.remove(self.loc[v as usize] as usize, v);
        self.loc[v as usize] = NOWHERE;
    }

    /// `SLRU_insert`: the lowest segment with room, else (the main cache full or a page of slack
    /// the truncated segment sizes leave) evict as needed and enter probation.
    fn main_insert(&mut self, page: u32) {
        let seg = if self.q.len(PROBATION) < self.seg_capacity[0] {
            PROBATION
        } else if self.q.len(PROTECTED) < self.seg_capacity[1] {
            PROTECTED
        } else {
            while self.main_len() + 1 > self.main_capacity {
                self.main_evict();
            }
            PROBATION
        };
        self.q.push_head(seg, page);
        self.loc[page as usize] = seg as u8;
    }

    /// `WTinyLFU_evict`: move window victims into a main cache with room until it is full, then
    /// let one window victim compete with the main cache's victim.
    fn evict(&mut self) {
        loop {
            let Some(victim) = self.q.tail(WINDOW) else {
                self.main_evict();
                return;
            };
            let decided = if self.main_len() < self.main_capacity {
                self.q.remove(WINDOW, victim);
                self.main_insert(victim);
                false
            } else {
                let main_victim = self.main_victim().expect("a full main cache has a victim");
                self.q.remove(WINDOW, victim);
                self.loc[victim as usize] = NOWHERE;
                if self.estimate(victim) > self.estimate(main_victim) {
                    self.main_evict();
                    self.main_insert(victim);
                }
                true
            };
            self.add(victim);
            if decided {
                return;
            }
        }
    }

    /// Counts `page` once in the sketch.
    fn add(&mut self, page: u32) {
        let [a, b] = self.page_hash(page);
        let n = self.sketch.len() as u32;
        for i in 0..self.rows {
            self.sketch[(a.wrapping_add(i.wrapping_mul(b)) % n) as usize] += 1;
        }
    }

    #[inline]
    fn page_hash(&self, page: u32) -> [u32; 2] {
        self.hash
            .get(page as usize)
            .copied()
            .unwrap_or_else(|| hash_pair(page as u64))
    }

    fn resident_len(&self) -> usize {
        self.q.len(WINDOW) + self.main_len()
    }

    fn is_resident(&self, page: usize) -> bool {
        self.loc.get(page).is_some_and(|&l| l != NOWHERE)
    }

    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        if nr_pages <= self.loc.len() {
            return;
        }
        self.q.reserve(nr_pages);
        self.loc.resize(nr_pages, NOWHERE);
        let have = self.hash.len();
        if nr_pages > have {
            self.hash.extend((have..nr_pages).map(|p| hash_pair(p as u64)));
        }
    }
}

super::impl_policy!(WTinyLfu);

/// The sketch's rows and counters for `entries` entries at libCacheSim's error rate
/// (`minimalIncrementCBF_init`: at least twice the rows). The constants are libCacheSim's
/// literals for ln² 2 and ln 2, kept as written (not `LN_2`) so the products round as there.
#[allow(clippy::approx_constant)]
fn sketch_shape(entries: usize) -> (u32, usize) {
    let bpe = -SKETCH_ERROR.ln() / 0.480_453_013_918_201;
    let rows = (0.693_147_180_559_945 * bpe).ceil() as u32;
    let counters = (bpe * entries as f64).ceil().min(i32::MAX as f64) as usize;
    if counters < rows as usize {
        (rows, 2 * rows as usize)
    } else {
        (rows, counters)
    }
}

/// The low 32 bits of XXH64 of `key`'s 8 little-endian bytes under each of the two seeds.
fn hash_pair(key: u64) -> [u32; 2] {
    SEEDS.map(|s| xxh64_u64(key, s) as u32)
}

/// XXH64 (Yann Collet's xxHash, 64-bit) of the 8 little-endian bytes of `v` with `seed`.
pub(crate) fn xxh64_u64(v: u64, seed: u64) -> u64 {
    const P1: u64 = 0x9E37_79B1_85EB_CA87;
    const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    const P3: u64 = 0x1656_67B1_9E37_79F9;
    const P4: u64 = 0x85EB_CA77_C2B2_AE63;
    const P5: u64 = 0x27D4_EB2F_1656_67C5;
    let mut h = seed.wrapping_add(P5).wrapping_add(8);
    let k = v.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    h ^= k;
    h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_sketch_shape() {
        let c = WTinyLfu::with_pages(1000, 0);
        assert_eq!(c.sizes(), (10, 990, [198, 792]));
        // the truncated segments leave a page of slack
        assert_eq!(WTinyLfu::with_pages(16384, 0).sizes(), (163, 16221, [3244, 12976]));
        assert_eq!(sketch_shape(990), (10, 14234));
        // too few counters: twice the rows
        assert_eq!(sketch_shape(0), (10, 20));
    }
}

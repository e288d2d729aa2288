//! The exact LRU miss-ratio curve of a trace in one pass: Mattson's stack distances; its SHARDS
//! estimate; the spatial sample of miniature simulations.

use lrugen_trace::DenseTrace;

use crate::CacheResult;

/// No reference yet.
const NEVER: usize = usize::MAX;

/// The LRU stack distances of a trace (Mattson, Gecsei, Slutz and Traiger, IBM Systems Journal
/// 1970), which give LRU's hits at every capacity at once.
///
/// The stack distance of a reference is the number of distinct pages referenced since the
/// previous reference to the same page, itself included (infinite for a first reference). LRU
/// with `C` pages hits exactly the references of distance at most `C` (LRU is a stack
/// algorithm: the `C` most recently used pages are resident), so [`LruMrc::result`] at any
/// capacity equals an [`crate::Lru`] run of that capacity.
///
/// Built in `O(n log n)` for `n` references: a Fenwick tree over reference times marks the
/// latest reference of each page, and the distance of a reference is the number of marks since
/// the page's previous one. Memory: 4 bytes per reference (the tree) and 8 per distinct page
/// while building; the result keeps one count per distance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LruMrc {
    requests: u64,
    /// `hits_within[d]`: references of distance at most `d` (`hits_within[0] = 0`), for `d` up
    /// to the largest finite distance.
    hits_within: Vec<u64>,
}

/// The LRU stack distances of a whole trace ([`LruMrc`]).
pub fn lru_mrc(trace: &DenseTrace) -> LruMrc {
    LruMrc::from_pages(&trace.pages, trace.nr_unique)
}

impl LruMrc {
    /// The stack distances of the references `pages`, with room made for page ids
    /// `0..nr_pages` up front (a larger id grows the arrays).
    pub fn from_pages(pages: &[u32], nr_pages: u32) -> LruMrc {
        let n = pages.len();
        // Fenwick tree over the times 1..=n: 1 at the latest reference of each page
        let mut tree = vec![0u32; n + 1];
        let mut last = vec![NEVER; nr_pages as usize];
        // counts[d]: references of finite distance d
        let mut counts = vec![0u64; 1];
        for (i, &page) in pages.iter().enumerate() {
            let p = page as usize;
            if p >= last.len() {
                last.resize(p + 1, NEVER);
            }
            let now = i + 1;
            let prev = last[p];
            if prev != NEVER {
                // distinct pages referenced after `prev`, this one included
                let d = (prefix(&tree, now - 1) - prefix(&tree, prev)) as usize + 1;
                if d >= counts.len() {
                    counts.resize(d + 1, 0);
                }
                counts[d] += 1;
                add(&mut tree, prev, -1);
            }
            add(&mut tree, now, 1);
            last[p] = now;
        }
        let mut hits_within = counts;
        for d in 1..hits_within.len() {
            hits_within[d] += hits_within[d - 1];
        }
        LruMrc {
            requests: n as u64,
            hits_within,
        }
    }

    /// References in the trace.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// The smallest capacity at which LRU hits every reference it can (every one but the first
    /// reference of each page): the largest finite stack distance, 0 if there is none.
    pub fn saturation(&self) -> usize {
        self.hits_within.len() - 1
    }

    /// LRU's hits with `capacity` pages.
    pub fn hits(&self, capacity: usize) -> u64 {
        self.hits_within[capacity.min(self.saturation())]
    }

    /// LRU's counts with `capacity` pages, as [`crate::lru`] would report them.
    pub fn result(&self, capacity: usize) -> CacheResult {
        CacheResult::new(self.requests, self.hits(capacity))
    }

    /// LRU's miss ratio with `capacity` pages (0 for an empty trace).
    pub fn miss_ratio(&self, capacity: usize) -> f64 {
        self.result(capacity).miss_ratio()
    }

    /// How many references have stack distance `d` (infinite distances, first references, are
    /// not counted; `d = 0` has none).
    pub fn distance_count(&self, d: usize) -> u64 {
        if d == 0 || d > self.saturation() {
            0
        } else {
            self.hits_within[d] - self.hits_within[d - 1]
        }
    }
}

/// A SHARDS estimate of LRU's miss-ratio curve (Waldspurger, Park, Garthwaite and Ahmad,
/// "Efficient MRC Construction with SHARDS", USENIX FAST 2015), fixed-rate version: only the
/// references to pages whose hash falls below `rate` are kept, their stack distances are taken
/// among the kept references alone ([`LruMrc`] of the sample), and a sampled distance `d` stands
/// for `d / rate` in the whole trace. The miss ratio at `C` is the sample's LRU miss ratio at
/// `⌊C · rate⌋` pages.
///
/// Sampling is by page, not by reference, so every reference to a kept page is kept and reuse is
/// seen whole. The hash is SplitMix64's finaliser of the page id xor a seed: on the dense ids of
/// a renumbered trace, so a different seed gives a different sample of the same rate. No
/// SHARDS_adj correction (the paper's adjustment of the first bucket for the sample's size).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardsMrc {
    sample: LruMrc,
    /// The hash threshold out of 2^24.
    threshold: u64,
}

/// Hash values are taken modulo 2^24 (the paper's `P`).
const SHARDS_MODULUS: u64 = 1 << 24;

impl ShardsMrc {
    /// The estimate from the references `pages` sampled at `rate` (0 < rate ≤ 1, rounded to a
    /// multiple of 2^-24) with hash seed `seed`.
    ///
    /// # Panics
    ///
    /// If `rate` is not in `(0, 1]` or rounds to 0.
    pub fn from_pages(pages: &[u32], rate: f64, seed: u64) -> ShardsMrc {
        let threshold = sample_threshold(rate).unwrap_or_else(|e| panic!("SHARDS {e}"));
        let kept: Vec<u32> = pages.iter().copied().filter(|&p| sampled(p, threshold, seed)).collect();
        ShardsMrc {
            sample: LruMrc::from_pages(&kept, 0),
            threshold,
        }
    }

    /// The sampling rate, after rounding.
    pub fn rate(&self) -> f64 {
        self.threshold as f64 / SHARDS_MODULUS as f64
    }

    /// References kept in the sample.
    pub fn sampled_requests(&self) -> u64 {
        self.sample.requests()
    }

    /// The estimated LRU miss ratio with `capacity` pages (0 for an empty sample).
    pub fn miss_ratio(&self, capacity: usize) -> f64 {
        let scaled = (capacity as u128 * self.threshold as u128 / SHARDS_MODULUS as u128) as usize;
        self.sample.miss_ratio(scaled)
    }
}

/// The SHARDS estimate of a whole trace's LRU miss-ratio curve ([`ShardsMrc`]).
pub fn shards_mrc(trace: &DenseTrace, rate: f64, seed: u64) -> ShardsMrc {
    ShardsMrc::from_pages(&trace.pages, rate, seed)
}

/// The hash threshold (out of 2^24) of sampling rate `rate`, or why `rate` is not one: it must
/// be in `(0, 1]` and not round to 0.
pub fn sample_threshold(rate: f64) -> Result<u64, String> {
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(format!("rate {rate} not in (0, 1]"));
    }
    let threshold = (rate * SHARDS_MODULUS as f64).round() as u64;
    if threshold == 0 {
        return Err(format!("rate {rate} rounds to 0 (the smallest is 2^-24)"));
    }
    Ok(threshold)
}

/// Whether page `page` is in the sample of hash threshold `threshold` and seed `seed`.
#[inline]
fn sampled(page: u32, threshold: u64, seed: u64) -> bool {
    shards_hash(page, seed) % SHARDS_MODULUS < threshold
}

/// A spatial sample of a trace (Waldspurger, Park, Garthwaite and Ahmad, FAST 2015; and for
/// miniature simulations Waldspurger, Saemundsson, Ahmad and Park, "Cache Modeling and
/// Optimization using Miniature Simulations", USENIX ATC 2017): the references to the pages
/// whose hash falls below the rate, with the hash of [`ShardsMrc`] (the same pages for the same
/// rate and seed), renumbered densely in order of first use. A policy run on it at `C · rate`
/// pages models the policy at `C` pages on the whole trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpatialSample {
    /// The kept references' dense ids, in trace order.
    pub pages: Vec<u32>,
    /// Distinct pages kept; ids are `0..nr_unique`.
    pub nr_unique: u32,
    threshold: u64,
}

impl SpatialSample {
    /// The sample of the references `pages` at `rate` (in `(0, 1]`, rounded to a multiple of
    /// 2^-24) with hash seed `seed`; an error names a rate out of range.
    pub fn new(pages: &[u32], rate: f64, seed: u64) -> Result<SpatialSample, String> {
        let threshold = sample_threshold(rate)?;
        let mut ids: Vec<u32> = Vec::new();
        let mut nr_unique = 0u32;
        let mut out = Vec::new();
        for &p in pages {
            if !sampled(p, threshold, seed) {
                continue;
            }
            let i = p as usize;
            if i >= ids.len() {
                ids.resize(i + 1, u32::MAX);
            }
            if ids[i] == u32::MAX {
                ids[i] = nr_unique;
                nr_unique += 1;
            }
            out.push(ids[i]);
        }
        Ok(SpatialSample {
            pages: out,
            nr_unique,
            threshold,
        })
    }

    /// The sampling rate, after rounding.
    pub fn rate(&self) -> f64 {
        self.threshold as f64 / SHARDS_MODULUS as f64
    }

    /// The capacity that stands for `capacity` pages of the whole trace: `capacity · rate`,
    /// rounded to the nearest page, at least 1.
    pub fn scaled(&self, capacity: u64) -> u64 {
        let c = capacity as u128 * self.threshold as u128;
        let m = SHARDS_MODULUS as u128;
        (((c + m / 2) / m) as u64).max(1)
    }
}

/// SplitMix64's finaliser of `page ^ seed`.
#[inline]
fn shards_hash(page: u32, seed: u64) -> u64 {
    let mut z = (page as u64 ^ seed).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Sum of `tree`'s entries at times `1..=t`.
#[inline]
fn prefix(tree: &[u32], mut t: usize) -> u32 {
    let mut s = 0;
    while t > 0 {
        s += tree[t];
        t &= t - 1;
    }
    s
}

/// Adds `v` (±1) at time `t ≥ 1`.
#[inline]
fn add(tree: &mut [u32], mut t: usize, v: i32) {
    while t < tree.len() {
        tree[t] = tree[t].wrapping_add_signed(v);
        t += t & t.wrapping_neg();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_checked_distances() {
        // a b c a b b d a: distances -, -, -, 3, 3, 1, -, 3 (b and d since the previous a)
        let t = DenseTrace::from_keys([1, 2, 3, 1, 2, 2, 4, 1]);
        let m = lru_mrc(&t);
        assert_eq!(m.requests(), 8);
        assert_eq!(m.saturation(), 3);
        let counts: Vec<u64> = (0..=5).map(|d| m.distance_count(d)).collect();
        assert_eq!(counts, [0, 1, 0, 3, 0, 0]);
        let hits: Vec<u64> = (0..=6).map(|c| m.hits(c)).collect();
        assert_eq!(hits, [0, 1, 1, 4, 4, 4, 4]);
        assert_eq!(m.result(2), CacheResult::new(8, 1));
        assert_eq!(m.miss_ratio(4), 0.5);
    }

    #[test]
    fn shards_at_rate_one_is_exact() {
        let t = DenseTrace::from_keys([1, 2, 3, 1, 2, 2, 4, 1, 5, 3, 3, 1]);
        let (m, s) = (lru_mrc(&t), shards_mrc(&t, 1.0, 7));
        assert_eq!(s.rate(), 1.0);
        assert_eq!(s.sampled_requests(), 12);
        for c in 0..8 {
            assert_eq!(s.miss_ratio(c), m.miss_ratio(c), "C={c}");
        }
    }

    #[test]
    #[should_panic(expected = "not in (0, 1]")]
    fn shards_rate_zero_refused() {
        ShardsMrc::from_pages(&[1, 2], 0.0, 0);
    }

    #[test]
    fn spatial_sample_keeps_shards_pages() {
        let pages: Vec<u32> = (0..2000u32).map(|i| (i * 7919) % 500).collect();
        let s = SpatialSample::new(&pages, 0.25, 3).unwrap();
        // the same pages as SHARDS keeps, renumbered in order of first use
        let sh = ShardsMrc::from_pages(&pages, 0.25, 3);
        assert_eq!(s.pages.len() as u64, sh.sampled_requests());
        assert_eq!(
            lru_mrc(&DenseTrace::from_keys(s.pages.iter().map(|&p| p as u64))),
            sh.sample
        );
        let mut seen = 0;
        for &p in &s.pages {
            assert!(p <= seen);
            seen = seen.max(p + 1);
        }
        assert_eq!(seen, s.nr_unique);
        assert_eq!((s.scaled(1000), s.scaled(1), s.scaled(0)), (250, 1, 1));
        assert!(SpatialSample::new(&pages, 1.5, 0)
            .unwrap_err()
            .contains("not in (0, 1]"));
        assert!(SpatialSample::new(&pages, f64::NAN, 0).is_err());
        assert!(SpatialSample::new(&pages, 1e-9, 0).unwrap_err().contains("rounds to 0"));
        let all = SpatialSample::new(&pages, 1.0, 9).unwrap();
        assert_eq!(all.pages.len(), pages.len());
    }

    #[test]
    fn empty_trace() {
        let m = LruMrc::from_pages(&[], 0);
        assert_eq!((m.requests(), m.saturation(), m.hits(10)), (0, 0, 0));
        assert_eq!(m.miss_ratio(3), 0.0);
    }
}

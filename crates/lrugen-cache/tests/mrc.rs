//! Property tests of the LRU miss-ratio curve: one pass of stack distances equals an `Lru` run
//! at every capacity.

use lrugen_cache::{lru, lru_mrc, shards_mrc, Lru, LruMrc};
use lrugen_trace::DenseTrace;
use proptest::prelude::*;

fn stream(max_len: usize) -> impl Strategy<Value = Vec<u64>> {
    (1u64..80).prop_flat_map(move |universe| prop::collection::vec(0..universe, 0..max_len))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// At every capacity from 0 to past the number of distinct pages, the curve's counts are an
    /// LRU run's.
    #[test]
    fn equals_lru_at_every_size(keys in stream(800)) {
        let t = DenseTrace::from_keys(keys);
        let m = lru_mrc(&t);
        prop_assert_eq!(m.requests(), t.nr_requests);
        prop_assert!(m.saturation() <= t.nr_unique as usize);
        for c in 0..=t.nr_unique as usize + 2 {
            prop_assert_eq!(m.result(c), lru(&t, c), "C={}", c);
        }
        // LRU is a stack algorithm: its misses never grow with the capacity
        for c in 1..=t.nr_unique as usize + 2 {
            prop_assert!(m.result(c).misses <= m.result(c - 1).misses, "C={}", c);
            prop_assert!(m.miss_ratio(c) <= m.miss_ratio(c - 1), "C={}", c);
        }
        // past the largest stack distance the curve is flat at the first references
        prop_assert_eq!(m.result(m.saturation() + 5).misses, t.nr_unique as u64);
        // the distance counts add up to the non-first references
        let finite: u64 = (0..=m.saturation()).map(|d| m.distance_count(d)).sum();
        prop_assert_eq!(finite, t.nr_requests - t.nr_unique as u64);
    }

    /// Sparse page ids (not renumbered, arrays grown on demand) give the same curve as an LRU
    /// over the same ids.
    #[test]
    fn sparse_ids(pages in prop::collection::vec(0u32..5000, 0..400), hint in 0u32..100) {
        let m = LruMrc::from_pages(&pages, hint);
        for c in [0usize, 1, 2, 5, 17, 100, 400] {
            let mut l = Lru::new(c);
            let r = l.run(&pages);
            prop_assert_eq!(m.result(c), r, "C={}", c);
        }
    }

    /// SHARDS at rate 1 keeps every page and is the exact curve; at any rate the estimate is a
    /// miss ratio, non-increasing in C.
    #[test]
    fn shards_rate_one_exact(keys in stream(800), seed in any::<u64>(), r in 1u32..=100) {
        let t = DenseTrace::from_keys(keys);
        let m = lru_mrc(&t);
        let s = shards_mrc(&t, 1.0, seed);
        let rate = f64::from(r) / 100.0;
        let sampled = shards_mrc(&t, rate, seed);
        prop_assert!(sampled.sampled_requests() <= t.nr_requests);
        for c in 0..=t.nr_unique as usize + 2 {
            prop_assert_eq!(s.miss_ratio(c), m.miss_ratio(c), "C={}", c);
            let e = sampled.miss_ratio(c);
            prop_assert!((0.0..=1.0).contains(&e));
            if c > 0 {
                prop_assert!(e <= sampled.miss_ratio(c - 1), "C={} rate={}", c, rate);
            }
        }
    }
}

//! Property tests: LRU against a naive model, OPT against LRU and a
//! brute-force OPT, OPT on disk against OPT in memory.

use std::collections::VecDeque;

use lrugen_cache::{lru, opt, opt_btree, opt_spilled, Lru, NextUse, NextUseFile, Opt, OptStream};
use lrugen_trace::{DenseTrace, SpilledTrace};
use proptest::prelude::*;

/// LRU as a deque, most recent at the front.
struct NaiveLru {
    q: VecDeque<u32>,
    cap: usize,
}

impl NaiveLru {
    fn access(&mut self, p: u32) -> bool {
        if let Some(i) = self.q.iter().position(|&x| x == p) {
            self.q.remove(i);
            self.q.push_front(p);
            return true;
        }
        if self.cap == 0 {
            return false;
        }
        if self.q.len() == self.cap {
            self.q.pop_back();
        }
        self.q.push_front(p);
        false
    }
}

/// OPT with forced admission by scanning the future on every eviction.
fn naive_opt_hits(pages: &[u32], cap: usize) -> u64 {
    let mut res: Vec<u32> = Vec::new();
    let mut hits = 0;
    for (i, &p) in pages.iter().enumerate() {
        if res.contains(&p) {
            hits += 1;
            continue;
        }
        if cap == 0 {
            continue;
        }
        if res.len() == cap {
            let next_use = |q: u32| pages[i + 1..].iter().position(|&x| x == q).unwrap_or(usize::MAX);
            let (victim, _) = res.iter().enumerate().max_by_key(|&(_, &q)| next_use(q)).unwrap();
            res.swap_remove(victim);
        }
        res.push(p);
    }
    hits
}

fn stream(max_len: usize) -> impl Strategy<Value = Vec<u64>> {
    (1u64..40).prop_flat_map(move |universe| prop::collection::vec(0..universe, 0..max_len))
}

proptest! {
    #[test]
    fn lru_matches_naive(keys in stream(400), cap in 0usize..20) {
        let t = DenseTrace::from_keys(keys);
        let mut fast = Lru::new(cap);
        let mut naive = NaiveLru { q: VecDeque::new(), cap };
        for &p in &t.pages {
            prop_assert_eq!(fast.access(p), naive.access(p));
            prop_assert_eq!(fast.len(), naive.q.len());
        }
        prop_assert_eq!(fast.iter().collect::<Vec<_>>(), naive.q.iter().copied().collect::<Vec<_>>());
        prop_assert_eq!(fast.result(), lru(&t, cap));
    }

    /// The chunked replay (ids as little-endian bytes, several chunks, the cache's slots and the
    /// per-page array growing mid-stream) against the naive LRU, on larger caches and id spaces
    /// with hot, warm and one-off pages.
    #[test]
    fn lru_chunks_match_naive(
        ids in prop::collection::vec((0u32..4, 0u32..3000), 0..3000),
        cap in 0usize..400,
        chunk in 1usize..300,
    ) {
        let ids: Vec<u32> = ids.into_iter().map(|(k, x)| match k { 0 => x % 8, 1 => x % 300, _ => x }).collect();
        let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
        let mut naive = NaiveLru { q: VecDeque::new(), cap };
        let want: Vec<bool> = ids.iter().map(|&p| naive.access(p)).collect();
        let mut fast = Lru::new(cap);
        let mut hits = 0;
        for (n, c) in bytes.chunks(4 * chunk).enumerate() {
            hits += fast.access_le_chunk(c);
            let seen = ((n + 1) * chunk).min(ids.len());
            prop_assert_eq!(hits, want[..seen].iter().filter(|&&h| h).count() as u64);
        }
        prop_assert_eq!(fast.len(), naive.q.len());
        prop_assert_eq!(fast.iter().collect::<Vec<_>>(), naive.q.iter().copied().collect::<Vec<_>>());
        prop_assert!((0..3000).all(|p| fast.contains(p) == naive.q.contains(&p)));
    }

    #[test]
    fn opt_beats_lru(keys in stream(2000), cap in 0usize..50) {
        let t = DenseTrace::from_keys(keys);
        let o = opt(&t, cap);
        prop_assert!(o.hits >= lru(&t, cap).hits);
        prop_assert_eq!(o, opt_btree(&t, cap));
    }

    #[test]
    fn opt_matches_brute_force(keys in stream(120), cap in 0usize..10) {
        let t = DenseTrace::from_keys(keys);
        prop_assert_eq!(opt(&t, cap).hits, naive_opt_hits(&t.pages, cap));
    }

    #[test]
    fn opt_on_disk_matches_memory(keys in stream(3000), cap in 0usize..60) {
        let t = DenseTrace::from_keys(keys.iter().copied());
        let s = SpilledTrace::from_keys(keys).unwrap();
        prop_assert_eq!(s.pages.to_vec().unwrap(), t.pages.clone());
        // the same hit or miss at every step, not only the same totals
        let nu = NextUse::of(&t);
        let mut mem = Opt::new(&t.pages, &nu, cap);
        let nf = NextUseFile::compute(&s.pages, s.nr_unique).unwrap();
        let mut disk = OptStream::new(&s.pages, &nf, s.nr_unique, cap).unwrap();
        while let Some(hit) = mem.step() {
            prop_assert_eq!(disk.step().unwrap(), Some(hit));
            prop_assert_eq!(disk.cache().len(), mem.len());
        }
        prop_assert_eq!(disk.step().unwrap(), None);
        prop_assert_eq!(disk.result(), mem.result());
        prop_assert_eq!(opt_spilled(&s, cap).unwrap(), opt(&t, cap));
    }
}

//! Reference cache policies over dense page traces.
//!
//! * [`Lru`]: plain LRU with every miss admitted, O(1) per access, no
//!   allocation and no hashing per access (an intrusive doubly linked list in
//!   arrays indexed by dense page id, whose `prev` also says whether the page is resident).
//! * [`Opt`]: Belady's OPT with forced admission (the faulting page is always
//!   admitted; on a miss with a full cache the resident page whose next use is
//!   farthest is evicted), O(log C) amortised per access after an O(n)
//!   next-use precomputation ([`NextUse`]). [`opt_spilled`] gives the same
//!   result in bounded memory over a trace spilled to disk
//!   ([`lrugen_trace::SpilledTrace`]): the next uses are computed by a
//!   backward pass into a temporary file ([`NextUseFile`]) and read back
//!   with the trace ([`OptStream`]).
//!
//! * The zoo ([`zoo`](mod@zoo)): FIFO, CLOCK, SIEVE, S3-FIFO, ARC, 2Q and LIRS, each as libCacheSim
//!   0.3.5 implements it, run by name through [`ZooPolicy`] and [`ZooCache`] behind the
//!   [`CachePolicy`] trait (which [`Lru`] also implements); see docs/cache-zoo.md.
//!
//! * [`LruMrc`] ([`lru_mrc`]): LRU's exact miss-ratio curve, every capacity from one pass
//!   (Mattson's stack distances, a Fenwick tree over reference times, O(n log n)), and
//!   [`ShardsMrc`] ([`shards_mrc`]), its SHARDS estimate from a hash-sampled subset of pages;
//!   [`SpatialSample`], the same pages as a trace of their own, for miniature simulations of
//!   policies without the stack property (`lrugen mrc`, docs/mrc.md).
//!
//! All work on the dense ids of [`lrugen_trace::DenseTrace`] and report a
//! [`CacheResult`]. Capacities are in pages.
//!
//! ```
//! use lrugen_cache::{lru, opt, Lru};
//! use lrugen_trace::DenseTrace;
//!
//! let trace = DenseTrace::from_keys([1, 2, 3, 1, 4, 1, 2]);
//! assert_eq!(lru(&trace, 2).hits, 1);
//! assert_eq!(opt(&trace, 2).hits, 2);
//!
//! let mut cache = Lru::new(2);
//! assert!(!cache.access(7));
//! assert!(cache.access(7));
//! ```

#![warn(missing_docs)]

mod list;
mod lru;
mod mrc;
mod opt;
pub mod zoo;

use std::fmt;

pub use lru::{lru, prefetch, Lru};
pub use mrc::{lru_mrc, sample_threshold, shards_mrc, LruMrc, ShardsMrc, SpatialSample};
pub use opt::{opt, opt_btree, opt_spilled, NextUse, NextUseFile, Opt, OptCache, OptStream, NEVER};
pub use zoo::{zoo, zoo_keyed, CachePolicy, UnknownPolicy, ZooCache, ZooPolicy};

/// Request, hit and miss counts of one simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct CacheResult {
    /// Page references simulated.
    pub requests: u64,
    /// References that found their page resident.
    pub hits: u64,
    /// References that did not (`requests - hits`).
    pub misses: u64,
}

impl CacheResult {
    /// Builds a result from request and hit counts.
    ///
    /// # Panics
    /// In debug builds, if `hits > requests`.
    pub fn new(requests: u64, hits: u64) -> Self {
        debug_assert!(hits <= requests);
        CacheResult {
            requests,
            hits,
            misses: requests - hits,
        }
    }

    /// `hits / requests`, in `[0, 1]`; 0 for an empty run.
    pub fn hit_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.hits as f64 / self.requests as f64
        }
    }

    /// `misses / requests`, in `[0, 1]`; 0 for an empty run.
    pub fn miss_ratio(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.misses as f64 / self.requests as f64
        }
    }
}

/// `requests=… hits=… misses=… hit_ratio=…%` (percent with 2 decimals).
impl fmt::Display for CacheResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "requests={} hits={} misses={} hit_ratio={:.2}%",
            self.requests,
            self.hits,
            self.misses,
            self.hit_ratio() * 100.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios() {
        let r = CacheResult::new(8, 2);
        assert_eq!(r.misses, 6);
        assert_eq!(r.hit_ratio(), 0.25);
        assert_eq!(r.miss_ratio(), 0.75);
        assert_eq!(r.to_string(), "requests=8 hits=2 misses=6 hit_ratio=25.00%");
        assert_eq!(CacheResult::default().hit_ratio(), 0.0);
        assert_eq!(CacheResult::default().miss_ratio(), 0.0);
    }
}

/// The set of resident pages of a reference cache: a bit per dense page id, grown on demand (the
/// one structure [`Lru`], [`Opt`] and [`OptCache`] share).
#[derive(Clone, Debug, Default)]
pub(crate) struct PageSet(Vec<u64>);

impl PageSet {
    /// A set with room for pages `0..nr_pages`.
    pub(crate) fn with_pages(nr_pages: usize) -> PageSet {
        PageSet(vec![0; nr_pages.div_ceil(64)])
    }

    /// Whether `page` is in the set (a page beyond the room is not).
    #[inline]
    pub(crate) fn contains(&self, page: usize) -> bool {
        self.0.get(page >> 6).is_some_and(|w| w & (1u64 << (page & 63)) != 0)
    }

    /// Add `page`, which must be within the room.
    #[inline]
    pub(crate) fn insert(&mut self, page: usize) {
        self.0[page >> 6] |= 1u64 << (page & 63);
    }

    /// Remove `page`, which must be within the room.
    #[inline]
    pub(crate) fn remove(&mut self, page: usize) {
        self.0[page >> 6] &= !(1u64 << (page & 63));
    }

    /// Make room for pages `0..nr_pages` (never shrinks).
    pub(crate) fn reserve(&mut self, nr_pages: usize) {
        let words = nr_pages.div_ceil(64);
        if words > self.0.len() {
            self.0.resize(words, 0);
        }
    }
}

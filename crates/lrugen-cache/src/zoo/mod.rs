//! The cache-policy zoo: reference policies over dense page ids, each behaving as libCacheSim
//! 0.3.5's policy of the same name with its default parameters (docs/cache-zoo.md).
//!
//! Every policy here admits unit-size objects (one page each), keeps its state in arrays indexed
//! by page id (links, a location byte, a counter byte), and neither allocates nor hashes on the
//! access path except when a page id beyond the arrays is first seen (they grow then; size them
//! up front with the number of distinct ids, as [`crate::Lru::with_pages`] does). Ghost entries
//! (ids remembered after eviction) use the same arrays.
//!
//! [`ZooPolicy`] names the policies as libCacheSim does (`fifo`, `clock`, `sieve`, `s3fifo`,
//! `arc`, `2q`, `lirs`; parsed case-insensitively), [`ZooCache`] runs any of them, [`CachePolicy`] is
//! the interface they (and [`crate::Lru`]) share.

mod arc;
mod clock;
mod clockpro;
mod fifo;
mod lirs;
mod s3fifo;
mod sieve;
mod twoq;
mod wtinylfu;

use std::fmt;
use std::str::FromStr;

use lrugen_trace::DenseTrace;

use crate::CacheResult;

pub use arc::Arc;
pub use clock::Clock;
pub use clockpro::ClockPro;
pub use fifo::Fifo;
pub use lirs::Lirs;
pub use s3fifo::S3Fifo;
pub use sieve::Sieve;
pub use twoq::TwoQ;
pub use wtinylfu::WTinyLfu;

/// A reference cache over dense page ids with every miss considered for admission.
///
/// The contract every implementation keeps: [`CachePolicy::access`] returns `true` exactly when
/// the page was resident before the call; afterwards at most [`CachePolicy::capacity`] pages are
/// resident; the counts of [`CachePolicy::result`] are the calls to `access` since creation or
/// the last [`CachePolicy::reset_stats`].
pub trait CachePolicy {
    /// References `page`: `true` on a hit. On a miss the policy decides whether to admit it and
    /// what to evict.
    fn access(&mut self, page: u32) -> bool;

    /// Capacity in pages.
    fn capacity(&self) -> usize;

    /// Resident pages (ghost entries not counted).
    fn len(&self) -> usize;

    /// Whether no page is resident.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `page` is resident (no side effect).
    fn contains(&self, page: u32) -> bool;

    /// Counts since creation or the last [`CachePolicy::reset_stats`].
    fn result(&self) -> CacheResult;

    /// Zeroes the counts, keeping the cache contents.
    fn reset_stats(&mut self);

    /// Accesses the page ids of `chunk` in order, little-endian `u32`s as a spilled trace stores
    /// them ([`lrugen_trace::le_ids`]; a trailing partial id is ignored); returns the hits among
    /// them. The replay loop of a trace: one call per chunk, so that a policy's loop can be its
    /// own (plain LRU's checks its indices once per chunk) and [`ZooCache`] dispatches once per
    /// chunk, not per access.
    fn access_le_chunk(&mut self, chunk: &[u8]) -> u64 {
        let mut hits = 0;
        for id in lrugen_trace::le_ids(chunk) {
            hits += self.access(id) as u64;
        }
        hits
    }

    /// Accesses every page of `pages` in order; returns the counts of this call only.
    fn run(&mut self, pages: &[u32]) -> CacheResult {
        let hits0 = self.result().hits;
        for &p in pages {
            self.access(p);
        }
        CacheResult::new(pages.len() as u64, self.result().hits - hits0)
    }
}

/// Request and hit counts of a zoo policy.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    requests: u64,
    hits: u64,
}

impl Counts {
    /// Counts a hit; returns `true`.
    #[inline]
    fn hit(&mut self) -> bool {
        self.requests += 1;
        self.hits += 1;
        true
    }

    /// Counts a miss.
    #[inline]
    fn miss(&mut self) {
        self.requests += 1;
    }
}

/// Implements [`CachePolicy`] for a zoo policy with `capacity`, `counts` fields and
/// `access`, `resident_len`, `is_resident` methods.
macro_rules! impl_policy {
    ($t:ty) => {
        impl $crate::zoo::CachePolicy for $t {
            #[inline]
            fn access(&mut self, page: u32) -> bool {
                <$t>::access(self, page)
            }
            fn capacity(&self) -> usize {
                self.capacity
            }
            fn len(&self) -> usize {
                self.resident_len()
            }
            fn contains(&self, page: u32) -> bool {
                self.is_resident(page as usize)
            }
            fn result(&self) -> $crate::CacheResult {
                $crate::CacheResult::new(self.counts.requests, self.counts.hits)
            }
            fn reset_stats(&mut self) {
                self.counts = Default::default();
            }
        }
    };
}
use impl_policy;

impl CachePolicy for crate::Lru {
    #[inline]
    fn access(&mut self, page: u32) -> bool {
        crate::Lru::access(self, page)
    }
    fn access_le_chunk(&mut self, chunk: &[u8]) -> u64 {
        crate::Lru::access_le_chunk(self, chunk)
    }
    fn run(&mut self, pages: &[u32]) -> CacheResult {
        crate::Lru::run(self, pages)
    }
    fn capacity(&self) -> usize {
        crate::Lru::capacity(self)
    }
    fn len(&self) -> usize {
        crate::Lru::len(self)
    }
    fn contains(&self, page: u32) -> bool {
        crate::Lru::contains(self, page)
    }
    fn result(&self) -> CacheResult {
        crate::Lru::result(self)
    }
    fn reset_stats(&mut self) {
        crate::Lru::reset_stats(self)
    }
}

/// A zoo policy by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZooPolicy {
    /// [`Fifo`].
    Fifo,
    /// [`Clock`].
    Clock,
    /// [`Sieve`].
    Sieve,
    /// [`S3Fifo`].
    S3Fifo,
    /// [`Arc`].
    Arc,
    /// [`TwoQ`].
    TwoQ,
    /// [`Lirs`].
    Lirs,
    /// [`WTinyLfu`].
    WTinyLfu,
    /// [`ClockPro`].
    ClockPro,
}

impl ZooPolicy {
    /// Every policy, in the order of docs/cache-zoo.md.
    pub const ALL: [ZooPolicy; 9] = [
        ZooPolicy::Fifo,
        ZooPolicy::Clock,
        ZooPolicy::Sieve,
        ZooPolicy::S3Fifo,
        ZooPolicy::Arc,
        ZooPolicy::TwoQ,
        ZooPolicy::Lirs,
        ZooPolicy::WTinyLfu,
        ZooPolicy::ClockPro,
    ];

    /// The name, as libCacheSim's `cachesim` spells it in lower case.
    pub fn name(self) -> &'static str {
        match self {
            ZooPolicy::Fifo => "fifo",
            ZooPolicy::Clock => "clock",
            ZooPolicy::Sieve => "sieve",
            ZooPolicy::S3Fifo => "s3fifo",
            ZooPolicy::Arc => "arc",
            ZooPolicy::TwoQ => "2q",
            ZooPolicy::Lirs => "lirs",
            ZooPolicy::WTinyLfu => "wtinylfu",
            ZooPolicy::ClockPro => "clockpro",
        }
    }

    /// An empty cache of this policy with `capacity` pages and arrays for page ids
    /// `0..nr_pages`.
    pub fn build(self, capacity: usize, nr_pages: u32) -> ZooCache {
        match self {
            ZooPolicy::Fifo => ZooCache::Fifo(Fifo::with_pages(capacity, nr_pages)),
            ZooPolicy::Clock => ZooCache::Clock(Clock::with_pages(capacity, nr_pages)),
            ZooPolicy::Sieve => ZooCache::Sieve(Sieve::with_pages(capacity, nr_pages)),
            ZooPolicy::S3Fifo => ZooCache::S3Fifo(S3Fifo::with_pages(capacity, nr_pages)),
            ZooPolicy::Arc => ZooCache::Arc(Arc::with_pages(capacity, nr_pages)),
            ZooPolicy::TwoQ => ZooCache::TwoQ(TwoQ::with_pages(capacity, nr_pages)),
            ZooPolicy::Lirs => ZooCache::Lirs(Lirs::with_pages(capacity, nr_pages)),
            ZooPolicy::WTinyLfu => ZooCache::WTinyLfu(WTinyLfu::with_pages(capacity, nr_pages)),
            ZooPolicy::ClockPro => ZooCache::ClockPro(ClockPro::with_pages(capacity, nr_pages)),
        }
    }

    /// Like [`ZooPolicy::build`] for a renumbered trace whose page `p` had the key `keys[p]`:
    /// the policies that hash ids ([`WTinyLfu`]'s sketch) hash the keys, as libCacheSim does on
    /// the original trace; the others only size their arrays by `keys.len()`.
    pub fn build_keyed(self, capacity: usize, keys: &[u64]) -> ZooCache {
        match self {
            ZooPolicy::WTinyLfu => ZooCache::WTinyLfu(WTinyLfu::with_keys(capacity, keys)),
            _ => {
                let nr_pages = u32::try_from(keys.len()).expect("more keys than dense page ids");
                self.build(capacity, nr_pages)
            }
        }
    }
}

impl fmt::Display for ZooPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown zoo policy name (the message lists the valid ones).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPolicy(pub String);

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<_> = ZooPolicy::ALL.iter().map(|p| p.name()).collect();
        write!(f, "unknown cache policy {:?}; valid: {}", self.0, names.join(", "))
    }
}

impl std::error::Error for UnknownPolicy {}

/// Parses a libCacheSim name, case-insensitively (`FIFO`, `Clock`, `SIEVE`, `S3FIFO`, `ARC`,
/// `2Q`, `LIRS`; also `twoq`, libCacheSim's file name for 2Q).
impl FromStr for ZooPolicy {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        if lower == "twoq" {
            return Ok(ZooPolicy::TwoQ);
        }
        ZooPolicy::ALL
            .into_iter()
            .find(|p| p.name() == lower)
            .ok_or_else(|| UnknownPolicy(s.to_string()))
    }
}

/// A cache of any zoo policy (static dispatch: a `match` per access).
#[derive(Debug, Clone)]
pub enum ZooCache {
    /// [`Fifo`].
    Fifo(Fifo),
    /// [`Clock`].
    Clock(Clock),
    /// [`Sieve`].
    Sieve(Sieve),
    /// [`S3Fifo`].
    S3Fifo(S3Fifo),
    /// [`Arc`].
    Arc(Arc),
    /// [`TwoQ`].
    TwoQ(TwoQ),
    /// [`Lirs`].
    Lirs(Lirs),
    /// [`WTinyLfu`].
    WTinyLfu(WTinyLfu),
    /// [`ClockPro`].
    ClockPro(ClockPro),
}

macro_rules! each {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            ZooCache::Fifo($c) => $e,
            ZooCache::Clock($c) => $e,
            ZooCache::Sieve($c) => $e,
            ZooCache::S3Fifo($c) => $e,
            ZooCache::Arc($c) => $e,
            ZooCache::TwoQ($c) => $e,
            ZooCache::Lirs($c) => $e,
            ZooCache::WTinyLfu($c) => $e,
            ZooCache::ClockPro($c) => $e,
        }
    };
}

impl ZooCache {
    /// The policy of this cache.
    pub fn policy(&self) -> ZooPolicy {
        match self {
            ZooCache::Fifo(_) => ZooPolicy::Fifo,
            ZooCache::Clock(_) => ZooPolicy::Clock,
            ZooCache::Sieve(_) => ZooPolicy::Sieve,
            ZooCache::S3Fifo(_) => ZooPolicy::S3Fifo,
            ZooCache::Arc(_) => ZooPolicy::Arc,
            ZooCache::TwoQ(_) => ZooPolicy::TwoQ,
            ZooCache::Lirs(_) => ZooPolicy::Lirs,
            ZooCache::WTinyLfu(_) => ZooPolicy::WTinyLfu,
            ZooCache::ClockPro(_) => ZooPolicy::ClockPro,
        }
    }
}

impl CachePolicy for ZooCache {
    #[inline]
    fn access(&mut self, page: u32) -> bool {
        each!(self, c => c.access(page))
    }
    fn access_le_chunk(&mut self, chunk: &[u8]) -> u64 {
        each!(self, c => c.access_le_chunk(chunk))
    }
    fn capacity(&self) -> usize {
        each!(self, c => CachePolicy::capacity(c))
    }
    fn len(&self) -> usize {
        each!(self, c => CachePolicy::len(c))
    }
    fn contains(&self, page: u32) -> bool {
        each!(self, c => CachePolicy::contains(c, page))
    }
    fn result(&self) -> CacheResult {
        each!(self, c => CachePolicy::result(c))
    }
    fn reset_stats(&mut self) {
        each!(self, c => CachePolicy::reset_stats(c))
    }
    fn run(&mut self, pages: &[u32]) -> CacheResult {
        // One dispatch for the whole run rather than one per access.
        each!(self, c => CachePolicy::run(c, pages))
    }
}

/// Simulates `policy` with `capacity` pages over a whole trace.
pub fn zoo(trace: &DenseTrace, policy: ZooPolicy, capacity: usize) -> CacheResult {
    policy.build(capacity, trace.nr_unique).run(&trace.pages)
}

/// Like [`zoo`], with the trace's original keys (`keys[p]` the key of page `p`, as
/// [`ZooPolicy::build_keyed`] takes them).
pub fn zoo_keyed(trace: &DenseTrace, keys: &[u64], policy: ZooPolicy, capacity: usize) -> CacheResult {
    policy.build_keyed(capacity, keys).run(&trace.pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in ZooPolicy::ALL {
            assert_eq!(p.name().parse::<ZooPolicy>(), Ok(p));
            assert_eq!(p.name().to_uppercase().parse::<ZooPolicy>(), Ok(p));
            assert_eq!(p.build(4, 8).policy(), p);
        }
        assert_eq!("TwoQ".parse::<ZooPolicy>(), Ok(ZooPolicy::TwoQ));
        let err = "lfu".parse::<ZooPolicy>().unwrap_err().to_string();
        assert_eq!(
            err,
            r#"unknown cache policy "lfu"; valid: fifo, clock, sieve, s3fifo, arc, 2q, lirs, wtinylfu, clockpro"#
        );
    }

    /// Hand-checked decisions of each policy on small sequences.
    #[test]
    fn small_sequences() {
        let hits = |p: ZooPolicy, cap, seq: &[u32]| {
            let mut c = p.build(cap, 0);
            seq.iter().map(|&x| c.access(x) as u8).collect::<Vec<_>>()
        };
        // FIFO: the hit on 1 does not save it.
        assert_eq!(hits(ZooPolicy::Fifo, 2, &[1, 2, 1, 3, 1]), [0, 0, 1, 0, 0]);
        // CLOCK: the hit on 1 gives it a second chance, 2 is evicted.
        assert_eq!(hits(ZooPolicy::Clock, 2, &[1, 2, 1, 3, 1, 2]), [0, 0, 1, 0, 1, 0]);
        // SIEVE: for 4 the hand clears 1's mark and evicts 2, resting on 3; for 2 it evicts 3
        // where it rests, not the tail 1.
        assert_eq!(hits(ZooPolicy::Sieve, 3, &[1, 2, 3, 1, 4, 2, 1]), [0, 0, 0, 1, 0, 0, 1]);
        // ARC with C = 2: 1 seen twice is in T2; 2 and 3 pass through T1.
        assert_eq!(hits(ZooPolicy::Arc, 2, &[1, 1, 2, 3, 1]), [0, 1, 0, 0, 1]);
        // 2Q and S3-FIFO admit nothing below their minimum sizes.
        assert_eq!(hits(ZooPolicy::TwoQ, 3, &[1, 1]), [0, 0]);
        assert_eq!(hits(ZooPolicy::S3Fifo, 9, &[1, 1]), [0, 0]);
        // W-TinyLFU with C = 100 (window 1, main 99): 0..=99 fill the window; for 100 it drains
        // into main until main is full, then 99 (counted once) loses to main's victim 0 (counted
        // on entry and on moving to main); 99 is a miss, 0 a hit (libCacheSim agrees)
        let seq: Vec<u32> = (0..=100).chain([99, 0, 98, 19]).collect();
        assert_eq!(hits(ZooPolicy::WTinyLfu, 100, &seq)[100..], [0, 0, 1, 1, 1]);
        assert_eq!(hits(ZooPolicy::WTinyLfu, 99, &[1, 1]), [0, 0]);
        // CLOCK-Pro with C = 4 admits two cold pages, then nothing (the cold target is 2 and the
        // cache never fills, so no hand turns); libCacheSim agrees
        assert_eq!(
            hits(ZooPolicy::ClockPro, 4, &[1, 2, 3, 1, 2, 3, 3, 4, 1]),
            [0, 0, 0, 1, 1, 0, 0, 0, 1]
        );
    }
}

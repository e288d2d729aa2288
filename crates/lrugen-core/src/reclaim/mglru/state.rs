// SPDX-License-Identifier: GPL-2.0-only
//! MGLRU state: constants, the kernel profile, and the per-lruvec `lru_gen_folio` and
//! `lru_gen_mm_state` (`include/linux/mmzone.h`).

use super::bloom::BloomFilter;
use crate::mm::folio::ListHead;
use serde::{Deserialize, Serialize};

/// `MIN_NR_GENS`: the two youngest generations are never evicted (the "active" ones).
pub const MIN_NR_GENS: u64 = 2;
/// `MAX_NR_GENS`: generations per type.
pub const MAX_NR_GENS: usize = 4;
/// `MAX_NR_TIERS`.
pub const MAX_NR_TIERS: usize = 4;
/// `MIN_LRU_BATCH` (`BITS_PER_LONG`).
pub const MIN_LRU_BATCH: u64 = 64;
/// `MAX_LRU_BATCH`.
pub const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * 64;
/// `MAX_NR_ZONES` (zones per node in this model).
pub const MAX_NR_ZONES: usize = 4;
/// History slots when `CONFIG_LRU_GEN_STATS` is on (`NR_HIST_GENS`); 1 otherwise.
pub const MAX_NR_HIST_GENS: usize = MAX_NR_GENS;
/// mm-walk statistics slots (6 in 6.1: `LOYNFA`; 4 in mainline: `TYFA`).
pub const MAX_NR_MM_STATS: usize = 6;
/// `SWAPPINESS_ANON_ONLY` (mainline): proactive reclaim of anon only.
pub const SWAPPINESS_ANON_ONLY: u32 = 201;

/// Which kernel's MGLRU to model. The differences are small and local; every place that depends
/// on the profile asks one of the methods below (see `kernel-mglru.md` §14).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Profile {
    /// The series as merged in 6.1 (v14/v15; Debian's 6.1.192).
    #[serde(rename = "6.1")]
    V6_1,
    /// Mainline (≈6.15–6.17, `kernel-mglru.md` §1–§13).
    #[default]
    #[serde(rename = "mainline")]
    Mainline,
}

impl Profile {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Profile::V6_1 => "6.1",
            Profile::Mainline => "mainline",
        }
    }
    /// Number of mm-walk statistics (`NR_MM_STATS`).
    pub fn nr_mm_stats(self) -> usize {
        match self {
            Profile::V6_1 => 6,
            Profile::Mainline => 4,
        }
    }
    /// Letters of the mm-walk statistics in `lru_gen_full`.
    pub fn mm_stat_chars(self) -> &'static str {
        match self {
            Profile::V6_1 => "LOYNFA",
            Profile::Mainline => "TYFA",
        }
    }
}

impl std::str::FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "6.1" | "v6.1" => Ok(Profile::V6_1),
            "mainline" => Ok(Profile::Mainline),
            _ => Err(format!("unknown kernel profile '{s}': expected 6.1 or mainline")),
        }
    }
}

/// mm-walk statistics indices. Mainline: `MM_LEAF_TOTAL`, `MM_LEAF_YOUNG`, `MM_NONLEAF_FOUND`,
/// `MM_NONLEAF_ADDED`; 6.1 adds `MM_LEAF_OLD` and `MM_NONLEAF_TOTAL`. Stored here in the 6.1
/// layout; mainline shows indices 0, 2, 4, 5.
pub mod mm_stat {
    /// Leaf entries seen.
    pub const LEAF_TOTAL: usize = 0;
    /// Old leaf entries (6.1).
    pub const LEAF_OLD: usize = 1;
    /// Young leaf entries.
    pub const LEAF_YOUNG: usize = 2;
    /// Non-leaf entries seen (6.1).
    pub const NONLEAF_TOTAL: usize = 3;
    /// Non-leaf entries found in the Bloom filter.
    pub const NONLEAF_FOUND: usize = 4;
    /// Non-leaf entries added to the Bloom filter.
    pub const NONLEAF_ADDED: usize = 5;
    /// Mainline's four, in `TYFA` order.
    pub const MAINLINE: [usize; 4] = [LEAF_TOTAL, LEAF_YOUNG, NONLEAF_FOUND, NONLEAF_ADDED];
}

/// Where the mms added since the last walk start (`mm_state->tail`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MmTail {
    /// Never walked: every mm counts as new (the kernel's NULL tail).
    #[default]
    Unset,
    /// No mm was added since the last walk (the tail points at the list head).
    End,
    /// The first mm added since the last walk.
    Mm(u32),
}

/// `struct lru_gen_mm_state`: where the page-table walk of this lruvec stands.
#[derive(Clone, Debug, Default)]
pub struct MmState {
    /// First mm added since the last iteration.
    pub tail: MmTail,
    /// Set to `max_seq` after each full iteration over the mm list.
    pub seq: u64,
    /// Walk statistics per history slot.
    pub stats: [[u64; MAX_NR_MM_STATS]; MAX_NR_HIST_GENS],
    /// The double-buffered Bloom filters (`None` until first reset, as the kernel allocates lazily).
    pub filters: [Option<BloomFilter>; 2],
}

/// `struct lru_gen_folio`: the generations of one lruvec.
#[derive(Clone, Debug)]
pub struct LruGen {
    /// Youngest generation number (shared by both types).
    pub max_seq: u64,
    /// Oldest generation number per type (anon, file).
    pub min_seq: [u64; 2],
    /// Birth time (jiffies) of each generation slot.
    pub timestamps: [u64; MAX_NR_GENS],
    /// The lists `[gen][type][zone]`; head = youngest end.
    pub folios: [[[ListHead; MAX_NR_ZONES]; 2]; MAX_NR_GENS],
    /// Page counts `[gen][type][zone]` (may lag the lists while a walk batch is pending).
    pub nr_pages: [[[i64; MAX_NR_ZONES]; 2]; MAX_NR_GENS],
    /// EMA of refaulted pages per type and tier.
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// EMA of evicted + protected pages per type and tier.
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    /// Pages protected per history slot, type and tier (6.1 uses slots `tier − 1`).
    pub protected: [[[u64; MAX_NR_TIERS]; 2]; MAX_NR_HIST_GENS],
    /// Pages evicted per history slot, type and tier.
    pub evicted: [[[u64; MAX_NR_TIERS]; 2]; MAX_NR_HIST_GENS],
    /// Recent refaults per history slot, type and tier.
    pub refaulted: [[[u64; MAX_NR_TIERS]; 2]; MAX_NR_HIST_GENS],
    /// Page-table walk state.
    pub mm_state: MmState,
}

impl LruGen {
    /// `lru_gen_init_lruvec`: `max_seq = MIN_NR_GENS + 1`, `min_seq = 0`, all timestamps `now`.
    pub fn new(now: u64) -> Self {
        LruGen {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0, 0],
            timestamps: [now; MAX_NR_GENS],
            folios: Default::default(),
            nr_pages: Default::default(),
            avg_refaulted: Default::default(),
            avg_total: Default::default(),
            protected: Default::default(),
            evicted: Default::default(),
            refaulted: Default::default(),
            mm_state: MmState {
                seq: MIN_NR_GENS,
                ..Default::default()
            },
        }
    }

    /// Pages of `type` in generation slot `gen`, over all zones, clamped at 0 (as debugfs reads them).
    pub fn gen_pages(&self, gen: usize, t: usize) -> u64 {
        self.nr_pages[gen][t].iter().map(|&n| n.max(0) as u64).sum()
    }
}

/// `lru_gen_from_seq`.
#[inline]
pub fn gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS as u64) as usize
}

/// `lru_hist_from_seq` for `nr_hist` history slots.
#[inline]
pub fn hist_from_seq(seq: u64, nr_hist: usize) -> usize {
    (seq % nr_hist as u64) as usize
}

// SPDX-License-Identifier: GPL-2.0-only
//! Bloom filters of the page-table walk (`vmscan.c`, "Bloom filters").
//!
//! Each lruvec has two filters of 2^15 bits with k = 2, double-buffered by generation: the walk
//! for `seq` tests filter `seq % 2` and fills filter `(seq + 1) % 2`, so the next walk only
//! descends into the PTE tables that were found dense with young entries this time (or that
//! rmap look-around reported). Items are addresses of PMD entries; keys are the two 15-bit
//! halves of a 30-bit multiplicative (Knuth) hash of the address, as `hash_ptr(item, 30)`.

use super::state::MmState;

/// `BLOOM_FILTER_SHIFT`: 2^15 bits per filter.
pub const BLOOM_FILTER_SHIFT: u32 = 15;
const WORDS: usize = (1 << BLOOM_FILTER_SHIFT) / 64;
/// `GOLDEN_RATIO_64` of `include/linux/hash.h`.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// One filter of 2^15 bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BloomFilter {
    bits: Box<[u64; WORDS]>,
}

impl Default for BloomFilter {
    fn default() -> Self {
        BloomFilter {
            bits: Box::new([0; WORDS]),
        }
    }
}

/// The two bit indices of `item` (`get_item_key`: `hash_ptr(item, BLOOM_FILTER_SHIFT * 2)`).
#[inline]
pub fn item_keys(item: u64) -> [usize; 2] {
    let h = item.wrapping_mul(GOLDEN_RATIO_64) >> (64 - 2 * BLOOM_FILTER_SHIFT);
    let mask = (1u64 << BLOOM_FILTER_SHIFT) - 1;
    [(h & mask) as usize, (h >> BLOOM_FILTER_SHIFT) as usize]
}

impl BloomFilter {
    /// Whether both bits of `item` are set.
    #[inline]
    pub fn test(&self, item: u64) -> bool {
        item_keys(item)
            .iter()
            .all(|&k| self.bits[k / 64] & (1 << (k % 64)) != 0)
    }
    /// Set both bits of `item`.
    #[inline]
    pub fn set(&mut self, item: u64) {
        for k in item_keys(item) {
            self.bits[k / 64] |= 1 << (k % 64);
        }
    }
    /// Clear every bit.
    pub fn clear(&mut self) {
        self.bits.fill(0);
    }
}

/// `test_bloom_filter`: a filter not allocated yet answers "present".
#[inline]
pub fn test_bloom_filter(s: &MmState, seq: u64, item: u64) -> bool {
    match &s.filters[(seq % 2) as usize] {
        None => true,
        Some(f) => f.test(item),
    }
}

/// `update_bloom_filter`: no-op if the filter is not allocated.
#[inline]
pub fn update_bloom_filter(s: &mut MmState, seq: u64, item: u64) {
    if let Some(f) = &mut s.filters[(seq % 2) as usize] {
        f.set(item);
    }
}

/// `reset_bloom_filter`: clear filter `seq % 2`, allocating it on first use.
pub fn reset_bloom_filter(s: &mut MmState, seq: u64) {
    match &mut s.filters[(seq % 2) as usize] {
        Some(f) => f.clear(),
        slot @ None => *slot = Some(BloomFilter::default()),
    }
}

#[cfg(test)]
#[path = "bloom_tests.rs"]
mod tests;

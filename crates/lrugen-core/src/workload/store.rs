// SPDX-License-Identifier: GPL-2.0-only
//! A database's own page cache in anonymous memory, in front of its table file: what WiredTiger's
//! cache (MongoDB) or InnoDB's buffer pool (MySQL) is to the YCSB workloads that the MGLRU series
//! and its successors were measured with (YCSB's `cache_size` property, lrugen's own:
//! [`crate::workload::gen::ycsb::YcsbWorkload::cache_bytes`]).
//!
//! The table is a file of 4 KiB pages (a B-tree's leaves in key order: record `k` at
//! `k × recordsize`, as without a cache). The store reads a page it does not hold with a buffered
//! `pread` of the file (WiredTiger and InnoDB's defaults, `direct_io` off and
//! `innodb_flush_method=fsync`, go through the kernel's page cache), copies it into a page of its
//! cache (a store to anonymous memory), and serves every later access of the page from there (a
//! load, or a store for an update, which also marks the page dirty). A full cache evicts its least
//! recently used page, and writes it back with a buffered `pwrite` first when it is dirty. So the store's hot pages live in anonymous memory, where the kernel can only swap them,
//! while its misses go through the page cache, which holds the pages the store evicted: a
//! double-caching setup in which the two compete for the memcg.
//!
//! Approximations, each documented in docs/experiments.md: WiredTiger evicts by its pages' read
//! generations (an approximate LRU) and InnoDB by a midpoint LRU (an exact LRU stands for both;
//! CLOCK was tried and dropped: with a cache a fifth larger than the hot set, its hand came round
//! so often that it evicted hot pages and doubled the misses); the B-tree's internal pages,
//! few and always cached, are not accessed; checkpoints (WiredTiger writes dirty pages every 60 s)
//! are not made, so dirty pages are written only at eviction; a page is its own unit of caching
//! (WiredTiger's in-memory pages may be larger). All clients of a run share one store, as YCSB's
//! threads share one server: every access and I/O is made in the store process's address space.
//!
//! Per access: a few array reads and writes; no allocation (the tables are sized once).

use super::Op;
use std::sync::{Arc, Mutex};

/// No page in a slot, no slot for a page.
const NONE: u32 = u32::MAX;

/// The store's cache of table pages.
#[derive(Debug)]
pub struct StoreCache {
    /// The table page each slot holds, or [`NONE`].
    page_of_slot: Vec<u32>,
    /// The slot holding each table page, or [`NONE`].
    slot_of_page: Vec<u32>,
    /// Whether each slot's page is dirty.
    dirty: Vec<bool>,
    /// The LRU list of slots, most recent first: each slot's neighbours.
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Its head (most recent) and tail (least recent), [`NONE`] when empty.
    head: u32,
    tail: u32,
    /// Slots filled so far (the rest are free, filled in order).
    used: u32,
    /// The first virtual page of the cache's anonymous mapping in the store's address space.
    base: u32,
    /// Counts for reports and tests.
    pub stats: StoreStats,
}

/// What the store did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Accesses served from the cache.
    pub hits: u64,
    /// Accesses that read the page from the file first.
    pub misses: u64,
    /// Dirty pages written back to the file at eviction.
    pub writebacks: u64,
}

/// One store shared by the clients of a run.
pub type SharedStore = Arc<Mutex<StoreCache>>;

impl StoreCache {
    /// A cache of `slots` pages (at least 1), mapped at virtual page `base`, in front of a table of
    /// `table_pages` pages.
    pub fn new(slots: u32, base: u32, table_pages: u64) -> StoreCache {
        let slots = slots.max(1);
        StoreCache {
            page_of_slot: vec![NONE; slots as usize],
            slot_of_page: vec![NONE; table_pages as usize],
            dirty: vec![false; slots as usize],
            prev: vec![NONE; slots as usize],
            next: vec![NONE; slots as usize],
            head: NONE,
            tail: NONE,
            used: 0,
            base,
            stats: StoreStats::default(),
        }
    }

    /// Pages the cache holds at most.
    pub fn slots(&self) -> u32 {
        self.page_of_slot.len() as u32
    }

    /// The store accesses table page `page` for a read (`write` false) or an update: appends to
    /// `out` the page operations it makes, as `(op, key)`, in the address space `task` on the
    /// table file `file`. Keys: the table page for file I/O, `table_pages + slot` for the cache's
    /// anonymous pages.
    pub fn access(&mut self, task: u32, file: u32, page: u64, write: bool, out: &mut impl Extend<(Op, u32)>) {
        let table_pages = self.slot_of_page.len() as u32;
        let cached = self.slot_of_page[page as usize];
        let slot = if cached != NONE {
            self.stats.hits += 1;
            self.unlink(cached);
            cached
        } else {
            self.stats.misses += 1;
            let slot = if self.used < self.slots() {
                self.used += 1;
                self.used - 1
            } else {
                let victim = self.tail;
                self.unlink(victim);
                let old = self.page_of_slot[victim as usize];
                if self.dirty[victim as usize] {
                    self.stats.writebacks += 1;
                    out.extend([(
                        Op::Write {
                            task,
                            file,
                            index: u64::from(old),
                        },
                        old,
                    )]);
                }
                self.slot_of_page[old as usize] = NONE;
                victim
            };
            self.page_of_slot[slot as usize] = page as u32;
            self.slot_of_page[page as usize] = slot;
            self.dirty[slot as usize] = false;
            // the page read from the file, then copied into the cache
            out.extend([
                (
                    Op::Read {
                        task,
                        file,
                        index: page,
                    },
                    page as u32,
                ),
                (
                    Op::Store {
                        task,
                        vpn: self.base + slot,
                    },
                    table_pages + slot,
                ),
            ]);
            if !write {
                self.push_head(slot);
                return;
            }
            slot
        };
        self.push_head(slot);
        let vpn = self.base + slot;
        let op = if write {
            self.dirty[slot as usize] = true;
            Op::Store { task, vpn }
        } else {
            Op::Load { task, vpn }
        };
        out.extend([(op, table_pages + slot)]);
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NONE {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NONE {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    fn push_head(&mut self, s: u32) {
        self.prev[s as usize] = NONE;
        self.next[s as usize] = self.head;
        if self.head == NONE {
            self.tail = s;
        } else {
            self.prev[self.head as usize] = s;
        }
        self.head = s;
    }

    /// Every cached page is in exactly one slot and the two tables agree.
    pub fn check(&self) -> Result<(), String> {
        let mut held = 0usize;
        for (s, &p) in self.page_of_slot.iter().enumerate() {
            if p != NONE {
                held += 1;
                if self.slot_of_page[p as usize] != s as u32 {
                    return Err(format!(
                        "slot {s} holds page {p}, which maps to slot {}",
                        self.slot_of_page[p as usize]
                    ));
                }
            } else if self.dirty[s] {
                return Err(format!("empty slot {s} is dirty"));
            }
        }
        // the list holds every filled slot once, linked both ways
        let (mut n, mut s, mut last) = (0usize, self.head, NONE);
        while s != NONE {
            if self.prev[s as usize] != last || self.page_of_slot[s as usize] == NONE || n > held {
                return Err(format!("LRU list broken at slot {s}"));
            }
            (last, s, n) = (s, self.next[s as usize], n + 1);
        }
        if n != held || self.tail != last {
            return Err(format!("the LRU list holds {n} slots, {held} are filled"));
        }
        let mapped = self.slot_of_page.iter().filter(|&&s| s != NONE).count();
        if mapped != held {
            return Err(format!("{mapped} pages map to slots, {held} slots hold a page"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const B: u32 = 0x1000;

    fn ops(c: &mut StoreCache, page: u64, write: bool) -> Vec<(Op, u32)> {
        let mut v = Vec::new();
        c.access(3, 1, page, write, &mut v);
        v
    }

    #[test]
    fn a_miss_reads_the_file_and_fills_the_cache_then_hits_load() {
        let mut c = StoreCache::new(2, B, 10);
        let v = ops(&mut c, 4, false);
        assert_eq!(
            v,
            vec![
                (
                    Op::Read {
                        task: 3,
                        file: 1,
                        index: 4
                    },
                    4
                ),
                (Op::Store { task: 3, vpn: B }, 10),
            ]
        );
        assert_eq!(ops(&mut c, 4, false), vec![(Op::Load { task: 3, vpn: B }, 10)]);
        assert_eq!(ops(&mut c, 4, true), vec![(Op::Store { task: 3, vpn: B }, 10)]);
        assert_eq!(
            c.stats,
            StoreStats {
                hits: 2,
                misses: 1,
                writebacks: 0
            }
        );
    }

    #[test]
    fn a_dirty_victim_is_written_back_a_clean_one_dropped() {
        let mut c = StoreCache::new(2, B, 10);
        ops(&mut c, 1, true); // slot 0, dirty
        ops(&mut c, 2, false); // slot 1
                               // page 1 is the least recently used, dirty: written back first
        let v = ops(&mut c, 3, false);
        assert_eq!(
            v[0],
            (
                Op::Write {
                    task: 3,
                    file: 1,
                    index: 1
                },
                1
            )
        );
        assert_eq!(
            v[1],
            (
                Op::Read {
                    task: 3,
                    file: 1,
                    index: 3
                },
                3
            )
        );
        assert_eq!(v[2], (Op::Store { task: 3, vpn: B }, 10));
        // page 2 goes next, clean, without a write
        let v = ops(&mut c, 5, false);
        assert_eq!(
            v[0],
            (
                Op::Read {
                    task: 3,
                    file: 1,
                    index: 5
                },
                5
            )
        );
        assert_eq!(v.len(), 2);
        assert_eq!(c.stats.writebacks, 1);
        c.check().unwrap();
    }

    proptest! {
        /// Any access sequence keeps the tables consistent, holds the `slots` most recently used
        /// pages, serves a page from the file only when it is not among them, and writes back
        /// only dirty pages.
        #[test]
        fn tables_stay_consistent(slots in 1u32..8, accesses in prop::collection::vec((0u64..20, any::<bool>()), 1..300)) {
            let mut c = StoreCache::new(slots, B, 20);
            let mut model: std::collections::BTreeMap<u64, bool> = Default::default(); // page -> dirty
            let mut recency: Vec<u64> = Vec::new(); // most recent last
            for (page, write) in accesses {
                let was = model.get(&page).copied();
                prop_assert_eq!(was.is_some(), recency.iter().rev().take(slots as usize).any(|&p| p == page));
                recency.retain(|&p| p != page);
                recency.push(page);
                let v = ops(&mut c, page, write);
                let reads = v.iter().filter(|(o, _)| matches!(o, Op::Read { .. })).count();
                prop_assert_eq!(reads, usize::from(was.is_none()));
                for (o, _) in &v {
                    if let Op::Write { index, .. } = o {
                        prop_assert_eq!(model.remove(index), Some(true), "wrote back a clean or absent page");
                    }
                }
                if was.is_none() {
                    // a clean victim left silently: drop whatever the cache no longer holds
                    model.retain(|p, _| c.slot_of_page[*p as usize] != NONE || *p == page);
                }
                let dirty = model.get(&page).copied().unwrap_or(false) || write;
                model.insert(page, dirty);
                c.check().map_err(TestCaseError::fail)?;
                prop_assert!(model.len() <= slots as usize);
                for (&p, &d) in &model {
                    let s = c.slot_of_page[p as usize];
                    prop_assert!(s != NONE);
                    prop_assert_eq!(c.dirty[s as usize], d);
                }
            }
        }
    }
}

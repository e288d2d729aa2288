// SPDX-License-Identifier: GPL-2.0-only
//! Helpers shared by the integration tests: tiny machines, folio lookups, list membership found by
//! walking the lists (not by reading flags), and independent recounts of what the checker checks.
#![allow(dead_code)] // each test binary uses a different subset

use lrugen::kernel::Kernel;
use lrugen::mm::folio::{pg, FolioId};
use lrugen::mm::memcg::{MemcgId, ROOT_MEMCG};
use lrugen::mm::pagecache::{Advice, Slot};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Lru, Machine, MachineConfig};
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};

/// The kernel under test.
pub type K = Kernel<Classic>;

/// Every list, in `enum lru_list` order.
pub const ALL_LRUS: [Lru; 5] = [
    Lru::InactiveAnon,
    Lru::ActiveAnon,
    Lru::InactiveFile,
    Lru::ActiveFile,
    Lru::Unevictable,
];

/// A kernel on a one-node machine of `pages` pages and `swap` swap pages, with read-ahead off so
/// that every read instantiates exactly the page asked for, and the invariant checker on.
pub fn kernel(pages: u64, swap: u64) -> K {
    let mut cfg = MachineConfig::simple(pages, swap);
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    let p = Classic::new(&m);
    Kernel::new(m, p)
}

/// A kernel, a memcg `/t` and a task (address space) charged to it.
pub fn setup(pages: u64, swap: u64) -> (K, MemcgId, u32) {
    let mut k = kernel(pages, swap);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    let task = k.m.create_mm(t);
    (k, t, task)
}

/// Create a file of `pages` pages.
pub fn file(k: &mut K, name: &str, pages: u64) -> u32 {
    k.m.create_file(name, pages, Advice::Normal)
}

/// The folio caching page `index` of `file`; panics if it is not cached.
pub fn cached(k: &K, file: u32, index: u64) -> FolioId {
    match k.m.files[file as usize].slot(index) {
        Slot::Folio(id) => id,
        s => panic!("file {file} page {index} is not cached: {s:?}"),
    }
}

/// The folio mapped at `vpn` of `task`; panics if the PTE is not present.
pub fn mapped(k: &K, task: u32, vpn: u32) -> FolioId {
    let e = k.m.pte(task, vpn);
    assert!(
        e & lrugen::mm::vm::pte::PRESENT != 0,
        "task {task} vpn {vpn:#x} is not mapped ({e:#x})"
    );
    e & lrugen::mm::vm::pte::PFN_MASK
}

/// Which list of its lruvec folio `id` is on, found by walking the lists.
pub fn list_of(k: &K, id: FolioId) -> Option<Lru> {
    let f = k.m.folios[id];
    let lv = k.m.lruvec(f.memcg, f.node());
    let mut found = None;
    for lru in ALL_LRUS {
        k.m.folios
            .walk_list(&k.p.lruvecs[lv].lists[lru as usize], |x| {
                if x == id {
                    assert!(found.is_none(), "folio {id} is on two lists");
                    found = Some(lru);
                }
                Ok(())
            })
            .unwrap();
    }
    found
}

/// Assert folio `id` is on list `lru` by both its flags (`folio_lru_list`) and a list walk.
#[track_caller]
pub fn assert_on(k: &K, id: FolioId, lru: Lru) {
    assert!(k.m.folios[id].test(pg::LRU), "folio {id} lacks PG_lru");
    assert_eq!(Classic::folio_lru_list(&k.m, id), lru, "folio_lru_list of folio {id}");
    assert_eq!(list_of(k, id), Some(lru), "list holding folio {id}");
}

/// Length of list `lru` of lruvec (memcg, node 0).
pub fn list_len(k: &K, memcg: MemcgId, lru: Lru) -> u32 {
    k.p.lruvecs[k.m.lruvec(memcg, 0)].lists[lru as usize].len
}

/// A global (`/proc/vmstat`) counter.
pub fn vm(k: &K, s: Stat) -> i64 {
    k.m.vmstat().get(s)
}

/// A memcg's hierarchical counter (`memory.stat`).
pub fn mc(k: &K, memcg: MemcgId, s: Stat) -> i64 {
    k.m.memcg_stat(memcg).get(s)
}

/// Scan control of memcg limit reclaim on behalf of `memcg`, as `try_to_free_mem_cgroup_pages`
/// builds it.
pub fn sc_memcg(memcg: MemcgId) -> ScanControl {
    ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Direct, Some(memcg), usize::MAX)
}

/// Scan control of kswapd (global reclaim).
pub fn sc_kswapd() -> ScanControl {
    ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Kswapd, None, 0)
}

/// Free plus allocated frames, counted from the folio table and the zones, against the total.
pub fn frame_accounting(m: &Machine) -> (u64, u64, u64) {
    let allocated = (0..m.folios.len() as FolioId)
        .filter(|&id| m.folios[id].test(pg::ALLOCATED))
        .count() as u64;
    let free: u64 = m.nodes.iter().map(|n| n.free()).sum();
    (free, allocated, m.cfg.total_pages())
}

/// Pages charged to each memcg's subtree, counted from the folio table.
pub fn charged_per_memcg(m: &Machine) -> Vec<u64> {
    let mut local = vec![0u64; m.memcgs.len()];
    for id in 0..m.folios.len() as FolioId {
        let f = m.folios[id];
        if f.test(pg::ALLOCATED) && f.test(pg::CHARGED) {
            local[f.memcg as usize] += 1;
        }
    }
    (0..m.memcgs.len() as MemcgId)
        .map(|c| m.memcgs.subtree(c).iter().map(|&d| local[d as usize]).sum())
        .collect()
}

/// Assert the accounting identities the issue names, recounted here independently of the checker:
/// free + allocated = total, every memcg's usage = pages charged in its subtree, the LRU gauges
/// equal the list lengths, and the page cache counters equal the cached pages.
#[track_caller]
pub fn assert_accounting(k: &K) {
    let (free, allocated, total) = frame_accounting(&k.m);
    assert_eq!(
        free + allocated,
        total,
        "free {free} + allocated {allocated} != total {total}"
    );
    assert_eq!(k.m.vmstat().get(Stat::NrFreePages), free as i64);
    let charged = charged_per_memcg(&k.m);
    for c in k.m.memcgs.iter() {
        assert_eq!(c.usage, charged[c.id as usize], "usage of memcg {}", c.path);
    }
    let v = k.m.vmstat();
    for (lru, s) in ALL_LRUS.into_iter().zip([
        Stat::NrInactiveAnon,
        Stat::NrActiveAnon,
        Stat::NrInactiveFile,
        Stat::NrActiveFile,
        Stat::NrUnevictable,
    ]) {
        let len: i64 = k.p.lruvecs.iter().map(|l| l.lists[lru as usize].len as i64).sum();
        assert_eq!(v.get(s), len, "{} against the list lengths", s.name());
    }
    let cached: u64 = k.m.files.iter().map(|f| f.nr_pages).sum();
    assert_eq!(v.get(Stat::NrFilePages), cached as i64, "nr_file_pages");
}

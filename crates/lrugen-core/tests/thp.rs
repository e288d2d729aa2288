// SPDX-License-Identifier: GPL-2.0-only
//! Transparent huge pages, as far as they are modelled (docs/thp.md, "Status"): a PMD-sized anon
//! folio allocated, charged and mapped by one huge PMD, on each policy's LRU as one folio counted
//! in pages, seen young through the one PMD accessed bit, and freed whole, with the invariant
//! checker run after every step.

use lrugen::kernel::{Access, Kernel};
use lrugen::mm::folio::{pg, NIL};
use lrugen::mm::memcg::MemcgId;
use lrugen::mm::thp::{alloc_anon_thp, HPAGE_PMD_NR};
use lrugen::mm::vm::{pte, vmf, MMAP_BASE_VPN};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::mglru::Profile;
use lrugen::reclaim::{AddCtx, Policy};
use lrugen::workload::{Op, ANON_FILE};

mod common;

const B: u32 = MMAP_BASE_VPN;

fn machine() -> Machine {
    let mut cfg = MachineConfig::simple(16_384, 0);
    cfg.kmem = lrugen::mm::KmemConfig::kernel();
    let mut m = Machine::new(cfg);
    m.lru_cache_disabled = true;
    m.debug_checks = true;
    m
}

/// Pages on `memcg`'s LRU lists of `node` 0 (`lruvec_page_state` of the four evictable lists).
fn lru_pages<P: Policy>(k: &Kernel<P>, t: MemcgId) -> i64 {
    [
        Stat::NrInactiveAnon,
        Stat::NrActiveAnon,
        Stat::NrInactiveFile,
        Stat::NrActiveFile,
    ]
    .iter()
    .map(|&s| k.m.lruvec_state_local(t, 0, s))
    .sum()
}

/// A THP faulted in by hand (the fault does not make one yet): allocated, mapped at `B + 512`,
/// added to the LRU through the `lru_add` batch; checked as one folio of 512 pages; touched;
/// taken off the LRU, unmapped and freed whole.
fn one_thp_on_the_lru<P: Policy>(mut k: Kernel<P>, t: MemcgId, task: u32, name: &str) {
    let r = k.step(Op::Mmap {
        task,
        vpn: B,
        pages: 2048,
        file: ANON_FILE,
        pgoff: 0,
        flags: vmf::WRITE as u8,
        compressed_pct: 0,
    });
    assert_eq!(r, Ok(Access::Minor), "{name}");
    let kmem0 = k.m.memcgs[t].usage;
    let head = alloc_anon_thp(&mut k.m, 0, t).unwrap();
    let haddr = B + HPAGE_PMD_NR;
    k.m.map_folio_pmd(task, haddr, head, true);
    k.check().unwrap_or_else(|e| panic!("{name}: in flight: {e}"));
    k.p.lru_add_prepare(
        &mut k.m,
        head,
        AddCtx {
            in_fault: true,
            readahead: false,
        },
    );
    k.m.in_flight = NIL;
    k.m.lru_add.push(head);
    k.lru_add_drain();
    k.check().unwrap_or_else(|e| panic!("{name}: on the LRU: {e}"));
    assert!(k.m.folios[head].test(pg::LRU), "{name}");
    assert_eq!(lru_pages(&k, t), 512, "{name}: one folio, 512 pages on the lists");
    assert_eq!(k.m.lruvec_state_local(t, 0, Stat::NrAnonPages), 512, "{name}");
    assert_eq!(k.m.memcgs[t].usage - kmem0, 512, "{name}");
    assert_eq!(k.m.mms[task as usize].rss_anon, 512, "{name}");
    // the MMU: a store anywhere in the 2 MiB is a hit that sets the one young and dirty bits
    k.m.folio_referenced(head, None, true);
    assert_eq!(k.m.pte(task, haddr) & pte::YOUNG, 0, "{name}");
    assert_eq!(k.step(Op::Store { task, vpn: haddr + 333 }), Ok(Access::Hit), "{name}");
    assert_eq!(k.step(Op::Load { task, vpn: haddr + 511 }), Ok(Access::Hit), "{name}");
    assert_eq!(
        k.m.pte(task, haddr + 5) & (pte::YOUNG | pte::DIRTY),
        pte::YOUNG | pte::DIRTY
    );
    assert_eq!(
        k.m.folio_referenced(head, None, true).ptes,
        1,
        "{name}: one PMD, one reference"
    );
    k.check().unwrap_or_else(|e| panic!("{name}: touched: {e}"));
    // gone whole
    k.p.del_folio(&mut k.m, head);
    k.m.folios[head].clear(pg::LRU | pg::ACTIVE);
    assert_eq!(k.m.unmap_huge_pmd(task, haddr), head);
    k.m.folio_clear_dirty(head);
    k.m.free_large(head);
    k.check().unwrap_or_else(|e| panic!("{name}: freed: {e}"));
    assert_eq!(lru_pages(&k, t), 0, "{name}");
    assert_eq!(k.m.memcgs[t].usage, kmem0, "{name}");
    assert_eq!(k.m.lruvec_state_local(t, 0, Stat::NrAnonPages), 0, "{name}");
}

#[test]
fn a_thp_is_one_folio_of_512_pages_on_every_policy() {
    let (k, t, task) = common::classic_on(machine());
    one_thp_on_the_lru(k, t, task, "classic");
    for profile in [Profile::V6_1, Profile::V6_12, Profile::V7_2] {
        let (k, t, task) = common::mglru_on(machine(), profile);
        one_thp_on_the_lru(k, t, task, profile.name());
    }
}

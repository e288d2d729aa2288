// SPDX-License-Identifier: GPL-2.0-only
//! Transparent huge pages, as far as they are modelled (docs/thp.md, "Status"): a PMD-sized anon
//! folio allocated, charged and mapped by one huge PMD, on each policy's LRU as one folio counted
//! in pages, seen young through the one PMD accessed bit, freed whole, or split into 512 order-0
//! folios on its list or on reclaim's; the invariant checker after every step.

use lrugen::kernel::{Access, Kernel};
use lrugen::mm::folio::{pg, FolioId, NIL};
use lrugen::mm::memcg::MemcgId;
use lrugen::mm::thp::{alloc_anon_thp, Thp, HPAGE_PMD_NR};
use lrugen::mm::vm::{pte, vmf, Madv, MMAP_BASE_VPN};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::huge_memory::split_folio;
use lrugen::reclaim::mglru::Profile;
use lrugen::reclaim::vmscan::{clear_isolated, mark_isolated, try_to_free_mem_cgroup_pages};
use lrugen::reclaim::{AddCtx, Policy};
use lrugen::workload::{Op, ANON_FILE};
use proptest::prelude::*;

mod common;

const B: u32 = MMAP_BASE_VPN;
/// The pages charged to `t`: `memory.current` less what the CPUs' charge stocks hold for it.
fn charged<P: Policy>(k: &Kernel<P>, t: MemcgId) -> u64 {
    k.m.memcgs[t].usage - k.m.memcgs.stocked(t)
}

/// Where the THP of these tests is mapped: the second 2 MiB of the VMA.
const HADDR: u32 = B + HPAGE_PMD_NR;

fn machine() -> Machine {
    let mut cfg = MachineConfig::simple(16_384, 0);
    cfg.kmem = lrugen::mm::KmemConfig::kernel();
    let mut m = Machine::new(cfg);
    m.lru_cache_disabled = true;
    m.debug_checks = true;
    m
}

#[track_caller]
fn check<P: Policy>(k: &Kernel<P>, what: &str) {
    k.check().unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// Pages on `memcg`'s LRU lists of node 0 (`lruvec_page_state` of the four evictable lists).
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

/// An anon VMA of 8 MiB at `B`, and a THP faulted in by hand at [`HADDR`] (the fault does not
/// make one yet): allocated, mapped, added to the LRU through the `lru_add` batch. Returns its
/// head and the memcg's usage before it.
fn thp_on_the_lru<P: Policy>(k: &mut Kernel<P>, t: MemcgId, task: u32, name: &str) -> (FolioId, u64) {
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
    let usage0 = charged(k, t);
    let head = alloc_anon_thp(&mut k.m, 0, t).unwrap();
    k.m.map_folio_pmd(task, HADDR, head, true);
    check(k, &format!("{name}: in flight"));
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
    check(k, &format!("{name}: on the LRU"));
    (head, usage0)
}

/// The policy's folios on node 0's lists of `t`, young to old, per list.
fn lists<P: Policy>(k: &Kernel<P>, t: MemcgId) -> Vec<Vec<FolioId>> {
    k.p.lists()
        .into_iter()
        .filter(|l| l.memcg == t && l.node == 0)
        .map(|l| {
            let mut v = Vec::new();
            k.m.folios
                .walk_list(l.list, |id| {
                    v.push(id);
                    Ok(())
                })
                .unwrap();
            v
        })
        .collect()
}

fn lifecycle<P: Policy>(mut k: Kernel<P>, t: MemcgId, task: u32, name: &str) {
    let (head, usage0) = thp_on_the_lru(&mut k, t, task, name);
    assert!(k.m.folios[head].test(pg::LRU), "{name}");
    assert_eq!(lru_pages(&k, t), 512, "{name}: one folio, 512 pages on the lists");
    assert_eq!(lists(&k, t).iter().map(Vec::len).sum::<usize>(), 1, "{name}: one folio");
    assert_eq!(k.m.lruvec_state_local(t, 0, Stat::NrAnonPages), 512, "{name}");
    // 512 pages and the PTE table deposited for a split (a page table)
    assert_eq!(charged(&k, t) - usage0, 513, "{name}");
    assert_eq!(k.m.mms[task as usize].rss_anon, 512, "{name}");
    // the MMU: a store or load anywhere in the 2 MiB is a hit that sets the one young bit
    k.m.folio_referenced(head, None, true);
    assert_eq!(k.m.pte(task, HADDR) & pte::YOUNG, 0, "{name}");
    assert_eq!(k.step(Op::Store { task, vpn: HADDR + 333 }), Ok(Access::Hit), "{name}");
    assert_eq!(k.step(Op::Load { task, vpn: HADDR + 511 }), Ok(Access::Hit), "{name}");
    assert_eq!(
        k.m.pte(task, HADDR + 5) & (pte::YOUNG | pte::DIRTY),
        pte::YOUNG | pte::DIRTY
    );
    assert_eq!(
        k.m.folio_referenced(head, None, true).ptes,
        1,
        "{name}: one PMD, one reference"
    );
    check(&k, &format!("{name}: touched"));
    // gone whole
    k.p.del_folio(&mut k.m, head);
    k.m.folios[head].clear(pg::LRU | pg::ACTIVE);
    assert_eq!(k.m.unmap_huge_pmd(task, HADDR), head);
    k.m.folio_clear_dirty(head);
    k.m.free_large(head);
    check(&k, &format!("{name}: freed"));
    assert_eq!(lru_pages(&k, t), 0, "{name}");
    assert_eq!(charged(&k, t), usage0, "{name}");
    assert_eq!(k.m.lruvec_state_local(t, 0, Stat::NrAnonPages), 0, "{name}");
}

fn split_on_the_lru<P: Policy>(mut k: Kernel<P>, t: MemcgId, task: u32, name: &str) {
    let (head, usage0) = thp_on_the_lru(&mut k, t, task, name);
    let tables0 = k.m.ptes.live();
    let before: Vec<Vec<FolioId>> = lists(&k, t);
    split_folio(&mut k.m, &mut k.p, head, None);
    check(&k, &format!("{name}: split"));
    // `split_folio` splits the PMD (`thp_split_pmd`); `thp_split_page` is its callers' to count
    // (reclaim's whole swap-out splits in the model where the kernel splits nothing)
    assert_eq!(
        (
            k.m.thp_stats().split_pmd,
            k.m.thp_stats().split_page,
            k.m.thp_stats().nr_anon_thps
        ),
        (1, 0, 0),
        "{name}"
    );
    // 512 order-0 folios where the one was: its tails right before it (young side), in order
    let after = lists(&k, t);
    let li = before.iter().position(|l| l.contains(&head)).unwrap();
    let at = after[li].iter().position(|&x| x == head).unwrap();
    let want: Vec<FolioId> = (1..HPAGE_PMD_NR).rev().map(|i| head + i).chain([head]).collect();
    assert_eq!(after[li][at + 1 - HPAGE_PMD_NR as usize..=at], want[..], "{name}");
    assert_eq!(lru_pages(&k, t), 512, "{name}: the sizes in pages do not move");
    for i in 0..HPAGE_PMD_NR {
        let f = k.m.folios[head + i];
        assert_eq!(k.m.folios.nr_pages(head + i), 1, "{name}");
        assert!(f.test(pg::LRU | pg::ANON | pg::DIRTY | pg::CHARGED), "{name}: page {i}");
        assert_eq!((f.mapcount, f.index, f.memcg), (1, HADDR + i, t), "{name}: page {i}");
        // the deposited table maps each page, young as the PMD was
        assert_eq!(
            k.m.pte(task, HADDR + i),
            pte::PRESENT | pte::YOUNG | (head + i),
            "{name}"
        );
    }
    assert_eq!(k.m.ptes.live(), tables0 + 1, "{name}: the deposited table");
    assert_eq!(charged(&k, t) - usage0, 513, "{name}: nothing more charged");
    assert_eq!(k.m.mms[task as usize].rss_anon, 512, "{name}");
    assert_eq!(k.m.lruvec_state_local(t, 0, Stat::NrAnonPages), 512, "{name}");
    // order-0 pages now: a munmap of part of the range frees what it unmaps
    let r = k.step(Op::Munmap {
        task,
        vpn: HADDR + 100,
        pages: 50,
    });
    assert_eq!(r, Ok(Access::Minor), "{name}");
    check(&k, &format!("{name}: partly unmapped"));
    assert_eq!(lru_pages(&k, t), 462, "{name}");
    let r = k.step(Op::Munmap {
        task,
        vpn: B,
        pages: 2048,
    });
    assert_eq!(r, Ok(Access::Minor), "{name}");
    check(&k, &format!("{name}: unmapped"));
    assert_eq!((lru_pages(&k, t), charged(&k, t)), (0, usage0), "{name}");
}

fn split_isolated<P: Policy>(mut k: Kernel<P>, t: MemcgId, task: u32, name: &str) {
    let (head, _) = thp_on_the_lru(&mut k, t, task, name);
    // reclaim's view: isolated on a private list between two other folios (stand-ins)
    k.p.isolate_folio(&mut k.m, head);
    mark_isolated(&mut k.m, head);
    assert_eq!(k.m.lruvec_state_local(t, 0, Stat::NrIsolatedAnon), 512, "{name}");
    check(&k, &format!("{name}: isolated"));
    let mut list = vec![NIL - 1, head, NIL - 2];
    split_folio(&mut k.m, &mut k.p, head, Some((&mut list, 1)));
    assert_eq!(list.len(), 514, "{name}");
    let want: Vec<FolioId> = (0..HPAGE_PMD_NR).map(|i| head + i).collect();
    assert_eq!(list[1..513], want[..], "{name}: the tails next, first tail first");
    assert_eq!((list[0], list[513]), (NIL - 1, NIL - 2), "{name}");
    assert_eq!(k.m.lruvec_state_local(t, 0, Stat::NrIsolatedAnon), 512, "{name}");
    assert!(
        (0..HPAGE_PMD_NR).all(|i| k.m.folios[head + i].test(pg::ISOLATED)),
        "{name}"
    );
    check(&k, &format!("{name}: split while isolated"));
    for &id in &list[1..513] {
        clear_isolated(&mut k.m, id);
        k.p.add_folio(&mut k.m, id);
    }
    check(&k, &format!("{name}: put back"));
    assert_eq!(lru_pages(&k, t), 512, "{name}");
}

/// The ways a huge PMD goes away other than reclaim: a munmap or `MADV_DONTNEED` of the whole
/// 2 MiB frees the folio whole (`zap_huge_pmd`, its deposited table uncharged); of part of it
/// splits it (in the model the folio too) and frees the pages unmapped; fork and `MADV_COLD`
/// split it; exit frees it.
fn unmaps<P: Policy>(mut k: Kernel<P>, t: MemcgId, task: u32, name: &str) {
    let (head, usage0) = thp_on_the_lru(&mut k, t, task, name);
    let r = k.step(Op::Munmap {
        task,
        vpn: HADDR,
        pages: HPAGE_PMD_NR,
    });
    assert_eq!(r, Ok(Access::Minor), "{name}");
    check(&k, &format!("{name}: munmap of the 2 MiB"));
    assert_eq!((lru_pages(&k, t), charged(&k, t)), (0, usage0), "{name}");
    assert_eq!(
        (k.m.thp_stats().split_pmd, k.m.thp_stats().nr_anon_thps),
        (0, 0),
        "{name}"
    );
    assert!(!k.m.folios[head].test(pg::ALLOCATED), "{name}: freed");
    // MADV_DONTNEED of 10 pages in the middle of another one
    let fault = |k: &mut Kernel<P>, haddr: u32| {
        let head = alloc_anon_thp(&mut k.m, 0, t).unwrap();
        k.m.map_folio_pmd(task, haddr, head, true);
        k.m.in_flight = NIL;
        k.m.lru_add.push(head);
        head
    };
    let h = B + 2 * HPAGE_PMD_NR;
    let head = fault(&mut k, h);
    let r = k.step(Op::Madvise {
        task,
        vpn: h + 100,
        pages: 10,
        advice: Madv::DontNeed,
    });
    assert_eq!(r, Ok(Access::Minor), "{name}");
    check(&k, &format!("{name}: MADV_DONTNEED of part"));
    assert_eq!(
        (k.m.thp_stats().split_pmd, k.m.thp_stats().split_page),
        (1, 1),
        "{name}"
    );
    assert_eq!(lru_pages(&k, t), 502, "{name}");
    assert_eq!(k.m.pte(task, h + 100), pte::NONE, "{name}");
    assert_eq!(k.m.pte(task, h + 110) & pte::PFN_MASK, head + 110, "{name}");
    // MADV_COLD of a whole one: split, its pages deactivated one by one
    let h2 = B + 3 * HPAGE_PMD_NR;
    fault(&mut k, h2);
    let r = k.step(Op::Madvise {
        task,
        vpn: h2,
        pages: HPAGE_PMD_NR,
        advice: Madv::Cold,
    });
    assert_eq!(r, Ok(Access::Minor), "{name}");
    check(&k, &format!("{name}: MADV_COLD"));
    assert_eq!(k.m.thp_stats().split_page, 2, "{name}");
    assert_eq!(lru_pages(&k, t), 502 + 512, "{name}");
    // fork: the parent's huge PMD is split, the child shares its pages
    let h3 = B;
    let head3 = fault(&mut k, h3);
    let child = k.m.reserve_mm(t);
    assert_eq!(k.step(Op::Fork { task, child }), Ok(Access::Minor), "{name}");
    check(&k, &format!("{name}: fork"));
    assert_eq!(k.m.thp_stats().split_page, 3, "{name}");
    assert_eq!(k.m.folios[head3 + 7].mapcount, 2, "{name}");
    assert_eq!(k.m.pte(child, h3 + 7) & pte::PFN_MASK, head3 + 7, "{name}");
    // exit of both frees everything
    assert_eq!(k.step(Op::Exit { task: child }), Ok(Access::Hit), "{name}");
    let h4 = B + 8 * HPAGE_PMD_NR;
    let r = k.step(Op::Mmap {
        task,
        vpn: h4,
        pages: HPAGE_PMD_NR,
        file: ANON_FILE,
        pgoff: 0,
        flags: vmf::WRITE as u8,
        compressed_pct: 0,
    });
    assert_eq!(r, Ok(Access::Minor), "{name}");
    fault(&mut k, h4);
    check(&k, &format!("{name}: another THP"));
    assert_eq!(k.step(Op::Exit { task }), Ok(Access::Hit), "{name}");
    check(&k, &format!("{name}: exit"));
    assert_eq!(lru_pages(&k, t), 0, "{name}");
    assert_eq!(k.m.thp_stats().nr_anon_thps, 0, "{name}");
}

/// Runs `f` on the classic LRU and on MGLRU of 6.1, 6.12 and 7.2.
macro_rules! on_each_policy {
    ($f:ident) => {{
        let (k, t, task) = common::classic_on(machine());
        $f(k, t, task, "classic");
        for profile in [Profile::V6_1, Profile::V6_12, Profile::V7_2] {
            let (k, t, task) = common::mglru_on(machine(), profile);
            $f(k, t, task, profile.name());
        }
    }};
}

#[test]
fn a_thp_is_one_folio_of_512_pages_with_one_young_bit() {
    on_each_policy!(lifecycle);
}

#[test]
fn a_thp_split_on_its_list_leaves_512_pages_next_to_the_head() {
    on_each_policy!(split_on_the_lru);
}

#[test]
fn a_thp_split_in_reclaim_joins_reclaim_s_list() {
    on_each_policy!(split_isolated);
}

#[test]
fn a_huge_pmd_unmapped_whole_frees_the_folio_and_in_part_splits_it() {
    on_each_policy!(unmaps);
}

/// MGLRU's page-table walk meets the huge PMD (`walk_pmd_range` → `walk_pmd_range_locked`) and
/// treats it as it treats a young or old PTE: a 4 KiB anon page beside the THP, touched and aged
/// the same way, ends in the same generation after every walk (whatever each profile does with a
/// young sighting: 7.2 gives a second chance), the young bit is cleared, and the generation sizes
/// stay right in pages (the checker).
#[test]
fn mglru_s_walk_ages_a_thp_by_its_pmd_as_a_pte() {
    for profile in [Profile::V6_1, Profile::V6_12, Profile::V7_2] {
        let name = profile.name();
        let (mut k, t, task) = common::mglru_on(machine(), profile);
        let (head, _) = thp_on_the_lru(&mut k, t, task, name);
        let small_vpn = B + 2 * HPAGE_PMD_NR + 7;
        assert_eq!(k.step(Op::Store { task, vpn: small_vpn }), Ok(Access::Minor), "{name}");
        let small = k.m.pte(task, small_vpn) & pte::PFN_MASK;
        assert_eq!(k.m.folios.nr_pages(small), 1, "{name}");
        let l = k.m.lruvec(t, 0);
        let gens = |k: &Kernel<lrugen::reclaim::mglru::Mglru>| {
            (k.m.folios[head].gen_counter(), k.m.folios[small].gen_counter())
        };
        let (g, s) = gens(&k);
        assert_eq!(g, s, "{name}: both added in a fault");
        // (touched, walked) rounds: old, young, young, old, young
        for (round, touch) in [false, true, true, false, true].into_iter().enumerate() {
            k.m.folio_referenced(head, None, true);
            k.m.folio_referenced(small, None, true);
            if touch {
                assert_eq!(k.step(Op::Store { task, vpn: HADDR + 99 }), Ok(Access::Hit), "{name}");
                assert_eq!(k.step(Op::Store { task, vpn: small_vpn }), Ok(Access::Hit), "{name}");
            }
            let seq = k.p.lruvecs[l].max_seq;
            assert!(k.p.try_to_inc_max_seq(&mut k.m, l, seq, 100, true), "{name}");
            check(&k, &format!("{name}: round {round}"));
            let (g, s) = gens(&k);
            assert_eq!(g, s, "{name}: round {round}: the THP's generation is the page's");
            assert_eq!(k.m.pte(task, HADDR) & pte::YOUNG, 0, "{name}: young bit cleared");
        }
        // and it did move at some point: to the generation of the last walk
        assert_eq!(
            u64::from(k.m.folios[head].gen_counter() - 1),
            (k.p.lruvecs[l].max_seq - 1) % 4,
            "{name}"
        );
    }
}

/// A machine with THP `thp`, `swap` pages of swap, charging kernel memory.
fn thp_machine(thp: Thp, swap: u64) -> Machine {
    let mut cfg = MachineConfig::simple(16_384, swap);
    cfg.kmem = lrugen::mm::KmemConfig::kernel();
    cfg.thp = thp;
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.lru_cache_disabled = true;
    m.debug_checks = true;
    m
}

fn mmap_anon<P: Policy>(k: &mut Kernel<P>, task: u32, vpn: u32, pages: u32) {
    let r = k.step(common::anon_mmap(task, vpn, pages));
    assert_eq!(r, Ok(Access::Minor));
}

/// Reclaim from `t` until nothing is left to reclaim (or 64 rounds).
fn reclaim_all<P: Policy>(k: &mut Kernel<P>, t: MemcgId, name: &str) -> u64 {
    let mut total = 0;
    for _ in 0..64 {
        let n = try_to_free_mem_cgroup_pages(&mut k.m, &mut k.p, t, 1024, true);
        check(k, &format!("{name}: reclaim"));
        total += n;
        if n == 0 {
            break;
        }
    }
    total
}

/// `/proc/vmstat` of the machine as the model prints it.
fn vmstat_text<P: Policy>(k: &Kernel<P>) -> String {
    lrugen::mm::vmstat::format_proc_vmstat(&k.m.vmstat())
}

/// `memory.stat` of memcg `t` as the kernel of `k`'s profile prints it.
fn memory_stat_text<P: Policy>(k: &Kernel<P>, t: MemcgId) -> String {
    lrugen::mm::memory_stat::format(&k.m.memcg_stat(t), 4096, k.p.switches())
}

/// `Some(())` if `text` has the whole line `line`.
fn stat_line(text: &str, line: &str) -> Option<()> {
    text.lines().any(|l| l == line).then_some(())
}

/// The whole lifecycle under `always`: a write fault on an empty aligned 2 MiB of an anon VMA
/// makes one PMD-sized folio (`thp_fault_alloc`), later stores in it are hits; a read fault
/// elsewhere keeps the order-0 zero page and its write an order-0 page; reclaim with room in
/// swap swaps the THP out whole (`thp_swpout`, 512 `pswpout`), and its pages fault back in as
/// order-0 pages.
fn fault_reclaim_refault<P: Policy>(mut k: Kernel<P>, t: MemcgId, task: u32, name: &str) {
    mmap_anon(&mut k, task, B, 2048);
    assert_eq!(k.step(Op::Store { task, vpn: HADDR + 3 }), Ok(Access::Minor), "{name}");
    check(&k, &format!("{name}: THP fault"));
    let head = k.m.pte(task, HADDR) & pte::PFN_MASK;
    assert_eq!(
        (k.m.thp_stats().fault_alloc, k.m.folios.nr_pages(head)),
        (1, 512),
        "{name}"
    );
    assert_eq!(k.m.pte(task, HADDR + 511) & pte::PFN_MASK, head, "{name}");
    // /proc/vmstat counts THPs in 2 MiB pages, memory.stat in bytes; both count the fault
    let vm = vmstat_text(&k);
    for l in [
        "nr_anon_transparent_hugepages 1",
        "thp_fault_alloc 1",
        "thp_fault_fallback 0",
    ] {
        assert_eq!(stat_line(&vm, l), Some(()), "{name}: /proc/vmstat has `{l}`:\n{vm}");
    }
    let ms = memory_stat_text(&k, t);
    for l in ["anon_thp 2097152", "thp_fault_alloc 1", "anon 2097152"] {
        assert_eq!(stat_line(&ms, l), Some(()), "{name}: memory.stat has `{l}`:\n{ms}");
    }
    assert_eq!(lru_pages(&k, t), 512, "{name}");
    assert_eq!(k.step(Op::Store { task, vpn: HADDR + 400 }), Ok(Access::Hit), "{name}");
    // read, then write: order 0 (the huge zero page's split in 6.1 and 6.12)
    let v = B + 2 * HPAGE_PMD_NR;
    assert_eq!(k.step(Op::Load { task, vpn: v }), Ok(Access::Minor), "{name}");
    assert_eq!(k.step(Op::Store { task, vpn: v }), Ok(Access::Minor), "{name}");
    assert_eq!(k.m.folios.nr_pages(k.m.pte(task, v) & pte::PFN_MASK), 1, "{name}");
    // a write next to it: its PMD has a PTE table, order 0
    assert_eq!(k.step(Op::Store { task, vpn: v + 1 }), Ok(Access::Minor), "{name}");
    assert_eq!(k.m.thp_stats().fault_alloc, 1, "{name}");
    check(&k, &format!("{name}: order-0 faults"));
    let pswpout0 = k.m.vmstat().get(Stat::Pswpout);
    let reclaimed = reclaim_all(&mut k, t, name);
    assert_eq!(k.m.thp_stats().swpout, 1, "{name}: swapped out whole");
    assert_eq!(k.m.thp_stats().swpout_fallback, 0, "{name}");
    assert!(reclaimed >= 512, "{name}: {reclaimed}");
    assert!(k.m.vmstat().get(Stat::Pswpout) - pswpout0 >= 512, "{name}");
    assert_eq!(k.m.thp_stats().nr_anon_thps, 0, "{name}");
    // the folio was not split (the model's split for the write is not counted), its PMD was
    // (`try_to_unmap` with `TTU_SPLIT_HUGE_PMD`)
    assert_eq!(
        (k.m.thp_stats().split_page, k.m.thp_stats().split_pmd),
        (0, 1),
        "{name}"
    );
    let vm = vmstat_text(&k);
    for l in [
        "thp_swpout 1",
        "thp_swpout_fallback 0",
        "thp_split_pmd 1",
        "thp_split_page 0",
    ] {
        assert_eq!(stat_line(&vm, l), Some(()), "{name}: /proc/vmstat has `{l}`:\n{vm}");
    }
    let ms = memory_stat_text(&k, t);
    assert_eq!(stat_line(&ms, "anon_thp 0"), Some(()), "{name}:\n{ms}");
    // 6.12 on, the memcg counts and prints the swap-out (`memcg_thp_swpout_stats`)
    let swpout = if k.p.switches().memcg_thp_swpout_stats {
        Some(())
    } else {
        None
    };
    assert_eq!(stat_line(&ms, "thp_swpout 1"), swpout, "{name}:\n{ms}");
    assert_eq!(stat_line(&ms, "thp_swpout_fallback 0"), swpout, "{name}:\n{ms}");
    // the pages come back one by one
    let r = k.step(Op::Load { task, vpn: HADDR + 3 });
    assert_eq!(r, Ok(Access::Major), "{name}");
    let id = k.m.pte(task, HADDR + 3) & pte::PFN_MASK;
    assert_eq!(k.m.folios.nr_pages(id), 1, "{name}: swap-in is order 0");
    assert_eq!(k.m.thp_stats().fault_alloc, 1, "{name}");
    check(&k, &format!("{name}: refault"));
}

/// Without a free swap cluster the THP is split and swapped out page by page
/// (`thp_swpout_fallback`, `thp_split_page`).
fn reclaim_without_a_cluster<P: Policy>(mut k: Kernel<P>, t: MemcgId, task: u32, name: &str) {
    mmap_anon(&mut k, task, B, 1024);
    assert_eq!(k.step(Op::Store { task, vpn: HADDR }), Ok(Access::Minor), "{name}");
    assert_eq!(k.m.thp_stats().fault_alloc, 1, "{name}");
    reclaim_all(&mut k, t, name);
    assert_eq!(
        (k.m.thp_stats().swpout, k.m.thp_stats().swpout_fallback),
        (0, 1),
        "{name}"
    );
    assert_eq!(k.m.thp_stats().split_page, 1, "{name}");
    let vm = vmstat_text(&k);
    for l in [
        "thp_swpout 0",
        "thp_swpout_fallback 1",
        "thp_split_page 1",
        "thp_split_pmd 1",
    ] {
        assert_eq!(stat_line(&vm, l), Some(()), "{name}: /proc/vmstat has `{l}`:\n{vm}");
    }
    let ms = memory_stat_text(&k, t);
    let fallback = if k.p.switches().memcg_thp_swpout_stats {
        Some(())
    } else {
        None
    };
    assert_eq!(stat_line(&ms, "thp_swpout_fallback 1"), fallback, "{name}:\n{ms}");
    assert_eq!(
        k.m.vmstat().get(Stat::Pswpout),
        300,
        "{name}: the swap device's 300 slots"
    );
    assert_eq!(lru_pages(&k, t), 512 - 300, "{name}");
}

#[test]
fn a_thp_faulted_in_is_reclaimed_whole_and_refaults_as_order_0() {
    let (k, t, task) = common::classic_on(thp_machine(Thp::Always, 4096));
    fault_reclaim_refault(k, t, task, "classic");
    for profile in [Profile::V6_1, Profile::V6_12, Profile::V7_2] {
        let (k, t, task) = common::mglru_on(thp_machine(Thp::Always, 4096), profile);
        fault_reclaim_refault(k, t, task, profile.name());
    }
}

#[test]
fn a_thp_without_a_swap_cluster_is_split() {
    let (k, t, task) = common::classic_on(thp_machine(Thp::Always, 300));
    reclaim_without_a_cluster(k, t, task, "classic");
    for profile in [Profile::V6_1, Profile::V6_12, Profile::V7_2] {
        let (k, t, task) = common::mglru_on(thp_machine(Thp::Always, 300), profile);
        reclaim_without_a_cluster(k, t, task, profile.name());
    }
}

/// `madvise`: only a `MADV_HUGEPAGE` VMA gets THPs; `never`: none; a failed charge falls back.
#[test]
fn the_knob_and_the_charge_decide_at_the_fault() {
    let (mut k, _, task) = common::classic_on(thp_machine(Thp::Madvise, 0));
    mmap_anon(&mut k, task, B, 2048);
    assert_eq!(k.step(Op::Store { task, vpn: B }), Ok(Access::Minor));
    assert_eq!(k.m.thp_stats().fault_alloc, 0);
    let r = k.step(Op::Madvise {
        task,
        vpn: B + 1024,
        pages: 1024,
        advice: Madv::HugePage,
    });
    assert_eq!(r, Ok(Access::Minor));
    assert_eq!(k.step(Op::Store { task, vpn: B + 1500 }), Ok(Access::Minor));
    assert_eq!(k.m.thp_stats().fault_alloc, 1);
    check(&k, "madvise");
    let (mut k, _, task) = common::classic_on(thp_machine(Thp::Never, 0));
    mmap_anon(&mut k, task, B, 2048);
    assert_eq!(k.step(Op::Store { task, vpn: B }), Ok(Access::Minor));
    assert_eq!((k.m.thp_stats().fault_alloc, k.m.thp_stats().fault_fallback), (0, 0));
    // room for 300 pages in the memcg: the charge fails, the fault falls back to order 0
    let (mut k, t, task) = common::classic_on(thp_machine(Thp::Always, 0));
    k.m.memcgs[t].max = k.m.memcgs[t].usage + 300;
    mmap_anon(&mut k, task, B, 2048);
    assert_eq!(k.step(Op::Store { task, vpn: B }), Ok(Access::Minor));
    assert_eq!(
        (
            k.m.thp_stats().fault_alloc,
            k.m.thp_stats().fault_fallback,
            k.m.thp_stats().fault_fallback_charge
        ),
        (0, 1, 1)
    );
    assert_eq!(k.m.folios.nr_pages(k.m.pte(task, B) & pte::PFN_MASK), 1);
    check(&k, "fallback");
}

/// A `MADV_HUGEPAGE` VMA's fault in a full memcg: its charge (`GFP_TRANSHUGE` under `defrag`
/// `madvise`) reclaims order-0 pages from the memcg to make room for 512 and gets its THP,
/// counting `max` events; the same fault without `MADV_HUGEPAGE` (`always`,
/// `GFP_TRANSHUGE_LIGHT`) reclaims nothing and falls back to order 0.
fn a_madvised_charge_reclaims<P: Policy>(mut k: Kernel<P>, t: MemcgId, task: u32, name: &str) {
    mmap_anon(&mut k, task, B, 4096);
    // fill the memcg with order-0 pages of the first, unadvised 2 MiB (already a PTE table)
    k.m.memcgs[t].max = k.m.memcgs[t].usage + 1100;
    let r = k.step(Op::Madvise {
        task,
        vpn: B + 2048,
        pages: 2048,
        advice: Madv::NoHugePage,
    });
    assert_eq!(r, Ok(Access::Minor), "{name}");
    for v in 0..1000 {
        assert_eq!(
            k.step(Op::Store {
                task,
                vpn: B + 2048 + v
            }),
            Ok(Access::Minor),
            "{name}"
        );
    }
    let (max0, pswpout0) = (k.m.memcgs[t].events.max, k.m.vmstat().get(Stat::Pswpout));
    assert_eq!(k.m.thp_stats().fault_alloc, 0, "{name}");
    // unadvised under `always`: no room, no reclaim, order 0
    assert_eq!(k.step(Op::Store { task, vpn: B }), Ok(Access::Minor), "{name}");
    assert_eq!(
        (k.m.thp_stats().fault_alloc, k.m.thp_stats().fault_fallback_charge),
        (0, 1),
        "{name}"
    );
    assert_eq!(
        k.m.memcgs[t].events.max, max0,
        "{name}: the light charge does not reclaim"
    );
    // advised: reclaim, then the THP
    let r = k.step(Op::Madvise {
        task,
        vpn: B + 512,
        pages: 512,
        advice: Madv::HugePage,
    });
    assert_eq!(r, Ok(Access::Minor), "{name}");
    assert_eq!(k.step(Op::Store { task, vpn: B + 700 }), Ok(Access::Minor), "{name}");
    assert_eq!(k.m.thp_stats().fault_alloc, 1, "{name}: the advised charge made room");
    assert_eq!(
        k.m.folios.nr_pages(k.m.pte(task, B + 700) & pte::PFN_MASK),
        512,
        "{name}"
    );
    assert!(k.m.memcgs[t].events.max > max0, "{name}");
    assert!(
        k.m.vmstat().get(Stat::Pswpout) - pswpout0 >= 400,
        "{name}: order-0 pages swapped out"
    );
    assert!(k.m.memcgs[t].usage <= k.m.memcgs[t].max, "{name}");
    check(&k, &format!("{name}: reclaimed for a THP"));
}

#[test]
fn a_madvised_thp_charge_reclaims_in_its_memcg() {
    let (k, t, task) = common::classic_on(thp_machine(Thp::Always, 4096));
    a_madvised_charge_reclaims(k, t, task, "classic");
    for profile in [Profile::V6_1, Profile::V6_12, Profile::V7_2] {
        let (k, t, task) = common::mglru_on(thp_machine(Thp::Always, 4096), profile);
        a_madvised_charge_reclaims(k, t, task, profile.name());
    }
}

#[derive(Clone, Debug)]
enum ThpOp {
    Store(u32),
    Load(u32),
    Munmap(u32, u32),
    DontNeed(u32, u32),
    PageOut(u32, u32),
    Mmap(u32),
    Reclaim(u32),
}

fn thp_op() -> impl Strategy<Value = ThpOp> {
    prop_oneof![
        8 => (0u32..2048).prop_map(ThpOp::Store),
        3 => (0u32..2048).prop_map(ThpOp::Load),
        1 => (0u32..2048, 1u32..700).prop_map(|(a, n)| ThpOp::Munmap(a, n)),
        1 => (0u32..2048, 1u32..700).prop_map(|(a, n)| ThpOp::DontNeed(a, n)),
        1 => (0u32..2048, 1u32..700).prop_map(|(a, n)| ThpOp::PageOut(a, n)),
        1 => (0u32..4).prop_map(ThpOp::Mmap),
        2 => (1u32..2048).prop_map(ThpOp::Reclaim),
    ]
}

/// Random faults, unmaps, madvise and reclaims under THP `always`, in a memcg that may be
/// tight, with swap that may or may not take a whole THP: the invariant checker holds after
/// every operation (every folio on one list, sizes, charges and mappings in pages).
fn thp_ops_keep_the_invariants<P: Policy>(mut k: Kernel<P>, t: MemcgId, task: u32, ops: &[ThpOp]) {
    mmap_anon(&mut k, task, B, 2048);
    // one THP fault (or its fallback) to begin with
    let _ = k.step(Op::Store { task, vpn: B + 700 });
    assert_eq!(k.m.thp_stats().fault_alloc + k.m.thp_stats().fault_fallback, 1);
    check(&k, "first fault");
    for op in ops {
        let op2 = match *op {
            ThpOp::Store(v) => Op::Store { task, vpn: B + v },
            ThpOp::Load(v) => Op::Load { task, vpn: B + v },
            ThpOp::Munmap(a, n) => Op::Munmap {
                task,
                vpn: B + a,
                pages: n.min(2048 - a),
            },
            ThpOp::DontNeed(a, n) => Op::Madvise {
                task,
                vpn: B + a,
                pages: n.min(2048 - a),
                advice: Madv::DontNeed,
            },
            ThpOp::PageOut(a, n) => Op::Madvise {
                task,
                vpn: B + a,
                pages: n.min(2048 - a),
                advice: Madv::PageOut,
            },
            ThpOp::Mmap(i) => Op::Mmap {
                task,
                vpn: B + i * HPAGE_PMD_NR,
                pages: HPAGE_PMD_NR,
                file: ANON_FILE,
                pgoff: 0,
                flags: vmf::WRITE as u8,
                compressed_pct: 0,
            },
            ThpOp::Reclaim(n) => {
                try_to_free_mem_cgroup_pages(&mut k.m, &mut k.p, t, u64::from(n), true);
                check(&k, &format!("after {op:?}"));
                continue;
            }
        };
        // faults on holes and maps over mappings fail; the checker must hold either way
        let _ = k.step(op2);
        check(&k, &format!("after {op:?}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn random_thp_operations_keep_the_invariants(
        policy in 0usize..4,
        swap in prop_oneof![Just(0u64), Just(300), Just(4096)],
        max in prop_oneof![Just(None), Just(Some(700u64)), Just(Some(1500))],
        ops in proptest::collection::vec(thp_op(), 1..60),
    ) {
        let m = thp_machine(Thp::Always, swap);
        macro_rules! go {
            ($k:expr, $t:expr, $task:expr) => {{
                let (mut k, t, task) = ($k, $t, $task);
                if let Some(max) = max {
                    k.m.memcgs[t].max = k.m.memcgs[t].usage + max;
                }
                thp_ops_keep_the_invariants(k, t, task, &ops);
            }};
        }
        match policy {
            0 => { let (k, t, task) = common::classic_on(m); go!(k, t, task) }
            1 => { let (k, t, task) = common::mglru_on(m, Profile::V6_1); go!(k, t, task) }
            2 => { let (k, t, task) = common::mglru_on(m, Profile::V6_12); go!(k, t, task) }
            _ => { let (k, t, task) = common::mglru_on(m, Profile::V7_2); go!(k, t, task) }
        }
    }
}

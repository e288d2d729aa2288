// SPDX-License-Identifier: GPL-2.0-only
//! Address-space operations of the workload stream: mmap at a fixed address, munmap, madvise
//! (DONTNEED, COLD, PAGEOUT, SEQUENTIAL/RANDOM/NORMAL) and fork with copy-on-write, checked against
//! the kernel's documented behaviour (mm/mmap.c, mm/madvise.c, mm/memory.c, kernel/fork.c of 6.1
//! and 6.12) on tiny machines, with the invariant checker after every operation.

use lrugen::kernel::{Access, AccessError, Kernel};
use lrugen::mm::folio::{pg, FolioId};
use lrugen::mm::memcg::MemcgId;
use lrugen::mm::pagecache::{Advice, Slot};
use lrugen::mm::vm::{pte, vmf, Madv, MMAP_BASE_VPN};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Lru, Machine, MachineConfig, CTX_TASK};
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::{gen_from_seq, Mglru, Profile};
use lrugen::reclaim::Policy;
use lrugen::workload::Op;
use proptest::prelude::*;

mod common;

const B: u32 = MMAP_BASE_VPN;

fn machine(pages: u64, swap: u64) -> Machine {
    let mut cfg = MachineConfig::simple(pages, swap);
    cfg.ra_pages = 0;
    // page tables, slab and xarray nodes charged as the kernel charges them, so that every op's
    // kernel memory is checked against what holds it
    cfg.kmem = lrugen::mm::KmemConfig::kernel();
    let mut m = Machine::new(cfg);
    // each folio on its list when the operation returns (lru_cache_disable)
    m.lru_cache_disabled = true;
    m.debug_checks = true;
    m
}

fn classic(pages: u64, swap: u64) -> (Kernel<Classic>, MemcgId, u32) {
    common::classic_on(machine(pages, swap))
}

fn mglru(profile: Profile, pages: u64, swap: u64) -> (Kernel<Mglru>, MemcgId, u32) {
    common::mglru_on(machine(pages, swap), profile)
}

/// Kernel memory charged to memcg `t` (`memory.stat` `kernel`: page tables, slab, the rest of
/// an address space's; [`lrugen::mm::KmemConfig`]).
fn kmem<P: Policy>(k: &Kernel<P>, t: MemcgId) -> u64 {
    let kmem: i64 = (0..k.m.nr_nodes())
        .map(|nd| k.m.lruvec_state_local(t, nd, Stat::MemcgKmem))
        .sum();
    kmem as u64
}

/// Pages (folios) charged to memcg `t`: its usage less its kernel memory.
fn pages<P: Policy>(k: &Kernel<P>, t: MemcgId) -> u64 {
    k.m.memcgs[t].usage - kmem(k, t) - k.m.memcgs.stocked(t)
}

/// Run one op and the invariant checker.
#[track_caller]
fn run<P: Policy>(k: &mut Kernel<P>, op: Op) -> Result<Access, AccessError> {
    let r = k.step(op);
    k.check().unwrap_or_else(|e| panic!("after {op:?}: {e}"));
    r
}

#[track_caller]
fn ok<P: Policy>(k: &mut Kernel<P>, op: Op) -> Access {
    run(k, op).unwrap_or_else(|e| panic!("{op:?}: {e}"))
}

use common::anon_mmap as anon;

fn fmap(task: u32, vpn: u32, pages: u32, file: u32, pgoff: u32) -> Op {
    Op::Mmap {
        task,
        vpn,
        pages,
        file,
        pgoff,
        flags: 0,
        compressed_pct: 0,
    }
}

fn madv(task: u32, vpn: u32, pages: u32, advice: Madv) -> Op {
    Op::Madvise {
        task,
        vpn,
        pages,
        advice,
    }
}

fn store(task: u32, vpn: u32) -> Op {
    Op::Store { task, vpn }
}

fn load(task: u32, vpn: u32) -> Op {
    Op::Load { task, vpn }
}

fn mapped<P: Policy>(k: &Kernel<P>, task: u32, vpn: u32) -> FolioId {
    let e = k.m.pte(task, vpn);
    assert!(
        e & pte::PRESENT != 0,
        "task {task} page {vpn:#x} is not mapped ({e:#x})"
    );
    e & pte::PFN_MASK
}

fn cached<P: Policy>(k: &Kernel<P>, file: u32, index: u64) -> Option<FolioId> {
    match k.m.files[file as usize].slot(index) {
        Slot::Folio(id) => Some(id),
        _ => None,
    }
}

fn node<P: Policy>(k: &Kernel<P>, t: MemcgId, s: Stat) -> i64 {
    k.m.lruvec_state(t, 0, s)
}

fn vm<P: Policy>(k: &Kernel<P>, s: Stat) -> i64 {
    k.m.vmstat().get(s)
}

#[test]
fn op_stays_small() {
    assert!(std::mem::size_of::<Op>() <= 24, "{}", std::mem::size_of::<Op>());
}

#[test]
fn mmap_fixed_refuses_overlap_and_grows_the_page_tables() {
    let (mut k, _, task) = classic(1024, 0);
    ok(&mut k, anon(task, B + 10_000, 4));
    assert_eq!(k.m.mms[task as usize].pmds.len(), (10_000 + 3) / 512 + 1);
    let e = run(&mut k, anon(task, B + 10_003, 4)).unwrap_err();
    assert!(matches!(&e, AccessError::Fault(s) if s.contains("overlaps")), "{e}");
    ok(&mut k, anon(task, B, 4));
    assert_eq!(k.m.mms[task as usize].vmas.len(), 2);
    assert_eq!(ok(&mut k, store(task, B + 10_003)), Access::Minor);
    // the bump allocator continues above every fixed mapping
    let v = k.m.mmap(task, 1, vmf::WRITE, None);
    assert!(v >= B + 10_004);
}

#[test]
fn munmap_of_anon_splits_the_vma_frees_folios_and_releases_swap_slots() {
    let (mut k, t, task) = classic(1024, 64);
    ok(&mut k, anon(task, B, 8));
    for i in 0..8 {
        ok(&mut k, store(task, B + i));
    }
    // swap pages 4 and 5 out
    ok(&mut k, madv(task, B + 4, 2, Madv::PageOut));
    assert_eq!(k.m.pte(task, B + 4) & pte::SWAP, pte::SWAP);
    assert_eq!(k.m.mms[task as usize].swap_ents, 2);
    assert_eq!(k.m.swap.nr_free(), 62);
    let usage = pages(&k, t);
    let freed = mapped(&k, task, B + 3);
    ok(
        &mut k,
        Op::Munmap {
            task,
            vpn: B + 3,
            pages: 3,
        },
    );
    let mm = &k.m.mms[task as usize];
    assert_eq!(
        mm.vmas.iter().map(|v| (v.start, v.end)).collect::<Vec<_>>(),
        [(B, B + 3), (B + 6, B + 8)],
        "the middle of the VMA is cut out"
    );
    assert_eq!(mm.rss_anon, 5);
    assert_eq!(mm.swap_ents, 0);
    assert_eq!(k.m.swap.nr_free(), 64, "the swap entries released their slots");
    assert!(!k.m.folios[freed].test(pg::ALLOCATED), "the unmapped folio is freed");
    assert_eq!(node(&k, t, Stat::NrAnonPages), 5);
    assert_eq!(pages(&k, t), usage - 1);
    assert!(matches!(run(&mut k, load(task, B + 4)), Err(AccessError::Fault(_))));
    assert_eq!(ok(&mut k, load(task, B + 6)), Access::Hit);
    // unmapping everything frees the page table
    ok(
        &mut k,
        Op::Munmap {
            task,
            vpn: B,
            pages: 16,
        },
    );
    assert_eq!(k.m.ptes.live(), 0);
    assert_eq!(node(&k, t, Stat::NrAnonPages), 0);
    assert_eq!(pages(&k, t), 0);
}

#[test]
fn munmap_of_a_file_range_keeps_the_other_mapper_and_the_rmap() {
    let (mut k, t, a) = classic(1024, 0);
    let b = k.create_mm(t);
    let f = k.m.create_file("f", 16, Advice::Normal);
    ok(&mut k, fmap(a, B, 16, f, 0));
    ok(&mut k, fmap(b, B + 512, 4, f, 0));
    for i in 0..8 {
        ok(&mut k, load(a, B + i));
    }
    for i in 0..4 {
        ok(&mut k, load(b, B + 512 + i));
    }
    assert_eq!(node(&k, t, Stat::NrMapped), 8);
    ok(
        &mut k,
        Op::Munmap {
            task: a,
            vpn: B + 2,
            pages: 4,
        },
    );
    assert_eq!(k.m.mms[a as usize].rss_file, 4);
    assert_eq!(k.m.mms[b as usize].rss_file, 4);
    assert_eq!(node(&k, t, Stat::NrMapped), 6, "pages 2 and 3 are still mapped by b");
    assert_eq!(k.m.files[f as usize].nr_pages, 8, "the page cache keeps them");
    let tail = k.m.mms[a as usize].vmas[1];
    assert_eq!((tail.start, tail.pgoff), (B + 6, 6));
    // the rmap finds the mappers through the split VMA
    let id = cached(&k, f, 7).unwrap();
    assert_eq!(k.m.folio_referenced(id, None, true).ptes, 1);
    let id = cached(&k, f, 3).unwrap();
    assert_eq!(k.m.folios[id].mapcount, 1);
    assert_eq!(k.m.folio_referenced(id, None, true).ptes, 1);
    assert_eq!(k.m.pte(b, B + 515) & pte::YOUNG, 0, "b's accessed bit was cleared");
    ok(&mut k, load(a, B + 9));
    assert_eq!(k.m.files[f as usize].mappings.len(), 3);
    ok(&mut k, Op::Exit { task: a });
    assert_eq!(k.m.files[f as usize].mappings, [(b, B + 512)]);
}

#[test]
fn dontneed_then_load_is_a_zero_fill_minor_fault() {
    let (mut k, t, task) = classic(1024, 0);
    ok(&mut k, anon(task, B, 4));
    for i in 0..4 {
        ok(&mut k, store(task, B + i));
    }
    ok(&mut k, madv(task, B, 4, Madv::DontNeed));
    assert_eq!(k.m.mms[task as usize].vmas.len(), 1, "the VMA stays");
    assert_eq!(k.m.mms[task as usize].rss_anon, 0);
    assert_eq!(pages(&k, t), 0);
    let faults = vm(&k, Stat::Pgfault);
    assert_eq!(ok(&mut k, load(task, B + 1)), Access::Minor);
    assert_eq!(k.m.pte(task, B + 1) & pte::ZERO, pte::ZERO, "the zero page");
    assert_eq!(vm(&k, Stat::Pgfault), faults + 1);
    assert_eq!(pages(&k, t), 0);
    assert_eq!(ok(&mut k, store(task, B + 1)), Access::Minor);
    assert_eq!(pages(&k, t), 1);
    // the madvised range must be mapped
    assert!(matches!(
        run(&mut k, madv(task, B + 2, 4, Madv::DontNeed)),
        Err(AccessError::Fault(_))
    ));
}

#[test]
fn cold_deactivates_in_the_classic_lru() {
    let (mut k, t, task) = classic(1024, 0);
    let f = k.m.create_file("f", 4, Advice::Normal);
    // page 0 read twice (with another read between): active; page 1 once: inactive
    k.read_page(task, f, 0).unwrap();
    k.read_page(task, f, 1).unwrap();
    k.read_page(task, f, 0).unwrap();
    let (hot, cold) = (cached(&k, f, 0).unwrap(), cached(&k, f, 1).unwrap());
    assert!(k.m.folios[hot].test(pg::ACTIVE));
    ok(&mut k, fmap(task, B, 4, f, 0));
    ok(&mut k, load(task, B));
    ok(&mut k, load(task, B + 1));
    ok(&mut k, madv(task, B, 4, Madv::Cold));
    let fh = k.m.folios[hot];
    assert!(!fh.test(pg::ACTIVE) && !fh.test(pg::REFERENCED));
    assert!(fh.test(pg::WORKINGSET), "6.12: an active folio is marked workingset");
    assert!(!k.m.folios[cold].test(pg::REFERENCED));
    assert_eq!(k.m.pte(task, B) & pte::YOUNG, 0, "the accessed bits are cleared");
    assert_eq!(node(&k, t, Stat::NrActiveFile), 0);
    assert_eq!(node(&k, t, Stat::NrInactiveFile), 2);
    assert_eq!(vm(&k, Stat::Pgdeactivate), 1, "only the active folio counts");
    let _ = Lru::InactiveFile;
}

fn seq_of(k: &Kernel<Mglru>, id: FolioId) -> u64 {
    let f = k.m.folios[id];
    let gen = f.gen_counter() as usize - 1;
    let g = k.p.lrugen(f.memcg, f.node());
    (g.min_seq[f.lru_type()]..=g.max_seq)
        .find(|&s| gen_from_seq(s) == gen)
        .unwrap()
}

#[test]
fn cold_in_mglru_follows_each_profile() {
    for profile in [Profile::V6_1, Profile::V6_17] {
        let (mut k, t, task) = mglru(profile, 1024, 0);
        let f = k.m.create_file("f", 4, Advice::Normal);
        ok(&mut k, fmap(task, B, 4, f, 0));
        ok(&mut k, load(task, B));
        let id = mapped(&k, task, B);
        let g = k.p.lrugen(t, 0).clone();
        let hot = match profile {
            Profile::V6_1 => g.max_seq,
            _ => g.max_seq - 1,
        };
        assert_eq!(seq_of(&k, id), hot, "{profile:?}: faulted in hot");
        k.m.folios[id].set(pg::REFERENCED | pg::WORKINGSET);
        ok(&mut k, madv(task, B, 4, Madv::Cold));
        let fo = k.m.folios[id];
        assert!(!fo.test(pg::REFERENCED), "{profile:?}");
        let (min, max) = (g.min_seq[1], g.max_seq);
        let want = match profile {
            // 6.1/6.12: re-added inactive: min_seq, or min_seq + 1 with more than 3 gens
            Profile::V6_1 => {
                assert!(fo.test(pg::WORKINGSET), "6.1 keeps PG_workingset");
                if min + 2 >= max {
                    min
                } else {
                    min + 1
                }
            }
            // lru_gen_clear_refs forgets workingset too; placed max_seq - 3, clamped to min_seq
            _ => {
                assert!(!fo.test(pg::WORKINGSET));
                max.saturating_sub(3).max(min)
            }
        };
        assert_eq!(seq_of(&k, id), want, "{profile:?}");
        assert_eq!(vm(&k, Stat::Pgdeactivate), 1, "{profile:?}");
        // again: mainline leaves a folio already in the oldest generation alone, uncounted
        ok(&mut k, madv(task, B, 1, Madv::Cold));
        let again = if profile == Profile::V6_17 && want == min { 1 } else { 2 };
        assert_eq!(vm(&k, Stat::Pgdeactivate), again, "{profile:?}");
        // anon not in the swap cache is re-added to max_seq - 1 by every profile: COLD does not
        // make it the oldest
        ok(&mut k, anon(task, B + 512, 1));
        ok(&mut k, store(task, B + 512));
        let id = mapped(&k, task, B + 512);
        ok(&mut k, madv(task, B + 512, 1, Madv::Cold));
        assert_eq!(seq_of(&k, id), k.p.lrugen(t, 0).max_seq - 1, "{profile:?}");
        assert_eq!(vm(&k, Stat::Pgdeactivate), again + 1, "{profile:?}");
    }
}

fn pageout_reclaims_private_pages<P: Policy>(mut k: Kernel<P>, t: MemcgId, a: u32, label: &str) {
    let b = k.create_mm(t);
    let f = k.m.create_file("f", 8, Advice::Normal);
    ok(&mut k, fmap(a, B, 8, f, 0));
    ok(&mut k, fmap(b, B, 4, f, 0));
    for i in 0..8 {
        ok(&mut k, load(a, B + i));
    }
    for i in 0..4 {
        ok(&mut k, load(b, B + i));
    }
    ok(&mut k, anon(a, B + 512, 8));
    for i in 0..8 {
        ok(&mut k, store(a, B + 512 + i));
    }
    let work = k.m.work()[CTX_TASK].folios_scanned;
    let (pswpout, steal) = (vm(&k, Stat::Pswpout), vm(&k, Stat::PgstealDirect));
    let (pgpgout, deactivate) = (vm(&k, Stat::Pgpgout), vm(&k, Stat::Pgdeactivate));
    ok(&mut k, madv(a, B, 8, Madv::PageOut));
    ok(&mut k, madv(a, B + 512, 8, Madv::PageOut));
    for i in 0..4 {
        assert!(
            cached(&k, f, i).is_some(),
            "{label}: page {i} is shared with b: skipped"
        );
        assert_eq!(k.m.pte(a, B + i as u32) & pte::PRESENT, pte::PRESENT, "{label}");
    }
    for i in 4..8 {
        assert!(cached(&k, f, i).is_none(), "{label}: private page {i} is reclaimed");
        assert_eq!(k.m.pte(a, B + i as u32), pte::NONE, "{label}");
    }
    assert_eq!(
        vm(&k, Stat::Pswpout) - pswpout,
        8,
        "{label}: the anon pages are swapped out"
    );
    assert_eq!(k.m.mms[a as usize].rss_anon, 0, "{label}");
    assert_eq!(k.m.mms[a as usize].swap_ents, 8, "{label}");
    assert_eq!(
        vm(&k, Stat::Pgpgout) - pgpgout,
        8 * 4,
        "{label}: 4 KiB written per swapped page, none for the clean file pages"
    );
    assert_eq!(
        vm(&k, Stat::Pgdeactivate),
        deactivate,
        "{label}: PAGEOUT deactivates nothing"
    );
    assert_eq!(
        vm(&k, Stat::PgstealDirect),
        steal,
        "{label}: reclaim_pages counts no pgsteal"
    );
    assert_eq!(vm(&k, Stat::PgscanDirect), 0, "{label}");
    assert_eq!(
        k.m.work()[CTX_TASK].folios_scanned - work,
        12,
        "{label}: the reclaim work is the task's"
    );
    assert_eq!(node(&k, t, Stat::NrIsolatedAnon) + node(&k, t, Stat::NrIsolatedFile), 0);
    assert_eq!(ok(&mut k, load(a, B + 512)), Access::Major, "{label}: swapped in");
}

/// PAGEOUT of anon pages that cannot be swapped (no swap device): 6.1 clears the accessed bits
/// as COLD does, 6.12 and later leave them; either way `shrink_folio_list` keeps and activates
/// the folios (`pgactivate`), nothing counts `pgdeactivate` (PAGEOUT does not deactivate) and
/// `reclaim_pages` counts no `pgscan`/`pgsteal`. The folios go back on the LRU.
fn pageout_without_swap_activates<P: Policy>(mut k: Kernel<P>, t: MemcgId, task: u32, clears_young: bool, label: &str) {
    ok(&mut k, anon(task, B, 4));
    for i in 0..4 {
        ok(&mut k, store(task, B + i));
        assert_ne!(
            k.m.pte(task, B + i) & pte::YOUNG,
            0,
            "{label}: the fault leaves the PTE young"
        );
    }
    let activate = vm(&k, Stat::Pgactivate);
    ok(&mut k, madv(task, B, 4, Madv::PageOut));
    for i in 0..4 {
        let e = k.m.pte(task, B + i);
        assert_eq!(e & pte::PRESENT, pte::PRESENT, "{label}: page {i} stays mapped");
        let young = if clears_young { 0 } else { pte::YOUNG };
        assert_eq!(e & pte::YOUNG, young, "{label}: accessed bit of page {i}");
        let f = k.m.folios[e & pte::PFN_MASK];
        assert!(f.test(pg::LRU), "{label}: page {i} is put back");
        assert!(!f.test(pg::REFERENCED), "{label}");
    }
    assert_eq!(vm(&k, Stat::Pgactivate) - activate, 4, "{label}: kept and activated");
    assert_eq!(vm(&k, Stat::Pgdeactivate), 0, "{label}");
    assert_eq!(vm(&k, Stat::Pswpout) + vm(&k, Stat::Pgpgout), 0, "{label}");
    assert_eq!(vm(&k, Stat::PgscanDirect) + vm(&k, Stat::PgstealDirect), 0, "{label}");
    assert_eq!(node(&k, t, Stat::NrIsolatedAnon), 0, "{label}");
    assert_eq!(node(&k, t, Stat::NrAnonPages), 4, "{label}");
}

#[test]
fn pageout_without_swap_keeps_the_folios_per_profile() {
    let (k, t, task) = classic(1024, 0);
    pageout_without_swap_activates(k, t, task, false, "classic");
    for (profile, clears) in [(Profile::V6_1, true), (Profile::V6_17, false)] {
        let (k, t, task) = mglru(profile, 1024, 0);
        pageout_without_swap_activates(k, t, task, clears, profile.name());
    }
}

#[test]
fn pageout_reclaims_exactly_the_private_pages() {
    let (k, t, a) = classic(1024, 64);
    pageout_reclaims_private_pages(k, t, a, "classic");
    for profile in [Profile::V6_1, Profile::V6_17] {
        let (k, t, a) = mglru(profile, 1024, 64);
        pageout_reclaims_private_pages(k, t, a, profile.name());
    }
}

#[test]
fn sequential_and_random_advice_split_and_flag_the_vma() {
    let (mut k, _, task) = classic(1024, 0);
    ok(&mut k, anon(task, B, 16));
    ok(&mut k, madv(task, B + 4, 4, Madv::Sequential));
    let v = &k.m.mms[task as usize].vmas;
    assert_eq!(v.len(), 3);
    assert_eq!(v[1].flags & vmf::SEQ_READ, vmf::SEQ_READ);
    assert!(!v[1].has_recency() && v[0].has_recency() && v[2].has_recency());
    ok(&mut k, madv(task, B + 4, 4, Madv::Random));
    assert_eq!(
        k.m.mms[task as usize].vmas[1].flags & (vmf::SEQ_READ | vmf::RAND_READ),
        vmf::RAND_READ
    );
    ok(&mut k, madv(task, B, 16, Madv::Normal));
    assert!(k.m.mms[task as usize].vmas.iter().all(|v| v.has_recency()));
}

#[test]
fn hugepage_advice_splits_and_flags_the_vma() {
    // hugepage_madvise: MADV_HUGEPAGE and MADV_NOHUGEPAGE exclude each other, on a VMA of their
    // own (madvise_update_vma), and leave the other flags alone
    let (mut k, _, task) = classic(1024, 0);
    ok(&mut k, anon(task, B, 1024));
    ok(&mut k, madv(task, B + 512, 512, Madv::HugePage));
    let v = &k.m.mms[task as usize].vmas;
    assert_eq!(v.len(), 2);
    assert_eq!(
        (v[0].start, v[0].end, v[1].start, v[1].end),
        (B, B + 512, B + 512, B + 1024)
    );
    assert_eq!(v[0].flags & (vmf::HUGEPAGE | vmf::NOHUGEPAGE), 0);
    assert_eq!(v[1].flags & (vmf::HUGEPAGE | vmf::NOHUGEPAGE), vmf::HUGEPAGE);
    assert!(v[1].is_anon() && v[1].flags & vmf::WRITE != 0);
    ok(&mut k, madv(task, B, 1024, Madv::NoHugePage));
    for v in &k.m.mms[task as usize].vmas {
        assert_eq!(v.flags & (vmf::HUGEPAGE | vmf::NOHUGEPAGE), vmf::NOHUGEPAGE);
    }
    // the range must be mapped
    assert!(matches!(
        run(&mut k, madv(task, B + 1000, 100, Madv::HugePage)),
        Err(AccessError::Fault(e)) if e.contains("unmapped")
    ));
}

/// A parent with 4 stored anon pages and its forked child.
fn forked<P: Policy>(k: &mut Kernel<P>, t: MemcgId, parent: u32) -> u32 {
    ok(k, anon(parent, B, 4));
    for i in 0..4 {
        ok(k, store(parent, B + i));
    }
    let child = k.m.reserve_mm(t);
    assert!(matches!(run(k, load(child, B)), Err(AccessError::Fault(e)) if e.contains("not been forked")));
    ok(k, Op::Fork { task: parent, child });
    child
}

/// A copy-on-write fault is a fault like any other for the MMU: the store is retried and walks
/// the table, so the child's PMD entry is marked accessed, as x86 marks a non-leaf entry on every
/// walk (software writing the PTEs, as the fault did, does not).
#[test]
fn a_copy_on_write_fault_marks_the_pmd_entry_young() {
    let (mut k, t, parent) = classic(1024, 0);
    let child = forked(&mut k, t, parent);
    let pi = lrugen::mm::vm::MmStruct::pmd_index(B);
    k.m.mms[child as usize].pmds[pi] &= !lrugen::mm::vm::PMD_YOUNG;
    ok(&mut k, store(child, B));
    assert_ne!(mapped(&k, child, B), mapped(&k, parent, B), "copied");
    assert_ne!(k.m.mms[child as usize].pmds[pi] & lrugen::mm::vm::PMD_YOUNG, 0);
}

#[test]
fn fork_then_store_copies_on_write() {
    let (mut k, t, parent) = classic(1024, 0);
    let child = forked(&mut k, t, parent);
    let old = mapped(&k, parent, B);
    assert_eq!(mapped(&k, child, B), old);
    assert_eq!(k.m.folios[old].mapcount, 2);
    assert_eq!(k.m.pte(child, B) & pte::YOUNG, 0, "the child's copy is old");
    assert_eq!(k.m.mms[child as usize].rss_anon, 4);
    assert_eq!(node(&k, t, Stat::NrAnonPages), 4);
    let (usage, faults) = (pages(&k, t), vm(&k, Stat::Pgfault));
    assert_eq!(ok(&mut k, store(child, B)), Access::Minor);
    let new = mapped(&k, child, B);
    assert_ne!(new, old);
    assert_eq!(mapped(&k, parent, B), old, "the parent still sees the old folio");
    assert_eq!((k.m.folios[old].mapcount, k.m.folios[new].mapcount), (1, 1));
    assert_eq!(pages(&k, t), usage + 1);
    assert_eq!(vm(&k, Stat::Pgfault), faults + 1);
    assert_eq!(node(&k, t, Stat::NrAnonPages), 5);
    // the parent's store to a folio it alone maps now is no fault; to a shared one, a copy
    assert_eq!(ok(&mut k, store(parent, B)), Access::Hit);
    let shared = mapped(&k, parent, B + 1);
    assert_eq!(ok(&mut k, store(parent, B + 1)), Access::Minor);
    assert_eq!(mapped(&k, child, B + 1), shared);
    assert_eq!(k.m.folios[shared].mapcount, 1);
    // loads share
    assert_eq!(ok(&mut k, load(child, B + 2)), Access::Hit);
}

#[test]
fn exit_of_either_side_leaves_the_other_intact() {
    for child_exits in [true, false] {
        let (mut k, t, parent) = classic(1024, 0);
        let child = forked(&mut k, t, parent);
        let (gone, stays) = if child_exits { (child, parent) } else { (parent, child) };
        let ids: Vec<FolioId> = (0..4).map(|i| mapped(&k, stays, B + i)).collect();
        ok(&mut k, Op::Exit { task: gone });
        assert_eq!(pages(&k, t), 4, "no folio was freed");
        assert_eq!(node(&k, t, Stat::NrAnonPages), 4);
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(k.m.folios[id].mapcount, 1);
            assert_eq!(ok(&mut k, load(stays, B + i as u32)), Access::Hit);
            let mut mappers = vec![];
            k.m.rmap_walk(id, |mm, vpn, _| {
                mappers.push((mm, vpn));
                true
            });
            assert_eq!(mappers, [(stays, B + i as u32)]);
        }
        assert_eq!(ok(&mut k, store(stays, B)), Access::Hit, "no copy once exclusive");
        ok(&mut k, Op::Exit { task: stays });
        assert_eq!(pages(&k, t), 0);
    }
}

#[test]
fn fork_duplicates_swap_entries_and_releases_them() {
    let (mut k, t, parent) = classic(1024, 64);
    // one page per swap-in (`vm.page-cluster=0`); read-ahead: tests/swap_readahead.rs
    k.m.cfg.page_cluster = 0;
    ok(&mut k, anon(parent, B, 4));
    for i in 0..4 {
        ok(&mut k, store(parent, B + i));
    }
    ok(&mut k, madv(parent, B, 4, Madv::PageOut));
    let child = k.m.reserve_mm(t);
    ok(&mut k, Op::Fork { task: parent, child });
    let slot = k.m.pte(child, B) & pte::PFN_MASK;
    assert_eq!(k.m.pte(parent, B), pte::SWAP | slot);
    assert_eq!(k.m.swap.count(slot), 2);
    assert_eq!(k.m.mms[child as usize].swap_ents, 4);
    // the child swaps it in; the parent finds it in the swap cache and shares it
    assert_eq!(ok(&mut k, load(child, B)), Access::Major);
    assert_eq!(ok(&mut k, load(parent, B)), Access::Minor);
    let id = mapped(&k, parent, B);
    assert_eq!(mapped(&k, child, B), id);
    assert_eq!(k.m.folios[id].mapcount, 2);
    // a store from the child to a page whose slot the parent still holds copies it
    let (usage, free) = (pages(&k, t), k.m.swap.nr_free());
    assert_eq!(ok(&mut k, store(child, B + 1)), Access::Major);
    let copy = mapped(&k, child, B + 1);
    assert!(!k.m.folios[copy].test(pg::SWAPCACHE));
    assert_eq!(k.m.pte(parent, B + 1) & pte::SWAP, pte::SWAP);
    assert_eq!(pages(&k, t), usage + 2, "the swap-cache folio and the copy");
    assert_eq!(k.m.swap.nr_free(), free);
    ok(&mut k, Op::Exit { task: child });
    assert_eq!(k.m.swap.count(slot), 0, "the parent maps the page now");
    assert_eq!(k.m.mms[parent as usize].swap_ents, 3);
    ok(&mut k, Op::Exit { task: parent });
    assert_eq!(k.m.swap.nr_free(), 64, "every slot is released");
    assert_eq!(pages(&k, t), 0);
    assert_eq!(k.m.memcgs[t].swap_usage, 0);
}

#[test]
fn rmap_of_a_shared_anon_folio_finds_both_mappers() {
    let check = |mut k: Kernel<Mglru>, t: MemcgId, parent: u32| {
        let child = forked(&mut k, t, parent);
        ok(&mut k, load(child, B));
        let id = mapped(&k, parent, B);
        assert_eq!(k.m.folio_referenced(id, None, true).ptes, 2);
        assert_eq!(k.m.pte(parent, B) & pte::YOUNG, 0);
        assert_eq!(k.m.pte(child, B) & pte::YOUNG, 0);
        assert_eq!(k.m.folio_referenced(id, None, true).ptes, 0);
    };
    for profile in [Profile::V6_1, Profile::V6_17] {
        let (k, t, parent) = mglru(profile, 1024, 0);
        check(k, t, parent);
    }
}

#[test]
fn forked_children_join_the_mglru_mm_walk() {
    // a full reclaim run with a family whose pages were swapped and faulted back
    for profile in [Profile::V6_1, Profile::V6_17] {
        let (mut k, t, parent) = mglru(profile, 1024, 256);
        let child = forked(&mut k, t, parent);
        // room for 6 pages besides the two address spaces' kernel memory and the PTE table
        // that `B + 512` needs
        k.m.memcgs[t].max = kmem(&k, t) + 1 + 6;
        for i in 0..4 {
            ok(&mut k, load(child, B + i));
        }
        ok(&mut k, anon(child, B + 512, 16));
        for i in 0..16 {
            ok(&mut k, store(child, B + 512 + i));
        }
        assert!(k.m.memcgs[t].usage <= k.m.memcgs[t].max);
        assert!(pages(&k, t) <= 6);
        ok(&mut k, Op::Exit { task: parent });
        ok(&mut k, Op::Exit { task: child });
        assert_eq!(
            k.m.memcgs[t].usage,
            k.m.memcgs.stocked(t),
            "{profile:?}: stocked pages only"
        );
    }
}

// -------------------------------------------------------------------------------------------------
// Random op sequences on a tiny machine with swap: the invariants hold after every op
// -------------------------------------------------------------------------------------------------

const TASKS: u32 = 4;

/// An op from four random bytes: mostly by a live task (sometimes by a dead or unborn one), on
/// the six 16-page anon slots or the file window, forks into an unborn task (sometimes into a
/// born one, which must fail).
fn to_op(c: (u8, u8, u8, u8), tasks: &[u32], live: &[u32], unborn: &[u32], file: u32) -> Op {
    let (kind, a, b, len) = c;
    let task = match live {
        [] => tasks[a as usize % tasks.len()],
        _ if a % 8 == 7 => tasks[a as usize % tasks.len()],
        _ => live[a as usize % live.len()],
    };
    let slot = B + (b as u32 % 6) * 16;
    let off = len as u32 % 16;
    let vpn = slot + off;
    // weights out of 40: exits are rare so that families live long enough to matter
    match kind % 40 {
        0..=4 => anon(task, slot, if len % 4 == 0 { 1 + len as u32 % 16 } else { 16 }),
        5..=7 => fmap(
            task,
            B + 400 + (b as u32 % 4) * 16,
            1 + len as u32 % 16,
            file,
            len as u32 % 8,
        ),
        8..=10 => Op::Munmap {
            task,
            vpn,
            pages: 1 + (a as u32 % 20),
        },
        11..=15 => madv(
            task,
            vpn,
            1 + (a as u32 % (16 - off)),
            [
                Madv::DontNeed,
                Madv::Cold,
                Madv::PageOut,
                Madv::Sequential,
                Madv::Random,
                Madv::Normal,
            ][kind as usize % 6],
        ),
        16..=19 => Op::Fork {
            task,
            child: match unborn {
                [] => tasks[b as usize % tasks.len()],
                _ if b % 8 == 7 => tasks[b as usize % tasks.len()],
                _ => unborn[0],
            },
        },
        20 => Op::Exit { task },
        21..=30 => store(task, vpn),
        31..=34 => load(task, B + 400 + (b as u32 % 64)),
        _ => load(task, vpn),
    }
}

fn random_ops<P: Policy>(mut k: Kernel<P>, t: MemcgId, first: u32, ops: &[(u8, u8, u8, u8)]) {
    let file = k.m.create_file("f", 32, Advice::Normal);
    let mut tasks = vec![first];
    for _ in 1..TASKS {
        tasks.push(k.m.reserve_mm(t));
    }
    for &c in ops {
        let live: Vec<u32> = tasks.iter().copied().filter(|&x| k.m.mms[x as usize].alive).collect();
        let unborn: Vec<u32> = tasks.iter().copied().filter(|&x| k.m.mms[x as usize].unborn).collect();
        let op = to_op(c, &tasks, &live, &unborn, file);
        // errors (unmapped pages, overlaps, dead or unborn tasks) are part of the test
        let _ = run(&mut k, op);
    }
    for &task in &tasks {
        if k.m.mms[task as usize].alive {
            ok(&mut k, Op::Exit { task });
        }
    }
    assert_eq!(
        pages(&k, t),
        k.m.files[file as usize].nr_pages,
        "only page cache is left"
    );
    assert_eq!(k.m.swap.nr_free(), 64, "every swap slot is released");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_op_sequences_keep_the_invariants(
        ops in proptest::collection::vec(any::<(u8, u8, u8, u8)>(), 1..300),
        policy in 0u8..3,
    ) {
        match policy {
            0 => {
                let (mut k, t, task) = classic(256, 64);
                k.m.memcgs[t].max = 64;
                random_ops(k, t, task, &ops);
            }
            p => {
                let profile = if p == 1 { Profile::V6_1 } else { Profile::V6_17 };
                let (mut k, t, task) = mglru(profile, 256, 64);
                k.m.memcgs[t].max = 64;
                random_ops(k, t, task, &ops);
            }
        }
    }
}

/// Kernel memory charged over `memory.max` by an operation that charges no page after it (a
/// fork: the child's page tables, slab and other kernel memory, `KmemConfig::kernel`) is
/// reclaimed before the operation returns, as `try_charge_memcg` reclaims before a
/// `__GFP_ACCOUNT` allocation: the memcg ends at or under its limit, its clean page cache pays
/// for it, and `memory.events` `max` counts it. With nothing to reclaim (anon, no swap) the
/// memcg OOM-kills instead.
#[test]
fn kernel_memory_over_the_limit_is_reclaimed_before_the_op_returns() {
    let (mut k, t, parent) = classic(4096, 0);
    let f = k.m.create_file("f", 256, Advice::Normal);
    for index in 0..128 {
        ok(
            &mut k,
            Op::Read {
                task: parent,
                file: f,
                index,
            },
        );
    }
    // the limit at what is charged, the CPUs' stocks returned as a `memory.max` write returns them
    k.m.memcgs.drain_all_stock(t);
    k.m.memcgs[t].max = k.m.memcgs[t].usage;
    let (cached, kmem_before, max_events) = (k.m.files[f as usize].nr_pages, kmem(&k, t), k.m.memcgs[t].events.max);
    let child = k.m.reserve_mm(t);
    ok(&mut k, Op::Fork { task: parent, child });
    let charged = kmem(&k, t) - kmem_before;
    assert!(charged >= 14, "the child's kernel memory: {charged} pages");
    assert!(k.m.memcgs[t].usage <= k.m.memcgs[t].max);
    assert!(
        k.m.files[f as usize].nr_pages <= cached - charged,
        "page cache reclaimed to make room: {} of {cached} left for {charged} kernel pages",
        k.m.files[f as usize].nr_pages
    );
    assert!(k.m.memcgs[t].events.max > max_events);

    let (mut k, t, parent) = classic(4096, 0);
    ok(&mut k, anon(parent, B, 8));
    for i in 0..8 {
        ok(&mut k, store(parent, B + i));
    }
    k.m.memcgs.drain_all_stock(t);
    k.m.memcgs[t].max = k.m.memcgs[t].usage;
    let child = k.m.reserve_mm(t);
    ok(&mut k, Op::Fork { task: parent, child });
    // no swap: the memcg OOM-kills. The parent goes first (its badness ties with the child's,
    // which maps the same 8 pages, and the first found wins), but the child still maps its
    // pages, so that kill frees only the parent's kernel memory, less than the child's (its
    // task's stack and slab too: it was forked in the memcg); the child goes next.
    assert_eq!(k.m.memcgs[t].events.oom_kill, 2, "no swap: the memcg OOM-kills");
    assert!(!k.m.mms[parent as usize].alive && !k.m.mms[child as usize].alive);
    assert!(k.m.memcgs[t].usage <= k.m.memcgs[t].max);
}

/// A process forked inside its memcg is charged its task's kernel stack and slab on top of its
/// address space's (`KmemConfig::task_stack_pages`, `task_slab_bytes`; every task of the
/// multi-task fixtures shows 4 pages of `kernel_stack`), one created outside it (the one-task
/// replayer, forked by the guest's `/init` before it moves into the memcg) is not, and the exit
/// returns all of it.
#[test]
fn a_forked_process_is_charged_its_task_stack_and_slab_until_it_exits() {
    let (mut k, t, parent) = classic(4096, 0);
    let cfg = k.m.cfg.kmem;
    assert_eq!((cfg.task_stack_pages, cfg.task_slab_bytes), (4, 9_216));
    let slab = |k: &Kernel<Classic>| k.m.memcgs[t].slab_bytes;
    let (k0, s0) = (kmem(&k, t), slab(&k));
    let outside = k.m.create_mm(t);
    let (k1, s1) = (kmem(&k, t), slab(&k));
    let child = k.m.reserve_mm(t);
    ok(&mut k, Op::Fork { task: parent, child });
    let (k2, s2) = (kmem(&k, t), slab(&k));
    assert!(!k.m.mms[outside as usize].forked_in_memcg && k.m.mms[child as usize].forked_in_memcg);
    // the same address space's charges, plus the task's: 9 KiB more slab, 4 stack pages and
    // the 2-3 pages that slab takes
    assert_eq!((s2 - s1) - (s1 - s0), cfg.task_slab_bytes);
    let extra = (k2 - k1) - (k1 - k0);
    assert!(
        (4 + 2..=4 + 3).contains(&extra),
        "the task's kernel memory: {extra} pages"
    );
    // `kernel_stack` (bytes) and `nr_kernel_stack` (KiB) show the child's stack, not the
    // outside process's
    let stack = |k: &Kernel<Classic>| {
        let text = lrugen::mm::memory_stat::format(&k.m.memcg_stat(t), 4096, k.p.switches());
        let line = text
            .lines()
            .find(|l| l.starts_with("kernel_stack "))
            .unwrap()
            .to_string();
        (line, k.m.memcg_stat(t).get(Stat::NrKernelStackKb))
    };
    assert_eq!(stack(&k), ("kernel_stack 16384".to_string(), 16));
    ok(&mut k, Op::Exit { task: child });
    assert_eq!((kmem(&k, t), slab(&k)), (k1, s1), "the exit returns the child's all");
    assert_eq!(stack(&k), ("kernel_stack 0".to_string(), 0));
}

/// Under steady pressure the per-CPU charge stock stays empty (`KmemConfig::kernel`, 6.12 MGLRU,
/// traced on Debian 6.12 with kprobes on `page_counter_try_charge` and the return of
/// `try_to_free_mem_cgroup_pages`): a charge that fails reclaims 64 pages, and its retry charges
/// its page alone (`try_charge_memcg` keeps `batch = nr_pages` once lowered), so the next charges
/// find 63 pages of room, too few for a batch of 64. A retry that batched would stock 63 pages
/// after every reclaim.
#[test]
fn steady_pressure_leaves_the_charge_stock_empty() {
    let (mut k, t, task) = mglru(Profile::V6_12, 8192, 0);
    let f = k.m.create_file("f", 2048, Advice::Random);
    k.m.memcgs[t].max = k.m.memcgs[t].usage + 512;
    let mut reclaims_of_64 = 0;
    for i in 0..4096u64 {
        // memcg reclaim counts in memory.stat (in /proc/vmstat only from 7.2)
        let stolen = k.m.memcg_stat(t).get(Stat::PgstealDirect);
        ok(
            &mut k,
            Op::Read {
                task,
                file: f,
                index: (i * 7) % 2048,
            },
        );
        if k.m.memcg_stat(t).get(Stat::PgstealDirect) - stolen >= 64 {
            reclaims_of_64 += 1;
            assert_eq!(
                k.m.memcgs.stocked(t),
                0,
                "read {i}: a reclaim of 64 left a stocked batch"
            );
        }
    }
    assert!(reclaims_of_64 > 10, "{reclaims_of_64} reclaims of 64 pages");
}

// SPDX-License-Identifier: GPL-2.0-only
//! The classic active/inactive LRU, folio by folio: each test builds a tiny machine, drives a few
//! accesses and reclaim passes, and checks the flags, the list each folio is on (by walking the
//! lists), and the counters against what the kernel documents (`kernel-mglru.md` §15, and
//! `mm/swap.c`, `mm/vmscan.c`, `mm/workingset.c` of 6.12).

mod common;

use common::*;
use lrugen::kernel::{Access, AccessError};
use lrugen::mm::folio::pg;
use lrugen::mm::memcg::ROOT_MEMCG;
use lrugen::mm::node::{WMARK_HIGH, WMARK_MIN};
use lrugen::mm::pagecache::Slot;
use lrugen::mm::vm::{pte, vmf};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::Lru;
use lrugen::reclaim::classic::workingset::{self, Shadow};
use lrugen::reclaim::classic::{inactive_is_low_sizes, Classic, ScanBalance};
use lrugen::reclaim::vmscan::{shrink_node, try_to_free_mem_cgroup_pages};
use lrugen::reclaim::{FolioRef, Policy};

// -------------------------------------------------------------------------------------------------
// 1. folio_mark_accessed: a file page read twice is activated
// -------------------------------------------------------------------------------------------------

/// `folio_mark_accessed` (mm/swap.c): inactive+unreferenced → referenced; inactive+referenced →
/// activate (`pgactivate`), clear referenced, `workingset_activation`. `filemap_read` marks a folio
/// accessed only when the read does not continue on the folio of the previous read
/// (`pos_same_folio(iocb->ki_pos, ra->prev_pos - 1)`), so a second read must come after a read of
/// another page.
/// Whether `/proc/vmstat` counts memcg reclaim's `pgscan_*`/`pgsteal_*`/`pgrefill` (7.2's
/// `node_reclaim_stats`, on in `mainline`).
fn node_counts_memcg_reclaim(k: &K) -> bool {
    k.p.switches().node_reclaim_stats
}

#[test]
fn file_page_read_twice_is_activated() {
    let (mut k, t, task) = setup(1024, 0);
    let f = file(&mut k, "f", 16);
    let lv = k.m.lruvec(t, 0);

    assert_eq!(k.read_page(task, f, 3), Ok(Access::Major));
    let id = cached(&k, f, 3);
    assert_on(&k, id, Lru::InactiveFile);
    assert!(k.m.folios[id].test(pg::REFERENCED), "first access sets PG_referenced");
    assert!(!k.m.folios[id].test(pg::ACTIVE));

    // The same page again right away: filemap_read's same-folio rule skips folio_mark_accessed.
    assert_eq!(k.read_page(task, f, 3), Ok(Access::Hit));
    assert_on(&k, id, Lru::InactiveFile);
    assert_eq!(vm(&k, Stat::Pgactivate), 0);

    k.read_page(task, f, 4).unwrap();
    let age_before = (k.p.lruvecs[lv].nonresident_age, k.p.lruvecs[0].nonresident_age);
    assert_eq!(k.read_page(task, f, 3), Ok(Access::Hit));
    assert_on(&k, id, Lru::ActiveFile);
    assert!(k.m.folios[id].test(pg::ACTIVE));
    assert!(!k.m.folios[id].test(pg::REFERENCED), "activation clears PG_referenced");
    assert!(!k.m.folios[id].test(pg::WORKINGSET));
    assert_eq!(vm(&k, Stat::Pgactivate), 1);
    assert_eq!(mc(&k, t, Stat::Pgactivate), 1);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::NrActiveFile), 1);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::NrInactiveFile), 1);
    assert_eq!(vm(&k, Stat::NrActiveFile), 1);
    // workingset_activation ages the non-resident clock of the lruvec and its ancestors
    assert_eq!(
        (k.p.lruvecs[lv].nonresident_age, k.p.lruvecs[0].nonresident_age),
        (age_before.0 + 1, age_before.1 + 1)
    );

    // active+unreferenced → referenced; active+referenced → nothing more
    k.read_page(task, f, 4).unwrap();
    k.read_page(task, f, 3).unwrap();
    assert!(k.m.folios[id].test(pg::REFERENCED | pg::ACTIVE));
    k.read_page(task, f, 4).unwrap();
    k.read_page(task, f, 3).unwrap();
    assert_on(&k, id, Lru::ActiveFile);
    // page 4 was read three times: activated on the second
    assert_eq!(vm(&k, Stat::Pgactivate), 2);
    k.check().unwrap();
}

// -------------------------------------------------------------------------------------------------
// 2. An unmapped page read once is reclaimed from the inactive list
// -------------------------------------------------------------------------------------------------

/// Memcg limit reclaim of a page read once: `folio_check_references` sees PG_referenced without
/// PTE references → RECLAIM_CLEAN, the page is clean → freed. `__remove_mapping` leaves a shadow
/// entry packing the reclaim target's clock (`workingset_eviction`); memcg reclaim counts
/// `pgscan_direct`/`pgsteal_direct` for the memcg only (`cgroup_reclaim`), and the per-type
/// `pgscan_file`/`pgsteal_file` globally.
#[test]
fn page_read_once_is_reclaimed_by_memcg_reclaim() {
    let (mut k, t, task) = setup(1024, 0);
    let f = file(&mut k, "f", 8);
    k.read_page(task, f, 5).unwrap();
    let id = cached(&k, f, 5);
    assert_on(&k, id, Lru::InactiveFile);
    assert_eq!(vm(&k, Stat::NrFilePages), 1);
    assert_eq!(k.m.memcgs[t].usage, 1);
    let lv = k.m.lruvec(t, 0);
    let age = k.p.lruvecs[lv].nonresident_age;

    let reclaimed = try_to_free_mem_cgroup_pages(&mut k.m, &mut k.p, t, 1, true);
    assert_eq!(reclaimed, 1);

    match k.m.files[f as usize].slot(5) {
        Slot::Shadow(v) => {
            let s = Shadow::unpack(v);
            assert_eq!(s.memcg, t, "shadow names the reclaim target's lruvec");
            assert_eq!(s.node, 0);
            assert!(!s.workingset);
            assert_eq!(s.eviction, age >> k.p.bucket_order);
        }
        s => panic!("slot after eviction: {s:?}"),
    }
    assert_eq!(k.p.lruvecs[lv].nonresident_age, age + 1, "eviction ages the clock");
    assert!(!k.m.folios[id].test(pg::ALLOCATED), "the frame was freed");
    assert_eq!(k.m.files[f as usize].nr_pages, 0);
    assert_eq!(vm(&k, Stat::NrFilePages), 0);
    assert_eq!(mc(&k, t, Stat::NrFilePages), 0);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::NrInactiveFile), 0);
    assert_eq!(k.m.memcgs[t].usage, 0);
    assert_eq!(mc(&k, t, Stat::PgscanDirect), 1);
    assert_eq!(mc(&k, t, Stat::PgstealDirect), 1);
    // cgroup reclaim is global direct reclaim in /proc/vmstat only from 7.2 on
    // ("mm: move pgscan, pgsteal, pgrefill to node stats", switch `node_reclaim_stats`)
    let node = node_counts_memcg_reclaim(&k);
    assert_eq!(vm(&k, Stat::PgscanDirect), i64::from(node));
    assert_eq!(vm(&k, Stat::PgstealDirect), i64::from(node));
    assert_eq!(vm(&k, Stat::PgscanFile), 1);
    assert_eq!(vm(&k, Stat::PgstealFile), 1);
    assert_eq!(vm(&k, Stat::AllocstallNormal), 0);
    k.check().unwrap();

    // Reading it again is a refault (the shadow is found), counted on the memcg's lruvec.
    assert_eq!(k.read_page(task, f, 5), Ok(Access::Major));
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetRefaultFile), 1);
    assert_eq!(vm(&k, Stat::WorkingsetRefaultFile), 1);
}

/// A block device's page cache of filesystem metadata (`File::bdev_metadata`: the data disk's
/// ext4 blocks, `lrugen_kernel::data_disk_metadata_pages`) whose buffer heads a CPU's
/// buffer-head LRU holds (`File::buffers_in_bh_lru`): `filemap_release_folio` fails in
/// `shrink_folio_list` and reclaim activates the folio (`activate_locked`: `pgactivate`, the
/// active list) instead of freeing it, pass after pass; its inode is the block device's, made at
/// boot, so caching it charges the memcg the folio and no inode or dentry. A plain file's page
/// beside it is reclaimed as usual. Once `lru_add_drain_all` has invalidated the buffer-head
/// LRUs, reclaim frees it like any clean page-cache folio.
#[test]
fn a_held_metadata_folio_is_activated_until_its_buffers_are_released() {
    let mut k = kernel_kmem(1024, 0);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    let task = k.m.create_mm(t);
    let meta = file(&mut k, "vda (ext4 metadata)", 1);
    k.m.files[meta as usize].bdev_metadata = true;
    k.m.files[meta as usize].buffers_in_bh_lru = true;
    let f = file(&mut k, "f", 8);

    let slab = k.m.memcgs[t].slab_bytes;
    k.read_page(task, meta, 0).unwrap();
    let id = cached(&k, meta, 0);
    let nodes = k.m.files[meta as usize].xa_nodes();
    assert_eq!(
        k.m.memcgs[t].slab_bytes,
        slab + nodes * lrugen::mm::XA_NODE_BYTES,
        "its xarray nodes, no inode or dentry"
    );
    assert_eq!(
        k.m.files[meta as usize].kmem_memcg,
        Some(t),
        "its xarray is the memcg's"
    );
    k.read_page(task, f, 0).unwrap();
    assert!(
        k.m.memcgs[t].slab_bytes >= slab + k.m.cfg.kmem.file_slab_bytes,
        "a plain file's first page charges its inode and dentry"
    );
    let plain = cached(&k, f, 0);

    // reclaim everything: the plain page goes, the metadata page is activated and stays
    let reclaimed = try_to_free_mem_cgroup_pages(&mut k.m, &mut k.p, t, 2, true);
    assert_eq!(reclaimed, 1);
    assert!(!k.m.folios[plain].test(pg::ALLOCATED), "the plain page was freed");
    assert!(matches!(k.m.files[f as usize].slot(0), Slot::Shadow(_)));
    assert_on(&k, id, Lru::ActiveFile);
    assert_eq!(vm(&k, Stat::Pgactivate), 1);
    assert_eq!(mc(&k, t, Stat::Pgactivate), 1);
    assert_eq!(vm(&k, Stat::PgstealFile), 1);
    assert_eq!(k.m.files[meta as usize].nr_pages, 1);
    k.check().unwrap();

    // deactivated and scanned again, it is activated again, never freed
    for _ in 0..3 {
        try_to_free_mem_cgroup_pages(&mut k.m, &mut k.p, t, 1, true);
    }
    assert!(k.m.folios[id].test(pg::ALLOCATED));
    assert!(matches!(k.m.files[meta as usize].slot(0), Slot::Folio(x) if x == id));
    assert_eq!(vm(&k, Stat::PgstealFile), 1, "reclaim never frees it");
    assert!(vm(&k, Stat::Pgactivate) > 1, "each scan of it activates it");
    k.check().unwrap();

    // lru_add_drain_all drops the buffer-head LRU's references: the next reclaim frees it
    lrugen::reclaim::lru_add_drain_all(&mut k.m, &mut k.p);
    assert!(!k.m.files[meta as usize].buffers_in_bh_lru);
    let activated = vm(&k, Stat::Pgactivate);
    let mut passes = 0;
    while k.m.folios[id].test(pg::ALLOCATED) {
        assert!(passes < 4, "freed once its buffers are released");
        try_to_free_mem_cgroup_pages(&mut k.m, &mut k.p, t, 1, true);
        passes += 1;
    }
    // evicted as a clean page-cache folio: a shadow entry in its place
    let slot = k.m.files[meta as usize].slot(0);
    assert!(matches!(slot, Slot::Shadow(_)), "{slot:?}");
    assert_eq!(vm(&k, Stat::PgstealFile), 2);
    assert_eq!(vm(&k, Stat::Pgactivate), activated, "not activated again");
    assert_eq!(k.m.files[meta as usize].nr_pages, 0);
    k.check().unwrap();
}

/// The same page under kswapd (global) reclaim: `pgscan_kswapd`/`pgsteal_kswapd` count globally
/// and for the memcg, and the shadow names the root memcg (the reclaim target is NULL).
#[test]
fn page_read_once_is_reclaimed_by_kswapd() {
    let (mut k, t, task) = setup(1024, 0);
    let f = file(&mut k, "f", 8);
    k.read_page(task, f, 2).unwrap();
    let id = cached(&k, f, 2);
    let mut sc = sc_kswapd();
    sc.priority = 0; // one page: only priority 0 scans it (1 >> priority)
    shrink_node(&mut k.m, &mut k.p, 0, &mut sc);
    assert_eq!(sc.nr_reclaimed, 1);
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    assert!(!k.m.folios[id].test(pg::ALLOCATED));
    let Slot::Shadow(v) = k.m.files[f as usize].slot(2) else {
        panic!("no shadow")
    };
    assert_eq!(Shadow::unpack(v).memcg, ROOT_MEMCG);
    for s in [Stat::PgscanKswapd, Stat::PgstealKswapd] {
        assert_eq!(vm(&k, s), 1, "{}", s.name());
        assert_eq!(mc(&k, t, s), 1, "memcg {}", s.name());
    }
    assert_eq!(vm(&k, Stat::PgscanDirect), 0);
    assert_eq!(vm(&k, Stat::NrFilePages), 0);
}

/// `folio_activate` queues the folio in the per-CPU `lru_activate` batch (mm/swap.c,
/// `folio_batch_add_and_move`): it stays on the inactive list, `PG_referenced` already cleared,
/// until the batch drains; meanwhile the batch's reference makes `__remove_mapping` fail, so
/// reclaim that reaches it keeps it. The kernel's `shrink_inactive_list` drains the local CPU's
/// batches first, so on one CPU only another CPU's batch (or MGLRU's look-around during eviction)
/// is reached this way; the test isolates without the drain to see it. The drain then activates
/// it (`pgactivate`), and a full batch (31 from 6.12) moves at once.
#[test]
fn activation_waits_in_the_lru_activate_batch() {
    let (mut k, t, task) = setup(1024, 0);
    k.m.lru_cache_disabled = false;
    let f = file(&mut k, "f", 64);
    k.read_page(task, f, 3).unwrap();
    k.read_page(task, f, 4).unwrap();
    k.lru_add_drain();
    let (a, b) = (cached(&k, f, 3), cached(&k, f, 4));
    assert_eq!(k.read_page(task, f, 3), Ok(Access::Hit));
    assert_on(&k, a, Lru::InactiveFile);
    assert!(k.m.lru_activate.holds(a), "queued in lru_activate");
    assert!(
        !k.m.folios[a].test(pg::REFERENCED),
        "folio_mark_accessed clears it at once"
    );
    assert_eq!(vm(&k, Stat::Pgactivate), 0, "counted when the batch moves");

    // reclaim reaches both: the queued folio cannot be freed, the other is
    let (r, _) = scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_eq!(r, 1);
    assert!(matches!(k.m.files[f as usize].slot(4), Slot::Shadow(_)), "{b} evicted");
    assert_on(&k, a, Lru::InactiveFile);
    assert_eq!(mc(&k, t, Stat::PgstealDirect), 1);

    k.lru_add_drain();
    assert_on(&k, a, Lru::ActiveFile);
    assert!(!k.m.lru_activate.holds(a));
    assert_eq!(vm(&k, Stat::Pgactivate), 1);
    assert_eq!(mc(&k, t, Stat::Pgactivate), 1);

    // 31 activations fill the batch (FOLIO_BATCH_SIZE): the 31st moves all of them
    for i in 10..41 {
        k.read_page(task, f, i).unwrap();
    }
    k.lru_add_drain();
    for i in 10..40 {
        k.read_page(task, f, 41).unwrap();
        k.read_page(task, f, i).unwrap();
    }
    assert_eq!(k.m.lru_activate.folios().len(), 30);
    assert_eq!(vm(&k, Stat::Pgactivate), 1);
    k.read_page(task, f, 41).unwrap();
    k.read_page(task, f, 40).unwrap();
    assert!(k.m.lru_activate.folios().is_empty(), "the full batch moved");
    assert_eq!(vm(&k, Stat::Pgactivate), 32);
    for i in 10..41 {
        assert_on(&k, cached(&k, f, i), Lru::ActiveFile);
    }
    k.check().unwrap();
}

// -------------------------------------------------------------------------------------------------
// 3. folio_check_references on mapped pages
// -------------------------------------------------------------------------------------------------

/// Map `pages` pages of a new file into `task` with VMA flags `flags`; returns (file, first vpn).
fn map_file(k: &mut K, task: u32, pages: u32, flags: u32) -> (u32, u32) {
    let f = file(k, "mapped", pages as u64);
    let va = k.m.mmap(task, pages, flags, Some((f, 0)));
    (f, va)
}

/// Scan the whole inactive list of `lru`'s type of memcg `t` once, as memcg reclaim would.
fn scan_inactive(k: &mut K, t: u16, lru: Lru) -> (u64, lrugen::reclaim::ScanControl) {
    let mut sc = sc_memcg(t);
    let n = list_len(k, t, lru) as u64;
    let r = k.p.shrink_inactive_list(&mut k.m, t, 0, lru, n, &mut sc);
    (r, sc)
}

/// One young PTE and no PG_referenced → KEEP: the folio stays on the inactive list with
/// PG_referenced set and its PTE's young bit cleared. A second young reference → ACTIVATE. Without
/// one (PG_referenced set, PTE old) → RECLAIM_CLEAN: unmapped and reclaimed, being clean.
#[test]
fn mapped_page_one_young_pte_is_kept_then_activated() {
    let (mut k, t, task) = setup(1024, 0);
    let (_f, va) = map_file(&mut k, task, 8, 0);
    assert_eq!(k.access(task, va + 1, false), Ok(Access::Major));
    let id = mapped(&k, task, va + 1);
    assert_on(&k, id, Lru::InactiveFile);
    assert!(
        !k.m.folios[id].test(pg::REFERENCED),
        "a fault does not mark the folio accessed"
    );
    assert!(k.m.pte(task, va + 1) & pte::YOUNG != 0);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::NrMapped), 1);

    let (r, sc) = scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_eq!(r, 0);
    assert_eq!(sc.stat.nr_ref_keep, 1);
    assert_on(&k, id, Lru::InactiveFile);
    assert!(k.m.folios[id].test(pg::REFERENCED), "KEEP sets PG_referenced");
    assert!(
        k.m.pte(task, va + 1) & pte::YOUNG == 0,
        "the rmap walk cleared the young bit"
    );
    assert_eq!(k.m.folios[id].mapcount, 1);
    assert_eq!(vm(&k, Stat::Pgactivate), 0);
    assert_eq!(mc(&k, t, Stat::PgscanDirect), 1);
    assert_eq!(mc(&k, t, Stat::PgstealDirect), 0);

    // Touched again: young PTE + PG_referenced → ACTIVATE.
    assert_eq!(k.access(task, va + 1, false), Ok(Access::Hit));
    let (r, sc) = scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_eq!(r, 0);
    assert_eq!(sc.stat.nr_activate, [0, 1]);
    assert_on(&k, id, Lru::ActiveFile);
    assert!(k.m.folios[id].test(pg::REFERENCED | pg::ACTIVE));
    assert_eq!(vm(&k, Stat::Pgactivate), 1);
    assert_eq!(mc(&k, t, Stat::Pgactivate), 1);

    // A second mapped page touched once, then left alone: KEEP, then RECLAIM_CLEAN.
    k.access(task, va + 2, false).unwrap();
    let id2 = mapped(&k, task, va + 2);
    scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_on(&k, id2, Lru::InactiveFile);
    assert!(k.m.folios[id2].test(pg::REFERENCED));
    let (r, _) = scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_eq!(r, 1, "referenced, not young, clean: reclaimed");
    assert_eq!(k.m.pte(task, va + 2), pte::NONE, "unmapped");
    assert!(matches!(k.m.files[_f as usize].slot(2), Slot::Shadow(_)));
    assert_eq!(
        k.m.lruvec_state(t, 0, Stat::NrMapped),
        1,
        "only the active page is mapped"
    );
    assert_eq!(k.m.mms[task as usize].rss_file, 1);
    k.check().unwrap();
}

/// PG_referenced already set (a buffered read) plus a young PTE → ACTIVATE on the first scan.
#[test]
fn mapped_page_referenced_and_young_is_activated() {
    let (mut k, t, task) = setup(1024, 0);
    let (f, va) = map_file(&mut k, task, 8, 0);
    k.read_page(task, f, 4).unwrap();
    let id = cached(&k, f, 4);
    assert!(k.m.folios[id].test(pg::REFERENCED));
    assert_eq!(
        k.access(task, va + 4, false),
        Ok(Access::Minor),
        "found in the page cache"
    );
    assert_eq!(mapped(&k, task, va + 4), id);
    let (r, sc) = scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_eq!((r, sc.stat.nr_activate), (0, [0, 1]));
    assert_on(&k, id, Lru::ActiveFile);
    assert_eq!(vm(&k, Stat::Pgactivate), 1);
}

/// Two young PTEs (the page mapped by two processes) → ACTIVATE on the first scan
/// (`referenced_ptes > 1`: shared pages are protected).
#[test]
fn page_with_two_young_ptes_is_activated() {
    let (mut k, t, task) = setup(1024, 0);
    let task2 = k.m.create_mm(t);
    let f = file(&mut k, "shared", 8);
    let va1 = k.m.mmap(task, 8, 0, Some((f, 0)));
    let va2 = k.m.mmap(task2, 8, 0, Some((f, 0)));
    k.access(task, va1 + 3, false).unwrap();
    k.access(task2, va2 + 3, false).unwrap();
    let id = mapped(&k, task, va1 + 3);
    assert_eq!(mapped(&k, task2, va2 + 3), id);
    assert_eq!(k.m.folios[id].mapcount, 2);
    assert!(!k.m.folios[id].test(pg::REFERENCED));
    let (_, sc) = scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_eq!(sc.stat.nr_activate, [0, 1]);
    assert_on(&k, id, Lru::ActiveFile);
    assert!(k.m.pte(task, va1 + 3) & pte::YOUNG == 0 && k.m.pte(task2, va2 + 3) & pte::YOUNG == 0);
}

/// A young PTE in a `VM_EXEC` file mapping → ACTIVATE on the first scan; the same in an
/// executable *anon* mapping is only KEEP (the exec rule is for file folios).
#[test]
fn exec_file_page_is_activated_but_exec_anon_is_kept() {
    let (mut k, t, task) = setup(1024, 64);
    let (_f, va) = map_file(&mut k, task, 8, vmf::EXEC);
    k.access(task, va, false).unwrap();
    let id = mapped(&k, task, va);
    let (_, sc) = scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_eq!(sc.stat.nr_activate, [0, 1]);
    assert_on(&k, id, Lru::ActiveFile);

    let a = k.m.mmap(task, 4, vmf::EXEC | vmf::WRITE, None);
    k.access(task, a, true).unwrap();
    let aid = mapped(&k, task, a);
    assert_on(&k, aid, Lru::InactiveAnon);
    let (_, sc) = scan_inactive(&mut k, t, Lru::InactiveAnon);
    assert_eq!((sc.stat.nr_activate, sc.stat.nr_ref_keep), ([0, 0], 1));
    assert_on(&k, aid, Lru::InactiveAnon);
    assert!(k.m.folios[aid].test(pg::REFERENCED));
    k.check().unwrap();
}

/// The decisions themselves, straight from `check_references` (`folio_check_references`).
#[test]
fn check_references_decisions() {
    let (mut k, t, task) = setup(1024, 0);
    let sc = sc_memcg(t);
    // unmapped, read once (PG_referenced) → RECLAIM_CLEAN; the check cleared PG_referenced
    let f = file(&mut k, "f", 8);
    k.read_page(task, f, 0).unwrap();
    let id = cached(&k, f, 0);
    assert_eq!(k.p.check_references(&mut k.m, id, &sc), FolioRef::ReclaimClean);
    assert!(!k.m.folios[id].test(pg::REFERENCED));
    // now unreferenced and unmapped → RECLAIM
    assert_eq!(k.p.check_references(&mut k.m, id, &sc), FolioRef::Reclaim);
    // mapped young, unreferenced → KEEP, then young again → ACTIVATE
    let va = k.m.mmap(task, 8, 0, Some((f, 0)));
    k.access(task, va, false).unwrap();
    assert_eq!(k.p.check_references(&mut k.m, id, &sc), FolioRef::Keep);
    k.access(task, va, false).unwrap();
    assert_eq!(k.p.check_references(&mut k.m, id, &sc), FolioRef::Activate);
    // VM_LOCKED → ACTIVATE; PG_referenced is test-and-cleared before the VM_LOCKED check
    let lf = file(&mut k, "locked", 4);
    k.read_page(task, lf, 0).unwrap();
    let lva = k.m.mmap(task, 4, vmf::LOCKED, Some((lf, 0)));
    k.access(task, lva, false).unwrap();
    let lid = mapped(&k, task, lva);
    assert!(k.m.folios[lid].test(pg::MLOCKED | pg::REFERENCED));
    assert_on(&k, lid, Lru::Unevictable);
    assert_eq!(k.p.check_references(&mut k.m, lid, &sc), FolioRef::Activate);
    assert!(!k.m.folios[lid].test(pg::REFERENCED));
}

/// A referenced dirty file page is not reclaimed: reclaim does not write file pages, it tags the
/// folio PG_reclaim (`nr_vmscan_immediate_reclaim`) and activates it; the flusher it wakes cleans
/// it, and the end of that write rotates it (`folio_rotate_reclaimable` → `lru_move_tail`:
/// PG_active cleared, onto the inactive tail, `pgrotated`), so the next scan reclaims it first.
#[test]
fn referenced_dirty_file_page_is_not_reclaimed() {
    let (mut k, t, task) = setup(1024, 0);
    let f = file(&mut k, "f", 8);
    k.write_page(task, f, 1).unwrap();
    let id = cached(&k, f, 1);
    assert!(k.m.folios[id].test(pg::DIRTY | pg::REFERENCED));
    assert_eq!(vm(&k, Stat::NrDirty), 1);
    let (r, _) = scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_eq!(r, 0);
    assert!(k.m.folios[id].test(pg::ALLOCATED));
    assert_eq!(cached(&k, f, 1), id);
    assert_eq!(vm(&k, Stat::NrVmscanImmediateReclaim), 1);
    assert_eq!(vm(&k, Stat::Pgactivate), 1);
    // every isolated folio was dirty and unqueued: the flushers were woken and cleaned it, and
    // the write's end moved it from the active list to the inactive tail
    assert!(!k.m.folios[id].test(pg::DIRTY));
    assert!(!k.m.folios[id].test(pg::RECLAIM | pg::ACTIVE));
    assert_eq!(vm(&k, Stat::NrDirty), 0);
    assert_eq!(vm(&k, Stat::Pgrotated), 1);
    assert_on(&k, id, Lru::InactiveFile);
    k.check().unwrap();
    // a clean page read after it is younger: the next scan of one page takes the rotated one
    k.read_page(task, f, 2).unwrap();
    let id2 = cached(&k, f, 2);
    let mut sc = sc_memcg(t);
    let r = k.p.shrink_inactive_list(&mut k.m, t, 0, Lru::InactiveFile, 1, &mut sc);
    assert_eq!(r, 1);
    assert!(
        !matches!(k.m.files[f as usize].slot(1), Slot::Folio(_)),
        "the rotated page went first"
    );
    assert_eq!(cached(&k, f, 2), id2);
    k.check().unwrap();
}

// -------------------------------------------------------------------------------------------------
// 4. shrink_active_list
// -------------------------------------------------------------------------------------------------

/// Read pages `pages` of `f` twice each (interleaved, so each second read marks the folio
/// accessed): all end on the active list.
fn activate_by_reads(k: &mut K, task: u32, f: u32, pages: std::ops::Range<u64>) {
    for _ in 0..2 {
        for i in pages.clone() {
            k.read_page(task, f, i).unwrap();
        }
    }
}

/// `shrink_active_list` moves folios from the active to the inactive list, clearing PG_active and
/// setting PG_workingset; `pgdeactivate` counts them, `pgrefill` counts the scanned folios
/// (always for the memcg; globally for cgroup reclaim only from 7.2 on, `node_reclaim_stats`). Referenced non-exec mapped folios
/// are deactivated too, their young bits cleared.
#[test]
fn shrink_active_list_deactivates_with_workingset() {
    let (mut k, t, task) = setup(1024, 0);
    let f = file(&mut k, "f", 8);
    activate_by_reads(&mut k, task, f, 0..4);
    let va = k.m.mmap(task, 8, 0, Some((f, 0)));
    k.access(task, va + 2, false).unwrap(); // page 2 mapped with a young PTE
    let ids: Vec<_> = (0..4).map(|i| cached(&k, f, i)).collect();
    for &id in &ids {
        assert_on(&k, id, Lru::ActiveFile);
    }
    assert_eq!(vm(&k, Stat::Pgactivate), 4);

    // memcg reclaim: pgrefill for the memcg only
    let mut sc = sc_memcg(t);
    k.p.shrink_active_list(&mut k.m, t, 0, Lru::ActiveFile, 2, &mut sc);
    assert_eq!(list_len(&k, t, Lru::ActiveFile), 2);
    assert_eq!(list_len(&k, t, Lru::InactiveFile), 2);
    assert_eq!(mc(&k, t, Stat::Pgrefill), 2);
    let node = node_counts_memcg_reclaim(&k);
    assert_eq!(vm(&k, Stat::Pgrefill), if node { 2 } else { 0 });
    assert_eq!(vm(&k, Stat::Pgdeactivate), 2);
    assert_eq!(mc(&k, t, Stat::Pgdeactivate), 2);
    // the two oldest (tail) went: pages 0 and 1
    for &id in &ids[..2] {
        assert_on(&k, id, Lru::InactiveFile);
        assert!(k.m.folios[id].test(pg::WORKINGSET));
        assert!(!k.m.folios[id].test(pg::ACTIVE));
    }

    // global (kswapd) reclaim: pgrefill globally too; the young mapped page is deactivated anyway
    let mut sc = sc_kswapd();
    k.p.shrink_active_list(&mut k.m, t, 0, Lru::ActiveFile, 32, &mut sc);
    assert_eq!(vm(&k, Stat::Pgrefill), if node { 4 } else { 2 });
    assert_eq!(mc(&k, t, Stat::Pgrefill), 4);
    assert_eq!(vm(&k, Stat::Pgdeactivate), 4);
    for &id in &ids {
        assert_on(&k, id, Lru::InactiveFile);
        assert!(k.m.folios[id].test(pg::WORKINGSET));
    }
    assert_eq!(
        k.m.pte(task, va + 2) & pte::YOUNG,
        0,
        "folio_referenced cleared the young bit"
    );
    assert_eq!(k.m.lruvec_state(t, 0, Stat::NrActiveFile), 0);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::NrInactiveFile), 4);
    k.check().unwrap();
}

/// A referenced folio in a `VM_EXEC` file mapping rotates on the active list instead of being
/// deactivated (executable code gets a second trip), and counts as a rotation in `lru_note_cost`.
/// An exec page that is not referenced is deactivated as any other.
#[test]
fn shrink_active_list_rotates_referenced_exec_file_pages() {
    let (mut k, t, task) = setup(1024, 0);
    // some other file pages so that lru_note_cost's halving (cost > lru_size / 4) does not trigger
    let other = file(&mut k, "other", 64);
    for i in 0..64 {
        k.read_page(task, other, i).unwrap();
    }
    let (_f, va) = map_file(&mut k, task, 8, vmf::EXEC);
    k.access(task, va, false).unwrap();
    k.access(task, va + 1, false).unwrap();
    let (a, b) = (mapped(&k, task, va), mapped(&k, task, va + 1));
    // first inactive scan: exec + young → ACTIVATE (the 64 read-once pages are reclaimed)
    scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_on(&k, a, Lru::ActiveFile);
    assert_on(&k, b, Lru::ActiveFile);
    // only `a` is touched again
    k.access(task, va, false).unwrap();
    for i in 0..64 {
        k.read_page(task, other, i).unwrap();
    }
    let lv = k.m.lruvec(t, 0);
    let cost = (k.p.lruvecs[lv].file_cost, k.p.lruvecs[lv].anon_cost);
    let mut sc = sc_memcg(t);
    k.p.shrink_active_list(&mut k.m, t, 0, Lru::ActiveFile, 32, &mut sc);
    assert_on(&k, a, Lru::ActiveFile);
    assert!(!k.m.folios[a].test(pg::WORKINGSET));
    assert_on(&k, b, Lru::InactiveFile);
    assert!(k.m.folios[b].test(pg::WORKINGSET));
    assert_eq!(mc(&k, t, Stat::Pgrefill), 2);
    assert_eq!(vm(&k, Stat::Pgdeactivate), 1);
    assert_eq!(
        (k.p.lruvecs[lv].file_cost, k.p.lruvecs[lv].anon_cost),
        (cost.0 + 1, cost.1),
        "one rotated exec page costs 1 on the file side"
    );
    k.check().unwrap();
}

/// Anon folios are deactivated with PG_workingset as well.
#[test]
fn shrink_active_list_deactivates_anon() {
    let (mut k, t, task) = setup(1024, 64);
    let va = k.m.mmap(task, 4, vmf::WRITE, None);
    k.access(task, va, true).unwrap();
    let id = mapped(&k, task, va);
    scan_inactive(&mut k, t, Lru::InactiveAnon); // KEEP
    k.access(task, va, false).unwrap();
    scan_inactive(&mut k, t, Lru::InactiveAnon); // ACTIVATE
    assert_on(&k, id, Lru::ActiveAnon);
    let mut sc = sc_memcg(t);
    k.p.shrink_active_list(&mut k.m, t, 0, Lru::ActiveAnon, 32, &mut sc);
    assert_on(&k, id, Lru::InactiveAnon);
    assert!(k.m.folios[id].test(pg::WORKINGSET));
    assert_eq!(mc(&k, t, Stat::Pgdeactivate), 1);
    k.check().unwrap();
}

// -------------------------------------------------------------------------------------------------
// 5. Workingset refault detection
// -------------------------------------------------------------------------------------------------

/// A refault whose distance (evictions and activations since the page's eviction, on the
/// evicting lruvec's `nonresident_age`) is within the workingset size (here, no swap: the active
/// file list) is activated: `workingset_refault_file` and `workingset_activate_file`, PG_active,
/// the clock aged by one. A farther one only counts as a refault and lands on the inactive list.
#[test]
fn file_refault_within_workingset_size_is_activated() {
    let (mut k, t, task) = setup(1024, 0);
    assert_eq!(k.p.bucket_order, 0);
    assert_eq!(workingset::bucket_order(1024), 0);
    let hot = file(&mut k, "hot", 8);
    let cold = file(&mut k, "cold", 20);
    activate_by_reads(&mut k, task, hot, 0..8);
    for i in 0..20 {
        k.read_page(task, cold, i).unwrap();
    }
    assert_eq!(list_len(&k, t, Lru::ActiveFile), 8);
    let lv = k.m.lruvec(t, 0);
    let e0 = k.p.lruvecs[lv].nonresident_age;
    // evict the 20 cold pages, oldest first: cold[i] is evicted at clock e0 + i
    let (r, _) = scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_eq!(r, 20);
    for i in 0..20 {
        let Slot::Shadow(v) = k.m.files[cold as usize].slot(i) else {
            panic!("cold page {i} left no shadow")
        };
        assert_eq!(Shadow::unpack(v).eviction, e0 + i, "eviction clock of cold page {i}");
    }
    assert_eq!(k.p.lruvecs[lv].nonresident_age, e0 + 20);

    // the statistics flusher ran since: `workingset_test_recent` reads flushed list sizes
    k.m.flush_stats_now();
    // cold[12]: distance 20 - 12 = 8 = workingset size (8 active file pages) → activated
    assert_eq!(k.read_page(task, cold, 12), Ok(Access::Major));
    let id = cached(&k, cold, 12);
    assert_on(&k, id, Lru::ActiveFile);
    assert!(
        !k.m.folios[id].test(pg::WORKINGSET),
        "it was never active: not a restore"
    );
    assert_eq!(
        k.p.lruvecs[lv].nonresident_age,
        e0 + 21,
        "refault activation ages the clock"
    );
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetRefaultFile), 1);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetActivateFile), 1);
    assert_eq!(vm(&k, Stat::WorkingsetActivateFile), 1);
    assert_eq!(vm(&k, Stat::WorkingsetRestoreFile), 0);

    // cold[11]: distance 21 - 11 = 10 > 9 (the workingset grew by cold[12]) → inactive
    k.read_page(task, cold, 11).unwrap();
    let id = cached(&k, cold, 11);
    assert_on(&k, id, Lru::InactiveFile);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetRefaultFile), 2);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetActivateFile), 1);
    // cold[0]: distance 21 > 9 → inactive
    k.read_page(task, cold, 0).unwrap();
    assert_on(&k, cached(&k, cold, 0), Lru::InactiveFile);
    assert_eq!(vm(&k, Stat::WorkingsetRefaultFile), 3);
    assert_eq!(vm(&k, Stat::WorkingsetActivateFile), 1);
    assert_eq!(mc(&k, t, Stat::WorkingsetRefaultFile), 3);
    k.check().unwrap();
}

/// A page evicted with PG_workingset (it had been active, then deactivated) that refaults within
/// the workingset size is a restore: `workingset_restore_file`, PG_workingset on the new folio, and
/// `lru_note_cost_refault` charges one IO (SWAP_CLUSTER_MAX) to the file cost.
#[test]
fn file_refault_of_workingset_page_is_a_restore() {
    let (mut k, t, task) = setup(1024, 0);
    let bulk = file(&mut k, "bulk", 256);
    activate_by_reads(&mut k, task, bulk, 0..200); // a big active list: the workingset
    let f = file(&mut k, "ws", 4);
    activate_by_reads(&mut k, task, f, 0..2);
    let id = cached(&k, f, 0);
    assert_on(&k, id, Lru::ActiveFile);
    // deactivate everything: PG_workingset on all 202 pages
    let lv = k.m.lruvec(t, 0);
    let mut sc = sc_memcg(t);
    k.p.shrink_active_list(&mut k.m, t, 0, Lru::ActiveFile, 202, &mut sc);
    assert!(k.m.folios[id].test(pg::WORKINGSET));
    assert_eq!(list_len(&k, t, Lru::InactiveFile), 202);
    // reactivate the bulk so that the workingset size is large again, then evict the `ws` pages
    activate_by_reads(&mut k, task, bulk, 0..200);
    assert_eq!(list_len(&k, t, Lru::InactiveFile), 2);
    let (r, _) = scan_inactive(&mut k, t, Lru::InactiveFile);
    assert_eq!(r, 2, "deactivated pages have no PG_referenced: RECLAIM");
    let Slot::Shadow(v) = k.m.files[f as usize].slot(0) else {
        panic!("no shadow")
    };
    assert!(Shadow::unpack(v).workingset, "the shadow remembers PG_workingset");

    // the statistics flusher ran since: `workingset_test_recent` reads flushed list sizes
    k.m.flush_stats_now();
    let cost = (k.p.lruvecs[lv].file_cost, k.p.lruvecs[lv].anon_cost);
    k.read_page(task, f, 0).unwrap();
    let id = cached(&k, f, 0);
    assert_on(&k, id, Lru::ActiveFile);
    assert!(k.m.folios[id].test(pg::WORKINGSET));
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetRefaultFile), 1);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetActivateFile), 1);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetRestoreFile), 1);
    assert_eq!(vm(&k, Stat::WorkingsetRestoreFile), 1);
    // 201 LRU pages: 32 + cost stays below lru_size / 4 = 50, so no halving
    assert_eq!(
        (k.p.lruvecs[lv].file_cost, k.p.lruvecs[lv].anon_cost),
        (cost.0 + 32, cost.1)
    );
    k.check().unwrap();
}

/// Swap out `n` freshly stored anon pages of `task` in memcg `t`: the first scan finds them young
/// (KEEP), the second reclaims them (referenced anon without young PTEs → RECLAIM → swap-out).
fn swap_out_all(k: &mut K, t: u16) -> u64 {
    scan_inactive(k, t, Lru::InactiveAnon);
    let (r, _) = scan_inactive(k, t, Lru::InactiveAnon);
    r
}

/// Anon refault through the swap cache: within the workingset size (for an anon refault, the
/// whole file LRU plus the active anon list while swap is available) → activated, counting
/// `workingset_refault_anon` and `workingset_activate_anon`.
#[test]
fn anon_refault_within_workingset_size_is_activated() {
    let (mut k, t, task) = setup(1024, 256);
    // one page per swap-in (`vm.page-cluster=0`); read-ahead: tests/swap_readahead.rs
    k.m.cfg.page_cluster = 0;
    let ballast = file(&mut k, "ballast", 40);
    for i in 0..40 {
        k.read_page(task, ballast, i).unwrap(); // 40 inactive file pages
    }
    let va = k.m.mmap(task, 8, vmf::WRITE, None);
    for i in 0..8 {
        k.access(task, va + i, true).unwrap();
    }
    assert_eq!(list_len(&k, t, Lru::InactiveAnon), 8);
    assert_eq!(swap_out_all(&mut k, t), 8);
    assert_eq!(vm(&k, Stat::Pswpout), 8);
    assert_eq!(vm(&k, Stat::NrAnonPages), 0);
    assert_eq!(k.m.memcgs[t].swap_usage, 8);
    let e = k.m.pte(task, va + 3);
    assert!(e & pte::SWAP != 0, "the PTE holds a swap entry");
    let slot = e & pte::PFN_MASK;
    assert!(
        matches!(k.m.swap.cache_slot(slot), Slot::Shadow(_)),
        "the swap cache slot keeps a shadow"
    );

    // the statistics flusher ran since: `workingset_test_recent` reads flushed list sizes
    k.m.flush_stats_now();
    assert_eq!(k.access(task, va + 3, false), Ok(Access::Major));
    let id = mapped(&k, task, va + 3);
    assert_on(&k, id, Lru::ActiveAnon);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetRefaultAnon), 1);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetActivateAnon), 1);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetRestoreAnon), 0);
    assert_eq!(vm(&k, Stat::Pswpin), 1);
    assert_eq!(vm(&k, Stat::Pgmajfault), 1);
    assert_eq!(vm(&k, Stat::WorkingsetRefaultFile), 0);
    k.check().unwrap();
}

/// With no file pages and no active anon the workingset size is 0: an anon refault is not
/// activated.
#[test]
fn anon_refault_beyond_workingset_size_is_not_activated() {
    let (mut k, t, task) = setup(1024, 256);
    // one page per swap-in (`vm.page-cluster=0`); read-ahead: tests/swap_readahead.rs
    k.m.cfg.page_cluster = 0;
    let va = k.m.mmap(task, 8, vmf::WRITE, None);
    for i in 0..8 {
        k.access(task, va + i, true).unwrap();
    }
    assert_eq!(swap_out_all(&mut k, t), 8);
    k.access(task, va, false).unwrap();
    let id = mapped(&k, task, va);
    assert_on(&k, id, Lru::InactiveAnon);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetRefaultAnon), 1);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetActivateAnon), 0);
    k.check().unwrap();
}

/// An anon page that was active, deactivated (PG_workingset) and swapped out is restored on
/// refault: `workingset_restore_anon`, PG_workingset, one IO of anon cost.
#[test]
fn anon_refault_of_workingset_page_is_a_restore() {
    let (mut k, t, task) = setup(1024, 256);
    // 400 LRU pages, so that lru_note_cost's halving (costs > lru_size / 4) stays out of the way
    let ballast = file(&mut k, "ballast", 400);
    for i in 0..400 {
        k.read_page(task, ballast, i).unwrap();
    }
    let va = k.m.mmap(task, 4, vmf::WRITE, None);
    k.access(task, va, true).unwrap();
    let id = mapped(&k, task, va);
    scan_inactive(&mut k, t, Lru::InactiveAnon); // KEEP
    k.access(task, va, false).unwrap();
    scan_inactive(&mut k, t, Lru::InactiveAnon); // ACTIVATE
    assert_on(&k, id, Lru::ActiveAnon);
    let mut sc = sc_memcg(t);
    k.p.shrink_active_list(&mut k.m, t, 0, Lru::ActiveAnon, 32, &mut sc);
    assert!(k.m.folios[id].test(pg::WORKINGSET));
    assert_on(&k, id, Lru::InactiveAnon);
    // PG_referenced is still set from the activation and the PTE is old → RECLAIM
    let (r, _) = scan_inactive(&mut k, t, Lru::InactiveAnon);
    assert_eq!(r, 1);
    let lv = k.m.lruvec(t, 0);
    let cost = (k.p.lruvecs[lv].file_cost, k.p.lruvecs[lv].anon_cost);

    // the statistics flusher ran since: `workingset_test_recent` reads flushed list sizes
    k.m.flush_stats_now();
    k.access(task, va, false).unwrap();
    let id = mapped(&k, task, va);
    assert_on(&k, id, Lru::ActiveAnon);
    assert!(k.m.folios[id].test(pg::WORKINGSET));
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetRefaultAnon), 1);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetActivateAnon), 1);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetRestoreAnon), 1);
    assert_eq!(vm(&k, Stat::WorkingsetRestoreAnon), 1);
    assert_eq!(
        (k.p.lruvecs[lv].file_cost, k.p.lruvecs[lv].anon_cost),
        (cost.0, cost.1 + 32)
    );
    k.check().unwrap();
}

// -------------------------------------------------------------------------------------------------
// 6. get_scan_count
// -------------------------------------------------------------------------------------------------

/// A memcg `/t` holding 64 inactive anon and 64 inactive file pages, swap of `swap` pages.
fn scan_count_setup(swap: u64) -> (K, u16) {
    let (mut k, t, task) = setup(4096, swap);
    let va = k.m.mmap(task, 64, vmf::WRITE, None);
    for i in 0..64 {
        k.access(task, va + i, true).unwrap();
    }
    let f = file(&mut k, "f", 64);
    for i in 0..64 {
        k.read_page(task, f, i).unwrap();
    }
    assert_eq!(list_len(&k, t, Lru::InactiveAnon), 64);
    assert_eq!(list_len(&k, t, Lru::InactiveFile), 64);
    (k, t)
}

/// `get_scan_count` of `/t` with the given swappiness, priority and IO costs.
fn scan_count(
    k: &K,
    t: u16,
    target: Option<u16>,
    swappiness: u32,
    priority: i32,
    costs: (u64, u64),
) -> ([u64; 4], ScanBalance) {
    let mut sc = match target {
        Some(x) => sc_memcg(x),
        None => sc_kswapd(),
    };
    sc.swappiness = Some(swappiness);
    sc.priority = priority;
    sc.anon_cost = costs.0;
    sc.file_cost = costs.1;
    k.p.get_scan_count(&k.m, t, 0, &mut sc)
}

/// SCAN_FRACT: `total = anon_cost + file_cost; a = total + anon_cost; f = total + file_cost;
/// T = a + f; ap = swappiness * (T + 1) / (a + 1); fp = (200 - swappiness) * (T + 1) / (f + 1)`;
/// each list gets `(size >> priority) * fraction / (ap + fp)`. The lists here are 64 pages, priority
/// 1: 32 pages to split. The expected numbers are worked by hand below.
#[test]
fn get_scan_count_fractions_follow_swappiness_and_cost() {
    let (k, t) = scan_count_setup(1024);
    let cases: [(u32, (u64, u64), [u64; 4]); 6] = [
        // swappiness 60, anon_cost 10, file_cost 30: total 40, a 50, f 70, T 120;
        // ap = 60 * 121 / 51 = 142, fp = 140 * 121 / 71 = 238, denominator 380;
        // anon 32 * 142 / 380 = 11, file 32 * 238 / 380 = 20
        (60, (10, 30), [11, 0, 20, 0]),
        // swappiness 100: ap = 100 * 121 / 51 = 237, fp = 100 * 121 / 71 = 170, sum 407;
        // anon 32 * 237 / 407 = 18, file 32 * 170 / 407 = 13
        (100, (10, 30), [18, 0, 13, 0]),
        // swappiness 200: fp = 0, everything to anon: ap = 200 * 121 / 51 = 474; 32 * 474 / 474
        (200, (10, 30), [32, 0, 0, 0]),
        // no cost history: ap = 60, fp = 140; anon 32 * 60 / 200 = 9, file 32 * 140 / 200 = 22
        (60, (0, 0), [9, 0, 22, 0]),
        // expensive file refaults push pressure to anon: anon_cost 0, file_cost 100:
        // total 100, a 100, f 200, T 300; ap = 60 * 301 / 101 = 178, fp = 140 * 301 / 201 = 209;
        // anon 32 * 178 / 387 = 14, file 32 * 209 / 387 = 17
        (60, (0, 100), [14, 0, 17, 0]),
        // swappiness 100 with equal costs (1, 1):
        // total 2, a = f = 3, T 6; ap = fp = 100 * 7 / 4 = 175; 32 * 175 / 350 = 16 each
        (100, (1, 1), [16, 0, 16, 0]),
    ];
    for (swappiness, costs, want) in cases {
        for target in [Some(t), None] {
            let (nr, balance) = scan_count(&k, t, target, swappiness, 1, costs);
            assert_eq!(balance, ScanBalance::Fract, "swappiness {swappiness} costs {costs:?}");
            assert_eq!(nr, want, "swappiness {swappiness} costs {costs:?} target {target:?}");
        }
    }
}

/// The decisions before SCAN_FRACT: no swap or `!may_swap` → file only; memcg reclaim with
/// swappiness 0 → file only; priority 0 with swappiness > 0 → equal; `file_is_tiny` → anon only;
/// `cache_trim_mode` → file only. Global reclaim at swappiness 0 stays SCAN_FRACT, where anon
/// gets a fraction of 0 — even at priority 0.
#[test]
fn get_scan_count_balance_decisions() {
    let (mut k, t) = scan_count_setup(1024);
    assert_eq!(
        scan_count(&k, t, Some(t), 0, 1, (0, 0)),
        ([0, 0, 32, 0], ScanBalance::File)
    );
    assert_eq!(
        scan_count(&k, t, None, 0, 1, (0, 0)),
        ([0, 0, 32, 0], ScanBalance::Fract)
    );
    assert_eq!(
        scan_count(&k, t, None, 0, 0, (5, 5)),
        ([0, 0, 64, 0], ScanBalance::Fract)
    );
    assert_eq!(
        scan_count(&k, t, Some(t), 60, 0, (5, 5)),
        ([64, 0, 64, 0], ScanBalance::Equal)
    );
    assert_eq!(
        scan_count(&k, t, None, 200, 0, (5, 5)),
        ([64, 0, 64, 0], ScanBalance::Equal)
    );
    // size >> priority: 64 >> 12 = 0 at the first priority
    assert_eq!(scan_count(&k, t, Some(t), 60, 12, (0, 0)).0, [0; 4]);
    assert_eq!(scan_count(&k, t, Some(t), 60, 5, (0, 0)).0, [0, 0, 1, 0]); // 2 * 60/200, 2 * 140/200

    let mut sc = sc_memcg(t);
    sc.priority = 1;
    sc.may_swap = false;
    assert_eq!(
        k.p.get_scan_count(&k.m, t, 0, &mut sc),
        ([0, 0, 32, 0], ScanBalance::File)
    );
    let mut sc = sc_kswapd();
    sc.priority = 1;
    sc.file_is_tiny = true;
    assert_eq!(
        k.p.get_scan_count(&k.m, t, 0, &mut sc),
        ([32, 0, 0, 0], ScanBalance::Anon)
    );
    let mut sc = sc_kswapd();
    sc.priority = 1;
    sc.cache_trim_mode = true;
    assert_eq!(
        k.p.get_scan_count(&k.m, t, 0, &mut sc),
        ([0, 0, 32, 0], ScanBalance::File)
    );

    // memory.swap.max = 0: no swap for this memcg (can_reclaim_anon_pages) → file only
    k.m.memcgs[t].swap_max = 0;
    assert_eq!(scan_count(&k, t, Some(t), 100, 1, (0, 0)).1, ScanBalance::File);
    assert_eq!(scan_count(&k, t, None, 100, 0, (0, 0)).1, ScanBalance::File);

    // no swap device at all → file only
    let (k, t) = scan_count_setup(0);
    for target in [Some(t), None] {
        for (sw, prio) in [(60, 1), (200, 1), (100, 0)] {
            assert_eq!(scan_count(&k, t, target, sw, prio, (0, 0)).1, ScanBalance::File);
        }
    }
}

/// End to end: memcg reclaim at swappiness 0 leaves anon alone (no anon scanned, nothing swapped,
/// all anon resident) even with plenty of swap, while file pages are reclaimed.
#[test]
fn swappiness_zero_memcg_reclaim_never_swaps() {
    let (mut k, t, task) = setup(4096, 1024);
    k.m.memcgs[t].swappiness = 0;
    k.m.memcgs[t].max = 200;
    let va = k.m.mmap(task, 100, vmf::WRITE, None);
    for i in 0..100 {
        k.access(task, va + i, true).unwrap();
    }
    let f = file(&mut k, "f", 1000);
    for i in 0..1000 {
        k.read_page(task, f, i).unwrap();
        assert!(k.m.memcgs[t].usage <= 200);
    }
    assert!(mc(&k, t, Stat::PgstealDirect) >= 900);
    assert_eq!(vm(&k, Stat::PgscanAnon), 0);
    assert_eq!(vm(&k, Stat::Pswpout), 0);
    assert_eq!(k.m.memcgs[t].swap_usage, 0);
    assert_eq!(k.m.lruvec_state(t, 0, Stat::NrAnonPages), 100);
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    assert_accounting(&k);
}

// -------------------------------------------------------------------------------------------------
// inactive_is_low
// -------------------------------------------------------------------------------------------------

/// `inactive_is_low`: `ratio = gb ? int_sqrt(10 * gb) : 1`, low iff `inactive * ratio < active`
/// (the kernel's table: 10 MB → 1, 100 MB → 1, 1 GB → 3, 10 GB → 10, 100 GB → 31, 1 TB → 101,
/// 10 TB → 320). For each size, `active = ratio * inactive` is balanced and one more active page
/// tips it, with the total still in the same GB bucket.
#[test]
fn inactive_is_low_ratio_table() {
    const MB: u64 = 256; // pages
    const GB: u64 = 1024 * MB;
    for (total, ratio) in [
        (10 * MB, 1u64),
        (100 * MB, 1),
        (GB, 3),
        (10 * GB, 10),
        (100 * GB, 31),
        (1024 * GB, 101),
        (10 * 1024 * GB, 320),
    ] {
        // inactive = total / (ratio + 1) rounded up, so the sum lands in the total's GB bucket
        let inactive = total.div_ceil(ratio + 1);
        let active = ratio * inactive;
        assert_eq!(((inactive + active) >> 18), total >> 18, "bucket of {total} pages");
        assert!(
            !inactive_is_low_sizes(inactive, active),
            "{total} pages: ratio {ratio} is balanced"
        );
        assert!(
            inactive_is_low_sizes(inactive, active + 1),
            "{total} pages: one more active tips it"
        );
        if ratio > 1 {
            // a smaller ratio would have called it balanced; a larger one low already
            assert!((ratio - 1) * inactive < active && (ratio + 1) * inactive > active);
        }
    }
    // under 1 GB, equal sizes are balanced
    assert!(!inactive_is_low_sizes(100, 100));
    assert!(inactive_is_low_sizes(99, 100));
    assert!(!inactive_is_low_sizes(0, 0));
}

/// `Classic::inactive_is_low` reads the lruvec's (hierarchical) list sizes.
#[test]
fn inactive_is_low_reads_the_lruvec() {
    let (mut k, t, task) = setup(1024, 0);
    let f = file(&mut k, "f", 16);
    activate_by_reads(&mut k, task, f, 0..8);
    k.read_page(task, f, 8).unwrap();
    assert!(
        !Classic::inactive_is_low(&k.m, t, 0, true),
        "before a flush it reads the sizes of the last one (none)"
    );
    k.m.flush_stats_now();
    assert!(Classic::inactive_is_low(&k.m, t, 0, true), "1 inactive < 8 active");
    assert!(
        Classic::inactive_is_low(&k.m, ROOT_MEMCG, 0, true),
        "hierarchical at the root"
    );
    for i in 9..16 {
        k.read_page(task, f, i).unwrap();
    }
    k.m.flush_stats_now();
    assert!(!Classic::inactive_is_low(&k.m, t, 0, true), "8 inactive, 8 active");
    assert!(!Classic::inactive_is_low(&k.m, t, 0, false));
}

// -------------------------------------------------------------------------------------------------
// Watermarks and kswapd
// -------------------------------------------------------------------------------------------------

/// Global pressure: allocations that find the zone below its low watermark wake kswapd, which
/// (`balance_pgdat`, counting `pageoutrun`) reclaims until the zone is above its high watermark.
/// kswapd keeps up with a single reader, so no allocation stalls in direct reclaim and free
/// memory never goes below the min watermark.
#[test]
fn kswapd_restores_the_high_watermark() {
    let (mut k, t, task) = setup(4096, 0);
    // 16 MiB: min_free_kbytes = int_sqrt(16384 * 16) = 512 kB → min 128 pages;
    // delta = max(128 / 4, 4096 * 10 / 10000) = 32 → low 160, high 192
    let z = &k.m.nodes[0].zones[0];
    assert_eq!((z.wmark(WMARK_MIN), z.wmark(1), z.wmark(WMARK_HIGH)), (128, 160, 192));
    let f = file(&mut k, "big", 8192);
    let mut runs = 0;
    for i in 0..8192 {
        let before = vm(&k, Stat::Pageoutrun);
        k.read_page(task, f, i).unwrap();
        let free = k.m.nodes[0].free();
        assert!(free >= 128, "free {free} below the min watermark");
        if vm(&k, Stat::Pageoutrun) > before {
            runs += 1;
            // kswapd left the zone above high; this read then took one page
            assert!(free >= 192, "after kswapd ran free is {free}, below the high watermark");
        }
    }
    assert!(runs > 1, "kswapd ran {runs} times");
    assert_eq!(vm(&k, Stat::Pageoutrun), runs);
    assert!(vm(&k, Stat::PgscanKswapd) > 4000);
    assert!(vm(&k, Stat::PgstealKswapd) > 4000);
    assert_eq!(mc(&k, t, Stat::PgstealKswapd), vm(&k, Stat::PgstealKswapd));
    assert_eq!(vm(&k, Stat::PgscanDirect), 0);
    assert_eq!(vm(&k, Stat::AllocstallNormal), 0);
    assert_eq!(k.m.nodes[0].kswapd_failures, 0);
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    assert_accounting(&k);
}

/// Direct reclaim when kswapd is off: allocations below the min watermark stall in
/// `try_to_free_pages` (`allocstall_normal`, `pgscan_direct`/`pgsteal_direct` globally).
#[test]
fn direct_reclaim_without_kswapd() {
    let mut cfg = lrugen::mm::MachineConfig::simple(2048, 0);
    cfg.ra_pages = 0;
    cfg.kswapd = false;
    let mut m = lrugen::mm::Machine::new(cfg);
    m.debug_checks = true;
    let p = Classic::new(&m);
    let mut k = lrugen::kernel::Kernel::new(m, p);
    let task = k.m.create_mm(ROOT_MEMCG);
    let f = file(&mut k, "big", 4096);
    let min = k.m.nodes[0].zones[0].wmark(WMARK_MIN);
    for i in 0..4096 {
        k.read_page(task, f, i).unwrap();
        assert!(k.m.nodes[0].free() >= min);
    }
    assert!(vm(&k, Stat::AllocstallNormal) > 0);
    assert!(vm(&k, Stat::PgscanDirect) > 0);
    assert!(vm(&k, Stat::PgstealDirect) > 0);
    assert_eq!(vm(&k, Stat::PgscanKswapd), 0);
    k.check().unwrap();
}

/// `shrink_active_list`'s cost note when nothing rotated (unmapped file folios, all deactivated):
/// 6.12 skips the call (`if (nr_rotated)`); 7.2 takes the lruvec's lock for
/// `lru_note_cost_unlock_irq` after every pass, which then returns at once (switch
/// `lru_note_cost_skips_zero`). One `lru_lock` round more on 7.2, the costs untouched on both.
#[test]
fn shrink_active_list_takes_the_lock_for_a_zero_cost_only_on_7_2() {
    use lrugen::reclaim::mglru::Profile;
    for (profile, note_rounds) in [(Profile::V6_12, 0), (Profile::V7_2, 1)] {
        let (mut k, t, task) = setup(1024, 0);
        k.p = Classic::with_profile(&k.m, profile);
        let f = file(&mut k, "f", 8);
        activate_by_reads(&mut k, task, f, 0..4);
        let lv = k.m.lruvec(t, 0);
        let costs = |k: &K| (k.p.lruvecs[lv].anon_cost, k.p.lruvecs[lv].file_cost);
        let before = (k.m.work[k.m.ctx].lru_lock_rounds, costs(&k));
        let mut sc = sc_memcg(t);
        k.p.shrink_active_list(&mut k.m, t, 0, Lru::ActiveFile, 4, &mut sc);
        assert_eq!(
            list_len(&k, t, Lru::InactiveFile),
            4,
            "{}: all deactivated",
            profile.name()
        );
        // isolation and putback, then the note's hold on 7.2
        assert_eq!(
            k.m.work[k.m.ctx].lru_lock_rounds - before.0,
            2 + note_rounds,
            "{}",
            profile.name()
        );
        assert_eq!(costs(&k), before.1, "{}: no cost noted, none decayed", profile.name());
        k.check().unwrap();
    }
}

// -------------------------------------------------------------------------------------------------
// Memcg limits and protection
// -------------------------------------------------------------------------------------------------

/// A memcg at `memory.max` reclaims its own pages before charging more: usage never exceeds the
/// limit, `memory.events max` counts the hits, and the scans are memcg counts (and node counts
/// from 7.2 on, `node_reclaim_stats`).
#[test]
fn memcg_limit_reclaim_keeps_usage_under_max() {
    let (mut k, t, task) = setup(4096, 0);
    k.m.memcgs[t].max = 100;
    let f = file(&mut k, "f", 1000);
    for i in 0..1000 {
        k.read_page(task, f, i).unwrap();
        assert!(k.m.memcgs[t].usage <= 100, "usage {} at read {i}", k.m.memcgs[t].usage);
    }
    assert!(k.m.memcgs[t].events.max > 0);
    assert!(mc(&k, t, Stat::PgscanDirect) >= 900);
    assert!(mc(&k, t, Stat::PgstealDirect) >= 900);
    // limit reclaim counts as global direct reclaim only from 7.2 on (`node_reclaim_stats`)
    let node_scan = if node_counts_memcg_reclaim(&k) {
        mc(&k, t, Stat::PgscanDirect)
    } else {
        0
    };
    assert_eq!(vm(&k, Stat::PgscanDirect), node_scan);
    assert_eq!(vm(&k, Stat::PgscanKswapd), 0);
    assert_eq!(vm(&k, Stat::AllocstallNormal), 0);
    assert_eq!(vm(&k, Stat::Pageoutrun), 0);
    assert_eq!(vm(&k, Stat::PgstealFile), mc(&k, t, Stat::PgstealDirect));
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    assert_accounting(&k);
}

/// `memory.low`: under the parent's limit reclaim a sibling within its protection keeps its pages
/// while the other is reclaimed, and `memory.events low` stays 0 because protection never had to
/// be breached.
#[test]
fn memory_low_protects_a_sibling() {
    let mut k = kernel(4096, 0);
    let p = k.create_memcg(ROOT_MEMCG, "p");
    let a = k.create_memcg(p, "a");
    let b = k.create_memcg(p, "b");
    k.m.memcgs[p].max = 300;
    k.m.memcgs[a].low = 150;
    let (ta, tb) = (k.m.create_mm(a), k.m.create_mm(b));
    let fa = file(&mut k, "a", 100);
    let fb = file(&mut k, "b", 2000);
    for i in 0..100 {
        k.read_page(ta, fa, i).unwrap();
    }
    for i in 0..2000 {
        k.read_page(tb, fb, i).unwrap();
        assert!(k.m.memcgs[p].usage <= 300);
    }
    assert_eq!(k.m.memcgs[a].usage, 100, "the protected sibling kept every page");
    assert_eq!(k.m.files[fa as usize].nr_pages, 100);
    assert_eq!(mc(&k, a, Stat::PgscanDirect), 0);
    assert!(mc(&k, b, Stat::PgstealDirect) >= 1800);
    assert_eq!(k.m.memcgs[a].events.low, 0);
    assert!(k.m.memcgs[p].events.max > 0);
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    assert_accounting(&k);
}

/// When only protected memory is left, reclaim retries with `memcg_low_reclaim` and breaches the
/// protection, counting `memory.events low` on the protected memcg.
#[test]
fn memory_low_is_breached_when_nothing_else_is_left() {
    let mut k = kernel(4096, 0);
    let p = k.create_memcg(ROOT_MEMCG, "p");
    let a = k.create_memcg(p, "a");
    k.m.memcgs[p].max = 100;
    k.m.memcgs[a].low = 100;
    let ta = k.m.create_mm(a);
    let fa = file(&mut k, "a", 200);
    for i in 0..100 {
        k.read_page(ta, fa, i).unwrap();
    }
    assert_eq!(k.m.memcgs[a].events.low, 0);
    k.read_page(ta, fa, 100).unwrap();
    assert!(k.m.memcgs[a].events.low > 0);
    assert_eq!(k.m.memcgs.events_hierarchical(p).low, k.m.memcgs[a].events.low);
    assert!(k.m.memcgs[a].usage <= 100);
    assert!(mc(&k, a, Stat::PgstealDirect) > 0);
    k.check().unwrap();
}

// -------------------------------------------------------------------------------------------------
// OOM
// -------------------------------------------------------------------------------------------------

/// Anon memory with no swap cannot be reclaimed: a memcg that fills its `memory.max` with it
/// invokes the memcg OOM killer, which kills the task (`memory.events oom`/`oom_kill`, vmstat
/// `oom_kill`) and frees its memory.
#[test]
fn memcg_oom_kills_anon_task_without_swap() {
    let (mut k, t, task) = setup(4096, 0);
    k.m.memcgs[t].max = 50;
    let va = k.m.mmap(task, 100, vmf::WRITE, None);
    let mut stored = 0;
    let mut err = None;
    for i in 0..100 {
        match k.access(task, va + i, true) {
            Ok(_) => stored += 1,
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    assert_eq!(stored, 50);
    assert_eq!(err, Some(AccessError::Killed(task)));
    let ev = k.m.memcgs[t].events;
    assert_eq!(ev.oom, 1);
    assert_eq!(ev.oom_kill, 1);
    assert!(ev.max > 0);
    assert_eq!(vm(&k, Stat::OomKill), 1);
    assert_eq!(k.m.memcgs[t].usage, 0, "the victim's memory was freed");
    assert_eq!(vm(&k, Stat::NrAnonPages), 0);
    assert!(!k.m.mms[task as usize].alive);
    assert_eq!(k.access(task, va, false), Err(AccessError::Killed(task)));
    assert_eq!(vm(&k, Stat::Pswpout), 0);
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    assert_accounting(&k);
    k.check().unwrap();
}

/// `shrink_active_list` calls `lru_note_cost` only when it rotated something (`if (nr_rotated)`):
/// a pass that only deactivates must not decay the recorded IO costs.
#[test]
fn shrink_active_list_without_rotation_leaves_costs_alone() {
    let (mut k, t, task) = setup(1024, 0);
    let f = file(&mut k, "f", 8);
    activate_by_reads(&mut k, task, f, 0..8);
    let lv = k.m.lruvec(t, 0);
    // costs far above lru_size / 4 = 2: any lru_note_cost call would halve them
    for l in [lv, k.m.lruvec(ROOT_MEMCG, 0)] {
        k.p.lruvecs[l].anon_cost = 100;
        k.p.lruvecs[l].file_cost = 60;
    }
    let mut sc = sc_memcg(t);
    k.p.shrink_active_list(&mut k.m, t, 0, Lru::ActiveFile, 32, &mut sc);
    assert_eq!(vm(&k, Stat::Pgdeactivate), 8);
    for l in [lv, k.m.lruvec(ROOT_MEMCG, 0)] {
        assert_eq!((k.p.lruvecs[l].anon_cost, k.p.lruvecs[l].file_cost), (100, 60));
    }
}

// -------------------------------------------------------------------------------------------------
// shrink_lruvec
// -------------------------------------------------------------------------------------------------

/// Memcg and kswapd reclaim stop once `nr_to_reclaim` is met: `shrink_lruvec` stops the smaller
/// type, rescales the larger one to the same completed percentage, scans one more batch, and then
/// breaks because the smaller type's count is zero ("we only make one nudge towards
/// proportionality once we've got nr_to_reclaim"; 6.0's "fix extreme overreclaim and swap
/// floods"). Targets at priority 0 (SCAN_EQUAL): 512 inactive anon, 64 inactive file.
/// Batch 1: 32 anon + 32 file reclaimed (≥ 32) → file is smaller: percentage = 32 * 100 / 65 = 49,
/// anon rescaled to 512 * 51 / 100 - 32 = 229 left; batch 2: 32 anon; then stop.
#[test]
fn shrink_lruvec_stops_after_one_proportional_nudge() {
    let (mut k, t, task) = setup(4096, 2048);
    let va = k.m.mmap(task, 512, vmf::WRITE, None);
    for i in 0..512 {
        k.access(task, va + i, true).unwrap();
    }
    scan_inactive(&mut k, t, Lru::InactiveAnon); // all KEEP: referenced, PTEs old
    let f = file(&mut k, "f", 64);
    for i in 0..64 {
        k.read_page(task, f, i).unwrap();
    }
    let (scan_anon, scan_file) = (vm(&k, Stat::PgscanAnon), vm(&k, Stat::PgscanFile));
    let mut sc = sc_memcg(t);
    sc.priority = 0;
    sc.swappiness = Some(60);
    assert_eq!(
        k.p.get_scan_count(&k.m, t, 0, &mut sc.clone()),
        ([512, 0, 64, 0], ScanBalance::Equal)
    );
    k.p.shrink_lruvec(&mut k.m, t, 0, &mut sc);
    assert_eq!(vm(&k, Stat::PgscanFile) - scan_file, 32);
    assert_eq!(
        vm(&k, Stat::PgscanAnon) - scan_anon,
        64,
        "one batch of anon after the nudge"
    );
    assert_eq!(sc.nr_reclaimed, 96);
    assert_eq!(vm(&k, Stat::Pswpout), 64);
    k.check().unwrap();
}

// -------------------------------------------------------------------------------------------------
// Process exit
// -------------------------------------------------------------------------------------------------

/// Unmapping a young PTE of a file page marks the folio accessed (`zap_present_folio_ptes`:
/// `if (pte_young(ptent) && likely(vma_has_recency(vma))) folio_mark_accessed(folio)`), so the
/// pages a process used stay warm after it exits; `VM_RAND_READ` mappings have no recency.
#[test]
fn exit_marks_young_file_pages_accessed() {
    let (mut k, _t, task) = setup(1024, 0);
    let f = file(&mut k, "f", 8);
    let va = k.m.mmap(task, 8, 0, Some((f, 0)));
    let g = file(&mut k, "g", 8);
    let vb = k.m.mmap(task, 8, vmf::RAND_READ, Some((g, 0)));
    k.read_page(task, f, 1).unwrap(); // page 1 already PG_referenced
    for i in 0..3 {
        k.access(task, va + i, false).unwrap();
        k.access(task, vb + i, false).unwrap();
    }
    let (p0, p1, p2) = (cached(&k, f, 0), cached(&k, f, 1), cached(&k, f, 2));
    let q0 = cached(&k, g, 0);
    // page 2's PTE is old again (as after an rmap walk)
    *k.m.pte_mut(task, va + 2) &= !pte::YOUNG;
    assert!(!k.m.folios[p0].test(pg::REFERENCED));
    let activations = vm(&k, Stat::Pgactivate);
    k.exit(task);
    assert!(
        k.m.folios[p0].test(pg::REFERENCED),
        "young PTE zapped: folio_mark_accessed"
    );
    assert_on(&k, p0, Lru::InactiveFile);
    assert_on(&k, p1, Lru::ActiveFile);
    assert_eq!(vm(&k, Stat::Pgactivate), activations + 1);
    assert!(!k.m.folios[p2].test(pg::REFERENCED), "old PTE: no mark");
    assert!(
        !k.m.folios[q0].test(pg::REFERENCED),
        "no recency in VM_RAND_READ mappings"
    );
    assert_eq!(k.m.folios[p0].mapcount, 0);
    assert_eq!(vm(&k, Stat::NrMapped), 0);
    k.check().unwrap();
}

// -------------------------------------------------------------------------------------------------
// memory.low against deactivation
// -------------------------------------------------------------------------------------------------

/// `do_try_to_free_pages` retries a fruitless pass first with `force_deactivate` (an active list
/// was skipped because deactivation was not called for) and only then with `memcg_low_reclaim`:
/// protection is not breached while an unprotected sibling still has active pages to deactivate.
#[test]
fn memory_low_holds_while_a_sibling_can_deactivate() {
    let mut k = kernel(4096, 0);
    let p = k.create_memcg(ROOT_MEMCG, "p");
    let a = k.create_memcg(p, "a");
    let b = k.create_memcg(p, "b");
    k.m.memcgs[p].max = 200;
    k.m.memcgs[a].low = 100;
    let (ta, tb) = (k.m.create_mm(a), k.m.create_mm(b));
    let fa = file(&mut k, "a", 100);
    let fb = file(&mut k, "b", 200);
    for i in 0..100 {
        k.read_page(ta, fa, i).unwrap(); // A: 100 inactive, protected
    }
    activate_by_reads(&mut k, tb, fb, 0..100); // B: 100 active
    assert_eq!(k.m.memcgs[p].usage, 200);
    assert_eq!(list_len(&k, b, Lru::ActiveFile), 100);
    // p's inactive file list (100) is not low against its active one (100): no deactivation in the
    // first pass, so it skips B's active list and finds nothing to reclaim
    assert!(!Classic::inactive_is_low(&k.m, p, 0, true));
    k.read_page(tb, fb, 100).unwrap();
    assert_eq!(k.m.memcgs[a].events.low, 0, "protection was not breached");
    assert_eq!(k.m.memcgs[a].usage, 100);
    assert_eq!(mc(&k, a, Stat::PgscanDirect), 0);
    assert!(mc(&k, b, Stat::Pgdeactivate) > 0);
    assert!(mc(&k, b, Stat::PgstealDirect) > 0);
    k.check().unwrap();
}

// -------------------------------------------------------------------------------------------------
// prepare_scan_control and memcg-filtered references
// -------------------------------------------------------------------------------------------------

/// `prepare_scan_control`: deactivation of a type is allowed when its inactive list is low or
/// when `workingset_activate_*` moved since the last `snapshot_refaults` (a new working set is
/// forming); `cache_trim_mode` is on when `inactive_file >> priority` is non-zero and file is not
/// deactivating. (`may_deactivate` bits: 1 anon, 2 file.) Each step reads statistics flushed
/// just before (`prepare_node_reads_the_statistics_of_the_last_flush` shows when they are not).
#[test]
fn prepare_node_follows_refaults_and_inactive_ratio() {
    let (mut k, t, task) = setup(1024, 0);
    let f = file(&mut k, "f", 32);
    activate_by_reads(&mut k, task, f, 0..8);
    for i in 8..16 {
        k.read_page(task, f, i).unwrap();
    }
    let prep = |k: &mut K, priority: i32| {
        k.m.flush_stats_now();
        let mut sc = sc_memcg(t);
        sc.priority = priority;
        k.p.prepare_node(&mut k.m, 0, &mut sc);
        (sc.may_deactivate, sc.cache_trim_mode)
    };
    assert_eq!(prep(&mut k, 12), (0, false), "8 inactive vs 8 active, no refaults");
    assert_eq!(prep(&mut k, 3), (0, true), "8 >> 3 inactive file pages: trim the cache");

    // evict the inactive pages and refault one within the workingset: a refault activation
    scan_inactive(&mut k, t, Lru::InactiveFile);
    k.m.flush_stats_now();
    k.read_page(task, f, 15).unwrap();
    assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetActivateFile), 1);
    assert_eq!(prep(&mut k, 3).0 & 2, 2, "refaults since the snapshot: deactivate file");
    assert!(
        !prep(&mut k, 3).1,
        "no cache trimming while the file workingset changes"
    );
    k.p.snapshot_refaults(&k.m, t, 0);
    // now 9 active against 0 inactive: the inactive list is low
    assert_eq!(prep(&mut k, 3).0 & 2, 2, "inactive file is low");
    for i in 16..32 {
        k.read_page(task, f, i).unwrap();
    }
    assert_eq!(
        prep(&mut k, 3),
        (0, true),
        "16 inactive, 9 active, refaults snapshotted"
    );
}

/// `prepare_scan_control` reads `lruvec_page_state`, the totals of the last rstat flush: 6.1
/// flushes first once more than 64 updates are pending (`mem_cgroup_flush_stats`), 6.12 only when
/// the last flush is over 4 s old (`reclaim_ratelimited_stats_flush`), so a refault activation
/// shows there after the flush worker's next run (every 2 s).
#[test]
fn prepare_node_reads_the_statistics_of_the_last_flush() {
    use lrugen::mm::rstat::FLUSH_TIME_NS;
    use lrugen::reclaim::mglru::Profile;
    for profile in [Profile::V6_1, Profile::V6_12] {
        let (mut k, t, task) = setup(1024, 0);
        k.p = Classic::with_profile(&k.m, profile);
        let f = file(&mut k, "f", 32);
        activate_by_reads(&mut k, task, f, 0..8);
        for i in 8..16 {
            k.read_page(task, f, i).unwrap();
        }
        scan_inactive(&mut k, t, Lru::InactiveFile);
        for i in 16..32 {
            k.read_page(task, f, i).unwrap(); // 16 inactive against 8 active: not low
        }
        k.m.flush_stats_now();
        k.p.snapshot_refaults(&k.m, t, 0);
        k.read_page(task, f, 15).unwrap();
        assert_eq!(k.m.lruvec_state(t, 0, Stat::WorkingsetActivateFile), 1);
        let may_deactivate_file = |k: &mut K| {
            let mut sc = sc_memcg(t);
            k.p.prepare_node(&mut k.m, 0, &mut sc);
            sc.may_deactivate & 2 != 0
        };
        assert!(
            !may_deactivate_file(&mut k),
            "{}: a handful of updates pending: the refault is not seen yet",
            profile.label()
        );
        // 200 more updates (reads of a second file)
        let g = file(&mut k, "g", 100);
        for i in 0..100 {
            k.read_page(task, g, i).unwrap();
        }
        assert_eq!(
            may_deactivate_file(&mut k),
            profile == Profile::V6_1,
            "{}: 6.1 flushes once more than a batch is pending, 6.12 waits for the worker",
            profile.label()
        );
        k.m.now_ns += FLUSH_TIME_NS;
        k.m.flush_stats_periodic();
        assert!(may_deactivate_file(&mut k), "{}: after the worker ran", profile.label());
    }
}

/// Memcg reclaim only counts references from the target's own processes
/// (`invalid_folio_referenced_vma`): a page charged to A but mapped young by a task of B is
/// reclaimed (and unmapped from B) by A's limit reclaim, while global reclaim sees the young PTE.
#[test]
fn memcg_reclaim_ignores_references_from_other_memcgs() {
    for global in [false, true] {
        let mut k = kernel(1024, 0);
        let a = k.create_memcg(ROOT_MEMCG, "a");
        let b = k.create_memcg(ROOT_MEMCG, "b");
        let (ta, tb) = (k.m.create_mm(a), k.m.create_mm(b));
        let f = file(&mut k, "shared", 4);
        k.read_page(ta, f, 0).unwrap(); // charged to A, PG_referenced
        let vb = k.m.mmap(tb, 4, 0, Some((f, 0)));
        k.access(tb, vb, false).unwrap();
        let id = cached(&k, f, 0);
        assert_eq!((k.m.folios[id].memcg, k.m.folios[id].mapcount), (a, 1));
        let mut sc = if global { sc_kswapd() } else { sc_memcg(a) };
        let r = k.p.shrink_inactive_list(&mut k.m, a, 0, Lru::InactiveFile, 32, &mut sc);
        if global {
            assert_eq!(r, 0);
            assert_on(&k, id, Lru::ActiveFile); // PG_referenced + young PTE → ACTIVATE
        } else {
            assert_eq!(r, 1, "B's young PTE does not count for A's reclaim");
            assert_eq!(k.m.pte(tb, vb), pte::NONE);
            assert_eq!(k.m.mms[tb as usize].rss_file, 0);
            assert_eq!(k.m.memcgs[a].usage, 0);
        }
        k.check().unwrap();
    }
}

/// `do_swap_page` on a `SWP_SYNCHRONOUS_IO` device (zram): a page only one PTE references is read
/// around the swap cache and its slot freed at once, so reclaiming it again writes it again,
/// loaded or not. On other swap the loaded page stays in the swap cache with its slot, and
/// reclaiming it again (clean) writes nothing.
#[test]
fn a_zram_swap_in_frees_the_slot_and_the_next_reclaim_writes_again() {
    for zram in [false, true] {
        let mut k = common::kernel(1024, 256);
        // one page per swap-in (`vm.page-cluster=0`); read-ahead: tests/swap_readahead.rs
        k.m.cfg.page_cluster = 0;
        if zram {
            k.m.cfg.zram_ratio = Some(3.0);
        }
        let t = k.create_memcg(ROOT_MEMCG, "t");
        let task = k.m.create_mm(t);
        let va = k.m.mmap(task, 8, vmf::WRITE, None);
        for i in 0..8 {
            k.access(task, va + i, true).unwrap();
        }
        assert_eq!(swap_out_all(&mut k, t), 8);
        assert_eq!(vm(&k, Stat::Pswpout), 8);
        for i in 0..8 {
            assert_eq!(k.access(task, va + i, false), Ok(Access::Major), "zram {zram}");
        }
        let in_swap = k.m.swap.nr_slots - k.m.swap.nr_free();
        let swapcached = (0..8)
            .filter(|&i| k.m.folios[mapped(&k, task, va + i)].test(pg::SWAPCACHE))
            .count();
        assert_eq!(
            (in_swap, swapcached),
            if zram { (0, 0) } else { (8, 8) },
            "slots held and pages in the swap cache after the loads, zram {zram}"
        );
        // the pages are inactive and old again: a second reclaim
        assert_eq!(swap_out_all(&mut k, t), 8, "zram {zram}");
        assert_eq!(
            vm(&k, Stat::Pswpout),
            if zram { 16 } else { 8 },
            "zram writes them again; a clean swap-cache page is dropped"
        );
        k.check().unwrap();
    }
}

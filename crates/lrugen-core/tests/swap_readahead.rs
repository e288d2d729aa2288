// SPDX-License-Identifier: GPL-2.0-only
//! Swap read-ahead (`vm.page-cluster`), as `mm/swap_state.c` of 6.1, 6.12 and 7.2 does it: a swap
//! fault that misses the swap cache on a device that is not `SWP_SYNCHRONOUS_IO` reads a window
//! of neighbours with it, by virtual address (`swap_vma_readahead`, the VMA's
//! `swap_readahead_info`) or, with a rotational swap device on (`nr_rotate_swap`), by swap offset
//! (`swap_cluster_readahead`, the machine's `swapin_readahead_hits`); the window is sized by
//! `__swapin_nr_pages` from the read-ahead folios faults found since (`swap_ra_hit`). Each test
//! swaps a sequential anon region out with MADV_PAGEOUT (slots handed out in page order) and
//! faults it back, under both LRUs, with the invariant checker after every operation.

use lrugen::kernel::{Access, AccessError, Kernel};
use lrugen::mm::folio::{pg, FolioId};
use lrugen::mm::memcg::{MemcgId, ROOT_MEMCG};
use lrugen::mm::pagecache::Slot;
use lrugen::mm::vm::{pte, Madv, MMAP_BASE_VPN};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::{Mglru, Profile};
use lrugen::reclaim::Policy;
use lrugen::workload::Op;

mod common;

/// A PMD-aligned address: a window is never cut by the page table's end in these tests.
const B: u32 = MMAP_BASE_VPN;

fn machine(page_cluster: u32, rotational: bool) -> Machine {
    let mut cfg = MachineConfig::simple(8192, 2048);
    cfg.ra_pages = 0;
    cfg.page_cluster = page_cluster;
    cfg.swap_rotational = rotational;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    m
}

fn classic(page_cluster: u32, rotational: bool) -> (Kernel<Classic>, MemcgId, u32) {
    common::classic_on(machine(page_cluster, rotational))
}

fn mglru(profile: Profile, page_cluster: u32, rotational: bool) -> (Kernel<Mglru>, MemcgId, u32) {
    common::mglru_on(machine(page_cluster, rotational), profile)
}

/// Run `f` under the classic LRU and MGLRU of 6.1, 6.12 and 7.2.
fn each_policy(page_cluster: u32, rotational: bool, f: impl Fn(&mut dyn Probe, MemcgId, u32, &str)) {
    let (mut k, t, task) = classic(page_cluster, rotational);
    f(&mut k, t, task, "classic");
    for p in [Profile::V6_1, Profile::V6_12, Profile::V7_2] {
        let (mut k, t, task) = mglru(p, page_cluster, rotational);
        f(&mut k, t, task, &p.label());
    }
}

/// What the tests need of a kernel, whatever its policy.
trait Probe {
    fn op(&mut self, op: Op) -> Result<Access, AccessError>;
    fn m(&self) -> &Machine;
    fn m_mut(&mut self) -> &mut Machine;
    fn on_lru(&self, id: FolioId) -> bool;
    fn new_memcg(&mut self, name: &str) -> MemcgId;
    fn new_mm(&mut self, memcg: MemcgId) -> u32;
}

impl<P: Policy> Probe for Kernel<P> {
    #[track_caller]
    fn op(&mut self, op: Op) -> Result<Access, AccessError> {
        let r = self.step(op);
        self.check().unwrap_or_else(|e| panic!("after {op:?}: {e}"));
        r
    }
    fn m(&self) -> &Machine {
        &self.m
    }
    fn m_mut(&mut self) -> &mut Machine {
        &mut self.m
    }
    fn on_lru(&self, id: FolioId) -> bool {
        self.m.folios[id].test(pg::LRU)
    }
    fn new_memcg(&mut self, name: &str) -> MemcgId {
        self.create_memcg(ROOT_MEMCG, name)
    }
    fn new_mm(&mut self, memcg: MemcgId) -> u32 {
        self.create_mm(memcg)
    }
}

fn vm(k: &dyn Probe, s: Stat) -> i64 {
    k.m().vmstat().get(s)
}

/// Map `pages` of anon memory at `vpn`, store to each, and swap them all out (MADV_PAGEOUT): page
/// `vpn + i` goes to the next free slot, in order.
fn swapped_region(k: &mut dyn Probe, task: u32, vpn: u32, pages: u32) {
    k.op(common::anon_mmap(task, vpn, pages)).unwrap();
    for i in 0..pages {
        k.op(Op::Store { task, vpn: vpn + i }).unwrap();
    }
    let out = vm(k, Stat::Pswpout);
    k.op(Op::Madvise {
        task,
        vpn,
        pages,
        advice: Madv::PageOut,
    })
    .unwrap();
    assert_eq!(
        vm(k, Stat::Pswpout) - out,
        i64::from(pages),
        "the whole region swapped out"
    );
    for i in 0..pages {
        assert_ne!(k.m().pte(task, vpn + i) & pte::SWAP, 0);
    }
}

/// The counters a fault moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Io {
    pswpin: i64,
    swap_ra: i64,
    swap_ra_hit: i64,
    pgmajfault: i64,
}

fn io(k: &dyn Probe) -> Io {
    Io {
        pswpin: vm(k, Stat::Pswpin),
        swap_ra: vm(k, Stat::SwapRa),
        swap_ra_hit: vm(k, Stat::SwapRaHit),
        pgmajfault: vm(k, Stat::Pgmajfault),
    }
}

fn load(k: &mut dyn Probe, task: u32, vpn: u32) -> Access {
    k.op(Op::Load { task, vpn }).unwrap()
}

/// Whether `vpn` is read into the swap cache but not mapped (a read-ahead folio not used yet).
fn read_ahead(k: &dyn Probe, task: u32, vpn: u32) -> Option<FolioId> {
    let e = k.m().pte(task, vpn);
    assert_ne!(e & pte::SWAP, 0, "{vpn:#x} is still swapped out");
    match k.m().swap.cache_slot(e & pte::PFN_MASK) {
        Slot::Folio(id) => Some(id),
        _ => None,
    }
}

/// Load pages `from..64` of the region at `B`, then check the whole scan since `before`: each
/// of the 64 pages read once, in `majors` faults, every other page read ahead and used.
fn scan_to_the_end(k: &mut dyn Probe, task: u32, from: u32, before: Io, majors: i64, what: &str) {
    for i in from..64 {
        load(k, task, B + i);
    }
    let end = io(k);
    assert_eq!(end.pswpin - before.pswpin, 64, "{what}: every page read once");
    assert_eq!(end.pgmajfault - before.pgmajfault, majors, "{what}");
    assert_eq!(end.swap_ra - before.swap_ra, 64 - majors, "{what}");
    assert_eq!(
        end.swap_ra_hit - before.swap_ra_hit,
        64 - majors,
        "{what}: every page read ahead was used"
    );
}

/// VMA read-ahead on a sequential scan: the first fault reads a centred window of 8 (a new VMA
/// counts 4 hits: 4 + 2 rounded up), cut by the VMA's start; every page of it is then found in
/// the swap cache (`swap_ra_hit`), and each later fault, next to the last, reads 8 forward. 64
/// pages: faults at 0, 5, 13, ..., 61, the last window cut by the VMA's end.
#[test]
fn vma_readahead_reads_a_window_and_keeps_it_on_hits() {
    each_policy(3, false, |k, _t, task, tag| {
        swapped_region(k, task, B, 64);
        let refaults = vm(k, Stat::WorkingsetRefaultAnon);
        let before = io(k);
        assert_eq!(load(k, task, B), Access::Major, "{tag}");
        let d = io(k);
        // left = fault - 3 (clamped to the VMA), right = left + 8: pages 0..5
        assert_eq!(
            (
                d.pswpin - before.pswpin,
                d.swap_ra - before.swap_ra,
                d.pgmajfault - before.pgmajfault
            ),
            (5, 4, 1),
            "{tag}"
        );
        // a read-ahead folio: in the swap cache, on the LRU (lru_add_drain), PG_readahead,
        // unmapped, charged; a refault of its own when read (workingset_refault in
        // __read_swap_cache_async), not when touched
        assert_eq!(vm(k, Stat::WorkingsetRefaultAnon) - refaults, 5, "{tag}");
        for i in 1..5 {
            let id = read_ahead(k, task, B + i).unwrap_or_else(|| panic!("{tag}: page {i} read ahead"));
            let f = k.m().folios[id];
            assert!(
                f.test(pg::READAHEAD) && f.test(pg::SWAPCACHE) && k.on_lru(id),
                "{tag}: {i}"
            );
            assert_eq!(f.mapcount, 0, "{tag}");
        }
        assert_eq!(read_ahead(k, task, B + 5), None, "{tag}");
        assert_eq!(k.m().mms[task as usize].vmas[0].swap_ra.win, 8, "{tag}");
        for i in 1..5 {
            assert_eq!(load(k, task, B + i), Access::Minor, "{tag}");
            assert!(!k.m().folios[k.m().pte(task, B + i) & pte::PFN_MASK].test(pg::READAHEAD));
        }
        let ra = k.m().mms[task as usize].vmas[0].swap_ra;
        assert_eq!((ra.vpn, ra.win, ra.hits), (B + 4, 8, 4), "{tag}");
        assert_eq!(io(k).swap_ra_hit - before.swap_ra_hit, 4, "{tag}");
        // the rest of the scan: a fault next to the last one reads forward
        scan_to_the_end(k, task, 5, before, 9, &format!("{tag}: faults at 0, 5, 13, ..., 61"));
        assert_eq!(vm(k, Stat::Pgpgin), 4 * 64, "{tag}: pgpgin counts KiB read ahead too");
    });
}

/// The window shrinks by halves when faults are scattered and find no read-ahead folio: 8 at a
/// VMA's first fault, then 4, 2, 1 (`prev_win / 2` floors it); a fault next to the last one with
/// no hits reads 2 again.
#[test]
fn vma_readahead_shrinks_by_halves_without_hits() {
    each_policy(3, false, |k, _t, task, tag| {
        swapped_region(k, task, B, 256);
        let mut reads = vec![];
        for vpn in [100, 200, 50, 150, 151] {
            let before = io(k);
            assert_eq!(load(k, task, B + vpn), Access::Major, "{tag}");
            let d = io(k);
            reads.push((d.pswpin - before.pswpin, k.m().mms[task as usize].vmas[0].swap_ra.win));
        }
        assert_eq!(reads, [(8, 8), (4, 4), (2, 2), (1, 1), (2, 2)], "{tag}");
        // where: centred on 100 (97..105), on 200 (199..203), on 50 (50, 51); forward from 151
        for vpn in [97, 98, 99, 101, 102, 103, 104, 199, 201, 202, 51, 152] {
            assert!(read_ahead(k, task, B + vpn).is_some(), "{tag}: page {vpn}");
        }
        for vpn in [96, 105, 198, 203, 49, 52, 149, 153] {
            assert_eq!(read_ahead(k, task, B + vpn), None, "{tag}: page {vpn}");
        }
        assert_eq!(vm(k, Stat::SwapRaHit), 0, "{tag}");
    });
}

/// `page-cluster` 0 reads the faulting page only (`max_win == 1`), as the model always did: one
/// `pswpin` per `pgmajfault`, no `swap_ra`; 5 caps the window at 32 (`SWAP_RA_ORDER_CEILING`),
/// however large `page-cluster` is.
#[test]
fn page_cluster_zero_reads_one_page_and_the_vma_window_stops_at_32() {
    each_policy(0, false, |k, _t, task, tag| {
        swapped_region(k, task, B, 64);
        for i in 0..64 {
            assert_eq!(load(k, task, B + i), Access::Major, "{tag}");
        }
        let d = io(k);
        assert_eq!(
            (d.pswpin, d.pgmajfault, d.swap_ra, d.swap_ra_hit),
            (64, 64, 0, 0),
            "{tag}"
        );
    });
    each_policy(10, false, |k, _t, task, tag| {
        swapped_region(k, task, B, 512);
        // a first fault: 4 hits make 8; then forward with 8 hits: 16; with 15: 32 (the ceiling)
        let mut wins = vec![];
        let mut vpn = 256;
        for _ in 0..4 {
            assert_eq!(load(k, task, B + vpn), Access::Major, "{tag}");
            let win = k.m().mms[task as usize].vmas[0].swap_ra.win;
            wins.push(win);
            let mut next = vpn + 1;
            while read_ahead(k, task, B + next).is_some() {
                load(k, task, B + next);
                next += 1;
            }
            vpn = next;
        }
        assert_eq!(wins, [8, 8, 16, 32], "{tag}");
    });
}

/// A rotational swap device turns VMA read-ahead off (`nr_rotate_swap`): the window is an
/// aligned cluster of swap offsets (offset = slot + 1, offset 0 being the swap header), sized from
/// the machine-wide hits. The first fault, at offset 1: 8 pages, offsets 1..7 (the header
/// skipped); the next at offset 8 with 6 hits: offsets 8..15.
#[test]
fn cluster_readahead_reads_aligned_swap_offsets() {
    each_policy(3, true, |k, _t, task, tag| {
        swapped_region(k, task, B, 64);
        let before = io(k);
        assert_eq!(load(k, task, B), Access::Major, "{tag}");
        assert_eq!(io(k).pswpin - before.pswpin, 7, "{tag}: offsets 1..7");
        assert_eq!(k.m().swap.ra.hits, 0, "{tag}");
        assert_eq!(k.m().swap.ra.last_pages, 8, "{tag}");
        for i in 1..7 {
            assert_eq!(load(k, task, B + i), Access::Minor, "{tag}");
        }
        assert_eq!(k.m().swap.ra.hits, 6, "{tag}: hits are the machine's, not the VMA's");
        assert_eq!(
            k.m().mms[task as usize].vmas[0].swap_ra.hits,
            4,
            "{tag}: the VMA's untouched"
        );
        assert_eq!(load(k, task, B + 7), Access::Major, "{tag}");
        assert_eq!(io(k).pswpin - before.pswpin, 15, "{tag}: offsets 8..15");
        scan_to_the_end(k, task, 8, before, 9, &format!("{tag}: faults at 0, 7, 15, ..., 63"));
    });
}

/// Read-ahead by swap offset reads whatever the neighbouring slots hold: another memcg's pages.
/// Each is charged to the memcg its swap entry records (`mem_cgroup_swapin_charge_folio`), sits
/// on that memcg's LRU unmapped until its owner faults on it, and then it is a swap-cache hit
/// (minor fault, `swap_ra_hit`) mapped at the owner's page.
#[test]
fn cluster_readahead_charges_each_page_to_its_entrys_memcg() {
    each_policy(3, true, |k, t, task, tag| {
        swapped_region(k, task, B, 3);
        // a second task in memcg u, its pages in the next slots (3..7, offsets 4..8)
        let u = k.new_memcg("u");
        let other = k.new_mm(u);
        swapped_region(k, other, B, 5);
        let (ut, uu) = (k.m().memcgs[t].usage, k.m().memcgs[u].usage);
        assert_eq!(load(k, task, B), Access::Major, "{tag}");
        // offsets 1..7: task's 3 and 4 of the other's
        assert_eq!(k.m().memcgs[t].usage - ut, 3, "{tag}");
        assert_eq!(k.m().memcgs[u].usage - uu, 4, "{tag}");
        for i in 0..4 {
            let id = read_ahead(k, other, B + i).unwrap_or_else(|| panic!("{tag}: {i}"));
            assert_eq!(k.m().folios[id].memcg, u, "{tag}");
            assert!(k.on_lru(id), "{tag}");
        }
        assert_eq!(read_ahead(k, other, B + 4), None, "{tag}: offset 8 is past the cluster");
        let id = read_ahead(k, other, B + 2).unwrap();
        assert_eq!(load(k, other, B + 2), Access::Minor, "{tag}");
        assert_eq!(k.m().pte(other, B + 2) & pte::PFN_MASK, id, "{tag}");
        assert_eq!(vm(k, Stat::SwapRaHit), 1, "{tag}");
        // the task exits: its own read-ahead folios go with their slots
        k.op(Op::Exit { task }).unwrap();
        assert_eq!(k.m().memcgs[t].usage, 0, "{tag}");
    });
}

/// zram is `SWP_SYNCHRONOUS_IO`: a slot one PTE references is read around the swap cache with no
/// read-ahead, whatever `page-cluster` says (the zram fixtures' behaviour).
#[test]
fn zram_reads_one_page_whatever_page_cluster() {
    each_policy(3, false, |k, _t, task, tag| {
        k.m_mut().cfg.zram_ratio = Some(3.0);
        swapped_region(k, task, B, 32);
        for i in 0..32 {
            assert_eq!(load(k, task, B + i), Access::Major, "{tag}");
        }
        let d = io(k);
        assert_eq!((d.pswpin, d.pgmajfault, d.swap_ra), (32, 32, 0), "{tag}");
    });
}

/// A read-ahead page is added as the faulting page is, in the same fault (`folio_add_lru` with
/// `in_lru_fault` set): on the same list, or MGLRU generation, as the page the fault asked for.
#[test]
fn read_ahead_pages_are_placed_as_the_faulting_page() {
    each_policy(3, false, |k, _t, task, tag| {
        swapped_region(k, task, B, 16);
        load(k, task, B + 8);
        let target = k.m().pte(task, B + 8) & pte::PFN_MASK;
        let want = k.m().folios[target];
        for i in [5, 6, 7, 9, 10, 11, 12] {
            let f = k.m().folios[read_ahead(k, task, B + i).unwrap()];
            assert_eq!(
                (f.test(pg::ACTIVE), f.gen_counter(), f.test(pg::REFERENCED)),
                (want.test(pg::ACTIVE), want.gen_counter(), want.test(pg::REFERENCED)),
                "{tag}: page {i}"
            );
        }
    });
}

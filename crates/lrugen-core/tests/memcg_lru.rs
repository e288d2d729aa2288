// SPDX-License-Identifier: GPL-2.0-only
//! Many memcgs under global pressure (`kernel-mglru.md` §8): the per-node memcg LRU of 6.3+
//! (`lru_gen_rotate_memcg` and its ops, `lru_gen_online_memcg`/`offline`/`release`/
//! `lru_gen_soft_reclaim`, `shrink_many`/`shrink_one`), and the classic memcg walk with its
//! reclaim cookie (6.11+, `mem_cgroup_iter`).
//!
//! The machines have no memcg limit and less memory than their memcgs' files, so kswapd and
//! direct reclaim run; each memcg has a task reading its own file in a loop, one page each in
//! turn.

use lrugen::kernel::Kernel;
use lrugen::mm::memcg::{MemcgId, ReclaimCookie, ROOT_MEMCG};
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::memcg_lru::{MemcgLruOp, Seg, MEMCG_NR_BINS, MEMCG_NR_GENS};
use lrugen::reclaim::mglru::{Mglru, MglruConfig, Profile};
use lrugen::reclaim::{Policy, Reclaimer, ScanControl};

/// A machine of `pages` pages without swap, its random stream seeded with `seed`, the
/// invariant checker on.
fn machine(pages: u64, seed: u64) -> Machine {
    let mut cfg = MachineConfig::simple(pages, 0);
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    m.random_seed = seed;
    m
}

/// An MGLRU kernel of `profile` with `nr` memcgs below the root, each with a task and a file of
/// `file_pages` pages.
fn mglru(profile: Profile, pages: u64, seed: u64, nr: usize, file_pages: u64) -> (Kernel<Mglru>, Vec<Group>) {
    let m = machine(pages, seed);
    let p = Mglru::new(
        &m,
        MglruConfig {
            profile,
            ..MglruConfig::default()
        },
    );
    let mut k = Kernel::new(m, p);
    let groups = groups(&mut k, nr, file_pages);
    (k, groups)
}

/// One memcg, its task and its file.
#[derive(Clone, Copy, Debug)]
struct Group {
    memcg: MemcgId,
    task: u32,
    file: u32,
}

fn groups<P: Policy>(k: &mut Kernel<P>, nr: usize, file_pages: u64) -> Vec<Group> {
    (0..nr)
        .map(|i| {
            let memcg = k.create_memcg(ROOT_MEMCG, &format!("g{i}"));
            let task = k.create_mm(memcg);
            let file = k.m.create_file(&format!("f{i}"), file_pages, Advice::Normal);
            Group { memcg, task, file }
        })
        .collect()
}

/// `rounds` rounds of one read per group, each group looping over its file.
fn run<P: Policy>(k: &mut Kernel<P>, groups: &[Group], rounds: u64, file_pages: u64) {
    for r in 0..rounds {
        for g in groups {
            k.read_page(g.task, g.file, r % file_pages).unwrap();
        }
    }
    k.check().unwrap();
}

/// Pages reclaimed from `memcg` (kswapd and direct).
fn stolen(m: &Machine, memcg: MemcgId) -> i64 {
    let s = m.memcg_stat(memcg);
    s.get(Stat::PgstealKswapd) + s.get(Stat::PgstealDirect)
}

/// Where memcg `memcg` is on node 0: (generation slot, bin, segment, position in its bin).
fn place(p: &Mglru, memcg: MemcgId) -> (usize, usize, Seg, usize) {
    let l = p.memcg_link(memcg, 0);
    assert!(l.linked, "memcg {memcg} is on the memcg LRU");
    let bin = p.memcg_bin(0, l.gen, l.bin);
    let at = bin.iter().position(|&c| c == memcg).unwrap();
    (l.gen, l.bin, l.seg, at)
}

/// Whether `memcg` is the last of its bin.
fn at_tail(p: &Mglru, memcg: MemcgId) -> bool {
    let (g, b, _, at) = place(p, memcg);
    at + 1 == p.memcg_bin(0, g, b).len()
}

/// `include/linux/mmzone.h` (6.12, 7.2): three generation slots of eight bins.
#[test]
fn the_kernels_constants() {
    assert_eq!((MEMCG_NR_GENS, MEMCG_NR_BINS), (3, 8));
}

/// `lru_gen_online_memcg` and `lru_gen_rotate_memcg`'s four ops, `lru_gen_soft_reclaim`,
/// `lru_gen_offline_memcg` and `lru_gen_release_memcg` move a memcg to the generation, end and
/// segment `mmzone.h`'s comment gives; the old generation emptying advances `seq`.
#[test]
fn rotate_ops_move_a_memcg_where_the_kernel_does() {
    let (mut k, gs) = mglru(Profile::V7_2, 1024, 3, 6, 16);
    let p = &mut k.p;
    let ids: Vec<MemcgId> = std::iter::once(ROOT_MEMCG).chain(gs.iter().map(|g| g.memcg)).collect();
    // online: the tail of a random bin of the old generation, in the order they came online
    assert_eq!(p.memcg_lru[0].seq, 0);
    assert_eq!(p.memcg_lru[0].nr_memcgs, [ids.len() as u64, 0, 0]);
    for b in 0..MEMCG_NR_BINS {
        let bin = p.memcg_bin(0, 0, b);
        assert!(bin.windows(2).all(|w| w[0] < w[1]), "bin {b} in online order: {bin:?}");
    }
    p.check_memcg_lru().unwrap();
    let (a, b, c, d) = (ids[1], ids[2], ids[3], ids[4]);
    // YOUNG: the tail of a bin of the young generation, default segment
    p.lru_gen_rotate_memcg(a, 0, MemcgLruOp::Young);
    assert_eq!((place(p, a).0, place(p, a).2), (1, Seg::Default));
    assert!(at_tail(p, a));
    assert_eq!(p.memcg_lru[0].nr_memcgs, [ids.len() as u64 - 1, 1, 0]);
    // TAIL: the tail of a bin of its generation, segment tail
    p.lru_gen_rotate_memcg(b, 0, MemcgLruOp::Tail);
    assert_eq!((place(p, b).0, place(p, b).2), (0, Seg::Tail));
    assert!(at_tail(p, b));
    // HEAD: the head of a bin of its generation, segment head
    p.lru_gen_rotate_memcg(c, 0, MemcgLruOp::Head);
    assert_eq!((place(p, c).0, place(p, c).2, place(p, c).3), (0, Seg::Head, 0));
    // OLD: the head of a bin of the old generation, default segment
    p.lru_gen_rotate_memcg(a, 0, MemcgLruOp::Old);
    assert_eq!((place(p, a).0, place(p, a).2, place(p, a).3), (0, Seg::Default, 0));
    p.check_memcg_lru().unwrap();
    // soft limit: HEAD once; while at the head it stays put
    p.lru_gen_soft_reclaim(d, 0);
    let once = place(p, d);
    assert_eq!((once.2, once.3), (Seg::Head, 0));
    for _ in 0..10 {
        p.lru_gen_soft_reclaim(d, 0);
        assert_eq!(place(p, d), once);
    }
    // the old generation empties: seq advances, the young generation is the old one
    for &m in &ids {
        assert_eq!(p.memcg_lru[0].seq, 0);
        p.lru_gen_rotate_memcg(m, 0, MemcgLruOp::Young);
    }
    assert_eq!(p.memcg_lru[0].seq, 1);
    assert_eq!((p.memcg_lru[0].old_gen(), p.memcg_lru[0].young_gen()), (1, 2));
    assert_eq!(p.memcg_lru[0].nr_memcgs, [0, ids.len() as u64, 0]);
    p.check_memcg_lru().unwrap();
    // offline: OLD; release: off the LRU
    p.lru_gen_rotate_memcg(b, 0, MemcgLruOp::Young);
    assert_eq!(place(p, b).0, 2);
    p.lru_gen_offline_memcg(b);
    assert_eq!((place(p, b).0, place(p, b).3), (1, 0));
    p.lru_gen_release_memcg(b);
    assert!(!p.memcg_link(b, 0).linked);
    assert_eq!(p.memcg_lru[0].nr_memcgs, [0, ids.len() as u64 - 1, 0]);
    p.check_memcg_lru().unwrap();
    // releasing the last of the old generation advances seq too
    for &m in &ids {
        if m != b {
            p.lru_gen_release_memcg(m);
        }
    }
    assert_eq!(p.memcg_lru[0].seq, 2);
    assert_eq!(p.memcg_lru[0].nr_memcgs, [0, 0, 0]);
    p.check_memcg_lru().unwrap();
}

/// `shrink_one`'s verdicts: below `memory.min` young at once; below `memory.low` one pass at
/// the tail, then reclaimed anyway (a `low` event); too small at this priority one retry at the
/// tail, then young; sizable and not aged, stay.
#[test]
fn shrink_one_decides_each_op_as_the_kernel_does() {
    use lrugen::reclaim::mglru::eviction::shrink_one;
    let (mut k, gs) = mglru(Profile::V7_2, 8192, 1, 4, 1024);
    let pages = [1024u64, 512, 512, 8];
    for (g, &n) in gs.iter().zip(&pages) {
        for i in 0..n {
            k.read_page(g.task, g.file, i).unwrap();
        }
    }
    k.lru_add_drain();
    let (big, min, low, tiny) = (gs[0].memcg, gs[1].memcg, gs[2].memcg, gs[3].memcg);
    k.m.memcgs[min].min = 4096;
    k.m.memcgs[low].low = 4096;
    k.m.memcgs.calculate_protection(ROOT_MEMCG);
    let mut sc = ScanControl::new(32, Reclaimer::Direct, None, 0);
    sc.priority = 4;
    let (m, p) = (&mut k.m, &mut k.p);
    assert_eq!(shrink_one(p, m, min, 0, &mut sc), MemcgLruOp::Young);
    assert_eq!(sc.nr_scanned, 0, "below min: not scanned");
    // an empty memcg is below its (zero) memory.min: emin >= usage
    let empty = k_empty_memcg(m, p);
    assert_eq!(shrink_one(p, m, empty, 0, &mut sc), MemcgLruOp::Young);
    assert_eq!(shrink_one(p, m, low, 0, &mut sc), MemcgLruOp::Tail);
    assert_eq!((sc.nr_scanned, m.memcgs[low].events.low), (0, 0));
    p.lru_gen_rotate_memcg(low, 0, MemcgLruOp::Tail);
    let op = shrink_one(p, m, low, 0, &mut sc);
    assert!(sc.nr_scanned > 0, "at the tail, below low is reclaimed");
    assert_eq!(m.memcgs[low].events.low, 1);
    assert_ne!(op, MemcgLruOp::Tail);
    // 8 pages >> 4 = 0: too small to help
    assert_eq!(shrink_one(p, m, tiny, 0, &mut sc), MemcgLruOp::Tail);
    p.lru_gen_rotate_memcg(tiny, 0, MemcgLruOp::Tail);
    assert_eq!(shrink_one(p, m, tiny, 0, &mut sc), MemcgLruOp::Young);
    // the big one has generations to spare: reclaimed, stays
    let before = sc.nr_reclaimed;
    assert_eq!(shrink_one(p, m, big, 0, &mut sc), MemcgLruOp::Nop);
    assert!(sc.nr_reclaimed > before);
}

/// A memcg with no pages.
fn k_empty_memcg(m: &mut Machine, p: &mut Mglru) -> MemcgId {
    let id = m.create_memcg(ROOT_MEMCG, "empty");
    p.memcg_created(m, id);
    m.memcgs.calculate_protection(ROOT_MEMCG);
    id
}

/// The unequal workload: group `i` reads `i + 1` pages per round of a 320-page file.
fn unequal_rounds(k: &mut Kernel<Mglru>, gs: &[Group], rounds: u64, mut each: impl FnMut(&Kernel<Mglru>)) {
    for r in 0..rounds {
        for (i, g) in gs.iter().enumerate() {
            let n = i as u64 + 1;
            for j in 0..n {
                k.read_page(g.task, g.file, (r * n + j) % 320).unwrap();
            }
        }
        each(k);
    }
}

/// Many memcgs under global pressure are each aged and reclaimed in turn: with equal sizes and
/// rates they are reclaimed alike; with rates from 1 to 8 pages per round, no memcg's `max_seq`
/// gets more than one generation ahead of another's (a memcg that aged waits in the young
/// generation until every memcg of the old one had its turn), and each is reclaimed. Fails with
/// `memcg_lru` off (7.2: 21 generations apart by the end).
#[test]
fn many_memcgs_under_global_pressure_are_aged_and_reclaimed_in_turn() {
    for profile in [Profile::V7_2, Profile::V6_17] {
        let (mut k, gs) = mglru(profile, 2048, 1, 8, 320);
        run(&mut k, &gs, 2000, 320);
        let st: Vec<i64> = gs.iter().map(|g| stolen(&k.m, g.memcg)).collect();
        let (lo, hi) = (*st.iter().min().unwrap(), *st.iter().max().unwrap());
        assert!(
            lo > 0 && hi - lo <= hi / 50,
            "{}: equal memcgs reclaimed alike: {st:?}",
            profile.name()
        );
    }
    // 7.2 ages in the eviction path whenever two generations are left, so every memcg ages
    {
        let profile = Profile::V7_2;
        let (mut k, gs) = mglru(profile, 2048, 1, 8, 320);
        let mut spread = 0;
        let seq0 = k.p.memcg_lru[0].seq;
        unequal_rounds(&mut k, &gs, 3000, |k| {
            let seqs: Vec<u64> = gs.iter().map(|g| k.p.lrugen(g.memcg, 0).max_seq).collect();
            spread = spread.max(seqs.iter().max().unwrap() - seqs.iter().min().unwrap());
        });
        k.check().unwrap();
        let seqs: Vec<u64> = gs.iter().map(|g| k.p.lrugen(g.memcg, 0).max_seq).collect();
        assert!(
            spread <= 1,
            "{}: max_seq in turn, at most one apart: {spread} ({seqs:?})",
            profile.name()
        );
        assert!(
            seqs.iter().all(|&s| s > 10),
            "{}: every memcg aged: {seqs:?}",
            profile.name()
        );
        assert!(
            k.p.memcg_lru[0].seq > seq0 + 10,
            "{}: the old generation emptied again and again",
            profile.name()
        );
        assert!(gs.iter().all(|g| stolen(&k.m, g.memcg) > 0));
    }
}

/// One root reclaim pass (`lru_gen_shrink_node`): every memcg that aged in it is now in the
/// generation that was young when the pass began, in the default segment; the memcgs it did not
/// reach are where they were. Fails with `memcg_lru` off (no memcg moves).
#[test]
fn a_memcg_just_reclaimed_goes_to_the_young_generation() {
    use lrugen::reclaim::vmscan::shrink_node;
    let (mut k, gs) = mglru(Profile::V7_2, 2048, 5, 8, 320);
    unequal_rounds(&mut k, &gs, 300, |_| {});
    let mut moved = 0;
    for pass in 0..300 {
        unequal_rounds(&mut k, &gs, 4, |_| {});
        let before: Vec<(u64, (usize, usize, Seg, usize))> = gs
            .iter()
            .map(|g| (k.p.lrugen(g.memcg, 0).max_seq, place(&k.p, g.memcg)))
            .collect();
        let young = (k.p.memcg_lru[0].seq + 1) as usize % MEMCG_NR_GENS;
        let scanned: Vec<i64> = gs
            .iter()
            .map(|g| k.m.memcg_stat(g.memcg).get(Stat::PgscanDirect))
            .collect();
        let mut sc = ScanControl::new(256, Reclaimer::Direct, None, 0);
        sc.priority = 2;
        shrink_node(&mut k.m, &mut k.p, 0, &mut sc);
        assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
        for (i, g) in gs.iter().enumerate() {
            let after = (k.p.lrugen(g.memcg, 0).max_seq, place(&k.p, g.memcg));
            let visited = k.m.memcg_stat(g.memcg).get(Stat::PgscanDirect) > scanned[i] || after.0 > before[i].0;
            if after.0 > before[i].0 {
                assert_eq!(
                    (after.1 .0, after.1 .2),
                    (young, Seg::Default),
                    "pass {pass}: g{i} aged"
                );
                moved += 1;
            } else if !visited && before[i].1 .0 == young {
                assert_eq!(after.1, before[i].1, "pass {pass}: g{i} in the young generation stays");
            }
        }
    }
    assert!(moved >= 20, "memcgs aged and moved: {moved}");
}

/// Same seed, same bins: two runs are identical in every memcg's reclaim and place; other seeds
/// choose other bins.
#[test]
fn the_seed_fixes_every_bin() {
    let outcome = |seed: u64| {
        let (mut k, gs) = mglru(Profile::V7_2, 2048, seed, 8, 320);
        unequal_rounds(&mut k, &gs, 600, |_| {});
        let st: Vec<i64> = gs.iter().map(|g| stolen(&k.m, g.memcg)).collect();
        let places: Vec<_> = gs.iter().map(|g| place(&k.p, g.memcg)).collect();
        (st, places, k.p.memcg_lru[0].seq, k.m.events.get(Stat::PgscanKswapd))
    };
    assert_eq!(outcome(7), outcome(7));
    let layouts: Vec<_> = (1..=4).map(|s| outcome(s).1).collect();
    assert!(layouts.windows(2).any(|w| w[0] != w[1]), "seeds choose bins");
}

/// `mem_cgroup_iter` with a reclaim cookie: a walk resumes after the memcg the last one stopped
/// at and ends at the end of the tree; the next starts a new cycle at the root; a walk whose
/// cycle another walk completed meanwhile ends.
#[test]
fn reclaim_cookie_walks_resume_where_the_last_stopped() {
    let mut m = machine(1024, 1);
    let a = m.create_memcg(ROOT_MEMCG, "a");
    let a1 = m.create_memcg(a, "a1");
    let b = m.create_memcg(ROOT_MEMCG, "b");
    let mut c = ReclaimCookie { node: 0, generation: 0 };
    assert_eq!(m.mem_cgroup_iter(ROOT_MEMCG, None, Some(&mut c)), Some(ROOT_MEMCG));
    // broken off after the root: the next walk starts at a
    assert_eq!(m.mem_cgroup_iter(ROOT_MEMCG, None, Some(&mut c)), Some(a));
    assert_eq!(m.mem_cgroup_iter(ROOT_MEMCG, Some(a), Some(&mut c)), Some(a1));
    assert_eq!(m.mem_cgroup_iter(ROOT_MEMCG, Some(a1), Some(&mut c)), Some(b));
    assert_eq!(m.mem_cgroup_iter(ROOT_MEMCG, Some(b), Some(&mut c)), None);
    assert_eq!(m.reclaim_iter[m.lruvec(ROOT_MEMCG, 0)].generation, 1);
    // a new cycle
    assert_eq!(m.mem_cgroup_iter(ROOT_MEMCG, None, Some(&mut c)), Some(ROOT_MEMCG));
    // a second walker completes the cycle: the first one's next call ends it
    let mut c2 = ReclaimCookie { node: 0, generation: 0 };
    let mut x = m.mem_cgroup_iter(ROOT_MEMCG, None, Some(&mut c2));
    assert_eq!(x, Some(a));
    while let Some(mc) = x {
        x = m.mem_cgroup_iter(ROOT_MEMCG, Some(mc), Some(&mut c2));
    }
    assert_eq!(m.mem_cgroup_iter(ROOT_MEMCG, Some(ROOT_MEMCG), Some(&mut c)), None);
    // a new walk that joins at the very end of a cycle still sees a memcg: the root
    assert_eq!(m.mem_cgroup_iter(ROOT_MEMCG, None, Some(&mut c)), Some(ROOT_MEMCG));
    for mc in [a, a1, b] {
        assert_eq!(m.mem_cgroup_iter(ROOT_MEMCG, None, Some(&mut c)), Some(mc));
    }
    assert_eq!(m.mem_cgroup_iter(ROOT_MEMCG, None, Some(&mut c)), Some(ROOT_MEMCG));
    // without a cookie: the whole subtree from its root
    assert_eq!(m.mem_cgroup_iter(a, None, None), Some(a));
    assert_eq!(m.mem_cgroup_iter(a, Some(a), None), Some(a1));
    assert_eq!(m.mem_cgroup_iter(a, Some(a1), None), None);
}

/// The classic LRU's direct reclaim with `incremental_cgroup_iteration` (6.11+): each call
/// stops at the first memcg that meets its goal, and the next call goes on from the memcg after
/// it, so successive calls reclaim the memcgs in turn. Off (6.1): every call walks every memcg.
#[test]
fn classic_direct_reclaim_walks_the_memcgs_in_turn() {
    use lrugen::reclaim::vmscan::shrink_node;
    for on in [true, false] {
        let m = machine(8192, 1);
        let mut profile = Profile::V6_12;
        profile.set_switch("incremental_cgroup_iteration", on).unwrap();
        let p = Classic::with_profile(&m, profile);
        let mut k = Kernel::new(m, p);
        let gs = groups(&mut k, 8, 512);
        for g in &gs {
            for i in 0..512 {
                k.read_page(g.task, g.file, i).unwrap();
            }
        }
        k.lru_add_drain();
        let mut order = Vec::new();
        for _ in 0..16 {
            let before: Vec<i64> = gs
                .iter()
                .map(|g| k.m.memcg_stat(g.memcg).get(Stat::PgstealDirect))
                .collect();
            // a direct reclaim pass at the priority where each memcg alone meets the goal
            let mut sc = ScanControl::new(32, Reclaimer::Direct, None, 0);
            sc.priority = 4;
            shrink_node(&mut k.m, &mut k.p, 0, &mut sc);
            assert!(sc.nr_reclaimed >= 32);
            let hit: Vec<usize> = (0..gs.len())
                .filter(|&i| k.m.memcg_stat(gs[i].memcg).get(Stat::PgstealDirect) > before[i])
                .collect();
            order.push(hit);
        }
        k.check().unwrap();
        if on {
            // each call goes on from the memcg after the one the last call stopped at
            let visited: Vec<usize> = order.concat();
            let cyclic: Vec<usize> = (0..visited.len()).map(|i| i % 8).collect();
            assert_eq!(visited, cyclic, "in turn: {order:?}");
            assert!(order.iter().all(|h| h.len() < 8), "partial walks: {order:?}");
        } else {
            assert!(
                order.iter().all(|h| h.len() == 8),
                "6.1: every memcg every call: {order:?}"
            );
        }
    }
}

/// Memcg reclaim (`lru_gen_shrink_lruvec`): a lruvec that aged under its memcg's limit moves to
/// the young generation of the memcg LRU, so the next root reclaim takes the other memcgs first.
/// With `memcg_lru` off it stays where it came online.
#[test]
fn memcg_reclaim_that_ages_moves_the_memcg_young() {
    for on in [true, false] {
        let mut profile = Profile::V7_2;
        profile.set_switch("memcg_lru", on).unwrap();
        let (mut k, gs) = mglru(profile, 8192, 2, 4, 1024);
        let g = gs[0];
        k.m.memcgs[g.memcg].max = 256;
        let seq0 = k.p.lrugen(g.memcg, 0).max_seq;
        let mut r = 0;
        while k.p.lrugen(g.memcg, 0).max_seq == seq0 {
            k.read_page(g.task, g.file, r % 1024).unwrap();
            r += 1;
            assert!(r < 100_000, "the limited memcg aged");
        }
        k.check().unwrap();
        // no global pressure: only the limit reclaimed, and only from this memcg
        assert_eq!(k.m.events.get(Stat::PgscanKswapd), 0);
        let young = (k.p.memcg_lru[0].seq + 1) as usize % MEMCG_NR_GENS;
        let gen = place(&k.p, g.memcg).0;
        if on {
            assert_eq!(gen, young, "aged under its limit: young");
        } else {
            assert_ne!(gen, young, "memcg_lru off: where it came online");
        }
        for o in &gs[1..] {
            assert_ne!(place(&k.p, o.memcg).0, young, "the others did not move");
        }
    }
}

/// The checker sees a memcg LRU out of order: a count that disagrees with the bins, a memcg in
/// neither the old nor the young generation.
#[test]
fn the_checker_catches_a_corrupt_memcg_lru() {
    let (k, gs) = mglru(Profile::V7_2, 1024, 1, 3, 16);
    k.check().unwrap();
    let mut p = k.p.clone();
    p.memcg_lru[0].nr_memcgs[0] += 1;
    assert!(p.check_memcg_lru().unwrap_err().contains("nr_memcgs"));
    let mut p = k.p.clone();
    p.memcg_lru[0].seq = 1;
    assert!(p.check_memcg_lru().is_err(), "slot 0 is neither old (1) nor young (2)");
    let mut p = k.p.clone();
    p.lru_gen_rotate_memcg(gs[0].memcg, 0, MemcgLruOp::Young);
    p.check_memcg_lru().unwrap();
    let mut p2 = p.clone();
    p2.memcg_lru[0].fifo[1] = Default::default();
    assert!(p2.check_memcg_lru().is_err(), "a linked memcg in no bin");
    assert!(k.check().is_ok());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    /// Random reads of up to six memcgs (some limited, some protected by `memory.low`) on a
    /// machine too small for them, under every kernel preset and any seed: the invariant checker,
    /// which walks every node's memcg LRU, holds after every reclaim pass.
    #[test]
    fn random_multi_memcg_reads_keep_the_memcg_lru_consistent(
        preset in 0usize..4,
        seed in 0u64..1000,
        nr in 2usize..7,
        limits in proptest::collection::vec(proptest::option::of(64u64..512), 6),
        lows in proptest::collection::vec(proptest::option::of(32u64..256), 6),
        reads in proptest::collection::vec((0usize..6, 0u64..400), 200..1500),
    ) {
        let profile = Profile::of(lrugen::reclaim::mglru::Preset::ALL[preset]);
        let (mut k, gs) = mglru(profile, 1024, seed, nr, 400);
        for (i, g) in gs.iter().enumerate() {
            if let Some(max) = limits[i] {
                k.m.memcgs[g.memcg].max = max;
            }
            if let Some(low) = lows[i] {
                k.m.memcgs[g.memcg].low = low;
            }
        }
        for (i, page) in reads {
            let g = gs[i % nr];
            k.read_page(g.task, g.file, page).unwrap();
            proptest::prop_assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
        }
        proptest::prop_assert!(k.check().is_ok(), "{:?}", k.check());
        proptest::prop_assert!(k.p.check_memcg_lru().is_ok());
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! The MGLRU kill switch (`reclaim::killswitch`): `fill_evictable` and `drain_evictable` place
//! every folio where the kernel's rules put it, keep the lists' order and the counters; `enabled`
//! reads back as `enabled_show` prints it and refuses what `enabled_store` refuses; shadows made
//! under one mode are read by the other's decoder; and a property test switching on and off in
//! the middle of random workloads with the invariant checker after each switch.

mod common;

use lrugen::kernel::{AccessError, Kernel};
use lrugen::mm::folio::{pg, FolioId, ANON, FILE};
use lrugen::mm::memcg::{MemcgId, ROOT_MEMCG};
use lrugen::mm::pagecache::{Advice, Slot};
use lrugen::mm::vm::vmf;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Lru, Machine, MachineConfig};
use lrugen::reclaim::check::check_invariants;
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::killswitch::Switchable;
use lrugen::reclaim::mglru::debugfs::Errno;
use lrugen::reclaim::mglru::{gen_from_seq, MglruConfig, Profile, MAX_NR_GENS};
use lrugen::reclaim::Policy;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunResult, SwitchApplied, SwitchAt};
use lrugen::workload::WorkloadSpec;
use proptest::prelude::*;

type K = Kernel<Switchable>;

/// A kernel with both LRUs of `profile` on a one-node machine of `pages` pages and `swap` swap
/// pages, MGLRU live if `enabled`, read-ahead and the `lru_add` batch off, the checker on; a
/// memcg `/t` and a task in it.
fn setup(profile: Profile, pages: u64, swap: u64, enabled: bool, hw_young: bool) -> (K, MemcgId, u32) {
    let mut cfg = MachineConfig::simple(pages, swap);
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    m.lru_cache_disabled = true;
    let mc = MglruConfig {
        profile,
        hw_pte_young: hw_young,
        ..MglruConfig::default()
    };
    let p = Switchable::new(&m, &mc, enabled);
    let mut k = Kernel::new(m, p);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    let task = k.create_mm(t);
    (k, t, task)
}

fn cached(k: &K, file: u32, index: u64) -> FolioId {
    match k.m.files[file as usize].slot(index) {
        Slot::Folio(id) => id,
        s => panic!("file {file} page {index} is not cached: {s:?}"),
    }
}

fn mapped(k: &K, task: u32, vpn: u32) -> FolioId {
    k.m.pte(task, vpn) & lrugen::mm::vm::pte::PFN_MASK
}

/// The folios of a list, oldest (tail) first.
fn oldest_first(m: &Machine, list: &lrugen::mm::folio::ListHead) -> Vec<FolioId> {
    let mut v = Vec::new();
    m.folios
        .walk_list(list, |id| {
            v.push(id);
            Ok(())
        })
        .unwrap();
    v.reverse();
    v
}

/// The seq of a folio on the generations: the one of `min_seq..=max_seq` whose slot its gen is.
fn seq_of(k: &K, id: FolioId) -> u64 {
    let f = k.m.folios[id];
    assert!(f.gen_counter() != 0, "folio {id} is not on the generations");
    let g = k.p.mglru.lrugen(f.memcg, f.node());
    let gen = f.gen_counter() as usize - 1;
    (g.min_seq[f.lru_type()]..=g.max_seq)
        .find(|&s| gen_from_seq(s) == gen)
        .unwrap()
}

/// Classic lists → generations → classic lists under 7.2's placement (`lru_gen_folio_seq`): an
/// active folio lands in `max_seq` with `PG_workingset` and `max_seq - 1` without, inactive anon
/// (not in the swap cache) in `max_seq - 1`, inactive file in the oldest generation, one younger
/// if referenced; `PG_active` is clear on the generations; the lists keep their order; drained
/// back, exactly the folios of the two youngest generations are active, and every counter
/// follows.
#[test]
fn fill_then_drain_places_folios_as_the_kernel_does() {
    let (mut k, t, task) = setup(Profile::V7_2, 4096, 1024, false, true);
    let f = k.m.create_file("f", 64, Advice::Normal);
    // file pages 0..16 read once (inactive, referenced), 16..24 twice (activated), 24..28 three
    // times (active, referenced again)
    for i in 0..28 {
        k.read_page(task, f, i).unwrap();
    }
    for i in 16..28 {
        k.read_page(task, f, i).unwrap();
    }
    for i in 24..28 {
        k.read_page(task, f, i).unwrap();
    }
    for i in 28..32 {
        // referenced, not active
        k.read_page(task, f, i).unwrap();
        let id = cached(&k, f, i);
        k.m.folios[id].set(pg::REFERENCED);
    }
    // a buffered read marks a folio referenced: 0..8 lose it, as a reference check clears it
    for i in 0..8 {
        let id = cached(&k, f, i);
        k.m.folios[id].clear(pg::REFERENCED);
    }
    // an active workingset file folio, as a restored refault would be
    let ws = cached(&k, f, 20);
    k.m.folios[ws].set(pg::WORKINGSET);
    let heap = k.m.mmap(task, 16, vmf::WRITE, None);
    for i in 0..16 {
        k.access(task, heap + i, true).unwrap();
    }
    // four anon folios activated (`folio_mark_accessed` twice)
    for i in 0..4 {
        let id = mapped(&k, task, heap + i);
        k.p.mark_accessed(&mut k.m, id);
        k.p.mark_accessed(&mut k.m, id);
    }
    k.check().unwrap();
    let lv = k.m.lruvec(t, 0);
    let classic_before: Vec<Vec<FolioId>> = (0..4)
        .map(|l| oldest_first(&k.m, &k.p.classic.lruvecs[lv].lists[l]))
        .collect();
    assert!(
        classic_before.iter().all(|l| !l.is_empty()),
        "every list populated: {classic_before:?}"
    );
    let was_active: Vec<(FolioId, bool)> = classic_before
        .iter()
        .flatten()
        .map(|&id| (id, k.m.folios[id].test(pg::ACTIVE)))
        .collect();
    let resident = k.m.memcgs[t].usage;

    k.p.enabled_store(&mut k.m, b"y\n").unwrap();
    k.check().unwrap();
    assert_eq!(k.m.memcgs[t].usage, resident);
    let g = k.p.mglru.lrugen(t, 0).clone();
    assert_eq!((g.max_seq, g.min_seq), (3, [0, 0]), "a new lruvec's generations");
    for &(id, active) in &was_active {
        let fo = k.m.folios[id];
        assert!(
            !fo.test(pg::ACTIVE),
            "folio {id}: PG_active cleared by lru_gen_add_folio"
        );
        let want = if active {
            if fo.test(pg::WORKINGSET) {
                3
            } else {
                2
            }
        } else if fo.lru_type() == ANON {
            2
        } else if fo.test(pg::REFERENCED) || fo.test(pg::WORKINGSET) {
            1
        } else {
            0
        };
        assert_eq!(
            seq_of(&k, id),
            want,
            "folio {id} (active {active}, flags {:#x})",
            fo.flags
        );
    }
    assert_eq!(seq_of(&k, ws), 3);
    // each classic list went, oldest first, to the head of its generation: the order within a
    // generation is the classic lists' order
    let inactive_file_unref: Vec<FolioId> = classic_before[Lru::InactiveFile as usize]
        .iter()
        .copied()
        .filter(|&id| seq_of(&k, id) == 0)
        .collect();
    let zone = k.m.folios[inactive_file_unref[0]].zone();
    assert_eq!(oldest_first(&k.m, &g.folios[0][FILE][zone]), inactive_file_unref);
    // the compatibility counters: the two youngest generations count as active
    let count = |seqs: &[u64], t_: usize| {
        was_active
            .iter()
            .filter(|&&(id, _)| k.m.folios[id].lru_type() == t_ && seqs.contains(&seq_of(&k, id)))
            .count() as i64
    };
    let st = k.m.memcg_stat(t);
    assert_eq!(st.get(Stat::NrActiveFile), count(&[2, 3], FILE));
    assert_eq!(st.get(Stat::NrInactiveFile), count(&[0, 1], FILE));
    assert_eq!(st.get(Stat::NrActiveAnon), 16, "anon in max_seq - 1 counts as active");
    assert_eq!(st.get(Stat::NrInactiveAnon), 0);
    let young: Vec<FolioId> = was_active
        .iter()
        .map(|&(id, _)| id)
        .filter(|&id| seq_of(&k, id) >= g.max_seq - 1)
        .collect();

    k.p.enabled_store(&mut k.m, b"n\n").unwrap();
    k.check().unwrap();
    assert_eq!(k.m.memcgs[t].usage, resident);
    for &(id, _) in &was_active {
        let fo = k.m.folios[id];
        assert_eq!(fo.gen_counter(), 0, "folio {id} off the generations");
        assert_eq!(
            fo.test(pg::ACTIVE),
            young.contains(&id),
            "folio {id}: active after the drain iff it was in one of the two youngest generations"
        );
        assert_eq!(
            Classic::folio_lru_list(&k.m, id),
            Lru::of(fo.lru_type(), young.contains(&id))
        );
    }
    let st = k.m.memcg_stat(t);
    assert_eq!(st.get(Stat::NrActiveAnon), 16);
    assert_eq!(
        st.get(Stat::NrActiveFile) + st.get(Stat::NrInactiveFile),
        classic_before[2].len() as i64 + classic_before[3].len() as i64
    );
    assert_eq!(k.p.mglru.lrugen(t, 0).max_seq, 3, "the generations are kept, not reset");
}

/// Unevictable folios change owner in order and count the same; a later fill (with MGLRU's
/// generations aged meanwhile) places relative to the kept `max_seq`.
#[test]
fn unevictable_folios_and_kept_generations() {
    let (mut k, t, task) = setup(Profile::MAINLINE, 4096, 0, true, true);
    let f = k.m.create_file("f", 16, Advice::Normal);
    let map = k.m.mmap(task, 16, vmf::LOCKED, Some((f, 0)));
    for i in 0..4 {
        k.access(task, map + i, false).unwrap();
    }
    for i in 4..12 {
        k.read_page(task, f, i).unwrap();
    }
    k.check().unwrap();
    let unevictable = k.m.memcg_stat(t).get(Stat::NrUnevictable);
    assert!(unevictable > 0, "mlocked pages are unevictable");
    k.p.change_state(&mut k.m, false);
    k.check().unwrap();
    assert_eq!(k.m.memcg_stat(t).get(Stat::NrUnevictable), unevictable);
    let lv = k.m.lruvec(t, 0);
    assert_eq!(
        k.p.classic.lruvecs[lv].lists[Lru::Unevictable as usize].len as i64,
        unevictable
    );
    // the dormant generations as if MGLRU had aged them before it was turned off
    let mlv = k.p.mglru.lv(t, 0);
    k.p.mglru.lruvecs[mlv].max_seq = 5;
    k.p.mglru.lruvecs[mlv].min_seq = [2, 2];
    k.p.change_state(&mut k.m, true);
    k.check().unwrap();
    assert_eq!(k.p.mglru.unevictable[mlv].len as i64, unevictable);
    // read once, inactive, PG_referenced: the oldest generation there is
    // (`max(max_seq - 3, min_seq)` = 2), or from 7.2 on, where placement reads PG_referenced
    // (`folio_seq_referenced`), `max_seq - 2` = 3
    let want = if k.p.mglru.profile().switches.folio_seq_referenced {
        3
    } else {
        2
    };
    for i in 4..12 {
        assert_eq!(seq_of(&k, cached(&k, f, i)), want);
    }
}

/// `enabled` reads as `enabled_show` prints it (`0x%04x`, the walk and non-leaf bits only where
/// the MMU has the accessed bits), and a bad write is `EINVAL` with nothing changed.
#[test]
fn enabled_reads_and_writes_as_the_kernel() {
    let (mut k, t, task) = setup(Profile::MAINLINE, 1024, 0, true, true);
    let f = k.m.create_file("f", 8, Advice::Normal);
    for i in 0..8 {
        k.read_page(task, f, i).unwrap();
    }
    assert_eq!(k.p.enabled_show(), "0x0007\n");
    for (w, read, live) in [
        ("n\n", "0x0000\n", false),
        ("0x5", "0x0005\n", true),
        ("2", "0x0002\n", false),
        ("Yes", "0x0007\n", true),
        ("06", "0x0006\n", false),
        // bits above the three are ignored: 8 is 0
        ("8", "0x0000\n", false),
        ("0xf\n", "0x0007\n", true),
    ] {
        assert_eq!(k.p.enabled_store(&mut k.m, w.as_bytes()), Ok(w.len()), "{w:?}");
        assert_eq!(k.p.enabled_show(), read, "after {w:?}");
        assert_eq!(k.p.enabled(), live, "after {w:?}");
        assert_eq!(k.p.name(), if live { "mglru" } else { "classic" });
        k.check().unwrap_or_else(|e| panic!("after {w:?}: {e}"));
        let on_gens = (0..8)
            .filter(|&i| k.m.folios[cached(&k, f, i)].gen_counter() != 0)
            .count();
        assert_eq!(on_gens, if live { 8 } else { 0 }, "after {w:?}");
    }
    let before = (k.p.enabled_show(), k.m.memcg_stat(t));
    for w in ["", " y", "7 ", "0x", "-1", "1x", "4294967296", "\n", "08"] {
        assert_eq!(k.p.enabled_store(&mut k.m, w.as_bytes()), Err(Errno::EINVAL), "{w:?}");
        assert_eq!((k.p.enabled_show(), k.m.memcg_stat(t)), before, "{w:?} changed nothing");
    }
    assert_eq!(Errno::EINVAL.code(), 22);
    // without PTE accessed bits, the walk bit is kept but not shown (`should_walk_mmu`)
    let (mut k, _, _) = setup(Profile::MAINLINE, 1024, 0, false, false);
    // a run started with MGLRU off has every capability off
    assert_eq!(k.p.enabled_show(), "0x0000\n");
    k.p.enabled_store(&mut k.m, b"y").unwrap();
    assert_eq!(k.p.enabled_show(), "0x0005\n");
    assert_eq!(k.p.caps(), 0x7);
}

/// Fill a file of `pages` pages into memory too small for it under memcg `t` (reclaim), so that
/// its first pages leave shadows; then switch and read those pages again. Returns the refaults
/// and activations counted by the second reads.
fn refault_across(enabled_first: bool, switch: bool, global: bool) -> (i64, i64, u64) {
    let (mut k, t, task) = setup(Profile::MAINLINE, 256, 0, enabled_first, true);
    if !global {
        k.m.memcgs[t].max = 96;
    }
    let f = k.m.create_file("f", 400, Advice::Normal);
    for i in 0..400 {
        k.read_page(task, f, i).unwrap();
    }
    let shadows = (0..32)
        .filter(|&i| matches!(k.m.files[f as usize].slot(i), Slot::Shadow(_)))
        .count() as u64;
    if switch {
        k.p.change_state(&mut k.m, !enabled_first);
        k.check().unwrap();
    }
    let st = |k: &K| {
        let s = k.m.memcg_stat(t);
        (s.get(Stat::WorkingsetRefaultFile), s.get(Stat::WorkingsetActivateFile))
    };
    let (r0, a0) = st(&k);
    for i in 0..32 {
        k.read_page(task, f, i).unwrap();
    }
    k.check().unwrap();
    let (r1, a1) = st(&k);
    (r1 - r0, a1 - a0, shadows)
}

/// Shadows are read by the decoder of the mode in force at the refault. A classic shadow of
/// global reclaim names the root memcg, the lruvec that reclaimed: refaulting into `/t` under
/// MGLRU, `lru_gen_refault` finds another lruvec and counts nothing, where the classic LRU
/// counts each refault. An MGLRU shadow holds a generation token; the classic decoder counts the
/// refault (in the folio's memcg) and reads the token as a clock far ahead of its own
/// `nonresident_age` (which never moved under MGLRU): no activation.
#[test]
fn shadows_are_read_by_the_live_mode() {
    let (refaults, _, shadows) = refault_across(false, false, true);
    assert!(
        shadows > 0 && refaults > 0,
        "classic: refaults of its own shadows counted"
    );
    let (refaults, activations, shadows) = refault_across(false, true, true);
    assert!(shadows > 0);
    assert_eq!(
        (refaults, activations),
        (0, 0),
        "MGLRU reads a root-memcg shadow: another lruvec"
    );
    let (refaults, activations, shadows) = refault_across(true, true, false);
    assert!(shadows > 0);
    assert!(refaults > 0, "classic counts every refault");
    assert_eq!(activations, 0, "an MGLRU token is no recent classic eviction");
    // and MGLRU counts its own under limit reclaim
    let (refaults, _, _) = refault_across(true, false, false);
    assert!(refaults > 0);
}

/// `snapshot_refaults` is LRU-agnostic in the kernel (`do_try_to_free_pages`, `balance_pgdat`):
/// reclaim under MGLRU keeps the classic lruvec's `refaults` snapshot current, so that the first
/// classic reclaim after a switch compares with a fresh one.
#[test]
fn refault_snapshots_follow_reclaim_under_mglru() {
    let (mut k, t, task) = setup(Profile::MAINLINE, 512, 0, true, true);
    k.m.memcgs[t].max = 64;
    let f = k.m.create_file("f", 256, Advice::Normal);
    let map = k.m.mmap(task, 256, 0, Some((f, 0)));
    // activations counted before (as by classic reclaim earlier), flushed: the snapshot must see them
    k.m.mod_lruvec_state(t, 0, Stat::WorkingsetActivateFile, 100);
    k.m.flush_stats_now();
    for _ in 0..3 {
        for i in 0..256 {
            k.access(task, map + i, false).unwrap();
        }
    }
    k.check().unwrap();
    let lv = k.m.lruvec(t, 0);
    let want = [
        k.m.lruvec_state_flushed(t, 0, Stat::WorkingsetActivateAnon),
        k.m.lruvec_state_flushed(t, 0, Stat::WorkingsetActivateFile),
    ];
    assert!(
        k.m.memcg_stat(t).get(Stat::WorkingsetRefaultFile) > 0,
        "refaults happened"
    );
    assert!(want[1] >= 100, "{want:?}");
    assert_eq!(k.p.classic.lruvecs[lv].refaults, want);
}

#[derive(Clone, Debug)]
enum Op {
    Read(u8, u8),
    Write(u8, u8),
    Store(u8),
    Load(u8),
    MapLoad(u8),
    LockedLoad(u8),
    Switch,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..3, 0u8..64).prop_map(|(f, i)| Op::Read(f, i)),
        1 => (0u8..3, 0u8..64).prop_map(|(f, i)| Op::Write(f, i)),
        3 => (0u8..96).prop_map(Op::Store),
        1 => (0u8..96).prop_map(Op::Load),
        1 => (0u8..64).prop_map(Op::MapLoad),
        1 => (0u8..16).prop_map(Op::LockedLoad),
        1 => Just(Op::Switch),
    ]
}

/// The folios resident (allocated), as a sorted list with their type, memcg and zone.
fn resident(m: &Machine) -> Vec<(FolioId, usize, MemcgId, usize)> {
    (0..m.folios.len() as FolioId)
        .filter(|&id| m.folios[id].test(pg::ALLOCATED))
        .map(|id| {
            let f = m.folios[id];
            (id, f.lru_type(), f.memcg, f.zone())
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random reads, writes, loads and stores (some through an mlocked mapping: unevictable
    /// folios) on a small machine under memcg pressure, with the
    /// kill switch written at random points (on, off, on...) from either start, the `lru_add`
    /// batch on: after each write the invariant checker (every folio on exactly one list of
    /// either LRU, list sizes equal to the counters, the dormant LRU empty) passes, and the
    /// resident set, the memcg's usage and the LRU page total are what they were before it.
    #[test]
    fn switching_keeps_invariants_and_the_resident_set(
        profile in prop_oneof![Just(Profile::V6_1), Just(Profile::V6_12), Just(Profile::V7_2), Just(Profile::MAINLINE)],
        start in any::<bool>(),
        pages in 160u64..512,
        swap in prop_oneof![Just(0u64), 16u64..256],
        max in prop_oneof![Just(None), (24u64..200).prop_map(Some)],
        batch in any::<bool>(),
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        let (mut k, t, task) = setup(profile, pages, swap, start, true);
        k.m.lru_cache_disabled = !batch;
        if let Some(max) = max {
            k.m.memcgs[t].max = max;
        }
        let files: Vec<u32> = (0..3).map(|i| k.m.create_file(&format!("f{i}"), 64, Advice::Normal)).collect();
        let heap = k.m.mmap(task, 96, vmf::WRITE, None);
        let map = k.m.mmap(task, 64, vmf::WRITE, Some((files[0], 0)));
        let locked = k.m.mmap(task, 16, vmf::LOCKED, Some((files[1], 48)));
        let mut switches = 0;
        for op in ops {
            let r = match op {
                Op::Read(f, i) => k.read_page(task, files[f as usize], i as u64).map(|_| ()),
                Op::Write(f, i) => k.write_page(task, files[f as usize], i as u64).map(|_| ()),
                Op::Store(i) => k.access(task, heap + i as u32, true).map(|_| ()),
                Op::Load(i) => k.access(task, heap + i as u32, false).map(|_| ()),
                Op::MapLoad(i) => k.access(task, map + i as u32, false).map(|_| ()),
                Op::LockedLoad(i) => k.access(task, locked + i as u32, false).map(|_| ()),
                Op::Switch => {
                    let before = resident(&k.m);
                    let usage = k.m.memcgs[t].usage;
                    let lru = |k: &K| (0..2).map(|ty| k.m.lru_pages(ROOT_MEMCG, 0, ty)).sum::<u64>()
                        + k.m.memcg_stat(ROOT_MEMCG).get(Stat::NrUnevictable) as u64;
                    let lru_before = lru(&k);
                    let on = !k.p.enabled();
                    let w: &[u8] = if on { b"y\n" } else { b"n\n" };
                    prop_assert_eq!(k.p.enabled_store(&mut k.m, w), Ok(2));
                    prop_assert_eq!(k.p.enabled(), on);
                    switches += 1;
                    if let Err(e) = check_invariants(&k.m, &k.p) {
                        prop_assert!(false, "after switch {} to {}: {}", switches, on, e);
                    }
                    prop_assert_eq!(resident(&k.m), before, "a switch frees or adds no folio");
                    prop_assert_eq!(k.m.memcgs[t].usage, usage);
                    prop_assert_eq!(lru(&k), lru_before, "a switch moves pages between lists only");
                    Ok(())
                }
            };
            match r {
                Ok(()) | Err(AccessError::Killed(_)) | Err(AccessError::Alloc(_)) => {}
                Err(e) => prop_assert!(false, "unexpected failure: {}", e),
            }
            if let Some(e) = &k.m.check_failure {
                prop_assert!(false, "{}", e);
            }
            if let Err(e) = k.check() {
                prop_assert!(false, "after {:?}: {}", op, e);
            }
        }
        k.exit(task);
        if let Err(e) = k.check() {
            prop_assert!(false, "after exit: {}", e);
        }
        let g = k.p.mglru.lrugen(t, 0);
        for gen in 0..MAX_NR_GENS {
            prop_assert_eq!(g.gen_pages(gen, ANON), 0, "anon left after exit");
        }
    }
}

fn file_run(policy: PolicyKind, switch_at: &[(u64, &str)]) -> RunConfig {
    let w = WorkloadSpec::FileRead {
        files: 4,
        file_pages: 2048,
        dist: lrugen::workload::dist::Dist::Zipf { theta: 0.9 },
        accesses: 60_000,
    };
    let memcg = MemcgConfig {
        max: Some(2048),
        ..Default::default()
    };
    let mut cfg = RunConfig::new(MachineConfig::simple(18_432, 0), memcg, w, policy);
    cfg.switch_at = switch_at
        .iter()
        .map(|&(step, v)| SwitchAt { step, value: v.into() })
        .collect();
    cfg
}

fn run(cfg: &RunConfig) -> RunResult {
    sim::run(cfg, None, &mut |_, _| {}).unwrap()
}

/// MGLRU switched off half-way: its misses lie between the pure MGLRU run's and the pure
/// classic run's, the write is reported at its step, and the same seed gives the same run,
/// counter for counter; with the checker on, a run switching off, on and off again passes it
/// after every write; a write at step 0 of a classic run is the same as starting with MGLRU.
#[test]
fn a_run_switched_half_way_lies_between_and_is_deterministic() {
    let mglru = run(&file_run(PolicyKind::Mglru, &[]));
    let classic = run(&file_run(PolicyKind::Classic, &[]));
    let cfg = file_run(PolicyKind::Mglru, &[(30_000, "n")]);
    let switched = run(&cfg);
    assert_eq!(
        switched.switches,
        vec![SwitchApplied {
            step: 30_000,
            value: "n".into(),
            enabled: "0x0000".into(),
            live: "classic".into(),
        }]
    );
    assert_eq!(switched.policy, "mglru", "named after the LRU it started with");
    let (lo, hi) = (mglru.misses.min(classic.misses), mglru.misses.max(classic.misses));
    assert!(
        lo < switched.misses && switched.misses < hi,
        "misses: mglru {}, classic {}, switched {}",
        mglru.misses,
        classic.misses,
        switched.misses
    );
    assert_ne!(switched.memory_stat, mglru.memory_stat);
    assert_ne!(switched.memory_stat, classic.memory_stat);
    let again = run(&cfg);
    assert_eq!(
        (again.misses, &again.vmstat, &again.memory_stat, &again.switches),
        (
            switched.misses,
            &switched.vmstat,
            &switched.memory_stat,
            &switched.switches
        )
    );
    let mut checked = file_run(PolicyKind::Mglru, &[(10_000, "n"), (20_000, "0x7"), (40_000, "0")]);
    checked.check = true;
    let r = run(&checked);
    assert_eq!(r.switches.len(), 3);
    assert_eq!(r.switches[1].enabled, "0x0007");
    assert_eq!(r.switches[2].live, "classic");
    // switching on before the first step: the classic run becomes the MGLRU run
    let on_at_0 = run(&file_run(PolicyKind::Classic, &[(0, "y")]));
    assert_eq!(
        (on_at_0.misses, &on_at_0.vmstat, &on_at_0.memory_stat),
        (mglru.misses, &mglru.vmstat, &mglru.memory_stat)
    );
    // and off before the first step: the MGLRU run becomes the classic run (every call the
    // live policy's, nothing of the dormant one's leaking in)
    let off_at_0 = run(&file_run(PolicyKind::Mglru, &[(0, "n")]));
    assert_eq!(
        (off_at_0.misses, &off_at_0.vmstat, &off_at_0.memory_stat),
        (classic.misses, &classic.vmstat, &classic.memory_stat)
    );
    // a write past the end is not applied
    let late = run(&file_run(PolicyKind::Classic, &[(10_000_000, "y")]));
    assert!(late.switches.is_empty());
    assert_eq!(late.misses, classic.misses);
}

/// A value the file refuses, a reference cache, or a run in virtual time: refused before the
/// run, naming what is wrong.
#[test]
fn bad_switches_are_refused() {
    let e = sim::run(&file_run(PolicyKind::Mglru, &[(5, "maybe")]), None, &mut |_, _| {}).unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains("'maybe'") && e.contains("EINVAL") && e.contains("expected y, n"),
        "{e}"
    );
    let e = sim::run(&file_run(PolicyKind::Lru, &[(5, "y")]), None, &mut |_, _| {}).unwrap_err();
    assert!(e.to_string().contains("kernel policy"), "{e}");
    let mut cfg = file_run(PolicyKind::Mglru, &[(5, "n")]);
    cfg.engine = Some(Default::default());
    let e = sim::run(&cfg, None, &mut |_, _| {}).unwrap_err();
    assert!(e.to_string().contains("virtual-time engine"), "{e}");
}

/// The same on anonymous memory with swap: a write at step 0 gives the other policy's run
/// exactly (vmstat and memory.stat), a write half-way differs from both pure runs, and the
/// checker passes after each write.
#[test]
fn anon_runs_with_swap() {
    let cfg = |policy, sw: &[(u64, &str)]| {
        let w = WorkloadSpec::Anon {
            compressed_pct: 0,
            pages: 1536,
            write_ratio: 0.3,
            dist: lrugen::workload::dist::Dist::Zipf { theta: 0.9 },
            accesses: 30_000,
        };
        let memcg = MemcgConfig {
            max: Some(768),
            ..Default::default()
        };
        let mut c = RunConfig::new(MachineConfig::simple(8192, 4096), memcg, w, policy);
        c.check = true;
        c.switch_at = sw.iter().map(|&(step, v)| SwitchAt { step, value: v.into() }).collect();
        c
    };
    let mglru = run(&cfg(PolicyKind::Mglru, &[]));
    let classic = run(&cfg(PolicyKind::Classic, &[]));
    let key = |r: &RunResult| (r.misses, r.vmstat.clone(), r.memory_stat.clone());
    assert_eq!(key(&run(&cfg(PolicyKind::Classic, &[(0, "y")]))), key(&mglru));
    assert_eq!(key(&run(&cfg(PolicyKind::Mglru, &[(0, "n")]))), key(&classic));
    let half = run(&cfg(PolicyKind::Mglru, &[(10_000, "n"), (20_000, "y")]));
    assert_eq!(half.switches.len(), 2);
    assert!(half.vm(Stat::Pswpout) > 0, "it swapped");
    assert_ne!(key(&half), key(&mglru));
    assert_ne!(key(&half), key(&classic));
}

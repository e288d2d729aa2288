// SPDX-License-Identifier: GPL-2.0-only
//! The invariant checker on MGLRU runs, in both kernel profiles: the built-in workloads (file,
//! anon with swap) and a hand-built mixed one, under memcg and global (kswapd) pressure, with the
//! checker — the engine's and MGLRU's own (`aging::check_lruvecs`: every folio's generation within
//! `[min_seq, max_seq]` of its type, page counts per generation equal to the lists, the seq window,
//! the active/inactive compatibility counters) — running after every `shrink_node` pass; a
//! property test over random small op sequences and configurations; and proof that the checker
//! catches a corrupted generation.

mod common;

use lrugen::kernel::{AccessError, Kernel};
use lrugen::mm::folio::{pg, FolioId, ANON, FILE};
use lrugen::mm::memcg::{MemcgId, ROOT_MEMCG};
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vm::vmf;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Lru, Machine, MachineConfig};
use lrugen::reclaim::check::check_invariants;
use lrugen::reclaim::mglru::{caps, eviction, gen_from_seq, Mglru, MglruConfig, Profile, MAX_NR_GENS};
use lrugen::reclaim::vmscan::try_to_free_mem_cgroup_pages;
use lrugen::reclaim::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunResult};
use lrugen::workload::dist::Dist;
use lrugen::workload::{Stream, WorkloadSpec};
use proptest::prelude::*;

type K = Kernel<Mglru>;

const PROFILES: [Profile; 2] = [Profile::V6_1, Profile::V6_17];
const ZIPF: Dist = Dist::Zipf { theta: 0.9 };

fn config(profile: Profile, machine: MachineConfig, memcg: MemcgConfig, workload: WorkloadSpec) -> RunConfig {
    let mut cfg = RunConfig::new(machine, memcg, workload, PolicyKind::Mglru);
    cfg.seed = 42;
    cfg.check = true;
    cfg.mglru = MglruConfig {
        profile,
        ..MglruConfig::default()
    };
    cfg
}

/// Replay `cfg` as `sim::run_kernel` does, but keep the kernel for inspection. Fails on the first
/// invariant violation found after a reclaim pass.
fn replay(cfg: &RunConfig) -> (K, MemcgId) {
    let (mut m, t) = sim::build_machine(cfg).unwrap();
    let stream = Stream::new(&cfg.workload, &mut m, t, cfg.seed, None).unwrap();
    let p = Mglru::new(&m, cfg.mglru.clone());
    let mut k = Kernel::new(m, p);
    for s in stream {
        let r = k.step(s.op);
        if let Some(e) = k.m.check_failure.take() {
            panic!("{}: {e}", cfg.workload.describe());
        }
        match r {
            Ok(_) => {}
            Err(AccessError::Killed(_)) | Err(AccessError::Alloc(_)) => break,
            Err(e) => panic!("{e}"),
        }
    }
    k.check().unwrap();
    (k, t)
}

/// Run `cfg` through `sim::run` (checker on after every reclaim pass and at the end), then replay
/// it to inspect the generations; the two must agree counter for counter.
fn run_checked(cfg: &RunConfig) -> (RunResult, K, MemcgId) {
    let r = match sim::run(cfg, None, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => panic!("{} ({}): {e}", cfg.workload.describe(), cfg.mglru.profile.name()),
    };
    let (k, t) = replay(cfg);
    assert_eq!(r.memory_stat.as_ref().unwrap(), &k.m.memcg_stat(t), "replay diverged");
    (r, k, t)
}

/// The generations of lruvec (memcg, node 0) advanced: aging ran.
#[track_caller]
fn assert_aged(k: &K, memcg: MemcgId) {
    let g = k.p.lrugen(memcg, 0);
    assert!(g.max_seq > 3, "max_seq {} never advanced", g.max_seq);
    for t in [ANON, FILE] {
        let n = g.max_seq - g.min_seq[t] + 1;
        assert!((2..=MAX_NR_GENS as u64).contains(&n), "type {t}: {n} generations");
    }
}

fn limit(max: u64) -> MemcgConfig {
    MemcgConfig {
        max: Some(max),
        ..Default::default()
    }
}

fn file_read(files: u32, file_pages: u64, dist: Dist, accesses: u64) -> WorkloadSpec {
    WorkloadSpec::FileRead {
        files,
        file_pages,
        dist,
        accesses,
    }
}

fn anon(pages: u64, dist: Dist, accesses: u64) -> WorkloadSpec {
    WorkloadSpec::Anon {
        compressed_pct: 0,
        pages,
        write_ratio: 0.3,
        dist,
        accesses,
    }
}

// -------------------------------------------------------------------------------------------------
// Built-in workloads
// -------------------------------------------------------------------------------------------------

/// Pure buffered reads never need a new generation: `read()` adds pages to the oldest generation
/// (§2.3: `max(max_seq − 3, min_seq)`; 6.1: `min_seq`, or `min_seq + 1` while four exist), tier
/// protection moves them to `min_seq + 1`, and nothing is ever placed in `max_seq` (only faults
/// and activations are). The oldest generation keeps being refilled as it is evicted, so
/// `should_run_aging` has no reason to fire: `max_seq` stays where `lru_gen_init_lruvec` put it.
#[track_caller]
fn assert_read_only_generations(k: &K, memcg: MemcgId) {
    let g = k.p.lrugen(memcg, 0);
    assert_eq!(g.max_seq, 3, "no aging");
    assert_eq!(g.gen_pages(gen_from_seq(g.max_seq), FILE), 0, "nothing in max_seq");
    let n = g.max_seq - g.min_seq[FILE] + 1;
    assert!((2..=MAX_NR_GENS as u64).contains(&n));
}

#[test]
fn file_memcg_pressure() {
    for p in PROFILES {
        let cfg = config(
            p,
            MachineConfig::simple(8192, 0),
            limit(1024),
            file_read(4, 1024, ZIPF, 20_000),
        );
        let (r, k, t) = run_checked(&cfg);
        assert_eq!(r.error, None);
        assert!(r.pgscan() > 0 && r.pgsteal() > 0, "{}: reclaim ran", p.name());
        assert!(r.memcg(Stat::WorkingsetRefaultFile) > 0, "{}: refaults", p.name());
        assert_eq!(r.vm(Stat::PgscanKswapd), 0, "no global pressure");
        assert_eq!(r.vm(Stat::PgscanAnon), 0, "no swap: file only");
        assert_read_only_generations(&k, t);
        // the PID controller saw evictions and recent refaults (in its current slot, or folded
        // into the averages when min_seq advanced)
        let g = k.p.lrugen(t, 0);
        let sum = |a: &[u64; 4]| a.iter().sum::<u64>();
        assert!(sum(&g.avg_total[FILE]) + sum(&g.evicted[0][FILE]) > 0, "{}", p.name());
        assert!(
            sum(&g.avg_refaulted[FILE]) + sum(&g.refaulted[0][FILE]) > 0,
            "{}",
            p.name()
        );
    }
}

#[test]
fn anon_with_swap_memcg_pressure() {
    for p in PROFILES {
        let cfg = config(
            p,
            MachineConfig::simple(8192, 4096),
            limit(512),
            anon(1024, ZIPF, 20_000),
        );
        let (r, k, t) = run_checked(&cfg);
        assert_eq!(r.error, None);
        assert!(r.pgscan() > 0, "{}", p.name());
        assert!(
            r.vm(Stat::Pswpout) > 0 && r.vm(Stat::Pswpin) > 0,
            "{}: swapped",
            p.name()
        );
        assert!(r.memcg(Stat::WorkingsetRefaultAnon) > 0, "{}: refaults", p.name());
        assert_aged(&k, t);
        let walks = k.p.lrugen(t, 0).mm_state.stats.iter().map(|s| s[2]).sum::<u64>();
        assert!(walks > 0, "{}: page-table walks found young PTEs", p.name());
    }
}

#[test]
fn file_global_pressure_kswapd() {
    for p in PROFILES {
        let cfg = config(
            p,
            MachineConfig::simple(2048, 0),
            MemcgConfig::default(),
            file_read(2, 2048, ZIPF, 20_000),
        );
        let (r, k, t) = run_checked(&cfg);
        assert_eq!(r.error, None);
        assert!(r.vm(Stat::PgscanKswapd) > 0, "{}: kswapd reclaimed", p.name());
        assert!(r.vm(Stat::Pageoutrun) > 0);
        assert!(r.refaults() > 0);
        assert_read_only_generations(&k, t);
    }
}

#[test]
fn anon_with_swap_global_pressure_kswapd() {
    for p in PROFILES {
        let cfg = config(
            p,
            MachineConfig::simple(2048, 4096),
            MemcgConfig::default(),
            anon(2560, Dist::Uniform, 10_000),
        );
        let (r, k, t) = run_checked(&cfg);
        assert_eq!(r.error, None);
        assert!(r.vm(Stat::PgscanKswapd) > 0, "{}", p.name());
        assert!(r.vm(Stat::Pswpout) > 0);
        assert!(r.vm(Stat::WorkingsetRefaultAnon) > 0);
        assert_aged(&k, t);
    }
}

/// The hardware and capability switches: no accessed bit in PTEs (rmap and look-around only), no
/// non-leaf PMD bit, walks disabled by the capability, and the statistics history on.
#[test]
fn switches_under_memcg_pressure() {
    type Tweak = (&'static str, fn(&mut MglruConfig));
    let tweaks: [Tweak; 4] = [
        ("no hw_pte_young", |c| c.hw_pte_young = false),
        ("no hw_nonleaf_pmd_young", |c| c.hw_nonleaf_pmd_young = false),
        ("caps 0x1", |c| c.caps = caps::CORE),
        ("stats", |c| c.stats = true),
    ];
    for p in PROFILES {
        for (name, tweak) in tweaks {
            let mut cfg = config(p, MachineConfig::simple(4096, 2048), limit(400), anon(768, ZIPF, 6_000));
            tweak(&mut cfg.mglru);
            let (r, k, t) = run_checked(&cfg);
            assert_eq!(r.error, None, "{} {name}", p.name());
            assert!(r.vm(Stat::Pswpout) > 0, "{} {name}", p.name());
            assert_aged(&k, t);
            let walked = k.p.lrugen(t, 0).mm_state.stats.iter().map(|s| s[0]).sum::<u64>() > 0;
            if name == "no hw_pte_young" || name == "caps 0x1" {
                assert!(!walked, "{} {name}: no page-table walk", p.name());
            } else if name != "stats" {
                // (with four history slots, `reset_mm_stats` clears each slot as the seq comes
                // round again, so old walks leave no trace)
                assert!(walked, "{} {name}", p.name());
            }
        }
    }
}

// -------------------------------------------------------------------------------------------------
// A mixed file + anon workload built by hand
// -------------------------------------------------------------------------------------------------

fn kernel(profile: Profile, pages: u64, swap: u64, tweak: impl FnOnce(&mut MglruConfig)) -> K {
    let mut cfg = MachineConfig::simple(pages, swap);
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    let mut c = MglruConfig {
        profile,
        ..MglruConfig::default()
    };
    tweak(&mut c);
    let p = Mglru::new(&m, c);
    Kernel::new(m, p)
}

/// Two tasks in `/t`: buffered reads and writes of three files, an executable and a plain file
/// mapping, and an anon region with loads and stores, skewed so that reclaim sees hot and cold
/// pages of every kind (`common::mixed_workload`; `writes: false` turns the writes into reads).
/// Returns the kernel after `steps` operations.
fn mixed(profile: Profile, pages: u64, swap: u64, max: Option<u64>, writes: bool, steps: u32) -> (K, MemcgId) {
    let mut k = kernel(profile, pages, swap, |_| {});
    let t = common::mixed_workload(&mut k, max, writes, steps, |k| {
        if let Some(e) = &k.m.check_failure {
            panic!("{}: {e}", profile.name());
        }
    });
    k.check().unwrap();
    (k, t)
}

fn vm(k: &K, s: Stat) -> i64 {
    k.m.vmstat().get(s)
}

#[test]
fn mixed_memcg_pressure_with_swap() {
    for p in PROFILES {
        let (k, t) = mixed(p, 4096, 2048, Some(600), true, 20_000);
        assert!(
            vm(&k, Stat::PgscanFile) > 0 && vm(&k, Stat::PgscanAnon) > 0,
            "{}",
            p.name()
        );
        assert!(vm(&k, Stat::Pswpout) > 0);
        assert!(vm(&k, Stat::WorkingsetRefaultFile) + vm(&k, Stat::WorkingsetRefaultAnon) > 0);
        assert_eq!(vm(&k, Stat::OomKill), 0);
        assert_aged(&k, t);
    }
}

/// Without swap the memcg can only shed page cache. Mainline MGLRU wakes the flushers when a
/// reclaim pass took only unqueued dirty file pages (§5.1), so buffered writes are cleaned and
/// reclaimed. 6.1's MGLRU never wakes them (only the classic `shrink_inactive_list` does;
/// `sort_folio` parks dirty file folios in `min_seq + 1` without isolating them): the real
/// kernel relies on background writeback and `balance_dirty_pages` throttling, which this
/// model does not have yet — so the 6.1 run reads instead of writing.
#[test]
fn mixed_memcg_pressure_without_swap() {
    for p in PROFILES {
        let (k, t) = mixed(p, 4096, 0, Some(800), p == Profile::V6_17, 20_000);
        assert!(vm(&k, Stat::PgscanFile) > 0, "{}", p.name());
        assert_eq!(
            vm(&k, Stat::PgscanAnon),
            0,
            "{}: no swap: anon is never scanned",
            p.name()
        );
        assert_eq!(vm(&k, Stat::OomKill), 0);
        assert_aged(&k, t);
    }
}

#[test]
fn mixed_global_pressure_with_swap() {
    for p in PROFILES {
        let (k, t) = mixed(p, 1024, 2048, None, true, 20_000);
        assert!(vm(&k, Stat::PgscanKswapd) > 0, "{}", p.name());
        assert!(vm(&k, Stat::Pswpout) > 0);
        assert_eq!(vm(&k, Stat::OomKill), 0);
        assert_aged(&k, t);
    }
}

#[test]
fn mixed_global_pressure_without_swap() {
    for p in PROFILES {
        let (k, t) = mixed(p, 1024, 0, None, true, 20_000);
        assert!(vm(&k, Stat::PgscanKswapd) > 0, "{}", p.name());
        assert_eq!(vm(&k, Stat::PgscanAnon), 0);
        assert_eq!(vm(&k, Stat::OomKill), 0);
        assert_aged(&k, t);
    }
}

// -------------------------------------------------------------------------------------------------
// Property: random small op sequences and configurations keep every invariant
// -------------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    Read(u8, u8),
    Write(u8, u8),
    Load(u8),
    Store(u8),
    MapLoad(u8),
    MapStore(u8),
    /// The task is switched in (`lru_gen_use_mm`).
    Switch,
    /// `try_to_inc_max_seq` from the current `max_seq` (debugfs `+`), forced or not.
    Age(bool),
    /// One `evict_folios` batch of memcg reclaim.
    Evict,
    /// `try_to_free_mem_cgroup_pages` of a few pages.
    Reclaim(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..3, any::<u8>()).prop_map(|(f, i)| Op::Read(f, i % 64)),
        2 => (0u8..3, any::<u8>()).prop_map(|(f, i)| Op::Write(f, i % 64)),
        3 => any::<u8>().prop_map(|i| Op::Load(i % 96)),
        3 => any::<u8>().prop_map(|i| Op::Store(i % 96)),
        3 => any::<u8>().prop_map(|i| Op::MapLoad(i % 64)),
        1 => any::<u8>().prop_map(|i| Op::MapStore(i % 64)),
        1 => Just(Op::Switch),
        1 => any::<bool>().prop_map(Op::Age),
        1 => Just(Op::Evict),
        1 => (1u8..64).prop_map(Op::Reclaim),
    ]
}

fn profile() -> impl Strategy<Value = Profile> {
    prop_oneof![Just(Profile::V6_1), Just(Profile::V6_17), Just(Profile::MGLRU_FG)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Random reads, writes, loads, stores, aging and eviction on a small machine, under a random
    /// profile, memcg limit, swap size, swappiness (0, 60, 200), capability bits and hardware
    /// accessed-bit support; the checker (engine and MGLRU) after every reclaim pass and every
    /// operation, and again after the task exits (which frees folios that walks may have
    /// promoted without relinking).
    #[test]
    fn random_ops_keep_invariants(
        profile in profile(),
        pages in 160u64..640,
        swap in prop_oneof![Just(0u64), 8u64..256],
        max in prop_oneof![Just(None), (24u64..300).prop_map(Some)],
        swappiness in prop_oneof![Just(0u32), Just(60), Just(200)],
        caps_bits in prop_oneof![Just(caps::CORE), Just(caps::CORE | caps::MM_WALK),
                                 Just(caps::CORE | caps::NONLEAF_YOUNG), Just(0x7u32)],
        hw_pte_young in any::<bool>(),
        hw_nonleaf_pmd_young in any::<bool>(),
        stats in any::<bool>(),
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        let mut k = kernel(profile, pages, swap, |c| {
            c.caps = caps_bits;
            c.hw_pte_young = hw_pte_young;
            c.hw_nonleaf_pmd_young = hw_nonleaf_pmd_young;
            c.stats = stats;
        });
        let t = k.create_memcg(ROOT_MEMCG, "t");
        k.m.memcgs[t].swappiness = swappiness;
        if let Some(max) = max {
            k.m.memcgs[t].max = max;
        }
        let task = k.m.create_mm(t);
        let files: Vec<u32> = (0..3).map(|i| k.m.create_file(&format!("f{i}"), 64, Advice::Normal)).collect();
        let heap = k.m.mmap(task, 96, vmf::WRITE, None);
        let map = k.m.mmap(task, 64, vmf::WRITE, Some((files[0], 0)));
        let lv = k.p.lv(t, 0);
        for op in ops {
            let r = match op {
                Op::Read(f, i) => k.read_page(task, files[f as usize], i as u64).map(|_| ()),
                Op::Write(f, i) => k.write_page(task, files[f as usize], i as u64).map(|_| ()),
                Op::Load(i) => k.access(task, heap + i as u32, false).map(|_| ()),
                Op::Store(i) => k.access(task, heap + i as u32, true).map(|_| ()),
                Op::MapLoad(i) => k.access(task, map + i as u32, false).map(|_| ()),
                Op::MapStore(i) => k.access(task, map + i as u32, true).map(|_| ()),
                Op::Switch => {
                    k.m.mms[task as usize].lru_gen_bitmap = !0;
                    Ok(())
                }
                Op::Age(force) => {
                    let sc = ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Direct, Some(t), usize::MAX);
                    let sw = eviction::get_swappiness(&k.p, &k.m, t, 0, &sc);
                    let seq = k.p.lruvecs[lv].max_seq;
                    k.p.try_to_inc_max_seq(&mut k.m, lv, seq, sw, force);
                    Ok(())
                }
                Op::Evict => {
                    let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Direct, Some(t), usize::MAX);
                    let sw = eviction::get_swappiness(&k.p, &k.m, t, 0, &sc);
                    eviction::evict_folios(&mut k.p, &mut k.m, t, 0, &mut sc, sw, u64::MAX);
                    Ok(())
                }
                Op::Reclaim(n) => {
                    try_to_free_mem_cgroup_pages(&mut k.m, &mut k.p, t, n as u64, true);
                    Ok(())
                }
            };
            match r {
                Ok(()) | Err(AccessError::Killed(_)) | Err(AccessError::Alloc(_)) => {}
                Err(e) => prop_assert!(false, "unexpected failure: {e}"),
            }
            if let Some(e) = &k.m.check_failure {
                prop_assert!(false, "{e}");
            }
            if let Err(e) = k.check() {
                prop_assert!(false, "after {op:?}: {e}");
            }
        }
        k.exit(task);
        if let Err(e) = k.check() {
            prop_assert!(false, "after exit: {e}");
        }
        let g = k.p.lrugen(t, 0);
        for gen in 0..MAX_NR_GENS {
            prop_assert_eq!(g.gen_pages(gen, ANON), 0, "anon left after exit");
        }
    }
}

// -------------------------------------------------------------------------------------------------
// The checker catches corruption
// -------------------------------------------------------------------------------------------------

/// A kernel with anon and file pages spread over several generations, some of them promoted by a
/// walk and not yet relinked.
fn populated(profile: Profile) -> (K, MemcgId, Vec<FolioId>) {
    let mut k = kernel(profile, 2048, 1024, |_| {});
    let t = k.create_memcg(ROOT_MEMCG, "t");
    let task = k.m.create_mm(t);
    let f = k.m.create_file("f", 64, Advice::Normal);
    let va = k.m.mmap(task, 96, vmf::WRITE, None);
    for i in 0..96 {
        k.access(task, va + i, true).unwrap();
    }
    for i in 0..32 {
        k.read_page(task, f, i).unwrap();
    }
    let lv = k.p.lv(t, 0);
    for _ in 0..2 {
        let seq = k.p.lruvecs[lv].max_seq;
        k.p.try_to_inc_max_seq(&mut k.m, lv, seq, 60, true);
        for i in 0..8 {
            k.access(task, va + i, false).unwrap();
        }
    }
    k.check().unwrap();
    let ids = (0..96)
        .map(|i| k.m.pte(task, va + i) & lrugen::mm::vm::pte::PFN_MASK)
        .collect();
    (k, t, ids)
}

#[track_caller]
fn assert_caught(k: &K, what: &str, want: &str) {
    match check_invariants(&k.m, &k.p) {
        Ok(()) => panic!("{what}: the checker found nothing"),
        Err(e) => assert!(e.contains(want), "{what}: unexpected message: {e}"),
    }
}

#[test]
fn checker_catches_corrupt_generations() {
    for p in PROFILES {
        // a generation's page count off by one
        let (mut k, t, _) = populated(p);
        let lv = k.p.lv(t, 0);
        let gen = gen_from_seq(k.p.lruvecs[lv].max_seq - 1);
        k.p.lruvecs[lv].nr_pages[gen][ANON][0] += 1;
        assert_caught(&k, "nr_pages + 1", "nr_pages");

        // a folio's gen counter pointing at a generation that is not live for its type
        let (mut k, t, ids) = populated(p);
        let g = k.p.lrugen(t, 0).clone();
        let dead = (0..MAX_NR_GENS).find(|&x| !(g.min_seq[ANON]..=g.max_seq).any(|s| gen_from_seq(s) == x));
        let id = ids[50];
        let old = k.m.folios[id].gen_counter();
        match dead {
            Some(x) => k.m.folios[id].set_gen_counter(x as u32 + 1),
            // all four slots live: move it to another one without fixing the sizes
            None => k.m.folios[id].set_gen_counter(old % MAX_NR_GENS as u32 + 1),
        }
        assert_caught(&k, "gen counter", "holds");

        // a gen counter cleared while the folio is still on a list
        let (mut k, _, ids) = populated(p);
        k.m.folios[ids[60]].set_gen_counter(0);
        assert_caught(&k, "gen counter 0", "gen counter 0");

        // PG_active left set on a folio on a generation list
        let (mut k, _, ids) = populated(p);
        k.m.folios[ids[61]].set(pg::ACTIVE);
        assert_caught(&k, "PG_active", "flags");

        // the compatibility counters out of step with the generations
        let (mut k, t, _) = populated(p);
        k.m.update_lru_size_raw(t, 0, 0, Lru::InactiveAnon, 1);
        k.m.update_lru_size_raw(t, 0, 0, Lru::ActiveAnon, -1);
        assert_caught(&k, "compat counters", "nr_inactive_anon");

        // a seq window of five generations
        let (mut k, t, _) = populated(p);
        let lv = k.p.lv(t, 0);
        let lg = &mut k.p.lruvecs[lv];
        lg.min_seq[FILE] = lg.max_seq - 4;
        assert_caught(&k, "window", "generations");
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! The invariant checker (`reclaim::check::check_invariants`) on real runs: the built-in workloads
//! and a hand-built mixed one, under global and memcg pressure, with and without swap, with the
//! checker running after every `shrink_node` pass; a property test over random small op sequences;
//! and proof that the checker catches corruption.

mod common;

use common::*;
use lrugen::kernel::AccessError;
use lrugen::mm::folio::pg;
use lrugen::mm::memcg::ROOT_MEMCG;
use lrugen::mm::vm::vmf;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Lru, MachineConfig};
use lrugen::reclaim::check::check_invariants;
use lrugen::reclaim::vmscan::shrink_node;
use lrugen::reclaim::Policy as _;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunResult};
use lrugen::workload::dist::Dist;
use lrugen::workload::WorkloadSpec;
use proptest::prelude::*;

// -------------------------------------------------------------------------------------------------
// Built-in workloads with the checker on
// -------------------------------------------------------------------------------------------------

fn run_checked(machine: MachineConfig, memcg: MemcgConfig, workload: WorkloadSpec) -> RunResult {
    let cfg = RunConfig {
        seed: 42,
        check: true,
        ..RunConfig::new(machine, memcg, workload, PolicyKind::Classic)
    };
    match sim::run(&cfg, None, &mut |_, _| {}) {
        Ok(r) => r,
        Err(e) => panic!("{}: {e}", cfg.workload.describe()),
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

const ZIPF: Dist = Dist::Zipf { theta: 0.9 };

#[test]
fn file_read_uniform_memcg_pressure() {
    let r = run_checked(
        MachineConfig::simple(8192, 0),
        limit(1024),
        file_read(4, 1024, Dist::Uniform, 20_000),
    );
    assert_eq!(r.error, None);
    assert!(r.pgscan() > 0 && r.pgsteal() > 0, "reclaim ran");
    assert_eq!(r.vm(Stat::PgscanKswapd), 0, "no global pressure");
}

#[test]
fn file_read_zipf_memcg_pressure_with_swap() {
    let r = run_checked(
        MachineConfig::simple(8192, 2048),
        limit(1024),
        file_read(2, 2048, ZIPF, 20_000),
    );
    assert_eq!(r.error, None);
    assert!(r.pgscan() > 0);
    assert!(r.memcg(Stat::WorkingsetRefaultFile) > 0);
}

#[test]
fn file_read_zipf_global_pressure() {
    let r = run_checked(
        MachineConfig::simple(2048, 0),
        MemcgConfig::default(),
        file_read(2, 2048, ZIPF, 20_000),
    );
    assert_eq!(r.error, None);
    assert!(r.vm(Stat::PgscanKswapd) > 0, "kswapd reclaimed");
    assert!(r.vm(Stat::Pageoutrun) > 0);
}

#[test]
fn file_read_two_zones_memcg_and_global_pressure() {
    // folios in DMA32 and Normal: the checker compares each zone's nr_zone_* items with the
    // folios on the lists, which batched isolation (update_lru_sizes) must keep per zone
    use lrugen::mm::node::ZoneType;
    let machine = MachineConfig {
        nodes: vec![vec![(ZoneType::Dma32, 1024), (ZoneType::Normal, 1024)]],
        ..MachineConfig::simple(2048, 0)
    };
    for memcg in [limit(1200), MemcgConfig::default()] {
        let r = run_checked(machine.clone(), memcg, file_read(2, 2048, ZIPF, 20_000));
        assert_eq!(r.error, None);
        assert!(r.pgscan() > 0 && r.pgsteal() > 0, "reclaim ran");
    }
}

#[test]
fn file_read_uniform_global_pressure_with_swap() {
    let r = run_checked(
        MachineConfig::simple(2048, 1024),
        MemcgConfig::default(),
        file_read(1, 4096, Dist::Uniform, 20_000),
    );
    assert_eq!(r.error, None);
    assert!(r.vm(Stat::PgscanKswapd) > 0);
}

#[test]
fn anon_with_swap_memcg_pressure() {
    let r = run_checked(MachineConfig::simple(8192, 4096), limit(512), anon(1024, ZIPF, 20_000));
    assert_eq!(r.error, None);
    assert!(r.pgscan() > 0);
    assert!(r.vm(Stat::Pswpout) > 0, "anon was swapped out");
    assert!(r.vm(Stat::Pswpin) > 0);
}

#[test]
fn anon_with_swap_global_pressure() {
    let r = run_checked(
        MachineConfig::simple(2048, 4096),
        MemcgConfig::default(),
        anon(2560, Dist::Uniform, 10_000),
    );
    assert_eq!(r.error, None);
    assert!(r.vm(Stat::PgscanKswapd) > 0);
    assert!(r.vm(Stat::Pswpout) > 0);
}

/// Anon without swap in a small memcg: nothing is reclaimable, the memcg OOM killer ends the run;
/// the checker ran after every fruitless reclaim pass and found nothing wrong.
#[test]
fn anon_without_swap_memcg_pressure_ooms_cleanly() {
    let r = run_checked(
        MachineConfig::simple(8192, 0),
        limit(256),
        anon(512, Dist::Uniform, 1000),
    );
    let err = r.error.clone().expect("the task was OOM-killed");
    assert!(err.contains("killed"), "{err}");
    assert_eq!(r.memory_events.unwrap().oom_kill, 1);
    assert_eq!(r.vm(Stat::OomKill), 1);
}

// -------------------------------------------------------------------------------------------------
// A mixed file + anon setup built by hand
// -------------------------------------------------------------------------------------------------

/// Two tasks in `/t`: buffered reads and writes of three files, an executable and a plain file
/// mapping, and an anon region with loads and stores; skewed so that reclaim sees hot and cold
/// pages of every kind (`common::mixed_workload`). Returns the kernel after `steps` operations.
fn mixed(pages: u64, swap: u64, max: Option<u64>, steps: u32) -> K {
    let mut k = kernel_kmem(pages, swap);
    mixed_workload(&mut k, max, true, steps, |k| {
        assert!(k.m.check_failure.is_none(), "{}", k.m.check_failure.as_ref().unwrap());
    });
    k.check().unwrap();
    assert_accounting(&k);
    k
}

#[test]
fn mixed_memcg_pressure_with_swap() {
    let k = mixed(4096, 2048, Some(600), 60_000);
    assert!(vm(&k, Stat::PgscanFile) > 0);
    assert!(vm(&k, Stat::PgscanAnon) > 0);
    assert!(vm(&k, Stat::Pswpout) > 0);
    // memcg reclaim deactivated; /proc/vmstat counts it from 7.2 on (`node_reclaim_stats`)
    let node = if k.p.switches().node_reclaim_stats {
        mc(&k, 1, Stat::Pgrefill)
    } else {
        0
    };
    assert!(
        vm(&k, Stat::Pgrefill) == node && mc(&k, 1, Stat::Pgrefill) > 0,
        "memcg reclaim deactivated: pgrefill {} globally, {} in the memcg",
        vm(&k, Stat::Pgrefill),
        mc(&k, 1, Stat::Pgrefill)
    );
    assert_eq!(vm(&k, Stat::OomKill), 0);
}

#[test]
fn mixed_memcg_pressure_without_swap() {
    let k = mixed(4096, 0, Some(800), 20_000);
    assert!(vm(&k, Stat::PgscanFile) > 0);
    assert_eq!(vm(&k, Stat::PgscanAnon), 0, "no swap: anon is never scanned");
    assert_eq!(vm(&k, Stat::OomKill), 0);
}

#[test]
fn mixed_global_pressure_with_swap() {
    let k = mixed(1024, 2048, None, 120_000);
    assert!(vm(&k, Stat::PgscanKswapd) > 0);
    // long enough for the memcg statistics that reclaim reads to be flushed with the active
    // lists grown: the writes' dirty folios, activated by reclaim, come back once written
    // (`pgrotated`) and feed it for a while
    assert!(vm(&k, Stat::Pgrefill) > 0);
    assert!(vm(&k, Stat::Pgrotated) > 0);
    assert_eq!(vm(&k, Stat::OomKill), 0);
}

#[test]
fn mixed_global_pressure_without_swap() {
    let k = mixed(1024, 0, None, 20_000);
    assert!(vm(&k, Stat::PgscanKswapd) > 0);
    assert_eq!(vm(&k, Stat::PgscanAnon), 0);
    assert_eq!(vm(&k, Stat::OomKill), 0);
}

// -------------------------------------------------------------------------------------------------
// Property: random small op sequences keep every invariant
// -------------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    Read(u8, u8),
    Write(u8, u8),
    Load(u8),
    Store(u8),
    MapLoad(u8),
    MapStore(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..3, any::<u8>()).prop_map(|(f, i)| Op::Read(f, i % 64)),
        (0u8..3, any::<u8>()).prop_map(|(f, i)| Op::Write(f, i % 64)),
        any::<u8>().prop_map(|i| Op::Load(i % 96)),
        any::<u8>().prop_map(|i| Op::Store(i % 96)),
        any::<u8>().prop_map(|i| Op::MapLoad(i % 64)),
        any::<u8>().prop_map(|i| Op::MapStore(i % 64)),
    ]
}

proptest! {
    // 64 cases by default; PROPTEST_CASES=n for a longer run
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    /// Random reads, writes, loads and stores on a small machine with a random memcg limit, swap
    /// size and swappiness, the checker on after every reclaim pass and after every operation;
    /// the accounting identities recounted independently.
    #[test]
    fn random_ops_keep_invariants(
        pages in 160u64..640,
        swap in prop_oneof![Just(0u64), 8u64..256],
        max in prop_oneof![Just(None), (24u64..300).prop_map(Some)],
        swappiness in 0u32..=200,
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        let mut k = kernel_kmem(pages, swap);
        let t = k.create_memcg(ROOT_MEMCG, "t");
        k.m.memcgs[t].swappiness = swappiness;
        if let Some(max) = max {
            k.m.memcgs[t].max = max;
        }
        let task = k.m.create_mm(t);
        let files: Vec<u32> = (0..3).map(|i| file(&mut k, &format!("f{i}"), 64)).collect();
        let heap = k.m.mmap(task, 96, vmf::WRITE, None);
        let map = k.m.mmap(task, 64, vmf::WRITE, Some((files[0], 0)));
        for op in ops {
            let r = match op {
                Op::Read(f, i) => k.read_page(task, files[f as usize], i as u64),
                Op::Write(f, i) => k.write_page(task, files[f as usize], i as u64),
                Op::Load(i) => k.access(task, heap + i as u32, false),
                Op::Store(i) => k.access(task, heap + i as u32, true),
                Op::MapLoad(i) => k.access(task, map + i as u32, false),
                Op::MapStore(i) => k.access(task, map + i as u32, true),
            };
            match r {
                Ok(_) | Err(AccessError::Killed(_)) => {}
                Err(e) => prop_assert!(false, "{:?}: {}", op, e),
            }
            prop_assert!(k.check().is_ok(), "after {:?}: {}", op, k.check().unwrap_err());
            if let Some(max) = max {
                prop_assert!(k.m.memcgs[t].usage <= max);
            }
        }
        assert_accounting(&k);
    }
}

// -------------------------------------------------------------------------------------------------
// The checker catches corruption
// -------------------------------------------------------------------------------------------------

/// A memcg with a few inactive file pages, two active ones and a mapped anon page.
fn small() -> (K, u16, u32) {
    let (mut k, t, task) = setup(1024, 64);
    let f = file(&mut k, "f", 16);
    for i in 0..8 {
        k.read_page(task, f, i).unwrap();
    }
    for i in [0, 1, 0, 1] {
        k.read_page(task, f, i).unwrap();
    }
    let va = k.m.mmap(task, 4, vmf::WRITE, None);
    k.access(task, va, true).unwrap();
    assert_eq!(list_len(&k, t, Lru::ActiveFile), 2);
    check_invariants(&k.m, &k.p).unwrap();
    (k, t, f)
}

#[track_caller]
fn assert_caught(k: &K, what: &[&str]) {
    let e = check_invariants(&k.m, &k.p).expect_err("the corruption went unnoticed");
    for w in what {
        assert!(e.contains(w), "error {e:?} does not name {w:?}");
    }
}

#[test]
fn checker_catches_a_wrong_list_length() {
    let (mut k, t, _) = small();
    let lv = k.m.lruvec(t, 0);
    k.p.lruvecs[lv].lists[Lru::InactiveFile as usize].len += 1;
    assert_caught(&k, &["inactive_file", "length"]);
    k.p.lruvecs[lv].lists[Lru::InactiveFile as usize].len -= 1;
    check_invariants(&k.m, &k.p).unwrap();
}

#[test]
fn checker_catches_a_wrong_active_flag() {
    let (mut k, _, f) = small();
    let id = cached(&k, f, 5);
    k.m.folios[id].set(pg::ACTIVE); // on the inactive list but flagged active
    assert_caught(&k, &[&format!("folio {id}"), "inactive_file", "ActiveFile"]);
}

#[test]
fn checker_catches_a_missing_lru_flag() {
    let (mut k, _, f) = small();
    let id = cached(&k, f, 6);
    k.m.folios[id].clear(pg::LRU);
    assert_caught(&k, &[&format!("folio {id}"), "PG_lru"]);
}

#[test]
fn checker_catches_a_wrong_lru_counter() {
    let (mut k, t, _) = small();
    k.m.mod_lruvec_state(t, 0, Stat::NrActiveFile, 1);
    assert_caught(&k, &["nr_active_file"]);
}

#[test]
fn checker_catches_wrong_memcg_usage() {
    let (mut k, t, _) = small();
    k.m.memcgs[t].usage += 1; // /t only: its ancestors are right
    assert_caught(&k, &["/t", "usage"]);
    k.m.memcgs[t].usage -= 1;
    k.m.memcgs.force_charge(t, 1); // /t and the root: the root is checked first
    assert_caught(&k, &["(/)", "usage"]);
}

#[test]
fn checker_catches_a_wrong_mapcount() {
    let (mut k, _, f) = small();
    let id = cached(&k, f, 2);
    k.m.folios[id].mapcount += 1;
    assert_caught(&k, &[&format!("folio {id}"), "mapcount"]);
}

#[test]
fn checker_catches_a_broken_page_cache_slot() {
    let (mut k, _, f) = small();
    let id = cached(&k, f, 3);
    k.m.folios[id].index = 9;
    assert_caught(&k, &["page cache", "index 3"]);
}

/// With `debug_checks` on, a reclaim pass over a corrupted machine records the failure.
#[test]
fn debug_checks_record_the_failure_after_shrink_node() {
    let (mut k, t, _) = small();
    let lv = k.m.lruvec(t, 0);
    k.p.lruvecs[lv].lists[Lru::ActiveFile as usize].len += 1;
    let mut sc = sc_kswapd();
    shrink_node(&mut k.m, &mut k.p, 0, &mut sc);
    let e = k.m.check_failure.clone().expect("debug_checks recorded the violation");
    assert!(e.contains("after shrink_node") && e.contains("active_file"), "{e}");
    assert!(k.check().is_err());
}

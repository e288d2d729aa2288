// SPDX-License-Identifier: GPL-2.0-only
//! `memory.stat` as each kernel prints it (`mm::memory_stat`).
//!
//! * Golden: each kernel preset prints exactly the lines, in the order, that its kernel's
//!   `memcg_stat_format` prints with Debian's amd64 configuration (the lists below, read off the
//!   Debian sources; `lrugen-kernel`'s `tests/memory_stat.rs` checks their sets against the
//!   guests' own `memory.stat` in the fixtures).
//! * Values: a modelled counter shows the model's count (`pswpin`/`pswpout` per memcg equal the
//!   global ones with a single memcg), a line the model has none of shows 0.

mod common;

use common::memory_stat_lists::{DEBIAN_6_1, DEBIAN_6_12, DEBIAN_7_2};
use lrugen::control::{self, CtlFile};
use lrugen::mm::memory_stat::{self, Value, LINES};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::MachineConfig;
use lrugen::reclaim::mglru::Profile;
use lrugen::report;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunResult};
use lrugen::workload::dist::Dist;
use lrugen::workload::WorkloadSpec;

fn names(p: Profile) -> Vec<&'static str> {
    memory_stat::lines(&p.switches).map(|l| l.name).collect()
}

#[test]
fn each_kernel_prints_its_lines_in_its_order() {
    // (the line counts of the guests' memory.stat: 51, 65 and 71 names in the fixtures)
    for (p, kernel, n) in [
        (Profile::V6_1, DEBIAN_6_1, 51),
        (Profile::V6_12, DEBIAN_6_12, 65),
        (Profile::V7_2, DEBIAN_7_2, 71),
    ] {
        assert_eq!(kernel.len(), n, "{}", p.name());
        assert_eq!(names(p), kernel, "{}", p.name());
    }
}

/// A control script's read of `memory.stat` (what `ctl::counter_moves` puts beside the guest's)
/// prints the lines of the policy's kernel.
#[test]
fn control_reads_print_the_kernels_lines() {
    for (p, kernel) in [
        (Profile::V6_1, DEBIAN_6_1),
        (Profile::V6_12, DEBIAN_6_12),
        (Profile::V7_2, DEBIAN_7_2),
    ] {
        let (k, t, _) = common::mglru_setup(p, 4096, 0, Some(1024));
        let text = control::read(&k, t, CtlFile::MemoryStat).unwrap();
        let got: Vec<&str> = text.lines().map(|l| l.split_once(' ').unwrap().0).collect();
        assert_eq!(got, kernel, "{}", p.name());
    }
}

/// The lines 7.2 added (or moved) since 6.12 and 6.1: not printed on 6.1.
#[test]
fn lines_of_later_kernels_are_absent_on_6_1() {
    let old = names(Profile::V6_1);
    for n in [
        "pswpin",
        "pswpout",
        "zswap_incomp",
        "pgscan_proactive",
        "pgsteal_proactive",
        "pgdemote_proactive",
        "pgscan_khugepaged",
        "swpin_zero",
        "zswpwb",
        "thp_swpout",
        "pgpromote_success",
        "numa_pte_updates",
    ] {
        assert!(names(Profile::V7_2).contains(&n), "7.2 prints {n}");
        assert!(!old.contains(&n), "6.1 does not print {n}");
    }
    // 6.17 (inferred): the events layout of 6.12 with 6.15's proactive and swap lines
    let mainline = names(Profile::V6_17);
    let at = |n: &str| mainline.iter().position(|&x| x == n).unwrap();
    assert!(at("pgsteal") < at("pswpin") && at("pswpout") < at("pgscan_kswapd"));
    assert!(at("pgscan_khugepaged") + 1 == at("pgscan_proactive"));
    assert!(!mainline.contains(&"zswap_incomp"));
}

/// A 6 MiB anon region in a 4 MiB memcg with swap, under each kernel: what the memcg swapped out
/// and in is what the machine did (one memcg), the lines print the counters they name, and what
/// the model has none of is 0.
#[test]
fn modelled_counters_show_their_values() {
    for profile in [Profile::V6_1, Profile::V6_12, Profile::V7_2] {
        for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
            let r = swap_run(profile, policy);
            let what = format!("{} {policy:?}", profile.name());
            let vm = r.vmstat.as_ref().unwrap();
            let ms = r.memory_stat.as_ref().unwrap();
            assert!(
                vm.get(Stat::Pswpout) > 0 && vm.get(Stat::Pswpin) > 0,
                "{what}: the run swaps"
            );
            assert_eq!(ms.get(Stat::Pswpout), vm.get(Stat::Pswpout), "{what}: pswpout");
            assert_eq!(ms.get(Stat::Pswpin), vm.get(Stat::Pswpin), "{what}: pswpin");
            let text = report::memory_stat(&r).unwrap();
            let lines: Vec<(&str, u64)> = text
                .lines()
                .map(|l| {
                    let (n, v) = l.split_once(' ').unwrap();
                    (n, v.parse().unwrap())
                })
                .collect();
            let got: Vec<&str> = lines.iter().map(|l| l.0).collect();
            assert_eq!(got, names(profile), "{what}: the run prints its kernel's lines");
            let get = |n: &str| lines.iter().find(|l| l.0 == n).map(|l| l.1);
            if profile.switches.memcg_swap_io_stats {
                assert_eq!(get("pswpout"), Some(vm.get(Stat::Pswpout) as u64), "{what}");
                assert_eq!(get("pswpin"), Some(vm.get(Stat::Pswpin) as u64), "{what}");
            } else {
                assert_eq!(get("pswpout"), None, "{what}");
            }
            assert_eq!(get("anon"), Some(ms.get(Stat::NrAnonPages) as u64 * 4096), "{what}");
            assert!(get("anon").unwrap() > 0, "{what}");
            assert_eq!(
                get("pgsteal"),
                Some((ms.get(Stat::PgstealKswapd) + ms.get(Stat::PgstealDirect)) as u64),
                "{what}: no proactive reclaim in the run"
            );
            assert!(get("pgsteal").unwrap() > 0, "{what}");
            for l in memory_stat::lines(&profile.switches).filter(|l| l.value == Value::Zero) {
                assert_eq!(get(l.name), Some(0), "{what}: {} is not modelled", l.name);
            }
        }
    }
}

/// Every counter line reads the counter of its name; the others are sums or not modelled.
#[test]
fn counter_lines_read_the_counters_they_name() {
    for l in LINES {
        match l.value {
            Value::Count(s) => assert_eq!(s.name(), l.name),
            Value::Pages(s) => assert!(
                [
                    ("anon", "nr_anon_pages"),
                    ("file", "nr_file_pages"),
                    ("kernel", "kernel"),
                    ("pagetables", "nr_page_table_pages"),
                    ("file_mapped", "nr_mapped"),
                    ("file_dirty", "nr_dirty"),
                    ("file_writeback", "nr_writeback"),
                    ("swapcached", "nr_swapcached"),
                    ("anon_thp", "nr_anon_transparent_hugepages"),
                ]
                .contains(&(l.name, s.name()))
                    || format!("nr_{}", l.name) == s.name(),
                "{} reads {}",
                l.name,
                s.name()
            ),
            Value::Bytes(s) => assert_eq!(format!("nr_{}", l.name), s.name()),
            Value::Kb(s) => assert_eq!(format!("nr_{}", l.name), s.name()),
            Value::SlabSum | Value::PgscanSum | Value::PgstealSum | Value::Zero => {}
        }
    }
}

fn swap_run(profile: Profile, policy: PolicyKind) -> RunResult {
    let memcg_pages = 1024;
    let machine = MachineConfig::simple(memcg_pages + 8192, 4096);
    let memcg = MemcgConfig {
        max: Some(memcg_pages),
        ..Default::default()
    };
    let workload = WorkloadSpec::Anon {
        compressed_pct: 0,
        pages: 1536,
        write_ratio: 0.3,
        dist: Dist::Zipf { theta: 0.7 },
        accesses: 20_000,
    };
    let mut cfg = RunConfig::new(machine, memcg, workload, policy);
    cfg.mglru.profile = profile;
    let r = sim::run(&cfg, None, &mut |_, _| {}).unwrap();
    assert_eq!(r.error, None);
    r
}

// SPDX-License-Identifier: GPL-2.0-only
//! The model's reclaim trace (`lrugen::mm::ftrace`, `RunConfig::ftrace`): its events add up to the
//! counters they report (the pages a memcg reclaim returns are the `pgsteal` of the run; the
//! classic LRU's `nr_scanned` are its `pgscan`), every aging is traced with the generation it
//! made, the lines are ftrace's, and tracing leaves the run as it was.

mod common;

use lrugen::mm::vmstat::Stat;
use lrugen::sim::{self, PolicyKind, RunConfig, RunResult};

const EVENTS: [&str; 6] = [
    "vmscan/mm_vmscan_lru_shrink_inactive",
    "vmscan/mm_vmscan_memcg_reclaim_begin",
    "vmscan/mm_vmscan_memcg_reclaim_end",
    "p:age try_to_inc_max_seq",
    "p:use lru_gen_use_mm",
    "p:ref folio_referenced_one",
];

/// `common::anon_memcg_reclaim`, traced or not.
fn config(policy: PolicyKind, ftrace: bool) -> RunConfig {
    let mut c = common::anon_memcg_reclaim(policy);
    if ftrace {
        c.ftrace = EVENTS.iter().map(|e| e.to_string()).collect();
    }
    c
}

fn run(c: &RunConfig) -> RunResult {
    sim::run(c, None, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// The lines of event `name`, each as its `key=value` fields.
fn events<'a>(r: &'a RunResult, name: &str) -> Vec<Vec<(&'a str, &'a str)>> {
    let tag = format!(": {name}: ");
    r.ftrace
        .lines()
        .filter_map(|l| l.split_once(&tag).map(|(_, f)| f))
        .map(|f| f.split_whitespace().filter_map(|kv| kv.split_once('=')).collect())
        .collect()
}

fn sum(lines: &[Vec<(&str, &str)>], key: &str) -> i64 {
    lines
        .iter()
        .map(|l| {
            l.iter()
                .find(|(k, _)| *k == key)
                .map_or(0, |(_, v)| v.parse::<i64>().unwrap())
        })
        .sum()
}

fn vm(r: &RunResult, s: Stat) -> i64 {
    r.vmstat.as_ref().unwrap().get(s)
}

#[test]
fn the_trace_adds_up_to_the_counters() {
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        let r = run(&config(policy, true));
        let what = format!("{policy:?}");
        assert_eq!(vm(&r, Stat::PgscanKswapd), 0, "{what}: memcg reclaim only");
        let begin = events(&r, "mm_vmscan_memcg_reclaim_begin");
        let end = events(&r, "mm_vmscan_memcg_reclaim_end");
        assert!(
            !begin.is_empty() && begin.len() == end.len(),
            "{what}: every call begins and ends"
        );
        let steal = vm(&r, Stat::PgstealDirect);
        assert!(
            steal > 0 && vm(&r, Stat::Pswpout) > 0,
            "{what}: the run reclaims and swaps"
        );
        assert_eq!(sum(&end, "nr_reclaimed"), steal, "{what}: what the calls returned");
        let passes = events(&r, "mm_vmscan_lru_shrink_inactive");
        assert_eq!(sum(&passes, "nr_reclaimed"), steal, "{what}: what the passes reclaimed");
        if policy == PolicyKind::Classic {
            assert_eq!(sum(&passes, "nr_scanned"), vm(&r, Stat::PgscanDirect), "{what}: pgscan");
        }
        assert!(
            passes
                .iter()
                .all(|l| l.contains(&("flags", "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"))),
            "{what}: anon passes, flagged as the kernel flags them"
        );
        // every line as ftrace prints it: TASK-PID [CPU] flags SECONDS.MICROS: EVENT:
        for l in r.ftrace.lines() {
            let (head, _) = l.split_once(": ").unwrap();
            let w: Vec<&str> = head.split_whitespace().collect();
            assert_eq!(w.len(), 4, "{l}");
            assert!(w[0].starts_with("task-") && w[1] == "[000]" && w[2] == ".....", "{l}");
            let (s, us) = w[3].split_once('.').unwrap();
            assert!(s.parse::<u64>().is_ok() && us.len() == 6, "{l}");
        }
    }
}

#[test]
fn every_aging_is_traced_with_the_generation_it_made() {
    let r = run(&config(PolicyKind::Mglru, true));
    let ages = events(&r, "age");
    assert!(ages.len() > 3, "the run ages: {}", ages.len());
    let seqs: Vec<i64> = ages
        .iter()
        .map(|l| l.iter().find(|(k, _)| *k == "max_seq").unwrap().1.parse().unwrap())
        .collect();
    // one lruvec: each aging makes the next generation, and the last one is the run's max_seq
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
    let full = &r.debugfs.last().expect("lru_gen at the end").2;
    let last_gen = full
        .lines()
        .skip_while(|l| !l.ends_with("/t"))
        .filter_map(|l| l.split_whitespace().next()?.parse::<i64>().ok())
        .max()
        .unwrap();
    assert_eq!(*seqs.last().unwrap(), last_gen);
    // the first walk of an mm is a forced one; every aging walked or skipped the one mm
    assert_eq!(ages[0].iter().find(|(k, _)| *k == "force_scan").unwrap().1, "0");
    assert!(ages
        .iter()
        .all(|l| sum(std::slice::from_ref(l), "mms_walked") + sum(std::slice::from_ref(l), "mms_skipped") <= 1));
    assert!(sum(&ages, "mms_walked") > 0);
}

#[test]
fn tracing_leaves_the_run_as_it_was() {
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        let (off, on) = (run(&config(policy, false)), run(&config(policy, true)));
        assert!(off.ftrace.is_empty() && !on.ftrace.is_empty());
        assert_eq!(off.misses, on.misses);
        assert_eq!(off.vmstat, on.vmstat);
        assert_eq!(off.debugfs, on.debugfs);
        // and the trace itself is the same every time
        assert_eq!(on.ftrace, run(&config(policy, true)).ftrace);
    }
}

#[test]
fn an_event_the_model_lacks_is_refused_before_the_run() {
    let mut c = config(PolicyKind::Mglru, false);
    c.ftrace = vec!["sched/sched_switch".into()];
    let e = sim::run(&c, None, &mut |_, _| {}).unwrap_err().to_string();
    assert!(
        e.contains("sched/sched_switch") && e.contains("mm_vmscan_lru_shrink_inactive"),
        "{e}"
    );
}

/// `should_skip_mm`: an aging walks the mm only if it was marked used (`lru_gen_use_mm`) since
/// the walk before, unless forced (the first, an mm new to the list); it skips it otherwise. The
/// trace shows both, in order.
#[test]
fn a_walk_needs_the_mm_used_since_the_last_walk() {
    let r = run(&config(PolicyKind::Mglru, true));
    let (mut used_since_walk, mut walks, mut skips) = (false, 0, 0);
    for l in r.ftrace.lines() {
        if l.contains(": use: (lru_gen_use_mm) mm=0 ") {
            used_since_walk = true;
        } else if l.contains(": age: ") {
            if l.contains("mms_walked=1") {
                assert!(
                    used_since_walk || walks == 0,
                    "a walk with the mm not used since the last: {l}"
                );
                walks += 1;
                used_since_walk = false;
            } else if l.contains("mms_skipped=1") {
                assert!(!used_since_walk, "a skip with the mm used since the last walk: {l}");
                skips += 1;
            }
        }
    }
    assert!(walks > 1 && skips > 0, "walks {walks}, skips {skips}");
}

/// 7.2's `folio_check_references` reclaims a folio rmap found no young PTE of
/// (`FOLIOREF_RECLAIM`), so every activation of a pass follows a `folio_referenced_one` that
/// found its PTE young: a pass activates at most as many folios as young mappings were seen since
/// the pass before.
#[test]
fn a_pass_activates_no_more_folios_than_rmap_found_young() {
    let r = run(&config(PolicyKind::Mglru, true));
    let (mut young, mut passes, mut activated) = (0, 0, 0);
    for l in r.ftrace.lines() {
        if l.contains(": ref: (folio_referenced_one) ") {
            young += u32::from(l.ends_with(" young=1"));
        } else if let Some((_, f)) = l.split_once(": mm_vmscan_lru_shrink_inactive: ") {
            let a: u32 = f
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix("nr_activate_anon="))
                .unwrap()
                .parse()
                .unwrap();
            assert!(a <= young, "{a} activated, {young} young seen: {l}");
            (young, passes, activated) = (0, passes + 1, activated + a);
        }
    }
    assert!(passes > 10 && activated > 0, "{passes} passes, {activated} activated");
}

/// rmap calls `folio_referenced_one` only for the mappings `invalid_folio_referenced_vma` lets
/// through: from 6.3 a `MADV_RANDOM` mapping has no recency and is not looked at. The same loads
/// through a normal mapping and through a random one, both reclaimed: the trace shows the first's
/// pages and none of the second's.
#[test]
fn rmap_traces_only_the_mappings_it_looks_at() {
    use lrugen::mm::ftrace::Ftrace;
    use lrugen::mm::pagecache::Advice;
    use lrugen::mm::vm::{vmf, Madv, MMAP_BASE_VPN};
    use lrugen::reclaim::mglru::Profile;
    use lrugen::workload::Op;
    let traced = |random: bool| {
        let (mut k, _t, task) = common::mglru_setup(Profile::V7_2, 4096, 0, Some(200));
        k.m.ftrace = Some(Box::new(Ftrace::parse(&["p:ref folio_referenced_one".into()]).unwrap()));
        let vpn = MMAP_BASE_VPN;
        let file = k.m.create_file("f", 512, Advice::Normal);
        k.step(Op::Mmap {
            task,
            vpn,
            pages: 512,
            file,
            pgoff: 0,
            flags: vmf::WRITE as u8,
            compressed_pct: 0,
        })
        .unwrap();
        if random {
            k.step(Op::Madvise {
                task,
                vpn,
                pages: 512,
                advice: Madv::Random,
            })
            .unwrap();
        }
        for round in 0..6u32 {
            for i in 0..512u32 {
                k.step(Op::Load {
                    task,
                    vpn: vpn + (i * 97 + round * 31) % 512,
                })
                .unwrap();
            }
        }
        let scanned = k.m.vmstat().get(Stat::PgscanFile);
        (scanned, k.m.ftrace.take().unwrap().text.lines().count())
    };
    let (normal, random) = (traced(false), traced(true));
    assert!(normal.0 > 0 && random.0 > 0, "both reclaim: {normal:?} {random:?}");
    assert!(normal.1 > 0, "the normal mapping's folios are looked at: {normal:?}");
    assert_eq!(random.1, 0, "the random mapping's are not: {random:?}");
}

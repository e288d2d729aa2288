// SPDX-License-Identifier: GPL-2.0-only
//! Memory tiers (docs/memory-tiers.md): demotion in `shrink_folio_list` instead of swap when the
//! node has a lower tier and `demotion_enabled` is set (and swap, or nothing, when it is not),
//! `can_demote` making anon reclaimable without swap, NUMA balancing's hint faults promoting hot
//! pages of the slow node, the promotion rate limit and the hot threshold, the counters and the
//! node residency agreeing, under both policies with the invariant checker on.

mod common;

use lrugen::kernel::{Access, Kernel};
use lrugen::mm::folio::FolioId;
use lrugen::mm::memcg::ROOT_MEMCG;
use lrugen::mm::node::ZoneType;
use lrugen::mm::tiers::{Placement, TierConfig, MEMTIER_ADISTANCE_DRAM};
use lrugen::mm::vm::{pte, vmf, Madv};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::mglru::Profile;
use lrugen::reclaim::{vmscan, Policy};

/// A DRAM node 0 of `fast` pages and a slower node 1 of `slow` pages (one tier down), `swap`
/// pages of swap, read-ahead off, the tiers as `tiers` says.
fn machine(fast: u64, slow: u64, swap: u64, tiers: TierConfig) -> Machine {
    let mut c = MachineConfig::simple(fast, swap);
    c.nodes = vec![vec![(ZoneType::Normal, fast)], vec![(ZoneType::Normal, slow)]];
    c.ra_pages = 0;
    c.tiers = Some(TierConfig {
        adistance: vec![MEMTIER_ADISTANCE_DRAM, 2 * MEMTIER_ADISTANCE_DRAM],
        ..tiers
    });
    let mut m = Machine::new(c);
    m.debug_checks = true;
    m
}

fn demotion(on: bool) -> TierConfig {
    TierConfig {
        demotion_enabled: on,
        ..TierConfig::default()
    }
}

/// Run `f` on the classic LRU and on MGLRU (mainline) over machine `m()`.
fn both(m: impl Fn() -> Machine, f: impl Fn(&str, &mut dyn FnMut() -> Box<dyn Tk>)) {
    f("classic", &mut || {
        let (k, _, task) = common::classic_on(m());
        Box::new((k, task))
    });
    f("mglru", &mut || {
        let (k, _, task) = common::mglru_on(m(), Profile::MAINLINE);
        Box::new((k, task))
    });
}

/// What the tests need of a kernel, whatever its policy.
trait Tk {
    fn k(&mut self) -> (&mut Machine, u32);
    fn access(&mut self, vpn: u32, write: bool) -> Access;
    fn kswapd(&mut self, node: usize);
    fn drain(&mut self);
    fn pageout(&mut self, vpn: u32, n: u32);
    fn check(&self) -> Result<(), String>;
}

impl<P: Policy> Tk for (Kernel<P>, u32) {
    fn k(&mut self) -> (&mut Machine, u32) {
        (&mut self.0.m, self.1)
    }
    fn access(&mut self, vpn: u32, write: bool) -> Access {
        self.0.access(self.1, vpn, write).expect("access")
    }
    fn kswapd(&mut self, node: usize) {
        self.0.lru_add_drain();
        vmscan::balance_pgdat(&mut self.0.m, &mut self.0.p, node);
    }
    fn drain(&mut self) {
        self.0.lru_add_drain();
    }
    fn pageout(&mut self, vpn: u32, n: u32) {
        self.0.madvise(self.1, vpn, n, Madv::PageOut).expect("madvise");
    }
    fn check(&self) -> Result<(), String> {
        self.0.check()?;
        match &self.0.m.check_failure {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

fn vm(m: &Machine, s: Stat) -> i64 {
    m.vmstat().get(s)
}

/// The folio mapped at `vpn` (present PTE), if any.
fn folio_at(m: &Machine, task: u32, vpn: u32) -> Option<FolioId> {
    let e = m.pte(task, vpn);
    (e & pte::PRESENT != 0).then_some(e & pte::PFN_MASK)
}

/// Pages of `task`'s `vpn..vpn + n` resident on each node.
fn residency(m: &Machine, task: u32, vpn: u32, n: u32) -> [u64; 2] {
    let mut r = [0; 2];
    for v in vpn..vpn + n {
        if let Some(id) = folio_at(m, task, v) {
            r[m.folios[id].node()] += 1;
        }
    }
    r
}

/// Every node's anon pages as the node items count them, against a count of the folios.
fn assert_node_counts(what: &str, m: &Machine, task: u32, vpn: u32, n: u32) {
    let r = residency(m, task, vpn, n);
    for (node, &pages) in r.iter().enumerate() {
        assert_eq!(
            m.lruvec_state(ROOT_MEMCG, node, Stat::NrAnonPages),
            pages as i64,
            "{what}: nr_anon_pages of node {node}"
        );
    }
}

/// Map `n` anon pages and write each once (placed by the machine's rules); returns the first.
fn write_pages(t: &mut dyn Tk, n: u32) -> u32 {
    let (m, task) = t.k();
    let vpn = m.mmap(task, n, vmf::WRITE, None);
    for v in vpn..vpn + n {
        t.access(v, true);
    }
    vpn
}

/// Run kswapd on node 0 until it is balanced (at most 4 runs).
fn kswapd_until_balanced(t: &mut dyn Tk) {
    for _ in 0..4 {
        let (m, _) = t.k();
        if vmscan::pgdat_balanced(m, 0, 0) {
            break;
        }
        t.kswapd(0);
    }
}

/// Fill node 0 with `n` written anon pages (the last ones spill to node 1 once node 0 is at its
/// low watermark), then run kswapd on node 0, which is below its high watermark.
fn fill_and_reclaim(t: &mut dyn Tk, n: u32) -> (u32, [u64; 2]) {
    let vpn = write_pages(&mut *t, n);
    t.drain();
    let (m, task) = t.k();
    let before = residency(m, task, vpn, n);
    assert!(before[1] > 0, "node 0 filled up to its low watermark: {before:?}");
    // the first run finds every page young (kept, `PG_referenced` set); the next reclaim
    kswapd_until_balanced(t);
    (vpn, before)
}

#[test]
fn kswapd_demotes_instead_of_swapping_when_a_lower_tier_exists() {
    for swap in [0, 4096] {
        both(
            || machine(1024, 4096, swap, demotion(true)),
            |name, new| {
                let mut t = new();
                let (vpn, before) = fill_and_reclaim(&mut *t, 1000);
                t.check().unwrap_or_else(|e| panic!("{name}: {e}"));
                let (m, task) = t.k();
                let after = residency(m, task, vpn, 1000);
                let demoted = vm(m, Stat::PgdemoteKswapd);
                assert!(demoted > 0, "{name} swap {swap}: kswapd demoted nothing");
                assert_eq!(vm(m, Stat::Pswpout), 0, "{name}: demotion, not swap");
                assert_eq!(vm(m, Stat::PgdemoteDirect), 0);
                // every page is still resident; the demoted ones moved from node 0 to node 1
                assert_eq!(after[0] + after[1], 1000, "{name}: no page left memory");
                assert_eq!(
                    after[1] - before[1],
                    demoted as u64,
                    "{name}: node 1 gained the demoted pages"
                );
                // demoted folios count as reclaimed (`nr_reclaimed += nr_demoted`)
                assert!(
                    vm(m, Stat::PgstealKswapd) >= demoted,
                    "{name}: pgsteal counts demotions"
                );
                assert_eq!(vm(m, Stat::PgstealAnon), vm(m, Stat::PgstealKswapd));
                assert_eq!(vm(m, Stat::PgmigrateSuccess), demoted);
                assert_node_counts(name, m, task, vpn, 1000);
                assert!(
                    vmscan::pgdat_balanced(m, 0, 0),
                    "{name}: kswapd balanced node 0 by demotion"
                );
                // every page is still mapped: touching them all is all hits
                for v in vpn..vpn + 1000 {
                    assert_eq!(t.access(v, false), Access::Hit, "{name}: page {v:#x}");
                }
            },
        );
    }
}

#[test]
fn without_demotion_kswapd_swaps_or_cannot_reclaim_anon() {
    for swap in [0, 4096] {
        both(
            || machine(1024, 4096, swap, demotion(false)),
            |name, new| {
                let mut t = new();
                let (vpn, before) = fill_and_reclaim(&mut *t, 1000);
                t.check().unwrap_or_else(|e| panic!("{name}: {e}"));
                let (m, task) = t.k();
                assert_eq!(vm(m, Stat::PgdemoteKswapd), 0);
                assert_eq!(
                    residency(m, task, vpn, 1000)[1],
                    before[1],
                    "{name}: nothing moved to node 1"
                );
                if swap == 0 {
                    assert_eq!(vm(m, Stat::PgstealAnon), 0, "{name}: no swap, no demotion: anon stays");
                } else {
                    assert!(vm(m, Stat::Pswpout) > 0, "{name}: anon swapped out");
                    assert_eq!(vm(m, Stat::PgstealAnon), vm(m, Stat::Pswpout));
                }
            },
        );
    }
}

#[test]
fn demotion_falls_back_to_reclaim_when_the_lower_tier_is_full() {
    // node 1 (100 pages, min watermark 32) has 44 pages free after the fill: a dozen demotions
    // fit, the rest of kswapd's batch is swapped
    both(
        || machine(1024, 100, 4096, demotion(true)),
        |name, new| {
            let mut t = new();
            write_pages(&mut *t, 1000);
            kswapd_until_balanced(&mut *t);
            t.check().unwrap_or_else(|e| panic!("{name}: {e}"));
            let (m, _) = t.k();
            let demoted = vm(m, Stat::PgdemoteKswapd);
            assert!(demoted > 0, "{name}: some folios were demoted");
            let min1 = m.nodes[1].zones[0].wmark(lrugen::mm::node::WMARK_MIN);
            assert!(
                m.nodes[1].free() >= min1,
                "{name}: demotion never takes node 1 below min"
            );
            assert!(vm(m, Stat::Pswpout) > 0, "{name}: the folios not demoted were swapped");
            assert_eq!(
                vm(m, Stat::PgstealAnon),
                demoted + vm(m, Stat::Pswpout),
                "{name}: every stolen page was demoted or swapped"
            );
        },
    );
}

#[test]
fn madv_pageout_does_not_demote() {
    both(
        || machine(1024, 4096, 4096, demotion(true)),
        |name, new| {
            let mut t = new();
            let vpn = write_pages(&mut *t, 64);
            t.drain();
            // reclaim_pages runs with `no_demotion`: the pages are swapped out
            t.pageout(vpn, 64);
            t.check().unwrap_or_else(|e| panic!("{name}: {e}"));
            let (m, _) = t.k();
            assert_eq!(vm(m, Stat::PgdemoteDirect) + vm(m, Stat::PgdemoteKswapd), 0, "{name}");
            assert_eq!(vm(m, Stat::Pswpout), 64, "{name}: MADV_PAGEOUT swapped every page");
        },
    );
}

/// NUMA balancing in memory-tiering mode with scans every `period_ms` (the first after one
/// period), demotion on, the pages of every mapping first placed on node 1 (the slow node).
fn tiering(period_ms: u64, f: impl FnOnce(&mut TierConfig)) -> TierConfig {
    let mut t = TierConfig {
        demotion_enabled: true,
        numa_balancing: 2,
        scan_delay_ms: period_ms,
        scan_period_ms: period_ms,
        placement: vec![Placement {
            node: 1,
            from: 0.0,
            to: 1.0,
        }],
        ..TierConfig::default()
    };
    f(&mut t);
    t
}

/// Write `n` pages (placed by the machine's rules), then access the first `hot` of them in
/// turn `rounds` times, `step_ns` of virtual time per access.
fn hot_loop(t: &mut dyn Tk, n: u32, hot: u32, rounds: u32, step_ns: u64) -> u32 {
    let vpn = write_pages(&mut *t, n);
    t.drain();
    for _ in 0..rounds {
        for v in vpn..vpn + hot {
            t.k().0.now_ns += step_ns;
            t.access(v, false);
        }
    }
    vpn
}

#[test]
fn hint_faults_promote_the_hot_pages_of_the_slow_node() {
    both(
        || machine(4096, 4096, 0, tiering(1, |_| {})),
        |name, new| {
            let mut t = new();
            // 512 pages on node 1, 64 of them touched every 6.4 µs... for 10 ms
            let vpn = hot_loop(&mut *t, 512, 64, 1000, 100_000 / 64);
            t.check().unwrap_or_else(|e| panic!("{name}: {e}"));
            let (m, task) = t.k();
            let hot = residency(m, task, vpn, 64);
            let cold = residency(m, task, vpn + 64, 512 - 64);
            assert_eq!(hot, [64, 0], "{name}: every hot page promoted to node 0");
            assert_eq!(cold, [0, 448], "{name}: cold pages stay on node 1");
            let migrated = vm(m, Stat::NumaPagesMigrated);
            assert_eq!(migrated, 64, "{name}");
            assert_eq!(vm(m, Stat::PgpromoteSuccess), 64, "{name}");
            assert_eq!(vm(m, Stat::PgpromoteCandidate), 64, "{name}: each hot page passed once");
            // every scan made the slow node's PTEs PROT_NONE: the first all 512, later ones the
            // 448 cold pages (still PROT_NONE: skipped) and none of the promoted ones
            assert_eq!(vm(m, Stat::NumaPteUpdates), 512, "{name}");
            let faults = vm(m, Stat::NumaHintFaults);
            assert_eq!(faults, 64, "{name}: one hint fault per hot page");
            assert_eq!(vm(m, Stat::NumaHintFaultsLocal), 0, "{name}: all on the slow node");
            assert_node_counts(name, m, task, vpn, 512);
            assert_eq!(vm(m, Stat::PgdemoteKswapd), 0, "{name}: node 0 had room");
            // the task's memcg counts them too, as memory.stat shows them from 6.11 on
            // (`count_memcg_events_mm`, `count_memcg_folio_events`, `count_memcg_events`)
            let ms = m.memcg_stat(m.mms[task as usize].memcg);
            for s in [
                Stat::NumaPteUpdates,
                Stat::NumaHintFaults,
                Stat::NumaPagesMigrated,
                Stat::PgpromoteSuccess,
            ] {
                assert_eq!(ms.get(s), vm(m, s), "{name}: memory.stat {}", s.name());
            }
        },
    );
}

#[test]
fn without_numa_balancing_nothing_is_promoted() {
    both(
        || machine(4096, 4096, 0, tiering(1, |t| t.numa_balancing = 0)),
        |name, new| {
            let mut t = new();
            let vpn = hot_loop(&mut *t, 512, 64, 1000, 100_000 / 64);
            let (m, task) = t.k();
            assert_eq!(residency(m, task, vpn, 512), [0, 512], "{name}");
            for s in [Stat::NumaPteUpdates, Stat::NumaHintFaults, Stat::NumaPagesMigrated] {
                assert_eq!(vm(m, s), 0, "{name}: {}", s.name());
            }
        },
    );
}

#[test]
fn a_page_touched_after_the_hot_threshold_is_not_promoted() {
    // scans every 10 ms, hot threshold 2 ms; the loop touches each page once every ~5 ms
    both(
        || machine(4096, 4096, 0, tiering(10, |t| t.hot_threshold_ms = 2)),
        |name, new| {
            let mut t = new();
            let vpn = hot_loop(&mut *t, 64, 64, 20, 5_000_000 / 64);
            let (m, task) = t.k();
            let faults = vm(m, Stat::NumaHintFaults);
            assert!(faults > 0, "{name}: hint faults");
            // a page faulted within 2 ms of its scan is promoted, the others not
            let migrated = vm(m, Stat::NumaPagesMigrated);
            assert!(migrated > 0 && migrated < 64, "{name}: {migrated} of 64 promoted");
            assert_eq!(vm(m, Stat::PgpromoteCandidate), migrated, "{name}");
            assert_eq!(residency(m, task, vpn, 64)[0], migrated as u64, "{name}");
        },
    );
}

#[test]
fn the_promotion_rate_limit_caps_candidates_per_second() {
    // 1 MB/s = 256 pages per second: in the first second, candidate 256 reaches the limit
    for (mbps, promoted) in [(1u64, 255i64), (65_536, 1024)] {
        both(
            || machine(8192, 4096, 0, tiering(1, |t| t.promote_rate_limit_mbps = mbps)),
            |name, new| {
                let mut t = new();
                let vpn = hot_loop(&mut *t, 1024, 1024, 20, 20_000);
                t.check().unwrap_or_else(|e| panic!("{name}: {e}"));
                let (m, task) = t.k();
                assert!(m.now_ns < 1_000_000_000, "within the first second");
                assert_eq!(vm(m, Stat::NumaPagesMigrated), promoted, "{name}, {mbps} MB/s");
                assert_eq!(residency(m, task, vpn, 1024)[0], promoted as u64, "{name}");
                if mbps == 1 {
                    assert!(
                        vm(m, Stat::PgpromoteCandidate) > 256,
                        "{name}: limited candidates are counted"
                    );
                }
            },
        );
    }
}

#[test]
fn inverted_start_kswapd_demotes_cold_pages_to_make_room_for_hot_ones() {
    // node 0 (1024 pages) starts full of cold pages, node 1 holds the hot ones: promotion finds
    // node 0 short and wakes kswapd there, which demotes cold pages to node 1 down to the promo
    // watermark; later hint faults promote the hot pages into the room made.
    let cfg = || {
        tiering(1, |t| {
            t.placement = vec![
                Placement {
                    node: 0,
                    from: 0.0,
                    to: 0.6,
                },
                Placement {
                    node: 1,
                    from: 0.6,
                    to: 1.0,
                },
            ]
        })
    };
    both(
        || machine(1024, 4096, 0, cfg()),
        |name, new| {
            let mut t = new();
            let n = 1500;
            let vpn = write_pages(&mut *t, n);
            t.drain();
            let (m, task) = t.k();
            let hot0 = vpn + 900;
            let start = residency(m, task, hot0, 600);
            assert_eq!(start[0], 0, "{name}: the hot pages start on the slow node");
            for _ in 0..400 {
                for v in hot0..hot0 + 300 {
                    t.k().0.now_ns += 5_000;
                    t.access(v, false);
                }
            }
            t.check().unwrap_or_else(|e| panic!("{name}: {e}"));
            let (m, task) = t.k();
            let hot = residency(m, task, hot0, 300);
            assert!(vm(m, Stat::PgdemoteKswapd) > 0, "{name}: kswapd demoted");
            assert!(hot[0] > 150, "{name}: most hot pages reached node 0: {hot:?}");
            assert_eq!(vm(m, Stat::Pswpout), 0, "{name}: no swap");
            assert_node_counts(name, m, task, vpn, n);
        },
    );
}

#[test]
fn same_configuration_same_counters() {
    let run = |policy: &str| {
        let mut out = Vec::new();
        for _ in 0..2 {
            let mut t: Box<dyn Tk> = if policy == "classic" {
                let (k, _, task) = common::classic_on(machine(1024, 4096, 0, tiering(1, |_| {})));
                Box::new((k, task))
            } else {
                let (k, _, task) = common::mglru_on(machine(1024, 4096, 0, tiering(1, |_| {})), Profile::MAINLINE);
                Box::new((k, task))
            };
            hot_loop(&mut *t, 1500, 700, 50, 3_000);
            out.push(lrugen::mm::vmstat::format_proc_vmstat(&t.k().0.vmstat()));
        }
        assert_eq!(out[0], out[1], "{policy}");
    };
    run("classic");
    run("mglru");
}

/// The tiering micro-benchmark of `examples/tiering.toml`: the same results whatever the
/// threads, both policies promote and demote without swapping, and the series of the pages
/// first placed on the slow node that are now on the fast node rises.
#[test]
fn the_tiering_example_is_deterministic_and_promotes_the_hot_pages() {
    use lrugen::experiment::{self, output, Experiment};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tiering.toml");
    let e = Experiment::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut results = Vec::new();
    for (d, threads) in dirs.iter().zip([1, 2]) {
        let r = experiment::run(&e, Some(threads), &|_, _| {}).unwrap();
        output::write_files(&r, d.path()).unwrap();
        results.push(std::fs::read(d.path().join("results.json")).unwrap());
        if threads == 1 {
            for c in &r.cells {
                let m = &c.metrics;
                let what = format!("{} rep {}", c.policy, c.cell.repetition);
                assert!(m["numa_hint_faults"] > 0.0, "{what}");
                assert!(m["numa_pages_migrated"] > 0.0, "{what}");
                assert_eq!(m["numa_pages_migrated"], m["pgpromote_success"], "{what}");
                assert!(m["pgdemote_kswapd"] > 0.0, "{what}");
                assert_eq!(m["pswpout"], 0.0, "{what}: demotion, no swap");
                assert!(m["pgsteal_anon"] >= m["pgdemote_kswapd"], "{what}");
                let s = &c.series["slow_placed_on_top"];
                let (first, last) = (s[0].1, s.last().unwrap().1);
                assert!(last > first && last > 0.0, "{what}: {first} -> {last}");
            }
        }
    }
    assert_eq!(results[0], results[1], "1 thread vs 2 threads");
}

/// `[machine.tiers]` in an experiment file: what it sets, and bad values named with their key
/// and line.
#[test]
fn machine_tiers_in_an_experiment_file() {
    use lrugen::experiment::{ExpError, Experiment};
    let file = |tiers: &str, metric: &str| {
        format!(
            "metric = \"{metric}\"\n[machine]\nnodes = [[{{ zone = \"normal\", size = \"8M\" }}], [{{ zone = \"normal\", size = \"8M\" }}]]\n{tiers}\n[workload]\nkind = \"anon\"\npages = 100\nwrite_ratio = 0.5\ndist = \"uniform\"\naccesses = 10\n"
        )
    };
    let parse = |t: &str| Experiment::parse(t, std::path::Path::new("t.toml"));
    let ok = parse(&file(
        "[machine.tiers]\nadistance = [576, 1152]\ndemotion_enabled = true\nnuma_balancing = 2\nplacement = [{ node = 1, from = 0.5 }]",
        "numa_pages_migrated",
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let t = ok.points[0].config.machine.tiers.clone().expect("tiers");
    assert!(t.demotion_enabled && t.numa_balancing == 2);
    assert_eq!(t.promote_rate_limit_mbps, 65_536, "the kernel's default");
    assert_eq!(t.placement[0].to, 1.0);
    let err = |t: &str, metric: &str| match parse(&file(t, metric)) {
        Err(ExpError::Parse { line, message, .. }) => (line, message),
        Err(e) => panic!("not a parse error: {e}"),
        Ok(_) => panic!("parsed: {t}"),
    };
    let (line, msg) = err("[machine.tiers]\nnuma_balancing = 1", "hit_ratio");
    assert!(msg.contains("not modelled"), "{msg}");
    assert_eq!(line, Some(5), "{msg}");
    let (line, msg) = err(
        "[machine.tiers]\ndemotion_enabled = true\nadistance = [576]",
        "hit_ratio",
    );
    assert!(msg.contains("2 nodes"), "{msg}");
    assert_eq!(line, Some(6), "{msg}");
    let (line, msg) = err("[machine.tiers]\ndemotion = true", "hit_ratio");
    assert!(msg.contains("unknown field `demotion`"), "{msg}");
    assert_eq!(line, Some(5), "{msg}");
    let (line, msg) = err("", "numa_pages_migrated");
    assert!(msg.contains("no [machine.tiers]"), "{msg}");
    assert_eq!(line, Some(1), "{msg}");
}

/// Three tiers: node 1's kswapd demotes to node 2 (its target; node 1 is the target of node 0),
/// folios the scan had made PROT_NONE keep their mapping and access time through the move, and
/// their hint faults promote them from node 2 straight to the CPU's node.
#[test]
fn three_tiers_demote_down_the_chain_and_promote_to_the_top() {
    let m = || {
        let mut c = MachineConfig::simple(4096, 0);
        c.nodes = vec![
            vec![(ZoneType::Normal, 4096)],
            vec![(ZoneType::Normal, 1024)],
            vec![(ZoneType::Normal, 4096)],
        ];
        c.ra_pages = 0;
        c.tiers = Some(TierConfig {
            adistance: vec![
                MEMTIER_ADISTANCE_DRAM,
                2 * MEMTIER_ADISTANCE_DRAM,
                3 * MEMTIER_ADISTANCE_DRAM,
            ],
            ..tiering(1, |t| t.placement[0].node = 1)
        });
        let mut m = Machine::new(c);
        m.debug_checks = true;
        m
    };
    both(m, |name, new| {
        let mut t = new();
        let t0 = t.k().0.tiers.as_deref().unwrap();
        assert_eq!(
            (t0.demotion_target(0), t0.demotion_target(1), t0.demotion_target(2)),
            (Some(1), Some(2), None)
        );
        let vpn = write_pages(&mut *t, 1000);
        t.drain();
        // a scan after 1 ms makes every page on nodes 1 and 2 PROT_NONE
        t.k().0.now_ns += 2_000_000;
        t.access(vpn, false);
        let (m, task) = t.k();
        let protnone = (vpn..vpn + 1000)
            .filter(|&v| m.pte(task, v) & pte::PROTNONE != 0)
            .count();
        assert!(protnone > 900, "{name}: {protnone}");
        // node 1's kswapd: demotion to node 2 (the PTEs stay PROT_NONE)
        for _ in 0..4 {
            if vmscan::pgdat_balanced(t.k().0, 1, 0) {
                break;
            }
            t.kswapd(1);
        }
        t.check().unwrap_or_else(|e| panic!("{name}: {e}"));
        let (m, task) = t.k();
        let demoted = vm(m, Stat::PgdemoteKswapd);
        assert!(demoted > 0, "{name}: node 1 demoted to node 2");
        let on2 = (vpn..vpn + 1000)
            .filter(|&v| {
                m.pte(task, v) & pte::PROTNONE != 0 && folio_at(m, task, v).is_some_and(|id| m.folios[id].node() == 2)
            })
            .count();
        assert!(on2 > 0, "{name}: PROT_NONE pages on node 2");
        // every page is touched once: the hint faults promote to node 0
        for v in vpn..vpn + 1000 {
            t.access(v, false);
        }
        t.check().unwrap_or_else(|e| panic!("{name}: {e}"));
        let (m, task) = t.k();
        let mut r = [0u64; 3];
        for v in vpn..vpn + 1000 {
            r[m.folios[folio_at(m, task, v).expect("mapped")].node()] += 1;
        }
        assert_eq!(r[0], vm(m, Stat::NumaPagesMigrated) as u64, "{name}: {r:?}");
        assert!(r[0] >= 900, "{name}: the pages went to the CPU's node: {r:?}");
        assert_eq!(r.iter().sum::<u64>(), 1000);
    });
}

/// The example's cells with the invariant checker after every reclaim pass, and under the
/// virtual-time engine (kswapd a task of its own, woken by promotion and by demotion's
/// allocations): both policies run to the end, promote and demote.
#[test]
fn the_tiering_example_under_the_checker_and_the_engine() {
    use lrugen::experiment::Experiment;
    use lrugen::sim;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tiering.toml");
    let e = Experiment::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    for cell in e.cells().iter().filter(|c| c.repetition == 0) {
        for engine in [false, true] {
            let mut cfg = e.run_config(cell, None);
            cfg.check = true;
            if engine {
                cfg.engine = Some(sim::engine::EngineConfig::default());
            }
            let what = format!("{:?} engine {engine}", cfg.policy);
            let r = sim::run(&cfg, None, &mut |_, _| {}).unwrap_or_else(|err| panic!("{what}: {err}"));
            assert_eq!(r.error, None, "{what}");
            assert!(r.vm(Stat::NumaPagesMigrated) > 0, "{what}");
            assert!(r.vm(Stat::PgdemoteKswapd) > 0, "{what}");
            assert_eq!(r.vm(Stat::Pswpout), 0, "{what}");
        }
    }
}

/// `task_scan_min` as the kernel computes it: the minimum period spread over the task's scan
/// windows (its resident pages in `scan_size_mb` pieces, rounded up), never under a window of the
/// 2,560 MB/s scan rate.
#[test]
fn task_scan_min_spreads_the_period_over_the_scan_windows() {
    use lrugen::reclaim::tiering::task_scan_min;
    let cfg = |period, size| TierConfig {
        scan_period_ms: period,
        scan_size_mb: size,
        ..TierConfig::default()
    };
    // the defaults: 256 MB windows, floor 1000 / (2560 / 256) = 100 ms
    assert_eq!(task_scan_min(&cfg(1000, 256), 1), 1000);
    assert_eq!(task_scan_min(&cfg(1000, 256), 65_536 * 4), 250, "1 GiB: 4 windows");
    assert_eq!(
        task_scan_min(&cfg(1000, 256), 65_536 * 4 + 1),
        200,
        "rounded up: 5 windows"
    );
    assert_eq!(task_scan_min(&cfg(1000, 256), 65_536 * 40), 100, "the floor");
    // the fixtures' 4 MB windows and 10 ms: floor 1000 / 640 = 1 ms
    assert_eq!(task_scan_min(&cfg(10, 4), 5_000), 2, "5 windows of 1,024 pages");
    assert_eq!(task_scan_min(&cfg(10, 4), 49_152), 1);
    // windows of 2,560 MB or more: floor 1 s
    assert_eq!(task_scan_min(&cfg(500, 4096), 1), 1000);
}

/// `mbind(2)` (`Kernel::mbind`, op files' `mbind`): the range gets VMAs of its own with the
/// policy, pages faulted there after it go to the preferred node first (before the experiment's
/// placement), pages already present stay where they are, `MPOL_DEFAULT` puts faults back on the
/// CPU's node without merging the pieces again (their anon_vmas differ in the kernel); a node
/// the machine lacks and a hole in the range are refused.
#[test]
fn mbind_places_later_faults_on_the_preferred_node() {
    use lrugen::mm::vm::MPOL_DEFAULT;
    let (mut k, _, task) = common::classic_on(machine(4096, 4096, 0, demotion(false)));
    let vpn = k.m.mmap(task, 100, vmf::WRITE, None);
    for v in vpn..vpn + 10 {
        k.access(task, v, true).unwrap();
    }
    k.mbind(task, vpn, 70, 1).unwrap();
    k.mbind(task, vpn, 30, 0).unwrap();
    let policies: Vec<(u32, u32, u8)> = k.m.mms[task as usize]
        .vmas
        .iter()
        .filter(|v| v.start >= vpn && v.end <= vpn + 100)
        .map(|v| (v.start - vpn, v.end - vpn, v.policy))
        .collect();
    assert_eq!(policies, [(0, 30, 0), (30, 70, 1), (70, 100, MPOL_DEFAULT)]);
    for v in vpn..vpn + 100 {
        k.access(task, v, true).unwrap();
    }
    k.lru_add_drain();
    assert_eq!(
        residency(&k.m, task, vpn, 30),
        [30, 0],
        "preferred node 0 (10 already there)"
    );
    assert_eq!(residency(&k.m, task, vpn + 30, 40), [0, 40], "preferred node 1");
    assert_eq!(residency(&k.m, task, vpn + 70, 30), [30, 0], "the CPU's node");
    // the default policy over the whole range: the pieces stay, the pages stay
    k.mbind(task, vpn, 100, MPOL_DEFAULT).unwrap();
    let n = k.m.mms[task as usize]
        .vmas
        .iter()
        .filter(|v| v.start >= vpn && v.end <= vpn + 100)
        .count();
    assert_eq!(n, 3, "not merged again");
    assert!(k.m.mms[task as usize].vmas.iter().all(|v| v.policy == MPOL_DEFAULT));
    assert_eq!(residency(&k.m, task, vpn + 30, 40), [0, 40]);
    assert!(k.mbind(task, vpn, 10, 2).is_err(), "node 2 does not exist");
    k.munmap(task, vpn + 50, 1).unwrap();
    assert!(k.mbind(task, vpn, 100, 0).is_err(), "a hole in the range");
    k.check().unwrap();
}

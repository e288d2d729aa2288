// SPDX-License-Identifier: GPL-2.0-only
//! The model against real kernels on a machine of memory tiers (issue 14, item 3): the fixtures
//! of `tests/fixtures/tiering/` (the Gaussian micro-benchmark with an inverted start,
//! `gauss-inverted.toml`: hot pages placed on the slow node by the op file's `mbind` ops, in a
//! guest of a 192 MiB DRAM node with the vCPU and a 128 MiB CPU-less node that qemu's ACPI HMAT
//! puts one memory tier down; no memcg limit, demotion on, NUMA balancing in memory-tiering
//! mode; Debian 6.12 and 7.2, MGLRU and classic, two boots each, four for 6.12 MGLRU;
//! `scripts/regen-kernel-tiering.sh`) replayed on the model with the guest's two nodes and their
//! zones, its tiers and knobs, and its kernel's preset.
//!
//! Each counter of [`fidelity::TIERING_COUNTERS`] is judged against every boot as under global
//! pressure: within 10 % of each (or 50 events), widened to the boots' own spread plus 2 points,
//! or within the boots' range where they spread by more than 25 % ([`fidelity::within_boots`]). A counter out of it fails unless listed in [`GAPS`] with the
//! measured numbers and the reason; a listed gap that has closed fails too. The published
//! comparison's claim, that MGLRU demotes with far fewer pages scanned than the classic LRU, must
//! hold on the kernel and on the model alike. No qemu here.

use lrugen_kernel::fidelity::{self, Compared};
use lrugen_kernel::Capture;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const CLASSIC_KSWAPD: &str = "7.2 classic's kswapd scans 66,340 pages against the four boots' \
    57,220/60,228/58,203/61,192 (+8 % over the largest, +12 % over their mean) for the same \
    demotions (within 1 %); replayed at each boot's layout the model scans 66,340, 66,369, 67,566 \
    and 62,084, while 6.12 classic's scans are within 1 % (61,209 against 61,770/60,675). The \
    6.12 preset on the 7.2 fixtures gives the same counts, so no switch makes it: what differs is \
    the guest (7.2's node 0 holds 2,400 more pages of its own before the replay). One traced boot \
    of each kernel (`--ftrace vmscan/mm_vmscan_lru_shrink_inactive`, the model's own trace of that \
    event at the same layout, before the per-CPU free lists were modelled) shows the passes alike: \
    6.12 kernel 2,699 passes scanning 60,596 (19,424 activated, 30,548 kept for a second look), \
    model 2,983 and 61,976 (20,466, 31,014); 7.2 kernel 2,755 and 63,451 (19,726, 32,951: a \
    traced boot scans above the untraced), model 2,873 and 59,468 (19,860, 29,250). Then the \
    model's kswapd also ran more often (pageoutrun 120-140 against the boots' 85-89, 6.12 123 \
    against 110/94), the extra runs' passes at priorities 12 to 8; with the per-CPU free lists \
    (mm::node::Pcp, whose pages the watermark checks do not count) it runs as often as the \
    kernel's (85, 85, 132 and 81 at the four layouts; 6.12 83 and 89), and scans as much as \
    before: what makes its 7.2 passes scan more is not traced";
const MGLRU_SCAN: &str = "6.12 MGLRU's kswapd scans 16,380 pages against the four boots' \
    29,735/29,109/30,235 (high) and 16,595 (low) for the same demotions (within 4 %): the kernel is \
    bimodal here, so the boots' range is the check, and the model is 215 pages (1.3 %) below it. \
    Five more boots of the fixture's command with tracing (2026-12-07, four with ftrace, one with \
    --debugfs-every-window) scanned 29,355, 29,213 and 28,847 (high) and 14,371 and 16,098 (low). \
    Traced (kprobes on try_to_inc_max_seq with its lruvec and seq, \
    and on walk_pud_range; sched/sched_switch): /t's node-0 lruvec ages twice within 10 ms when \
    kswapd first runs, seq 3 with a walk of 54 K PTEs that finds 28 K young, then seq 4. In both \
    high-mode boots traced, kswapd was switched out for the replayer 8.5 ms into the first walk \
    (walk_pud_range returns -EAGAIN after each MAX_LRU_BATCH of promotions and walk_mm calls \
    cond_resched), and the replayer's switch-in marked its mm used again (lru_gen_use_mm), so the \
    seq-4 round walked it just after the first had cleared its accessed bits: that walk puts almost \
    no table in the Bloom filter, the late walks (from about 900,000 accesses) visit few tables and \
    find 1.8 K young PTEs in all (the lruvec's cumulative walk stats at the end: 29.3-30.2 K young in \
    high mode, 54.7 K in low), and eviction isolates young folios the walks never promoted, which \
    look-around then keeps (the kernel's mm_vmscan_lru_shrink_inactive in that phase: 285 batches \
    of 64-96 folios reclaiming 1,666). The model's kswapd takes no guest time, so the replayer never \
    runs inside a walk and the seq-4 round skips the mm; its late walk then finds as many young PTEs \
    as the low-mode boots' (the model's walks: 53 K PTEs and 29 K young, skipped, then 53 K and 26 K \
    young at 780,000 accesses; a low-mode boot's cumulative stats grew from 28.4 K young after its \
    first walk to 54.7 K, its sched_switch not traced). The same \
    mechanism as shapes.rs's MGLRU_72_OP_LIST; closing it needs kswapd's walk to take guest time \
    and yield to the replayer at its cond_resched points. On 7.2 (boots 13,643 and 20,922) the \
    model's 13,885 is within the boots' spread";

/// Known differences: (fixture group, counter, why). Each is a model defect, not a tolerance.
const GAPS: &[(&str, &str, &str)] = &[
    ("debian-6.12-mglru-gauss-inverted", "pgscan_kswapd", MGLRU_SCAN),
    ("debian-7.2-classic-gauss-inverted", "pgscan_kswapd", CLASSIC_KSWAPD),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiering")
}

fn groups() -> BTreeMap<String, Vec<Capture>> {
    fidelity::groups(&dir()).unwrap()
}

fn rows() -> &'static Vec<Compared> {
    static ROWS: OnceLock<Vec<Compared>> = OnceLock::new();
    ROWS.get_or_init(|| {
        groups()
            .iter()
            .map(|(group, boots)| {
                let g = fidelity::global_group_of(group, boots, fidelity::TIERING_COUNTERS).unwrap();
                let t = g
                    .cfg
                    .machine
                    .tiers
                    .as_ref()
                    .expect("the model runs with the guest's tiers");
                assert_eq!(g.cfg.machine.nodes.len(), 2, "{group}: the guest's two nodes");
                assert!(t.demotion_enabled && t.numa_balancing == 2, "{group}: {t:?}");
                g.compared
            })
            .collect()
    })
}

/// The fixtures are what their names say: two nodes, node 1 in a memory tier below node 0's
/// (`memory_tierN NODELIST` read in the guest), the knobs of the experiment, the kernel series
/// and policy of the name, and the placement done (the region's middle VMA started on node 1).
#[test]
fn every_tiering_fixture_has_two_tiers_and_the_experiments_knobs() {
    let g = groups();
    let names: Vec<&str> = g.keys().map(|s| s.as_str()).collect();
    assert_eq!(
        names,
        [
            "debian-6.12-classic-gauss-inverted",
            "debian-6.12-mglru-gauss-inverted",
            "debian-7.2-classic-gauss-inverted",
            "debian-7.2-mglru-gauss-inverted"
        ]
    );
    for (group, boots) in &g {
        assert!(boots.len() >= 2, "{group}: {} boots", boots.len());
        for b in boots {
            let tier_of = |node: &str| {
                b.run
                    .memory_tiers
                    .lines()
                    .find(|l| l.split_whitespace().nth(1) == Some(node))
                    .and_then(|l| {
                        l.split_whitespace()
                            .next()?
                            .strip_prefix("memory_tier")?
                            .parse::<u32>()
                            .ok()
                    })
                    .unwrap_or_else(|| panic!("{group}: node {node} in no tier: {:?}", b.run.memory_tiers))
            };
            assert!(tier_of("0") < tier_of("1"), "{group}: {}", b.run.memory_tiers);
            assert_eq!(b.settings.numa_mib, [192, 128], "{group}");
            assert_eq!(b.settings.memcg_max_bytes, 0, "{group}: no memcg limit");
            let t = b.settings.tiers.as_ref().expect("tiers");
            assert!(
                t.adistance[0] < t.adistance[1] && t.placement.is_empty(),
                "{group}: {t:?}"
            );
            assert!(
                t.demotion_enabled && t.numa_balancing == 2 && t.scan_period_ms == 10,
                "{group}"
            );
            // the region's three VMAs as the mbind ops left them: the middle one placed on the
            // slow node, the edges on the fast one, as far as it held them (`numa_maps`)
            let vmas: Vec<&str> = b
                .run
                .numa_maps_at_end_of_replay
                .lines()
                .filter(|l| l.contains(" anon=") && !l.contains("heap") && !l.contains("stack"))
                .collect();
            assert!(vmas.len() >= 3, "{group}: {vmas:?}");
            let series = group.split('-').nth(1).unwrap();
            assert!(
                b.run.kernel_release.starts_with(&format!("{series}.")),
                "{group}: {}",
                b.run.kernel_release
            );
        }
    }
}

#[test]
fn the_model_against_the_kernel_on_memory_tiers() {
    let rows = rows();
    let table = fidelity::boots_table(rows);
    eprintln!("{table}");
    if let Err(e) = fidelity::unexplained(rows, GAPS) {
        panic!("{e}\n\n{table}");
    }
}

/// The workload's own demotions (its memcg's `pgdemote_kswapd`), and where the benchmark's
/// region ended, piece by piece (the three VMAs its `mbind` ops made: the
/// cold edges placed on the fast node, the hot middle on the slow one): the pages of each piece on
/// the fast node at the end, from the guest's `numa_maps` and from the model's VMAs, within 10 %
/// of every boot (or the boots' spread plus 2 points, or 50 pages). This is the benchmark's own
/// measure, how many hot pages reached the fast node, and where the cold ones went.
#[test]
fn the_region_ends_on_the_nodes_where_the_kernel_left_it() {
    let sizes = |ranges: &[(u64, Vec<u64>)]| ranges.iter().map(|r| r.0).collect::<Vec<_>>();
    let mut table = String::new();
    let mut out = Vec::new();
    for (group, boots) in groups() {
        let g = fidelity::global_group_of(&group, &boots, fidelity::TIERING_COUNTERS).unwrap();
        let kernel: Vec<Vec<(u64, Vec<u64>)>> = boots
            .iter()
            .map(|b| fidelity::numa_maps_anon(&b.run.numa_maps_at_end_of_replay, 2))
            .collect();
        // the pieces: the three consecutive mappings of the placement's sizes
        let want: Vec<u64> = kernel[0].iter().take(3).map(|r| r.0).collect();
        for k in &kernel {
            assert_eq!(sizes(&k[..3]), want, "{group}: the boots' region pieces");
        }
        assert_eq!(want.iter().sum::<u64>(), 49_152, "{group}: 192 MiB in three pieces");
        let model: Vec<(u64, Vec<u64>)> = g
            .model
            .vma_nodes
            .iter()
            .map(|v| (u64::from(v.end - v.start), v.nodes.clone()))
            .collect();
        let at = (0..model.len().saturating_sub(2))
            .find(|&i| sizes(&model[i..i + 3]) == want)
            .unwrap_or_else(|| panic!("{group}: no three model VMAs of sizes {want:?}: {model:?}"));
        // the workload's own demotions (its memcg's memory.stat), where vmstat counts the node's
        let k: Vec<u64> = boots
            .iter()
            .map(|b| b.run.memory_stat.get("pgdemote_kswapd").copied().unwrap_or(0).max(0) as u64)
            .collect();
        let m = g
            .model
            .memory_stat
            .as_ref()
            .map_or(0, |c| c.get(lrugen::mm::vmstat::Stat::PgdemoteKswapd).max(0) as u64);
        let ok = fidelity::within_boots(&k, m);
        table.push_str(&format!(
            "{group:<36} /t's pgdemote_kswapd: kernel {k:?} model {m} {}\n",
            if ok { "ok" } else { "OUT" }
        ));
        if !ok {
            out.push(format!("{group} memcg pgdemote_kswapd: kernel {k:?}, model {m}"));
        }
        for (piece, name) in ["cold edge 1", "hot middle", "cold edge 2"].iter().enumerate() {
            let k: Vec<u64> = kernel.iter().map(|r| r[piece].1[0]).collect();
            let m = model[at + piece].1[0];
            let ok = fidelity::within_boots(&k, m);
            table.push_str(&format!(
                "{group:<36} {name:<12} on the fast node: kernel {k:?} model {m} {}\n",
                if ok { "ok" } else { "OUT" }
            ));
            if !ok {
                out.push(format!("{group} {name}: kernel {k:?}, model {m}"));
            }
        }
    }
    eprintln!("{table}");
    let known: Vec<String> = PLACEMENT_GAPS.iter().map(|(g, p, _)| format!("{g} {p}")).collect();
    let unexplained: Vec<&String> = out
        .iter()
        .filter(|o| !known.iter().any(|k| o.starts_with(k.as_str())))
        .collect();
    let closed: Vec<&String> = known
        .iter()
        .filter(|k| !out.iter().any(|o| o.starts_with(k.as_str())))
        .collect();
    assert!(
        unexplained.is_empty() && closed.is_empty(),
        "out of tolerance: {unexplained:?}; listed but closed: {closed:?}\n{table}"
    );
}

/// Known differences of [`the_region_ends_on_the_nodes_where_the_kernel_left_it`]:
/// (group, piece, why).
const PLACEMENT_GAPS: &[(&str, &str, &str)] = &[("debian-7.2-mglru-gauss-inverted", "cold edge 2", FAST_NODE)];

const FAST_NODE: &str = "7.2 MGLRU keeps 6,701 pages of the second cold edge on the fast node at the \
    end, the boots 6,031/6,555 (+11 %/+2 %), with the hot middle and the first cold edge within \
    tolerance. Before the guest's own shmem was modelled (mm::BootShmem: 3,848-3,902 unmapped shmem \
    pages of the root memcg on node 0, which the kernel demotes too: its node-wide pgdemote_kswapd, \
    10,320-11,075, is the workload memcg's 6,054-7,201 plus those), the model demoted that many more \
    of the workload's pages and eight of the twelve pieces and all four memcg counts were out of \
    tolerance; this one is what is left, not traced";

/// MGLRU demotes with fewer pages scanned per page demoted than the classic LRU (the published
/// comparison: "a much higher demotions-per-scan ratio"), on each kernel and on the model alike.
#[test]
fn mglru_scans_less_per_demotion_than_classic_on_the_kernel_and_the_model() {
    let rows = rows();
    let get = |name: &str, what: &str| {
        let c = rows.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("{name}"));
        let k = c
            .checks
            .iter()
            .find(|k| k.what == what)
            .unwrap_or_else(|| panic!("{name} {what}"));
        (k.kernel as f64, k.model as f64)
    };
    for s in ["6.12", "7.2"] {
        let ratio = |lru: &str| {
            let n = format!("debian-{s}-{lru}-gauss-inverted");
            let (ks, ms) = get(&n, "pgscan_kswapd");
            let (kd, md) = get(&n, "pgdemote_kswapd");
            (ks / kd.max(1.0), ms / md.max(1.0))
        };
        let (mg, cl) = (ratio("mglru"), ratio("classic"));
        assert!(
            mg.0 < cl.0,
            "{s}: kernel scans per demotion: mglru {:.2}, classic {:.2}",
            mg.0,
            cl.0
        );
        assert!(
            mg.1 < cl.1,
            "{s}: model scans per demotion: mglru {:.2}, classic {:.2}",
            mg.1,
            cl.1
        );
    }
}

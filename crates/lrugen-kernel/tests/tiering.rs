// SPDX-License-Identifier: GPL-2.0-only
//! The model against real kernels on a machine of memory tiers (issue 14, item 3): the fixtures
//! of `tests/fixtures/tiering/` (the Gaussian micro-benchmark with an inverted start,
//! `gauss-inverted.toml`: hot pages placed on the slow node by the op file's `mbind` ops, in a
//! guest of a 192 MiB DRAM node with the vCPU and a 128 MiB CPU-less node that qemu's ACPI HMAT
//! puts one memory tier down; no memcg limit, demotion on, NUMA balancing in memory-tiering
//! mode; Debian 6.12 and 7.2, MGLRU and classic, two boots each;
//! `scripts/regen-kernel-tiering.sh`) replayed on the model with the guest's two nodes and their
//! zones, its tiers and knobs, and its kernel's preset.
//!
//! Each counter of [`fidelity::TIERING_COUNTERS`] is judged against every boot as under global
//! pressure: within 10 % of each (or 50 events), widened to the boots' own spread plus 2 points
//! ([`fidelity::within_boots`]). A counter out of it fails unless listed in [`GAPS`] with the
//! measured numbers and the reason; a listed gap that has closed fails too. The published
//! comparison's claim, that MGLRU demotes with far fewer pages scanned than the classic LRU, must
//! hold on the kernel and on the model alike. No qemu here.

use lrugen_kernel::fidelity::{self, Compared};
use lrugen_kernel::Capture;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const CLASSIC_KSWAPD: &str = "the classic LRU's kswapd runs about twice as often as the kernel's \
    (pageoutrun 206 against 110/94 on 6.12, 142 against 89/88 on 7.2) and scans 20-28 % more for \
    the same demotions (within 3 %): each promotion that finds node 0 short wakes it inline, where \
    the kernel's thread may still be running or in its 100 ms short sleep; MGLRU's pageoutrun is \
    within 10 %";
const MGLRU_SCAN: &str = "6.12 MGLRU's kswapd scans 38 % fewer pages than the kernel's (18,107 \
    against 29,735/29,109) for the same demotions (within 2 %): the kernel's eviction rejects more \
    of what it isolates here, which ones is not known yet; on 7.2 (boots 13,643 and 20,922) the \
    model's 20,607 is within the boots' spread";

/// Known differences: (fixture group, counter, why). Each is a model defect, not a tolerance.
const GAPS: &[(&str, &str, &str)] = &[
    ("debian-6.12-classic-gauss-inverted", "pgscan_kswapd", CLASSIC_KSWAPD),
    ("debian-6.12-classic-gauss-inverted", "pageoutrun", CLASSIC_KSWAPD),
    ("debian-6.12-mglru-gauss-inverted", "pgscan_kswapd", MGLRU_SCAN),
    ("debian-7.2-classic-gauss-inverted", "pgscan_kswapd", CLASSIC_KSWAPD),
    ("debian-7.2-classic-gauss-inverted", "pageoutrun", CLASSIC_KSWAPD),
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

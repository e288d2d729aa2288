// SPDX-License-Identifier: GPL-2.0-only
//! The global-pressure fixtures (`tests/fixtures/global/`) replayed on the model twice: as
//! `tests/global.rs` does (kswapd inline, run to the high watermark when woken) and under the
//! virtual-time engine with kswapd a task of its own (`KswapdMode::Task`) on the guest's one vCPU
//! and on two, so that the replay's allocations race kswapd; kswapd's and direct reclaim's
//! counters of each beside the kernel's boots (docs/global-pressure.md).
//!
//! `cargo run --release -p lrugen-kernel --example global-engine [DIR [GROUP-SUBSTRING]]`
//! (DIR: another fixture directory of global-pressure boots, e.g. `tests/fixtures/min_ttl`)

use lrugen::mm::vmstat::Stat;
use lrugen::sim::engine::{EngineConfig, KswapdMode};
use lrugen::sim::RunResult;
use lrugen_kernel::{fidelity, model, Capture};
use std::collections::BTreeMap;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // another fixture directory (the min_ttl ones) and a substring of the groups to run
    let mut args = std::env::args().skip(1);
    let dir = args.next().map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/global"),
        std::path::PathBuf::from,
    );
    let only = args.next().unwrap_or_default();
    let mut groups: BTreeMap<String, Vec<Capture>> = BTreeMap::new();
    for p in fidelity::fixtures(&dir)? {
        let stem = p.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        let name = stem.rsplit_once("-boot").map_or(stem.as_str(), |s| s.0).to_string();
        groups.entry(name).or_default().push(Capture::load(&p)?);
    }
    // misses, then the reclaim counters of the global-pressure checks that tell kswapd from
    // direct reclaim
    let picked = ["pgscan_kswapd", "pgscan_direct", "allocstall", "pageoutrun"];
    let counters: Vec<(&str, &[&str], &[Stat])> = std::iter::once(("misses", &[][..], &[][..]))
        .chain(
            fidelity::GLOBAL_COUNTERS
                .iter()
                .filter(|c| picked.contains(&c.0))
                .map(|&(n, k, s)| (n, k, s)),
        )
        .collect();
    println!(
        "| fixture | counter | kernel boots | model inline | engine, 1 CPU | engine, 1 CPU, 0.75 ms slice | engine, 2 CPUs |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, boots) in groups.iter().filter(|(n, _)| n.contains(&only)) {
        let c = &boots[0];
        let ops = c.ops()?;
        let settings = lrugen_kernel::fidelity::settings_of(&c.settings, &c.run);
        let cfg = model::config(&settings, model::profile_for_release(&c.run.kernel_release))?;
        let layout = c.layout(&ops);
        let (inline, _) = model::run_tasks_at(&ops, &cfg, &layout)?;
        let engine = |cpus, sched_slice_ns| {
            let e = EngineConfig {
                cpus,
                kswapd: KswapdMode::Task,
                sched_slice_ns,
                ..Default::default()
            };
            model::run_engine_at(&ops, &cfg, &layout, &e)
        };
        let runs: [RunResult; 4] = [inline, engine(1, 0)?, engine(1, 750_000)?, engine(2, 0)?];
        for (what, k, s) in &counters {
            let kernel: Vec<String> = boots
                .iter()
                .map(|b| {
                    if k.is_empty() {
                        b.run.misses
                    } else {
                        k.iter()
                            .map(|n| b.run.vmstat_delta.get(*n).copied().unwrap_or(0).max(0) as u64)
                            .sum()
                    }
                    .to_string()
                })
                .collect();
            let model: Vec<String> = runs
                .iter()
                .map(|r| {
                    if s.is_empty() {
                        r.misses
                    } else {
                        s.iter().map(|&x| r.vm(x).max(0) as u64).sum()
                    }
                    .to_string()
                })
                .collect();
            println!("| {name} | {what} | {} | {} |", kernel.join("/"), model.join(" | "));
        }
    }
    Ok(())
}

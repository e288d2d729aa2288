// SPDX-License-Identifier: GPL-2.0-only
//! Any `/proc/vmstat` counter of shape fixtures, kernel beside model, including those the
//! fidelity checks leave out: `cargo run --release -p lrugen-kernel --example counters --
//! [--profile P] debian-7.2-mglru-mixed-swappiness10 [more fixtures, by shape name or path] [-- pgactivate pgrefill ...]`.
//! `--profile` runs the model as that profile (`6.1`, `6.12`, `7.2`, …, with switches
//! flipped as in `7.2+vma_has_recency=false`) instead of the fixture kernel's own. Without
//! counters after `--`, every event either side counted is shown (vm events, `workingset_*` but
//! `workingset_nodes`, `nr_vmscan_*`, `nr_dirtied`, `nr_written`): the fixture keeps the
//! kernel's change over the replay, which for a gauge (`nr_anon_pages`, ...) is not what the
//! model's value at the end is. Each fixture's table starts with the replayer's misses and, for
//! MGLRU, the final `min_seq[anon]/min_seq[file]..max_seq` of the workload's memcg, each side's.
//! No qemu: the fixtures are checked in.

use lrugen::mm::vmstat::{proc_vmstat_items, Stat, StatKind};
use lrugen_kernel::{fidelity, model, Capture};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let forced: Option<lrugen::reclaim::mglru::state::Profile> = match args.iter().position(|a| a == "--profile") {
        Some(i) if i + 1 < args.len() => {
            let p = args[i + 1].parse().unwrap_or_else(|e| {
                eprintln!("error: --profile {}: {e}", args[i + 1]);
                std::process::exit(2)
            });
            args.drain(i..i + 2);
            Some(p)
        }
        Some(_) => {
            eprintln!("error: --profile needs a profile");
            std::process::exit(2)
        }
        None => None,
    };
    let profile_of = |release: &str| forced.unwrap_or_else(|| model::profile_for_release(release));
    let (names, wanted) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (&args[..], &[][..]),
    };
    if names.is_empty() {
        eprintln!(
            "usage: counters FIXTURE... [-- COUNTER...] (fixtures in {})",
            fidelity::shapes_dir().display()
        );
        std::process::exit(2);
    }
    let counts_events = |s: &Stat| {
        s.kind() == StatKind::Event
            || (s.name().starts_with("workingset_") && *s != Stat::WorkingsetNodes)
            || [
                "nr_vmscan_write",
                "nr_vmscan_immediate_reclaim",
                "nr_dirtied",
                "nr_written",
            ]
            .contains(&s.name())
    };
    let stats: Vec<Stat> = if wanted.is_empty() {
        proc_vmstat_items().filter(counts_events).collect()
    } else {
        let mut v = Vec::new();
        for w in wanted {
            match proc_vmstat_items().find(|s| s.name() == w) {
                Some(s) => v.push(s),
                None => {
                    eprintln!("error: `{w}` is not a /proc/vmstat counter the model keeps");
                    std::process::exit(2);
                }
            }
        }
        v
    };
    for name in names {
        // a shape's name, or the path of any fixture (a multi-task boot, say)
        let p = if name.ends_with(".json") {
            std::path::PathBuf::from(name)
        } else {
            fidelity::shapes_dir().join(format!("{name}.json"))
        };
        let run = || -> Result<(Capture, lrugen::sim::RunResult), Box<dyn std::error::Error>> {
            let c = Capture::load(&p)?;
            let ops = c.ops()?;
            let profile = profile_of(&c.run.kernel_release);
            // as the fidelity checks configure it: a guest with no memcg limit gets its zones
            let mut settings = fidelity::settings_of(&c.settings, &c.run);
            settings.model_capacity_pages = c.run.model_capacity_for(&ops).max(1);
            let cfg = model::config(&settings, profile)?;
            let m = model::run_at(&ops, &cfg, &c.layout(&ops))?;
            Ok((c, m))
        };
        let (c, m) = run().unwrap_or_else(|e| {
            eprintln!("error: {}: {e}", p.display());
            std::process::exit(1)
        });
        println!(
            "{name} ({}; the model as {})",
            c.run.kernel_release,
            profile_of(&c.run.kernel_release).name()
        );
        println!("  {:32} {:>10} {:>10}", "counter", "kernel", "model");
        println!("  {:32} {:>10} {:>10}", "misses", c.run.misses, m.misses);
        if c.settings.lru == "mglru" {
            let show = |s: Option<(u64, u64, u64)>| s.map_or("none".to_string(), |(a, f, x)| format!("{a}/{f}..{x}"));
            let model_seqs = m.debugfs.last().and_then(|(_, _, full)| fidelity::seqs(full));
            println!(
                "  {:32} {:>10} {:>10}",
                "min_seq anon/file..max_seq",
                show(fidelity::seqs(&c.run.lru_gen_full)),
                show(model_seqs)
            );
        }
        for &s in &stats {
            let k = c.run.vmstat_delta.get(s.name()).copied().unwrap_or(0);
            let mv = m.vm(s);
            if wanted.is_empty() && k == 0 && mv == 0 {
                continue;
            }
            println!("  {:32} {:>10} {:>10}", s.name(), k, mv);
        }
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! The generations of `/t` per window, kernel beside model, for shape fixtures run with MGLRU:
//! `cargo run --release -p lrugen-kernel --example gens -- debian-7.2-mglru-mixed-swappiness10
//! [more fixtures] [-- --switch NAME=BOOL ...]`. Each line is one window: `seq:anon/file` for
//! every generation, the kernel's first, then the model's. No qemu: the fixtures are checked in.

use lrugen_kernel::{fidelity, model, report, Capture};

fn row(gens: impl Iterator<Item = (u64, u64, u64)>) -> String {
    gens.map(|(s, a, f)| format!("{s}:{a}/{f}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (names, flips) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (&args[..], &[][..]),
    };
    if names.is_empty() {
        eprintln!(
            "usage: gens FIXTURE... [-- NAME=BOOL...] (fixtures in {})",
            fidelity::shapes_dir().display()
        );
        std::process::exit(2);
    }
    for name in names {
        let path = fidelity::shapes_dir().join(format!("{name}.json"));
        let c = Capture::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let ops = c.ops().expect("ops");
        let profile = lrugen_kernel::model::profile_for_release(&c.run.kernel_release);
        let mut settings = c.settings.clone();
        settings.model_capacity_pages = c.run.model_capacity_for(&ops).max(1);
        let mut cfg = model::config(&settings, profile).expect("config");
        for f in flips {
            let (n, v) = f.split_once('=').expect("NAME=BOOL");
            assert!(cfg.mglru.profile.switches.set(n, v == "true"), "unknown switch {n}");
        }
        let m = model::run_at(&ops, &cfg, &c.layout(&ops)).expect("model run");
        println!("{name}");
        let mut model_at = std::collections::BTreeMap::new();
        for s in &m.series {
            model_at.insert(s.step, row(s.generations.iter().copied()));
        }
        for (n, text) in &c.run.lru_gen_samples {
            let k = report::workload_gens(text)
                .ok()
                .flatten()
                .map(|g| row(g.iter().map(|g| (g.seq, g.anon, g.file))))
                .unwrap_or_default();
            println!("{n:>7} K {k}");
            println!("{:>7} M {}", "", model_at.get(n).cloned().unwrap_or_default());
        }
        println!(
            "misses: kernel {} model {} ({:+.1} %); pgactivate kernel {} model {}; pgrefill (memcg) kernel {} model {}",
            c.run.misses,
            m.misses,
            (m.misses as f64 / c.run.misses.max(1) as f64 - 1.0) * 100.0,
            c.run.vmstat_delta.get("pgactivate").copied().unwrap_or(0),
            m.vmstat
                .as_ref()
                .map_or(0, |v| v.get(lrugen::mm::vmstat::Stat::Pgactivate)),
            c.run.memory_stat.get("pgrefill").copied().unwrap_or(0),
            m.memory_stat
                .as_ref()
                .map_or(0, |v| v.get(lrugen::mm::vmstat::Stat::Pgrefill)),
        );
        if std::env::var_os("GENS_FULL").is_some() {
            if let Some((_, _, full)) = m.debugfs.last() {
                println!("model lru_gen_full:\n{full}");
            }
        }
    }
}

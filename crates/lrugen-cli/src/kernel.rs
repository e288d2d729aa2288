// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen kernel`: run a workload on a real Linux kernel under qemu and put the kernel's
//! counters beside the model's for the same page stream.

use clap::Args;
use lrugen::mm::MachineConfig;
use lrugen::reclaim::mglru::{MglruConfig, Profile};
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig};
use lrugen::workload::WorkloadSpec;
use lrugen_kernel::{dense_trace, file_read_ops, KernelOpts, KernelSource, LruMode};
use std::path::PathBuf;
use std::sync::Arc;

/// Options of `lrugen kernel`.
#[derive(Args)]
pub struct KernelArgs {
    /// Debian kernel series to boot (the newest package of it): 6.1 or 6.12.
    #[arg(long, default_value = "6.1")]
    series: String,
    /// Boot this kernel image (bzImage or vmlinux) instead, with --modules.
    #[arg(long, value_name = "FILE", requires = "modules")]
    image: Option<PathBuf>,
    /// The image's lib/modules/KVER directory.
    #[arg(long, value_name = "DIR")]
    modules: Option<PathBuf>,
    /// LRU in the guest: mglru or classic.
    #[arg(long, default_value = "mglru")]
    lru: String,
    /// memory.max of the workload memcg in the guest (e.g. 32M).
    #[arg(long, default_value = "32M")]
    memcg_max: String,
    /// File size (the workload reads one file through the page cache).
    #[arg(long, default_value = "64M")]
    size: String,
    /// Buffered 4 KiB reads.
    #[arg(long, default_value_t = 100_000)]
    accesses: u64,
    /// Read distribution: uniform or zipf:THETA.
    #[arg(long, default_value = "zipf:0.9")]
    dist: String,
    /// Seed of the stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The static replayer (default: $LRUGEN_REPLAYER, else target/x86_64-unknown-linux-gnu/release).
    #[arg(long, value_name = "FILE")]
    replayer: Option<PathBuf>,
    /// Print the kernel's lru_gen_full too.
    #[arg(long)]
    debugfs: bool,
}

pub fn cmd_kernel(a: KernelArgs) -> Result<(), String> {
    let file_pages = lrugen::experiment::size::parse_pages(&a.size).map_err(|e| format!("--size: {e}"))?;
    let memcg = lrugen::experiment::size::parse_pages(&a.memcg_max).map_err(|e| format!("--memcg-max: {e}"))?;
    if file_pages == 0 || memcg == 0 || a.accesses == 0 {
        return Err("--size, --memcg-max and --accesses must be positive".into());
    }
    let dist = a.dist.parse().map_err(|e| format!("--dist: {e}"))?;
    let ops = file_read_ops(file_pages, a.accesses, dist, a.seed, (a.accesses / 20).max(1));
    let source = match (&a.image, &a.modules) {
        (Some(i), Some(m)) => KernelSource::Image {
            image: i.clone(),
            modules: m.clone(),
        },
        _ => KernelSource::Debian {
            series: a.series.clone(),
        },
    };
    let mut o = KernelOpts::new(source, ops.clone(), memcg * 4096);
    o.lru = match a.lru.as_str() {
        "mglru" => LruMode::Mglru { enabled: "y".into() },
        "classic" => LruMode::Classic,
        x => return Err(format!("--lru: expected mglru or classic, found '{x}'")),
    };
    if let Some(r) = a
        .replayer
        .clone()
        .or_else(|| std::env::var_os("LRUGEN_REPLAYER").map(PathBuf::from))
    {
        o.replayer = r;
    }
    eprintln!("booting the kernel under qemu (TCG, -icount): this takes a minute or two ...");
    let run = lrugen_kernel::run(&o).map_err(|e| e.to_string())?;
    // the same stream through the model, with the kernel's effective capacity
    let (pages, nr) = dense_trace(&ops);
    let cap = run.resident_pages().max(1);
    let policy = if a.lru == "classic" {
        PolicyKind::Classic
    } else {
        PolicyKind::Mglru
    };
    let mut cfg = RunConfig::new(
        MachineConfig::simple(cap * 4 + 65_536, 0),
        MemcgConfig {
            max: Some(cap),
            ..Default::default()
        },
        WorkloadSpec::Trace {
            path: "kernel-run".into(),
        },
        policy,
    );
    cfg.mglru = MglruConfig {
        profile: if run.kernel_release.starts_with("6.1.") {
            Profile::V6_1
        } else {
            Profile::Mainline
        },
        ..Default::default()
    };
    let model = sim::run(&cfg, Some((Arc::new(pages), nr)), &mut |_, _| {}).map_err(|e| e.to_string())?;
    println!(
        "kernel: {} ({}), model: {} (profile {}), memcg capacity {cap} pages",
        run.kernel_release,
        a.lru,
        model.policy,
        cfg.mglru.profile.name()
    );
    println!(
        "workload: {} buffered reads of a {} MiB file, {}, seed {}\n",
        a.accesses,
        file_pages * 4 / 1024,
        a.dist,
        a.seed
    );
    println!("{:<28} {:>12} {:>12} {:>10}", "counter", "kernel", "model", "diff");
    let row = |name: &str, k: i64, m: i64| {
        let d = if k != 0 {
            format!("{:+.2}%", (m - k) as f64 * 100.0 / k as f64)
        } else {
            "-".into()
        };
        println!("{name:<28} {k:>12} {m:>12} {d:>10}");
    };
    let kv = |n: &str| run.vmstat_delta.get(n).copied().unwrap_or(0);
    row("misses (mincore)", run.misses as i64, model.misses as i64);
    use lrugen::mm::vmstat::Stat;
    for s in [
        Stat::WorkingsetRefaultFile,
        Stat::WorkingsetActivateFile,
        Stat::Pgactivate,
        Stat::Pgdeactivate,
    ] {
        row(s.name(), kv(s.name()), model.vm(s));
    }
    let ms = |n: &str| run.memory_stat.get(n).copied().unwrap_or(0);
    row("memory.stat pgscan", ms("pgscan"), model.pgscan());
    row("memory.stat pgsteal", ms("pgsteal"), model.pgsteal());
    if a.debugfs {
        println!("\n--- kernel lru_gen_full ---\n{}", run.lru_gen_full);
        if let Some((_, _, full)) = model.debugfs.last() {
            println!("--- model lru_gen_full ---\n{full}");
        }
    }
    Ok(())
}

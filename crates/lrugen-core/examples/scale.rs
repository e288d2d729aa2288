// SPDX-License-Identifier: GPL-2.0-only
//! Cost per access against memcg size (issue #15, `docs/performance.md`): the full-scale fio shape
//! (40 files holding 2.5 times the memcg, buffered 4 KiB reads, Zipf 0.9) in memcgs of 1, 2, 4, …
//! MAX_GIB GiB, under MGLRU and the classic LRU, without the engine. Each point runs the workload
//! twice, with N = 3 × the memcg's pages accesses and with 2N, and reports the steady-state cost
//! `(t(2N) − t(N)) / N`: the second N accesses, once the memcg has filled and reclaim runs, with
//! the machine's setup and the fill left out. Prints a CSV table and writes `scale.csv`,
//! `scale.svg` and `scale.png` into OUT_DIR.
//!
//! `cargo run --release -p lrugen-core --example scale -- OUT_DIR [MAX_GIB (default 64)]`

use lrugen::experiment::plot::{draw_lines, ensure_font, svg_and_png, Area, Line};
use lrugen::mm::MachineConfig;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig};
use lrugen::workload::{dist::Dist, WorkloadSpec};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

const PAGES_PER_GIB: u64 = 1 << 18;
const FILES: u32 = 40;

fn run(gib: u64, policy: PolicyKind, accesses: u64) -> Result<sim::RunResult, String> {
    let pages = gib * PAGES_PER_GIB;
    let workload = WorkloadSpec::FileRead {
        files: FILES,
        file_pages: pages * 5 / 2 / FILES as u64,
        dist: Dist::Zipf { theta: 0.9 },
        accesses,
    };
    let memcg = MemcgConfig {
        max: Some(pages),
        ..Default::default()
    };
    let cfg = RunConfig::new(MachineConfig::simple(2 * pages, 0), memcg, workload, policy);
    sim::run(&cfg, None, &mut |_, _| {}).map_err(|e| format!("{gib} GiB, {}: {e}", policy.name()))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (out, max_gib) = match args.as_slice() {
        [out] => (PathBuf::from(out), Some(64)),
        [out, max] => (PathBuf::from(out), max.parse::<u64>().ok().filter(|&g| g >= 1)),
        _ => (PathBuf::new(), None),
    };
    let Some(max_gib) = max_gib else {
        eprintln!("usage: scale OUT_DIR [MAX_GIB (a whole number of GiB, at least 1; default 64)]");
        return ExitCode::FAILURE;
    };
    match sweep(&out, max_gib) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scale: {e}");
            ExitCode::FAILURE
        }
    }
}

fn sweep(out: &std::path::Path, max_gib: u64) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    ensure_font()?;
    let policies = [PolicyKind::Mglru, PolicyKind::Classic];
    let mut csv =
        String::from("memcg_gib,policy,accesses,seconds_n,seconds_2n,ns_per_access,hit_ratio,state_bytes_per_page\n");
    let mut lines: Vec<Line> = policies
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name().to_string(), i, Vec::new()))
        .collect();
    print!("{csv}");
    let mut gib = 1;
    while gib <= max_gib {
        let n = 3 * gib * PAGES_PER_GIB;
        for (i, &p) in policies.iter().enumerate() {
            let short = run(gib, p, n)?;
            let long = run(gib, p, 2 * n)?;
            let ns = (long.wall_seconds - short.wall_seconds).max(0.0) * 1e9 / n as f64;
            let resident = long.memory_stat.as_ref().map_or(0, |ms| {
                use lrugen::mm::vmstat::Stat;
                (ms.get(Stat::NrAnonPages) + ms.get(Stat::NrFilePages)).max(0) as u64
            });
            let per_page = match (long.state_bytes, resident) {
                (Some(b), 1..) => b as f64 / resident as f64,
                _ => f64::NAN,
            };
            let row = format!(
                "{gib},{},{},{:.3},{:.3},{ns:.1},{:.4},{per_page:.1}\n",
                p.name(),
                2 * n,
                short.wall_seconds,
                long.wall_seconds,
                long.hit_ratio
            );
            print!("{row}");
            csv.push_str(&row);
            lines[i].2.push((gib as f64, ns));
        }
        gib *= 2;
    }
    let path = out.join("scale.csv");
    std::fs::write(&path, &csv).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut written = Vec::new();
    let title = "Cost per access at steady state (40 files = 2.5 x memcg, Zipf 0.9)";
    let axes = ("memcg size (GiB)", "ns per access (second N of 2N)");
    svg_and_png(out, "scale", (800, 500), &mut written, &|area| match area {
        Area::Svg(a) => draw_lines(&a, title, axes, &lines),
        Area::Png(a) => draw_lines(&a, title, axes, &lines),
    })?;
    let mut note = String::new();
    for f in written.iter().chain([&path]) {
        let _ = write!(note, " {}", f.display());
    }
    eprintln!("wrote{note}");
    Ok(())
}

// SPDX-License-Identifier: GPL-2.0-only
//! Working-set estimation and proactive reclaim with the multi-gen LRU's debugfs interface, as a
//! job scheduler does it (`Documentation/admin-guide/mm/multigen_lru.rst`), driven by the control
//! script `examples/ctl/wss.toml`: every 5,000 accesses the agent ages the workload's lruvec
//! (`+ memcg node max_seq 1 1`) and reads `lru_gen`; the pages of the two youngest generations
//! are the working set of the last two intervals; at 60,000 accesses it evicts every older
//! generation (`- memcg node max_seq-2`). The workload is anonymous memory touched with a Zipf
//! distribution (loads and stores seen through the accessed bits, which is what aging reads), in
//! a memcg that holds the whole region, with swap on zram.
//!
//! Writes into OUT_DIR: `wss.svg`/`.png` (the histogram over time: pages in the two youngest
//! generations, the estimate, against the memcg's usage), `wss-misses.svg`/`.png` (misses per
//! window with and without the proactive reclaim: what the reclaim cost) and `wss.csv`; prints the
//! table. `cargo run --release -p lrugen-core --example wss -- OUT_DIR`

use lrugen::control::Script;
use lrugen::experiment::plot::{draw_lines, ensure_font, svg_and_png, Area, Line};
use lrugen::mm::MachineConfig;
use lrugen::reclaim::mglru::debugfs;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunResult};
use lrugen::workload::{dist::Dist, WorkloadSpec};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const REGION: u64 = 16_384; // 64 MiB
const ACCESSES: u64 = 100_000;
const WINDOW: u64 = 5_000;

fn config(script: Option<Script>) -> RunConfig {
    let w = WorkloadSpec::Anon {
        compressed_pct: 0,
        pages: REGION,
        write_ratio: 0.3,
        dist: Dist::Zipf { theta: 1.1 },
        accesses: ACCESSES,
    };
    let memcg = MemcgConfig {
        max: Some(REGION),
        ..Default::default()
    };
    let mut c = RunConfig::new(
        MachineConfig::simple(2 * REGION, 2 * REGION),
        memcg,
        w,
        PolicyKind::Mglru,
    );
    // samples every 8 steps: the populate pass (16,384 steps) and the windows (5,000) both end on one
    c.sample_every = Some(8);
    c.ctl = script;
    c
}

/// Misses in each window of `WINDOW` measured accesses: the samples count steps, which include
/// the populate pass (the steps before the measured accesses).
fn misses_per_window(r: &RunResult) -> Vec<(f64, f64)> {
    let populate = r.series.last().map_or(0, |s| s.step.saturating_sub(ACCESSES));
    let mut out = Vec::new();
    let mut prev = None;
    for s in &r.series {
        if s.step < populate || (s.step - populate) % WINDOW != 0 {
            continue;
        }
        if let Some(p) = prev {
            out.push(((s.step - populate) as f64, (s.misses - p) as f64));
        }
        prev = Some(s.misses);
    }
    out
}

fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: wss OUT_DIR");
        return ExitCode::from(2);
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ctl/wss.toml");
    let script = match Script::load(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let run = |c: &RunConfig| sim::run(c, None, &mut |_, _| {});
    let (with, without) = match (run(&config(Some(script))), run(&config(None))) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    // the histogram at each read: pages of the two youngest generations, and all pages
    let mut rows = Vec::new();
    let mut usage_at = std::collections::BTreeMap::new();
    for r in &with.ctl {
        if r.file == "memory.current" {
            if let Some(t) = &r.text {
                // the read before the reclaim where there are two at one count
                usage_at
                    .entry(r.accesses)
                    .or_insert(t.trim().parse::<u64>().unwrap_or(0) / 4096);
            }
        }
    }
    for r in with.ctl.iter().filter(|r| r.file == "lru_gen" && r.write.is_none()) {
        let Some(lv) = r
            .text
            .as_deref()
            .and_then(|t| debugfs::parse(t).ok())
            .and_then(|v| v.into_iter().find(|l| l.path == "/t"))
        else {
            continue;
        };
        let pages = |g: &debugfs::ParsedGen| g.pages[0] + g.pages[1];
        let total: u64 = lv.gens.iter().map(pages).sum();
        let young: u64 = lv.gens.iter().rev().take(2).map(pages).sum();
        rows.push((
            r.accesses,
            young,
            total,
            usage_at.get(&r.accesses).copied().unwrap_or(0),
        ));
    }
    let evicted = with
        .ctl
        .iter()
        .find(|r| r.write.as_deref().is_some_and(|w| w.starts_with('-')))
        .and_then(|r| r.reclaimed)
        .unwrap_or(0);
    let (mw, mo) = (misses_per_window(&with), misses_per_window(&without));
    let mut csv = String::from("accesses,young_pages,lru_pages,usage_pages,misses_with,misses_without\n");
    let mut table = format!(
        "{:>9} {:>12} {:>10} {:>10} {:>14} {:>17}\n",
        "accesses", "2 youngest", "all gens", "usage", "misses (wss)", "misses (no agent)"
    );
    for &(acc, young, total, usage) in &rows {
        let at = |v: &[(f64, f64)]| v.iter().find(|p| p.0 == acc as f64).map_or(0.0, |p| p.1);
        let _ = writeln!(csv, "{acc},{young},{total},{usage},{},{}", at(&mw), at(&mo));
        let _ = writeln!(
            table,
            "{acc:>9} {young:>12} {total:>10} {usage:>10} {:>14} {:>17}",
            at(&mw),
            at(&mo)
        );
    }
    print!("{table}");
    println!(
        "\nproactive reclaim at 60,000 accesses evicted {evicted} pages; misses over the run: {} with \
         the agent, {} without ({:+})",
        with.misses,
        without.misses,
        with.misses as i64 - without.misses as i64
    );
    if let Err(e) = std::fs::create_dir_all(&out).and_then(|_| std::fs::write(out.join("wss.csv"), &csv)) {
        eprintln!("error: {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    if let Err(e) = ensure_font() {
        eprintln!("no plots: {e}");
        return ExitCode::SUCCESS;
    }
    let hist: Vec<Line> = vec![
        (
            "memory.current".into(),
            2,
            rows.iter().map(|r| (r.0 as f64, r.3 as f64)).collect(),
        ),
        (
            "pages in all generations".into(),
            1,
            rows.iter().map(|r| (r.0 as f64, r.2 as f64)).collect(),
        ),
        (
            "two youngest generations (working set estimate)".into(),
            0,
            rows.iter().map(|r| (r.0 as f64, r.1 as f64)).collect(),
        ),
    ];
    let misses: Vec<Line> = vec![
        ("proactive reclaim at 60,000".into(), 0, mw),
        ("no agent".into(), 1, mo),
    ];
    let mut files = Vec::new();
    let r = svg_and_png(&out, "wss", (800, 500), &mut files, &|a: Area<'_>| match a {
        Area::Svg(d) => draw_lines(
            &d,
            "MGLRU working-set estimate (anon Zipf 1.1, 64 MiB memcg)",
            ("accesses", "pages"),
            &hist,
        ),
        Area::Png(d) => draw_lines(
            &d,
            "MGLRU working-set estimate (anon Zipf 1.1, 64 MiB memcg)",
            ("accesses", "pages"),
            &hist,
        ),
    })
    .and_then(|_| {
        svg_and_png(&out, "wss-misses", (800, 500), &mut files, &|a: Area<'_>| match a {
            Area::Svg(d) => draw_lines(&d, "misses per 5,000 accesses", ("accesses", "misses"), &misses),
            Area::Png(d) => draw_lines(&d, "misses per 5,000 accesses", ("accesses", "misses"), &misses),
        })
    });
    match r {
        Ok(()) => {
            for f in files {
                println!("wrote {}", f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

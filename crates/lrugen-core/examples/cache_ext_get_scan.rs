// SPDX-License-Identifier: GPL-2.0-only
//! docs/cache-ext.md's GET-SCAN table: the kernel's LRUs and cache_ext's example policies on
//! MGLRU-FG's LevelDB GET/SCAN preset (`examples/fg-leveldb-get-scan.toml`), per job: the GET
//! tasks' and the SCAN tasks' hit ratios and the GET reads per second of virtual time (GET reads
//! over the GET jobs' longest span), averaged over the file's three seeds; GET-SCAN also with its
//! scan-list threshold at 1,000 and 160 pages. Run from the repository's root:
//! `cargo run --release -p lrugen-core --example cache_ext_get_scan`

use lrugen::experiment::Experiment;
use lrugen::reclaim::ext::policies::{GetScan, PolicyEnv, Shipped};
use lrugen::reclaim::ext::CacheExt;
use lrugen::sim::{self, PolicyKind, RunConfig, RunResult};
use std::path::Path;

/// (GET hit ratio %, SCAN hit ratio %, GET reads/s): the preset's 4 GET jobs come first.
fn split(r: &RunResult) -> (f64, f64, f64) {
    let e = r.engine.as_ref().expect("an engine run");
    let (mut gi, mut gh, mut si, mut sh, mut span) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for (j, s) in e.jobs.iter().enumerate() {
        if j < 4 {
            gi += s.read.ios;
            gh += s.read.hits;
            span = span.max(s.runtime_ns());
        } else {
            si += s.read.ios;
            sh += s.read.hits;
        }
    }
    let pct = |h: u64, n: u64| if n == 0 { 0.0 } else { 100.0 * h as f64 / n as f64 };
    (pct(gh, gi), pct(sh, si), gi as f64 / (span.max(1) as f64 / 1e9))
}

type Ops = Box<dyn lrugen::reclaim::ext::CacheExtOps + Send>;

fn run_ext(cfg: &RunConfig, ops: impl FnOnce(Vec<u32>) -> Ops) -> Result<RunResult, String> {
    let prof = cfg.mglru.profile;
    sim::run_with_policy(cfg, None, &mut |_, _| {}, |m, s| {
        let scans = s.part_tasks.last().cloned().unwrap_or_default();
        CacheExt::new(m, s.memcg, prof, ops(scans))
    })
    .map(|(r, _)| r)
    .map_err(|e| e.to_string())
}

fn run(cfg: &RunConfig, name: &str) -> Result<RunResult, String> {
    match name {
        "classic" | "mglru" => {
            let mut c = cfg.clone();
            c.policy = name.parse()?;
            if name == "mglru" {
                c.mglru.profile = "7.2".parse()?;
            }
            sim::run(&c, None, &mut |_, _| {}).map_err(|e| e.to_string())
        }
        n if n.starts_with("get_scan@") => {
            let min: i64 = n["get_scan@".len()..].parse().map_err(|_| n.to_string())?;
            run_ext(cfg, |scans| Box::new(GetScan::with_min_scan_pages(scans, min)))
        }
        n => {
            let p = Shipped::parse(&format!("cache_ext:{n}")).ok_or(n)??;
            run_ext(cfg, |scans| p.build(&PolicyEnv { scan_tasks: scans }))
        }
    }
}

fn main() -> Result<(), String> {
    let path = Path::new("examples/fg-leveldb-get-scan.toml");
    let e = Experiment::from_file(path).map_err(|e| e.to_string())?;
    let v = e
        .variants
        .iter()
        .position(|v| v.policy == PolicyKind::Classic)
        .ok_or("no classic variant")?;
    let cells: Vec<_> = e.cells().into_iter().filter(|c| c.variant == v).collect();
    println!("| policy | GET hit ratio | SCAN hit ratio | GET reads/s |");
    println!("|---|---|---|---|");
    for name in [
        "classic",
        "mglru",
        "fifo",
        "mru",
        "lfu",
        "s3fifo",
        "lhd",
        "get_scan",
        "get_scan@1000",
        "get_scan@160",
    ] {
        let mut sum = (0.0, 0.0, 0.0);
        for cell in &cells {
            let mut cfg = e.run_config(cell, None);
            let mut engine = cfg.engine.clone().unwrap_or_default();
            engine.per_job = true;
            cfg.engine = Some(engine);
            let (g, s, gops) = split(&run(&cfg, name)?);
            sum = (sum.0 + g, sum.1 + s, sum.2 + gops);
        }
        let n = cells.len() as f64;
        println!("| {name} | {:.1}% | {:.1}% | {:.0} |", sum.0 / n, sum.1 / n, sum.2 / n);
    }
    Ok(())
}

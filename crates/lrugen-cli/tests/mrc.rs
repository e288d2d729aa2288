// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen mrc` (docs/mrc.md): LRU's curve from stack distances equals `lrugen run`'s LRU at every
//! size; the miniature-simulation curves of `mglru` and `classic` are within the bound docs/mrc.md
//! states of full runs at ten sizes (on the shipped synthetic trace over five hash seeds, and on
//! the shared OLTP trace); the curves do not depend on the thread count; the command's JSON and
//! `--out` files.
//!
//! A `harness = false` test binary (`lrugen_trace::testdata::run_tests`): the OLTP test shows as
//! `ignored` without the shared trace (where to get it printed), and fails under `CI=true`.

use lrugen_cli::mrc::{self, Method, Mrc, Options};
use lrugen_trace::testdata::{run_tests, TraceTest};
use lrugen_trace::SpilledTrace;
use std::path::{Path, PathBuf};
use std::process::Command;

const SHIPPED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/traces/synthetic.lis.zst");

/// The bound docs/mrc.md states for a miniature curve of the shipped trace at rate 0.25: the
/// largest |error| over the ten sizes, and the mean.
const SHIPPED_BOUND: (f64, f64) = (0.04, 0.015);
/// ... and of OLTP at rate 0.1, at [`OLTP_SIZES`].
const OLTP_BOUND: (f64, f64) = (0.08, 0.025);
const OLTP_SIZES: [u64; 10] = [1000, 2000, 4000, 8000, 16000, 32000, 64000, 100_000, 150_000, 186_880];

fn options(policies: &[&str]) -> Options {
    Options {
        policies: policies.iter().map(|s| s.to_string()).collect(),
        sizes: Vec::new(),
        points: 10,
        shards: None,
        mini: None,
        check: false,
        adjust: true,
        seed: 0,
        threads: 2,
        memory_budget: None,
    }
}

fn load(path: &Path) -> SpilledTrace {
    lrugen::workload::load_trace(path).expect("trace")
}

/// A small trace with locality: a hot set, a drifting warm window and a cold tail (a 64-bit LCG,
/// so the test needs no data file).
fn generated() -> SpilledTrace {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut keys = Vec::new();
    for i in 0..6000u64 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = x >> 33;
        let key = match r % 10 {
            0..=4 => r % 40,
            5..=7 => 100 + i / 20 + r % 60,
            _ => 1000 + r % 400,
        };
        keys.push(key);
    }
    SpilledTrace::from_keys(keys).expect("spill")
}

/// The misses of a ratio over `n` requests (both sides compute `misses / n`).
fn misses(ratio: f64, n: u64) -> u64 {
    (ratio * n as f64).round() as u64
}

fn lru_equals_runs_at_every_size(_: &[PathBuf]) {
    let t = generated();
    let ids = t.pages.to_vec().unwrap();
    let m = lrugen_cache::LruMrc::from_pages(&ids, t.nr_unique);
    let n = t.nr_requests();
    let path = Path::new("generated.lis");
    for c in 1..=u64::from(t.nr_unique) + 2 {
        let run = mrc::run_miss_ratio("lru", c, path, &t, None).unwrap();
        assert_eq!(misses(m.miss_ratio(c as usize), n), misses(run, n), "LRU at {c} pages");
    }
    // and as `lrugen mrc --check` reports it: the stack curve against its full runs, no error
    let mut o = options(&["lru"]);
    o.check = true;
    o.points = 25;
    let r = mrc::compute(path, &t, &o).unwrap();
    let c = &r.curves[0];
    assert_eq!(c.method, Method::Stack);
    assert_eq!(c.reference.as_ref(), Some(&c.miss_ratio));
    assert_eq!(c.error(), Some((0.0, 0.0)));
    assert_eq!(*r.sizes.last().unwrap(), u64::from(t.nr_unique));
}

/// The miniature curves of mglru and classic at `rate`, checked at `sizes` (empty: ten evenly
/// spaced), their errors against the full runs.
fn mini_errors(path: &Path, sizes: &[u64], rate: f64, seed: u64) -> Mrc {
    let t = load(path);
    let mut o = options(&["mglru", "classic"]);
    o.sizes = sizes.to_vec();
    o.mini = Some(rate);
    o.check = true;
    o.seed = seed;
    let m = mrc::compute(path, &t, &o).unwrap();
    assert_eq!(m.sizes.len(), 10);
    for c in &m.curves {
        assert!(matches!(c.method, Method::Mini(r) if (r - rate).abs() < 1e-6));
        let full = c.reference.as_ref().expect("--check's full runs");
        // the full runs are `lrugen run`'s
        let i = m.sizes.len() / 2;
        let run = mrc::run_miss_ratio(&c.policy, m.sizes[i], path, &t, None).unwrap();
        assert_eq!(full[i], run, "{} at {}", c.policy, m.sizes[i]);
    }
    m
}

fn assert_within(m: &Mrc, (max_bound, mean_bound): (f64, f64), what: &str) {
    for c in &m.curves {
        let (max, mean) = c.error().unwrap();
        eprintln!("{what}: {}: max |error| {max:.4}, mean {mean:.4}", c.label());
        assert!(
            max <= max_bound && mean <= mean_bound,
            "{what}: {} off its full runs by up to {max:.4} (mean {mean:.4}); the bound is {max_bound} \
             (mean {mean_bound})\n{}",
            c.label(),
            mrc::table(m)
        );
    }
}

fn mini_within_bound_on_shipped(_: &[PathBuf]) {
    for seed in 0..5 {
        let m = mini_errors(Path::new(SHIPPED), &[], 0.25, seed);
        assert_within(&m, SHIPPED_BOUND, &format!("shipped trace, seed {seed}"));
    }
}

fn mini_within_bound_on_oltp(p: &[PathBuf]) {
    let m = mini_errors(&p[0], &OLTP_SIZES, 0.1, 0);
    assert_within(&m, OLTP_BOUND, "OLTP");
}

fn same_curves_whatever_the_threads(_: &[PathBuf]) {
    let path = Path::new(SHIPPED);
    let t = load(path);
    let mut o = options(&["lru", "opt", "mglru", "arc"]);
    o.points = 6;
    o.mini = Some(0.3);
    o.shards = Some(0.3);
    o.check = true;
    o.threads = 1;
    let one = mrc::compute(path, &t, &o).unwrap();
    o.threads = 3;
    assert_eq!(mrc::compute(path, &t, &o).unwrap(), one);
    // lru exact, lru SHARDS, opt, mglru mini, arc mini
    let methods: Vec<&str> = one.curves.iter().map(|c| c.method.name()).collect();
    assert_eq!(methods, ["stack", "shards", "runs", "mini", "mini"]);
    // OPT's curve lies under LRU's, both non-increasing
    for i in 0..one.sizes.len() {
        assert!(one.curves[2].miss_ratio[i] <= one.curves[0].miss_ratio[i]);
        if i > 0 {
            assert!(one.curves[0].miss_ratio[i] <= one.curves[0].miss_ratio[i - 1]);
            assert!(one.curves[2].miss_ratio[i] <= one.curves[2].miss_ratio[i - 1]);
        }
    }
}

fn lrugen(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lrugen"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("run lrugen")
}

fn cli_json_and_out(_: &[PathBuf]) {
    let o = lrugen(&[
        "mrc",
        SHIPPED,
        "--policy",
        "lru,opt,mglru",
        "--mini",
        "0.5",
        "--check",
        "--points",
        "4",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["requests"], 49_963);
    assert_eq!(j["sizes"].as_array().unwrap().len(), 4);
    let curves = j["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 3);
    assert_eq!(curves[0]["method"], "stack");
    assert_eq!(curves[0]["error"]["max_abs"], 0.0);
    assert_eq!(curves[2]["method"], "mini");
    assert_eq!(curves[2]["rate"], 0.5);
    // the table says the same
    let o = lrugen(&[
        "mrc", SHIPPED, "--policy", "mglru", "--mini", "0.5", "--check", "--points", "4",
    ]);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("mglru mini@0.5"), "{table}");
    assert!(
        table.contains("mglru mini@0.5 against full runs: max |error|"),
        "{table}"
    );
    // --out: the files, written whole
    let dir = std::env::temp_dir().join(format!("lrugen-mrc-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("curves");
    let o = lrugen(&[
        "mrc",
        SHIPPED,
        "--policy",
        "lru,classic",
        "--points",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("mrc.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 3, "{csv}");
    assert!(csv.starts_with("size,policy,method,rate,miss_ratio,reference,error\n"));
    assert!(out.join("mrc.json").exists() && out.join("table.txt").exists());
    if lrugen::experiment::plot::ensure_font().is_ok() {
        let svg = std::fs::read_to_string(out.join("mrc.svg")).unwrap();
        assert!(svg.contains("<svg") && svg.contains("classic"));
        assert!(out.join("mrc.png").exists());
    }
    assert!(!dir.join("curves.partial").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

fn main() -> std::process::ExitCode {
    run_tests(vec![
        TraceTest {
            name: "lru_stack_curve_equals_lru_runs_at_every_size",
            traces: &[],
            run: lru_equals_runs_at_every_size,
        },
        TraceTest {
            name: "mini_mglru_classic_within_bound_on_shipped_trace",
            traces: &[],
            run: mini_within_bound_on_shipped,
        },
        TraceTest {
            name: "mini_mglru_classic_within_bound_on_oltp",
            traces: &["arc/OLTP.lis.zst"],
            run: mini_within_bound_on_oltp,
        },
        TraceTest {
            name: "curves_do_not_depend_on_threads",
            traces: &[],
            run: same_curves_whatever_the_threads,
        },
        TraceTest {
            name: "cli_json_and_out",
            traces: &[],
            run: cli_json_and_out,
        },
    ])
}

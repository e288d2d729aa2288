// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen mrc`: miss-ratio curves of a trace under several policies (docs/mrc.md).
//!
//! * `lru`: exact, from one pass of Mattson's stack distances ([`lrugen_cache::LruMrc`]); with
//!   `--shards RATE` also its SHARDS estimate, its error against the exact curve stated.
//! * `opt` (and any policy without `--mini`): one full run per size, the runs in parallel.
//! * With `--mini RATE`, every policy but `lru` and `opt` (the kernel models, the zoo): miniature
//!   simulations (Waldspurger et al., USENIX ATC 2017): the trace sampled spatially by the hash of
//!   SHARDS ([`lrugen_cache::SpatialSample`]), the policy run on the sample at `C · RATE` pages
//!   standing for `C` pages; `--check` adds full runs at every size and the error of each
//!   miniature point against its full run.
//!
//! Every run, full or miniature, is `lrugen run --trace FILE --capacity C --policy P`'s: its
//! options parsed by [`parse_run_args`] and planned by [`plan_run_with`] (the sample given as the
//! trace), so a point of a curve is the miss ratio `lrugen run` prints at that size. Runs are
//! independent and their results kept by index: the curves do not depend on `--threads`.

use crate::checks::{self, count, count32};
use crate::run::{parse_run_args, parse_run_policies, plan_run_with, trace_format};
use clap::Args;
use lrugen::sim::{self, PolicyKind};
use lrugen::workload::LoadedTrace;
use lrugen_cache::{sample_threshold, LruMrc, ShardsMrc, SpatialSample};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Sizes of a curve when neither `--sizes` nor `--points` says.
pub const DEFAULT_POINTS: u32 = 10;

#[derive(Args)]
pub struct MrcArgs {
    /// The trace (any format of `lrugen run --trace`, told by its name or first bytes, or --format).
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Format of TRACE, for a file whose name does not tell it (as `run --format`).
    #[arg(long, value_name = "NAME", value_parser = trace_format)]
    pub format: Option<lrugen_trace::TraceFormat>,
    /// Policies, comma-separated, with `lrugen run`'s names: lru (exact, stack distances), opt
    /// (a run per size), mglru, mglru@PROFILE, classic and the zoo (fifo, clock, sieve, s3fifo,
    /// arc, 2q, lirs, ...: a run per size, or miniature simulations with --mini).
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "lru,opt")]
    pub policy: Vec<String>,
    /// Cache sizes in pages, comma-separated (each at least 1).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', value_parser = size_value, conflicts_with = "points")]
    pub sizes: Vec<u64>,
    /// K sizes evenly spaced up to the trace's distinct pages: U/K, 2U/K, ..., U (default 10).
    #[arg(long, value_name = "K", value_parser = count32, allow_negative_numbers = true)]
    pub points: Option<u32>,
    /// Also estimate lru's curve by SHARDS at this sampling rate (in (0, 1]), its error against
    /// the exact curve printed.
    #[arg(long, value_name = "RATE", value_parser = rate_value, allow_negative_numbers = true)]
    pub shards: Option<f64>,
    /// Miniature simulations at this sampling rate (in (0, 1]) for every policy but lru and opt:
    /// the policy runs on the pages sampled at RATE with C x RATE pages, standing for C pages.
    #[arg(long, value_name = "RATE", value_parser = rate_value, allow_negative_numbers = true)]
    pub mini: Option<f64>,
    /// Also run every miniature-simulated policy (and lru) in full at every size, and print the
    /// error of each curve against those runs.
    #[arg(long)]
    pub check: bool,
    /// A miniature run's miss ratio as its misses over the references it replayed, without the
    /// default correction (its misses over the trace's references times the rate, as SHARDS_adj
    /// corrects SHARDS: a sample that caught more or fewer references of hot pages than its
    /// share shifts the whole curve otherwise).
    #[arg(long)]
    pub no_adjust: bool,
    /// Seed of the sampling hash (SHARDS and miniature simulations).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = count, allow_negative_numbers = true)]
    pub seed: u64,
    /// Worker threads for the runs (default: the cores; the curves do not depend on it).
    #[arg(long, value_name = "N", value_parser = count32, allow_negative_numbers = true)]
    pub threads: Option<u32>,
    /// Write the table (table.txt), mrc.csv, mrc.json and the plot of all curves (mrc.svg,
    /// mrc.png) into this directory
    /// (written whole or not at all).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// With --out: write into a non-empty directory lrugen did not write.
    #[arg(long, requires = "out")]
    pub force: bool,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, help = checks::MEMORY_BUDGET_HELP)]
    pub memory_budget: Option<String>,
}

/// A cache size of `--sizes` (clap value parser): a count of at least 1 page.
pub fn size_value(s: &str) -> Result<u64, String> {
    match count(s)? {
        0 => Err("a cache of 0 pages: expected at least 1 page".into()),
        n => Ok(n),
    }
}

/// A sampling rate of `--shards` and `--mini` (clap value parser): a number in (0, 1].
pub fn rate_value(s: &str) -> Result<f64, String> {
    let r: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("not a number: expected a sampling rate in (0, 1], e.g. 0.01, found '{s}'"))?;
    sample_threshold(r).map_err(|e| format!("{e}: expected a sampling rate in (0, 1], e.g. 0.01"))?;
    Ok(r)
}

/// How a curve's points were found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// Exact, from LRU's stack distances.
    Stack,
    /// LRU's SHARDS estimate at a rate.
    Shards(f64),
    /// One full run per size.
    Runs,
    /// Miniature simulations at a rate.
    Mini(f64),
}

impl Method {
    /// The method's name in the outputs.
    pub fn name(&self) -> &'static str {
        match self {
            Method::Stack => "stack",
            Method::Shards(_) => "shards",
            Method::Runs => "runs",
            Method::Mini(_) => "mini",
        }
    }

    /// The sampling rate (after rounding), if the method samples.
    pub fn rate(&self) -> Option<f64> {
        match *self {
            Method::Shards(r) | Method::Mini(r) => Some(r),
            _ => None,
        }
    }
}

/// A rate as the table shows it: six decimals at most, trailing zeros dropped (a rate rounded to
/// a multiple of 2^-24 shows as given).
pub fn show_rate(r: f64) -> String {
    let s = format!("{r:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// One policy's curve.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// The policy, as `--policy` named it.
    pub policy: String,
    pub method: Method,
    /// The miss ratio at each size of [`Mrc::sizes`].
    pub miss_ratio: Vec<f64>,
    /// What the curve is measured against at each size: full runs (`--check`), or for SHARDS the
    /// exact curve.
    pub reference: Option<Vec<f64>>,
}

impl Curve {
    /// The curve's name in the table and the plot: the policy, with the method when it samples.
    pub fn label(&self) -> String {
        match self.method {
            Method::Stack | Method::Runs => self.policy.clone(),
            Method::Shards(r) => format!("{} shards@{}", self.policy, show_rate(r)),
            Method::Mini(r) => format!("{} mini@{}", self.policy, show_rate(r)),
        }
    }

    /// The largest and the mean absolute difference from [`Curve::reference`], in miss ratio.
    pub fn error(&self) -> Option<(f64, f64)> {
        let r = self.reference.as_ref()?;
        let d: Vec<f64> = self.miss_ratio.iter().zip(r).map(|(a, b)| (a - b).abs()).collect();
        let max = d.iter().copied().fold(0.0, f64::max);
        Some((max, d.iter().sum::<f64>() / d.len().max(1) as f64))
    }
}

/// The curves of one trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Mrc {
    /// The trace's file name.
    pub trace: String,
    pub requests: u64,
    pub unique_pages: u32,
    /// The cache sizes, in pages, increasing.
    pub sizes: Vec<u64>,
    pub curves: Vec<Curve>,
}

/// What to compute.
#[derive(Clone, Debug)]
pub struct Options {
    /// Policies with `lrugen run`'s names.
    pub policies: Vec<String>,
    /// The sizes (empty: [`Options::points`] of them).
    pub sizes: Vec<u64>,
    pub points: u32,
    pub shards: Option<f64>,
    pub mini: Option<f64>,
    pub check: bool,
    /// Divide a miniature run's misses by the references the sample should hold (the trace's
    /// times the rate), as SHARDS_adj corrects SHARDS, rather than by those it holds.
    pub adjust: bool,
    pub seed: u64,
    pub threads: usize,
    pub memory_budget: Option<String>,
}

impl Options {
    /// The options of `lrugen mrc`'s arguments.
    pub fn of(a: &MrcArgs) -> Options {
        Options {
            policies: a.policy.clone(),
            sizes: a.sizes.clone(),
            points: a.points.unwrap_or(DEFAULT_POINTS),
            shards: a.shards,
            mini: a.mini,
            check: a.check,
            adjust: !a.no_adjust,
            seed: a.seed,
            threads: a
                .threads
                .map(|t| t as usize)
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            memory_budget: a.memory_budget.clone(),
        }
    }
}

/// The sizes of a curve: `sizes` sorted without repeats, or `points` sizes evenly spaced up to
/// `unique` pages (`⌈i · unique / points⌉`, repeats dropped).
pub fn curve_sizes(sizes: &[u64], points: u32, unique: u32) -> Result<Vec<u64>, String> {
    let mut s: Vec<u64> = if sizes.is_empty() {
        if points == 0 {
            return Err("--points: expected at least 1 size, found 0".into());
        }
        let (k, u) = (u64::from(points), u64::from(unique).max(1));
        (1..=k).map(|i| (i * u).div_ceil(k)).collect()
    } else {
        sizes.to_vec()
    };
    if let Some(z) = s.iter().find(|&&c| c == 0) {
        return Err(format!("--sizes: a cache of {z} pages: expected at least 1 page"));
    }
    s.sort_unstable();
    s.dedup();
    Ok(s)
}

/// Check `--policy`'s names as `lrugen run` does; the list without repeats.
pub fn check_policies(list: &[String]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for p in list {
        let p = p.trim().to_string();
        parse_run_policies(std::slice::from_ref(&p))?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if out.is_empty() {
        return Err("--policy: no policy given: expected lru, opt, mglru, classic or a zoo policy".into());
    }
    Ok(out)
}

/// Check `opts` before any trace is read: the policies' names, the sizes, and that `--shards`
/// and `--mini` have a policy to apply to. The policies' kinds, in `opts.policies`' order
/// without repeats.
pub fn check_options(opts: &Options) -> Result<Vec<(String, PolicyKind)>, String> {
    let policies = check_policies(&opts.policies)?;
    curve_sizes(&opts.sizes, opts.points, 1)?;
    let mut out = Vec::new();
    for p in policies {
        let kind = parse_run_policies(std::slice::from_ref(&p))?[0].kind;
        out.push((p, kind));
    }
    let listed = || opts.policies.join(",");
    if opts.shards.is_some() && !out.iter().any(|(_, k)| *k == PolicyKind::Lru) {
        return Err(format!(
            "--shards estimates lru's curve: expected lru among --policy, found {}",
            listed()
        ));
    }
    if opts.mini.is_some() && out.iter().all(|(_, k)| matches!(k, PolicyKind::Lru | PolicyKind::Opt)) {
        return Err(format!(
            "--mini: lru and opt have curves of their own, not miniature ones: expected mglru, classic \
             or a zoo policy among --policy, found {}",
            listed()
        ));
    }
    Ok(out)
}

/// The misses and the accesses of `policy` (a `--policy` name) with `capacity` pages on `trace`,
/// as `lrugen run --trace PATH --capacity C --policy P` runs it (`path` names the trace).
pub fn run_misses(
    policy: &str,
    capacity: u64,
    path: &Path,
    trace: &LoadedTrace,
    memory_budget: Option<&str>,
) -> Result<(u64, u64), String> {
    let mut words = vec![
        "--trace".to_string(),
        path.display().to_string(),
        "--capacity".to_string(),
        capacity.to_string(),
        "--policy".to_string(),
        policy.to_string(),
    ];
    if let Some(b) = memory_budget {
        words.extend(["--memory-budget".to_string(), b.to_string()]);
    }
    let a = parse_run_args(&words).map_err(|e| e.to_string())?;
    let plan = plan_run_with(&a, Some(trace.clone()))?;
    let [cfg] = &plan.cfgs[..] else {
        return Err(format!(
            "--policy {policy}: expected one run, planned {}",
            plan.cfgs.len()
        ));
    };
    let r = sim::run(cfg, plan.trace.clone(), &mut |_, _| {}).map_err(|e| e.to_string())?;
    Ok((r.misses, r.accesses))
}

/// [`run_misses`] as a miss ratio (0 for no access).
pub fn run_miss_ratio(
    policy: &str,
    capacity: u64,
    path: &Path,
    trace: &LoadedTrace,
    memory_budget: Option<&str>,
) -> Result<f64, String> {
    let (misses, accesses) = run_misses(policy, capacity, path, trace, memory_budget)?;
    Ok(if accesses == 0 {
        0.0
    } else {
        misses as f64 / accesses as f64
    })
}

/// Run `jobs` on `threads` worker threads, each result at its job's index (so that the results do
/// not depend on the thread count); the first error by index, if any.
fn run_parallel<J: Sync, T: Send>(
    jobs: &[J],
    threads: usize,
    f: &(dyn Fn(&J) -> Result<T, String> + Sync),
) -> Result<Vec<T>, String> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<T, String>>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, jobs.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(j) = jobs.get(i) else { break };
                let r = f(j);
                results.lock().expect("no worker panicked holding the lock")[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panicked holding the lock")
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

/// Which trace a run replays.
#[derive(Clone, Copy, PartialEq)]
enum On {
    Full,
    Sample,
}

/// The curves of `opts` on the trace `trace` read from `path`.
pub fn compute(path: &Path, trace: &LoadedTrace, opts: &Options) -> Result<Mrc, String> {
    checks::memory_budget(opts.memory_budget.as_deref())?;
    let (policies, kinds): (Vec<String>, Vec<PolicyKind>) = check_options(opts)?.into_iter().unzip();
    let sizes = curve_sizes(&opts.sizes, opts.points, trace.nr_unique)?;
    let sampled = opts.mini.is_some() && kinds.iter().any(|k| !matches!(k, PolicyKind::Lru | PolicyKind::Opt));
    // the ids in memory (4 bytes a reference) only for the stack distances and the sample; the
    // runs read the spilled trace
    let ids = if sampled || kinds.contains(&PolicyKind::Lru) {
        trace
            .pages
            .to_vec()
            .map_err(|e| format!("{}: reading back the trace's ids: {e}", path.display()))?
    } else {
        Vec::new()
    };
    let sample = match opts.mini.filter(|_| sampled) {
        Some(rate) => {
            let s = SpatialSample::new(&ids, rate, opts.seed).map_err(|e| format!("--mini: {e}"))?;
            if s.pages.is_empty() {
                return Err(format!(
                    "--mini {rate}: none of the trace's {} distinct pages is sampled at this rate: expected \
                     a larger rate",
                    lrugen::report::thousands(i64::from(trace.nr_unique))
                ));
            }
            let spilled = LoadedTrace::from_ids(&s.pages, s.nr_unique)
                .map_err(|e| format!("--mini: spilling the sample: {e}"))?;
            Some((s, spilled))
        }
        None => None,
    };
    let mut curves = Vec::new();
    // (curve, size, trace, policy, capacity): the runs to do
    let mut jobs: Vec<(usize, usize, On, String, u64)> = Vec::new();
    for (p, &kind) in policies.iter().zip(&kinds) {
        let full_runs = |curve: usize, jobs: &mut Vec<_>| {
            for (i, &c) in sizes.iter().enumerate() {
                jobs.push((curve, i, On::Full, p.clone(), c));
            }
        };
        match (kind, &sample) {
            (PolicyKind::Lru, _) => {
                let m = LruMrc::from_pages(&ids, trace.nr_unique);
                let exact: Vec<f64> = sizes.iter().map(|&c| m.miss_ratio(c as usize)).collect();
                if opts.check {
                    full_runs(curves.len(), &mut jobs);
                }
                curves.push(Curve {
                    policy: p.clone(),
                    method: Method::Stack,
                    miss_ratio: exact.clone(),
                    reference: opts.check.then(Vec::new),
                });
                if let Some(rate) = opts.shards {
                    let s = ShardsMrc::from_pages(&ids, rate, opts.seed);
                    curves.push(Curve {
                        policy: p.clone(),
                        method: Method::Shards(s.rate()),
                        miss_ratio: sizes.iter().map(|&c| s.miss_ratio(c as usize)).collect(),
                        reference: Some(exact),
                    });
                }
            }
            (PolicyKind::Opt, _) | (_, None) => {
                full_runs(curves.len(), &mut jobs);
                curves.push(Curve {
                    policy: p.clone(),
                    method: Method::Runs,
                    miss_ratio: Vec::new(),
                    reference: None,
                });
            }
            (_, Some((s, _))) => {
                let curve = curves.len();
                for (i, &c) in sizes.iter().enumerate() {
                    jobs.push((curve, i, On::Sample, p.clone(), s.scaled(c)));
                }
                if opts.check {
                    full_runs(curve, &mut jobs);
                }
                curves.push(Curve {
                    policy: p.clone(),
                    method: Method::Mini(s.rate()),
                    miss_ratio: Vec::new(),
                    reference: opts.check.then(Vec::new),
                });
            }
        }
    }
    let runs = jobs.len();
    if runs > 0 {
        let minis = jobs.iter().filter(|j| j.2 == On::Sample).count();
        eprintln!(
            "lrugen: mrc: {runs} runs ({minis} miniature) on {} threads",
            opts.threads.clamp(1, runs)
        );
    }
    let budget = opts.memory_budget.as_deref();
    let results = run_parallel(&jobs, opts.threads, &|(_, _, on, p, c)| {
        let t = match (on, &sample) {
            (On::Sample, Some((_, spilled))) => spilled,
            _ => trace,
        };
        let (misses, accesses) = run_misses(p, *c, path, t, budget).map_err(|e| format!("{p} at {c} pages: {e}"))?;
        // a miniature run's misses over the references the sample should hold (SHARDS_adj):
        // a sample that caught more or fewer of the hot pages' references than its share does
        // not shift the whole curve
        let over = match (on, &sample) {
            (On::Sample, Some((s, _))) if opts.adjust => trace.nr_requests() as f64 * s.rate(),
            _ => accesses as f64,
        };
        Ok(if over > 0.0 {
            (misses as f64 / over).min(1.0)
        } else {
            0.0
        })
    })?;
    for ((curve, i, on, p, _), r) in jobs.iter().zip(results) {
        let c = &mut curves[*curve];
        let v = match (on, c.method) {
            (On::Full, Method::Stack | Method::Mini(_)) => c.reference.as_mut(),
            _ => Some(&mut c.miss_ratio),
        }
        .ok_or_else(|| format!("{p}: a run with no place in its curve"))?;
        debug_assert_eq!(v.len(), *i);
        v.push(r);
    }
    Ok(Mrc {
        trace: path
            .file_name()
            .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned()),
        requests: trace.nr_requests(),
        unique_pages: trace.nr_unique,
        sizes,
        curves,
    })
}

/// The table: a row per size, a column per curve, and after a curve measured against a reference
/// its reference's column and the difference; then each such curve's error.
pub fn table(m: &Mrc) -> String {
    let mut head = vec!["size".to_string()];
    for c in &m.curves {
        head.push(c.label());
        if c.reference.is_some() {
            head.push(match c.method {
                Method::Shards(_) => format!("{} exact", c.policy),
                _ => format!("{} full", c.policy),
            });
            head.push("error".into());
        }
    }
    let mut rows = vec![head];
    for (i, &size) in m.sizes.iter().enumerate() {
        let mut row = vec![lrugen::report::thousands(size as i64)];
        for c in &m.curves {
            row.push(format!("{:.4}", c.miss_ratio[i]));
            if let Some(r) = &c.reference {
                row.push(format!("{:.4}", r[i]));
                row.push(format!("{:+.4}", c.miss_ratio[i] - r[i]));
            }
        }
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|j| rows.iter().map(|r| r[j].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!(
        "trace: {}, {} requests, {} distinct pages\nmiss ratio by cache size (pages)\n\n",
        m.trace,
        lrugen::report::thousands(m.requests as i64),
        lrugen::report::thousands(i64::from(m.unique_pages))
    );
    for r in &rows {
        let cells: Vec<String> = r.iter().zip(&widths).map(|(s, w)| format!("{s:>w$}")).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let errs: Vec<String> = m
        .curves
        .iter()
        .filter_map(|c| {
            let (max, mean) = c.error()?;
            let against = match c.method {
                Method::Shards(_) => "the exact curve",
                _ => "full runs",
            };
            Some(format!(
                "{} against {against}: max |error| {max:.4}, mean |error| {mean:.4} over {} sizes",
                c.label(),
                m.sizes.len()
            ))
        })
        .collect();
    if !errs.is_empty() {
        out.push('\n');
        out.push_str(&errs.join("\n"));
        out.push('\n');
    }
    out
}

/// The curves as JSON.
pub fn to_json(m: &Mrc) -> serde_json::Value {
    let curves: Vec<serde_json::Value> = m
        .curves
        .iter()
        .map(|c| {
            json!({
                "policy": c.policy,
                "method": c.method.name(),
                "rate": c.method.rate(),
                "miss_ratio": c.miss_ratio,
                "reference": c.reference,
                "error": c.error().map(|(max, mean)| json!({"max_abs": max, "mean_abs": mean})),
            })
        })
        .collect();
    json!({
        "trace": m.trace,
        "requests": m.requests,
        "unique_pages": m.unique_pages,
        "sizes": m.sizes,
        "curves": curves,
    })
}

/// The curves as CSV: a row per curve and size.
pub fn to_csv(m: &Mrc) -> String {
    let mut out = String::from("size,policy,method,rate,miss_ratio,reference,error\n");
    for c in &m.curves {
        for (i, &size) in m.sizes.iter().enumerate() {
            let (r, e) = match &c.reference {
                Some(r) => (format!("{:.6}", r[i]), format!("{:.6}", c.miss_ratio[i] - r[i])),
                None => (String::new(), String::new()),
            };
            out.push_str(&format!(
                "{size},{},{},{},{:.6},{r},{e}\n",
                c.policy,
                c.method.name(),
                c.method.rate().map_or(String::new(), show_rate),
                c.miss_ratio[i]
            ));
        }
    }
    out
}

/// Plot every curve as a line over the cache size (a logarithmic axis), and the full runs a
/// miniature curve was checked against as circles of its colour, as `mrc.svg` and `mrc.png` in
/// `dir`; the files written.
pub fn plot(m: &Mrc, dir: &Path) -> Result<Vec<PathBuf>, String> {
    use lrugen::experiment::plot::{draw_log_x, ensure_font, svg_and_png, Area, Line};
    ensure_font()?;
    let pct = |v: &[f64]| -> Vec<(f64, f64)> { m.sizes.iter().zip(v).map(|(&s, &r)| (s as f64, r * 100.0)).collect() };
    let mut lines: Vec<Line> = Vec::new();
    let mut points: Vec<Line> = Vec::new();
    for (i, c) in m.curves.iter().enumerate() {
        lines.push((c.label(), i, pct(&c.miss_ratio)));
        if let (Some(r), Method::Mini(_)) = (&c.reference, c.method) {
            points.push((format!("{} full runs", c.policy), i, pct(r)));
        }
    }
    let title = format!("miss-ratio curves: {}", m.trace);
    let axes = ("cache size (pages, log scale)", "miss ratio (%)");
    let mut written = Vec::new();
    svg_and_png(dir, "mrc", (900, 560), &mut written, &|area| match area {
        Area::Svg(a) => draw_log_x(&a, &title, axes, &lines, &points),
        Area::Png(a) => draw_log_x(&a, &title, axes, &lines, &points),
    })?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_by_points_reach_the_distinct_pages() {
        assert_eq!(curve_sizes(&[], 4, 10).unwrap(), [3, 5, 8, 10]);
        assert_eq!(curve_sizes(&[], 10, 3).unwrap(), [1, 2, 3]);
        assert_eq!(curve_sizes(&[7, 2, 7], 4, 10).unwrap(), [2, 7]);
        assert!(curve_sizes(&[], 0, 10).unwrap_err().contains("--points"));
        assert!(curve_sizes(&[0, 3], 1, 10).unwrap_err().contains("at least 1 page"));
    }

    #[test]
    fn rates_and_sizes_parsed() {
        assert_eq!(rate_value("0.5"), Ok(0.5));
        assert_eq!(rate_value("1"), Ok(1.0));
        for bad in ["0", "-0.1", "1.5", "x", "nan", "1e-12"] {
            let e = rate_value(bad).unwrap_err();
            assert!(e.contains("expected a sampling rate in (0, 1]"), "{bad}: {e}");
        }
        assert_eq!(size_value("1e3"), Ok(1000));
        assert!(size_value("0").unwrap_err().contains("at least 1 page"));
        assert!(size_value("-3").is_err());
    }

    #[test]
    fn run_parallel_keeps_order_whatever_the_threads() {
        let jobs: Vec<u64> = (0..37).collect();
        let f = |j: &u64| -> Result<u64, String> { Ok(j * j) };
        let one = run_parallel(&jobs, 1, &f).unwrap();
        assert_eq!(run_parallel(&jobs, 5, &f).unwrap(), one);
        assert_eq!(one[6], 36);
        let g = |j: &u64| -> Result<u64, String> {
            if j % 10 == 3 {
                Err(format!("job {j}"))
            } else {
                Ok(*j)
            }
        };
        assert_eq!(run_parallel(&jobs, 4, &g).unwrap_err(), "job 3");
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! The runner: the matrix of cells (sweep point × policy × repetition), run in parallel on worker
//! threads that each take the next cell (never more workers than cells), collected by cell index
//! so that the results do not depend on the number of threads, on the order in which cells
//! finish, or on interruptions and resumptions; then the statistics over repetitions. The caller
//! can stop a run (finish the running cells, or abandon them), is handed each cell as it finishes
//! (to persist it), and can hand back the cells of an interrupted run ([`run_with`]). Plain
//! threads rather than a rayon pool: an abandoned run must return while its cells still run.

use super::spec::{Experiment, Variant};
use super::stats::{self, Diff, Summary};
use super::ExpError;
use crate::mm::vmstat::Stat;
use crate::sim::{self, RunConfig, RunResult};
use crate::workload::{self, LoadedTrace, Stream, WorkloadSpec};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

/// One run of the matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// Its index: cells are ordered by sweep point, then policy, then repetition.
    pub index: usize,
    /// Index of its sweep point.
    pub point: usize,
    /// Index of its policy in [`Experiment::variants`].
    pub variant: usize,
    /// Repetition (0-based).
    pub repetition: u32,
    /// Seed of the workload's random streams.
    pub seed: u64,
}

/// The seed of repetition `rep`: the splitmix64 mix of the base seed and the repetition, the
/// same for every policy and every sweep point, so that comparisons are paired (each policy sees
/// the very same access streams).
pub fn seed_for(base: u64, rep: u32) -> u64 {
    let mut z = base ^ (rep as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Experiment {
    /// The cells of the matrix, in index order.
    pub fn cells(&self) -> Vec<Cell> {
        let mut out = Vec::with_capacity(self.points.len() * self.variants.len() * self.repetitions as usize);
        for p in 0..self.points.len() {
            for v in 0..self.variants.len() {
                for rep in 0..self.repetitions {
                    out.push(Cell {
                        index: out.len(),
                        point: p,
                        variant: v,
                        repetition: rep,
                        seed: seed_for(self.seed, rep),
                    });
                }
            }
        }
        out
    }

    /// The run configuration of `cell`, recording a sample every `sample_every` steps.
    pub fn run_config(&self, cell: &Cell, sample_every: Option<u64>) -> RunConfig {
        let pc = &self.points[cell.point].config;
        let v = &self.variants[cell.variant];
        let mut cfg = RunConfig::new(pc.machine.clone(), pc.memcg.clone(), pc.workload.clone(), v.policy);
        cfg.seed = cell.seed;
        cfg.capacity = pc.capacity.or(pc.memcg.max);
        cfg.mglru = pc.mglru.clone();
        if let Some(pr) = v.profile {
            cfg.mglru.profile = pr;
        }
        cfg.sample_every = sample_every;
        cfg.engine = pc.engine.clone();
        cfg.jobs = pc.jobs;
        if v.policy.is_kernel() {
            cfg.switch_at = pc.switch_at.clone();
            cfg.ctl = self.ctl.clone();
        }
        cfg
    }
}

/// Named metrics of a run.
pub type Metrics = BTreeMap<String, f64>;

/// Named series of a run: (accesses done, value).
pub type Series = BTreeMap<String, Vec<(f64, f64)>>;

/// What one cell measured.
#[derive(Clone, Debug, Serialize)]
pub struct CellResult {
    /// The cell.
    #[serde(flatten)]
    pub cell: Cell,
    /// Its policy's label.
    pub policy: String,
    /// Named metrics (see [`metrics_of`]).
    pub metrics: Metrics,
    /// Named series over the run: (accesses done, value).
    pub series: Series,
    /// How the run stopped early, if it did (e.g. an OOM kill).
    pub error: Option<String>,
    /// Under the engine: the report as the imitated benchmark prints it (fio-, YCSB- or
    /// memtier-like; [`crate::sim::engine::format_bench`]), written to `bench/` of the output.
    #[serde(skip)]
    pub bench: Option<String>,
}

/// The adapter from a run's result to a cell's metrics and series: the one place that knows
/// [`RunResult`]. Metrics (names in [`super::spec::METRICS`]): `hit_ratio`, `accesses`, `hits`,
/// `misses`, `minor_faults` for every policy; for the kernel policies also `refaults`
/// (`workingset_refault_anon + _file`), `pgscan` and `pgsteal` (the workload memcg's), and the
/// `/proc/vmstat` events `pgactivate`, `pgdeactivate`, `pswpin`, `pswpout`, `allocstall` (all
/// zones), `oom_kill` and `workingset_activate` (anon + file), and `promotions` (MGLRU-FG's
/// access-time promotions, not a kernel counter; 0 for the other policies);
/// `pswpout_incompressible` (swap-outs of pages whose region compresses to zsmalloc's huge-class
/// size or more: stored whole on zram) when a region gives its compressibility; and, swapping to
/// zram, `zram_compr_bytes` (`mm_stat`'s compr_data_size), `zram_pool_pages` (its
/// mem_used_total in pages) and `zram_huge_pages` (its huge_pages_since); on a machine with
/// memory tiers, the `/proc/vmstat` counters of tiering (`numa_hint_faults`,
/// `numa_pages_migrated`, `numa_pte_updates`, `pgpromote_success`, `pgpromote_candidate`,
/// `pgdemote_kswapd`, `pgdemote_direct`) and of reclaim they are read with (`pgscan_kswapd`,
/// `pgsteal_anon`, `pgrefill`); these are not in
/// `METRICS` (columns only of the experiments whose cells have them, after the known ones, so
/// other experiments' files keep their columns). Series (kernel policies, from [`RunResult::series`]): `hits`, `misses`,
/// `refaults`, `usage`, and `gen0` … `gen3`, the pages (anon + file) of the youngest generation,
/// the next one, and so on; `slow_placed_on_top` with tiers and a placement on a lower tier
/// ([`crate::reclaim::tiering::slow_placed_on_top`]).
///
/// Extension point: when the engine reports throughput and latency percentiles, add them here
/// (e.g. `throughput_ops`, `lat_p50_us`, `lat_p99_us`) and to `METRICS`; everything downstream
/// (statistics, tables, CSV, JSON) is driven by the names.
pub fn metrics_of(r: &RunResult) -> (Metrics, Series) {
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: f64| {
        m.insert(k.to_string(), v);
    };
    put("hit_ratio", r.hit_ratio);
    put("accesses", r.accesses as f64);
    put("hits", r.hits as f64);
    put("misses", r.misses as f64);
    put("minor_faults", r.minor_faults as f64);
    if r.vmstat.is_some() {
        put("refaults", r.refaults() as f64);
        put("pgscan", r.pgscan() as f64);
        put("pgsteal", r.pgsteal() as f64);
        put("pgactivate", r.vm(Stat::Pgactivate) as f64);
        put("pgdeactivate", r.vm(Stat::Pgdeactivate) as f64);
        put("pswpin", r.vm(Stat::Pswpin) as f64);
        put("pswpout", r.vm(Stat::Pswpout) as f64);
        let stall = r.vm(Stat::AllocstallDma)
            + r.vm(Stat::AllocstallDma32)
            + r.vm(Stat::AllocstallNormal)
            + r.vm(Stat::AllocstallMovable);
        put("allocstall", stall as f64);
        put("oom_kill", r.vm(Stat::OomKill) as f64);
        put(
            "workingset_activate",
            (r.vm(Stat::WorkingsetActivateFile) + r.vm(Stat::WorkingsetActivateAnon)) as f64,
        );
        put("promotions", r.promotions.unwrap_or(0) as f64);
        if r.tiers {
            // memory tiers (docs/memory-tiers.md): the counters the tiering comparisons read
            for s in [
                Stat::NumaHintFaults,
                Stat::NumaPagesMigrated,
                Stat::NumaPteUpdates,
                Stat::PgpromoteSuccess,
                Stat::PgpromoteCandidate,
                Stat::PgdemoteKswapd,
                Stat::PgdemoteDirect,
                Stat::PgscanKswapd,
                Stat::PgstealAnon,
                Stat::Pgrefill,
            ] {
                put(s.name(), r.vm(s) as f64);
            }
        }
        if r.pswpout_by_pct.iter().any(|&(p, _)| p > 0) {
            put("pswpout_incompressible", r.pswpout_incompressible() as f64);
        }
    }
    if let Some(z) = &r.zram {
        put("zram_compr_bytes", z.compr_data_size as f64);
        put("zram_pool_pages", z.pool_pages as f64);
        put("zram_huge_pages", z.huge_pages_since as f64);
    }
    if !r.ctl.is_empty() {
        // a control script's outcome: writes the kernel refused, pages its writes reclaimed
        put("ctl_failed", r.ctl.iter().filter(|c| !c.ok).count() as f64);
        put(
            "ctl_reclaimed",
            r.ctl.iter().filter_map(|c| c.reclaimed).sum::<u64>() as f64,
        );
    }
    if let Some(e) = &r.engine {
        put("iops", e.iops);
        put("bw_mib_s", e.bytes_per_sec / (1024.0 * 1024.0));
        put("clat_mean_us", e.clat.mean_ns / 1000.0);
        put("clat_p50_us", e.clat.percentile(50.0) as f64 / 1000.0);
        put("clat_p90_us", e.clat.percentile(90.0) as f64 / 1000.0);
        put("clat_p99_us", e.clat.percentile(99.0) as f64 / 1000.0);
        put("clat_p99_9_us", e.clat.percentile(99.9) as f64 / 1000.0);
        put("clat_max_us", e.clat.max_ns as f64 / 1000.0);
        // the benchmark's requests (YCSB operations, memtier GETs), all kinds together
        if e.request_latency.count > 0 {
            let l = &e.request_latency;
            put("req_p50_us", l.percentile(50.0) as f64 / 1000.0);
            put("req_p90_us", l.percentile(90.0) as f64 / 1000.0);
            put("req_p99_us", l.percentile(99.0) as f64 / 1000.0);
            put("req_p99_9_us", l.percentile(99.9) as f64 / 1000.0);
            put("req_max_us", l.max_ns as f64 / 1000.0);
        }
        put("direct_reclaim_ms", e.direct_reclaim_ns as f64 / 1e6);
        put("kswapd_ms", e.kswapd_ns as f64 / 1e6);
        // lru_lock: spinning and cache-line transfers on the tasks' path (direct reclaim, part
        // of direct_reclaim_ms, and the folio batch flushes) and in kswapd (part of kswapd_ms)
        let l = &e.lru_lock;
        let lock_ms = |w: &crate::sim::engine::LockWait| (w.wait_ns + w.bounce_ns) as f64 / 1e6;
        put("lru_lock_task_ms", lock_ms(&l.direct) + lock_ms(&l.outside));
        put("lru_lock_direct_ms", lock_ms(&l.direct));
        put("lru_lock_kswapd_ms", lock_ms(&l.kswapd));
        // the benchmark's own throughput: YCSB operations or memtier requests, else I/Os
        let requests: f64 = e.requests.iter().map(|q| q.per_sec).sum();
        put("ops_per_sec", if e.requests.is_empty() { e.iops } else { requests });
        // how long the run lasted in virtual time (what the kernel's timers see)
        put("virtual_s", e.run_ns as f64 / 1e9);
    }
    let mut s = Series::new();
    if !r.series.is_empty() {
        let mut add = |k: &str, x: f64, y: f64| s.entry(k.to_string()).or_default().push((x, y));
        for smp in &r.series {
            let x = smp.step as f64;
            add("hits", x, smp.hits as f64);
            add("misses", x, smp.misses as f64);
            add("refaults", x, smp.refaults as f64);
            add("usage", x, smp.usage as f64);
            if let Some(n) = smp.slow_placed_on_top {
                add("slow_placed_on_top", x, n as f64);
            }
            for (age, g) in smp.generations.iter().rev().take(4).enumerate() {
                add(&format!("gen{age}"), x, (g.1 + g.2) as f64);
            }
        }
    }
    (m, s)
}

/// A statistic of one metric for one (sweep point, policy).
#[derive(Clone, Debug, Serialize)]
pub struct SummaryRow {
    /// Sweep point.
    pub point: usize,
    /// Policy label.
    pub policy: String,
    /// Metric name.
    pub metric: String,
    /// Over the repetitions.
    #[serde(flatten)]
    pub summary: Summary,
    /// The difference from the baseline policy, if this is not the baseline: by Welch's t-test
    /// with a 95% CI when both have at least 2 repetitions, else without an interval.
    pub vs_baseline: Option<Diff>,
}

/// Everything an experiment produced.
#[derive(Clone, Debug, Serialize)]
pub struct Results {
    /// The experiment, as parsed.
    pub experiment: Experiment,
    /// Every cell, in index order.
    pub cells: Vec<CellResult>,
    /// Per (point, policy, metric), in that order (metrics by name); only for the (point, policy)
    /// pairs whose repetitions all finished.
    pub summaries: Vec<SummaryRow>,
    /// Set when the run was stopped before every cell finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<Interruption>,
}

impl Results {
    /// The baseline's label.
    pub fn baseline(&self) -> &Variant {
        &self.experiment.variants[self.experiment.baseline]
    }

    /// The summary of `metric` for (point, policy label).
    pub fn summary(&self, point: usize, policy: &str, metric: &str) -> Option<&SummaryRow> {
        self.summaries
            .iter()
            .find(|s| s.point == point && s.policy == policy && s.metric == metric)
    }
}

/// Progress callback: (cells done, cells total), called on the caller's thread as cells finish.
pub type CellProgress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// At most this many worker threads (`lrugen exp --threads`).
pub const MAX_THREADS: usize = 1024;

/// [`Drive::stop`]: run every cell.
pub const RUN: u8 = 0;
/// [`Drive::stop`]: start no new cell, let the running ones finish (a first Ctrl-C).
pub const FINISH: u8 = 1;
/// [`Drive::stop`] (or more): return at once with the finished cells, abandoning the running ones
/// (a second Ctrl-C). Their threads go on until the process exits.
pub const ABANDON: u8 = 2;

/// How a run of the matrix is driven ([`run_with`]).
pub struct Drive<'a> {
    /// Worker threads (`None`: one per core); never more than the cells to run.
    pub threads: Option<usize>,
    /// Cells finished by an earlier, interrupted run (`--resume`): not run again.
    pub done: Vec<CellResult>,
    /// [`RUN`], [`FINISH`] or [`ABANDON`], set from outside (a Ctrl-C handler) at any time.
    pub stop: Arc<AtomicU8>,
    /// Act as if stopped with [`FINISH`] once this many cells have finished in this run (a
    /// deterministic interruption for tests).
    pub stop_after: Option<usize>,
    /// Progress: (cells done, cells total), the earlier run's included.
    pub progress: CellProgress<'a>,
    /// Called with each cell as it finishes, on the caller's thread (to persist it); an error
    /// stops the run.
    pub on_cell: &'a mut dyn FnMut(&CellResult) -> Result<(), ExpError>,
    /// Run only one slice of the matrix (`lrugen exp --shard K/N`): the cells of [`Shard::owns`].
    /// The others are neither run nor counted missing.
    pub shard: Option<Shard>,
}

/// Slice `k` of `n` of an experiment's matrix (`lrugen exp --shard K/N`): the cells whose index
/// modulo `n` is `k`. Cells are ordered by sweep point, then policy, then repetition, so every
/// slice gets an even share of every point (a costly point is spread over all of them), and the
/// rule depends only on the matrix: any machine computes the same slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This slice, `0..n`.
    pub k: usize,
    /// How many slices.
    pub n: usize,
}

impl Shard {
    /// Parse `K/N` (0 ≤ K < N); the error says what was expected.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let Some((k, n)) = s.split_once('/') else {
            return Err(format!(
                "'{s}': expected K/N, slice K of N counted from 0 (e.g. 0/4 .. 3/4)"
            ));
        };
        let num = |t: &str, what: &str| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| format!("'{s}': {what} '{t}' is not a whole number: expected K/N, e.g. 0/4"))
        };
        let (k, n) = (num(k, "K")?, num(n, "N")?);
        if n == 0 {
            return Err(format!("'{s}': N is 0: expected at least 1 slice"));
        }
        if k >= n {
            return Err(format!(
                "'{s}': K is {k}, N {n}: expected 0 <= K < N (slices are counted from 0: 0/{n} .. {}/{n})",
                n - 1
            ));
        }
        Ok(Shard { k, n })
    }

    /// Whether cell `index` is in this slice.
    pub fn owns(&self, index: usize) -> bool {
        index % self.n == self.k
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// How a run was cut short.
#[derive(Clone, Debug, Serialize)]
pub struct Interruption {
    /// Cells finished.
    pub finished: usize,
    /// Cells of the matrix.
    pub total: usize,
    /// The indices of the cells not finished.
    pub missing: Vec<usize>,
    /// Cells abandoned while running (a second interrupt).
    pub abandoned: usize,
    /// What it means for the results.
    pub note: String,
}

/// A trace a workload replays: its file and format.
type TraceKey = (PathBuf, Option<lrugen_trace::TraceFormat>);

fn trace_of(spec: &WorkloadSpec) -> Option<TraceKey> {
    match spec {
        // loaded once for every cell; a typed replay (mmap, anon, mixed) loads its own
        WorkloadSpec::Trace {
            path,
            format,
            access: workload::TraceAccess::File,
        } => Some((path.clone(), *format)),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// What every worker needs, shared.
struct Shared {
    exp: Experiment,
    traces: Vec<(TraceKey, LoadedTrace)>,
    sample_every: Vec<u64>,
}

impl Shared {
    fn trace_for(&self, spec: &WorkloadSpec) -> Option<LoadedTrace> {
        let key = trace_of(spec)?;
        self.traces.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone())
    }

    fn run_cell(&self, c: &Cell) -> Result<CellResult, ExpError> {
        let exp = &self.exp;
        let cfg = exp.run_config(c, Some(self.sample_every[c.point]));
        let label = &exp.variants[c.variant].label;
        let r = sim::run(&cfg, self.trace_for(&cfg.workload), &mut |_, _| {}).map_err(|e| {
            ExpError::Run(format!(
                "cell {} (point {}, policy {label}, repetition {}): {e}",
                c.index,
                exp.points[c.point].label(),
                c.repetition
            ))
        })?;
        let (metrics, series) = metrics_of(&r);
        let bench = r
            .engine
            .as_ref()
            .map(|e| sim::engine::format_bench(label, &cfg.workload, e));
        Ok(CellResult {
            cell: c.clone(),
            policy: label.clone(),
            metrics,
            series,
            error: r.error,
            bench,
        })
    }
}

/// Load the traces and learn the sampling interval of each point `todo` runs (before any cell
/// runs; a point no cell of `todo` runs is left unprepared, its interval 0).
fn prepare(exp: &Experiment, todo: &[Cell]) -> Result<Shared, ExpError> {
    let needed: std::collections::BTreeSet<usize> = todo.iter().map(|c| c.point).collect();
    let points = || exp.points.iter().filter(|p| needed.contains(&p.index));
    // Read each trace once (spilled to disk as dense ids), shared by every cell that replays it.
    let mut traces: Vec<(TraceKey, LoadedTrace)> = Vec::new();
    for p in points() {
        if let Some(key) = trace_of(&p.config.workload) {
            if !traces.iter().any(|(k, _)| *k == key) {
                let t = workload::load_trace_as(&key.0, key.1).map_err(|e| ExpError::Run(e.to_string()))?;
                traces.push((key, t));
            }
        }
    }
    let mut shared = Shared {
        exp: exp.clone(),
        traces,
        sample_every: vec![0; exp.points.len()],
    };
    // Sample each point's runs about `samples` times: set the workload up once to learn its
    // length in steps.
    for p in points() {
        let cfg = exp.run_config(
            &Cell {
                index: 0,
                point: p.index,
                variant: 0,
                repetition: 0,
                seed: seed_for(exp.seed, 0),
            },
            None,
        );
        let trace = shared.trace_for(&cfg.workload);
        // under the engine (a mix always runs there), every task's operations count
        let (mut m, t) = sim::build_machine(&cfg).map_err(|e| ExpError::Run(format!("point {}: {e}", p.label())))?;
        let len: u64 = if cfg.engine.is_some() || matches!(cfg.workload, WorkloadSpec::Mix { .. }) {
            sim::task_streams(&cfg, &mut m, t, trace)
                .map_err(|e| ExpError::Run(format!("point {}: {e}", p.label())))?
                .iter()
                .map(|s| s.len)
                .sum()
        } else {
            Stream::new(&cfg.workload, &mut m, t, cfg.seed, trace)
                .map_err(|e| ExpError::Run(format!("point {}: {e}", p.label())))?
                .len
        };
        shared.sample_every[p.index] = len.div_ceil(exp.samples).max(1);
    }
    Ok(shared)
}

/// Run the experiment on `threads` threads (`None`: one per core). The results are the same
/// whatever the number of threads.
pub fn run(exp: &Experiment, threads: Option<usize>, progress: CellProgress<'_>) -> Result<Results, ExpError> {
    run_with(
        exp,
        Drive {
            threads,
            done: Vec::new(),
            stop: Arc::new(AtomicU8::new(RUN)),
            stop_after: None,
            progress,
            on_cell: &mut |_| Ok(()),
            shard: None,
        },
    )
}

/// Run the cells of the experiment not in `d.done`, on worker threads that each take the next
/// cell to run, until every cell has finished or the run is stopped ([`Drive::stop`]). Cells are
/// collected by index, so the results do not depend on the number of threads, on the order in
/// which cells finish, or on how often the run was interrupted and resumed. A stopped run gives
/// the finished cells, with [`Results::interrupted`] saying which are missing, and statistics
/// only for the (point, policy) pairs whose repetitions all finished.
pub fn run_with(exp: &Experiment, d: Drive<'_>) -> Result<Results, ExpError> {
    if exp.points.is_empty() || exp.variants.is_empty() {
        return Err(ExpError::Run("the experiment has no cell to run".into()));
    }
    if let Some(n) = d.threads {
        if n == 0 || n > MAX_THREADS {
            return Err(ExpError::Run(format!(
                "{n} worker threads: expected 1 to {MAX_THREADS}"
            )));
        }
    }
    let all = exp.cells();
    let total = all.len();
    let mut finished: Vec<Option<CellResult>> = vec![None; total];
    for c in d.done {
        let i = c.cell.index;
        if i >= total || all[i] != c.cell {
            return Err(ExpError::Run(format!(
                "cell {i} of an earlier run is not a cell of this experiment"
            )));
        }
        finished[i] = Some(c);
    }
    let owned = |i: usize| d.shard.is_none_or(|s| s.owns(i));
    let todo: Vec<Cell> = all
        .iter()
        .filter(|c| owned(c.index) && finished[c.index].is_none())
        .cloned()
        .collect();
    // a slice's progress and interruption count its own cells
    let total = (0..total).filter(|&i| owned(i)).count();
    let mut count = total - todo.len();
    (d.progress)(count, total);
    let stop = d.stop;
    let mut first_error: Option<(usize, ExpError)> = None;
    let mut abandoned = 0;
    if !todo.is_empty() && stop.load(Ordering::SeqCst) == RUN {
        let shared = Arc::new(prepare(exp, &todo)?);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let workers = d.threads.unwrap_or(cores).clamp(1, todo.len());
        let todo = Arc::new(todo);
        let next = Arc::new(AtomicUsize::new(0));
        let completed = Arc::new(AtomicUsize::new(0));
        let stop_after = d.stop_after;
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<CellResult, ExpError>)>();
        for w in 0..workers {
            let (shared, todo, next, stop, tx) = (shared.clone(), todo.clone(), next.clone(), stop.clone(), tx.clone());
            let completed = completed.clone();
            std::thread::Builder::new()
                .name(format!("exp-worker-{w}"))
                .spawn(move || loop {
                    if stop.load(Ordering::SeqCst) != RUN {
                        break;
                    }
                    let k = next.fetch_add(1, Ordering::SeqCst);
                    let Some(c) = todo.get(k) else { break };
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| shared.run_cell(c)))
                        .unwrap_or_else(|p| {
                            let why = p
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_default();
                            Err(ExpError::Run(format!("cell {}: the model panicked: {why}", c.index)))
                        });
                    // Stop starting cells at once (not when the caller's thread gets to it): after
                    // a failure, or after `stop_after` cells.
                    let n = completed.fetch_add(1, Ordering::SeqCst) + 1;
                    if r.is_err() || stop_after.is_some_and(|k| n >= k) {
                        let _ = stop.compare_exchange(RUN, FINISH, Ordering::SeqCst, Ordering::SeqCst);
                    }
                    if tx.send((c.index, r)).is_err() {
                        break;
                    }
                })
                .map_err(|e| ExpError::Run(format!("cannot start a worker thread: {e}")))?;
        }
        drop(tx);
        let mut received = 0usize;
        loop {
            if stop.load(Ordering::SeqCst) >= ABANDON {
                // the cells started and not received
                abandoned = next.load(Ordering::SeqCst).min(todo.len()) - received;
                break;
            }
            match rx.recv_timeout(std::time::Duration::from_millis(50)) {
                Ok((i, r)) => {
                    received += 1;
                    match r {
                        Ok(c) => {
                            if let Err(e) = (d.on_cell)(&c) {
                                let _ = stop.compare_exchange(RUN, FINISH, Ordering::SeqCst, Ordering::SeqCst);
                                first_error.get_or_insert((i, e));
                            }
                            finished[i] = Some(c);
                            count += 1;
                            (d.progress)(count, total);
                        }
                        Err(e) => {
                            let _ = stop.compare_exchange(RUN, FINISH, Ordering::SeqCst, Ordering::SeqCst);
                            if first_error.as_ref().is_none_or(|(j, _)| i < *j) {
                                first_error = Some((i, e));
                            }
                        }
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    }
    if let Some((_, e)) = first_error {
        return Err(e);
    }
    let missing: Vec<usize> = (0..finished.len())
        .filter(|&i| owned(i) && finished[i].is_none())
        .collect();
    let cells: Vec<CellResult> = finished.into_iter().flatten().collect();
    let interrupted = (!missing.is_empty()).then(|| Interruption {
        finished: cells.len(),
        total,
        note: format!(
            "the run was interrupted: {} of {total} cells finished, {} missing{}; statistics are given only for \
             the (point, policy) pairs whose repetitions all finished; `lrugen exp FILE --out DIR --resume` \
             runs the missing cells",
            cells.len(),
            missing.len(),
            if abandoned > 0 {
                format!(" ({abandoned} abandoned while running)")
            } else {
                String::new()
            }
        ),
        missing,
        abandoned,
    });
    let summaries = summarize(exp, &cells);
    Ok(Results {
        experiment: exp.clone(),
        cells,
        summaries,
        interrupted,
    })
}

/// The statistics of every (point, policy, metric) over repetitions, and the difference of each
/// policy from the baseline; a (point, policy) pair missing a repetition has none.
pub fn summarize(exp: &Experiment, cells: &[CellResult]) -> Vec<SummaryRow> {
    let values = |point: usize, variant: usize, metric: &str| -> Vec<f64> {
        cells
            .iter()
            .filter(|c| c.cell.point == point && c.cell.variant == variant)
            .filter_map(|c| c.metrics.get(metric).copied())
            .collect()
    };
    // Statistics only where every repetition finished (an interrupted run has gaps).
    let complete = |point: usize, variant: usize| {
        cells
            .iter()
            .filter(|c| c.cell.point == point && c.cell.variant == variant)
            .count()
            == exp.repetitions as usize
    };
    let mut out = Vec::new();
    for p in 0..exp.points.len() {
        for (vi, v) in exp.variants.iter().enumerate() {
            if !complete(p, vi) {
                continue;
            }
            let names: std::collections::BTreeSet<&String> = cells
                .iter()
                .filter(|c| c.cell.point == p && c.cell.variant == vi)
                .flat_map(|c| c.metrics.keys())
                .collect();
            for name in names {
                let xs = values(p, vi, name);
                let Some(summary) = stats::summarize(&xs) else { continue };
                let vs_baseline = if vi == exp.baseline || !complete(p, exp.baseline) {
                    None
                } else {
                    stats::difference(&xs, &values(p, exp.baseline, name))
                };
                out.push(SummaryRow {
                    point: p,
                    policy: v.label.clone(),
                    metric: name.clone(),
                    summary,
                    vs_baseline,
                });
            }
        }
    }
    out
}

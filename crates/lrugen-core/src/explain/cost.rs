// SPDX-License-Identifier: GPL-2.0-only
//! Cost as well as misses: where two engine runs differ in time.
//!
//! The engine splits each measured operation's completion latency into parts that sum to it
//! exactly ([`TimeSplit`]): waiting for a CPU (behind kswapd or behind another task), the
//! access's own CPU, the misses' CPU and their I/O wait, direct reclaim's CPU by mechanism, and
//! the LRU batch flushes outside reclaim. Summed over the operations this is the tasks' time in
//! operations (for one task without think time, the run's elapsed time), and Δ of that total is
//! the sum of the parts' Δ exactly: [`Cost::residual_ns`] is 0, kept and tested so that a part
//! added to one side and not the other shows. The run time (elapsed) and the throughput are
//! reported beside it; with several tasks the run time is not the task time's sum (tasks overlap)
//! and their relation is stated, not split.
//!
//! kswapd against direct reclaim: direct reclaim is CPU inside the operations (its parts, by
//! mechanism); kswapd runs on a CPU of its own, so it costs the tasks only where they queue for a
//! CPU it holds (the CPU-queue part), and its own CPU by mechanism is reported apart (not part of
//! the sum). The misses part is split by the mechanism of [`super::MECHANISMS`] at each run's mean
//! cost of a miss.

use super::{Explanation, MECHANISMS};
use crate::sim::engine::{EngineResult, TimeSplit};
use serde::Serialize;

/// One part of the time, under A and B (ns) and Δ = A − B.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Part {
    /// The group: `misses x I/O time`, `direct reclaim CPU`, `kswapd`, `other`.
    pub group: String,
    /// The part.
    pub part: String,
    /// Under A (ns).
    pub a_ns: f64,
    /// Under B (ns).
    pub b_ns: f64,
    /// `a_ns − b_ns`.
    pub delta_ns: f64,
}

/// Δ time of two engine runs, split.
#[derive(Clone, Debug, Serialize)]
pub struct Cost {
    /// Tasks of each run.
    pub tasks: u32,
    /// The measured operations' time, split.
    #[serde(flatten)]
    pub time: Split,
    /// `delta_ops_ns − Σ parts` (0: the split is exact).
    pub residual_ns: i64,
    /// Run time (first measured operation to the last completion) under A and B (ns).
    pub a_elapsed_ns: u64,
    /// Under B.
    pub b_elapsed_ns: u64,
    /// Operations per second under A and B.
    pub a_iops: f64,
    /// Under B.
    pub b_iops: f64,
    /// Δ run time less Δ task time / tasks: 0 for one task without think time; with several, how
    /// much the tasks' overlap changed.
    pub overlap_ns: f64,
    /// kswapd's CPU by mechanism (not part of the sum: it costs the tasks through `kswapd`).
    pub kswapd_cpu: Vec<Part>,
    /// The misses part (`misses x I/O time`) by mechanism of the miss, at each run's mean cost
    /// of a miss; sums to that part up to rounding.
    pub misses_by_mechanism: Vec<Part>,
    /// The same split per job (the tasks of a job summed: fio's iodepth, YCSB's clients), in
    /// job order; each part summed over the jobs is the run's part.
    pub per_task: Vec<TaskCost>,
}

/// Δ time of one job's operations (its tasks'), split as [`Cost`] splits the run's.
#[derive(Clone, Debug, Serialize)]
pub struct TaskCost {
    /// The job's name.
    pub job: String,
    /// Its tasks.
    pub tasks: u32,
    /// Its tasks' measured operations' time, split.
    #[serde(flatten)]
    pub time: Split,
}

/// The measured operations' time (the sum of their latencies) under A and B, split into parts.
#[derive(Clone, Debug, Serialize)]
pub struct Split {
    /// Under A (ns).
    pub a_ops_ns: u64,
    /// Under B.
    pub b_ops_ns: u64,
    /// `a_ops_ns − b_ops_ns`.
    pub delta_ops_ns: i64,
    /// The parts of Δ, each exactly separable; they sum to `delta_ops_ns`.
    pub parts: Vec<Part>,
    /// The parts grouped: misses x I/O time, direct reclaim CPU, kswapd, other.
    pub groups: Vec<Part>,
}

/// The split of `a` against `b`.
fn split(a: &TimeSplit, b: &TimeSplit) -> Split {
    let parts = parts(a, b);
    Split {
        a_ops_ns: a.ops_ns,
        b_ops_ns: b.ops_ns,
        delta_ops_ns: a.ops_ns as i64 - b.ops_ns as i64,
        groups: groups(&parts),
        parts,
    }
}

/// The group names, in order.
pub const GROUPS: [&str; 4] = ["misses x I/O time", "direct reclaim CPU", "kswapd", "other"];

fn part(group: usize, name: &str, a: u64, b: u64) -> Part {
    Part {
        group: GROUPS[group].into(),
        part: name.into(),
        a_ns: a as f64,
        b_ns: b as f64,
        delta_ns: a as f64 - b as f64,
    }
}

/// The parts of a [`TimeSplit`], in order, with their groups.
fn parts(a: &TimeSplit, b: &TimeSplit) -> Vec<Part> {
    let mut v = vec![
        part(
            0,
            "miss CPU (fault, block requests, decompression)",
            a.miss_cpu_ns,
            b.miss_cpu_ns,
        ),
        part(0, "I/O wait", a.io_wait_ns, b.io_wait_ns),
    ];
    for ((name, x), (_, y)) in a.direct.parts().into_iter().zip(b.direct.parts()) {
        v.push(part(1, name, x, y));
    }
    v.push(part(
        2,
        "CPU queue behind kswapd",
        a.cpu_queue_kswapd_ns,
        b.cpu_queue_kswapd_ns,
    ));
    v.push(part(
        3,
        "CPU queue behind other tasks",
        a.cpu_queue_tasks_ns,
        b.cpu_queue_tasks_ns,
    ));
    v.push(part(3, "LRU batch flushes outside reclaim", a.batch_ns, b.batch_ns));
    v.push(part(
        3,
        "access CPU (hits, minor faults, requests)",
        a.access_ns,
        b.access_ns,
    ));
    v
}

/// The parts summed by group, in [`GROUPS`] order.
fn groups(parts: &[Part]) -> Vec<Part> {
    GROUPS
        .iter()
        .map(|g| {
            let (x, y) = parts
                .iter()
                .filter(|p| p.group == *g)
                .fold((0.0, 0.0), |(x, y), p| (x + p.a_ns, y + p.b_ns));
            Part {
                group: g.to_string(),
                part: g.to_string(),
                a_ns: x,
                b_ns: y,
                delta_ns: x - y,
            }
        })
        .collect()
}

/// Per job: the time splits of its tasks (`task_job[t]`) summed, under A and B.
fn per_task(a: &EngineResult, b: &EngineResult, task_job: &[u32], job_names: &[String]) -> Vec<TaskCost> {
    let jobs = task_job.iter().map(|&j| j as usize + 1).max().unwrap_or(0);
    let mut out = Vec::with_capacity(jobs);
    for j in 0..jobs {
        let sum = |r: &EngineResult| {
            let mut t = TimeSplit::default();
            for (task, split) in r.task_time.iter().enumerate() {
                if task_job.get(task).copied() == Some(j as u32) {
                    t.add(split);
                }
            }
            t
        };
        out.push(TaskCost {
            job: job_names.get(j).cloned().unwrap_or_else(|| format!("job {j}")),
            tasks: task_job.iter().filter(|&&x| x == j as u32).count() as u32,
            time: split(&sum(a), &sum(b)),
        });
    }
    out
}

/// Split Δ time of engine results `a` and `b` (whose misses `e` decomposes); per job too, with
/// `task_job` (each task's job) and the jobs' names.
pub fn cost(a: &EngineResult, b: &EngineResult, e: &Explanation, task_job: &[u32], job_names: &[String]) -> Cost {
    let (ta, tb) = (&a.time, &b.time);
    let time = split(ta, tb);
    let delta_ops_ns = time.delta_ops_ns;
    let sum: i64 = time.parts.iter().map(|p| p.a_ns as i64 - p.b_ns as i64).sum();
    let kswapd_cpu = a
        .kswapd_split
        .parts()
        .into_iter()
        .zip(b.kswapd_split.parts())
        .map(|((n, x), (_, y))| part(2, n, x, y))
        .collect();
    // the misses part at each run's mean cost of a miss, by the miss's mechanism
    let per_miss = |t: &TimeSplit, misses: u64| {
        if misses == 0 {
            0.0
        } else {
            (t.miss_cpu_ns + t.io_wait_ns) as f64 / misses as f64
        }
    };
    let (ca, cb) = (per_miss(ta, e.a.misses), per_miss(tb, e.b.misses));
    let mech = e.dimensions.iter().find(|d| d.name == "mechanism");
    let misses_by_mechanism = MECHANISMS
        .iter()
        .filter_map(|m| {
            let r = mech?.rows.iter().find(|r| r.class == *m)?;
            let (x, y) = (r.a as f64 * ca, r.b as f64 * cb);
            Some(Part {
                group: GROUPS[0].into(),
                part: m.to_string(),
                a_ns: x,
                b_ns: y,
                delta_ns: x - y,
            })
        })
        .collect();
    let tasks = a.tasks.max(1);
    let d_elapsed = a.elapsed_ns as f64 - b.elapsed_ns as f64;
    Cost {
        tasks: a.tasks,
        time,
        residual_ns: delta_ops_ns - sum,
        a_elapsed_ns: a.elapsed_ns,
        b_elapsed_ns: b.elapsed_ns,
        a_iops: a.iops,
        b_iops: b.iops,
        overlap_ns: d_elapsed - delta_ops_ns as f64 / f64::from(tasks),
        kswapd_cpu,
        misses_by_mechanism,
        per_task: per_task(a, b, task_job, job_names),
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen run --fio JOB.fio --output-format=json|normal`: the run of a fio job file printed as
//! fio prints its own (`stat.c`): one entry per job (each `numjobs` copy its own, or a group's
//! jobs as one under `group_reporting`), with fio's key names, filled from the engine's per-job
//! measurement ([`lrugen::sim::engine::EngineResult::jobs`]). The job file is read by
//! `lrugen::workload::gen::fiojob` in lrugen-core (where the fuzz target reaches it); this module
//! only writes, which is the CLI's business, so it lives here beside `ycsb` and `memtier`.
//!
//! What the model cannot fill is written as fio writes a quantity it did not measure: 0, or an
//! empty object (submission latency `slat_ns`, the per-interval bandwidth and IOPS samples
//! `bw_min`…`iops_samples`, CPU use, context switches and faults, the latency buckets
//! `latency_ns`/`latency_us`/`latency_ms`, `disk_util`). docs/benchmarks.md lists the fields.

use lrugen::sim::engine::{DirStats, EngineConfig, JobStats, LatencyStats};
use lrugen::sim::RunResult;
use lrugen::workload::gen::fiojob::JobDesc;
use serde_json::Value;

/// fio's `--output-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// fio's text (`normal`, its default).
    Normal,
    /// fio's JSON (`json`).
    Json,
}

/// Parse `--output-format`'s value.
pub fn format(s: &str) -> Result<Format, String> {
    match s {
        "normal" => Ok(Format::Normal),
        "json" => Ok(Format::Json),
        o => Err(format!(
            "'{o}': expected normal or json (fio's terse, json+ and combined formats are not written)"
        )),
    }
}

/// One entry of fio's report: the jobs it covers, their name and group.
#[derive(Clone, Debug)]
struct Entry {
    /// Index into the job sections.
    section: usize,
    /// Jobs (copies) it covers.
    jobs: u32,
}

/// The entries of a run of `desc` with `jobs` copies (`--jobs`, else `numjobs` for a single
/// section; a mix runs each section's `numjobs` times `jobs`), and the entry of each job in the
/// order `sim::task_streams` makes them.
fn entries(desc: &[JobDesc], jobs: u32) -> (Vec<Entry>, Vec<u32>) {
    let mut out: Vec<Entry> = Vec::new();
    let mut map = Vec::new();
    for (i, d) in desc.iter().enumerate() {
        let copies = if desc.len() == 1 { jobs } else { d.numjobs * jobs };
        for _ in 0..copies {
            // fio's group_reporting: a job joins the entry before it when both report by group
            // and share the group
            let join = d.group_reporting
                && out.last().is_some_and(|e| {
                    let p = &desc[e.section];
                    p.group_reporting && p.groupid == d.groupid
                });
            if join {
                out.last_mut().expect("an entry").jobs += 1;
            } else {
                out.push(Entry { section: i, jobs: 1 });
            }
            map.push(out.len() as u32 - 1);
        }
    }
    (out, map)
}

/// `--output-format` prints one run of a kernel policy: refuse anything else before the run.
pub fn check_policies(kinds: &[lrugen::sim::PolicyKind]) -> Result<(), String> {
    let names = || kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join(", ");
    match kinds {
        [k] if k.is_kernel() => Ok(()),
        [_] => Err(format!(
            "--output-format: policy {} replays one page stream, not fio's jobs in virtual time; expected --policy mglru or classic",
            names()
        )),
        _ => Err(format!(
            "--output-format prints one fio run, and --policy gives {} ({}); expected one kernel policy, e.g. --policy mglru",
            kinds.len(),
            names()
        )),
    }
}

/// Make the engine measure each of fio's entries apart (`per_job`, `job_entries`).
pub fn measure_per_job(engine: &mut Option<EngineConfig>, desc: &[JobDesc], jobs: u32) {
    if let Some(e) = engine.as_mut() {
        e.per_job = true;
        e.job_entries = entries(desc, jobs).1;
    }
}

/// The text of the run's report in `format`: one kernel-policy run of the job file (`desc`,
/// `global` its `[global]` options, `jobs` as [`measure_per_job`] had it).
pub fn report(
    format: Format,
    desc: &[JobDesc],
    global: &[(String, String)],
    jobs: u32,
    results: &[RunResult],
) -> Result<String, String> {
    let [r] = results else {
        return Err(format!(
            "--output-format prints one fio run, and this is {} ({}); expected one kernel policy, e.g. --policy mglru",
            results.len(),
            results.iter().map(|r| r.policy.as_str()).collect::<Vec<_>>().join(", ")
        ));
    };
    let Some(e) = &r.engine else {
        return Err(format!(
            "--output-format: policy {} replays one page stream, not fio's jobs in virtual time; expected mglru or classic",
            r.policy
        ));
    };
    let (ents, _) = entries(desc, jobs);
    if e.jobs.len() != ents.len() {
        return Err(format!(
            "--output-format: the run measured {} jobs where the job file has {} (an internal error)",
            e.jobs.len(),
            ents.len()
        ));
    }
    let stats: Vec<(&Entry, &JobStats)> = ents.iter().zip(&e.jobs).collect();
    Ok(match format {
        Format::Json => {
            let mut s = String::new();
            json_doc(desc, global, &stats, r).write(&mut s, 0);
            s.push('\n');
            s
        }
        Format::Normal => normal(desc, &stats, r),
    })
}

/// Milliseconds as fio counts a direction's runtime (at least 1 when it did anything).
fn runtime_ms(d: &DirStats, j: &JobStats) -> u64 {
    if d.ios == 0 {
        0
    } else {
        j.runtime_ns().div_ceil(1_000_000).max(1)
    }
}

/// (bytes/s, KiB/s, IOPS) as fio computes them from the bytes, I/Os and runtime in ms.
fn rates(d: &DirStats, runtime_ms: u64) -> (u64, u64, f64) {
    if runtime_ms == 0 {
        return (0, 0, 0.0);
    }
    let bytes = d.ios * 4096;
    let bw_bytes = bytes * 1000 / runtime_ms;
    (bw_bytes, bw_bytes / 1024, d.ios as f64 * 1000.0 / runtime_ms as f64)
}

/// A JSON value whose objects keep their keys in the order they were written: fio's order
/// (`stat.c`), for diffing against fio's own output. serde_json's `Map` sorts its keys unless
/// its `preserve_order` feature is on, and features unify across the workspace (it would reorder
/// every other JSON lrugen writes), so the report is built as this tree and printed by [`J::write`]
/// in serde_json's pretty layout, with serde_json writing each scalar.
enum J {
    V(Value),
    O(Vec<(String, J)>),
    A(Vec<J>),
}

fn v(x: impl Into<Value>) -> J {
    J::V(x.into())
}

/// An object of `(key, value)` pairs, in order.
macro_rules! obj {
    ($($k:expr => $v:expr),* $(,)?) => { J::O(vec![$(($k.to_string(), $v)),*]) };
}

impl J {
    fn write(&self, o: &mut String, indent: usize) {
        let pad = |o: &mut String, n: usize| o.extend(std::iter::repeat_n(' ', n));
        match self {
            J::V(x) => o.push_str(&serde_json::to_string(x).expect("a JSON scalar")),
            J::O(m) if m.is_empty() => o.push_str("{}"),
            J::A(a) if a.is_empty() => o.push_str("[]"),
            J::O(m) => {
                o.push_str("{\n");
                for (i, (k, x)) in m.iter().enumerate() {
                    pad(o, indent + 2);
                    o.push_str(&serde_json::to_string(k).expect("a JSON string"));
                    o.push_str(": ");
                    x.write(o, indent + 2);
                    o.push_str(if i + 1 < m.len() { ",\n" } else { "\n" });
                }
                pad(o, indent);
                o.push('}');
            }
            J::A(a) => {
                o.push_str("[\n");
                for (i, x) in a.iter().enumerate() {
                    pad(o, indent + 2);
                    x.write(o, indent + 2);
                    o.push_str(if i + 1 < a.len() { ",\n" } else { "\n" });
                }
                pad(o, indent);
                o.push(']');
            }
        }
    }
}

/// fio's latency object (`clat_ns`, `lat_ns`): min, max, mean, stddev, N and, with
/// `percentiles`, the percentile list keyed `"99.000000"`.
fn lat_json(l: &LatencyStats, percentiles: bool) -> J {
    let mut m = vec![
        ("min".to_string(), v(l.min_ns)),
        ("max".into(), v(l.max_ns)),
        ("mean".into(), v(l.mean_ns)),
        ("stddev".into(), v(l.stdev_ns)),
        ("N".into(), v(l.count)),
    ];
    if percentiles && l.count > 0 {
        let p = l.percentiles.iter().map(|(p, x)| (format!("{p:.6}"), v(*x))).collect();
        m.push(("percentile".into(), J::O(p)));
    }
    J::O(m)
}

fn zero_lat() -> J {
    obj!["min" => v(0), "max" => v(0), "mean" => v(0.0), "stddev" => v(0.0), "N" => v(0)]
}

/// One direction (`read`, `write`, `trim`) of an entry, `agg` the group's KiB/s in it.
fn dir_json(d: &DirStats, j: &JobStats, agg: u64) -> J {
    let rt = runtime_ms(d, j);
    let (bw_bytes, bw, iops) = rates(d, rt);
    let J::O(mut m) = obj![
        "io_bytes" => v(d.ios * 4096),
        "io_kbytes" => v(d.ios * 4),
        "bw_bytes" => v(bw_bytes),
        "bw" => v(bw),
        "iops" => v(iops),
        "runtime" => v(rt),
        "total_ios" => v(d.ios),
        "short_ios" => v(0),
        "drop_ios" => v(0),
        "slat_ns" => zero_lat(),
        "clat_ns" => lat_json(&d.lat, true),
        "lat_ns" => lat_json(&d.lat, false),
        "bw_min" => v(0),
        "bw_max" => v(0),
        "bw_agg" => v(if agg > 0 { bw as f64 * 100.0 / agg as f64 } else { 0.0 }),
        "bw_mean" => v(0.0),
        "bw_dev" => v(0.0),
        "bw_samples" => v(0),
        "iops_min" => v(0),
        "iops_max" => v(0),
        "iops_mean" => v(0.0),
        "iops_stddev" => v(0.0),
        "iops_samples" => v(0),
    ] else {
        unreachable!()
    };
    if d.ios > 0 {
        // fio's page-cache hit ratio (where its engine can tell), here the model's own
        m.push(("cachehit".into(), v(d.hits as f64 * 100.0 / d.ios as f64)));
    }
    J::O(m)
}

fn options(o: &[(String, String)]) -> J {
    J::O(o.iter().map(|(k, x)| (k.clone(), v(x.as_str()))).collect())
}

fn json_doc(desc: &[JobDesc], global: &[(String, String)], stats: &[(&Entry, &JobStats)], r: &RunResult) -> J {
    let e = r.engine.as_ref().expect("an engine run");
    let group_bw = |gid: u32, write: bool| -> u64 {
        stats
            .iter()
            .filter(|(en, _)| desc[en.section].groupid == gid)
            .map(|(_, j)| {
                let d = if write { &j.write } else { &j.read };
                rates(d, runtime_ms(d, j)).1
            })
            .sum()
    };
    let jobs: Vec<J> = stats
        .iter()
        .map(|(en, j)| {
            let d = &desc[en.section];
            let depth = d.iodepth.max(1);
            let mut levels = Vec::new();
            for (i, name) in ["1", "2", "4", "8", "16", "32", ">=64"].iter().enumerate() {
                // fio's bucket of the depth the I/Os were issued at: at most `iodepth` in flight
                let lo = 1u32 << i;
                let hit = if i == 6 {
                    depth >= 64
                } else {
                    depth >= lo && depth < lo * 2
                };
                levels.push(((*name).to_string(), v(if hit { 100.0 } else { 0.0 })));
            }
            obj![
                "jobname" => v(d.name.as_str()),
                "groupid" => v(d.groupid),
                "job_start" => v(0),
                "error" => v(0),
                "eta" => v(0),
                "elapsed" => v(e.elapsed_ns.div_ceil(1_000_000_000)),
                "job options" => options(&d.options),
                "read" => dir_json(&j.read, j, group_bw(d.groupid, false)),
                "write" => dir_json(&j.write, j, group_bw(d.groupid, true)),
                "trim" => dir_json(&DirStats::default(), j, 0),
                "sync" => obj!["total_ios" => v(0), "lat_ns" => zero_lat()],
                "job_runtime" => v(j.runtime_ns() / 1_000_000),
                "usr_cpu" => v(0.0),
                "sys_cpu" => v(0.0),
                "ctx" => v(0),
                "majf" => v(0),
                "minf" => v(0),
                "iodepth_level" => J::O(levels),
                "latency_ns" => obj![],
                "latency_us" => obj![],
                "latency_ms" => obj![],
                "lrugen" => obj![
                    "jobs" => v(en.jobs),
                    "policy" => v(r.policy.as_str()),
                    "profile" => v(r.profile.clone()),
                    "start_ns" => v(j.start_ns),
                    "end_ns" => v(j.end_ns),
                ],
            ]
        })
        .collect();
    // the run is in virtual time and has no wall clock: fio's timestamps are the epoch, so
    // the same job file and seed print the same bytes
    obj![
        "fio version" => v(format!("lrugen-{}", env!("CARGO_PKG_VERSION"))),
        "timestamp" => v(0),
        "timestamp_ms" => v(0),
        "time" => v(ctime(0)),
        "global options" => options(global),
        "jobs" => J::A(jobs),
        "disk_util" => J::A(Vec::new()),
    ]
}

/// `secs` since the epoch as C's `ctime` writes it (UTC), as fio's "time": `Thu Dec  3 08:54:04 2026`.
fn ctime(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // the civil date of a day count (Howard Hinnant's days_from_civil, inverted)
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {day:>2} {:02}:{:02}:{:02} {year}",
        WD[(days % 7) as usize],
        MO[(month - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A latency in fio's text: the unit by magnitude of the max (nsec, usec, msec), and the divisor.
fn unit(max_ns: u64) -> (&'static str, f64) {
    if max_ns >= 10_000_000 {
        ("msec", 1e6)
    } else if max_ns >= 10_000 {
        ("usec", 1e3)
    } else {
        ("nsec", 1.0)
    }
}

/// fio's `IOPS=…` (with `k` above 1000) and `BW=…MiB/s (…MB/s)`.
fn iops_bw(iops: f64, bw_bytes: u64) -> (String, String) {
    let i = if iops >= 1000.0 {
        format!("{:.1}k", iops / 1000.0)
    } else {
        format!("{iops:.0}")
    };
    let b = format!(
        "{:.1}MiB/s ({:.1}MB/s)",
        bw_bytes as f64 / (1 << 20) as f64,
        bw_bytes as f64 / 1e6
    );
    (i, b)
}

fn normal(desc: &[JobDesc], stats: &[(&Entry, &JobStats)], r: &RunResult) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    for d in desc {
        let _ = writeln!(
            o,
            "{}: (g={}): rw={}, bs=(R) {b}B-{b}B, (W) {b}B-{b}B, (T) {b}B-{b}B, ioengine={}, iodepth={}",
            d.name,
            d.groupid,
            d.rw,
            d.ioengine,
            d.iodepth,
            b = d.bs
        );
    }
    let _ = writeln!(o, "lrugen-{} ({}, virtual time)", env!("CARGO_PKG_VERSION"), r.policy);
    for (en, j) in stats {
        let d = &desc[en.section];
        let _ = writeln!(o, "{}: (groupid={}, jobs={}): err= 0", d.name, d.groupid, en.jobs);
        for (name, dir) in [("read", &j.read), ("write", &j.write)] {
            if dir.ios == 0 {
                continue;
            }
            let rt = runtime_ms(dir, j);
            let (bw_bytes, _, iops) = rates(dir, rt);
            let (i, b) = iops_bw(iops, bw_bytes);
            let _ = writeln!(
                o,
                "  {name}: IOPS={i}, BW={b}({}MiB/{rt}msec)",
                dir.ios * 4096 / (1 << 20)
            );
            let l = &dir.lat;
            let (u, div) = unit(l.max_ns);
            for what in ["clat", " lat"] {
                let _ = writeln!(
                    o,
                    "    {what} ({u}): min={:.0}, max={:.0}, avg={:.2}, stdev={:.2}",
                    l.min_ns as f64 / div,
                    l.max_ns as f64 / div,
                    l.mean_ns / div,
                    l.stdev_ns / div
                );
            }
            let _ = writeln!(o, "    clat percentiles ({u}):");
            for row in l.percentiles.chunks(4) {
                let cells: Vec<String> = row
                    .iter()
                    .map(|(p, v)| format!("{p:5.2}th=[{:>5.0}]", *v as f64 / div))
                    .collect();
                let _ = writeln!(o, "     | {}", cells.join(", "));
            }
            let _ = writeln!(
                o,
                "  cache hit: {:.2}% ({} of {} I/Os)",
                dir.hits as f64 * 100.0 / dir.ios as f64,
                dir.hits,
                dir.ios
            );
        }
        let depth = d.iodepth.max(1);
        let _ = writeln!(o, "  IO depths    : {depth}=100.0%");
    }
    let mut gids: Vec<u32> = desc.iter().map(|d| d.groupid).collect();
    gids.dedup();
    for g in gids {
        let _ = writeln!(o, "\nRun status group {g} (all jobs):");
        for (name, write) in [("READ", false), ("WRITE", true)] {
            let dirs: Vec<(&DirStats, u64)> = stats
                .iter()
                .filter(|(en, _)| desc[en.section].groupid == g)
                .map(|(_, j)| {
                    let d = if write { &j.write } else { &j.read };
                    (d, runtime_ms(d, j))
                })
                .filter(|(d, _)| d.ios > 0)
                .collect();
            if dirs.is_empty() {
                continue;
            }
            let ios: u64 = dirs.iter().map(|x| x.0.ios).sum();
            let run_max = dirs.iter().map(|x| x.1).max().unwrap_or(0);
            let run_min = dirs.iter().map(|x| x.1).min().unwrap_or(0);
            let bws: Vec<u64> = dirs.iter().map(|(d, rt)| rates(d, *rt).0).collect();
            let total = (ios * 4096 * 1000).checked_div(run_max).unwrap_or(0);
            let mib = |b: u64| format!("{:.1}MiB/s", b as f64 / (1 << 20) as f64);
            let mb = |b: u64| format!("{:.1}MB/s", b as f64 / 1e6);
            let (lo, hi) = (
                bws.iter().copied().min().unwrap_or(0),
                bws.iter().copied().max().unwrap_or(0),
            );
            let _ = writeln!(
                o,
                "{name:>7}: bw={} ({}), {}-{} ({}-{}), io={}MiB ({:.0}MB), run={run_min}-{run_max}msec",
                mib(total),
                mb(total),
                mib(lo),
                mib(hi),
                mb(lo),
                mb(hi),
                ios * 4096 / (1 << 20),
                ios as f64 * 4096.0 / 1e6
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use lrugen::sim::engine::FIO_PERCENTILES;
    use lrugen::workload::gen::fiojob::JobFile;

    fn desc(text: &str) -> Vec<JobDesc> {
        JobFile::parse(text).unwrap().to_run().unwrap().jobs_desc
    }

    /// Without group_reporting every copy is an entry; with it, a group's jobs are one, and a
    /// new group starts a new entry.
    #[test]
    fn entries_follow_group_reporting() {
        let (e, map) = entries(&desc("[a]\nsize=1m\nnumjobs=3\n"), 3);
        assert_eq!((e.len(), map), (3, vec![0, 1, 2]));
        let (e, map) = entries(&desc("[global]\ngroup_reporting\n[a]\nsize=1m\nnumjobs=3\n"), 3);
        assert_eq!((e.len(), e[0].jobs, map), (1, 3, vec![0, 0, 0]));
        let d = desc("[global]\ngroup_reporting\nsize=1m\n[a]\nnumjobs=2\n[b]\n[c]\nnew_group\nnumjobs=2\n");
        let (e, map) = entries(&d, 1);
        assert_eq!(map, [0, 0, 0, 1, 1]);
        assert_eq!((e[0].jobs, e[1].jobs, e[1].section), (3, 2, 2));
        // a mix with --jobs 2: each section's numjobs times 2
        let (_, map) = entries(&desc("[a]\nsize=1m\nnumjobs=2\n[b]\nsize=1m\n"), 2);
        assert_eq!(map, [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn ctime_is_cs() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(1_796_287_244), "Thu Dec  3 08:40:44 2026");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn rates_are_fios() {
        let d = DirStats {
            ios: 3_000,
            ..Default::default()
        };
        // 3,000 I/Os of 4 KiB in 1,500 ms
        assert_eq!(rates(&d, 1_500), (8_192_000, 8_000, 2_000.0));
        assert_eq!(rates(&d, 0), (0, 0, 0.0));
        assert_eq!(format("json"), Ok(Format::Json));
        assert!(format("terse").unwrap_err().contains("expected normal or json"));
        assert_eq!(FIO_PERCENTILES.len(), 17);
    }
}

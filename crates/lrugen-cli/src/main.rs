// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen`: the command line. A thin layer: parse arguments, build run configurations, call the
//! library, print.

mod cachesim;
mod exp;
mod kernel;
mod out;
mod traces;

// `lrugen run`'s options and their planning live in the library (shared with the Python
// package); the modules here reach them as `crate::checks`, `super::parse_enabled`, ...
use clap::{Args, Parser, Subcommand};
use lrugen::mm::MachineConfig;
use lrugen::report;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunResult};
use lrugen::workload::dist::Dist;
use lrugen::workload::{self, WorkloadSpec};
use lrugen_cli::checks::{self, count, count32};
use lrugen_cli::fio;
use lrugen_cli::run::{self, parse_enabled, plan_run, trace_format, OutputFormat, RunArgs};
use out::{out, outln};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lrugen",
    version,
    about = "Linux page reclaim (classic LRU, MGLRU) on a simulated machine",
    long_about = "Linux page reclaim on a simulated machine: the multi-gen LRU (6.1 and mainline) and \
                  the classic active/inactive LRU with workingset refault detection, reference \
                  policies (LRU, OPT), driven by built-in workloads or real traces, reporting the \
                  kernel's own counters.\n\n\
                  With no command, runs a built-in comparison that takes a few seconds."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a workload or a trace under one or more policies and compare them.
    Run(Box<RunArgs>),
    /// Why policy A misses more (or less) than policy B on one workload: both replay the identical
    /// stream with every page's faults, evictions and refaults recorded, and the difference is
    /// decomposed by page type, region, task, access frequency, reuse distance, page outcome,
    /// mechanism and time; in virtual time (--exp FILE, --jobs, a mix) the time difference too, by
    /// misses x I/O, reclaim CPU by mechanism and kswapd; --ablate reruns with each MGLRU switch
    /// flipped (docs/explain.md).
    Explain(Box<ExplainArgs>),
    /// Measure simulated accesses per second of each policy on a trace. Each trace's first row,
    /// policy `bare`, is the replay loop alone: the trace's dense ids read back as a run reads
    /// them, with no policy (hit ratio `-`), the ceiling of any policy's rate.
    Bench(BenchArgs),
    /// Run a workload on a real Linux kernel under qemu and compare it with the model (needs
    /// qemu-system-x86, busybox-static, e2fsprogs, cpio, zstd, xz-utils, kmod and the static
    /// replayer: see scripts/kernel-compare.sh).
    Kernel(Box<kernel::KernelCmd>),
    /// Run an experiment file (TOML): a matrix of policies, sweeps and repetitions, in parallel;
    /// print a table with 95% confidence intervals and write JSON, CSV, plots and an HTML report
    /// (`exp merge`: the slices of `--shard K/N` runs combined).
    Exp(exp::ExpArgs),
    /// Miss-ratio curves of a trace: lru's exact (stack distances, and SHARDS), opt's and any
    /// policy's from a run per size, or from miniature simulations on a spatial sample (--mini),
    /// checked against full runs (--check); a table, JSON, CSV and a plot (docs/mrc.md).
    Mrc(Box<lrugen_cli::mrc::MrcArgs>),
    /// The public traces the tests and examples use: list them, fetch them (with a SHA-256
    /// check), or generate the small synthetic trace shipped in examples/traces.
    Traces(traces::TracesArgs),
    /// Op files (what `lrugen kernel` replays in the guest, docs/op-files.md): `ops build FILE`
    /// writes one; `lrugen run --ops FILE` replays one on the model.
    #[command(subcommand)]
    Ops(OpsCmd),
}

#[derive(clap::Subcommand)]
enum OpsCmd {
    /// Write the op file of a workload given with `lrugen kernel`'s flags.
    Build(Box<kernel::OpsBuildArgs>),
}

#[derive(Args)]
struct ExplainArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Windows of the run for the over-time view.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = count, allow_negative_numbers = true)]
    windows: u64,
    /// Seeds to repeat A and B (and the ablation) over, for 95% CIs of the difference; the tables
    /// are of the first (--seed).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = count32, allow_negative_numbers = true)]
    seeds: u32,
    /// Rerun the MGLRU side (A, else B) with each named switch of its profile flipped, one at a
    /// time, in parallel, and report how much of the difference each accounts for.
    #[arg(long)]
    ablate: bool,
    /// Worker threads for the ablation (default: the cores; the results do not depend on it).
    #[arg(long, value_name = "N", value_parser = count32, allow_negative_numbers = true)]
    threads: Option<u32>,
    /// Write explanation.json, report.txt, classes.csv, windows.csv, the plots (SVG, PNG) and
    /// index.html (the offline report) into this directory (written whole or not at all).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// With --out: write into a non-empty directory lrugen did not write.
    #[arg(long, requires = "out")]
    force: bool,
    /// Take the workload, machine, memcg, engine and seed from this experiment file (its first
    /// sweep point, its first repetition's seed), e.g. examples/fg-hot-cold.toml or
    /// examples/fio-jobs-nvme.toml; A and B are two of its policies, named by their labels in
    /// --policy (default: its first two).
    #[arg(long, value_name = "FILE")]
    exp: Option<PathBuf>,
}

/// What `explain` runs: A and B, their names, the trace, the workload's description and the
/// machine line of the report.
struct ExplainPlan {
    cfgs: Vec<lrugen::sim::RunConfig>,
    names: Vec<String>,
    trace: Option<lrugen::workload::LoadedTrace>,
    describe: String,
    machine: String,
}

/// The plan of `explain --exp FILE`.
fn explain_exp(file: &std::path::Path, a: &RunArgs) -> Result<ExplainPlan, String> {
    if a.trace.is_some() || a.workload.is_some() || a.ycsb.is_some() || a.fio.is_some() || a.ops.is_some() {
        return Err(format!(
            "--exp {}: the experiment file gives the workload; --trace, --workload, --ycsb, --fio and --ops are not taken with it",
            file.display()
        ));
    }
    let exp = lrugen::experiment::Experiment::from_file(file).map_err(|e| e.to_string())?;
    if let Some(why) = &exp.skip {
        return Err(format!("--exp {}: {why}", file.display()));
    }
    let labels: Vec<&str> = exp.variants.iter().map(|v| v.label.as_str()).collect();
    let chosen: Vec<usize> = if a.policy.is_empty() {
        (0..exp.variants.len().min(2)).collect()
    } else {
        a.policy
            .iter()
            .map(|p| {
                labels.iter().position(|l| l == p).ok_or_else(|| {
                    format!(
                        "--policy {p}: not a policy of {} (expected one of its labels: {})",
                        file.display(),
                        labels.join(", ")
                    )
                })
            })
            .collect::<Result<_, _>>()?
    };
    if chosen.len() != 2 || chosen[0] == chosen[1] {
        return Err(format!(
            "--exp {}: explain compares two of its policies, A and B; expected two different labels among {} in --policy",
            file.display(),
            labels.join(", ")
        ));
    }
    let cells = exp.cells();
    let mut cfgs = Vec::new();
    for &v in &chosen {
        let cell = cells
            .iter()
            .find(|c| c.point == 0 && c.variant == v && c.repetition == 0)
            .ok_or_else(|| format!("--exp {}: no run of {}", file.display(), labels[v]))?;
        cfgs.push(exp.run_config(cell, None));
    }
    let c = &cfgs[0];
    let limit = c.memcg.max.unwrap_or(c.machine.total_pages());
    let machine = format!(
        "machine: {} MiB, memcg /t memory.max {} pages ({} MiB), swap {} MiB, swappiness {}{}",
        c.machine.total_pages() * 4 / 1024,
        limit,
        limit * 4 / 1024,
        c.machine.swap_pages * 4 / 1024,
        c.machine.swappiness,
        c.engine
            .as_ref()
            .map_or(String::new(), |e| format!(", engine: {} CPUs, {} jobs", e.cpus, c.jobs))
    );
    Ok(ExplainPlan {
        names: chosen.iter().map(|&v| labels[v].to_string()).collect(),
        describe: format!("{} ({})", c.workload.describe(), file.display()),
        trace: None,
        machine,
        cfgs,
    })
}

#[derive(Args)]
struct BenchArgs {
    /// Traces to replay.
    #[arg(value_name = "TRACE", required = true)]
    traces: Vec<PathBuf>,
    /// Format of the traces, for files whose names do not tell it (as `run --format`).
    #[arg(long, value_name = "NAME", value_parser = trace_format)]
    format: Option<lrugen_trace::TraceFormat>,
    /// Cache size in pages.
    #[arg(long, value_name = "PAGES", default_value_t = 1000, value_parser = count, allow_negative_numbers = true)]
    capacity: u64,
    /// Policies, comma-separated (as `run --policy`, zoo included).
    #[arg(long, value_delimiter = ',', default_value = "lru,classic,mglru")]
    policy: Vec<String>,
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, help = checks::MEMORY_BUDGET_HELP)]
    memory_budget: Option<String>,
}

fn parse_policies(list: &[String]) -> Result<Vec<PolicyKind>, String> {
    let mut out = Vec::new();
    for p in list {
        let k: PolicyKind = p.trim().parse()?;
        if !out.contains(&k) {
            out.push(k);
        }
    }
    if out.is_empty() {
        return Err("no policy given".into());
    }
    Ok(out)
}

fn progress_bar(label: &str, total: u64) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::with_draw_target(Some(total), indicatif::ProgressDrawTarget::stderr());
    pb.set_style(
        indicatif::ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} accesses ({per_sec}, eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_prefix(label.to_string());
    pb
}

/// Run each policy of `cfgs`, sharing a loaded trace; with `peaks`, the peak RSS of each run.
fn run_all(
    cfgs: &[RunConfig],
    trace: Option<workload::LoadedTrace>,
    mut peaks: Option<&mut PeakRss>,
) -> Result<Vec<RunResult>, String> {
    let mut out = Vec::new();
    for cfg in cfgs {
        let pb = progress_bar(cfg.policy.name(), 0);
        let mut cb = |done: u64, total: u64| {
            pb.set_length(total);
            pb.set_position(done);
        };
        if let Some(p) = peaks.as_deref_mut() {
            p.before_run();
        }
        let r = sim::run(cfg, trace.clone(), &mut cb).map_err(|e| e.to_string())?;
        if let Some(p) = peaks.as_deref_mut() {
            p.after_run();
        }
        pb.finish_and_clear();
        out.push(r);
    }
    Ok(out)
}

/// The writes to `enabled` of each run that had them, and those its run did not reach.
fn switches_report(results: &[RunResult], asked: &[lrugen::sim::SwitchAt]) -> String {
    let mut out = String::from("\nwrites to /sys/kernel/mm/lru_gen/enabled:");
    for r in results.iter().filter(|r| r.vmstat.is_some() && r.engine.is_none()) {
        let applied: Vec<String> = r
            .switches
            .iter()
            .map(|s| format!("step {}: '{}' -> {} ({})", s.step, s.value, s.enabled, s.live))
            .collect();
        out.push_str(&format!("\n  {}: {}", r.policy, applied.join(", ")));
        let missed = asked.len() - r.switches.len();
        if missed > 0 {
            out.push_str(&format!(" ({missed} not reached: the run ended first)"));
        }
    }
    out
}

fn cmd_run(mut a: RunArgs) -> Result<(), String> {
    run::default_policies(&mut a);
    let plan = plan_run(&a)?;
    let mut peaks = a.stats.then(PeakRss::start);
    let mut results = match (&plan.opfile, &a.ops) {
        (Some(o), Some(path)) => {
            let mut out = Vec::new();
            for cfg in &plan.cfgs {
                if let Some(p) = peaks.as_mut() {
                    p.before_run();
                }
                let r = run::run_op_file(o, path, cfg)?;
                if let Some(p) = peaks.as_mut() {
                    p.after_run();
                }
                out.push(r);
            }
            out
        }
        _ => run_all(&plan.cfgs, plan.trace, peaks.as_mut())?,
    };
    run::apply_labels(&mut results, &plan.labels);
    // the traces go to their file whatever the output's form; printed only after the table
    if let Some(path) = &a.ftrace_out {
        run::write_whole(path, &run::ftrace_text(&results), "--ftrace-out")?;
    }
    let write_failed = || {
        results
            .iter()
            .find_map(|r| {
                r.debugfs_write_error
                    .as_ref()
                    .map(|e| format!("--debugfs-write: {}: {e}", r.policy))
            })
            .map_or(Ok(()), Err)
    };
    if let (Some(OutputFormat::Fio(f)), Some((d, g))) = (a.output_format, &plan.fio_desc) {
        if let Some(n) = &plan.note {
            eprintln!("lrugen: {n}");
        }
        out!("{}", fio::report(f, d, g, plan.jobs, &results)?);
        return write_failed();
    }
    if a.output_format == Some(OutputFormat::Cachesim) {
        if let Some(n) = &plan.note {
            eprintln!("lrugen: {n}");
        }
        // cachesim's first field is the trace's path as given
        let trace = match (&a.trace, &a.ops, &a.fio) {
            (Some(p), _, _) | (_, Some(p), _) | (_, _, Some(p)) => p.display().to_string(),
            _ => run::workload_name(&a),
        };
        out!("{}", cachesim::report(&trace, &results));
        return write_failed();
    }
    if a.json {
        if let Some(n) = &plan.note {
            eprintln!("lrugen: {n}");
        }
        outln!(
            "{}",
            serde_json::to_string_pretty(&report::json(&results)).expect("JSON")
        );
        if let Some(p) = &peaks {
            eprint!("{}", run_stats(&results, p));
        }
        return write_failed();
    }
    outln!("workload: {}", plan.spec.describe());
    outln!(
        "machine: {} MiB, memcg /t memory.max {} pages ({} MiB), swap {} MiB, swappiness {}\n",
        plan.memory * 4 / 1024,
        plan.limit,
        plan.limit * 4 / 1024,
        plan.swap * 4 / 1024,
        a.swappiness
    );
    out!("{}", report::table(&results));
    if plan.nr_mglru > 1 {
        let all: Vec<String> = results
            .iter()
            .filter_map(|r| r.profile.as_ref().map(|p| format!("{} = {p}", r.policy)))
            .collect();
        outln!("MGLRU profiles: {}", all.join(", "));
    } else if let Some(p) = results.iter().find_map(|r| r.profile.as_ref()) {
        outln!("MGLRU profile: {p}");
    }
    if let Some(n) = &plan.note {
        outln!("{n}");
    }
    if let Some(c) = plan.cfgs.iter().find(|c| !c.switch_at.is_empty()) {
        outln!("{}", switches_report(&results, &c.switch_at));
    }
    if !a.ftrace.is_empty() && a.ftrace_out.is_none() {
        out!("\n--- ftrace ---\n{}", run::ftrace_text(&results));
    }
    for r in &results {
        if let Some(e) = &r.engine {
            outln!("\n{}", lrugen::sim::engine::format_bench(&r.policy, &plan.spec, e));
        }
        if let Some(t) = report::swap_device_block(r) {
            out!("\n{t}");
        }
        if let Some(e) = &r.error {
            outln!("\n{}: stopped early: {e}", r.policy);
        }
        if !r.ctl.is_empty() {
            outln!("\n--- {}: control script ({} actions) ---", r.policy, r.ctl.len());
            out!("{}", report::ctl_log(&r.ctl));
        }
        if a.vmstat {
            if let Some(t) = report::proc_vmstat(r) {
                outln!("\n--- {}: /proc/vmstat (delta over the run) ---\n{t}", r.policy);
            }
        }
        if a.debugfs || a.debugfs_every.is_some() {
            let n = r.debugfs.len();
            for (i, (step, plain, full)) in r.debugfs.iter().enumerate() {
                if !a.debugfs && i + 1 == n && a.debugfs_every.is_some_and(|e| step % e != 0) {
                    continue;
                }
                outln!(
                    "\n--- {}: /sys/kernel/debug/lru_gen after {step} accesses ---\n{plain}",
                    r.policy
                );
                outln!(
                    "--- {}: /sys/kernel/debug/lru_gen_full after {step} accesses ---\n{full}",
                    r.policy
                );
            }
        }
        if a.memory_stat {
            if let (Some(t), Some(ev), Some(path)) = (report::memory_stat(r), &r.memory_events, &r.memcg) {
                outln!("\n--- {}: {path}/memory.stat ---\n{t}", r.policy);
                outln!("--- {}: {path}/memory.events ---\n{}", r.policy, ev.format());
            }
        }
    }
    if let Some(p) = &peaks {
        out!("\n{}", run_stats(&results, p));
    }
    write_failed()
}

fn cmd_explain(mut x: ExplainArgs) -> Result<(), String> {
    let a = &mut x.run;
    let from_exp = match &x.exp {
        Some(file) => Some(explain_exp(file, a)?),
        None => None,
    };
    if a.policy.is_empty() {
        a.policy = ["mglru", "classic"].map(String::from).to_vec();
    }
    if a.policy.len() != 2 {
        return Err(format!(
            "--policy {}: explain compares two policies, A and B; expected two entries, e.g. \
             --policy mglru,classic or --policy mglru@6.12,mglru@6.1",
            a.policy.join(",")
        ));
    }
    if a.memtier.is_some() || a.debugfs_write.is_some() || a.output_format.is_some() {
        return Err(
            "explain: --memtier, --debugfs-write and --output-format are not taken (the memtier \
             benchmark and a fio job file's report are `lrugen run`'s; explain takes --workload fio, \
             ycsb or a preset such as fg-hot-cold or fio-jobs-nvme, --jobs and the engine's flags)"
                .into(),
        );
    }
    if x.seeds == 0 || x.windows == 0 {
        return Err("--seeds and --windows: expected at least 1".into());
    }
    let plan = match from_exp {
        Some(p) => p,
        None => {
            let plan = plan_run(a)?;
            if plan.cfgs.len() != 2 {
                return Err(format!(
                    "--policy {}: expected two different kernel policies (mglru, mglru@PROFILE, mglru-fg, classic)",
                    a.policy.join(",")
                ));
            }
            let names: Vec<String> = plan
                .cfgs
                .iter()
                .zip(&plan.labels)
                .map(|(c, l)| match (l, c.policy) {
                    (Some(l), _) => l.clone(),
                    (None, PolicyKind::Mglru) => format!("mglru-{}", c.mglru.profile.label()),
                    (None, p) => p.name().to_string(),
                })
                .collect();
            ExplainPlan {
                machine: format!(
                    "machine: memcg /t memory.max {} pages ({} MiB), swap {} MiB, swappiness {}{}",
                    plan.limit,
                    plan.limit * 4 / 1024,
                    plan.swap * 4 / 1024,
                    a.swappiness,
                    plan.cfgs[0].engine.as_ref().map_or(String::new(), |e| format!(
                        ", engine: {} CPUs, {} jobs",
                        e.cpus, plan.cfgs[0].jobs
                    ))
                ),
                describe: plan.spec.describe(),
                cfgs: plan.cfgs,
                names,
                trace: plan.trace,
            }
        }
    };
    let names = plan.names.clone();
    let staging = match &x.out {
        Some(dir) => Some(lrugen::experiment::outdir::Staging::prepare(
            lrugen::experiment::outdir::Request {
                flag: "--out",
                target: dir,
                kind: lrugen::experiment::outdir::EXPLAIN,
                of: std::collections::BTreeMap::from([
                    ("workload".to_string(), plan.describe.clone()),
                    ("a".to_string(), names[0].clone()),
                    ("b".to_string(), names[1].clone()),
                ]),
                force: x.force,
                resume: false,
            },
        )?),
        None => None,
    };
    let threads = x
        .threads
        .map(|t| t as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let opts = lrugen::explain::study::Options {
        windows: x.windows,
        seeds: x.seeds,
        ablate: x.ablate,
        threads,
    };
    let runs = 2 * x.seeds as u64
        + if x.ablate {
            lrugen::reclaim::mglru::Switches::NAMES.len() as u64 * x.seeds as u64
        } else {
            0
        };
    eprintln!("lrugen: explain: {runs} runs of {}", plan.describe);
    let study = lrugen::explain::study::explain(&names[0], &plan.cfgs[0], &names[1], &plan.cfgs[1], plan.trace, &opts)
        .map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&study).expect("JSON");
    let text = format!(
        "workload: {}\n{}\n\n{}",
        plan.describe,
        plan.machine,
        lrugen::explain::report::format_table(&study)
    );
    if let Some(staging) = staging {
        let dir = staging.dir().to_path_buf();
        let write = |name: &str, body: &str| {
            std::fs::write(dir.join(name), body).map_err(|e| format!("--out {}: {name}: {e}", dir.display()))
        };
        write("explanation.json", &json)?;
        write("report.txt", &text)?;
        write("classes.csv", &lrugen::explain::report::classes_csv(&study.explanation))?;
        write("windows.csv", &lrugen::explain::report::windows_csv(&study.explanation))?;
        let mut written = vec!["explanation.json, report.txt, classes.csv, windows.csv".to_string()];
        let (plots, no_plots) = match lrugen::explain::report::write_plots(&study, &dir) {
            Ok(f) => {
                written.push(format!("{} plots (SVG and PNG)", f.len()));
                (f, None)
            }
            Err(e) if e.contains("font") => {
                eprintln!("lrugen: warning: plots skipped: {e}");
                (Vec::new(), Some(e))
            }
            Err(e) => return Err(e),
        };
        // the command, its output directory as DIR (the page does not depend on where it went)
        let mut args: Vec<String> = vec!["lrugen".into()];
        let mut it = std::env::args().skip(1);
        while let Some(w) = it.next() {
            if w == "--out" {
                it.next();
                args.push("--out DIR".into());
            } else if w.starts_with("--out=") {
                args.push("--out DIR".into());
            } else {
                args.push(lrugen::report::html::shell_word(&w));
            }
        }
        let header = vec![format!("workload: {}", plan.describe), plan.machine.clone()];
        let page =
            lrugen::explain::report::html_page(&study, &header, &dir, &plots, no_plots.as_deref(), &args.join(" "))
                .and_then(|p| p.write(&dir))
                .map_err(|e| format!("--out {}: index.html: {e}", dir.display()))?;
        let _ = page;
        written.push("index.html".into());
        staging.commit()?;
        if !a.json {
            out!("{text}");
        }
        outln!(
            "\nwrote {}: {}",
            x.out.as_ref().map_or(String::new(), |p| p.display().to_string()),
            written.join(", ")
        );
    } else if a.json {
        outln!("{json}");
    } else {
        out!("{text}");
    }
    Ok(())
}

/// The process's peak resident set in bytes: `VmHWM` of `/proc/self/status` (Linux), `None` where
/// the platform has no such file or line.
fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Reset the process's peak resident set to its current one (`5` written to
/// `/proc/self/clear_refs`, Linux 4.0 and later); whether that worked.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Peak RSS for `lrugen run --stats`: the process's, and each run's (`VmHWM` reset before the run
/// and read after it: the peak while it ran, which counts what the process held before it too).
struct PeakRss {
    /// The process's peak so far (the maximum of the readings; a reset loses the one before).
    process: Option<u64>,
    /// Each run's peak, `None` where `VmHWM` could not be read or reset.
    runs: Vec<Option<u64>>,
    /// Whether the reset before the current run worked.
    reset: bool,
}

impl PeakRss {
    fn start() -> PeakRss {
        PeakRss {
            process: peak_rss_bytes(),
            runs: Vec::new(),
            reset: false,
        }
    }

    fn before_run(&mut self) {
        self.process = self.process.max(peak_rss_bytes());
        self.reset = reset_peak_rss();
    }

    fn after_run(&mut self) {
        let p = peak_rss_bytes();
        self.process = self.process.max(p);
        self.runs.push(p.filter(|_| self.reset));
    }
}

/// The text of `lrugen run --stats`: the process's peak RSS (over all the runs), then per run its
/// own peak RSS, the resident pages at its end (the workload memcg's `anon` + `file` pages, kernel
/// policies only), the model's state bytes (`RunResult::state_bytes`) and the bytes per resident
/// page of the run's peak and of the state, then the state split (`RunResult::state_split`) into
/// that of resident pages (per resident page) and of non-resident ones (per non-resident file
/// page, and the swapped-out pages). Every number is printed as an integer or with
/// two decimals, so that `bytes / pages` can be checked from the text.
fn run_stats(results: &[RunResult], peaks: &PeakRss) -> String {
    use lrugen::mm::vmstat::Stat;
    use std::fmt::Write;
    let mut o = String::from("--- stats ---\n");
    match peaks.process {
        Some(b) => {
            let _ = writeln!(
                o,
                "peak RSS (VmHWM of the process, over all runs): {b} bytes ({})",
                lrugen::budget::human(b)
            );
        }
        None => o.push_str("peak RSS (VmHWM of the process, over all runs): unavailable (no /proc/self/status)\n"),
    }
    for (i, r) in results.iter().enumerate() {
        let p = &r.policy;
        let run_peak = peaks.runs.get(i).copied().flatten();
        match run_peak {
            Some(b) => {
                let _ = writeln!(
                    o,
                    "{p}: peak RSS during the run (VmHWM reset before it): {b} bytes ({})",
                    lrugen::budget::human(b)
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "{p}: peak RSS during the run: unavailable (VmHWM could not be reset through \
                     /proc/self/clear_refs or read)"
                );
            }
        }
        let Some(ms) = &r.memory_stat else {
            let _ = writeln!(
                o,
                "{p}: resident pages at the end: n/a (a reference cache, not the simulated machine)"
            );
            continue;
        };
        let pages = (ms.get(Stat::NrAnonPages) + ms.get(Stat::NrFilePages)).max(0) as u64;
        let memcg = r.memcg.as_deref().unwrap_or("/t");
        let _ = writeln!(o, "{p}: resident pages at the end (memcg {memcg} anon + file): {pages}");
        match (run_peak, pages) {
            (Some(b), 1..) => {
                let _ = writeln!(
                    o,
                    "{p}: peak RSS during the run / resident pages: {:.2} bytes per page",
                    b as f64 / pages as f64
                );
            }
            (None, _) => {
                let _ = writeln!(o, "{p}: peak RSS during the run / resident pages: unavailable");
            }
            (_, 0) => {
                let _ = writeln!(
                    o,
                    "{p}: peak RSS during the run / resident pages: n/a (no page resident)"
                );
            }
        }
        match (r.state_bytes, pages) {
            (Some(b), 1..) => {
                let _ = writeln!(
                    o,
                    "{p}: model state bytes (Machine::state_bytes): {b} bytes ({})",
                    lrugen::budget::human(b)
                );
                let _ = writeln!(
                    o,
                    "{p}: model state / resident pages: {:.2} bytes per page",
                    b as f64 / pages as f64
                );
            }
            (Some(b), 0) => {
                let _ = writeln!(o, "{p}: model state bytes (Machine::state_bytes): {b} bytes");
                let _ = writeln!(o, "{p}: model state / resident pages: n/a (no page resident)");
            }
            (None, _) => {
                let _ = writeln!(
                    o,
                    "{p}: model state bytes (Machine::state_bytes): unavailable (not reported by the run)"
                );
                let _ = writeln!(o, "{p}: model state / resident pages: unavailable");
            }
        }
        if let Some(sp) = &r.state_split {
            let per = |b: u64, n: u64| match n {
                0 => String::from("n/a (none)"),
                n => format!("{:.2} bytes per page", b as f64 / n as f64),
            };
            let _ = writeln!(o, "{p}: model state of resident pages: {} bytes", sp.resident_bytes);
            let _ = writeln!(
                o,
                "{p}: model state of resident pages / resident pages: {}",
                per(sp.resident_bytes, pages)
            );
            let _ = writeln!(
                o,
                "{p}: model state of non-resident pages: {} bytes",
                sp.nonresident_bytes
            );
            let _ = writeln!(
                o,
                "{p}: non-resident file pages (shadow entries): {}",
                sp.nonresident_file_pages
            );
            let _ = writeln!(
                o,
                "{p}: model state of non-resident file pages: {} bytes",
                sp.nonresident_file_bytes
            );
            let _ = writeln!(
                o,
                "{p}: model state of non-resident file pages / non-resident file pages: {}",
                per(sp.nonresident_file_bytes, sp.nonresident_file_pages)
            );
            let _ = writeln!(o, "{p}: swapped-out pages: {}", sp.swapped_pages);
        }
    }
    o
}

/// A run of `workload` under `policy` in a memcg of `limit` pages, the reference caches as large,
/// everything else at [`RunConfig::new`]'s defaults (`bench` and the built-in comparison).
fn limited_run(machine: MachineConfig, limit: u64, workload: WorkloadSpec, policy: PolicyKind) -> RunConfig {
    let memcg = MemcgConfig {
        max: Some(limit),
        ..Default::default()
    };
    RunConfig {
        capacity: Some(limit),
        ..RunConfig::new(machine, memcg, workload, policy)
    }
}

fn cmd_mrc(a: lrugen_cli::mrc::MrcArgs) -> Result<(), String> {
    use lrugen_cli::mrc;
    checks::memory_budget(a.memory_budget.as_deref())?;
    let opts = mrc::Options::of(&a);
    // names and sizes refused before the trace is read
    mrc::check_options(&opts)?;
    let staging = match &a.out {
        Some(dir) => Some(lrugen::experiment::outdir::Staging::prepare(
            lrugen::experiment::outdir::Request {
                flag: "--out",
                target: dir,
                kind: lrugen::experiment::outdir::MRC,
                of: std::collections::BTreeMap::from([("trace".to_string(), a.trace.display().to_string())]),
                force: a.force,
                resume: false,
            },
        )?),
        None => None,
    };
    checks::trace_refs("TRACE", &a.trace, a.format)?;
    let trace = workload::load_trace_as(&a.trace, a.format).map_err(|e| e.to_string())?;
    let m = mrc::compute(&a.trace, &trace, &opts)?;
    let json = serde_json::to_string_pretty(&mrc::to_json(&m)).expect("JSON");
    if a.json {
        outln!("{json}");
    } else {
        out!("{}", mrc::table(&m));
    }
    if let Some(staging) = staging {
        let dir = staging.dir().to_path_buf();
        let write = |name: &str, body: &str| {
            std::fs::write(dir.join(name), body).map_err(|e| format!("--out {}: {name}: {e}", dir.display()))
        };
        write("mrc.json", &json)?;
        write("mrc.csv", &mrc::to_csv(&m))?;
        write("table.txt", &mrc::table(&m))?;
        let plots = match mrc::plot(&m, &dir) {
            Ok(_) => "mrc.svg, mrc.png",
            Err(e) => {
                eprintln!("lrugen: mrc: no plot: {e}");
                "no plot"
            }
        };
        let shown = staging.given().display().to_string();
        staging.commit()?;
        eprintln!("lrugen: mrc: wrote mrc.json, mrc.csv, table.txt, {plots} into {shown}");
    }
    Ok(())
}

fn cmd_bench(a: BenchArgs) -> Result<(), String> {
    checks::memory_budget(a.memory_budget.as_deref())?;
    let policies = parse_policies(&a.policy)?;
    if a.capacity == 0 {
        return Err("--capacity: a cache of 0 pages leaves no room to run (expected at least 1 page)".into());
    }
    checks::limit_fits("--capacity", &a.capacity.to_string(), a.capacity)?;
    // every trace opens, in a format it can be read as, and fits the memory budget, before the
    // first is replayed
    for path in &a.traces {
        let n = checks::trace_refs("trace", path, a.format)?;
        let machine = MachineConfig::simple(a.capacity.saturating_add(a.capacity.max(16_384)), 0);
        for &p in &policies {
            let workload = WorkloadSpec::Trace {
                path: path.clone(),
                format: a.format,
                access: Default::default(),
            };
            let cfg = limited_run(machine.clone(), a.capacity, workload, p);
            checks::fits(
                &format!("trace {}", path.display()),
                None,
                &lrugen::budget::estimate(&cfg, Some(n)),
            )?;
        }
    }
    outln!(
        "{:<24} {:>8} {:>10} {:>12} {:>14} {:>10}",
        "trace",
        "policy",
        "capacity",
        "accesses",
        "accesses/s",
        "hit ratio"
    );
    for path in &a.traces {
        let t = workload::load_trace_as(path, a.format).map_err(|e| e.to_string())?;
        let name = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (n, seconds) = bare_replay(&t).map_err(|e| format!("{}: reading its ids back: {e}", path.display()))?;
        outln!(
            "{:<24} {:>8} {:>10} {:>12} {:>12.2} M {:>10}",
            name,
            "bare",
            a.capacity,
            n,
            n as f64 / seconds.max(1e-9) / 1e6,
            "-"
        );
        for &p in &policies {
            let machine = MachineConfig::simple(a.capacity.saturating_add(a.capacity.max(16_384)), 0);
            let workload = WorkloadSpec::Trace {
                path: path.clone(),
                format: a.format,
                access: Default::default(),
            };
            let cfg = limited_run(machine, a.capacity, workload, p);
            let r = sim::run(&cfg, Some(t.clone()), &mut |_, _| {}).map_err(|e| e.to_string())?;
            let rate = r.accesses as f64 / r.wall_seconds.max(1e-9);
            outln!(
                "{:<24} {:>8} {:>10} {:>12} {:>12.2} M {:>9.2}%",
                name,
                p.name(),
                a.capacity,
                r.accesses,
                rate / 1e6,
                r.hit_ratio * 100.0
            );
        }
    }
    Ok(())
}

/// The bare replay loop of `lrugen bench`: the trace's dense ids read back as the reference
/// caches' replay reads them (a cursor over the spilled ids, [`lrugen_trace::IdCursor`], a chunk
/// at a time), each passed through [`std::hint::black_box`], with no policy. Returns the ids read and the seconds of the loop (the
/// cursor is made before the clock starts, as a run's stream is set up before its replay is timed).
fn bare_replay(t: &workload::LoadedTrace) -> std::io::Result<(u64, f64)> {
    let mut ids = t.pages.cursor(0);
    let mut n = 0u64;
    let start = std::time::Instant::now();
    loop {
        let chunk = ids.read_chunk()?;
        if chunk.is_empty() {
            break;
        }
        for id in lrugen_trace::le_ids(chunk) {
            std::hint::black_box(id);
            n += 1;
        }
    }
    Ok((n, start.elapsed().as_secs_f64()))
}

/// The built-in comparison `lrugen` runs with no arguments.
fn cmd_default() -> Result<(), String> {
    outln!("lrugen: Linux page reclaim on a simulated machine.\n");
    outln!(
        "Built-in comparison: the kernel's multi-gen LRU and classic active/inactive LRU (mainline,\n\
         the {} kernel preset) against plain LRU and the optimum (Belady's OPT), on two workloads in\n\
         a memcg half the size of the data.\n",
        lrugen::reclaim::mglru::Preset::MAINLINE.name()
    );
    let runs = [
        (
            "1. fio-like buffered random reads (zipf:0.9), 4 files x 32 MiB, memcg 64 MiB",
            WorkloadSpec::FileRead {
                files: 4,
                file_pages: 8192,
                dist: Dist::Zipf { theta: 0.9 },
                accesses: 400_000,
            },
            16_384u64,
            0u64,
        ),
        (
            "2. anon loads/stores (zipf:0.9, 30% stores), 64 MiB region, memcg 32 MiB, 128 MiB swap",
            WorkloadSpec::Anon {
                compressed_pct: 0,
                pages: 16_384,
                write_ratio: 0.3,
                dist: Dist::Zipf { theta: 0.9 },
                accesses: 300_000,
            },
            8_192,
            32_768,
        ),
    ];
    for (title, spec, limit, swap) in runs {
        let cfgs: Vec<RunConfig> = PolicyKind::ALL
            .iter()
            .map(|&p| limited_run(MachineConfig::simple(limit + 16_384, swap), limit, spec.clone(), p))
            .collect();
        let results = run_all(&cfgs, None, None)?;
        outln!("{title}");
        out!("{}", report::table(&results));
        outln!();
    }
    outln!("hit ratio: accesses that found the page resident; misses: page-cache misses and major faults;");
    outln!("refaults, pgscan, pgsteal, pgactivate, swap out (pswpout): /proc/vmstat counters of the run.");
    outln!("Next: `lrugen run --help`, e.g. `lrugen run --trace OLTP.lis.zst --capacity 1000 --vmstat`.");
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        None => cmd_default(),
        Some(Cmd::Run(a)) => cmd_run(*a),
        Some(Cmd::Explain(a)) => cmd_explain(*a),
        Some(Cmd::Bench(a)) => cmd_bench(a),
        Some(Cmd::Exp(a)) => exp::cmd_exp(a),
        Some(Cmd::Kernel(a)) => kernel::cmd_kernel(*a),
        Some(Cmd::Ops(OpsCmd::Build(a))) => kernel::cmd_ops_build(*a),
        Some(Cmd::Traces(a)) => traces::cmd_traces(a),
        Some(Cmd::Mrc(a)) => cmd_mrc(*a),
    }
    .and_then(|()| out::status());
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lrugen: error: {e}");
            ExitCode::FAILURE
        }
    }
}

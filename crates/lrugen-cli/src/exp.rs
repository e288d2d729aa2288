// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen exp FILE --out DIR [--threads N] [--force] [--resume]`: run an experiment file, print
//! its table, write its results and plots.
//!
//! The output directory is checked before the matrix runs and written whole or not at all
//! (`lrugen::experiment::outdir`): the results go to `DIR.partial` first, each finished cell
//! persisted there as it completes, and the directory is renamed into place when everything is
//! written. A first Ctrl-C starts no new cell and lets the running ones finish; a second abandons
//! them. Either way the finished cells are written (`results.json`, `results.csv`,
//! `summary.csv` in `DIR.partial`, with a note of what is missing) and `--resume` continues.

use crate::out::{out, outln};
use clap::Args;
use lrugen::experiment::outdir::{self, Request, Staging};
use lrugen::experiment::runner::{FINISH, MAX_THREADS, RUN};
use lrugen::experiment::{self, output, plot, store, Drive, ExpError};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Exit status of an interrupted experiment (128 + SIGINT, as shells report it).
const INTERRUPTED: i32 = 130;

/// Hidden, for tests: stop as a first Ctrl-C would once this many cells have finished.
const STOP_AFTER_ENV: &str = "LRUGEN_EXP_STOP_AFTER";

/// Arguments of `lrugen exp`.
#[derive(Args)]
pub struct ExpArgs {
    /// The experiment file (TOML; see docs/experiments.md).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Directory for results.json, results.csv, summary.csv and the plots: a new or empty one, or
    /// one `lrugen exp` wrote (replaced whole). Written as DIR.partial first, renamed when complete.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Worker threads (default: one per core; at most 1024, never more than the cells to run).
    /// The results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Write no plots.
    #[arg(long)]
    pub no_plots: bool,
    /// Write into --out even if it is a non-empty directory lrugen did not write (files of the same
    /// names are replaced, the others kept), and discard an interrupted run's DIR.partial.
    #[arg(long)]
    pub force: bool,
    /// Continue the interrupted run in DIR.partial (same experiment file and lrugen version): the
    /// finished cells are kept, the others run; the results are those of an uninterrupted run.
    #[arg(long)]
    pub resume: bool,
    /// Run the published setup the file's `[full]` table describes instead of its scaled preset
    /// (minutes to hours, and memory in proportion; docs/experiments.md).
    #[arg(long)]
    pub full: bool,
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, help = crate::checks::MEMORY_BUDGET_HELP)]
    pub memory_budget: Option<String>,
}

/// Run `lrugen exp`.
pub fn cmd_exp(a: ExpArgs) -> Result<(), String> {
    match a.threads {
        Some(0) => return Err("--threads 0: expected at least 1 thread".into()),
        Some(n) if n > MAX_THREADS => {
            return Err(format!(
                "--threads {n}: expected at most {MAX_THREADS} worker threads (this machine has {} cores; \
                 more threads than cells are never started)",
                std::thread::available_parallelism().map_or(1, |n| n.get())
            ))
        }
        _ => {}
    }
    let stop_after = match std::env::var(STOP_AFTER_ENV) {
        Ok(v) => Some(
            v.parse::<usize>()
                .map_err(|_| format!("{STOP_AFTER_ENV}={v}: expected a number of cells"))?,
        ),
        Err(_) => None,
    };
    let (exp, hash) = experiment::Experiment::from_file_hashed_at(&a.file, a.full).map_err(|e| e.to_string())?;
    if a.full && !exp.has_full {
        return Err(format!(
            "--full: {} has no [full] table: expected the published setup's values there \
             (docs/experiments.md, \"Scaled and full size\")",
            a.file.display()
        ));
    }
    if let Some(why) = &exp.skip {
        outln!("{}: skipped: {why}", exp.name);
        return Ok(());
    }
    crate::checks::memory_budget(a.memory_budget.as_deref())?;
    fits_budget(&exp, &a)?;
    let staging = Staging::prepare(Request {
        flag: "--out",
        target: &a.out,
        kind: outdir::EXP,
        of: BTreeMap::from([
            ("experiment".to_string(), exp.name.clone()),
            ("file".to_string(), a.file.display().to_string()),
            ("file_fnv1a64".to_string(), format!("{hash:016x}")),
            ("scale".to_string(), if a.full { "full" } else { "scaled" }.to_string()),
        ]),
        force: a.force,
        resume: a.resume,
    })?;
    let done = if staging.resumed() {
        store::load(staging.dir(), &exp).map_err(|e| format!("--resume: {e}"))?
    } else {
        Vec::new()
    };
    let cells = exp.points.len() * exp.variants.len() * exp.repetitions as usize;
    outln!(
        "experiment: {}{}",
        exp.name,
        if a.full { " (full size: [full])" } else { "" }
    );
    if let Some(d) = &exp.description {
        outln!("{d}");
    }
    for n in &exp.notes {
        outln!("note: {n}");
    }
    outln!(
        "{} sweep point(s) x {} policies x {} repetition(s) = {cells} runs; baseline {}, metric {}",
        exp.points.len(),
        exp.variants.len(),
        exp.repetitions,
        exp.variants[exp.baseline].label,
        exp.metric
    );
    if staging.resumed() {
        outln!(
            "resuming {}: {} of {cells} runs finished earlier",
            staging.dir().display(),
            done.len()
        );
    }
    outln!();
    let pb = indicatif::ProgressBar::with_draw_target(Some(cells as u64), indicatif::ProgressDrawTarget::stderr());
    pb.set_style(
        indicatif::ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} runs (eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_prefix("exp");
    let stop = Arc::new(AtomicU8::new(RUN));
    {
        let (stop, pb) = (stop.clone(), pb.clone());
        let handler = ctrlc::set_handler(move || match stop.fetch_add(1, Ordering::SeqCst) {
            RUN => pb.suspend(|| {
                eprintln!(
                    "lrugen: interrupted: starting no new run, letting the running ones finish \
                     (Ctrl-C again to abandon them)"
                )
            }),
            FINISH => pb.suspend(|| eprintln!("lrugen: interrupted again: abandoning the running runs")),
            _ => {}
        });
        if let Err(e) = handler {
            eprintln!("lrugen: warning: no Ctrl-C handler ({e}): an interrupt loses the running experiment");
        }
    }
    let progress = |done: usize, _total: usize| pb.set_position(done as u64);
    let dir = staging.dir().to_path_buf();
    let mut on_cell = |c: &experiment::CellResult| store::save(&dir, c);
    let results = experiment::run_with(
        &exp,
        Drive {
            threads: a.threads,
            done,
            stop: stop.clone(),
            stop_after,
            progress: &progress,
            on_cell: &mut on_cell,
        },
    );
    pb.finish_and_clear();
    let results = results.map_err(|e| e.to_string())?;
    out!("{}", output::table(&results));
    for c in &results.cells {
        if let Some(e) = &c.error {
            outln!(
                "cell {} ({}, repetition {}): stopped early: {e}",
                c.cell.index,
                c.policy,
                c.cell.repetition
            );
        }
    }
    if let Some(i) = &results.interrupted {
        // The finished cells, with the note, where --resume finds them.
        output::write_files(&results, staging.dir()).map_err(|e| e.to_string())?;
        let partial = staging.keep();
        eprintln!(
            "lrugen: {}\nlrugen: the {} finished runs are in {} (results.json, results.csv, summary.csv); \
             to run the {} others: lrugen exp {} --out {} --resume",
            i.note,
            i.finished,
            partial.display(),
            i.missing.len(),
            a.file.display(),
            a.out.display()
        );
        std::process::exit(INTERRUPTED);
    }
    output::write_files(&results, staging.dir()).map_err(|e| e.to_string())?;
    let mut written = vec!["results.json", "results.csv", "summary.csv"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    let benches = results.cells.iter().filter(|c| c.bench.is_some()).count();
    if benches > 0 {
        written.push(format!("bench/ ({benches} reports as the benchmark prints them)"));
    }
    if !a.no_plots {
        match plot::write_plots(&results, staging.dir()) {
            Ok(files) => written.push(format!("{} plots (SVG and PNG)", files.len())),
            Err(ExpError::NoFont(why)) => eprintln!("lrugen: warning: plots skipped: {why}"),
            Err(e) => return Err(e.to_string()),
        }
    }
    store::remove(staging.dir()).map_err(|e| e.to_string())?;
    staging.commit()?;
    outln!("\nwrote {}: {}", a.out.display(), written.join(", "));
    Ok(())
}

/// Refuse an experiment whose cells, as many at once as there are worker threads, need more model
/// state than the memory budget, before anything is written. A trace's references are counted
/// once per trace.
fn fits_budget(exp: &experiment::Experiment, a: &ExpArgs) -> Result<(), String> {
    let cells = exp.cells();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = a.threads.unwrap_or(cores).clamp(1, cells.len().max(1)) as u64;
    let mut refs: BTreeMap<PathBuf, u64> = BTreeMap::new();
    let mut worst: Option<(u64, usize)> = None;
    for cell in &cells {
        let cfg = exp.run_config(cell, None);
        let trace = match &cfg.workload {
            lrugen::workload::WorkloadSpec::Trace { path, format, .. } => Some(match refs.get(path) {
                Some(&n) => n,
                None => {
                    let n = crate::checks::trace_refs(&format!("{}: trace", a.file.display()), path, *format)?;
                    refs.insert(path.clone(), n);
                    n
                }
            }),
            _ => None,
        };
        let e = lrugen::budget::estimate(&cfg, trace);
        if worst.is_none_or(|w| e.bytes > w.0) {
            worst = Some((e.bytes, cell.point));
        }
    }
    let Some((bytes, point)) = worst else { return Ok(()) };
    let lim = lrugen::budget::limit();
    let total = bytes.saturating_mul(workers);
    if total <= lim {
        return Ok(());
    }
    let human = lrugen::budget::human;
    let threads = if workers > 1 {
        format!(", x {workers} worker threads (--threads) = {}", human(total))
    } else {
        String::new()
    };
    Err(format!(
        "{}: sweep point {} ({}): a run needs up to ~{} of model state{threads}, over the memory \
         budget of {} (--memory-budget); expected a smaller workload or machine at that point{}, or a \
         larger --memory-budget",
        a.file.display(),
        point + 1,
        exp.points[point].config.workload.describe(),
        human(bytes),
        human(lim),
        if workers > 1 { ", fewer --threads" } else { "" }
    ))
}

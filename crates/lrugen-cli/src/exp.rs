// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen exp FILE --out DIR [--threads N] [--force] [--resume]`: run an experiment file, print
//! its table, write its results and plots.
//!
//! `lrugen exp FILE --shard K/N --out DIR` runs one slice of the matrix (the cells whose index
//! modulo N is K, [`lrugen::experiment::Shard`]) and writes its finished cells, with a copy of the
//! experiment file, into DIR; `lrugen exp merge DIR... --out DIR` checks that the slices are all
//! the N slices of one experiment file and writes from their cells exactly what the unsharded run
//! writes (docs/experiments.md, "Sharding").
//!
//! The output directory is checked before the matrix runs and written whole or not at all
//! (`lrugen::experiment::outdir`): the results go to `DIR.partial` first, each finished cell
//! persisted there as it completes, and the directory is renamed into place when everything is
//! written. A first Ctrl-C starts no new cell and lets the running ones finish; a second abandons
//! them. Either way the finished cells are written (`results.json`, `results.csv`,
//! `summary.csv` in `DIR.partial`, with a note of what is missing) and `--resume` continues.

use crate::out::{out, outln};
use clap::{Args, Subcommand};
use lrugen::experiment::outdir::{self, Request, Staging};
use lrugen::experiment::runner::{FINISH, MAX_THREADS, RUN};
use lrugen::experiment::{self, output, plot, store, Drive, ExpError, Results, Shard};
use lrugen::report::html::INDEX;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Exit status of an interrupted experiment (128 + SIGINT, as shells report it).
const INTERRUPTED: i32 = 130;

/// Hidden, for tests: stop as a first Ctrl-C would once this many cells have finished.
const STOP_AFTER_ENV: &str = "LRUGEN_EXP_STOP_AFTER";

/// The file in a slice's directory holding the experiment file's bytes (`lrugen exp merge` parses
/// it, so that every slice is checked against the very experiment it ran).
pub const SLICE_EXPERIMENT: &str = "experiment.toml";

/// Arguments of `lrugen exp`.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ExpArgs {
    #[command(subcommand)]
    pub cmd: Option<ExpCmd>,
    /// The experiment file (TOML; see docs/experiments.md).
    #[arg(value_name = "FILE", required = true)]
    pub file: Option<PathBuf>,
    /// Directory for results.json, results.csv, summary.csv, the plots and index.html (the report
    /// to share): a new or empty one, or one `lrugen exp` wrote (replaced whole). Written as DIR.partial first, renamed when complete.
    /// With --shard: the slice's directory (its finished cells, for `lrugen exp merge`).
    #[arg(long, value_name = "DIR", required_unless_present = "list_cells")]
    pub out: Option<PathBuf>,
    /// Run one slice of the matrix: the cells whose index modulo N is K (0 <= K < N), written
    /// into --out for `lrugen exp merge`; e.g. a Slurm array job's task K of N
    /// (docs/experiments.md, "Sharding").
    #[arg(long, value_name = "K/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// Print the matrix's cells (index, sweep point, policy, repetition, seed; with --shard only
    /// the slice's) and run nothing.
    #[arg(long, conflicts_with_all = ["out", "resume", "force"])]
    pub list_cells: bool,
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

/// `lrugen exp`'s subcommands.
#[derive(Subcommand)]
pub enum ExpCmd {
    /// Combine the slices written by `lrugen exp FILE --shard K/N --out DIR` (all N of them, of
    /// one experiment file) into exactly the output of the unsharded run: table, JSON, CSV, plots
    /// and index.html drawn from the merged cells.
    Merge(MergeArgs),
}

/// Arguments of `lrugen exp merge`.
#[derive(Args)]
pub struct MergeArgs {
    /// The slices' directories (the --out of each `lrugen exp FILE --shard K/N`), in any order.
    #[arg(value_name = "DIR", required = true)]
    pub slices: Vec<PathBuf>,
    /// Directory for the merged results, as `lrugen exp --out` (written whole or not at all).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Write no plots.
    #[arg(long)]
    pub no_plots: bool,
    /// Write into --out even if it is a non-empty directory lrugen did not write.
    #[arg(long)]
    pub force: bool,
}

/// What an experiment's output is of, as its marker records it (and `--resume` compares).
fn identity(exp: &experiment::Experiment, file: &str, hash: u64, full: bool) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("experiment".to_string(), exp.name.clone()),
        ("file".to_string(), file.to_string()),
        ("file_fnv1a64".to_string(), format!("{hash:016x}")),
        ("scale".to_string(), if full { "full" } else { "scaled" }.to_string()),
    ])
}

/// Run `lrugen exp`.
pub fn cmd_exp(a: ExpArgs) -> Result<(), String> {
    if let Some(ExpCmd::Merge(m)) = a.cmd {
        return cmd_merge(m);
    }
    let file = a.file.clone().expect("clap requires FILE");
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
    let text = std::fs::read(&file).map_err(|e| format!("{}: cannot read the file: {e}", file.display()))?;
    let (exp, hash) = experiment::Experiment::from_file_hashed_at(&file, a.full).map_err(|e| e.to_string())?;
    if outdir::fnv1a64(&text) != hash {
        return Err(format!(
            "{}: the file changed while it was read: expected it to stay as it is while lrugen exp starts",
            file.display()
        ));
    }
    if a.full && !exp.has_full {
        return Err(format!(
            "--full: {} has no [full] table: expected the published setup's values there \
             (docs/experiments.md, \"Scaled and full size\")",
            file.display()
        ));
    }
    if a.list_cells {
        return list_cells(&exp, a.shard);
    }
    if let Some(why) = &exp.skip {
        outln!("{}: skipped: {why}", exp.name);
        return Ok(());
    }
    let out_dir = a.out.clone().expect("clap requires --out without --list-cells");
    crate::checks::memory_budget(a.memory_budget.as_deref())?;
    fits_budget(&exp, &file, a.threads)?;
    let mut of = identity(&exp, &file.display().to_string(), hash, a.full);
    if let Some(s) = a.shard {
        of.insert("shard".into(), s.to_string());
    }
    let staging = Staging::prepare(Request {
        flag: "--out",
        target: &out_dir,
        kind: if a.shard.is_some() { outdir::SHARD } else { outdir::EXP },
        of,
        force: a.force,
        resume: a.resume,
    })?;
    let done = if staging.resumed() {
        store::load(staging.dir(), &exp).map_err(|e| format!("--resume: {e}"))?
    } else {
        Vec::new()
    };
    let all = exp.points.len() * exp.variants.len() * exp.repetitions as usize;
    let cells = match a.shard {
        Some(s) => (0..all).filter(|&i| s.owns(i)).count(),
        None => all,
    };
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
        "{} sweep point(s) x {} policies x {} repetition(s) = {all} runs; baseline {}, metric {}",
        exp.points.len(),
        exp.variants.len(),
        exp.repetitions,
        exp.variants[exp.baseline].label,
        exp.metric
    );
    if let Some(s) = a.shard {
        outln!(
            "slice {s}: the {cells} runs whose index modulo {} is {}{}",
            s.n,
            s.k,
            if cells == 0 {
                " (none: more slices than runs)"
            } else {
                ""
            }
        );
    }
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
            shard: a.shard,
        },
    );
    pb.finish_and_clear();
    let results = results.map_err(|e| e.to_string())?;
    // a slice has no table: it holds a part of each policy's repetitions
    match a.shard {
        Some(_) => print_stopped(&results),
        None => print_results(&results),
    }
    if let Some(i) = &results.interrupted {
        // The finished cells, with the note, where --resume finds them.
        let (whose, shard, files) = match a.shard {
            Some(s) => (format!(" of slice {s}"), format!(" --shard {s}"), ""),
            None => {
                output::write_files(&results, staging.dir()).map_err(|e| e.to_string())?;
                (
                    String::new(),
                    String::new(),
                    " (results.json, results.csv, summary.csv)",
                )
            }
        };
        let partial = staging.keep();
        eprintln!(
            "lrugen: {}\nlrugen: the {} finished runs{whose} are in {}{files}; \
             to run the {} others: lrugen exp {}{shard} --out {} --resume",
            i.note,
            i.finished,
            partial.display(),
            i.missing.len(),
            file.display(),
            out_dir.display()
        );
        std::process::exit(INTERRUPTED);
    }
    if let Some(s) = a.shard {
        return finish_slice(&results, s, staging, &out_dir, &text);
    }
    write_results(&results, &String::from_utf8_lossy(&text), staging, a.no_plots, &out_dir)
}

/// The table, and the cells that stopped early.
fn print_results(results: &Results) {
    out!("{}", output::table(results));
    print_stopped(results);
}

/// The cells that stopped early (an OOM kill, say), one line each.
fn print_stopped(results: &Results) {
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
}

/// Write a finished run's results (files, plots) into the staging directory and move it into
/// place: what `lrugen exp --out` and `lrugen exp merge --out` both write.
fn write_results(
    results: &Results,
    settings: &str,
    staging: Staging,
    no_plots: bool,
    out_dir: &Path,
) -> Result<(), String> {
    output::write_files(results, staging.dir()).map_err(|e| e.to_string())?;
    let mut written = vec!["results.json", "results.csv", "summary.csv"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    let benches = results.cells.iter().filter(|c| c.bench.is_some()).count();
    if benches > 0 {
        written.push(format!("bench/ ({benches} reports as the benchmark prints them)"));
    }
    let mut plots = Vec::new();
    let mut why_none = None;
    if no_plots {
        why_none = Some("--no-plots".to_string());
    } else {
        match plot::write_plots(results, staging.dir()) {
            Ok(files) => {
                written.push(format!("{} plots (SVG and PNG)", files.len()));
                plots = files;
            }
            Err(ExpError::NoFont(why)) => {
                eprintln!("lrugen: warning: plots skipped: {why}");
                why_none = Some(format!("skipped, {why}"));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    // the report to share: tables, the plots inline, the settings and the command
    output::report_page(results, settings, staging.dir(), &plots, why_none.as_deref())
        .map_err(|e| e.to_string())?
        .write(staging.dir())
        .map_err(|e| format!("{}: {e}", staging.dir().join(INDEX).display()))?;
    written.push(INDEX.to_string());
    store::remove(staging.dir()).map_err(|e| e.to_string())?;
    staging.commit()?;
    outln!("\nwrote {}: {}", out_dir.display(), written.join(", "));
    Ok(())
}

/// `--list-cells`: the matrix (or one slice of it), one cell a line, tab-separated.
fn list_cells(exp: &experiment::Experiment, shard: Option<Shard>) -> Result<(), String> {
    outln!("cell\tpoint\tpolicy\trepetition\tseed");
    for c in exp.cells() {
        if shard.is_none_or(|s| s.owns(c.index)) {
            outln!(
                "{}\t{}\t{}\t{}\t{}",
                c.index,
                exp.points[c.point].label(),
                exp.variants[c.variant].label,
                c.repetition,
                c.seed
            );
        }
    }
    Ok(())
}

/// The end of a finished `--shard` run: its cells stay in `cells/` beside a copy of the
/// experiment file; no table or plots (a slice holds a part of each policy's repetitions).
fn finish_slice(results: &Results, s: Shard, staging: Staging, out_dir: &Path, text: &[u8]) -> Result<(), String> {
    let copy = staging.dir().join(SLICE_EXPERIMENT);
    std::fs::write(&copy, text).map_err(|e| format!("{}: {e}", copy.display()))?;
    staging.commit()?;
    outln!(
        "\nwrote {}: slice {s}, {} runs; when all {} slices are written: lrugen exp merge DIR... --out DIR",
        out_dir.display(),
        results.cells.len(),
        s.n
    );
    Ok(())
}

/// Refuse an experiment whose cells, as many at once as there are worker threads, need more model
/// state than the memory budget, before anything is written. A trace's references are counted
/// once per trace.
fn fits_budget(exp: &experiment::Experiment, file: &Path, threads: Option<usize>) -> Result<(), String> {
    let cells = exp.cells();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = threads.unwrap_or(cores).clamp(1, cells.len().max(1)) as u64;
    let mut refs: BTreeMap<PathBuf, u64> = BTreeMap::new();
    let mut worst: Option<(u64, usize)> = None;
    for cell in &cells {
        let cfg = exp.run_config(cell, None);
        let trace = match &cfg.workload {
            lrugen::workload::WorkloadSpec::Trace { path, format, .. } => Some(match refs.get(path) {
                Some(&n) => n,
                None => {
                    let n = crate::checks::trace_refs(&format!("{}: trace", file.display()), path, *format)?;
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
    let per_threads = if workers > 1 {
        format!(", x {workers} worker threads (--threads) = {}", human(total))
    } else {
        String::new()
    };
    Err(format!(
        "{}: sweep point {} ({}): a run needs up to ~{} of model state{per_threads}, over the memory \
         budget of {} (--memory-budget); expected a smaller workload or machine at that point{}, or a \
         larger --memory-budget",
        file.display(),
        point + 1,
        exp.points[point].config.workload.describe(),
        human(bytes),
        human(lim),
        if workers > 1 { ", fewer --threads" } else { "" }
    ))
}

/// One slice found by `lrugen exp merge`.
struct Slice {
    dir: PathBuf,
    shard: Shard,
    marker: outdir::Marker,
}

/// Read the slice in `dir`, or say why it is not one.
fn read_slice(dir: &Path) -> Result<Slice, String> {
    let expected = "expected the --out directory of a finished `lrugen exp FILE --shard K/N`";
    if !dir.is_dir() {
        let partial = outdir::partial_of(dir);
        if outdir::marker_in(&partial, &outdir::SHARD).is_some() {
            return Err(format!(
                "{}: the slice is not finished ({} holds an interrupted one): {expected}; continue it \
                 with the same `lrugen exp FILE --shard K/N --out {}` and --resume",
                dir.display(),
                partial.display(),
                dir.display()
            ));
        }
        return Err(format!("{}: no such directory: {expected}", dir.display()));
    }
    if outdir::marker_in(dir, &outdir::SHARD).is_some_and(|m| !m.complete) {
        return Err(format!(
            "{}: an interrupted slice, not a finished one: {expected}; continue it with the same \
             `lrugen exp FILE --shard K/N --out DIR` and --resume (DIR without .partial)",
            dir.display()
        ));
    }
    let Some(marker) = outdir::marker_in(dir, &outdir::SHARD).filter(|m| m.complete) else {
        let why = if outdir::marker_in(dir, &outdir::EXP).is_some() {
            "it holds the results of a whole run (lrugen exp without --shard), not a slice".to_string()
        } else {
            format!("not a slice (it has no {})", outdir::SHARD.marker)
        };
        return Err(format!("{}: {why}: {expected}", dir.display()));
    };
    let field = |k: &str| {
        marker.of.get(k).cloned().ok_or_else(|| {
            format!(
                "{}: {} has no \"{k}\": {expected} by this lrugen",
                dir.display(),
                outdir::SHARD.marker
            )
        })
    };
    let shard = Shard::parse(&field("shard")?).map_err(|e| format!("{}: shard {e}", dir.display()))?;
    for k in ["experiment", "file", "file_fnv1a64", "scale"] {
        field(k)?;
    }
    if marker.lrugen_version != outdir::VERSION {
        return Err(format!(
            "{}: slice {shard} was written by lrugen {}, this is lrugen {}: expected slices of the same \
             version (run them again with this lrugen)",
            dir.display(),
            marker.lrugen_version,
            outdir::VERSION
        ));
    }
    Ok(Slice {
        dir: dir.to_path_buf(),
        shard,
        marker,
    })
}

/// `lrugen exp merge DIR... --out DIR`.
fn cmd_merge(m: MergeArgs) -> Result<(), String> {
    let slices = m.slices.iter().map(|d| read_slice(d)).collect::<Result<Vec<_>, _>>()?;
    // one experiment file (its bytes' hash, its name, its scale) and one N
    let first = &slices[0];
    let what = |s: &Slice| {
        format!(
            "{} (slice {} of experiment {}, file {}, FNV-1a {}, {})",
            s.dir.display(),
            s.shard,
            s.marker.of["experiment"],
            s.marker.of["file"],
            s.marker.of["file_fnv1a64"],
            s.marker.of["scale"]
        )
    };
    for s in &slices[1..] {
        let same = ["experiment", "file_fnv1a64", "scale"]
            .iter()
            .all(|k| s.marker.of[*k] == first.marker.of[*k]);
        if !same {
            return Err(format!(
                "slices of different experiments: {} and {}: expected the slices of one experiment file, \
                 at one scale",
                what(first),
                what(s)
            ));
        }
        if s.shard.n != first.shard.n {
            return Err(format!(
                "slices of different splits: {} is one of {}, {} one of {}: expected the slices of one \
                 --shard K/N split (the same N)",
                first.dir.display(),
                first.shard.n,
                s.dir.display(),
                s.shard.n
            ));
        }
    }
    let n = first.shard.n;
    let mut by_k: Vec<Option<&Slice>> = vec![None; n];
    for s in &slices {
        if let Some(o) = by_k[s.shard.k] {
            return Err(format!(
                "slice {} given twice: {} and {}: expected each of the {n} slices 0/{n} .. {}/{n} once",
                s.shard,
                o.dir.display(),
                s.dir.display(),
                n - 1
            ));
        }
        by_k[s.shard.k] = Some(s);
    }
    let missing: Vec<String> = (0..n)
        .filter(|&k| by_k[k].is_none())
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "missing slice{} {}: expected all {n} slices 0/{n} .. {}/{n} of {}, given {}",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            n - 1,
            first.marker.of["file"],
            slices
                .iter()
                .map(|s| format!("{} ({})", s.shard, s.dir.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    // the experiment, from the copy slice 0/N ran, checked against the hash every slice recorded
    let zero = by_k[0].expect("every slice is there");
    let copy = zero.dir.join(SLICE_EXPERIMENT);
    let text = std::fs::read_to_string(&copy).map_err(|e| {
        format!(
            "{}: {e}: expected the copy of the experiment file a slice keeps",
            copy.display()
        )
    })?;
    let hash = outdir::fnv1a64(text.as_bytes());
    if format!("{hash:016x}") != zero.marker.of["file_fnv1a64"] {
        return Err(format!(
            "{}: its FNV-1a hash is {hash:016x}, the slice recorded {}: expected the experiment file the \
             slice ran (the copy was changed)",
            copy.display(),
            zero.marker.of["file_fnv1a64"]
        ));
    }
    let file = PathBuf::from(&zero.marker.of["file"]);
    let full = zero.marker.of["scale"] == "full";
    let exp = experiment::Experiment::parse_at_scale(&text, &file, full)
        .map_err(|e| format!("{e} (the experiment of slice 0/{n}, {}, as it ran)", copy.display()))?;
    if let Some(why) = &exp.skip {
        return Err(format!(
            "{}: {why}: the slices ran it; expected its inputs where `lrugen exp merge` runs (run it from \
             the directory the slices ran in)",
            file.display()
        ));
    }
    // every slice's cells: exactly the cells it owns
    let mut done = Vec::new();
    for s in &slices {
        let cells = store::load(&s.dir, &exp).map_err(|e| e.to_string())?;
        let owned: Vec<usize> = exp
            .cells()
            .iter()
            .map(|c| c.index)
            .filter(|&i| s.shard.owns(i))
            .collect();
        let have: Vec<usize> = cells.iter().map(|c| c.cell.index).collect();
        if let Some(&i) = have.iter().find(|&&i| !s.shard.owns(i)) {
            return Err(format!(
                "{}: cell {i} is not in slice {} (its index modulo {n} is {}): expected only the slice's cells",
                s.dir.display(),
                s.shard,
                i % n
            ));
        }
        if have != owned {
            let lost: Vec<String> = owned
                .iter()
                .filter(|i| !have.contains(i))
                .map(|i| i.to_string())
                .collect();
            return Err(format!(
                "{}: slice {} lacks cell(s) {}: expected all its {} cells (run the slice again)",
                s.dir.display(),
                s.shard,
                lost.join(", "),
                owned.len()
            ));
        }
        done.extend(cells);
    }
    let staging = Staging::prepare(Request {
        flag: "--out",
        target: &m.out,
        kind: outdir::EXP,
        of: identity(&exp, &zero.marker.of["file"], hash, full),
        force: m.force,
        resume: false,
    })?;
    let results = experiment::run_with(
        &exp,
        Drive {
            threads: Some(1),
            done,
            stop: Arc::new(AtomicU8::new(RUN)),
            stop_after: None,
            progress: &|_, _| {},
            on_cell: &mut |_| Ok(()),
            shard: None,
        },
    )
    .map_err(|e| e.to_string())?;
    if results.interrupted.is_some() {
        // every cell was checked present above
        return Err("merge: cells are missing after all: expected every cell of the matrix".into());
    }
    outln!(
        "experiment: {}{} (merged from {n} slices)",
        exp.name,
        if full { " (full size: [full])" } else { "" }
    );
    outln!();
    print_results(&results);
    write_results(&results, &text, staging, m.no_plots, &m.out)
}

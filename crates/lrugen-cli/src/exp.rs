// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen exp FILE --out DIR [--threads N]`: run an experiment file, print its table, write its
//! results and plots.

use clap::Args;
use lrugen::experiment::{self, output, plot, ExpError, Experiment};
use std::path::PathBuf;

/// Arguments of `lrugen exp`.
#[derive(Args)]
pub struct ExpArgs {
    /// The experiment file (TOML; see docs/experiments.md).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Directory for results.json, results.csv, summary.csv and the plots (created if needed).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Worker threads (default: one per core). The results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Write no plots.
    #[arg(long)]
    pub no_plots: bool,
}

/// Run `lrugen exp`.
pub fn cmd_exp(a: ExpArgs) -> Result<(), String> {
    if a.threads == Some(0) {
        return Err("--threads: expected at least 1 thread".into());
    }
    let exp = Experiment::from_file(&a.file).map_err(|e| e.to_string())?;
    if let Some(why) = &exp.skip {
        println!("{}: skipped: {why}", exp.name);
        return Ok(());
    }
    let cells = exp.points.len() * exp.variants.len() * exp.repetitions as usize;
    println!("experiment: {}", exp.name);
    if let Some(d) = &exp.description {
        println!("{d}");
    }
    println!(
        "{} sweep point(s) x {} policies x {} repetition(s) = {cells} runs; baseline {}, metric {}\n",
        exp.points.len(),
        exp.variants.len(),
        exp.repetitions,
        exp.variants[exp.baseline].label,
        exp.metric
    );
    let pb = indicatif::ProgressBar::with_draw_target(Some(cells as u64), indicatif::ProgressDrawTarget::stderr());
    pb.set_style(
        indicatif::ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} runs (eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_prefix("exp");
    let progress = |done: usize, _total: usize| pb.set_position(done as u64);
    let results = experiment::run(&exp, a.threads, &progress).map_err(|e| e.to_string());
    pb.finish_and_clear();
    let results = results?;
    print!("{}", output::table(&results));
    for c in &results.cells {
        if let Some(e) = &c.error {
            println!(
                "cell {} ({}, repetition {}): stopped early: {e}",
                c.cell.index, c.policy, c.cell.repetition
            );
        }
    }
    output::write_files(&results, &a.out).map_err(|e| e.to_string())?;
    let mut written = vec!["results.json", "results.csv", "summary.csv"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    let benches = results.cells.iter().filter(|c| c.bench.is_some()).count();
    if benches > 0 {
        written.push(format!("bench/ ({benches} reports as the benchmark prints them)"));
    }
    if !a.no_plots {
        match plot::write_plots(&results, &a.out) {
            Ok(files) => written.push(format!("{} plots (SVG and PNG)", files.len())),
            Err(ExpError::NoFont(why)) => eprintln!("lrugen: warning: plots skipped: {why}"),
            Err(e) => return Err(e.to_string()),
        }
    }
    println!("\nwrote {}: {}", a.out.display(), written.join(", "));
    Ok(())
}

// SPDX-License-Identifier: GPL-2.0-only
//! An experiment's results as files and as a table: `results.json` (every cell and the
//! summaries), `results.csv` (one row per cell), `summary.csv` (one row per sweep point, policy
//! and metric), and the terminal table. Nothing in them depends on the time or on the threads,
//! and floats are written in Rust's shortest round-trip form, so the same experiment gives the
//! same bytes.

use super::runner::Results;
use super::spec::METRICS;
use super::stats::Summary;
use super::ExpError;
use crate::report::thousands;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Quote a CSV field if it needs it (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_line(fields: &[String]) -> String {
    let mut l = fields.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(",");
    l.push('\n');
    l
}

fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(num).unwrap_or_default()
}

/// The metric columns of `results.csv`: the known metrics in their order, then any other in
/// alphabetical order.
fn metric_columns(r: &Results) -> Vec<String> {
    let mut cols: Vec<String> = METRICS.iter().map(|s| s.to_string()).collect();
    let mut extra: Vec<&String> = r
        .cells
        .iter()
        .flat_map(|c| c.metrics.keys())
        .filter(|k| !METRICS.contains(&k.as_str()))
        .collect();
    extra.sort();
    extra.dedup();
    cols.extend(extra.into_iter().cloned());
    cols
}

/// `results.json`.
pub fn json(r: &Results) -> Result<String, ExpError> {
    let mut s = serde_json::to_string_pretty(r).map_err(|e| ExpError::Run(format!("JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// `results.csv`: one row per cell. Columns: `cell`, `point`, one per swept parameter, `policy`,
/// `kind`, `profile`, `repetition`, `seed`, `error`, then the metrics (empty where a policy has
/// none).
pub fn results_csv(r: &Results) -> String {
    let e = &r.experiment;
    let cols = metric_columns(r);
    let mut head: Vec<String> = vec!["cell".into(), "point".into()];
    head.extend(e.sweep.iter().map(|s| s.path.clone()));
    head.extend(["policy", "kind", "profile", "repetition", "seed", "error"].map(String::from));
    head.extend(cols.iter().cloned());
    let mut out = csv_line(&head);
    // Every cell of the matrix in index order: an interrupted run's missing cells are rows with
    // no metrics and an error saying so.
    let mut done = r.cells.iter().peekable();
    for cell in e.cells() {
        let c = done.next_if(|c| c.cell.index == cell.index);
        if c.is_none() && r.interrupted.is_none() {
            continue;
        }
        let v = &e.variants[cell.variant];
        let mut row = vec![cell.index.to_string(), cell.point.to_string()];
        row.extend(e.points[cell.point].params.iter().map(|p| p.1.clone()));
        row.push(v.label.clone());
        row.push(v.policy.name().into());
        row.push(v.profile.map(|p| p.label()).unwrap_or_default());
        row.push(cell.repetition.to_string());
        row.push(cell.seed.to_string());
        match c {
            Some(c) => {
                row.push(c.error.clone().unwrap_or_default());
                row.extend(
                    cols.iter()
                        .map(|k| c.metrics.get(k).map(|v| num(*v)).unwrap_or_default()),
                );
            }
            None => {
                row.push(MISSING.into());
                row.extend(cols.iter().map(|_| String::new()));
            }
        }
        out.push_str(&csv_line(&row));
    }
    out
}

/// The `error` of a cell an interrupted run did not finish, in `results.csv`.
pub const MISSING: &str = "missing: the run was interrupted before this cell finished (--resume runs it)";

/// `summary.csv`: one row per (point, policy, metric): `n`, `mean`, `sd`, `ci95` (half-width),
/// and against the baseline `diff`, `diff_ci95`, `df`, `p`, `rel_pct`, `rel_ci95_pct`.
pub fn summary_csv(r: &Results) -> String {
    let e = &r.experiment;
    let mut head: Vec<String> = vec!["point".into()];
    head.extend(e.sweep.iter().map(|s| s.path.clone()));
    head.extend(
        [
            "policy",
            "metric",
            "n",
            "mean",
            "sd",
            "ci95",
            "baseline",
            "diff",
            "diff_ci95",
            "df",
            "p",
            "rel_pct",
            "rel_ci95_pct",
        ]
        .map(String::from),
    );
    let mut out = csv_line(&head);
    let base = &r.baseline().label;
    for s in &r.summaries {
        let mut row = vec![s.point.to_string()];
        row.extend(e.points[s.point].params.iter().map(|p| p.1.clone()));
        row.push(s.policy.clone());
        row.push(s.metric.clone());
        row.push(s.summary.n.to_string());
        row.push(num(s.summary.mean));
        row.push(opt(s.summary.sd));
        row.push(opt(s.summary.ci95));
        row.push(base.clone());
        match &s.vs_baseline {
            Some(d) => {
                row.extend([
                    num(d.diff),
                    opt(d.ci95),
                    opt(d.df),
                    opt(d.p),
                    opt(d.rel_pct),
                    opt(d.rel_ci95_pct),
                ]);
            }
            None => row.extend(std::iter::repeat_n(String::new(), 6)),
        }
        out.push_str(&csv_line(&row));
    }
    out
}

/// The HTML report of finished results (`index.html`, [`crate::report::html`]): the experiment's
/// name, description and notes, the results table, the cells that stopped early, the plots among
/// `plots` (files in `dir`) inline, or why there are none (`no_plots`), the command that
/// reproduces the results, and the experiment file's text (`settings`). Nothing in it depends on
/// where the results were written, on the threads, or on sharding.
pub fn report_page(
    r: &Results,
    settings: &str,
    dir: &Path,
    plots: &[PathBuf],
    no_plots: Option<&str>,
) -> Result<crate::report::html::Page, ExpError> {
    use crate::report::html::{shell_word, Block, Page};
    let e = &r.experiment;
    let mut page = Page::new(format!("lrugen exp: {}", e.name));
    if let Some(d) = &e.description {
        page.push(Block::Para(d.clone()));
    }
    for n in &e.notes {
        page.push(Block::Para(format!("Note: {n}")));
    }
    page.push(Block::Heading("Results".into()));
    page.push(Block::Para(format!(
        "{} sweep point(s) x {} policies x {} repetition(s) = {} runs, seed {}; baseline {}, metric {}{}. \
         Each value is the mean over the repetitions with its 95% confidence interval; the last column is \
         the difference of the metric from the baseline's, with its 95% interval by Welch's t-test.",
        e.points.len(),
        e.variants.len(),
        e.repetitions,
        r.cells.len(),
        e.seed,
        r.baseline().label,
        e.metric,
        if e.full { " (full size: [full])" } else { "" }
    )));
    let t = table_parts(r);
    page.push(Block::Table {
        head: t.head,
        rows: t.rows,
        left: t.left,
    });
    for n in t.notes {
        page.push(Block::Para(n));
    }
    for c in r.cells.iter().filter(|c| c.error.is_some()) {
        page.push(Block::Para(format!(
            "cell {} ({}, repetition {}): stopped early: {}",
            c.cell.index,
            c.policy,
            c.cell.repetition,
            c.error.as_deref().unwrap_or_default()
        )));
    }
    page.push(Block::Heading("Plots".into()));
    match no_plots {
        Some(why) => {
            page.push(Block::Para(format!("No plots: {why}.")));
        }
        None => {
            page.push_svgs(dir, plots)
                .map_err(|err| ExpError::Io(format!("{}: {err}", dir.display())))?;
        }
    }
    page.push(Block::Heading("Reproduce".into()));
    let file = e.file.to_string_lossy();
    page.push(Block::Pre(format!(
        "lrugen exp {}{} --out DIR",
        shell_word(&file),
        if e.full { " --full" } else { "" }
    )));
    page.push(Block::Para(format!(
        "lrugen {}. The same experiment file gives the same results, byte for byte, whatever --threads, \
         however often the run was interrupted and resumed (--resume), and when run as slices \
         (--shard K/N) merged by lrugen exp merge. DIR also holds results.json (every cell, its metrics \
         and series), results.csv, summary.csv and the plots as SVG and PNG.",
        super::outdir::VERSION
    )));
    page.push(Block::Heading(format!("Settings: {file}")));
    page.push(Block::Pre(settings.to_string()));
    Ok(page)
}

/// Write `results.json`, `results.csv` and `summary.csv` into `dir` (created if needed), and for
/// engine runs `bench/pPOINT-POLICY-rREP.txt`, each run's report as its benchmark prints it.
pub fn write_files(r: &Results, dir: &Path) -> Result<(), ExpError> {
    let io = |path: &Path, e: std::io::Error| ExpError::Io(format!("{}: {e}", path.display()));
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    for (name, text) in [
        ("results.json", json(r)?),
        ("results.csv", results_csv(r)),
        ("summary.csv", summary_csv(r)),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| io(&p, e))?;
    }
    // each engine run's report as its benchmark prints it
    if r.cells.iter().any(|c| c.bench.is_some()) {
        let b = dir.join("bench");
        std::fs::create_dir_all(&b).map_err(|e| io(&b, e))?;
        for c in &r.cells {
            if let Some(text) = &c.bench {
                let p = b.join(format!("p{}-{}-r{}.txt", c.cell.point, c.policy, c.cell.repetition));
                std::fs::write(&p, text).map_err(|e| io(&p, e))?;
            }
        }
    }
    Ok(())
}

/// A duration of `ns` nanoseconds with three significant digits in the unit that keeps them
/// (`950 ns`, `81.2 µs`, `1.23 ms`, `12.0 s`), and `ci` (ns), if any, at the same precision.
pub fn duration_text(ns: f64, ci: Option<f64>) -> String {
    let (scale, unit) = match ns.abs() {
        x if x < 999.5 => (1.0, "ns"),
        x if x < 999_500.0 => (1e3, "µs"),
        x if x < 999_500_000.0 => (1e6, "ms"),
        _ => (1e9, "s"),
    };
    let v = ns / scale;
    let decimals = match v.abs() {
        x if x >= 99.95 || scale == 1.0 => 0,
        x if x >= 9.995 => 1,
        _ => 2,
    };
    match ci {
        Some(c) if c > 0.0 => format!("{v:.decimals$} ± {:.decimals$} {unit}", c / scale),
        _ => format!("{v:.decimals$} {unit}"),
    }
}

/// A metric's mean ± CI as a table cell.
fn cell_text(metric: &str, s: &Summary) -> String {
    // times: three significant digits in their own unit
    let time_scale = if metric.ends_with("_us") {
        Some(1e3)
    } else if metric.ends_with("_ms") {
        Some(1e6)
    } else {
        None
    };
    if let Some(k) = time_scale {
        return duration_text(s.mean * k, s.ci95.map(|c| c * k));
    }
    if metric == "hit_ratio" {
        match s.ci95 {
            Some(c) => format!("{:.2}% ± {:.2}", s.mean * 100.0, c * 100.0),
            None => format!("{:.2}%", s.mean * 100.0),
        }
    } else {
        let m = thousands(s.mean.round() as i64);
        match s.ci95 {
            // the same in every repetition (e.g. the accesses of a fixed-length workload)
            Some(0.0) => m,
            Some(c) => format!("{m} ± {}", thousands(c.round() as i64)),
            None => m,
        }
    }
}

/// The cells of the results table ([`table`], and the HTML report's): its header, its rows, how
/// many leading columns are labels (left-aligned; the others are numbers), and the notes printed
/// under it.
#[derive(Clone, Debug, PartialEq)]
pub struct TableParts {
    /// Column names.
    pub head: Vec<String>,
    /// One row per sweep point × policy.
    pub rows: Vec<Vec<String>>,
    /// Leading label columns.
    pub left: usize,
    /// Notes under the table, each a line.
    pub notes: Vec<String>,
}

/// The terminal table: one row per sweep point × policy, with the mean ± 95% CI of the main
/// metrics and the difference of the experiment's metric from the baseline.
pub fn table(r: &Results) -> String {
    let TableParts {
        head,
        rows,
        left,
        notes,
    } = table_parts(r);
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, c) in row.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            if i > 0 {
                out.push_str("  ");
            }
            if i < left {
                let _ = write!(out, "{c}{}", " ".repeat(pad));
            } else {
                let _ = write!(out, "{}{c}", " ".repeat(pad));
            }
        }
        out.push('\n');
    };
    line(&head);
    for row in &rows {
        line(row);
    }
    for n in notes {
        out.push_str(&n);
        out.push('\n');
    }
    out
}

/// The results table's cells ([`TableParts`]).
pub fn table_parts(r: &Results) -> TableParts {
    let e = &r.experiment;
    // accesses = hits + minor faults + misses, hit ratio = hits / accesses: the columns
    // reconcile (minor faults shown wherever a run had any).
    let mut metrics: Vec<&str> = vec![
        "iops",
        "clat_p99_us",
        "accesses",
        "hit_ratio",
        "minor_faults",
        "misses",
        "refaults",
        "pgscan",
        "pswpout",
    ];
    if !metrics.contains(&e.metric.as_str()) {
        metrics.push(&e.metric);
    }
    // Drop columns no cell has (e.g. pswpout without swap).
    metrics.retain(|m| {
        r.summaries
            .iter()
            .any(|s| s.metric == *m && (s.summary.mean != 0.0 || *m == e.metric || *m == "hit_ratio"))
    });
    let base = &r.baseline().label;
    let mut head: Vec<String> = Vec::new();
    let swept = !e.sweep.is_empty();
    if swept {
        head.push("point".into());
    }
    head.push("policy".into());
    head.push("n".into());
    head.extend(metrics.iter().map(|m| m.replace('_', " ")));
    head.push(format!("Δ {} vs {base}", e.metric.replace('_', " ")));
    let mut rows: Vec<Vec<String>> = Vec::new();
    for p in &e.points {
        for v in &e.variants {
            let mut row = Vec::new();
            if swept {
                row.push(p.label());
            }
            row.push(v.label.clone());
            let n = r
                .cells
                .iter()
                .filter(|c| c.cell.point == p.index && c.policy == v.label)
                .count();
            row.push(if n == e.repetitions as usize {
                n.to_string()
            } else {
                format!("{n} of {}", e.repetitions)
            });
            for m in &metrics {
                row.push(
                    r.summary(p.index, &v.label, m)
                        .map_or_else(|| "-".into(), |s| cell_text(m, &s.summary)),
                );
            }
            let d = r
                .summary(p.index, &v.label, &e.metric)
                .and_then(|s| s.vs_baseline.as_ref());
            row.push(match d {
                _ if v.label == *base => "(baseline)".into(),
                Some(d) => d.format_relative(),
                None => "-".into(),
            });
            rows.push(row);
        }
    }
    let left = if swept { 2 } else { 1 };
    let mut notes = Vec::new();
    if let Some(note) = short_run_note(r) {
        notes.extend(note.lines().map(String::from));
    }
    if metrics.contains(&"minor_faults") {
        notes.push(
            "accesses = hits + minor faults (no I/O: first touch, a whole-page write, a page found in the \
             swap cache) + misses (major faults); hit ratio = hits / accesses"
                .into(),
        );
    }
    TableParts {
        head,
        rows,
        left,
        notes,
    }
}

/// A warning when classic-LRU runs ended before the memcg statistics' first periodic flush
/// (`FLUSH_TIME_NS`, 2 s of virtual time) under a profile whose reclaim flushes only
/// rate-limited (`reclaim_ratelimited_stats_flush`, 6.12 on): the classic LRU's list balance and
/// refault distance then read the memcg's statistics as they were at its creation all run long,
/// which a real run, lasting minutes, never does.
fn short_run_note(r: &Results) -> Option<String> {
    let e = &r.experiment;
    let limit = crate::mm::rstat::FLUSH_TIME_NS as f64 / 1e9;
    let mut short: Vec<(String, f64)> = Vec::new();
    for p in &e.points {
        if !p.config.mglru.profile.switches.reclaim_ratelimited_stats_flush {
            continue;
        }
        for v in e
            .variants
            .iter()
            .filter(|v| v.policy == crate::sim::PolicyKind::Classic)
        {
            for c in r
                .cells
                .iter()
                .filter(|c| c.cell.point == p.index && c.policy == v.label)
            {
                if let Some(&t) = c.metrics.get("virtual_s") {
                    if t < limit {
                        short.push((v.label.clone(), t));
                    }
                }
            }
        }
    }
    if short.is_empty() {
        return None;
    }
    let max = short.iter().map(|x| x.1).fold(0.0, f64::max);
    Some(format!(
        "note: {} {} run(s) lasted under {limit} s of virtual time (longest {max:.2} s), less than the period of \
         the memcg statistics flush: from 6.12 the classic LRU read its memcg's statistics as at creation \
         all run long (a scale artefact, not the kernel's behaviour over a real run; docs/mglru-fg.md)\n",
        short.len(),
        short[0].0
    ))
}

#[cfg(test)]
mod tests {
    use super::duration_text;

    /// Three significant digits in the unit that keeps them, the CI at the mean's precision.
    #[test]
    fn durations_keep_three_significant_digits() {
        for (ns, ci, want) in [
            (950.0, None, "950 ns"),
            (999.4, None, "999 ns"),
            (999.6, None, "1.00 µs"),
            (1_234.0, None, "1.23 µs"),
            (81_234.0, Some(456.0), "81.2 ± 0.5 µs"),
            (181_000.0, Some(0.0), "181 µs"),
            (1_234_567.0, Some(12_345.0), "1.23 ± 0.01 ms"),
            (12_000_000_000.0, None, "12.0 s"),
            (0.0, None, "0 ns"),
        ] {
            assert_eq!(duration_text(ns, ci), want, "{ns}");
        }
    }
}

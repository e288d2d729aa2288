// SPDX-License-Identifier: GPL-2.0-only
//! The report of a fidelity matrix (`lrugen kernel --matrix FILE.toml`): scenarios × kernels ×
//! policies, each cell booted `repeats` times and replayed once on the model, each counter of a
//! cell the model's value beside the kernel's mean over the boots, their range (the kernel's
//! run-to-run spread), the difference, and whether it is inside the spread plus
//! [`fidelity::SPREAD_MARGIN`] ([`fidelity::SpreadCheck`], as the multi-task fixtures are
//! checked). Written as a terminal table (`table.txt`), `matrix.json`, `matrix.csv`, one plot per
//! counter (SVG: the difference of each cell as a dot, its tolerance as a whisker) and
//! `index.html` through [`lrugen::report::html`]. Everything here is a function of the cells: no
//! date, no path, no wall clock, so the same results give the same files.

use crate::fidelity::{self, SpreadCheck};
use crate::Error;
use lrugen::experiment::plot::{draw_delta, Bar};
use lrugen::report::html::{Block, Page, INDEX};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One counter of a cell: the model against the kernel's boots.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Counter {
    /// `misses`, `minor`, `workingset_refault_anon`, `workingset_refault_file`, `pgscan`,
    /// `pgscan_by_reclaimer`, `pswpout`, `task N misses`.
    pub counter: String,
    /// The model's value.
    pub model: u64,
    /// The kernel's value of each boot, in boot order.
    pub kernel: Vec<u64>,
    /// Their mean.
    pub kernel_mean: f64,
    /// Their population standard deviation.
    pub kernel_stddev: f64,
    /// The smallest.
    pub kernel_min: u64,
    /// The largest.
    pub kernel_max: u64,
    /// The kernel's run-to-run spread, (largest − smallest) / smallest, percent.
    pub spread_pct: f64,
    /// (model − kernel mean) / kernel mean, percent; None when the mean is 0 and the model not.
    pub diff_pct: Option<f64>,
    /// The tolerance, percent: the spread plus [`fidelity::SPREAD_MARGIN`].
    pub tolerance_pct: f64,
    /// The tolerance in events is at least this many.
    pub floor: u64,
    /// The model within the tolerance of every boot.
    pub within: bool,
}

impl Counter {
    /// From a check of [`fidelity::compare_runs`].
    pub fn of(c: &SpreadCheck) -> Counter {
        let n = c.kernel.len().max(1) as f64;
        let mean = c.kernel.iter().sum::<u64>() as f64 / n;
        let var = c.kernel.iter().map(|&k| (k as f64 - mean).powi(2)).sum::<f64>() / n;
        let d = c.diff_pct();
        Counter {
            counter: c.what.clone(),
            model: c.model,
            kernel: c.kernel.clone(),
            kernel_mean: round(mean, 3),
            kernel_stddev: round(var.sqrt(), 3),
            kernel_min: c.kernel.iter().copied().min().unwrap_or(0),
            kernel_max: c.kernel.iter().copied().max().unwrap_or(0),
            spread_pct: round(c.spread * 100.0, 3),
            diff_pct: d.is_finite().then(|| round(d, 3)),
            tolerance_pct: round(c.tolerance * 100.0, 3),
            floor: c.floor,
            within: c.ok,
        }
    }

    /// Both sides 0 on every boot: nothing to show.
    pub fn all_zero(&self) -> bool {
        self.model == 0 && self.kernel.iter().all(|&k| k == 0)
    }
}

/// `x` rounded to `digits` decimals (so that the JSON does not carry float noise).
fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

/// One cell: a scenario on one kernel series under one policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The scenario's name.
    pub scenario: String,
    /// The kernel series (`6.1`, `6.12`, `7.2`).
    pub series: String,
    /// `mglru` or `classic`.
    pub policy: String,
    /// The `lrugen kernel` command one boot of the cell equals.
    pub command: String,
    /// `uname -r` of the guest.
    pub release: String,
    /// The model's preset for that kernel.
    pub model_profile: String,
    /// Boots of the kernel.
    pub boots: usize,
    /// The counters, misses first.
    pub counters: Vec<Counter>,
}

impl Cell {
    /// `scenario series policy`.
    pub fn label(&self) -> String {
        format!("{} {} {}", self.scenario, self.series, self.policy)
    }
}

/// The whole matrix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatrixReport {
    /// The matrix's name.
    pub name: String,
    /// What it shows, if the file says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The matrix file, as given.
    pub file: String,
    /// Boots of each cell.
    pub repeats: u32,
    /// The margin added to the spread, percent.
    pub margin_pct: f64,
    /// The cells, in the matrix's order (scenario, then series, then policy).
    pub cells: Vec<Cell>,
}

/// The counters plotted, each when some cell has it non-zero.
const PLOTTED: [&str; 4] = ["misses", "workingset_refault_file", "workingset_refault_anon", "pgscan"];

impl MatrixReport {
    /// A report of `cells`.
    pub fn new(name: &str, description: Option<String>, file: &str, repeats: u32, cells: Vec<Cell>) -> Self {
        MatrixReport {
            name: name.to_string(),
            description,
            file: file.to_string(),
            repeats,
            margin_pct: round(fidelity::SPREAD_MARGIN * 100.0, 3),
            cells,
        }
    }

    /// `(within, compared)`: the counters inside their tolerance, of those not zero on both sides.
    pub fn score(&self) -> (usize, usize) {
        let all = self.cells.iter().flat_map(|c| &c.counters).filter(|c| !c.all_zero());
        all.fold((0, 0), |(w, n), c| (w + usize::from(c.within), n + 1))
    }

    /// The rows of the table: one per cell and counter not zero on both sides.
    fn rows(&self) -> Vec<Vec<String>> {
        let mut rows = Vec::new();
        for cell in &self.cells {
            for c in cell.counters.iter().filter(|c| !c.all_zero()) {
                rows.push(vec![
                    cell.scenario.clone(),
                    cell.series.clone(),
                    cell.policy.clone(),
                    c.counter.clone(),
                    c.model.to_string(),
                    format!("{:.1}", c.kernel_mean),
                    format!("{}–{}", c.kernel_min, c.kernel_max),
                    format!("{:.1}", c.kernel_stddev),
                    format!("{:.1}%", c.spread_pct),
                    c.diff_pct.map_or("inf".into(), |d| format!("{d:+.1}%")),
                    if c.spread_pct > fidelity::MAX_SPREAD * 100.0 {
                        // not repeatable: the boots' range is the check
                        if c.floor > 0 {
                            format!("range ± {}", c.floor)
                        } else {
                            "range".into()
                        }
                    } else if c.floor > 0 {
                        format!("±{:.1}% or {}", c.tolerance_pct, c.floor)
                    } else {
                        format!("±{:.1}%", c.tolerance_pct)
                    },
                    if c.within { "yes" } else { "NO" }.into(),
                ]);
            }
        }
        rows
    }

    const HEAD: [&'static str; 12] = [
        "scenario",
        "kernel",
        "policy",
        "counter",
        "model",
        "kernel mean",
        "kernel min–max",
        "stddev",
        "spread",
        "diff",
        "tolerance",
        "within",
    ];

    /// The terminal table: a heading, the score, one line per cell and counter.
    pub fn table(&self) -> String {
        let rows = self.rows();
        let head: Vec<String> = Self::HEAD.iter().map(|s| s.to_string()).collect();
        let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |r: &[String]| {
            let mut s = String::new();
            for (i, c) in r.iter().enumerate() {
                let pad = w[i] - c.chars().count();
                if i < 4 {
                    s.push_str(c);
                    s.push_str(&" ".repeat(pad));
                } else {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                }
                if i + 1 < r.len() {
                    s.push_str("  ");
                }
            }
            s.trim_end().to_string()
        };
        let mut s = String::new();
        let (within, n) = self.score();
        let wild = self
            .cells
            .iter()
            .flat_map(|c| &c.counters)
            .any(|c| c.spread_pct > fidelity::MAX_SPREAD * 100.0);
        let _ = writeln!(
            s,
            "Fidelity matrix {}: {} cell{}, {} boot{} each; the model against the kernel's mean, \
             within the kernel's spread + {:.0}% of every boot{}: {within} of {n} counters",
            self.name,
            self.cells.len(),
            if self.cells.len() == 1 { "" } else { "s" },
            self.repeats,
            if self.repeats == 1 { "" } else { "s" },
            self.margin_pct,
            if wild {
                format!(
                    " (within their range where they spread over {:.0}%)",
                    fidelity::MAX_SPREAD * 100.0
                )
            } else {
                String::new()
            }
        );
        let _ = writeln!(s, "{}", line(&head));
        for r in &rows {
            let _ = writeln!(s, "{}", line(r));
        }
        s
    }

    /// `matrix.csv`: one line per cell and counter (zeros included), the boots' values joined
    /// by `/`.
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "scenario,series,policy,release,counter,model,kernel,kernel_mean,kernel_stddev,kernel_min,kernel_max,\
             spread_pct,diff_pct,tolerance_pct,floor,within\n",
        );
        for cell in &self.cells {
            for c in &cell.counters {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    csv_field(&cell.scenario),
                    csv_field(&cell.series),
                    csv_field(&cell.policy),
                    csv_field(&cell.release),
                    csv_field(&c.counter),
                    c.model,
                    c.kernel.iter().map(u64::to_string).collect::<Vec<_>>().join("/"),
                    c.kernel_mean,
                    c.kernel_stddev,
                    c.kernel_min,
                    c.kernel_max,
                    c.spread_pct,
                    c.diff_pct.map_or(String::new(), |d| d.to_string()),
                    c.tolerance_pct,
                    c.floor,
                    c.within
                );
            }
        }
        s
    }

    /// The plot of one counter: per cell (where it is not zero on both sides) the difference
    /// from the kernel's mean, percent, with the tolerance as the whisker.
    fn bars(&self, counter: &str) -> Vec<Bar> {
        let mut v = Vec::new();
        for cell in &self.cells {
            if let Some(c) = cell.counters.iter().find(|c| c.counter == counter && !c.all_zero()) {
                if let Some(d) = c.diff_pct {
                    v.push((cell.label(), d, Some(c.tolerance_pct)));
                }
            }
        }
        v
    }

    /// Write `table.txt`, `matrix.json`, `matrix.csv` and the plots (`diff-COUNTER.svg`) into
    /// `dir`; the plots are skipped (and why returned) without a font. Returns the files.
    pub fn write(&self, dir: &Path) -> Result<(Vec<PathBuf>, Option<String>), Error> {
        let io = |p: &Path, e: std::io::Error| Error::Io(format!("{}: {e}", p.display()));
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let mut out = Vec::new();
        let json = serde_json::to_string_pretty(self).map_err(|e| Error::Io(e.to_string()))? + "\n";
        for (name, text) in [
            ("table.txt", self.table()),
            ("matrix.json", json),
            ("matrix.csv", self.csv()),
        ] {
            let p = dir.join(name);
            std::fs::write(&p, text).map_err(|e| io(&p, e))?;
            out.push(p);
        }
        if let Err(e) = lrugen::experiment::plot::ensure_font() {
            return Ok((out, Some(e)));
        }
        for counter in PLOTTED {
            let bars = self.bars(counter);
            if bars.is_empty() {
                continue;
            }
            let p = dir.join(format!("diff-{counter}.svg"));
            // room for a label such as `anon-gauss 6.12 classic` under each cell
            let size = ((bars.len() as u32 * 150).max(640), 480);
            let title = format!(
                "{counter}: model − kernel mean, % (whisker: ± the kernel's spread + {:.0}%; within when it crosses 0)",
                self.margin_pct
            );
            let area = SVGBackend::new(&p, size).into_drawing_area();
            draw_delta(&area, &title, ("cell", "difference, %"), "%", &bars)
                .map_err(|e| Error::Io(format!("{}: {e}", p.display())))?;
            drop(area);
            out.push(p);
        }
        Ok((out, None))
    }

    /// The report to share: the matrix, the score, the table, the plots among `files` (in `dir`)
    /// inline, each cell's command, and `command`, the command that reproduces it.
    pub fn page(&self, command: &str, dir: &Path, files: &[PathBuf]) -> Result<Page, Error> {
        let mut page = Page::new(format!("lrugen kernel --matrix: {}", self.name));
        if let Some(d) = &self.description {
            page.push(Block::Para(d.clone()));
        }
        let uniq = |f: &dyn Fn(&Cell) -> &str| {
            let mut v: Vec<&str> = Vec::new();
            for c in &self.cells {
                if !v.contains(&f(c)) {
                    v.push(f(c));
                }
            }
            v.join(", ")
        };
        let (within, n) = self.score();
        page.push(Block::Heading("Matrix".into()));
        page.push(Block::Pairs(vec![
            ("matrix file".into(), self.file.clone()),
            ("scenarios".into(), uniq(&|c| &c.scenario)),
            ("kernel series".into(), uniq(&|c| &c.series)),
            ("kernel releases".into(), uniq(&|c| &c.release)),
            ("policies".into(), uniq(&|c| &c.policy)),
            ("boots per cell".into(), self.repeats.to_string()),
            (
                "tolerance".into(),
                format!("the kernel's spread (max − min) / min + {:.0}%", self.margin_pct),
            ),
            ("counters within tolerance".into(), format!("{within} of {n}")),
        ]));
        page.push(Block::Heading("Model against kernel".into()));
        page.push(Block::Para(
            "Per cell and counter (those zero on both sides left out): the model's value, the kernel's mean, \
             range and standard deviation over the boots, the spread (max − min) / min, the difference \
             (model − mean) / mean, and whether the model is within the spread plus the margin of every boot."
                .into(),
        ));
        page.push(Block::Table {
            head: Self::HEAD.iter().map(|s| s.to_string()).collect(),
            rows: self.rows(),
            left: 4,
        });
        page.push_plots(dir, files)
            .map_err(|e| Error::Io(format!("{}: {e}", dir.display())))?;
        page.push(Block::Heading("Cells".into()));
        page.push(Block::Para(
            "Each cell's boots equal this command, run once per boot:".into(),
        ));
        page.push(Block::Pre(
            self.cells
                .iter()
                .map(|c| c.command.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ));
        page.push(Block::Heading("Reproduce".into()));
        page.push(Block::Pre(command.to_string()));
        page.push(Block::Para(format!(
            "lrugen {}. The directory also holds table.txt, matrix.json and matrix.csv (this report's data) \
             and boots/ (everything each boot's guest reported, as `lrugen kernel --fixture` writes it).",
            lrugen::experiment::outdir::VERSION
        )));
        Ok(page)
    }

    /// Write [`MatrixReport::page`] as `dir/index.html`; returns its path.
    pub fn write_html(&self, command: &str, dir: &Path, files: &[PathBuf]) -> Result<PathBuf, Error> {
        self.page(command, dir, files)?
            .write(dir)
            .map_err(|e| Error::Io(format!("{}: {e}", dir.join(INDEX).display())))
    }
}

/// A CSV field, quoted when it needs to be.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two cells of synthetic boots: one inside the spread, one outside.
    fn synthetic() -> MatrixReport {
        let cell = |scenario: &str, policy: &str, checks: Vec<SpreadCheck>| Cell {
            scenario: scenario.into(),
            series: "6.1".into(),
            policy: policy.into(),
            command: format!("lrugen kernel --series 6.1 --lru {policy} --access file --accesses 1000"),
            release: "6.1.0-57-amd64".into(),
            model_profile: "v6.1".into(),
            boots: 2,
            counters: checks.iter().map(Counter::of).collect(),
        };
        let c = |w: &str, k: Vec<u64>, m: u64, floor: u64| SpreadCheck::new(w.into(), k, m, floor);
        MatrixReport::new(
            "synthetic",
            Some("two cells".into()),
            "m.toml",
            2,
            vec![
                cell(
                    "zipf",
                    "mglru",
                    vec![
                        c("misses", vec![1000, 1010], 1015, 0),
                        c("minor", vec![0, 0], 0, 50),
                        c("pgscan", vec![400, 420], 300, 50),
                    ],
                ),
                cell(
                    "zipf",
                    "classic",
                    vec![c("misses", vec![900, 900], 990, 0), c("pswpout", vec![0, 0], 7, 50)],
                ),
            ],
        )
    }

    #[test]
    fn the_table_and_csv_of_synthetic_cells() {
        let r = synthetic();
        assert_eq!(r.score(), (2, 4));
        let expected = "\
Fidelity matrix synthetic: 2 cells, 2 boots each; the model against the kernel's mean, within the kernel's spread + 2% of every boot: 2 of 4 counters
scenario  kernel  policy   counter  model  kernel mean  kernel min–max  stddev  spread    diff    tolerance  within
zipf      6.1     mglru    misses    1015       1005.0       1000–1010     5.0    1.0%   +1.0%        ±3.0%     yes
zipf      6.1     mglru    pgscan     300        410.0         400–420    10.0    5.0%  -26.8%  ±7.0% or 50      NO
zipf      6.1     classic  misses     990        900.0         900–900     0.0    0.0%  +10.0%        ±2.0%      NO
zipf      6.1     classic  pswpout      7          0.0             0–0     0.0    0.0%     inf  ±2.0% or 50     yes
";
        assert_eq!(r.table(), expected, "\n{}", r.table());
        let csv = r.csv();
        assert_eq!(csv.lines().count(), 1 + 5);
        assert_eq!(
            csv.lines().nth(1).unwrap(),
            "zipf,6.1,mglru,6.1.0-57-amd64,misses,1015,1000/1010,1005,5,1000,1010,1,0.995,3,0,true"
        );
        assert!(csv.contains("\nzipf,6.1,classic,6.1.0-57-amd64,pswpout,7,0/0,0,0,0,0,0,,2,50,true\n"));
    }

    #[test]
    fn the_json_round_trips_and_the_files_are_deterministic() {
        let r = synthetic();
        let text = serde_json::to_string_pretty(&r).unwrap();
        let back: MatrixReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for d in [a.path(), b.path()] {
            let (mut files, _) = r.write(d).unwrap();
            files.push(r.write_html("lrugen kernel --matrix m.toml", d, &files).unwrap());
        }
        let mut names: Vec<String> = std::fs::read_dir(a.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert!(names.starts_with(&["diff-misses.svg".to_string()]) || !names.iter().any(|n| n.ends_with(".svg")));
        for n in &names {
            assert_eq!(
                std::fs::read(a.path().join(n)).unwrap(),
                std::fs::read(b.path().join(n)).unwrap(),
                "{n}"
            );
        }
        let html = std::fs::read_to_string(a.path().join(INDEX)).unwrap();
        assert!(html.contains("lrugen kernel --matrix m.toml") && html.contains("2 of 4"));
    }
}

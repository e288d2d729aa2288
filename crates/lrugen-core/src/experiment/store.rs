// SPDX-License-Identifier: GPL-2.0-only
//! Finished cells persisted as they complete, in `cells/` of an experiment's partial directory
//! (one file a cell, `c<index>.json`, written to a temporary name and renamed, so that a file is
//! whole or absent), and read back by `--resume`. Floats are stored as their bit patterns, so a
//! resumed run's results are bit-identical to an uninterrupted one's.

use super::runner::{CellResult, Metrics, Series};
use super::spec::Experiment;
use super::ExpError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folder of the cell files in a partial directory.
pub const CELLS_DIR: &str = "cells";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    index: usize,
    point: usize,
    variant: usize,
    repetition: u32,
    seed: u64,
    policy: String,
    /// `f64::to_bits` of each metric.
    metrics: BTreeMap<String, u64>,
    /// `f64::to_bits` of each (x, y).
    series: BTreeMap<String, Vec<(u64, u64)>>,
    error: Option<String>,
    bench: Option<String>,
}

fn path_of(dir: &Path, index: usize) -> PathBuf {
    dir.join(CELLS_DIR).join(format!("c{index:06}.json"))
}

/// Persist a finished cell in `dir` (the partial directory).
pub fn save(dir: &Path, c: &CellResult) -> Result<(), ExpError> {
    let io = |p: &Path, e: std::io::Error| ExpError::Io(format!("{}: {e}", p.display()));
    let d = dir.join(CELLS_DIR);
    std::fs::create_dir_all(&d).map_err(|e| io(&d, e))?;
    let s = Stored {
        index: c.cell.index,
        point: c.cell.point,
        variant: c.cell.variant,
        repetition: c.cell.repetition,
        seed: c.cell.seed,
        policy: c.policy.clone(),
        metrics: c.metrics.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect(),
        series: c
            .series
            .iter()
            .map(|(k, v)| (k.clone(), v.iter().map(|p| (p.0.to_bits(), p.1.to_bits())).collect()))
            .collect(),
        error: c.error.clone(),
        bench: c.bench.clone(),
    };
    let text = serde_json::to_string(&s).map_err(|e| ExpError::Io(format!("cell {}: {e}", c.cell.index)))?;
    let p = path_of(dir, c.cell.index);
    let tmp = p.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, &p).map_err(|e| io(&p, e))
}

/// The cells persisted in `dir`, in index order, each checked against `exp`'s matrix. A file
/// that is not a cell of this experiment is an error naming it.
pub fn load(dir: &Path, exp: &Experiment) -> Result<Vec<CellResult>, ExpError> {
    let d = dir.join(CELLS_DIR);
    let cells = exp.cells();
    let mut out: Vec<CellResult> = Vec::new();
    let entries = match std::fs::read_dir(&d) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(ExpError::Io(format!("{}: {e}", d.display()))),
    };
    for e in entries {
        let e = e.map_err(|e| ExpError::Io(format!("{}: {e}", d.display())))?;
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tmp") {
            // a cell being written when the run stopped: it runs again
            let _ = std::fs::remove_file(&p);
            continue;
        }
        let bad = |why: String| {
            ExpError::Io(format!(
                "{}: {why}: expected a cell file lrugen wrote for this experiment (remove it to run that cell again)",
                p.display()
            ))
        };
        let text = std::fs::read_to_string(&p).map_err(|e| bad(e.to_string()))?;
        let s: Stored = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let Some(cell) = cells.get(s.index) else {
            return Err(bad(format!(
                "cell {} is not in the matrix of {} cells",
                s.index,
                cells.len()
            )));
        };
        if (cell.point, cell.variant, cell.repetition, cell.seed) != (s.point, s.variant, s.repetition, s.seed)
            || exp.variants[cell.variant].label != s.policy
            || p != path_of(dir, s.index)
        {
            return Err(bad(format!(
                "cell {} does not match the experiment's cell {}",
                s.index, s.index
            )));
        }
        let metrics: Metrics = s.metrics.into_iter().map(|(k, v)| (k, f64::from_bits(v))).collect();
        let series: Series = s
            .series
            .into_iter()
            .map(|(k, v)| {
                let pts = v
                    .into_iter()
                    .map(|(x, y)| (f64::from_bits(x), f64::from_bits(y)))
                    .collect();
                (k, pts)
            })
            .collect();
        out.push(CellResult {
            cell: cell.clone(),
            policy: s.policy,
            metrics,
            series,
            error: s.error,
            bench: s.bench,
        });
    }
    out.sort_by_key(|c| c.cell.index);
    Ok(out)
}

/// Remove the cell files (before the partial directory becomes the result).
pub fn remove(dir: &Path) -> Result<(), ExpError> {
    let d = dir.join(CELLS_DIR);
    match std::fs::remove_dir_all(&d) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ExpError::Io(format!("{}: {e}", d.display()))),
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! Experiments: a TOML file names the machine, the workload memcg, the workload, the policies and
//! MGLRU profiles, parameter sweeps, repetitions and a base seed ([`spec`]); the runner expands
//! the matrix into cells (sweep point × policy × repetition) and runs them in parallel, with the
//! same results whatever the number of threads ([`runner`]); the statistics give each metric's
//! mean and 95% confidence interval over repetitions and each policy's difference from a
//! baseline by Welch's t-test ([`stats`]); the results are written as JSON, CSV ([`output`]) and
//! plots ([`plot`]), into a directory written whole or not at all ([`outdir`]), the finished
//! cells persisted as they complete so that an interrupted run can be resumed ([`store`],
//! [`runner::run_with`]). `docs/experiments.md` describes the file format.
//!
//! ```no_run
//! use lrugen::experiment::{self, Experiment};
//! let exp = Experiment::from_file("examples/fio-zipf.toml".as_ref())?;
//! let results = experiment::run(&exp, None, &|_done, _total| {})?;
//! print!("{}", experiment::output::table(&results));
//! experiment::output::write_files(&results, "out".as_ref())?;
//! # Ok::<(), experiment::ExpError>(())
//! ```

pub mod outdir;
pub mod output;
pub mod plot;
pub mod runner;
pub mod size;
pub mod spec;
pub mod stats;
pub mod store;

pub use runner::{
    metrics_of, run, run_with, seed_for, Cell, CellResult, Drive, Interruption, Results, Shard, SummaryRow,
};
pub use spec::{Experiment, Point, PointConfig, SweepParam, Variant, METRICS, TIER_METRICS};

use std::path::PathBuf;

/// Why an experiment could not be read, run or written.
#[derive(Debug, Clone, PartialEq)]
pub enum ExpError {
    /// The experiment file is unreadable or malformed.
    Parse {
        /// The file.
        file: PathBuf,
        /// 1-based line, where it can be told.
        line: Option<usize>,
        /// 1-based column, where it can be told.
        column: Option<usize>,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A run could not start or broke (names the cell).
    Run(String),
    /// Writing the results failed.
    Io(String),
    /// No font for the plots' text.
    NoFont(String),
}

impl std::fmt::Display for ExpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExpError::Parse {
                file,
                line,
                column,
                message,
            } => {
                write!(f, "{}", file.display())?;
                if let Some(l) = line {
                    write!(f, ":{l}")?;
                    if let Some(c) = column {
                        write!(f, ":{c}")?;
                    }
                }
                write!(f, ": {message}")
            }
            ExpError::Run(m) | ExpError::Io(m) | ExpError::NoFont(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ExpError {}

// SPDX-License-Identifier: GPL-2.0-only
//! The library half of the `lrugen` command line: `lrugen run`'s options ([`run::RunArgs`]), how
//! they are checked and turned into runs ([`run::plan_run`]), and the parsers and checks they use.
//! The `lrugen` binary prints what these plan; the Python package (`crates/lrugen-py`) runs the
//! same plans, so that both take the same names and give the same messages. [`mrc`]: `lrugen
//! mrc`'s miss-ratio curves, each point a run of those plans.

pub mod checks;
pub mod fio;
pub mod memtier;
pub mod mrc;
pub mod run;
pub mod ycsb;

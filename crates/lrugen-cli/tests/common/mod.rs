// SPDX-License-Identifier: GPL-2.0-only
//! What the CLI test binaries share.

use std::process::{Command, Output};

/// Run the built `lrugen` with `args` (no backtraces, so that a panic's message is all there is).
pub fn lrugen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lrugen"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("run lrugen")
}

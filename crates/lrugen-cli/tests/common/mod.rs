// SPDX-License-Identifier: GPL-2.0-only
//! What the CLI test binaries share.

use std::path::Path;
use std::process::{Command, Output};

/// Run the built `lrugen` with `args` (no backtraces, so that a panic's message is all there is).
#[allow(dead_code)]
pub fn lrugen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lrugen"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("run lrugen")
}

/// The stdout of a run that must have succeeded (else its output, in the panic).
#[allow(dead_code)] // not every test binary uses every helper
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every file under `dir` with its bytes, relative paths sorted.
#[allow(dead_code)]
pub fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &Path, d: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

// SPDX-License-Identifier: GPL-2.0-only
//! Standard output that never panics. `println!` panics when stdout is a closed pipe
//! (`lrugen run --json | head`); these write through [`text`] instead, which stops printing quietly
//! once the reader has gone (the run goes on, so that files it writes are still written) and keeps
//! any other write error for `main` to report.

use std::io::{ErrorKind, Write};
use std::sync::Mutex;

/// The first error writing to stdout other than a broken pipe, or `Some(None)` after a broken
/// pipe (nothing more is printed either way).
static FAILED: Mutex<Option<Option<String>>> = Mutex::new(None);

/// Print `s` to stdout, unless an earlier write failed.
pub fn text(s: &str) {
    let mut failed = FAILED.lock().unwrap_or_else(|e| e.into_inner());
    if failed.is_some() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        *failed = Some((e.kind() != ErrorKind::BrokenPipe).then(|| e.to_string()));
    }
}

/// How writing to stdout went: `Err` with the error, other than a closed pipe (which is how a
/// reader such as `head` says it has read enough, and ends the output quietly).
pub fn status() -> Result<(), String> {
    match &*FAILED.lock().unwrap_or_else(|e| e.into_inner()) {
        Some(Some(e)) => Err(format!("writing to standard output: {e}")),
        _ => Ok(()),
    }
}

/// `print!` through [`text`].
macro_rules! out {
    ($($t:tt)*) => { $crate::out::text(&format!($($t)*)) };
}

/// `println!` through [`text`].
macro_rules! outln {
    () => { $crate::out::text("\n") };
    ($($t:tt)*) => { $crate::out::text(&format!("{}\n", format_args!($($t)*))) };
}

pub(crate) use {out, outln};

//! Locating the project's shared real traces from tests and benchmarks.
//!
//! The repository is cloned beside a `shared/` folder that holds real traces
//! (`shared/traces/arc/OLTP.lis.zst`, …). They are not part of the
//! repository; tests that need them call [`shared_trace`], which skips
//! politely on a developer machine without them and fails under CI.

use std::path::PathBuf;

/// The shared traces folder as seen from this crate:
/// `<repo>/crates/lrugen-trace/../../../shared/traces`. The environment
/// variable `LRUGEN_TRACES_DIR`, when set, takes precedence.
pub fn shared_traces_dir() -> PathBuf {
    match std::env::var_os("LRUGEN_TRACES_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces")),
    }
}

/// Whether the environment variable `CI` is `true`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// Where to get a missing shared trace.
fn source_hint(name: &str) -> &'static str {
    if name.starts_with("cloudphysics") || name.contains("oracleGeneral") {
        "the `data/` folder of the public GitHub repository 1a1a11a/libCacheSim"
    } else {
        "the `arc/` folder of the public GitHub repository moka-rs/cache-trace"
    }
}

/// The path of the shared trace `name` (relative to the traces folder, e.g.
/// `"arc/OLTP.lis.zst"` or `"cloudphysics/cloudPhysicsIO.oracleGeneral.bin"`),
/// or `None` after printing a note to stderr when it is missing, so that the
/// caller can return early (skip).
///
/// # Panics
/// When the trace is missing and the environment variable `CI` is `true`:
/// CI must run every test.
pub fn shared_trace(name: &str) -> Option<PathBuf> {
    let path = shared_traces_dir().join(name);
    if path.is_file() {
        return Some(path);
    }
    let msg = format!(
        "shared trace {name} is missing (looked for {}); get it from {} and put it \
         there, or set LRUGEN_TRACES_DIR (see shared/traces/README.md)",
        path.display(),
        source_hint(name)
    );
    if in_ci() {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    None
}

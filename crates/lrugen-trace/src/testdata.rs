//! Locating the project's shared real traces from tests and benchmarks.
//!
//! The repository is cloned beside a `shared/` folder that holds real traces
//! (`shared/traces/arc/OLTP.lis.zst`, …), or they are fetched from their
//! public sources with `lrugen traces fetch NAME` (into `./traces` of the
//! repository by default). They are not part of the repository. Tests that
//! need them skip visibly on a developer machine without them (with the
//! `harness` feature: `run_tests`, each such test reported as `ignored`
//! with its reason) and fail under `CI=true`.

use std::path::PathBuf;

/// The repository's root, as seen from this crate.
fn repo_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The folders searched for shared traces, in order: `$LRUGEN_TRACES_DIR`
/// alone when it is set; else `<repo>/../shared/traces` (the project's
/// shared folder) and `<repo>/traces` (where `lrugen traces fetch` puts them
/// when run from the repository's root).
pub fn shared_traces_dirs() -> Vec<PathBuf> {
    match std::env::var_os("LRUGEN_TRACES_DIR") {
        Some(dir) => vec![PathBuf::from(dir)],
        None => vec![repo_root().join("../shared/traces"), repo_root().join("traces")],
    }
}

/// The first folder of [`shared_traces_dirs`].
pub fn shared_traces_dir() -> PathBuf {
    shared_traces_dirs().swap_remove(0)
}

/// Whether the environment variable `CI` is `true`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// How to get the shared trace `name` (a path such as `arc/OLTP.lis.zst`):
/// the `lrugen traces fetch` command and the public source.
pub fn where_to_get(name: &str) -> String {
    let file = name.rsplit('/').next().unwrap_or(name);
    let (fetch, source) = if name.starts_with("cloudphysics") || name.contains("oracleGeneral") {
        let fetch = if file.ends_with(".csv") {
            "cloudphysics-csv"
        } else {
            "cloudphysics"
        };
        (
            fetch.to_string(),
            format!("data/{file} of the public GitHub repository 1a1a11a/libCacheSim (commit aa0fc40914b2)"),
        )
    } else {
        (
            file.split('.').next().unwrap_or(file).to_string(),
            format!("arc/{file} of the public GitHub repository moka-rs/cache-trace (commit ef0a9de8cf02)"),
        )
    };
    format!(
        "get it with `lrugen traces fetch {fetch}` (from the repository's root; or \
         `--dir DIR` and LRUGEN_TRACES_DIR=DIR), or from {source}"
    )
}

/// The path of the shared trace `name` (relative to the traces folder, e.g.
/// `"arc/OLTP.lis.zst"`), or why it cannot be had: where it was looked for
/// and where to get it.
pub fn find_shared_trace(name: &str) -> Result<PathBuf, String> {
    let dirs = shared_traces_dirs();
    for d in &dirs {
        let path = d.join(name);
        if path.is_file() {
            return Ok(path);
        }
    }
    let looked: Vec<String> = dirs.iter().map(|d| d.join(name).display().to_string()).collect();
    Err(format!(
        "shared trace {name} is missing (looked for {}); {}",
        looked.join(" and "),
        where_to_get(name)
    ))
}

/// The path of the shared trace `name`, or `None` after printing a note to
/// stderr when it is missing, so that the caller can return early (skip).
/// (The note is hidden by the test harness's output capture when the test
/// passes: tests use `run_tests`, which shows the skip; benchmarks, which
/// are not captured, use this.)
///
/// # Panics
/// When the trace is missing and the environment variable `CI` is `true`:
/// CI must run every test.
pub fn shared_trace(name: &str) -> Option<PathBuf> {
    match find_shared_trace(name) {
        Ok(p) => Some(p),
        Err(msg) if in_ci() => panic!("{msg}"),
        Err(msg) => {
            eprintln!("SKIPPED: {msg}");
            None
        }
    }
}

/// A test of a `harness = false` test binary that needs shared traces.
#[cfg(feature = "harness")]
pub struct TraceTest {
    /// The test's name.
    pub name: &'static str,
    /// The shared traces it reads (paths under the traces folder).
    pub traces: &'static [&'static str],
    /// The test: it gets the traces' paths, in order, and panics on failure.
    pub run: fn(&[PathBuf]),
}

/// Run `tests` as a test binary (`[[test]] harness = false`) with libtest's
/// command line and output. A test whose traces are missing is reported as
/// `ignored`, and its reason (where the trace was looked for, where to get it)
/// is printed before the run, outside any capture; under `CI=true` it fails
/// instead.
#[cfg(feature = "harness")]
pub fn run_tests(tests: Vec<TraceTest>) -> std::process::ExitCode {
    use libtest_mimic::{Arguments, Failed, Trial};
    let args = Arguments::from_args();
    let mut notes = Vec::new();
    let trials = tests
        .into_iter()
        .map(|t| {
            let found: Result<Vec<PathBuf>, String> = t.traces.iter().map(|n| find_shared_trace(n)).collect();
            match found {
                Ok(paths) => Trial::test(t.name, move || {
                    (t.run)(&paths);
                    Ok(())
                }),
                Err(why) if in_ci() => Trial::test(t.name, move || Err(Failed::from(format!("CI=true: {why}")))),
                Err(why) => {
                    notes.push(format!("{}: ignored: {why}", t.name));
                    Trial::test(t.name, move || Err(Failed::from(why))).with_ignored_flag(true)
                }
            }
        })
        .collect::<Vec<_>>();
    if !args.list && !notes.is_empty() {
        println!("\n{} test(s) skipped for want of a shared trace:", notes.len());
        for n in &notes {
            println!("  {n}");
        }
    }
    libtest_mimic::run(&args, trials).exit_code()
}

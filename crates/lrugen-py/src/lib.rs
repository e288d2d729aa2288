// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen._lrugen`: the extension module under the Python package `lrugen`
//! (`python/lrugen/__init__.py` adds the keyword API and the pandas DataFrames).
//!
//! Each function takes `lrugen run`'s own options, parsed by the command line's own parser
//! ([`lrugen_cli::run::parse_run_args`]) and planned by its own [`lrugen_cli::run::plan_run_with`],
//! so that every name (policies, profiles, switches, zoo, devices, workloads, machine settings)
//! and every refusal is the command line's. Results cross as JSON text: the runs exactly as
//! `lrugen run --json` prints them ([`lrugen::report::json`]), and what the command line only
//! prints as text (samples per window, `lru_gen` captures, engine latencies) beside them.
//!
//! Errors become Python exceptions: an error carrying an OS error (`(os error N)`, a file that
//! cannot be read) `OSError` with that errno (so a missing file is `FileNotFoundError`), anything
//! else `ValueError`, with the command line's message. A panic is caught and raised as
//! `RuntimeError` (a bug): nothing unwinds across the FFI boundary.

use lrugen::sim::{self, RunResult};
use lrugen_cli::run as cli;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde_json::{json, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

mod ext;

/// A message of the library or the command line as a Python exception: `OSError(errno, msg)`
/// when it is about a file that cannot be read (one of `files` named in the message that does
/// not open, or an OS error in the message, `... (os error 2)`), else `ValueError(msg)`. A
/// missing file is so `FileNotFoundError`, with the command line's message.
fn error(msg: String, files: &[PathBuf]) -> PyErr {
    let unreadable = files
        .iter()
        .filter(|f| msg.contains(&f.display().to_string()))
        .find_map(|f| std::fs::File::open(f).err()?.raw_os_error());
    let errno = unreadable.or_else(|| {
        let rest = &msg[msg.rfind("(os error ")? + "(os error ".len()..];
        rest[..rest.find(')')?].parse::<i32>().ok()
    });
    match errno {
        Some(n) => PyOSError::new_err((n, msg)),
        None => PyValueError::new_err(msg),
    }
}

/// Run `f`, its error made an exception by [`error`] (about `files`), and a panic turned into
/// `RuntimeError` rather than unwinding into the interpreter.
fn guarded<T>(files: &[PathBuf], f: impl FnOnce() -> Result<T, String>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(|m| error(m, files)),
        Err(p) => {
            let why = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            Err(PyRuntimeError::new_err(format!(
                "lrugen: internal error (a bug, please report it): {why}"
            )))
        }
    }
}

/// The page ids of a 1-D array of `uint32` or `uint64` (numpy's, or any object with numpy's
/// `__array_interface__`), read in place through its data pointer (not copied into a list or a
/// vector), renumbered densely in order of first use and spilled to a temporary file as a trace
/// file is ([`lrugen_trace::SpilledTrace::from_keys`]).
fn array_trace(a: &Bound<'_, PyAny>) -> PyResult<lrugen::workload::LoadedTrace> {
    let bad = |what: String| PyValueError::new_err(format!("trace array: {what}"));
    let iface = a.getattr("__array_interface__").map_err(|_| {
        bad(format!(
            "expected a numpy array of page ids (uint32 or uint64), found {}",
            a.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })?;
    let typestr: String = iface.get_item("typestr")?.extract()?;
    let shape: Vec<usize> = iface.get_item("shape")?.extract()?;
    let strides: Option<Vec<isize>> = iface.get_item("strides")?.extract()?;
    let (ptr, _readonly): (usize, bool) = iface.get_item("data")?.extract()?;
    let size = match typestr.as_str() {
        "<u4" => 4,
        "<u8" => 8,
        t => {
            let dtype = a
                .getattr("dtype")
                .and_then(|d| d.str().map(|s| s.to_string()))
                .unwrap_or_else(|_| t.to_string());
            return Err(bad(format!(
                "expected dtype uint32 or uint64 (little-endian), found {dtype}; convert it with \
                 .astype(numpy.uint64) (page ids are unsigned)"
            )));
        }
    };
    let [n] = shape[..] else {
        return Err(bad(format!(
            "expected a 1-D array, found {} dimensions {shape:?}",
            shape.len()
        )));
    };
    if strides.as_ref().is_some_and(|s| s.len() != 1 || s[0] != size) {
        return Err(bad(format!(
            "expected a contiguous array (strides ({size},)), found strides {:?}; pass \
             numpy.ascontiguousarray(a)",
            strides.unwrap_or_default()
        )));
    }
    if n == 0 {
        return Err(bad("the trace holds no request (an empty array)".into()));
    }
    if ptr == 0 {
        return Err(bad("the array has no data pointer".into()));
    }
    let base = ptr as *const u8;
    // SAFETY: `__array_interface__` describes `n` contiguous elements of `size` bytes at `ptr`,
    // kept alive by `a`, which is borrowed (and the interpreter attached, so no Python code runs
    // to free or resize it) until the ids are spilled below. Reads are unaligned: an array made
    // over a buffer at an odd offset is valid numpy.
    let key = |i: usize| -> u64 {
        unsafe {
            if size == 4 {
                u64::from(u32::from_le(base.add(i * 4).cast::<u32>().read_unaligned()))
            } else {
                u64::from_le(base.add(i * 8).cast::<u64>().read_unaligned())
            }
        }
    };
    guarded(&[], || {
        lrugen_trace::SpilledTrace::from_keys((0..n).map(key))
            .map_err(|e| format!("trace array: writing its page ids to a temporary file: {e}"))
    })
}

/// One run's details beyond `lrugen run --json`: its samples per window, its `lru_gen` captures
/// (as text and parsed), its engine statistics (latencies).
fn details(r: &RunResult) -> Value {
    let lru_gen: Vec<Value> = r
        .debugfs
        .iter()
        .flat_map(|(step, plain, _)| {
            let parsed = lrugen::reclaim::mglru::debugfs::parse(plain).unwrap_or_default();
            parsed.into_iter().flat_map(move |lv| {
                lv.gens.into_iter().map(move |g| {
                    json!({
                        "step": step,
                        "memcg_id": lv.memcg_id,
                        "memcg": lv.path,
                        "node": lv.node,
                        "seq": g.seq,
                        "age_ms": g.age_ms,
                        "anon": g.pages[0],
                        "file": g.pages[1],
                    })
                })
            })
        })
        .collect();
    json!({
        "policy": r.policy,
        "series": r.series,
        "lru_gen": lru_gen,
        "debugfs": r.debugfs.iter().map(|(step, plain, full)| json!({
            "step": step, "lru_gen": plain, "lru_gen_full": full
        })).collect::<Vec<_>>(),
        "engine": r.engine,
        "debugfs_write_error": r.debugfs_write_error,
        "wall_seconds": r.wall_seconds,
    })
}

/// What [`run`] and [`run_cache_ext`] take, checked: `args` parsed by the command line's parser,
/// `sample_every` not 0, and `trace_ids` read (it needs `--trace NAME` to name it).
fn run_inputs(
    args: &[String],
    trace_ids: Option<&Bound<'_, PyAny>>,
    sample_every: Option<u64>,
) -> PyResult<(cli::RunArgs, Option<lrugen::workload::LoadedTrace>)> {
    let a =
        cli::parse_run_args(args).map_err(|e| PyValueError::new_err(e.render().to_string().trim_end().to_string()))?;
    if sample_every == Some(0) {
        return Err(PyValueError::new_err(
            "sample_every: expected at least 1 step between samples, found 0",
        ));
    }
    let given = match trace_ids {
        Some(arr) => {
            if a.trace.is_none() {
                return Err(PyValueError::new_err(
                    "trace_ids: an array of page ids needs --trace NAME to name it",
                ));
            }
            Some(array_trace(arr)?)
        }
        None => None,
    };
    Ok((a, given))
}

/// `lrugen run` from Python: `args` are its options as words (`["--trace", "t.lis", "--capacity",
/// "1000"]`), parsed and planned as the command line does; `trace_ids`, a numpy array of page ids
/// replayed in place of reading `--trace` (which then only names it); `sample_every`, a sample of
/// the counters every that many steps (kernel policies). Returns JSON text: `runs` as `lrugen run
/// --json` prints them, `details` per run, and the machine the plan sized.
#[pyfunction]
#[pyo3(signature = (args, trace_ids=None, sample_every=None))]
fn run(
    py: Python<'_>,
    args: Vec<String>,
    trace_ids: Option<Bound<'_, PyAny>>,
    sample_every: Option<u64>,
) -> PyResult<String> {
    let (mut a, given) = run_inputs(&args, trace_ids.as_ref(), sample_every)?;
    cli::default_policies(&mut a);
    // the files a run reads, for an error about one of them (OSError)
    let files: Vec<PathBuf> = [&a.ops, &a.fio, &a.ctl]
        .into_iter()
        .chain(trace_ids.is_none().then_some(&a.trace))
        .flatten()
        .cloned()
        .collect();
    py.detach(move || {
        guarded(&files, || {
            let mut plan = cli::plan_run_with(&a, given)?;
            if let Some(n) = sample_every {
                for c in &mut plan.cfgs {
                    c.sample_every = Some(n);
                }
            }
            let mut results = Vec::with_capacity(plan.cfgs.len());
            for cfg in &plan.cfgs {
                let r = match (&plan.opfile, &a.ops) {
                    (Some(o), Some(path)) => cli::run_op_file(o, path, cfg)?,
                    _ => sim::run(cfg, plan.trace.clone(), &mut |_, _| {}).map_err(|e| e.to_string())?,
                };
                results.push(r);
            }
            cli::apply_labels(&mut results, &plan.labels);
            results_json(&results, &plan, &a)
        })
    })
}

/// What [`run`] returns: the runs as `lrugen run --json` prints them, their details, and the
/// machine the plan sized, as JSON text.
fn results_json(results: &[RunResult], plan: &cli::RunPlan, a: &cli::RunArgs) -> Result<String, String> {
    let out = json!({
        "runs": lrugen::report::json(results),
        "details": results.iter().map(details).collect::<Vec<_>>(),
        "workload": plan.spec.describe(),
        "memory_pages": plan.memory,
        "memcg_max_pages": plan.limit,
        "swap_pages": plan.swap,
        "swappiness": a.swappiness,
        "note": plan.note,
    });
    serde_json::to_string(&out).map_err(|e| format!("JSON: {e}"))
}

/// `lrugen.run` with a cache_ext-shaped policy written in Python (`lrugen.cache_ext.Policy`,
/// docs/cache-ext.md): `args` as for [`run`], with `--policy classic` (the LRU the policy runs
/// over: anon memory, other memcgs, the fallback), the Python object `policy` choosing the file
/// pages the workload's memcg evicts. The run holds the interpreter (each hook is a Python
/// call). An exception a hook raised is raised here, and no result is returned.
#[pyfunction]
#[pyo3(signature = (args, policy, trace_ids=None, sample_every=None))]
fn run_cache_ext(
    py: Python<'_>,
    args: Vec<String>,
    policy: Py<PyAny>,
    trace_ids: Option<Bound<'_, PyAny>>,
    sample_every: Option<u64>,
) -> PyResult<String> {
    let (a, given) = run_inputs(&args, trace_ids.as_ref(), sample_every)?;
    if a.ops.is_some() {
        return Err(PyValueError::new_err(
            "a cache_ext policy written in Python runs a trace or a workload, not an op file (--ops)",
        ));
    }
    let files: Vec<PathBuf> = [&a.fio, &a.ctl]
        .into_iter()
        .chain(trace_ids.is_none().then_some(&a.trace))
        .flatten()
        .cloned()
        .collect();
    let mut plan = guarded(&files, || cli::plan_run_with(&a, given))?;
    let [cfg] = &mut plan.cfgs[..] else {
        return Err(PyValueError::new_err(format!(
            "a cache_ext policy written in Python runs once, over the classic LRU: expected the \
             policy classic, found {} runs planned",
            plan.cfgs.len()
        )));
    };
    if cfg.policy != sim::PolicyKind::Classic {
        return Err(PyValueError::new_err(format!(
            "a cache_ext policy written in Python runs over the classic LRU: expected the policy classic, found {}",
            cfg.policy.name()
        )));
    }
    if let Some(n) = sample_every {
        cfg.sample_every = Some(n);
    }
    let error = std::rc::Rc::new(std::cell::RefCell::new(None));
    let ops = ext::PyOps::new(py, policy, error.clone())?;
    let cfg = cfg.clone();
    let trace = plan.trace.clone();
    let run = guarded(&files, || {
        sim::run_with_policy(&cfg, trace, &mut |_, _| {}, |m, setup| {
            lrugen::reclaim::ext::CacheExt::new(m, setup.memcg, cfg.mglru.profile, ops)
        })
        .map(|(r, _)| r)
        .map_err(|e| e.to_string())
    });
    if let Some(e) = error.borrow_mut().take() {
        return Err(e);
    }
    let mut results = vec![run?];
    cli::apply_labels(&mut results, &plan.labels);
    guarded(&files, || results_json(&results, &plan, &a))
}

/// The help of `lrugen run`'s options (what `lrugen run --help` prints, as the options that
/// `lrugen.run` takes).
#[pyfunction]
fn run_help() -> String {
    match cli::parse_run_args(["--help"]) {
        Ok(_) => String::new(),
        Err(e) => e.render().to_string(),
    }
}

/// `lrugen exp FILE` from Python, without an output directory: the experiment file run (its
/// `[full]` table with `full`), on `threads` worker threads (default one per core; the results do
/// not depend on it). Returns JSON text: `results` (what `results.json` holds), `results_csv` and
/// `summary_csv` (the texts of `results.csv` and `summary.csv`).
#[pyfunction]
#[pyo3(signature = (path, threads=None, full=false, memory_budget=None))]
fn experiment(
    py: Python<'_>,
    path: std::path::PathBuf,
    threads: Option<usize>,
    full: bool,
    memory_budget: Option<String>,
) -> PyResult<String> {
    let files = [path.clone()];
    py.detach(move || {
        guarded(&files, || {
            lrugen_cli::checks::memory_budget(memory_budget.as_deref())?;
            let (exp, _) =
                lrugen::experiment::Experiment::from_file_hashed_at(&path, full).map_err(|e| e.to_string())?;
            if full && !exp.has_full {
                return Err(format!(
                    "full: {} has no [full] table: expected the published setup's values there \
                     (docs/experiments.md, \"Scaled and full size\")",
                    path.display()
                ));
            }
            if let Some(why) = &exp.skip {
                return Err(format!("{}: skipped: {why}", exp.name));
            }
            let results = lrugen::experiment::run(&exp, threads, &|_, _| {}).map_err(|e| e.to_string())?;
            let out = json!({
                "results": results,
                "results_csv": lrugen::experiment::output::results_csv(&results),
                "summary_csv": lrugen::experiment::output::summary_csv(&results),
            });
            serde_json::to_string(&out).map_err(|e| format!("JSON: {e}"))
        })
    })
}

/// The names the options take, from the library's own lists: policies (the kernel's, the
/// reference caches and the zoo), MGLRU profiles and each switch's value in each preset, trace
/// formats, workload presets. JSON text.
#[pyfunction]
fn names() -> PyResult<String> {
    use lrugen::reclaim::mglru::{Preset, Switches};
    guarded(&[], || {
        let presets: Vec<Preset> = Preset::ALL.into_iter().chain([Preset::MglruFg]).collect();
        let switches: serde_json::Map<String, Value> = Switches::NAMES
            .iter()
            .map(|&n| {
                let by: serde_json::Map<String, Value> = presets
                    .iter()
                    .map(|p| (p.name().to_string(), json!(p.switches().get(n))))
                    .collect();
                (n.to_string(), Value::Object(by))
            })
            .collect();
        let out = json!({
            "policies": sim::PolicyKind::ALL.iter().map(|p| p.name()).collect::<Vec<_>>(),
            "zoo": lrugen_cache::ZooPolicy::ALL.iter().map(|p| p.name()).collect::<Vec<_>>(),
            "cache_ext": lrugen::reclaim::ext::policies::Shipped::ALL
                .iter()
                .map(|p| p.full_name())
                .collect::<Vec<_>>(),
            "profiles": presets.iter().map(|p| p.name()).chain(["mainline"]).collect::<Vec<_>>(),
            "mainline": Preset::MAINLINE.name(),
            "switches": switches,
            "trace_formats": lrugen_trace::TraceFormat::ALL.iter().map(|f| f.name()).collect::<Vec<_>>(),
            "workload_presets": cli::PRESETS.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        });
        serde_json::to_string(&out).map_err(|e| format!("JSON: {e}"))
    })
}

/// The extension module.
#[pymodule]
fn _lrugen(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_help, m)?)?;
    m.add_function(wrap_pyfunction!(run_cache_ext, m)?)?;
    m.add_class::<ext::Ctx>()?;
    m.add_class::<ext::Ectx>()?;
    m.add_class::<ext::Folio>()?;
    for (name, v) in [
        ("CACHE_EXT_CONTINUE", ext::CONTINUE),
        ("CACHE_EXT_EVICT", ext::EVICT),
        ("CACHE_EXT_STOP", ext::STOP),
        ("CACHE_EXT_DONE_ITER", ext::DONE_ITER),
        ("CACHE_EXT_MAX_ITER_REACHED", ext::MAX_ITER_REACHED),
        ("CACHE_EXT_EVICT_ARRAY_FILLED", ext::EVICT_ARRAY_FILLED),
    ] {
        m.add(name, v)?;
    }
    m.add_function(wrap_pyfunction!(experiment, m)?)?;
    m.add_function(wrap_pyfunction!(names, m)?)?;
    Ok(())
}

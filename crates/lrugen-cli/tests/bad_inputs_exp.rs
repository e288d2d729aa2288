// SPDX-License-Identifier: GPL-2.0-only
//! Bad inputs of `lrugen exp` and `lrugen kernel` around their output directories, as a table:
//! each case sets up a scratch folder, runs the command, and asserts the exit status, a message
//! naming the flag (or the file) and what was expected, no panic, and that nothing was left
//! behind: the scratch folder is exactly as the case set it up (no output, no partial or
//! temporary directory), and no path outside it was created.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn lrugen(args: &[String], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lrugen"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run lrugen")
}

/// Every path under `dir` (files and folders), relative, sorted, with each file's bytes.
fn snapshot(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
    fn walk(base: &Path, d: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                out.push((rel + "/", None));
                walk(base, &p, out);
            } else {
                out.push((rel, Some(std::fs::read(&p).unwrap())));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A small experiment: 2 sweep points × 3 policies × 2 repetitions = 12 cells, quick each.
const TINY: &str = include_str!("data/small.toml");

fn s(x: impl AsRef<std::ffi::OsStr>) -> String {
    x.as_ref().to_string_lossy().into_owned()
}

/// `exp TINY --out OUT` with `more` arguments, in scratch folder `d`.
fn exp_args(d: &Path, out: impl AsRef<std::ffi::OsStr>, more: &[&str]) -> Vec<String> {
    let mut a = vec![
        "exp".into(),
        s(d.join("tiny.toml")),
        "--out".into(),
        s(out),
        "--no-plots".into(),
    ];
    a.extend(more.iter().map(|m| m.to_string()));
    a
}

/// An interrupted run of TINY into `d/out` (its partial directory stays).
fn interrupted(d: &Path) {
    let o = lrugen(
        &exp_args(d, d.join("out"), &["--threads", "1"]),
        &[("LRUGEN_EXP_STOP_AFTER", "2")],
    );
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.join("out.partial/cells").is_dir());
}

/// A kernel run that fails on its --out before booting (the built-in workload, nothing else).
fn kernel_args(out: impl AsRef<std::ffi::OsStr>, more: &[&str]) -> Vec<String> {
    let mut a = vec![
        "kernel".into(),
        "--accesses".into(),
        "1000".into(),
        "--out".into(),
        s(out),
    ];
    a.extend(more.iter().map(|m| m.to_string()));
    a
}

/// What a case's setup gives: the arguments, extra environment, and paths outside the scratch
/// folder that must not exist afterwards.
type Setup = (Vec<String>, Vec<(&'static str, &'static str)>, Vec<PathBuf>);

struct Case {
    name: &'static str,
    /// Set up the scratch folder.
    setup: fn(&Path) -> Setup,
    /// Expected exit status.
    code: i32,
    /// Each must be in stderr.
    needles: &'static [&'static str],
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "over the memory budget",
            setup: |d| (exp_args(d, d.join("out"), &["--memory-budget", "4K"]), vec![], vec![]),
            code: 1,
            needles: &[
                "tiny.toml: sweep point",
                "over the memory budget of 4.0 KiB",
                "--memory-budget",
            ],
        },
        Case {
            name: "out is an existing file",
            setup: |d| {
                std::fs::write(d.join("f.txt"), "x").unwrap();
                (exp_args(d, d.join("f.txt"), &[]), vec![], vec![])
            },
            code: 1,
            needles: &["--out ", "f.txt", "is a file: expected a directory"],
        },
        Case {
            name: "out under a file",
            setup: |d| {
                std::fs::write(d.join("f.txt"), "x").unwrap();
                (exp_args(d, d.join("f.txt/sub/out"), &[]), vec![], vec![])
            },
            code: 1,
            needles: &["--out ", "f.txt is a file: expected a directory path"],
        },
        Case {
            name: "out under a device",
            setup: |d| (exp_args(d, "/dev/null/out", &[]), vec![], vec![]),
            code: 1,
            needles: &["--out /dev/null/out", "/dev/null is a file: expected a directory path"],
        },
        Case {
            name: "out in /proc",
            setup: |d| {
                (
                    exp_args(d, "/proc/lrugen-test-out", &[]),
                    vec![],
                    vec!["/proc/lrugen-test-out".into(), "/proc/lrugen-test-out.partial".into()],
                )
            },
            code: 1,
            needles: &[
                "--out /proc/lrugen-test-out",
                "cannot create",
                "expected a place where a directory can be created",
            ],
        },
        Case {
            name: "out of a name that is no name",
            setup: |d| (exp_args(d, "..", &[]), vec![], vec![]),
            code: 1,
            needles: &["--out ..", "expected a directory path that ends in a name"],
        },
        Case {
            name: "non-empty foreign directory without --force",
            setup: |d| {
                std::fs::create_dir(d.join("out")).unwrap();
                std::fs::write(d.join("out/thesis.tex"), "mine").unwrap();
                (exp_args(d, d.join("out"), &[]), vec![], vec![])
            },
            code: 1,
            needles: &[
                "--out ",
                "is not empty and was not written by lrugen exp",
                "give --force",
            ],
        },
        Case {
            name: "directory written by lrugen kernel",
            setup: |d| {
                std::fs::create_dir(d.join("out")).unwrap();
                std::fs::write(
                    d.join("out/.lrugen-kernel.json"),
                    r#"{"written_by":"lrugen kernel","lrugen_version":"0","complete":true,"of":{},"files":["report.json"]}"#,
                )
                .unwrap();
                std::fs::write(d.join("out/report.json"), "{}").unwrap();
                (exp_args(d, d.join("out"), &[]), vec![], vec![])
            },
            code: 1,
            needles: &["--out ", "was written by lrugen kernel, not lrugen exp", "give --force"],
        },
        Case {
            name: "own directory with a file added by hand",
            setup: |d| {
                let o = lrugen(&exp_args(d, d.join("out"), &[]), &[]);
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                std::fs::write(d.join("out/notes.txt"), "mine").unwrap();
                (exp_args(d, d.join("out"), &[]), vec![], vec![])
            },
            code: 1,
            needles: &[
                "--out ",
                "holds files lrugen exp did not write (notes.txt)",
                "give --force",
            ],
        },
        Case {
            name: "a foreign directory named like the partial directory",
            setup: |d| {
                std::fs::create_dir(d.join("out.partial")).unwrap();
                std::fs::write(d.join("out.partial/x"), "mine").unwrap();
                (exp_args(d, d.join("out"), &["--force"]), vec![], vec![])
            },
            code: 1,
            needles: &[
                "--out ",
                "out.partial exists and was not written by lrugen exp",
                "expected no such",
            ],
        },
        Case {
            name: "--threads 99999",
            setup: |d| (exp_args(d, d.join("out"), &["--threads", "99999"]), vec![], vec![]),
            code: 1,
            needles: &["--threads 99999", "expected at most 1024 worker threads"],
        },
        Case {
            name: "--threads 0",
            setup: |d| (exp_args(d, d.join("out"), &["--threads", "0"]), vec![], vec![]),
            code: 1,
            needles: &["--threads 0", "expected at least 1 thread"],
        },
        Case {
            name: "--threads -1",
            setup: |d| (exp_args(d, d.join("out"), &["--threads=-1"]), vec![], vec![]),
            code: 2,
            needles: &["--threads", "-1"],
        },
        Case {
            name: "--resume with nothing to resume",
            setup: |d| (exp_args(d, d.join("out"), &["--resume"]), vec![], vec![]),
            code: 1,
            needles: &["--resume: nothing to resume", "out.partial"],
        },
        Case {
            name: "--resume after a complete run",
            setup: |d| {
                let o = lrugen(&exp_args(d, d.join("out"), &[]), &[]);
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                (exp_args(d, d.join("out"), &["--resume"]), vec![], vec![])
            },
            code: 1,
            needles: &["--resume: nothing to resume", "holds a complete run"],
        },
        Case {
            name: "--resume with a changed experiment file",
            setup: |d| {
                interrupted(d);
                std::fs::write(d.join("tiny.toml"), TINY.replace("accesses = 3000", "accesses = 3001")).unwrap();
                (exp_args(d, d.join("out"), &["--resume"]), vec![], vec![])
            },
            code: 1,
            needles: &[
                "--resume: ",
                "out.partial is of another run",
                "file_fnv1a64 was",
                "expected the same experiment file",
            ],
        },
        Case {
            name: "--resume with a corrupt cell file",
            setup: |d| {
                interrupted(d);
                std::fs::write(d.join("out.partial/cells/c000000.json"), "{\"index\": ").unwrap();
                (exp_args(d, d.join("out"), &["--resume"]), vec![], vec![])
            },
            code: 1,
            needles: &["--resume: ", "c000000.json", "expected a cell file lrugen wrote"],
        },
        Case {
            name: "an interrupted run, started again without --resume",
            setup: |d| {
                interrupted(d);
                (exp_args(d, d.join("out"), &[]), vec![], vec![])
            },
            code: 1,
            needles: &["--out ", "holds an interrupted run", "--resume", "--force"],
        },
        Case {
            name: "bad stop-after value (test hook)",
            setup: |d| {
                (
                    exp_args(d, d.join("out"), &[]),
                    vec![("LRUGEN_EXP_STOP_AFTER", "soon")],
                    vec![],
                )
            },
            code: 1,
            needles: &["LRUGEN_EXP_STOP_AFTER=soon", "expected a number of cells"],
        },
        Case {
            name: "reference caches in a multi-task experiment",
            setup: |d| {
                let t = TINY.to_string() + "[engine]\njobs = 4\n";
                std::fs::write(d.join("tiny.toml"), t).unwrap();
                (exp_args(d, d.join("out"), &[]), vec![], vec![])
            },
            code: 1,
            needles: &[
                "tiny.toml:4:",
                "policy 'lru' cannot run here",
                "engine.jobs = 4",
                "expected only mglru and classic",
            ],
        },
        Case {
            name: "kernel: out is an existing file",
            setup: |d| {
                std::fs::write(d.join("f.txt"), "x").unwrap();
                (kernel_args(d.join("f.txt"), &[]), vec![], vec![])
            },
            code: 1,
            needles: &["--out ", "f.txt", "is a file: expected a directory"],
        },
        Case {
            name: "kernel: out in /proc",
            setup: |_| {
                (
                    kernel_args("/proc/lrugen-test-kout", &[]),
                    vec![],
                    vec!["/proc/lrugen-test-kout".into(), "/proc/lrugen-test-kout.partial".into()],
                )
            },
            code: 1,
            needles: &["--out /proc/lrugen-test-kout", "cannot create"],
        },
        Case {
            name: "kernel: non-empty foreign directory without --force",
            setup: |d| {
                std::fs::create_dir(d.join("out")).unwrap();
                std::fs::write(d.join("out/thesis.tex"), "mine").unwrap();
                (kernel_args(d.join("out"), &[]), vec![], vec![])
            },
            code: 1,
            needles: &[
                "--out ",
                "is not empty and was not written by lrugen kernel",
                "give --force",
            ],
        },
        Case {
            name: "kernel: a directory lrugen exp wrote",
            setup: |d| {
                let o = lrugen(&exp_args(d, d.join("out"), &[]), &[]);
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                (kernel_args(d.join("out"), &[]), vec![], vec![])
            },
            code: 1,
            needles: &["--out ", "was written by lrugen exp, not lrugen kernel"],
        },
        Case {
            name: "kernel: --force without --out",
            setup: |_| (vec!["kernel".into(), "--force".into()], vec![], vec![]),
            code: 2,
            needles: &["--out"],
        },
    ]
}

#[test]
fn bad_output_inputs_are_refused_and_leave_nothing_behind() {
    let cases = cases();
    assert!(cases.len() >= 20, "{} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("tiny.toml"), TINY).unwrap();
        let (args, env, outside) = (c.setup)(d.path());
        let before = snapshot(d.path());
        let o = lrugen(&args, &env);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let mut why = Vec::new();
        if o.status.code() != Some(c.code) {
            why.push(format!("exit status {:?}, expected {}", o.status.code(), c.code));
        }
        for n in c.needles {
            if !err.contains(n) {
                why.push(format!("stderr lacks {n:?}"));
            }
        }
        if err.contains("panicked") || err.contains("RUST_BACKTRACE") {
            why.push("it panicked".into());
        }
        if snapshot(d.path()) != before {
            let now: Vec<String> = snapshot(d.path()).into_iter().map(|x| x.0).collect();
            why.push(format!("the scratch folder changed: {now:?}"));
        }
        for p in &outside {
            if p.exists() {
                why.push(format!("{} was created", p.display()));
            }
        }
        if !why.is_empty() {
            failures.push(format!("{}: {}\n  {:?}\n  stderr: {err}", c.name, why.join("; "), args));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

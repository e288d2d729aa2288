// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen exp FILE --shard K/N` and `lrugen exp merge`: an experiment run as slices in separate
//! processes and merged is byte for byte the unsharded run's output; bad slices are refused with
//! a message and nothing written; the recipes of examples/cluster/ (Slurm array job, Kubernetes
//! Indexed Job, Python process pool) run as written.

mod common;

use common::{ok, tree};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lrugen"))
}

fn lrugen() -> Command {
    Command::new(bin())
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The example every test shards: 3 sweep points x 5 policies x 3 repetitions = 45 cells, with
/// summaries, differences from the baseline and every kind of plot.
fn example() -> PathBuf {
    root().join("examples/fio-zipf.toml")
}

/// A fresh scratch folder.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lrugen-shard-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The two trees are the same files with the same bytes.
fn assert_same_tree(a: &Path, b: &Path) {
    let (ta, tb) = (tree(a), tree(b));
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&ta), names(&tb), "{} vs {}", a.display(), b.display());
    for ((name, x), (_, y)) in ta.iter().zip(&tb) {
        assert!(x == y, "{name} differs between {} and {}", a.display(), b.display());
    }
}

/// The unsharded run, the reference (run from the repository's root, where the recipes' relative
/// paths mean what they say).
fn whole_run(file: impl AsRef<std::ffi::OsStr>, out: &Path) {
    ok(&lrugen()
        .arg("exp")
        .arg(file)
        .arg("--out")
        .arg(out)
        .current_dir(root())
        .output()
        .unwrap());
}

/// Whether the plots were drawn (a font found); under CI a missing font is a failure.
fn has_plots(dir: &Path) -> bool {
    let any = tree(dir).iter().any(|(n, _)| n.ends_with(".svg"));
    assert!(
        any || std::env::var("CI").as_deref() != Ok("true"),
        "no plots in {} under CI",
        dir.display()
    );
    any
}

#[test]
fn three_shards_in_separate_processes_merge_into_the_unsharded_output() {
    let d = scratch("three");
    let whole = d.join("whole");
    whole_run(example(), &whole);
    // the three slices at once, each its own process
    let children: Vec<_> = (0..3)
        .map(|k| {
            lrugen()
                .arg("exp")
                .arg(example())
                .args(["--shard", &format!("{k}/3"), "--threads", "1", "--out"])
                .arg(d.join(format!("s{k}")))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (k, c) in children.into_iter().enumerate() {
        let out = ok(&c.wait_with_output().unwrap());
        assert!(out.contains(&format!("slice {k}/3: the 15 runs")), "{out}");
        // a slice holds its cells and the experiment file, nothing else
        let t = tree(&d.join(format!("s{k}")));
        let cells: Vec<&str> = t
            .iter()
            .map(|f| f.0.as_str())
            .filter(|n| n.starts_with("cells/"))
            .collect();
        assert_eq!(cells.len(), 15, "{cells:?}");
        for c in &cells {
            let i: usize = c
                .trim_start_matches("cells/c")
                .trim_end_matches(".json")
                .parse()
                .unwrap();
            assert_eq!(i % 3, k, "{c} in slice {k}/3");
        }
        assert_eq!(t.len(), 15 + 2, "cells, experiment.toml and the marker");
        assert_eq!(
            std::fs::read(d.join(format!("s{k}/experiment.toml"))).unwrap(),
            std::fs::read(example()).unwrap()
        );
    }
    // merged in any order, by a process of its own
    let merged = d.join("merged");
    let out = ok(&lrugen()
        .args(["exp", "merge"])
        .args([d.join("s2"), d.join("s0"), d.join("s1")])
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap());
    assert!(
        out.contains("merged from 3 slices") && out.contains("hit ratio"),
        "{out}"
    );
    assert_same_tree(&whole, &merged);
    for f in ["results.json", "results.csv", "summary.csv", ".lrugen-exp.json"] {
        assert!(merged.join(f).is_file(), "{f}");
    }
    if has_plots(&merged) {
        assert!(merged.join("delta-hit_ratio-sweep.svg").is_file());
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Run `args` (after `lrugen`), expecting it refused with exit status 1 and `needles` in its
/// message; `out` must not have been created, nor its partial directory.
fn refused(args: &[&std::ffi::OsStr], needles: &[&str], out: &Path) {
    let o = lrugen().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: expected {n:?} in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "{args:?} wrote {}", out.display());
    let mut p = out.as_os_str().to_owned();
    p.push(".partial");
    assert!(!Path::new(&p).exists(), "{args:?} left {p:?}");
}

#[test]
fn merge_refuses_bad_slices_and_writes_nothing() {
    let d = scratch("bad");
    let ex = example();
    let slice = |k: usize, n: usize, name: &str, env: &[(&str, &str)]| -> Output {
        let mut c = lrugen();
        c.arg("exp")
            .arg(&ex)
            .args(["--shard", &format!("{k}/{n}"), "--out"])
            .arg(d.join(name));
        for (a, b) in env {
            c.env(a, b);
        }
        c.output().unwrap()
    };
    for k in 0..3 {
        ok(&slice(k, 3, &format!("s{k}"), &[]));
    }
    ok(&slice(1, 2, "h1", &[]));
    let other = root().join("examples/fio-uniform.toml");
    ok(&lrugen()
        .arg("exp")
        .arg(&other)
        .args(["--shard", "2/3", "--out"])
        .arg(d.join("u2"))
        .output()
        .unwrap());
    let whole = d.join("whole");
    whole_run(&ex, &whole);
    let out = d.join("merged");
    let p = |n: &str| d.join(n).into_os_string();
    let (merge, flag, o) = (
        std::ffi::OsString::from("merge"),
        std::ffi::OsString::from("--out"),
        out.clone().into_os_string(),
    );
    let exp = std::ffi::OsString::from("exp");
    let args = |dirs: &[&str]| -> Vec<std::ffi::OsString> {
        let mut v = vec![exp.clone(), merge.clone()];
        v.extend(dirs.iter().map(|n| p(n)));
        v.push(flag.clone());
        v.push(o.clone());
        v
    };
    let run = |dirs: &[&str], needles: &[&str]| {
        let a = args(dirs);
        refused(&a.iter().map(|s| s.as_os_str()).collect::<Vec<_>>(), needles, &out);
    };
    run(
        &["s0", "s1"],
        &["missing slice 2/3", "expected all 3 slices", "0/3", "1/3"],
    );
    run(&["s0", "s1", "s1", "s2"], &["slice 1/3 given twice", "s1"]);
    run(
        &["s0", "s1", "u2"],
        &["slices of different experiments", "fio-zipf", "fio-uniform", "FNV-1a"],
    );
    run(
        &["s0", "h1", "s2"],
        &["slices of different splits", "one of 3", "one of 2"],
    );
    run(
        &["s0", "s1", "whole"],
        &["whole", "not a slice", "lrugen exp without --shard"],
    );
    run(&["s0", "s1", "nothing"], &["nothing", "no such directory"]);
    // an interrupted slice: named, with how to continue it
    let o2 = slice(2, 3, "i2", &[("LRUGEN_EXP_STOP_AFTER", "2")]);
    assert_eq!(o2.status.code(), Some(130), "{}", String::from_utf8_lossy(&o2.stderr));
    run(&["s0", "s1", "i2"], &["i2", "not finished", "--resume"]);
    run(&["s0", "s1", "i2.partial"], &["interrupted slice", "--resume"]);
    // resumed, it merges into the whole run's output
    let o3 = lrugen()
        .arg("exp")
        .arg(&ex)
        .args(["--shard", "2/3", "--resume", "--out"])
        .arg(d.join("i2"))
        .output()
        .unwrap();
    ok(&o3);
    // a slice with a cell lost, or an experiment file changed after the run
    let t = d.join("t1");
    copy_dir(&d.join("s1"), &t);
    std::fs::remove_file(t.join("cells/c000004.json")).unwrap();
    run(
        &["s0", "t1", "s2"],
        &["slice 1/3 lacks cell(s) 4", "expected all its 15 cells"],
    );
    let t = d.join("t0");
    copy_dir(&d.join("s0"), &t);
    let mut text = std::fs::read_to_string(t.join("experiment.toml")).unwrap();
    text.push_str("\n# changed\n");
    std::fs::write(t.join("experiment.toml"), text).unwrap();
    run(
        &["t0", "s1", "s2"],
        &["experiment.toml", "FNV-1a hash", "the copy was changed"],
    );
    // and the good ones, at last
    let a = args(&["s0", "s1", "i2"]);
    ok(&lrugen().args(&a).output().unwrap());
    assert_same_tree(&whole, &out);
    let _ = std::fs::remove_dir_all(&d);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn list_cells_prints_the_slices_rule() {
    let all = ok(&lrugen().arg("exp").arg(example()).arg("--list-cells").output().unwrap());
    let lines: Vec<&str> = all.lines().collect();
    assert_eq!(lines[0], "cell\tpoint\tpolicy\trepetition\tseed");
    assert_eq!(lines.len(), 1 + 45);
    let one = ok(&lrugen()
        .arg("exp")
        .arg(example())
        .args(["--list-cells", "--shard", "1/4"])
        .output()
        .unwrap());
    let want: Vec<&str> = lines[1..]
        .iter()
        .copied()
        .filter(|l| l.split('\t').next().unwrap().parse::<usize>().unwrap() % 4 == 1)
        .collect();
    assert_eq!(one.lines().skip(1).collect::<Vec<_>>(), want);
}

/// PATH with the built lrugen first, as the recipes call `lrugen`.
fn path_with_lrugen() -> std::ffi::OsString {
    let dir = bin().parent().unwrap().to_path_buf();
    let mut v = vec![dir];
    v.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(v).unwrap()
}

/// The shell lines of a Kubernetes recipe, between its `# lrugen-recipe-begin` and
/// `# lrugen-recipe-end`, unindented.
fn recipe_block(yaml: &str) -> String {
    let lines: Vec<&str> = yaml.lines().collect();
    let b = lines.iter().position(|l| l.contains("# lrugen-recipe-begin")).unwrap();
    let e = lines.iter().position(|l| l.contains("# lrugen-recipe-end")).unwrap();
    let indent = lines[b].len() - lines[b].trim_start().len();
    lines[b..=e]
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `env: - name: X value: "V"` of a Kubernetes recipe.
fn k8s_env(yaml: &str, name: &str) -> String {
    let lines: Vec<&str> = yaml.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.trim() == format!("- name: {name}"))
        .unwrap_or_else(|| panic!("no env {name}"));
    let v = lines[i + 1].trim().strip_prefix("value: ").unwrap();
    v.trim_matches('"').to_string()
}

#[test]
fn the_slurm_recipe_runs_as_an_array_job_would() {
    let d = scratch("slurm");
    let script = root().join("examples/cluster/slurm-array.sh");
    let out = d.join("results/fio-zipf");
    // an array --array=5-7: ids 5, 6, 7, min 5, count 3, each task a process
    let tasks: Vec<_> = (5..8)
        .map(|id| {
            Command::new("bash")
                .arg(&script)
                .arg(example())
                .arg(&out)
                .env("PATH", path_with_lrugen())
                .env("SLURM_ARRAY_TASK_ID", id.to_string())
                .env("SLURM_ARRAY_TASK_MIN", "5")
                .env("SLURM_ARRAY_TASK_COUNT", "3")
                .env("SLURM_CPUS_PER_TASK", "1")
                .output()
                .unwrap()
        })
        .collect();
    for t in &tasks {
        ok(t);
    }
    ok(&Command::new("bash")
        .arg(&script)
        .arg("--merge")
        .arg(&out)
        .env("PATH", path_with_lrugen())
        .output()
        .unwrap());
    let whole = d.join("whole");
    whole_run(example(), &whole);
    assert_same_tree(&whole, &out);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_kubernetes_recipe_runs_as_an_indexed_job_would() {
    let d = scratch("k8s");
    let job = std::fs::read_to_string(root().join("examples/cluster/k8s-indexed-job.yaml")).unwrap();
    let merge = std::fs::read_to_string(root().join("examples/cluster/k8s-merge-job.yaml")).unwrap();
    let shards: usize = k8s_env(&job, "SHARDS").parse().unwrap();
    let completions: usize = job
        .lines()
        .find_map(|l| l.trim().strip_prefix("completions: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(shards, completions, "SHARDS must equal the Job's completions");
    // the pod's working directory is the image's, which holds examples/: here the repository
    let exp = k8s_env(&job, "EXP");
    assert!(root().join(&exp).is_file(), "{exp}");
    let out = d.join("results/fio-zipf");
    let pods: Vec<_> = (0..shards)
        .map(|k| {
            Command::new("sh")
                .arg("-c")
                .arg(recipe_block(&job))
                .current_dir(root())
                .env("PATH", path_with_lrugen())
                .env("JOB_COMPLETION_INDEX", k.to_string())
                .env("SHARDS", shards.to_string())
                .env("EXP", &exp)
                .env("OUT", &out)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for p in pods {
        ok(&p.wait_with_output().unwrap());
    }
    ok(&Command::new("sh")
        .arg("-c")
        .arg(recipe_block(&merge))
        .current_dir(root())
        .env("PATH", path_with_lrugen())
        .env("OUT", &out)
        .output()
        .unwrap());
    let whole = d.join("whole");
    whole_run(&exp, &whole);
    assert_same_tree(&whole, &out);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_python_recipe_maps_over_cells_and_merges() {
    let python = ["python3", "python"].into_iter().find(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(python) = python else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "python3 is missing under CI: the Python recipe is not tested"
        );
        eprintln!("python3 not found: the Python recipe (examples/cluster/shard_map.py) is not tested");
        return;
    };
    let d = scratch("python");
    let out = d.join("results/fio-zipf");
    // one task per cell (45), mapped over a local process pool; Ray and Dask map the same function
    ok(&Command::new(python)
        .arg(root().join("examples/cluster/shard_map.py"))
        .arg("examples/fio-zipf.toml")
        .arg(&out)
        .args(["--backend", "processes", "--workers", "2", "--lrugen"])
        .arg(bin())
        .current_dir(root())
        .output()
        .unwrap());
    let slices = std::fs::read_dir(d.join("results/fio-zipf.slices")).unwrap().count();
    assert_eq!(slices, 45, "one slice per cell");
    let whole = d.join("whole");
    whole_run("examples/fio-zipf.toml", &whole);
    assert_same_tree(&whole, &out);
    let _ = std::fs::remove_dir_all(&d);
}

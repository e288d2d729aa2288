// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen exp`: every example runs and writes its files; bad input exits non-zero with a message.

mod common;

use common::{ok, tree};
use std::path::{Path, PathBuf};
use std::process::Command;

fn lrugen() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lrugen"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh folder under the target directory's temp space.
fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lrugen-exp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn every_example_runs() {
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 4);
    for ex in examples {
        let name = ex.file_stem().unwrap().to_string_lossy().into_owned();
        // full-scale presets (hours of runs) are parsed by lrugen-core's tests, not run here;
        // each has a scaled variant that is
        if std::fs::read_to_string(&ex)
            .unwrap()
            .contains("# lrugen-test: parse only")
        {
            let small = ex.with_file_name(format!("{name}-small.toml"));
            assert!(
                small.is_file(),
                "{name}: a full-scale preset needs its scaled {}",
                small.display()
            );
            continue;
        }
        let out = out_dir(&name);
        let o = lrugen().arg("exp").arg(&ex).arg("--out").arg(&out).output().unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{name}: {stdout}\n{stderr}");
        if stdout.contains("skipped:") {
            // The trace example in a clone without ../shared.
            assert!(!out.exists(), "{name}");
            continue;
        }
        assert!(
            stdout.contains("policy") && stdout.contains("hit ratio"),
            "{name}: {stdout}"
        );
        for f in [
            "results.json",
            "results.csv",
            "summary.csv",
            "index.html",
            ".lrugen-exp.json",
        ] {
            assert!(out.join(f).is_file(), "{name}: {f}");
        }
        assert!(!partial_of(&out).exists(), "{name}: the partial directory stays");
        assert_reconciles(&name, &std::fs::read_to_string(out.join("results.csv")).unwrap());
        if !stderr.contains("plots skipped") {
            let names: Vec<String> = std::fs::read_dir(&out)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            for ext in ["svg", "png"] {
                // The bar chart of the main metric, misses over time, MGLRU generations.
                for (prefix, suffix) in [("bar-", "-p0"), ("misses-p0", ""), ("generations-p0-", "")] {
                    let n = names
                        .iter()
                        .filter(|n| n.starts_with(prefix) && n.ends_with(&format!("{suffix}.{ext}")))
                        .count();
                    assert!(n >= 1, "{name}: {prefix}*{suffix}.{ext} in {names:?}");
                }
            }
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}

/// `DIR.partial`, where `lrugen exp` writes before renaming.
fn partial_of(out: &Path) -> PathBuf {
    let mut p = out.as_os_str().to_owned();
    p.push(".partial");
    PathBuf::from(p)
}

/// In every row of a results.csv: accesses = hits + minor faults + misses, and the hit ratio is
/// hits / accesses (the table's columns reconcile).
fn assert_reconciles(name: &str, csv: &str) {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| {
        head.iter()
            .position(|h| *h == n)
            .unwrap_or_else(|| panic!("{name}: no {n}"))
    };
    let (a, h, mi, ma, r) = (
        col("accesses"),
        col("hits"),
        col("minor_faults"),
        col("misses"),
        col("hit_ratio"),
    );
    let mut rows = 0;
    for l in lines {
        // no quoted field in these examples' rows before the metrics
        let f: Vec<&str> = l.split(',').collect();
        let v = |i: usize| f[i].parse::<f64>().unwrap_or_else(|_| panic!("{name}: {l}"));
        assert_eq!(v(h) + v(mi) + v(ma), v(a), "{name}: {l}");
        assert_eq!(v(r), if v(a) > 0.0 { v(h) / v(a) } else { 0.0 }, "{name}: {l}");
        rows += 1;
    }
    assert!(rows > 0, "{name}");
}

#[test]
fn threads_do_not_change_the_results() {
    let ex = root().join("examples/fio-uniform.toml");
    let (a, b) = (out_dir("t1"), out_dir("t2"));
    for (d, t) in [(&a, "1"), (&b, "2")] {
        let o = lrugen()
            .args(["exp", "--no-plots", "--threads", t, "--out"])
            .arg(d)
            .arg(&ex)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    for f in ["results.json", "results.csv", "summary.csv"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn bad_files_fail_with_a_message() {
    let dir = out_dir("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.toml");
    std::fs::write(
        &f,
        "[memcg]\nmax = \"1X\"\n[workload]\nkind = \"trace\"\npath = \"x\"\n",
    )
    .unwrap();
    let o = lrugen()
        .arg("exp")
        .arg(&f)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.toml:2:") && err.contains("unknown unit"), "{err}");
    let o = lrugen()
        .args(["exp", "/nonexistent.toml", "--out"])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent.toml: cannot read"));
    let o = lrugen()
        .args(["exp", "--threads", "0", "--out"])
        .arg(dir.join("out"))
        .arg(root().join("examples/fio-uniform.toml"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small experiment: 2 sweep points × 3 policies × 2 repetitions = 12 cells, quick each.
const SMALL: &str = include_str!("data/small.toml");

fn names(t: &[(String, Vec<u8>)]) -> Vec<&str> {
    t.iter().map(|f| f.0.as_str()).collect()
}

fn exp_run(file: &Path, out: &Path, more: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = lrugen();
    c.arg("exp").arg(file).arg("--out").arg(out).args(more);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Whether plots can be drawn here; under CI a missing font is a failure.
fn have_font(stderr: &str) -> bool {
    if stderr.contains("plots skipped") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no font for the plots under CI: {stderr}"
        );
        eprintln!("plots skipped (no TrueType font; install fonts-dejavu-core): {stderr}");
        return false;
    }
    true
}

#[test]
fn a_directory_lrugen_wrote_is_replaced_whole() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a.toml"), d.path().join("b.toml"));
    std::fs::write(&a, SMALL).unwrap();
    // another experiment: one point, another metric, so other plot files
    let other = SMALL
        .replace("[sweep]\n\"memcg.max\" = [\"512K\", \"1M\"]\n", "")
        .replace("name = \"small\"", "name = \"other\"\nmetric = \"misses\"");
    std::fs::write(&b, other).unwrap();
    let out = d.path().join("out");
    let o = exp_run(&a, &out, &[], &[]);
    ok(&o);
    let first = tree(&out);
    assert!(names(&first).contains(&"results.json"));
    let o = exp_run(&b, &out, &[], &[]);
    ok(&o);
    let second = tree(&out);
    // nothing of the first run stays: every file is the second run's, listed in its marker
    let marker: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join(".lrugen-exp.json")).unwrap()).unwrap();
    assert_eq!(marker["of"]["experiment"], "other");
    assert_eq!(marker["complete"], true);
    let listed: Vec<&str> = marker["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let mut on_disk = names(&second);
    on_disk.retain(|f| *f != ".lrugen-exp.json");
    assert_eq!(listed, on_disk);
    if have_font(&String::from_utf8_lossy(&o.stderr)) {
        assert!(names(&first).contains(&"bar-hit_ratio-p1.svg"), "{:?}", names(&first));
        assert!(
            !names(&second)
                .iter()
                .any(|f| f.contains("hit_ratio") || f.contains("-p1")),
            "{:?}",
            names(&second)
        );
        assert!(names(&second).contains(&"delta-misses-p0.svg"), "{:?}", names(&second));
    }
    // the scratch folder holds the two files and the output, no partial or old directory
    let top: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut top = top;
    top.sort();
    assert_eq!(top, ["a.toml", "b.toml", "out"]);
}

#[test]
fn force_writes_into_a_foreign_directory_and_keeps_its_files() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.toml");
    std::fs::write(&f, SMALL).unwrap();
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("thesis.tex"), "mine").unwrap();
    std::fs::write(out.join("results.csv"), "an old table").unwrap();
    let o = exp_run(&f, &out, &["--no-plots"], &[]);
    assert!(!o.status.success());
    assert_eq!(std::fs::read(out.join("results.csv")).unwrap(), b"an old table");
    ok(&exp_run(&f, &out, &["--no-plots", "--force"], &[]));
    let t = tree(&out);
    assert_eq!(
        names(&t),
        [
            ".lrugen-exp.json",
            "index.html",
            "results.csv",
            "results.json",
            "summary.csv",
            "thesis.tex"
        ]
    );
    assert_eq!(std::fs::read(out.join("thesis.tex")).unwrap(), b"mine");
    assert!(std::fs::read_to_string(out.join("results.csv"))
        .unwrap()
        .starts_with("cell,point,"));
    assert!(!partial_of(&out).exists());
}

/// Interrupted (deterministically, after N cells) and resumed, with several thread counts and
/// interruptions, the output is byte for byte that of an uninterrupted run (plots included).
#[test]
fn interrupt_and_resume_give_the_uninterrupted_results() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.toml");
    std::fs::write(&f, SMALL).unwrap();
    let reference = d.path().join("ref");
    let o = exp_run(&f, &reference, &["--threads", "1"], &[]);
    ok(&o);
    let want = tree(&reference);
    for (threads, stops) in [("1", &["1", "5"][..]), ("2", &["3"][..]), ("3", &["2", "2", "1"][..])] {
        let out = d.path().join(format!("t{threads}"));
        let partial = partial_of(&out);
        for (k, n) in stops.iter().enumerate() {
            let more: Vec<&str> = if k == 0 {
                vec!["--threads", threads]
            } else {
                vec!["--threads", threads, "--resume"]
            };
            let o = exp_run(&f, &out, &more, &[("LRUGEN_EXP_STOP_AFTER", n)]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(130), "threads {threads}, stop {n}: {err}");
            assert!(err.contains("--resume") && err.contains("interrupted"), "{err}");
            assert!(!out.exists(), "the target is written only when complete");
            // the finished cells, with a note of what is missing
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(partial.join("results.json")).unwrap()).unwrap();
            let finished = v["cells"].as_array().unwrap().len();
            assert_eq!(v["interrupted"]["finished"], finished);
            assert_eq!(v["interrupted"]["missing"].as_array().unwrap().len(), 12 - finished);
            let csv = std::fs::read_to_string(partial.join("results.csv")).unwrap();
            assert_eq!(csv.lines().count(), 13);
            assert_eq!(csv.matches("missing: the run was interrupted").count(), 12 - finished);
            assert_eq!(std::fs::read_dir(partial.join("cells")).unwrap().count(), finished);
        }
        let o = exp_run(&f, &out, &["--threads", threads, "--resume"], &[]);
        let stdout = ok(&o);
        assert!(stdout.contains("resuming"), "{stdout}");
        assert!(!partial.exists());
        let got = tree(&out);
        assert_eq!(names(&got), names(&want), "threads {threads}");
        for (g, w) in got.iter().zip(&want) {
            assert!(
                g.1 == w.1,
                "threads {threads}: {} differs from the uninterrupted run's",
                g.0
            );
        }
    }
}

/// Two identical runs give byte-identical SVGs (and PNGs): every element in a fixed order.
#[test]
fn plots_are_byte_identical_between_runs() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("s.toml");
    std::fs::write(&f, SMALL.replace("policies = [\"mglru\", \"classic\", \"lru\"]", "")).unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    let o = exp_run(&f, &a, &["--threads", "2"], &[]);
    ok(&o);
    if !have_font(&String::from_utf8_lossy(&o.stderr)) {
        return;
    }
    ok(&exp_run(&f, &b, &["--threads", "1"], &[]));
    let (ta, tb) = (tree(&a), tree(&b));
    assert_eq!(names(&ta), names(&tb));
    let svgs = ta.iter().filter(|x| x.0.ends_with(".svg")).count();
    // per point: bars, Δ, misses over time, MGLRU generations; and the sweep's Δ over points
    assert_eq!(svgs, 9, "{:?}", names(&ta));
    assert!(names(&ta).contains(&"delta-hit_ratio-sweep.svg"), "{:?}", names(&ta));
    for (x, y) in ta.iter().zip(&tb) {
        assert!(x.1 == y.1, "{} differs between two identical runs", x.0);
    }
    // the texts of the charts: axes with units, policy labels, no tick like "200000.0"
    let texts = |f: &str| -> Vec<String> {
        let svg = String::from_utf8(std::fs::read(a.join(f)).unwrap()).unwrap();
        svg.split("<text")
            .skip(1)
            .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim().to_string()))
            .collect()
    };
    let delta = texts("delta-hit_ratio-p0.svg");
    let has = |ts: &[String], n: &str| ts.iter().any(|t| t.contains(n));
    for needle in [
        "policy (compared with the baseline mglru",
        "(% of mglru), 95% CI",
        "classic",
        "opt",
        "% ± ",
    ] {
        assert!(has(&delta, needle), "{needle} not in the Δ chart: {delta:?}");
    }
    let bar = texts("bar-hit_ratio-p0.svg");
    assert!(
        has(&bar, "hit ratio (%), mean and 95% CI") && bar.iter().any(|t| t == "policy"),
        "{bar:?}"
    );
    for f in ["misses-p0.svg", "bar-hit_ratio-p0.svg", "generations-p0-mglru.svg"] {
        let ts = texts(f);
        assert!(
            ts.iter().any(|t| t.contains("(count)") || t.contains("(%)")),
            "{f}: {ts:?}"
        );
        let bad: Vec<&String> = ts
            .iter()
            .filter(|t| t.ends_with(".0") && t.chars().all(|c| c.is_ascii_digit() || c == '.'))
            .collect();
        assert!(bad.is_empty(), "{f}: ticks {bad:?}");
    }
}

/// A real Ctrl-C (SIGINT) finishes the running cells, writes the finished ones, exits 130; a second
/// abandons the running ones at once; --resume completes the run.
#[cfg(unix)]
#[test]
fn ctrl_c_keeps_the_finished_cells() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("long.toml");
    // 24 cells of about a tenth of a second or more each
    let long = SMALL
        .replace("accesses = 3000", "accesses = 1000000")
        .replace("repetitions = 2", "repetitions = 4");
    std::fs::write(&f, &long).unwrap();
    // For the second Ctrl-C to find runs still going, the runs it abandons must outlast the
    // interval between the two signals however fast the machine: 12 short cells (the first
    // sweep point), then 12 of 20 million accesses, seconds each. A test that signals while
    // short cells run is a race the running cells can win (CI lost it once).
    let g = d.path().join("longer.toml");
    std::fs::write(
        &g,
        long.replace(
            "\"memcg.max\" = [\"512K\", \"1M\"]",
            "\"workload.accesses\" = [3000, 20000000]",
        ),
    )
    .unwrap();
    for signals in [1, 2] {
        let out = d.path().join(format!("out{signals}"));
        let partial = partial_of(&out);
        let (file, wait_for) = if signals == 1 { (&f, 1) } else { (&g, 12) };
        let child = lrugen()
            .arg("exp")
            .arg(file)
            .arg("--out")
            .arg(&out)
            .args(["--no-plots", "--threads", "2"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // wait for a first finished cell (for two signals: for the short ones)
        let start = std::time::Instant::now();
        while std::fs::read_dir(partial.join("cells")).map_or(0, |r| r.count()) < wait_for {
            assert!(start.elapsed().as_secs() < 120, "no cell finished");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        for _ in 0..signals {
            let k = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(k.success());
            std::thread::sleep(std::time::Duration::from_millis(30));
        }
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(130), "{err}");
        assert!(err.contains("interrupted: starting no new run"), "{err}");
        if signals == 2 {
            assert!(err.contains("abandoning the running runs"), "{err}");
        }
        assert!(
            err.contains(&format!("{} --out {} --resume", file.display(), out.display())),
            "{err}"
        );
        assert!(!out.exists());
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(partial.join("results.json")).unwrap()).unwrap();
        let finished = v["cells"].as_array().unwrap().len();
        assert!((1..24).contains(&finished), "{finished}");
        if signals == 2 {
            // the abandoned runs wrote nothing
            assert_eq!(finished, 12);
        }
        assert_eq!(std::fs::read_dir(partial.join("cells")).unwrap().count(), finished);
    }
    // the first resumed run completes with the others' results
    let out = d.path().join("out1");
    ok(&exp_run(&f, &out, &["--no-plots", "--resume"], &[]));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(v["cells"].as_array().unwrap().len(), 24);
    assert!(v.get("interrupted").is_none());
}

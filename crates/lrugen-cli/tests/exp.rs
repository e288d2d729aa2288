// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen exp`: every example runs and writes its files; bad input exits non-zero with a message.

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
        for f in ["results.json", "results.csv", "summary.csv"] {
            assert!(out.join(f).is_file(), "{name}: {f}");
        }
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

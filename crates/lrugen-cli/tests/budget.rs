// SPDX-License-Identifier: GPL-2.0-only
//! Bounded memory, whatever the input (issue #9): the model's state follows the pages a run
//! touches, not the size of its files, and a run over the memory budget is refused before it
//! starts, with a message naming the option at fault, leaving nothing behind.
//!
//! Peak memory is the child's `VmHWM` (the high-water mark of its resident set) read from
//! `/proc/PID/status` while it runs; it only grows, so the last reading before the child exits is
//! its peak up to the polling interval. The child also runs under `ulimit -v` (4 GiB), so that a
//! regression fails the test rather than exhausting the machine.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Run lrugen with `args` in `cwd`; its output and its peak resident set in bytes.
fn run_measured(args: &[&str], cwd: &Path) -> (Output, u64) {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_lrugen"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lrugen");
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    // the pipes are small: drain them on threads while polling
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).unwrap();
        v
    });
    let code = loop {
        if let Ok(s) = std::fs::read_to_string(&status) {
            if let Some(kb) = s
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
            {
                peak = peak.max(kb * 1024);
            }
        }
        if let Some(c) = child.try_wait().unwrap() {
            break c;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let o = Output {
        status: code,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    };
    (o, peak)
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const MB: u64 = 1 << 20;

#[test]
fn a_terabyte_file_read_a_thousand_times_stays_under_100_mb() {
    let d = scratch("lrugen-budget-1t");
    let (o, peak) = run_measured(
        &["run", "--workload", "file-read", "--size", "1T", "--accesses", "1000"],
        &d,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    for p in ["mglru", "classic", "lru", "opt"] {
        assert!(
            out.lines().any(|l| l.starts_with(p) && l.contains("1,000")),
            "{p} missing:\n{out}"
        );
    }
    assert!(peak > 0, "no VmHWM read from /proc");
    assert!(peak < 100 * MB, "peak RSS {} MiB", peak / MB);
}

#[test]
fn a_run_of_a_hundred_billion_blocks_is_refused_in_bounded_memory() {
    let d = scratch("lrugen-budget-arc");
    std::fs::write(d.join("huge.lis"), "0 99999999999 0 0\n").unwrap();
    let (o, peak) = run_measured(
        &[
            "run",
            "--trace",
            "huge.lis",
            "--capacity",
            "1000",
            "--memory-budget",
            "256M",
        ],
        &d,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--trace huge.lis:1: the trace holds more than 67,108,864 page references"),
        "{err}"
    );
    assert!(
        err.contains("over the memory budget of 256 MiB (--memory-budget)"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(peak < 100 * MB, "peak RSS {} MiB", peak / MB);
}

#[test]
fn a_billion_records_are_refused_under_a_small_budget_naming_records() {
    let d = scratch("lrugen-budget-ycsb");
    let (o, peak) = run_measured(
        &[
            "run",
            "--workload",
            "ycsb",
            "--records",
            "1e9",
            "--memory-budget",
            "64M",
        ],
        &d,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("lrugen: error: --records 1000000000: needs up to ~"),
        "{err}"
    );
    assert!(
        err.contains("over the memory budget of 64 MiB (--memory-budget)"),
        "{err}"
    );
    assert!(
        o.stdout.is_empty(),
        "printed results: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(peak < 100 * MB, "peak RSS {} MiB", peak / MB);
    // and with a budget that holds it, the same run starts: the check is not a blanket refusal
    let (o, _) = run_measured(
        &[
            "run",
            "--workload",
            "ycsb",
            "--records",
            "1e9",
            "--accesses",
            "100",
            "--policy",
            "mglru",
            "--memory-budget",
            "64M",
        ],
        &d,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn an_experiment_over_the_budget_writes_no_output() {
    let d = scratch("lrugen-budget-exp");
    std::fs::write(d.join("small.toml"), include_str!("data/small.toml")).unwrap();
    let (o, _) = run_measured(
        &[
            "exp",
            "small.toml",
            "--out",
            "out",
            "--no-plots",
            "--memory-budget",
            "4K",
        ],
        &d,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("small.toml: sweep point "), "{err}");
    assert!(
        err.contains("over the memory budget of 4.0 KiB (--memory-budget)"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("small.toml")], "left behind");
}

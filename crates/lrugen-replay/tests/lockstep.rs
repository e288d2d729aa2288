// SPDX-License-Identifier: GPL-2.0-only
//! The replayer's lockstep (`lockstep K`, op files version 5) on the host: tasks of unequal
//! speed and length finish (no task waits for one that has left), and a fast task waits for a
//! slow one at the end of each round, as the guest's windows show in their timestamps.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run the replayer on `ops` (no files, so no data directory content), at most 60 s.
fn replay(ops: &str) -> String {
    let dir = std::env::temp_dir().join(format!("lrugen-lockstep-{}-{}", std::process::id(), ops.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ops");
    std::fs::write(&path, ops).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lrugen-replay"))
        .arg(&path)
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().ok();
            panic!("the replay did not finish in 60 s (a task waits for one that left?)");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(status.success(), "{err}");
    out
}

/// The `ns` of each window line, in the order printed.
fn window_ns(out: &str) -> Vec<u64> {
    out.lines()
        .filter(|l| l.starts_with("lrugen-replay window"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let i = w.iter().position(|&x| x == "ns").expect("an ns field");
            w[i + 1].parse().unwrap()
        })
        .collect()
}

/// Task 0 sleeps 100 ms between its accesses, task 1 never: free, task 1's three accesses come
/// at once; in lockstep 1, each of task 1's accesses after the first waits for task 0's round.
fn two_speeds(lockstep: &str) -> String {
    format!(
        "lrugen-ops {}\nwindow 1\n{lockstep}task 0\nanon 4\nl 0\nt 100000000\nl 1\nt 100000000\nl 2\ntask 1\nanon 4\nl 0\nl 1\nl 2\n",
        if lockstep.is_empty() { 2 } else { 5 }
    )
}

#[test]
fn a_fast_task_waits_for_the_slow_one_in_lockstep() {
    let late = |out: &str| window_ns(out).iter().filter(|&&ns| ns >= 90_000_000).count();
    let free = replay(&two_speeds(""));
    assert_eq!(window_ns(&free).len(), 6, "{free}");
    assert_eq!(
        late(&free),
        2,
        "free running: only task 0's later accesses are late\n{free}"
    );
    let step = replay(&two_speeds("lockstep 1\n"));
    assert!(step.contains("lrugen-replay total accesses 6 "), "{step}");
    assert_eq!(
        late(&step),
        4,
        "lockstep: task 1's second and third accesses wait\n{step}"
    );
}

#[test]
fn tasks_of_unequal_length_all_finish() {
    // three tasks with 5, 0 and 12 accesses, rounds of 2 and of 1
    for k in [1, 2, 5] {
        let mut ops = format!("lrugen-ops 5\nwindow 0\nlockstep {k}\ntask 0\nanon 8\n");
        for v in 0..5 {
            ops.push_str(&format!("s {v}\n"));
        }
        ops.push_str("task 1\nt 1000\ntask 2\nanon 8\n");
        for v in 0..12 {
            ops.push_str(&format!("l {}\n", v % 8));
        }
        let out = replay(&ops);
        assert!(out.contains("lrugen-replay total accesses 17 "), "lockstep {k}: {out}");
        for (t, n) in [(0, 5), (1, 0), (2, 12)] {
            assert!(
                out.contains(&format!("lrugen-replay task {t} accesses {n} ")),
                "lockstep {k}: {out}"
            );
        }
    }
}

/// A bad `--progress` value is an error naming the option and the value, not the usage line.
#[test]
fn a_bad_progress_value_is_named() {
    let dir = std::env::temp_dir().join(format!("lrugen-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ops");
    std::fs::write(&path, "lrugen-ops 1\nanon 1\nl 0\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lrugen-replay"))
        .arg(&path)
        .arg(&dir)
        .args(["--progress", "ten"])
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--progress: expected a number of access ops, found 'ten'"),
        "{err}"
    );
}

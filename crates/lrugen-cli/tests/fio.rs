// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen run --fio JOB.fio --output-format=json|normal` as a user runs it, on the job files
//! checked in under `examples/fio/`: the JSON parses and holds fio's keys in fio's order, one
//! entry per job (one per group under `group_reporting`), its numbers agree with each other
//! (io_bytes = total_ios × bs, IOPS = total_ios / runtime, percentiles monotone), the text has
//! fio's line shapes, two runs print the same bytes, and bad job files are refused naming the
//! file, the line and what was expected, with a non-zero exit and no panic.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::lrugen;

fn example(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/fio")
        .join(name);
    assert!(p.exists(), "{} is checked in", p.display());
    p.to_str().expect("a UTF-8 path").to_string()
}

/// Run a job file with `--output-format=format` (and `extra`); its stdout, after asserting success.
fn run(job: &str, format: &str, extra: &[&str]) -> String {
    let fmt = format!("--output-format={format}");
    let mut args = vec!["run", "--fio", job, "--policy", "mglru", fmt.as_str()];
    args.extend_from_slice(extra);
    let o = lrugen(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "lrugen {} failed ({}):\n{err}",
        args.join(" "),
        o.status
    );
    assert!(!err.contains("panicked"), "{err}");
    String::from_utf8(o.stdout).expect("stdout is UTF-8")
}

fn json(job: &str, extra: &[&str]) -> Value {
    let s = run(job, "json", extra);
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("not JSON ({e}):\n{s}"))
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k}: expected an integer in {v}"))
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k}: expected a number in {v}"))
}

/// What holds for every read direction of an entry that did I/O.
fn check_read(read: &Value) {
    let ios = u(read, "total_ios");
    assert!(ios > 0, "{read}");
    assert_eq!(u(read, "io_bytes"), ios * 4096, "io_bytes = total_ios × bs");
    assert_eq!(u(read, "io_kbytes"), ios * 4);
    let rt = u(read, "runtime");
    assert!(rt > 0);
    let iops = f(read, "iops");
    assert!(
        (iops - ios as f64 * 1000.0 / rt as f64).abs() < 1e-6,
        "iops {iops} for {ios} I/Os in {rt} ms"
    );
    assert_eq!(u(read, "bw_bytes"), ios * 4096 * 1000 / rt);
    assert_eq!(u(read, "bw"), u(read, "bw_bytes") / 1024);
    let clat = &read["clat_ns"];
    assert_eq!(u(clat, "N"), ios);
    let (min, max) = (u(clat, "min"), u(clat, "max"));
    let mean = f(clat, "mean");
    assert!(min as f64 <= mean && mean <= max as f64, "{clat}");
    let p = clat["percentile"].as_object().expect("clat_ns.percentile");
    assert_eq!(p.len(), 17, "fio's default percentile list");
    // (serde_json sorts the keys as text when parsing: order them as numbers)
    let mut pv: Vec<(f64, u64)> = p
        .iter()
        .map(|(k, v)| (k.parse().expect("a percentile key"), v.as_u64().expect("a latency")))
        .collect();
    pv.sort_by(|x, y| x.0.total_cmp(&y.0));
    assert_eq!(pv[0].0, 1.0);
    assert_eq!(pv[16].0, 99.99);
    assert!(
        p.keys().all(|k| k.len() > 7 && k.ends_with("000")),
        "keys as fio's %f: {p:?}"
    );
    let vals: Vec<u64> = pv.iter().map(|x| x.1).collect();
    assert!(vals.windows(2).all(|w| w[0] <= w[1]), "percentiles monotone: {vals:?}");
    assert!(vals.iter().all(|&v| v <= max.max(vals[16])), "{vals:?} max {max}");
    let hit = f(read, "cachehit");
    assert!((0.0..=100.0).contains(&hit));
}

/// The keys of an object in the order printed (serde_json sorts them when parsing).
fn key_order(text: &str, indent: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    text.lines()
        .filter_map(|l| l.strip_prefix(&pad))
        .filter(|l| l.starts_with('"'))
        .map(|l| l[1..].split('"').next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn randread_zipf_json() {
    let job = example("randread-zipf.fio");
    let text = run(&job, "json", &["--memcg-max", "8M"]);
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    // fio's top-level keys in fio's order, and no wall clock
    assert_eq!(
        key_order(&text, 2),
        [
            "fio version",
            "timestamp",
            "timestamp_ms",
            "time",
            "global options",
            "jobs",
            "disk_util"
        ]
    );
    assert_eq!(u(&doc, "timestamp"), 0);
    assert_eq!(doc["global options"]["random_distribution"], "zipf:0.9");
    let jobs = doc["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 1);
    let j = &jobs[0];
    assert_eq!(j["jobname"], "randread-zipf");
    assert_eq!(u(j, "groupid"), 0);
    let read = &j["read"];
    check_read(read);
    // run to its size: 16 MiB of 4 KiB reads
    assert_eq!(u(read, "total_ios"), 4096);
    assert_eq!(u(&j["write"], "total_ios"), 0);
    // the read direction's keys in fio's order
    let ord = key_order(&text, 8);
    let at = |k: &str| {
        ord.iter()
            .position(|x| x == k)
            .unwrap_or_else(|| panic!("{k} in {ord:?}"))
    };
    assert!(at("io_bytes") < at("bw_bytes") && at("bw_bytes") < at("iops") && at("iops") < at("runtime"));
    assert!(at("slat_ns") < at("clat_ns") && at("clat_ns") < at("lat_ns") && at("lat_ns") < at("bw_min"));
}

#[test]
fn numjobs_time_based_one_entry_per_job() {
    let job = example("numjobs4-timebased.fio");
    let doc = json(&job, &["--memcg-max", "16M"]);
    let jobs = doc["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 4, "numjobs=4 without group_reporting: four entries");
    let mut agg = 0.0;
    for j in jobs {
        assert_eq!(j["jobname"], "tb");
        assert_eq!(j["lrugen"]["jobs"], 1);
        let read = &j["read"];
        check_read(read);
        // time based: each job runs its 200 ms (to the millisecond fio rounds to)
        let rt = u(read, "runtime");
        assert!((200..=202).contains(&rt), "runtime {rt} ms");
        agg += f(read, "bw_agg");
        assert_eq!(j["iodepth_level"]["4"], 100.0);
    }
    assert!(
        (agg - 100.0).abs() < 0.1,
        "bw_agg: each job's share of its group, {agg}"
    );
}

#[test]
fn group_reporting_one_entry_per_group() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = std::fs::read_to_string(example("numjobs4-timebased.fio")).expect("read");
    let grouped = dir.path().join("grouped.fio");
    std::fs::write(&grouped, src.replace("[tb]\n", "[tb]\ngroup_reporting\n")).expect("write");
    let per_job = json(&example("numjobs4-timebased.fio"), &["--memcg-max", "16M"]);
    let doc = json(grouped.to_str().expect("UTF-8"), &["--memcg-max", "16M"]);
    let jobs = doc["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 1, "group_reporting: one entry for the group");
    assert_eq!(jobs[0]["lrugen"]["jobs"], 4);
    check_read(&jobs[0]["read"]);
    let sum: u64 = per_job["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| u(&j["read"], "total_ios"))
        .sum();
    assert_eq!(u(&jobs[0]["read"], "total_ios"), sum, "the group's I/Os are its jobs'");
}

#[test]
fn same_job_file_same_bytes() {
    for (job, mem) in [("randread-zipf.fio", "8M"), ("numjobs4-timebased.fio", "16M")] {
        let job = example(job);
        for format in ["json", "normal"] {
            let a = run(&job, format, &["--memcg-max", mem, "--seed", "7"]);
            let b = run(&job, format, &["--memcg-max", mem, "--seed", "7"]);
            assert_eq!(a, b, "{job} --output-format={format}: two runs differ");
        }
    }
}

#[test]
fn normal_has_fios_line_shapes() {
    let text = run(&example("numjobs4-timebased.fio"), "normal", &["--memcg-max", "16M"]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("tb: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=io_uring, iodepth=4"),
        "{}",
        lines[0]
    );
    let count = |p: &str| lines.iter().filter(|l| l.starts_with(p)).count();
    assert_eq!(count("tb: (groupid=0, jobs=1): err= 0"), 4, "{text}");
    assert_eq!(count("  read: IOPS="), 4, "{text}");
    assert_eq!(count("    clat (usec): min="), 4, "{text}");
    assert_eq!(count("     lat (usec): min="), 4, "{text}");
    assert_eq!(count("    clat percentiles (usec):"), 4, "{text}");
    assert_eq!(count("     |  1.00th=["), 4, "{text}");
    assert!(lines.iter().any(|l| l.contains("99.99th=[")), "{text}");
    for l in lines.iter().filter(|l| l.starts_with("  read: IOPS=")) {
        assert!(
            l.contains(", BW=") && l.contains("MiB/s (") && l.ends_with("msec)"),
            "{l}"
        );
    }
    assert!(text.contains("\nRun status group 0 (all jobs):\n"), "{text}");
    let status = lines
        .iter()
        .find(|l| l.starts_with("   READ: bw="))
        .expect("a READ line");
    assert!(
        status.contains(", io=") && status.contains("run=") && status.ends_with("msec"),
        "{status}"
    );
}

/// A bad job file: exit 1, the file and line named with what was expected, no panic, no stdout.
#[test]
fn bad_job_files_are_refused() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "[global]\nrw=randread\n[a]\nsize=1m\nbogus=3\n",
            ":5:",
            &["'bogus'", "expected one of"],
        ),
        ("[a]\nsize=12q\n", ":2:", &["size=12q", "expected a whole number"]),
        ("[a]\nsize=1m\nbs=16k\n", ":3:", &["only 4 KiB", "expected bs=4k"]),
        (
            "[a]\nsize=1m\nrandom_distribution=zipf:x\n",
            ":3:",
            &["random_distribution"],
        ),
    ];
    for (i, (text, line, needles)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("bad{i}.fio"));
        std::fs::write(&p, text).expect("write");
        let path = p.to_str().expect("UTF-8");
        let o = lrugen(&["run", "--fio", path, "--policy", "mglru", "--output-format=json"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{text:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            o.stdout.is_empty(),
            "{text:?}: printed {:?}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(
            err.contains(&format!("{path}{line}")),
            "{text:?}: expected {path}{line} in {err}"
        );
        for n in *needles {
            assert!(err.contains(n), "{text:?}: expected {n:?} in {err}");
        }
    }
    // a missing job file names the file
    let missing: PathBuf = dir.path().join("missing.fio");
    let o = lrugen(&[
        "run",
        "--fio",
        missing.to_str().unwrap(),
        "--policy",
        "mglru",
        "--output-format=json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.fio"));
    // formats fio has that are not written, and the flag without --fio
    let o = lrugen(&["run", "--fio", &example("randread-zipf.fio"), "--output-format=terse"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("expected normal or json"));
    let o = lrugen(&["run", "--output-format=json", "--accesses", "10"]);
    assert_eq!(o.status.code(), Some(2));
    // one kernel policy, refused before the run
    for (policy, needle) in [
        ("mglru,classic", "expected one kernel policy"),
        ("opt", "expected --policy mglru or classic"),
    ] {
        let o = lrugen(&[
            "run",
            "--fio",
            &example("randread-zipf.fio"),
            "--policy",
            policy,
            "--output-format=json",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(needle) && o.stdout.is_empty(), "{policy}: {err}");
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! Full-size presets (`examples/presets/`, issue 12 item 5): the `[full]` table of an experiment
//! file (`lrugen exp --full`), what it may change and its errors; array elements in sweep and
//! `[full]` paths; a mix part's think time; and every preset parsing at both sizes with its
//! source stated.

use lrugen::experiment::{self, ExpError, Experiment};
use lrugen::workload::WorkloadSpec;
use std::path::Path;

const SCALED: &str = r#"
name = "sized"
description = "scaled"
repetitions = 2
seed = 5
policies = ["mglru", "classic"]

[machine]
memory = "64M"

[memcg]
max = "1M"

[workload]
kind = "file-read"
files = 2
file_pages = "1M"
dist = "zipf:0.9"
accesses = 3000

[sweep]
"workload.dist.theta" = [0.6, 0.9]

[full]
description = "published"
repetitions = 3
"memcg.max" = "2M"
"workload.file_pages" = "2M"
"sweep.workload.dist.theta" = [0.8, 1.1, 1.2]
"#;

fn parse(text: &str, full: bool) -> Result<Experiment, ExpError> {
    Experiment::parse_at_scale(text, Path::new("t.toml"), full)
}

fn err(text: &str, full: bool) -> (Option<usize>, String) {
    match parse(text, full) {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(ExpError::Parse { line, message, .. }) => (line, message),
        Err(e) => panic!("not a parse error: {e}"),
    }
}

fn file_pages(e: &Experiment, point: usize) -> u64 {
    match &e.points[point].config.workload {
        WorkloadSpec::FileRead { file_pages, .. } => *file_pages,
        w => panic!("{w:?}"),
    }
}

#[test]
fn full_replaces_the_scaled_values() {
    let s = parse(SCALED, false).unwrap();
    assert!(s.has_full && !s.full);
    assert_eq!(s.description.as_deref(), Some("scaled"));
    assert_eq!((s.repetitions, s.points.len()), (2, 2));
    assert_eq!(s.points[0].config.memcg.max, Some(256));
    assert_eq!(file_pages(&s, 0), 256);
    let f = parse(SCALED, true).unwrap();
    assert!(f.has_full && f.full);
    assert_eq!(f.description.as_deref(), Some("published"));
    assert_eq!((f.repetitions, f.points.len()), (3, 3));
    assert_eq!(f.points[0].config.memcg.max, Some(512));
    assert_eq!(file_pages(&f, 2), 512);
    let labels: Vec<String> = f.points.iter().map(|p| p.label()).collect();
    assert_eq!(
        labels,
        [
            "workload.dist.theta=0.8",
            "workload.dist.theta=1.1",
            "workload.dist.theta=1.2"
        ]
    );
    // a file without [full] reads the same at both sizes
    let plain = SCALED.split("[full]").next().unwrap();
    let a = parse(plain, true).unwrap();
    assert!(!a.has_full);
    assert_eq!(a.points.len(), 2);
}

#[test]
fn full_errors_name_the_line_even_when_not_applied() {
    let full_at = SCALED.lines().position(|l| l == "[full]").unwrap() + 1;
    // an unknown key
    let t = SCALED.replace("repetitions = 3\n", "repetitons = 3\n");
    let (line, msg) = err(&t, false);
    assert_eq!(line, Some(full_at + 2), "{msg}");
    assert!(
        msg.contains("[full] repetitons") && msg.contains("dotted path"),
        "{msg}"
    );
    // a value the published setup cannot take, found without --full
    let t = SCALED.replace("\"memcg.max\" = \"2M\"", "\"memcg.max\" = \"2Q\"");
    let (line, msg) = err(&t, false);
    assert_eq!(line, Some(full_at + 3), "{msg}");
    assert!(msg.contains("[full]") && msg.contains("memcg.max"), "{msg}");
    let (line, msg) = err(&t, true);
    assert_eq!(line, Some(full_at + 3), "{msg}");
    // a sweep that is not there
    let t = SCALED.replace("\"sweep.workload.dist.theta\"", "\"sweep.memcg.max\"");
    let (line, msg) = err(&t, false);
    assert_eq!(line, Some(full_at + 5), "{msg}");
    assert!(
        msg.contains("not swept") && msg.contains("sweep.workload.dist.theta"),
        "{msg}"
    );
    for (bad, want) in [
        ("repetitions = 3\n", "repetitions = 0\n"),
        (
            "\"sweep.workload.dist.theta\" = [0.8, 1.1, 1.2]",
            "\"sweep.workload.dist.theta\" = []",
        ),
        ("description = \"published\"", "description = 7"),
    ] {
        let (line, msg) = err(&SCALED.replace(bad, want), false);
        assert!(line.is_some_and(|l| l > full_at), "{want}: {msg}");
        assert!(msg.starts_with("[full]"), "{want}: {msg}");
    }
}

/// A mix of an anon part and a file part, the first part's dist swept through its element
/// number, and the second part paced by think time.
const MIX: &str = r#"
name = "mix"
policies = ["mglru"]

[machine]
memory = "64M"
swap = "16M"

[workload]
kind = "mix"

[[workload.parts]]
workload = { kind = "file-read", files = 1, file_pages = "2M", dist = "zipf:0.9", accesses = 2000 }

[[workload.parts]]
think_ns = 0
workload = { kind = "anon", pages = "1M", write_ratio = 0.3, dist = "zipf:0.9", accesses = 2000 }

[engine]
cpus = 2

[sweep]
"workload.parts.0.workload.dist" = ["zipf:0.6", "uniform"]
"#;

#[test]
fn sweep_paths_reach_array_elements() {
    let e = parse(MIX, false).unwrap();
    assert_eq!(e.points.len(), 2);
    for (p, want) in e.points.iter().zip(["Zipf", "Uniform"]) {
        let WorkloadSpec::Mix { parts } = &p.config.workload else {
            panic!()
        };
        match &parts[0].workload {
            WorkloadSpec::FileRead { dist, .. } => assert!(format!("{dist:?}").starts_with(want), "{dist:?}"),
            w => panic!("{w:?}"),
        }
    }
    let (_, msg) = err(&MIX.replace("parts.0.workload.dist", "parts.2.workload.dist"), false);
    assert!(msg.contains("has 2 elements: no element 2"), "{msg}");
    let (_, msg) = err(&MIX.replace("parts.0.workload.dist", "parts.workload.dist"), false);
    assert!(msg.contains("is an array: expected an element number"), "{msg}");
}

/// Think time after each page operation of a part stretches that part's tasks in virtual time
/// by at least its accesses times the think time, and leaves their accesses as they were.
#[test]
fn a_parts_think_time_paces_its_tasks() {
    let run = |think: u64| {
        let t = MIX.replace("think_ns = 0", &format!("think_ns = {think}")).replace(
            "[sweep]\n\"workload.parts.0.workload.dist\" = [\"zipf:0.6\", \"uniform\"]\n",
            "",
        );
        let e = parse(&t, false).unwrap();
        let r = experiment::run(&e, Some(1), &|_, _| {}).unwrap();
        let m = &r.cells[0].metrics;
        (m["virtual_s"], m["accesses"])
    };
    let (t0, a0) = run(0);
    let (t1, a1) = run(100_000);
    assert_eq!(a0, a1, "think time is not an access");
    // the anon part's 2,000 accesses, each followed by 100 µs of thinking, outlast the file
    // part's (about 25 ms)
    assert!(t0 < 0.1 && t1 >= 2000.0 * 100e-6, "{t0} s -> {t1} s");
}

#[test]
fn every_preset_runs_at_both_sizes_and_states_its_source() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/presets");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        n += 1;
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.contains("workloads.md §"),
            "{}: names no source setup",
            p.display()
        );
        assert!(text.contains("Scaled"), "{}: says nothing of its scale", p.display());
        let s = Experiment::from_file(&p).unwrap_or_else(|e| panic!("{e}"));
        let (f, _) = Experiment::from_file_hashed_at(&p, true).unwrap_or_else(|e| panic!("{e}"));
        assert!(s.has_full && f.full, "{}", p.display());
        assert_ne!(s.description, f.description, "{}", p.display());
        let mem = |e: &Experiment| e.points[0].config.machine.total_pages();
        assert!(
            mem(&f) >= 32 * mem(&s),
            "{}: {} -> {} pages",
            p.display(),
            mem(&s),
            mem(&f)
        );
        assert!(
            s.variants.iter().any(|v| v.label == "classic") && s.variants.len() >= 4,
            "{}: MGLRU of each profile against classic",
            p.display()
        );
    }
    assert!(n >= 6, "{n} presets");
}

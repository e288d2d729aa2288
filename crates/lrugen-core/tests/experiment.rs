// SPDX-License-Identifier: GPL-2.0-only
//! Experiment files: parsing and its errors, the matrix and its seeds, the statistics in the
//! results, and determinism whatever the number of threads.

use lrugen::experiment::{self, output, seed_for, ExpError, Experiment};
use lrugen::sim::PolicyKind;
use lrugen::workload::dist::Dist;
use lrugen::workload::WorkloadSpec;
use std::path::Path;

fn parse(text: &str) -> Result<Experiment, ExpError> {
    Experiment::parse(text, Path::new("t.toml"))
}

/// The error's line and message.
fn err(text: &str) -> (Option<usize>, String) {
    match parse(text) {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(ExpError::Parse {
            file, line, message, ..
        }) => {
            assert_eq!(file, Path::new("t.toml"));
            (line, message)
        }
        Err(e) => panic!("not a parse error: {e}"),
    }
}

const TINY: &str = r#"
name = "tiny"
repetitions = 2
seed = 5
policies = ["mglru", "classic", "lru"]

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
"memcg.max" = ["512K", 256]
"#;

#[test]
fn parses_a_valid_file() {
    let e = parse(TINY).unwrap();
    assert_eq!(e.name, "tiny");
    assert_eq!((e.repetitions, e.seed, e.baseline), (2, 5, 0));
    let labels: Vec<&str> = e.variants.iter().map(|v| v.label.as_str()).collect();
    assert_eq!(labels, ["mglru", "classic", "lru"]);
    assert_eq!(e.metric, "hit_ratio");
    assert_eq!(e.points.len(), 2);
    assert_eq!(e.points[0].params, [("memcg.max".to_string(), "512K".to_string())]);
    assert_eq!(e.points[0].config.memcg.max, Some(128));
    assert_eq!(e.points[1].config.memcg.max, Some(256));
    assert_eq!(e.points[0].config.machine.total_pages(), 16_384);
    match &e.points[0].config.workload {
        WorkloadSpec::FileRead {
            files,
            file_pages,
            dist,
            accesses,
        } => {
            assert_eq!((*files, *file_pages, *accesses), (2, 256, 3000));
            assert_eq!(*dist, Dist::Zipf { theta: 0.9 });
        }
        w => panic!("{w:?}"),
    }
    assert!(e.skip.is_none());
}

#[test]
fn defaults_profiles_and_baseline() {
    let e = parse(
        r#"
profiles = ["6.1", "mainline"]
baseline = "classic"
metric = "refaults"
[memcg]
max = 1000
[workload]
kind = "anon"
pages = 2000
write_ratio = 0.5
dist = { kind = "uniform" }
accesses = 10
"#,
    )
    .unwrap();
    let labels: Vec<&str> = e.variants.iter().map(|v| v.label.as_str()).collect();
    assert_eq!(labels, ["mglru-6.1", "mglru-7.2", "classic", "lru", "opt"]);
    assert_eq!(e.baseline, 2);
    assert_eq!((e.repetitions, e.seed, e.samples), (1, 1, 100));
    assert_eq!(e.metric, "refaults");
    // Memory sized as the CLI sizes it: the limit plus max(limit, 64 MiB).
    assert_eq!(e.points[0].config.machine.total_pages(), 1000 + 16_384);
    assert_eq!(e.points.len(), 1);
    assert_eq!(e.points[0].label(), "-");
    // Nodes and zones instead of memory.
    let e = parse(
        r#"
[machine]
nodes = [[{ zone = "dma32", size = "4M" }, { zone = "normal", size = 2048 }], [{ zone = "normal", size = "8M" }]]
[workload]
kind = "trace"
path = "x"
"#,
    )
    .unwrap();
    use lrugen::mm::node::ZoneType;
    assert_eq!(
        e.points[0].config.machine.nodes,
        vec![
            vec![(ZoneType::Dma32, 1024), (ZoneType::Normal, 2048)],
            vec![(ZoneType::Normal, 2048)]
        ]
    );
}

#[test]
fn errors_name_the_file_line_and_expectation() {
    // TOML syntax.
    let (line, msg) = err("name = \"x\"\nrepetitions = \n");
    assert_eq!(line, Some(2), "{msg}");
    // An unknown top-level key.
    let (line, msg) = err("name = \"x\"\nrepetitons = 3\n[workload]\nkind = \"trace\"\npath = \"x\"\n");
    assert_eq!(line, Some(2));
    assert!(
        msg.contains("unknown field `repetitons`") && msg.contains("expected"),
        "{msg}"
    );
    // An unknown key in a section.
    let (line, msg) = err("[machine]\nmemory = \"1G\"\nswapiness = 10\n[workload]\nkind = \"trace\"\npath = \"x\"\n");
    assert_eq!(line, Some(3));
    assert!(
        msg.contains("unknown field `swapiness`") && msg.contains("swappiness"),
        "{msg}"
    );
    // An unknown key in the workload (whose type does not deny them itself).
    let (line, msg) = err(
        "[memcg]\nmax = 10\n[workload]\nkind = \"file-read\"\nfiles = 1\nfile_pages = 10\ndist = \"uniform\"\naccesses = 5\nacesses = 6\n",
    );
    assert_eq!(line, Some(9), "{msg}");
    assert!(
        msg.contains("unknown key `acesses`") && msg.contains("accesses"),
        "{msg}"
    );
    // An unknown workload kind.
    let (line, msg) = err("[memcg]\nmax = 10\n[workload]\nkind = \"nosuch\"\n");
    assert_eq!(line, Some(3), "{msg}");
    assert!(
        msg.contains("unknown variant `nosuch`") && msg.contains("file-read"),
        "{msg}"
    );
    // A missing workload field.
    let (_, msg) = err("[memcg]\nmax = 10\n[workload]\nkind = \"anon\"\npages = 10\n");
    assert!(msg.contains("missing field"), "{msg}");
    // Bad sizes.
    let (line, msg) = err("[memcg]\nmax = \"12X\"\n[workload]\nkind = \"trace\"\npath = \"x\"\n");
    assert_eq!(line, Some(2));
    assert!(msg.contains("unknown unit 'X'"), "{msg}");
    let (line, msg) = err("[memcg]\nmax = \"4096\"\n[workload]\nkind = \"trace\"\npath = \"x\"\n");
    assert_eq!(line, Some(2));
    assert!(msg.contains("no unit"), "{msg}");
    let (line, msg) = err("[memcg]\nmax = 10\n[workload]\nkind = \"anon\"\npages = \"1Q\"\nwrite_ratio = 0.1\ndist = \"uniform\"\naccesses = 1\n");
    assert_eq!(line, Some(5), "{msg}");
    assert!(msg.contains("unknown unit"), "{msg}");
    // A bad distribution string.
    let (line, msg) = err("[memcg]\nmax = 10\n[workload]\nkind = \"anon\"\npages = 10\nwrite_ratio = 0.1\ndist = \"pareto\"\naccesses = 1\n");
    assert_eq!(line, Some(7), "{msg}");
    assert!(msg.contains("expected 'uniform', 'zipf:THETA'"), "{msg}");
    // A workload that fails its own checks.
    let (line, msg) = err("[memcg]\nmax = 10\n[workload]\nkind = \"anon\"\npages = 10\nwrite_ratio = 1.5\ndist = \"uniform\"\naccesses = 1\n");
    assert_eq!(line, Some(3), "{msg}");
    assert!(msg.contains("write ratio 1.5"), "{msg}");
    // Policies, profiles, baseline, metric.
    let w = "[memcg]\nmax = 10\n[workload]\nkind = \"trace\"\npath = \"x\"\n";
    let (line, msg) = err(&format!("policies = [\"mglru\",\n  \"lfu\"]\n{w}"));
    assert_eq!(line, Some(2));
    assert!(
        msg.contains("unknown policy 'lfu'") && msg.contains("mglru, classic, lru, opt"),
        "{msg}"
    );
    let (line, msg) = err(&format!("profiles = [\"5.15\"]\n{w}"));
    assert_eq!(line, Some(1));
    assert!(
        msg.contains("expected 6.1, 6.12, 6.17, 7.2, mainline or mglru-fg"),
        "{msg}"
    );
    let (line, msg) = err(&format!("policies = [\"lru\"]\nbaseline = \"opt\"\n{w}"));
    assert_eq!(line, Some(2));
    assert!(msg.contains("expected one of lru"), "{msg}");
    let (line, msg) = err(&format!("\nmetric = \"speed\"\n{w}"));
    assert_eq!(line, Some(2));
    assert!(
        msg.contains("unknown metric 'speed'") && msg.contains("hit_ratio"),
        "{msg}"
    );
    let (line, msg) = err(&format!("repetitions = 0\n{w}"));
    assert_eq!(line, Some(1));
    assert!(msg.contains("at least 1"), "{msg}");
    let (line, msg) = err(&format!("policies = [\"lru\", \"lru\"]\n{w}"));
    assert_eq!(line, Some(1));
    assert!(msg.contains("twice"), "{msg}");
    // Sweeps: a path outside the sweepable sections, a value that is not an array, a key that
    // does not exist, a value of the wrong type.
    let (line, msg) = err(&format!("{w}[sweep]\n\"seed\" = [1, 2]\n"));
    assert_eq!(line, Some(7));
    assert!(msg.contains("cannot sweep 'seed'"), "{msg}");
    let (line, msg) = err(&format!("{w}[sweep]\n\"memcg.max\" = 5\n"));
    assert_eq!(line, Some(7));
    assert!(msg.contains("non-empty array"), "{msg}");
    let (line, msg) = err(&format!("{w}[sweep]\n\"memcg.maxx\" = [1, 2]\n"));
    assert_eq!(line, Some(7));
    assert!(msg.contains("unknown field `maxx`"), "{msg}");
    let (line, msg) = err(&format!("{w}\n[sweep]\n\"memcg.max\" = [1, \"lots\"]\n"));
    assert_eq!(line, Some(8));
    assert!(msg.contains("memcg.max = lots") && msg.contains("bad size"), "{msg}");
    let (line, msg) = err(&format!("{w}[sweep]\n\"memcg.swappiness\" = [60, 300]\n"));
    assert_eq!(line, Some(7));
    assert!(msg.contains("out of range"), "{msg}");
    // vm.page-cluster: 0..=31, the kernel's 3 when not given
    let (line, msg) =
        err("[machine]\nmemory = \"1G\"\npage_cluster = 32\n[workload]\nkind = \"trace\"\npath = \"x\"\n");
    assert_eq!(line, Some(3), "{msg}");
    assert!(msg.contains("page_cluster 32 is out of range 0..=31"), "{msg}");
    let ok = |pc: &str| {
        parse(&format!(
            "[machine]\nmemory = \"1G\"\n{pc}[workload]\nkind = \"trace\"\npath = \"x\"\n"
        ))
        .unwrap()
        .points[0]
            .config
            .machine
            .page_cluster
    };
    assert_eq!((ok(""), ok("page_cluster = 0\n")), (3, 0));
    // transparent_hugepage: never unless asked, one of the sysfs file's three words
    let thp = |t: &str| {
        parse(&format!(
            "[machine]\nmemory = \"1G\"\n{t}[workload]\nkind = \"trace\"\npath = \"x\"\n"
        ))
        .unwrap()
        .points[0]
            .config
            .machine
            .thp
    };
    use lrugen::mm::thp::Thp;
    assert_eq!(
        [
            thp(""),
            thp("thp = \"always\"\n"),
            thp("thp = \"madvise\"\n"),
            thp("thp = \"never\"\n")
        ],
        [Thp::Never, Thp::Always, Thp::Madvise, Thp::Never]
    );
    let (line, msg) =
        err("[machine]\nmemory = \"1G\"\nthp = \"sometimes\"\n[workload]\nkind = \"trace\"\npath = \"x\"\n");
    assert_eq!(line, Some(3), "{msg}");
    assert!(
        msg.contains("always") && msg.contains("madvise") && msg.contains("never"),
        "{msg}"
    );
    // Machine: neither memory nor a memcg limit.
    let (_, msg) = err("[workload]\nkind = \"trace\"\npath = \"x\"\n");
    assert!(msg.contains("machine.memory is required"), "{msg}");
    // A missing file.
    let e = Experiment::from_file(Path::new("/nonexistent/x.toml")).unwrap_err();
    assert!(
        e.to_string().starts_with("/nonexistent/x.toml: cannot read the file"),
        "{e}"
    );
}

#[test]
fn error_display_has_file_line_column() {
    let e = parse("[memcg]\nmax = \"12X\"\n").unwrap_err();
    assert!(e.to_string().starts_with("t.toml:2:7: "), "{e}");
}

#[test]
fn matrix_and_paired_seeds() {
    let e = parse(TINY).unwrap();
    let cells = e.cells();
    // 2 points x 3 policies x 2 repetitions, point outermost, repetition fastest.
    assert_eq!(cells.len(), 12);
    for (i, c) in cells.iter().enumerate() {
        assert_eq!(c.index, i);
        assert_eq!(c.point, i / 6);
        assert_eq!(c.variant, (i / 2) % 3);
        assert_eq!(c.repetition as usize, i % 2);
        assert_eq!(c.seed, seed_for(5, c.repetition));
    }
    assert_ne!(seed_for(5, 0), seed_for(5, 1));
    assert_ne!(seed_for(5, 0), seed_for(6, 0));
    assert_eq!(seed_for(5, 1), seed_for(5, 1));
    // Several sweeps: the cross product, the last parameter (alphabetically) fastest.
    let e = parse(&TINY.replace(
        "[sweep]\n",
        "[sweep]\n\"workload.dist.theta\" = [0.5, 1.5, 2.0]\n\"machine.swappiness\" = [0, 200]\n",
    ))
    .unwrap();
    assert_eq!(e.points.len(), 2 * 2 * 3);
    let paths: Vec<&str> = e.sweep.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(paths, ["machine.swappiness", "memcg.max", "workload.dist.theta"]);
    assert_eq!(
        e.points[1].label(),
        "machine.swappiness=0, memcg.max=512K, workload.dist.theta=1.5"
    );
    assert_eq!(e.points[11].config.machine.swappiness, 200);
    assert_eq!(e.points[11].config.memcg.max, Some(256));
    assert!(matches!(
        e.points[11].config.workload,
        WorkloadSpec::FileRead { dist: Dist::Zipf { theta }, .. } if theta == 2.0
    ));
    // The run configurations: same seed for every policy, the profile per variant.
    let cells = e.cells();
    let a = e.run_config(&cells[0], None);
    let b = e.run_config(&cells[2], None);
    assert_eq!((a.policy, b.policy), (PolicyKind::Mglru, PolicyKind::Classic));
    assert_eq!(a.seed, b.seed);
    assert_eq!(a.capacity, Some(128));
}

#[test]
fn runs_and_summarizes() {
    let e = parse(TINY).unwrap();
    let r = experiment::run(&e, Some(2), &|_, _| {}).unwrap();
    assert_eq!(r.cells.len(), 12);
    for c in &r.cells {
        let m = &c.metrics;
        assert_eq!(m["accesses"], 3000.0);
        assert_eq!(m["hits"] + m["misses"] + m["minor_faults"], 3000.0);
        // Kernel policies have kernel counters and series of about 100 samples.
        let kernel = c.policy != "lru";
        assert_eq!(m.contains_key("pgscan"), kernel, "{}", c.policy);
        if kernel {
            let s = &c.series["misses"];
            assert!((90..=110).contains(&s.len()), "{}", s.len());
            assert_eq!(s.last().unwrap().1, m["misses"]);
        }
        assert_eq!(c.series.contains_key("gen0"), c.policy == "mglru");
    }
    // Summaries: per point, policy and metric; the baseline has no difference.
    let s = r.summary(0, "classic", "hit_ratio").unwrap();
    assert_eq!(s.summary.n, 2);
    let xs: Vec<f64> = r
        .cells
        .iter()
        .filter(|c| c.cell.point == 0 && c.policy == "classic")
        .map(|c| c.metrics["hit_ratio"])
        .collect();
    assert_eq!(s.summary.mean, (xs[0] + xs[1]) / 2.0);
    let d = s.vs_baseline.as_ref().unwrap();
    let base = r.summary(0, "mglru", "hit_ratio").unwrap();
    assert!(base.vs_baseline.is_none());
    assert!((d.diff - (s.summary.mean - base.summary.mean)).abs() < 1e-12);
    assert!(d.ci95.is_some());
    // Memory pressure: a larger memcg hits more (point 0 is 512K = 128 pages, point 1 256 pages).
    let small = r.summary(0, "lru", "hit_ratio").unwrap().summary.mean;
    let large = r.summary(1, "lru", "hit_ratio").unwrap().summary.mean;
    assert!(large > small, "{large} {small}");
    let t = output::table(&r);
    assert!(
        t.contains("memcg.max=512K") && t.contains("(baseline)") && t.contains(" ± "),
        "{t}"
    );
}

fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    ["results.json", "results.csv", "summary.csv"]
        .iter()
        .map(|n| (n.to_string(), std::fs::read(dir.join(n)).unwrap()))
        .collect()
}

#[test]
fn deterministic_whatever_the_threads() {
    let e = parse(TINY).unwrap();
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    for (d, threads) in dirs.iter().zip([1, 2, 2]) {
        let r = experiment::run(&e, Some(threads), &|_, _| {}).unwrap();
        output::write_files(&r, d.path()).unwrap();
    }
    let a = files_of(dirs[0].path());
    assert_eq!(a, files_of(dirs[1].path()), "1 thread vs 2 threads");
    assert_eq!(a, files_of(dirs[2].path()), "run twice");
    // The CSV has one row per cell and a stable header.
    let csv = String::from_utf8(a[1].1.clone()).unwrap();
    assert_eq!(csv.lines().count(), 13);
    assert!(csv.starts_with("cell,point,memcg.max,policy,kind,profile,repetition,seed,error,hit_ratio,accesses,"));
    // The JSON holds the cells and the summaries.
    let v: serde_json::Value = serde_json::from_slice(&a[0].1).unwrap();
    assert_eq!(v["cells"].as_array().unwrap().len(), 12);
    assert!(!v["summaries"].as_array().unwrap().is_empty());
    assert_eq!(v["experiment"]["name"], "tiny");
}

#[test]
fn plots_are_written() {
    let e = parse(&TINY.replace("[sweep]\n\"memcg.max\" = [\"512K\", 256]\n", "")).unwrap();
    let r = experiment::run(&e, Some(1), &|_, _| {}).unwrap();
    let d = tempfile::tempdir().unwrap();
    match experiment::plot::write_plots(&r, d.path()) {
        Ok(files) => {
            // Bar chart, Δ against the baseline, misses over time, MGLRU generations: SVG and PNG
            // each.
            assert_eq!(files.len(), 8, "{files:?}");
            for f in &files {
                assert!(std::fs::metadata(f).unwrap().len() > 1000, "{}", f.display());
            }
            let svg = std::fs::read_to_string(d.path().join("bar-hit_ratio-p0.svg")).unwrap();
            assert!(svg.starts_with("<svg") && svg.contains("classic"));
        }
        // A machine without any TrueType font: said, not a panic.
        Err(ExpError::NoFont(why)) => eprintln!("plots skipped: {why}"),
        Err(e) => panic!("{e}"),
    }
    // A single policy: one bar.
    let e = parse(&TINY.replace("[\"mglru\", \"classic\", \"lru\"]", "[\"lru\"]")).unwrap();
    let r = experiment::run(&e, Some(1), &|_, _| {}).unwrap();
    let _ = experiment::plot::write_plots(&r, d.path());
}

#[test]
fn skip_if_missing() {
    let text =
        "skip_if_missing = true\n[memcg]\nmax = 10\n[workload]\nkind = \"trace\"\npath = \"no/such/trace.lis\"\n";
    let e = parse(text).unwrap();
    assert!(e.skip.as_deref().unwrap().contains("no/such/trace.lis"), "{:?}", e.skip);
    // Without the switch, the missing trace is an error when the experiment runs.
    let e = parse(&text.replace("skip_if_missing = true\n", "")).unwrap();
    assert!(e.skip.is_none());
    let err = experiment::run(&e, Some(1), &|_, _| {}).unwrap_err();
    assert!(err.to_string().contains("no/such/trace.lis"), "{err}");
    // Relative paths are taken relative to the experiment file's folder.
    let e = Experiment::parse(text, Path::new("some/dir/exp.toml")).unwrap();
    match &e.points[0].config.workload {
        WorkloadSpec::Trace { path, .. } => assert_eq!(path, Path::new("some/dir/no/such/trace.lis")),
        w => panic!("{w:?}"),
    }
}

#[test]
fn examples_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let e = Experiment::from_file(&p).unwrap_or_else(|e| panic!("{e}"));
            assert!(e.description.is_some(), "{}", p.display());
            n += 1;
        }
    }
    assert!(n >= 4, "{n} examples");
}

#[test]
fn engine_runs_are_sampled_over_time() {
    // Two jobs under the engine: the series cover every task's operations, about `samples`
    // points, cumulative misses never fall, and MGLRU reports its generations.
    let text = TINY.replace("[sweep]\n\"memcg.max\" = [\"512K\", 256]\n", "")
        + "samples = 10\n"
        + "[engine]\ncpus = 2\njobs = 2\n";
    let text = text.replace("repetitions = 2\n", "repetitions = 1\nsamples = 10\n");
    let text = text.replace("samples = 10\n[engine]", "[engine]");
    // (reference caches have no place among several tasks)
    let text = text.replace("[\"mglru\", \"classic\", \"lru\"]", "[\"mglru\", \"classic\"]");
    let e = parse(&text).unwrap();
    let r = experiment::run(&e, Some(1), &|_, _| {}).unwrap();
    assert_eq!(r.cells.len(), 2);
    for c in &r.cells {
        let misses = &c.series["misses"];
        assert!(
            (9..=12).contains(&misses.len()),
            "{}: {} samples",
            c.policy,
            misses.len()
        );
        assert!(misses.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
        let last = misses.last().unwrap();
        assert_eq!(last.0 as u64, 2 * 3_000, "{}: both tasks' accesses", c.policy);
        assert_eq!(last.1, c.metrics["misses"]);
        if c.policy == "mglru" {
            assert!(c.series.contains_key("gen0"), "{:?}", c.series.keys());
        }
    }
}

/// Reference caches replay one page stream: an experiment of several tasks leaves them out of its
/// default policies with a note, and refuses them when listed, naming the line.
#[test]
fn reference_caches_are_left_out_of_multi_task_experiments() {
    let base = TINY.replace("policies = [\"mglru\", \"classic\", \"lru\"]\n", "");
    // one task: all four
    let e = parse(&base).unwrap();
    assert_eq!(e.variants.len(), 4);
    assert!(e.notes.is_empty());
    let jobs = format!("{base}[engine]\njobs = 2\n");
    let e = parse(&jobs).unwrap();
    let labels: Vec<&str> = e.variants.iter().map(|v| v.label.as_str()).collect();
    assert_eq!(labels, ["mglru", "classic"]);
    assert!(
        e.notes.len() == 1 && e.notes[0].contains("lru and opt left out") && e.notes[0].contains("engine.jobs = 2"),
        "{:?}",
        e.notes
    );
    // listed: refused where it is listed
    let listed = jobs.replace("[machine]", "policies = [\"classic\", \"opt\"]\n[machine]");
    let (line, msg) = err(&listed);
    let want = listed.lines().position(|l| l.starts_with("policies")).unwrap() + 1;
    assert_eq!(line, Some(want), "{msg}");
    assert!(
        msg.contains("policy 'opt' cannot run here") && msg.contains("expected only mglru and classic"),
        "{msg}"
    );
    // a sweep that makes one point multi-task
    let swept = base.replace("[sweep]\n", "[engine]\n[sweep]\n\"engine.jobs\" = [1, 3]\n");
    let e = parse(&swept).unwrap();
    assert_eq!(e.variants.len(), 2);
    assert!(
        e.notes[0].contains("engine.jobs = 3") && e.notes[0].contains("at sweep point"),
        "{:?}",
        e.notes
    );
    // one task under the engine: the references replay the very stream of the kernel policies
    let one = format!("{base}[engine]\njobs = 1\n").replace("[sweep]\n\"memcg.max\" = [\"512K\", 256]\n", "");
    let e = parse(&one).unwrap();
    assert_eq!(e.variants.len(), 4);
    let r = experiment::run(&e, Some(2), &|_, _| {}).unwrap();
    let accesses: Vec<f64> = r.cells.iter().map(|c| c.metrics["accesses"]).collect();
    assert!(accesses.iter().all(|a| *a == accesses[0]), "{accesses:?}");
}

/// A run stopped after some cells gives those cells, a note of the missing ones and statistics
/// only where every repetition finished; resumed with them, it gives the uninterrupted results.
#[test]
fn stopped_and_resumed_runs() {
    use std::sync::atomic::AtomicU8;
    use std::sync::Arc;
    let e = parse(TINY).unwrap();
    let full = experiment::run(&e, Some(1), &|_, _| {}).unwrap();
    let mut saved = Vec::new();
    let r = experiment::run_with(
        &e,
        experiment::Drive {
            threads: Some(1),
            done: Vec::new(),
            stop: Arc::new(AtomicU8::new(0)),
            stop_after: Some(3),
            progress: &|_, _| {},
            on_cell: &mut |c| {
                saved.push(c.clone());
                Ok(())
            },
            shard: None,
        },
    )
    .unwrap();
    let i = r.interrupted.as_ref().expect("interrupted");
    assert_eq!((i.finished, i.total, i.missing.len()), (3, 12, 9));
    assert_eq!(saved.len(), 3);
    // point 0: mglru (cells 0, 1) complete, classic (2, 3) not
    assert!(r.summary(0, "mglru", "hit_ratio").is_some());
    assert!(r.summary(0, "classic", "hit_ratio").is_none());
    let csv = output::results_csv(&r);
    assert_eq!(csv.lines().count(), 13);
    assert_eq!(csv.matches(output::MISSING).count(), 9);
    // persisted and read back, exactly
    let d = tempfile::tempdir().unwrap();
    for c in &saved {
        experiment::store::save(d.path(), c).unwrap();
    }
    let done = experiment::store::load(d.path(), &e).unwrap();
    let r = experiment::run_with(
        &e,
        experiment::Drive {
            threads: Some(2),
            done,
            stop: Arc::new(AtomicU8::new(0)),
            stop_after: None,
            progress: &|_, _| {},
            on_cell: &mut |_| Ok(()),
            shard: None,
        },
    )
    .unwrap();
    assert!(r.interrupted.is_none());
    assert_eq!(output::json(&r).unwrap(), output::json(&full).unwrap());
    assert_eq!(output::results_csv(&r), output::results_csv(&full));
    assert_eq!(output::summary_csv(&r), output::summary_csv(&full));
    // an absurd thread count is refused by the library too
    let err = experiment::run(&e, Some(100_000), &|_, _| {}).unwrap_err();
    assert!(err.to_string().contains("expected 1 to 1024"), "{err}");
}

/// `--shard K/N`'s rule: slice K runs the cells whose index mod N is K, and nothing else; the
/// slices' cells, put together, give the unsharded run's results exactly.
#[test]
fn shards_cover_the_matrix_once_and_merge_to_the_whole() {
    use experiment::Shard;
    use std::sync::atomic::AtomicU8;
    use std::sync::Arc;
    let e = parse(TINY).unwrap();
    let full = experiment::run(&e, Some(2), &|_, _| {}).unwrap();
    let mut all = Vec::new();
    for k in 0..5 {
        let shard = Shard { k, n: 5 };
        let mut ran = Vec::new();
        let r = experiment::run_with(
            &e,
            experiment::Drive {
                threads: Some(2),
                done: Vec::new(),
                stop: Arc::new(AtomicU8::new(0)),
                stop_after: None,
                progress: &|_, _| {},
                on_cell: &mut |c| {
                    ran.push(c.cell.index);
                    Ok(())
                },
                shard: Some(shard),
            },
        )
        .unwrap();
        assert!(r.interrupted.is_none(), "a finished slice is not interrupted");
        ran.sort();
        assert_eq!(ran, (k..12).step_by(5).collect::<Vec<_>>(), "slice {shard}");
        assert_eq!(r.cells.iter().map(|c| c.cell.index).collect::<Vec<_>>(), ran);
        all.extend(r.cells);
    }
    assert_eq!(all.len(), 12);
    let merged = experiment::run_with(
        &e,
        experiment::Drive {
            threads: Some(1),
            done: all,
            stop: Arc::new(AtomicU8::new(0)),
            stop_after: None,
            progress: &|_, _| {},
            on_cell: &mut |_| panic!("nothing is left to run"),
            shard: None,
        },
    )
    .unwrap();
    assert_eq!(output::json(&merged).unwrap(), output::json(&full).unwrap());
    assert_eq!(output::results_csv(&merged), output::results_csv(&full));
    assert_eq!(output::summary_csv(&merged), output::summary_csv(&full));
    // K/N as the flag takes it
    assert_eq!(Shard::parse("2/3"), Ok(Shard { k: 2, n: 3 }));
    for (bad, why) in [
        ("3/3", "expected 0 <= K < N"),
        ("1/0", "expected at least 1 slice"),
        ("x/3", "is not a whole number"),
        ("-1/3", "is not a whole number"),
        ("2", "expected K/N"),
    ] {
        let err = Shard::parse(bad).unwrap_err();
        assert!(err.contains(why), "{bad}: {err}");
    }
}

/// A trace's format travels with the workload: a file whose name does not tell its format is
/// replayed as the `format` key says (both reference caches give what lrugen-cache gives on the
/// trace loaded in memory), refused without it, and a bad format name is refused when parsing.
#[test]
fn a_trace_format_travels_with_the_workload() {
    let d = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lrugen-trace/tests/data/tiny.oracleGeneral.bin");
    let trace = d.path().join("trace.dat");
    std::fs::copy(&data, &trace).unwrap();
    let text = format!(
        "policies = [\"lru\", \"opt\"]\n[machine]\nmemory = \"64M\"\n[memcg]\nmax = 2\n[workload]\nkind = \
         \"trace\"\npath = {:?}\nformat = \"oracleGeneral\"\n",
        trace.to_str().unwrap()
    );
    let e = parse(&text).unwrap();
    match &e.points[0].config.workload {
        WorkloadSpec::Trace { format, .. } => assert_eq!(*format, Some(lrugen_trace::TraceFormat::OracleGeneral)),
        w => panic!("{w:?}"),
    }
    let r = experiment::run(&e, Some(1), &|_, _| {}).unwrap();
    let t = lrugen_trace::load_dense(&trace, Some(lrugen_trace::TraceFormat::OracleGeneral)).unwrap();
    let hits = |policy: &str| {
        let c = r.cells.iter().find(|c| c.policy == policy).unwrap();
        (c.metrics["accesses"] as u64, c.metrics["hit_ratio"])
    };
    let (lru, opt) = (lrugen_cache::lru(&t, 2), lrugen_cache::opt(&t, 2));
    assert_eq!(hits("lru"), (lru.requests, lru.hit_ratio()));
    assert_eq!(hits("opt"), (opt.requests, opt.hit_ratio()));
    assert!(opt.hits >= lru.hits && lru.requests > 0, "{opt} {lru}");

    let without = parse(&text.replace("format = \"oracleGeneral\"\n", "")).unwrap();
    let err = experiment::run(&without, Some(1), &|_, _| {}).unwrap_err();
    assert!(err.to_string().contains("cannot tell the trace format"), "{err}");
    let err = parse(&text.replace("\"oracleGeneral\"", "\"parquet\"")).unwrap_err();
    assert!(err.to_string().contains("parquet"), "{err}");
}

/// `access` travels with a trace workload too: the checked-in lackey trace replayed as anon
/// memory in an experiment swaps; a bad access name is refused when parsing.
#[test]
fn a_trace_access_travels_with_the_workload() {
    let lackey = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lrugen-cli/tests/data/small.lackey");
    let text = format!(
        "policies = [\"classic\"]\n[machine]\nmemory = \"64M\"\nswap = \"16M\"\n[memcg]\nmax = \"1M\"\n\
         [workload]\nkind = \"trace\"\npath = {:?}\naccess = \"anon\"\n",
        lackey.to_str().unwrap()
    );
    let e = parse(&text).unwrap();
    match &e.points[0].config.workload {
        WorkloadSpec::Trace { access, .. } => assert_eq!(*access, lrugen::workload::TraceAccess::Anon),
        w => panic!("{w:?}"),
    }
    let r = experiment::run(&e, Some(1), &|_, _| {}).unwrap();
    let c = &r.cells[0];
    assert!(c.metrics["pswpout"] > 0.0, "{:?}", c.metrics);
    let err = parse(&text.replace("\"anon\"", "\"swap\"")).unwrap_err();
    assert!(err.to_string().contains("swap"), "{err}");
}

const SWITCHED: &str = r#"
policies = ["mglru"]
[memcg]
max = 1000
[mglru]
profile = "6.12"
[mglru.switches]
vma_has_recency = false
[workload]
kind = "anon"
pages = 2000
write_ratio = 0.5
dist = { kind = "uniform" }
accesses = 10
"#;

#[test]
fn mglru_profile_and_switches() {
    use lrugen::reclaim::mglru::Profile;
    let e = parse(SWITCHED).unwrap();
    let p = e.variants[0].profile.unwrap();
    let mut want = Profile::V6_12;
    want.switches.vma_has_recency = false;
    assert_eq!(p, want);
    assert_eq!(p.label(), "6.12+vma_has_recency=false");
    // the switches apply on top of every profile of `profiles` too
    let t = SWITCHED.replace("[mglru]\nprofile = \"6.12\"\n", "").replace(
        "policies = [\"mglru\"]",
        "policies = [\"mglru\"]\nprofiles = [\"6.1\", \"7.2\"]",
    );
    let e = parse(&t).unwrap();
    let labels: Vec<String> = e.variants.iter().map(|v| v.profile.unwrap().label()).collect();
    assert_eq!(labels, ["6.1", "7.2+vma_has_recency=false"]);
}

#[test]
fn bad_switches_name_the_line_and_the_choices() {
    let (line, msg) = err(&SWITCHED.replace("vma_has_recency = false", "vma_has_recncy = false"));
    assert_eq!(line, Some(8), "{msg}");
    assert!(msg.contains("unknown MGLRU switch 'vma_has_recncy'"), "{msg}");
    assert!(msg.contains("vma_has_recency, memcg_lru"), "{msg}");
    let (line, msg) = err(&SWITCHED.replace("vma_has_recency = false", "vma_has_recency = 3"));
    assert_eq!(line, Some(8), "{msg}");
    assert!(msg.contains("expected true or false, found 3"), "{msg}");
    let (line, msg) = err(&SWITCHED.replace("\"6.12\"", "\"6.2\""));
    assert_eq!(line, Some(6), "{msg}");
    assert!(msg.contains("unknown kernel profile '6.2'"), "{msg}");
    let both = SWITCHED.replace("policies = [\"mglru\"]", "policies = [\"mglru\"]\nprofiles = [\"6.1\"]");
    let (_, msg) = err(&both);
    assert!(msg.contains("both `profiles` and `[mglru] profile`"), "{msg}");
    let sweep = format!("{SWITCHED}[sweep]\n\"mglru.switches.vma_has_recency\" = [true, false]\n");
    let (_, msg) = err(&sweep);
    assert!(msg.contains("cannot sweep 'mglru.switches.vma_has_recency'"), "{msg}");
}

/// Fuzzing found the point count of a sweep multiplied without a check: long enough arrays
/// overflowed (a panic in debug builds, a wrong count in release).
#[test]
fn a_sweep_too_large_to_count_is_refused() {
    let values = vec!["1"; 10_000].join(", ");
    let mut text = format!("{TINY}\"memcg.high\" = [{values}]\n");
    for key in ["memcg.low", "memcg.min", "workload.accesses", "machine.memory"] {
        text.push_str(&format!("\"{key}\" = [{values}]\n"));
    }
    let (line, msg) = err(&text.replace("\"memcg.max\" = [\"512K\", 256]\n", ""));
    assert_eq!(
        msg,
        format!("the sweep has more than {} points: at most 100,000", usize::MAX)
    );
    assert!(line.is_some());
    // 10^4 × 10^4 still counts exactly
    let two = format!("{TINY}\"memcg.high\" = [{values}]\n").replace(
        "\"memcg.max\" = [\"512K\", 256]",
        &format!("\"memcg.max\" = [{values}]"),
    );
    assert_eq!(err(&two).1, "the sweep has 100000000 points: at most 100,000");
}

/// `[engine] kswapd = "inline"` (documented in README, "What is modelled") is accepted and
/// reaches the engine; `task` is the default; anything else is refused naming the values.
#[test]
fn engine_kswapd_mode_is_a_key() {
    use lrugen::sim::engine::KswapdMode;
    let base = TINY.replace("[sweep]\n\"memcg.max\" = [\"512K\", 256]\n", "");
    let mode = |text: &str| parse(text).unwrap().points[0].config.engine.clone().unwrap().kswapd;
    assert_eq!(mode(&format!("{base}[engine]\ncpus = 2\n")), KswapdMode::Task);
    assert_eq!(
        mode(&format!("{base}[engine]\nkswapd = \"inline\"\n")),
        KswapdMode::Inline
    );
    assert_eq!(mode(&format!("{base}[engine]\nkswapd = \"task\"\n")), KswapdMode::Task);
    let err = parse(&format!("{base}[engine]\nkswapd = \"thread\"\n"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("thread") && err.contains("inline"), "{err}");
}

/// `[engine] sched_slice_ns` (docs/experiments.md) reaches the engine; 0 is the default, and a
/// negative slice is refused at its line, naming what was expected.
#[test]
fn engine_sched_slice_is_a_key() {
    let base = TINY.replace("[sweep]\n\"memcg.max\" = [\"512K\", 256]\n", "");
    let slice = |text: &str| {
        parse(text).unwrap().points[0]
            .config
            .engine
            .clone()
            .unwrap()
            .sched_slice_ns
    };
    assert_eq!(slice(&format!("{base}[engine]\ncpus = 1\n")), 0);
    assert_eq!(slice(&format!("{base}[engine]\nsched_slice_ns = 750000\n")), 750_000);
    // the machine's, for the model without the engine
    let text = base.replace("[machine]\n", "[machine]\nsched_slice_ns = 750000\n");
    assert!(text.contains("sched_slice_ns = 750000"), "{text}");
    assert_eq!(parse(&text).unwrap().points[0].config.machine.sched_slice_ns, 750_000);
    // the kernel's base_slice_ns is an unsigned int: a larger slice is refused at its line
    let err = parse(&base.replace("[machine]\n", "[machine]\nsched_slice_ns = 4294967296\n"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("4294967296") && err.contains("u32"), "{err}");
    let err = parse(&format!("{base}[engine]\nsched_slice_ns = -1\n"))
        .unwrap_err()
        .to_string();
    let line = base.lines().count() + 2;
    assert!(
        err.contains(&format!(":{line}:")) && err.contains("`-1`, expected u32"),
        "{err}"
    );
}

/// A YCSB workload in an experiment file takes YCSB's properties as TOML values of any scalar
/// kind (kept as the text YCSB reads); a bad one is refused when the file is read, naming it.
#[test]
fn ycsb_properties_in_an_experiment() {
    let text = |props: &str| {
        format!(
            "policies = [\"mglru\"]\n[memcg]\nmax = 1000\n[workload]\nkind = \"ycsb\"\nworkload = \"core\"\n\
             records = 1000\noperations = 100\nproperties = {{ {props} }}\n"
        )
    };
    let e = parse(&text(
        "readproportion = 0.7, updateproportion = \"0.3\", fieldcount = 4, readallfields = false",
    ))
    .unwrap();
    let WorkloadSpec::Ycsb {
        properties, workload, ..
    } = &e.points[0].config.workload
    else {
        panic!("{:?}", e.points[0].config.workload)
    };
    assert_eq!(workload, "core");
    let got: Vec<(&str, &str)> = properties.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        got,
        [
            ("fieldcount", "4"),
            ("readallfields", "false"),
            ("readproportion", "0.7"),
            ("updateproportion", "0.3")
        ]
    );
    let w = lrugen::workload::ycsb_workload(workload, properties).unwrap();
    assert_eq!(
        (w.read, w.update, w.field_count, w.read_all_fields),
        (0.7, 0.3, 4, false)
    );
    let msg = match parse(&text("requestdistribution = \"sequential\"")) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("sequential accepted"),
    };
    assert!(
        msg.contains("requestdistribution=sequential") && msg.contains("not modelled"),
        "{msg}"
    );
}

#[test]
fn machine_kmem_takes_a_preset_or_a_table() {
    use lrugen::mm::KmemConfig;
    let wl = "[memcg]\nmax = 100\n[workload]\nkind = \"file-read\"\nfiles = 1\nfile_pages = 10\ndist = \"uniform\"\naccesses = 5\n";
    let kmem =
        |m: &str| parse(&format!("[machine]\nmemory = \"1G\"\n{m}\n{wl}")).map(|e| e.points[0].config.machine.kmem);
    assert_eq!(kmem("").unwrap(), KmemConfig::none(), "off unless asked for");
    assert_eq!(kmem("kmem = \"kernel\"").unwrap(), KmemConfig::kernel());
    assert_eq!(kmem("kmem = \"none\"").unwrap(), KmemConfig::none());
    let t = kmem("kmem = { page_tables = true, mm_pgtable_pages = 3 }").unwrap();
    assert_eq!(
        t,
        KmemConfig {
            page_tables: true,
            mm_pgtable_pages: 3,
            ..KmemConfig::none()
        }
    );
    let (line, msg) = err(&format!("[machine]\nmemory = \"1G\"\nkmem = \"kernal\"\n{wl}"));
    assert!(msg.contains("machine.kmem") && msg.contains("\"kernel\""), "{msg}");
    assert_eq!(line, Some(3), "{msg}");
    let (line, msg) = err(&format!(
        "[machine]\nmemory = \"1G\"\nkmem = {{ page_table = true }}\n{wl}"
    ));
    assert!(
        msg.contains("unknown field `page_table`") && msg.contains("page_tables"),
        "{msg}"
    );
    assert_eq!(line, Some(3), "{msg}");
}

/// Engine runs report their length in virtual time (`virtual_s`); classic runs that end before
/// the memcg statistics' first periodic flush (2 s) under a profile that flushes only
/// rate-limited get a note in the table, and not when the switch is off (6.1's rule) or the
/// policy reads no flushed statistics (MGLRU).
#[test]
fn short_classic_runs_are_noted() {
    let text = TINY.replace("[sweep]\n\"memcg.max\" = [\"512K\", 256]\n", "") + "[engine]\ncpus = 1\njobs = 1\n";
    let text = text.replace("repetitions = 2\n", "repetitions = 1\n");
    let run = |text: &str| {
        let e = parse(text).unwrap();
        experiment::run(&e, Some(1), &|_, _| {}).unwrap()
    };
    let r = run(&text);
    for c in r.cells.iter().filter(|c| c.policy != "lru") {
        let t = c.metrics["virtual_s"];
        assert!(t > 0.0 && t < 2.0, "{}: {t} s", c.policy);
    }
    let t = output::table(&r);
    assert!(
        t.contains("note: 1 classic run(s) lasted under 2 s of virtual time"),
        "{t}"
    );
    let off = run(&format!(
        "{text}[mglru.switches]\nreclaim_ratelimited_stats_flush = false\n"
    ));
    assert!(!output::table(&off).contains("note: "), "{}", output::table(&off));
    let mglru_only = run(&text.replace("[\"mglru\", \"classic\", \"lru\"]", "[\"mglru\"]"));
    assert!(!output::table(&mglru_only).contains("note: "));
}

/// `[mglru] switch_at`: the writes to `/sys/kernel/mm/lru_gen/enabled` reach the kernel-policy
/// runs only, change their results, and a value the file refuses is an error naming the key,
/// its line and the value.
#[test]
fn switch_at_in_an_experiment() {
    let text = TINY.replace("[sweep]\n\"memcg.max\" = [\"512K\", 256]\n", "")
        + "\n[mglru]\nswitch_at = [{ step = 1500, value = \"n\" }]\n";
    let e = parse(&text).unwrap();
    let cells = e.cells();
    for c in &cells {
        let cfg = e.run_config(c, None);
        let want = if cfg.policy.is_kernel() { 1 } else { 0 };
        assert_eq!(cfg.switch_at.len(), want, "{}", cfg.policy.name());
    }
    let r = experiment::run(&e, Some(1), &|_, _| {}).unwrap();
    let plain = experiment::run(
        &parse(&TINY.replace("[sweep]\n\"memcg.max\" = [\"512K\", 256]\n", "")).unwrap(),
        Some(1),
        &|_, _| {},
    )
    .unwrap();
    let misses = |r: &experiment::Results, p: &str| -> Vec<f64> {
        r.cells
            .iter()
            .filter(|c| c.policy == p)
            .map(|c| c.metrics["misses"])
            .collect()
    };
    assert_ne!(
        misses(&r, "mglru"),
        misses(&plain, "mglru"),
        "MGLRU switched off half-way"
    );
    assert_eq!(
        misses(&r, "classic"),
        misses(&plain, "classic"),
        "'n' on classic changes nothing"
    );
    assert_eq!(misses(&r, "lru"), misses(&plain, "lru"));
    let (line, msg) = err(&text.replace("value = \"n\"", "value = \"z\""));
    let at = text.lines().position(|l| l.starts_with("switch_at")).unwrap() + 1;
    assert_eq!(line, Some(at), "{msg}");
    assert!(
        msg.contains("'z'") && msg.contains("EINVAL") && msg.contains("expected y, n"),
        "{msg}"
    );
    let (_, msg) = err(&text.replace("value = \"n\"", "valeu = \"n\""));
    assert!(msg.contains("unknown field `valeu`"), "{msg}");
}

#[test]
fn a_control_script_in_an_experiment() {
    // `ctl = "script.toml"` (relative to the experiment file) runs in the kernel cells only, and
    // its outcome is in their metrics
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        "[[action]]\nat = 500\nevery = 500\nwrite = \"memory.reclaim\"\nvalue = \"64K\"\n\
         [[action]]\nat = 700\nwrite = \"memory.max\"\nvalue = \"lots\"\n",
    )
    .unwrap();
    let base = TINY.replace("[sweep]\n\"memcg.max\" = [\"512K\", 256]\n", "");
    let text = base.replace("policies = ", "ctl = \"s.toml\"\npolicies = ");
    let file = dir.path().join("e.toml");
    let e = Experiment::parse(&text, &file).unwrap();
    for c in &e.cells() {
        let cfg = e.run_config(c, None);
        assert_eq!(cfg.ctl.is_some(), cfg.policy.is_kernel(), "{}", cfg.policy.name());
    }
    let r = experiment::run(&e, Some(1), &|_, _| {}).unwrap();
    for c in &r.cells {
        match c.policy.as_str() {
            "lru" => assert!(!c.metrics.contains_key("ctl_reclaimed"), "{:?}", c.metrics),
            p => {
                assert!(c.metrics["ctl_reclaimed"] >= 16.0, "{p}: {:?}", c.metrics);
                // `lots` is not a size: memory_max_write's EINVAL, once per run
                assert_eq!(c.metrics["ctl_failed"], 1.0, "{p}");
            }
        }
    }
    // errors: the experiment's line for a missing script, the script's own line for a bad one
    let at = text.lines().position(|l| l.starts_with("ctl =")).unwrap() + 1;
    let parse_err = |t: &str| match Experiment::parse(t, &file) {
        Err(ExpError::Parse { line, message, .. }) => (line, message),
        other => panic!("expected a parse error, got {:?}", other.map(|e| e.name)),
    };
    let (line, msg) = parse_err(&text.replace("s.toml", "nope.toml"));
    assert_eq!(line, Some(at), "{msg}");
    assert!(
        msg.contains("nope.toml") && msg.contains("cannot read the control script"),
        "{msg}"
    );
    std::fs::write(
        dir.path().join("bad.toml"),
        "[[action]]\nat = 1\nread = \"memory.nope\"\n",
    )
    .unwrap();
    let (line, msg) = parse_err(&text.replace("s.toml", "bad.toml"));
    assert_eq!(line, Some(at), "{msg}");
    assert!(
        msg.contains("bad.toml:3:") && msg.contains("unknown control file"),
        "{msg}"
    );
    let (_, msg) = parse_err(&(text.clone() + "\n[engine]\ncpus = 2\n"));
    assert!(msg.contains("without the virtual-time engine"), "{msg}");
}

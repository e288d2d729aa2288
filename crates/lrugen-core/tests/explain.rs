// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen explain` on constructed workloads whose answer is known: a hot set under a one-pass
//! stream (the difference lands on the hot pages, through evictions); a uniform workload, where
//! no policy can do better (no class gains); two profiles that differ in one switch (the ablation
//! attributes the difference to it); and the bookkeeping: each dimension's classes sum to Δ, the
//! per-page misses to the run's, and the recorder changes nothing in the run.

use lrugen::explain::study::{explain, Options, Study};
use lrugen::mm::MachineConfig;
use lrugen::reclaim::mglru::{MglruConfig, Profile};
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig};
use lrugen::workload::{self, WorkloadSpec};
use std::io::Write;

/// A flat index32 trace of `keys`, in a temporary file.
fn trace(keys: &[u32]) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new()
        .suffix(".index32")
        .tempfile()
        .expect("temp file");
    for k in keys {
        f.write_all(&k.to_le_bytes()).expect("write");
    }
    f.flush().expect("flush");
    f
}

fn config(path: &std::path::Path, policy: PolicyKind, profile: Profile, max: u64) -> RunConfig {
    RunConfig {
        machine: MachineConfig::simple(max + 16_384, 0),
        memcg: MemcgConfig {
            max: Some(max),
            ..Default::default()
        },
        workload: WorkloadSpec::Trace {
            path: path.to_path_buf(),
            format: None,
            access: Default::default(),
        },
        policy,
        seed: 1,
        capacity: Some(max),
        check: false,
        mglru: MglruConfig {
            profile,
            ..Default::default()
        },
        debugfs_every: None,
        debugfs_write: None,
        switch_at: Vec::new(),
        ftrace: Vec::new(),
        sample_every: None,
        engine: None,
        jobs: 1,
        ctl: None,
    }
}

fn study(path: &std::path::Path, a: RunConfig, b: RunConfig, ablate: bool) -> Study {
    let t = workload::load_trace(path).expect("trace");
    let o = Options {
        windows: 10,
        seeds: 1,
        ablate,
        threads: 2,
    };
    explain("A", &a, "B", &b, Some(t), &o).expect("explain")
}

fn dim<'a>(s: &'a Study, name: &str) -> &'a lrugen::explain::Dimension {
    s.explanation
        .dimensions
        .iter()
        .find(|d| d.name.starts_with(name))
        .unwrap_or_else(|| panic!("no dimension {name}"))
}

fn class(d: &lrugen::explain::Dimension, class: &str) -> (u64, u64, i64) {
    d.rows
        .iter()
        .find(|r| r.class == class)
        .map_or((0, 0, 0), |r| (r.a, r.b, r.delta))
}

/// Every dimension's classes sum to Δ, and its A and B columns to each side's misses.
fn sums_hold(s: &Study) {
    let e = &s.explanation;
    assert_eq!(e.delta, e.a.misses as i64 - e.b.misses as i64);
    assert_eq!(e.windows.iter().map(|w| w.delta).sum::<i64>(), e.delta);
    for d in &e.dimensions {
        assert_eq!(d.rows.iter().map(|r| r.delta).sum::<i64>(), e.delta, "{}", d.name);
        assert_eq!(d.rows.iter().map(|r| r.a).sum::<u64>(), e.a.misses, "{}", d.name);
        assert_eq!(d.rows.iter().map(|r| r.b).sum::<u64>(), e.b.misses, "{}", d.name);
    }
}

/// A hot set of 800 pages read round and round, with a one-pass stream of 60,000 pages read
/// between its reads, in a memcg of 2,000 pages (the hot pages' reuse distance is 1,600: an LRU
/// of 2,000 pages keeps them; the 7.2 MGLRU profile loses some of them to the stream).
fn hot_and_stream() -> Vec<u32> {
    (0..60_000u32).flat_map(|i| [i % 800, 10_000 + i]).collect()
}

#[test]
fn a_hot_set_under_a_stream_lands_on_the_hot_pages() {
    let f = trace(&hot_and_stream());
    let a = config(f.path(), PolicyKind::Mglru, Profile::V7_2, 2_000);
    let b = config(f.path(), PolicyKind::Classic, Profile::V7_2, 2_000);
    let s = study(f.path(), a, b, false);
    sums_hold(&s);
    let e = &s.explanation;
    assert!(e.delta != 0, "the policies must differ here: {}", e.delta);
    // the stream's pages are read once: they miss under both, and carry none of Δ
    let freq = dim(&s, "access frequency");
    let (sa, sb, sd) = class(freq, "1 access");
    assert_eq!((sa, sb, sd), (60_000, 60_000, 0), "{freq:?}");
    // the hot pages (75 accesses each) carry all of it
    let (_, _, hd) = class(freq, "64-127 accesses");
    assert_eq!(hd, e.delta, "{freq:?}");
    // through evictions (none of it is first accesses or pages never evicted)
    let mech = dim(&s, "mechanism");
    assert_eq!(class(mech, "first access").2, 0);
    assert_eq!(class(mech, "not resident, no eviction recorded").2, 0);
    let evicted: i64 = mech
        .rows
        .iter()
        .filter(|r| r.class.starts_with("evicted"))
        .map(|r| r.delta)
        .sum();
    assert_eq!(evicted, e.delta);
    // the policy that misses more thrashes hot pages the other keeps
    let outcome = dim(&s, "page outcome");
    let thrashed = if e.delta > 0 {
        class(outcome, "more under A, none under B (B kept it)").2 + class(outcome, "more under A, some under B too").2
    } else {
        class(outcome, "more under B, none under A (A kept it)").2 + class(outcome, "more under B, some under A too").2
    };
    assert!(thrashed.abs() >= e.delta.abs(), "{outcome:?}");
}

#[test]
fn a_uniform_workload_gives_no_class_a_gain() {
    // uniform reads over 4 files of 5,000 pages in a memcg of 5,000: every policy misses ~75 %
    let f = trace(&[0]);
    let mut a = config(f.path(), PolicyKind::Mglru, Profile::V6_12, 5_000);
    a.workload = WorkloadSpec::FileRead {
        files: 4,
        file_pages: 5_000,
        dist: "uniform".parse().expect("dist"),
        accesses: 200_000,
    };
    let b = RunConfig {
        policy: PolicyKind::Classic,
        ..a.clone()
    };
    let o = Options {
        windows: 10,
        seeds: 1,
        ablate: false,
        threads: 1,
    };
    let s = explain("A", &a, "B", &b, None, &o).expect("explain");
    sums_hold(&s);
    let e = &s.explanation;
    assert!(
        e.delta.unsigned_abs() * 100 <= e.b.misses,
        "uniform: no policy can do much better: {} vs {}",
        e.a.misses,
        e.b.misses
    );
    // the workload's own classes (its files, its page type) gain nothing either way: within 1 %
    // of their misses (what the policies do redistribute is which reuse distances hit: that
    // dimension is of the outcome, and its classes cancel, as the total says)
    for name in ["region", "page type"] {
        let rows = &dim(&s, name).rows;
        assert!(!rows.is_empty());
        for r in rows {
            assert!(
                r.delta.unsigned_abs() * 100 <= r.b.max(r.a),
                "{name} {}: A {} B {}",
                r.class,
                r.a,
                r.b
            );
        }
    }
    assert_eq!(dim(&s, "region").rows.len(), 4);
}

#[test]
fn the_ablation_finds_the_one_switch_that_differs() {
    let keys: Vec<u32> = hot_and_stream();
    let f = trace(&keys);
    let b_profile: Profile = "6.12+workingset_protection_rework=true".parse().expect("profile");
    let a = config(f.path(), PolicyKind::Mglru, Profile::V6_12, 2_000);
    let b = config(f.path(), PolicyKind::Mglru, b_profile, 2_000);
    let s = study(f.path(), a, b, true);
    sums_hold(&s);
    assert!(s.explanation.delta != 0, "the switch must matter here");
    let ab = s.ablation.as_ref().expect("ablation");
    assert_eq!(ab.side, "A = A");
    let top = &ab.switches[0];
    assert_eq!(top.switch, "workingset_protection_rework", "{ab:?}");
    assert!(top.flipped_to);
    let share = top.share_pct.expect("share");
    assert!(share >= 90.0, "{share}");
    // and every switch is either listed or said to change nothing
    assert_eq!(
        ab.switches.len() + ab.no_effect.len(),
        lrugen::reclaim::mglru::Switches::NAMES.len()
    );
}

#[test]
fn the_recorder_changes_nothing_and_counts_every_miss() {
    let f = trace(&hot_and_stream());
    for policy in [PolicyKind::Mglru, PolicyKind::Classic] {
        let cfg = config(f.path(), policy, Profile::V7_2, 2_000);
        let t = workload::load_trace(f.path()).expect("trace");
        let plain = sim::run(&cfg, Some(t.clone()), &mut |_, _| {}).expect("run");
        let rec = sim::run_recorded(&cfg, Some(t), 7, &mut |_, _| {}).expect("recorded run");
        assert_eq!(plain.misses, rec.misses);
        assert_eq!(plain.hits, rec.hits);
        assert_eq!(plain.vmstat, rec.vmstat, "{policy:?}: counters bit-identical");
        let x = rec.recording.as_ref().expect("recording");
        assert_eq!(x.total_misses(), rec.misses);
        assert_eq!(x.windows.iter().sum::<u64>(), rec.misses);
        assert_eq!(x.mechanism.iter().sum::<u64>(), rec.misses);
        assert_eq!(x.distance.iter().sum::<u64>(), rec.misses);
        assert_eq!(x.windows.len(), 7);
    }
}

#[test]
fn anon_pages_are_their_task_s() {
    let f = trace(&[0]);
    let mut a = config(f.path(), PolicyKind::Mglru, Profile::V7_2, 2_000);
    a.machine = MachineConfig::simple(2_000 + 16_384, 16_384);
    a.workload = WorkloadSpec::Anon {
        compressed_pct: 0,
        pages: 4_000,
        write_ratio: 0.3,
        dist: "zipf:0.9".parse().expect("dist"),
        accesses: 50_000,
    };
    let b = RunConfig {
        policy: PolicyKind::Classic,
        ..a.clone()
    };
    let o = Options {
        windows: 4,
        seeds: 1,
        ablate: false,
        threads: 1,
    };
    let s = explain("A", &a, "B", &b, None, &o).expect("explain");
    sums_hold(&s);
    let region = dim(&s, "region");
    assert_eq!(region.rows.len(), 1, "{region:?}");
    assert!(region.rows[0].class.starts_with("anon of task"), "{region:?}");
    let ty = dim(&s, "page type");
    assert_eq!(class(ty, "anon").0, s.explanation.a.misses);
    assert!(s.explanation.a.misses > 0);
}

#[test]
fn reference_caches_and_bad_job_counts_are_refused() {
    let f = trace(&[1, 2, 3]);
    let mut cfg = config(f.path(), PolicyKind::Lru, Profile::V7_2, 100);
    let e = sim::run_recorded(&cfg, None, 4, &mut |_, _| {}).expect_err("lru");
    assert!(e.to_string().contains("expected mglru or classic"), "{e}");
    cfg.policy = PolicyKind::Classic;
    cfg.jobs = 2;
    let e = sim::run_recorded(&cfg, None, 4, &mut |_, _| {}).expect_err("jobs without an engine");
    assert!(e.to_string().contains("give the run an engine"), "{e}");
    cfg.jobs = 0;
    let e = sim::run_recorded(&cfg, None, 4, &mut |_, _| {}).expect_err("no jobs");
    assert!(e.to_string().contains("jobs must be at least 1"), "{e}");
}

/// Runs in virtual time, from experiment text (the engine, a mix of tasks).
fn engine_configs(text: &str) -> Vec<RunConfig> {
    let exp = lrugen::experiment::Experiment::parse(text, "test.toml".as_ref()).expect("experiment");
    exp.cells()
        .iter()
        .filter(|c| c.point == 0 && c.repetition == 0)
        .map(|c| exp.run_config(c, None))
        .collect()
}

fn engine_study(a: &RunConfig, b: &RunConfig, seeds: u32, threads: usize) -> Study {
    let o = Options {
        windows: 10,
        seeds,
        ablate: false,
        threads,
    };
    explain("A", a, "B", b, None, &o).expect("explain")
}

/// A hot set of 7 MiB read uniformly by one task while another reads a 4 GiB file at random
/// (each page about once), in an 8 MiB memcg: the 7.2 MGLRU profile loses the hot pages to the
/// stream, the classic LRU's active list keeps most of them.
const HOT_UNDER_STREAM: &str = r#"
seed = 3
policies = ["mglru", "classic"]
profiles = ["7.2"]
[machine]
memory = "128M"
[memcg]
max = "8M"
[workload]
kind = "mix"
[[workload.parts]]
jobs = 1
workload = { kind = "fio", dist = "zoned:100/100", file_pages = "7M", accesses = 30000 }
[[workload.parts]]
jobs = 1
workload = { kind = "fio", dist = "zoned:100/100", file_pages = "4G", accesses = 16384 }
[engine]
cpus = 2
storage = "nvme"
"#;

fn cost_sums_hold(s: &Study) {
    let c = s.cost.as_ref().expect("engine runs have a cost split");
    assert_eq!(c.residual_ns, 0, "{c:?}");
    let parts: f64 = c.time.parts.iter().map(|p| p.delta_ns).sum();
    assert_eq!(parts, c.time.delta_ops_ns as f64);
    let groups: f64 = c.time.groups.iter().map(|p| p.delta_ns).sum();
    assert_eq!(groups, c.time.delta_ops_ns as f64);
    for (side, total) in [(0, c.time.a_ops_ns), (1, c.time.b_ops_ns)] {
        let sum: f64 = c
            .time
            .parts
            .iter()
            .map(|p| if side == 0 { p.a_ns } else { p.b_ns })
            .sum();
        assert_eq!(sum, total as f64, "side {side}");
    }
    // per job: each part summed over the jobs is the run's, exactly
    assert!(!c.per_task.is_empty(), "engine runs are split per job");
    let ops: i64 = c.per_task.iter().map(|t| t.time.delta_ops_ns).sum();
    assert_eq!(ops, c.time.delta_ops_ns);
    assert_eq!(c.per_task.iter().map(|t| t.time.a_ops_ns).sum::<u64>(), c.time.a_ops_ns);
    assert_eq!(c.per_task.iter().map(|t| t.time.b_ops_ns).sum::<u64>(), c.time.b_ops_ns);
    for (i, p) in c.time.parts.iter().enumerate() {
        let (a, b) = c.per_task.iter().fold((0.0, 0.0), |(a, b), t| {
            assert_eq!(t.time.parts[i].part, p.part);
            (a + t.time.parts[i].a_ns, b + t.time.parts[i].b_ns)
        });
        assert_eq!((a, b), (p.a_ns, p.b_ns), "{}", p.part);
    }
    for t in &c.per_task {
        let sum: f64 = t.time.parts.iter().map(|p| p.delta_ns).sum();
        assert_eq!(sum, t.time.delta_ops_ns as f64, "{}", t.job);
    }
    // the misses part by mechanism, at each run's mean cost of a miss: the same total
    let misses = c
        .time
        .groups
        .iter()
        .find(|g| g.group == "misses x I/O time")
        .expect("group");
    let by_mech: f64 = c.misses_by_mechanism.iter().map(|p| p.delta_ns).sum();
    assert!(
        (by_mech - misses.delta_ns).abs() < 1.0 + 1e-9 * misses.a_ns,
        "{by_mech} {misses:?}"
    );
}

/// Each job's misses in the task dimension are those the engine counted for the job (its reads
/// that did not hit), under A (`cfgs[0]`) and B.
fn jobs_match(cfgs: &[&RunConfig], task: &lrugen::explain::Dimension) {
    for (side, cfg) in cfgs.iter().enumerate() {
        let mut c = (*cfg).clone();
        c.engine.as_mut().expect("engine").per_job = true;
        let r = sim::run(&c, None, &mut |_, _| {}).expect("run");
        let jobs = &r.engine.as_ref().expect("engine").jobs;
        assert_eq!(jobs.len(), task.rows.len(), "{task:?}");
        for (j, row) in jobs.iter().zip(&task.rows) {
            let misses = j.read.ios - j.read.hits + j.write.ios - j.write.hits;
            assert_eq!(misses, if side == 0 { row.a } else { row.b }, "side {side}: {task:?}");
        }
    }
}

#[test]
fn an_engine_hot_set_under_a_stream_lands_on_the_hot_task() {
    let cfgs = engine_configs(HOT_UNDER_STREAM);
    let (a, b) = (&cfgs[0], &cfgs[1]);
    assert_eq!((a.policy, b.policy), (PolicyKind::Mglru, PolicyKind::Classic));
    let s = engine_study(a, b, 1, 2);
    sums_hold(&s);
    cost_sums_hold(&s);
    let e = &s.explanation;
    // the recorder counts the engine's misses, and changes nothing in the run
    let plain = sim::run(a, None, &mut |_, _| {}).expect("run");
    assert_eq!(plain.misses, e.a.misses);
    assert!(
        e.delta > e.b.misses as i64 / 10,
        "MGLRU 7.2 must lose the hot set here: {}",
        e.delta
    );
    // the task dimension: the hot task's pages carry the difference, the stream's next to none
    let task = dim(&s, "task");
    assert_eq!(task.rows.len(), 2, "{task:?}");
    let hot = &task.rows[0];
    assert!(hot.class.starts_with("job 0 (part 0"), "{task:?}");
    assert!(hot.delta * 100 >= e.delta * 95, "{task:?}");
    // a page's identity is its task's: each job's misses are the ones the engine counted for it
    // (without the per-job key offsets, the stream's keys fall on the hot file's)
    jobs_match(&[a, b], task);
    let region = dim(&s, "region");
    let hot_file = region
        .rows
        .iter()
        .find(|r| r.class.ends_with("(id 0)"))
        .expect("hot file");
    assert_eq!((hot_file.a, hot_file.b), (hot.a, hot.b), "{region:?} {task:?}");
    // through evictions: first accesses are the same in both runs
    let mech = dim(&s, "mechanism");
    assert_eq!(class(mech, "first access").2, 0);
    // and they cost time: the misses part carries the time difference
    let c = s.cost.as_ref().expect("cost");
    assert!(c.time.delta_ops_ns > 0);
    let misses = &c.time.groups[0];
    assert!(misses.delta_ns >= 0.9 * c.time.delta_ops_ns as f64, "{c:?}");
    // per job: the hot job's operations carry the time its misses cost
    assert_eq!(c.per_task.len(), 2);
    assert!(
        c.per_task[0].job.starts_with("job 0 (part 0"),
        "{:?}",
        c.per_task[0].job
    );
    let hot_misses = &c.per_task[0].time.groups[0];
    assert!(hot_misses.delta_ns > 0.0, "{:?}", c.per_task);
    assert!(
        hot_misses.delta_ns > c.per_task[1].time.groups[0].delta_ns,
        "the hot job's misses cost more of the difference than the stream's: {:?}",
        c.per_task
    );
}

/// One task reading a 4 GiB file at random (each page about once: every miss is a first access,
/// under any policy) on a 16 MiB machine, with or without kswapd.
const ONE_PASS: &str = r#"
seed = 5
policies = ["classic"]
[machine]
memory = "16M"
[workload]
kind = "fio"
dist = "zoned:100/100"
file_pages = "4G"
accesses = 20000
[engine]
cpus = 2
storage = "nvme"
"#;

#[test]
fn the_same_misses_reclaimed_directly_cost_direct_reclaim() {
    let cfgs = engine_configs(ONE_PASS);
    let b = cfgs[0].clone();
    let mut a = b.clone();
    a.machine.kswapd = false;
    let s = engine_study(&a, &b, 1, 2);
    sums_hold(&s);
    cost_sums_hold(&s);
    let e = &s.explanation;
    assert_eq!(e.delta, 0, "the same misses");
    let c = s.cost.as_ref().expect("cost");
    // one task without think time: its operations' time is the run's
    assert_eq!((c.time.a_ops_ns, c.time.b_ops_ns), (c.a_elapsed_ns, c.b_elapsed_ns));
    assert_eq!(c.overlap_ns, 0.0);
    // A reclaims in the task, B in kswapd on the other CPU
    assert!(c.time.delta_ops_ns > 0, "{c:?}");
    let group = |g: &str| c.time.groups.iter().find(|x| x.group == g).expect("group").delta_ns;
    assert!(group("direct reclaim CPU") >= 0.9 * c.time.delta_ops_ns as f64, "{c:?}");
    let kswapd_cpu: f64 = c.kswapd_cpu.iter().map(|p| p.b_ns).sum();
    assert!(kswapd_cpu > 0.0, "B's kswapd did the reclaim: {c:?}");
    assert_eq!(c.kswapd_cpu.iter().map(|p| p.a_ns).sum::<f64>(), 0.0);
    let list = c
        .time
        .parts
        .iter()
        .find(|p| p.part.starts_with("list work"))
        .expect("list work");
    assert!(list.delta_ns > 0.0, "{c:?}");
}

/// Four fio jobs, each on its own file, zipf 0.9, in a memcg smaller than the files.
const FIO_JOBS: &str = r#"
seed = 11
policies = ["mglru", "classic"]
profiles = ["7.2"]
[memcg]
max = "6M"
[workload]
kind = "fio"
dist = "zipf:0.9"
file_pages = "4M"
accesses = 5000
[engine]
cpus = 2
jobs = 4
storage = "nvme"
"#;

#[test]
fn multi_job_fio_is_explained_the_same_at_one_and_two_threads() {
    let cfgs = engine_configs(FIO_JOBS);
    let s1 = engine_study(&cfgs[0], &cfgs[1], 2, 1);
    let s2 = engine_study(&cfgs[0], &cfgs[1], 2, 2);
    sums_hold(&s1);
    cost_sums_hold(&s1);
    let j1 = serde_json::to_string(&s1).expect("json");
    assert_eq!(j1, serde_json::to_string(&s2).expect("json"));
    let task = dim(&s1, "task");
    assert_eq!(task.rows.len(), 4, "{task:?}");
    jobs_match(&[&cfgs[0], &cfgs[1]], task);
    // each job its own file: a job's pages are its file's
    let region = dim(&s1, "region");
    assert_eq!(region.rows.len(), 4, "{region:?}");
    for (t, r) in task.rows.iter().zip(&region.rows) {
        assert_eq!((t.a, t.b), (r.a, r.b), "{task:?} {region:?}");
    }
    assert_eq!(s1.deltas.len(), 2);
}

/// The recording of one run of `cfg` on `keys`.
fn recorded(cfg: &RunConfig, path: &std::path::Path) -> lrugen::explain::Recording {
    let t = workload::load_trace(path).expect("trace");
    let r = sim::run_recorded(cfg, Some(t), 4, &mut |_, _| {}).expect("recorded run");
    let x = *r.recording.expect("recording");
    // the eviction-context classes cover every miss, like the mechanisms
    for v in [&x.tiers, &x.aging, &x.types] {
        assert_eq!(v.iter().sum::<u64>(), r.misses);
    }
    let not_evicted = x.mechanism[0] + x.mechanism[7];
    assert_eq!(
        (x.tiers[0], x.aging[0], x.types[0]),
        (not_evicted, not_evicted, not_evicted)
    );
    x
}

/// Two passes over `n` pages: each miss of the second pass is of a page evicted once, in the
/// first.
fn two_passes(n: u32) -> Vec<u32> {
    (0..n).chain(0..n).collect()
}

#[test]
fn fresh_anon_pages_are_evicted_only_after_aging_file_pages_before_it() {
    // MGLRU puts a freshly faulted anon folio in max_seq − 1 (max_seq if active), and evicts
    // nothing while only MIN_NR_GENS generations are left (`scan_folios`): its first eviction
    // always follows an aging pass (`inc_max_seq`). A file page read in goes to min_seq + 1 or
    // min_seq (`lru_gen_add_folio`), evictable before aging looks at it.
    let f = trace(&two_passes(6_000));
    for profile in [Profile::V6_12, Profile::V7_2] {
        let mut anon = config(f.path(), PolicyKind::Mglru, profile, 2_000);
        anon.machine = MachineConfig::simple(2_000 + 16_384, 16_384);
        // one page per swap-in (`vm.page-cluster=0`): read-ahead would bring the second pass's
        // pages in before their faults
        anon.machine.page_cluster = 0;
        anon.workload = WorkloadSpec::Trace {
            path: f.path().to_path_buf(),
            format: None,
            access: workload::TraceAccess::Anon,
        };
        let x = recorded(&anon, f.path());
        let evicted: u64 = x.mechanism[1..7].iter().sum();
        assert!(
            evicted >= 3_000,
            "{profile:?}: the second pass misses pages evicted in the first: {x:?}"
        );
        assert_eq!(x.aging[1], 0, "{profile:?}: {:?}", x.aging);
        assert_eq!(x.aging[2], evicted, "{profile:?}");
        assert_eq!(
            x.types[1] + x.types[2] + x.types[3],
            evicted,
            "anon: swapped out {:?}",
            x.types
        );
        let file = recorded(&config(f.path(), PolicyKind::Mglru, profile, 2_000), f.path());
        assert!(file.aging[1] > 0, "{profile:?}: {:?}", file.aging);
        assert_eq!(
            file.types[4] + file.types[5] + file.types[6],
            file.aging[1] + file.aging[2]
        );
        // the classic LRU has neither generations nor tiers
        let classic = recorded(&config(f.path(), PolicyKind::Classic, profile, 2_000), f.path());
        let evicted: u64 = classic.mechanism[1..7].iter().sum();
        assert!(evicted > 0);
        assert_eq!((classic.aging[3], classic.tiers[3]), (evicted, evicted));
    }
}

#[test]
fn tier_protection_is_seen_only_where_the_pid_controller_protects() {
    // 7.2 MGLRU loses hot pages to the stream; the hot pages' reads put them in tiers above the
    // stream's tier 0, and when they refault more than tier 0 the PID controller protects their
    // tiers (`get_tier_idx`): some of the hot pages' misses follow evictions in such scans
    let f = trace(&hot_and_stream());
    let x = recorded(&config(f.path(), PolicyKind::Mglru, Profile::V7_2, 2_000), f.path());
    assert!(x.tiers[1] > 0, "{:?}", x.tiers);
    assert!(x.tiers[2] > 0, "{:?}", x.tiers);
    // MGLRU-FG with sort_folio's tier protection off protects no tier: none of its many
    // evictions (a hot set of 1,500 pages thrashes) is below a protected tier
    let keys: Vec<u32> = (0..60_000u32).flat_map(|i| [i % 1_500, 10_000 + i]).collect();
    let g = trace(&keys);
    let off: Profile = "mglru-fg+fg_no_tier_protection=true".parse().expect("profile");
    let y = recorded(&config(g.path(), PolicyKind::Mglru, off, 2_000), g.path());
    assert!(y.tiers[2] > 50_000, "{:?}", y.tiers);
    assert_eq!(y.tiers[1], 0, "{:?}", y.tiers);
    // and the classic LRU has no tiers
    let c = recorded(&config(f.path(), PolicyKind::Classic, Profile::V7_2, 2_000), f.path());
    assert_eq!(c.tiers[1] + c.tiers[2], 0, "{:?}", c.tiers);
}

/// An anon region and a file read side by side (Zipf), in a memcg smaller than both, with swap:
/// the type reclaim evicts from follows swappiness.
const ANON_AND_FILE: &str = r#"
seed = 7
policies = ["mglru", "classic"]
profiles = ["7.2"]
[machine]
memory = "128M"
swap = "64M"
[memcg]
max = "8M"
swappiness = 100
[workload]
kind = "mix"
[[workload.parts]]
jobs = 1
workload = { kind = "anon", pages = "8M", write_ratio = 0.3, dist = "zipf:0.9", accesses = 20000 }
[[workload.parts]]
jobs = 1
workload = { kind = "fio", dist = "zipf:0.9", file_pages = "8M", accesses = 20000 }
[engine]
cpus = 2
storage = "nvme"
"#;

#[test]
fn swappiness_moves_the_difference_between_swapped_and_dropped() {
    let cfgs = engine_configs(ANON_AND_FILE);
    for a in &cfgs[..2] {
        // A swaps at swappiness 100, B at 0 (file only: MGLRU's `swappiness <= 1`, classic's
        // SCAN_FILE for cgroup reclaim at swappiness 0)
        let mut b = a.clone();
        b.memcg.swappiness = Some(0);
        let s = engine_study(a, &b, 1, 2);
        sums_hold(&s);
        let types = dim(&s, "mechanism: type reclaim chose");
        let anon: Vec<_> = types
            .rows
            .iter()
            .filter(|r| r.class.starts_with("anon swapped"))
            .collect();
        let file: Vec<_> = types
            .rows
            .iter()
            .filter(|r| r.class.starts_with("file dropped"))
            .collect();
        let b_anon: u64 = anon.iter().map(|r| r.b).sum();
        let a_anon: u64 = anon.iter().map(|r| r.a).sum();
        assert_eq!(b_anon, 0, "{:?} swappiness 0 swaps nothing: {types:?}", a.policy);
        assert!(a_anon > 0, "{:?}: {types:?}", a.policy);
        // B drops file pages because it was forced to, A because swappiness balanced it so
        assert!(class(types, "file dropped, type forced").1 > 0, "{types:?}");
        let a_balanced = class(types, "anon swapped out, type balanced by swappiness").0
            + class(types, "file dropped, type balanced by swappiness").0;
        assert!(a_balanced > 0, "{types:?}");
        // each side's file and anon misses evicted by reclaim are the page-type dimension's
        let file_b: u64 = file.iter().map(|r| r.b).sum();
        let ty = dim(&s, "page type");
        assert!(file_b <= class(ty, "file").1, "{types:?} {ty:?}");
        assert!(a_anon <= class(ty, "anon").0, "{types:?} {ty:?}");
    }
}

/// The reports in `docs/explain/` (`scripts/explain-docs.sh`) are generated, not written: every
/// one with a switch ablation names every switch the model has, in its table or in its "no
/// effect here" list, once. A switch added without regenerating them fails here (three had gone
/// missing before this test).
#[test]
fn the_explain_docs_ablate_every_switch() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/explain");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path().join("explanation.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let a = &v["ablation"];
        let mut names: Vec<&str> = a["switches"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no ablation.switches", path.display()))
            .iter()
            .map(|s| s["switch"].as_str().unwrap())
            .chain(a["no_effect"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()))
            .collect();
        names.sort_unstable();
        let mut want = lrugen::reclaim::mglru::Switches::NAMES.to_vec();
        want.sort_unstable();
        assert_eq!(
            names,
            want,
            "{}: regenerate docs/explain with scripts/explain-docs.sh",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 8, "{checked} reports in {}", dir.display());
}

// SPDX-License-Identifier: GPL-2.0-only
//! Issue #17's cost of `lrugen explain`'s per-page recording: the same run with the recorder off
//! (`sim::run`) and on (`sim::run_recorded`), for MGLRU and the classic LRU, on the default
//! workload (buffered Zipf 0.9 reads over 4 x 32 MiB files in a 64 MiB memcg, 500,000 reads) and
//! on the OLTP trace (a shared trace: skipped with a note when missing), and in virtual time on
//! `examples/fio-jobs-nvme.toml` (the engine, 4 fio jobs; its classic and first MGLRU cells,
//! recorded per task, with the per-task time split). The issue asks for at most
//! 2x the run's time. The recorder's memory is dense arrays: 40 bytes per key of the stream (its
//! pages) and 9 per page frame of the machine, nothing per access.

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use lrugen::mm::MachineConfig;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig};
use lrugen::workload::{self, WorkloadSpec};
use lrugen_trace::testdata::shared_trace;
use std::hint::black_box;
use std::time::Duration;

fn config(workload: WorkloadSpec, policy: PolicyKind, max: u64) -> RunConfig {
    RunConfig {
        machine: MachineConfig::simple(max + 16_384, 0),
        memcg: MemcgConfig {
            max: Some(max),
            ..Default::default()
        },
        workload,
        policy,
        seed: 1,
        capacity: Some(max),
        check: false,
        mglru: Default::default(),
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

fn bench(c: &mut Criterion) {
    let mut cases = vec![(
        "default",
        WorkloadSpec::FileRead {
            files: 4,
            file_pages: 8192,
            dist: "zipf:0.9".parse().expect("dist"),
            accesses: 500_000,
        },
        16_384u64,
        None,
    )];
    match shared_trace("arc/OLTP.lis.zst") {
        Some(path) => {
            let t = workload::load_trace(&path).expect("OLTP trace");
            cases.push((
                "OLTP",
                WorkloadSpec::Trace {
                    path,
                    format: None,
                    access: Default::default(),
                },
                4096,
                Some(t),
            ));
        }
        None => eprintln!("note: the OLTP trace is missing (../shared/traces/arc; see its README): its rows skipped"),
    }
    let mut g = c.benchmark_group("explain");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for (name, w, max, trace) in cases {
        for policy in [PolicyKind::Mglru, PolicyKind::Classic] {
            let cfg = config(w.clone(), policy, max);
            g.bench_function(format!("{name}/{}/plain", policy.name()), |b| {
                b.iter(|| black_box(sim::run(&cfg, trace.clone(), &mut |_, _| {}).expect("run").misses))
            });
            g.bench_function(format!("{name}/{}/recorded", policy.name()), |b| {
                b.iter(|| {
                    black_box(
                        sim::run_recorded(&cfg, trace.clone(), 20, &mut |_, _| {})
                            .expect("run")
                            .misses,
                    )
                })
            });
        }
    }
    // engine runs: the experiment's first sweep point and repetition, its classic and first MGLRU
    // cells
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fio-jobs-nvme.toml");
    let text = std::fs::read_to_string(&path).expect("examples/fio-jobs-nvme.toml");
    let exp = lrugen::experiment::Experiment::parse(&text, &path).expect("experiment");
    for policy in [PolicyKind::Mglru, PolicyKind::Classic] {
        let cell = exp
            .cells()
            .into_iter()
            .find(|c| c.point == 0 && c.repetition == 0 && exp.run_config(c, None).policy == policy)
            .expect("a cell of the policy");
        let cfg = exp.run_config(&cell, None);
        g.bench_function(format!("fio-jobs-nvme/{}/plain", policy.name()), |b| {
            b.iter(|| black_box(sim::run(&cfg, None, &mut |_, _| {}).expect("run").misses))
        });
        g.bench_function(format!("fio-jobs-nvme/{}/recorded", policy.name()), |b| {
            b.iter(|| black_box(sim::run_recorded(&cfg, None, 20, &mut |_, _| {}).expect("run").misses))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

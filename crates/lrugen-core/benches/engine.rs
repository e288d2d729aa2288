// SPDX-License-Identifier: GPL-2.0-only
//! Simulated accesses per second of plain LRU (`lrugen_cache::Lru`, the reference cache) and of the
//! kernel models on the simulated machine — the classic LRU and MGLRU in both profiles (`sim::run`,
//! memcg `memory.max` = the capacity), on real traces: OLTP at C = 1000 and
//! P3 at C = 65536 pages.
//!
//! Each trace is loaded (decompressed and renumbered) once, outside the timed loop; the plain LRU's
//! arrays are allocated outside it too. For the classic LRU only the replay is timed, not building
//! the simulated machine and the trace's file (`RunResult::wall_seconds`, as `lrugen bench`
//! reports it). A missing shared trace skips its benchmarks with a note (and fails under `CI=true`,
//! see `lrugen_trace::testdata`).
//!
//! `cargo bench -p lrugen-core --bench engine` takes about a minute.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use lrugen::mm::MachineConfig;
use lrugen::reclaim::mglru::Profile;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig};
use lrugen::workload::WorkloadSpec;
use lrugen_cache::Lru;
use lrugen_trace::{load_dense, spill_dense, testdata::shared_trace};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    for (name, file, cap) in [("OLTP", "arc/OLTP.lis.zst", 1000u64), ("P3", "arc/P3.lis.zst", 65536)] {
        let Some(path) = shared_trace(file) else {
            eprintln!("note: skipping the {name} benchmarks: trace {file} is missing");
            continue;
        };
        let t = load_dense(&path, None).unwrap_or_else(|e| panic!("{e}"));
        let nr_unique = t.nr_unique;
        let requests = t.nr_requests;
        let loaded = t.pages;
        // the kernel policies replay it as `lrugen run` does: spilled to disk, read back in chunks
        let spilled = spill_dense(&path, None).unwrap_or_else(|e| panic!("{e}"));

        // "engine/…": lrugen-cache's trace_lru bench already owns the ids "OLTP/C=1000/lru" etc. in
        // target/criterion, and criterion would compare the two.
        let mut g = c.benchmark_group(format!("engine/{name}/C={cap}"));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            // 10 replays of P3 under the classic LRU take about 6 s (criterion wants a margin).
            .measurement_time(Duration::from_secs(if requests > 2_000_000 { 7 } else { 3 }))
            .throughput(Throughput::Elements(requests));

        g.bench_function("lru", |b| {
            b.iter_batched(
                || Lru::with_pages(cap as usize, nr_unique),
                |mut lru| lru.run(black_box(&loaded)),
                BatchSize::LargeInput,
            )
        });

        for (label, policy, profile) in [
            ("classic", PolicyKind::Classic, Profile::V6_17),
            ("mglru", PolicyKind::Mglru, Profile::V6_17),
            ("mglru-6.1", PolicyKind::Mglru, Profile::V6_1),
        ] {
            // As `lrugen bench` sets it up: memory.max = the capacity, room to spare on the machine.
            let mut cfg = RunConfig::new(
                MachineConfig::simple(cap + cap.max(16_384), 0),
                MemcgConfig {
                    max: Some(cap),
                    ..Default::default()
                },
                WorkloadSpec::Trace {
                    path: path.clone(),
                    format: None,
                    access: Default::default(),
                },
                policy,
            );
            cfg.mglru.profile = profile;
            // Timed: the replay only, as `RunResult::wall_seconds` measures it (after the machine and
            // the workload are set up), the same span `lrugen bench` reports.
            g.bench_function(label, |b| {
                b.iter_custom(|iters| {
                    let mut replay = Duration::ZERO;
                    for _ in 0..iters {
                        let r = sim::run(&cfg, Some(spilled.clone()), &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"));
                        assert_eq!(r.accesses, requests);
                        black_box(r.hits);
                        replay += Duration::from_secs_f64(r.wall_seconds);
                    }
                    replay
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

// SPDX-License-Identifier: GPL-2.0-only
//! What the lock model costs in simulation speed (`sim::locks`): the fio preset
//! `examples/fg-fio-zipf-small.toml` (16 fio jobs of zipf:0.9 random reads on 16 CPUs in one
//! 64 MiB memcg, 640,000 reads), its first repetition under each of its policies, with
//! `EngineConfig::locks` off (every `lru_lock` hold priced uncontended, no log) and on (each hold
//! logged and placed on its lock's timeline). The counters and prices of the lock sites are
//! there in both; what differs is the log and the timelines.
//!
//! Timed: the replay (`RunResult::wall_seconds`), as `lrugen bench` reports it.
//! `cargo bench -p lrugen-core --bench contention` takes about a minute.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lrugen::experiment::Experiment;
use lrugen::sim;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fg-fio-zipf-small.toml");
    let text = std::fs::read_to_string(&file).expect("the fio preset");
    let exp = Experiment::parse(&text, &file).unwrap_or_else(|e| panic!("{e}"));
    let mut g = c.benchmark_group("contention/fg-fio-zipf-small");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(8));
    for cell in exp.cells().into_iter().filter(|c| c.repetition == 0) {
        let v = &exp.variants[cell.variant];
        for locks in [false, true] {
            let mut cfg = exp.run_config(&cell, None);
            let e = cfg.engine.as_mut().expect("an engine preset");
            e.locks = locks;
            let ops: u64 = 16 * 40_000;
            g.throughput(Throughput::Elements(ops));
            let label = format!("{}/locks-{}", v.label, if locks { "on" } else { "off" });
            g.bench_function(label, |b| {
                b.iter_custom(|iters| {
                    let mut t = Duration::ZERO;
                    for _ in 0..iters {
                        let r = sim::run(&cfg, None, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"));
                        black_box(r.engine.as_ref().map(|e| e.lru_lock));
                        t += Duration::from_secs_f64(r.wall_seconds);
                    }
                    t
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

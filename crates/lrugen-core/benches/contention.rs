// SPDX-License-Identifier: GPL-2.0-only
//! What the cost model and the lock model cost in simulation speed (`sim::engine`,
//! `sim::locks`): the fio preset `examples/fg-fio-zipf-small.toml` (16 fio jobs of zipf:0.9
//! random reads on 16 CPUs in one 64 MiB memcg, 640,000 reads), its first repetition under each
//! of its policies, run three ways: `no-engine`, the same 640,000 zipf:0.9 reads as one job on
//! one file as large as the 16 jobs' files together, replayed without virtual time (no prices,
//! no tasks: what the kernel model alone costs; a replay without the engine runs one stream, so
//! its misses differ somewhat: they are printed); `locks-off`, the engine
//! pricing every operation with its costs, every `lru_lock` hold uncontended and unlogged;
//! `locks-on`, each hold also logged and placed on its lock's timeline. The counters of the lock
//! sites are kept in all three; what differs is the pricing, the log and the timelines.
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
        for mode in ["no-engine", "locks-off", "locks-on"] {
            let mut cfg = exp.run_config(&cell, None);
            match mode {
                "no-engine" => {
                    // the plain replay runs one stream: the jobs' accesses in one job
                    cfg.engine = None;
                    if let lrugen::workload::WorkloadSpec::Fio {
                        accesses, file_pages, ..
                    } = &mut cfg.workload
                    {
                        *accesses *= u64::from(cfg.jobs);
                        *file_pages *= u64::from(cfg.jobs);
                    }
                    cfg.jobs = 1;
                }
                m => cfg.engine.as_mut().expect("an engine preset").locks = m == "locks-on",
            }
            // what one run does, so that the three ways can be compared
            match sim::run(&cfg, None, &mut |_, _| {}) {
                Ok(r) => eprintln!(
                    "{}/{mode}: {} accesses, {} misses, {:?}",
                    v.label, r.accesses, r.misses, r.error
                ),
                Err(e) => {
                    eprintln!("{}/{mode}: skipped: {e}", v.label);
                    continue;
                }
            }
            let ops: u64 = 16 * 40_000;
            g.throughput(Throughput::Elements(ops));
            let label = format!("{}/{mode}", v.label);
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

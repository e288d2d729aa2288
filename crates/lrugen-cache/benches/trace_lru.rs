//! Throughput of plain LRU and OPT on real traces: OLTP at C = 1000 and P3 at
//! C = 65536. Skips with a note when the shared traces are absent.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lrugen_cache::{lru, opt, opt_btree, NextUse, Opt};
use lrugen_trace::{load_dense, testdata::shared_trace};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    for (name, file, cap) in [("OLTP", "arc/OLTP.lis.zst", 1000usize), ("P3", "arc/P3.lis.zst", 65536)] {
        let Some(path) = shared_trace(file) else {
            eprintln!("note: skipping the {name} benchmarks, trace missing");
            continue;
        };
        let t = load_dense(&path, None).expect("load trace");
        let next = NextUse::of(&t);
        let mut g = c.benchmark_group(format!("{name}/C={cap}"));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .throughput(Throughput::Elements(t.nr_requests));
        g.bench_function("lru", |b| b.iter(|| lru(black_box(&t), cap)));
        g.bench_function("opt_sim", |b| {
            b.iter(|| Opt::new(black_box(&t.pages), &next, cap).run())
        });
        g.bench_function("opt_with_next_use", |b| b.iter(|| opt(black_box(&t), cap)));
        g.bench_function("opt_btree_with_next_use", |b| b.iter(|| opt_btree(black_box(&t), cap)));
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

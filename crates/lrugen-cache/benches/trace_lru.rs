// SPDX-License-Identifier: GPL-2.0-only
//! Throughput of plain LRU and OPT on real traces: OLTP at C = 1000 and P3 at
//! C = 65536 (OPT); plain LRU and the bare loop on every row of issue #15's
//! table (OLTP and P3 at 1,000 and 65,536 pages, CloudPhysics at 5,000): `lru`
//! over the dense id slice (`Lru::run`), `lru_chunks` over the ids as a spilled
//! trace hands them to the replay (little-endian bytes, `CHUNK_IDS` at a time,
//! `Lru::access_le_chunk`), and `bare`, the same bytes read with no policy, the
//! ceiling of any policy's rate. Skips with a note when the shared traces are
//! absent.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lrugen_cache::{lru, opt, opt_btree, Lru, NextUse, Opt};
use lrugen_trace::{le_ids, load_dense, testdata::shared_trace, CHUNK_IDS};
use std::hint::black_box;
use std::time::Duration;

/// The rows of issue #15's table: (name, shared trace, capacity in pages).
const ROWS: [(&str, &str, usize); 5] = [
    ("OLTP", "arc/OLTP.lis.zst", 1000),
    ("OLTP", "arc/OLTP.lis.zst", 65536),
    ("P3", "arc/P3.lis.zst", 1000),
    ("P3", "arc/P3.lis.zst", 65536),
    ("cloudPhysics", "cloudphysics/cloudPhysicsIO.oracleGeneral.bin", 5000),
];

/// Plain LRU and the bare loop on the rows of issue #15's table.
fn issue_rows(c: &mut Criterion) {
    for (name, file, cap) in ROWS {
        let Some(path) = shared_trace(file) else {
            eprintln!("note: skipping the {name} row, trace missing");
            continue;
        };
        let t = load_dense(&path, None).expect("load trace");
        let bytes: Vec<u8> = t.pages.iter().flat_map(|p| p.to_le_bytes()).collect();
        let mut g = c.benchmark_group(format!("lru/{name}/C={cap}"));
        g.sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .throughput(Throughput::Elements(t.nr_requests));
        g.bench_function("bare", |b| {
            b.iter(|| {
                for chunk in black_box(&bytes).chunks(4 * CHUNK_IDS) {
                    for id in le_ids(chunk) {
                        black_box(id);
                    }
                }
            })
        });
        g.bench_function("lru", |b| b.iter(|| lru(black_box(&t), cap)));
        g.bench_function("lru_chunks", |b| {
            b.iter(|| {
                let mut c = Lru::with_pages(cap, t.nr_unique);
                black_box(&bytes)
                    .chunks(4 * CHUNK_IDS)
                    .map(|chunk| c.access_le_chunk(chunk))
                    .sum::<u64>()
            })
        });
        g.finish();
    }
}

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

criterion_group!(benches, bench, issue_rows);
criterion_main!(benches);

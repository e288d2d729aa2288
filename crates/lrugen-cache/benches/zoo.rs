//! Throughput of every zoo policy (and LRU) on a synthetic Zipf stream: 1,000,000 references
//! over 100,000 pages, exponent 0.9 (ranks in id order), C = 10,000 pages.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lrugen_cache::{lru, zoo, ZooPolicy};
use lrugen_trace::DenseTrace;
use std::hint::black_box;
use std::time::Duration;

const PAGES: usize = 100_000;
const REFS: usize = 1_000_000;
const THETA: f64 = 0.9;
const CAPACITY: usize = 10_000;

/// A Zipf(θ) stream by inverse transform over the cumulative weights, from a fixed xorshift64*
/// seed (no dependency, the same stream every run).
fn zipf_stream() -> DenseTrace {
    let mut cdf = Vec::with_capacity(PAGES);
    let mut sum = 0.0;
    for rank in 1..=PAGES {
        sum += 1.0 / (rank as f64).powf(THETA);
        cdf.push(sum);
    }
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let keys = (0..REFS).map(|_| {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let u = (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64 * sum;
        cdf.partition_point(|&c| c < u).min(PAGES - 1) as u64
    });
    DenseTrace::from_keys(keys)
}

fn bench(c: &mut Criterion) {
    let t = zipf_stream();
    let mut g = c.benchmark_group(format!("zipf{THETA}/C={CAPACITY}"));
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .throughput(Throughput::Elements(t.nr_requests));
    g.bench_function("lru", |b| b.iter(|| lru(black_box(&t), CAPACITY)));
    for policy in ZooPolicy::ALL {
        g.bench_function(policy.name(), |b| b.iter(|| zoo(black_box(&t), policy, CAPACITY)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen run --output-format cachesim`: each policy's result as the line libCacheSim's `cachesim`
//! prints for one cache (`libCacheSim/bin/cachesim/main.c`, the results of a run of several
//! caches, which `cachesim` also appends to its result file):
//!
//! ```text
//! "%s %s cache size %8ld%s, %lld req, miss ratio %.4lf, byte miss ratio %.4lf\n"
//! trace_path, cache_name, cache_size / size_unit, size_unit_str, n_req, n_miss / n_req, n_miss_byte / n_req_byte
//! ```
//!
//! so that scripts written for libCacheSim's output read lrugen's. lrugen's objects are pages of
//! one size, so the line is `cachesim`'s with `--ignore-obj-size 1`: the size is a count of objects
//! (pages) with no unit, and the byte miss ratio equals the miss ratio. The trace is the path as
//! given (`--trace`, `--ops`, `--fio`), or the built-in workload's name. The cache name is the one
//! libCacheSim gives the cache with its default parameters (`cache->cache_name`: `LRU`, `Belady`,
//! `FIFO`, `Clock`, `Sieve`, `S3FIFO-0.1000-2`, `ARC`, `TwoQ`, `LIRS`, `WTinyLFU-w0.01-SLRU`,
//! `ClockPro`); the kernel policies, which libCacheSim does not have, keep lrugen's row label
//! (`mglru`, `classic`, `mglru-7.2`). A request is an access; a miss is a miss of lrugen's table
//! (for the kernel policies a major fault: minor faults, served without I/O, are not misses).
//! `cachesim`'s single-cache line (`sim.c`) ends in a wall-clock throughput instead of the byte
//! miss ratio; it is not written, so that the output is deterministic.

use lrugen::sim::RunResult;

/// libCacheSim's name of the cache behind lrugen's row label `policy` (the label itself for the
/// kernel policies).
pub fn cache_name(policy: &str) -> String {
    let name = match policy {
        "lru" => "LRU",
        "opt" => "Belady",
        "fifo" => "FIFO",
        "clock" => "Clock",
        "sieve" => "Sieve",
        // S3FIFO_init: "S3FIFO-%.4lf-%d", small_size_ratio 0.1, move_to_main_threshold 2
        "s3fifo" => "S3FIFO-0.1000-2",
        "arc" => "ARC",
        "2q" => "TwoQ",
        "lirs" => "LIRS",
        // WTinyLFU_init: "WTinyLFU-w%.2lf-%s", window_size 0.01, main_cache_type SLRU
        "wtinylfu" => "WTinyLFU-w0.01-SLRU",
        "clockpro" => "ClockPro",
        other => other,
    };
    name.to_string()
}

/// One `cachesim` line (without its newline): `trace` as `cachesim` prints its path, `size` in
/// objects, `req` requests of which `miss` missed.
pub fn line(trace: &str, name: &str, size: u64, req: u64, miss: u64) -> String {
    // cachesim divides without a guard: 0 requests print nan; so do we ("-nan" on glibc when
    // negative, which a count cannot be)
    let ratio = if req == 0 { f64::NAN } else { miss as f64 / req as f64 };
    let r = if ratio.is_nan() {
        "nan".to_string()
    } else {
        format!("{ratio:.4}")
    };
    format!("{trace} {name} cache size {size:>8}, {req} req, miss ratio {r}, byte miss ratio {r}")
}

/// The lines of a run, one per policy in the order run.
pub fn report(trace: &str, results: &[RunResult]) -> String {
    let mut o = String::new();
    for r in results {
        o.push_str(&line(
            trace,
            &cache_name(&r.policy),
            r.capacity_pages,
            r.accesses,
            r.misses,
        ));
        o.push('\n');
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C's `%.4lf` rounds the exact binary value to nearest, ties to even (glibc); so does Rust's
    /// `{:.4}`. Values checked against glibc's printf.
    #[test]
    fn ratios_round_as_printf_does() {
        for (miss, req, want) in [
            (1, 32, "0.0312"), // 0.03125 exactly: a tie, to even
            (3, 32, "0.0938"), // 0.09375 exactly: a tie, to even (up)
            (1, 3, "0.3333"),  // 0.333...
            (2, 3, "0.6667"),  // 0.666...
            (0, 5, "0.0000"),  // no miss
            (5, 5, "1.0000"),  // all
            (668_581, 914_145, "0.7314"),
            (1, 20_000, "0.0001"),  // 0.00005 is not exact: the double is above it
            (1, 200_000, "0.0000"), // 0.000005
        ] {
            let l = line("t", "LRU", 1, req, miss);
            assert!(
                l.ends_with(&format!("miss ratio {want}, byte miss ratio {want}")),
                "{miss}/{req}: {l}"
            );
        }
        assert_eq!(
            line("t", "LRU", 1, 0, 0),
            "t LRU cache size        1, 0 req, miss ratio nan, byte miss ratio nan"
        );
    }

    #[test]
    fn sizes_are_right_aligned_in_eight_columns_and_grow_past_them() {
        assert!(line("t", "FIFO", 1000, 10, 1).starts_with("t FIFO cache size     1000, 10 req,"));
        assert!(line("t", "FIFO", 123_456_789, 10, 1).starts_with("t FIFO cache size 123456789, 10 req,"));
    }

    #[test]
    fn names_are_libcachesims() {
        assert_eq!(cache_name("s3fifo"), "S3FIFO-0.1000-2");
        assert_eq!(cache_name("2q"), "TwoQ");
        assert_eq!(cache_name("opt"), "Belady");
        assert_eq!(cache_name("mglru-7.2"), "mglru-7.2");
        // every zoo policy has its libCacheSim name
        for p in [
            "fifo", "clock", "sieve", "s3fifo", "arc", "2q", "lirs", "wtinylfu", "clockpro",
        ] {
            let kind: lrugen::sim::PolicyKind = p.parse().unwrap();
            assert_eq!(kind.name(), p);
            assert_ne!(cache_name(p), p, "{p}");
        }
    }
}

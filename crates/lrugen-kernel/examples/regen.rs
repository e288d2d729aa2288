// SPDX-License-Identifier: GPL-2.0-only
//! Boot a Debian kernel, run a file-read workload, write the fixture JSON.
//! `cargo run --release -p lrugen-kernel --example regen -- SERIES OUT.json [mglru|classic]`
//! (see scripts/regen-kernel-fixtures.sh).

use lrugen_kernel::{file_read_ops, Fixture, KernelOpts, KernelSource, LruMode};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 3 {
        eprintln!("usage: regen SERIES OUT.json [mglru|classic]");
        std::process::exit(2);
    }
    let (file_pages, accesses, dist, seed, window) = (16384u64, 100_000u64, "zipf:0.9", 1u64, 5000u64);
    let ops = file_read_ops(file_pages, accesses, dist.parse().unwrap(), seed, window);
    let mut o = KernelOpts::new(KernelSource::Debian { series: a[1].clone() }, ops, 32 << 20);
    if a.get(3).map(String::as_str) == Some("classic") {
        o.lru = LruMode::Classic;
    }
    if let Ok(r) = std::env::var("LRUGEN_REPLAYER") {
        o.replayer = r.into();
    }
    match lrugen_kernel::run(&o) {
        Ok(run) => {
            let f = Fixture {
                command: format!(
                    "scripts/regen-kernel-fixtures.sh ({} {})",
                    a[1],
                    a.get(3).map_or("mglru", |s| s)
                ),
                file_pages,
                accesses,
                dist: dist.into(),
                seed,
                window,
                run,
            };
            std::fs::write(&a[2], serde_json::to_string_pretty(&f).unwrap() + "\n").unwrap();
            eprintln!(
                "{}: {} accesses, {} misses, resident {} pages, {:.0} s",
                f.run.kernel_release,
                f.run.accesses,
                f.run.misses,
                f.run.resident_pages(),
                f.run.wall_seconds
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

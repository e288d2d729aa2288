// SPDX-License-Identifier: GPL-2.0-only
//! Boot a Debian kernel, run a workload, write the fixture JSON.
//! `cargo run --release -p lrugen-kernel --example regen -- SERIES OUT.json [mglru|classic|anon]`
//! (see scripts/regen-kernel-fixtures.sh). `anon`: MGLRU, a 16 MiB anon region (4,096 pages)
//! populated with stores, then 50,000 loads/stores (30 % stores) drawn from Zipf θ=0.9, in an
//! 8 MiB memcg with 32 MiB of swap on a second virtio disk, `vm.page-cluster=0`.

use lrugen_kernel::{anon_ops, file_read_ops, AnonFixture, Fixture, KernelOpts, KernelSource, LruMode};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 3 {
        eprintln!("usage: regen SERIES OUT.json [mglru|classic|anon]");
        std::process::exit(2);
    }
    let mode = a.get(3).map_or("mglru", |s| s.as_str());
    let (file_pages, accesses, dist, seed, window, anon, memcg, swap_mib) = if mode == "anon" {
        let anon = AnonFixture {
            pages: 4096,
            write_ratio: 0.3,
        };
        (
            0u64,
            50_000u64,
            "zipf:0.9",
            1u64,
            5000u64,
            Some(anon),
            8u64 << 20,
            32u64,
        )
    } else {
        (16384u64, 100_000u64, "zipf:0.9", 1u64, 5000u64, None, 32u64 << 20, 0u64)
    };
    let d = dist.parse().unwrap();
    let ops = match &anon {
        Some(x) => anon_ops(x.pages, accesses, d, x.write_ratio, seed, window).unwrap(),
        None => file_read_ops(file_pages, accesses, d, seed, window),
    };
    let mut o = KernelOpts::new(KernelSource::Debian { series: a[1].clone() }, ops, memcg);
    o.swap_mib = swap_mib;
    o.lru_gen_every_window = anon.is_some();
    if mode == "classic" {
        o.lru = LruMode::Classic;
    }
    if let Ok(r) = std::env::var("LRUGEN_REPLAYER") {
        o.replayer = r.into();
    }
    match lrugen_kernel::run(&o) {
        Ok(run) => {
            let f = Fixture {
                command: format!("scripts/regen-kernel-fixtures.sh ({} {mode})", a[1]),
                file_pages,
                accesses,
                dist: dist.into(),
                seed,
                window,
                anon,
                run,
            };
            std::fs::write(&a[2], serde_json::to_string_pretty(&f).unwrap() + "\n").unwrap();
            eprintln!(
                "{}: {} accesses, {} misses, {} minor, resident {} pages, swap {} KiB, pswpin {:?}, pgmajfault {:?}, {} lru_gen samples, {:.0} s",
                f.run.kernel_release,
                f.run.accesses,
                f.run.misses,
                f.run.minor,
                f.run.resident_pages(),
                f.run.memory_swap_current_at_end_of_replay / 1024,
                f.run.vmstat_delta.get("pswpin"),
                f.run.vmstat_delta.get("pgmajfault"),
                f.run.lru_gen_samples.len(),
                f.run.wall_seconds
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

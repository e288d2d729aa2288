// SPDX-License-Identifier: GPL-2.0-only
//! Boot a Debian kernel, run a workload, write the fixture JSON.
//! `cargo run --release -p lrugen-kernel --example regen -- SERIES OUT.json [mglru|classic|small|anon|mixed|mixed-classic|sort|sort-classic]`
//! (see scripts/regen-kernel-fixtures.sh). SERIES: `6.1`, `6.12`, `7` (the newest 7.x, from Debian
//! sid) or `7.N` (the newest 7.N.y).
//!
//! * `mglru`, `classic`: 100,000 buffered reads (Zipf θ=0.9) of a 64 MiB file in a 32 MiB memcg.
//! * `small`: MGLRU, 20,000 buffered reads (Zipf θ=0.9) of a 16 MiB file in an 8 MiB memcg: the
//!   replayer's own anon pages (its op list) take a larger share of this memcg (about 6 %).
//! * `anon`: MGLRU, a 16 MiB anon region (4,096 pages) populated with stores, then 50,000
//!   loads/stores (30 % stores) drawn from Zipf θ=0.9, in an 8 MiB memcg with 32 MiB of swap on a
//!   second virtio disk, `vm.page-cluster=0`.
//! * `mixed` (MGLRU), `mixed-classic`: [`lrugen_kernel::mixed_ops`]: a 32 MiB file (8,192 pages)
//!   and a 16 MiB anon region (4,096 pages, populated first) in one process; 60,000 accesses
//!   (Zipf θ=0.9 on each), half of them to the anon region (30 % of those stores), the rest buffered
//!   file reads; a 16 MiB memcg with 32 MiB of swap on a virtio disk, `vm.page-cluster=0`.
//!
//! * `sort`: MGLRU, [`SORT`]: an 8 MiB heap, a 16 MiB input file read once, an 8 MiB shuffle
//!   file written (buffered) and read back, in a 12 MiB memcg with 32 MiB of swap on a virtio
//!   disk: the flusher's writeback of dirty file pages against the model's.
//!
//! `lru_gen` is captured after every window of 5,000 accesses for `anon`, `mixed` and `sort`.

/// The experiment of the `sort` fixture.
const SORT: &str = r#"name = "sort-writeback"
seed = 3
policies = ["mglru"]

[memcg]
max = "12M"

[workload]
kind = "sort"
heap_pages = "8M"
input_pages = "16M"
shuffle_pages = "8M"
sort_accesses = 20000
"#;

use lrugen_kernel::{
    anon_ops, file_read_ops, mixed_ops, AnonFixture, Fixture, KernelOpts, KernelSource, LruMode, MixedFixture,
};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() < 3 {
        eprintln!("usage: regen SERIES OUT.json [mglru|classic|small|anon|mixed|mixed-classic|sort|sort-classic]");
        std::process::exit(2);
    }
    let mode = a.get(3).map_or("mglru", |s| s.as_str());
    let (dist, seed, window) = ("zipf:0.9", 1u64, 5000u64);
    let d = dist.parse().unwrap();
    let (mut file_pages, mut anon, mut mixed, mut experiment) = (0u64, None, None, None);
    // buffered reads of one file of `pages` pages: (accesses, memcg bytes, swap MiB, ops)
    let file_read = |pages: u64, accesses: u64, memcg: u64| {
        (accesses, memcg, 0u64, file_read_ops(pages, accesses, d, seed, window))
    };
    let (accesses, memcg, swap_mib, ops) = match mode {
        "mglru" | "classic" => {
            file_pages = 16384;
            file_read(file_pages, 100_000, 32 << 20)
        }
        "small" => {
            file_pages = 4096;
            file_read(file_pages, 20_000, 8 << 20)
        }
        "anon" => {
            let x = AnonFixture {
                pages: 4096,
                write_ratio: 0.3,
            };
            let ops = anon_ops(x.pages, 50_000, d, x.write_ratio, seed, window).unwrap();
            anon = Some(x);
            (50_000, 8 << 20, 32, ops)
        }
        "mixed" | "mixed-classic" => {
            file_pages = 8192;
            let x = MixedFixture {
                anon_pages: 4096,
                anon_fraction: 0.5,
                write_ratio: 0.3,
            };
            let ops = mixed_ops(file_pages, &x, 60_000, d, seed, window).unwrap();
            mixed = Some(x);
            (60_000, 16 << 20, 32, ops)
        }
        "sort" | "sort-classic" => {
            let cfg = lrugen_kernel::fixture_experiment(SORT).unwrap();
            let ops = lrugen_kernel::ops::experiment_ops(&cfg, window).unwrap();
            // measured accesses: those after the `w` marker, if there is one
            let w = ops.ops.iter().position(|o| *o == lrugen_replay::ReplayOp::MeasureStart);
            let n = ops.ops.len() - w.map_or(0, |i| i + 1);
            experiment = Some(SORT.to_string());
            (n as u64, 12 << 20, 32, ops)
        }
        m => {
            eprintln!(
                "unknown mode '{m}': expected mglru, classic, small, anon, mixed, mixed-classic, sort or sort-classic"
            );
            std::process::exit(2);
        }
    };
    let mut o = KernelOpts::new(KernelSource::Debian { series: a[1].clone() }, ops, memcg);
    o.swap_mib = swap_mib;
    o.lru_gen_every_window = matches!(mode, "anon" | "mixed" | "sort");
    if mode.ends_with("classic") {
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
                mixed,
                experiment,
                run,
            };
            std::fs::write(&a[2], serde_json::to_string_pretty(&f).unwrap() + "\n").unwrap();
            let v = |k: &str| f.run.vmstat_delta.get(k).copied().unwrap_or(0);
            eprintln!(
                "{}: {} accesses, {} misses, {} minor, resident {} pages, swap {} KiB, pswpin {}, pgmajfault {}, \
                 pgpgin {} KiB, refaults anon {} file {}, {} lru_gen samples, {:.0} s",
                f.run.kernel_release,
                f.run.accesses,
                f.run.misses,
                f.run.minor,
                f.run.resident_pages(),
                f.run.memory_swap_current_at_end_of_replay / 1024,
                v("pswpin"),
                v("pgmajfault"),
                v("pgpgin"),
                v("workingset_refault_anon"),
                v("workingset_refault_file"),
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

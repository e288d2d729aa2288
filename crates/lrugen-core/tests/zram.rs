// SPDX-License-Identifier: GPL-2.0-only
//! zram: compressed swap whose pool takes memory from the node, with per-region compressibility.
//! A policy that swaps out incompressible pages frees less memory per page swapped, so the same
//! workload needs more swap-outs and more reclaim.

use lrugen::mm::device::DeviceSpec;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::MachineConfig;
use lrugen::sim::engine::EngineConfig;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunResult};
use lrugen::workload::WorkloadSpec;

/// `w` under `policy` on a machine of `pages` pages with `swap` pages of swap on the preset
/// `device`, in virtual time, the invariant checker on.
fn on(device: &str, pages: u64, swap: u64, w: WorkloadSpec, policy: PolicyKind) -> RunResult {
    let mut cfg = RunConfig::new(MachineConfig::simple(pages, swap), MemcgConfig::default(), w, policy);
    cfg.engine = Some(EngineConfig {
        swap_device: DeviceSpec::preset(device).unwrap(),
        ..Default::default()
    });
    cfg.check = true;
    sim::run(&cfg, None, &mut |_, _| {}).expect("run")
}

fn run(compressed_pct: u8, policy: PolicyKind) -> RunResult {
    // 12,000 pages of values on a machine of 10,000 pages: global pressure, swap on zram
    let w = WorkloadSpec::Memtier {
        keys: 12_000,
        value_bytes: 4096,
        pattern: "G".into(),
        requests: 30_000,
        compressed_pct,
    };
    on("zram", 10_000, 16_384, w, policy)
}

#[test]
fn incompressible_data_costs_more_swap_out_and_reclaim() {
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        let easy = run(25, policy);
        let hard = run(50, policy);
        let v = |r: &RunResult, s: Stat| r.vm(s);
        assert!(v(&easy, Stat::Pswpout) > 0, "{policy:?}: swapped out");
        // a page compressed to half a page frees half as much as one compressed to a quarter,
        // so reclaim must swap out more to get the same memory back
        assert!(
            v(&hard, Stat::Pswpout) > v(&easy, Stat::Pswpout),
            "{policy:?}: pswpout {} (100%) vs {} (25%)",
            v(&hard, Stat::Pswpout),
            v(&easy, Stat::Pswpout)
        );
        assert!(
            v(&hard, Stat::NrZspages) > v(&easy, Stat::NrZspages),
            "{policy:?}: the pool grows"
        );
        assert!(
            hard.misses >= easy.misses,
            "{policy:?}: less memory left for the workload"
        );
        // incompressible data: every page swapped out takes a whole pool page, reclaim cannot
        // make progress and the OOM killer ends the workload
        let none = run(100, policy);
        assert!(none.vm(Stat::OomKill) > 0, "{policy:?}: {:?}", none.error);
    }
}

#[test]
fn pool_pages_follow_the_stored_bytes() {
    // ratio 3 by default: three compressed pages fit in one pool page
    let r = run(0, PolicyKind::Mglru);
    let stored = r.vm(Stat::NrZspages);
    assert!(stored > 0);
    let e = r.engine.expect("engine");
    assert_eq!(e.swap.reads, 0, "zram is not a block device: no device reads");
    assert!(e.direct_reclaim_ns + e.kswapd_ns > 0);
}

#[test]
fn an_anon_region_has_its_own_compressibility() {
    // The same anon workload with its data compressing to a quarter and to half a page.
    let anon = |compressed_pct: u8| {
        let w = WorkloadSpec::Anon {
            pages: 12_000,
            write_ratio: 0.3,
            dist: lrugen::workload::dist::Dist::Zipf { theta: 0.9 },
            accesses: 30_000,
            compressed_pct,
        };
        on("zram", 10_000, 16_384, w, PolicyKind::Mglru)
    };
    let (easy, hard) = (anon(25), anon(50));
    assert!(easy.vm(Stat::Pswpout) > 0);
    assert!(hard.vm(Stat::Pswpout) > easy.vm(Stat::Pswpout));
    assert!(hard.vm(Stat::NrZspages) > easy.vm(Stat::NrZspages));
    // a percentage above 100 is refused before anything runs
    let bad = WorkloadSpec::Anon {
        pages: 16,
        write_ratio: 0.0,
        dist: lrugen::workload::dist::Dist::Uniform,
        accesses: 1,
        compressed_pct: 101,
    };
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("compressed_pct 101"), "{e}");
}

/// Two anon regions side by side (a mix: one task each), the first's data `pct0`, the second's
/// 2:1, on a machine they do not fit in, swapping to `device`.
fn mixed(pct0: u8, device: &str, policy: PolicyKind) -> RunResult {
    use lrugen::workload::MixPart;
    let part = |dist, compressed_pct| MixPart {
        workload: WorkloadSpec::Anon {
            pages: 4_096,
            write_ratio: 0.3,
            dist,
            accesses: 20_000,
            compressed_pct,
        },
        jobs: 1,
        think_ns: 0,
        memcg: None,
    };
    let w = WorkloadSpec::Mix {
        parts: vec![
            part(lrugen::workload::dist::Dist::Zipf { theta: 0.9 }, pct0),
            part(lrugen::workload::dist::Dist::Uniform, 50),
        ],
    };
    on(device, 7_168, 32_768, w, policy)
}

/// `mm_stat` follows the pages zram holds: every swap-out of the incompressible region is a
/// huge page (stored whole, a full page of pool), every other one 2,048 bytes; the pool is the
/// stored bytes in whole pages; `notify_free` counts the slots swap freed.
#[test]
fn mm_stat_counts_what_zram_holds() {
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        let r = mixed(100, "zram", policy);
        let z = r.zram.clone().expect("zram report");
        let out = r.vm(Stat::Pswpout) as u64;
        assert!(out > 0 && z.failed_writes == 0, "{policy:?}: {z:?}");
        // a swap-out per store: those of the incompressible region are the huge pages since set-up
        assert_eq!(z.huge_pages_since, r.pswpout_incompressible(), "{policy:?}");
        assert!(z.huge_pages_since > 0 && z.huge_pages <= z.huge_pages_since);
        let by: std::collections::BTreeMap<u8, u64> = r.pswpout_by_pct.iter().copied().collect();
        assert_eq!(by.values().sum::<u64>(), out, "{policy:?}: every swap-out in a class");
        assert_eq!(by.keys().copied().collect::<Vec<_>>(), vec![50, 100]);
        // what is stored now: huge pages whole, the rest at half a page
        let pages = z.orig_data_size / 4096;
        assert_eq!(z.compr_data_size, z.huge_pages * 4096 + (pages - z.huge_pages) * 2048);
        assert_eq!(z.mem_used_total, z.compr_data_size.div_ceil(4096) * 4096);
        assert_eq!(z.pool_pages * 4096, z.mem_used_total);
        assert!(z.mem_used_max >= z.mem_used_total);
        // every slot stored and not overwritten in place is freed or still held
        assert!(
            z.notify_free > 0 && z.notify_free <= out,
            "{policy:?}: {}",
            z.notify_free
        );
        assert_eq!(
            (z.same_pages, z.pages_compacted, z.failed_reads, z.invalid_io),
            (0, 0, 0, 0)
        );
        // the text is the kernel's: nine and four columns of width 8
        let cols: Vec<u64> = z.mm_stat().split_whitespace().map(|c| c.parse().unwrap()).collect();
        assert_eq!(
            cols,
            vec![
                z.orig_data_size,
                z.compr_data_size,
                z.mem_used_total,
                0,
                z.mem_used_max,
                0,
                0,
                z.huge_pages,
                z.huge_pages_since
            ]
        );
        let block = lrugen::report::swap_device_block(&r).expect("a zram block");
        assert!(block.contains(&format!("mm_stat: {}", z.mm_stat())), "{block}");
        assert!(block.contains(&format!("io_stat: {}", z.io_stat())), "{block}");
        assert!(block.contains("comp_algorithm: [lzo-rle] lzo lz4 zstd \n"), "{block}");
        let json = lrugen::report::json(std::slice::from_ref(&r));
        assert_eq!(json[0]["zram"]["mm_stat"], z.mm_stat());
        assert_eq!(json[0]["pswpout_by_compressed_pct"]["100"], by[&100]);
    }
}

/// zram punishes incompressible data, a RAM disk and an MMC card do not look at it: the same
/// workload swaps out the same pages to the RAM disk whatever the data, and more to zram when
/// its hot region is incompressible than when it is 2:1.
#[test]
fn only_zram_cares_what_the_pages_hold() {
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        let (a, b) = (mixed(100, "ramdisk", policy), mixed(50, "ramdisk", policy));
        assert_eq!(a.vm(Stat::Pswpout), b.vm(Stat::Pswpout), "{policy:?}");
        assert!(a.zram.is_none() && a.pswpout_incompressible() > 0 && b.pswpout_incompressible() == 0);
        let (hard, easy) = (mixed(100, "zram", policy), mixed(50, "zram", policy));
        assert!(
            hard.vm(Stat::Pswpout) > easy.vm(Stat::Pswpout),
            "{policy:?}: {} vs {}",
            hard.vm(Stat::Pswpout),
            easy.vm(Stat::Pswpout)
        );
        assert!(hard.zram.unwrap().pool_pages > easy.zram.unwrap().pool_pages);
    }
}

/// The compressor is the device preset's: zstd's default ratio (4.1:1, pages of 24 %) packs
/// the same pages tighter than lzo-rle's (3:1, 33 %), and costs more CPU per page compressed.
#[test]
fn the_algorithm_sets_ratio_and_cost() {
    let run = |device: &str| {
        let w = WorkloadSpec::Anon {
            pages: 12_000,
            write_ratio: 0.3,
            dist: lrugen::workload::dist::Dist::Zipf { theta: 0.9 },
            accesses: 20_000,
            compressed_pct: 0,
        };
        on(device, 10_000, 16_384, w, PolicyKind::Mglru)
    };
    let (lzo, zstd) = (run("zram"), run("zram-zstd"));
    let (zl, zz) = (lzo.zram.clone().unwrap(), zstd.zram.clone().unwrap());
    assert_eq!((zl.algorithm.as_str(), zz.algorithm.as_str()), ("lzo-rle", "zstd"));
    assert_eq!(zl.compr_data_size, zl.orig_data_size / 4096 * (4096 * 33 / 100));
    assert_eq!(zz.compr_data_size, zz.orig_data_size / 4096 * (4096 * 24 / 100));
    assert_eq!(zz.huge_pages_since, 0);
    assert!(
        zstd.vm(Stat::Pswpout) < lzo.vm(Stat::Pswpout),
        "a tighter pool frees more per page"
    );
    let cpu = |r: &RunResult| {
        let e = r.engine.as_ref().unwrap();
        (e.direct_reclaim_ns + e.kswapd_ns) as f64 / r.vm(Stat::Pswpout) as f64
    };
    assert!(
        cpu(&zstd) > cpu(&lzo),
        "zstd compresses slower: {} vs {}",
        cpu(&zstd),
        cpu(&lzo)
    );
    for bad in ["zram-deflate", "zram-", "zramfoo"] {
        let e = DeviceSpec::preset(bad).unwrap_err();
        assert!(e.contains(bad) && e.contains("zstd"), "{bad}: {e}");
    }
}

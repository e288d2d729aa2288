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

fn run(compressed_pct: u8, policy: PolicyKind) -> RunResult {
    // 12,000 pages of values on a machine of 10,000 pages: global pressure, swap on zram
    let w = WorkloadSpec::Memtier {
        keys: 12_000,
        value_bytes: 4096,
        pattern: "G".into(),
        requests: 30_000,
        compressed_pct,
    };
    let mut cfg = RunConfig::new(MachineConfig::simple(10_000, 16_384), MemcgConfig::default(), w, policy);
    cfg.engine = Some(EngineConfig {
        swap_device: DeviceSpec::preset("zram").unwrap(),
        ..Default::default()
    });
    cfg.check = true;
    sim::run(&cfg, None, &mut |_, _| {}).expect("run")
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
        let mut cfg = RunConfig::new(
            MachineConfig::simple(10_000, 16_384),
            MemcgConfig::default(),
            w,
            PolicyKind::Mglru,
        );
        cfg.engine = Some(EngineConfig {
            swap_device: DeviceSpec::preset("zram").unwrap(),
            ..Default::default()
        });
        cfg.check = true;
        sim::run(&cfg, None, &mut |_, _| {}).expect("run")
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

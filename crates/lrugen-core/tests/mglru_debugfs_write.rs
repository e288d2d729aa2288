// SPDX-License-Identifier: GPL-2.0-only
//! Writes to `/sys/kernel/debug/lru_gen` executed on a machine: aging (`+`) and proactive
//! eviction (`-`), with the behaviour observed on real kernels (`kernel-oracle.md`): on 6.1,
//! `- 2 0 3 200 2048` reclaimed exactly 2048 file pages counted as `pgscan_direct`/`pgsteal_direct`;
//! `+ 99999 0 1` (an unknown memcg id) fails with `EINVAL`; `- 2 0 0` (below `min_seq`) is a silent
//! no-op.

use lrugen::kernel::Kernel;
use lrugen::mm::memcg::ROOT_MEMCG;
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::mglru::debugfs::Errno;
use lrugen::reclaim::mglru::{Mglru, MglruConfig, Profile};

/// A memcg `/t` (kernel id 2) holding `pages` file pages read once, spread over four generations
/// by aging between the reads.
fn setup(profile: Profile, pages: u64) -> Kernel<Mglru> {
    let mut m = Machine::new(MachineConfig::simple(65_536, 0));
    m.debug_checks = true;
    let t = m.create_memcg(ROOT_MEMCG, "t");
    let task = m.create_mm(t);
    let f = m.create_file("data", pages, Advice::Random);
    let p = Mglru::new(
        &m,
        MglruConfig {
            profile,
            ..Default::default()
        },
    );
    let mut k = Kernel::new(m, p);
    for i in 0..pages {
        k.read_page(task, f, i).expect("read");
    }
    k
}

fn run_eviction_counts(profile: Profile) {
    let mut k = setup(profile, 6_000);
    let before = k.m.vmstat();
    let lg = k.p.lrugen(1, 0).clone();
    assert_eq!(lg.max_seq, 3, "no aging happened while reading");
    // evict generations ≤ 1 (= max_seq − 2), swappiness 200, at most 2048 pages
    k.p.debugfs_write(&mut k.m, "- 2 0 1 200 2048")
        .expect("eviction command");
    let d = k.m.vmstat().delta(&before);
    // lru_gen_seq_write's scan control is proactive: its own events from 6.15, direct before
    let (scan, steal, other) = if profile.switches.proactive_reclaim_stats {
        (Stat::PgscanProactive, Stat::PgstealProactive, Stat::PgstealDirect)
    } else {
        (Stat::PgscanDirect, Stat::PgstealDirect, Stat::PgstealProactive)
    };
    assert_eq!(d.get(steal), 2048, "{profile:?}: reclaimed exactly the budget");
    assert_eq!(d.get(other), 0, "{profile:?}");
    assert_eq!(d.get(Stat::PgstealFile), 2048);
    assert_eq!(
        d.get(scan),
        2048,
        "{profile:?}: every isolated page was clean and unmapped"
    );
    assert_eq!(d.get(Stat::PgstealKswapd), 0);
    assert_eq!(k.m.memcgs[1].usage, 6_000 - 2048);
    k.check().expect("invariants");
}

#[test]
fn eviction_reclaims_exactly_nr_to_reclaim_as_direct_or_proactive_reclaim() {
    run_eviction_counts(Profile::V6_1);
    run_eviction_counts(Profile::V6_12);
    run_eviction_counts(Profile::V6_17);
}

#[test]
fn unknown_memcg_is_einval_and_stops_the_write() {
    for profile in [Profile::V6_1, Profile::V6_17] {
        let mut k = setup(profile, 100);
        let e = k.p.debugfs_write(&mut k.m, "+ 99999 0 1").unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL, "{e}");
        assert!(e.to_string().contains("expected the id of a live memcg"), "{e}");
        let e = k.p.debugfs_write(&mut k.m, "+ 2 7 3").unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL, "a node without memory: {e}");
        // commands before the failing one stay applied
        let seq = k.p.lrugen(1, 0).max_seq;
        let e =
            k.p.debugfs_write(&mut k.m, &format!("+ 2 0 {seq}; + 99999 0 1"))
                .unwrap_err();
        assert_eq!(e.index, 1);
        assert_eq!(k.p.lrugen(1, 0).max_seq, seq + 1, "{profile:?}: the first command ran");
    }
}

#[test]
fn eviction_below_min_seq_is_a_silent_no_op() {
    for profile in [Profile::V6_1, Profile::V6_17] {
        let mut k = setup(profile, 500);
        // make min_seq[file] > 0: age twice and evict everything evictable
        for _ in 0..2 {
            let seq = k.p.lrugen(1, 0).max_seq;
            k.p.debugfs_write(&mut k.m, &format!("+ 2 0 {seq} 0 1")).expect("aging");
        }
        let max = k.p.lrugen(1, 0).max_seq;
        k.p.debugfs_write(&mut k.m, &format!("- 2 0 {} 0", max - 2))
            .expect("evict old generations");
        let min = k.p.lrugen(1, 0).min_seq[1];
        assert!(min > 0, "{profile:?}: min_seq advanced to {min}");
        let before = k.m.vmstat();
        k.p.debugfs_write(&mut k.m, "- 2 0 0")
            .expect("below min_seq is not an error");
        let d = k.m.vmstat().delta(&before);
        assert_eq!(d.get(Stat::PgscanDirect), 0, "{profile:?}: nothing scanned");
        // a generation the eviction may not touch (≥ max_seq − 1) is EINVAL
        let max = k.p.lrugen(1, 0).max_seq;
        let e = k.p.debugfs_write(&mut k.m, &format!("- 2 0 {}", max - 1)).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
    }
}

#[test]
fn aging_creates_a_generation_or_reports_why_not() {
    // mainline: `+` with a stale seq still ages from the current max_seq; a seq beyond is EINVAL
    let mut k = setup(Profile::V6_17, 300);
    let seq = k.p.lrugen(1, 0).max_seq;
    k.p.debugfs_write(&mut k.m, &format!("+ 2 0 {seq}")).expect("aging");
    assert_eq!(k.p.lrugen(1, 0).max_seq, seq + 1);
    let e = k.p.debugfs_write(&mut k.m, &format!("+ 2 0 {}", seq + 5)).unwrap_err();
    assert_eq!(e.errno, Errno::EINVAL);
    // 6.1: a stale seq is a no-op; without force_scan and with 4 generations: ERANGE
    let mut k = setup(Profile::V6_1, 300);
    let seq = k.p.lrugen(1, 0).max_seq;
    k.p.debugfs_write(&mut k.m, &format!("+ 2 0 {}", seq - 1))
        .expect("stale seq is a no-op");
    assert_eq!(k.p.lrugen(1, 0).max_seq, seq);
    let e = k.p.debugfs_write(&mut k.m, &format!("+ 2 0 {seq} 0 0")).unwrap_err();
    assert_eq!(e.errno, Errno::ERANGE, "{e}");
    k.check().expect("invariants");
}

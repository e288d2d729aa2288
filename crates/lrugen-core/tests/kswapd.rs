// SPDX-License-Identifier: GPL-2.0-only
//! kswapd's `balance_pgdat` (mm/vmscan.c of 6.1 and 6.12) as the virtual-time engine runs it, one
//! priority pass per event (`balance_pgdat_begin`/`_step`/`_end`), against the synchronous run
//! that a wake-up does without the engine: the same machine ends in the same state. Also the
//! `kswapd_failures` rules: a run whose priority runs out with nothing reclaimed is a failure, a
//! run that finds (or leaves) the node balanced is not, and a hopeless node is not woken.

use lrugen::kernel::Kernel;
use lrugen::mm::memcg::ROOT_MEMCG;
use lrugen::mm::node::{WMARK_LOW, WMARK_MIN};
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vm::{vmf, MMAP_BASE_VPN};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::check::check_invariants;
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::{Mglru, MglruConfig, Profile};
use lrugen::reclaim::vmscan::{balance_pgdat, balance_pgdat_begin, balance_pgdat_end, balance_pgdat_step};
use lrugen::reclaim::{alloc, Policy, MAX_RECLAIM_RETRIES};

/// 4,096 pages (min 128, low 160, high 192) with kswapd run by the caller: a wake-up only marks
/// the node, as under the engine.
fn machine(swap: u64) -> Machine {
    let mut cfg = MachineConfig::simple(4096, swap);
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    m.kswapd_async = true;
    m
}

/// Bring `k` below its low watermark (but above min) with a file read once per page; the
/// allocation that went below low woke kswapd.
fn fill_with_file<P: Policy>(k: &mut Kernel<P>) {
    let task = k.create_mm(ROOT_MEMCG);
    let f = k.m.create_file("f", 8192, Advice::Normal);
    let z = &k.m.nodes[0].zones[0];
    let (min, low) = (z.wmark(WMARK_MIN), z.wmark(WMARK_LOW));
    let mut i = 0;
    while k.m.nodes[0].free() >= low {
        k.read_page(task, f, i).unwrap();
        i += 1;
    }
    assert!(k.m.nodes[0].free() > min);
    assert!(k.m.nodes[0].kswapd_woken, "the allocation below low woke kswapd");
}

/// The same machine after a synchronous `balance_pgdat` and after the engine's pass-by-pass run.
fn inline_equals_stepwise<P: Policy + Clone>(k: Kernel<P>, label: &str) {
    let (mut m1, mut p1) = (k.m.clone(), k.p.clone());
    let (mut m2, mut p2) = (k.m, k.p);
    let inline = balance_pgdat(&mut m1, &mut p1, 0);
    let mut run = balance_pgdat_begin(&mut m2, 0);
    let mut passes = 1;
    while balance_pgdat_step(&mut m2, &mut p2, &mut run) {
        passes += 1;
    }
    let stepwise = balance_pgdat_end(&mut m2, &mut p2, run);
    assert!(inline > 0, "{label}: kswapd reclaimed");
    assert_eq!(inline, stepwise, "{label}: pages reclaimed");
    assert!(
        passes >= 2,
        "{label}: at least one shrinking pass and the balanced check"
    );
    assert_eq!(m1.vmstat(), m2.vmstat(), "{label}: /proc/vmstat");
    assert_eq!(m1.events.get(Stat::Pageoutrun), 1, "{label}");
    assert!(m1.events.get(Stat::PgstealKswapd) > 0, "{label}");
    assert_eq!(m1.nodes[0].free(), m2.nodes[0].free(), "{label}");
    assert!(
        lrugen::reclaim::vmscan::pgdat_balanced(&m2, 0, 0),
        "{label}: balanced after the run"
    );
    for m in [&m1, &m2] {
        assert_eq!(m.nodes[0].kswapd_failures, 0, "{label}");
        assert!(!m.nodes[0].kswapd_woken, "{label}: kswapd sleeps");
        assert!(m.check_failure.is_none(), "{label}: {:?}", m.check_failure);
    }
    check_invariants(&m1, &p1).unwrap_or_else(|e| panic!("{label}: {e}"));
    check_invariants(&m2, &p2).unwrap_or_else(|e| panic!("{label}: {e}"));
}

fn mglru(m: &Machine, profile: Profile) -> Mglru {
    Mglru::new(
        m,
        MglruConfig {
            profile,
            ..MglruConfig::default()
        },
    )
}

#[test]
fn stepwise_balance_pgdat_equals_the_synchronous_run() {
    let m = machine(0);
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    fill_with_file(&mut k);
    inline_equals_stepwise(k, "classic");
    for profile in [Profile::V6_1, Profile::V6_17] {
        let m = machine(0);
        let p = mglru(&m, profile);
        let mut k = Kernel::new(m, p);
        fill_with_file(&mut k);
        inline_equals_stepwise(k, profile.name());
    }
}

/// A run that finds the node balanced leaves `kswapd_failures` alone (`goto out` skips the
/// count), even though it reclaimed nothing; a run whose priority runs out with nothing
/// reclaimed counts one.
fn failures<P: Policy>(mut k: Kernel<P>, label: &str) {
    // balanced: free memory above the high watermark (the tasks freed memory meanwhile)
    k.m.nodes[0].kswapd_failures = 3;
    let mut run = balance_pgdat_begin(&mut k.m, 0);
    assert!(
        !balance_pgdat_step(&mut k.m, &mut k.p, &mut run),
        "{label}: balanced at once"
    );
    assert_eq!(balance_pgdat_end(&mut k.m, &mut k.p, run), 0, "{label}");
    assert_eq!(k.m.nodes[0].kswapd_failures, 3, "{label}: a balanced run is no failure");
    assert_eq!(k.m.events.get(Stat::Pageoutrun), 1, "{label}: it still counts a run");
    k.m.nodes[0].kswapd_failures = 0;
    // nothing reclaimable: anon memory without swap below the low watermark
    let task = k.create_mm(ROOT_MEMCG);
    k.mmap(task, MMAP_BASE_VPN, 4096, vmf::WRITE, None, 0).unwrap();
    let low = k.m.nodes[0].zones[0].wmark(WMARK_LOW);
    let mut vpn = MMAP_BASE_VPN;
    while k.m.nodes[0].free() >= low {
        k.access(task, vpn, true).unwrap();
        vpn += 1;
    }
    for n in 1..=MAX_RECLAIM_RETRIES {
        assert_eq!(balance_pgdat(&mut k.m, &mut k.p, 0), 0, "{label}");
        assert_eq!(k.m.nodes[0].kswapd_failures, n, "{label}: priority ran out");
    }
    // a hopeless node is left to direct reclaim: wakeup_kswapd does not wake it
    k.m.nodes[0].kswapd_woken = false;
    alloc::wakeup_kswapd(&mut k.m, &mut k.p, 0);
    assert!(!k.m.nodes[0].kswapd_woken, "{label}: hopeless node");
    assert_eq!(
        k.m.events.get(Stat::PgscanKswapd),
        0,
        "{label}: no anon scan without swap"
    );
}

#[test]
fn kswapd_failures_follow_balance_pgdat() {
    let m = machine(0);
    let p = Classic::new(&m);
    failures(Kernel::new(m, p), "classic");
    for profile in [Profile::V6_1, Profile::V6_17] {
        let m = machine(0);
        let p = mglru(&m, profile);
        failures(Kernel::new(m, p), profile.name());
    }
}

/// `Step::alloc_page_first` (a replayer's `mincore()` before each access takes and frees a
/// `GFP_USER` page, `Kernel::alloc_page_and_free`): with kswapd asleep (run by nobody here), a stream of new file pages and
/// hits brings the node to its min watermark. Without it the page-cache allocations reclaim
/// directly, counted at their zone (`allocstall_movable`); with it the page before each access
/// gets there first (it needs a page above min, as the access's own allocation does, and keeps
/// none), so every stall is counted at ZONE_NORMAL, and each access allocated and freed one page
/// more (`pgalloc_*`, `pgfree`).
#[test]
fn an_allocation_per_access_reclaims_directly_before_the_access_does() {
    use lrugen::kernel::Access;
    use lrugen::workload::Op;
    let run = |per_access: bool| {
        let mut cfg = MachineConfig::x86(16_384, 0);
        cfg.ra_pages = 0;
        let mut m = Machine::new(cfg);
        m.debug_checks = true;
        m.kswapd_async = true;
        m.ftrace = Some(Box::new(
            lrugen::mm::ftrace::Ftrace::parse(&[
                "vmscan/mm_vmscan_direct_reclaim_begin".into(),
                "vmscan/mm_vmscan_direct_reclaim_end".into(),
            ])
            .unwrap(),
        ));
        let p = Classic::new(&m);
        let mut k = Kernel::new(m, p);
        let task = k.create_mm(ROOT_MEMCG);
        let f = k.m.create_file("f", 32_768, Advice::Normal);
        let (mut accesses, mut misses) = (0, 0);
        for i in 1..20_000 {
            // a new page, then a hit
            for index in [i, 0] {
                let op = Op::Read { task, file: f, index };
                if per_access {
                    k.alloc_page_and_free(&op).unwrap();
                }
                if k.exec(op).unwrap() != Access::Hit {
                    misses += 1;
                }
                accesses += 1;
            }
        }
        check_invariants(&k.m, &k.p).unwrap();
        let v = k.m.vmstat();
        // each direct reclaim traced as the kernel's tracepoints print it: the allocation's flags,
        // then the pages it reclaimed
        let trace = &k.m.ftrace.as_ref().unwrap().text;
        let flags = if per_access { "GFP_USER" } else { "GFP_HIGHUSER_MOVABLE" };
        // (7.x, the mainline preset's, then prints ` pid=PID memcg_id=0 `: no memcg)
        let first = |l: &str, tag: &str| {
            l.split(tag)
                .nth(1)
                .map(|rest| rest.split_whitespace().next().unwrap_or("").to_string())
        };
        let begins = trace
            .lines()
            .filter_map(|l| first(l, "mm_vmscan_direct_reclaim_begin: order=0 gfp_flags="))
            .filter(|f| f == flags)
            .count() as i64;
        assert!(trace
            .lines()
            .filter(|l| l.contains("reclaim_"))
            .all(|l| l.ends_with(" memcg_id=0 ")));
        let reclaimed: i64 = trace
            .lines()
            .filter_map(|l| first(l, "mm_vmscan_direct_reclaim_end: nr_reclaimed="))
            .map(|n| n.parse::<i64>().unwrap())
            .sum();
        assert_eq!(begins, v.get(Stat::AllocstallNormal) + v.get(Stat::AllocstallMovable));
        assert_eq!(reclaimed, v.get(Stat::PgstealDirect));
        let pgalloc: i64 = [
            Stat::PgallocDma,
            Stat::PgallocDma32,
            Stat::PgallocNormal,
            Stat::PgallocMovable,
        ]
        .iter()
        .map(|&s| v.get(s))
        .sum();
        (
            v.get(Stat::AllocstallNormal),
            v.get(Stat::AllocstallMovable),
            pgalloc - misses,
            v.get(Stat::Pgfree),
            accesses,
        )
    };
    let (normal0, movable0, others0, free0, _) = run(false);
    let (normal1, movable1, others1, free1, accesses) = run(true);
    assert_eq!(normal0, 0, "without it only page-cache allocations stall");
    assert!(movable0 > 0, "the node reached its min watermark");
    assert_eq!(movable1, 0, "the page before each access stalls first");
    assert!(normal1 > 0);
    assert_eq!(
        others1 - others0,
        accesses,
        "one page allocated per access, besides the misses'"
    );
    assert!(free1 - free0 >= accesses, "and freed");
}

// SPDX-License-Identifier: GPL-2.0-only
//! The virtual-time engine on tiny machines where the answer can be computed by hand: an
//! fio-like run's throughput and completion-latency percentiles respond to memory pressure and
//! device latency as they must.

use lrugen::mm::device::DeviceSpec;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::MachineConfig;
use lrugen::sim::engine::{Costs, EngineConfig, EngineResult, KswapdMode};
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig};
use lrugen::workload::dist::Dist;
use lrugen::workload::WorkloadSpec;
use std::io::Write;

mod common;

/// A trace of `n` distinct pages read once each (every read misses), as an ARC `.lis` file.
fn distinct_trace(n: u64) -> tempfile_path::TempPath {
    let p = tempfile_path::TempPath::new("distinct.lis");
    let mut f = std::fs::File::create(&p.0).unwrap();
    for i in 0..n {
        writeln!(f, "{} 1 0 {i}", i * 8).unwrap();
    }
    p
}

mod tempfile_path {
    /// A file path removed on drop.
    pub struct TempPath(pub std::path::PathBuf);
    impl TempPath {
        pub fn new(name: &str) -> Self {
            static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            TempPath(std::env::temp_dir().join(format!("lrugen-engine-{}-{k}-{name}", std::process::id())))
        }
    }
    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

/// Costs with reclaim priced at zero, so latencies are exact sums of the remaining terms.
fn exact_costs() -> Costs {
    Costs {
        per_folio_scanned_ns: 0,
        per_rmap_walk_ns: 0,
        per_pte_walked_ns: 0,
        per_page_written_ns: 0,
        lru_lock_ns: 0,
        lock_bounce_ns: 0,
        per_folio_putback_ns: 0,
        per_folio_moved_ns: 0,
        per_pmd_walked_ns: 0,
        bloom_op_ns: 0,
        tlb_flush_ns: 0,
        block_io_ns: 0,
        per_swap_slot_ns: 0,
        ..Costs::default()
    }
}

fn run(workload: WorkloadSpec, policy: PolicyKind, memcg_max: u64, jobs: u32, cpus: u32, device: &str) -> EngineResult {
    let mut cfg = RunConfig::new(
        MachineConfig::simple(memcg_max * 4 + 16_384, 0),
        MemcgConfig {
            max: Some(memcg_max),
            ..Default::default()
        },
        workload,
        policy,
    );
    cfg.engine = Some(EngineConfig {
        cpus,
        storage: DeviceSpec::preset(device).unwrap(),
        costs: exact_costs(),
        ..Default::default()
    });
    cfg.jobs = jobs;
    cfg.check = true;
    let r = sim::run(&cfg, None, &mut |_, _| {}).expect("run");
    r.engine.expect("engine result")
}

fn near(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn all_hits_cost_the_read_hit_time() {
    // 64 pages read 150 times each (a trace: no read-ahead) in a memcg that holds them all: after
    // 64 first misses, every read is a hit of 1 µs.
    let t = tempfile_path::TempPath::new("cycle.lis");
    {
        let mut f = std::fs::File::create(&t.0).unwrap();
        for i in 0..150 {
            writeln!(f, "0 64 0 {i}").unwrap();
        }
    }
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        let e = run(
            WorkloadSpec::Trace {
                path: t.0.clone(),
                format: None,
                access: Default::default(),
            },
            policy,
            1_024,
            1,
            1,
            "nvme",
        );
        assert_eq!(e.ops, 9_600);
        assert_eq!(e.misses, 64, "{policy:?}: only the first touch of each page misses");
        assert_eq!(e.clat.percentile(50.0), 1_000, "{policy:?}: a hit costs read_hit_ns");
        // 64 misses of the major-fault CPU (no block-layer cost here) + 80 µs + 4096 B at 3 GB/s
        // (1,365 ns), the rest hits at 1 µs: one job on one CPU
        let c = exact_costs();
        let miss = c.major_fault_ns + c.block_io_ns + 80_000 + 1_365;
        let elapsed = 64 * miss + (9_600 - 64) * c.read_hit_ns;
        assert!(
            near(e.elapsed_ns as f64, elapsed as f64, 0.001),
            "{} vs {elapsed}",
            e.elapsed_ns
        );
        assert!(near(e.iops, 9_600.0 * 1e9 / elapsed as f64, 0.001));
    }
}

#[test]
fn every_miss_waits_for_the_device() {
    // Distinct pages, each read once: every read misses. On an HDD (8 ms + 4096 B at 160 MB/s =
    // 8,025,600 ns) with the major fault's CPU on top.
    let t = distinct_trace(300);
    let w = WorkloadSpec::Trace {
        path: t.0.clone(),
        format: None,
        access: Default::default(),
    };
    let one = run(w.clone(), PolicyKind::Classic, 64, 1, 1, "hdd");
    let c = exact_costs();
    let op = c.major_fault_ns + c.block_io_ns + 8_000_000 + 25_600;
    assert_eq!(one.misses, 300);
    for p in [1.0, 50.0, 99.0] {
        assert!(
            near(one.clat.percentile(p) as f64, op as f64, 0.002),
            "p{p}: {}",
            one.clat.percentile(p)
        );
    }
    assert!(near(one.iops, 1e9 / op as f64, 0.002), "iops {}", one.iops);
    // Two jobs on one HDD: the head serves one request at a time, so throughput stays the same
    // and each request waits for the other job's: latency doubles.
    let two = run(w.clone(), PolicyKind::Classic, 64, 2, 2, "hdd");
    assert!(
        near(two.iops, one.iops, 0.01),
        "two jobs {} vs one {}",
        two.iops,
        one.iops
    );
    assert!(
        near(two.clat.percentile(50.0) as f64, 2.0 * op as f64, 0.01),
        "p50 {}",
        two.clat.percentile(50.0)
    );
    // On NVMe with a deep queue, two jobs double the throughput at the same latency.
    let n1 = run(w.clone(), PolicyKind::Classic, 64, 1, 2, "nvme");
    let n2 = run(w, PolicyKind::Classic, 64, 2, 2, "nvme");
    assert!(
        near(n2.iops, 2.0 * n1.iops, 0.01),
        "nvme two jobs {} vs one {}",
        n2.iops,
        n1.iops
    );
    assert!(near(
        n2.clat.percentile(50.0) as f64,
        n1.clat.percentile(50.0) as f64,
        0.01
    ));
    // A slower device: the same misses take longer.
    assert!(one.clat.percentile(50.0) > 90 * n1.clat.percentile(50.0));
}

#[test]
fn more_memory_means_more_throughput_and_lower_latency() {
    // fio-like zipf reads over 4,096 pages: a memcg holding a quarter of them misses more than
    // one holding all of them, so throughput falls and the high percentiles rise.
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        let w = WorkloadSpec::FileRead {
            files: 1,
            file_pages: 4_096,
            dist: Dist::Zipf { theta: 0.9 },
            accesses: 40_000,
        };
        let small = run(w.clone(), policy, 1_024, 1, 1, "sata-ssd");
        let large = run(w, policy, 8_192, 1, 1, "sata-ssd");
        assert!(
            small.misses > large.misses,
            "{policy:?}: {} vs {}",
            small.misses,
            large.misses
        );
        assert!(
            small.iops < large.iops,
            "{policy:?}: iops {} vs {}",
            small.iops,
            large.iops
        );
        assert!(small.clat.percentile(90.0) >= large.clat.percentile(90.0));
        assert!(small.clat.mean_ns > large.clat.mean_ns);
        // a miss costs at least the device's read latency
        assert!(small.clat.percentile(99.0) >= 150_000);
    }
}

#[test]
fn engine_runs_are_deterministic() {
    let w = WorkloadSpec::Anon {
        compressed_pct: 0,
        pages: 4_096,
        write_ratio: 0.3,
        dist: Dist::Zipf { theta: 0.9 },
        accesses: 20_000,
    };
    let mut cfg = RunConfig::new(
        MachineConfig::simple(32_768, 16_384),
        MemcgConfig {
            max: Some(2_048),
            ..Default::default()
        },
        w,
        PolicyKind::Mglru,
    );
    cfg.engine = Some(EngineConfig {
        swap_device: DeviceSpec::preset("zram").unwrap(),
        ..Default::default()
    });
    cfg.jobs = 3;
    let a = sim::run(&cfg, None, &mut |_, _| {}).unwrap();
    let b = sim::run(&cfg, None, &mut |_, _| {}).unwrap();
    let (ea, eb) = (a.engine.unwrap(), b.engine.unwrap());
    assert_eq!(serde_json::to_string(&ea).unwrap(), serde_json::to_string(&eb).unwrap());
    assert!(
        ea.swap.reads == 0 && ea.direct_reclaim_ns > 0,
        "zram: no device reads, CPU reclaim time"
    );
}

/// A node-level squeeze (no memcg limit): 3,000 distinct pages read once each on a machine of
/// 2,048 pages, so kswapd is woken again and again.
fn kswapd_run(mode: KswapdMode, per_folio_scanned_ns: u64, cpus: u32, policy: PolicyKind) -> sim::RunResult {
    let t = distinct_trace(3_000);
    let mut cfg = RunConfig::new(
        MachineConfig::simple(2_048, 0),
        MemcgConfig::default(),
        WorkloadSpec::Trace {
            path: t.0.clone(),
            format: None,
            access: Default::default(),
        },
        policy,
    );
    cfg.engine = Some(EngineConfig {
        cpus,
        costs: Costs {
            per_folio_scanned_ns,
            ..exact_costs()
        },
        kswapd: mode,
        ..Default::default()
    });
    cfg.check = true;
    sim::run(&cfg, None, &mut |_, _| {}).expect("run")
}

#[test]
fn kswapd_is_a_task_that_can_fall_behind() {
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        // Free kswapd work: each pass takes no time, so kswapd keeps the node above its min
        // watermark and the task never reclaims directly.
        let fast = kswapd_run(KswapdMode::Task, 0, 2, policy);
        assert!(fast.vm(Stat::Pageoutrun) > 0, "{policy:?}: kswapd ran");
        assert!(fast.vm(Stat::PgstealKswapd) > 0);
        assert_eq!(fast.vm(Stat::AllocstallNormal), 0, "{policy:?}: no direct reclaim");
        assert_eq!(fast.vm(Stat::PgstealDirect), 0);
        // Slow kswapd (1 ms per folio scanned, against 84 µs per miss): the task allocates down
        // to the min watermark while kswapd is busy and then has to reclaim itself.
        let slow = kswapd_run(KswapdMode::Task, 1_000_000, 2, policy);
        let e = slow.engine.as_ref().unwrap();
        eprintln!(
            "{policy:?}: slow kswapd: allocstall {} pgsteal_direct {} pgsteal_kswapd {}, fast: pgsteal_kswapd {}",
            slow.vm(Stat::AllocstallNormal),
            slow.vm(Stat::PgstealDirect),
            slow.vm(Stat::PgstealKswapd),
            fast.vm(Stat::PgstealKswapd)
        );
        assert!(slow.vm(Stat::AllocstallNormal) > 0, "{policy:?}: the task stalled");
        assert!(slow.vm(Stat::PgstealDirect) > 0);
        assert!(e.direct_work.folios_scanned > 0);
        // kswapd's CPU time is exactly its priced work, and its waits for the lru_lock that the
        // task's direct reclaim holds meanwhile
        assert_eq!(
            e.kswapd_ns,
            e.kswapd_work.folios_scanned * 1_000_000 + e.lru_lock.kswapd.wait_ns
        );
        assert!(e.kswapd_ns > 0);
        // The same slow kswapd run inline always keeps up: it reclaims to the high watermark
        // inside the allocation that woke it.
        let inline = kswapd_run(KswapdMode::Inline, 1_000_000, 2, policy);
        assert_eq!(
            inline.vm(Stat::AllocstallNormal),
            0,
            "{policy:?}: inline kswapd never lags"
        );
        assert!(inline.vm(Stat::PgstealKswapd) > 0);
        // Either way the same pages are read: every access misses once.
        for r in [&fast, &slow, &inline] {
            assert_eq!(r.misses, 3_000);
        }
    }
}

#[test]
fn kswapd_competes_for_the_cpu() {
    // One CPU: kswapd's passes run on the task's CPU and delay it, so the run takes longer than
    // with a second CPU for kswapd, by at most kswapd's CPU time.
    let one = kswapd_run(KswapdMode::Task, 20_000, 1, PolicyKind::Classic);
    let two = kswapd_run(KswapdMode::Task, 20_000, 2, PolicyKind::Classic);
    let (e1, e2) = (one.engine.unwrap(), two.engine.unwrap());
    assert!(e1.kswapd_ns > 0 && e2.kswapd_ns > 0);
    assert!(e1.elapsed_ns > e2.elapsed_ns, "{} vs {}", e1.elapsed_ns, e2.elapsed_ns);
    assert!(e1.elapsed_ns <= e2.elapsed_ns + e1.kswapd_ns + e1.direct_reclaim_ns);
}

#[test]
fn requests_span_their_page_operations() {
    // memtier GETs of 8 KiB values at 4 KiB alignment: each GET is two or three page loads, and
    // a request's latency covers all of them.
    let w = WorkloadSpec::Memtier {
        keys: 1_000,
        value_bytes: 8_192,
        pattern: "R".into(),
        requests: 5_000,
        compressed_pct: 0,
    };
    let e = run(w, PolicyKind::Mglru, 8_192, 1, 1, "nvme");
    assert_eq!(e.requests.len(), 1);
    let gets = &e.requests[0];
    assert_eq!(gets.kind, "GET");
    assert_eq!(gets.count, 5_000);
    assert_eq!(e.ops, 2 * 5_000, "8 KiB values at 8 KiB offsets: two pages each");
    // all hits of `access_hit_ns` each: a GET takes two of them and its own 10 µs
    // (`Costs::request_ns`), within the histogram's 0.1 %
    let c = exact_costs();
    let p50 = gets.latency.percentile(50.0);
    let want = c.request_ns + 2 * c.access_hit_ns;
    assert!((want..=want + want / 1000).contains(&p50), "{p50} vs {want}");
    assert_eq!(e.clat.percentile(50.0), c.access_hit_ns, "the second page of each GET");
    let text = lrugen::sim::engine::format_memtier(&e, 8_192);
    let line = text.lines().find(|l| l.starts_with("Gets")).expect("a Gets line");
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols.len(), 9, "{line}");
    let per_sec: f64 = cols[1].parse().unwrap();
    assert!(near(per_sec, gets.per_sec, 0.001));
    assert_eq!(cols[5], format!("{:.5}", p50 as f64 / 1e6), "p50 in ms: {line}");
    assert_eq!(cols[5], "0.01061", "p50 in ms: {line}");
    let kb: f64 = cols[8].parse().unwrap();
    assert!(near(kb, per_sec * 8.0, 0.001), "KB/sec = GETs/sec x 8 KiB: {line}");

    // YCSB-E: scans of several records are one operation each
    let w = WorkloadSpec::Ycsb {
        workload: "e".into(),
        records: 2_000,
        operations: 1_000,
        threadcount: 1,
        properties: Default::default(),
    };
    let e = run(w, PolicyKind::Classic, 4_096, 1, 1, "nvme");
    let total: u64 = e.requests.iter().map(|q| q.count).sum();
    assert_eq!(total, 1_000, "{:?}", e.requests);
    let kinds: Vec<&str> = e.requests.iter().map(|q| q.kind.as_str()).collect();
    assert_eq!(kinds, ["INSERT", "SCAN"], "YCSB-E is 95% scans, 5% inserts");
    assert!(e.ops > total, "scans read several pages");
    let text = lrugen::sim::engine::format_ycsb(&e);
    assert!(text.starts_with("[OVERALL], RunTime(ms), "), "{text}");
    for k in kinds {
        for field in [
            "Operations",
            "AverageLatency(us)",
            "MinLatency(us)",
            "MaxLatency(us)",
            "95thPercentileLatency(us)",
            "99thPercentileLatency(us)",
            "Return=OK",
        ] {
            assert!(text.contains(&format!("[{k}], {field}, ")), "[{k}] {field}:\n{text}");
        }
    }
    // fio-like workloads have no multi-page requests
    let w = WorkloadSpec::FileRead {
        files: 1,
        file_pages: 256,
        dist: Dist::Uniform,
        accesses: 1_000,
    };
    assert!(run(w, PolicyKind::Classic, 1_024, 1, 1, "nvme").requests.is_empty());
}

#[test]
fn kswapd_stays_awake_while_the_node_is_unbalanced() {
    // Anon memory and no swap: nothing kswapd can reclaim. A run that ends with the node still
    // unbalanced does not let kswapd sleep (kswapd_try_to_sleep), so it runs again and again
    // until it has failed MAX_RECLAIM_RETRIES times, then sleeps for good.
    use lrugen::kernel::Kernel;
    use lrugen::reclaim::classic::Classic;
    use lrugen::reclaim::MAX_RECLAIM_RETRIES;
    let cfg = {
        let mut c = RunConfig::new(
            MachineConfig::simple(2_048, 0),
            MemcgConfig::default(),
            WorkloadSpec::Anon {
                pages: 1_945,
                write_ratio: 0.5,
                dist: Dist::Uniform,
                accesses: 200,
                compressed_pct: 0,
            },
            PolicyKind::Classic,
        );
        c.engine = Some(EngineConfig::default());
        c
    };
    let (mut m, memcg) = sim::build_machine(&cfg).unwrap();
    let streams = sim::task_streams(&cfg, &mut m, memcg, None).unwrap();
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    let e = lrugen::sim::engine::run(&mut k, streams, cfg.engine.as_ref().unwrap());
    assert!(e.error.is_none(), "{:?}", e.error);
    let n = &k.m.nodes[0];
    assert_eq!(
        n.kswapd_failures, MAX_RECLAIM_RETRIES,
        "kswapd gave up only after 16 runs"
    );
    assert!(!n.kswapd_woken);
    assert_eq!(k.m.vmstat().get(Stat::Pageoutrun), MAX_RECLAIM_RETRIES as i64);
    k.check().unwrap();
}

/// `runtime_ns` (fio's `time_based` + `runtime`): two jobs of a stream far longer than the
/// runtime both stop issuing at it, so the run lasts the runtime (plus the operations in
/// flight), not until the faster job has done all its I/O.
#[test]
fn a_runtime_stops_every_job_at_the_same_virtual_time() {
    let w = WorkloadSpec::FileRead {
        files: 1,
        file_pages: 4_096,
        dist: Dist::Zipf { theta: 0.9 },
        accesses: 1_000_000,
    };
    let runtime = 50_000_000; // 50 ms
    let timed = |runtime_ns: u64| {
        let mut cfg = RunConfig::new(
            MachineConfig::simple(1_024 * 4 + 16_384, 0),
            MemcgConfig {
                max: Some(1_024),
                ..Default::default()
            },
            w.clone(),
            PolicyKind::Mglru,
        );
        cfg.engine = Some(EngineConfig {
            cpus: 2,
            storage: DeviceSpec::preset("sata-ssd").unwrap(),
            costs: exact_costs(),
            runtime_ns,
            ..Default::default()
        });
        cfg.jobs = 2;
        sim::run(&cfg, None, &mut |_, _| {})
            .expect("run")
            .engine
            .expect("engine result")
    };
    let r = timed(runtime);
    assert!(r.ops > 100 && r.ops < 2_000_000, "{} ops", r.ops);
    // the last operation started before the runtime and took at most a few device reads
    assert!(
        r.elapsed_ns >= runtime * 9 / 10 && r.elapsed_ns <= runtime + 5_000_000,
        "elapsed {} ns for a runtime of {runtime}",
        r.elapsed_ns
    );
    assert_eq!(timed(runtime).ops, r.ops, "deterministic");
    assert!(timed(2 * runtime).ops > r.ops * 3 / 2);
}

/// YCSB's `threadcount`: 4 clients share one table and split its operations (one task each),
/// where 4 jobs are 4 copies of the data: the same number of operations, far fewer distinct
/// pages, so fewer misses in the same memcg. Workloads that insert, and runs without the engine,
/// are refused.
#[test]
fn ycsb_clients_share_one_table() {
    let ycsb = |threadcount: u32| WorkloadSpec::Ycsb {
        workload: "b".into(),
        records: 8_000,
        operations: 8_000,
        threadcount,
        properties: Default::default(),
    };
    let shared = run(ycsb(4), PolicyKind::Mglru, 1_024, 1, 2, "nvme");
    let copies = run(ycsb(1), PolicyKind::Mglru, 1_024, 4, 2, "nvme");
    assert_eq!(shared.tasks, 4);
    let ops = |r: &EngineResult| r.requests.iter().map(|q| q.count).sum::<u64>();
    assert_eq!(ops(&shared), 8_000, "the operations are split among the clients");
    assert_eq!(ops(&copies), 4 * 8_000, "each job does all of them on its own table");
    assert!(
        shared.misses * 2 < copies.misses,
        "one table of 2,000 pages against four: {} vs {} misses",
        shared.misses,
        copies.misses
    );
    assert_eq!(
        run(ycsb(4), PolicyKind::Mglru, 1_024, 1, 2, "nvme").misses,
        shared.misses
    );
    // refusals
    let mut d = ycsb(4);
    if let WorkloadSpec::Ycsb { workload, .. } = &mut d {
        *workload = "d".into();
    }
    assert!(d.validate().unwrap_err().to_string().contains("insert counter"));
    let cfg = RunConfig::new(
        MachineConfig::simple(16_384, 0),
        MemcgConfig::default(),
        ycsb(4),
        PolicyKind::Classic,
    );
    // without [engine] the clients still run as tasks, under the engine's defaults
    let r = sim::run(&cfg, None, &mut |_, _| {}).unwrap();
    assert_eq!(r.engine.expect("an engine run").tasks, 4);
    let mut lru = cfg.clone();
    lru.policy = PolicyKind::Lru;
    let e = sim::run(&lru, None, &mut |_, _| {}).unwrap_err().to_string();
    assert!(e.contains("need a kernel policy"), "{e}");
}

/// A YCSB workload given by its properties (`requestdistribution=hotspot` with 10 % of the data
/// taking 90 % of the requests, 70 % reads and 30 % updates): the run's measured read/update mix
/// (the engine's request counts) within 1 point of the proportions, and the key distribution of
/// the stream the run replays (the first page of each request, in tenths of the table) within
/// 1 point of the distribution's own: 90 % in the hot tenth, 10 %/9 in each other.
#[test]
fn ycsb_properties_mix_and_key_distribution() {
    let props: std::collections::BTreeMap<String, String> = [
        ("readproportion", "0.7"),
        ("updateproportion", "0.3"),
        ("requestdistribution", "hotspot"),
        ("hotspotdatafraction", "0.1"),
        ("hotspotopnfraction", "0.9"),
        // one field per update (YCSB's default), records of 4 fields of 1 KiB
        ("fieldcount", "4"),
        ("fieldlength", "1024"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let (records, operations) = (10_000u64, 100_000u64);
    let w = WorkloadSpec::Ycsb {
        workload: "core".into(),
        records,
        operations,
        threadcount: 1,
        properties: props,
    };
    let e = run(w.clone(), PolicyKind::Mglru, 8_192, 1, 1, "nvme");
    let count = |k: &str| e.requests.iter().find(|q| q.kind == k).map_or(0, |q| q.count);
    let (reads, updates) = (count("READ"), count("UPDATE"));
    assert_eq!(reads + updates, operations, "{:?}", e.requests);
    let share = reads as f64 / operations as f64;
    assert!((share - 0.7).abs() < 0.01, "read share {share}");
    // a read reads the whole 4 KiB record (one page), an update writes one 1 KiB field of it
    assert_eq!(
        e.ops, operations,
        "4 KiB records at 4 KiB offsets: one page per operation"
    );

    let cfg = RunConfig::new(
        MachineConfig::simple(16_384, 0),
        MemcgConfig::default(),
        w.clone(),
        PolicyKind::Mglru,
    );
    let (mut m, t) = lrugen::sim::build_machine(&cfg).unwrap();
    let mut s = lrugen::workload::Stream::new(&w, &mut m, t, 7, None).unwrap();
    let mut tenths = [0u64; 10];
    let mut first = true;
    while let Some(step) = s.next() {
        let req = s.request().expect("every YCSB step belongs to a request");
        if first {
            // one page per record: the page is the key number
            tenths[(u64::from(step.key) * 10 / records) as usize] += 1;
        }
        first = req.last;
    }
    let n: u64 = tenths.iter().sum();
    assert_eq!(n, operations);
    for (i, &c) in tenths.iter().enumerate() {
        let want = if i == 0 { 0.9 } else { 0.1 / 9.0 };
        let got = c as f64 / n as f64;
        assert!(
            (got - want).abs() < 0.01,
            "tenth {i}: {got} of the requests, expected {want}"
        );
    }
}

/// Percentiles that resolve a latency distribution: every read misses (distinct pages, one
/// job, no queueing) on an NVMe device whose latency is log-normal with median 80 µs and
/// σ = 0.25, so a read takes the major fault's CPU + 1,365 ns of transfer + 80 µs · e^(σZ). Over 60,000
/// reads p50, p90, p99 and the mean are within 1 % of the analytic values (the sampling error
/// of the empirical p99 is about 0.3 % here), the distribution is not a point (p99.9 > p99 >
/// p90), and the same seed gives the same histogram, another seed another.
#[test]
fn latency_percentiles_match_a_known_distribution() {
    let t = distinct_trace(60_000);
    let w = WorkloadSpec::Trace {
        path: t.0.clone(),
        format: None,
        access: Default::default(),
    };
    let e = run(w.clone(), PolicyKind::Mglru, 64, 1, 1, "nvme:lognormal=0.25");
    assert_eq!(e.misses, 60_000);
    let c = exact_costs();
    let fixed = (c.major_fault_ns + c.block_io_ns) as f64 + 1_365.0;
    let q = |z: f64| fixed + 80_000.0 * (0.25 * z).exp();
    for (p, z) in [(50.0, 0.0), (90.0, 1.281_552), (99.0, 2.326_348)] {
        let got = e.clat.percentile(p) as f64;
        assert!(near(got, q(z), 0.01), "p{p}: {got} vs {}", q(z));
    }
    let mean = fixed + 80_000.0 * (0.25f64 * 0.25 / 2.0).exp();
    assert!(near(e.clat.mean_ns, mean, 0.01), "mean {} vs {mean}", e.clat.mean_ns);
    assert!(e.clat.percentile(99.9) > e.clat.percentile(99.0));
    assert!(e.clat.percentile(99.0) > e.clat.percentile(90.0));
    let again = run(w.clone(), PolicyKind::Mglru, 64, 1, 1, "nvme:lognormal=0.25");
    assert_eq!(again.clat, e.clat);
    let mut cfg = RunConfig::new(
        MachineConfig::simple(64 * 4 + 16_384, 0),
        MemcgConfig {
            max: Some(64),
            ..Default::default()
        },
        w,
        PolicyKind::Mglru,
    );
    cfg.engine = Some(EngineConfig {
        cpus: 1,
        storage: DeviceSpec::preset("nvme:lognormal=0.25").unwrap(),
        costs: exact_costs(),
        ..Default::default()
    });
    cfg.seed = 2;
    let other = sim::run(&cfg, None, &mut |_, _| {}).unwrap().engine.unwrap();
    assert_ne!(other.clat, e.clat, "the device's draws follow the run's seed");
}

fn fio(fadvise_hint: &str, iodepth: u32, accesses: u64) -> WorkloadSpec {
    WorkloadSpec::Fio {
        dist: "random".into(),
        file_pages: 65_536,
        accesses,
        write_ratio: 0.0,
        sequential: false,
        iodepth,
        fadvise_hint: fadvise_hint.into(),
    }
}

fn fio_run(w: WorkloadSpec) -> sim::RunResult {
    let mut cfg = RunConfig::new(
        MachineConfig::simple(64 * 1024, 0),
        MemcgConfig {
            max: Some(4_096),
            ..Default::default()
        },
        w,
        PolicyKind::Classic,
    );
    cfg.engine = Some(EngineConfig {
        costs: exact_costs(),
        ..Default::default()
    });
    sim::run(&cfg, None, &mut |_, _| {}).unwrap()
}

/// fio's `fadvise_hint`: for random 4 KiB reads the default `1` advises `POSIX_FADV_RANDOM`, and
/// the pages read (`pgpgin`, KiB) are the misses. For random reads `0` reads the same: the kernel's
/// on-demand read-ahead reads a small random read as is (`page_cache_sync_ra`), so the hint
/// matters to sequential jobs, where `1` advises `POSIX_FADV_SEQUENTIAL` (read-ahead, few misses)
/// and `random` turns read-ahead off (every page a miss).
#[test]
fn fio_fadvise_hint_sets_the_files_advice() {
    let random = fio_run(fio("1", 1, 20_000));
    assert!(random.misses > 10_000);
    assert_eq!(
        random.vm(Stat::Pgpgin) as u64,
        random.misses * 4,
        "one page read per miss"
    );
    let seq = |hint: &str| {
        let mut w = fio(hint, 1, 20_000);
        if let WorkloadSpec::Fio { sequential, .. } = &mut w {
            *sequential = true;
        }
        fio_run(w)
    };
    let (ahead, none) = (seq("1"), seq("random"));
    assert_eq!(none.misses, 20_000, "no read-ahead: every page of one pass misses");
    assert!(ahead.misses * 10 < none.misses, "read-ahead: {} misses", ahead.misses);
    assert!(
        ahead.vm(Stat::Pgpgin) as u64 >= 20_000 * 4,
        "the pages were read all the same"
    );
}

/// fio's `iodepth` (io_uring): four I/Os in flight of one job on an NVMe device that serves 128
/// at once take about a quarter of the time of one at a time for the same uniformly random reads
/// of a file 16 times the memcg (nearly all misses), on 2 CPUs.
#[test]
fn fio_iodepth_keeps_ios_in_flight() {
    let one = fio_run(fio("1", 1, 8_000)).engine.unwrap();
    let four = fio_run(fio("1", 4, 8_000)).engine.unwrap();
    assert_eq!(four.tasks, 4);
    assert_eq!(
        (one.ops, four.ops),
        (8_000, 8_000),
        "the I/Os are split among the slots"
    );
    let speedup = four.iops / one.iops;
    assert!((3.6..=4.05).contains(&speedup), "iodepth 4 vs 1: {speedup:.2}x");
}

/// `EngineConfig::per_job`: 3 jobs of randrw at 2 I/Os in flight each are measured apart (the
/// two slots of a job are one job), reads and writes apart; the jobs' counts add up to the run's,
/// and each job's span lies within the run's. Without `per_job` nothing per job is kept.
#[test]
fn per_job_stats_split_the_run_by_job_and_direction() {
    let mut w = fio("1", 2, 6_000);
    if let WorkloadSpec::Fio { write_ratio, .. } = &mut w {
        *write_ratio = 0.25;
    }
    let run = |per_job: bool| {
        let mut cfg = RunConfig::new(
            MachineConfig::simple(64 * 1024, 0),
            MemcgConfig {
                max: Some(4_096),
                ..Default::default()
            },
            w.clone(),
            PolicyKind::Mglru,
        );
        cfg.engine = Some(EngineConfig {
            costs: exact_costs(),
            per_job,
            ..Default::default()
        });
        cfg.jobs = 3;
        sim::run(&cfg, None, &mut |_, _| {}).unwrap().engine.unwrap()
    };
    let e = run(true);
    assert_eq!((e.tasks, e.jobs.len()), (6, 3));
    for j in &e.jobs {
        assert_eq!(j.read.ios + j.write.ios, 6_000, "each job's own I/O count");
        let share = j.write.ios as f64 / 6_000.0;
        assert!((0.2..0.3).contains(&share), "write share {share}");
        assert_eq!(j.read.lat.count, j.read.ios);
        assert_eq!(j.write.lat.count, j.write.ios);
        assert!(j.read.hits <= j.read.ios && j.write.hits <= j.write.ios);
        assert!(j.runtime_ns() > 0 && j.end_ns <= e.elapsed_ns, "{j:?}");
    }
    let sum = |f: fn(&lrugen::sim::engine::JobStats) -> u64| e.jobs.iter().map(f).sum::<u64>();
    assert_eq!(sum(|j| j.read.ios + j.write.ios), e.ops);
    assert_eq!(sum(|j| j.read.hits + j.write.hits), e.hits);
    let plain = run(false);
    assert!(plain.jobs.is_empty());
    assert_eq!(
        (plain.ops, plain.hits, plain.elapsed_ns),
        (e.ops, e.hits, e.elapsed_ns),
        "the same run"
    );
}

/// YCSB records of 1,000 bytes at `k × 1000`: a whole-record read touches both pages of a
/// record that crosses a page boundary, which 999 of every 4,096 byte offsets do (24.4 %);
/// a one-field read (`readallfields=false`, 100-byte fields) crosses far less often (2.4 %).
#[test]
fn ycsb_reads_touch_every_page_of_the_record() {
    let run_with = |all: &str| {
        let props = [
            ("readproportion", "1"),
            ("updateproportion", "0"),
            ("readallfields", all),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let w = WorkloadSpec::Ycsb {
            workload: "core".into(),
            records: 50_000,
            operations: 50_000,
            threadcount: 1,
            properties: props,
        };
        run(w, PolicyKind::Classic, 16_384, 1, 1, "nvme")
    };
    let whole = run_with("true");
    let per_read = whole.ops as f64 / 50_000.0;
    assert!(
        (per_read - (1.0 + 999.0 / 4096.0)).abs() < 0.01,
        "pages per read {per_read}"
    );
    let field = run_with("false").ops as f64 / 50_000.0;
    assert!(
        (field - (1.0 + 99.0 / 4096.0)).abs() < 0.01,
        "pages per one-field read {field}"
    );
}

/// Each reclaim cost added with its measured source (docs/benchmarks.md) prices its own events
/// and nothing else: with every other cost zero, the run's reclaim CPU (direct and kswapd) is
/// that cost times the events counted — PMD entries and Bloom filter operations of MGLRU's
/// page-table walk, and the batched TLB flushes after unmapping anon pages that are swapped out.
#[test]
fn each_walk_and_unmap_cost_prices_its_own_events() {
    type Field = fn(&mut Costs) -> &mut u64;
    type Count = fn(&lrugen::mm::Work) -> u64;
    let cases: [(&str, Field, Count); 3] = [
        ("per_pmd_walked_ns", |c| &mut c.per_pmd_walked_ns, |w| w.pmds_walked),
        ("bloom_op_ns", |c| &mut c.bloom_op_ns, |w| w.bloom_ops),
        ("tlb_flush_ns", |c| &mut c.tlb_flush_ns, |w| w.tlb_flushes),
    ];
    for (name, field, count) in cases {
        let mut costs = exact_costs();
        *field(&mut costs) = 1_000;
        let mut cfg = RunConfig::new(
            MachineConfig::simple(16_384, 16_384),
            MemcgConfig {
                max: Some(1_024),
                ..Default::default()
            },
            WorkloadSpec::Anon {
                pages: 2_048,
                write_ratio: 0.3,
                dist: "zipf:0.8".parse().unwrap(),
                accesses: 40_000,
                compressed_pct: 0,
            },
            PolicyKind::Mglru,
        );
        cfg.engine = Some(EngineConfig {
            cpus: 2,
            storage: DeviceSpec::preset("nvme").unwrap(),
            swap_device: DeviceSpec::preset("nvme").unwrap(),
            costs,
            ..Default::default()
        });
        cfg.check = true;
        let r = sim::run(&cfg, None, &mut |_, _| {}).expect("run");
        let e = r.engine.expect("engine");
        let n = count(&e.direct_work) + count(&e.kswapd_work);
        assert!(n > 0, "{name}: no event counted");
        assert_eq!(e.direct_reclaim_ns + e.kswapd_ns, 1_000 * n, "{name}: {n} events");
        if name == "tlb_flush_ns" {
            // at most one flush per folio unmapped (batched per shrink_folio_list)
            let vm = r.vmstat.as_ref().unwrap();
            assert!(n <= vm.get(Stat::Pswpout) as u64, "{n} flushes");
        }
    }
}

/// `block_io_ns` is per block request, not per page: a sequential buffered read of a file whose
/// read-ahead brings up to 32 pages in one request costs one request's CPU per read-ahead I/O.
/// One job on one CPU, so the run's length moves by exactly the requests' cost.
#[test]
fn the_block_layer_is_priced_per_request_not_per_page() {
    let run_with = |block_io_ns: u64| {
        let mut cfg = RunConfig::new(
            MachineConfig::simple(8_192 + 16_384, 0),
            MemcgConfig {
                max: Some(2_048),
                ..Default::default()
            },
            WorkloadSpec::Fio {
                dist: "random".into(),
                file_pages: 8_192,
                accesses: 8_192,
                write_ratio: 0.0,
                sequential: true,
                iodepth: 1,
                fadvise_hint: "0".into(),
            },
            PolicyKind::Classic,
        );
        cfg.engine = Some(EngineConfig {
            cpus: 1,
            storage: DeviceSpec::preset("nvme").unwrap(),
            costs: Costs {
                block_io_ns,
                ..exact_costs()
            },
            ..Default::default()
        });
        sim::run(&cfg, None, &mut |_, _| {}).expect("run")
    };
    let (free, priced) = (run_with(0), run_with(1_000_000));
    let pages_read = priced.vmstat.as_ref().unwrap().get(Stat::Pgpgin) as u64 / 4;
    let (a, b) = (free.engine.unwrap(), priced.engine.unwrap());
    let requests = (b.elapsed_ns - a.elapsed_ns) / 1_000_000;
    eprintln!("{pages_read} pages read in {requests} requests");
    assert_eq!((b.elapsed_ns - a.elapsed_ns) % 1_000_000, 0, "whole requests");
    assert!(requests > 0 && pages_read >= 8_192);
    assert!(
        requests * 8 <= pages_read,
        "read-ahead: {requests} requests for {pages_read} pages"
    );
}

/// Swap read-ahead is part of the fault's read: each swap fault submits one request to the swap
/// device, of every page its window read (`pswpin` of the operation), so on an NVMe disk the
/// requests are the major faults, fewer than the pages read; with `vm.page-cluster` 0 they are
/// the pages. A `hdd` (rotational: read-ahead by swap offset) does the same; a RAM disk
/// (`SWP_SYNCHRONOUS_IO`) reads one page a fault whatever `page-cluster` says.
#[test]
fn a_swap_faults_read_ahead_is_one_device_request() {
    let run_with = |device: &str, page_cluster: u32, policy: PolicyKind| {
        let mut machine = MachineConfig::simple(16_384, 16_384);
        machine.page_cluster = page_cluster;
        let mut cfg = RunConfig::new(
            machine,
            MemcgConfig {
                max: Some(1_024),
                ..Default::default()
            },
            WorkloadSpec::Anon {
                pages: 2_048,
                write_ratio: 0.3,
                dist: "zipf:0.6".parse().unwrap(),
                accesses: 20_000,
                compressed_pct: 0,
            },
            policy,
        );
        cfg.engine = Some(EngineConfig {
            cpus: 1,
            storage: DeviceSpec::preset("nvme").unwrap(),
            swap_device: DeviceSpec::preset(device).unwrap(),
            ..Default::default()
        });
        cfg.check = true;
        let r = sim::run(&cfg, None, &mut |_, _| {}).expect("run");
        let vm = r.vmstat.as_ref().unwrap();
        let e = r.engine.expect("engine");
        (
            e.swap.reads,
            vm.get(Stat::Pswpin) as u64,
            vm.get(Stat::Pgmajfault) as u64,
            vm.get(Stat::SwapRa) as u64,
        )
    };
    for policy in [PolicyKind::Mglru, PolicyKind::Classic] {
        for device in ["nvme", "hdd"] {
            let (requests, pswpin, majors, ra) = run_with(device, 3, policy);
            assert!(
                ra > 0 && pswpin > requests,
                "{policy:?} {device}: {requests} requests, {pswpin} pages"
            );
            assert_eq!(requests, majors, "{policy:?} {device}: one request per swap fault");
            assert_eq!(pswpin, majors + ra, "{policy:?} {device}");
            let (requests, pswpin, majors, ra) = run_with(device, 0, policy);
            assert_eq!((requests, pswpin, ra), (majors, majors, 0), "{policy:?} {device}");
        }
        let (requests, pswpin, majors, ra) = run_with("ramdisk", 3, policy);
        assert_eq!((requests, pswpin, ra), (majors, majors, 0), "{policy:?} ramdisk");
    }
}

/// A node-level squeeze by anon memory (no memcg limit, swap on zram): 3,000 pages populated by
/// stores, then 6,000 random loads and stores, on a machine of 2,048 pages with one CPU or two,
/// the scheduler's slice `slice_ns` ([`EngineConfig::sched_slice_ns`]).
fn anon_squeeze(cpus: u32, slice_ns: u64, policy: PolicyKind) -> sim::RunResult {
    let mut cfg = common::anon_squeeze(MachineConfig::simple(2_048, 8_192), policy);
    cfg.engine = Some(EngineConfig {
        cpus,
        swap_device: DeviceSpec::preset("zram").unwrap(),
        sched_slice_ns: slice_ns,
        ..Default::default()
    });
    sim::run(&cfg, None, &mut |_, _| {}).expect("run")
}

#[test]
fn a_task_keeps_its_slice_when_it_wakes_kswapd() {
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        // Without the slice, kswapd takes the one CPU after the operation that woke it, so every
        // allocation finds the node above its min watermark.
        let at_once = anon_squeeze(1, 0, policy);
        assert!(at_once.vm(Stat::Pageoutrun) > 0, "{policy:?}: kswapd ran");
        assert_eq!(at_once.vm(Stat::AllocstallNormal), 0, "{policy:?}: no direct reclaim");
        // With the kernel's 0.75 ms slice on one CPU, the task runs on after the wakeup (a
        // zero-fill or a zram swap-in takes a few µs, so hundreds of them fit), allocates down
        // to the min watermark and reclaims directly; kswapd, when it runs, holds the CPU for
        // its own slice, and the task's operations wait behind it.
        let sliced = anon_squeeze(1, 750_000, policy);
        eprintln!(
            "{policy:?}: allocstall {} pgsteal direct {} kswapd {} pageoutrun {} (at once: {} {})",
            sliced.vm(Stat::AllocstallNormal),
            sliced.vm(Stat::PgstealDirect),
            sliced.vm(Stat::PgstealKswapd),
            sliced.vm(Stat::Pageoutrun),
            at_once.vm(Stat::PgstealKswapd),
            at_once.vm(Stat::Pageoutrun),
        );
        assert!(sliced.vm(Stat::AllocstallNormal) > 0, "{policy:?}: the task stalled");
        assert!(sliced.vm(Stat::PgstealDirect) > 0);
        assert!(sliced.vm(Stat::PgstealKswapd) > 0, "{policy:?}: kswapd still ran");
        let e = sliced.engine.as_ref().unwrap();
        assert!(
            e.time.cpu_queue_kswapd_ns > 0,
            "{policy:?}: operations waited for kswapd's slice"
        );
        // kswapd runs less often: each of its runs starts later, with more to do
        assert!(sliced.vm(Stat::Pageoutrun) < at_once.vm(Stat::Pageoutrun), "{policy:?}");
        // With a second CPU kswapd runs there at once, and a task does not take the CPU of a
        // kswapd within its slice: the slice changes little.
        let two = anon_squeeze(2, 0, policy);
        let two_sliced = anon_squeeze(2, 750_000, policy);
        eprintln!(
            "{policy:?}: two CPUs: allocstall {} / {} pgsteal direct {} / {} queued behind kswapd {} / {}",
            two.vm(Stat::AllocstallNormal),
            two_sliced.vm(Stat::AllocstallNormal),
            two.vm(Stat::PgstealDirect),
            two_sliced.vm(Stat::PgstealDirect),
            two.engine.as_ref().unwrap().time.cpu_queue_kswapd_ns,
            two_sliced.engine.as_ref().unwrap().time.cpu_queue_kswapd_ns,
        );
        let queued = |r: &sim::RunResult| r.engine.as_ref().unwrap().time.cpu_queue_kswapd_ns;
        assert!(queued(&two_sliced) <= queued(&two), "{policy:?}");
        assert!(two_sliced.vm(Stat::AllocstallNormal) < sliced.vm(Stat::AllocstallNormal));
        // and the same configuration twice is the same run
        let again = anon_squeeze(1, 750_000, policy);
        assert_eq!(
            serde_json::to_string(&sliced.engine).unwrap(),
            serde_json::to_string(&again.engine).unwrap()
        );
    }
}

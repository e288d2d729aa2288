// SPDX-License-Identifier: GPL-2.0-only
//! YCSB against a store with its own cache (`cache_size`, `workload::store`): the store serves
//! what it holds from anonymous memory and reads the rest through the page cache, as WiredTiger
//! and InnoDB do.

use lrugen::mm::device::DeviceSpec;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::MachineConfig;
use lrugen::sim::engine::EngineConfig;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunResult};
use lrugen::workload::{Op, Stream, WorkloadSpec};

const RECORDS: u64 = 10_000;

/// Records of one 4 KiB page (4 fields of 1 KiB), 90 % of the operations on 10 % of the records.
fn ycsb(cache_size: Option<&str>, threadcount: u32, update: &str) -> WorkloadSpec {
    let mut props: std::collections::BTreeMap<String, String> = [
        ("readproportion", "0.9"),
        ("updateproportion", update),
        ("requestdistribution", "hotspot"),
        ("hotspotdatafraction", "0.1"),
        ("hotspotopnfraction", "0.9"),
        ("fieldcount", "4"),
        ("fieldlength", "1024"),
        ("writeallfields", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    if update == "0" {
        props.insert("readproportion".into(), "1".into());
    }
    if let Some(c) = cache_size {
        props.insert("cache_size".into(), c.into());
    }
    WorkloadSpec::Ycsb {
        workload: "core".into(),
        records: RECORDS,
        operations: 100_000,
        threadcount,
        properties: props,
    }
}

/// The page operations of a single client's stream (seed 7): their counts by kind (file reads,
/// file writes, anon loads, anon stores) and the file pages read, in order.
fn kinds(w: &WorkloadSpec) -> ((u64, u64, u64, u64), Vec<u64>) {
    let cfg = RunConfig::new(
        MachineConfig::simple(65_536, 0),
        MemcgConfig::default(),
        w.clone(),
        PolicyKind::Mglru,
    );
    let (mut m, t) = sim::build_machine(&cfg).unwrap();
    let s = Stream::new(w, &mut m, t, 7, None).unwrap();
    let mut k = (0, 0, 0, 0);
    let mut pages = Vec::new();
    for step in s {
        match step.op {
            Op::Read { index, .. } => {
                k.0 += 1;
                pages.push(index);
            }
            Op::Write { .. } => k.1 += 1,
            Op::Load { .. } => k.2 += 1,
            Op::Store { .. } => k.3 += 1,
            op => panic!("unexpected {op:?}"),
        }
    }
    (k, pages)
}

/// Misses of an LRU cache of `slots` pages on `pages`.
fn lru_misses(pages: &[u64], slots: usize) -> u64 {
    let mut lru: Vec<u64> = Vec::new(); // most recent last
    let mut misses = 0;
    for &p in pages {
        match lru.iter().rposition(|&q| q == p) {
            Some(i) => {
                lru.remove(i);
            }
            None => {
                misses += 1;
                if lru.len() == slots {
                    lru.remove(0);
                }
            }
        }
        lru.push(p);
    }
    misses
}

/// A cache of 1,200 pages in front of a table whose hot tenth is 1,000 pages: reads of the file
/// are exactly the misses of an LRU cache of that size on the workload's pages (the same seed
/// without a cache reads every page from the file, in the same order), and every other
/// operation is a load of the cache.
#[test]
fn the_cache_filters_the_reads_of_hot_records() {
    let ((reads, writes, loads, stores), sequence) = kinds(&ycsb(None, 1, "0"));
    assert_eq!(
        (reads, writes, loads, stores),
        (100_000, 0, 0, 0),
        "without a cache: preads only"
    );

    let ((reads, writes, loads, stores), _) = kinds(&ycsb(Some("4800K"), 1, "0"));
    assert_eq!(
        reads,
        lru_misses(&sequence, 1200),
        "the store's misses are an LRU cache's"
    );
    assert_eq!(reads + loads, 100_000, "one page per read, from the file or the cache");
    assert_eq!(stores, reads, "every page read from the file is copied into the cache");
    assert_eq!(writes, 0, "a read-only workload dirties nothing");
    let miss = reads as f64 / 100_000.0;
    // the cold tenth mostly misses; the hot pages sometimes (their reuse distance is random)
    assert!((0.10..0.2).contains(&miss), "store miss ratio {miss}");
}

/// Updates dirty the cached page; a dirty page is written to the file when it is evicted, and
/// only then.
#[test]
fn dirty_pages_are_written_back_at_eviction() {
    let ((reads, writes, loads, stores), _) = kinds(&ycsb(Some("4M"), 1, "0.1"));
    assert!(writes > 0, "cold updated pages evicted dirty");
    assert!(writes < reads, "{writes} write-backs, {reads} misses");
    // each operation accesses the cache once (a hit's load or store, a miss's fill), and an
    // update that missed stores once more
    assert!(loads + stores >= 100_000 && loads + stores - 100_000 <= reads);
    // a cache as large as the table evicts nothing, so writes nothing
    let ((reads, writes, _, _), _) = kinds(&ycsb(Some("40M"), 1, "0.1"));
    assert_eq!(writes, 0);
    assert!(reads <= RECORDS, "each page read once at most: {reads}");
}

fn run(w: WorkloadSpec, policy: PolicyKind, memcg_max: u64, swap: u64) -> RunResult {
    let mut cfg = RunConfig::new(
        MachineConfig::simple(memcg_max * 4 + 16_384, swap),
        MemcgConfig {
            max: Some(memcg_max),
            ..Default::default()
        },
        w,
        policy,
    );
    cfg.engine = Some(EngineConfig {
        cpus: 2,
        storage: DeviceSpec::preset("nvme").unwrap(),
        swap_device: DeviceSpec::preset("zram").unwrap(),
        ..Default::default()
    });
    cfg.check = true;
    sim::run(&cfg, None, &mut |_, _| {}).expect("run")
}

/// In a memcg that holds the cache and part of the table: the cache is the memcg's anonymous
/// memory (shared by the four clients: one store process, not four copies) and the page cache
/// gets what is left; a cache larger than the memcg lives partly in swap.
#[test]
fn the_cache_is_the_memcgs_anon_memory_shared_by_the_clients() {
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        let r = run(ycsb(Some("8M"), 4, "0.1"), policy, 4096, 0);
        assert!(r.error.is_none(), "{policy:?}: {:?}", r.error);
        let ms = r.memory_stat.as_ref().unwrap();
        let anon = ms.get(Stat::NrAnonPages);
        let file = ms.get(Stat::NrFilePages);
        eprintln!("{policy:?}: anon {anon} file {file} pages");
        // 2,048 slots, all filled (more than 2,048 distinct pages are read); no swap to evict them
        assert_eq!(anon, 2048, "{policy:?}: one cache for the four clients");
        assert!(file > 500, "{policy:?}: the page cache holds the rest: {file}");
        let e = r.engine.as_ref().unwrap();
        assert_eq!(e.tasks, 4);
        let ops: u64 = e.requests.iter().map(|q| q.count).sum();
        assert_eq!(ops, 100_000, "every client's operations were made");

        // the same with swap: the cold part of the cache is swapped, so anon falls below the cache
        let r = run(ycsb(Some("20M"), 4, "0.1"), policy, 4096, 16_384);
        let vm = r.vmstat.as_ref().unwrap();
        let anon = r.memory_stat.as_ref().unwrap().get(Stat::NrAnonPages);
        eprintln!("{policy:?} with swap: anon {anon}, pswpout {}", vm.get(Stat::Pswpout));
        assert!(r.error.is_none(), "{policy:?}: {:?}", r.error);
        assert!(
            vm.get(Stat::Pswpout) > 0,
            "{policy:?}: a 20 MiB cache in a 16 MiB memcg swaps"
        );
        assert!(anon < 4096, "{policy:?}: {anon}");
    }
}

#[test]
fn a_bad_cache_size_is_refused_by_name() {
    let w = ycsb(Some("lots"), 1, "0.1");
    let e = w.validate().unwrap_err().to_string();
    assert!(e.contains("cache_size=lots"), "{e}");
}

/// A scan that starts near the last record returns the records that exist, as a store's cursor
/// stops at the table's end: with few operations (so little room for inserts beyond the
/// records), neither the table nor the store's cache is read past its end, and the run is not
/// cut short (it was: "read past the end of file").
#[test]
fn a_scan_stops_at_the_last_record() {
    for cache in [None, Some("1M")] {
        let mut props: std::collections::BTreeMap<String, String> = [
            ("readproportion", "0"),
            ("updateproportion", "0"),
            ("scanproportion", "1"),
            ("requestdistribution", "uniform"),
            ("maxscanlength", "100"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        if let Some(c) = cache {
            props.insert("cache_size".into(), c.into());
        }
        let w = WorkloadSpec::Ycsb {
            workload: "core".into(),
            records: 1_000,
            operations: 300,
            threadcount: 1,
            properties: props,
        };
        let table = lrugen::workload::ycsb_table_pages(1_000, 300, 1_000);
        let ((reads, ..), pages) = kinds(&w);
        assert!(reads > 0);
        let last = pages.iter().max().copied().unwrap();
        assert!(last < table, "{cache:?}: page {last} of a {table}-page table");
        // the records end at byte 1,000,000: page 244
        assert!(last <= 1_000_000 / 4096, "{cache:?}: page {last} past the last record");
        let r = run(w, PolicyKind::Mglru, 4096, 0);
        assert!(r.error.is_none(), "{cache:?}: {:?}", r.error);
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! The kernel text formats lrugen prints: `/proc/vmstat`, cgroup v2 `memory.stat` and
//! `memory.events`.
//!
//! Two kinds of checks:
//!
//! * **Golden files**: two small deterministic runs of the classic LRU (a file-read workload and an
//!   anon workload with swap, seed 1, a small memcg) print their texts, which must equal the files
//!   under `tests/golden/` byte for byte. A difference means a change of behaviour or of format;
//!   when it is intended, regenerate the files and review the diff before committing:
//!
//!   ```text
//!   LRUGEN_BLESS=1 cargo test -p lrugen-core --test formats
//!   git diff crates/lrugen-core/tests/golden/
//!   ```
//!
//! * **Format properties**, independent of the values: every line is `name value`; the names are a
//!   subsequence of the kernel's own order (`vmstat_text[]` of `mm/vmstat.c`; `memory_stats[]`,
//!   `memcg_stat_format()` and `memcg_vm_event_stat[]` of `mm/memcontrol.c`; `memory_events_show()`);
//!   `memory.stat` sizes are bytes (multiples of the 4096-byte page); each printed value is the
//!   counter it names.

mod common;

use common::memory_stat_lists::DEBIAN_7_2;
use lrugen::mm::memory_stat;
use lrugen::mm::vmstat::{format_proc_vmstat, Counters, Stat, StatKind, NR_STATS};
use lrugen::mm::{MachineConfig, PAGE_SIZE};
use lrugen::reclaim::mglru::{Profile, Switches};
use lrugen::report;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunResult};
use lrugen::workload::dist::Dist;
use lrugen::workload::WorkloadSpec;
use std::path::PathBuf;

/// `/proc/vmstat` names in the kernel's order (`vmstat_text[]`, Linux 6.x with `CONFIG_NUMA`,
/// `CONFIG_SWAP`, `CONFIG_ZONE_DMA` and `CONFIG_ZONE_DMA32`; options not relevant here left out).
const KERNEL_VMSTAT_ORDER: &[&str] = &[
    // enum zone_stat_item
    "nr_free_pages",
    "nr_free_pages_blocks",
    "nr_zone_inactive_anon",
    "nr_zone_active_anon",
    "nr_zone_inactive_file",
    "nr_zone_active_file",
    "nr_zone_unevictable",
    "nr_zone_write_pending",
    "nr_mlock",
    "nr_bounce",
    "nr_zspages",
    "nr_free_cma",
    // enum numa_stat_item
    "numa_hit",
    "numa_miss",
    "numa_foreign",
    "numa_interleave",
    "numa_local",
    "numa_other",
    // enum node_stat_item
    "nr_inactive_anon",
    "nr_active_anon",
    "nr_inactive_file",
    "nr_active_file",
    "nr_unevictable",
    "nr_slab_reclaimable",
    "nr_slab_unreclaimable",
    "nr_isolated_anon",
    "nr_isolated_file",
    "workingset_nodes",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "workingset_restore_anon",
    "workingset_restore_file",
    "workingset_nodereclaim",
    "nr_anon_pages",
    "nr_mapped",
    "nr_file_pages",
    "nr_dirty",
    "nr_writeback",
    "nr_writeback_temp",
    "nr_shmem",
    "nr_shmem_hugepages",
    "nr_shmem_pmdmapped",
    "nr_file_hugepages",
    "nr_file_pmdmapped",
    "nr_anon_transparent_hugepages",
    "nr_vmscan_write",
    "nr_vmscan_immediate_reclaim",
    "nr_dirtied",
    "nr_written",
    "nr_throttled_written",
    "nr_kernel_misc_reclaimable",
    "nr_foll_pin_acquired",
    "nr_foll_pin_released",
    "nr_kernel_stack",
    "nr_page_table_pages",
    "nr_sec_page_table_pages",
    "nr_swapcached",
    "pgpromote_success",
    "pgpromote_candidate",
    "pgdemote_kswapd",
    "pgdemote_direct",
    "pgdemote_khugepaged",
    "pgdemote_proactive", // 6.15
    // enum vm_stat_item
    "nr_dirty_threshold",
    "nr_dirty_background_threshold",
    // enum vm_event_item
    "pgpgin",
    "pgpgout",
    "pswpin",
    "pswpout",
    "pgalloc_dma",
    "pgalloc_dma32",
    "pgalloc_normal",
    "pgalloc_movable",
    "allocstall_dma",
    "allocstall_dma32",
    "allocstall_normal",
    "allocstall_movable",
    "pgskip_dma",
    "pgskip_dma32",
    "pgskip_normal",
    "pgskip_movable",
    "pgfree",
    "pgactivate",
    "pgdeactivate",
    "pglazyfree",
    "pgfault",
    "pgmajfault",
    "pglazyfreed",
    "pgrefill",
    "pgreuse",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgsteal_khugepaged",
    "pgsteal_proactive", // 6.15
    "pgscan_kswapd",
    "pgscan_direct",
    "pgscan_khugepaged",
    "pgscan_proactive", // 6.15
    "pgscan_direct_throttle",
    "pgscan_anon",
    "pgscan_file",
    "pgsteal_anon",
    "pgsteal_file",
    "zone_reclaim_failed",
    "pginodesteal",
    "slabs_scanned",
    "kswapd_inodesteal",
    "kswapd_low_wmark_hit_quickly",
    "kswapd_high_wmark_hit_quickly",
    "pageoutrun",
    "pgrotated",
    "drop_pagecache",
    "drop_slab",
    "oom_kill",
    "numa_pte_updates",
    "numa_huge_pte_updates",
    "numa_hint_faults",
    "numa_hint_faults_local",
    "numa_pages_migrated",
    "pgmigrate_success",
    "pgmigrate_fail",
    "compact_migrate_scanned",
    "compact_free_scanned",
    "compact_isolated",
    "compact_stall",
    "compact_fail",
    "compact_success",
    "compact_daemon_wake",
    "unevictable_pgs_culled",
    "unevictable_pgs_scanned",
    "unevictable_pgs_rescued",
    "unevictable_pgs_mlocked",
    "unevictable_pgs_munlocked",
    "unevictable_pgs_cleared",
    "unevictable_pgs_stranded",
    "thp_fault_alloc",
    "thp_fault_fallback",
    "thp_fault_fallback_charge",
    "thp_collapse_alloc",
    "thp_collapse_alloc_failed",
    "thp_file_alloc",
    "thp_file_fallback",
    "thp_file_fallback_charge",
    "thp_file_mapped",
    "thp_split_page",
    "thp_split_page_failed",
    "thp_deferred_split_page",
    "thp_underused_split_page",
    "thp_split_pmd",
    "thp_scan_exceed_none_pte",
    "thp_scan_exceed_swap_pte",
    "thp_scan_exceed_share_pte",
    "thp_split_pud",
    "thp_zero_page_alloc",
    "thp_zero_page_alloc_failed",
    "thp_swpout",
    "thp_swpout_fallback",
    "swap_ra",
    "swap_ra_hit",
    "zswpin",
    "zswpout",
];

/// cgroup v2 `memory.stat` names in the kernel's order before 7.2 (Linux 6.x
/// `memcg_stat_format()`: the `memory_stats[]` table with `slab` after `slab_unreclaimable`, then
/// `pgscan`, `pgsteal`, then `memcg_vm_event_stat[]` without `pgpgin`/`pgpgout`; 6.15's
/// proactive and swap lines where 6.17 has them). Each kernel's exact list: `tests/memory_stat.rs`.
const KERNEL_MEMORY_STAT_ORDER: &[&str] = &[
    "anon",
    "file",
    "kernel",
    "kernel_stack",
    "pagetables",
    "sec_pagetables",
    "percpu",
    "sock",
    "vmalloc",
    "shmem",
    "zswap",
    "zswapped",
    "file_mapped",
    "file_dirty",
    "file_writeback",
    "swapcached",
    "anon_thp",
    "file_thp",
    "shmem_thp",
    "inactive_anon",
    "active_anon",
    "inactive_file",
    "active_file",
    "unevictable",
    "slab_reclaimable",
    "slab_unreclaimable",
    "slab",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate_anon",
    "workingset_activate_file",
    "workingset_restore_anon",
    "workingset_restore_file",
    "workingset_nodereclaim",
    "pgdemote_kswapd",
    "pgdemote_direct",
    "pgdemote_khugepaged",
    "pgdemote_proactive",
    "pgpromote_success",
    "pgscan",
    "pgsteal",
    "pswpin",
    "pswpout",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgscan_khugepaged",
    "pgscan_proactive",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgsteal_khugepaged",
    "pgsteal_proactive",
    "pgfault",
    "pgmajfault",
    "pgrefill",
    "pgactivate",
    "pgdeactivate",
    "pglazyfree",
    "pglazyfreed",
    "swpin_zero",
    "swpout_zero",
    "zswpin",
    "zswpout",
    "zswpwb",
    "thp_fault_alloc",
    "thp_collapse_alloc",
    "thp_swpout",
    "thp_swpout_fallback",
    "numa_pages_migrated",
    "numa_pte_updates",
    "numa_hint_faults",
];

/// `memory.stat` entries that are sizes (printed in bytes); the others are event counts.
const MEMORY_STAT_SIZES: &[&str] = &[
    "anon",
    "file",
    "kernel",
    "pagetables",
    "sec_pagetables",
    "sock",
    "vmalloc",
    "shmem",
    "file_mapped",
    "file_dirty",
    "file_writeback",
    "swapcached",
    "anon_thp",
    "file_thp",
    "shmem_thp",
    "inactive_anon",
    "active_anon",
    "inactive_file",
    "active_file",
    "unevictable",
];

/// `memory.events` (`memory_events_show()`), all of it.
const KERNEL_MEMORY_EVENTS_ORDER: &[&str] = &["low", "high", "max", "oom", "oom_kill", "oom_group_kill"];

/// The memcg limit of the golden runs, in pages (8 MiB).
const MEMCG_PAGES: u64 = 2048;

fn config(name: &str) -> RunConfig {
    let thp = name.ends_with("-thp");
    let name = name.trim_end_matches("-thp");
    let (workload, swap) = match name {
        // Zipf reads over 2 files x 16 MiB (8192 pages) in an 8 MiB memcg: reclaim, refaults,
        // activations.
        "file-read" => (
            WorkloadSpec::FileRead {
                files: 2,
                file_pages: 4096,
                dist: Dist::Zipf { theta: 0.9 },
                accesses: 30_000,
            },
            0,
        ),
        // A 16 MiB anon region in an 8 MiB memcg with 32 MiB of swap: swap-out and swap-in.
        "anon" => (
            WorkloadSpec::Anon {
                compressed_pct: 0,
                pages: 4096,
                write_ratio: 0.3,
                dist: Dist::Zipf { theta: 0.9 },
                accesses: 30_000,
            },
            8192,
        ),
        _ => unreachable!("{name}"),
    };
    let mut machine = MachineConfig::simple(MEMCG_PAGES + 16_384, swap);
    // kernel memory charged, so that `kernel`, `pagetables` and the slab items have values
    machine.kmem = lrugen::mm::KmemConfig::kernel();
    if thp {
        machine.thp = lrugen::mm::thp::Thp::Always;
    }
    let memcg = MemcgConfig {
        max: Some(MEMCG_PAGES),
        ..Default::default()
    };
    let cfg = RunConfig::new(machine, memcg, workload, PolicyKind::Classic);
    assert_eq!(cfg.seed, 1);
    cfg
}

fn run(name: &str) -> RunResult {
    let r = sim::run(&config(name), None, &mut |_, _| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(r.error, None, "{name}: the golden run must not stop early");
    r
}

/// The three texts of a run: (file suffix, text).
fn texts(r: &RunResult) -> [(&'static str, String); 3] {
    [
        (
            "vmstat",
            report::proc_vmstat(r).expect("a kernel policy reports /proc/vmstat"),
        ),
        (
            "memory.stat",
            report::memory_stat(r).expect("a kernel policy reports memory.stat"),
        ),
        (
            "memory.events",
            r.memory_events.expect("a kernel policy reports memory.events").format(),
        ),
    ]
}

fn golden_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(file)
}

/// Compare `actual` with the golden file `file` (`common::check_golden`).
fn check_golden(file: &str, actual: &str) {
    common::check_golden(&golden_path(file), actual, "formats");
}

#[test]
fn golden_file_read() {
    let r = run("file-read");
    for (suffix, text) in texts(&r) {
        check_golden(&format!("file-read.{suffix}"), &text);
    }
}

#[test]
fn golden_anon() {
    let r = run("anon");
    for (suffix, text) in texts(&r) {
        check_golden(&format!("anon.{suffix}"), &text);
    }
}

/// The anon run under THP `always`: the THP lines of `/proc/vmstat` and `memory.stat` with the
/// values a run that faults, swaps out and splits THPs gives them.
#[test]
fn golden_anon_thp() {
    let r = run("anon-thp");
    let vm = r.vmstat.as_ref().unwrap();
    assert!(
        vm.get(Stat::ThpFaultAlloc) > 0 && vm.get(Stat::ThpSwpout) > 0,
        "the run makes and swaps THPs"
    );
    for (suffix, text) in texts(&r) {
        check_golden(&format!("anon-thp.{suffix}"), &text);
    }
}

/// Parse `name value` lines; panics naming the line when one has another shape.
fn parse(what: &str, text: &str) -> Vec<(String, i64)> {
    assert!(text.ends_with('\n'), "{what}: the text must end with a newline");
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let mut f = line.split(' ');
            let (Some(name), Some(value), None) = (f.next(), f.next(), f.next()) else {
                panic!("{what} line {}: expected `name value`, found {line:?}", i + 1);
            };
            assert!(
                !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                "{what} line {}: bad name in {line:?}",
                i + 1
            );
            let v: i64 = value
                .parse()
                .unwrap_or_else(|_| panic!("{what} line {}: expected an integer value, found {line:?}", i + 1));
            (name.to_string(), v)
        })
        .collect()
}

/// Assert that `names` appear in `order`, each at most once, in that order.
fn assert_kernel_order(what: &str, names: &[String], order: &[&str]) {
    let mut last: Option<usize> = None;
    for n in names {
        let Some(i) = order.iter().position(|k| k == n) else {
            panic!("{what}: `{n}` is not a name the kernel prints there");
        };
        if let Some(l) = last {
            assert!(
                i > l,
                "{what}: `{n}` is printed after `{}`, the kernel prints it before (or twice)",
                order[l]
            );
        }
        last = Some(i);
    }
}

fn check_vmstat_text(what: &str, text: &str, c: &Counters) {
    let lines = parse(what, text);
    let names: Vec<String> = lines.iter().map(|l| l.0.clone()).collect();
    assert_kernel_order(what, &names, KERNEL_VMSTAT_ORDER);
    // Every modelled counter is printed once, with its value.
    // (memcg-only items such as `kernel` are in memory.stat, not here; byte-sized slab items
    // print in pages, as the kernel's do).
    let items: Vec<Stat> = lrugen::mm::vmstat::proc_vmstat_items().collect();
    assert_eq!(items.len(), NR_STATS - 1, "the one memcg-only item is `kernel`");
    assert_eq!(lines.len(), items.len(), "{what}: one line per counter");
    for (&s, (name, v)) in items.iter().zip(&lines) {
        assert_eq!(name, s.name(), "{what}");
        assert_eq!(*v, c.shown(s), "{what}: value of {name}");
        if s.kind() == StatKind::Event {
            assert!(*v >= 0, "{what}: event counter {name} is negative: {v}");
        }
    }
}

/// The order `memory.stat` prints its lines in on the kernel with switches `sw`: 7.2's own list
/// where the reclaim counters moved among the state items (`node_reclaim_stats`), the union of
/// the earlier kernels' otherwise.
fn memory_stat_order(sw: &Switches) -> &'static [&'static str] {
    if sw.node_reclaim_stats {
        DEBIAN_7_2
    } else {
        KERNEL_MEMORY_STAT_ORDER
    }
}

fn check_memory_stat_text(what: &str, text: &str, sw: &Switches) -> Vec<(String, i64)> {
    let lines = parse(what, text);
    let names: Vec<String> = lines.iter().map(|l| l.0.clone()).collect();
    assert_kernel_order(what, &names, memory_stat_order(sw));
    for (name, v) in &lines {
        assert!(*v >= 0, "{what}: {name} is negative: {v}");
        if MEMORY_STAT_SIZES.contains(&name.as_str()) {
            assert_eq!(v % 4096, 0, "{what}: {name} {v} is a size in bytes, a multiple of 4096");
        }
    }
    lines
}

fn check_memory_events_text(what: &str, text: &str) {
    let lines = parse(what, text);
    let names: Vec<&str> = lines.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(
        names, KERNEL_MEMORY_EVENTS_ORDER,
        "{what}: memory.events has exactly these lines"
    );
    assert!(lines.iter().all(|l| l.1 >= 0), "{what}: negative event count");
}

fn get(lines: &[(String, i64)], name: &str) -> i64 {
    lines
        .iter()
        .find(|l| l.0 == name)
        .unwrap_or_else(|| panic!("no `{name}` line"))
        .1
}

#[test]
fn format_properties_of_real_runs() {
    for name in ["file-read", "anon"] {
        let r = run(name);
        check_vmstat_text(
            &format!("{name} /proc/vmstat"),
            &report::proc_vmstat(&r).unwrap(),
            r.vmstat.as_ref().unwrap(),
        );
        let ms = report::memory_stat(&r).unwrap();
        let sw = r.kernel_switches.expect("a kernel policy's run names its switches");
        let lines = check_memory_stat_text(&format!("{name} memory.stat"), &ms, &sw);
        check_memory_events_text(&format!("{name} memory.events"), &r.memory_events.unwrap().format());
        // The runs are sized to reclaim, so the checks above saw non-zero sizes and events.
        let (size, pages) = match name {
            "file-read" => ("file", r.memcg(Stat::NrFilePages)),
            _ => ("anon", r.memcg(Stat::NrAnonPages)),
        };
        assert!(pages > 0, "{name}: no {size} pages in the memcg");
        assert_eq!(
            get(&lines, size),
            pages * PAGE_SIZE as i64,
            "{name}: memory.stat {size} in bytes"
        );
        assert!(get(&lines, "pgscan") > 0, "{name}: the run should reclaim");
        let charged = get(&lines, "anon") + get(&lines, "file");
        assert!(
            charged <= (MEMCG_PAGES * PAGE_SIZE) as i64,
            "{name}: anon + file = {charged} bytes exceeds memory.max"
        );
    }
}

/// Counters with a distinct value per counter, so a name printed with another counter's value shows.
fn distinct_counters() -> Counters {
    let mut c = Counters::default();
    for (i, &s) in Stat::ALL.iter().enumerate() {
        c.add(s, 1000 + i as i64);
    }
    c
}

#[test]
fn proc_vmstat_prints_each_counter_under_its_name() {
    let c = distinct_counters();
    check_vmstat_text("synthetic /proc/vmstat", &format_proc_vmstat(&c), &c);
}

/// On 6.17 and on `mainline` (7.2), the two orders (the reclaim counters among the events, and
/// among the state items).
#[test]
fn memory_stat_prints_each_counter_under_its_name() {
    for p in [Profile::V6_17, Profile::MAINLINE] {
        memory_stat_prints_each_counter_on(p);
    }
}

fn memory_stat_prints_each_counter_on(p: Profile) {
    let c = distinct_counters();
    let lines = check_memory_stat_text(
        &format!("{} synthetic memory.stat", p.name()),
        &memory_stat::format(&c, PAGE_SIZE, &p.switches),
        &p.switches,
    );
    let bytes = |s: Stat| c.get(s) * PAGE_SIZE as i64;
    for (name, s) in [
        ("anon", Stat::NrAnonPages),
        ("file", Stat::NrFilePages),
        ("file_mapped", Stat::NrMapped),
        ("file_dirty", Stat::NrDirty),
        ("file_writeback", Stat::NrWriteback),
        ("swapcached", Stat::NrSwapcached),
        ("inactive_anon", Stat::NrInactiveAnon),
        ("active_anon", Stat::NrActiveAnon),
        ("inactive_file", Stat::NrInactiveFile),
        ("active_file", Stat::NrActiveFile),
        ("unevictable", Stat::NrUnevictable),
        ("kernel", Stat::MemcgKmem),
        ("pagetables", Stat::NrPageTablePages),
    ] {
        assert_eq!(get(&lines, name), bytes(s), "memory.stat {name}");
    }
    for s in [
        Stat::WorkingsetRefaultAnon,
        Stat::WorkingsetRefaultFile,
        Stat::WorkingsetActivateAnon,
        Stat::WorkingsetActivateFile,
        Stat::WorkingsetRestoreAnon,
        Stat::WorkingsetRestoreFile,
        Stat::PgscanKswapd,
        Stat::PgscanDirect,
        Stat::PgstealKswapd,
        Stat::PgstealDirect,
        Stat::Pgfault,
        Stat::Pgmajfault,
        Stat::Pgrefill,
        Stat::Pgactivate,
        Stat::Pgdeactivate,
        Stat::PgscanProactive,
        Stat::PgstealProactive,
        Stat::Pswpin,
        Stat::Pswpout,
        Stat::PgdemoteKswapd,
        Stat::PgdemoteDirect,
        Stat::PgdemoteProactive,
        Stat::PgpromoteSuccess,
        Stat::NumaPagesMigrated,
        Stat::NumaPteUpdates,
        Stat::NumaHintFaults,
    ] {
        assert_eq!(get(&lines, s.name()), c.get(s), "memory.stat {} is a count", s.name());
    }
    assert_eq!(
        get(&lines, "pgscan"),
        c.get(Stat::PgscanKswapd) + c.get(Stat::PgscanDirect) + c.get(Stat::PgscanProactive)
    );
    assert_eq!(
        get(&lines, "pgsteal"),
        c.get(Stat::PgstealKswapd) + c.get(Stat::PgstealDirect) + c.get(Stat::PgstealProactive)
    );
}

#[test]
fn memory_events_prints_each_event_under_its_name() {
    let ev = lrugen::mm::vmstat::MemcgEvents {
        low: 1,
        high: 2,
        max: 3,
        oom: 4,
        oom_kill: 5,
        oom_group_kill: 6,
    };
    let text = ev.format();
    check_memory_events_text("synthetic memory.events", &text);
    let values: Vec<i64> = parse("memory.events", &text).into_iter().map(|l| l.1).collect();
    assert_eq!(values, [1, 2, 3, 4, 5, 6]);
}

#[test]
fn order_check_catches_a_swap() {
    // The order check itself must be able to fail.
    let kernel = ["pgsteal_kswapd", "pgscan_kswapd"].map(String::from);
    assert_kernel_order("test", &kernel, KERNEL_VMSTAT_ORDER);
    let swapped = ["pgscan_kswapd", "pgsteal_kswapd"].map(String::from);
    let r = std::panic::catch_unwind(|| assert_kernel_order("test", &swapped, KERNEL_VMSTAT_ORDER));
    assert!(r.is_err());
    let unknown = ["pgscan_total"].map(String::from);
    let r = std::panic::catch_unwind(|| assert_kernel_order("test", &unknown, KERNEL_VMSTAT_ORDER));
    assert!(r.is_err());
}

// SPDX-License-Identifier: GPL-2.0-only
//! Each kernel behaviour switch, flipped alone, moves the counters of a small run the way the
//! kernel change it models says it should (`switches.rs` only checks that each one changes
//! something). A test names the change, the expected direction, and the presets it starts from;
//! where a switch's effect cannot show in counters the comment says so. The `fg_*` switches are
//! MGLRU-FG's and are tested in `mglru_fg.rs`. The variants of `variants.md` §2 that are switches
//! (`readahead_placement`, `refault_distance`) have their tests here, and so do the switches the
//! classic LRU reads (the same `Profile`: `vma_has_recency`, `pageout_ignore_references`,
//! `node_reclaim_stats`).

mod common;
use lrugen::kernel::{Access, Kernel};
use lrugen::mm::memcg::{MemcgId, ROOT_MEMCG};
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vm::{pte, vmf, Madv, MMAP_BASE_VPN};
use lrugen::mm::vmstat::{Counters, Stat};
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::{Mglru, MglruConfig, Profile, Switches};
use lrugen::workload::{Op, ANON_FILE};
use std::collections::BTreeMap;

const B: u32 = MMAP_BASE_VPN;

struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n
    }
}

type K = Kernel<Mglru>;
type Metrics = BTreeMap<String, i64>;

/// (The `lru_add` batch is off — `lru_cache_disable` — so each step is visible at once; the
/// `folio_batch_size_31` test turns it back on.)
fn kernel(profile: Profile, pages: u64, swap: u64, limit: Option<u64>) -> (K, MemcgId, u32) {
    let (mut k, t, task) = common::mglru_setup(profile, pages, swap, limit);
    k.m.debug_checks = true;
    k.m.lru_cache_disabled = true;
    (k, t, task)
}

#[derive(Default)]
struct Counts {
    majors: BTreeMap<&'static str, i64>,
}

fn go(k: &mut K, c: &mut Counts, tag: &'static str, op: Op) {
    if let Ok(Access::Major) = k.step(op) {
        *c.majors.entry(tag).or_default() += 1;
    }
}

fn metrics(k: &K, t: MemcgId, c: &Counts) -> Metrics {
    let mut out = Metrics::new();
    let v = k.m.vmstat();
    let ms = k.m.memcg_stat(t);
    for &s in Stat::ALL {
        if v.get(s) != 0 {
            out.insert(s.name().to_string(), v.get(s));
        }
        if ms.get(s) != 0 {
            out.insert(format!("memcg.{}", s.name()), ms.get(s));
        }
    }
    for (tag, n) in &c.majors {
        out.insert(format!("major.{tag}"), *n);
    }
    let w = k.m.work.iter().map(|w| w.folios_scanned).sum::<u64>();
    out.insert("work.folios_scanned".into(), w as i64);
    let lg = k.p.lrugen(t, 0);
    out.insert("max_seq".into(), lg.max_seq as i64);
    out.insert("min_seq.anon".into(), lg.min_seq[0] as i64);
    out.insert("min_seq.file".into(), lg.min_seq[1] as i64);
    out
}

fn mmap<P: lrugen::reclaim::Policy>(k: &mut Kernel<P>, task: u32, vpn: u32, pages: u32, file: u32) {
    k.step(Op::Mmap {
        task,
        vpn,
        pages,
        file,
        pgoff: 0,
        flags: vmf::WRITE as u8,
        compressed_pct: 0,
    })
    .unwrap();
}

/// File tiers, a cold stream, anon with swap, a MADV_RANDOM mapping, dirty writes.
fn mixed(profile: Profile, limit: Option<u64>) -> Metrics {
    let (mut k, t, task) = kernel(profile, 1536, 4096, limit);
    // one page per swap-in (`vm.page-cluster=0`), as when these effects were measured
    k.m.cfg.page_cluster = 0;
    let mut c = Counts::default();
    let hot = k.m.create_file("hot", 256, Advice::Normal);
    let cold = k.m.create_file("cold", 4096, Advice::Normal);
    let mapped = k.m.create_file("mapped", 256, Advice::Normal);
    let dirty = k.m.create_file("dirty", 512, Advice::Normal);
    let anon = B;
    let fmap = B + 4096;
    mmap(&mut k, task, anon, 1024, ANON_FILE);
    mmap(&mut k, task, fmap, 256, mapped);
    k.step(Op::Madvise {
        task,
        vpn: fmap,
        pages: 128,
        advice: Madv::Random,
    })
    .unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..6u64 {
        for i in 0..256 {
            for _ in 0..=(i % 4) {
                go(
                    &mut k,
                    &mut c,
                    "hot",
                    Op::Read {
                        task,
                        file: hot,
                        index: i,
                    },
                );
            }
        }
        for _ in 0..700 {
            let index = rng.next(4096);
            go(
                &mut k,
                &mut c,
                "cold",
                Op::Read {
                    task,
                    file: cold,
                    index,
                },
            );
        }
        for i in 0..1024u32 {
            if rng.next(3) != 0 || round == 0 {
                go(&mut k, &mut c, "anon", Op::Store { task, vpn: anon + i });
            }
        }
        for i in 0..256u32 {
            go(
                &mut k,
                &mut c,
                if i < 128 { "random" } else { "mapped" },
                Op::Load { task, vpn: fmap + i },
            );
        }
        for i in 0..128u64 {
            go(
                &mut k,
                &mut c,
                "dirty",
                Op::Write {
                    task,
                    file: dirty,
                    index: round * 64 + i,
                },
            );
        }
    }
    metrics(&k, t, &c)
}

/// A MADV_RANDOM mapping loaded in a loop beside a cold stream read through the page cache.
fn random_mapping(profile: Profile, advice: Madv) -> Metrics {
    let (mut k, t, task) = kernel(profile, 2048, 0, Some(512));
    let mut c = Counts::default();
    let mapped = k.m.create_file("mapped", 256, Advice::Normal);
    let cold = k.m.create_file("cold", 8192, Advice::Normal);
    mmap(&mut k, task, B, 256, mapped);
    k.step(Op::Madvise {
        task,
        vpn: B,
        pages: 256,
        advice,
    })
    .unwrap();
    let mut rng = Rng(7);
    for _ in 0..10 {
        for i in 0..256u32 {
            go(&mut k, &mut c, "mapped", Op::Load { task, vpn: B + i });
        }
        for _ in 0..400 {
            let index = rng.next(8192);
            go(
                &mut k,
                &mut c,
                "cold",
                Op::Read {
                    task,
                    file: cold,
                    index,
                },
            );
        }
    }
    metrics(&k, t, &c)
}

/// Pread of a Zipf-like hot set under a memcg limit (tiers, refaults).
fn pread(profile: Profile) -> Metrics {
    let (mut k, t, task) = kernel(profile, 2048, 1024, Some(512));
    let mut c = Counts::default();
    let f = k.m.create_file("data", 1280, Advice::Normal);
    let anon = B;
    mmap(&mut k, task, anon, 128, ANON_FILE);
    for i in 0..128u32 {
        go(&mut k, &mut c, "anon", Op::Store { task, vpn: anon + i });
    }
    let mut rng = Rng(11);
    for _ in 0..6000 {
        // three in four reads hit the first 256 pages
        let index = if rng.next(4) != 0 {
            rng.next(256)
        } else {
            rng.next(1280)
        };
        go(&mut k, &mut c, "file", Op::Read { task, file: f, index });
    }
    metrics(&k, t, &c)
}

/// Dirty file writes under a memcg limit, with reads that make reclaim meet them.
fn dirty(profile: Profile) -> Metrics {
    let (mut k, t, task) = kernel(profile, 2048, 0, Some(384));
    let mut c = Counts::default();
    let w = k.m.create_file("w", 2048, Advice::Normal);
    let r = k.m.create_file("r", 2048, Advice::Normal);
    for i in 0..1500u64 {
        go(
            &mut k,
            &mut c,
            "w",
            Op::Write {
                task,
                file: w,
                index: i,
            },
        );
        go(
            &mut k,
            &mut c,
            "r",
            Op::Read {
                task,
                file: r,
                index: i,
            },
        );
    }
    metrics(&k, t, &c)
}

/// Anon under a memcg limit with swap, a mapped file beside it (faults, tiers, swap refaults).
fn anon(profile: Profile) -> Metrics {
    let (mut k, t, task) = kernel(profile, 2048, 4096, Some(512));
    let mut c = Counts::default();
    let mf = k.m.create_file("m", 256, Advice::Normal);
    mmap(&mut k, task, B, 640, ANON_FILE);
    mmap(&mut k, task, B + 4096, 256, mf);
    let mut rng = Rng(3);
    for i in 0..640u32 {
        go(&mut k, &mut c, "anon", Op::Store { task, vpn: B + i });
    }
    for _ in 0..6000 {
        let i = if rng.next(2) == 0 { rng.next(160) } else { rng.next(640) } as u32;
        go(&mut k, &mut c, "anon", Op::Load { task, vpn: B + i });
        if rng.next(3) == 0 {
            let j = rng.next(256) as u32;
            go(
                &mut k,
                &mut c,
                "mapped",
                Op::Load {
                    task,
                    vpn: B + 4096 + j,
                },
            );
        }
    }
    metrics(&k, t, &c)
}

/// A named scenario.
type Scenario = (&'static str, fn(Profile) -> Metrics);

fn scenarios() -> Vec<Scenario> {
    vec![
        ("mixed-global", |p| mixed(p, None)),
        ("mixed-memcg", |p| mixed(p, Some(1024))),
        ("random", |p| random_mapping(p, Madv::Random)),
        ("pread", pread),
        ("dirty", dirty),
        ("anon", anon),
    ]
}

// -------------------------------------------------------------------------------------------------
// Helpers for the direction tests
// -------------------------------------------------------------------------------------------------

/// `base` with switch `name` set to `on`.
fn with(base: Profile, name: &str, on: bool) -> Profile {
    let mut p = base;
    p.set_switch(name, on).unwrap();
    p
}

/// The metrics of `run` under `base` with `name` off and on: (off, on).
fn off_on(base: Profile, name: &str, run: impl Fn(Profile) -> Metrics) -> (Metrics, Metrics) {
    (run(with(base, name, false)), run(with(base, name, true)))
}

fn get(m: &Metrics, key: &str) -> i64 {
    m.get(key).copied().unwrap_or(0)
}

/// The kernel presets a switch is tested from.
const KERNELS: [Profile; 4] = [Profile::V6_1, Profile::V6_12, Profile::V6_17, Profile::V7_2];

/// The debugfs id of memcg `t` (16-bit memcg id before 7.x, the cgroup id after), read back from
/// `lru_gen` as a user would.
fn debugfs_id(k: &K) -> u64 {
    let text = k.p.debugfs_read(&k.m, false);
    let line = text
        .lines()
        .find(|l| l.starts_with("memcg") && l.trim_end().ends_with("/t"))
        .unwrap_or_else(|| panic!("no /t in\n{text}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Age the lruvec of `t` once through debugfs (`+ id 0 max_seq swappiness force_scan`).
fn age(k: &mut K, t: MemcgId, swappiness: &str, force_scan: bool) {
    let id = debugfs_id(k);
    let max_seq = k.p.lrugen(t, 0).max_seq;
    let cmd = format!("+ {id} 0 {max_seq} {swappiness} {}", force_scan as u8);
    k.p.debugfs_write(&mut k.m, &cmd)
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
}

// -------------------------------------------------------------------------------------------------
// 6.3: vma_has_recency, memcg_lru, eviction_path_aging
// -------------------------------------------------------------------------------------------------

/// "mm: add vma_has_recency()": young PTEs of an `MADV_RANDOM` mapping stop counting, so a hot
/// set mapped that way is no longer protected from a cold stream: more major faults of it. A
/// `MADV_NORMAL` mapping is untouched by the change.
#[test]
fn vma_has_recency_stops_protecting_random_mappings() {
    for base in KERNELS {
        let (off, on) = off_on(base, "vma_has_recency", |p| random_mapping(p, Madv::Random));
        let (a, b) = (get(&off, "major.mapped"), get(&on, "major.mapped"));
        assert!(
            b > 2 * a,
            "{}: MADV_RANDOM hot set majors off {a}, on {b}",
            base.label()
        );
        let (off, on) = off_on(base, "vma_has_recency", |p| random_mapping(p, Madv::Normal));
        assert_eq!(
            get(&off, "major.mapped"),
            get(&on, "major.mapped"),
            "{}: MADV_NORMAL must not change",
            base.label()
        );
    }
}

/// "per-node lru_gen_folio lists" and the eviction-path aging (with "try to stop at high
/// watermarks"): root reclaim goes through `lru_gen_shrink_node`, whose `should_abort_scan` lets
/// kswapd stop once the zones are above the high watermark, so each kswapd run reclaims less
/// (more, shorter runs). From 6.1 neither switch shows alone: 6.1's kswapd ages only on the
/// second pass of a priority loop (`memcgs_need_aging`), which these small runs never reach, and
/// 6.1 root reclaim needs both switches for the new loop. The memcg LRU's other effect, the order
/// in which many memcgs are aged and reclaimed, is `memcg_lru.rs`'s.
#[test]
fn root_reclaim_through_lru_gen_shrink_node_stops_kswapd_sooner() {
    for name in ["memcg_lru", "eviction_path_aging"] {
        for base in [Profile::V6_17, Profile::V7_2] {
            let (off, on) = off_on(base, name, |p| mixed(p, None));
            let per_run = |m: &Metrics| get(m, "pgsteal_kswapd") as f64 / get(m, "pageoutrun").max(1) as f64;
            assert!(
                per_run(&on) < 0.8 * per_run(&off),
                "{name} from {}: pgsteal_kswapd per pageoutrun off {:.1}, on {:.1}",
                base.label(),
                per_run(&off),
                per_run(&on)
            );
        }
    }
}

/// "mm: vmscan: restore incremental cgroup iteration" (6.11): a direct reclaim pass over four
/// memcgs, each able to meet the goal alone at this priority, stops at the first that does and
/// the next pass goes on after it, so a pass reclaims from fewer memcgs; 6.1 reclaims from
/// every memcg in every pass. The order itself is `memcg_lru.rs`'s,
/// `classic_direct_reclaim_walks_the_memcgs_in_turn`.
#[test]
fn incremental_cgroup_iteration_reclaims_fewer_memcgs_per_pass() {
    use lrugen::reclaim::vmscan::shrink_node;
    use lrugen::reclaim::{Reclaimer, ScanControl};
    for base in [Profile::V6_12, Profile::V7_2] {
        let mut hits = Vec::new();
        for on in [false, true] {
            let mut cfg = MachineConfig::simple(4096, 0);
            cfg.ra_pages = 0;
            let m = Machine::new(cfg);
            let p = Classic::with_profile(&m, with(base, "incremental_cgroup_iteration", on));
            let mut k = Kernel::new(m, p);
            let gs: Vec<(MemcgId, u32, u32)> = (0..4)
                .map(|i| {
                    let memcg = k.create_memcg(ROOT_MEMCG, &format!("g{i}"));
                    let task = k.create_mm(memcg);
                    (memcg, task, k.m.create_file(&format!("f{i}"), 512, Advice::Normal))
                })
                .collect();
            for &(_, task, f) in &gs {
                for i in 0..512 {
                    k.read_page(task, f, i).unwrap();
                }
            }
            k.lru_add_drain();
            let mut n = 0;
            for _ in 0..8 {
                let before: Vec<i64> = gs
                    .iter()
                    .map(|g| k.m.memcg_stat(g.0).get(Stat::PgstealDirect))
                    .collect();
                let mut sc = ScanControl::new(32, Reclaimer::Direct, None, 0);
                sc.priority = 4;
                shrink_node(&mut k.m, &mut k.p, 0, &mut sc);
                n += gs
                    .iter()
                    .zip(&before)
                    .filter(|(g, &b)| k.m.memcg_stat(g.0).get(Stat::PgstealDirect) > b)
                    .count();
            }
            hits.push(n);
        }
        assert!(
            hits[1] * 2 <= hits[0],
            "{}: memcgs reclaimed over 8 passes off {}, on {}",
            base.label(),
            hits[0],
            hits[1]
        );
    }
}

// -------------------------------------------------------------------------------------------------
// 6.9: pageout_ignore_references
// -------------------------------------------------------------------------------------------------

/// "mm: madvise: pageout: ignore references rather than clearing young": `MADV_PAGEOUT` leaves
/// the accessed bits of the PTEs (6.1 cleared them). MGLRU frees what `MADV_PAGEOUT` isolates
/// either way (it is unmapped first), so the switch shows only where reclaim fails with the folio
/// still mapped (anon without swap): the young bits survive only with the switch on.
#[test]
fn pageout_ignore_references_leaves_young_bits() {
    for base in KERNELS {
        for on in [false, true] {
            let (mut k, _t, task) = kernel(with(base, "pageout_ignore_references", on), 256, 0, None);
            mmap(&mut k, task, B, 8, ANON_FILE);
            for i in 0..8 {
                k.step(Op::Store { task, vpn: B + i }).unwrap();
            }
            k.step(Op::Madvise {
                task,
                vpn: B,
                pages: 8,
                advice: Madv::PageOut,
            })
            .unwrap();
            k.check().unwrap();
            let young = (0..8).filter(|&i| k.m.pte(task, B + i) & pte::YOUNG != 0).count();
            assert_eq!(young, if on { 8 } else { 0 }, "{} on = {on}", base.label());
        }
    }
}

// -------------------------------------------------------------------------------------------------
// 6.12.y: dirty_throttling_counts; ≤6.12: workingset_activate_at_refault
// -------------------------------------------------------------------------------------------------

/// "mm: vmscan: fix dirty folios throttling on cgroup v1 for MGLRU": `sort_folio` counts the
/// dirty file folios it moves into `nr_unqueued_dirty`/`nr_file_taken`, so reclaim that meets
/// only dirty folios wakes the flushers: more pages written back, fewer left dirty. Tested from
/// 6.17, where `sort_folio` still has its dirty branch. From 6.12.117 and 7.2 it changes
/// nothing here: the backported reactivation isolates dirty folios, so 6.12 wakes the flushers
/// after the loop from `shrink_folio_list`'s counts either way, and 7.2 replaced the mechanism by
/// a per-batch `handle_reclaim_writeback` (unqueued dirty == pages isolated; the series removed
/// `sc->file_taken` and `sc->unqueued_dirty`). (A run of only dirty writes does not show it: the
/// flusher keeps a memcg under its background threshold, so reclaim rarely meets a dirty folio.)
#[test]
fn dirty_throttling_counts_wakes_the_flushers() {
    let (off, on) = off_on(Profile::V6_17, "dirty_throttling_counts", |p| mixed(p, Some(1024)));
    let (a, b) = (get(&off, "nr_written"), get(&on, "nr_written"));
    assert!(b > a, "nr_written off {a}, on {b}");
    let (a, b) = (get(&off, "nr_dirty"), get(&on, "nr_dirty"));
    assert!(b < a, "nr_dirty off {a}, on {b}");
    for base in [Profile::V6_12, Profile::V7_2] {
        let (off, on) = off_on(base, "dirty_throttling_counts", |p| mixed(p, Some(1024)));
        assert_eq!(off, on, "{}", base.label());
    }
}

/// `workingset_activate_at_refault` (≤6.12): `workingset_refault` counts every refault on the
/// same lruvec, not only the recent ones, so it can only grow; here it does.
#[test]
fn workingset_activate_at_refault_counts_every_refault() {
    for base in [Profile::V6_1, Profile::V6_12] {
        for (name, run) in [("pread", pread as fn(Profile) -> Metrics), ("anon", anon)] {
            let (off, on) = off_on(base, "workingset_activate_at_refault", run);
            for key in ["workingset_refault_file", "workingset_refault_anon"] {
                assert!(get(&on, key) >= get(&off, key), "{} {name} {key}", base.label());
            }
            let sum = |m: &Metrics| get(m, "workingset_refault_file") + get(m, "workingset_refault_anon");
            assert!(
                sum(&on) > sum(&off),
                "{} {name}: refaults off {}, on {}",
                base.label(),
                sum(&off),
                sum(&on)
            );
        }
    }
}

// -------------------------------------------------------------------------------------------------
// 6.14: the rework (aging feedback, type selection, refault detection, workingset protection)
// -------------------------------------------------------------------------------------------------

/// "mm/mglru: rework aging feedback": anon and file `min_seq` move independently, so anon can
/// get ahead of file (off: `min_seq[anon]` ≤ `min_seq[file]` always).
#[test]
fn aging_feedback_rework_lets_anon_min_seq_pass_file() {
    for base in [Profile::V6_17, Profile::V7_2] {
        let (off, on) = off_on(base, "aging_feedback_rework", |p| mixed(p, None));
        assert!(
            get(&on, "min_seq.anon") > get(&on, "min_seq.file"),
            "{}: {on:?}",
            base.label()
        );
        for (sname, s) in scenarios() {
            let off = if sname == "mixed-global" {
                off.clone()
            } else {
                s(with(base, "aging_feedback_rework", false))
            };
            assert!(
                get(&off, "min_seq.anon") <= get(&off, "min_seq.file"),
                "{} {sname}: anon min_seq passed file with the switch off",
                base.label()
            );
        }
    }
}

/// "mm/mglru: rework type selection": the type to evict compares the refault rates summed over
/// all tiers instead of tier 0 alone. Anon refaulting little in tier 0 but much in tier 2, file
/// in between: 6.1 evicts anon (its tier 0 looks cold), the rework evicts file.
#[test]
fn type_selection_rework_counts_every_tier() {
    use lrugen::reclaim::mglru::pid::select_type;
    use lrugen::reclaim::mglru::LruGen;
    let mut lg = LruGen::new(0);
    let (anon, file) = (0, 1);
    lg.evicted[0][anon][0] = 1000;
    lg.refaulted[0][anon][0] = 100;
    lg.evicted[0][anon][2] = 100;
    lg.refaulted[0][anon][2] = 400;
    lg.evicted[0][file][0] = 1000;
    lg.refaulted[0][file][0] = 200;
    for base in KERNELS {
        let (off, on) = (
            with(base, "type_selection_rework", false),
            with(base, "type_selection_rework", true),
        );
        assert_eq!(select_type(&lg, &off.switches, 1, 100).0, anon, "{}", base.label());
        assert_eq!(select_type(&lg, &on.switches, 1, 100).0, file, "{}", base.label());
    }
}

/// "mm/mglru: rework refault detection": a refault is recent while its generation is within
/// `MAX_NR_GENS` of `max_seq` (6.1: only while the token's `min_seq` is still current), so more
/// refaults are recognised; with 6.1's accounting (only recent refaults count) the count grows.
/// And `workingset_activate` is counted only in a fault: a run of buffered reads activates none.
#[test]
fn refault_detection_rework_recognises_more_and_activates_only_in_faults() {
    let (off, on) = off_on(Profile::V6_1, "refault_detection_rework", pread);
    let (a, b) = (
        get(&off, "workingset_refault_file"),
        get(&on, "workingset_refault_file"),
    );
    assert!(b > a, "6.1: refaults off {a}, on {b}");
    for base in [Profile::V6_17, Profile::V7_2] {
        let (off, on) = off_on(base, "refault_detection_rework", pread);
        assert!(get(&off, "workingset_activate_file") > 0, "{}: {off:?}", base.label());
        assert_eq!(get(&on, "workingset_activate_file"), 0, "{}", base.label());
    }
}

/// "mm/mglru: rework workingset protection", `lru_gen_clear_refs`: `MADV_COLD` of a folio that is
/// already in the oldest generation forgets its references without moving it, so nothing is
/// counted as deactivated (before: every folio is re-added and counted `pgdeactivate`).
#[test]
fn workingset_protection_rework_does_not_deactivate_the_oldest() {
    for base in KERNELS {
        let mut counted = [0; 2];
        for on in [false, true] {
            let (mut k, t, task) = kernel(with(base, "workingset_protection_rework", on), 1024, 0, None);
            let f = k.m.create_file("f", 64, Advice::Normal);
            for i in 0..64 {
                k.step(Op::Read {
                    task,
                    file: f,
                    index: i,
                })
                .unwrap();
            }
            // mapped afterwards: the fault finds the folios cached and leaves them where they are
            mmap(&mut k, task, B, 64, f);
            for i in 0..64 {
                k.step(Op::Load { task, vpn: B + i }).unwrap();
            }
            let lg = k.p.lrugen(t, 0);
            assert_eq!(lg.min_seq[1] + 3, lg.max_seq, "{}: four generations", base.label());
            let before = k.m.vmstat().get(Stat::Pgdeactivate);
            k.step(Op::Madvise {
                task,
                vpn: B,
                pages: 64,
                advice: Madv::Cold,
            })
            .unwrap();
            k.check().unwrap();
            counted[on as usize] = k.m.vmstat().get(Stat::Pgdeactivate) - before;
        }
        assert!(
            counted[1] < counted[0],
            "{}: pgdeactivate off {}, on {}",
            base.label(),
            counted[0],
            counted[1]
        );
    }
}

// -------------------------------------------------------------------------------------------------
// ≈6.14–6.17: walk_swappiness, swappiness_max, scan_batch_bounded; ≤6.12: mm_stats_tyfa
// -------------------------------------------------------------------------------------------------

/// Anon stores and a file mapping loaded, both young, no pressure.
fn young_anon_and_file(profile: Profile) -> (K, MemcgId, u32) {
    let (mut k, t, task) = kernel(profile, 2048, 2048, None);
    let f = k.m.create_file("f", 128, Advice::Normal);
    mmap(&mut k, task, B, 128, ANON_FILE);
    mmap(&mut k, task, B + 4096, 128, f);
    for i in 0..128 {
        k.step(Op::Store { task, vpn: B + i }).unwrap();
        k.step(Op::Load {
            task,
            vpn: B + 4096 + i,
        })
        .unwrap();
    }
    (k, t, task)
}

/// `forced_walk_keeps_nonleaf_young` (6.12.118's `walk_pmd_range`; 6.1.192 tests the bit in every
/// walk): a forced walk neither tests nor clears the non-leaf PMD accessed bits, so every PTE table
/// the task used before it stays marked for the next walk; off, the forced walk clears them and
/// the next walk visits only the tables used since. The walk's work, not what it promotes.
#[test]
fn forced_walk_keeps_nonleaf_young_leaves_the_tables_marked() {
    use lrugen::mm::vm::{MmStruct, PMD_YOUNG};
    for base in KERNELS {
        let mut marked = [0usize; 2];
        for on in [false, true] {
            let (mut k, t, task) = kernel(with(base, "forced_walk_keeps_nonleaf_young", on), 8192, 8192, None);
            mmap(&mut k, task, B, 2048, ANON_FILE);
            for i in 0..2048 {
                k.step(Op::Store { task, vpn: B + i }).unwrap();
            }
            age(&mut k, t, "100", true);
            k.check().unwrap();
            let tables = MmStruct::pmd_index(B)..=MmStruct::pmd_index(B + 2047);
            assert_eq!(tables.clone().count(), 4);
            marked[on as usize] = tables
                .filter(|&pi| k.m.mms[task as usize].pmds[pi] & PMD_YOUNG != 0)
                .count();
        }
        assert_eq!(
            marked,
            [0, 4],
            "{}: tables still marked after a forced walk (off, on)",
            base.label()
        );
    }
}

/// `walk_swappiness`: the page-table walk carries the swappiness, and 201 (anon only) skips file
/// VMAs, so an anon-only aging leaves the file PTEs young (off: `can_swap`, every VMA walked).
#[test]
fn walk_swappiness_max_skips_file_vmas() {
    for base in [Profile::V6_17, Profile::V7_2] {
        let mut young = [0; 2];
        for on in [false, true] {
            let (mut k, t, task) = young_anon_and_file(with(base, "walk_swappiness", on));
            age(&mut k, t, "max", true);
            k.check().unwrap();
            young[on as usize] = (0..128)
                .filter(|&i| k.m.pte(task, B + 4096 + i) & pte::YOUNG != 0)
                .count();
            let anon_young = (0..128).filter(|&i| k.m.pte(task, B + i) & pte::YOUNG != 0).count();
            assert_eq!(anon_young, 0, "{} on = {on}: the anon VMA is walked", base.label());
        }
        assert_eq!(
            young,
            [0, 128],
            "{}: young file PTEs after aging (off, on)",
            base.label()
        );
    }
}

/// "mm: add swappiness=max arg to memory.reclaim for only anon reclaim": swappiness 201 (`max`)
/// evicts anon only; without the change `max` is not a swappiness (`EINVAL`). Anon-only relies
/// on 6.14's type selection (swappiness ≥ 200 → anon); 6.1's selects anon only at exactly 200,
/// so 6.12 with this switch on (a kernel that never existed) is not asserted beyond parsing.
#[test]
fn swappiness_max_reclaims_anon_only() {
    for base in [Profile::V6_12, Profile::V6_17, Profile::V7_2] {
        for on in [false, true] {
            if on && !base.switches.type_selection_rework {
                continue;
            }
            let (mut k, t, _task) = young_anon_and_file(with(base, "swappiness_max", on));
            for _ in 0..3 {
                age(&mut k, t, "100", true);
            }
            let id = debugfs_id(&k);
            let lg = k.p.lrugen(t, 0);
            let seq = lg.max_seq - 2;
            let before = k.m.vmstat();
            let r = k.p.debugfs_write(&mut k.m, &format!("- {id} 0 {seq} max 1024"));
            let d = k.m.vmstat().delta(&before);
            if on {
                r.unwrap();
                assert!(d.get(Stat::PgstealAnon) > 0, "{}: {d:?}", base.label());
                assert_eq!(d.get(Stat::PgstealFile), 0, "{}", base.label());
            } else {
                assert!(r.is_err(), "{}: max accepted without the switch", base.label());
            }
        }
    }
}

/// A memcg of `pages` clean file pages in the oldest generation, every other one read six times
/// (saturated refs: `sort_folio` moves it up instead of isolating it), then one memcg reclaim of
/// `nr` pages. Metrics: what it reclaimed and what it looked at.
fn reclaim_call(profile: Profile, pages: u64, nr: u64) -> Metrics {
    let (mut k, t, task) = kernel(profile, pages + 2048, 0, None);
    let f = k.m.create_file("f", pages, Advice::Normal);
    for i in 0..pages {
        let times = if i % 2 == 0 { 6 } else { 1 };
        for _ in 0..times {
            k.step(Op::Read {
                task,
                file: f,
                index: i,
            })
            .unwrap();
        }
    }
    let before_work = k.m.work.iter().map(|w| w.folios_scanned).sum::<u64>();
    let reclaimed = lrugen::reclaim::vmscan::try_to_free_mem_cgroup_pages(&mut k.m, &mut k.p, t, nr, true);
    k.check().unwrap();
    let mut m = metrics(&k, t, &Counts::default());
    m.insert("reclaimed".into(), reclaimed as i64);
    let work = k.m.work.iter().map(|w| w.folios_scanned).sum::<u64>() - before_work;
    m.insert("work.folios_scanned".into(), work as i64);
    m
}

/// `scan_batch_bounded` (6.17): `scan_folios` examines at most the lruvec's budget for this
/// priority (`nr_to_scan`), not `MAX_LRU_BATCH` whatever the budget: a small memcg reclaim of a
/// large lruvec looks at fewer folios and reclaims less past its target.
#[test]
fn scan_batch_bounded_examines_at_most_the_budget() {
    for base in [Profile::V6_12, Profile::V6_17] {
        let (off, on) = off_on(base, "scan_batch_bounded", |p| reclaim_call(p, 8192, 32));
        let (a, b) = (get(&off, "work.folios_scanned"), get(&on, "work.folios_scanned"));
        assert!(b < a, "{}: folios examined off {a}, on {b}", base.label());
        assert!(
            get(&on, "reclaimed") <= get(&off, "reclaimed"),
            "{}: {off:?} {on:?}",
            base.label()
        );
        assert!(get(&on, "reclaimed") >= 32, "{}", base.label());
    }
}

/// `mm_stats_tyfa`: `lru_gen_full` shows four mm-walk statistics `TYFA` instead of 6.1's six
/// `LOYNFA` (output, not counters).
#[test]
fn mm_stats_tyfa_prints_four_walk_statistics() {
    for base in KERNELS {
        for on in [false, true] {
            let (mut k, t, _task) = young_anon_and_file(with(base, "mm_stats_tyfa", on));
            age(&mut k, t, "100", true);
            let full = k.p.debugfs_read(&k.m, true);
            // the mm-stats line: only counts, each followed by its letter
            let letters: Vec<String> = full
                .lines()
                .filter(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    w.len() >= 4
                        && w.iter().all(|x| {
                            x.len() > 1
                                && x.ends_with(|c: char| c.is_ascii_uppercase())
                                && x[..x.len() - 1].parse::<u64>().is_ok()
                        })
                })
                .map(|l| l.split_whitespace().map(|x| x.chars().last().unwrap()).collect())
                .collect();
            let want = if on { "TYFA" } else { "LOYNFA" };
            assert!(
                letters.iter().any(|l| l == want),
                "{} on = {on}: {letters:?}\n{full}",
                base.label()
            );
        }
    }
}

/// `lru_gen_memcg_id_u64`: 7.x prints the memcg header of `lru_gen` as `memcg %llu %s`
/// (unpadded) and reads a command's memcg id as a 64-bit number; before, `memcg %5hu %s` and an
/// `int` (so an id plus 2^32 names the same memcg). Output and parsing only.
#[test]
fn lru_gen_memcg_id_u64_prints_and_reads_a_64_bit_id() {
    for base in KERNELS {
        for on in [false, true] {
            let (mut k, t, _task) = young_anon_and_file(with(base, "lru_gen_memcg_id_u64", on));
            let id = debugfs_id(&k);
            let text = k.p.debugfs_read(&k.m, false);
            let header = text
                .lines()
                .find(|l| l.starts_with("memcg") && l.ends_with(" /t"))
                .unwrap_or_else(|| panic!("{text}"))
                .to_string();
            let want = if on {
                format!("memcg {id} /t")
            } else {
                format!("memcg {id:>5} /t")
            };
            assert_eq!(header, want, "{} on = {on}", base.label());
            let max_seq = k.p.lrugen(t, 0).max_seq;
            let wide = format!("+ {} 0 {max_seq} 1 1", id + (1 << 32));
            let r = k.p.debugfs_write(&mut k.m, &wide);
            assert_eq!(r.is_ok(), !on, "{} on = {on}: {wide}: {r:?}", base.label());
        }
    }
}

// -------------------------------------------------------------------------------------------------
// 7.2: dirty/writeback reactivation, fault placement, refs, the reclaim loop, node stats
// -------------------------------------------------------------------------------------------------

/// "mm/mglru: use the common routine for dirty/writeback reactivation": dirty file folios are
/// isolated and `shrink_folio_list` marks them for immediate reclaim and reactivates them,
/// counting `nr_vmscan_immediate_reclaim` (off: `sort_folio` moves them to `min_seq + 1` and it
/// stays 0).
#[test]
fn dirty_writeback_reactivation_goes_through_shrink_folio_list() {
    for base in KERNELS {
        let (off, on) = off_on(base, "dirty_writeback_reactivation", |p| mixed(p, Some(1024)));
        assert_eq!(get(&off, "nr_vmscan_immediate_reclaim"), 0, "{}", base.label());
        assert!(get(&on, "nr_vmscan_immediate_reclaim") > 0, "{}: {on:?}", base.label());
    }
}

/// Fault in `n` pages of a file mapping (`MADV_NORMAL`, recency) and count how many land in the
/// two youngest (active) generations and in `max_seq − 2`.
fn fault_placement(profile: Profile, n: u32) -> (usize, usize) {
    let (mut k, t, task) = kernel(profile, 1024, 0, None);
    let f = k.m.create_file("f", n as u64, Advice::Normal);
    mmap(&mut k, task, B, n, f);
    for i in 0..n {
        k.step(Op::Load { task, vpn: B + i }).unwrap();
    }
    k.check().unwrap();
    let lg = k.p.lrugen(t, 0);
    let gen_of = |seq: u64| lrugen::reclaim::mglru::gen_from_seq(seq);
    let mut youngest = 0;
    let mut third = 0;
    for i in 0..n {
        let id = k.m.pte(task, B + i) & pte::PFN_MASK;
        let g = k.m.folios[id].gen_counter() as usize - 1;
        youngest += (g == gen_of(lg.max_seq) || g == gen_of(lg.max_seq - 1)) as usize;
        third += (g == gen_of(lg.max_seq - 2)) as usize;
    }
    (youngest, third)
}

/// "mm/mglru: use folio_mark_accessed to replace folio_set_active": a folio faulted in on a VMA
/// with recency no longer gets `PG_active` (unless it is workingset), so it does not land in an
/// active generation (`max_seq`, or `max_seq − 1` from 6.14 on).
#[test]
fn fault_mark_accessed_does_not_place_faulted_folios_youngest() {
    for base in KERNELS {
        let off = fault_placement(with(base, "fault_mark_accessed", false), 64).0;
        let on = fault_placement(with(base, "fault_mark_accessed", true), 64).0;
        assert_eq!(
            (off, on),
            (64, 0),
            "{}: folios in the active generations (off, on)",
            base.label()
        );
    }
}

/// `folio_seq_referenced` (7.2): a non-active folio with `PG_referenced` (here: faulted in under
/// `fault_mark_accessed`) is placed in `max_seq − 2` instead of the oldest generation.
#[test]
fn folio_seq_referenced_places_referenced_folios_a_generation_younger() {
    for base in [Profile::V6_17, Profile::V7_2] {
        let base = with(base, "fault_mark_accessed", true);
        let off = fault_placement(with(base, "folio_seq_referenced", false), 64).1;
        let on = fault_placement(with(base, "folio_seq_referenced", true), 64).1;
        assert_eq!((off, on), (0, 64), "{}: folios in max_seq - 2 (off, on)", base.label());
    }
}

/// `set_refs_three_step` (7.2): through rmap, a folio becomes workingset only at its third young
/// sighting (the second one gives it one more reference and activates it); before, the second
/// sighting set `PG_workingset`.
#[test]
fn set_refs_three_step_needs_a_third_sighting_for_workingset() {
    use lrugen::mm::folio::pg;
    for base in [Profile::V6_17, Profile::V7_2] {
        for on in [false, true] {
            let (k, _t, task) = young_anon_and_file(with(base, "set_refs_three_step", on));
            let id = k.m.pte(task, B + 4096) & pte::PFN_MASK;
            let mut f = k.m.folios[id];
            f.clear(pg::REFERENCED | pg::WORKINGSET | pg::REFS_MASK);
            let sightings: Vec<(bool, bool)> = (0..3)
                .map(|_| {
                    let activate = k.p.set_refs(&mut f);
                    (activate, f.test(pg::WORKINGSET))
                })
                .collect();
            let want = if on {
                vec![(false, false), (true, false), (true, true)]
            } else {
                vec![(false, false), (true, true), (true, true)]
            };
            assert_eq!(
                sightings,
                want,
                "{} on = {on}: (activate, workingset) per sighting",
                base.label()
            );
        }
    }
}

/// "mm/mglru: improve reclaim loop and dirty folio handling" (the single budget) and its early
/// stop of memcg reclaim: a memcg reclaim of `nr` pages from a large lruvec reclaims less past
/// its target (the over-reclaim the series set out to fix).
#[test]
fn the_7_2_reclaim_loop_reclaims_less_past_the_target() {
    for name in ["reclaim_loop_single_budget", "memcg_reclaim_early_stop"] {
        for base in [Profile::V6_17, Profile::V7_2] {
            let (off, on) = off_on(base, name, |p| reclaim_call(p, 16384, 1024));
            let (a, b) = (get(&off, "reclaimed"), get(&on, "reclaimed"));
            assert!(
                b < a && b >= 1024,
                "{name} from {}: reclaimed off {a}, on {b}",
                base.label()
            );
        }
    }
}

/// "mm: move pgscan, pgsteal, pgrefill to node stats": memcg-limit reclaim shows in
/// `/proc/vmstat`'s `pgscan_direct`, `pgsteal_direct` and `pgrefill`, as in `memory.stat`
/// (off: the global events leave cgroup reclaim out).
#[test]
fn node_reclaim_stats_count_memcg_reclaim_globally() {
    for base in KERNELS {
        let (off, on) = off_on(base, "node_reclaim_stats", pread);
        for key in ["pgscan_direct", "pgsteal_direct", "pgrefill"] {
            let memcg = get(&on, &format!("memcg.{key}"));
            assert!(memcg > 0, "{} {key}", base.label());
            assert_eq!(get(&off, key), 0, "{} {key} off", base.label());
            assert_eq!(get(&on, key), memcg, "{} {key} on", base.label());
        }
    }
}

/// `workingset_activate_needs_workingset` (7.2): a recent refault in a fault counts
/// `workingset_activate` only if it also restores `PG_workingset`, so activations never exceed
/// restores (off: every recent refault in a fault counts).
#[test]
fn workingset_activate_needs_workingset_bounds_activations_by_restores() {
    for base in [Profile::V6_17, Profile::V7_2] {
        let (off, on) = off_on(base, "workingset_activate_needs_workingset", anon);
        for ty in ["anon", "file"] {
            let (act, res) = (format!("workingset_activate_{ty}"), format!("workingset_restore_{ty}"));
            assert!(get(&on, &act) <= get(&on, &res), "{} {ty}: {on:?}", base.label());
        }
        let sum = |m: &Metrics| get(m, "workingset_activate_anon") + get(m, "workingset_activate_file");
        assert!(
            sum(&on) < sum(&off),
            "{}: activations off {}, on {}",
            base.label(),
            sum(&off),
            sum(&on)
        );
    }
}

// -------------------------------------------------------------------------------------------------
// Variants (`variants.md` §2), off in every kernel preset
// -------------------------------------------------------------------------------------------------

/// `readahead_placement` (Barry Song, 2026): of the folios one fault reads around, only the one
/// the fault asked for is placed as a faulted folio; the others land older. Off, all 32 share
/// the faulting folio's generation.
#[test]
fn readahead_placement_places_read_around_folios_older() {
    for base in KERNELS {
        let mut same = [0; 2];
        for on in [false, true] {
            let mut cfg = MachineConfig::simple(1024, 0);
            cfg.ra_pages = 32;
            let mut m = Machine::new(cfg);
            m.debug_checks = true;
            m.lru_cache_disabled = true;
            m.lru_cache_disabled = true;
            let profile = with(base, "readahead_placement", on);
            let p = Mglru::new(
                &m,
                MglruConfig {
                    profile,
                    ..MglruConfig::default()
                },
            );
            let mut k = Kernel::new(m, p);
            let t = k.create_memcg(ROOT_MEMCG, "t");
            let task = k.create_mm(t);
            let f = k.m.create_file("f", 64, Advice::Normal);
            mmap(&mut k, task, B, 64, f);
            assert_eq!(k.step(Op::Load { task, vpn: B + 16 }).unwrap(), Access::Major);
            k.check().unwrap();
            let gen = |id: u32| k.m.folios[id].gen_counter();
            let target = gen(k.m.pte(task, B + 16) & pte::PFN_MASK);
            let mut read = 0;
            for i in 0..64 {
                if let lrugen::mm::pagecache::Slot::Folio(id) = k.m.files[f as usize].slot(i) {
                    read += 1;
                    same[on as usize] += (gen(id) == target) as usize;
                }
            }
            assert_eq!(read, 32, "{}: read-around of 32 pages", base.label());
        }
        assert_eq!(
            same,
            [32, 1],
            "{}: folios in the faulting folio's generation (off, on)",
            base.label()
        );
    }
}

/// Readahead pollution (`variants.md` §3 row 8): random faults on a large mapping with
/// read-around (32 pages each, one of them used) beside a hot set read through the page cache.
/// Returns the hot set's misses.
fn readahead_pollution(profile: Profile) -> i64 {
    let mut cfg = MachineConfig::simple(4096, 0);
    cfg.ra_pages = 32;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    m.lru_cache_disabled = true;
    let p = Mglru::new(
        &m,
        MglruConfig {
            profile,
            ..MglruConfig::default()
        },
    );
    let mut k = Kernel::new(m, p);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    k.m.memcgs[t].max = 640;
    let task = k.create_mm(t);
    let hot = k.m.create_file("hot", 320, Advice::Normal);
    let big = k.m.create_file("big", 16384, Advice::Normal);
    mmap(&mut k, task, B, 16384, big);
    let mut rng = Rng(5);
    let mut misses = 0;
    for _ in 0..16 {
        for i in 0..320 {
            if k.step(Op::Read {
                task,
                file: hot,
                index: i,
            })
            .unwrap()
                == Access::Major
            {
                misses += 1;
            }
        }
        for _ in 0..40 {
            let vpn = B + rng.next(16384) as u32;
            k.step(Op::Load { task, vpn }).unwrap();
        }
    }
    k.check().unwrap();
    misses
}

/// `readahead_placement`: with the read-around folios placed old, they are evicted before the
/// hot set they would otherwise push out (the problem the proposal names): fewer hot misses.
#[test]
fn readahead_placement_protects_a_hot_set_from_read_around() {
    for base in KERNELS {
        let off = readahead_pollution(with(base, "readahead_placement", false));
        let on = readahead_pollution(with(base, "readahead_placement", true));
        // a fifth fewer at least (measured: 6.1 24 → 15, 6.12 20 → 15 (24 → 15 before
        // `activate_clears_refs`), 6.17 37 → 5, 7.2 53 → 11)
        assert!(5 * on <= 4 * off, "{}: hot-set misses off {off}, on {on}", base.label());
    }
}

/// `refault_distance` (Kairui Song's RFC): a file page evicted and read again after fewer
/// evictions than the workingset size is activated at refault, so it comes back into an active
/// generation; without the check a buffered refault is placed old.
#[test]
fn refault_distance_activates_short_distance_refaults() {
    for base in KERNELS {
        let mut active = [0; 2];
        for on in [false, true] {
            let (mut k, t, task) = kernel(with(base, "refault_distance", on), 2048, 2048, Some(512));
            // 20 ms a read: the statistics flusher (2 s) keeps the workingset size current
            k.m.cfg.clock.read_io_ns = 20_000_000;
            let a = k.m.create_file("a", 64, Advice::Normal);
            let c = k.m.create_file("c", 512, Advice::Normal);
            mmap(&mut k, task, B, 300, ANON_FILE);
            for i in 0..300 {
                k.step(Op::Store { task, vpn: B + i }).unwrap();
            }
            for i in 0..64 {
                k.step(Op::Read {
                    task,
                    file: a,
                    index: i,
                })
                .unwrap();
            }
            for i in 0..220 {
                k.step(Op::Read {
                    task,
                    file: c,
                    index: i,
                })
                .unwrap();
            }
            let mut refaults = 0;
            for i in 0..64 {
                if k.step(Op::Read {
                    task,
                    file: a,
                    index: i,
                })
                .unwrap()
                    == Access::Major
                {
                    refaults += 1;
                }
            }
            k.check().unwrap();
            assert!(
                refaults > 16,
                "{} on = {on}: only {refaults} pages of a refaulted",
                base.label()
            );
            let lg = k.p.lrugen(t, 0);
            let young = [lg.max_seq, lg.max_seq - 1].map(lrugen::reclaim::mglru::gen_from_seq);
            active[on as usize] = (0..64)
                .filter(|&i| match k.m.files[a as usize].slot(i) {
                    lrugen::mm::pagecache::Slot::Folio(id) => {
                        young.contains(&(k.m.folios[id].gen_counter() as usize - 1))
                    }
                    _ => false,
                })
                .count();
        }
        assert!(
            active[1] > active[0] + 16,
            "{}: pages of a in an active generation (off, on) = {active:?}",
            base.label()
        );
    }
}

// -------------------------------------------------------------------------------------------------
// The classic LRU reads the same profile
// -------------------------------------------------------------------------------------------------

type C = Kernel<Classic>;

/// (Storage at 20 ms a read, so that the memcg statistics flusher runs every hundred misses and
/// the 6.12 presets' rate-limited reads are not frozen at their start.)
fn classic(profile: Profile, pages: u64, swap: u64, limit: Option<u64>) -> (C, MemcgId, u32) {
    let mut cfg = MachineConfig::simple(pages, swap);
    cfg.ra_pages = 0;
    cfg.clock.read_io_ns = 20_000_000;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    m.lru_cache_disabled = true;
    let p = Classic::with_profile(&m, profile);
    let mut k = Kernel::new(m, p);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    if let Some(max) = limit {
        k.m.memcgs[t].max = max;
    }
    let task = k.create_mm(t);
    (k, t, task)
}

/// The classic LRU's run of [`random_mapping`]: a hot set mapped with `advice`, loaded in a loop
/// beside a cold stream; returns the majors of the hot set and the vmstat/memory.stat counters.
fn classic_random_mapping(profile: Profile, advice: Madv) -> (i64, Counters, Counters) {
    let (mut k, t, task) = classic(profile, 2048, 0, Some(512));
    let mapped = k.m.create_file("mapped", 256, Advice::Normal);
    let cold = k.m.create_file("cold", 8192, Advice::Normal);
    k.step(Op::Mmap {
        task,
        vpn: B,
        pages: 256,
        file: mapped,
        pgoff: 0,
        flags: vmf::WRITE as u8,
        compressed_pct: 0,
    })
    .unwrap();
    k.step(Op::Madvise {
        task,
        vpn: B,
        pages: 256,
        advice,
    })
    .unwrap();
    let mut rng = Rng(7);
    let mut majors = 0;
    for _ in 0..10 {
        for i in 0..256u32 {
            if k.step(Op::Load { task, vpn: B + i }).unwrap() == Access::Major {
                majors += 1;
            }
        }
        for _ in 0..400 {
            let index = rng.next(8192);
            k.step(Op::Read {
                task,
                file: cold,
                index,
            })
            .unwrap();
        }
    }
    k.check().unwrap();
    (majors, k.m.vmstat(), k.m.memcg_stat(t))
}

/// Classic, "mm: add vma_has_recency()": `folio_referenced` ignores `MADV_RANDOM` mappings, so
/// their young PTEs no longer activate the folios: the hot set faults in again and again (the
/// commit's own fio test is the other side of this: the pages a random reader does not reuse
/// stop crowding the active list). `MADV_NORMAL` is untouched.
#[test]
fn classic_vma_has_recency_stops_protecting_random_mappings() {
    for base in KERNELS {
        let off = classic_random_mapping(with(base, "vma_has_recency", false), Madv::Random).0;
        let on = classic_random_mapping(with(base, "vma_has_recency", true), Madv::Random).0;
        assert!(
            on > 2 * off,
            "{}: MADV_RANDOM hot set majors off {off}, on {on}",
            base.label()
        );
        let off = classic_random_mapping(with(base, "vma_has_recency", false), Madv::Normal).0;
        let on = classic_random_mapping(with(base, "vma_has_recency", true), Madv::Normal).0;
        assert_eq!(off, on, "{}: MADV_NORMAL must not change", base.label());
    }
}

/// `vma_has_recency` in `zap_pte_range` (either LRU): unmapping a young PTE of an `MADV_RANDOM`
/// mapping marks the folio accessed in 6.1 (only `VM_SEQ_READ` was excluded), not after 6.3.
#[test]
fn zap_of_a_random_mapping_marks_accessed_only_without_vma_has_recency() {
    use lrugen::mm::folio::pg;
    for base in KERNELS {
        let mut referenced = [0; 2];
        for on in [false, true] {
            let (mut k, _t, task) = classic(with(base, "vma_has_recency", on), 1024, 0, None);
            let f = k.m.create_file("f", 64, Advice::Normal);
            k.step(Op::Mmap {
                task,
                vpn: B,
                pages: 64,
                file: f,
                pgoff: 0,
                flags: 0,
                compressed_pct: 0,
            })
            .unwrap();
            k.step(Op::Madvise {
                task,
                vpn: B,
                pages: 64,
                advice: Madv::Random,
            })
            .unwrap();
            for i in 0..64 {
                k.step(Op::Load { task, vpn: B + i }).unwrap();
            }
            k.step(Op::Munmap {
                task,
                vpn: B,
                pages: 64,
            })
            .unwrap();
            k.check().unwrap();
            referenced[on as usize] = (0..64)
                .filter(|&i| match k.m.files[f as usize].slot(i) {
                    lrugen::mm::pagecache::Slot::Folio(id) => k.m.folios[id].test(pg::REFERENCED),
                    _ => false,
                })
                .count();
        }
        assert_eq!(
            referenced,
            [64, 0],
            "{}: PG_referenced after munmap (off, on)",
            base.label()
        );
    }
}

/// Classic, `pageout_ignore_references` (`mm/madvise.c` is shared by both LRUs): `MADV_PAGEOUT`
/// leaves the accessed bits; seen where reclaim fails with the folio still mapped (no swap).
#[test]
fn classic_pageout_ignore_references_leaves_young_bits() {
    for base in KERNELS {
        for on in [false, true] {
            let (mut k, _t, task) = classic(with(base, "pageout_ignore_references", on), 256, 0, None);
            k.step(Op::Mmap {
                task,
                vpn: B,
                pages: 8,
                file: ANON_FILE,
                pgoff: 0,
                flags: vmf::WRITE as u8,
                compressed_pct: 0,
            })
            .unwrap();
            for i in 0..8 {
                k.step(Op::Store { task, vpn: B + i }).unwrap();
            }
            k.step(Op::Madvise {
                task,
                vpn: B,
                pages: 8,
                advice: Madv::PageOut,
            })
            .unwrap();
            k.check().unwrap();
            let young = (0..8).filter(|&i| k.m.pte(task, B + i) & pte::YOUNG != 0).count();
            assert_eq!(young, if on { 8 } else { 0 }, "{} on = {on}", base.label());
        }
    }
}

/// Classic, "mm: move pgscan, pgsteal, pgrefill to node stats": memcg-limit reclaim by
/// `shrink_inactive_list` and `shrink_active_list` shows in `/proc/vmstat` as in `memory.stat`.
#[test]
fn classic_node_reclaim_stats_count_memcg_reclaim_globally() {
    for base in KERNELS {
        let (_, off, _) = classic_random_mapping(with(base, "node_reclaim_stats", false), Madv::Normal);
        let (_, on, memcg) = classic_random_mapping(with(base, "node_reclaim_stats", true), Madv::Normal);
        for s in [Stat::PgscanDirect, Stat::PgstealDirect, Stat::Pgrefill] {
            assert!(memcg.get(s) > 0, "{} {}", base.label(), s.name());
            assert_eq!(off.get(s), 0, "{} {} off", base.label(), s.name());
            assert_eq!(on.get(s), memcg.get(s), "{} {} on", base.label(), s.name());
        }
    }
}

/// A classic run (`lrugen run --policy classic --profile 6.1`) takes the run's profile.
#[test]
fn a_classic_run_takes_the_runs_profile() {
    use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig};
    use lrugen::workload::{dist::Dist, WorkloadSpec};
    let w = WorkloadSpec::FileRead {
        files: 1,
        file_pages: 512,
        dist: Dist::Uniform,
        accesses: 2000,
    };
    let mut cfg = RunConfig::new(
        MachineConfig::simple(4096, 0),
        MemcgConfig::default(),
        w,
        PolicyKind::Classic,
    );
    cfg.mglru.profile = Profile::V6_1;
    assert_eq!(sim::run(&cfg, None, &mut |_, _| {}).unwrap().policy, "classic-6.1");
    cfg.mglru.profile = Profile::MAINLINE;
    assert_eq!(sim::run(&cfg, None, &mut |_, _| {}).unwrap().policy, "classic");
}

/// The classic LRU is named after its profile, as MGLRU is.
#[test]
fn classic_names_follow_the_preset() {
    use lrugen::reclaim::Policy;
    let m = Machine::new(MachineConfig::simple(256, 0));
    assert_eq!(Classic::new(&m).name(), "classic");
    assert_eq!(Classic::with_profile(&m, Profile::MAINLINE).name(), "classic");
    assert_eq!(Classic::with_profile(&m, Profile::V6_1).name(), "classic-6.1");
    assert_eq!(Classic::with_profile(&m, Profile::V6_17).name(), "classic-6.17");
    // `mainline` is 7.2, so the 7.2 classic LRU goes by the plain name; a flipped switch does not
    let mut flipped = Profile::V7_2;
    flipped.set_switch("node_reclaim_stats", false).unwrap();
    assert_eq!(Classic::with_profile(&m, Profile::V7_2).name(), "classic");
    assert_eq!(Classic::with_profile(&m, flipped).name(), "classic-7.2");
}

/// `mglru_proportional_protection` (7.2.13's `get_nr_to_scan`; 6.12.118's scales nothing): under
/// the parent's reclaim, a child above its `memory.low` but mostly protected (usage 8,192, low
/// 7,168) gets an eighth of its budget (none at `DEF_PRIORITY`), so its unprotected sibling gives
/// more of the pages; off, the walk takes them from the first child it visits, the protected one.
#[test]
fn proportional_protection_lets_the_unprotected_sibling_give_first() {
    for base in [Profile::V6_12, Profile::V7_2] {
        let mut lost = [(0, 0); 2];
        for on in [false, true] {
            let (mut k, parent, _task) = kernel(with(base, "mglru_proportional_protection", on), 65536, 0, None);
            // two children of the workload memcg, each with a task and 8,192 file pages read once
            let kids: Vec<(MemcgId, u32, u32)> = ["a", "b"]
                .iter()
                .map(|n| {
                    let memcg = k.create_memcg(parent, n);
                    let task = k.create_mm(memcg);
                    (memcg, task, k.m.create_file(n, 8192, Advice::Normal))
                })
                .collect();
            for &(_, task, file) in &kids {
                for i in 0..8192 {
                    k.read_page(task, file, i).unwrap();
                }
            }
            // two more generations each, so that eviction needs no aging at any priority
            for &(memcg, _, _) in &kids {
                for _ in 0..2 {
                    let seq = k.p.lrugen(memcg, 0).max_seq;
                    let id = k.m.memcgs[memcg].id;
                    k.p.debugfs_write(&mut k.m, &format!("+ {id} 0 {seq} 0 1")).unwrap();
                }
            }
            k.m.memcgs[kids[0].0].low = 7168;
            let stolen = |k: &K| -> Vec<i64> {
                kids.iter()
                    .map(|c| k.m.memcg_stat(c.0).get(Stat::PgstealDirect))
                    .collect()
            };
            let before = stolen(&k);
            let got = lrugen::reclaim::vmscan::try_to_free_mem_cgroup_pages(&mut k.m, &mut k.p, parent, 32, true);
            assert!(got >= 32, "{} on = {on}: reclaimed {got}", base.label());
            k.check().unwrap();
            let after = stolen(&k);
            lost[on as usize] = (after[0] - before[0], after[1] - before[1]);
        }
        let (off, on) = (lost[0], lost[1]);
        // the pressure moves from the protected child to its sibling (6.12: all of it, 32 pages
        // from a, then from b; 7.2, whose loop examines a few pages of each in turn: 27/12 then 6/27)
        assert!(
            off.0 > 0 && on.0 < off.0 && on.1 > off.1,
            "{}: off {off:?}, on {on:?}",
            base.label()
        );
    }
}

/// `vmscan_reclaim_trace_ids`: 7.x's memcg and direct reclaim tracepoints end with
/// `pid=%d memcg_id=%llu %s` (the `(in-irq)` field empty, so a space ends the line); 6.12's stop
/// at `gfp_flags=` and `nr_reclaimed=`. The pid is the line's own, the memcg id the one `lru_gen`
/// prints for the workload's memcg. Only the text changes: the run is the same.
#[test]
fn vmscan_reclaim_trace_ids_print_the_pid_and_the_memcg_id() {
    use lrugen::sim::{self, PolicyKind};
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        let mut runs = Vec::new();
        for on in [false, true] {
            let mut c = common::anon_memcg_reclaim(policy);
            c.ftrace = vec![
                "vmscan/mm_vmscan_memcg_reclaim_begin".into(),
                "vmscan/mm_vmscan_memcg_reclaim_end".into(),
            ];
            c.mglru.profile = with(Profile::V6_12, "vmscan_reclaim_trace_ids", on);
            let r = sim::run(&c, None, &mut |_, _| {}).unwrap();
            let lines: Vec<&str> = r
                .ftrace
                .lines()
                .filter(|l| l.contains(": mm_vmscan_memcg_reclaim_"))
                .collect();
            assert!(lines.len() > 10, "{policy:?}: {} memcg reclaim lines", lines.len());
            for l in &lines {
                let (head, fields) = l.split_once(": mm_vmscan_memcg_reclaim_").unwrap();
                let pid = head.trim_start().split_once(' ').unwrap().0.rsplit_once('-').unwrap().1;
                let fields = fields.split_once(": ").unwrap().1;
                let first = if l.contains("_begin: ") {
                    "order=0 gfp_flags=GFP_HIGHUSER_MOVABLE".to_string()
                } else {
                    format!(
                        "nr_reclaimed={}",
                        fields.split_whitespace().next().unwrap().split_once('=').unwrap().1
                    )
                };
                // the workload's memcg: the first one created under the root (id 2, as lru_gen says)
                let want = if on {
                    format!("{first} pid={pid} memcg_id=2 ")
                } else {
                    first
                };
                assert_eq!(fields, want, "{policy:?} on = {on}: {l}");
            }
            runs.push(r);
        }
        assert_eq!(runs[0].vmstat, runs[1].vmstat, "{policy:?}: only the text changes");
        assert_ne!(runs[0].ftrace, runs[1].ftrace);
    }
}

/// Every kernel switch has a direction test here (`fg_*`: `mglru_fg.rs`).
#[test]
fn every_kernel_switch_has_a_direction_test() {
    let src = include_str!("switch_effects.rs");
    for name in Switches::NAMES.iter().filter(|n| !n.starts_with("fg_")) {
        assert!(
            src.contains(&format!("\"{name}\"")),
            "switch {name} has no direction test in switch_effects.rs"
        );
    }
}

/// `folio_batch_size_31` (`PAGEVEC_SIZE` 15 in 6.1, 31 from 6.12): on 7.2, where placement reads
/// `PG_referenced`, a buffered read marks its new folio accessed while it waits in the batch,
/// except the folio that fills the batch; so with 31 half as many new folios land in the oldest
/// generation (`max_seq − 3`) as with 15.
#[test]
fn folio_batch_size_31_places_fewer_new_folios_oldest() {
    let mut oldest = [0u64; 2];
    for (i, on) in [false, true].into_iter().enumerate() {
        let (mut k, t, task) = kernel(with(Profile::V7_2, "folio_batch_size_31", on), 4096, 0, None);
        k.m.lru_cache_disabled = false;
        let f = k.m.create_file("f", 930, lrugen::mm::pagecache::Advice::Random);
        for index in 0..930 {
            k.step(Op::Read { task, file: f, index }).unwrap();
        }
        k.lru_add_drain();
        let g = k.p.lrugen(t, 0);
        oldest[i] = g.nr_pages[lrugen::reclaim::mglru::gen_from_seq(g.min_seq[1])][1]
            .iter()
            .sum::<i64>() as u64;
    }
    // 930 reads: 62 batches of 15, 30 of 31, each with one folio added before it was marked
    assert_eq!(oldest, [62, 30], "folios in the oldest generation, batch 15 then 31");
}

/// `folio_batch_size_31` under the classic LRU too (the per-CPU batch is the kernel's, whichever
/// LRU runs): 40 new page-cache folios put 30 on the inactive list in two batches of 15 (6.1),
/// 31 in one batch of 31 (from 6.12), the rest waiting off the LRU until a drain.
#[test]
fn folio_batch_size_31_under_the_classic_lru() {
    let mut on_lru = [0i64; 2];
    for (i, on) in [false, true].into_iter().enumerate() {
        let (mut k, t, task) = classic(with(Profile::V6_1, "folio_batch_size_31", on), 4096, 0, None);
        k.m.lru_cache_disabled = false;
        let f = k.m.create_file("f", 40, Advice::Random);
        for index in 0..40 {
            k.step(Op::Read { task, file: f, index }).unwrap();
        }
        on_lru[i] = k.m.memcg_stat(t).get(Stat::NrInactiveFile);
        k.lru_add_drain();
        assert_eq!(
            k.m.memcg_stat(t).get(Stat::NrInactiveFile),
            40,
            "all 40 after the drain"
        );
    }
    assert_eq!(
        on_lru,
        [30, 31],
        "inactive file folios before the drain, batch 15 then 31"
    );
}

/// The classic LRU's hot-cold run: a 128-page hot file read at random between the pages of one
/// pass over a 6144-page cold file, in a 512-page memcg, on `clock`; returns memory.stat.
fn classic_hot_cold(profile: Profile, clock: lrugen::mm::StepClock) -> Counters {
    let (mut k, t, task) = classic(profile, 4096, 0, Some(512));
    k.m.cfg.clock = clock;
    let hot = k.m.create_file("hot", 128, Advice::Normal);
    let cold = k.m.create_file("cold", 6144, Advice::Normal);
    for i in 0..128 {
        k.step(Op::Read {
            task,
            file: hot,
            index: i,
        })
        .unwrap();
    }
    let mut rng = Rng(5);
    for i in 0..6144 {
        k.step(Op::Read {
            task,
            file: hot,
            index: rng.next(128),
        })
        .unwrap();
        k.step(Op::Read {
            task,
            file: cold,
            index: i,
        })
        .unwrap();
    }
    k.check().unwrap();
    k.m.memcg_stat(t)
}

/// Classic, `reclaim_ratelimited_stats_flush` (6.12, "mm: vmscan: use ratelimited memcg stats
/// flush in the reclaim"): between the 2-second flushes `prepare_scan_control` reads the same
/// `workingset_activate_file` it snapshotted at the end of the last reclaim, so refaults make it
/// deactivate once per flush period instead of after every reclaim that saw one: far fewer
/// deactivations (Debian 6.1 against 6.12 on the hot-cold shape: 14250 against 5506). When every
/// read takes longer than the flush period the statistics are fresh either way and the two agree.
#[test]
fn classic_ratelimited_stats_flush_deactivates_less() {
    let fast = lrugen::mm::StepClock::default();
    let slow = lrugen::mm::StepClock {
        read_io_ns: 5_000_000_000,
        ..fast
    };
    for base in KERNELS {
        let off = classic_hot_cold(with(base, "reclaim_ratelimited_stats_flush", false), fast);
        let on = classic_hot_cold(with(base, "reclaim_ratelimited_stats_flush", true), fast);
        let (d_off, d_on) = (off.get(Stat::Pgdeactivate), on.get(Stat::Pgdeactivate));
        assert!(
            off.get(Stat::WorkingsetActivateFile) > 0,
            "{}: no refault activations",
            base.label()
        );
        assert!(
            d_on * 2 < d_off,
            "{}: pgdeactivate off {d_off}, on {d_on}",
            base.label()
        );
        let off = classic_hot_cold(with(base, "reclaim_ratelimited_stats_flush", false), slow);
        let on = classic_hot_cold(with(base, "reclaim_ratelimited_stats_flush", true), slow);
        let (s_off, s_on) = (off.get(Stat::Pgdeactivate), on.get(Stat::Pgdeactivate));
        assert!(
            s_on * 10 >= s_off * 9 && s_off * 10 >= s_on * 9,
            "{}: slow storage, pgdeactivate off {s_off}, on {s_on} should agree within 10 %",
            base.label()
        );
    }
}

/// A classic kernel of `profile` swapping to zram, whose task stored to `pages` pages and forked
/// a child that shares them, all swapped out (two swap references each). Returns the kernel, the
/// task, its child and the first page.
fn zram_pages_shared_with_a_child(profile: Profile, pages: u32) -> (C, u32, u32, u32) {
    use lrugen::mm::Lru;
    use lrugen::reclaim::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};
    let (mut k, t, task) = classic(profile, 1024, 256, None);
    k.m.cfg.zram_ratio = Some(3.0);
    let child = k.m.reserve_mm(t);
    let va = k.m.mmap(task, pages, vmf::WRITE, None);
    for i in 0..pages {
        k.step(Op::Store { task, vpn: va + i }).unwrap();
    }
    k.step(Op::Fork { task, child }).unwrap();
    // the first scan finds the PTEs young (KEEP), the second reclaims to swap
    for _ in 0..2 {
        let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Direct, Some(t), usize::MAX);
        k.p.shrink_inactive_list(&mut k.m, t, 0, Lru::InactiveAnon, 32, &mut sc);
    }
    assert_eq!(k.m.vmstat().get(Stat::Pswpout), i64::from(pages), "{}", profile.label());
    (k, task, child, va)
}

/// `sync_io_always_frees_swap` (7.2's `should_try_to_free_swap`): a page a parent and its child
/// share is swapped out to zram (two swap references). The parent's fault reads it into the swap
/// cache (no bypass with two references); the child's fault finds it there. 7.2 then frees the
/// slot, its last reference gone; 6.1–6.17 keep the swap-cache copy and its slot until reclaim.
#[test]
fn sync_io_always_frees_swap_frees_the_slot_on_a_swap_cache_hit() {
    for base in KERNELS {
        let mut held = [0; 2];
        for on in [false, true] {
            let (mut k, task, child, va) =
                zram_pages_shared_with_a_child(with(base, "sync_io_always_frees_swap", on), 1);
            assert_eq!(k.step(Op::Load { task, vpn: va }), Ok(Access::Major));
            assert_eq!(
                k.step(Op::Load { task: child, vpn: va }),
                Ok(Access::Minor),
                "a swap-cache hit"
            );
            held[on as usize] = k.m.swap.nr_slots - k.m.swap.nr_free();
            k.check().unwrap();
        }
        assert_eq!(held, [1, 0], "{}: slots held after both faults (off, on)", base.label());
    }
}

/// `sync_io_skips_readahead` (7.2's `do_swap_page`): 8 pages a parent and its child share are
/// swapped out to zram (two swap references each, so no "skip swapcache"). The parent's fault on
/// the middle one reads through the swap cache; 6.1–6.17 (off) read the VMA's first window with
/// it (`vm.page-cluster` 3: a centred 8 pages, clamped to the VMA), 7.2 (on) the one page.
#[test]
fn sync_io_skips_readahead_reads_one_page_of_a_shared_zram_slot() {
    for base in KERNELS {
        let mut read = [0; 2];
        for on in [false, true] {
            let (mut k, task, _child, va) =
                zram_pages_shared_with_a_child(with(base, "sync_io_skips_readahead", on), 8);
            assert_eq!(k.m.cfg.page_cluster, 3, "the kernel's default");
            assert_eq!(k.step(Op::Load { task, vpn: va + 4 }), Ok(Access::Major));
            read[on as usize] = k.m.vmstat().get(Stat::Pswpin);
            assert_eq!(k.m.vmstat().get(Stat::SwapRa), read[on as usize] - 1);
            k.check().unwrap();
        }
        // off: left = 4 - 3 = 1, right = 9, cut by the VMA's end at 8: pages 1..8
        assert_eq!(read, [7, 1], "{}: pages read (off, on)", base.label());
    }
}

/// `remove_rw_page` (6.3, "block: remove ->rw_page"): 192 anon pages stored in a 64-page memcg
/// and loaded again, swapping out and in. Swap I/O counts 4 KiB in `pgpgin`/`pgpgout` per page
/// through the block layer; in 6.1 (off) a synchronous device's `->rw_page` (zram, brd) bypasses
/// it, so those two stay at 0 there while `pswpin`/`pswpout` count as always. A disk swaps
/// through bios on every kernel.
#[test]
fn remove_rw_page_counts_synchronous_swap_io_in_pgpgin_and_pgpgout() {
    for base in KERNELS {
        for device in ["zram", "ramdisk", "disk"] {
            let mut pswp = Vec::new();
            for on in [false, true] {
                let (mut k, _t, task) = classic(with(base, "remove_rw_page", on), 1024, 512, Some(64));
                match device {
                    "zram" => k.m.cfg.zram_ratio = Some(3.0),
                    "ramdisk" => k.m.cfg.swap_synchronous = true,
                    _ => {}
                }
                let va = k.m.mmap(task, 192, vmf::WRITE, None);
                for i in 0..192 {
                    k.step(Op::Store { task, vpn: va + i }).unwrap();
                }
                for i in 0..192 {
                    k.step(Op::Load { task, vpn: va + i }).unwrap();
                }
                k.check().unwrap();
                let v = k.m.vmstat();
                let (pin, pout) = (v.get(Stat::Pswpin), v.get(Stat::Pswpout));
                assert!(
                    pin > 0 && pout > 0,
                    "{} {device}: pswpin {pin} pswpout {pout}",
                    base.label()
                );
                let counted = on || device == "disk";
                let label = format!("{} {device} remove_rw_page={on}", base.label());
                assert_eq!(
                    v.get(Stat::Pgpgin),
                    if counted { 4 * pin } else { 0 },
                    "{label}: pgpgin"
                );
                assert_eq!(
                    v.get(Stat::Pgpgout),
                    if counted { 4 * pout } else { 0 },
                    "{label}: pgpgout"
                );
                pswp.push((pin, pout));
            }
            assert_eq!(pswp[0], pswp[1], "{} {device}: only pgpgin/pgpgout move", base.label());
        }
    }
}

/// A one-pass read stream of 400 leaves (25,600 pages) in a 4,096-page memcg with its kernel
/// memory charged (`KmemConfig::kernel`), so that its xarray leaves end up holding only
/// shadows; then the stream's first 8,192 pages again. Returns the leaves reclaimed by the
/// shadow shrinker and the shadow-only leaves left after the first pass, and the refaults of the
/// second.
fn shadow_stream<P: lrugen::reclaim::Policy>(
    profile: Profile,
    policy: impl FnOnce(&Machine, Profile) -> P,
) -> (i64, i64, i64) {
    let mut cfg = MachineConfig::simple(16_384, 0);
    cfg.ra_pages = 0;
    cfg.kmem = lrugen::mm::KmemConfig::kernel();
    let m = Machine::new(cfg);
    let p = policy(&m, profile);
    let mut k = Kernel::new(m, p);
    k.m.debug_checks = true;
    let t = k.create_memcg(ROOT_MEMCG, "t");
    k.m.memcgs[t].max = 4096;
    let task = k.create_mm(t);
    let f = k.m.create_file("stream", 25_600, Advice::Random);
    for index in 0..25_600 {
        k.step(Op::Read { task, file: f, index }).unwrap();
    }
    let v = k.m.vmstat();
    let (freed, left) = (v.get(Stat::WorkingsetNodereclaim), v.get(Stat::WorkingsetNodes));
    let before = v.get(Stat::WorkingsetRefaultFile);
    for index in 0..8192 {
        k.step(Op::Read { task, file: f, index }).unwrap();
    }
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    (freed, left, k.m.vmstat().get(Stat::WorkingsetRefaultFile) - before)
}

/// "mm: workingset: use lruvec_lru_size() to get the number of lru pages" (7.2): the shadow
/// shrinker's limit reads the memcg's per-zone LRU sizes, which MGLRU never updates, so an
/// MGLRU memcg's limit is its slab pages alone: its shadow-only leaves are reclaimed in batches
/// of 128 (`do_shrink_slab` with `seeks = 0`) once 256 are over the limit, and the refaults on
/// their pages go unrecognised. Off, the limit is (LRU + slab pages) / 8, about 520 leaves here,
/// which the stream's 400 never reach. The classic LRU keeps its per-zone sizes, so the switch
/// changes nothing under it.
#[test]
fn workingset_lruvec_lru_size_reclaims_shadow_nodes_of_mglru_memcgs() {
    let mglru = |m: &Machine, profile| {
        Mglru::new(
            m,
            MglruConfig {
                profile,
                ..MglruConfig::default()
            },
        )
    };
    let (on_freed, on_left, on_refaults) = shadow_stream(Profile::V7_2, mglru);
    let (off_freed, off_left, off_refaults) =
        shadow_stream(with(Profile::V7_2, "workingset_lruvec_lru_size", false), mglru);
    assert_eq!(off_freed, 0, "below the LRU-sized limit nothing is reclaimed");
    assert!(
        off_left >= 300,
        "the stream leaves its leaves holding shadows: {off_left}"
    );
    assert!(off_refaults > 1000, "the second pass refaults: {off_refaults}");
    assert!(
        on_freed >= 128 && on_freed % 128 == 0,
        "whole batches of 128 reclaimed: {on_freed}"
    );
    assert_eq!(on_left + on_freed, off_left, "reclaimed leaves are the ones missing");
    assert!(
        on_refaults < off_refaults,
        "refaults on pages whose shadows went are not recognised: {on_refaults} vs {off_refaults}"
    );
    let classic = |m: &Machine, profile| Classic::with_profile(m, profile);
    let (c_freed, c_left, _) = shadow_stream(Profile::V7_2, classic);
    assert_eq!(
        c_freed, 0,
        "the classic LRU's sizes reach the limit: {c_left} leaves kept"
    );
}

/// The classic LRU at swappiness 100 under a memcg limit: a hot anon set stored and loaded in
/// turn with Zipf-like reads over a file twice the limit (the `mixed-swappiness100` shape, small).
/// Returns the vmstat counters.
fn classic_mixed(profile: Profile) -> Counters {
    let (mut k, t, task) = classic(profile, 4096, 2048, Some(768));
    k.m.memcgs[t].swappiness = 100;
    let f = k.m.create_file("data", 1536, Advice::Random);
    mmap(&mut k, task, B, 384, ANON_FILE);
    let mut rng = Rng(5);
    for round in 0..12_000u32 {
        let vpn = B + rng.next(384) as u32;
        let op = if round % 3 == 0 {
            Op::Store { task, vpn }
        } else {
            Op::Load { task, vpn }
        };
        k.step(op).unwrap();
        let index = if rng.next(4) != 0 {
            rng.next(192)
        } else {
            rng.next(1536)
        };
        k.step(Op::Read { task, file: f, index }).unwrap();
    }
    k.check().unwrap();
    k.m.vmstat()
}

/// Classic, "mm: vmscan: make rotations a secondary factor in balancing anon vs file" (≈6.5):
/// the folios that reclaim rotates back add to their type's cost. Here the hot anon folios
/// rotate, so `get_scan_count` scans and swaps less anon (which way it leans depends on which
/// type rotates more: a workload whose file folios rotate leans the other way); without it
/// (6.1) only pages written out or refaulted count, and the same run swaps more (Debian 6.1 `mixed-swappiness100`: 501 pages swapped out, the model
/// with rotations 199, without 501).
#[test]
fn classic_lru_cost_rotations_swaps_less_of_a_hot_anon_set() {
    for base in [Profile::V6_1, Profile::V6_12] {
        let off = classic_mixed(with(base, "lru_cost_rotations", false));
        let on = classic_mixed(with(base, "lru_cost_rotations", true));
        let (p_off, p_on) = (off.get(Stat::Pswpout), on.get(Stat::Pswpout));
        assert!(
            p_off > p_on + p_on / 12 && p_off > 50,
            "{}: pswpout without rotations {p_off}, with {p_on}",
            base.label()
        );
        assert!(
            off.get(Stat::PgscanAnon) > on.get(Stat::PgscanAnon),
            "{}: anon scanned {} vs {}",
            base.label(),
            off.get(Stat::PgscanAnon),
            on.get(Stat::PgscanAnon)
        );
    }
}

/// Classic, `lru_note_cost_skips_zero` (Hugh Dickins' "mm: optimize lru_note_cost() by adding
/// lru_note_cost_unlock_irq()", in 7.2): a `shrink_inactive_list` batch that writes nothing out
/// and reclaims every folio it scans (clean, once-read file folios) notes a cost of zero. Before
/// (6.12) that call still halves both costs once they exceed a quarter of the LRU, so the next cost
/// swings `get_scan_count`'s balance further; on 7.2 the costs stay. Here the file costs 32 more
/// after the batch (one restored refault): decayed, file's share of the cost is higher and file
/// gets the smaller share of the scan.
#[test]
fn classic_lru_note_cost_skips_zero_keeps_the_costs_of_a_batch_that_cost_nothing() {
    use lrugen::mm::Lru;
    use lrugen::reclaim::{Reclaimer, ScanControl};
    for base in [Profile::V6_12, Profile::V7_2] {
        let mut got = Vec::new();
        for on in [false, true] {
            let (mut k, t, task) = classic(with(base, "lru_note_cost_skips_zero", on), 4096, 2048, None);
            mmap(&mut k, task, B, 128, ANON_FILE);
            for i in 0..128 {
                k.step(Op::Store { task, vpn: B + i }).unwrap();
            }
            let f = k.m.create_file("f", 256, Advice::Normal);
            for index in 0..256 {
                k.step(Op::Read { task, file: f, index }).unwrap();
            }
            let lv = k.m.lruvec(t, 0);
            // more than a quarter of the 384 pages on the LRU
            (k.p.lruvecs[lv].anon_cost, k.p.lruvecs[lv].file_cost) = (120, 80);
            let mut sc = ScanControl::new(32, Reclaimer::Direct, Some(t), 3);
            let nr_reclaimed = k.p.shrink_inactive_list(&mut k.m, t, 0, Lru::InactiveFile, 32, &mut sc);
            assert_eq!((nr_reclaimed, sc.stat.nr_pageout), (32, 0), "{}", base.label());
            let costs = (k.p.lruvecs[lv].anon_cost, k.p.lruvecs[lv].file_cost);
            k.p.lru_note_cost(&mut k.m, t, 0, true, 1, 0);
            sc.priority = 1;
            (sc.anon_cost, sc.file_cost) = (k.p.lruvecs[lv].anon_cost, k.p.lruvecs[lv].file_cost);
            let (nr, _) = k.p.get_scan_count(&k.m, t, 0, &mut sc);
            k.check().unwrap();
            got.push((costs, nr[Lru::InactiveAnon as usize], nr[Lru::InactiveFile as usize]));
        }
        let [(off_costs, off_anon, off_file), (on_costs, on_anon, on_file)] = got[..] else {
            unreachable!()
        };
        assert_eq!(off_costs, (60, 40), "{}: halved without the change", base.label());
        assert_eq!(on_costs, (120, 80), "{}: kept with it", base.label());
        assert!(
            off_file < on_file && off_anon > on_anon,
            "{}: scan targets (anon, file) decayed ({off_anon}, {off_file}), kept ({on_anon}, {on_file})",
            base.label()
        );
    }
}

/// `memory_reclaim_swappiness` (6.7): `memory.reclaim` takes `swappiness=`; off, the size alone,
/// and an empty write asks for everything. Grammar table: `memory_reclaim.rs`.
#[test]
fn memory_reclaim_swappiness_adds_the_key() {
    use lrugen::reclaim::memory_reclaim::{parse, WriteErrno, PAGE_COUNTER_MAX};
    for base in [Profile::V6_12, Profile::V7_2] {
        let off = with(base, "memory_reclaim_swappiness", false).switches;
        let on = with(base, "memory_reclaim_swappiness", true).switches;
        assert_eq!(parse("1M swappiness=10", &off), Err(WriteErrno::EINVAL));
        assert_eq!(parse("1M swappiness=10", &on).unwrap().swappiness, Some(10));
        assert_eq!(parse("", &off).unwrap().nr_pages, PAGE_COUNTER_MAX);
        assert_eq!(parse("", &on), Err(WriteErrno::EINVAL));
    }
}

/// `memory_reclaim_quarter_batch`: a quarter of the rest per call takes more calls than the whole
/// rest for the same 8 MiB request.
#[test]
fn memory_reclaim_quarter_batch_takes_more_calls() {
    use lrugen::reclaim::memory_reclaim;
    for base in [Profile::V6_12, Profile::V7_2] {
        let mut calls = [0; 2];
        for on in [false, true] {
            let (mut k, t, task) = kernel(with(base, "memory_reclaim_quarter_batch", on), 8192, 0, None);
            let f = k.m.create_file("f", 4096, Advice::Normal);
            for index in 0..4096 {
                k.step(Op::Read { task, file: f, index }).unwrap();
            }
            let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "8M");
            assert_eq!(r.error, None);
            calls[on as usize] = r.iterations;
        }
        assert!(calls[0] < calls[1], "{}: calls (off, on) {calls:?}", base.label());
    }
}

/// `swap_percpu_cluster` (6.14–6.15, the swap allocator's per-CPU clusters): flipped alone on
/// 6.12, the swap device's lock is taken for a new cluster of 512 slots instead of for every 64
/// slots a CPU's slot cache allocates or returns, so far fewer times for the same swapping (the
/// switch only prices time under the engine).
#[test]
fn swap_percpu_cluster_takes_the_swap_device_lock_per_cluster() {
    use lrugen::mm::device::DeviceSpec;
    use lrugen::sim::engine::EngineConfig;
    use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig};
    use lrugen::workload::WorkloadSpec;
    let run = |profile: &str| {
        let mut cfg = RunConfig::new(
            MachineConfig::simple(40_000, 65_536),
            MemcgConfig {
                max: Some(2048),
                ..Default::default()
            },
            WorkloadSpec::Anon {
                pages: 4096,
                write_ratio: 1.0,
                dist: "zipf:0.6".parse().unwrap(),
                accesses: 20_000,
                compressed_pct: 0,
            },
            PolicyKind::Mglru,
        );
        cfg.mglru.profile = profile.parse().unwrap();
        cfg.engine = Some(EngineConfig {
            cpus: 2,
            storage: DeviceSpec::preset("ramdisk").unwrap(),
            swap_device: DeviceSpec::preset("ramdisk").unwrap(),
            ..Default::default()
        });
        cfg.jobs = 2;
        sim::run(&cfg, None, &mut |_, _| {}).expect("run")
    };
    let name = "swap_percpu_cluster";
    let off = run("6.12");
    let on = run(&format!("6.12+{name}=true"));
    let (a, b) = (off.engine.unwrap().swap_lock, on.engine.unwrap().swap_lock);
    let out = off.vmstat.as_ref().unwrap().get(Stat::Pswpout) as u64;
    assert!(out > 1000, "the run swaps: {out}");
    assert!(
        a.acquisitions >= out / 64,
        "slot caches: {} for {out} swap-outs",
        a.acquisitions
    );
    assert!(
        b.acquisitions * 4 < a.acquisitions,
        "clusters {} vs slot caches {}",
        b.acquisitions,
        a.acquisitions
    );
    // the same operations; their order across the two CPUs follows the times, which the lock's
    // holds move a little, so the counters may differ slightly
    assert_eq!(off.accesses, on.accesses);
}

// -------------------------------------------------------------------------------------------------
// ≤6.12: look_around_activate; 6.13 (in 6.12.y): activate_clears_refs
// -------------------------------------------------------------------------------------------------

/// Uniform loads through a `MADV_NORMAL` shared mapping of a file twice the memcg (the
/// `mmap-normal` shape, small): memcg reclaim, so look-around runs without a walk.
fn uniform_mapping(profile: Profile) -> Metrics {
    let (mut k, t, task) = kernel(profile, 4096, 0, Some(1024));
    let mut c = Counts::default();
    let file = k.m.create_file("mapped", 2048, Advice::Normal);
    mmap(&mut k, task, B, 2048, file);
    let mut rng = Rng(11);
    for _ in 0..30_000 {
        let vpn = B + rng.next(2048) as u32;
        go(&mut k, &mut c, "mapped", Op::Load { task, vpn });
    }
    metrics(&k, t, &c)
}

/// Look-around without a walk hands each young neighbour outside `max_seq` to `folio_activate`
/// (a move to `max_seq`, counted in `pgactivate`) instead of 6.1's in-place generation update of
/// a window of 15 or more, which eviction then finds promoted and sorts (`pgrefill`, 6.12's
/// accounting): on a hot anon set under memcg reclaim (no walk attached), more activations and
/// fewer folios sorted. (The 6.12 `anon-gauss` fixture: `pgactivate` 4631 → 14440 against the
/// kernel's 13085, `pgrefill` 19796 → 13431 against 14015.) From 6.12; 6.14's rework replaces
/// the path.
#[test]
fn look_around_activate_activates_neighbours_instead_of_sorting_them() {
    let (off, on) = off_on(Profile::V6_12, "look_around_activate", anon);
    eprintln!(
        "pgactivate {} -> {}, pgrefill {} -> {}, majors {} -> {}",
        get(&off, "pgactivate"),
        get(&on, "pgactivate"),
        get(&off, "memcg.pgrefill"),
        get(&on, "memcg.pgrefill"),
        get(&off, "major.anon"),
        get(&on, "major.anon")
    );
    assert!(get(&on, "pgactivate") > get(&off, "pgactivate"), "{off:?}\n{on:?}");
    assert!(
        get(&on, "memcg.pgrefill") < get(&off, "memcg.pgrefill"),
        "{off:?}\n{on:?}"
    );
}

/// "mm: multi-gen LRU: use {ptep,pmdp}_clear_young_notify()": look-around clears the young
/// PTE that rmap found before its window, so the isolated folio is no longer marked
/// `PG_referenced` by its own look-around, and `folio_check_references` keeps it (one young PTE,
/// no `PG_referenced`) instead of activating it: `pgactivate` falls by the young folios eviction
/// found, and the folios land where they did (`evict_folios` resets both to `max_seq - 1`), so
/// the misses stay. (The 6.12 `anon-gauss` fixture and its four boots: `pgactivate` 14614,
/// 12269, 12917, 14402, 16256 → 13619, 11334, 11957, 13421, 15215 against the kernel's 13528,
/// 11115, 13493, 13594, 14033; misses unchanged.) From 6.11.
#[test]
fn look_around_clears_target_keeps_young_folios_instead_of_activating_them() {
    let (off, on) = off_on(Profile::V6_12, "look_around_clears_target", anon);
    eprintln!(
        "pgactivate {} -> {}, majors {} -> {}",
        get(&off, "pgactivate"),
        get(&on, "pgactivate"),
        get(&off, "major.anon"),
        get(&on, "major.anon")
    );
    assert!(get(&on, "pgactivate") < get(&off, "pgactivate"), "{off:?}\n{on:?}");
    assert_eq!(get(&on, "major.anon"), get(&off, "major.anon"), "{off:?}\n{on:?}");
}

/// "mm/mglru: reset page lru tier bits when activating": a refault in a fault (refs saturated +
/// `PG_workingset`, then `PG_active`) is added to `max_seq` with its refs cleared (tier 1, from
/// `PG_workingset`), so eviction no longer protects it as tier 3: fewer folios sorted
/// (`pgrefill`; on the 6.12 `mmap-normal` fixture 5459 → 0, the kernel's 0). From 6.12.
#[test]
fn activate_clears_refs_stops_protecting_refaulted_mapped_folios() {
    let (off, on) = off_on(Profile::V6_12, "activate_clears_refs", uniform_mapping);
    eprintln!(
        "pgrefill {} -> {}, majors {} -> {}",
        get(&off, "memcg.pgrefill"),
        get(&on, "memcg.pgrefill"),
        get(&off, "major.mapped"),
        get(&on, "major.mapped")
    );
    assert!(
        get(&on, "memcg.pgrefill") < get(&off, "memcg.pgrefill"),
        "{off:?}\n{on:?}"
    );
}

/// A machine charging the kernel memory the kernel charges (`KmemConfig::kernel`), under
/// `profile` and the classic LRU, with debug checks on, and its memcg `t`.
fn kmem_kernel(profile: Profile) -> (Kernel<Classic>, MemcgId) {
    let mut cfg = MachineConfig::simple(4096, 0);
    cfg.kmem = lrugen::mm::KmemConfig::kernel();
    let m = Machine::new(cfg);
    let p = Classic::with_profile(&m, profile);
    let mut k = Kernel::new(m, p);
    k.m.debug_checks = true;
    let t = k.create_memcg(ROOT_MEMCG, "t");
    (k, t)
}

/// `memcg_stock_multi` (7.2, "memcg: multi-memcg percpu charge cache"): two memcgs fault anon
/// pages in turn on one CPU, with the per-CPU charge stock (`KmemConfig::kernel`). Off (6.1,
/// 6.12) the CPU's stock caches one memcg, so each one's charge drains the other's: the memcg
/// that did not fault last has nothing stocked, and its `memory.current` is what it holds. On,
/// both keep their stocks. Neither is near its limit: nothing is reclaimed either way.
#[test]
fn memcg_stock_multi_keeps_two_memcgs_stocked_on_one_cpu() {
    for on in [false, true] {
        let (mut k, a) = kmem_kernel(with(Profile::V6_12, "memcg_stock_multi", on));
        let b = k.create_memcg(ROOT_MEMCG, "b");
        let (ta, tb) = (k.create_mm(a), k.create_mm(b));
        let va = k.m.mmap(ta, 8, vmf::WRITE, None);
        let vb = k.m.mmap(tb, 8, vmf::WRITE, None);
        for i in 0..4 {
            k.step(Op::Store { task: ta, vpn: va + i }).unwrap();
            k.step(Op::Store { task: tb, vpn: vb + i }).unwrap();
        }
        assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
        let (sa, sb) = (k.m.memcgs.stocked(a), k.m.memcgs.stocked(b));
        assert!(sb > 0, "on {on}: the memcg that charged last keeps its stock");
        if on {
            assert!(sa > 0, "two slots: {sa} stocked for a");
        } else {
            assert_eq!(sa, 0, "one slot: b's charges drained a's stock");
        }
        let held = k.m.memcgs[a].usage - sa;
        assert_eq!(k.m.memcg_stat(a).get(Stat::NrAnonPages), 4, "on {on}");
        assert!(held >= 4, "on {on}: {held} pages charged to a");
        assert_eq!(k.m.vmstat().get(Stat::PgscanDirect), 0, "on {on}: no reclaim");
    }
}

/// The kernel memory of one address space with its kernel memory charged
/// (`KmemConfig::kernel`), under `profile` and the classic LRU (the switches are the machine's):
/// (`memory.stat` `pagetables`, `kernel`, `memory.current` less the pages in CPU charge stocks)
/// after it is created and after it faults in one anon page (one PTE table more), and
/// (`pagetables`, `kernel`) after it exits.
fn one_mm_kmem(profile: Profile) -> [(i64, i64, i64); 3] {
    let (mut k, t) = kmem_kernel(profile);
    let read = |k: &Kernel<Classic>| {
        let ms = k.m.memcg_stat(t);
        (
            ms.get(Stat::NrPageTablePages),
            ms.get(Stat::MemcgKmem),
            (k.m.memcgs[t].usage - k.m.memcgs.stocked(t)) as i64,
        )
    };
    let task = k.create_mm(t);
    let created = read(&k);
    let vpn = k.m.mmap(task, 1, vmf::WRITE, None);
    k.step(Op::Store { task, vpn }).unwrap();
    let faulted = read(&k);
    k.step(Op::Exit { task }).unwrap();
    let exited = read(&k);
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    [created, faulted, exited]
}

/// 6.7, "mm: add statistics for PUD level pagetable", and 6.14, "mm: introduce ctor/dtor at PGD
/// level": an address space's PUD tables (`KmemConfig::mm_pud_pages`, 2) and then its PGD (1)
/// count in `pagetables`; what is charged (`kernel`, `memory.current`) is the same on every
/// kernel, so reclaim sees no difference. The presets: 6.1 counts neither, 6.12 the PUD tables,
/// 7.2 both; each switch flipped alone moves its pages between `pagetables` and the rest of
/// `kernel`, and the exit returns everything.
#[test]
fn pud_and_pgd_pgtable_stats_count_the_upper_levels_in_pagetables() {
    let k = lrugen::mm::KmemConfig::kernel();
    let (pud, pgd) = (k.mm_pud_pages as i64, k.mm_pgd_pages as i64);
    assert_eq!((pud, pgd), (2, 1));
    let base = one_mm_kmem(Profile::V6_1);
    let [created, faulted, exited] = base;
    assert_eq!(created.0, k.mm_pgtable_pages as i64);
    assert_eq!(faulted.0, created.0 + 1, "the anon page's PTE table");
    assert_eq!(exited, (0, 0, 0));
    for (profile, extra) in [(Profile::V6_12, pud), (Profile::V7_2, pud + pgd)] {
        let got = one_mm_kmem(profile);
        for (b, g) in base.iter().zip(&got) {
            assert_eq!(g.0 - b.0, if b.1 > 0 { extra } else { 0 }, "{}", profile.name());
            assert_eq!((g.1, g.2), (b.1, b.2), "{}: the same charge", profile.name());
        }
    }
    for (name, pages) in [("pud_pgtable_stats", pud), ("pgd_pgtable_stats", pgd)] {
        for preset in [Profile::V6_1, Profile::V6_12, Profile::V7_2] {
            let mut flipped = preset;
            let on = !preset.switches.get(name).unwrap();
            flipped.set_switch(name, on).unwrap();
            let (a, b) = (one_mm_kmem(preset)[1], one_mm_kmem(flipped)[1]);
            assert_eq!(
                b.0 - a.0,
                if on { pages } else { -pages },
                "{name} from {}",
                preset.name()
            );
            assert_eq!((b.1, b.2), (a.1, a.2));
        }
    }
}

/// An address space whose page tables are known (`Machine::set_mm_pgtables`, the replayer of a
/// kernel run read off its smaps): its fixed page tables are replaced, each level counted in
/// `pagetables` as the profile says and charged on every kernel, the PTE tables of its mappings
/// still allocated as it faults, and its exit returns exactly what it holds.
#[test]
fn known_page_tables_replace_the_estimate_until_the_exit() {
    let k = lrugen::mm::KmemConfig::kernel();
    for (profile, counted) in [(Profile::V6_1, 5), (Profile::V6_12, 5 + 3), (Profile::V7_2, 5 + 3 + 1)] {
        let (mut kl, t) = kmem_kernel(profile);
        let read = |kl: &Kernel<Classic>| {
            let ms = kl.m.memcg_stat(t);
            (ms.get(Stat::NrPageTablePages), ms.get(Stat::MemcgKmem))
        };
        let task = kl.create_mm(t);
        let kmem0 = read(&kl).1;
        let estimate = (k.mm_pgtable_pages + k.mm_pud_pages + k.mm_pgd_pages) as i64;
        kl.m.set_mm_pgtables(task, [5, 3, 1]);
        let (pt, kmem) = read(&kl);
        assert_eq!(pt, counted, "{}", profile.name());
        assert_eq!(
            kmem - kmem0,
            5 + 3 + 1 - estimate,
            "{}: charged on every kernel",
            profile.name()
        );
        assert_eq!(kl.m.mms[task as usize].pgtables, [5, 3, 1]);
        let vpn = kl.m.mmap(task, 1, vmf::WRITE, None);
        kl.step(Op::Store { task, vpn }).unwrap();
        assert_eq!(read(&kl).0, counted + 1, "the anon page's PTE table");
        kl.step(Op::Exit { task }).unwrap();
        assert_eq!(read(&kl), (0, 0), "{}", profile.name());
        assert!(kl.m.check_failure.is_none(), "{:?}", kl.m.check_failure);
    }
}

/// `reparent_lru_folios` (7.2): removing a memcg moves its folios to its parent at once, and
/// the removed memcg, holding nothing, is freed; off (6.1–6.17), the removed memcg keeps its
/// folios, charged and on its lists, until reclaim takes them (`tests/memcg_rmdir.rs`).
#[test]
fn reparent_lru_folios_moves_a_removed_memcgs_folios_to_its_parent() {
    use lrugen::mm::memcg::MemcgState;
    for on in [false, true] {
        let (mut k, t, task) = kernel(with(Profile::V7_2, "reparent_lru_folios", on), 4096, 0, None);
        let c = k.create_memcg(t, "c");
        k.move_task(task, c).unwrap();
        let f = k.m.create_file("f", 100, Advice::Normal);
        for i in 0..100 {
            k.read_page(task, f, i).unwrap();
        }
        k.move_task(task, t).unwrap();
        let before = k.m.memcgs[t].usage_local;
        k.rmdir_memcg(c).unwrap();
        let (state, moved) = (k.m.memcgs[c].state, k.m.memcgs[t].usage_local - before);
        if on {
            assert_eq!((state, moved, k.m.memcgs[c].usage_local), (MemcgState::Freed, 100, 0));
        } else {
            assert_eq!((state, moved, k.m.memcgs[c].usage_local), (MemcgState::Offline, 0, 100));
        }
        k.check().unwrap();
    }
}

/// `proactive_reclaim_stats` (6.15): the pages `memory.reclaim` scans and reclaims count as
/// `pgscan_proactive`/`pgsteal_proactive` in the memcg's statistics; off (6.1, 6.12), as
/// `pgscan_direct`/`pgsteal_direct`. The same request reclaims the same pages either way.
#[test]
fn proactive_reclaim_stats_count_memory_reclaim_apart() {
    use lrugen::reclaim::memory_reclaim;
    for base in [Profile::V6_12, Profile::V7_2] {
        let mut stolen = [0; 2];
        for on in [false, true] {
            let (mut k, t, task) = kernel(with(base, "proactive_reclaim_stats", on), 8192, 0, None);
            let f = k.m.create_file("f", 4096, Advice::Normal);
            for index in 0..4096 {
                k.step(Op::Read { task, file: f, index }).unwrap();
            }
            let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "4M");
            assert_eq!(r.error, None);
            let ms = k.m.memcg_stat(t);
            let mc = |s: Stat| ms.get(s);
            let (direct, proactive) = (mc(Stat::PgstealDirect), mc(Stat::PgstealProactive));
            let label = format!("{} switch {on}", base.label());
            assert!(direct + proactive >= 1024, "{label}: stole {direct} + {proactive}");
            if on {
                assert_eq!((direct, mc(Stat::PgscanDirect)), (0, 0), "{label}");
                assert!(mc(Stat::PgscanProactive) >= proactive, "{label}");
            } else {
                assert_eq!((proactive, mc(Stat::PgscanProactive)), (0, 0), "{label}");
            }
            stolen[on as usize] = direct + proactive;
        }
        assert_eq!(stolen[0], stolen[1], "{}: the same pages either way", base.label());
    }
}

/// `proactive_mm_walk` (6.3, "mm: multi-gen LRU: clarify scan_control flags"): `memory.reclaim`
/// starts with a page-table walk attached, so the look-around of its evictions moves the young
/// neighbours of a young folio into `max_seq` in place (`folio_update_gen`), where 6.1's
/// `set_mm_walk(pgdat)` leaves it without one and each such neighbour is activated
/// (`folio_activate`, counted in `pgactivate`). An anon set aged so that its even pages are in
/// the oldest generation and its odd ones in the next, then read again: every folio eviction
/// meets is young, and so are its neighbours on the list (not isolated with it) outside
/// `max_seq`.
/// An anon set in a 6.12 memcg with swap, aged so that its even pages are in the oldest generation
/// and its odd ones in the next, then read again, so that every folio eviction meets is young and
/// so are its neighbours on the list outside `max_seq`. Returns the kernel, `t` and the
/// pages' `pgactivate` so far.
fn young_neighbours(profile: Profile) -> (K, MemcgId, i64) {
    let (mut k, t, task) = kernel(profile, 8192, 8192, None);
    mmap(&mut k, task, B, 2048, ANON_FILE);
    for i in 0..2048 {
        k.step(Op::Store { task, vpn: B + i }).unwrap();
    }
    // the first aging finds them all young, the second the odd pages only (forced, since the
    // four generations are in use)
    age(&mut k, t, "100", true);
    for i in (1..2048).step_by(2) {
        k.step(Op::Load { task, vpn: B + i }).unwrap();
    }
    age(&mut k, t, "100", true);
    for i in 0..2048 {
        k.step(Op::Load { task, vpn: B + i }).unwrap();
    }
    let activated = k.m.memcg_stat(t).get(Stat::Pgactivate);
    (k, t, activated)
}

#[test]
fn proactive_mm_walk_updates_neighbours_in_place() {
    use lrugen::reclaim::memory_reclaim;
    let run = |on: bool| {
        let (mut k, t, activated) = young_neighbours(with(Profile::V6_12, "proactive_mm_walk", on));
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "1M");
        assert_eq!(r.error, None);
        let ms = k.m.memcg_stat(t);
        (ms.get(Stat::Pgactivate) - activated, ms.get(Stat::PgstealDirect))
    };
    let (off, on) = (run(false), run(true));
    eprintln!("pgactivate {} -> {}, pgsteal {} -> {}", off.0, on.0, off.1, on.1);
    assert!(
        off.1 > 0 && on.1 > 0,
        "memory.reclaim reclaimed nothing: {off:?} {on:?}"
    );
    assert!(
        off.0 > on.0 + 64,
        "without the walk the neighbours are activated: pgactivate {} against {}",
        off.0,
        on.0
    );
}

/// Every kernel: a debugfs write runs under a page-table walk of its own (`lru_gen_seq_write`:
/// `set_mm_walk(NULL, true)` before its commands, `clear_mm_walk` after), so the look-around of a
/// `-` eviction moves young neighbours in place instead of activating them, as `memory.reclaim`
/// without a walk does (6.1's `set_mm_walk(pgdat)`; here 6.12 with `proactive_mm_walk` off). On
/// the same young set: 60 activations (the young targets) against 1,084 (every neighbour too);
/// without the write's walk the eviction counts 1,084 as well.
#[test]
fn a_debugfs_eviction_runs_under_a_walk() {
    use lrugen::reclaim::memory_reclaim;
    let base = with(Profile::V6_12, "proactive_mm_walk", false);
    let (mut k, t, activated) = young_neighbours(base);
    let id = debugfs_id(&k);
    // the generation of the even pages, the oldest with pages
    let oldest = k.p.lrugen(t, 0).max_seq - 2;
    let cmd = format!("- {id} 0 {oldest} 100 256");
    k.p.debugfs_write(&mut k.m, &cmd)
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    let debugfs = k.m.memcg_stat(t).get(Stat::Pgactivate) - activated;
    assert!(
        k.m.memcg_stat(t).get(Stat::PgscanDirect) >= 256,
        "{cmd} scanned too little"
    );
    let (mut k, t, activated) = young_neighbours(base);
    assert_eq!(memory_reclaim::write(&mut k.m, &mut k.p, t, "1M").error, None);
    let no_walk = k.m.memcg_stat(t).get(Stat::Pgactivate) - activated;
    eprintln!("pgactivate: debugfs {debugfs}, memory.reclaim without a walk {no_walk}");
    assert!(
        debugfs * 4 < no_walk,
        "a debugfs eviction activates its young neighbours: pgactivate {debugfs} against {no_walk} without a walk"
    );
}

/// The `memory.stat` switches (text only): each adds its kernel change's lines and nothing else,
/// from 6.1 and from the presets that have it; a line that also needs another change (6.11's
/// `pgdemote_khugepaged` needs 6.3's split of the khugepaged counters) waits for it.
#[test]
fn memory_stat_switches_add_their_lines() {
    use lrugen::mm::memory_stat::lines;
    let names = |p: Profile| -> Vec<&'static str> { lines(&p.switches).map(|l| l.name).collect() };
    let demote_and_numa = [
        "pgdemote_kswapd",
        "pgdemote_direct",
        "pgdemote_khugepaged",
        "pgdemote_proactive",
        "pgpromote_success",
        "numa_pages_migrated",
        "numa_pte_updates",
        "numa_hint_faults",
    ];
    let cases: [(&str, &[&str]); 7] = [
        (
            "memcg_khugepaged_reclaim_stats",
            &["pgscan_khugepaged", "pgsteal_khugepaged", "pgdemote_khugepaged"],
        ),
        ("memcg_zswap_writeback_stat", &["zswpwb"]),
        ("memcg_thp_swpout_stats", &["thp_swpout", "thp_swpout_fallback"]),
        ("memcg_numa_balancing_stats", &demote_and_numa),
        ("memcg_swap_zero_stats", &["swpin_zero", "swpout_zero"]),
        ("memcg_swap_io_stats", &["pswpin", "pswpout"]),
        ("memcg_zswap_incomp_stat", &["zswap_incomp"]),
    ];
    for (name, added) in cases {
        for base in [Profile::V6_1, Profile::V6_12, Profile::V7_2] {
            let (off, on) = (names(with(base, name, false)), names(with(base, name, true)));
            let gone: Vec<_> = off.iter().filter(|n| !on.contains(n)).collect();
            let new: Vec<&str> = on.iter().copied().filter(|n| !off.contains(n)).collect();
            assert!(gone.is_empty(), "{name} from {}: {gone:?}", base.name());
            assert!(!new.is_empty(), "{name} from {} adds nothing", base.name());
            assert!(
                new.iter().all(|n| added.contains(n)),
                "{name} from {}: {new:?}",
                base.name()
            );
            // with every other change of 7.2 on, all of them
            if base == Profile::V7_2 {
                let (mut new, mut all) = (new.clone(), added.to_vec());
                new.sort_unstable();
                all.sort_unstable();
                assert_eq!(new, all, "{name} on 7.2");
            }
        }
    }
}

/// `eevdf_run_to_parity` (6.6, EEVDF with `RUN_TO_PARITY`): on a machine with the scheduler's
/// slice (`MachineConfig::sched_slice_ns`, 0.75 ms as on one CPU), a kswapd woken inside the
/// running task's slice waits for its end, so an anon squeeze (no memcg limit, swap on zram,
/// nothing that waits for a read) reclaims directly; off (6.1's CFS), kswapd runs inside the
/// allocation that woke it and keeps the node above its min watermark. Either way the same pages
/// are reclaimed in all, give or take a batch. Without a slice the switch changes nothing.
#[test]
fn eevdf_run_to_parity_lets_the_task_reclaim_directly_before_kswapd_runs() {
    use lrugen::sim::{self, PolicyKind};
    let run = |policy: PolicyKind, profile: Profile, slice_ns: u64| {
        let mut machine = MachineConfig::simple(2_048, 8_192);
        machine.zram_ratio = Some(3.0);
        machine.sched_slice_ns = slice_ns;
        let mut cfg = common::anon_squeeze(machine, policy);
        cfg.mglru = MglruConfig {
            profile,
            ..Default::default()
        };
        sim::run(&cfg, None, &mut |_, _| {}).expect("run")
    };
    let name = "eevdf_run_to_parity";
    for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
        for base in [Profile::V6_12, Profile::V7_2] {
            let (off, on) = (
                run(policy, with(base, name, false), 750_000),
                run(policy, with(base, name, true), 750_000),
            );
            let direct = |r: &sim::RunResult| r.vm(Stat::PgstealDirect);
            let stalls = |r: &sim::RunResult| r.vm(Stat::AllocstallNormal);
            let kswapd = |r: &sim::RunResult| r.vm(Stat::PgstealKswapd);
            eprintln!(
                "{policy:?} {}: off: allocstall {} direct {} kswapd {}; on: {} {} {}",
                base.label(),
                stalls(&off),
                direct(&off),
                kswapd(&off),
                stalls(&on),
                direct(&on),
                kswapd(&on)
            );
            assert_eq!((stalls(&off), direct(&off)), (0, 0), "{policy:?}: kswapd keeps up");
            assert!(stalls(&on) > 0 && direct(&on) > 0, "{policy:?}: the task stalled");
            assert!(kswapd(&on) < kswapd(&off) && kswapd(&on) > 0, "{policy:?}");
            let total = |r: &sim::RunResult| direct(r) + kswapd(r);
            assert!(
                total(&on).abs_diff(total(&off)) <= 64,
                "{policy:?}: {} vs {}",
                total(&on),
                total(&off)
            );
            // a task that waits for a read lets kswapd run then: the same squeeze by buffered
            // reads of distinct file pages (each a miss), on a clock where hundreds of reads
            // fit in a slice, reclaims no more directly with the switch than without it
            let reads = |profile: Profile| {
                let mut machine = MachineConfig::simple(2_048, 0);
                machine.sched_slice_ns = 750_000;
                machine.clock.read_io_ns = 1_000;
                let mut cfg = lrugen::sim::RunConfig::new(
                    machine,
                    lrugen::sim::MemcgConfig::default(),
                    lrugen::workload::WorkloadSpec::FileRead {
                        files: 1,
                        file_pages: 8_000,
                        dist: lrugen::workload::dist::Dist::Uniform,
                        accesses: 6_000,
                    },
                    policy,
                );
                cfg.mglru = MglruConfig {
                    profile,
                    ..Default::default()
                };
                cfg.check = true;
                sim::run(&cfg, None, &mut |_, _| {}).expect("run")
            };
            let (r_off, r_on) = (reads(with(base, name, false)), reads(with(base, name, true)));
            eprintln!(
                "{policy:?} {}: reads: allocstall off {} on {}, kswapd off {} on {}",
                base.label(),
                stalls(&r_off),
                stalls(&r_on),
                kswapd(&r_off),
                kswapd(&r_on)
            );
            assert!(kswapd(&r_on) > 0, "{policy:?}: the reads squeeze the node");
            assert_eq!(stalls(&r_on), stalls(&r_off), "{policy:?}: reads end the slice");
            // no slice: the switch alone changes nothing
            let (a, b) = (
                run(policy, with(base, name, false), 0),
                run(policy, with(base, name, true), 0),
            );
            let all = |r: &sim::RunResult| Stat::ALL.iter().map(|&s| r.vm(s)).collect::<Vec<_>>();
            assert_eq!((a.misses, all(&a)), (b.misses, all(&b)), "{policy:?}");
        }
    }
}

/// `pcp_high_auto_tune` (6.7, "mm: PCP high auto-tuning"): on a machine with per-CPU page lists
/// (x86's DMA and DMA32 as a guest left them: DMA32's list holding 300 pages, `high` 400 between
/// `high_min` 60 and `high_max` 512, batch 7), a buffered read of twice the memory by a root task
/// (kswapd inline). Off (6.1): `high` stays at 400 and every refill takes one batch of 7. On: the
/// refills double over a run of allocations, and `high` moves within its bounds (down while
/// kswapd reclaims and the zone is below its high watermark), so the list ends elsewhere and the
/// pages the watermark checks see (the buddy allocator's, `nr_free_pages`) move with it.
#[test]
fn pcp_high_auto_tune_grows_the_list_and_frees_in_runs() {
    let name = "pcp_high_auto_tune";
    let run = |profile: Profile| {
        let mut m = Machine::new(common::x86_with_pcp_lists());
        m.debug_checks = true;
        let p = Classic::with_profile(&m, profile);
        let mut k = Kernel::new(m, p);
        // growths of DMA32's list by a read (refills, and later pages reclaim freed onto it)
        let mut refills = Vec::new();
        let task = k.create_mm(ROOT_MEMCG);
        let f = k.m.create_file("f", 16_384, Advice::Normal);
        for i in 0..16_384 {
            let before = k.m.nodes[0].zones[1].pcp.count;
            k.read_page(task, f, i).unwrap();
            let after = k.m.nodes[0].zones[1].pcp.count;
            if after > before + 1 {
                refills.push(after - before);
            }
        }
        assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
        let z = &k.m.nodes[0].zones[1];
        (z.pcp.high, refills, k.m.vmstat())
    };
    for base in [Profile::V6_1, Profile::V7_2] {
        let (off, on) = (run(with(base, name, false)), run(with(base, name, true)));
        eprintln!(
            "{}: off high {} refills {:?}; on high {} refills {:?}",
            base.label(),
            off.0,
            &off.1[..off.1.len().min(12)],
            on.0,
            &on.1[..on.1.len().min(12)]
        );
        assert_eq!(off.0, 400, "6.1 keeps high");
        assert_ne!(on.0, 400, "auto-tuning moved high");
        assert!((60..=512).contains(&on.0));
        // the first refills, long before reclaim frees anything onto the list: each takes a
        // batch and the read one page of it
        assert_eq!(&off.1[..6], &[6; 6], "one batch per refill");
        assert_eq!(&on.1[..6], &[6, 13, 27, 55, 111, 223], "doubling refills");
        assert_ne!(
            off.2.get(Stat::NrFreePages),
            on.2.get(Stat::NrFreePages),
            "the free pages the watermarks see"
        );
    }
}

/// `kswapd_clear_hopeless_balanced` (7.x, "mm/vmscan: mitigate spurious kswapd_failures reset
/// from direct reclaim"): a 64 MiB machine without swap whose root task fills it with anon down
/// to a few pages above the min watermark, so that kswapd, finding nothing to reclaim, gives up
/// on the node (`kswapd_failures` at `MAX_RECLAIM_RETRIES`); then a task of /t (`memory.max` 128
/// pages) reads 2,000 file pages, each past the limit a memcg reclaim that frees /t's own file
/// pages and leaves the node well below its high watermark. Off (6.1, 6.12): each such
/// successful pass resets the failures, so kswapd wakes again at the next allocation below the
/// low watermark and runs (`pageoutrun`). On (7.2): the node is not balanced, the failures stay,
/// and kswapd stays asleep. Both LRUs.
#[test]
fn kswapd_clear_hopeless_balanced_keeps_a_hopeless_kswapd_asleep() {
    const PAGES: u64 = 16_384;
    fn run<P: lrugen::reclaim::Policy>(mut k: Kernel<P>, t: MemcgId) -> (u32, i64) {
        k.m.memcgs[t].max = 128;
        k.m.debug_checks = false;
        let root = k.create_mm(ROOT_MEMCG);
        mmap(&mut k, root, B, PAGES as u32, ANON_FILE);
        let min = k.m.nodes[0].zones[0].wmark(lrugen::mm::node::WMARK_MIN);
        let mut vpn = B;
        while k.m.nodes[0].zones[0].free > min + 16 {
            k.step(Op::Store { task: root, vpn }).unwrap();
            vpn += 1;
        }
        assert_eq!(k.m.nodes[0].kswapd_failures, 16, "kswapd gave up on the node");
        let runs = k.m.events.get(Stat::Pageoutrun);
        let task = k.create_mm(t);
        let f = k.m.create_file("f", 2_000, Advice::Normal);
        for index in 0..2_000 {
            k.step(Op::Read { task, file: f, index }).unwrap();
        }
        lrugen::reclaim::check::check_invariants(&k.m, &k.p).unwrap();
        let stolen = k.m.lruvec_state(t, 0, Stat::PgstealDirect) + k.m.lruvec_state(t, 0, Stat::PgstealKswapd);
        assert!(stolen > 1_500, "/t's pages were reclaimed: {stolen}");
        (k.m.nodes[0].kswapd_failures, k.m.events.get(Stat::Pageoutrun) - runs)
    }
    let name = "kswapd_clear_hopeless_balanced";
    for base in [Profile::V6_12, Profile::V7_2] {
        let mglru = |profile| {
            let (k, t, _) = common::mglru_setup(profile, PAGES, 0, None);
            run(k, t)
        };
        let classic_lru = |profile| {
            let (k, t, _) = classic(profile, PAGES, 0, None);
            run(k, t)
        };
        for (lru, off, on) in [
            ("mglru", mglru(with(base, name, false)), mglru(with(base, name, true))),
            (
                "classic",
                classic_lru(with(base, name, false)),
                classic_lru(with(base, name, true)),
            ),
        ] {
            eprintln!(
                "{} {lru}: off failures {} kswapd runs {}; on {} {}",
                base.label(),
                off.0,
                off.1,
                on.0,
                on.1
            );
            assert!(off.1 > 0, "{lru}: revived kswapd ran");
            assert_eq!(on, (16, 0), "{lru}: kswapd stays hopeless");
        }
        // a node that is balanced (nothing but /t's pages on it): memcg reclaim's progress
        // revives kswapd either way (its `reclaim_idx` covers every zone)
        for on in [false, true] {
            let (mut k, t, task) = classic(with(base, name, on), PAGES, 0, Some(128));
            k.m.nodes[0].kswapd_failures = 16;
            let f = k.m.create_file("f", 500, Advice::Normal);
            for index in 0..500 {
                k.step(Op::Read { task, file: f, index }).unwrap();
            }
            assert!(k.m.lruvec_state(t, 0, Stat::PgstealDirect) > 0, "/t reclaimed");
            assert_eq!(k.m.nodes[0].kswapd_failures, 0, "{} on={on}", base.label());
        }
    }
}

/// `pcp_free_clears_hopeless` (7.x, `free_frozen_page_commit`'s `KSWAPD_CLEAR_HOPELESS_PCP`): two
/// nodes of 4,096 pages, each zone with an auto-tuned per-CPU list; each node's kswapd has given
/// up (`kswapd_failures` at `MAX_RECLAIM_RETRIES`) and each zone is marked `ZONE_BELOW_HIGH` with
/// all but a few of its pages allocated. Freeing them brings each zone back above its high
/// watermark, which clears the flag: on, node 0's kswapd is revived (node 1 follows it, a
/// fallback for its allocations), node 1's is not (no memory node follows it); off, neither.
#[test]
fn pcp_free_clears_hopeless_revives_kswapd_of_a_node_with_a_fallback() {
    use lrugen::mm::node::{PcpBoot, ZoneBoot, ZoneType};
    let name = "pcp_free_clears_hopeless";
    let run = |profile: Profile| {
        let mut cfg = MachineConfig::simple(4096, 0);
        cfg.nodes = vec![vec![(ZoneType::Normal, 4096)], vec![(ZoneType::Normal, 4096)]];
        let zone = || ZoneBoot {
            used: 0,
            pcp: Some(PcpBoot {
                count: 0,
                high: 200,
                high_min: 60,
                high_max: 512,
                batch: 7,
            }),
            ..Default::default()
        };
        cfg.zone_boot = vec![vec![zone()], vec![zone()]];
        let m = Machine::new(cfg);
        let p = Classic::with_profile(&m, profile);
        let mut k = Kernel::new(m, p);
        let mut failures = Vec::new();
        for node in 0..2 {
            let high = k.m.nodes[node].zones[0].wmark(lrugen::mm::node::WMARK_HIGH);
            let mut ids = Vec::new();
            while k.m.nodes[node].zones[0].free_frames() > 8 {
                ids.push(k.m.take_frame(node, 0).unwrap());
            }
            k.m.nodes[node].kswapd_failures = lrugen::reclaim::MAX_RECLAIM_RETRIES;
            k.m.nodes[node].zones[0].below_high = true;
            for id in ids {
                k.m.free_frame(id);
            }
            let z = &k.m.nodes[node].zones[0];
            assert!(
                !z.below_high && z.free > high,
                "node {node}: above its high watermark again"
            );
            failures.push(k.m.nodes[node].kswapd_failures);
        }
        failures
    };
    for base in [Profile::V6_12, Profile::V7_2] {
        let (off, on) = (run(with(base, name, false)), run(with(base, name, true)));
        assert_eq!(off, vec![16, 16], "{}: off, only reclaim revives kswapd", base.label());
        assert_eq!(on, vec![0, 16], "{}: on, node 0 has a fallback node", base.label());
    }
}

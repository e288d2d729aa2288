// SPDX-License-Identifier: GPL-2.0-only
//! Thrashing prevention against real kernels (issue 13, item 3): the fixtures of
//! `tests/fixtures/min_ttl/` (`scripts/regen-kernel-minttl.sh`, examples/kernel-matrix/min-ttl.toml:
//! Debian 6.12 and 7.2, MGLRU, two boots each) with `min_ttl_ms` 0 and 1000 under global pressure
//! (a 256 MiB guest, no memcg limit, the model on the guest's zones as in `tests/global.rs`) and
//! 1000 under a 32 MiB memcg limit, and the classic LRU with 1000 (which it ignores: the
//! contrast), replayed on the model with each kernel's preset.
//!
//! Checked against every boot: whether the OOM killer ended the replay (`oom_kill` in
//! `/proc/vmstat`, equal), where it did (the access ops done, populate pass included: the
//! replayer's last progress line before the kill, [`lrugen_kernel::OomKilled`], so the kill came
//! within [`lrugen_kernel::PROGRESS_EVERY`] ops after it; the model's within 10 % of that
//! interval), and misses and the kswapd and direct-reclaim counters with the tolerance of the
//! global-pressure fixtures ([`fidelity::within_boots`]: 10 %, or the boots' spread + 2 points,
//! or 50 events). A check out of tolerance fails unless listed in [`GAPS`] with the measured
//! numbers and the reason; a listed gap that has closed fails too. No qemu here.

use lrugen_kernel::fidelity::{self, Check, Compared};
use lrugen_kernel::{Capture, OomKilled, PROGRESS_EVERY};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where the OOM kill came: within 10 % of the kernel's.
const KILL_TOLERANCE: f64 = 0.10;

const DIRECT: &str = "direct reclaim: the kernel's allocations outrun kswapd (anon-gauss-ttl0, \
    while the 256 MiB region is populated and swapped in and out: 6.12 21,470/21,917 pages scanned \
    directly in 166/161 stalls, 7.2 14,834/16,450 in 103/112; the classic LRU 37,851-39,996 in \
    162-190; mixed-ttl1000 on 7.2: 0/238 in 0/4). The model's kswapd runs inline when woken and \
    restores the high watermark before the allocation retries, except that on these kernels \
    (`eevdf_run_to_parity`, 6.6) a kswapd woken inside the replayer's 0.75 ms scheduler slice \
    waits for its end (MachineConfig::sched_slice_ns), and the replayer meanwhile reclaims \
    directly. That gives the classic LRU 26,199 (6.12) and 36,971 (7.2, within tolerance) pages \
    scanned directly, in 268/237 stalls (9,241/14,224 stolen directly, 6.12's within tolerance, \
    against the kernel's 9,428-9,488/8,178-8,570; before the per-CPU free lists were modelled, \
    mm::node::Pcp, 35,291/39,278 in 336/375 stalls). MGLRU gets only 256/488 in 4/7 stalls: its \
    kswapd is woken less often and seldom inside a slice, while the kernel's kswapd, sharing the \
    one CPU, runs over many slices during which the replayer allocates. Which allocations stall \
    is known: a 7.2 MGLRU boot traced with --ftrace-stacktrace had 120 of its 123 direct \
    reclaims in the replayer's own mincore() (its GFP_USER buffer page, hence allocstall_normal), \
    which the model makes too (Step::alloc_page_first; its pgalloc then comes within 1 % of the \
    kernel's), and that changed little here: the page before each access only finds the node \
    below its min watermark sooner than the access's own fault would. The model's inline kswapd \
    takes no time; under the engine, where its passes do and swap is zram as in the guest, the \
    slice gives 768/16,934 pages in 12/19 stalls, each the kernel's kind (traced on 7.2: a median \
    of 70 pages scanned and reclaimed in 3 passes on both sides, and one long stall of 15,720 and \
    17,078 pages early on): the kernel stalls 6 times as often (docs/global-pressure.md)";

const KSWAPD_DOES_DIRECT: &str = "with less direct reclaim than the kernel (DIRECT; on the classic \
    LRU more, with stalls of fewer pages) the model's kswapd reclaims a different share of what \
    the kernel splits between kswapd and direct reclaim. The sums agree within 10 % (kernel \
    pgsteal_kswapd + pgsteal_direct against the model's: 6.12 MGLRU 53,053/53,216, 48,389; 7.2 \
    MGLRU 55,417/55,470, 55,038; 6.12 classic 50,890/50,898, 49,039; 7.2 classic 57,807/57,660, \
    56,971; pgscan 7.2 MGLRU 76,985/80,155, 73,879; 6.12 classic 147,287/146,988, 144,645; 7.2 \
    classic 150,950/150,468, 150,321). The model's kswapd is woken and runs more often \
    (pageoutrun and kswapd_low_wmark_hit_quickly: 6.12 MGLRU 100 against 28/32, classic 215 and \
    329 against 71-76 and 158-162; 3-6 times the kernel's before the scheduler slice, 111, 278 \
    and 343 before the per-CPU free lists; the CLOCK gap of tests/global.rs too). 6.12 classic's \
    pgsteal_kswapd, at the edge before the per-CPU lists (-10.1 %), is within tolerance with them \
    (-4 %); its pgscan_kswapd moved to the other edge: 118,016 (5 pages inside +10 % of boot 1) \
    with a list on DMA32 only, 118,446 (430 pages past it) once 6.12's DMA list is active too, \
    as 7.2's zoneinfo shows it is (`high: 0` there is a list not used yet, with its bounds)";
const MISSES_612: &str = "6.12 MGLRU: model 25,524 misses against 29,531/29,677 (-14 %), while its \
    anon refaults (25,993 against 24,534/24,254) and pswpout (48,502 against 53,015/53,178) are \
    within tolerance. The kernel's replayer counts about 5,100 misses more than the kernel counts \
    anon refaults; the model's misses are about as many as its refaults. Before mm::BootShmem the \
    guest's boot shmem was taken as used for good; mm::BootShmem gives the model the 2,111 pages the \
    kernel swaps out too (nr_shmem -2,346/-2,225, the model's -2,111). Before it, the model's misses \
    were within tolerance (28,696) only because its refaults were 20 % over the kernel's (29,178). \
    Which of the kernel's swap-ins find no shadow entry was not traced (7.2's misses and refaults \
    are both within tolerance)";

/// Known differences: (fixture group, check, why). Each is a model defect or a part of the guest
/// the model does not have, not a tolerance.
const GAPS: &[(&str, &str, &str)] = &[
    ("debian-6.12-mglru-anon-gauss-ttl0", "pgscan_direct", DIRECT),
    ("debian-6.12-mglru-anon-gauss-ttl0", "pgsteal_direct", DIRECT),
    ("debian-6.12-mglru-anon-gauss-ttl0", "allocstall", DIRECT),
    (
        "debian-6.12-mglru-anon-gauss-ttl0",
        "pgscan_kswapd",
        "kernel 68,249/66,887, model 56,582 (-16 %); with direct reclaim the kernel scans 89,719/\
         88,804 pages in all, 1.7 for each page it reclaims, the model 1.19: the kernel's reclaim \
         of a Gaussian anon set at 1.5x memory finds more young pages than the model's",
    ),
    (
        "debian-6.12-mglru-anon-gauss-ttl0",
        "pgsteal_kswapd",
        KSWAPD_DOES_DIRECT,
    ),
    ("debian-6.12-mglru-anon-gauss-ttl0", "pageoutrun", KSWAPD_DOES_DIRECT),
    (
        "debian-6.12-mglru-anon-gauss-ttl0",
        "kswapd_low_wmark_hit_quickly",
        KSWAPD_DOES_DIRECT,
    ),
    ("debian-6.12-mglru-anon-gauss-ttl0", "misses", MISSES_612),
    ("debian-7.2-mglru-anon-gauss-ttl0", "pgscan_direct", DIRECT),
    ("debian-7.2-mglru-anon-gauss-ttl0", "pgsteal_direct", DIRECT),
    ("debian-7.2-mglru-anon-gauss-ttl0", "allocstall", DIRECT),
    ("debian-7.2-mglru-anon-gauss-ttl0", "pgscan_kswapd", KSWAPD_DOES_DIRECT),
    ("debian-7.2-mglru-anon-gauss-ttl0", "pgsteal_kswapd", KSWAPD_DOES_DIRECT),
    // the classic LRU (no TTL: the contrast)
    ("debian-6.12-classic-anon-gauss-ttl1000", "pgscan_direct", DIRECT),
    (
        "debian-6.12-classic-anon-gauss-ttl1000",
        "pgscan_kswapd",
        KSWAPD_DOES_DIRECT,
    ),
    ("debian-6.12-classic-anon-gauss-ttl1000", "allocstall", DIRECT),
    (
        "debian-6.12-classic-anon-gauss-ttl1000",
        "pageoutrun",
        KSWAPD_DOES_DIRECT,
    ),
    (
        "debian-6.12-classic-anon-gauss-ttl1000",
        "kswapd_low_wmark_hit_quickly",
        KSWAPD_DOES_DIRECT,
    ),
    (
        "debian-6.12-classic-anon-gauss-ttl1000",
        "workingset_refault_anon",
        "kernel 17,987/17,470, model 26,622 (+50 %) while misses (26,157 against 26,775/27,102) \
         and pswpout (49,039 against 50,853/50,860) are within tolerance: the model finds a shadow \
         entry for more of its swap-ins than 6.12 does (6.12 MGLRU's were 20 % over before the \
         guest's boot shmem was modelled, and are within tolerance now); 7.2 classic's are \
         within tolerance",
    ),
    ("debian-7.2-classic-anon-gauss-ttl1000", "pgsteal_direct", DIRECT),
    ("debian-7.2-classic-anon-gauss-ttl1000", "allocstall", DIRECT),
    (
        "debian-7.2-classic-anon-gauss-ttl1000",
        "pgsteal_kswapd",
        KSWAPD_DOES_DIRECT,
    ),
    (
        "debian-7.2-classic-anon-gauss-ttl1000",
        "pageoutrun",
        KSWAPD_DOES_DIRECT,
    ),
    (
        "debian-7.2-classic-anon-gauss-ttl1000",
        "kswapd_low_wmark_hit_quickly",
        KSWAPD_DOES_DIRECT,
    ),
    (
        "debian-7.2-mglru-memcg-anon-gauss-ttl1000",
        "pgscan_direct",
        "memcg reclaim (counted in the node's pgscan_direct on 7.2): kernel 11,280/10,861, model \
         9,534 (-15.5 %/-12.2 %) while pgsteal_direct is within tolerance (7,514/7,367, model 7,424): \
         the kernel's memcg reclaim scans 3,500-3,800 pages it does not reclaim, the model's 2,110",
    ),
    (
        "debian-6.12-mglru-mixed-ttl1000",
        "workingset_refault_file",
        "kernel 1,362/1,384, model 1,202 (-12 %/-13 %): as without the TTL (tests/global.rs, \
         debian-6.12-mglru-mixed: the model has the kernel's kswapd counters but evicts other file \
         pages than the kernel)",
    ),
    (
        "debian-6.12-mglru-mixed-ttl1000",
        "pswpout",
        "kernel 256/0, model 448: all the guest's own boot shmem (mm::BootShmem), which the kernel \
         swaps out in one boot of two and the model in its kswapd's runs at low priorities (ROOT_72 \
         in tests/global.rs: 384 without the TTL)",
    ),
    (
        "debian-7.2-mglru-mixed-ttl1000",
        "pgscan_kswapd",
        "kernel 16,034/16,093, model 10,698 (-33 %) while pgsteal_kswapd is within tolerance \
         (10,865/9,932, model 10,491): as without the TTL (tests/global.rs, debian-7.2-mglru-mixed, \
         -22 %), the kernel's kswapd scans thousands of pages it does not reclaim: DAMON_STAT's \
         young pages. These boots ran with it on; two boots of the same command with \
         `--damon-stat off` (2026-12-07, not fixtures) scan 10,750/11,696 and reclaim \
         10,476/11,370, and the model's 10,698 is within tolerance of both",
    ),
    ("debian-7.2-mglru-mixed-ttl1000", "pgscan_direct", DIRECT),
    ("debian-7.2-mglru-mixed-ttl1000", "pgsteal_direct", DIRECT),
    (
        "debian-7.2-mglru-mixed-ttl1000",
        "workingset_refault_anon",
        "kernel 494/467, model 393 (-20 %/-16 %); without the TTL (tests/global.rs) 543/404 against \
         331: the model swaps out the root memcg's boot shmem where the kernel hardly does (ROOT_72 \
         there), and so fewer of the workload's anon pages, which would refault",
    ),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/min_ttl")
}

fn groups() -> BTreeMap<String, Vec<Capture>> {
    fidelity::groups(&dir()).unwrap()
}

/// The kill's place judged against every boot: the kernel's kill came within
/// [`PROGRESS_EVERY`] ops after its last progress line, the model's must be within 10 % of
/// somewhere in that interval.
fn kill_within(kernel: &[OomKilled], model: u64) -> bool {
    kernel.iter().all(|k| {
        let (lo, hi) = (k.ops, k.ops + PROGRESS_EVERY - 1);
        model as f64 >= lo as f64 * (1.0 - KILL_TOLERANCE) && model as f64 <= hi as f64 * (1.0 + KILL_TOLERANCE)
    })
}

struct Row {
    compared: Compared,
    /// The boots' kills and the model's.
    kernel_kills: Vec<Option<OomKilled>>,
    model_kill: Option<OomKilled>,
}

fn rows() -> &'static Vec<Row> {
    static ROWS: OnceLock<Vec<Row>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let mut rows = Vec::new();
        for (group, boots) in groups() {
            let mut g = fidelity::global_group(&group, &boots).unwrap();
            let kernel_kills: Vec<Option<OomKilled>> = boots.iter().map(|b| b.run.oom_killed).collect();
            let kills: Vec<u64> = boots
                .iter()
                .map(|b| fidelity::vmstat_sum(&b.run, &["oom_kill"]))
                .collect();
            let model_kills = g.model.vm(lrugen::mm::vmstat::Stat::OomKill).max(0) as u64;
            let show = |v: &[u64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/");
            g.compared.checks.insert(
                0,
                Check {
                    what: "oom_kill",
                    kernel: kills.iter().sum::<u64>() / kills.len() as u64,
                    model: model_kills,
                    ok: kills.iter().all(|&k| k == model_kills),
                    detail: format!("boots {}", show(&kills)),
                    boots: kills.clone(),
                    tolerance: 0.0,
                },
            );
            if let Some(k) = kernel_kills.iter().flatten().next() {
                let at: Vec<OomKilled> = kernel_kills.iter().flatten().copied().collect();
                let ops: Vec<u64> = at.iter().map(|k| k.ops).collect();
                // 0 when the model did not kill (the oom_kill check says so)
                let model = g.oom_killed.map_or(0, |k| k.ops);
                g.compared.checks.insert(
                    1,
                    Check {
                        what: "oom_kill at op",
                        kernel: k.ops,
                        model,
                        ok: at.len() == boots.len() && kill_within(&at, model),
                        detail: format!("boots {} (+{PROGRESS_EVERY})", show(&ops)),
                        boots: ops,
                        tolerance: KILL_TOLERANCE,
                    },
                );
            }
            rows.push(Row {
                model_kill: g.oom_killed,
                compared: g.compared,
                kernel_kills,
            });
        }
        rows
    })
}

#[test]
fn every_fixture_is_what_its_name_says() {
    let g = groups();
    assert!(g.len() >= 4, "the groups of examples/kernel-matrix/min-ttl.toml");
    for (group, boots) in &g {
        for b in boots {
            let ttl = b.settings.min_ttl_ms.unwrap_or(0);
            let named = if group.ends_with("-ttl1000") { 1000 } else { 0 };
            assert_eq!(ttl, named, "{group}: min_ttl_ms");
            let lru = if group.contains("-classic-") {
                "classic"
            } else {
                "mglru"
            };
            assert_eq!(b.settings.lru, lru, "{group}");
            let global = !group.contains("-memcg-");
            assert_eq!(b.settings.memcg_max_bytes == 0, global, "{group}: memory.max");
            if global {
                assert_eq!(
                    b.run.global_zones().iter().filter(|z| z.managed > 0).count(),
                    2,
                    "{group}"
                );
            }
            // a kill is recorded with the OOM killer's count, and a run without one ran to its end
            let kills = fidelity::vmstat_sum(&b.run, &["oom_kill"]);
            match b.run.oom_killed {
                Some(k) => {
                    assert_eq!(kills, 1, "{group}");
                    assert_eq!(b.run.memory_events.get("oom_kill"), Some(&1), "{group}");
                    assert!(k.ops > 0 && k.accesses <= k.ops, "{group}: {k:?}");
                }
                None => {
                    assert_eq!(kills, 0, "{group}");
                    assert_eq!(b.run.accesses, 100_000, "{group}");
                }
            }
        }
    }
}

/// The kernels' own behaviour, which the model's comparison rests on: under global pressure a
/// TTL of 1000 ms OOM-kills the Gaussian anon workload (kswapd's first pass finds /t's
/// generations, made as the replay began, younger than a second) and a TTL of 0 does not; under a
/// memcg limit kswapd never runs and nothing is killed; nor is anything on the classic LRU.
#[test]
fn the_kernels_kill_under_global_pressure_only() {
    for (group, boots) in groups() {
        for b in &boots {
            let killed = b.run.oom_killed.is_some();
            let kswapd_runs = fidelity::vmstat_sum(&b.run, &["pageoutrun"]);
            // the classic LRU has no TTL
            if group.ends_with("-anon-gauss-ttl1000") && !group.contains("-memcg-") && !group.contains("-classic-") {
                assert!(killed, "{group}");
                assert_eq!(kswapd_runs, 1, "{group}: killed in kswapd's first pass");
            } else {
                assert!(!killed, "{group}");
            }
            if group.contains("-memcg-") {
                assert_eq!(kswapd_runs, 0, "{group}");
            }
        }
    }
}

#[test]
fn the_model_against_the_kernel_with_min_ttl() {
    let rows = rows();
    let table = fidelity::boots_table(rows.iter().map(|r| &r.compared));
    for r in rows {
        let c = &r.compared;
        // the kill's record is there exactly when the count says so, on both sides
        assert_eq!(
            r.model_kill.is_some(),
            c.check("oom_kill").is_some_and(|k| k.model > 0),
            "{}",
            c.name
        );
        assert!(r
            .kernel_kills
            .iter()
            .all(|k| k.is_some() == r.kernel_kills[0].is_some()));
    }
    eprintln!("{table}");
    let compared: Vec<Compared> = rows.iter().map(|r| r.compared.clone()).collect();
    if let Err(e) = fidelity::unexplained(&compared, GAPS) {
        panic!("{e}\n\n{table}");
    }
}

#[test]
fn the_kill_is_judged_within_ten_percent_of_the_interval() {
    let k = [OomKilled {
        ops: 41_000,
        accesses: 0,
    }];
    assert!(kill_within(&k, 41_500));
    assert!(kill_within(&k, 36_900) && !kill_within(&k, 36_800));
    assert!(kill_within(&k, 46_198) && !kill_within(&k, 46_200));
}

/// `lrugen kernel`'s report of a killed run says where each side's replay ended, and says
/// nothing of a kill where neither was killed.
#[test]
fn the_report_says_where_each_side_was_killed() {
    let g = groups();
    for (group, killed) in [
        ("debian-7.2-mglru-anon-gauss-ttl1000", true),
        ("debian-7.2-mglru-anon-gauss-ttl0", false),
    ] {
        let boots = &g[group];
        let r = fidelity::global_group(group, boots).unwrap();
        let mut report =
            lrugen_kernel::report::Report::build(&boots[0].run, &r.model, String::new(), boots[0].settings.clone())
                .unwrap();
        report.model_oom_killed = r.oom_killed;
        let table = report.table();
        if killed {
            let k = boots[0].run.oom_killed.unwrap();
            let m = r.oom_killed.unwrap();
            let want = format!(
                "OOM kill: kernel killed after {}-{} access ops (0 measured), model killed after {} access ops (0 measured)",
                k.ops,
                k.ops + PROGRESS_EVERY - 1,
                m.ops
            );
            assert!(table.contains(&want), "{group}: {want}\n{table}");
        } else {
            assert!(!table.contains("OOM kill"), "{group}\n{table}");
        }
    }
}

/// The scheduler slice a woken kswapd waits for (`eevdf_run_to_parity`) is that of the one vCPU
/// the replayer shares with it: the 7.2 classic Gaussian fixture reclaims directly at its own
/// layout (one vCPU) and not at all when the model is told the guest had a second vCPU, where
/// kswapd runs at once; nor on the 6.1 preset, which has no EEVDF.
#[test]
fn kswapd_waits_for_the_slice_of_a_shared_cpu() {
    use lrugen::mm::vmstat::Stat;
    use lrugen_kernel::model;
    let groups = groups();
    let c = &groups["debian-7.2-classic-anon-gauss-ttl1000"][0];
    let ops = c.ops().unwrap();
    let settings = fidelity::settings_of(&c.settings, &c.run);
    let profile = model::profile_for_release(&c.run.kernel_release);
    let cfg = model::config(&settings, profile).unwrap();
    let layout = c.layout(&ops);
    assert!(layout.cpus <= 1, "the fixture's guest had one vCPU");
    let direct = |cfg: &lrugen::sim::RunConfig, layout: &model::Layout| {
        model::run_tasks_at(&ops, cfg, layout).unwrap().0.vm(Stat::PgscanDirect)
    };
    assert!(direct(&cfg, &layout) > 10_000);
    let two = model::Layout {
        cpus: 2,
        ..layout.clone()
    };
    assert_eq!(direct(&cfg, &two), 0);
    let mut v6_1 = cfg.clone();
    v6_1.mglru.profile = lrugen::reclaim::mglru::Profile::V6_1;
    assert_eq!(direct(&v6_1, &layout), 0);
}

// SPDX-License-Identifier: GPL-2.0-only
//! The model against real kernels under global pressure (issue 13, item 5): the fixtures of
//! `tests/fixtures/global/` (a mixed file + anon workload with no memcg limit in a 256 MiB guest,
//! Debian 6.12 and 7.2, MGLRU and classic, two boots each, and 7.2 again with DAMON_STAT off;
//! `scripts/regen-kernel-global.sh`)
//! replayed on the model with the guest's own zones (DMA and DMA32 with their managed pages, the
//! pages the kernel used before the workload, their watermarks and `lowmem_reserve`, read off its
//! `/proc/zoneinfo`: `lrugen_kernel::model::global_machine`) and its kernel's preset.
//!
//! Each counter is judged against every boot: within 10 % of each (or 50 events), the tolerance
//! issue 13 asks of the direct-reclaim and kswapd counters, widened to the boots' own spread
//! plus 2 points where the kernel moves more than that from boot to boot
//! ([`fidelity::within_boots`]). A counter out of
//! it fails unless it is listed in [`GAPS`] with the measured numbers and the reason; a listed gap
//! that has closed fails too, so the list stays true. No qemu here.

use lrugen_kernel::fidelity::{self, Compared};
use lrugen_kernel::Capture;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const DIRECT: &str = "direct reclaim: of each kernel's two boots one reclaims directly (6.12 classic \
    324 pages scanned, 6.12 MGLRU 256, 7.2 classic 264, 7.2 MGLRU 1,308, in 2-12 stalls, mostly \
    allocstall_normal: the replayer's mincore() buffer page, GFP_USER) and the other not at all; with DAMON_STAT off on 7.2, seven \
    boots of eight do (classic 0-2,906 pages, MGLRU 294-1,644); the model never does. Inline, \
    its kswapd brings the node back to the high watermark before the allocation retries; a kswapd \
    woken inside the replayer's scheduler slice waits for the slice's end (`eevdf_run_to_parity`, \
    MachineConfig::sched_slice_ns: what gives the anon fixtures of tests/min_ttl.rs their direct \
    reclaim), but here each allocation after the populate pass waits for a read, which ends the \
    slice and lets kswapd run. Under the virtual-time engine, kswapd a task of its own racing the \
    replay (example global-engine, one CPU or two), it keeps up too; with the slice on one CPU it \
    reclaims directly on classic, more than the kernel (7.2 DAMON-off 7,343 pages). The \
    kernel's 187k pages allocated a boot for a workload of about 55k are mostly the replayer's \
    mincore() page, one per access; the model allocates it too (Step::alloc_page_first: a 7.2 \
    guest traced with --ftrace-stacktrace had 120 of 123 direct reclaims there), and it finds \
    the node below its min watermark no more often than the accesses did. allocstall itself \
    (0-12 stalls) is within the 50-event floor";
const CLOCK: &str = "kswapd's short sleep is 100 ms of the guest's clock, which under -icount \
    sleep=off runs at 0.2-1 ms per disk read in calm windows and jumps by seconds elsewhere (the \
    windows' CLOCK_MONOTONIC). The model runs on that clock, each window's time shared evenly over \
    its steps (model::Layout::guest_clock; on GUEST_CLOCK's 10 ms a read, 6.12 classic gave \
    pageoutrun 166, low 29, high 117, now 123, 117 and 1, within tolerance), but within a window \
    the kernel's reads come in bursts the model does not see: on 7.2 classic the model counts \
    kswapd_high_wmark_hit_quickly 162 (kernel 46/25; 229 before the per-CPU free lists, \
    mm::node::Pcp; 464 before), kswapd_low_wmark_hit_quickly 152 (229/266; 160, 43) and \
    pageoutrun 479 (328/330; 548, 569)";
const SCAN_SPLIT: &str = "kernel 7,106/9,480, model 5,606 (-21 %/-41 %; 4,939 before the per-CPU \
    free lists, mm::node::Pcp): the kernel's kswapd scans \
    almost only file pages (pgscan_file 7,056 of boot 1's 7,106, pgscan_anon 374) and leaves \
    about 2,750 of them unreclaimed, the model scans about 3,890 file pages and reclaims them all, \
    and 1,036 anon pages (40 of them the root's shmem, swapped out). On GUEST_CLOCK (before model::Layout::guest_clock) the total was within tolerance \
    (8,378) only as 4,416 anon pages scanned made up for the file pages; the kernel's pgrefill \
    2,322 with pgdeactivate 130 says its active file list holds referenced executable pages \
    (rotated, not deactivated) of the guest's own, which the model does not have (as its boot \
    shmem was before mm::BootShmem)";
const ROOT_72: &str = "7.2 MGLRU reclaims the root memcg (the guest's boot shmem, mm::BootShmem) \
    where the kernel mostly does not: nr_shmem falls by 0-81 pages in the six untraced boots with \
    DAMON_STAT off (-81, 0, -28, 0 in the fixtures, -30, -29 before) and by 39/676 with it on; the \
    model's by 713 and 450. A traced boot (--ftrace-buffer 2M, counters as untraced) shows the \
    root's lruvec in evict_folios 5 times over the run (10 pages scanned) against /t's 732, both \
    aging twice (root, /t, root, /t; the model /t, root, root, /t), and another traced boot took \
    1,224 shmem pages: which memcg the memcg LRU's random bins put first after the last aging \
    decides it. After /t's last aging the model's root sits in the old generation with /t and is \
    visited at every kswapd run (about 40 times, 25-115 pages each). With four DAMON-off boots the \
    spread takes the model's anon counters in; with the two DAMON-on boots (and 6.12 MGLRU's \
    two, 320/128 against the model's 384) it does not";
const PG_STEAL_72: &str = "7.2 MGLRU kswapd's reclaimed pages, at the tolerance's edge of two groups \
    the kernel puts 16 % apart: with DAMON_STAT on it reclaims 10,506/10,272, with it off \
    9,089/8,766/9,567/8,317. Every boot within 10 % (or the boots' spread + 2 %) takes at least \
    9,456 for the first and at most 9,731 for the second; the model reclaims 9,530 (within) and \
    9,766 at the two groups' layouts, the second 35 above. Both were within before kswapd waited \
    for the replayer's scheduler slice (`eevdf_run_to_parity`: 9,536 and 9,712); with the slice \
    and before the replayer's mincore() page (Step::alloc_page_first) they were 9,397 and 9,755. \
    What the DAMON-on group lacks is DAMON's kept pages (the pgscan_kswapd gap above) and \
    ROOT_72's root-memcg swap-outs, which take the place of the workload's";
/// Known differences: (fixture group, counter, why). Each is a model defect (or a part of the
/// guest the model does not have), not a tolerance.
const GAPS: &[(&str, &str, &str)] = &[
    ("debian-6.12-classic-mixed", "pgscan_direct", DIRECT),
    ("debian-6.12-classic-mixed", "pgsteal_direct", DIRECT),
    (
        "debian-6.12-classic-mixed",
        "pgsteal_kswapd",
        "kernel 4,297/4,561, model 4,001 (-7 %/-12 %), with its file refaults (812/812, model 710): \
         the kernel reclaims 13/102 of its boot shmem pages too (the model 40) and frees fewer \
         file pages than it needs for them; which of the kernel's other allocations take the rest \
         is not known",
    ),
    (
        "debian-6.12-classic-mixed",
        "workingset_refault_file",
        "kernel 812/812, model 710 (-13 %): see pgsteal_kswapd",
    ),
    ("debian-6.12-classic-mixed", "pgscan_kswapd", SCAN_SPLIT),
    ("debian-6.12-mglru-mixed", "pgscan_direct", DIRECT),
    ("debian-6.12-mglru-mixed", "pgsteal_direct", DIRECT),
    ("debian-6.12-mglru-mixed", "pswpout", ROOT_72),
    (
        "debian-6.12-mglru-mixed",
        "workingset_refault_file",
        "kernel 1,316/1,318, model 1,181 (-10.3 %; -11.8 % before the per-CPU free lists, \
         mm::node::Pcp; -9.6 % before the replayer's mincore() page \
         was modelled, Step::alloc_page_first, which wakes kswapd at the first access below the \
         low watermark instead of at the next page-cache allocation, and ends its short sleeps \
         sooner): the model's kswapd reclaims 5,054 pages against 5,246/5,118 and its file \
         refaults fall by more than that; which of the kernel's evictions the extra refaults \
         are of has not been traced",
    ),
    ("debian-7.2-classic-mixed", "pgscan_direct", DIRECT),
    ("debian-7.2-classic-mixed", "pgsteal_direct", DIRECT),
    ("debian-7.2-classic-mixed", "pageoutrun", CLOCK),
    ("debian-7.2-classic-mixed", "kswapd_low_wmark_hit_quickly", CLOCK),
    ("debian-7.2-classic-mixed", "kswapd_high_wmark_hit_quickly", CLOCK),
    (
        "debian-7.2-mglru-mixed",
        "pgscan_kswapd",
        "kernel 12,672/12,540, model 9,712 (-23 %) while it reclaims 9,530: the \
         kernel's kswapd scans 2,166/2,268 pages it does not reclaim, the model's about 160. They \
         are DAMON_STAT's: its kdamond sets PG_young on the pages it samples, which eviction \
         counts as a reference and keeps. The same workload booted with `--damon-stat off` (group \
         debian-7.2-mglru-mixed-damon-off, four boots) scans 8,476-9,849, and the model's 9,969 \
         is within tolerance there",
    ),
    ("debian-7.2-mglru-mixed-damon-off", "pgsteal_kswapd", PG_STEAL_72),
    ("debian-7.2-mglru-mixed-damon-off", "pgscan_direct", DIRECT),
    ("debian-7.2-mglru-mixed-damon-off", "pgsteal_direct", DIRECT),
    ("debian-7.2-mglru-mixed", "pgscan_direct", DIRECT),
    ("debian-7.2-mglru-mixed", "pgsteal_direct", DIRECT),
    ("debian-7.2-mglru-mixed", "workingset_refault_anon", ROOT_72),
    ("debian-7.2-classic-mixed-damon-off", "pgscan_direct", DIRECT),
    ("debian-7.2-classic-mixed-damon-off", "pgsteal_direct", DIRECT),
    ("debian-7.2-classic-mixed-damon-off", "pageoutrun", CLOCK),
    (
        "debian-7.2-classic-mixed-damon-off",
        "kswapd_low_wmark_hit_quickly",
        CLOCK,
    ),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/global")
}

/// The fixtures by group (`debian-SERIES-LRU-SHAPE`), each with its boots in order.
fn groups() -> BTreeMap<String, Vec<Capture>> {
    fidelity::groups(&dir()).unwrap()
}

/// The model's run of each group, against its boots: one [`Compared`] per group, a
/// [`fidelity::Check`] per counter (`kernel` the boots' mean, `boots` each one's;
/// [`fidelity::global_group`]).
fn rows() -> &'static Vec<Compared> {
    static ROWS: OnceLock<Vec<Compared>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let mut rows = Vec::new();
        for (group, boots) in groups() {
            assert_eq!(
                boots[0].settings.memcg_max_bytes, 0,
                "{group}: a global-pressure fixture has no memcg limit"
            );
            let g = fidelity::global_group(&group, &boots).unwrap();
            assert!(
                g.cfg.memcg.max.is_none() && g.cfg.machine.lowmem_reserve,
                "{group}: the model runs on the guest's zones"
            );
            rows.push(g.compared);
        }
        rows
    })
}

#[test]
fn every_global_pressure_fixture_has_the_guests_zones() {
    let g = groups();
    assert!(
        g.len() >= 6,
        "the four fixture groups of examples/kernel-matrix/global.toml and the two of global-damon-off.toml"
    );
    for (group, boots) in &g {
        for b in boots {
            let zones = b.run.global_zones();
            let names: Vec<&str> = zones
                .iter()
                .filter(|z| z.managed > 0)
                .map(|z| z.name.as_str())
                .collect();
            // a 256 MiB x86 guest: DMA and DMA32, no Normal zone
            assert_eq!(names, ["DMA", "DMA32"], "{group}");
            // DMA keeps DMA32's managed pages at boot / 256 from user allocations
            let dma = &zones[0];
            assert!(
                dma.protection[3] > 150 && dma.protection[3] < 200,
                "{group}: {:?}",
                dma.protection
            );
        }
    }
}

#[test]
fn the_model_against_the_kernel_under_global_pressure() {
    let rows = rows();
    let table = fidelity::boots_table(rows);
    eprintln!("{table}");
    if let Err(e) = fidelity::unexplained(rows, GAPS) {
        panic!("{e}\n\n{table}");
    }
}

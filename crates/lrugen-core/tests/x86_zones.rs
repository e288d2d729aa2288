// SPDX-License-Identifier: GPL-2.0-only
//! A machine laid out as x86 builds it (`MachineConfig::x86`: DMA below 16 MiB, DMA32 above, no
//! Normal zone under 4 GiB): the DMA zone's `lowmem_reserve` keeps user allocations out of its
//! last pages (`setup_per_zone_lowmem_reserve`, `zone_watermark_ok`), and kswapd, run inline,
//! sleeps as `kswapd_try_to_sleep` does: a wakeup within its short sleep counts
//! `kswapd_low_wmark_hit_quickly`, a node below its high watermark at the end of it counts
//! `kswapd_high_wmark_hit_quickly` and has kswapd reclaim again (`pageoutrun`).

mod common;

use lrugen::kernel::Kernel;
use lrugen::mm::memcg::ROOT_MEMCG;
use lrugen::mm::node::{ZoneType, WMARK_HIGH, WMARK_LOW, WMARK_MIN};
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::alloc::KSWAPD_SHORT_SLEEP_NS;
use lrugen::reclaim::classic::Classic;

/// 32 MiB as x86 lays it out: DMA 4,095 pages, DMA32 4,096 (DMA's reserve: 4,096 / 256 = 16).
fn machine(reserve: bool, kswapd: bool) -> Kernel<Classic> {
    let mut cfg = MachineConfig::x86(8192, 0);
    cfg.ra_pages = 0;
    cfg.lowmem_reserve = reserve;
    cfg.kswapd = kswapd;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    let p = Classic::new(&m);
    Kernel::new(m, p)
}

#[test]
fn the_zones_are_those_of_x86() {
    let k = machine(true, true);
    let z = &k.m.nodes[0].zones;
    assert_eq!((z[0].kind, z[0].managed), (ZoneType::Dma, 4095));
    assert_eq!((z[1].kind, z[1].managed), (ZoneType::Dma32, 4096));
    assert_eq!((z[0].lowmem_reserve, z[1].lowmem_reserve), (16, 0));
    let k = machine(false, true);
    assert_eq!(k.m.nodes[0].zones[0].lowmem_reserve, 0);
}

/// The least free DMA has over a file read twice the machine's size, with direct reclaim only.
fn least_dma_free(reserve: bool) -> (u64, u64) {
    let mut k = machine(reserve, false);
    let task = k.create_mm(ROOT_MEMCG);
    let f = k.m.create_file("f", 16_384, Advice::Normal);
    let mut least = u64::MAX;
    for i in 0..16_384 {
        k.read_page(task, f, i).unwrap();
        least = least.min(k.m.nodes[0].zones[0].free);
    }
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    assert!(k.m.events.get(Stat::PgstealDirect) > 0, "the file did not fit");
    // without kswapd, the allocations' highest zone type counts the stalls
    assert!(k.m.events.get(Stat::AllocstallMovable) > 0 || !reserve);
    (least, k.m.nodes[0].zones[0].wmark(WMARK_MIN))
}

#[test]
fn user_pages_leave_dma_its_lowmem_reserve() {
    let (least, min) = least_dma_free(true);
    assert!(
        least >= min + 16,
        "DMA went down to {least} free, under min {min} + reserve 16"
    );
    let (least, min) = least_dma_free(false);
    assert!(
        least < min + 16,
        "without the reserve DMA goes down to its min ({min}): {least}"
    );
}

/// A machine whose kswapd has just run once, and the task and file reading on.
fn after_one_kswapd_run() -> (Kernel<Classic>, u32, u32, u64) {
    let mut k = machine(true, true);
    let task = k.create_mm(ROOT_MEMCG);
    let f = k.m.create_file("f", 16_384, Advice::Normal);
    let mut i = 0;
    while k.m.events.get(Stat::Pageoutrun) == 0 {
        k.read_page(task, f, i).unwrap();
        i += 1;
    }
    assert!(
        k.m.nodes[0].kswapd_short_sleep_until.is_some(),
        "kswapd is in its short sleep"
    );
    (k, task, f, i)
}

#[test]
fn a_wakeup_within_the_short_sleep_hits_the_low_watermark_quickly() {
    let (mut k, task, f, mut i) = after_one_kswapd_run();
    // no time passes: the next wakeup comes within the short sleep
    while k.m.events.get(Stat::Pageoutrun) == 1 {
        k.read_page(task, f, i).unwrap();
        i += 1;
    }
    assert_eq!(k.m.events.get(Stat::KswapdLowWmarkHitQuickly), 1);
    assert_eq!(k.m.events.get(Stat::KswapdHighWmarkHitQuickly), 0);
}

#[test]
fn a_node_below_high_after_the_short_sleep_hits_the_high_watermark_quickly() {
    let (mut k, task, f, mut i) = after_one_kswapd_run();
    // allocate until free is below the high watermark of both zones but above low: no wakeup
    let below_high = |m: &Machine| {
        m.nodes[0]
            .zones
            .iter()
            .all(|z| z.free <= z.wmark(WMARK_HIGH) + z.lowmem_reserve)
            && m.nodes[0].zones[1].free > m.nodes[0].zones[1].wmark(WMARK_LOW)
    };
    while !below_high(&k.m) {
        k.read_page(task, f, i).unwrap();
        i += 1;
    }
    assert_eq!(k.m.events.get(Stat::Pageoutrun), 1, "no wakeup above the low watermark");
    // the short sleep ends: the next allocation finds the node unbalanced and kswapd reclaims
    k.m.now_ns += KSWAPD_SHORT_SLEEP_NS;
    k.read_page(task, f, i).unwrap();
    assert_eq!(k.m.events.get(Stat::KswapdHighWmarkHitQuickly), 1);
    assert_eq!(k.m.events.get(Stat::KswapdLowWmarkHitQuickly), 0);
    assert_eq!(k.m.events.get(Stat::Pageoutrun), 2, "kswapd ran again");
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
}

#[test]
fn a_balanced_node_after_the_short_sleep_lets_kswapd_sleep_until_woken() {
    let (mut k, task, f, i) = after_one_kswapd_run();
    k.m.now_ns += KSWAPD_SHORT_SLEEP_NS;
    k.read_page(task, f, i).unwrap();
    assert!(
        k.m.nodes[0].kswapd_short_sleep_until.is_none(),
        "the short sleep is over"
    );
    assert_eq!(k.m.events.get(Stat::KswapdHighWmarkHitQuickly), 0);
    assert_eq!(k.m.events.get(Stat::Pageoutrun), 1);
}

#[test]
fn a_machine_of_one_zone_counts_nothing_new() {
    // the default machine: no reserve, no short sleep, no hit-quickly counters
    let mut m = Machine::new(MachineConfig::simple(4096, 0));
    m.debug_checks = true;
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    common::read_file_as_root(&mut k, 16_384);
    assert!(k.m.events.get(Stat::Pageoutrun) > 1);
    assert_eq!(k.m.events.get(Stat::KswapdLowWmarkHitQuickly), 0);
    assert_eq!(k.m.events.get(Stat::KswapdHighWmarkHitQuickly), 0);
    assert!(k.m.nodes[0].kswapd_short_sleep_until.is_none());
}

#[test]
fn inline_kswapd_gives_the_task_its_turn_when_it_cannot_balance_the_node() {
    // zram that takes two pages of pool per page swapped out: swapping out frees nothing, kswapd
    // finds the node unbalanced after its runs and runs again (kswapd_high_wmark_hit_quickly),
    // until its failures or MAX_RECLAIM_RETRIES runs in a row give the task its turn back
    let mut cfg = MachineConfig::x86(8192, 16_384);
    cfg.zram_ratio = Some(0.5);
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    let task = k.create_mm(ROOT_MEMCG);
    let base = k.m.mmap(task, 12_000, 0, None);
    let mut done = 0;
    for i in 0..12_000 {
        if k.access(task, base + i, true).is_err() {
            break;
        }
        done += 1;
    }
    assert!(done > 4000, "the task ran: {done} pages");
    let runs = k.m.events.get(Stat::Pageoutrun);
    let high = k.m.events.get(Stat::KswapdHighWmarkHitQuickly);
    assert!(
        runs > 0 && high > 0,
        "kswapd ran ({runs}) and found the node unbalanced ({high})"
    );
}

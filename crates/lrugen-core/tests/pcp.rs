// SPDX-License-Identifier: GPL-2.0-only
//! The zones' per-CPU page lists (`mm::node::Pcp`) on a machine built from a guest's zones, where
//! the allocator and reclaim drive them: the guest's list starts outside `NR_FREE_PAGES`; an
//! allocation that finds the zone at or below its high watermark marks it `ZONE_BELOW_HIGH`
//! (`get_page_from_freelist`); `balance_pgdat` sets `ZONE_RECLAIM_ACTIVE` on the zones it
//! balances and clears it when done; and a global-pressure run keeps every frame counted once.
//! (The list's own arithmetic is tested in `mm::node`.)

mod common;

use lrugen::kernel::Kernel;
use lrugen::mm::node::WMARK_HIGH;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::Machine;
use lrugen::reclaim::alloc::alloc_frame;
use lrugen::reclaim::check::check_invariants;
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::vmscan::{balance_pgdat_begin, balance_pgdat_end};

/// `common::x86_with_pcp_lists`, with the invariant checks on.
fn machine() -> Machine {
    let mut m = Machine::new(common::x86_with_pcp_lists());
    m.debug_checks = true;
    m
}

#[test]
fn the_guests_list_starts_outside_the_free_count() {
    let m = machine();
    let z = &m.nodes[0].zones[1];
    assert_eq!((z.free, z.pcp.count), (4096 - 1500 - 300, 300));
    assert_eq!(z.free_frames(), 4096 - 1500);
    // NR_FREE_PAGES is the buddy allocator's count only
    assert_eq!(
        m.vmstat().get(Stat::NrFreePages),
        (m.nodes[0].zones[0].free + z.free) as i64
    );
}

#[test]
fn an_allocation_at_the_high_watermark_marks_the_zone_below_high() {
    let m = machine();
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    let high = |k: &Kernel<Classic>| {
        let z = &k.m.nodes[0].zones[1];
        z.wmark(WMARK_HIGH) + z.lowmem_reserve
    };
    assert!(!k.m.nodes[0].zones[1].below_high);
    let mut n = 0;
    // DMA32 comes first; take its frames until an allocation finds it at its high watermark
    while k.m.nodes[0].zones[1].free > high(&k) {
        alloc_frame(&mut k.m, &mut k.p, 0).unwrap();
        assert!(!k.m.nodes[0].zones[1].below_high, "above its high watermark at {n}");
        n += 1;
    }
    alloc_frame(&mut k.m, &mut k.p, 0).unwrap();
    assert!(k.m.nodes[0].zones[1].below_high, "after {n} allocations");
}

#[test]
fn kswapd_marks_the_zones_it_balances_reclaim_active() {
    let m = machine();
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    k.m.nodes[0].kswapd_highest_zoneidx = 1;
    let run = balance_pgdat_begin(&mut k.m, 0);
    assert!(k.m.nodes[0].zones.iter().all(|z| z.reclaim_active));
    balance_pgdat_end(&mut k.m, &mut k.p, run);
    assert!(k.m.nodes[0].zones.iter().all(|z| !z.reclaim_active));
    // a run for DMA alone leaves DMA32's list as it was
    k.m.nodes[0].kswapd_highest_zoneidx = 0;
    let run = balance_pgdat_begin(&mut k.m, 0);
    assert!(k.m.nodes[0].zones[0].reclaim_active && !k.m.nodes[0].zones[1].reclaim_active);
    balance_pgdat_end(&mut k.m, &mut k.p, run);
}

/// A file read of twice the machine's memory by a task of the root memcg, kswapd inline: the
/// lists refill and flush through reclaim, every frame is free (buddy or list) or allocated once
/// (`check_invariants`), and pages were allocated and freed through them.
#[test]
fn global_pressure_keeps_every_frame_counted_once() {
    let m = machine();
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    common::read_file_as_root(&mut k, 16_384);
    check_invariants(&k.m, &k.p).unwrap();
    assert!(k.m.events.get(Stat::Pageoutrun) > 0, "kswapd ran");
    assert!(k.m.nodes[0].zones.iter().all(|z| !z.reclaim_active), "and finished");
    let z = &k.m.nodes[0].zones[1];
    assert!(
        z.pcp.high >= 60 && z.pcp.high <= 512,
        "high within its bounds: {}",
        z.pcp.high
    );
}

// SPDX-License-Identifier: GPL-2.0-only
//! The guest's shmem at boot (`ZoneBoot::shmem`, `mm::BootShmem`): pages the kernel used before
//! the workload that reclaim can swap out, as a Debian guest's initramfs in its tmpfs root. They
//! start on the root memcg's anon LRU where `folio_add_lru` puts a new unmapped swap-backed folio
//! (classic: the inactive list; MGLRU: `max_seq - 1`, which `/proc/vmstat` counts as active),
//! count in `nr_shmem`, and under global pressure with swap the kernel's reclaim swaps them out
//! (`shmem_writeout`): `nr_shmem` falls by exactly the root's `pswpout`, and each swapped-out
//! page keeps its swap slot (the file's swap entry holds it). Without swap they stay.

mod common;

use lrugen::kernel::Kernel;
use lrugen::mm::folio::ANON;
use lrugen::mm::memcg::ROOT_MEMCG;
use lrugen::mm::node::ZoneBoot;
use lrugen::mm::vm::{vmf, MMAP_BASE_VPN};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::check::check_invariants;
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::state::gen_from_seq;
use lrugen::reclaim::mglru::{Mglru, MglruConfig, Profile};
use lrugen::reclaim::Policy;

const SHMEM: u64 = 1000;
const SWAP: u64 = 4096;

/// 32 MiB as x86 lays it out (DMA 4,095 pages, DMA32 4,096), DMA32 with 1,500 pages used at
/// boot of which [`SHMEM`] are shmem.
fn machine(swap: u64) -> Machine {
    let mut cfg = MachineConfig::x86(8192, swap);
    cfg.ra_pages = 0;
    cfg.zone_boot = vec![vec![
        ZoneBoot {
            used: 32,
            ..Default::default()
        },
        ZoneBoot {
            used: 1500,
            shmem: SHMEM,
            ..Default::default()
        },
    ]];
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    m
}

fn mglru(m: &Machine) -> Mglru {
    Mglru::new(
        m,
        MglruConfig {
            profile: Profile::V7_2,
            ..MglruConfig::default()
        },
    )
}

fn root(m: &Machine, s: Stat) -> i64 {
    m.lruvec_state(ROOT_MEMCG, 0, s)
}

/// Before anything runs: the pages are the root's, on its anon LRU, out of DMA32's free pages.
fn starts_on_the_root_anon_lru<P: Policy>(k: &Kernel<P>, inactive: i64, active: i64) {
    let m = &k.m;
    assert_eq!(root(m, Stat::NrShmem), SHMEM as i64);
    assert_eq!(
        (root(m, Stat::NrInactiveAnon), root(m, Stat::NrActiveAnon)),
        (inactive, active)
    );
    assert_eq!(m.nodes[0].zones[1].free, 4096 - 1500, "the shmem's frames are DMA32's");
    check_invariants(m, &k.p).unwrap();
}

/// A file read of twice the machine's memory by a task of the root memcg, kswapd inline.
fn read_twice_memory<P: Policy>(k: &mut Kernel<P>) {
    common::read_file_as_root(k, 16_384);
    check_invariants(&k.m, &k.p).unwrap();
}

fn swapped_out_and_held<P: Policy>(k: &Kernel<P>, what: &str) {
    let m = &k.m;
    let out = m.events.get(Stat::Pswpout);
    assert!(out > 0, "{what}: no shmem page was swapped out");
    assert_eq!(
        root(m, Stat::NrShmem),
        SHMEM as i64 - out,
        "{what}: nr_shmem falls by pswpout (the workload has no anon)"
    );
    assert_eq!(
        SWAP - m.swap.nr_free(),
        out as u64,
        "{what}: every swapped-out page keeps its slot"
    );
    assert_eq!(m.boot_shmem.slots.len() as i64, out, "{what}");
}

#[test]
fn classic_starts_inactive_and_swaps_the_shmem_out() {
    let m = machine(SWAP);
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    starts_on_the_root_anon_lru(&k, SHMEM as i64, 0);
    read_twice_memory(&mut k);
    swapped_out_and_held(&k, "classic");
}

/// MGLRU prefers file pages while nothing refaults, so the pressure here is anon: a task writes
/// a region as large as the machine, twice. The shmem, never touched, is the oldest anon and
/// goes first; the workload's anon is swapped too, so only the shmem's own count is exact.
#[test]
fn mglru_starts_in_the_second_youngest_generation_and_swaps_the_shmem_out() {
    let m = machine(SWAP);
    let p = mglru(&m);
    let mut k = Kernel::new(m, p);
    // max_seq - 1: one of the two generations /proc/vmstat counts as active
    starts_on_the_root_anon_lru(&k, 0, SHMEM as i64);
    let lg = &k.p.lruvecs[k.p.lv(ROOT_MEMCG, 0)];
    assert_eq!(lg.gen_pages(gen_from_seq(lg.max_seq - 1), ANON), SHMEM);
    assert_eq!(lg.gen_pages(gen_from_seq(lg.max_seq), ANON), 0);
    let task = k.create_mm(ROOT_MEMCG);
    k.mmap(task, MMAP_BASE_VPN, 8192, vmf::WRITE, None, 0).unwrap();
    for _ in 0..2 {
        for vpn in MMAP_BASE_VPN..MMAP_BASE_VPN + 8192 {
            k.access(task, vpn, true).unwrap();
        }
    }
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    check_invariants(&k.m, &k.p).unwrap();
    let gone = SHMEM as i64 - root(&k.m, Stat::NrShmem);
    assert_eq!(gone, SHMEM as i64, "the untouched shmem is all swapped out");
    assert_eq!(k.m.boot_shmem.slots.len() as i64, gone, "each keeps its slot");
    assert!(
        k.m.events.get(Stat::Pswpout) > gone,
        "and the workload's anon is swapped too"
    );
}

#[test]
fn without_swap_the_shmem_stays() {
    let m = machine(0);
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    read_twice_memory(&mut k);
    assert_eq!(k.m.events.get(Stat::Pswpout), 0);
    assert_eq!(root(&k.m, Stat::NrShmem), SHMEM as i64);
    let m = machine(0);
    let p = mglru(&m);
    let mut k = Kernel::new(m, p);
    read_twice_memory(&mut k);
    assert_eq!(k.m.events.get(Stat::Pswpout), 0);
    assert_eq!(root(&k.m, Stat::NrShmem), SHMEM as i64);
}

/// A machine without boot shmem has none of it: no address space, no folio, nothing counted.
#[test]
fn a_machine_without_it_is_unchanged() {
    let mut cfg = MachineConfig::x86(8192, SWAP);
    cfg.ra_pages = 0;
    let m = Machine::new(cfg);
    let p = Classic::new(&m);
    let k = Kernel::new(m, p);
    assert!(k.m.boot_shmem.mm.is_none() && k.m.mms.is_empty());
    assert_eq!(root(&k.m, Stat::NrShmem), 0);
    assert_eq!(root(&k.m, Stat::NrInactiveAnon), 0);
}

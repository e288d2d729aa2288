// SPDX-License-Identifier: GPL-2.0-only
//! The source of `Costs::per_folio_scanned_ns`: what one folio costs while `lru_lock` is held in
//! `isolate_lru_folios` (and `scan_folios`): unlink it from the tail of an LRU list whose order is
//! unrelated to memory order, clear its LRU flag, take a reference, and link it onto the private
//! isolation list, on 64-byte folios spread over 256 MiB so that each visit misses the caches as
//! a cold LRU's tail does, in transparent huge pages (`MADV_HUGEPAGE`) as the kernel's direct map
//! of `struct page` is, so that the misses are cache misses and not TLB misses. No lock is taken
//! here: this is the hold time per folio; what the lock itself costs, uncontended and bounced
//! between CPUs, is `benches/locks.rs`, and what CPUs that reclaim at once wait for each other is
//! `sim::locks`.
//!
//! `cargo bench -p lrugen-core --bench lru_lock` prints ns per folio (median of 7 rounds of
//! 1,048,576 isolations).

use std::hint::black_box;
use std::time::Instant;

/// A folio's first cache line: the LRU links, flags and the reference count.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Folio {
    next: u32,
    prev: u32,
    flags: u64,
    refcount: u32,
}

const N: usize = 1 << 22; // 4 Mi folios of 64 bytes = 256 MiB
const HEAD: usize = N; // list heads after the folios
const ISO: usize = N + 1;

fn main() {
    // reserved, advised, then touched: the first touch faults huge pages in
    let mut f: Vec<Folio> = Vec::with_capacity(N + 2);
    // SAFETY: advice on the untouched memory this Vec owns; it changes no contents.
    let rc = unsafe {
        let p = f.as_mut_ptr() as usize;
        let start = p.next_multiple_of(2 << 20);
        let len = (p + (N + 2) * 64).saturating_sub(start) & !((2 << 20) - 1);
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE)
    };
    if rc != 0 {
        eprintln!("note: MADV_HUGEPAGE refused; the figure includes TLB misses");
    }
    f.resize(N + 2, Folio::default());
    // an LRU order unrelated to memory order (a multiplicative permutation)
    let order: Vec<u32> = (0..N as u64).map(|i| ((i * 0x9E37_79B1) % N as u64) as u32).collect();
    let link = |f: &mut Vec<Folio>, list: usize, order: &[u32]| {
        let mut prev = list as u32;
        for &x in order {
            f[prev as usize].next = x;
            f[x as usize].prev = prev;
            f[x as usize].flags = 1;
            f[x as usize].refcount = 1;
            prev = x;
        }
        f[prev as usize].next = list as u32;
        f[list].prev = prev;
    };
    let mut rounds = Vec::new();
    for _ in 0..7 {
        link(&mut f, HEAD, &order);
        f[ISO].next = ISO as u32;
        f[ISO].prev = ISO as u32;
        let batch = 1 << 20;
        let t = Instant::now();
        for _ in 0..batch {
            // the tail of the LRU
            let x = f[HEAD].prev as usize;
            let (p, n) = (f[x].prev as usize, f[x].next as usize);
            f[p].next = n as u32;
            f[n].prev = p as u32;
            f[x].flags &= !1; // PG_lru
            f[x].refcount += 1; // folio_try_get
                                // onto the isolation list
            let first = f[ISO].next as usize;
            f[x].next = first as u32;
            f[x].prev = ISO as u32;
            f[first].prev = x as u32;
            f[ISO].next = x as u32;
        }
        let ns = t.elapsed().as_nanos() as f64 / batch as f64;
        black_box(&f);
        rounds.push(ns);
    }
    rounds.sort_by(f64::total_cmp);
    println!(
        "lru_lock hold per isolated folio: {:.1} ns (median of 7 rounds)",
        rounds[3]
    );
}

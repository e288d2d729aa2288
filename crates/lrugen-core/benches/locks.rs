// SPDX-License-Identifier: GPL-2.0-only
//! The sources of the lock costs in `sim::engine::Costs`, measured on the machine it runs on:
//!
//! * `lru_lock_ns`: one uncontended acquire and release of a spinlock whose cache line this CPU
//!   already holds (a compare-and-swap and a release store, as the queued spinlock's fast path,
//!   plus the interrupt disable and enable of `spin_lock_irq`, which user space cannot do: not
//!   included).
//! * `lock_bounce_ns`: what an acquisition costs more when the previous holder was another CPU:
//!   two threads on two CPUs take the lock in turn (each waits for the other's release), so that
//!   every acquisition pulls the line from the other CPU's cache; the figure is the time per
//!   acquisition minus the uncontended one.
//! * `per_folio_putback_ns`: `move_folios_to_lru` (and an `lru_add` flush) per folio: link a
//!   folio that reclaim just touched at the head of an LRU list whose head is cached.
//! * `per_folio_moved_ns`: an `activate`/`deactivate`/`rotate` flush per folio: unlink a folio
//!   from the middle of a cold LRU list (its neighbours miss the caches) and link it at the head.
//!
//! The folios are 64-byte lines spread over 256 MiB in transparent huge pages, as in the
//! `lru_lock` bench. `cargo bench -p lrugen-core --bench locks` prints each figure (median of 7
//! rounds).

use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Folio {
    next: u32,
    prev: u32,
    flags: u64,
    refcount: u32,
}

const N: usize = 1 << 22;
const HEAD: usize = N;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pin(cpu: usize) -> bool {
    // SAFETY: a cpu_set_t on the stack, filled by the libc macros, for this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

#[repr(C, align(64))]
struct Lock(AtomicU32);

impl Lock {
    #[inline]
    fn lock_from(&self, from: u32) {
        while self
            .0
            .compare_exchange_weak(from, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
    }
    #[inline]
    fn unlock_to(&self, to: u32) {
        self.0.store(to, Ordering::Release);
    }
}

fn uncontended() -> f64 {
    let l = Lock(AtomicU32::new(0));
    let n = 10_000_000;
    let mut rounds = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..n {
            l.lock_from(0);
            black_box(&l);
            l.unlock_to(0);
        }
        rounds.push(t.elapsed().as_nanos() as f64 / n as f64);
    }
    median(rounds)
}

/// Per acquisition when the two CPUs take the lock in turn: 0 = released by B, 2 = released by A.
fn bounced() -> Option<f64> {
    let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get());
    if ncpu < 2 {
        return None;
    }
    let n = 2_000_000u32;
    let mut rounds = Vec::new();
    for _ in 0..7 {
        let l = Arc::new(Lock(AtomicU32::new(0)));
        let l2 = Arc::clone(&l);
        let b = std::thread::spawn(move || {
            pin(1);
            for _ in 0..n {
                l2.lock_from(2);
                l2.unlock_to(0);
            }
        });
        pin(0);
        let t = Instant::now();
        for _ in 0..n {
            l.lock_from(0);
            l.unlock_to(2);
        }
        b.join().expect("thread");
        rounds.push(t.elapsed().as_nanos() as f64 / (2 * n) as f64);
    }
    Some(median(rounds))
}

fn folios() -> Vec<Folio> {
    let mut f: Vec<Folio> = Vec::with_capacity(N + 1);
    // SAFETY: advice on the untouched memory this Vec owns; it changes no contents.
    unsafe {
        let p = f.as_mut_ptr() as usize;
        let start = p.next_multiple_of(2 << 20);
        let len = (p + (N + 1) * 64).saturating_sub(start) & !((2 << 20) - 1);
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    f.resize(N + 1, Folio::default());
    f
}

fn link_all(f: &mut [Folio]) {
    let mut prev = HEAD as u32;
    for i in 0..N as u64 {
        let x = ((i * 0x9E37_79B1) % N as u64) as u32;
        f[prev as usize].next = x;
        f[x as usize].prev = prev;
        f[x as usize].flags = 1;
        prev = x;
    }
    f[prev as usize].next = HEAD as u32;
    f[HEAD].prev = prev;
}

#[inline]
fn unlink(f: &mut [Folio], x: usize) {
    let (p, n) = (f[x].prev as usize, f[x].next as usize);
    f[p].next = n as u32;
    f[n].prev = p as u32;
}

#[inline]
fn add_head(f: &mut [Folio], x: usize) {
    let first = f[HEAD].next as usize;
    f[x].next = first as u32;
    f[x].prev = HEAD as u32;
    f[first].prev = x as u32;
    f[HEAD].next = x as u32;
    f[x].flags |= 1;
}

/// Putback: batches of 32 folios taken from the cold tail and touched (as shrink_folio_list
/// touches them), then linked at the head; only the putback is timed.
fn putback(f: &mut [Folio]) -> f64 {
    let mut rounds = Vec::new();
    let mut batch = [0usize; 32];
    for _ in 0..7 {
        link_all(f);
        let mut ns = 0u128;
        let n = 1 << 15;
        for _ in 0..n {
            for b in batch.iter_mut() {
                let x = f[HEAD].prev as usize;
                unlink(f, x);
                f[x].flags &= !1;
                f[x].refcount = f[x].refcount.wrapping_add(1);
                *b = x;
            }
            let t = Instant::now();
            for &x in batch.iter() {
                add_head(f, x);
            }
            ns += t.elapsed().as_nanos();
        }
        black_box(&f);
        rounds.push(ns as f64 / (n * 32) as f64);
    }
    median(rounds)
}

/// Move: a folio at a pseudo-random place of the cold list unlinked and linked at the head.
fn moved(f: &mut [Folio]) -> f64 {
    let mut rounds = Vec::new();
    for r in 0..7u64 {
        link_all(f);
        let n = 1 << 20;
        let t = Instant::now();
        for i in 0..n as u64 {
            let x = ((i.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ r) % N as u64) as usize;
            unlink(f, x);
            add_head(f, x);
        }
        rounds.push(t.elapsed().as_nanos() as f64 / n as f64);
        black_box(&f);
    }
    median(rounds)
}

fn main() {
    let u = uncontended();
    println!("lru_lock_ns: uncontended acquire + release {u:.1} ns");
    match bounced() {
        Some(b) => println!(
            "lock_bounce_ns: alternating between two CPUs {b:.1} ns per acquisition, {:.1} ns over uncontended",
            b - u
        ),
        None => println!("lock_bounce_ns: one CPU only, not measured"),
    }
    let mut f = folios();
    println!("per_folio_putback_ns: {:.1} ns per folio", putback(&mut f));
    println!("per_folio_moved_ns: {:.1} ns per folio", moved(&mut f));
}

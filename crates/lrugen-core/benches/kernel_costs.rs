// SPDX-License-Identifier: GPL-2.0-only
//! The CPU costs of `sim::engine::Costs` (and of the zram `DeviceSpec`) that the lock benches do
//! not give, measured on the running Linux kernel of this machine through the system call whose
//! kernel path is closest to what the engine prices. `cargo bench -p lrugen-core --bench
//! kernel_costs` prints one row per figure: the median over 7 rounds, the range over the rounds,
//! and what was measured; a facility that is missing (no zram, not root, no memory cgroup, no
//! `losetup`/`mkfs.ext4`, ...) gives a row "skipped: why" instead. It runs in about 40 s.
//! Arguments that do not start with `-` select sections by name (`bloom`, `swapslot`, `anon`, `pte`, `tlb`,
//! `file`, `io`, `rmap`, `writeback`, `zram`): `cargo bench --bench kernel_costs -- zram rmap`;
//! `KCOSTS_DEBUG=1` prints the points behind the slopes.
//!
//! The process pins itself to CPU 0. "Wall" below is elapsed time, used for syscall paths that
//! never sleep; "CPU" is `getrusage(RUSAGE_SELF)` user + system time, used where the process
//! sleeps on I/O (the kernel derives the sum from the scheduler's precise runtime; the split
//! between user and system is sampled by ticks, so only the sum is used). Time the kernel spends
//! in interrupts that arrive while the process sleeps, and in other tasks (kworkers, the loop
//! driver, kswapd), is not charged. Everything the bench sets up is undone when it ends, also on
//! a panic: files removed, ext4 unmounted, the loop device detached, zram0 swapped off and
//! reset, the memory cgroup removed, the child processes killed and reaped. zram0 is only used
//! if it is unused (disksize 0, not a swap device).
//!
//! * `read_hit_ns`: `pread` of 4 KiB at random page offsets of a 256 MiB file on the root file
//!   system, written with 4 KiB writes (order-0 folios, checked in `/proc/kpageflags`) and
//!   cached (checked with `mincore`). Wall per call: syscall, `filemap_read` lookup, copy of a
//!   page that misses the CPU caches.
//! * `page_cache_lookup_ns`: `mincore` over a `MAP_SHARED` mapping of that file that was never
//!   touched (no page tables: the walk's hole callback calls `mincore_page`, a page-cache
//!   lookup and a reference get/put, for each page). Calls over 16 to 8192 pages at random
//!   places; the slope of wall time against pages is the lookup of the next index (xarray nodes
//!   hot), the intercept the per-call overhead. Also one page at a random index per call, minus
//!   the same call on a never-touched anonymous mapping (no lookup): a lookup whose xarray nodes
//!   and folio miss the caches.
//! * `access_hit_ns`: a chain of dependent loads through a random cyclic order of the 4 KiB
//!   pages of a pre-faulted 1 GiB anonymous buffer with `MADV_NOHUGEPAGE` (one 8-byte slot at a
//!   random cache line of each page): every load misses the TLB (a page walk whose PTE line
//!   misses too) and the caches. The same with `MADV_HUGEPAGE` for reference (the share of the
//!   buffer in huge pages is printed). Wall per load.
//! * `minor_fault_ns`: (a) file: a fresh `MAP_SHARED` mapping of the cached file, one read per
//!   page; wall divided by `ru_minflt`. With the default fault-around (`filemap_map_pages` maps
//!   the 16 pages of the aligned 64 KiB window that are cached), and with `MADV_RANDOM`, which
//!   does not turn fault-around off (`should_fault_around` looks at `fault_around_bytes` and
//!   userfaultfd only; the row prints the pages per fault). `fault_around_bytes` itself is in
//!   debugfs, which kernel lockdown may forbid, so a third row gets one page per fault another
//!   way: only every 16th page of the file is left in the page cache (dropped, read back one by
//!   one with `POSIX_FADV_RANDOM`), and those pages are read: fault-around finds nothing else
//!   to map. That is the fault that finds its page in the page cache (lookup, reference,
//!   `set_pte_range`, rmap and counters). (b) anonymous: first write to each page of a fresh
//!   64 MiB `MADV_NOHUGEPAGE` mapping: allocation, memcg charge, 4 KiB clear, LRU batch add,
//!   PTE set; wall per fault.
//! * `block_io_ns` and `major_fault_ns`, each on two devices. (1) The root file system, ext4 on
//!   `/dev/vda`, a virtio-blk device of the Firecracker VMM: its submissions trap to the VMM, so
//!   the reader's CPU includes the VM exits of the notification. (2) ext4 made on a loop device
//!   over a 128 MiB file in `/dev/shm` and mounted at a temporary directory: no device at all,
//!   the loop driver copies from tmpfs in its own worker (a kworker), whose time is not charged
//!   to the reader, so this is the block layer and the sleep and wake-up of the reader only;
//!   also the raw `/dev/loopN`. `block_io_ns`: 4 KiB `O_DIRECT` reads at random offsets, CPU per
//!   read minus a cached 4 KiB `pread` measured first (syscall left over, no copy in
//!   `O_DIRECT`): bio set-up, submit, sleep, wake-up, completion. `major_fault_ns`: (a)
//!   buffered 4 KiB `pread` of distinct random pages after `POSIX_FADV_DONTNEED` of the file,
//!   with `POSIX_FADV_RANDOM` (no readahead: one order-0 folio per miss; checked with
//!   `mincore`), CPU per read minus the cached `pread`: folio allocation, memcg charge, xarray
//!   insert, LRU add, ext4 `read_folio`, and the block I/O above; (b) the same pages read
//!   through a `MAP_SHARED` mapping with `MADV_RANDOM`, CPU per `ru_majflt`: the fault, the
//!   miss, the retry after the mmap lock was dropped for the I/O.
//! * `per_pte_walked_ns`, `per_pmd_walked_ns`: `echo 1 > /proc/self/clear_refs`, which walks
//!   every page table of the process (`clear_refs_pte_range`: per present PTE,
//!   `ptep_test_and_clear_young`, the folio's young and referenced flags; empty PTEs are read
//!   and skipped) and then flushes the TLB. Wall per write, the fastest of 5. Dense: N present
//!   4 KiB pages in one VMA, N = 64, 128, 256 Ki; the slope against N is per present PTE (1/512
//!   of a PMD included), with the PTEs young (all pages read after the previous walk, so the
//!   TLB misses set the accessed bits) and old (a second walk). MGLRU's `walk_pte_range` skips
//!   an old PTE without touching its folio (`get_pte_pfn`), so the old figure overstates it;
//!   its young case does about what clear_refs does. Sparse, one present page per 2 MiB-aligned
//!   region, R = 2, 4, 8 Ki regions, slopes against R: (a) one VMA over all regions: a PMD entry
//!   with its PTE table (map, lock), 511 empty PTEs and one present one; (b) one 512-page VMA
//!   per region (every other region, so that they do not merge): the same plus a VMA; (c) one
//!   1-page VMA per region: a VMA, a PMD and one present PTE. (b − c) / 511 is an empty PTE
//!   read; (a) is the per-PMD figure; (c) bounds a PMD entry without its PTE scan from above
//!   (subtracting 511 empty PTEs from (a) leaves a difference lost in the noise: the figures
//!   depend on how much of the page tables the caches hold).
//! * `per_rmap_walk_ns`: `MADV_PAGEOUT` cannot do it: `madvise_cold_or_pageout_pte_range`
//!   skips a folio unless `folio_mapcount == folio_nr_pages` (mapped by the caller only), and a
//!   private mapping of a file maps the same page-cache folio. So the memcg route: a memory
//!   cgroup of our own (v2 with `memory.reclaim` where the v2 hierarchy has the memory
//!   controller, else v1's `memory.force_empty`), K = 1, 2, 4, 8 child processes in it that map
//!   a 32 MiB file `MAP_SHARED` and read every page; the first loads the file with
//!   `POSIX_FADV_RANDOM` reads (order-0 folios, charged to the cgroup). The parent clears their
//!   accessed bits and `PG_referenced` (`/proc/PID/clear_refs`) so that reclaim takes every
//!   folio at once, then writes the reclaim file and measures its own CPU per page reclaimed
//!   (counted with `mincore`, checked against `/proc/vmstat` `pgsteal_*`). Reclaim walks the
//!   rmap twice per folio, `folio_referenced` and `try_to_unmap`, each visiting K VMAs: the
//!   slope against K is two visits, the figure half of it (a visit: the interval-tree step,
//!   `page_vma_mapped_walk` down to the PTE, the young test or the unmap; the children sleep,
//!   so no IPI). v1's `force_empty` keeps trying a few times after the file is gone (the
//!   children's page tables stay charged): a fixed cost, in the intercept only. The cost per
//!   page with K = 1 (isolation, two walks, unmap, `__remove_mapping`, free) is printed too.
//! * `tlb_flush_ns`: a VMA of N read-write pages between two execute-only pages (so that
//!   `mprotect` of all of it never splits or merges it), all written. `mprotect(PROT_NONE)`
//!   must flush the present PTEs; `mprotect(PROT_READ)` back does not (a `PROT_NONE` PTE is not
//!   present to the TLB: `pte_needs_flush` is false). Wall per call, median of 3000, minus the
//!   clock's own cost. The difference, slope over N = 1..32 (below x86's
//!   `tlb_single_page_flush_ceiling`, 33), is an `invlpg` per page; with two present PTEs 63
//!   pages apart in a 64-page VMA (range above the ceiling) it is one full local flush (CR3
//!   reload; the refills after it are not counted). Then `madvise(MADV_DONTNEED)` of a present
//!   page and `mprotect(PROT_NONE)` of a 1-page VMA, with and without a second thread of the
//!   process spinning on CPU 1: the difference is the shootdown IPI, sent and acknowledged (a
//!   KVM guest with PV TLB flush skips vCPUs that the host has preempted).
//! * `per_page_written_ns`: (1) swap-out to zram: zram0 as the swap device (lzo-rle),
//!   `MADV_PAGEOUT` of 16,384 private anonymous pages of the contents below (exclusive, so it
//!   reclaims them), CPU per page swapped out (`pswpout`). zram compresses in the caller, so the
//!   lzo-rle compression measured below is subtracted: the rest is the start of a swap-out
//!   (isolation, swap slot, unmap and flush, swap cache, bio, free). The swap-in of the same
//!   pages (a read fault each, zram decompresses in the faulting task; decompression
//!   subtracted) is printed too. (2) writeback: `sync_file_range(SYNC_FILE_RANGE_WRITE)` of a
//!   16 MiB file on the root file system (ext4, blocks allocated), CPU per dirty page, with all
//!   pages dirty (contiguous: bios merge) and every other page (a bio per page).
//! * zram `compress_ns`/`decompress_ns`: for each algorithm (lzo-rle, lzo, lz4, zstd) zram0 is reset,
//!   `comp_algorithm` and `disksize` set, then 4,096 pages written with 4 KiB `O_DIRECT` writes
//!   and read back (zram compresses and decompresses in the submitting task), CPU per page. The
//!   pages: 1.5 KiB of English-like text (Zipf-distributed words) then 128-byte records (two
//!   pointers, two small integers, zeros), about 3:1 with lzo-rle (the ratio from `mm_stat` is
//!   printed); random pages (incompressible, stored whole); zero pages (same-filled: no
//!   compression). The net figures subtract the zero page of the same round (syscall, bio,
//!   zram's own work).
//! * `bloom_test_ns`: MGLRU's `test_bloom_filter` cannot be timed from user space (this kernel
//!   may not even have MGLRU). This is a user-space copy: `get_item_key` (`hash_ptr(item, 30)`
//!   = `item * GOLDEN_RATIO_64 >> 34`, split into two 15-bit keys) and two `test_bit`s in a
//!   2^15-bit filter, over the addresses of the 512 entries of random PMD tables in a
//!   direct-map-like range, the filters 1/8 full. Warm: one filter (the walk's case: a test per
//!   PMD entry, the filter in cache). Cold: each test in another of 16,384 filters (64 MiB in
//!   huge pages, so no TLB miss): a cache miss per test, overlapped by the out-of-order core as
//!   the walk's would be. Also `update_bloom_filter` (a `test_bit` and, if clear, a `set_bit`,
//!   a locked `or`, per key) on a warm filter cleared every 4096 items.
//!
//! The lock costs are measured by `benches/locks.rs` and `benches/lru_lock.rs`, not here.

use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::hint::black_box;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PAGE: usize = 4096;
const MIB: usize = 1 << 20;
const ROUNDS: usize = 7;

// ---------------------------------------------------------------------------------------------
// Results

struct Row {
    name: String,
    unit: &'static str,
    what: String,
    vals: Result<Vec<f64>, String>,
}

struct Report {
    rows: Vec<Row>,
    filter: Vec<String>,
}

impl Report {
    fn push(
        &mut self,
        name: impl Into<String>,
        unit: &'static str,
        what: impl Into<String>,
        vals: Result<Vec<f64>, String>,
    ) {
        let row = Row {
            name: name.into(),
            unit,
            what: what.into(),
            vals,
        };
        match &row.vals {
            Ok(v) if !v.is_empty() => eprintln!("  {}: {} {}", row.name, num(median(v)), row.unit),
            Ok(_) => eprintln!("  {}: no rounds", row.name),
            Err(e) => eprintln!("  {}: skipped: {e}", row.name),
        }
        self.rows.push(row);
    }

    fn skip(&mut self, name: impl Into<String>, unit: &'static str, why: &str) {
        self.push(name, unit, "", Err(why.to_string()));
    }

    fn wants(&self, section: &str) -> bool {
        self.filter.is_empty() || self.filter.iter().any(|f| section.contains(f.as_str()))
    }

    fn print(&self) {
        let w = self
            .rows
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        println!();
        println!(
            "{:<w$}  {:>8}  {:>17}  {:<4}  measured",
            "cost", "median", "min–max", "unit"
        );
        for r in &self.rows {
            match &r.vals {
                Ok(v) if !v.is_empty() => {
                    let (lo, hi) = min_max(v);
                    println!(
                        "{:<w$}  {:>8}  {:>17}  {:<4}  {}",
                        r.name,
                        num(median(v)),
                        format!("{}–{}", num(lo), num(hi)),
                        r.unit,
                        r.what
                    );
                }
                Ok(_) => println!(
                    "{:<w$}  {:>8}  {:>17}  {:<4}  skipped: no rounds",
                    r.name, "-", "-", r.unit
                ),
                Err(e) => println!("{:<w$}  {:>8}  {:>17}  {:<4}  skipped: {e}", r.name, "-", "-", r.unit),
            }
        }
    }
}

fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
        (lo.min(x), hi.max(x))
    })
}

/// Least squares: (slope, intercept).
fn fit(xs: &[f64], ys: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    let slope = sxy / sxx;
    (slope, my - slope * mx)
}

fn pairwise(a: &[f64], b: &[f64], f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

// ---------------------------------------------------------------------------------------------
// Small system helpers

type Res<T> = Result<T, String>;

trait Ctx<T> {
    fn ctx(self, what: &str) -> Res<T>;
}

impl<T> Ctx<T> for io::Result<T> {
    fn ctx(self, what: &str) -> Res<T> {
        self.map_err(|e| format!("{what}: {e}"))
    }
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", io::Error::last_os_error())
}

fn check(rc: libc::c_int, what: &str) -> Res<()> {
    if rc < 0 {
        Err(os_err(what))
    } else {
        Ok(())
    }
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }

    /// `n` distinct values below `range`, in random order.
    fn distinct(&mut self, n: usize, range: usize) -> Vec<usize> {
        let mut all: Vec<usize> = (0..range).collect();
        for i in 0..n.min(range) {
            let j = i + self.below((range - i) as u64) as usize;
            all.swap(i, j);
        }
        all.truncate(n.min(range));
        all
    }
}

fn rusage() -> libc::rusage {
    // SAFETY: getrusage fills the zeroed struct it is given.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    }
}

/// The process's user + system CPU time (ns).
fn cpu_ns() -> f64 {
    let ru = rusage();
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e9 + t.tv_usec as f64 * 1e3;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// (minor, major) faults of the process so far.
fn faults() -> (u64, u64) {
    let ru = rusage();
    (ru.ru_minflt as u64, ru.ru_majflt as u64)
}

fn pin(cpu: usize) -> bool {
    // SAFETY: a cpu_set_t on the stack, filled by the libc macros, for this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// `KCOSTS_DEBUG=1`: print the raw points behind the slopes and differences.
fn debug() -> bool {
    std::env::var_os("KCOSTS_DEBUG").is_some()
}

fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

/// CPUs online (not the affinity mask: the process pins itself).
fn online_cpus() -> usize {
    // SAFETY: no pointers.
    unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize
}

fn ns_per(d: Duration, n: u64) -> f64 {
    d.as_nanos() as f64 / n.max(1) as f64
}

fn cstr(p: &Path) -> CString {
    CString::new(p.as_os_str().as_encoded_bytes()).unwrap_or_default()
}

fn pread_raw(fd: i32, buf: *mut u8, off: usize) -> isize {
    // SAFETY: buf points at PAGE writable bytes (callers pass a page of a Map or a Vec).
    unsafe { libc::pread(fd, buf.cast(), PAGE, off as libc::off_t) }
}

fn pwrite_raw(fd: i32, buf: *const u8, off: usize) -> isize {
    // SAFETY: buf points at PAGE readable bytes.
    unsafe { libc::pwrite(fd, buf.cast(), PAGE, off as libc::off_t) }
}

fn fadvise(f: &File, advice: libc::c_int) -> Res<()> {
    // SAFETY: a plain syscall on an open descriptor.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, advice) };
    if rc != 0 {
        return Err(format!("posix_fadvise: {}", io::Error::from_raw_os_error(rc)));
    }
    Ok(())
}

fn sys_write(path: impl AsRef<Path>, val: &str) -> Res<()> {
    let p = path.as_ref();
    fs::write(p, val).ctx(&format!("write {val:?} to {}", p.display()))
}

fn sys_read(path: impl AsRef<Path>) -> Res<String> {
    let p = path.as_ref();
    fs::read_to_string(p).ctx(&format!("read {}", p.display()))
}

/// Sum of the `/proc/vmstat` counters whose name starts with `prefix`.
fn vmstat(prefix: &str) -> u64 {
    fs::read_to_string("/proc/vmstat")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(k, _)| k.starts_with(prefix))
        .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
        .sum()
}

/// A memory mapping, unmapped on drop.
struct Map {
    ptr: *mut u8,
    len: usize,
}

impl Map {
    fn new(len: usize, prot: libc::c_int, flags: libc::c_int, fd: libc::c_int) -> Res<Map> {
        // SAFETY: a new mapping at an address the kernel picks.
        let p = unsafe { libc::mmap(ptr::null_mut(), len, prot, flags, fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(os_err("mmap"));
        }
        Ok(Map { ptr: p.cast(), len })
    }

    fn anon(len: usize) -> Res<Map> {
        Self::new(
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
        )
    }

    fn shared(f: &File, len: usize) -> Res<Map> {
        Self::new(len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd())
    }

    /// An anonymous mapping of `len` bytes at an `align`-aligned address, and that address.
    fn aligned(len: usize, align: usize) -> Res<(Map, *mut u8)> {
        let m = Self::anon(len + align)?;
        let off = (m.ptr as usize).next_multiple_of(align) - m.ptr as usize;
        let base = m.ptr.wrapping_add(off);
        Ok((m, base))
    }

    fn page(&self, i: usize) -> *mut u8 {
        self.ptr.wrapping_add(i * PAGE)
    }

    /// Unmaps everything from `at` on.
    fn truncate_at(&mut self, at: *mut u8) {
        let keep = at as usize - self.ptr as usize;
        if keep < self.len {
            // SAFETY: the tail of our own mapping.
            unsafe { libc::munmap(at.cast(), self.len - keep) };
            self.len = keep;
        }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: our own mapping, not used after this.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}

fn advise(p: *mut u8, len: usize, advice: libc::c_int) -> Res<()> {
    // SAFETY: p..p+len lies in a mapping of ours.
    check(unsafe { libc::madvise(p.cast(), len, advice) }, "madvise")
}

fn touch_write(p: *mut u8, n: usize, stride: usize) {
    for i in 0..n {
        // SAFETY: the caller's mapping covers n strides from p.
        unsafe { ptr::write_volatile(p.add(i * stride), 1) };
    }
}

fn touch_read(p: *const u8, n: usize, stride: usize) -> u64 {
    let mut s = 0u64;
    for i in 0..n {
        // SAFETY: the caller's mapping covers n strides from p.
        s += unsafe { ptr::read_volatile(p.add(i * stride)) } as u64;
    }
    s
}

/// Pages of `f` (`len` bytes) in the page cache: `mincore` of a fresh mapping (no PTEs, so it
/// asks the page cache).
fn resident(f: &File, len: usize) -> Res<usize> {
    let m = Map::shared(f, len)?;
    let mut v = vec![0u8; len / PAGE];
    // SAFETY: v has one byte per page of the mapping.
    check(unsafe { libc::mincore(m.ptr.cast(), len, v.as_mut_ptr()) }, "mincore")?;
    Ok(v.iter().filter(|&&b| b & 1 != 0).count())
}

/// The share of the sampled present pages of `p..p + pages` that belong to a large folio
/// (`/proc/kpageflags` COMPOUND_HEAD or COMPOUND_TAIL); None without root.
fn large_folio_share(p: *const u8, pages: usize, samples: usize) -> Option<f64> {
    let pm = File::open("/proc/self/pagemap").ok()?;
    let kf = File::open("/proc/kpageflags").ok()?;
    let mut rng = Rng(99);
    let (mut seen, mut large) = (0u32, 0u32);
    for _ in 0..samples {
        let i = rng.below(pages as u64) as usize;
        let vpn = (p as usize + i * PAGE) / PAGE;
        let mut e = [0u8; 8];
        pm.read_exact_at(&mut e, (vpn * 8) as u64).ok()?;
        let e = u64::from_le_bytes(e);
        if e >> 63 == 0 {
            continue;
        }
        let pfn = e & ((1 << 55) - 1);
        if pfn == 0 {
            return None;
        }
        let mut fl = [0u8; 8];
        kf.read_exact_at(&mut fl, pfn * 8).ok()?;
        let fl = u64::from_le_bytes(fl);
        seen += 1;
        if fl & (1 << 15 | 1 << 16) != 0 {
            large += 1;
        }
    }
    (seen > 0).then(|| large as f64 / seen as f64)
}

fn folio_note(share: Option<f64>) -> String {
    match share {
        Some(s) => format!("{:.0}% of pages in large folios", s * 100.0),
        None => "folio sizes not checked (no /proc/kpageflags)".into(),
    }
}

/// Creates a file of `pages` pages of random bytes with 4 KiB writes (so that the page cache
/// holds order-0 folios), synced to the disk.
fn create_file(path: &Path, pages: usize, seed: u64) -> Res<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .ctx(&format!("create {}", path.display()))?;
    let mut rng = Rng(seed);
    let mut buf = vec![0u8; PAGE];
    for i in 0..pages {
        for c in buf.chunks_exact_mut(8) {
            c.copy_from_slice(&rng.next().to_le_bytes());
        }
        f.write_all_at(&buf, (i * PAGE) as u64).ctx("write")?;
    }
    f.sync_all().ctx("fsync")?;
    Ok(f)
}

/// A temporary directory on a file system backed by the disk (not tmpfs), removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Res<Scratch> {
        let cands = [
            PathBuf::from("/var/tmp"),
            std::env::temp_dir(),
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
        ];
        for c in cands {
            let cs = cstr(&c);
            // SAFETY: statfs fills the zeroed struct.
            let mut st: libc::statfs = unsafe { std::mem::zeroed() };
            if unsafe { libc::statfs(cs.as_ptr(), &mut st) } != 0 || st.f_type == libc::TMPFS_MAGIC {
                continue;
            }
            let d = c.join(format!("lrugen-kcosts-{}", std::process::id()));
            if fs::create_dir_all(&d).is_ok() {
                return Ok(Scratch(d));
            }
        }
        Err("no directory on a disk-backed file system".into())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------------------------
// Page contents that compress about 3:1 with lzo-rle

const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "had",
    "they",
    "you",
    "were",
    "their",
    "one",
    "all",
    "we",
    "can",
    "her",
    "has",
    "there",
    "been",
    "if",
    "more",
    "when",
    "will",
    "would",
    "who",
    "so",
    "no",
    "memory",
    "page",
    "reclaim",
    "kernel",
    "process",
    "file",
    "cache",
    "system",
    "time",
    "list",
    "under",
    "pressure",
    "workload",
    "between",
    "through",
    "another",
    "because",
    "should",
    "during",
    "without",
    "against",
    "machine",
    "reference",
    "generation",
    "active",
    "inactive",
    "folio",
    "mapping",
    "device",
    "request",
    "number",
    "however",
    "several",
    "although",
    "measured",
    "question",
    "answer",
    "different",
    "important",
    "example",
    "government",
    "development",
    "information",
    "national",
    "political",
    "economic",
    "international",
    "history",
    "children",
    "experience",
    "community",
    "something",
    "everything",
    "themselves",
    "possible",
    "available",
    "particular",
    "university",
    "including",
    "following",
    "according",
    "research",
    "interest",
    "evidence",
    "results",
    "problem",
    "service",
    "support",
    "country",
    "program",
    "business",
    "million",
    "company",
    "market",
];

/// Words drawn with Zipf's law (probability ∝ 1/rank), a number now and then, sentences.
fn english(rng: &mut Rng, cdf: &[f64], out: &mut [u8]) {
    let mut i = 0;
    let mut cap = true;
    let mut since = 0;
    while i < out.len() {
        let r = rng.next();
        let mut word: Vec<u8> = if r % 23 == 0 {
            format!("{}", (r >> 8) % 100_000).into_bytes()
        } else {
            let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * cdf[cdf.len() - 1];
            let k = cdf.partition_point(|&c| c < u).min(WORDS.len() - 1);
            WORDS[k].as_bytes().to_vec()
        };
        if cap {
            word[0] = word[0].to_ascii_uppercase();
            cap = false;
        }
        since += 1;
        if since > 6 && (r >> 59) < 6 {
            word.extend_from_slice(if r & 1 == 0 { b"." } else { b"," });
            cap = r & 1 == 0;
            since = 0;
        }
        word.push(b' ');
        let n = word.len().min(out.len() - i);
        out[i..i + n].copy_from_slice(&word[..n]);
        i += n;
    }
}

/// A page of "memory": 1.5 KiB of English-like text, then 128-byte records (two pointers into
/// a 256 KiB slab of the direct map, two small integers, zeros), so that lzo-rle compresses it
/// about 3:1, the usual zram ratio.
fn text_page(rng: &mut Rng, cdf: &[f64], out: &mut [u8]) {
    let (text, recs) = out.split_at_mut(1536);
    english(rng, cdf, text);
    let base = 0xffff_8880_0000_0000u64 + rng.below(1 << 20) * PAGE as u64;
    for r in recs.chunks_exact_mut(128) {
        r.fill(0);
        r[0..8].copy_from_slice(&(base + rng.below(4096) * 64).to_le_bytes());
        r[8..16].copy_from_slice(&(base + rng.below(4096) * 64).to_le_bytes());
        r[16..20].copy_from_slice(&(rng.below(256) as u32).to_le_bytes());
        r[20..24].copy_from_slice(&(rng.below(16) as u32).to_le_bytes());
    }
}

/// `pages` such pages, each different.
fn text_pages(pages: usize) -> Res<Map> {
    let m = Map::anon(pages * PAGE)?;
    let mut rng = Rng(0x7e57);
    let cdf: Vec<f64> = (1..=WORDS.len())
        .scan(0.0, |acc, k| {
            *acc += 1.0 / k as f64;
            Some(*acc)
        })
        .collect();
    for i in 0..pages {
        // SAFETY: page i of our own mapping.
        let s = unsafe { std::slice::from_raw_parts_mut(m.page(i), PAGE) };
        text_page(&mut rng, &cdf, s);
    }
    Ok(m)
}

// ---------------------------------------------------------------------------------------------
// 11. Bloom filter (user-space copy of mm/vmscan.c)

const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
const BLOOM_FILTER_SHIFT: u32 = 15;
const FILTER_WORDS: usize = (1 << BLOOM_FILTER_SHIFT) / 64;

type Filter = [u64; FILTER_WORDS];

/// `hash_ptr` = `hash_64_generic` on 64-bit x86.
#[inline(always)]
fn hash_ptr(val: u64, bits: u32) -> u32 {
    (val.wrapping_mul(GOLDEN_RATIO_64) >> (64 - bits)) as u32
}

#[inline(always)]
fn get_item_key(item: u64) -> [u32; 2] {
    let hash = hash_ptr(item, BLOOM_FILTER_SHIFT * 2);
    [hash & ((1 << BLOOM_FILTER_SHIFT) - 1), hash >> BLOOM_FILTER_SHIFT]
}

#[inline(always)]
fn test_bit(nr: u32, f: &Filter) -> bool {
    (f[(nr / 64) as usize % FILTER_WORDS] >> (nr % 64)) & 1 != 0
}

#[inline(always)]
fn test_bloom_filter(f: &Filter, item: u64) -> bool {
    let key = get_item_key(item);
    test_bit(key[0], f) && test_bit(key[1], f)
}

/// Tests every PMD entry of the tables at `bases`, each in filter `(j * φ32 >> shift) & mask`.
fn bloom_pass(filters: &[Filter], mask: usize, shift: u32, bases: &[u64]) -> (Duration, u64) {
    let t = Instant::now();
    let mut hits = 0u64;
    let mut j = 0u32;
    for &b in bases {
        for i in 0..512u64 {
            j = j.wrapping_add(1);
            let fi = (j.wrapping_mul(0x9E37_79B1) >> shift) as usize & mask;
            hits += test_bloom_filter(&filters[fi], b + 8 * i) as u64;
        }
    }
    (t.elapsed(), black_box(hits))
}

/// `update_bloom_filter`: `set_bit` (a locked `or` on x86) of each key whose bit is clear.
#[inline(always)]
fn update_bloom_filter(f: &[AtomicU64; FILTER_WORDS], item: u64) {
    for k in get_item_key(item) {
        let (w, bit) = (&f[(k / 64) as usize % FILTER_WORDS], 1u64 << (k % 64));
        if w.load(Ordering::Relaxed) & bit == 0 {
            w.fetch_or(bit, Ordering::Relaxed);
        }
    }
}

/// Updates with every PMD entry of the tables at `bases`, the filter cleared every 8 tables
/// (4096 items: about a quarter of its bits set, so most updates set a bit).
fn bloom_update_pass(f: &[AtomicU64; FILTER_WORDS], bases: &[u64]) -> Duration {
    let t = Instant::now();
    for (n, &b) in bases.iter().enumerate() {
        if n % 8 == 0 {
            for w in f {
                w.store(0, Ordering::Relaxed);
            }
        }
        for i in 0..512u64 {
            update_bloom_filter(f, b + 8 * i);
        }
    }
    t.elapsed()
}

/// Per round: ns per test with a warm filter and with cold ones, ns per update; and the share
/// of tests that pass.
struct Bloom {
    warm: Vec<f64>,
    cold: Vec<f64>,
    update: Vec<f64>,
    pass: f64,
}

fn bloom_measure() -> Res<Bloom> {
    let mut rng = Rng(7);
    let bases: Vec<u64> = (0..4096)
        .map(|_| 0xffff_8880_0000_0000u64 + rng.below(1 << 22) * PAGE as u64)
        .collect();
    let nf = 16384usize;
    let (_m, base) = Map::aligned(nf * PAGE, 2 * MIB)?;
    let _ = advise(base, nf * PAGE, libc::MADV_HUGEPAGE);
    // SAFETY: nf pages of our mapping, page-aligned, viewed as nf filters of one page each.
    let filters: &mut [Filter] = unsafe { std::slice::from_raw_parts_mut(base.cast::<Filter>(), nf) };
    for f in filters.iter_mut() {
        for w in f.iter_mut() {
            *w = rng.next() & rng.next() & rng.next(); // 1/8 of the bits set
        }
    }
    let tests = (bases.len() * 512) as u64;
    let (mut warm, mut cold, mut hits, mut upd) = (vec![], vec![], 0, vec![]);
    let uf: Box<[AtomicU64; FILTER_WORDS]> = Box::new(std::array::from_fn(|_| AtomicU64::new(0)));
    let _ = bloom_pass(&filters[..1], 0, 18, &bases);
    for _ in 0..ROUNDS {
        let (d, h) = bloom_pass(&filters[..1], black_box(0), 18, &bases);
        warm.push(ns_per(d, tests));
        hits = h;
        let (d, _) = bloom_pass(filters, black_box(nf - 1), 18, &bases);
        cold.push(ns_per(d, tests));
        upd.push(ns_per(bloom_update_pass(&uf, &bases), tests));
    }
    Ok(Bloom {
        warm,
        cold,
        update: upd,
        pass: hits as f64 / tests as f64,
    })
}

fn bloom(rep: &mut Report) {
    match bloom_measure() {
        Ok(Bloom {
            warm,
            cold,
            update,
            pass,
        }) => {
            let what = format!(
                "USER-SPACE COPY of test_bloom_filter (hash_ptr, 2 test_bit in 2^15 bits), {:.0}% pass",
                pass * 100.0
            );
            rep.push("bloom_test_ns (warm filter)", "ns", what.clone(), Ok(warm));
            rep.push("bloom_test_ns (cold: 16Ki filters)", "ns", what, Ok(cold));
            rep.push(
                "bloom_update_ns (warm filter)",
                "ns",
                "USER-SPACE COPY of update_bloom_filter (hash_ptr, test_bit, set_bit = lock or), filter cleared every 4096 items",
                Ok(update),
            );
        }
        Err(e) => rep.skip("bloom_test_ns", "ns", &e),
    }
}

/// A user-space copy of the swap slot allocator's work per slot under the device's lock:
/// `scan_swap_map_slots` (6.1, 6.12) taking `n` free slots of a cluster for a per-CPU slot cache
/// — each `swap_map` byte tested from the cluster's next offset, set to `SWAP_HAS_CACHE`, the
/// cluster's count and the device's `inuse_pages` kept — and `swap_entry_free` giving them back.
/// Returns ns per slot, taking and giving back, over a 1 GiB device (262,144 slots, 512 per
/// cluster) whose map starts half full at random.
fn swap_slot_pass(map: &mut [u8], counts: &mut [u32], order: &[u32], n: usize) -> (Duration, u64) {
    const HAS_CACHE: u8 = 0x40;
    let mut inuse = 0u64;
    let mut taken: Vec<u32> = Vec::with_capacity(n);
    let t = Instant::now();
    for &c in order {
        let base = c as usize * 512;
        taken.clear();
        let mut off = 0;
        while taken.len() < n && off < 512 {
            let e = &mut map[base + off];
            if *e == 0 {
                *e = HAS_CACHE;
                counts[c as usize] += 1;
                inuse += 1;
                taken.push((base + off) as u32);
            }
            off += 1;
        }
        for &slot in &taken {
            map[slot as usize] = 0;
            counts[c as usize] -= 1;
            inuse -= 1;
        }
        black_box(&taken);
    }
    (t.elapsed(), inuse + black_box(order.len() as u64 * n as u64))
}

fn swap_slots(rep: &mut Report) {
    let clusters = 512usize;
    let mut rng = Rng(11);
    let mut map: Vec<u8> = (0..clusters * 512)
        .map(|_| if rng.next() & 1 == 0 { 1 } else { 0 })
        .collect();
    let mut counts: Vec<u32> = (0..clusters)
        .map(|c| map[c * 512..(c + 1) * 512].iter().filter(|&&b| b != 0).count() as u32)
        .collect();
    let order: Vec<u32> = (0..4096).map(|_| rng.below(clusters as u64) as u32).collect();
    let n = 64;
    let mut v = Vec::with_capacity(ROUNDS);
    let _ = swap_slot_pass(&mut map, &mut counts, &order, n);
    for _ in 0..ROUNDS {
        let (d, slots) = swap_slot_pass(&mut map, &mut counts, &order, n);
        v.push(ns_per(d, slots));
    }
    rep.push(
        "per_swap_slot_ns",
        "ns",
        "USER-SPACE COPY of scan_swap_map_slots + swap_entry_free: 64 free slots of a half-full 512-slot cluster taken and given back, per slot and direction",
        Ok(v.iter().map(|x| x / 2.0).collect()),
    );
}

// ---------------------------------------------------------------------------------------------
// 3. access_hit_ns, 4b. anonymous minor fault

fn access_hit(huge: bool) -> Res<(Vec<f64>, String)> {
    let len = 1usize << 30;
    let (_m, base) = Map::aligned(len, 2 * MIB)?;
    advise(
        base,
        len,
        if huge {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        },
    )?;
    let n = len / PAGE;
    touch_write(base, n, PAGE);
    let thp_kb: usize = sys_read("/proc/self/smaps_rollup")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("AnonHugePages:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    let mut rng = Rng(3);
    let order = rng.distinct(n, n);
    let slot = |p: usize| base.wrapping_add(p * PAGE + ((p.wrapping_mul(0x9E37_79B9) >> 7) % 64) * 64) as *mut usize;
    for i in 0..n {
        let (a, b) = (order[i], order[(i + 1) % n]);
        // SAFETY: slots lie in our buffer, 8-byte aligned.
        unsafe { *slot(a) = slot(b) as usize };
    }
    drop(order);
    let chase = |start: *mut usize, steps: usize| -> (*mut usize, Duration) {
        let mut p = start;
        let t = Instant::now();
        for _ in 0..steps {
            // SAFETY: every slot holds the address of another slot of the buffer.
            p = unsafe { ptr::read_volatile(p) } as *mut usize;
        }
        (black_box(p), t.elapsed())
    };
    let steps = 1 << 20;
    let (mut p, _) = chase(slot(0), steps / 4);
    let mut v = vec![];
    for _ in 0..ROUNDS {
        let (q, d) = chase(p, steps);
        p = q;
        v.push(ns_per(d, steps as u64));
    }
    let note = format!(
        "dependent loads, random 4 KiB pages of 1 GiB; {:.0}% of it in huge pages",
        (thp_kb * 1024) as f64 / len as f64 * 100.0
    );
    Ok((v, note))
}

fn anon_fault() -> Res<(Vec<f64>, f64)> {
    let len = 64 * MIB;
    let (mut v, mut ppf) = (vec![], 0.0);
    for _ in 0..ROUNDS {
        let m = Map::anon(len)?;
        advise(m.ptr, len, libc::MADV_NOHUGEPAGE)?;
        let (f0, _) = faults();
        let t = Instant::now();
        touch_write(m.ptr, len / PAGE, PAGE);
        let d = t.elapsed();
        let (f1, _) = faults();
        v.push(ns_per(d, f1 - f0));
        ppf = (len / PAGE) as f64 / (f1 - f0).max(1) as f64;
    }
    Ok((v, ppf))
}

// ---------------------------------------------------------------------------------------------
// 6. Page-table walk: /proc/self/clear_refs

struct ClearRefs(File);

impl ClearRefs {
    fn open() -> Res<ClearRefs> {
        Ok(ClearRefs(
            OpenOptions::new()
                .write(true)
                .open("/proc/self/clear_refs")
                .ctx("open /proc/self/clear_refs")?,
        ))
    }

    /// One `echo 1 > clear_refs`, wall ns.
    fn run(&self) -> Res<f64> {
        let t = Instant::now();
        // SAFETY: one byte from a static buffer to our descriptor.
        let rc = unsafe { libc::write(self.0.as_raw_fd(), b"1".as_ptr().cast(), 1) };
        let d = t.elapsed();
        if rc != 1 {
            return Err(os_err("write clear_refs"));
        }
        Ok(d.as_nanos() as f64)
    }

    /// (old, young): the fastest of 5 walks with every PTE old, and of 5 after `touch` made the
    /// present PTEs young again.
    fn old_young(&self, touch: impl Fn()) -> Res<(f64, f64)> {
        self.run()?;
        let (mut o, mut y) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..5 {
            o = o.min(self.run()?);
            touch();
            y = y.min(self.run()?);
        }
        Ok((o, y))
    }
}

/// Per round: slopes of the clear_refs time (ns per unit) and intercepts (ns).
#[derive(Default)]
struct Slopes {
    old: Vec<f64>,
    young: Vec<f64>,
    old_fixed: Vec<f64>,
    per_unit_at_max: Vec<f64>,
}

impl Slopes {
    fn add(&mut self, xs: &[f64], old: &[f64], young: &[f64], what: &str) {
        if debug() {
            eprintln!("    clear_refs {what}: n {xs:?} old {old:?} young {young:?}");
        }
        let (so, io) = fit(xs, old);
        let (sy, _) = fit(xs, young);
        self.old.push(so);
        self.young.push(sy);
        self.old_fixed.push(io);
        self.per_unit_at_max.push(young[0] / xs[0]);
    }
}

const DENSE: [usize; 3] = [65536, 131072, 262144];
const SPARSE: [usize; 3] = [2048, 4096, 8192];

/// Dense: `n` present 4 KiB pages in one VMA.
fn walk_dense(cr: &ClearRefs, s: &mut Slopes) -> Res<()> {
    let max = DENSE[2];
    let (mut m, base) = Map::aligned(max * PAGE, 2 * MIB)?;
    advise(base, max * PAGE, libc::MADV_NOHUGEPAGE)?;
    touch_write(base, max, PAGE);
    let (mut xs, mut old, mut young) = (vec![], vec![], vec![]);
    for &n in DENSE.iter().rev() {
        // Unmapping frees the page tables of the tail: fewer PMDs, not empty ones.
        m.truncate_at(base.wrapping_add(n * PAGE));
        let (o, y) = cr.old_young(|| {
            touch_read(base, n, PAGE);
        })?;
        xs.push(n as f64);
        old.push(o);
        young.push(y);
    }
    s.add(&xs, &old, &young, "dense");
    Ok(())
}

/// Sparse, one VMA: one present page per 2 MiB region.
fn walk_sparse_one_vma(cr: &ClearRefs, s: &mut Slopes) -> Res<()> {
    let max = SPARSE[2];
    let (mut m, base) = Map::aligned(max * 2 * MIB, 2 * MIB)?;
    advise(base, max * 2 * MIB, libc::MADV_NOHUGEPAGE)?;
    touch_write(base, max, 2 * MIB);
    let (mut xs, mut old, mut young) = (vec![], vec![], vec![]);
    for &n in SPARSE.iter().rev() {
        m.truncate_at(base.wrapping_add(n * 2 * MIB));
        let (o, y) = cr.old_young(|| {
            touch_read(base, n, 2 * MIB);
        })?;
        xs.push(n as f64);
        old.push(o);
        young.push(y);
    }
    s.add(&xs, &old, &young, "sparse, one VMA");
    Ok(())
}

/// Sparse, one VMA per region: a VMA of `pages` pages at the start of every other 2 MiB
/// region (the gaps keep them from merging), its first page present.
fn walk_sparse_vmas(cr: &ClearRefs, pages: usize, s: &mut Slopes) -> Res<()> {
    let max = SPARSE[2];
    let stride = 4 * MIB;
    let mut maps: Vec<Map> = Vec::with_capacity(max); // allocated before the hole is made
    let (hole, base) = Map::aligned(max * stride, 2 * MIB)?;
    drop(hole); // the range is free again; MAP_FIXED_NOREPLACE maps into it
    for i in 0..max {
        let at = base.wrapping_add(i * stride);
        // SAFETY: a new mapping at a free address (NOREPLACE fails if it is not).
        let p = unsafe {
            libc::mmap(
                at.cast(),
                pages * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_err("mmap MAP_FIXED_NOREPLACE"));
        }
        maps.push(Map {
            ptr: p.cast(),
            len: pages * PAGE,
        });
        advise(at, pages * PAGE, libc::MADV_NOHUGEPAGE)?;
        touch_write(at, 1, PAGE);
    }
    let (mut xs, mut old, mut young) = (vec![], vec![], vec![]);
    for &n in SPARSE.iter().rev() {
        maps.truncate(n);
        let (o, y) = cr.old_young(|| {
            touch_read(base, n, stride);
        })?;
        xs.push(n as f64);
        old.push(o);
        young.push(y);
    }
    s.add(&xs, &old, &young, &format!("sparse, a VMA of {pages} pages each"));
    Ok(())
}

struct Walks {
    dense: Slopes,
    one_vma: Slopes,
    vma512: Slopes,
    vma1: Slopes,
}

fn walks() -> Res<Walks> {
    let cr = ClearRefs::open()?;
    let mut w = Walks {
        dense: Slopes::default(),
        one_vma: Slopes::default(),
        vma512: Slopes::default(),
        vma1: Slopes::default(),
    };
    for _ in 0..ROUNDS {
        walk_dense(&cr, &mut w.dense)?;
        walk_sparse_one_vma(&cr, &mut w.one_vma)?;
        walk_sparse_vmas(&cr, 512, &mut w.vma512)?;
        walk_sparse_vmas(&cr, 1, &mut w.vma1)?;
    }
    Ok(w)
}

fn walk_rows(rep: &mut Report) {
    let w = match walks() {
        Ok(w) => w,
        Err(e) => {
            rep.skip("per_pte_walked_ns", "ns", &e);
            return;
        }
    };
    rep.push(
        "per_pte_walked_ns (present, young)",
        "ns",
        format!(
            "clear_refs slope over 64/128/256 Ki present 4 KiB PTEs, all young ({} ns/PTE at 1 GiB)",
            num(median(&w.dense.per_unit_at_max))
        ),
        Ok(w.dense.young.clone()),
    );
    rep.push(
        "per_pte_walked_ns (present, old)",
        "ns",
        format!(
            "the same, all old (clear_refs still touches each folio; MGLRU skips old PTEs); fixed {} µs",
            num(median(&w.dense.old_fixed) / 1000.0)
        ),
        Ok(w.dense.old.clone()),
    );
    // Per region: one VMA over all, a = PMD + 511 none + 1 present PTE; a 512-page VMA each,
    // b = VMA + a; a 1-page VMA each, c = VMA + PMD + 1 present PTE. (b − c) / 511 is a none
    // PTE. The PMD entry alone (a − 511 × none − present) is a small difference of large,
    // cache-sensitive figures: printed only with KCOSTS_DEBUG; c bounds it from above.
    let e: Vec<f64> = pairwise(&w.vma512.old, &w.vma1.old, |a, b| (a - b) / 511.0);
    if debug() {
        let pmd: Vec<f64> = (0..e.len())
            .map(|i| w.one_vma.old[i] - 511.0 * e[i] - w.dense.old[i])
            .collect();
        eprintln!("    PMD entry alone (derived): {pmd:?}");
    }
    rep.push(
        "per_pte_walked_ns (none)",
        "ns",
        format!(
            "per none PTE read: (a 512-page VMA per PMD − a 1-page VMA per PMD) / 511 ({} and {} ns per region)",
            num(median(&w.vma512.old)),
            num(median(&w.vma1.old))
        ),
        Ok(e),
    );
    rep.push(
        "per_pmd_walked_ns (1 old + 511 none PTEs)",
        "ns",
        "clear_refs slope over 2/4/8 Ki PMDs in one VMA, one present page each: PMD entry, PTE table map + lock, its 512 PTEs",
        Ok(w.one_vma.old.clone()),
    );
    rep.push(
        "per_pmd_walked_ns (1 young + 511 none PTEs)",
        "ns",
        "the same, the present PTE young",
        Ok(w.one_vma.young.clone()),
    );
    rep.push(
        "per_pmd_walked_ns (1-page VMA each)",
        "ns",
        "a 1-page VMA per PMD, its PTE old: VMA + PMD entry + 1 PTE, a bound on the PMD entry alone",
        Ok(w.vma1.old.clone()),
    );
}

// ---------------------------------------------------------------------------------------------
// 8. TLB flush and shootdown IPI

fn timer_overhead() -> f64 {
    let mut v: Vec<f64> = (0..10_000)
        .map(|_| {
            let t = Instant::now();
            t.elapsed().as_nanos() as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A VMA of `n` read-write pages between two execute-only pages (a protection it never takes,
/// so that mprotect of all of it never splits or merges it), every page written.
struct Vma {
    _m: Map,
    p: *mut u8,
    n: usize,
}

impl Vma {
    fn new(n: usize) -> Res<Vma> {
        Self::with(n, &(0..n).collect::<Vec<_>>())
    }

    /// The same with only the pages `present` written (the others have no PTE).
    fn with(n: usize, present: &[usize]) -> Res<Vma> {
        let m = Map::new(
            (n + 2) * PAGE,
            libc::PROT_EXEC,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
        )?;
        let p = m.page(1);
        // SAFETY: the middle pages of our mapping.
        check(
            unsafe { libc::mprotect(p.cast(), n * PAGE, libc::PROT_READ | libc::PROT_WRITE) },
            "mprotect",
        )?;
        advise(p, n * PAGE, libc::MADV_NOHUGEPAGE)?;
        for &i in present {
            touch_write(p.wrapping_add(i * PAGE), 1, PAGE);
        }
        Ok(Vma { _m: m, p, n })
    }

    fn prot(&self, prot: libc::c_int) -> libc::c_int {
        // SAFETY: the whole VMA.
        unsafe { libc::mprotect(self.p.cast(), self.n * PAGE, prot) }
    }

    /// Medians of mprotect(PROT_NONE) of the VMA (its present PTEs stop being present to the
    /// TLB: flushed) and of mprotect(PROT_READ) back (a PROT_NONE PTE was not present to the
    /// TLB: `pte_needs_flush` is false, no flush); the same walk and PTE changes otherwise.
    fn mprotect_pair(&self, iters: usize, timer: f64) -> Res<(f64, f64)> {
        let (mut down, mut up) = (Vec::with_capacity(iters), Vec::with_capacity(iters));
        check(self.prot(libc::PROT_READ | libc::PROT_WRITE), "mprotect")?;
        // SAFETY: a read-write page of ours (madvise may have dropped it).
        unsafe { ptr::write_volatile(self.p, 1) };
        for _ in 0..iters {
            let t = Instant::now();
            let a = self.prot(libc::PROT_NONE);
            down.push(t.elapsed().as_nanos() as f64 - timer);
            let t = Instant::now();
            let b = self.prot(libc::PROT_READ);
            up.push(t.elapsed().as_nanos() as f64 - timer);
            check(a.min(b), "mprotect")?;
        }
        check(self.prot(libc::PROT_READ | libc::PROT_WRITE), "mprotect")?;
        Ok((median(&down), median(&up)))
    }

    /// Median wall of madvise(MADV_DONTNEED) of the first page, written before each.
    fn dontneed(&self, iters: usize, timer: f64) -> Res<f64> {
        let mut v = Vec::with_capacity(iters);
        for _ in 0..iters {
            // SAFETY: a read-write page of ours.
            unsafe { ptr::write_volatile(self.p, 1) };
            let t = Instant::now();
            // SAFETY: one page of our mapping.
            let rc = unsafe { libc::madvise(self.p.cast(), PAGE, libc::MADV_DONTNEED) };
            v.push(t.elapsed().as_nanos() as f64 - timer);
            check(rc, "madvise(MADV_DONTNEED)")?;
        }
        Ok(median(&v))
    }
}

/// VMA sizes up to x86's `tlb_single_page_flush_ceiling` (33 pages: one invlpg per page).
const SMALL: [usize; 6] = [1, 2, 4, 8, 16, 32];

#[derive(Default)]
struct Flush {
    one: Vec<f64>,
    per_page: Vec<f64>,
    full: Vec<f64>,
    walk1: Vec<f64>,
}

fn flush_local(timer: f64) -> Res<Flush> {
    let vmas: Vec<Vma> = SMALL.iter().map(|&n| Vma::new(n)).collect::<Res<_>>()?;
    // Two present PTEs at both ends of a 64-page VMA: the flush range spans 64 pages, more than
    // the ceiling: one full flush of the mm's TLB entries.
    let far = Vma::with(64, &[0, 63])?;
    let mut f = Flush::default();
    for _ in 0..ROUNDS {
        let t: Vec<(f64, f64)> = vmas.iter().map(|v| v.mprotect_pair(3000, timer)).collect::<Res<_>>()?;
        let d: Vec<f64> = t.iter().map(|(a, b)| a - b).collect();
        let xs: Vec<f64> = SMALL.iter().map(|&n| n as f64).collect();
        let (fa, fb) = far.mprotect_pair(3000, timer)?;
        if debug() {
            eprintln!("    mprotect NONE/READ of N pages {xs:?}: {t:?}; 2 PTEs in 64 pages: {fa:.0} / {fb:.0}");
        }
        let (slope, _) = fit(&xs, &d);
        f.one.push(d[0]);
        f.per_page.push(slope);
        f.full.push(fa - fb);
        f.walk1.push(t[0].1);
    }
    Ok(f)
}

/// Per round: (madvise DONTNEED of one page, mprotect(PROT_NONE) of a 1-page VMA), medians.
fn ipi_rounds(v: &Vma, timer: f64) -> Res<(Vec<f64>, Vec<f64>)> {
    let (mut dn, mut mp) = (vec![], vec![]);
    for _ in 0..ROUNDS {
        dn.push(v.dontneed(5000, timer)?);
        mp.push(v.mprotect_pair(5000, timer)?.0);
    }
    Ok((dn, mp))
}

/// The same with a thread of this process spinning on CPU 1 (a shootdown IPI per flush).
fn with_spinner<T>(f: impl FnOnce() -> Res<T>) -> Res<T> {
    if online_cpus() < 2 {
        return Err("one CPU only".into());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (s2, st2) = (stop.clone(), started.clone());
    let h = std::thread::spawn(move || {
        let ok = pin(1);
        st2.store(true, Ordering::Release);
        while ok && !s2.load(Ordering::Relaxed) {
            std::hint::spin_loop();
        }
        ok
    });
    while !started.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
    std::thread::sleep(Duration::from_millis(10));
    let r = f();
    stop.store(true, Ordering::Relaxed);
    match h.join() {
        Ok(true) => r,
        _ => Err("could not pin a thread to CPU 1".into()),
    }
}

fn tlb_rows(rep: &mut Report) {
    let timer = timer_overhead();
    match flush_local(timer) {
        Ok(f) => {
            rep.push(
                "tlb_flush_ns (per page, local)",
                "ns",
                format!(
                    "mprotect to PROT_NONE (flush) minus back to PROT_READ (no flush): slope over 1..32-page VMAs, an invlpg each (1 page: {} ns, not separable)",
                    num(median(&f.one))
                ),
                Ok(f.per_page),
            );
            rep.push(
                "tlb_flush_ns (full, local)",
                "ns",
                "the same difference for 2 PTEs 63 pages apart (range > 33 pages: one full flush); refills not counted",
                Ok(f.full),
            );
        }
        Err(e) => rep.skip("tlb_flush_ns", "ns", &e),
    }
    let r = Vma::new(1).and_then(|v| {
        let local = ipi_rounds(&v, timer)?;
        let remote = with_spinner(|| ipi_rounds(&v, timer));
        Ok((local, remote))
    });
    match r {
        Ok(((dn, mp), remote)) => {
            rep.push(
                "madvise DONTNEED 1 page (local)",
                "ns",
                "zap of one present anon PTE, page free, local flush; one thread",
                Ok(dn.clone()),
            );
            match remote {
                Ok((rdn, rmp)) => {
                    rep.push(
                        "tlb_ipi_ns (DONTNEED)",
                        "ns",
                        format!(
                            "madvise DONTNEED with a thread of the mm spinning on CPU 1 minus without ({} ns with)",
                            num(median(&rdn))
                        ),
                        Ok(pairwise(&rdn, &dn, |a, b| a - b)),
                    );
                    rep.push(
                        "tlb_ipi_ns (mprotect)",
                        "ns",
                        format!(
                            "mprotect(PROT_NONE) of a 1-page VMA with the spinning thread minus without ({} ns with)",
                            num(median(&rmp))
                        ),
                        Ok(pairwise(&rmp, &mp, |a, b| a - b)),
                    );
                }
                Err(e) => rep.skip("tlb_ipi_ns", "ns", &e),
            }
        }
        Err(e) => rep.skip("tlb_ipi_ns", "ns", &e),
    }
}

fn anon_section(rep: &mut Report) {
    if rep.wants("anon") {
        for huge in [false, true] {
            let name = if huge {
                "access_hit_ns (THP, reference)"
            } else {
                "access_hit_ns"
            };
            match access_hit(huge) {
                Ok((v, note)) => rep.push(name, "ns", note, Ok(v)),
                Err(e) => rep.skip(name, "ns", &e),
            }
        }
        match anon_fault() {
            Ok((v, ppf)) => rep.push(
                "minor_fault_ns (anon zero-fill)",
                "ns",
                format!("first write to a page of 64 MiB MADV_NOHUGEPAGE, wall / ru_minflt ({ppf:.2} pages/fault)"),
                Ok(v),
            ),
            Err(e) => rep.skip("minor_fault_ns (anon zero-fill)", "ns", &e),
        }
    }
    if rep.wants("pte") {
        walk_rows(rep);
    }
    if rep.wants("tlb") {
        tlb_rows(rep);
    }
}

// ---------------------------------------------------------------------------------------------
// 1, 2, 4a. Cached file: read hit, page-cache lookup, file minor fault

fn read_hit(f: &File, pages: usize) -> Res<Vec<f64>> {
    let fd = f.as_raw_fd();
    let mut buf = vec![0u8; PAGE];
    let mut rng = Rng(11);
    let offs: Vec<usize> = (0..100_000).map(|_| rng.below(pages as u64) as usize * PAGE).collect();
    let mut v = vec![];
    for _ in 0..ROUNDS {
        let t = Instant::now();
        for &o in &offs {
            if pread_raw(fd, buf.as_mut_ptr(), o) != PAGE as isize {
                return Err(os_err("pread"));
            }
        }
        v.push(ns_per(t.elapsed(), offs.len() as u64));
    }
    Ok(v)
}

struct Lookup {
    slope: Vec<f64>,
    call: Vec<f64>,
    random: Vec<f64>,
}

fn page_cache_lookup(f: &File, pages: usize) -> Res<Lookup> {
    let len = pages * PAGE;
    let m = Map::shared(f, len)?; // never touched: no page tables
    let a = Map::anon(len)?; // the same, anonymous: mincore does no lookup
    let sizes = [16usize, 128, 1024, 8192];
    let mut vec = vec![0u8; 8192];
    let mut rng = Rng(5);
    let mincore = |base: *mut u8, page: usize, n: usize, vec: &mut [u8]| -> Res<()> {
        // SAFETY: n pages of our mapping from page; vec holds n bytes or more.
        check(
            unsafe { libc::mincore(base.wrapping_add(page * PAGE).cast(), n * PAGE, vec.as_mut_ptr()) },
            "mincore",
        )
    };
    let mut out = Lookup {
        slope: vec![],
        call: vec![],
        random: vec![],
    };
    let singles: Vec<usize> = (0..100_000).map(|_| rng.below(pages as u64) as usize).collect();
    for _ in 0..ROUNDS {
        let (mut xs, mut ys) = (vec![], vec![]);
        for &s in &sizes {
            let calls = ((1 << 20) / s).max(64);
            let starts: Vec<usize> = (0..calls).map(|_| rng.below((pages - s) as u64) as usize).collect();
            let t = Instant::now();
            for &st in &starts {
                mincore(m.ptr, st, s, &mut vec)?;
            }
            xs.push(s as f64);
            ys.push(ns_per(t.elapsed(), calls as u64));
        }
        if vec.iter().take(16).any(|&b| b & 1 == 0) {
            return Err("the file is not cached".into());
        }
        let (s, i) = fit(&xs, &ys);
        out.slope.push(s);
        out.call.push(i);
        let t = Instant::now();
        for &p in &singles {
            mincore(m.ptr, p, 1, &mut vec)?;
        }
        let file = ns_per(t.elapsed(), singles.len() as u64);
        let t = Instant::now();
        for &p in &singles {
            mincore(a.ptr, p, 1, &mut vec)?;
        }
        let anon = ns_per(t.elapsed(), singles.len() as u64);
        out.random.push(file - anon);
    }
    Ok(out)
}

/// Fresh mappings of the file, one read per `stride` pages: (wall per fault, pages read per
/// fault, large-folio share).
fn file_fault(f: &File, pages: usize, random: bool, stride: usize) -> Res<(Vec<f64>, f64, Option<f64>)> {
    let len = pages * PAGE;
    let n = pages / stride;
    let (mut v, mut ppf, mut share) = (vec![], 0.0, None);
    for r in 0..ROUNDS {
        let m = Map::shared(f, len)?;
        if random {
            advise(m.ptr, len, libc::MADV_RANDOM)?;
        }
        let (f0, j0) = faults();
        let t = Instant::now();
        black_box(touch_read(m.ptr, n, stride * PAGE));
        let d = t.elapsed();
        let (f1, j1) = faults();
        if j1 != j0 {
            return Err(format!("{} major faults: the pages were not cached", j1 - j0));
        }
        v.push(ns_per(d, f1 - f0));
        ppf = n as f64 / (f1 - f0).max(1) as f64;
        if r == 0 && stride == 1 {
            share = large_folio_share(m.ptr, pages, 2048);
        }
    }
    Ok((v, ppf, share))
}

/// Leaves only every 16th page of the file in the page cache (dropped, then read back one by
/// one with `POSIX_FADV_RANDOM`), so that fault-around finds no neighbour to map.
fn cache_every_16th(path: &Path, pages: usize) -> Res<()> {
    let f = File::open(path).ctx("open")?;
    fadvise(&f, libc::POSIX_FADV_DONTNEED)?;
    fadvise(&f, libc::POSIX_FADV_RANDOM)?;
    let mut buf = vec![0u8; PAGE];
    for i in (0..pages).step_by(16) {
        f.read_exact_at(&mut buf, (i * PAGE) as u64).ctx("read")?;
    }
    let r = resident(&f, pages * PAGE)?;
    if r != pages / 16 {
        return Err(format!("{r} pages cached, expected {}", pages / 16));
    }
    Ok(())
}

fn file_cached_section(rep: &mut Report, path: &Path, f: &File, pages: usize) {
    let len = pages * PAGE;
    // Read it once so that it is cached (it was written, so it should be).
    let mut buf = vec![0u8; MIB];
    for off in (0..len).step_by(MIB) {
        let _ = f.read_exact_at(&mut buf, off as u64);
    }
    let cached = resident(f, len).map(|r| r as f64 / pages as f64 * 100.0).unwrap_or(0.0);
    match read_hit(f, pages) {
        Ok(v) => rep.push(
            "read_hit_ns",
            "ns",
            format!("pread 4 KiB at random pages of a 256 MiB ext4 file, {cached:.0}% cached; wall"),
            Ok(v),
        ),
        Err(e) => rep.skip("read_hit_ns", "ns", &e),
    }
    match page_cache_lookup(f, pages) {
        Ok(l) => {
            rep.push(
                "page_cache_lookup_ns (next index)",
                "ns",
                format!(
                    "mincore of an unfaulted MAP_SHARED range: slope over 16..8192 pages (per call {} ns)",
                    num(median(&l.call))
                ),
                Ok(l.slope),
            );
            rep.push(
                "page_cache_lookup_ns (random index)",
                "ns",
                "mincore of 1 page at a random index, minus the same on an anonymous mapping",
                Ok(l.random),
            );
        }
        Err(e) => rep.skip("page_cache_lookup_ns", "ns", &e),
    }
    for (name, random) in [
        ("minor_fault_ns (file, fault-around)", false),
        ("minor_fault_ns (file, MADV_RANDOM)", true),
    ] {
        match file_fault(f, pages, random, 1) {
            Ok((v, ppf, share)) => rep.push(
                name,
                "ns",
                format!(
                    "read of each page of a fresh mapping of the cached file, wall / ru_minflt: {ppf:.1} pages/fault; {}",
                    folio_note(share)
                ),
                Ok(v),
            ),
            Err(e) => rep.skip(name, "ns", &e),
        }
    }
    let name = "minor_fault_ns (file, 1 page/fault)";
    match cache_every_16th(path, pages).and_then(|_| file_fault(f, pages, false, 16)) {
        Ok((v, ppf, _)) => rep.push(
            name,
            "ns",
            format!(
                "only every 16th page cached (fault-around finds nothing else to map), one read each: {ppf:.2} reads/fault"
            ),
            Ok(v),
        ),
        Err(e) => rep.skip(name, "ns", &e),
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Block I/O and page-cache misses

/// CPU of one cached 4 KiB pread over the first 256 pages of `f` (ns).
fn cached_pread_cpu(f: &File) -> Res<f64> {
    let fd = f.as_raw_fd();
    let mut buf = vec![0u8; PAGE];
    for i in 0..256 {
        pread_raw(fd, buf.as_mut_ptr(), i * PAGE);
    }
    let n = 50_000;
    let c0 = cpu_ns();
    for i in 0..n {
        if pread_raw(fd, buf.as_mut_ptr(), (i * 97 % 256) * PAGE) != PAGE as isize {
            return Err(os_err("pread"));
        }
    }
    Ok((cpu_ns() - c0) / n as f64)
}

/// O_DIRECT 4 KiB random reads of `path`: (CPU per read, wall per read).
fn direct_reads(path: &Path, pages: usize, n: usize) -> Res<(Vec<f64>, Vec<f64>)> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .ctx(&format!("open {} O_DIRECT", path.display()))?;
    let buf = Map::anon(PAGE)?;
    let mut rng = Rng(13);
    let (mut cpu, mut wall) = (vec![], vec![]);
    for _ in 0..ROUNDS {
        let offs: Vec<usize> = (0..n).map(|_| rng.below(pages as u64) as usize * PAGE).collect();
        let c0 = cpu_ns();
        let t = Instant::now();
        for &o in &offs {
            if pread_raw(f.as_raw_fd(), buf.ptr, o) != PAGE as isize {
                return Err(os_err("pread O_DIRECT"));
            }
        }
        wall.push(ns_per(t.elapsed(), n as u64));
        cpu.push((cpu_ns() - c0) / n as f64);
    }
    Ok((cpu, wall))
}

/// Buffered 4 KiB reads (or mapped reads) of distinct random pages after dropping the file
/// from the page cache: (CPU per miss, wall per miss).
fn misses(path: &Path, pages: usize, n: usize, mapped: bool) -> Res<(Vec<f64>, Vec<f64>)> {
    let mut rng = Rng(17);
    let (mut cpu, mut wall) = (vec![], vec![]);
    let mut buf = vec![0u8; PAGE];
    for _ in 0..ROUNDS {
        let f = File::open(path).ctx("open")?;
        fadvise(&f, libc::POSIX_FADV_DONTNEED)?;
        let left = resident(&f, pages * PAGE)?;
        if left > pages / 100 {
            return Err(format!("{left} pages stayed cached after POSIX_FADV_DONTNEED"));
        }
        fadvise(&f, libc::POSIX_FADV_RANDOM)?;
        let which = rng.distinct(n, pages);
        if mapped {
            let m = Map::shared(&f, pages * PAGE)?;
            advise(m.ptr, pages * PAGE, libc::MADV_RANDOM)?;
            let (_, j0) = faults();
            let c0 = cpu_ns();
            let t = Instant::now();
            let mut s = 0u64;
            for &p in &which {
                // SAFETY: page p of the mapping.
                s += unsafe { ptr::read_volatile(m.page(p)) } as u64;
            }
            black_box(s);
            let d = t.elapsed();
            let c = cpu_ns() - c0;
            let (_, j1) = faults();
            if j1 - j0 < n as u64 * 9 / 10 {
                return Err(format!("only {} major faults for {n} pages", j1 - j0));
            }
            cpu.push(c / (j1 - j0) as f64);
            wall.push(ns_per(d, j1 - j0));
        } else {
            let c0 = cpu_ns();
            let t = Instant::now();
            for &p in &which {
                if pread_raw(f.as_raw_fd(), buf.as_mut_ptr(), p * PAGE) != PAGE as isize {
                    return Err(os_err("pread"));
                }
            }
            let d = t.elapsed();
            cpu.push((cpu_ns() - c0) / n as f64);
            wall.push(ns_per(d, n as u64));
            let now = resident(&f, pages * PAGE)?;
            if now > n + n / 10 {
                return Err(format!("{now} pages cached after {n} reads: readahead was not off"));
            }
        }
    }
    Ok((cpu, wall))
}

/// A loop device over a file in /dev/shm, detached and removed on drop.
struct Loop {
    dev: String,
    backing: PathBuf,
}

impl Loop {
    fn new(mib: usize) -> Res<Loop> {
        if !is_root() {
            return Err("not root".into());
        }
        let backing = PathBuf::from(format!("/dev/shm/lrugen-kcosts-{}.img", std::process::id()));
        create_file(&backing, mib * MIB / PAGE, 23).inspect_err(|_| {
            let _ = fs::remove_file(&backing);
        })?;
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&backing)
            .output();
        let dev = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            Ok(o) => {
                let _ = fs::remove_file(&backing);
                return Err(format!("losetup: {}", String::from_utf8_lossy(&o.stderr).trim()));
            }
            Err(e) => {
                let _ = fs::remove_file(&backing);
                return Err(format!("losetup: {e}"));
            }
        };
        Ok(Loop { dev, backing })
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        let _ = fs::remove_file(&self.backing);
    }
}

/// ext4 made on a device and mounted at a temporary directory, unmounted on drop (declare it
/// after the `Loop`, so that it is dropped first).
struct LoopFs {
    mnt: PathBuf,
}

impl LoopFs {
    fn new(dev: &str, scratch: &Path) -> Res<LoopFs> {
        let o = Command::new("mkfs.ext4")
            .args(["-q", "-F", dev])
            .output()
            .map_err(|e| format!("mkfs.ext4: {e}"))?;
        if !o.status.success() {
            return Err(format!("mkfs.ext4: {}", String::from_utf8_lossy(&o.stderr).trim()));
        }
        let mnt = scratch.join("mnt");
        fs::create_dir_all(&mnt).ctx("mkdir")?;
        let (src, target) = (CString::new(dev).unwrap_or_default(), cstr(&mnt));
        // SAFETY: NUL-terminated strings; no mount data.
        let rc = unsafe { libc::mount(src.as_ptr(), target.as_ptr(), c"ext4".as_ptr(), 0, ptr::null()) };
        if rc != 0 {
            let e = os_err("mount ext4");
            let _ = fs::remove_dir(&mnt);
            return Err(e);
        }
        Ok(LoopFs { mnt })
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        let c = cstr(&self.mnt);
        // SAFETY: a NUL-terminated path we mounted.
        unsafe { libc::umount2(c.as_ptr(), 0) };
        let _ = fs::remove_dir(&self.mnt);
    }
}

/// block_io (O_DIRECT), page-cache misses by pread and by mapped reads, on a file of a device.
fn io_rows(rep: &mut Report, dev: &str, path: &Path, pages: usize, base: f64, n_direct: usize, n_miss: usize) {
    let name = format!("block_io_ns ({dev}: ext4 file O_DIRECT)");
    match direct_reads(path, pages, n_direct) {
        Ok((cpu, wall)) => rep.push(
            name,
            "ns",
            format!(
                "CPU per 4 KiB O_DIRECT read minus a cached pread; raw {} ns, latency {} µs",
                num(median(&cpu)),
                num(median(&wall) / 1000.0)
            ),
            Ok(cpu.iter().map(|c| c - base).collect()),
        ),
        Err(e) => rep.skip(name, "ns", &e),
    }
    let name = format!("major_fault_ns (pread miss, {dev})");
    match misses(path, pages, n_miss, false) {
        Ok((cpu, wall)) => rep.push(
            name,
            "ns",
            format!(
                "CPU per buffered 4 KiB pread miss (FADV_DONTNEED, FADV_RANDOM) minus a cached pread; raw {} ns, latency {} µs",
                num(median(&cpu)),
                num(median(&wall) / 1000.0)
            ),
            Ok(cpu.iter().map(|c| c - base).collect()),
        ),
        Err(e) => rep.skip(name, "ns", &e),
    }
    let name = format!("major_fault_ns (mmap fault miss, {dev})");
    match misses(path, pages, n_miss, true) {
        Ok((cpu, wall)) => rep.push(
            name,
            "ns",
            format!(
                "CPU per ru_majflt, MAP_SHARED + MADV_RANDOM after FADV_DONTNEED (fault and retry included); latency {} µs",
                num(median(&wall) / 1000.0)
            ),
            Ok(cpu),
        ),
        Err(e) => rep.skip(name, "ns", &e),
    }
}

fn io_section(rep: &mut Report, scratch: &Path, path: &Path, pages: usize) {
    let base = File::open(path).ctx("open").and_then(|f| cached_pread_cpu(&f));
    let base = match base {
        Ok(b) => b,
        Err(e) => {
            rep.skip("block_io_ns", "ns", &e);
            return;
        }
    };
    rep.push(
        "cached pread (subtracted below)",
        "ns",
        "CPU of a 4 KiB pread of one of 256 cached pages (hot: syscall, lookup, copy)",
        Ok(vec![base]),
    );
    io_rows(rep, "vda", path, pages, base, 2000, 1000);
    let lp = match Loop::new(128) {
        Ok(l) => l,
        Err(e) => {
            rep.skip("block_io_ns (loop)", "ns", &e);
            return;
        }
    };
    let name = "block_io_ns (loop, raw device O_DIRECT)";
    match direct_reads(Path::new(&lp.dev), 128 * MIB / PAGE, 4000) {
        Ok((cpu, wall)) => rep.push(
            name,
            "ns",
            format!(
                "the reader's CPU per O_DIRECT read of {} over /dev/shm minus a cached pread (loop worker not charged); raw {} ns, latency {} µs",
                lp.dev,
                num(median(&cpu)),
                num(median(&wall) / 1000.0)
            ),
            Ok(cpu.iter().map(|c| c - base).collect()),
        ),
        Err(e) => rep.skip(name, "ns", &e),
    }
    match LoopFs::new(&lp.dev, scratch) {
        Ok(lfs) => {
            let pages = 64 * MIB / PAGE;
            let file = lfs.mnt.join("miss.dat");
            match create_file(&file, pages, 37) {
                Ok(_) => io_rows(rep, "ext4 on loop", &file, pages, base, 4000, 2000),
                Err(e) => rep.skip("major_fault_ns (ext4 on loop)", "ns", &e),
            }
            let _ = fs::remove_file(&file);
            drop(lfs);
        }
        Err(e) => rep.skip("major_fault_ns (ext4 on loop)", "ns", &e),
    }
    drop(lp);
}

// ---------------------------------------------------------------------------------------------
// 7. rmap walks: memcg reclaim of a file mapped by K processes

/// A memory cgroup of our own, removed on drop.
struct Memcg {
    dir: PathBuf,
    v2: bool,
}

impl Memcg {
    fn new() -> Res<Memcg> {
        if !is_root() {
            return Err("not root".into());
        }
        let name = format!("lrugen-kcosts-{}", std::process::id());
        let v2_ctl = fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control").unwrap_or_default();
        let (dir, v2) = if v2_ctl.split_whitespace().any(|c| c == "memory") {
            (Path::new("/sys/fs/cgroup").join(name), true)
        } else if Path::new("/sys/fs/cgroup/memory/memory.force_empty").exists() {
            (Path::new("/sys/fs/cgroup/memory").join(name), false)
        } else {
            return Err("no memory cgroup (no v2 memory controller, no v1 memory hierarchy)".into());
        };
        fs::create_dir(&dir).ctx(&format!("mkdir {}", dir.display()))?;
        Ok(Memcg { dir, v2 })
    }

    /// Reclaims the cgroup's pages (v2: `bytes`; v1: all it can).
    fn reclaim(&self, bytes: usize) {
        // Errors are expected (v2: EAGAIN when less than asked was reclaimed; v1: EBUSY when the
        // usage did not reach 0); the pages reclaimed are counted apart.
        if self.v2 {
            let _ = fs::write(self.dir.join("memory.reclaim"), format!("{bytes}"));
        } else {
            let _ = fs::write(self.dir.join("memory.force_empty"), "0");
        }
    }
}

impl Drop for Memcg {
    fn drop(&mut self) {
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Child processes that map the file, killed and reaped on drop.
struct Mappers {
    pids: Vec<libc::pid_t>,
    quit_w: libc::c_int,
}

impl Drop for Mappers {
    fn drop(&mut self) {
        // SAFETY: our pipe end and our children.
        unsafe {
            libc::close(self.quit_w);
            for &p in &self.pids {
                libc::kill(p, libc::SIGKILL);
                libc::waitpid(p, ptr::null_mut(), 0);
            }
        }
    }
}

/// The body of a child: join the cgroup, (first: load the file), map it, read every page,
/// report, wait for the end. Only system calls, then `_exit`.
fn mapper_child(first: bool, procs: &CString, file: &CString, pages: usize, ready_w: i32, quit_r: i32) -> ! {
    // SAFETY: plain system calls on our own descriptors and memory; `_exit` at the end.
    unsafe {
        let fail = |w: i32| -> ! {
            libc::write(w, b"0".as_ptr().cast(), 1);
            libc::_exit(1)
        };
        let fd = libc::open(procs.as_ptr(), libc::O_WRONLY);
        if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
            fail(ready_w);
        }
        libc::close(fd);
        let fd = libc::open(file.as_ptr(), libc::O_RDONLY);
        if fd < 0 {
            fail(ready_w);
        }
        let len = pages * PAGE;
        if first {
            // FMODE_RANDOM: force_page_cache_ra reads what is asked into order-0 folios.
            libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_RANDOM);
            let buf = libc::mmap(
                ptr::null_mut(),
                MIB,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if buf == libc::MAP_FAILED {
                fail(ready_w);
            }
            let mut off = 0;
            while off < len {
                if libc::pread(fd, buf, MIB, off as libc::off_t) <= 0 {
                    fail(ready_w);
                }
                off += MIB;
            }
        }
        let p = libc::mmap(ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, fd, 0);
        if p == libc::MAP_FAILED {
            fail(ready_w);
        }
        black_box(touch_read(p.cast(), pages, PAGE));
        libc::write(ready_w, b"1".as_ptr().cast(), 1);
        let mut b = [0u8; 1];
        libc::read(quit_r, b.as_mut_ptr().cast(), 1);
        libc::_exit(0)
    }
}

fn spawn_mappers(k: usize, cg: &Memcg, file: &Path, pages: usize) -> Res<Mappers> {
    let procs = cstr(&cg.dir.join("cgroup.procs"));
    let file_c = cstr(file);
    let (mut ready, mut quit) = ([0i32; 2], [0i32; 2]);
    // SAFETY: arrays of two descriptors.
    check(unsafe { libc::pipe(ready.as_mut_ptr()) }, "pipe")?;
    // SAFETY: as above.
    if unsafe { libc::pipe(quit.as_mut_ptr()) } < 0 {
        // SAFETY: ours.
        unsafe {
            libc::close(ready[0]);
            libc::close(ready[1]);
        }
        return Err(os_err("pipe"));
    }
    let mut m = Mappers {
        pids: vec![],
        quit_w: quit[1],
    };
    let wait_ready = |n: usize| -> Res<()> {
        for _ in 0..n {
            let mut b = [0u8; 1];
            // SAFETY: one byte into a stack buffer.
            let rc = unsafe { libc::read(ready[0], b.as_mut_ptr().cast(), 1) };
            if rc != 1 || b[0] != b'1' {
                return Err("a child could not join the cgroup or map the file".into());
            }
        }
        Ok(())
    };
    let mut r = Ok(());
    for i in 0..k {
        // SAFETY: this process has one thread here (the spinner of the TLB test has ended);
        // the child only makes system calls and leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: the child's copies of the ends it does not use.
            unsafe {
                libc::close(ready[0]);
                libc::close(quit[1]);
            }
            mapper_child(i == 0, &procs, &file_c, pages, ready[1], quit[0]);
        }
        if pid < 0 {
            r = Err(os_err("fork"));
            break;
        }
        m.pids.push(pid);
        if i == 0 {
            r = wait_ready(1);
            if r.is_err() {
                break;
            }
        }
    }
    if r.is_ok() {
        r = wait_ready(m.pids.len().saturating_sub(1));
    }
    // SAFETY: the parent's copies of the ends it does not use.
    unsafe {
        libc::close(ready[0]);
        libc::close(ready[1]);
        libc::close(quit[0]);
    }
    r.map(|_| m)
}

struct Rmap {
    per_walk: Vec<f64>,
    slope: Vec<f64>,
    k1: Vec<f64>,
    k8: Vec<f64>,
    reclaimed: f64,
    stolen: f64,
    share: Option<f64>,
    v2: bool,
}

fn rmap(scratch: &Path) -> Res<Rmap> {
    let cg = Memcg::new()?;
    let pages = 8192;
    let len = pages * PAGE;
    let path = scratch.join("rmap.dat");
    let f = create_file(&path, pages, 29)?;
    // How the children's loads lay out the page cache.
    fadvise(&f, libc::POSIX_FADV_DONTNEED)?;
    let share = {
        let g = File::open(&path).ctx("open")?;
        fadvise(&g, libc::POSIX_FADV_RANDOM)?;
        let mut buf = vec![0u8; MIB];
        for off in (0..len).step_by(MIB) {
            g.read_exact_at(&mut buf, off as u64).ctx("read")?;
        }
        let m = Map::shared(&g, len)?;
        black_box(touch_read(m.ptr, pages, PAGE));
        large_folio_share(m.ptr, pages, 1024)
    };
    let ks = [1usize, 2, 4, 8];
    let mut out = Rmap {
        per_walk: vec![],
        slope: vec![],
        k1: vec![],
        k8: vec![],
        reclaimed: 0.0,
        stolen: 0.0,
        share,
        v2: cg.v2,
    };
    let (mut loaded_sum, mut reclaimed_sum, mut stolen_sum) = (0usize, 0usize, 0u64);
    for _ in 0..ROUNDS {
        let mut ys = vec![];
        for &k in &ks {
            fadvise(&f, libc::POSIX_FADV_DONTNEED)?;
            let kids = spawn_mappers(k, &cg, &path, pages)?;
            for &p in &kids.pids {
                sys_write(format!("/proc/{p}/clear_refs"), "1")?;
            }
            let before = resident(&f, len)?;
            let s0 = vmstat("pgsteal_");
            let c0 = cpu_ns();
            cg.reclaim(len);
            let c = cpu_ns() - c0;
            let s1 = vmstat("pgsteal_");
            let after = resident(&f, len)?;
            drop(kids);
            let got = before.saturating_sub(after);
            if got < before / 2 {
                return Err(format!("only {got} of {before} pages reclaimed with {k} mappings"));
            }
            loaded_sum += before;
            reclaimed_sum += got;
            stolen_sum += s1 - s0;
            ys.push(c / got as f64);
        }
        let xs: Vec<f64> = ks.iter().map(|&k| k as f64).collect();
        let (s, _) = fit(&xs, &ys);
        out.slope.push(s);
        out.per_walk.push(s / 2.0);
        out.k1.push(ys[0]);
        out.k8.push(ys[3]);
    }
    fadvise(&f, libc::POSIX_FADV_DONTNEED)?;
    out.reclaimed = reclaimed_sum as f64 / loaded_sum.max(1) as f64;
    out.stolen = stolen_sum as f64 / reclaimed_sum.max(1) as f64;
    Ok(out)
}

fn rmap_section(rep: &mut Report, scratch: &Path) {
    match rmap(scratch) {
        Ok(r) => {
            let how = if r.v2 {
                "memory.reclaim (v2)"
            } else {
                "memory.force_empty (v1)"
            };
            let check = format!(
                "{:.0}% of the loaded pages reclaimed, pgsteal/reclaimed {:.2}; {}",
                r.reclaimed * 100.0,
                r.stolen,
                folio_note(r.share)
            );
            rep.push(
                "per_rmap_walk_ns",
                "ns",
                format!("memcg {how} of a 32 MiB file mapped by K=1,2,4,8 processes: slope per mapping / 2 walks"),
                Ok(r.per_walk),
            );
            rep.push("rmap slope per mapping (2 walks)", "ns", check, Ok(r.slope));
            rep.push(
                "reclaim per page, K=1",
                "ns",
                "the reclaimer's CPU per clean file page reclaimed, one mapping (isolation, 2 walks, unmap, free)",
                Ok(r.k1),
            );
            rep.push("reclaim per page, K=8", "ns", "the same, 8 mappings", Ok(r.k8));
        }
        Err(e) => rep.skip("per_rmap_walk_ns", "ns", &e),
    }
}

// ---------------------------------------------------------------------------------------------
// 9b. Writeback

fn writeback(scratch: &Path) -> Res<(Vec<f64>, Vec<f64>, f64)> {
    let pages = 4096;
    let path = scratch.join("writeback.dat");
    let f = create_file(&path, pages, 31)?;
    let fd = f.as_raw_fd();
    let buf = vec![0x5au8; PAGE];
    let (mut all, mut half) = (vec![], vec![]);
    let (mut written, mut dirtied) = (0u64, 0u64);
    for _ in 0..ROUNDS {
        for step in [1usize, 2] {
            let n = pages / step;
            for i in (0..pages).step_by(step) {
                if pwrite_raw(fd, buf.as_ptr(), i * PAGE) != PAGE as isize {
                    return Err(os_err("pwrite"));
                }
            }
            let w0 = vmstat("nr_written");
            let c0 = cpu_ns();
            // SAFETY: a syscall on our descriptor.
            let rc = unsafe { libc::sync_file_range(fd, 0, (pages * PAGE) as i64, libc::SYNC_FILE_RANGE_WRITE) };
            let c = cpu_ns() - c0;
            check(rc, "sync_file_range")?;
            f.sync_data().ctx("fdatasync")?;
            written += vmstat("nr_written") - w0;
            dirtied += n as u64;
            if step == 1 {
                all.push(c / n as f64);
            } else {
                half.push(c / n as f64);
            }
        }
    }
    Ok((all, half, written as f64 / dirtied as f64))
}

// ---------------------------------------------------------------------------------------------
// 9a, 10. zram

/// zram0 under our control: swapped off and reset on drop.
struct Zram {
    swapped: bool,
}

const ZRAM: &str = "/sys/block/zram0";

impl Zram {
    fn take() -> Res<Zram> {
        if !is_root() {
            return Err("not root".into());
        }
        if !Path::new(ZRAM).exists() {
            return Err("no /sys/block/zram0".into());
        }
        let size: u64 = sys_read(format!("{ZRAM}/disksize"))?.trim().parse().unwrap_or(1);
        let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
        if size != 0 || swaps.contains("zram0") {
            return Err("zram0 is in use (disksize set or swap): not touched".into());
        }
        Ok(Zram { swapped: false })
    }

    fn algorithms() -> Vec<String> {
        fs::read_to_string(format!("{ZRAM}/comp_algorithm"))
            .unwrap_or_default()
            .split_whitespace()
            .map(|a| a.trim_matches(|c| c == '[' || c == ']').to_string())
            .collect()
    }

    fn setup(&mut self, alg: &str, bytes: usize) -> Res<()> {
        self.reset();
        sys_write(format!("{ZRAM}/comp_algorithm"), alg)?;
        sys_write(format!("{ZRAM}/disksize"), &format!("{bytes}"))
    }

    fn reset(&mut self) {
        if self.swapped {
            // SAFETY: a NUL-terminated path.
            unsafe { libc::swapoff(c"/dev/zram0".as_ptr()) };
            self.swapped = false;
        }
        let _ = fs::write(format!("{ZRAM}/reset"), "1");
    }

    /// (orig_data_size, compr_data_size, same_pages, huge_pages) from mm_stat.
    fn mm_stat() -> (f64, f64, f64, f64) {
        let s = fs::read_to_string(format!("{ZRAM}/mm_stat")).unwrap_or_default();
        let v: Vec<f64> = s.split_whitespace().map(|x| x.parse().unwrap_or(0.0)).collect();
        let g = |i: usize| v.get(i).copied().unwrap_or(0.0);
        (g(0), g(1), g(5), g(7))
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        self.reset();
    }
}

struct Alg {
    w: [Vec<f64>; 3],
    r: [Vec<f64>; 3],
    ratio: f64,
    huge: f64,
    same: f64,
}

fn zram_alg(z: &mut Zram, alg: &str, text: &Map, rnd: &Map, zero: &Map, n: usize) -> Res<Alg> {
    z.setup(alg, 64 * MIB)?;
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open("/dev/zram0")
        .ctx("open /dev/zram0")?;
    let fd = f.as_raw_fd();
    let rbuf = Map::anon(PAGE)?;
    touch_write(rbuf.ptr, 1, PAGE);
    let mut a = Alg {
        w: Default::default(),
        r: Default::default(),
        ratio: 0.0,
        huge: 0.0,
        same: 0.0,
    };
    for round in 0..ROUNDS {
        for (ci, src) in [text, rnd, zero].into_iter().enumerate() {
            const BLKDISCARD: libc::c_ulong = 0x1277;
            let range = [0u64, (n * PAGE) as u64];
            // SAFETY: BLKDISCARD takes a pointer to two u64s. Failure is harmless (overwrites
            // free the old slots).
            unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) };
            let c0 = cpu_ns();
            for i in 0..n {
                let p = if ci == 2 { src.ptr } else { src.page(i) };
                if pwrite_raw(fd, p, i * PAGE) != PAGE as isize {
                    return Err(os_err("pwrite /dev/zram0"));
                }
            }
            let c1 = cpu_ns();
            if round == 0 {
                let (orig, compr, same, huge) = Zram::mm_stat();
                match ci {
                    0 => a.ratio = orig / compr.max(1.0),
                    1 => a.huge = huge / n as f64,
                    _ => a.same = same / n as f64,
                }
            }
            let c2 = cpu_ns();
            for i in 0..n {
                if pread_raw(fd, rbuf.ptr, i * PAGE) != PAGE as isize {
                    return Err(os_err("pread /dev/zram0"));
                }
            }
            let c3 = cpu_ns();
            a.w[ci].push((c1 - c0) / n as f64);
            a.r[ci].push((c3 - c2) / n as f64);
        }
    }
    drop(f);
    z.reset();
    Ok(a)
}

struct Swap {
    out: Vec<f64>,
    inn: Vec<f64>,
    written: f64,
    others: bool,
}

fn zram_swap(z: &mut Zram, text: &Map, text_n: usize) -> Res<Swap> {
    z.setup("lzo-rle", 256 * MIB)?;
    let o = Command::new("mkswap")
        .arg("/dev/zram0")
        .output()
        .map_err(|e| format!("mkswap: {e}"))?;
    if !o.status.success() {
        return Err(format!("mkswap: {}", String::from_utf8_lossy(&o.stderr).trim()));
    }
    // SAFETY: a NUL-terminated path.
    check(unsafe { libc::swapon(c"/dev/zram0".as_ptr(), 0) }, "swapon /dev/zram0")?;
    z.swapped = true;
    let others = fs::read_to_string("/proc/swaps")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .any(|l| !l.contains("zram0"));
    let n = 16384;
    let m = Map::anon(n * PAGE)?;
    advise(m.ptr, n * PAGE, libc::MADV_NOHUGEPAGE)?;
    let mut s = Swap {
        out: vec![],
        inn: vec![],
        written: 0.0,
        others,
    };
    let mut written = 0u64;
    for _ in 0..ROUNDS {
        for i in 0..n {
            // SAFETY: distinct pages of two mappings of ours.
            unsafe { ptr::copy_nonoverlapping(text.page(i % text_n), m.page(i), PAGE) };
        }
        let w0 = vmstat("pswpout");
        let c0 = cpu_ns();
        let rc = advise(m.ptr, n * PAGE, libc::MADV_PAGEOUT);
        let c = cpu_ns() - c0;
        rc?;
        let w = vmstat("pswpout") - w0;
        if w < n as u64 / 2 {
            return Err(format!("MADV_PAGEOUT swapped out only {w} of {n} pages"));
        }
        written += w;
        s.out.push(c / w as f64);
        let r0 = vmstat("pswpin");
        let c0 = cpu_ns();
        black_box(touch_read(m.ptr, n, PAGE));
        let c = cpu_ns() - c0;
        let r = vmstat("pswpin") - r0;
        s.inn.push(c / r.max(1) as f64);
    }
    s.written = written as f64 / (n * ROUNDS) as f64;
    drop(m);
    z.reset();
    Ok(s)
}

fn zram_section(rep: &mut Report) {
    let mut z = match Zram::take() {
        Ok(z) => z,
        Err(e) => {
            rep.skip("zram compress_ns/decompress_ns", "ns", &e);
            rep.skip("per_page_written_ns (zram swap-out)", "ns", &e);
            return;
        }
    };
    if fs::read_to_string("/sys/module/zswap/parameters/enabled").is_ok_and(|s| s.trim() == "Y") {
        eprintln!("  note: zswap is enabled: swap-outs are compressed by zswap before zram");
    }
    let n = 4096;
    let prep = || -> Res<(Map, Map, Map)> {
        let text = text_pages(n)?;
        let rnd = Map::anon(n * PAGE)?;
        let mut rng = Rng(41);
        for i in 0..n * PAGE / 8 {
            // SAFETY: inside our mapping, 8-byte aligned.
            unsafe { ptr::write(rnd.ptr.cast::<u64>().add(i), rng.next()) };
        }
        let zero = Map::anon(PAGE)?;
        // SAFETY: our page (faulted in as a real zero page, not the shared zero page).
        unsafe { ptr::write_volatile(zero.ptr, 0) };
        Ok((text, rnd, zero))
    };
    let (text, rnd, zero) = match prep() {
        Ok(x) => x,
        Err(e) => {
            rep.skip("zram compress_ns/decompress_ns", "ns", &e);
            return;
        }
    };
    let algs = Zram::algorithms();
    let mut lzo_rle: Option<(f64, f64)> = None;
    for alg in ["lzo-rle", "lzo", "lz4", "zstd"] {
        if !algs.iter().any(|a| a == alg) {
            rep.skip(format!("compress_ns ({alg})"), "ns", "algorithm not offered by zram0");
            continue;
        }
        match zram_alg(&mut z, alg, &text, &rnd, &zero, n) {
            Ok(a) => {
                let raw = |v: &Vec<f64>| num(median(v));
                let net = |i: usize, w: bool| {
                    let v = if w { &a.w } else { &a.r };
                    pairwise(&v[i], &v[2], |x, y| x - y)
                };
                let cw = net(0, true);
                let dr = net(0, false);
                if alg == "lzo-rle" {
                    lzo_rle = Some((median(&cw), median(&dr)));
                }
                rep.push(
                    format!("compress_ns ({alg}, text)"),
                    "ns",
                    format!(
                        "O_DIRECT 4 KiB write CPU, text (ratio {:.2}:1) minus zero page; raw {} ns",
                        a.ratio,
                        raw(&a.w[0])
                    ),
                    Ok(cw),
                );
                rep.push(
                    format!("compress_ns ({alg}, random)"),
                    "ns",
                    format!(
                        "random pages ({:.0}% stored whole) minus zero page; raw {} ns",
                        a.huge * 100.0,
                        raw(&a.w[1])
                    ),
                    Ok(net(1, true)),
                );
                rep.push(
                    format!("zram write, zero page ({alg})"),
                    "ns",
                    format!(
                        "O_DIRECT 4 KiB write CPU, zero page ({:.0}% same-filled): syscall + bio + zram",
                        a.same * 100.0
                    ),
                    Ok(a.w[2].clone()),
                );
                rep.push(
                    format!("decompress_ns ({alg}, text)"),
                    "ns",
                    format!("O_DIRECT 4 KiB read CPU, text minus zero page; raw {} ns", raw(&a.r[0])),
                    Ok(dr),
                );
                rep.push(
                    format!("decompress_ns ({alg}, random)"),
                    "ns",
                    format!("random (stored whole: a copy) minus zero page; raw {} ns", raw(&a.r[1])),
                    Ok(net(1, false)),
                );
                rep.push(
                    format!("zram read, zero page ({alg})"),
                    "ns",
                    "O_DIRECT 4 KiB read CPU, zero page: syscall + bio + fill",
                    Ok(a.r[2].clone()),
                );
            }
            Err(e) => rep.skip(format!("compress_ns ({alg})"), "ns", &e),
        }
    }
    match zram_swap(&mut z, &text, n) {
        Ok(s) => {
            let note = if s.others { "; OTHER SWAP DEVICES ACTIVE" } else { "" };
            rep.push(
                "swap-out per page (zram lzo-rle, raw)",
                "ns",
                format!(
                    "CPU of MADV_PAGEOUT per page swapped out (pswpout; {:.0}% of the pages), text pages{note}",
                    s.written * 100.0
                ),
                Ok(s.out.clone()),
            );
            match lzo_rle {
                Some((c, d)) => {
                    rep.push(
                        "per_page_written_ns (swap-out start)",
                        "ns",
                        format!("the above minus lzo-rle compression of text ({} ns)", num(c)),
                        Ok(s.out.iter().map(|x| x - c).collect()),
                    );
                    rep.push(
                        "swap-in fault (zram lzo-rle, net)",
                        "ns",
                        format!(
                            "CPU per read fault of a swapped-out page (pswpin) minus decompression ({} ns); raw {} ns",
                            num(d),
                            num(median(&s.inn))
                        ),
                        Ok(s.inn.iter().map(|x| x - d).collect()),
                    );
                }
                None => rep.push(
                    "swap-in fault (zram lzo-rle, raw)",
                    "ns",
                    "CPU per read fault of a swapped-out page (pswpin)",
                    Ok(s.inn),
                ),
            }
        }
        Err(e) => rep.skip("per_page_written_ns (zram swap-out)", "ns", &e),
    }
}

// ---------------------------------------------------------------------------------------------

fn guarded(rep: &mut Report, name: &str, f: impl FnOnce(&mut Report)) {
    let t = Instant::now();
    eprintln!("[{name}]");
    if panic::catch_unwind(AssertUnwindSafe(|| f(rep))).is_err() {
        rep.skip(format!("({name})"), "", "the measurement panicked (cleaned up)");
    }
    eprintln!("  ({:.1} s)", t.elapsed().as_secs_f64());
}

fn main() {
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let mut rep = Report { rows: vec![], filter };
    let t = Instant::now();
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let ncpu = online_cpus();
    eprintln!(
        "kernel_costs: Linux {}, {ncpu} CPUs, {}",
        kernel.trim(),
        if is_root() {
            "root"
        } else {
            "not root (zram, loop and memcg rows skipped)"
        }
    );
    if !pin(0) {
        eprintln!("note: could not pin to CPU 0");
    }
    if rep.wants("bloom") {
        guarded(&mut rep, "bloom", bloom);
    }
    if rep.wants("swapslot") {
        guarded(&mut rep, "swapslot", swap_slots);
    }
    if rep.wants("anon") || rep.wants("pte") || rep.wants("tlb") {
        guarded(&mut rep, "anon, pte, tlb", anon_section);
    }
    let scratch = Scratch::new();
    match &scratch {
        Err(e) => {
            for s in ["file", "io", "rmap", "writeback"] {
                if rep.wants(s) {
                    rep.skip(format!("({s})"), "", e);
                }
            }
        }
        Ok(sc) => {
            let pages = 256 * MIB / PAGE;
            let path = sc.0.join("cached.dat");
            if rep.wants("file") || rep.wants("io") {
                match create_file(&path, pages, 19) {
                    Ok(f) => {
                        if rep.wants("file") {
                            guarded(&mut rep, "file", |r| file_cached_section(r, &path, &f, pages));
                        }
                        if rep.wants("io") {
                            guarded(&mut rep, "io", |r| io_section(r, &sc.0, &path, pages));
                        }
                    }
                    Err(e) => rep.skip("(file, io)", "", &e),
                }
                let _ = fs::remove_file(&path);
            }
            if rep.wants("rmap") {
                guarded(&mut rep, "rmap", |r| rmap_section(r, &sc.0));
            }
            if rep.wants("writeback") {
                guarded(&mut rep, "writeback", |r| match writeback(&sc.0) {
                    Ok((all, half, w)) => {
                        let note = format!("nr_written/dirtied {w:.2}");
                        r.push(
                            "per_page_written_ns (writeback, contiguous)",
                            "ns",
                            format!(
                                "CPU of sync_file_range(WRITE) per dirty page, 16 MiB all dirty (ext4 on vda); {note}"
                            ),
                            Ok(all),
                        );
                        r.push(
                            "per_page_written_ns (writeback, every other)",
                            "ns",
                            "the same with every other page dirty (a bio each)",
                            Ok(half),
                        );
                    }
                    Err(e) => r.skip("per_page_written_ns (writeback)", "ns", &e),
                });
            }
        }
    }
    drop(scratch);
    if rep.wants("zram") {
        guarded(&mut rep, "zram", zram_section);
    }
    rep.print();
    println!("\n({:.0} s)", t.elapsed().as_secs_f64());
}

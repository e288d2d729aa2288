// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen-replay OPFILE DATADIR`: replay an op file (see the library docs) with real system calls
//! and print the misses per window. Before each access, `mincore()` on the page tells whether it is
//! resident; `mincore` sets no accessed bit and does not touch the LRU, so the count does not
//! disturb what it measures. A buffered read's page is looked up through a shared read-only
//! mapping of the same file that is never accessed (so it adds no PTE references). Files are
//! opened `POSIX_FADV_RANDOM` and mapped `MADV_RANDOM` (no read-ahead or read-around), or
//! `POSIX_FADV_NORMAL` and `MADV_NORMAL` when their `file` line says `normal`. A
//! buffered write writes a whole page with `pwrite` (files written are opened read-write); a write
//! to a page not resident is not counted as a miss (the kernel does not read a page it overwrites
//! whole). A control op (`c`, `cr`) writes or reads a control file at its place and prints the
//! result, `lru_gen` after it and the vmstat counters it moved (`run_ctl`).
//!
//! Built for a guest as a static executable:
//! `RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu`

use lrugen_replay::{
    escape_text, expand_placeholders, Advice, CtlTarget, FileAdvice, LruvecSeqs, OpFile, ReplayOp, CTL_PREFIX,
    DUMP_END, DUMP_PREFIX, PROGRESS_PREFIX, TASK_PREFIX, TOTAL_PREFIX, WINDOW_PREFIX,
};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

const PAGE: usize = 4096;

fn die(msg: String) -> ! {
    eprintln!("lrugen-replay: {msg}");
    std::process::exit(1);
}

struct Mapping {
    base: *mut u8,
    pages: u64,
}

fn map(fd: libc::c_int, pages: u64, anon: bool) -> Mapping {
    let len = (pages as usize) * PAGE;
    // SAFETY: a fresh mapping of `len` bytes; the kernel picks the address.
    let p = unsafe {
        if anon {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        } else {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, fd, 0)
        }
    };
    if p == libc::MAP_FAILED {
        die(format!("mmap of {pages} pages: {}", std::io::Error::last_os_error()));
    }
    Mapping {
        base: p as *mut u8,
        pages,
    }
}

/// Bytes of a PMD-mapped huge page on x86-64 (`HPAGE_PMD_SIZE`).
const HPAGE: usize = 2 << 20;

/// An anon region of `pages` advised `MADV_HUGEPAGE`, starting on a 2 MiB boundary (mapped 2 MiB
/// larger, the unaligned head and tail unmapped), so that each whole 2 MiB of it can be one
/// PMD-mapped folio wherever the kernel would otherwise have put it (`thp_get_unmapped_area`
/// aligns only some anonymous mappings, and not in every kernel).
fn map_hugepage(pages: u64) -> Mapping {
    let len = (pages as usize) * PAGE;
    // SAFETY: a fresh anonymous mapping; the kernel picks the address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len + HPAGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        die(format!("mmap of {pages} pages: {}", std::io::Error::last_os_error()));
    }
    let start = p as usize;
    let aligned = start.next_multiple_of(HPAGE);
    // SAFETY: both ranges lie inside the mapping just made and nothing refers to them.
    unsafe {
        if aligned > start {
            libc::munmap(p, aligned - start);
        }
        let end = aligned + len;
        if start + len + HPAGE > end {
            libc::munmap(end as *mut libc::c_void, start + len + HPAGE - end);
        }
        if libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE) != 0 {
            die(format!("madvise(MADV_HUGEPAGE): {}", std::io::Error::last_os_error()));
        }
    }
    Mapping {
        base: aligned as *mut u8,
        pages,
    }
}

impl Mapping {
    fn resident(&self, index: u64) -> bool {
        assert!(index < self.pages);
        let mut v = 0u8;
        // SAFETY: the page lies inside the mapping; `v` holds the one status byte.
        let r = unsafe { libc::mincore(self.base.add(index as usize * PAGE) as *mut libc::c_void, PAGE, &mut v) };
        if r != 0 {
            die(format!("mincore: {}", std::io::Error::last_os_error()));
        }
        v & 1 != 0
    }
    fn ptr(&self, index: u64) -> *mut u8 {
        assert!(index < self.pages);
        // SAFETY: in bounds (checked above).
        unsafe { self.base.add(index as usize * PAGE) }
    }
}

#[derive(Default, Clone, Copy)]
struct Count {
    accesses: u64,
    misses: u64,
    minor: u64,
}

/// `pwrite` (`write`) or `pread` of page `index` of `fd` from or into `buf`; the syscall's
/// result.
#[inline]
fn page_io(fd: std::os::fd::RawFd, buf: &mut [u8], index: u64, write: bool) -> isize {
    assert!(buf.len() >= PAGE, "page_io needs a whole page of buffer");
    let off = (index as usize * PAGE) as libc::off_t;
    // SAFETY: buf holds at least PAGE bytes (checked above).
    unsafe {
        if write {
            libc::pwrite(fd, buf.as_ptr() as *const libc::c_void, PAGE, off)
        } else {
            libc::pread(fd, buf.as_mut_ptr() as *mut libc::c_void, PAGE, off)
        }
    }
}

/// Counters of a multi-task replay shared by its processes (one `MAP_SHARED` anonymous page).
#[repr(C)]
struct Shared {
    accesses: AtomicU64,
    misses: AtomicU64,
    minor: AtomicU64,
    /// Misses and minor faults at the end of the last window.
    win_misses: AtomicU64,
    win_minor: AtomicU64,
    /// Windows printed.
    nwin: AtomicU64,
    /// Tasks done with their ops.
    done: AtomicU64,
    /// Task 0 has dumped the `--end` files: the others may exit.
    ended: AtomicU64,
    /// `CLOCK_MONOTONIC` when the tasks were released.
    t0: AtomicU64,
    /// kswapd's CPU time then ([`kswapd_cpu_ns`]).
    kswapd_t0: AtomicU64,
    /// The lockstep barrier (`lockstep K`): the round in the high 32 bits (the futex word the
    /// waiters sleep on), the tasks arrived in it in bits 16..32, the tasks still replaying in
    /// bits 0..16.
    step: AtomicU64,
}

/// Rounds of a lockstep replay: every task still replaying waits at the end of each of its
/// rounds of `K` accesses until all have ended theirs. A barrier over processes: a word of the
/// shared page and a futex on its round (not private: the page is shared between processes).
impl Shared {
    fn pack(round: u64, arrived: u64, running: u64) -> u64 {
        (round << 32) | (arrived << 16) | running
    }
    fn unpack(s: u64) -> (u64, u64, u64) {
        (s >> 32, (s >> 16) & 0xffff, s & 0xffff)
    }
    /// The round's 32-bit half of `step`, for the futex.
    fn round_word(&self) -> *const u32 {
        let p = &self.step as *const AtomicU64 as *const u32;
        // the high half of a little-endian u64 is its second u32
        #[cfg(target_endian = "little")]
        // SAFETY: within the u64.
        let p = unsafe { p.add(1) };
        p
    }
    fn wake_all(&self) {
        // SAFETY: a futex wake on a word of the shared page.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.round_word(),
                libc::FUTEX_WAKE,
                i32::MAX,
                0usize,
                0usize,
                0u32,
            );
        }
    }
    /// Wait until round `round` has ended.
    fn wait_round(&self, round: u64) {
        while self.step.load(Ordering::SeqCst) >> 32 == round {
            // SAFETY: a futex wait on a word of the shared page while it still holds `round`
            // (the kernel checks it atomically; EAGAIN or a wakeup loops to check again).
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.round_word(),
                    libc::FUTEX_WAIT,
                    round as u32,
                    0usize,
                    0usize,
                    0u32,
                );
            }
        }
    }
    /// This task has ended its round: the last to arrive starts the next and wakes the others,
    /// the others wait for it.
    fn arrive(&self) {
        loop {
            let s = self.step.load(Ordering::SeqCst);
            let (round, arrived, running) = Self::unpack(s);
            if arrived + 1 >= running {
                let next = Self::pack((round + 1) & 0xffff_ffff, 0, running);
                if self
                    .step
                    .compare_exchange(s, next, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    self.wake_all();
                    return;
                }
            } else if self
                .step
                .compare_exchange(
                    s,
                    Self::pack(round, arrived + 1, running),
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
            {
                self.wait_round(round);
                return;
            }
        }
    }
    /// This task has no ops left: it leaves, and ends the round if the others have all arrived.
    fn leave(&self) {
        loop {
            let s = self.step.load(Ordering::SeqCst);
            let (round, arrived, running) = Self::unpack(s);
            let left = running.saturating_sub(1);
            let (next, wake) = if left > 0 && arrived >= left {
                (Self::pack((round + 1) & 0xffff_ffff, 0, left), true)
            } else {
                (Self::pack(round, arrived, left), false)
            };
            if self
                .step
                .compare_exchange(s, next, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                if wake {
                    self.wake_all();
                }
                return;
            }
        }
    }
}

/// Write `s` to stdout with as few `write` calls as it takes (one for a console line), so that
/// lines and dumps of several processes do not interleave.
fn emit(s: &str) {
    let mut b = s.as_bytes();
    while !b.is_empty() {
        // SAFETY: writes from a live buffer.
        let n = unsafe { libc::write(1, b.as_ptr() as *const libc::c_void, b.len()) };
        if n <= 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        b = &b[n as usize..];
    }
}

/// What one task counted.
#[derive(Default, Clone, Copy)]
struct TaskCount {
    c: Count,
    requests: u64,
    missed_requests: u64,
}

struct Ctx<'a> {
    opf: &'a OpFile,
    files: Vec<(u32, std::fs::File, Mapping)>,
    at_end: Vec<(String, String)>,
    every: Vec<(String, String)>,
    /// The replayer's memcg (`/t`, from `/proc/self/cgroup`), when the op file has control ops.
    memcg: String,
    /// `--memcgs DIR`: the workload memcg's directory, whose children the op file's tasks run in.
    memcgs_dir: Option<String>,
    /// `--progress N`: a [`PROGRESS_PREFIX`] line every N access ops (0: none; one task only).
    progress: u64,
    /// `transparent_hugepage/enabled` is `always`: every anon region may be served by THPs,
    /// advised or not ([`thp_always`]).
    thp_always: bool,
}

/// Whether the kernel's THP knob is `always` (`[always] madvise never` in
/// `/sys/kernel/mm/transparent_hugepage/enabled`; false where there is no such file). A store to a
/// region THPs may serve is a plain write, as the model's store is: a load first would fault the
/// huge zero page in, which 6.1 and 6.12 split into order-0 pages on the write and 7.2 replaces
/// with a THP there (`do_huge_zero_wp_pmd`), neither of which the model's one write fault does.
fn thp_always() -> bool {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").is_ok_and(|s| s.contains("[always]"))
}

impl Ctx<'_> {
    fn find(&self, id: u32) -> usize {
        self.files.iter().position(|f| f.0 == id).expect("declared")
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = || -> ! {
        die("usage: lrugen-replay OPFILE DATADIR [--end NAME=PATH]... [--every NAME=PATH]... [--memcgs DIR] [--progress N]".into())
    };
    if args.len() < 3 {
        usage();
    }
    // Files to dump after the last access (`--end`) and after each full window (`--every`).
    let (mut at_end, mut every) = (Vec::new(), Vec::new());
    let mut memcgs_dir = None;
    let mut progress = 0;
    let mut it = args[3..].iter();
    while let Some(opt) = it.next() {
        let v = it.next().unwrap_or_else(|| usage());
        if opt == "--memcgs" {
            memcgs_dir = Some(v.clone());
            continue;
        }
        if opt == "--progress" {
            progress = v
                .parse()
                .unwrap_or_else(|_| die(format!("--progress: expected a number of access ops, found '{v}'")));
            continue;
        }
        let (n, p) = v.split_once('=').unwrap_or_else(|| usage());
        match opt.as_str() {
            "--end" => at_end.push((n.to_string(), p.to_string())),
            "--every" => every.push((n.to_string(), p.to_string())),
            _ => usage(),
        }
    }
    let text = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| die(format!("{}: {e}", args[1])));
    let opf = OpFile::parse(&text).unwrap_or_else(|e| die(format!("{}: {e}", args[1])));
    // The text is charged to the memcg like the workload: free it before the replay.
    drop(text);
    if !opf.memcgs.is_empty() && memcgs_dir.is_none() {
        die(format!(
            "{}: its tasks run in memcgs ({}): give the workload memcg's directory with --memcgs DIR",
            args[1],
            opf.memcgs.join(", ")
        ));
    }
    let dir = std::path::Path::new(&args[2]);

    let mut files = Vec::new(); // (id, File, Mapping)
    for f in &opf.files {
        let path = dir.join(&f.path);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(opf.writes(f.id))
            .open(&path)
            .unwrap_or_else(|e| die(format!("{}: {e}", path.display())));
        let fd = file.as_raw_fd();
        // SAFETY: plain syscall on an open fd.
        unsafe {
            libc::posix_fadvise(
                fd,
                0,
                0,
                match f.advice {
                    FileAdvice::Random => libc::POSIX_FADV_RANDOM,
                    FileAdvice::Normal => libc::POSIX_FADV_NORMAL,
                },
            );
        }
        let m = map(fd, f.pages, false);
        // SAFETY: advice on a mapping we own.
        unsafe {
            libc::madvise(
                m.base as *mut libc::c_void,
                f.pages as usize * PAGE,
                match f.advice {
                    FileAdvice::Random => libc::MADV_RANDOM,
                    FileAdvice::Normal => libc::MADV_NORMAL,
                },
            );
        }
        files.push((f.id, file, m));
    }
    let memcg = if opf.ctl.is_empty() { String::new() } else { own_memcg() };
    let ctx = Ctx {
        opf: &opf,
        files,
        at_end,
        every,
        memcg,
        memcgs_dir,
        progress,
        thp_always: thp_always(),
    };
    if opf.nr_tasks() == 1 {
        enter_memcg(&ctx, 0);
        let t = run_task(&ctx, 0, None);
        emit(&format!(
            "{TOTAL_PREFIX} accesses {} misses {} minor {} sink {}\n",
            t.c.accesses, t.c.misses, t.c.minor, t.sink
        ));
        return;
    }
    run_tasks(&ctx);
}

/// Several tasks: one process each, forked from this one (so in its memcg), released together
/// once all are forked (a pipe that the children read until this process closes it), each
/// replaying its own ops; this process waits for them and prints the total.
fn run_tasks(ctx: &Ctx) {
    let n = ctx.opf.nr_tasks();
    // SAFETY: a fresh shared anonymous page, zeroed (every AtomicU64 starts at 0).
    let sh = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if sh == libc::MAP_FAILED {
        die(format!("mmap of the shared page: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the page is zeroed, aligned and large enough for Shared; it outlives every use.
    let shared: &Shared = unsafe { &*(sh as *const Shared) };
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe writes two descriptors into fds.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        die(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    let mut pids = Vec::with_capacity(n);
    for task in 0..n {
        // SAFETY: fork in a single-threaded process.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            die(format!("fork of task {task}: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            // into its memcg before it is released (what it touched since the fork stays charged
            // to the parent's: a few stack pages)
            enter_memcg(ctx, task);
            // SAFETY: closing our copy of the write end; reading the barrier until EOF.
            unsafe {
                libc::close(fds[1]);
                let mut b = 0u8;
                while libc::read(fds[0], &mut b as *mut u8 as *mut libc::c_void, 1) != 0 {}
                libc::close(fds[0]);
            }
            let t = run_task(ctx, task, Some(shared));
            emit(&format!(
                "{TASK_PREFIX} {task} accesses {} misses {} minor {} requests {} missed_requests {} sink {}\n",
                t.c.accesses, t.c.misses, t.c.minor, t.requests, t.missed_requests, t.sink
            ));
            shared.done.fetch_add(1, Ordering::SeqCst);
            if task == 0 {
                // the memcg with every task's memory: dump once all are done, before any exits
                while shared.done.load(Ordering::SeqCst) < n as u64 {
                    nap();
                }
                dump_all(&ctx.at_end, shared.accesses.load(Ordering::SeqCst));
                shared.ended.store(1, Ordering::SeqCst);
            } else {
                while shared.ended.load(Ordering::SeqCst) == 0 {
                    nap();
                }
            }
            // SAFETY: leave without running the parent's destructors twice.
            unsafe { libc::_exit(0) };
        }
        pids.push(pid);
    }
    shared.step.store(Shared::pack(0, 0, n as u64), Ordering::SeqCst);
    shared.t0.store(monotonic_ns(), Ordering::SeqCst);
    shared.kswapd_t0.store(kswapd_cpu_ns(), Ordering::SeqCst);
    // SAFETY: closing both ends releases the children.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    let mut failed = None;
    for _ in 0..n {
        let mut st = 0;
        // SAFETY: waits for any child.
        let pid = unsafe { libc::wait(&mut st) };
        if pid < 0 {
            die(format!("wait: {}", std::io::Error::last_os_error()));
        }
        let ok = libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0;
        if !ok && failed.is_none() {
            let task = pids.iter().position(|&p| p == pid).unwrap_or(usize::MAX);
            failed = Some(task);
            // the others would wait for it at the end: stop them
            for &p in &pids {
                if p != pid {
                    // SAFETY: signals our own children.
                    unsafe { libc::kill(p, libc::SIGKILL) };
                }
            }
        }
    }
    if let Some(task) = failed {
        die(format!("task {task} failed"));
    }
    let acc = shared.accesses.load(Ordering::SeqCst);
    let misses = shared.misses.load(Ordering::SeqCst);
    let minor = shared.minor.load(Ordering::SeqCst);
    let nwin = shared.nwin.load(Ordering::SeqCst);
    let w = ctx.opf.window;
    let rest = if w > 0 { acc - nwin * w } else { acc };
    if rest > 0 {
        emit(&format!(
            "{WINDOW_PREFIX} {nwin} accesses {rest} misses {} minor {} ns {} kswapd_ns {}\n",
            misses - shared.win_misses.load(Ordering::SeqCst),
            minor - shared.win_minor.load(Ordering::SeqCst),
            monotonic_ns() - shared.t0.load(Ordering::SeqCst),
            kswapd_cpu_ns().saturating_sub(shared.kswapd_t0.load(Ordering::SeqCst))
        ));
    }
    emit(&format!(
        "{TOTAL_PREFIX} accesses {acc} misses {misses} minor {minor} tasks {n} sink 0\n"
    ));
}

/// Sleep a millisecond (waiting for the other tasks).
fn nap() {
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 1_000_000,
    };
    // SAFETY: sleeps; the remainder is not needed.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// Sleep `ns` nanoseconds of `CLOCK_MONOTONIC` (think time), with a timer slack of 1 ns.
fn think(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: sleeps; the remainder is not needed.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut());
    }
}

/// What [`run_task`] returns: its counts and the byte it read (so reads are not optimised away).
struct Done {
    c: Count,
    requests: u64,
    missed_requests: u64,
    sink: u8,
}

/// An anon region of the current process: region 0 is the task's `anon` line, the others come
/// from `mmap` ops (version 7).
struct Region {
    map: Mapping,
    /// Pages touched by this process since the region was mapped (or since `MADV_DONTNEED`
    /// zapped them): a later access of one that is not resident is a swap-in, not a first touch.
    touched: Vec<bool>,
    /// THPs may serve it: advised (`anon N hugepage`, `madvise … hugepage`) or under `always`.
    huge: bool,
}

/// What a task's replay carries from op to op. A forked child hands it back to its parent when it
/// exits, so that the child's accesses, windows and requests count as the task's.
#[derive(Clone, Copy, Default)]
struct State {
    win: Count,
    total: TaskCount,
    nwin: u64,
    /// access ops done, populate pass included (`--progress`; lockstep's rounds count them too)
    done: u64,
    t0: u64,
    /// kswapd's CPU time at `t0` ([`kswapd_cpu_ns`])
    kswapd_t0: u64,
    measuring: bool,
    req_missed: bool,
    sink: u8,
}

/// [`State`] as the words a child writes to its parent's pipe.
const STATE_WORDS: usize = 15;

impl State {
    fn to_words(self) -> [u64; STATE_WORDS] {
        [
            self.win.accesses,
            self.win.misses,
            self.win.minor,
            self.total.c.accesses,
            self.total.c.misses,
            self.total.c.minor,
            self.total.requests,
            self.total.missed_requests,
            self.nwin,
            self.done,
            self.t0,
            u64::from(self.measuring),
            u64::from(self.req_missed),
            u64::from(self.sink),
            self.kswapd_t0,
        ]
    }

    /// The line of the window counted in `win` (one task).
    fn window_line(&self) -> String {
        format!(
            "{WINDOW_PREFIX} {} accesses {} misses {} minor {} ns {} kswapd_ns {}\n",
            self.nwin,
            self.win.accesses,
            self.win.misses,
            self.win.minor,
            monotonic_ns() - self.t0,
            kswapd_cpu_ns().saturating_sub(self.kswapd_t0)
        )
    }

    fn from_words(w: [u64; STATE_WORDS]) -> State {
        State {
            win: Count {
                accesses: w[0],
                misses: w[1],
                minor: w[2],
            },
            total: TaskCount {
                c: Count {
                    accesses: w[3],
                    misses: w[4],
                    minor: w[5],
                },
                requests: w[6],
                missed_requests: w[7],
            },
            nwin: w[8],
            done: w[9],
            t0: w[10],
            measuring: w[11] != 0,
            req_missed: w[12] != 0,
            sink: w[13] as u8,
            kswapd_t0: w[14],
        }
    }
}

/// The place of the `exit` that matches the `fork` at `ops[at]` (the parser checked there is one).
fn matching_exit(ops: &[ReplayOp], at: usize) -> usize {
    let mut depth = 0usize;
    for (i, op) in ops.iter().enumerate().skip(at) {
        match op {
            ReplayOp::Fork => depth += 1,
            ReplayOp::Exit => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    die(format!("the fork at op {at} has no exit"))
}

/// Fork a child for the `fork` at `ops[at]`. In the child: `Some(fd)`, the pipe's write end to
/// hand its [`State`] back on at its `exit`. In the parent: `None`, once the child has exited,
/// with `st` the child's state.
fn fork_child(at: usize, st: &mut State) -> Option<libc::c_int> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe writes two descriptors into fds.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        die(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fork in a single-threaded process.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        die(format!("fork at op {at}: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: closing the child's copy of the read end.
        unsafe { libc::close(fds[0]) };
        return Some(fds[1]);
    }
    // SAFETY: closing the parent's copy of the write end.
    unsafe { libc::close(fds[1]) };
    let mut words = [0u64; STATE_WORDS];
    let len = std::mem::size_of_val(&words);
    let mut got = 0usize;
    while got < len {
        // SAFETY: reads into the rest of `words`.
        let n = unsafe {
            libc::read(
                fds[0],
                (words.as_mut_ptr() as *mut u8).add(got) as *mut libc::c_void,
                len - got,
            )
        };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            die(format!(
                "the child forked at op {at} ended before its exit op (killed?)"
            ));
        }
        got += n as usize;
    }
    let mut status = 0;
    // SAFETY: reaps our own child; closes our read end.
    unsafe {
        libc::waitpid(pid, &mut status, 0);
        libc::close(fds[0]);
    }
    *st = State::from_words(words);
    None
}

/// The child's `exit` op: hand its state back on `fd` and exit (its mappings go with it).
fn exit_child(fd: libc::c_int, st: &State) -> ! {
    let words = st.to_words();
    let bytes = std::mem::size_of_val(&words);
    let mut put = 0usize;
    while put < bytes {
        // SAFETY: writes from `words`, which lives until we exit.
        let n = unsafe {
            libc::write(
                fd,
                (words.as_ptr() as *const u8).add(put) as *const libc::c_void,
                bytes - put,
            )
        };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            die(format!("write to the parent: {}", std::io::Error::last_os_error()));
        }
        put += n as usize;
    }
    // SAFETY: leave without running destructors of the parent's copies.
    unsafe { libc::_exit(0) }
}

/// The `MADV_*` value of an op's advice.
/// `mbind(2)` of `len` bytes at `p`: `MPOL_PREFERRED` of `node`, or `MPOL_DEFAULT` for
/// [`lrugen_replay::MBIND_DEFAULT`]; no flags (pages already present stay where they are).
fn mbind(p: *mut libc::c_void, len: usize, node: u16) -> i32 {
    const MPOL_DEFAULT: libc::c_long = 0;
    const MPOL_PREFERRED: libc::c_long = 1;
    let mask: libc::c_ulong = if node == lrugen_replay::MBIND_DEFAULT {
        0
    } else {
        1 << node
    };
    let (mode, maskp, maxnode): (libc::c_long, *const libc::c_ulong, libc::c_ulong) =
        if node == lrugen_replay::MBIND_DEFAULT {
            (MPOL_DEFAULT, std::ptr::null(), 0)
        } else {
            // maxnode counts one bit more than the mask holds (the kernel's `get_nodes`)
            (MPOL_PREFERRED, &mask, libc::c_ulong::BITS as libc::c_ulong + 1)
        };
    // SAFETY: the policy of pages of our own mapping; the mask outlives the call.
    unsafe { libc::syscall(libc::SYS_mbind, p, len, mode, maskp, maxnode, 0 as libc::c_uint) as i32 }
}

fn madv(a: Advice) -> libc::c_int {
    match a {
        Advice::Normal => libc::MADV_NORMAL,
        Advice::Random => libc::MADV_RANDOM,
        Advice::Sequential => libc::MADV_SEQUENTIAL,
        Advice::DontNeed => libc::MADV_DONTNEED,
        Advice::Cold => libc::MADV_COLD,
        Advice::PageOut => libc::MADV_PAGEOUT,
        Advice::HugePage => libc::MADV_HUGEPAGE,
        Advice::NoHugePage => libc::MADV_NOHUGEPAGE,
    }
}

/// Replay task `task`'s ops. Alone (`shared` None), it prints the windows and dumps as it goes;
/// among several, the windows count every task's accesses in `shared`, and the task whose access
/// ends a window prints it (its misses are those counted by then, give or take the accesses the
/// other vCPU makes meanwhile) and dumps the `--every` files. A `fork` runs the ops up to its
/// `exit` in a child process while this one waits, then goes on with the child's counts.
fn run_task(ctx: &Ctx, task: usize, shared: Option<&Shared>) -> Done {
    let (anon_pages, ops) = ctx.opf.task(task);
    // the current process's regions, by id (region 0: the task's `anon` line)
    let mut regions: Vec<Option<Region>> = vec![(anon_pages > 0).then(|| Region {
        map: if ctx.opf.anon_hugepage(task) {
            map_hugepage(anon_pages)
        } else {
            map(-1, anon_pages, true)
        },
        touched: vec![false; anon_pages as usize],
        // THPs may serve the region: advised (`anon N hugepage`), or any anon region under `always`
        huge: ctx.opf.anon_hugepage(task) || ctx.thp_always,
    })];
    let window = ctx.opf.window;
    let mut st = State {
        measuring: !ops.contains(&ReplayOp::MeasureStart),
        ..State::default()
    };
    if st.measuring {
        st.t0 = monotonic_ns();
        st.kswapd_t0 = kswapd_cpu_ns();
    }
    let mut buf = vec![0u8; PAGE];
    // in a forked child: the pipe to hand the state back on at its `exit`
    let mut parent_pipe: Option<libc::c_int> = None;
    let progress = if shared.is_none() { ctx.progress } else { 0 };
    // lockstep: the barrier this task waits at before the first access of each round but the first
    let lockstep = shared.filter(|_| ctx.opf.lockstep > 0);
    let k = u64::from(ctx.opf.lockstep);
    let mut i = 0usize;
    while i < ops.len() {
        let op = ops[i];
        i += 1;
        if let Some(sh) = lockstep {
            if st.done > 0 && st.done % k == 0 && op.is_access() {
                sh.arrive();
            }
        }
        let (miss, minor) = match op {
            ReplayOp::MeasureStart => {
                st.measuring = true;
                st.t0 = monotonic_ns();
                st.kswapd_t0 = kswapd_cpu_ns();
                continue;
            }
            ReplayOp::Think { ns } => {
                think(ns);
                continue;
            }
            ReplayOp::Ctl { id } => {
                let done = shared.map_or(st.total.c.accesses, |sh| sh.accesses.load(Ordering::SeqCst));
                run_ctl(ctx, id, done);
                continue;
            }
            ReplayOp::RequestEnd => {
                if st.measuring {
                    st.total.requests += 1;
                    st.total.missed_requests += u64::from(st.req_missed);
                }
                st.req_missed = false;
                continue;
            }
            ReplayOp::Fork => {
                match fork_child(i - 1, &mut st) {
                    Some(fd) => parent_pipe = Some(fd),
                    None => i = matching_exit(ops, i - 1) + 1,
                }
                continue;
            }
            ReplayOp::Exit => exit_child(parent_pipe.expect("the parser matched every exit with a fork"), &st),
            ReplayOp::Mmap { region, pages } => {
                let r = usize::from(region);
                if regions.len() <= r {
                    regions.resize_with(r + 1, || None);
                }
                regions[r] = Some(Region {
                    map: map(-1, pages, true),
                    touched: vec![false; pages as usize],
                    huge: ctx.thp_always,
                });
                continue;
            }
            ReplayOp::Munmap { region, first, pages }
            | ReplayOp::Madvise {
                region, first, pages, ..
            }
            | ReplayOp::Mbind {
                region, first, pages, ..
            } => {
                let r = regions[usize::from(region)]
                    .as_mut()
                    .expect("the parser checked the region");
                let (first, pages) = (u64::from(first), u64::from(pages));
                let p = r.map.ptr(first) as *mut libc::c_void;
                let len = pages as usize * PAGE;
                let (res, what) = match op {
                    ReplayOp::Madvise { advice, .. } => {
                        // SAFETY: advice on pages of our own mapping.
                        (unsafe { libc::madvise(p, len, madv(advice)) }, advice.name())
                    }
                    ReplayOp::Mbind { node, .. } => (mbind(p, len, node), "mbind"),
                    // SAFETY: unmaps pages of our own mapping, which no later op touches (parser).
                    _ => (unsafe { libc::munmap(p, len) }, "munmap"),
                };
                if res != 0 {
                    die(format!(
                        "{what} of pages {first}..{} of region {region}: {}",
                        first + pages,
                        std::io::Error::last_os_error()
                    ));
                }
                match op {
                    ReplayOp::Madvise {
                        advice: Advice::HugePage,
                        ..
                    } => r.huge = true,
                    // zapped or gone: the next access of a page is a first touch again
                    ReplayOp::Munmap { .. }
                    | ReplayOp::Madvise {
                        advice: Advice::DontNeed,
                        ..
                    } => r.touched[first as usize..(first + pages) as usize].fill(false),
                    _ => {}
                }
                continue;
            }
            ReplayOp::Read { file, index } => {
                let (_, f, m) = &ctx.files[ctx.find(file)];
                let miss = !m.resident(index);
                let r = page_io(f.as_raw_fd(), &mut buf, index, false);
                if r < 0 {
                    die(format!("pread page {index}: {}", std::io::Error::last_os_error()));
                }
                st.sink ^= buf[0];
                (miss, false)
            }
            ReplayOp::Write { file, index } => {
                let (_, f, m) = &ctx.files[ctx.find(file)];
                let resident = m.resident(index);
                buf.fill((index as u8) | 1);
                let r = page_io(f.as_raw_fd(), &mut buf, index, true);
                if r != PAGE as isize {
                    die(format!("pwrite page {index}: {}", std::io::Error::last_os_error()));
                }
                (false, !resident)
            }
            ReplayOp::MmapLoad { file, index } => {
                let (_, _, m) = &ctx.files[ctx.find(file)];
                let miss = !m.resident(index);
                // SAFETY: in-bounds read of a readable mapping.
                st.sink ^= unsafe { std::ptr::read_volatile(m.ptr(index)) };
                (miss, false)
            }
            ReplayOp::Load { vpn: page }
            | ReplayOp::Store { vpn: page }
            | ReplayOp::RegionLoad { page, .. }
            | ReplayOp::RegionStore { page, .. } => {
                let region = match op {
                    ReplayOp::RegionLoad { region, .. } | ReplayOp::RegionStore { region, .. } => usize::from(region),
                    _ => 0,
                };
                let store = matches!(op, ReplayOp::Store { .. } | ReplayOp::RegionStore { .. });
                let r = regions[region].as_mut().expect("the parser checked the region");
                let resident = r.map.resident(page);
                let first = !r.touched[page as usize];
                r.touched[page as usize] = true;
                let p = r.map.ptr(page);
                // SAFETY: in-bounds access of a private read-write mapping.
                unsafe {
                    if store && r.huge {
                        // a store alone, as the model's is: a load first would fault the huge
                        // zero page in, which 6.1 and 6.12 split on the write into order-0
                        // pages (docs/thp.md, "Real-kernel fixtures")
                        std::ptr::write_volatile(p, page as u8 | 1);
                    } else if store {
                        std::ptr::write_volatile(p, std::ptr::read_volatile(p).wrapping_add(1));
                    } else {
                        st.sink ^= std::ptr::read_volatile(p);
                    }
                }
                // A first touch is a minor fault; a non-resident page touched before was swapped.
                (!resident && !first, !resident && first)
            }
        };
        st.req_missed |= miss;
        st.done += 1;
        if progress > 0 && st.done % progress == 0 {
            emit(&format!(
                "{PROGRESS_PREFIX} ops {} accesses {}\n",
                st.done,
                st.total.c.accesses + u64::from(st.measuring)
            ));
        }
        if !st.measuring {
            continue;
        }
        st.total.c.accesses += 1;
        st.total.c.misses += miss as u64;
        st.total.c.minor += minor as u64;
        if let Some(sh) = shared {
            sh.misses.fetch_add(miss as u64, Ordering::SeqCst);
            sh.minor.fetch_add(minor as u64, Ordering::SeqCst);
            let n = sh.accesses.fetch_add(1, Ordering::SeqCst) + 1;
            if window > 0 && n % window == 0 {
                let m = sh.misses.load(Ordering::SeqCst);
                let mi = sh.minor.load(Ordering::SeqCst);
                let pm = sh.win_misses.swap(m, Ordering::SeqCst);
                let pmi = sh.win_minor.swap(mi, Ordering::SeqCst);
                let k = sh.nwin.fetch_add(1, Ordering::SeqCst);
                let mut s = format!(
                    "{WINDOW_PREFIX} {k} accesses {window} misses {} minor {} ns {} kswapd_ns {}\n",
                    m.saturating_sub(pm),
                    mi.saturating_sub(pmi),
                    monotonic_ns().saturating_sub(sh.t0.load(Ordering::SeqCst)),
                    kswapd_cpu_ns().saturating_sub(sh.kswapd_t0.load(Ordering::SeqCst))
                );
                s.push_str(&dump_text(&ctx.every, n));
                emit(&s);
            }
            continue;
        }
        st.win.accesses += 1;
        st.win.misses += miss as u64;
        st.win.minor += minor as u64;
        if window > 0 && st.win.accesses == window {
            emit(&st.window_line());
            st.nwin += 1;
            st.win = Count::default();
            emit(&dump_text(&ctx.every, st.total.c.accesses));
        }
    }
    if let Some(sh) = lockstep {
        sh.leave();
    }
    if shared.is_none() {
        if st.win.accesses > 0 {
            emit(&st.window_line());
        }
        dump_all(&ctx.at_end, st.total.c.accesses);
    }
    Done {
        c: st.total.c,
        requests: st.total.requests,
        missed_requests: st.total.missed_requests,
        sink: st.sink,
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds (the guest's virtual clock under `-icount`).
/// CPU time of the kswapd threads so far, ns: the first field of each one's
/// `/proc/PID/schedstat` (`se.sum_exec_runtime`), the threads found once by their `comm`
/// (`kswapd0`, `kswapd1`, ... one per node); 0 where there is none to read. The window lines
/// report it from the start of measurement, so that the model's kswapd can be given the CPU
/// time the guest's took (docs/global-pressure.md).
fn kswapd_cpu_ns() -> u64 {
    static PIDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    let pids = PIDS.get_or_init(|| {
        let mut v: Vec<String> = std::fs::read_dir("/proc")
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
                    .filter(|p| {
                        std::fs::read_to_string(format!("/proc/{p}/comm"))
                            .is_ok_and(|c| lrugen_replay::is_kswapd_comm(c.trim_end()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    });
    pids.iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/schedstat")).ok())
        .filter_map(|t| lrugen_replay::schedstat_runtime_ns(&t))
        .sum()
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The dumps of `files` (`lrugen-replay dump NAME ACCESSES`, the text, `lrugen-replay dump-end`).
fn dump_text(files: &[(String, String)], accesses: u64) -> String {
    let mut out = String::new();
    for (name, path) in files {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| format!("lrugen-replay: {path}: {e}\n"));
        out.push_str(&format!("{DUMP_PREFIX} {name} {accesses}\n{text}"));
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(DUMP_END);
        out.push('\n');
    }
    out
}

fn dump_all(files: &[(String, String)], accesses: u64) {
    emit(&dump_text(files, accesses));
}

/// Move this process into task `task`'s memcg (`DIR/NAME/cgroup.procs`), when the op file names
/// memcgs.
fn enter_memcg(ctx: &Ctx, task: usize) {
    let (Some(name), Some(dir)) = (ctx.opf.memcgs.get(task), &ctx.memcgs_dir) else {
        return;
    };
    let path = format!("{dir}/{name}/cgroup.procs");
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    if let Err(e) = std::fs::write(&path, format!("{pid}\n")) {
        die(format!("task {task}: writing its pid to {path}: {e}"));
    }
}

/// The cgroup v2 path of this process (`0::/t` in `/proc/self/cgroup`).
fn own_memcg() -> String {
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_else(|e| die(format!("/proc/self/cgroup: {e}")));
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| p.trim().to_string())
        .unwrap_or_else(|| die(format!("/proc/self/cgroup has no cgroup v2 line: {text}")))
}

const LRU_GEN: &str = "/sys/kernel/debug/lru_gen";
const LRU_GEN_FULL: &str = "/sys/kernel/debug/lru_gen_full";

/// A file's text, or a line saying why it could not be read.
fn read_text(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| format!("lrugen-replay: {path}: {e}\n"))
}

/// Control op `id`: the text written (placeholders replaced off `lru_gen_full`) with one `write`
/// call, or nothing for a read; then its line (`lrugen-replay ctl ID FILE errno E ret R accesses
/// A [wrote TEXT]`, errno 0 on success), `lru_gen` (or the file read) and the `/proc/vmstat`
/// counters that moved, as dumps named `ctl.FILE` (`ctl.proc_vmstat` for `/proc/vmstat`: `CtlTarget::dump_name`) and `ctl.vmstat`.
fn run_ctl(ctx: &Ctx, id: u32, accesses: u64) {
    let op = &ctx.opf.ctl[id as usize];
    let before = read_text("/proc/vmstat");
    let (mut errno, mut ret, mut wrote) = (0i32, 0isize, None);
    if let Some(t) = &op.write {
        let text = if t.contains('{') {
            let seqs = LruvecSeqs::from_lru_gen_full(&read_text(LRU_GEN_FULL), &ctx.memcg);
            expand_placeholders(t, &|n| seqs.and_then(|s| s.value(n)))
                .unwrap_or_else(|e| die(format!("control op {id} ({} '{t}'): {e}", op.file.name())))
        } else {
            t.clone()
        };
        let path = match op.file {
            CtlTarget::MemoryReclaim => {
                format!(
                    "/sys/fs/cgroup{}/memory.reclaim",
                    if ctx.memcg == "/" { "" } else { &ctx.memcg }
                )
            }
            _ => LRU_GEN.to_string(),
        };
        let cpath = std::ffi::CString::new(path.clone()).unwrap_or_else(|_| die(format!("bad path {path}")));
        // SAFETY: a NUL-terminated path; the descriptor is closed below.
        let fd = unsafe { libc::open(cpath.as_ptr(), libc::O_WRONLY) };
        if fd < 0 {
            errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            ret = -1;
        } else {
            // SAFETY: writes from a live buffer of text.len() bytes.
            ret = unsafe { libc::write(fd, text.as_ptr() as *const libc::c_void, text.len()) };
            if ret < 0 {
                errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            }
            // SAFETY: closes the descriptor opened above.
            unsafe { libc::close(fd) };
        }
        wrote = Some(text);
    }
    let after = read_text("/proc/vmstat");
    let cg = |f: &str| format!("/sys/fs/cgroup{}/{f}", if ctx.memcg == "/" { "" } else { &ctx.memcg });
    // what a read reads, and after a write: lru_gen
    let shown = match op.file {
        CtlTarget::LruGenFull => LRU_GEN_FULL.to_string(),
        CtlTarget::MemoryStat => cg("memory.stat"),
        CtlTarget::Vmstat => "/proc/vmstat".to_string(),
        CtlTarget::LruGen | CtlTarget::MemoryReclaim => LRU_GEN.to_string(),
    };
    let shown_text = if op.file == CtlTarget::Vmstat {
        after.clone()
    } else {
        read_text(&shown)
    };
    let mut out = format!(
        "{CTL_PREFIX} {id} {} errno {errno} ret {ret} accesses {accesses}",
        op.file.name()
    );
    if let Some(w) = &wrote {
        out.push_str(" wrote ");
        out.push_str(&escape_text(w));
    }
    out.push('\n');
    let name = if op.write.is_some() {
        CtlTarget::LruGen.dump_name()
    } else {
        op.file.dump_name()
    };
    out.push_str(&format!("{DUMP_PREFIX} ctl.{name} {accesses}\n{shown_text}"));
    if !shown_text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(DUMP_END);
    out.push('\n');
    out.push_str(&format!("{DUMP_PREFIX} ctl.vmstat {accesses}\n"));
    let old: std::collections::BTreeMap<&str, i64> = before
        .lines()
        .filter_map(|l| l.split_once(' ').and_then(|(k, v)| Some((k, v.trim().parse().ok()?))))
        .collect();
    for l in after.lines() {
        let Some((k, v)) = l
            .split_once(' ')
            .and_then(|(k, v)| Some((k, v.trim().parse::<i64>().ok()?)))
        else {
            continue;
        };
        let d = v.wrapping_sub(old.get(k).copied().unwrap_or(0));
        if d != 0 {
            out.push_str(&format!("{k} {d}\n"));
        }
    }
    out.push_str(DUMP_END);
    out.push('\n');
    emit(&out);
}

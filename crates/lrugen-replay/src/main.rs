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
//! whole).
//!
//! Built for a guest as a static executable:
//! `RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu`

use lrugen_replay::{FileAdvice, OpFile, ReplayOp, DUMP_END, DUMP_PREFIX, TOTAL_PREFIX, WINDOW_PREFIX};
use std::io::Write as _;
use std::os::unix::io::AsRawFd;

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage =
        || -> ! { die("usage: lrugen-replay OPFILE DATADIR [--end NAME=PATH]... [--every NAME=PATH]...".into()) };
    if args.len() < 3 {
        usage();
    }
    // Files to dump after the last access (`--end`) and after each full window (`--every`).
    let (mut at_end, mut every) = (Vec::new(), Vec::new());
    let mut it = args[3..].iter();
    while let Some(opt) = it.next() {
        let v = it.next().unwrap_or_else(|| usage());
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
    let find = |id: u32| files.iter().position(|f| f.0 == id).expect("declared");
    let anon = (opf.anon_pages > 0).then(|| map(-1, opf.anon_pages, true));
    let mut touched = vec![false; opf.anon_pages as usize];

    let mut measuring = !opf.ops.contains(&ReplayOp::MeasureStart);
    let mut t0 = if measuring { monotonic_ns() } else { 0 };
    let mut win = Count::default();
    let mut total = Count::default();
    let mut nwin = 0u64;
    let mut buf = vec![0u8; PAGE];
    let mut sink = 0u8;
    let out = std::io::stdout();
    let mut out = out.lock();
    for op in &opf.ops {
        let (miss, minor) = match *op {
            ReplayOp::MeasureStart => {
                measuring = true;
                t0 = monotonic_ns();
                continue;
            }
            ReplayOp::Read { file, index } => {
                let (_, f, m) = &files[find(file)];
                let miss = !m.resident(index);
                let r = page_io(f.as_raw_fd(), &mut buf, index, false);
                if r < 0 {
                    die(format!("pread page {index}: {}", std::io::Error::last_os_error()));
                }
                sink ^= buf[0];
                (miss, false)
            }
            ReplayOp::Write { file, index } => {
                let (_, f, m) = &files[find(file)];
                let resident = m.resident(index);
                buf.fill((index as u8) | 1);
                let r = page_io(f.as_raw_fd(), &mut buf, index, true);
                if r != PAGE as isize {
                    die(format!("pwrite page {index}: {}", std::io::Error::last_os_error()));
                }
                (false, !resident)
            }
            ReplayOp::MmapLoad { file, index } => {
                let (_, _, m) = &files[find(file)];
                let miss = !m.resident(index);
                // SAFETY: in-bounds read of a readable mapping.
                sink ^= unsafe { std::ptr::read_volatile(m.ptr(index)) };
                (miss, false)
            }
            ReplayOp::Load { vpn } | ReplayOp::Store { vpn } => {
                let m = anon.as_ref().expect("anon region");
                let resident = m.resident(vpn);
                let first = !touched[vpn as usize];
                touched[vpn as usize] = true;
                let p = m.ptr(vpn);
                // SAFETY: in-bounds access of a private read-write mapping.
                unsafe {
                    if matches!(op, ReplayOp::Store { .. }) {
                        std::ptr::write_volatile(p, std::ptr::read_volatile(p).wrapping_add(1));
                    } else {
                        sink ^= std::ptr::read_volatile(p);
                    }
                }
                // A first touch is a minor fault; a non-resident page touched before was swapped.
                (!resident && !first, !resident && first)
            }
        };
        if !measuring {
            continue;
        }
        win.accesses += 1;
        win.misses += miss as u64;
        win.minor += minor as u64;
        if opf.window > 0 && win.accesses == opf.window {
            let _ = writeln!(
                out,
                "{WINDOW_PREFIX} {nwin} accesses {} misses {} minor {} ns {}",
                win.accesses,
                win.misses,
                win.minor,
                monotonic_ns() - t0
            );
            nwin += 1;
            total.accesses += win.accesses;
            total.misses += win.misses;
            total.minor += win.minor;
            win = Count::default();
            dump(&mut out, &every, total.accesses);
        }
    }
    if win.accesses > 0 {
        let _ = writeln!(
            out,
            "{WINDOW_PREFIX} {nwin} accesses {} misses {} minor {} ns {}",
            win.accesses,
            win.misses,
            win.minor,
            monotonic_ns() - t0
        );
        total.accesses += win.accesses;
        total.misses += win.misses;
        total.minor += win.minor;
    }
    dump(&mut out, &at_end, total.accesses);
    let _ = writeln!(
        out,
        "{TOTAL_PREFIX} accesses {} misses {} minor {} sink {sink}",
        total.accesses, total.misses, total.minor
    );
}

/// `CLOCK_MONOTONIC` in nanoseconds (the guest's virtual clock under `-icount`).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn dump(out: &mut impl std::io::Write, files: &[(String, String)], accesses: u64) {
    for (name, path) in files {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| format!("lrugen-replay: {path}: {e}\n"));
        let _ = write!(out, "{DUMP_PREFIX} {name} {accesses}\n{text}");
        if !text.ends_with('\n') {
            let _ = writeln!(out);
        }
        let _ = writeln!(out, "{DUMP_END}");
    }
    let _ = out.flush();
}

// SPDX-License-Identifier: GPL-2.0-only
//! `memory.reclaim`: the write grammar of each kernel profile (a golden table of inputs and
//! results) and the reclaim loop (what it reclaims, `EAGAIN`, the batch per iteration, the
//! swappiness key, the counters it moves).

mod common;
use lrugen::kernel::Kernel;
use lrugen::mm::memcg::MemcgId;
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vm::{vmf, MMAP_BASE_VPN};
use lrugen::mm::vmstat::Stat;
use lrugen::reclaim::memory_reclaim::{self, ReclaimRequest, WriteErrno, PAGE_COUNTER_MAX};
use lrugen::reclaim::mglru::{Mglru, Profile};
use lrugen::workload::{Op, ANON_FILE};

/// What a write parses to: pages and swappiness, or the errno's name.
fn show(r: Result<ReclaimRequest, WriteErrno>) -> String {
    match r {
        Ok(ReclaimRequest {
            nr_pages,
            swappiness: None,
        }) => format!("{nr_pages}"),
        Ok(ReclaimRequest {
            nr_pages,
            swappiness: Some(s),
        }) => format!("{nr_pages} s={s}"),
        Err(e) => e.name().to_string(),
    }
}

/// The grammar, per profile: input → 6.1, 6.12, 6.17, 7.2.
#[test]
fn grammar_per_kernel() {
    let max = PAGE_COUNTER_MAX.to_string();
    let rows: &[(&str, [&str; 4])] = &[
        ("1M", ["256", "256", "256", "256"]),
        ("  1M\n", ["256", "256", "256", "256"]),
        ("4096", ["1", "1", "1", "1"]),
        ("4095", ["0", "0", "0", "0"]),
        ("1k", ["0", "0", "0", "0"]),
        ("8K", ["2", "2", "2", "2"]),
        ("0x2000", ["2", "2", "2", "2"]),
        ("010000", ["1", "1", "1", "1"]), // octal 4096
        ("0x100000", ["256", "256", "256", "256"]),
        ("04000000", ["256", "256", "256", "256"]),
        ("1G", ["262144", "262144", "262144", "262144"]),
        ("", [&max, "EINVAL", "EINVAL", "EINVAL"]),
        ("\n", [&max, "EINVAL", "EINVAL", "EINVAL"]),
        ("abc", ["EINVAL", "EINVAL", "EINVAL", "EINVAL"]),
        ("1Mx", ["EINVAL", "EINVAL", "EINVAL", "EINVAL"]),
        ("1M swappiness=10", ["EINVAL", "256 s=10", "256 s=10", "256 s=10"]),
        ("1M  swappiness=0", ["EINVAL", "256 s=0", "256 s=0", "256 s=0"]),
        ("1M swappiness=200", ["EINVAL", "256 s=200", "256 s=200", "256 s=200"]),
        ("1M swappiness=201", ["EINVAL", "EINVAL", "EINVAL", "EINVAL"]),
        ("1M swappiness=-1", ["EINVAL", "EINVAL", "EINVAL", "EINVAL"]),
        ("1M swappiness=0x10", ["EINVAL", "256 s=16", "256 s=16", "256 s=16"]),
        ("1M swappiness=10x", ["EINVAL", "EINVAL", "EINVAL", "EINVAL"]),
        ("1M swappiness=", ["EINVAL", "EINVAL", "EINVAL", "EINVAL"]),
        ("1M swappiness=max", ["EINVAL", "EINVAL", "256 s=201", "256 s=201"]),
        (
            "1M swappiness=5 swappiness=7",
            ["EINVAL", "256 s=7", "256 s=7", "256 s=7"],
        ),
        ("1Mswappiness=5", ["EINVAL", "256 s=5", "256 s=5", "256 s=5"]),
        ("1M\tswappiness=5", ["EINVAL", "256 s=5", "256 s=5", "256 s=5"]),
        ("1M swappiness=5\tx", ["EINVAL", "EINVAL", "EINVAL", "EINVAL"]),
        ("1M foo", ["EINVAL", "EINVAL", "EINVAL", "EINVAL"]),
        ("M", ["0", "0", "0", "0"]),
    ];
    let profiles = [Profile::V6_1, Profile::V6_12, Profile::V6_17, Profile::V7_2];
    let mut bad = Vec::new();
    for (input, want) in rows {
        for (p, want) in profiles.iter().zip(want) {
            let got = show(memory_reclaim::parse(input, &p.switches));
            if got != *want {
                bad.push(format!("{:?} on {}: got {got}, want {want}", input, p.label()));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

type K = Kernel<Mglru>;

/// A memcg with `file` clean file pages read once and `anon` anon pages stored, swap for them.
fn filled(profile: Profile, file: u64, anon: u64) -> (K, MemcgId) {
    let (mut k, t, task) = common::mglru_setup(profile, 8192, 8192, None);
    k.m.lru_cache_disabled = true;
    let f = k.m.create_file("f", file.max(1), Advice::Normal);
    for i in 0..file {
        k.step(Op::Read {
            task,
            file: f,
            index: i,
        })
        .unwrap();
    }
    if anon > 0 {
        k.step(Op::Mmap {
            task,
            vpn: MMAP_BASE_VPN,
            pages: anon as u32,
            file: ANON_FILE,
            pgoff: 0,
            flags: vmf::WRITE as u8,
            compressed_pct: 0,
        })
        .unwrap();
        for i in 0..anon {
            k.step(Op::Store {
                task,
                vpn: MMAP_BASE_VPN + i as u32,
            })
            .unwrap();
        }
    }
    (k, t)
}

fn profiles() -> [Profile; 4] {
    [Profile::V6_1, Profile::V6_12, Profile::V6_17, Profile::V7_2]
}

/// A write reclaims at least what it asked for, from the memcg, counted as direct reclaim before
/// 6.15 and as proactive reclaim from it (`proactive_reclaim_stats`: `pgsteal_proactive`).
#[test]
fn reclaims_what_it_asks_and_counts_direct_or_proactive() {
    for p in profiles() {
        let (mut k, t) = filled(p, 1024, 0);
        let before = k.m.vmstat();
        let charged = k.m.memcgs[t].usage;
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "1M");
        assert_eq!(r.error, None, "{}", p.label());
        assert!(r.nr_reclaimed >= 256, "{}: {r:?}", p.label());
        let d = k.m.vmstat().delta(&before);
        assert_eq!(charged - k.m.memcgs[t].usage, r.nr_reclaimed, "{}", p.label());
        // memcg reclaim is in /proc/vmstat only from 7.2 (`node_reclaim_stats`), as direct or,
        // from 6.15, as proactive reclaim; the memcg's own statistics have it on every kernel
        let (ev, other) = if p.switches.proactive_reclaim_stats {
            (Stat::PgstealProactive, Stat::PgstealDirect)
        } else {
            (Stat::PgstealDirect, Stat::PgstealProactive)
        };
        let global = if p.switches.node_reclaim_stats {
            r.nr_reclaimed as i64
        } else {
            0
        };
        assert_eq!(d.get(ev), global, "{}: {}", p.label(), ev.name());
        assert_eq!(d.get(other), 0, "{}: {}", p.label(), other.name());
        assert_eq!(
            k.m.memcg_stat(t).get(ev),
            r.nr_reclaimed as i64,
            "{}: memcg {}",
            p.label(),
            ev.name()
        );
        assert_eq!(d.get(Stat::PgstealKswapd), 0, "{}", p.label());
    }
}

/// More than the memcg holds: everything reclaimable goes, then `EAGAIN` after the retries.
#[test]
fn more_than_there_is_fails_with_eagain() {
    for p in profiles() {
        let (mut k, t) = filled(p, 300, 0);
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "40M");
        assert_eq!(r.error, Some(WriteErrno::EAGAIN), "{}: {r:?}", p.label());
        assert!(r.nr_reclaimed >= 290, "{}: {r:?}", p.label());
        assert!(r.iterations > 16, "{}: {r:?}", p.label());
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "1M");
        assert_eq!(r.error, Some(WriteErrno::EAGAIN), "{}", p.label());
        assert_eq!(r.nr_reclaimed, 0);
        assert_eq!(r.iterations, 17, "{}: MAX_RECLAIM_RETRIES + 1 empty calls", p.label());
        // nothing asked: nothing done, success
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "0");
        assert_eq!((r.error, r.iterations), (None, 0));
    }
}

/// The data disk's metadata folios (`File::buffers_in_bh_lru`, buffers held by a CPU's
/// buffer-head LRU) survive reclaim, activated at every pass, until a `memory.reclaim` write runs
/// out of retries: its last attempt begins with `lru_add_drain_all`, which invalidates the
/// buffer-head LRUs, and frees them (`pgsteal_file`), on every kernel as the proactive-reclaim
/// fixtures show (lrugen-kernel's tests/ctl.rs). A write that succeeds before it runs out does
/// not drain, and leaves them.
#[test]
fn the_last_attempt_releases_the_metadata_folios_buffers() {
    for p in profiles() {
        let (mut k, t) = filled(p, 64, 0);
        let task = 0;
        let meta = k.m.create_file("vda (ext4 metadata)", 2, Advice::Normal);
        k.m.files[meta as usize].bdev_metadata = true;
        k.m.files[meta as usize].buffers_in_bh_lru = true;
        for index in 0..2 {
            k.step(Op::Read {
                task,
                file: meta,
                index,
            })
            .unwrap();
        }
        // succeeds: no last attempt, no drain
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "128K");
        assert_eq!(r.error, None, "{}: {r:?}", p.label());
        assert!(k.m.files[meta as usize].buffers_in_bh_lru, "{}", p.label());
        assert_eq!(k.m.files[meta as usize].nr_pages, 2, "{}", p.label());
        // everything else goes, then the retries run out and the last attempt frees the two
        let before = k.m.vmstat();
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "40M");
        assert_eq!(r.error, Some(WriteErrno::EAGAIN), "{}: {r:?}", p.label());
        assert!(!k.m.files[meta as usize].buffers_in_bh_lru, "{}", p.label());
        assert_eq!(k.m.files[meta as usize].nr_pages, 0, "{}", p.label());
        let d = k.m.vmstat().delta(&before);
        assert!(d.get(Stat::Pgactivate) >= 2, "{}: activated while held", p.label());
        k.check().unwrap();
    }
}

/// `memory_reclaim_quarter_batch`: 6.1 asks for the whole rest in one call, 6.12+ for a quarter,
/// so the same request takes more iterations (and, on 6.1, one call overshoots less often).
#[test]
fn quarter_batch_takes_more_iterations() {
    let iters = |p: Profile| {
        let (mut k, t) = filled(p, 4096, 0);
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "8M");
        assert_eq!(r.error, None);
        r.iterations
    };
    let mut p = Profile::V6_12;
    p.set_switch("memory_reclaim_quarter_batch", false).unwrap();
    let (whole, quarter) = (iters(p), iters(Profile::V6_12));
    assert!(whole < quarter, "whole rest {whole}, quarter {quarter}");
    assert!(iters(Profile::V6_1) < iters(Profile::V6_12));
}

/// `swappiness=0` keeps anon, `swappiness=max` (6.15+) keeps file; 6.1 refuses the key and
/// reclaims nothing.
#[test]
fn swappiness_key_selects_the_type() {
    for p in [Profile::V6_17, Profile::V7_2] {
        let (mut k, t) = filled(p, 512, 512);
        let before = k.m.vmstat();
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "512K swappiness=0");
        assert_eq!(r.error, None, "{}", p.label());
        let d = k.m.vmstat().delta(&before);
        assert_eq!(d.get(Stat::PgstealAnon), 0, "{}", p.label());
        assert!(d.get(Stat::PgstealFile) >= 128, "{}", p.label());

        let before = k.m.vmstat();
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "512K swappiness=max");
        assert_eq!(r.error, None, "{}", p.label());
        let d = k.m.vmstat().delta(&before);
        assert_eq!(d.get(Stat::PgstealFile), 0, "{}", p.label());
        assert!(d.get(Stat::PgstealAnon) >= 128, "{}", p.label());
    }
    let (mut k, t) = filled(Profile::V6_1, 512, 512);
    let before = k.m.vmstat();
    let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "512K swappiness=0");
    assert_eq!((r.error, r.nr_reclaimed), (Some(WriteErrno::EINVAL), 0));
    assert_eq!(k.m.vmstat().delta(&before).get(Stat::PgstealFile), 0);
}

/// The same writes on the same machine give the same bytes.
#[test]
fn deterministic() {
    let run = || {
        let (mut k, t) = filled(Profile::V7_2, 1024, 256);
        let r = memory_reclaim::write(&mut k.m, &mut k.p, t, "2M swappiness=60");
        (r, format!("{:?}", k.m.vmstat()))
    };
    assert_eq!(run(), run());
}

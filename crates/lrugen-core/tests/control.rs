// SPDX-License-Identifier: GPL-2.0-only
//! Control scripts (`lrugen::control`): writes to the memcg limit files do what
//! `memory_max_write`/`memory_high_write` do (reclaim down to the limit, OOM-kill when nothing
//! more can be reclaimed), `memory.reclaim` in a script is the same as the write itself, reads
//! match the captures a run already makes, the sysfs files read back as the kernel prints them,
//! refusals carry the kernel's errno, clock actions fire on the run's clock, and a scripted run
//! is deterministic.

use lrugen::control::{Record, Script};
use lrugen::mm::MachineConfig;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunError, RunResult};
use lrugen::workload::WorkloadSpec;
use std::path::Path;

fn file_reads(accesses: u64) -> WorkloadSpec {
    WorkloadSpec::FileRead {
        files: 2,
        file_pages: 4_000,
        dist: "zipf:0.9".parse().expect("dist"),
        accesses,
    }
}

fn anon(accesses: u64) -> WorkloadSpec {
    WorkloadSpec::Anon {
        compressed_pct: 0,
        pages: 3_000,
        write_ratio: 0.5,
        dist: "uniform".parse().expect("dist"),
        accesses,
    }
}

fn config(policy: PolicyKind, w: WorkloadSpec, max: u64, swap: u64, script: &str) -> RunConfig {
    let mut c = RunConfig::new(
        MachineConfig::simple(max + 16_384, swap),
        MemcgConfig {
            max: Some(max),
            ..Default::default()
        },
        w,
        policy,
    );
    c.check = true;
    c.ctl = Some(Script::parse(script, Path::new("test.toml")).expect("script"));
    c
}

fn run(c: &RunConfig) -> RunResult {
    sim::run(c, None, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

fn bytes(r: &Record) -> u64 {
    r.text.as_deref().expect("a read").trim().parse().expect("a number")
}

const KERNELS: [PolicyKind; 2] = [PolicyKind::Mglru, PolicyKind::Classic];

#[test]
fn a_lower_memory_max_reclaims_down_to_it() {
    let script = "[[action]]\nat = 20000\nread = \"memory.current\"\n\
                  [[action]]\nat = 20000\nwrite = \"memory.max\"\nvalue = \"8M\"\n\
                  [[action]]\nat = 20000\nread = \"memory.current\"\n\
                  [[action]]\nat = 30000\nread = \"memory.current\"\n";
    for p in KERNELS {
        let r = run(&config(p, file_reads(40_000), 4_000, 0, script));
        assert_eq!(r.ctl.len(), 4, "{p:?}");
        let (before, after, later) = (bytes(&r.ctl[0]), bytes(&r.ctl[2]), bytes(&r.ctl[3]));
        assert!(before > 8 << 20, "{p:?}: the memcg was over 8M before ({before})");
        assert!(after <= 8 << 20, "{p:?}: at most 8M right after the write ({after})");
        assert!(later <= 8 << 20, "{p:?}: and it stays under the new limit ({later})");
        let w = &r.ctl[1];
        assert!(w.ok && w.errno.is_none(), "{p:?}: {w:?}");
        assert_eq!(w.reclaimed, Some((before - after) / 4096), "{p:?}");
        // file pages only, so nothing was left to the OOM killer
        let ev = r.memory_events.expect("events");
        assert_eq!((ev.oom, ev.oom_kill), (0, 0), "{p:?}");
        assert!(r.error.is_none(), "{p:?}: {:?}", r.error);
    }
}

#[test]
fn memory_max_below_what_can_be_reclaimed_kills_the_workload() {
    // anon pages and no swap: reclaim finds nothing, so the write ends in the memcg OOM killer
    let script = "[[action]]\nat = 10000\nwrite = \"memory.max\"\nvalue = \"1M\"\n";
    for p in KERNELS {
        let r = run(&config(p, anon(40_000), 4_000, 0, script));
        let w = &r.ctl[0];
        assert!(
            w.ok,
            "{p:?}: memory_max_write returns its byte count even after an OOM kill: {w:?}"
        );
        let ev = r.memory_events.expect("events");
        assert_eq!(ev.oom_kill, 1, "{p:?}: {ev:?}");
        assert!(ev.oom >= 1, "{p:?}: {ev:?}");
        assert!(
            r.error.as_deref().is_some_and(|e| e.contains("killed")),
            "{p:?}: the run ends with the kill: {:?}",
            r.error
        );
        assert!(r.accesses < 40_000, "{p:?}: stopped at the kill");
        assert_eq!(r.vmstat.expect("vmstat").get(lrugen::mm::vmstat::Stat::OomKill), 1);
    }
}

#[test]
fn memory_high_reclaims_without_killing() {
    let script = "[[action]]\nat = 10000\nwrite = \"memory.high\"\nvalue = \"4M\"\n\
                  [[action]]\nat = 10000\nread = \"memory.current\"\n\
                  [[action]]\nat = 10000\nread = \"memory.high\"\n";
    for p in KERNELS {
        let r = run(&config(p, anon(20_000), 4_000, 20_000, script));
        assert!(r.ctl[0].ok, "{p:?}: {:?}", r.ctl[0]);
        assert!(r.ctl[0].reclaimed.unwrap_or(0) > 0, "{p:?}");
        assert!(bytes(&r.ctl[1]) <= 4 << 20, "{p:?}: {:?}", r.ctl[1]);
        assert_eq!(r.ctl[2].text.as_deref(), Some("4194304\n"));
        let ev = r.memory_events.expect("events");
        assert_eq!(ev.oom_kill, 0, "{p:?}");
        assert!(r.error.is_none(), "{p:?}");
        assert!(
            r.vmstat.expect("vmstat").get(lrugen::mm::vmstat::Stat::Pswpout) > 0,
            "{p:?}: swapped to fit"
        );
    }
}

#[test]
fn memory_reclaim_in_a_script_is_the_write_itself() {
    // the write after the last step: the run with it and the run without differ by exactly the
    // write, so the memcg's pgsteal grows by the pages the record says were reclaimed
    let script = "[[action]]\nat = 30000\nwrite = \"memory.reclaim\"\nvalue = \"2M\"\n";
    use lrugen::mm::vmstat::Stat;
    for p in KERNELS {
        let c = config(p, file_reads(30_000), 4_000, 0, script);
        let r = run(&c);
        let w = &r.ctl[0];
        assert!(w.ok, "{w:?}");
        let got = w.reclaimed.expect("reclaimed");
        assert!(got >= 512, "{p:?}: at least the 512 pages asked ({got})");
        let mut plain = c.clone();
        plain.ctl = None;
        let q = run(&plain);
        assert_eq!(r.misses, q.misses, "{p:?}: the write came after the last access");
        // counted as direct reclaim, or as proactive where the kernel has its own counter (6.15)
        let steal = |x: &RunResult| {
            let ms = x.memory_stat.as_ref().expect("memory.stat");
            ms.get(Stat::PgstealDirect) + ms.get(Stat::PgstealProactive)
        };
        assert_eq!(steal(&r) - steal(&q), got as i64, "{p:?}");
        let bad = run(&config(
            p,
            file_reads(1_000),
            4_000,
            0,
            "[[action]]\nat = 500\nwrite = \"memory.reclaim\"\nvalue = \"2M swappiness=500\"\n",
        ));
        assert_eq!(bad.ctl[0].errno.as_deref(), Some("EINVAL"), "{p:?}: {:?}", bad.ctl[0]);
    }
}

#[test]
fn reads_of_lru_gen_equal_the_run_s_captures() {
    let script = "[[action]]\nat = 10000\nevery = 10000\nread = \"lru_gen\"\n\
                  [[action]]\nat = 10000\nevery = 10000\nread = \"lru_gen_full\"\n";
    let mut c = config(PolicyKind::Mglru, file_reads(30_000), 4_000, 0, script);
    c.debugfs_every = Some(10_000);
    let r = run(&c);
    assert_eq!(r.ctl.len(), 6);
    for (i, (step, plain, full)) in r.debugfs.iter().take(3).enumerate() {
        assert_eq!(r.ctl[2 * i].step, *step);
        assert_eq!(r.ctl[2 * i].text.as_deref(), Some(plain.as_str()), "lru_gen at {step}");
        assert_eq!(
            r.ctl[2 * i + 1].text.as_deref(),
            Some(full.as_str()),
            "lru_gen_full at {step}"
        );
    }
    // the classic LRU has no such file
    let r = run(&config(PolicyKind::Classic, file_reads(12_000), 4_000, 0, script));
    assert!(
        r.ctl.iter().all(|x| !x.ok && x.errno.as_deref() == Some("ENOENT")),
        "{:?}",
        r.ctl[0]
    );
}

#[test]
fn sysfs_files_read_back_as_the_kernel_prints_them() {
    let script = "[[action]]\nat = 0\nread = \"enabled\"\n\
                  [[action]]\nat = 1\nwrite = \"enabled\"\nvalue = \"3\"\n\
                  [[action]]\nat = 1\nread = \"enabled\"\n\
                  [[action]]\nat = 2\nwrite = \"enabled\"\nvalue = \"yes please\"\n\
                  [[action]]\nat = 2\nread = \"enabled\"\n\
                  [[action]]\nat = 3\nwrite = \"enabled\"\nvalue = \"maybe\"\n\
                  [[action]]\nat = 4\nwrite = \"min_ttl_ms\"\nvalue = \"5\\n\"\n\
                  [[action]]\nat = 4\nread = \"min_ttl_ms\"\n\
                  [[action]]\nat = 5\nwrite = \"min_ttl_ms\"\nvalue = \" 5\"\n\
                  [[action]]\nat = 6\nwrite = \"vm.swappiness\"\nvalue = \"0x10\"\n\
                  [[action]]\nat = 6\nread = \"vm.swappiness\"\n\
                  [[action]]\nat = 7\nwrite = \"vm.swappiness\"\nvalue = \"201\"\n\
                  [[action]]\nat = 8\nwrite = \"memory.max\"\nvalue = \"16MB\"\n\
                  [[action]]\nat = 8\nread = \"memory.max\"\n\
                  [[action]]\nat = 9\nwrite = \"memory.max\"\nvalue = \"max\"\n\
                  [[action]]\nat = 9\nread = \"memory.max\"\n\
                  [[action]]\nat = 10\nwrite = \"memory.low\"\nvalue = \"max\"\n\
                  [[action]]\nat = 10\nread = \"memory.low\"\n\
                  [[action]]\nat = 10\nread = \"memory.min\"\n";
    let r = run(&config(PolicyKind::Mglru, file_reads(20), 4_000, 0, script));
    let texts: Vec<(bool, Option<&str>, Option<&str>)> = r
        .ctl
        .iter()
        .map(|x| {
            (
                x.ok,
                x.errno.as_deref(),
                if x.write.is_none() { x.text.as_deref() } else { None },
            )
        })
        .collect();
    assert_eq!(
        texts,
        vec![
            (true, None, Some("0x0007\n")),
            (true, None, None),
            (true, None, Some("0x0003\n")),
            (true, None, None), // a first byte `y` sets every capability
            (true, None, Some("0x0007\n")),
            (false, Some("EINVAL"), None),
            (true, None, None),            // kstrtouint takes one trailing newline
            (true, None, Some("8\n")),     // 5 ms is 2 jiffies at HZ=250, shown as 8 ms
            (false, Some("EINVAL"), None), // but no leading space
            (true, None, None),
            (true, None, Some("16\n")),
            (false, Some("EINVAL"), None),
            (false, Some("EINVAL"), None), // memparse reads `16M`, then `B` is left over
            (true, None, Some("16384000\n")),
            (true, None, None),
            (true, None, Some("max\n")),
            (true, None, None),
            (true, None, Some("max\n")), // seq_puts_memcg_tunable prints `max` for the top
            (true, None, Some("0\n")),
        ],
        "{:#?}",
        r.ctl
    );
    // a classic run starts with every capability off, keeps the walk bits it is given, and
    // `y` switches the multi-gen LRU on
    let r = run(&config(
        PolicyKind::Classic,
        file_reads(20),
        4_000,
        0,
        "[[action]]\nat = 0\nread = \"enabled\"\n[[action]]\nat = 1\nwrite = \"enabled\"\nvalue = \"6\"\n\
         [[action]]\nat = 1\nread = \"enabled\"\n[[action]]\nat = 2\nwrite = \"enabled\"\nvalue = \"y\"\n",
    ));
    assert_eq!(r.ctl[0].text.as_deref(), Some("0x0000\n"));
    assert_eq!(r.ctl[2].text.as_deref(), Some("0x0006\n"));
    assert!(r.ctl[3].ok, "{:?}", r.ctl[3]);
    assert_eq!(r.policy, "classic");
}

#[test]
fn clock_actions_fire_on_the_run_s_clock() {
    let script = "[[action]]\nat_ms = 100\nevery = 250\nread = \"memory.current\"\n";
    let r = run(&config(PolicyKind::Mglru, file_reads(30_000), 4_000, 0, script));
    assert!(r.ctl.len() >= 2, "{} records", r.ctl.len());
    for (i, x) in r.ctl.iter().enumerate() {
        let due = 100.0 + 250.0 * i as f64;
        assert!(x.time_ms >= due, "record {i} at {} ms, due {due}", x.time_ms);
        // a step moves the clock by far less than the period: the action runs right away
        assert!(x.time_ms < due + 50.0, "record {i} at {} ms, due {due}", x.time_ms);
    }
}

#[test]
fn a_scripted_run_is_deterministic() {
    let script = "[[action]]\nat = 5000\nevery = 5000\nwrite = \"memory.reclaim\"\nvalue = \"1M\"\n\
                  [[action]]\nat = 7000\nevery = 5000\nread = \"lru_gen_full\"\n";
    let c = config(PolicyKind::Mglru, file_reads(30_000), 4_000, 0, script);
    let (a, b) = (run(&c), run(&c));
    assert_eq!(a.ctl, b.ctl);
    assert_eq!(a.misses, b.misses);
    assert_eq!(
        a.vmstat.map(|v| v.get(lrugen::mm::vmstat::Stat::PgstealDirect)),
        b.vmstat.map(|v| v.get(lrugen::mm::vmstat::Stat::PgstealDirect))
    );
    // and reclaiming every 5000 steps changes the run against no script
    let mut plain = c.clone();
    plain.ctl = None;
    assert!(run(&plain).misses < a.misses);
}

#[test]
fn scripts_are_refused_where_they_cannot_run() {
    let script = "[[action]]\nat = 10\nread = \"lru_gen\"\n";
    let c = config(PolicyKind::Lru, file_reads(100), 4_000, 0, script);
    match sim::run(&c, None, &mut |_, _| {}) {
        Err(RunError::Config(e)) => assert!(e.contains("reference cache"), "{e}"),
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.misses)),
    }
    let mut c = config(PolicyKind::Mglru, file_reads(100), 4_000, 0, script);
    c.engine = Some(Default::default());
    match sim::run(&c, None, &mut |_, _| {}) {
        Err(RunError::Config(e)) => assert!(e.contains("engine"), "{e}"),
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.misses)),
    }
}

#[test]
fn an_agent_ages_and_reclaims_through_placeholders() {
    // a working-set agent: age every 5,000 steps (the command names the current max_seq, as an
    // agent reads it off lru_gen first), then evict everything but the two youngest generations
    let script =
        "[[action]]\nat = 5000\nevery = 5000\nwrite = \"lru_gen\"\nvalue = \"+ {memcg} {node} {max_seq} 1 1\"\n\
                  [[action]]\nat = 5000\nevery = 5000\nread = \"lru_gen\"\n\
                  [[action]]\nat = 26000\nwrite = \"lru_gen\"\nvalue = \"- {memcg} 0 {max_seq-2}\"\n\
                  [[action]]\nat = 26000\nread = \"memory.current\"\n";
    // a memcg far larger than the hot set: the cold pages sit in the old generations
    let w = WorkloadSpec::FileRead {
        files: 1,
        file_pages: 6_000,
        dist: "zipf:1.2".parse().expect("dist"),
        accesses: 30_000,
    };
    let r = run(&config(PolicyKind::Mglru, w.clone(), 8_000, 0, script));
    let ages: Vec<&Record> = r
        .ctl
        .iter()
        .filter(|x| x.write.as_deref().is_some_and(|w| w.starts_with('+')))
        .collect();
    assert_eq!(ages.len(), 6);
    let mut last = 0;
    for a in &ages {
        assert!(a.ok, "{a:?}");
        // `+ 2 0 N 1 1`: N is the max_seq the command was written against, one more each time
        let n: u64 = a.write.as_deref().unwrap().split(' ').nth(3).unwrap().parse().unwrap();
        assert!(n > last, "{:?}", a.write);
        assert!(a.write.as_deref().unwrap().starts_with("+ 2 0 "), "{:?}", a.write);
        last = n;
    }
    let evict = r
        .ctl
        .iter()
        .find(|x| x.write.as_deref().is_some_and(|w| w.starts_with('-')))
        .unwrap();
    assert!(evict.ok, "{evict:?}");
    assert!(evict.reclaimed.unwrap() > 1_000, "the cold pages went: {evict:?}");
    let after = r.ctl.iter().rev().find(|x| x.file == "memory.current").unwrap();
    assert!(bytes(after) < 8_000 * 4096 - 1_000 * 4096, "{after:?}");
    // without generations there is nothing to name
    let r = run(&config(PolicyKind::Classic, w, 8_000, 0, script));
    let a = &r.ctl[0];
    assert!(!a.ok && a.errno.as_deref() == Some("ENOENT"), "{a:?}");
}

#[test]
fn writing_enabled_in_a_script_is_the_kill_switch() {
    // MGLRU off half-way and on again: the same run as --switch-at's, counter for counter, with
    // the invariant checker after each write; enabled reads back as the kernel prints it
    let script = "[[action]]\nat_step = 10000\nwrite = \"enabled\"\nvalue = \"n\"\n\
                  [[action]]\nat_step = 10000\nread = \"enabled\"\n\
                  [[action]]\nat_step = 20000\nwrite = \"enabled\"\nvalue = \"0x7\"\n\
                  [[action]]\nat_step = 20000\nread = \"enabled\"\n";
    for (p, w) in [
        (PolicyKind::Mglru, file_reads(30_000)),
        (PolicyKind::Classic, anon(30_000)),
    ] {
        let c = config(p, w, 2_500, 20_000, script);
        let r = run(&c);
        assert!(r.ctl.iter().all(|x| x.ok), "{:?}", r.ctl);
        // `n` clears every capability, `0x7` sets them all
        assert_eq!(r.ctl[1].text.as_deref(), Some("0x0000\n"));
        assert_eq!(r.ctl[3].text.as_deref(), Some("0x0007\n"));
        let mut s = c.clone();
        s.ctl = None;
        s.switch_at = vec![
            sim::SwitchAt {
                step: 10_000,
                value: "n".into(),
            },
            sim::SwitchAt {
                step: 20_000,
                value: "0x7".into(),
            },
        ];
        let q = run(&s);
        assert_eq!((r.misses, r.hits), (q.misses, q.hits), "{p:?}");
        assert_eq!(r.vmstat, q.vmstat, "{p:?}");
        assert_eq!(r.memory_stat, q.memory_stat, "{p:?}");
        // and it is not the run that never switched
        let mut plain = c.clone();
        plain.ctl = None;
        assert_ne!(run(&plain).vmstat, r.vmstat, "{p:?}");
    }
}

#[test]
fn only_eviction_commands_report_pages_reclaimed() {
    let script = "[[action]]\nat = 5000\nwrite = \"lru_gen\"\nvalue = \"+ {memcg} 0 {max_seq}\"\n\
                  [[action]]\nat = 6000\nwrite = \"lru_gen\"\nvalue = \"+ {memcg} 0 {max_seq}; - {memcg} 0 {min_seq}\"\n";
    let r = run(&config(PolicyKind::Mglru, file_reads(8_000), 4_000, 0, script));
    assert!(r.ctl.iter().all(|x| x.ok), "{:?}", r.ctl);
    assert_eq!(r.ctl[0].reclaimed, None, "aging reclaims nothing: {:?}", r.ctl[0]);
    assert!(r.ctl[1].reclaimed.is_some(), "{:?}", r.ctl[1]);
}

#[test]
fn vm_swappiness_reaches_the_workload_memcg() {
    // anon pages with swap: at swappiness 0 from the start of the measured accesses, reclaim
    // takes file pages only (there are none), so nothing more is swapped out after the write
    let script = "[[action]]\nat = 0\nwrite = \"vm.swappiness\"\nvalue = \"0\"\n\
                  [[action]]\nat = 0\nread = \"vm.swappiness\"\n";
    for p in KERNELS {
        let mut c = config(p, anon(20_000), 2_000, 20_000, script);
        c.ctl = None;
        let plain = run(&c);
        let swapped = |r: &RunResult| {
            r.vmstat
                .as_ref()
                .expect("vmstat")
                .get(lrugen::mm::vmstat::Stat::Pswpout)
        };
        assert!(swapped(&plain) > 0, "{p:?}: swaps at 60");
        c.ctl = Some(Script::parse(script, Path::new("t.toml")).unwrap());
        let r = run(&c);
        assert_eq!(r.ctl[1].text.as_deref(), Some("0\n"));
        assert!(
            swapped(&r) < swapped(&plain),
            "{p:?}: swappiness 0 from the first measured access: {} against {}",
            swapped(&r),
            swapped(&plain)
        );
    }
}

#[test]
fn vm_page_cluster_turns_swap_read_ahead_off_and_refuses_what_the_kernel_refuses() {
    // anon pages swapped to a disk-like device: at the kernel's page-cluster 3 faults read
    // ahead; after writing 0 at the first measured access each fault reads its page only
    let script = "[[action]]\nat = 0\nwrite = \"vm.page-cluster\"\nvalue = \"0\"\n\
                  [[action]]\nat = 0\nread = \"vm.page-cluster\"\n\
                  [[action]]\nat = 0\nwrite = \"/proc/sys/vm/page-cluster\"\nvalue = \"32\"\n\
                  [[action]]\nat = 0\nwrite = \"vm.page-cluster\"\nvalue = \"-1\"\n";
    let get = |r: &RunResult, s| r.vmstat.as_ref().expect("vmstat").get(s);
    use lrugen::mm::vmstat::Stat;
    for p in KERNELS {
        let mut c = config(p, anon(20_000), 2_000, 20_000, script);
        c.ctl = None;
        let plain = run(&c);
        assert!(get(&plain, Stat::SwapRa) > 0, "{p:?}: reads ahead at 3");
        c.ctl = Some(Script::parse(script, Path::new("t.toml")).unwrap());
        let r = run(&c);
        assert_eq!(r.ctl[1].text.as_deref(), Some("0\n"), "{p:?}");
        for bad in &r.ctl[2..] {
            assert_eq!(
                (bad.ok, bad.errno.as_deref()),
                (false, Some("EINVAL")),
                "{p:?}: {bad:?}"
            );
        }
        assert_eq!(get(&r, Stat::SwapRa), 0, "{p:?}");
        assert_eq!(
            get(&r, Stat::Pswpin),
            get(&r, Stat::Pgmajfault),
            "{p:?}: one page a fault"
        );
    }
}

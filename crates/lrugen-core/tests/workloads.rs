// SPDX-License-Identifier: GPL-2.0-only
//! The scripted workloads (kernel build, OLTP, many applications) and the `Exit`/`Think`
//! operations: each is deterministic, does what it claims on a small machine, and runs under
//! `sim::run` with invariant checks, with and without the virtual-time engine, for both kernel
//! policies.

use lrugen::kernel::Kernel;
use lrugen::mm::memcg::MemcgId;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::{Mglru, MglruConfig};
use lrugen::reclaim::Policy;
use lrugen::sim::engine::EngineConfig;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig};
use lrugen::workload::{Op, Step, Stream, WorkloadSpec, OLTP_PAGES_PER_TXN};

fn build() -> WorkloadSpec {
    WorkloadSpec::Build {
        processes_per_job: 6,
        header_pages: 64,
        source_pages_per_process: 16,
        anon_pages_per_process: 128,
        object_pages_per_process: 8,
    }
}

fn oltp() -> WorkloadSpec {
    WorkloadSpec::Oltp {
        buffer_pool_pages: 1_024,
        warehouses: 4,
        wal_pages: 64,
        transactions: 2_000,
    }
}

fn apps() -> WorkloadSpec {
    WorkloadSpec::Apps {
        apps: 4,
        pages_per_app: 512,
        foreground_accesses: 3_000,
        switches: 7,
    }
}

fn config(w: WorkloadSpec, policy: PolicyKind, memcg_max: u64) -> RunConfig {
    let mut cfg = RunConfig::new(
        MachineConfig::simple(16_384, 16_384),
        MemcgConfig {
            max: Some(memcg_max),
            ..Default::default()
        },
        w,
        policy,
    );
    cfg.check = true;
    cfg
}

fn steps(w: &WorkloadSpec, seed: u64) -> Vec<Step> {
    let cfg = config(w.clone(), PolicyKind::Classic, 4_096);
    let (mut m, t) = sim::build_machine(&cfg).unwrap();
    let s = Stream::new(w, &mut m, t, seed, None).unwrap();
    let len = s.len;
    let v: Vec<Step> = s.collect();
    assert_eq!(v.len() as u64, len, "the announced length is exact");
    v
}

/// The machine and stream of `w` paired with a kernel of `policy`.
fn kernel<P: Policy>(w: &WorkloadSpec, memcg_max: u64, mk: impl Fn(&Machine) -> P) -> (Kernel<P>, MemcgId, Stream) {
    let cfg = config(w.clone(), PolicyKind::Classic, memcg_max);
    let (mut m, t) = sim::build_machine(&cfg).unwrap();
    let s = Stream::new(w, &mut m, t, 7, None).unwrap();
    let p = mk(&m);
    (Kernel::new(m, p), t, s)
}

#[test]
fn deterministic() {
    for w in [build(), oltp(), apps()] {
        let a = steps(&w, 3);
        assert_eq!(a, steps(&w, 3), "{}", w.describe());
        assert_ne!(a, steps(&w, 4), "{}: the seed matters", w.describe());
        assert!(
            a.iter()
                .filter(|s| !matches!(
                    s.op,
                    Op::Read { .. } | Op::Write { .. } | Op::Load { .. } | Op::Store { .. }
                ))
                .all(|s| !s.measure),
            "exit and think are not measured"
        );
    }
}

fn build_exits_free_memory<P: Policy>(mk: impl Fn(&Machine) -> P) {
    let w = build();
    let (mut k, t, s) = kernel(&w, 4_096, mk);
    let (mut exits, mut writes) = (0, 0);
    let mut tasks = std::collections::BTreeSet::new();
    let mut make = None;
    for step in s {
        match step.op {
            Op::Fork { task, child } => {
                assert_eq!(*make.get_or_insert(task), task, "make forks every compiler");
                assert!(k.m.mms[child as usize].unborn);
                k.step(step.op).unwrap();
                assert!(k.m.mms[child as usize].alive && k.m.mms[child as usize].vmas.is_empty());
            }
            Op::Munmap { task, pages, .. } => {
                let before = k.m.memcgs[t].usage;
                assert_eq!(k.m.mms[task as usize].rss_anon, 128, "the arena is resident");
                k.step(step.op).unwrap();
                assert_eq!(pages, 64);
                assert_eq!(before - k.m.memcgs[t].usage, 64, "munmap frees the upper half");
                assert_eq!(k.m.mms[task as usize].rss_anon, 64);
            }
            Op::Exit { task } => {
                let before = k.m.memcgs[t].usage;
                let rss = k.m.mms[task as usize].rss_anon;
                assert_eq!(rss, 64, "the lower half of the arena is resident before exit");
                k.step(step.op).unwrap();
                let after = k.m.memcgs[t].usage;
                assert_eq!(before - after, rss, "exit frees the anon memory");
                assert!(!k.m.mms[task as usize].alive);
                exits += 1;
            }
            Op::Write { task, .. } => {
                tasks.insert(task);
                writes += 1;
                k.step(step.op).unwrap();
            }
            op => {
                k.step(op).unwrap();
            }
        }
    }
    k.check().unwrap();
    assert_eq!(exits, 6);
    assert_eq!(writes, 6 * 8);
    assert_eq!(tasks.len(), 6, "each process runs in its own address space");
    // every object file page was written: dirty or written back
    let objs: Vec<usize> = (0..k.m.files.len())
        .filter(|&f| k.m.files[f].name.starts_with("build/obj."))
        .collect();
    assert_eq!(objs.len(), 6);
    let dirtied = k.m.vmstat().get(Stat::NrDirty) + k.m.vmstat().get(Stat::Pgpgout) / 4;
    assert!(dirtied >= 48, "{dirtied}");
    // what is left charged is page cache only
    assert!(k.m.memcgs[t].usage <= 64 + 6 * 16 + 6 * 8, "{}", k.m.memcgs[t].usage);
}

#[test]
fn build_exits_free_memory_classic() {
    build_exits_free_memory(Classic::new);
}

#[test]
fn build_exits_free_memory_mglru() {
    build_exits_free_memory(|m| Mglru::new(m, MglruConfig::default()));
}

#[test]
fn build_jobs_share_headers_and_have_disjoint_processes() {
    let w = build();
    let cfg = config(w.clone(), PolicyKind::Classic, 4_096);
    let (mut m, t) = sim::build_machine(&cfg).unwrap();
    let a: Vec<Step> = Stream::new(&w, &mut m, t, 1, None).unwrap().collect();
    let b: Vec<Step> = Stream::new(&w, &mut m, t, 2, None).unwrap().collect();
    let tasks = |v: &[Step]| -> std::collections::BTreeSet<u32> { v.iter().map(|s| s.op.task()).collect() };
    assert!(tasks(&a).is_disjoint(&tasks(&b)));
    let headers = m.files.iter().filter(|f| f.name == "build/include").count();
    assert_eq!(headers, 1, "one header file for all jobs");
}

#[test]
fn oltp_wal_is_sequential_and_pool_is_skewed() {
    let v = steps(&oltp(), 5);
    let wal: Vec<u64> = v
        .iter()
        .filter_map(|s| match s.op {
            Op::Write { index, .. } => Some(index),
            _ => None,
        })
        .collect();
    assert_eq!(wal.len(), 2_000);
    for (i, &w) in wal.iter().enumerate() {
        assert_eq!(w, i as u64 % 64, "the WAL is appended circularly");
    }
    assert_eq!(v.iter().filter(|s| matches!(s.op, Op::Think { .. })).count(), 2_000);
    let mut counts = vec![0u64; 1_024];
    for s in v.iter().filter(|s| s.measure) {
        if let Op::Load { .. } | Op::Store { .. } = s.op {
            counts[s.key as usize] += 1;
        }
    }
    let total: u64 = counts.iter().sum();
    assert_eq!(total, 2_000 * OLTP_PAGES_PER_TXN);
    let hottest = *counts.iter().max().unwrap();
    // uniform would be 1/1024 of accesses; Zipf within a warehouse of 256 pages gives its first
    // page a large share of the warehouse's quarter
    assert!(
        hottest as f64 / total as f64 > 0.02,
        "hottest share {}",
        hottest as f64 / total as f64
    );
    // each warehouse gets about a quarter
    for wh in 0..4 {
        let n: u64 = counts[wh * 256..(wh + 1) * 256].iter().sum();
        assert!((n as f64 / total as f64 - 0.25).abs() < 0.05, "warehouse {wh}: {n}");
    }
}

fn apps_refault_after_switching_back<P: Policy>(mk: impl Fn(&Machine) -> P) {
    // 4 apps x 512 pages in a memcg of 1,024 pages: the apps in the background lose their pages
    let w = apps();
    let (mut k, _t, s) = kernel(&w, 1_024, mk);
    let refaults = |k: &Kernel<P>| k.m.vmstat().get(Stat::WorkingsetRefaultAnon);
    let populate = 4 * 512;
    let second_round = populate + 4 * 3_000;
    let mut at_second_round = 0;
    for (i, step) in s.enumerate() {
        if i == second_round {
            at_second_round = refaults(&k);
        }
        k.step(step.op).unwrap();
    }
    k.check().unwrap();
    let end = refaults(&k);
    assert!(
        end > at_second_round + 100,
        "switching back to apps whose pages were reclaimed refaults: {at_second_round} -> {end}"
    );
}

#[test]
fn apps_refault_after_switching_back_classic() {
    apps_refault_after_switching_back(Classic::new);
}

#[test]
fn apps_refault_after_switching_back_mglru() {
    apps_refault_after_switching_back(|m| Mglru::new(m, MglruConfig::default()));
}

#[test]
fn runs_under_sim_with_and_without_the_engine() {
    for (w, max) in [(build(), 512), (oltp(), 768), (apps(), 1_024)] {
        for policy in [PolicyKind::Classic, PolicyKind::Mglru] {
            let name = format!("{} {policy:?}", w.describe());
            let cfg = config(w.clone(), policy, max);
            let r = sim::run(&cfg, None, &mut |_, _| {}).unwrap();
            assert!(r.error.is_none(), "{name}: {:?}", r.error);
            assert!(r.accesses > 0, "{name}");

            let mut cfg = config(w.clone(), policy, max);
            cfg.engine = Some(EngineConfig::default());
            cfg.jobs = 2;
            let r = sim::run(&cfg, None, &mut |_, _| {}).unwrap();
            assert!(r.error.is_none(), "{name} (engine): {:?}", r.error);
            let e = r.engine.unwrap();
            assert_eq!(e.tasks, 2);
            assert!(e.ops > 0 && e.elapsed_ns > 0, "{name}");
        }
    }
}

#[test]
fn think_is_a_delay_without_cpu() {
    // OLTP transactions think 20 µs each: one task's elapsed time includes every think time.
    let w = WorkloadSpec::Oltp {
        buffer_pool_pages: 256,
        warehouses: 2,
        wal_pages: 16,
        transactions: 100,
    };
    let mut cfg = config(w, PolicyKind::Classic, 4_096);
    cfg.engine = Some(EngineConfig::default());
    let e = sim::run(&cfg, None, &mut |_, _| {}).unwrap().engine.unwrap();
    assert_eq!(e.ops, 100 * (OLTP_PAGES_PER_TXN + 1), "think steps are not measured");
    assert!(
        e.elapsed_ns >= 99 * lrugen::workload::OLTP_THINK_NS,
        "elapsed {} ns",
        e.elapsed_ns
    );
}

/// Sort and shuffle: the input is read once in order, the shuffle file is written then read back
/// in order, and the heap is accessed at random in between; under both kernel policies with the
/// invariant checker.
#[test]
fn sort_shuffle_phases_in_order() {
    use lrugen::mm::{Machine, MachineConfig};
    use lrugen::workload::{Op, Stream, WorkloadSpec};
    let spec = WorkloadSpec::Sort {
        heap_pages: 64,
        input_pages: 32,
        shuffle_pages: 16,
        sort_accesses: 100,
    };
    let mut m = Machine::new(MachineConfig::simple(4_096, 0));
    let s = Stream::new(&spec, &mut m, 0, 1, None).unwrap();
    let steps: Vec<_> = s.collect();
    assert_eq!(steps.len(), 64 + 32 + 100 + 2 * 16);
    assert!(steps[..64]
        .iter()
        .all(|x| !x.measure && matches!(x.op, Op::Store { .. })));
    let reads: Vec<u64> = steps[64..96]
        .iter()
        .map(|x| match x.op {
            Op::Read { index, .. } => index,
            _ => u64::MAX,
        })
        .collect();
    assert_eq!(reads, (0..32).collect::<Vec<_>>(), "input read once, in order");
    assert!(steps[96..196]
        .iter()
        .all(|x| matches!(x.op, Op::Load { .. } | Op::Store { .. })));
    let writes: Vec<u64> = steps[196..212]
        .iter()
        .map(|x| match x.op {
            Op::Write { index, .. } => index,
            _ => u64::MAX,
        })
        .collect();
    assert_eq!(writes, (0..16).collect::<Vec<_>>());
    let back: Vec<u64> = steps[212..]
        .iter()
        .map(|x| match x.op {
            Op::Read { index, .. } => index,
            _ => u64::MAX,
        })
        .collect();
    assert_eq!(back, (0..16).collect::<Vec<_>>(), "shuffle read back in order");
    for policy in [lrugen::sim::PolicyKind::Classic, lrugen::sim::PolicyKind::Mglru] {
        let spec = WorkloadSpec::Sort {
            heap_pages: 2_048,
            input_pages: 2_048,
            shuffle_pages: 1_024,
            sort_accesses: 4_000,
        };
        let mut cfg = lrugen::sim::RunConfig::new(
            MachineConfig::simple(16_384, 8_192),
            lrugen::sim::MemcgConfig {
                max: Some(2_400),
                ..Default::default()
            },
            spec,
            policy,
        );
        cfg.check = true;
        let r = lrugen::sim::run(&cfg, None, &mut |_, _| {}).unwrap();
        // the streams overflow the memcg: reclaim runs (which type it takes is the policy's call)
        assert!(r.pgscan() > 0, "{policy:?}: reclaim");
        assert_eq!(r.accesses, 2_048 + 4_000 + 2 * 1_024);
    }
}

/// A buffered write of a whole uncached page does not read it (`generic_perform_write`): no
/// `pgpgin`, a minor event; the page is dirty and, having been accessed once, referenced.
#[test]
fn full_page_write_of_an_uncached_page_does_no_read() {
    use lrugen::kernel::{Access, Kernel};
    use lrugen::mm::folio::pg;
    use lrugen::mm::pagecache::{Advice, Slot};
    use lrugen::mm::vmstat::Stat;
    use lrugen::mm::{Machine, MachineConfig};
    use lrugen::reclaim::classic::Classic;
    let mut m = Machine::new(MachineConfig::simple(4_096, 0));
    let task = m.create_mm(0);
    let f = m.create_file("out", 16, Advice::Normal);
    let p = Classic::new(&m);
    let mut k = Kernel::new(m, p);
    assert_eq!(k.write_page(task, f, 3), Ok(Access::Minor));
    assert_eq!(k.m.vmstat().get(Stat::Pgpgin), 0, "no read I/O");
    let Slot::Folio(id) = k.m.files[f as usize].slot(3) else {
        panic!("page cached")
    };
    assert!(k.m.folios[id].test(pg::DIRTY) && k.m.folios[id].test(pg::REFERENCED));
    assert_eq!(k.m.lruvec_state(0, 0, Stat::NrDirty), 1);
    assert_eq!(k.write_page(task, f, 3), Ok(Access::Hit));
    // a read of an uncached page does read
    assert_eq!(k.read_page(task, f, 9), Ok(Access::Major));
    assert!(k.m.vmstat().get(Stat::Pgpgin) > 0);
    k.check().unwrap();
}

/// The build stream's system calls (fork, mmap, munmap) name no page: the reference replays skip
/// them and measure exactly the accesses the kernel runs measure; under the engine, each job's
/// make forks its compilers and every one of them exits.
#[test]
fn build_syscalls_are_unmeasured_and_skipped_by_reference_replays() {
    let w = build();
    let v = steps(&w, 3);
    let measured = v.iter().filter(|s| s.measure).count() as u64;
    let forks = v.iter().filter(|s| matches!(s.op, Op::Fork { .. })).count();
    assert_eq!(forks, 6);
    assert!(v
        .iter()
        .filter(|s| matches!(s.op, Op::Fork { .. } | Op::Mmap { .. } | Op::Munmap { .. }))
        .all(|s| !s.measure && s.key == lrugen::workload::NO_KEY));
    for policy in [PolicyKind::Lru, PolicyKind::Opt, PolicyKind::Classic] {
        let r = sim::run(&config(w.clone(), policy, 512), None, &mut |_, _| {}).unwrap();
        assert_eq!(r.accesses, measured, "{policy:?}");
    }
    let mut cfg = config(w, PolicyKind::Mglru, 512);
    cfg.engine = Some(EngineConfig::default());
    cfg.jobs = 3;
    let r = sim::run(&cfg, None, &mut |_, _| {}).unwrap();
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.engine.unwrap().ops, 3 * measured);
}

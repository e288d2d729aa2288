// SPDX-License-Identifier: GPL-2.0-only
//! The model against real kernels running several tasks at once (issue 11, item 3): every
//! experiment of `tests/fixtures/multitask/` (fio buffered random reads with 4 jobs, YCSB-B with 4
//! clients sharing one table, issue 13's two sibling memcgs under a common limit: file Zipf
//! in one, an anon loop in the other, and a kernel build of 2 jobs, each forking 12 compilers
//! that mmap, fill, munmap and exit (the replayer's process ops, op files version 7); each task a
//! process of its own in the guest, on `-smp 2`, the
//! experiments' `[engine] cpus`) run by `lrugen kernel --exp FILE --fixture` on Debian 6.12 with
//! MGLRU and with the classic LRU, each booted three times (`…-bootN.json`;
//! `scripts/regen-kernel-multitask.sh`; the tasks in lockstep, `--lockstep 1`, one access each per
//! round: free running, qemu's round-robin vCPUs decide the order, e.g. the siblings'
//! never-blocking loop ran far ahead of the file task, which waits for its reads). The model replays the same op file once
//! (`model::run_tasks`: the tasks interleaved one op each in turn, or by the lockstep's rounds,
//! each process with its own
//! replayer pages) and is checked against every boot: total misses, each task's misses, minor
//! faults, `workingset_refault_*`, `pgscan` and `pgscan` by reclaimer. The tolerance of a check is
//! the kernel's own run-to-run spread of that counter over the boots (largest − smallest, over the
//! smallest) plus 2 percentage points (`fidelity::SPREAD_MARGIN`), and at least 50 events for all
//! but total misses (`fidelity::COUNTER_FLOOR`); a counter whose spread is above
//! `fidelity::MAX_SPREAD` (25 %) must lie within the boots' range (± the floor). Measured spreads of total misses when these
//! fixtures were made (three boots): see the README, "Fidelity". A check out of tolerance fails
//! unless listed in [`GAPS`] with its reason; a listed gap that closes fails too. No qemu here.

use lrugen_kernel::fidelity::{self, MultiCompared};
use std::sync::OnceLock;

/// The experiments (`tests/fixtures/multitask/NAME.toml`).
const EXPERIMENTS: &[&str] = &["fio-4jobs", "ycsb-4clients", "siblings", "build-2jobs"];
const SERIES: &[&str] = &["6.12"];
const LRUS: &[&str] = &["mglru", "classic"];

const MGLRU_YCSB_PAGEIN: &str = "6.12 MGLRU YCSB-B (5 % whole-record updates, so dirty pages under \
    reclaim), in lockstep: the kernel reads 2,500-3,900 more pages from the disk than the replayer \
    counts misses (pgpgin 38,084-39,493 pages against 35,594-35,603 misses; classic: 35,659-36,533 \
    against 35,124-35,201), and those extra reads are refaults (workingset_refault_file \
    28,756-30,141 against the model's 27,251) evicted again (pgscan_file 37,760-39,296, pgsteal_file \
    36,420-37,823 against 34,112 and 33,629); the model reads exactly its misses. Pages read that no \
    pread of the replayer missed: not yet explained. Not swap (pswpin 0). The excess of file \
    refaults (about 1,500-2,900) is of the order of the run's 3,000 updates, so the filesystem's \
    own pages that each write needs (ext4 metadata and journal blocks, page cache of the block \
    device, which the model does not have) evicted by MGLRU and read again is one candidate, a \
    pread racing reclaim on the other vCPU between mincore and the read another; MGLRU also \
    tags 1,286-1,519 dirty folios for immediate reclaim and rotates 767-1,036. A boot traced with \
    `lrugen kernel --ftrace filemap/mm_filemap_add_to_page_cache --ftrace \
    filemap/mm_filemap_delete_from_page_cache` (2026-12-06, not a fixture) rules out the metadata: \
    every page added to /t's page cache is the data file's, by the replayer's tasks (37,905 adds: \
    35,556 misses, 1,600 writes of uncached pages, about 750 more), and the filesystem's own pages \
    are the journal's 90, added by jbd2 in the root memcg. Traced, the excess fell to about 750 \
    (pgpgin 36,309 pages against 35,556 misses) and the model's file refaults were within 1 % \
    (27,251 against 27,008): the extra reads depend on the vCPUs' timing, which fits the race of \
    a pread with reclaim on the other vCPU better (only 22 adds came within 1 ms of their page's \
    deletion in that boot, so it cannot be told there)";

const CLASSIC_YCSB_SCAN: &str = "6.12 classic YCSB-B, in lockstep: the kernel scans 3-7 % more file \
    folios than the model (34,882-36,053 against 33,764) for the same misses (-0.3 %); it tags \
    739-1,011 dirty folios for immediate reclaim (model 500) and rotates 669-807 of them once \
    written (pgrotated; model 0), and deactivates fewer (pgdeactivate 12,560-13,577 against 15,106): \
    the writeback of the updated pages";

const SIBLINGS_MGLRU: &str = "6.12 MGLRU, two sibling memcgs under /t (24 MiB), the tasks in lockstep \
    (one access each per round, as the model interleaves them): the file task's misses and refaults \
    match (15,368 against 15,334-15,368; 8,283 against 8,249-8,283), and the limit's reclaim of /t/a's \
    file pages too (pgscan 13,824 against 13,824-13,888); the loop's /t/b is where they part: the \
    kernel scans 18,216-22,456 of b's anon folios and evicts 986-5,467 of them (every one refaulted: \
    task 1 misses 981-5,464, a spread the kernel cannot repeat), the model scans 40,388 in all and \
    evicts 10,869, more than any boot; before the forked tasks' kernel stacks and slab were charged \
    (KmemConfig::task_stack_pages, task_slab_bytes: 6 pages less for the workload) it evicted 655, \
    fewer than any. Which of the walk's young bits, look-around and the tier protection of the \
    loop's refaults makes the difference is not known yet. The loop's count is as fragile in the \
    model as in the kernel: flipping any one of a dozen switches of the 6.12 preset (activate_clears_refs, \
    fault_mark_accessed, aging_feedback_rework, scan_batch_bounded, ...) moves it anywhere from 512 \
    to 16,558 while the file task's misses stay within 1.6 %; on one vCPU (tried: --cpus 1) the \
    kernel's loop refaults are 4,422-8,063";
const BUILD_MGLRU: &str = "6.12 MGLRU kernel build (2 jobs forking 12 compilers each, op files \
    version 7): the model misses 2.6 % less than the kernel (1,036 against 1,062-1,065; the boots \
    agree to 0.3 %), refaults 7.8 % fewer file pages and scans 5.7 % less, while classic is within \
    0.6 %. The kernel holds more kernel memory than the model charges for forked processes: at the \
    end of the replay its slab_unreclaimable is 99-101 KB for the parent and its two tasks, where \
    the model's per-process charges make 49 KB (the 24 exited compilers leave about 2 KB each, \
    from their processes or from the replayer's pipe per fork; not modelled), while the model \
    charges more for the 49 files' inodes (6 KB each, calibrated on the one- and two-file shapes; \
    the build's slab_reclaimable says about 2 KB each)";

const BUILD_CLASSIC_SCAN: &str = "6.12 classic kernel build: the kernel's scans are not repeatable \
    (pgscan 1,249-1,686 over three boots whose misses agree to 0.9 %); the model scans 1,125, \
    below all three, for misses within 0.6 %: it deactivates and rotates the compilers' pages \
    differently, not known yet how";

/// Known differences between the model and the kernel: (fixture name without `-bootN`, check,
/// why).
const GAPS: &[(&str, &str, &str)] = &[
    (
        "debian-6.12-mglru-ycsb-4clients",
        "workingset_refault_file",
        MGLRU_YCSB_PAGEIN,
    ),
    ("debian-6.12-mglru-ycsb-4clients", "pgscan", MGLRU_YCSB_PAGEIN),
    ("debian-6.12-classic-ycsb-4clients", "pgscan", CLASSIC_YCSB_SCAN),
    ("debian-6.12-mglru-siblings", "misses", SIBLINGS_MGLRU),
    ("debian-6.12-mglru-siblings", "task 1 misses", SIBLINGS_MGLRU),
    ("debian-6.12-mglru-siblings", "workingset_refault_anon", SIBLINGS_MGLRU),
    ("debian-6.12-mglru-siblings", "pgscan", SIBLINGS_MGLRU),
    ("debian-6.12-mglru-siblings", "pswpout", SIBLINGS_MGLRU),
    ("debian-6.12-mglru-build-2jobs", "misses", BUILD_MGLRU),
    ("debian-6.12-classic-build-2jobs", "pgscan", BUILD_CLASSIC_SCAN),
];

fn all() -> &'static Vec<MultiCompared> {
    static ALL: OnceLock<Vec<MultiCompared>> = OnceLock::new();
    ALL.get_or_init(|| {
        fidelity::multitask_groups(&fidelity::multitask_dir())
            .unwrap()
            .iter()
            .map(|(n, boots)| fidelity::compare_boots(n, boots).unwrap_or_else(|e| panic!("{n}: {e}")))
            .collect()
    })
}

#[test]
fn every_experiment_has_boots_per_kernel_and_lru() {
    let groups = fidelity::multitask_groups(&fidelity::multitask_dir()).unwrap();
    let mut missing = Vec::new();
    for s in SERIES {
        for l in LRUS {
            for e in EXPERIMENTS {
                let n = format!("debian-{s}-{l}-{e}");
                match groups.iter().find(|g| g.0 == n) {
                    Some((_, boots)) if boots.len() >= 2 => {}
                    Some((_, boots)) => missing.push(format!("{n} (only {} boot)", boots.len())),
                    None => missing.push(n),
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "missing fixtures (scripts/regen-kernel-multitask.sh): {missing:?}"
    );
    for c in all() {
        assert!(
            c.release.starts_with(&format!("{}.", c.series)),
            "{}: {}",
            c.name,
            c.release
        );
        let tasks = if c.name.ends_with("-siblings") || c.name.ends_with("-build-2jobs") {
            2
        } else {
            4
        };
        assert_eq!((c.tasks, c.cpus), (tasks, 2), "{}: {tasks} tasks on 2 vCPUs", c.name);
    }
}

#[test]
fn the_kernels_spread_is_small_enough_to_check_against() {
    let mut bad = Vec::new();
    for c in all() {
        // the siblings' loop (task 1) is not repeatable on the kernel: its refaults over three
        // boots in lockstep are 981-5,464 (MGLRU) and 0-599 (classic), so that its misses, the
        // anon refaults, pswpout and the total are judged by the boots' range; the file task's
        // (task 0) are what the spread must hold for
        let misses = if c.name.ends_with("-siblings") {
            "task 0 misses"
        } else {
            "misses"
        };
        for what in [misses, "workingset_refault_file", "pgscan"] {
            let k = c.check(what).expect("checked");
            // the classic build's scans are not repeatable (1,249-1,686 over three boots, for
            // misses within 0.9 %): judged by their range
            if what == "pgscan" && c.name.ends_with("classic-build-2jobs") {
                continue;
            }
            if k.spread > fidelity::MAX_SPREAD {
                bad.push(format!("{} {what}: boots {:?}", c.name, k.kernel));
            }
        }
        // and the misses, at most 3 %: the tasks' interleaving moves them, not by much (5 % for
        // the classic siblings' file task: 14,283-14,826)
        let m = c.check(misses).expect("checked");
        let max = if c.name.ends_with("classic-siblings") {
            0.05
        } else {
            0.03
        };
        assert!(m.spread <= max, "{}: {misses} over the boots {:?}", c.name, m.kernel);
    }
    assert!(bad.is_empty(), "boots too far apart:\n{}", bad.join("\n"));
}

#[test]
fn the_model_is_within_the_kernels_spread_of_every_experiment() {
    println!("{}", fidelity::multitask_markdown(all()));
    let mut bad = Vec::new();
    let mut closed = Vec::new();
    for c in all() {
        for k in &c.checks {
            let listed = GAPS.iter().any(|(n, w, _)| *n == c.name && *w == k.what);
            match (k.ok, listed) {
                (false, false) => bad.push(format!(
                    "{} {}: model {} kernel {:?} ({:+.1} % of their mean; tolerance ±{:.1} % or {})",
                    c.name,
                    k.what,
                    k.model,
                    k.kernel,
                    k.diff_pct(),
                    k.tolerance * 100.0,
                    k.floor
                )),
                (true, true) => closed.push(format!("{} {}", c.name, k.what)),
                _ => {}
            }
        }
    }
    for (n, w, _) in GAPS {
        assert!(
            all().iter().any(|c| c.name == *n && c.check(w).is_some()),
            "GAPS names {n} {w}, which no fixture checks"
        );
    }
    assert!(bad.is_empty(), "out of tolerance:\n{}", bad.join("\n"));
    assert!(
        closed.is_empty(),
        "listed as gaps but now within tolerance (remove them from GAPS and the README):\n{}",
        closed.join("\n")
    );
}

/// The op files of the experiments: one task per fio job, each on its own file; one per YCSB
/// client, all on the one table, with a `q` mark per operation.
#[test]
fn experiments_become_one_task_per_job_or_client() {
    let dir = fidelity::multitask_dir();
    let ops = |name: &str| {
        let text = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
        let cfg = lrugen_kernel::fixture_experiment(&text).unwrap();
        assert_eq!(lrugen_kernel::ops::experiment_cpus(&cfg), 2);
        lrugen_kernel::ops::experiment_ops(&cfg, 1000).unwrap()
    };
    use lrugen_kernel::ops::ReplayOp;
    let fio = ops("fio-4jobs");
    assert_eq!((fio.nr_tasks(), fio.files.len()), (4, 4));
    for t in 0..4 {
        let (anon, tops) = fio.task(t);
        assert_eq!((anon, tops.len()), (0, 25_000));
        let file = match tops[0] {
            ReplayOp::Read { file, .. } => file,
            o => panic!("{o:?}"),
        };
        assert!(tops
            .iter()
            .all(|o| matches!(o, ReplayOp::Read { file: f, .. } if *f == file)));
    }
    let ycsb = ops("ycsb-4clients");
    assert_eq!((ycsb.nr_tasks(), ycsb.files.len()), (4, 1));
    let marks: usize = (0..4)
        .map(|t| ycsb.task(t).1.iter().filter(|o| **o == ReplayOp::RequestEnd).count())
        .sum();
    assert_eq!(marks, 60_000, "a q after each YCSB operation");
    assert!(ycsb.all_ops().any(|o| matches!(o, ReplayOp::Write { .. })));
    // and it reads back as written
    assert_eq!(lrugen_kernel::ops::OpFile::parse(&ycsb.to_text()).unwrap(), ycsb);
    assert!(fio.memcgs.is_empty() && ycsb.memcgs.is_empty(), "every task in /t");
    // the siblings: a task per part, each in its own child of /t (version 4)
    let sib = ops("siblings");
    assert_eq!(
        (sib.nr_tasks(), sib.memcgs.clone()),
        (2, vec!["a".to_string(), "b".to_string()])
    );
    assert_eq!(sib.version(), 4);
    assert_eq!(
        (sib.task(0).0, sib.task(1).0),
        (0, 4096),
        "the file task has no anon region"
    );
    assert_eq!(lrugen_kernel::ops::OpFile::parse(&sib.to_text()).unwrap(), sib);
}

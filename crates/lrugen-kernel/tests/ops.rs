// SPDX-License-Identifier: GPL-2.0-only
//! Workload streams converted into op files (`lrugen_kernel::ops`): an experiment's stream as the
//! replayer will run it, what cannot be replayed, and the layout of files, file mappings and anon
//! regions of several tasks.

use lrugen::experiment::spec::Experiment;
use lrugen::mm::memcg::ROOT_MEMCG;
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vm::vmf;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::workload::{Op, Step};
use lrugen_kernel::ops::{self, OpFile, ReplayFile, ReplayOp};
use std::path::Path;

fn ops_of(text: &str) -> Result<OpFile, lrugen_kernel::Error> {
    let e = Experiment::parse(text, Path::new("tiny.toml")).unwrap();
    let cell = e.cells().into_iter().next().unwrap();
    ops::experiment_ops(&e.run_config(&cell, None), 3)
}

const SORT: &str = r#"
name = "tiny-sort"
seed = 5
policies = ["mglru"]
[memcg]
max = "1M"
[workload]
kind = "sort"
heap_pages = 4
input_pages = 3
shuffle_pages = 2
sort_accesses = 4
"#;

/// The sort workload (workloads.md §6) as an op file: the heap populated by stores before the
/// measurement, then the input file read once in order, random heap loads and stores (the keys
/// drawn with the experiment's seed), the shuffle file written whole (the new `p` op) and read back.
#[test]
fn a_tiny_sort_experiment_converts_to_the_golden_op_file() {
    let o = ops_of(SORT).unwrap();
    let golden = "lrugen-ops 1\nwindow 3\nfile 0 f0 3\nfile 1 f1 2\nanon 4\n\
                  s 0\ns 1\ns 2\ns 3\nw 0\n\
                  r 0 0\nr 0 1\nr 0 2\n\
                  l 2\ns 3\nl 2\ns 3\n\
                  p 1 0\np 1 1\n\
                  r 1 0\nr 1 1\n";
    assert_eq!(o.to_text(), golden);
    assert_eq!(OpFile::parse(golden).unwrap(), o);
    // The same seed gives the same stream; another seed other heap keys.
    assert_eq!(ops_of(SORT).unwrap(), o);
    let other = ops_of(&SORT.replace("seed = 5", "seed = 6")).unwrap();
    assert_eq!(other.ops.len(), o.ops.len());
    assert!(o.writes(1) && !o.writes(0));
}

/// The build workload (workloads.md §5) as an op file of version 7: make (the task) forks each
/// compiler, which maps its heap as region 1, reads its source and the shared headers, fills and
/// reads its heap, unmaps the upper half, writes its object and exits; the next compiler is
/// forked from make as it is then (no region 1).
#[test]
fn a_tiny_build_converts_to_fork_and_exit_blocks() {
    let build = r#"
policies = ["mglru"]
seed = 3
[memcg]
max = "1M"
[workload]
kind = "build"
processes_per_job = 2
header_pages = 2
source_pages_per_process = 1
anon_pages_per_process = 2
object_pages_per_process = 1
"#;
    let o = ops_of(build).unwrap();
    let text = o.to_text();
    let compiler = |src: u32, obj: u32, h: [u32; 2]| {
        format!(
            "fork\nmmap 1 2\nr {src} 0\nr 0 {}\nr 0 {}\ns 1 0\ns 1 1\nl 1 0\nl 1 1\nmunmap 1 1 1\np {obj} 0\nexit\n",
            h[0], h[1]
        )
    };
    // the header reads are Zipf draws of the seed; everything else is fixed
    let h: Vec<u32> = o
        .ops
        .iter()
        .filter_map(|op| match op {
            ReplayOp::Read { file: 0, index } => Some(*index as u32),
            _ => None,
        })
        .collect();
    assert_eq!(h.len(), 4, "{text}");
    let golden = format!(
        "lrugen-ops 7\nwindow 3\nfile 0 f0 2\nfile 1 f1 1\nfile 2 f2 1\nfile 3 f3 1\nfile 4 f4 1\ntask 0\n{}{}",
        compiler(1, 2, [h[0], h[1]]),
        compiler(3, 4, [h[2], h[3]])
    );
    assert_eq!(text, golden);
    assert_eq!(OpFile::parse(&golden).unwrap(), o);
    let jobs = format!("{SORT}[engine]\njobs = 2\n");
    // several jobs are several tasks now (lrugen-ops 2), each with its own files and region
    let o = ops_of(&jobs).unwrap();
    assert_eq!((o.nr_tasks(), o.files.len(), o.task(1).0), (2, 4, 4));
}

fn step(op: Op, measure: bool) -> Step {
    Step::new(op, 0, measure)
}

/// Two tasks' anon VMAs go one after another into the one region, in order of first use; a load
/// through a file mapping becomes an `m` op at the mapped file page (the VMA's pgoff counts); a
/// store to a file mapping, an access outside any VMA, and warm-up after measured steps are
/// refused naming the step.
#[test]
fn tasks_vmas_and_file_mappings_are_laid_out_for_one_process() {
    let mut m = Machine::new(MachineConfig::simple(4096, 0));
    let (a, b) = (m.create_mm(ROOT_MEMCG), m.create_mm(ROOT_MEMCG));
    let f = m.create_file("data", 10, Advice::Normal);
    let unused = m.create_file("unused", 5, Advice::Normal);
    let va = m.mmap(a, 3, vmf::WRITE, None);
    let vb = m.mmap(b, 5, vmf::WRITE, None);
    let fm = m.mmap(a, 4, 0, Some((f, 6))); // pages 6..10 of the file
    let steps = vec![
        step(Op::Store { task: b, vpn: vb + 4 }, false),
        step(Op::Store { task: a, vpn: va }, false),
        step(Op::Think { task: a, ns: 5 }, false),
        step(Op::Load { task: a, vpn: fm + 3 }, true),
        step(Op::Load { task: a, vpn: va + 2 }, true),
        step(Op::Think { task: a, ns: 5 }, false),
        step(
            Op::Read {
                task: b,
                file: f,
                index: 1,
            },
            true,
        ),
        step(
            Op::Write {
                task: b,
                file: f,
                index: 2,
            },
            true,
        ),
    ];
    let o = ops::from_stream(&m, steps.clone(), 10).unwrap();
    assert_eq!(
        o.files,
        [ReplayFile {
            id: f,
            path: format!("f{f}"),
            pages: 10,
            advice: lrugen_replay::FileAdvice::Random,
        }]
    );
    assert_ne!(f, unused);
    assert_eq!(o.anon_pages, 5 + 3);
    assert_eq!(
        o.ops,
        [
            ReplayOp::Store { vpn: 4 },
            ReplayOp::Store { vpn: 5 },
            // think time is kept, as a sleep
            ReplayOp::Think { ns: 5 },
            ReplayOp::MeasureStart,
            ReplayOp::MmapLoad { file: f, index: 9 },
            ReplayOp::Load { vpn: 7 },
            ReplayOp::Think { ns: 5 },
            ReplayOp::Read { file: f, index: 1 },
            ReplayOp::Write { file: f, index: 2 },
        ]
    );
    assert_eq!(OpFile::parse(&o.to_text()).unwrap(), o);

    let refuse = |s: Vec<Step>, needle: &str| {
        let e = ops::from_stream(&m, s, 10).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    };
    refuse(
        vec![step(Op::Store { task: a, vpn: fm }, true)],
        "step 0: a store to a file mapping",
    );
    refuse(vec![step(Op::Load { task: a, vpn: fm + 4 }, true)], "outside its VMAs");
    let mut late = steps.clone();
    late.push(step(Op::Store { task: a, vpn: va }, false));
    refuse(late, "step 8: an unmeasured");
    refuse(
        vec![step(Op::Exit { task: a }, true)],
        "step 0: the exit of the stream's own task 0",
    );
    // a parent's op while its child lives: the replayer's parent waits for its child
    refuse(
        vec![
            step(Op::Fork { task: a, child: b }, false),
            step(Op::Store { task: a, vpn: va }, true),
        ],
        "step 1: an op of task 0 while task 1 runs",
    );
    refuse(
        vec![step(
            Op::Mmap {
                task: a,
                vpn: 1 << 20,
                pages: 2,
                file: f,
                pgoff: 0,
                flags: 0,
                compressed_pct: 0,
            },
            false,
        )],
        "step 0: an mmap of file 0 by task 0",
    );
    refuse(
        vec![step(
            Op::Madvise {
                task: a,
                vpn: fm,
                pages: 1,
                advice: lrugen::workload::Madv::Cold,
            },
            false,
        )],
        "not within one anonymous mapping",
    );
    refuse(vec![step(Op::Load { task: a, vpn: va }, false)], "no measured step");
    // a page unmapped before: refused here, not by the replayer's parser in the guest
    refuse(
        vec![
            step(
                Op::Munmap {
                    task: a,
                    vpn: va + 1,
                    pages: 1,
                },
                false,
            ),
            step(Op::Load { task: a, vpn: va + 1 }, true),
        ],
        "unmapped before, cannot be replayed",
    );
}

/// A stream's process ops: the child's accesses of its parent's VMAs go to region 0 as the
/// parent's do, its own mmap is region 1, a munmap or madvise of either names its region and
/// range, and the exit closes the block.
#[test]
fn a_childs_mappings_become_regions() {
    let mut m = Machine::new(MachineConfig::simple(4096, 0));
    let a = m.create_mm(ROOT_MEMCG);
    let child = m.reserve_mm(ROOT_MEMCG);
    let va = m.mmap(a, 3, vmf::WRITE, None);
    let at = 1 << 20;
    let steps = vec![
        step(Op::Store { task: a, vpn: va + 1 }, true),
        step(Op::Fork { task: a, child }, false),
        step(
            Op::Mmap {
                task: child,
                vpn: at,
                pages: 4,
                file: lrugen::workload::ANON_FILE,
                pgoff: 0,
                flags: vmf::WRITE as u8,
                compressed_pct: 0,
            },
            false,
        ),
        step(
            Op::Store {
                task: child,
                vpn: at + 3,
            },
            true,
        ),
        step(
            Op::Load {
                task: child,
                vpn: va + 2,
            },
            true,
        ),
        step(
            Op::Madvise {
                task: child,
                vpn: va,
                pages: 3,
                advice: lrugen::workload::Madv::PageOut,
            },
            false,
        ),
        step(
            Op::Munmap {
                task: child,
                vpn: at + 2,
                pages: 2,
            },
            false,
        ),
        step(Op::Exit { task: child }, false),
        step(Op::Load { task: a, vpn: va + 1 }, true),
    ];
    let o = ops::from_stream(&m, steps, 0).unwrap();
    assert_eq!(
        o.to_text(),
        "lrugen-ops 7\nwindow 0\ntask 0\nanon 3\ns 1\nfork\nmmap 1 4\ns 1 3\nl 2\nmadvise 0 0 3 pageout\n\
         munmap 1 2 2\nexit\nl 1\n"
    );
}

/// The mixed built-in workload: the region populated first, then file reads and anon accesses in
/// turn, stores in about the requested share, the same for the same seed.
#[test]
fn the_mixed_workload_alternates_file_reads_and_anon_accesses() {
    let d = "zipf:0.9".parse().unwrap();
    let o = ops::file_and_anon(100, 50, 2000, d, 0.25, 7, 100);
    assert_eq!((o.anon_pages, o.ops.len()), (50, 50 + 1 + 2000));
    assert!(o.ops[..50]
        .iter()
        .enumerate()
        .all(|(i, op)| *op == ReplayOp::Store { vpn: i as u64 }));
    assert_eq!(o.ops[50], ReplayOp::MeasureStart);
    let measured = &o.ops[51..];
    for (i, op) in measured.iter().enumerate() {
        let file = matches!(op, ReplayOp::Read { file: 0, .. });
        assert_eq!(file, i % 2 == 0, "op {i}: {op:?}");
    }
    let stores = measured
        .iter()
        .filter(|op| matches!(op, ReplayOp::Store { .. }))
        .count();
    assert!((200..300).contains(&stores), "{stores} stores of 1000 anon accesses");
    assert_eq!(ops::file_and_anon(100, 50, 2000, d, 0.25, 7, 100), o);
    assert_eq!(OpFile::parse(&o.to_text()).unwrap(), o);
    let none = ops::file_and_anon(100, 50, 2000, d, 0.0, 7, 100);
    assert!(!none.ops[51..].iter().any(|op| matches!(op, ReplayOp::Store { .. })));
    // mmap loads read the same pages as the buffered reads of the file workload
    let r = lrugen_kernel::file_read_ops(100, 500, d, 3, 50);
    let mm = ops::mmap_reads(100, 500, d, 3, 50);
    for (x, y) in r.ops.iter().zip(&mm.ops) {
        match (x, y) {
            (ReplayOp::Read { index: i, .. }, ReplayOp::MmapLoad { index: j, .. }) => assert_eq!(i, j),
            _ => panic!("{x:?} {y:?}"),
        }
    }
}

/// A typed trace as an op file: lackey loads, stores and modifies as anon loads and stores of
/// the pages in order of first use, an index file's high-bit pages as `pread`s of one file (its
/// anon pages stored to first), and a lackey trace's fetches under mixed refused (the replayer's
/// file mappings are not executable).
#[test]
fn typed_traces_convert_to_anon_and_file_ops() {
    use lrugen::workload::trace_ops::load_trace_ops;
    use lrugen::workload::TraceAccess;
    let dir = std::env::temp_dir().join(format!("lrugen-typed-ops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lackey = dir.join("t.lackey");
    std::fs::write(&lackey, "I  00400000,4\n L 10000010,8\n S 10001000,8\n M 10000020,4\n").unwrap();
    let t = load_trace_ops(&lackey, None, TraceAccess::Anon).unwrap();
    let o = ops::typed_trace_ops(&t, 10).unwrap();
    assert_eq!((o.anon_pages, o.files.len()), (2, 0));
    assert_eq!(
        o.ops,
        [
            ReplayOp::Load { vpn: 0 },
            ReplayOp::Store { vpn: 1 },
            ReplayOp::Load { vpn: 0 },
            ReplayOp::Store { vpn: 0 },
        ]
    );
    let t = load_trace_ops(&lackey, None, TraceAccess::Mixed).unwrap();
    let e = ops::typed_trace_ops(&t, 10).unwrap_err().to_string();
    assert!(e.contains("not") && e.contains("executable"), "{e}");

    let index = dir.join("t.index32");
    let recs: [u32; 4] = [3, 3 | 1 << 31, 3, 9 | 1 << 31];
    std::fs::write(&index, recs.iter().flat_map(|r| r.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let t = load_trace_ops(&index, None, TraceAccess::Mixed).unwrap();
    let o = ops::typed_trace_ops(&t, 10).unwrap();
    assert_eq!((o.anon_pages, o.files[0].pages), (1, 2));
    assert_eq!(
        o.ops,
        [
            ReplayOp::Store { vpn: 0 },
            ReplayOp::Read { file: 0, index: 0 },
            ReplayOp::Load { vpn: 0 },
            ReplayOp::Read { file: 0, index: 1 },
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// SPDX-License-Identifier: GPL-2.0-only
//! The model against real kernels on traces: the small typed traces of
//! `crates/lrugen-cli/tests/data/` (a valgrind lackey trace replayed as anon loads and stores, a
//! flat page-index file as buffered reads, a mixed index file as both) run by the guest with
//! `lrugen kernel --trace FILE --access KIND` on Debian 6.1, 6.12 and 7.2, MGLRU and classic
//! (`examples/kernel-matrix/traces.toml`, `scripts/regen-kernel-traces.sh`). Each fixture keeps
//! the op file the guest replayed, so no trace file is read here. The same tolerances as the
//! shape fixtures (`lrugen_kernel::fidelity`); a check out of tolerance fails unless listed in
//! [`GAPS`] with its reason, and a listed gap that closed fails too. No qemu here.

use lrugen_kernel::fidelity::{self, Compared};
use std::path::Path;
use std::sync::OnceLock;

const TRACES: &[&str] = &["lackey-anon", "index-file", "index-mixed"];
const SERIES: &[&str] = &["6.1", "6.12", "7.2"];
const LRUS: &[&str] = &["mglru", "classic"];

const LACKEY: &str = "lackey-anon: the model misses 1.7-8.9 % more than the kernel on every kernel and \
    LRU, from the first windows that reclaim. In a 512-page memcg a page counts: lowering the model's \
    memory.max by 16 pages adds 10-16 % misses here. The model charges 3-5 pages more kernel memory than \
    the kernel (memory.stat kernel 20 against 15-17), nearly all page tables (13 against 8, 10 and 11 on \
    6.1, 6.12 and 7.2): in the guest the replayer's small regions (heap, op list, map of touched pages) \
    share PTE tables, where the model gives its own pages one mapping of their own and its calibrated \
    per-address-space page tables (`KmemConfig::mm_pgtable_pages` + `mm_pud_pages` + `mm_pgd_pages`, \
    10) come from the shapes' larger regions. Giving the model 4 pages more brings 4 of the 6 within 1 %";
const CLASSIC_FILE: &str = "classic index-file on 6.12 and 7.2: the model gives 5735 misses on both, the \
    kernel 5502 and 5603 (and 5876 on 6.1, where the model's 5931 is within 1 %). One boot each; on \
    6.12 and 7.2 classic's file refaults move by 17 % between boots of the hot-cold shape (the rate-limited \
    statistics flush on a guest clock that -icount does not make reproducible), so these may be inside \
    the kernel's own spread: more boots are needed to say";
const CLASSIC_MIXED: &str = "classic index-mixed on 6.12 and 7.2: misses agree (within 1 %), but the \
    kernel reclaims more anon than the model: 1837 and 1530 swap-outs against 1221, anon refaults 1346 \
    and 1135 against 900, file refaults 1404 and 1612 against 1810 (6.1 agrees on all of them). Not yet \
    looked into; get_scan_count's anon/file balance from the refault costs is the first suspect";
const MGLRU_SEQS: &str = "MGLRU in a 512-page memcg: the model ends one generation ahead of the kernel \
    (two on 6.1 and 7.2 lackey-anon), so it ages more often than the kernel at this size; with it, 7.2's \
    index-mixed refaults lean to file (anon -11 %, file +19 %) and its index-file misses are 1.4 % high. The same direction as the 6.1 mmap-random \
    shape's gap; not traced to a mechanism";
const USAGE: &str = "memory.current after the last access, beyond the floor of one reclaim's saw-tooth \
    (32 pages): the kernel's reading also holds its per-CPU charge stock and the statistics' lag \
    (memory.current exceeds memory.stat's anon + file + kernel by 2-33 pages in these fixtures), which \
    the model does not have, and one reading per boot does not show where in the saw-tooth either side \
    was";

/// Known differences between the model and a kernel on these traces: (fixture, check, why).
const GAPS: &[(&str, &str, &str)] = &[
    ("debian-6.1-classic-lackey-anon", "misses", LACKEY),
    ("debian-6.1-classic-lackey-anon", "memory.current", USAGE),
    ("debian-6.1-mglru-lackey-anon", "misses", LACKEY),
    ("debian-6.1-mglru-lackey-anon", "seqs", MGLRU_SEQS),
    ("debian-6.12-classic-index-file", "misses", CLASSIC_FILE),
    (
        "debian-6.12-classic-index-mixed",
        "workingset_refault_anon",
        CLASSIC_MIXED,
    ),
    (
        "debian-6.12-classic-index-mixed",
        "workingset_refault_file",
        CLASSIC_MIXED,
    ),
    ("debian-6.12-classic-index-mixed", "pswpout", CLASSIC_MIXED),
    ("debian-6.12-classic-index-mixed", "memory.current", USAGE),
    ("debian-6.12-classic-lackey-anon", "misses", LACKEY),
    ("debian-6.12-mglru-index-file", "memory.current", USAGE),
    ("debian-6.12-mglru-index-mixed", "memory.current", USAGE),
    ("debian-6.12-mglru-index-mixed", "seqs", MGLRU_SEQS),
    ("debian-6.12-mglru-lackey-anon", "misses", LACKEY),
    ("debian-6.12-mglru-lackey-anon", "memory.current", USAGE),
    ("debian-6.12-mglru-lackey-anon", "seqs", MGLRU_SEQS),
    ("debian-7.2-classic-index-file", "misses", CLASSIC_FILE),
    (
        "debian-7.2-classic-index-mixed",
        "workingset_refault_anon",
        CLASSIC_MIXED,
    ),
    (
        "debian-7.2-classic-index-mixed",
        "workingset_refault_file",
        CLASSIC_MIXED,
    ),
    ("debian-7.2-classic-index-mixed", "pswpout", CLASSIC_MIXED),
    ("debian-7.2-classic-lackey-anon", "misses", LACKEY),
    ("debian-7.2-mglru-index-file", "misses", MGLRU_SEQS),
    ("debian-7.2-mglru-index-file", "seqs", MGLRU_SEQS),
    ("debian-7.2-mglru-index-mixed", "workingset_refault_anon", MGLRU_SEQS),
    ("debian-7.2-mglru-index-mixed", "workingset_refault_file", MGLRU_SEQS),
    ("debian-7.2-mglru-index-mixed", "seqs", MGLRU_SEQS),
    ("debian-7.2-mglru-lackey-anon", "misses", LACKEY),
    ("debian-7.2-mglru-lackey-anon", "seqs", MGLRU_SEQS),
];

fn dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces")
}

fn all() -> &'static Vec<Compared> {
    static ALL: OnceLock<Vec<Compared>> = OnceLock::new();
    ALL.get_or_init(|| {
        fidelity::fixtures(&dir())
            .unwrap()
            .iter()
            .map(|p| fidelity::compare(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
            .collect()
    })
}

#[test]
fn every_trace_has_a_fixture_per_kernel_and_lru_holding_its_op_file() {
    let mut missing = Vec::new();
    for s in SERIES {
        for l in LRUS {
            for t in TRACES {
                let n = format!("debian-{s}-{l}-{t}");
                match all().iter().find(|c| c.name == n) {
                    None => missing.push(n),
                    Some(c) => assert_eq!(c.profile, c.series, "{n}: the model runs the kernel's own preset"),
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "missing fixtures (scripts/regen-kernel-traces.sh): {missing:?}"
    );
    for p in fidelity::fixtures(&dir()).unwrap() {
        let c = lrugen_kernel::Capture::load(&p).unwrap();
        assert!(
            c.workload.is_none() && c.experiment.is_none() && c.ops.is_some(),
            "{}: a trace's fixture keeps its op file",
            p.display()
        );
        assert!(c.command.contains("--trace "), "{}: {}", p.display(), c.command);
    }
}

#[test]
fn the_model_is_within_tolerance_of_every_trace() {
    println!("{}", fidelity::markdown(all()));
    if let Err(e) = fidelity::unexplained(all(), GAPS) {
        panic!("{e}");
    }
}

/// The typed traces exercise what they are for, on the kernel as on the model: the lackey trace
/// swaps and refaults anon pages, the index file refaults file pages, the mixed file both.
#[test]
fn each_trace_moves_the_counters_of_its_kind() {
    for c in all() {
        let k = |w: &str| c.check(w).map_or(0, |k| k.kernel);
        let m = |w: &str| c.check(w).map_or(0, |k| k.model);
        let (anon, file) = match c.shape.as_str() {
            "lackey-anon" => (true, false),
            "index-file" => (false, true),
            _ => (true, true),
        };
        for (what, want) in [
            ("workingset_refault_anon", anon),
            ("pswpout", anon),
            ("workingset_refault_file", file),
        ] {
            assert_eq!(k(what) > 0, want, "{} kernel {what} {}", c.name, k(what));
            assert_eq!(m(what) > 0, want, "{} model {what} {}", c.name, m(what));
        }
    }
}

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

const SMALL_MEMCG: &str = "in a 2 MiB memcg (512 pages) the model is 2-12 % off the kernel's misses on \
    these traces, mostly below it on the index file (-4.7 to -7.7 % on every kernel and LRU), and the \
    kernel's memory.current after the last access moves from 452 to 511 pages where the model's stays at \
    466-499. Not known why; the suspect is the memcg charge stock, which the model lacks: the kernel \
    charges MEMCG_CHARGE_BATCH (64) pages at a time and keeps the surplus per CPU, charged but unused, \
    which is 12 % of this memcg and under 1 % of the shape fixtures' 32 MiB. One boot each: the \
    kernel's run-to-run spread here is not measured";

/// Known differences between the model and a kernel on these traces: (fixture, check, why).
const GAPS: &[(&str, &str, &str)] = &[
    ("debian-6.1-classic-index-file", "misses", SMALL_MEMCG),
    ("debian-6.1-classic-index-file", "workingset_refault_file", SMALL_MEMCG),
    ("debian-6.1-classic-index-file", "memory.current", SMALL_MEMCG),
    ("debian-6.1-classic-index-mixed", "memory.current", SMALL_MEMCG),
    ("debian-6.1-classic-lackey-anon", "misses", SMALL_MEMCG),
    ("debian-6.1-classic-lackey-anon", "memory.current", SMALL_MEMCG),
    ("debian-6.1-mglru-index-file", "misses", SMALL_MEMCG),
    ("debian-6.1-mglru-index-file", "workingset_refault_file", SMALL_MEMCG),
    ("debian-6.1-mglru-index-file", "memory.current", SMALL_MEMCG),
    ("debian-6.1-mglru-index-mixed", "memory.current", SMALL_MEMCG),
    ("debian-6.1-mglru-lackey-anon", "misses", SMALL_MEMCG),
    ("debian-6.1-mglru-lackey-anon", "memory.current", SMALL_MEMCG),
    ("debian-6.1-mglru-lackey-anon", "seqs", SMALL_MEMCG),
    ("debian-6.12-classic-index-file", "misses", SMALL_MEMCG),
    ("debian-6.12-classic-index-file", "memory.current", SMALL_MEMCG),
    (
        "debian-6.12-classic-index-mixed",
        "workingset_refault_anon",
        SMALL_MEMCG,
    ),
    (
        "debian-6.12-classic-index-mixed",
        "workingset_refault_file",
        SMALL_MEMCG,
    ),
    ("debian-6.12-classic-index-mixed", "pswpout", SMALL_MEMCG),
    ("debian-6.12-classic-index-mixed", "memory.current", SMALL_MEMCG),
    ("debian-6.12-classic-lackey-anon", "misses", SMALL_MEMCG),
    ("debian-6.12-mglru-index-file", "misses", SMALL_MEMCG),
    ("debian-6.12-mglru-index-file", "workingset_refault_file", SMALL_MEMCG),
    ("debian-6.12-mglru-index-file", "memory.current", SMALL_MEMCG),
    ("debian-6.12-mglru-index-mixed", "seqs", SMALL_MEMCG),
    ("debian-6.12-mglru-lackey-anon", "misses", SMALL_MEMCG),
    ("debian-6.12-mglru-lackey-anon", "pgscan", SMALL_MEMCG),
    ("debian-6.12-mglru-lackey-anon", "memory.current", SMALL_MEMCG),
    ("debian-6.12-mglru-lackey-anon", "seqs", SMALL_MEMCG),
    ("debian-7.2-classic-index-file", "misses", SMALL_MEMCG),
    ("debian-7.2-classic-index-file", "memory.current", SMALL_MEMCG),
    ("debian-7.2-classic-index-mixed", "workingset_refault_anon", SMALL_MEMCG),
    ("debian-7.2-classic-index-mixed", "workingset_refault_file", SMALL_MEMCG),
    ("debian-7.2-classic-index-mixed", "pswpout", SMALL_MEMCG),
    ("debian-7.2-classic-index-mixed", "memory.current", SMALL_MEMCG),
    ("debian-7.2-classic-lackey-anon", "misses", SMALL_MEMCG),
    ("debian-7.2-classic-lackey-anon", "memory.current", SMALL_MEMCG),
    ("debian-7.2-mglru-index-file", "misses", SMALL_MEMCG),
    ("debian-7.2-mglru-index-file", "memory.current", SMALL_MEMCG),
    ("debian-7.2-mglru-index-file", "seqs", SMALL_MEMCG),
    ("debian-7.2-mglru-index-mixed", "workingset_refault_anon", SMALL_MEMCG),
    ("debian-7.2-mglru-index-mixed", "workingset_refault_file", SMALL_MEMCG),
    ("debian-7.2-mglru-index-mixed", "memory.current", SMALL_MEMCG),
    ("debian-7.2-mglru-index-mixed", "seqs", SMALL_MEMCG),
    ("debian-7.2-mglru-lackey-anon", "misses", SMALL_MEMCG),
    ("debian-7.2-mglru-lackey-anon", "memory.current", SMALL_MEMCG),
    ("debian-7.2-mglru-lackey-anon", "seqs", SMALL_MEMCG),
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

// SPDX-License-Identifier: GPL-2.0-only
//! The model against real kernels, shape by shape: every fixture of `tests/fixtures/shapes/`
//! (seven workload shapes on Debian 6.1, 6.12 and 7.2, MGLRU and classic, written by
//! `lrugen kernel --fixture`; `scripts/regen-kernel-shapes.sh` regenerates them) replayed on the
//! model with its own kernel's preset. Tolerances (`lrugen_kernel::fidelity`): total misses 1 %,
//! `workingset_refault_*`, `pgscan_*` and `pswpout` 10 % (or 50 events), `memory.current` at the
//! end of the replay 1 %, `memory.stat` `kernel` 10 % (or 5 pages), the final
//! `min_seq[anon]`, `min_seq[file]` and `max_seq` equal; and the sign of MGLRU − classic misses the
//! kernel's in every shape and kernel. A check out of tolerance fails unless it is listed in
//! [`GAPS`] with the reason; a listed gap that has closed fails too, so the list stays true.
//! No qemu here.

use lrugen_kernel::fidelity::{self, Compared};
use std::sync::OnceLock;

/// The shapes (`scripts/regen-kernel-shapes.sh`).
const SHAPES: &[&str] = &[
    "zipf-pread",
    "hot-cold",
    "anon-gauss",
    "mmap-random",
    "mmap-normal",
    "mixed-swappiness10",
    "mixed-swappiness100",
];
const SERIES: &[&str] = &["6.1", "6.12", "7.2"];
const LRUS: &[&str] = &["mglru", "classic"];

const MGLRU_72_ANON: &str = "7.2 MGLRU mixed at swappiness 10, over five boots (the fixture and `boots/`): \
    the kernel swaps out 21, 44, 38, 25 and 30 pages, the model 140. The model swaps once it ages to \
    max_seq 5, which makes its anon generation 3 (every workload and replayer anon page) evictable; it gets \
    there at about 95,000 accesses, the kernel later or not at all. The model's 140 are its 23 cold fixed \
    pages and the first 117 pages of its op list: read before its first aging (about 40,000 accesses), \
    whose walk (the mm's first, a forced scan) cleared their accessed bits, and not read again. The \
    boots swap out 17-20 fixed pages each (smaps `Swap`: heap 8-10, `.data.rel.ro` 4, `.data` 2, the \
    anonymous mapping after it 2, stack 0-2) and 0, 21, 16, 1 and 8 of the op list's. Mapping the \
    replayer's own pages as the guest's smaps has them (each VMA at its page offset in its PMD table, \
    hot pages where `Referenced` shows them) does not close it: 134 on average over the boots' layouts \
    (145 with the replayer's page tables read off the smaps too); at the fixture's, 136, its fixed ones \
    then as the kernel's (heap 12, 4, 2, 2, 2) and 114 of the op list's. (Those were counted without the \
    data disk's metadata pages; with the kernel's two, the model swaps out 197.) At swappiness 100 the \
    kernel's swap-outs spread over 42-238, and the model's move with the metadata pages in the memcg, \
    not monotonically: 197, 101, 309 and 141 with 0, 1, 2 (the kernel's) and 3 of them (at swappiness \
    10: 140, 101, 197, 147); the count is as sensitive to a page in the model as it is to the boot in \
    the kernel, and 309 is the model's at the kernel's two. Separately, the kernel's first aging \
    (about 42,000 accesses) leaves anon folios in generation 2 that its walk did not find young (192 and 43 \
    in two boots; walk stats 4980T 4345Y), which anon eviction later finds young and activates with their \
    look-around neighbours (pgactivate 596 and 107 in the fixtures, 734 and 102 before; model 0): the \
    model's walk finds every anon page young there. What cleared those accessed bits is the guest's \
    DAMON_STAT (its kdamond's damon_folio_mkold, which sets PG_young for folio_referenced): booted \
    with `--damon-stat off` the kernel activates 7 (at swappiness 100, 40) and still swaps out 41 \
    (236), so the swap-outs are not DAMON's. A boot with memory.stat read every 5,000 accesses (`lrugen kernel --ctl`; kernel 12 \
    swap-outs, model 250 at its layout) shows the same timing: file refaults agree read for read (127/127, \
    131/122, 135/110 in the last three), the model's anon turns inactive (its generation two behind \
    max_seq) between 90,000 and 95,000 accesses and the kernel's between 95,000 and 100,000, and the \
    swap-outs follow";
/// 7.2 MGLRU ages too often once the op list lies where the guest's is (shared with the traces).
pub const MGLRU_72_OP_LIST: &str = "7.2 MGLRU ages more often than the kernel since the model \
    puts the replayer's op list where the guest has it, in a mapping that starts where the anon \
    region ends and shares the region's last PTE table (`model::OpListPlace::After`, read off every \
    capture's smaps; before, the op list had a table of its own), and walks that table once for both \
    mappings as the kernel does: anon-gauss ends at max_seq 23-26 over the five boots' layouts \
    against the boots' 21-24, its misses +1.7 % on average (within the boots' 2.9 %), where 6.1 \
    and 6.12 came to -0.1 % and -0.3 % (they were +2.1 % and +1.6 %). With the op list in its own \
    table the 7.2 model's max_seq followed the fixture's window for window (7 at 5,000 accesses, \
    22 against 23 at the end); with the guest's layout it is one ahead from 25,000 accesses and four \
    ahead by 100,000. A traced 7.2 boot (ftrace of evict_folios, try_to_inc_max_seq, lru_activate, \
    try_to_unmap_one and do_swap_page, aligned with the model's calls by the swap-ins) shows the \
    two part early: after the fifth aging the kernel's look-around activates 903 region folios \
    before the next, the model's 434, and the kernel's eviction scans 2,254 folios, the model's \
    1,401 (that boot: kernel 5,452 misses, model 6,042). Where it starts: at 5,000 accesses the \
    kernel's generation max_seq - 1 holds 513 pages, the model's 3,954, so the fourth aging's walk \
    promoted far fewer in the kernel. A boot with `--ftrace 'p:age try_to_inc_max_seq' --ftrace \
    'p:wpud walk_pud_range' --ftrace sched/sched_switch` shows why: of the three agings while the \
    region is populated, the kernel walks the first, skips the second (the replayer not switched \
    in since: should_skip_mm) and walks the third, because the replayer was switched in twice in \
    between (98 switch-ins over the run, kworkers and rcu_preempt). That third walk resets the \
    Bloom filter the fourth reads, keeping only tables dense with young PTEs, just after the first \
    cleared them: few. The model skips both the second and the third (in this replay it marks the mm used \
    only at a major fault, and none comes between them), so its fourth walk reads the filter the first \
    wrote, holding every region table. Traced the same way, 6.1 and 6.12 age twice there (walk, \
    skip), as the model does; 7.2's third aging comes in the same reclaim call after it sorted the \
    memcg's folios (1.8 ms of guest time; the model's loop does the same, at priority 0), and 7.2 \
    is PREEMPT_LAZY (its Kconfig.preempt has no PREEMPT_VOLUNTARY on x86), so the tick during that \
    sort preempted the replayer for a runnable kworker and its return marked the mm used. The \
    model's reclaim takes no guest time and has no ticks. An experiment (not kept) that marked the \
    mm used before an aging when more than 1,000 folios had been scanned since the last (in the \
    7.2 loop only that sort does) made the third aging walk: max_seq 21-22 at the five layouts \
    (boots 21-24), min_seq[anon] 18-19 (boots 19-21), misses -1.4 %: that walk starts the gap, \
    and it is not all of it. Not DAMON_STAT: five boots with \
    `--damon-stat off` end at max_seq 21-23, the model at 24, 22, 26, 23 and 22 at their layouts (README, \
    \"The guest's own activity\")";

/// Known differences between the model and a kernel: (fixture, check, why). Each is a model
/// defect to fix, not a tolerance.
const GAPS: &[(&str, &str, &str)] = &[
    ("debian-7.2-mglru-anon-gauss", "seqs", MGLRU_72_OP_LIST),
    ("debian-7.2-mglru-mixed-swappiness10", "pswpout", MGLRU_72_ANON),
    ("debian-7.2-mglru-mixed-swappiness100", "pswpout", MGLRU_72_ANON),
];

/// Known sign differences of MGLRU − classic: (series, shape, why).
const SIGN_GAPS: &[(&str, &str, &str)] = &[];

fn all() -> &'static Vec<Compared> {
    static ALL: OnceLock<Vec<Compared>> = OnceLock::new();
    ALL.get_or_init(|| {
        let dir = fidelity::shapes_dir();
        fidelity::fixtures(&dir)
            .unwrap()
            .iter()
            .map(|p| fidelity::compare(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
            .collect()
    })
}

#[test]
fn every_shape_has_a_fixture_per_kernel_and_lru() {
    let have: Vec<&str> = all().iter().map(|c| c.name.as_str()).collect();
    let mut missing = Vec::new();
    for s in SERIES {
        for l in LRUS {
            for sh in SHAPES {
                let n = format!("debian-{s}-{l}-{sh}");
                if !have.contains(&n.as_str()) {
                    missing.push(n);
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "missing fixtures (scripts/regen-kernel-shapes.sh): {missing:?}"
    );
    for c in all() {
        assert!(
            c.release.starts_with(&format!("{}.", c.series)),
            "{}: booted {}",
            c.name,
            c.release
        );
        assert_eq!(
            c.profile, c.series,
            "{}: the model runs the kernel's own preset",
            c.name
        );
    }
}

#[test]
fn the_model_is_within_tolerance_of_every_shape() {
    println!("{}", fidelity::markdown(all()));
    if let Err(e) = fidelity::unexplained(all(), GAPS) {
        panic!("{e}");
    }
}

#[test]
fn mglru_minus_classic_has_the_kernels_sign() {
    let mut bad = Vec::new();
    let mut closed = Vec::new();
    for s in SERIES {
        for sh in SHAPES {
            let get = |l: &str| {
                all()
                    .iter()
                    .find(|c| c.series == *s && c.shape == *sh && c.lru == l)
                    .and_then(|c| c.check("misses").cloned())
            };
            let (Some(m), Some(c)) = (get("mglru"), get("classic")) else {
                continue; // reported by every_shape_has_a_fixture_per_kernel_and_lru
            };
            let ks = fidelity::sign(m.kernel, c.kernel, fidelity::SIGN_BAND);
            let ms = fidelity::sign(m.model, c.model, fidelity::SIGN_BAND);
            let listed = SIGN_GAPS.iter().any(|(a, b, _)| a == s && b == sh);
            let line = format!(
                "{s} {sh}: kernel {:+} model {:+}",
                m.kernel as i64 - c.kernel as i64,
                m.model as i64 - c.model as i64
            );
            match (ks == ms, listed) {
                (false, false) => bad.push(line),
                (true, true) => closed.push(line),
                _ => {}
            }
        }
    }
    assert!(bad.is_empty(), "MGLRU − classic of the wrong sign:\n{}", bad.join("\n"));
    assert!(
        closed.is_empty(),
        "listed in SIGN_GAPS but now of the kernel's sign:\n{}",
        closed.join("\n")
    );
}

#[test]
fn seqs_reads_min_seq_per_type_from_the_x_markers() {
    // Debian 6.1's lru_gen_full of /t after zipf-pread, first two generations, verbatim:
    // generation 0 has no file slot (`0x`), so min_seq[file] = 1 and min_seq[anon] = 0
    let full = "memcg     2 /t\n node     0\n          0      90708          0           0x\n                     0          0r          0e          0p          0           0           0 \n                     1          0r          0e          0p          0           0           0 \n                     2          0r          0e          0p          0           0           0 \n                     3          0r          0e          0p          0           0           0 \n                                0           0           0           0           0           0 \n          1      90708          0        5015 \n                     0          0           0           0        1006r       2402e          0p\n                     1          0           0           0        1224r       2356e          0p\n                     2          0           0           0        1412r       2217e        304p\n                     3          0           0           0           0r          0e       2329p\n                                0           0           0           0           0           0 \n";
    assert_eq!(fidelity::seqs(full), Some((0, 1, 1)));
    assert_eq!(fidelity::seqs("memcg     2 /u\n node     0\n"), None);
    assert_eq!(fidelity::sign(1000, 1002, 0.003), 0);
    assert_eq!(fidelity::sign(1000, 1010, 0.003), -1);
    assert_eq!(fidelity::sign(1010, 1000, 0.003), 1);
}

/// Issue 11's suspect: uniform loads through a `MADV_RANDOM` mapping of a file of 1.5× the memcg,
/// under the 6.1 preset, where the model's memcg reclaim once reclaimed thousands of pages in one
/// burst and aged several times while the kernel stayed at the limit. Checked again on Debian
/// 6.1.0-57 (`tests/fixtures/suspects/`, the command is in the fixture): every counter is within
/// tolerance (misses +0.3 %, pgscan +1.3 %) and the model ends at the kernel's `max_seq` (27, so
/// it aged as often); the burst is gone. Its final `min_seq[file]` was one ahead of the kernel's
/// (25 against 24) until the model had the data disk's ext4 metadata page the kernel keeps in
/// the memcg ([`lrugen_kernel::data_disk_metadata_pages`]): that page is what the kernel's oldest
/// generation still held.
#[test]
fn a_random_mapping_at_one_and_a_half_times_the_memcg_matches_6_1() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/suspects/debian-6.1-mglru-mmap-random-1.5x.json");
    let c = fidelity::compare(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert_eq!((c.series.as_str(), c.lru.as_str()), ("6.1", "mglru"));
    let bad: Vec<String> = c
        .checks
        .iter()
        .filter(|k| !k.ok && k.what != "seqs")
        .map(|k| {
            format!(
                "{}: model {} kernel {} ({:+.1} %, {})",
                k.what,
                k.model,
                k.kernel,
                k.diff_pct(),
                k.detail
            )
        })
        .collect();
    assert!(bad.is_empty(), "out of tolerance:\n{}", bad.join("\n"));
    let seqs = c.check("seqs").expect("an MGLRU fixture has its generations");
    assert_eq!(seqs.model, seqs.kernel, "max_seq: {}", seqs.detail);
    assert_eq!(seqs.detail, "kernel 24/24..27 model 24/24..27");
}

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

const LACKEY: &str = "lackey-anon: the model's page tables are the kernel's (the replayer's read off its smaps, \
    `the_model_has_the_kernels_page_tables`; they were 1-3 pages over), and MGLRU's misses on 6.1 and 7.2 \
    agree (+0.4 and -0.1 %, were +4.8 and +3.6 %), but classic still misses more than the kernel on every \
    kernel (6.1 +2.1 %, 6.12 +2.8 %, 7.2 +4.9 %; were +4.9, +8.9, +7.6 %) and 6.12 MGLRU now misses less \
    (-3.0 %, was +1.7 %; with it, it scans 11 % less). The model still charges 2-3 pages more kernel \
    memory than the kernel (memory.stat kernel 17-19 against 15-17): its per-address-space other pages \
    (`KmemConfig::mm_other_pages`, 4) and slab (10,240 bytes) against the kernel's 1.5-3.5 pages \
    (beyond page tables, slab and, on 6.1, the PUD tables and PGD) and 6,000-10,400 bytes. That is \
    not the rest of the gap: with the model's kernel memory set to the kernel's page for page, \
    classic goes to +1.2, +5.5 and 0.0 % and MGLRU to -2.7, -4.2 and -5.2 %. In a 512-page memcg \
    the misses move by several percent, either way, with a page of capacity; not traced further";
const MGLRU_6_12: &str = "6.12 MGLRU in a 512-page memcg: with the kernel's page tables (a page less \
    than before), the model scans and swaps out less than the kernel, and on index-mixed misses 1.1 % \
    less (was -0.6 %; pswpout -10.7 %, was -6.8 %), while it ends a generation ahead (see the \
    generations' gap); on lackey-anon it ends one behind (max_seq 15 against 17, was 17). Not traced \
    to a mechanism";
const CLASSIC_FILE: &str = "classic index-file on 6.12 and 7.2: the model gives 5180 and 5795 misses, \
    the kernel 5502 and 5603 (-5.9 and +3.4 %; on 6.1 5919 against 5876, within 1 %). On the guest's \
    clock (model::Layout::guest_clock; were +4.2 and +2.4 % on GUEST_CLOCK's 10 ms a disk read) the \
    replays take 3.5 and 8.3 s, and from 6.12 classic reclaim sees its refaults and list sizes only \
    at the flusher's runs every 2 s (reclaim_ratelimited_stats_flush), whose phase against the \
    replay's start the fixture does not record: with the model's first run moved from 0.1 to 2 s \
    after the start of measurement its misses go 5160-5652 on 6.12 and 5413-5795 on 7.2, both \
    spanning the kernel's. One boot each (the hot-cold shape's file refaults move by 17 % between \
    boots); more boots, or the flusher's phase recorded, are needed to say more";
const CLASSIC_MIXED: &str = "classic index-mixed on 6.12: misses agree (within 1 %), but the kernel \
    reclaims more anon than the model: 1837 swap-outs against 1432, anon refaults 1346 against \
    1051, file refaults 1404 against 1646 (were 1221, 900, 1810 on GUEST_CLOCK). Not a change of \
    get_scan_count's balance: it, lru_note_cost and workingset_refault are 6.1's but for the \
    modelled lru_cost_rotations and reclaim_ratelimited_stats_flush. The guest replayed it in 0.84 \
    s, within one period of the statistics flusher, so the kernel never deactivated (pgdeactivate \
    0) and found 112 recent file refaults against the model's 0; on that clock 7.2 agrees (1427 \
    against 1530 swap-outs, was 1225; 1409 without lru_note_cost_skips_zero), 6.12 still swaps 22 % less, and a flusher run within the \
    replay (0.1 or 0.5 s after its start) takes the model further away (949 and 1258 swap-outs). The 6.12 \
    and 7.2 kernels differ from each other by as much (1837 against 1530) where the model's \
    presets run the same code; one boot each";
const MGLRU_SEQS: &str = "MGLRU in a 512-page memcg: the model ends one generation ahead of the kernel \
    in 5 of 9 runs (two on 6.1 and 7.2 lackey-anon), so it ages more often than the kernel at this size; with it, 7.2's \
    index-mixed file refaults are 11 % high (its anon refaults agree since the model has the kernel's \
    page tables). The same direction as the 6.1 mmap-random shape's gap; not traced to a mechanism";
const USAGE: &str = "memory.current after the last access, beyond the floor of one reclaim's saw-tooth \
    (32 pages): the kernel's reading also holds its per-CPU charge stock and the statistics' lag \
    (memory.current exceeds memory.stat's anon + file + kernel by 2-33 pages in these fixtures), which \
    the model does not have, and one reading per boot does not show where in the saw-tooth either side \
    was";

/// Known differences between the model and a kernel on these traces: (fixture, check, why).
const GAPS: &[(&str, &str, &str)] = &[
    ("debian-6.1-classic-lackey-anon", "misses", LACKEY),
    ("debian-6.1-classic-lackey-anon", "memory.current", USAGE),
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
    ("debian-6.12-classic-lackey-anon", "misses", LACKEY),
    ("debian-6.12-mglru-index-mixed", "misses", MGLRU_6_12),
    ("debian-6.12-mglru-index-mixed", "pswpout", MGLRU_6_12),
    ("debian-6.12-mglru-index-mixed", "seqs", MGLRU_SEQS),
    ("debian-6.12-mglru-lackey-anon", "misses", LACKEY),
    ("debian-6.12-mglru-lackey-anon", "pgscan", MGLRU_6_12),
    ("debian-6.12-mglru-lackey-anon", "seqs", MGLRU_6_12),
    ("debian-7.2-classic-index-file", "misses", CLASSIC_FILE),
    ("debian-7.2-classic-index-file", "memory.current", USAGE),
    ("debian-7.2-classic-lackey-anon", "misses", LACKEY),
    ("debian-7.2-mglru-index-file", "seqs", MGLRU_SEQS),
    ("debian-7.2-mglru-index-mixed", "workingset_refault_file", MGLRU_SEQS),
    ("debian-7.2-mglru-index-mixed", "seqs", MGLRU_SEQS),
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

/// The replayer's page tables, counted off its `smaps` as the kernel allocates them
/// (`model::ReplayerPageTables`), are the kernel's `memory.stat` `pagetables` at the end of every
/// trace's replay, at the levels each kernel counts; and the model, charging the replayer's own
/// page tables from that count and its workload's from its own page-table code, ends with the
/// same number.
#[test]
fn the_model_has_the_kernels_page_tables() {
    use lrugen::mm::vmstat::Stat;
    use lrugen_kernel::model;
    for p in fidelity::fixtures(&dir()).unwrap() {
        let c = lrugen_kernel::Capture::load(&p).unwrap();
        let n = p.display();
        let ops = c.ops().unwrap();
        let kernel = c.run.memory_stat_at_end_of_replay["pagetables"] as u64 / 4096;
        let layout = c.layout(&ops);
        let pt = layout
            .pgtables
            .unwrap_or_else(|| panic!("{n}: the smaps shows the workload's mappings"));
        let profile = model::profile_for_release(&c.run.kernel_release);
        let sw = &profile.switches;
        assert_eq!(
            pt.pagetables(sw.pud_pgtable_stats, sw.pgd_pgtable_stats),
            kernel,
            "{n}: {pt:?}"
        );
        let mut settings = c.settings.clone();
        settings.model_capacity_pages = c.run.model_capacity_for(&ops).max(1);
        let cfg = model::config(&settings, profile).unwrap();
        let r = model::run_at(&ops, &cfg, &layout).unwrap();
        assert_eq!(
            r.memcg(Stat::NrPageTablePages) as u64,
            kernel,
            "{n}: the model's pagetables"
        );
    }
}

/// The model runs on the guest's clock (`model::Layout::guest_clock`): at the end of each of the
/// kernel's windows its virtual time has moved from the end of the first as the guest's
/// `CLOCK_MONOTONIC` did, to within a nanosecond a step (each window's time is shared evenly
/// over its steps). Not on `GUEST_CLOCK`'s costs: on 6.12 `index-mixed` the guest replayed
/// everything in 0.84 s, where 10 ms a disk read would take the model about 20 s.
#[test]
fn the_model_runs_on_the_guests_clock() {
    use lrugen_kernel::model;
    for p in fidelity::fixtures(&dir()).unwrap() {
        let c = lrugen_kernel::Capture::load(&p).unwrap();
        let n = p.display();
        let ops = c.ops().unwrap();
        let layout = c.layout(&ops);
        assert_eq!(
            layout.guest_clock.len(),
            c.run.windows.len(),
            "{n}: every window has its time"
        );
        let mut settings = c.settings.clone();
        settings.model_capacity_pages = c.run.model_capacity_for(&ops).max(1);
        let cfg = model::config(&settings, model::profile_for_release(&c.run.kernel_release)).unwrap();
        let r = model::run_at(&ops, &cfg, &layout).unwrap();
        // a sample at the end of every window (the last one at the end of the run)
        let series: Vec<_> = r.series.iter().filter(|s| s.step > 0).collect();
        assert_eq!(series.len(), c.run.windows.len(), "{n}");
        let (m0, k0) = (series[0].time_ns, c.run.windows[0].ns);
        for (i, (s, w)) in series.iter().zip(&c.run.windows).enumerate() {
            let (model, kernel) = (s.time_ns - m0, w.ns - k0);
            // at most a nanosecond a step lost to rounding, and the replayer's steps between
            // accesses are fewer than its accesses
            let slack = 2 * (s.step - series[0].step);
            assert!(
                model <= kernel && kernel - model <= slack,
                "{n}: window {i}: the model {model} ns after the first window's end, the guest {kernel}"
            );
        }
    }
}

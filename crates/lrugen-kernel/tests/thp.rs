// SPDX-License-Identifier: GPL-2.0-only
//! The model against real kernels with transparent huge pages: the fixtures of
//! `tests/fixtures/thp/` (`scripts/regen-kernel-thp.sh`: an anon Gaussian workload of 36 MiB in a
//! memcg of 32 MiB with swap on zram, on Debian 6.1, 6.12 and 7.2, MGLRU and classic,
//! `transparent_hugepage` `never` and `madvise` with 18 aligned 2 MiB regions advised
//! `MADV_HUGEPAGE`, and `always` with none advised),
//! replayed on the model with the run's settings (MGLRU never and madvise on 6.12 and 7.2 with a
//! second boot under `boots/`, judged as `tests/shapes.rs` judges several boots). Checked: the shape checks of
//! `lrugen_kernel::fidelity` (misses, refaults, scans, `pswpout`, `memory.current`, ...) and the
//! THP events of `/proc/vmstat` the model counts, each within 10 % or one event (a THP event is
//! 512 pages), `pgpgin`/`pgpgout` within 10 % or 200 KiB (6.1's whole-THP swap-out counts 2048
//! KiB and its order-0 swap I/O none: switch `remove_rw_page`), and `memory.stat` `anon_thp` at
//! the end of the replay. A check out of tolerance
//! fails unless [`GAPS`] lists it with its measured reason; a listed gap that has closed fails
//! too. No qemu here.

use lrugen::mm::vmstat::Stat;
use lrugen_kernel::fidelity::{self, Compared, COUNTER_TOLERANCE};
use lrugen_kernel::{model, Capture};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const SERIES: &[&str] = &["6.1", "6.12", "7.2"];
const LRUS: &[&str] = &["mglru", "classic"];
const KNOBS: &[&str] = &["never", "madvise", "always"];

/// A THP event moves by one folio of 512 pages: a difference of one is the floor.
const THP_FLOOR: u64 = 1;

/// `pgpgin`/`pgpgout` count KiB: the shape checks' floor of 50 events is 200 KiB of 4 KiB pages.
const PGPG_FLOOR: u64 = 200;

/// The THP events compared: (`/proc/vmstat` name, the model's counter).
const THP_EVENTS: &[(&str, Stat)] = &[
    ("thp_fault_alloc", Stat::ThpFaultAlloc),
    ("thp_fault_fallback", Stat::ThpFaultFallback),
    ("thp_fault_fallback_charge", Stat::ThpFaultFallbackCharge),
    ("thp_split_page", Stat::ThpSplitPage),
    ("thp_split_pmd", Stat::ThpSplitPmd),
    ("thp_swpout", Stat::ThpSwpout),
    ("thp_swpout_fallback", Stat::ThpSwpoutFallback),
];

const WHICH_THP: &str = "Which THP the fourth whole swap-out takes. Both sides fault in all 18 THPs \
    (thp_fault_alloc 18/18), swap out regions 0, 1 and 2 whole while the populate pass charges the last \
    ones, and a fourth in the second window (thp_swpout 4/4, thp_split_pmd 4/4, anon_thp 14/14 at the \
    end). Traced in the guest (`lrugen kernel --ftrace 'p:spl split_huge_pmd_locked addr=%si:x64'`, \
    `__split_huge_pmd` on 6.1, the address against the region's start in smaps), the kernel's fourth \
    is region 14 on 6.1 MGLRU, 6.12 MGLRU and classic and 7.2 classic, and region 3 on 6.1 classic; \
    the model's (a probe in add_large_to_swap) is region 15 on those four and region 3 on 6.1 classic, \
    where it then agrees (+0.2 % misses). Region 14 (pages 7168-7679, like its mirror region 3) is 512 \
    pages nearer the Gaussian's centre (4608) than region 15, so the order-0 pages of the region the \
    kernel evicted are hotter: its misses run above the model's from that window on (6.12 classic, \
    windows 2-3: 377 and 361 against 335 and 327; window 1 is 323 on both sides). Why the kernel's \
    reference checks find region 14 unreferenced where the model's find region 15 is not known yet";
const SEQS_612_MADVISE: &str = "6.12 MGLRU madvise: the model ends two generations behind both boots \
    (19/19..21 against 21/21..23) beside the misses gap above: the kernel's 356 more misses (6,169 \
    against 5,813) are refaults of the hotter evicted region, and its two more agings go with them; not \
    separated from that gap by a measurement yet";
const SEQS_72_MADVISE: &str = "7.2 MGLRU madvise: the model ends one or two generations ahead of the \
    two boots (48/49..51 against 46/47..49 and 47/48..50) while misses (+0.1 %), refaults, pswpout, \
    pgscan and memory.current agree and the same THPs go (thp_swpout 3/3); with THP never the \
    generations agree (19/20..22). What makes the model age more often with 15 resident THPs is not \
    known: each THP is one folio with one accessed bit, so an aging walk finds 512 pages young or old \
    at once, and the kernel's `should_clear_pmd_young` and non-leaf PMD bits are where to look";

const FIFTEENTH_THP: &str = "Whether the fifteenth 2 MiB range gets a THP under `always` (no advice: \
    the charge cannot reclaim). Traced in the 6.12 classic guest (kprobe on page_counter_try_charge, \
    nr and usage), the page counter held 515 pages before the first THP charge and grew by exactly \
    512 per THP (the deposited page tables come out of the per-CPU charge stock), so the fifteenth \
    found 7,683 and failed; the model, with the charge stock, starts at 512 and fits it with no page \
    to spare (thp_fault_alloc 15/14, anon_thp 12/11 at the end, both within the one-event floor). \
    The 3 pages come from the order of the replayer's start-up charges and uncharges, which the \
    stock turns into 64-page batches (the kernel's counter read 61 at its second batch); 3 more \
    kernel pages for the model's replayer come out of the stock and change nothing. 6.1 maps the \
    region unaligned (17 whole ranges), is not at that edge, and agrees";

/// Known differences between the model and a kernel: (fixture, check, why), each measured.
const GAPS: &[(&str, &str, &str)] = &[
    ("debian-6.12-classic-anon-thp-always", "misses", FIFTEENTH_THP),
    ("debian-6.12-mglru-anon-thp-always", "pgscan", FIFTEENTH_THP),
    ("debian-6.12-mglru-anon-thp-always", "seqs", FIFTEENTH_THP),
    ("debian-7.2-classic-anon-thp-always", "misses", FIFTEENTH_THP),
    ("debian-7.2-mglru-anon-thp-always", "misses", FIFTEENTH_THP),
    ("debian-7.2-mglru-anon-thp-always", "seqs", FIFTEENTH_THP),
    ("debian-6.1-mglru-anon-thp-madvise", "misses", WHICH_THP),
    (
        "debian-6.1-mglru-anon-thp-madvise",
        "workingset_refault_anon",
        WHICH_THP,
    ),
    ("debian-6.1-mglru-anon-thp-madvise", "pgscan", WHICH_THP),
    ("debian-6.12-classic-anon-thp-madvise", "misses", WHICH_THP),
    ("debian-6.12-mglru-anon-thp-madvise", "misses", WHICH_THP),
    ("debian-6.12-mglru-anon-thp-madvise", "seqs", SEQS_612_MADVISE),
    ("debian-7.2-classic-anon-thp-madvise", "misses", WHICH_THP),
    ("debian-7.2-mglru-anon-thp-madvise", "seqs", SEQS_72_MADVISE),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/thp")
}

/// The shape checks of `path` and its THP checks.
fn compare(path: &Path) -> Compared {
    let mut c = fidelity::compare(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cap = Capture::load(path).unwrap();
    let ops = cap.ops().unwrap();
    let mut settings = cap.settings.clone();
    settings.model_capacity_pages = cap.run.model_capacity_for(&ops).max(1);
    let profile = model::profile_for_release(&cap.run.kernel_release);
    let cfg = model::config(&settings, profile).unwrap();
    let m = model::run_at(&ops, &cfg, &cap.layout(&ops)).unwrap();
    let kv = |k: &str| cap.run.vmstat_delta.get(k).copied().unwrap_or(0).max(0) as u64;
    // the THP events, and the swap I/O in KiB: 6.1 counts none for order-0 pages written to zram
    // through ->rw_page and 2048 for a THP swapped out whole, which a bio writes (switch
    // `remove_rw_page`)
    let pgpg = [("pgpgin", Stat::Pgpgin), ("pgpgout", Stat::Pgpgout)];
    let compared = THP_EVENTS
        .iter()
        .map(|&e| (e, THP_FLOOR))
        .chain(pgpg.into_iter().map(|e| (e, PGPG_FLOOR)));
    for ((name, s), floor) in compared {
        c.checks.push(fidelity::counter(
            name,
            kv(name),
            m.vm(s).max(0) as u64,
            COUNTER_TOLERANCE,
            floor,
        ));
    }
    // memory.stat anon_thp (bytes) when the replayer's last access is done, in 2 MiB folios
    let k_thps = cap
        .run
        .memory_stat_at_end_of_replay
        .get("anon_thp")
        .copied()
        .unwrap_or(0)
        .max(0) as u64
        >> 21;
    let m_thps = m.memcg(Stat::NrAnonThps).max(0) as u64 / 512;
    c.checks.push(fidelity::counter(
        "anon_thp",
        k_thps,
        m_thps,
        COUNTER_TOLERANCE,
        THP_FLOOR,
    ));
    c
}

fn all() -> &'static Vec<Compared> {
    static ALL: OnceLock<Vec<Compared>> = OnceLock::new();
    ALL.get_or_init(|| fidelity::fixtures(&dir()).unwrap().iter().map(|p| compare(p)).collect())
}

#[test]
fn every_kernel_lru_and_knob_has_a_fixture() {
    let have: Vec<&str> = all().iter().map(|c| c.name.as_str()).collect();
    let mut missing = Vec::new();
    for s in SERIES {
        for l in LRUS {
            for t in KNOBS {
                let n = format!("debian-{s}-{l}-anon-thp-{t}");
                if !have.contains(&n.as_str()) {
                    missing.push(n);
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "missing fixtures (scripts/regen-kernel-thp.sh): {missing:?}"
    );
}

/// The guests ran with the knob their fixture names: `madvise` and `always` set and read back (a
/// guest under 512 MiB boots with every THP flag cleared), `never` writing none; the kernel made
/// THPs only under `madvise` and `always`, so the pairs measure THP. `never` and `madvise` replay
/// the same op file (the region advised `MADV_HUGEPAGE`), `always` one without the advice.
#[test]
fn the_guests_ran_with_their_knob() {
    use lrugen::mm::thp::Thp;
    for p in fidelity::fixtures(&dir()).unwrap() {
        let c = Capture::load(&p).unwrap();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let faults = c.run.vmstat_delta.get("thp_fault_alloc").copied().unwrap_or(0);
        let (knob, sysfs, advised) = match name.rsplit('-').next() {
            Some("madvise") => (Thp::Madvise, Some("always [madvise] never\n"), true),
            Some("always") => (Thp::Always, Some("[always] madvise never\n"), false),
            _ => (Thp::Never, None, true),
        };
        assert_eq!(c.settings.thp, knob, "{name}");
        match sysfs {
            Some(line) => {
                assert!(c.run.thp_knobs.starts_with(line), "{name}: {:?}", c.run.thp_knobs);
                assert!(faults > 0, "{name}: no THP faulted in");
            }
            None => assert_eq!(faults, 0, "{name}"),
        }
        assert_eq!(
            c.command.contains("--madv-hugepage"),
            advised,
            "{name}: the region advised under never and madvise only"
        );
        // the replayer's stores are plain writes where THPs may serve the region: no load
        // faulted the huge zero page in first (which 6.1 and 6.12 split on the write)
        let zero = c.run.vmstat_delta.get("thp_zero_page_alloc").copied().unwrap_or(0);
        assert_eq!(zero, 0, "{name}: the huge zero page was mapped");
    }
}

#[test]
fn the_model_matches_the_kernels_with_and_without_thp() {
    println!("{}", fidelity::markdown(all()));
    for c in all() {
        for k in c
            .checks
            .iter()
            .filter(|k| k.what.starts_with("thp_") || k.what == "anon_thp")
        {
            println!("{} {}: kernel {} model {}", c.name, k.what, k.kernel, k.model);
        }
    }
    if let Err(e) = fidelity::unexplained(all(), GAPS) {
        panic!("{e}");
    }
}

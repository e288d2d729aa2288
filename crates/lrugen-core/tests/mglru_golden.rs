// SPDX-License-Identifier: GPL-2.0-only
//! Golden debugfs output of a small deterministic MGLRU run, in both kernel profiles.
//!
//! A process maps a file and an anonymous region inside memcg `/t` with swap, touches them
//! through its page tables (so the aging walk, the Bloom filters and look-around run) and reads
//! another file through `pread` (so tiers and the PID controller see fd accesses). At the end,
//! `/sys/kernel/debug/lru_gen` and `lru_gen_full` must equal the files under `tests/golden/`
//! byte for byte. A difference is a change of behaviour or format: when intended, regenerate and
//! review the diff before committing:
//!
//! ```text
//! LRUGEN_BLESS=1 cargo test -p lrugen-core --test mglru_golden
//! git diff crates/lrugen-core/tests/golden/
//! ```

mod common;

use lrugen::kernel::Kernel;
use lrugen::mm::memcg::ROOT_MEMCG;
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vm::vmf;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::mglru::debugfs;
use lrugen::reclaim::mglru::{Mglru, MglruConfig, Profile};
use lrugen::reclaim::Policy;
use lrugen::workload::dist::{Dist, Sampler};
use std::path::PathBuf;

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// Compare `text` with the golden file `name` (`common::check_golden`).
fn check_golden(name: &str, text: &str) {
    common::check_golden(&golden(name), text, "mglru_golden");
}

/// The deterministic run; returns (lru_gen, lru_gen_full, kernel) after the run.
fn run(profile: Profile) -> (String, String, Kernel<Mglru>) {
    let mut m = Machine::new(MachineConfig::simple(16_384, 4_096));
    m.debug_checks = true;
    let t = m.create_memcg(ROOT_MEMCG, "t");
    m.memcgs[t].max = 1_536;
    let mm = m.create_mm(t);
    let mapped = m.create_file("mapped", 1_024, Advice::Normal);
    let read = m.create_file("read", 2_048, Advice::Random);
    let fbase = m.mmap(mm, 1_024, 0, Some((mapped, 0)));
    let abase = m.mmap(mm, 1_024, vmf::WRITE, None);
    let cfg = MglruConfig {
        profile,
        ..Default::default()
    };
    let p = Mglru::new(&m, cfg);
    let mut k = Kernel::new(m, p);
    let mut hot = Sampler::new(Dist::Zipf { theta: 0.9 }, 1_024, 7);
    let mut reads = Sampler::new(Dist::Zipf { theta: 0.8 }, 2_048, 8);
    // populate the anon region
    for i in 0..1_024 {
        k.access(mm, abase + i, true).expect("populate");
        k.m.now_ns += 10_000;
    }
    for i in 0..60_000u64 {
        let r = match i % 3 {
            0 => k.access(mm, abase + hot.next_key() as u32, i % 7 == 0),
            1 => k.access(mm, fbase + hot.next_key() as u32, false),
            _ => k.read_page(mm, read, reads.next_key()),
        };
        r.expect("access");
        k.m.now_ns += 50_000;
        assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
    }
    k.check().expect("invariants");
    let plain = k.p.debugfs(&k.m, false).expect("lru_gen");
    let full = k.p.debugfs(&k.m, true).expect("lru_gen_full");
    (plain, full, k)
}

fn golden_run(profile: Profile, tag: &str) {
    let (plain, full, k) = run(profile);
    // the run did age, evict, walk and refault
    let lg = k.p.lrugen(1, 0);
    assert!(lg.max_seq > 6, "{tag}: aged to max_seq {}", lg.max_seq);
    let stats = lg.mm_state.stats[0];
    assert!(
        stats.iter().any(|&s| s > 0),
        "{tag}: page-table walk statistics are zero"
    );
    let vm = k.m.vmstat();
    use lrugen::mm::vmstat::Stat;
    assert!(
        vm.get(Stat::Pswpout) > 0 && vm.get(Stat::WorkingsetRefaultFile) > 0,
        "{tag}: no swap-out or refault"
    );
    // the output parses back to the same numbers
    let parsed = debugfs::parse(&full).expect("lru_gen_full parses");
    let t = parsed.iter().find(|l| l.path == "/t").expect("/t in lru_gen_full");
    assert_eq!(t.memcg_id, 2);
    assert_eq!(t.gens.last().unwrap().seq, lg.max_seq);
    check_golden(&format!("mglru-{tag}.lru_gen"), &plain);
    check_golden(&format!("mglru-{tag}.lru_gen_full"), &full);
}

#[test]
fn golden_debugfs_mainline() {
    golden_run(Profile::V6_17, "mainline");
}

#[test]
fn golden_debugfs_6_1() {
    golden_run(Profile::V6_1, "6.1");
}

#[test]
fn same_run_twice_is_bit_identical() {
    let (a, b, _) = run(Profile::V6_17);
    let (c, d, _) = run(Profile::V6_17);
    assert_eq!(a, c);
    assert_eq!(b, d);
}

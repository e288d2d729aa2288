// SPDX-License-Identifier: GPL-2.0-only
//! The memory budget checked while a run grows (`budget::check_machine`): a run whose state
//! passes the limit stops with an error saying so, under the kernel loop and under the engine. The
//! limit is process-wide, so these tests live in a binary of their own and run one at a time.

use lrugen::budget;
use lrugen::mm::MachineConfig;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig};
use lrugen::workload::dist::Dist;
use lrugen::workload::WorkloadSpec;
use std::sync::Mutex;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn cfg(policy: PolicyKind) -> RunConfig {
    // 64 MiB of files read uniformly: about 16k pages resident, 600 KiB of folios and slots
    let w = WorkloadSpec::FileRead {
        files: 1,
        file_pages: 16_384,
        dist: Dist::Uniform,
        accesses: 40_000,
    };
    RunConfig::new(MachineConfig::simple(65_536, 0), MemcgConfig::default(), w, policy)
}

#[test]
fn a_run_growing_past_the_budget_stops_with_an_error() {
    let _g = ONE_AT_A_TIME.lock().unwrap();
    budget::set_limit(256 << 10);
    let r = sim::run(&cfg(PolicyKind::Mglru), None, &mut |_, _| {});
    let mut engine = cfg(PolicyKind::Classic);
    engine.engine = Some(Default::default());
    let e = sim::run(&engine, None, &mut |_, _| {});
    budget::set_limit(0);
    for r in [r.map(|_| ()), e.map(|_| ())] {
        let msg = r.expect_err("over the budget").to_string();
        assert!(
            msg.contains("over the memory budget of 256 KiB (--memory-budget)"),
            "{msg}"
        );
    }
}

#[test]
fn the_same_run_within_the_budget_completes() {
    let _g = ONE_AT_A_TIME.lock().unwrap();
    budget::set_limit(64 << 20);
    let r = sim::run(&cfg(PolicyKind::Mglru), None, &mut |_, _| {});
    budget::set_limit(0);
    let r = r.expect("within the budget");
    assert_eq!(r.accesses, 40_000);
}

// SPDX-License-Identifier: GPL-2.0-only
//! Thrashing prevention (`/sys/kernel/mm/lru_gen/min_ttl_ms`, issue 13 item 3) over whole runs:
//! only kswapd checks the TTL (`lru_gen_age_node`), so under global pressure a workload whose
//! every generation is younger than it is OOM-killed, while the same workload under a memcg
//! limit (memcg reclaim, no kswapd) or with the TTL off is reclaimed and runs to its end; the
//! classic LRU has no TTL. The run says so: `oom_kill` in `memory.events` and `/proc/vmstat`,
//! the error, and the step the kill came after.

use lrugen::mm::vmstat::Stat;
use lrugen::mm::{MachineConfig, StepClock};
use lrugen::reclaim::mglru::Profile;
use lrugen::sim::{self, MemcgConfig, PolicyKind, RunConfig, RunResult};
use lrugen::workload::WorkloadSpec;

/// A 128 MiB x86 machine (DMA and DMA32).
const RAM: u64 = 32_768;
/// Gaussian loads and stores of an anon region of 1.5 times the machine, populated first.
const PAGES: u64 = RAM * 3 / 2;
const ACCESSES: u64 = 30_000;

fn workload() -> WorkloadSpec {
    WorkloadSpec::Anon {
        compressed_pct: 0,
        pages: PAGES,
        write_ratio: 0.3,
        dist: "gauss:25".parse().expect("dist"),
        accesses: ACCESSES,
    }
}

/// Global pressure: no memcg limit on an x86 machine of [`RAM`] pages, swap for all of it.
fn global(policy: PolicyKind, profile: Profile, ttl: u64) -> RunConfig {
    let mut c = RunConfig::new(
        MachineConfig::x86(RAM, 2 * PAGES),
        MemcgConfig::default(),
        workload(),
        policy,
    );
    c.mglru.profile = profile;
    c.mglru.min_ttl_ms = ttl;
    c.check = true;
    c
}

/// The same workload under a memcg limit of [`RAM`] pages on a machine with room to spare:
/// reclaim is the memcg's own.
fn limited(profile: Profile, ttl: u64) -> RunConfig {
    let mut c = RunConfig::new(
        MachineConfig::simple(4 * PAGES, 2 * PAGES),
        MemcgConfig {
            max: Some(RAM),
            ..Default::default()
        },
        workload(),
        PolicyKind::Mglru,
    );
    c.mglru.profile = profile;
    c.mglru.min_ttl_ms = ttl;
    c.check = true;
    c
}

fn run(c: &RunConfig) -> RunResult {
    sim::run(c, None, &mut |_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

const PROFILES: [Profile; 3] = [Profile::V6_1, Profile::V6_12, Profile::V7_2];

fn vm(r: &RunResult, s: Stat) -> u64 {
    r.vm(s).max(0) as u64
}

fn kills(r: &RunResult) -> (u64, u64) {
    let ev = r.memory_events.expect("events");
    (ev.oom_kill, vm(r, Stat::OomKill))
}

#[test]
fn the_ttl_kills_under_global_pressure_and_not_under_a_memcg_limit() {
    for p in PROFILES {
        // global pressure, TTL 1000 ms: the populate pass fills memory within milliseconds of
        // the memcg's creation, so when kswapd first runs no generation is a second old
        let r = run(&global(PolicyKind::Mglru, p, 1000));
        assert_eq!(kills(&r), (1, 1), "{p:?}: {:?}", r.error);
        assert!(
            r.error
                .as_deref()
                .is_some_and(|e| e.contains("killed by the OOM killer")),
            "{p:?}: the run ends with the kill: {:?}",
            r.error
        );
        let at = r.killed_after_steps.expect("the step of the kill");
        assert!(
            at > RAM / 2 && at < PAGES,
            "{p:?}: killed in the populate pass once memory ran low, after {at} steps"
        );
        assert_eq!(r.accesses, 0, "{p:?}: nothing measured");
        assert!(vm(&r, Stat::Pageoutrun) >= 1, "{p:?}: it was kswapd");
        assert_eq!(vm(&r, Stat::AllocstallMovable), 0, "{p:?}: not direct reclaim");

        // the TTL off: kswapd swaps and the run ends normally
        let r = run(&global(PolicyKind::Mglru, p, 0));
        assert_eq!(kills(&r), (0, 0), "{p:?}: {:?}", r.error);
        assert!(r.error.is_none() && r.killed_after_steps.is_none(), "{p:?}");
        assert_eq!(r.accesses, ACCESSES, "{p:?}");
        assert!(vm(&r, Stat::Pswpout) > PAGES - RAM, "{p:?}: swapped what did not fit");

        // a memcg limit, TTL 1000 ms: memcg reclaim swaps, kswapd never runs, nothing is killed
        let r = run(&limited(p, 1000));
        assert_eq!(kills(&r), (0, 0), "{p:?}: {:?}", r.error);
        assert!(r.error.is_none(), "{p:?}: {:?}", r.error);
        assert_eq!(r.accesses, ACCESSES, "{p:?}");
        assert_eq!(vm(&r, Stat::Pageoutrun), 0, "{p:?}: kswapd did not run");
        assert!(vm(&r, Stat::Pswpout) > PAGES - RAM, "{p:?}");
    }
}

#[test]
fn generations_older_than_the_ttl_are_not_protected() {
    // every access takes 1 ms: the populate pass alone lasts tens of seconds, so the oldest
    // generation is older than 1000 ms by the time kswapd runs, and it reclaims as with no TTL
    for p in PROFILES {
        let mut c = global(PolicyKind::Mglru, p, 1000);
        c.machine.clock = StepClock {
            access_ns: 1_000_000,
            ..StepClock::default()
        };
        let r = run(&c);
        assert_eq!(kills(&r), (0, 0), "{p:?}: {:?}", r.error);
        assert_eq!(r.accesses, ACCESSES, "{p:?}");
        assert!(vm(&r, Stat::Pswpout) > PAGES - RAM, "{p:?}");
    }
}

#[test]
fn the_classic_lru_has_no_ttl() {
    let r = run(&global(PolicyKind::Classic, Profile::V6_12, 1000));
    assert_eq!(kills(&r), (0, 0), "{:?}", r.error);
    assert_eq!(r.accesses, ACCESSES);
}

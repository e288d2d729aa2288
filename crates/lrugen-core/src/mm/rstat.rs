// SPDX-License-Identifier: GPL-2.0-only
//! memcg statistics as reclaim's heuristics read them: `lruvec_page_state()` of a memcg lruvec
//! returns the totals of the last rstat flush, not the live value. Updates
//! (`mod_lruvec_state`) go to per-CPU deltas and reach the readable totals only when
//! `cgroup_rstat_flush` runs (`mm/memcontrol.c`):
//!
//! - periodically, every `FLUSH_TIME` (2 s) from a delayed work item, whatever is pending
//!   (`flush_memcg_stats_dwork`);
//! - on demand by `mem_cgroup_flush_stats()`, only once enough updates are pending. The model
//!   follows 6.1: each CPU's updates are counted in batches of more than `MEMCG_CHARGE_BATCH`
//!   (64) into a global `stats_flush_threshold`, and a flush needs more batches than online CPUs
//!   (with one CPU: two batches, about 130 updates). 6.8 counts per memcg and flushes past 64 per
//!   CPU (`memcg_vmstats_needs_flush`); from 6.12 the reclaim path this matters for is
//!   rate-limited anyway, so the difference is not modelled;
//! - by `mem_cgroup_flush_stats_ratelimited()` (6.1's `mem_cgroup_flush_stats_delayed()`), as
//!   on demand but only when the last flush is more than `2 * FLUSH_TIME` old.
//!
//! Who reads what: the classic LRU's `prepare_scan_count` (refaults seen since the last
//! reclaim, `inactive_is_low`, `cache_trim_mode`, `file_is_tiny`) flushes on demand before it
//! reads until 6.11, rate-limited from 6.11 (switch `reclaim_ratelimited_stats_flush`); the
//! workingset refault test (`workingset_refault`, `workingset_test_recent`) flushes
//! rate-limited in every modelled kernel. Readers that a user sees (`memory.stat`, the run's
//! counters) read live values, as a read of `memory.stat` flushes first.

use super::vmstat::{Counters, Stat};
use super::Machine;
use crate::mm::memcg::MemcgId;

/// `FLUSH_TIME`: the period of the flush worker (`2UL*HZ`), ns.
pub const FLUSH_TIME_NS: u64 = 2_000_000_000;
/// `MEMCG_CHARGE_BATCH`: pending updates per CPU before a flush is worth it.
pub const MEMCG_CHARGE_BATCH: u64 = 64;
/// Online CPUs the flush threshold scales with (the model has one CPU, as have the kernel
/// fixtures' guests).
const NR_CPUS: u64 = 1;

/// Flushed copies of the lruvec statistics and the flush bookkeeping.
#[derive(Clone, Debug, Default)]
pub struct Rstat {
    /// Hierarchical lruvec statistics as of the last flush, indexed as `Machine::lruvec_stats`.
    pub flushed: Vec<Counters>,
    /// The CPU's update magnitude not yet counted in `batches` (`stats_updates`).
    pub updates: u64,
    /// Batches of `MEMCG_CHARGE_BATCH` pending updates (`stats_flush_threshold`).
    pub batches: u64,
    /// Virtual time of the last flush, ns.
    pub last_flush_ns: u64,
    /// When the flush worker runs next, ns.
    pub next_periodic_ns: u64,
}

impl Rstat {
    /// Fresh bookkeeping for `lruvecs` lruvecs (all zero, as the statistics start).
    pub fn new(lruvecs: usize) -> Self {
        Rstat {
            flushed: vec![Counters::default(); lruvecs],
            next_periodic_ns: FLUSH_TIME_NS,
            ..Default::default()
        }
    }

    /// Count `n` updates of magnitude 1 at once: the same state as `n` calls of
    /// [`Rstat::updated`]`(1)`, for the statistics of a batch of single pages changed together
    /// (`update_lru_sizes` after `isolate_lru_folios`).
    #[inline]
    pub fn updated_units(&mut self, n: u64) {
        // `updated(1)` carries `updates` from 0 to MEMCG_CHARGE_BATCH + 1, then counts one batch
        // and starts again from 0
        let period = MEMCG_CHARGE_BATCH + 1;
        debug_assert!(
            self.updates < period,
            "updated() leaves at most MEMCG_CHARGE_BATCH pending"
        );
        let first = period - self.updates;
        if n < first {
            self.updates += n;
            return;
        }
        let rest = n - first;
        self.batches += 1 + rest / period;
        self.updates = rest % period;
    }

    /// Count an update of magnitude `d` (`memcg_rstat_updated`).
    #[inline]
    pub fn updated(&mut self, d: u64) {
        self.updates += d;
        if self.updates > MEMCG_CHARGE_BATCH {
            self.batches += self.updates / MEMCG_CHARGE_BATCH;
            self.updates = 0;
        }
    }
}

impl Machine {
    /// `lruvec_page_state()` as reclaim reads it: the hierarchical value of the last flush.
    #[inline]
    pub fn lruvec_state_flushed(&self, memcg: MemcgId, node: usize, s: Stat) -> i64 {
        self.rstat.flushed[self.lruvec(memcg, node)].get(s)
    }

    /// Flush everything pending (`do_flush_stats` / `__mem_cgroup_flush_stats`).
    pub fn flush_stats_now(&mut self) {
        self.rstat.flushed.clone_from(&self.lruvec_stats);
        self.rstat.updates = 0;
        self.rstat.batches = 0;
        self.rstat.last_flush_ns = self.now_ns;
    }

    /// `mem_cgroup_flush_stats()`: flush if more than a batch per CPU is pending.
    pub fn flush_stats(&mut self) {
        if self.rstat.batches > NR_CPUS {
            self.flush_stats_now();
        }
    }

    /// `mem_cgroup_flush_stats_ratelimited()`: [`Machine::flush_stats`], but only when the last
    /// flush is older than two flush periods.
    pub fn flush_stats_ratelimited(&mut self) {
        if self.now_ns > self.rstat.last_flush_ns + 2 * FLUSH_TIME_NS {
            self.flush_stats();
        }
    }

    /// The flush worker, when due (`flush_memcg_stats_dwork`, requeued `FLUSH_TIME` later).
    #[inline]
    pub fn flush_stats_periodic(&mut self) {
        if self.now_ns >= self.rstat.next_periodic_ns {
            self.flush_stats_now();
            self.rstat.next_periodic_ns = self.now_ns + FLUSH_TIME_NS;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::memcg::ROOT_MEMCG;
    use crate::mm::MachineConfig;

    proptest::proptest! {
        /// A batch of unit updates leaves the bookkeeping as the updates one by one would, from
        /// any state that updates of any size can reach.
        #[test]
        fn units_at_once_equal_units_one_by_one(
            before in proptest::collection::vec(0u64..200, 0..20),
            n in 0u64..1000,
        ) {
            let mut a = Rstat::new(1);
            for d in before {
                a.updated(d);
            }
            let mut b = a.clone();
            for _ in 0..n {
                a.updated(1);
            }
            b.updated_units(n);
            proptest::prop_assert_eq!((a.updates, a.batches), (b.updates, b.batches));
        }
    }

    #[test]
    fn reads_see_the_last_flush_and_the_threshold_is_two_batches() {
        let mut m = Machine::new(MachineConfig::simple(1024, 0));
        m.mod_lruvec_state(ROOT_MEMCG, 0, Stat::NrActiveFile, 100);
        assert_eq!(m.lruvec_state(ROOT_MEMCG, 0, Stat::NrActiveFile), 100);
        assert_eq!(m.lruvec_state_flushed(ROOT_MEMCG, 0, Stat::NrActiveFile), 0);
        // 100 updates: one batch, not more than one per CPU
        m.flush_stats();
        assert_eq!(m.lruvec_state_flushed(ROOT_MEMCG, 0, Stat::NrActiveFile), 0);
        m.mod_lruvec_state(ROOT_MEMCG, 0, Stat::NrActiveFile, -65);
        m.flush_stats();
        assert_eq!(m.lruvec_state_flushed(ROOT_MEMCG, 0, Stat::NrActiveFile), 35);
    }

    #[test]
    fn ratelimited_waits_two_periods_and_the_worker_flushes_every_period() {
        let mut m = Machine::new(MachineConfig::simple(1024, 0));
        m.mod_lruvec_state(ROOT_MEMCG, 0, Stat::NrInactiveFile, 1000);
        m.now_ns = 2 * FLUSH_TIME_NS;
        m.flush_stats_ratelimited();
        assert_eq!(m.lruvec_state_flushed(ROOT_MEMCG, 0, Stat::NrInactiveFile), 0);
        m.now_ns += 1;
        m.flush_stats_ratelimited();
        assert_eq!(m.lruvec_state_flushed(ROOT_MEMCG, 0, Stat::NrInactiveFile), 1000);
        // the worker: due at FLUSH_TIME, then a period after each run, pending or not
        m.mod_lruvec_state(ROOT_MEMCG, 0, Stat::NrInactiveFile, 1);
        m.flush_stats_periodic();
        assert_eq!(m.lruvec_state_flushed(ROOT_MEMCG, 0, Stat::NrInactiveFile), 1001);
        let next = m.rstat.next_periodic_ns;
        assert_eq!(next, m.now_ns + FLUSH_TIME_NS);
        m.mod_lruvec_state(ROOT_MEMCG, 0, Stat::NrInactiveFile, 1);
        m.now_ns = next - 1;
        m.flush_stats_periodic();
        assert_eq!(m.lruvec_state_flushed(ROOT_MEMCG, 0, Stat::NrInactiveFile), 1001);
        m.now_ns = next;
        m.flush_stats_periodic();
        assert_eq!(m.lruvec_state_flushed(ROOT_MEMCG, 0, Stat::NrInactiveFile), 1002);
    }
}

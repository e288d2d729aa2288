// SPDX-License-Identifier: GPL-2.0-only
//! Lock contention in virtual time: where the kernel serialises CPUs that reclaim at once.
//!
//! The engine executes each operation atomically at its start, so two CPUs never interleave in
//! the machine; this module puts back what they would have waited for. An operation's holds of an
//! lruvec's `lru_lock` ([`crate::mm::LockHold`], logged by the machine at the kernel's lock sites)
//! are laid out on the operation's CPU time, each at the point of the operation's work where it
//! was taken, and each is placed on that lock's timeline: the first gap at or after the moment it
//! is wanted that is long enough for it. The time until then is spent spinning (the kernel's
//! queued spinlock: the waiter's CPU is busy, so the wait is CPU time of the task or kswapd). An
//! acquisition after another CPU held the lock also pays for moving the lock's cache line (and the
//! lists' heads) from that CPU ([`crate::sim::engine::Costs::lock_bounce_ns`]).
//!
//! Holds already reserved by earlier operations keep their places (they started earlier), so a
//! later operation fits into their gaps or queues behind them: first come, first served, as a
//! queued spinlock serves its waiters. With one CPU nothing ever waits; the more CPUs reclaim at
//! once, the more of the lock's time is taken and the longer each waits, as in the kernel.
//!
//! Per lock the timeline is a short sorted list of the holds not yet in the past (the engine's
//! clock only moves forward, so holds that ended before it are dropped): the cost is per lock
//! hold, a few per reclaim batch of 32 folios, never per page access.

/// One lock's reserved holds, in order of start, without overlap: (start, end, CPU).
#[derive(Clone, Debug, Default)]
struct Timeline {
    busy: Vec<(u64, u64, u32)>,
    /// The CPU of the latest hold dropped from `busy` (`u32::MAX`: none yet).
    last_cpu: u32,
}

/// What one acquisition cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acquired {
    /// When the hold began (ns).
    pub start: u64,
    /// Time spent spinning before it (ns).
    pub wait_ns: u64,
    /// Whether the previous holder was another CPU (the hold then includes the line transfer).
    pub bounced: bool,
}

/// The timelines of a set of locks indexed densely (one per lruvec).
#[derive(Clone, Debug, Default)]
pub struct Locks {
    locks: Vec<Timeline>,
}

impl Locks {
    /// No lock held yet.
    pub fn new() -> Self {
        Locks::default()
    }

    /// Take lock `lock` on `cpu` at time `t` for `hold_ns` (plus `bounce_ns` when the previous
    /// holder was another CPU). Holds that ended at or before `horizon` (no later acquisition is
    /// wanted before it) are forgotten first.
    pub fn acquire(&mut self, lock: usize, t: u64, hold_ns: u64, cpu: u32, bounce_ns: u64, horizon: u64) -> Acquired {
        if lock >= self.locks.len() {
            self.locks.resize(
                lock + 1,
                Timeline {
                    busy: Vec::new(),
                    last_cpu: u32::MAX,
                },
            );
        }
        let tl = &mut self.locks[lock];
        let gone = tl.busy.iter().take_while(|h| h.1 <= horizon).count();
        if gone > 0 {
            tl.last_cpu = tl.busy[gone - 1].2;
            tl.busy.drain(..gone);
        }
        if hold_ns == 0 && bounce_ns == 0 {
            // a free hold takes no time and keeps no one waiting
            return Acquired {
                start: t,
                wait_ns: 0,
                bounced: false,
            };
        }
        // the first gap at or after t long enough for the hold with a line transfer
        let need = hold_ns + bounce_ns;
        let mut s = t;
        let mut at = tl.busy.len();
        for (j, h) in tl.busy.iter().enumerate() {
            if h.1 <= s {
                continue;
            }
            if h.0 >= s + need {
                at = j;
                break;
            }
            s = h.1;
        }
        // the holder before it: the hold ending latest at or before s
        let prev = tl.busy[..at].last().map_or(tl.last_cpu, |h| h.2);
        let bounced = prev != u32::MAX && prev != cpu;
        let end = s + hold_ns + if bounced { bounce_ns } else { 0 };
        tl.busy.insert(at, (s, end, cpu));
        Acquired {
            start: s,
            wait_ns: s - t,
            bounced,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cpu_never_waits_and_never_bounces() {
        let mut l = Locks::new();
        let a = l.acquire(0, 0, 100, 0, 50, 0);
        let b = l.acquire(0, 100, 100, 0, 50, 0);
        assert_eq!((a.wait_ns, a.bounced, b.wait_ns, b.bounced), (0, false, 0, false));
    }

    #[test]
    fn a_second_cpu_queues_behind_the_holder_and_pays_the_transfer() {
        let mut l = Locks::new();
        l.acquire(0, 0, 100, 0, 50, 0);
        let b = l.acquire(0, 40, 100, 1, 50, 0);
        assert_eq!((b.start, b.wait_ns, b.bounced), (100, 60, true));
        // a third fits in no gap before 250 (100 + 100 + 50)
        let c = l.acquire(0, 10, 10, 2, 0, 0);
        assert_eq!(c.start, 250);
    }

    #[test]
    fn a_short_hold_fits_into_a_gap() {
        let mut l = Locks::new();
        l.acquire(0, 0, 100, 0, 0, 0);
        l.acquire(0, 300, 100, 0, 0, 0);
        let c = l.acquire(0, 50, 100, 1, 0, 0);
        assert_eq!((c.start, c.wait_ns), (100, 50));
        let d = l.acquire(0, 50, 150, 1, 0, 0);
        assert_eq!(d.start, 400);
    }

    #[test]
    fn locks_are_independent_and_the_past_is_forgotten() {
        let mut l = Locks::new();
        l.acquire(0, 0, 100, 0, 0, 0);
        assert_eq!(l.acquire(1, 0, 100, 1, 0, 0).wait_ns, 0);
        let b = l.acquire(0, 500, 10, 1, 7, 500);
        assert_eq!((b.wait_ns, b.bounced), (0, true));
        assert!(l.locks[0].busy.len() == 1);
    }
}

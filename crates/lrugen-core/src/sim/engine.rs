// SPDX-License-Identifier: GPL-2.0-only
//! The virtual-time engine: tasks on CPUs, devices with queues, kswapd on a CPU of its own.
//!
//! Each task issues its operations one after another. An operation runs when its task is ready and
//! a CPU is free; the kernel executes it (faults, allocation, reclaim), and the engine prices what
//! it did: CPU time for the access or fault, for the direct reclaim it had to do (folios scanned,
//! rmap walks, PTEs walked), for compressing or decompressing zram pages; and I/O: the pages read
//! from storage or swap are one request the task waits for, behind whatever the device is busy
//! with; swap-out and writeback are submitted without waiting, but occupy the device. The latency
//! of an operation is from the moment its task was ready to its completion, as fio's completion
//! latency is.
//!
//! kswapd is a task of its own ([`KswapdMode::Task`], the default): an allocation that wakes it
//! only marks the node, and kswapd then runs `balance_pgdat` one priority pass at a time on
//! whichever CPU is free, each pass priced like a task's reclaim and occupying that CPU. Meanwhile
//! the tasks keep allocating down to the min watermark and then reclaim directly, so a kswapd that
//! falls behind shows up as direct reclaim and allocation stalls, as on a real machine.
//! [`KswapdMode::Inline`] runs it synchronously inside the waking allocation (the model without
//! the engine), pricing its work on another CPU.
//!
//! Operations and kswapd passes execute atomically in the order they become ready; the virtual
//! clock the kernel sees never goes backwards. All costs are parameters with documented defaults.

use crate::kernel::{Access, AccessError, Kernel};
use crate::mm::device::{Device, DeviceSpec, DeviceStats};
use crate::mm::vmstat::Stat;
use crate::mm::{LockHold, LruLockSite, Work, CTX_KSWAPD, CTX_TASK};
use crate::reclaim::vmscan::{self, KswapdRun};
use crate::reclaim::{Policy, MAX_RECLAIM_RETRIES};
use crate::sim::locks::Locks;
use crate::workload::{Op, Stream};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Time costs of kernel events (ns). Every default is measured on this project's machine kind (a
/// 2-vCPU Intel Xeon KVM guest, kernel 6.18): the lock and list costs with user-space copies of
/// the kernel's operations (`benches/locks.rs`, `benches/lru_lock.rs`), the others on the running
/// kernel through the system call whose path is closest (`benches/kernel_costs.rs`); medians over
/// four runs, each a median of 7 rounds (docs/benchmarks.md, "Where the CPU costs come from").
/// Change them to match the machine you compare with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Costs {
    /// A buffered read or write of a cached page (syscall, page-cache lookup and copy). 1,000 ns:
    /// `cargo bench -p lrugen-core --bench kernel_costs`, a 4 KiB `pread` of a random page of a cached 256 MiB file, 944–992 ns (of which the
    /// page-cache lookup at a random index, from `mincore` on an unfaulted mapping, is 86–108 ns;
    /// 20 ns at the next index).
    pub read_hit_ns: u64,
    /// A load or store to a mapped, present page. 300 ns: the same bench, dependent loads to
    /// random pages of a 1 GiB buffer in 4 KiB pages (a TLB miss and a cache miss each), 276–295
    /// ns (202–215 ns in transparent huge pages; a page the TLB and caches hold costs a few ns).
    pub access_hit_ns: u64,
    /// A minor fault (zero-fill, or a page found in the page or swap cache; the LRU add is priced
    /// by the lock rows). 1,000 ns: the same bench, a file fault that finds its page in the page
    /// cache (nothing around it to map) 689–715 ns, an anonymous first write (allocation, charge,
    /// clearing) 1,193–1,287 ns.
    pub minor_fault_ns: u64,
    /// CPU time of a page-cache miss or major fault besides the I/O wait and the block layer
    /// (`block_io_ns`): folio allocation, charge, page-cache insert, the file system's read
    /// set-up. 2,000 ns: the same bench, buffered reads and mapped faults that miss on ext4 over a
    /// loop device minus that device's `O_DIRECT` read (−0.3–4.2 µs over four runs), and a
    /// swap-in fault from zram minus the decompression (1.6–1.9 µs).
    pub major_fault_ns: u64,
    /// Reclaim: per folio scanned (isolated, sorted or deactivated). 150 ns: the isolation of a
    /// cold folio (unlink from an LRU tail in no memory order, clear `PG_lru`, take a reference,
    /// link onto the isolation list; one cache miss), measured at 149–156 ns on this project's
    /// 2-core machine kind by `cargo bench -p lrugen-core --bench lru_lock`.
    pub per_folio_scanned_ns: u64,
    /// Reclaim: per mapping visited by an rmap walk. 80 ns: `cargo bench -p lrugen-core --bench kernel_costs`, memcg reclaim of a file
    /// mapped by 1, 2, 4 and 8 processes, the reclaimer's CPU per page against the mappings,
    /// halved (`folio_referenced` and `try_to_unmap` each walk them): 74–81 ns.
    pub per_rmap_walk_ns: u64,
    /// Aging: per PTE looked at by a page-table walk or look-around. 8 ns: the same bench,
    /// `/proc/self/clear_refs` (the kernel's closest walk; no MGLRU there), 25–27 ns per young PTE
    /// cleared and 1.0–1.5 ns per empty one (an old PTE MGLRU skips without its folio), weighed for
    /// a quarter of the PTEs young.
    pub per_pte_walked_ns: u64,
    /// Reclaim: CPU time to start the write of one page (swap-out: slot, swap cache, bio; the
    /// compression and the block layer are priced apart). 1,500 ns: the same bench, `MADV_PAGEOUT`
    /// of anonymous pages to zram minus the compression, 1.7–2.1 µs, less the isolation and rmap
    /// walk the engine prices apart and zram's bio handling.
    pub per_page_written_ns: u64,
    /// One uncontended acquisition and release of an lruvec's `lru_lock` whose cache line this
    /// CPU holds, per hold ([`crate::mm::LruLockSite`]). 11 ns: `cargo bench -p lrugen-core
    /// --bench locks` on this project's 2-core machine kind (a 2-vCPU Intel Xeon VM), 7.6–12.0 ns
    /// over six runs (a compare-and-swap and a release store; `spin_lock_irq`'s interrupt
    /// disable/enable is not included).
    #[serde(default = "default_lru_lock_ns")]
    pub lru_lock_ns: u64,
    /// More per acquisition when the previous holder was another CPU: the lock's cache line (and
    /// the list heads it guards) move between caches. 650 ns: the same bench, two threads pinned
    /// to the two CPUs taking the lock in turn, 220–750 ns per acquisition over six runs (median
    /// 656; the machine's cores are shared with other work, so the spread is wide). A bare-metal
    /// server moves a line between cores in about 100 ns; set this lower to model one.
    #[serde(default = "default_lock_bounce_ns")]
    pub lock_bounce_ns: u64,
    /// Per folio put back on an LRU list under the lock (`move_folios_to_lru`), and per folio of
    /// an `lru_add` flush (the same link at a list head of a folio in cache). 10 ns: the same
    /// bench, 6.6–14.4 ns over six runs.
    #[serde(default = "default_per_folio_putback_ns")]
    pub per_folio_putback_ns: u64,
    /// Per folio moved by an `activate`, `deactivate` or `rotate` flush (unlinked from a cold
    /// place in its list, linked at a head: its two neighbours miss the caches). 65 ns: the same
    /// bench, 58–77 ns over six runs.
    #[serde(default = "default_per_folio_moved_ns")]
    pub per_folio_moved_ns: u64,
    /// A benchmark request's own CPU time besides its page operations (client, network stack and
    /// server parsing: a memtier GET, a YCSB operation), charged when the request starts.
    #[serde(default = "default_request_ns")]
    pub request_ns: u64,
    /// Aging: per present PMD entry looked at by MGLRU's page-table walk (`walk_pmd_range`:
    /// its table mapped and locked), besides the PTEs of its table. 100 ns: `cargo bench -p lrugen-core --bench kernel_costs`,
    /// `clear_refs` over one present page per 2 MiB, at most 180–205 ns for the VMA, the PMD and
    /// its one PTE, and 0–150 ns left for the PMD once its empty PTEs are taken off.
    pub per_pmd_walked_ns: u64,
    /// Aging: per test or update of MGLRU's Bloom filter (`test_bloom_filter`,
    /// `update_bloom_filter`: two bits of a `hash_ptr` of the PTE table's address). 5 ns: the same
    /// bench, a user-space copy of the kernel's code (this kernel has no MGLRU), a test 1.9–2.0 ns
    /// and an update (a locked `or`) 8.4–8.8 ns with the filter in cache.
    pub bloom_op_ns: u64,
    /// Reclaim: per batched TLB flush after unmapping (`try_to_unmap_flush`, one per
    /// `shrink_folio_list` that unmapped a folio). 160 ns: the same bench, a full local flush
    /// (`mprotect` of pages 63 apart, above the single-page ceiling), 154–167 ns. The shootdown
    /// IPI to a CPU that runs the mm is not priced (the engine does not track which CPUs run an
    /// mm); the bench measures it at 14.3–16.9 µs on this VM (a VM exit each).
    pub tlb_flush_ns: u64,
    /// CPU of one block-layer request, submission to completion with the sleep and wake-up of
    /// the task that waits, per request as the engine gives the devices them: an operation's file
    /// reads (read-ahead included) as one, its swap-ins as one, its writeback as one, each
    /// swap-out its own; none for zram, whose compression prices its own work. So a page-cache
    /// miss costs `major_fault_ns` plus one of these.
    /// 5,500 ns: `cargo bench -p lrugen-core --bench kernel_costs`, 4 KiB `O_DIRECT` reads of a loop device over tmpfs (the loop worker's copy
    /// not charged), the reader's CPU minus a cached `pread`, 5.3–6.8 µs over four runs. The VM's
    /// virtio disk costs 31–35 µs (its submissions exit to the VMM), not used.
    pub block_io_ns: u64,
    /// Per swap slot allocated or freed, in the batches that take the swap device's lock
    /// (`si->lock`; [`crate::mm::Machine::swap_percpu_cluster`]): up to 6.12 the slots are
    /// scanned under that lock, whose hold is `lru_lock_ns` plus this per slot; from 6.15 under
    /// the CPU's own cluster's lock, and the device's lock is held `lru_lock_ns` to take a
    /// cluster. 5 ns: `cargo bench -p lrugen-core --bench kernel_costs -- swapslot`,
    /// a user-space copy of `scan_swap_map_slots` taking 64 free slots of a half-full cluster
    /// and `swap_entry_free` giving them back (`swap_map` bytes tested and set, the cluster's and
    /// the device's counts kept), 5.2–5.3 ns per slot each way over four runs.
    pub per_swap_slot_ns: u64,
}

/// 10 µs a request: Redis GETs of 1000-byte values over loopback on a 2-core machine (this
/// project's CI kind), `redis-benchmark -t get -d 1000 -c 1 -P 8`, ran at 100,857 requests/s
/// (9.9 µs each); unpipelined, 14,400/s (69 µs a round trip, mostly waiting). memtier's seeds
/// pipeline 8.
fn default_request_ns() -> u64 {
    10_000
}

fn default_lru_lock_ns() -> u64 {
    11
}
fn default_lock_bounce_ns() -> u64 {
    650
}
fn default_per_folio_putback_ns() -> u64 {
    10
}
fn default_per_folio_moved_ns() -> u64 {
    65
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            read_hit_ns: 1_000,
            access_hit_ns: 300,
            minor_fault_ns: 1_000,
            major_fault_ns: 2_000,
            per_folio_scanned_ns: 150,
            per_rmap_walk_ns: 80,
            per_pte_walked_ns: 8,
            per_page_written_ns: 1_500,
            lru_lock_ns: default_lru_lock_ns(),
            lock_bounce_ns: default_lock_bounce_ns(),
            per_folio_putback_ns: default_per_folio_putback_ns(),
            per_folio_moved_ns: default_per_folio_moved_ns(),
            request_ns: default_request_ns(),
            per_pmd_walked_ns: 100,
            bloom_op_ns: 5,
            tlb_flush_ns: 160,
            block_io_ns: 5_500,
            per_swap_slot_ns: 5,
        }
    }
}

/// How kswapd runs under the engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KswapdMode {
    /// A task of its own, one `balance_pgdat` priority pass per event, concurrent with the tasks.
    #[default]
    Task,
    /// Synchronously inside the allocation that wakes it (its CPU time is charged to another CPU).
    Inline,
}

/// The engine's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    /// CPUs.
    pub cpus: u32,
    /// Storage device of the files.
    pub storage: DeviceSpec,
    /// Swap device.
    pub swap_device: DeviceSpec,
    /// Event costs.
    pub costs: Costs,
    /// Think time between two operations of a task (ns).
    pub think_ns: u64,
    /// How kswapd runs.
    pub kswapd: KswapdMode,
    /// Model lock contention ([`crate::sim::locks`]): CPUs that hold an lruvec's `lru_lock` at
    /// once wait for each other, and an acquisition after another CPU pays
    /// [`Costs::lock_bounce_ns`]. Off: every hold costs its uncontended price only.
    pub locks: bool,
    /// fio's `time_based` + `runtime`: no task starts an operation at or after this virtual
    /// time (ns from the start of the run; 0: none), so that every job runs for the same time
    /// with the others instead of the first to finish its operations leaving the memcg to the
    /// rest. A task whose stream ends sooner stops sooner.
    pub runtime_ns: u64,
    /// fio's `ramp_time`: operations that start before this virtual time (ns) run but are not
    /// measured (throughput, latency and the operation counts are of the rest); 0: none.
    pub ramp_ns: u64,
    /// The scheduler's slice (ns) when kswapd and a task share a CPU: a kswapd woken while a
    /// task runs on the CPU it would take waits until that task has run this long since it was
    /// picked (EEVDF's `RUN_TO_PARITY`: wakeup preemption does not cut the current task's slice
    /// short), and a task then waits while kswapd runs its own slice, unless kswapd finishes
    /// first. The kernel's `sysctl_sched_base_slice` is 0.75 ms × (1 + ilog2(min(CPUs, 8)))
    /// (`kernel/sched/fair.c`, `update_sysctl`). 0: kswapd takes the CPU at the end of the
    /// operation running there.
    pub sched_slice_ns: u64,
    /// Seed of the devices' latency draws ([`crate::mm::device::ServiceTime`]); `sim::run` sets
    /// it from the run's seed.
    #[serde(skip)]
    pub seed: u64,
    /// Measure each job apart ([`EngineResult::jobs`]): `sim::run` then fills
    /// [`EngineConfig::task_groups`] with the job of each task (a fio job file's output formats
    /// need it; off by default, as each job costs two latency histograms).
    #[serde(skip)]
    pub per_job: bool,
    /// The job (0-based, in the order `sim::task_streams` makes them) each task belongs to: a
    /// job's in-flight I/Os (fio's `iodepth`) or clients are tasks of one job. Empty: no
    /// per-job measurement.
    #[serde(skip)]
    pub task_groups: Vec<u32>,
    /// With `per_job`: the entry of [`EngineResult::jobs`] each job is measured in (fio's
    /// `group_reporting` measures a group's jobs as one); empty: each job its own.
    #[serde(skip)]
    pub job_entries: Vec<u32>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            cpus: 2,
            storage: DeviceSpec::preset("nvme").expect("preset"),
            swap_device: DeviceSpec::preset("nvme").expect("preset"),
            costs: Costs::default(),
            think_ns: 0,
            kswapd: KswapdMode::Task,
            locks: true,
            runtime_ns: 0,
            ramp_ns: 0,
            sched_slice_ns: 0,
            seed: 0,
            per_job: false,
            task_groups: Vec::new(),
            job_entries: Vec::new(),
        }
    }
}

/// Latency statistics of a set of operations (ns), as fio reports completion latency.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LatencyStats {
    /// Operations.
    pub count: u64,
    /// Minimum.
    pub min_ns: u64,
    /// Maximum.
    pub max_ns: u64,
    /// Mean.
    pub mean_ns: f64,
    /// Standard deviation.
    pub stdev_ns: f64,
    /// (percentile, value) for fio's default list.
    pub percentiles: Vec<(f64, u64)>,
}

/// fio's default completion-latency percentiles.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
];

impl LatencyStats {
    fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return LatencyStats::default();
        }
        LatencyStats {
            count: h.len(),
            min_ns: h.min(),
            max_ns: h.max(),
            mean_ns: h.mean(),
            stdev_ns: h.stdev(),
            percentiles: FIO_PERCENTILES
                .iter()
                .map(|&p| (p, h.value_at_quantile(p / 100.0)))
                .collect(),
        }
    }
    /// The value at percentile `p` (one of [`FIO_PERCENTILES`]), or 0.
    pub fn percentile(&self, p: f64) -> u64 {
        self.percentiles.iter().find(|x| x.0 == p).map_or(0, |x| x.1)
    }
}

/// Latency of one kind of benchmark request.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RequestStats {
    /// The benchmark's name for it (`READ`, `UPDATE`, `GET`, …).
    pub kind: String,
    /// Requests completed.
    pub count: u64,
    /// Requests per second of virtual time.
    pub per_sec: f64,
    /// Their latency.
    pub latency: LatencyStats,
}

/// What one job did in one direction (fio's `read` or `write`), measured operations only.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DirStats {
    /// Operations (each one 4 KiB page read or written).
    pub ios: u64,
    /// Of which hits (the page was resident).
    pub hits: u64,
    /// Their completion latency (from the moment the task was ready to the completion).
    pub lat: LatencyStats,
}

/// What one job did ([`EngineConfig::task_groups`]): per direction, and the span of its measured
/// operations.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct JobStats {
    /// Reads (`Op::Read`, and loads).
    pub read: DirStats,
    /// Writes (`Op::Write`, and stores).
    pub write: DirStats,
    /// Virtual time the first measured operation of the job was ready (ns since the run began).
    pub start_ns: u64,
    /// Virtual time its last measured operation completed (ns since the run began).
    pub end_ns: u64,
}

impl JobStats {
    /// The job's measured run time (`end_ns - start_ns`; 0 when it measured nothing).
    pub fn runtime_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// What the holds of a lock cost one kind of holder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LockWait {
    /// Acquisitions.
    pub acquisitions: u64,
    /// Of which had to wait.
    pub contended: u64,
    /// Of which followed a holder on another CPU.
    pub bounced: u64,
    /// CPU time spent spinning for the lock (ns).
    pub wait_ns: u64,
    /// CPU time of the cache-line transfers (ns).
    pub bounce_ns: u64,
}

impl LockWait {
    fn add(&mut self, o: &LockWait) {
        self.acquisitions += o.acquisitions;
        self.contended += o.contended;
        self.bounced += o.bounced;
        self.wait_ns += o.wait_ns;
        self.bounce_ns += o.bounce_ns;
    }
}

/// `lru_lock` contention per holder ([`crate::sim::locks`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LruLockStats {
    /// Direct reclaim (included in [`EngineResult::direct_reclaim_ns`]).
    pub direct: LockWait,
    /// kswapd (included in [`EngineResult::kswapd_ns`]).
    pub kswapd: LockWait,
    /// Outside reclaim: the folio batch flushes (`lru_add`, `activate`, `rotate`, `deactivate`)
    /// and `lru_note_cost_refault`, in the tasks' operations.
    pub outside: LockWait,
}

/// Reclaim CPU by mechanism (ns, priced as [`Costs`] prices them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReclaimSplit {
    /// List work: folios isolated and sorted, put back, and the `lru_lock` holds' own cost.
    pub list_ns: u64,
    /// rmap walks (`folio_referenced`, `try_to_unmap`).
    pub rmap_ns: u64,
    /// Page-table walks: PTEs and PMDs looked at by aging and look-around, Bloom filter work.
    pub walk_ns: u64,
    /// Batched TLB flushes after unmapping.
    pub tlb_ns: u64,
    /// Waiting for `lru_lock` held by another CPU, and moving its cache line.
    pub lock_wait_ns: u64,
    /// Starting the write of the pages reclaimed dirty or anon (swap-out, writeback): the CPU
    /// per page, the block requests, zram's compression.
    pub writeout_ns: u64,
}

impl ReclaimSplit {
    /// The mechanisms' names and values, in order.
    pub fn parts(&self) -> [(&'static str, u64); 6] {
        [
            ("list work (isolate, sort, put back, lru_lock holds)", self.list_ns),
            ("rmap walks", self.rmap_ns),
            ("page-table walks (PTEs, PMDs, Bloom filter)", self.walk_ns),
            ("TLB flushes", self.tlb_ns),
            ("lru_lock waits and cache-line bounces", self.lock_wait_ns),
            ("write-out (swap-out, writeback, compression)", self.writeout_ns),
        ]
    }

    /// Their sum.
    pub fn total(&self) -> u64 {
        self.parts().iter().map(|p| p.1).sum()
    }

    fn of(c: &Costs, w: &Work, lock: &LockWait, writeout_ns: u64) -> ReclaimSplit {
        ReclaimSplit {
            list_ns: w.folios_scanned * c.per_folio_scanned_ns
                + w.lru_lock_rounds * c.lru_lock_ns
                + w.folios_putback * c.per_folio_putback_ns,
            rmap_ns: w.rmap_walks * c.per_rmap_walk_ns,
            walk_ns: w.ptes_walked * c.per_pte_walked_ns
                + w.pmds_walked * c.per_pmd_walked_ns
                + w.bloom_ops * c.bloom_op_ns,
            tlb_ns: w.tlb_flushes * c.tlb_flush_ns,
            lock_wait_ns: lock.wait_ns + lock.bounce_ns,
            writeout_ns,
        }
    }

    fn add(&mut self, o: &ReclaimSplit) {
        self.list_ns += o.list_ns;
        self.rmap_ns += o.rmap_ns;
        self.walk_ns += o.walk_ns;
        self.tlb_ns += o.tlb_ns;
        self.lock_wait_ns += o.lock_wait_ns;
        self.writeout_ns += o.writeout_ns;
    }
}

/// Where the measured operations' time went: the sum over them of their completion latency
/// (from the moment the task was ready to the completion), split into parts that sum to it
/// exactly. For one task without think time this is the run's elapsed time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TimeSplit {
    /// The sum of the measured operations' latencies (ns).
    pub ops_ns: u64,
    /// Waiting for a CPU last held by kswapd.
    pub cpu_queue_kswapd_ns: u64,
    /// Waiting for a CPU last held by another task.
    pub cpu_queue_tasks_ns: u64,
    /// The CPU of hits and minor faults, and of benchmark requests.
    pub access_ns: u64,
    /// The CPU of misses: the fault's own (`major_fault_ns`), the read requests' block-layer CPU,
    /// zram's decompression.
    pub miss_cpu_ns: u64,
    /// Waiting for the devices' reads.
    pub io_wait_ns: u64,
    /// Direct reclaim in the operations, by mechanism.
    pub direct: ReclaimSplit,
    /// Folio batch flushes outside reclaim and the swap device's lock, with their lock waits.
    pub batch_ns: u64,
}

impl TimeSplit {
    /// Add `o`'s parts to these.
    pub fn add(&mut self, o: &TimeSplit) {
        self.ops_ns += o.ops_ns;
        self.cpu_queue_kswapd_ns += o.cpu_queue_kswapd_ns;
        self.cpu_queue_tasks_ns += o.cpu_queue_tasks_ns;
        self.access_ns += o.access_ns;
        self.miss_cpu_ns += o.miss_cpu_ns;
        self.io_wait_ns += o.io_wait_ns;
        self.direct.add(&o.direct);
        self.batch_ns += o.batch_ns;
    }

    /// The parts' sum (`ops_ns` by construction).
    pub fn total(&self) -> u64 {
        self.cpu_queue_kswapd_ns
            + self.cpu_queue_tasks_ns
            + self.access_ns
            + self.miss_cpu_ns
            + self.io_wait_ns
            + self.direct.total()
            + self.batch_ns
    }
}

/// What the engine measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EngineResult {
    /// Tasks run.
    pub tasks: u32,
    /// Measured operations completed.
    pub ops: u64,
    /// Of which hits (page resident).
    pub hits: u64,
    /// Of which minor faults.
    pub minor_faults: u64,
    /// Of which misses (I/O).
    pub misses: u64,
    /// Virtual time from the first measured operation to the last completion (ns).
    pub elapsed_ns: u64,
    /// Virtual time from the run's start to its last completion, fio's ramp included (ns): how
    /// long the kernel's timers ran.
    pub run_ns: u64,
    /// Operations per second of virtual time.
    pub iops: f64,
    /// Bytes per second of virtual time (4 KiB per operation).
    pub bytes_per_sec: f64,
    /// Completion latency of measured operations.
    pub clat: LatencyStats,
    /// Benchmark requests that span several page operations (YCSB operations, memtier GETs; see
    /// [`crate::workload::Stream::request`]), per kind in order of name: latency from the moment
    /// the task was ready for its first page operation to the completion of its last. Empty for
    /// workloads whose every operation is a request (fio).
    pub requests: Vec<RequestStats>,
    /// The latency of all those requests together (empty when there are none).
    pub request_latency: LatencyStats,
    /// CPU time of direct reclaim (tasks stalled reclaiming), ns.
    pub direct_reclaim_ns: u64,
    /// CPU time of kswapd, ns.
    pub kswapd_ns: u64,
    /// Reclaim work done by tasks (direct reclaim).
    pub direct_work: Work,
    /// Reclaim work done by kswapd.
    pub kswapd_work: Work,
    /// The measured operations' time, by part.
    pub time: TimeSplit,
    /// The same per task, in runs with `lrugen explain`'s recorder on (empty otherwise: nothing
    /// per operation without it).
    #[serde(skip)]
    pub task_time: Vec<TimeSplit>,
    /// kswapd's CPU by mechanism (`kswapd_ns` less its batch flushes, the swap lock's waits and
    /// the lock waits outside reclaim).
    pub kswapd_split: ReclaimSplit,
    /// `lru_lock` acquisitions and contention.
    pub lru_lock: LruLockStats,
    /// The swap device's lock (`si->lock`), in every context: slot-cache refills and returns
    /// (6.1, 6.12) or new clusters (from 6.15); its time is CPU of the context that took it.
    pub swap_lock: LockWait,
    /// Storage device statistics.
    pub storage: DeviceStats,
    /// Swap device statistics.
    pub swap: DeviceStats,
    /// Per job (or per entry of [`EngineConfig::job_entries`]), when
    /// [`EngineConfig::task_groups`] gave each task its job (empty otherwise).
    #[serde(skip)]
    pub jobs: Vec<JobStats>,
    /// Why a task stopped early, if one did.
    pub error: Option<String>,
    /// Why the whole run stopped: its state went over the memory budget (`budget::check_machine`).
    #[serde(skip)]
    pub budget_error: Option<String>,
}

/// Counters an operation's cost is computed from.
#[derive(Clone, Copy, Default)]
struct Snap {
    pgpgin: i64,
    pswpin: i64,
    pswpout: i64,
    pgpgout: i64,
    work: [Work; 2],
}

fn snap<P: Policy>(k: &mut Kernel<P>) -> Snap {
    Snap {
        pgpgin: k.m.events.get(Stat::Pgpgin),
        pswpin: k.m.events.get(Stat::Pswpin),
        pswpout: k.m.events.get(Stat::Pswpout),
        pgpgout: k.m.events.get(Stat::Pgpgout),
        work: k.m.work(),
    }
}

/// Pages read and written between two snapshots, per device.
struct Io {
    file_reads: u64,
    swap_reads: u64,
    file_writes: u64,
    swap_writes: u64,
}

impl Io {
    /// Block requests of the reads, as the devices are given them: an operation's file pages
    /// (read-ahead included) as one, its swap-ins as one; none for zram, a memory copy.
    fn read_requests(&self, zram: bool) -> u64 {
        u64::from(self.file_reads > 0) + u64::from(self.swap_reads > 0 && !zram)
    }

    /// Block requests of the writes: the writeback of an operation as one, each swap-out its own
    /// (none for zram).
    fn write_requests(&self, zram: bool) -> u64 {
        u64::from(self.file_writes > 0) + if zram { 0 } else { self.swap_writes }
    }

    fn between(s0: &Snap, s1: &Snap) -> Io {
        let swap_reads = (s1.pswpin - s0.pswpin).max(0) as u64;
        let swap_writes = (s1.pswpout - s0.pswpout).max(0) as u64;
        Io {
            file_reads: ((s1.pgpgin - s0.pgpgin) / 4 - (s1.pswpin - s0.pswpin)).max(0) as u64,
            swap_reads,
            file_writes: ((s1.pgpgout - s0.pgpgout) / 4 - (s1.pswpout - s0.pswpout)).max(0) as u64,
            swap_writes,
        }
    }
}

/// The earliest free CPU (ties: the lowest index, for determinism).
fn earliest_cpu(cpu_free: &[u64]) -> (usize, u64) {
    let (cpu, &free) = cpu_free
        .iter()
        .enumerate()
        .min_by_key(|&(j, &t)| (t, j))
        .expect("a cpu");
    (cpu, free)
}

/// CPU time of reclaim work, uncontended.
fn work_ns(c: &Costs, w: &Work) -> u64 {
    w.folios_scanned * c.per_folio_scanned_ns
        + w.rmap_walks * c.per_rmap_walk_ns
        + w.ptes_walked * c.per_pte_walked_ns
        + w.pmds_walked * c.per_pmd_walked_ns
        + w.bloom_ops * c.bloom_op_ns
        + w.tlb_flushes * c.tlb_flush_ns
        + w.lru_lock_rounds * c.lru_lock_ns
        + w.folios_putback * c.per_folio_putback_ns
}

/// CPU time of the lock holds outside reclaim (folio batch flushes), uncontended.
fn batch_ns(c: &Costs, w: &Work) -> u64 {
    w.batch_rounds * c.lru_lock_ns
        + w.folios_added * c.per_folio_putback_ns
        + w.folios_moved * c.per_folio_moved_ns
        + w.swap_lock_rounds * c.lru_lock_ns
        + w.swap_slots_locked * c.per_swap_slot_ns
}

/// How long a hold lasts, uncontended.
fn hold_ns(c: &Costs, h: &LockHold) -> u64 {
    let per = match h.site {
        LruLockSite::Isolate => c.per_folio_scanned_ns,
        LruLockSite::Putback | LruLockSite::Add => c.per_folio_putback_ns,
        LruLockSite::Batch => c.per_folio_moved_ns,
        // generation updates of folios whose PTEs were just walked
        LruLockSite::Seq => c.per_pte_walked_ns,
        LruLockSite::Swap => c.per_swap_slot_ns,
    };
    c.lru_lock_ns + u64::from(h.folios) * per
}

/// The waits of the holds of context `ctx` logged by an operation that ran on `cpu` from `t0`,
/// whose work in that context began at `base`: (reclaim, outside reclaim, the swap device's lock).
#[allow(clippy::too_many_arguments)]
fn price_locks(
    locks: &mut Locks,
    log: &[LockHold],
    ctx: usize,
    t0: u64,
    base: &Work,
    cpu: usize,
    c: &Costs,
    horizon: u64,
) -> (LockWait, LockWait, LockWait) {
    let (mut rec, mut out, mut swap) = (LockWait::default(), LockWait::default(), LockWait::default());
    let mut waited = 0;
    for h in log.iter().filter(|h| usize::from(h.ctx) == ctx) {
        let d = work_delta(base, &h.before);
        let t = t0 + work_ns(c, &d) + batch_ns(c, &d) + waited;
        // the swap device's lock first, then one lock per lruvec
        let lock = match h.site {
            LruLockSite::Swap => 0,
            _ => h.lruvec as usize + 1,
        };
        let a = locks.acquire(lock, t, hold_ns(c, h), cpu as u32, c.lock_bounce_ns, horizon);
        waited += a.wait_ns + if a.bounced { c.lock_bounce_ns } else { 0 };
        let w = match h.site {
            LruLockSite::Add | LruLockSite::Batch => &mut out,
            LruLockSite::Swap => &mut swap,
            _ => &mut rec,
        };
        w.acquisitions += 1;
        w.contended += u64::from(a.wait_ns > 0);
        w.bounced += u64::from(a.bounced);
        w.wait_ns += a.wait_ns;
        w.bounce_ns += if a.bounced { c.lock_bounce_ns } else { 0 };
    }
    (rec, out, swap)
}

fn work_delta(a: &Work, b: &Work) -> Work {
    Work {
        folios_scanned: b.folios_scanned - a.folios_scanned,
        rmap_walks: b.rmap_walks - a.rmap_walks,
        ptes_walked: b.ptes_walked - a.ptes_walked,
        pmds_walked: b.pmds_walked - a.pmds_walked,
        bloom_ops: b.bloom_ops - a.bloom_ops,
        tlb_flushes: b.tlb_flushes - a.tlb_flushes,
        lru_lock_rounds: b.lru_lock_rounds - a.lru_lock_rounds,
        folios_putback: b.folios_putback - a.folios_putback,
        batch_rounds: b.batch_rounds - a.batch_rounds,
        folios_added: b.folios_added - a.folios_added,
        folios_moved: b.folios_moved - a.folios_moved,
        swap_lock_rounds: b.swap_lock_rounds - a.swap_lock_rounds,
        swap_slots_locked: b.swap_slots_locked - a.swap_slots_locked,
    }
}

fn add_work(a: &mut Work, d: &Work) {
    a.folios_scanned += d.folios_scanned;
    a.rmap_walks += d.rmap_walks;
    a.ptes_walked += d.ptes_walked;
    a.pmds_walked += d.pmds_walked;
    a.bloom_ops += d.bloom_ops;
    a.tlb_flushes += d.tlb_flushes;
    a.lru_lock_rounds += d.lru_lock_rounds;
    a.folios_putback += d.folios_putback;
    a.batch_rounds += d.batch_rounds;
    a.folios_added += d.folios_added;
    a.folios_moved += d.folios_moved;
    a.swap_lock_rounds += d.swap_lock_rounds;
    a.swap_slots_locked += d.swap_slots_locked;
}

/// Run `tasks` (one stream per task) on kernel `k` in virtual time.
pub fn run<P: Policy>(k: &mut Kernel<P>, tasks: Vec<Stream>, cfg: &EngineConfig) -> EngineResult {
    run_sampled(k, tasks, cfg, None, &mut |_, _| {})
}

/// [`run`], calling `sample(k, result so far)` every `every` operations (and at the end).
pub fn run_sampled<P: Policy>(
    k: &mut Kernel<P>,
    mut tasks: Vec<Stream>,
    cfg: &EngineConfig,
    every: Option<u64>,
    sample: &mut dyn FnMut(&Kernel<P>, &EngineResult),
) -> EngineResult {
    let mut steps = 0u64;
    let c = &cfg.costs;
    let mix = crate::workload::dist::mix64;
    let mut storage = Device::seeded(cfg.storage.clone(), mix(cfg.seed ^ 0x0570_7a6e));
    let mut swapdev = Device::seeded(cfg.swap_device.clone(), mix(cfg.seed ^ 0x05a7_a9de));
    let zram = cfg.swap_device.compression_ratio.is_some();
    let mut cpu_free = vec![0u64; cfg.cpus.max(1) as usize];
    // whether kswapd held each CPU last (the time split's CPU queue parts)
    let mut cpu_kswapd = vec![false; cpu_free.len()];
    // with EngineConfig::sched_slice_ns: when the task or kswapd on each CPU was picked, and
    // each task's ready time while it waits for kswapd's slice to end
    let mut cpu_since = vec![0u64; cpu_free.len()];
    let mut held_since: Vec<Option<u64>> = vec![None; tasks.len()];
    let mut hist = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).expect("histogram bounds");
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = (0..tasks.len()).map(|i| Reverse((0, i))).collect();
    let mut r = EngineResult {
        tasks: tasks.len() as u32,
        ..Default::default()
    };
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut now = k.m.now_ns;
    let base = now;
    // kswapd of node `n` is heap entry `ntasks + n`
    let ntasks = tasks.len();
    let kswapd_task = cfg.kswapd == KswapdMode::Task && k.m.cfg.kswapd;
    let saved_async = std::mem::replace(&mut k.m.kswapd_async, kswapd_task);
    let saved_log = std::mem::replace(&mut k.m.lock_log_on, cfg.locks);
    k.m.lock_log.clear();
    let mut locks = Locks::new();
    let mut kswapd: Vec<Option<KswapdRun>> = vec![None; k.m.nodes.len()];
    // the request in progress per task (its ready time), and a histogram per request kind
    let mut req_start: Vec<Option<u64>> = vec![None; ntasks];
    let mut req_hist: Vec<(&'static str, Histogram<u64>)> = Vec::new();
    let mut req_all = Histogram::new_from(&hist);
    // per job (EngineConfig::task_groups): read and write histograms, counts, span
    let groups = (cfg.task_groups.len() == ntasks).then_some(&cfg.task_groups);
    let njobs = groups.map_or(0, |g| g.iter().max().map_or(0, |&m| m as usize + 1));
    let mut job_hist: Vec<[Histogram<u64>; 2]> = (0..njobs)
        .map(|_| [Histogram::new_from(&hist), Histogram::new_from(&hist)])
        .collect();
    let mut job_stats: Vec<JobStats> = (0..njobs)
        .map(|_| JobStats {
            start_ns: u64::MAX,
            ..Default::default()
        })
        .collect();
    // each task's next two steps (with their requests), taken from its stream early so that
    // the page-cache slot of the second and then, one turn later, the folio in it are
    // prefetched while the other tasks run (a stream does not depend on the machine; see
    // `run_kernel`)
    type Ahead = std::collections::VecDeque<(crate::workload::Step, Option<crate::workload::Request>)>;
    let mut pending: Vec<Ahead> = (0..ntasks).map(|_| Ahead::with_capacity(3)).collect();
    let fetch = |t: &mut Stream| t.next().map(|s| (s, t.request()));
    while let Some(Reverse((ready, i))) = heap.pop() {
        if i >= ntasks {
            // one balance_pgdat pass of kswapd on node i - ntasks
            let node = i - ntasks;
            let (cpu, free) = if cfg.sched_slice_ns > 0 {
                // a task running on a CPU keeps it to the end of its slice: kswapd waits for
                // the CPU it can have first
                let at = ready + base;
                let (c, until) = (0..cpu_free.len())
                    .map(|c| {
                        let f = cpu_free[c];
                        let held = !cpu_kswapd[c] && f > at;
                        (
                            c,
                            if held {
                                f.max(cpu_since[c].saturating_add(cfg.sched_slice_ns))
                            } else {
                                f
                            },
                        )
                    })
                    .min_by_key(|&(c, t)| (t.max(at), t, c))
                    .expect("a cpu");
                if until > cpu_free[c] {
                    heap.push(Reverse((until - base, i)));
                    continue;
                }
                (c, cpu_free[c])
            } else {
                earliest_cpu(&cpu_free)
            };
            let start = (ready + base).max(free);
            if !cpu_kswapd[cpu] || start > free {
                cpu_since[cpu] = start;
            }
            now = now.max(start);
            k.m.now_ns = now;
            k.m.cpu = cpu as u32;
            let s0 = snap(k);
            let mut run = kswapd[node].take().expect("a scheduled kswapd run");
            let mut more = vmscan::balance_pgdat_step(&mut k.m, &mut k.p, &mut run);
            if more {
                kswapd[node] = Some(run);
            } else {
                vmscan::balance_pgdat_end(&mut k.m, &mut k.p, run);
                // kswapd_try_to_sleep: a node still unbalanced keeps kswapd awake for another
                // run, until it has failed MAX_RECLAIM_RETRIES times
                let n = &k.m.nodes[node];
                let highest = n.zones.len() - 1;
                if n.kswapd_failures < MAX_RECLAIM_RETRIES && !vmscan::pgdat_balanced(&k.m, node, highest) {
                    k.m.nodes[node].kswapd_woken = true;
                    k.m.nodes[node].kswapd_highest_zoneidx = highest;
                    kswapd[node] = Some(vmscan::balance_pgdat_begin(&mut k.m, node));
                    more = true;
                }
            }
            let s1 = snap(k);
            let io = Io::between(&s0, &s1);
            let kw = work_delta(&s0.work[CTX_KSWAPD], &s1.work[CTX_KSWAPD]);
            add_work(&mut r.kswapd_work, &kw);
            let (kr, kout, kswap) = price_locks(
                &mut locks,
                &k.m.lock_log,
                CTX_KSWAPD,
                start,
                &s0.work[CTX_KSWAPD],
                cpu,
                c,
                now,
            );
            k.m.lock_log.clear();
            r.lru_lock.kswapd.add(&kr);
            r.lru_lock.outside.add(&kout);
            r.swap_lock.add(&kswap);
            let mut k_ns = work_ns(c, &kw)
                + batch_ns(c, &kw)
                + kr.wait_ns
                + kr.bounce_ns
                + kout.wait_ns
                + kout.bounce_ns
                + kswap.wait_ns
                + kswap.bounce_ns
                + io.swap_writes * c.per_page_written_ns;
            k_ns += io.write_requests(zram) * c.block_io_ns;
            if zram {
                k_ns += io.swap_writes * cfg.swap_device.compress_ns;
            } else {
                for _ in 0..io.swap_writes {
                    swapdev.submit(start, 4096, true);
                }
            }
            if io.file_writes > 0 {
                storage.submit(start, io.file_writes * 4096, true);
            }
            let ks_write = io.swap_writes * c.per_page_written_ns
                + io.write_requests(zram) * c.block_io_ns
                + if zram {
                    io.swap_writes * cfg.swap_device.compress_ns
                } else {
                    0
                };
            r.kswapd_split.add(&ReclaimSplit::of(c, &kw, &kr, ks_write));
            r.kswapd_ns += k_ns;
            cpu_free[cpu] = start + k_ns;
            cpu_kswapd[cpu] = true;
            if more {
                heap.push(Reverse((start + k_ns.max(1) - base, i)));
            }
            continue;
        }
        if cfg.runtime_ns > 0 && ready >= cfg.runtime_ns {
            // time-based: this task's time is up
            continue;
        }
        let Some((step, request)) = pending[i].pop_front().or_else(|| fetch(&mut tasks[i])) else {
            continue;
        };
        while pending[i].len() < 2 {
            match fetch(&mut tasks[i]) {
                Some(x) => pending[i].push_back(x),
                None => break,
            }
        }
        if let Some((s, _)) = pending[i].front() {
            k.prefetch_folio(&s.op);
        }
        if let Some((s, _)) = pending[i].get(1) {
            k.prefetch_slot(&s.op);
        }
        // fio's ramp_time: run, cost, but do not record
        // (from the time it was first ready, if it waited for kswapd's slice)
        let ramping = held_since[i].unwrap_or(ready) < cfg.ramp_ns;
        if let Op::Think { ns, .. } = step.op {
            // pure delay: no CPU, no kernel work
            heap.push(Reverse((ready + ns, i)));
            continue;
        }
        let (cpu, free) = if cfg.sched_slice_ns > 0 {
            // a CPU where kswapd is within its slice, with passes to go, is not the task's
            let busy = kswapd.iter().any(Option::is_some);
            let held =
                |c: usize| busy && cpu_kswapd[c] && cpu_since[c].saturating_add(cfg.sched_slice_ns) > cpu_free[c];
            match (0..cpu_free.len())
                .filter(|&c| !held(c))
                .min_by_key(|&c| (cpu_free[c], c))
            {
                Some(c) => (c, cpu_free[c]),
                None => {
                    // wait for kswapd's next pass to end
                    let (_, free) = earliest_cpu(&cpu_free);
                    held_since[i].get_or_insert(ready);
                    pending[i].push_front((step, request));
                    heap.push(Reverse((free.max(ready + base) - base + 1, i)));
                    continue;
                }
            }
        } else {
            earliest_cpu(&cpu_free)
        };
        let ready = held_since[i].take().unwrap_or(ready) + base;
        let start = ready.max(free);
        if cpu_kswapd[cpu] || start > free {
            cpu_since[cpu] = start;
        }
        now = now.max(start);
        k.m.now_ns = now;
        k.m.cpu = cpu as u32;
        let s0 = snap(k);
        let res = if step.alloc_page_first {
            k.alloc_page_and_free(&step.op).and_then(|()| k.exec(step.op))
        } else {
            k.exec(step.op)
        };
        let s1 = snap(k);
        // the first page operation of a benchmark request carries the request's own CPU time
        let request_ns = if step.measure && req_start[i].is_none() && request.is_some() {
            c.request_ns
        } else {
            0
        };
        let io = Io::between(&s0, &s1);
        let dw = work_delta(&s0.work[CTX_TASK], &s1.work[CTX_TASK]);
        let kw = work_delta(&s0.work[CTX_KSWAPD], &s1.work[CTX_KSWAPD]);
        add_work(&mut r.direct_work, &dw);
        add_work(&mut r.kswapd_work, &kw);
        let (dr, dout, dswap) = price_locks(
            &mut locks,
            &k.m.lock_log,
            CTX_TASK,
            start,
            &s0.work[CTX_TASK],
            cpu,
            c,
            now,
        );
        r.lru_lock.direct.add(&dr);
        r.lru_lock.outside.add(&dout);
        r.swap_lock.add(&dswap);
        let reclaim_ns = work_ns(c, &dw) + dr.wait_ns + dr.bounce_ns + io.swap_writes * c.per_page_written_ns;
        r.direct_reclaim_ns += reclaim_ns;
        let mut cpu_ns = reclaim_ns
            + batch_ns(c, &dw)
            + dout.wait_ns
            + dout.bounce_ns
            + dswap.wait_ns
            + dswap.bounce_ns
            + request_ns
            + match (&res, step.op) {
                (Ok(_), Op::Exit { .. }) => c.minor_fault_ns,
                (Ok(Access::Hit), Op::Read { .. } | Op::Write { .. }) => c.read_hit_ns,
                (Ok(Access::Hit), _) => c.access_hit_ns,
                (Ok(Access::Minor), _) => c.minor_fault_ns,
                (Ok(Access::Major), _) => c.major_fault_ns,
                (Err(_), _) => 0,
            };
        if zram {
            cpu_ns += io.swap_reads * cfg.swap_device.decompress_ns + io.swap_writes * cfg.swap_device.compress_ns;
        }
        cpu_ns += (io.read_requests(zram) + io.write_requests(zram)) * c.block_io_ns;
        let end_cpu = start + cpu_ns;
        let queued_behind_kswapd = cpu_kswapd[cpu];
        cpu_free[cpu] = end_cpu;
        cpu_kswapd[cpu] = false;
        // inline kswapd ran on another CPU meanwhile
        let mut k_ns = work_ns(c, &kw) + batch_ns(c, &kw);
        if k_ns > 0 {
            let (kc, kfree) = earliest_cpu(&cpu_free);
            let ks = kfree.max(start);
            let (kr, kout, kswap) = price_locks(
                &mut locks,
                &k.m.lock_log,
                CTX_KSWAPD,
                ks,
                &s0.work[CTX_KSWAPD],
                kc,
                c,
                now,
            );
            r.lru_lock.kswapd.add(&kr);
            r.lru_lock.outside.add(&kout);
            r.swap_lock.add(&kswap);
            k_ns += kr.wait_ns + kr.bounce_ns + kout.wait_ns + kout.bounce_ns + kswap.wait_ns + kswap.bounce_ns;
            r.kswapd_split.add(&ReclaimSplit::of(c, &kw, &kr, 0));
            r.kswapd_ns += k_ns;
            cpu_free[kc] = ks + k_ns;
            cpu_kswapd[kc] = true;
        }
        k.m.lock_log.clear();
        // a kswapd woken by this operation starts running
        if kswapd_task {
            for (node, run) in kswapd.iter_mut().enumerate() {
                if run.is_none() && k.m.nodes[node].kswapd_woken {
                    *run = Some(vmscan::balance_pgdat_begin(&mut k.m, node));
                    heap.push(Reverse((start - base, ntasks + node)));
                }
            }
        }
        // writes go to the devices without waiting
        if !zram {
            for _ in 0..io.swap_writes {
                swapdev.submit(start, 4096, true);
            }
        }
        if io.file_writes > 0 {
            storage.submit(start, io.file_writes * 4096, true);
        }
        // reads: one request per device the task waits for
        let mut done = end_cpu;
        if io.file_reads > 0 {
            done = done.max(storage.submit(end_cpu, io.file_reads * 4096, false));
        }
        if io.swap_reads > 0 && !zram {
            done = done.max(swapdev.submit(end_cpu, io.swap_reads * 4096, false));
        }
        if let Err(e) = res {
            if !matches!(e, AccessError::Killed(_)) || r.error.is_none() {
                r.error = Some(e.to_string());
            }
            continue; // the task stops
        }
        if k.m.explain.is_some() {
            if let Ok(a) = res {
                crate::explain::Recorder::after_task_step(&mut k.m, i, &step, a, step.measure && !ramping);
            }
        }
        if step.measure && !ramping {
            // the latency's parts: (start − ready) + cpu_ns + (done − end_cpu), cpu_ns as summed above
            // this operation's parts, added to the run's (and, with the recorder on, its task's)
            let mut ts = TimeSplit {
                ops_ns: done - ready,
                ..Default::default()
            };
            if queued_behind_kswapd {
                ts.cpu_queue_kswapd_ns += start - ready;
            } else {
                ts.cpu_queue_tasks_ns += start - ready;
            }
            let (base_ns, major) = match (&res, step.op) {
                (Ok(_), Op::Exit { .. }) => (c.minor_fault_ns, false),
                (Ok(Access::Hit), Op::Read { .. } | Op::Write { .. }) => (c.read_hit_ns, false),
                (Ok(Access::Hit), _) => (c.access_hit_ns, false),
                (Ok(Access::Minor), _) => (c.minor_fault_ns, false),
                (Ok(Access::Major), _) => (c.major_fault_ns, true),
                (Err(_), _) => (0, false),
            };
            ts.access_ns += request_ns + if major { 0 } else { base_ns };
            ts.miss_cpu_ns += if major { base_ns } else { 0 }
                + io.read_requests(zram) * c.block_io_ns
                + if zram {
                    io.swap_reads * cfg.swap_device.decompress_ns
                } else {
                    0
                };
            ts.io_wait_ns += done - end_cpu;
            let writeout = io.swap_writes * c.per_page_written_ns
                + io.write_requests(zram) * c.block_io_ns
                + if zram {
                    io.swap_writes * cfg.swap_device.compress_ns
                } else {
                    0
                };
            ts.direct.add(&ReclaimSplit::of(c, &dw, &dr, writeout));
            ts.batch_ns += batch_ns(c, &dw) + dout.wait_ns + dout.bounce_ns + dswap.wait_ns + dswap.bounce_ns;
            r.time.add(&ts);
            if k.m.explain.is_some() {
                if r.task_time.len() <= i {
                    r.task_time.resize(i + 1, TimeSplit::default());
                }
                r.task_time[i].add(&ts);
            }
            hist.record((done - ready).max(1)).expect("latency within bounds");
            r.ops += 1;
            match res {
                Ok(Access::Hit) => r.hits += 1,
                Ok(Access::Minor) => r.minor_faults += 1,
                _ => r.misses += 1,
            }
            first = first.min(ready);
            last = last.max(done);
            if let Some(g) = groups {
                let j = g[i] as usize;
                let write = matches!(step.op, Op::Write { .. } | Op::Store { .. });
                let js = &mut job_stats[j];
                let d = if write { &mut js.write } else { &mut js.read };
                d.ios += 1;
                d.hits += u64::from(matches!(res, Ok(Access::Hit)));
                js.start_ns = js.start_ns.min(ready - base);
                js.end_ns = js.end_ns.max(done - base);
                job_hist[j][usize::from(write)]
                    .record((done - ready).max(1))
                    .expect("latency within bounds");
            }
            if let Some(req) = request {
                let since = *req_start[i].get_or_insert(ready);
                if req.last {
                    req_start[i] = None;
                    let h = match req_hist.iter().position(|x| x.0 == req.kind) {
                        Some(j) => &mut req_hist[j].1,
                        None => {
                            let h = Histogram::new_from(&hist);
                            req_hist.push((req.kind, h));
                            &mut req_hist.last_mut().expect("just pushed").1
                        }
                    };
                    h.record((done - since).max(1)).expect("latency within bounds");
                    req_all.record((done - since).max(1)).expect("latency within bounds");
                }
            }
        }
        heap.push(Reverse((done + cfg.think_ns - base, i)));
        steps += 1;
        if every.is_some_and(|n| n > 0 && steps % n == 0) {
            sample(k, &r);
        }
        if steps % crate::budget::CHECK_EVERY == 0 {
            if let Err(e) = crate::budget::check_machine(&k.m) {
                r.budget_error = Some(e);
                break;
            }
        }
    }
    k.m.kswapd_async = saved_async;
    k.m.lock_log_on = saved_log;
    k.m.lock_log.clear();
    if !cfg.locks {
        // uncontended: the acquisitions only
        r.lru_lock.direct.acquisitions = r.direct_work.lru_lock_rounds;
        r.lru_lock.kswapd.acquisitions = r.kswapd_work.lru_lock_rounds;
        r.lru_lock.outside.acquisitions = r.direct_work.batch_rounds + r.kswapd_work.batch_rounds;
    }
    // the final state, unless the last operation was just sampled
    if let Some(n) = every {
        if n == 0 || steps == 0 || steps % n != 0 {
            sample(k, &r);
        }
    }
    k.m.now_ns = now.max(last);
    k.m.cpu = 0;
    r.elapsed_ns = last.saturating_sub(first.min(last));
    r.run_ns = k.m.now_ns - base;
    if r.elapsed_ns > 0 {
        r.iops = r.ops as f64 * 1e9 / r.elapsed_ns as f64;
        r.bytes_per_sec = r.iops * 4096.0;
    }
    r.clat = LatencyStats::of(&hist);
    r.request_latency = LatencyStats::of(&req_all);
    req_hist.sort_by_key(|x| x.0);
    r.requests = req_hist
        .iter()
        .map(|(kind, h)| RequestStats {
            kind: kind.to_string(),
            count: h.len(),
            per_sec: if r.elapsed_ns > 0 {
                h.len() as f64 * 1e9 / r.elapsed_ns as f64
            } else {
                0.0
            },
            latency: LatencyStats::of(h),
        })
        .collect();
    for (js, h) in job_stats.iter_mut().zip(&job_hist) {
        if js.start_ns == u64::MAX {
            js.start_ns = 0;
        }
        js.read.lat = LatencyStats::of(&h[0]);
        js.write.lat = LatencyStats::of(&h[1]);
    }
    r.jobs = job_stats;
    r.storage = storage.stats.clone();
    r.swap = swapdev.stats.clone();
    r
}

/// fio-like text of a result: `read: IOPS=…, BW=…` and the completion-latency percentiles.
pub fn format_fio(name: &str, r: &EngineResult) -> String {
    format_fio_jobs(name, r, r.tasks)
}

/// [`format_fio`] of a run of `jobs` fio jobs (each with its I/Os in flight as tasks).
pub fn format_fio_jobs(name: &str, r: &EngineResult, jobs: u32) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let iops = if r.iops >= 1000.0 {
        format!("{:.1}k", r.iops / 1000.0)
    } else {
        format!("{:.0}", r.iops)
    };
    let mib = r.bytes_per_sec / (1024.0 * 1024.0);
    let mb = r.bytes_per_sec / 1e6;
    let _ = writeln!(o, "{name}: (groupid=0, jobs={jobs}): err= 0");
    let _ = writeln!(
        o,
        "  read: IOPS={iops}, BW={mib:.1}MiB/s ({mb:.1}MB/s)({}MiB/{}msec)",
        r.ops * 4096 / (1 << 20),
        r.elapsed_ns / 1_000_000
    );
    let us = |ns: f64| ns / 1000.0;
    let _ = writeln!(
        o,
        "    clat (usec): min={:.0}, max={:.0}, avg={:.2}, stdev={:.2}",
        us(r.clat.min_ns as f64),
        us(r.clat.max_ns as f64),
        us(r.clat.mean_ns),
        us(r.clat.stdev_ns)
    );
    let _ = writeln!(o, "    clat percentiles (usec):");
    for row in r.clat.percentiles.chunks(4) {
        let cells: Vec<String> = row
            .iter()
            .map(|(p, v)| format!("{:5.2}th=[{:>5}]", p, v / 1000))
            .collect();
        let _ = writeln!(o, "     | {}", cells.join(", "));
    }
    let _ = writeln!(o, "  {}", reclaim_line(r));
    o
}

/// The reclaim line shared by the report formats.
fn reclaim_line(r: &EngineResult) -> String {
    let l = &r.lru_lock;
    let wait = |w: &LockWait| {
        format!(
            "{:.1} ms waiting ({} of {})",
            w.wait_ns as f64 / 1e6,
            w.contended,
            w.acquisitions
        )
    };
    let swap = if r.swap_lock.acquisitions > 0 {
        format!(", swap device {}", wait(&r.swap_lock))
    } else {
        String::new()
    };
    format!(
        "reclaim: direct {:.1} ms CPU ({} folios scanned), kswapd {:.1} ms CPU ({} folios scanned)\n  \
         lru_lock: direct {}, kswapd {}, batches {}{swap}",
        r.direct_reclaim_ns as f64 / 1e6,
        r.direct_work.folios_scanned,
        r.kswapd_ns as f64 / 1e6,
        r.kswapd_work.folios_scanned,
        wait(&l.direct),
        wait(&l.kswapd),
        wait(&l.outside)
    )
}

/// YCSB-like text of a result, as YCSB's text exporter prints it: `[OVERALL]` run time and
/// throughput, then per operation its count, average, min, max, 95th and 99th percentile latency
/// (µs) and return codes. Operations are YCSB's (a SCAN over several pages is one), from
/// [`EngineResult::requests`].
pub fn format_ycsb(r: &EngineResult) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let total: u64 = r.requests.iter().map(|q| q.count).sum();
    let _ = writeln!(o, "[OVERALL], RunTime(ms), {}", r.elapsed_ns / 1_000_000);
    let tput = if r.elapsed_ns > 0 {
        total as f64 * 1e9 / r.elapsed_ns as f64
    } else {
        0.0
    };
    let _ = writeln!(o, "[OVERALL], Throughput(ops/sec), {tput:.2}");
    for q in &r.requests {
        let l = &q.latency;
        let k = &q.kind;
        let _ = writeln!(o, "[{k}], Operations, {}", q.count);
        let _ = writeln!(o, "[{k}], AverageLatency(us), {:.2}", l.mean_ns / 1000.0);
        let _ = writeln!(o, "[{k}], MinLatency(us), {}", l.min_ns / 1000);
        let _ = writeln!(o, "[{k}], MaxLatency(us), {}", l.max_ns / 1000);
        let _ = writeln!(o, "[{k}], 95thPercentileLatency(us), {}", l.percentile(95.0) / 1000);
        let _ = writeln!(o, "[{k}], 99thPercentileLatency(us), {}", l.percentile(99.0) / 1000);
        let _ = writeln!(o, "[{k}], Return=OK, {}", q.count);
    }
    let _ = writeln!(o, "{}", reclaim_line(r));
    o
}

/// memtier_benchmark-like text of a result: its `ALL STATS` table (ops/sec, hits/sec,
/// misses/sec, average, p50, p99 and p99.9 latency in ms, KB/sec) for the GETs of
/// [`EngineResult::requests`] with values of `value_bytes`; every key was populated first, so
/// every GET hits (memtier's hits are key hits, not page-cache hits).
pub fn format_memtier(r: &EngineResult, value_bytes: u64) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let rule = "-".repeat(124);
    let _ = writeln!(o, "ALL STATS");
    let _ = writeln!(o, "{}", "=".repeat(124));
    let _ = writeln!(
        o,
        "{:<8}{:>12}{:>13}{:>13}{:>16}{:>16}{:>16}{:>16}{:>13} ",
        "Type",
        "Ops/sec",
        "Hits/sec",
        "Misses/sec",
        "Avg. Latency",
        "p50 Latency",
        "p99 Latency",
        "p99.9 Latency",
        "KB/sec"
    );
    let _ = writeln!(o, "{rule}");
    let ms = |ns: f64| format!("{:.5}", ns / 1e6);
    let none = "---";
    let _ = writeln!(
        o,
        "{:<8}{:>12}{:>13}{:>13}{:>16}{:>16}{:>16}{:>16}{:>13} ",
        "Sets", "0.00", none, none, none, none, none, none, "0.00"
    );
    let gets = r.requests.iter().find(|q| q.kind == "GET").cloned().unwrap_or_default();
    let l = &gets.latency;
    let line = |name: &str| {
        format!(
            "{:<8}{:>12.2}{:>13.2}{:>13.2}{:>16}{:>16}{:>16}{:>16}{:>13.2} ",
            name,
            gets.per_sec,
            gets.per_sec,
            0.0,
            ms(l.mean_ns),
            ms(l.percentile(50.0) as f64),
            ms(l.percentile(99.0) as f64),
            ms(l.percentile(99.9) as f64),
            gets.per_sec * value_bytes as f64 / 1024.0
        )
    };
    let _ = writeln!(o, "{}", line("Gets"));
    let _ = writeln!(
        o,
        "{:<8}{:>12}{:>13}{:>13}{:>16}{:>16}{:>16}{:>16}{:>13} ",
        "Waits", "0.00", none, none, none, none, none, none, none
    );
    let _ = writeln!(o, "{}", line("Totals"));
    let _ = writeln!(o, "{}", reclaim_line(r));
    o
}

/// The report of a run as the benchmark the workload imitates prints it: YCSB-like for YCSB,
/// memtier-like for memtier, fio-like otherwise.
pub fn format_bench(name: &str, workload: &crate::workload::WorkloadSpec, r: &EngineResult) -> String {
    use crate::workload::WorkloadSpec;
    match workload {
        WorkloadSpec::Ycsb { .. } => format!("{name}: YCSB\n{}", format_ycsb(r)),
        WorkloadSpec::Memtier { value_bytes, .. } => format!("{name}: memtier\n{}", format_memtier(r, *value_bytes)),
        // fio counts jobs, not the in-flight I/Os of each
        WorkloadSpec::Fio { iodepth, .. } if *iodepth > 1 => format_fio_jobs(name, r, r.tasks / iodepth),
        _ => format_fio(name, r),
    }
}

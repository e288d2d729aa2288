// SPDX-License-Identifier: GPL-2.0-only
//! Running a workload under a policy: build the machine, set up the memcg and the workload, replay
//! the stream, and collect the counters.
//!
//! Kernel policies (`classic`) run on the simulated machine; reference policies (`lru`, `opt`) run
//! the same page stream as a plain cache of `capacity` pages (every miss admitted), so a result can
//! be compared with other cache simulators and with the optimum.

pub mod engine;
pub mod locks;

use crate::kernel::{Access, AccessError, Kernel};
use crate::mm::memcg::{MemcgId, ROOT_MEMCG};
use crate::mm::vmstat::{Counters, MemcgEvents, Stat};
use crate::mm::{Machine, MachineConfig};
use crate::reclaim::classic::Classic;
use crate::reclaim::killswitch::Switchable;
use crate::reclaim::mglru::{Mglru, MglruConfig, Switches};
use crate::reclaim::Policy;
use crate::workload::{LoadedTrace, Step, Stream, StreamFailure, WorkloadError, WorkloadSpec};
use serde::{Deserialize, Serialize};

/// A policy to run.
///
/// Serialized as its name (`"mglru"`, `"lru"`, `"sieve"`, ...), as [`PolicyKind::name`] gives it
/// and [`str::parse`] reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    /// Plain LRU cache (reference).
    Lru,
    /// Belady's OPT with forced admission (reference).
    Opt,
    /// The kernel's classic active/inactive LRU.
    Classic,
    /// The multi-gen LRU (profile in `RunConfig::mglru`).
    Mglru,
    /// A policy of the cache zoo (reference; `lrugen_cache::zoo`, libCacheSim's FIFO, CLOCK,
    /// SIEVE, S3-FIFO, ARC, 2Q, LIRS), run as `Lru` is.
    Cache(lrugen_cache::ZooPolicy),
    /// A cache_ext-shaped policy shipped with lrugen (`cache_ext:<name>`), choosing the file
    /// folios to evict of the workload's memcg over the classic LRU
    /// ([`crate::reclaim::ext::CacheExt`], docs/cache-ext.md).
    CacheExt(crate::reclaim::ext::policies::Shipped),
}

impl PolicyKind {
    /// Every policy, in the order reports list them.
    pub const ALL: [PolicyKind; 4] = [PolicyKind::Mglru, PolicyKind::Classic, PolicyKind::Lru, PolicyKind::Opt];
    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Lru => "lru",
            PolicyKind::Opt => "opt",
            PolicyKind::Classic => "classic",
            PolicyKind::Mglru => "mglru",
            PolicyKind::Cache(p) => p.name(),
            PolicyKind::CacheExt(p) => p.full_name(),
        }
    }
    /// Whether it runs on the simulated kernel (as opposed to a plain cache).
    pub fn is_kernel(self) -> bool {
        matches!(self, PolicyKind::Classic | PolicyKind::Mglru | PolicyKind::CacheExt(_))
    }
}

impl std::str::FromStr for PolicyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "lru" => Ok(PolicyKind::Lru),
            "opt" | "belady" => Ok(PolicyKind::Opt),
            "classic" => Ok(PolicyKind::Classic),
            "mglru" | "lru_gen" => Ok(PolicyKind::Mglru),
            _ => {
                if let Some(r) = crate::reclaim::ext::policies::Shipped::parse(s) {
                    return r.map(PolicyKind::CacheExt);
                }
                s.parse().map(PolicyKind::Cache).map_err(|_| {
                    let zoo: Vec<_> = lrugen_cache::ZooPolicy::ALL.iter().map(|p| p.name()).collect();
                    let ext: Vec<_> = crate::reclaim::ext::policies::Shipped::ALL
                        .iter()
                        .map(|p| p.full_name())
                        .collect();
                    format!(
                        "unknown policy '{s}': expected one of mglru, classic, lru, opt, {}, {}",
                        zoo.join(", "),
                        ext.join(", ")
                    )
                })
            }
        }
    }
}

impl Serialize for PolicyKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for PolicyKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// The memcg the workload runs in, with its limits in pages (`None`: no limit).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MemcgConfig {
    /// `memory.max`.
    pub max: Option<u64>,
    /// `memory.high`.
    pub high: Option<u64>,
    /// `memory.low`.
    pub low: Option<u64>,
    /// `memory.min`.
    pub min: Option<u64>,
    /// Swappiness of the memcg (default: `vm.swappiness`).
    pub swappiness: Option<u32>,
}

/// One run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunConfig {
    /// The machine.
    pub machine: MachineConfig,
    /// The workload's memcg (`/t`).
    pub memcg: MemcgConfig,
    /// The workload.
    pub workload: WorkloadSpec,
    /// The policy.
    pub policy: PolicyKind,
    /// Seed of the workload's random streams.
    pub seed: u64,
    /// Cache size for reference policies, in pages (default: `memory.max`, else total memory).
    pub capacity: Option<u64>,
    /// Run the invariant checker after every reclaim pass.
    pub check: bool,
    /// MGLRU settings (profile, capabilities, hardware accessed bits, min_ttl_ms). The profile
    /// is the kernel's for the classic LRU too (`Classic::with_profile`).
    #[serde(default)]
    pub mglru: MglruConfig,
    /// Capture `lru_gen`/`lru_gen_full` every this many steps (and at the end).
    #[serde(default)]
    pub debugfs_every: Option<u64>,
    /// Record a [`Sample`] every this many steps (and at the end).
    #[serde(default)]
    pub sample_every: Option<u64>,
    /// Run in virtual time with tasks on CPUs and devices (kernel policies).
    #[serde(default)]
    pub engine: Option<engine::EngineConfig>,
    /// Tasks: copies of the workload, each with its own files or region and seed (engine runs).
    #[serde(default = "one")]
    pub jobs: u32,
    /// Commands written to `/sys/kernel/debug/lru_gen` at the end of the run (MGLRU), before the
    /// final counters are read: e.g. `- 2 0 5 200 1024` for proactive reclaim.
    #[serde(default)]
    pub debugfs_write: Option<String>,
    /// Control-file actions during the run (`--ctl FILE`; kernel policies, without the engine):
    /// reads and writes of `lru_gen`, `memory.*`, `enabled`, `min_ttl_ms`, ... at step counts or
    /// on the clock, each logged in [`RunResult::ctl`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctl: Option<crate::control::Script>,
    /// Writes to `/sys/kernel/mm/lru_gen/enabled` during the run (mglru or classic, without the
    /// virtual-time engine): each `value` written, as `echo value >` writes it, after `step` steps
    /// (0: before the first), in step order; bit 0 switches MGLRU on or off with the kernel's
    /// conversion of the lists (`reclaim::killswitch`). A run with switches runs both LRUs
    /// (`Switchable`), starting with the policy's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switch_at: Vec<SwitchAt>,
    /// Reclaim events to trace, in `lrugen kernel --ftrace`'s syntax ([`crate::mm::ftrace`]);
    /// the trace comes back as [`RunResult::ftrace`]. Kernel policies only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ftrace: Vec<String>,
}

/// A write to `/sys/kernel/mm/lru_gen/enabled` during a run ([`RunConfig::switch_at`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchAt {
    /// Steps done before the write (0: before the first).
    pub step: u64,
    /// What is written, as the file takes it: `y`, `n`, or a number (`0x7`, `5`, `0`...).
    pub value: String,
}

impl SwitchAt {
    /// The bytes `echo value >` writes.
    pub fn bytes(&self) -> Vec<u8> {
        let mut b = self.value.as_bytes().to_vec();
        b.push(b'\n');
        b
    }

    /// Check the value as `enabled_store` reads it; the error names the value and what the file
    /// takes.
    pub fn check(&self) -> Result<u32, String> {
        crate::reclaim::mglru::sysfs::parse_enabled(&self.bytes()).map_err(|e| {
            format!(
                "switch at step {}: writing '{}' to /sys/kernel/mm/lru_gen/enabled fails with {} \
                 (expected y, n or a number such as 0x7, 5 or 0: decimal, 0x hex, 0 octal)",
                self.step,
                self.value,
                e.name()
            )
        })
    }
}

/// A write to `enabled` as it was applied ([`RunResult::switches`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SwitchApplied {
    /// Steps done before it.
    pub step: u64,
    /// What was written.
    pub value: String,
    /// `enabled` read back after it (`0x0007`).
    pub enabled: String,
    /// The LRU live after it (`mglru`, `classic`).
    pub live: String,
}

impl RunConfig {
    /// Whether the run may switch MGLRU on or off (`switch_at`, or a control script writing
    /// `enabled`): it then runs both LRUs ([`Switchable`]).
    pub fn switches_lru(&self) -> bool {
        !self.switch_at.is_empty()
            || self.ctl.as_ref().is_some_and(|s| {
                s.actions
                    .iter()
                    .any(|a| a.file == crate::control::CtlFile::Enabled && a.write.is_some())
            })
    }

    /// A run of `workload` under `policy` on `machine`, in a memcg set up as `memcg`, with the
    /// defaults for everything else: seed 1, reference caches as large as `memory.max`, no
    /// invariant checks, default MGLRU settings, no debugfs captures. (Tests and benchmarks build
    /// their configurations with this, so that a new field with a default does not break them.)
    pub fn new(machine: MachineConfig, memcg: MemcgConfig, workload: WorkloadSpec, policy: PolicyKind) -> Self {
        RunConfig {
            machine,
            memcg,
            workload,
            policy,
            seed: 1,
            capacity: None,
            check: false,
            mglru: MglruConfig::default(),
            debugfs_every: None,
            debugfs_write: None,
            sample_every: None,
            engine: None,
            jobs: 1,
            ctl: None,
            switch_at: Vec::new(),
            ftrace: Vec::new(),
        }
    }
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Policy name.
    pub policy: String,
    /// The MGLRU kernel profile (MGLRU runs): the preset and any flipped switches
    /// ([`crate::reclaim::mglru::Profile::label`]).
    pub profile: Option<String>,
    /// Workload description.
    pub workload: String,
    /// Measured accesses.
    pub accesses: u64,
    /// Accesses that found the page resident.
    pub hits: u64,
    /// Accesses served by a minor fault.
    pub minor_faults: u64,
    /// Accesses that needed I/O (page-cache misses and major faults).
    pub misses: u64,
    /// `hits / accesses`.
    pub hit_ratio: f64,
    /// Pages the reference policies hold, or the memcg limit.
    pub capacity_pages: u64,
    /// `/proc/vmstat` over the run (kernel policies).
    pub vmstat: Option<Counters>,
    /// Access-time promotions over the run (kernel policies; MGLRU-FG's, 0 for the others).
    pub promotions: Option<u64>,
    /// The workload memcg's `memory.stat` counters (kernel policies).
    pub memory_stat: Option<Counters>,
    /// The switches of the kernel the run modelled (kernel policies, either LRU): they decide
    /// which lines its `memory.stat` prints (`report::memory_stat`).
    pub kernel_switches: Option<Switches>,
    /// The workload memcg's `memory.events`.
    pub memory_events: Option<MemcgEvents>,
    /// Path of the workload memcg.
    pub memcg: Option<String>,
    /// How the run ended early, if it did (OOM kill, no memory).
    pub error: Option<String>,
    /// The steps the run completed before the OOM killer ended it (the step that invoked it not
    /// counted), when it did.
    pub killed_after_steps: Option<u64>,
    /// Why the `debugfs_write` commands failed at the end of the run, if they did (the commands
    /// before the failing one stay applied, as in the kernel; the counters are read after them).
    pub debugfs_write_error: Option<String>,
    /// Wall-clock seconds of the replay.
    pub wall_seconds: f64,
    /// Captured debugfs texts: (step, `lru_gen`, `lru_gen_full`), the last one at the end.
    pub debugfs: Vec<(u64, String, String)>,
    /// Samples over the run (kernel policies, with `sample_every`).
    pub series: Vec<Sample>,
    /// Throughput, latency and reclaim time (engine runs).
    pub engine: Option<engine::EngineResult>,
    /// zram's `mm_stat` and `io_stat` at the end of a kernel-policy run that swaps to zram.
    pub zram: Option<crate::mm::zram::ZramReport>,
    /// Swap-outs over the run by the `compressed_pct` of the page's region (kernel policies;
    /// (percent, pages) for each class that has any, 0 = the region gives none).
    pub pswpout_by_pct: Vec<(u8, u64)>,
    /// The model's state at the end of a kernel-policy run, bytes (`Machine::state_bytes`: the
    /// state that grows with the pages touched).
    pub state_bytes: Option<u64>,
    /// `state_bytes` split between resident and non-resident pages (`Machine::state_split`).
    pub state_split: Option<crate::mm::StateSplit>,
    /// What `lrugen explain`'s recorder saw (runs of [`run_recorded`] only).
    pub recording: Option<Box<crate::explain::Recording>>,
    /// The reclaim events traced ([`RunConfig::ftrace`]), as `/sys/kernel/tracing/trace` prints
    /// them; empty when none were asked for.
    pub ftrace: String,
    /// The control-file actions run, in order ([`RunConfig::ctl`]).
    pub ctl: Vec<crate::control::Record>,
    /// The writes to `/sys/kernel/mm/lru_gen/enabled` applied, in order
    /// ([`RunConfig::switch_at`]; those after the run's last step are not).
    pub switches: Vec<SwitchApplied>,
    /// The machine had memory tiers ([`crate::mm::MachineConfig::tiers`]).
    pub tiers: bool,
    /// With tiers, each live address space's anonymous VMAs and their resident pages per node
    /// at the end, as `/proc/PID/numa_maps` shows them ([`crate::reclaim::tiering::vma_nodes`]).
    pub vma_nodes: Vec<crate::reclaim::tiering::VmaNodes>,
}

fn one() -> u32 {
    1
}

impl Sample {
    /// The state of kernel `k` (workload memcg `t`) after `step` steps.
    pub fn of<P: Policy>(k: &Kernel<P>, t: MemcgId, step: u64, hits: u64, misses: u64) -> Sample {
        let root = crate::mm::memcg::ROOT_MEMCG;
        let refaults: i64 = (0..k.m.nr_nodes())
            .map(|n| {
                k.m.lruvec_state(root, n, Stat::WorkingsetRefaultAnon)
                    + k.m.lruvec_state(root, n, Stat::WorkingsetRefaultFile)
            })
            .sum();
        Sample {
            step,
            time_ns: k.m.now_ns,
            hits,
            misses,
            refaults: refaults.max(0) as u64,
            usage: k.m.memcgs[t].usage,
            generations: k.p.generations(&k.m, t).unwrap_or_default(),
            slow_placed_on_top: crate::reclaim::tiering::slow_placed_on_top(&k.m),
        }
    }
}

/// The state of a run at one step, for plots over time.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Sample {
    /// Steps done.
    pub step: u64,
    /// Virtual time (ns).
    pub time_ns: u64,
    /// Measured hits so far.
    pub hits: u64,
    /// Measured misses (I/O) so far.
    pub misses: u64,
    /// Refaults so far (`workingset_refault_anon + _file`).
    pub refaults: u64,
    /// Pages charged to the workload memcg.
    pub usage: u64,
    /// The workload memcg's generations (MGLRU): (seq, anon pages, file pages), oldest first.
    pub generations: Vec<(u64, u64, u64)>,
    /// Memory tiers with a placement on a lower tier: the pages of the ranges first placed
    /// there that are now on a top-tier node (`reclaim::tiering::slow_placed_on_top`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_placed_on_top: Option<u64>,
}

impl RunResult {
    /// Swap-outs of pages whose region compresses to zsmalloc's huge-class size or more (zram
    /// stores them whole), whatever the swap device.
    pub fn pswpout_incompressible(&self) -> u64 {
        self.pswpout_by_pct
            .iter()
            .filter(|&&(p, _)| p > 0 && crate::mm::PAGE_SIZE * p as u64 / 100 >= crate::mm::zram::HUGE_CLASS_SIZE)
            .map(|&(_, n)| n)
            .sum()
    }

    /// A named counter of `/proc/vmstat`, or 0.
    pub fn vm(&self, s: Stat) -> i64 {
        self.vmstat.as_ref().map_or(0, |c| c.get(s))
    }
    /// Refaults (`workingset_refault_anon + _file`).
    pub fn refaults(&self) -> i64 {
        self.vm(Stat::WorkingsetRefaultAnon) + self.vm(Stat::WorkingsetRefaultFile)
    }
    /// A counter of the workload memcg's `memory.stat` (hierarchical), or 0.
    pub fn memcg(&self, s: Stat) -> i64 {
        self.memory_stat.as_ref().map_or(0, |c| c.get(s))
    }
    /// Pages scanned by reclaim in the workload memcg (`memory.stat` `pgscan`: the memcg's copy
    /// counts limit reclaim too, which `/proc/vmstat`'s `pgscan_direct` leaves out).
    pub fn pgscan(&self) -> i64 {
        self.memcg(Stat::PgscanKswapd) + self.memcg(Stat::PgscanDirect) + self.memcg(Stat::PgscanProactive)
    }
    /// Pages reclaimed from the workload memcg (`memory.stat` `pgsteal`).
    pub fn pgsteal(&self) -> i64 {
        self.memcg(Stat::PgstealKswapd) + self.memcg(Stat::PgstealDirect) + self.memcg(Stat::PgstealProactive)
    }
}

/// A PTE holds a folio id (a page frame of the model's memory) or a swap slot in
/// [`crate::mm::vm::pte::PFN_MASK`]'s 27 bits. Frames are created as they are first allocated,
/// each zone's from its first frame on, so a machine of any size works as long as the frames a
/// run touches stay below [`crate::budget::FRAME_LIMIT`] (checked as the run goes:
/// [`crate::budget::check_frames`]); refused here, before the machine is built, naming what to
/// make smaller: a zone whose first frame is already past that limit, and swap of more slots
/// than a PTE can name (slots are handed out anywhere in the device).
fn check_frame_limits(mc: &crate::mm::MachineConfig) -> Result<(), RunError> {
    let slots = crate::mm::vm::pte::PFN_MASK as u64 + 1;
    let frames = crate::budget::FRAME_LIMIT;
    let gib = |p: u64| p as f64 * 4096.0 / (1u64 << 30) as f64;
    if mc.nodes.len() > crate::mm::folio::MAX_NUMNODES {
        return Err(RunError::Config(format!(
            "{} nodes: the model has at most {} (a folio's node field has 5 bits)",
            mc.nodes.len(),
            crate::mm::folio::MAX_NUMNODES
        )));
    }
    let mut first = 0u64;
    for (node, zones) in mc.nodes.iter().enumerate() {
        for &(t, pages) in zones {
            if pages > 0 && first >= frames {
                return Err(RunError::Config(format!(
                    "node {node}'s {t:?} zone starts at page frame {first} ({:.0} GiB), past the {frames} frames \
                     ({:.0} GiB) a model's PTE can name: make the machine's memory smaller",
                    gib(first),
                    gib(frames)
                )));
            }
            first += pages;
        }
    }
    if mc.swap_pages > slots {
        return Err(RunError::Config(format!(
            "swap of {} pages ({:.0} GiB) is more than the model's {slots} swap slots ({:.0} GiB): \
             make the swap smaller",
            mc.swap_pages,
            gib(mc.swap_pages),
            gib(slots)
        )));
    }
    Ok(())
}

/// Why a run could not start.
#[derive(Debug)]
pub enum RunError {
    /// Bad workload or trace.
    Workload(WorkloadError),
    /// Bad configuration.
    Config(String),
    /// An invariant broke.
    Invariant(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Workload(e) => write!(f, "{e}"),
            RunError::Config(e) => write!(f, "{e}"),
            RunError::Invariant(e) => write!(f, "invariant violated: {e}"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<WorkloadError> for RunError {
    fn from(e: WorkloadError) -> Self {
        RunError::Workload(e)
    }
}

/// Progress callback: (steps done, steps total).
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// How often (in steps) progress is reported.
pub const PROGRESS_EVERY: u64 = 1 << 16;
/// Operations [`run_kernel`] generates ahead of the one it runs; the slot of the farthest is
/// prefetched.
const PREFETCH_AHEAD: usize = 16;
/// Which of them (0: the next) has its folio prefetched. 16 and 7 measured best of 8/3, 16/7 and
/// 32/14 at full scale (40 GiB of files, 16 GiB memcg, Zipf 0.9).
const PREFETCH_FOLIO_AT: usize = 7;
/// Which of them has its page-cache entry prefetched, its leaf record having been prefetched at
/// the farthest ([`Kernel::prefetch_leaf`], [`Kernel::prefetch_entry`]).
const PREFETCH_ENTRY_AT: usize = 11;

/// The next [`PREFETCH_AHEAD`] steps of the replay loop: a ring in a fixed array, indexed by a
/// mask (the loop pops and pushes one step per access; a `VecDeque` cost it about 40 instructions
/// per access in bounds and capacity checks).
struct Ahead {
    buf: [Step; PREFETCH_AHEAD],
    head: usize,
    len: usize,
}

const _: () = assert!(
    PREFETCH_AHEAD.is_power_of_two() && PREFETCH_FOLIO_AT < PREFETCH_ENTRY_AT && PREFETCH_ENTRY_AT < PREFETCH_AHEAD
);

impl Default for Ahead {
    fn default() -> Self {
        let none = Step::new(
            crate::workload::Op::Think { task: 0, ns: 0 },
            crate::workload::NO_KEY,
            false,
        );
        Ahead {
            buf: [none; PREFETCH_AHEAD],
            head: 0,
            len: 0,
        }
    }
}

impl Ahead {
    const MASK: usize = PREFETCH_AHEAD - 1;

    /// Append `s`; the caller never holds more than [`PREFETCH_AHEAD`] (it pops one before it
    /// pushes one).
    #[inline]
    fn push_back(&mut self, s: Step) {
        debug_assert!(self.len < PREFETCH_AHEAD);
        self.buf[(self.head + self.len) & Self::MASK] = s;
        self.len += 1;
    }

    #[inline]
    fn pop_front(&mut self) -> Option<Step> {
        if self.len == 0 {
            return None;
        }
        let s = self.buf[self.head & Self::MASK];
        self.head = (self.head + 1) & Self::MASK;
        self.len -= 1;
        Some(s)
    }

    /// The `i`-th step from the front, if there are that many.
    #[inline]
    fn get(&self, i: usize) -> Option<&Step> {
        (i < self.len).then(|| &self.buf[(self.head + i) & Self::MASK])
    }

    #[inline]
    fn back(&self) -> Option<&Step> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }
}

/// The engine of a fio run reported per job (`per_job`): each task's reporting group is its
/// job's entry; otherwise the configuration as it is.
fn per_job(ecfg: &engine::EngineConfig, groups: Vec<u32>) -> std::borrow::Cow<'_, engine::EngineConfig> {
    if !ecfg.per_job {
        return std::borrow::Cow::Borrowed(ecfg);
    }
    let entry = |j: u32| ecfg.job_entries.get(j as usize).copied().unwrap_or(j);
    std::borrow::Cow::Owned(engine::EngineConfig {
        task_groups: groups.into_iter().map(entry).collect(),
        ..ecfg.clone()
    })
}

/// Per job of an engine run (`groups`: the job of each stream), the keys of its streams (the
/// largest: a job's streams share its file or table and number its pages alike) and its name.
fn job_keys(cfg: &RunConfig, streams: &[Stream], groups: &[u32]) -> (Vec<u32>, Vec<String>) {
    let jobs = groups.iter().max().map_or(0, |&j| j as usize + 1);
    let mut keys = vec![0u32; jobs];
    for (s, &g) in streams.iter().zip(groups) {
        keys[g as usize] = keys[g as usize].max(s.nr_keys);
    }
    // the part of a mix each job runs, in order: a part is `jobs × cfg.jobs` jobs
    let parts: Vec<(u32, String)> = match &cfg.workload {
        WorkloadSpec::Mix { parts } => parts
            .iter()
            .map(|p| (p.jobs * cfg.jobs, p.workload.describe()))
            .collect(),
        w => vec![(cfg.jobs, w.describe())],
    };
    let mut names = Vec::with_capacity(jobs);
    for (p, (n, what)) in parts.iter().enumerate() {
        for _ in 0..*n {
            let j = names.len();
            names.push(if parts.len() > 1 {
                format!("job {j} (part {p}: {what})")
            } else {
                format!("job {j}")
            });
        }
    }
    names.resize_with(jobs, || "job ?".into());
    (keys, names)
}

/// YCSB clients sharing a table and fio's I/Os in flight run as tasks in virtual time, as a mix
/// does.
fn runs_as_tasks(cfg: &RunConfig) -> bool {
    matches!(cfg.workload, WorkloadSpec::Ycsb { threadcount, .. } if threadcount > 1)
        || matches!(cfg.workload, WorkloadSpec::Fio { iodepth, .. } if iodepth > 1)
}

/// The engine a run uses, seeded with the run's seed: the configured one, or its defaults when
/// the workload runs as tasks (a mix, [`runs_as_tasks`]); none otherwise.
fn engine_config(cfg: &RunConfig) -> Option<engine::EngineConfig> {
    let tasks = matches!(cfg.workload, WorkloadSpec::Mix { .. }) || runs_as_tasks(cfg);
    cfg.engine
        .clone()
        .or(tasks.then(engine::EngineConfig::default))
        .map(|e| engine::EngineConfig { seed: cfg.seed, ..e })
}

/// Build the machine and the workload memcg described by `cfg`.
pub fn build_machine(cfg: &RunConfig) -> Result<(Machine, MemcgId), RunError> {
    cfg.workload.validate()?;
    let total = cfg.machine.total_pages();
    if total == 0 {
        return Err(RunError::Config("the machine has no memory".into()));
    }
    // Folio ids are u32 with u32::MAX as the null link.
    if total >= crate::mm::folio::NIL as u64 {
        return Err(RunError::Config(format!(
            "a machine of {total} pages is too large: the model numbers page frames with 32 bits \
             (at most {} pages, just under 16 TiB)",
            crate::mm::folio::NIL - 1
        )));
    }
    if cfg.machine.swappiness > 200 {
        return Err(RunError::Config(format!(
            "swappiness {} is out of range 0..=200",
            cfg.machine.swappiness
        )));
    }
    let mut mc = cfg.machine.clone();
    if mc.zram_ratio.is_none() {
        // swapping to zram: its compressed pages take memory
        mc.zram_ratio = cfg.engine.as_ref().and_then(|e| e.swap_device.compression_ratio);
    }
    if let Some(e) = &cfg.engine {
        // what `swapon` learns from the device: SWP_SYNCHRONOUS_IO, nr_rotate_swap
        mc.swap_synchronous |= e.swap_device.synchronous;
        mc.swap_rotational |= e.swap_device.rotational;
    }
    if mc.page_cluster > crate::mm::PAGE_CLUSTER_MAX {
        return Err(RunError::Config(format!(
            "vm.page-cluster {} is out of range 0..={}",
            mc.page_cluster,
            crate::mm::PAGE_CLUSTER_MAX
        )));
    }
    check_frame_limits(&mc)?;
    if !mc.thp.is_never() && mc.tiers.is_some() {
        // migration of a large folio (demotion, promotion) is not modelled (docs/thp.md)
        return Err(RunError::Config(format!(
            "transparent_hugepage {} with memory tiers: the model does not migrate large folios yet; \
             use thp never",
            mc.thp.name()
        )));
    }
    let mut m = Machine::new(mc);
    if let Some(a) = cfg.engine.as_ref().and_then(|e| e.swap_device.zram_algorithm) {
        m.zram_algorithm = a;
    }
    m.debug_checks = cfg.check;
    m.random_seed = cfg.seed;
    if !cfg.ftrace.is_empty() {
        m.ftrace = Some(Box::new(
            crate::mm::ftrace::Ftrace::parse(&cfg.ftrace).map_err(RunError::Config)?,
        ));
    }
    // before any address space: which page-table levels count in `pagetables`
    m.apply_switches(&cfg.mglru.profile.switches);
    let t = m.create_memcg(ROOT_MEMCG, "t");
    let mc = &mut m.memcgs[t];
    if let Some(v) = cfg.memcg.max {
        if v == 0 {
            return Err(RunError::Config("memory.max of 0 pages leaves no room to run".into()));
        }
        mc.max = v;
    }
    if let Some(v) = cfg.memcg.high {
        mc.high = v;
    }
    if let Some(v) = cfg.memcg.low {
        mc.low = v;
    }
    if let Some(v) = cfg.memcg.min {
        mc.min = v;
    }
    if let Some(v) = cfg.memcg.swappiness {
        if v > 200 {
            return Err(RunError::Config(format!(
                "memcg swappiness {v} is out of range 0..=200"
            )));
        }
        mc.swappiness = v;
    }
    Ok((m, t))
}

/// Run `cfg`. `trace` may carry an already loaded trace (shared by the runs of a comparison).
pub fn run(cfg: &RunConfig, trace: Option<LoadedTrace>, progress: Progress<'_>) -> Result<RunResult, RunError> {
    let mut r = run_policy(cfg, trace, progress, None)?;
    if cfg.policy == PolicyKind::Mglru {
        r.profile = Some(cfg.mglru.profile.label());
    }
    Ok(r)
}

/// One run of `cfg`; with `record`, `lrugen explain`'s recorder on, with that many windows.
fn run_policy(
    cfg: &RunConfig,
    trace: Option<LoadedTrace>,
    progress: Progress<'_>,
    record: Option<u64>,
) -> Result<RunResult, RunError> {
    if let PolicyKind::CacheExt(which) = cfg.policy {
        if record.is_some() {
            return Err(RunError::Config(format!(
                "policy {}: lrugen explain's recorder runs under mglru or classic",
                cfg.policy.name()
            )));
        }
        let profile = cfg.mglru.profile;
        let mix = matches!(cfg.workload, WorkloadSpec::Mix { .. });
        let (r, _) = run_with_policy(cfg, trace, progress, |m, setup| {
            // GET-SCAN's scanning tasks: those of a mix's last part
            let env = crate::reclaim::ext::policies::PolicyEnv {
                scan_tasks: if mix {
                    setup.part_tasks.last().cloned().unwrap_or_default()
                } else {
                    Vec::new()
                },
            };
            crate::reclaim::ext::CacheExt::new(m, setup.memcg, profile, which.build(&env))
        })?;
        return Ok(r);
    }
    let (mut m, t) = build_machine(cfg)?;
    let mix = matches!(cfg.workload, WorkloadSpec::Mix { .. });
    if mix && !cfg.policy.is_kernel() {
        return Err(RunError::Config(format!(
            "policy {} replays one page stream; a mix of tasks needs a kernel policy (mglru or classic)",
            cfg.policy.name()
        )));
    }
    let clients = runs_as_tasks(cfg);
    if clients && !cfg.policy.is_kernel() {
        return Err(RunError::Config(format!(
            "policy {} replays one page stream; YCSB clients sharing a table (threadcount > 1) and \
             fio's I/Os in flight (iodepth > 1) run as tasks and need a kernel policy (mglru or classic)",
            cfg.policy.name()
        )));
    }
    let seeded = engine_config(cfg);
    let ecfg = seeded.as_ref();
    if cfg.ctl.as_ref().is_some_and(|c| !c.actions.is_empty()) {
        if !cfg.policy.is_kernel() {
            return Err(RunError::Config(format!(
                "policy {} is a reference cache: it has no control files; a control script \
                 needs a kernel policy (mglru or classic)",
                cfg.policy.name()
            )));
        }
        if ecfg.is_some() {
            return Err(RunError::Config(
                "a control script runs on a replay without the engine; this run is in virtual time \
                 (the engine, a mix, YCSB clients or fio's iodepth), which does not run one yet"
                    .into(),
            ));
        }
    }
    if !cfg.switch_at.is_empty() {
        if !cfg.policy.is_kernel() {
            return Err(RunError::Config(format!(
                "policy {}: switching /sys/kernel/mm/lru_gen/enabled needs a kernel policy (mglru or classic)",
                cfg.policy.name()
            )));
        }
        if ecfg.is_some() {
            return Err(RunError::Config(
                "switching /sys/kernel/mm/lru_gen/enabled during a run is modelled without the virtual-time \
                 engine; this run has tasks in virtual time (a mix, jobs, YCSB clients, fio's iodepth, a \
                 benchmark's input or an engine flag)"
                    .into(),
            ));
        }
        for s in &cfg.switch_at {
            s.check().map_err(RunError::Config)?;
        }
    }
    if let (Some(ecfg), true) = (ecfg, cfg.policy.is_kernel()) {
        if cfg.jobs == 0 {
            return Err(RunError::Config("jobs must be at least 1".into()));
        }
        let (streams, groups) = task_streams_grouped(cfg, &mut m, t, trace)?;
        if let Some(windows) = record {
            let max = m.memcgs[t].max.min(m.cfg.total_pages());
            let steps = streams.iter().map(|s| s.len).sum();
            let mut rec = crate::explain::Recorder::new(m.cfg.total_pages(), 0, steps, windows, max);
            let (keys, names) = job_keys(cfg, &streams, &groups);
            rec.set_tasks(groups.clone(), &keys, names);
            m.explain = Some(Box::new(rec));
        }
        let grouped = per_job(ecfg, groups);
        let ecfg = grouped.as_ref();
        let start = std::time::Instant::now();
        let mut r = match cfg.policy {
            PolicyKind::Mglru => {
                let p = Mglru::new(&m, cfg.mglru.clone());
                run_engine(Kernel::new(m, p), t, streams, ecfg, cfg.sample_every)?
            }
            _ => {
                let p = Classic::with_profile(&m, cfg.mglru.profile);
                run_engine(Kernel::new(m, p), t, streams, ecfg, cfg.sample_every)?
            }
        };
        r.workload = format!("{} jobs x {}", cfg.jobs, cfg.workload.describe());
        r.wall_seconds = start.elapsed().as_secs_f64();
        return Ok(r);
    }
    let stream = Stream::new(&cfg.workload, &mut m, t, cfg.seed, trace)?;
    if let Some(windows) = record {
        let max = m.memcgs[t].max.min(m.cfg.total_pages());
        let rec = crate::explain::Recorder::new(m.cfg.total_pages(), stream.nr_keys, stream.len, windows, max);
        m.explain = Some(Box::new(rec));
    }
    let start = std::time::Instant::now();
    let mut r = match cfg.policy {
        PolicyKind::Classic | PolicyKind::Mglru if cfg.switches_lru() => {
            let p = Switchable::new(&m, &cfg.mglru, cfg.policy == PolicyKind::Mglru);
            run_switching(
                Kernel::new(m, p),
                t,
                stream,
                &KernelRunOptions::of(cfg),
                &cfg.switch_at,
                progress,
            )?
        }
        PolicyKind::Classic => {
            let p = Classic::with_profile(&m, cfg.mglru.profile);
            run_kernel(Kernel::new(m, p), t, stream, &KernelRunOptions::of(cfg), progress)?
        }
        PolicyKind::Mglru => {
            let p = Mglru::new(&m, cfg.mglru.clone());
            run_kernel(Kernel::new(m, p), t, stream, &KernelRunOptions::of(cfg), progress)?
        }
        PolicyKind::CacheExt(_) => {
            // routed to run_with_policy at the top
            return Err(RunError::Config(format!(
                "policy {} runs through run_with_policy",
                cfg.policy.name()
            )));
        }
        PolicyKind::Lru | PolicyKind::Opt | PolicyKind::Cache(_) => {
            let cap = cfg.capacity.or(cfg.memcg.max).unwrap_or(cfg.machine.total_pages());
            if cap == 0 {
                return Err(RunError::Config("a cache of 0 pages".into()));
            }
            // a workload's keys are pages of its files or region: renumbered densely, the
            // caches' arrays follow the pages touched (a trace's keys are dense already)
            let stream = match cfg.workload {
                WorkloadSpec::Trace { .. } => stream,
                _ => stream.with_dense_keys(),
            };
            run_reference(cfg.policy, cap, stream, progress)?
        }
    };
    r.workload = cfg.workload.describe();
    r.wall_seconds = start.elapsed().as_secs_f64();
    if r.capacity_pages == 0 {
        r.capacity_pages = cfg.memcg.max.unwrap_or(cfg.machine.total_pages());
    }
    Ok(r)
}

/// What a policy built by [`run_with_policy`] may need to know of the run.
#[derive(Clone, Debug)]
pub struct PolicySetup {
    /// The workload's memcg.
    pub memcg: MemcgId,
    /// The tasks (mm ids) of each part of the workload (one part unless it is a mix), in order;
    /// empty when tasks share processes (a YCSB store's clients).
    pub part_tasks: Vec<Vec<u32>>,
}

/// Run `cfg` on the kernel model under a policy of the caller's (`make` builds it for the
/// machine, once the workload is set up), with the virtual-time engine where `run` would use it
/// (a mix, YCSB clients, fio's iodepth, an engine section); returns the result and the kernel, to
/// read the policy and check the machine afterwards. `cfg.policy` is not read. Switching
/// `enabled` (`switch_at`) needs `run` with mglru or classic.
pub fn run_with_policy<P, F>(
    cfg: &RunConfig,
    trace: Option<LoadedTrace>,
    progress: Progress<'_>,
    make: F,
) -> Result<(RunResult, Kernel<P>), RunError>
where
    P: Policy,
    F: FnOnce(&Machine, &PolicySetup) -> Result<P, String>,
{
    if !cfg.switch_at.is_empty() {
        return Err(RunError::Config(
            "switching /sys/kernel/mm/lru_gen/enabled during a run needs the policy mglru or classic".into(),
        ));
    }
    let (mut m, t) = build_machine(cfg)?;
    let ecfg = engine_config(cfg);
    if ecfg.is_some() && cfg.ctl.as_ref().is_some_and(|c| !c.actions.is_empty()) {
        return Err(RunError::Config(
            "a control script runs on a replay without the engine; this run is in virtual time \
             (the engine, a mix, YCSB clients or fio's iodepth), which does not run one yet"
                .into(),
        ));
    }
    let start = std::time::Instant::now();
    if let Some(ecfg) = ecfg {
        if cfg.jobs == 0 {
            return Err(RunError::Config("jobs must be at least 1".into()));
        }
        let mms_before = m.mms.len();
        let (streams, groups) = task_streams_grouped(cfg, &mut m, t, trace)?;
        // each task its own process (fio jobs, YCSB clients without a store's cache): the mm
        // ids were handed out in the order of the streams
        let own_mm = m.mms.len() - mms_before == streams.len();
        // the jobs of each part, in order: a part of a mix is `jobs × cfg.jobs` jobs
        let part_jobs: Vec<u32> = match &cfg.workload {
            WorkloadSpec::Mix { parts } => parts.iter().map(|p| p.jobs * cfg.jobs).collect(),
            _ => vec![cfg.jobs],
        };
        let mut part_tasks = vec![Vec::new(); part_jobs.len()];
        for (i, &job) in groups.iter().enumerate().filter(|_| own_mm) {
            let mut first = 0u32;
            for (part, &n) in part_jobs.iter().enumerate() {
                if job < first + n {
                    part_tasks[part].push((mms_before + i) as u32);
                    break;
                }
                first += n;
            }
        }
        let grouped = per_job(&ecfg, groups);
        let ecfg = grouped.as_ref();
        let p = make(&m, &PolicySetup { memcg: t, part_tasks }).map_err(RunError::Config)?;
        let mut k = Kernel::new(m, p);
        let mut r = run_engine_on(&mut k, t, streams, ecfg, cfg.sample_every)?;
        r.workload = format!("{} jobs x {}", cfg.jobs, cfg.workload.describe());
        r.wall_seconds = start.elapsed().as_secs_f64();
        return Ok((r, k));
    }
    let mms_before = m.mms.len();
    let stream = Stream::new(&cfg.workload, &mut m, t, cfg.seed, trace)?;
    let setup = PolicySetup {
        memcg: t,
        part_tasks: vec![(mms_before..m.mms.len()).map(|i| i as u32).collect()],
    };
    let p = make(&m, &setup).map_err(RunError::Config)?;
    let mut k = Kernel::new(m, p);
    let mut r = replay_kernel(&mut k, t, stream, &KernelRunOptions::of(cfg), progress, |_, _, _| {})?;
    r.workload = cfg.workload.describe();
    r.wall_seconds = start.elapsed().as_secs_f64();
    if r.capacity_pages == 0 {
        r.capacity_pages = cfg.memcg.max.unwrap_or(cfg.machine.total_pages());
    }
    Ok((r, k))
}

/// The streams of the engine's tasks: `jobs` copies of the workload (each part of a mix `jobs`
/// times its own count), each with its own seed, set up on machine `m` in memcg `t`.
pub fn task_streams(
    cfg: &RunConfig,
    m: &mut Machine,
    t: MemcgId,
    trace: Option<LoadedTrace>,
) -> Result<Vec<Stream>, RunError> {
    Ok(task_streams_grouped(cfg, m, t, trace)?.0)
}

/// [`task_streams`], with the job of each stream (0-based, one per copy of the workload or of a
/// part of a mix, in the order of the streams; [`engine::EngineConfig::task_groups`]): a fio job's
/// in-flight I/Os and a YCSB job's clients are streams of one job.
pub fn task_streams_grouped(
    cfg: &RunConfig,
    m: &mut Machine,
    t: MemcgId,
    trace: Option<LoadedTrace>,
) -> Result<(Vec<Stream>, Vec<u32>), RunError> {
    let parts: Vec<(WorkloadSpec, u32, u64, Option<String>)> = match &cfg.workload {
        WorkloadSpec::Mix { parts } => parts
            .iter()
            .map(|p| (p.workload.clone(), p.jobs * cfg.jobs, p.think_ns, p.memcg.clone()))
            .collect(),
        w => vec![(w.clone(), cfg.jobs, 0, None)],
    };
    // the parts' child memcgs, made in order of first use
    let mut children: Vec<(String, MemcgId)> = Vec::new();
    let mut streams = Vec::new();
    let mut groups: Vec<u32> = Vec::new();
    let mut job = 0u32;
    let mut n = 0u64;
    let mut next_seed = || {
        let seed = cfg.seed ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        n += 1;
        seed
    };
    for (w, jobs, think_ns, memcg) in &parts {
        let first = streams.len();
        let t = match memcg {
            None => t,
            Some(name) => match children.iter().find(|c| &c.0 == name) {
                Some(c) => c.1,
                None => {
                    let id = m.create_memcg(t, name);
                    children.push((name.clone(), id));
                    id
                }
            },
        };
        for _ in 0..*jobs {
            match w {
                // YCSB's threadcount: clients sharing one table, its operations split among them
                WorkloadSpec::Ycsb {
                    workload,
                    records,
                    operations,
                    threadcount,
                    properties,
                } if *threadcount > 1 => {
                    w.validate().map_err(|e| RunError::Config(e.to_string()))?;
                    let c = u64::from(*threadcount);
                    let share = |i: u64| operations / c + u64::from(i < operations % c);
                    let yw = crate::workload::ycsb_workload(workload, properties)
                        .map_err(|e| RunError::Config(e.to_string()))?;
                    let pages = crate::workload::ycsb_table_pages(*records, *operations, yw.record_bytes());
                    let table = m.create_file("usertable", pages, crate::mm::pagecache::Advice::Normal);
                    // with its own cache, the store is one process serving every client
                    let server = (yw.cache_bytes > 0).then(|| m.create_mm(t));
                    let store = match server {
                        Some(s) => crate::workload::ycsb_store(yw.cache_bytes, pages, m, s)?,
                        None => None,
                    };
                    for i in 0..c {
                        let task = server.unwrap_or_else(|| m.create_mm(t));
                        streams.push(Stream::ycsb_client(
                            w,
                            next_seed(),
                            task,
                            table,
                            share(i),
                            store.clone(),
                        )?);
                    }
                }
                // fio's iodepth: in-flight I/Os of one job on its one file, its I/Os split among them
                WorkloadSpec::Fio {
                    file_pages,
                    accesses,
                    iodepth,
                    sequential,
                    fadvise_hint,
                    ..
                } if *iodepth > 1 => {
                    w.validate().map_err(|e| RunError::Config(e.to_string()))?;
                    let advice = crate::workload::fio_advice(fadvise_hint, *sequential)
                        .map_err(|e| RunError::Config(e.to_string()))?;
                    let c = u64::from(*iodepth);
                    let share = |i: u64| accesses / c + u64::from(i < accesses % c);
                    let file = m.create_file("fio.0.0", *file_pages, advice);
                    let seed = next_seed();
                    for i in 0..c {
                        let task = m.create_mm(t);
                        let s = crate::workload::dist::mix64(seed ^ i);
                        streams.push(Stream::fio_slot(w, s, task, file, share(i), i as u32, *iodepth)?);
                    }
                }
                _ => streams.push(Stream::new(w, m, t, next_seed(), trace.clone())?),
            }
            groups.resize(streams.len(), job);
            job += 1;
        }
        for s in &mut streams[first..] {
            s.set_think(*think_ns);
        }
    }
    Ok((streams, groups))
}

/// Run `streams` as tasks in virtual time on kernel `k`; the workload runs in memcg `t`.
pub fn run_engine<P: Policy>(
    mut k: Kernel<P>,
    t: MemcgId,
    streams: Vec<Stream>,
    ecfg: &engine::EngineConfig,
    sample_every: Option<u64>,
) -> Result<RunResult, RunError> {
    run_engine_on(&mut k, t, streams, ecfg, sample_every)
}

/// [`run_engine`] on a kernel the caller keeps (to read its policy afterwards).
pub fn run_engine_on<P: Policy>(
    k: &mut Kernel<P>,
    t: MemcgId,
    streams: Vec<Stream>,
    ecfg: &engine::EngineConfig,
    sample_every: Option<u64>,
) -> Result<RunResult, RunError> {
    let mut r = empty_result(k.p.name());
    let before = k.m.vmstat();
    let pswpout_before = k.m.pswpout_by_pct.clone();
    let promotions_before = k.p.promotions();
    let mut series = Vec::new();
    let failures: Vec<StreamFailure> = streams.iter().map(Stream::failure).collect();
    let e = engine::run_sampled(k, streams, ecfg, sample_every, &mut |k, e| {
        series.push(Sample::of(k, t, e.ops, e.hits, e.misses));
    });
    for f in &failures {
        failed(f)?;
    }
    r.series = series;
    if let Some(err) = k.m.check_failure.take() {
        return Err(RunError::Invariant(err));
    }
    if let Some(err) = &e.budget_error {
        return Err(RunError::Config(err.clone()));
    }
    if k.m.debug_checks {
        k.check().map_err(RunError::Invariant)?;
    }
    r.accesses = e.ops;
    r.hits = e.hits;
    r.minor_faults = e.minor_faults;
    r.misses = e.misses;
    r.hit_ratio = if r.accesses > 0 {
        r.hits as f64 / r.accesses as f64
    } else {
        0.0
    };
    r.error = e.error.clone();
    r.vmstat = Some(k.m.vmstat().delta(&before));
    r.tiers = k.m.tiers.is_some();
    if r.tiers {
        r.vma_nodes = crate::reclaim::tiering::vma_nodes(&k.m);
    }
    r.promotions = Some(k.p.promotions() - promotions_before);
    r.memory_stat = Some(k.m.memcg_stat(t));
    r.kernel_switches = Some(*k.p.switches());
    r.state_bytes = Some(k.m.state_bytes());
    r.state_split = Some(k.m.state_split());
    r.zram = k.m.zram_report();
    r.pswpout_by_pct = k.m.pswpout_classes(&pswpout_before);
    r.memory_events = Some(k.m.memcgs.events_hierarchical(t));
    r.memcg = Some(k.m.memcgs[t].path.clone());
    r.capacity_pages = k.m.memcgs[t].max.min(k.m.cfg.total_pages());
    if let (Some(a), Some(b)) = (k.p.debugfs(&k.m, false), k.p.debugfs(&k.m, true)) {
        r.debugfs.push((e.ops, a, b));
    }
    r.engine = Some(e);
    if let Some(x) = k.m.explain.take() {
        r.recording = Some(Box::new(x.finish(&k.m)));
    }
    if let Some(t) = k.m.ftrace.take() {
        r.ftrace = t.text;
    }
    Ok(r)
}

/// The error of a stream that ended early ([`Stream::failure`]).
fn failed(f: &StreamFailure) -> Result<(), RunError> {
    match f.get() {
        Some(why) => Err(RunError::Workload(WorkloadError(why.clone()))),
        None => Ok(()),
    }
}

fn empty_result(policy: &str) -> RunResult {
    RunResult {
        policy: policy.into(),
        profile: None,
        workload: String::new(),
        accesses: 0,
        hits: 0,
        minor_faults: 0,
        misses: 0,
        hit_ratio: 0.0,
        capacity_pages: 0,
        vmstat: None,
        promotions: None,
        memory_stat: None,
        kernel_switches: None,
        memory_events: None,
        memcg: None,
        error: None,
        killed_after_steps: None,
        debugfs_write_error: None,
        ctl: Vec::new(),
        wall_seconds: 0.0,
        debugfs: Vec::new(),
        vma_nodes: Vec::new(),
        series: Vec::new(),
        engine: None,
        state_bytes: None,
        state_split: None,
        zram: None,
        pswpout_by_pct: Vec::new(),
        recording: None,
        ftrace: String::new(),
        switches: Vec::new(),
        tiers: false,
    }
}

/// What to capture during a kernel run.
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelRunOptions<'a> {
    /// Capture debugfs every this many steps.
    pub debugfs_every: Option<u64>,
    /// Write these commands to `lru_gen` at the end.
    pub debugfs_write: Option<&'a str>,
    /// Record a [`Sample`] every this many steps.
    pub sample_every: Option<u64>,
    /// Count `debugfs_every` and `sample_every` in measured accesses instead of steps (so that
    /// captures fall where a replayer's windows end), and record that count as the step of each
    /// capture and sample.
    pub measured: bool,
    /// Control-file actions to run during the replay.
    pub ctl: Option<&'a crate::control::Script>,
    /// Where to record what every step did, in order ([`OUTCOME_HIT`], [`OUTCOME_MINOR`],
    /// [`OUTCOME_MISS`], whether measured or not), for a caller that counts per task or per
    /// request (`lrugen-kernel`'s multi-task replays).
    pub outcomes: Option<&'a std::cell::RefCell<Vec<u8>>>,
}

/// [`KernelRunOptions::outcomes`]: the step found its page resident.
pub const OUTCOME_HIT: u8 = 0;
/// [`KernelRunOptions::outcomes`]: a minor fault.
pub const OUTCOME_MINOR: u8 = 1;
/// [`KernelRunOptions::outcomes`]: a miss (I/O).
pub const OUTCOME_MISS: u8 = 2;

impl<'a> KernelRunOptions<'a> {
    /// The options of a run configuration.
    pub fn of(cfg: &'a RunConfig) -> Self {
        KernelRunOptions {
            debugfs_every: cfg.debugfs_every,
            debugfs_write: cfg.debugfs_write.as_deref(),
            sample_every: cfg.sample_every,
            measured: false,
            ctl: cfg.ctl.as_ref(),
            outcomes: None,
        }
    }
}

/// Replay `stream` on kernel `k`; the workload runs in memcg `t`.
pub fn run_kernel<P: Policy>(
    k: Kernel<P>,
    t: MemcgId,
    stream: Stream,
    opts: &KernelRunOptions<'_>,
    progress: Progress<'_>,
) -> Result<RunResult, RunError> {
    run_kernel_between(k, t, stream, opts, progress, |_, _, _| {})
}

/// [`run_kernel`] calling `between(k, steps done, result so far)` before each step and once
/// after the last: a caller's hook into the replay (the kernel fixtures' guest clock,
/// `lrugen_kernel::model`).
pub fn run_kernel_between<P: Policy>(
    mut k: Kernel<P>,
    t: MemcgId,
    stream: Stream,
    opts: &KernelRunOptions<'_>,
    progress: Progress<'_>,
    between: impl FnMut(&mut Kernel<P>, u64, &mut RunResult),
) -> Result<RunResult, RunError> {
    replay_kernel(&mut k, t, stream, opts, progress, between)
}

/// [`run_kernel`] on both LRUs, writing `switches` to `/sys/kernel/mm/lru_gen/enabled` at their
/// steps (sorted by step, stable; each checked before: [`SwitchAt::check`]). The writes applied are
/// in [`RunResult::switches`].
pub fn run_switching(
    mut k: Kernel<Switchable>,
    t: MemcgId,
    stream: Stream,
    opts: &KernelRunOptions<'_>,
    switches: &[SwitchAt],
    progress: Progress<'_>,
) -> Result<RunResult, RunError> {
    let mut todo: Vec<&SwitchAt> = switches.iter().collect();
    todo.sort_by_key(|s| s.step);
    let mut next = 0;
    replay_kernel(&mut k, t, stream, opts, progress, move |k, steps, r| {
        while let Some(s) = todo.get(next).filter(|s| s.step == steps) {
            // checked before the run: a refusal here leaves the state as it was, as in the kernel
            if k.p.enabled_store(&mut k.m, &s.bytes()).is_ok() {
                r.switches.push(SwitchApplied {
                    step: steps,
                    value: s.value.clone(),
                    enabled: k.p.enabled_show().trim_end().to_string(),
                    live: k.p.name().to_string(),
                });
                if k.m.debug_checks && k.m.check_failure.is_none() {
                    if let Err(e) = k.check() {
                        k.m.check_failure =
                            Some(format!("after writing '{}' to enabled at step {steps}: {e}", s.value));
                    }
                }
            }
            next += 1;
        }
    })
}

/// The replay loop of [`run_kernel`], calling `between(k, steps done, result)` before each step
/// and once after the last (a no-op for plain runs, compiled away).
fn replay_kernel<P: Policy, F: FnMut(&mut Kernel<P>, u64, &mut RunResult)>(
    k: &mut Kernel<P>,
    t: MemcgId,
    mut stream: Stream,
    opts: &KernelRunOptions<'_>,
    progress: Progress<'_>,
    mut between: F,
) -> Result<RunResult, RunError> {
    let (debugfs_every, debugfs_write) = (opts.debugfs_every, opts.debugfs_write);
    let sample = |k: &Kernel<P>, r: &RunResult, step: u64| Sample::of(k, t, step, r.hits, r.misses);
    let mut r = empty_result(k.p.name());
    let total = stream.len;
    let before = k.m.vmstat();
    let pswpout_before = k.m.pswpout_by_pct.clone();
    let promotions_before = k.p.promotions();
    let failure = stream.failure();
    let mut steps = 0u64;
    let mut ctl = opts.ctl.map(|s| (s, crate::control::Cursor::new(s)));
    if let Some((s, c)) = ctl.as_mut() {
        if c.due(0, 0, k.m.now_ns) {
            c.run_due(s, k, t, 0, 0, &mut r.ctl);
        }
    }
    // The next operations, generated ahead (a stream does not depend on the machine) so that the
    // slot of the last and the folio of a nearer one are prefetched: at full scale an access is
    // otherwise two or three cache misses one after the other.
    let mut ahead = Ahead::default();
    for s in stream.by_ref().take(PREFETCH_AHEAD) {
        ahead.push_back(s);
    }
    while let Some(s) = ahead.pop_front() {
        if let Some(n) = stream.next() {
            ahead.push_back(n);
        }
        if let Some(b) = ahead.get(PREFETCH_FOLIO_AT) {
            k.prefetch_folio(&b.op);
        }
        if let Some(e) = ahead.get(PREFETCH_ENTRY_AT) {
            k.prefetch_entry(&e.op);
        }
        if let Some(a) = ahead.back() {
            k.prefetch_leaf(&a.op);
        }
        between(k, steps, &mut r);
        let a = if s.alloc_page_first {
            k.alloc_page_and_free(&s.op).and_then(|()| k.step(s.op))
        } else {
            k.step(s.op)
        };
        match a {
            Ok(a) => {
                if k.m.explain.is_some() {
                    crate::explain::Recorder::after_step(&mut k.m, &s, a);
                }
                if let Some(o) = opts.outcomes {
                    o.borrow_mut().push(match a {
                        Access::Hit => OUTCOME_HIT,
                        Access::Minor => OUTCOME_MINOR,
                        Access::Major => OUTCOME_MISS,
                    });
                }
                if s.measure {
                    r.accesses += 1;
                    match a {
                        Access::Hit => r.hits += 1,
                        Access::Minor => r.minor_faults += 1,
                        Access::Major => r.misses += 1,
                    }
                }
            }
            Err(e) => {
                r.error = Some(e.to_string());
                if matches!(e, AccessError::Killed(_)) {
                    r.killed_after_steps = Some(steps);
                }
                if matches!(e, AccessError::Fault(_)) {
                    return Err(RunError::Config(e.to_string()));
                }
                break;
            }
        }
        if let Some(e) = k.m.check_failure.take() {
            return Err(RunError::Invariant(e));
        }
        steps += 1;
        if let Some((s, c)) = ctl.as_mut() {
            if c.due(steps, r.accesses, k.m.now_ns) {
                c.run_due(s, k, t, steps, r.accesses, &mut r.ctl);
                if let Some(e) = k.m.check_failure.take() {
                    return Err(RunError::Invariant(e));
                }
            }
        }
        if steps % crate::budget::CHECK_EVERY == 0 {
            crate::budget::check_machine(&k.m).map_err(RunError::Config)?;
        }
        if steps % PROGRESS_EVERY == 0 {
            progress(steps, total);
        }
        // The count the captures go by: steps, or measured accesses (only when this step was one).
        let (at, due) = if opts.measured {
            (r.accesses, s.measure)
        } else {
            (steps, true)
        };
        if due && opts.sample_every.is_some_and(|n| n > 0 && at % n == 0) {
            let smp = sample(k, &r, at);
            r.series.push(smp);
        }
        if due && debugfs_every.is_some_and(|n| n > 0 && at % n == 0) {
            if let (Some(a), Some(b)) = (k.p.debugfs(&k.m, false), k.p.debugfs(&k.m, true)) {
                r.debugfs.push((at, a, b));
            }
        }
    }
    failed(&failure)?;
    if r.error.is_none() {
        between(k, steps, &mut r);
    }
    let end = if opts.measured { r.accesses } else { steps };
    if opts.sample_every.is_some() && r.series.last().is_none_or(|x| x.step != end) {
        let smp = sample(k, &r, end);
        r.series.push(smp);
    }
    if let Some(cmds) = debugfs_write {
        // a refused write does not lose the run: it is reported with the results
        if let Err(e) = k.p.debugfs_write(&mut k.m, cmds) {
            r.debugfs_write_error = Some(format!("writing '{cmds}' to lru_gen: {e}"));
        }
    }
    if let (Some(a), Some(b)) = (k.p.debugfs(&k.m, false), k.p.debugfs(&k.m, true)) {
        if r.debugfs.last().is_none_or(|x| x.0 != end || debugfs_write.is_some()) {
            r.debugfs.push((end, a, b));
        }
    }
    progress(steps, total);
    if k.m.debug_checks {
        k.check().map_err(RunError::Invariant)?;
    }
    r.hit_ratio = if r.accesses > 0 {
        r.hits as f64 / r.accesses as f64
    } else {
        0.0
    };
    r.vmstat = Some(k.m.vmstat().delta(&before));
    r.tiers = k.m.tiers.is_some();
    if r.tiers {
        r.vma_nodes = crate::reclaim::tiering::vma_nodes(&k.m);
    }
    r.promotions = Some(k.p.promotions() - promotions_before);
    r.memory_stat = Some(k.m.memcg_stat(t));
    r.kernel_switches = Some(*k.p.switches());
    r.state_bytes = Some(k.m.state_bytes());
    r.state_split = Some(k.m.state_split());
    r.zram = k.m.zram_report();
    r.pswpout_by_pct = k.m.pswpout_classes(&pswpout_before);
    r.memory_events = Some(k.m.memcgs.events_hierarchical(t));
    r.memcg = Some(k.m.memcgs[t].path.clone());
    r.capacity_pages = k.m.memcgs[t].max.min(k.m.cfg.total_pages());
    if let Some(x) = k.m.explain.take() {
        r.recording = Some(Box::new(x.finish(&k.m)));
    }
    if let Some(t) = k.m.ftrace.take() {
        r.ftrace = t.text;
    }
    Ok(r)
}

/// [`run`] with `lrugen explain`'s recorder on ([`crate::explain`]): the same run, bit for bit,
/// with [`RunResult::recording`] filled in; `windows` windows of steps. Kernel policies only (the
/// reference caches are refused); a run in virtual time (the engine, a mix, jobs, YCSB clients,
/// fio's iodepth) is recorded per task, its keys offset per job ([`crate::explain::Recorder::set_tasks`]).
pub fn run_recorded(
    cfg: &RunConfig,
    trace: Option<LoadedTrace>,
    windows: u64,
    progress: Progress<'_>,
) -> Result<RunResult, RunError> {
    if !cfg.policy.is_kernel() {
        return Err(RunError::Config(format!(
            "policy {}: explain records the kernel models' evictions; expected mglru or classic",
            cfg.policy.name()
        )));
    }
    if cfg.jobs == 0 {
        return Err(RunError::Config("jobs must be at least 1".into()));
    }
    if engine_config(cfg).is_none() && cfg.jobs != 1 {
        return Err(RunError::Config(format!(
            "jobs {}: several jobs run as tasks in virtual time; give the run an engine ([engine], --cpus)",
            cfg.jobs
        )));
    }
    let mut r = run_policy(cfg, trace, progress, Some(windows))?;
    if cfg.policy == PolicyKind::Mglru {
        r.profile = Some(cfg.mglru.profile.label());
    }
    Ok(r)
}

fn replay<C: lrugen_cache::CachePolicy>(mut cache: C, stream: &mut Stream, r: &mut RunResult, progress: Progress<'_>) {
    let total = stream.len;
    // a trace's ids straight from its chunks: the loop is the cache's alone
    let (mut done, mut hits, mut report_at) = (0u64, 0u64, PROGRESS_EVERY);
    let chunked = stream.trace_key_chunks(|chunk| {
        hits += cache.access_le_chunk(chunk);
        done += (chunk.len() / 4) as u64;
        if done >= report_at {
            progress(done / PROGRESS_EVERY * PROGRESS_EVERY, total);
            report_at = (done / PROGRESS_EVERY + 1) * PROGRESS_EVERY;
        }
    });
    if chunked {
        r.accesses += done;
        r.hits += hits;
        return;
    }
    for (i, s) in stream.by_ref().enumerate() {
        if s.key == crate::workload::NO_KEY {
            continue;
        }
        let hit = cache.access(s.key);
        if s.measure {
            r.accesses += 1;
            r.hits += hit as u64;
        }
        if (i as u64 + 1) % PROGRESS_EVERY == 0 {
            progress(i as u64 + 1, total);
        }
    }
}

/// Replay `stream`'s page keys through a reference cache of `cap` pages, in memory that does not
/// grow with the stream's length: LRU and the zoo's policies one step at a time; OPT in two passes over temporary files
/// (the stream's keys, or a trace's spilled ids as they are, then their next uses; see
/// `lrugen_cache::NextUseFile`).
///
/// # Errors
/// When the stream ends early ([`Stream::failure`]) or a temporary file cannot be written or read
/// back.
pub fn run_reference(
    kind: PolicyKind,
    cap: u64,
    mut stream: Stream,
    progress: Progress<'_>,
) -> Result<RunResult, RunError> {
    let mut r = empty_result(kind.name());
    r.capacity_pages = cap;
    let total = stream.len;
    let nr_keys = stream.nr_keys;
    let failure = stream.failure();
    match kind {
        PolicyKind::Lru => {
            // sized for the keys a stream of this length can name (the arrays grow past that)
            let lru = lrugen_cache::Lru::with_pages(cap as usize, nr_keys.min(total.min(u32::MAX as u64) as u32));
            replay(lru, &mut stream, &mut r, progress);
        }
        PolicyKind::Cache(policy) => {
            let cache = policy.build(cap as usize, nr_keys.min(total.min(u32::MAX as u64) as u32));
            replay(cache, &mut stream, &mut r, progress);
        }
        _ => {
            let tmp = |e: std::io::Error| RunError::Config(format!("OPT: temporary file: {e}"));
            // The page keys and which are measured: a trace's spilled ids as they are (every step
            // a measured read), else the stream's keys written out, with a bit per key.
            // `named`: keys beyond the largest one named are never used, so the next-use pass
            // needs memory for the keys named only (a stream's dense keys), not its key space
            let (keys, measured, named) = match stream.trace_pages() {
                Some(pages) => (pages.clone(), None, nr_keys),
                None => {
                    let mut keys = lrugen_trace::IdFile::writer().map_err(tmp)?;
                    let mut bits = lrugen_trace::IdFile::writer().map_err(tmp)?;
                    let (mut word, mut named) = (0u32, 0u32);
                    for s in stream.by_ref().filter(|s| s.key != crate::workload::NO_KEY) {
                        named = named.max(s.key + 1);
                        let n = keys.len();
                        word |= u32::from(s.measure) << (n % 32);
                        keys.push(s.key).map_err(tmp)?;
                        if n % 32 == 31 {
                            bits.push(std::mem::take(&mut word)).map_err(tmp)?;
                        }
                    }
                    if keys.len() % 32 != 0 {
                        bits.push(word).map_err(tmp)?;
                    }
                    (
                        keys.finish().map_err(tmp)?,
                        Some(bits.finish().map_err(tmp)?),
                        named.min(nr_keys),
                    )
                }
            };
            failed(&failure)?;
            let next = lrugen_cache::NextUseFile::compute(&keys, named).map_err(tmp)?;
            let mut opt = lrugen_cache::OptStream::new(&keys, &next, named, cap as usize).map_err(tmp)?;
            let mut bits = measured.as_ref().map(|b| b.cursor(0));
            let mut word = 0u32;
            let mut i = 0u64;
            while let Some(hit) = opt.step().map_err(tmp)? {
                let measure = match &mut bits {
                    None => true,
                    Some(b) => {
                        if i % 32 == 0 {
                            word = b.next_id().map_err(tmp)?.unwrap_or(0);
                        }
                        word >> (i % 32) & 1 != 0
                    }
                };
                if measure {
                    r.accesses += 1;
                    r.hits += hit as u64;
                }
                i += 1;
                if i % PROGRESS_EVERY == 0 {
                    progress(i, total);
                }
            }
        }
    }
    failed(&failure)?;
    progress(total, total);
    r.misses = r.accesses - r.hits;
    r.hit_ratio = if r.accesses > 0 {
        r.hits as f64 / r.accesses as f64
    } else {
        0.0
    };
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The replay loop's look-ahead ring hands out the steps in the stream's order, sees the
    /// same 8th and last step ahead as a `VecDeque` would, and drains, over more steps than it
    /// holds (so its indices wrap).
    #[test]
    fn look_ahead_ring_is_a_fifo() {
        let step = |i: u32| {
            Step::new(
                crate::workload::Op::Read {
                    task: 0,
                    file: 0,
                    index: u64::from(i),
                },
                i,
                true,
            )
        };
        let mut stream = (0..100u32).map(step);
        let mut ring = Ahead::default();
        let mut model = std::collections::VecDeque::new();
        for s in stream.by_ref().take(PREFETCH_AHEAD) {
            ring.push_back(s);
            model.push_back(s);
        }
        let mut out = vec![];
        while let Some(s) = ring.pop_front() {
            assert_eq!(Some(s), model.pop_front());
            if let Some(n) = stream.next() {
                ring.push_back(n);
                model.push_back(n);
            }
            assert_eq!(ring.get(PREFETCH_FOLIO_AT), model.get(PREFETCH_FOLIO_AT));
            assert_eq!(ring.get(PREFETCH_ENTRY_AT), model.get(PREFETCH_ENTRY_AT));
            assert_eq!(ring.back(), model.back());
            out.push(s.key);
        }
        assert_eq!(model.len(), 0);
        assert_eq!(out, (0..100).collect::<Vec<_>>());
    }

    /// A machine of any size whose zones start below the frames a PTE can name is accepted; a
    /// zone that starts past them (a second node beyond 448 GiB) and swap of more than 2^27
    /// slots are refused, naming what to make smaller.
    #[test]
    fn frame_limits_refuse_what_a_pte_cannot_name() {
        use crate::mm::{node::ZoneType, MachineConfig};
        let slots = u64::from(crate::mm::vm::pte::PFN_MASK) + 1;
        let frames = crate::budget::FRAME_LIMIT;
        assert!(
            check_frame_limits(&MachineConfig::simple(1 << 30, slots)).is_ok(),
            "4 TiB, one zone"
        );
        let mut two = MachineConfig::simple(frames - 1, 0);
        two.nodes.push(vec![(ZoneType::Normal, 1024)]);
        assert!(
            check_frame_limits(&two).is_ok(),
            "the second node starts below the limit"
        );
        two.nodes[0][0].1 = frames;
        let msg = check_frame_limits(&two).unwrap_err().to_string();
        assert!(
            msg.contains("node 1's Normal zone starts at page frame 117440512") && msg.contains("memory smaller"),
            "{msg}"
        );
        let err = check_frame_limits(&MachineConfig::simple(1024, slots + 1)).unwrap_err();
        assert!(err.to_string().contains("make the swap smaller"), "{err}");
        // a folio's node field names 32 nodes
        let mut many = MachineConfig::simple(1024, 0);
        many.nodes = vec![vec![(ZoneType::Normal, 1024)]; crate::mm::folio::MAX_NUMNODES];
        assert!(check_frame_limits(&many).is_ok());
        many.nodes.push(vec![(ZoneType::Normal, 1024)]);
        let msg = check_frame_limits(&many).unwrap_err().to_string();
        assert!(msg.contains("33 nodes") && msg.contains("at most 32"), "{msg}");
    }

    /// Zoo policies parse by libCacheSim's names (any case), print and serialize as their names,
    /// and existing names keep their spelling.
    #[test]
    fn policy_names() {
        let sieve: PolicyKind = "SIEVE".parse().unwrap();
        assert_eq!(sieve, PolicyKind::Cache(lrugen_cache::ZooPolicy::Sieve));
        assert!(!sieve.is_kernel());
        for p in PolicyKind::ALL
            .into_iter()
            .chain(lrugen_cache::ZooPolicy::ALL.map(PolicyKind::Cache))
        {
            assert_eq!(p.name().parse::<PolicyKind>(), Ok(p));
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
            assert_eq!(serde_json::from_str::<PolicyKind>(&json).unwrap(), p);
        }
        let err = "lfu".parse::<PolicyKind>().unwrap_err();
        assert!(
            err.contains("mglru, classic, lru, opt, fifo,") && err.contains("2q"),
            "{err}"
        );
        assert!(serde_json::from_str::<PolicyKind>("\"lfu\"").is_err());
    }
}

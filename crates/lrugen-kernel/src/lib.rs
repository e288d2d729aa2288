// SPDX-License-Identifier: GPL-2.0-only
//! Run an lrugen workload on a real Linux kernel under qemu (software emulation) and collect the
//! kernel's counters: the code behind `lrugen kernel`.
//!
//! [`run`] resolves a Debian kernel package (or takes a bzImage/vmlinux and its modules), builds a
//! busybox initramfs holding the static replayer (`lrugen-replay`) and the op file, builds an ext4
//! data disk, boots qemu, and parses the serial console into a [`KernelRun`]. See
//! `../shared/design/kernel-oracle.md` for what is known to work and README.md for the commands.

pub mod bzimage;
pub mod ctl;
pub mod debian;
pub mod fidelity;
pub mod initramfs;
pub mod matrix;
pub mod model;
pub mod ops;
pub mod report;
pub mod serial;
pub mod zoneinfo;

use lrugen::mm::thp::Thp;
use lrugen::reclaim::mglru::debugfs::{self, ParseError, ParsedLruvec};
use lrugen_replay::{OpFile, ReplayFile, ReplayOp};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What went wrong.
#[derive(Debug)]
pub enum Error {
    /// A host tool is missing or failed (names the package to install).
    Tool(String),
    /// Files.
    Io(String),
    /// Resolving or unpacking the kernel.
    Kernel(String),
    /// The guest did not produce what was expected.
    Guest(String),
    /// Bad options.
    Config(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Tool(m) => write!(f, "host tool: {m}"),
            Error::Io(m) => write!(f, "{m}"),
            Error::Kernel(m) => write!(f, "kernel: {m}"),
            Error::Guest(m) => write!(f, "guest: {m}"),
            Error::Config(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Which LRU the guest runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LruMode {
    /// MGLRU, with the value written to `/sys/kernel/mm/lru_gen/enabled` (`y` or e.g. `0x0007`).
    Mglru {
        /// The value written.
        enabled: String,
    },
    /// The classic active/inactive LRU (`enabled` = `n`).
    Classic,
}

/// The kernel to boot.
#[derive(Clone, Debug)]
pub enum KernelSource {
    /// The newest Debian kernel of a series: `linux-image-…-amd64-unsigned` of `6.1` or `6.12`
    /// (the system's apt sources, bookworm-security), or `linux-binary-7.…-amd64` with its
    /// `linux-modules-…` package for `7` (Debian sid, through a private apt configuration under the
    /// cache dir: [`debian::SidApt`]).
    Debian {
        /// `6.1`, `6.12`, `7` (or `7.x`) or `7.N`: see [`debian::Series::parse`].
        series: String,
    },
    /// An exact Debian package name (a `linux-binary-7.…` package comes from sid, with its
    /// modules package).
    Package(String),
    /// A kernel image (bzImage or ELF vmlinux) and its `lib/modules/KVER` directory (with a
    /// `modules.dep`, or run `depmod -b` first).
    Image {
        /// bzImage or vmlinux.
        image: PathBuf,
        /// `…/lib/modules/KVER`.
        modules: PathBuf,
    },
    /// A kernel [`debian::prepare`] made ready earlier (booted as it is: nothing resolved,
    /// downloaded or written in the cache), so that runs at the same time share it safely
    /// (`lrugen kernel --matrix` prepares every kernel once before booting any).
    Prepared(debian::PreparedKernel),
}

/// Options of one kernel run.
#[derive(Clone, Debug)]
pub struct KernelOpts {
    /// The kernel.
    pub source: KernelSource,
    /// Where kernels are downloaded and unpacked (default `~/.cache/lrugen/kernels`).
    pub cache_dir: PathBuf,
    /// Scratch directory for the initramfs, disk image and serial log.
    pub work_dir: PathBuf,
    /// The static replayer binary (see README: build with `+crt-static`).
    pub replayer: PathBuf,
    /// `busybox` (static) for the initramfs (default `/bin/busybox` of `busybox-static`).
    pub busybox: PathBuf,
    /// The operations; its files are created on the data disk with their declared sizes.
    pub ops: OpFile,
    /// `memory.max` of the workload memcg, bytes (0: `max`, no limit: global pressure).
    pub memcg_max_bytes: u64,
    /// MGLRU or classic.
    pub lru: LruMode,
    /// `vm.swappiness`.
    pub swappiness: Option<u32>,
    /// `vm.page-cluster` (0: no swap read-ahead).
    pub page_cluster: u32,
    /// `read_ahead_kb` of the data disk (None: the kernel's 128); files opened `normal` read
    /// ahead up to it.
    pub read_ahead_kb: Option<u32>,
    /// `min_ttl_ms`.
    pub min_ttl_ms: Option<u32>,
    /// Swap, MiB: a second virtio disk (`/dev/vdb`) made with `mkswap` on the host and enabled
    /// with `swapon` before the replay (0: no swap).
    pub swap_mib: u64,
    /// Swap on zram (`/dev/zram0` of `swap_mib`, made in the guest) instead of a disk.
    pub swap_zram: bool,
    /// Capture `/sys/kernel/debug/lru_gen` after each full window of the replay
    /// ([`KernelRun::lru_gen_samples`]).
    pub lru_gen_every_window: bool,
    /// Capture `/sys/kernel/debug/lru_gen_full` after each full window too
    /// ([`KernelRun::lru_gen_full_samples`]).
    pub lru_gen_full_every_window: bool,
    /// Guest memory, MiB.
    pub guest_mem_mib: u32,
    /// Give up after this long.
    pub timeout: Duration,
    /// `-icount shift=0,sleep=off` (reproducible, slower).
    pub icount: bool,
    /// A data disk image built earlier by [`build_data_image`] for the same files as `ops`:
    /// copied into `work_dir` instead of built again (the guest may write to its copy). `None`:
    /// built in `work_dir`.
    pub data_image: Option<PathBuf>,
    /// vCPUs (`-smp`): the tasks of a multi-task op file run on this many. Under `-icount` qemu
    /// runs TCG single-threaded and switches between the vCPUs round robin (multi-threaded TCG
    /// is refused with icount), so the run stays reproducible in its instruction counts.
    pub cpus: u32,
    /// ftrace events traced during the replay, each a tracepoint (`vmscan/mm_vmscan_lru_isolate`)
    /// or a kprobe in `kprobe_events`' syntax (`p:age try_to_inc_max_seq`, `r:evict evict_folios
    /// $retval`; [`initramfs::check_ftrace`]), read back into [`KernelRun::ftrace`] (empty: no
    /// tracing).
    pub ftrace: Vec<String>,
    /// The ftrace buffer per CPU, KiB ([`initramfs::FTRACE_BUFFER_KB`] by default): guest memory
    /// taken before the replay, which under global pressure changes what reclaim does.
    pub ftrace_buffer_kb: u32,
    /// Record each traced event's kernel stack (ftrace's `options/stacktrace`).
    pub ftrace_stacktrace: bool,
    /// `/sys/kernel/mm/transparent_hugepage/enabled`, set on the kernel command line
    /// (`transparent_hugepage=`; default `never`, which every fixture made before THP was
    /// modelled booted with, as the model's default is).
    pub thp: Thp,
    /// Leave DAMON_STAT running where the kernel has it (`false`: boot with
    /// `damon_stat.enabled=N`). Kernels from 6.17 on built with `CONFIG_DAMON_STAT` (Debian's 7.x
    /// are, with `CONFIG_DAMON_STAT_ENABLED_DEFAULT`) run a kdamond from boot that samples the
    /// accessed bits of random physical pages every few milliseconds, clearing them through
    /// rmap (`damon_folio_mkold`; `damon_ptep_mkold` sets `PG_young`, which `folio_referenced`
    /// counts as a reference). The model has no DAMON: with it on, a guest's page-table walks
    /// miss the accesses DAMON took, and eviction finds folios referenced that the walk left
    /// old. On by default, as the kernel starts it (every fixture so far ran with it); the
    /// kernel ignores the parameter where it has no DAMON_STAT (6.1, 6.12).
    pub damon_stat: bool,
    /// NUMA nodes of the guest, MiB each (empty: one node of `guest_mem_mib`; else they add up
    /// to it): node 0 has the vCPUs, the others are CPU-less and one memory tier down
    /// ([`numa_args`]).
    pub numa_mib: Vec<u32>,
    /// The demotion and NUMA-balancing knobs of a guest of several nodes
    /// ([`initramfs::tier_knobs`]; the placement is the op file's `mbind` ops).
    pub tiers: Option<lrugen::mm::tiers::TierConfig>,
}

impl KernelOpts {
    /// Defaults for everything but the kernel and the ops: a cache under `$HOME/.cache`, a work dir
    /// under the system temp dir, the replayer from `target/x86_64-unknown-linux-gnu/release`,
    /// MGLRU on (`y`), page-cluster 0, 512 MiB guest, 15 min timeout, icount on.
    pub fn new(source: KernelSource, ops: OpFile, memcg_max_bytes: u64) -> Self {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        KernelOpts {
            source,
            cache_dir: home.join(".cache/lrugen/kernels"),
            work_dir: std::env::temp_dir().join(format!("lrugen-kernel-{}", std::process::id())),
            replayer: PathBuf::from("target/x86_64-unknown-linux-gnu/release/lrugen-replay"),
            busybox: PathBuf::from("/bin/busybox"),
            ops,
            memcg_max_bytes,
            lru: LruMode::Mglru { enabled: "y".into() },
            swappiness: None,
            page_cluster: 0,
            read_ahead_kb: None,
            min_ttl_ms: None,
            swap_mib: 0,
            swap_zram: false,
            lru_gen_every_window: false,
            lru_gen_full_every_window: false,
            guest_mem_mib: 512,
            timeout: Duration::from_secs(900),
            icount: true,
            data_image: None,
            cpus: 1,
            ftrace: Vec::new(),
            ftrace_buffer_kb: initramfs::FTRACE_BUFFER_KB,
            ftrace_stacktrace: false,
            thp: Thp::Never,
            damon_stat: true,
            numa_mib: Vec::new(),
            tiers: None,
        }
    }
}

/// One window of the replay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Measured accesses.
    pub accesses: u64,
    /// Accesses whose page was not resident (I/O).
    pub misses: u64,
    /// First touches of anon pages (minor faults).
    pub minor: u64,
    /// Guest `CLOCK_MONOTONIC` nanoseconds from the start of measurement to the window's end
    /// (virtual time under `-icount`); absent (0) in fixtures made before it was recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ns: u64,
    /// CPU time of the guest's kswapd threads from the start of measurement to the window's
    /// end, ns (`/proc/PID/schedstat`, read by the replayer): how much of `ns` kswapd had the
    /// CPU; absent (0) in fixtures made before it was recorded (2026-12-07).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kswapd_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Access ops between the replayer's progress lines in a run with `min_ttl_ms` set
/// ([`initramfs::InitSpec::progress_every`]): where the OOM killer ended it is known to this many.
pub const PROGRESS_EVERY: u64 = 1000;

/// How far the replayer got before the OOM killer ended it: its last progress line
/// ([`lrugen_replay::PROGRESS_PREFIX`]), so the kill came within [`PROGRESS_EVERY`] access ops
/// after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OomKilled {
    /// Access ops done (the populate pass included).
    pub ops: u64,
    /// Of which measured.
    pub accesses: u64,
}

/// What the kernel did.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct KernelRun {
    /// `uname -r` of the guest.
    pub kernel_release: String,
    /// The Debian package booted, if any.
    #[serde(default)]
    pub package: Option<String>,
    /// `/sys/kernel/mm/lru_gen/enabled` as read back.
    pub lru_gen_enabled: String,
    /// `memory.max` of `/t`, bytes (0: `max`, no limit).
    #[serde(default)]
    pub memcg_max_bytes: u64,
    /// `/proc/zoneinfo` before the replay (after `drop_caches`): the zones, their managed pages,
    /// watermarks and `lowmem_reserve`, and the free pages the workload starts with; empty in
    /// captures made before it was read.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub zoneinfo_before: String,
    /// `/proc/meminfo` at the same place.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub meminfo_before: String,
    /// `/sys/kernel/mm/transparent_hugepage/enabled` and `defrag` as the guest had them before
    /// the replay (`enabled` first, one line each; empty in runs with THP `never`, which write
    /// neither, and in captures made before THP was modelled).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thp_knobs: String,
    /// `/proc/zoneinfo` as the replayer read it after its last access.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub zoneinfo_at_end_of_replay: String,
    /// `/proc/vmstat` after minus before.
    pub vmstat_delta: BTreeMap<String, i64>,
    /// `memory.stat` of `/t` at the end.
    pub memory_stat: BTreeMap<String, i64>,
    /// `memory.events` of `/t`.
    pub memory_events: BTreeMap<String, i64>,
    /// `memory.current` of `/t` at the end, bytes.
    pub memory_current: u64,
    /// `memory.swap.current` of `/t` at the end, bytes (0 without swap).
    #[serde(default)]
    pub memory_swap_current: u64,
    /// Swap size, MiB (0: none).
    #[serde(default)]
    pub swap_mib: u64,
    /// `memory.stat` of `/t` read by the replayer after its last access, before it exits (the
    /// exit frees its anon memory, so the end-of-run `memory_stat` holds no anon pages).
    #[serde(default)]
    pub memory_stat_at_end_of_replay: BTreeMap<String, i64>,
    /// `memory.current` of `/t` read the same way, bytes.
    #[serde(default)]
    pub memory_current_at_end_of_replay: u64,
    /// `memory.stat` of each child memcg of `/t` the op file's tasks ran in, read with
    /// `memory_stat_at_end_of_replay` (empty when the tasks ran in `/t`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub child_memory_stat_at_end_of_replay: BTreeMap<String, BTreeMap<String, i64>>,
    /// `memory.swap.current` of `/t` read the same way, bytes.
    #[serde(default)]
    pub memory_swap_current_at_end_of_replay: u64,
    /// The replayer's own `/proc/self/smaps` read after its last access (its mappings with their
    /// `Rss`, `Anonymous` and `Swap`: which of its own pages reclaim left resident); empty in
    /// captures made before it was read.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub smaps_at_end_of_replay: String,
    /// The replayer's `/proc/self/numa_maps` read after its last access (a guest of several
    /// nodes): its mappings' pages per node (`N0=… N1=…`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub numa_maps_at_end_of_replay: String,
    /// The guest's memory tiers before the replay, a line `memory_tierN NODELIST` each (a guest of
    /// several nodes, [`initramfs::MEMORY_TIERS`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub memory_tiers: String,
    /// `/sys/kernel/debug/lru_gen` after each full window, with the measured accesses done so far
    /// (empty unless `KernelOpts::lru_gen_every_window`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lru_gen_samples: Vec<(u64, String)>,
    /// `/sys/kernel/debug/lru_gen_full` after each full window (empty unless
    /// `KernelOpts::lru_gen_full_every_window`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lru_gen_full_samples: Vec<(u64, String)>,
    /// The ftrace buffer of the replay (`/sys/kernel/tracing/trace`, `trace_clock` `mono`: the
    /// timestamps are the `CLOCK_MONOTONIC` of the windows' times), verbatim; empty unless
    /// `KernelOpts::ftrace` named events.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ftrace: String,
    /// `/sys/kernel/debug/lru_gen` at the end, verbatim.
    pub lru_gen: String,
    /// `/sys/kernel/debug/lru_gen_full` at the end, verbatim.
    pub lru_gen_full: String,
    /// Misses per window.
    pub windows: Vec<Window>,
    /// Measured accesses.
    pub accesses: u64,
    /// Misses.
    pub misses: u64,
    /// Minor faults (first anon touches).
    pub minor: u64,
    /// Wall-clock seconds of the boot.
    #[serde(default)]
    pub wall_seconds: f64,
    /// vCPUs the guest booted with (`-smp`; 0 in captures made before it was recorded: 1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cpus: u64,
    /// `/sys/devices/system/cpu/online` as the guest read it (e.g. `0-1`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cpus_online: String,
    /// DAMON_STAT's `enabled` as the guest read it before the replay: `N` (turned off,
    /// [`KernelOpts::damon_stat`]) or `Y` (its kdamond ran beside the workload); empty where the
    /// kernel has no DAMON_STAT and in captures made before it was read.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub damon_stat: String,
    /// Per task of a multi-task replay, its counts (`lrugen-replay task` lines), in task order;
    /// empty for a replay of one task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<model::TaskCount>,
    /// The results of the op file's control ops (`lrugen-replay ctl` lines), in the order they
    /// ran; empty without any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ctl: Vec<CtlResult>,
    /// The replayer was OOM-killed (exit status 137, `oom_kill` counted in `/proc/vmstat`): how
    /// far it got. Its counts (`accesses`, `misses`, `minor`, `windows`) are those of its full
    /// windows and its files were not dumped; `/init` still read the counters after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_killed: Option<OomKilled>,
}

/// What a control op of the op file did (`c FILE TEXT`, `cr FILE`: docs/op-files.md), in the
/// guest ([`serial::parse_serial`]) or in the model ([`model::ctl_results`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CtlResult {
    /// The op's id (its place among the op file's control ops).
    pub id: u32,
    /// The file (`lru_gen`, `lru_gen_full`, `memory.reclaim`).
    pub file: String,
    /// The text written, placeholders replaced; `None` for a read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
    /// The write's errno (`EINVAL`, `EAGAIN`, ...: [`errno_name`]), `None` on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errno: Option<String>,
    /// What `write` returned (the guest's: bytes written, or -1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ret: Option<i64>,
    /// Why the model's write failed (the model's own words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Measured accesses done when it ran.
    pub accesses: u64,
    /// `lru_gen` right after the op (or the file a read op read).
    pub text: String,
    /// The `/proc/vmstat` counters the write moved (after minus before, those not 0).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vmstat_delta: BTreeMap<String, i64>,
}

/// The name of a Linux x86-64 errno value (`E22` for one not listed).
pub fn errno_name(code: i32) -> String {
    let n = match code {
        1 => "EPERM",
        2 => "ENOENT",
        3 => "ESRCH",
        4 => "EINTR",
        11 => "EAGAIN",
        12 => "ENOMEM",
        13 => "EACCES",
        16 => "EBUSY",
        17 => "EEXIST",
        19 => "ENODEV",
        22 => "EINVAL",
        28 => "ENOSPC",
        34 => "ERANGE",
        _ => return format!("E{code}"),
    };
    n.to_string()
}

impl KernelRun {
    /// Where this run's guest mapped `ops`, read off the replayer's `smaps` (PMD-aligned where
    /// none was read), with the replayer's page tables for a trace's replay (`trace`,
    /// [`model::Layout::for_replay`]), the guest's clock of its windows
    /// ([`model::Layout::with_guest_clock`]) and what its kernel puts in the memcg
    /// ([`model::Layout::with_kernel`]): the layout the model is replayed at, for a fresh run
    /// (`lrugen kernel`) as for a fixture ([`Capture::layout`]).
    pub fn layout(&self, ops: &OpFile, trace: bool) -> model::Layout {
        model::Layout::from_smaps(&self.smaps_at_end_of_replay, ops)
            .for_replay(trace)
            .with_guest_clock(&self.windows, ops)
            .with_kernel(&self.kernel_release, self.swap_mib > 0)
            .with_cpus(self.cpus)
    }

    /// `lru_gen` parsed (empty with the classic LRU).
    pub fn lru_gen_parsed(&self) -> Result<Vec<ParsedLruvec>, ParseError> {
        debugfs::parse(&self.lru_gen)
    }
    /// `lru_gen_full` parsed.
    pub fn lru_gen_full_parsed(&self) -> Result<Vec<ParsedLruvec>, ParseError> {
        debugfs::parse(&self.lru_gen_full)
    }
    /// The lruvec of the workload memcg `/t` in `lru_gen`, if MGLRU was on.
    pub fn workload_lruvec(&self) -> Option<ParsedLruvec> {
        self.lru_gen_parsed().ok()?.into_iter().find(|l| l.path == "/t")
    }
    /// Pages the memcg held at the end (`memory.stat` anon + file, as the replayer read it before
    /// exiting if it did, else after): the capacity to give the model.
    pub fn resident_pages(&self) -> u64 {
        let st = if self.memory_stat_at_end_of_replay.is_empty() {
            &self.memory_stat
        } else {
            &self.memory_stat_at_end_of_replay
        };
        let b = |k: &str| st.get(k).copied().unwrap_or(0).max(0) as u64;
        (b("anon") + b("file")) / 4096
    }

    /// Under global pressure (no `memory.max`), the guest's zones before the workload, as the
    /// model's machine is to have them ([`report::Settings::zones`]); empty under a memcg limit,
    /// or without a readable `zoneinfo_before`.
    pub fn global_zones(&self) -> Vec<zoneinfo::ZoneInfo> {
        if self.memcg_max_bytes != 0 {
            return Vec::new();
        }
        zoneinfo::parse(&self.zoneinfo_before).unwrap_or_default()
    }

    /// The memcg capacity to give the model for op file `ops`: the kernel's `memory.max` itself.
    /// The model charges what the kernel charges besides the workload's pages
    /// ([`lrugen::mm::KmemConfig`]: page tables, xarray nodes, inodes) and replays the replayer's
    /// own anon memory, its [`REPLAYER_FIXED_PAGES`] and its op list, as pages of its own
    /// ([`crate::model::steps`]), so no capacity is worked out by hand. (Taking the kernel's
    /// charges and the replayer's pages off the limit instead kept the ~18 fixed pages that the
    /// kernel swaps out when it can, `replayer_smaps_6_12_anon_gauss`, and left the model
    /// 2.5-3.8 % over the kernel's misses on `anon-gauss`.) Without a limit, the pages held at
    /// the end ([`Self::resident_pages`]). `ops` is not needed for that any more; it is kept for
    /// the callers' sake.
    pub fn model_capacity_for(&self, _ops: &OpFile) -> u64 {
        if self.memcg_max_bytes > 0 {
            self.memcg_max_bytes / 4096
        } else {
            self.resident_pages()
        }
    }

    /// The memcg capacity to give the model for an op file whose workload has anon pages of its
    /// own (`workload_anon`) or not. For a file-only workload with the replayer's end-of-replay
    /// `memory.stat` (and a `memory.max`), it is what the workload's pages could fill: `memory.max`
    /// less the kernel's own charges (`kernel`: slab, page tables, stacks) and less the replayer's
    /// anon pages (its op list and buffers, charged to the memcg for the whole run; the model has
    /// no such pages). The pages held at the end ([`Self::resident_pages`]) would count the
    /// replayer's anon as room for file pages, and fall anywhere in reclaim's saw-tooth below the
    /// limit. Otherwise (a workload with anon pages, whose share of `anon` is not told apart from
    /// the replayer's; a fixture without the end-of-replay read-back; no limit) it is
    /// [`Self::resident_pages`].
    pub fn model_capacity_pages(&self, workload_anon: bool) -> u64 {
        let st = &self.memory_stat_at_end_of_replay;
        let (Some(&anon), Some(&kernel)) = (st.get("anon"), st.get("kernel")) else {
            return self.resident_pages();
        };
        if workload_anon || self.memcg_max_bytes == 0 {
            return self.resident_pages();
        }
        let own = (anon.max(0) as u64 + kernel.max(0) as u64).div_ceil(4096);
        (self.memcg_max_bytes / 4096).saturating_sub(own)
    }
}

/// The replayer's anon pages that are not the workload's, fixed by the replayer's build: its
/// binary's data, stack and buffers. Measured on the file-only shapes (`tests/fixtures/shapes`),
/// whose whole `anon` is the replayer's: 425–427 pages with 100,000 ops and 441–442 with 104,096
/// on 6.1, 6.12 and 7.2, that is 16 bytes per op plus 35 pages.
pub const REPLAYER_FIXED_PAGES: u64 = 35;

/// Of [`REPLAYER_FIXED_PAGES`], the replayer's `[heap]` when its op file's text is larger than
/// glibc's mmap threshold (so mapped, and unmapped once parsed): 19 pages (`Rss` + `Swap`) in
/// each of the 55 captures of built-in workloads that keep the replayer's smaps, on 6.1, 6.12 and
/// 7.2. A smaller text leaves more ([`crate::model::Layout::heap_pages`]: 29, 30 and 58 pages for
/// the 39, 42 and 92 KiB op files of the trace fixtures).
pub const REPLAYER_HEAP_PAGES: u64 = 19;

/// Of [`REPLAYER_FIXED_PAGES`], those the replayer's loop keeps touching: its stack, its
/// writable data and the heap page of its I/O buffer. Measured from the replayer's own
/// `/proc/self/smaps` after the last access of an anon workload that swaps (Debian 6.12.118,
/// MGLRU, `anon-gauss` in a 32 MiB memcg on zram): 17 of the 35 were resident and 18 swapped
/// out; 12 had been referenced since reclaim last looked (`Referenced`: heap 4, `.data.rel.ro`
/// 2, `.data` 4, `.bss` 1, stack 1). The other 23 are touched while the replayer starts and
/// never again, so reclaim swaps them out like any cold anon page.
pub const REPLAYER_HOT_PAGES: u64 = 12;

/// The pages of the data disk's filesystem metadata that a replay with files reads into the
/// block device's page cache, charged to the replayer's memcg, whose buffer heads the CPU's
/// buffer-head LRU keeps busy (`File::bdev_metadata`, `File::buffers_in_bh_lru`), so that
/// reclaim cannot free them until an `lru_add_drain_all`, for the kernel `release` that ran
/// in a guest with swap (`swap`) or without. Measured in the guest with `lrugen kernel --ftrace
/// filemap/mm_filemap_add_to_page_cache --ftrace filemap/mm_filemap_delete_from_page_cache`:
/// besides the data file's pages, the replay adds pages of the block device `254:0` (dev `0:3`
/// or `0:4`, the bdev inode) at its first file access, and only an `lru_add_drain_all` lets
/// reclaim delete them. Debian 6.1 reads one in a guest without swap (offset 53,248 under a
/// 64 MiB `mmap-random`, the same under an 80 MiB `zipf-pread`; traced again on 2026-12-07:
/// 61,440 under an 80 MiB `zipf-pread`, 20,480 under the traces' `index-file`, 36,864 under a
/// 32 MiB `mixed` shape) and two in one with swap on zram (`swap` true; 2026-12-07: 61,440 and
/// 188,416 under the same `zipf-pread` with swap, 36,864 and 163,840 under the `mixed` shape,
/// 20,480 and 147,456 under the proactive-reclaim fixtures' mixed workload): the second is 31
/// blocks after the first every time, and why swap brings it in was not traced. 6.12 and 7.2
/// read two either way (offsets 61,440 and 188,416 under the 80 MiB `zipf-pread`, 20,480 and
/// 147,456 for the traces' small `index-file`, neither with swap). Reclaim meets them and
/// activates them (6.1 MGLRU `mmap-random`: `pgactivate` 3 over 32,000 accesses); on 6.1 the
/// one page keeps the second-oldest generation non-empty through a reclaim burst, which decides where the burst
/// ends (tests/shapes.rs). A property of the guest, like its layout, not of reclaim: read off the
/// release as the preset is (`profile_for_release`) and off the run's swap.
///
/// The kernel frees them when a `memory.reclaim` write has found nothing to reclaim
/// `MAX_RECLAIM_RETRIES` times: its last attempt begins with `lru_add_drain_all`, which
/// invalidates the buffer-head LRUs (the proactive-reclaim fixtures, `tests/ctl.rs`: 6.1 at its
/// first dry write, `40M`, 6.12 at `1M swappiness=0`, 7.2 at `1M`, each the first write there
/// that runs out of retries); so does the model ([`lrugen::reclaim::lru_add_drain_all`]).
/// Several tasks: the replayer's parent reads them as it opens the files, before it forks the
/// tasks (traced on 6.12 YCSB: the block device's two pages are added by the parent's pid), so
/// they are charged to its memcg (`multi_steps`).
pub fn data_disk_metadata_pages(release: &str, swap: bool) -> u64 {
    if release.starts_with("6.1.") && !swap {
        1
    } else {
        2
    }
}

/// The replayer's own anon pages for op file `ops`: its op list (`size_of::<ReplayOp>()` bytes
/// per op), its map of touched anon pages (a byte per page) and [`REPLAYER_FIXED_PAGES`].
pub fn replayer_own_pages(ops: &OpFile) -> u64 {
    let bytes = ops.ops.len() as u64 * std::mem::size_of::<ReplayOp>() as u64 + ops.anon_pages;
    bytes.div_ceil(4096) + REPLAYER_FIXED_PAGES
}

/// A file-read workload as an op file: `accesses` buffered reads of 4 KiB pages of one file of
/// `file_pages` pages at `data/file0`, pages drawn from `dist` with `seed` (lrugen's samplers:
/// fio's Zipf with scattered ranks).
pub fn file_read_ops(
    file_pages: u64,
    accesses: u64,
    dist: lrugen::workload::dist::Dist,
    seed: u64,
    window: u64,
) -> OpFile {
    let mut s = lrugen::workload::dist::Sampler::new(dist, file_pages, seed);
    OpFile {
        anon_hugepage: false,
        lockstep: 0,
        ctl: Vec::new(),
        memcgs: Vec::new(),
        tasks: Vec::new(),
        window,
        files: vec![ReplayFile {
            id: 0,
            path: "file0".into(),
            pages: file_pages,
            advice: lrugen_replay::FileAdvice::Random,
        }],
        anon_pages: 0,
        ops: (0..accesses)
            .map(|_| ReplayOp::Read {
                file: 0,
                index: s.next_key(),
            })
            .collect(),
    }
}

/// The reads of `ops` (file 0) as a dense trace for lrugen's `Trace` workload (buffered reads of
/// one file opened `POSIX_FADV_RANDOM`, as the replayer opens it): page ids in order of first use,
/// and the number of distinct pages. Without read-ahead the placement of pages in the file does not
/// matter.
pub fn dense_trace(ops: &OpFile) -> (Vec<u32>, u32) {
    let mut ids: BTreeMap<u64, u32> = BTreeMap::new();
    let mut out = Vec::with_capacity(ops.ops.len());
    for op in &ops.ops {
        if let ReplayOp::Read { index, .. } = op {
            let n = ids.len() as u32;
            out.push(*ids.entry(*index).or_insert(n));
        }
    }
    (out, ids.len() as u32)
}

/// The model's `Anon` workload (`lrugen::workload::WorkloadSpec::Anon`) as an op file, generated
/// by the model's own [`lrugen::workload::Stream`] so the two see the same stream exactly: `pages`
/// stores populating the region in order, a `w` marker, then `accesses` loads or stores of pages
/// drawn from `dist` (stores with probability `write_ratio`), all with `seed` as `sim::run` uses it
/// (`RunConfig::seed`).
pub fn anon_ops(
    pages: u64,
    accesses: u64,
    dist: lrugen::workload::dist::Dist,
    write_ratio: f64,
    seed: u64,
    window: u64,
) -> Result<OpFile, Error> {
    use lrugen::mm::{memcg::ROOT_MEMCG, Machine, MachineConfig};
    use lrugen::workload::{Op, Stream, WorkloadSpec};
    let spec = WorkloadSpec::Anon {
        compressed_pct: 0,
        pages,
        write_ratio,
        dist,
        accesses,
    };
    let mut m = Machine::new(MachineConfig::simple(pages.max(1024), 0));
    let stream = Stream::new(&spec, &mut m, ROOT_MEMCG, seed, None).map_err(|e| Error::Config(e.0))?;
    let mut ops = Vec::with_capacity((pages + accesses + 1) as usize);
    let mut measuring = false;
    for step in stream {
        if step.measure && !measuring {
            ops.push(ReplayOp::MeasureStart);
            measuring = true;
        }
        let vpn = step.key as u64;
        ops.push(match step.op {
            Op::Store { .. } => ReplayOp::Store { vpn },
            Op::Load { .. } => ReplayOp::Load { vpn },
            o => return Err(Error::Config(format!("unexpected op {o:?} in an anon stream"))),
        });
    }
    Ok(OpFile {
        anon_hugepage: false,
        lockstep: 0,
        ctl: Vec::new(),
        memcgs: Vec::new(),
        tasks: Vec::new(),
        window,
        files: Vec::new(),
        anon_pages: pages,
        ops,
    })
}

/// The parameters of a mixed file + anon workload ([`mixed_ops`]) besides the file size, the
/// number of accesses, the distribution, the seed and the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MixedFixture {
    /// Pages of the anon region.
    pub anon_pages: u64,
    /// Fraction of measured accesses that go to the anon region (the rest are file reads).
    pub anon_fraction: f64,
    /// Fraction of the anon accesses that are stores.
    pub write_ratio: f64,
}

/// Salt of the per-access choice between the file and the anon region in [`mixed_ops`].
const MIXED_CHOICE_SALT: u64 = 0x6d69_7865_645f_6f70;

/// Whether measured access `i` of a [`mixed_ops`] stream with `seed` goes to the anon region: a
/// hash of (seed, i) against `anon_fraction`, so the choice of one access does not depend on the
/// others.
fn mixed_choice_is_anon(seed: u64, i: u64, anon_fraction: f64) -> bool {
    let h = lrugen::workload::dist::mix64(seed ^ MIXED_CHOICE_SALT ^ lrugen::workload::dist::mix64(i));
    ((h >> 11) as f64 / (1u64 << 53) as f64) < anon_fraction
}

/// A mixed workload as one op file: one file of `file_pages` pages at `data/file0` (buffered 4 KiB
/// preads, opened `POSIX_FADV_RANDOM` by the replayer) and an anon region of `mx.anon_pages` pages,
/// in the same process (so the same memcg), under pressure together. The anon region is populated
/// with stores first (not measured), then a `w` marker, then `accesses` measured accesses: each
/// goes to the anon region with probability `mx.anon_fraction` (a hash of the seed and the access
/// number), else to the file. The anon accesses are exactly the stream of [`anon_ops`] with `seed`
/// (the model's `Anon` workload: pages from `dist`, stores with probability `mx.write_ratio`) and
/// the file reads exactly those of [`file_read_ops`] with the seed `mix64(seed)` (so the two
/// samplers do not draw the same numbers), interleaved in that order.
pub fn mixed_ops(
    file_pages: u64,
    mx: &MixedFixture,
    accesses: u64,
    dist: lrugen::workload::dist::Dist,
    seed: u64,
    window: u64,
) -> Result<OpFile, Error> {
    if file_pages == 0 || mx.anon_pages == 0 {
        return Err(Error::Config(format!(
            "a mixed workload needs a file and an anon region of at least one page each (file {file_pages} pages, anon {} pages)",
            mx.anon_pages
        )));
    }
    if !(0.0..=1.0).contains(&mx.anon_fraction) {
        return Err(Error::Config(format!(
            "anon fraction {} of a mixed workload is not in [0, 1]",
            mx.anon_fraction
        )));
    }
    let is_anon: Vec<bool> = (0..accesses)
        .map(|i| mixed_choice_is_anon(seed, i, mx.anon_fraction))
        .collect();
    let nr_anon = is_anon.iter().filter(|&&a| a).count() as u64;
    let anon = anon_ops(mx.anon_pages, nr_anon, dist, mx.write_ratio, seed, window)?;
    let file = file_read_ops(
        file_pages,
        accesses - nr_anon,
        dist,
        lrugen::workload::dist::mix64(seed),
        window,
    );
    // anon_ops: the populate stores, `w`, then the measured anon accesses.
    let w = anon
        .ops
        .iter()
        .position(|op| *op == ReplayOp::MeasureStart)
        .unwrap_or(anon.ops.len());
    let mut ops = Vec::with_capacity(w + 1 + accesses as usize);
    ops.extend_from_slice(&anon.ops[..w]);
    ops.push(ReplayOp::MeasureStart);
    let mut a = anon.ops[(w + 1).min(anon.ops.len())..].iter();
    let mut f = file.ops.iter();
    for &to_anon in &is_anon {
        let op = if to_anon { a.next() } else { f.next() };
        ops.push(*op.ok_or_else(|| Error::Config("mixed workload: a sub-stream ended early".into()))?);
    }
    Ok(OpFile {
        anon_hugepage: false,
        lockstep: 0,
        ctl: Vec::new(),
        memcgs: Vec::new(),
        tasks: Vec::new(),
        window,
        files: file.files,
        anon_pages: mx.anon_pages,
        ops,
    })
}

fn io(what: &str, p: &Path, e: std::io::Error) -> Error {
    Error::Io(format!("{what} {}: {e}", p.display()))
}

/// A swap image of `mib` MiB (`mkswap` of util-linux).
pub fn build_swap_image(image: &Path, mib: u64) -> Result<(), Error> {
    let f = std::fs::File::create(image).map_err(|e| io("create", image, e))?;
    f.set_len(mib << 20).map_err(|e| io("truncate", image, e))?;
    drop(f);
    let out = Command::new("mkswap")
        .arg(image)
        .output()
        .map_err(|e| Error::Tool(format!("mkswap: {e} (install util-linux)")))?;
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "mkswap failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(())
}

/// Build the ext4 data image holding the op file's files (each page filled with a pattern naming
/// it, so no block is a hole).
pub fn build_data_image(ops: &OpFile, dir: &Path, image: &Path) -> Result<(), Error> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| io("remove", dir, e))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| io("mkdir", dir, e))?;
    let mut total = 0u64;
    for f in &ops.files {
        let p = dir.join(&f.path);
        let mut data = vec![0u8; f.pages as usize * 4096];
        for (i, page) in data.chunks_mut(4096).enumerate() {
            for (j, b) in page.iter_mut().enumerate() {
                *b = (i as u64 * 31 + j as u64 * 7 + 1) as u8 | 1;
            }
        }
        std::fs::write(&p, data).map_err(|e| io("write", &p, e))?;
        total += f.pages;
    }
    let mib = total * 4096 / (1 << 20) * 11 / 10 + 16;
    let out = Command::new("mkfs.ext4")
        .args(["-q", "-F", "-b", "4096", "-d"])
        .arg(dir)
        .arg(image)
        .arg(format!("{mib}M"))
        .output()
        .map_err(|e| Error::Tool(format!("mkfs.ext4: {e} (install e2fsprogs)")))?;
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "mkfs.ext4 failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}

/// The guest's size and clock: memory, vCPUs (`-smp`) and `-icount`.
#[derive(Clone, Copy, Debug)]
pub struct GuestShape {
    /// Guest memory, MiB.
    pub mem_mib: u32,
    /// `-icount shift=0,sleep=off`.
    pub icount: bool,
    /// vCPUs.
    pub cpus: u32,
    /// `transparent_hugepage=` on the kernel command line (the knob's boot value).
    pub thp: Thp,
    /// DAMON_STAT left as the kernel starts it (`false`: `damon_stat.enabled=N`;
    /// [`KernelOpts::damon_stat`]).
    pub damon_stat: bool,
}

/// The qemu command line (`swap`: a second, writable virtio disk, `/dev/vdb` in the guest).
pub fn qemu_args(
    vmlinux: &Path,
    initrd: &Path,
    disk: &Path,
    swap: Option<&Path>,
    serial: &Path,
    g: GuestShape,
) -> Vec<String> {
    let (mem_mib, icount, cpus, thp) = (g.mem_mib, g.icount, g.cpus, g.thp);
    let mut a: Vec<String> = [
        "-accel",
        "tcg",
        "-smp",
        &cpus.max(1).to_string(),
        "-nographic",
        "-no-reboot",
        "-nodefaults",
        "-monitor",
        "none",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(["-m".into(), mem_mib.to_string()]);
    a.extend(["-kernel".into(), vmlinux.display().to_string()]);
    a.extend(["-initrd".into(), initrd.display().to_string()]);
    a.extend([
        "-drive".into(),
        // writable (a scratch image): the guest mounts it read-only unless the ops write files
        format!("file={},format=raw,if=virtio", disk.display()),
    ]);
    if let Some(sw) = swap {
        a.extend(["-drive".into(), format!("file={},format=raw,if=virtio", sw.display())]);
    }
    a.extend(["-serial".into(), format!("file:{}", serial.display())]);
    a.extend([
        "-append".into(),
        format!(
            "console=ttyS0 panic=-1 loglevel=3 mitigations=off transparent_hugepage={}{}",
            thp.name(),
            if g.damon_stat { "" } else { " damon_stat.enabled=N" }
        ),
    ]);
    if icount {
        a.extend(["-icount".into(), "shift=0,sleep=off".into()]);
    }
    a
}

/// HMAT's access latency of a CPU-less node, ns, and of node 0 (the vCPUs' own).
pub const HMAT_LATENCY_NS: [u32; 2] = [40, 10];
/// HMAT's access bandwidth of a CPU-less node, and of node 0, MB/s.
pub const HMAT_BANDWIDTH_MBPS: [u32; 2] = [2_048, 10_240];

/// The qemu options of a guest of NUMA nodes of `nodes_mib` MiB each (to add to [`qemu_args`],
/// whose `-m` must be their sum): node 0 has every vCPU, the others no CPU; an ACPI SLIT of
/// distance 20 between nodes and an HMAT (`-machine hmat=on`) whose latency and bandwidth from
/// node 0's initiator make a CPU-less node slower memory ([`HMAT_LATENCY_NS`],
/// [`HMAT_BANDWIDTH_MBPS`]), which the kernel (6.10 on: "memory tier: create CPUless memory
/// tiers after obtaining HMAT info") puts in a memory tier below node 0's, as PMEM or CXL memory.
pub fn numa_args(nodes_mib: &[u32], cpus: u32) -> Vec<String> {
    let mut a: Vec<String> = vec!["-machine".into(), "hmat=on".into()];
    for (i, mib) in nodes_mib.iter().enumerate() {
        a.extend([
            "-object".into(),
            format!("memory-backend-ram,size={mib}M,id=m{i}"),
            "-numa".into(),
            if i == 0 {
                format!("node,nodeid=0,memdev=m0,cpus=0-{},initiator=0", cpus.max(1) - 1)
            } else {
                format!("node,nodeid={i},memdev=m{i},initiator=0")
            },
        ]);
    }
    for i in 1..nodes_mib.len() {
        for j in 0..i {
            a.extend(["-numa".into(), format!("dist,src={j},dst={i},val=20")]);
        }
    }
    for i in 0..nodes_mib.len() {
        let k = usize::from(i == 0);
        a.extend([
            "-numa".into(),
            format!(
                "hmat-lb,initiator=0,target={i},hierarchy=memory,data-type=access-latency,latency={}",
                HMAT_LATENCY_NS[k]
            ),
            "-numa".into(),
            format!(
                "hmat-lb,initiator=0,target={i},hierarchy=memory,data-type=access-bandwidth,bandwidth={}M",
                HMAT_BANDWIDTH_MBPS[k]
            ),
        ]);
    }
    a
}

/// Boot qemu and wait (killing it after `timeout`); return the serial log.
pub fn boot(args: &[String], serial: &Path, timeout: Duration) -> Result<String, Error> {
    let mut child = Command::new("qemu-system-x86_64")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::Tool(format!("qemu-system-x86_64: {e} (install qemu-system-x86)")))?;
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().map_err(|e| Error::Tool(format!("qemu: {e}")))? {
            let log = std::fs::read_to_string(serial).unwrap_or_default();
            if !st.success() && !log.contains("=== lrugen done") {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    use std::io::Read as _;
                    let _ = e.read_to_string(&mut err);
                }
                return Err(Error::Tool(format!("qemu exited with {st}: {}", err.trim())));
            }
            return Ok(log);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            let log = std::fs::read_to_string(serial).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(20).collect();
            return Err(Error::Guest(format!(
                "no power-off within {:?}; last serial lines:\n{}",
                timeout,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Run the op file on a real kernel under qemu.
pub fn run(opts: &KernelOpts) -> Result<KernelRun, Error> {
    // An anon-only op file still gets an (empty) data disk, so swap is always `/dev/vdb`.
    if !opts.replayer.is_file() {
        return Err(Error::Config(format!(
            "no replayer at {}: build it with RUSTFLAGS=\"-C target-feature=+crt-static\" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu",
            opts.replayer.display()
        )));
    }
    let start = Instant::now();
    let k = debian::prepare(&opts.source, &opts.cache_dir)?;
    let w = &opts.work_dir;
    std::fs::create_dir_all(w).map_err(|e| io("mkdir", w, e))?;
    let disk = w.join("data.img");
    match &opts.data_image {
        Some(img) => {
            std::fs::copy(img, &disk).map_err(|e| io(&format!("copy {} to", img.display()), &disk, e))?;
        }
        None => build_data_image(&opts.ops, &w.join("data"), &disk)?,
    }
    let initrd = w.join("initrd.cpio");
    let spec = initramfs::InitSpec {
        modules: Vec::new(),
        memcg_max_bytes: opts.memcg_max_bytes,
        lru: opts.lru.clone(),
        swappiness: opts.swappiness,
        page_cluster: opts.page_cluster,
        read_ahead_kb: opts.read_ahead_kb,
        min_ttl_ms: opts.min_ttl_ms,
        swap: opts.swap_mib > 0 && !opts.swap_zram,
        zram_bytes: if opts.swap_zram { opts.swap_mib << 20 } else { 0 },
        data_rw: opts.ops.files.iter().any(|f| opts.ops.writes(f.id)),
        lru_gen_every_window: opts.lru_gen_every_window,
        lru_gen_full_every_window: opts.lru_gen_full_every_window,
        task_memcgs: opts.ops.memcgs.clone(),
        // thrashing prevention may end the replay in the OOM killer: note how far it got
        progress_every: if opts.min_ttl_ms.is_some() { PROGRESS_EVERY } else { 0 },
        ftrace: opts.ftrace.clone(),
        ftrace_buffer_kb: opts.ftrace_buffer_kb,
        ftrace_stacktrace: opts.ftrace_stacktrace,
        thp: opts.thp,
        tiers: opts.tiers.clone(),
    };
    initramfs::build(
        &w.join("initramfs"),
        &initrd,
        &opts.busybox,
        &opts.replayer,
        &opts.ops.to_text(),
        &k.modules,
        &spec,
    )?;
    let serial = w.join("serial.log");
    let _ = std::fs::remove_file(&serial);
    let swap = w.join("swap.img");
    let swap_disk = opts.swap_mib > 0 && !opts.swap_zram;
    if swap_disk {
        build_swap_image(&swap, opts.swap_mib)?;
    }
    let mut args = qemu_args(
        &k.vmlinux,
        &initrd,
        &disk,
        swap_disk.then_some(swap.as_path()),
        &serial,
        GuestShape {
            mem_mib: opts.guest_mem_mib,
            icount: opts.icount,
            cpus: opts.cpus,
            thp: opts.thp,
            damon_stat: opts.damon_stat,
        },
    );
    if !opts.numa_mib.is_empty() {
        let sum: u32 = opts.numa_mib.iter().sum();
        if sum != opts.guest_mem_mib {
            return Err(Error::Config(format!(
                "NUMA nodes of {sum} MiB in all for a guest of {} MiB",
                opts.guest_mem_mib
            )));
        }
        args.extend(numa_args(&opts.numa_mib, opts.cpus));
    }
    let log = boot(&args, &serial, opts.timeout)?;
    let mut r = serial::parse_serial(&log)?;
    r.package = k.package;
    r.memcg_max_bytes = opts.memcg_max_bytes;
    r.swap_mib = opts.swap_mib;
    r.cpus = u64::from(opts.cpus.max(1));
    r.wall_seconds = start.elapsed().as_secs_f64();
    Ok(r)
}

/// A checked-in real-kernel result with the workload that produced it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Fixture {
    /// The command that regenerates it.
    pub command: String,
    /// Pages of the one data file.
    pub file_pages: u64,
    /// Buffered reads.
    pub accesses: u64,
    /// The distribution (`uniform`, `zipf:0.9`).
    pub dist: String,
    /// Seed of the sampler.
    pub seed: u64,
    /// Window of the miss counts.
    pub window: u64,
    /// An anon workload ([`anon_ops`]) instead of file reads (`file_pages` is then 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anon: Option<AnonFixture>,
    /// A mixed workload ([`mixed_ops`]): reads of the file of `file_pages` pages interleaved with
    /// accesses to an anon region (`anon` is then `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixed: Option<MixedFixture>,
    /// An lrugen experiment (the TOML text) whose workload is the replay ([`ops::experiment_ops`]
    /// of its first cell; the other fields but `window` are then unused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<String>,
    /// What the kernel did.
    pub run: KernelRun,
}

/// A real-kernel run written by `lrugen kernel --fixture FILE`: everything a test needs to run
/// the model on the same ops with the same settings and compare (no qemu).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Capture {
    /// The `lrugen kernel` command line that made it.
    pub command: String,
    /// The built-in workload (its [`ops::BuiltIn::ops`] is the op file the guest replayed), or
    /// None for an experiment's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<ops::BuiltIn>,
    /// The experiment (its TOML text) whose workload the guest replayed ([`ops::experiment_ops`]
    /// of its first cell, with `settings.window`), when `workload` is None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<String>,
    /// The op file itself (its text, `lrugen_replay::OpFile::to_text`), when neither `workload`
    /// nor `experiment` makes it: a trace replayed with `--trace` (its references as the guest
    /// replayed them, so that the fixture needs no trace file beside it); or when it has control
    /// ops (`--ctl`): then it is the op file replayed, `workload` or `experiment` saying what
    /// made its accesses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops: Option<String>,
    /// The settings of both sides (the model's capacity among them).
    pub settings: report::Settings,
    /// What the kernel did.
    pub run: KernelRun,
}

impl Capture {
    /// Where the guest mapped `ops` (the op file of [`Capture::ops`]), read off the replayer's
    /// `smaps`; PMD-aligned (the default) in captures made before it was read. With the
    /// replayer's page tables for a trace's replay ([`model::Layout::for_replay`]).
    pub fn layout(&self, ops: &OpFile) -> model::Layout {
        self.run.layout(ops, self.command.contains("--trace "))
    }

    /// The op file the guest replayed.
    pub fn ops(&self) -> Result<OpFile, Error> {
        // the op file kept whole (a trace's, or a workload's with control ops) comes first
        if let (Some(text), true) = (&self.ops, self.workload.is_some() || self.experiment.is_some()) {
            return OpFile::parse(text).map_err(|e| Error::Config(format!("the capture's op file: {e}")));
        }
        match (&self.workload, &self.experiment) {
            (Some(b), _) => b.ops(),
            (None, Some(text)) => {
                let cfg = fixture_experiment(text)?;
                let ops = ops::experiment_ops(&cfg, self.settings.window)?;
                Ok(OpFile {
                    lockstep: self.settings.lockstep,
                    ..ops
                })
            }
            (None, None) => match &self.ops {
                Some(text) => OpFile::parse(text).map_err(|e| Error::Config(format!("the capture's op file: {e}"))),
                None => Err(Error::Config(
                    "the capture holds neither a built-in workload, an experiment nor an op file".into(),
                )),
            },
        }
    }

    /// Read one, naming the file in errors.
    pub fn load(path: &Path) -> Result<Capture, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| io("reading", path, e))?;
        serde_json::from_str(&text).map_err(|e| {
            Error::Config(format!(
                "{}: line {} column {}: not a capture of `lrugen kernel --fixture`: {e}",
                path.display(),
                e.line(),
                e.column()
            ))
        })
    }
}

/// The run configuration of the first cell of an experiment given as TOML text.
pub fn fixture_experiment(text: &str) -> Result<lrugen::sim::RunConfig, Error> {
    let exp = lrugen::experiment::spec::Experiment::parse(text, std::path::Path::new("fixture.toml"))
        .map_err(|e| Error::Config(e.to_string()))?;
    let cell = exp
        .cells()
        .into_iter()
        .next()
        .ok_or_else(|| Error::Config("the experiment has no cell".into()))?;
    Ok(exp.run_config(&cell, None))
}

/// The anon part of a [`Fixture`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AnonFixture {
    /// Pages of the anon region.
    pub pages: u64,
    /// Fraction of measured accesses that are stores.
    pub write_ratio: f64,
}

impl Fixture {
    /// The op file it ran.
    pub fn ops(&self) -> Result<OpFile, Error> {
        if let Some(text) = &self.experiment {
            let cfg = fixture_experiment(text)?;
            let o = ops::experiment_ops(&cfg, self.window)?;
            return Ok(OpFile {
                window: self.window,
                ..o
            });
        }
        let d: lrugen::workload::dist::Dist = self.dist.parse().map_err(Error::Config)?;
        if let Some(a) = &self.anon {
            return anon_ops(a.pages, self.accesses, d, a.write_ratio, self.seed, self.window);
        }
        if let Some(mx) = &self.mixed {
            return mixed_ops(self.file_pages, mx, self.accesses, d, self.seed, self.window);
        }
        Ok(file_read_ops(self.file_pages, self.accesses, d, self.seed, self.window))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A guest of three nodes: a memory backend and a node each, the vCPUs on node 0 only, a
    /// SLIT distance between every pair, and HMAT latency and bandwidth from node 0's initiator
    /// that make the CPU-less nodes slower.
    #[test]
    fn numa_args_make_cpu_less_nodes_slower_memory() {
        let a = numa_args(&[192, 128, 64], 2).join(" ");
        for want in [
            "-machine hmat=on",
            "memory-backend-ram,size=192M,id=m0",
            "memory-backend-ram,size=64M,id=m2",
            "node,nodeid=0,memdev=m0,cpus=0-1,initiator=0",
            "node,nodeid=2,memdev=m2,initiator=0",
            "dist,src=0,dst=1,val=20",
            "dist,src=1,dst=2,val=20",
            "target=0,hierarchy=memory,data-type=access-latency,latency=10",
            "target=1,hierarchy=memory,data-type=access-latency,latency=40",
            "target=2,hierarchy=memory,data-type=access-bandwidth,bandwidth=2048M",
        ] {
            assert!(a.contains(want), "{want} missing from {a}");
        }
        assert!(!a.contains("nodeid=1,memdev=m1,cpus"), "{a}");
    }

    #[test]
    fn model_capacity_leaves_out_the_replayers_anon_and_the_kernels_charges() {
        let stat = |anon: i64, file: i64, kernel: i64| -> BTreeMap<String, i64> {
            [("anon", anon), ("file", file), ("kernel", kernel)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v * 4096))
                .collect()
        };
        let mut r = KernelRun {
            memcg_max_bytes: 2048 * 4096,
            memory_stat: stat(0, 1904, 20),
            memory_stat_at_end_of_replay: stat(115, 1904, 25),
            ..Default::default()
        };
        assert_eq!(r.resident_pages(), 115 + 1904);
        // a file-only workload: the limit less the replayer's anon and the kernel's charges
        assert_eq!(r.model_capacity_pages(false), 2048 - 115 - 25);
        // a workload with anon pages of its own: what the memcg held
        assert_eq!(r.model_capacity_pages(true), 115 + 1904);
        // a fixture without the end-of-replay read-back: what the memcg held after the exit
        r.memory_stat_at_end_of_replay.clear();
        assert_eq!(r.model_capacity_pages(false), 1904);
    }

    #[test]
    fn anon_ops_populate_then_measure_the_models_stream() {
        let o = anon_ops(64, 1000, "zipf:0.9".parse().unwrap(), 0.3, 1, 100).unwrap();
        assert_eq!(o.anon_pages, 64);
        assert_eq!(o.ops.len(), 64 + 1 + 1000);
        for (i, op) in o.ops[..64].iter().enumerate() {
            assert_eq!(*op, ReplayOp::Store { vpn: i as u64 });
        }
        assert_eq!(o.ops[64], ReplayOp::MeasureStart);
        let stores = o.ops[65..]
            .iter()
            .filter(|op| matches!(op, ReplayOp::Store { .. }))
            .count();
        assert!((200..400).contains(&stores), "{stores}");
        assert_eq!(OpFile::parse(&o.to_text()).unwrap(), o);
        // Deterministic in the seed.
        assert_eq!(anon_ops(64, 1000, "zipf:0.9".parse().unwrap(), 0.3, 1, 100).unwrap(), o);
    }

    #[test]
    fn mixed_ops_interleave_the_anon_and_file_streams() {
        let d: lrugen::workload::dist::Dist = "zipf:0.9".parse().unwrap();
        let mx = MixedFixture {
            anon_pages: 64,
            anon_fraction: 0.25,
            write_ratio: 0.3,
        };
        let o = mixed_ops(256, &mx, 4000, d, 7, 500).unwrap();
        assert_eq!(o.anon_pages, 64);
        assert_eq!(o.files.len(), 1);
        assert_eq!((o.files[0].id, o.files[0].pages), (0, 256));
        // The populate stores, `w`, then exactly `accesses` measured ops.
        for (i, op) in o.ops[..64].iter().enumerate() {
            assert_eq!(*op, ReplayOp::Store { vpn: i as u64 });
        }
        assert_eq!(o.ops[64], ReplayOp::MeasureStart);
        let measured = &o.ops[65..];
        assert_eq!(measured.len(), 4000);
        let anon: Vec<ReplayOp> = measured
            .iter()
            .copied()
            .filter(|op| matches!(op, ReplayOp::Load { .. } | ReplayOp::Store { .. }))
            .collect();
        let reads: Vec<ReplayOp> = measured
            .iter()
            .copied()
            .filter(|op| matches!(op, ReplayOp::Read { .. }))
            .collect();
        assert_eq!(anon.len() + reads.len(), 4000, "only anon accesses and file reads");
        // About a quarter go to the anon region.
        assert!((800..1200).contains(&anon.len()), "{}", anon.len());
        // The anon sub-stream is the model's Anon stream, the reads those of file_read_ops.
        let a = anon_ops(64, anon.len() as u64, d, 0.3, 7, 500).unwrap();
        assert_eq!(anon, a.ops[65..]);
        let f = file_read_ops(256, reads.len() as u64, d, lrugen::workload::dist::mix64(7), 500);
        assert_eq!(reads, f.ops);
        for op in &reads {
            assert!(matches!(op, ReplayOp::Read { file: 0, index } if *index < 256));
        }
        assert_eq!(OpFile::parse(&o.to_text()).unwrap(), o);
        // Deterministic in the seed, different with another seed.
        assert_eq!(mixed_ops(256, &mx, 4000, d, 7, 500).unwrap(), o);
        assert_ne!(mixed_ops(256, &mx, 4000, d, 8, 500).unwrap(), o);
        // The fraction is honoured at the ends.
        let all_file = mixed_ops(
            256,
            &MixedFixture {
                anon_fraction: 0.0,
                ..mx.clone()
            },
            100,
            d,
            7,
            0,
        )
        .unwrap();
        assert!(all_file.ops[65..].iter().all(|op| matches!(op, ReplayOp::Read { .. })));
        let all_anon = mixed_ops(
            256,
            &MixedFixture {
                anon_fraction: 1.0,
                ..mx.clone()
            },
            100,
            d,
            7,
            0,
        )
        .unwrap();
        assert!(all_anon.ops[65..].iter().all(|op| !matches!(op, ReplayOp::Read { .. })));
    }

    #[test]
    fn mixed_ops_refuse_bad_parameters() {
        let d: lrugen::workload::dist::Dist = "uniform".parse().unwrap();
        let mx = MixedFixture {
            anon_pages: 64,
            anon_fraction: 1.5,
            write_ratio: 0.3,
        };
        let e = mixed_ops(256, &mx, 10, d, 1, 0).unwrap_err().to_string();
        assert!(e.contains("anon fraction 1.5"), "{e}");
        let e = mixed_ops(
            0,
            &MixedFixture {
                anon_fraction: 0.5,
                ..mx.clone()
            },
            10,
            d,
            1,
            0,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("file 0 pages"), "{e}");
        let e = mixed_ops(
            256,
            &MixedFixture {
                anon_fraction: 0.5,
                write_ratio: 2.0,
                ..mx
            },
            10,
            d,
            1,
            0,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("write ratio"), "{e}");
    }

    /// The kernel command line carries the run's `transparent_hugepage` (`never` unless set) and
    /// turns DAMON_STAT off unless the run keeps it.
    #[test]
    fn qemu_boots_with_the_runs_thp_and_damon_stat_settings() {
        let p = Path::new("x");
        let append = |thp, damon_stat| {
            let a = qemu_args(
                p,
                p,
                p,
                None,
                p,
                GuestShape {
                    mem_mib: 512,
                    icount: true,
                    cpus: 1,
                    thp,
                    damon_stat,
                },
            );
            let i = a.iter().position(|x| x == "-append").unwrap();
            a[i + 1].clone()
        };
        assert!(append(Thp::Never, false).ends_with(" transparent_hugepage=never damon_stat.enabled=N"));
        assert!(append(Thp::Madvise, false).ends_with(" transparent_hugepage=madvise damon_stat.enabled=N"));
        assert!(append(Thp::Always, true).ends_with(" transparent_hugepage=always"));
        assert!(!append(Thp::Never, true).contains("damon_stat"));
    }
}

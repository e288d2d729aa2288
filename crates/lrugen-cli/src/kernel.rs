// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen kernel`: run a workload (built in, a trace, or an experiment's) on a real Linux kernel
//! under qemu, replay the same op file on the model with the same settings, and report the two
//! side by side (terminal table; with `--out`, `report.json` and plots).

use crate::checks::{count, count32};
use crate::out::{out, outln};
use clap::Args;
use lrugen::experiment::outdir::{self, Request, Staging};
use lrugen::experiment::size::parse_pages;
use lrugen::mm::thp::Thp;
use lrugen::sim::PolicyKind;
use lrugen::workload::dist::Dist;
use lrugen_kernel::ops::{self, Access};
use lrugen_kernel::ops::{OpFile, ReplayOp};
use lrugen_kernel::report::{Report, Settings};
use lrugen_kernel::{KernelOpts, KernelSource, LruMode};
use std::path::PathBuf;

mod matrix;

/// `lrugen kernel`: one run (its options, [`KernelArgs`]) or a matrix of them ([`MatrixArgs`]).
#[derive(Args)]
pub struct KernelCmd {
    #[command(flatten)]
    kernel: KernelArgs,
    #[command(flatten)]
    matrix: MatrixArgs,
}

/// `lrugen kernel`'s options alone: the parser of one matrix cell's command line.
#[derive(clap::Parser)]
#[command(name = "lrugen kernel")]
struct OneKernel {
    #[command(flatten)]
    a: KernelArgs,
}

/// The options of one run that a matrix file sets per cell instead.
const PER_CELL: [&str; 33] = [
    "series",
    "numa",
    "image",
    "modules",
    "lru",
    "lru_gen_enabled",
    "min_ttl_ms",
    "swappiness",
    "page_cluster",
    "swap",
    "swap_size",
    "memcg_max",
    "guest_mem",
    "access",
    "size",
    "hot_size",
    "advice",
    "read_ahead_kb",
    "anon_size",
    "write_ratio",
    "accesses",
    "dist",
    "seed",
    "trace",
    "format",
    "exp",
    "ops",
    "cpus",
    "lockstep",
    "every",
    "fixture",
    "debugfs_every_window",
    "ftrace",
];

/// `lrugen kernel --matrix`: scenarios × kernels × policies × repeats.
#[derive(Args)]
pub struct MatrixArgs {
    /// Run a fidelity matrix (docs/kernel-matrix.md): the scenarios of FILE.toml (each a set of
    /// this command's options as TOML keys) on each of its kernel series under each of its
    /// policies, each cell booted `repeats` times, two VMs at a time (--jobs), the kernels and
    /// data disks prepared once; the model once per cell against the kernel's mean and run-to-run
    /// spread: a table, and with --out matrix.json, matrix.csv, plots and index.html.
    #[arg(long, value_name = "FILE.toml", conflicts_with_all = PER_CELL)]
    matrix: Option<PathBuf>,
    /// With --matrix: print the cells and the `lrugen kernel` command each boot equals (checked
    /// as they would run), and boot nothing.
    #[arg(long, requires = "matrix")]
    list: bool,
    /// With --matrix: VMs at a time (each qemu is one busy thread).
    #[arg(long, value_name = "N", default_value_t = 2, requires = "matrix", value_parser = count32, allow_negative_numbers = true)]
    jobs: u32,
    /// With --matrix: also write each boot as a fixture (as --fixture does) into DIR, named
    /// debian-SERIES-POLICY-SCENARIO.json (…-bootN.json with repeats > 1).
    #[arg(long, value_name = "DIR", requires = "matrix")]
    fixtures: Option<PathBuf>,
    /// With --matrix: only these scenarios (comma-separated names of the file's).
    #[arg(long, value_name = "NAMES", requires = "matrix", value_delimiter = ',')]
    only_scenarios: Vec<String>,
    /// With --matrix: only these of its kernel series.
    #[arg(long, value_name = "LIST", requires = "matrix", value_delimiter = ',')]
    only_series: Vec<String>,
    /// With --matrix: only these of its policies.
    #[arg(long, value_name = "LIST", requires = "matrix", value_delimiter = ',')]
    only_policies: Vec<String>,
}

/// Options of `lrugen kernel`.
#[derive(Args)]
pub struct KernelArgs {
    /// Debian kernel series to boot (the newest package of it): 6.1 or 6.12 (bookworm-security),
    /// or 7 (the newest 7.x, from Debian sid through a private apt source list under the cache
    /// dir; also spelt 7.x; 7.N for the newest 7.N.y).
    #[arg(long, default_value = "6.1")]
    series: String,
    /// Boot this kernel image (bzImage or vmlinux) instead, with --modules.
    #[arg(long, value_name = "FILE", requires = "modules")]
    image: Option<PathBuf>,
    /// The image's lib/modules/KVER directory.
    #[arg(long, value_name = "DIR")]
    modules: Option<PathBuf>,
    /// LRU in the guest and the model: mglru or classic.
    #[arg(long, default_value = "mglru")]
    lru: String,
    /// MGLRU: /sys/kernel/mm/lru_gen/enabled (y, n, or bits such as 0x0007: 0x1 core, 0x2
    /// page-table walks, 0x4 non-leaf PMD accessed bits); 0 or n means the classic LRU.
    #[arg(long, value_name = "BITS", default_value = "y")]
    lru_gen_enabled: String,
    /// /sys/kernel/mm/lru_gen/min_ttl_ms.
    #[arg(long, value_name = "MS", value_parser = count32, allow_negative_numbers = true)]
    min_ttl_ms: Option<u32>,
    /// vm.swappiness (0..=200; default the kernel's, 60).
    #[arg(long, value_name = "N", value_parser = count32, allow_negative_numbers = true)]
    swappiness: Option<u32>,
    /// vm.page-cluster (swap read-ahead of up to 2^N pages, on both sides; default 0).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = count32, allow_negative_numbers = true)]
    page_cluster: u32,
    /// Swap: none, disk (a virtio disk) or zram (in the guest; the model gets zram's measured
    /// compression ratio). Default: disk when the workload has anon memory, else none.
    #[arg(long, value_name = "KIND")]
    swap: Option<String>,
    /// Swap size.
    #[arg(long, value_name = "SIZE", default_value = "64M", allow_hyphen_values = true)]
    swap_size: String,
    /// memory.max of the workload memcg (e.g. 32M); default 32M, or the experiment's memcg.max.
    /// `max`: no limit, the workload under global pressure (still in its memcg, whose
    /// memory.stat is read); the model then runs on the guest's zones
    /// (docs/global-pressure.md).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    memcg_max: Option<String>,
    /// Memory of the guest (whole MiB, at least 128M).
    #[arg(long, value_name = "SIZE", default_value = "512M", allow_hyphen_values = true)]
    guest_mem: String,
    /// A guest of NUMA nodes of these sizes (comma-separated, whole MiB; they make the guest's
    /// memory, --guest-mem is then their sum): node 0 has the vCPUs, the others are CPU-less
    /// and, by the ACPI HMAT qemu gives them, one memory tier down (docs/memory-tiers.md,
    /// "Real-kernel fixtures"). The experiment's [machine.tiers] knobs are written in the guest
    /// and given to the model; its placement becomes mbind ops of the op file. Needs
    /// --memcg-max max (the model runs the guest's nodes under global pressure)
    #[arg(long, value_name = "SIZES")]
    numa: Option<String>,
    /// Built-in workload: file (buffered reads of one file), mmap (loads through a shared
    /// mapping of it), anon (populate, then loads and stores, with swap), mixed (file reads and
    /// anon accesses in turn) or hotcold (a hot file of --hot-size read once, then read from
    /// --dist while a cold file of --size is read once through, its reads spread evenly). With
    /// --trace: how its records are replayed, as `lrugen run --access` (file, mmap, anon or
    /// mixed; mixed replays file pages as buffered reads: the replayer's mappings are not
    /// executable, so a lackey trace's fetches are refused there).
    #[arg(long, value_name = "KIND", default_value = "file", conflicts_with_all = ["exp", "ops"])]
    access: String,
    /// File size of the built-in workload.
    #[arg(long, value_name = "SIZE", default_value = "64M", allow_hyphen_values = true)]
    size: String,
    /// Hot file of the built-in hotcold workload.
    #[arg(long, value_name = "SIZE", default_value = "16M", allow_hyphen_values = true)]
    hot_size: String,
    /// Advice the files are opened and mapped with: random (POSIX_FADV_RANDOM, MADV_RANDOM: no
    /// read-ahead or read-around; from 6.3 young PTEs of the mapping are ignored) or normal.
    #[arg(long, value_name = "ADVICE", default_value = "random", conflicts_with_all = ["exp", "ops"])]
    advice: String,
    /// read_ahead_kb of the data disk (default: the kernel's, 128); the model reads ahead a
    /// quarter of it in pages. Matters with --advice normal.
    #[arg(long, value_name = "KB", value_parser = count32, allow_negative_numbers = true)]
    read_ahead_kb: Option<u32>,
    /// Anon region of the built-in anon and mixed workloads.
    #[arg(long, value_name = "SIZE", default_value = "16M", allow_hyphen_values = true)]
    anon_size: String,
    /// Fraction of anon accesses that are stores (anon, mixed).
    #[arg(long, value_name = "F", default_value_t = 0.3, allow_negative_numbers = true)]
    write_ratio: f64,
    /// Measured accesses of the built-in workload.
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = count, allow_negative_numbers = true)]
    accesses: u64,
    /// Page distribution: uniform, zipf:THETA, gauss:SD_PCT (a Gaussian around the middle,
    /// σ = SD_PCT % of the range, hot pages contiguous) or loop (every page in order, again and
    /// again).
    #[arg(long, default_value = "zipf:0.9")]
    dist: String,
    /// Seed of the stream.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = count, allow_negative_numbers = true)]
    seed: u64,
    /// Replay a trace (any format lrugen reads) as buffered 4 KiB reads of one file of the
    /// trace's distinct pages (or as --access says: mmap loads, anon loads and stores, mixed).
    #[arg(long, value_name = "FILE", conflicts_with = "exp")]
    trace: Option<PathBuf>,
    /// Format of --trace, for a file whose name does not tell it (as `lrugen run --format`).
    #[arg(long, value_name = "NAME", requires = "trace", value_parser = super::trace_format)]
    format: Option<lrugen_trace::TraceFormat>,
    /// Run an experiment's workload (its first sweep point, repetition 0's seed) in a memcg of its
    /// memcg.max, with its swappiness, min_ttl_ms and lru_gen capability bits unless the flags
    /// here set them.
    #[arg(long, value_name = "FILE.toml")]
    exp: Option<PathBuf>,
    /// Replay an op file as it is (docs/op-files.md; `lrugen ops build` writes one, `--fixture`
    /// keeps it): every version, tasks, control ops and process ops included. --every sets its
    /// window, --lockstep its rounds.
    #[arg(long, value_name = "FILE.ops", conflicts_with_all = ["exp", "trace"])]
    ops: Option<PathBuf>,
    /// vCPUs of the guest (-smp; qemu's TCG under -icount runs them round robin in one thread).
    /// Default: the experiment's `[engine] cpus`, else 1.
    #[arg(long, value_name = "N", value_parser = count32, allow_negative_numbers = true)]
    cpus: Option<u32>,
    /// Replay a multi-task workload's tasks in lockstep: in rounds of K accesses each, every
    /// task waiting at a round's end for the others (op files version 5, docs/op-files.md), so
    /// that the guest interleaves the tasks' accesses as the model does instead of as qemu's
    /// round-robin vCPUs and the tasks' unequal speeds make it.
    #[arg(long, value_name = "K", value_parser = count32, allow_negative_numbers = true)]
    lockstep: Option<u32>,
    /// Window: report misses and capture lru_gen every N measured accesses (default: a 20th of
    /// the run).
    #[arg(long, value_name = "N", value_parser = count, allow_negative_numbers = true)]
    every: Option<u64>,
    /// Write report.json, the plots (misses.svg/png, generations.svg/png) and kernel-run.json
    /// (everything the guest reported) here: a new or empty directory, or one `lrugen kernel`
    /// wrote (replaced whole). Checked before booting; written as DIR.partial, renamed when done.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Also write the run as a fixture (the command, the built-in workload, the settings and
    /// everything the guest reported) for the model's tests: a new file, or one `lrugen kernel`
    /// wrote (replaced). Built-in workloads, experiments (--exp, the TOML text kept in it) and
    /// traces (--trace, the op file kept in it, as `--matrix ... --fixtures` keeps it). Checked
    /// before booting; written whole.
    #[arg(long, value_name = "FILE.json")]
    fixture: Option<PathBuf>,
    /// Write --out into a non-empty directory lrugen did not write (files of the same names are
    /// replaced, the others kept).
    #[arg(long, requires = "out")]
    force: bool,
    /// The static replayer (default: $LRUGEN_REPLAYER, else target/x86_64-unknown-linux-gnu/release).
    #[arg(long, value_name = "FILE")]
    replayer: Option<PathBuf>,
    /// Print the kernel's and the model's lru_gen_full too.
    #[arg(long)]
    debugfs: bool,
    /// Capture the kernel's lru_gen_full after every window too (kept in kernel-run.json with
    /// --out).
    #[arg(long)]
    debugfs_every_window: bool,
    /// Trace EVENT in the guest during the replay (repeatable): a tracepoint
    /// (`vmscan/mm_vmscan_lru_isolate`) or a kprobe in kprobe_events' syntax (`p:age
    /// try_to_inc_max_seq`, `r:evict evict_folios $retval`). The trace, on CLOCK_MONOTONIC like
    /// the windows' times, is kept as `ftrace` in kernel-run.json (--out) and in the fixture: what
    /// the kernel did inside a window, to set beside the model. The events the model has
    /// (`lrugen run --ftrace`) are traced in the model too, on the guest's clock, and written as
    /// ftrace-model.txt with --out.
    #[arg(long, value_name = "EVENT", value_parser = ftrace_event)]
    ftrace: Vec<String>,
    /// The guest's ftrace buffer per vCPU with --ftrace (4K to 1G, whole KiB). The kernel
    /// allocates it before the replay, so it is memory the workload does not have: under a memcg
    /// limit that changes nothing the limit does not, but without one (--memcg-max max) it
    /// is less memory for the workload, and the trace's reclaim is not the fixture's (64 MiB in a
    /// 256 MiB guest took the 7.2 MGLRU mixed workload from 15,700 misses to 22,000-23,500). Take
    /// it no larger than the trace needs there (about 100 bytes an event)
    #[arg(long, value_name = "SIZE", default_value = "64M")]
    ftrace_buffer: String,
    /// With --ftrace: record the kernel stack of every traced event (ftrace's `stacktrace`
    /// option; each event is followed by its ` => function` lines in the trace). Stacks take
    /// several hundred bytes an event of the buffer: trace rare events with it (a direct
    /// reclaim's `vmscan/mm_vmscan_direct_reclaim_begin`, say), to see who called them.
    #[arg(long, requires = "ftrace")]
    ftrace_stacktrace: bool,
    /// A control script (`lrugen run --ctl`'s format, docs/control.md) run in the guest and in
    /// the model at the same places of the replay: writes of lru_gen and memory.reclaim and
    /// reads of lru_gen, lru_gen_full, memory.stat and vmstat at measured accesses (`at`,
    /// `every`); each write's return code and the lru_gen text after it are compared, and each
    /// read of memory.stat or vmstat is shown as the counters that moved since the previous read
    /// of that file, kernel beside model. Other actions are refused.
    #[arg(long, value_name = "FILE.toml")]
    ctl: Option<PathBuf>,
    /// transparent_hugepage of the guest (its `transparent_hugepage=` boot parameter) and of the
    /// model: always, madvise or never. Default: the experiment's `[machine] thp`, else never
    /// (docs/thp.md).
    #[arg(long, value_name = "always|madvise|never")]
    thp: Option<String>,
    /// The built-in anon and mixed workloads' anon region advised MADV_HUGEPAGE (the replayer
    /// maps it 2 MiB-aligned; `anon N hugepage` in the op file), as the model's mapping is.
    #[arg(long)]
    madv_hugepage: bool,
    /// DAMON_STAT in the guest: on (the default, as Debian's 7.x kernels start it) or off
    /// (`damon_stat.enabled=N` on the kernel command line). Its kdamond samples the accessed bits
    /// of random pages every few ms, clearing them, which the model does not do; the kernels
    /// without it (6.1, 6.12) ignore the parameter (README, "The guest's own activity").
    #[arg(long, value_name = "on|off", default_value = "on")]
    damon_stat: String,
}

/// Swap of a run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Swap {
    None,
    Disk,
    Zram,
}

/// Everything checked before booting.
struct Plan {
    ops: OpFile,
    /// The built-in workload that made `ops`, if it is one.
    builtin: Option<ops::BuiltIn>,
    workload: String,
    /// `memory.max` of /t, bytes (0: `max`).
    memcg_bytes: u64,
    /// Memory of the guest, MiB.
    guest_mem_mib: u32,
    policy: PolicyKind,
    /// The value for /sys/kernel/mm/lru_gen/enabled (`n`, or the capability bits as 0xNNNN).
    enabled: String,
    swap: Swap,
    swap_mib: u64,
    /// vm.swappiness: the flag's, else the experiment's if it sets one.
    swappiness: Option<u32>,
    /// min_ttl_ms: the flag's, else the experiment's if it sets one.
    min_ttl_ms: Option<u32>,
    /// vCPUs of the guest.
    cpus: u32,
    /// The experiment's TOML text (`--exp`).
    experiment: Option<String>,
    /// transparent_hugepage: the flag's, else the experiment's.
    thp: Thp,
    /// `--damon-stat on`.
    damon_stat: bool,
    /// `--ftrace-buffer`, KiB per vCPU.
    ftrace_buffer_kb: u32,
    /// NUMA nodes of the guest, MiB (`--numa`; empty: one node).
    numa_mib: Vec<u32>,
    /// The experiment's `[machine.tiers]` (a guest of several nodes).
    tiers: Option<lrugen::mm::tiers::TierConfig>,
}

fn plan(a: &KernelArgs) -> Result<Plan, String> {
    let access: Access = a.access.parse().map_err(|e| format!("--access: {e}"))?;
    let dist: Dist = a.dist.parse().map_err(|e| format!("--dist: {e}"))?;
    let advice = match a.advice.as_str() {
        "random" => ops::FileAdvice::Random,
        "normal" => ops::FileAdvice::Normal,
        x => return Err(format!("--advice: expected random or normal, found '{x}'")),
    };
    if !(0.0..=1.0).contains(&a.write_ratio) {
        return Err(format!(
            "--write-ratio: expected a fraction in 0..=1, found {}",
            a.write_ratio
        ));
    }
    if a.every == Some(0) {
        return Err("--every: expected at least 1 access per window".into());
    }
    if a.swappiness.is_some_and(|v| v > 200) {
        return Err(format!(
            "--swappiness: expected 0..=200, found {}",
            a.swappiness.unwrap_or(0)
        ));
    }
    if a.page_cluster > 31 {
        return Err(format!("--page-cluster: expected 0..=31, found {}", a.page_cluster));
    }
    let mut bits = super::parse_enabled(&a.lru_gen_enabled)?;
    let (mut swappiness, mut min_ttl_ms) = (a.swappiness, a.min_ttl_ms);
    let mut tiers: Option<lrugen::mm::tiers::TierConfig> = None;
    let mut exp_nodes = 0;
    let mut thp = match a.thp.as_deref() {
        None => None,
        Some(t) => Some(Thp::parse(t).ok_or_else(|| format!("--thp: expected always, madvise or never, found '{t}'"))?),
    };
    if a.madv_hugepage && (a.exp.is_some() || a.trace.is_some() || !matches!(access, Access::Anon | Access::Mixed)) {
        return Err(
            "--madv-hugepage: advises the anon region of the built-in anon and mixed workloads; expected \
             --access anon or mixed without --trace or --exp"
                .into(),
        );
    }
    if let Some(path) = &a.exp {
        // the experiment's own kernel settings, where the flags leave the kernel's defaults
        let exp = lrugen::experiment::spec::Experiment::from_file(path).map_err(|e| e.to_string())?;
        if exp.points.iter().any(|p| !p.config.switch_at.is_empty()) {
            return Err(format!(
                "{}: [mglru] switch_at: lrugen kernel does not write /sys/kernel/mm/lru_gen/enabled during \
                 the guest's run; expected no switch_at (run it with lrugen exp)",
                path.display()
            ));
        }
        if let Some(p) = exp.points.first() {
            let c = &p.config;
            if a.lru_gen_enabled == "y" {
                bits = c.mglru.caps & 0x7;
            }
            if swappiness.is_none() && c.machine.swappiness != 60 {
                swappiness = Some(c.machine.swappiness);
            }
            if min_ttl_ms.is_none() && c.mglru.min_ttl_ms > 0 {
                min_ttl_ms = Some(c.mglru.min_ttl_ms.min(u32::MAX as u64) as u32);
            }
            if thp.is_none() {
                thp = Some(c.machine.thp);
            }
            tiers = c.machine.tiers.clone();
            exp_nodes = c.machine.nodes.len();
        }
    }
    let numa_mib = match &a.numa {
        None => Vec::new(),
        Some(s) => numa_mib(s)?,
    };
    if tiers.is_some() && numa_mib.is_empty() {
        return Err(format!(
            "{}: [machine.tiers] needs a guest of several nodes: give their sizes with --numa (e.g. --numa 192M,128M --memcg-max max)",
            a.exp.as_deref().unwrap_or(std::path::Path::new("the experiment")).display()
        ));
    }
    if tiers.is_some() && exp_nodes != numa_mib.len() {
        // the placement's and the tiers' node numbers are the guest's: refused now, not after
        // the boot (a guest `mbind` to a node it lacks, a model tier table of the wrong size)
        return Err(format!(
            "{}: [machine] has {exp_nodes} nodes, --numa gives the guest {}: expected one size per node",
            a.exp
                .as_deref()
                .unwrap_or(std::path::Path::new("the experiment"))
                .display(),
            numa_mib.len()
        ));
    }
    if !numa_mib.is_empty() && a.memcg_max.as_deref() != Some("max") {
        return Err(
            "--numa: the model runs a guest of several nodes under global pressure; expected --memcg-max max".into(),
        );
    }
    if !numa_mib.is_empty() && tiers.is_none() {
        // the nodes and tiers without demotion or balancing (the kernel's knobs, but
        // numa_balancing, which Debian turns on and the model has off by default)
        tiers = Some(Default::default());
    }
    let (policy, enabled) = match a.lru.as_str() {
        "classic" => (PolicyKind::Classic, "n".to_string()),
        "mglru" if bits == 0 => (PolicyKind::Classic, "n".to_string()),
        "mglru" => (PolicyKind::Mglru, format!("0x{bits:04x}")),
        x => return Err(format!("--lru: expected mglru or classic, found '{x}'")),
    };
    let swap_pages = parse_pages(&a.swap_size).map_err(|e| format!("--swap-size: {e}"))?;
    let explicit_swap = match a.swap.as_deref() {
        None => None,
        Some("none") => Some(Swap::None),
        Some("disk") => Some(Swap::Disk),
        Some("zram") => Some(Swap::Zram),
        Some(x) => return Err(format!("--swap: expected none, disk or zram, found '{x}'")),
    };
    // `max` is no limit, kept as 0 bytes from here on (as `KernelOpts::memcg_max_bytes` takes it)
    let unlimited = a.memcg_max.as_deref() == Some("max");
    let memcg_flag = a
        .memcg_max
        .as_deref()
        .filter(|_| !unlimited)
        .map(|s| parse_pages(s).map_err(|e| format!("--memcg-max: {e}")))
        .transpose()?;
    let guest_mem_mib = if numa_mib.is_empty() {
        guest_mem_mib(&a.guest_mem)?
    } else {
        numa_mib.iter().sum()
    };
    let mut builtin = None;
    let mut experiment = None;
    let mut cpus = 1;
    let (ops, workload, memcg_pages) = if let Some(path) = &a.ops {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut ops = OpFile::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some(w) = a.every {
            ops.window = w;
        }
        let w = format!(
            "op file {}: {} ops of {} task{}",
            path.display(),
            ops.all_ops().count(),
            ops.nr_tasks(),
            if ops.nr_tasks() == 1 { "" } else { "s" }
        );
        (ops, w, memcg_flag.unwrap_or(parse_pages("32M")?))
    } else if let Some(path) = &a.exp {
        let exp = lrugen::experiment::spec::Experiment::from_file(path).map_err(|e| e.to_string())?;
        if let Some(why) = &exp.skip {
            return Err(format!("{}: {why}", path.display()));
        }
        let cell = exp.cells().into_iter().next().ok_or("the experiment has no cell")?;
        let cfg = exp.run_config(&cell, None);
        cpus = ops::experiment_cpus(&cfg);
        experiment = Some(std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?);
        let probe = ops::experiment_ops(&cfg, 1).map_err(|e| format!("{}: {e}", path.display()))?;
        let measured = measured_len(&probe);
        let window = a.every.unwrap_or((measured / 20).max(1));
        let ops = OpFile { window, ..probe };
        let memcg = memcg_flag.or(cfg.memcg.max).unwrap_or(parse_pages("32M")?);
        let w = format!(
            "experiment {} ({}), seed {}",
            exp.name,
            cfg.workload.describe(),
            cell.seed
        );
        (ops, w, memcg)
    } else if let (Some(path), Access::Anon | Access::Mixed) = (&a.trace, access) {
        // a trace of typed references: anon loads/stores and file reads
        let typed = if access == Access::Anon {
            lrugen::workload::TraceAccess::Anon
        } else {
            lrugen::workload::TraceAccess::Mixed
        };
        let t = lrugen::workload::trace_ops::load_trace_ops(path, a.format, typed).map_err(|e| e.to_string())?;
        let window = a.every.unwrap_or((t.refs.len() / 20).max(1));
        let mut ops = ops::typed_trace_ops(&t, window).map_err(|e| format!("--trace {}: {e}", path.display()))?;
        for f in &mut ops.files {
            f.advice = advice;
        }
        let w = format!(
            "trace {} as {}: {} references of {} anon and {} file pages",
            path.display(),
            access.name(),
            ops.ops.len(),
            t.nr_anon,
            t.nr_file
        );
        (ops, w, memcg_flag.unwrap_or(parse_pages("32M")?))
    } else if let Some(path) = &a.trace {
        if !matches!(access, Access::File | Access::Mmap) {
            return Err(format!(
                "--access {} with --trace: a trace is replayed as file, mmap, anon or mixed",
                access.name()
            ));
        }
        // an op file holds every request: the guest replays it whole
        let t = lrugen::workload::load_trace_as(path, a.format).map_err(|e| e.to_string())?;
        let nr = t.nr_unique;
        let pages = t
            .pages
            .to_vec()
            .map_err(|e| format!("{}: reading back its page ids: {e}", path.display()))?;
        let window = a.every.unwrap_or((pages.len() as u64 / 20).max(1));
        let mut ops = ops::trace_ops(&pages, nr, access == Access::Mmap, window);
        for f in &mut ops.files {
            f.advice = advice;
        }
        let w = format!(
            "trace {}: {} {} of {} distinct pages",
            path.display(),
            pages.len(),
            if access == Access::Mmap {
                "mmap loads"
            } else {
                "buffered reads"
            },
            nr
        );
        (ops, w, memcg_flag.unwrap_or(parse_pages("32M")?))
    } else {
        let file_pages = parse_pages(&a.size).map_err(|e| format!("--size: {e}"))?;
        let anon_pages = parse_pages(&a.anon_size).map_err(|e| format!("--anon-size: {e}"))?;
        let hot_pages = parse_pages(&a.hot_size).map_err(|e| format!("--hot-size: {e}"))?;
        if file_pages == 0 || anon_pages == 0 || hot_pages == 0 || a.accesses == 0 {
            return Err("--size, --anon-size, --hot-size and --accesses must be positive".into());
        }
        if access == Access::HotCold && file_pages > a.accesses {
            return Err(format!(
                "--access hotcold reads the cold file (--size, {file_pages} pages) once through among the \
                 --accesses: expected at least {file_pages} accesses, found {}",
                a.accesses
            ));
        }
        let b = ops::BuiltIn {
            hugepage: a.madv_hugepage,
            access,
            file_pages,
            anon_pages,
            hot_pages,
            accesses: a.accesses,
            dist,
            write_ratio: a.write_ratio,
            advice,
            seed: a.seed,
            window: a.every.unwrap_or((a.accesses / 20).max(1)),
        };
        let ops = b.ops().map_err(|e| e.to_string())?;
        let w = b.describe();
        builtin = Some(b);
        (ops, w, memcg_flag.unwrap_or(parse_pages("32M")?))
    };
    if memcg_pages == 0 {
        return Err("--memcg-max: a memcg of 0 bytes leaves no room to run (no limit is `max`)".into());
    }
    let memcg_pages = if unlimited { 0 } else { memcg_pages };
    let ops = match &a.ctl {
        Some(path) => {
            let script = lrugen::control::Script::load(path).map_err(|e| e.to_string())?;
            ops::add_ctl(&ops, &script, &path.display().to_string()).map_err(|e| format!("--ctl {e}"))?
        }
        None => ops,
    };
    let ops = match a.lockstep {
        None => ops,
        Some(0) => return Err("--lockstep: expected accesses per round, 1 or more".into()),
        Some(_) if ops.nr_tasks() == 1 => {
            return Err("--lockstep: the workload has one task; lockstep keeps several in step".into())
        }
        Some(k) => OpFile { lockstep: k, ..ops },
    };
    let swap = explicit_swap.unwrap_or(if ops.has_anon() { Swap::Disk } else { Swap::None });
    if swap != Swap::None && swap_pages == 0 {
        return Err("--swap-size: swap of 0 bytes (use --swap none)".into());
    }
    Ok(Plan {
        ops,
        builtin,
        workload,
        memcg_bytes: memcg_pages * 4096,
        guest_mem_mib,
        policy,
        enabled,
        swap,
        swap_mib: if swap == Swap::None {
            0
        } else {
            (swap_pages * 4096).div_ceil(1 << 20)
        },
        swappiness,
        min_ttl_ms,
        cpus: a.cpus.unwrap_or(cpus).max(1),
        experiment,
        thp: thp.unwrap_or_default(),
        damon_stat: match a.damon_stat.as_str() {
            "on" => true,
            "off" => false,
            x => return Err(format!("--damon-stat: expected on or off, found '{x}'")),
        },
        ftrace_buffer_kb: ftrace_buffer_kb(&a.ftrace_buffer)?,
        numa_mib,
        tiers,
    })
}

/// `--numa`: two to eight nodes of whole MiB, node 0 at least 128 MiB (the guest's kernel,
/// initramfs and replayer live there), each other at least 16 MiB.
fn numa_mib(s: &str) -> Result<Vec<u32>, String> {
    let v = s
        .split(',')
        .map(|x| {
            let pages = parse_pages(x.trim()).map_err(|e| format!("--numa: {e}"))?;
            if pages % 256 != 0 {
                return Err(format!("--numa: expected whole MiB, found '{x}'"));
            }
            Ok((pages / 256) as u32)
        })
        .collect::<Result<Vec<u32>, String>>()?;
    if !(2..=8).contains(&v.len()) {
        return Err(format!("--numa: expected 2 to 8 node sizes, found {}", v.len()));
    }
    if v[0] < 128 || v[1..].iter().any(|&m| m < 16) {
        return Err(format!(
            "--numa: expected node 0 of at least 128M and the others of at least 16M, found '{s}'"
        ));
    }
    if v.iter().map(|&m| u64::from(m)).sum::<u64>() > 65_536 {
        return Err(format!("--numa: expected at most 64G in all, found '{s}'"));
    }
    Ok(v)
}

/// `--ftrace-buffer`: KiB per vCPU, 4K to 1G.
fn ftrace_buffer_kb(s: &str) -> Result<u32, String> {
    let pages = parse_pages(s).map_err(|e| format!("--ftrace-buffer: {e}"))?;
    let kb = pages * 4;
    if !(4..=1 << 20).contains(&kb) {
        return Err(format!("--ftrace-buffer: expected 4K to 1G, found '{s}'"));
    }
    Ok(kb as u32)
}

/// `--guest-mem`: whole MiB, at least 128 (the guest's kernel, initramfs and workload must fit).
fn guest_mem_mib(s: &str) -> Result<u32, String> {
    let pages = parse_pages(s).map_err(|e| format!("--guest-mem: {e}"))?;
    if pages % 256 != 0 {
        return Err(format!("--guest-mem: expected whole MiB, found '{s}'"));
    }
    let mib = pages / 256;
    if !(128..=65_536).contains(&mib) {
        return Err(format!("--guest-mem: expected 128M to 64G, found '{s}'"));
    }
    Ok(mib as u32)
}

/// Measured accesses of all tasks.
fn measured_len(o: &OpFile) -> u64 {
    (0..o.nr_tasks())
        .map(|t| {
            let ops = o.task(t).1;
            let from = ops
                .iter()
                .position(|x| *x == ReplayOp::MeasureStart)
                .map_or(0, |i| i + 1);
            ops[from..]
                .iter()
                .filter(|x| !matches!(x, ReplayOp::Think { .. } | ReplayOp::RequestEnd))
                .count() as u64
        })
        .sum()
}

/// `lrugen ops build`: write the op file `lrugen kernel` would replay for the same workload flags.
#[derive(clap::Args)]
pub struct OpsBuildArgs {
    /// The op file to write (`lrugen-ops 1` text, `docs/op-files.md`); written whole or not at
    /// all (through FILE.partial).
    #[arg(value_name = "FILE.ops")]
    file: PathBuf,
    /// The workload, with the flags of `lrugen kernel` (--access, --size, --anon-size,
    /// --hot-size, --dist, --accesses, --seed, --write-ratio, --advice, --every, --trace,
    /// --format, --exp; --memcg-max for an experiment's); its kernel flags change nothing here.
    #[command(flatten)]
    kernel: KernelArgs,
}

/// Build and write the op file of `a`.
pub fn cmd_ops_build(a: OpsBuildArgs) -> Result<(), String> {
    let p = plan(&a.kernel)?;
    let partial = a.file.with_extension("ops.partial");
    let text = p.ops.to_text();
    std::fs::write(&partial, &text).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, &a.file).map_err(|e| format!("{}: {e}", a.file.display()))?;
    eprintln!(
        "wrote {}: {} ({} ops, {} tasks, {} files, {} anon pages)",
        a.file.display(),
        p.workload,
        p.ops.all_ops().count(),
        p.ops.nr_tasks(),
        p.ops.files.len(),
        (0..p.ops.nr_tasks()).map(|t| p.ops.task(t).0).sum::<u64>()
    );
    Ok(())
}

pub fn cmd_kernel(k: KernelCmd) -> Result<(), String> {
    let a = k.kernel;
    if k.matrix.matrix.is_some() {
        return matrix::cmd_matrix(&k.matrix, a.out.as_deref(), a.force, a.replayer.as_deref());
    }
    let p = plan(&a)?;
    if let Some(path) = &a.fixture {
        check_fixture_target(path)?;
    }
    // the output directory, checked (and its partial directory created) before booting
    let staging = match &a.out {
        Some(dir) => Some(Staging::prepare(Request {
            flag: "--out",
            target: dir,
            kind: outdir::KERNEL,
            of: std::collections::BTreeMap::from([("workload".to_string(), p.workload.clone())]),
            force: a.force,
            resume: false,
        })?),
        None => None,
    };
    let source = match (&a.image, &a.modules) {
        (Some(i), Some(m)) => KernelSource::Image {
            image: i.clone(),
            modules: m.clone(),
        },
        _ => KernelSource::Debian {
            series: a.series.clone(),
        },
    };
    let replayer = a
        .replayer
        .clone()
        .or_else(|| std::env::var_os("LRUGEN_REPLAYER").map(PathBuf::from));
    let o = kernel_opts(&a, &p, source, replayer);
    eprintln!("booting the kernel under qemu (TCG, -icount): this takes a minute or more ...");
    let run = lrugen_kernel::run(&o).map_err(|e| {
        format!(
            "{e} (the guest's serial log and disks are kept in {})",
            o.work_dir.display()
        )
    })?;
    let settings = settings_of(&a, &p, &o, &run);
    // its disk images (the data disk is as large as the files) are not needed any more; the
    // serial log's content is in `run` (`--out` writes it as kernel-run.json)
    let _ = std::fs::remove_dir_all(&o.work_dir);
    let profile = lrugen_kernel::model::profile_for_release(&run.kernel_release);
    let mut cfg = lrugen_kernel::model::config(&settings, profile).map_err(|e| e.to_string())?;
    // the guest's events the model has a counterpart of, traced in the model too
    cfg.ftrace = a
        .ftrace
        .iter()
        .filter(|e| lrugen::mm::ftrace::Ftrace::parse(std::slice::from_ref(*e)).is_ok())
        .cloned()
        .collect();
    let layout = run.layout(&p.ops, a.trace.is_some());
    let (model, model_tasks) = lrugen_kernel::model::run_tasks_at(&p.ops, &cfg, &layout).map_err(|e| e.to_string())?;
    let mut report = Report::build(&run, &model, p.workload.clone(), settings.clone()).map_err(|e| e.to_string())?;
    report.model_oom_killed =
        lrugen_kernel::model::oom_killed(&p.ops, &cfg, &layout, &model).map_err(|e| e.to_string())?;
    report.push_tasks(&run.tasks, &model_tasks);
    if !p.ops.ctl.is_empty() {
        let mine = lrugen_kernel::model::ctl_results(&p.ops, &model.ctl).map_err(|e| e.to_string())?;
        outln!("{}", lrugen_kernel::ctl::table(&run.ctl, &mine));
    }
    if let Some(path) = &a.fixture {
        let c = lrugen_kernel::Capture {
            command: command_line(),
            workload: p.builtin.clone(),
            experiment: p.experiment.clone(),
            ops: fixture_ops(&p),
            settings,
            run: run.clone(),
        };
        let text = serde_json::to_string_pretty(&c).map_err(|e| e.to_string())? + "\n";
        lrugen_cli::run::write_whole(path, &text, "--fixture")?;
        eprintln!("wrote {}", path.display());
    }
    out!("{}", report.table());
    if let Some(staging) = staging {
        let dir = staging.dir().to_path_buf();
        let (mut files, why) = report.write(&dir).map_err(|e| e.to_string())?;
        if let Some(why) = why {
            eprintln!("plots skipped: {why}");
        }
        // the report to share: settings, tables, the plots inline, the command
        let html = report
            .write_html(&command_line(), &dir, &files)
            .map_err(|e| e.to_string())?;
        files.push(html);
        // the model's trace of the events it has, beside the guest's (which kernel-run.json keeps)
        if !cfg.ftrace.is_empty() {
            let t = dir.join("ftrace-model.txt");
            std::fs::write(&t, &model.ftrace).map_err(|e| format!("{}: {e}", t.display()))?;
            files.push(t);
        }
        // everything the guest reported, verbatim (lru_gen/lru_gen_full captures included)
        let raw = dir.join("kernel-run.json");
        let text = serde_json::to_string_pretty(&run).map_err(|e| e.to_string())?;
        std::fs::write(&raw, text).map_err(|e| format!("{}: {e}", raw.display()))?;
        files.push(raw);
        let target = staging.given().to_path_buf();
        staging.commit()?;
        for f in files {
            if let Ok(name) = f.strip_prefix(&dir) {
                eprintln!("wrote {}", target.join(name).display());
            }
        }
    }
    if a.debugfs {
        outln!("\n--- kernel lru_gen_full ---\n{}", run.lru_gen_full);
        if let Some((_, _, full)) = model.debugfs.last() {
            outln!("--- model lru_gen_full ---\n{full}");
        }
    }
    Ok(())
}

/// The options of a run of plan `p` on kernel `source`.
fn kernel_opts(a: &KernelArgs, p: &Plan, source: KernelSource, replayer: Option<PathBuf>) -> KernelOpts {
    let mut o = KernelOpts::new(source, p.ops.clone(), p.memcg_bytes);
    o.lru = if p.policy == PolicyKind::Classic {
        LruMode::Classic
    } else {
        LruMode::Mglru {
            enabled: p.enabled.clone(),
        }
    };
    o.swappiness = p.swappiness;
    o.min_ttl_ms = p.min_ttl_ms;
    o.page_cluster = a.page_cluster;
    o.read_ahead_kb = a.read_ahead_kb;
    o.swap_mib = p.swap_mib;
    o.swap_zram = p.swap == Swap::Zram;
    o.cpus = p.cpus;
    o.guest_mem_mib = p.guest_mem_mib;
    o.lru_gen_every_window = p.policy == PolicyKind::Mglru;
    o.lru_gen_full_every_window = p.policy == PolicyKind::Mglru && a.debugfs_every_window;
    o.ftrace = a.ftrace.clone();
    o.ftrace_buffer_kb = p.ftrace_buffer_kb;
    o.ftrace_stacktrace = a.ftrace_stacktrace;
    let buffer_mib = u64::from(p.ftrace_buffer_kb) * u64::from(p.cpus.max(1)) / 1024;
    if !a.ftrace.is_empty() && p.memcg_bytes == 0 && buffer_mib * 16 >= u64::from(p.guest_mem_mib) {
        eprintln!(
            "note: the ftrace buffer takes {buffer_mib} MiB of the guest's {} MiB, which the workload \
             does not have without a memcg limit: the traced replay's reclaim is not the untraced \
             one's; --ftrace-buffer sets a smaller buffer",
            p.guest_mem_mib
        );
    }
    o.thp = p.thp;
    o.damon_stat = p.damon_stat;
    o.numa_mib = p.numa_mib.clone();
    o.tiers = p.tiers.clone();
    if let Some(r) = replayer {
        o.replayer = r;
    }
    o
}

/// The settings of both sides after run `run` of `o` (zram's measured ratio read from the
/// serial log in its work directory): the model at the kernel's `memory.max`, charged with the
/// kernel memory and the replayer's own pages as the kernel charges them, with the preset of the
/// kernel that ran.
fn settings_of(a: &KernelArgs, p: &Plan, o: &KernelOpts, run: &lrugen_kernel::KernelRun) -> Settings {
    let zram_ratio = if p.swap == Swap::Zram {
        let log = std::fs::read_to_string(o.work_dir.join("serial.log")).unwrap_or_default();
        lrugen_kernel::serial::last_dump(&log, lrugen_kernel::initramfs::ZRAM_MM_STAT)
            .and_then(|t| lrugen_kernel::initramfs::zram_ratio(&t))
    } else {
        None
    };
    let cap = run.model_capacity_for(&p.ops).max(1);
    let profile = lrugen_kernel::model::profile_for_release(&run.kernel_release);
    Settings {
        thp: p.thp,
        lru: p.policy.name().into(),
        lru_gen_enabled: p.enabled.clone(),
        memcg_max_bytes: p.memcg_bytes,
        swappiness: p.swappiness,
        min_ttl_ms: p.min_ttl_ms,
        page_cluster: a.page_cluster,
        read_ahead_kb: a.read_ahead_kb,
        swap: match p.swap {
            Swap::None => "none",
            Swap::Disk => "disk",
            Swap::Zram => "zram",
        }
        .into(),
        swap_mib: p.swap_mib,
        zram_ratio,
        window: p.ops.window,
        model_profile: profile.name().into(),
        model_capacity_pages: cap,
        guest_mem_mib: o.guest_mem_mib,
        zones: run.global_zones(),
        lockstep: p.ops.lockstep,
        numa_mib: p.numa_mib.clone(),
        tiers: p
            .tiers
            .as_ref()
            .map(|t| lrugen_kernel::model::guest_tiers(t, &run.memory_tiers, p.numa_mib.len())),
    }
}

/// The op file a fixture keeps when neither its built-in workload nor its experiment makes it
/// again (a trace's).
fn fixture_ops(p: &Plan) -> Option<String> {
    // with control ops (--ctl), the op file itself: the workload's and the script's ops in order
    (p.builtin.is_none() && p.experiment.is_none() || !p.ops.ctl.is_empty()).then(|| p.ops.to_text())
}

/// `lrugen kernel` and its arguments as typed (quoted where a shell would need it).
fn command_line() -> String {
    let mut v = vec!["lrugen".to_string()];
    v.extend(std::env::args().skip(1).map(|a| {
        if a.chars().all(|c| c.is_ascii_alphanumeric() || "-_.,:/=+@".contains(c)) {
            a
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    }));
    v.join(" ")
}

/// `--fixture FILE` is writable without losing anything: its directory exists and FILE is new or
/// a capture `lrugen kernel` wrote.
fn check_fixture_target(path: &std::path::Path) -> Result<(), String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!("--fixture {}: no directory {}", path.display(), dir.display()));
    }
    if path.is_dir() {
        return Err(format!(
            "--fixture {}: is a directory, expected a file name",
            path.display()
        ));
    }
    if path.exists() {
        lrugen_kernel::Capture::load(path)
            .map_err(|e| format!("--fixture: {e} (refusing to replace a file lrugen kernel did not write)"))?;
    }
    Ok(())
}

/// `--ftrace EVENT`, checked before anything boots ([`lrugen_kernel::initramfs::check_ftrace`]).
fn ftrace_event(s: &str) -> Result<String, String> {
    lrugen_kernel::initramfs::check_ftrace(s).map(|()| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: KernelArgs,
    }

    fn plan_of(args: &[&str]) -> Result<Plan, String> {
        let t = T::try_parse_from(std::iter::once("kernel").chain(args.iter().copied())).map_err(|e| e.to_string())?;
        plan(&t.a)
    }

    /// `--numa`: the guest's memory is the nodes' sum; the experiment's `[machine.tiers]` come
    /// with it and its placement becomes `mbind` ops (version 8); a tiered experiment without
    /// `--numa`, `--numa` without `--memcg-max max` and bad sizes are refused before booting.
    #[test]
    fn numa_guests_take_the_experiments_tiers_and_need_global_pressure() {
        let exp = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../lrugen-kernel/tests/fixtures/tiering/gauss-inverted.toml"
        );
        let p = plan_of(&["--exp", exp, "--numa", "192M,128M", "--memcg-max", "max"]).unwrap();
        assert_eq!(
            (p.numa_mib.clone(), p.guest_mem_mib, p.memcg_bytes),
            (vec![192, 128], 320, 0)
        );
        let t = p.tiers.as_ref().expect("the experiment's tiers");
        assert!(t.demotion_enabled && t.numa_balancing == 2 && t.scan_period_ms == 10);
        assert_eq!(p.ops.version(), 8);
        let mbinds = p.ops.ops.iter().filter(|o| matches!(o, ReplayOp::Mbind { .. })).count();
        assert_eq!(
            mbinds, 4,
            "three placement rules and the default after the populate pass"
        );
        let e = plan_of(&["--exp", exp, "--memcg-max", "max"]).err().unwrap();
        assert!(e.contains("[machine.tiers] needs a guest of several nodes"), "{e}");
        let e = plan_of(&["--numa", "192M,128M"]).err().unwrap();
        assert!(e.contains("expected --memcg-max max"), "{e}");
        let e = plan_of(&["--exp", exp, "--numa", "192M,128M,64M", "--memcg-max", "max"])
            .err()
            .unwrap();
        assert!(e.contains("[machine] has 2 nodes, --numa gives the guest 3"), "{e}");
        for (bad, msg) in [
            ("192M", "expected 2 to 8 node sizes"),
            ("64M,128M", "node 0 of at least 128M"),
            ("192M,100k", "whole MiB"),
            ("192M,lots", "--numa:"),
        ] {
            let e = plan_of(&["--numa", bad, "--memcg-max", "max"]).err().unwrap();
            assert!(e.contains(msg), "{bad}: {e}");
        }
        // without an experiment: the nodes, no demotion and no balancing
        let p = plan_of(&["--numa", "192M,128M", "--memcg-max", "max"]).unwrap();
        let t = p.tiers.unwrap();
        assert!(!t.demotion_enabled && t.numa_balancing == 0);
    }

    #[test]
    fn memcg_max_max_is_no_limit_and_the_guest_memory_is_whole_mib() {
        let p = plan_of(&["--memcg-max", "max", "--guest-mem", "256M"]).unwrap();
        assert_eq!((p.memcg_bytes, p.guest_mem_mib), (0, 256));
        let p = plan_of(&[]).unwrap();
        assert_eq!((p.memcg_bytes, p.guest_mem_mib), (32 << 20, 512));
        assert_eq!(plan_of(&["--guest-mem", "1G"]).unwrap().guest_mem_mib, 1024);
        let e = plan_of(&["--guest-mem", "64M"]).err().unwrap();
        assert!(e.contains("--guest-mem: expected 128M to 64G"), "{e}");
        let e = plan_of(&["--guest-mem", "200000k"]).err().unwrap();
        assert!(e.contains("whole MiB"), "{e}");
        let e = plan_of(&["--memcg-max", "0"]).err().unwrap();
        assert!(e.contains("no limit is `max`"), "{e}");
    }

    #[test]
    fn an_experiment_brings_its_kernel_settings_unless_flags_override_them() {
        let d = tempfile::tempdir().unwrap();
        let exp = d.path().join("e.toml");
        std::fs::write(
            &exp,
            "[machine]\nmemory = \"64M\"\nswappiness = 100\n[memcg]\nmax = \"4M\"\n[mglru]\nmin_ttl_ms = 1000\n\
             caps = 3\n[workload]\nkind = \"file-read\"\nfiles = 1\nfile_pages = 64\ndist = \"uniform\"\n\
             accesses = 100\n",
        )
        .unwrap();
        let e = exp.to_str().unwrap();
        let p = plan_of(&["--exp", e]).unwrap();
        assert_eq!(p.swappiness, Some(100));
        assert_eq!(p.min_ttl_ms, Some(1000));
        assert_eq!(p.enabled, "0x0003");
        assert_eq!(p.memcg_bytes, 4 << 20);
        let p = plan_of(&[
            "--exp",
            e,
            "--swappiness",
            "10",
            "--min-ttl-ms",
            "5",
            "--lru-gen-enabled",
            "7",
        ])
        .unwrap();
        assert_eq!(
            (p.swappiness, p.min_ttl_ms, p.enabled.as_str()),
            (Some(10), Some(5), "0x0007")
        );
        // the built-in workload keeps the kernel's defaults
        let p = plan_of(&[]).unwrap();
        assert_eq!((p.swappiness, p.min_ttl_ms, p.enabled.as_str()), (None, None, "0x0007"));
    }

    /// `--thp` sets the guest's and the model's knob (default the experiment's, else never);
    /// `--madv-hugepage` advises the built-in anon region (`anon N hugepage`) and is refused where
    /// there is none to advise.
    #[test]
    fn thp_and_madv_hugepage() {
        let p = plan_of(&["--access", "anon", "--anon-size", "4M", "--accesses", "10"]).unwrap();
        assert_eq!((p.thp, p.ops.anon_hugepage), (Thp::Never, false));
        let p = plan_of(&[
            "--access",
            "anon",
            "--anon-size",
            "4M",
            "--accesses",
            "10",
            "--thp",
            "madvise",
            "--madv-hugepage",
        ])
        .unwrap();
        assert_eq!((p.thp, p.ops.anon_hugepage), (Thp::Madvise, true));
        assert!(p.builtin.as_ref().unwrap().hugepage);
        assert!(p.ops.to_text().contains("\nanon 1024 hugepage\n"));
        let e = plan_of(&["--thp", "sometimes"]).err().unwrap();
        assert!(
            e.contains("--thp: expected always, madvise or never, found 'sometimes'"),
            "{e}"
        );
        let e = plan_of(&["--access", "file", "--madv-hugepage"]).err().unwrap();
        assert!(e.contains("--madv-hugepage"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let exp = d.path().join("e.toml");
        std::fs::write(
            &exp,
            "[machine]\nmemory = \"64M\"\nthp = \"always\"\n[memcg]\nmax = \"4M\"\n[workload]\n\
             kind = \"file-read\"\nfiles = 1\nfile_pages = 64\ndist = \"uniform\"\naccesses = 100\n",
        )
        .unwrap();
        let e = exp.to_str().unwrap();
        assert_eq!(plan_of(&["--exp", e]).unwrap().thp, Thp::Always);
        assert_eq!(plan_of(&["--exp", e, "--thp", "never"]).unwrap().thp, Thp::Never);
    }

    /// DAMON_STAT is left on unless `--damon-stat off`; anything else is refused before booting.
    #[test]
    fn damon_stat_is_on_unless_turned_off() {
        assert!(plan_of(&["--access", "file"]).unwrap().damon_stat);
        assert!(plan_of(&["--damon-stat", "on"]).unwrap().damon_stat);
        assert!(!plan_of(&["--damon-stat", "off"]).unwrap().damon_stat);
        let e = plan_of(&["--damon-stat", "yes"]).err().unwrap();
        assert!(e.contains("--damon-stat: expected on or off, found 'yes'"), "{e}");
    }

    /// The ftrace buffer is 64 MiB per vCPU unless `--ftrace-buffer` says otherwise, in KiB as
    /// `buffer_size_kb` takes it; sizes outside 4K..1G are refused before booting.
    #[test]
    fn the_ftrace_buffer_is_64m_unless_set() {
        assert_eq!(plan_of(&["--access", "file"]).unwrap().ftrace_buffer_kb, 65_536);
        assert_eq!(plan_of(&["--ftrace-buffer", "4M"]).unwrap().ftrace_buffer_kb, 4096);
        assert_eq!(plan_of(&["--ftrace-buffer", "16K"]).unwrap().ftrace_buffer_kb, 16);
        for bad in ["0", "2G", "lots"] {
            let e = plan_of(&["--ftrace-buffer", bad]).err().unwrap();
            assert!(e.contains("--ftrace-buffer"), "{bad}: {e}");
        }
    }
}

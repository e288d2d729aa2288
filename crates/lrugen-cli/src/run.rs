// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen run`'s options and how they become runs: [`RunArgs`] (the options, as clap parses
//! them), [`plan_run`] (checked and built into [`RunPlan`], nothing run yet) and the name parsers
//! they use. The command line prints the plan's results; the Python package (`crates/lrugen-py`)
//! parses the same options with [`parse_run_args`] and runs the same plan, so that both take the
//! same names and refuse the same input with the same messages.

use crate::checks::{self, count, count32};
use crate::{fio, memtier, ycsb};
use clap::Args;
use lrugen::experiment::size::parse_pages;
use lrugen::mm::MachineConfig;
use lrugen::sim::{MemcgConfig, PolicyKind, RunConfig};
use lrugen::workload::dist::Dist;
use lrugen::workload::{self, WorkloadSpec};
use std::path::{Path, PathBuf};

/// Accesses (operations, requests) of a built-in workload when --accesses does not say.
pub const DEFAULT_ACCESSES: u64 = 500_000;

#[derive(Args)]
pub struct RunArgs {
    /// Replay a trace (any format of --format, told by its name or first bytes; zstd-compressed or
    /// not). Each request is a buffered 4 KiB read of a file page (a lackey trace of memory
    /// accesses is refused rather than reinterpreted). `lrugen traces list` shows the
    /// public traces `lrugen traces fetch` gets; examples/traces/ ships a small synthetic one.
    #[arg(long, value_name = "FILE", conflicts_with = "workload")]
    pub trace: Option<PathBuf>,
    /// Replay an op file (`lrugen ops build` writes one, `lrugen kernel` replays the same in its
    /// guest; docs/op-files.md): its files' reads, writes and mmap loads and its anon loads and
    /// stores, on the kernel policies (the reference caches are left out).
    #[arg(long, value_name = "FILE.ops", conflicts_with_all = ["workload", "trace"])]
    pub ops: Option<PathBuf>,
    /// Format of --trace, for a file whose name does not tell it: arc (ARC .lis), oracleGeneral,
    /// iolog (fio), lackey (valgrind), csv, lcs, lrugen, index32, index64 (flat little-endian
    /// page indices, no header).
    #[arg(long, value_name = "NAME", requires = "trace", value_parser = trace_format)]
    pub format: Option<lrugen_trace::TraceFormat>,
    /// How --trace's records are replayed: file (buffered reads of one file, the default), mmap
    /// (loads and stores through a file mapping), anon (loads and stores of anonymous memory:
    /// lackey loads/stores/modifies, index files; lackey instruction fetches are left out),
    /// mixed (each record as its kind: lackey fetches as an executable file mapping, index
    /// records with the high bit set as file reads, I/O records as file reads). A record the
    /// access cannot express is an error.
    #[arg(long, value_name = "KIND", requires = "trace", default_value = "file", value_parser = trace_access)]
    pub access: workload::TraceAccess,
    /// Built-in workload: `file-read` (buffered random reads over files), `anon` (random loads
    /// and stores to anonymous memory), `fio`, `ycsb`, `memtier` (shaped by the options below), or
    /// one of the presets `kernel-build`, `oltp`, `many-apps`, `sort-shuffle`, taken with their
    /// machine, memcg and engine from the examples/ experiment of that name (change their
    /// parameters there, and run it with `lrugen exp`; --memory, --memcg-max, --swap, --jobs,
    /// --cpus and the devices still apply).
    /// Default: `file-read`, or `ycsb` when --ycsb is given.
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Policies to run, comma-separated: mglru (with --profile), mglru-fg, mglru@PROFILE (MGLRU
    /// with a profile of its own, e.g. mglru@7.2 or mglru@mglru-fg+fg_refault_distance=true),
    /// classic, lru, opt, and the cache zoo (libCacheSim's): fifo, clock, sieve, s3fifo, arc, 2q, lirs;
    /// cache_ext's example policies on the kernel model, choosing the file pages the workload's
    /// memcg evicts over the classic LRU (docs/cache-ext.md): cache_ext:fifo, cache_ext:mru,
    /// cache_ext:lfu, cache_ext:s3fifo, cache_ext:lhd, cache_ext:get_scan (its scanning tasks:
    /// those of a mix's last part).
    /// `--policy mglru-fg,mglru@7.2,classic` compares FG with 7.2 and classic.
    /// (default `lrugen run`: mglru,classic,lru,opt; `lrugen explain`: mglru,classic, A then B.)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub policy: Vec<String>,
    /// Kernel profile (MGLRU's, and the classic LRU's where a change touched it): a preset of
    /// behaviour switches, 6.1, 6.12, 6.17, 7.2, mainline (the newest kernel preset, now 7.2; the
    /// default) or mglru-fg (MGLRU-FG on top of 7.2).
    #[arg(
        long = "profile",
        alias = "kernel",
        value_name = "PROFILE",
        default_value = "mainline"
    )]
    pub kernel: String,
    /// Flip one behaviour switch of the profile, NAME=true or NAME=false (repeatable;
    /// the names are those of `[mglru.switches]`, see docs/experiments.md).
    #[arg(long = "switch", value_name = "NAME=BOOL")]
    pub switch: Vec<String>,
    /// MGLRU /sys/kernel/mm/lru_gen/enabled bits (0x1 core, 0x2 page-table walks, 0x4 non-leaf
    /// PMD accessed bits).
    #[arg(long, value_name = "BITS", default_value = "0x7")]
    pub lru_gen_enabled: String,
    /// Model hardware without PTE accessed bits (no page-table walks; rmap and look-around only).
    #[arg(long)]
    pub no_hw_young: bool,
    /// Model hardware without non-leaf PMD accessed bits.
    #[arg(long)]
    pub no_hw_nonleaf_young: bool,
    /// /sys/kernel/mm/lru_gen/min_ttl_ms.
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = count, allow_negative_numbers = true)]
    pub min_ttl_ms: u64,
    /// Cache size in pages: the memcg limit (memory.max) for kernel policies, the cache size for
    /// lru and opt.
    #[arg(long, value_name = "PAGES", value_parser = count, allow_negative_numbers = true)]
    pub capacity: Option<u64>,
    /// Machine memory (e.g. 512M, 2G, 100000p); default: enough to hold the memcg comfortably.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub memory: Option<String>,
    /// The workload memcg's memory.max (e.g. 64M); overrides --capacity for kernel policies.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub memcg_max: Option<String>,
    /// Swap device size (e.g. 1G); default none for file workloads, twice the region for anon.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub swap: Option<String>,
    /// vm.swappiness (0..=200).
    #[arg(long, value_name = "N", default_value_t = 60, value_parser = count32, allow_negative_numbers = true)]
    pub swappiness: u32,
    /// vm.page-cluster (0..=31): swap read-ahead of up to 2^N pages on a swap device that is
    /// not synchronous (default 3, the kernel's; 0 reads one page per swap fault).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=31))]
    pub page_cluster: Option<u32>,
    /// transparent_hugepage: `always` (anon mappings get 2 MiB folios where they fit), `madvise`
    /// (only MADV_HUGEPAGE mappings) or `never`, the default (docs/thp.md).
    #[arg(long, value_name = "always|madvise|never", value_parser = thp_mode, default_value = "never")]
    pub thp: lrugen::mm::thp::Thp,
    /// Kernel memory charged to the memcg besides its pages: `kernel` (page tables, slab, xarray
    /// nodes and inodes as Debian's 6.1-7.2 kernels charge them: memory.max means what it means
    /// there, with the shadow-node shrinker on those xarray nodes) or `none`, the default
    /// (docs/experiments.md).
    #[arg(long, value_name = "kernel|none", value_parser = ["kernel", "none"], default_value = "none")]
    pub kmem: String,
    /// Seed of the workload's random streams.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = count, allow_negative_numbers = true)]
    pub seed: u64,
    /// file-read: number of files.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = count32, allow_negative_numbers = true)]
    pub files: u32,
    /// file-read: size of each file; anon: size of the region.
    #[arg(long, value_name = "SIZE", default_value = "32M", allow_hyphen_values = true)]
    pub size: String,
    /// Access distribution: uniform, zipf:THETA, gauss:SD_PCT or loop (every page in order,
    /// again and again).
    #[arg(long, default_value = "zipf:0.9")]
    pub dist: String,
    /// Accesses to issue (after populating, for anon; default 500,000; ycsb: operations, default
    /// the properties file's operationcount, else 500,000).
    #[arg(long, value_name = "N", value_parser = count, allow_negative_numbers = true)]
    pub accesses: Option<u64>,
    /// anon: fraction of accesses that are stores (default 0.3); fio: fraction of writes (default 0).
    #[arg(long, value_name = "F", allow_negative_numbers = true)]
    pub write_ratio: Option<f64>,
    /// Print /proc/vmstat of each kernel-policy run, in the kernel's format.
    #[arg(long)]
    pub vmstat: bool,
    /// Print the workload memcg's memory.stat and memory.events, in the kernel's format.
    #[arg(long)]
    pub memory_stat: bool,
    /// A fio job file (`[global]` and job sections: rw, size, numjobs, iodepth with
    /// ioengine=io_uring, random_distribution, time_based, runtime, ramp_time, rwmixread,
    /// fadvise_hint, …; docs/benchmarks.md lists what is modelled), run in virtual time and
    /// reported as fio reports it. --jobs, --runtime-ms, --cpus and the devices still apply.
    #[arg(long, value_name = "JOB.fio", conflicts_with_all = ["trace", "ops", "workload", "ycsb"])]
    pub fio: Option<PathBuf>,
    /// Print the run in another program's format instead of lrugen's table: with --fio, as fio
    /// prints its own, `json` (fio's JSON: "jobs", "read", "clat_ns", …) or `normal` (fio's
    /// text), one kernel policy; with any workload, `cachesim`: one line per policy as
    /// libCacheSim's cachesim prints a cache's result ("TRACE NAME cache size SIZE, N req, miss
    /// ratio R, byte miss ratio R"; docs/cache-zoo.md).
    #[arg(
        long,
        value_name = "FORMAT",
        value_parser = output_format,
        requires_ifs = [("json", "fio"), ("normal", "fio")],
        conflicts_with = "json"
    )]
    pub output_format: Option<OutputFormat>,
    /// ycsb: the core workload, a preset a..f (default a), or a YCSB workload properties file
    /// (YCSB's -P, e.g. workloads/workloadb: recordcount, operationcount, threadcount,
    /// maxexecutiontime, the proportions, requestdistribution, fieldcount, fieldlength, …;
    /// docs/benchmarks.md lists what is modelled). Implies --workload ycsb.
    #[arg(long, value_name = "PRESET|FILE")]
    pub ycsb: Option<String>,
    /// ycsb: set a YCSB property over the preset or file, as YCSB's -p does (repeatable), e.g.
    /// --ycsb-property requestdistribution=uniform.
    #[arg(long, value_name = "KEY=VALUE")]
    pub ycsb_property: Vec<String>,
    /// ycsb: client tasks sharing the one table and its --accesses operations (YCSB's
    /// threadcount, default the properties' or 1; they run in virtual time, on the kernel
    /// policies; not with the insert workloads d and e).
    /// --jobs N instead runs N copies of the whole benchmark, each with its own table.
    #[arg(long, value_name = "N", value_parser = count32, allow_negative_numbers = true)]
    pub threadcount: Option<u32>,
    /// ycsb: records loaded (default the properties' recordcount, else 100,000).
    #[arg(long, value_name = "N", value_parser = count, allow_negative_numbers = true)]
    pub records: Option<u64>,
    /// memtier_benchmark's own options, quoted as one argument (--ratio=0:1 --key-pattern=G:G
    /// --key-maximum=1000000 -d 1000 -t 4 -c 50 --test-time=60; docs/benchmarks.md): the
    /// connections' GETs on one server holding the values in anonymous memory, in virtual time,
    /// reported as memtier reports. Implies --workload memtier.
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true, conflicts_with_all = ["trace", "ops", "fio", "ycsb"])]
    pub memtier: Option<String>,
    /// memtier: keys.
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = count, allow_negative_numbers = true)]
    pub keys: u64,
    /// memtier: value size in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1000, value_parser = count, allow_negative_numbers = true)]
    pub value_bytes: u64,
    /// memtier: GET key pattern (S, R, G, P).
    #[arg(long, default_value = "R")]
    pub pattern: String,
    /// anon, memtier: size of the data once compressed by zram, in percent of a page, 1..=100
    /// (default: the zram device's ratio), e.g. 100 for incompressible data; use with
    /// --swap-device zram.
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(1..=100), allow_negative_numbers = true)]
    pub compressed_pct: Option<u8>,
    /// Run in virtual time with this many tasks (copies of the workload, each with its own files
    /// or region and seed), reporting throughput and completion latency as fio does. The
    /// reference caches (lru, opt) replay one page stream and are left out (with a note) when
    /// there are several tasks.
    #[arg(long, value_name = "N", value_parser = count32, allow_negative_numbers = true)]
    pub jobs: Option<u32>,
    /// Virtual-time engine: CPUs.
    #[arg(long, value_name = "N", value_parser = count32, allow_negative_numbers = true)]
    pub cpus: Option<u32>,
    /// Virtual-time engine: the scheduler's slice in ns when kswapd and a task share a CPU (a
    /// woken kswapd waits until the running task has had its slice, and then keeps the CPU for
    /// its own; the kernel's `base_slice_ns` is 750000 × (1 + log2 of the CPUs, at most 8));
    /// 0, the default: kswapd takes the CPU after the running operation. At most 4294967295
    /// (the kernel's is an unsigned int).
    #[arg(long, value_name = "NS", value_parser = count32, allow_negative_numbers = true)]
    pub sched_slice_ns: Option<u32>,
    /// Virtual-time engine: fio's time_based + runtime, in ms of virtual time: no task starts an
    /// operation after it, so every job runs as long as the others (give the workload more
    /// --accesses than fit).
    #[arg(long, value_name = "MS", value_parser = count, allow_negative_numbers = true)]
    pub runtime_ms: Option<u64>,
    /// Virtual-time engine: storage device preset (nvme, sata-ssd, hdd, mmc, ramdisk), fixed
    /// latency, or with a latency distribution: nvme:lognormal=0.3 (median the preset's, σ 0.3),
    /// nvme:exponential (mean the preset's).
    #[arg(long, value_name = "PRESET")]
    pub device: Option<String>,
    /// Virtual-time engine: swap device preset (nvme, sata-ssd, hdd, mmc, ramdisk, zram; with
    /// :lognormal=SIGMA or :exponential as --device). zram's compressor: zram (lzo-rle, the
    /// kernel's default), zram-lzo, zram-lz4, zram-zstd; its mm_stat and io_stat are printed.
    #[arg(long, value_name = "PRESET")]
    pub swap_device: Option<String>,
    /// Print /sys/kernel/debug/lru_gen and lru_gen_full at the end of each MGLRU run.
    #[arg(long)]
    pub debugfs: bool,
    /// Also print them every N accesses (N at least 1).
    #[arg(long, value_name = "N", value_parser = count, allow_negative_numbers = true)]
    pub debugfs_every: Option<u64>,
    /// Write commands to /sys/kernel/debug/lru_gen at the end of each MGLRU run, before the final
    /// counters are read, as `echo CMDS > lru_gen` does: `- MEMCG NODE MIN_GEN [SWAPPINESS
    /// [NR_TO_RECLAIM]]` evicts the generations up to MIN_GEN (proactive reclaim; the two
    /// youngest are never evicted), `+ MEMCG NODE MAX_GEN [SWAPPINESS [FORCE_SCAN]]` creates a
    /// generation (aging; MAX_GEN at most max_seq); several commands are separated by `;` or `,`.
    /// The workload's memcg /t is id 2, the root is 1, the node is 0. Syntax and ids are checked
    /// before the run, generations at the end (--debugfs shows them: max_seq is the last one
    /// listed). A run with generations 0..=3 at its end, where `- 2 0 1 200 1024` reclaims 1,024
    /// pages of generations 0 and 1 and `+ 2 0 3` creates generation 4: `lrugen run --policy mglru
    /// --size 8M --capacity 2048 --accesses 100000 --debugfs --debugfs-write "- 2 0 1 200 1024"`.
    #[arg(long, value_name = "CMDS", allow_hyphen_values = true)]
    pub debugfs_write: Option<String>,
    /// Run a control script: reads and writes of lru_gen, memory.reclaim, memory.max,
    /// memory.high, memory.low, memory.min, enabled, min_ttl_ms, vm.swappiness, vm.page-cluster (and reads of
    /// memory.current, memory.stat, memory.events, vmstat, ...) at step counts (`at`, `every`) or
    /// on the run's clock (`at_ms`), each write's result the kernel's (its errno when it
    /// refuses), every action logged with the output (docs/control.md; examples/ctl/). Kernel
    /// policies only (default --policy mglru,classic), without the engine.
    #[arg(long, value_name = "FILE")]
    pub ctl: Option<PathBuf>,
    /// Write VALUE to /sys/kernel/mm/lru_gen/enabled after STEP steps of each mglru and classic
    /// run (0: before the first), as `echo VALUE > enabled` does (repeatable, applied in step
    /// order): `y`, `n` or a number (0x7, 5, 0; decimal, 0x hex, 0 octal), bit 0 turning MGLRU on
    /// or off with the kernel's conversion of the lists (docs/kill-switch.md), bits 1 and 2 the
    /// page-table walk and the non-leaf PMD accessed bit. The run starts as its policy (mglru:
    /// on, classic: off) and its row is named after it; the writes applied are listed after the
    /// table (and under "switches" in --json). Not with tasks in virtual time or --ops.
    #[arg(long, value_name = "STEP:VALUE", allow_hyphen_values = true)]
    pub switch_at: Vec<String>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Run the invariant checker after every reclaim pass (slow).
    #[arg(long)]
    pub check: bool,
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, help = checks::MEMORY_BUDGET_HELP)]
    pub memory_budget: Option<String>,
    /// At the end, print the process's peak resident set (VmHWM) and each run's (VmHWM reset
    /// before it), the resident pages at the end of each kernel-policy run, the model's own state
    /// bytes, and the bytes per resident page of both (on stderr with --json).
    #[arg(long)]
    pub stats: bool,
    /// Trace reclaim events of each mglru and classic run, as `lrugen kernel --ftrace` traces
    /// the guest's (repeatable): the tracepoints `vmscan/mm_vmscan_lru_shrink_inactive`,
    /// `vmscan/mm_vmscan_memcg_reclaim_begin` and `_end`, and kprobes on `try_to_inc_max_seq`
    /// (`p:age try_to_inc_max_seq`), `lru_gen_use_mm` and `folio_referenced_one`, printed as /sys/kernel/tracing/trace prints them, on the
    /// run's clock (docs/kernel-tracing.md, "The model's side"). After the table (with --json,
    /// as each run's "ftrace"), or into --ftrace-out.
    #[arg(long, value_name = "EVENT")]
    pub ftrace: Vec<String>,
    /// Write the traces of --ftrace to FILE (each run's after a `# POLICY` line) instead of
    /// printing them; written whole when the runs are done.
    #[arg(long, value_name = "FILE", requires = "ftrace")]
    pub ftrace_out: Option<PathBuf>,
}

/// Workload presets of `lrugen run --workload NAME`: the examples/ experiment of that name.
pub const PRESETS: [(&str, &str); 4] = [
    ("kernel-build", include_str!("../../../examples/kernel-build.toml")),
    ("oltp", include_str!("../../../examples/oltp.toml")),
    ("many-apps", include_str!("../../../examples/many-apps.toml")),
    ("sort-shuffle", include_str!("../../../examples/sort-shuffle.toml")),
];

/// The configuration of preset `name` (its experiment's first point), if it is one.
pub fn preset(name: &str) -> Result<Option<lrugen::experiment::spec::PointConfig>, String> {
    let Some((n, text)) = PRESETS.iter().find(|(n, _)| *n == name) else {
        return Ok(None);
    };
    let file = PathBuf::from(format!("examples/{n}.toml"));
    let exp = lrugen::experiment::spec::Experiment::parse(text, &file).map_err(|e| e.to_string())?;
    Ok(exp.points.into_iter().next().map(|p| p.config))
}

/// A trace format name (clap value parser).
pub fn trace_access(s: &str) -> Result<workload::TraceAccess, String> {
    s.parse()
}

pub fn trace_format(s: &str) -> Result<lrugen_trace::TraceFormat, String> {
    s.parse()
}

/// Parse the size given to option `opt`, naming the option in the error.
pub fn size_arg(opt: &str, s: &str) -> Result<u64, String> {
    parse_pages(s).map_err(|e| format!("{opt}: {e}"))
}

/// A `--policy` entry of `lrugen run`: a policy, and for MGLRU a profile of its own
/// (`mglru-fg`, `mglru@7.2`, `mglru@mglru-fg+fg_refault_distance=true`; bare `mglru` takes
/// `--profile`).
#[derive(Clone, Debug, PartialEq)]
pub struct RunPolicy {
    pub kind: PolicyKind,
    pub profile: Option<lrugen::reclaim::mglru::Profile>,
}

pub fn parse_run_policies(list: &[String]) -> Result<Vec<RunPolicy>, String> {
    let mut out: Vec<RunPolicy> = Vec::new();
    for p in list {
        let p = p.trim();
        let e = if p == "mglru-fg" {
            RunPolicy {
                kind: PolicyKind::Mglru,
                profile: Some(lrugen::reclaim::mglru::Profile::MGLRU_FG),
            }
        } else if let Some(prof) = p.strip_prefix("mglru@") {
            let profile = prof.parse().map_err(|e| format!("--policy {p}: {e}"))?;
            RunPolicy {
                kind: PolicyKind::Mglru,
                profile: Some(profile),
            }
        } else {
            let kind = p.parse().map_err(|e: String| {
                if p.starts_with("cache_ext:") {
                    return e;
                }
                let ext: Vec<&str> = lrugen::reclaim::ext::policies::Shipped::ALL
                    .iter()
                    .map(|s| s.full_name())
                    .collect();
                format!(
                    "unknown policy '{p}': expected one of mglru, mglru-fg, mglru@PROFILE (e.g. mglru@7.2), \
                     classic, lru, opt, fifo, clock, sieve, s3fifo, arc, 2q, lirs, {}",
                    ext.join(", ")
                )
            })?;
            RunPolicy { kind, profile: None }
        };
        if !out.contains(&e) {
            out.push(e);
        }
    }
    if out.is_empty() {
        return Err("no policy given".into());
    }
    Ok(out)
}

/// Parse `--lru-gen-enabled` as the kernel reads a write to `enabled` (`y`/`n`, or a number:
/// decimal, 0x hex, 0 octal; [`lrugen::reclaim::mglru::sysfs::parse_enabled`]), surrounding
/// white space ignored.
pub fn parse_enabled(s: &str) -> Result<u32, String> {
    lrugen::reclaim::mglru::sysfs::parse_enabled(s.trim().as_bytes())
        .map_err(|_| format!("bad --lru-gen-enabled '{s}': expected y, n or a number such as 0x7"))
}

/// Parse `--switch-at STEP:VALUE`, the value checked as `enabled_store` reads it.
pub fn parse_switch_at(s: &str) -> Result<lrugen::sim::SwitchAt, String> {
    let Some((step, value)) = s.split_once(':') else {
        return Err(format!(
            "--switch-at '{s}': expected STEP:VALUE, e.g. 250000:n (the write to \
             /sys/kernel/mm/lru_gen/enabled after STEP steps)"
        ));
    };
    let step = count(step).map_err(|e| format!("--switch-at '{s}': STEP '{step}': {e}"))?;
    let sw = lrugen::sim::SwitchAt {
        step,
        value: value.to_string(),
    };
    sw.check().map_err(|e| format!("--switch-at '{s}': {e}"))?;
    Ok(sw)
}

/// A fio job file's jobs and its `[global]` options, for fio's report.
pub type FioDesc = (Vec<workload::gen::fiojob::JobDesc>, Vec<(String, String)>);

/// The built-in workload `lrugen run` runs: --workload, else the one --ycsb or --memtier implies,
/// else file-read.
pub fn workload_name(a: &RunArgs) -> String {
    a.workload.clone().unwrap_or_else(|| {
        if a.ycsb.is_some() || !a.ycsb_property.is_empty() {
            "ycsb"
        } else if a.memtier.is_some() {
            "memtier"
        } else {
            "file-read"
        }
        .to_string()
    })
}

/// `lrugen run --output-format`: fio's formats (with --fio), or libCacheSim's `cachesim` lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// fio's own report (`json`, `normal`).
    Fio(fio::Format),
    /// libCacheSim's result lines.
    Cachesim,
}

fn output_format(s: &str) -> Result<OutputFormat, String> {
    match s {
        "cachesim" => Ok(OutputFormat::Cachesim),
        o => fio::format(o)
            .map(OutputFormat::Fio)
            .map_err(|e| format!("{e}; or cachesim (libCacheSim's result lines, for any run)")),
    }
}

/// What `lrugen run`'s options ask for, checked and built, before any run: the runs'
/// configurations and their labels, the loaded trace or op file, and what the report prints.
pub struct RunPlan {
    pub cfgs: Vec<RunConfig>,
    /// A row label per run (`mglru-7.2`, `mglru-fg`), `None` for the policy's own name.
    pub labels: Vec<Option<String>>,
    pub trace: Option<workload::LoadedTrace>,
    pub opfile: Option<lrugen_kernel::ops::OpFile>,
    pub spec: WorkloadSpec,
    /// The policies left out, said so.
    pub note: Option<String>,
    pub memory: u64,
    pub limit: u64,
    pub swap: u64,
    pub nr_mglru: usize,
    /// A fio job file's jobs and global options (its report).
    pub fio_desc: Option<FioDesc>,
    pub jobs: u32,
}

/// Check `lrugen run`'s options and build its runs ([`RunPlan`]); nothing is run.
pub fn plan_run(a: &RunArgs) -> Result<RunPlan, String> {
    plan_run_with(a, None)
}

/// [`plan_run`] with the trace already read: `given`, the page ids of a trace the caller holds
/// (the Python package's array, spilled as a trace file is), replayed in place of reading
/// `--trace`, which then only names it (as its workload's description). Without `--trace`,
/// `given` is not used.
pub fn plan_run_with(a: &RunArgs, given: Option<workload::LoadedTrace>) -> Result<RunPlan, String> {
    checks::memory_budget(a.memory_budget.as_deref())?;
    let mut runs = parse_run_policies(&a.policy)?;
    // fio's report is of one kernel-policy run: refused before running, not after
    if matches!(a.output_format, Some(OutputFormat::Fio(_))) {
        fio::check_policies(&runs.iter().map(|r| r.kind).collect::<Vec<_>>())?;
    }
    let mut policies: Vec<PolicyKind> = Vec::new();
    for r in &runs {
        if !policies.contains(&r.kind) {
            policies.push(r.kind);
        }
    }
    let mut profile: lrugen::reclaim::mglru::Profile = a.kernel.parse().map_err(|e| format!("--profile: {e}"))?;
    for sw in &a.switch {
        profile
            .apply_assignment(sw)
            .map_err(|e| format!("--switch {sw}: {e}"))?;
    }
    let mglru = lrugen::reclaim::mglru::MglruConfig {
        profile,
        caps: parse_enabled(&a.lru_gen_enabled)?,
        hw_pte_young: !a.no_hw_young,
        hw_nonleaf_pmd_young: !a.no_hw_nonleaf_young,
        stats: false,
        min_ttl_ms: a.min_ttl_ms,
        fg: Default::default(),
    };
    if a.capacity == Some(0) {
        return Err("--capacity: a cache of 0 pages leaves no room to run (expected at least 1 page)".into());
    }
    let ctl = match &a.ctl {
        None => None,
        Some(p) => {
            let s = lrugen::control::Script::load(p).map_err(|e| format!("--ctl: {e}"))?;
            if let Some(k) = policies.iter().find(|k| !k.is_kernel()) {
                return Err(format!(
                    "--ctl: policy {} is a reference cache and has no control files: expected only \
                     kernel policies (mglru, classic) in --policy",
                    k.name()
                ));
            }
            if a.ops.is_some()
                && s.actions
                    .iter()
                    .any(|x| x.file == lrugen::control::CtlFile::Enabled && x.write.is_some())
            {
                return Err(format!(
                    "--ctl: {} writes enabled, which switches the LRU: not with --ops (the op file's \
                     replay runs one LRU)",
                    p.display()
                ));
            }
            Some(s)
        }
    };
    if a.debugfs_every == Some(0) {
        return Err("--debugfs-every: expected at least 1 access between captures, found 0".into());
    }
    if (a.debugfs_write.is_some() || a.debugfs_every.is_some() || a.debugfs) && !policies.contains(&PolicyKind::Mglru) {
        return Err(format!(
            "{}: lru_gen is MGLRU's: expected mglru among --policy, found {}",
            if a.debugfs_write.is_some() {
                "--debugfs-write"
            } else if a.debugfs_every.is_some() {
                "--debugfs-every"
            } else {
                "--debugfs"
            },
            a.policy.join(",")
        ));
    }
    let compressed_pct = a.compressed_pct.unwrap_or(0);
    let parse_dist = || -> Result<Dist, String> { a.dist.parse().map_err(|e| format!("--dist: {e}")) };
    let size = size_arg("--size", &a.size)?;
    let workload_name = workload_name(a);
    if a.workload.as_deref().is_some_and(|w| w != "memtier") && a.memtier.is_some() {
        return Err(format!(
            "--memtier shapes the memtier workload; expected --workload memtier, not {workload_name}"
        ));
    }
    if a.workload.as_deref().is_some_and(|w| w != "ycsb") && (a.ycsb.is_some() || !a.ycsb_property.is_empty()) {
        return Err(format!(
            "--ycsb and --ycsb-property shape the ycsb workload; expected --workload ycsb, not {workload_name}"
        ));
    }
    let accesses = a.accesses.unwrap_or(DEFAULT_ACCESSES);
    let mut runtime_ms = a.runtime_ms;
    // a benchmark's own input file is run as that benchmark: in virtual time, reported as it reports
    let mut benchmark_input = false;
    // a job file's ramp_time and numjobs
    let mut ramp_ns = 0;
    let mut fio_jobs = None;
    let mut fio_desc = None;
    let preset = match (&a.trace, &a.ops) {
        (None, None) => preset(&workload_name)?,
        _ => None,
    };
    let mut trace_refs = None;
    let mut trace_pages = 0;
    let opfile = match &a.ops {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("--ops {}: {e}", path.display()))?;
            Some(
                lrugen_kernel::ops::OpFile::parse(&text)
                    .map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.msg))?,
            )
        }
        None => None,
    };
    let (spec, trace) = if let (Some(path), Some(o)) = (&a.ops, &opfile) {
        trace_refs = Some(o.ops.len() as u64);
        trace_pages = o.files.iter().map(|f| f.pages).sum::<u64>() + o.anon_pages;
        let spec = WorkloadSpec::Trace {
            path: path.clone(),
            format: None,
            access: Default::default(),
        };
        (spec, None)
    } else if let (Some(path), Some(t)) = (&a.trace, given) {
        // a trace the caller read (the Python package's page-id array): `--trace` only names it
        if a.format.is_some() || a.access != workload::TraceAccess::File {
            return Err(format!(
                "--trace {}: a trace given as page ids is replayed as buffered reads of a file page: \
                 expected neither --format nor --access other than file",
                path.display()
            ));
        }
        trace_refs = Some(t.nr_requests());
        let spec = WorkloadSpec::Trace {
            path: path.clone(),
            format: None,
            access: a.access,
        };
        (spec, Some(t))
    } else if let Some(path) = &a.trace {
        // counted before it is loaded: a trace too large for the budget is never loaded
        trace_refs = Some(checks::trace_refs("--trace", path, a.format)?);
        // read and checked whole here (spilled to disk), before any run: a bad line is reported
        // before any output
        let spec = WorkloadSpec::Trace {
            path: path.clone(),
            format: a.format,
            access: a.access,
        };
        if a.access == workload::TraceAccess::File {
            let t = workload::load_trace_as(path, a.format).map_err(|e| e.to_string())?;
            (spec, Some(t))
        } else {
            // a typed replay: each run reads it again; read here for its errors and size
            let t = workload::trace_ops::load_trace_ops(path, a.format, a.access).map_err(|e| e.to_string())?;
            trace_pages = u64::from(t.nr_anon) + u64::from(t.nr_file);
            (spec, None)
        }
    } else if let Some(p) = &preset {
        (p.workload.clone(), None)
    } else if let Some(job) = &a.fio {
        let shown = job.display();
        let text = std::fs::read_to_string(job).map_err(|e| format!("--fio {shown}: {e}"))?;
        let run = workload::gen::fiojob::JobFile::parse(&text)
            .and_then(|f| f.to_run())
            .map_err(|e| match e.line {
                0 => format!("{shown}: {}", e.message),
                l => format!("{shown}:{l}: {}", e.message),
            })?;
        if !run.ignored.is_empty() {
            eprintln!(
                "note: fio options that change nothing the model simulates: {}",
                run.ignored.join(", ")
            );
        }
        for n in &run.notes {
            eprintln!("note: {n}");
        }
        runtime_ms = runtime_ms.or(run.runtime_ns.map(|ns| ns.div_ceil(1_000_000)));
        ramp_ns = run.ramp_ns.unwrap_or(0);
        fio_jobs = Some(run.jobs);
        fio_desc = Some((run.jobs_desc.clone(), run.global_options.clone()));
        benchmark_input = true;
        (run.workload, None)
    } else {
        let spec = match workload_name.as_str() {
            "file-read" => WorkloadSpec::FileRead {
                files: a.files,
                file_pages: size,
                dist: parse_dist()?,
                accesses,
            },
            "anon" => WorkloadSpec::Anon {
                compressed_pct,
                pages: size,
                write_ratio: a.write_ratio.unwrap_or(0.3),
                dist: parse_dist()?,
                accesses,
            },
            "fio" => WorkloadSpec::Fio {
                dist: a.dist.clone(),
                file_pages: size,
                accesses,
                write_ratio: a.write_ratio.unwrap_or(0.0),
                sequential: false,
                iodepth: 1,
                fadvise_hint: "1".into(),
            },
            "ycsb" => {
                let r = ycsb::run_spec(
                    a.ycsb.as_deref(),
                    &a.ycsb_property,
                    a.records,
                    a.accesses,
                    DEFAULT_ACCESSES,
                    a.threadcount,
                )?;
                runtime_ms = runtime_ms.or(r.runtime_ms);
                benchmark_input = r.from_file;
                if !r.ignored.is_empty() {
                    eprintln!(
                        "note: YCSB properties that change nothing the model simulates: {}",
                        r.ignored.join(", ")
                    );
                }
                r.spec
            }
            "memtier" if a.memtier.is_some() => {
                let r = memtier::run_spec(a.memtier.as_deref().unwrap_or_default(), compressed_pct)?;
                runtime_ms = runtime_ms.or(r.runtime_ms);
                benchmark_input = true;
                if !r.ignored.is_empty() {
                    eprintln!(
                        "note: memtier options that change nothing the model simulates: {}",
                        r.ignored.join(", ")
                    );
                }
                r.spec
            }
            "memtier" => WorkloadSpec::Memtier {
                keys: a.keys,
                value_bytes: a.value_bytes,
                pattern: a.pattern.clone(),
                requests: accesses,
                compressed_pct,
            },
            other => {
                return Err(format!(
                    "unknown workload '{other}': expected file-read, anon, fio, ycsb, memtier, kernel-build, \
                     oltp, many-apps or sort-shuffle"
                ))
            }
        };
        (spec, None)
    };
    // Refuse a bad workload before sizing a machine for it.
    spec.validate().map_err(|e| e.to_string())?;
    let footprint = match &spec {
        WorkloadSpec::Trace { .. } => trace.as_ref().map_or(trace_pages, |t| t.nr_unique as u64),
        w => w.footprint_pages() * a.jobs.unwrap_or(1) as u64,
    };
    let memcg_max = match (&a.memcg_max, a.capacity) {
        (Some(s), _) => {
            let v = size_arg("--memcg-max", s)?;
            if a.memory.is_none() {
                checks::limit_fits("--memcg-max", s, v)?;
            }
            Some(v)
        }
        (None, Some(c)) => {
            if a.memory.is_none() {
                checks::limit_fits("--capacity", &c.to_string(), c)?;
            }
            Some(c)
        }
        (None, None) => match &preset {
            Some(p) => p.memcg.max,
            None => Some((footprint / 2).max(1)),
        },
    };
    let limit = memcg_max.unwrap_or(footprint);
    let memory = match (&a.memory, &preset) {
        (Some(s), _) => size_arg("--memory", s)?,
        (None, Some(p)) => p.machine.total_pages(),
        (None, None) => limit.saturating_add(limit.max(16_384)),
    };
    let swap = match (&a.swap, &preset) {
        (Some(s), _) => size_arg("--swap", s)?,
        (None, Some(p)) => p.machine.swap_pages,
        (None, None) if spec.uses_anon() => 2 * footprint,
        (None, None) => 0,
    };
    let preset_engine = preset.as_ref().and_then(|p| p.engine.clone());
    let mut engine = if preset_engine.is_some()
        || a.jobs.is_some()
        || a.cpus.is_some()
        || a.sched_slice_ns.is_some()
        || runtime_ms.is_some()
        || benchmark_input
        || a.device.is_some()
        || a.swap_device.is_some()
    {
        let mut e = preset_engine.unwrap_or_default();
        if let Some(c) = a.cpus {
            if c == 0 {
                return Err("--cpus: expected at least 1 CPU".into());
            }
            e.cpus = c;
        }
        if let Some(ns) = a.sched_slice_ns {
            e.sched_slice_ns = u64::from(ns);
        }
        e.ramp_ns = ramp_ns;
        if let Some(ms) = runtime_ms {
            if ms == 0 {
                return Err("--runtime-ms: expected at least 1 ms".into());
            }
            e.runtime_ns = ms.saturating_mul(1_000_000);
        }
        if let Some(d) = &a.device {
            e.storage = lrugen::mm::device::DeviceSpec::preset(d).map_err(|x| format!("--device: {x}"))?;
        }
        if let Some(d) = &a.swap_device {
            e.swap_device = lrugen::mm::device::DeviceSpec::preset(d).map_err(|x| format!("--swap-device: {x}"))?;
        }
        Some(e)
    } else {
        None
    };
    let jobs = a.jobs.or(fio_jobs).or(preset.as_ref().map(|p| p.jobs)).unwrap_or(1);
    if jobs == 0 {
        return Err("--jobs: expected at least 1 job".into());
    }
    let switch_at = a
        .switch_at
        .iter()
        .map(|s| parse_switch_at(s))
        .collect::<Result<Vec<_>, _>>()?;
    if !a.ftrace.is_empty() {
        lrugen::mm::ftrace::Ftrace::parse(&a.ftrace)?;
        if !policies.iter().any(|p| p.is_kernel()) {
            return Err(format!(
                "--ftrace: traces the kernel models' reclaim: expected mglru or classic among --policy, found {}",
                a.policy.join(",")
            ));
        }
        if a.output_format.is_some() && a.ftrace_out.is_none() {
            return Err(
                "--ftrace with --output-format: the traces go into --ftrace-out FILE (fio's and cachesim's output has no room for them)"
                    .into(),
            );
        }
        if let Some(out) = &a.ftrace_out {
            if out.is_dir() {
                return Err(format!("--ftrace-out {}: a directory; expected a file", out.display()));
            }
            let parent = out
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !parent.is_dir() {
                return Err(format!(
                    "--ftrace-out {}: no directory {}",
                    out.display(),
                    parent.display()
                ));
            }
        }
    }
    if !switch_at.is_empty() {
        if !policies.iter().any(|p| p.is_kernel()) {
            return Err(format!(
                "--switch-at: /sys/kernel/mm/lru_gen/enabled switches the kernel's LRU: expected mglru or \
                 classic among --policy, found {}",
                a.policy.join(",")
            ));
        }
        if a.ops.is_some() {
            return Err("--switch-at: not with --ops (the op file's replay has no switch)".into());
        }
        let tasks = matches!(&spec, WorkloadSpec::Mix { .. })
            || matches!(&spec, WorkloadSpec::Ycsb { threadcount, .. } if *threadcount > 1)
            || matches!(&spec, WorkloadSpec::Fio { iodepth, .. } if *iodepth > 1);
        if engine.is_some() || jobs > 1 || tasks {
            return Err(
                "--switch-at: switching MGLRU during a run is modelled without the virtual-time engine; \
                 this run has tasks in virtual time (--jobs, --cpus, --runtime-ms, a device, a mix, YCSB \
                 clients, fio's iodepth or a benchmark's input)"
                    .into(),
            );
        }
    }
    if let (Some(OutputFormat::Fio(_)), Some((d, _))) = (a.output_format, &fio_desc) {
        fio::measure_per_job(&mut engine, d, jobs);
    }
    let mut machine = match &preset {
        Some(p) if a.memory.is_none() && a.swap.is_none() => p.machine.clone(),
        _ => MachineConfig::simple(memory, swap),
    };
    machine.swappiness = a.swappiness;
    if let Some(v) = a.page_cluster {
        machine.page_cluster = v;
    }
    machine.thp = a.thp;
    if a.kmem == "kernel" {
        machine.kmem = lrugen::mm::KmemConfig::kernel();
    }
    if let Some(cmds) = &a.debugfs_write {
        checks::debugfs_write(cmds, mglru.profile, machine.nodes.len())?;
    }
    // Several tasks interleave in virtual time as the kernel policies run them; the reference
    // caches replay one page stream, which is not that interleaving: leave them out of the table.
    let tasks = match &spec {
        WorkloadSpec::Mix { parts } => parts.iter().map(|p| p.jobs).sum::<u32>() * jobs,
        WorkloadSpec::Ycsb { threadcount, .. } => threadcount * jobs,
        WorkloadSpec::Fio { iodepth, .. } => iodepth * jobs,
        _ => jobs,
    };
    let mut left_out = Vec::new();
    if opfile.is_some() {
        // an op file is operations on files and anon memory, which only the kernel models run
        left_out = policies.iter().filter(|p| !p.is_kernel()).map(|p| p.name()).collect();
        policies.retain(|p| p.is_kernel());
        runs.retain(|r| r.kind.is_kernel());
        if policies.is_empty() {
            return Err(format!(
                "--policy {}: an op file is replayed on the kernel models; expected mglru or classic",
                a.policy.join(",")
            ));
        }
    }
    // (a mix and YCSB clients run under the engine's defaults when no engine flag is given)
    let runs_tasks = engine.is_some()
        || matches!(
            spec,
            WorkloadSpec::Mix { .. } | WorkloadSpec::Ycsb { .. } | WorkloadSpec::Fio { iodepth: 2.., .. }
        );
    if runs_tasks && tasks > 1 {
        left_out = policies.iter().filter(|p| !p.is_kernel()).map(|p| p.name()).collect();
        policies.retain(|p| p.is_kernel());
        runs.retain(|r| r.kind.is_kernel());
        if policies.is_empty() {
            return Err(format!(
                "--policy {}: the reference caches replay one page stream, and this run has {tasks} \
                 tasks interleaved in virtual time; expected mglru or classic",
                a.policy.join(",")
            ));
        }
    }
    // bare `mglru` runs --profile; an entry's own profile replaces it, --switch flips on top
    let mut run_mglru = Vec::new();
    for r in &runs {
        let mut c = mglru.clone();
        if let Some(mut pr) = r.profile {
            for sw in &a.switch {
                pr.apply_assignment(sw).map_err(|e| format!("--switch {sw}: {e}"))?;
            }
            c.profile = pr;
        }
        run_mglru.push(c);
    }
    // rows: with several MGLRU runs each is labelled by its profile (`mglru-7.2`, `mglru-fg`),
    // as in an experiment's table; a variant (`mglru-fg`) is its own row even alone
    let nr_mglru = runs.iter().filter(|r| r.kind == PolicyKind::Mglru).count();
    let labels: Vec<Option<String>> = runs
        .iter()
        .zip(&run_mglru)
        .map(|(r, c)| {
            if r.kind != PolicyKind::Mglru {
                None
            } else if c.profile.preset == lrugen::reclaim::mglru::Preset::MglruFg {
                Some(c.profile.label())
            } else if nr_mglru > 1 {
                Some(format!("mglru-{}", c.profile.label()))
            } else {
                None
            }
        })
        .collect();
    let cfgs: Vec<RunConfig> = runs
        .iter()
        .zip(&run_mglru)
        .map(|(r, mglru)| (r.kind, mglru))
        .map(|(p, mglru)| RunConfig {
            machine: machine.clone(),
            memcg: MemcgConfig {
                max: memcg_max,
                ..Default::default()
            },
            workload: spec.clone(),
            policy: p,
            seed: a.seed,
            capacity: a.capacity.or(memcg_max),
            check: a.check,
            mglru: mglru.clone(),
            debugfs_every: a.debugfs_every,
            debugfs_write: a.debugfs_write.clone(),
            sample_every: None,
            engine: engine.clone(),
            jobs,
            ctl: ctl.clone(),
            switch_at: if p.is_kernel() { switch_at.clone() } else { Vec::new() },
            ftrace: if p.is_kernel() { a.ftrace.clone() } else { Vec::new() },
        })
        .collect();
    // the model state each run needs at most, against the budget, before any run starts
    let what = match (a.ops.as_ref().or(a.trace.as_ref()), &preset, workload_name.as_str()) {
        (Some(p), _, _) => format!("--trace {}", p.display()),
        (None, Some(_), w) => format!("--workload {w}"),
        (None, None, _) if a.fio.is_some() => format!(
            "--fio {}",
            a.fio.as_ref().map_or(String::new(), |p| p.display().to_string())
        ),
        (None, None, "file-read") => format!("--size {} (x --files {})", a.size, a.files),
        (None, None, "ycsb") => format!("--records {}", a.records.unwrap_or(ycsb::DEFAULT_RECORDS)),
        (None, None, "memtier") => format!("--keys {}", a.keys),
        (None, None, _) => format!("--size {}", a.size),
    };
    for cfg in &cfgs {
        let steps_flag = (a.trace.is_none() && preset.is_none()).then_some("--accesses");
        checks::fits(&what, steps_flag, &lrugen::budget::estimate(cfg, trace_refs))?;
    }
    let note = (!left_out.is_empty()).then(|| {
        if opfile.is_some() {
            format!(
                "note: {} left out: an op file's reads, writes, loads and stores are replayed on the \
                 kernel models",
                left_out.join(" and ")
            )
        } else {
            format!(
                "note: {} left out: {tasks} tasks run interleaved in virtual time, and a reference cache \
                 replays one page stream, not that interleaving",
                left_out.join(" and ")
            )
        }
    });
    Ok(RunPlan {
        cfgs,
        labels,
        trace,
        opfile,
        spec,
        note,
        memory,
        limit,
        swap,
        nr_mglru,
        fio_desc,
        jobs,
    })
}

/// The policies `lrugen run` runs when `--policy` gives none: mglru, classic, lru and opt, or the
/// kernel policies alone with a control script (`--ctl`).
pub fn default_policies(a: &mut RunArgs) {
    if a.policy.is_empty() {
        a.policy = if a.ctl.is_some() {
            ["mglru", "classic"].map(String::from).to_vec()
        } else {
            ["mglru", "classic", "lru", "opt"].map(String::from).to_vec()
        };
    }
}

/// Replay op file `o` (read from `path`) on the model under `cfg`: its result, its workload named
/// after the file.
pub fn run_op_file(
    o: &lrugen_kernel::ops::OpFile,
    path: &std::path::Path,
    cfg: &RunConfig,
) -> Result<lrugen::sim::RunResult, String> {
    let mut r = lrugen_kernel::model::run_workload_only(o, cfg).map_err(|e| e.to_string())?;
    r.workload = format!(
        "ops {}",
        path.file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    Ok(r)
}

/// Name each result's row after its label ([`RunPlan::labels`]: `mglru-7.2`, `mglru-fg`).
pub fn apply_labels(results: &mut [lrugen::sim::RunResult], labels: &[Option<String>]) {
    for (r, l) in results.iter_mut().zip(labels) {
        if let Some(l) = l {
            r.policy = l.clone();
        }
    }
}

/// `lrugen run`'s options alone, as a command of their own: what [`parse_run_args`] parses.
#[derive(clap::Parser)]
#[command(name = "lrugen run", no_binary_name = true, disable_version_flag = true)]
struct RunCommand {
    #[command(flatten)]
    args: RunArgs,
}

/// Parse `lrugen run`'s options from `words` (what follows `lrugen run` on a command line, e.g.
/// `["--trace", "OLTP.lis.zst", "--capacity", "1000"]`), as the command line parses them: the same
/// names, defaults and messages. `--help` is an error whose text is the help.
pub fn parse_run_args<I, T>(words: I) -> Result<RunArgs, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::Parser;
    RunCommand::try_parse_from(words).map(|c| c.args)
}

/// `--thp`: one of the words `/sys/kernel/mm/transparent_hugepage/enabled` accepts.
fn thp_mode(s: &str) -> Result<lrugen::mm::thp::Thp, String> {
    lrugen::mm::thp::Thp::parse(s).ok_or_else(|| format!("expected always, madvise or never, found {s:?}"))
}

/// Write `text` to `path` whole: into `path.partial`, then renamed over it (`what`: the option,
/// for the error).
pub fn write_whole(path: &Path, text: &str, what: &str) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(|e| format!("{what} {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{what} {}: {e}", path.display()))
}

/// The traces of `--ftrace`, each kernel-policy run's after a `# POLICY` line.
pub fn ftrace_text(results: &[lrugen::sim::RunResult]) -> String {
    let mut o = String::new();
    for r in results.iter().filter(|r| r.vmstat.is_some()) {
        o.push_str(&format!("# {}\n{}", r.policy, r.ftrace));
    }
    o
}

// SPDX-License-Identifier: GPL-2.0-only
//! Workloads: what tasks do to memory, as a stream of operations.
//!
//! An [`Op`] is one page-sized operation of one task: a buffered read or write of a file page, or a
//! load or store at a virtual page. A workload is set up on the machine (files, address spaces,
//! VMAs) and then yields operations. Each yielded [`Step`] also carries a dense `key` naming the
//! page, so the reference cache policies (LRU, OPT) can run the very same stream without a machine,
//! and a `measure` flag that is false during a warm-up phase (e.g. populating anon memory).
//!
//! Besides page accesses, a stream carries process and address-space events: `Mmap`, `Munmap`,
//! `Madvise`, `Fork`, `Exit`, and think time. They name no page of their own: like `Exit` and
//! `Think` they are unmeasured steps whose key repeats a page of the task, so the reference LRU/OPT
//! replays see a harmless re-reference.

pub mod dist;
pub mod gen;
pub mod store;
pub mod trace_ops;

use crate::mm::memcg::MemcgId;
use crate::mm::pagecache::Advice;
use crate::mm::vm::vmf;
use crate::mm::Machine;
use dist::{Dist, Sampler};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
pub use trace_ops::TraceAccess;

/// One page-sized operation of one task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Buffered read (`pread`) of one page.
    Read {
        /// Task (address space id).
        task: u32,
        /// File id.
        file: u32,
        /// Page index.
        index: u64,
    },
    /// Buffered write of one page.
    Write {
        /// Task.
        task: u32,
        /// File id.
        file: u32,
        /// Page index.
        index: u64,
    },
    /// A load from a virtual page.
    Load {
        /// Task.
        task: u32,
        /// Virtual page number.
        vpn: u32,
    },
    /// A store to a virtual page.
    Store {
        /// Task.
        task: u32,
        /// Virtual page number.
        vpn: u32,
    },
    /// Process exit (`exit_mmap`): the task's mappings are torn down and its anon memory freed
    /// (folios shared with forked relatives only lose this mapping). Later operations of the task
    /// fail as those of a killed task.
    Exit {
        /// Task.
        task: u32,
    },
    /// Think time: no kernel work. The virtual-time engine delays the task by `ns` without
    /// occupying a CPU; a replay without the engine ignores it.
    Think {
        /// Task.
        task: u32,
        /// Delay (ns).
        ns: u64,
    },
    /// `mmap(MAP_FIXED_NOREPLACE)`: map `pages` pages at exactly `vpn` (an error if that overlaps a
    /// VMA; streams choose their addresses, which keeps them deterministic).
    Mmap {
        /// Task.
        task: u32,
        /// First virtual page.
        vpn: u32,
        /// Pages.
        pages: u32,
        /// File id, or [`ANON_FILE`] for anonymous memory.
        file: u32,
        /// File page offset of `vpn` (file mappings).
        pgoff: u32,
        /// VMA flags (`vmf::*`, all of which fit in a byte), e.g. `vmf::WRITE`.
        flags: u8,
        /// zram compressibility of anon pages in percent of a page (0: the machine's default).
        compressed_pct: u8,
    },
    /// `munmap` of `[vpn, vpn + pages)`.
    Munmap {
        /// Task.
        task: u32,
        /// First virtual page.
        vpn: u32,
        /// Pages.
        pages: u32,
    },
    /// `madvise` of `[vpn, vpn + pages)`, which must be mapped.
    Madvise {
        /// Task.
        task: u32,
        /// First virtual page.
        vpn: u32,
        /// Pages.
        pages: u32,
        /// The advice.
        advice: Madv,
    },
    /// `mbind` of `[vpn, vpn + pages)`, which must be mapped: `MPOL_PREFERRED` of `node`, or
    /// [`crate::mm::vm::MPOL_DEFAULT`]; pages already present stay where they are.
    Mbind {
        /// Task.
        task: u32,
        /// First virtual page.
        vpn: u32,
        /// Pages.
        pages: u32,
        /// The preferred node, or `MPOL_DEFAULT`.
        node: u8,
    },
    /// `fork`: `child`, an address space reserved at setup ([`Machine::reserve_mm`]) and not
    /// forked yet, becomes a copy of `task`'s.
    Fork {
        /// Parent task.
        task: u32,
        /// Child task.
        child: u32,
    },
}

/// [`Op::Mmap`]'s `file` for an anonymous mapping.
pub const ANON_FILE: u32 = u32::MAX;

pub use crate::mm::vm::Madv;

impl Op {
    /// The task that issues it.
    pub fn task(&self) -> u32 {
        match *self {
            Op::Read { task, .. }
            | Op::Write { task, .. }
            | Op::Load { task, .. }
            | Op::Store { task, .. }
            | Op::Exit { task }
            | Op::Think { task, .. }
            | Op::Mmap { task, .. }
            | Op::Munmap { task, .. }
            | Op::Madvise { task, .. }
            | Op::Mbind { task, .. }
            | Op::Fork { task, .. } => task,
        }
    }
}

/// One operation with its dense page key and whether it is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The operation.
    pub op: Op,
    /// Dense id of the page it touches (`0..nr_keys`), or [`NO_KEY`] for a system call that
    /// names none (`Exit` and `Think` repeat the task's last key instead).
    pub key: u32,
    /// False during warm-up.
    pub measure: bool,
    /// The task allocates an order-0 `GFP_USER` page and frees it just before this step
    /// ([`crate::kernel::Kernel::alloc_page_and_free`]), as a program calling `mincore()` before
    /// each access does (`mm/mincore.c` takes its buffer with `__get_free_page(GFP_USER)` on
    /// every call): below the low watermark that allocation wakes kswapd, below the min
    /// watermark it reclaims directly, counted in `allocstall_normal`. The kernel comparisons'
    /// replayer does this before each of its accesses (`lrugen_kernel::model`); the built-in
    /// workloads do not.
    pub alloc_page_first: bool,
}

impl Step {
    /// A step of `op` with page key `key`, measured or not, without the replayer's `mincore()`
    /// page ([`Step::alloc_page_first`]).
    #[inline]
    pub const fn new(op: Op, key: u32, measure: bool) -> Step {
        Step {
            op,
            key,
            measure,
            alloc_page_first: false,
        }
    }
}

/// What to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum WorkloadSpec {
    /// fio-like buffered random reads over a set of files (`--rw=randread --buffered=1`).
    FileRead {
        /// Number of files.
        files: u32,
        /// Pages per file.
        file_pages: u64,
        /// Offset distribution over all pages of all files.
        dist: Dist,
        /// Reads to issue.
        accesses: u64,
    },
    /// An anon region populated with stores, then random loads and stores.
    Anon {
        /// Pages in the region.
        pages: u64,
        /// Fraction of accesses that are stores.
        write_ratio: f64,
        /// Page distribution.
        dist: Dist,
        /// Accesses to issue after the populate phase.
        accesses: u64,
        /// Size of its pages once compressed by zram, in percent of a page (0: the machine's
        /// default ratio), e.g. 100 for incompressible data.
        #[serde(default)]
        compressed_pct: u8,
    },
    /// A trace replayed as buffered 4 KiB reads of one file opened with `POSIX_FADV_RANDOM`.
    Trace {
        /// The trace file.
        path: PathBuf,
        /// Its format (`None`: told by the file's name or first bytes), e.g. `"oracleGeneral"`.
        #[serde(default, skip_serializing_if = "Option::is_none", with = "trace_format")]
        format: Option<lrugen_trace::TraceFormat>,
        /// How its records are replayed (`file`: buffered reads, the default; `mmap`, `anon`,
        /// `mixed`: see [`trace_ops`]).
        #[serde(default, skip_serializing_if = "is_file_access")]
        access: TraceAccess,
    },
    /// An fio job: buffered 4 KiB random I/O on its own file with fio's `random_distribution`
    /// (`random`, `zipf:θ`, `pareto:h`, `normal:dev`, `zoned:…`), hot blocks scattered as fio does.
    Fio {
        /// fio's `random_distribution=` value.
        dist: String,
        /// File size in pages.
        file_pages: u64,
        /// I/Os to issue.
        accesses: u64,
        /// Fraction of writes (`rwmixwrite`/100); 0 for `randread`.
        #[serde(default)]
        write_ratio: f64,
        /// Sequential offsets (`rw=read`, `write`, `rw`), wrapping at the end of the file,
        /// instead of `dist`'s random ones.
        #[serde(default, skip_serializing_if = "is_false")]
        sequential: bool,
        /// I/Os in flight per job (`iodepth` of `ioengine=io_uring`, whose buffered reads that
        /// miss are served by io-wq workers in parallel): that many tasks on the job's one file,
        /// its I/Os split among them (a sequential job's in-flight I/Os take consecutive blocks).
        #[serde(default = "one", skip_serializing_if = "is_one")]
        iodepth: u32,
        /// fio's `fadvise_hint`: `"1"` (fio's default: `POSIX_FADV_RANDOM` for random I/O,
        /// `POSIX_FADV_SEQUENTIAL` for sequential), `"0"` (no hint: read-ahead as usual),
        /// `"random"`, `"sequential"`, `"normal"`.
        #[serde(default = "fio_default_fadvise", skip_serializing_if = "is_fio_default_fadvise")]
        fadvise_hint: String,
    },
    /// YCSB core workload (`a`..`f`) on records of 1,000 bytes stored in order in a data file read
    /// and written through the page cache.
    Ycsb {
        /// The preset `a`..`f`, or `core` for YCSB's `CoreWorkload` defaults (95 % reads,
        /// 5 % updates, uniform), which `properties` then change.
        workload: String,
        /// Records loaded.
        records: u64,
        /// Operations in the transaction phase (all clients together, as YCSB's
        /// `operationcount`).
        operations: u64,
        /// YCSB's `threadcount`: client tasks sharing the one table (and its operations; each
        /// client has its own key chooser). More than 1 runs under the engine (its defaults when
        /// none is configured) and on the kernel policies only; workloads that insert (d, e) are
        /// refused, as their clients would share YCSB's insert counter.
        #[serde(default = "one", skip_serializing_if = "is_one")]
        threadcount: u32,
        /// YCSB properties set over the preset, under YCSB's names, as `-p key=value` sets them
        /// (`requestdistribution`, `readproportion`, `fieldlength`, …; see
        /// [`gen::ycsb::YcsbWorkload::with_properties`]). A YCSB properties file becomes
        /// `workload = "core"`, its `recordcount`, `operationcount` and `threadcount` as the fields
        /// above and the rest here (`lrugen run --ycsb FILE`).
        #[serde(
            default,
            skip_serializing_if = "std::collections::BTreeMap::is_empty",
            deserialize_with = "property_values"
        )]
        properties: std::collections::BTreeMap<String, String>,
    },
    /// memtier against a key-value server holding `keys` values of `value_bytes` in anonymous
    /// memory: populate sequentially (not measured), then GETs with the key pattern.
    Memtier {
        /// Keys.
        keys: u64,
        /// Value size in bytes.
        value_bytes: u64,
        /// memtier's `--key-pattern` for GETs: `S`, `R`, `G` or `P`.
        pattern: String,
        /// GET requests.
        requests: u64,
        /// Size of its pages once compressed by zram, in percent of a page (0: the machine's
        /// default ratio), e.g. 100 for incompressible values.
        #[serde(default)]
        compressed_pct: u8,
    },
    /// A kernel build (`make -jN`, workloads.md §5): per job, make (the stream's task) forks one
    /// compiler process after another; each maps its anon arena (`mmap` at a fixed address),
    /// reads the shared hot headers (one file shared by all jobs, Zipf), reads its own source file
    /// once, stores to and loads from its arena, unmaps the upper half of the arena, writes its
    /// object file (buffered writes), and exits. The compilers' address-space ids (reserved,
    /// unborn until forked) and files are created at setup; run `jobs = N` under the engine for
    /// `-jN`.
    Build {
        /// Processes (compiler invocations) each job runs in turn.
        processes_per_job: u32,
        /// Pages of the shared header file.
        header_pages: u64,
        /// Pages of each process's source file.
        source_pages_per_process: u64,
        /// Pages of each process's anon region.
        anon_pages_per_process: u64,
        /// Pages of each process's object file.
        object_pages_per_process: u64,
    },
    /// OLTP (workloads.md §7): a buffer pool in anon memory (populated first, not measured)
    /// split into `warehouses` equal ranges; each transaction picks a warehouse uniformly, touches
    /// [`OLTP_PAGES_PER_TXN`] pool pages Zipf-skewed within it (the first half loads, the rest
    /// stores), appends the next page of a circular WAL file (a buffered write), then thinks for
    /// [`OLTP_THINK_NS`].
    Oltp {
        /// Pages of the buffer pool.
        buffer_pool_pages: u64,
        /// Warehouses (hot ranges of the pool).
        warehouses: u32,
        /// Pages of the WAL file (written circularly).
        wal_pages: u64,
        /// Transactions.
        transactions: u64,
    },
    /// Many applications (workloads.md §10): `apps` processes each with an anon working set of
    /// `pages_per_app` (all populated first, not measured); one app at a time is in the
    /// foreground and touches its set (Zipf, 20% stores) `foreground_accesses` times, then the
    /// next app in round-robin order comes to the foreground, `switches` times. One stream: the
    /// engine runs it as one task issuing every app's accesses in turn.
    Apps {
        /// Applications (processes).
        apps: u32,
        /// Pages of each app's working set.
        pages_per_app: u64,
        /// Accesses of each foreground period.
        foreground_accesses: u64,
        /// Foreground switches (periods = switches + 1).
        switches: u32,
    },
    /// Sort and shuffle (Spark, Hadoop TeraSort; workloads.md §6): an anonymous heap close to
    /// the memory size, an input file read once sequentially, random heap accesses while
    /// sorting, a shuffle file written sequentially and read back once.
    Sort {
        /// Heap pages (populated first, not measured).
        heap_pages: u64,
        /// Input file pages, read once.
        input_pages: u64,
        /// Shuffle file pages, written then read back.
        shuffle_pages: u64,
        /// Random heap accesses (half loads, half stores) of the sort phase.
        sort_accesses: u64,
    },
    /// Several workloads running side by side as tasks (virtual-time engine runs), each part
    /// with its own number of tasks: e.g. hot lookups under a cold stream.
    Mix {
        /// The parts.
        parts: Vec<MixPart>,
    },
}

/// One part of a [`WorkloadSpec::Mix`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MixPart {
    /// What its tasks run.
    pub workload: WorkloadSpec,
    /// How many tasks.
    #[serde(default = "one")]
    pub jobs: u32,
    /// Think time after each page operation of its tasks (ns; 0: none), which sets the rate of
    /// a part that stands for work paced by the others (a store's cache touched by its clients'
    /// requests). Under the virtual-time engine only; a replay without it ignores think time.
    #[serde(default)]
    pub think_ns: u64,
    /// The memcg its tasks run in: a child of the workload memcg (one path component, made at
    /// set-up; parts may share one), e.g. two siblings under a common limit. Every part of a mix
    /// names one or none does: in cgroup v2 a memcg that holds tasks cannot hand `memory` to
    /// children (`cgroup.subtree_control` is `EBUSY`), so the workload memcg holds none then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcg: Option<String>,
}

fn one() -> u32 {
    1
}

/// Pool pages an OLTP transaction touches.
pub const OLTP_PAGES_PER_TXN: u64 = 4;
/// Think time after each OLTP transaction (ns).
pub const OLTP_THINK_NS: u64 = 20_000;
/// Header reads per source page of a build process.
pub const BUILD_HEADER_READS_PER_SOURCE_PAGE: u64 = 2;
/// Name of the build's shared header file.
pub const BUILD_HEADER_FILE: &str = "build/include";

/// Parse a generator parameter (`what` names it in the error).
fn parse_gen<T: std::str::FromStr<Err = gen::GenError>>(s: &str, what: &str) -> Result<T, WorkloadError> {
    s.parse()
        .map_err(|e: gen::GenError| WorkloadError(format!("{what}: {}", e.0)))
}

/// A write ratio must be a fraction.
fn check_ratio(r: f64) -> Result<(), WorkloadError> {
    if (0.0..=1.0).contains(&r) {
        Ok(())
    } else {
        Err(WorkloadError(format!("write ratio {r} is not in [0, 1]")))
    }
}

fn check_compressed_pct(p: u8) -> Result<(), WorkloadError> {
    if p <= 100 {
        Ok(())
    } else {
        Err(WorkloadError(format!(
            "compressed_pct {p} is not a percentage of a page (expected 0..=100; 0 = the machine's default ratio)"
        )))
    }
}

/// ", zram-compressed to N%" for a region with its own compressibility.
fn compressed_suffix(p: u8) -> String {
    if p > 0 {
        format!(", compressing to {p}% of a page")
    } else {
        String::new()
    }
}

/// Give the anon region just mapped by `task` its own compressibility (0: the machine's default).
fn set_compressed_pct(m: &mut Machine, task: u32, p: u8) {
    if p > 0 {
        if let Some(v) = m.mms[task as usize].vmas.last_mut() {
            v.compressed_pct = p.min(100);
        }
    }
}

/// YCSB properties from an experiment file: values as strings, numbers or booleans (TOML's
/// `fieldcount = 4` and `readallfields = true` as well as `"4"`), kept as the text YCSB reads.
fn property_values<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<std::collections::BTreeMap<String, String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Value {
        Text(String),
        Int(i64),
        Float(f64),
        Bool(bool),
    }
    let m = std::collections::BTreeMap::<String, Value>::deserialize(d)?;
    Ok(m.into_iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Text(s) => s,
                Value::Int(i) => i.to_string(),
                Value::Float(f) => f.to_string(),
                Value::Bool(b) => b.to_string(),
            };
            (k, v)
        })
        .collect())
}

/// The YCSB core workload of a [`WorkloadSpec::Ycsb`]'s `workload` and `properties`.
pub fn ycsb_workload(
    workload: &str,
    properties: &std::collections::BTreeMap<String, String>,
) -> Result<gen::ycsb::YcsbWorkload, WorkloadError> {
    let base = if workload.trim().eq_ignore_ascii_case("core") {
        gen::ycsb::YcsbWorkload::core_defaults()
    } else {
        workload.parse().map_err(|e: gen::GenError| {
            WorkloadError(format!("ycsb workload: {e}, or core (CoreWorkload's defaults)"))
        })?
    };
    let (w, _) = base
        .with_properties(properties)
        .map_err(|e| WorkloadError(format!("ycsb: {e}")))?;
    Ok(w)
}

impl WorkloadSpec {
    /// Check the parameters (sizes, ratios) without building anything, so that a bad workload is
    /// refused before a machine is built for it.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        match self {
            WorkloadSpec::FileRead { files, file_pages, .. } => {
                if *files == 0 || *file_pages == 0 {
                    return Err(WorkloadError(
                        "file-read workload needs at least one file of at least one page".into(),
                    ));
                }
                match (*files as u64).checked_mul(*file_pages) {
                    Some(total) if total <= u32::MAX as u64 => Ok(()),
                    _ => Err(WorkloadError(format!(
                        "file-read workload of {files} files x {file_pages} pages is too large (max {} pages)",
                        u32::MAX
                    ))),
                }
            }
            WorkloadSpec::Anon {
                pages,
                write_ratio,
                compressed_pct,
                ..
            } => {
                if *pages == 0 || *pages > (1 << 26) {
                    return Err(WorkloadError(format!(
                        "anon workload needs 1..={} pages, got {pages}",
                        1u64 << 26
                    )));
                }
                check_ratio(*write_ratio)?;
                check_compressed_pct(*compressed_pct)?;
                Ok(())
            }
            WorkloadSpec::Trace { .. } => Ok(()),
            WorkloadSpec::Fio {
                dist,
                file_pages,
                write_ratio,
                sequential,
                iodepth,
                fadvise_hint,
                ..
            } => {
                parse_gen::<gen::fio::FioDist>(dist, "fio dist")?;
                fio_advice(fadvise_hint, *sequential)?;
                if *iodepth == 0 {
                    return Err(WorkloadError("fio iodepth: expected at least 1".into()));
                }
                if *file_pages == 0 || *file_pages > u32::MAX as u64 {
                    return Err(WorkloadError(format!(
                        "fio file of {file_pages} pages: expected 1..={}",
                        u32::MAX
                    )));
                }
                check_ratio(*write_ratio)?;
                Ok(())
            }
            WorkloadSpec::Ycsb {
                workload,
                records,
                operations,
                threadcount,
                properties,
            } => {
                let w = ycsb_workload(workload, properties)?;
                if *threadcount == 0 {
                    return Err(WorkloadError("ycsb threadcount: expected at least 1 client".into()));
                }
                if *threadcount > 1 && w.insert > 0.0 {
                    return Err(WorkloadError(format!(
                        "ycsb threadcount {threadcount} with workload {workload}: its clients would share \
                         YCSB's insert counter, which is not modelled; expected a workload without \
                         inserts (a, b, c, f) or threadcount 1"
                    )));
                }
                let pages = (records.saturating_add(*operations)).saturating_mul(w.record_bytes()) / 4096 + 1;
                if *records == 0 || pages > u32::MAX as u64 {
                    return Err(WorkloadError(format!(
                        "ycsb: {records} records of {} bytes (and room for {operations} inserts) is out of range",
                        w.record_bytes()
                    )));
                }
                Ok(())
            }
            WorkloadSpec::Memtier {
                keys,
                value_bytes,
                pattern,
                compressed_pct,
                ..
            } => {
                parse_gen::<gen::memtier::KeyPattern>(pattern, "memtier pattern")?;
                check_compressed_pct(*compressed_pct)?;
                let pages = keys
                    .saturating_mul(value_bytes.div_ceil(4096).max(1))
                    .max(keys.saturating_mul(*value_bytes) / 4096);
                if *keys == 0 || *value_bytes == 0 || pages > (1 << 26) {
                    return Err(WorkloadError(format!(
                        "memtier: {keys} keys of {value_bytes} bytes is out of range"
                    )));
                }
                Ok(())
            }
            WorkloadSpec::Build {
                processes_per_job,
                header_pages,
                source_pages_per_process,
                anon_pages_per_process,
                object_pages_per_process,
            } => {
                if *processes_per_job == 0 || *header_pages == 0 || *source_pages_per_process == 0 {
                    return Err(WorkloadError(
                        "build workload needs at least one process, one header page and one source page".into(),
                    ));
                }
                let per = source_pages_per_process
                    .saturating_add(*anon_pages_per_process)
                    .saturating_add(*object_pages_per_process);
                let total = per
                    .saturating_mul(*processes_per_job as u64)
                    .saturating_add(*header_pages);
                if *anon_pages_per_process > (1 << 26) || total > u32::MAX as u64 {
                    return Err(WorkloadError(format!("build workload of {total} pages is too large")));
                }
                Ok(())
            }
            WorkloadSpec::Oltp {
                buffer_pool_pages,
                warehouses,
                wal_pages,
                ..
            } => {
                if *warehouses == 0 || *wal_pages == 0 || *buffer_pool_pages < *warehouses as u64 {
                    return Err(WorkloadError(
                        "oltp workload needs at least one warehouse, a WAL page and a pool page per warehouse".into(),
                    ));
                }
                if *buffer_pool_pages > (1 << 26) || buffer_pool_pages.saturating_add(*wal_pages) > u32::MAX as u64 {
                    return Err(WorkloadError(format!(
                        "oltp buffer pool of {buffer_pool_pages} pages is out of range (max {})",
                        1u64 << 26
                    )));
                }
                Ok(())
            }
            WorkloadSpec::Apps {
                apps, pages_per_app, ..
            } => {
                if *apps == 0 || *pages_per_app == 0 {
                    return Err(WorkloadError("apps workload needs at least one app of one page".into()));
                }
                if *pages_per_app > (1 << 26) || (*apps as u64).saturating_mul(*pages_per_app) > (1 << 28) {
                    return Err(WorkloadError(format!(
                        "apps workload of {apps} apps x {pages_per_app} pages is too large"
                    )));
                }
                Ok(())
            }
            WorkloadSpec::Sort {
                heap_pages,
                input_pages,
                shuffle_pages,
                ..
            } => {
                if *heap_pages == 0 || *input_pages == 0 || *shuffle_pages == 0 {
                    return Err(WorkloadError(
                        "sort workload needs a heap, an input and a shuffle file".into(),
                    ));
                }
                if *heap_pages > (1 << 26) || *input_pages > u32::MAX as u64 / 4 || *shuffle_pages > u32::MAX as u64 / 4
                {
                    return Err(WorkloadError("sort workload is too large".into()));
                }
                Ok(())
            }
            WorkloadSpec::Mix { parts } => {
                if parts.is_empty() {
                    return Err(WorkloadError("a mix needs at least one part".into()));
                }
                if parts.iter().any(|p| p.memcg.is_some()) && parts.iter().any(|p| p.memcg.is_none()) {
                    return Err(WorkloadError(
                        "every part of a mix names its memcg or none does (a memcg that holds tasks cannot \
                         delegate memory to child memcgs in cgroup v2)"
                            .into(),
                    ));
                }
                for p in parts {
                    if matches!(p.workload, WorkloadSpec::Mix { .. }) {
                        return Err(WorkloadError("a mix cannot contain a mix".into()));
                    }
                    if let Some(name) = &p.memcg {
                        if !lrugen_replay::valid_memcg_name(name) {
                            return Err(WorkloadError(format!(
                                "mix part memcg \"{name}\": expected the name of a child of the workload memcg \
                                 (one path component of letters, digits, '_', '-' or '.')"
                            )));
                        }
                    }
                    if p.jobs == 0 {
                        return Err(WorkloadError("a mix part needs at least one job".into()));
                    }
                    p.workload.validate()?;
                }
                Ok(())
            }
        }
    }

    /// Pages the workload touches (its footprint); 0 if unknown before loading (traces).
    pub fn footprint_pages(&self) -> u64 {
        match self {
            WorkloadSpec::FileRead { files, file_pages, .. } => *files as u64 * file_pages,
            WorkloadSpec::Anon { pages, .. } => *pages,
            WorkloadSpec::Trace { .. } => 0,
            WorkloadSpec::Fio { file_pages, .. } => *file_pages,
            WorkloadSpec::Ycsb {
                workload,
                records,
                properties,
                ..
            } => {
                let bytes = ycsb_workload(workload, properties).map_or(1000, |w| w.record_bytes());
                records.saturating_mul(bytes) / 4096 + 1
            }
            WorkloadSpec::Memtier { keys, value_bytes, .. } => keys.saturating_mul(*value_bytes).div_ceil(4096),
            WorkloadSpec::Build {
                processes_per_job,
                header_pages,
                source_pages_per_process,
                anon_pages_per_process,
                object_pages_per_process,
            } => {
                header_pages
                    + *processes_per_job as u64
                        * (source_pages_per_process + anon_pages_per_process + object_pages_per_process)
            }
            WorkloadSpec::Oltp {
                buffer_pool_pages,
                wal_pages,
                ..
            } => buffer_pool_pages + wal_pages,
            WorkloadSpec::Apps {
                apps, pages_per_app, ..
            } => *apps as u64 * pages_per_app,
            WorkloadSpec::Sort {
                heap_pages,
                input_pages,
                shuffle_pages,
                ..
            } => heap_pages + input_pages + shuffle_pages,
            WorkloadSpec::Mix { parts } => parts.iter().map(|p| p.jobs as u64 * p.workload.footprint_pages()).sum(),
        }
    }

    /// Whether the workload uses anonymous memory (and so wants swap).
    pub fn uses_anon(&self) -> bool {
        match self {
            WorkloadSpec::Anon { .. }
            | WorkloadSpec::Memtier { .. }
            | WorkloadSpec::Build { .. }
            | WorkloadSpec::Oltp { .. }
            | WorkloadSpec::Apps { .. }
            | WorkloadSpec::Sort { .. } => true,
            WorkloadSpec::Mix { parts } => parts.iter().any(|p| p.workload.uses_anon()),
            _ => false,
        }
    }

    /// A short human-readable description.
    pub fn describe(&self) -> String {
        match self {
            WorkloadSpec::FileRead {
                files,
                file_pages,
                dist,
                accesses,
            } => format!(
                "buffered {dist} reads, {files} files x {} MiB, {accesses} reads",
                file_pages * 4 / 1024
            ),
            WorkloadSpec::Anon {
                pages,
                write_ratio,
                dist,
                accesses,
                compressed_pct,
            } => format!(
                "anon {dist} loads/stores ({:.0}% stores), {} MiB, {accesses} accesses{}",
                write_ratio * 100.0,
                pages * 4 / 1024,
                compressed_suffix(*compressed_pct)
            ),
            WorkloadSpec::Fio {
                dist,
                file_pages,
                accesses,
                write_ratio,
                sequential,
                iodepth,
                fadvise_hint,
            } => {
                let pattern = if *sequential {
                    "rw sequential".to_string()
                } else {
                    format!("randrw {dist}")
                };
                let depth = if *iodepth > 1 {
                    format!(", iodepth {iodepth}")
                } else {
                    String::new()
                };
                let hint = match fadvise_hint.as_str() {
                    "1" => String::new(),
                    h => format!(", fadvise_hint={h}"),
                };
                format!(
                    "fio {pattern} ({:.0}% writes), {} MiB file, {accesses} I/Os{depth}{hint}",
                    write_ratio * 100.0,
                    file_pages * 4 / 1024
                )
            }
            WorkloadSpec::Ycsb {
                workload,
                records,
                operations,
                threadcount,
                properties,
            } => {
                let clients = if *threadcount > 1 {
                    format!(", {threadcount} clients sharing the table")
                } else {
                    String::new()
                };
                let props = if properties.is_empty() {
                    String::new()
                } else {
                    let kv: Vec<String> = properties.iter().map(|(k, v)| format!("{k}={}", v.trim())).collect();
                    format!(" ({})", kv.join(", "))
                };
                let bytes = ycsb_workload(workload, properties).map_or(1000, |w| w.record_bytes());
                format!("YCSB {workload}{props}, {records} records of {bytes} B, {operations} operations{clients}")
            }
            WorkloadSpec::Memtier {
                keys,
                value_bytes,
                pattern,
                requests,
                ..
            } => {
                format!("memtier {pattern}, {keys} keys x {value_bytes} B in anon memory, {requests} GETs")
            }
            WorkloadSpec::Build {
                processes_per_job,
                header_pages,
                source_pages_per_process,
                anon_pages_per_process,
                object_pages_per_process,
            } => format!(
                "kernel build, {processes_per_job} processes per job (headers {header_pages} p shared; per process: \
                 source {source_pages_per_process} p, anon {anon_pages_per_process} p, object {object_pages_per_process} p)"
            ),
            WorkloadSpec::Oltp {
                buffer_pool_pages,
                warehouses,
                wal_pages,
                transactions,
            } => format!(
                "OLTP, {} MiB buffer pool over {warehouses} warehouses, {} MiB WAL, {transactions} transactions",
                buffer_pool_pages * 4 / 1024,
                wal_pages * 4 / 1024
            ),
            WorkloadSpec::Apps {
                apps,
                pages_per_app,
                foreground_accesses,
                switches,
            } => format!(
                "{apps} apps x {} MiB anon, {foreground_accesses} foreground accesses, {switches} switches",
                pages_per_app * 4 / 1024
            ),
            WorkloadSpec::Sort {
                heap_pages,
                input_pages,
                shuffle_pages,
                sort_accesses,
            } => format!(
                "sort: {} MiB heap, {} MiB input read once, {} MiB shuffle written and read back, {sort_accesses} heap accesses",
                heap_pages * 4 / 1024,
                input_pages * 4 / 1024,
                shuffle_pages * 4 / 1024
            ),
            WorkloadSpec::Mix { parts } => parts
                .iter()
                .map(|p| format!("{} x [{}]", p.jobs, p.workload.describe()))
                .collect::<Vec<_>>()
                .join(" + "),
            WorkloadSpec::Trace { path, access, .. } => format!(
                "trace {}{}",
                path.file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                match access {
                    TraceAccess::File => String::new(),
                    a => format!(" as {}", a.name()),
                }
            ),
        }
    }
}

/// A workload bound to a machine: the stream of steps.
pub struct Stream {
    kind: StreamKind,
    /// Number of distinct page keys.
    pub nr_keys: u32,
    /// Steps still to come (including warm-up).
    pub len: u64,
    done: u64,
    failure: StreamFailure,
    /// Keys renumbered densely (see [`Stream::with_dense_keys`]).
    dense: Option<Box<DenseKeys>>,
    /// Think time after each page operation ([`MixPart::think_ns`]; 0: none), and whether it
    /// is due now.
    think_ns: u64,
    think_due: bool,
    last_task: Option<(u32, u32)>,
}

/// Page keys renumbered `0, 1, 2, ...` in order of first appearance, through a sparse table
/// indexed by key (two array reads a step, no hashing), so that the arrays of a reference cache
/// follow the pages touched, not the key space.
#[derive(Default)]
struct DenseKeys {
    /// Dense id + 1 of each key seen (0: not seen).
    ids: crate::mm::pagecache::Radix<u32>,
    next: u32,
}

impl DenseKeys {
    #[inline]
    fn map(&mut self, key: u32) -> u32 {
        if key == NO_KEY {
            return key;
        }
        match self.ids.get(key as u64) {
            0 => {
                self.next += 1;
                self.ids.set(key as u64, self.next);
                self.next - 1
            }
            id => id - 1,
        }
    }
}

enum StreamKind {
    FileRead {
        task: u32,
        files: Vec<u32>,
        file_pages: u64,
        sampler: Box<Sampler>,
    },
    Anon {
        task: u32,
        base: u32,
        pages: u64,
        write_ratio: f64,
        sampler: Box<Sampler>,
        rng: Box<rand::rngs::StdRng>,
        populate: u64,
    },
    Trace {
        task: u32,
        file: u32,
        /// The dense page ids, read from the spilled trace a chunk at a time.
        pages: Box<lrugen_trace::IdCursor>,
        /// The trace file (for the message when its temporary copy cannot be read).
        path: PathBuf,
    },
    /// A trace as typed references ([`trace_ops`]).
    TraceOps {
        task: u32,
        /// First page of the anon region.
        anon_vpn: u32,
        /// The file of its file pages.
        file: u32,
        /// First page of the file's mapping (mmap, exec).
        file_vpn: u32,
        file_pages: trace_ops::FilePages,
        /// Distinct anon pages (file pages' keys follow them).
        nr_anon: u32,
        refs: Box<lrugen_trace::IdCursor>,
        path: PathBuf,
    },
    Fio {
        task: u32,
        file: u32,
        gen: Box<gen::fio::FioGen>,
        rng: Box<rand::rngs::StdRng>,
        write_ratio: f64,
        /// Sequential jobs: the next block and the step between this task's blocks.
        seq: Option<(u64, u64)>,
        file_pages: u64,
    },
    Ycsb {
        task: u32,
        file: u32,
        gen: Box<gen::ycsb::YcsbGen>,
        remaining: u64,
        pending: std::collections::VecDeque<(Op, u32)>,
        /// YCSB's name of the operation the pending page operations belong to.
        kind: &'static str,
        /// The store's own cache (`cache_size`), shared by the run's clients.
        store: Option<store::SharedStore>,
    },
    Memtier {
        task: u32,
        base: u32,
        value_bytes: u64,
        populate_pages: u64,
        populated: u64,
        gen: Box<gen::memtier::MemtierGen>,
        remaining: u64,
        /// GET requests in all.
        requests: u64,
        pending: std::collections::VecDeque<(Op, u32)>,
    },
    /// Steps generated a batch at a time (one build process, one transaction, one foreground
    /// period) by `refill`, which leaves `pending` empty when the workload is over.
    Script {
        pending: std::collections::VecDeque<Step>,
        refill: Box<Refill>,
    },
}

type Refill = dyn FnMut(&mut std::collections::VecDeque<Step>) + Send;

/// A measured step.
fn st(op: Op, key: u32) -> Step {
    Step::new(op, key, true)
}

/// The key of a step that touches no page ([`Op::Mmap`], [`Op::Munmap`], [`Op::Madvise`],
/// [`Op::Fork`] in streams that have them): the reference replays (LRU, OPT) skip it.
pub const NO_KEY: u32 = u32::MAX;

/// An unmeasured system call that names no page.
fn syscall(op: Op) -> Step {
    Step::new(op, NO_KEY, false)
}

/// A step that is not measured (warm-up, exit, think time).
fn unmeasured(op: Op, key: u32) -> Step {
    Step::new(op, key, false)
}

/// The pages `[first, last]` holding bytes `[off, off + len)`.
fn page_span(off: u64, len: u64) -> (u64, u64) {
    (off / 4096, (off + len.max(1) - 1) / 4096)
}

/// Errors setting up a workload (bad trace, bad parameters).
#[derive(Debug)]
pub struct WorkloadError(pub String);

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WorkloadError {}

/// Whether a trace is replayed as buffered reads (the default, left out when serialized).
/// The store's own cache of `cache_bytes` (a YCSB workload's `cache_size`,
/// [`gen::ycsb::YcsbWorkload::cache_bytes`]) in front of a table of `table_pages` pages, mapped as
/// anonymous memory in the store's address space `task` of `m`; `None` for no cache (0 bytes).
pub fn ycsb_store(
    cache_bytes: u64,
    table_pages: u64,
    m: &mut crate::mm::Machine,
    task: u32,
) -> Result<Option<store::SharedStore>, WorkloadError> {
    let slots = cache_bytes / 4096;
    if slots == 0 {
        return Ok(None);
    }
    if slots + table_pages > u64::from(u32::MAX / 2) {
        return Err(WorkloadError(format!(
            "ycsb cache_size: {slots} pages beside a table of {table_pages} pages is out of range"
        )));
    }
    let base = m.mmap(task, slots as u32, vmf::WRITE, None);
    Ok(Some(std::sync::Arc::new(std::sync::Mutex::new(
        store::StoreCache::new(slots as u32, base, table_pages),
    ))))
}

/// Pages of a YCSB table of `records` records with room for `operations` inserts.
pub fn ycsb_table_pages(records: u64, operations: u64, record_bytes: u64) -> u64 {
    (records + operations) * record_bytes / 4096 + 1
}

fn is_one(v: &u32) -> bool {
    *v == 1
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn fio_default_fadvise() -> String {
    "1".into()
}

fn is_fio_default_fadvise(v: &String) -> bool {
    v == "1"
}

/// The file advice of fio's `fadvise_hint` for a job with `sequential` offsets or random ones.
pub fn fio_advice(hint: &str, sequential: bool) -> Result<Advice, WorkloadError> {
    Ok(match hint {
        "0" | "normal" => Advice::Normal,
        "1" if sequential => Advice::Sequential,
        "1" | "random" => Advice::Random,
        "sequential" => Advice::Sequential,
        _ => {
            return Err(WorkloadError(format!(
                "fio fadvise_hint '{hint}': expected 0, 1, normal, random or sequential"
            )))
        }
    })
}

fn is_file_access(a: &TraceAccess) -> bool {
    *a == TraceAccess::File
}

/// (De)serializing a trace format by its name (`arc`, `oracleGeneral`, …).
mod trace_format {
    use lrugen_trace::TraceFormat;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(f: &Option<TraceFormat>, s: S) -> Result<S::Ok, S::Error> {
        match f {
            Some(f) => s.serialize_str(&f.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TraceFormat>, D::Error> {
        let name: Option<String> = Option::deserialize(d)?;
        name.map(|n| n.parse().map_err(serde::de::Error::custom)).transpose()
    }
}

/// A trace read once and spilled to disk as dense page ids (an unnamed temporary file, read back
/// a chunk at a time by each run), shared between the runs of a comparison: cloning shares the
/// file. Memory does not grow with the trace's length (see `docs/memory.md`).
pub type LoadedTrace = lrugen_trace::SpilledTrace;

/// Read a trace (in the format its name or first bytes tell) into dense page ids on disk.
pub fn load_trace(path: &std::path::Path) -> Result<LoadedTrace, WorkloadError> {
    load_trace_as(path, None)
}

/// [`load_trace`] of a trace in `format` (`None`: told by the file's name or first bytes). The
/// whole trace is read and checked here: a malformed line is reported (file and line) before any
/// run starts.
pub fn load_trace_as(
    path: &std::path::Path,
    format: Option<lrugen_trace::TraceFormat>,
) -> Result<LoadedTrace, WorkloadError> {
    let t = lrugen_trace::spill_dense(path, format).map_err(|e| WorkloadError(e.to_string()))?;
    if t.pages.is_empty() {
        return Err(WorkloadError(format!("{}: the trace holds no request", path.display())));
    }
    let told = lrugen_trace::open(path, format)
        .map_err(|e| WorkloadError(e.to_string()))?
        .format();
    if told == lrugen_trace::TraceFormat::Lackey {
        // its records are loads, stores and instruction fetches: buffered file reads would be a
        // silent reinterpretation
        return Err(WorkloadError(format!(
            "{}: a valgrind lackey trace holds memory loads, stores and instruction fetches, which \
             buffered file reads (--access file, the default) cannot replay; expected --access anon \
             (loads and stores) or --access mixed (fetches too, as an executable file mapping)",
            path.display()
        )));
    }
    Ok(t)
}

/// Where a stream reports that it could not go on (a trace stream whose temporary file could not
/// be read back): the stream then ends early, and the run that replayed it fails with this
/// message ([`Stream::failure`]).
pub type StreamFailure = std::sync::Arc<std::sync::OnceLock<String>>;

impl Stream {
    /// Set the workload up on `m` inside `memcg` and return its stream. A trace must have been
    /// loaded with [`load_trace`] (pass it as `trace`).
    pub fn new(
        spec: &WorkloadSpec,
        m: &mut Machine,
        memcg: MemcgId,
        seed: u64,
        trace: Option<LoadedTrace>,
    ) -> Result<Stream, WorkloadError> {
        let task = m.create_mm(memcg);
        match spec {
            WorkloadSpec::FileRead {
                files,
                file_pages,
                dist,
                accesses,
            } => {
                spec.validate()?;
                let total = *files as u64 * file_pages;
                let ids = (0..*files)
                    .map(|i| m.create_file(&format!("file{i}"), *file_pages, Advice::Normal))
                    .collect();
                Ok(Stream {
                    kind: StreamKind::FileRead {
                        task,
                        files: ids,
                        file_pages: *file_pages,
                        sampler: Box::new(Sampler::new(*dist, total, seed)),
                    },
                    nr_keys: total as u32,
                    len: *accesses,
                    done: 0,
                    failure: Default::default(),
                    dense: None,
                    think_ns: 0,
                    think_due: false,
                    last_task: None,
                })
            }
            WorkloadSpec::Anon {
                pages,
                write_ratio,
                dist,
                accesses,
                compressed_pct,
            } => {
                spec.validate()?;
                let base = m.mmap(task, *pages as u32, vmf::WRITE, None);
                set_compressed_pct(m, task, *compressed_pct);
                use rand::SeedableRng;
                Ok(Stream {
                    kind: StreamKind::Anon {
                        task,
                        base,
                        pages: *pages,
                        write_ratio: *write_ratio,
                        sampler: Box::new(Sampler::new(*dist, *pages, seed)),
                        rng: Box::new(rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed)),
                        populate: *pages,
                    },
                    nr_keys: *pages as u32,
                    len: *pages + *accesses,
                    done: 0,
                    failure: Default::default(),
                    dense: None,
                    think_ns: 0,
                    think_due: false,
                    last_task: None,
                })
            }
            WorkloadSpec::Trace { path, format, access } if *access != TraceAccess::File => {
                let t = trace_ops::load_trace_ops(path, *format, *access)?;
                let name = path
                    .file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "trace".into());
                let anon_vpn = if t.nr_anon > 0 {
                    m.mmap(task, t.nr_anon, vmf::WRITE, None)
                } else {
                    0
                };
                let (file, file_vpn) = if t.nr_file > 0 {
                    // its pages are numbered in order of first use, not by their place in the
                    // traced file: neither read-ahead nor mmap read-around means anything
                    let file = m.create_file(&name, t.nr_file as u64, Advice::Random);
                    m.files[file as usize].ra.ra_pages = 0;
                    let vpn = match t.file_pages {
                        trace_ops::FilePages::Io => 0,
                        trace_ops::FilePages::Mapped => {
                            let flags = if t.writes { vmf::WRITE } else { 0 };
                            m.mmap(task, t.nr_file, flags, Some((file, 0)))
                        }
                        trace_ops::FilePages::Exec => m.mmap(task, t.nr_file, vmf::EXEC, Some((file, 0))),
                    };
                    (file, vpn)
                } else {
                    (0, 0)
                };
                Ok(Stream {
                    len: t.refs.len(),
                    kind: StreamKind::TraceOps {
                        task,
                        anon_vpn,
                        file,
                        file_vpn,
                        file_pages: t.file_pages,
                        nr_anon: t.nr_anon,
                        refs: Box::new(t.cursor()),
                        path: path.clone(),
                    },
                    nr_keys: t.nr_anon + t.nr_file,
                    done: 0,
                    failure: Default::default(),
                    dense: None,
                    think_ns: 0,
                    think_due: false,
                    last_task: None,
                })
            }
            WorkloadSpec::Trace { path, format, .. } => {
                let t = match trace {
                    Some(t) => t,
                    None => load_trace_as(path, *format)?,
                };
                let nr_unique = t.nr_unique;
                let name = path
                    .file_name()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "trace".into());
                let file = m.create_file(&name, nr_unique as u64, Advice::Random);
                Ok(Stream {
                    len: t.nr_requests(),
                    kind: StreamKind::Trace {
                        task,
                        file,
                        pages: Box::new(t.pages.cursor(0)),
                        path: path.clone(),
                    },
                    nr_keys: nr_unique,
                    done: 0,
                    failure: Default::default(),
                    dense: None,
                    think_ns: 0,
                    think_due: false,
                    last_task: None,
                })
            }
            WorkloadSpec::Fio {
                file_pages,
                accesses,
                sequential,
                fadvise_hint,
                ..
            } => {
                spec.validate()?;
                let file = m.create_file("fio.0.0", *file_pages, fio_advice(fadvise_hint, *sequential)?);
                Self::fio_slot(spec, seed, task, file, *accesses, 0, 1)
            }
            WorkloadSpec::Ycsb {
                workload,
                records,
                operations,
                properties,
                ..
            } => {
                spec.validate()?;
                let w = ycsb_workload(workload, properties)?;
                let pages = ycsb_table_pages(*records, *operations, w.record_bytes());
                let file = m.create_file("usertable", pages, Advice::Normal);
                let store = ycsb_store(w.cache_bytes, pages, m, task)?;
                Self::ycsb_client(spec, seed, task, file, *operations, store)
            }
            WorkloadSpec::Memtier {
                keys,
                value_bytes,
                pattern,
                requests,
                compressed_pct,
            } => {
                spec.validate()?;
                let pat: gen::memtier::KeyPattern = parse_gen(pattern, "memtier pattern")?;
                let g = gen::memtier::MemtierGen::new(pat, 0, keys - 1, 0, 1, seed).map_err(|e| WorkloadError(e.0))?;
                let pages = (keys * value_bytes).div_ceil(4096).max(1);
                let base = m.mmap(task, pages as u32, vmf::WRITE, None);
                set_compressed_pct(m, task, *compressed_pct);
                Ok(Stream {
                    kind: StreamKind::Memtier {
                        task,
                        base,
                        value_bytes: *value_bytes,
                        populate_pages: pages,
                        populated: 0,
                        gen: Box::new(g),
                        remaining: *requests,
                        requests: *requests,
                        pending: Default::default(),
                    },
                    nr_keys: pages as u32,
                    len: pages + requests,
                    done: 0,
                    failure: Default::default(),
                    dense: None,
                    think_ns: 0,
                    think_due: false,
                    last_task: None,
                })
            }
            WorkloadSpec::Build { .. }
            | WorkloadSpec::Oltp { .. }
            | WorkloadSpec::Apps { .. }
            | WorkloadSpec::Sort { .. } => {
                spec.validate()?;
                let (len, nr_keys, refill) = script(spec, m, memcg, task, seed);
                Ok(Stream {
                    kind: StreamKind::Script {
                        pending: Default::default(),
                        refill,
                    },
                    nr_keys,
                    len,
                    done: 0,
                    failure: Default::default(),
                    dense: None,
                    think_ns: 0,
                    think_due: false,
                    last_task: None,
                })
            }
            WorkloadSpec::Mix { .. } => Err(WorkloadError(
                "a mix runs its parts as separate tasks: build one stream per part (sim::run does)".into(),
            )),
        }
    }

    /// A stream of steps already made (e.g. an op file replayed on the model, see `lrugen-kernel`):
    /// the caller has set the machine up so that every step's task, file and page exist, and
    /// `nr_keys` bounds the steps' keys.
    pub fn from_steps(steps: Vec<Step>, nr_keys: u32) -> Stream {
        let len = steps.len() as u64;
        Stream {
            kind: StreamKind::Script {
                pending: steps.into(),
                refill: Box::new(|_| {}),
            },
            nr_keys,
            len,
            done: 0,
            failure: Default::default(),
            dense: None,
            think_ns: 0,
            think_due: false,
            last_task: None,
        }
    }

    /// Steps issued so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// Where this stream says why it ended early, if it does (see [`StreamFailure`]): take it
    /// before handing the stream to a run, and look at it after.
    pub fn failure(&self) -> StreamFailure {
        std::sync::Arc::clone(&self.failure)
    }

    /// In-flight I/O `slot` of `slots` of the fio job `spec` (a [`WorkloadSpec::Fio`]) on its file
    /// `file`, issuing `accesses` I/Os as task `task`: random offsets from its own generator
    /// seeded with `seed`, or a sequential job's blocks `slot`, `slot + slots`, ….
    pub fn fio_slot(
        spec: &WorkloadSpec,
        seed: u64,
        task: u32,
        file: u32,
        accesses: u64,
        slot: u32,
        slots: u32,
    ) -> Result<Stream, WorkloadError> {
        let WorkloadSpec::Fio {
            dist,
            file_pages,
            write_ratio,
            sequential,
            ..
        } = spec
        else {
            return Err(WorkloadError("not a fio workload".into()));
        };
        let d: gen::fio::FioDist = parse_gen(dist, "fio dist")?;
        let g = gen::fio::FioGen::new(&d, *file_pages, seed).map_err(|e| WorkloadError(e.0))?;
        use rand::SeedableRng;
        Ok(Stream {
            kind: StreamKind::Fio {
                task,
                file,
                gen: Box::new(g),
                rng: Box::new(rand::rngs::StdRng::seed_from_u64(seed ^ 0xf10)),
                write_ratio: *write_ratio,
                seq: sequential.then_some((u64::from(slot) % file_pages, u64::from(slots.max(1)))),
                file_pages: *file_pages,
            },
            nr_keys: *file_pages as u32,
            len: accesses,
            done: 0,
            failure: Default::default(),
            dense: None,
            think_ns: 0,
            think_due: false,
            last_task: None,
        })
    }

    /// One YCSB client of `spec` (a [`WorkloadSpec::Ycsb`]) on the table `file`, issuing
    /// `operations` operations of its own key chooser seeded with `seed`, as task `task`, through
    /// the store's cache `store` when it has one ([`ycsb_store`]; `task` is then the store's
    /// address space, shared by all clients).
    pub fn ycsb_client(
        spec: &WorkloadSpec,
        seed: u64,
        task: u32,
        file: u32,
        operations: u64,
        store: Option<store::SharedStore>,
    ) -> Result<Stream, WorkloadError> {
        let WorkloadSpec::Ycsb {
            workload,
            records,
            operations: total,
            properties,
            ..
        } = spec
        else {
            return Err(WorkloadError("not a YCSB workload".into()));
        };
        let w = ycsb_workload(workload, properties)?;
        let g = gen::ycsb::YcsbGen::new(&w, *records, seed).map_err(|e| WorkloadError(e.0))?;
        let pages = ycsb_table_pages(*records, *total, w.record_bytes());
        Ok(Stream {
            kind: StreamKind::Ycsb {
                task,
                file,
                gen: Box::new(g),
                remaining: operations,
                pending: Default::default(),
                kind: "",
                // the cache's pages are keys after the table's
                store: store.clone(),
            },
            nr_keys: (pages + store.map_or(0, |c| u64::from(c.lock().expect("store").slots()))) as u32,
            len: operations,
            done: 0,
            failure: Default::default(),
            dense: None,
            think_ns: 0,
            think_due: false,
            last_task: None,
        })
    }

    /// The dense page ids of a trace stream not yet started, as spilled (its every step is a
    /// measured read of the next id): lets OPT read them on disk without copying them. `None` for
    /// other streams and once a step was taken.
    pub fn trace_pages(&self) -> Option<&lrugen_trace::IdFile> {
        match &self.kind {
            StreamKind::Trace { pages, .. } if self.done == 0 && pages.index() == 0 => Some(pages.file()),
            _ => None,
        }
    }

    /// Ends the stream, recording why.
    #[cold]
    /// For a trace replayed as file reads whose dense ids are the keys (every step measured):
    /// hands the keys to `f` a chunk at a time, as little-endian `u32`s
    /// ([`lrugen_trace::le_ids`]), so that a reference cache's replay loop reads them in place
    /// instead of stepping the stream; returns `true` when done. Any other stream returns `false`
    /// with nothing read (step it instead). A chunk that cannot be read back ends the stream with
    /// its failure set, as stepping it would.
    pub fn trace_key_chunks(&mut self, mut f: impl FnMut(&[u8])) -> bool {
        if self.dense.is_some() {
            return false;
        }
        let StreamKind::Trace { pages, path, .. } = &mut self.kind else {
            return false;
        };
        let why = loop {
            match pages.read_chunk() {
                Ok([]) => return true,
                Ok(chunk) => {
                    self.done += (chunk.len() / 4) as u64;
                    f(chunk);
                }
                Err(e) => {
                    break format!(
                        "{}: reading back the temporary copy of its page ids: {e}",
                        path.display()
                    )
                }
            }
        };
        self.fail(why);
        true
    }

    fn fail(&mut self, why: String) -> Option<Step> {
        let _ = self.failure.set(why);
        self.len = self.done;
        None
    }

    /// The benchmark request the step just yielded belongs to, for workloads whose requests span
    /// several page operations: a YCSB operation (`READ`, `UPDATE`, `INSERT`, `SCAN`,
    /// `READ-MODIFY-WRITE`) or a memtier `GET` of a value over several pages. `None` for the other
    /// workloads, whose every operation is a request of its own (as an fio I/O is), and for
    /// warm-up steps. Call it right after `next`.
    pub fn request(&self) -> Option<Request> {
        match &self.kind {
            StreamKind::Ycsb { pending, kind, .. } => Some(Request {
                kind,
                last: pending.is_empty(),
            }),
            StreamKind::Memtier {
                populate_pages,
                populated,
                pending,
                remaining,
                requests,
                ..
            } if *populated == *populate_pages && (*remaining < *requests || !pending.is_empty()) => Some(Request {
                kind: "GET",
                last: pending.is_empty(),
            }),
            _ => None,
        }
    }
}

/// The request a step belongs to ([`Stream::request`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The benchmark's name for its kind.
    pub kind: &'static str,
    /// This step completes it.
    pub last: bool,
}

/// YCSB's name of an operation, as its reports print it.
fn ycsb_name(op: &gen::ycsb::YcsbOp) -> &'static str {
    match op {
        gen::ycsb::YcsbOp::Read(_) => "READ",
        gen::ycsb::YcsbOp::Update(_) => "UPDATE",
        gen::ycsb::YcsbOp::Insert(_) => "INSERT",
        gen::ycsb::YcsbOp::Scan(..) => "SCAN",
        gen::ycsb::YcsbOp::ReadModifyWrite(_) => "READ-MODIFY-WRITE",
    }
}

impl Stream {
    /// The same stream with its page keys renumbered densely in order of first appearance (the
    /// operations keep their pages): what the reference caches (LRU, OPT), whose arrays are
    /// indexed by key, replay, so that their memory follows the pages touched. Their results do
    /// not depend on how pages are numbered. `nr_keys` stays an upper bound.
    pub fn with_dense_keys(mut self) -> Stream {
        self.dense = Some(Box::default());
        self
    }
}

impl Iterator for Stream {
    type Item = Step;

    #[inline]
    fn next(&mut self) -> Option<Step> {
        if self.think_due {
            self.think_due = false;
            return self.last_task.map(|(task, key)| {
                Step::new(
                    Op::Think {
                        task,
                        ns: self.think_ns,
                    },
                    key,
                    false,
                )
            });
        }
        let s = self.next_step();
        let s = match (&mut self.dense, s) {
            (Some(d), Some(mut s)) => {
                s.key = d.map(s.key);
                Some(s)
            }
            (_, s) => s,
        };
        if self.think_ns > 0 {
            if let Some(st) = &s {
                self.think_due = true;
                self.last_task = Some((st.op.task(), st.key));
            }
        }
        s
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.kind {
            StreamKind::Ycsb { .. } | StreamKind::Memtier { .. } => (0, None),
            _ => {
                let r = self.len.saturating_sub(self.done) as usize;
                if self.think_ns > 0 {
                    // a think step after each
                    (r, r.checked_mul(2).map(|n| n + usize::from(self.think_due)))
                } else {
                    (r, Some(r))
                }
            }
        }
    }
}

impl Stream {
    /// Think for `ns` after each page operation ([`MixPart::think_ns`]).
    pub fn set_think(&mut self, ns: u64) {
        self.think_ns = ns;
    }

    #[inline]
    fn next_step(&mut self) -> Option<Step> {
        // workloads whose logical operations expand into several page operations
        match &mut self.kind {
            StreamKind::Ycsb {
                task,
                file,
                gen,
                remaining,
                pending,
                kind,
                store,
            } => {
                if pending.is_empty() {
                    if *remaining == 0 {
                        return None;
                    }
                    *remaining -= 1;
                    let (t, f) = (*task, *file);
                    let mut store = store.as_ref().map(|c| c.lock().expect("the store's cache"));
                    let op = gen.next();
                    *kind = ycsb_name(&op);
                    // the table holds record k at k × recordsize; a read or update touches the
                    // pages of the bytes it transfers: the whole record, or one field of it
                    let w = gen.workload();
                    let (rb, fl, read_all, write_all) = (
                        w.record_bytes(),
                        u64::from(w.field_length),
                        w.read_all_fields,
                        w.write_all_fields,
                    );
                    let mut span = |k: u64, all: bool| {
                        if all {
                            page_span(k * rb, rb)
                        } else {
                            page_span(k * rb + u64::from(gen.next_field()) * fl, fl)
                        }
                    };
                    let mut push = |(a, b): (u64, u64), write: bool| {
                        for p in a..=b {
                            if let Some(c) = store.as_deref_mut() {
                                c.access(t, f, p, write, pending);
                                continue;
                            }
                            let op = if write {
                                Op::Write {
                                    task: t,
                                    file: f,
                                    index: p,
                                }
                            } else {
                                Op::Read {
                                    task: t,
                                    file: f,
                                    index: p,
                                }
                            };
                            pending.push_back((op, p as u32));
                        }
                    };
                    match op {
                        gen::ycsb::YcsbOp::Read(k) => push(span(k, read_all), false),
                        gen::ycsb::YcsbOp::Update(k) => push(span(k, write_all), true),
                        // an insert writes every field
                        gen::ycsb::YcsbOp::Insert(k) => push(span(k, true), true),
                        gen::ycsb::YcsbOp::ReadModifyWrite(k) => {
                            push(span(k, read_all), false);
                            push(span(k, write_all), true);
                        }
                        // a scan returns the records that exist from key k on, at most n: it stops
                        // at the latest key, as the store's cursor stops at the table's end
                        gen::ycsb::YcsbOp::Scan(k, n) => {
                            let n = u64::from(n).min(gen.latest() + 1 - k);
                            push(page_span(k * rb, n * rb), false)
                        }
                    }
                }
                self.done += 1;
                let (op, key) = pending.pop_front()?;
                return Some(Step::new(op, key, true));
            }
            StreamKind::Memtier {
                task,
                base,
                value_bytes,
                populate_pages,
                populated,
                gen,
                remaining,
                pending,
                ..
            } => {
                if *populated < *populate_pages {
                    let p = *populated;
                    *populated += 1;
                    self.done += 1;
                    return Some(Step::new(
                        Op::Store {
                            task: *task,
                            vpn: *base + p as u32,
                        },
                        p as u32,
                        false,
                    ));
                }
                if pending.is_empty() {
                    if *remaining == 0 {
                        return None;
                    }
                    *remaining -= 1;
                    let k = gen.next_key();
                    let (a, b) = page_span(k * *value_bytes, *value_bytes);
                    for p in a..=b {
                        pending.push_back((
                            Op::Load {
                                task: *task,
                                vpn: *base + p as u32,
                            },
                            p as u32,
                        ));
                    }
                }
                self.done += 1;
                let (op, key) = pending.pop_front()?;
                return Some(Step::new(op, key, true));
            }
            StreamKind::Script { pending, refill } => {
                if pending.is_empty() {
                    refill(pending);
                }
                let s = pending.pop_front()?;
                self.done += 1;
                return Some(s);
            }
            StreamKind::Trace {
                task,
                file,
                pages,
                path,
            } => {
                let why = match pages.next_id() {
                    Ok(Some(key)) => {
                        self.done += 1;
                        return Some(Step::new(
                            Op::Read {
                                task: *task,
                                file: *file,
                                index: key as u64,
                            },
                            key,
                            true,
                        ));
                    }
                    Ok(None) => return None,
                    Err(e) => format!(
                        "{}: reading back the temporary copy of its page ids: {e}",
                        path.display()
                    ),
                };
                return self.fail(why);
            }
            StreamKind::TraceOps {
                task,
                anon_vpn,
                file,
                file_vpn,
                file_pages,
                nr_anon,
                refs,
                path,
            } => {
                let why = match refs.next_id() {
                    Ok(Some(v)) => {
                        self.done += 1;
                        let id = v & trace_ops::MAX_PAGES;
                        let write = v & trace_ops::WRITE_BIT != 0;
                        let task = *task;
                        let (op, key) = if v & trace_ops::FILE_BIT == 0 {
                            let vpn = *anon_vpn + id;
                            let op = if write {
                                Op::Store { task, vpn }
                            } else {
                                Op::Load { task, vpn }
                            };
                            (op, id)
                        } else {
                            let index = u64::from(id);
                            let op = match (*file_pages, write) {
                                (trace_ops::FilePages::Io, false) => Op::Read {
                                    task,
                                    file: *file,
                                    index,
                                },
                                (trace_ops::FilePages::Io, true) => Op::Write {
                                    task,
                                    file: *file,
                                    index,
                                },
                                (_, true) => Op::Store {
                                    task,
                                    vpn: *file_vpn + id,
                                },
                                (_, false) => Op::Load {
                                    task,
                                    vpn: *file_vpn + id,
                                },
                            };
                            (op, *nr_anon + id)
                        };
                        return Some(Step::new(op, key, true));
                    }
                    Ok(None) => return None,
                    Err(e) => format!(
                        "{}: reading back the temporary copy of its references: {e}",
                        path.display()
                    ),
                };
                return self.fail(why);
            }
            _ => {}
        }
        if self.done >= self.len {
            return None;
        }
        let i = self.done;
        self.done += 1;
        Some(match &mut self.kind {
            StreamKind::FileRead {
                task,
                files,
                file_pages,
                sampler,
            } => {
                let key = sampler.next_key();
                let file = files[(key / *file_pages) as usize];
                Step::new(
                    Op::Read {
                        task: *task,
                        file,
                        index: key % *file_pages,
                    },
                    key as u32,
                    true,
                )
            }
            StreamKind::Anon {
                task,
                base,
                pages,
                write_ratio,
                sampler,
                rng,
                populate,
            } => {
                if i < *populate {
                    Step::new(
                        Op::Store {
                            task: *task,
                            vpn: *base + i as u32,
                        },
                        i as u32,
                        false,
                    )
                } else {
                    use rand::RngExt;
                    let key = sampler.next_key() % *pages;
                    let vpn = *base + key as u32;
                    let op = if rng.random::<f64>() < *write_ratio {
                        Op::Store { task: *task, vpn }
                    } else {
                        Op::Load { task: *task, vpn }
                    };
                    Step::new(op, key as u32, true)
                }
            }
            StreamKind::Fio {
                task,
                file,
                gen,
                rng,
                write_ratio,
                seq,
                file_pages,
            } => {
                use rand::RngExt;
                let index = match seq {
                    Some((next, step)) => {
                        let b = *next;
                        *next = (*next + *step) % *file_pages;
                        b
                    }
                    None => gen.next_block(),
                };
                let op = if *write_ratio > 0.0 && rng.random::<f64>() < *write_ratio {
                    Op::Write {
                        task: *task,
                        file: *file,
                        index,
                    }
                } else {
                    Op::Read {
                        task: *task,
                        file: *file,
                        index,
                    }
                };
                Step::new(op, index as u32, true)
            }
            StreamKind::Ycsb { .. }
            | StreamKind::Memtier { .. }
            | StreamKind::Script { .. }
            | StreamKind::Trace { .. }
            | StreamKind::TraceOps { .. } => {
                unreachable!("handled above")
            }
        })
    }
}

/// Set up a scripted workload (build, OLTP, apps) on `m`: its length in steps, its number of
/// page keys and its generator. `task` is the address space already created for the stream.
fn script(spec: &WorkloadSpec, m: &mut Machine, memcg: MemcgId, task: u32, seed: u64) -> (u64, u32, Box<Refill>) {
    use rand::{RngExt, SeedableRng};
    match *spec {
        WorkloadSpec::Build {
            processes_per_job,
            header_pages,
            source_pages_per_process: src,
            anon_pages_per_process: anon,
            object_pages_per_process: obj,
        } => {
            // the headers are one file shared by every job of the build
            let headers = match m
                .files
                .iter()
                .position(|f| f.name == BUILD_HEADER_FILE && f.size == header_pages)
            {
                Some(i) => i as u32,
                None => m.create_file(BUILD_HEADER_FILE, header_pages, Advice::Normal),
            };
            // (child mm, source file, object file) of each process: the mm ids are reserved now
            // and born when make (the stream's task) forks them
            let procs: Vec<(u32, u32, u32)> = (0..processes_per_job)
                .map(|_| {
                    let mm = m.reserve_mm(memcg);
                    let s = m.create_file(&format!("build/src.{mm}.c"), src, Advice::Normal);
                    let o = if obj > 0 {
                        m.create_file(&format!("build/obj.{mm}.o"), obj, Advice::Normal)
                    } else {
                        u32::MAX
                    };
                    (mm, s, o)
                })
                .collect();
            // make has no VMA of its own, so each compiler maps its arena at the first mmap page
            let base = crate::mm::vm::MMAP_BASE_VPN;
            let freed = anon / 2;
            let per = src + anon + obj;
            // fork, mmap, reads, stores, loads, munmap, writes, exit
            let per_steps = 1
                + src * (1 + BUILD_HEADER_READS_PER_SOURCE_PAGE)
                + 2 * anon
                + (anon > 0) as u64
                + (freed > 0) as u64
                + obj
                + 1;
            let len = processes_per_job as u64 * per_steps;
            let nr_keys = (header_pages + processes_per_job as u64 * per) as u32;
            let mut hdr = Sampler::new(Dist::Zipf { theta: 0.9 }, header_pages, seed);
            let mut next = 0usize;
            let refill = move |q: &mut std::collections::VecDeque<Step>| {
                let Some(&(mm, s, o)) = procs.get(next) else {
                    return;
                };
                let k0 = header_pages + next as u64 * per;
                next += 1;
                q.push_back(syscall(Op::Fork { task, child: mm }));
                if anon > 0 {
                    q.push_back(syscall(Op::Mmap {
                        task: mm,
                        vpn: base,
                        pages: anon as u32,
                        file: ANON_FILE,
                        pgoff: 0,
                        flags: vmf::WRITE as u8,
                        compressed_pct: 0,
                    }));
                }
                for i in 0..src {
                    q.push_back(st(
                        Op::Read {
                            task: mm,
                            file: s,
                            index: i,
                        },
                        (k0 + i) as u32,
                    ));
                    for _ in 0..BUILD_HEADER_READS_PER_SOURCE_PAGE {
                        let h = hdr.next_key() % header_pages;
                        q.push_back(st(
                            Op::Read {
                                task: mm,
                                file: headers,
                                index: h,
                            },
                            h as u32,
                        ));
                    }
                }
                let ka = k0 + src;
                for j in 0..anon {
                    q.push_back(st(
                        Op::Store {
                            task: mm,
                            vpn: base + j as u32,
                        },
                        (ka + j) as u32,
                    ));
                }
                for j in 0..anon {
                    q.push_back(st(
                        Op::Load {
                            task: mm,
                            vpn: base + j as u32,
                        },
                        (ka + j) as u32,
                    ));
                }
                if freed > 0 {
                    // the compiler returns the upper half of its arena before writing the object
                    q.push_back(syscall(Op::Munmap {
                        task: mm,
                        vpn: base + (anon - freed) as u32,
                        pages: freed as u32,
                    }));
                }
                let ko = ka + anon;
                for j in 0..obj {
                    q.push_back(st(
                        Op::Write {
                            task: mm,
                            file: o,
                            index: j,
                        },
                        (ko + j) as u32,
                    ));
                }
                let last = q.back().map_or(0, |x| x.key);
                q.push_back(unmeasured(Op::Exit { task: mm }, last));
            };
            (len, nr_keys, Box::new(refill))
        }
        WorkloadSpec::Oltp {
            buffer_pool_pages: pool,
            warehouses,
            wal_pages,
            transactions,
        } => {
            let base = m.mmap(task, pool as u32, vmf::WRITE, None);
            let wal = m.create_file("oltp/wal", wal_pages, Advice::Normal);
            let per_wh = pool / warehouses as u64;
            let mut sampler = Sampler::new(Dist::Zipf { theta: 0.99 }, per_wh, seed);
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x0171);
            let len = pool + transactions * (OLTP_PAGES_PER_TXN + 2);
            let nr_keys = (pool + wal_pages) as u32;
            let (mut populated, mut txns, mut wal_next) = (false, 0u64, 0u64);
            let refill = move |q: &mut std::collections::VecDeque<Step>| {
                if !populated {
                    populated = true;
                    for p in 0..pool {
                        q.push_back(unmeasured(
                            Op::Store {
                                task,
                                vpn: base + p as u32,
                            },
                            p as u32,
                        ));
                    }
                    return;
                }
                if txns == transactions {
                    return;
                }
                txns += 1;
                let wh = rng.random_range(0..warehouses as u64);
                for i in 0..OLTP_PAGES_PER_TXN {
                    let p = wh * per_wh + sampler.next_key() % per_wh;
                    let vpn = base + p as u32;
                    let op = if i < OLTP_PAGES_PER_TXN / 2 {
                        Op::Load { task, vpn }
                    } else {
                        Op::Store { task, vpn }
                    };
                    q.push_back(st(op, p as u32));
                }
                let w = wal_next % wal_pages;
                wal_next += 1;
                q.push_back(st(
                    Op::Write {
                        task,
                        file: wal,
                        index: w,
                    },
                    (pool + w) as u32,
                ));
                q.push_back(unmeasured(
                    Op::Think {
                        task,
                        ns: OLTP_THINK_NS,
                    },
                    (pool + w) as u32,
                ));
            };
            (len, nr_keys, Box::new(refill))
        }
        WorkloadSpec::Apps {
            apps,
            pages_per_app,
            foreground_accesses,
            switches,
        } => {
            let procs: Vec<(u32, u32)> = (0..apps)
                .map(|a| {
                    let mm = if a == 0 { task } else { m.create_mm(memcg) };
                    (mm, m.mmap(mm, pages_per_app as u32, vmf::WRITE, None))
                })
                .collect();
            let mut sampler = Sampler::new(Dist::Zipf { theta: 0.9 }, pages_per_app, seed);
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0xa995);
            let len = apps as u64 * pages_per_app + (switches as u64 + 1) * foreground_accesses;
            let nr_keys = (apps as u64 * pages_per_app) as u32;
            let (mut populated, mut period) = (false, 0u64);
            let refill = move |q: &mut std::collections::VecDeque<Step>| {
                if !populated {
                    populated = true;
                    for (a, &(mm, base)) in procs.iter().enumerate() {
                        for p in 0..pages_per_app {
                            q.push_back(unmeasured(
                                Op::Store {
                                    task: mm,
                                    vpn: base + p as u32,
                                },
                                (a as u64 * pages_per_app + p) as u32,
                            ));
                        }
                    }
                    return;
                }
                while period <= switches as u64 && q.is_empty() {
                    let a = (period % apps as u64) as usize;
                    period += 1;
                    let (mm, base) = procs[a];
                    for _ in 0..foreground_accesses {
                        let p = sampler.next_key() % pages_per_app;
                        let vpn = base + p as u32;
                        let op = if rng.random::<f64>() < 0.2 {
                            Op::Store { task: mm, vpn }
                        } else {
                            Op::Load { task: mm, vpn }
                        };
                        q.push_back(st(op, (a as u64 * pages_per_app + p) as u32));
                    }
                }
            };
            (len, nr_keys, Box::new(refill))
        }
        WorkloadSpec::Sort {
            heap_pages: heap,
            input_pages: input,
            shuffle_pages: shuffle,
            sort_accesses,
        } => {
            let base = m.mmap(task, heap as u32, vmf::WRITE, None);
            let fin = m.create_file("sort/input", input, Advice::Normal);
            let fsh = m.create_file("sort/shuffle", shuffle, Advice::Normal);
            let len = heap + input + sort_accesses + 2 * shuffle;
            let nr_keys = (heap + input + shuffle) as u32;
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x5027);
            // phases: 0 populate, 1 read input, 2 sort, 3 write shuffle, 4 read shuffle
            let (mut phase, mut i) = (0u32, 0u64);
            const BATCH: u64 = 256;
            let refill = move |q: &mut std::collections::VecDeque<Step>| loop {
                let n = match phase {
                    0 => heap,
                    1 => input,
                    2 => sort_accesses,
                    3 | 4 => shuffle,
                    _ => return,
                };
                if i >= n {
                    phase += 1;
                    i = 0;
                    continue;
                }
                let end = (i + BATCH).min(n);
                for j in i..end {
                    q.push_back(match phase {
                        0 => unmeasured(
                            Op::Store {
                                task,
                                vpn: base + j as u32,
                            },
                            j as u32,
                        ),
                        1 => st(
                            Op::Read {
                                task,
                                file: fin,
                                index: j,
                            },
                            (heap + j) as u32,
                        ),
                        2 => {
                            let p = rng.random_range(0..heap);
                            let vpn = base + p as u32;
                            let op = if j % 2 == 0 {
                                Op::Load { task, vpn }
                            } else {
                                Op::Store { task, vpn }
                            };
                            st(op, p as u32)
                        }
                        3 => st(
                            Op::Write {
                                task,
                                file: fsh,
                                index: j,
                            },
                            (heap + input + j) as u32,
                        ),
                        _ => st(
                            Op::Read {
                                task,
                                file: fsh,
                                index: j,
                            },
                            (heap + input + j) as u32,
                        ),
                    });
                }
                i = end;
                return;
            };
            (len, nr_keys, Box::new(refill))
        }
        _ => unreachable!("not a scripted workload"),
    }
}

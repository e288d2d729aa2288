// SPDX-License-Identifier: GPL-2.0-only
//! The experiment file: TOML naming the machine, the workload memcg, the workload, the policies
//! and MGLRU profiles, parameter sweeps, repetitions and a base seed. See `docs/experiments.md`
//! for the format; [`Experiment::parse`] for what is checked.

use super::size::parse_size_with_unit;
use super::ExpError;
use crate::mm::node::ZoneType;
use crate::mm::MachineConfig;
use crate::reclaim::mglru::{MglruConfig, Profile};
use crate::sim::{MemcgConfig, PolicyKind};
use crate::workload::dist::Dist;
use crate::workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::{Spanned, Table, Value};

/// Metrics a cell reports (the adapter `runner::metrics_of` fills them); the main metric of an
/// experiment must be one of them.
pub const METRICS: &[&str] = &[
    "hit_ratio",
    "accesses",
    "hits",
    "misses",
    "minor_faults",
    "refaults",
    "pgscan",
    "pgsteal",
    "pgactivate",
    "pgdeactivate",
    "pswpin",
    "pswpout",
    "allocstall",
    "oom_kill",
    "workingset_activate",
    "promotions",
    "iops",
    "bw_mib_s",
    "clat_mean_us",
    "clat_p50_us",
    "clat_p90_us",
    "clat_p99_us",
    "clat_p99_9_us",
    "clat_max_us",
    "req_p50_us",
    "req_p90_us",
    "req_p99_us",
    "req_p99_9_us",
    "req_max_us",
    "direct_reclaim_ms",
    "kswapd_ms",
    "lru_lock_task_ms",
    "lru_lock_direct_ms",
    "lru_lock_kswapd_ms",
    "ops_per_sec",
    "virtual_s",
];

/// Metrics of a machine with memory tiers (`[machine.tiers]`): its cells report them
/// (`runner::metrics_of`) and an experiment may choose one as its metric; docs/memory-tiers.md.
pub const TIER_METRICS: &[&str] = &[
    "numa_hint_faults",
    "numa_pages_migrated",
    "numa_pte_updates",
    "pgpromote_success",
    "pgpromote_candidate",
    "pgdemote_kswapd",
    "pgdemote_direct",
    "pgscan_kswapd",
    "pgsteal_anon",
    "pgrefill",
];

/// Default number of samples of a run's state over time.
pub const DEFAULT_SAMPLES: u64 = 100;

/// A size in pages: a TOML integer (pages) or a string with a unit (`"64M"`, `"1000p"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size(pub u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Size;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a size: an integer number of pages, or a string with a unit such as \"64M\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Size, E> {
                Ok(Size(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Size, E> {
                u64::try_from(v)
                    .map(Size)
                    .map_err(|_| E::custom(format!("size {v} is negative")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Size, E> {
                parse_size_with_unit(v).map(Size).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// One zone of a node in `machine.nodes`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawZone {
    zone: ZoneType,
    size: Size,
}

/// `[machine]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMachine {
    memory: Option<Size>,
    swap: Option<Size>,
    swappiness: Option<u32>,
    /// `vm.page-cluster` (0..=31).
    page_cluster: Option<u32>,
    /// `transparent_hugepage`: `always`, `madvise` or `never` (docs/thp.md).
    thp: Option<crate::mm::thp::Thp>,
    nodes: Option<Vec<Vec<RawZone>>>,
    min_free_kbytes: Option<u64>,
    watermark_scale_factor: Option<u64>,
    ra_pages: Option<u64>,
    kswapd: Option<bool>,
    /// The scheduler's slice a woken kswapd waits for, ns, on profiles with
    /// `eevdf_run_to_parity` (`MachineConfig::sched_slice_ns`; default 0: none); at most
    /// `u32::MAX`, as the kernel's `base_slice_ns` is an `unsigned int`.
    sched_slice_ns: Option<u32>,
    kmem: Option<RawKmem>,
    /// `[machine.tiers]`: memory tiers, demotion, NUMA balancing (docs/memory-tiers.md).
    tiers: Option<crate::mm::tiers::TierConfig>,
}

/// `machine.kmem`: the kernel memory charged to memcgs besides their pages, a preset
/// (`"kernel"`, `"none"`) or a `[machine.kmem]` table of [`crate::mm::KmemConfig`]'s fields
/// (those not given are off).
#[derive(Clone, Debug)]
enum RawKmem {
    Preset(String),
    Table(crate::mm::KmemConfig),
}

impl<'de> Deserialize<'de> for RawKmem {
    // by hand rather than `untagged`, so that a wrong key in the table is reported as such
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawKmem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"kernel\", \"none\" or a table of kmem settings")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawKmem, E> {
                Ok(RawKmem::Preset(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RawKmem, A::Error> {
                let d = serde::de::value::MapAccessDeserializer::new(map);
                crate::mm::KmemConfig::deserialize(d).map(RawKmem::Table)
            }
        }
        d.deserialize_any(V)
    }
}

/// `[memcg]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMemcg {
    max: Option<Size>,
    high: Option<Size>,
    low: Option<Size>,
    min: Option<Size>,
    swappiness: Option<u32>,
}

/// `[mglru]`: the settings, the kernel profile (or `profiles` at the top level) and
/// `[mglru.switches]`, behaviour switches flipped on top of the profile.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMglru {
    profile: Option<String>,
    #[serde(default)]
    switches: BTreeMap<String, Value>,
    caps: Option<u32>,
    hw_pte_young: Option<bool>,
    hw_nonleaf_pmd_young: Option<bool>,
    stats: Option<bool>,
    min_ttl_ms: Option<u64>,
    fg: Option<crate::reclaim::mglru::FgParams>,
    /// Writes to `/sys/kernel/mm/lru_gen/enabled` during the kernel-policy runs
    /// (`switch_at = [{ step = 30000, value = "n" }]`; docs/kill-switch.md).
    switch_at: Option<Vec<crate::sim::SwitchAt>>,
}

/// `[engine]`: run in virtual time with tasks on CPUs and devices. Devices are preset names
/// (`nvme`, `sata-ssd`, `hdd`, `mmc`, `ramdisk`, `zram`, or zram with its compressor:
/// `zram-lzo-rle`, `zram-lzo`, `zram-lz4`, `zram-zstd`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEngine {
    cpus: Option<u32>,
    jobs: Option<u32>,
    storage: Option<String>,
    swap_device: Option<String>,
    think_ns: Option<u64>,
    costs: Option<crate::sim::engine::Costs>,
    /// `task` (kswapd a task of its own, the default) or `inline` (inside the waking
    /// allocation).
    kswapd: Option<crate::sim::engine::KswapdMode>,
    /// fio's `time_based` + `runtime`, in ms of virtual time.
    runtime_ms: Option<u64>,
    /// fio's `ramp_time`, in ms of virtual time: not measured.
    ramp_ms: Option<u64>,
    /// The lock model (`sim::locks`; default on): `false` prices every `lru_lock` hold
    /// uncontended.
    locks: Option<bool>,
    /// The scheduler's slice when kswapd and a task share a CPU, ns (`EngineConfig::sched_slice_ns`;
    /// default 0: none); at most `u32::MAX`, as the kernel's `base_slice_ns` is an `unsigned int`.
    sched_slice_ns: Option<u32>,
}

/// The whole file, as written (with spans for the checks made after decoding). The sections are
/// decoded here only to check them where errors can name a line; the configurations are built
/// from [`RawSections`], once per sweep point.
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
struct RawFile {
    name: Option<String>,
    description: Option<String>,
    repetitions: Option<Spanned<u32>>,
    seed: Option<u64>,
    policies: Option<Spanned<Vec<Spanned<String>>>>,
    profiles: Option<Spanned<Vec<Spanned<String>>>>,
    baseline: Option<Spanned<String>>,
    metric: Option<Spanned<String>>,
    samples: Option<Spanned<u64>>,
    skip_if_missing: Option<bool>,
    /// A control script run in every kernel-policy cell (a path, relative to this file).
    ctl: Option<Spanned<String>>,
    capacity: Option<Size>,
    #[serde(default)]
    machine: RawMachine,
    #[serde(default)]
    memcg: RawMemcg,
    workload: Spanned<Table>,
    #[serde(default)]
    mglru: RawMglru,
    engine: Option<RawEngine>,
    #[serde(default)]
    sweep: BTreeMap<Spanned<String>, Spanned<Value>>,
    /// The published setup's values over the scaled ones (`lrugen exp --full`).
    #[serde(default)]
    full: BTreeMap<Spanned<String>, Spanned<Value>>,
}

/// The sections a sweep may change, decoded again for every sweep point.
#[derive(Debug, Deserialize)]
struct RawSections {
    capacity: Option<Size>,
    #[serde(default)]
    machine: RawMachine,
    #[serde(default)]
    memcg: RawMemcg,
    workload: Table,
    #[serde(default)]
    mglru: RawMglru,
    engine: Option<RawEngine>,
}

/// Top-level keys a sweep may set (and the sections whose keys it may set).
const SWEEPABLE: &[&str] = &["machine", "memcg", "workload", "mglru", "capacity", "engine"];

/// A policy as run in an experiment: a policy, and for MGLRU its kernel profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Variant {
    /// Its name in tables, files and plots: the policy (`mglru`, `classic`, `lru`, `opt`), or
    /// `mglru-6.1`/`mglru-mainline` when several profiles are compared.
    pub label: String,
    /// The policy.
    pub policy: PolicyKind,
    /// The MGLRU profile (MGLRU only).
    pub profile: Option<Profile>,
}

/// One swept parameter: a dotted path and its values.
#[derive(Clone, Debug, Serialize)]
pub struct SweepParam {
    /// Dotted path, e.g. `memcg.max` or `workload.dist.theta`.
    pub path: String,
    /// The values, as written in the file.
    pub values: Vec<Value>,
}

/// What a run of one sweep point is built from (everything but the policy and the seed).
#[derive(Clone, Debug, Serialize)]
pub struct PointConfig {
    /// The machine.
    pub machine: MachineConfig,
    /// The workload memcg's limits.
    pub memcg: MemcgConfig,
    /// The workload.
    pub workload: WorkloadSpec,
    /// MGLRU switches (the profile is set per variant).
    pub mglru: MglruConfig,
    /// Cache size of the reference policies (default: `memory.max`).
    pub capacity: Option<u64>,
    /// Virtual-time engine (kernel policies), if the file has an `[engine]` section.
    pub engine: Option<crate::sim::engine::EngineConfig>,
    /// Tasks (copies of the workload) under the engine.
    pub jobs: u32,
    /// Writes to `/sys/kernel/mm/lru_gen/enabled` during its mglru and classic runs
    /// (`[mglru] switch_at`; [`crate::sim::RunConfig::switch_at`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub switch_at: Vec<crate::sim::SwitchAt>,
}

impl PointConfig {
    /// Whether its runs have several tasks (`engine.jobs` > 1, or a mix), whose accesses
    /// interleave in an order that depends on the kernel policy's timing.
    pub fn multi_task(&self) -> bool {
        self.jobs > 1 || matches!(self.workload, WorkloadSpec::Mix { .. })
    }
}

/// One point of the sweep matrix.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// Its index (0 when nothing is swept).
    pub index: usize,
    /// The swept parameters and their values at this point, as written (`("memcg.max", "32M")`).
    pub params: Vec<(String, String)>,
    /// The configuration.
    pub config: PointConfig,
}

impl Point {
    /// "memcg.max=32M, workload.dist.theta=0.9", or "-" when nothing is swept.
    pub fn label(&self) -> String {
        if self.params.is_empty() {
            return "-".into();
        }
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A parsed, checked experiment.
#[derive(Clone, Debug, Serialize)]
pub struct Experiment {
    /// Its name (default: the file's stem).
    pub name: String,
    /// A sentence on what it shows.
    pub description: Option<String>,
    /// The file it was read from.
    pub file: PathBuf,
    /// Repetitions of every (point, variant).
    pub repetitions: u32,
    /// Base seed; each repetition's seed derives from it ([`super::runner::seed_for`]).
    pub seed: u64,
    /// The policies, in the order listed (MGLRU once per profile).
    pub variants: Vec<Variant>,
    /// Index in `variants` of the baseline the others are compared with.
    pub baseline: usize,
    /// The main metric (bar charts, the difference column of the table).
    pub metric: String,
    /// Samples of each kernel run's state over time.
    pub samples: u64,
    /// The swept parameters, in alphabetical order of their paths; the last varies fastest.
    pub sweep: Vec<SweepParam>,
    /// The sweep points (the cross product of `sweep`; one point when nothing is swept).
    pub points: Vec<Point>,
    /// Why the experiment cannot run here and is to be skipped (an input file missing, with
    /// `skip_if_missing = true`).
    pub skip: Option<String>,
    /// What was decided for the reader (e.g. reference caches left out of a multi-task
    /// experiment), printed above the table.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The control script its kernel-policy cells run (`ctl = "script.toml"`; docs/control.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ctl: Option<crate::control::Script>,
    /// Whether the file's `[full]` values were applied (`lrugen exp --full`): the published
    /// setup instead of the scaled one.
    pub full: bool,
    /// Whether the file has a `[full]` table at all.
    pub has_full: bool,
}

/// 1-based line and column of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Byte span of the key at dotted `path` in a TOML document, if it is there.
pub fn span_of_key(text: &str, path: &[&str]) -> Option<std::ops::Range<usize>> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let mut table = doc.get_ref();
    for (i, seg) in path.iter().enumerate() {
        let (k, v) = table.iter().find(|(k, _)| k.get_ref().as_ref() == *seg)?;
        if i + 1 == path.len() {
            return Some(k.span());
        }
        table = v.get_ref().as_table()?;
    }
    None
}

struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn err_at(&self, span: Option<std::ops::Range<usize>>, msg: impl Into<String>) -> ExpError {
        let (line, column) = match span {
            Some(s) => {
                let (l, c) = line_col(self.text, s.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        ExpError::Parse {
            file: self.file.to_path_buf(),
            line,
            column,
            message: msg.into(),
        }
    }
    fn err_key(&self, path: &[&str], fallback: Option<std::ops::Range<usize>>, msg: impl Into<String>) -> ExpError {
        self.err_at(span_of_key(self.text, path).or(fallback), msg)
    }
}

/// Render a TOML value as a sweep label: strings bare, others as TOML writes them.
fn value_label(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Rewrite a workload table so that serde can decode it into a [`WorkloadSpec`]: in every
/// nested table (arrays of tables included), a string under a key named `pages` or ending in
/// `_pages` is a size (`"32M"` → 8192), and a relative path under `path` or a key ending in
/// `_path` is taken relative to the experiment file's folder.
fn normalize_workload(t: &mut Table, dir: &Path, at: &str) -> Result<(), (String, String)> {
    for (k, v) in t.iter_mut() {
        let here = format!("{at}.{k}");
        normalize_value(k, v, dir, &here)?;
    }
    Ok(())
}

fn normalize_value(k: &str, v: &mut Value, dir: &Path, here: &str) -> Result<(), (String, String)> {
    match v {
        Value::String(s) if k == "pages" || k.ends_with("_pages") => {
            let n = parse_size_with_unit(s).map_err(|e| (here.to_string(), e))?;
            let n = i64::try_from(n).map_err(|_| (here.to_string(), format!("size '{s}' is too large")))?;
            *v = Value::Integer(n);
        }
        Value::String(s) if k == "path" || k.ends_with("_path") => {
            let p = Path::new(s.as_str());
            if p.is_relative() && !dir.as_os_str().is_empty() {
                *v = Value::String(dir.join(p).to_string_lossy().into_owned());
            }
        }
        Value::Table(sub) => normalize_workload(sub, dir, here)?,
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                normalize_value(k, item, dir, &format!("{here}[{i}]"))?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A step into a TOML value: a key of a table or an index of an array.
#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Locations (and dotted names) of the `dist` keys holding strings, in every nested table.
fn dist_strings(v: &Value, at: &mut Vec<Seg>, name: &str, out: &mut Vec<(Vec<Seg>, String)>) {
    match v {
        Value::Table(t) => {
            for (k, x) in t {
                at.push(Seg::Key(k.clone()));
                let here = format!("{name}.{k}");
                if k == "dist" && x.is_str() {
                    out.push((at.clone(), here));
                } else {
                    dist_strings(x, at, &here, out);
                }
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                at.push(Seg::Index(i));
                dist_strings(x, at, &format!("{name}[{i}]"), out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn value_at<'a>(v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    let mut v = v;
    for seg in path {
        v = match (v, seg) {
            (Value::Table(t), Seg::Key(k)) => t.get_mut(k)?,
            (Value::Array(a), Seg::Index(i)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

/// Turn the distribution string (`"zipf:0.9"`) at `path` into its table
/// (`{ kind = "zipf", theta = 0.9 }`); the parse error if it is no distribution.
fn expand_dist(root: &mut Value, path: &[Seg]) -> Result<(), String> {
    let Some(v) = value_at(root, path) else { return Ok(()) };
    let Value::String(s) = v else { return Ok(()) };
    let d: Dist = s.parse()?;
    *v = Value::try_from(d).map_err(|e| e.to_string())?;
    Ok(())
}

/// Before a sweep sets `…dist.FIELD`, turn the distribution string at `…dist` into its table.
fn expand_dist_for_sweep(doc: &mut Table, path: &[&str]) {
    let Some(i) = path.iter().rposition(|s| *s == "dist") else {
        return;
    };
    if i + 1 >= path.len() {
        return;
    }
    let mut t = doc;
    for seg in &path[..i] {
        match t.get_mut(*seg) {
            Some(Value::Table(sub)) => t = sub,
            _ => return,
        }
    }
    if let Some(Value::String(s)) = t.get("dist") {
        if let Some(d) = s.parse::<Dist>().ok().and_then(|d| Value::try_from(d).ok()) {
            t.insert("dist".into(), d);
        }
    }
}

/// Keys of `given` that `decoded` (the same table decoded and encoded again) does not have: the
/// keys the decoder ignored.
fn unknown_keys(given: &Table, decoded: &Table, at: &str, out: &mut Vec<String>) {
    for (k, v) in given {
        let here = format!("{at}.{k}");
        match (v, decoded.get(k)) {
            (_, None) => out.push(here),
            (Value::Table(g), Some(Value::Table(d))) => unknown_keys(g, d, &here, out),
            (Value::Array(g), Some(Value::Array(d))) => {
                for (i, (g, d)) in g.iter().zip(d).enumerate() {
                    if let (Value::Table(g), Value::Table(d)) = (g, d) {
                        unknown_keys(g, d, &format!("{here}[{i}]"), out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Decode and check a workload table (already normalized). A `dist` written as the command line
/// writes it (`"zipf:0.9"`) is kept a string where the workload takes one (e.g. fio's
/// `random_distribution`), else decoded as the distribution it names.
fn decode_workload(t: &Table) -> Result<WorkloadSpec, (String, String)> {
    let decode = |t: &Table| -> Result<WorkloadSpec, String> {
        Value::Table(t.clone())
            .try_into()
            .map_err(|e: toml::de::Error| e.message().trim_end().to_string())
    };
    // Which `dist` strings are distributions and which are strings the workload takes as such
    // (fio's `random_distribution`) serde alone can tell: try the choices, fewest expanded first.
    let mut dists = Vec::new();
    dist_strings(&Value::Table(t.clone()), &mut Vec::new(), "workload", &mut dists);
    let n = dists.len().min(8);
    let mut masks: Vec<u32> = (0..1u32 << n).collect();
    masks.sort_by_key(|m| (m.count_ones(), *m));
    let mut first_err = None;
    let mut found = None;
    for mask in masks {
        let mut v = Value::Table(t.clone());
        let mut bad_dist = None;
        for (i, (path, name)) in dists.iter().take(n).enumerate() {
            if mask & (1 << i) != 0 {
                if let Err(e) = expand_dist(&mut v, path) {
                    bad_dist = Some((name.clone(), e));
                }
            }
        }
        let Value::Table(tt) = v else { continue };
        match decode(&tt) {
            Ok(spec) if bad_dist.is_none() => {
                found = Some((spec, tt));
                break;
            }
            Ok(_) => {}
            Err(e) => {
                if first_err.is_none() {
                    first_err = Some(e);
                }
                // A distribution string that does not parse, where a distribution is expected:
                // its own message is the helpful one.
                if let Some(d) = bad_dist {
                    if first_err.as_deref().is_some_and(|e| e.contains("Dist")) {
                        return Err(d);
                    }
                }
            }
        }
    }
    let (spec, given) = match found {
        Some(x) => x,
        None => {
            return Err((
                "workload".to_string(),
                first_err.unwrap_or_else(|| "cannot decode the workload".into()),
            ))
        }
    };
    let back = Value::try_from(&spec).map_err(|e| ("workload".to_string(), e.to_string()))?;
    if let Value::Table(back) = back {
        let mut unknown = Vec::new();
        unknown_keys(&given, &back, "workload", &mut unknown);
        if let Some(k) = unknown.first() {
            let kind = given.get("kind").map(value_label).unwrap_or_default();
            let known: Vec<String> = back.keys().cloned().collect();
            return Err((
                k.clone(),
                format!(
                    "unknown key `{}` for workload kind `{kind}` (its keys: {})",
                    k.rsplit('.').next().unwrap_or(k),
                    known.join(", ")
                ),
            ));
        }
    }
    spec.validate().map_err(|e| ("workload".to_string(), e.to_string()))?;
    Ok(spec)
}

/// Build a point's configuration from its decoded sections. Errors name the offending key.
/// The profile of `[mglru]`: `profile` (default `mainline`) with `[mglru.switches]` applied.
/// Errors name the key (`mglru.profile`, `mglru.switches.NAME`).
fn mglru_profile(g: &RawMglru) -> Result<Profile, (String, String)> {
    let mut p = match &g.profile {
        None => Profile::MAINLINE,
        Some(name) => name.parse().map_err(|e| ("mglru.profile".to_string(), e))?,
    };
    for (k, v) in &g.switches {
        let key = format!("mglru.switches.{k}");
        let Value::Boolean(on) = v else {
            return Err((key, format!("switch '{k}': expected true or false, found {v}")));
        };
        p.set_switch(k, *on).map_err(|e| (key, e))?;
    }
    Ok(p)
}

/// The switches `[mglru.switches]` sets, in file order of their names.
fn mglru_flips(g: &RawMglru) -> Vec<(String, bool)> {
    g.switches
        .iter()
        .filter_map(|(k, v)| v.as_bool().map(|b| (k.clone(), b)))
        .collect()
}

fn point_config(s: RawSections, dir: &Path) -> Result<PointConfig, (String, String)> {
    let mut wl = s.workload;
    normalize_workload(&mut wl, dir, "workload")?;
    let workload = decode_workload(&wl)?;
    let m = s.machine;
    let memcg = MemcgConfig {
        max: s.memcg.max.map(|x| x.0),
        high: s.memcg.high.map(|x| x.0),
        low: s.memcg.low.map(|x| x.0),
        min: s.memcg.min.map(|x| x.0),
        swappiness: s.memcg.swappiness,
    };
    let mut machine = match (&m.nodes, m.memory) {
        (Some(_), Some(_)) => {
            return Err((
                "machine.nodes".into(),
                "give either machine.memory or machine.nodes, not both".into(),
            ))
        }
        (Some(nodes), None) => {
            if nodes.is_empty() || nodes.iter().any(|n| n.is_empty()) {
                return Err(("machine.nodes".into(), "every node needs at least one zone".into()));
            }
            let mut c = MachineConfig::simple(0, 0);
            c.nodes = nodes
                .iter()
                .map(|n| n.iter().map(|z| (z.zone, z.size.0)).collect())
                .collect();
            c
        }
        (None, Some(mem)) => MachineConfig::simple(mem.0, 0),
        (None, None) => match memcg.max {
            // As the CLI sizes it: room for the memcg and as much again (at least 64 MiB).
            Some(l) => MachineConfig::simple(l.saturating_add(l.max(16_384)), 0),
            None => {
                return Err((
                    "machine".into(),
                    "machine.memory is required when memcg.max is not set".into(),
                ))
            }
        },
    };
    machine.swap_pages = m.swap.map_or(0, |x| x.0);
    if let Some(v) = m.swappiness {
        if v > 200 {
            return Err((
                "machine.swappiness".into(),
                format!("swappiness {v} is out of range 0..=200"),
            ));
        }
        machine.swappiness = v;
    }
    if let Some(v) = m.page_cluster {
        if v > crate::mm::PAGE_CLUSTER_MAX {
            return Err((
                "machine.page_cluster".into(),
                format!("page_cluster {v} is out of range 0..={}", crate::mm::PAGE_CLUSTER_MAX),
            ));
        }
        machine.page_cluster = v;
    }
    if let Some(t) = m.thp {
        machine.thp = t;
    }
    if let Some(v) = memcg.swappiness {
        if v > 200 {
            return Err((
                "memcg.swappiness".into(),
                format!("swappiness {v} is out of range 0..=200"),
            ));
        }
    }
    if memcg.max == Some(0) {
        return Err(("memcg.max".into(), "memory.max of 0 pages leaves no room to run".into()));
    }
    machine.min_free_kbytes = m.min_free_kbytes.or(machine.min_free_kbytes);
    if let Some(v) = m.watermark_scale_factor {
        machine.watermark_scale_factor = v;
    }
    if let Some(v) = m.ra_pages {
        machine.ra_pages = v;
    }
    if let Some(v) = m.sched_slice_ns {
        machine.sched_slice_ns = u64::from(v);
    }
    if let Some(v) = m.kswapd {
        machine.kswapd = v;
    }
    match m.kmem {
        None => {}
        Some(RawKmem::Table(k)) => machine.kmem = k,
        Some(RawKmem::Preset(p)) => {
            machine.kmem = match p.as_str() {
                "kernel" => crate::mm::KmemConfig::kernel(),
                "none" => crate::mm::KmemConfig::none(),
                _ => {
                    return Err((
                        "machine.kmem".into(),
                        format!("unknown preset `{p}`: expected \"kernel\", \"none\" or a [machine.kmem] table"),
                    ))
                }
            }
        }
    }
    if machine.total_pages() == 0 {
        return Err(("machine".into(), "the machine has no memory".into()));
    }
    if let Some(t) = &m.tiers {
        t.check(machine.nodes.len())?;
        machine.tiers = Some(t.clone());
    }
    let d = MglruConfig::default();
    let g = s.mglru;
    let switch_at = g.switch_at.clone().unwrap_or_default();
    for sw in &switch_at {
        sw.check().map_err(|e| ("mglru.switch_at".to_string(), e))?;
    }
    let mglru = MglruConfig {
        profile: mglru_profile(&g)?,
        caps: g.caps.map_or(d.caps, |c| c & 0x7),
        hw_pte_young: g.hw_pte_young.unwrap_or(d.hw_pte_young),
        hw_nonleaf_pmd_young: g.hw_nonleaf_pmd_young.unwrap_or(d.hw_nonleaf_pmd_young),
        stats: g.stats.unwrap_or(d.stats),
        min_ttl_ms: g.min_ttl_ms.unwrap_or(d.min_ttl_ms),
        fg: g.fg.unwrap_or_default(),
    };
    mglru.fg.check()?;
    if s.capacity.is_some_and(|c| c.0 == 0) {
        return Err(("capacity".into(), "a cache of 0 pages leaves no room to run".into()));
    }
    let mut jobs = 1;
    let engine = match s.engine {
        None => None,
        Some(e) => {
            let mut c = crate::sim::engine::EngineConfig::default();
            if let Some(v) = e.cpus {
                if v == 0 {
                    return Err(("engine.cpus".into(), "expected at least 1 CPU".into()));
                }
                c.cpus = v;
            }
            if let Some(v) = e.jobs {
                if v == 0 {
                    return Err(("engine.jobs".into(), "expected at least 1 job".into()));
                }
                jobs = v;
            }
            if let Some(d) = &e.storage {
                c.storage = crate::mm::device::DeviceSpec::preset(d).map_err(|x| ("engine.storage".to_string(), x))?;
            }
            if let Some(d) = &e.swap_device {
                c.swap_device =
                    crate::mm::device::DeviceSpec::preset(d).map_err(|x| ("engine.swap_device".to_string(), x))?;
            }
            if let Some(v) = e.think_ns {
                c.think_ns = v;
            }
            if let Some(v) = e.costs {
                c.costs = v;
            }
            if let Some(v) = e.kswapd {
                c.kswapd = v;
            }
            if let Some(v) = e.runtime_ms {
                if v == 0 {
                    return Err(("engine.runtime_ms".into(), "expected at least 1 ms".into()));
                }
                c.runtime_ns = v.saturating_mul(1_000_000);
            }
            if let Some(v) = e.ramp_ms {
                c.ramp_ns = v.saturating_mul(1_000_000);
            }
            if let Some(v) = e.locks {
                c.locks = v;
            }
            if let Some(v) = e.sched_slice_ns {
                c.sched_slice_ns = u64::from(v);
            }
            Some(c)
        }
    };
    if !switch_at.is_empty() && (engine.is_some() || matches!(workload, WorkloadSpec::Mix { .. })) {
        return Err((
            "mglru.switch_at".into(),
            "switching MGLRU during a run is modelled without the virtual-time engine; expected no \
             [engine] section and no mix"
                .into(),
        ));
    }
    Ok(PointConfig {
        machine,
        memcg,
        workload,
        mglru,
        capacity: s.capacity.map(|c| c.0),
        engine,
        jobs,
        switch_at,
    })
}

/// Set the value at dotted `path` in `doc`, creating missing tables. A number after an array
/// names its element (`workload.parts.0.workload.dist`: the first part of a mix).
fn set_path(doc: &mut Table, path: &[&str], v: Value) -> Result<(), String> {
    let (last, parents) = path.split_last().ok_or("empty parameter path")?;
    let mut t = doc;
    let mut i = 0;
    while i < parents.len() {
        let e = t
            .entry(parents[i].to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        let e = match e {
            Value::Array(a) => {
                let Some(n) = path.get(i + 1).and_then(|s| s.parse::<usize>().ok()) else {
                    return Err(format!(
                        "`{}` is an array: expected an element number after it",
                        path[..=i].join(".")
                    ));
                };
                let len = a.len();
                i += 1;
                a.get_mut(n)
                    .ok_or_else(|| format!("`{}` has {len} elements: no element {n}", path[..i].join(".")))?
            }
            e => e,
        };
        if i == parents.len() {
            // the element is the value set
            *e = v;
            return Ok(());
        }
        t = match e {
            Value::Table(sub) => sub,
            _ => return Err(format!("`{}` is not a table", path[..=i].join("."))),
        };
        i += 1;
    }
    t.insert(last.to_string(), v);
    Ok(())
}

/// Workload paths (keys `path`, `*_path`) of a workload table, after normalization.
fn workload_paths(t: &Table, out: &mut Vec<PathBuf>) {
    for (k, v) in t {
        match v {
            Value::String(s) if k == "path" || k.ends_with("_path") => out.push(PathBuf::from(s)),
            Value::Table(sub) => workload_paths(sub, out),
            _ => {}
        }
    }
}

/// What a `[full]` table changes: the document with its dotted paths set, and the top-level
/// values and sweep values it replaces.
struct FullOverlay {
    doc: Table,
    description: Option<String>,
    repetitions: Option<Spanned<u32>>,
    samples: Option<Spanned<u64>>,
    sweep: Vec<(String, Spanned<Value>)>,
}

/// Check the keys of `[full]` and build what they change.
fn full_overlay(cx: &Ctx, doc: &Table, raw: &RawFile) -> Result<FullOverlay, ExpError> {
    let mut o = FullOverlay {
        doc: doc.clone(),
        description: None,
        repetitions: None,
        samples: None,
        sweep: Vec::new(),
    };
    o.doc.remove("full");
    for (k, v) in &raw.full {
        let key = k.get_ref().as_str();
        let at = |msg: String| cx.err_at(Some(v.span()), format!("[full] {key}: {msg}"));
        match key {
            "description" => match v.get_ref() {
                Value::String(d) => o.description = Some(d.clone()),
                _ => return Err(at("expected a string".into())),
            },
            "repetitions" | "samples" => {
                let n = match v.get_ref() {
                    Value::Integer(n) if *n >= 1 => *n,
                    _ => return Err(at("expected an integer of at least 1".into())),
                };
                if key == "repetitions" {
                    let n = u32::try_from(n).map_err(|_| at(format!("{n} is too large")))?;
                    o.repetitions = Some(Spanned::new(v.span(), n));
                } else {
                    o.samples = Some(Spanned::new(v.span(), n as u64));
                }
            }
            _ if key.starts_with("sweep.") => {
                let p = &key["sweep.".len()..];
                if !raw.sweep.keys().any(|s| s.get_ref() == p) {
                    return Err(cx.err_at(
                        Some(k.span()),
                        format!(
                            "[full] {key}: '{p}' is not swept: expected one of {}",
                            raw.sweep
                                .keys()
                                .map(|s| format!("sweep.{}", s.get_ref()))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
                match v.get_ref() {
                    Value::Array(a) if !a.is_empty() => o.sweep.push((p.to_string(), v.clone())),
                    _ => return Err(at("expected a non-empty array of values".into())),
                }
            }
            _ => {
                let path: Vec<&str> = key.split('.').collect();
                if path.iter().any(|s| s.is_empty())
                    || !SWEEPABLE.contains(&path[0])
                    || (path.len() == 1 && path[0] != "capacity")
                {
                    return Err(cx.err_at(
                        Some(k.span()),
                        format!(
                            "[full] {key}: expected a dotted path into machine, memcg, workload, mglru or engine \
                             (e.g. \"memcg.max\"), capacity, sweep.PATH, description, repetitions or samples"
                        ),
                    ));
                }
                set_path(&mut o.doc, &path, v.get_ref().clone()).map_err(at)?;
            }
        }
    }
    Ok(o)
}

impl Experiment {
    /// Read and check an experiment file.
    pub fn from_file(path: &Path) -> Result<Experiment, ExpError> {
        Experiment::from_file_hashed(path).map(|(e, _)| e)
    }

    /// Read and check an experiment file; also the FNV-1a hash of its bytes
    /// ([`super::outdir::fnv1a64`]), which output markers record and `--resume` compares.
    pub fn from_file_hashed(path: &Path) -> Result<(Experiment, u64), ExpError> {
        Experiment::from_file_hashed_at(path, false)
    }

    /// [`Experiment::from_file_hashed`], at the published scale when `full`
    /// ([`Experiment::parse_at_scale`]).
    pub fn from_file_hashed_at(path: &Path, full: bool) -> Result<(Experiment, u64), ExpError> {
        let text = std::fs::read_to_string(path).map_err(|e| ExpError::Parse {
            file: path.to_path_buf(),
            line: None,
            column: None,
            message: format!("cannot read the file: {e}"),
        })?;
        let hash = super::outdir::fnv1a64(text.as_bytes());
        Ok((Experiment::parse_at_scale(&text, path, full)?, hash))
    }

    /// Parse and check the text of an experiment file read from `file` (relative paths in the
    /// workload are taken relative to its folder). Every error names the file, the line where it
    /// can be told, and what was expected: TOML syntax, unknown keys (in every table, the
    /// workload's included), bad values, sizes and policies, sweep paths and values (each point
    /// of the matrix is decoded and checked before anything runs).
    pub fn parse(text: &str, file: &Path) -> Result<Experiment, ExpError> {
        Experiment::parse_at_scale(text, file, false)
    }

    /// [`Experiment::parse`], with the file's `[full]` values applied when `full` (`lrugen exp
    /// --full`: the published setup instead of the scaled preset). The `[full]` table is checked
    /// either way: its keys, and the experiment it makes, decode or the error names its line.
    pub fn parse_at_scale(text: &str, file: &Path, full: bool) -> Result<Experiment, ExpError> {
        let cx = Ctx { file, text };
        let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
        let mut doc: Table = toml::from_str(text).map_err(|e| cx.err_at(e.span(), e.message().trim_end()))?;
        let mut raw: RawFile = toml::from_str(text).map_err(|e| cx.err_at(e.span(), e.message().trim_end()))?;

        // `[full]`: dotted paths (as a sweep names them), `sweep.PATH` for a swept parameter's
        // values, and `description`, `repetitions`, `samples`
        let has_full = !raw.full.is_empty();
        let overlay = full_overlay(&cx, &doc, &raw)?;
        let full_spans: Vec<(String, std::ops::Range<usize>)> =
            raw.full.keys().map(|k| (k.get_ref().clone(), k.span())).collect();
        let full_span = |key: &str| -> Option<std::ops::Range<usize>> {
            full_spans
                .iter()
                .find(|(p, _)| {
                    let p = p.strip_prefix("sweep.").unwrap_or(p);
                    p == key || key.starts_with(&format!("{p}.")) || p.starts_with(&format!("{key}."))
                })
                .map(|(_, s)| s.clone())
        };
        if has_full {
            // each value of the published setup alone, so that an error names its own line
            for (k, v) in &raw.full {
                let key = k.get_ref().as_str();
                if key.starts_with("sweep.") || matches!(key, "description" | "repetitions" | "samples") {
                    continue;
                }
                let mut d = doc.clone();
                let path: Vec<&str> = key.split('.').collect();
                set_path(&mut d, &path, v.get_ref().clone())
                    .map_err(|e| cx.err_at(Some(k.span()), format!("[full] {key}: {e}")))?;
                let s: RawSections = Value::Table(d).try_into().map_err(|e: toml::de::Error| {
                    cx.err_at(Some(k.span()), format!("[full] {key}: {}", e.message().trim_end()))
                })?;
                point_config(s, &dir).map_err(|(p, e)| cx.err_at(Some(k.span()), format!("[full] {key}: {p}: {e}")))?;
            }
        }
        let mut description = raw.description.take();
        if full {
            doc = overlay.doc.clone();
            if let Some(d) = overlay.description {
                description = Some(d);
            }
            if let Some(r) = overlay.repetitions {
                raw.repetitions = Some(r);
            }
            if let Some(n) = overlay.samples {
                raw.samples = Some(n);
            }
            for (k, v) in overlay.sweep {
                if let Some(slot) = raw.sweep.iter_mut().find(|(p, _)| *p.get_ref() == k) {
                    *slot.1 = v;
                }
            }
        }

        let repetitions = raw.repetitions.as_ref().map_or(1, |r| *r.get_ref());
        if repetitions == 0 {
            return Err(cx.err_at(raw.repetitions.map(|r| r.span()), "repetitions must be at least 1"));
        }
        let samples = raw.samples.as_ref().map_or(DEFAULT_SAMPLES, |r| *r.get_ref());
        if samples == 0 {
            return Err(cx.err_at(raw.samples.map(|r| r.span()), "samples must be at least 1"));
        }

        // Policies × profiles.
        let mut policies: Vec<PolicyKind> = Vec::new();
        match &raw.policies {
            None => policies.extend(PolicyKind::ALL),
            Some(list) => {
                if list.get_ref().is_empty() {
                    return Err(cx.err_at(
                        Some(list.span()),
                        "policies is empty: expected at least one of mglru, classic, lru, opt",
                    ));
                }
                for p in list.get_ref() {
                    let k: PolicyKind = p.get_ref().parse().map_err(|e: String| cx.err_at(Some(p.span()), e))?;
                    if policies.contains(&k) {
                        return Err(cx.err_at(Some(p.span()), format!("policy '{}' is listed twice", p.get_ref())));
                    }
                    policies.push(k);
                }
            }
        }
        // `[mglru] profile` and `[mglru.switches]` (checked again with the rest of the section
        // below; errors name the key's line)
        let base_mglru = Value::Table(doc.clone())
            .try_into::<RawSections>()
            .map(|s| s.mglru)
            .unwrap_or_default();
        let base_profile = mglru_profile(&base_mglru).map_err(|(k, e)| {
            let path: Vec<&str> = k.split('.').collect();
            cx.err_key(&path, None, e)
        })?;
        let flips = mglru_flips(&base_mglru);
        if let (Some(list), Some(_)) = (&raw.profiles, &base_mglru.profile) {
            return Err(cx.err_at(
                Some(list.span()),
                "both `profiles` and `[mglru] profile` are given: expected one of them",
            ));
        }
        let mut profiles: Vec<Profile> = Vec::new();
        match &raw.profiles {
            None => profiles.push(base_profile),
            Some(list) => {
                if list.get_ref().is_empty() {
                    return Err(cx.err_at(
                        Some(list.span()),
                        format!(
                            "profiles is empty: expected at least one of {}",
                            crate::reclaim::mglru::state::PROFILE_NAMES
                        ),
                    ));
                }
                for p in list.get_ref() {
                    let mut k: Profile = p.get_ref().parse().map_err(|e: String| cx.err_at(Some(p.span()), e))?;
                    for (n, on) in &flips {
                        k.set_switch(n, *on)
                            .map_err(|e| cx.err_key(&["mglru", "switches", n], None, e))?;
                    }
                    if profiles.contains(&k) {
                        return Err(cx.err_at(Some(p.span()), format!("profile '{}' is listed twice", p.get_ref())));
                    }
                    profiles.push(k);
                }
            }
        }
        let mut variants = Vec::new();
        for &p in &policies {
            if p == PolicyKind::Mglru {
                for &pr in &profiles {
                    variants.push(Variant {
                        // a variant (`mglru-fg`) is its own row, even alone
                        label: if pr.preset == crate::reclaim::mglru::Preset::MglruFg {
                            pr.label()
                        } else if profiles.len() > 1 {
                            format!("mglru-{}", pr.label())
                        } else {
                            "mglru".into()
                        },
                        policy: p,
                        profile: Some(pr),
                    });
                }
            } else {
                variants.push(Variant {
                    label: p.name().into(),
                    policy: p,
                    profile: None,
                });
            }
        }
        let metric = match &raw.metric {
            None => "hit_ratio".to_string(),
            Some(m) => {
                if !METRICS.contains(&m.get_ref().as_str()) && !TIER_METRICS.contains(&m.get_ref().as_str()) {
                    return Err(cx.err_at(
                        Some(m.span()),
                        format!(
                            "unknown metric '{}': expected one of {}, or with [machine.tiers] {}",
                            m.get_ref(),
                            METRICS.join(", "),
                            TIER_METRICS.join(", ")
                        ),
                    ));
                }
                m.get_ref().clone()
            }
        };

        // The sweep.
        let mut sweep = Vec::new();
        let mut sweep_spans = Vec::new();
        for (k, v) in &raw.sweep {
            let path: Vec<&str> = k.get_ref().split('.').collect();
            if path.iter().any(|s| s.is_empty())
                || !SWEEPABLE.contains(&path[0])
                || (path.len() == 1 && path[0] != "capacity")
            {
                return Err(cx.err_at(
                    Some(k.span()),
                    format!(
                        "cannot sweep '{}': expected a dotted path into machine, memcg, workload or mglru \
                         (e.g. \"memcg.max\", \"workload.dist.theta\"), or capacity",
                        k.get_ref()
                    ),
                ));
            }
            if path[0] == "mglru" && path.get(1).is_some_and(|s| *s == "profile" || *s == "switches") {
                return Err(cx.err_at(
                    Some(k.span()),
                    format!(
                        "cannot sweep '{}': the kernel profile and its switches are set per policy                          (expected `profiles = [...]`, `[mglru] profile` or `[mglru.switches]`)",
                        k.get_ref()
                    ),
                ));
            }
            let values = match v.get_ref() {
                Value::Array(a) if !a.is_empty() => a.clone(),
                _ => {
                    return Err(cx.err_at(
                        Some(v.span()),
                        format!("sweep '{}': expected a non-empty array of values", k.get_ref()),
                    ))
                }
            };
            sweep.push(SweepParam {
                path: k.get_ref().clone(),
                values,
            });
            sweep_spans.push((k.span(), v.span()));
        }

        // Decode the file as written (errors point at the key), then every sweep point.
        let sections = |d: &Table| -> Result<RawSections, String> {
            Value::Table(d.clone())
                .try_into()
                .map_err(|e: toml::de::Error| e.message().trim_end().to_string())
        };
        let base = sections(&doc).map_err(|e| cx.err_at(Some(raw.workload.span()), e))?;
        point_config(base, &dir).map_err(|(k, e)| {
            let path: Vec<&str> = k.split('.').collect();
            match full_span(&k).filter(|_| full) {
                Some(span) => cx.err_at(Some(span), format!("[full]: {k}: {e}")),
                None => cx.err_key(&path, Some(raw.workload.span()), e),
            }
        })?;
        if has_full && !full {
            // the published setup must decode too, although it does not run now
            let s: RawSections = Value::Table(overlay.doc.clone())
                .try_into()
                .map_err(|e: toml::de::Error| {
                    cx.err_at(
                        full_spans.first().map(|s| s.1.clone()),
                        format!("[full]: {}", e.message().trim_end()),
                    )
                })?;
            point_config(s, &dir).map_err(|(k, e)| {
                cx.err_at(
                    full_span(&k).or_else(|| full_spans.first().map(|s| s.1.clone())),
                    format!("[full]: {k}: {e}"),
                )
            })?;
        }

        for sp in &sweep {
            let path: Vec<&str> = sp.path.split('.').collect();
            expand_dist_for_sweep(&mut doc, &path);
        }
        // Saturating: a sweep of many long arrays must be refused, not overflow.
        let nr_points: usize = sweep
            .iter()
            .try_fold(1usize, |n, s| n.checked_mul(s.values.len()))
            .unwrap_or(usize::MAX);
        if nr_points > 100_000 {
            let count = if nr_points == usize::MAX {
                format!("more than {}", usize::MAX)
            } else {
                nr_points.to_string()
            };
            return Err(cx.err_at(
                sweep_spans.first().map(|s| s.0.clone()),
                format!("the sweep has {count} points: at most 100,000"),
            ));
        }
        let mut points = Vec::with_capacity(nr_points);
        for index in 0..nr_points {
            // Mixed radix, the last parameter fastest.
            let mut rest = index;
            let mut choice = vec![0usize; sweep.len()];
            for (i, s) in sweep.iter().enumerate().rev() {
                choice[i] = rest % s.values.len();
                rest /= s.values.len();
            }
            let mut d = doc.clone();
            let mut params = Vec::new();
            for (i, s) in sweep.iter().enumerate() {
                let v = s.values[choice[i]].clone();
                params.push((s.path.clone(), value_label(&v)));
                let path: Vec<&str> = s.path.split('.').collect();
                set_path(&mut d, &path, v)
                    .map_err(|e| cx.err_at(Some(sweep_spans[i].0.clone()), format!("sweep '{}': {e}", s.path)))?;
            }
            let at = |key: &str| -> std::ops::Range<usize> {
                sweep
                    .iter()
                    .position(|s| {
                        s.path == key
                            || key.starts_with(&format!("{}.", s.path))
                            || s.path.starts_with(&format!("{key}."))
                    })
                    .map(|i| sweep_spans[i].1.clone())
                    .or_else(|| sweep_spans.first().map(|s| s.1.clone()))
                    .unwrap_or(0..0)
            };
            let label = params
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect::<Vec<_>>()
                .join(", ");
            let s = sections(&d).map_err(|e| {
                let span = sweep_spans.first().map(|s| s.1.clone());
                cx.err_at(span, format!("sweep point {label}: {e}"))
            })?;
            let config = point_config(s, &dir)
                .map_err(|(k, e)| cx.err_at(Some(at(&k)), format!("sweep point {label}: {k}: {e}")))?;
            points.push(Point { index, params, config });
        }

        if TIER_METRICS.contains(&metric.as_str()) {
            if let Some(p) = points.iter().find(|p| p.config.machine.tiers.is_none()) {
                return Err(cx.err_at(
                    raw.metric.as_ref().map(|m| m.span()),
                    format!(
                        "metric '{metric}' is counted on a machine with memory tiers: {} has no [machine.tiers]",
                        if p.params.is_empty() {
                            "this experiment".to_string()
                        } else {
                            format!("sweep point {}", p.label())
                        }
                    ),
                ));
            }
        }
        // Reference caches replay one page stream: with several tasks there is none to give them.
        let mut notes = Vec::new();
        if let Some(p) = points.iter().find(|p| p.config.multi_task()) {
            let why = format!(
                "{}{} runs several tasks, whose page accesses interleave in an order that each kernel \
                 policy's timing decides: there is no one stream to replay through the reference caches lru \
                 and opt",
                if matches!(p.config.workload, WorkloadSpec::Mix { .. }) {
                    "a mix of tasks".to_string()
                } else {
                    format!("engine.jobs = {}", p.config.jobs)
                },
                if p.params.is_empty() {
                    String::new()
                } else {
                    format!(" (at sweep point {})", p.label())
                }
            );
            match &raw.policies {
                None => {
                    variants.retain(|v| v.policy.is_kernel());
                    notes.push(format!(
                        "lru and opt left out: {why} (docs/experiments.md, \"Reference caches\")"
                    ));
                }
                Some(list) => {
                    if let Some(r) = list
                        .get_ref()
                        .iter()
                        .find(|r| r.get_ref().parse::<PolicyKind>().is_ok_and(|k| !k.is_kernel()))
                    {
                        return Err(cx.err_at(
                            Some(r.span()),
                            format!(
                                "policy '{}' cannot run here: {why}; expected only mglru and classic (or one task: \
                                 engine.jobs = 1 and no mix)",
                                r.get_ref()
                            ),
                        ));
                    }
                }
            }
        }
        let labels = || variants.iter().map(|v| v.label.as_str()).collect::<Vec<_>>().join(", ");
        let baseline = match &raw.baseline {
            None => 0,
            Some(b) => variants.iter().position(|v| v.label == *b.get_ref()).ok_or_else(|| {
                cx.err_at(
                    Some(b.span()),
                    format!(
                        "baseline '{}' is not one of the policies run: expected one of {}",
                        b.get_ref(),
                        labels()
                    ),
                )
            })?,
        };

        // Inputs that may be absent on a user's machine.
        let mut skip = None;
        if raw.skip_if_missing.unwrap_or(false) {
            let mut paths = Vec::new();
            for p in &points {
                if let Ok(Value::Table(t)) = Value::try_from(&p.config.workload) {
                    workload_paths(&t, &mut paths);
                }
            }
            if let Some(p) = paths.iter().find(|p| !p.exists()) {
                skip = Some(format!("input {} is not there (skip_if_missing = true)", p.display()));
            }
        }
        // The control script: read now, so that its errors name its own file and line.
        let ctl = match &raw.ctl {
            None => None,
            Some(c) => {
                let p = Path::new(c.get_ref().as_str());
                let p = if p.is_relative() { dir.join(p) } else { p.to_path_buf() };
                let script = crate::control::Script::load(&p).map_err(|e| cx.err_at(Some(c.span()), e.to_string()))?;
                if let Some(pt) = points
                    .iter()
                    .find(|pt| pt.config.engine.is_some() || pt.config.multi_task())
                {
                    return Err(cx.err_at(
                        Some(c.span()),
                        format!(
                            "a control script runs on a replay without the virtual-time engine; {} has \
                             an [engine] section, jobs or a mix",
                            if pt.params.is_empty() {
                                "this experiment".to_string()
                            } else {
                                format!("sweep point {}", pt.label())
                            }
                        ),
                    ));
                }
                Some(script)
            }
        };
        let name = raw.name.unwrap_or_else(|| {
            file.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "experiment".into())
        });
        Ok(Experiment {
            name,
            description,
            file: file.to_path_buf(),
            repetitions,
            seed: raw.seed.unwrap_or(1),
            variants,
            baseline,
            metric,
            samples,
            sweep,
            points,
            skip,
            notes,
            ctl,
            full,
            has_full,
        })
    }
}

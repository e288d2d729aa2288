// SPDX-License-Identifier: GPL-2.0-only
//! The control files a run reads and writes while it runs, and the timed script that does it
//! (`lrugen run --ctl FILE`, `ctl` in a run configuration): `/sys/kernel/debug/lru_gen` (read,
//! `+`/`-` commands), `lru_gen_full`, `/sys/kernel/mm/lru_gen/enabled` and `min_ttl_ms`, the
//! workload memcg's `memory.reclaim`, `memory.max`, `memory.high`, `memory.low`, `memory.min`,
//! `memory.current`, `memory.swap.current`, `memory.stat`, `memory.events`, and `/proc/vmstat`
//! and `/proc/sys/vm/swappiness`. Each write is what the kernel's handler does (its grammar, its
//! reclaim loop, its return code); each read is the file's text. Every action is logged
//! ([`Record`]) with the step, the measured accesses and the clock when it ran.
//!
//! A script is TOML (`docs/control.md`):
//! ```toml
//! [[action]]
//! at = 10000          # after this many measured accesses (0: before the first step);
//!                     # or at_step (operations replayed, a populate pass included)
//! every = 10000       # and again every this many (optional)
//! read = "lru_gen"
//!
//! [[action]]
//! at_ms = 1500        # or on the run's clock, in milliseconds
//! write = "memory.reclaim"
//! value = "10M swappiness=0"
//!
//! [[action]]
//! at = 20000
//! write = "lru_gen"
//! value = "+ {memcg} 0 {max_seq} 1 1"
//! ```
//! A written value may name what an agent would first read off `lru_gen`: `{memcg}` (the
//! workload memcg's id in `lru_gen`), `{node}` (0), `{max_seq}`, `{min_seq_anon}`,
//! `{min_seq_file}` and `{min_seq}` (the smaller) of the workload's lruvec on node 0, each
//! optionally `+N` or `-N` (`{max_seq-2}`), replaced when the action runs.

pub mod memcg;

use crate::kernel::Kernel;
use crate::mm::memcg::MemcgId;
use crate::reclaim::mglru::debugfs::Errno;
use crate::reclaim::{memory_reclaim, Policy};
// the placeholders of a written value (`{memcg}`, `{max_seq-2}`, …): the guest replayer's grammar,
// one parser for both
use lrugen_replay::placeholders;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// A control file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CtlFile {
    /// `/sys/kernel/debug/lru_gen` (MGLRU).
    LruGen,
    /// `/sys/kernel/debug/lru_gen_full` (MGLRU; read only).
    LruGenFull,
    /// `/sys/kernel/mm/lru_gen/enabled`.
    Enabled,
    /// `/sys/kernel/mm/lru_gen/min_ttl_ms`.
    MinTtlMs,
    /// `memory.reclaim` of the workload memcg (write only).
    MemoryReclaim,
    /// `memory.max`.
    MemoryMax,
    /// `memory.high`.
    MemoryHigh,
    /// `memory.low`.
    MemoryLow,
    /// `memory.min`.
    MemoryMin,
    /// `memory.current` (read only).
    MemoryCurrent,
    /// `memory.swap.current` (read only).
    MemorySwapCurrent,
    /// `memory.stat` (read only).
    MemoryStat,
    /// `memory.events` (read only).
    MemoryEvents,
    /// `/proc/vmstat` (read only).
    Vmstat,
    /// `/proc/sys/vm/swappiness`.
    Swappiness,
    /// `/proc/sys/vm/page-cluster`.
    PageCluster,
    /// `cgroup.procs`: read, the tasks in the memcg; written, a task moved into it.
    CgroupProcs,
    /// `mkdir` of a memcg directory (a script's `mkdir` key; not a file).
    Mkdir,
    /// `rmdir` of a memcg directory (a script's `rmdir` key; not a file).
    Rmdir,
}

impl CtlFile {
    /// Every file, in the order of the docs.
    pub const ALL: [CtlFile; 17] = [
        CtlFile::LruGen,
        CtlFile::LruGenFull,
        CtlFile::Enabled,
        CtlFile::MinTtlMs,
        CtlFile::MemoryReclaim,
        CtlFile::MemoryMax,
        CtlFile::MemoryHigh,
        CtlFile::MemoryLow,
        CtlFile::MemoryMin,
        CtlFile::MemoryCurrent,
        CtlFile::MemorySwapCurrent,
        CtlFile::MemoryStat,
        CtlFile::MemoryEvents,
        CtlFile::Vmstat,
        CtlFile::Swappiness,
        CtlFile::PageCluster,
        CtlFile::CgroupProcs,
    ];

    /// The short name a script uses.
    pub fn name(self) -> &'static str {
        match self {
            CtlFile::LruGen => "lru_gen",
            CtlFile::LruGenFull => "lru_gen_full",
            CtlFile::Enabled => "enabled",
            CtlFile::MinTtlMs => "min_ttl_ms",
            CtlFile::MemoryReclaim => "memory.reclaim",
            CtlFile::MemoryMax => "memory.max",
            CtlFile::MemoryHigh => "memory.high",
            CtlFile::MemoryLow => "memory.low",
            CtlFile::MemoryMin => "memory.min",
            CtlFile::MemoryCurrent => "memory.current",
            CtlFile::MemorySwapCurrent => "memory.swap.current",
            CtlFile::MemoryStat => "memory.stat",
            CtlFile::MemoryEvents => "memory.events",
            CtlFile::Vmstat => "vmstat",
            CtlFile::Swappiness => "vm.swappiness",
            CtlFile::PageCluster => "vm.page-cluster",
            CtlFile::CgroupProcs => "cgroup.procs",
            CtlFile::Mkdir => "mkdir",
            CtlFile::Rmdir => "rmdir",
        }
    }

    /// The kernel's path (`memcg`: the workload memcg's path, e.g. `/t`).
    pub fn path(self, memcg: &str) -> String {
        let cg = |f: &str| format!("/sys/fs/cgroup{}/{f}", if memcg == "/" { "" } else { memcg });
        match self {
            CtlFile::LruGen => "/sys/kernel/debug/lru_gen".into(),
            CtlFile::LruGenFull => "/sys/kernel/debug/lru_gen_full".into(),
            CtlFile::Enabled => "/sys/kernel/mm/lru_gen/enabled".into(),
            CtlFile::MinTtlMs => "/sys/kernel/mm/lru_gen/min_ttl_ms".into(),
            CtlFile::Vmstat => "/proc/vmstat".into(),
            CtlFile::Swappiness => "/proc/sys/vm/swappiness".into(),
            CtlFile::PageCluster => "/proc/sys/vm/page-cluster".into(),
            CtlFile::Mkdir | CtlFile::Rmdir => format!("/sys/fs/cgroup{}", if memcg == "/" { "" } else { memcg }),
            f => cg(f.name()),
        }
    }

    /// Whether the file can be read (`memory.reclaim` is write only).
    pub fn readable(self) -> bool {
        !matches!(self, CtlFile::MemoryReclaim | CtlFile::Mkdir | CtlFile::Rmdir)
    }

    /// Whether the file can be written.
    pub fn writable(self) -> bool {
        matches!(
            self,
            CtlFile::LruGen
                | CtlFile::Enabled
                | CtlFile::MinTtlMs
                | CtlFile::MemoryReclaim
                | CtlFile::MemoryMax
                | CtlFile::MemoryHigh
                | CtlFile::MemoryLow
                | CtlFile::MemoryMin
                | CtlFile::Swappiness
                | CtlFile::PageCluster
                | CtlFile::CgroupProcs
        )
    }

    fn names() -> String {
        CtlFile::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
    }
}

impl std::str::FromStr for CtlFile {
    type Err = String;
    /// A short name or the kernel's path (any memcg directory for the memcg files).
    fn from_str(s: &str) -> Result<Self, String> {
        let base = if let Some(rest) = s.strip_prefix("/sys/fs/cgroup/") {
            rest.rsplit('/').next().unwrap_or(rest)
        } else {
            s
        };
        CtlFile::ALL
            .into_iter()
            .find(|f| f.name() == base || f.path("/") == s)
            .ok_or_else(|| format!("unknown control file '{s}': expected one of {}", CtlFile::names()))
    }
}

/// What an action's `at` and `every` count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// Measured accesses (the count the results report; `at`).
    Accesses,
    /// Steps: operations replayed, measured or not, a populate pass included (`at_step`).
    Steps,
    /// Milliseconds on the run's clock (`at_ms`).
    Ms,
}

/// When an action runs: once `at` is reached, then every `every` more, in `unit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct When {
    /// What `at` and `every` count.
    pub unit: Unit,
    /// The first time (0: before the first step).
    pub at: u64,
    /// The period, if repeated.
    pub every: Option<u64>,
}

/// One action of a script.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    /// When.
    pub when: When,
    /// The file.
    pub file: CtlFile,
    /// `Some`: write this text (as `echo -n` would; the handlers strip what the kernel strips);
    /// `None`: read the file. For `mkdir` and `rmdir`: the directory, relative to the workload
    /// memcg's.
    pub write: Option<String>,
    /// The memcg whose file is read or written, relative to the workload memcg's directory
    /// (`a`, `a/b`); `None`: the workload memcg.
    #[serde(default)]
    pub memcg: Option<String>,
    /// The action's line in its script (1-based; 0 when built in code).
    pub line: usize,
}

/// A timed list of actions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Script {
    /// The actions in the order given (actions due at the same point run in this order).
    pub actions: Vec<Action>,
}

/// A script that cannot be read: the file, the line and column, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtlError {
    /// The script.
    pub file: PathBuf,
    /// 1-based line and column, where known.
    pub at: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CtlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some((l, c)) => write!(f, "{}:{l}:{c}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for CtlError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScript {
    #[serde(default)]
    action: Vec<toml::Spanned<RawAction>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAction {
    at: Option<toml::Spanned<i64>>,
    at_step: Option<toml::Spanned<i64>>,
    at_ms: Option<toml::Spanned<i64>>,
    every: Option<toml::Spanned<i64>>,
    read: Option<toml::Spanned<String>>,
    write: Option<toml::Spanned<String>>,
    value: Option<toml::Spanned<toml::Value>>,
    mkdir: Option<toml::Spanned<String>>,
    rmdir: Option<toml::Spanned<String>>,
    memcg: Option<toml::Spanned<String>>,
}

/// A memcg directory relative to the workload memcg's: names separated by `/`, none empty, `.`
/// or `..`.
fn check_rel_path(p: &str) -> Result<(), String> {
    if p.is_empty() || p.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Err(format!(
            "'{p}': expected a memcg directory below the workload memcg's, names separated by '/' \
             (e.g. \"a\" or \"a/b\"), without '.', '..' or empty names"
        ));
    }
    Ok(())
}

fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

impl Script {
    /// Read a script from `path`.
    pub fn load(path: &Path) -> Result<Script, CtlError> {
        let text = std::fs::read_to_string(path).map_err(|e| CtlError {
            file: path.to_path_buf(),
            at: None,
            message: format!("cannot read the control script: {e}"),
        })?;
        Script::parse(&text, path)
    }

    /// Parse the text of a script (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Script, CtlError> {
        let err = |span: Option<Range<usize>>, message: String| CtlError {
            file: path.to_path_buf(),
            at: span.map(|s| line_col(text, s.start)),
            message,
        };
        let raw: RawScript = toml::from_str(text).map_err(|e| err(e.span(), e.message().trim_end().to_string()))?;
        let mut actions = Vec::with_capacity(raw.action.len());
        for a in raw.action {
            let span = a.span();
            let line = line_col(text, span.start).0;
            let a = a.into_inner();
            let count = |v: &toml::Spanned<i64>, what: &str, min: i64| -> Result<u64, CtlError> {
                if *v.get_ref() < min {
                    return Err(err(
                        Some(v.span()),
                        format!("{what} = {}: expected a whole number of at least {min}", v.get_ref()),
                    ));
                }
                Ok(*v.get_ref() as u64)
            };
            let every = a.every.as_ref().map(|v| count(v, "every", 1)).transpose()?;
            let given: Vec<(Unit, &str, &toml::Spanned<i64>)> = [
                (Unit::Accesses, "at", &a.at),
                (Unit::Steps, "at_step", &a.at_step),
                (Unit::Ms, "at_ms", &a.at_ms),
            ]
            .into_iter()
            .filter_map(|(u, n, v)| v.as_ref().map(|v| (u, n, v)))
            .collect();
            let when = match given.as_slice() {
                [(unit, name, v)] => When {
                    unit: *unit,
                    at: count(v, name, 0)?,
                    every,
                },
                [] => {
                    return Err(err(
                        Some(span),
                        "an action needs `at` (measured accesses), `at_step` (steps) or `at_ms` \
                         (the run's clock, milliseconds)"
                            .into(),
                    ))
                }
                [(_, first, _), (_, second, v), ..] => {
                    return Err(err(
                        Some(v.span()),
                        format!("both `{first}` and `{second}` are given: expected one of them"),
                    ))
                }
            };
            let file_of =
                |s: &toml::Spanned<String>| s.get_ref().parse::<CtlFile>().map_err(|e| err(Some(s.span()), e));
            let memcg = match &a.memcg {
                Some(m) => {
                    check_rel_path(m.get_ref()).map_err(|e| err(Some(m.span()), format!("memcg = {e}")))?;
                    Some(m.get_ref().clone())
                }
                None => None,
            };
            let dir = [(CtlFile::Mkdir, &a.mkdir), (CtlFile::Rmdir, &a.rmdir)]
                .into_iter()
                .find_map(|(f, d)| d.as_ref().map(|d| (f, d)));
            if let Some((f, d)) = dir {
                let other = [
                    ("read", a.read.as_ref().map(|s| s.span())),
                    ("write", a.write.as_ref().map(|s| s.span())),
                    ("value", a.value.as_ref().map(|s| s.span())),
                    ("memcg", a.memcg.as_ref().map(|s| s.span())),
                    (
                        "rmdir",
                        if f == CtlFile::Mkdir {
                            a.rmdir.as_ref().map(|s| s.span())
                        } else {
                            None
                        },
                    ),
                ]
                .into_iter()
                .find_map(|(n, s)| s.map(|s| (n, s)));
                if let Some((n, s)) = other {
                    return Err(err(
                        Some(s),
                        format!("`{}` takes no `{n}`: an action either makes or removes a memcg, or reads or writes one file", f.name()),
                    ));
                }
                check_rel_path(d.get_ref()).map_err(|e| err(Some(d.span()), format!("{} = {e}", f.name())))?;
                actions.push(Action {
                    when,
                    file: f,
                    write: Some(d.get_ref().clone()),
                    memcg: None,
                    line,
                });
                continue;
            }
            let (file, write) = match (&a.read, &a.write) {
                (Some(r), None) => {
                    if let Some(v) = &a.value {
                        return Err(err(Some(v.span()), "`value` is for writes: a read takes none".into()));
                    }
                    let f = file_of(r)?;
                    if !f.readable() {
                        return Err(err(
                            Some(r.span()),
                            format!("{} cannot be read (it is write only)", f.name()),
                        ));
                    }
                    (f, None)
                }
                (None, Some(w)) => {
                    let f = file_of(w)?;
                    if !f.writable() {
                        return Err(err(
                            Some(w.span()),
                            format!("{} cannot be written (it is read only)", f.name()),
                        ));
                    }
                    let v = a.value.as_ref().ok_or_else(|| {
                        err(
                            Some(w.span()),
                            format!("writing {} needs `value`, the text to write", f.name()),
                        )
                    })?;
                    let text = match v.get_ref() {
                        toml::Value::String(s) => s.clone(),
                        toml::Value::Integer(i) => i.to_string(),
                        other => {
                            return Err(err(
                                Some(v.span()),
                                format!("value = {other}: expected a string or a whole number"),
                            ))
                        }
                    };
                    placeholders(&text).map_err(|e| err(Some(v.span()), e))?;
                    (f, Some(text))
                }
                (Some(_), Some(w)) => {
                    return Err(err(
                        Some(w.span()),
                        "both `read` and `write` are given: expected one of them".into(),
                    ))
                }
                (None, None) => {
                    return Err(err(
                        Some(span),
                        format!(
                            "an action needs `read` or `write` with a file ({}), or `mkdir` or `rmdir` with a memcg directory",
                            CtlFile::names()
                        ),
                    ))
                }
            };
            actions.push(Action {
                when,
                file,
                write,
                memcg,
                line,
            });
        }
        Ok(Script { actions })
    }

    /// Whether any action runs on the clock (`at_ms`).
    pub fn uses_clock(&self) -> bool {
        self.actions.iter().any(|a| a.when.unit == Unit::Ms)
    }
}

/// `text` with its placeholders replaced from kernel `k` (workload memcg `t`).
fn expand<P: Policy>(k: &Kernel<P>, t: MemcgId, text: &str) -> Result<String, (String, String)> {
    let list = placeholders(text).map_err(|e| ("EINVAL".to_string(), e))?;
    if list.is_empty() {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (name, off, span) in list {
        let seqs = || {
            k.p.seqs(t, 0).ok_or_else(|| {
                (
                    "ENOENT".to_string(),
                    format!("{{{name}}}: the policy has no generations to read"),
                )
            })
        };
        let base = match name {
            "memcg" => crate::reclaim::mglru::admin::memcg_kernel_id(t) as i64,
            "node" => 0,
            "max_seq" => seqs()?.2 as i64,
            "min_seq_anon" => seqs()?.0 as i64,
            "min_seq_file" => seqs()?.1 as i64,
            _ => {
                let (a, f, _) = seqs()?;
                a.min(f) as i64
            }
        };
        let v = base + off;
        if v < 0 {
            return Err((
                "EINVAL".to_string(),
                format!("{}: {name} is {base}, so the value would be {v}", &text[span]),
            ));
        }
        out.push_str(&text[last..span.start]);
        out.push_str(&v.to_string());
        last = span.end;
    }
    out.push_str(&text[last..]);
    Ok(out)
}

/// What one action did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Steps replayed before it ran.
    pub step: u64,
    /// Measured accesses before it ran.
    pub accesses: u64,
    /// The run's clock, milliseconds.
    pub time_ms: f64,
    /// The file's short name.
    pub file: String,
    /// The text written, placeholders replaced (`None`: a read).
    pub write: Option<String>,
    /// The memcg whose file it was, below the workload memcg (`memcg = "a"`); absent: the
    /// workload memcg's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcg: Option<String>,
    /// The write returned its byte count, or the read its text.
    pub ok: bool,
    /// The errno of a failed write or read (`EINVAL`, `ENOENT`, ...).
    pub errno: Option<String>,
    /// What a read returned, or why a write or read failed.
    pub text: Option<String>,
    /// Pages reclaimed by the write (`memory.reclaim`, `memory.max`, `memory.high`, `lru_gen` `-`).
    pub reclaimed: Option<u64>,
    /// The script line of the action.
    pub line: usize,
}

/// A write's result: the errno (with why, for the log) or success with the pages reclaimed.
pub type WriteResult = Result<Option<u64>, (String, String)>;

fn errno(e: Errno, why: impl Into<String>) -> (String, String) {
    (e.name().to_string(), why.into())
}

/// `cgroup_procs_write` of one task's number to memcg `t`'s `cgroup.procs` (`kstrtoint` after
/// `strstrip`; the model's tasks are its address spaces, numbered from 0 in the order the run
/// made them).
fn write_procs<P: Policy>(k: &mut Kernel<P>, t: MemcgId, text: &str) -> WriteResult {
    let Some(task) = parse_proc_int(text).filter(|&v| (0..=u32::MAX as i64).contains(&v)) else {
        return Err(errno(
            Errno::EINVAL,
            format!("cgroup.procs: '{}' is not a task number", text.trim()),
        ));
    };
    k.move_task(task as u32, t).map(|()| None).map_err(|e| {
        let why = match e {
            Errno::ESRCH => format!("cgroup.procs: no live task {task}"),
            _ => format!("cgroup.procs: {} was removed", k.m.memcgs[t].path),
        };
        errno(e, why)
    })
}

/// The memcg at `rel` below memcg `t` (online: a removed one has no directory).
fn below<P: Policy>(k: &Kernel<P>, t: MemcgId, rel: &str) -> Result<MemcgId, (String, String)> {
    let path = join(&k.m.memcgs[t].path, rel);
    k.m.memcgs
        .by_path(&path)
        .ok_or_else(|| errno(Errno::ENOENT, format!("no memcg {path}")))
}

fn join(base: &str, rel: &str) -> String {
    if base == "/" {
        format!("/{rel}")
    } else {
        format!("{base}/{rel}")
    }
}

/// `mkdir` of `rel` below memcg `t`: `EEXIST` if it exists, `ENOENT` if its parent does not.
fn mkdir<P: Policy>(k: &mut Kernel<P>, t: MemcgId, rel: &str) -> WriteResult {
    let (parent, name) = match rel.rsplit_once('/') {
        Some((dir, name)) => (below(k, t, dir)?, name),
        None => (t, rel),
    };
    let path = join(&k.m.memcgs[t].path, rel);
    if k.m.memcgs.by_path(&path).is_some() {
        return Err(errno(Errno::EEXIST, format!("memcg {path} exists")));
    }
    k.create_memcg(parent, name);
    Ok(None)
}

/// `rmdir` of `rel` below memcg `t` ([`Kernel::rmdir_memcg`]).
fn rmdir<P: Policy>(k: &mut Kernel<P>, t: MemcgId, rel: &str) -> WriteResult {
    let id = below(k, t, rel)?;
    k.rmdir_memcg(id).map(|()| None).map_err(|e| {
        errno(
            e,
            format!(
                "rmdir {}: {}",
                k.m.memcgs[id].path,
                if e == Errno::EBUSY {
                    "tasks or online memcgs are in it"
                } else {
                    "removed already"
                }
            ),
        )
    })
}

/// Read `file` of kernel `k` whose workload runs in memcg `t`: its text, or (errno, why) for
/// `lru_gen` and `lru_gen_full` under a policy without the multi-gen LRU (the model's classic
/// LRU is a kernel built without it, which has no such file).
pub fn read<P: Policy>(k: &Kernel<P>, t: MemcgId, file: CtlFile) -> Result<String, (String, String)> {
    let m = &k.m;
    if matches!(file, CtlFile::LruGen | CtlFile::LruGenFull) {
        return k.p.debugfs(m, file == CtlFile::LruGenFull).ok_or_else(|| {
            (
                "ENOENT".to_string(),
                format!("{}: the policy has no multi-gen LRU", file.name()),
            )
        });
    }
    let mc = &m.memcgs[t];
    let tunable = |v: u64| {
        if v >= memory_reclaim::PAGE_COUNTER_MAX {
            "max\n".to_string()
        } else {
            format!("{}\n", v * 4096)
        }
    };
    Ok(match file {
        CtlFile::LruGen | CtlFile::LruGenFull => unreachable!("read above"),
        CtlFile::Enabled => format!("0x{:04x}\n", k.p.lru_gen_caps()),
        CtlFile::MinTtlMs => format!("{}\n", k.p.min_ttl_jiffies() * (1000 / crate::mm::HZ)),
        CtlFile::MemoryReclaim => String::new(),
        CtlFile::MemoryMax => tunable(mc.max),
        CtlFile::MemoryHigh => tunable(mc.high),
        CtlFile::MemoryLow => tunable(mc.low),
        CtlFile::MemoryMin => tunable(mc.min),
        CtlFile::MemoryCurrent => format!("{}\n", mc.usage * 4096),
        CtlFile::MemorySwapCurrent => format!("{}\n", mc.swap_usage * 4096),
        CtlFile::MemoryStat => crate::mm::memory_stat::format(&m.memcg_stat(t), 4096, k.p.switches()),
        CtlFile::MemoryEvents => m.memcgs.events_hierarchical(t).format(),
        CtlFile::Vmstat => crate::mm::vmstat::format_proc_vmstat(&m.vmstat()),
        CtlFile::Swappiness => format!("{}\n", m.cfg.swappiness),
        CtlFile::PageCluster => format!("{}\n", m.cfg.page_cluster),
        CtlFile::CgroupProcs => m
            .mms
            .iter()
            .filter(|mm| mm.alive && mm.memcg == t)
            .map(|mm| format!("{}\n", mm.id))
            .collect(),
        CtlFile::Mkdir | CtlFile::Rmdir => unreachable!("not readable"),
    })
}

/// Write `text` to `file` of kernel `k` whose workload runs in memcg `t`, as the kernel's handler
/// does.
pub fn write<P: Policy>(k: &mut Kernel<P>, t: MemcgId, file: CtlFile, text: &str) -> WriteResult {
    match file {
        CtlFile::CgroupProcs => return write_procs(k, t, text),
        CtlFile::Mkdir => return mkdir(k, t, text),
        CtlFile::Rmdir => return rmdir(k, t, text),
        _ => {}
    }
    let Kernel { m, p, .. } = k;
    match file {
        CtlFile::LruGen => {
            let before = m.memcgs[crate::mm::memcg::ROOT_MEMCG].usage;
            if p.debugfs(m, false).is_none() {
                return Err(("ENOENT".into(), "lru_gen: the policy has no multi-gen LRU".into()));
            }
            p.debugfs_write(m, text).map_err(|e| {
                let name = ["EINVAL", "ERANGE", "EEXIST", "EINTR", "ENOMEM"]
                    .into_iter()
                    .find(|n| e.contains(n))
                    .unwrap_or("EINVAL");
                (name.to_string(), e)
            })?;
            // pages reclaimed by its `-` commands (uncharged anywhere); `+` reclaims nothing
            let evicts = text.split([';', ',', '\n']).any(|c| c.trim_start().starts_with('-'));
            Ok(evicts.then(|| before.saturating_sub(m.memcgs[crate::mm::memcg::ROOT_MEMCG].usage)))
        }
        CtlFile::Enabled => {
            let caps = crate::reclaim::mglru::sysfs::parse_enabled(text.as_bytes())
                .map_err(|e| errno(e, format!("enabled: '{}' is not y, n or a number", text.trim_end())))?;
            p.set_lru_gen_caps(m, caps).map_err(|why| errno(Errno::EINVAL, why))?;
            Ok(None)
        }
        CtlFile::MinTtlMs => {
            let ms = crate::reclaim::mglru::sysfs::parse_min_ttl_ms(text.as_bytes())
                .map_err(|e| errno(e, format!("min_ttl_ms: '{}' is not a number", text.trim_end())))?;
            p.set_min_ttl_jiffies(msecs_to_jiffies(ms as u64))
                .map_err(|why| errno(Errno::EINVAL, why))?;
            Ok(None)
        }
        CtlFile::MemoryReclaim => {
            let out = memory_reclaim::write(m, p, t, text);
            match out.error {
                None => Ok(Some(out.nr_reclaimed)),
                Some(e) => Err((
                    e.name().to_string(),
                    format!("memory.reclaim: {} pages reclaimed before it failed", out.nr_reclaimed),
                )),
            }
        }
        CtlFile::MemoryMax => memcg::write_max(m, p, t, text),
        CtlFile::MemoryHigh => memcg::write_high(m, p, t, text),
        CtlFile::MemoryLow => memcg::write_protection(m, t, text, false),
        CtlFile::MemoryMin => memcg::write_protection(m, t, text, true),
        CtlFile::CgroupProcs | CtlFile::Mkdir | CtlFile::Rmdir => unreachable!("written above"),
        CtlFile::Swappiness => {
            // proc_dointvec_minmax over 0..=200 (MAX_SWAPPINESS)
            let v = parse_proc_int(text).ok_or_else(|| errno(Errno::EINVAL, "vm.swappiness: not a number"))?;
            if !(0..=200).contains(&v) {
                return Err(errno(Errno::EINVAL, format!("vm.swappiness: {v} is outside 0..=200")));
            }
            // cgroup v2 has no per-memcg swappiness (`mem_cgroup_swappiness` returns
            // `vm_swappiness`): every memcg that follows the global value follows the write (a
            // memcg given its own with `[memcg] swappiness`, the cgroup v1 knob, keeps it)
            let old = m.cfg.swappiness;
            m.cfg.swappiness = v as u32;
            for c in 0..m.memcgs.len() as MemcgId {
                if m.memcgs[c].swappiness == old {
                    m.memcgs[c].swappiness = v as u32;
                }
            }
            Ok(None)
        }
        CtlFile::PageCluster => {
            // proc_dointvec_minmax over 0..=page_cluster_max (31); the next swap fault sizes its
            // window with the new value
            let v = parse_proc_int(text).ok_or_else(|| errno(Errno::EINVAL, "vm.page-cluster: not a number"))?;
            let max = i64::from(crate::mm::PAGE_CLUSTER_MAX);
            if !(0..=max).contains(&v) {
                return Err(errno(
                    Errno::EINVAL,
                    format!("vm.page-cluster: {v} is outside 0..={max}"),
                ));
            }
            m.cfg.page_cluster = v as u32;
            Ok(None)
        }
        f => Err(errno(Errno::EINVAL, format!("{} is read only", f.name()))),
    }
}

/// `msecs_to_jiffies` at `HZ` (rounds up: 1 ms is one jiffy at HZ=250).
pub fn msecs_to_jiffies(ms: u64) -> u64 {
    let per = 1000 / crate::mm::HZ;
    ms.div_ceil(per)
}

/// `proc_dointvec`'s reading of one integer (`proc_get_long`): leading white space, an optional
/// `-`, a number as `strtoul` base 0 reads it (`0x` hex, leading `0` octal), then only white space.
fn parse_proc_int(text: &str) -> Option<i64> {
    let s = text.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let (bytes, used) = memory_reclaim::strtoull(digits.as_bytes());
    if used == 0 || used != digits.len() {
        return None;
    }
    let v = i64::try_from(bytes).ok()?;
    Some(if neg { -v } else { v })
}

/// Where a script is in a run: the next point each action is due at.
#[derive(Clone, Debug)]
pub struct Cursor {
    /// Per action, its next due point in its unit (ns for the clock), `u64::MAX` when done.
    next: Vec<u64>,
    /// The smallest due point per unit (accesses, steps, ns): a fast test per step.
    soonest: [u64; 3],
}

fn unit_index(u: Unit) -> usize {
    match u {
        Unit::Accesses => 0,
        Unit::Steps => 1,
        Unit::Ms => 2,
    }
}

/// `v` in the unit the cursor keeps (ns for milliseconds).
fn scaled(u: Unit, v: u64) -> u64 {
    if u == Unit::Ms {
        v.saturating_mul(1_000_000)
    } else {
        v
    }
}

impl Cursor {
    /// A cursor at the start of a run.
    pub fn new(s: &Script) -> Cursor {
        let next = s.actions.iter().map(|a| scaled(a.when.unit, a.when.at)).collect();
        let mut c = Cursor {
            next,
            soonest: [u64::MAX; 3],
        };
        c.refresh(s);
        c
    }

    fn refresh(&mut self, s: &Script) {
        self.soonest = [u64::MAX; 3];
        for (a, &n) in s.actions.iter().zip(&self.next) {
            let i = unit_index(a.when.unit);
            self.soonest[i] = self.soonest[i].min(n);
        }
    }

    /// Whether some action is due after `steps` steps and `accesses` measured accesses at clock
    /// `now_ns`.
    #[inline]
    pub fn due(&self, steps: u64, accesses: u64, now_ns: u64) -> bool {
        accesses >= self.soonest[0] || steps >= self.soonest[1] || now_ns >= self.soonest[2]
    }

    /// Run every action due after `steps` steps (`accesses` measured) on kernel `k` (workload
    /// memcg `t`), in script order, logging each into `log`. An action due several times over (a
    /// long step on the clock) runs once and is rescheduled past now.
    pub fn run_due<P: Policy>(
        &mut self,
        s: &Script,
        k: &mut Kernel<P>,
        t: MemcgId,
        steps: u64,
        accesses: u64,
        log: &mut Vec<Record>,
    ) {
        for (i, a) in s.actions.iter().enumerate() {
            let now = match a.when.unit {
                Unit::Accesses => accesses,
                Unit::Steps => steps,
                Unit::Ms => k.m.now_ns,
            };
            if now < self.next[i] {
                continue;
            }
            log.push(apply(k, t, a, steps, accesses));
            if a.write.is_some() && k.m.debug_checks && k.m.check_failure.is_none() {
                if let Err(e) = k.check() {
                    k.m.check_failure = Some(format!(
                        "after writing {:?} to {} (control script line {}): {e}",
                        a.write.as_deref().unwrap_or(""),
                        a.file.name(),
                        a.line
                    ));
                }
            }
            self.next[i] = match a.when.every.map(|e| scaled(a.when.unit, e)) {
                None => u64::MAX,
                Some(e) => {
                    let mut n = self.next[i].saturating_add(e);
                    while n <= now && n != u64::MAX {
                        n = n.saturating_add(e);
                    }
                    n
                }
            };
        }
        self.refresh(s);
    }
}

/// Run action `a` now.
pub fn apply<P: Policy>(k: &mut Kernel<P>, t: MemcgId, a: &Action, steps: u64, accesses: u64) -> Record {
    let time_ms = k.m.now_ns as f64 / 1e6;
    let mut r = Record {
        step: steps,
        accesses,
        time_ms,
        file: a.file.name().to_string(),
        write: a.write.clone(),
        memcg: a.memcg.clone(),
        ok: true,
        errno: None,
        text: None,
        reclaimed: None,
        line: a.line,
    };
    // the memcg whose file it is (`memcg = "a"`: `a` below the workload memcg)
    let t = match a.memcg.as_deref().map(|rel| below(k, t, rel)).transpose() {
        Ok(c) => c.unwrap_or(t),
        Err((e, why)) => {
            r.ok = false;
            r.errno = Some(e);
            r.text = Some(why);
            return r;
        }
    };
    match &a.write {
        None => match read(k, t, a.file) {
            Ok(text) => r.text = Some(text),
            Err((e, why)) => {
                r.ok = false;
                r.errno = Some(e);
                r.text = Some(why);
            }
        },
        Some(v) => match expand(k, t, v).and_then(|v| {
            r.write = Some(v.clone());
            write(k, t, a.file, &v)
        }) {
            Ok(reclaimed) => r.reclaimed = reclaimed,
            Err((e, why)) => {
                r.ok = false;
                r.errno = Some(e);
                r.text = Some(why);
            }
        },
    }
    k.reap_memcgs();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Script, CtlError> {
        Script::parse(s, Path::new("s.toml"))
    }

    #[test]
    fn a_script_parses_into_its_actions() {
        let s = parse(
            "[[action]]\nat = 0\nevery = 5\nread = \"lru_gen\"\n\n[[action]]\nat_ms = 1500\nwrite = \"/sys/fs/cgroup/t/memory.max\"\nvalue = \"16M\"\n\n[[action]]\nat = 7\nwrite = \"vm.swappiness\"\nvalue = 10\n",
        )
        .unwrap();
        assert_eq!(s.actions.len(), 3);
        assert_eq!(
            s.actions[0],
            Action {
                when: When {
                    unit: Unit::Accesses,
                    at: 0,
                    every: Some(5)
                },
                file: CtlFile::LruGen,
                write: None,
                memcg: None,
                line: 1
            }
        );
        assert_eq!(
            s.actions[1].when,
            When {
                unit: Unit::Ms,
                at: 1500,
                every: None
            }
        );
        assert_eq!(s.actions[1].file, CtlFile::MemoryMax);
        assert_eq!(s.actions[1].write.as_deref(), Some("16M"));
        assert_eq!(s.actions[1].line, 6);
        assert_eq!(s.actions[2].write.as_deref(), Some("10"));
        assert!(s.uses_clock());
    }

    #[test]
    fn bad_scripts_name_the_line_and_what_was_expected() {
        for (text, line, expect) in [
            (
                "[[action]]\nat = 1\nread = \"memory.bogus\"\n",
                3,
                "unknown control file 'memory.bogus'",
            ),
            ("[[action]]\nat = 1\nread = \"memory.reclaim\"\n", 3, "write only"),
            (
                "[[action]]\nat = 1\nwrite = \"memory.stat\"\nvalue = \"1\"\n",
                3,
                "read only",
            ),
            ("[[action]]\nat = 1\nwrite = \"memory.max\"\n", 3, "needs `value`"),
            ("[[action]]\nread = \"lru_gen\"\n", 1, "needs `at`"),
            ("[[action]]\nat = -1\nread = \"lru_gen\"\n", 2, "at least 0"),
            ("[[action]]\nat = 1\nevery = 0\nread = \"lru_gen\"\n", 3, "at least 1"),
            (
                "[[action]]\nat = 1\nat_ms = 2\nread = \"lru_gen\"\n",
                3,
                "both `at` and `at_ms`",
            ),
            (
                "[[action]]\nat_step = 1\nat_ms = 2\nread = \"lru_gen\"\n",
                3,
                "both `at_step` and `at_ms`",
            ),
            (
                "[[action]]\nat = 1\nread = \"lru_gen\"\nvalue = \"x\"\n",
                4,
                "a read takes none",
            ),
            ("[[action]]\nat = 1\n", 1, "needs `read` or `write`"),
            (
                "[[action]]\nat = 1\nwhen = 3\nread = \"lru_gen\"\n",
                3,
                "unknown field `when`",
            ),
            ("[[action]]\nat = 1\nread = lru_gen\n", 3, ""),
            (
                "[[action]]\nat = 1\nwrite = \"memory.max\"\nvalue = 1.5\n",
                4,
                "expected a string or a whole number",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.at.map(|a| a.0), Some(line), "{text:?}: {e}");
            assert!(e.message.contains(expect), "{text:?}: {e}");
            assert!(e.to_string().starts_with(&format!("s.toml:{line}:")), "{e}");
        }
    }

    #[test]
    fn placeholders_are_checked_when_the_script_is_read() {
        let ok = placeholders("- {memcg} {node} {max_seq-2} 200 {min_seq+10}").unwrap();
        let names: Vec<(&str, i64)> = ok.iter().map(|(n, o, _)| (*n, *o)).collect();
        assert_eq!(names, [("memcg", 0), ("node", 0), ("max_seq", -2), ("min_seq", 10)]);
        for (bad, expect) in [
            ("+ {memcg 0 3", "without its `}`"),
            ("+ 2 0 3}", "without its `{`"),
            ("{maxseq}", "unknown name 'maxseq'"),
            ("{max_seq-}", "expected a whole number after `-`"),
            ("{max_seq-x}", "expected a whole number"),
            ("{max_seq+-1}", "expected a whole number"),
        ] {
            let e = placeholders(bad).unwrap_err();
            assert!(e.contains(expect), "{bad}: {e}");
        }
        let e = parse("[[action]]\nat = 1\nwrite = \"lru_gen\"\nvalue = \"+ {memcg} 0 {max}\"\n").unwrap_err();
        assert_eq!(e.at.map(|a| a.0), Some(4), "{e}");
    }

    #[test]
    fn msecs_to_jiffies_rounds_up_as_the_kernel_does() {
        assert_eq!(msecs_to_jiffies(0), 0);
        assert_eq!(msecs_to_jiffies(1), 1);
        assert_eq!(msecs_to_jiffies(4), 1);
        assert_eq!(msecs_to_jiffies(5), 2);
        assert_eq!(msecs_to_jiffies(1000), 250);
    }

    #[test]
    fn proc_ints_as_proc_dointvec_reads_them() {
        assert_eq!(parse_proc_int("60\n"), Some(60));
        assert_eq!(parse_proc_int(" 7 "), Some(7));
        assert_eq!(parse_proc_int("-3"), Some(-3));
        assert_eq!(parse_proc_int("6x"), None);
        assert_eq!(parse_proc_int(""), None);
        assert_eq!(parse_proc_int("0x10"), Some(16));
        assert_eq!(parse_proc_int("010"), Some(8));
        assert_eq!(parse_proc_int("1K"), None);
    }
}

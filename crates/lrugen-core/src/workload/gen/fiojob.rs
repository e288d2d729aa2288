// SPDX-License-Identifier: GPL-2.0-only
//! fio job files (`fio JOB.fio`), read as fio reads them — `[global]` and job sections,
//! `key=value` and bare flags, `;`/`#` comments (whole lines, and the rest of a line after either,
//! as fio's `strip_blank_end` cuts them), options a job inherits from `[global]` above it, sizes
//! with fio's suffixes and `kb_base` rule ([`size_in`]) — and turned into lrugen's fio workload
//! ([`JobFile::to_run`]), refusing by name what the model cannot run. [`FioRun::jobs_desc`] keeps
//! what fio's reports name (job names, groups, `group_reporting`, options as written).
//! docs/benchmarks.md lists the options.

use crate::workload::{MixPart, WorkloadSpec};

/// A malformed or unmodelled job file: the line and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobError {
    /// Line (1-based), 0 for the file as a whole.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for JobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for JobError {}

fn err<T>(line: usize, message: impl Into<String>) -> Result<T, JobError> {
    Err(JobError {
        line,
        message: message.into(),
    })
}

/// One option as written: key (with `-` read as `_`), value (`None` for a bare flag), line.
#[derive(Clone, Debug)]
struct Opt {
    key: String,
    value: Option<String>,
    line: usize,
}

/// A section: its name, the line of its header and its options (the first `inherited` of them
/// from the `[global]` sections above it).
#[derive(Clone, Debug)]
struct Section {
    name: String,
    line: usize,
    opts: Vec<Opt>,
    inherited: usize,
}

/// A job file: its job sections, each with the `[global]` options given above it.
#[derive(Clone, Debug)]
pub struct JobFile {
    jobs: Vec<Section>,
    /// The options of every `[global]` section, in order (fio's "global options").
    global: Vec<Opt>,
}

/// One job section as fio's reports name it.
#[derive(Clone, Debug, PartialEq)]
pub struct JobDesc {
    /// The job's name: its section's, or its `name=`.
    pub name: String,
    /// The header's line.
    pub line: usize,
    /// Copies of it (`numjobs`), each a job of its own in fio's output.
    pub numjobs: u32,
    /// fio's reporting group: 0 for the first, one more at each `new_group` (or `stonewall` on
    /// the first job, where there is nothing to wait for) after a job.
    pub groupid: u32,
    /// `group_reporting`: the jobs of its group are reported as one.
    pub group_reporting: bool,
    /// `rw` as given (`randread`, …).
    pub rw: String,
    /// `ioengine` as given.
    pub ioengine: String,
    /// `iodepth` as given (1 by default).
    pub iodepth: u32,
    /// I/O size in bytes (4096: the only one modelled).
    pub bs: u64,
    /// Whether the job reads (`rw` has reads) and writes.
    pub reads: bool,
    /// See `reads`.
    pub writes: bool,
    /// The section's own options as written (key, value; a bare flag has an empty value), as
    /// fio's JSON lists them under "job options".
    pub options: Vec<(String, String)>,
}

/// The I/O-size unit rule of fio's `kb_base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KbBase {
    /// `kb_base=1024`, fio's default ("compatibility mode"): `k`, `kb`, `m`, … are powers of 1024,
    /// and the IEC `kib`, `mib`, … powers of 1000.
    Compat,
    /// `kb_base=1000`: `k`, `kb`, … are powers of 1000 (SI) and `kib`, `mib`, … powers of 1024.
    Si,
}

/// What fio runs for a job file, as lrugen runs it.
#[derive(Clone, Debug)]
pub struct FioRun {
    /// One job section: its fio workload; several: a mix with one part per section.
    pub workload: WorkloadSpec,
    /// `numjobs` of a single job section (each a copy with its own file); 1 for a mix, whose
    /// parts carry theirs.
    pub jobs: u32,
    /// `ramp_time` + `runtime` (ns), if a runtime is given: no job starts an I/O after it (with
    /// `time_based`, the jobs loop over their files until then). fio's ramp is lead-in time that
    /// adds to the runtime, so the measured window is `runtime` long.
    pub runtime_ns: Option<u64>,
    /// `ramp_time` (ns): run but not measured.
    pub ramp_ns: Option<u64>,
    /// Options accepted that change nothing the model simulates.
    pub ignored: Vec<String>,
    /// Notes on how an option was read (e.g. libaio's buffered I/O being synchronous).
    pub notes: Vec<String>,
    /// The job sections in order, as fio's reports name them.
    pub jobs_desc: Vec<JobDesc>,
    /// The `[global]` options as written (fio's JSON "global options").
    pub global_options: Vec<(String, String)>,
}

impl JobFile {
    /// Parse `text` (a job file's contents).
    pub fn parse(text: &str) -> Result<JobFile, JobError> {
        let mut global: Vec<Opt> = Vec::new();
        let mut jobs: Vec<Section> = Vec::new();
        let mut current: Option<Section> = None;
        let mut all_global: Vec<Opt> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            // fio cuts a line at its first ';' or '#' (strip_blank_end), so a comment may follow
            // an option on its line
            let t = raw.split([';', '#']).next().unwrap_or("").trim();
            if t.is_empty() {
                continue;
            }
            if t.contains('$') {
                return err(
                    line,
                    format!("'{t}': environment variables are not expanded; expected a literal value"),
                );
            }
            if let Some(rest) = t.strip_prefix('[') {
                let Some(name) = rest.strip_suffix(']') else {
                    return err(line, format!("'{t}': expected a section header [name]"));
                };
                let name = name.trim();
                if name.is_empty() {
                    return err(line, "'[]': expected a section name");
                }
                if let Some(s) = current.take() {
                    if is_global(&s.name) {
                        all_global.extend(s.opts.iter().cloned());
                        global.extend(s.opts);
                    } else {
                        jobs.push(s);
                    }
                }
                let opts = if is_global(name) { Vec::new() } else { global.clone() };
                current = Some(Section {
                    name: name.to_string(),
                    line,
                    inherited: opts.len(),
                    opts,
                });
                continue;
            }
            if t.starts_with("include ") {
                return err(
                    line,
                    format!("'{t}': include files are not read; expected the options in this file"),
                );
            }
            let (key, value) = match t.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
                None => (t, None),
            };
            if key.is_empty() {
                return err(line, format!("'{t}': expected key=value"));
            }
            let Some(s) = current.as_mut() else {
                return err(
                    line,
                    format!("'{t}': an option before any section; expected [global] or [jobname] first"),
                );
            };
            s.opts.push(Opt {
                key: key.replace('-', "_"),
                value,
                line,
            });
        }
        if let Some(s) = current.take() {
            if is_global(&s.name) {
                all_global.extend(s.opts);
            } else {
                jobs.push(s);
            }
        }
        if jobs.is_empty() {
            return err(
                0,
                "no job section: expected at least one [jobname] section besides [global]",
            );
        }
        Ok(JobFile {
            jobs,
            global: all_global,
        })
    }

    /// The job file as lrugen runs it (4 KiB I/Os, buffered, one file per job or a union of
    /// uniformly chosen files).
    pub fn to_run(&self) -> Result<FioRun, JobError> {
        let mut parts = Vec::new();
        let (mut runtime, mut ramp) = (None, None);
        let mut ignored: Vec<String> = Vec::new();
        let mut notes = Vec::new();
        let mut jobs_desc: Vec<JobDesc> = Vec::new();
        let mut files: Vec<(String, usize)> = Vec::new();
        for s in &self.jobs {
            let j = Job::of(s, &mut ignored, &mut notes)?;
            if let Some((f, line)) = &j.filename {
                if let Some((_, first)) = files.iter().find(|x| &x.0 == f) {
                    return err(
                        *line,
                        format!(
                            "filename={f}: the file of the job at line {first} too; jobs sharing a file are not \
                             modelled, expected a file of its own per job"
                        ),
                    );
                }
                files.push((f.clone(), *line));
            }
            // fio's add_job: a new group at a job with new_group or stonewall, once the group
            // before it has a job; stonewall after a job makes it wait, which is not modelled
            let groupid = match jobs_desc.last() {
                None => 0,
                Some(prev) => {
                    if let Some(l) = j.stonewall {
                        return err(
                            l,
                            format!(
                                "[{}]: stonewall after [{}]: jobs that wait for the ones before them are not \
                                 modelled (one run has every job side by side); expected no stonewall or \
                                 wait_for, or one job file per phase",
                                s.name, prev.name
                            ),
                        );
                    }
                    prev.groupid + u32::from(j.new_group)
                }
            };
            jobs_desc.push(JobDesc {
                groupid,
                ..j.desc.clone()
            });
            for (what, v, all) in [
                ("runtime", j.runtime_ns, &mut runtime),
                ("ramp_time", j.ramp_ns, &mut ramp),
            ] {
                match (*all, v) {
                    (None, v) => *all = Some(v),
                    (Some(a), v) if a != v => {
                        return err(
                            s.line,
                            format!(
                                "[{}]: {what} differs from an earlier job's; expected one {what} for all jobs",
                                s.name
                            ),
                        )
                    }
                    _ => {}
                }
            }
            parts.push(MixPart {
                workload: j.workload,
                jobs: j.numjobs,
                think_ns: 0,
                memcg: None,
            });
        }
        ignored.sort();
        ignored.dedup();
        let (workload, jobs) = if parts.len() == 1 {
            let p = parts.pop().expect("one part");
            (p.workload, p.jobs)
        } else {
            (WorkloadSpec::Mix { parts }, 1)
        };
        let ramp_ns = ramp.flatten();
        Ok(FioRun {
            workload,
            jobs,
            runtime_ns: runtime.flatten().map(|r| r.saturating_add(ramp_ns.unwrap_or(0))),
            ramp_ns,
            ignored,
            notes,
            jobs_desc,
            global_options: self.global.iter().map(Opt::written).collect(),
        })
    }
}

/// One job section read.
struct Job {
    workload: WorkloadSpec,
    numjobs: u32,
    runtime_ns: Option<u64>,
    ramp_ns: Option<u64>,
    /// `filename=` and its line.
    filename: Option<(String, usize)>,
    /// The line of a `stonewall`/`wait_for` that is set.
    stonewall: Option<usize>,
    /// `new_group` (or `stonewall`) set.
    new_group: bool,
    desc: JobDesc,
}

/// fio reads a section whose name starts with `global` as the global section.
fn is_global(name: &str) -> bool {
    name.starts_with("global")
}

impl Opt {
    /// (key, value) as written; a bare flag has an empty value.
    fn written(&self) -> (String, String) {
        (self.key.clone(), self.value.clone().unwrap_or_default())
    }
}

/// Options that change nothing lrugen models.
const IGNORED: [&str; 20] = [
    "description",
    "directory",
    "norandommap",
    "randrepeat",
    "allrandrepeat",
    "randseed",
    "random_generator",
    "thread",
    "iodepth_batch",
    "iodepth_batch_submit",
    "iodepth_batch_complete",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "iodepth_low",
    "percentile_list",
    "clat_percentiles",
    "lat_percentiles",
    "unlink",
    "create_on_open",
    "end_fsync",
];

/// Options refused by name, with why.
const REFUSED: [(&str, &str); 17] = [
    ("wait_for", "jobs that wait for each other"),
    ("startdelay", "delayed job starts"),
    ("rate", "rate-limited I/O"),
    ("rate_iops", "rate-limited I/O"),
    ("thinktime", "think time between I/Os"),
    ("bsrange", "I/O sizes other than 4 KiB"),
    ("bssplit", "I/O sizes other than 4 KiB"),
    ("blocksize_range", "I/O sizes other than 4 KiB"),
    ("offset", "I/O at an offset into the file"),
    ("offset_increment", "I/O at an offset into the file"),
    ("zonemode", "zoned I/O"),
    ("verify", "verification reads"),
    ("fsync", "fsync after writes"),
    ("fdatasync", "fsync after writes"),
    ("sync", "synchronous (O_SYNC) writes"),
    ("mem", "I/O buffers of a particular memory type"),
    ("file_service_type", "a file service order other than fio's default"),
];

/// A size in bytes as fio reads one (`parse.c`, `__get_mult_bytes`): a whole number, decimal or
/// `0x` hex, then an optional suffix, case-insensitive: `b`; `k`/`kb`, `m`/`mb`, `g`/`gb`,
/// `t`/`tb`, `p`/`pb`, powers of 1024 under fio's default `kb_base=1024` and of 1000 under
/// `kb_base=1000`; and the IEC `kib`, `mib`, `gib`, `tib`, `pib`, which fio reads the *other* way
/// round (powers of 1000 under the default, of 1024 under `kb_base=1000`: its "compatibility
/// mode"). What fio would read as something else (`1.5g` is one byte to fio, `4x` four bytes) is
/// an error here. The error is the reason, without the key.
pub fn size_in(v: &str, kb: KbBase) -> Result<u64, String> {
    let s = v.trim().to_ascii_lowercase();
    let bad = || {
        format!(
            "expected a whole number with an optional suffix k, m, g, t, p (powers of {}), kib, mib, gib, tib, \
             pib (powers of {}) or b, such as 4k or 64m",
            if kb == KbBase::Compat { 1024 } else { 1000 },
            if kb == KbBase::Compat { 1000 } else { 1024 },
        )
    };
    let (digits, suffix, radix) = match s.strip_prefix("0x") {
        Some(hex) => {
            let end = hex.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(hex.len());
            (&hex[..end], &hex[end..], 16)
        }
        None => {
            let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
            (&s[..end], &s[end..], 10)
        }
    };
    if digits.is_empty() {
        return Err(bad());
    }
    let n = u64::from_str_radix(digits, radix).map_err(|_| bad())?;
    let (si, iec) = match kb {
        KbBase::Compat => (1024u64, 1000u64),
        KbBase::Si => (1000, 1024),
    };
    let (base, pow) = match suffix.trim() {
        "" | "b" => (1, 0),
        "k" | "kb" => (si, 1),
        "m" | "mb" => (si, 2),
        "g" | "gb" => (si, 3),
        "t" | "tb" => (si, 4),
        "p" | "pb" => (si, 5),
        "kib" => (iec, 1),
        "mib" => (iec, 2),
        "gib" => (iec, 3),
        "tib" => (iec, 4),
        "pib" => (iec, 5),
        _ => return Err(bad()),
    };
    n.checked_mul(base.pow(pow)).ok_or_else(|| "too large".to_string())
}

/// [`size_in`] for option `key` at `line`.
fn size(line: usize, key: &str, v: &str, kb: KbBase) -> Result<u64, JobError> {
    size_in(v, kb).map_err(|why| JobError {
        line,
        message: format!("{key}={v}: {why}"),
    })
}

/// A time in ns as fio reads `runtime` and `ramp_time`: seconds unless suffixed `us`/`usec`,
/// `ms`/`msec`, `s`, `m` (minutes), `h` or `d`, case-insensitive. (fio reads any other suffix,
/// `10sec` say, as microseconds; that is an error here.)
fn time(line: usize, key: &str, v: &str) -> Result<u64, JobError> {
    let s = v.trim().to_ascii_lowercase();
    let (num, unit): (&str, u64) = if let Some(n) = s.strip_suffix("usec").or_else(|| s.strip_suffix("us")) {
        (n, 1_000)
    } else if let Some(n) = s.strip_suffix("msec").or_else(|| s.strip_suffix("ms")) {
        (n, 1_000_000)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1_000_000_000)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60_000_000_000)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3_600_000_000_000)
    } else if let Some(n) = s.strip_suffix('d') {
        (n, 86_400_000_000_000)
    } else {
        (&s, 1_000_000_000)
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(|| JobError {
            line,
            message: format!(
                "{key}={v}: expected a whole number of seconds, or with a suffix us, usec, ms, msec, s, m, h or d \
                 (60, 500ms, 10m)"
            ),
        })
}

fn flag(line: usize, key: &str, v: Option<&str>) -> Result<bool, JobError> {
    match v.map(str::trim) {
        None | Some("1") | Some("true") => Ok(true),
        Some("0") | Some("false") => Ok(false),
        Some(o) => err(line, format!("{key}={o}: expected 0 or 1")),
    }
}

fn count(line: usize, key: &str, v: &str) -> Result<u64, JobError> {
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| JobError {
            line,
            message: format!("{key}={v}: expected a whole number of at least 1"),
        })
}

impl Job {
    fn of(s: &Section, ignored: &mut Vec<String>, notes: &mut Vec<String>) -> Result<Job, JobError> {
        // the last value of each option wins, as in fio
        let mut rw = ("read".to_string(), s.line);
        let (mut size_b, mut filesize, mut io_size, mut number_ios) = (None, None, None, None);
        let (mut nrfiles, mut numjobs, mut iodepth, mut loops) = (1u64, 1u64, 1u64, 1u64);
        let mut ioengine = ("psync".to_string(), s.line);
        let mut dist = "random".to_string();
        let (mut time_based, mut runtime, mut ramp) = (false, None, None);
        let (mut rwmixread, mut fadvise) = (None, "1".to_string());
        let mut filename: Option<(String, usize)> = None;
        let mut name = s.name.clone();
        let (mut stonewall, mut new_group, mut group_reporting) = (None, false, false);
        // fio parses kb_base before the sizes (options go by priority), so its last value counts
        // for every size of the job, wherever it is written
        let mut kb = KbBase::Compat;
        for o in s.opts.iter().filter(|o| o.key == "kb_base") {
            kb = match o.value.as_deref().map(str::trim) {
                Some("1024") => KbBase::Compat,
                Some("1000") => KbBase::Si,
                v => return err(o.line, format!("kb_base={}: expected 1024 or 1000", v.unwrap_or(""))),
            };
        }
        for o in &s.opts {
            let (k, line) = (o.key.as_str(), o.line);
            let v = || -> Result<&str, JobError> {
                o.value.as_deref().ok_or_else(|| JobError {
                    line,
                    message: format!("{k}: expected {k}=VALUE"),
                })
            };
            match k {
                "rw" | "readwrite" => rw = (v()?.to_string(), line),
                "bs" | "blocksize" => {
                    for part in v()?.split(',') {
                        let b = if part.trim().is_empty() {
                            4096
                        } else {
                            size(line, k, part, kb)?
                        };
                        if b != 4096 {
                            return err(
                                line,
                                format!(
                                    "{k}={}: {b} bytes; only 4 KiB (4096-byte) I/Os are modelled, expected bs=4k{}",
                                    v()?,
                                    if part.to_ascii_lowercase().contains("ib") && kb == KbBase::Compat {
                                        " (fio reads KiB as 1000 bytes unless kb_base=1000)"
                                    } else {
                                        ""
                                    }
                                ),
                            );
                        }
                    }
                }
                "size" => {
                    if v()?.ends_with('%') {
                        return err(
                            line,
                            format!("size={}: a size in percent of the file is not modelled", v()?),
                        );
                    }
                    size_b = Some(size(line, k, v()?, kb)?)
                }
                "filesize" => filesize = Some(size(line, k, v()?, kb)?),
                "io_size" | "io_limit" => io_size = Some(size(line, k, v()?, kb)?),
                "number_ios" => number_ios = Some(count(line, k, v()?)?),
                "nrfiles" => nrfiles = count(line, k, v()?)?,
                "numjobs" => numjobs = count(line, k, v()?)?,
                "iodepth" => iodepth = count(line, k, v()?)?,
                "loops" => loops = count(line, k, v()?)?,
                "ioengine" => ioengine = (v()?.to_string(), line),
                "direct" => {
                    if flag(line, k, o.value.as_deref())? {
                        return err(line, "direct=1: O_DIRECT I/O bypasses the page cache, which is what lrugen models; expected direct=0");
                    }
                }
                "buffered" => {
                    if !flag(line, k, o.value.as_deref())? {
                        return err(line, "buffered=0: O_DIRECT I/O bypasses the page cache, which is what lrugen models; expected buffered=1");
                    }
                }
                "random_distribution" => {
                    // checked here, so that a bad value names its own line, not the section's
                    let val = v()?;
                    if let Err(e) = val.parse::<crate::workload::gen::fio::FioDist>() {
                        return err(line, format!("random_distribution={val}: {}", e.0));
                    }
                    dist = val.to_string();
                }
                "time_based" => time_based = flag(line, k, o.value.as_deref())?,
                "runtime" | "timeout" => runtime = Some(time(line, k, v()?)?),
                "ramp_time" => ramp = Some(time(line, k, v()?)?),
                "rwmixread" | "rwmixwrite" => {
                    let val = v()?;
                    let p: u64 = val.trim().parse().ok().filter(|&p| p <= 100).ok_or_else(|| JobError {
                        line,
                        message: format!("{k}={val}: expected a percentage 0..=100"),
                    })?;
                    rwmixread = Some(if k == "rwmixread" { p } else { 100 - p });
                }
                "fadvise_hint" => fadvise = v()?.trim().to_string(),
                "filename" => {
                    let f = v()?.trim();
                    if f.contains(':') {
                        return err(
                            line,
                            format!(
                                "filename={f}: several files (':') are not modelled; expected one file, or \
                                 nrfiles= without filename"
                            ),
                        );
                    }
                    filename = Some((f.to_string(), line));
                }
                "kb_base" => {}
                "name" => name = v()?.trim().to_string(),
                "group_reporting" => group_reporting = flag(line, k, o.value.as_deref())?,
                "new_group" => new_group = flag(line, k, o.value.as_deref())? || new_group,
                "stonewall" | "wait_for_previous" => {
                    if flag(line, k, o.value.as_deref())? {
                        stonewall = Some(line);
                        new_group = true;
                    }
                }
                "invalidate" => {
                    if !flag(line, k, o.value.as_deref())? {
                        return err(
                            line,
                            "invalidate=0: the files would start with what laying them out left cached; lrugen's \
                             files start uncached, as after fio's default invalidate=1",
                        );
                    }
                }
                _ if IGNORED.contains(&k) => ignored.push(k.to_string()),
                _ => {
                    if let Some((_, why)) = REFUSED.iter().find(|(r, _)| *r == k) {
                        return err(line, format!("{k}: {why} are not modelled"));
                    }
                    return err(
                        line,
                        format!(
                            "unknown or unmodelled fio option '{k}': expected one of rw, bs, size, filesize, nrfiles, \
                             numjobs, iodepth, ioengine, direct, buffered, random_distribution, time_based, runtime, \
                             ramp_time, rwmixread, rwmixwrite, fadvise_hint, io_size, number_ios, loops, filename, \
                             invalidate, kb_base, name, new_group, stonewall (first job), group_reporting, \
                             or an option that changes nothing in the model (docs/benchmarks.md)"
                        ),
                    );
                }
            }
        }
        let (sequential, write_ratio) = match rw.0.as_str() {
            "read" => (true, 0.0),
            "write" => (true, 1.0),
            "randread" => (false, 0.0),
            "randwrite" => (false, 1.0),
            "rw" | "readwrite" => (true, 1.0 - rwmixread.unwrap_or(50) as f64 / 100.0),
            "randrw" => (false, 1.0 - rwmixread.unwrap_or(50) as f64 / 100.0),
            other => {
                return err(
                    rw.1,
                    format!("rw={other}: expected read, write, randread, randwrite, rw, readwrite or randrw"),
                )
            }
        };
        let depth = match ioengine.0.as_str() {
            "sync" | "psync" | "vsync" | "pvsync" | "pvsync2" => 1,
            "libaio" => {
                if iodepth > 1 {
                    notes.push(format!(
                        "[{}]: ioengine=libaio with buffered I/O submits synchronously (io_submit blocks on \
                         a page-cache miss), so iodepth={iodepth} runs as 1",
                        s.name
                    ));
                }
                1
            }
            "io_uring" => iodepth,
            other => {
                return err(
                    ioengine.1,
                    format!("ioengine={other}: expected sync, psync, vsync, pvsync, pvsync2, libaio or io_uring"),
                )
            }
        };
        let total = match (size_b, filesize) {
            (Some(sz), _) => sz,
            (None, Some(fs)) => fs.saturating_mul(nrfiles),
            (None, None) => return err(s.line, format!("[{}]: no size: expected size= or filesize=", s.name)),
        };
        let file_pages = total / 4096;
        if file_pages == 0 || file_pages > u64::from(u32::MAX) {
            return err(
                s.line,
                format!("[{}]: size of {total} bytes: expected 4 KiB to 16 TiB", s.name),
            );
        }
        if nrfiles > 1 && (sequential || dist != "random") {
            return err(
                s.line,
                format!(
                    "[{}]: nrfiles={nrfiles} with {}: only uniformly random I/O over several files is modelled \
                     (as one file of their total size)",
                    s.name,
                    if sequential {
                        "sequential I/O"
                    } else {
                        "a non-uniform random_distribution"
                    }
                ),
            );
        }
        if let Some((_, l)) = &filename {
            if numjobs > 1 {
                return err(*l, "filename= with numjobs > 1: jobs sharing one file are not modelled; expected no filename (each job its own file)");
            }
            if nrfiles > 1 {
                return err(
                    *l,
                    format!("filename= with nrfiles={nrfiles}: fio uses the one file named; expected one of them"),
                );
            }
        }
        if kb == KbBase::Si && dist.starts_with("zoned_abs") {
            return err(
                s.line,
                format!(
                    "[{}]: random_distribution={dist} with kb_base=1000: zone sizes are read in base 1024; \
                     expected kb_base=1024 or zoned:",
                    s.name
                ),
            );
        }
        if ramp.is_some() && !time_based {
            notes.push(format!(
                "[{}]: ramp_time without time_based: the ramp's I/Os count against size",
                s.name
            ));
        }
        let per_job = number_ios
            .unwrap_or_else(|| io_size.unwrap_or(total) / 4096)
            .saturating_mul(loops);
        let accesses = if time_based {
            // an upper bound: no I/O takes less than a page-cache hit (1 µs) of CPU per in-flight slot
            let rt = runtime.ok_or_else(|| JobError {
                line: s.line,
                message: format!("[{}]: time_based without runtime: expected runtime=", s.name),
            })?;
            (rt.saturating_add(ramp.unwrap_or(0)) / 1_000)
                .saturating_mul(depth)
                .max(per_job)
        } else {
            per_job
        };
        let workload = WorkloadSpec::Fio {
            dist,
            file_pages,
            accesses,
            write_ratio,
            sequential,
            iodepth: u32::try_from(depth).map_err(|_| JobError {
                line: ioengine.1,
                message: format!("iodepth={depth}: too deep"),
            })?,
            fadvise_hint: fadvise,
        };
        workload.validate().map_err(|e| JobError {
            line: s.line,
            message: format!("[{}]: {e}", s.name),
        })?;
        let desc = JobDesc {
            name,
            line: s.line,
            numjobs: u32::try_from(numjobs).unwrap_or(u32::MAX),
            groupid: 0,
            group_reporting,
            rw: rw.0.clone(),
            ioengine: ioengine.0.clone(),
            iodepth: u32::try_from(iodepth).unwrap_or(u32::MAX),
            bs: 4096,
            reads: write_ratio < 1.0,
            writes: write_ratio > 0.0,
            options: s.opts[s.inherited..].iter().map(Opt::written).collect(),
        };
        Ok(Job {
            filename,
            stonewall,
            new_group,
            desc,
            workload,
            numjobs: u32::try_from(numjobs).map_err(|_| JobError {
                line: s.line,
                message: format!("numjobs={numjobs}: too many"),
            })?,
            runtime_ns: runtime,
            ramp_ns: ramp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MGLRU cover letter's fio run, scaled: global options inherited, units, flags.
    #[test]
    fn a_buffered_random_read_job() {
        let text = "; the MGLRU series' fio benchmark, scaled down\n[global]\nioengine=io_uring\niodepth=4\n\
                    buffered=1\nrw=randread\nrandom_distribution=zipf:0.8\nnorandommap\ntime_based\nruntime=2s\n\
                    ramp_time=500ms\ngroup_reporting\n\n[mglru]\nnumjobs=2\nsize=64m\n";
        let r = JobFile::parse(text).unwrap().to_run().unwrap();
        assert_eq!(r.jobs, 2);
        assert_eq!(
            r.runtime_ns,
            Some(2_500_000_000),
            "the ramp is lead-in time before the runtime"
        );
        assert_eq!(r.ramp_ns, Some(500_000_000));
        assert_eq!(r.ignored, ["norandommap"]);
        assert_eq!(r.jobs_desc.len(), 1);
        let d = &r.jobs_desc[0];
        assert_eq!(
            (d.name.as_str(), d.numjobs, d.groupid, d.group_reporting, d.iodepth),
            ("mglru", 2, 0, true, 4)
        );
        assert_eq!(
            (d.reads, d.writes, d.rw.as_str(), d.ioengine.as_str()),
            (true, false, "randread", "io_uring")
        );
        assert_eq!(
            d.options,
            [("numjobs".to_string(), "2".to_string()), ("size".into(), "64m".into())],
            "its own options, not [global]'s"
        );
        assert_eq!(r.global_options.len(), 10);
        assert_eq!(r.global_options[7], ("runtime".to_string(), "2s".to_string()));
        assert_eq!(r.global_options[6], ("time_based".to_string(), String::new()));
        match r.workload {
            WorkloadSpec::Fio {
                dist,
                file_pages,
                accesses,
                write_ratio,
                sequential,
                iodepth,
                fadvise_hint,
            } => {
                assert_eq!(
                    (dist.as_str(), file_pages, write_ratio, sequential),
                    ("zipf:0.8", 16_384, 0.0, false)
                );
                assert_eq!((iodepth, fadvise_hint.as_str()), (4, "1"));
                assert_eq!(accesses, 2_500_000 * 4, "2.5 s at most one I/O per µs per slot");
            }
            w => panic!("{w:?}"),
        }
    }

    /// Two job sections make a mix; sequential reads, rwmix, io counts, libaio's note.
    #[test]
    fn two_jobs_are_a_mix() {
        let text = "[global]\nsize=8m\n[seq]\nrw=read\nloops=2\n[mixed]\nrw=randrw\nrwmixread=70\nioengine=libaio\n\
                    iodepth=16\nnumjobs=3\nnumber_ios=1000\n";
        let r = JobFile::parse(text).unwrap().to_run().unwrap();
        assert!(r.notes[0].contains("libaio"), "{:?}", r.notes);
        let WorkloadSpec::Mix { parts } = &r.workload else {
            panic!("{:?}", r.workload)
        };
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[1].jobs, 3);
        match (&parts[0].workload, &parts[1].workload) {
            (
                WorkloadSpec::Fio {
                    sequential: true,
                    accesses: a,
                    ..
                },
                WorkloadSpec::Fio {
                    sequential: false,
                    accesses: b,
                    write_ratio,
                    iodepth: 1,
                    ..
                },
            ) => {
                assert_eq!((*a, *b), (2 * 2048, 1000));
                assert!((write_ratio - 0.3).abs() < 1e-12);
            }
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn errors_name_the_line() {
        for (text, line, needle) in [
            ("size=1m\n", 1, "before any section"),
            ("[j]\nsize=1m\nbs=16k\n", 3, "only 4 KiB"),
            ("[j]\nsize=1m\ndirect=1\n", 3, "O_DIRECT"),
            ("[j]\nsize=lots\n", 2, "size=lots: expected a whole number"),
            ("[j]\nsize=1.5g\n", 2, "size=1.5g: expected a whole number"),
            ("[j]\nsize=4x\n", 2, "size=4x: expected a whole number"),
            ("[j]\nsize=1m\nkb_base=512\n", 3, "kb_base=512: expected 1024 or 1000"),
            ("[j]\nsize=1m\nbs=4KiB\n", 3, "4000 bytes"),
            (
                "[j]\nsize=1m\nruntime=10sec\n",
                3,
                "runtime=10sec: expected a whole number of seconds",
            ),
            ("[j]\nsize=1m\ninvalidate=0\n", 3, "invalidate=0"),
            ("[j]\nsize=1m\nfilename=a:b\n", 3, "several files"),
            (
                "[a]\nsize=1m\nfilename=/data/f\n[b]\nsize=1m\nfilename=/data/f\n",
                6,
                "the file of the job at line 3",
            ),
            ("[a]\nsize=1m\n[b]\nsize=1m\nstonewall\n", 5, "stonewall after [a]"),
            (
                "[global]\nstonewall\n[a]\nsize=1m\n[b]\nsize=1m\n",
                2,
                "stonewall after [a]",
            ),
            ("[j]\nsize=1m\nrw=trim\n", 3, "rw=trim"),
            ("[j]\nsize=1m\nioengine=mmap\n", 3, "ioengine=mmap"),
            ("[j]\nsize=1m\nthinktime=10\n", 3, "think time"),
            (
                "[j]\nsize=1m\nfrobnicate=1\n",
                3,
                "unknown or unmodelled fio option 'frobnicate'",
            ),
            ("[j]\nsize=1m\ntime_based\n", 1, "without runtime"),
            ("[j]\nrw=read\n", 1, "no size"),
            ("[j]\nsize=${SIZE}\n", 2, "environment variables"),
            ("[j\n", 1, "section header"),
            (
                "[j]\nsize=1m\nruntime=soon\n",
                3,
                "runtime=soon: expected a whole number of seconds",
            ),
            (
                "[j]\nsize=1m\nnrfiles=4\nrandom_distribution=zipf:1.1\n",
                1,
                "nrfiles=4",
            ),
            (
                "[a]\nsize=1m\nruntime=1\n[b]\nsize=1m\nruntime=2\n",
                4,
                "runtime differs",
            ),
            ("[j]\nsize=1m\nrandom_distribution=gauss\n", 3, "gauss"),
            ("[global]\nrandom_distribution=zipf:x\n[j]\nsize=1m\n", 2, "zipf:x"),
        ] {
            let e = JobFile::parse(text).and_then(|f| f.to_run()).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.message.contains(needle), "{text:?}: {e}");
        }
        assert!(JobFile::parse("[global]\nsize=1m\n")
            .unwrap_err()
            .message
            .contains("no job section"));
    }

    /// fio's size suffixes and its `kb_base` rule: `k`, `kb`, `m`, … follow `kb_base` (1024 by
    /// default) and the IEC `kib`, `mib`, … the other base; hex and `b`.
    #[test]
    fn sizes_follow_kb_base_as_fio_reads_them() {
        for (v, compat, si) in [
            ("4096", 4096, 4096),
            ("4096b", 4096, 4096),
            ("4k", 4096, 4000),
            ("4K", 4096, 4000),
            ("4kb", 4096, 4000),
            ("4KB", 4096, 4000),
            ("4KiB", 4000, 4096),
            ("64m", 64 << 20, 64_000_000),
            ("64MiB", 64_000_000, 64 << 20),
            ("2g", 2 << 30, 2_000_000_000),
            ("1GiB", 1_000_000_000, 1 << 30),
            ("1t", 1 << 40, 1_000_000_000_000),
            ("1p", 1 << 50, 1_000_000_000_000_000),
            ("0x1000", 4096, 4096),
            ("0x10k", 16 << 10, 16_000),
            (" 8m ", 8 << 20, 8_000_000),
        ] {
            assert_eq!(size_in(v, KbBase::Compat), Ok(compat), "{v}");
            assert_eq!(size_in(v, KbBase::Si), Ok(si), "{v} with kb_base=1000");
        }
        for bad in ["", "k", "1.5g", "4x", "4 k b", "-4k", "4kk", "99999999999999999999"] {
            assert!(size_in(bad, KbBase::Compat).is_err(), "{bad:?}");
        }
        assert!(size_in("16777216p", KbBase::Compat).is_err(), "overflow");
    }

    /// `kb_base=1000` counts for every size of its job wherever it is written (fio parses it
    /// first), and is inherited from `[global]`; `4KiB` is then 4096 bytes.
    #[test]
    fn kb_base_applies_to_the_whole_job() {
        let pages = |text: &str| match JobFile::parse(text).unwrap().to_run().unwrap().workload {
            WorkloadSpec::Fio { file_pages, .. } => file_pages,
            w => panic!("{w:?}"),
        };
        assert_eq!(pages("[j]\nsize=4096k\n"), 1024);
        assert_eq!(pages("[j]\nsize=4096000k\nkb_base=1000\n"), 1_000_000);
        assert_eq!(pages("[global]\nkb_base=1000\n[j]\nbs=4KiB\nsize=4096MiB\n"), 1 << 20);
        assert_eq!(
            pages("[j]\nsize=4096MiB\n"),
            4_096_000_000 / 4096,
            "KiB is 1000 by default"
        );
    }

    /// Comments after an option on its line, as fio cuts them; a `[global-…]` section is global;
    /// times with fio's suffixes.
    #[test]
    fn comments_globals_and_times() {
        let text = "[global] ; shared\nsize=1m   # a small file\nruntime=1500msec ; 1.5 s\n[global-more]\n\
                    ramp_time=250usec\n[j] # the job\nrw=randread;\n";
        let r = JobFile::parse(text).unwrap().to_run().unwrap();
        assert_eq!((r.runtime_ns, r.ramp_ns), (Some(1_500_250_000), Some(250_000)));
        assert_eq!(r.jobs_desc[0].name, "j");
        assert_eq!(r.jobs_desc[0].rw, "randread");
        assert_eq!(r.global_options.len(), 3);
        for (v, ns) in [
            ("2", 2_000_000_000u64),
            ("2s", 2_000_000_000),
            ("2m", 120_000_000_000),
            ("1h", 3_600_000_000_000),
            ("1d", 86_400_000_000_000),
            ("7us", 7_000),
            ("7MS", 7_000_000),
        ] {
            assert_eq!(time(1, "runtime", v), Ok(ns), "{v}");
        }
    }

    /// Reporting groups: `new_group` after a job starts the next group, `stonewall` on the first
    /// job (nothing to wait for) is accepted, `name=` renames a job; files named apart are fine.
    #[test]
    fn groups_names_and_files() {
        let text = "[global]\nsize=1m\ngroup_reporting\n[a]\nstonewall\nfilename=/tmp/a\n[b]\nname=second\n\
                    filename=/tmp/b\n[c]\nnew_group\nnumjobs=3\n[d]\nrw=randrw\nrwmixread=100\n";
        let r = JobFile::parse(text).unwrap().to_run().unwrap();
        let got: Vec<(&str, u32, u32)> = r
            .jobs_desc
            .iter()
            .map(|d| (d.name.as_str(), d.groupid, d.numjobs))
            .collect();
        assert_eq!(got, [("a", 0, 1), ("second", 0, 1), ("c", 1, 3), ("d", 1, 1)]);
        assert!(r.jobs_desc.iter().all(|d| d.group_reporting));
        assert_eq!(
            (r.jobs_desc[3].reads, r.jobs_desc[3].writes),
            (true, false),
            "rwmixread=100 only reads"
        );
        let WorkloadSpec::Mix { parts } = &r.workload else {
            panic!("{:?}", r.workload)
        };
        assert_eq!(parts.iter().map(|p| p.jobs).collect::<Vec<_>>(), [1, 1, 3, 1]);
    }
}

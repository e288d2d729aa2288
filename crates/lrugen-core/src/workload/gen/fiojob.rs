// SPDX-License-Identifier: GPL-2.0-only
//! fio job files (`fio JOB.fio`), read as fio reads them — `[global]` and job sections,
//! `key=value` and bare flags, `;`/`#` comment lines, options a job inherits from `[global]` above
//! it — and turned into lrugen's fio workload ([`JobFile::to_run`]), refusing by name what the
//! model cannot run. docs/benchmarks.md lists the options.

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

/// A section: its name, the line of its header and its options.
#[derive(Clone, Debug)]
struct Section {
    name: String,
    line: usize,
    opts: Vec<Opt>,
}

/// A job file: its job sections, each with the `[global]` options given above it.
#[derive(Clone, Debug)]
pub struct JobFile {
    jobs: Vec<Section>,
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
}

impl JobFile {
    /// Parse `text` (a job file's contents).
    pub fn parse(text: &str) -> Result<JobFile, JobError> {
        let mut global: Vec<Opt> = Vec::new();
        let mut jobs: Vec<Section> = Vec::new();
        let mut current: Option<Section> = None;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let t = raw.trim();
            if t.is_empty() || t.starts_with(';') || t.starts_with('#') {
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
                    if s.name == "global" {
                        global.extend(s.opts);
                    } else {
                        jobs.push(s);
                    }
                }
                current = Some(Section {
                    name: name.to_string(),
                    line,
                    opts: if name == "global" { Vec::new() } else { global.clone() },
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
            if s.name != "global" {
                jobs.push(s);
            }
        }
        if jobs.is_empty() {
            return err(
                0,
                "no job section: expected at least one [jobname] section besides [global]",
            );
        }
        Ok(JobFile { jobs })
    }

    /// The job file as lrugen runs it (4 KiB I/Os, buffered, one file per job or a union of
    /// uniformly chosen files).
    pub fn to_run(&self) -> Result<FioRun, JobError> {
        let mut parts = Vec::new();
        let (mut runtime, mut ramp) = (None, None);
        let mut ignored: Vec<String> = Vec::new();
        let mut notes = Vec::new();
        for s in &self.jobs {
            let j = Job::of(s, &mut ignored, &mut notes)?;
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
        })
    }
}

/// One job section read.
struct Job {
    workload: WorkloadSpec,
    numjobs: u32,
    runtime_ns: Option<u64>,
    ramp_ns: Option<u64>,
}

/// Options that change nothing lrugen models.
const IGNORED: [&str; 24] = [
    "name",
    "description",
    "directory",
    "group_reporting",
    "new_group",
    "norandommap",
    "randrepeat",
    "allrandrepeat",
    "randseed",
    "random_generator",
    "thread",
    "invalidate",
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
const REFUSED: [(&str, &str); 18] = [
    ("stonewall", "jobs that wait for each other"),
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

/// A size in bytes (`4k`, `1g`, `512m`, `10GiB`; base 1024, as fio's default `kb_base`).
fn size(line: usize, key: &str, v: &str) -> Result<u64, JobError> {
    let s = v.trim().to_ascii_lowercase();
    let s = s.strip_suffix("ib").or_else(|| s.strip_suffix('b')).unwrap_or(&s);
    let (num, mult) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m: u64 = match c {
                'k' => 1 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                't' => 1 << 40,
                'p' => 1 << 50,
                _ => return err(line, format!("{key}={v}: expected a size such as 4k, 512m or 10g")),
            };
            (&s[..i], m)
        }
        _ => (s, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| JobError {
            line,
            message: format!("{key}={v}: expected a size such as 4k, 512m or 10g"),
        })
}

/// A time in ns (`runtime=60` is seconds; `500ms`, `10m`, `2h`, `100us`).
fn time(line: usize, key: &str, v: &str) -> Result<u64, JobError> {
    let s = v.trim().to_ascii_lowercase();
    let (num, unit): (&str, u64) = if let Some(n) = s.strip_suffix("us") {
        (n, 1_000)
    } else if let Some(n) = s.strip_suffix("ms") {
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
            message: format!("{key}={v}: expected a time such as 60 (seconds), 500ms, 10m or 1h"),
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
        let mut filename = None;
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
                        if !part.trim().is_empty() && size(line, k, part)? != 4096 {
                            return err(
                                line,
                                format!("{k}={}: only 4 KiB I/Os are modelled; expected bs=4k", v()?),
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
                    size_b = Some(size(line, k, v()?)?)
                }
                "filesize" => filesize = Some(size(line, k, v()?)?),
                "io_size" | "io_limit" => io_size = Some(size(line, k, v()?)?),
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
                "random_distribution" => dist = v()?.to_string(),
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
                "filename" => filename = Some(line),
                "kb_base" => {
                    if v()?.trim() != "1024" {
                        return err(line, format!("kb_base={}: expected 1024 (sizes in base 1024)", v()?));
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
        if let Some(l) = filename {
            if numjobs > 1 {
                return err(l, "filename= with numjobs > 1: jobs sharing one file are not modelled; expected no filename (each job its own file)");
            }
            ignored.push("filename".into());
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
        Ok(Job {
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
        assert_eq!(r.ignored, ["group_reporting", "norandommap"]);
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
            ("[j]\nsize=lots\n", 2, "expected a size"),
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
            ("[j]\nsize=1m\nruntime=soon\n", 3, "expected a time"),
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
            ("[j]\nsize=1m\nrandom_distribution=gauss\n", 1, "gauss"),
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
}

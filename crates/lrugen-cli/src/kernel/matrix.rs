// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen kernel --matrix FILE.toml`: a fidelity matrix in one command. The file names kernel
//! series, policies, boots per cell (`repeats`) and scenarios, each scenario a set of `lrugen
//! kernel` options written as TOML keys (`access = "file"`, `memcg-max = "32M"`, `accesses =
//! 100000`; `memcg_max` is the same key), with `[defaults]` for every scenario. Each cell
//! (scenario × series × policy) is turned into the command line it equals and parsed by the one
//! parser of `lrugen kernel` ([`super::KernelArgs`], [`super::plan`]), so a matrix cell and the
//! command it lists (`--list`) are the same run. Every cell is planned before anything boots;
//! the kernels are prepared (resolved, downloaded, unpacked) once each and the data disk of each
//! scenario built once before the first VM starts, so concurrent boots only read them; the boots
//! run `--jobs` at a time (default 2), their results kept by index, so the output does not depend
//! on which finishes first. Then each cell's op file is replayed once on the model and compared
//! with every boot against the kernel's run-to-run spread ([`lrugen_kernel::fidelity::compare_runs`])
//! into a [`MatrixReport`]: the table, and with `--out` `matrix.json`, `matrix.csv`, plots and
//! `index.html`. With `--fixtures DIR` each boot is also written as `lrugen kernel --fixture` does,
//! named `debian-SERIES-POLICY-SCENARIO.json` (`-bootN` with several boots).

use super::{plan, KernelArgs, MatrixArgs, Plan};
use crate::out::out;
use lrugen::experiment::outdir::{self, Request, Staging};
use lrugen::report::html::shell_word;
use lrugen_kernel::matrix::{Cell, Counter, MatrixReport};
use lrugen_kernel::{debian, KernelRun, KernelSource};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use toml::de::{DeTable, DeValue};

/// Keys of the top level of a matrix file.
const TOP_KEYS: &str = "name, description, series, policies, repeats, [defaults] or [[scenario]]";

/// `lrugen kernel` options a scenario may not set: the matrix's axes, and what is per command
/// rather than per run.
const NOT_IN_SCENARIO: &[(&str, &str)] = &[
    ("series", "the matrix's `series` list sets it"),
    ("lru", "the matrix's `policies` list sets it"),
    ("image", "a matrix boots Debian kernels by series"),
    ("modules", "a matrix boots Debian kernels by series"),
    ("out", "give --out on the command line"),
    ("fixture", "give --fixtures DIR on the command line"),
    ("force", "give --force on the command line"),
    ("replayer", "give --replayer on the command line"),
    ("debugfs", "a matrix prints no lru_gen_full"),
    ("debugfs-every-window", "a matrix keeps no lru_gen_full captures"),
];

/// A matrix file, parsed.
#[derive(Clone, Debug)]
pub struct Matrix {
    /// The file, as given.
    pub file: PathBuf,
    /// `name`, else the file's stem.
    pub name: String,
    /// `description`.
    pub description: Option<String>,
    /// Kernel series, in the file's order.
    pub series: Vec<String>,
    /// `mglru`, `classic`, in the file's order.
    pub policies: Vec<String>,
    /// Boots of each cell.
    pub repeats: u32,
    /// The scenarios, in the file's order.
    pub scenarios: Vec<Scenario>,
    text: String,
}

/// One `lrugen kernel` option of a scenario (or of `[defaults]`).
#[derive(Clone, Debug, PartialEq)]
struct Opt {
    /// The flag's long name (`memcg-max`).
    flag: String,
    /// Its value; None for a flag without one (`true`).
    value: Option<String>,
    /// Where it is in the file.
    span: Range<usize>,
}

/// A named set of options.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its name (file-name safe).
    pub name: String,
    span: Range<usize>,
    opts: Vec<Opt>,
}

/// One cell: a scenario on a series under a policy.
#[derive(Clone, Debug)]
pub struct CellSpec {
    /// Index of the scenario in [`Matrix::scenarios`].
    pub scenario: usize,
    /// The series.
    pub series: String,
    /// The policy.
    pub policy: String,
}

/// 1-based line and column of byte `at` in `text`.
fn line_col(text: &str, at: usize) -> (usize, usize) {
    lrugen::experiment::spec::line_col(text, at)
}

impl Matrix {
    fn err(&self, span: Option<&Range<usize>>, msg: impl std::fmt::Display) -> String {
        at(&self.file, &self.text, span, msg)
    }

    /// Read and parse `path`.
    pub fn from_file(path: &Path) -> Result<Matrix, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Matrix::parse(&text, path)
    }

    /// Parse the text of matrix file `file`.
    pub fn parse(text: &str, file: &Path) -> Result<Matrix, String> {
        let err = |span: Option<&Range<usize>>, msg: String| at(file, text, span, msg);
        let doc = DeTable::parse(text).map_err(|e| {
            err(
                e.span().as_ref(),
                format!("{} (expected a TOML matrix file)", e.message().trim_end()),
            )
        })?;
        let mut m = Matrix {
            file: file.to_path_buf(),
            name: file
                .file_stem()
                .map_or_else(|| "matrix".into(), |s| s.to_string_lossy().into_owned()),
            description: None,
            series: Vec::new(),
            policies: Vec::new(),
            repeats: 1,
            scenarios: Vec::new(),
            text: text.to_string(),
        };
        let mut seen = (false, false, false);
        let mut entries: Vec<_> = doc.get_ref().iter().collect();
        entries.sort_by_key(|(k, _)| k.span().start);
        let mut defaults: Vec<Opt> = Vec::new();
        let mut scenario_tables = Vec::new();
        for (k, v) in entries {
            let key: &str = k.get_ref().as_ref();
            let span = v.span();
            let string = |what: &str| -> Result<String, String> {
                v.get_ref().as_str().map(str::to_string).ok_or_else(|| {
                    err(
                        Some(&span),
                        format!("{what}: expected a string, found {}", v.get_ref().type_str()),
                    )
                })
            };
            match key {
                "name" => {
                    m.name = string("name")?;
                    if m.name.is_empty() {
                        return Err(err(Some(&span), "name: expected a non-empty string".into()));
                    }
                }
                "description" => m.description = Some(string("description")?),
                "series" | "policies" => {
                    let list = strings(file, text, key, v)?;
                    let mut out: Vec<String> = Vec::new();
                    for (s, sp) in list {
                        if key == "series" {
                            debian::Series::parse(&s).map_err(|e| err(Some(&sp), format!("series: {e}")))?;
                        } else if s != "mglru" && s != "classic" {
                            return Err(err(
                                Some(&sp),
                                format!("policies: unknown policy '{s}': expected mglru or classic"),
                            ));
                        }
                        if out.contains(&s) {
                            return Err(err(Some(&sp), format!("{key}: '{s}' is listed twice")));
                        }
                        out.push(s);
                    }
                    if key == "series" {
                        m.series = out;
                        seen.0 = true;
                    } else {
                        m.policies = out;
                        seen.1 = true;
                    }
                }
                "repeats" => {
                    let n = v
                        .get_ref()
                        .as_integer()
                        .and_then(|i| i64::from_str_radix(i.as_str(), i.radix()).ok())
                        .ok_or_else(|| {
                            err(
                                Some(&span),
                                format!(
                                    "repeats: expected a whole number of boots per cell, found {}",
                                    v.get_ref().type_str()
                                ),
                            )
                        })?;
                    if n < 1 {
                        return Err(err(
                            Some(&span),
                            format!("repeats: expected at least 1 boot per cell, found {n}"),
                        ));
                    }
                    m.repeats =
                        u32::try_from(n).map_err(|_| err(Some(&span), format!("repeats: {n} is too many boots")))?;
                }
                "defaults" => {
                    let t = v.get_ref().as_table().ok_or_else(|| {
                        err(
                            Some(&span),
                            format!(
                                "defaults: expected a table of `lrugen kernel` options, found {}",
                                v.get_ref().type_str()
                            ),
                        )
                    })?;
                    defaults = options(file, text, "[defaults]", t, false)?.1;
                }
                "scenario" => {
                    let arr = v.get_ref().as_array().ok_or_else(|| {
                        err(
                            Some(&span),
                            format!(
                                "scenario: expected [[scenario]] tables, found {}",
                                v.get_ref().type_str()
                            ),
                        )
                    })?;
                    seen.2 = true;
                    for s in arr.iter() {
                        let t = s.get_ref().as_table().ok_or_else(|| {
                            err(
                                Some(&s.span()),
                                format!("scenario: expected a table, found {}", s.get_ref().type_str()),
                            )
                        })?;
                        scenario_tables.push((t, s.span()));
                    }
                }
                other => {
                    return Err(err(
                        Some(&k.span()),
                        format!("unknown key '{other}': expected {TOP_KEYS}"),
                    ))
                }
            }
        }
        if !seen.0 {
            return Err(err(
                None,
                "no series: expected series = [\"6.1\", ...] (6.1, 6.12, 7, 7.N)".into(),
            ));
        }
        if !seen.1 {
            return Err(err(
                None,
                "no policies: expected policies = [\"mglru\", \"classic\"] (either or both)".into(),
            ));
        }
        if !seen.2 || scenario_tables.is_empty() {
            return Err(err(
                None,
                "no scenario: expected at least one [[scenario]] table with a name".into(),
            ));
        }
        for (t, span) in scenario_tables {
            let (name, opts) = options(file, text, "[[scenario]]", t, true)?;
            let (name, name_span) = name.ok_or_else(|| {
                err(
                    Some(&span),
                    "[[scenario]]: no name: expected name = \"...\" (letters, digits, '.', '-', '_')".into(),
                )
            })?;
            if m.scenarios.iter().any(|s| s.name == name) {
                return Err(err(Some(&name_span), format!("scenario '{name}' is defined twice")));
            }
            // the scenario's options after the defaults it does not override
            let mut all: Vec<Opt> = defaults
                .iter()
                .filter(|d| !opts.iter().any(|o| o.flag == d.flag))
                .cloned()
                .collect();
            all.extend(opts);
            m.scenarios.push(Scenario {
                name,
                span: name_span,
                opts: all,
            });
        }
        Ok(m)
    }

    /// The cells, scenario by scenario, each over the series and then the policies, restricted to
    /// the names in `only` (scenarios, series, policies; an empty list keeps all). A name that is
    /// not in the matrix is an error.
    pub fn cells(&self, only: [&[String]; 3]) -> Result<Vec<CellSpec>, String> {
        let axes: [(&str, Vec<&str>); 3] = [
            (
                "--only-scenarios",
                self.scenarios.iter().map(|s| s.name.as_str()).collect(),
            ),
            ("--only-series", self.series.iter().map(String::as_str).collect()),
            ("--only-policies", self.policies.iter().map(String::as_str).collect()),
        ];
        for ((flag, names), want) in axes.iter().zip(only) {
            for w in want {
                if !names.contains(&w.as_str()) {
                    return Err(format!(
                        "{flag} {w}: not in {}: expected one of {}",
                        self.file.display(),
                        names.join(", ")
                    ));
                }
            }
        }
        let keep = |i: usize, name: &str| only[i].is_empty() || only[i].iter().any(|w| w == name);
        let mut v = Vec::new();
        for (i, _) in self.scenarios.iter().enumerate().filter(|(_, s)| keep(0, &s.name)) {
            for series in self.series.iter().filter(|x| keep(1, x)) {
                for policy in self.policies.iter().filter(|x| keep(2, x)) {
                    v.push(CellSpec {
                        scenario: i,
                        series: series.clone(),
                        policy: policy.clone(),
                    });
                }
            }
        }
        Ok(v)
    }

    /// The arguments of `lrugen kernel` (after `kernel`) that one boot of `cell` equals, with
    /// `--fixture FILE` when `fixture` is given.
    pub fn args(&self, cell: &CellSpec, fixture: Option<&Path>) -> Vec<String> {
        let s = &self.scenarios[cell.scenario];
        let mut a = vec![
            "--series".to_string(),
            cell.series.clone(),
            "--lru".into(),
            cell.policy.clone(),
        ];
        for o in &s.opts {
            a.push(format!("--{}", o.flag));
            if let Some(v) = &o.value {
                a.push(v.clone());
            }
        }
        if let Some(f) = fixture {
            a.push("--fixture".into());
            a.push(f.display().to_string());
        }
        a
    }

    /// The command one boot of `cell` equals.
    pub fn command(&self, cell: &CellSpec, fixture: Option<&Path>) -> String {
        let mut c = String::from("lrugen kernel");
        for a in self.args(cell, fixture) {
            c.push(' ');
            c.push_str(&shell_word(&a));
        }
        c
    }

    /// `debian-SERIES-POLICY-SCENARIO` (`-bootN`, from 1, with several boots).
    pub fn boot_name(&self, cell: &CellSpec, boot: u32) -> String {
        let base = format!(
            "debian-{}-{}-{}",
            cell.series, cell.policy, self.scenarios[cell.scenario].name
        );
        if self.repeats > 1 {
            format!("{base}-boot{}", boot + 1)
        } else {
            base
        }
    }

    /// Parse `cell` with `lrugen kernel`'s parser and plan it; an error names the line of the
    /// option at fault (else of the scenario's name).
    fn plan_cell(&self, cell: &CellSpec) -> Result<(KernelArgs, Plan), String> {
        let s = &self.scenarios[cell.scenario];
        let which = format!("scenario '{}' ({} {})", s.name, cell.series, cell.policy);
        let argv = std::iter::once("lrugen kernel".to_string()).chain(self.args(cell, None));
        let blame = |msg: &str| -> Range<usize> {
            // the option the message names, the longest flag first (--swap-size before --swap)
            let mut by_len: Vec<&Opt> = s.opts.iter().collect();
            by_len.sort_by_key(|o| std::cmp::Reverse(o.flag.len()));
            by_len
                .into_iter()
                .find(|o| names_flag(msg, &o.flag))
                .map_or(s.span.clone(), |o| o.span.clone())
        };
        let one = <super::OneKernel as clap::Parser>::try_parse_from(argv).map_err(|e| {
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ")
                .to_string();
            self.err(Some(&blame(&first)), format!("{which}: {first}"))
        })?;
        let p = plan(&one.a).map_err(|e| self.err(Some(&blame(&e)), format!("{which}: {e}")))?;
        Ok((one.a, p))
    }
}

/// Whether `msg` names `--flag` (not as the start of a longer flag).
fn names_flag(msg: &str, flag: &str) -> bool {
    let pat = format!("--{flag}");
    msg.match_indices(&pat).any(|(i, _)| {
        msg[i + pat.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-'))
    })
}

/// `FILE:LINE:COL: msg` (or `FILE: msg` without a place).
fn at(file: &Path, text: &str, span: Option<&Range<usize>>, msg: impl std::fmt::Display) -> String {
    match span {
        Some(s) => {
            let (l, c) = line_col(text, s.start);
            format!("{}:{l}:{c}: {msg}", file.display())
        }
        None => format!("{}: {msg}", file.display()),
    }
}

/// A non-empty array of strings, each with its span.
fn strings(
    file: &Path,
    text: &str,
    key: &str,
    v: &toml::Spanned<DeValue<'_>>,
) -> Result<Vec<(String, Range<usize>)>, String> {
    let arr = v.get_ref().as_array().ok_or_else(|| {
        at(
            file,
            text,
            Some(&v.span()),
            format!("{key}: expected an array of strings, found {}", v.get_ref().type_str()),
        )
    })?;
    if arr.iter().next().is_none() {
        return Err(at(
            file,
            text,
            Some(&v.span()),
            format!("{key}: expected at least one name, found an empty array"),
        ));
    }
    arr.iter()
        .map(|x| {
            x.get_ref().as_str().map(|s| (s.to_string(), x.span())).ok_or_else(|| {
                at(
                    file,
                    text,
                    Some(&x.span()),
                    format!("{key}: expected a string, found {}", x.get_ref().type_str()),
                )
            })
        })
        .collect()
}

/// The long names of `lrugen kernel`'s options a scenario may set, and whether each takes a
/// value.
fn scenario_flags() -> Vec<(String, bool)> {
    let cmd = <super::OneKernel as clap::CommandFactory>::command();
    cmd.get_arguments()
        .filter_map(|a| Some((a.get_long()?.to_string(), a.get_action().takes_values())))
        .filter(|(l, _)| !NOT_IN_SCENARIO.iter().any(|(n, _)| n == l) && l != "help")
        .collect()
}

/// The options of a `[defaults]` or `[[scenario]]` table (with `name`, its value, when `named`),
/// in the file's order; an unknown key or a value of the wrong kind is an error at its line.
#[allow(clippy::type_complexity)]
fn options(
    file: &Path,
    text: &str,
    table: &str,
    t: &DeTable<'_>,
    named: bool,
) -> Result<(Option<(String, Range<usize>)>, Vec<Opt>), String> {
    let flags = scenario_flags();
    let mut entries: Vec<_> = t.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut name = None;
    let mut opts: Vec<Opt> = Vec::new();
    let e = |span: &Range<usize>, msg: String| at(file, text, Some(span), msg);
    for (k, v) in entries {
        let key: &str = k.get_ref().as_ref();
        let ks = k.span();
        if named && key == "name" {
            let n = v.get_ref().as_str().ok_or_else(|| {
                e(
                    &v.span(),
                    format!("{table} name: expected a string, found {}", v.get_ref().type_str()),
                )
            })?;
            if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
                return Err(e(
                    &v.span(),
                    format!("{table} name '{n}': expected letters, digits, '.', '-' or '_' (it names files)"),
                ));
            }
            name = Some((n.to_string(), v.span()));
            continue;
        }
        let flag = key.replace('_', "-");
        if let Some((_, why)) = NOT_IN_SCENARIO.iter().find(|(n, _)| *n == flag) {
            return Err(e(&ks, format!("{table}: option '{key}' cannot be set here: {why}")));
        }
        let Some(&(_, takes)) = flags.iter().find(|(l, _)| *l == flag).map(|f| f as &(String, bool)) else {
            let mut known: Vec<&str> = flags.iter().map(|(l, _)| l.as_str()).collect();
            known.sort_unstable();
            return Err(e(
                &ks,
                format!(
                    "{table}: unknown option '{key}': expected {}one of lrugen kernel's options {}",
                    if named { "name or " } else { "" },
                    known.join(", ")
                ),
            ));
        };
        if opts.iter().any(|o| o.flag == flag) {
            return Err(e(&ks, format!("{table}: option '{flag}' is given twice")));
        }
        let value = match (v.get_ref(), takes) {
            (DeValue::Boolean(b), false) => {
                if !b {
                    continue;
                }
                None
            }
            (_, false) => {
                return Err(e(
                    &v.span(),
                    format!(
                        "{table} {key}: expected true or false (a flag), found {}",
                        v.get_ref().type_str()
                    ),
                ))
            }
            (DeValue::String(s), true) => {
                let s: &str = s.as_ref();
                Some(if matches!(flag.as_str(), "exp" | "trace") {
                    relative_to(file, s)
                } else {
                    s.to_string()
                })
            }
            (DeValue::Integer(i), true) => Some(match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(n) => n.to_string(),
                Err(_) => return Err(e(&v.span(), format!("{table} {key}: integer out of range"))),
            }),
            (DeValue::Float(f), true) => Some(match f.as_str().parse::<f64>() {
                Ok(x) if x.is_finite() => x.to_string(),
                _ => return Err(e(&v.span(), format!("{table} {key}: expected a finite number"))),
            }),
            (other, true) => {
                return Err(e(
                    &v.span(),
                    format!(
                        "{table} {key}: expected a string or a number, found {}",
                        other.type_str()
                    ),
                ))
            }
        };
        opts.push(Opt { flag, value, span: ks });
    }
    Ok((name, opts))
}

/// A path of the matrix file: relative to the file's directory (`dir/..` collapsed, so that
/// `../x.toml` of `examples/m/f.toml` reads `examples/x.toml`).
fn relative_to(file: &Path, p: &str) -> String {
    use std::path::Component;
    let path = Path::new(p);
    let joined = match file.parent() {
        Some(d) if path.is_relative() && !d.as_os_str().is_empty() => d.join(path),
        _ => return p.to_string(),
    };
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in joined.components() {
        match (c, out.last()) {
            (Component::CurDir, _) => {}
            (Component::ParentDir, Some(Component::Normal(_))) => {
                out.pop();
            }
            _ => out.push(c),
        }
    }
    let p: PathBuf = out.iter().collect();
    if p.as_os_str().is_empty() {
        ".".into()
    } else {
        p.display().to_string()
    }
}

/// One boot's result.
struct Boot {
    run: KernelRun,
    settings: lrugen_kernel::report::Settings,
    capture: lrugen_kernel::Capture,
}

/// `lrugen kernel --matrix`.
pub fn cmd_matrix(m: &MatrixArgs, out_dir: Option<&Path>, force: bool, replayer: Option<&Path>) -> Result<(), String> {
    let file = m.matrix.as_deref().ok_or("--matrix: no file")?;
    let mx = Matrix::from_file(file)?;
    let cells = mx.cells([&m.only_scenarios, &m.only_series, &m.only_policies])?;
    if m.jobs == 0 {
        return Err("--jobs: expected at least 1 VM at a time".into());
    }
    if let Some(d) = &m.fixtures {
        if !d.is_dir() {
            return Err(format!("--fixtures {}: no such directory", d.display()));
        }
    }
    let fixture = |c: &CellSpec, boot: u32| {
        m.fixtures
            .as_ref()
            .map(|d| d.join(format!("{}.json", mx.boot_name(c, boot))))
    };
    // every cell planned before anything boots
    let mut planned = Vec::with_capacity(cells.len());
    for c in &cells {
        planned.push(mx.plan_cell(c)?);
    }
    if m.list {
        out!(
            "{}: {} cells × {} boot{} = {} boots\n",
            mx.file.display(),
            cells.len(),
            mx.repeats,
            if mx.repeats == 1 { "" } else { "s" },
            cells.len() * mx.repeats as usize
        );
        for (i, (c, (_, p))) in cells.iter().zip(&planned).enumerate() {
            out!(
                "[{i}] {} {} {}: {}\n",
                mx.scenarios[c.scenario].name,
                c.series,
                c.policy,
                p.workload
            );
            for b in 0..mx.repeats {
                out!("    {}\n", mx.command(c, fixture(c, b).as_deref()));
            }
        }
        return Ok(());
    }
    for c in &cells {
        for b in 0..mx.repeats {
            if let Some(f) = fixture(c, b) {
                super::check_fixture_target(&f)?;
            }
        }
    }
    let staging = match out_dir {
        Some(dir) => Some(Staging::prepare(Request {
            flag: "--out",
            target: dir,
            kind: outdir::KERNEL,
            of: BTreeMap::from([("matrix".to_string(), mx.file.display().to_string())]),
            force,
            resume: false,
        })?),
        None => None,
    };
    let replayer = replayer
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("LRUGEN_REPLAYER").map(PathBuf::from));
    let work = std::env::temp_dir().join(format!("lrugen-matrix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let result = run_cells(&mx, &cells, &planned, m.jobs, &work, replayer, &fixture);
    let _ = std::fs::remove_dir_all(&work);
    let boots = result?;
    // the model once per cell, against its boots
    let mut report_cells = Vec::with_capacity(cells.len());
    for (i, c) in cells.iter().enumerate() {
        let bs = &boots[i];
        let first = bs.first().ok_or("no boot")?;
        let runs: Vec<&KernelRun> = bs.iter().map(|b| &b.run).collect();
        let checks = lrugen_kernel::fidelity::compare_runs(&planned[i].1.ops, &first.settings, &runs).map_err(|e| {
            format!(
                "{} {} {}: the model: {e}",
                mx.scenarios[c.scenario].name, c.series, c.policy
            )
        })?;
        report_cells.push(Cell {
            scenario: mx.scenarios[c.scenario].name.clone(),
            series: c.series.clone(),
            policy: c.policy.clone(),
            command: mx.command(c, None),
            release: first.run.kernel_release.clone(),
            model_profile: first.settings.model_profile.clone(),
            boots: bs.len(),
            counters: checks.iter().map(Counter::of).collect(),
        });
    }
    let report = MatrixReport::new(
        &mx.name,
        mx.description.clone(),
        &mx.file.display().to_string(),
        mx.repeats,
        report_cells,
    );
    out!("{}", report.table());
    if let Some(staging) = staging {
        let dir = staging.dir().to_path_buf();
        let (mut files, why) = report.write(&dir).map_err(|e| e.to_string())?;
        if let Some(why) = why {
            eprintln!("plots skipped: {why}");
        }
        let html = report
            .write_html(&super::command_line(), &dir, &files)
            .map_err(|e| e.to_string())?;
        files.push(html);
        let bdir = dir.join("boots");
        std::fs::create_dir_all(&bdir).map_err(|e| format!("{}: {e}", bdir.display()))?;
        for (c, bs) in cells.iter().zip(&boots) {
            for (b, boot) in bs.iter().enumerate() {
                let p = bdir.join(format!("{}.json", mx.boot_name(c, b as u32)));
                let text = serde_json::to_string_pretty(&boot.capture).map_err(|e| e.to_string())? + "\n";
                std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
            }
        }
        let target = staging.given().to_path_buf();
        staging.commit()?;
        for f in files {
            if let Ok(name) = f.strip_prefix(&dir) {
                eprintln!("wrote {}", target.join(name).display());
            }
        }
        eprintln!("wrote {}", target.join("boots").display());
    }
    Ok(())
}

/// Prepare the kernels and data disks, then boot every (cell, boot) `jobs` at a time; the
/// results by cell, in boot order.
fn run_cells(
    mx: &Matrix,
    cells: &[CellSpec],
    planned: &[(KernelArgs, Plan)],
    jobs: u32,
    work: &Path,
    replayer: Option<PathBuf>,
    fixture: &(dyn Fn(&CellSpec, u32) -> Option<PathBuf> + Sync),
) -> Result<Vec<Vec<Boot>>, String> {
    let cache = lrugen_kernel::KernelOpts::new(
        KernelSource::Debian { series: String::new() },
        lrugen_kernel::ops::OpFile::default(),
        0,
    )
    .cache_dir;
    // each kernel once, before any VM starts: the boots only read it
    let mut kernels: BTreeMap<String, debian::PreparedKernel> = BTreeMap::new();
    for c in cells {
        if !kernels.contains_key(&c.series) {
            eprintln!(
                "preparing Debian {} (resolved, downloaded once into {})",
                c.series,
                cache.display()
            );
            let k = debian::prepare(
                &KernelSource::Debian {
                    series: c.series.clone(),
                },
                &cache,
            )
            .map_err(|e| format!("--matrix: series {}: {e}", c.series))?;
            kernels.insert(c.series.clone(), k);
        }
    }
    // each scenario's data disk once (the same files make the same image); a boot copies it
    let mut images: Vec<(Vec<(String, u64)>, PathBuf)> = Vec::new();
    let mut image_of = Vec::with_capacity(cells.len());
    for (_, p) in planned {
        let key: Vec<(String, u64)> = p.ops.files.iter().map(|f| (f.path.clone(), f.pages)).collect();
        let i = match images.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let img = work.join(format!("data-{}.img", images.len()));
                lrugen_kernel::build_data_image(&p.ops, &work.join(format!("data-{}", images.len())), &img)
                    .map_err(|e| e.to_string())?;
                images.push((key, img));
                images.len() - 1
            }
        };
        image_of.push(i);
    }
    let jobs_list: Vec<(usize, u32)> = (0..cells.len())
        .flat_map(|c| (0..mx.repeats).map(move |b| (c, b)))
        .collect();
    let total = jobs_list.len();
    let pb = indicatif::ProgressBar::with_draw_target(Some(total as u64), indicatif::ProgressDrawTarget::stderr());
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix:>10} [{bar:30}] {pos}/{len} boots ({elapsed}, eta {eta}) {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb.set_prefix("matrix");
    eprintln!(
        "booting {total} VMs, {} at a time (qemu TCG, -icount): minutes each",
        jobs.min(total as u32).max(1)
    );
    // Ctrl-C: no new boot; the VMs under way get the terminal's interrupt too and end, and the
    // work directory and --out's partial directory are removed on the way out
    let interrupted = std::sync::Arc::new(AtomicBool::new(false));
    let flag = interrupted.clone();
    let pbc = pb.clone();
    if let Err(e) = ctrlc::set_handler(move || {
        if !flag.swap(true, Ordering::SeqCst) {
            pbc.suspend(|| eprintln!("lrugen: interrupted: starting no new boot"));
        }
    }) {
        eprintln!("lrugen: warning: no Ctrl-C handler ({e})");
    }
    let results = run_indexed(total, jobs, |j| {
        let (ci, b) = jobs_list[j];
        let c = &cells[ci];
        if interrupted.load(Ordering::SeqCst) {
            return Err("interrupted".to_string());
        }
        let r = boot_one(
            mx,
            c,
            &planned[ci],
            &kernels[&c.series],
            &images[image_of[ci]].1,
            &work.join(format!("boot-{j}")),
            replayer.as_deref(),
            fixture(c, b).as_deref(),
        );
        let name = mx.boot_name(c, b);
        let line = match &r {
            Ok(boot) => format!(
                "{name}: {} misses in {:.0} s ({})",
                boot.run.misses, boot.run.wall_seconds, boot.run.kernel_release
            ),
            Err(e) => format!("{name}: failed: {e}"),
        };
        // a line per boot, above the bar (or alone when stderr is not a terminal)
        if pb.is_hidden() {
            eprintln!("{line}");
        } else {
            pb.println(line);
        }
        pb.inc(1);
        r
    });
    pb.finish_and_clear();
    if interrupted.load(Ordering::SeqCst) {
        let done = results.iter().filter(|r| matches!(r, Some(Ok(_)))).count();
        return Err(format!(
            "interrupted: {done} of {total} boots done{}; no report written",
            if cells.first().and_then(|c| fixture(c, 0)).is_some() {
                " (their fixtures are written)"
            } else {
                ""
            }
        ));
    }
    let mut by_cell: Vec<Vec<Boot>> = (0..cells.len()).map(|_| Vec::new()).collect();
    let mut skipped = 0;
    for (j, r) in results.into_iter().enumerate() {
        let (ci, b) = jobs_list[j];
        match r {
            Some(Ok(boot)) => by_cell[ci].push(boot),
            Some(Err(e)) => return Err(format!("{}: {e}", mx.boot_name(&cells[ci], b))),
            None => skipped += 1,
        }
    }
    if skipped > 0 {
        return Err(format!("{skipped} boots not run"));
    }
    Ok(by_cell)
}

/// Run `f(0..n)` on `jobs` worker threads, each taking the next index when it is free; the
/// results by index (so they do not depend on which finishes first). After an error no new
/// index is started (those under way finish): theirs stay None.
fn run_indexed<T: Send>(
    n: usize,
    jobs: u32,
    f: impl Fn(usize) -> Result<T, String> + Sync,
) -> Vec<Option<Result<T, String>>> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Result<T, String>>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..(jobs as usize).min(n).max(1) {
            s.spawn(|| loop {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let j = next.fetch_add(1, Ordering::SeqCst);
                if j >= n {
                    break;
                }
                let r = f(j);
                if r.is_err() {
                    stop.store(true, Ordering::SeqCst);
                }
                if let Ok(mut v) = results.lock() {
                    v[j] = Some(r);
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// Boot one cell once.
#[allow(clippy::too_many_arguments)]
fn boot_one(
    mx: &Matrix,
    c: &CellSpec,
    (a, p): &(KernelArgs, Plan),
    kernel: &debian::PreparedKernel,
    image: &Path,
    work: &Path,
    replayer: Option<&Path>,
    fixture: Option<&Path>,
) -> Result<Boot, String> {
    let mut o = super::kernel_opts(
        a,
        p,
        KernelSource::Prepared(kernel.clone()),
        replayer.map(Path::to_path_buf),
    );
    o.work_dir = work.to_path_buf();
    o.data_image = Some(image.to_path_buf());
    let run = lrugen_kernel::run(&o).map_err(|e| e.to_string())?;
    let settings = super::settings_of(a, p, &o, &run);
    let capture = lrugen_kernel::Capture {
        command: mx.command(c, fixture),
        workload: p.builtin.clone(),
        experiment: p.experiment.clone(),
        ops: super::fixture_ops(p),
        settings: settings.clone(),
        run: run.clone(),
    };
    if let Some(f) = fixture {
        let text = serde_json::to_string_pretty(&capture).map_err(|e| e.to_string())? + "\n";
        lrugen_cli::run::write_whole(f, &text, "--fixtures")?;
    }
    let _ = std::fs::remove_dir_all(work);
    Ok(Boot { run, settings, capture })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Matrix, String> {
        Matrix::parse(text, Path::new("m.toml"))
    }

    const SMALL: &str = "name = \"small\"\nseries = [\"6.1\", \"6.12\"]\npolicies = [\"mglru\", \"classic\"]\n\
        repeats = 2\n[defaults]\nmemcg-max = \"8M\"\nseed = 1\n\
        [[scenario]]\nname = \"zipf\"\naccess = \"file\"\nsize = \"16M\"\naccesses = 20_000\n\
        [[scenario]]\nname = \"anon\"\naccess = \"anon\"\nanon_size = \"12M\"\naccesses = 20000\nseed = 2\n\
        write-ratio = 0.5\n";

    #[test]
    fn cells_run_scenario_then_series_then_policy_with_the_options_in_file_order() {
        let m = parse(SMALL).unwrap();
        let cells = m.cells([&[], &[], &[]]).unwrap();
        let got: Vec<String> = cells.iter().map(|c| m.command(c, None)).collect();
        assert_eq!(
            got,
            [
                "lrugen kernel --series 6.1 --lru mglru --memcg-max 8M --seed 1 --access file --size 16M --accesses 20000",
                "lrugen kernel --series 6.1 --lru classic --memcg-max 8M --seed 1 --access file --size 16M --accesses 20000",
                "lrugen kernel --series 6.12 --lru mglru --memcg-max 8M --seed 1 --access file --size 16M --accesses 20000",
                "lrugen kernel --series 6.12 --lru classic --memcg-max 8M --seed 1 --access file --size 16M --accesses 20000",
                "lrugen kernel --series 6.1 --lru mglru --memcg-max 8M --access anon --anon-size 12M --accesses 20000 --seed 2 --write-ratio 0.5",
                "lrugen kernel --series 6.1 --lru classic --memcg-max 8M --access anon --anon-size 12M --accesses 20000 --seed 2 --write-ratio 0.5",
                "lrugen kernel --series 6.12 --lru mglru --memcg-max 8M --access anon --anon-size 12M --accesses 20000 --seed 2 --write-ratio 0.5",
                "lrugen kernel --series 6.12 --lru classic --memcg-max 8M --access anon --anon-size 12M --accesses 20000 --seed 2 --write-ratio 0.5",
            ]
        );
        assert_eq!(m.boot_name(&cells[4], 1), "debian-6.1-mglru-anon-boot2");
        // the one parser: each cell planned as its command would be
        for c in &cells {
            let (_, p) = m.plan_cell(c).unwrap();
            assert_eq!(p.memcg_bytes, 8 << 20);
        }
        let only = m.cells([&["anon".to_string()], &[], &["classic".to_string()]]).unwrap();
        assert_eq!(only.len(), 2);
        let e = m.cells([&["nope".to_string()], &[], &[]]).unwrap_err();
        assert!(e.contains("--only-scenarios nope") && e.contains("zipf, anon"), "{e}");
    }

    #[test]
    fn boots_come_back_by_index_whatever_order_they_finish_in() {
        // later indices finish first
        let r = run_indexed(7, 3, |j| {
            std::thread::sleep(std::time::Duration::from_millis(5 * (7 - j as u64)));
            Ok(j * 10)
        });
        let got: Vec<usize> = r.into_iter().map(|x| x.unwrap().unwrap()).collect();
        assert_eq!(got, [0, 10, 20, 30, 40, 50, 60]);
        // an error stops new starts: with one worker nothing after it runs
        let r = run_indexed(5, 1, |j| if j == 1 { Err("no".to_string()) } else { Ok(j) });
        assert_eq!(r[0], Some(Ok(0)));
        assert_eq!(r[1], Some(Err("no".to_string())));
        assert!(r[2..].iter().all(Option::is_none));
    }

    /// Every matrix of `examples/kernel-matrix/` parses and plans every cell (as `--list` does).
    #[test]
    fn the_example_matrices_plan() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kernel-matrix");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let m = Matrix::from_file(&p).unwrap_or_else(|e| panic!("{e}"));
                for c in m.cells([&[], &[], &[]]).unwrap() {
                    m.plan_cell(&c).unwrap_or_else(|e| panic!("{e}"));
                }
                n += 1;
            }
        }
        assert!(n >= 2, "{}: no matrix", dir.display());
    }

    #[test]
    fn paths_in_a_matrix_are_relative_to_its_directory() {
        let f = Path::new("examples/kernel-matrix/m.toml");
        assert_eq!(relative_to(f, "e.toml"), "examples/kernel-matrix/e.toml");
        assert_eq!(relative_to(f, "../../crates/x/e.toml"), "crates/x/e.toml");
        assert_eq!(relative_to(f, "./t/../e.toml"), "examples/kernel-matrix/e.toml");
        assert_eq!(relative_to(f, "/abs/e.toml"), "/abs/e.toml");
        assert_eq!(relative_to(Path::new("m.toml"), "e.toml"), "e.toml");
        assert_eq!(relative_to(Path::new("../m.toml"), "../e.toml"), "../../e.toml");
        let m = Matrix::parse(
            "series = [\"6.12\"]\npolicies = [\"mglru\"]\n[[scenario]]\nname = \"fio\"\nexp = \"../../f.toml\"\n",
            f,
        )
        .unwrap();
        let c = &m.cells([&[], &[], &[]]).unwrap()[0];
        assert_eq!(
            m.command(c, None),
            "lrugen kernel --series 6.12 --lru mglru --exp f.toml"
        );
    }

    /// The multi-task matrix lists exactly the commands of the 24 multi-task fixtures (three
    /// boots of each experiment, policy and kernel), in the old script's order.
    #[test]
    fn the_multitask_matrix_lists_the_commands_of_the_multitask_fixtures() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        // named from the repository's root, as the script runs it
        let file = Path::new("examples/kernel-matrix/multitask.toml");
        let m = Matrix::parse(&std::fs::read_to_string(root.join(file)).unwrap(), file).unwrap();
        let dir = Path::new("crates/lrugen-kernel/tests/fixtures/multitask");
        let cells = m.cells([&[], &[], &[]]).unwrap();
        let mut n = 0;
        for c in &cells {
            for b in 0..m.repeats {
                let name = m.boot_name(c, b);
                let f = dir.join(format!("{name}.json"));
                let cap = lrugen_kernel::Capture::load(&root.join(&f)).unwrap();
                assert_eq!(m.command(c, Some(&f)), cap.command, "{name}");
                n += 1;
            }
        }
        let on_disk = std::fs::read_dir(root.join(dir))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "json"))
            .count();
        assert_eq!((n, on_disk), (24, 24));
    }

    /// Bad matrix files: each error names the file, the line and what was expected.
    #[test]
    fn bad_inputs_name_the_file_line_and_what_was_expected() {
        let base = "series = [\"6.1\"]\npolicies = [\"mglru\"]\n[[scenario]]\nname = \"a\"\naccesses = 1000\n";
        let cases: &[(&str, &[&str])] = &[
            ("series = [\"6.1\"\n", &["m.toml:1:", "expected a TOML matrix file"]),
            (
                &format!("{base}sizee = \"4M\"\n"),
                &[
                    "m.toml:6:1:",
                    "unknown option 'sizee'",
                    "expected name or one of",
                    "memcg-max",
                ],
            ),
            (
                &format!("repeatz = 2\n{base}"),
                &["m.toml:1:1:", "unknown key 'repeatz'", "expected name, description"],
            ),
            (
                &format!("repeats = 0\n{base}"),
                &["m.toml:1:11:", "repeats", "expected at least 1 boot per cell, found 0"],
            ),
            (
                &base.replace("\"6.1\"]", "\"6.1\", \"5.10\"]"),
                &["m.toml:1:18:", "series", "'5.10'"],
            ),
            (
                &base.replace("[\"mglru\"]", "[\"mglru\", \"lru\"]"),
                &["m.toml:2:22:", "unknown policy 'lru'", "expected mglru or classic"],
            ),
            (
                &format!("{base}dist = \"zipfy\"\n"),
                &["m.toml:6:1:", "scenario 'a' (6.1 mglru)", "--dist"],
            ),
            (
                &base.replace("accesses = 1000", "accesses = -5"),
                &["m.toml:5:1:", "scenario 'a'", "--accesses"],
            ),
            (
                &format!("{base}lru = \"classic\"\n"),
                &["m.toml:6:1:", "'lru' cannot be set here", "policies"],
            ),
            (&format!("{base}debugfs = 1\n"), &["m.toml:6:1:", "cannot be set here"]),
            (
                &format!("{base}swap = [\"zram\"]\n"),
                &["m.toml:6:8:", "swap", "expected a string or a number, found array"],
            ),
            (
                "series = [\"6.1\"]\npolicies = [\"mglru\"]\n",
                &["m.toml:", "no scenario", "[[scenario]]"],
            ),
            (
                "policies = [\"mglru\"]\n[[scenario]]\nname = \"a\"\n",
                &["m.toml:", "no series", "expected series"],
            ),
            (
                &format!("{base}[[scenario]]\nname = \"a\"\n"),
                &["m.toml:7:8:", "scenario 'a' is defined twice"],
            ),
            (
                &base.replace("name = \"a\"", "name = \"a b\""),
                &["m.toml:4:8:", "name 'a b'", "expected letters"],
            ),
            (&base.replace("name = \"a\"\n", ""), &["m.toml:3:", "no name"]),
        ];
        for (text, needles) in cases {
            let e = match parse(text) {
                Err(e) => e,
                Ok(m) => {
                    let cells = m.cells([&[], &[], &[]]).unwrap();
                    match cells.iter().map(|c| m.plan_cell(c)).find_map(Result::err) {
                        Some(e) => e,
                        None => panic!("accepted:\n{text}"),
                    }
                }
            };
            for n in *needles {
                assert!(e.contains(n), "{text}\n-> {e}\n(missing '{n}')");
            }
        }
    }

    /// The shape fixtures' matrix lists exactly the commands of the 42 shape fixtures checked in
    /// (each records the command that made it, from the old sequential script), in the old
    /// script's order, and plans the same workload.
    #[test]
    fn the_shapes_matrix_lists_the_commands_of_the_shape_fixtures() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let m = Matrix::from_file(&root.join("examples/kernel-matrix/shapes.toml")).unwrap();
        let dir = Path::new("crates/lrugen-kernel/tests/fixtures/shapes");
        let cells = m.cells([&[], &[], &[]]).unwrap();
        assert_eq!(cells.len(), 42);
        // the old script: for s in SHAPES; for k in 6.1 6.12 7.2; for lru in mglru classic
        let shapes = [
            "zipf-pread",
            "hot-cold",
            "anon-gauss",
            "mmap-random",
            "mmap-normal",
            "mixed-swappiness10",
            "mixed-swappiness100",
        ];
        let mut i = 0;
        for s in shapes {
            for k in ["6.1", "6.12", "7.2"] {
                for lru in ["mglru", "classic"] {
                    let c = &cells[i];
                    assert_eq!(
                        (
                            m.scenarios[c.scenario].name.as_str(),
                            c.series.as_str(),
                            c.policy.as_str()
                        ),
                        (s, k, lru)
                    );
                    i += 1;
                }
            }
        }
        for c in &cells {
            let name = m.boot_name(c, 0);
            let f = dir.join(format!("{name}.json"));
            let cap = lrugen_kernel::Capture::load(&root.join(&f)).unwrap();
            assert_eq!(m.command(c, Some(&f)), cap.command, "{name}");
            let (_, p) = m.plan_cell(c).unwrap();
            assert_eq!(
                serde_json::to_value(&p.builtin).unwrap(),
                serde_json::to_value(&cap.workload).unwrap(),
                "{name}"
            );
            assert_eq!(p.memcg_bytes, cap.settings.memcg_max_bytes, "{name}");
            assert_eq!(p.swap_mib, cap.settings.swap_mib, "{name}");
        }
    }

    /// The traces' matrix lists exactly the commands of the trace fixtures, and each fixture keeps
    /// the op file its command builds (no trace file is needed to compare it).
    #[test]
    fn the_traces_matrix_lists_the_commands_of_the_trace_fixtures() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let m = Matrix::from_file(&root.join("examples/kernel-matrix/traces.toml")).unwrap();
        let dir = Path::new("crates/lrugen-kernel/tests/fixtures/traces");
        let cells = m.cells([&[], &[], &[]]).unwrap();
        assert_eq!(cells.len(), 18);
        for c in &cells {
            let name = m.boot_name(c, 0);
            let f = dir.join(format!("{name}.json"));
            let cap = lrugen_kernel::Capture::load(&root.join(&f)).unwrap();
            // the trace paths are resolved against the matrix file's directory: from the
            // repository, as the regeneration script runs it, they are relative
            let at = format!("{}/", root.canonicalize().unwrap().display());
            assert_eq!(m.command(c, Some(&f)).replace(&at, ""), cap.command, "{name}");
            let (_, p) = m.plan_cell(c).unwrap();
            assert_eq!(cap.ops.as_deref(), Some(p.ops.to_text().as_str()), "{name}");
        }
    }

    /// The further boots' matrices list exactly the commands of the boots checked in beside the
    /// shape fixtures (`shapes/boots/`: MGLRU anon-gauss on three kernels, classic hot-cold on two,
    /// MGLRU's mixed shapes on 7.2, MGLRU mmap-random on 6.1, MGLRU and classic mmap-normal on 7.2,
    /// four boots each), each the command of its shape's fixture but for where it was written.
    #[test]
    fn the_shapes_boots_matrices_list_the_commands_of_the_boot_fixtures() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dir = Path::new("crates/lrugen-kernel/tests/fixtures/shapes/boots");
        let mut listed = Vec::new();
        for (file, nr_cells) in [
            ("shapes-boots.toml", 3),
            ("shapes-boots-classic.toml", 2),
            ("shapes-boots-mixed.toml", 2),
            ("shapes-boots-mmap-random.toml", 1),
            ("shapes-boots-mmap-normal.toml", 2),
        ] {
            let m = Matrix::from_file(&root.join("examples/kernel-matrix").join(file)).unwrap();
            let cells = m.cells([&[], &[], &[]]).unwrap();
            assert_eq!(cells.len(), nr_cells, "{file}");
            for c in &cells {
                for b in 0..m.repeats {
                    let name = m.boot_name(c, b);
                    let f = dir.join(format!("{name}.json"));
                    let cap = lrugen_kernel::Capture::load(&root.join(&f)).unwrap();
                    assert_eq!(m.command(c, Some(&f)), cap.command, "{name}");
                    let shape = name.rsplit_once("-boot").unwrap().0;
                    let fixture =
                        lrugen_kernel::Capture::load(&root.join(dir.join(format!("../{shape}.json")))).unwrap();
                    let strip = |s: &str| s.split(" --fixture ").next().unwrap().to_string();
                    assert_eq!(strip(&cap.command), strip(&fixture.command), "{name}");
                    listed.push(format!("{name}.json"));
                }
            }
        }
        let mut have: Vec<String> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        have.sort();
        listed.sort();
        assert_eq!(have, listed);
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! The kernel beside the model: one [`Report`] of a [`KernelRun`] and the model's run of the same
//! op file ([`crate::model::run`]). A terminal table of the counters both sides have with their
//! relative difference, `report.json`, and two plots (SVG and PNG): misses per window, and the
//! workload memcg's generation sizes over time (kernel and model side by side, stacked oldest to
//! youngest). Fonts are found as for `lrugen exp` (`lrugen::experiment::plot::ensure_font`).

use crate::serial::counters;
use crate::{Error, KernelRun};
use lrugen::experiment::plot::{draw_legend, e2s, svg_and_png, xy_chart, Area, DrawResult};
use lrugen::mm::memory_stat;
use lrugen::mm::vmstat::{Stat, StatKind};
use lrugen::reclaim::mglru::debugfs;
use lrugen::report::html::{Block, Page, INDEX};
use lrugen::sim::RunResult;
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The settings both sides ran with.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Settings {
    /// `mglru` or `classic`.
    pub lru: String,
    /// The value written to `/sys/kernel/mm/lru_gen/enabled` (`n` for classic).
    pub lru_gen_enabled: String,
    /// `memory.max` of `/t`, bytes.
    pub memcg_max_bytes: u64,
    /// `vm.swappiness` (None: the kernel's default, 60).
    pub swappiness: Option<u32>,
    /// `min_ttl_ms` (None: 0).
    pub min_ttl_ms: Option<u32>,
    /// `vm.page-cluster` (the model reads ahead as the kernel does: `lrugen::kernel`'s
    /// `swapin_readahead`).
    pub page_cluster: u32,
    /// `read_ahead_kb` of the data disk (None: the kernel's 128; the model's `ra_pages` is a
    /// quarter of it).
    #[serde(default)]
    pub read_ahead_kb: Option<u32>,
    /// `none`, `disk` or `zram`.
    pub swap: String,
    /// Swap size, MiB.
    pub swap_mib: u64,
    /// zram's compression ratio as the guest measured it (given to the model), if on zram.
    pub zram_ratio: Option<f64>,
    /// Measured accesses per window (and per `lru_gen` capture).
    pub window: u64,
    /// The model's MGLRU profile.
    pub model_profile: String,
    /// The model's capacity: what the kernel's memcg held at the end of the replay, pages.
    pub model_capacity_pages: u64,
    /// Memory of the guest, MiB (0 in fixtures made before it was recorded: 512).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub guest_mem_mib: u32,
    /// Under global pressure (no `memory.max`), the guest's zones before the workload
    /// (`/proc/zoneinfo`, [`crate::KernelRun::zoneinfo_before`]): the model's machine is built
    /// from them ([`crate::model::config`]). Empty under a memcg limit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<crate::zoneinfo::ZoneInfo>,
    /// The tasks' lockstep, accesses per round (`lrugen kernel --lockstep`; 0: none): the op
    /// file's `lockstep` line, which an op file made again from the capture's experiment gets
    /// from here ([`crate::Capture::ops`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lockstep: u32,
    /// `transparent_hugepage` of the guest (its boot parameter) and of the model
    /// (`MachineConfig::thp`); absent (`never`) from fixtures made before THP was modelled, whose
    /// guests booted with `transparent_hugepage=never`.
    #[serde(default, skip_serializing_if = "lrugen::mm::thp::Thp::is_never")]
    pub thp: lrugen::mm::thp::Thp,
    /// A guest of several NUMA nodes (`lrugen kernel --numa`): their sizes, MiB.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa_mib: Vec<u32>,
    /// Its memory tiers and knobs, for the model's `[machine.tiers]`: the knobs the guest was
    /// given, each node's abstract distance read off the guest's tiers
    /// ([`crate::KernelRun::memory_tiers`]: tier N holds distances `N << 7 ..`), no placement
    /// (the op file's `mbind` ops place the pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiers: Option<lrugen::mm::tiers::TierConfig>,
}

/// `memory.max` as a person reads it: `32 MiB`, or `max` (no limit: 0 bytes here).
fn memcg_max_text(bytes: u64) -> String {
    if bytes == 0 {
        "max".into()
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// One counter on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// Where it comes from: `replayer`, `vmstat`, `memory.stat` or `memory.events`.
    pub source: &'static str,
    /// Its name there.
    pub counter: String,
    /// The kernel's value.
    pub kernel: i64,
    /// The model's value.
    pub model: i64,
    /// `(model − kernel) / kernel` (None when the kernel's is 0).
    pub rel_diff: Option<f64>,
}

/// One window of the replay on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WindowRow {
    /// Measured accesses at its end.
    pub accesses: u64,
    /// The kernel's misses in it.
    pub kernel_misses: u64,
    /// The model's (None if the model stopped earlier).
    pub model_misses: Option<u64>,
}

/// One generation of the workload memcg's lruvec (summed over nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Gen {
    /// Sequence number.
    pub seq: u64,
    /// Anon pages.
    pub anon: u64,
    /// File pages.
    pub file: u64,
}

/// The generations at one point of the replay, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GenCapture {
    /// Measured accesses done.
    pub accesses: u64,
    /// The generations.
    pub gens: Vec<Gen>,
}

/// Generation sizes over time of both sides.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Generations {
    /// From the kernel's `lru_gen` captures (after each full window).
    pub kernel: Vec<GenCapture>,
    /// From the model's samples at the same access counts.
    pub model: Vec<GenCapture>,
}

/// Kernel beside model.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// `uname -r` of the guest.
    pub kernel_release: String,
    /// The Debian package booted, if any.
    pub package: Option<String>,
    /// `lru_gen/enabled` as the guest read it back.
    pub lru_gen_enabled_read_back: String,
    /// The workload, in words.
    pub workload: String,
    /// The settings.
    pub settings: Settings,
    /// Counters both sides have.
    pub counters: Vec<Row>,
    /// Misses per window.
    pub windows: Vec<WindowRow>,
    /// Generation sizes over time.
    pub generations: Generations,
    /// Where the OOM killer ended the kernel's replay, if it did ([`KernelRun::oom_killed`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_oom_killed: Option<crate::OomKilled>,
    /// And the model's ([`crate::model::oom_killed`]; set by the caller, which has the op file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_oom_killed: Option<crate::OomKilled>,
}

fn rel(k: i64, m: i64) -> Option<f64> {
    (k != 0).then(|| (m - k) as f64 / k as f64)
}

/// The `/t` lruvec(s) of an `lru_gen` text, summed per sequence number, oldest first (None if the
/// text holds no `/t`, e.g. with the classic LRU).
pub fn workload_gens(text: &str) -> Result<Option<Vec<Gen>>, debugfs::ParseError> {
    let mut by_seq: BTreeMap<u64, Gen> = BTreeMap::new();
    let mut found = false;
    for lv in debugfs::parse(text)?.into_iter().filter(|l| l.path == "/t") {
        found = true;
        for g in lv.gens {
            let e = by_seq.entry(g.seq).or_insert(Gen {
                seq: g.seq,
                anon: 0,
                file: 0,
            });
            e.anon = e.anon.saturating_add(g.pages[0]);
            e.file = e.file.saturating_add(g.pages[1]);
        }
    }
    Ok(found.then(|| by_seq.into_values().collect()))
}

impl Report {
    /// Add the counts of each task of a multi-task replay (`replayer` rows `task N accesses`,
    /// `misses`, `minor`, `requests`, `missed_requests`), kernel beside model.
    pub fn push_tasks(&mut self, k: &[crate::model::TaskCount], m: &[crate::model::TaskCount]) {
        for (i, (kt, mt)) in k.iter().zip(m).enumerate() {
            for (name, kv, mv) in [
                ("accesses", kt.accesses, mt.accesses),
                ("misses", kt.misses, mt.misses),
                ("minor", kt.minor, mt.minor),
                ("requests", kt.requests, mt.requests),
                ("missed_requests", kt.missed_requests, mt.missed_requests),
            ] {
                if kv != 0 || mv != 0 {
                    self.counters.push(Row {
                        source: "replayer",
                        counter: format!("task {i} {name}"),
                        kernel: kv as i64,
                        model: mv as i64,
                        rel_diff: rel(kv as i64, mv as i64),
                    });
                }
            }
        }
    }

    /// Build the report of kernel run `k` and model run `m` (sampled every `settings.window`
    /// measured accesses, see [`crate::model::run`]).
    pub fn build(k: &KernelRun, m: &RunResult, workload: String, settings: Settings) -> Result<Report, Error> {
        let mut rows = Vec::new();
        let push = |rows: &mut Vec<Row>, source: &'static str, name: &str, kv: i64, mv: i64| {
            if kv != 0 || mv != 0 {
                rows.push(Row {
                    source,
                    counter: name.to_string(),
                    kernel: kv,
                    model: mv,
                    rel_diff: rel(kv, mv),
                });
            }
        };
        push(&mut rows, "replayer", "accesses", k.accesses as i64, m.accesses as i64);
        push(&mut rows, "replayer", "misses", k.misses as i64, m.misses as i64);
        push(&mut rows, "replayer", "minor", k.minor as i64, m.minor_faults as i64);
        // vmstat: events and the workingset counters (gauges depend on the machine's size)
        if let Some(mv) = &m.vmstat {
            for &s in Stat::ALL {
                let monotonic = s.kind() == StatKind::Event || s.name().starts_with("workingset_");
                if let (true, Some(&kv)) = (monotonic, k.vmstat_delta.get(s.name())) {
                    push(&mut rows, "vmstat", s.name(), kv, mv.get(s));
                }
            }
        }
        // memory.stat as the replayer read it before exiting (else at the end), beside the model's
        let kst = if k.memory_stat_at_end_of_replay.is_empty() {
            &k.memory_stat
        } else {
            &k.memory_stat_at_end_of_replay
        };
        // (the lines the run's kernel prints whose values the model counts: a line the model has
        // none of, `sock` or `zswpout`, is 0 by construction and not compared)
        if let (Some(ms), Some(sw)) = (&m.memory_stat, &m.kernel_switches) {
            for (name, mv) in memory_stat::modelled(ms, 4096, sw) {
                if let Some(&kv) = kst.get(name) {
                    push(&mut rows, "memory.stat", name, kv, mv as i64);
                }
            }
        }
        if let Some(ev) = &m.memory_events {
            for (name, mv) in counters(&ev.format()) {
                if let Some(&kv) = k.memory_events.get(&name) {
                    push(&mut rows, "memory.events", &name, kv, mv);
                }
            }
        }
        // misses per window: the model's samples fall on the same access counts
        let model_at: BTreeMap<u64, u64> = m.series.iter().map(|s| (s.step, s.misses)).collect();
        let mut windows = Vec::with_capacity(k.windows.len());
        let (mut acc, mut prev) = (0, Some(0));
        for w in &k.windows {
            acc += w.accesses;
            let now = model_at.get(&acc).copied();
            windows.push(WindowRow {
                accesses: acc,
                kernel_misses: w.misses,
                model_misses: now.zip(prev).map(|(n, p)| n - p),
            });
            prev = now;
        }
        let mut gens = Generations::default();
        let bad = |e: debugfs::ParseError| Error::Guest(format!("the kernel's lru_gen: {e}"));
        let mut kcaps: Vec<(u64, &str)> = k.lru_gen_samples.iter().map(|(n, t)| (*n, t.as_str())).collect();
        if settings.lru != "mglru" {
            // the classic LRU: lru_gen still lists (empty) generations
            kcaps.clear();
        } else if kcaps.is_empty() && !k.lru_gen.is_empty() {
            kcaps.push((k.accesses, &k.lru_gen));
        }
        for (n, text) in kcaps {
            if let Some(g) = workload_gens(text).map_err(bad)? {
                gens.kernel.push(GenCapture { accesses: n, gens: g });
            }
        }
        for s in &m.series {
            if !s.generations.is_empty() {
                gens.model.push(GenCapture {
                    accesses: s.step,
                    gens: s
                        .generations
                        .iter()
                        .map(|&(seq, anon, file)| Gen { seq, anon, file })
                        .collect(),
                });
            }
        }
        Ok(Report {
            kernel_release: k.kernel_release.clone(),
            package: k.package.clone(),
            lru_gen_enabled_read_back: k.lru_gen_enabled.clone(),
            workload,
            settings,
            counters: rows,
            windows,
            generations: gens,
            kernel_oom_killed: k.oom_killed,
            model_oom_killed: None,
        })
    }

    /// The line saying where the OOM killer ended each side's replay, when it ended either.
    pub fn oom_line(&self) -> Option<String> {
        if self.kernel_oom_killed.is_none() && self.model_oom_killed.is_none() {
            return None;
        }
        let kernel = self.kernel_oom_killed.map_or("not killed".into(), |k| {
            format!(
                "killed after {}-{} access ops ({} measured)",
                k.ops,
                k.ops + crate::PROGRESS_EVERY - 1,
                k.accesses
            )
        });
        let model = self.model_oom_killed.map_or("not killed".into(), |m| {
            format!("killed after {} access ops ({} measured)", m.ops, m.accesses)
        });
        Some(format!("OOM kill: kernel {kernel}, model {model}"))
    }

    /// The terminal table.
    pub fn table(&self) -> String {
        let s = &self.settings;
        let mut o = String::new();
        let _ = writeln!(
            o,
            "kernel {} ({}{}), model {} profile {}, memcg max {}, model capacity {} pages",
            self.kernel_release,
            s.lru,
            if s.lru == "mglru" {
                format!(" enabled={}", self.lru_gen_enabled_read_back)
            } else {
                String::new()
            },
            s.lru,
            s.model_profile,
            memcg_max_text(s.memcg_max_bytes),
            s.model_capacity_pages
        );
        let _ = writeln!(
            o,
            "swap {} {} MiB{}, swappiness {}, min_ttl_ms {}, page-cluster {}",
            s.swap,
            s.swap_mib,
            s.zram_ratio
                .map(|r| format!(" (zram ratio {r:.1})"))
                .unwrap_or_default(),
            s.swappiness.map_or("default".into(), |v| v.to_string()),
            s.min_ttl_ms.unwrap_or(0),
            s.page_cluster
        );
        let _ = writeln!(o, "workload: {}", self.workload);
        if let Some(l) = self.oom_line() {
            let _ = writeln!(o, "{l}");
        }
        o.push('\n');
        let _ = writeln!(
            o,
            "{:<14} {:<28} {:>12} {:>12} {:>10}",
            "source", "counter", "kernel", "model", "diff"
        );
        for r in &self.counters {
            let d = r.rel_diff.map_or("-".into(), |d| format!("{:+.1}%", d * 100.0));
            let _ = writeln!(
                o,
                "{:<14} {:<28} {:>12} {:>12} {:>10}",
                r.source, r.counter, r.kernel, r.model, d
            );
        }
        o
    }

    /// Write `report.json` and the plots (`misses.svg/.png`, `generations.svg/.png`) into `dir`;
    /// returns the files written. Without a font the plots are skipped and the reason returned
    /// beside the files.
    pub fn write(&self, dir: &Path) -> Result<(Vec<PathBuf>, Option<String>), Error> {
        let io = |p: &Path, e: std::io::Error| Error::Io(format!("{}: {e}", p.display()));
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let json = dir.join("report.json");
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Io(e.to_string()))?;
        std::fs::write(&json, text + "\n").map_err(|e| io(&json, e))?;
        let mut out = vec![json];
        if let Err(e) = lrugen::experiment::plot::ensure_font() {
            return Ok((out, Some(e)));
        }
        both(dir, "misses", &mut out, &|a| match a {
            Area::Svg(a) => self.draw_misses(&a),
            Area::Png(a) => self.draw_misses(&a),
        })?;
        if !self.generations.kernel.is_empty() || !self.generations.model.is_empty() {
            both(dir, "generations", &mut out, &|a| match a {
                Area::Svg(a) => self.draw_generations(&a),
                Area::Png(a) => self.draw_generations(&a),
            })?;
        }
        Ok((out, None))
    }

    /// The report to share (`index.html`, through [`lrugen::report::html`], the writer
    /// `lrugen exp` uses too): the kernel and the settings, the counters table (kernel, model,
    /// difference), misses per window, the plots among `files` (in `dir`) inline, and `command`,
    /// the command line that reproduces the run.
    pub fn page(&self, command: &str, dir: &Path, files: &[PathBuf]) -> Result<Page, Error> {
        let s = &self.settings;
        let mut page = Page::new(format!("lrugen kernel: {} beside the model", self.kernel_release));
        page.push(Block::Para(format!("Workload: {}.", self.workload)));
        let opt = |v: Option<u32>, default: &str| v.map_or(default.to_string(), |v| v.to_string());
        page.push(Block::Heading("Settings".into()));
        page.push(Block::Pairs(vec![
            ("kernel release".into(), self.kernel_release.clone()),
            ("package".into(), self.package.clone().unwrap_or_else(|| "-".into())),
            ("LRU".into(), s.lru.clone()),
            (
                "lru_gen/enabled written, read back".into(),
                format!("{}, {}", s.lru_gen_enabled, self.lru_gen_enabled_read_back),
            ),
            ("memory.max of /t".into(), memcg_max_text(s.memcg_max_bytes)),
            ("vm.swappiness".into(), opt(s.swappiness, "default (60)")),
            ("min_ttl_ms".into(), opt(s.min_ttl_ms, "0")),
            ("vm.page-cluster".into(), s.page_cluster.to_string()),
            ("read_ahead_kb".into(), opt(s.read_ahead_kb, "default (128)")),
            (
                "swap".into(),
                format!(
                    "{} {} MiB{}",
                    s.swap,
                    s.swap_mib,
                    s.zram_ratio
                        .map(|r| format!(" (zram ratio {r:.1})"))
                        .unwrap_or_default()
                ),
            ),
            ("accesses per window".into(), s.window.to_string()),
            ("model profile".into(), s.model_profile.clone()),
            ("model capacity".into(), format!("{} pages", s.model_capacity_pages)),
        ]));
        page.push(Block::Heading("Counters".into()));
        page.push(Block::Para(
            "Each counter both sides have, over the replay: the kernel's, the model's, and (model - kernel) / kernel."
                .into(),
        ));
        page.push(Block::Table {
            head: ["source", "counter", "kernel", "model", "diff"]
                .map(String::from)
                .to_vec(),
            rows: self
                .counters
                .iter()
                .map(|r| {
                    vec![
                        r.source.to_string(),
                        r.counter.clone(),
                        lrugen::report::thousands(r.kernel),
                        lrugen::report::thousands(r.model),
                        r.rel_diff.map_or("-".into(), |d| format!("{:+.1}%", d * 100.0)),
                    ]
                })
                .collect(),
            left: 2,
        });
        page.push(Block::Heading("Misses per window".into()));
        page.push(Block::Table {
            head: ["measured accesses", "kernel misses", "model misses"]
                .map(String::from)
                .to_vec(),
            rows: self
                .windows
                .iter()
                .map(|w| {
                    vec![
                        lrugen::report::thousands(w.accesses as i64),
                        lrugen::report::thousands(w.kernel_misses as i64),
                        w.model_misses
                            .map_or("-".into(), |m| lrugen::report::thousands(m as i64)),
                    ]
                })
                .collect(),
            left: 0,
        });
        page.push_plots(dir, files)
            .map_err(|e| Error::Io(format!("{}: {e}", dir.display())))?;
        page.push(Block::Heading("Reproduce".into()));
        page.push(Block::Pre(command.to_string()));
        page.push(Block::Para(format!(
            "lrugen {}. The directory also holds report.json (this report's data) and kernel-run.json \
             (everything the guest reported, the lru_gen captures included).",
            lrugen::experiment::outdir::VERSION
        )));
        Ok(page)
    }

    /// Write [`Report::page`] as `dir/index.html`; returns its path.
    pub fn write_html(&self, command: &str, dir: &Path, files: &[PathBuf]) -> Result<PathBuf, Error> {
        self.page(command, dir, files)?
            .write(dir)
            .map_err(|e| Error::Io(format!("{}: {e}", dir.join(INDEX).display())))
    }

    fn draw_misses<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        area.fill(&WHITE).map_err(e2s)?;
        let k: Vec<(f64, f64)> = self
            .windows
            .iter()
            .map(|w| (w.accesses as f64, w.kernel_misses as f64))
            .collect();
        let m: Vec<(f64, f64)> = self
            .windows
            .iter()
            .filter_map(|w| Some((w.accesses as f64, w.model_misses? as f64)))
            .collect();
        let xmax = k.iter().map(|p| p.0).fold(1.0, f64::max);
        let ymax = k.iter().chain(&m).map(|p| p.1).fold(1.0, f64::max) * 1.1;
        let caption = format!("misses per window: kernel {} vs model", self.kernel_release);
        let axes = ("measured accesses (count)", "misses in the window (major faults)");
        let mut chart = xy_chart(area, &caption, 18, (xmax, ymax), axes)?;
        for (name, pts, color) in [("kernel", &k, RED), ("model", &m, BLUE)] {
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                .map_err(e2s)?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(e2s)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        area.present().map_err(e2s)
    }

    fn draw_generations<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult {
        area.fill(&WHITE).map_err(e2s)?;
        let panels = area.split_evenly((1, 2));
        let total = |c: &GenCapture| c.gens.iter().map(|g| g.anon + g.file).sum::<u64>();
        let all = self.generations.kernel.iter().chain(&self.generations.model);
        let ymax = all.clone().map(total).max().unwrap_or(1).max(1) as f64 * 1.1;
        let xmax = all.map(|c| c.accesses).max().unwrap_or(1).max(1) as f64;
        for (panel, (name, caps)) in panels.iter().zip([
            (format!("kernel {}", self.kernel_release), &self.generations.kernel),
            ("model".to_string(), &self.generations.model),
        ]) {
            let caption = format!("{name}: generations of /t");
            let axes = ("measured accesses (count)", "pages (anon + file)");
            let mut chart = xy_chart(panel, &caption, 16, (xmax, ymax), axes)?;
            // layer by age (max_seq − seq, the oldest ages folded into 3), stacked oldest at the
            // bottom: the top of layer `a` is the sum of the ages ≥ a
            let top = |c: &GenCapture, a: u64| -> f64 {
                let max = c.gens.iter().map(|g| g.seq).max().unwrap_or(0);
                c.gens
                    .iter()
                    .filter(|g| (max - g.seq).min(3) >= a)
                    .map(|g| (g.anon + g.file) as f64)
                    .sum()
            };
            for a in 0..4u64 {
                let color = Palette99::pick(a as usize).mix(0.8);
                let mut poly: Vec<(f64, f64)> = caps.iter().map(|c| (c.accesses as f64, top(c, a))).collect();
                poly.extend(caps.iter().rev().map(|c| (c.accesses as f64, top(c, a + 1))));
                let label = match a {
                    0 => "youngest".to_string(),
                    3 => "youngest − 3 and older".to_string(),
                    _ => format!("youngest − {a}"),
                };
                chart
                    .draw_series(std::iter::once(Polygon::new(poly, color.filled())))
                    .map_err(e2s)?
                    .label(label)
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], color.filled()));
            }
            draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        area.present().map_err(e2s)
    }
}

const SIZE: (u32, u32) = (1000, 500);

/// Draw one chart as `stem.svg` and `stem.png` in `dir`.
fn both(dir: &Path, stem: &str, out: &mut Vec<PathBuf>, draw: &dyn Fn(Area<'_>) -> DrawResult) -> Result<(), Error> {
    svg_and_png(dir, stem, SIZE, out, draw).map_err(Error::Io)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 6.12 boot's `lru_gen_full` with fields and lines garbled (extreme numbers, stray
    /// markers, lines dropped or repeated) gives generations or a parse error, never a panic (the
    /// per-seq sums saturate). A fixed xorshift sequence keeps it reproducible.
    #[test]
    fn garbled_lru_gen_never_panics() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../tests/fixtures/debian-6.12-mglru-file-zipf.json")).unwrap();
        let text = fixture["run"]["lru_gen_full"].as_str().unwrap();
        assert!(workload_gens(text).unwrap().is_some_and(|g| !g.is_empty()));
        const NOISE: &[&str] = &[
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "0r",
            "0x",
            "RTx",
            "memcg",
            "node",
            "/t",
            "",
        ];
        let lines: Vec<&str> = text.lines().collect();
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let (mut oks, mut errs) = (0, 0);
        for _ in 0..3000 {
            let mut g: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            for _ in 0..1 + next(3) {
                let at = next(g.len());
                match next(4) {
                    0 => {
                        g.remove(at);
                    }
                    1 => {
                        let l = g[next(g.len())].clone();
                        g.insert(at, l);
                    }
                    _ => {
                        let mut words: Vec<&str> = g[at].split(' ').collect();
                        let w = next(words.len());
                        words[w] = NOISE[next(NOISE.len())];
                        g[at] = words.join(" ");
                    }
                }
            }
            match workload_gens(&g.join("\n")) {
                Ok(_) => oks += 1,
                Err(_) => errs += 1,
            }
        }
        assert!(oks > 0 && errs > 0, "{oks} parsed, {errs} refused");
    }
}

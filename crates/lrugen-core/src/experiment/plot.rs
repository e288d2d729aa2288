// SPDX-License-Identifier: GPL-2.0-only
//! Plots of an experiment, each as SVG and PNG (plotters): per sweep point, a bar chart of the
//! main metric by policy (bars from 0, 95% confidence intervals as whiskers with caps), a
//! dot-and-whisker chart of each policy's difference from the baseline (relative, on an axis
//! around zero, so that a 3% difference shows), the misses over time of the kernel policies (one
//! line per policy, first repetition), and the MGLRU generation sizes over time (one line per
//! generation age, first repetition). Axes carry units; counts get integer ticks with thousands
//! separators or k/M suffixes ([`tick_format`]). Elements are drawn in the policies' order, so
//! the same results give the same SVG bytes.
//!
//! Text needs a TrueType font, read at run time (so the build needs no font library): the file
//! named by `LRUGEN_FONT`, else DejaVu Sans or Liberation Sans where Linux distributions install
//! them, or Arial on macOS and Windows. Without one, no plot is written and the caller is told.

use super::runner::Results;
use super::ExpError;
use crate::report::thousands;
use plotters::coord::ranged1d::{AsRangedCoord, SegmentedCoord};
use plotters::coord::types::{RangedCoordf64, RangedCoordi32};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where fonts usually are.
const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans-fonts/LiberationSans-Regular.ttf",
    "/usr/local/share/fonts/DejaVuSans.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "/Library/Fonts/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

static FONT: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// Register a font with plotters once per process; the path of the font, or why there is none.
pub fn ensure_font() -> Result<PathBuf, String> {
    FONT.get_or_init(|| {
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(p) = std::env::var_os("LRUGEN_FONT") {
            candidates.push(PathBuf::from(p));
        }
        candidates.extend(FONT_CANDIDATES.iter().map(PathBuf::from));
        for p in candidates {
            let Ok(bytes) = std::fs::read(&p) else { continue };
            // plotters keeps fonts for the life of the process.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                return Ok(p);
            }
        }
        Err("no TrueType font found for the plots' text (set LRUGEN_FONT to a .ttf file)".into())
    })
    .clone()
}

/// What drawing a chart gives: nothing, or why it failed.
pub type DrawResult = Result<(), String>;

/// A plotters error as text.
pub fn e2s<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// How a metric reads on an axis: words with the unit, the factor from the stored value to the
/// plotted one, and whether it is a count (integer ticks).
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    /// "misses (major faults)", "hit ratio (%)", "IOPS (I/O per second)".
    pub label: String,
    /// Plotted value = stored value × this.
    pub scale: f64,
    /// A count: integer ticks.
    pub count: bool,
}

/// The axis unit of an experiment metric (see [`super::spec::METRICS`]).
pub fn unit_of(metric: &str) -> Unit {
    let (label, scale, count) = match metric {
        "hit_ratio" => ("hit ratio (%)", 100.0, false),
        "accesses" => ("accesses (count)", 1.0, true),
        "hits" => ("hits (accesses)", 1.0, true),
        "misses" => ("misses (major faults)", 1.0, true),
        "minor_faults" => ("minor faults (count)", 1.0, true),
        "refaults" => ("refaults (pages)", 1.0, true),
        "pgscan" => ("pgscan (pages scanned)", 1.0, true),
        "pgsteal" => ("pgsteal (pages reclaimed)", 1.0, true),
        "pgactivate" => ("pgactivate (pages)", 1.0, true),
        "pgdeactivate" => ("pgdeactivate (pages)", 1.0, true),
        "pswpin" => ("pswpin (pages swapped in)", 1.0, true),
        "pswpout" => ("pswpout (pages swapped out)", 1.0, true),
        "allocstall" => ("allocstall (direct reclaims)", 1.0, true),
        "oom_kill" => ("oom_kill (kills)", 1.0, true),
        "workingset_activate" => ("workingset_activate (refaults activated)", 1.0, true),
        "promotions" => ("access-time promotions (MGLRU-FG)", 1.0, true),
        "pswpout_incompressible" => ("pswpout of incompressible pages (pages)", 1.0, true),
        "zram_compr_bytes" => ("zram compr_data_size (bytes)", 1.0, true),
        "zram_pool_pages" => ("zram pool (pages)", 1.0, true),
        "zram_huge_pages" => ("zram huge_pages_since (pages)", 1.0, true),
        "numa_hint_faults" => ("numa_hint_faults (hint faults)", 1.0, true),
        "numa_pages_migrated" => ("numa_pages_migrated (pages promoted)", 1.0, true),
        "numa_pte_updates" => ("numa_pte_updates (PTEs made PROT_NONE)", 1.0, true),
        "pgpromote_success" => ("pgpromote_success (pages)", 1.0, true),
        "pgpromote_candidate" => ("pgpromote_candidate (pages)", 1.0, true),
        "pgdemote_kswapd" => ("pgdemote_kswapd (pages demoted by kswapd)", 1.0, true),
        "pgdemote_direct" => ("pgdemote_direct (pages demoted by direct reclaim)", 1.0, true),
        "pgscan_kswapd" => ("pgscan_kswapd (pages scanned by kswapd)", 1.0, true),
        "pgsteal_anon" => ("pgsteal_anon (anon pages reclaimed or demoted)", 1.0, true),
        "pgrefill" => ("pgrefill (pages scanned on active lists)", 1.0, true),
        "iops" => ("IOPS (I/O per second)", 1.0, false),
        "bw_mib_s" => ("bandwidth (MiB/s)", 1.0, false),
        "clat_mean_us" => ("mean completion latency (µs)", 1.0, false),
        "clat_p50_us" => ("p50 completion latency (µs)", 1.0, false),
        "clat_p99_us" => ("p99 completion latency (µs)", 1.0, false),
        "clat_p99_9_us" => ("p99.9 completion latency (µs)", 1.0, false),
        "clat_p90_us" => ("p90 completion latency (µs)", 1.0, false),
        "clat_max_us" => ("maximum completion latency (µs)", 1.0, false),
        "req_p50_us" => ("p50 request latency (µs)", 1.0, false),
        "req_p90_us" => ("p90 request latency (µs)", 1.0, false),
        "req_p99_us" => ("p99 request latency (µs)", 1.0, false),
        "req_p99_9_us" => ("p99.9 request latency (µs)", 1.0, false),
        "req_max_us" => ("maximum request latency (µs)", 1.0, false),
        "direct_reclaim_ms" => ("direct reclaim time (ms, virtual)", 1.0, false),
        "kswapd_ms" => ("kswapd time (ms, virtual)", 1.0, false),
        "lru_lock_task_ms" => (
            "lru_lock spinning and transfers on the tasks' path (ms, virtual)",
            1.0,
            false,
        ),
        "lru_lock_direct_ms" => (
            "lru_lock spinning and transfers in direct reclaim (ms, virtual)",
            1.0,
            false,
        ),
        "lru_lock_kswapd_ms" => ("lru_lock spinning and transfers in kswapd (ms, virtual)", 1.0, false),
        "ops_per_sec" => ("throughput (operations per second)", 1.0, false),
        "virtual_s" => ("run time (s, virtual)", 1.0, false),
        other => {
            return Unit {
                label: other.replace('_', " "),
                scale: 1.0,
                count: false,
            }
        }
    };
    Unit {
        label: label.into(),
        scale,
        count,
    }
}

/// `x` with at most `decimals` decimals, trailing zeros dropped ("12.5", "200", "-0.25").
fn trimmed(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// The tick labels of an axis whose values reach `max` in magnitude: with a k or M suffix from
/// 10,000 up ("12.5k", "200k", "1.25M"), else integers with thousands separators ("2,500") for
/// counts and values from 10 up, else up to four decimals ("0.25"). Never "200000.0".
pub fn tick_format(max: f64, count: bool) -> impl Fn(&f64) -> String {
    let max = max.abs();
    move |v: &f64| {
        let v = *v;
        if v.abs() < max * 1e-9 || v == 0.0 {
            "0".into()
        } else if max >= 1e6 {
            format!("{}M", trimmed(v / 1e6, 3))
        } else if max >= 1e4 {
            format!("{}k", trimmed(v / 1e3, 3))
        } else if count || max >= 10.0 {
            thousands(v.round() as i64)
        } else {
            trimmed(v, 4)
        }
    }
}

/// How many tick labels an axis of counts spanning `span` may have so that every tick is an
/// integer (plotters picks steps of 1, 2 or 5 × 10^k within that many).
pub fn count_labels(span: f64) -> usize {
    (span.floor() as usize + 1).clamp(2, 10)
}

/// An x–y chart of `f64` coordinates from 0 ([`xy_chart`]).
pub type XyChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// An x–y chart of two counts on `area` over `0..xmax` × `0..ymax`, captioned in `caption_size`
/// points, its mesh drawn with the axis descriptions `desc` (x, y, with their units) and integer
/// ticks with thousands separators or k/M suffixes ([`tick_format`]).
pub fn xy_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    caption_size: u32,
    (xmax, ymax): (f64, f64),
    desc: (&str, &str),
) -> Result<XyChart<'a, DB>, String> {
    chart_over(
        area,
        caption,
        caption_size,
        0f64..xmax,
        (xmax, ymax),
        desc,
        Some(count_labels(xmax).min(8)),
    )
}

/// [`xy_chart`] over the x range `x` (reaching `xmax`), with `x_labels` x ticks at most (`None`:
/// as plotters picks).
fn chart_over<'a, DB: DrawingBackend, X: AsRangedCoord<Value = f64>>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    caption_size: u32,
    x: X,
    (xmax, ymax): (f64, f64),
    (x_desc, y_desc): (&str, &str),
    x_labels: Option<usize>,
) -> Result<ChartContext<'a, DB, Cartesian2d<X::CoordDescType, RangedCoordf64>>, String>
where
    X::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", caption_size))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x, 0f64..ymax)
        .map_err(e2s)?;
    let (xt, yt) = (tick_format(xmax, true), tick_format(ymax, true));
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .y_labels(count_labels(ymax))
        .x_label_formatter(&xt)
        .y_label_formatter(&yt);
    if let Some(n) = x_labels {
        mesh.x_labels(n);
    }
    mesh.draw().map_err(e2s)?;
    Ok(chart)
}

/// Draws the legend of `chart`'s labelled series at `position`, on a light box.
pub fn draw_legend<'a, DB: DrawingBackend + 'a, X: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, RangedCoordf64>>,
    position: SeriesLabelPosition,
) -> DrawResult {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(e2s)
}

/// A policy's value with its 95% CI: (label, value, half-width).
pub type Bar = (String, f64, Option<f64>);

/// Half-width in pixels of a whisker's caps.
const CAP: i32 = 9;

/// A chart of categories (one per policy) along x and `f64` values along y.
type CatChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<SegmentedCoord<RangedCoordi32>, RangedCoordf64>>;

/// A chart over `n` categories named `labels` (x, described `x_desc`) and `y` (described
/// `y_desc`); `count`: the y values are counts (integer ticks).
fn cat_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    (x_desc, y_desc): (&str, &str),
    labels: &[String],
    y: std::ops::Range<f64>,
    count: bool,
    y_tick: &dyn Fn(&f64) -> String,
) -> Result<CatChart<'a, DB>, String> {
    let n = labels.len() as i32;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(78)
        .build_cartesian_2d((0..(n - 1).max(0)).into_segmented(), y.clone())
        .map_err(e2s)?;
    let fmt = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
        _ => String::new(),
    };
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .x_labels(labels.len())
        .x_label_formatter(&fmt)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .y_label_formatter(y_tick);
    if count {
        mesh.y_labels(count_labels(y.end - y.start));
    }
    mesh.draw().map_err(e2s)?;
    Ok(chart)
}

/// The 95% CI `v ± c` of category `i` as a whisker: a vertical line with a cap at each end.
fn draw_whisker<DB: DrawingBackend>(chart: &mut CatChart<'_, DB>, i: i32, v: f64, c: f64) -> DrawResult {
    let style = BLACK.stroke_width(2);
    let x = || SegmentValue::CenterOf(i);
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(x(), v - c), (x(), v + c)],
            style,
        )))
        .map_err(e2s)?;
    for end in [v - c, v + c] {
        let cap = EmptyElement::at((x(), end)) + PathElement::new(vec![(-CAP, 0), (CAP, 0)], style);
        chart.draw_series(std::iter::once(cap)).map_err(e2s)?;
    }
    Ok(())
}

/// Bars from 0 of each policy's mean, with whiskers for the 95% CIs, in the policies' order (drawn
/// one by one, so that the SVG's elements come in that order).
fn draw_bars<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, title: &str, unit: &Unit, bars: &[Bar]) -> DrawResult {
    area.fill(&WHITE).map_err(e2s)?;
    let n = bars.len() as i32;
    let top = bars.iter().map(|b| b.1 + b.2.unwrap_or(0.0)).fold(0.0f64, f64::max);
    let top = if top > 0.0 { top * 1.12 } else { 1.0 };
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    let tick = tick_format(top, unit.count);
    let y_desc = format!("{}, mean and 95% CI", unit.label);
    let mut chart = cat_chart(area, title, ("policy", &y_desc), &labels, 0f64..top, unit.count, &tick)?;
    for (i, b) in bars.iter().enumerate() {
        let i = i as i32;
        let next = if i + 1 < n {
            SegmentValue::Exact(i + 1)
        } else {
            SegmentValue::Last
        };
        let mut rect = Rectangle::new(
            [(SegmentValue::Exact(i), b.1), (next, 0.0)],
            Palette99::pick(i as usize).mix(0.8).filled(),
        );
        rect.set_margin(0, 0, 18, 18);
        chart.draw_series(std::iter::once(rect)).map_err(e2s)?;
    }
    for (i, b) in bars.iter().enumerate() {
        if let Some(c) = b.2 {
            draw_whisker(&mut chart, i as i32, b.1, c)?;
        }
    }
    area.present().map_err(e2s)
}

/// The y range of a difference chart: around zero, with zero and every whisker inside.
fn delta_range(points: &[Bar]) -> std::ops::Range<f64> {
    let lo = points.iter().map(|p| p.1 - p.2.unwrap_or(0.0)).fold(0.0f64, f64::min);
    let hi = points.iter().map(|p| p.1 + p.2.unwrap_or(0.0)).fold(0.0f64, f64::max);
    let span = hi - lo;
    if span <= 0.0 || !span.is_finite() {
        return -1.0..1.0;
    }
    (lo - 0.12 * span)..(hi + 0.2 * span)
}

/// Dot-and-whisker: each policy's difference from the baseline (a dot) with its 95% CI (a whisker
/// with caps), on an axis around zero (a line at zero: the baseline), each dot labelled with its
/// value.
pub fn draw_delta<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    (x_desc, y_desc): (&str, &str),
    suffix: &str,
    points: &[Bar],
) -> DrawResult {
    area.fill(&WHITE).map_err(e2s)?;
    let labels: Vec<String> = points.iter().map(|b| b.0.clone()).collect();
    let y = delta_range(points);
    let max = y.start.abs().max(y.end.abs());
    let base = tick_format(max, false);
    let tick = |v: &f64| {
        let t = base(v);
        if *v > 0.0 && t != "0" {
            format!("+{t}")
        } else {
            t
        }
    };
    let mut chart = cat_chart(area, title, (x_desc, y_desc), &labels, y, false, &tick)?;
    let n = points.len() as i32;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(SegmentValue::Exact(0), 0.0), (SegmentValue::Exact(n), 0.0)],
            RGBColor(90, 90, 90).stroke_width(1),
        )))
        .map_err(e2s)?;
    for (i, p) in points.iter().enumerate() {
        let i = i as i32;
        if let Some(c) = p.2 {
            draw_whisker(&mut chart, i, p.1, c)?;
        }
        let text = match p.2 {
            Some(c) => format!("{}{suffix} ± {}{suffix}", signed(p.1), trimmed(c, 2)),
            None => format!("{}{suffix} (no CI)", signed(p.1)),
        };
        let dot = EmptyElement::at((SegmentValue::CenterOf(i), p.1))
            + Circle::new((0, 0), 5, Palette99::pick(i as usize + 1).filled());
        chart.draw_series(std::iter::once(dot)).map_err(e2s)?;
        // the value above the whisker's upper cap
        let style = TextStyle::from(("sans-serif", 14)).pos(Pos::new(HPos::Center, VPos::Bottom));
        let label =
            EmptyElement::at((SegmentValue::CenterOf(i), p.1 + p.2.unwrap_or(0.0))) + Text::new(text, (0, -6), style);
        chart.draw_series(std::iter::once(label)).map_err(e2s)?;
    }
    area.present().map_err(e2s)
}

/// "+3.1", "-0.25", "0".
fn signed(x: f64) -> String {
    let t = trimmed(x, 2);
    if x > 0.0 && t != "0" {
        format!("+{t}")
    } else {
        t
    }
}

/// A labelled line of a [`draw_lines`] chart: (label, palette colour, points).
pub type Line = (String, usize, Vec<(f64, f64)>);

/// A chart of `lines` over x from 0 and y from 0, titled `title`, with the axis descriptions
/// `desc` (x, y) and a legend.
pub fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    (x_desc, y_desc): (&str, &str),
    lines: &[Line],
) -> DrawResult {
    area.fill(&WHITE).map_err(e2s)?;
    let xmax = lines
        .iter()
        .flat_map(|l| l.2.iter().map(|p| p.0))
        .fold(0.0f64, f64::max)
        .max(1.0);
    let ymax = y_top(lines);
    let mut chart = xy_chart(area, title, 18, (xmax, ymax), (x_desc, y_desc))?;
    draw_line_series(&mut chart, lines)?;
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    area.present().map_err(e2s)
}

/// The top of a y axis from 0 for `lines`: their largest y with a margin of 8%, or 1 without a
/// positive y.
fn y_top<'a>(lines: impl IntoIterator<Item = &'a Line>) -> f64 {
    let ymax = lines
        .into_iter()
        .flat_map(|l| l.2.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    if ymax > 0.0 {
        ymax * 1.08
    } else {
        1.0
    }
}

/// Draws each of `lines` on `chart` as a line of its palette colour, labelled for the legend.
fn draw_line_series<'a, DB: DrawingBackend + 'a, X: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, RangedCoordf64>>,
    lines: &[Line],
) -> DrawResult {
    for (name, color, pts) in lines {
        let c = Palette99::pick(*color);
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            .map_err(e2s)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    Ok(())
}

/// A chart of curves over a logarithmic x axis (`lrugen mrc`'s miss-ratio curves against the
/// cache size): `lines` drawn as lines, `points` (measurements a line is checked against) as
/// circles of their colour, y from 0; x from the smallest to the largest x (all positive), with
/// the axis descriptions `desc` (x, y) and a legend at the upper right.
pub fn draw_log_x<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    (x_desc, y_desc): (&str, &str),
    lines: &[Line],
    points: &[Line],
) -> DrawResult {
    area.fill(&WHITE).map_err(e2s)?;
    let xs = || lines.iter().chain(points).flat_map(|l| l.2.iter().map(|p| p.0));
    let xmin = xs().fold(f64::INFINITY, f64::min).max(1.0);
    let xmax = xs().fold(0.0f64, f64::max).max(xmin * 2.0);
    let ymax = y_top(lines.iter().chain(points));
    let x = (xmin / 1.1..xmax * 1.1).log_scale();
    let mut chart = chart_over(area, title, 18, x, (xmax, ymax), (x_desc, y_desc), None)?;
    draw_line_series(&mut chart, lines)?;
    for (name, color, pts) in points {
        let c = Palette99::pick(*color);
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.stroke_width(2))))
            .map_err(e2s)?
            .label(name.as_str())
            .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.stroke_width(2)));
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    area.present().map_err(e2s)
}

const SIZE: (u32, u32) = (800, 500);

/// Axes of the misses-over-time chart.
const MISSES_AXES: (&str, &str) = ("accesses done (count)", "misses so far (major faults)");
/// Axes of the memory tiers chart.
const TIER_AXES: (&str, &str) = (
    "accesses done (count)",
    "pages placed on the slow tier, now on the fast",
);
/// Axes of the generations chart.
const GEN_AXES: (&str, &str) = ("accesses done (count)", "pages in the generation (anon + file)");

/// Draw one chart as `stem.svg` and `stem.png` in `dir`, `size` pixels, and add both paths to
/// `out`; an error names the file.
pub fn svg_and_png(
    dir: &Path,
    stem: &str,
    size: (u32, u32),
    out: &mut Vec<PathBuf>,
    draw: &dyn Fn(Area<'_>) -> DrawResult,
) -> Result<(), String> {
    let svg = dir.join(format!("{stem}.svg"));
    draw(Area::Svg(SVGBackend::new(&svg, size).into_drawing_area())).map_err(|e| format!("{}: {e}", svg.display()))?;
    out.push(svg);
    let png = dir.join(format!("{stem}.png"));
    draw(Area::Png(BitMapBackend::new(&png, size).into_drawing_area()))
        .map_err(|e| format!("{}: {e}", png.display()))?;
    out.push(png);
    Ok(())
}

fn both(dir: &Path, stem: &str, out: &mut Vec<PathBuf>, draw: &dyn Fn(Area<'_>) -> DrawResult) -> Result<(), ExpError> {
    svg_and_png(dir, stem, SIZE, out, draw).map_err(ExpError::Io)
}

/// A drawing area of either backend.
pub enum Area<'a> {
    /// An SVG file.
    Svg(DrawingArea<SVGBackend<'a>, Shift>),
    /// A PNG file.
    Png(DrawingArea<BitMapBackend<'a>, Shift>),
}

/// A file-name-safe form of a label.
fn safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Write the plots into `dir`; returns the files written. Fails (writing nothing) when no font
/// can be found.
pub fn write_plots(r: &Results, dir: &Path) -> Result<Vec<PathBuf>, ExpError> {
    ensure_font().map_err(ExpError::NoFont)?;
    std::fs::create_dir_all(dir).map_err(|e| ExpError::Io(format!("{}: {e}", dir.display())))?;
    let e = &r.experiment;
    let mut out = Vec::new();
    for p in &e.points {
        let suffix = if e.points.len() > 1 {
            format!(" ({})", p.label())
        } else {
            String::new()
        };
        // The main metric by policy, with CIs, bars from 0.
        let unit = unit_of(&e.metric);
        let bars: Vec<Bar> = e
            .variants
            .iter()
            .filter_map(|v| {
                let s = &r.summary(p.index, &v.label, &e.metric)?.summary;
                Some((v.label.clone(), s.mean * unit.scale, s.ci95.map(|c| c * unit.scale)))
            })
            .collect();
        if !bars.is_empty() {
            let title = format!("{}: {}{suffix}", e.name, e.metric.replace('_', " "));
            both(
                dir,
                &format!("bar-{}-p{}", safe(&e.metric), p.index),
                &mut out,
                &|a| match a {
                    Area::Svg(a) => draw_bars(&a, &title, &unit, &bars),
                    Area::Png(a) => draw_bars(&a, &title, &unit, &bars),
                },
            )?;
        }
        // The difference of each policy from the baseline, relative (%) where the baseline's
        // mean is not 0, with its 95% CI: dot and whisker around zero.
        let base = &r.baseline().label;
        let diffs: Vec<(String, &super::stats::Diff)> = e
            .variants
            .iter()
            .filter(|v| v.label != *base)
            .filter_map(|v| {
                let d = r.summary(p.index, &v.label, &e.metric)?.vs_baseline.as_ref()?;
                Some((v.label.clone(), d))
            })
            .collect();
        if !diffs.is_empty() {
            let relative = diffs.iter().all(|(_, d)| d.rel_pct.is_some());
            let pts: Vec<Bar> = diffs
                .iter()
                .map(|(l, d)| {
                    if relative {
                        (l.clone(), d.rel_pct.unwrap_or(0.0), d.rel_ci95_pct)
                    } else {
                        (l.clone(), d.diff * unit.scale, d.ci95.map(|c| c * unit.scale))
                    }
                })
                .collect();
            let what = e.metric.replace('_', " ");
            let title = format!("{}: Δ {what} vs {base}{suffix}", e.name);
            let (y_desc, unit_suffix) = if relative {
                (format!("Δ {what} vs {base} (% of {base}), 95% CI"), "%")
            } else {
                (format!("Δ {}, 95% CI", unit.label), "")
            };
            let x_desc = format!("policy (compared with the baseline {base}, the line at 0)");
            both(
                dir,
                &format!("delta-{}-p{}", safe(&e.metric), p.index),
                &mut out,
                &|a| match a {
                    Area::Svg(a) => draw_delta(&a, &title, (&x_desc, &y_desc), unit_suffix, &pts),
                    Area::Png(a) => draw_delta(&a, &title, (&x_desc, &y_desc), unit_suffix, &pts),
                },
            )?;
        }
        // Misses over time, first repetition, one line per policy.
        let first = |variant: usize| {
            r.cells
                .iter()
                .find(|c| c.cell.point == p.index && c.cell.variant == variant && c.cell.repetition == 0)
        };
        // and, with memory tiers, the pages first placed on a lower tier now on a top-tier node
        for (key, what, stem, axes) in [
            ("misses", "misses over time", "misses", MISSES_AXES),
            (
                "slow_placed_on_top",
                "pages placed on the slow tier now on the fast tier",
                "tiers",
                TIER_AXES,
            ),
        ] {
            let lines: Vec<Line> = e
                .variants
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let s = first(i)?.series.get(key)?;
                    Some((v.label.clone(), i, s.clone()))
                })
                .collect();
            if !lines.is_empty() {
                let title = format!("{}: {what}{suffix}", e.name);
                both(dir, &format!("{stem}-p{}", p.index), &mut out, &|a| match a {
                    Area::Svg(a) => draw_lines(&a, &title, axes, &lines),
                    Area::Png(a) => draw_lines(&a, &title, axes, &lines),
                })?;
            }
        }
        // MGLRU generation sizes over time.
        for (i, v) in e.variants.iter().enumerate() {
            let Some(c) = first(i) else { continue };
            let gens: Vec<Line> = (0..4)
                .filter_map(|age| {
                    let s = c.series.get(&format!("gen{age}"))?;
                    let name = if age == 0 {
                        "youngest".to_string()
                    } else {
                        format!("youngest − {age}")
                    };
                    Some((name, age, s.clone()))
                })
                .collect();
            if gens.is_empty() {
                continue;
            }
            let title = format!("{}: {} generation sizes{suffix}", e.name, v.label);
            both(
                dir,
                &format!("generations-p{}-{}", p.index, safe(&v.label)),
                &mut out,
                &|a| match a {
                    Area::Svg(a) => draw_lines(&a, &title, GEN_AXES, &gens),
                    Area::Png(a) => draw_lines(&a, &title, GEN_AXES, &gens),
                },
            )?;
        }
    }
    // A sweep: every point's differences from the baseline in one dot-and-whisker chart, so that
    // which values change the answer (sign, or size beyond the CI) shows at a glance.
    if e.points.len() > 1 {
        let base = &r.baseline().label;
        let mut pts: Vec<Bar> = Vec::new();
        let mut relative = true;
        let mut diffs = Vec::new();
        for p in &e.points {
            let at: Vec<&str> = p.params.iter().map(|(_, v)| v.as_str()).collect();
            for v in e.variants.iter().filter(|v| v.label != *base) {
                if let Some(d) = r
                    .summary(p.index, &v.label, &e.metric)
                    .and_then(|s| s.vs_baseline.as_ref())
                {
                    relative &= d.rel_pct.is_some();
                    diffs.push((format!("{} {}", at.join(","), short_label(&v.label)), d));
                }
            }
        }
        let unit = unit_of(&e.metric);
        for (l, d) in &diffs {
            pts.push(if relative {
                (l.clone(), d.rel_pct.unwrap_or(0.0), d.rel_ci95_pct)
            } else {
                (l.clone(), d.diff * unit.scale, d.ci95.map(|c| c * unit.scale))
            });
        }
        if !pts.is_empty() {
            let what = e.metric.replace('_', " ");
            let swept: Vec<&str> = e.sweep.iter().map(|s| s.path.as_str()).collect();
            let swept: Vec<&str> = swept.iter().map(|p| short_path(p)).collect();
            let title = format!("{}: Δ {what} vs {base} over {}", e.name, swept.join(", "));
            let (y_desc, unit_suffix) = if relative {
                (format!("Δ {what} vs {base} (% of {base}), 95% CI"), "%")
            } else {
                (format!("Δ {}, 95% CI", unit.label), "")
            };
            let x_desc = format!("{} and policy (the line at 0: the baseline)", swept.join(", "));
            let width = (SIZE.0).max(130 * pts.len() as u32);
            svg_and_png(
                dir,
                &format!("delta-{}-sweep", safe(&e.metric)),
                (width, SIZE.1),
                &mut out,
                &|a| match a {
                    Area::Svg(a) => draw_delta(&a, &title, (&x_desc, &y_desc), unit_suffix, &pts),
                    Area::Png(a) => draw_delta(&a, &title, (&x_desc, &y_desc), unit_suffix, &pts),
                },
            )
            .map_err(ExpError::Io)?;
        }
    }
    Ok(out)
}

/// A policy label short enough for a category axis: `mglru-` dropped, flipped switches as `+…`
/// (`mglru-fg+fg_refault_distance=true` → `fg+…`).
fn short_label(l: &str) -> String {
    let l = l.strip_prefix("mglru-").unwrap_or(l);
    match l.split_once('+') {
        Some((a, _)) => format!("{a}+…"),
        None => l.to_string(),
    }
}

/// The last segment of a dotted sweep path (`mglru.fg.reset_refs` → `reset_refs`).
fn short_path(p: &str) -> &str {
    p.rsplit('.').next().unwrap_or(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_integers_with_separators_or_suffixes() {
        let big = tick_format(250_000.0, true);
        assert_eq!(
            [0.0, 50_000.0, 200_000.0, 12_500.0].map(|v| big(&v)),
            ["0", "50k", "200k", "12.5k"]
        );
        let huge = tick_format(3.5e6, false);
        assert_eq!([1.25e6, 3e6].map(|v| huge(&v)), ["1.25M", "3M"]);
        let small = tick_format(5_000.0, true);
        assert_eq!([2_500.0, 4_000.0].map(|v| small(&v)), ["2,500", "4,000"]);
        let pct = tick_format(4.0, false);
        assert_eq!([0.5, -2.0, 0.30000000000000004].map(|v| pct(&v)), ["0.5", "-2", "0.3"]);
        // an axis of a few counts: at most one label per integer
        assert_eq!(count_labels(3.4), 4);
        assert_eq!(count_labels(0.5), 2);
        assert_eq!(count_labels(1e6), 10);
    }

    #[test]
    fn a_difference_axis_is_around_zero() {
        // −3% ± 1%: visible, with zero on the axis
        let r = delta_range(&[("a".into(), -3.0, Some(1.0))]);
        assert!(r.start < -4.0 && r.end > 0.0 && r.end < 1.0, "{r:?}");
        let r = delta_range(&[("a".into(), 0.0, None)]);
        assert_eq!(r, -1.0..1.0);
    }

    #[test]
    fn units_of_metrics() {
        assert_eq!(unit_of("hit_ratio").scale, 100.0);
        assert!(unit_of("misses").count && unit_of("misses").label.contains("major faults"));
        assert!(unit_of("clat_p99_us").label.contains("µs"));
        for m in super::super::spec::METRICS {
            assert!(unit_of(m).label.contains('('), "{m} has no unit");
        }
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! Plots of an experiment, each as SVG and PNG (plotters): per sweep point, a bar chart of the
//! main metric by policy with 95% confidence intervals, the misses over time of the kernel
//! policies (one line per policy, first repetition), and the MGLRU generation sizes over time
//! (one line per generation age, first repetition).
//!
//! Text needs a TrueType font, read at run time (so the build needs no font library): the file
//! named by `LRUGEN_FONT`, else DejaVu Sans or Liberation Sans where Linux distributions install
//! them, or Arial on macOS and Windows. Without one, no plot is written and the caller is told.

use super::runner::Results;
use super::ExpError;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
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

/// An x–y chart of `f64` coordinates from 0 ([`xy_chart`]).
pub type XyChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// An x–y chart on `area` over `0..xmax` × `0..ymax`, captioned in `caption_size` points, its
/// mesh drawn with the axis descriptions `desc` (x, y) and ticks written by `tick`.
pub fn xy_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    caption_size: u32,
    (xmax, ymax): (f64, f64),
    (x_desc, y_desc): (&str, &str),
    tick: &dyn Fn(&f64) -> String,
) -> Result<XyChart<'a, DB>, String> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", caption_size))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..xmax, 0f64..ymax)
        .map_err(e2s)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(tick)
        .y_label_formatter(tick)
        .draw()
        .map_err(e2s)?;
    Ok(chart)
}

/// Draws the legend of `chart`'s labelled series at `position`, on a light box.
pub fn draw_legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut XyChart<'a, DB>,
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

/// A bar with its 95% CI: (label, mean, half-width).
type Bar = (String, f64, Option<f64>);

fn draw_bars<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, title: &str, ylabel: &str, bars: &[Bar]) -> DrawResult {
    area.fill(&WHITE).map_err(e2s)?;
    let n = bars.len() as i32;
    let top = bars.iter().map(|b| b.1 + b.2.unwrap_or(0.0)).fold(0.0f64, f64::max);
    let top = if top > 0.0 { top * 1.12 } else { 1.0 };
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    let fmt = |v: &SegmentValue<i32>| match v {
        SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => labels.get(*i as usize).cloned().unwrap_or_default(),
        SegmentValue::Last => String::new(),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d((0..(n - 1).max(0)).into_segmented(), 0f64..top)
        .map_err(e2s)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(bars.len())
        .x_label_formatter(&fmt)
        .y_desc(ylabel)
        .draw()
        .map_err(e2s)?;
    chart
        .draw_series(
            Histogram::vertical(&chart)
                .margin(18)
                .style_func(|x, _| {
                    let i = match x {
                        SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => *i as usize,
                        SegmentValue::Last => 0,
                    };
                    Palette99::pick(i).mix(0.8).filled()
                })
                .data(bars.iter().enumerate().map(|(i, b)| (i as i32, b.1))),
        )
        .map_err(e2s)?;
    chart
        .draw_series(bars.iter().enumerate().filter_map(|(i, b)| {
            b.2.map(|c| {
                ErrorBar::new_vertical(
                    SegmentValue::CenterOf(i as i32),
                    b.1 - c,
                    b.1,
                    b.1 + c,
                    BLACK.stroke_width(2),
                    12,
                )
            })
        }))
        .map_err(e2s)?;
    area.present().map_err(e2s)
}

/// A line: (name, color index, points).
type Line = (String, usize, Vec<(f64, f64)>);

fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    ylabel: &str,
    lines: &[Line],
) -> DrawResult {
    area.fill(&WHITE).map_err(e2s)?;
    let xmax = lines
        .iter()
        .flat_map(|l| l.2.iter().map(|p| p.0))
        .fold(0.0f64, f64::max)
        .max(1.0);
    let ymax = lines
        .iter()
        .flat_map(|l| l.2.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.08 } else { 1.0 };
    let mut chart = xy_chart(area, title, 18, (xmax, ymax), ("accesses", ylabel), &|x| short(*x))?;
    for (name, color, pts) in lines {
        let c = Palette99::pick(*color);
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
            .map_err(e2s)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    area.present().map_err(e2s)
}

/// 1200 → "1.2k", 3500000 → "3.5M".
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a == a.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

const SIZE: (u32, u32) = (800, 500);

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
        // The main metric by policy, with CIs.
        let percent = e.metric == "hit_ratio";
        let bars: Vec<Bar> = e
            .variants
            .iter()
            .filter_map(|v| {
                let s = &r.summary(p.index, &v.label, &e.metric)?.summary;
                let k = if percent { 100.0 } else { 1.0 };
                Some((v.label.clone(), s.mean * k, s.ci95.map(|c| c * k)))
            })
            .collect();
        if !bars.is_empty() {
            let title = format!("{}: {}{suffix}", e.name, e.metric.replace('_', " "));
            let ylabel = if percent {
                "hit ratio (%), 95% CI".to_string()
            } else {
                format!("{}, 95% CI", e.metric)
            };
            both(
                dir,
                &format!("bar-{}-p{}", safe(&e.metric), p.index),
                &mut out,
                &|a| match a {
                    Area::Svg(a) => draw_bars(&a, &title, &ylabel, &bars),
                    Area::Png(a) => draw_bars(&a, &title, &ylabel, &bars),
                },
            )?;
        }
        // Misses over time, first repetition, one line per policy.
        let first = |variant: usize| {
            r.cells
                .iter()
                .find(|c| c.cell.point == p.index && c.cell.variant == variant && c.cell.repetition == 0)
        };
        let lines: Vec<Line> = e
            .variants
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let s = first(i)?.series.get("misses")?;
                Some((v.label.clone(), i, s.clone()))
            })
            .collect();
        if !lines.is_empty() {
            let title = format!("{}: misses over time{suffix}", e.name);
            both(dir, &format!("misses-p{}", p.index), &mut out, &|a| match a {
                Area::Svg(a) => draw_lines(&a, &title, "misses (cumulative)", &lines),
                Area::Png(a) => draw_lines(&a, &title, "misses (cumulative)", &lines),
            })?;
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
                    Area::Svg(a) => draw_lines(&a, &title, "pages", &gens),
                    Area::Png(a) => draw_lines(&a, &title, "pages", &gens),
                },
            )?;
        }
    }
    Ok(out)
}

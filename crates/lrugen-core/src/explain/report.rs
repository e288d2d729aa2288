// SPDX-License-Identifier: GPL-2.0-only
//! An explanation as a person reads it (a summary with the largest contributions first, then the
//! tables), as CSV, and as plots (Δ misses by class, misses over time, the switch ablation).

use super::cost::Cost;
use super::study::Study;
use super::Explanation;
use crate::experiment::plot::{self, Area, Bar};
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn pct(x: f64, total: f64) -> String {
    if total == 0.0 {
        "-".into()
    } else {
        format!("{:+.2}%", 100.0 * x / total)
    }
}

fn share(x: i64, delta: i64) -> String {
    if delta == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * x as f64 / delta as f64)
    }
}

/// The dimensions the summary draws its contributions from (the others restate them).
const SUMMARY_DIMENSIONS: [&str; 5] = ["mechanism", "page outcome", "region", "task", "reuse distance"];

/// The three largest contributions to Δ: per informative dimension its largest class (same sign
/// as Δ when Δ ≠ 0), the three largest of those, as sentences.
pub fn summary(s: &Study) -> Vec<String> {
    let e = &s.explanation;
    let mut best: Vec<(i64, String)> = Vec::new();
    for d in &e.dimensions {
        // a dimension of one class (one file) restates the total
        if !SUMMARY_DIMENSIONS.iter().any(|n| d.name.starts_with(n)) || d.rows.len() < 2 {
            continue;
        }
        // the eviction-context dimensions: only where both sides have them (an MGLRU side against
        // the classic LRU's "no tiers" restates the policies) and they split the evictions
        if d.name.starts_with("mechanism:")
            && (d.rows.iter().any(|r| r.class.contains("classic LRU"))
                || d.rows.iter().filter(|r| r.class != super::TIER_CLASSES[0]).count() < 2)
        {
            continue;
        }
        let top = d
            .rows
            .iter()
            .filter(|r| e.delta == 0 || r.delta.signum() == e.delta.signum())
            .max_by_key(|r| (r.delta.unsigned_abs(), std::cmp::Reverse(r.class.clone())));
        if let Some(r) = top.filter(|r| r.delta != 0) {
            let dim = d.name.split(" (").next().unwrap_or(&d.name);
            best.push((
                r.delta,
                format!(
                    "{dim} '{}': {:+} misses ({} of the difference; A {}, B {})",
                    r.class,
                    r.delta,
                    share(r.delta, e.delta),
                    r.a,
                    r.b
                ),
            ));
        }
    }
    best.sort_by_key(|b| std::cmp::Reverse(b.0.unsigned_abs()));
    let mut out: Vec<String> = best.into_iter().take(3).map(|b| b.1).collect();
    if let Some(ab) = &s.ablation {
        for sw in ab.switches.iter().take(3) {
            out.push(format!(
                "switch {} (flipped to {} on {}): {:+.1}{} misses of the difference disappear ({})",
                sw.switch,
                sw.flipped_to,
                ab.side,
                sw.accounts_for,
                sw.ci95.map_or(String::new(), |c| format!(" ± {c:.1}")),
                sw.share_pct.map_or("-".into(), |p| format!("{p:.1}% of it"))
            ));
        }
    }
    out
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

fn ms_signed(ns: f64) -> String {
    format!("{:+.3}", ns / 1e6)
}

fn share_f(x: f64, total: f64) -> String {
    if total == 0.0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * x / total)
    }
}

/// A part's name short enough for a plot's axis.
fn short_part(p: &str) -> String {
    let s = p.split(" (").next().unwrap_or(p);
    match s {
        "lru_lock waits and cache-line bounces" => "lock waits",
        "LRU batch flushes outside reclaim" => "LRU batches",
        "CPU queue behind other tasks" => "queue: tasks",
        "CPU queue behind kswapd" => "queue: kswapd",
        s => s,
    }
    .to_string()
}

/// The three largest parts of Δ time (same sign as Δ when Δ ≠ 0), as sentences.
pub fn cost_summary(c: &Cost) -> Vec<String> {
    let total = c.time.delta_ops_ns as f64;
    let mut parts: Vec<&super::cost::Part> = c
        .time
        .parts
        .iter()
        .filter(|p| p.delta_ns != 0.0 && (total == 0.0 || p.delta_ns.signum() == total.signum()))
        .collect();
    parts.sort_by(|x, y| {
        y.delta_ns
            .abs()
            .partial_cmp(&x.delta_ns.abs())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| x.part.cmp(&y.part))
    });
    parts
        .iter()
        .take(3)
        .map(|p| {
            format!(
                "{} '{}': {} ms ({} of the difference; A {} ms, B {} ms)",
                p.group,
                p.part,
                ms_signed(p.delta_ns),
                share_f(p.delta_ns, total),
                ms(p.a_ns),
                ms(p.b_ns)
            )
        })
        .collect()
}

/// The cost section of the report.
fn format_cost(o: &mut String, c: &Cost, na: &str, nb: &str) {
    let total = c.time.delta_ops_ns as f64;
    let _ = writeln!(
        o,
        "
time (engine, {} tasks): the measured operations' latencies summed, A = {na} {} ms, B = {nb} {} ms, delta {} ms ({} of B's)",
        c.tasks,
        ms(c.time.a_ops_ns as f64),
        ms(c.time.b_ops_ns as f64),
        ms_signed(total),
        pct(total, c.time.b_ops_ns as f64)
    );
    let _ = writeln!(
        o,
        "  run time A {} ms, B {} ms (delta {} ms); throughput A {:.0}, B {:.0} ops/s; run-time delta less task-time delta / tasks: {} ms",
        ms(c.a_elapsed_ns as f64),
        ms(c.b_elapsed_ns as f64),
        ms_signed(c.a_elapsed_ns as f64 - c.b_elapsed_ns as f64),
        c.a_iops,
        c.b_iops,
        ms_signed(c.overlap_ns)
    );
    let _ = writeln!(
        o,
        "
largest contributions to the time difference:"
    );
    let sum = cost_summary(c);
    if sum.is_empty() {
        let _ = writeln!(o, "  (none: both runs spent the same time in each part)");
    }
    for (i, l) in sum.iter().enumerate() {
        let _ = writeln!(o, "  {}. {l}", i + 1);
    }
    let w = c
        .time
        .parts
        .iter()
        .map(|p| p.part.len())
        .chain([20])
        .max()
        .unwrap_or(20);
    let row = |o: &mut String, g: &str, p: &super::cost::Part| {
        let _ = writeln!(
            o,
            "  {:<18} {:<w$} {:>12} {:>12} {:>12} {:>9}",
            g,
            p.part,
            ms(p.a_ns),
            ms(p.b_ns),
            ms_signed(p.delta_ns),
            share_f(p.delta_ns, total)
        );
    };
    let head = |o: &mut String, title: &str| {
        let _ = writeln!(
            o,
            "
{title}"
        );
        let _ = writeln!(
            o,
            "  {:<18} {:<w$} {:>12} {:>12} {:>12} {:>9}",
            "group", "part", "A ms", "B ms", "delta ms", "of delta"
        );
    };
    head(o, "time by part (the parts sum to the delta)");
    for p in &c.time.parts {
        row(o, &p.group, p);
    }
    for g in &c.time.groups {
        row(o, "total", g);
    }
    let _ = writeln!(o, "  residual (delta less the parts): {} ns", c.residual_ns);
    head(
        o,
        "kswapd's own CPU by mechanism (on its CPU; it costs the tasks through 'CPU queue behind kswapd')",
    );
    for p in &c.kswapd_cpu {
        row(o, "kswapd CPU", p);
    }
    head(
        o,
        "misses x I/O time by the miss's mechanism (each run's mean cost of a miss)",
    );
    for p in &c.misses_by_mechanism {
        row(o, "misses", p);
    }
    if c.per_task.len() > 1 {
        head(
            o,
            "time by job (its tasks' operations; each group summed over the jobs is the run's)",
        );
        for t in &c.per_task {
            for g in &t.time.groups {
                row(o, &t.job, g);
            }
        }
    }
}

/// A part as a table row: `first` (its group, or a job), the part, A, B, delta, share of `total`.
fn part_row(first: &str, p: &super::cost::Part, total: f64) -> Vec<String> {
    vec![
        first.to_string(),
        p.part.clone(),
        ms(p.a_ns),
        ms(p.b_ns),
        ms_signed(p.delta_ns),
        share_f(p.delta_ns, total),
    ]
}

/// The per-job time split as table rows: job, group, A, B, delta, share of the run's delta.
fn per_task_rows(c: &Cost) -> Vec<Vec<String>> {
    let total = c.time.delta_ops_ns as f64;
    c.per_task
        .iter()
        .flat_map(|t| t.time.groups.iter().map(move |g| part_row(&t.job, g, total)))
        .collect()
}

/// The study as a readable report: the headline, the summary, each dimension's table, each
/// side's evictions, the windows and the ablation.
pub fn format_table(s: &Study) -> String {
    let e = &s.explanation;
    let mut o = String::new();
    let (na, nb) = (&e.a.policy, &e.b.policy);
    let _ = writeln!(
        o,
        "misses: A = {na} {}, B = {nb} {}, delta A-B = {:+} ({} of B's)",
        e.a.misses,
        e.b.misses,
        e.delta,
        pct(e.delta as f64, e.b.misses as f64)
    );
    if s.deltas.len() > 1 {
        let _ = writeln!(
            o,
            "over {} seeds: delta {:+.1}{} (the tables below are of the first seed)",
            s.deltas.len(),
            s.delta_mean,
            s.delta_ci95.map_or(String::new(), |c| format!(" ± {c:.1} (95% CI)"))
        );
    }
    if let Some(c) = &s.cost {
        format_cost(&mut o, c, na, nb);
    }
    let _ = writeln!(o, "\nlargest contributions to the difference in misses:");
    let sum = summary(s);
    if sum.is_empty() {
        let _ = writeln!(o, "  (none: both policies miss on the same pages as often)");
    }
    for (i, l) in sum.iter().enumerate() {
        let _ = writeln!(o, "  {}. {l}", i + 1);
    }
    let w = e
        .dimensions
        .iter()
        .flat_map(|d| d.rows.iter().map(|r| r.class.len()))
        .chain([12])
        .max()
        .unwrap_or(12);
    for d in &e.dimensions {
        let _ = writeln!(o, "\nby {}", d.name);
        let _ = writeln!(
            o,
            "  {:<w$} {:>10} {:>10} {:>10} {:>9}",
            "class", "A", "B", "delta", "of delta"
        );
        for r in &d.rows {
            let _ = writeln!(
                o,
                "  {:<w$} {:>10} {:>10} {:>+10} {:>9}",
                r.class,
                r.a,
                r.b,
                r.delta,
                share(r.delta, e.delta)
            );
        }
    }
    for (tag, side) in [("A", &e.a), ("B", &e.b)] {
        let _ = writeln!(
            o,
            "\n{tag} = {}: evictions by what the policy knew of the page (misses: measured misses of pages last evicted so)",
            side.policy
        );
        let _ = writeln!(o, "  {:<32} {:>10} {:>10}", "class", "evictions", "misses");
        for d in &side.evictions {
            let _ = writeln!(o, "  {:<32} {:>10} {:>10}", d.class, d.evictions, d.misses);
        }
        let _ = writeln!(
            o,
            "  {:<32} {:>10}",
            "read ahead, never accessed", side.untagged_evictions
        );
    }
    let _ = writeln!(o, "\nover time (windows of steps)");
    let _ = writeln!(
        o,
        "  {:>12} {:>12} {:>10} {:>10} {:>10}",
        "from step", "to step", "A", "B", "delta"
    );
    for win in &e.windows {
        let _ = writeln!(
            o,
            "  {:>12} {:>12} {:>10} {:>10} {:>+10}",
            win.start, win.end, win.a, win.b, win.delta
        );
    }
    if let Some(ab) = &s.ablation {
        let _ = writeln!(
            o,
            "\nswitch ablation: {} rerun with each switch flipped, one at a time; 'accounts for' = delta - delta with the switch flipped",
            ab.side
        );
        let _ = writeln!(
            o,
            "  {:<40} {:>10} {:>20} {:>10}",
            "switch (flipped to)", "", "accounts for", "of delta"
        );
        for sw in &ab.switches {
            let _ = writeln!(
                o,
                "  {:<40} {:>10} {:>20} {:>10}",
                sw.switch,
                sw.flipped_to,
                format!(
                    "{:+.1}{}",
                    sw.accounts_for,
                    sw.ci95.map_or(String::new(), |c| format!(" ± {c:.1}"))
                ),
                sw.share_pct.map_or("-".into(), |p| format!("{p:.1}%"))
            );
        }
        let _ = writeln!(
            o,
            "  no effect here ({}): {}",
            ab.no_effect.len(),
            ab.no_effect.join(", ")
        );
    }
    o
}

/// `windows.csv`: one line per window.
pub fn windows_csv(e: &Explanation) -> String {
    let mut s = String::from("start,end,a,b,delta\n");
    for w in &e.windows {
        let _ = writeln!(s, "{},{},{},{},{}", w.start, w.end, w.a, w.b, w.delta);
    }
    s
}

/// `classes.csv`: one line per class of every dimension.
pub fn classes_csv(e: &Explanation) -> String {
    let mut s = String::from("dimension,class,a,b,delta\n");
    for d in &e.dimensions {
        for r in &d.rows {
            let q = |x: &str| x.replace('"', "\"\"");
            let _ = writeln!(s, "\"{}\",\"{}\",{},{},{}", q(&d.name), q(&r.class), r.a, r.b, r.delta);
        }
    }
    s
}

/// Draw the plots into `dir` (SVG and PNG each): `delta_by_class` (each summary dimension's
/// classes), `misses_over_time` (cumulative misses of A and B), `ablation` (with 95% CIs over
/// seeds) when there is one. The files written; an error when no font can be found.
pub fn write_plots(s: &Study, dir: &Path) -> Result<Vec<PathBuf>, String> {
    plot::ensure_font()?;
    let e = &s.explanation;
    let mut out = Vec::new();
    let mut classes: Vec<Bar> = Vec::new();
    for d in &e.dimensions {
        if d.name == "mechanism" || d.name.starts_with("page outcome") {
            for r in d.rows.iter().filter(|r| r.delta != 0) {
                classes.push((r.class.clone(), r.delta as f64, None));
            }
        }
    }
    let title = format!("misses {} - {} by class (delta {:+})", e.a.policy, e.b.policy, e.delta);
    let draw = |area: Area<'_>| {
        let desc = ("class (mechanism, then page outcome)", "delta misses (A - B)");
        match area {
            Area::Svg(a) => plot::draw_delta(&a, &title, desc, "", &classes),
            Area::Png(a) => plot::draw_delta(&a, &title, desc, "", &classes),
        }
    };
    plot::svg_and_png(dir, "delta_by_class", (1100, 560), &mut out, &draw)?;
    let cumulative = |f: &dyn Fn(&super::Window) -> u64| {
        let mut sum = 0u64;
        let mut pts = vec![(0.0, 0.0)];
        for w in &e.windows {
            sum += f(w);
            pts.push((w.end as f64, sum as f64));
        }
        pts
    };
    let lines: Vec<plot::Line> = vec![
        (format!("A = {}", e.a.policy), 0, cumulative(&|w| w.a)),
        (format!("B = {}", e.b.policy), 1, cumulative(&|w| w.b)),
    ];
    let title = "misses over the run";
    let draw = |area: Area<'_>| {
        let desc = ("steps done (count)", "misses so far (major faults)");
        match area {
            Area::Svg(a) => plot::draw_lines(&a, title, desc, &lines),
            Area::Png(a) => plot::draw_lines(&a, title, desc, &lines),
        }
    };
    plot::svg_and_png(dir, "misses_over_time", (800, 500), &mut out, &draw)?;
    if let Some(c) = &s.cost {
        let bars: Vec<Bar> = c
            .time
            .parts
            .iter()
            .filter(|p| p.delta_ns != 0.0)
            .map(|p| (short_part(&p.part), p.delta_ns / 1e6, None))
            .collect();
        let title = format!(
            "time {} - {} by part (delta {} ms)",
            e.a.policy,
            e.b.policy,
            ms_signed(c.time.delta_ops_ns as f64)
        );
        let draw = |area: Area<'_>| {
            let desc = ("part of the operations' time", "delta time (A - B), ms");
            match area {
                Area::Svg(a) => plot::draw_delta(&a, &title, desc, "", &bars),
                Area::Png(a) => plot::draw_delta(&a, &title, desc, "", &bars),
            }
        };
        plot::svg_and_png(dir, "cost_by_part", (1400, 600), &mut out, &draw)?;
    }
    if let Some(ab) = &s.ablation {
        let bars: Vec<Bar> = ab
            .switches
            .iter()
            .take(8)
            .map(|sw| (sw.switch.clone(), sw.accounts_for, sw.ci95))
            .collect();
        if !bars.is_empty() {
            let title = format!("misses of the delta each switch accounts for ({})", ab.side);
            let draw = |area: Area<'_>| {
                let desc = ("switch flipped", "delta - delta flipped (misses), 95% CI");
                match area {
                    Area::Svg(a) => plot::draw_delta(&a, &title, desc, "", &bars),
                    Area::Png(a) => plot::draw_delta(&a, &title, desc, "", &bars),
                }
            };
            plot::svg_and_png(dir, "ablation", (1400, 600), &mut out, &draw)?;
        }
    }
    Ok(out)
}

/// The HTML report of a study (`index.html`, [`crate::report::html`]): the headline, the three
/// largest contributions (to the misses, and to the time in engine runs), the plots among `plots`
/// (files in `dir`) inline or why there are none (`no_plots`), the tables, and the command
/// that reproduces it (`command`, without the output directory). Nothing in it depends on where
/// it was written or on the threads.
pub fn html_page(
    s: &Study,
    header: &[String],
    dir: &Path,
    plots: &[PathBuf],
    no_plots: Option<&str>,
    command: &str,
) -> std::io::Result<crate::report::html::Page> {
    use crate::report::html::{Block, Page};
    let e = &s.explanation;
    let (na, nb) = (&e.a.policy, &e.b.policy);
    let mut page = Page::new(format!("lrugen explain: A = {na}, B = {nb}"));
    for h in header {
        page.push(Block::Para(h.clone()));
    }
    page.push(Block::Heading("Summary".into()));
    let mut head = format!(
        "misses: A = {na} {}, B = {nb} {}, delta A-B = {:+} ({} of B's).",
        e.a.misses,
        e.b.misses,
        e.delta,
        pct(e.delta as f64, e.b.misses as f64)
    );
    if s.deltas.len() > 1 {
        head.push_str(&format!(
            " Over {} seeds: delta {:+.1}{} (the tables are of the first seed).",
            s.deltas.len(),
            s.delta_mean,
            s.delta_ci95.map_or(String::new(), |c| format!(" ± {c:.1} (95% CI)"))
        ));
    }
    page.push(Block::Para(head));
    let numbered = |lines: Vec<String>| -> String {
        if lines.is_empty() {
            return "(none)".into();
        }
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{}. {l}", i + 1))
            .collect::<Vec<_>>()
            .join("\n")
    };
    if let Some(c) = &s.cost {
        page.push(Block::Para(format!(
            "time (engine, {} tasks): the measured operations' latencies summed, A {} ms, B {} ms, delta {} ms \
             ({} of B's); run time A {} ms, B {} ms; throughput A {:.0}, B {:.0} ops/s. Largest contributions \
             to the time difference:",
            c.tasks,
            ms(c.time.a_ops_ns as f64),
            ms(c.time.b_ops_ns as f64),
            ms_signed(c.time.delta_ops_ns as f64),
            pct(c.time.delta_ops_ns as f64, c.time.b_ops_ns as f64),
            ms(c.a_elapsed_ns as f64),
            ms(c.b_elapsed_ns as f64),
            c.a_iops,
            c.b_iops
        )));
        page.push(Block::Pre(numbered(cost_summary(c))));
    }
    page.push(Block::Para("Largest contributions to the difference in misses:".into()));
    page.push(Block::Pre(numbered(summary(s))));
    page.push(Block::Heading("Plots".into()));
    match no_plots {
        Some(why) => {
            page.push(Block::Para(format!("No plots: {why}.")));
        }
        None => page.push_svgs(dir, plots)?,
    }
    if let Some(c) = &s.cost {
        let total = c.time.delta_ops_ns as f64;
        let rows = |parts: &[super::cost::Part], group: Option<&str>| -> Vec<Vec<String>> {
            parts
                .iter()
                .map(|p| part_row(group.unwrap_or(&p.group), p, total))
                .collect()
        };
        let head: Vec<String> = ["group", "part", "A ms", "B ms", "delta ms", "of delta"]
            .map(String::from)
            .to_vec();
        page.push(Block::Heading("Time by part".into()));
        page.push(Block::Para(format!(
            "The parts sum to the delta (residual {} ns). Direct reclaim is CPU inside the operations; \
             kswapd costs the tasks where they queue for a CPU it holds.",
            c.residual_ns
        )));
        let mut r = rows(&c.time.parts, None);
        r.extend(rows(&c.time.groups, Some("total")));
        page.push(Block::Table {
            head: head.clone(),
            rows: r,
            left: 2,
        });
        page.push(Block::Heading("kswapd's own CPU by mechanism".into()));
        page.push(Block::Table {
            head: head.clone(),
            rows: rows(&c.kswapd_cpu, Some("kswapd CPU")),
            left: 2,
        });
        page.push(Block::Heading("Misses x I/O time by the miss's mechanism".into()));
        page.push(Block::Table {
            head: head.clone(),
            rows: rows(&c.misses_by_mechanism, Some("misses")),
            left: 2,
        });
        if c.per_task.len() > 1 {
            page.push(Block::Heading("Time by job".into()));
            page.push(Block::Para(
                "Each job's tasks' operations, by group; a group summed over the jobs is the run's.".into(),
            ));
            let mut head = head;
            head[0] = "job".into();
            head[1] = "group".into();
            page.push(Block::Table {
                head,
                rows: per_task_rows(c),
                left: 2,
            });
        }
    }
    for d in &e.dimensions {
        page.push(Block::Heading(format!("Misses by {}", d.name)));
        page.push(Block::Table {
            head: ["class", "A", "B", "delta", "of delta"].map(String::from).to_vec(),
            rows: d
                .rows
                .iter()
                .map(|r| {
                    vec![
                        r.class.clone(),
                        r.a.to_string(),
                        r.b.to_string(),
                        format!("{:+}", r.delta),
                        share(r.delta, e.delta),
                    ]
                })
                .collect(),
            left: 1,
        });
    }
    for (tag, side) in [("A", &e.a), ("B", &e.b)] {
        page.push(Block::Heading(format!(
            "{tag} = {}: evictions by what the policy knew of the page",
            side.policy
        )));
        let mut rows: Vec<Vec<String>> = side
            .evictions
            .iter()
            .map(|d| vec![d.class.clone(), d.evictions.to_string(), d.misses.to_string()])
            .collect();
        rows.push(vec![
            "read ahead, never accessed".into(),
            side.untagged_evictions.to_string(),
            "-".into(),
        ]);
        page.push(Block::Table {
            head: ["class", "evictions", "misses"].map(String::from).to_vec(),
            rows,
            left: 1,
        });
    }
    page.push(Block::Heading("Misses over time (windows of steps)".into()));
    page.push(Block::Table {
        head: ["from step", "to step", "A", "B", "delta"].map(String::from).to_vec(),
        rows: e
            .windows
            .iter()
            .map(|w| {
                vec![
                    w.start.to_string(),
                    w.end.to_string(),
                    w.a.to_string(),
                    w.b.to_string(),
                    format!("{:+}", w.delta),
                ]
            })
            .collect(),
        left: 0,
    });
    if let Some(ab) = &s.ablation {
        page.push(Block::Heading(format!("Switch ablation ({})", ab.side)));
        page.push(Block::Table {
            head: ["switch", "flipped to", "accounts for", "of delta"]
                .map(String::from)
                .to_vec(),
            rows: ab
                .switches
                .iter()
                .map(|sw| {
                    vec![
                        sw.switch.clone(),
                        sw.flipped_to.to_string(),
                        format!(
                            "{:+.1}{}",
                            sw.accounts_for,
                            sw.ci95.map_or(String::new(), |c| format!(" ± {c:.1}"))
                        ),
                        sw.share_pct.map_or("-".into(), |p| format!("{p:.1}%")),
                    ]
                })
                .collect(),
            left: 2,
        });
        page.push(Block::Para(format!(
            "No effect here ({}): {}",
            ab.no_effect.len(),
            ab.no_effect.join(", ")
        )));
    }
    page.push(Block::Heading("Reproduce".into()));
    page.push(Block::Pre(command.to_string()));
    page.push(Block::Para(
        "The same command gives the same results, byte for byte, whatever --threads. DIR also holds \
         explanation.json, report.txt, classes.csv, windows.csv and the plots as SVG and PNG."
            .into(),
    ));
    Ok(page)
}

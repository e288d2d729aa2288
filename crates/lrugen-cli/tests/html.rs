// SPDX-License-Identifier: GPL-2.0-only
//! The HTML reports `lrugen exp --out` and `lrugen explain --out` write (`index.html`), opened in headless Chromium (Debian's
//! `chromium`): after rendering, the DOM holds the results table's rows and every plot's `<svg>`,
//! and a screenshot is not blank (its pixels decoded: text and coloured plot marks). Where
//! Chromium is missing the test is skipped with a message, except under `CI=true`, where it fails
//! (`.ci/run` installs it). The page fetches nothing: no script, stylesheet, font or image link.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Chromium: `LRUGEN_CHROMIUM`, else the first of Debian's and other distributions' names on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LRUGEN_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
        for d in std::env::split_paths(&path) {
            let p = d.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Headless Chromium on `page` with `what` (`--dump-dom`, `--screenshot=...`), offline: no
/// network service started, a profile of its own.
fn headless(chrome: &Path, page: &Path, what: &[String], profile: &Path) -> Output {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1200,2400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(what)
        .arg(url)
        .output()
        .unwrap()
}

#[test]
fn the_report_renders_its_tables_and_plots_in_chromium() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("fio-zipf");
    let o = Command::new(env!("CARGO_BIN_EXE_lrugen"))
        .arg("exp")
        .arg(root().join("examples/fio-zipf.toml"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let page = out.join("index.html");
    let html = std::fs::read_to_string(&page).unwrap();
    let marker = std::fs::read_to_string(out.join(".lrugen-exp.json")).unwrap();
    assert!(
        marker.contains("\"index.html\""),
        "the marker lists the report: {marker}"
    );
    // offline: nothing fetched, nothing run
    for fetch in ["<script", "<link", "src=", "href=", "@import", "url("] {
        assert!(!html.contains(fetch), "{fetch} in index.html");
    }
    let urls: Vec<&str> = html.match_indices("http").map(|(i, _)| &html[i..i + 26]).collect();
    assert!(
        urls.iter().all(|u| *u == "http://www.w3.org/2000/svg"),
        "only SVG's namespace, never fetched: {urls:?}"
    );
    // what it must hold: the table (15 rows: 3 points x 5 policies), every SVG plot, the
    // settings and the command
    let svgs = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "svg"))
        .count();
    let no_font = stderr.contains("plots skipped");
    assert!(
        !no_font || std::env::var("CI").as_deref() != Ok("true"),
        "no font for the plots under CI: {stderr}"
    );
    if !no_font {
        assert_eq!(
            svgs, 16,
            "3 points x (bar, delta, misses, 2 x generations) + the sweep's delta"
        );
    }
    assert!(html.contains("<pre>lrugen exp "), "the command");
    assert!(html.contains("workload.dist.theta"), "the settings");

    let Some(chrome) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: chromium is missing (apt-get install chromium; or LRUGEN_CHROMIUM=PATH)"
        );
        eprintln!(
            "SKIPPED: chromium is not installed (apt-get install chromium, or LRUGEN_CHROMIUM=PATH): \
             the report's rendering is not checked"
        );
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    // the DOM after rendering: the rows and the plots are there
    let o = headless(&chrome, &page, &["--dump-dom".to_string()], profile.path());
    let dom = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dom.contains("<h1>lrugen exp: fio-zipf</h1>"), "{dom:.2000}");
    let body_rows = dom
        .split("<tbody>")
        .nth(1)
        .and_then(|b| b.split("</tbody>").next())
        .unwrap_or_else(|| panic!("no table body in the DOM: {dom:.2000}"));
    assert_eq!(body_rows.matches("<tr>").count(), 15, "one row per point and policy");
    for policy in ["mglru-7.2", "mglru-6.1", "classic", "lru", "opt"] {
        assert!(body_rows.contains(&format!("<td>{policy}</td>")), "{policy}");
    }
    assert_eq!(dom.matches("<svg").count(), svgs, "every plot inline");
    // a screenshot: not blank
    let shot = profile.path().join("shot.png");
    let o = headless(
        &chrome,
        &page,
        &[format!("--screenshot={}", shot.display())],
        profile.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1200, 2400));
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let (mut ink, mut colour) = (0usize, 0usize);
    for px in buf[..info.buffer_size()].chunks(channels) {
        let (r, g, b) = (px[0] as i32, px[1] as i32, px[2] as i32);
        if r.min(g).min(b) < 200 {
            ink += 1; // text, rules, marks
        }
        if r.max(g).max(b) - r.min(g).min(b) > 80 {
            colour += 1; // the plots' coloured bars and lines
        }
    }
    let total = (info.width * info.height) as usize;
    assert!(
        ink * 100 > total,
        "{ink} of {total} pixels not white: the page looks blank"
    );
    if !no_font {
        assert!(colour > 10_000, "{colour} coloured pixels: the plots did not render");
    }
}

/// A screenshot of `page` is not blank: text, and with `plots` the plots' colours.
fn not_blank(chrome: &Path, page: &Path, profile: &Path, plots: bool) {
    let shot = profile.join("shot.png");
    let o = headless(chrome, page, &[format!("--screenshot={}", shot.display())], profile);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert!(channels >= 3, "{:?}", info.color_type);
    let (mut ink, mut colour) = (0usize, 0usize);
    for px in buf[..info.buffer_size()].chunks(channels) {
        let (r, g, b) = (px[0] as i32, px[1] as i32, px[2] as i32);
        if r.min(g).min(b) < 200 {
            ink += 1;
        }
        if r.max(g).max(b) - r.min(g).min(b) > 80 {
            colour += 1;
        }
    }
    let total = (info.width * info.height) as usize;
    assert!(
        ink * 100 > total,
        "{ink} of {total} pixels not white: the page looks blank"
    );
    if plots {
        assert!(colour > 1_000, "{colour} coloured pixels: the plots did not render");
    }
}

#[test]
fn the_explain_report_renders_its_summary_tables_and_plots_in_chromium() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("explain");
    let o = Command::new(env!("CARGO_BIN_EXE_lrugen"))
        .args(["explain", "--exp"])
        .arg(root().join("examples/fio-jobs-nvme.toml"))
        .args(["--policy", "mglru-7.2,classic", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let page = out.join("index.html");
    let html = std::fs::read_to_string(&page).unwrap();
    let marker = std::fs::read_to_string(out.join(".lrugen-explain.json")).unwrap();
    assert!(
        marker.contains("\"index.html\""),
        "the marker lists the report: {marker}"
    );
    for fetch in ["<script", "<link", "src=", "href=", "@import", "url("] {
        assert!(!html.contains(fetch), "{fetch} in index.html");
    }
    // where it was written is not in it: the command names DIR
    assert!(html.contains("--out DIR</pre>"), "the command");
    assert!(
        !html.contains(&*out.to_string_lossy()),
        "the output directory is in the page"
    );
    let svgs = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "svg"))
        .count();
    let no_font = stderr.contains("plots skipped");
    assert!(
        !no_font || std::env::var("CI").as_deref() != Ok("true"),
        "no font for the plots under CI: {stderr}"
    );
    if !no_font {
        assert_eq!(svgs, 3, "delta by class, misses over time, cost by part");
    }
    let Some(chrome) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: chromium is missing (apt-get install chromium; or LRUGEN_CHROMIUM=PATH)"
        );
        eprintln!("SKIPPED: chromium is not installed: the report's rendering is not checked");
        return;
    };
    let profile = tempfile::tempdir().unwrap();
    let o = headless(&chrome, &page, &["--dump-dom".to_string()], profile.path());
    let dom = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        dom.contains("<h1>lrugen explain: A = mglru-7.2, B = classic</h1>"),
        "{dom:.2000}"
    );
    // the summary's three largest time parts, then the misses'
    let summary = dom.split("<h2>Summary</h2>").nth(1).expect("a summary");
    let first_pre = summary
        .split("<pre>")
        .nth(1)
        .and_then(|p| p.split("</pre>").next())
        .expect("pre");
    assert!(first_pre.starts_with("1. misses x I/O time"), "{first_pre}");
    assert_eq!(first_pre.lines().count(), 3, "{first_pre}");
    // the time table: 12 parts and 4 group totals; the task table: 4 jobs
    let table_after = |heading: &str| -> usize {
        let t = dom
            .split(&format!("<h2>{heading}</h2>"))
            .nth(1)
            .and_then(|x| x.split("<tbody>").nth(1))
            .and_then(|x| x.split("</tbody>").next())
            .unwrap_or_else(|| panic!("no table after {heading}: {dom:.2000}"));
        t.matches("<tr>").count()
    };
    assert_eq!(table_after("Time by part"), 16);
    assert_eq!(
        table_after("Misses by task (the job whose stream touched the page; one memcg)"),
        4
    );
    assert_eq!(dom.matches("<svg").count(), svgs, "every plot inline");
    not_blank(&chrome, &page, profile.path(), !no_font);
}

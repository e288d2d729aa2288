// SPDX-License-Identifier: GPL-2.0-only
//! Traces as a newcomer meets them: the synthetic trace shipped in examples/traces (and the
//! command that writes it), `lrugen traces list` and `fetch` (checksum, atomic write, a clear
//! error without network: tested against a server on the loopback address), the golden hit
//! ratios on the shared OLTP trace, and `run --output-format cachesim`'s lines (golden on the
//! shipped trace; on OLTP, the lines libCacheSim's numbers give).
//!
//! A `harness = false` test binary (`lrugen_trace::testdata::run_tests`): a test whose shared
//! trace is absent shows as `ignored`, with where to get it printed above the results, and fails
//! under `CI=true`.

use lrugen_trace::testdata::{run_tests, TraceTest};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SHIPPED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/traces/synthetic.lis.zst");

fn lrugen(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lrugen"));
    c.args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("LRUGEN_TRACES_DIR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run lrugen")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(args: &[&str]) -> String {
    let o = lrugen(args, &[]);
    assert!(o.status.success(), "lrugen {}: {}", args.join(" "), text(&o.stderr));
    text(&o.stdout)
}

fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("lrugen-traces-tests")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The rows of policy `p` in `out`.
fn rows<'a>(out: &'a str, p: &str) -> Vec<Vec<&'a str>> {
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.first() == Some(&p))
        .collect()
}

fn hit_ratio(row: &[&str]) -> f64 {
    row.iter()
        .find(|f| f.ends_with('%'))
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap()
}

/// The trace shipped for the README's examples is exactly what the documented command writes.
fn shipped_trace_is_what_generate_writes() {
    let d = scratch("generate");
    let out = d.join("synthetic.lis.zst");
    let o = lrugen(&["traces", "generate", out.to_str().unwrap()], &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let want = std::fs::read(SHIPPED).expect("examples/traces/synthetic.lis.zst is shipped");
    assert!(
        std::fs::read(&out).unwrap() == want,
        "examples/traces/synthetic.lis.zst differs from `lrugen traces generate` (regenerate it)"
    );
    // another seed, another trace; an existing file is refused and kept
    let other = d.join("other.lis");
    ok(&[
        "traces",
        "generate",
        other.to_str().unwrap(),
        "--seed",
        "2",
        "--requests",
        "100",
    ]);
    let t = std::fs::read_to_string(&other).unwrap();
    assert_eq!(t.lines().count(), 100);
    for (i, l) in t.lines().enumerate() {
        let f: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
        assert_eq!((f.len(), f[2], f[3]), (4, 0, i as u64), "{l}");
        assert!(
            (1..=8).contains(&f[1]) && f[0] % 8 + f[1] <= 8,
            "a run inside its extent: {l}"
        );
    }
    let o = lrugen(&["traces", "generate", other.to_str().unwrap()], &[]);
    assert!(!o.status.success() && text(&o.stderr).contains("exists"));
    assert_eq!(std::fs::read_to_string(&other).unwrap(), t);
}

/// The README's trace example on the shipped trace: every policy replays every request.
fn readme_example_on_the_shipped_trace() {
    let out = ok(&["run", "--trace", SHIPPED, "--capacity", "1000"]);
    for p in ["mglru", "classic", "lru", "opt"] {
        let r = rows(&out, p);
        assert_eq!(r.len(), 1, "{out}");
        assert_eq!(
            r[0][1], "49,963",
            "{p} replays the 25,000 requests' 49,963 pages:\n{out}"
        );
    }
    assert!(
        hit_ratio(&rows(&out, "opt")[0]) > hit_ratio(&rows(&out, "lru")[0]),
        "{out}"
    );
    let out = ok(&["bench", SHIPPED, "--policy", "lru"]);
    assert!(out.contains("synthetic.lis.zst"), "{out}");
}

fn list_shows_size_source_and_citation() {
    let out = ok(&["traces", "list"]);
    for w in [
        "OLTP",
        "P3",
        "P12",
        "cloudphysics",
        "2,319 KiB",
        "moka-rs/cache-trace",
        "1a1a11a/libCacheSim",
        "Megiddo",
        "SHARDS",
    ] {
        assert!(out.contains(w), "`lrugen traces list` lacks {w}:\n{out}");
    }
}

/// A tiny HTTP server on the loopback address answering every request with `body`; returns its
/// base URL.
fn serve(body: Vec<u8>, requests: usize) -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for s in l.incoming().take(requests) {
            let Ok(mut s) = s else { continue };
            let mut req = Vec::new();
            let mut b = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut b) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&b[..n]),
                }
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes()).and_then(|()| s.write_all(&body));
        }
    });
    url
}

/// Every entry below `dir`, for "nothing left behind".
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(entries(&p));
        }
        v.push(p);
    }
    v
}

/// Without network: a clear error naming the trace, the URL, the public source and where to put
/// the file, and nothing written.
fn fetch_without_network_fails_clearly() {
    let d = scratch("no_network");
    let dir = d.join("traces");
    let dir_s = dir.to_str().unwrap();
    // nothing listens on port 1: refused at once, as a machine without network is
    for env in [vec![("LRUGEN_TRACES_BASE_URL", "http://127.0.0.1:1")], vec![]] {
        let o = lrugen(&["traces", "fetch", "OLTP", "--dir", dir_s], &env);
        let err = text(&o.stderr);
        if env.is_empty() && o.status.success() {
            // this machine has network: the real download worked and was checked
            assert!(err.contains("SHA-256 checked"), "{err}");
            continue;
        }
        assert_eq!(o.status.code(), Some(1), "{err}");
        for w in [
            "OLTP: cannot download",
            "/moka-rs/cache-trace/ef0a9de8cf0202a1f2fee186a0af497774b0f0a9/arc/OLTP.lis.zst",
            "Without network, copy arc/OLTP.lis.zst",
            "arc/OLTP.lis.zst",
            "2a81096104b6de28aae54558b764bb32fe2ac3beb8a7dcdee1259af8798d3531",
        ] {
            assert!(err.contains(w), "stderr lacks {w:?}:\n{err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert!(!dir.exists(), "nothing is created: {:?}", entries(&d));
    }
    let o = lrugen(&["traces", "fetch", "OLTP2", "--dir", dir_s], &[]);
    assert!(text(&o.stderr).contains("unknown trace 'OLTP2': expected one of OLTP, P3, P12"));
}

/// A download whose bytes are not the trace's is refused, and leaves nothing behind.
fn fetch_refuses_a_wrong_checksum() {
    let d = scratch("wrong_checksum");
    let url = serve(b"not the trace\n".to_vec(), 1);
    let dir = d.join("traces");
    let o = lrugen(
        &["traces", "fetch", "p3", "--dir", dir.to_str().unwrap()],
        &[("LRUGEN_TRACES_BASE_URL", &url)],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("gave 14 bytes with SHA-256")
            && err.contains("expected 1455039 bytes")
            && err.contains("nothing written"),
        "{err}"
    );
    assert!(!dir.exists(), "nothing left behind: {:?}", entries(&d));
}

/// A download of the real bytes (served here from the shared trace) is checked, renamed into
/// place with no temporary file left, and kept by a second fetch.
fn fetch_writes_a_checked_trace(p: &[PathBuf]) {
    let d = scratch("fetch_ok");
    let url = serve(std::fs::read(&p[0]).unwrap(), 1);
    let dir = d.join("traces");
    let args = ["traces", "fetch", "OLTP", "--dir", dir.to_str().unwrap()];
    let o = lrugen(&args, &[("LRUGEN_TRACES_BASE_URL", &url)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let got = dir.join("arc/OLTP.lis.zst");
    assert!(std::fs::read(&got).unwrap() == std::fs::read(&p[0]).unwrap());
    assert_eq!(
        entries(&dir),
        [got.clone(), dir.join("arc")],
        "only the trace is written"
    );
    // already there: not downloaded again (the server answers no more requests)
    let o = lrugen(&args, &[("LRUGEN_TRACES_BASE_URL", "http://127.0.0.1:1")]);
    assert!(
        o.status.success() && text(&o.stderr).contains("already there"),
        "{}",
        text(&o.stderr)
    );
    // a damaged copy is reported, not replaced
    std::fs::write(&got, b"damaged").unwrap();
    let o = lrugen(&args, &[("LRUGEN_TRACES_BASE_URL", "http://127.0.0.1:1")]);
    assert!(!o.status.success() && text(&o.stderr).contains("remove it to fetch again"));
}

/// `lru` and `opt` on OLTP at C = 1,000 give the golden values of shared/traces/README.md.
fn oltp_golden_hit_ratios(p: &[PathBuf]) {
    let t = p[0].to_str().unwrap();
    for (policy, want) in [("lru", "32.83%"), ("opt", "53.61%")] {
        let out = ok(&["run", "--trace", t, "--policy", policy, "--capacity", "1000"]);
        let r = rows(&out, policy);
        assert_eq!(r.len(), 1, "{out}");
        assert!(r[0].contains(&want), "{policy} on OLTP at C=1000:\n{out}");
        assert!(r[0].contains(&"914,145"), "all 914,145 requests replayed:\n{out}");
    }
}

/// The fields of a `cachesim` result line, read as libCacheSim's format
/// `"%s %s cache size %8ld%s, %lld req, miss ratio %.4lf, byte miss ratio %.4lf"` lays them out
/// (and as the scripts that parse it split it): trace, cache name, size, requests, miss ratio,
/// byte miss ratio.
fn cachesim_fields(line: &str) -> (String, String, u64, u64, String, String) {
    let (head, rest) = line.split_once(" cache size ").unwrap_or_else(|| panic!("{line}"));
    let (trace, name) = head.split_once(' ').unwrap();
    let (size, rest) = rest.split_once(", ").unwrap();
    assert!(size.len() >= 8, "%8ld: {line}");
    let (req, rest) = rest.split_once(" req, miss ratio ").unwrap();
    let (mr, bmr) = rest.split_once(", byte miss ratio ").unwrap();
    for r in [mr, bmr] {
        let (i, f) = r.split_once('.').unwrap();
        assert!(i.len() == 1 && f.len() == 4, "%.4lf: {line}");
    }
    (
        trace.into(),
        name.into(),
        size.trim_start().parse().unwrap(),
        req.parse().unwrap(),
        mr.into(),
        bmr.into(),
    )
}

/// `run --output-format cachesim` on the shipped trace at two sizes, every policy: the checked-in
/// golden lines, each a `cachesim` line.
fn cachesim_lines_golden() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let policies = "lru,opt,fifo,clock,sieve,s3fifo,arc,2q,lirs,wtinylfu,clockpro,mglru,classic";
    let mut got = String::new();
    for c in ["500", "2000"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lrugen"));
        cmd.current_dir(root).args([
            "run",
            "--trace",
            "examples/traces/synthetic.lis.zst",
            "--capacity",
            c,
            "--policy",
            policies,
            "--output-format",
            "cachesim",
        ]);
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        got.push_str(&text(&o.stdout));
    }
    let want = include_str!("data/cachesim-synthetic.txt");
    assert_eq!(got, want, "the lines changed: tests/data/cachesim-synthetic.txt");
    let names = [
        "LRU",
        "Belady",
        "FIFO",
        "Clock",
        "Sieve",
        "S3FIFO-0.1000-2",
        "ARC",
        "TwoQ",
        "LIRS",
        "WTinyLFU-w0.01-SLRU",
        "ClockPro",
        "mglru",
        "classic",
    ];
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines.len(), 2 * names.len());
    for (i, l) in lines.iter().enumerate() {
        let (trace, name, size, req, mr, bmr) = cachesim_fields(l);
        assert_eq!(trace, "examples/traces/synthetic.lis.zst");
        assert_eq!(name, names[i % names.len()], "{l}");
        assert_eq!(size, if i < names.len() { 500 } else { 2000 });
        assert_eq!(req, 49_963, "{l}");
        assert_eq!(mr, bmr, "pages of one size: {l}");
    }
}

/// On OLTP, the zoo's lines are the lines libCacheSim 0.3.5's miss counts give (the golden counts
/// of lrugen-cache's `zoo_golden` test, produced by libCacheSim itself), formatted by the C format.
fn cachesim_lines_equal_libcachesims(p: &[PathBuf]) {
    let t = p[0].to_str().unwrap();
    // (policy, libCacheSim's name, [(size, libCacheSim's misses)]) on OLTP's 914,145 requests
    type Golden<'a> = (&'a str, &'a str, [(u64, u64); 2]);
    let golden: [Golden; 3] = [
        ("fifo", "FIFO", [(1000, 653_340), (10_000, 390_442)]),
        ("sieve", "Sieve", [(1000, 616_519), (10_000, 361_388)]),
        ("s3fifo", "S3FIFO-0.1000-2", [(1000, 540_669), (10_000, 341_108)]),
    ];
    for i in 0..2 {
        let size = golden[0].2[i].0;
        let out = ok(&[
            "run",
            "--trace",
            t,
            "--capacity",
            &size.to_string(),
            "--policy",
            "fifo,sieve,s3fifo",
            "--output-format",
            "cachesim",
        ]);
        let want: String = golden
            .iter()
            .map(|(_, name, rows)| {
                let ratio = rows[i].1 as f64 / 914_145.0;
                format!(
                    "{t} {name} cache size {size:>8}, 914145 req, miss ratio {ratio:.4}, byte miss ratio {ratio:.4}\n"
                )
            })
            .collect();
        assert_eq!(out, want, "C={size}");
    }
}

fn main() -> std::process::ExitCode {
    const OLTP: &str = "arc/OLTP.lis.zst";
    let t = |name, traces, run| TraceTest { name, traces, run };
    run_tests(vec![
        t("shipped_trace_is_what_generate_writes", &[], |_| {
            shipped_trace_is_what_generate_writes()
        }),
        t("readme_example_on_the_shipped_trace", &[], |_| {
            readme_example_on_the_shipped_trace()
        }),
        t("list_shows_size_source_and_citation", &[], |_| {
            list_shows_size_source_and_citation()
        }),
        t("fetch_without_network_fails_clearly", &[], |_| {
            fetch_without_network_fails_clearly()
        }),
        t("fetch_refuses_a_wrong_checksum", &[], |_| {
            fetch_refuses_a_wrong_checksum()
        }),
        t("fetch_writes_a_checked_trace", &[OLTP], fetch_writes_a_checked_trace),
        t("oltp_golden_hit_ratios", &[OLTP], oltp_golden_hit_ratios),
        t("cachesim_lines_golden", &[], |_| cachesim_lines_golden()),
        t(
            "cachesim_lines_equal_libcachesims",
            &[OLTP],
            cachesim_lines_equal_libcachesims,
        ),
    ])
}

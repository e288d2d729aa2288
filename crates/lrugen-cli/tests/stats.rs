// SPDX-License-Identifier: GPL-2.0-only
//! What `lrugen run --stats` and `lrugen bench` report about their own cost (issue #15): the
//! process's and each run's peak RSS, the resident pages of each kernel-policy run and the bytes
//! per resident page, consistent with each other as printed; and `bench`'s `bare` row (the replay loop with no
//! policy) beside the policies', over the same accesses.

const SHIPPED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/traces/synthetic.lis.zst");
const RANDREAD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/bench/randread.fio");

mod common;
use common::lrugen;

fn ok(args: &[&str]) -> (String, String) {
    let o = lrugen(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "lrugen {} failed: {err}", args.join(" "));
    (String::from_utf8(o.stdout).expect("UTF-8"), err)
}

/// The value after `prefix` on the line that starts with it, up to the first space.
fn value<'a>(text: &'a str, prefix: &str) -> &'a str {
    let line = text
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{text}"));
    line[prefix.len()..].split_whitespace().next().unwrap_or("")
}

fn number<T: std::str::FromStr>(text: &str, prefix: &str) -> T {
    let v = value(text, prefix);
    v.parse()
        .unwrap_or_else(|_| panic!("{prefix:?} is followed by {v:?}, not a number, in:\n{text}"))
}

/// The block's numbers agree: each run's peak RSS within the process's; for each kernel policy,
/// resident pages within the limit, `peak RSS during the run / resident pages` and `model state /
/// resident pages` as printed; the
/// reference caches say n/a.
fn check_stats(text: &str, kernel: &[&str], reference: &[&str], limit: u64) {
    assert!(text.contains("--- stats ---"), "{text}");
    let peak: u64 = number(text, "peak RSS (VmHWM of the process, over all runs): ");
    assert!(peak > 1 << 20, "a peak RSS of {peak} bytes is not a process's:\n{text}");
    for p in kernel.iter().chain(reference) {
        let run: u64 = number(text, &format!("{p}: peak RSS during the run (VmHWM reset before it): "));
        assert!(
            run > 1 << 20 && run <= peak,
            "{p}: run peak {run}, process peak {peak}:\n{text}"
        );
    }
    for p in kernel {
        let run: u64 = number(text, &format!("{p}: peak RSS during the run (VmHWM reset before it): "));
        let pages: u64 = number(
            text,
            &format!("{p}: resident pages at the end (memcg /t anon + file): "),
        );
        assert!(
            pages > 0 && pages <= limit,
            "{p}: {pages} resident pages, limit {limit}:\n{text}"
        );
        let per: f64 = number(text, &format!("{p}: peak RSS during the run / resident pages: "));
        let want = run as f64 / pages as f64;
        assert!(
            (per - want).abs() <= 0.005 + 1e-9 * want,
            "{p}: {per} bytes per page printed, {run} / {pages} = {want}:\n{text}"
        );
        let state: f64 = number(text, &format!("{p}: model state bytes (Machine::state_bytes): "));
        // at least the folio records of the resident pages (24 bytes each)
        assert!(
            state >= 24.0 * pages as f64,
            "{p}: {state} state bytes for {pages} pages:\n{text}"
        );
        let per: f64 = number(text, &format!("{p}: model state / resident pages: "));
        let want = state / pages as f64;
        assert!(
            (per - want).abs() <= 0.005 + 1e-9 * want,
            "{p}: {per} state bytes per page printed, {state} / {pages} = {want}:\n{text}"
        );
    }
    for p in kernel {
        let pages: u64 = number(
            text,
            &format!("{p}: resident pages at the end (memcg /t anon + file): "),
        );
        let state: u64 = number(text, &format!("{p}: model state bytes (Machine::state_bytes): "));
        let split = split(text, p);
        assert_eq!(
            split.resident + split.nonresident,
            state,
            "{p}: the split does not add up to the state:\n{text}"
        );
        assert!(
            split.nonresident_file <= split.nonresident,
            "{p}: the file part is more than the whole:\n{text}"
        );
        // at least the folio records of the resident pages (24 bytes each)
        assert!(
            split.resident >= 24 * pages,
            "{p}: {} resident state bytes for {pages} pages:\n{text}",
            split.resident
        );
        let per: f64 = number(text, &format!("{p}: model state of resident pages / resident pages: "));
        let want = split.resident as f64 / pages as f64;
        assert!(
            (per - want).abs() <= 0.005 + 1e-9 * want,
            "{p}: {per}, want {want}:\n{text}"
        );
        if split.file_pages > 0 {
            let per: f64 = number(
                text,
                &format!("{p}: model state of non-resident file pages / non-resident file pages: "),
            );
            let want = split.nonresident_file as f64 / split.file_pages as f64;
            assert!(
                (per - want).abs() <= 0.005 + 1e-9 * want,
                "{p}: {per}, want {want}:\n{text}"
            );
        }
    }
    for p in reference {
        assert_eq!(
            value(text, &format!("{p}: resident pages at the end: ")),
            "n/a",
            "{text}"
        );
    }
}

/// The state split of policy `p` as `--stats` prints it.
struct Split {
    resident: u64,
    nonresident: u64,
    file_pages: u64,
    nonresident_file: u64,
    swapped: u64,
}

fn split(text: &str, p: &str) -> Split {
    Split {
        resident: number(text, &format!("{p}: model state of resident pages: ")),
        nonresident: number(text, &format!("{p}: model state of non-resident pages: ")),
        file_pages: number(text, &format!("{p}: non-resident file pages (shadow entries): ")),
        nonresident_file: number(text, &format!("{p}: model state of non-resident file pages: ")),
        swapped: number(text, &format!("{p}: swapped-out pages: ")),
    }
}

/// A random read of `files` files of 16 MiB in a 16 MiB memcg: the split of each policy.
fn file_read_split(files: &str) -> (String, Vec<Split>) {
    let (out, _) = ok(&[
        "run",
        "--workload",
        "file-read",
        "--files",
        files,
        "--size",
        "16M",
        "--memcg-max",
        "16M",
        "--dist",
        "uniform",
        "--accesses",
        "60000",
        "--policy",
        "mglru,classic",
        "--stats",
    ]);
    check_stats(&out, &["mglru", "classic"], &[], 4096);
    let s = vec![split(&out, "mglru"), split(&out, "classic")];
    (out, s)
}

/// The split follows the pages: at the same memory, four times the file set leaves more
/// non-resident file pages (shadow entries) and more state for them, about as much state for the
/// resident pages (the same number of them, within the page-cache leaves' sharing), and nothing
/// swapped out (no anon memory).
#[test]
fn run_stats_split_resident_and_nonresident_state() {
    let (small_out, small) = file_read_split("2");
    let (large_out, large) = file_read_split("8");
    for (i, p) in ["mglru", "classic"].into_iter().enumerate() {
        let (a, b) = (&small[i], &large[i]);
        let ctx = format!("{p}, 2 files:\n{small_out}\n8 files:\n{large_out}");
        assert_eq!((a.swapped, b.swapped), (0, 0), "{ctx}");
        assert!(a.file_pages > 0, "2 files over 1 file of memory leave shadows: {ctx}");
        assert!(b.file_pages > 2 * a.file_pages, "{ctx}");
        assert!(b.nonresident_file > 2 * a.nonresident_file, "{ctx}");
        assert!(b.nonresident > 2 * a.nonresident, "{ctx}");
        // a shadow entry is kept in a 4-byte entry of its leaf and an 8-byte value, with a share
        // of its leaf: between 12 and a whole leaf (its block of 64 entries, header and
        // records); on these runs within issue #15's 16
        for s in [a, b] {
            let per = s.nonresident_file as f64 / s.file_pages as f64;
            assert!((12.0..=600.0).contains(&per), "{per} bytes per shadow entry: {ctx}");
            assert!(per <= 16.0, "{per} bytes per shadow entry, over issue #15's 16: {ctx}");
        }
        // a resident page: its 24-byte folio record, its 4-byte entry and shares of its leaf,
        // within issue #15's 32
        for (s, out) in [(a, &small_out), (b, &large_out)] {
            let pages: u64 = number(out, &format!("{p}: resident pages at the end (memcg /t anon + file): "));
            let per = s.resident as f64 / pages as f64;
            assert!(
                (28.0..=32.0).contains(&per),
                "{per} bytes per resident page, over issue #15's 32: {ctx}"
            );
        }
        // resident state: the same memory, so the same folio table; the leaves' shares move it
        // by less than half
        assert!(
            (b.resident as f64) < 1.5 * a.resident as f64 && (b.resident as f64) > 0.5 * a.resident as f64,
            "{ctx}"
        );
    }
}

#[test]
fn run_stats_on_a_trace() {
    let (out, _) = ok(&[
        "run",
        "--trace",
        SHIPPED,
        "--capacity",
        "1000",
        "--policy",
        "mglru,classic,lru",
        "--stats",
    ]);
    check_stats(&out, &["mglru", "classic"], &["lru"], 1000);
    // the block comes after the table
    assert!(out.find("--- stats ---") > out.find("hit ratio"), "{out}");
}

#[test]
fn run_stats_on_a_fio_job_in_virtual_time() {
    let (out, _) = ok(&[
        "run",
        "--fio",
        RANDREAD,
        "--memcg-max",
        "16M",
        "--policy",
        "mglru",
        "--stats",
    ]);
    check_stats(&out, &["mglru"], &[], 4096);
}

#[test]
fn run_stats_with_json_go_to_stderr() {
    let (out, err) = ok(&[
        "run",
        "--trace",
        SHIPPED,
        "--capacity",
        "500",
        "--policy",
        "classic",
        "--json",
        "--stats",
    ]);
    serde_json::from_str::<serde_json::Value>(&out).expect("stdout stays JSON");
    check_stats(&err, &["classic"], &[], 500);
}

#[test]
fn run_without_stats_prints_none() {
    let (out, _) = ok(&["run", "--trace", SHIPPED, "--capacity", "1000", "--policy", "lru"]);
    assert!(!out.contains("--- stats ---") && !out.contains("VmHWM"), "{out}");
}

#[test]
fn bench_has_a_bare_row_over_the_same_accesses() {
    let (out, _) = ok(&["bench", SHIPPED, "--capacity", "1000", "--policy", "lru,classic"]);
    let rows: Vec<Vec<&str>> = out.lines().skip(1).map(|l| l.split_whitespace().collect()).collect();
    // trace policy capacity accesses RATE M HIT
    assert_eq!(rows.len(), 3, "{out}");
    assert_eq!(rows[0][1], "bare", "the bare loop comes first:\n{out}");
    assert_eq!(rows[0][6], "-", "the bare loop has no hit ratio:\n{out}");
    for r in &rows {
        assert_eq!(r.len(), 7, "{out}");
        assert_eq!(r[3], rows[0][3], "every row replays the same accesses:\n{out}");
        assert_eq!(r[5], "M", "{out}");
        let rate: f64 = r[4].parse().expect("a rate");
        assert!(rate > 0.0, "{out}");
    }
    assert_eq!(
        rows.iter().map(|r| r[1]).collect::<Vec<_>>(),
        ["bare", "lru", "classic"],
        "{out}"
    );
}

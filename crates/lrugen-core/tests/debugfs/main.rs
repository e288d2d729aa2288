// SPDX-License-Identifier: GPL-2.0-only
//! `/sys/kernel/debug/lru_gen` and `lru_gen_full`: printer, parser and write commands
//! (`lrugen::reclaim::mglru::debugfs`).
//!
//! * **Golden files** (`show-*.txt` here): hand-built lruvec states printed in both profiles and
//!   both files must equal the checked-in text byte for byte. When a change is intended,
//!   regenerate and review:
//!
//!   ```text
//!   LRUGEN_BLESS=1 cargo test -p lrugen-core --test debugfs
//!   git diff crates/lrugen-core/tests/debugfs/
//!   ```
//!
//! * **Real outputs** (`oracle-*.txt` here): the snippets quoted verbatim in
//!   `shared/design/kernel-oracle.md` (6.1.192 and 6.12.117 runs; lines keep their trailing
//!   spaces) are parsed and their numbers checked.
//! * **Round trips**: `show` → `parse` gives back the numbers of the state, in both profiles
//!   (fixed states and random ones).
//! * **Write commands**: one test per rule of `lru_gen_seq_write`/`run_cmd`.
//! * **Robustness**: the parsers never panic on random or mutated text.

#[path = "../common/mod.rs"]
mod common;

use lrugen::reclaim::mglru::debugfs::{
    check_age, check_evict, commands, detect_format, eviction_done, jiffies_to_msecs, parse, parse_commands, show,
    AgeCheck, Clock, Command, CommandError, Errno, Format, LruvecView, ParsedGen, ParsedLruvec, TierRow,
};
use lrugen::reclaim::mglru::state::{gen_from_seq, hist_from_seq, mm_stat, LruGen, Profile};
use proptest::prelude::*;
use std::path::PathBuf;

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/debugfs")
        .join(name)
}

fn read_data(name: &str) -> String {
    let p = data_path(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// Compare `actual` with the golden file `name` (`common::check_golden`).
fn check_golden(name: &str, actual: &str) {
    common::check_golden(&data_path(name), actual, "debugfs");
}

// ---------------------------------------------------------------------------------------------
// States
// ---------------------------------------------------------------------------------------------

const CLOCK: Clock = Clock { jiffies: 2100, hz: 250 };

/// memcg 5 `/t`: generations 4..=7 for file, but anon only has 5..=7 (`min_seq = [5, 4]`), so
/// `lru_gen_full` marks anon of generation 4 `x`. Every counter holds a distinct value:
/// `avg_refaulted = 10 + 100·type + tier`, `avg_total = 50 + …`, `refaulted = 1000·(hist+1) +
/// 100·type + tier`, `evicted = … + 10 + tier`, `protected = … + 20 + tier`, `mm stats =
/// 10000·(hist+1) + index`.
fn lg_t() -> LruGen {
    let mut lg = LruGen::new(0);
    lg.max_seq = 7;
    lg.min_seq = [5, 4];
    // slots of seq 4, 5, 6, 7
    lg.timestamps = [1000, 1400, 1900, 2000];
    lg.nr_pages[0][1] = [0, 300, 20, 0];
    lg.nr_pages[1][0] = [0, 100, 20, 0];
    lg.nr_pages[1][1] = [0, 4096, 0, 0];
    lg.nr_pages[2][0] = [0, 7, -3, 0]; // a zone below zero (pending walk batch) counts as 0
    lg.nr_pages[2][1] = [0, 1, 0, 0];
    lg.nr_pages[3][0] = [0, 64, 0, 0];
    lg.nr_pages[3][1] = [0, 2, 0, 0];
    for t in 0..2 {
        for tier in 0..4 {
            let base = 100 * t as u64 + tier as u64;
            lg.avg_refaulted[t][tier] = 10 + base;
            lg.avg_total[t][tier] = 50 + base;
            for h in 0..4 {
                let hb = 1000 * (h as u64 + 1) + base;
                lg.refaulted[h][t][tier] = hb;
                lg.evicted[h][t][tier] = hb + 10;
                lg.protected[h][t][tier] = hb + 20;
            }
        }
    }
    for h in 0..4 {
        for k in 0..6 {
            lg.mm_state.stats[h][k] = 10000 * (h as u64 + 1) + k as u64;
        }
    }
    lg
}

/// A fresh lruvec (`max_seq = 3`, `min_seq = [0, 0]`, all born at `born`) with a few pages.
fn lg_fresh(born: u64) -> LruGen {
    let mut lg = LruGen::new(born);
    lg.nr_pages[3][0][1] = 5;
    lg.nr_pages[3][1][1] = 9;
    lg.nr_pages[2][1][2] = 11;
    lg.evicted[0][1][0] = 3;
    lg.mm_state.stats[0][mm_stat::LEAF_TOTAL] = 77;
    lg
}

/// Root on nodes 0 and 1 (node 1 born after "now": the age wraps as the kernel's `%u`), then
/// `/t` on node 0.
fn with_views<R>(f: impl FnOnce(&[LruvecView<'_>]) -> R) -> R {
    let (r0, r1, t) = (lg_fresh(1500), lg_fresh(2500), lg_t());
    let views = [
        LruvecView {
            memcg_id: 1,
            path: "/",
            node: 0,
            first_node: true,
            lg: &r0,
        },
        LruvecView {
            memcg_id: 1,
            path: "/",
            node: 1,
            first_node: false,
            lg: &r1,
        },
        LruvecView {
            memcg_id: 5,
            path: "/t",
            node: 0,
            first_node: true,
            lg: &t,
        },
    ];
    f(&views)
}

fn render(profile: Profile, full: bool, nr_hist: usize, mm: bool) -> String {
    with_views(|v| {
        let mut s = String::new();
        show(&mut s, profile, full, v, CLOCK, nr_hist, mm);
        s
    })
}

fn profile_name(p: Profile) -> &'static str {
    match p {
        Profile::V6_1 => "6.1",
        _ => "mainline",
    }
}

// ---------------------------------------------------------------------------------------------
// Show: golden files and targeted lines
// ---------------------------------------------------------------------------------------------

#[test]
fn golden_show_files() {
    for p in [Profile::V6_1, Profile::V6_17] {
        let n = profile_name(p);
        check_golden(&format!("show-{n}-lru_gen.txt"), &render(p, false, 1, true));
        check_golden(&format!("show-{n}-lru_gen_full.txt"), &render(p, true, 1, true));
        check_golden(&format!("show-{n}-lru_gen_full-stats.txt"), &render(p, true, 4, true));
    }
    check_golden(
        "show-mainline-lru_gen_full-nowalk.txt",
        &render(Profile::V6_17, true, 1, false),
    );
}

fn lines_of(s: &str) -> Vec<&str> {
    s.split('\n').collect()
}

#[test]
fn show_headers_rows_and_ages() {
    let s = render(Profile::V6_1, false, 1, true);
    let l = lines_of(&s);
    assert_eq!(l[0], "memcg     1 /");
    assert_eq!(l[1], " node     0");
    // fresh lruvec: min_seq[anon] = 0 → rows 0..=3; age (2100 − 1500) jiffies at HZ 250
    assert_eq!(l[2], "          0       2400          0           0 ");
    assert_eq!(l[5], "          3       2400          5           9 ");
    // node 1: no memcg header; born in the future: (2100 − 2500) · 4 wraps to 2^32 − 1600
    assert_eq!(l[6], " node     1");
    assert_eq!(l[7], "          0 4294965696          0           0 ");
    assert_eq!(l[11], "memcg     5 /t");
    // 6.1 plain starts at min_seq[anon] = 5; the −3 zone is clamped: 7 anon pages in gen 6
    assert_eq!(l[13], "          5       2800        120        4096 ");
    assert_eq!(l[14], "          6        800          7           1 ");
    assert_eq!(l[15], "          7        400         64           2 ");
    assert_eq!(l[16], "");
    assert_eq!(l.len(), 17);

    // mainline plain starts at min(min_seq) = 4
    let s = render(Profile::V6_17, false, 1, true);
    let l = lines_of(&s);
    assert_eq!(l[13], "          4       4400          0         320 ");
    assert_eq!(l[14], "          5       2800        120        4096 ");
}

#[test]
fn show_full_markers_and_protected_slot() {
    // 6.1, one history slot
    let s = render(Profile::V6_1, true, 1, true);
    let t = &s[s.find("memcg     5 /t").unwrap()..];
    let l = lines_of(t);
    assert_eq!(l[2], "          4       4400          0x        320 ");
    // seq 4: anon below min_seq, file at min_seq → blanks for anon, rep for file (hist 0),
    // p of tier 1 read from slot tier − 1 = 0
    assert_eq!(
        l[4],
        "                     1          0           0           0        1101r       1111e       1120p"
    );
    assert_eq!(
        l[3],
        "                     0          0           0           0        1100r       1110e          0p"
    );
    // its mm line: blank
    assert_eq!(l[7], format!("{}{}", " ".repeat(22), "          0 ".repeat(6)));
    // seq 7 = max_seq: RT averages, and LOYNFA of slot 0
    let max = t.find("          7        400").unwrap();
    let lm = lines_of(&t[max..]);
    assert_eq!(
        lm[1],
        "                     0         10R         50T          0         110R        150T          0 "
    );
    assert_eq!(
        lm[5],
        "                            10000L      10001O      10002Y      10003N      10004F      10005A"
    );

    // mainline: x markers and p read from slot `tier`
    let s = render(Profile::V6_17, true, 1, true);
    let t = &s[s.find("memcg     5 /t").unwrap()..];
    let l = lines_of(t);
    assert_eq!(
        l[4],
        "                     1          0x          0x          0x       1101r       1111e       1121p"
    );
    assert_eq!(l[7], format!("{}{}", " ".repeat(22), "          0x".repeat(4)));
    let max = t.find("          7        400").unwrap();
    let lm = lines_of(&t[max..]);
    assert_eq!(
        lm[1],
        "                     0         10R         50T          0x        110R        150T          0x"
    );
    assert_eq!(
        lm[5],
        "                            10000T      10002Y      10004F      10005A"
    );
    // with history slots: lower-case stats of slot seq % 4 on older generations, xxxx on max_seq
    let s = render(Profile::V6_17, true, 4, true);
    let t = &s[s.find("memcg     5 /t").unwrap()..];
    let l = lines_of(t);
    assert_eq!(
        l[7],
        "                            10000t      10002y      10004f      10005a"
    );
    // seq 4 has hist 0 and `rep` for anon too, although anon is not live there
    assert_eq!(
        l[4],
        "                     1       1001r       1011e       1021p       1101r       1111e       1121p"
    );
}

#[test]
fn show_mm_line_presence() {
    // 6.1 prints the mm-stats line whatever `has_mm_state` says
    assert_eq!(
        render(Profile::V6_1, true, 1, false),
        render(Profile::V6_1, true, 1, true)
    );
    let with = render(Profile::V6_17, true, 1, true);
    let without = render(Profile::V6_17, true, 1, false);
    assert_eq!(with.lines().count(), without.lines().count() + 4 + 4 + 4);
    assert!(!without.contains("TYFA") && !without.contains('Y'));
    // the plain file never has tier or mm lines
    assert_eq!(
        render(Profile::V6_17, false, 1, true),
        render(Profile::V6_17, false, 1, false)
    );
}

#[test]
fn show_memcg_disabled_and_id_width() {
    let lg = lg_fresh(2100);
    let mut s = String::new();
    let v = [LruvecView {
        memcg_id: 0,
        path: "",
        node: 0,
        first_node: true,
        lg: &lg,
    }];
    show(&mut s, Profile::V6_17, false, &v, CLOCK, 1, true);
    assert!(
        s.starts_with("memcg     0 \n node     0\n          0          0 "),
        "{s:?}"
    );
    // `%5hu`: a 16-bit id, wider ids are truncated
    let v = [LruvecView {
        memcg_id: 65536 + 7,
        path: "/a b",
        node: 12,
        first_node: true,
        lg: &lg,
    }];
    let mut s = String::new();
    show(&mut s, Profile::V6_1, false, &v, CLOCK, 1, true);
    assert!(s.starts_with("memcg     7 /a b\n node    12\n"), "{s:?}");
    // 7.x: `%llu`, unpadded and whole (Debian 7.2.13 prints `memcg 28 /t`); read back as 7.x's
    let mut s = String::new();
    show(&mut s, Profile::V7_2, false, &v, CLOCK, 1, true);
    assert!(s.starts_with("memcg 65543 /a b\n node    12\n"), "{s:?}");
    assert_eq!(detect_format(&s), Some(Format::V7));
}

#[test]
fn show_full_of_young_lruvec_starts_at_zero() {
    let lg = LruGen::new(2100); // max_seq 3
    let mut s = String::new();
    let v = [LruvecView {
        memcg_id: 1,
        path: "/",
        node: 0,
        first_node: true,
        lg: &lg,
    }];
    show(&mut s, Profile::V6_1, true, &v, CLOCK, 1, true);
    let gens: Vec<&str> = s.lines().filter(|l| l.len() == 46).collect();
    assert_eq!(gens.len(), 4);
    assert!(gens[0].starts_with("          0 "));
}

#[test]
fn jiffies_to_msecs_matches_kernel_arithmetic() {
    assert_eq!(jiffies_to_msecs(413, 250), 1652);
    assert_eq!(jiffies_to_msecs(7, 100), 70);
    assert_eq!(jiffies_to_msecs(7, 1000), 7);
    assert_eq!(jiffies_to_msecs(7, 300), 24); // DIV_ROUND_UP(7 · 10, 3)
    assert_eq!(jiffies_to_msecs(7, 2000), 4); // (7 + 1) / 2
    assert_eq!(jiffies_to_msecs(1 << 62, 250), 0); // 4 · 2^62 wraps
    assert_eq!(jiffies_to_msecs((1 << 32) + 3, 1000), 3); // truncated to unsigned int
    assert_eq!(jiffies_to_msecs(5, 0), 5);
}

// ---------------------------------------------------------------------------------------------
// Parse: real outputs
// ---------------------------------------------------------------------------------------------

/// The header of the run the 6.1 fragments come from (`memcg 2 /t` on node 0), for fragments
/// quoted without it.
const HEADER_6_1: &str = "memcg     2 /t\n node     0\n";

fn only_lruvec(v: Vec<ParsedLruvec>) -> ParsedLruvec {
    assert_eq!(v.len(), 1, "{v:?}");
    v.into_iter().next().unwrap()
}

fn zeros(markers: &str) -> Vec<(u64, char)> {
    markers.chars().map(|c| (0, c)).collect()
}

#[test]
fn oracle_6_1_lru_gen() {
    let text = read_data("oracle-6.1-lru_gen.txt");
    // the plain file is the same text in 6.1 and 6.12: the older format is reported
    assert_eq!(detect_format(&text), Some(Format::V6_1));
    let lv = only_lruvec(parse(&text).unwrap());
    assert_eq!((lv.memcg_id, lv.path.as_str(), lv.node), (2, "/t", 0));
    let got: Vec<(u64, u64, [u64; 2], [bool; 2])> =
        lv.gens.iter().map(|g| (g.seq, g.age_ms, g.pages, g.live)).collect();
    assert_eq!(
        got,
        [
            (1, 1652, [0, 12097], [true, true]),
            (2, 1652, [0, 4096], [true, true]),
            (3, 1652, [0, 2], [true, true])
        ]
    );
    assert!(lv.gens.iter().all(|g| g.tiers.is_none() && g.mm_stats.is_none()));
}

#[test]
fn oracle_6_1_lru_gen_full_first_generations() {
    let text = read_data("oracle-6.1-lru_gen_full-first.txt");
    assert_eq!(detect_format(&text), Some(Format::V6_1));
    let lv = only_lruvec(parse(&text).unwrap());
    assert_eq!((lv.memcg_id, lv.path.as_str(), lv.node), (2, "/t", 0));
    assert_eq!(lv.gens.len(), 2);

    let g0 = &lv.gens[0];
    assert_eq!(
        (g0.seq, g0.age_ms, g0.pages, g0.live),
        (0, 1664, [0, 0], [false, false])
    );
    let tiers = g0.tiers.as_ref().unwrap();
    assert_eq!(tiers.len(), 4);
    assert!(tiers.iter().all(|row| row.iter().flatten().all(|&f| f == (0, ' '))));
    assert_eq!(g0.mm_stats.as_deref(), Some(&zeros("      ")[..]));

    let g1 = &lv.gens[1];
    assert_eq!(
        (g1.seq, g1.age_ms, g1.pages, g1.live),
        (1, 1664, [0, 12097], [true, true])
    );
    let tiers = g1.tiers.as_ref().unwrap();
    let rep = |r, e, p| [(r, 'r'), (e, 'e'), (p, 'p')];
    assert_eq!(tiers[0], [rep(0, 0, 0), rep(0, 37055, 0)]);
    assert_eq!(tiers[1], [rep(0, 0, 0), rep(0, 0, 0)]);
    assert_eq!(tiers[3], [rep(0, 0, 0), rep(0, 0, 4096)]);
    assert_eq!(g1.mm_stats.as_deref(), Some(&zeros("      ")[..]));
}

#[test]
fn oracle_6_1_lru_gen_full_max_seq() {
    let fragment = read_data("oracle-6.1-lru_gen_full-max_seq.txt");
    assert_eq!(detect_format(&fragment), Some(Format::V6_1));
    // quoted without its header: strictly, generations need one
    let err = parse(&fragment).unwrap_err();
    assert_eq!(err.line, 1);
    assert!(
        err.to_string().starts_with("line 1: expected a `memcg` header"),
        "{err}"
    );

    let lv = only_lruvec(parse(&format!("{HEADER_6_1}{fragment}")).unwrap());
    let g = &lv.gens[0];
    assert_eq!((g.seq, g.age_ms, g.pages, g.live), (5, 88, [0, 0], [true, true]));
    let rt = [(0, 'R'), (0, 'T'), (0, ' ')];
    assert_eq!(g.tiers.as_deref(), Some(&[[rt, rt]; 4][..]));
    assert_eq!(
        g.mm_stats.as_deref(),
        Some(&[(6401, 'L'), (0, 'O'), (6159, 'Y'), (32, 'N'), (16, 'F'), (13, 'A')][..])
    );
}

#[test]
fn oracle_6_12_lru_gen_full_max_seq() {
    let fragment = read_data("oracle-6.12-lru_gen_full-max_seq.txt");
    assert_eq!(detect_format(&fragment), Some(Format::V6_12));
    let lv = only_lruvec(parse(&format!("memcg     2 /t\n node     0\n{fragment}")).unwrap());
    let g = &lv.gens[0];
    assert_eq!((g.seq, g.age_ms, g.pages, g.live), (3, 1648, [0, 3], [true, true]));
    // the quote keeps only the tier-0 line
    let rtx = [(0, 'R'), (0, 'T'), (0, 'x')];
    assert_eq!(g.tiers.as_deref(), Some(&[[rtx, rtx]][..]));
    assert_eq!(
        g.mm_stats.as_deref(),
        Some(&[(0, 'T'), (0, 'Y'), (0, 'F'), (0, 'A')][..])
    );
}

#[test]
fn format_7_header_with_64_bit_cgroup_id() {
    // 7.x prints the 6.12 body under `memcg %llu %s`: build one from our mainline text
    let full = render(Profile::V6_17, true, 1, true);
    let text = full
        .replace("memcg     1 /\n", "memcg 1 /\n")
        .replace("memcg     5 /t\n", "memcg 4294967324 /t\n");
    assert_eq!(detect_format(&text), Some(Format::V7));
    let v = parse(&text).unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!((v[0].memcg_id, v[1].memcg_id, v[2].memcg_id), (1, 1, 4294967324));
    assert_eq!(v[2].path, "/t");
    // plain 7.x, as captured (`memcg 28 /t`)
    let plain = "memcg 28 /t\n node     0\n          1       1652          0       12097 \n";
    assert_eq!(detect_format(plain), Some(Format::V7));
    assert_eq!(parse(plain).unwrap()[0].memcg_id, 28);
    // a five-digit id fits both layouts; the body decides
    assert_eq!(detect_format("memcg 12345 /x\n node     0\n"), None);
    assert_eq!(detect_format("memcg 65536 /x\n"), Some(Format::V7));
    // our own mainline text reads as 6.12
    assert_eq!(detect_format(&full), Some(Format::V6_12));
    assert_eq!(detect_format(&render(Profile::V6_1, true, 4, true)), Some(Format::V6_1));
    assert_eq!(detect_format(""), None);
    assert_eq!(detect_format("no such text\n"), None);
}

#[test]
fn parse_errors_name_line_expectation_and_text() {
    let ok = read_data("oracle-6.1-lru_gen_full-first.txt");
    let cases: Vec<(String, usize, &str)> = vec![
        (
            "memcg     2 /t\n node     0\n          1   oops\n".into(),
            3,
            "expected a number, found `oops`",
        ),
        (
            "          1       1652          0       12097 \n".into(),
            1,
            "expected a `memcg` header",
        ),
        (
            "memcg     2 /t\n".into(),
            2,
            "expected a ` node` line after the `memcg` header of line 1",
        ),
        (
            "memcg     2 /t\nmemcg     3 /u\n node     0\n".into(),
            2,
            "expected a ` node` line",
        ),
        (
            " node     0\n".into(),
            1,
            "expected a `memcg` header before the first ` node` line",
        ),
        (
            "memcg 2 /t\n node 0\n 1 1 0 0\n 3 1 0 0\n".into(),
            4,
            "expected generation 2 after generation 1",
        ),
        (
            "memcg 2 /t\n node 0\n 1 1 0 0\n 1 0R 0T 0x 0R 0T 0x\n".into(),
            4,
            "expected tier 0",
        ),
        (
            "memcg 2 /t\n node 0\n 1 1 0 0\n 0 0R 0T 0 0R 0T 0x\n".into(),
            4,
            "expected the same marker style (6.1 or 6.12+) for anon and file, found `RT ` and `RTx`",
        ),
        (
            "memcg 2 /t\n node 0\n 1 1 0 0\n 0 0R 0e 0x 0R 0T 0x\n".into(),
            4,
            "expected tier markers",
        ),
        (
            "memcg 2 /t\n node 0\n 1 1 0 0\n 0T 0Y 0F 0A\n".into(),
            4,
            "expected tier lines before",
        ),
        (
            "memcg 2 /t\n node 0\n 1 1 0y 0\n".into(),
            3,
            "expected a page count marked `x`",
        ),
        (
            "memcg 2 /t\n node 0\n 1 1 0 99999999999999999999\n".into(),
            3,
            "below 2^64",
        ),
        ("memcg 2 /t\n node 0\n 1 2 3\n".into(), 3, "a line of 3 fields"),
        ("memcg   2 /t\n".into(), 1, "right-aligned in 5 columns or unpadded"),
        (
            "memcg     2 /t\n node 0\nmemcg 3 /u\n node 0\n".into(),
            3,
            "laid out like the one on line 1",
        ),
        // a 6.1 tier line in a text whose first markers are 6.12's
        (
            "memcg     2 /t\n node 0\n 1 1 0 0\n 0 0R 0T 0x 0R 0T 0x\n 1 0R 0T 0 0R 0T 0\n".into(),
            5,
            "the markers of the 6.12+ format, as on line 4",
        ),
        // six stats under a 6.12 body
        (
            "memcg     2 /t\n node 0\n 1 1 0 0\n 0 0R 0T 0x 0R 0T 0x\n 0 0 0 0 0 0\n".into(),
            5,
            "the markers of the 6.12+ format, as on line 4",
        ),
        (
            "memcg 2 /t\n node 0\n 1 1 0 0\n 0 0r 0e 0p 0r 0e 0p\n 0L 0O 0Y 0N 0F 0a\n".into(),
            5,
            "expected mm-stats markers `LOYNFA`, `loynfa` or `      `, found `LOYNFa`",
        ),
        (
            format!(
                "{ok}{}",
                "          2       1664          0          0 \n 1 0 0 0 0 0 0\n"
            ),
            16,
            "expected tier 0",
        ),
    ];
    for (text, line, expect) in cases {
        let err = parse(&text).expect_err(&text);
        let msg = err.to_string();
        assert_eq!(err.line, line, "{text:?}: {msg}");
        assert!(msg.starts_with(&format!("line {line}: expected ")), "{msg}");
        assert!(msg.contains(", found "), "{msg}");
        assert!(msg.contains(expect), "{text:?}: {msg} (wanted {expect:?})");
    }
    // an mm-stats line twice
    let dup = format!("{HEADER_6_1}{}", read_data("oracle-6.12-lru_gen_full-max_seq.txt"));
    let dup = format!("{dup}{}", dup.lines().last().unwrap());
    assert!(parse(&dup)
        .unwrap_err()
        .to_string()
        .contains("one mm-stats line per generation"));
    // blank lines and CRLF are tolerated
    let crlf = read_data("oracle-6.1-lru_gen.txt").replace('\n', "\r\n\n");
    assert_eq!(parse(&crlf).unwrap()[0].gens.len(), 3);
    assert_eq!(parse("").unwrap(), vec![]);
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

/// What a read of `lg` must parse back to, computed from the state (not from the printer).
fn expected_gens(profile: Profile, full: bool, lg: &LruGen, clock: Clock, nr_hist: usize, mm: bool) -> Vec<ParsedGen> {
    let v61 = profile == Profile::V6_1;
    let start = if !full {
        if v61 {
            lg.min_seq[0]
        } else {
            lg.min_seq[0].min(lg.min_seq[1])
        }
    } else {
        lg.max_seq.saturating_sub(3)
    };
    let blank = if v61 { ' ' } else { 'x' };
    (start..=lg.max_seq)
        .map(|seq| {
            let gen = gen_from_seq(seq);
            let hist = hist_from_seq(seq, nr_hist);
            let pages = [0, 1].map(|t| lg.nr_pages[gen][t].iter().map(|&n| n.max(0) as u64).sum::<u64>());
            let tiers = full.then(|| {
                (0..4)
                    .map(|tier| -> TierRow {
                        [0, 1].map(|t| {
                            if seq == lg.max_seq {
                                [
                                    (lg.avg_refaulted[t][tier], 'R'),
                                    (lg.avg_total[t][tier], 'T'),
                                    (0, blank),
                                ]
                            } else if seq == lg.min_seq[t] || nr_hist > 1 {
                                let p = match (v61, tier) {
                                    (true, 0) => 0,
                                    (true, _) => lg.protected[hist][t][tier - 1],
                                    (false, _) => lg.protected[hist][t][tier],
                                };
                                [
                                    (lg.refaulted[hist][t][tier], 'r'),
                                    (lg.evicted[hist][t][tier], 'e'),
                                    (p, 'p'),
                                ]
                            } else {
                                [(0, blank); 3]
                            }
                        })
                    })
                    .collect()
            });
            let mm_stats = (full && (v61 || mm)).then(|| {
                let (idx, up, low, none): (&[usize], &str, &str, &str) = if v61 {
                    (&[0, 1, 2, 3, 4, 5], "LOYNFA", "loynfa", "      ")
                } else {
                    (&mm_stat::MAINLINE, "TYFA", "tyfa", "xxxx")
                };
                idx.iter()
                    .enumerate()
                    .map(|(i, &k)| {
                        let c = |s: &str| s.as_bytes()[i] as char;
                        if seq == lg.max_seq && nr_hist == 1 {
                            (lg.mm_state.stats[hist][k], c(up))
                        } else if seq != lg.max_seq && nr_hist > 1 {
                            (lg.mm_state.stats[hist][k], c(low))
                        } else {
                            (0, c(none))
                        }
                    })
                    .collect()
            });
            ParsedGen {
                seq,
                age_ms: u64::from(jiffies_to_msecs(
                    clock.jiffies.wrapping_sub(lg.timestamps[gen]),
                    clock.hz,
                )),
                pages,
                live: [0, 1].map(|t| !full || seq >= lg.min_seq[t]),
                tiers,
                mm_stats,
            }
        })
        .collect()
}

#[test]
fn round_trip_fixed_states() {
    for profile in [Profile::V6_1, Profile::V6_17] {
        for full in [false, true] {
            for nr_hist in [1, 4] {
                for mm in [false, true] {
                    let text = render(profile, full, nr_hist, mm);
                    let parsed = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
                    if full {
                        let want = if profile == Profile::V6_1 {
                            Format::V6_1
                        } else {
                            Format::V6_12
                        };
                        assert_eq!(detect_format(&text), Some(want));
                    }
                    with_views(|views| {
                        assert_eq!(parsed.len(), views.len());
                        for (p, v) in parsed.iter().zip(views) {
                            assert_eq!((p.memcg_id, p.path.as_str(), p.node), (v.memcg_id, v.path, v.node));
                            assert_eq!(p.gens, expected_gens(profile, full, v.lg, CLOCK, nr_hist, mm));
                        }
                    });
                }
            }
        }
    }
}

fn arb_lruvec() -> impl Strategy<Value = LruGen> {
    (
        0u64..2000,
        0u64..4,
        0u64..4,
        proptest::array::uniform4(any::<u32>()),
        proptest::collection::vec(-5i64..100_000, 32),
        proptest::collection::vec(any::<u64>(), 16 + 3 * 32 + 24),
    )
        .prop_map(|(max_seq, da, df, ts, pages, stats)| {
            let mut lg = LruGen::new(0);
            lg.max_seq = max_seq;
            // each type has 2..=4 generations (or fewer near 0)
            lg.min_seq = [
                max_seq.saturating_sub(1 + da.min(2)),
                max_seq.saturating_sub(1 + df.min(2)),
            ];
            lg.timestamps = ts.map(u64::from);
            for (i, n) in pages.into_iter().enumerate() {
                lg.nr_pages[i / 8][(i / 4) % 2][i % 4] = n;
            }
            let mut it = stats.into_iter();
            for t in 0..2 {
                for tier in 0..4 {
                    lg.avg_refaulted[t][tier] = it.next().unwrap();
                    lg.avg_total[t][tier] = it.next().unwrap();
                }
            }
            for h in 0..4 {
                for t in 0..2 {
                    for tier in 0..4 {
                        lg.refaulted[h][t][tier] = it.next().unwrap();
                        lg.evicted[h][t][tier] = it.next().unwrap();
                        lg.protected[h][t][tier] = it.next().unwrap();
                    }
                }
                for k in 0..6 {
                    lg.mm_state.stats[h][k] = it.next().unwrap();
                }
            }
            lg
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn round_trip_random_states(
        lgs in proptest::collection::vec(arb_lruvec(), 1..4),
        ids in proptest::collection::vec(0u64..65536, 4),
        v61 in any::<bool>(),
        full in any::<bool>(),
        stats in any::<bool>(),
        mm in any::<bool>(),
        jiffies in any::<u64>(),
        hz in prop::sample::select(vec![100u64, 250, 300, 1000]),
    ) {
        let profile = if v61 { Profile::V6_1 } else { Profile::V6_17 };
        let nr_hist = if stats { 4 } else { 1 };
        let clock = Clock { jiffies, hz };
        let paths: Vec<String> = (0..lgs.len()).map(|i| format!("/g{i}/with space")).collect();
        let views: Vec<LruvecView<'_>> = lgs
            .iter()
            .enumerate()
            .map(|(i, lg)| LruvecView { memcg_id: ids[i], path: &paths[i], node: i % 2, first_node: i % 2 == 0, lg })
            .collect();
        let mut text = String::new();
        show(&mut text, profile, full, &views, clock, nr_hist, mm);
        let parsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(parsed.len(), views.len());
        for (i, (p, v)) in parsed.iter().zip(&views).enumerate() {
            let header = i - i % 2;
            prop_assert_eq!(p.memcg_id, ids[header]);
            prop_assert_eq!(&p.path, &paths[header]);
            prop_assert_eq!(p.node, v.node);
            prop_assert_eq!(&p.gens, &expected_gens(profile, full, v.lg, clock, nr_hist, mm));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Robustness
// ---------------------------------------------------------------------------------------------

/// Character-level edits of a valid text.
#[derive(Clone, Debug)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, String),
    Replace(usize, char),
    Truncate(usize),
    Duplicate(usize, usize),
}

fn arb_edit() -> impl Strategy<Value = Edit> {
    let chars = prop::sample::select(vec![
        ' ', '\n', '\t', '0', '9', 'x', 'R', 'T', 'r', 'e', 'p', 'L', 'y', 'é', '\r', '-',
    ]);
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), proptest::collection::vec(chars.clone(), 1..12))
            .prop_map(|(a, cs)| Edit::Insert(a, cs.into_iter().collect())),
        (any::<usize>(), chars).prop_map(|(a, c)| Edit::Replace(a, c)),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), 1usize..200).prop_map(|(a, n)| Edit::Duplicate(a, n)),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut c: Vec<char> = text.chars().collect();
    for e in edits {
        let len = c.len().max(1);
        match e {
            Edit::Delete(a, n) => {
                let a = a % len;
                let b = (a + n).min(c.len());
                if a < b {
                    c.drain(a..b);
                }
            }
            Edit::Insert(a, s) => {
                let a = a % (c.len() + 1);
                c.splice(a..a, s.chars());
            }
            Edit::Replace(a, ch) => {
                if !c.is_empty() {
                    let a = a % c.len();
                    c[a] = *ch;
                }
            }
            Edit::Truncate(a) => c.truncate(a % len),
            Edit::Duplicate(a, n) => {
                let a = a % len;
                let b = (a + n).min(c.len());
                if a < b {
                    let dup: Vec<char> = c[a..b].to_vec();
                    c.splice(b..b, dup);
                }
            }
        }
    }
    c.into_iter().collect()
}

fn corpus() -> Vec<String> {
    let mut v = vec![
        read_data("oracle-6.1-lru_gen.txt"),
        read_data("oracle-6.1-lru_gen_full-first.txt"),
        format!("{HEADER_6_1}{}", read_data("oracle-6.1-lru_gen_full-max_seq.txt")),
        format!("{HEADER_6_1}{}", read_data("oracle-6.12-lru_gen_full-max_seq.txt")),
    ];
    for p in [Profile::V6_1, Profile::V6_17] {
        v.push(render(p, true, 1, true));
        v.push(render(p, true, 4, true));
        v.push(render(p, false, 1, true));
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn parse_never_panics_on_random_text(s in "(?s).{0,300}", t in "[ 0-9xRTrepLOYNFAtyfamcgnode/\n]{0,400}") {
        let _ = parse(&s);
        let _ = detect_format(&s);
        let _ = parse(&t);
        let _ = detect_format(&t);
    }

    #[test]
    fn parse_never_panics_on_mutated_output(which in 0usize..10, edits in proptest::collection::vec(arb_edit(), 1..6)) {
        let corpus = corpus();
        let text = apply(&corpus[which % corpus.len()], &edits);
        if let Err(e) = parse(&text) {
            // errors point into the text
            prop_assert!(e.line >= 1 && e.line <= text.lines().count() + 1, "{}", e);
        }
        let _ = detect_format(&text);
    }

    #[test]
    fn command_parser_never_panics(s in "(?s).{0,120}", t in "[-+ 0-9a-zA-Z,;\n\t\r\u{0}\u{a0}]{0,80}") {
        for p in [Profile::V6_1, Profile::V6_17] {
            let _ = parse_commands(&s, p);
            let _ = parse_commands(&t, p);
            // the iterator stops after its first error
            let items: Vec<_> = commands(&t, p).collect();
            prop_assert!(items.iter().take(items.len().saturating_sub(1)).all(Result::is_ok));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Write commands
// ---------------------------------------------------------------------------------------------

const BOTH: [Profile; 2] = [Profile::V6_1, Profile::V6_17];

fn age(memcg_id: u64, node: usize, max_gen: u64, swappiness: Option<u32>, force_scan: bool) -> Command {
    Command::Age {
        memcg_id,
        node,
        max_gen,
        swappiness,
        force_scan,
    }
}

fn evict(memcg_id: u64, node: usize, min_gen: u64, swappiness: Option<u32>, nr_to_reclaim: u64) -> Command {
    Command::Evict {
        memcg_id,
        node,
        min_gen,
        swappiness,
        nr_to_reclaim,
    }
}

fn one(input: &str, p: Profile) -> Command {
    let v = parse_commands(input, p).unwrap_or_else(|e| panic!("{input:?} ({}): {e}", profile_name(p)));
    assert_eq!(v.len(), 1, "{input:?}");
    v.into_iter().next().unwrap()
}

/// The error of `input`, checking its errno, that it says what was expected, and `wanted`.
fn fails(input: &str, p: Profile, errno: Errno, wanted: &str) -> CommandError {
    let e = parse_commands(input, p).expect_err(input);
    let msg = e.to_string();
    assert_eq!(e.errno, errno, "{input:?} ({}): {msg}", profile_name(p));
    assert!(e.reason.contains("expected"), "{input:?}: {msg}");
    assert!(msg.contains(errno.name()), "{msg}");
    assert!(
        msg.contains(wanted),
        "{input:?} ({}): {msg} (wanted {wanted:?})",
        profile_name(p)
    );
    e
}

#[test]
fn commands_minimal_and_full_forms() {
    for p in BOTH {
        assert_eq!(one("+ 2 0 3", p), age(2, 0, 3, None, true));
        assert_eq!(one("- 2 0 1", p), evict(2, 0, 1, None, u64::MAX));
        assert_eq!(one("+ 2 0 3 100 0", p), age(2, 0, 3, Some(100), false));
        assert_eq!(one("+ 2 0 3 0 7", p), age(2, 0, 3, Some(0), true));
        // the oracle's command
        assert_eq!(one("- 2 0 3 200 2048", p), evict(2, 0, 3, Some(200), 2048));
        // no space needed after the command character; any white space between fields
        assert_eq!(one("+2\t0   3  \r", p), age(2, 0, 3, None, true));
        // 64-bit generation numbers and budgets
        assert_eq!(
            one("- 7 1 18446744073709551615 5 18446744073709551614", p),
            evict(7, 1, u64::MAX, Some(5), u64::MAX - 1)
        );
    }
}

#[test]
fn commands_split_on_comma_semicolon_newline_and_skip_empty() {
    let input = "  + 1 0 3,- 1 0 1;\t+ 1 0 4\n\n , ;- 1 1 2 60\n";
    for p in BOTH {
        assert_eq!(
            parse_commands(input, p).unwrap(),
            vec![
                age(1, 0, 3, None, true),
                evict(1, 0, 1, None, u64::MAX),
                age(1, 0, 4, None, true),
                evict(1, 1, 2, Some(60), u64::MAX)
            ]
        );
    }
}

#[test]
fn commands_nothing_to_do_is_einval() {
    for p in BOTH {
        for input in ["", "\n", " , ;\n\t", ",,,"] {
            let e = fails(input, p, Errno::EINVAL, "expected at least one command");
            assert_eq!(e.index, 0);
        }
    }
}

#[test]
fn commands_fewer_than_four_fields_is_einval() {
    for p in BOTH {
        fails("+", p, Errno::EINVAL, "a memcg id");
        fails("+ 2", p, Errno::EINVAL, "a node id");
        fails("- 2 0", p, Errno::EINVAL, "a generation number");
        fails("- 2 0 -1", p, Errno::EINVAL, "a generation number");
        fails("- two 0 3", p, Errno::EINVAL, "a memcg id (unsigned decimal)");
        fails("++ 2 0 3", p, Errno::EINVAL, "a memcg id");
    }
}

#[test]
fn commands_trailing_garbage_is_einval() {
    // 6.1: the %u after the generation fails on `x`, which is then trailing
    fails("+ 2 0 3x", Profile::V6_1, Errno::EINVAL, "nothing after it, found `x`");
    // mainline: %4s needs no space before it and takes `x` as the swappiness
    fails("+ 2 0 3x", Profile::V6_17, Errno::EINVAL, "found `x`");
    for p in BOTH {
        fails("+ 2 0 3 100 1 7", p, Errno::EINVAL, "found `7`");
        fails("- 2 0 3 100 5k", p, Errno::EINVAL, "found `k`");
        fails("- 2 0 3 100 -5", p, Errno::EINVAL, "nothing after it");
    }
    // 6.1 reads swappiness with %u: `max` is not a number
    fails("- 2 0 3 max", Profile::V6_1, Errno::EINVAL, "found `max`");
    fails("- 2 0 3 1a", Profile::V6_1, Errno::EINVAL, "found `a`");
}

#[test]
fn commands_unknown_command_is_einval() {
    for p in BOTH {
        fails(
            "* 2 0 3",
            p,
            Errno::EINVAL,
            "expected command `+` (aging) or `-` (eviction), found `*`",
        );
        fails("a2 0 3", p, Errno::EINVAL, "found `a`");
    }
}

#[test]
fn commands_swappiness_6_1() {
    let p = Profile::V6_1;
    assert_eq!(one("- 2 0 3 200", p), evict(2, 0, 3, Some(200), u64::MAX));
    fails(
        "- 2 0 3 201",
        p,
        Errno::EINVAL,
        "expected swappiness 0..=200, found 201",
    );
    fails("+ 2 0 3 1000 1", p, Errno::EINVAL, "0..=200");
    // `unsigned int` passed as `int`: ≥ 2^31 is negative, which means "the default"
    assert_eq!(one("- 2 0 3 4294967295", p), evict(2, 0, 3, None, u64::MAX));
    assert_eq!(one("+ 2 0 3 2147483648 0", p), age(2, 0, 3, None, false));
    fails("- 2 0 3 2147483647", p, Errno::EINVAL, "0..=200");
    // %u wraps modulo 2^32
    assert_eq!(one("- 2 0 3 4294967296", p), evict(2, 0, 3, Some(0), u64::MAX));
    // `+` keeps the value; the executor turns it into can_swap (see check_age)
    assert_eq!(one("+ 2 0 3 1", p), age(2, 0, 3, Some(1), true));
    // decimal only: "0x10" scans as 0 followed by garbage
    fails("- 2 0 3 0x10", p, Errno::EINVAL, "found `x10`");
}

#[test]
fn commands_swappiness_mainline() {
    let p = Profile::V6_17;
    assert_eq!(one("- 2 0 3 201", p), evict(2, 0, 3, Some(201), u64::MAX));
    assert_eq!(one("- 2 0 3 max 64", p), evict(2, 0, 3, Some(201), 64));
    assert_eq!(one("+ 2 0 3 max", p), age(2, 0, 3, Some(201), true));
    fails(
        "- 2 0 3 202",
        p,
        Errno::EINVAL,
        "expected swappiness 0..=201 or `max`, found 202",
    );
    fails("- 2 0 3 9999", p, Errno::EINVAL, "0..=201");
    // kstrtouint base 0: hex, octal, a leading +
    assert_eq!(one("- 2 0 3 0x10", p).swappiness(), Some(16));
    assert_eq!(one("- 2 0 3 010", p).swappiness(), Some(8));
    assert_eq!(one("- 2 0 3 +12", p).swappiness(), Some(12));
    for bad in ["MAX", "maxx", "abc", "0x", "08", "-1", "+"] {
        let e = fails(
            &format!("- 2 0 3 {bad}"),
            p,
            Errno::EINVAL,
            "expected swappiness `max` or an unsigned integer",
        );
        assert!(e.reason.contains(&format!("found `{bad}`")), "{e}");
    }
    // %4s takes at most four characters; the rest of the token is read as `opt`
    assert_eq!(one("- 2 0 3 01000", p), evict(2, 0, 3, Some(0o100), 0));
    fails("- 2 0 3 20000", p, Errno::EINVAL, "found 2000");
    fails("- 2 0 3 max12", p, Errno::EINVAL, "found `max1`");
}

#[test]
fn commands_opt_defaults() {
    for p in BOTH {
        assert!(matches!(one("+ 2 0 3 50", p), Command::Age { force_scan: true, .. }));
        assert!(matches!(one("+ 2 0 3 50 0", p), Command::Age { force_scan: false, .. }));
        assert!(matches!(
            one("+ 2 0 3 50 18446744073709551616", p),
            Command::Age { force_scan: false, .. }
        ));
        assert!(matches!(
            one("- 2 0 3 50", p),
            Command::Evict {
                nr_to_reclaim: u64::MAX,
                ..
            }
        ));
        assert!(matches!(
            one("- 2 0 3 50 0", p),
            Command::Evict { nr_to_reclaim: 0, .. }
        ));
    }
}

#[test]
fn commands_ids_are_c_unsigned_int() {
    for p in BOTH {
        // %u: wraps modulo 2^32; the executor then fails ids no memcg has
        let c = one("+ 4294967298 4294967297 3", p);
        assert_eq!((c.memcg_id(), c.node()), (2, 1));
        assert_eq!(one("- 99999 0 0", p).memcg_id(), 99999);
    }
}

#[test]
fn commands_stop_at_nul_and_apply_in_order() {
    for p in BOTH {
        assert_eq!(
            parse_commands("+ 2 0 3\0garbage", p).unwrap(),
            vec![age(2, 0, 3, None, true)]
        );
        let mut it = commands("+ 1 0 3; bogus; + 1 0 4", p);
        assert_eq!(it.next().unwrap().unwrap(), age(1, 0, 3, None, true));
        let e = it.next().unwrap().unwrap_err();
        assert_eq!((e.index, e.command.as_str(), e.errno), (1, "bogus", Errno::EINVAL));
        assert!(it.next().is_none());
        let msg = e.to_string();
        assert!(
            msg.starts_with("lru_gen command 1 `bogus`: EINVAL (Invalid argument): expected "),
            "{msg}"
        );
        let e = parse_commands("+ 1 0 3\n- 1 0 1 300", p).unwrap_err();
        assert_eq!(e.index, 1);
    }
}

#[test]
fn errno_values() {
    let all = [Errno::EINVAL, Errno::ERANGE, Errno::EEXIST, Errno::EINTR, Errno::ENOMEM];
    assert_eq!(all.map(Errno::code), [22, 34, 17, 4, 12]);
    assert_eq!(Errno::EINVAL.to_string(), "EINVAL (Invalid argument)");
}

#[test]
fn generation_checks() {
    let mut lg = LruGen::new(0);
    lg.max_seq = 7;
    lg.min_seq = [4, 5]; // anon has 4 generations, file 3
                         // 6.1: older max_gen is a successful no-op; newer is EINVAL
    assert_eq!(check_age(Profile::V6_1, &lg, 6, 60, false), Ok(AgeCheck::NoOp));
    assert_eq!(check_age(Profile::V6_1, &lg, 8, 60, true), Err(Errno::EINVAL));
    // without force_scan, a full set of generations of the type it may age is ERANGE
    assert_eq!(check_age(Profile::V6_1, &lg, 7, 60, false), Err(Errno::ERANGE));
    assert_eq!(check_age(Profile::V6_1, &lg, 7, 60, true), Ok(AgeCheck::Run));
    // can_swap = 0 looks at file, which has room
    assert_eq!(check_age(Profile::V6_1, &lg, 7, 0, false), Ok(AgeCheck::Run));
    // mainline: only max_gen > max_seq is refused
    assert_eq!(check_age(Profile::V6_17, &lg, 6, 60, false), Ok(AgeCheck::Run));
    assert_eq!(check_age(Profile::V6_17, &lg, 8, 60, false), Err(Errno::EINVAL));

    assert_eq!(check_evict(&lg, 5), Ok(()));
    assert_eq!(check_evict(&lg, 6), Err(Errno::EINVAL));
    // unsigned long arithmetic: min_gen + 2 wraps below max_seq
    assert_eq!(check_evict(&lg, u64::MAX - 1), Ok(()));

    // 6.1: anon's min_seq unless swappiness is 0
    assert!(eviction_done(Profile::V6_1, &lg, 3, 60));
    assert!(!eviction_done(Profile::V6_1, &lg, 4, 60));
    assert!(eviction_done(Profile::V6_1, &lg, 4, 0));
    // mainline: evictable_min_seq (both types at 60, file at 0, anon at 201)
    assert!(!eviction_done(Profile::V6_17, &lg, 4, 60));
    assert!(eviction_done(Profile::V6_17, &lg, 4, 0));
    assert!(!eviction_done(Profile::V6_17, &lg, 4, 201));
}

/// A command prints as a text that parses back to it under its profile. Fuzzing found 6.1's
/// "default swappiness, then `opt`" (a swappiness ≥ 2^31) printed as `-1`, which is no `%u`.
#[test]
fn commands_print_as_they_parse() {
    let c = one("- 2 0 3 4294967295 7", Profile::V6_1);
    assert_eq!(c, evict(2, 0, 3, None, 7));
    assert_eq!(c.to_string(), "- 2 0 3 4294967295 7");
    assert_eq!(one(&c.to_string(), Profile::V6_1), c);
    for (input, p) in [
        ("+ 2 0 3", Profile::MAINLINE),
        ("+ 2 0 3 max 0", Profile::MAINLINE),
        ("- 1 1 5 0x10 99", Profile::MAINLINE),
        ("- 2 0 1 2147483648", Profile::V6_1),
        ("+ 2 0 3 100 5", Profile::V6_1),
    ] {
        let c = one(input, p);
        assert_eq!(one(&c.to_string(), p), c, "{input:?} prints as {c}");
    }
}

/// Fuzzing found a ` node` line followed by no generation line read as a lruvec with no
/// generations (whose format no line tells): the kernel prints at least two generations under
/// every node, so such a text is refused, naming the node's line.
#[test]
fn a_node_without_generations_is_refused() {
    for (text, line) in [
        ("memcg 00000 14 \n node  00\n", 3),
        (
            "memcg     1 /\n node     0\nmemcg     2 /a\n node     0\n  0 100 1 2\n",
            3,
        ),
        ("memcg     1 /\n node     0\n node     1\n  0 100 1 2\n", 3),
    ] {
        let e = lrugen::reclaim::mglru::debugfs::parse(text).unwrap_err();
        assert_eq!(e.line, line, "{e}");
        assert!(
            e.to_string()
                .contains("a generation line after the ` node` line of line 2"),
            "{e}"
        );
    }
}

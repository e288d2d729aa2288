//! Golden hit ratios of `shared/traces/README.md` (exact reference values,
//! compared in percent rounded to 2 decimals). Each trace is loaded once per
//! test binary; a missing trace skips with a note (fails under `CI=true`).

use std::sync::OnceLock;

use lrugen_cache::{lru, opt, opt_btree, CacheResult, NextUse, Opt};
use lrugen_trace::testdata::shared_trace;
use lrugen_trace::{load_dense, DenseTrace};

fn load(name: &str) -> Option<DenseTrace> {
    let path = shared_trace(name)?;
    Some(load_dense(&path, None).unwrap_or_else(|e| panic!("{e}")))
}

fn oltp() -> Option<&'static DenseTrace> {
    static T: OnceLock<Option<DenseTrace>> = OnceLock::new();
    T.get_or_init(|| load("arc/OLTP.lis.zst")).as_ref()
}

fn p3() -> Option<&'static DenseTrace> {
    static T: OnceLock<Option<DenseTrace>> = OnceLock::new();
    T.get_or_init(|| load("arc/P3.lis.zst")).as_ref()
}

fn p12() -> Option<&'static DenseTrace> {
    static T: OnceLock<Option<DenseTrace>> = OnceLock::new();
    T.get_or_init(|| load("arc/P12.lis.zst")).as_ref()
}

fn pct(r: CacheResult) -> String {
    format!("{:.2}", r.hit_ratio() * 100.0)
}

fn check(
    trace: Option<&DenseTrace>,
    name: &str,
    policy: &str,
    sim: fn(&DenseTrace, usize) -> CacheResult,
    rows: &[(usize, &str)],
) {
    let Some(t) = trace else { return };
    for &(c, want) in rows {
        let r = sim(t, c);
        assert_eq!(r.requests, t.nr_requests);
        assert_eq!(r.hits + r.misses, r.requests);
        assert_eq!(pct(r), want, "{policy} on {name} at C={c}: {r}");
    }
}

#[test]
fn oltp_lru() {
    let rows = [(1000, "32.83"), (2000, "42.47"), (5000, "53.65"), (10000, "60.70")];
    check(oltp(), "OLTP", "LRU", lru, &rows);
}

#[test]
fn oltp_opt() {
    let rows = [(1000, "53.61"), (2000, "60.40"), (5000, "68.27"), (10000, "73.02")];
    check(oltp(), "OLTP", "OPT", opt, &rows);
}

#[test]
fn oltp_opt_btree_agrees() {
    let Some(t) = oltp() else { return };
    let next = NextUse::of(t);
    for c in [1000, 10000] {
        let heap = Opt::new(&t.pages, &next, c).run();
        assert_eq!(heap, opt_btree(t, c), "C={c}");
    }
}

#[test]
fn p3_lru() {
    let rows = [(16384, "2.07"), (65536, "12.72"), (262144, "65.12")];
    check(p3(), "P3", "LRU", lru, &rows);
}

#[test]
fn p3_opt() {
    let rows = [(16384, "18.92"), (65536, "51.03"), (262144, "77.80")];
    check(p3(), "P3", "OPT", opt, &rows);
}

#[test]
fn p12_lru() {
    let rows = [(1000, "4.06"), (10000, "6.49")];
    check(p12(), "P12", "LRU", lru, &rows);
}

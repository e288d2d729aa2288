//! Golden miss counts of the cache zoo: each policy on the shared traces equal to libCacheSim
//! 0.3.5's with its default parameters, to the request. A `harness = false` binary
//! (`testdata::run_tests`): a test whose trace is absent shows as `ignored`, with where to get it,
//! and fails under `CI=true`.
//!
//! The constants were produced with the PyPI package `libcachesim==0.3.5` (the C library's trace
//! loop through its Python bindings; ARC traces converted to oracleGeneral one record per block,
//! the CloudPhysics sample read as shipped, `ignore_obj_size`):
//!
//! ```text
//! python3 -m venv /work/venv && /work/venv/bin/pip install libcachesim==0.3.5
//! /work/venv/bin/python scripts/compare-libcachesim.py --golden --policy fifo,clock,sieve,s3fifo,arc,2q,lirs,wtinylfu,clockpro
//! ```
//!
//! W-TinyLFU's sketch hashes ids, so it runs with each page's original key (`zoo_keyed`), the
//! object id libCacheSim hashes.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use std::collections::HashSet;

use lrugen_cache::{CachePolicy, ZooCache, ZooPolicy};
use lrugen_trace::testdata::{run_tests, TraceTest};
use lrugen_trace::{load_dense, open, DenseTrace};

/// The trace at `path`, loaded once (the tests run in parallel; each trace is shared).
fn load(path: &Path) -> &'static DenseTrace {
    static T: OnceLock<Mutex<Vec<(PathBuf, &'static DenseTrace)>>> = OnceLock::new();
    let mut cache = T
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some((_, t)) = cache.iter().find(|(p, _)| p == path) {
        return t;
    }
    let t: &'static DenseTrace = Box::leak(Box::new(load_dense(path, None).unwrap_or_else(|e| panic!("{e}"))));
    cache.push((path.to_path_buf(), t));
    t
}

/// The original key of each dense page id of the trace at `path` (ids are given in order of
/// first appearance), loaded once.
fn keys(path: &Path) -> &'static [u64] {
    type Keys = Vec<(PathBuf, &'static [u64])>;
    static K: OnceLock<Mutex<Keys>> = OnceLock::new();
    let mut cache = K
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some((_, k)) = cache.iter().find(|(p, _)| p == path) {
        return k;
    }
    let mut seen = HashSet::new();
    let mut keys = Vec::new();
    for key in open(path, None).unwrap_or_else(|e| panic!("{e}")) {
        let key = key.unwrap_or_else(|e| panic!("{e}"));
        if seen.insert(key) {
            keys.push(key);
        }
    }
    let k: &'static [u64] = Box::leak(keys.into_boxed_slice());
    cache.push((path.to_path_buf(), k));
    k
}

/// Runs `policy` at each capacity of `rows` and compares the misses with libCacheSim's.
fn check(path: &Path, policy: &str, requests: u64, rows: &[(usize, u64)]) {
    check_with(path, policy, requests, rows, false)
}

/// As [`check`], for a policy whose decisions hash ids: it is given the trace's original keys,
/// the ids libCacheSim hashes.
fn check_keyed(path: &Path, policy: &str, requests: u64, rows: &[(usize, u64)]) {
    check_with(path, policy, requests, rows, true)
}

fn check_with(path: &Path, policy: &str, requests: u64, rows: &[(usize, u64)], keyed: bool) {
    let policy: ZooPolicy = policy.parse().unwrap();
    let t = load(path);
    assert_eq!(t.nr_requests, requests, "{}: requests", path.display());
    let keys = keyed.then(|| keys(path));
    if let Some(k) = keys {
        assert_eq!(k.len(), t.nr_unique as usize, "{}: distinct keys", path.display());
    }
    let mut bad = Vec::new();
    for &(c, want) in rows {
        let mut cache = match keys {
            Some(k) => policy.build_keyed(c, k),
            None => policy.build(c, t.nr_unique),
        };
        let r = cache.run(&t.pages);
        assert_eq!(r.hits + r.misses, r.requests);
        if let ZooCache::ClockPro(cp) = &cache {
            // the paths where libCacheSim's C code is undefined are not taken
            assert_eq!(cp.undefined_paths(), 0, "{policy} C={c}: undefined paths taken");
        }
        if r.misses != want {
            bad.push(format!(
                "C={c}: lrugen {} misses ({:.4}), libCacheSim {want} ({:.4}), diff {:+}",
                r.misses,
                r.miss_ratio(),
                want as f64 / r.requests as f64,
                r.misses as i64 - want as i64
            ));
        }
    }
    assert!(bad.is_empty(), "{policy} on {}:\n{}", path.display(), bad.join("\n"));
}

const OLTP: &str = "arc/OLTP.lis.zst";
const P3: &str = "arc/P3.lis.zst";
const P12: &str = "arc/P12.lis.zst";
const CLOUDPHYSICS: &str = "cloudphysics/cloudPhysicsIO.oracleGeneral.bin";

fn main() -> std::process::ExitCode {
    let t = |name, traces, run| TraceTest { name, traces, run };
    run_tests(vec![
        t("fifo_oltp", &[OLTP], |p| {
            check(
                &p[0],
                "fifo",
                914145,
                &[(1000, 653340), (2000, 571918), (5000, 459965), (10000, 390442)],
            )
        }),
        t("fifo_p3", &[P3], |p| {
            check(&p[0], "fifo", 3912296, &[(16384, 3830952), (65536, 3374532)])
        }),
        t("fifo_p12", &[P12], |p| {
            check(&p[0], "fifo", 13208930, &[(1000, 12670634), (10000, 12355009)])
        }),
        t("fifo_cloudphysics", &[CLOUDPHYSICS], |p| {
            check(&p[0], "fifo", 113872, &[(1000, 95520), (5000, 91581)])
        }),
        t("clock_oltp", &[OLTP], |p| {
            check(
                &p[0],
                "clock",
                914145,
                &[(1000, 609973), (2000, 520807), (5000, 422067), (10000, 356711)],
            )
        }),
        t("clock_p3", &[P3], |p| {
            check(&p[0], "clock", 3912296, &[(16384, 3830434), (65536, 3395833)])
        }),
        t("clock_p12", &[P12], |p| {
            check(&p[0], "clock", 13208930, &[(1000, 12678661), (10000, 12354740)])
        }),
        t("clock_cloudphysics", &[CLOUDPHYSICS], |p| {
            check(&p[0], "clock", 113872, &[(1000, 94727), (5000, 91458)])
        }),
        t("sieve_oltp", &[OLTP], |p| {
            check(
                &p[0],
                "sieve",
                914145,
                &[(1000, 616519), (2000, 537648), (5000, 439840), (10000, 361388)],
            )
        }),
        t("sieve_p3", &[P3], |p| {
            check(&p[0], "sieve", 3912296, &[(16384, 3719868), (65536, 3089935)])
        }),
        t("sieve_p12", &[P12], |p| {
            check(&p[0], "sieve", 13208930, &[(1000, 13115928), (10000, 12422734)])
        }),
        t("sieve_cloudphysics", &[CLOUDPHYSICS], |p| {
            check(&p[0], "sieve", 113872, &[(1000, 93975), (5000, 89798)])
        }),
        t("s3fifo_oltp", &[OLTP], |p| {
            check(
                &p[0],
                "s3fifo",
                914145,
                &[(1000, 540669), (2000, 484187), (5000, 404521), (10000, 341108)],
            )
        }),
        t("s3fifo_p3", &[P3], |p| {
            check(&p[0], "s3fifo", 3912296, &[(16384, 3586443), (65536, 2735146)])
        }),
        t("s3fifo_p12", &[P12], |p| {
            check(&p[0], "s3fifo", 13208930, &[(1000, 12995264), (10000, 12067770)])
        }),
        t("s3fifo_cloudphysics", &[CLOUDPHYSICS], |p| {
            check(&p[0], "s3fifo", 113872, &[(1000, 94005), (5000, 85689)])
        }),
        t("arc_oltp", &[OLTP], |p| {
            check(
                &p[0],
                "arc",
                914145,
                &[(1000, 558130), (2000, 492945), (5000, 409065), (10000, 348536)],
            )
        }),
        t("arc_p3", &[P3], |p| {
            check(&p[0], "arc", 3912296, &[(16384, 3638316), (65536, 2860334)])
        }),
        t("arc_p12", &[P12], |p| {
            check(&p[0], "arc", 13208930, &[(1000, 12660864), (10000, 12178027)])
        }),
        t("arc_cloudphysics", &[CLOUDPHYSICS], |p| {
            check(&p[0], "arc", 113872, &[(1000, 94027), (5000, 87770)])
        }),
        t("2q_oltp", &[OLTP], |p| {
            check(
                &p[0],
                "2q",
                914145,
                &[(1000, 543682), (2000, 488973), (5000, 404707), (10000, 342030)],
            )
        }),
        t("2q_p3", &[P3], |p| {
            check(&p[0], "2q", 3912296, &[(16384, 3648355), (65536, 2882458)])
        }),
        t("2q_p12", &[P12], |p| {
            check(&p[0], "2q", 13208930, &[(1000, 12807707), (10000, 12102168)])
        }),
        t("2q_cloudphysics", &[CLOUDPHYSICS], |p| {
            check(&p[0], "2q", 113872, &[(1000, 94117), (5000, 87879)])
        }),
        t("lirs_oltp", &[OLTP], |p| {
            check(
                &p[0],
                "lirs",
                914145,
                &[(1000, 598066), (2000, 526116), (5000, 433091), (10000, 362670)],
            )
        }),
        t("lirs_p3", &[P3], |p| {
            check(&p[0], "lirs", 3912296, &[(16384, 3581448), (65536, 2641689)])
        }),
        t("lirs_p12", &[P12], |p| {
            check(&p[0], "lirs", 13208930, &[(1000, 13157247), (10000, 12591687)])
        }),
        t("lirs_cloudphysics", &[CLOUDPHYSICS], |p| {
            check(&p[0], "lirs", 113872, &[(1000, 94304), (5000, 85289)])
        }),
        t("wtinylfu_oltp", &[OLTP], |p| {
            check_keyed(
                &p[0],
                "wtinylfu",
                914145,
                &[(1000, 622889), (2000, 570380), (5000, 480092), (10000, 402438)],
            )
        }),
        t("wtinylfu_p3", &[P3], |p| {
            check_keyed(&p[0], "wtinylfu", 3912296, &[(16384, 3554512), (65536, 2837950)])
        }),
        t("wtinylfu_p12", &[P12], |p| {
            check_keyed(&p[0], "wtinylfu", 13208930, &[(1000, 13161688), (10000, 12306945)])
        }),
        t("wtinylfu_cloudphysics", &[CLOUDPHYSICS], |p| {
            check_keyed(&p[0], "wtinylfu", 113872, &[(1000, 94911), (5000, 88109)])
        }),
        t("clockpro_oltp", &[OLTP], |p| {
            check(
                &p[0],
                "clockpro",
                914145,
                &[(1000, 815001), (2000, 785357), (5000, 739165), (10000, 702801)],
            )
        }),
        t("clockpro_p3", &[P3], |p| {
            check(&p[0], "clockpro", 3912296, &[(16384, 3795479), (65536, 3488470)])
        }),
        t("clockpro_p12", &[P12], |p| {
            check(&p[0], "clockpro", 13208930, &[(1000, 13193414), (10000, 13149036)])
        }),
        t("clockpro_cloudphysics", &[CLOUDPHYSICS], |p| {
            check(&p[0], "clockpro", 113872, &[(1000, 100403), (5000, 98742)])
        }),
    ])
}

// SPDX-License-Identifier: GPL-2.0-only
//! A cache_ext-shaped policy written here, outside the crate, against the public
//! `reclaim::ext` API only, run under the kernel model on the GET-SCAN preset
//! (`examples/fg-leveldb-get-scan.toml`, scaled down); the shipped policies by name; a bad
//! candidate skipped, not evicted.

use lrugen::experiment::Experiment;
use lrugen::kernel::Kernel;
use lrugen::mm::folio::FolioId;
use lrugen::mm::memcg::MemcgId;
use lrugen::mm::vmstat::Stat;
use lrugen::reclaim::ext::policies::{GetScan, Shipped};
use lrugen::reclaim::ext::{CacheExt, CacheExtCtx, CacheExtOps, EvictionCtx, IterAction, ListId};
use lrugen::sim::{self, PolicyKind, RunConfig, RunResult};
use lrugen::workload::WorkloadSpec;
use std::path::Path;

/// The GET-SCAN preset, scaled down by `scale` (its accesses), one repetition, classic variant.
fn preset(scale: u64) -> RunConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fg-leveldb-get-scan.toml");
    let e = Experiment::from_file(&path).unwrap();
    let v = e.variants.iter().position(|v| v.policy == PolicyKind::Classic).unwrap();
    let cell = e.cells().into_iter().find(|c| c.variant == v).unwrap();
    let mut cfg = e.run_config(&cell, None);
    if let WorkloadSpec::Mix { parts } = &mut cfg.workload {
        for p in parts {
            if let WorkloadSpec::Fio { accesses, .. } = &mut p.workload {
                *accesses /= scale;
            }
        }
    }
    let mut engine = cfg.engine.clone().unwrap_or_default();
    engine.per_job = true;
    cfg.engine = Some(engine);
    cfg
}

fn run<P: CacheExtOps>(cfg: &RunConfig, make: impl FnOnce(&sim::PolicySetup) -> P) -> (RunResult, Kernel<CacheExt<P>>) {
    sim::run_with_policy(cfg, None, &mut |_, _| {}, |m, setup| {
        let ops = make(setup);
        CacheExt::new(m, setup.memcg, cfg.mglru.profile, ops)
    })
    .unwrap()
}

/// The GET-SCAN idea in its simplest form, written against the public trait: folios a scanning
/// task brings in go on a FIFO of their own, evicted first; the rest on an LRU list (an access
/// moves a folio to the tail; eviction takes from the head).
struct ScanFirst {
    scan_tasks: Vec<u32>,
    general: ListId,
    scans: ListId,
}

impl CacheExtOps for ScanFirst {
    fn name(&self) -> &str {
        "scan_first"
    }
    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String> {
        self.general = ctx.new_list(memcg);
        self.scans = ctx.new_list(memcg);
        Ok(())
    }
    fn folio_added(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        let scan = ctx.current_task().is_some_and(|t| self.scan_tasks.contains(&t));
        let list = if scan { self.scans } else { self.general };
        ctx.list_add_tail(list, folio).unwrap();
    }
    fn folio_accessed(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        if ctx.lists().list_of(folio) == Some(self.general) {
            ctx.list_move(self.general, folio, true).unwrap();
        }
    }
    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, ectx: &mut EvictionCtx, memcg: MemcgId) {
        for list in [self.scans, self.general] {
            let want = ectx.request_nr_folios_to_evict;
            ctx.list_iterate(
                memcg,
                list,
                |_, f| {
                    if !f.test_lru() {
                        IterAction::Continue
                    } else {
                        IterAction::Evict
                    }
                },
                ectx,
            )
            .unwrap();
            if ectx.nr_folios_to_evict >= want {
                return;
            }
        }
    }
}

/// (GET reads, GET hits, SCAN reads, SCAN hits): the preset's 4 GET jobs come first, then its
/// 2 SCAN jobs.
fn get_scan_split(r: &RunResult) -> (u64, u64, u64, u64) {
    let e = r.engine.as_ref().unwrap();
    assert_eq!(e.jobs.len(), 6, "the preset has 4 GET jobs and 2 SCAN jobs");
    let (mut gi, mut gh, mut si, mut sh) = (0, 0, 0, 0);
    for (j, s) in e.jobs.iter().enumerate() {
        if j < 4 {
            gi += s.read.ios;
            gh += s.read.hits;
        } else {
            si += s.read.ios;
            sh += s.read.hits;
        }
    }
    (gi, gh, si, sh)
}

fn scan_tasks(s: &sim::PolicySetup) -> Vec<u32> {
    assert_eq!(s.part_tasks.len(), 2, "a GET part and a SCAN part");
    s.part_tasks[1].clone()
}

/// What the kernel side counted agrees with the machine's counters and the run's.
fn consistent<P: CacheExtOps>(r: &RunResult, k: &Kernel<CacheExt<P>>) {
    k.check().unwrap();
    let st = k.p.stats();
    let v = r.vmstat.as_ref().unwrap();
    assert_eq!(st.invalid, 0, "{st:?}");
    assert_eq!(
        v.get(Stat::PgstealFile) as u64,
        st.reclaimed + st.fallback_reclaimed,
        "every file page reclaimed was the policy's choice or the counted fallback: {st:?}"
    );
    assert_eq!(
        v.get(Stat::PgscanFile) as u64,
        st.isolated + st.fallback_scanned,
        "{st:?}"
    );
    assert_eq!(st.evicted, st.reclaimed + st.fallback_reclaimed, "{st:?}");
    assert_eq!(st.added, v.get(Stat::NrFilePages) as u64 + st.evicted, "{st:?}");
    let e = r.engine.as_ref().unwrap();
    assert_eq!((r.hits, r.misses), (e.hits, e.misses));
    let (gi, gh, si, sh) = get_scan_split(r);
    assert_eq!(gi + si, r.accesses);
    assert_eq!(gh + sh, r.hits);
    // every miss brought a folio into the page cache of the memcg (no read-ahead: random reads)
    assert_eq!(r.misses, st.added, "{st:?}");
}

#[test]
fn own_policy_runs_on_the_get_scan_preset() {
    let cfg = preset(1);
    let (r, k) = run(&cfg, |s| ScanFirst {
        scan_tasks: scan_tasks(s),
        general: 0,
        scans: 0,
    });
    assert_eq!(r.policy, "cache_ext:scan_first");
    assert!(r.error.is_none(), "{:?}", r.error);
    consistent(&r, &k);
    let st = k.p.stats();
    assert!(st.evicted > 100_000, "the memcg is under pressure: {st:?}");
    assert_eq!(st.fallback_scanned, 0, "the policy always had candidates: {st:?}");
    // the GET-SCAN idea: scans evicted first keep the GET pages
    let mut c = cfg.clone();
    c.policy = PolicyKind::Classic;
    let classic = sim::run(&c, None, &mut |_, _| {}).unwrap();
    c.policy = PolicyKind::Mglru;
    let mglru = sim::run(&c, None, &mut |_, _| {}).unwrap();
    let (mru, _) = run(&cfg, |_| Shipped::Mru.build(&Default::default()));
    let (fifo, _) = run(&cfg, |_| Shipped::Fifo.build(&Default::default()));
    let get_hits = |r: &RunResult| get_scan_split(r).1;
    let scan_hits = |r: &RunResult| get_scan_split(r).3;
    for other in [&classic, &mglru, &mru, &fifo] {
        assert!(
            get_hits(&r) > get_hits(other),
            "GET hits: scan_first {} vs {} {}",
            get_hits(&r),
            other.policy,
            get_hits(other)
        );
        assert!(scan_hits(&r) < scan_hits(other), "SCAN pages kept by scan_first");
    }
    // deterministic: the same seed gives the same run
    let (again, _) = run(&cfg, |s| ScanFirst {
        scan_tasks: scan_tasks(s),
        general: 0,
        scans: 0,
    });
    assert_eq!((again.hits, again.misses, again.vmstat), (r.hits, r.misses, r.vmstat));
}

#[test]
fn shipped_policies_run_by_name_on_the_get_scan_preset() {
    let mut cfg = preset(4);
    for p in Shipped::ALL {
        cfg.policy = format!("cache_ext:{}", p.name()).parse().unwrap();
        let r = sim::run(&cfg, None, &mut |_, _| {}).unwrap();
        assert_eq!(r.policy, p.full_name());
        assert!(r.error.is_none(), "{}: {:?}", p.name(), r.error);
        let (r2, k) = run(&cfg, |s| {
            p.build(&lrugen::reclaim::ext::policies::PolicyEnv {
                scan_tasks: scan_tasks(s),
            })
        });
        assert_eq!(
            (r.hits, r.misses),
            (r2.hits, r2.misses),
            "{}: by name as built",
            p.name()
        );
        consistent(&r2, &k);
    }
    // the invariant checker after every reclaim pass (the registry against the page cache
    // too), on a shorter run in a smaller memcg
    let mut cfg = preset(32);
    cfg.memcg.max = Some(2048);
    cfg.check = true;
    for p in Shipped::ALL {
        cfg.policy = PolicyKind::CacheExt(p);
        sim::run(&cfg, None, &mut |_, _| {}).unwrap();
    }
    let e = "cache_ext:nope".parse::<PolicyKind>().unwrap_err();
    assert!(e.contains("cache_ext:get_scan") && e.contains("cache_ext:lhd"), "{e}");
}

#[test]
fn get_scan_threshold_scaled_to_the_memcg_protects_get_pages() {
    // cache_ext's GET-SCAN samples the scan list while it holds 5,000 pages or more: sized for
    // its multi-GiB cgroups, that is 30% of the preset's 64 MiB memcg, where the GET pages lose
    // to classic; at 1% (160 pages) they win over classic and MGLRU (docs/cache-ext.md)
    let cfg = preset(1);
    let mut c = cfg.clone();
    c.policy = PolicyKind::Classic;
    let classic = get_scan_split(&sim::run(&c, None, &mut |_, _| {}).unwrap()).1;
    c.policy = PolicyKind::Mglru;
    let mglru = get_scan_split(&sim::run(&c, None, &mut |_, _| {}).unwrap()).1;
    let (r, k) = run(&cfg, |s| GetScan::with_min_scan_pages(scan_tasks(s), 160));
    consistent(&r, &k);
    let scaled = get_scan_split(&r);
    let (r, k) = run(&cfg, |s| GetScan::new(scan_tasks(s)));
    consistent(&r, &k);
    let as_shipped = get_scan_split(&r);
    assert!(
        scaled.1 > classic && scaled.1 > mglru,
        "{scaled:?} classic {classic} mglru {mglru}"
    );
    assert!(
        scaled.1 > as_shipped.1 && scaled.3 < as_shipped.3,
        "{scaled:?} {as_shipped:?}"
    );
}

/// Proposes junk around one good candidate: no folio, an id past the machine, the good one
/// twice, a folio of no list (the first one it was told of, once gone).
struct Junk {
    list: ListId,
    gone: Option<FolioId>,
}

impl CacheExtOps for Junk {
    fn name(&self) -> &str {
        "junk"
    }
    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String> {
        self.list = ctx.new_list(memcg);
        Ok(())
    }
    fn folio_added(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        ctx.list_add_tail(self.list, folio).unwrap();
    }
    fn folio_evicted(&mut self, _ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        self.gone.get_or_insert(folio);
    }
    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, ectx: &mut EvictionCtx, _memcg: MemcgId) {
        let good = ctx.lists().first(self.list);
        ectx.push(lrugen::mm::folio::NIL, 0);
        ectx.push(u32::MAX - 7, 0);
        ectx.push(good, 0);
        ectx.push(good, 0);
        if let Some(g) = self.gone {
            // gone from the page cache, or back in it as another page: not on our list then
            if ctx.lists().list_of(g).is_none() {
                ectx.push(g, 0);
            }
        }
    }
}

#[test]
fn bad_candidates_are_skipped_not_evicted() {
    let mut cfg = preset(8);
    cfg.policy = PolicyKind::Classic;
    let (r, k) = run(&cfg, |_| Junk { list: 0, gone: None });
    k.check().unwrap();
    let st = k.p.stats();
    let v = r.vmstat.as_ref().unwrap();
    assert!(st.evict_calls > 0 && st.reclaimed > 0, "{st:?}");
    // per call: NIL, the id past the machine and the duplicate are refused; the good one taken
    assert!(st.invalid >= 3 * st.evict_calls, "{st:?}");
    assert_eq!(st.proposed, st.invalid + st.isolated, "{st:?}");
    assert!(
        st.isolated <= st.evict_calls,
        "at most the one good candidate per call: {st:?}"
    );
    assert_eq!(v.get(Stat::PgstealFile) as u64, st.reclaimed + st.fallback_reclaimed);
    assert_eq!(v.get(Stat::PgscanFile) as u64, st.isolated + st.fallback_scanned);
}

#[test]
fn the_fallback_reclaims_through_the_policy_hooks() {
    // GET-SCAN told of no scanning task proposes nothing: every file page reclaimed is the
    // kernel's own choice, and still goes through folio_evicted (the checker holds the registry
    // to the page cache after every reclaim pass)
    let mut cfg = preset(16);
    cfg.memcg.max = Some(4096);
    cfg.check = true;
    let (r, k) = run(&cfg, |_| GetScan::new(Vec::new()));
    let st = k.p.stats();
    assert_eq!(st.proposed, 0, "{st:?}");
    assert!(st.fallback_reclaimed > 1_000, "{st:?}");
    consistent(&r, &k);
}

// SPDX-License-Identifier: GPL-2.0-only
//! Writeback of dirty file pages by the flusher (mm/page-writeback.c, fs/fs-writeback.c of 6.1):
//! the dirty limits of the global and the memcg domain, background writeback past the free-run
//! ceiling down to the background threshold, and the periodic writeback of expired inodes.

use lrugen::kernel::Kernel;
use lrugen::mm::memcg::{MemcgId, ROOT_MEMCG};
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::{Mglru, MglruConfig};
use lrugen::reclaim::writeback::{self, Domain, DIRTY_EXPIRE_NS, DIRTY_WRITEBACK_INTERVAL_NS};
use lrugen::reclaim::Policy;
use lrugen::workload::Op;

#[test]
fn domain_limits_are_the_kernels_per_page_size_ratios() {
    // 20% and 10% as 819/4096 and 409/4096 of the dirtyable pages, rounded down
    let d = Domain::new(3_000, 0);
    assert_eq!((d.thresh, d.bg_thresh), (3_000 * 819 / 4096, 3_000 * 409 / 4096));
    assert_eq!((d.thresh, d.bg_thresh), (599, 299));
    assert_eq!(d.freerun_ceiling(), 449);
    let tiny = Domain::new(4, 0);
    assert_eq!((tiny.thresh, tiny.bg_thresh), (0, 0));
}

fn kernel<P: Policy>(make: impl FnOnce(&Machine) -> P, memcg_max: Option<u64>) -> (Kernel<P>, MemcgId, u32, u32) {
    let mut cfg = MachineConfig::simple(65_536, 0);
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    let p = make(&m);
    let mut k = Kernel::new(m, p);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    if let Some(max) = memcg_max {
        k.m.memcgs[t].max = max;
    }
    let task = k.create_mm(t);
    let file = k.m.create_file("out", 8_192, Advice::Normal);
    (k, t, task, file)
}

fn dirty(k: &Kernel<impl Policy>, memcg: MemcgId) -> u64 {
    k.m.lruvec_state(memcg, 0, Stat::NrDirty) as u64
}

fn memcg_limits<P: Policy>(k: &Kernel<P>, memcg: MemcgId) -> Domain {
    let g = writeback::global_domain(&k.m);
    writeback::memcg_domain(&k.m, memcg, &g).expect("a memcg domain")
}

/// Writing a file sequentially in a 12 MiB memcg: dirty pages pile up to the memcg's free-run
/// ceiling, then the flusher writes them down to its background threshold, again and again.
fn memcg_background<P: Policy>(make: impl FnOnce(&Machine) -> P) {
    let (mut k, t, task, file) = kernel(make, Some(3_072));
    let mut peak = 0;
    let mut writebacks = 0;
    for index in 0..2_048 {
        let before = k.m.vmstat().get(Stat::NrWritten);
        let lim = memcg_limits(&k, t);
        k.step(Op::Write { task, file, index }).unwrap();
        let d = dirty(&k, t);
        peak = peak.max(d);
        if k.m.vmstat().get(Stat::NrWritten) > before {
            writebacks += 1;
            // the write that took the memcg past its ceiling started background writeback,
            // which stopped once under the background threshold
            assert!(lim.dirty + 1 > lim.freerun_ceiling(), "{lim:?}");
            let after = memcg_limits(&k, t);
            assert!(after.dirty <= after.bg_thresh, "{after:?}");
        }
        assert!(
            d <= memcg_limits(&k, t).freerun_ceiling() + 1,
            "page {index}: {d} dirty"
        );
    }
    k.check().unwrap();
    let lim = memcg_limits(&k, t);
    assert!(lim.thresh > 0 && peak > lim.bg_thresh, "{peak} {lim:?}");
    assert!(writebacks >= 2, "{writebacks} writeback passes");
    let v = k.m.vmstat();
    assert_eq!(v.get(Stat::NrDirtied), 2_048);
    let written = v.get(Stat::NrWritten);
    assert_eq!(
        written + dirty(&k, t) as i64,
        2_048,
        "every dirtied page is written or still dirty"
    );
    assert_eq!(v.get(Stat::Pgpgout), 4 * written, "pgpgout counts KiB");
    assert_eq!(k.m.files[file as usize].nr_dirty, dirty(&k, t));
}

#[test]
fn a_memcg_is_written_back_past_its_free_run_ceiling() {
    memcg_background(Classic::new);
    memcg_background(|m| Mglru::new(m, MglruConfig::default()));
}

#[test]
fn the_global_domain_is_written_back_past_its_background_threshold() {
    // no memcg limit: only the global domain counts, and its background threshold is the trigger
    let (mut k, t, task, file) = kernel(Classic::new, None);
    let g0 = writeback::global_domain(&k.m);
    assert!(g0.bg_thresh < 8_192, "{g0:?}");
    for index in 0..8_192 {
        k.step(Op::Write { task, file, index }).unwrap();
        let g = writeback::global_domain(&k.m);
        assert!(g.dirty <= g.bg_thresh + 1, "page {index}: {g:?}");
    }
    assert!(k.m.vmstat().get(Stat::NrWritten) > 0);
    assert_eq!(dirty(&k, t), writeback::global_domain(&k.m).dirty);
}

#[test]
fn expired_inodes_are_written_by_the_periodic_wakeup() {
    let (mut k, t, task, file) = kernel(Classic::new, Some(3_072));
    let other = k.m.create_file("later", 64, Advice::Normal);
    for index in 0..10 {
        k.step(Op::Write { task, file, index }).unwrap();
    }
    assert_eq!(dirty(&k, t), 10, "below every threshold: nothing is written");
    let t0 = k.m.now_ns;
    assert!(k.m.wb_wakeup > t0 && k.m.wb_wakeup <= t0 + DIRTY_WRITEBACK_INTERVAL_NS);
    // 20 s later another inode is dirtied; at 31 s the first one has expired, the second not
    k.m.now_ns = t0 + 20_000_000_000;
    k.step(Op::Write {
        task,
        file: other,
        index: 0,
    })
    .unwrap();
    k.m.now_ns = t0 + DIRTY_EXPIRE_NS + 1_000_000_000;
    k.step(Op::Read {
        task,
        file: other,
        index: 1,
    })
    .unwrap();
    assert_eq!(k.m.files[file as usize].nr_dirty, 0, "expired: written");
    assert_eq!(k.m.files[other as usize].nr_dirty, 1, "dirtied 11 s ago: kept");
    assert_eq!(k.m.vmstat().get(Stat::NrWritten), 10);
    assert!(
        k.m.wb_wakeup < u64::MAX,
        "an inode is still dirty: the flusher wakes again"
    );
    k.m.now_ns = t0 + 60_000_000_000;
    k.step(Op::Read { task, file, index: 0 }).unwrap();
    assert_eq!(dirty(&k, t), 0);
    assert_eq!(k.m.wb_wakeup, u64::MAX, "no dirty inode: no periodic wakeup");
    k.check().unwrap();
}

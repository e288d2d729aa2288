// SPDX-License-Identifier: GPL-2.0-only
//! The multi-gen LRU, folio by folio, in both kernel profiles.
//!
//! Each test builds a tiny machine, drives reads, loads and stores through `Kernel`, calls aging
//! and eviction directly where the kernel would, and checks what the kernel does: the folio's
//! generation (its gen counter, read back as a seq of `[min_seq, max_seq]`), its flags
//! (`PG_referenced`, `PG_workingset`, `PG_active`, the refs counter), the list it is physically on
//! (found by walking the lists), and the counters (`/proc/vmstat`, `lruvec_state`, the PID
//! statistics of `lru_gen_folio`). Every test is a function of the [`Profile`] and runs for both;
//! where the profiles differ the expectations are spelled out per profile, with their source:
//!
//! * `6.1`: Debian 6.1.192, `mm/vmscan.c` (lru_gen half), `mm/workingset.c`, `mm/swap.c`,
//!   `mm/rmap.c`, `include/linux/mm_inline.h`;
//! * mainline: `kernel-mglru.md` §1–§13.

use lrugen::kernel::{Access, Kernel};
use lrugen::mm::folio::{pg, FolioId, ANON, FILE};
use lrugen::mm::memcg::{MemcgId, ROOT_MEMCG};
use lrugen::mm::pagecache::{Advice, Slot};
use lrugen::mm::vm::{pte, MmStruct, PMD_YOUNG};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::classic::workingset::Shadow;
use lrugen::reclaim::mglru::aging::pmd_item;
use lrugen::reclaim::mglru::bloom::test_bloom_filter;
use lrugen::reclaim::mglru::state::mm_stat;
use lrugen::reclaim::mglru::{eviction, gen_from_seq, pid, LruGen, Mglru, MglruConfig, Profile};
use lrugen::reclaim::{Reclaimer, ScanControl, SWAP_CLUSTER_MAX};

type K = Kernel<Mglru>;

const PROFILES: [Profile; 2] = [Profile::V6_1, Profile::V6_17];

/// Run `test` for both profiles, naming the failing one.
fn both(test: impl Fn(Profile)) {
    for p in PROFILES {
        eprintln!("--- profile {}", p.name());
        test(p);
    }
}

/// A kernel on a one-node machine of `pages` pages and `swap` pages of swap, read-ahead off (every
/// read instantiates exactly the page asked for), the invariant checker on after every reclaim
/// pass, the `lru_add` batch off (`lru_cache_disable`: each new folio is on its list when the
/// operation returns); a memcg `/t` and a task charged to it. `tweak` adjusts the MGLRU
/// configuration.
fn setup(profile: Profile, pages: u64, swap: u64, tweak: impl FnOnce(&mut MglruConfig)) -> (K, MemcgId, u32) {
    let mut cfg = MachineConfig::simple(pages, swap);
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    m.lru_cache_disabled = true;
    let mut mcfg = MglruConfig {
        profile,
        ..MglruConfig::default()
    };
    tweak(&mut mcfg);
    let p = Mglru::new(&m, mcfg);
    let mut k = Kernel::new(m, p);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    let task = k.m.create_mm(t);
    (k, t, task)
}

fn lg(k: &K, memcg: MemcgId) -> &LruGen {
    k.p.lrugen(memcg, 0)
}

fn lv(k: &K, memcg: MemcgId) -> usize {
    k.p.lv(memcg, 0)
}

/// The folio caching page `index` of `file`.
#[track_caller]
fn cached(k: &K, file: u32, index: u64) -> FolioId {
    match k.m.files[file as usize].slot(index) {
        Slot::Folio(id) => id,
        s => panic!("file {file} page {index} is not cached: {s:?}"),
    }
}

/// The shadow left in page `index` of `file`.
#[track_caller]
fn shadow(k: &K, file: u32, index: u64) -> Shadow {
    match k.m.files[file as usize].slot(index) {
        Slot::Shadow(v) => Shadow::unpack(v),
        s => panic!("file {file} page {index} holds no shadow: {s:?}"),
    }
}

/// The folio mapped at `vpn` of `task`.
#[track_caller]
fn mapped(k: &K, task: u32, vpn: u32) -> FolioId {
    let e = k.m.pte(task, vpn);
    assert!(e & pte::PRESENT != 0, "vpn {vpn:#x} is not mapped ({e:#x})");
    e & pte::PFN_MASK
}

/// The seq of the generation the folio's gen counter names (unique: a type has at most
/// `MAX_NR_GENS` live seqs).
#[track_caller]
fn seq_of(k: &K, id: FolioId) -> u64 {
    let f = k.m.folios[id];
    assert!(
        f.gen_counter() != 0,
        "folio {id} is not on an MGLRU list (flags {:#x})",
        f.flags
    );
    let gen = f.gen_counter() as usize - 1;
    let g = k.p.lrugen(f.memcg, f.node());
    let seqs: Vec<u64> = (g.min_seq[f.lru_type()]..=g.max_seq)
        .filter(|&s| gen_from_seq(s) == gen)
        .collect();
    assert_eq!(seqs.len(), 1, "folio {id} in gen {gen}: seqs {seqs:?}");
    seqs[0]
}

/// The `[gen][type][zone]` list folio `id` is physically on, found by walking every list, and its
/// position (0 = head, the youngest end).
fn list_of(k: &K, id: FolioId) -> Option<((usize, usize, usize), usize)> {
    let f = k.m.folios[id];
    let g = k.p.lrugen(f.memcg, f.node());
    let mut found = None;
    for (gen, by_type) in g.folios.iter().enumerate() {
        for (t, by_zone) in by_type.iter().enumerate() {
            for (z, list) in by_zone.iter().enumerate() {
                let mut pos = 0;
                k.m.folios
                    .walk_list(list, |x| {
                        if x == id {
                            assert!(found.is_none(), "folio {id} is on two lists");
                            found = Some(((gen, t, z), pos));
                        }
                        pos += 1;
                        Ok(())
                    })
                    .unwrap();
            }
        }
    }
    found
}

/// Assert folio `id` is logically in generation `seq` (gen counter) and physically on the list of
/// that generation.
#[track_caller]
fn assert_in(k: &K, id: FolioId, seq: u64) {
    assert_eq!(seq_of(k, id), seq, "seq of folio {id}");
    let f = k.m.folios[id];
    let (list, _) = list_of(k, id).unwrap_or_else(|| panic!("folio {id} is on no generation list"));
    assert_eq!(
        list,
        (gen_from_seq(seq), f.lru_type(), f.zone()),
        "list holding folio {id}"
    );
    assert!(f.test(pg::LRU) && !f.test(pg::ACTIVE), "flags {:#x}", f.flags);
}

fn flags(k: &K, id: FolioId) -> (bool, bool, u32) {
    let f = k.m.folios[id];
    (f.test(pg::REFERENCED), f.test(pg::WORKINGSET), f.refs())
}

fn tier(k: &K, id: FolioId) -> usize {
    k.p.folio_tier(&k.m.folios[id])
}

fn vm(k: &K, s: Stat) -> i64 {
    k.m.vmstat().get(s)
}

fn lstat(k: &K, memcg: MemcgId, s: Stat) -> i64 {
    k.m.lruvec_state_local(memcg, 0, s)
}

/// Scan control of memcg limit reclaim on behalf of `memcg` (`try_to_free_mem_cgroup_pages`).
fn sc_memcg(memcg: MemcgId) -> ScanControl {
    ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Direct, Some(memcg), usize::MAX)
}

/// One `evict_folios` batch of memcg reclaim with the lruvec's own swappiness. Returns what it
/// returned and the scan control.
fn evict(k: &mut K, memcg: MemcgId) -> (u64, ScanControl) {
    let mut sc = sc_memcg(memcg);
    let sw = eviction::get_swappiness(&k.p, &k.m, memcg, 0, &sc);
    let r = eviction::evict_folios(&mut k.p, &mut k.m, memcg, 0, &mut sc, sw, u64::MAX);
    k.check().unwrap();
    (r, sc)
}

/// `try_to_inc_max_seq` from the current `max_seq` (not forced) with the lruvec's swappiness.
fn age(k: &mut K, memcg: MemcgId, force_scan: bool) -> bool {
    let sc = sc_memcg(memcg);
    let sw = eviction::get_swappiness(&k.p, &k.m, memcg, 0, &sc);
    let l = lv(k, memcg);
    let seq = k.p.lruvecs[l].max_seq;
    let r = k.p.try_to_inc_max_seq(&mut k.m, l, seq, sw, force_scan);
    k.check().unwrap();
    r
}

/// `inc_max_seq` alone (no walk), with the lruvec's swappiness.
fn inc_max_seq(k: &mut K, memcg: MemcgId) {
    let sc = sc_memcg(memcg);
    let sw = eviction::get_swappiness(&k.p, &k.m, memcg, 0, &sc);
    let l = lv(k, memcg);
    k.p.inc_max_seq(&mut k.m, l, sw);
    k.check().unwrap();
}

/// Mark `task`'s mm used since the last walk (`lru_gen_use_mm`, on a context switch into it).
fn switch_to(k: &mut K, task: u32) {
    k.m.mms[task as usize].lru_gen_bitmap = !0;
}

/// Buffered reads of the pages `seq` of `file`, in order. (`filemap_read` marks a folio accessed
/// only when the read does not continue on the folio of the previous read, so a page read twice
/// in a row counts once.)
fn reads(k: &mut K, task: u32, file: u32, seq: &[u64]) {
    for &i in seq {
        k.read_page(task, file, i).unwrap();
    }
}

// =================================================================================================
// §3.1 worked lifecycles
// =================================================================================================

/// A file page read once through `read()`.
///
/// Placement (`lru_gen_add_folio`, not in a fault, no flags): mainline → `max(max_seq − 3,
/// min_seq)` = `min_seq` (§2.3); 6.1 → `min_seq + 1` while four generations exist
/// (`min_seq + MIN_NR_GENS >= max_seq` is false). `folio_mark_accessed` sets `PG_referenced`
/// (tier 0). At eviction `sort_folio` lets tier 0 through, `folio_referenced` finds no mapping →
/// reclaimed; `lru_gen_eviction` stores `min_seq << 2 | max(refs − 1, 0)` = refs-mask 0,
/// workingset 0, and counts `evicted[hist][file][0]`.
fn file_read_once(p: Profile) {
    let (mut k, t, task) = setup(p, 1024, 0, |_| {});
    let f = k.m.create_file("f", 16, Advice::Normal);
    assert_eq!(k.read_page(task, f, 3), Ok(Access::Major));
    let id = cached(&k, f, 3);
    let g = lg(&k, t);
    assert_eq!((g.max_seq, g.min_seq), (3, [0, 0]), "lru_gen_init_lruvec");
    let want_seq = match p {
        Profile::V6_1 => 1,
        _ => 0,
    };
    assert_in(&k, id, want_seq);
    assert_eq!(flags(&k, id), (true, false, 0), "PG_referenced, refs mask 0");
    assert_eq!(tier(&k, id), 0);
    // seqs 2 and 3 are the active generations: the folio counts as inactive file
    assert_eq!(lstat(&k, t, Stat::NrInactiveFile), 1);
    assert_eq!(lstat(&k, t, Stat::NrActiveFile), 0);
    assert_eq!(lg(&k, t).gen_pages(gen_from_seq(want_seq), FILE), 1);

    // No swap: get_swappiness() = 0, file only.
    if p == Profile::V6_1 {
        // The oldest generation is empty: the first batch only advances min_seq[file] (and
        // returns 1 for it).
        let (r, sc) = evict(&mut k, t);
        assert_eq!((r, sc.nr_reclaimed), (1, 0));
        assert_eq!(lg(&k, t).min_seq[FILE], 1);
    }
    let (r, sc) = evict(&mut k, t);
    assert_eq!(sc.nr_reclaimed, 1);
    assert!(!k.m.folios[id].test(pg::ALLOCATED), "the frame was freed");
    // After isolating it, try_to_inc_min_seq drops the emptied generation(s): min_seq[file] = 2
    // = max_seq − 1, only MIN_NR_GENS left, so the batch returns 0 (aging needed).
    assert_eq!(lg(&k, t).min_seq[FILE], 2);
    assert_eq!(r, 0);
    // The shadow is made after that, with the new min_seq.
    let s = shadow(&k, f, 3);
    assert_eq!(s.eviction, 2 << 2, "token = min_seq << LRU_REFS_WIDTH | refs-mask 0");
    assert!(!s.workingset);
    assert_eq!((s.memcg, s.node), (t, 0));
    assert_eq!(lg(&k, t).evicted[0][FILE], [1, 0, 0, 0], "evicted[hist][file][tier 0]");
    assert_eq!(lstat(&k, t, Stat::NrInactiveFile), 0);
    assert_eq!(vm(&k, Stat::NrFilePages), 0);
    assert_eq!(k.m.memcg_stat(t).get(Stat::PgscanDirect), 1);
    assert_eq!(k.m.memcg_stat(t).get(Stat::PgstealDirect), 1);
    assert_eq!(vm(&k, Stat::PgscanDirect), 0, "memcg reclaim is not counted globally");
    assert_eq!((vm(&k, Stat::PgscanFile), vm(&k, Stat::PgstealFile)), (1, 1));
}

#[test]
fn lifecycle_file_read_once() {
    both(file_read_once);
}

/// A file page read three times: tier 2 in both profiles (mainline: referenced + mask 2, refs 3;
/// 6.1: referenced, workingset, mask 1, refs 2 → `order_base_2(3)`). A neighbour read twice is
/// tier 1. With a PID history in which tier 2 refaults far more than tier 0, `get_tier_idx` returns
/// 1, so `sort_folio` protects the tier-2 page: `folio_inc_gen` moves it to `min_seq + 1` with its
/// refs cleared, and `protected[hist][file]` counts it — at index `tier` in mainline, `tier − 1` in
/// 6.1, which also counts `workingset_activate_file` there. The tier-1 page is evicted.
fn file_read_three_times_protected(p: Profile) {
    let (mut k, t, task) = setup(p, 1024, 0, |c| c.stats = true);
    let f = k.m.create_file("f", 16, Advice::Normal);
    reads(&mut k, task, f, &[3, 4, 3, 4, 3]);
    let (hot, warm) = (cached(&k, f, 3), cached(&k, f, 4));
    match p {
        Profile::V6_1 => {
            assert_eq!(flags(&k, hot), (true, true, 1));
            assert_eq!(flags(&k, warm), (true, true, 0));
        }
        _ => {
            assert_eq!(flags(&k, hot), (true, false, 2));
            assert_eq!(flags(&k, warm), (true, false, 1));
        }
    }
    assert_eq!((tier(&k, hot), tier(&k, warm)), (2, 1));
    // drop the empty oldest generation first (6.1 placed both in min_seq + 1)
    let l = lv(&k, t);
    k.p.try_to_inc_min_seq(l, 0);
    let min = lg(&k, t).min_seq[FILE];
    assert_eq!(min, if p == Profile::V6_1 { 1 } else { 0 });
    assert_in(&k, hot, min);
    assert_in(&k, warm, min);

    // PID history: tier 2 refaulted 1000 of 1000, tier 0 nothing.
    k.p.lruvecs[l].avg_refaulted[FILE][2] = 1000;
    k.p.lruvecs[l].avg_total[FILE][2] = 1000;
    assert_eq!(pid::get_tier_idx(&k.p.lruvecs[l], &p.switches, k.p.nr_hist, FILE), 1);

    let (_, sc) = evict(&mut k, t);
    assert_eq!(sc.nr_reclaimed, 1);
    assert!(!k.m.folios[warm].test(pg::ALLOCATED), "tier 1 ≤ tier_idx: evicted");
    assert_eq!(seq_of(&k, hot), min + 1, "protected: min_seq + 1");
    let (list, pos) = list_of(&k, hot).unwrap();
    assert_eq!(list.0, gen_from_seq(min + 1));
    assert_eq!(pos, 0);
    let hist = (min % 4) as usize;
    match p {
        Profile::V6_1 => {
            // folio_inc_gen clears the mask, PG_referenced and PG_workingset
            assert_eq!(flags(&k, hot), (false, false, 0));
            assert_eq!(lg(&k, t).protected[hist][FILE], [0, 1, 0, 0], "protected[tier − 1]");
            assert_eq!(lstat(&k, t, Stat::WorkingsetActivateFile), 1);
        }
        _ => {
            assert_eq!(flags(&k, hot), (false, false, 0));
            assert_eq!(lg(&k, t).protected[hist][FILE], [0, 0, 1, 0], "protected[tier]");
            assert_eq!(lstat(&k, t, Stat::WorkingsetActivateFile), 0);
        }
    }
    assert_eq!(tier(&k, hot), 0, "tiers 1–2 must be re-earned");
    assert_eq!(vm(&k, Stat::Pgrefill), 0, "memcg reclaim: pgrefill only in the memcg");
    assert_eq!(k.m.memcg_stat(t).get(Stat::Pgrefill), 1, "sorted, not isolated");
    // the tier-1 page's shadow
    let s = shadow(&k, f, 4);
    let new_min = lg(&k, t).min_seq[FILE];
    match p {
        // refs = mask 0 + workingset 1 (isolation cleared PG_referenced) → token 0, bit set
        Profile::V6_1 => assert_eq!((s.eviction, s.workingset), (new_min << 2, true)),
        // refs = mask 1 + 1 → token refs − 1 = 1, bit = PG_workingset
        _ => assert_eq!((s.eviction, s.workingset), (new_min << 2 | 1, false)),
    }
    assert_eq!(lg(&k, t).evicted[(new_min % 4) as usize][FILE], [0, 1, 0, 0]);
}

#[test]
fn lifecycle_file_read_three_times_protected() {
    both(file_read_three_times_protected);
}

/// The same page read three times without a refault history: `get_tier_idx` = 3, nothing is
/// protected by tier and it is evicted; its shadow carries the refs (mainline: mask 2 =
/// refs − 1; 6.1: `max(refs − 1, 0)` = 1 with the workingset bit = `refs != 0`), counted in
/// `evicted[hist][file][2]`.
fn file_read_three_times_evicted(p: Profile) {
    let (mut k, t, task) = setup(p, 1024, 0, |_| {});
    let f = k.m.create_file("f", 16, Advice::Normal);
    reads(&mut k, task, f, &[3, 4, 3, 4, 3]);
    let l = lv(&k, t);
    k.p.try_to_inc_min_seq(l, 0);
    assert_eq!(pid::get_tier_idx(&k.p.lruvecs[l], &p.switches, k.p.nr_hist, FILE), 3);
    let (_, sc) = evict(&mut k, t);
    assert_eq!(sc.nr_reclaimed, 2);
    let min = lg(&k, t).min_seq[FILE];
    let s = shadow(&k, f, 3);
    match p {
        Profile::V6_1 => assert_eq!((s.eviction, s.workingset), (min << 2 | 1, true)),
        _ => assert_eq!((s.eviction, s.workingset), (min << 2 | 2, false)),
    }
    assert_eq!(lg(&k, t).evicted[0][FILE], [0, 1, 1, 0]);
    assert_eq!(lg(&k, t).protected[0][FILE], [0; 4]);
}

#[test]
fn lifecycle_file_read_three_times_evicted() {
    both(file_read_three_times_evicted);
}

/// A file page read five times saturates its refs.
///
/// Mainline: referenced, mask 3, then `PG_workingset` (refs 4 + workingset = 5): `sort_folio`
/// moves it to `min_seq + 1` whatever the tier index ("lazily promoted"), clears referenced and
/// the mask but keeps `PG_workingset`, and does **not** count it as protected. It stays tier 3
/// and, with `tier_idx` = 3, is evicted on its next turn with a workingset shadow.
///
/// 6.1 (`sort_folio`: `refs == BIT(LRU_REFS_WIDTH)`): referenced, workingset, mask 3 (refs 4,
/// tier 3) → protected **and counted** at `protected[hist][file][tier − 1 = 2]` with
/// `workingset_activate_file`; `folio_inc_gen` clears mask, referenced and workingset, so it
/// restarts at tier 0 and its later shadow has no workingset bit.
fn file_read_five_times(p: Profile) {
    let (mut k, t, task) = setup(p, 1024, 0, |c| c.stats = true);
    let f = k.m.create_file("f", 16, Advice::Normal);
    // page 3 five times, page 4 four times
    reads(&mut k, task, f, &[3, 4, 3, 4, 3, 4, 3, 4, 3]);
    let (hot, warm) = (cached(&k, f, 3), cached(&k, f, 4));
    match p {
        Profile::V6_1 => {
            assert_eq!(flags(&k, hot), (true, true, 3), "refs 4: saturated");
            assert_eq!(flags(&k, warm), (true, true, 2), "refs 3");
        }
        _ => {
            assert_eq!(flags(&k, hot), (true, true, 3), "refs 4 + workingset: saturated");
            assert_eq!(flags(&k, warm), (true, false, 3), "refs 4");
        }
    }
    assert_eq!((tier(&k, hot), tier(&k, warm)), (3, 2));
    // a sixth access changes nothing
    reads(&mut k, task, f, &[5, 3]);
    assert_eq!(flags(&k, hot), (true, true, 3));
    let l = lv(&k, t);
    k.p.try_to_inc_min_seq(l, 0);
    let min = lg(&k, t).min_seq[FILE];
    assert_eq!(pid::get_tier_idx(&k.p.lruvecs[l], &p.switches, k.p.nr_hist, FILE), 3);
    let (_, sc) = evict(&mut k, t);
    // page 4 (tier 2) and page 5 (tier 0) are evicted, page 3 moved
    assert_eq!(sc.nr_reclaimed, 2);
    assert!(!k.m.folios[warm].test(pg::ALLOCATED));
    assert_eq!(seq_of(&k, hot), min + 1);
    let hist = (min % 4) as usize;
    match p {
        Profile::V6_1 => {
            assert_eq!(flags(&k, hot), (false, false, 0));
            assert_eq!(tier(&k, hot), 0);
            assert_eq!(lg(&k, t).protected[hist][FILE], [0, 0, 1, 0], "protected[tier 3 − 1]");
            assert_eq!(lstat(&k, t, Stat::WorkingsetActivateFile), 1);
        }
        _ => {
            assert_eq!(flags(&k, hot), (false, true, 0), "PG_workingset survives");
            assert_eq!(tier(&k, hot), 3, "stays tier 3");
            assert_eq!(lg(&k, t).protected[hist][FILE], [0; 4], "not counted");
            assert_eq!(lstat(&k, t, Stat::WorkingsetActivateFile), 0);
        }
    }
    assert_eq!(k.m.memcg_stat(t).get(Stat::Pgrefill), 1, "sorted");
    // Next turn: mainline's tier 3 is not above tier_idx 3 and no longer saturated → evicted with
    // PG_workingset in the shadow; 6.1's tier-0 folio is evicted with no workingset bit. (6.1 had
    // placed the page in min_seq + 1, so protection left only MIN_NR_GENS generations: age first.)
    assert!(age(&mut k, t, false));
    let mut reclaimed = 0;
    for _ in 0..3 {
        reclaimed += evict(&mut k, t).1.nr_reclaimed;
    }
    assert_eq!(reclaimed, 1);
    let s = shadow(&k, f, 3);
    let min = lg(&k, t).min_seq[FILE];
    match p {
        Profile::V6_1 => assert_eq!((s.eviction, s.workingset), (min << 2, false)),
        _ => assert_eq!((s.eviction, s.workingset), (min << 2, true)),
    }
}

#[test]
fn lifecycle_file_read_five_times() {
    both(file_read_five_times);
}

/// An anon page faulted in, then seen young by page-table walks.
///
/// Mainline: `folio_add_lru` in a fault sets `PG_active` → `max_seq − 1`. The first walk that finds
/// its PTE young (left by the fault) only sets `PG_referenced` (second chance, `folio_update_gen`
/// returns −1: no move); after the next access the second walk promotes it to the walk's `max_seq`
/// with `PG_workingset`, clearing `PG_referenced`. The folio stays physically on its old list
/// until `sort_folio` or `inc_min_seq` relinks it; only its gen counter and the sizes move.
///
/// 6.1: `PG_active` → `max_seq`; `folio_update_gen` promotes on the first sighting and clears
/// `PG_referenced`, `PG_workingset` and the mask (no second chance).
fn anon_fault_then_walks(p: Profile) {
    let (mut k, t, task) = setup(p, 4096, 1024, |_| {});
    // 128 pages: a walk skips an mm with fewer than MIN_LRU_BATCH pages (should_skip_mm)
    let va = k.m.mmap(task, 128, 0, None);
    for i in 0..128 {
        assert_eq!(k.access(task, va + i, true), Ok(Access::Minor));
    }
    let id = mapped(&k, task, va + 5);
    let f = k.m.folios[id];
    assert_eq!(f.lru_type(), ANON);
    assert_eq!(flags(&k, id), (false, false, 0));
    let fault_seq = match p {
        Profile::V6_1 => 3,
        _ => 2,
    };
    assert_in(&k, id, fault_seq);
    assert_eq!(lstat(&k, t, Stat::NrActiveAnon), 128);
    assert_eq!(lstat(&k, t, Stat::NrInactiveAnon), 0);
    let l = lv(&k, t);
    match p {
        Profile::V6_17 => {
            // first walk (seq 3; the first walk of the lruvec is forced: mm_state.tail unset)
            assert!(age(&mut k, t, false));
            assert_eq!(k.m.pte(task, va + 5) & pte::YOUNG, 0, "accessed bit cleared");
            assert_eq!(flags(&k, id), (true, false, 0), "first sighting: PG_referenced only");
            assert_eq!(lg(&k, t).max_seq, 4);
            assert_in(&k, id, 2);
            assert_eq!(lg(&k, t).gen_pages(2, ANON), 128, "nothing moved");
            assert_eq!(
                lstat(&k, t, Stat::NrInactiveAnon),
                128,
                "seq 2 is inactive once max_seq is 4"
            );
            let st = lg(&k, t).mm_state.stats[0];
            assert_eq!(st[mm_stat::LEAF_YOUNG], 128);
            // accessed again, then the second walk (seq 4, not forced)
            k.access(task, va + 5, false).unwrap();
            switch_to(&mut k, task);
            assert!(age(&mut k, t, false));
            assert_eq!(flags(&k, id), (false, true, 0), "promoted: PG_workingset, refs cleared");
            assert_eq!(lg(&k, t).max_seq, 5);
            assert_eq!(seq_of(&k, id), 4, "the walk's max_seq, now max_seq − 1");
            // lazily sorted: still on the list of seq 2
            assert_eq!(list_of(&k, id).unwrap().0, (gen_from_seq(2), ANON, f.zone()));
            assert_eq!(lg(&k, t).gen_pages(gen_from_seq(4), ANON), 1);
            assert_eq!(lg(&k, t).gen_pages(gen_from_seq(2), ANON), 127);
            assert_eq!(lstat(&k, t, Stat::NrActiveAnon), 1);
            assert_eq!(lstat(&k, t, Stat::NrInactiveAnon), 127);
        }
        _ => {
            inc_max_seq(&mut k, t);
            assert_in(&k, id, 3);
            assert_eq!(lg(&k, t).max_seq, 4);
            // first walk (seq 4, forced as the first of the lruvec)
            assert!(age(&mut k, t, false));
            assert_eq!(k.m.pte(task, va + 5) & pte::YOUNG, 0);
            assert_eq!(flags(&k, id), (false, false, 0), "promoted on the first sighting");
            assert_eq!(lg(&k, t).max_seq, 5);
            assert_eq!(seq_of(&k, id), 4);
            assert_eq!(list_of(&k, id).unwrap().0, (gen_from_seq(3), ANON, f.zone()));
            assert_eq!(lg(&k, t).gen_pages(gen_from_seq(4), ANON), 128);
            assert_eq!(lg(&k, t).gen_pages(gen_from_seq(3), ANON), 0);
            assert_eq!(lstat(&k, t, Stat::NrActiveAnon), 128);
            let st = lg(&k, t).mm_state.stats[0];
            assert_eq!((st[mm_stat::LEAF_YOUNG], st[mm_stat::LEAF_OLD]), (128, 0));
        }
    }
    // Eviction reaches the old list and `sort_folio` relinks the promoted folio to the head of
    // its generation's list instead of isolating it (counted in pgrefill).
    k.p.try_to_inc_min_seq(l, 200);
    let old_list = list_of(&k, id).unwrap().0 .0;
    assert_eq!(gen_from_seq(lg(&k, t).min_seq[ANON]), old_list);
    let refill = k.m.memcg_stat(t).get(Stat::Pgrefill);
    let mut sc = sc_memcg(t);
    sc.swappiness = Some(200);
    eviction::evict_folios(&mut k.p, &mut k.m, t, 0, &mut sc, 200, u64::MAX);
    k.check().unwrap();
    let gen = k.m.folios[id].gen_counter() as usize - 1;
    assert_eq!(
        list_of(&k, id).unwrap().0,
        (gen, ANON, f.zone()),
        "sorted onto its list"
    );
    assert!(k.m.memcg_stat(t).get(Stat::Pgrefill) > refill);
}

#[test]
fn lifecycle_anon_fault_then_walks() {
    both(anon_fault_then_walks);
}

/// Age (without walking: `hw_pte_young` is off in these tests) until folio `id` is in the oldest
/// generation of its type and at least three generations exist, so eviction can take it.
fn age_until_oldest(k: &mut K, memcg: MemcgId, id: FolioId, swappiness: u32) {
    let l = lv(k, memcg);
    for _ in 0..8 {
        k.p.try_to_inc_min_seq(l, swappiness);
        let t = k.m.folios[id].lru_type();
        let g = lg(k, memcg);
        if seq_of(k, id) == g.min_seq[t] && g.max_seq - g.min_seq[t] >= 2 {
            return;
        }
        let seq = g.max_seq;
        assert!(k.p.try_to_inc_max_seq(&mut k.m, l, seq, swappiness, false));
        k.check().unwrap();
    }
    panic!("folio {id} never reached the oldest generation");
}

/// A mapped file page found young only by rmap at eviction (`hw_pte_young = false`: no walk).
///
/// Mainline (`folio_check_references` → `lru_gen_set_refs`): the first young PTE sets
/// `PG_referenced` → KEEP (`nr_ref_keep`); back in `evict_folios` its placement would be
/// `min_seq`, so `LRU_REFS_FLAGS` are replaced by `PG_active` → `max_seq − 1`, with
/// `PG_referenced` cleared again. A second round does the same: rmap alone never promotes it.
///
/// 6.1 (`folio_referenced_one` → `lru_gen_look_around`): the look-around window includes the
/// target's own PTE; the target is isolated (gen counter 0), so look-around sets its
/// `PG_referenced`; the classic `folio_check_references` then finds one young PTE *and*
/// `PG_referenced` → ACTIVATE (`pgactivate`); the put-back replaces the refs flags by
/// `PG_active` → `max_seq`.
fn rmap_only_young(p: Profile) {
    let (mut k, t, task) = setup(p, 1024, 0, |c| c.hw_pte_young = false);
    let f = k.m.create_file("f", 8, Advice::Normal);
    let va = k.m.mmap(task, 8, 0, Some((f, 0)));
    assert_eq!(k.access(task, va + 2, false), Ok(Access::Major));
    let id = mapped(&k, task, va + 2);
    let max = lg(&k, t).max_seq;
    assert_in(&k, id, if p == Profile::V6_1 { max } else { max - 1 });
    assert_eq!(
        flags(&k, id),
        (false, false, 0),
        "a fault does not mark the folio accessed"
    );
    for round in 0..2 {
        age_until_oldest(&mut k, t, id, 0);
        assert_eq!(k.p.lruvecs[lv(&k, t)].mm_state.stats[0], [0; 6], "no walk ran");
        assert!(
            k.m.pte(task, va + 2) & pte::YOUNG != 0,
            "the fault's accessed bit is still set"
        );
        let act0 = vm(&k, Stat::Pgactivate);
        let (_, sc) = evict(&mut k, t);
        assert_eq!(sc.nr_reclaimed, 0);
        assert_eq!(k.m.pte(task, va + 2) & pte::YOUNG, 0, "rmap cleared it");
        let max = lg(&k, t).max_seq;
        match p {
            Profile::V6_17 => {
                assert_eq!(sc.stat.nr_ref_keep, 1, "round {round}: KEEP");
                assert_eq!(vm(&k, Stat::Pgactivate), act0);
                assert_in(&k, id, max - 1);
                assert_eq!(flags(&k, id), (false, false, 0), "PG_referenced swapped for PG_active");
            }
            _ => {
                assert_eq!(sc.stat.nr_ref_keep, 0);
                assert_eq!(sc.stat.nr_activate[FILE], 1, "round {round}: ACTIVATE");
                assert_eq!(vm(&k, Stat::Pgactivate), act0 + 1);
                assert_in(&k, id, max);
                assert_eq!(flags(&k, id), (false, false, 0));
            }
        }
        // touched again before the next round
        k.access(task, va + 2, false).unwrap();
    }
}

#[test]
fn lifecycle_rmap_only_young() {
    both(rmap_only_young);
}

/// §5.6 the KEEP path with an anon folio not in the swap cache (mainline). Its placement is
/// `max_seq − 1` (`lru_gen_folio_seq`: anon not in swap cache), which is not `min_seq` when four
/// generations exist, so the put-back leaves its `PG_referenced` alone: it lands in `max_seq − 1`
/// still referenced. The next young sighting by rmap then finds `PG_referenced` →
/// `lru_gen_set_refs` clears the refs, sets `PG_workingset` → ACTIVATE → `max_seq`.
///
/// 6.1: the look-around/two-touch logic activates it on the first sighting → `max_seq`.
fn keep_path_anon(p: Profile) {
    let (mut k, t, task) = setup(p, 1024, 1024, |c| c.hw_pte_young = false);
    let va = k.m.mmap(task, 1, 0, None);
    let vc = k.m.mmap(task, 1, 0, None);
    k.access(task, va, true).unwrap();
    let a = mapped(&k, task, va);
    // C will keep the generation after A's populated (so min_seq[anon] stops there)
    inc_max_seq(&mut k, t);
    k.access(task, vc, true).unwrap();
    let c = mapped(&k, task, vc);
    inc_max_seq(&mut k, t);
    let l = lv(&k, t);
    k.p.try_to_inc_min_seq(l, 200);
    let g = lg(&k, t);
    match p {
        Profile::V6_17 => {
            assert_eq!((g.max_seq, g.min_seq[ANON]), (5, 2));
            assert_in(&k, a, 2);
            assert_in(&k, c, 3);
        }
        _ => {
            assert_eq!((g.max_seq, g.min_seq[ANON]), (5, 3));
            assert_in(&k, a, 3);
            assert_in(&k, c, 4);
        }
    }
    let mut sc = sc_memcg(t);
    sc.swappiness = Some(200); // anon first in both profiles
    eviction::evict_folios(&mut k.p, &mut k.m, t, 0, &mut sc, 200, u64::MAX);
    k.check().unwrap();
    assert_eq!(sc.nr_reclaimed, 0);
    assert!(!k.m.folios[a].test(pg::SWAPCACHE), "not reclaimed: never added to swap");
    let g = lg(&k, t);
    match p {
        Profile::V6_17 => {
            assert_eq!(sc.stat.nr_ref_keep, 1);
            assert_eq!(g.min_seq[ANON], 3);
            assert_in(&k, a, 4);
            assert_eq!(flags(&k, a), (true, false, 0), "still PG_referenced");
            assert_eq!(vm(&k, Stat::Pgactivate), 0);
        }
        _ => {
            assert_eq!(sc.stat.nr_activate[ANON], 1);
            assert_in(&k, a, 5);
            assert_eq!(flags(&k, a), (false, false, 0));
            assert_eq!(vm(&k, Stat::Pgactivate), 1);
            return;
        }
    }
    // mainline, second sighting: A is referenced and young again
    k.access(task, va, false).unwrap();
    inc_max_seq(&mut k, t);
    inc_max_seq(&mut k, t);
    k.p.try_to_inc_min_seq(l, 200);
    assert_eq!(lg(&k, t).min_seq[ANON], 4);
    assert_in(&k, a, 4);
    assert_eq!(flags(&k, a), (true, false, 0), "inc_min_seq moved C, not A");
    let mut sc = sc_memcg(t);
    sc.swappiness = Some(200);
    eviction::evict_folios(&mut k.p, &mut k.m, t, 0, &mut sc, 200, u64::MAX);
    k.check().unwrap();
    assert_eq!(sc.stat.nr_activate[ANON], 1);
    assert_eq!(vm(&k, Stat::Pgactivate), 1);
    assert_in(&k, a, lg(&k, t).max_seq);
    assert_eq!(flags(&k, a), (false, true, 0), "PG_workingset, refs cleared");
}

#[test]
fn keep_path_anon_not_in_swap_cache() {
    both(keep_path_anon);
}

/// 6.1: two neighbouring anon pages, both young, isolated in one batch from the oldest generation
/// (`shrink_folio_list`, "folio_update_gen() tried to promote this page?"). The rmap walk of the
/// first one runs look-around, which clears the second one's accessed bit and — the second one
/// being isolated, off every generation — marks it `PG_referenced` instead of promoting it. When
/// `shrink_folio_list` reaches the second one, mapped and `PG_referenced`, it keeps it without
/// an rmap walk of its own (which would find no young PTE and, the folio being anon, reclaim
/// it): neither page is swapped out. 6.1 puts both back with `PG_active` (in `max_seq`): the
/// first one activated by the classic two-touch check, the second one as a rejected mapped folio.
fn look_around_keeps_isolated_neighbour(p: Profile) {
    let (mut k, t, task) = setup(p, 1024, 1024, |c| c.hw_pte_young = false);
    let va = k.m.mmap(task, 2, 0, None);
    k.access(task, va, true).unwrap();
    k.access(task, va + 1, true).unwrap();
    let (a, b) = (mapped(&k, task, va), mapped(&k, task, va + 1));
    age_until_oldest(&mut k, t, a, 200);
    assert_eq!(seq_of(&k, a), seq_of(&k, b));
    for v in [va, va + 1] {
        assert!(
            k.m.pte(task, v) & pte::YOUNG != 0,
            "the faults' accessed bits are still set"
        );
    }
    let mut sc = sc_memcg(t);
    sc.swappiness = Some(200); // anon first
    eviction::evict_folios(&mut k.p, &mut k.m, t, 0, &mut sc, 200, u64::MAX);
    k.check().unwrap();
    assert_eq!(sc.nr_reclaimed, 0);
    assert_eq!(vm(&k, Stat::Pswpout), 0, "neither page was written to swap");
    for (v, id) in [(va, a), (va + 1, b)] {
        assert_eq!(mapped(&k, task, v), id, "still mapped");
        assert!(!k.m.folios[id].test(pg::SWAPCACHE), "never added to swap");
        assert_eq!(k.m.pte(task, v) & pte::YOUNG, 0, "look-around cleared it");
    }
    assert_eq!(
        sc.stat.nr_activate[ANON], 1,
        "only the first one went through the references check"
    );
    assert_eq!(sc.stat.nr_ref_keep, 0);
    let max = lg(&k, t).max_seq;
    assert_in(&k, a, max);
    assert_in(&k, b, max);
}

#[test]
fn look_around_keeps_an_isolated_neighbour() {
    look_around_keeps_isolated_neighbour(Profile::V6_1);
}

// =================================================================================================
// Refaults (`lru_gen_eviction`, `lru_gen_test_recent`, `lru_gen_refault`)
// =================================================================================================

/// A file page evicted with a workingset shadow refaults within the same generation, in a fault.
///
/// Mainline: the shadow has `PG_workingset` (the page was read ≥ 5 times, lazily promoted once,
/// then evicted as tier 3). The refault is recent (`|max_seq − token seq| < MAX_NR_GENS`):
/// `refaulted[hist][file][tier 3]`, `workingset_refault_file`, `workingset_activate_file` (in a
/// fault) and `workingset_restore_file` (workingset bit) each + 1; the folio gets
/// `PG_workingset`, and `folio_add_lru` in a fault `PG_active` → `max_seq`. A refault whose token
/// is ≥ 4 generations old still counts `workingset_refault_file` and nothing else.
///
/// 6.1: the shadow's workingset bit is `refs != 0` (a page read twice: referenced + workingset,
/// isolation clears referenced → refs 1, token refs-mask 0). The refault is recent only while the
/// token's seq equals the current `min_seq[file]`: `refaulted[hist][file][order_base_2(refs+1)]`
/// with refs = mask + workingset = 1 → tier 1, `workingset_refault_file`, and — in a fault —
/// refs mask 3 + `PG_workingset` with `workingset_restore_file`; no `workingset_activate` (6.1
/// counts that in `sort_folio`). `PG_active` → `max_seq`. A refault that is not recent counts
/// nothing at all.
fn file_refault_in_fault(p: Profile) {
    let (mut k, t, task) = setup(p, 1024, 0, |_| {});
    let f = k.m.create_file("f", 16, Advice::Normal);
    let hot = match p {
        Profile::V6_17 => {
            reads(&mut k, task, f, &[3, 4, 3, 4, 3, 4, 3, 4, 3]);
            let id = cached(&k, f, 3);
            assert_eq!(flags(&k, id), (true, true, 3));
            // first batch: page 3 saturated → lazily promoted; page 4 (tier 2) evicted
            assert_eq!(evict(&mut k, t).1.nr_reclaimed, 1);
            assert_eq!(flags(&k, id), (false, true, 0));
            // second batch: tier 3, not saturated, tier_idx 3 → evicted
            assert_eq!(evict(&mut k, t).1.nr_reclaimed, 1);
            id
        }
        _ => {
            reads(&mut k, task, f, &[3, 4, 3]);
            let id = cached(&k, f, 3);
            assert_eq!(flags(&k, id), (true, true, 0));
            assert_eq!(evict(&mut k, t).1.nr_reclaimed, 0, "only advances min_seq");
            assert_eq!(evict(&mut k, t).1.nr_reclaimed, 2);
            id
        }
    };
    assert!(!k.m.folios[hot].test(pg::ALLOCATED));
    let min = lg(&k, t).min_seq[FILE];
    let max = lg(&k, t).max_seq;
    assert_eq!((min, max), (2, 3));
    let s = shadow(&k, f, 3);
    assert_eq!((s.eviction, s.workingset), (min << 2, true));
    let evicted_tier = if p == Profile::V6_17 { 3 } else { 1 };
    assert_eq!(lg(&k, t).evicted[0][FILE][evicted_tier], 1);

    // fault it back through a mapping
    let va = k.m.mmap(task, 16, 0, Some((f, 0)));
    assert_eq!(k.access(task, va + 3, false), Ok(Access::Major));
    let id = mapped(&k, task, va + 3);
    assert_eq!(lstat(&k, t, Stat::WorkingsetRefaultFile), 1);
    assert_eq!(lstat(&k, t, Stat::WorkingsetRestoreFile), 1);
    assert_in(&k, id, max);
    match p {
        Profile::V6_17 => {
            assert_eq!(lg(&k, t).refaulted[0][FILE], [0, 0, 0, 1], "tier 3");
            assert_eq!(lstat(&k, t, Stat::WorkingsetActivateFile), 1);
            assert_eq!(flags(&k, id), (false, true, 0));
            assert_eq!(tier(&k, id), 3);
        }
        _ => {
            assert_eq!(lg(&k, t).refaulted[0][FILE], [0, 1, 0, 0], "tier 1");
            assert_eq!(lstat(&k, t, Stat::WorkingsetActivateFile), 0);
            assert_eq!(flags(&k, id), (false, true, 3), "mask 3 + PG_workingset: refs 4");
            assert_eq!(tier(&k, id), 3);
        }
    }

    // Page 4's shadow goes stale, then page 4 is read again (not in a fault).
    let l = lv(&k, t);
    match p {
        Profile::V6_17 => {
            // token seq 1 (page 4 was evicted in the first batch); stale once max_seq ≥ 5
            assert_eq!(shadow(&k, f, 4).eviction, 1 << 2 | 3);
            inc_max_seq(&mut k, t);
            inc_max_seq(&mut k, t);
            assert_eq!(lg(&k, t).max_seq, 5);
        }
        _ => {
            assert_eq!(shadow(&k, f, 4).eviction, 2 << 2);
            inc_max_seq(&mut k, t);
            k.p.try_to_inc_min_seq(l, 0);
            assert_eq!(lg(&k, t).min_seq[FILE], 3, "min_seq moved past the token");
        }
    }
    let refaulted = lg(&k, t).refaulted;
    k.read_page(task, f, 4).unwrap();
    let want = if p == Profile::V6_17 { 2 } else { 1 };
    assert_eq!(lstat(&k, t, Stat::WorkingsetRefaultFile), want);
    assert_eq!(lg(&k, t).refaulted, refaulted, "not recent: no PID input");
    assert_eq!(lstat(&k, t, Stat::WorkingsetRestoreFile), 1);
}

#[test]
fn refault_file_in_fault() {
    both(file_refault_in_fault);
}

/// An anon page swapped out and faulted back (`do_swap_page` → `workingset_refault`).
///
/// Mainline: promoted by a second walk sighting it carries `PG_workingset`; nothing touches it
/// afterwards, it drifts to `min_seq`, rmap finds no young PTE → swapped out with a workingset
/// shadow. The swap-in is a recent refault in a fault: `refaulted[hist][anon][3]`,
/// `workingset_refault/activate/restore_anon` + 1, `PG_workingset` + `PG_active` → `max_seq`.
///
/// 6.1: the walk's promotion cleared its refs; the shadow has refs 0 (no workingset bit): tier 0,
/// `workingset_refault_anon` and (in a fault) `workingset_restore_anon` with mask 3 +
/// `PG_workingset`; `PG_active` → `max_seq`.
fn anon_swap_refault(p: Profile) {
    let (mut k, t, task) = setup(p, 4096, 4096, |_| {});
    // one page per swap-in (`vm.page-cluster=0`); read-ahead: tests/swap_readahead.rs
    k.m.cfg.page_cluster = 0;
    let va = k.m.mmap(task, 128, 0, None);
    for i in 0..128 {
        k.access(task, va + i, true).unwrap();
    }
    let id = mapped(&k, task, va + 5);
    assert!(age(&mut k, t, false), "walk 1");
    k.access(task, va + 5, false).unwrap();
    switch_to(&mut k, task);
    assert!(age(&mut k, t, false), "walk 2");
    let want = match p {
        Profile::V6_17 => (false, true, 0),
        _ => (false, false, 0),
    };
    assert_eq!(flags(&k, id), want);
    // evict anon until the page is swapped out (aging, without walks, when eviction stalls)
    let mut swapped = false;
    for _ in 0..40 {
        let mut sc = sc_memcg(t);
        sc.swappiness = Some(200);
        let r = eviction::evict_folios(&mut k.p, &mut k.m, t, 0, &mut sc, 200, u64::MAX);
        k.check().unwrap();
        if k.m.pte(task, va + 5) & pte::SWAP != 0 {
            swapped = true;
            break;
        }
        if r == 0 {
            let l = lv(&k, t);
            let seq = k.p.lruvecs[l].max_seq;
            k.p.try_to_inc_max_seq(&mut k.m, l, seq, 200, false);
        }
    }
    assert!(swapped, "the page was never swapped out");
    let slot = k.m.pte(task, va + 5) & pte::PFN_MASK;
    let s = match k.m.swap.cache_slot(slot) {
        Slot::Shadow(v) => Shadow::unpack(v),
        x => panic!("swap slot {slot} holds {x:?}"),
    };
    assert_eq!(s.workingset, p == Profile::V6_17);
    let (r0, a0, s0) = (
        lstat(&k, t, Stat::WorkingsetRefaultAnon),
        lstat(&k, t, Stat::WorkingsetActivateAnon),
        lstat(&k, t, Stat::WorkingsetRestoreAnon),
    );
    let refaulted = lg(&k, t).refaulted[0][ANON];
    assert_eq!(k.access(task, va + 5, false), Ok(Access::Major));
    let id = mapped(&k, task, va + 5);
    assert!(k.m.folios[id].test(pg::SWAPCACHE));
    assert_eq!(lstat(&k, t, Stat::WorkingsetRefaultAnon), r0 + 1);
    assert_eq!(lstat(&k, t, Stat::WorkingsetRestoreAnon), s0 + 1);
    let mut want = refaulted;
    match p {
        Profile::V6_17 => {
            want[3] += 1;
            assert_eq!(lstat(&k, t, Stat::WorkingsetActivateAnon), a0 + 1);
            assert_eq!(flags(&k, id), (false, true, 0));
        }
        _ => {
            want[0] += 1;
            assert_eq!(lstat(&k, t, Stat::WorkingsetActivateAnon), a0);
            assert_eq!(flags(&k, id), (false, true, 3));
        }
    }
    assert_eq!(lg(&k, t).refaulted[0][ANON], want);
    assert_in(&k, id, lg(&k, t).max_seq);
}

#[test]
fn refault_anon_swap_in_fault() {
    both(anon_swap_refault);
}

// =================================================================================================
// §4.7 aliasing, §4.8 the min_seq window, inc_min_seq's protection statistics
// =================================================================================================

/// §4.7: without swap (swappiness 0) anon cannot be evicted. When its window is full,
/// `inc_min_seq` advances `min_seq[anon]` without moving folios, so the old slot becomes the new
/// youngest generation: the anon folios, never touched, end up "in" `max_seq` (cold/hot
/// inversion accepted by the kernel). The compat counters follow the slots: at each `inc_max_seq`
/// the pages of `gen(max_seq − 1)` move from active to inactive and those of `gen(max_seq + 1)`
/// (here the aliased anon slot) from inactive to active (`delta = prev − next`).
fn anon_aliasing(p: Profile) {
    let (mut k, t, task) = setup(p, 1024, 0, |_| {});
    let va = k.m.mmap(task, 4, 0, None);
    for i in 0..4 {
        k.access(task, va + i, true).unwrap();
    }
    let ids: Vec<FolioId> = (0..4).map(|i| mapped(&k, task, va + i)).collect();
    let gen0 = k.m.folios[ids[0]].gen_counter();
    let slot = gen0 as usize - 1;
    let lists: Vec<_> = ids.iter().map(|&id| list_of(&k, id).unwrap()).collect();
    let sc = sc_memcg(t);
    assert_eq!(eviction::get_swappiness(&k.p, &k.m, t, 0, &sc), 0);
    // mainline: fault → max_seq − 1 = 2; 6.1: max_seq = 3
    let first = match p {
        Profile::V6_17 => 2,
        _ => 3,
    };
    assert_eq!(seq_of(&k, ids[0]), first);
    let mut aliased_at = None;
    for _ in 0..5 {
        let before = lg(&k, t).clone();
        inc_max_seq(&mut k, t);
        let g = lg(&k, t);
        assert_eq!(g.max_seq, before.max_seq + 1);
        if before.max_seq + 1 - before.min_seq[ANON] == 4 {
            assert_eq!(g.min_seq[ANON], before.min_seq[ANON] + 1, "window full: anon slides");
        } else {
            assert_eq!(g.min_seq[ANON], before.min_seq[ANON]);
        }
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(k.m.folios[id].gen_counter(), gen0, "never moved");
            assert_eq!(list_of(&k, id).unwrap(), lists[i]);
        }
        assert_eq!(g.gen_pages(slot, ANON), 4);
        let active = Mglru::is_active_gen(g, slot);
        assert_eq!(lstat(&k, t, Stat::NrActiveAnon), if active { 4 } else { 0 });
        assert_eq!(lstat(&k, t, Stat::NrInactiveAnon), if active { 0 } else { 4 });
        if seq_of(&k, ids[0]) == g.max_seq && aliased_at.is_none() {
            aliased_at = Some(g.max_seq);
        }
    }
    // mainline: seq 2 → slot 2 aliased as seq 6; 6.1: seq 3 → slot 3 aliased as seq 7
    assert_eq!(aliased_at, Some(first + 4));
    // try_to_inc_min_seq at swappiness 0 does not touch anon
    let l = lv(&k, t);
    let before = lg(&k, t).min_seq[ANON];
    k.p.try_to_inc_min_seq(l, 0);
    assert_eq!(lg(&k, t).min_seq[ANON], before);
}

#[test]
fn aliasing_of_unevictable_anon() {
    both(anon_aliasing);
}

/// §4.8 / §17.1 row 10: how far apart `min_seq[anon]` and `min_seq[file]` may be after
/// `try_to_inc_min_seq` drops empty generations.
///
/// Mainline: within 1 of each other when both are evictable (`s = max_seq − 2`: an advanced type
/// beyond `s` is pulled back to `s` if the other is below it); unconstrained at swappiness 0.
/// 6.1: `anon = min(anon, file)`, `file = max(anon, old file)` with `can_swap`: anon never passes
/// file, and file only advances as far as anon does.
fn min_seq_window(p: Profile) {
    // (a) anon empty, file populated in its oldest generation
    let (mut k, t, task) = setup(p, 1024, 1024, |_| {});
    let f = k.m.create_file("f", 16, Advice::Normal);
    reads(&mut k, task, f, &[1, 2]);
    let l = lv(&k, t);
    assert!(k.p.try_to_inc_min_seq(l, 60));
    let want = match p {
        // anon would reach 2 (= max_seq − 1), file stays 0 → anon pulled back to s = 1
        Profile::V6_17 => [1, 0],
        // file: 0 empty → 1 (6.1 placed the pages in min_seq + 1); anon min(2, 1) = 1
        _ => [1, 1],
    };
    assert_eq!(lg(&k, t).min_seq, want);
    k.check().unwrap();

    // (b) anon populated in its oldest generation, file empty
    let (mut k, t, task) = setup(p, 1024, 1024, |_| {});
    let va = k.m.mmap(task, 2, 0, None);
    k.access(task, va, true).unwrap();
    inc_max_seq(&mut k, t);
    inc_max_seq(&mut k, t);
    let g = lg(&k, t).clone();
    assert_eq!((g.max_seq, g.min_seq), (5, [2, 2]));
    let mut k0 = Kernel::new(k.m.clone(), k.p.clone());
    let l = lv(&k, t);
    k.p.try_to_inc_min_seq(l, 60);
    let want = match p {
        // anon stays 2 (its folio), file would reach 4 → pulled back to s = 3
        Profile::V6_17 => [2, 3],
        // anon: 2 empty → 3 (the folio is in seq 3); file = max(min(3, 4), 2) = 3
        _ => [3, 3],
    };
    assert_eq!(lg(&k, t).min_seq, want);
    // at swappiness 0 only file moves, as far as it can
    k0.p.try_to_inc_min_seq(l, 0);
    assert_eq!(k0.p.lrugen(t, 0).min_seq, [2, 4]);
}

#[test]
fn min_seq_window_between_types() {
    both(min_seq_window);
}

/// `inc_min_seq` with an evictable type: every folio on the oldest list moves to `min_seq + 1`
/// (or to the generation a walk promoted it to), and — mainline only — each is counted in
/// `protected[hist][type][tier]` except saturated ones (`refs + workingset == 5`), whether or not
/// a walk had promoted it (§4.7). The count goes to `hist(min_seq)`, which with a full window is
/// `hist(max_seq + 1)`: `reset_ctrl_pos(carryover)` folds it into `avg_total` (halved) before
/// `inc_max_seq` clears that slot for the new generation, so the trace it leaves is `avg_total`.
/// 6.1's `inc_min_seq` counts nothing.
fn inc_min_seq_counts_protection(p: Profile) {
    let (mut k, t, task) = setup(p, 4096, 1024, |c| c.stats = true);
    let va = k.m.mmap(task, 128, 0, None);
    for i in 0..128 {
        k.access(task, va + i, true).unwrap();
    }
    let id = mapped(&k, task, va + 5);
    if p == Profile::V6_1 {
        // fault → max_seq 3; age twice without walking and drop the empty generations, so the
        // folios sit in min_seq[anon] = 3 when the first walk promotes them
        inc_max_seq(&mut k, t);
        inc_max_seq(&mut k, t);
        let l = lv(&k, t);
        k.p.try_to_inc_min_seq(l, 60);
        assert_eq!(lg(&k, t).min_seq[ANON], 3);
        assert_in(&k, id, 3);
    }
    assert!(age(&mut k, t, false));
    if p == Profile::V6_17 {
        // a second sighting promotes ten pages
        for i in 0..10 {
            k.access(task, va + i, false).unwrap();
        }
        switch_to(&mut k, task);
        assert!(age(&mut k, t, false));
        assert_eq!(flags(&k, id), (false, true, 0));
    }
    // the promoted folio still sits on the list of min_seq[anon]
    let g = lg(&k, t).clone();
    assert_eq!(list_of(&k, id).unwrap().0 .0, gen_from_seq(g.min_seq[ANON]));
    assert_eq!(
        g.max_seq - g.min_seq[ANON] + 1,
        4,
        "window full: the next aging slides anon"
    );
    assert_eq!(g.avg_total[ANON], [0; 4]);
    assert_eq!(g.protected, [[[0u64; 4]; 2]; 4]);
    inc_max_seq(&mut k, t);
    // the walk promoted it to its own max_seq, max_seq − 1 once it had aged
    assert_eq!(seq_of(&k, id), g.max_seq - 1, "its promoted generation");
    assert_eq!(
        list_of(&k, id).unwrap().0 .0,
        gen_from_seq(g.max_seq - 1),
        "relinked there"
    );
    let got = lg(&k, t).avg_total[ANON];
    match p {
        // 118 referenced folios (refs 1, tier 0) and 10 promoted ones (workingset, tier 3),
        // halved: (0 + 118) / 2, (0 + 10) / 2
        Profile::V6_17 => assert_eq!(got, [59, 0, 0, 5]),
        // 6.1: nothing is counted
        _ => assert_eq!(got, [0; 4]),
    }
    assert_eq!(lg(&k, t).protected, [[[0u64; 4]; 2]; 4], "the slot was reused");
}

#[test]
fn inc_min_seq_protection_statistics() {
    both(inc_min_seq_counts_protection);
}

// =================================================================================================
// Page-table walks and Bloom filters (§4.3–§4.5, §6)
// =================================================================================================

/// The walk statistics of the lruvec summed over history slots (they accumulate in slot 0 when
/// `NR_HIST_GENS` is 1).
fn mm_stats(k: &K, memcg: MemcgId) -> [u64; 6] {
    let mut out = [0; 6];
    for h in lg(k, memcg).mm_state.stats.iter() {
        for (o, v) in out.iter_mut().zip(h) {
            *o += v;
        }
    }
    out
}

fn delta(a: [u64; 6], b: [u64; 6]) -> [u64; 6] {
    let mut d = [0; 6];
    for i in 0..6 {
        d[i] = b[i] - a[i];
    }
    d
}

/// After a walk, a PTE table dense with young entries is carried into the next generation's
/// filter (`MM_NONLEAF_ADDED`, `update_bloom_filter(seq + 1)`); a sparse one is not, and the next
/// non-forced walk skips it: its young PTE stays young and its folio untouched.
fn bloom_dense_carried_sparse_skipped(p: Profile) {
    let (mut k, t, task) = setup(p, 4096, 4096, |_| {});
    let va = k.m.mmap(task, 128, 0, None);
    let vb = k.m.mmap(task, 128, 0, None);
    let (pa, pb) = (MmStruct::pmd_index(va), MmStruct::pmd_index(vb));
    assert_ne!(pa, pb, "each VMA in its own PTE table");
    for i in 0..128 {
        k.access(task, va + i, true).unwrap();
        k.access(task, vb + i, true).unwrap();
    }
    let (ia, ib) = (pmd_item(task, pa), pmd_item(task, pb));
    // walk 1 (the lruvec's first: forced): both tables all young → both carried over
    let s0 = mm_stats(&k, t);
    let seq1 = lg(&k, t).max_seq;
    assert!(age(&mut k, t, false));
    let d = delta(s0, mm_stats(&k, t));
    assert_eq!(d[mm_stat::LEAF_YOUNG], 256);
    assert_eq!((d[mm_stat::NONLEAF_FOUND], d[mm_stat::NONLEAF_ADDED]), (2, 2));
    let st = &lg(&k, t).mm_state;
    assert_eq!(st.seq, seq1, "mm_state.seq catches up with the walk's max_seq");
    assert!(test_bloom_filter(st, seq1 + 1, ia) && test_bloom_filter(st, seq1 + 1, ib));
    // all of A touched again, one page of B
    for i in 0..128 {
        k.access(task, va + i, false).unwrap();
    }
    k.access(task, vb + 7, false).unwrap();
    switch_to(&mut k, task);
    // walk 2 (not forced): both found in the filter; A dense again, B 1 young of 128 → sparse
    let s1 = mm_stats(&k, t);
    assert!(age(&mut k, t, false));
    let d = delta(s1, mm_stats(&k, t));
    assert_eq!(d[mm_stat::LEAF_YOUNG], 129);
    assert_eq!((d[mm_stat::NONLEAF_FOUND], d[mm_stat::NONLEAF_ADDED]), (2, 1));
    let st = &lg(&k, t).mm_state;
    assert!(test_bloom_filter(st, seq1 + 2, ia), "dense: carried over");
    assert!(!test_bloom_filter(st, seq1 + 2, ib), "sparse: dropped");
    // A and B touched again; walk 3 (not forced) does not look at B's table
    k.access(task, va + 1, false).unwrap();
    k.access(task, vb + 9, false).unwrap();
    switch_to(&mut k, task);
    let s2 = mm_stats(&k, t);
    assert!(age(&mut k, t, false));
    let d = delta(s2, mm_stats(&k, t));
    assert_eq!(d[mm_stat::NONLEAF_FOUND], 1, "only A");
    assert_eq!(d[mm_stat::NONLEAF_TOTAL], 2, "both non-leaf entries seen");
    assert_eq!(d[mm_stat::LEAF_YOUNG], 1, "only A's one young PTE");
    assert!(k.m.pte(task, vb + 9) & pte::YOUNG != 0, "B's table was skipped");
    // ... until a forced walk (debugfs `+` with force_scan) ignores the filter. (Walk 3 cleared
    // B's non-leaf accessed bit before the filter said no, and 6.1 tests that bit even when
    // forced: touch B so its PMD entry is young again.)
    k.access(task, vb + 9, false).unwrap();
    switch_to(&mut k, task);
    assert!(age(&mut k, t, true));
    assert_eq!(k.m.pte(task, vb + 9) & pte::YOUNG, 0, "a forced walk scans every table");
}

#[test]
fn bloom_filter_dense_table_carried_sparse_skipped() {
    both(bloom_dense_carried_sparse_skipped);
}

/// rmap look-around feeds the Bloom filter: evicting a mapped folio whose PTE is young scans the
/// (≤ 64-page) window around it; if the window is dense with young PTEs, the PMD entry goes into
/// filter `max_seq % 2`, the one the next walk reads, so that walk scans a table it would
/// otherwise skip. Mainline counts the target's own young PTE and only folios on an MGLRU list
/// (not isolated); the neighbours get `lru_gen_set_refs` (first sighting: `PG_referenced`).
/// 6.1 counts every young PTE in the window; the neighbours already in `max_seq` stay there.
fn bloom_look_around(p: Profile) {
    let (mut k, t, task) = setup(p, 4096, 0, |_| {});
    let f = k.m.create_file("f", 128, Advice::Normal);
    let va = k.m.mmap(task, 128, 0, Some((f, 0)));
    k.access(task, va, false).unwrap();
    let x = mapped(&k, task, va);
    // a second task keeps the walks going (and the filters allocated) while the first one has
    // too few pages to be walked (should_skip_mm: < MIN_LRU_BATCH)
    let other = k.m.create_mm(t);
    let g = k.m.create_file("g", 128, Advice::Normal);
    let vg = k.m.mmap(other, 128, 0, Some((g, 0)));
    for i in 0..128 {
        k.access(other, vg + i, false).unwrap();
    }
    assert_eq!(seq_of(&k, x), seq_of(&k, mapped(&k, other, vg)));
    assert_eq!(list_of(&k, x).unwrap().1, 128, "X at the tail: scanned first");
    let item = pmd_item(task, MmStruct::pmd_index(va));
    assert!(age(&mut k, t, false), "walk 1");
    switch_to(&mut k, other);
    assert!(age(&mut k, t, false), "walk 2");
    let max = lg(&k, t).max_seq;
    assert!(
        lg(&k, t).mm_state.filters[(max % 2) as usize].is_some(),
        "allocated by walk 2"
    );
    assert!(!test_bloom_filter(&lg(&k, t).mm_state, max, item));
    let l = lv(&k, t);
    k.p.try_to_inc_min_seq(l, 0);
    assert_eq!(seq_of(&k, x), lg(&k, t).min_seq[FILE], "X is the oldest");
    // the rest of X's window, faulted now (young, in younger generations)
    for i in 1..64 {
        k.access(task, va + i, false).unwrap();
    }
    let y = mapped(&k, task, va + 1);
    let y_seq = seq_of(&k, y);
    let (_, sc) = evict(&mut k, t);
    assert!(
        test_bloom_filter(&lg(&k, t).mm_state, max, item),
        "dense window: PMD added"
    );
    assert_eq!(
        k.m.pte(task, va + 1) & pte::YOUNG,
        0,
        "neighbours' accessed bits cleared"
    );
    match p {
        Profile::V6_17 => {
            assert_eq!(sc.stat.nr_ref_keep, 1, "X: first sighting → KEEP");
            assert_eq!(flags(&k, y), (true, false, 0), "neighbour: PG_referenced");
            assert_eq!(seq_of(&k, y), y_seq);
        }
        _ => {
            assert_eq!(sc.stat.nr_activate[FILE], 1, "X: look-around + two-touch → ACTIVATE");
            assert_eq!(seq_of(&k, y), max, "neighbour already in max_seq");
            assert_eq!(flags(&k, y), (false, false, 0));
        }
    }
    // the feedback: the next (not forced) walk finds X's table in the filter and scans it
    k.access(task, va + 1, false).unwrap();
    switch_to(&mut k, task);
    let s0 = mm_stats(&k, t);
    assert!(age(&mut k, t, false));
    let d = delta(s0, mm_stats(&k, t));
    assert!(d[mm_stat::NONLEAF_FOUND] >= 1);
    assert_eq!(k.m.pte(task, va + 1) & pte::YOUNG, 0, "walked");
}

#[test]
fn bloom_filter_fed_by_look_around() {
    both(bloom_look_around);
}

/// The non-leaf PMD accessed bit: with `hw_nonleaf_pmd_young` (cap 0x4) a walk skips a PTE table
/// whose PMD entry is old, before consulting the Bloom filter (`MM_NONLEAF_TOTAL` counts it,
/// `MM_NONLEAF_FOUND` does not). Mainline ignores the bit in a forced walk; 6.1 tests it even
/// then. Without the hardware feature the bit is ignored.
fn nonleaf_pmd_young(p: Profile, hw: bool) {
    let (mut k, t, task) = setup(p, 4096, 0, |c| c.hw_nonleaf_pmd_young = hw);
    let f = k.m.create_file("f", 128, Advice::Normal);
    let va = k.m.mmap(task, 128, 0, Some((f, 0)));
    for i in 0..128 {
        k.access(task, va + i, false).unwrap();
    }
    let pi = MmStruct::pmd_index(va);
    assert!(age(&mut k, t, false), "walk 1: dense → in the next filter");
    for i in 0..128 {
        k.access(task, va + i, false).unwrap();
    }
    // the table's PMD entry reads old (as if not walked through by the MMU since it was cleared)
    k.m.mms[task as usize].pmds[pi] &= !PMD_YOUNG;
    for force in [false, true] {
        switch_to(&mut k, task);
        let s0 = mm_stats(&k, t);
        assert!(age(&mut k, t, force));
        let d = delta(s0, mm_stats(&k, t));
        let skipped = hw && (!force || p == Profile::V6_1);
        assert_eq!(d[mm_stat::NONLEAF_TOTAL], 1);
        assert_eq!(d[mm_stat::NONLEAF_FOUND], !skipped as u64, "force {force}");
        let young = k.m.pte(task, va + 3) & pte::YOUNG != 0;
        assert_eq!(young, skipped, "force {force}");
        if !skipped {
            return;
        }
    }
}

#[test]
fn nonleaf_pmd_accessed_bit() {
    both(|p| nonleaf_pmd_young(p, true));
    both(|p| nonleaf_pmd_young(p, false));
}

/// Two VMAs sharing a PTE table (the first ends and the second starts inside one 2 MiB range, as
/// the guest's `mmap` puts a region right below an existing mapping): the walk scans the table
/// once, for both (`walk_pte_range` goes on into the next VMA with `get_next_vma(PMD_MASK,
/// PAGE_SIZE)`, and `walk_pmd_range` resumes at the next table), so the young pages of the
/// second VMA in the shared table are found, and `suitable_to_scan` judges the table by all its
/// PTEs. (Walking the first VMA's part cleared the table's non-leaf accessed bit, so a walk per
/// VMA skipped the second's part in every walk but a forced one.)
fn shared_pte_table(p: Profile) {
    // swap, so that the walk looks at anon VMAs
    let (mut k, t, task) = setup(p, 4096, 4096, |_| {});
    // A ends 100 pages into its second table, B starts right there and runs into a third
    let va = k.m.mmap(task, 612, 0, None);
    let vb = va + 612;
    k.m.mmap_fixed(task, vb, 600, 0, None).unwrap();
    let shared = MmStruct::pmd_index(va + 611);
    assert_eq!(MmStruct::pmd_index(vb), shared);
    for i in 0..612 {
        k.access(task, va + i, true).unwrap();
    }
    for i in 0..600 {
        k.access(task, vb + i, true).unwrap();
    }
    // walk 1 (forced): every PTE young, three tables scanned once each
    let s0 = mm_stats(&k, t);
    assert!(age(&mut k, t, false));
    let d = delta(s0, mm_stats(&k, t));
    assert_eq!(d[mm_stat::LEAF_YOUNG], 1212);
    assert_eq!(d[mm_stat::LEAF_TOTAL], 1212, "the shared table's PTEs counted once");
    assert_eq!(d[mm_stat::NONLEAF_TOTAL], 3, "three tables, the shared one once");
    // touch B's pages in the shared table only; walk 2 (not forced) finds them
    for i in 0..412 {
        k.access(task, vb + i, false).unwrap();
    }
    switch_to(&mut k, task);
    let s1 = mm_stats(&k, t);
    assert!(age(&mut k, t, false));
    let d = delta(s1, mm_stats(&k, t));
    assert_eq!(d[mm_stat::LEAF_YOUNG], 412);
    for i in [0, 205, 411] {
        assert_eq!(
            k.m.pte(task, vb + i) & pte::YOUNG,
            0,
            "B's page {i} in the shared table walked"
        );
    }
    let st = &lg(&k, t).mm_state;
    let seq = lg(&k, t).max_seq;
    assert!(
        test_bloom_filter(st, seq + 1, pmd_item(task, shared)),
        "412 young of 512: the shared table is carried over"
    );
}

#[test]
fn a_pte_table_two_vmas_share_is_walked_once_for_both() {
    both(shared_pte_table);
}

/// Software writing PTEs (reclaim clearing accessed bits through rmap, unmapping a page) does not
/// set the non-leaf PMD accessed bit; only the MMU's walk for an access does (and a new table is
/// installed accessed, as x86's `pmd_populate` writes `_PAGE_TABLE`).
#[test]
fn only_an_access_marks_the_pmd_entry_young() {
    let (mut k, _t, task) = setup(Profile::V6_12, 4096, 0, |_| {});
    let va = k.m.mmap(task, 8, 0, None);
    k.access(task, va, true).unwrap();
    let pi = MmStruct::pmd_index(va);
    assert_ne!(
        k.m.mms[task as usize].pmds[pi] & PMD_YOUNG,
        0,
        "a new table is installed accessed"
    );
    k.m.mms[task as usize].pmds[pi] &= !PMD_YOUNG;
    *k.m.pte_mut(task, va) &= !pte::YOUNG;
    assert_eq!(
        k.m.mms[task as usize].pmds[pi] & PMD_YOUNG,
        0,
        "a PTE write by software"
    );
    k.access(task, va, false).unwrap();
    assert_ne!(k.m.mms[task as usize].pmds[pi] & PMD_YOUNG, 0, "an access");
    k.m.mms[task as usize].pmds[pi] &= !PMD_YOUNG;
    k.access(task, va + 1, true).unwrap();
    assert_ne!(
        k.m.mms[task as usize].pmds[pi] & PMD_YOUNG,
        0,
        "a fault's retried access"
    );
}

/// Without a hardware accessed bit in PTEs (`arch_has_hw_pte_young()` false) aging never walks:
/// `iterate_mm_list_nowalk` bumps `mm_state.seq` and creates the generation, the walk statistics
/// stay untouched, accessed bits stay set and no folio is promoted. 6.1 still walks when forced
/// (`!force_scan && !(hw && cap)` guards the no-walk path); mainline does not.
fn no_hw_pte_young(p: Profile) {
    let (mut k, t, task) = setup(p, 4096, 0, |c| c.hw_pte_young = false);
    let f = k.m.create_file("f", 128, Advice::Normal);
    let va = k.m.mmap(task, 128, 0, Some((f, 0)));
    for i in 0..128 {
        k.access(task, va + i, false).unwrap();
    }
    let x = mapped(&k, task, va + 3);
    let gen = k.m.folios[x].gen_counter();
    let seq0 = lg(&k, t).mm_state.seq;
    let max0 = lg(&k, t).max_seq;
    assert!(age(&mut k, t, false));
    let st = &lg(&k, t).mm_state;
    assert_eq!((st.seq, lg(&k, t).max_seq), (seq0 + 1, max0 + 1));
    assert_eq!(st.stats, [[0; 6]; 4]);
    assert!(st.filters.iter().all(|f| f.is_none()), "no walk, no filter");
    assert!(k.m.pte(task, va + 3) & pte::YOUNG != 0);
    assert_eq!(k.m.folios[x].gen_counter(), gen);
    assert_eq!(flags(&k, x), (false, false, 0));
    // forced
    assert!(age(&mut k, t, true));
    let walked = k.m.pte(task, va + 3) & pte::YOUNG == 0;
    assert_eq!(walked, p == Profile::V6_1);
    assert_eq!(mm_stats(&k, t)[mm_stat::LEAF_YOUNG], if walked { 128 } else { 0 });
}

#[test]
fn no_walk_without_hw_pte_young() {
    both(no_hw_pte_young);
}

/// A folio promoted by a page-table walk keeps its place on the list of its old generation until
/// `sort_folio` or `inc_min_seq` relinks it (lazy sorting); only its gen counter and the sizes
/// move. Taking it off the LRU meanwhile (`lru_gen_del_folio` → `list_del(&folio->lru)`: the
/// kernel unlinks it from whatever list it is on) must leave every list intact and the sizes of
/// its *counter's* generation decremented: here the process exits (`exit_mmap` frees every
/// page), with some folios lazily promoted and others not.
fn del_lazily_promoted(p: Profile) {
    let (mut k, t, task) = setup(p, 4096, 4096, |_| {});
    let va = k.m.mmap(task, 128, 0, None);
    for i in 0..128 {
        k.access(task, va + i, true).unwrap();
    }
    if p == Profile::V6_1 {
        // 6.1 faults into max_seq: age once so that the walks' promotions move the folios
        inc_max_seq(&mut k, t);
    }
    assert!(age(&mut k, t, false), "walk 1");
    for i in 0..128 {
        k.access(task, va + i, false).unwrap();
    }
    switch_to(&mut k, task);
    assert!(age(&mut k, t, false), "walk 2");
    let id = mapped(&k, task, va + 5);
    let (list, _) = list_of(&k, id).unwrap();
    assert_ne!(list.0, k.m.folios[id].gen_counter() as usize - 1, "lazily promoted");
    k.exit(task);
    k.check().unwrap();
    let g = lg(&k, t);
    for gen in 0..4 {
        assert_eq!(g.gen_pages(gen, ANON), 0);
        assert!(g.folios[gen][ANON].iter().all(|l| l.is_empty()));
    }
    assert_eq!(lstat(&k, t, Stat::NrActiveAnon) + lstat(&k, t, Stat::NrInactiveAnon), 0);
}

#[test]
fn del_of_a_lazily_promoted_folio() {
    both(del_lazily_promoted);
}

/// 6.1 `lru_gen_shrink_lruvec` → `should_abort_scan`: once `nr_to_reclaim` is met, reclaim stops
/// after a batch that isolated anon (`evict_folios` sets `need_swapping` for every batch of type
/// anon that isolated something, swapped out or not: "over-swapping can increase allocation
/// latency"). Here 100 clean file pages and 200 young anon pages (one per VMA, so look-around sees
/// only the target) share the oldest generation; at priority 0 the budget covers all 300. Two
/// file batches reclaim the 100 file pages (≥ 32); the next batch finds no file left and takes
/// 64 anon pages, all activated (young) → `need_swapping` → stop. (6.1 only: mainline memcg
/// reclaim ages at three generations instead, and never stops early.)
#[test]
fn v6_1_abort_after_an_anon_batch() {
    let p = Profile::V6_1;
    let (mut k, t, task) = setup(p, 4096, 4096, |c| c.hw_pte_young = false);
    let vas: Vec<u32> = (0..200).map(|_| k.m.mmap(task, 1, 0, None)).collect();
    for &va in &vas {
        k.access(task, va, true).unwrap();
    }
    inc_max_seq(&mut k, t);
    inc_max_seq(&mut k, t);
    let l = lv(&k, t);
    k.p.try_to_inc_min_seq(l, 60);
    assert_eq!((lg(&k, t).max_seq, lg(&k, t).min_seq), (5, [3, 3]));
    let f = k.m.create_file("f", 100, Advice::Normal);
    for i in 0..100 {
        k.read_page(task, f, i).unwrap();
    }
    let g = lg(&k, t);
    assert_eq!((g.gen_pages(3, ANON), g.gen_pages(3, FILE)), (200, 100));
    let mut sc = sc_memcg(t);
    sc.priority = 0;
    eviction::shrink_lruvec(&mut k.p, &mut k.m, t, 0, &mut sc);
    k.check().unwrap();
    assert_eq!(sc.nr_reclaimed, 100);
    assert_eq!(vm(&k, Stat::PgscanAnon), 64, "one anon batch");
    assert_eq!(sc.stat.nr_activate[ANON], 64);
    assert_eq!(sc.stat.nr_pageout, 0, "nothing was swapped out");
}

/// `lru_gen_add_mm`: an mm created after the last walk is scanned by the next walk even if it has
/// not run since (its "used" bit is clear), because the walk force-scans from the first mm added
/// since the last iteration. Without the hook it would be skipped.
#[test]
fn mm_added_after_a_walk_is_force_scanned() {
    use lrugen::mm::vm::vmf;
    use lrugen::reclaim::mglru::state::mm_stat;
    for profile in [Profile::V6_1, Profile::V6_17] {
        for hook in [true, false] {
            let mut m = Machine::new(MachineConfig::simple(8_192, 2_048));
            m.lru_cache_disabled = true;
            let t = m.create_memcg(lrugen::mm::memcg::ROOT_MEMCG, "t");
            let mm1 = m.create_mm(t);
            let a1 = m.mmap(mm1, 256, vmf::WRITE, None);
            let p = Mglru::new(
                &m,
                MglruConfig {
                    profile,
                    ..Default::default()
                },
            );
            let mut k = Kernel::new(m, p);
            for i in 0..256 {
                k.access(mm1, a1 + i, true).unwrap();
            }
            let lv = k.p.lv(t, 0);
            let seq = k.p.lruvecs[lv].max_seq;
            assert!(k.p.try_to_inc_max_seq(&mut k.m, lv, seq, 60, false));
            let mm2 = if hook { k.create_mm(t) } else { k.m.create_mm(t) };
            let a2 = k.m.mmap(mm2, 256, vmf::WRITE, None);
            for i in 0..256 {
                k.access(mm2, a2 + i, true).unwrap();
            }
            // neither mm ran since: clear their used bits
            k.m.mms[mm1 as usize].lru_gen_bitmap = 0;
            k.m.mms[mm2 as usize].lru_gen_bitmap = 0;
            let young0 = k.p.lruvecs[lv].mm_state.stats[0][mm_stat::LEAF_YOUNG];
            let seq = k.p.lruvecs[lv].max_seq;
            assert!(k.p.try_to_inc_max_seq(&mut k.m, lv, seq, 60, false));
            let young = k.p.lruvecs[lv].mm_state.stats[0][mm_stat::LEAF_YOUNG] - young0;
            if hook {
                assert_eq!(young, 256, "{profile:?}: the new mm was walked");
            } else {
                assert_eq!(young, 0, "{profile:?}: without lru_gen_add_mm the new mm is skipped");
            }
        }
    }
}

/// `min_ttl_ms` under global pressure: an empty memcg is below its `memory.min` (the kernel tests
/// `emin >= usage`, and both are 0), so kswapd's `lru_gen_age_node` skips it (6.1 `age_lruvec`,
/// mainline `lruvec_is_reclaimable`: both return false on `mem_cgroup_below_min`). When the only
/// memcg with pages has every generation younger than the TTL, an empty memcg created long ago
/// does not count as reclaimable, and kswapd invokes the OOM killer; the empty memcg is not aged.
fn min_ttl_empty_memcg_skipped(profile: Profile) {
    let (mut k, t, task) = setup(profile, 256, 0, |c| c.min_ttl_ms = 1000);
    let e = k.create_memcg(ROOT_MEMCG, "e");
    let file = k.m.create_file("f", 64, Advice::Normal);
    reads(&mut k, task, file, &(0..16).collect::<Vec<_>>());
    // two seconds later, the generations of /t and of the root (whose lruvec, empty here, is
    // visited too and is not below its protection: its usage is its children's) are all fresh,
    // and /e's as old as its creation
    k.m.now_ns += 2_000_000_000;
    let now = k.m.jiffies();
    let (lt, le) = (lv(&k, t), lv(&k, e));
    for l in [lt, lv(&k, ROOT_MEMCG)] {
        k.p.lruvecs[l].timestamps = [now; lrugen::reclaim::mglru::MAX_NR_GENS];
    }
    let seqs_e = (lg(&k, e).min_seq, lg(&k, e).max_seq);
    assert!(k.p.lruvecs[le].timestamps.iter().all(|&b| b + 250 < now));
    let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Kswapd, None, usize::MAX);
    lrugen::reclaim::mglru::aging::age_node(&mut k.p, &mut k.m, 0, &mut sc);
    assert_eq!(
        k.m.memcgs[t].events.oom_kill, 1,
        "{profile:?}: the task of /t is OOM-killed"
    );
    assert_eq!(k.m.events.get(Stat::OomKill), 1);
    assert_eq!(
        (lg(&k, e).min_seq, lg(&k, e).max_seq),
        seqs_e,
        "{profile:?}: /e is not aged"
    );
}

#[test]
fn min_ttl_skips_an_empty_memcg() {
    both(min_ttl_empty_memcg_skipped);
}

// SPDX-License-Identifier: GPL-2.0-only
//! MGLRU-FG (v3, `variants.md` §1; the `fg_*` switches): one test per behaviour, each against the
//! 7.2 preset it is built on, so that it fails if the behaviour is missing; the invariant checker
//! on an FG run; the profile by name and in an experiment file.

mod common;

use lrugen::experiment::Experiment;
use lrugen::kernel::Kernel;
use lrugen::mm::folio::{pg, FolioId};
use lrugen::mm::memcg::{MemcgId, ROOT_MEMCG};
use lrugen::mm::pagecache::{Advice, Slot};
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::mglru::{gen_from_seq, pid, Mglru, MglruConfig, Preset, Profile, MAX_NR_TIERS};
use lrugen::reclaim::Policy;
use std::path::Path;

type K = Kernel<Mglru>;

fn kernel(profile: Profile) -> K {
    let mut cfg = MachineConfig::simple(2048, 0);
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    // each folio on its list when the operation returns: the lifecycle steps are visible
    m.lru_cache_disabled = true;
    let p = Mglru::new(
        &m,
        MglruConfig {
            profile,
            ..MglruConfig::default()
        },
    );
    Kernel::new(m, p)
}

/// A kernel with one file of 16 pages read once each in memcg `t`: the folios, all in one
/// generation (`max_seq − 3` clamped to `min_seq` = 0).
fn read_once(profile: Profile) -> (K, MemcgId, Vec<FolioId>) {
    let mut k = kernel(profile);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    let task = k.m.create_mm(t);
    let f = k.m.create_file("f", 16, Advice::Normal);
    let mut ids = Vec::new();
    for i in 0..16 {
        k.read_page(task, f, i).unwrap();
        match k.m.files[f as usize].slot(i) {
            Slot::Folio(id) => ids.push(id),
            s => panic!("page {i} not cached: {s:?}"),
        }
    }
    k.check().unwrap();
    (k, t, ids)
}

fn seq_of(k: &K, id: FolioId) -> u64 {
    let f = k.m.folios[id];
    let g = k.p.lrugen(f.memcg, f.node());
    let gen = f.gen_counter() as usize - 1;
    (g.min_seq[f.lru_type()]..=g.max_seq)
        .find(|&s| gen_from_seq(s) == gen)
        .unwrap()
}

fn refs(k: &K, id: FolioId) -> u32 {
    k.p.folio_lru_refs(&k.m.folios[id])
}

#[test]
fn counter_is_kept_in_referenced_workingset_and_the_refs_field() {
    for r in 0..=pid::FG_REFS_MAX {
        let mut flags = pg::LRU | pg::DIRTY;
        pid::fg_set_refs(&mut flags, r);
        assert_eq!(pid::fg_refs(flags), r);
        assert_eq!(flags & pg::REFERENCED != 0, r & 1 != 0, "bit 0 is PG_referenced");
        assert_eq!(flags & pg::WORKINGSET != 0, r & 2 != 0, "bit 1 is PG_workingset");
        assert_eq!(flags & (pg::LRU | pg::DIRTY), pg::LRU | pg::DIRTY, "other flags kept");
    }
}

#[test]
fn tier_is_fls_of_refs_minus_one() {
    let sw = Profile::MGLRU_FG.switches;
    let tiers: Vec<usize> = (0..=7).map(|r| pid::tier_from_refs(&sw, r, false)).collect();
    assert_eq!(tiers, [0, 0, 1, 2, 2, 3, 3, 3]);
    assert!(tiers.iter().all(|&t| t < MAX_NR_TIERS));
    // PG_workingset is bit 1 of the counter, not tier 3 as on 7.2
    assert_eq!(pid::tier_from_refs(&sw, 2, true), 1);
    assert_eq!(pid::tier_from_refs(&Profile::V7_2.switches, 1, true), 3);
}

#[test]
fn each_fd_access_counts_up_to_lru_refs_max() {
    let (mut k, _, ids) = read_once(Profile::MGLRU_FG);
    let id = ids[3];
    assert_eq!(refs(&k, id), 1, "a read marks the folio referenced");
    for want in 2..=7 {
        k.p.mark_accessed(&mut k.m, id);
        assert_eq!(refs(&k, id), want);
    }
    assert!(k.p.test_workingset(&k.m.folios[id]) && k.p.test_referenced(&k.m.folios[id]));
    // 7.2 stops counting at 4 (+ PG_workingset)
    let (mut k2, _, ids2) = read_once(Profile::V7_2);
    for _ in 0..8 {
        k2.p.mark_accessed(&mut k2.m, ids2[3]);
    }
    assert!(refs(&k2, ids2[3]) <= 4);
}

#[test]
fn overflow_moves_to_the_next_generation_and_restarts_at_3() {
    for profile in [Profile::MGLRU_FG, Profile::V7_2] {
        let fg = profile.switches.fg_access_promotion;
        let mut p = profile;
        // isolate the overflow from the min_seq promotion
        p.set_switch("fg_min_seq_promotion", false).unwrap();
        let (mut k, t, ids) = read_once(p);
        let id = ids[5];
        let lv = k.p.lv(t, 0);
        // make the folio's generation not the oldest, and not max_seq
        let seq = k.p.lruvecs[lv].max_seq;
        k.p.try_to_inc_max_seq(&mut k.m, lv, seq, 60, true);
        let before = seq_of(&k, id);
        // (aging retired generation 0, and `folio_inc_gen` cleared the counter)
        let top = if fg { pid::FG_REFS_MAX } else { 4 };
        while refs(&k, id) < top {
            k.p.mark_accessed(&mut k.m, id);
        }
        assert_eq!(seq_of(&k, id), before, "{}: no move below the overflow", p.label());
        k.p.mark_accessed(&mut k.m, id);
        if fg {
            assert_eq!(seq_of(&k, id), before + 1, "v3: one generation up");
            assert_eq!(refs(&k, id), 3, "v3: refs restart at 3");
        } else {
            assert_eq!(seq_of(&k, id), before, "7.2 never moves at access time");
        }
        k.check().unwrap();
    }
}

#[test]
fn access_in_min_seq_with_refs_2_moves_to_min_seq_plus_1() {
    for profile in [Profile::MGLRU_FG, Profile::V7_2] {
        let (mut k, t, ids) = read_once(profile);
        let id = ids[0];
        let min_seq = k.p.lrugen(t, 0).min_seq[1];
        assert_eq!(seq_of(&k, id), min_seq);
        k.p.mark_accessed(&mut k.m, id);
        let want = if profile.switches.fg_min_seq_promotion {
            min_seq + 1
        } else {
            min_seq
        };
        assert_eq!(seq_of(&k, id), want, "{}", profile.label());
        assert_eq!(seq_of(&k, ids[1]), min_seq, "an untouched folio stays");
        k.check().unwrap();
    }
}

#[test]
fn placement_is_keyed_on_refs_at_least_2() {
    let (k, t, ids) = read_once(Profile::MGLRU_FG);
    let (k72, _, _) = read_once(Profile::V7_2);
    let mut lg = k.p.lrugen(t, 0).clone();
    lg.max_seq = 10;
    lg.min_seq = [7, 7];
    let mut f = k.m.folios[ids[0]];
    f.flags = pg::ALLOCATED;
    // refs 1 (PG_referenced): 7.2 places it in max_seq − 2, FG in max_seq − 3
    pid::fg_set_refs(&mut f.flags, 1);
    assert_eq!(k.p.folio_seq(&lg, &f, false), 7);
    assert_eq!(k72.p.folio_seq(&lg, &f, false), 8);
    // refs 2 (workingset): max_seq − 2; refs 4 has PG_workingset clear but is workingset too
    pid::fg_set_refs(&mut f.flags, 2);
    assert_eq!(k.p.folio_seq(&lg, &f, false), 8);
    pid::fg_set_refs(&mut f.flags, 4);
    assert_eq!(k.p.folio_seq(&lg, &f, false), 8);
    f.set(pg::ACTIVE);
    assert_eq!(k.p.folio_seq(&lg, &f, false), 10, "active + workingset → max_seq");
    pid::fg_set_refs(&mut f.flags, 1);
    assert_eq!(k.p.folio_seq(&lg, &f, false), 9, "active → max_seq − 1");
}

#[test]
fn fg_mixed_run_keeps_the_invariants() {
    let mut cfg = MachineConfig::simple(4096, 1024);
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    let p = Mglru::new(
        &m,
        MglruConfig {
            profile: Profile::MGLRU_FG,
            ..MglruConfig::default()
        },
    );
    let mut k = Kernel::new(m, p);
    common::mixed_workload(&mut k, Some(800), true, 20_000, |k| {
        if let Some(e) = &k.m.check_failure {
            panic!("mglru-fg: {e}");
        }
    });
    k.check().unwrap();
}

#[test]
fn profile_by_name_and_in_an_experiment_file() {
    let p: Profile = "mglru-fg".parse().unwrap();
    assert_eq!(p, Profile::MGLRU_FG);
    assert_eq!(p.preset, Preset::MglruFg);
    assert_eq!(p.label(), "mglru-fg");
    assert!(
        p.switches.fg_unified_refs && p.switches.reclaim_loop_single_budget,
        "7.2 + FG"
    );
    let mut q = p;
    q.apply_assignment("fg_min_seq_promotion=false").unwrap();
    assert_eq!(q.label(), "mglru-fg+fg_min_seq_promotion=false");
    assert_eq!(kernel(p).p.name(), "mglru-fg");
    let e = Experiment::parse(
        r#"
profiles = ["7.2", "mglru-fg"]
policies = ["mglru", "classic"]
[memcg]
max = 1000
[workload]
kind = "anon"
pages = 2000
write_ratio = 0.5
dist = { kind = "uniform" }
accesses = 10
"#,
        Path::new("t.toml"),
    )
    .unwrap();
    let labels: Vec<&str> = e.variants.iter().map(|v| v.label.as_str()).collect();
    assert_eq!(labels, ["mglru-7.2", "mglru-fg", "classic"]);
    let e = Experiment::parse(
        "[mglru]\nprofile = \"mglru-fg\"\n[mglru.switches]\nfg_pid_gains_1_2 = false\n[memcg]\nmax = 1000\n[workload]\nkind = \"anon\"\npages = 2000\nwrite_ratio = 0.5\ndist = { kind = \"uniform\" }\naccesses = 10\n",
        Path::new("t.toml"),
    )
    .unwrap();
    let v = e.variants.iter().find(|v| v.profile.is_some()).unwrap();
    assert_eq!(v.label, "mglru-fg+fg_pid_gains_1_2=false");
}

#[test]
fn pid_gains_are_1_to_2() {
    // tier 0 refaults 100 of 1000, tier 1 150 of 1000: 2 : 3 (7.2) protects no tier above 0
    // (tier 1 fails), 1 : 2 (FG) lets tier 1 pass and the scan stops at no tier
    let mut lg = lrugen::reclaim::mglru::LruGen::new(0);
    lg.avg_refaulted[1] = [100, 150, 0, 0];
    lg.avg_total[1] = [1000, 1000, 0, 0];
    let fg = pid::get_tier_idx(&lg, &Profile::MGLRU_FG.switches, 1, 1);
    let v72 = pid::get_tier_idx(&lg, &Profile::V7_2.switches, 1, 1);
    assert_eq!(v72, 0);
    assert!(fg > v72, "with 1 : 2 gains tier 1 is not protected: tier_idx {fg}");
}

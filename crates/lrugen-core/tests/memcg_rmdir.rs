// SPDX-License-Identifier: GPL-2.0-only
//! Removing a memcg in the middle of a run (`rmdir`: `mem_cgroup_css_offline`,
//! `mem_cgroup_css_released`/`_free`) and moving a task between memcgs (`cgroup.procs`), as
//! 6.12 does them (docs/memcg-lru.md, "Removing a memcg"): a removed memcg's folios stay charged
//! to it and on its lruvecs (a zombie) until reclaim of its ancestors takes them, reclaim
//! scrapes all it holds (`get_scan_count`, `get_nr_to_scan`, `lruvec_is_sizable` on an offline
//! memcg), MGLRU moves it to the head of the old generation of the memcg LRU
//! (`lru_gen_offline_memcg`) and off it once released (`lru_gen_release_memcg`); its id no
//! longer resolves once no swap entry records it, so its shadows refault as the kernel treats an
//! unknown id. A task's move charges its later pages to the new memcg; its pages stay where
//! they were charged.

use lrugen::control::{self, Action, CtlFile, Script, Unit, When};
use lrugen::kernel::Kernel;
use lrugen::mm::folio::pg;
use lrugen::mm::memcg::{MemcgId, MemcgState, ROOT_MEMCG};
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vm::{vmf, MMAP_BASE_VPN};
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::debugfs::Errno;
use lrugen::reclaim::mglru::memcg_lru::Seg;
use lrugen::reclaim::mglru::{Mglru, MglruConfig, Profile};
use lrugen::reclaim::Policy;
use std::path::Path;

fn machine(pages: u64) -> Machine {
    let mut cfg = MachineConfig::simple(pages, 0);
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    m.random_seed = 7;
    m
}

fn mglru(pages: u64) -> Kernel<Mglru> {
    let m = machine(pages);
    let p = Mglru::new(
        &m,
        MglruConfig {
            profile: Profile::V6_12,
            ..MglruConfig::default()
        },
    );
    Kernel::new(m, p)
}

fn classic(pages: u64) -> Kernel<Classic> {
    let m = machine(pages);
    let p = Classic::with_profile(&m, Profile::V6_12);
    Kernel::new(m, p)
}

/// Pages charged to `memcg` itself, counted off the folio table.
fn folios_of(m: &Machine, memcg: MemcgId) -> u64 {
    (0..m.folios.len() as u32)
        .filter(|&id| {
            let f = m.folios[id];
            f.test(pg::ALLOCATED) && f.test(pg::CHARGED) && f.memcg == memcg
        })
        .count() as u64
}

/// `rmdir`'s refusals (`cgroup_destroy_locked`, kernfs): `EBUSY` while a task is in the memcg or
/// below it or a child is online, `ENOENT` once removed; `cgroup.procs`: `ESRCH` for a task that
/// does not live, `ENODEV` into a removed memcg.
#[test]
fn rmdir_is_refused_while_tasks_or_children_are_in_it() {
    let mut k = mglru(1024);
    let a = k.create_memcg(ROOT_MEMCG, "a");
    let b = k.create_memcg(a, "b");
    let task = k.create_mm(b);
    assert_eq!(k.rmdir_memcg(ROOT_MEMCG), Err(Errno::EBUSY));
    assert_eq!(k.rmdir_memcg(b), Err(Errno::EBUSY), "a task in it");
    assert_eq!(k.rmdir_memcg(a), Err(Errno::EBUSY), "a task below it");
    k.move_task(task, a).unwrap();
    assert_eq!(k.rmdir_memcg(a), Err(Errno::EBUSY), "the task, and an online child");
    k.move_task(task, ROOT_MEMCG).unwrap();
    assert_eq!(k.rmdir_memcg(a), Err(Errno::EBUSY), "an online child");
    assert_eq!(k.rmdir_memcg(b), Ok(()));
    assert_eq!(k.rmdir_memcg(b), Err(Errno::ENOENT));
    assert_eq!(k.move_task(task, b), Err(Errno::ENODEV));
    assert_eq!(k.move_task(99, a), Err(Errno::ESRCH));
    assert_eq!(k.rmdir_memcg(a), Ok(()));
    // nothing was charged to either: freed at once, off the memcg LRU
    assert_eq!(k.m.memcgs[a].state, MemcgState::Freed);
    assert_eq!(k.m.memcgs[b].state, MemcgState::Freed);
    assert!(!k.p.memcg_link(a, 0).linked && !k.p.memcg_link(b, 0).linked);
    k.exit(task);
    assert_eq!(k.move_task(task, ROOT_MEMCG), Err(Errno::ESRCH), "an exited task");
    k.check().unwrap();
}

/// `/p` with two memcgs below it, `/p/g0` and `/p/g1`, each with a task that has read the first
/// 400 pages of its own file (`f0` of 400 pages, `f1` of 4000).
struct Groups {
    p: MemcgId,
    g0: MemcgId,
    g1: MemcgId,
    t0: u32,
    t1: u32,
    f1: u32,
}

fn groups<P: Policy>(k: &mut Kernel<P>) -> Groups {
    let p = k.create_memcg(ROOT_MEMCG, "p");
    let g0 = k.create_memcg(p, "g0");
    let g1 = k.create_memcg(p, "g1");
    let t0 = k.create_mm(g0);
    let t1 = k.create_mm(g1);
    let f0 = k.m.create_file("f0", 400, Advice::Normal);
    let f1 = k.m.create_file("f1", 4000, Advice::Normal);
    for i in 0..400 {
        k.read_page(t0, f0, i).unwrap();
        k.read_page(t1, f1, i).unwrap();
    }
    Groups { p, g0, g1, t0, t1, f1 }
}

/// Two memcgs under `/p`, each with a task reading its own file, the machine smaller than both:
/// `/p/g0`'s task moves to `/p/g1` and `/p/g0` is removed. It is a zombie holding its page
/// cache, counted in `/p`'s `memory.current` and `memory.stat`, until global reclaim has taken
/// every folio of it; then it is freed. Returns the pages it held when removed.
fn deleted_mid_run<P: Policy>(k: &mut Kernel<P>, on_offline: impl Fn(&Kernel<P>, MemcgId)) -> u64 {
    let Groups { p, g0, g1, t0, t1, f1 } = groups(k);
    k.lru_add_drain();
    k.check().unwrap();
    let held = k.m.memcgs[g0].usage_local;
    assert!(held > 100, "g0 holds its file: {held} pages");
    assert_eq!(k.rmdir_memcg(g0), Err(Errno::EBUSY));
    k.move_task(t0, g1).unwrap();
    k.rmdir_memcg(g0).unwrap();
    assert_eq!(k.m.memcgs[g0].state, MemcgState::Offline);
    assert_eq!(k.m.memcgs.by_path("/p/g0"), None, "its directory is gone");
    // the zombie keeps its folios and charges; the parent's hierarchical counters include them
    assert_eq!(k.m.memcgs[g0].usage_local, held);
    assert_eq!(folios_of(&k.m, g0), held);
    let file = |k: &Kernel<P>, c| k.m.memcg_stat(c).get(Stat::NrFilePages);
    assert_eq!(file(k, p), file(k, g0) + file(k, g1));
    assert_eq!(file(k, g0), held as i64);
    assert_eq!(k.m.memcgs[p].usage, held + k.m.memcgs[g1].usage);
    on_offline(k, g0);
    k.check().unwrap();
    // pressure: both tasks read g1's file; the zombie is reclaimed by global reclaim
    let mut freed_at = None;
    for r in 0..20_000u64 {
        let t = if r % 2 == 0 { t0 } else { t1 };
        k.read_page(t, f1, 400 + r % 3600).unwrap();
        let st = k.m.memcgs[g0].state;
        if st == MemcgState::Freed {
            freed_at = Some(r);
            break;
        }
        assert_eq!(st, MemcgState::Offline);
        assert!(k.m.memcgs[g0].usage_local > 0, "offline with pages until freed");
    }
    k.check().unwrap();
    assert!(freed_at.is_some(), "the zombie was freed");
    assert_eq!(folios_of(&k.m, g0), 0, "no folio of the removed memcg is left");
    assert_eq!(k.m.memcgs[g0].usage, 0);
    assert_eq!(file(k, g0), 0);
    // the moved task charged its new pages to g1 only
    assert_eq!(k.m.memcgs[p].usage, k.m.memcgs[g1].usage);
    held
}

#[test]
fn a_memcg_deleted_mid_run_leaves_no_folio_behind_mglru() {
    let mut k = mglru(1024);
    deleted_mid_run(&mut k, |k, g0| {
        // lru_gen_offline_memcg: the head of a bin of the old generation
        let l = k.p.memcg_link(g0, 0);
        assert!(l.linked);
        assert_eq!(l.gen, k.p.memcg_lru[0].old_gen());
        assert_eq!(l.seg, Seg::Default);
        assert_eq!(k.p.memcg_bin(0, l.gen, l.bin)[0], g0);
    });
    // lru_gen_release_memcg once freed
    let g0 = k.m.memcgs.iter().find(|c| c.path == "/p/g0").unwrap().id;
    assert!(!k.p.memcg_link(g0, 0).linked);
    k.p.check_memcg_lru().unwrap();
    // gone from `lru_gen`, and its id refused there (`mem_cgroup_from_id`)
    let text = k.p.debugfs(&k.m, false).unwrap();
    assert!(text.contains("/p/g1") && !text.contains("/p/g0"), "{text}");
    let id = lrugen::reclaim::mglru::admin::memcg_kernel_id(g0);
    let e = k.p.debugfs_write(&mut k.m, &format!("- {id} 0 0")).unwrap_err();
    assert_eq!(e.errno, Errno::EINVAL, "{e:?}");
}

#[test]
fn a_memcg_deleted_mid_run_leaves_no_folio_behind_classic() {
    let mut k = classic(1024);
    deleted_mid_run(&mut k, |_, _| {});
}

/// An offline memcg is scraped: under memcg reclaim of its parent at the default priority, the
/// kernel's `get_scan_count` scans at least `SWAP_CLUSTER_MAX` of a deleted memcg's lists where
/// it would scan nothing of a live one (`size >> priority` is 0 below 4096 pages).
#[test]
fn classic_reclaim_scrapes_an_offline_memcg() {
    let run = |delete: bool| {
        let mut k = classic(4096);
        let p = k.create_memcg(ROOT_MEMCG, "p");
        let g = k.create_memcg(p, "g");
        let t = k.create_mm(g);
        let f = k.m.create_file("f", 512, Advice::Normal);
        for i in 0..512 {
            k.read_page(t, f, i).unwrap();
        }
        k.lru_add_drain();
        k.move_task(t, p).unwrap();
        if delete {
            k.rmdir_memcg(g).unwrap();
        }
        let mut sc = lrugen::reclaim::ScanControl::new(32, lrugen::reclaim::Reclaimer::Direct, Some(p), 0);
        sc.priority = 12;
        lrugen::reclaim::vmscan::shrink_node_memcgs(&mut k.m, &mut k.p, 0, &mut sc);
        k.check().unwrap();
        sc.nr_scanned
    };
    assert_eq!(run(false), 0);
    assert!(run(true) >= 32, "{}", run(true));
}

/// Shadows of a removed memcg: folios of `/g` reclaimed under its own limit leave shadows with
/// its id; its task moves to the root and `/g` is removed (no swap: its id is erased at once).
/// The task reads the pages again. MGLRU: the id resolves to nothing, `mem_cgroup_lruvec(NULL)`
/// is the root's lruvec, which is the refaulting folio's: the refault counts at the root.
/// Classic: `workingset_test_recent` finds no memcg, so no refault is recent (none activated);
/// with `/g` still there the same refaults are tested against its lruvec.
#[test]
fn shadows_of_a_removed_memcg_refault_as_of_an_unknown_id() {
    fn run<P: Policy>(k: &mut Kernel<P>, delete: bool) -> (i64, i64, u64) {
        let g = k.create_memcg(ROOT_MEMCG, "g");
        k.m.memcgs[g].max = 256;
        let t = k.create_mm(g);
        let f = k.m.create_file("f", 320, Advice::Normal);
        // a hot part read twice a round (active), a cold part once: the cold pages are evicted
        // and refault within a distance the active list covers
        for _ in 0..3 {
            for _ in 0..2 {
                for i in 0..128 {
                    k.read_page(t, f, i).unwrap();
                }
            }
            for i in 128..320 {
                k.read_page(t, f, i).unwrap();
            }
        }
        k.move_task(t, ROOT_MEMCG).unwrap();
        if delete {
            k.rmdir_memcg(g).unwrap();
            assert_eq!(k.m.memcgs.from_id(g), None);
        }
        // the statistics the refault test reads, as the 2-second flush worker leaves them
        k.m.flush_stats_now();
        let (r0, a0) = (
            k.m.lruvec_state_local(ROOT_MEMCG, 0, Stat::WorkingsetRefaultFile),
            k.m.lruvec_state_local(ROOT_MEMCG, 0, Stat::WorkingsetActivateFile),
        );
        let mut major = 0;
        for i in 0..320 {
            major += (k.read_page(t, f, i).unwrap() == lrugen::kernel::Access::Major) as u64;
        }
        k.check().unwrap();
        (
            k.m.lruvec_state_local(ROOT_MEMCG, 0, Stat::WorkingsetRefaultFile) - r0,
            k.m.lruvec_state_local(ROOT_MEMCG, 0, Stat::WorkingsetActivateFile) - a0,
            major,
        )
    }
    // MGLRU: another memcg's id counts nothing; the unknown id is the root's
    assert_eq!(run(&mut mglru(1024), false).0, 0);
    let (refaults, _, major) = run(&mut mglru(1024), true);
    assert!(refaults > 0, "{refaults} {major}");
    // classic: counted on the folio's lruvec either way; recent only while the id resolves
    let (refaults, activated, _) = run(&mut classic(1024), false);
    assert!(refaults > 0 && activated > 0, "{refaults} {activated}");
    let (refaults, activated, _) = run(&mut classic(1024), true);
    assert!(refaults > 0, "{refaults}");
    assert_eq!(activated, 0);
}

/// `cgroup.procs`: after the move the task's new page cache and anon pages are charged to the
/// new memcg; its pages charged before stay with the old one, hits on them included.
#[test]
fn a_moved_task_charges_its_new_pages_to_the_new_memcg() {
    fn run<P: Policy>(k: &mut Kernel<P>) {
        let a = k.create_memcg(ROOT_MEMCG, "a");
        let b = k.create_memcg(ROOT_MEMCG, "b");
        let t = k.create_mm(a);
        let f = k.m.create_file("f", 200, Advice::Normal);
        let vma = MMAP_BASE_VPN;
        k.mmap(t, vma, 100, vmf::WRITE, None, 0).unwrap();
        for i in 0..100 {
            k.read_page(t, f, i).unwrap();
            k.access(t, vma + i as u32, true).unwrap();
        }
        assert_eq!((k.m.memcgs[a].usage, k.m.memcgs[b].usage), (200, 0));
        k.move_task(t, b).unwrap();
        for i in 0..200 {
            k.read_page(t, f, i).unwrap();
        }
        let vma2 = vma + 1024;
        k.mmap(t, vma2, 50, vmf::WRITE, None, 0).unwrap();
        for i in 0..100 {
            k.access(t, vma + i as u32, true).unwrap();
        }
        for i in 0..50 {
            k.access(t, vma2 + i as u32, true).unwrap();
        }
        k.lru_add_drain();
        assert_eq!(k.m.memcgs[a].usage, 200, "the old pages stay");
        assert_eq!(k.m.memcgs[b].usage, 150, "100 new file pages and 50 new anon pages");
        assert_eq!(folios_of(&k.m, b), 150);
        k.check().unwrap();
    }
    run(&mut mglru(4096));
    run(&mut classic(4096));
}

fn action(at: u64, file: CtlFile, write: Option<&str>, memcg: Option<&str>) -> Action {
    Action {
        when: When {
            unit: Unit::Steps,
            at,
            every: None,
        },
        file,
        write: write.map(str::to_string),
        memcg: memcg.map(str::to_string),
        line: 0,
    }
}

/// The control script's `mkdir`, `rmdir`, `cgroup.procs` and `memcg = "..."`, each logged with
/// the kernel's return code.
#[test]
fn a_control_script_makes_moves_and_removes() {
    let text = r#"
[[action]]
at_step = 0
mkdir = "a"

[[action]]
at_step = 0
write = "cgroup.procs"
memcg = "a"
value = "0"

[[action]]
at_step = 0
rmdir = "a"

[[action]]
at_step = 0
read = "cgroup.procs"
memcg = "a"

[[action]]
at_step = 0
write = "cgroup.procs"
value = "0"

[[action]]
at_step = 0
rmdir = "a"

[[action]]
at_step = 0
read = "memory.current"
memcg = "a"

[[action]]
at_step = 0
write = "cgroup.procs"
value = "12"
"#;
    let s = Script::parse(text, Path::new("t.toml")).unwrap();
    assert_eq!(
        s.actions[1],
        Action {
            line: 6,
            ..action(0, CtlFile::CgroupProcs, Some("0"), Some("a"))
        }
    );
    assert_eq!(s.actions[0].file, CtlFile::Mkdir);
    let mut k = mglru(1024);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    let task = k.create_mm(t);
    assert_eq!(task, 0);
    let log: Vec<_> = s.actions.iter().map(|a| control::apply(&mut k, t, a, 0, 0)).collect();
    let errnos: Vec<Option<&str>> = log.iter().map(|r| r.errno.as_deref()).collect();
    assert_eq!(
        errnos,
        [
            None,
            None,
            Some("EBUSY"),
            None,
            None,
            None,
            Some("ENOENT"),
            Some("ESRCH")
        ]
    );
    assert_eq!(log[3].text.as_deref(), Some("0\n"));
    let a = k.m.memcgs.iter().find(|c| c.path == "/t/a").unwrap().id;
    assert_eq!(k.m.memcgs[a].state, MemcgState::Freed);
    assert_eq!(k.m.mms[0].memcg, t);
    k.check().unwrap();
}

#[test]
fn bad_directory_actions_name_the_line() {
    for (text, want) in [
        (
            "[[action]]\nat = 0\nrmdir = \"../x\"\n",
            "t.toml:3:9: rmdir = '../x': expected a memcg directory",
        ),
        ("[[action]]\nat = 0\nmkdir = \"\"\n", "t.toml:3:9: mkdir = '': expected"),
        (
            "[[action]]\nat = 0\nmkdir = \"a\"\nvalue = \"1\"\n",
            "t.toml:4:9: `mkdir` takes no `value`",
        ),
        (
            "[[action]]\nat = 0\nread = \"memory.current\"\nmemcg = \"/a\"\n",
            "t.toml:4:9: memcg = '/a': expected",
        ),
    ] {
        let e = Script::parse(text, Path::new("t.toml")).unwrap_err().to_string();
        assert!(e.starts_with(want), "{e}");
    }
}

/// 7.2 (switch `reparent_lru_folios`): at `rmdir` the removed memcg's folios become its
/// parent's at once (their charges, statistics and lists), so nothing is left to reclaim from
/// it and, with no swap entry recording its id, it is freed right away. The parent's
/// hierarchical counters do not move. MGLRU first ages the parent to `MAX_NR_GENS` generations
/// (`max_lru_gen_memcg`) and splices each generation list into the parent's of the same slot.
#[test]
fn on_7_2_a_removed_memcgs_folios_move_to_its_parent() {
    fn run<P: Policy>(k: &mut Kernel<P>, after: impl Fn(&Kernel<P>, MemcgId)) {
        let Groups { p, g0, g1, t0, t1, f1 } = groups(k);
        let held = k.m.memcgs[g0].usage_local;
        assert!(held > 100, "{held}");
        assert_eq!(k.m.memcgs[p].usage_local, 0);
        let file = |k: &Kernel<P>, c| k.m.memcg_stat(c).get(Stat::NrFilePages);
        let (usage, stat) = (k.m.memcgs[p].usage, file(k, p));
        k.move_task(t0, g1).unwrap();
        k.rmdir_memcg(g0).unwrap();
        assert_eq!(k.m.memcgs[g0].state, MemcgState::Freed, "nothing pins it");
        assert_eq!(folios_of(&k.m, g0), 0);
        assert_eq!(k.m.memcgs[g0].usage, 0);
        assert_eq!(folios_of(&k.m, p), held, "the parent's now");
        assert_eq!(k.m.memcgs[p].usage_local, held);
        assert_eq!((k.m.memcgs[p].usage, file(k, p)), (usage, stat));
        assert_eq!(file(k, g0), 0);
        after(k, p);
        k.check().unwrap();
        // reclaim goes on among the parent's and g1's folios
        for r in 0..4000u64 {
            let t = if r % 2 == 0 { t0 } else { t1 };
            k.read_page(t, f1, 400 + r % 3600).unwrap();
        }
        k.check().unwrap();
        assert!(k.m.memcgs[p].usage_local < held, "the reparented folios are reclaimed");
    }
    let m = machine(1024);
    let p = Mglru::new(
        &m,
        MglruConfig {
            profile: Profile::V7_2,
            ..MglruConfig::default()
        },
    );
    run(&mut Kernel::new(m, p), |k, parent| {
        let lg = &k.p.lruvecs[k.p.lv(parent, 0)];
        for ty in 0..2 {
            assert_eq!(lg.max_seq - lg.min_seq[ty] + 1, 4, "max_lru_gen_memcg");
        }
        let g0 = k.m.memcgs.iter().find(|c| c.path == "/p/g0").unwrap().id;
        assert!(!k.p.memcg_link(g0, 0).linked, "released");
        k.p.check_memcg_lru().unwrap();
    });
    let m = machine(1024);
    let p = Classic::with_profile(&m, Profile::V7_2);
    run(&mut Kernel::new(m, p), |k, parent| {
        let on_lists: u32 = k.p.lruvecs[k.m.lruvec(parent, 0)].lists.iter().map(|l| l.len).sum();
        let waiting =
            k.m.lru_add
                .folios()
                .iter()
                .filter(|&&id| k.m.folios[id].memcg == parent)
                .count();
        assert_eq!(on_lists as u64 + waiting as u64, folios_of(&k.m, parent), "spliced");
    });
}

// SPDX-License-Identifier: GPL-2.0-only
//! The kernel profiles as data: every MGLRU behaviour switch changes what a small run observes
//! when it alone flips (so a switch the code ignored would fail its test; in which direction is
//! `switch_effects.rs`'s business), the presets are what
//! `kernel-mglru.md` §17.3 says, and they round-trip through TOML.
//!
//! The run is one fixed script on a tiny machine, replayed three times: under global pressure (no
//! memcg limit: kswapd and direct root reclaim), under a memcg limit, and with little swap. It touches what the switches
//! decide: file pages read once, twice and many times (tiers), anon stores with swap, a file
//! mapping with `MADV_RANDOM` (recency), `MADV_COLD` and `MADV_PAGEOUT` of young anon, dirty file
//! writes, refaults, and debugfs reads and writes (`+` with force_scan, `-` with `max`). Its
//! fingerprint is the misses, `/proc/vmstat`, the `lru_gen_full` text and the debugfs results.

mod common;
use lrugen::kernel::Kernel;
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vm::{vmf, Madv, MMAP_BASE_VPN};
use lrugen::mm::{Machine, MachineConfig};
use lrugen::reclaim::mglru::{Mglru, MglruConfig, Preset, Profile, Switches};
use lrugen::reclaim::Policy;
use lrugen::workload::{Op, ANON_FILE};

const B: u32 = MMAP_BASE_VPN;

/// xorshift64*, for a fixed access order.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n
    }
}

/// Everything one run of the script shows.
fn fingerprint(profile: Profile, limit: Option<u64>, swap: u64) -> String {
    let (mut k, t, task) = common::mglru_setup(profile, 1536, swap, limit);
    let hot = k.m.create_file("hot", 256, Advice::Normal);
    let cold = k.m.create_file("cold", 4096, Advice::Normal);
    let mapped = k.m.create_file("mapped", 256, Advice::Normal);
    let dirty = k.m.create_file("dirty", 512, Advice::Normal);
    let mut out = String::new();
    let mut step = |k: &mut Kernel<Mglru>, op: Op| {
        let r = k.step(op);
        if let Err(e) = r {
            out.push_str(&format!("{op:?}: {e}\n"));
        }
    };
    let anon = B;
    let fmap = B + 4096;
    step(
        &mut k,
        Op::Mmap {
            task,
            vpn: anon,
            pages: 1024,
            file: ANON_FILE,
            pgoff: 0,
            flags: vmf::WRITE as u8,
            compressed_pct: 0,
        },
    );
    step(
        &mut k,
        Op::Mmap {
            task,
            vpn: fmap,
            pages: 256,
            file: mapped,
            pgoff: 0,
            flags: vmf::WRITE as u8,
            compressed_pct: 0,
        },
    );
    step(
        &mut k,
        Op::Madvise {
            task,
            vpn: fmap,
            pages: 128,
            advice: Madv::Random,
        },
    );
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..6u64 {
        for i in 0..256 {
            // hot pages read 1..=4 times per round: every tier
            for _ in 0..=(i % 4) {
                step(
                    &mut k,
                    Op::Read {
                        task,
                        file: hot,
                        index: i,
                    },
                );
            }
        }
        for _ in 0..700 {
            let index = rng.next(4096);
            step(
                &mut k,
                Op::Read {
                    task,
                    file: cold,
                    index,
                },
            );
        }
        for i in 0..1024u32 {
            if rng.next(3) != 0 || round == 0 {
                step(&mut k, Op::Store { task, vpn: anon + i });
            }
        }
        for i in 0..256u32 {
            step(&mut k, Op::Load { task, vpn: fmap + i });
        }
        for i in 0..128u64 {
            step(
                &mut k,
                Op::Write {
                    task,
                    file: dirty,
                    index: round * 64 + i,
                },
            );
        }
        // mapped file pages also read through the file, then paged out
        for i in 128..192u64 {
            step(
                &mut k,
                Op::Read {
                    task,
                    file: mapped,
                    index: i,
                },
            );
        }
        // dirty ones survive the pageout (the flusher's business) still mapped: 6.9+ leaves
        // their accessed bits for the next aging walk to find
        for i in 128..160u32 {
            step(&mut k, Op::Store { task, vpn: fmap + i });
        }
        step(
            &mut k,
            Op::Madvise {
                task,
                vpn: fmap + 128,
                pages: 64,
                advice: Madv::PageOut,
            },
        );
        let advice = if round % 2 == 0 { Madv::PageOut } else { Madv::Cold };
        step(
            &mut k,
            Op::Madvise {
                task,
                vpn: anon + 512,
                pages: 128,
                advice,
            },
        );
    }
    let id = t as u64 + 1;
    let max_seq = k.p.lrugen(t, 0).max_seq;
    let min_seq = k.p.lrugen(t, 0).min_seq;
    let full = k.p.debugfs_read(&k.m, true);
    let cmds = [
        format!("+ {id} 0 {max_seq} 1 1"),
        format!("+ {id} 0 {} 100 0", max_seq + 1),
        format!("- {id} 0 {} max 512", min_seq[0].min(min_seq[1])),
        format!("- {id} 0 {} 1 512", max_seq.saturating_sub(1)),
    ];
    let mut writes = String::new();
    for c in &cmds {
        let r = k.p.debugfs_write(&mut k.m, c);
        writes.push_str(&format!("{c} -> {:?}\n", r.map_err(|e| e.to_string())));
    }
    let plain = k.p.debugfs_read(&k.m, false) + &k.p.debugfs_read(&k.m, true);
    format!(
        "{out}{}\n{full}\n{writes}{plain}",
        lrugen::mm::vmstat::format_proc_vmstat(&k.m.vmstat())
    )
}

/// The runs of the script: global pressure, a memcg limit, and a swap device too small for the
/// anon set (reclaim of anon fails, so folios stay mapped: what `MADV_PAGEOUT` leaves of their
/// accessed bits shows).
fn both(profile: Profile) -> String {
    format!(
        "{}\n=====\n{}\n=====\n{}",
        fingerprint(profile, None, 4096),
        fingerprint(profile, Some(1024), 4096),
        fingerprint(profile, None, 48)
    )
}

/// `name` flipped alone, from each preset (the kernels and `mglru-fg`), changes the fingerprint
/// of at least one of them.
fn assert_switch_matters(name: &str) {
    let mut changed = Vec::new();
    for preset in Preset::ALL.into_iter().chain([Preset::MglruFg]) {
        let base = Profile::of(preset);
        let mut flipped = base;
        let was = base.switches.get(name).unwrap();
        flipped.set_switch(name, !was).unwrap();
        assert_eq!(flipped.flipped(), vec![(Switches::NAMES[index(name)], !was)]);
        if both(base) != both(flipped) {
            changed.push(preset.name());
        }
    }
    assert!(
        !changed.is_empty(),
        "switch {name}: flipping it alone changed nothing from any preset"
    );
}

fn index(name: &str) -> usize {
    Switches::NAMES.iter().position(|&n| n == name).unwrap()
}

macro_rules! switch_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                assert_switch_matters(stringify!($name));
            }
        )*

        /// Every switch has its test here (`pageout_ignore_references`, `readahead_placement` and
        /// `refault_distance`, whose effects the script cannot show, in `switch_effects.rs`;
        /// `fg_access_promotion` in `mglru_fg.rs`).
        #[test]
        fn every_switch_has_a_test() {
            let mut tested: Vec<&str> = vec![$(stringify!($name)),*];
            tested.push("pageout_ignore_references");
            // the classic LRU's alone: `switch_effects.rs`, `classic_ratelimited_stats_flush_deactivates_less`
            tested.push("reclaim_ratelimited_stats_flush");
            // the classic LRU's alone: `switch_effects.rs`,
            // `classic_lru_cost_rotations_swaps_less_of_a_hot_anon_set`
            tested.push("lru_cost_rotations");
            // the classic LRU's alone, a cost-free batch over costs above a quarter of the LRU:
            // `switch_effects.rs`, `classic_lru_note_cost_skips_zero_keeps_the_costs_of_a_batch_that_cost_nothing`
            tested.push("lru_note_cost_skips_zero");
            // needs zram and a swap-cache hit: `switch_effects.rs`,
            // `sync_io_always_frees_swap_frees_the_slot_on_a_swap_cache_hit`
            tested.push("sync_io_always_frees_swap");
            // needs a fork-shared slot on zram read with read-ahead: `switch_effects.rs`,
            // `sync_io_skips_readahead_reads_one_page_of_a_shared_zram_slot`
            tested.push("sync_io_skips_readahead");
            // needs swap on a synchronous device: `switch_effects.rs`,
            // `remove_rw_page_counts_synchronous_swap_io_in_pgpgin_and_pgpgout`
            tested.push("remove_rw_page");
            // `switch_effects.rs`, `proactive_reclaim_stats_count_memory_reclaim_apart`;
            // `mglru_debugfs_write.rs` for the debugfs `-`
            tested.push("proactive_reclaim_stats");
            // the lru_gen text and command grammar only: `switch_effects.rs`,
            // `lru_gen_memcg_id_u64_prints_and_reads_a_64_bit_id`
            tested.push("lru_gen_memcg_id_u64");
            // the ftrace text only:
            // `switch_effects.rs`, `vmscan_reclaim_trace_ids_print_the_pid_and_the_memcg_id`
            tested.push("vmscan_reclaim_trace_ids");
            // the walk's work only (which tables the next walk visits): `switch_effects.rs`,
            // `forced_walk_keeps_nonleaf_young_leaves_the_tables_marked`
            tested.push("forced_walk_keeps_nonleaf_young");
            // needs a parent, two children and memory.low: `switch_effects.rs`,
            // `proportional_protection_lets_the_unprotected_sibling_give_first`
            tested.push("mglru_proportional_protection");
            // needs kernel memory charged and a stream of hundreds of xarray leaves:
            // `switch_effects.rs`, `workingset_lruvec_lru_size_reclaims_shadow_nodes_of_mglru_memcgs`
            tested.push("workingset_lruvec_lru_size");
            // needs a memcg removed mid-run: `memcg_rmdir.rs`,
            // `on_7_2_a_removed_memcgs_folios_move_to_its_parent` (6.12's zombies in the others)
            tested.push("reparent_lru_folios");
            // the variants' effects need read-ahead or a refault pattern the script lacks
            tested.push("readahead_placement");
            tested.push("refault_distance");
            // no folio of the script is read 8 times: `mglru_fg.rs`,
            // `overflow_moves_to_the_next_generation_and_restarts_at_3`
            tested.push("fg_access_promotion");
            // MGLRU-FG options off in the preset: `mglru_fg.rs`,
            // `no_tier_protection_stops_eviction_time_protection` and
            // `refault_distance_activates_refaults_within_the_workingset`
            tested.push("fg_no_tier_protection");
            tested.push("fg_refault_distance");
            // changes no counter, only the engine's swap lock: `contention.rs`,
            // `the_swap_device_lock_is_taken_per_batch_and_contended_by_many_cpus`
            tested.push("swap_percpu_cluster");
            // needs a machine with a scheduler slice (MachineConfig::sched_slice_ns) and global
            // pressure: `switch_effects.rs`,
            // `eevdf_run_to_parity_lets_the_task_reclaim_directly_before_kswapd_runs`
            tested.push("eevdf_run_to_parity");
            // needs a machine with per-CPU page lists (built from a guest's zones) under global
            // pressure: `switch_effects.rs`,
            // `pcp_high_auto_tune_grows_the_list_and_frees_in_runs`
            tested.push("pcp_high_auto_tune");
            // needs a node kswapd gave up on and memcg reclaim that succeeds: `switch_effects.rs`,
            // `kswapd_clear_hopeless_balanced_keeps_a_hopeless_kswapd_asleep`
            tested.push("kswapd_clear_hopeless_balanced");
            // needs per-CPU lists on a machine of two nodes: `switch_effects.rs`,
            // `pcp_free_clears_hopeless_revives_kswapd_of_a_node_with_a_fallback`
            tested.push("pcp_free_clears_hopeless");
            // needs several memcgs and a reclaim pass that stops early: `memcg_lru.rs`,
            // `classic_direct_reclaim_walks_the_memcgs_in_turn`
            tested.push("incremental_cgroup_iteration");
            // memory.reclaim's grammar and loop: `memory_reclaim.rs`
            tested.push("memory_reclaim_swappiness");
            tested.push("memory_reclaim_quarter_batch");
            // move pages between two memory.stat lines, no reclaim decision: `switch_effects.rs`,
            // `pud_and_pgd_pgtable_stats_count_the_upper_levels_in_pagetables`
            tested.push("pud_pgtable_stats");
            tested.push("pgd_pgtable_stats");
            // the charge stock's slots, two memcgs on one CPU: `switch_effects.rs`,
            // `memcg_stock_multi_keeps_two_memcgs_stocked_on_one_cpu`
            tested.push("memcg_stock_multi");
            // memory.reclaim with young neighbours: `switch_effects.rs`,
            // `proactive_mm_walk_updates_neighbours_in_place`
            tested.push("proactive_mm_walk");
            // the memory.stat text only: `switch_effects.rs`, `memory_stat_switches_add_their_lines`
            // (and `memory_stat.rs`, each kernel's lines)
            for n in [
                "memcg_khugepaged_reclaim_stats",
                "memcg_zswap_writeback_stat",
                "memcg_thp_swpout_stats",
                "memcg_numa_balancing_stats",
                "memcg_swap_zero_stats",
                "memcg_swap_io_stats",
                "memcg_zswap_incomp_stat",
            ] {
                tested.push(n);
            }
            tested.sort_unstable();
            let mut all = Switches::NAMES.to_vec();
            all.sort_unstable();
            assert_eq!(tested, all);
        }
    };
}

switch_tests! {
    fg_unified_refs,
    fg_min_seq_promotion,
    fg_pid_gains_1_2,
    vma_has_recency,
    folio_batch_size_31,
    memcg_lru,
    eviction_path_aging,
    dirty_throttling_counts,
    workingset_activate_at_refault,
    look_around_activate,
    look_around_clears_target,
    activate_clears_refs,
    aging_feedback_rework,
    type_selection_rework,
    refault_detection_rework,
    workingset_protection_rework,
    walk_swappiness,
    swappiness_max,
    scan_batch_bounded,
    mm_stats_tyfa,
    dirty_writeback_reactivation,
    fault_mark_accessed,
    folio_seq_referenced,
    set_refs_three_step,
    reclaim_loop_single_budget,
    memcg_reclaim_early_stop,
    node_reclaim_stats,
    workingset_activate_needs_workingset,
}

#[test]
fn the_same_profile_gives_the_same_bytes() {
    assert_eq!(both(Profile::V6_12), both(Profile::V6_12));
}

/// §17.3: 6.12 has the 6.3–6.12 changes and none of the 6.14 rework.
#[test]
fn presets_are_the_kernels() {
    let s = Switches::V6_12;
    assert!(s.vma_has_recency && s.memcg_lru && s.eviction_path_aging && s.mm_stats_tyfa);
    assert!(!s.workingset_protection_rework && !s.type_selection_rework && !s.refault_detection_rework);
    assert!(!s.aging_feedback_rework && !s.walk_swappiness && !s.swappiness_max);
    assert_eq!(Switches::V6_1, {
        let mut x = Switches::V6_12;
        for n in Switches::NAMES {
            x.set(n, false);
        }
        x
    });
    // 7.2 has every change; 6.17 all but the 7.2 ones
    // (the `fg_*` switches are MGLRU-FG's, a variant on top of 7.2: off in every kernel)
    // (and the variants `readahead_placement`, `refault_distance`, proposals that no kernel has)
    let variants = ["readahead_placement", "refault_distance"];
    assert!(variants.iter().all(|n| Switches::MGLRU_FG.get(n) == Some(false)));
    assert!(Preset::ALL
        .iter()
        .all(|p| variants.iter().all(|n| p.switches().get(n) == Some(false))));
    let kernel_switches = || {
        Switches::NAMES
            .iter()
            .filter(move |n| !n.starts_with("fg_") && !variants.contains(n))
    };
    assert!(kernel_switches().all(|n| Switches::V7_2.get(n) == Some(true)));
    // every switch is on in mglru-fg but its two options (an ablation, and the RFC's refault
    // distance, which v3 as modelled dropped) and the other variants
    let fg_options = ["fg_no_tier_protection", "fg_refault_distance"];
    assert!(Switches::NAMES
        .iter()
        .all(|n| Switches::MGLRU_FG.get(n) == Some(!fg_options.contains(n) && !variants.contains(n))));
    assert!(Switches::NAMES
        .iter()
        .filter(|n| n.starts_with("fg_"))
        .all(|n| Switches::V7_2.get(n) == Some(false)));
    let only_7_2 = [
        "dirty_writeback_reactivation",
        "fault_mark_accessed",
        "folio_seq_referenced",
        "set_refs_three_step",
        "reclaim_loop_single_budget",
        "memcg_reclaim_early_stop",
        "node_reclaim_stats",
        "workingset_activate_needs_workingset",
        "sync_io_always_frees_swap",
        "sync_io_skips_readahead",
        "workingset_lruvec_lru_size",
        "reparent_lru_folios",
        "lru_gen_memcg_id_u64",
        "lru_note_cost_skips_zero",
        "memcg_zswap_incomp_stat",
        "memcg_stock_multi",
        "vmscan_reclaim_trace_ids",
        "kswapd_clear_hopeless_balanced",
        "pcp_free_clears_hopeless",
    ];
    for n in kernel_switches() {
        assert_eq!(Switches::V6_17.get(n), Some(!only_7_2.contains(n)), "{n}");
    }
    // the one 7.2 change Debian backported to 6.12.117
    assert_eq!(Switches::V6_12.get("dirty_writeback_reactivation"), Some(true));
    assert_eq!("mainline".parse::<Profile>().unwrap(), Profile::MAINLINE);
    assert_eq!("6.12".parse::<Profile>().unwrap(), Profile::V6_12);
    assert_eq!("7.2".parse::<Profile>().unwrap().preset, Preset::V7_2);
    let e = "6.2".parse::<Profile>().unwrap_err();
    assert!(e.contains("6.1, 6.12, 6.17, 7.2, mainline or mglru-fg"), "{e}");
}

#[test]
fn presets_round_trip_through_toml() {
    for preset in Preset::ALL {
        let p = Profile::of(preset);
        let text = toml::to_string(&p).unwrap();
        let back: Profile = toml::from_str(&text).unwrap();
        assert_eq!(back, p, "{text}");
        let sw = toml::to_string(&p.switches).unwrap();
        assert_eq!(toml::from_str::<Switches>(&sw).unwrap(), p.switches);
    }
    // an unknown switch in a switches table is refused
    let e = toml::from_str::<Switches>("no_such_switch = true")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no_such_switch"), "{e}");
}

#[test]
fn assignments_and_labels() {
    let mut p = Profile::V7_2;
    p.apply_assignment("vma_has_recency=false").unwrap();
    assert_eq!(p.label(), "7.2+vma_has_recency=false");
    assert_eq!(p.flipped(), vec![("vma_has_recency", false)]);
    p.apply_assignment("vma_has_recency=true").unwrap();
    assert_eq!(p, Profile::V7_2);
    let e = p.apply_assignment("vma_has_recncy=false").unwrap_err();
    assert!(
        e.contains("unknown MGLRU switch 'vma_has_recncy'") && e.contains("vma_has_recency"),
        "{e}"
    );
    let e = p.apply_assignment("vma_has_recency=maybe").unwrap_err();
    assert!(e.contains("expected true or false"), "{e}");
    let e = p.apply_assignment("vma_has_recency").unwrap_err();
    assert!(e.contains("NAME=true"), "{e}");
}

#[test]
fn policy_names_follow_the_preset() {
    let m = Machine::new(MachineConfig::simple(256, 0));
    let name = |profile| {
        Mglru::new(
            &m,
            MglruConfig {
                profile,
                ..MglruConfig::default()
            },
        )
        .name()
    };
    assert_eq!(name(Profile::MAINLINE), "mglru");
    assert_eq!(name(Profile::V6_1), "mglru-6.1");
    assert_eq!(name(Profile::V6_12), "mglru-6.12");
}

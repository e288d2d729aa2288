// SPDX-License-Identifier: GPL-2.0-only
//! cgroup v2 `memory.stat` as each kernel prints it.
//!
//! The kernel's `memory.stat` (`memcg_stat_format` in `mm/memcontrol.c`) is three runs of lines:
//! the state items of its `memory_stats[]` table, in order (`slab`, the sum of the two slab items,
//! right after `slab_unreclaimable`); then `pgscan` and `pgsteal`, the sums over the reclaimers;
//! then the events of `memcg_vm_event_stat[]`, in order, less `pgpgin`/`pgpgout` (cgroup v1's).
//! Which lines the tables hold changed from kernel to kernel; here one table, [`LINES`], lists
//! every line any modelled kernel prints, in an order each kernel's own is a subsequence of, and
//! each line says which profile switches print it ([`Line::shown`]; the switch names the kernel
//! change that added the line, see [`Switches`]). A profile's format is the lines its switches
//! show ([`lines`]).
//!
//! The configuration is Debian amd64's: `CONFIG_MEMCG_KMEM`, `CONFIG_ZSWAP`, `CONFIG_SWAP`,
//! `CONFIG_TRANSPARENT_HUGEPAGE`, `CONFIG_NUMA_BALANCING` and `CONFIG_HUGETLB_PAGE` on,
//! `CONFIG_MEMCG_V1` whatever it is (it only decides whether `pgpgin`/`pgpgout` are counted,
//! which cgroup v2 never prints). 7.2's `hugetlb` line is printed only when cgroup2 is mounted with
//! `memory_hugetlb_accounting`, which neither the model nor the guests' mount has, so it is not
//! in the table.
//!
//! Values: what the model counts comes from its counters ([`Value`]); a line for something the
//! model has none of (sockets, vmalloc, zswap, file and shmem THPs, khugepaged, `MADV_FREE`,
//! zero-filled pages, kernel stacks and per-CPU memory kept apart from `kernel`) prints 0, which
//! is the truth in the model's world (`docs/control.md`, "memory.stat"). `shmem` is the guest's
//! boot shmem of a global-pressure run (`mm::BootShmem`, the root memcg's), 0 elsewhere; the model
//! counts those pages as anon folios, so the root's `anon`, not its `file`, holds them.

use std::fmt::Write as _;

use super::vmstat::{Counters, Stat};
use crate::reclaim::mglru::Switches;

/// Where a line's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// A page count, printed in bytes.
    Pages(Stat),
    /// An item kept in bytes (`NR_SLAB_*_B`), printed as is.
    Bytes(Stat),
    /// An item kept in KiB (`NR_KERNEL_STACK_KB`), printed in bytes.
    Kb(Stat),
    /// A count (events; the workingset items, which the kernel prints unscaled).
    Count(Stat),
    /// `slab`: `slab_reclaimable` + `slab_unreclaimable`.
    SlabSum,
    /// `pgscan`: the reclaimers' `pgscan_*` summed.
    PgscanSum,
    /// `pgsteal`: the reclaimers' `pgsteal_*` summed.
    PgstealSum,
    /// Something the model has none of: always 0 (the reason is the doc of the line's entry in
    /// `docs/control.md`).
    Zero,
}

impl Value {
    /// Whether the model counts what the line shows (else it is always 0).
    pub const fn modelled(self) -> bool {
        !matches!(self, Value::Zero)
    }
}

/// A `memory.stat` line.
#[derive(Clone, Copy, Debug)]
pub struct Line {
    /// The kernel's name.
    pub name: &'static str,
    /// Its value in the model.
    pub value: Value,
    /// Whether a kernel with these switches prints it.
    pub shown: fn(&Switches) -> bool,
}

const fn line(name: &'static str, value: Value, shown: fn(&Switches) -> bool) -> Line {
    Line { name, value, shown }
}

/// Every modelled kernel prints it (6.1 has all of these; older kernels are not modelled).
fn always(_: &Switches) -> bool {
    true
}

/// `memcg_numa_balancing_stats` (6.11).
fn numa(s: &Switches) -> bool {
    s.memcg_numa_balancing_stats
}

/// Per-reclaimer reclaim counters as state items (7.2, `node_reclaim_stats`).
fn node(s: &Switches) -> bool {
    s.node_reclaim_stats
}

/// Per-reclaimer reclaim counters as events (before 7.2).
fn event(s: &Switches) -> bool {
    !s.node_reclaim_stats
}

use Value::{Bytes, Count, Kb, Pages, Zero};

/// Every line a modelled kernel prints, in the kernels' order: Debian 6.1.192, 6.12.118 and
/// 7.2.13 print exactly the lines their switches show, in this order (`tests/memory_stat.rs`
/// against each kernel's list and the guests' fixtures); the 6.17 preset's lines are inferred
/// from its switches.
pub const LINES: &[Line] = &[
    // memory_stats[]
    line("anon", Pages(Stat::NrAnonPages), always),
    line("file", Pages(Stat::NrFilePages), always),
    line("kernel", Pages(Stat::MemcgKmem), always),
    line("kernel_stack", Kb(Stat::NrKernelStackKb), always),
    line("pagetables", Pages(Stat::NrPageTablePages), always),
    // 6.0, "mm: add NR_SECONDARY_PAGETABLE to count secondary page table uses": KVM's
    line("sec_pagetables", Zero, always),
    line("percpu", Zero, always),
    line("sock", Zero, always),
    line("vmalloc", Zero, always),
    line("shmem", Pages(Stat::NrShmem), always),
    line("zswap", Zero, always),
    line("zswapped", Zero, always),
    line("zswap_incomp", Zero, |s| s.memcg_zswap_incomp_stat),
    line("file_mapped", Pages(Stat::NrMapped), always),
    line("file_dirty", Pages(Stat::NrDirty), always),
    line("file_writeback", Pages(Stat::NrWriteback), always),
    line("swapcached", Pages(Stat::NrSwapcached), always),
    line("anon_thp", Pages(Stat::NrAnonThps), always),
    line("file_thp", Zero, always),
    line("shmem_thp", Zero, always),
    line("inactive_anon", Pages(Stat::NrInactiveAnon), always),
    line("active_anon", Pages(Stat::NrActiveAnon), always),
    line("inactive_file", Pages(Stat::NrInactiveFile), always),
    line("active_file", Pages(Stat::NrActiveFile), always),
    line("unevictable", Pages(Stat::NrUnevictable), always),
    line("slab_reclaimable", Bytes(Stat::NrSlabReclaimableB), always),
    line("slab_unreclaimable", Bytes(Stat::NrSlabUnreclaimableB), always),
    line("slab", Value::SlabSum, always),
    line("workingset_refault_anon", Count(Stat::WorkingsetRefaultAnon), always),
    line("workingset_refault_file", Count(Stat::WorkingsetRefaultFile), always),
    line("workingset_activate_anon", Count(Stat::WorkingsetActivateAnon), always),
    line("workingset_activate_file", Count(Stat::WorkingsetActivateFile), always),
    line("workingset_restore_anon", Count(Stat::WorkingsetRestoreAnon), always),
    line("workingset_restore_file", Count(Stat::WorkingsetRestoreFile), always),
    line("workingset_nodereclaim", Count(Stat::WorkingsetNodereclaim), always),
    line("pgdemote_kswapd", Count(Stat::PgdemoteKswapd), numa),
    line("pgdemote_direct", Count(Stat::PgdemoteDirect), numa),
    line("pgdemote_khugepaged", Zero, |s| {
        s.memcg_numa_balancing_stats && s.memcg_khugepaged_reclaim_stats
    }),
    line("pgdemote_proactive", Count(Stat::PgdemoteProactive), |s| {
        s.memcg_numa_balancing_stats && s.proactive_reclaim_stats
    }),
    line("pgsteal_kswapd", Count(Stat::PgstealKswapd), node),
    line("pgsteal_direct", Count(Stat::PgstealDirect), node),
    line("pgsteal_khugepaged", Zero, |s| {
        s.node_reclaim_stats && s.memcg_khugepaged_reclaim_stats
    }),
    line("pgsteal_proactive", Count(Stat::PgstealProactive), |s| {
        s.node_reclaim_stats && s.proactive_reclaim_stats
    }),
    line("pgscan_kswapd", Count(Stat::PgscanKswapd), node),
    line("pgscan_direct", Count(Stat::PgscanDirect), node),
    line("pgscan_khugepaged", Zero, |s| {
        s.node_reclaim_stats && s.memcg_khugepaged_reclaim_stats
    }),
    line("pgscan_proactive", Count(Stat::PgscanProactive), |s| {
        s.node_reclaim_stats && s.proactive_reclaim_stats
    }),
    line("pgrefill", Count(Stat::Pgrefill), node),
    line("pgpromote_success", Count(Stat::PgpromoteSuccess), numa),
    // the sums
    line("pgscan", Value::PgscanSum, always),
    line("pgsteal", Value::PgstealSum, always),
    // memcg_vm_event_stat[]
    line("pswpin", Count(Stat::Pswpin), |s| s.memcg_swap_io_stats),
    line("pswpout", Count(Stat::Pswpout), |s| s.memcg_swap_io_stats),
    line("pgscan_kswapd", Count(Stat::PgscanKswapd), event),
    line("pgscan_direct", Count(Stat::PgscanDirect), event),
    line("pgscan_khugepaged", Zero, |s| {
        !s.node_reclaim_stats && s.memcg_khugepaged_reclaim_stats
    }),
    line("pgscan_proactive", Count(Stat::PgscanProactive), |s| {
        !s.node_reclaim_stats && s.proactive_reclaim_stats
    }),
    line("pgsteal_kswapd", Count(Stat::PgstealKswapd), event),
    line("pgsteal_direct", Count(Stat::PgstealDirect), event),
    line("pgsteal_khugepaged", Zero, |s| {
        !s.node_reclaim_stats && s.memcg_khugepaged_reclaim_stats
    }),
    line("pgsteal_proactive", Count(Stat::PgstealProactive), |s| {
        !s.node_reclaim_stats && s.proactive_reclaim_stats
    }),
    line("pgfault", Count(Stat::Pgfault), always),
    line("pgmajfault", Count(Stat::Pgmajfault), always),
    line("pgrefill", Count(Stat::Pgrefill), event),
    line("pgactivate", Count(Stat::Pgactivate), always),
    line("pgdeactivate", Count(Stat::Pgdeactivate), always),
    line("pglazyfree", Zero, always),
    line("pglazyfreed", Zero, always),
    line("swpin_zero", Zero, |s| s.memcg_swap_zero_stats),
    line("swpout_zero", Zero, |s| s.memcg_swap_zero_stats),
    line("zswpin", Zero, always),
    line("zswpout", Zero, always),
    line("zswpwb", Zero, |s| s.memcg_zswap_writeback_stat),
    line("thp_fault_alloc", Count(Stat::ThpFaultAlloc), always),
    line("thp_collapse_alloc", Zero, always),
    line("thp_swpout", Count(Stat::ThpSwpout), |s| s.memcg_thp_swpout_stats),
    line("thp_swpout_fallback", Count(Stat::ThpSwpoutFallback), |s| {
        s.memcg_thp_swpout_stats
    }),
    line("numa_pages_migrated", Count(Stat::NumaPagesMigrated), numa),
    line("numa_pte_updates", Count(Stat::NumaPteUpdates), numa),
    line("numa_hint_faults", Count(Stat::NumaHintFaults), numa),
];

/// The lines a kernel with switches `s` prints, in its order.
pub fn lines(s: &Switches) -> impl Iterator<Item = &'static Line> + '_ {
    LINES.iter().filter(move |l| (l.shown)(s))
}

/// The value of `v` in counters `c` (a memcg's hierarchical ones), pages in bytes of
/// `page_size`; a negative counter reads 0, as `memcg_page_state` clamps it.
pub fn value(c: &Counters, v: Value, page_size: u64) -> u64 {
    let raw = |s: Stat| c.get(s).max(0) as u64;
    match v {
        Value::Pages(s) => raw(s) * page_size,
        Value::Bytes(s) | Value::Count(s) => raw(s),
        Value::Kb(s) => raw(s) * 1024,
        Value::SlabSum => raw(Stat::NrSlabReclaimableB) + raw(Stat::NrSlabUnreclaimableB),
        // khugepaged's are 0 in the model; proactive reclaim counts as direct until
        // `proactive_reclaim_stats`, so the model's proactive counter is 0 where the kernel's sum
        // leaves it out
        Value::PgscanSum => raw(Stat::PgscanKswapd) + raw(Stat::PgscanDirect) + raw(Stat::PgscanProactive),
        Value::PgstealSum => raw(Stat::PgstealKswapd) + raw(Stat::PgstealDirect) + raw(Stat::PgstealProactive),
        Value::Zero => 0,
    }
}

/// `memory.stat` of a memcg whose hierarchical counters are `c`, as the kernel with switches `s`
/// prints it: `name value` per line, sizes in bytes of `page_size`.
pub fn format(c: &Counters, page_size: u64, s: &Switches) -> String {
    let mut o = String::new();
    for l in lines(s) {
        let _ = writeln!(o, "{} {}", l.name, value(c, l.value, page_size));
    }
    o
}

/// The lines of [`format()`] whose values the model counts (`Value::modelled`), as (name, value):
/// what a comparison with a kernel's `memory.stat` can compare.
pub fn modelled(c: &Counters, page_size: u64, s: &Switches) -> Vec<(&'static str, u64)> {
    lines(s)
        .filter(|l| l.value.modelled())
        .map(|l| (l.name, value(c, l.value, page_size)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reclaim::mglru::Profile;

    #[test]
    fn no_profile_prints_a_line_twice() {
        for p in [Profile::V6_1, Profile::V6_12, Profile::V6_17, Profile::V7_2] {
            let names: Vec<_> = lines(&p.switches).map(|l| l.name).collect();
            let mut u = names.clone();
            u.sort_unstable();
            u.dedup();
            assert_eq!(u.len(), names.len(), "{}", p.name());
        }
    }

    /// What a comparison with a kernel compares: the kernel's lines the model counts.
    #[test]
    fn modelled_lines_are_the_kernels_counted_ones() {
        let mut c = Counters::default();
        c.add(Stat::Pswpout, 9);
        for (p, pswpout) in [(Profile::V6_1, None), (Profile::V7_2, Some(9))] {
            let m = modelled(&c, 4096, &p.switches);
            assert_eq!(m.iter().find(|l| l.0 == "pswpout").map(|l| l.1), pswpout);
            assert!(m.iter().all(|l| !["sock", "zswpout", "percpu"].contains(&l.0)));
            assert!(m.iter().any(|l| l.0 == "kernel_stack"));
            assert!(m.iter().any(|l| l.0 == "workingset_refault_anon"));
            let printed: Vec<_> = lines(&p.switches).map(|l| l.name).collect();
            assert!(m.iter().all(|l| printed.contains(&l.0)), "{}", p.name());
        }
    }

    #[test]
    fn sizes_print_in_bytes_and_sums_add_up() {
        let mut c = Counters::default();
        c.add(Stat::NrAnonPages, 3);
        c.add(Stat::NrSlabReclaimableB, 100);
        c.add(Stat::NrSlabUnreclaimableB, 20);
        c.add(Stat::PgscanKswapd, 5);
        c.add(Stat::PgscanDirect, 7);
        let t = format(&c, 4096, &Profile::V6_1.switches);
        assert!(t.starts_with("anon 12288\nfile 0\n"), "{t}");
        assert!(
            t.contains("\nslab_reclaimable 100\nslab_unreclaimable 20\nslab 120\n"),
            "{t}"
        );
        assert!(t.contains("\npgscan 12\n"), "{t}");
    }
}

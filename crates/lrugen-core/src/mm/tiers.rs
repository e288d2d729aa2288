// SPDX-License-Identifier: GPL-2.0-only
//! Memory tiers: each node's abstract distance and tier, the demotion target of each node, the
//! top tier, NUMA balancing's memory-tiering state (`kernel.numa_balancing = 2`), and where a
//! workload's pages are first allocated. Reads `mm/memory-tiers.c` (`establish_demotion_targets`,
//! `node_is_toptier`, `folio_use_access_time`), `mm/mempolicy.c` (`folio_can_map_prot_numa`) and
//! the NUMA balancing sysctls' defaults; what reclaim and the fault path do with it lives in
//! `reclaim::tiering`. docs/memory-tiers.md.
//!
//! A machine without `tiers` ([`crate::mm::MachineConfig::tiers`] `None`) has no state here and
//! behaves as before: every page on node 0, no demotion, no hint faults.

use serde::{Deserialize, Serialize};

/// `MEMTIER_CHUNK_BITS`: a memory tier spans `1 << 7` units of abstract distance.
pub const MEMTIER_CHUNK_BITS: u32 = 7;
/// `MEMTIER_ADISTANCE_DRAM`: the abstract distance of DRAM (the middle of tier 4).
pub const MEMTIER_ADISTANCE_DRAM: u32 = (4 << MEMTIER_CHUNK_BITS) + (1 << (MEMTIER_CHUNK_BITS - 1));
/// `node_distance` of a node to itself (`LOCAL_DISTANCE`).
pub const LOCAL_DISTANCE: u32 = 10;
/// `node_distance` between two nodes when no table is given (`REMOTE_DISTANCE`).
pub const REMOTE_DISTANCE: u32 = 20;
/// `kernel.numa_balancing` bit of memory-tiering mode (`NUMA_BALANCING_MEMORY_TIERING`).
pub const NUMA_BALANCING_MEMORY_TIERING: u32 = 2;

/// Where the pages of a part of each mapping are first allocated: faults at the fraction
/// `from..to` of their VMA (0 its first page, 1 past its last) allocate on `node` (falling back
/// along the node order when it is short, as any allocation does).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// The node.
    pub node: usize,
    /// Start of the range, as a fraction of the mapping (0..=1).
    #[serde(default)]
    pub from: f64,
    /// End of the range (exclusive), as a fraction of the mapping (0..=1).
    #[serde(default = "one")]
    pub to: f64,
}

fn one() -> f64 {
    1.0
}

/// `[machine.tiers]`: memory tiers, demotion and NUMA balancing in memory-tiering mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TierConfig {
    /// Per node, its abstract distance (`memory_dev_type`'s `adistance`; DRAM is
    /// [`MEMTIER_ADISTANCE_DRAM`], slower memory more). Its memory tier is
    /// `adistance >> MEMTIER_CHUNK_BITS`. Empty: every node DRAM.
    pub adistance: Vec<u32>,
    /// The nodes with CPUs (`N_CPU`); the tasks run on the first. Default: node 0.
    pub cpu_nodes: Vec<usize>,
    /// `node_distance` (the SLIT table), one row per node. Empty: 10 to itself, 20 to others.
    pub distance: Vec<Vec<u32>>,
    /// `/sys/kernel/mm/numa/demotion_enabled` (default false, as the kernel's).
    pub demotion_enabled: bool,
    /// `kernel.numa_balancing`: 0 (off, the default here) or 2 (memory tiering). 1 (and 3),
    /// NUMA balancing between CPU nodes, is not modelled.
    pub numa_balancing: u32,
    /// `kernel.numa_balancing_promote_rate_limit_MBps` (default 65536).
    pub promote_rate_limit_mbps: u64,
    /// `kernel.numa_balancing_hot_threshold_ms` (default 1000).
    pub hot_threshold_ms: u64,
    /// `kernel.numa_balancing_scan_delay_ms`: first scan of a task after it starts (default 1000).
    pub scan_delay_ms: u64,
    /// `kernel.numa_balancing_scan_period_min_ms` (default 1000): a task's scan period is this
    /// divided by its scan windows at its first scan (`task_scan_min`,
    /// [`crate::reclaim::tiering::task_scan_min`]); in memory-tiering mode nothing adapts it later
    /// (NUMA balancing between CPU nodes, which does, is not modelled).
    pub scan_period_ms: u64,
    /// `kernel.numa_balancing_scan_period_max_ms` (default 60000): also the period over which
    /// the hot threshold is adjusted (`numa_promotion_adjust_threshold`).
    pub scan_period_max_ms: u64,
    /// `kernel.numa_balancing_scan_size_mb`: address space made PROT_NONE per scan (default 256).
    pub scan_size_mb: u64,
    /// The time a scan spends per PTE it makes PROT_NONE, ns: the task's own runtime in
    /// `task_numa_work`, which delays its next scan 32-fold (`p->node_stamp += 32 * diff`).
    /// 0 (the default): scans cost nothing. The model of a `lrugen kernel --numa` guest takes
    /// what a Debian 6.12 guest under TCG spends, 627 ns (`task_numa_work` traced with kprobes:
    /// 67.3 ms for 107,292 PTEs; `lrugen_kernel::model::GUEST_SCAN_PTE_NS`, docs/memory-tiers.md).
    #[serde(default)]
    pub scan_pte_ns: u64,
    /// Where pages are first allocated (first matching rule); no rule: the CPU's node.
    pub placement: Vec<Placement>,
}

impl Default for TierConfig {
    fn default() -> Self {
        TierConfig {
            adistance: Vec::new(),
            cpu_nodes: vec![0],
            distance: Vec::new(),
            demotion_enabled: false,
            numa_balancing: 0,
            promote_rate_limit_mbps: 65_536,
            hot_threshold_ms: 1_000,
            scan_delay_ms: 1_000,
            scan_period_ms: 1_000,
            scan_period_max_ms: 60_000,
            scan_size_mb: 256,
            scan_pte_ns: 0,
            placement: Vec::new(),
        }
    }
}

impl TierConfig {
    /// Check against a machine of `nodes` nodes; the error names the key.
    pub fn check(&self, nodes: usize) -> Result<(), (String, String)> {
        let e = |k: &str, m: String| Err((format!("machine.tiers.{k}"), m));
        if !self.adistance.is_empty() && self.adistance.len() != nodes {
            return e(
                "adistance",
                format!("{} values for {nodes} nodes: give one per node", self.adistance.len()),
            );
        }
        if self.cpu_nodes.is_empty() {
            return e("cpu_nodes", "at least one node must have CPUs".into());
        }
        if let Some(&n) = self.cpu_nodes.iter().find(|&&n| n >= nodes) {
            return e(
                "cpu_nodes",
                format!("node {n} does not exist (the machine has {nodes})"),
            );
        }
        if !self.distance.is_empty() {
            if self.distance.len() != nodes || self.distance.iter().any(|r| r.len() != nodes) {
                return e("distance", format!("expected a {nodes} x {nodes} table"));
            }
            for (i, r) in self.distance.iter().enumerate() {
                if r[i] != LOCAL_DISTANCE {
                    return e("distance", format!("distance[{i}][{i}] must be {LOCAL_DISTANCE}"));
                }
                if let Some(j) = (0..nodes).find(|&j| j != i && r[j] <= LOCAL_DISTANCE) {
                    return e(
                        "distance",
                        format!("distance[{i}][{j}] must be more than {LOCAL_DISTANCE}"),
                    );
                }
            }
        }
        match self.numa_balancing {
            0 | NUMA_BALANCING_MEMORY_TIERING => {}
            1 | 3 => {
                return e(
                    "numa_balancing",
                    "1 (and 3): NUMA balancing between CPU nodes is not modelled; use 0 or 2".into(),
                )
            }
            v => return e("numa_balancing", format!("{v}: expected 0 or 2")),
        }
        for (k, v) in [
            ("promote_rate_limit_mbps", self.promote_rate_limit_mbps),
            ("scan_period_ms", self.scan_period_ms),
            ("scan_period_max_ms", self.scan_period_max_ms),
            ("scan_size_mb", self.scan_size_mb),
        ] {
            if v == 0 {
                return e(k, "expected more than 0".into());
            }
        }
        for (i, p) in self.placement.iter().enumerate() {
            if p.node >= nodes {
                return e(
                    "placement",
                    format!("rule {i}: node {} does not exist (the machine has {nodes})", p.node),
                );
            }
            if !(0.0..=1.0).contains(&p.from) || !(0.0..=1.0).contains(&p.to) || p.from >= p.to {
                return e(
                    "placement",
                    format!("rule {i}: expected 0 <= from < to <= 1, found {}..{}", p.from, p.to),
                );
            }
        }
        Ok(())
    }
}

/// Per node: NUMA balancing's promotion state (`pgdat->nbp_*`).
#[derive(Clone, Copy, Debug, Default)]
pub struct NodePromo {
    /// Start of the rate limit's current one-second window, ms (`nbp_rl_start`).
    pub rl_start: u64,
    /// `pgpromote_candidate` at the window's start (`nbp_rl_nr_cand`).
    pub rl_nr_cand: u64,
    /// The adjusted hot threshold, ms (0: the default; `nbp_threshold`).
    pub threshold: u64,
    /// Start of the threshold's adjustment period, ms (`nbp_th_start`).
    pub th_start: u64,
    /// `pgpromote_candidate` at the period's start (`nbp_th_nr_cand`).
    pub th_nr_cand: u64,
    /// Candidates seen on this node (the node's `PGPROMOTE_CANDIDATE`).
    pub nr_cand: u64,
}

/// Per task: NUMA balancing's scanner (`mm->numa_next_scan`, `mm->numa_scan_offset`).
#[derive(Clone, Copy, Debug, Default)]
pub struct MmScan {
    /// When the next scan is due, ns; 0: not scheduled yet.
    pub next_ns: u64,
    /// The virtual page the next scan starts at.
    pub offset: u32,
    /// The task's scan period (`numa_scan_period`), ns: [`TierConfig::scan_period_ms`] divided
    /// by the task's scan windows at its first scan (`task_scan_start`); 0 before it.
    pub period_ns: u64,
}

/// The machine's tiers, built from a [`TierConfig`].
#[derive(Clone, Debug)]
pub struct Tiers {
    /// What it was built from.
    pub cfg: TierConfig,
    /// Per node, its memory tier (`adistance >> MEMTIER_CHUNK_BITS`).
    pub tier: Vec<u32>,
    /// Per node, whether it is in a top tier (`node_is_toptier`).
    pub toptier: Vec<bool>,
    /// Per node, its preferred demotion targets (`node_demotion[].preferred`; a bit per node).
    pub preferred: Vec<u64>,
    /// Per node, every node of a lower tier (`lower_tier_mask`: the allowed demotion targets).
    pub lower: Vec<u64>,
    /// The node the tasks run on (`numa_node_id()`).
    pub cpu_node: usize,
    /// Per folio id, the time its PTEs were last made PROT_NONE, ms (the access time kept in
    /// `_last_cpupid` of a slow-tier folio, `folio_xchg_access_time`); grown by the scan up to
    /// the highest folio id it marks (4 bytes a frame at most), empty unless
    /// `numa_balancing = 2`.
    pub access_ms: Vec<u32>,
    /// Frames of the machine (the bound of `access_ms`).
    frames: usize,
    /// Per node, promotion state.
    pub promo: Vec<NodePromo>,
    /// Per address space, its scanner.
    pub scan: Vec<MmScan>,
}

impl Tiers {
    /// Build the tiers of a machine of `nodes` nodes and `frames` page frames (checked first).
    pub fn new(cfg: &TierConfig, nodes: usize, frames: usize) -> Result<Tiers, (String, String)> {
        cfg.check(nodes)?;
        let adist = |n: usize| cfg.adistance.get(n).copied().unwrap_or(MEMTIER_ADISTANCE_DRAM);
        let tier: Vec<u32> = (0..nodes).map(|n| adist(n) >> MEMTIER_CHUNK_BITS).collect();
        let dist = |a: usize, b: usize| match cfg.distance.get(a) {
            Some(r) => r[b],
            None if a == b => LOCAL_DISTANCE,
            None => REMOTE_DISTANCE,
        };
        // the tiers in use, fastest first (`memory_tiers`, ordered by adistance)
        let mut tiers: Vec<u32> = tier.clone();
        tiers.sort_unstable();
        tiers.dedup();
        let mask = |t: u32| (0..nodes).filter(|&n| tier[n] == t).fold(0u64, |m, n| m | 1 << n);
        let mut preferred = vec![0u64; nodes];
        let mut lower = vec![0u64; nodes];
        for n in 0..nodes {
            let ti = tiers.iter().position(|&t| t == tier[n]).unwrap_or(0);
            lower[n] = tiers[ti + 1..].iter().fold(0, |m, &t| m | mask(t));
            // the nearest nodes of the next lower tier (`find_next_best_node` while the
            // distance stays the best one)
            if let Some(&next) = tiers.get(ti + 1) {
                let cands: Vec<usize> = (0..nodes).filter(|&c| tier[c] == next).collect();
                let best = cands.iter().map(|&c| dist(n, c)).min().unwrap_or(0);
                preferred[n] = cands
                    .iter()
                    .filter(|&&c| dist(n, c) == best)
                    .fold(0, |m, &c| m | 1 << c);
            }
        }
        // top tiers: every tier up to the slowest one that holds a CPU node
        let top = cfg.cpu_nodes.iter().map(|&n| tier[n]).max().unwrap_or(0);
        let toptier = tier.iter().map(|&t| t <= top).collect();
        Ok(Tiers {
            cfg: cfg.clone(),
            tier,
            toptier,
            preferred,
            lower,
            cpu_node: cfg.cpu_nodes[0],
            access_ms: Vec::new(),
            frames,
            promo: vec![NodePromo::default(); nodes],
            scan: Vec::new(),
        })
    }

    /// Record that folio `id`'s PTEs were made PROT_NONE at `now_ms`.
    #[inline]
    pub fn set_access_time(&mut self, id: u32, now_ms: u32) {
        let i = id as usize;
        if i >= self.access_ms.len() {
            let n = (i + 1).next_power_of_two().clamp(1024, self.frames.max(i + 1));
            self.access_ms.resize(n, 0);
        }
        self.access_ms[i] = now_ms;
    }

    /// Bytes of state that grow with the pages the scan marks.
    pub fn state_bytes(&self) -> u64 {
        self.access_ms.capacity() as u64 * 4
    }

    /// Whether NUMA balancing runs in memory-tiering mode.
    #[inline]
    pub fn tiering(&self) -> bool {
        self.cfg.numa_balancing & NUMA_BALANCING_MEMORY_TIERING != 0
    }

    /// The demotion target of `node` (`next_demotion_node`): the first of its preferred targets
    /// (the kernel picks one of equally near ones at random; the model the lowest id), or
    /// `None` in the last tier.
    pub fn demotion_target(&self, node: usize) -> Option<usize> {
        let p = self.preferred[node];
        (p != 0).then(|| p.trailing_zeros() as usize)
    }

    /// `can_demote` without the scan control: demotion is enabled and `node` has a lower tier.
    pub fn can_demote(&self, node: usize) -> bool {
        self.cfg.demotion_enabled && self.lower[node] != 0
    }

    /// The node a fault at `vpn` of a VMA spanning `start..end` allocates on first.
    pub fn place(&self, start: u32, end: u32, vpn: u32) -> usize {
        let len = f64::from(end - start);
        let at = f64::from(vpn - start) / len;
        self.cfg
            .placement
            .iter()
            .find(|p| at >= p.from && at < p.to)
            .map_or(self.cpu_node, |p| p.node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two(adist: [u32; 2]) -> Tiers {
        let cfg = TierConfig {
            adistance: adist.to_vec(),
            demotion_enabled: true,
            ..TierConfig::default()
        };
        Tiers::new(&cfg, 2, 16).unwrap()
    }

    #[test]
    fn dram_and_slow_memory_make_two_tiers() {
        let t = two([MEMTIER_ADISTANCE_DRAM, MEMTIER_ADISTANCE_DRAM * 2]);
        assert_eq!(t.tier, [4, 9]);
        assert_eq!(t.demotion_target(0), Some(1));
        assert_eq!(t.demotion_target(1), None);
        assert!(t.can_demote(0) && !t.can_demote(1));
        assert_eq!(t.toptier, [true, false]);
    }

    #[test]
    fn one_tier_has_no_demotion_target() {
        let t = two([MEMTIER_ADISTANCE_DRAM, MEMTIER_ADISTANCE_DRAM + 10]);
        assert_eq!(t.tier, [4, 4]);
        assert!(!t.can_demote(0) && !t.can_demote(1));
        assert_eq!(t.toptier, [true, true]);
    }

    #[test]
    fn the_nearest_lower_node_is_preferred() {
        let cfg = TierConfig {
            adistance: vec![576, 1200, 1200],
            distance: vec![vec![10, 40, 25], vec![40, 10, 30], vec![25, 30, 10]],
            demotion_enabled: true,
            ..TierConfig::default()
        };
        let t = Tiers::new(&cfg, 3, 1).unwrap();
        assert_eq!(t.demotion_target(0), Some(2));
        assert_eq!(t.lower[0], 0b110, "both slow nodes are allowed targets");
    }

    #[test]
    fn placement_by_fraction_of_the_mapping() {
        let cfg = TierConfig {
            placement: vec![Placement {
                node: 1,
                from: 0.25,
                to: 0.75,
            }],
            ..TierConfig::default()
        };
        let t = Tiers::new(&cfg, 2, 1).unwrap();
        assert_eq!([0, 24, 25, 74, 75, 99].map(|v| t.place(0, 100, v)), [0, 0, 1, 1, 0, 0]);
    }

    #[test]
    fn bad_settings_name_their_key() {
        for (cfg, key) in [
            (
                TierConfig {
                    adistance: vec![576],
                    ..TierConfig::default()
                },
                "adistance",
            ),
            (
                TierConfig {
                    numa_balancing: 1,
                    ..TierConfig::default()
                },
                "numa_balancing",
            ),
            (
                TierConfig {
                    cpu_nodes: vec![5],
                    ..TierConfig::default()
                },
                "cpu_nodes",
            ),
            (
                TierConfig {
                    placement: vec![Placement {
                        node: 0,
                        from: 0.5,
                        to: 0.5,
                    }],
                    ..TierConfig::default()
                },
                "placement",
            ),
            (
                TierConfig {
                    distance: vec![vec![10, 20], vec![20, 5]],
                    ..TierConfig::default()
                },
                "distance",
            ),
        ] {
            let (k, msg) = cfg.check(2).unwrap_err();
            assert_eq!(k, format!("machine.tiers.{key}"), "{msg}");
        }
    }
}

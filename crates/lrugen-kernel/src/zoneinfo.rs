// SPDX-License-Identifier: GPL-2.0-only
//! `/proc/zoneinfo` read back: each zone's managed and free pages, watermarks and
//! `lowmem_reserve` (its `protection:` line), as the guest of a global-pressure run
//! (`lrugen kernel --memcg-max max`) had them before the workload started; the model's machine
//! is built from them ([`crate::model::config`], docs/global-pressure.md).

use lrugen::mm::node::{PcpBoot, ZoneBoot, ZoneType};
use serde::{Deserialize, Serialize};

/// One zone of `/proc/zoneinfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneInfo {
    /// Its node.
    pub node: u32,
    /// Its name (`DMA`, `DMA32`, `Normal`, `Movable`, `Device`).
    pub name: String,
    /// `pages free`.
    pub free: u64,
    /// `min`, `low`, `high`.
    pub min: u64,
    /// See [`Self::min`].
    pub low: u64,
    /// See [`Self::min`].
    pub high: u64,
    /// `managed`.
    pub managed: u64,
    /// `protection: (...)`: `lowmem_reserve[]`, by zone index.
    pub protection: Vec<u64>,
    /// Free pages on the per-CPU lists (`count:` of its pagesets, all CPUs), not in `free`.
    pub pcp: u64,
    /// CPUs whose pageset is listed (`cpu: N` lines).
    #[serde(default)]
    pub pcp_cpus: u32,
    /// The last pageset's `high:`, `batch:`, `high_min:` and `high_max:` (the last two printed
    /// from 6.13 on; 0 where not printed).
    #[serde(default)]
    pub pcp_high: u64,
    /// See [`Self::pcp_high`].
    #[serde(default)]
    pub pcp_batch: u64,
    /// See [`Self::pcp_high`].
    #[serde(default)]
    pub pcp_high_min: u64,
    /// See [`Self::pcp_high`].
    #[serde(default)]
    pub pcp_high_max: u64,
    /// Pages on its anon LRU lists (`nr_zone_inactive_anon` + `nr_zone_active_anon`).
    #[serde(default)]
    pub lru_anon: u64,
    /// The node's `nr_shmem` (a per-node stat, printed under the node's first zone; 0 in the
    /// node's other zones).
    #[serde(default)]
    pub node_shmem: u64,
    /// The node's `nr_mapped` (file pages mapped by a process; printed as [`Self::node_shmem`]).
    #[serde(default)]
    pub node_mapped: u64,
}

impl ZoneInfo {
    /// The zone type of its name, for the zones the model has (`Device` is not one).
    pub fn zone_type(&self) -> Option<ZoneType> {
        match self.name.as_str() {
            "DMA" => Some(ZoneType::Dma),
            "DMA32" => Some(ZoneType::Dma32),
            "Normal" => Some(ZoneType::Normal),
            "Movable" => Some(ZoneType::Movable),
            _ => None,
        }
    }

    /// How the model's zone starts: the pages the kernel used (managed less free, less the free
    /// pages of the per-CPU lists, which are the workload's to allocate), its watermarks, its
    /// reserve against the allocations of user pages (`lowmem_reserve[ZONE_MOVABLE]`), and its
    /// per-CPU list ([`Self::pcp_boot`]), whose pages the watermark checks do not count. Counting
    /// the per-CPU pages as used (1,400 pages, 3 % of the 256 MiB guest's free memory) had the
    /// model reclaim 10-40 % more than the kernel on every global-pressure fixture and swap out
    /// 40 times as much on 7.2 classic.
    pub fn boot(&self) -> ZoneBoot {
        ZoneBoot {
            used: self.managed.saturating_sub(self.free + self.pcp),
            wmark: Some([self.min, self.low, self.high]),
            lowmem_reserve: Some(self.protection.get(ZoneType::Movable as usize).copied().unwrap_or(0)),
            shmem: 0,
            pcp: self.pcp_boot(),
        }
    }

    /// The zone's per-CPU list as the guest had it ([`lrugen::mm::node::Pcp`]), where the guest
    /// has one CPU (the model keeps one list per zone) and a managed zone: its count, `high` and
    /// `batch`, and `high_min` and `high_max` as printed (7.2) or as `zone_highsize` computes them
    /// (6.12 prints neither): the low watermark, and an eighth of the managed pages, each at least
    /// `batch << 2`, on the one CPU. (The kernel computed `high_max` from the pages managed when
    /// it set the lists up: on 7.2, 3,888 where an eighth of the managed pages now is 4,156; a
    /// bound the list's `high` reaches only in a long run of allocations.) A `high` of 0 is a list
    /// not used yet, not one that is off: 7.2's DMA prints `high: 0` with `high_min` 37 and
    /// `high_max` 480, and the first refill raises `high` to `high_min`. (A 6.1 guest's list does
    /// not tune itself: the 6.1 profile keeps its `high` and ignores the computed bounds,
    /// `Pcp::auto_tune`.)
    pub fn pcp_boot(&self) -> Option<PcpBoot> {
        if self.pcp_cpus != 1 || self.managed == 0 {
            return None;
        }
        let floor = self.pcp_batch << 2;
        let (high_min, high_max) = if self.pcp_high_max > 0 {
            (self.pcp_high_min, self.pcp_high_max)
        } else {
            (self.low.max(floor), (self.managed / 8).max(floor))
        };
        Some(PcpBoot {
            count: self.pcp,
            high: self.pcp_high,
            high_min,
            high_max,
            batch: self.pcp_batch,
        })
    }
}

/// The guest's shmem that no process maps, per zone (in `zones`' order): each node's `nr_shmem`
/// less its `nr_mapped` (the initramfs's files in the tmpfs root, less the executables and
/// libraries running processes map, which the guest's only other file pages, a handful, do not
/// change much), shared among the node's zones in proportion to their anon LRU pages, at most a
/// zone's anon LRU pages (and what it used). [`ZoneBoot::shmem`] of the model's machine.
///
/// Why unmapped only: a mapped page of a running process's text is referenced whenever reclaim
/// looks at it and stays (classic: the active anon list at boot holds as many pages as are
/// mapped, 414 against 400 in the 7.2 global fixtures; its inactive list holds the rest, 2,040
/// against 2,037 unmapped shmem pages), so the model keeps those with the kernel's other boot
/// memory.
pub fn unmapped_shmem(zones: &[ZoneInfo]) -> Vec<u64> {
    let mut out = vec![0u64; zones.len()];
    let nodes: std::collections::BTreeSet<u32> = zones.iter().map(|z| z.node).collect();
    for n in nodes {
        let mut idx: Vec<usize> = (0..zones.len()).filter(|&i| zones[i].node == n).collect();
        let lru: u64 = idx.iter().map(|&i| zones[i].lru_anon).sum();
        if lru == 0 {
            continue;
        }
        let shmem: u64 = idx.iter().map(|&i| zones[i].node_shmem).sum();
        let mapped: u64 = idx.iter().map(|&i| zones[i].node_mapped).sum();
        let (total, mut left) = (shmem.saturating_sub(mapped), shmem.saturating_sub(mapped));
        // the zone with the most anon LRU pages first: it takes what rounding leaves over
        idx.sort_by_key(|&i| std::cmp::Reverse(zones[i].lru_anon));
        for pass in 0..2 {
            for &i in &idx {
                // shmem no process maps is on the zone's anon LRU, which is part of what it used
                let room = zones[i].boot().used.min(zones[i].lru_anon) - out[i];
                let share = if pass == 0 {
                    total * zones[i].lru_anon / lru
                } else {
                    left
                };
                let take = share.min(left).min(room);
                out[i] += take;
                left -= take;
            }
        }
    }
    out
}

/// Parse a `/proc/zoneinfo` text: every zone in order, those without managed pages included.
/// A malformed number is an error naming its line.
pub fn parse(text: &str) -> Result<Vec<ZoneInfo>, String> {
    let mut out: Vec<ZoneInfo> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        let bad = |what: &str| format!("/proc/zoneinfo line {}: expected {what}, found '{l}'", i + 1);
        if let Some(rest) = l.strip_prefix("Node ") {
            let (node, zone) = rest.split_once(", zone").ok_or_else(|| bad("'Node N, zone NAME'"))?;
            out.push(ZoneInfo {
                node: node.trim().parse().map_err(|_| bad("a node number"))?,
                name: zone.trim().to_string(),
                ..Default::default()
            });
            continue;
        }
        let Some(z) = out.last_mut() else { continue };
        if let Some(rest) = l.strip_prefix("protection:") {
            let inner = rest.trim().trim_start_matches('(').trim_end_matches(')');
            z.protection = inner
                .split(',')
                .map(|v| v.trim().parse::<u64>())
                .collect::<Result<_, _>>()
                .map_err(|_| bad("'protection: (N, N, ...)'"))?;
            continue;
        }
        let mut f = l.split_whitespace();
        let (Some(k), Some(v)) = (f.next(), f.next()) else {
            continue;
        };
        let (key, value) = if k == "pages" && v == "free" {
            ("free", f.next().unwrap_or(""))
        } else {
            (k, v)
        };
        let slot = match key {
            "free" => &mut z.free,
            "min" => &mut z.min,
            "low" => &mut z.low,
            "high" => &mut z.high,
            "managed" => &mut z.managed,
            "nr_shmem" => &mut z.node_shmem,
            "nr_mapped" => &mut z.node_mapped,
            "nr_zone_inactive_anon" | "nr_zone_active_anon" => {
                z.lru_anon += value.parse::<u64>().map_err(|_| bad(&format!("'{key} N'")))?;
                continue;
            }
            "count:" => {
                z.pcp += value.parse::<u64>().map_err(|_| bad("'count: N'"))?;
                continue;
            }
            "cpu:" => {
                z.pcp_cpus += 1;
                continue;
            }
            "high:" => &mut z.pcp_high,
            "batch:" => &mut z.pcp_batch,
            "high_min:" => &mut z.pcp_high_min,
            "high_max:" => &mut z.pcp_high_max,
            _ => continue,
        };
        *slot = value.parse().map_err(|_| bad(&format!("'{key} N'")))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "Node 0, zone      DMA\n  per-node stats\n      nr_inactive_anon 0\n  pages free     3808\n        boost    0\n        min      34\n        low      42\n        high     50\n        promo    58\n        spanned  4095\n        present  3998\n        managed  3840\n        cma      0\n        protection: (0, 181, 181, 181, 181)\n      nr_free_pages 3808\n  pagesets\n    cpu: 0\n              count: 0\n              high:  0\nNode 0, zone    DMA32\n  pages free     41519\n        min      413\n        low      516\n        high     619\n        managed  50601\n        protection: (0, 0, 0, 0, 0)\n  pagesets\n    cpu: 0\n              count: 1400\n              high:  1973\nNode 0, zone   Normal\n  pages free     0\n        min      0\n        low      0\n        high     0\n        managed  0\n        protection: (0, 0, 0, 0, 0)\n";

    /// The node's `nr_shmem` less its `nr_mapped`, in the zone that holds the anon LRU pages, at
    /// most what that zone used; a node with no anon LRU page has none.
    #[test]
    fn unmapped_shmem_goes_to_the_zone_of_the_anon_lru() {
        let text = "Node 0, zone      DMA\n  per-node stats\n      nr_shmem     2437\n      nr_mapped    400\n  pages free     3808\n        managed  3840\n      nr_zone_inactive_anon 0\n      nr_zone_active_anon 0\nNode 0, zone    DMA32\n  pages free     36555\n        managed  49492\n      nr_zone_inactive_anon 2040\n      nr_zone_active_anon 414\n  pagesets\n    cpu: 0\n              count: 1400\n";
        let z = parse(text).unwrap();
        assert_eq!((z[0].node_shmem, z[0].node_mapped), (2437, 400));
        assert_eq!((z[1].lru_anon, z[1].node_shmem), (2454, 0));
        assert_eq!(unmapped_shmem(&z), vec![0, 2037]);
        // at most the zone's anon LRU pages, and none where it has none
        let big = text.replace("nr_shmem     2437", "nr_shmem     20000");
        assert_eq!(unmapped_shmem(&parse(&big).unwrap()), vec![0, 2454]);
        let none = text
            .replace("nr_zone_inactive_anon 2040", "nr_zone_inactive_anon 0")
            .replace("nr_zone_active_anon 414", "nr_zone_active_anon 0");
        assert_eq!(unmapped_shmem(&parse(&none).unwrap()), vec![0, 0]);
    }

    #[test]
    fn zones_watermarks_and_reserves_are_read() {
        let z = parse(TEXT).unwrap();
        assert_eq!(z.len(), 3);
        assert_eq!(
            (
                z[0].name.as_str(),
                z[0].free,
                z[0].min,
                z[0].low,
                z[0].high,
                z[0].managed
            ),
            ("DMA", 3808, 34, 42, 50, 3840)
        );
        assert_eq!(z[0].protection, vec![0, 181, 181, 181, 181]);
        assert_eq!(
            (z[1].name.as_str(), z[1].free, z[1].managed, z[1].pcp),
            ("DMA32", 41_519, 50_601, 1400)
        );
        assert_eq!(z[2].managed, 0);
        let b = z[0].boot();
        assert_eq!((b.used, b.wmark, b.lowmem_reserve), (32, Some([34, 42, 50]), Some(181)));
        // the per-CPU lists' free pages are free for the workload
        assert_eq!(z[1].boot().used, 50_601 - 41_519 - 1400);
    }

    /// The per-CPU list of a one-CPU guest: 7.2 prints `high_min` and `high_max` (the node-0
    /// DMA32 zone of the 7.2 tiering fixtures), 6.12 does not and they are computed, also for a
    /// list not used yet (`high: 0`); a guest of two CPUs gets none (one list per zone).
    #[test]
    fn the_per_cpu_list_is_read_with_its_bounds() {
        let v72 = "Node 0, zone    DMA32\n  pages free     20298\n        min      248\n        low      310\n        high     372\n        managed  33252\n        protection: (0, 0, 0, 0, 0)\n  pagesets\n    cpu: 0\n              count:    1908\n              high:     3233\n              batch:    7\n              high_min: 310\n              high_max: 3888\n  vm stats threshold: 2\n";
        let list = |count, high, high_min, high_max| {
            Some(PcpBoot {
                count,
                high,
                high_min,
                high_max,
                batch: 7,
            })
        };
        let z = parse(v72).unwrap();
        assert_eq!(z[0].boot().pcp, list(1908, 3233, 310, 3888));
        // the watermark line `high 372` is not the list's `high:`
        assert_eq!((z[0].high, z[0].boot().used), (372, 33_252 - 20_298 - 1908));
        let v612 = "Node 0, zone    DMA32\n  pages free     25020\n        min      257\n        low      321\n        high     385\n        managed  34363\n  pagesets\n    cpu: 0\n              count: 708\n              high:  1302\n              batch: 7\n";
        let z = parse(v612).unwrap();
        assert_eq!(z[0].boot().pcp, list(708, 1302, 321, 34_363 / 8));
        // 6.12's DMA: `high: 0` (not used yet), its bounds computed as for any zone
        let dma = parse(TEXT).unwrap();
        assert_eq!(
            dma[0].boot().pcp.map(|p| (p.high, p.high_min, p.high_max)),
            Some((0, 42, 480))
        );
        let two = v612.replace("    cpu: 0\n", "    cpu: 0\n    cpu: 1\n");
        assert_eq!(parse(&two).unwrap()[0].boot().pcp, None);
    }

    #[test]
    fn a_bad_number_names_its_line() {
        let e = parse("Node 0, zone DMA\n  pages free  x\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("'free N'"), "{e}");
        let e = parse("Node 0, zone DMA\n protection: (0, a)\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("protection"), "{e}");
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! `/proc/zoneinfo` read back: each zone's managed and free pages, watermarks and
//! `lowmem_reserve` (its `protection:` line), as the guest of a global-pressure run
//! (`lrugen kernel --memcg-max max`) had them before the workload started; the model's machine
//! is built from them ([`crate::model::config`], docs/global-pressure.md).

use lrugen::mm::node::{ZoneBoot, ZoneType};
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
    /// pages of the per-CPU lists, which are the workload's to allocate and which the kernel
    /// drains under pressure), its watermarks, and its reserve against the allocations of user
    /// pages (`lowmem_reserve[ZONE_MOVABLE]`). Counting the per-CPU pages as used (1,400 pages,
    /// 3 % of the 256 MiB guest's free memory) had the model reclaim 10-40 % more than the
    /// kernel on every global-pressure fixture and swap out 40 times as much on 7.2 classic.
    pub fn boot(&self) -> ZoneBoot {
        ZoneBoot {
            used: self.managed.saturating_sub(self.free + self.pcp),
            wmark: Some([self.min, self.low, self.high]),
            lowmem_reserve: Some(self.protection.get(ZoneType::Movable as usize).copied().unwrap_or(0)),
        }
    }
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
            "count:" => {
                z.pcp += value.parse::<u64>().map_err(|_| bad("'count: N'"))?;
                continue;
            }
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

    #[test]
    fn a_bad_number_names_its_line() {
        let e = parse("Node 0, zone DMA\n  pages free  x\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("'free N'"), "{e}");
        let e = parse("Node 0, zone DMA\n protection: (0, a)\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("protection"), "{e}");
    }
}

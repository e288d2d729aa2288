// SPDX-License-Identifier: GPL-2.0-only
//! Reports: a table a person reads, JSON a script reads, and the kernel's own text formats.

pub mod html;

use crate::mm::vmstat::{self, Stat};
use crate::sim::RunResult;
use std::fmt::Write as _;

/// Format a count with thousands separators.
pub fn thousands(v: i64) -> String {
    let s = v.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// A comparison table: one row per run. Every access is a hit, a minor fault (a fault served
/// without I/O: first touch of anon memory, a page found in the page cache or swap cache) or a
/// miss (I/O), so `accesses = hits + minor faults + misses` and the hit ratio is
/// `1 - (minor faults + misses) / accesses`; the reference caches have no minor faults.
pub fn table(results: &[RunResult]) -> String {
    let headers = [
        "policy",
        "accesses",
        "hit ratio",
        "minor faults",
        "misses",
        "refaults",
        "pgscan",
        "pgsteal",
        "pgactivate",
        "swap out",
        "oom kill",
    ];
    let rows: Vec<[String; 11]> = results
        .iter()
        .map(|r| {
            let k = r.vmstat.is_some();
            let dash = |v: i64| if k { thousands(v) } else { "-".into() };
            [
                r.policy.clone(),
                thousands(r.accesses as i64),
                format!("{:.2}%", r.hit_ratio * 100.0),
                thousands(r.minor_faults as i64),
                thousands(r.misses as i64),
                dash(r.refaults()),
                dash(r.pgscan()),
                dash(r.pgsteal()),
                dash(r.vm(Stat::Pgactivate)),
                dash(r.vm(Stat::Pswpout)),
                dash(r.vm(Stat::OomKill)),
            ]
        })
        .collect();
    let mut w = headers.map(|h| h.len());
    for row in &rows {
        for (i, c) in row.iter().enumerate() {
            w[i] = w[i].max(c.len());
        }
    }
    let mut out = String::new();
    for (i, h) in headers.iter().enumerate() {
        if i == 0 {
            let _ = write!(out, "{h:<width$}", width = w[i]);
        } else {
            let _ = write!(out, "  {h:>width$}", width = w[i]);
        }
    }
    out.push('\n');
    for row in &rows {
        for (i, c) in row.iter().enumerate() {
            if i == 0 {
                let _ = write!(out, "{c:<width$}", width = w[i]);
            } else {
                let _ = write!(out, "  {c:>width$}", width = w[i]);
            }
        }
        out.push('\n');
    }
    out
}

/// The `/proc/vmstat` text of a run (kernel policies).
pub fn proc_vmstat(r: &RunResult) -> Option<String> {
    r.vmstat.as_ref().map(vmstat::format_proc_vmstat)
}

/// The `memory.stat` text of the run's memcg (kernel policies), as the run's kernel prints it
/// (`mm::memory_stat`; `mainline`'s lines for a result that does not say).
pub fn memory_stat(r: &RunResult) -> Option<String> {
    let sw = r
        .kernel_switches
        .unwrap_or(crate::reclaim::mglru::Profile::MAINLINE.switches);
    r.memory_stat
        .as_ref()
        .map(|c| crate::mm::memory_stat::format(c, crate::mm::PAGE_SIZE, &sw))
}

/// Swap-outs by region compressibility (`compressed_pct` → pages; "default" for regions that
/// give none).
fn pswpout_classes(r: &RunResult) -> serde_json::Map<String, serde_json::Value> {
    r.pswpout_by_pct
        .iter()
        .map(|&(p, n)| (if p == 0 { "default".to_string() } else { p.to_string() }, n.into()))
        .collect()
}

/// The text block `lrugen run` prints for a run that swaps to zram or whose regions give their
/// compressibility: `comp_algorithm`, `mm_stat` and `io_stat` as zram0 shows them, and the
/// swap-outs by region compressibility.
pub fn swap_device_block(r: &RunResult) -> Option<String> {
    let classes = r.pswpout_by_pct.iter().any(|&(p, _)| p > 0);
    if r.zram.is_none() && !classes {
        return None;
    }
    let mut out = String::new();
    if let Some(z) = &r.zram {
        out.push_str(&format!("--- {}: /sys/block/zram0 ---\n{}", r.policy, z.format()));
        out.push_str(&format!(
            "compressed {} of {} bytes into {} pool pages; {} pages stored whole (huge) now, {} since set-up\n",
            z.compr_data_size, z.orig_data_size, z.pool_pages, z.huge_pages, z.huge_pages_since
        ));
    }
    if classes {
        let parts: Vec<String> = pswpout_classes(r)
            .into_iter()
            .map(|(k, v)| format!("{k}{}: {v}", if k == "default" { "" } else { "%" }))
            .collect();
        out.push_str(&format!(
            "{}: pswpout by region compressed_pct: {} (incompressible: {})\n",
            r.policy,
            parts.join(", "),
            r.pswpout_incompressible()
        ));
    }
    Some(out)
}

/// JSON of a set of results, with `/proc/vmstat` and `memory.stat` as name → value maps.
pub fn json(results: &[RunResult]) -> serde_json::Value {
    let counters = |c: &Option<vmstat::Counters>| {
        c.as_ref().map(|c| {
            let mut m = serde_json::Map::new();
            for &s in Stat::ALL {
                // `nr_anon_transparent_hugepages` in the unit its name says (2 MiB pages), as
                // `/proc/vmstat` prints it
                let v = if s.in_thps() { c.shown(s) } else { c.get(s) };
                m.insert(s.name().into(), v.into());
            }
            serde_json::Value::Object(m)
        })
    };
    serde_json::Value::Array(
        results
            .iter()
            .map(|r| {
                let mut v = serde_json::json!({
                    "policy": r.policy,
                    "profile": r.profile,
                    "workload": r.workload,
                    "capacity_pages": r.capacity_pages,
                    "accesses": r.accesses,
                    "hits": r.hits,
                    "minor_faults": r.minor_faults,
                    "misses": r.misses,
                    "hit_ratio": r.hit_ratio,
                    "memcg": r.memcg,
                    "error": r.error,
                    "vmstat": counters(&r.vmstat),
                    "memory_stat": counters(&r.memory_stat),
                    "memory_events": r.memory_events,
                });
                if !r.ctl.is_empty() {
                    v["ctl"] = serde_json::to_value(&r.ctl).expect("control records serialize");
                }
                if !r.switches.is_empty() {
                    v["switches"] = serde_json::json!(r.switches);
                }
                if !r.ftrace.is_empty() {
                    v["ftrace"] = r.ftrace.clone().into();
                }
                if let Some(z) = &r.zram {
                    let mut j = serde_json::to_value(z).expect("zram report serializes");
                    j["mm_stat"] = z.mm_stat().into();
                    j["io_stat"] = z.io_stat().into();
                    v["zram"] = j;
                }
                if r.pswpout_by_pct.iter().any(|&(p, _)| p > 0) {
                    v["pswpout_by_compressed_pct"] = pswpout_classes(r).into();
                }
                v
            })
            .collect(),
    )
}

/// The log of a control script as text: a line per action (step, accesses, clock; the write
/// and its result), a read's text after its line.
pub fn ctl_log(log: &[crate::control::Record]) -> String {
    let mut s = String::new();
    for r in log {
        let when = format!(
            "step {} ({} accesses, {:.1} ms)",
            thousands(r.step as i64),
            thousands(r.accesses as i64),
            r.time_ms
        );
        match (&r.write, r.ok) {
            (None, false) => s.push_str(&format!(
                "{when}: read {}: {} ({})\n",
                r.file,
                r.errno.as_deref().unwrap_or("error"),
                r.text.as_deref().unwrap_or("")
            )),
            (None, true) => {
                s.push_str(&format!("{when}: read {}\n", r.file));
                if let Some(t) = &r.text {
                    s.push_str(t);
                    if !t.ends_with('\n') {
                        s.push('\n');
                    }
                }
            }
            (Some(w), true) => {
                let reclaimed = r
                    .reclaimed
                    .map_or(String::new(), |n| format!(", {} pages reclaimed", thousands(n as i64)));
                s.push_str(&format!("{when}: write {} {w:?}: ok{reclaimed}\n", r.file));
            }
            (Some(w), false) => s.push_str(&format!(
                "{when}: write {} {w:?}: {} ({})\n",
                r.file,
                r.errno.as_deref().unwrap_or("error"),
                r.text.as_deref().unwrap_or("")
            )),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(-1234567), "-1,234,567");
    }
}

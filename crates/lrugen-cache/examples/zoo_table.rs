//! The table of docs/cache-zoo.md ("Equal to libCacheSim"), regenerated: reads the output of
//! `scripts/compare-libcachesim.py --golden` (libCacheSim's misses per policy, trace and size) on
//! stdin, runs lrugen's policy of each row on the same shared trace (with the trace's original
//! keys, as libCacheSim hashes them) and prints the markdown rows with both counts, by policy in
//! the order of `ZooPolicy::ALL`, then trace. A row whose counts differ shows both miss ratios. With
//! `--dense`, also runs each policy on the dense ids alone (what `lrugen run` does) and adds
//! that column.
//!
//! ```sh
//! /work/venv/bin/python scripts/compare-libcachesim.py --golden --policy wtinylfu,clockpro > golden.txt
//! cargo run --release -p lrugen-cache --example zoo_table < golden.txt
//! ```

use std::collections::{HashMap, HashSet};
use std::io::BufRead;

use lrugen_cache::{zoo, zoo_keyed, ZooPolicy};
use lrugen_trace::testdata::find_shared_trace;
use lrugen_trace::{load_dense, open, DenseTrace};

/// The shared trace of each trace name the script prints.
fn trace_file(name: &str) -> Option<&'static str> {
    Some(match name {
        "OLTP" => "arc/OLTP.lis.zst",
        "P3" => "arc/P3.lis.zst",
        "P12" => "arc/P12.lis.zst",
        "cloudPhysicsIO" => "cloudphysics/cloudPhysicsIO.oracleGeneral.bin",
        _ => return None,
    })
}

fn commas(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn main() -> Result<(), String> {
    let dense_column = std::env::args().any(|a| a == "--dense");
    let mut traces: HashMap<String, (DenseTrace, Vec<u64>)> = HashMap::new();
    let mut trace_order: Vec<String> = Vec::new();
    // (policy's place in ZooPolicy::ALL, trace's place in the input, row)
    let mut rows: Vec<(usize, usize, String)> = Vec::new();
    let dense_head = if dense_column {
        " lrugen misses, dense ids |"
    } else {
        ""
    };
    let dense_rule = if dense_column { "---:|" } else { "" };
    println!(
        "| policy | trace | C (pages) | requests | lrugen misses | libCacheSim misses |{dense_head} miss ratio (both) |"
    );
    println!("|---|---|---:|---:|---:|---:|{dense_rule}---:|");
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("stdin: {e}"))?;
        let f: Vec<&str> = line.split_whitespace().collect();
        if line.starts_with("//") || f.len() != 6 {
            continue;
        }
        let parse = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("expected a number, got {s:?} in {line:?}"))
        };
        let (policy, name, cap, requests, want) = (f[0], f[1], parse(f[2])?, parse(f[3])?, parse(f[4])?);
        let Ok(p) = policy.parse::<ZooPolicy>() else {
            continue; // lru and other non-zoo rows
        };
        let file = trace_file(name).ok_or_else(|| format!("unknown trace {name:?}"))?;
        if !trace_order.iter().any(|n| n == name) {
            trace_order.push(name.to_string());
        }
        if !traces.contains_key(name) {
            let path = find_shared_trace(file)?;
            let t = load_dense(&path, None).map_err(|e| e.to_string())?;
            let mut seen = HashSet::new();
            let mut keys = Vec::new();
            for k in open(&path, None).map_err(|e| e.to_string())? {
                let k = k.map_err(|e| e.to_string())?;
                if seen.insert(k) {
                    keys.push(k);
                }
            }
            traces.insert(name.to_string(), (t, keys));
        }
        let (t, keys) = &traces[name];
        if t.nr_requests != requests {
            return Err(format!(
                "{name}: lrugen reads {} requests, libCacheSim {requests}",
                t.nr_requests
            ));
        }
        let r = zoo_keyed(t, keys, p, cap as usize);
        let ratio = if r.misses == want {
            format!("{:.4}", r.miss_ratio())
        } else {
            format!("{:.4} / {:.4}", r.miss_ratio(), want as f64 / requests as f64)
        };
        let dense = if dense_column {
            format!(" {} |", commas(zoo(t, p, cap as usize).misses))
        } else {
            String::new()
        };
        let row = format!(
            "| {policy} | {name} | {} | {} | {} | {} |{dense} {ratio} |",
            commas(cap),
            commas(requests),
            commas(r.misses),
            commas(want)
        );
        let order = ZooPolicy::ALL.iter().position(|&q| q == p).unwrap_or(usize::MAX);
        let trace = trace_order.iter().position(|n| n == name).unwrap_or(usize::MAX);
        rows.push((order, trace, row));
    }
    // the docs' order: by policy, then trace (a stable sort keeps the sizes in order)
    rows.sort_by_key(|&(p, t, _)| (p, t));
    for (_, _, row) in rows {
        println!("{row}");
    }
    Ok(())
}

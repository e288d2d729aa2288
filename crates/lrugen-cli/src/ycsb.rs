// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen run --ycsb`: a preset letter or a YCSB workload properties file (`-P`), with
//! `--ycsb-property KEY=VALUE` overrides (`-p`), as a [`WorkloadSpec::Ycsb`].

use lrugen::workload::gen::properties;
use lrugen::workload::gen::ycsb::{PropertyEffect, YcsbWorkload, RUN_PROPERTIES};
use lrugen::workload::WorkloadSpec;
use std::collections::BTreeMap;
use std::path::Path;

/// Records loaded when neither `--records` nor `recordcount` says.
pub const DEFAULT_RECORDS: u64 = 100_000;

/// A YCSB run as the command line and the properties file give it.
pub struct YcsbRun {
    /// The workload.
    pub spec: WorkloadSpec,
    /// `maxexecutiontime`, in ms, when the properties give one.
    pub runtime_ms: Option<u64>,
    /// Properties that change nothing the model simulates (a note for the user).
    pub ignored: Vec<String>,
    /// The workload came from a properties file: the run is YCSB's, reported as YCSB reports
    /// it (under the engine).
    pub from_file: bool,
}

/// Where a property came from, for its error: `FILE:LINE` or `--ycsb-property`.
struct Given {
    key: String,
    value: String,
    origin: String,
}

fn whole(origin: &str, key: &str, value: &str) -> Result<u64, String> {
    value
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("{origin}: {key}={value}: expected a whole number"))
}

/// The run of `--ycsb` (a preset `a`..`f`, or a properties file), the `--ycsb-property`
/// overrides in order, and the explicit `--records`, `--accesses` and `--threadcount`, which win
/// over the properties, as YCSB's command-line options win over its `-P` file.
pub fn run_spec(
    ycsb: Option<&str>,
    overrides: &[String],
    records: Option<u64>,
    operations: Option<u64>,
    default_operations: u64,
    threadcount: Option<u32>,
) -> Result<YcsbRun, String> {
    let mut given = Vec::new();
    let from_file = ycsb.is_some_and(|v| Path::new(v).is_file());
    let base = match ycsb {
        None => "a".to_string(),
        Some(v) if Path::new(v).is_file() => {
            let text = std::fs::read_to_string(v).map_err(|e| format!("--ycsb {v}: {e}"))?;
            let props = properties::parse(&text).map_err(|e| format!("{v}:{}: {}", e.line, e.message))?;
            given.extend(props.into_iter().map(|p| Given {
                key: p.key,
                value: p.value,
                origin: format!("{v}:{}", p.line),
            }));
            "core".to_string()
        }
        Some(v) => {
            if v.parse::<YcsbWorkload>().is_err() {
                return Err(format!(
                    "--ycsb {v}: expected a preset a, b, c, d, e or f, or a YCSB workload properties file (no such file)"
                ));
            }
            v.to_string()
        }
    };
    for o in overrides {
        let (k, v) = o
            .split_once('=')
            .ok_or_else(|| format!("--ycsb-property {o}: expected KEY=VALUE"))?;
        given.push(Given {
            key: k.trim().to_string(),
            value: v.to_string(),
            origin: "--ycsb-property".into(),
        });
    }
    let start = if base == "core" {
        YcsbWorkload::core_defaults()
    } else {
        base.parse().map_err(|e| format!("--ycsb: {e}"))?
    };
    let (mut file_records, mut file_ops, mut file_threads, mut runtime_ms) = (None, None, None, None);
    let mut props = BTreeMap::new();
    for g in &given {
        if RUN_PROPERTIES.contains(&g.key.as_str()) {
            let n = whole(&g.origin, &g.key, &g.value)?;
            let positive = || {
                if n == 0 {
                    Err(format!("{}: {}={}: expected at least 1", g.origin, g.key, g.value))
                } else {
                    Ok(n)
                }
            };
            match g.key.as_str() {
                "recordcount" => file_records = Some(positive()?),
                "operationcount" => {
                    file_ops = Some(if n == 0 {
                        return Err(format!(
                            "{}: operationcount=0 (run until maxexecutiontime) is not modelled: expected \
                             an operation count, and maxexecutiontime to stop the run earlier",
                            g.origin
                        ));
                    } else {
                        n
                    })
                }
                "threadcount" => {
                    let t = positive()?;
                    file_threads =
                        Some(u32::try_from(t).map_err(|_| format!("{}: threadcount={t}: too many", g.origin))?)
                }
                _ => runtime_ms = Some(positive()?.saturating_mul(1000)),
            }
            continue;
        }
        props.insert(g.key.clone(), g.value.clone());
        // each property checked as it is added, so that an error names its line
        start
            .with_properties(&props)
            .map_err(|e| format!("{}: {}", g.origin, e.0))?;
    }
    let (_, effects) = start.with_properties(&props).map_err(|e| format!("--ycsb: {}", e.0))?;
    // the spec keeps what shapes the workload; the rest is noted for the user
    let ignored: Vec<String> = effects
        .into_iter()
        .filter(|(_, e)| *e == PropertyEffect::Ignored)
        .map(|(k, _)| k)
        .collect();
    props.retain(|k, _| !ignored.contains(k));
    Ok(YcsbRun {
        spec: WorkloadSpec::Ycsb {
            workload: base,
            records: records.or(file_records).unwrap_or(DEFAULT_RECORDS),
            operations: operations.or(file_ops).unwrap_or(default_operations),
            threadcount: threadcount.or(file_threads).unwrap_or(1),
            properties: props,
        },
        runtime_ms,
        ignored,
        from_file,
    })
}

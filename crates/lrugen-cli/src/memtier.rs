// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen run --memtier 'OPTIONS'`: memtier_benchmark's own options (`--ratio=0:1
//! --key-pattern=G:G --key-maximum=1000000 -d 1000 -t 4 -c 50 --test-time=60`) as the memtier
//! workload: one key-value server (Redis is single-threaded) holding the values in anonymous
//! memory, populated in order, then the GETs of every connection.

use lrugen::workload::gen::memtier::{KeyPattern, KeyPatterns};
use lrugen::workload::WorkloadSpec;

/// A memtier run as its options give it.
pub struct MemtierRun {
    /// The workload.
    pub spec: WorkloadSpec,
    /// `--test-time`, in ms.
    pub runtime_ms: Option<u64>,
    /// Options accepted that change nothing the model simulates.
    pub ignored: Vec<String>,
}

/// Options that change nothing lrugen models (where the server is, how results are printed).
const IGNORED: [&str; 14] = [
    "server",
    "port",
    "protocol",
    "pipeline",
    "hide-histogram",
    "print-percentiles",
    "distinct-client-seed",
    "randomize",
    "json-out-file",
    "out-file",
    "hdr-file-prefix",
    "key-prefix",
    "authenticate",
    "debug",
];

fn number(opt: &str, v: &str) -> Result<u64, String> {
    v.trim()
        .parse::<u64>()
        .map_err(|_| format!("--memtier: --{opt}={v}: expected a whole number"))
}

/// The run of memtier's `options` (one string, as typed after `memtier_benchmark`), with
/// `compressed_pct` for zram.
pub fn run_spec(options: &str, compressed_pct: u8) -> Result<MemtierRun, String> {
    let (mut threads, mut clients, mut requests) = (4u64, 50u64, 10_000u64);
    let (mut key_min, mut key_max, mut data_size) = (0u64, 10_000_000u64, 32u64);
    let mut patterns = KeyPatterns::default();
    let mut test_time = None;
    let mut ignored = Vec::new();
    let mut words = options.split_whitespace();
    while let Some(w) = words.next() {
        let (name, inline) = match w.strip_prefix("--") {
            Some(rest) => match rest.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (rest.to_string(), None),
            },
            None => match w {
                "-s" => ("server".into(), None),
                "-p" => ("port".into(), None),
                "-P" => ("protocol".into(), None),
                "-d" => ("data-size".into(), None),
                "-t" => ("threads".into(), None),
                "-c" => ("clients".into(), None),
                "-n" => ("requests".into(), None),
                "-a" => ("authenticate".into(), None),
                "-D" => ("debug".into(), None),
                _ => {
                    return Err(format!(
                        "--memtier: '{w}': expected memtier_benchmark options such as --ratio=0:1 -d 1000 -t 4 -c 50"
                    ))
                }
            },
        };
        let flags = ["hide-histogram", "distinct-client-seed", "randomize", "debug"];
        let value = if flags.contains(&name.as_str()) {
            String::new()
        } else {
            match inline {
                Some(v) => v,
                None => words
                    .next()
                    .ok_or_else(|| format!("--memtier: --{name}: expected a value"))?
                    .to_string(),
            }
        };
        match name.as_str() {
            "ratio" => {
                let (set, get) = value
                    .split_once(':')
                    .ok_or_else(|| format!("--memtier: --ratio={value}: expected SET:GET, e.g. 0:1"))?;
                if number("ratio", set)? != 0 || number("ratio", get)? == 0 {
                    return Err(format!(
                        "--memtier: --ratio={value}: only GETs are modelled after the populate; expected 0:N"
                    ));
                }
            }
            "key-pattern" => {
                patterns = value
                    .parse()
                    .map_err(|e: lrugen::workload::gen::GenError| format!("--memtier: --key-pattern: {e}"))?
            }
            "key-minimum" => key_min = number(&name, &value)?,
            "key-maximum" => key_max = number(&name, &value)?,
            "data-size" => data_size = number(&name, &value)?,
            "threads" => threads = number(&name, &value)?,
            "clients" => clients = number(&name, &value)?,
            "requests" => requests = number(&name, &value)?,
            "test-time" => test_time = Some(number(&name, &value)?),
            "key-median" | "key-stddev" => {
                return Err(format!(
                    "--memtier: --{name}: only memtier's default median and deviation of G are modelled (the \
                     middle of the key range, a sixth of it)"
                ))
            }
            n if IGNORED.contains(&n) => ignored.push(n.to_string()),
            n => {
                return Err(format!(
                    "--memtier: unknown or unmodelled memtier option '--{n}': expected --ratio, --key-pattern, \
                     --key-minimum, --key-maximum, --data-size (-d), --threads (-t), --clients (-c), --requests (-n), \
                     --test-time, or an option that changes nothing in the model (docs/benchmarks.md)"
                ))
            }
        }
    }
    if key_max < key_min {
        return Err(format!(
            "--memtier: --key-minimum={key_min} above --key-maximum={key_max}"
        ));
    }
    for (n, v) in [
        ("threads", threads),
        ("clients", clients),
        ("requests", requests),
        ("data-size", data_size),
    ] {
        if v == 0 {
            return Err(format!("--memtier: --{n}=0: expected at least 1"));
        }
    }
    let connections = threads.saturating_mul(clients);
    // with --test-time, the requests are what the time allows: no GET takes less than a
    // request's own CPU time (10 µs)
    let total = match test_time {
        Some(s) => s.saturating_mul(100_000).max(1),
        None => connections.saturating_mul(requests),
    };
    let keys = (key_max - key_min)
        .checked_add(1)
        .ok_or_else(|| format!("--memtier: keys {key_min}..={key_max}: too many; expected a smaller --key-maximum"))?;
    let spec = WorkloadSpec::Memtier {
        keys,
        value_bytes: data_size,
        pattern: match patterns.get {
            KeyPattern::Sequential => "S",
            KeyPattern::Random => "R",
            KeyPattern::Gaussian { .. } => "G",
            KeyPattern::Parallel => "P",
        }
        .into(),
        requests: total,
        compressed_pct,
    };
    spec.validate().map_err(|e| format!("--memtier: {e}"))?;
    Ok(MemtierRun {
        spec,
        runtime_ms: test_time.map(|s| s.saturating_mul(1000)),
        ignored,
    })
}

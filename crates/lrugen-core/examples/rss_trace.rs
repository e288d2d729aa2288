// SPDX-License-Identifier: GPL-2.0-only
//! Writes the traces of the memory benchmark (`benches/rss.sh`, `docs/memory.md`): an lrugen
//! binary trace (zstd body) of REQUESTS page reads over exactly PAGES distinct pages, whatever
//! its length: the first PAGES requests read every page once (0, 1, …), the rest draw pages from
//! fio's Zipf(0.9) over the PAGES pages with scattered ranks (seed 1). Traces of different lengths
//! therefore have the same footprint, and only their length differs.
//!
//! `cargo run --release -p lrugen-core --example rss_trace -- OUT REQUESTS PAGES`

use lrugen::workload::dist::{Dist, Sampler};
use lrugen_trace::{KeySpace, LrugenWriter, TraceOp, TraceRecord, WriterOptions};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [out, n, p] => n
            .parse::<u64>()
            .ok()
            .zip(p.parse::<u64>().ok())
            .map(|(n, p)| (PathBuf::from(out), n, p)),
        _ => None,
    };
    let Some((out, requests, pages)) = parsed.filter(|&(_, n, p)| p >= 1 && n >= p) else {
        eprintln!("usage: rss_trace OUT REQUESTS PAGES (REQUESTS >= PAGES >= 1)");
        return ExitCode::FAILURE;
    };
    let options = WriterOptions {
        key_space: KeySpace::Pages,
        zstd_level: Some(1),
        record_count: Some(requests),
    };
    let run = || -> std::io::Result<()> {
        let mut w = LrugenWriter::create(&out, options)?;
        let mut zipf = Sampler::new(Dist::Zipf { theta: 0.9 }, pages, 1);
        for i in 0..requests {
            let key = if i < pages { i } else { zipf.next_key() };
            w.write(&TraceRecord {
                op: TraceOp::Read,
                key,
                len: 4096,
                file: 0,
                time: 0,
            })?;
        }
        w.finish_file()?;
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rss_trace: {}: {e}", out.display());
            ExitCode::FAILURE
        }
    }
}

//! LRU's miss-ratio curve of a trace as CSV, from one pass of stack distances (`lru_mrc`):
//! `capacity,misses,miss_ratio` at every capacity from 0 to the curve's saturation (the largest
//! stack distance, past which it is flat) in `--step` increments, the saturation always
//! included.
//!
//! ```sh
//! cargo run --release -p lrugen-cache --example mrc -- ../shared/traces/arc/OLTP.lis.zst --step 100 > oltp-mrc.csv
//! ```

use std::io::{BufWriter, Write};

use lrugen_cache::lru_mrc;
use lrugen_trace::load_dense;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut step = 1usize;
    while let Some(a) = args.next() {
        if a == "--step" {
            let v = args.next().ok_or("--step needs a value")?;
            step = v.parse().map_err(|_| format!("--step: not a number: {v:?}"))?;
            if step == 0 {
                return Err("--step must be at least 1".into());
            }
        } else if path.is_none() {
            path = Some(a);
        } else {
            return Err(format!("unexpected argument {a:?}"));
        }
    }
    let path = path.ok_or("usage: mrc TRACE [--step N]")?;
    let t = load_dense(std::path::Path::new(&path), None).map_err(|e| format!("{path}: {e}"))?;
    let m = lru_mrc(&t);
    let out = std::io::stdout();
    let mut w = BufWriter::new(out.lock());
    let row = |w: &mut BufWriter<_>, c: usize| {
        let r = m.result(c);
        writeln!(w, "{c},{},{:.6}", r.misses, r.miss_ratio())
    };
    let io = |e: std::io::Error| e.to_string();
    writeln!(w, "capacity,misses,miss_ratio").map_err(io)?;
    let sat = m.saturation();
    for c in (0..=sat).step_by(step) {
        row(&mut w, c).map_err(io)?;
    }
    if sat % step != 0 {
        row(&mut w, sat).map_err(io)?;
    }
    w.flush().map_err(io)
}

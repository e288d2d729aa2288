// SPDX-License-Identifier: GPL-2.0-only
//! Checks made before a run starts, so that a bad argument costs nothing: counts given on the
//! command line, `--debugfs-write` commands, output directories, and the model state a run needs
//! against the memory budget (`--memory-budget`).

use lrugen::budget::{self, human, Bound, Estimate};
use lrugen::reclaim::mglru::debugfs::{self, Command};
use lrugen::reclaim::mglru::Profile;
use std::path::Path;

/// Help of `--memory-budget` (run, bench, exp).
pub const MEMORY_BUDGET_HELP: &str = "The most memory the model's state may take (e.g. 512M, 8G): a \
    run that needs more is refused before it starts, naming the option that makes it large, and a \
    run whose state grows past it (the distinct pages of a trace) stops with an error. Default: \
    half of the machine's RAM (MemTotal).";

/// Parse `--memory-budget` and make it the process's limit; returns the limit in bytes.
pub fn memory_budget(given: Option<&str>) -> Result<u64, String> {
    if let Some(s) = given {
        let pages = lrugen::experiment::size::parse_pages(s).map_err(|e| format!("--memory-budget: {e}"))?;
        if pages == 0 {
            return Err(format!(
                "--memory-budget {s}: expected at least one page (4 KiB), e.g. 512M or 8G"
            ));
        }
        budget::set_limit(pages.saturating_mul(lrugen::mm::PAGE_SIZE));
    }
    Ok(budget::limit())
}

/// `path:line` or `path: record N (byte offset B)`.
fn at(path: &Path, loc: lrugen_trace::Location) -> String {
    match loc {
        lrugen_trace::Location::Line(l) => format!("{}:{l}", path.display()),
        other => format!("{}: {other}", path.display()),
    }
}

/// Count the page references of a trace before it is loaded (the dense trace takes 4 bytes
/// each), refusing it as soon as they alone are over the budget: a line such as ARC's
/// `0 99999999999 0 0` (a run of 10^11 blocks) is refused after reading it, not loaded. `flag` is
/// the option that named the trace.
pub fn trace_refs(flag: &str, path: &Path, format: Option<lrugen_trace::TraceFormat>) -> Result<u64, String> {
    let lim = budget::limit();
    let max = lim / budget::BYTES_PER_TRACE_REF;
    let mut r = lrugen_trace::open(path, format).map_err(|e| e.to_string())?;
    // an index file's record is one page reference; its high bit (a file page of a mixed trace)
    // is the replay's business, not the count's: count records
    if matches!(
        r.format(),
        lrugen_trace::TraceFormat::Index32 | lrugen_trace::TraceFormat::Index64
    ) {
        let options = lrugen_trace::ReadOptions {
            format: Some(r.format()),
            ..Default::default()
        };
        let mut recs = lrugen_trace::open_records(path, &options).map_err(|e| e.to_string())?;
        let mut n = 0u64;
        while let Some(rec) = recs.next() {
            rec.map_err(|e| e.to_string())?;
            n += 1;
            if n > max {
                return Err(over(flag, path, recs.position(), max, lim));
            }
        }
        return Ok(n);
    }
    let mut n = 0u64;
    while let Some(k) = r.next() {
        k.map_err(|e| e.to_string())?;
        n += 1;
        if n > max {
            return Err(over(flag, path, r.position(), max, lim));
        }
    }
    Ok(n)
}

/// A trace with more than `max` references (where the reader is: `pos`) over the budget `lim`.
fn over(flag: &str, path: &Path, pos: lrugen_trace::Location, max: u64, lim: u64) -> String {
    format!(
        "{flag} {}: the trace holds more than {} page references so far, which need \
         more than {} of model state loaded, over the memory budget of {} (--memory-budget); \
         expected a shorter trace (e.g. a line asking for fewer blocks), or a larger --memory-budget",
        at(path, pos),
        lrugen::report::thousands(max.min(i64::MAX as u64) as i64),
        human(max * budget::BYTES_PER_TRACE_REF),
        human(lim)
    )
}

/// Refuse a run whose estimated state is over the budget. `what` names the option (with its
/// value) that sets the workload's size, `steps_flag` the one that sets its steps.
pub fn fits(what: &str, steps_flag: Option<&str>, e: &Estimate) -> Result<(), String> {
    let lim = budget::limit();
    if e.bytes <= lim {
        return Ok(());
    }
    let pages = |n: u64| lrugen::report::thousands(n.min(i64::MAX as u64) as i64);
    let (by, expected) = match (e.bound, steps_flag, e.steps) {
        (Bound::Steps, Some(f), Some(s)) => (
            format!(" (up to {} distinct pages touched by {f} {s})", pages(e.touched_pages)),
            format!("a smaller {}, fewer {f}", what.split(' ').next().unwrap_or(what)),
        ),
        _ => (
            format!(" ({} pages)", pages(e.touched_pages)),
            format!("a smaller {}", what.split(' ').next().unwrap_or(what)),
        ),
    };
    Err(format!(
        "{what}: needs up to ~{} of model state{by}, over the memory budget of {} (--memory-budget); \
         expected {expected} or a larger --memory-budget",
        human(e.bytes),
        human(lim)
    ))
}

/// Parse a count (`--accesses 1000000`, `--records 1e9`, `--capacity 1_000`): a whole number,
/// optionally with `_` separators or as `Ne M` (a power of ten). A clap value parser: clap names
/// the option in front of the message. A leading `-` reaches here because the options taking
/// counts allow it (`allow_negative_numbers`), so that `--capacity -5` says what was expected
/// rather than "unexpected argument '-5'".
pub fn count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err("expected a non-negative whole number (0, 1, 2, ..., or 1e6 for a million)".into());
    }
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit() || b == b'_') && !x.starts_with('_');
    let too_large = || format!("too large: expected at most {} (2^64 - 1)", u64::MAX);
    let plain = |x: &str| -> Result<u64, String> {
        let v: String = x.chars().filter(|&c| c != '_').collect();
        v.parse::<u64>().map_err(|_| too_large())
    };
    if digits(t) {
        return plain(t);
    }
    if let Some((m, e)) = t.split_once(['e', 'E']) {
        if digits(m) && digits(e) {
            let m = plain(m)?;
            let e: u32 = plain(e)?.try_into().map_err(|_| too_large())?;
            return 10u64
                .checked_pow(e)
                .and_then(|p| p.checked_mul(m))
                .ok_or_else(too_large);
        }
    }
    Err("expected a non-negative whole number (0, 1, 2, ..., or 1e6 for a million)".into())
}

/// [`count`] that fits 32 bits (`--jobs`, `--cpus`, `--files`, `--swappiness`).
pub fn count32(s: &str) -> Result<u32, String> {
    let v = count(s)?;
    u32::try_from(v).map_err(|_| format!("too large: expected at most {}", u32::MAX))
}

/// The most pages a simulated machine can have: folio ids are 32 bits, `u32::MAX` is the null
/// link.
pub fn max_machine_pages() -> u64 {
    lrugen::mm::folio::NIL as u64 - 1
}

/// Refuse a memcg limit whose default machine (`limit + max(limit, 16384)` pages, twice the
/// limit) cannot be built, naming the option that set it.
pub fn limit_fits(flag: &str, given: &str, limit: u64) -> Result<(), String> {
    let machine = limit.saturating_add(limit.max(16_384));
    let max = max_machine_pages();
    if machine > max {
        return Err(format!(
            "{flag} {given}: {} pages is too large: the machine is sized to hold the memcg twice \
             over and the model has at most {} pages (32-bit page frame numbers, just under 16 TiB); \
             expected at most {} pages, or give --memory",
            lrugen::report::thousands(limit.min(i64::MAX as u64) as i64),
            lrugen::report::thousands(max as i64),
            lrugen::report::thousands((max / 2) as i64)
        ));
    }
    Ok(())
}

/// Check `--debugfs-write` before the run: the syntax of every command (the kernel's
/// `lru_gen_seq_write` grammar under `profile`), and the ids the run's machine will have: memcg 1
/// (the root) or 2 (`/t`, the workload's), and a node below `nr_nodes`. The generation numbers
/// depend on what the run does (a `+` needs one at most `max_seq`, a `-` one at most
/// `max_seq - 2`, both read from `lru_gen` at the end), so they are checked when the commands run.
pub fn debugfs_write(cmds: &str, profile: Profile, nr_nodes: usize) -> Result<Vec<Command>, String> {
    let flag = "--debugfs-write";
    let parsed = debugfs::parse_commands(cmds, profile).map_err(|e| format!("{flag}: {e}"))?;
    for (i, c) in parsed.iter().enumerate() {
        if !(1..=2).contains(&c.memcg_id()) {
            return Err(format!(
                "{flag}: lru_gen command {i} `{}`: expected memcg id 1 (the root) or 2 (/t, the \
                 workload's memcg), found {}",
                command_text(cmds, i),
                c.memcg_id()
            ));
        }
        if c.node() >= nr_nodes {
            return Err(format!(
                "{flag}: lru_gen command {i} `{}`: expected node id 0..{nr_nodes} (the machine has \
                 {nr_nodes} node(s)), found {}",
                command_text(cmds, i),
                c.node()
            ));
        }
    }
    Ok(parsed)
}

/// The `i`th non-empty command of a write, as written.
fn command_text(cmds: &str, i: usize) -> String {
    cmds.split([',', ';', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .nth(i)
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(count("0"), Ok(0));
        assert_eq!(count("1000"), Ok(1000));
        assert_eq!(count("1_000_000"), Ok(1_000_000));
        assert_eq!(count("1e6"), Ok(1_000_000));
        assert_eq!(count("25E2"), Ok(2500));
        assert_eq!(count(&u64::MAX.to_string()), Ok(u64::MAX));
        assert!(count("-5").unwrap_err().contains("non-negative"));
        assert!(count("1e20").unwrap_err().contains("too large"));
        assert!(count("99999999999999999999").unwrap_err().contains("too large"));
        for bad in ["", "1.5", "e6", "1e", "x", "_1", "1e-3", "0x10"] {
            assert!(count(bad).unwrap_err().contains("expected"), "{bad:?}");
        }
        assert_eq!(count32("4294967295"), Ok(u32::MAX));
        assert!(count32("4294967296").unwrap_err().contains("too large"));
    }

    #[test]
    fn limits() {
        assert!(limit_fits("--capacity", "1000", 1000).is_ok());
        let e = limit_fits("--capacity", "1e18", 1_000_000_000_000_000_000).unwrap_err();
        assert!(e.starts_with("--capacity 1e18: "), "{e}");
        assert!(e.contains("expected at most 2,147,483,647 pages"), "{e}");
        assert!(limit_fits("--capacity", "x", 2_147_483_647).is_ok());
        assert!(limit_fits("--capacity", "x", 2_147_483_648).is_err());
    }

    #[test]
    fn debugfs_writes() {
        let p = Profile::V6_17;
        assert_eq!(debugfs_write("+ 2 0 3; - 1 0 0 200 64", p, 1).unwrap().len(), 2);
        assert!(debugfs_write("+ 3 0 3", p, 1)
            .unwrap_err()
            .contains("expected memcg id 1"));
        let e = debugfs_write("+ 2 0 3, - 2 1 0", p, 1).unwrap_err();
        assert!(e.contains("command 1 `- 2 1 0`") && e.contains("node id 0..1"), "{e}");
        let e = debugfs_write("garbage", p, 1).unwrap_err();
        assert!(e.starts_with("--debugfs-write: ") && e.contains("garbage"), "{e}");
        assert!(debugfs_write("", p, 1).unwrap_err().contains("at least one command"));
    }
}

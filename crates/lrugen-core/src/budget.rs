// SPDX-License-Identifier: GPL-2.0-only
//! The memory budget: how much model state a run may hold, what a configuration would need, and
//! the check made while it runs.
//!
//! The model's state follows the pages a run touches (the page cache, page tables and swap arrays
//! are sparse or grow on use, see `mm::pagecache`), so what a configuration needs is bounded by
//! the pages it can touch: at most its footprint (the pages of its files and regions, or the page
//! references of a trace), and at most what its steps can bring in (one page a step plus the
//! read-ahead window around it). [`estimate`] computes that bound before the run starts, so that
//! a configuration over the budget is refused before any work, naming what makes it large; where
//! the bound cannot be known (the distinct pages of a trace), the run itself checks the state it
//! holds every [`CHECK_EVERY`] steps ([`check_machine`]) and stops with an error.
//!
//! The limit is process-wide ([`set_limit`]); by default it is half of the machine's RAM
//! (`MemTotal` of `/proc/meminfo`), or [`FALLBACK_LIMIT`] where that cannot be read.

use crate::mm::folio::Folio;
use crate::mm::pagecache::{CHUNK_SLOTS, DIR_SLOTS};
use crate::mm::Machine;
use crate::sim::{PolicyKind, RunConfig};
use crate::workload::WorkloadSpec;
use std::sync::atomic::{AtomicU64, Ordering};

/// The limit where the machine's RAM cannot be read: 4 GiB.
pub const FALLBACK_LIMIT: u64 = 4 << 30;

/// How often a run compares the state it holds with the limit, in steps.
pub const CHECK_EVERY: u64 = 4096;

/// Model state per resident page: its folio record, its page-cache slot or PTE, and its share of
/// the LRU and reverse-map bookkeeping.
pub const BYTES_PER_RESIDENT: u64 = std::mem::size_of::<Folio>() as u64 + 8;
/// Per page touched and no longer resident: its shadow entry.
pub const BYTES_PER_SHADOW: u64 = 8;
/// A page-cache chunk (64 slots and a count), the cost of a touch far from every other.
pub const BYTES_PER_CHUNK: u64 = (CHUNK_SLOTS * 8 + 1) as u64;
/// A directory block of the page cache (512 chunk numbers, 128 MiB of file).
pub const BYTES_PER_DIR: u64 = (DIR_SLOTS * 4) as u64;
/// Per page held in a loaded trace (its dense id).
pub const BYTES_PER_TRACE_REF: u64 = 4;
/// Per distinct page while a trace is renumbered (a hash map entry with its overhead).
pub const BYTES_PER_TRACE_KEY: u64 = 24;

static LIMIT: AtomicU64 = AtomicU64::new(0);

/// The machine's RAM in bytes (`MemTotal`), if `/proc/meminfo` tells it.
pub fn machine_ram() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The default limit: half the machine's RAM, or [`FALLBACK_LIMIT`].
pub fn default_limit() -> u64 {
    machine_ram().map_or(FALLBACK_LIMIT, |r| r / 2)
}

/// Set the limit in bytes (0: back to the default).
pub fn set_limit(bytes: u64) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// The limit in bytes.
pub fn limit() -> u64 {
    match LIMIT.load(Ordering::Relaxed) {
        0 => default_limit(),
        l => l,
    }
}

/// What bounds the pages an estimate counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The workload's size (its files, region, records, keys, or a trace's references).
    Footprint,
    /// The number of steps it runs (each brings in at most a read-ahead window).
    Steps,
}

/// The model state a run configuration can need at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// Bytes, at most.
    pub bytes: u64,
    /// Pages of the workload (files and regions), or page references of a trace.
    pub footprint_pages: u64,
    /// Steps the workload runs, if known before it runs.
    pub steps: Option<u64>,
    /// Distinct pages it can touch, at most.
    pub touched_pages: u64,
    /// Pages resident at once, at most (the machine's pages).
    pub resident_pages: u64,
    /// Which bounds `touched_pages`.
    pub bound: Bound,
}

/// Steps `w` runs, if known from its parameters, and the pages one step can touch at most besides
/// read-ahead.
fn steps_of(w: &WorkloadSpec) -> Option<(u64, u64)> {
    Some(match w {
        WorkloadSpec::FileRead { accesses, .. } | WorkloadSpec::Fio { accesses, .. } => (*accesses, 1),
        WorkloadSpec::Anon { pages, accesses, .. } => (pages.saturating_add(*accesses), 1),
        WorkloadSpec::Ycsb {
            workload,
            operations,
            properties,
            ..
        } => {
            // an operation is a few page operations (a read and a write of a record's pages);
            // a scan reads up to maxscanlength records
            let w = crate::workload::ycsb_workload(workload, properties).ok()?;
            let record = 2 * (w.record_bytes().div_ceil(4096) + 1);
            let scan = if w.scan > 0.0 {
                (w.max_scan_length as u64 * w.record_bytes()).div_ceil(4096) + 1
            } else {
                0
            };
            (*operations, record.max(4) + scan)
        }
        WorkloadSpec::Memtier {
            keys,
            value_bytes,
            requests,
            ..
        } => {
            let pages = keys.saturating_mul(*value_bytes).div_ceil(4096);
            (pages.saturating_add(*requests), value_bytes.div_ceil(4096) + 1)
        }
        _ => return None,
    })
}

/// The model state `cfg` can need at most. `trace_refs`: the page references of its trace, if
/// it replays one (counted before loading it).
pub fn estimate(cfg: &RunConfig, trace_refs: Option<u64>) -> Estimate {
    let jobs = cfg.jobs.max(1) as u64;
    let ra = cfg.machine.ra_pages.max(1);
    let (footprint, steps, per_step) = match (&cfg.workload, trace_refs) {
        (WorkloadSpec::Trace { .. }, refs) => (refs.unwrap_or(0), refs, 1),
        (w, _) => {
            let f = w.footprint_pages().saturating_mul(jobs);
            match steps_of(w) {
                Some((s, per)) => (f, Some(s.saturating_mul(jobs)), per + 2 * ra),
                None => (f, None, 1),
            }
        }
    };
    let by_steps = steps.map_or(u64::MAX, |s| s.saturating_mul(per_step));
    let (touched, bound) = if by_steps < footprint {
        (by_steps, Bound::Steps)
    } else {
        (footprint, Bound::Footprint)
    };
    let resident = touched.min(cfg.machine.total_pages());
    // chunks of page-cache slots (or PTE tables): a step touches one page and the read-ahead
    // window around it, contiguous pages in a few chunks and directory blocks; touches spread
    // over the key space take one chunk each
    let span = (CHUNK_SLOTS * DIR_SLOTS) as u64;
    let chunks = touched
        .min(steps.map_or(u64::MAX, |s| s.saturating_mul(per_step / CHUNK_SLOTS as u64 + 2)))
        .min(footprint.div_ceil(CHUNK_SLOTS as u64) + 64);
    let dirs = chunks.min(footprint.div_ceil(span) + 64);
    let top = footprint / span * 4;
    let mut bytes = resident
        .saturating_mul(BYTES_PER_RESIDENT)
        .saturating_add(touched.saturating_mul(BYTES_PER_SHADOW))
        .saturating_add(chunks.saturating_mul(BYTES_PER_CHUNK))
        .saturating_add(dirs.saturating_mul(BYTES_PER_DIR))
        .saturating_add(top);
    // the dense renumbering of the reference caches: chunks of u32 over the same touches
    let dense = chunks
        .saturating_mul(CHUNK_SLOTS as u64 * 4)
        .saturating_add(dirs.saturating_mul(BYTES_PER_DIR));
    if cfg.machine.tiers.as_ref().is_some_and(|t| t.numa_balancing != 0) {
        // NUMA balancing's access times: 4 bytes per frame up to the highest one it marks
        bytes = bytes.saturating_add(cfg.machine.total_pages().saturating_mul(4));
    }
    if cfg.workload.uses_anon() {
        // swap slots: count, cache, owner and zram bytes per slot used
        bytes = bytes.saturating_add(touched.min(cfg.machine.swap_pages).saturating_mul(14));
    }
    let trace_steps = steps.filter(|_| trace_refs.is_some());
    if let Some(refs) = trace_steps {
        bytes = bytes
            .saturating_add(refs.saturating_mul(BYTES_PER_TRACE_REF))
            .saturating_add(touched.saturating_mul(BYTES_PER_TRACE_KEY));
    }
    match cfg.policy {
        // plain LRU (`lrugen_cache::Lru`): a slot number per page and, per slot of the cache,
        // its links and page; over keys renumbered densely (a sparse map of the keys)
        PolicyKind::Lru => {
            bytes = bytes
                .saturating_add(touched.saturating_mul(4))
                .saturating_add(resident.saturating_mul(12))
                .saturating_add(dense);
        }
        // the zoo: links, a location and a counter byte per page
        PolicyKind::Cache(_) => {
            bytes = bytes.saturating_add(touched.saturating_mul(13)).saturating_add(dense);
        }
        // every step's key, next use and flag, and the heap of resident pages
        PolicyKind::Opt => {
            bytes = bytes
                .saturating_add(steps.unwrap_or(footprint).saturating_mul(20))
                .saturating_add(touched.saturating_mul(8))
                .saturating_add(dense);
        }
        _ => {}
    }
    Estimate {
        bytes,
        footprint_pages: footprint,
        steps,
        touched_pages: touched,
        resident_pages: resident,
        bound,
    }
}

/// A size in bytes for messages: `1.5 GiB`, `12 MiB`, `512 KiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (u, s) in UNITS {
        if bytes >= s {
            let v = bytes as f64 / s as f64;
            return if v < 10.0 {
                format!("{v:.1} {u}")
            } else {
                format!("{v:.0} {u}")
            };
        }
    }
    format!("{bytes} B")
}

/// The page frames a run may create: a PTE names a frame in 27 bits
/// ([`crate::mm::vm::pte::PFN_MASK`]), and a run checks its frames only every [`CHECK_EVERY`]
/// steps, so it stops [`FRAME_MARGIN`] short of 2^27 (448 GiB of 4 KiB frames touched).
pub const FRAME_LIMIT: u64 = (crate::mm::vm::pte::PFN_MASK as u64 + 1) - FRAME_MARGIN;
/// Frames [`CHECK_EVERY`] steps may create between two checks, 4,096 a step on average (a step
/// allocates a page, or a read-ahead window of `ra_pages`).
pub const FRAME_MARGIN: u64 = CHECK_EVERY * 4096;

/// An error when a run has created `frames` page frames, [`FRAME_LIMIT`] or more.
pub fn check_frames(frames: u64) -> Result<(), String> {
    if frames >= FRAME_LIMIT {
        return Err(format!(
            "the run touched {frames} page frames, the most a model's PTE can name less a margin \
             ({FRAME_LIMIT}, 448 GiB): give the machine or the memcg less memory"
        ));
    }
    Ok(())
}

/// The check a run makes every [`CHECK_EVERY`] steps: an error when the machine's state is over
/// the limit.
pub fn check_machine(m: &Machine) -> Result<(), String> {
    check_frames(m.folios.len() as u64)?;
    let (held, lim) = (m.state_bytes(), limit());
    if held > lim {
        return Err(format!(
            "the model's state reached {} ({} resident pages, {} page-cache chunks), over the memory \
             budget of {} (--memory-budget): the run touches more distinct pages than fit",
            human(held),
            m.folios.len(),
            m.files.iter().map(|f| f.slots.nr_chunks()).sum::<usize>(),
            human(lim)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::MachineConfig;
    use crate::sim::MemcgConfig;
    use crate::workload::dist::Dist;

    fn cfg(w: WorkloadSpec, pages: u64, policy: PolicyKind) -> RunConfig {
        RunConfig::new(MachineConfig::simple(pages, 0), MemcgConfig::default(), w, policy)
    }

    #[test]
    fn frames_stop_short_of_what_a_pte_can_name() {
        assert!(check_frames(FRAME_LIMIT - 1).is_ok());
        let e = check_frames(FRAME_LIMIT).unwrap_err();
        assert!(e.contains("117440512") && e.contains("less memory"), "{e}");
    }

    #[test]
    fn a_huge_file_read_a_thousand_times_needs_little() {
        let w = WorkloadSpec::FileRead {
            files: 4,
            file_pages: 1 << 28,
            dist: Dist::Zipf { theta: 0.9 },
            accesses: 1000,
        };
        let e = estimate(&cfg(w, 1 << 30, PolicyKind::Mglru), None);
        assert_eq!(e.bound, Bound::Steps);
        assert_eq!(e.touched_pages, 1000 * 65);
        assert!(e.bytes < 100 << 20, "{}", human(e.bytes));
    }

    #[test]
    fn a_billion_records_over_many_operations_need_gibibytes() {
        let w = WorkloadSpec::Ycsb {
            workload: "a".into(),
            records: 1_000_000_000,
            operations: 500_000,
            threadcount: 1,
            properties: Default::default(),
        };
        let e = estimate(&cfg(w, 1 << 28, PolicyKind::Lru), None);
        assert!(e.bytes > 1 << 30, "{}", human(e.bytes));
        assert_eq!(e.footprint_pages, 1_000_000_000 * 1000 / 4096 + 1);
    }

    /// Plain LRU keeps 4 bytes per page of the id space and 12 per slot of the cache
    /// (`lrugen_cache::Lru`), the zoo 13 per page: over a footprint far beyond the memory, LRU's
    /// estimate is the zoo's less 9 bytes per touched page and plus 12 per resident one.
    #[test]
    fn plain_lru_counts_its_slots_per_resident_page() {
        let w = || WorkloadSpec::Ycsb {
            workload: "a".into(),
            records: 100_000_000,
            operations: 200_000,
            threadcount: 1,
            properties: Default::default(),
        };
        let lru = estimate(&cfg(w(), 1 << 16, PolicyKind::Lru), None);
        let zoo = estimate(
            &cfg(w(), 1 << 16, PolicyKind::Cache(lrugen_cache::ZooPolicy::Fifo)),
            None,
        );
        assert_eq!(
            (lru.touched_pages, lru.resident_pages),
            (zoo.touched_pages, zoo.resident_pages)
        );
        assert!(lru.resident_pages < lru.touched_pages, "{lru:?}");
        assert_eq!(
            zoo.bytes - lru.bytes,
            lru.touched_pages * 9 - lru.resident_pages * 12,
            "{lru:?} {zoo:?}"
        );
    }

    #[test]
    fn trace_references_count() {
        let w = WorkloadSpec::Trace {
            path: "x.lis".into(),
            format: None,
            access: Default::default(),
        };
        let e = estimate(&cfg(w, 1 << 20, PolicyKind::Mglru), Some(99_999_999_999));
        assert!(e.bytes > 400_000_000_000, "{}", human(e.bytes));
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 << 29), "1.5 GiB");
        assert_eq!(human(64 << 20), "64 MiB");
    }

    #[test]
    fn limit_defaults_to_half_the_ram() {
        if let Some(r) = machine_ram() {
            assert_eq!(default_limit(), r / 2);
        }
        assert!(default_limit() > 0);
    }
}

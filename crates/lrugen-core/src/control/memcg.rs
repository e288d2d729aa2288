// SPDX-License-Identifier: GPL-2.0-only
//! Writes to the cgroup v2 memory controller's limit files, as `mm/memcontrol.c` handles them
//! (Debian 6.1.192, 6.12.118 and 7.2.13 read; the loops are the same in all three):
//! * `memory.max` (`memory_max_write`): the new limit is set at once; then, while the usage is
//!   over it, the per-CPU charge stock is drained once, reclaim runs (`try_to_free_mem_cgroup_pages`
//!   for the excess, swapping allowed) until `MAX_RECLAIM_RETRIES` calls have reclaimed nothing,
//!   and after that each round counts `oom` in `memory.events` and invokes the memcg OOM killer,
//!   until the usage fits or nothing is left to kill. The write returns its byte count whatever
//!   happened.
//! * `memory.high` (`memory_high_write`): the same without the OOM killer: reclaim until the
//!   usage fits or a call reclaims nothing with no retry left.
//! * `memory.low` and `memory.min`: the value is set; reclaim reads it when it next runs.
//!
//! Each value is read by `page_counter_memparse(buf, "max")` after `strstrip`: `max` is
//! `PAGE_COUNTER_MAX`, anything else a `memparse` size that must be the whole input (`EINVAL`
//! otherwise), in pages rounded down and capped at `PAGE_COUNTER_MAX`. Not modelled: 7.2's
//! `O_NONBLOCK` writes (limit set without reclaim; the model's writes are blocking) and signals
//! (`signal_pending` never stops the loop). The charge stock holds nothing in the model.

use super::WriteResult;
use crate::mm::memcg::MemcgId;
use crate::mm::Machine;
use crate::reclaim::alloc::out_of_memory;
use crate::reclaim::memory_reclaim::{memparse, strip, PAGE_COUNTER_MAX};
use crate::reclaim::mglru::debugfs::Errno;
use crate::reclaim::vmscan::try_to_free_mem_cgroup_pages;
use crate::reclaim::{Policy, MAX_RECLAIM_RETRIES};

/// `page_counter_memparse(buf, "max", ..)` after `strstrip`: pages.
pub fn page_counter_memparse(buf: &str) -> Result<u64, Errno> {
    let s = strip(buf.as_bytes());
    if s == b"max" {
        return Ok(PAGE_COUNTER_MAX);
    }
    let (bytes, used) = memparse(s);
    if used != s.len() {
        return Err(Errno::EINVAL);
    }
    Ok((bytes / 4096).min(PAGE_COUNTER_MAX))
}

fn parsed(file: &str, text: &str) -> Result<u64, (String, String)> {
    page_counter_memparse(text).map_err(|e| {
        (
            e.name().to_string(),
            format!(
                "{file}: '{}' is not `max` or a size (bytes, K, M, G, ...)",
                text.trim_end()
            ),
        )
    })
}

/// `memory_max_write` on memcg `t`: returns the pages the write reclaimed (usage before minus
/// usage after, an OOM kill's freed pages included).
pub fn write_max<P: Policy>(m: &mut Machine, p: &mut P, t: MemcgId, text: &str) -> WriteResult {
    let max = parsed("memory.max", text)?;
    let before = m.memcgs[t].usage;
    m.memcgs[t].max = max;
    let mut nr_reclaims = MAX_RECLAIM_RETRIES;
    let mut drained = false;
    loop {
        let nr_pages = m.memcgs[t].usage;
        if nr_pages <= max {
            break;
        }
        // the CPUs' charge stocks go back before anything is reclaimed
        if m.memcgs.drain_all_stock_once(t, &mut drained) {
            continue;
        }
        if nr_reclaims > 0 {
            if try_to_free_mem_cgroup_pages(m, p, t, nr_pages - max, true) == 0 {
                nr_reclaims -= 1;
            }
            continue;
        }
        m.memcgs[t].events.oom += 1;
        if !out_of_memory(m, p, Some(t)) {
            break;
        }
    }
    Ok(Some(before.saturating_sub(m.memcgs[t].usage)))
}

/// `memory_high_write` on memcg `t`: returns the pages the write reclaimed.
pub fn write_high<P: Policy>(m: &mut Machine, p: &mut P, t: MemcgId, text: &str) -> WriteResult {
    let high = parsed("memory.high", text)?;
    let before = m.memcgs[t].usage;
    m.memcgs[t].high = high;
    let mut nr_retries = MAX_RECLAIM_RETRIES;
    let mut drained = false;
    loop {
        let nr_pages = m.memcgs[t].usage;
        if nr_pages <= high {
            break;
        }
        if m.memcgs.drain_all_stock_once(t, &mut drained) {
            continue;
        }
        let reclaimed = try_to_free_mem_cgroup_pages(m, p, t, nr_pages - high, true);
        if reclaimed == 0 {
            if nr_retries == 0 {
                break;
            }
            nr_retries -= 1;
        }
    }
    Ok(Some(before.saturating_sub(m.memcgs[t].usage)))
}

/// `memory_low_write` (`min` false) or `memory_min_write` (`min` true) on memcg `t`.
pub fn write_protection(m: &mut Machine, t: MemcgId, text: &str, min: bool) -> WriteResult {
    let v = parsed(if min { "memory.min" } else { "memory.low" }, text)?;
    if min {
        m.memcgs[t].min = v;
    } else {
        m.memcgs[t].low = v;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_as_page_counter_memparse_reads_them() {
        assert_eq!(page_counter_memparse("max\n"), Ok(PAGE_COUNTER_MAX));
        assert_eq!(page_counter_memparse("  16M "), Ok(4096));
        assert_eq!(page_counter_memparse("4097"), Ok(1));
        assert_eq!(page_counter_memparse("0x2000"), Ok(2));
        assert_eq!(page_counter_memparse(""), Ok(0));
        assert_eq!(page_counter_memparse("1G"), Ok(262_144));
        assert_eq!(page_counter_memparse("16MB"), Err(Errno::EINVAL));
        assert_eq!(page_counter_memparse("maxx"), Err(Errno::EINVAL));
        assert_eq!(page_counter_memparse("Max"), Err(Errno::EINVAL));
        assert_eq!(page_counter_memparse("-1"), Err(Errno::EINVAL));
    }
}

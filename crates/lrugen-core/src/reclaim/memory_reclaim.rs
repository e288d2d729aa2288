// SPDX-License-Identifier: GPL-2.0-only
//! `memory.reclaim` (cgroup v2 proactive reclaim, `memory_reclaim` in `mm/memcontrol.c`; from
//! 6.17 `user_proactive_reclaim` in `mm/vmscan.c`): the write grammar as each kernel reads it and
//! the reclaim loop it runs, both reading the profile's switches.
//!
//! Grammar (the input is `strstrip`ped first: leading and trailing ASCII whitespace removed):
//! * a size as `memparse` reads it: `simple_strtoull` in base 0 (`0x` hex, leading `0` octal,
//!   wrapping on overflow, no digits read as 0) and an optional suffix `K`/`M`/`G`/`T`/`P`/`E`
//!   (either case, each a shift by 10 more bits, also wrapping); the size in bytes divided by the
//!   page size;
//! * without `memory_reclaim_swappiness` (6.1: `page_counter_memparse(buf, "", ..)`): nothing may
//!   follow the size (`EINVAL`); an empty input equals the "max" string `""` and asks for
//!   `PAGE_COUNTER_MAX` pages; the page count is capped at `PAGE_COUNTER_MAX`;
//! * with it (6.7+): the size must consume at least one character (an empty input is `EINVAL`),
//!   then the rest is stripped and split on single spaces (empty pieces skipped), each piece
//!   `swappiness=N` (`N` as `simple_strtol` base 0, the whole piece consumed, 0..=200) or, with
//!   `swappiness_max` (6.15), `swappiness=max` (201, anon only); the last one given wins; any
//!   other piece is `EINVAL`. Nothing separates the size from the first key (`1Mswappiness=5`
//!   is accepted, as the kernel accepts it).
//!
//! The loop: until the request is met, one `try_to_free_mem_cgroup_pages` (may swap, proactive)
//! per iteration of a batch of the rest (`memory_reclaim_quarter_batch` off) or a quarter of it
//! (on; the reclaim path raises it to `SWAP_CLUSTER_MAX`); the last retry drains the per-CPU add
//! batches and buffer-head LRUs first (`lru_add_drain_all`); an iteration that reclaims nothing
//! uses up one of `MAX_RECLAIM_RETRIES` retries and, when none is left, the write fails with
//! `EAGAIN` (pages reclaimed until then stay reclaimed). The model has no signals, so the kernel's `EINTR`
//! (`signal_pending`) never happens. Proactive reclaim (`Reclaimer::Proactive`) is counted as
//! direct reclaim (`pgscan_direct`/`pgsteal_direct`) before 6.15 and as `pgscan_proactive`/
//! `pgsteal_proactive` from it (`proactive_reclaim_stats`).

use super::vmscan::{do_try_to_free_pages, node_order};
use super::{lru_add_drain_all, Policy, Reclaimer, ScanControl, MAX_RECLAIM_RETRIES};
use crate::mm::memcg::MemcgId;
use crate::mm::Machine;
use crate::reclaim::mglru::state::SWAPPINESS_ANON_ONLY;
use crate::reclaim::mglru::Switches;

/// `PAGE_SIZE`.
const PAGE_SIZE: u64 = 4096;
/// `PAGE_COUNTER_MAX` on 64-bit (`LONG_MAX / PAGE_SIZE`).
pub const PAGE_COUNTER_MAX: u64 = (i64::MAX as u64) / PAGE_SIZE;
/// `MAX_SWAPPINESS`.
const MAX_SWAPPINESS: i64 = 200;

/// A failed write's return code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteErrno {
    /// Invalid argument: the input does not parse.
    EINVAL,
    /// Try again: `MAX_RECLAIM_RETRIES` iterations reclaimed nothing before the request was met.
    EAGAIN,
}

impl WriteErrno {
    /// The symbolic name, as `strerror`'s constant.
    pub fn name(self) -> &'static str {
        match self {
            WriteErrno::EINVAL => "EINVAL",
            WriteErrno::EAGAIN => "EAGAIN",
        }
    }
    /// The positive errno value (Linux x86-64).
    pub fn code(self) -> i32 {
        match self {
            WriteErrno::EINVAL => 22,
            WriteErrno::EAGAIN => 11,
        }
    }
}

/// A parsed `memory.reclaim` write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReclaimRequest {
    /// Pages to reclaim.
    pub nr_pages: u64,
    /// `swappiness=` (201 for `max`), if given.
    pub swappiness: Option<u32>,
}

/// The outcome of a write: the pages reclaimed, and the error if the write failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReclaimOutcome {
    /// Pages reclaimed (also when the write failed with `EAGAIN`).
    pub nr_reclaimed: u64,
    /// Iterations of the loop (calls of `try_to_free_mem_cgroup_pages`).
    pub iterations: u32,
    /// `None`: the write returned its byte count.
    pub error: Option<WriteErrno>,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `strstrip`.
pub(crate) fn strip(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&c| !is_space(c)).unwrap_or(s.len());
    let end = s.iter().rposition(|&c| !is_space(c)).map_or(start, |e| e + 1);
    &s[start..end.max(start)]
}

/// `simple_strtoull(s, &end, 0)`: the value (wrapping) and the bytes consumed (0: no digits).
pub(crate) fn strtoull(s: &[u8]) -> (u64, usize) {
    let (base, mut i) = if s.len() >= 3 && s[0] == b'0' && (s[1] | 0x20) == b'x' && s[2].is_ascii_hexdigit() {
        (16, 2)
    } else if !s.is_empty() && s[0] == b'0' {
        (8, 0)
    } else {
        (10, 0)
    };
    let mut v: u64 = 0;
    let start = i;
    while i < s.len() {
        let d = match s[i] {
            c @ b'0'..=b'9' => (c - b'0') as u64,
            c @ b'a'..=b'f' => (c - b'a' + 10) as u64,
            c @ b'A'..=b'F' => (c - b'A' + 10) as u64,
            _ => break,
        };
        if d >= base {
            break;
        }
        v = v.wrapping_mul(base).wrapping_add(d);
        i += 1;
    }
    if i == start {
        return (0, 0);
    }
    (v, i)
}

/// `memparse`: bytes and the bytes of input consumed.
pub fn memparse(s: &[u8]) -> (u64, usize) {
    let (mut v, mut n) = strtoull(s);
    let shift = match s.get(n).map(|c| c | 0x20) {
        Some(b'e') => 60,
        Some(b'p') => 50,
        Some(b't') => 40,
        Some(b'g') => 30,
        Some(b'm') => 20,
        Some(b'k') => 10,
        _ => 0,
    };
    if shift > 0 {
        v = v.wrapping_shl(shift);
        n += 1;
    }
    (v, n)
}

/// `simple_strtol(s, &end, 0)` as `match_int` sees it: `None` unless the whole piece is a number
/// in `int` range.
fn match_int(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let (v, n) = strtoull(digits);
    if n == 0 || n != digits.len() {
        return None;
    }
    let v = if neg { (v as i64).wrapping_neg() } else { v as i64 };
    (i32::MIN as i64..=i32::MAX as i64).contains(&v).then_some(v)
}

/// Parse a write to `memory.reclaim` as the kernel of `sw` does.
pub fn parse(input: &str, sw: &Switches) -> Result<ReclaimRequest, WriteErrno> {
    let buf = strip(input.as_bytes());
    if !sw.memory_reclaim_swappiness {
        if buf.is_empty() {
            return Ok(ReclaimRequest {
                nr_pages: PAGE_COUNTER_MAX,
                swappiness: None,
            });
        }
        let (bytes, n) = memparse(buf);
        if n != buf.len() {
            return Err(WriteErrno::EINVAL);
        }
        return Ok(ReclaimRequest {
            nr_pages: (bytes / PAGE_SIZE).min(PAGE_COUNTER_MAX),
            swappiness: None,
        });
    }
    let (bytes, n) = memparse(buf);
    if n == 0 {
        return Err(WriteErrno::EINVAL);
    }
    let mut swappiness = None;
    for piece in strip(&buf[n..]).split(|&c| c == b' ') {
        if piece.is_empty() {
            continue;
        }
        let val = piece.strip_prefix(b"swappiness=").ok_or(WriteErrno::EINVAL)?;
        if sw.swappiness_max && val == b"max" {
            swappiness = Some(SWAPPINESS_ANON_ONLY);
            continue;
        }
        // `swappiness=%d` matches only a number of the whole piece; out of `int` range the
        // token does not match either; both are `EINVAL`
        let v = match_int(val).ok_or(WriteErrno::EINVAL)?;
        if !(0..=MAX_SWAPPINESS).contains(&v) {
            return Err(WriteErrno::EINVAL);
        }
        swappiness = Some(v as u32);
    }
    Ok(ReclaimRequest {
        nr_pages: bytes / PAGE_SIZE,
        swappiness,
    })
}

/// Run a parsed request on `memcg`: the kernel's loop.
pub fn run<P: Policy>(m: &mut Machine, p: &mut P, memcg: MemcgId, req: ReclaimRequest) -> ReclaimOutcome {
    let quarter = p.switches().memory_reclaim_quarter_batch;
    let mut retries = MAX_RECLAIM_RETRIES;
    let mut out = ReclaimOutcome {
        nr_reclaimed: 0,
        iterations: 0,
        error: None,
    };
    while out.nr_reclaimed < req.nr_pages {
        let rest = req.nr_pages - out.nr_reclaimed;
        let batch = if quarter { rest / 4 } else { rest };
        if retries == 0 {
            lru_add_drain_all(m, p);
        }
        let mut sc = ScanControl::new(
            batch.max(super::SWAP_CLUSTER_MAX),
            Reclaimer::Proactive,
            Some(memcg),
            usize::MAX,
        );
        sc.swappiness = req.swappiness;
        let nodes = node_order(m, 0);
        let reclaimed = do_try_to_free_pages(m, p, &mut sc, nodes);
        out.iterations += 1;
        if reclaimed == 0 {
            if retries == 0 {
                out.error = Some(WriteErrno::EAGAIN);
                return out;
            }
            retries -= 1;
        }
        out.nr_reclaimed += reclaimed;
    }
    out
}

/// A write to `memory.reclaim` of `memcg`: parse, then reclaim.
pub fn write<P: Policy>(m: &mut Machine, p: &mut P, memcg: MemcgId, input: &str) -> ReclaimOutcome {
    let sw = *p.switches();
    match parse(input, &sw) {
        Ok(req) => run(m, p, memcg, req),
        Err(e) => ReclaimOutcome {
            nr_reclaimed: 0,
            iterations: 0,
            error: Some(e),
        },
    }
}

// SPDX-License-Identifier: GPL-2.0-only
//! lrugen: a faithful, fast user-space model of Linux page reclaim.
//!
//! Data flows one way: **workload → machine → reclaim policy → statistics → report**.
//!
//! * [`workload`] produces a stream of page operations (buffered reads, loads, stores) from
//!   built-in generators or real traces;
//! * [`mm`] is the simulated machine, the kernel's substrate: folios, zones and watermarks, memcgs,
//!   page cache with shadow entries, address spaces with page tables and accessed bits, swap;
//! * [`reclaim`] is the kernel's page reclaim: the shared engine (allocation slow path, kswapd,
//!   direct and memcg reclaim, `shrink_folio_list`, OOM) and the policies behind one interface;
//! * [`kernel`] holds the entry points the workload drives (`filemap_read`, page faults);
//! * [`sim`] runs a workload under a policy and collects the counters; [`report`] prints them as
//!   the kernel does (`/proc/vmstat`, `memory.stat`) and as tables and JSON.
//!
//! See `ARCHITECTURE.md` for the map from modules to kernel concepts.
#![warn(missing_docs)]

pub mod budget;
pub mod control;
pub mod experiment;
pub mod explain;
pub mod kernel;
pub mod mm;
pub mod reclaim;
pub mod report;
pub mod sim;
pub mod workload;

// SPDX-License-Identifier: GPL-2.0-only
//! The admin surface of MGLRU on a machine: reading `/sys/kernel/debug/lru_gen` and
//! `lru_gen_full` (`lru_gen_seq_show`), and executing writes to `lru_gen` (`run_cmd`,
//! `run_aging`, `run_eviction`) — working-set estimation and proactive reclaim.

use super::debugfs::{self, AgeCheck, Clock, Command, CommandError, Errno, LruvecView};
use super::{eviction, Mglru};
use crate::mm::memcg::{MemcgId, ROOT_MEMCG};
use crate::mm::{Machine, HZ};
use crate::reclaim::{Reclaimer, ScanControl};

/// The id the kernel prints for memcg `m` (`mem_cgroup_id`: the root is 1).
pub fn memcg_kernel_id(m: MemcgId) -> u64 {
    m as u64 + 1
}

impl Mglru {
    /// The text of `lru_gen` (`full` false) or `lru_gen_full` (`full` true): every memcg in
    /// pre-order, every node.
    pub fn debugfs_read(&self, m: &Machine, full: bool) -> String {
        let mut views = Vec::new();
        // `lru_gen_seq_start` walks with `mem_cgroup_iter`: a freed memcg is not shown
        for memcg in m.memcgs.subtree(ROOT_MEMCG) {
            if m.memcgs[memcg].state == crate::mm::memcg::MemcgState::Freed {
                continue;
            }
            for node in 0..m.nr_nodes() {
                views.push(LruvecView {
                    memcg_id: memcg_kernel_id(memcg),
                    path: &m.memcgs[memcg].path,
                    node,
                    first_node: node == 0,
                    lg: &self.lruvecs[self.lv(memcg, node)],
                });
            }
        }
        let mut out = String::new();
        let clock = Clock {
            jiffies: m.jiffies(),
            hz: HZ,
        };
        debugfs::show(
            &mut out,
            self.profile(),
            full,
            &views,
            clock,
            self.nr_hist,
            self.should_walk_mmu(),
        );
        out
    }

    /// Execute a write to `lru_gen`. Commands run in order; the first failure stops the write and
    /// is returned (earlier commands stay applied), as the kernel does.
    pub fn debugfs_write(&mut self, m: &mut Machine, input: &str) -> Result<(), CommandError> {
        // lru_gen_seq_write: set_mm_walk(NULL, true) for the whole write, clear_mm_walk after it
        self.mm_walk = true;
        let r = self.debugfs_write_cmds(m, input);
        self.mm_walk = false;
        r
    }

    fn debugfs_write_cmds(&mut self, m: &mut Machine, input: &str) -> Result<(), CommandError> {
        let profile = self.profile();
        for (index, cmd) in debugfs::commands(input, profile).enumerate() {
            let cmd = cmd?;
            let err = |errno: Errno, reason: String| CommandError {
                index,
                command: cmd.to_string(),
                errno,
                reason,
            };
            let node = cmd.node();
            if node >= m.nr_nodes() {
                return Err(err(
                    Errno::EINVAL,
                    format!("expected a node with memory (0..{}), found {node}", m.nr_nodes()),
                ));
            }
            let id = cmd.memcg_id();
            // `run_cmd`: `mem_cgroup_from_id` (an erased id of a removed memcg is none)
            if id == 0 || id as usize > m.memcgs.len() || m.memcgs.from_id((id - 1) as MemcgId).is_none() {
                return Err(err(
                    Errno::EINVAL,
                    format!("expected the id of a live memcg (1..={}), found {id}", m.memcgs.len()),
                ));
            }
            let memcg = (id - 1) as MemcgId;
            let lv = self.lv(memcg, node);
            // lru_gen_seq_write's scan control is proactive on the kernels that count it so
            let reclaimer = if self.sw().proactive_reclaim_stats {
                Reclaimer::Proactive
            } else {
                Reclaimer::Direct
            };
            let mut sc = ScanControl::new(0, reclaimer, None, 3);
            let default_swappiness = eviction::get_swappiness(self, m, memcg, node, &sc);
            let swappiness = cmd.swappiness().unwrap_or(default_swappiness);
            match cmd {
                Command::Age {
                    max_gen, force_scan, ..
                } => match debugfs::check_age(profile, &self.lruvecs[lv], max_gen, swappiness, force_scan) {
                    Err(e) => {
                        let max_seq = self.lruvecs[lv].max_seq;
                        return Err(err(
                            e,
                            format!("generation {max_gen} cannot be aged now (max_seq is {max_seq})"),
                        ));
                    }
                    Ok(AgeCheck::NoOp) => {}
                    Ok(AgeCheck::Run) => {
                        let seq = self.lruvecs[lv].max_seq;
                        let aged = self.try_to_inc_max_seq(m, lv, seq, swappiness, force_scan);
                        if !aged && profile.switches.aging_feedback_rework {
                            return Err(err(Errno::EEXIST, "no new generation was created".into()));
                        }
                    }
                },
                Command::Evict {
                    min_gen, nr_to_reclaim, ..
                } => {
                    if let Err(e) = debugfs::check_evict(&self.lruvecs[lv], min_gen) {
                        return Err(err(
                            e,
                            format!(
                                "expected a generation at most max_seq − 2 = {}, found {min_gen}",
                                self.lruvecs[lv].max_seq.saturating_sub(2)
                            ),
                        ));
                    }
                    sc.nr_reclaimed = 0;
                    loop {
                        if debugfs::eviction_done(profile, &self.lruvecs[lv], min_gen, swappiness) {
                            break;
                        }
                        if sc.nr_reclaimed >= nr_to_reclaim {
                            break;
                        }
                        // 7.2's run_eviction asks each batch for what is left, at most
                        // MAX_LRU_BATCH (the reclaim-loop series); 6.17's for a full batch
                        let budget = if profile.switches.reclaim_loop_single_budget {
                            (nr_to_reclaim - sc.nr_reclaimed).min(super::state::MAX_LRU_BATCH)
                        } else if profile.switches.scan_batch_bounded {
                            super::state::MAX_LRU_BATCH
                        } else {
                            u64::MAX
                        };
                        if eviction::evict_folios(self, m, memcg, node, &mut sc, swappiness, budget) == 0 {
                            break;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

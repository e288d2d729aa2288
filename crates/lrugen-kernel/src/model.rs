// SPDX-License-Identifier: GPL-2.0-only
//! The model side of `lrugen kernel`: an op file replayed on lrugen's simulated machine exactly as
//! the guest replays it (one process; files opened `POSIX_FADV_RANDOM`; file mappings shared,
//! read-only and `MADV_RANDOM`; one private anonymous region), sampled at the replayer's window
//! boundaries (every `window` measured accesses, and at the end).

use crate::Error;
use lrugen::kernel::Kernel;
use lrugen::mm::memcg::MemcgId;
use lrugen::mm::pagecache::Advice;
use lrugen::mm::vm::vmf;
use lrugen::mm::Machine;
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::mglru::Mglru;
use lrugen::sim::{self, KernelRunOptions, PolicyKind, RunConfig, RunResult};
use lrugen::workload::{Op, Step, Stream};
use lrugen_replay::{OpFile, ReplayOp};
use std::collections::BTreeMap;

/// Set the op file's process up on `m` in memcg `t` and return its steps and the number of page
/// keys (file pages, then anon pages: key = the page's place in that order).
pub fn steps(ops: &OpFile, m: &mut Machine, t: MemcgId) -> Result<(Vec<Step>, u32), Error> {
    let task = m.create_mm(t);
    // replay file id -> (model file, first key, vpn of its mapping if mmapped)
    let mut files: BTreeMap<u32, (u32, u64, Option<u32>)> = BTreeMap::new();
    let mut keys = 0u64;
    for f in &ops.files {
        if f.pages > u32::MAX as u64 {
            return Err(Error::Config(format!(
                "file {} of {} pages is too large for the model",
                f.id, f.pages
            )));
        }
        let id = m.create_file(&f.path, f.pages, Advice::Random);
        let mapped = ops
            .ops
            .iter()
            .any(|o| matches!(o, ReplayOp::MmapLoad { file, .. } if *file == f.id));
        let base = mapped.then(|| m.mmap(task, f.pages as u32, vmf::RAND_READ, Some((id, 0))));
        files.insert(f.id, (id, keys, base));
        keys += f.pages;
    }
    let anon_key = keys;
    let anon_base = (ops.anon_pages > 0).then(|| m.mmap(task, ops.anon_pages as u32, vmf::WRITE, None));
    keys += ops.anon_pages;
    if keys > u32::MAX as u64 {
        return Err(Error::Config(format!("{keys} pages are too many for the model")));
    }
    let mut measure = !ops.ops.contains(&ReplayOp::MeasureStart);
    let mut out = Vec::with_capacity(ops.ops.len());
    let file = |id: u32| {
        files
            .get(&id)
            .copied()
            .ok_or_else(|| Error::Config(format!("file {id} is not declared")))
    };
    for op in &ops.ops {
        let (op, key) = match *op {
            ReplayOp::MeasureStart => {
                measure = true;
                continue;
            }
            ReplayOp::Read { file: f, index } | ReplayOp::Write { file: f, index } => {
                let (id, k, _) = file(f)?;
                let op = if matches!(op, ReplayOp::Read { .. }) {
                    Op::Read { task, file: id, index }
                } else {
                    Op::Write { task, file: id, index }
                };
                (op, k + index)
            }
            ReplayOp::MmapLoad { file: f, index } => {
                let (_, k, base) = file(f)?;
                let vpn = base.expect("mapped above") + index as u32;
                (Op::Load { task, vpn }, k + index)
            }
            ReplayOp::Load { vpn } | ReplayOp::Store { vpn } => {
                let base = anon_base.ok_or_else(|| Error::Config("an anon access without an anon region".into()))?;
                let v = base + vpn as u32;
                let op = if matches!(op, ReplayOp::Load { .. }) {
                    Op::Load { task, vpn: v }
                } else {
                    Op::Store { task, vpn: v }
                };
                (op, anon_key + vpn)
            }
        };
        out.push(Step {
            op,
            key: key as u32,
            measure,
        });
    }
    Ok((out, keys as u32))
}

/// Replay `ops` on the model configured by `cfg` (machine, memcg, policy and MGLRU settings; its
/// workload is ignored), recording a sample (misses so far, generations) after every
/// `ops.window` measured accesses and at the end.
pub fn run(ops: &OpFile, cfg: &RunConfig) -> Result<RunResult, Error> {
    let (mut m, t) = sim::build_machine(cfg).map_err(|e| Error::Config(e.to_string()))?;
    let (steps, nr) = steps(ops, &mut m, t)?;
    let stream = Stream::from_steps(steps, nr);
    let opts = KernelRunOptions {
        sample_every: Some(ops.window.max(1)),
        measured: true,
        ..Default::default()
    };
    let err = |e: sim::RunError| Error::Config(format!("model: {e}"));
    let start = std::time::Instant::now();
    let mut r = match cfg.policy {
        PolicyKind::Mglru => {
            let p = Mglru::new(&m, cfg.mglru.clone());
            sim::run_kernel(Kernel::new(m, p), t, stream, &opts, &mut |_, _| {}).map_err(err)?
        }
        PolicyKind::Classic => {
            let p = Classic::new(&m);
            sim::run_kernel(Kernel::new(m, p), t, stream, &opts, &mut |_, _| {}).map_err(err)?
        }
        p => return Err(Error::Config(format!("policy {} is not a kernel policy", p.name()))),
    };
    r.wall_seconds = start.elapsed().as_secs_f64();
    r.workload = "op file".into();
    Ok(r)
}

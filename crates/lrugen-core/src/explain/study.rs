// SPDX-License-Identifier: GPL-2.0-only
//! Running an explanation: policies A and B on the identical stream with the recorder on
//! ([`crate::sim::run_recorded`]), over one or more seeds, and the switch ablation: A's (or B's)
//! profile rerun with each named switch flipped, one at a time, in parallel, to see how much of
//! Δ = misses(A) − misses(B) each accounts for.

use super::{compare, Explanation};
use crate::experiment::runner::seed_for;
use crate::experiment::stats;
use crate::reclaim::mglru::Switches;
use crate::sim::{self, PolicyKind, RunConfig, RunError};
use crate::workload::LoadedTrace;
use serde::Serialize;

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Windows of steps for the over-time view.
    pub windows: u64,
    /// Seeds (the configuration's own, then `seed_for(base, r)` as experiments pair them); the decomposition is of
    /// the first, Δ and the ablation have 95% CIs over all.
    pub seeds: u32,
    /// Run the switch ablation.
    pub ablate: bool,
    /// Worker threads for the ablation's runs (results do not depend on it).
    pub threads: usize,
}

/// One switch's share of Δ.
#[derive(Clone, Debug, Serialize)]
pub struct SwitchShare {
    /// The switch.
    pub switch: String,
    /// The value it was flipped to.
    pub flipped_to: bool,
    /// Mean over seeds of Δ − Δ(flipped): the misses of Δ that disappear with the switch
    /// flipped.
    pub accounts_for: f64,
    /// Its 95% CI half-width (`None` with one seed).
    pub ci95: Option<f64>,
    /// `accounts_for` / mean Δ, in percent (`None` when mean Δ is 0).
    pub share_pct: Option<f64>,
}

/// The ablation.
#[derive(Clone, Debug, Serialize)]
pub struct Ablation {
    /// Which side's profile was flipped (`A` or `B`) and its policy label.
    pub side: String,
    /// The switches whose flip changed Δ, largest |share| first.
    pub switches: Vec<SwitchShare>,
    /// Switches whose flip changed nothing on this workload.
    pub no_effect: Vec<String>,
}

/// An explanation with its statistics over seeds.
#[derive(Clone, Debug, Serialize)]
pub struct Study {
    /// The decomposition (first seed).
    pub explanation: Explanation,
    /// Δ per seed.
    pub deltas: Vec<i64>,
    /// Mean Δ and its 95% CI half-width over seeds.
    pub delta_mean: f64,
    /// 95% CI half-width of the mean Δ (`None` with one seed).
    pub delta_ci95: Option<f64>,
    /// The switch ablation, when asked for.
    pub ablation: Option<Ablation>,
    /// Engine runs: Δ time split into misses x I/O time, reclaim CPU by mechanism, kswapd and
    /// the rest (first seed).
    pub cost: Option<super::cost::Cost>,
}

fn misses(cfg: &RunConfig, trace: &Option<LoadedTrace>) -> Result<u64, RunError> {
    Ok(sim::run(cfg, trace.clone(), &mut |_, _| {})?.misses)
}

/// Run `jobs` (closures returning a value) on `threads` workers; results in job order.
fn parallel<T: Send>(
    threads: usize,
    jobs: Vec<Box<dyn Fn() -> Result<T, RunError> + Send + Sync + '_>>,
) -> Result<Vec<T>, RunError> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Result<T, RunError>>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, jobs.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let r = job();
                *slots[i].lock().expect("slot") = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|m| m.into_inner().expect("slot").expect("every job ran"))
        .collect()
}

/// Explain the difference between `a` and `b` (the same workload and machine; they differ in
/// policy or profile) named `name_a` and `name_b`.
pub fn explain(
    name_a: &str,
    a: &RunConfig,
    name_b: &str,
    b: &RunConfig,
    trace: Option<LoadedTrace>,
    o: &Options,
) -> Result<Study, RunError> {
    // seed 0 is the configuration's own, the others as an experiment's repetitions
    let seeded = |c: &RunConfig, r: u32| RunConfig {
        seed: if r == 0 { c.seed } else { seed_for(c.seed, r) },
        ..c.clone()
    };
    let ra = sim::run_recorded(a, trace.clone(), o.windows, &mut |_, _| {})?;
    let rb = sim::run_recorded(b, trace.clone(), o.windows, &mut |_, _| {})?;
    let (Some(xa), Some(xb)) = (&ra.recording, &rb.recording) else {
        return Err(RunError::Config("explain: a run ended without its recording".into()));
    };
    let explanation = compare(name_a, xa, name_b, xb);
    let cost = match (&ra.engine, &rb.engine) {
        (Some(ea), Some(eb)) => Some(super::cost::cost(ea, eb, &explanation, &xa.task_job, &xa.job_names)),
        _ => None,
    };
    let seeds = o.seeds.max(1);
    // the other seeds' totals, without the recorder (the same counts: it changes nothing)
    let mut jobs: Vec<Box<dyn Fn() -> Result<u64, RunError> + Send + Sync + '_>> = Vec::new();
    for r in 1..seeds {
        for c in [a, b] {
            let c = seeded(c, r);
            let t = &trace;
            jobs.push(Box::new(move || misses(&c, t)));
        }
    }
    // the ablation side: A if its policy reads the profile's MGLRU switches, else B
    let side = [(a, "A", name_a), (b, "B", name_b)]
        .into_iter()
        .find(|(c, _, _)| c.policy == PolicyKind::Mglru)
        .or_else(|| Some((a, "A", name_a)).filter(|(c, _, _)| c.policy.is_kernel()));
    let names: Vec<&'static str> = if o.ablate && side.is_some() {
        Switches::NAMES.to_vec()
    } else {
        Vec::new()
    };
    if let Some((c, _, _)) = side {
        for &n in &names {
            for r in 0..seeds {
                let mut c = seeded(c, r);
                let on = !c.mglru.profile.switches.get(n).unwrap_or(false);
                c.mglru.profile.switches.set(n, on);
                let t = &trace;
                jobs.push(Box::new(move || misses(&c, t)));
            }
        }
    }
    let out = parallel(o.threads, jobs)?;
    let mut deltas = vec![ra.misses as i64 - rb.misses as i64];
    let mut per_seed_a = vec![ra.misses];
    let mut per_seed_b = vec![rb.misses];
    for r in 0..(seeds as usize - 1) {
        per_seed_a.push(out[2 * r]);
        per_seed_b.push(out[2 * r + 1]);
        deltas.push(out[2 * r] as i64 - out[2 * r + 1] as i64);
    }
    let d: Vec<f64> = deltas.iter().map(|&x| x as f64).collect();
    let sd = stats::summarize(&d).expect("one seed at least");
    let ablation = side.filter(|_| o.ablate).map(|(c, tag, name)| {
        let base = 2 * (seeds as usize - 1);
        let mut switches = Vec::new();
        let mut no_effect = Vec::new();
        for (i, &n) in names.iter().enumerate() {
            let flipped = &out[base + i * seeds as usize..base + (i + 1) * seeds as usize];
            // Δ − Δ(flipped), per seed
            let acc: Vec<f64> = (0..seeds as usize)
                .map(|r| {
                    let df = if tag == "A" {
                        flipped[r] as i64 - per_seed_b[r] as i64
                    } else {
                        per_seed_a[r] as i64 - flipped[r] as i64
                    };
                    (deltas[r] - df) as f64
                })
                .collect();
            if acc.iter().all(|&x| x == 0.0) {
                no_effect.push(n.to_string());
                continue;
            }
            let s = stats::summarize(&acc).expect("seeds");
            switches.push(SwitchShare {
                switch: n.to_string(),
                flipped_to: !c.mglru.profile.switches.get(n).unwrap_or(false),
                accounts_for: s.mean,
                ci95: s.ci95,
                share_pct: (sd.mean != 0.0).then(|| 100.0 * s.mean / sd.mean),
            });
        }
        switches.sort_by(|x, y| {
            y.accounts_for
                .abs()
                .partial_cmp(&x.accounts_for.abs())
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| x.switch.cmp(&y.switch))
        });
        Ablation {
            side: format!("{tag} = {name}"),
            switches,
            no_effect,
        }
    });
    Ok(Study {
        explanation,
        deltas,
        delta_mean: sd.mean,
        delta_ci95: sd.ci95,
        ablation,
        cost,
    })
}

// SPDX-License-Identifier: GPL-2.0-only
//! Key and operation generators of the benchmarks that reclaim developers run: fio's
//! `random_distribution=` ([`fio`]), YCSB's core generators and workloads A–F ([`ycsb`]) and
//! memtier_benchmark's key patterns ([`memtier`]).
//!
//! Every generator is pure and seeded: it owns a [`rand::rngs::StdRng`] seeded from a `u64`, so
//! the same seed gives the same stream bit for bit (on every platform `rand`'s `StdRng` is
//! portable on). A draw allocates nothing and dispatches statically (enums over concrete
//! generators, never `dyn`). Tables (ζ, zone lookups) are built once, in the constructor.
//!
//! The generators are written from the tools' documented algorithms, not copied from their
//! sources; what is reproduced exactly (constants, formulas, quirks) and what is not (the tools'
//! own PRNGs, hence their exact sequences) is stated on each item.

pub mod fio;
pub mod fiojob;
pub mod memtier;
pub mod properties;
pub mod ycsb;

pub use fio::{FioDist, FioGen, Zone, ZoneAbs};
pub use memtier::{KeyPattern, KeyPatterns, MemtierGen};
pub use ycsb::{
    CounterGenerator, ExponentialGenerator, HotspotGenerator, PropertyEffect, RequestDistribution,
    ScrambledZipfianGenerator, SkewedLatestGenerator, UniformGenerator, YcsbGen, YcsbOp, YcsbWorkload,
    ZipfianGenerator,
};

/// A bad generator parameter or specification, with a message naming what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenError(pub String);

impl std::fmt::Display for GenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GenError {}

/// Derive an independent seed for sub-stream `stream` of a generator seeded with `seed`, so that
/// composite generators (a YCSB operation chooser and its key chooser) do not share draws.
#[inline]
pub(crate) fn sub_seed(seed: u64, stream: u64) -> u64 {
    super::dist::mix64(seed ^ super::dist::mix64(stream.wrapping_add(0x9e37_79b9_7f4a_7c15)))
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Helpers shared by the generators' statistical tests.

    /// Pearson's χ² statistic of observed counts against expected probabilities (which must sum
    /// to 1 over the bins given, the caller lumping any tail into a last bin).
    pub fn chi_square(observed: &[u64], expected_p: &[f64]) -> f64 {
        let n: u64 = observed.iter().sum();
        observed
            .iter()
            .zip(expected_p)
            .map(|(&o, &p)| {
                let e = p * n as f64;
                (o as f64 - e).powi(2) / e
            })
            .sum()
    }

    /// Upper critical value of χ² with `df` degrees of freedom at significance 0.001
    /// (Wilson–Hilferty approximation, accurate to a fraction of a percent for df ≥ 3).
    pub fn chi_square_critical_999(df: usize) -> f64 {
        let k = df as f64;
        let z = 3.090_232; // the 0.999 quantile of N(0, 1)
        k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
    }

    /// The first `n` draws of a generator.
    pub fn draws(n: usize, mut f: impl FnMut() -> u64) -> Vec<u64> {
        (0..n).map(|_| f()).collect()
    }
}

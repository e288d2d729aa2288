// SPDX-License-Identifier: GPL-2.0-only
//! Key distributions: uniform, and Zipf as fio and YCSB draw it (Gray et al., SIGMOD 1994), with
//! the hot ranks scattered over the key space as fio scatters them (a hash of the rank plus a
//! random offset), so the hottest page is not page 0.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

/// A distribution of keys over `0..n`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Dist {
    /// Every key equally likely.
    Uniform,
    /// Zipf with exponent `theta` (fio `zipf:θ`, YCSB zipfian θ = 0.99).
    Zipf {
        /// The exponent θ (≠ 1).
        theta: f64,
    },
    /// A Gaussian centred on the middle of `0..n` with standard deviation `sd_pct` % of `n`,
    /// drawn again outside the range and *not* scattered: the hot keys are contiguous, as in
    /// memtier's Gaussian key pattern (fio's `normal` is a different construction, hashed; see
    /// `workload::gen::fio`).
    Gauss {
        /// σ as a percentage of the range (> 0).
        sd_pct: f64,
    },
    /// Keys `0, 1, …, n − 1` in order, then again from 0: a loop over the range, the access
    /// pattern an LRU handles worst once the range does not fit (every access a miss).
    Loop,
}

impl std::fmt::Display for Dist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Dist::Uniform => write!(f, "uniform"),
            Dist::Zipf { theta } => write!(f, "zipf:{theta}"),
            Dist::Gauss { sd_pct } => write!(f, "gauss:{sd_pct}"),
            Dist::Loop => write!(f, "loop"),
        }
    }
}

impl std::str::FromStr for Dist {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "uniform" | "random" => Ok(Dist::Uniform),
            "loop" => Ok(Dist::Loop),
            _ if s.starts_with("gauss") => {
                let t = s.strip_prefix("gauss:").ok_or_else(|| {
                    format!("bad distribution '{s}': expected gauss:SD_PCT (e.g. gauss:25, σ = 25 % of the range)")
                })?;
                let sd_pct: f64 = t
                    .parse()
                    .map_err(|_| format!("bad σ in '{s}': expected a percentage such as gauss:25"))?;
                if !(sd_pct > 0.0 && sd_pct.is_finite()) {
                    return Err(format!("bad σ {sd_pct} in '{s}': expected a percentage > 0"));
                }
                Ok(Dist::Gauss { sd_pct })
            }
            _ => {
                let t = s
                    .strip_prefix("zipf:")
                    .or_else(|| s.strip_prefix("zipf"))
                    .ok_or_else(|| {
                        format!("unknown distribution '{s}': expected 'uniform', 'zipf:THETA' (e.g. zipf:0.9), 'gauss:SD_PCT' (e.g. gauss:25) or 'loop'")
                    })?;
                let theta: f64 = if t.is_empty() {
                    1.1
                } else {
                    t.parse()
                        .map_err(|_| format!("bad Zipf exponent in '{s}': expected a number such as zipf:0.9"))?
                };
                if theta <= 0.0 || theta.is_nan() || theta == 1.0 || !theta.is_finite() {
                    return Err(format!("bad Zipf exponent {theta}: expected θ > 0 and θ ≠ 1"));
                }
                Ok(Dist::Zipf { theta })
            }
        }
    }
}

/// Largest number of terms summed for ζ(n, θ), as fio caps it (`ZIPF_MAX_GEN`).
const ZETA_MAX_TERMS: u64 = 10_000_000;

/// A seeded sampler of a [`Dist`] over `0..n`.
#[derive(Debug)]
pub struct Sampler {
    n: u64,
    rng: StdRng,
    zipf: Option<ZipfState>,
    gauss: Option<rand_distr::Normal<f64>>,
    /// [`Dist::Loop`]: the next key.
    next: Option<u64>,
}

#[derive(Clone, Debug)]
struct ZipfState {
    theta: f64,
    zetan: f64,
    alpha: f64,
    eta: f64,
    half_pow: f64,
    rand_off: u64,
}

/// A 64-bit mixing function (the splitmix64 finalizer) used to scatter ranks.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// ζ(n, θ) = Σ i^−θ for i in 1..=min(n, ZETA_MAX_TERMS).
pub fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n.min(ZETA_MAX_TERMS)).map(|i| (i as f64).powf(-theta)).sum()
}

impl Sampler {
    /// A sampler of `dist` over `0..n` (n ≥ 1) seeded with `seed`.
    pub fn new(dist: Dist, n: u64, seed: u64) -> Self {
        assert!(n >= 1, "a distribution needs at least one key");
        let mut rng = StdRng::seed_from_u64(seed);
        let gauss = match dist {
            Dist::Gauss { sd_pct } => {
                rand_distr::Normal::new(n as f64 / 2.0, (sd_pct / 100.0 * n as f64).max(f64::MIN_POSITIVE)).ok()
            }
            _ => None,
        };
        let zipf = match dist {
            Dist::Uniform | Dist::Gauss { .. } | Dist::Loop => None,
            Dist::Zipf { theta } => {
                let zetan = zeta(n, theta);
                let zeta2 = zeta(2, theta);
                Some(ZipfState {
                    theta,
                    zetan,
                    alpha: 1.0 / (1.0 - theta),
                    eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
                    half_pow: 0.5f64.powf(theta),
                    rand_off: rng.random::<u64>(),
                })
            }
        };
        let next = (dist == Dist::Loop).then_some(0);
        Sampler {
            n,
            rng,
            zipf,
            gauss,
            next,
        }
    }

    /// The Zipf rank (0 = hottest) of the next draw, before scattering; uniform draws are returned
    /// as they are.
    #[inline]
    pub fn next_rank(&mut self) -> u64 {
        if let Some(k) = self.next {
            self.next = Some(if k + 1 == self.n { 0 } else { k + 1 });
            return k;
        }
        if let Some(g) = &self.gauss {
            use rand_distr::Distribution as _;
            loop {
                let x = g.sample(&mut self.rng);
                if x >= 0.0 && x < self.n as f64 {
                    return x as u64;
                }
            }
        }
        match &self.zipf {
            None => self.rng.random_range(0..self.n),
            Some(z) => {
                let u: f64 = self.rng.random::<f64>();
                let uz = u * z.zetan;
                let v = if uz < 1.0 {
                    0
                } else if uz < 1.0 + z.half_pow {
                    1
                } else {
                    let x = (self.n as f64 * (z.eta * u - z.eta + 1.0).powf(z.alpha)) as u64;
                    x.min(self.n - 1)
                };
                let _ = z.theta;
                v
            }
        }
    }

    /// The next key: the rank scattered over `0..n` for Zipf.
    #[inline]
    pub fn next_key(&mut self) -> u64 {
        let r = self.next_rank();
        match &self.zipf {
            None => r,
            Some(z) => mix64(r).wrapping_add(z.rand_off) % self.n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loop visits every key in order and starts again, drawing no random number.
    #[test]
    fn loop_visits_every_key_in_order() {
        let mut s = Sampler::new(Dist::Loop, 3, 7);
        let keys: Vec<u64> = (0..7).map(|_| s.next_key()).collect();
        assert_eq!(keys, [0, 1, 2, 0, 1, 2, 0]);
        let mut one = Sampler::new(Dist::Loop, 1, 0);
        assert_eq!((one.next_key(), one.next_key()), (0, 0));
    }

    #[test]
    fn parse() {
        assert_eq!("uniform".parse::<Dist>(), Ok(Dist::Uniform));
        assert_eq!("zipf:0.9".parse::<Dist>(), Ok(Dist::Zipf { theta: 0.9 }));
        assert_eq!("zipf".parse::<Dist>(), Ok(Dist::Zipf { theta: 1.1 }));
        assert!("zipf:1".parse::<Dist>().is_err());
        assert!("pareto".parse::<Dist>().unwrap_err().contains("expected"));
        assert_eq!("gauss:25".parse::<Dist>(), Ok(Dist::Gauss { sd_pct: 25.0 }));
        assert_eq!(Dist::Gauss { sd_pct: 25.0 }.to_string(), "gauss:25");
        assert_eq!("loop".parse::<Dist>(), Ok(Dist::Loop));
        assert_eq!(Dist::Loop.to_string(), "loop");
        for bad in ["gauss", "gauss:", "gauss:0", "gauss:-3", "gauss:x", "gauss:inf"] {
            assert!(bad.parse::<Dist>().unwrap_err().contains("gauss:"), "{bad}");
        }
    }

    #[test]
    fn gauss_is_centred_with_its_sd() {
        let n = 10_000u64;
        let mut s = Sampler::new(Dist::Gauss { sd_pct: 10.0 }, n, 4);
        let xs: Vec<f64> = (0..200_000).map(|_| s.next_key() as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
        assert!((mean - 5000.0).abs() < 20.0, "mean {mean}");
        assert!((sd - 1000.0).abs() < 20.0, "sd {sd}");
        // a wide one stays in range (draws outside are drawn again)
        let mut w = Sampler::new(Dist::Gauss { sd_pct: 200.0 }, 16, 4);
        assert!((0..10_000).all(|_| w.next_key() < 16));
    }

    #[test]
    fn same_seed_same_stream() {
        let mut a = Sampler::new(Dist::Zipf { theta: 0.9 }, 1000, 7);
        let mut b = Sampler::new(Dist::Zipf { theta: 0.9 }, 1000, 7);
        let va: Vec<u64> = (0..1000).map(|_| a.next_key()).collect();
        let vb: Vec<u64> = (0..1000).map(|_| b.next_key()).collect();
        assert_eq!(va, vb);
        let mut c = Sampler::new(Dist::Zipf { theta: 0.9 }, 1000, 8);
        let vc: Vec<u64> = (0..1000).map(|_| c.next_key()).collect();
        assert_ne!(va, vc);
    }

    #[test]
    fn zipf_hottest_share_matches_analytic() {
        // P(rank 0) = 1 / ζ(n, θ)
        let n = 10_000;
        for theta in [0.8, 0.99] {
            let mut s = Sampler::new(Dist::Zipf { theta }, n, 1);
            let draws = 400_000;
            let hot = (0..draws).filter(|_| s.next_rank() == 0).count() as f64 / draws as f64;
            let expect = 1.0 / zeta(n, theta);
            assert!(
                (hot - expect).abs() < 0.1 * expect,
                "θ={theta}: hottest share {hot} vs {expect}"
            );
        }
    }

    #[test]
    fn uniform_covers_evenly() {
        let mut s = Sampler::new(Dist::Uniform, 10, 3);
        let mut c = [0u32; 10];
        for _ in 0..100_000 {
            c[s.next_key() as usize] += 1;
        }
        assert!(c.iter().all(|&x| (9_000..11_000).contains(&x)), "{c:?}");
    }

    #[test]
    fn zipf_scatters_the_hottest_key() {
        let mut s = Sampler::new(Dist::Zipf { theta: 1.2 }, 262_144, 5);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..100_000 {
            *counts.entry(s.next_key()).or_insert(0u32) += 1;
        }
        let (&hot, _) = counts
            .iter()
            .max_by_key(|(k, v)| (**v, std::cmp::Reverse(**k)))
            .unwrap();
        assert_ne!(hot, 0, "fio-style scattering moves the hottest block away from 0");
    }
}

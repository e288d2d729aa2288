// SPDX-License-Identifier: GPL-2.0-only
//! memtier_benchmark's key patterns (`--key-pattern=SET:GET`, default `R:R`), over the keys
//! `--key-minimum..=--key-maximum`:
//!
//! * `S` sequential: `min, min+1, …, max, min, …` (every client walks the whole range from `min`).
//! * `R` uniform random.
//! * `G` Gaussian: `--key-median` (default `(max − min)/2 + min + 0.5`, the middle) and
//!   `--key-stddev` (default `(max − min)/6`); a draw outside `[min, max + 1]` is redrawn, as
//!   memtier does (so the range is respected without piling clamped mass on its ends), then
//!   truncated to an integer.
//! * `P` parallel sequential: client `i` of `N` walks its own contiguous slice sequentially — memtier's
//!   split: slice length `(max − min)/N + 1`, client `i` from `min + i·len`, the last client taking
//!   the leftover up to `max`. `P` must be on both sides (`P:P`), as memtier requires.
//!
//! memtier's own PRNG (`random_r`) and its Marsaglia polar Gaussian are not reproduced: draws come
//! from our seeded `StdRng` (the Gaussian from `rand_distr`'s standard normal), so the streams
//! match memtier's in distribution, not value for value. With `--distinct-client-seed`, memtier
//! seeds each client differently: pass a different `seed` per client. memtier's newer `Z`
//! (Zipf) pattern is not modelled.

use super::GenError;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rand_distr::StandardNormal;

/// One side of `--key-pattern`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyPattern {
    /// `S`.
    Sequential,
    /// `R`.
    Random,
    /// `G`, with `--key-median` and `--key-stddev` (`None`: memtier's defaults).
    Gaussian {
        /// Median key (`--key-median`).
        median: Option<f64>,
        /// Standard deviation in keys (`--key-stddev`).
        stddev: Option<f64>,
    },
    /// `P`.
    Parallel,
}

impl std::fmt::Display for KeyPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            KeyPattern::Sequential => "S",
            KeyPattern::Random => "R",
            KeyPattern::Gaussian { .. } => "G",
            KeyPattern::Parallel => "P",
        })
    }
}

impl std::str::FromStr for KeyPattern {
    type Err = GenError;

    /// `S`, `R`, `G` (default median and standard deviation) or `P`.
    fn from_str(s: &str) -> Result<Self, GenError> {
        match s {
            "S" => Ok(KeyPattern::Sequential),
            "R" => Ok(KeyPattern::Random),
            "G" => Ok(KeyPattern::Gaussian {
                median: None,
                stddev: None,
            }),
            "P" => Ok(KeyPattern::Parallel),
            _ => Err(GenError(format!(
                "unknown memtier key pattern '{s}': expected S (sequential), R (random), G (Gaussian) or P (parallel)"
            ))),
        }
    }
}

/// `--key-pattern=SET:GET`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyPatterns {
    /// Pattern of SET commands.
    pub set: KeyPattern,
    /// Pattern of GET commands.
    pub get: KeyPattern,
}

impl Default for KeyPatterns {
    /// memtier's default `R:R`.
    fn default() -> Self {
        KeyPatterns {
            set: KeyPattern::Random,
            get: KeyPattern::Random,
        }
    }
}

impl std::fmt::Display for KeyPatterns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.set, self.get)
    }
}

impl std::str::FromStr for KeyPatterns {
    type Err = GenError;

    /// `SET:GET`, each one of `S`, `R`, `G`, `P`; `P` only as `P:P`.
    fn from_str(s: &str) -> Result<Self, GenError> {
        let (a, b) = s.split_once(':').ok_or_else(|| {
            GenError(format!(
                "bad memtier key pattern '{s}': expected SET:GET, e.g. R:R, P:P or G:G"
            ))
        })?;
        let p = KeyPatterns {
            set: a.parse()?,
            get: b.parse()?,
        };
        if (p.set == KeyPattern::Parallel) != (p.get == KeyPattern::Parallel) {
            return Err(GenError(format!(
                "bad memtier key pattern '{s}': the parallel pattern must be used for both SET and GET (P:P)"
            )));
        }
        Ok(p)
    }
}

/// A seeded generator of one client's keys under one key pattern.
#[derive(Debug)]
pub struct MemtierGen {
    min: u64,
    max: u64,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Sequential { next: u64 },
    Random { rng: StdRng },
    Gaussian { rng: StdRng, median: f64, stddev: f64 },
}

impl MemtierGen {
    /// Keys of `pattern` in `key_min..=key_max` for client `client` of `nr_clients` (the client
    /// matters only to `P`).
    pub fn new(
        pattern: KeyPattern,
        key_min: u64,
        key_max: u64,
        client: u64,
        nr_clients: u64,
        seed: u64,
    ) -> Result<MemtierGen, GenError> {
        if key_max < key_min {
            return Err(GenError(format!(
                "memtier key range {key_min}..={key_max} is empty (--key-minimum > --key-maximum)"
            )));
        }
        if nr_clients == 0 || client >= nr_clients {
            return Err(GenError(format!("memtier client {client} out of 0..{nr_clients}")));
        }
        let rng = StdRng::seed_from_u64(seed);
        let (mut min, mut max) = (key_min, key_max);
        let kind = match pattern {
            KeyPattern::Sequential => Kind::Sequential { next: min },
            KeyPattern::Random => Kind::Random { rng },
            KeyPattern::Parallel => {
                let len = (key_max - key_min) / nr_clients + 1;
                min = key_min.saturating_add(len.saturating_mul(client));
                max = if client == nr_clients - 1 {
                    key_max
                } else {
                    min.saturating_add(len - 1).min(key_max)
                };
                if min > key_max {
                    return Err(GenError(format!(
                        "memtier P pattern: {nr_clients} clients over keys {key_min}..={key_max} leave client {client} no keys"
                    )));
                }
                Kind::Sequential { next: min }
            }
            KeyPattern::Gaussian { median, stddev } => {
                let len = (max - min) as f64;
                let median = median.unwrap_or(len / 2.0 + min as f64 + 0.5);
                let stddev = stddev.unwrap_or(len / 6.0);
                if max > min && !(median > min as f64 && median < max as f64) {
                    return Err(GenError(format!(
                        "memtier key median {median} must lie strictly between the key minimum {min} and maximum {max}"
                    )));
                }
                if !(stddev > 0.0 && stddev.is_finite()) && max > min {
                    return Err(GenError(format!(
                        "memtier key standard deviation {stddev} must be positive"
                    )));
                }
                Kind::Gaussian { rng, median, stddev }
            }
        };
        Ok(MemtierGen { min, max, kind })
    }

    /// This client's key range (its slice for `P`).
    pub fn range(&self) -> (u64, u64) {
        (self.min, self.max)
    }

    /// The next key.
    #[inline]
    pub fn next_key(&mut self) -> u64 {
        let (min, max) = (self.min, self.max);
        match &mut self.kind {
            Kind::Sequential { next } => {
                let k = *next;
                *next = if k >= max { min } else { k + 1 };
                k
            }
            Kind::Random { rng } => rng.random_range(min..=max),
            Kind::Gaussian { rng, median, stddev } => {
                if min == max {
                    return min;
                }
                loop {
                    let z: f64 = rng.sample(StandardNormal);
                    let v = z * *stddev + *median;
                    if v >= min as f64 && v <= max as f64 + 1.0 {
                        break (v as u64).min(max);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{chi_square, chi_square_critical_999, draws};
    use super::*;

    fn g(p: &str, min: u64, max: u64, client: u64, clients: u64, seed: u64) -> MemtierGen {
        MemtierGen::new(p.parse().unwrap(), min, max, client, clients, seed).unwrap()
    }

    #[test]
    fn parse_patterns() {
        assert_eq!("S".parse::<KeyPattern>(), Ok(KeyPattern::Sequential));
        assert_eq!("R".parse::<KeyPattern>(), Ok(KeyPattern::Random));
        assert_eq!("P".parse::<KeyPattern>(), Ok(KeyPattern::Parallel));
        assert_eq!(
            "G".parse::<KeyPattern>(),
            Ok(KeyPattern::Gaussian {
                median: None,
                stddev: None
            })
        );
        let p: KeyPatterns = "S:R".parse().unwrap();
        assert_eq!((p.set, p.get), (KeyPattern::Sequential, KeyPattern::Random));
        assert_eq!("G:G".parse::<KeyPatterns>().unwrap().to_string(), "G:G");
        assert_eq!(KeyPatterns::default().to_string(), "R:R");
        assert!("P:R".parse::<KeyPatterns>().unwrap_err().0.contains("both SET and GET"));
        assert!("X:R".parse::<KeyPatterns>().unwrap_err().0.contains("expected S"));
        assert!("R".parse::<KeyPatterns>().unwrap_err().0.contains("SET:GET"));
        assert!(MemtierGen::new(KeyPattern::Random, 5, 4, 0, 1, 0).is_err());
        assert!(MemtierGen::new(KeyPattern::Parallel, 0, 9, 3, 3, 0).is_err());
        assert!(MemtierGen::new(KeyPattern::Parallel, 1, 3, 3, 4, 0)
            .unwrap_err()
            .0
            .contains("no keys"));
        let bad_median = KeyPattern::Gaussian {
            median: Some(50.0),
            stddev: None,
        };
        assert!(MemtierGen::new(bad_median, 100, 200, 0, 1, 0).is_err());
    }

    #[test]
    fn determinism() {
        for p in ["S", "R", "G", "P"] {
            let a = draws(10_000, {
                let mut m = g(p, 1, 1_000_000, 1, 4, 7);
                move || m.next_key()
            });
            let b = draws(10_000, {
                let mut m = g(p, 1, 1_000_000, 1, 4, 7);
                move || m.next_key()
            });
            assert_eq!(a, b, "{p}");
            if p == "R" || p == "G" {
                let c = draws(10_000, {
                    let mut m = g(p, 1, 1_000_000, 1, 4, 8);
                    move || m.next_key()
                });
                assert_ne!(a, c, "{p}: different seed");
            }
        }
    }

    #[test]
    fn sequential_wraps() {
        let mut m = g("S", 3, 6, 2, 5, 0);
        assert_eq!(draws(9, || m.next_key()), [3, 4, 5, 6, 3, 4, 5, 6, 3]);
    }

    /// P: memtier's split of 1..=10 over 4 clients is 1..=3, 4..=6, 7..=9, 10..=10; slices are
    /// disjoint, cover the range, and each client walks its own sequentially.
    #[test]
    fn parallel_slices_are_disjoint() {
        let slices: Vec<(u64, u64)> = (0..4).map(|c| g("P", 1, 10, c, 4, 0).range()).collect();
        assert_eq!(slices, [(1, 3), (4, 6), (7, 9), (10, 10)]);
        let (min, max, clients) = (1u64, 65_000u64, 36u64);
        let mut seen = vec![0u8; (max + 1) as usize];
        for c in 0..clients {
            let mut m = g("P", min, max, c, clients, 0);
            let (lo, hi) = m.range();
            let keys = draws((hi - lo + 1) as usize, || m.next_key());
            assert_eq!(keys, (lo..=hi).collect::<Vec<_>>(), "client {c} sequential");
            for k in keys {
                seen[k as usize] += 1;
            }
            assert_eq!(m.next_key(), lo, "client {c} wraps to its slice start");
        }
        assert!(seen[1..].iter().all(|&s| s == 1), "every key in exactly one slice");
    }

    /// G: the median defaults to the middle, σ to range/6; within ±1σ of the median 68.3% of
    /// the draws (truncation at ±3σ lifts it to 68.27/99.73 = 68.5%; standard error 0.15 points
    /// over 100,000 draws, so ±1 point); the range is respected; the mean is the median.
    #[test]
    fn gaussian_shape() {
        let (min, max) = (0u64, 600_000u64);
        let mut m = g("G", min, max, 0, 1, 3);
        let (median, sigma) = (300_000.5, 100_000.0);
        let n = 100_000;
        let (mut within, mut sum) = (0u64, 0.0);
        for _ in 0..n {
            let k = m.next_key();
            assert!(k <= max);
            sum += k as f64;
            within += ((k as f64 - median).abs() <= sigma) as u64;
        }
        let share = within as f64 / n as f64;
        assert!((share - 0.685).abs() < 0.01, "within ±1σ: {share}");
        assert!((sum / n as f64 - median).abs() < 0.01 * sigma);
        // A narrow explicit σ near an edge stays in range (redrawn, not clamped).
        let p = KeyPattern::Gaussian {
            median: Some(10.0),
            stddev: Some(20.0),
        };
        let mut m = MemtierGen::new(p, 0, 1000, 0, 1, 1).unwrap();
        let mut at_min = 0;
        for _ in 0..10_000 {
            let k = m.next_key();
            assert!(k <= 1000);
            at_min += (k == 0) as u64;
        }
        // Key 0 gets N(10, 20)'s mass on [0, 1) renormalised to v ≥ 0: (Φ(−0.45) − Φ(−0.5)) /
        // (1 − Φ(−0.5)) ≈ 2.6%, i.e. ≈ 258 of 10,000; clamping instead would pile the 31% below 0
        // on it (≈ 3,100).
        assert!(
            (200..330).contains(&at_min),
            "key 0 drawn {at_min} times, expected ≈ 258"
        );
    }

    #[test]
    fn random_is_uniform() {
        let mut m = g("R", 100, 119, 0, 1, 5);
        let mut c = [0u64; 20];
        for _ in 0..100_000 {
            c[(m.next_key() - 100) as usize] += 1;
        }
        assert!(chi_square(&c, &[0.05; 20]) < chi_square_critical_999(19), "{c:?}");
    }
}

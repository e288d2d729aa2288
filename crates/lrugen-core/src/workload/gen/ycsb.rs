// SPDX-License-Identifier: GPL-2.0-only
//! YCSB's core generators (`site.ycsb.generator`) and core workloads A–F (`CoreWorkload`).
//!
//! **Verified** against the YCSB sources' descriptions and constants: the Zipfian constant 0.99;
//! Gray et al.'s draw (`uz < 1` → first item, `uz < 1 + 0.5^θ` → second, else
//! `⌊count · (ηu − η + 1)^α⌋`), including YCSB's quirks — on a larger item count ζ is extended
//! incrementally but η keeps the item count of construction, and a smaller count keeps the old ζ;
//! ScrambledZipfian's inner Zipfian over items `0..=10¹⁰` (so 10¹⁰ + 1 items) with the
//! precomputed ζ = 26.46902820178302 (a test recomputes ζ(10¹⁰, 0.99) by Euler–Maclaurin and
//! finds it to 1e-9), then `fnvhash64(rank) mod itemcount`; `fnvhash64` (FNV-1a: offset basis
//! 0xCBF29CE484222325, prime 1099511628211, XOR then multiply, over the 8 bytes low byte first,
//! then Java's `Math.abs`; checked against the published FNV-1a test vectors); SkewedLatest
//! `latest − zipfian(latest)` with the Zipfian built over `latest` items at construction;
//! Hotspot's interval split `⌊interval · hotsetfraction⌋` with defaults 0.2/0.8; Exponential's
//! `γ = −ln(1 − percentile/100) / (recordcount · frac)` with defaults 95 and 0.8571428571,
//! keys `latest − ⌊−ln(u)/γ⌋` redrawn while negative; CoreWorkload's key choosers (zipfian over
//! `recordcount + ⌊operationcount · insertproportion · 2⌋ + 1` keys, redrawn while beyond the
//! latest inserted key), its operation chooser (read, update, insert, scan, read-modify-write
//! in that order), inserts numbered from `recordcount` on, and the presets' parameters.
//!
//! **Not reproduced:** YCSB's PRNG (`ThreadLocalRandom`, unseeded, so YCSB's own streams are not
//! reproducible either) — ours is a seeded `StdRng`, so the sequences are YCSB's in distribution,
//! not bit for bit; YCSB truncating key numbers to 32 bits (`intValue()`) in `nextKeynum`, which
//! only matters beyond 2³¹ records; `fnvhash64` of a rank hashing to `i64::MIN` (where Java's
//! `Math.abs` stays negative and YCSB would produce a negative key — we take the unsigned
//! magnitude); multi-threaded acknowledgement of inserts (a single stream acknowledges each insert
//! at once). The key *names* YCSB stores (`"user" + fnvhash64(keynum)` with the default
//! `insertorder=hashed`) and hence record placement and scan order in a sorted store are the
//! engine's business; [`fnvhash64`] is public for it.

use super::{sub_seed, GenError};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// YCSB's FNV-1a offset basis.
pub const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
/// YCSB's FNV prime.
pub const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 bytes of `val`, low byte first, then the absolute
/// value as Java's `Math.abs` computes it (so `i64::MIN` stays `i64::MIN`).
#[inline]
pub fn fnvhash64(val: i64) -> i64 {
    let mut h = FNV_OFFSET_BASIS_64;
    let mut v = val as u64;
    for _ in 0..8 {
        h ^= v & 0xff;
        h = h.wrapping_mul(FNV_PRIME_64);
        v >>= 8;
    }
    (h as i64).wrapping_abs()
}

/// `Σ_{i=st}^{n−1} 1/(i+1)^θ` added to `initial`, YCSB's incremental ζ.
pub fn zeta_incremental(st: u64, n: u64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in st..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// YCSB's `ZipfianGenerator`: item `base` most popular, `base + 1` next, and so on, drawn with
/// Gray et al.'s method ("Quickly generating billion-record synthetic databases", SIGMOD 1994).
#[derive(Debug)]
pub struct ZipfianGenerator {
    rng: StdRng,
    items: u64,
    base: u64,
    theta: f64,
    zeta2theta: f64,
    half_pow_theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: u64,
    allow_item_count_decrease: bool,
}

impl ZipfianGenerator {
    /// YCSB's default Zipfian constant θ.
    pub const ZIPFIAN_CONSTANT: f64 = 0.99;

    /// Items `0..items` with θ = 0.99. Computes ζ(items, θ) term by term, as YCSB does (about
    /// a second per 50 million items).
    pub fn new(items: u64, seed: u64) -> Self {
        assert!(items >= 1, "a Zipfian generator needs at least one item");
        Self::from_parts(0, items, Self::ZIPFIAN_CONSTANT, None, seed)
    }

    /// Items `min..=max` with exponent `theta`.
    pub fn with_range(min: u64, max: u64, theta: f64, seed: u64) -> Self {
        assert!(max >= min, "Zipfian range {min}..={max} is empty");
        Self::from_parts(min, max - min + 1, theta, None, seed)
    }

    /// Items `min..=max` with exponent `theta` and a precomputed ζ(max − min + 1, θ).
    pub fn with_zetan(min: u64, max: u64, theta: f64, zetan: f64, seed: u64) -> Self {
        assert!(max >= min, "Zipfian range {min}..={max} is empty");
        Self::from_parts(min, max - min + 1, theta, Some(zetan), seed)
    }

    /// `items` may be 0 here (SkewedLatest over an empty key space, as YCSB allows).
    fn from_parts(base: u64, items: u64, theta: f64, zetan: Option<f64>, seed: u64) -> Self {
        assert!(
            theta > 0.0 && theta != 1.0 && theta.is_finite(),
            "Zipfian constant {theta} must be > 0 and ≠ 1"
        );
        let zeta2theta = zeta_incremental(0, 2, theta, 0.0);
        let zetan = zetan.unwrap_or_else(|| zeta_incremental(0, items, theta, 0.0));
        ZipfianGenerator {
            rng: StdRng::seed_from_u64(seed),
            items,
            base,
            theta,
            zeta2theta,
            half_pow_theta: 0.5f64.powf(theta),
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan),
            count_for_zeta: items,
            allow_item_count_decrease: false,
        }
    }

    /// Recompute ζ from scratch when [`next_long`](Self::next_long) is given fewer items than
    /// before (YCSB's `allowitemcountdecrease`, off by default: the old ζ is kept).
    pub fn set_allow_item_count_decrease(&mut self, allow: bool) {
        self.allow_item_count_decrease = allow;
    }

    /// Number of items given at construction.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// The exponent θ.
    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// ζ(n, θ) for the item count last drawn over.
    pub fn zetan(&self) -> f64 {
        self.zetan
    }

    /// The next item over the item count of construction.
    #[inline]
    pub fn next_value(&mut self) -> u64 {
        self.next_long(self.items)
    }

    /// The next item over `item_count` items (`base..base + item_count`). A larger count than
    /// before extends ζ incrementally (new inserts, as in workload D); η keeps the item count of
    /// construction, as in YCSB.
    #[inline]
    pub fn next_long(&mut self, item_count: u64) -> u64 {
        if item_count != self.count_for_zeta {
            if item_count > self.count_for_zeta {
                self.zetan = zeta_incremental(self.count_for_zeta, item_count, self.theta, self.zetan);
                self.count_for_zeta = item_count;
                self.update_eta();
            } else if self.allow_item_count_decrease {
                self.zetan = zeta_incremental(0, item_count, self.theta, 0.0);
                self.count_for_zeta = item_count;
                self.update_eta();
            }
        }
        let u: f64 = self.rng.random();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + self.half_pow_theta {
            return self.base + 1;
        }
        self.base + (item_count as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }

    fn update_eta(&mut self) {
        self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / self.zetan);
    }
}

/// YCSB's `ScrambledZipfianGenerator`: a Zipfian rank over 10¹⁰ + 1 items with the precomputed
/// ζ, hashed with [`fnvhash64`] and taken modulo the item count, so popular items are spread over
/// the key space (and every item also collects a share of the long tail).
#[derive(Debug)]
pub struct ScrambledZipfianGenerator {
    gen: ZipfianGenerator,
    min: u64,
    item_count: u64,
}

impl ScrambledZipfianGenerator {
    /// ζ(10¹⁰, 0.99), precomputed by YCSB.
    pub const ZETAN: f64 = 26.469_028_201_783_02;
    /// The Zipfian constant ZETAN was computed for.
    pub const USED_ZIPFIAN_CONSTANT: f64 = 0.99;
    /// The inner Zipfian's largest item (it draws over `0..=ITEM_COUNT`).
    pub const ITEM_COUNT: u64 = 10_000_000_000;

    /// Items `0..items`.
    pub fn new(items: u64, seed: u64) -> Self {
        assert!(items >= 1, "a scrambled Zipfian generator needs at least one item");
        Self::with_range(0, items - 1, seed)
    }

    /// Items `min..=max`.
    pub fn with_range(min: u64, max: u64, seed: u64) -> Self {
        assert!(max >= min, "scrambled Zipfian range {min}..={max} is empty");
        ScrambledZipfianGenerator {
            gen: ZipfianGenerator::with_zetan(0, Self::ITEM_COUNT, Self::USED_ZIPFIAN_CONSTANT, Self::ZETAN, seed),
            min,
            item_count: max - min + 1,
        }
    }

    /// Number of items.
    pub fn item_count(&self) -> u64 {
        self.item_count
    }

    /// The item a Zipfian rank maps to.
    #[inline]
    pub fn scramble(&self, rank: u64) -> u64 {
        self.min + fnvhash64(rank as i64).unsigned_abs() % self.item_count
    }

    /// The next item.
    #[inline]
    pub fn next_value(&mut self) -> u64 {
        let r = self.gen.next_value();
        self.scramble(r)
    }
}

/// YCSB's `SkewedLatestGenerator`: `latest − zipfian(latest)`, so the most recently inserted
/// keys are the hottest (workload D): key `latest` is drawn with the Zipfian's first-item
/// probability `1/ζ(latest, 0.99)`; key 0 is never drawn while `latest > 0` (as in YCSB).
#[derive(Debug)]
pub struct SkewedLatestGenerator {
    zipf: ZipfianGenerator,
}

impl SkewedLatestGenerator {
    /// A generator whose Zipfian is built over `latest` items (YCSB passes the basis counter's
    /// last value, i.e. `recordcount − 1` before any insert).
    pub fn new(latest: u64, seed: u64) -> Self {
        SkewedLatestGenerator {
            zipf: ZipfianGenerator::from_parts(0, latest, ZipfianGenerator::ZIPFIAN_CONSTANT, None, seed),
        }
    }

    /// The next key given the latest inserted key.
    #[inline]
    pub fn next_value(&mut self, latest: u64) -> u64 {
        latest.saturating_sub(self.zipf.next_long(latest))
    }
}

/// YCSB's `HotspotIntegerGenerator`: a fraction `hot_opn_fraction` of the draws goes uniformly to
/// the first `⌊interval · hotset_fraction⌋` items of `lower..=upper`, the rest uniformly to the
/// others.
#[derive(Debug)]
pub struct HotspotGenerator {
    rng: StdRng,
    lower: u64,
    hot_interval: u64,
    cold_interval: u64,
    hot_opn_fraction: f64,
}

impl HotspotGenerator {
    /// YCSB's default `hotspotdatafraction`.
    pub const DEFAULT_DATA_FRACTION: f64 = 0.2;
    /// YCSB's default `hotspotopnfraction`.
    pub const DEFAULT_OPN_FRACTION: f64 = 0.8;

    /// Items `lower..=upper`; fractions in [0, 1]. If one of the two sets is empty every draw
    /// goes to the other (where YCSB would divide by zero).
    pub fn new(lower: u64, upper: u64, hotset_fraction: f64, hot_opn_fraction: f64, seed: u64) -> Self {
        assert!(upper >= lower, "hotspot range {lower}..={upper} is empty");
        assert!(
            (0.0..=1.0).contains(&hotset_fraction),
            "hot set fraction {hotset_fraction} not in [0, 1]"
        );
        assert!(
            (0.0..=1.0).contains(&hot_opn_fraction),
            "hot operation fraction {hot_opn_fraction} not in [0, 1]"
        );
        let interval = upper - lower + 1;
        let hot_interval = (interval as f64 * hotset_fraction) as u64;
        HotspotGenerator {
            rng: StdRng::seed_from_u64(seed),
            lower,
            hot_interval,
            cold_interval: interval - hot_interval,
            hot_opn_fraction,
        }
    }

    /// Number of hot items (the first ones).
    pub fn hot_interval(&self) -> u64 {
        self.hot_interval
    }

    /// The next item.
    #[inline]
    pub fn next_value(&mut self) -> u64 {
        let hot = self.rng.random::<f64>() < self.hot_opn_fraction;
        if (hot && self.hot_interval > 0) || self.cold_interval == 0 {
            self.lower + self.rng.random_range(0..self.hot_interval)
        } else {
            self.lower + self.hot_interval + self.rng.random_range(0..self.cold_interval)
        }
    }
}

/// YCSB's `ExponentialGenerator`: values `−ln(u)/γ`, with `percentile`% of them below `range`.
#[derive(Debug)]
pub struct ExponentialGenerator {
    rng: StdRng,
    gamma: f64,
}

impl ExponentialGenerator {
    /// YCSB's default `exponential.percentile`.
    pub const DEFAULT_PERCENTILE: f64 = 95.0;
    /// YCSB's default `exponential.frac` (≈ 6/7).
    pub const DEFAULT_FRAC: f64 = 0.857_142_857_1;

    /// `percentile`% (in (0, 100)) of the values fall below `range` (> 0).
    pub fn new(percentile: f64, range: f64, seed: u64) -> Self {
        assert!(
            percentile > 0.0 && percentile < 100.0,
            "exponential percentile {percentile} not in (0, 100)"
        );
        assert!(range > 0.0, "exponential range {range} must be positive");
        ExponentialGenerator {
            rng: StdRng::seed_from_u64(seed),
            gamma: -(1.0 - percentile / 100.0).ln() / range,
        }
    }

    /// Values of mean `mean`.
    pub fn with_mean(mean: f64, seed: u64) -> Self {
        assert!(mean > 0.0, "exponential mean {mean} must be positive");
        ExponentialGenerator {
            rng: StdRng::seed_from_u64(seed),
            gamma: 1.0 / mean,
        }
    }

    /// The rate γ.
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The next value (may be +∞ when the uniform draw is exactly 0, as in YCSB).
    #[inline]
    pub fn next_value(&mut self) -> f64 {
        -self.rng.random::<f64>().ln() / self.gamma
    }
}

/// YCSB's `UniformLongGenerator`: items `lower..=upper`, equally likely.
#[derive(Debug)]
pub struct UniformGenerator {
    rng: StdRng,
    lower: u64,
    upper: u64,
}

impl UniformGenerator {
    /// Items `lower..=upper`.
    pub fn new(lower: u64, upper: u64, seed: u64) -> Self {
        assert!(upper >= lower, "uniform range {lower}..={upper} is empty");
        UniformGenerator {
            rng: StdRng::seed_from_u64(seed),
            lower,
            upper,
        }
    }

    /// The next item.
    #[inline]
    pub fn next_value(&mut self) -> u64 {
        self.rng.random_range(self.lower..=self.upper)
    }
}

/// YCSB's `CounterGenerator` (insert key numbers): `start`, `start + 1`, ...
#[derive(Clone, Debug)]
pub struct CounterGenerator {
    counter: u64,
}

impl CounterGenerator {
    /// A counter whose first value is `start`.
    pub fn new(start: u64) -> Self {
        CounterGenerator { counter: start }
    }

    /// The next value.
    #[inline]
    pub fn next_value(&mut self) -> u64 {
        let v = self.counter;
        self.counter += 1;
        v
    }

    /// The last value returned (`start − 1` before the first, 0 if `start` is 0).
    #[inline]
    pub fn last_value(&self) -> u64 {
        self.counter.saturating_sub(1)
    }
}

/// A core workload's request distribution (`requestdistribution`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RequestDistribution {
    /// `uniform` over the loaded records.
    Uniform,
    /// `zipfian`: YCSB's scrambled Zipfian (θ 0.99).
    Zipfian,
    /// `latest`: SkewedLatest over the inserted keys.
    Latest,
    /// `hotspot`.
    Hotspot {
        /// `hotspotdatafraction` (default 0.2).
        data_fraction: f64,
        /// `hotspotopnfraction` (default 0.8).
        opn_fraction: f64,
    },
    /// `exponential`, counted back from the latest key.
    Exponential {
        /// `exponential.percentile` (default 95).
        percentile: f64,
        /// `exponential.frac` (default 0.8571428571).
        frac: f64,
    },
}

impl RequestDistribution {
    /// `hotspot` with YCSB's defaults.
    pub const HOTSPOT: RequestDistribution = RequestDistribution::Hotspot {
        data_fraction: HotspotGenerator::DEFAULT_DATA_FRACTION,
        opn_fraction: HotspotGenerator::DEFAULT_OPN_FRACTION,
    };
    /// `exponential` with YCSB's defaults.
    pub const EXPONENTIAL: RequestDistribution = RequestDistribution::Exponential {
        percentile: ExponentialGenerator::DEFAULT_PERCENTILE,
        frac: ExponentialGenerator::DEFAULT_FRAC,
    };
}

impl std::str::FromStr for RequestDistribution {
    type Err = GenError;

    /// YCSB's names, with default parameters: `uniform`, `zipfian`, `latest`, `hotspot`,
    /// `exponential`.
    fn from_str(s: &str) -> Result<Self, GenError> {
        match s {
            "uniform" => Ok(RequestDistribution::Uniform),
            "zipfian" => Ok(RequestDistribution::Zipfian),
            "latest" => Ok(RequestDistribution::Latest),
            "hotspot" => Ok(RequestDistribution::HOTSPOT),
            "exponential" => Ok(RequestDistribution::EXPONENTIAL),
            _ => Err(GenError(format!(
                "unknown YCSB request distribution '{s}': expected uniform, zipfian, latest, hotspot or exponential"
            ))),
        }
    }
}

/// A YCSB core workload: operation mix, request distribution, scans and record layout.
#[derive(Clone, Debug, PartialEq)]
pub struct YcsbWorkload {
    /// Preset letter ('a'..='f'), or '-' for a custom mix.
    pub name: char,
    /// `readproportion`.
    pub read: f64,
    /// `updateproportion`.
    pub update: f64,
    /// `insertproportion`.
    pub insert: f64,
    /// `scanproportion`.
    pub scan: f64,
    /// `readmodifywriteproportion`.
    pub read_modify_write: f64,
    /// `requestdistribution`.
    pub request_distribution: RequestDistribution,
    /// `minscanlength` (default 1).
    pub min_scan_length: u32,
    /// `maxscanlength` (default 1000; 100 in workload E).
    pub max_scan_length: u32,
    /// `scanlengthdistribution` is `zipfian` rather than `uniform`.
    pub scan_length_zipfian: bool,
    /// `fieldcount` (default 10).
    pub field_count: u32,
    /// `fieldlength` in bytes (default 100).
    pub field_length: u32,
    /// `operationcount`, which sizes the zipfian key space for inserts
    /// (`recordcount + ⌊operationcount · insertproportion · 2⌋ + 1` keys); `None` takes the record
    /// count.
    pub operation_count: Option<u64>,
    /// `readallfields` (default true): a read (and the read of a read-modify-write) fetches the
    /// whole record; false fetches one field chosen uniformly.
    pub read_all_fields: bool,
    /// `writeallfields` (default false): an update writes one field chosen uniformly; true writes
    /// the whole record.
    pub write_all_fields: bool,
    /// `cache_size` (lrugen's own property, in bytes; units K, M, G allowed; default 0: none):
    /// the store's own cache of table pages in anonymous memory, as WiredTiger's cache or
    /// InnoDB's buffer pool ([`crate::workload::store`]). 0 reads every page through the page
    /// cache.
    pub cache_bytes: u64,
}

impl YcsbWorkload {
    fn core(name: char, mix: [f64; 5], request_distribution: RequestDistribution) -> Self {
        YcsbWorkload {
            name,
            read: mix[0],
            update: mix[1],
            insert: mix[2],
            scan: mix[3],
            read_modify_write: mix[4],
            request_distribution,
            min_scan_length: 1,
            max_scan_length: 1000,
            scan_length_zipfian: false,
            field_count: 10,
            field_length: 100,
            operation_count: None,
            read_all_fields: true,
            write_all_fields: false,
            cache_bytes: 0,
        }
    }

    /// `CoreWorkload` with no property set: 95 % reads, 5 % updates, `uniform`, ten fields of
    /// 100 bytes (YCSB's defaults; what a properties file starts from when it names no preset).
    pub fn core_defaults() -> Self {
        Self::core('-', [0.95, 0.05, 0.0, 0.0, 0.0], RequestDistribution::Uniform)
    }

    /// A preset by letter: A (50% read / 50% update, zipfian), B (95/5), C (read only),
    /// D (95% read / 5% insert, latest), E (95% scan of 1..=100 records / 5% insert, zipfian),
    /// F (50% read / 50% read-modify-write).
    pub fn preset(letter: char) -> Option<Self> {
        use RequestDistribution::*;
        Some(match letter.to_ascii_lowercase() {
            'a' => Self::core('a', [0.5, 0.5, 0.0, 0.0, 0.0], Zipfian),
            'b' => Self::core('b', [0.95, 0.05, 0.0, 0.0, 0.0], Zipfian),
            'c' => Self::core('c', [1.0, 0.0, 0.0, 0.0, 0.0], Zipfian),
            'd' => Self::core('d', [0.95, 0.0, 0.05, 0.0, 0.0], Latest),
            'e' => YcsbWorkload {
                max_scan_length: 100,
                ..Self::core('e', [0.0, 0.0, 0.05, 0.95, 0.0], Zipfian)
            },
            'f' => Self::core('f', [0.5, 0.0, 0.0, 0.0, 0.5], Zipfian),
            _ => return None,
        })
    }

    /// Record size in bytes (`fieldcount × fieldlength`, 1000 by default).
    pub fn record_bytes(&self) -> u64 {
        self.field_count as u64 * self.field_length as u64
    }

    fn validate(&self) -> Result<(), GenError> {
        let mix = [self.read, self.update, self.insert, self.scan, self.read_modify_write];
        if mix.iter().any(|p| !p.is_finite() || *p < 0.0) || mix.iter().sum::<f64>() <= 0.0 {
            return Err(GenError(format!(
                "YCSB operation proportions {mix:?} must be non-negative and not all zero"
            )));
        }
        if self.field_count == 0 || self.field_length == 0 {
            return Err(GenError(format!(
                "YCSB records of {} fields of {} bytes: expected at least one field of at least one byte",
                self.field_count, self.field_length
            )));
        }
        if self.min_scan_length == 0 || self.max_scan_length < self.min_scan_length {
            return Err(GenError(format!(
                "YCSB scan lengths {}..={} must satisfy 1 ≤ min ≤ max",
                self.min_scan_length, self.max_scan_length
            )));
        }
        match self.request_distribution {
            RequestDistribution::Hotspot {
                data_fraction,
                opn_fraction,
            } if !(0.0..=1.0).contains(&data_fraction) || !(0.0..=1.0).contains(&opn_fraction) => Err(GenError(
                format!("YCSB hotspot fractions {data_fraction}/{opn_fraction} must be in [0, 1]"),
            )),
            RequestDistribution::Exponential { percentile, frac }
                if !(percentile > 0.0 && percentile < 100.0 && frac > 0.0 && frac.is_finite()) =>
            {
                Err(GenError(format!(
                    "YCSB exponential percentile {percentile} must be in (0, 100) and frac {frac} positive"
                )))
            }
            _ => Ok(()),
        }
    }
}

/// What a YCSB property did to the workload ([`YcsbWorkload::with_properties`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyEffect {
    /// It set a parameter of the workload.
    Applied,
    /// It changes nothing lrugen models: a measurement or output setting, a database binding's
    /// setting (`mongodb.url`), a parameter of a distribution not in use, key naming
    /// (`insertorder`, `zeropadding`: the table holds records in key-number order whatever their
    /// names).
    Ignored,
}

/// The properties of a YCSB run that are not the workload's: `recordcount`, `operationcount`,
/// `threadcount` and `maxexecutiontime` (seconds), which lrugen takes as the run's records,
/// operations, clients and runtime.
pub const RUN_PROPERTIES: [&str; 4] = ["recordcount", "operationcount", "threadcount", "maxexecutiontime"];

/// Properties of YCSB's own that change nothing lrugen models (measurement, status and export
/// settings, key naming, insertion retries).
const IGNORED_PROPERTIES: [&str; 13] = [
    "table",
    "db",
    "measurementtype",
    "exporter",
    "exportfile",
    "fieldnameprefix",
    "zeropadding",
    "insertorder",
    "dataintegrity",
    "reportlatencyforeacherror",
    "latencytrackederrors",
    "core_workload_insertion_retry_limit",
    "core_workload_insertion_retry_interval",
];

/// Prefixes of YCSB's own dotted properties; any other dotted key is a database binding's.
const CORE_PREFIXES: [&str; 6] = [
    "measurement.",
    "histogram.",
    "hdrhistogram.",
    "timeseries.",
    "status.",
    "exponential.",
];

fn prop_f64(key: &str, value: &str) -> Result<f64, GenError> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| GenError(format!("{key}={value}: expected a number")))
}

fn prop_u32(key: &str, value: &str) -> Result<u32, GenError> {
    value
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|&v| v >= 1)
        .ok_or_else(|| GenError(format!("{key}={value}: expected a whole number of at least 1")))
}

fn prop_bool(key: &str, value: &str) -> Result<bool, GenError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(GenError(format!("{key}={value}: expected true or false"))),
    }
}

impl YcsbWorkload {
    /// The workload of a YCSB run started from `self` (a preset, or [`Self::core_defaults`] for
    /// a properties file alone) with `properties` set, as `-P workloadX -p key=value` sets them
    /// (the map holds each key once, the last given). Returns each property's effect, in key
    /// order. Refused by name: another workload class, `requestdistribution=sequential`,
    /// `fieldlengthdistribution` other than `constant` (records of varying size), `target`
    /// (throttling), `insertstart`/`insertcount` (a load split among YCSB processes),
    /// `dotransactions=false` (a load phase alone), and any key YCSB's `CoreWorkload` does not
    /// know; [`RUN_PROPERTIES`] are the caller's to take out first.
    pub fn with_properties(
        &self,
        properties: &std::collections::BTreeMap<String, String>,
    ) -> Result<(YcsbWorkload, Vec<(String, PropertyEffect)>), GenError> {
        let mut w = self.clone();
        if !properties.is_empty() {
            w.name = '-';
        }
        // the distribution first: its parameters may be given before it
        if let Some(v) = properties.get("requestdistribution") {
            w.request_distribution = match v.trim() {
                "sequential" => {
                    return Err(GenError(format!(
                    "requestdistribution={v}: not modelled; expected uniform, zipfian, latest, hotspot or exponential"
                )))
                }
                d => d
                    .parse()
                    .map_err(|e: GenError| GenError(format!("requestdistribution: {e}")))?,
            };
        }
        let mut effects = Vec::with_capacity(properties.len());
        for (key, value) in properties {
            let effect = w.set_property(key, value)?;
            effects.push((key.clone(), effect));
        }
        w.validate()?;
        Ok((w, effects))
    }

    fn set_property(&mut self, key: &str, value: &str) -> Result<PropertyEffect, GenError> {
        use PropertyEffect::*;
        let v = value.trim();
        match key {
            "requestdistribution" => {}
            "workload" => {
                if !matches!(
                    v,
                    "site.ycsb.workloads.CoreWorkload" | "com.yahoo.ycsb.workloads.CoreWorkload"
                ) {
                    return Err(GenError(format!(
                        "workload={value}: only YCSB's CoreWorkload is modelled; expected site.ycsb.workloads.CoreWorkload"
                    )));
                }
                return Ok(Ignored);
            }
            "readproportion"
            | "updateproportion"
            | "insertproportion"
            | "scanproportion"
            | "readmodifywriteproportion" => {
                let p = prop_f64(key, value)?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(GenError(format!("{key}={value}: expected a proportion in [0, 1]")));
                }
                *match key {
                    "readproportion" => &mut self.read,
                    "updateproportion" => &mut self.update,
                    "insertproportion" => &mut self.insert,
                    "scanproportion" => &mut self.scan,
                    _ => &mut self.read_modify_write,
                } = p;
            }
            "hotspotdatafraction" | "hotspotopnfraction" => match &mut self.request_distribution {
                RequestDistribution::Hotspot {
                    data_fraction,
                    opn_fraction,
                } => {
                    let f = prop_f64(key, value)?;
                    *if key == "hotspotdatafraction" {
                        data_fraction
                    } else {
                        opn_fraction
                    } = f;
                }
                _ => return Ok(Ignored),
            },
            "exponential.percentile" | "exponential.frac" => match &mut self.request_distribution {
                RequestDistribution::Exponential { percentile, frac } => {
                    let f = prop_f64(key, value)?;
                    *if key == "exponential.percentile" {
                        percentile
                    } else {
                        frac
                    } = f;
                }
                _ => return Ok(Ignored),
            },
            "minscanlength" => self.min_scan_length = prop_u32(key, value)?,
            "maxscanlength" => self.max_scan_length = prop_u32(key, value)?,
            "scanlengthdistribution" => {
                self.scan_length_zipfian = match v {
                    "uniform" => false,
                    "zipfian" => true,
                    _ => {
                        return Err(GenError(format!(
                            "scanlengthdistribution={value}: expected uniform or zipfian"
                        )))
                    }
                }
            }
            "fieldcount" => self.field_count = prop_u32(key, value)?,
            "fieldlength" => self.field_length = prop_u32(key, value)?,
            "fieldlengthdistribution" => {
                if v != "constant" {
                    return Err(GenError(format!(
                        "fieldlengthdistribution={value}: records of varying size are not modelled; expected constant"
                    )));
                }
            }
            "readallfields" => self.read_all_fields = prop_bool(key, value)?,
            "cache_size" => {
                let pages = crate::experiment::size::parse_pages(v)
                    .map_err(|e| GenError(format!("cache_size={value}: {e} (bytes, or with a unit: 512M, 2G)")))?;
                self.cache_bytes = pages * 4096;
            }
            "writeallfields" => self.write_all_fields = prop_bool(key, value)?,
            "dotransactions" => {
                if !prop_bool(key, value)? {
                    return Err(GenError(format!(
                        "dotransactions={value}: a load phase alone is not modelled; expected true"
                    )));
                }
                return Ok(Ignored);
            }
            "target" => {
                return Err(GenError(format!(
                    "target={value}: throttled runs (a target throughput) are not modelled"
                )))
            }
            "insertstart" | "insertcount" => {
                return Err(GenError(format!(
                    "{key}={value}: a load split among several YCSB processes is not modelled"
                )))
            }
            _ if RUN_PROPERTIES.contains(&key) => {
                return Err(GenError(format!(
                    "{key} is a property of the run, not of the workload (records, operations, threadcount, runtime)"
                )))
            }
            _ if IGNORED_PROPERTIES.contains(&key) => return Ok(Ignored),
            _ if key.contains('.') && !CORE_PREFIXES.iter().any(|p| key.starts_with(p)) => return Ok(Ignored),
            _ if CORE_PREFIXES[..5].iter().any(|p| key.starts_with(p)) => return Ok(Ignored),
            _ => {
                return Err(GenError(format!(
                    "unknown YCSB property '{key}': expected one of CoreWorkload's (readproportion, \
                     updateproportion, insertproportion, scanproportion, readmodifywriteproportion, \
                     requestdistribution, hotspotdatafraction, hotspotopnfraction, exponential.percentile, \
                     exponential.frac, minscanlength, maxscanlength, scanlengthdistribution, fieldcount, \
                     fieldlength, fieldlengthdistribution, readallfields, writeallfields, recordcount, \
                     operationcount, threadcount, maxexecutiontime), lrugen's cache_size (the store's own \
                     cache) or a database binding's (a dotted name)"
                )))
            }
        }
        Ok(Applied)
    }
}

impl std::str::FromStr for YcsbWorkload {
    type Err = GenError;

    /// `a`..`f` (also `A`, `workloada`).
    fn from_str(s: &str) -> Result<Self, GenError> {
        let t = s.trim().to_ascii_lowercase();
        let t = t.strip_prefix("workload").unwrap_or(&t);
        let mut chars = t.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => YcsbWorkload::preset(c),
            _ => None,
        }
        .ok_or_else(|| GenError(format!("unknown YCSB workload '{s}': expected a, b, c, d, e or f")))
    }
}

/// One YCSB operation on key numbers (records are numbered `0..recordcount` at load, inserts
/// continue from `recordcount`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum YcsbOp {
    /// Read one record.
    Read(u64),
    /// Update one record.
    Update(u64),
    /// Insert a new record.
    Insert(u64),
    /// Scan this many records from a start key.
    Scan(u64, u32),
    /// Read a record, then update it.
    ReadModifyWrite(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpKind {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

#[derive(Debug)]
enum KeyChooser {
    Uniform(UniformGenerator),
    Zipfian(ScrambledZipfianGenerator),
    Latest(SkewedLatestGenerator),
    Hotspot(HotspotGenerator),
    Exponential(ExponentialGenerator),
}

#[derive(Debug)]
enum ScanLength {
    Uniform(UniformGenerator),
    Zipfian(ZipfianGenerator),
}

/// The transaction phase of a YCSB core workload as a seeded stream of [`YcsbOp`]s.
#[derive(Debug)]
pub struct YcsbGen {
    workload: YcsbWorkload,
    record_count: u64,
    op_rng: StdRng,
    ops: [(f64, OpKind); 5],
    nr_ops: usize,
    keys: KeyChooser,
    scan_length: ScanLength,
    inserts: CounterGenerator,
    fields: UniformGenerator,
}

impl YcsbGen {
    /// The transaction phase of `workload` after loading `record_count` (≥ 1) records.
    pub fn new(workload: &YcsbWorkload, record_count: u64, seed: u64) -> Result<YcsbGen, GenError> {
        workload.validate()?;
        if record_count == 0 {
            return Err(GenError("YCSB needs at least one record".into()));
        }
        let w = workload;
        let mut ops = [(0.0, OpKind::Read); 5];
        let mut nr_ops = 0;
        let total = w.read + w.update + w.insert + w.scan + w.read_modify_write;
        for (p, k) in [
            (w.read, OpKind::Read),
            (w.update, OpKind::Update),
            (w.insert, OpKind::Insert),
            (w.scan, OpKind::Scan),
            (w.read_modify_write, OpKind::ReadModifyWrite),
        ] {
            if p > 0.0 {
                ops[nr_ops] = (p / total, k);
                nr_ops += 1;
            }
        }
        let key_seed = sub_seed(seed, 1);
        let last = record_count - 1;
        let keys = match w.request_distribution {
            RequestDistribution::Uniform => KeyChooser::Uniform(UniformGenerator::new(0, last, key_seed)),
            RequestDistribution::Zipfian => {
                let op_count = w.operation_count.unwrap_or(record_count);
                let expected_new_keys = (op_count as f64 * w.insert * 2.0) as u64;
                KeyChooser::Zipfian(ScrambledZipfianGenerator::with_range(
                    0,
                    record_count + expected_new_keys,
                    key_seed,
                ))
            }
            RequestDistribution::Latest => KeyChooser::Latest(SkewedLatestGenerator::new(last, key_seed)),
            RequestDistribution::Hotspot {
                data_fraction,
                opn_fraction,
            } => KeyChooser::Hotspot(HotspotGenerator::new(0, last, data_fraction, opn_fraction, key_seed)),
            RequestDistribution::Exponential { percentile, frac } => KeyChooser::Exponential(
                ExponentialGenerator::new(percentile, record_count as f64 * frac, key_seed),
            ),
        };
        let scan_seed = sub_seed(seed, 2);
        let (lo, hi) = (w.min_scan_length as u64, w.max_scan_length as u64);
        let scan_length = if w.scan_length_zipfian {
            ScanLength::Zipfian(ZipfianGenerator::with_range(
                lo,
                hi,
                ZipfianGenerator::ZIPFIAN_CONSTANT,
                scan_seed,
            ))
        } else {
            ScanLength::Uniform(UniformGenerator::new(lo, hi, scan_seed))
        };
        Ok(YcsbGen {
            workload: w.clone(),
            record_count,
            op_rng: StdRng::seed_from_u64(sub_seed(seed, 0)),
            ops,
            nr_ops,
            keys,
            scan_length,
            inserts: CounterGenerator::new(record_count),
            fields: UniformGenerator::new(0, w.field_count as u64 - 1, sub_seed(seed, 3)),
        })
    }

    /// YCSB's `fieldchooser`: the field (0-based) a one-field read or update touches, uniform
    /// over `fieldcount`.
    #[inline]
    pub fn next_field(&mut self) -> u32 {
        self.fields.next_value() as u32
    }

    /// The workload.
    pub fn workload(&self) -> &YcsbWorkload {
        &self.workload
    }

    /// Records loaded before the transaction phase.
    pub fn record_count(&self) -> u64 {
        self.record_count
    }

    /// The latest inserted key number (`record_count − 1` before any insert).
    pub fn latest(&self) -> u64 {
        self.inserts.last_value()
    }

    #[inline]
    fn choose_op(&mut self) -> OpKind {
        let mut u: f64 = self.op_rng.random();
        for &(p, k) in &self.ops[..self.nr_ops] {
            if u < p {
                return k;
            }
            u -= p;
        }
        self.ops[self.nr_ops - 1].1
    }

    /// YCSB's `nextKeynum`: a key of the request distribution that exists (at most the latest
    /// inserted one).
    #[inline]
    pub fn next_keynum(&mut self) -> u64 {
        let latest = self.inserts.last_value();
        match &mut self.keys {
            KeyChooser::Uniform(g) => g.next_value(),
            KeyChooser::Hotspot(g) => g.next_value(),
            KeyChooser::Zipfian(g) => loop {
                let k = g.next_value();
                if k <= latest {
                    break k;
                }
            },
            KeyChooser::Latest(g) => g.next_value(latest),
            KeyChooser::Exponential(g) => loop {
                // Java's double-to-int conversion saturates, as `as i32` does.
                let k = latest as i64 - g.next_value() as i32 as i64;
                if k >= 0 {
                    break k as u64;
                }
            },
        }
    }

    /// The next operation.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> YcsbOp {
        match self.choose_op() {
            OpKind::Read => YcsbOp::Read(self.next_keynum()),
            OpKind::Update => YcsbOp::Update(self.next_keynum()),
            OpKind::Insert => YcsbOp::Insert(self.inserts.next_value()),
            OpKind::Scan => {
                let k = self.next_keynum();
                let len = match &mut self.scan_length {
                    ScanLength::Uniform(g) => g.next_value(),
                    ScanLength::Zipfian(g) => g.next_value(),
                };
                YcsbOp::Scan(k, len as u32)
            }
            OpKind::ReadModifyWrite => YcsbOp::ReadModifyWrite(self.next_keynum()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{chi_square, chi_square_critical_999, draws};
    use super::*;

    fn key(op: YcsbOp) -> u64 {
        match op {
            YcsbOp::Read(k)
            | YcsbOp::Update(k)
            | YcsbOp::Insert(k)
            | YcsbOp::ReadModifyWrite(k)
            | YcsbOp::Scan(k, _) => k,
        }
    }

    /// Standard FNV-1a over bytes, to check [`fnvhash64`] against the published test vectors.
    fn fnv1a(bytes: &[u8]) -> u64 {
        bytes
            .iter()
            .fold(FNV_OFFSET_BASIS_64, |h, &b| (h ^ b as u64).wrapping_mul(FNV_PRIME_64))
    }

    #[test]
    fn fnvhash64_is_ycsbs() {
        // Published FNV-1a 64 vectors (Fowler, Noll, Vo).
        assert_eq!(fnv1a(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x85944171f73967e8);
        for v in [0i64, 1, 2, 255, 256, 1 << 40, -1, i64::MAX, i64::MIN, 10_000_000_000] {
            let h = fnv1a(&v.to_le_bytes()) as i64;
            assert_eq!(fnvhash64(v), h.wrapping_abs(), "{v}");
            assert!(fnvhash64(v) >= 0 || h == i64::MIN);
        }
    }

    /// ZETAN is ζ(10¹⁰, 0.99): Euler–Maclaurin with the first 10⁵ terms summed exactly, the
    /// integral of the rest, and the first two correction terms (remainder < 1e-20).
    #[test]
    fn scrambled_zetan_is_zeta_of_ten_billion() {
        let (s, m, n) = (0.99f64, 100_000f64, 1e10f64);
        let head = zeta_incremental(0, m as u64 - 1, s, 0.0);
        let tail = (n.powf(1.0 - s) - m.powf(1.0 - s)) / (1.0 - s)
            + (m.powf(-s) + n.powf(-s)) / 2.0
            + s / 12.0 * (m.powf(-s - 1.0) - n.powf(-s - 1.0));
        let z = head + tail;
        let rel = (z - ScrambledZipfianGenerator::ZETAN).abs() / z;
        assert!(
            rel < 1e-9,
            "ζ(10^10, 0.99) = {z} vs YCSB's {}",
            ScrambledZipfianGenerator::ZETAN
        );
    }

    #[test]
    fn determinism_of_every_generator() {
        type Mk = fn(u64) -> Box<dyn FnMut() -> u64>;
        let makers: [(&str, Mk); 8] = [
            ("zipfian", |s| {
                let mut g = ZipfianGenerator::new(1000, s);
                Box::new(move || g.next_value())
            }),
            ("scrambled", |s| {
                let mut g = ScrambledZipfianGenerator::new(1000, s);
                Box::new(move || g.next_value())
            }),
            ("latest", |s| {
                let mut g = SkewedLatestGenerator::new(999, s);
                Box::new(move || g.next_value(999))
            }),
            ("hotspot", |s| {
                let mut g = HotspotGenerator::new(0, 999, 0.2, 0.8, s);
                Box::new(move || g.next_value())
            }),
            ("exponential", |s| {
                let mut g = ExponentialGenerator::new(95.0, 857.0, s);
                Box::new(move || g.next_value().to_bits())
            }),
            ("uniform", |s| {
                let mut g = UniformGenerator::new(0, 999, s);
                Box::new(move || g.next_value())
            }),
            ("ycsb-a", |s| {
                let mut g = YcsbGen::new(&YcsbWorkload::preset('a').unwrap(), 1000, s).unwrap();
                Box::new(move || {
                    let op = g.next();
                    key(op) * 8 + matches!(op, YcsbOp::Update(_)) as u64
                })
            }),
            ("ycsb-e", |s| {
                let mut g = YcsbGen::new(&YcsbWorkload::preset('e').unwrap(), 1000, s).unwrap();
                Box::new(move || match g.next() {
                    YcsbOp::Scan(k, l) => k << 8 | l as u64,
                    op => key(op),
                })
            }),
        ];
        for (name, mk) in makers {
            let a = draws(10_000, mk(1));
            let b = draws(10_000, mk(1));
            let c = draws(10_000, mk(2));
            assert_eq!(a, b, "{name}: same seed");
            assert_ne!(a, c, "{name}: different seed");
        }
        let mut c = CounterGenerator::new(5);
        assert_eq!(c.last_value(), 4);
        assert_eq!((c.next_value(), c.next_value(), c.last_value()), (5, 6, 6));
    }

    /// Zipfian item frequencies against the generator's exact probabilities (χ² over the first
    /// 30 items and the tail at significance 0.001), and the first two items against the true
    /// Zipf pmf 1/(i^θ ζ(n, θ)) — exact in Gray's method — within 4% (their binomial standard
    /// errors are under 1% of the value over 300,000 draws). Items beyond stay in range.
    #[test]
    fn zipfian_shape() {
        let n = 1000u64;
        let theta = ZipfianGenerator::ZIPFIAN_CONSTANT;
        let mut g = ZipfianGenerator::new(n, 3);
        let draws = 300_000;
        let mut obs = vec![0u64; 31];
        for _ in 0..draws {
            let v = g.next_value();
            assert!(v < n);
            obs[(v as usize).min(30)] += 1;
        }
        let zn = zeta_incremental(0, n, theta, 0.0);
        let zeta2 = 1.0 + 0.5f64.powf(theta);
        let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zn);
        let u_at = |k: f64| 1.0 + ((k / n as f64).powf(1.0 - theta) - 1.0) / eta;
        let u1 = zeta2 / zn;
        let mut p = vec![1.0 / zn, 0.5f64.powf(theta) / zn];
        for k in 2..30 {
            p.push(u_at(k as f64 + 1.0).max(u1) - u_at(k as f64).max(u1));
        }
        p.push(1.0 - p.iter().sum::<f64>());
        let x2 = chi_square(&obs, &p);
        assert!(x2 < chi_square_critical_999(30), "χ² {x2}");
        for (i, &o) in obs.iter().take(2).enumerate() {
            let want = 1.0 / ((i + 1) as f64).powf(theta) / zn;
            let got = o as f64 / draws as f64;
            assert!((got - want).abs() < 0.04 * want, "item {i}: {got} vs {want}");
        }
    }

    /// Incremental item count (inserts): growing the count extends ζ term by term to the value a
    /// fresh computation gives, and draws reach the new items.
    #[test]
    fn zipfian_incremental_item_count() {
        let mut g = ZipfianGenerator::new(100, 1);
        let mut max = 0;
        for _ in 0..50_000 {
            max = max.max(g.next_long(200));
        }
        assert!((g.zetan() - zeta_incremental(0, 200, 0.99, 0.0)).abs() < 1e-12);
        assert!((100..200).contains(&max), "max {max}");
        // A smaller count keeps the larger ζ unless allowed.
        g.next_long(150);
        assert!((g.zetan() - zeta_incremental(0, 200, 0.99, 0.0)).abs() < 1e-12);
        g.set_allow_item_count_decrease(true);
        g.next_long(150);
        assert!((g.zetan() - zeta_incremental(0, 150, 0.99, 0.0)).abs() < 1e-12);
    }

    /// The scrambled Zipfian's hottest item takes P(rank 0) = 1/ZETAN = 3.78% of the draws plus
    /// its share of the long tail folded onto it (≈ 1/itemcount of the remaining mass, 0.001%
    /// here); the binomial standard error over 200,000 draws is 0.04 points, so ±5% relative.
    /// The hottest item is not item 0 (scattered). The 10 hottest items carry the generator's
    /// first 10 ranks — Gray's exact mass for them (±0.3 points, 4σ), which over 10¹⁰ items is
    /// 11.8%, not the true Zipf's Σ_{i≤10} i^−0.99 / ZETAN = 11.2%: Gray's continuous
    /// approximation is exact for the first two ranks only, and over 10¹⁰ items ranks 2..9 get
    /// too much (a property of YCSB's generator, reproduced here).
    #[test]
    fn scrambled_zipfian_hottest_share() {
        let n = 100_000u64;
        let mut g = ScrambledZipfianGenerator::new(n, 5);
        let draws = 200_000;
        let mut c = std::collections::HashMap::new();
        for _ in 0..draws {
            let v = g.next_value();
            assert!(v < n);
            *c.entry(v).or_insert(0u64) += 1;
        }
        let mut v: Vec<(u64, u64)> = c.into_iter().map(|(k, c)| (c, k)).collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        let hottest = v[0].0 as f64 / draws as f64;
        let zn = ScrambledZipfianGenerator::ZETAN;
        let want = 1.0 / zn;
        assert!((hottest - want).abs() < 0.05 * want, "hottest {hottest} vs {want}");
        assert_eq!(v[0].1, g.scramble(0));
        assert_ne!(v[0].1, 0);
        let top10 = v.iter().take(10).map(|x| x.0).sum::<u64>() as f64 / draws as f64;
        // Gray's draw reaches rank 10 at u = 1 + ((10/N)^(1−θ) − 1)/η: ranks 0..9 hold [0, u).
        let (theta, items) = (0.99f64, (ScrambledZipfianGenerator::ITEM_COUNT + 1) as f64);
        let eta = (1.0 - (2.0 / items).powf(1.0 - theta)) / (1.0 - (1.0 + 0.5f64.powf(theta)) / zn);
        let gray10 = 1.0 + ((10.0 / items).powf(1.0 - theta) - 1.0) / eta;
        let zipf10 = zeta_incremental(0, 10, theta, 0.0) / zn;
        assert!(
            (top10 - gray10).abs() < 0.003,
            "top 10 {top10} vs Gray's {gray10} (true Zipf {zipf10})"
        );
        assert!(gray10 - zipf10 > 0.005, "Gray {gray10} vs Zipf {zipf10}");
    }

    /// SkewedLatest: the latest key is the hottest, with the Zipfian's first-item share
    /// 1/ζ(latest, 0.99); shares fall with age; after inserts the hot spot moves to the new
    /// latest key.
    #[test]
    fn latest_keys_are_hottest() {
        let latest = 9_999u64;
        let mut g = SkewedLatestGenerator::new(latest, 8);
        let draws = 200_000;
        let mut c = vec![0u64; 10_000];
        for _ in 0..draws {
            let k = g.next_value(latest);
            assert!((1..=latest).contains(&k), "{k}");
            c[k as usize] += 1;
        }
        let want = 1.0 / zeta_incremental(0, latest, 0.99, 0.0);
        let got = c[latest as usize] as f64 / draws as f64;
        assert!((got - want).abs() < 0.05 * want, "latest share {got} vs {want}");
        assert!(c[latest as usize] > c[latest as usize - 1] && c[latest as usize - 1] > c[latest as usize - 5]);
        let recent: u64 = c[9_000..].iter().sum();
        let old: u64 = c[..1_000].iter().sum();
        assert!(recent > 5 * old, "recent {recent} old {old}");
        // New inserts become the hottest keys.
        let mut hits = 0;
        for _ in 0..20_000 {
            hits += (g.next_value(10_499) == 10_499) as u64;
        }
        let want = 1.0 / zeta_incremental(0, 10_499, 0.99, 0.0);
        assert!((hits as f64 / 20_000.0 - want).abs() < 0.15 * want);
    }

    /// Hotspot: 80% of the draws in the first 20% of the keys (binomial standard error 0.09
    /// points over 200,000 draws, so ±1 point), uniform inside each set (χ² over ten bins each).
    #[test]
    fn hotspot_80_20() {
        let mut g = HotspotGenerator::new(0, 9_999, 0.2, 0.8, 4);
        assert_eq!(g.hot_interval(), 2_000);
        let draws = 200_000;
        let (mut hot, mut hb, mut cb) = (0u64, [0u64; 10], [0u64; 10]);
        for _ in 0..draws {
            let k = g.next_value();
            assert!(k < 10_000);
            if k < 2_000 {
                hot += 1;
                hb[(k / 200) as usize] += 1;
            } else {
                cb[((k - 2_000) / 800) as usize] += 1;
            }
        }
        assert!((hot as f64 / draws as f64 - 0.8).abs() < 0.01, "hot share {hot}");
        assert!(chi_square(&hb, &[0.1; 10]) < chi_square_critical_999(9));
        assert!(chi_square(&cb, &[0.1; 10]) < chi_square_critical_999(9));
    }

    /// Exponential: 95% of the values below frac × range (standard error 0.05 points over
    /// 200,000 draws, so ±0.5 point); in a workload the keys counted back from the latest, the
    /// draws beyond the first record (e^−γ·recordcount = 0.05^(1/frac) ≈ 3.0%) redrawn, so
    /// 0.95 / (1 − 0.05^(1/frac)) ≈ 97.98% of keys fall in the newest frac of the records.
    #[test]
    fn exponential_95_percent_within_frac() {
        let rc = 10_000u64;
        let frac = ExponentialGenerator::DEFAULT_FRAC;
        let mut g = ExponentialGenerator::new(95.0, rc as f64 * frac, 6);
        let draws = 200_000;
        let below = (0..draws).filter(|_| g.next_value() < rc as f64 * frac).count() as f64 / draws as f64;
        assert!((below - 0.95).abs() < 0.005, "{below}");

        let w = YcsbWorkload {
            request_distribution: RequestDistribution::EXPONENTIAL,
            ..YcsbWorkload::preset('c').unwrap()
        };
        let mut y = YcsbGen::new(&w, rc, 6).unwrap();
        let cut = rc as f64 - 1.0 - rc as f64 * frac;
        let within = (0..draws).filter(|_| key(y.next()) as f64 > cut).count() as f64 / draws as f64;
        let want = 0.95 / (1.0 - 0.05f64.powf(1.0 / frac));
        assert!((within - want).abs() < 0.005, "{within} vs {want}");
    }

    #[test]
    fn uniform_covers_evenly() {
        let mut g = UniformGenerator::new(10, 29, 2);
        let mut c = [0u64; 20];
        for _ in 0..100_000 {
            c[(g.next_value() - 10) as usize] += 1;
        }
        assert!(chi_square(&c, &[0.05; 20]) < chi_square_critical_999(19), "{c:?}");
    }

    /// Each preset's operation mix over 100,000 operations within ±1 point of its proportions
    /// (binomial standard error ≤ 0.16 points); keys within the records that exist; inserts
    /// numbered from the record count on; E's scan lengths uniform in 1..=100 (mean 50.5 ± 1).
    #[test]
    fn presets_op_mix_and_parameters() {
        let rc = 5_000u64;
        for letter in ['a', 'b', 'c', 'd', 'e', 'f'] {
            let w: YcsbWorkload = letter.to_string().parse().unwrap();
            assert_eq!(w.record_bytes(), 1000);
            let mut g = YcsbGen::new(&w, rc, 10).unwrap();
            let n = 100_000;
            let mut c = [0u64; 5];
            let (mut next_insert, mut scan_sum, mut scan_min, mut scan_max) = (rc, 0u64, u32::MAX, 0);
            for _ in 0..n {
                let op = g.next();
                match op {
                    YcsbOp::Insert(k) => {
                        assert_eq!(k, next_insert);
                        next_insert += 1;
                        c[2] += 1;
                    }
                    YcsbOp::Scan(k, l) => {
                        assert!(k <= g.latest());
                        scan_sum += l as u64;
                        scan_min = scan_min.min(l);
                        scan_max = scan_max.max(l);
                        c[3] += 1;
                    }
                    YcsbOp::Read(k) | YcsbOp::Update(k) | YcsbOp::ReadModifyWrite(k) => {
                        assert!(k <= g.latest(), "{letter}: key {k} beyond {}", g.latest());
                        c[match op {
                            YcsbOp::Read(_) => 0,
                            YcsbOp::Update(_) => 1,
                            _ => 4,
                        }] += 1;
                    }
                }
            }
            let want = [w.read, w.update, w.insert, w.scan, w.read_modify_write];
            for i in 0..5 {
                let got = c[i] as f64 / n as f64;
                assert!(
                    (got - want[i]).abs() < 0.01,
                    "{letter}: op {i} share {got} vs {}",
                    want[i]
                );
            }
            if letter == 'e' {
                assert_eq!((scan_min, scan_max), (1, 100));
                let mean = scan_sum as f64 / c[3] as f64;
                assert!((mean - 50.5).abs() < 1.0, "mean scan length {mean}");
            }
        }
        assert_eq!(
            YcsbWorkload::preset('d').unwrap().request_distribution,
            RequestDistribution::Latest
        );
        assert_eq!("workloadB".parse::<YcsbWorkload>().unwrap().name, 'b');
        assert!("g"
            .parse::<YcsbWorkload>()
            .unwrap_err()
            .0
            .contains("expected a, b, c, d, e or f"));
        assert!("zipf".parse::<RequestDistribution>().is_err());
        assert!(YcsbGen::new(&YcsbWorkload::preset('a').unwrap(), 0, 1).is_err());
    }

    /// Workload A's keys: the hottest record takes P(rank 0) / P(key ≤ latest) ≈ 1/ZETAN / (1 −
    /// rejected mass); with operationcount = 0 no key is rejected, so 3.78% ± 5% relative.
    #[test]
    fn workload_a_hottest_key() {
        let w = YcsbWorkload {
            operation_count: Some(0),
            ..YcsbWorkload::preset('a').unwrap()
        };
        let rc = 100_000;
        let mut g = YcsbGen::new(&w, rc, 12).unwrap();
        let draws = 200_000;
        let hot = ScrambledZipfianGenerator::new(rc + 1, 0).scramble(0);
        let share = (0..draws).filter(|_| key(g.next()) == hot).count() as f64 / draws as f64;
        let want = 1.0 / ScrambledZipfianGenerator::ZETAN;
        assert!((share - want).abs() < 0.05 * want, "{share} vs {want}");
    }

    fn props(kv: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
        kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// YCSB's own workload files give the presets: CoreWorkload's defaults with workloada's and
    /// workloade's properties are presets A and E (but for the name); properties override a
    /// preset; a distribution's parameters apply given before or after it.
    #[test]
    fn properties_give_the_presets() {
        let a = props(&[
            ("workload", "site.ycsb.workloads.CoreWorkload"),
            ("readallfields", "true"),
            ("readproportion", "0.5"),
            ("updateproportion", "0.5"),
            ("scanproportion", "0"),
            ("insertproportion", "0"),
            ("requestdistribution", "zipfian"),
        ]);
        let (w, effects) = YcsbWorkload::core_defaults().with_properties(&a).unwrap();
        assert_eq!(
            w,
            YcsbWorkload {
                name: '-',
                ..YcsbWorkload::preset('a').unwrap()
            }
        );
        assert_eq!(effects[0], ("insertproportion".into(), PropertyEffect::Applied));
        assert!(effects.contains(&("workload".into(), PropertyEffect::Ignored)));
        let e = props(&[
            ("readproportion", "0"),
            ("updateproportion", "0"),
            ("scanproportion", "0.95"),
            ("insertproportion", "0.05"),
            ("requestdistribution", "zipfian"),
            ("maxscanlength", "100"),
            ("scanlengthdistribution", "uniform"),
        ]);
        let (w, _) = YcsbWorkload::core_defaults().with_properties(&e).unwrap();
        assert_eq!(
            w,
            YcsbWorkload {
                name: '-',
                ..YcsbWorkload::preset('e').unwrap()
            }
        );
        // hotspot's parameters, in key order before the distribution's key
        let (w, _) = YcsbWorkload::preset('b')
            .unwrap()
            .with_properties(&props(&[
                ("hotspotdatafraction", "0.05"),
                ("requestdistribution", "hotspot"),
            ]))
            .unwrap();
        assert_eq!(
            w.request_distribution,
            RequestDistribution::Hotspot {
                data_fraction: 0.05,
                opn_fraction: 0.8
            }
        );
        assert_eq!((w.read, w.update), (0.95, 0.05), "B's mix stays");
        // parameters of a distribution not in use change nothing
        let (w, effects) = YcsbWorkload::preset('b')
            .unwrap()
            .with_properties(&props(&[("exponential.frac", "0.5")]))
            .unwrap();
        assert_eq!(w.request_distribution, RequestDistribution::Zipfian);
        assert_eq!(effects, [("exponential.frac".into(), PropertyEffect::Ignored)]);
        // a binding's settings are ignored, a misspelt core key is refused, bad combinations too
        assert!(YcsbWorkload::core_defaults()
            .with_properties(&props(&[("rocksdb.dir", "/tmp/x")]))
            .is_ok());
        for (k, v, needle) in [
            ("readproprtion", "0.5", "unknown YCSB property"),
            ("exponential.percentle", "90", "unknown YCSB property"),
            ("readproportion", "1.5", "[0, 1]"),
            ("readallfields", "yes", "true or false"),
            ("minscanlength", "2000", "1 ≤ min ≤ max"),
            ("recordcount", "10", "property of the run"),
            ("insertstart", "10", "not modelled"),
        ] {
            let e = YcsbWorkload::core_defaults()
                .with_properties(&props(&[(k, v)]))
                .unwrap_err();
            assert!(e.0.contains(needle), "{k}={v}: {e}");
        }
    }
}

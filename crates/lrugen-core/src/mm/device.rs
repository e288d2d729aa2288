// SPDX-License-Identifier: GPL-2.0-only
//! Block devices in virtual time: latency, bandwidth and queue depth, with presets.
//!
//! A request is served by the first of `queue_depth` service slots to become free; its service
//! time is the device's latency plus the transfer at its bandwidth. So a device that is kept busy
//! (swap-out writes, read-ahead) delays the reads that tasks wait for, as a real queue does.
//! zram is a RAM device whose cost is CPU time (compression); its compressed pages take memory.
//!
//! The latency part of a service time is fixed (the presets) or drawn from a distribution
//! ([`ServiceTime`]: exponential, log-normal) from the device's own seeded stream, so that
//! percentiles of completion latency have a tail to measure; the same seed draws the same times.

use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp1, StandardNormal};
use serde::{Deserialize, Serialize};

use super::zram::ZramAlgorithm;

/// How a request's latency varies around the device's `read_latency_ns`/`write_latency_ns`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ServiceTime {
    /// Always the latency (the presets).
    #[default]
    Fixed,
    /// Exponential with the latency as its mean (p99 = mean × ln 100).
    Exponential,
    /// Log-normal with the latency as its median and shape `sigma` (p99 = median ×
    /// e^(2.326 σ); flash read latencies are close to log-normal with a long right tail).
    Lognormal {
        /// Standard deviation of the latency's logarithm (> 0).
        sigma: f64,
    },
}

impl ServiceTime {
    /// Whether the parameters are usable.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            ServiceTime::Lognormal { sigma } if !(sigma > 0.0 && sigma <= 4.0) => Err(format!(
                "latency distribution lognormal sigma {sigma}: expected 0 < sigma <= 4"
            )),
            _ => Ok(()),
        }
    }
}

/// A device's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    /// Name for reports.
    pub name: String,
    /// Read latency (ns) per request.
    pub read_latency_ns: u64,
    /// Write latency (ns) per request.
    pub write_latency_ns: u64,
    /// Bandwidth in bytes per second.
    pub bandwidth: u64,
    /// Requests served at once.
    pub queue_depth: u32,
    /// zram: CPU time to compress a page (ns); 0 for block devices.
    #[serde(default)]
    pub compress_ns: u64,
    /// zram: CPU time to decompress a page (ns).
    #[serde(default)]
    pub decompress_ns: u64,
    /// zram: compression ratio (uncompressed : compressed), e.g. 3.0; the compressed pages take
    /// memory from the node.
    #[serde(default)]
    pub compression_ratio: Option<f64>,
    /// How the latency varies from request to request (default fixed).
    #[serde(default, skip_serializing_if = "is_fixed")]
    pub latency_dist: ServiceTime,
    /// zram: its compressor (`comp_algorithm`); `None` for block devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zram_algorithm: Option<ZramAlgorithm>,
    /// The driver declares the device synchronous (`BLK_FEAT_SYNCHRONOUS`, before 6.11 a
    /// `rw_page` operation): swap on it is `SWP_SYNCHRONOUS_IO`, read around the swap cache and
    /// without read-ahead. zram and brd (`ramdisk`); zram whatever this says.
    #[serde(default, skip_serializing_if = "is_false")]
    pub synchronous: bool,
    /// The device is rotational (not `bdev_nonrot`): swap on it turns VMA-based swap read-ahead
    /// off machine-wide (`nr_rotate_swap`). `hdd`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub rotational: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_fixed(d: &ServiceTime) -> bool {
    *d == ServiceTime::Fixed
}

impl DeviceSpec {
    /// A preset by name: `nvme`, `sata-ssd`, `hdd`, `mmc`, `ramdisk`, `zram` (`lzo-rle`) or
    /// `zram-ALGORITHM` (`zram-lzo-rle`, `zram-lzo`, `zram-lz4`, `zram-zstd`), optionally with
    /// its latency's distribution after a colon: `nvme:exponential`, `nvme:lognormal=0.3` (σ),
    /// `nvme:fixed` (the default).
    pub fn preset(name: &str) -> Result<DeviceSpec, String> {
        let Some((base, dist)) = name.split_once(':') else {
            return Self::fixed_preset(name);
        };
        let latency_dist = match dist.split_once('=') {
            None if dist == "fixed" => ServiceTime::Fixed,
            None if dist == "exponential" => ServiceTime::Exponential,
            Some(("lognormal", v)) => ServiceTime::Lognormal {
                sigma: v
                    .parse()
                    .map_err(|_| format!("device '{name}': lognormal={v}: expected a number, e.g. lognormal=0.3"))?,
            },
            _ => {
                return Err(format!(
                    "device '{name}': unknown latency distribution '{dist}': expected fixed, exponential or lognormal=SIGMA"
                ))
            }
        };
        latency_dist.check().map_err(|e| format!("device '{name}': {e}"))?;
        Ok(DeviceSpec {
            latency_dist,
            ..Self::fixed_preset(base)?
        })
    }

    fn fixed_preset(name: &str) -> Result<DeviceSpec, String> {
        let d = |name: &str, r: u64, w: u64, bw: u64, qd: u32| DeviceSpec {
            name: name.into(),
            read_latency_ns: r,
            write_latency_ns: w,
            bandwidth: bw,
            queue_depth: qd,
            compress_ns: 0,
            decompress_ns: 0,
            compression_ratio: None,
            latency_dist: ServiceTime::Fixed,
            zram_algorithm: None,
            synchronous: false,
            rotational: false,
        };
        let unknown = |name: &str| {
            format!(
                "unknown device preset '{name}': expected nvme, sata-ssd, hdd, mmc, ramdisk, zram \
                 (zram-lzo-rle), zram-lzo, zram-lz4 or zram-zstd (optionally :exponential or :lognormal=SIGMA)"
            )
        };
        if let Some(alg) = name.strip_prefix("zram") {
            // zram, per compressor: CPU per page compressed and decompressed and the default
            // ratio (`ZramAlgorithm::costs`, measured by the kernel_costs bench)
            let alg = match alg {
                "" => ZramAlgorithm::LzoRle,
                _ => match alg.strip_prefix('-') {
                    Some(a) => ZramAlgorithm::parse(a).map_err(|e| format!("device preset '{name}': {e}"))?,
                    None => return Err(unknown(name)),
                },
            };
            let (compress_ns, decompress_ns, ratio) = alg.costs();
            return Ok(DeviceSpec {
                compress_ns,
                decompress_ns,
                compression_ratio: Some(ratio),
                zram_algorithm: Some(alg),
                synchronous: true,
                ..d(name, 0, 0, 8_000_000_000, 256)
            });
        }
        Ok(match name {
            // a datacenter NVMe SSD: ~80 µs 4 KiB random read, ~20 µs write (cache), 3 GB/s
            "nvme" => d("nvme", 80_000, 20_000, 3_000_000_000, 128),
            // a SATA SSD: ~150 µs read, ~80 µs write, 550 MB/s, NCQ 32
            "sata-ssd" => d("sata-ssd", 150_000, 80_000, 550_000_000, 32),
            // a 7200 rpm disk: ~8 ms per random request, 160 MB/s sequential, one head
            "hdd" => DeviceSpec {
                rotational: true,
                ..d("hdd", 8_000_000, 8_000_000, 160_000_000, 1)
            },
            // an eMMC/SD card: ~1 ms read, ~3 ms write, 40 MB/s
            "mmc" => d("mmc", 1_000_000, 3_000_000, 40_000_000, 1),
            // a RAM disk (brd): a memory copy, synchronous (`brd_rw_page` in 6.1,
            // `BLK_FEAT_SYNCHRONOUS` from 6.11)
            "ramdisk" => DeviceSpec {
                synchronous: true,
                ..d("ramdisk", 2_000, 2_000, 8_000_000_000, 256)
            },
            _ => return Err(unknown(name)),
        })
    }
}

/// Per-device statistics.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DeviceStats {
    /// Read requests (pages).
    pub reads: u64,
    /// Write requests (pages).
    pub writes: u64,
    /// Total time requests waited for a free slot (ns).
    pub queue_wait_ns: u64,
    /// Total service time (ns).
    pub busy_ns: u64,
}

/// A device with its queue state.
#[derive(Debug)]
pub struct Device {
    /// Parameters.
    pub spec: DeviceSpec,
    /// When each service slot becomes free (ns).
    slots: Vec<u64>,
    /// Statistics.
    pub stats: DeviceStats,
    /// The stream the varying latencies are drawn from.
    rng: StdRng,
}

impl Device {
    /// A device from its parameters (fixed latencies draw nothing).
    pub fn new(spec: DeviceSpec) -> Self {
        Self::seeded(spec, 0)
    }

    /// A device whose varying latencies are drawn from a stream seeded with `seed`.
    pub fn seeded(spec: DeviceSpec, seed: u64) -> Self {
        let qd = spec.queue_depth.max(1) as usize;
        Device {
            spec,
            slots: vec![0; qd],
            stats: DeviceStats::default(),
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// This request's latency: `base` as the distribution varies it.
    #[inline]
    fn latency(&mut self, base: u64) -> u64 {
        let f: f64 = match self.spec.latency_dist {
            ServiceTime::Fixed => return base,
            ServiceTime::Exponential => Exp1.sample(&mut self.rng),
            ServiceTime::Lognormal { sigma } => {
                let z: f64 = StandardNormal.sample(&mut self.rng);
                (sigma * z).exp()
            }
        };
        (base as f64 * f).round() as u64
    }

    /// Submit a request of `bytes` at time `now`; returns its completion time.
    pub fn submit(&mut self, now: u64, bytes: u64, write: bool) -> u64 {
        let (i, &free) = self
            .slots
            .iter()
            .enumerate()
            .min_by_key(|&(i, &t)| (t, i))
            .expect("a slot");
        let start = now.max(free);
        let lat = self.latency(if write {
            self.spec.write_latency_ns
        } else {
            self.spec.read_latency_ns
        });
        let service = lat + (bytes as u128 * 1_000_000_000 / self.spec.bandwidth.max(1) as u128) as u64;
        self.slots[i] = start + service;
        self.stats.queue_wait_ns += start - now;
        self.stats.busy_ns += service;
        if write {
            self.stats.writes += 1;
        } else {
            self.stats.reads += 1;
        }
        start + service
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_depth_one_serializes() {
        let mut d = Device::new(DeviceSpec::preset("hdd").unwrap());
        let a = d.submit(0, 4096, false);
        let b = d.submit(0, 4096, false);
        let transfer = 4096 * 1_000_000_000 / 160_000_000;
        assert_eq!(a, 8_000_000 + transfer);
        assert_eq!(b, 2 * a, "the second request waits for the first");
        assert_eq!(d.stats.queue_wait_ns, a);
    }

    #[test]
    fn deep_queue_serves_in_parallel() {
        let mut d = Device::new(DeviceSpec::preset("nvme").unwrap());
        let a = d.submit(0, 4096, false);
        let b = d.submit(0, 4096, false);
        assert_eq!(a, b);
        assert_eq!(d.stats.queue_wait_ns, 0);
        assert!(DeviceSpec::preset("floppy").unwrap_err().contains("expected nvme"));
    }

    /// Varying latencies: the exponential's mean and the log-normal's median are the device's
    /// latency (within 1 % over 200,000 draws); the same seed draws the same times.
    #[test]
    fn latency_distributions() {
        let draws = |dist: ServiceTime, seed: u64| -> Vec<u64> {
            let spec = DeviceSpec {
                latency_dist: dist,
                bandwidth: u64::MAX,
                ..DeviceSpec::preset("nvme").unwrap()
            };
            let mut d = Device::seeded(spec, seed);
            (0..200_000)
                .map(|i| d.submit(i * 1_000_000, 0, false) - i * 1_000_000)
                .collect()
        };
        let e = draws(ServiceTime::Exponential, 1);
        let mean = e.iter().sum::<u64>() as f64 / e.len() as f64;
        assert!((mean / 80_000.0 - 1.0).abs() < 0.01, "exponential mean {mean}");
        let mut l = draws(ServiceTime::Lognormal { sigma: 0.5 }, 1);
        assert_eq!(l, draws(ServiceTime::Lognormal { sigma: 0.5 }, 1));
        assert_ne!(l, draws(ServiceTime::Lognormal { sigma: 0.5 }, 2));
        l.sort_unstable();
        let median = l[l.len() / 2] as f64;
        assert!((median / 80_000.0 - 1.0).abs() < 0.01, "lognormal median {median}");
        assert!(ServiceTime::Lognormal { sigma: 0.0 }.check().is_err());
        let p = DeviceSpec::preset("sata-ssd:lognormal=0.3").unwrap();
        assert_eq!(p.latency_dist, ServiceTime::Lognormal { sigma: 0.3 });
        assert_eq!(p.read_latency_ns, 150_000);
        assert_eq!(
            DeviceSpec::preset("hdd:exponential").unwrap().latency_dist,
            ServiceTime::Exponential
        );
        for bad in ["nvme:lognormal=x", "nvme:lognormal=-1", "nvme:gamma", "floppy:fixed"] {
            assert!(DeviceSpec::preset(bad).is_err(), "{bad}");
        }
        assert_eq!(draws(ServiceTime::Fixed, 1)[7], 80_000);
    }
}

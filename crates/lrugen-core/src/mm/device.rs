// SPDX-License-Identifier: GPL-2.0-only
//! Block devices in virtual time: latency, bandwidth and queue depth, with presets.
//!
//! A request is served by the first of `queue_depth` service slots to become free; its service
//! time is the device's latency plus the transfer at its bandwidth. So a device that is kept busy
//! (swap-out writes, read-ahead) delays the reads that tasks wait for, as a real queue does.
//! zram is a RAM device whose cost is CPU time (compression); its compressed pages take memory.

use serde::{Deserialize, Serialize};

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
}

impl DeviceSpec {
    /// A preset by name: `nvme`, `sata-ssd`, `hdd`, `mmc`, `ramdisk`, `zram`.
    pub fn preset(name: &str) -> Result<DeviceSpec, String> {
        let d = |name: &str, r: u64, w: u64, bw: u64, qd: u32| DeviceSpec {
            name: name.into(),
            read_latency_ns: r,
            write_latency_ns: w,
            bandwidth: bw,
            queue_depth: qd,
            compress_ns: 0,
            decompress_ns: 0,
            compression_ratio: None,
        };
        Ok(match name {
            // a datacenter NVMe SSD: ~80 µs 4 KiB random read, ~20 µs write (cache), 3 GB/s
            "nvme" => d("nvme", 80_000, 20_000, 3_000_000_000, 128),
            // a SATA SSD: ~150 µs read, ~80 µs write, 550 MB/s, NCQ 32
            "sata-ssd" => d("sata-ssd", 150_000, 80_000, 550_000_000, 32),
            // a 7200 rpm disk: ~8 ms per random request, 160 MB/s sequential, one head
            "hdd" => d("hdd", 8_000_000, 8_000_000, 160_000_000, 1),
            // an eMMC/SD card: ~1 ms read, ~3 ms write, 40 MB/s
            "mmc" => d("mmc", 1_000_000, 3_000_000, 40_000_000, 1),
            // a RAM disk (brd): a memory copy
            "ramdisk" => d("ramdisk", 2_000, 2_000, 8_000_000_000, 256),
            // zram with lzo-rle: ~3 µs to compress and ~1 µs to decompress a page, ratio ~3
            "zram" => DeviceSpec {
                compress_ns: 3_000,
                decompress_ns: 1_000,
                compression_ratio: Some(3.0),
                ..d("zram", 0, 0, 8_000_000_000, 256)
            },
            _ => {
                return Err(format!(
                    "unknown device preset '{name}': expected nvme, sata-ssd, hdd, mmc, ramdisk or zram"
                ))
            }
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
#[derive(Clone, Debug)]
pub struct Device {
    /// Parameters.
    pub spec: DeviceSpec,
    /// When each service slot becomes free (ns).
    slots: Vec<u64>,
    /// Statistics.
    pub stats: DeviceStats,
}

impl Device {
    /// A device from its parameters.
    pub fn new(spec: DeviceSpec) -> Self {
        let qd = spec.queue_depth.max(1) as usize;
        Device {
            spec,
            slots: vec![0; qd],
            stats: DeviceStats::default(),
        }
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
        let lat = if write {
            self.spec.write_latency_ns
        } else {
            self.spec.read_latency_ns
        };
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
}

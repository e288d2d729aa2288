// SPDX-License-Identifier: GPL-2.0-only
//! zram as the kernel drives it: the compression algorithm (`comp_algorithm`), the huge-class
//! threshold of its zsmalloc pool, and the device's `mm_stat` and `io_stat` texts.
//!
//! The model's pages carry no contents: what a page compresses to comes from its region's
//! `compressed_pct` (`mm::vm::Vma`) or the device's default ratio. zram stores a page that
//! compresses to the huge-class size or more uncompressed ("huge": a whole page of pool,
//! `huge_pages`), as `zram_write_page` does. The pool packs the compressed bytes without
//! fragmentation (its pages are the stored bytes rounded up to whole pages), so compaction has
//! nothing to free: `pages_compacted` is 0. zram notices same-filled pages (all bytes equal, most
//! often zero) by reading them; the workloads give a compressibility per region, not contents, so
//! no page is known to be same-filled and `same_pages` is 0. Reads and writes of whole, aligned
//! pages never fail and are never invalid (`failed_reads`, `invalid_io` 0); a write fails when no
//! page can be had for the pool (`failed_writes`).

use serde::{Deserialize, Serialize};

/// Page size zram works in (bytes).
const PAGE: u64 = 4096;

/// zram's compressors (`/sys/block/zram0/comp_algorithm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZramAlgorithm {
    /// `lzo-rle`, the kernel's default since 5.1.
    LzoRle,
    /// `lzo`.
    Lzo,
    /// `lz4`.
    Lz4,
    /// `zstd` (the kernel's zstd backend at its default level).
    Zstd,
}

impl ZramAlgorithm {
    /// Every algorithm, in `comp_algorithm`'s order (the backends' order since 6.12; lz4hc,
    /// deflate and 842 are not modelled).
    pub const ALL: [ZramAlgorithm; 4] = [Self::LzoRle, Self::Lzo, Self::Lz4, Self::Zstd];

    /// Its name in `comp_algorithm`.
    pub fn name(self) -> &'static str {
        match self {
            Self::LzoRle => "lzo-rle",
            Self::Lzo => "lzo",
            Self::Lz4 => "lz4",
            Self::Zstd => "zstd",
        }
    }

    /// The algorithm named `s`.
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|a| a.name() == s).ok_or_else(|| {
            format!("unknown zram compression algorithm '{s}': expected lzo-rle (the default), lzo, lz4 or zstd")
        })
    }

    /// CPU per 4 KiB page to compress and to decompress (ns), and the default compression ratio
    /// (uncompressed : compressed) of the pages a region does not describe.
    ///
    /// lzo-rle, lzo and lz4 are measured by `cargo bench -p lrugen-core --bench kernel_costs --
    /// zram` (4 KiB `O_DIRECT` writes and reads of zram0 on this project's machine kind, pages of
    /// text and small records that lzo-rle packs 2.95:1, net of a same-filled page; medians of
    /// four runs): lzo-rle 5.0-5.7 / 1.6-1.8 µs, lzo 5.1-5.6 / 1.8-2.0 µs at 2.94:1, lz4
    /// 5.3-5.7 / 1.0-1.2 µs at 2.73:1. zstd was not offered by the measured kernel: its figures
    /// scale lzo-rle's by the zstd project's published lzbench table (facebook.github.io/zstd,
    /// "Benchmarks": Silesia corpus, Core i7-9700K; zstd 1.5.6 -1 510 MB/s compress, 1580 MB/s
    /// decompress, ratio 2.887; lzo1x 2.10 -1 650 MB/s, 825 MB/s, 2.106): compress 5.3 µs ×
    /// 650/510, decompress 1.65 µs × 825/1580, ratio 3.0 × 2.887/2.106. The table compresses large
    /// blocks at level 1, zram 4 KiB pages at level 3, so this zstd compresses faster and packs
    /// tighter than the kernel's would; the bench measures it where zram0 offers zstd.
    pub fn costs(self) -> (u64, u64, f64) {
        match self {
            Self::LzoRle => (5_300, 1_650, 3.0),
            Self::Lzo => (5_200, 1_850, 3.0),
            Self::Lz4 => (5_500, 1_100, 2.8),
            Self::Zstd => (6_750, 860, 4.1),
        }
    }

    /// `comp_algorithm`'s text: every algorithm followed by a space, the selected one in
    /// brackets, then a newline.
    pub fn comp_algorithm(self) -> String {
        let mut out = String::new();
        for a in Self::ALL {
            if a == self {
                out.push_str(&format!("[{}] ", a.name()));
            } else {
                out.push_str(&format!("{} ", a.name()));
            }
        }
        out.push('\n');
        out
    }
}

/// zsmalloc's huge-class threshold for `page` bytes a page and zspages of up to `chain` pages
/// (`CONFIG_ZSMALLOC_CHAIN_SIZE`, 8 by default since 6.3; 4 before): the compressed size from
/// which zram stores a page whole. Size classes run from 32 bytes in steps of page/256; a class
/// is huge when its best zspage (the chain length that wastes least) holds one object in one
/// page. From the largest class down, the first class that is not huge, less the handle's 8
/// bytes (but one), is the threshold (`zs_huge_class_size`).
pub const fn huge_class_size(page: u64, chain: u64) -> u64 {
    let delta = page >> 8;
    let min = 32;
    let classes = (page - min).div_ceil(delta) + 1;
    let mut i = classes;
    while i > 0 {
        i -= 1;
        let mut size = min + i * delta;
        if size > page {
            size = page;
        }
        // calculate_zspage_chain_size: the chain length (pages) that wastes least
        let mut pages = 1;
        if !size.is_power_of_two() {
            let mut least = u64::MAX;
            let mut n = 1;
            while n <= chain {
                let waste = (n * page) % size;
                if waste < least {
                    least = waste;
                    pages = n;
                }
                n += 1;
            }
        }
        let objs = pages * page / size;
        if pages != 1 && objs != 1 {
            return size - 7;
        }
    }
    page
}

/// The threshold for 4 KiB pages and the default chain of 8 pages (3,625 bytes).
pub const HUGE_CLASS_SIZE: u64 = huge_class_size(PAGE, 8);

/// What zram counts (`struct zram_stats` and the pool's totals).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZramStats {
    /// Pages stored (`pages_stored`).
    pub pages_stored: u64,
    /// Highest pool size, in pages (`max_used_pages`).
    pub max_used_pages: u64,
    /// Pages stored whole now (`huge_pages`).
    pub huge_pages: u64,
    /// Pages stored whole since the device was set up (`huge_pages_since`).
    pub huge_pages_since: u64,
    /// Writes that failed: no pool page could be had (`failed_writes`).
    pub failed_writes: u64,
    /// Slots freed by swap (`swap_slot_free_notify`; `notify_free`).
    pub notify_free: u64,
}

/// zram's state at the end of a run, as its sysfs files show it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ZramReport {
    /// `comp_algorithm` (the selected one).
    pub algorithm: String,
    /// `mm_stat`: uncompressed bytes stored.
    pub orig_data_size: u64,
    /// `mm_stat`: compressed bytes stored (a huge page counts a whole page).
    pub compr_data_size: u64,
    /// `mm_stat`: bytes of the pool's pages.
    pub mem_used_total: u64,
    /// `mm_stat`: `mem_limit` (0: no limit).
    pub mem_limit: u64,
    /// `mm_stat`: the pool's highest size, bytes.
    pub mem_used_max: u64,
    /// `mm_stat`: same-filled pages stored (0: the model knows no page contents).
    pub same_pages: u64,
    /// `mm_stat`: pages freed by compaction (0: the pool is not fragmented).
    pub pages_compacted: u64,
    /// `mm_stat`: pages stored whole now.
    pub huge_pages: u64,
    /// `mm_stat`: pages stored whole since the device was set up.
    pub huge_pages_since: u64,
    /// `io_stat`: failed reads.
    pub failed_reads: u64,
    /// `io_stat`: failed writes.
    pub failed_writes: u64,
    /// `io_stat`: requests not aligned to a page.
    pub invalid_io: u64,
    /// `io_stat`: slots freed by swap.
    pub notify_free: u64,
    /// The pool's pages (`nr_zspages`).
    pub pool_pages: u64,
}

impl ZramReport {
    /// The report of `stats` with `compr` compressed bytes in a pool of `pool_pages` pages.
    pub fn new(alg: ZramAlgorithm, s: &ZramStats, compr: u64, pool_pages: u64) -> Self {
        ZramReport {
            algorithm: alg.name().to_string(),
            orig_data_size: s.pages_stored * PAGE,
            compr_data_size: compr,
            mem_used_total: pool_pages * PAGE,
            mem_limit: 0,
            mem_used_max: s.max_used_pages * PAGE,
            same_pages: 0,
            pages_compacted: 0,
            huge_pages: s.huge_pages,
            huge_pages_since: s.huge_pages_since,
            failed_reads: 0,
            failed_writes: s.failed_writes,
            invalid_io: 0,
            notify_free: s.notify_free,
            pool_pages,
        }
    }

    /// `/sys/block/zram0/mm_stat`: nine columns, each right-aligned in 8 characters.
    pub fn mm_stat(&self) -> String {
        format!(
            "{:8} {:8} {:8} {:8} {:8} {:8} {:8} {:8} {:8}\n",
            self.orig_data_size,
            self.compr_data_size,
            self.mem_used_total,
            self.mem_limit,
            self.mem_used_max,
            self.same_pages,
            self.pages_compacted,
            self.huge_pages,
            self.huge_pages_since
        )
    }

    /// `/sys/block/zram0/io_stat`: four columns, each right-aligned in 8 characters.
    pub fn io_stat(&self) -> String {
        format!(
            "{:8} {:8} {:8} {:8}\n",
            self.failed_reads, self.failed_writes, self.invalid_io, self.notify_free
        )
    }

    /// The text block `lrugen run` prints.
    pub fn format(&self) -> String {
        format!(
            "comp_algorithm: {}mm_stat: {}io_stat: {}",
            ZramAlgorithm::parse(&self.algorithm)
                .map_or_else(|_| format!("{}\n", self.algorithm), |a| a.comp_algorithm()),
            self.mm_stat(),
            self.io_stat()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// zsmalloc's huge-class thresholds: 3,264-byte class with 4-page chains (the threshold
    /// kernels before 6.3 report), 3,632 with 8-page chains, each less 7 bytes of handle.
    #[test]
    fn huge_class_threshold() {
        assert_eq!(huge_class_size(4096, 4), 3264 - 7);
        assert_eq!(huge_class_size(4096, 8), 3632 - 7);
        assert_eq!(HUGE_CLASS_SIZE, 3625);
        // the class found is not huge, the one above it is
        for chain in [4u64, 8] {
            let size = huge_class_size(4096, chain) + 7;
            let best = |s: u64| (1..=chain).min_by_key(|&n| ((n * 4096) % s, n)).unwrap();
            assert!(best(size) * 4096 / size > 1);
            assert_eq!((best(size + 16), best(size + 16) * 4096 / (size + 16)), (1, 1));
        }
    }

    /// The kernel's formats: `%8llu` per column, one space between, a newline at the end.
    #[test]
    fn mm_stat_and_io_stat_golden() {
        let s = ZramStats {
            pages_stored: 3,
            max_used_pages: 2,
            huge_pages: 1,
            huge_pages_since: 4,
            failed_writes: 5,
            notify_free: 123_456_789,
        };
        let r = ZramReport::new(ZramAlgorithm::Lz4, &s, 6144, 2);
        assert_eq!(
            r.mm_stat(),
            "   12288     6144     8192        0     8192        0        0        1        4\n"
        );
        assert_eq!(r.io_stat(), "       0        5        0 123456789\n");
        assert_eq!(ZramAlgorithm::Lz4.comp_algorithm(), "lzo-rle lzo [lz4] zstd \n");
        assert!(r
            .format()
            .starts_with("comp_algorithm: lzo-rle lzo [lz4] zstd \nmm_stat:    12288"));
    }

    #[test]
    fn algorithms_parse_and_are_priced() {
        for a in ZramAlgorithm::ALL {
            assert_eq!(ZramAlgorithm::parse(a.name()), Ok(a));
            let (c, d, r) = a.costs();
            assert!(c > d && r > 1.0, "{a:?}: compressing costs more than decompressing");
        }
        let e = ZramAlgorithm::parse("deflate").unwrap_err();
        assert!(e.contains("'deflate'") && e.contains("lzo-rle"), "{e}");
        // zstd packs tighter and decompresses faster than lzo-rle, lz4 decompresses fastest of
        // the LZ family measured
        assert!(ZramAlgorithm::Zstd.costs().2 > ZramAlgorithm::LzoRle.costs().2);
        assert!(ZramAlgorithm::Lz4.costs().1 < ZramAlgorithm::LzoRle.costs().1);
    }
}

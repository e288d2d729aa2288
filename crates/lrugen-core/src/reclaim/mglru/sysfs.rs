// SPDX-License-Identifier: GPL-2.0-only
//! The control files under `/sys/kernel/mm/lru_gen/`: what a write to `enabled` and to
//! `min_ttl_ms` is read as (`enabled_store`, `min_ttl_ms_store` in `mm/vmscan.c`).
//!
//! Both take the bytes as written (an `echo` adds a newline, which is accepted); no white space
//! is skipped. The CLI trims its arguments before calling these.

use super::debugfs::{kstrtouint, Errno};

/// Every capability bit `enabled` knows (`NR_LRU_GEN_CAPS` = 3: the switch, the non-leaf PMD
/// accessed bit, the leaf PTE accessed bit).
pub const CAPS_MASK: u32 = 0x7;

/// A write to `enabled`: a first byte `y`/`Y` sets every capability, `n`/`N` clears them (what
/// follows that byte is not looked at), anything else must be a number as `kstrtouint` base 0
/// reads it (decimal, `0x` hex, `0` octal). Returns the capability bits (the number masked with
/// [`CAPS_MASK`]); `EINVAL` for anything else, as the kernel returns.
pub fn parse_enabled(buf: &[u8]) -> Result<u32, Errno> {
    let caps = match buf.first().map(u8::to_ascii_lowercase) {
        Some(b'n') => 0,
        Some(b'y') => u32::MAX,
        _ => kstrtouint(buf).map_err(|_| Errno::EINVAL)?,
    };
    Ok(caps & CAPS_MASK)
}

/// A write to `min_ttl_ms`: a number as `kstrtouint` base 0 reads it (milliseconds; 0 turns the
/// thrashing protection off). `EINVAL` for anything else, as the kernel returns.
pub fn parse_min_ttl_ms(buf: &[u8]) -> Result<u32, Errno> {
    kstrtouint(buf).map_err(|_| Errno::EINVAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enabled_as_the_kernel_reads_it() {
        for (s, v) in [
            ("y", 7),
            ("Yes\n", 7),
            ("n", 0),
            ("N\n", 0),
            ("7", 7),
            ("0x7\n", 7),
            ("0X5", 5),
            ("05", 5),
            ("017", 7),
            ("+3", 3),
            ("8", 0),
            ("0", 0),
            ("4294967295", 7),
        ] {
            assert_eq!(parse_enabled(s.as_bytes()), Ok(v), "{s:?}");
        }
        for s in [
            "",
            " y",
            " 7",
            "7 ",
            "7\n\n",
            "0x",
            "0x+5",
            "0+5",
            "08",
            "-1",
            "++1",
            "4294967296",
            "0x100000000",
            "1x",
            "\n",
        ] {
            assert_eq!(parse_enabled(s.as_bytes()), Err(Errno::EINVAL), "{s:?}");
        }
    }

    #[test]
    fn min_ttl_ms_as_the_kernel_reads_it() {
        assert_eq!(parse_min_ttl_ms(b"1000\n"), Ok(1000));
        assert_eq!(parse_min_ttl_ms(b"0x10"), Ok(16));
        assert_eq!(parse_min_ttl_ms(b"010"), Ok(8));
        assert_eq!(parse_min_ttl_ms(b"4294967295"), Ok(u32::MAX));
        // `y` means nothing here, and an out-of-range value is EINVAL (not ERANGE) from the store
        for s in ["y", "4294967296", "", "1 000", "1000\r\n"] {
            assert_eq!(parse_min_ttl_ms(s.as_bytes()), Err(Errno::EINVAL), "{s:?}");
        }
    }
}

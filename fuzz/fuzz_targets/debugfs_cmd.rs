// SPDX-License-Identifier: GPL-2.0-only
//! `cargo fuzz run debugfs_cmd`: the body is `lrugen_fuzz::debugfs_cmd` (see docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lrugen_fuzz::debugfs_cmd(data));

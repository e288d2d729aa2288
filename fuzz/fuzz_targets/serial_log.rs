// SPDX-License-Identifier: GPL-2.0-only
//! `cargo fuzz run serial_log`: the body is `lrugen_fuzz::serial_log` (see docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lrugen_fuzz::serial_log(data));

// SPDX-License-Identifier: GPL-2.0-only
//! `cargo fuzz run control`: the body is `lrugen_fuzz::control` (see docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lrugen_fuzz::control(data));

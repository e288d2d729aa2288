// SPDX-License-Identifier: GPL-2.0-only
//! `cargo fuzz run experiment_toml`: the body is `lrugen_fuzz::experiment_toml` (see docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lrugen_fuzz::experiment_toml(data));

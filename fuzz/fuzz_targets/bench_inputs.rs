// SPDX-License-Identifier: GPL-2.0-only
//! `cargo fuzz run bench_inputs`: the body is `lrugen_fuzz::bench_inputs` (see docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lrugen_fuzz::bench_inputs(data));

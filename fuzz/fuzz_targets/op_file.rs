// SPDX-License-Identifier: GPL-2.0-only
//! `cargo fuzz run op_file`: the body is `lrugen_fuzz::op_file` (see docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lrugen_fuzz::op_file(data));

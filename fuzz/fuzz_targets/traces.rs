// SPDX-License-Identifier: GPL-2.0-only
//! `cargo fuzz run traces`: the body is `lrugen_fuzz::traces` (see docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| lrugen_fuzz::traces(data));

#!/bin/sh
# Regenerate the real-kernel trace fixtures of crates/lrugen-kernel/tests/fixtures/traces/ with
# `lrugen kernel --matrix examples/kernel-matrix/traces.toml --fixtures DIR`: the small typed
# traces of crates/lrugen-cli/tests/data/ (lackey as anon, an index file as file reads, a mixed
# index file) on Debian 6.1, 6.12 and 7.2, MGLRU and classic; 18 boots of qemu (TCG, -icount), two
# at a time (JOBS), a few minutes on 2 cores, then 54 further boots into boots/ (about 15
# minutes). Each fixture keeps the op file the guest replayed.
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build --release -p lrugen-cli
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures/traces
mkdir -p "$F"
target/release/lrugen kernel --matrix examples/kernel-matrix/traces.toml --fixtures "$F" --jobs "${JOBS:-2}"
# three more boots of each (54 boots, 10-25 s each): the kernel's run-to-run spread in a 512-page
# memcg, against which tests/traces.rs judges the model (lrugen_kernel::fidelity::extra_boots)
mkdir -p "$F/boots"
target/release/lrugen kernel --matrix examples/kernel-matrix/traces-boots.toml --fixtures "$F/boots" --jobs "${JOBS:-2}"

#!/bin/sh
# Regenerate the thrashing-prevention fixtures of crates/lrugen-kernel/tests/fixtures/min_ttl/
# with `lrugen kernel --matrix examples/kernel-matrix/min-ttl.toml --fixtures DIR`: min_ttl_ms 0
# and 1000 under global pressure (a 256 MiB guest, no memcg limit) and 1000 under a memcg limit,
# on Debian 6.12 and 7.2, MGLRU, two boots each (16 boots of qemu, TCG, -icount, 15-40 s each).
# The classic LRU has no min_ttl: its fixtures (the contrast) are booted with
#   LRUS=classic SCENARIOS=anon-gauss-ttl1000 scripts/regen-kernel-minttl.sh
# crates/lrugen-kernel/tests/min_ttl.rs compares the model with them (docs/global-pressure.md).
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
# Environment: SERIES (default: the matrix's, "6.12 7.2"), LRUS (default "mglru"), SCENARIOS
# (default all), JOBS (VMs at a time, default 2).
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build --release -p lrugen-cli
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures/min_ttl
mkdir -p "$F"
comma() { echo "$*" | tr ' ' ','; }
only=""
[ -n "${SERIES:-}" ] && only="$only --only-series $(comma $SERIES)"
only="$only --only-policies $(comma ${LRUS:-mglru})"
[ -n "${SCENARIOS:-}" ] && only="$only --only-scenarios $(comma $SCENARIOS)"
# shellcheck disable=SC2086
target/release/lrugen kernel --matrix examples/kernel-matrix/min-ttl.toml --fixtures "$F" --jobs "${JOBS:-2}" $only

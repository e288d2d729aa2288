#!/bin/sh
# Regenerate the global-pressure fixtures of crates/lrugen-kernel/tests/fixtures/global/ with
# `lrugen kernel --matrix examples/kernel-matrix/global.toml --fixtures DIR`: a mixed file + anon
# workload with no memcg limit in a 256 MiB guest, on Debian 6.12 and 7.2, MGLRU and classic, two
# boots each (8 boots of qemu, TCG, -icount, two at a time: about 2 minutes on 2 cores), and the
# same workload on 7.2 with DAMON_STAT off (examples/kernel-matrix/global-damon-off.toml, 8 boots).
# crates/lrugen-kernel/tests/global.rs compares the model with them (docs/global-pressure.md).
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
# Environment: SERIES (default: the matrix's, "6.12 7.2"), LRUS (default "mglru classic"),
# JOBS (VMs at a time, default 2).
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build --release -p lrugen-cli
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures/global
mkdir -p "$F"
comma() { echo "$*" | tr ' ' ','; }
only=""
[ -n "${SERIES:-}" ] && only="$only --only-series $(comma $SERIES)"
[ -n "${LRUS:-}" ] && only="$only --only-policies $(comma $LRUS)"
# shellcheck disable=SC2086
target/release/lrugen kernel --matrix examples/kernel-matrix/global.toml --fixtures "$F" --jobs "${JOBS:-2}" $only
case " ${SERIES:-7.2} " in
*" 7.2 "* | *" 7 "*)
    only_lrus=""
    [ -n "${LRUS:-}" ] && only_lrus="--only-policies $(comma $LRUS)"
    # shellcheck disable=SC2086
    target/release/lrugen kernel --matrix examples/kernel-matrix/global-damon-off.toml --fixtures "$F" --jobs "${JOBS:-2}" $only_lrus
    ;;
esac

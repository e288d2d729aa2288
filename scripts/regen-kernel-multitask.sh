#!/bin/sh
# Regenerate the real-kernel multi-task fixtures of crates/lrugen-kernel/tests/fixtures/multitask/
# with `lrugen kernel --matrix examples/kernel-matrix/multitask.toml --fixtures DIR`: each
# experiment of that directory (fio with 4 jobs, YCSB-B with 4 clients, two sibling memcgs under one
# limit, a kernel build of 2 jobs forking compilers; each task a process of its
# own on -smp 2, the experiment's [engine] cpus; every task in lockstep, `--lockstep 1`), on Debian 6.12 (the newest package), MGLRU and
# classic, booted three times (boot1..boot3) to measure the kernel's run-to-run spread
# (tests/multitask.rs states the tolerances from it). 24 boots of qemu (TCG, -icount), two at a
# time (JOBS). Each fixture records the `lrugen kernel --exp ... --fixture ...` command it equals.
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
# Usage: scripts/regen-kernel-multitask.sh [EXPERIMENT...] (default: all, by file stem)
# Environment: SERIES (default: the matrix's, "6.12"), LRUS (default "mglru classic"), JOBS
# (VMs at a time, default 2). The boots per cell are the matrix's `repeats`.
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build --release -p lrugen-cli
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures/multitask
comma() { echo "$*" | tr ' ' ','; }
only=""
[ $# -gt 0 ] && only="$only --only-scenarios $(comma "$@")"
[ -n "${SERIES:-}" ] && only="$only --only-series $(comma $SERIES)"
[ -n "${LRUS:-}" ] && only="$only --only-policies $(comma $LRUS)"
# shellcheck disable=SC2086
target/release/lrugen kernel --matrix examples/kernel-matrix/multitask.toml --fixtures "$F" --jobs "${JOBS:-2}" $only

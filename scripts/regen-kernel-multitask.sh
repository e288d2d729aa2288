#!/bin/sh
# Regenerate the real-kernel multi-task fixtures of crates/lrugen-kernel/tests/fixtures/multitask/
# with `lrugen kernel --exp FILE.toml --fixture`: each experiment of that directory (fio with 4
# jobs, YCSB-B with 4 clients; each task a process of its own on -smp 2, the experiment's [engine]
# cpus), on Debian 6.12 (the newest package), MGLRU and classic, booted twice (boot1, boot2) to
# measure the kernel's run-to-run spread (tests/multitask.rs states the tolerances from it).
# 8 boots of qemu (TCG, -icount), about 10 minutes on 2 cores. Each fixture records its command.
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
# Usage: scripts/regen-kernel-multitask.sh [EXPERIMENT...] (default: all, by file stem)
# Environment: SERIES (default "6.12"), LRUS (default "mglru classic"), BOOTS (default "1 2").
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build --release -p lrugen-cli
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures/multitask
ALL="fio-4jobs ycsb-4clients"
for e in ${*:-$ALL}; do
    for k in ${SERIES:-6.12}; do
        for lru in ${LRUS:-mglru classic}; do
            for b in ${BOOTS:-1 2}; do
                out="$F/debian-$k-$lru-$e-boot$b.json"
                echo "== $out"
                target/release/lrugen kernel --series "$k" --lru "$lru" --exp "$F/$e.toml" --fixture "$out"
            done
        done
    done
done

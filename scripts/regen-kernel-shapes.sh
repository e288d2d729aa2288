#!/bin/sh
# Regenerate the real-kernel shape fixtures of crates/lrugen-kernel/tests/fixtures/shapes/ with
# `lrugen kernel --fixture`: seven workload shapes on Debian 6.1, 6.12 and 7.2 (the newest
# package of each series), MGLRU and classic; 42 boots of qemu (TCG, -icount), about 40 minutes
# on 2 cores. Each fixture records the exact command that made it.
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
# Usage: scripts/regen-kernel-shapes.sh [SHAPE...] (default: all; see the list below)
# Environment: SERIES (default "6.1 6.12 7.2"), LRUS (default "mglru classic").
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build --release -p lrugen-cli
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures/shapes
mkdir -p "$F"
# every shape: a 32 MiB memcg, seed 1
shape() {
    case "$1" in
    # Zipf θ=0.9 buffered preads over a file of 2.5× the memcg
    zipf-pread) echo "--access file --size 80M --accesses 100000 --dist zipf:0.9" ;;
    # a 16 MiB hot file (read once first) read uniformly under one pass over a 128 MiB cold file
    hot-cold) echo "--access hotcold --hot-size 16M --size 128M --accesses 100000 --dist uniform" ;;
    # Gaussian (σ 25 %) loads/stores (30 % stores) of an anon region of 110 % of the memcg,
    # populated first, swap on zram
    anon-gauss) echo "--access anon --anon-size 9011p --accesses 100000 --dist gauss:25 --swap zram --swap-size 64M" ;;
    # uniform loads through a MADV_RANDOM shared mapping of a 64 MiB file
    mmap-random) echo "--access mmap --size 64M --accesses 100000 --dist uniform --advice random" ;;
    # the same through a MADV_NORMAL mapping, read-ahead off (fault-around is always off)
    mmap-normal) echo "--access mmap --size 64M --accesses 100000 --dist uniform --advice normal --read-ahead-kb 0" ;;
    # Zipf θ=0.9 preads of a 32 MiB file and loads/stores of a 16 MiB anon region (populated
    # first), in turn, swap on zram, at swappiness 10 and 100
    mixed-swappiness10) echo "--access mixed --size 32M --anon-size 16M --accesses 100000 --dist zipf:0.9 --swap zram --swap-size 64M --swappiness 10" ;;
    mixed-swappiness100) echo "--access mixed --size 32M --anon-size 16M --accesses 100000 --dist zipf:0.9 --swap zram --swap-size 64M --swappiness 100" ;;
    *) echo "unknown shape '$1'" >&2; exit 2 ;;
    esac
}
ALL="zipf-pread hot-cold anon-gauss mmap-random mmap-normal mixed-swappiness10 mixed-swappiness100"
SHAPES="${*:-$ALL}"
for s in $SHAPES; do
    args=$(shape "$s")
    for k in ${SERIES:-6.1 6.12 7.2}; do
        for lru in ${LRUS:-mglru classic}; do
            out="$F/debian-$k-$lru-$s.json"
            echo "== $out"
            # shellcheck disable=SC2086
            target/release/lrugen kernel --series "$k" --lru "$lru" --memcg-max 32M --seed 1 $args --fixture "$out"
        done
    done
done
# the suspects: workloads once reported as model defects, kept as fixtures of their own
# (crates/lrugen-kernel/tests/shapes.rs); with the default shape list only
if [ $# -eq 0 ]; then
    mkdir -p crates/lrugen-kernel/tests/fixtures/suspects
    # issue 11, item 5: MADV_RANDOM uniform loads at 1.5x the memcg, Debian 6.1 MGLRU
    target/release/lrugen kernel --series 6.1 --lru mglru --memcg-max 32M --seed 1 --access mmap --size 48M \
        --accesses 100000 --dist uniform --advice random \
        --fixture crates/lrugen-kernel/tests/fixtures/suspects/debian-6.1-mglru-mmap-random-1.5x.json
fi

#!/bin/sh
# Regenerate the memory-tiering fixtures of crates/lrugen-kernel/tests/fixtures/tiering/: the
# Gaussian micro-benchmark with an inverted start (tiering/gauss-inverted.toml: hot pages placed
# on the slow node) in a guest of two NUMA nodes, 192 MiB of DRAM with the vCPU and 128 MiB
# CPU-less one memory tier down (qemu's ACPI HMAT; `lrugen kernel --numa`), no memcg limit,
# demotion on and NUMA balancing in memory-tiering mode; on Debian 6.12 and 7.2 (6.1 puts a
# CPU-less node in the DRAM tier: memory tiers from HMAT came in 6.10), MGLRU and classic, two
# boots each (8 boots of qemu, TCG, -icount, two at a time: about 3 minutes on 2 cores); 6.12
# MGLRU has two more (SERIES=6.12 LRUS=mglru BOOTS="3 4"), its kswapd scan count being bimodal
# (tests/tiering.rs, MGLRU_SCAN), and so has 7.2 classic (SERIES=7 LRUS=classic BOOTS="3 4"), to
# measure its kswapd scans' spread (CLASSIC_KSWAPD).
# crates/lrugen-kernel/tests/tiering.rs compares the model with them (docs/memory-tiers.md,
# "Real-kernel fixtures").
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
# Environment: SERIES (default "6.12 7"), LRUS (default "mglru classic"), BOOTS (default "1 2").
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build --release -p lrugen-cli
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures/tiering
for s in ${SERIES:-6.12 7}; do
    name=$s
    [ "$s" = 7 ] && name=7.2
    for l in ${LRUS:-mglru classic}; do
        for b in ${BOOTS:-1 2}; do
            out="$F/debian-$name-$l-gauss-inverted-boot$b.json"
            target/release/lrugen kernel --series "$s" --lru "$l" --exp "$F/gauss-inverted.toml" \
                --numa 192M,128M --memcg-max max --swap none --fixture "$out" > "$out.log" 2>&1 &
        done
        wait
        rm -f "$F"/*.json.log
    done
done

#!/bin/sh
# Regenerate the real-kernel control-file fixtures of crates/lrugen-kernel/tests/fixtures/ctl/:
# a small mixed workload (buffered Zipf reads of an 8 MiB file and loads/stores of a 4 MiB anon
# region, 20,000 measured accesses, in a 64 MiB memcg it never fills, swap on a 64 MiB zram:
# its writes complete synchronously, as the model's do; on a disk the kernel's swap writeback is
# asynchronous and the folios it writes come back to the LRU when it ends)
# followed by the proactive-reclaim command list of issue 13 (ctl/commands.toml: `+` with and
# without force_scan, `-` with several swappiness values, memory.reclaim of 1M with and without
# swappiness=, 40M), on Debian 6.1, 6.12 and 7.2 with MGLRU, one boot at a time (about 15 s each
# once the kernels are cached). tests/ctl.rs compares the model with them.
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
# Usage: scripts/regen-kernel-ctl.sh [SERIES...] (default: 6.1 6.12 7.2)
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build --release -p lrugen-cli
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures/ctl
for s in ${*:-6.1 6.12 7.2}; do
    target/release/lrugen kernel --series "$s" --lru mglru --memcg-max 64M --seed 1 --access mixed --size 8M \
        --anon-size 4M --accesses 20000 --dist zipf:0.9 --swap zram --swap-size 64M \
        --ctl "$F/commands.toml" --fixture "$F/debian-$s-mglru-mixed-commands.json"
done
# a second boot of 7.2, whose ops 8 and 9 moved between boots (tests/ctl.rs)
case " ${*:-7.2} " in *" 7.2 "*)
    mkdir -p "$F/boots"
    target/release/lrugen kernel --series 7.2 --lru mglru --memcg-max 64M --seed 1 --access mixed --size 8M \
        --anon-size 4M --accesses 20000 --dist zipf:0.9 --swap zram --swap-size 64M \
        --ctl "$F/commands.toml" --fixture "$F/boots/debian-7.2-mglru-mixed-commands.json" ;;
esac

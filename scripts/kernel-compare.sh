#!/bin/sh
# Boot a Debian kernel under qemu, run a workload in a memcg (lrugen's built-in file workload by
# default), and print the kernel's counters beside the model's. One command on a fresh Debian 12
# machine (as root):
#   scripts/kernel-compare.sh            # Debian 6.1, MGLRU
#   scripts/kernel-compare.sh --series 6.12 --lru classic
#   scripts/kernel-compare.sh --access mixed --swap zram --out results/k   # + report.json, plots
#   scripts/kernel-compare.sh --exp examples/anon-swap.toml
# Extra arguments go to `lrugen kernel` (see `lrugen kernel --help`).
set -eu
cd "$(dirname "$0")/.."
need=""
for p in qemu-system-x86_64:qemu-system-x86 busybox:busybox-static mkfs.ext4:e2fsprogs cpio:cpio zstd:zstd xz:xz-utils depmod:kmod; do
    command -v "${p%%:*}" >/dev/null 2>&1 || need="$need ${p#*:}"
done
[ -e /bin/busybox ] || need="$need busybox-static"
if [ -n "$need" ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need
fi
RUSTFLAGS="-C target-feature=+crt-static" cargo build -q --release -p lrugen-replay --target x86_64-unknown-linux-gnu
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
cargo run -q --release -p lrugen-cli --bin lrugen -- kernel "$@"

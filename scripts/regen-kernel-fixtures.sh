#!/bin/sh
# Regenerate the real-kernel fixtures of crates/lrugen-kernel/tests/fixtures/ (boots qemu; minutes).
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures
cargo run --release -p lrugen-kernel --example regen -- 6.1 "$F/debian-6.1-mglru-file-zipf.json" mglru
cargo run --release -p lrugen-kernel --example regen -- 6.12 "$F/debian-6.12-mglru-file-zipf.json" mglru
# 7.2: the newest 7.2.y of Debian sid (a private apt source list under ~/.cache/lrugen/kernels/apt-sid)
cargo run --release -p lrugen-kernel --example regen -- 7.2 "$F/debian-7.2-mglru-file-zipf.json" mglru
cargo run --release -p lrugen-kernel --example regen -- 6.1 "$F/debian-6.1-classic-file-zipf.json" classic
# small: 20,000 reads of a 16 MiB file in an 8 MiB memcg (the replayer's own anon pages are ~6 % of it)
cargo run --release -p lrugen-kernel --example regen -- 6.1 "$F/debian-6.1-mglru-file-zipf-small.json" small
# anon: 4,096-page region, 50,000 zipf:0.9 accesses (30 % stores), memcg 8 MiB, 32 MiB swap on /dev/vdb
cargo run --release -p lrugen-kernel --example regen -- 6.1 "$F/debian-6.1-mglru-anon-zipf.json" anon
# mixed: one process with a 8,192-page file (buffered preads) and a 4,096-page anon region (populated
# first), 60,000 zipf:0.9 accesses, half to the anon region (30 % of those stores), memcg 16 MiB,
# 32 MiB swap on /dev/vdb, page-cluster 0 (lrugen_kernel::mixed_ops)
cargo run --release -p lrugen-kernel --example regen -- 6.1 "$F/debian-6.1-mglru-mixed-zipf.json" mixed
cargo run --release -p lrugen-kernel --example regen -- 6.1 "$F/debian-6.1-classic-mixed-zipf.json" mixed-classic
cargo run --release -p lrugen-kernel --example regen -- 6.12 "$F/debian-6.12-mglru-mixed-zipf.json" mixed
cargo run --release -p lrugen-kernel --example regen -- 7.2 "$F/debian-7.2-mglru-mixed-zipf.json" mixed
# sort with writeback: an 8 MiB heap, a 16 MiB input read once, an 8 MiB shuffle file written
# (buffered) and read back, memcg 12 MiB, 32 MiB swap on /dev/vdb (regen.rs SORT)
cargo run --release -p lrugen-kernel --example regen -- 6.1 "$F/debian-6.1-mglru-sort-writeback.json" sort
cargo run --release -p lrugen-kernel --example regen -- 6.1 "$F/debian-6.1-classic-sort-writeback.json" sort-classic
cargo run --release -p lrugen-kernel --example regen -- 6.12 "$F/debian-6.12-mglru-sort-writeback.json" sort

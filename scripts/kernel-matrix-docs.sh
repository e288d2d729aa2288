#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The fidelity matrix report of docs/kernel-matrix.md (issue 11, item 4): the example matrix
# examples/kernel-matrix/small.toml (two shapes × Debian 6.1 and 6.12 × MGLRU and classic × two
# boots = 16 boots of qemu, two at a time) run by `lrugen kernel --matrix --out` into
# docs/kernel-matrix/small/ (table.txt, matrix.json, matrix.csv, diff-*.svg, index.html, boots/),
# and its cell listing into docs/kernel-matrix/small-list.txt. A few minutes on 2 cores.
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
#   scripts/kernel-matrix-docs.sh        (JOBS: VMs at a time, default 2)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
# from the repository's root, so that the report names the matrix by a relative path
cd "$root"
RUSTFLAGS="-C target-feature=+crt-static" cargo build -q --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build -q --release -p lrugen-cli
export LRUGEN_REPLAYER="$root/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
m=examples/kernel-matrix/small.toml
mkdir -p docs/kernel-matrix
target/release/lrugen kernel --matrix "$m" --list > docs/kernel-matrix/small-list.txt
target/release/lrugen kernel --matrix "$m" --jobs "${JOBS:-2}" --out docs/kernel-matrix/small
cat docs/kernel-matrix/small/table.txt
# the table into docs/kernel-matrix.md, between its markers
awk -v t=docs/kernel-matrix/small/table.txt '
/^<!-- kernel-matrix table: written by/ { print; print "```"; while ((getline l < t) > 0) print l; print "```"; skip = 1; next }
/^<!-- end of kernel-matrix table -->/ { skip = 0 }
!skip { print }' docs/kernel-matrix.md > docs/kernel-matrix.md.partial
mv docs/kernel-matrix.md.partial docs/kernel-matrix.md

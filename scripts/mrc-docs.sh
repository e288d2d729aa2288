#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The miss-ratio curves of docs/mrc.md (issue 16 item 3): the shared OLTP trace under lru (exact,
# and SHARDS at 0.1), opt, and mglru, classic, arc and s3fifo by miniature simulation at rate 0.1
# checked against full runs, at ten sizes; written into docs/mrc/oltp/ (table.txt, mrc.csv,
# mrc.json, mrc.svg, mrc.png) by `lrugen mrc --out`. Then the shipped synthetic trace's
# miniature errors over five hash seeds (the bound tests/mrc.rs asserts) into docs/mrc/seeds.txt.
# About a minute on 2 cores (release build).
#   scripts/mrc-docs.sh [TRACES_DIR]     (default: ../shared/traces beside the repository)
# LRUGEN=path/to/lrugen uses that binary instead of building one (the curves do not depend on it).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
# from the repository's root, so that docs/mrc/oltp's marker names the trace by a relative path
cd "$root"
traces=${1:-../shared/traces}
if [ -z "${LRUGEN:-}" ]; then
    cargo build --release -q -p lrugen-cli --manifest-path "$root/Cargo.toml"
fi
lrugen=${LRUGEN:-$root/target/release/lrugen}
sizes=1000,2000,4000,8000,16000,32000,64000,100000,150000,186880
"$lrugen" mrc "$traces/arc/OLTP.lis.zst" --policy lru,opt,mglru,classic,arc,s3fifo \
    --shards 0.1 --mini 0.1 --check --sizes "$sizes" --out "$root/docs/mrc/oltp" --force
{
    echo "# lrugen mrc examples/traces/synthetic.lis.zst --policy mglru,classic --mini 0.25 --check --seed S"
    for seed in 0 1 2 3 4; do
        "$lrugen" mrc "$root/examples/traces/synthetic.lis.zst" --policy mglru,classic --mini 0.25 \
            --check --seed "$seed" 2>/dev/null | sed -n "s/^\(.*against full runs.*\)$/seed $seed: \1/p"
    done
    echo "# lrugen mrc OLTP.lis.zst --policy mglru,classic --mini 0.1 --check --sizes $sizes --seed S"
    for seed in 0 1 2 3 4; do
        "$lrugen" mrc "$traces/arc/OLTP.lis.zst" --policy mglru,classic --mini 0.1 --check \
            --sizes "$sizes" --seed "$seed" 2>/dev/null | sed -n "s/^\(.*against full runs.*\)$/seed $seed: \1/p"
    done
} > "$root/docs/mrc/seeds.txt"
cat "$root/docs/mrc/oltp/table.txt" "$root/docs/mrc/seeds.txt"

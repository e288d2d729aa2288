#!/bin/sh
# Regenerate docs/explain/: `lrugen explain` of MGLRU 7.2 against the classic LRU (7.2) on the
# shared traces (TRACES, default ../shared/traces) and on single-stream fio and YCSB workloads,
# each with the switch ablation. Usage: sh scripts/explain-docs.sh [TRACES]
set -eu
T=${1:-../shared/traces}
L=${LRUGEN:-target/release/lrugen}
P="--policy mglru@7.2,classic --profile 7.2 --ablate"
run() { name=$1; shift; "$L" explain $P --out docs/explain/$name --force "$@" > /dev/null; }
run oltp --trace "$T/arc/OLTP.lis.zst" --capacity 4096
run p3 --trace "$T/arc/P3.lis.zst" --capacity 16384
run cloudphysics --trace "$T/cloudphysics/cloudPhysicsIO.oracleGeneral.bin" --capacity 5000
run fio-zipf --workload fio --dist zipf:0.9 --size 256M --memcg-max 64M --accesses 500000 --seeds 5
run ycsb-b --ycsb b --records 200000 --accesses 500000 --memcg-max 64M --seeds 5
run default --seeds 5

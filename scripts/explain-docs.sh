#!/bin/sh
# Regenerate docs/explain/: `lrugen explain` of MGLRU 7.2 against the classic LRU (7.2) on the
# shared traces (TRACES, default ../shared/traces), on single-stream fio and YCSB workloads and,
# in virtual time, on MGLRU-FG's hot lookups under a cold stream (examples/fg-hot-cold.toml) and
# four fio jobs (examples/fio-jobs-nvme.toml, whose MGLRU is `mainline`, 7.2), each with the switch ablation. Usage: sh scripts/explain-docs.sh [TRACES]
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
# engine runs: A and B are the experiment file's policy labels
runx() { name=$1; shift; "$L" explain --ablate --out docs/explain/$name --force "$@" > /dev/null; }
runx fg-hot-cold --exp examples/fg-hot-cold.toml --policy mglru-7.2,classic --seeds 3
runx fio-jobs-nvme --exp examples/fio-jobs-nvme.toml --policy mglru-7.2,classic --seeds 3

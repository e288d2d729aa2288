#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# One documented fuzzing run (docs/fuzzing.md): each target in turn, one process (one core),
# 10 M executions or TIME seconds, whichever comes first, new inputs into WORK/<target>/ and
# the checked-in corpus read as seeds. Prints libFuzzer's final statistics per target.
#   scripts/fuzz-run.sh WORK "target:max_len:seconds ..."
# Needs nightly and cargo-fuzz (`cargo install cargo-fuzz --locked`); build first with
#   (cd fuzz && cargo +nightly fuzz build -s none -a)
set -eu
work=$1
plan=$2
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/fuzz/target/x86_64-unknown-linux-gnu/release
for item in $plan; do
    t=${item%%:*}; rest=${item#*:}; len=${rest%%:*}; secs=${rest#*:}
    mkdir -p "$work/$t" "$work/artifacts/$t"
    start=$(date +%s)
    rc=0
    "$bin/$t" "$work/$t" "$root/fuzz/corpus/$t" -max_len="$len" -runs=10000000 -max_total_time="$secs" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/$t/" \
        > "$work/$t.log" 2>&1 || rc=$?
    end=$(date +%s)
    echo "== $t max_len=$len exit=$rc wall=$((end - start))s"
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$work/$t.log" || true
    grep -E '#[0-9]+ +(DONE|INITED)' "$work/$t.log" | tail -2 || true
    ls "$work/artifacts/$t" 2>/dev/null || true
done

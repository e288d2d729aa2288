#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Peak RSS of `lrugen run --trace` by trace length and policy (docs/memory.md, "Traces in bounded
# memory"). Writes traces of each length over the same PAGES distinct pages
# (crates/lrugen-core/examples/rss_trace.rs), then runs every policy on its own under
# /usr/bin/time and prints a markdown table: peak RSS (Maximum resident set size) and wall time.
#
#   benches/rss.sh                      # 1M, 10M and 100M requests, 262,144 pages
#   LENGTHS="1000000 10000000" benches/rss.sh
#   LRUGEN=/path/to/other/lrugen benches/rss.sh   # measure another build (e.g. before a change)
#
# Environment: LENGTHS (requests), PAGES (distinct pages), POLICIES, DIR (where the traces are
# written, default /tmp/lrugen-rss; reused when present), LRUGEN (the binary; default: built here
# in release mode), GEN (the trace writer; default: the rss_trace example, built here). The
# temporary files of a run go to $TMPDIR (default /tmp).
set -eu
cd "$(dirname "$0")/.."
LENGTHS=${LENGTHS:-"1000000 10000000 100000000"}
PAGES=${PAGES:-262144}
POLICIES=${POLICIES:-"mglru classic lru opt"}
DIR=${DIR:-/tmp/lrugen-rss}
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
if [ -z "${GEN:-}" ]; then
    cargo build --release --locked -q -p lrugen-core --example rss_trace
    GEN=target/release/examples/rss_trace
fi
if [ -z "${LRUGEN:-}" ]; then
    cargo build --release --locked -q -p lrugen-cli
    LRUGEN=target/release/lrugen
fi
mkdir -p "$DIR"
echo "| requests | policy | peak RSS (MiB) | wall (s) | hit ratio |"
echo "|---:|---|---:|---:|---:|"
for n in $LENGTHS; do
    trace="$DIR/rss-$n-$PAGES.lrugen"
    if [ ! -e "$trace" ]; then
        "$GEN" "$trace.part" "$n" "$PAGES"
        mv "$trace.part" "$trace"
    fi
    for p in $POLICIES; do
        out=$(mktemp)
        /usr/bin/time -f "%M %e" -o "$out.time" "$LRUGEN" run --trace "$trace" --policy "$p" --json >"$out"
        read -r kb secs <"$out.time"
        hit=$(sed -n 's/.*"hit_ratio": *\([0-9.e-]*\).*/\1/p' "$out" | head -n 1)
        awk -v n="$n" -v p="$p" -v kb="$kb" -v s="$secs" -v h="$hit" \
            'BEGIN { printf "| %d | %s | %.1f | %.1f | %.4f |\n", n, p, kb / 1024, s, h }'
        rm -f "$out" "$out.time"
    done
done

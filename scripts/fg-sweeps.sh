#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The sweep of MGLRU-FG's inferred parameters (docs/mglru-fg.md): for each scaled FG preset
# (examples/fg-*.toml but the full-scale fg-fio-zipf.toml), one experiment per parameter, made
# from the preset by adding a [sweep] (or by replacing its `profiles` for the yes/no switches),
# written to OUT/<preset>/<parameter>.toml and run into OUT/<preset>/<parameter>/ (tables, CSV,
# JSON, and the plot delta-<metric>-sweep.svg of FG's difference from 7.2 at every value).
#   cargo build --release -p lrugen-cli && scripts/fg-sweeps.sh OUT [PRESET...]
# Then `python3 scripts/fg-sweeps-summary.py OUT` prints the summary table of docs/mglru-fg.md.
set -eu
out=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
lrugen=${LRUGEN:-$root/target/release/lrugen}
if [ $# -eq 0 ]; then
    set -- fg-fio-zipf-small fg-ycsb-b fg-hot-cold fg-leveldb-get-scan fg-kernel-build
fi
for preset in "$@"; do
    src=$root/examples/$preset.toml
    mkdir -p "$out/$preset"
    # name = value sweeps of [mglru.fg] (the 7.2 and classic rows do not read them)
    for sweep in \
        'reset_refs=[0, 1, 3]' \
        'refs_max=[7, 8]' \
        'refs_referenced=[1, 2]' \
        'promote_trigger=["exceed", "reach"]' \
        'promotion_mode=["lazy", "eager"]' \
        'walk_min_refs=[0, 1, 2]' \
        'refault_threshold_pct=[25, 100, 400]'; do
        name=${sweep%%=*}
        values=${sweep#*=}
        f=$out/$preset/$name.toml
        if [ "$name" = refault_threshold_pct ]; then
            # only read with the refault distance on
            sed 's/^profiles = .*/profiles = ["mglru-fg+fg_refault_distance=true", "7.2"]/' "$src" >"$f"
        else
            cp "$src" "$f"
        fi
        sed -i "s/^name = \"\(.*\)\"/name = \"\1-$name\"/" "$f"
        printf '\n[sweep]\n"mglru.fg.%s" = %s\n' "$name" "$values" >>"$f"
        "$lrugen" exp "$f" --out "$out/$preset/$name" --force >"$out/$preset/$name.txt"
    done
    # the yes/no points are switches: one row each
    f=$out/$preset/switches.toml
    sed 's/^profiles = .*/profiles = ["mglru-fg", "mglru-fg+fg_no_tier_protection=true", "mglru-fg+fg_refault_distance=true", "mglru-fg+fg_min_seq_promotion=false", "7.2"]/' "$src" >"$f"
    sed -i "s/^name = \"\(.*\)\"/name = \"\1-switches\"/" "$f"
    "$lrugen" exp "$f" --out "$out/$preset/switches" --force >"$out/$preset/switches.txt"
done

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The presets of examples/presets/ (issue 12 item 5: the published benchmark setups, scaled), each
# run with `lrugen exp` into OUT/<preset>/ (tables, CSV, JSON, plots), then docs/presets.md
# written from them by scripts/presets-table.py. About 2 minutes on 2 cores.
#   scripts/presets.sh [--full] [OUT]      (OUT default: target/presets, or target/presets-full)
# With --full every preset runs at its published size (hours, and tens of GB of memory) and the
# table goes to OUT/presets.md instead of docs/.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
full=
if [ "${1:-}" = "--full" ]; then
    full=--full
    shift
fi
out=${1:-$root/target/presets${full:+-full}}
cargo build --release -q -p lrugen-cli --manifest-path "$root/Cargo.toml"
lrugen=${LRUGEN:-$root/target/release/lrugen}
mkdir -p "$out"
for f in "$root"/examples/presets/*.toml; do
    name=$(basename "$f" .toml)
    "$lrugen" exp "$f" $full --out "$out/$name" --force
done
if [ -n "$full" ]; then
    python3 "$root/scripts/presets-table.py" "$out" > "$out/presets.md"
    echo "wrote $out/presets.md"
else
    python3 "$root/scripts/presets-table.py" "$out" > "$root/docs/presets.md"
    echo "wrote docs/presets.md"
fi

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The results table of docs/mglru-fg.md from the output directories of FG's evaluations.

    for n in fio-zipf ycsb-b hot-cold leveldb-get-scan kernel-build fio-zipf-small; do
        lrugen exp examples/fg-$n.toml --out out/fg/$n
    done
    python3 scripts/fg-results-table.py out/fg

Reads each DIR/summary.csv (means and 95 % CIs over the repetitions, the difference from the
baseline) and prints one Markdown row per policy, in the presets' order.
"""
import csv
import json
import os
import sys

PRESETS = ["fio-zipf", "fio-zipf-small", "ycsb-b", "hot-cold", "leveldb-get-scan", "kernel-build"]
MAIN = {"hit_ratio": "hit ratio", "ops_per_sec": "ops/s", "refaults": "refaults"}


def num(x, pct=False):
    if pct:
        return f"{100 * x:.2f} %"
    return f"{round(x):,}"


def cell(row, pct=False):
    m, ci = float(row["mean"]), float(row["ci95"])
    if ci == 0:
        return num(m, pct)
    return f"{num(m, pct)} ± {100 * ci:.2f}" if pct else f"{num(m)} ± {num(ci)}"


def main(out):
    print("| Preset | Row | Main metric | Hit ratio | Refaults | pgscan | pgactivate | pswpout | Promotions | Δ main vs 7.2 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p in PRESETS:
        path = os.path.join(out, p, "summary.csv")
        if not os.path.exists(path):
            sys.exit(f"{path}: missing (run lrugen exp examples/fg-{p}.toml --out {os.path.join(out, p)})")
        rows = list(csv.DictReader(open(path)))
        res = os.path.join(out, p, "results.json")
        metric = json.load(open(res))["experiment"]["metric"]
        policies = []
        for r in rows:
            if r["policy"] not in policies:
                policies.append(r["policy"])
        get = {(r["policy"], r["metric"]): r for r in rows}
        first = True
        for pol in policies:
            g = lambda k: get[(pol, k)]
            main_row = g(metric)
            rel = main_row["rel_pct"]
            delta = "(baseline)" if main_row["baseline"] == pol else f"{float(rel):+.1f} % ± {float(main_row['rel_ci95_pct']):.1f}"
            name = f"`fg-{p}`" if first else ""
            first = False
            print(
                f"| {name} | {pol} | {MAIN.get(metric, metric)} {cell(main_row, metric == 'hit_ratio')} "
                f"| {cell(g('hit_ratio'), True)} | {cell(g('refaults'))} | {cell(g('pgscan'))} "
                f"| {cell(g('pgactivate'))} | {cell(g('pswpout'))} | {cell(g('promotions'))} | {delta} |"
            )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fg-results-table.py OUT (the directory holding one output directory per preset)")
    main(sys.argv[1])

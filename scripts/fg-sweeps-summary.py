#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Summarise scripts/fg-sweeps.sh OUT: for every preset and parameter, MGLRU-FG's difference
from MGLRU 7.2 in the preset's metric (relative, with its 95% CI) at each value, and whether the
parameter changes the answer: some value's difference lies outside the default's by more than
the two CIs together, or a difference beyond its CI changes sign. Prints Markdown.

    python3 scripts/fg-sweeps-summary.py OUT
"""
import csv
import json
import os
import sys

DEFAULTS = {
    "reset_refs": "3",
    "refs_max": "7",
    "refs_referenced": "1",
    "promote_trigger": "exceed",
    "promotion_mode": "lazy",
    "walk_min_refs": "1",
    "refault_threshold_pct": "100",
}
PRESETS = ["fg-fio-zipf-small", "fg-ycsb-b", "fg-hot-cold", "fg-leveldb-get-scan", "fg-kernel-build"]


def rows(d):
    metric = json.load(open(os.path.join(d, "results.json")))["experiment"]["metric"]
    out = []
    for r in csv.DictReader(open(os.path.join(d, "summary.csv"))):
        if r["metric"] == metric and r["policy"].startswith("mglru-fg") and r["rel_pct"]:
            out.append((int(r["point"]), r["policy"], float(r["rel_pct"]), float(r["rel_ci95_pct"] or 0)))
    return metric, out


def fmt(x, c):
    return f"{x:+.2f} ± {c:.2f}"


def verdict(vals, default):
    """vals: [(label, diff, ci)]; default: the label of the default."""
    base = next((v for v in vals if v[0] == default), None)
    if base is None:
        return "?"
    sig = [v for v in vals if abs(v[1]) > v[2]]
    if any(a[1] * b[1] < 0 for a in sig for b in sig):
        return "**yes** (sign)"
    if any(abs(v[1] - base[1]) > v[2] + base[2] for v in vals):
        return "**yes** (size)"
    return "no"


def main():
    out = sys.argv[1]
    print("| preset (metric) | parameter | FG − 7.2 at each value (%, 95% CI) | changes the answer |")
    print("|---|---|---|---|")
    for preset in PRESETS:
        pdir = os.path.join(out, preset)
        if not os.path.isdir(pdir):
            continue
        for name, default in DEFAULTS.items():
            d = os.path.join(pdir, name)
            if not os.path.isfile(os.path.join(d, "summary.csv")):
                continue
            metric, rs = rows(d)
            pts = json.load(open(os.path.join(d, "results.json")))["experiment"]["points"]
            label = {p["index"]: p["params"][0][1] for p in pts}
            vals = [(label[i].strip('"'), x, c) for i, _, x, c in rs]
            cells = ", ".join(f"{v} {'(default) ' if v == default else ''}{fmt(x, c)}" for v, x, c in vals)
            print(f"| {preset} ({metric}) | `{name}` | {cells} | {verdict(vals, default)} |")
        d = os.path.join(pdir, "switches")
        if os.path.isfile(os.path.join(d, "summary.csv")):
            metric, rs = rows(d)
            vals = [(p.replace("mglru-fg+", "").replace("mglru-fg", "preset"), x, c) for _, p, x, c in rs]
            cells = ", ".join(f"{v} {fmt(x, c)}" for v, x, c in vals)
            print(f"| {preset} ({metric}) | switches | {cells} | {verdict(vals, 'preset')} |")


main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""docs/presets.md from the output directories of the presets of examples/presets/.

    scripts/presets.sh [--full]      # runs every preset, then this script

or by hand:

    for f in examples/presets/*.toml; do
        lrugen exp "$f" --out "out/presets/$(basename "$f" .toml)"
    done
    python3 scripts/presets-table.py out/presets > docs/presets.md

Reads each DIR/results.json (the experiment, its configuration and every cell's metrics) and
DIR/summary.csv (means, 95 % CIs, differences from the baseline, classic). Prints one table per
preset, one row per policy and sweep point: the main metric, its difference from classic, p99
latency, kswapd and direct-reclaim CPU, each with its 95 % CI over the repetitions; then one
paragraph per MGLRU row that prices, from the run's own counters and the cost model of its
configuration, what each mechanism adds to or saves from a page operation against classic: misses
(the I/O wait and fault CPU of major faults from files and from swap), direct reclaim (CPU on the
tasks' own path, without its lock time), lru_lock spinning and cache-line transfers on the tasks'
path (sim::locks), swap-out compression, and kswapd (CPU of
its own, which costs the tasks only when the CPUs are all busy). The largest is named.
"""
import csv
import json
import os
import sys

ORDER = [
    "fio-1job-per-cpu",
    "fio-2jobs-per-cpu",
    "memcached-zram",
    "memtier-router",
    "mongodb-ycsb",
    "anon-mmc",
]
UNITS = {"iops": "IOPS", "ops_per_sec": "ops/s", "virtual_s": "s (run time)"}


def fmt(x):
    """Three significant digits, thousands separated."""
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def cell(row):
    m, ci = float(row["mean"]), float(row["ci95"])
    # a CI of rounding noise is none
    return fmt(m) if ci <= 1e-9 * max(abs(m), 1.0) else f"{fmt(m)} ± {fmt(ci)}"


def tasks_and_cpus(cfg):
    eng = cfg.get("engine") or {}
    return eng.get("cpus", 1)


def costs_of(cfg):
    eng = cfg.get("engine") or {}
    c = eng.get("costs", {})
    st = eng.get("storage", {})
    sw = eng.get("swap_device", {})
    # a miss's CPU: the fault besides the block layer, and the block layer's request unless the
    # device is zram (whose decompression is its work); then the device's latency
    zram = sw.get("compression_ratio") is not None
    block = c.get("block_io_ns", 0)
    return {
        "file_miss_ns": c.get("major_fault_ns", 0) + block + st.get("read_latency_ns", 0),
        "swap_miss_ns": c.get("major_fault_ns", 0)
        + (0 if zram else block)
        + sw.get("read_latency_ns", 0)
        + sw.get("decompress_ns", 0),
        "compress_ns": sw.get("compress_ns", 0),
        "storage": st.get("name", "?"),
        "swap": sw.get("name", "?"),
    }


def mean(get, pol, k):
    r = get.get((pol, k))
    return float(r["mean"]) if r else 0.0


def paragraph(label, get, pol, base, metric, ops_key, cfg):
    """What each mechanism costs an operation of `pol` against `base`, in µs."""
    ops = max(mean(get, pol, "accesses"), 1.0)
    bops = max(mean(get, base, "accesses"), 1.0)
    co = costs_of(cfg)

    def per_op(k, p):
        return mean(get, p, k) / (ops if p == pol else bops)

    swap_in = per_op("pswpin", pol) - per_op("pswpin", base)
    file_miss = (per_op("misses", pol) - per_op("pswpin", pol)) - (per_op("misses", base) - per_op("pswpin", base))
    parts = {
        "file misses": file_miss * co["file_miss_ns"] / 1000,
        "swap-ins": swap_in * co["swap_miss_ns"] / 1000,
        # direct reclaim without its lru_lock spinning and transfers, which are priced apart
        "direct reclaim": (
            per_op("direct_reclaim_ms", pol)
            - per_op("lru_lock_direct_ms", pol)
            - per_op("direct_reclaim_ms", base)
            + per_op("lru_lock_direct_ms", base)
        )
        * 1000,
        "lru_lock waits and transfers": (per_op("lru_lock_task_ms", pol) - per_op("lru_lock_task_ms", base)) * 1000,
        "swap-out compression": (per_op("pswpout", pol) - per_op("pswpout", base)) * co["compress_ns"] / 1000,
    }
    kswapd = (per_op("kswapd_ms", pol) - per_op("kswapd_ms", base)) * 1000
    main = get[(pol, metric)]
    rel, rci = float(main["rel_pct"]), float(main["rel_ci95_pct"])
    dm = mean(get, pol, "misses") - mean(get, base, "misses")
    bm = max(mean(get, base, "misses"), 1.0)
    words = [
        f"**{label}, {pol}:** {UNITS.get(metric, metric)} {rel:+.1f} % ± {rci:.1f} against classic; "
        f"misses {dm:+,.0f} ({100 * dm / bm:+.1f} %), of which swap-ins "
        f"{mean(get, pol, 'pswpin') - mean(get, base, 'pswpin'):+,.0f}; pgscan "
        f"{mean(get, pol, 'pgscan') - mean(get, base, 'pgscan'):+,.0f}."
    ]
    shown = [(k, v) for k, v in parts.items() if abs(v) >= 0.0005]
    if shown:
        words.append(
            " Per page operation, against classic: "
            + ", ".join(f"{k} {v:+.3g} µs" for k, v in shown)
            + f"; kswapd {kswapd:+.3g} µs of CPU of its own."
        )
        k, v = max(shown, key=lambda kv: abs(kv[1]))
        if abs(kswapd) > 2 * abs(v):
            words.append(
                f" The largest is kswapd's CPU, which costs the tasks only while all "
                f"{tasks_and_cpus(cfg)} CPUs are busy."
            )
        else:
            words.append(f" The largest is {k}" + (" (I/O wait on the " + co["storage"] + ")" if k == "file misses" else "") + ".")
    else:
        words.append(f" No mechanism differs by 0.0005 µs an operation; kswapd {kswapd:+.3g} µs.")
    return "".join(words)


def preset(out, name):
    d = os.path.join(out, name)
    res = json.load(open(os.path.join(d, "results.json")))
    e = res["experiment"]
    rows = list(csv.DictReader(open(os.path.join(d, "summary.csv"))))
    metric = e["metric"]
    base = e["variants"][e["baseline"]]["label"]
    lines = [f"### `{name}`{' (full size)' if e.get('full') else ''}", "", e.get("description") or "", ""]
    p99 = "req_p99_us" if any(r["metric"] == "req_p99_us" for r in rows) else "clat_p99_us"
    lines.append(
        f"| point | policy | {UNITS.get(metric, metric)} | Δ vs {base} | p99 (µs) | kswapd (ms) | direct reclaim (ms) "
        "| lru_lock, tasks (ms) | misses |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|")
    paras = []
    for pt in e["points"]:
        label = ", ".join(f"{v}" for _, v in pt["params"]) or "—"
        get = {(r["policy"], r["metric"]): r for r in rows if int(r["point"]) == pt["index"]}
        pols = []
        for r in rows:
            if int(r["point"]) == pt["index"] and r["policy"] not in pols:
                pols.append(r["policy"])
        for pol in pols:
            m = get[(pol, metric)]
            delta = "(baseline)" if pol == base else f"{float(m['rel_pct']):+.1f} % ± {float(m['rel_ci95_pct']):.1f}"
            lines.append(
                f"| {label} | {pol} | {cell(m)} | {delta} | {cell(get[(pol, p99)]) if (pol, p99) in get else '—'} "
                f"| {cell(get[(pol, 'kswapd_ms')])} | {cell(get[(pol, 'direct_reclaim_ms')])} "
                f"| {cell(get[(pol, 'lru_lock_task_ms')]) if (pol, 'lru_lock_task_ms') in get else '—'} "
                f"| {cell(get[(pol, 'misses')])} |"
            )
            if pol != base:
                paras.append(paragraph(label, get, pol, base, metric, "accesses", pt["config"]))
    return lines + [""] + [p + "\n" for p in paras]


def main(out):
    head = [
        "# Presets at full scale: results",
        "",
        "Generated by `scripts/presets.sh` (which runs every preset of `examples/presets/` with",
        "`lrugen exp` and then `scripts/presets-table.py`); do not edit by hand. Each preset's file",
        "states the published setup it scales and what is inferred; `lrugen exp FILE --full` runs",
        "the published size. Means over the repetitions with 95 % CIs (Student's t); Δ is the",
        "difference from classic in percent, paired by seed (Welch). The paragraph under each table",
        "prices each mechanism per page operation from the run's own counters and its configuration's",
        "costs (`[engine]`, each measured: docs/benchmarks.md; a file miss is the major-fault CPU",
        "and a block request's plus the storage device's read latency, a swap-in the same with the",
        "swap device's latency, or zram's decompression in place of the block request, a swap-out",
        "zram's compression); what remains of a throughput difference is queueing on the devices",
        "and CPUs.",
        "",
    ]
    body = []
    for name in ORDER:
        if not os.path.exists(os.path.join(out, name, "results.json")):
            sys.exit(f"{os.path.join(out, name)}: missing (lrugen exp examples/presets/{name}.toml --out {os.path.join(out, name)})")
        body += preset(out, name)
    print("\n".join(head + body).rstrip() + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: presets-table.py OUT (the folder of the presets' output directories)")
    main(sys.argv[1])

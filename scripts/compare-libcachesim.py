#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Compare simulation speed with libCacheSim: a developer tool, not used by CI or the tests.

With --golden, print instead the miss counts of libCacheSim's policies (--policy, default all of
lrugen's cache zoo) on the shared traces at the golden test's sizes, as the Rust table
`crates/lrugen-cache/tests/zoo_golden.rs` holds them (no lrugen binary needed):

    /work/venv/bin/python scripts/compare-libcachesim.py --golden [--policy fifo,sieve]

Measures accesses per second of libCacheSim's LRU (through its Python bindings, whose trace loop
runs in C) and of lrugen's plain LRU and classic kernel LRU (`lrugen bench`) on the same
oracleGeneral files, and checks that the two plain LRUs agree on the hit ratio.

The ARC traces (`.lis.zst`) are converted to oracleGeneral first, one record per 512-byte block as
lrugen expands them (obj_size 4096, next_access_vtime filled in), into --workdir (outside the
repository). Needs the `zstd` command for that.

Setup, outside the repository:

    python3 -m venv /work/venv && /work/venv/bin/pip install libcachesim==0.3.5
    cargo build --release -p lrugen-cli
    /work/venv/bin/python scripts/compare-libcachesim.py

With --table, regenerate the table of issue #15 ("Speed"): rows OLTP and P3 at 1,000 and 65,536
pages and CloudPhysics at 5,000, columns lrugen's lru, classic and mglru against libCacheSim's LRU
with its hash table sized to the cache (hashpower = max(12, capacity.bit_length() + 1)), and
lrugen's lru against its own bare replay loop (`lrugen bench`'s `bare` row: the trace's dense ids
read back with no policy). It measures in paired rounds: each round runs, for every row in turn,
one libCacheSim run and then one `lrugen bench` run of that row (all three policies), so that
machine noise hits both sides of a ratio; a ratio is taken within a round, and each cell shows the
median over --rounds rounds (default 5) with the min-max of the per-round ratios. A second table
gives the median absolute rates. Both are markdown; the load average before and after is printed
so that a reader can judge how quiet the machine was:

    /work/venv/bin/python scripts/compare-libcachesim.py --table [--rounds 5]

docs/performance.md says how to read it and holds a measured table.

What is timed differs a little: libCacheSim's time covers its whole trace loop (reading each
record from the mapped file, hashing the object id, the LRU); lrugen's covers the replay of a trace
loaded and renumbered to dense ids beforehand (see `lrugen bench`). In the default mode (neither
--golden nor --table) libCacheSim is measured twice: with its default hash table of 2^24 buckets,
and with one sized to the cache (its best case, used for the ratios); all are the best of --repeat
runs.
"""

import argparse
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("LRUGEN_TRACES_DIR", REPO.parent / "shared" / "traces"))

# (name, source file under the shared traces, capacity in objects = pages)
DEFAULT_TRACES = [
    ("cloudPhysicsIO", "cloudphysics/cloudPhysicsIO.oracleGeneral.bin", 5000),
    ("OLTP", "arc/OLTP.lis.zst", 1000),
    ("P3", "arc/P3.lis.zst", 65536),
]

RECORD = struct.Struct("<IQIq")  # clock_time, obj_id, obj_size, next_access_vtime


def lis_to_oracle(src: Path, dst: Path) -> int:
    """Convert an ARC .lis(.zst) trace to oracleGeneral; returns the number of records."""
    if src.suffix == ".zst":
        text = subprocess.run(["zstd", "-dc", str(src)], check=True, capture_output=True).stdout
    else:
        text = src.read_bytes()
    keys = []
    times = []
    for n, line in enumerate(text.splitlines(), 1):
        f = line.split()
        if not f:
            continue
        if len(f) < 2:
            sys.exit(f"{src}:{n}: expected 'start_block n_blocks ignored request_number'")
        start, count = int(f[0]), int(f[1])
        keys.extend(range(start, start + count))
        times.extend([n] * count)
    nxt = [-1] * len(keys)
    last = {}
    for i in range(len(keys) - 1, -1, -1):
        nxt[i] = last.get(keys[i], -1)
        last[keys[i]] = i + 1  # 1-based index of this request
    tmp = dst.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        pack = RECORD.pack
        out.write(b"".join(pack(t, k, 4096, x) for t, k, x in zip(times, keys, nxt)))
    tmp.replace(dst)
    return len(keys)


def oracle_file(name: str, src: Path, workdir: Path) -> Path:
    if "oracleGeneral" in src.name:
        return src
    dst = workdir / f"{name}.oracleGeneral.bin"
    if not dst.exists() or dst.stat().st_mtime < src.stat().st_mtime:
        print(f"converting {src} -> {dst} ...", file=sys.stderr)
        n = lis_to_oracle(src, dst)
        print(f"  {n} records", file=sys.stderr)
    return dst


def libcachesim_lru(path: Path, capacity: int, repeat: int, hashpower: int):
    import libcachesim as lcs

    n_req = path.stat().st_size // RECORD.size
    best = None
    miss = None
    for _ in range(repeat):
        params = lcs.ReaderInitParam(ignore_obj_size=True)
        reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE, params)
        cache = lcs.LRU(capacity, hashpower=hashpower)
        t0 = time.perf_counter()
        miss, _ = cache.process_trace(reader)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return n_req, 1.0 - miss, n_req / best


# lrugen's zoo name -> libCacheSim's Python class (default parameters)
ZOO = {
    "lru": "LRU",
    "fifo": "FIFO",
    "clock": "Clock",
    "sieve": "Sieve",
    "s3fifo": "S3FIFO",
    "arc": "ARC",
    "2q": "TwoQ",
    "lirs": "LIRS",
    "wtinylfu": "WTinyLFU",
    "clockpro": "ClockPro",
}

# (name, source file under the shared traces, capacities of the golden test)
GOLDEN_TRACES = [
    ("OLTP", "arc/OLTP.lis.zst", [1000, 2000, 5000, 10000]),
    ("P3", "arc/P3.lis.zst", [16384, 65536]),
    ("P12", "arc/P12.lis.zst", [1000, 10000]),
    ("cloudPhysicsIO", "cloudphysics/cloudPhysicsIO.oracleGeneral.bin", [1000, 5000]),
]


def libcachesim_misses(path: Path, policy: str, capacity: int) -> tuple[int, int]:
    """(requests, misses) of libCacheSim's `policy` (a ZOO key) with default parameters."""
    import libcachesim as lcs

    n_req = path.stat().st_size // RECORD.size
    params = lcs.ReaderInitParam(ignore_obj_size=True)
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE, params)
    cache = getattr(lcs, ZOO[policy])(capacity)
    miss_ratio, _ = cache.process_trace(reader)
    return n_req, round(miss_ratio * n_req)


def golden(policies: list[str], workdir: Path) -> None:
    """Print the golden table: one `(trace, capacity, misses)` row per policy."""
    import libcachesim as lcs

    print(f"// libcachesim {getattr(lcs, '__version__', '?')}; misses of each policy, default parameters")
    for name, f, caps in GOLDEN_TRACES:
        src = SHARED / f
        if not src.exists():
            print(f"skipping {name}: {src} is missing", file=sys.stderr)
            continue
        path = oracle_file(name, src, workdir)
        for policy in policies:
            for cap in caps:
                n, m = libcachesim_misses(path, policy, cap)
                print(f"{policy:<9} {name:<15} {cap:>6} {n:>9} {m:>9} {m / n:.6f}", flush=True)


def lrugen_bench(binary: Path, path: Path, capacity: int, repeat: int):
    """Best rate (accesses/s) and hit ratio of each policy of `lrugen bench`."""
    out = {}
    for _ in range(repeat):
        text = subprocess.run(
            [str(binary), "bench", str(path), "--capacity", str(capacity), "--policy", "lru,classic"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for policy, rate, hit, n in parse_bench(text):
            prev = out.get(policy)
            out[policy] = (max(rate, prev[0]) if prev else rate, hit, n)
    return out


def parse_bench(text: str):
    """The rows of `lrugen bench`'s output: (policy, accesses/s, hit ratio or None, accesses)."""
    rows = []
    for line in text.splitlines()[1:]:
        f = line.split()
        # trace policy capacity accesses RATE M HIT% (HIT is `-` for the bare replay loop)
        if len(f) != 7 or f[5] != "M":
            continue
        hit = None if f[6] == "-" else float(f[6].rstrip("%")) / 100
        rows.append((f[1], float(f[4]) * 1e6, hit, int(f[3])))
    return rows


# The rows of issue #15's table: (name, source file under the shared traces, capacity in pages)
TABLE_ROWS = [
    ("OLTP", "arc/OLTP.lis.zst", 1000),
    ("OLTP", "arc/OLTP.lis.zst", 65536),
    ("P3", "arc/P3.lis.zst", 1000),
    ("P3", "arc/P3.lis.zst", 65536),
    ("CloudPhysics", "cloudphysics/cloudPhysicsIO.oracleGeneral.bin", 5000),
]

TABLE_POLICIES = ["lru", "classic", "mglru"]


def median(xs: list[float]) -> float:
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def load_average() -> str:
    try:
        return subprocess.run(["uptime"], check=True, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "uptime unavailable"


def table(binary: Path, workdir: Path, rounds: int) -> None:
    """Issue #15's table from paired rounds (see the module documentation)."""
    import libcachesim as lcs

    rows = []
    for name, f, cap in TABLE_ROWS:
        src = SHARED / f
        if not src.exists():
            print(f"skipping {name} @ {cap}: {src} is missing", file=sys.stderr)
            continue
        rows.append((name, oracle_file(name, src, workdir), cap))
    if not rows:
        sys.exit(f"no trace found under {SHARED} (set LRUGEN_TRACES_DIR)")
    before = load_average()
    # per row: lists over the rounds of libCacheSim's rate and lrugen's rate of each policy
    lcs_rates = [[] for _ in rows]
    lg_rates = [{p: [] for p in ["bare"] + TABLE_POLICIES} for _ in rows]
    hits = [None] * len(rows)
    for r in range(rounds):
        for i, (name, path, cap) in enumerate(rows):
            hashpower = max(12, cap.bit_length() + 1)
            n, lcs_hit, rate = libcachesim_lru(path, cap, 1, hashpower)
            lcs_rates[i].append(rate)
            text = subprocess.run(
                [str(binary), "bench", str(path), "--capacity", str(cap), "--policy", ",".join(TABLE_POLICIES)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            got = {p: (rt, h, k) for p, rt, h, k in parse_bench(text)}
            for p in lg_rates[i]:
                if p not in got:
                    sys.exit(f"`lrugen bench` printed no {p} row for {path}:\n{text}")
                lg_rates[i][p].append(got[p][0])
            if got["lru"][2] != n:
                print(f"warning: {name}: lrugen replayed {got['lru'][2]} accesses, libCacheSim {n}", file=sys.stderr)
            if abs(got["lru"][1] - lcs_hit) > 0.0001:
                print(
                    f"warning: {name}: LRU hit ratios differ: lrugen {got['lru'][1]:.4f}, libCacheSim {lcs_hit:.4f}",
                    file=sys.stderr,
                )
            hits[i] = (n, lcs_hit, {p: got[p][1] for p in TABLE_POLICIES})
            print(
                f"round {r + 1}/{rounds} {name}@{cap}: libCacheSim {rate / 1e6:.2f} M/s, "
                + ", ".join(f"{p} {lg_rates[i][p][-1] / 1e6:.2f} M/s" for p in lg_rates[i]),
                file=sys.stderr,
                flush=True,
            )
    after = load_average()

    def cell(num: list[float], den: list[float]) -> str:
        ratios = [a / b for a, b in zip(num, den)]
        return f"{median(ratios):.2f}× ({min(ratios):.2f}–{max(ratios):.2f})"

    print(
        f"libCacheSim {getattr(lcs, '__version__', '?')} LRU, hash table sized to the cache; "
        f"`lrugen bench` ({binary}); {rounds} paired rounds; median ratio (min–max of the per-round ratios)"
    )
    print(f"load before: {before}")
    print(f"load after:  {after}")
    print()
    print(
        "| trace @ capacity | lrugen lru / libCacheSim | lrugen classic / libCacheSim | "
        "lrugen mglru / libCacheSim | lrugen lru / bare loop |"
    )
    print("|---|---|---|---|---|")
    for i, (name, _, cap) in enumerate(rows):
        g = lg_rates[i]
        cells = [cell(g[p], lcs_rates[i]) for p in TABLE_POLICIES] + [cell(g["lru"], g["bare"])]
        print(f"| {name} @ {cap:,} | " + " | ".join(cells) + " |")
    print()
    print("Median rates (M accesses/s) over the rounds, and hit ratios (lrugen's lru and libCacheSim's LRU agree):")
    print()
    print(
        "| trace @ capacity | accesses | libCacheSim LRU | lrugen bare loop | lrugen lru | lrugen classic "
        "| lrugen mglru | hit ratio lru / classic / mglru |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for i, (name, _, cap) in enumerate(rows):
        g = lg_rates[i]
        n, _, h = hits[i]
        rates = [median(lcs_rates[i])] + [median(g[p]) for p in ["bare"] + TABLE_POLICIES]
        print(
            f"| {name} @ {cap:,} | {n:,} | "
            + " | ".join(f"{x / 1e6:.2f}" for x in rates)
            + " | "
            + " / ".join(f"{h[p] * 100:.2f} %" for p in TABLE_POLICIES)
            + " |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lrugen", type=Path, default=REPO / "target" / "release" / "lrugen")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/lrugen-libcachesim"))
    ap.add_argument("--repeat", type=int, default=3, help="runs of each measurement (best kept)")
    ap.add_argument(
        "--trace",
        action="append",
        metavar="NAME=PATH:CAPACITY",
        help="a trace to compare instead of the defaults (repeatable)",
    )
    ap.add_argument("--golden", action="store_true", help="print libCacheSim's miss counts of the zoo")
    ap.add_argument("--table", action="store_true", help="print issue #15's table from paired rounds")
    ap.add_argument("--rounds", type=int, default=5, help="with --table: paired rounds (default 5)")
    ap.add_argument("--policy", default=",".join(k for k in ZOO if k != "lru"), help="with --golden")
    a = ap.parse_args()
    if a.golden:
        a.workdir.mkdir(parents=True, exist_ok=True)
        policies = [p.strip().lower() for p in a.policy.split(",") if p.strip()]
        for p in policies:
            if p not in ZOO:
                sys.exit(f"unknown policy {p!r}; valid: {', '.join(ZOO)}")
        golden(policies, a.workdir)
        return
    if not a.lrugen.exists():
        sys.exit(f"{a.lrugen} not found: run `cargo build --release -p lrugen-cli` first")
    if a.table:
        if a.rounds < 1:
            sys.exit("--rounds: expected at least 1 round")
        a.workdir.mkdir(parents=True, exist_ok=True)
        table(a.lrugen, a.workdir, a.rounds)
        return
    traces = []
    if a.trace:
        for t in a.trace:
            name, rest = t.split("=", 1)
            path, cap = rest.rsplit(":", 1)
            traces.append((name, Path(path), int(cap)))
    else:
        traces = [(n, SHARED / f, c) for n, f, c in DEFAULT_TRACES]
    a.workdir.mkdir(parents=True, exist_ok=True)

    rows = []
    for name, src, cap in traces:
        if not src.exists():
            print(f"skipping {name}: {src} is missing", file=sys.stderr)
            continue
        path = oracle_file(name, src, a.workdir)
        # libCacheSim's default hash table (2^24 buckets) costs a fixed ~0.2 s per run, most of the
        # time on these traces: also measure it with a table sized to the cache, its best case.
        _, _, lcs_default = libcachesim_lru(path, cap, a.repeat, 24)
        n, lcs_hit, lcs_rate = libcachesim_lru(path, cap, a.repeat, max(12, cap.bit_length() + 1))
        lg = lrugen_bench(a.lrugen, path, cap, a.repeat)
        if lg["lru"][2] != n:
            print(f"warning: {name}: lrugen replayed {lg['lru'][2]} accesses, libCacheSim {n}", file=sys.stderr)
        if abs(lg["lru"][1] - lcs_hit) > 0.0001:
            print(
                f"warning: {name}: LRU hit ratios differ: lrugen {lg['lru'][1]:.4f}, libCacheSim {lcs_hit:.4f}",
                file=sys.stderr,
            )
        rows.append((name, cap, n, lcs_default, lcs_hit, lcs_rate, lg["lru"], lg["classic"]))

    print("accesses/s (best of %d) and hit ratio; ratios are against libCacheSim with a sized table" % a.repeat)
    print(
        f"{'trace':<16} {'C':>7} {'accesses':>10} | {'lcs LRU default':>15} | {'lcs LRU sized table':>22} | "
        f"{'lrugen lru':>22} | {'lrugen classic':>22} | {'lru/lcs':>7} {'classic/lcs':>11}"
    )
    for name, cap, n, ld, lh, lr, (gr, gh, _), (cr, ch, _) in rows:
        cell = lambda rate, hit: f"{rate / 1e6:7.2f} M/s {hit * 100:6.2f}%"  # noqa: E731
        print(
            f"{name:<16} {cap:>7} {n:>10} | {ld / 1e6:11.2f} M/s | {cell(lr, lh):>22} | {cell(gr, gh):>22} | "
            f"{cell(cr, ch):>22} | {gr / lr:6.2f}x {cr / lr:10.2f}x"
        )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes the seed inputs of the fuzz targets (docs/fuzzing.md) into fuzz/corpus/<target>/ from the
repository's real inputs: the trace test data, the example experiments, the lru_gen texts of the
debugfs tests and of the kernel fixtures (real 6.1/6.12/7.2 runs), serial logs rebuilt from those
fixtures, op files, and lru_gen/sysfs writes. Every seed is at most MAX_LEN bytes (the fuzzing
runs' -max_len). Run from the repository root; then minimise with `cargo fuzz cmin`."""
import hashlib, json, os, pathlib, zlib

MAX_LEN = 4096
ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "fuzz" / "corpus"
SELECTORS = ["arc", "oracleGeneral", "csv", "lcs", "iolog", "lackey", "lrugen", "zstd", "lcs-records"]


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    data = data[:MAX_LEN]
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def trace(sel, body, buf=0):
    put("traces", bytes([SELECTORS.index(sel), buf]) + body)


data = ROOT / "crates" / "lrugen-trace" / "tests" / "data"
for name, sel in [
    ("tiny.lis", "arc"), ("tiny.oracleGeneral.bin", "oracleGeneral"), ("tiny-v2.lcs", "lcs"),
    ("tiny-v2.iolog", "iolog"), ("tiny-v3.iolog", "iolog"), ("tiny.lackey", "lackey"),
    ("valgrind-true.lackey", "lackey"), ("tiny.lrugen", "lrugen"), ("tiny.lis.zst", "zstd"),
    ("tiny.oracleGeneral.bin.zst", "zstd"),
]:
    body = (data / name).read_bytes()
    trace(sel, body)
    trace(sel, body, buf=3)
trace("csv", b"preset=cloudphysics\n" + (data / "tiny-cloudphysics.csv").read_bytes())
trace("csv", b"x\n" + (data / "tiny-cloudphysics.csv").read_bytes(), buf=5)
trace("csv", b"time-col=1, obj-id-col=2, obj-size-col=3, op-col=4, delimiter=\\t, has-header=true, "
      b"obj-id-is-num=false\n" + (data / "tiny-kv.tsv").read_bytes())
trace("csv", b"obj-id-col=2, delimiter=space, block-size=512\n1 100\n2 200\n")
v1 = (data / "tiny-v1.lcs").read_bytes()
trace("lcs-records", bytes([0]) + v1[8192:])  # version 1 records
trace("lcs", v1[:1500])  # start magic, no end magic within the data
trace("lrugen", (ROOT / "crates" / "lrugen-trace" / "tests" / "data" / "tiny.lrugen").read_bytes()[:20])
trace("arc", b"0 18446744073709551615 0 0\n1 2 3 4\n")

for p in sorted((ROOT / "examples").glob("*.toml")):
    put("experiment_toml", p.read_text())
put("experiment_toml", "[workload]\nkind = \"seq\"\npages = 100\n[sweep]\n\"memcg.max\" = [\"1M\", \"2M\"]\n")

put("op_file", "lrugen-ops 1\nwindow 1000\nfile 0 data/file0 16384\nanon 4096\nr 0 123\np 0 123\nm 0 1\n"
    "l 17\ns 17\nw 0\n# comment\n\nr 0 16383\n")
put("op_file", "lrugen-ops 1\nanon 2\nanon 3\ns 2\n")
put("op_file", "lrugen-ops 1\nfile 4294967295 a 4294967296\nm 4294967295 7\n")
put("op_file", "lrugen-ops 1\nwindow 5\nfile 0 f 10\nfile 0 g 10\n")
put("op_file", "lrugen-ops 2\n")

texts = []
for p in sorted((ROOT / "crates" / "lrugen-core" / "tests" / "debugfs").glob("*.txt")):
    texts.append(p.read_text())
for p in sorted((ROOT / "crates" / "lrugen-core" / "tests" / "golden").glob("*lru_gen*")):
    texts.append(p.read_text())
fixtures = sorted((ROOT / "crates" / "lrugen-kernel" / "tests" / "fixtures").glob("*.json"))
runs = [json.loads(p.read_text())["run"] for p in fixtures]
for r in runs:
    texts += [r["lru_gen"], r["lru_gen_full"]]
seen = set()
for t in texts:
    if t and t not in seen:
        seen.add(t)
        put("debugfs_cmd", b"\x00" + t.encode())
for profile in (1, 3):
    for w in ["+ 2 0 7", "- 2 0 1 200 2048", "+ 0 0 4 0 1; - 0 0 1 0x10 5\n", "- 1 0 3 max", "+ 99999 0 1",
              "  + 1 0 2 , - 1 0 0 4294967295 7;\n", "x 1 2 3", "+ 1 0", "- 1 0 3 0777 1 2", "+\t1\xa00\t3 08"]:
        put("debugfs_cmd", bytes([profile]) + w.encode("latin-1"))

for sel, writes in [(0, ["y", "Y\n", "n", "0x7\n", "07", "+5", "5\n", "0x", "08", " y", "4294967296"]),
                    (1, ["1000\n", "0", "0x3e8", "01750", "+1\n", "4294967295", "-1", "1e3"])]:
    for w in writes:
        put("control", bytes([sel]) + w.encode())


def serial(r, crlf):
    nl = "\r\n" if crlf else "\n"
    out = ["[    0.000000] Linux version " + r["kernel_release"], "Booting from ROM..=== lrugen begin uname",
           r["kernel_release"], "=== lrugen end uname"]

    def section(name, text):
        out.append("=== lrugen begin " + name)
        out.extend(text.rstrip("\n").split("\n") if text else [])
        out.append("=== lrugen end " + name)

    vm = list(r["vmstat_delta"].items())[:12]
    section("enabled", r["lru_gen_enabled"])
    section("vmstat-before", "\n".join(f"{k} 0" for k, _ in vm))
    replay = [f"lrugen-replay window {i} accesses {w['accesses']} misses {w['misses']} minor {w['minor']}"
              for i, w in enumerate(r["windows"][:4])]
    replay += ["lrugen-replay dump lru_gen 5000"] + r["lru_gen"].rstrip("\n").split("\n")[:8]
    replay += ["lrugen-replay dump-end", "lrugen-replay dump memory.current 5000",
               str(r.get("memory_current_at_end_of_replay", 0)), "lrugen-replay dump-end"]
    replay += [f"lrugen-replay total accesses {r['accesses']} misses {r['misses']} minor {r['minor']} sink 0",
               "lrugen-replay rc 0"]
    section("replay", "\n".join(replay))
    section("vmstat-after", "\n".join(f"{k} {v}" for k, v in vm))
    section("memory.stat", "\n".join(f"{k} {v}" for k, v in list(r["memory_stat"].items())[:10]))
    section("memory.events", "\n".join(f"{k} {v}" for k, v in r["memory_events"].items()))
    section("memory.current", str(r["memory_current"]))
    section("lru_gen", "\n".join(r["lru_gen"].split("\n")[:10]))
    out.append("=== lrugen done")
    return nl.join(out) + nl


for i, r in enumerate(runs[:6]):
    put("serial_log", serial(r, crlf=i % 2 == 0))
put("serial_log", "=== lrugen begin replay\nlrugen-replay rc 1\n=== lrugen end replay\n")
put("serial_log", "Kernel panic - not syncing: VFS: Unable to mount root fs\n")

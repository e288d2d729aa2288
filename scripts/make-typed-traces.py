#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# Write the small typed traces of crates/lrugen-cli/tests/data/ (deterministic; rerun to
# regenerate): small.lackey, a valgrind lackey trace of loads, stores, modifies and instruction
# fetches over 600 data pages and 40 code pages; mixed.index32, little-endian u32 page indices,
# half of them anon pages 0..600 and half file pages 0..600 (high bit set); small.index32, file
# page indices only (below).
import os, random, struct
d = os.path.join(os.path.dirname(__file__), "..", "crates", "lrugen-cli", "tests", "data")
r = random.Random(2026)
lines = ["==4242== Lackey, an example Valgrind tool"]
for _ in range(6000):
    if r.random() < 0.25:
        lines.append("I  %08x,4" % (0x400000 + r.randrange(40) * 4096 + r.randrange(1024) * 4))
    kind = r.choice("LLSM")
    lines.append(" %s %08x,8" % (kind, 0x10000000 + r.randrange(600) * 4096 + r.randrange(512) * 8))
with open(os.path.join(d, "small.lackey"), "w") as f:
    f.write("\n".join(lines) + "\n")
b = bytearray()
for _ in range(6000):
    v = r.randrange(600)
    if r.random() < 0.5:
        v |= 1 << 31
    b += struct.pack("<I", v)
with open(os.path.join(d, "mixed.index32"), "wb") as f:
    f.write(bytes(b))
# small.index32: file page indices only (no high bit), 12,000 references over 1,500 pages, 60 %
# of them on a hot set of the first 300 (its own generator, so the files above stay as they are)
r2 = random.Random(2027)
b = bytearray()
for _ in range(12000):
    v = r2.randrange(300) if r2.random() < 0.6 else r2.randrange(1500)
    b += struct.pack("<I", v)
with open(os.path.join(d, "small.index32"), "wb") as f:
    f.write(bytes(b))

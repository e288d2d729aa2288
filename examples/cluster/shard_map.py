#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run an lrugen experiment's cells in parallel from Python, then merge them.

Each task runs one slice of the matrix through the CLI (`lrugen exp FILE --shard K/N --out
OUT.slices/K`, the cells whose index modulo N is K); by default N is the number of cells, so
each task is one cell. The tasks are mapped with Ray, Dask or a local process pool, and
`lrugen exp merge` combines the slices into OUT: byte for byte what `lrugen exp FILE --out OUT`
writes (docs/experiments.md, "Sharding"). lrugen is called as a program; nothing to import.

    python3 examples/cluster/shard_map.py examples/fio-zipf.toml results/fio-zipf --backend ray
    python3 examples/cluster/shard_map.py examples/fio-zipf.toml results/fio-zipf --backend dask \\
        --address tcp://scheduler:8786
    python3 examples/cluster/shard_map.py examples/fio-zipf.toml results/fio-zipf   # local processes

With a cluster (Ray's `--address auto`, a Dask scheduler), the workers need `lrugen` (or
--lrugen's path) and this directory, under the same paths: the tasks run in the directory this
script was started in, so that the experiment's relative paths mean what they mean here.
"""

import argparse
import os
import shutil
import subprocess
import sys


def count_cells(lrugen, exp, cwd):
    """The number of cells of the experiment's matrix (`lrugen exp FILE --list-cells`)."""
    out = subprocess.run(
        [lrugen, "exp", exp, "--list-cells"], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout
    return len(out.splitlines()) - 1  # a header line, then one line a cell


def run_slice(lrugen, exp, out, k, n, cwd, threads=1):
    """Run slice k of n into OUT.slices/k (continuing an interrupted one); return its directory."""
    slice_dir = os.path.join(out + ".slices", str(k))
    cmd = [lrugen, "exp", exp, "--shard", f"{k}/{n}", "--out", slice_dir, "--threads", str(threads)]
    if os.path.isdir(os.path.join(cwd, slice_dir + ".partial")):
        cmd.append("--resume")
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"slice {k}/{n} failed ({done.returncode}): {done.stderr.strip()}")
    return slice_dir


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("exp", help="the experiment file (TOML)")
    ap.add_argument("out", help="the merged results' directory (slices go to OUT.slices/)")
    ap.add_argument("--backend", choices=["ray", "dask", "processes"], default="processes")
    ap.add_argument("--address", default=None, help="Ray's address ('auto') or the Dask scheduler's")
    ap.add_argument("--slices", type=int, default=None, help="N (default: one slice per cell)")
    ap.add_argument("--workers", type=int, default=os.cpu_count(), help="local processes")
    ap.add_argument("--lrugen", default=shutil.which("lrugen") or "lrugen", help="the lrugen binary")
    a = ap.parse_args()

    cwd = os.getcwd()
    n = a.slices or count_cells(a.lrugen, a.exp, cwd)
    args = [(a.lrugen, a.exp, a.out, k, n, cwd) for k in range(n)]
    if a.backend == "ray":
        import ray

        ray.init(address=a.address)
        task = ray.remote(num_cpus=1)(run_slice)
        dirs = ray.get([task.remote(*x) for x in args])
    elif a.backend == "dask":
        from dask.distributed import Client

        client = Client(a.address)  # None: a local cluster
        dirs = client.gather(client.map(run_slice, *zip(*args), pure=False))
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=a.workers) as pool:
            dirs = list(pool.map(run_slice, *zip(*args)))
    merged = subprocess.run([a.lrugen, "exp", "merge", *dirs, "--out", a.out], cwd=cwd)
    return merged.returncode


if __name__ == "__main__":
    sys.exit(main())

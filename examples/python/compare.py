# SPDX-License-Identifier: GPL-2.0-only
# %% [markdown]
# # MGLRU against the classic LRU and the reference caches, from Python
#
# A notebook as a script (cells `# %%`: Jupyter, VS Code, or `python examples/python/compare.py`
# from the repository root). Needs the `lrugen` package (docs/python.md), numpy and pandas.

# %%
import numpy as np
import pandas as pd

import lrugen

pd.set_option("display.width", 120)
TRACE = "examples/traces/synthetic.lis.zst"

# %% [markdown]
# ## One trace, four policies
# The same options as `lrugen run --trace ... --capacity 1000`; `json` is what `--json` prints.

# %%
res = lrugen.run(TRACE, capacity=1000, policy=["mglru", "classic", "lru", "opt"])
print(res)
df = res.dataframe()
print(df[["policy", "hit_ratio", "misses", "vmstat.workingset_refault_file", "memory_stat.pgscan_direct"]])

# %% [markdown]
# ## Over time: counters per window and MGLRU's generations
# `sample_every` samples the counters; `debugfs_every` captures `/sys/kernel/debug/lru_gen`.

# %%
res = lrugen.run(TRACE, capacity=1000, policy=["mglru", "classic"], sample_every=10_000, debugfs_every=10_000)
w = res.windows()
print(w.pivot(index="window", columns="policy", values="window_misses"))
g = res.lru_gen()
print(g[g.memcg == "/t"].pivot_table(index="step", columns="seq", values="file", fill_value=0))

# %% [markdown]
# ## Kernel profiles and switches, by the command line's names

# %%
names = lrugen.names()
print("profiles:", names["profiles"], "- mainline is", names["mainline"])
res = lrugen.run(
    workload="anon", size="16M", memcg_max="8M", swap="32M", accesses=100_000,
    policy=["mglru@6.1", "mglru@7.2", "mglru-fg", "classic"],
)
print(res.dataframe()[["policy", "profile", "misses", "vmstat.pswpout", "vmstat.pswpin"]])
off = lrugen.run(workload="anon", size="16M", memcg_max="8M", swap="32M", accesses=100_000,
                 policy="mglru", switch={"vma_has_recency": False})
print(off.policies[0], "(vma_has_recency=false):", off.json[0]["misses"], "misses")

# %% [markdown]
# ## A trace made in numpy, and the cache zoo
# A 1-D uint32/uint64 array of page ids is replayed in place (no copy), as a trace file is.

# %%
rng = np.random.default_rng(1)
hot = rng.integers(0, 500, 60_000)                    # a hot set ...
scan = np.arange(100_000, 160_000)                    # ... under one long scan
ids = np.where(np.arange(120_000) % 2 == 0, np.repeat(hot, 2), np.repeat(scan, 2))[:120_000].astype(np.uint64)
res = lrugen.run(ids, trace_name="hot+scan", capacity=1000, policy=["mglru", "classic", "lru"] + names["zoo"] + ["opt"])
print(res.dataframe()[["policy", "hit_ratio"]].sort_values("hit_ratio", ascending=False).to_string(index=False))

# %% [markdown]
# ## Latency in virtual time: fio jobs on an NVMe device

# %%
res = lrugen.run(workload="fio", size="64M", memcg_max="32M", accesses=100_000, jobs=4, cpus=2,
                 device="nvme", policy=["mglru", "classic"])
print(res.latencies()[["policy", "kind", "count", "mean_ns", "p50", "p99", "p99.9"]])

# %% [markdown]
# ## An experiment file: repetitions and confidence intervals

# %%
e = lrugen.experiment("examples/fio-uniform.toml")
s = e.summary()
print(s[s.metric == "hit_ratio"][["memcg.max", "policy", "mean", "ci95", "diff", "diff_ci95"]])

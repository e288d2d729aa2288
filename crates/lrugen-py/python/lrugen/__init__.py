# SPDX-License-Identifier: GPL-2.0-only
"""lrugen: Linux page reclaim (MGLRU, the classic LRU) on a simulated machine, from Python.

The functions here run what the ``lrugen`` command line runs, with its names::

    import lrugen
    res = lrugen.run("examples/traces/synthetic.lis.zst", policy=["mglru", "lru"], capacity=1000)
    res.dataframe()          # one row per policy: the counters of `lrugen run --json`
    res.json                 # exactly what `lrugen run --json` prints, as Python objects

Every keyword of :func:`run` is an option of ``lrugen run`` (``memcg_max="32M"`` is
``--memcg-max 32M``; :func:`run_help` prints them all), parsed by the command line's own parser,
so the policies (``mglru``, ``mglru@6.1``, ``mglru-fg``, ``classic``, ``lru``, ``opt`` and the
zoo's ``fifo``, ``sieve``, ``s3fifo``, ...), profiles, switches, workloads, devices and machine
settings are the command line's, and bad input raises ``ValueError`` (or ``OSError`` for a file
that cannot be read) with its message. A trace can be a file or a 1-D numpy array of page ids
(``uint32`` or ``uint64``), read in place. The same call with the same seed gives the same
results.

pandas is needed only by the methods that return DataFrames; numpy only to pass an array.
"""

from __future__ import annotations

import io
import json as _json
import os
import warnings
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _lrugen
from . import cache_ext

if TYPE_CHECKING:  # pragma: no cover
    import pandas  # type: ignore[import-untyped, unused-ignore]

__version__: str = _lrugen.__version__

__all__ = [
    "cache_ext",
    "run",
    "run_args",
    "run_help",
    "experiment",
    "names",
    "Results",
    "ExperimentResults",
]

# The keys of `lrugen run --json` whose values are counter maps, flattened into
# `<key>.<counter>` columns by `Results.dataframe`.
_COUNTER_MAPS = ("vmstat", "memory_stat", "memory_events")


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("lrugen: DataFrames need pandas (pip install pandas)") from e
    return pandas


def _words(name: str, value: Any) -> List[str]:
    """The command-line words of keyword ``name=value``: ``--name value``; a flag for True,
    nothing for False or None; repeated for a list; ``--name key=value`` per item of a dict."""
    flag = "--" + name.replace("_", "-")
    if value is None or value is False:
        return []
    if value is True:
        return [flag]
    if isinstance(value, Mapping):
        out: List[str] = []
        for k, v in value.items():
            v = str(v).lower() if isinstance(v, bool) else v
            out += [flag, f"{k}={v}"]
        return out
    if isinstance(value, (list, tuple)):
        return [w for v in value for w in _words(name, v)]
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    return [flag, str(value)]


class Results:
    """The results of one :func:`run`: one run per policy.

    ``json`` is exactly what ``lrugen run --json`` prints for the same options (a list of one
    dict per run), ``details`` what the command line prints only as text, per run in the same
    order (``series``: samples every ``sample_every`` steps; ``lru_gen``: the parsed
    ``/sys/kernel/debug/lru_gen`` captures; ``debugfs``: their text; ``engine``: throughput and
    latency of a run in virtual time).
    """

    def __init__(self, data: Dict[str, Any]) -> None:
        self.data: Dict[str, Any] = data
        self.json: List[Dict[str, Any]] = data["runs"]
        self.details: List[Dict[str, Any]] = data["details"]
        #: The workload, as the command line's table heads it.
        self.workload: str = data["workload"]
        #: The policies left out of the run, said so (the command line's note), or None.
        self.note: Optional[str] = data["note"]

    @property
    def policies(self) -> List[str]:
        """The runs' row names, in order (``mglru``, ``lru``, ``mglru-7.2``, ...)."""
        return [r["policy"] for r in self.json]

    def __getitem__(self, policy: str) -> Dict[str, Any]:
        """The run of ``policy`` (a row name of :attr:`policies`) as ``lrugen run --json``
        gives it."""
        for r in self.json:
            if r["policy"] == policy:
                return r
        raise KeyError(f"no run of policy {policy!r}: the runs are {', '.join(self.policies)}")

    def __len__(self) -> int:
        return len(self.json)

    def __repr__(self) -> str:
        rows = ", ".join(f"{r['policy']}: {r['hit_ratio']:.2%} hits" for r in self.json)
        return f"<lrugen.Results {self.workload}: {rows}>"

    def to_dict(self) -> Dict[str, Any]:
        """Everything, as plain Python objects (JSON-serializable)."""
        return self.data

    def dataframe(self) -> "pandas.DataFrame":
        """One row per run: the scalar fields of ``lrugen run --json`` (``policy``, ``profile``,
        ``workload``, ``capacity_pages``, ``accesses``, ``hits``, ``minor_faults``, ``misses``,
        ``hit_ratio``, ``memcg``, ``error``), then each counter of its ``vmstat``,
        ``memory_stat`` and ``memory_events`` as a column ``vmstat.pgscan_direct``, ... (nullable
        integers: missing, ``<NA>``, for the reference caches, which have no machine)."""
        pd = _pandas()
        rows = []
        for r in self.json:
            row = {k: v for k, v in r.items() if k not in _COUNTER_MAPS and not isinstance(v, (list, dict))}
            for m in _COUNTER_MAPS:
                for k, v in (r.get(m) or {}).items():
                    row[f"{m}.{k}"] = v
            rows.append(row)
        df = pd.DataFrame(rows)
        for c in df.columns:
            if c.split(".", 1)[0] in _COUNTER_MAPS:
                df[c] = df[c].astype("Int64")
        return df

    def windows(self) -> "pandas.DataFrame":
        """The counters per window of a run made with ``sample_every=N`` (kernel policies): one
        row per sample, every N steps and at the end, columns ``policy``, ``window`` (0, 1, ...),
        ``step``, ``time_ns`` (virtual), and ``hits``, ``misses``, ``refaults``
        (``workingset_refault_anon + _file``) counted from the start, ``usage`` (pages charged
        to the workload's memcg) and ``nr_gens`` (MGLRU's generations) at the sample; then
        ``window_steps``, ``window_hits``, ``window_misses``, ``window_refaults``: the same
        counted within the window."""
        pd = _pandas()
        rows = []
        for d in self.details:
            prev = {"step": 0, "hits": 0, "misses": 0, "refaults": 0}
            for i, s in enumerate(d["series"]):
                rows.append(
                    {
                        "policy": d["policy"],
                        "window": i,
                        "step": s["step"],
                        "time_ns": s["time_ns"],
                        "hits": s["hits"],
                        "misses": s["misses"],
                        "refaults": s["refaults"],
                        "usage": s["usage"],
                        "nr_gens": len(s["generations"]),
                        "window_steps": s["step"] - prev["step"],
                        "window_hits": s["hits"] - prev["hits"],
                        "window_misses": s["misses"] - prev["misses"],
                        "window_refaults": s["refaults"] - prev["refaults"],
                    }
                )
                prev = s
        cols = [
            "policy", "window", "step", "time_ns", "hits", "misses", "refaults", "usage", "nr_gens",
            "window_steps", "window_hits", "window_misses", "window_refaults",
        ]
        return pd.DataFrame(rows, columns=cols)

    def lru_gen(self) -> "pandas.DataFrame":
        """MGLRU's ``/sys/kernel/debug/lru_gen`` as a histogram per capture: one row per
        generation of each memcg and node, columns ``policy``, ``step`` (accesses before the
        capture), ``memcg_id``, ``memcg``, ``node``, ``seq``, ``age_ms``, ``anon``, ``file``
        (pages). Every MGLRU run is captured at its end; ``debugfs_every=N`` adds a capture every
        N accesses (one per window)."""
        pd = _pandas()
        rows = [dict(policy=d["policy"], **g) for d in self.details for g in d["lru_gen"]]
        cols = ["policy", "step", "memcg_id", "memcg", "node", "seq", "age_ms", "anon", "file"]
        return pd.DataFrame(rows, columns=cols)

    def latencies(self) -> "pandas.DataFrame":
        """Completion latencies of a run in virtual time (``jobs``, ``cpus``, ``device``, a fio
        job file, YCSB, memtier): one row per run and kind, ``clat`` for the page operations
        (fio's completion latency) and one per benchmark request kind (``READ``, ``UPDATE``,
        ``GET``, ...), columns ``policy``, ``kind``, ``count``, ``min_ns``, ``max_ns``,
        ``mean_ns``, ``stdev_ns`` and fio's percentiles ``p1`` ... ``p99.99`` (ns). Empty for
        runs without the engine."""
        pd = _pandas()
        rows = []
        for d in self.details:
            e = d.get("engine")
            if not e:
                continue
            kinds = [("clat", e["clat"])] + [(q["kind"], q["latency"]) for q in e["requests"]]
            for kind, lat in kinds:
                row = {"policy": d["policy"], "kind": kind}
                row.update({k: lat[k] for k in ("count", "min_ns", "max_ns", "mean_ns", "stdev_ns")})
                for p, v in lat["percentiles"]:
                    row[f"p{p:g}"] = v
                rows.append(row)
        return pd.DataFrame(rows)


class ExperimentResults:
    """The results of one :func:`experiment`: ``json`` is ``results.json`` as ``lrugen exp``
    writes it (the experiment, its ``cells`` and the ``summaries`` of each point, policy and
    metric); :meth:`cells` and :meth:`summary` are ``results.csv`` and ``summary.csv`` as
    DataFrames."""

    def __init__(self, data: Dict[str, Any]) -> None:
        self.json: Dict[str, Any] = data["results"]
        #: The text of ``results.csv``.
        self.results_csv: str = data["results_csv"]
        #: The text of ``summary.csv``.
        self.summary_csv: str = data["summary_csv"]

    def __repr__(self) -> str:
        return f"<lrugen.ExperimentResults {self.json['experiment']['name']}: {len(self.json['cells'])} cells>"

    def cells(self) -> "pandas.DataFrame":
        """One row per cell (sweep point x policy x repetition), as ``results.csv``: ``cell``,
        ``point``, one column per swept parameter, ``policy``, ``kind``, ``profile``,
        ``repetition``, ``seed``, ``error``, then the metrics (``hit_ratio``, ``misses``,
        ``pgscan``, ... empty where a policy has none)."""
        pd = _pandas()
        return pd.read_csv(io.StringIO(self.results_csv))

    def summary(self) -> "pandas.DataFrame":
        """One row per point, policy and metric, as ``summary.csv``: ``n``, ``mean``, ``sd``,
        ``ci95``, and the difference from the baseline policy with its Welch 95% confidence
        interval (``diff``, ``diff_ci95``, ``df``, ``p``, ``rel_pct``, ``rel_ci95_pct``)."""
        pd = _pandas()
        return pd.read_csv(io.StringIO(self.summary_csv))


def run_args(
    args: Sequence[str],
    trace_ids: Any = None,
    sample_every: Optional[int] = None,
) -> Results:
    """Run ``lrugen run`` with its options as words, e.g.
    ``run_args(["--trace", "OLTP.lis.zst", "--capacity", "1000", "--policy", "mglru,lru"])``.

    ``trace_ids``: a 1-D numpy array of page ids (uint32 or uint64) replayed in place of reading
    ``--trace``, which then only names it. ``sample_every``: a sample of the counters every that
    many steps (:meth:`Results.windows`).
    """
    data = _json.loads(_lrugen.run([str(a) for a in args], trace_ids, sample_every))
    res = Results(data)
    for d in res.details:
        if d.get("debugfs_write_error"):
            warnings.warn(f"debugfs_write: {d['policy']}: {d['debugfs_write_error']}", RuntimeWarning, stacklevel=2)
    return res


def run(
    trace: Any = None,
    *,
    policy: Union[str, Iterable[Any], Any, None] = None,
    sample_every: Optional[int] = None,
    trace_name: str = "array",
    args: Sequence[str] = (),
    **options: Any,
) -> Results:
    """Run a trace or a workload under one or more policies, as ``lrugen run`` does.

    ``trace``: a trace file (any format ``lrugen run --trace`` reads, zstd-compressed or not), or
    a 1-D numpy array of page ids (``uint32`` or ``uint64``), read in place without a copy and
    named ``trace_name``. Without one, the workload of ``workload=`` (``file-read``, ``anon``,
    ``fio``, ``ycsb``, ``memtier``, or a preset: ``kernel-build``, ``oltp``, ``many-apps``,
    ``sort-shuffle``).

    ``policy``: a name or a list of names: ``mglru``, ``mglru@PROFILE`` (``mglru@6.1``),
    ``mglru-fg``, ``classic``, ``lru``, ``opt``, and the zoo's (:func:`names`). Default: as the
    command line, ``mglru``, ``classic``, ``lru`` and ``opt``. A policy can also be an object
    with cache_ext's hooks (:class:`lrugen.cache_ext.Policy`): it runs in the kernel model's
    page cache over the classic LRU, as ``cache_ext:<its name>``, in the order given.

    ``sample_every``: sample the counters every that many steps, for :meth:`Results.windows`
    (kernel policies).

    Every other keyword is an option of ``lrugen run`` with ``_`` for ``-``: ``capacity=1000``,
    ``memcg_max="32M"``, ``memory="1G"``, ``swap="128M"``, ``swappiness=100``,
    ``profile="6.1"``, ``switch={"vma_has_recency": False}``, ``kmem="kernel"``, ``seed=2``,
    ``size="64M"``, ``dist="zipf:0.9"``, ``accesses=100000``, ``jobs=4``, ``device="nvme"``,
    ``debugfs_every=100000``, ``ycsb="b"``, ``ycsb_property={"readproportion": 0.9}``,
    ``format="arc"``, ... A value True is a flag (``no_hw_young=True``), False or None leaves the
    option out, a list repeats it. ``args``: more words, as the command line takes them.
    :func:`run_help` lists every option.

    Raises ``ValueError`` for bad input (an unknown policy or option, a malformed trace line, a
    bad array) and ``OSError`` (``FileNotFoundError``, ...) for a file that cannot be read, with
    the command line's message.
    """
    words: List[str] = []
    ids = None
    if trace is not None:
        if isinstance(trace, (str, bytes, os.PathLike)):
            words += _words("trace", os.fsdecode(trace))
        else:
            ids = trace
            words += ["--trace", trace_name]
    if policy is None:
        policies: List[Any] = []
    elif isinstance(policy, str) or hasattr(policy, "evict_folios"):
        policies = [policy]
    else:
        policies = list(policy)
    named = [p for p in policies if isinstance(p, str)]
    own = [p for p in policies if not isinstance(p, str)]
    for name, value in options.items():
        words += _words(name, value)
    words += [str(a) for a in args]
    if not own:
        return run_args(words + _words("policy", named), ids, sample_every)
    # cache_ext policies written in Python (lrugen.cache_ext): one run each, over the classic
    # LRU, in the order given, beside the named policies' runs
    runs: Dict[int, Dict[str, Any]] = {}
    if named:
        data = run_args(words + _words("policy", named), ids, sample_every).data
        for p, r, d in zip(named, data["runs"], data["details"]):
            runs[policies.index(p)] = {"data": data, "run": r, "details": d}
    for p in own:
        data = _json.loads(
            _lrugen.run_cache_ext([str(a) for a in words + ["--policy", "classic"]], p, ids, sample_every)
        )
        runs[next(i for i, q in enumerate(policies) if q is p)] = {
            "data": data,
            "run": data["runs"][0],
            "details": data["details"][0],
        }
    order = [runs[i] for i in sorted(runs)]
    merged = dict(order[0]["data"])
    merged["runs"] = [r["run"] for r in order]
    merged["details"] = [r["details"] for r in order]
    return Results(merged)


def run_help() -> str:
    """The options :func:`run` takes: ``lrugen run --help``."""
    return _lrugen.run_help()


def experiment(
    path: Union[str, "os.PathLike[str]"],
    *,
    threads: Optional[int] = None,
    full: bool = False,
    memory_budget: Optional[str] = None,
) -> ExperimentResults:
    """Run an experiment file (TOML, docs/experiments.md) as ``lrugen exp`` does, without an
    output directory: ``threads`` worker threads (default one per core; the results do not
    depend on it), ``full`` for its ``[full]`` table. Returns what ``results.json``,
    ``results.csv`` and ``summary.csv`` would hold."""
    return ExperimentResults(_json.loads(_lrugen.experiment(os.fspath(path), threads, full, memory_budget)))


def names() -> Dict[str, Any]:
    """The names the options take, from the library's own lists: ``policies`` (mglru, classic,
    lru, opt), ``zoo`` (the cache zoo's policies), ``cache_ext`` (cache_ext's example policies on
    the kernel model, docs/cache-ext.md), ``profiles`` and ``mainline`` (the preset it
    stands for), ``switches`` (each switch's value in each preset), ``trace_formats``,
    ``workload_presets``."""
    out: Dict[str, Any] = _json.loads(_lrugen.names())
    return out

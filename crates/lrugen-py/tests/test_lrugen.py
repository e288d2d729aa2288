# SPDX-License-Identifier: GPL-2.0-only
"""The Python package against the command line: the same options give the same runs, as
`lrugen run --json` prints them, and the DataFrames hold exactly those values."""

import json
import re

import numpy as np
import pandas as pd
import pytest

import lrugen

SYN = "examples/traces/synthetic.lis.zst"
MAPS = ("vmstat", "memory_stat", "memory_events")


@pytest.fixture(scope="module")
def syn(repo):
    return repo / SYN


@pytest.fixture(scope="module")
def ids():
    """A reproducible Zipf-like stream of 30,000 page ids over 5,000 pages."""
    rng = np.random.default_rng(7)
    return (rng.zipf(1.2, 30_000) % 5_000).astype(np.uint64)


@pytest.fixture(scope="module")
def ids_file(ids, tmp_path_factory):
    """The same ids as a flat little-endian u64 index file, for the command line."""
    f = tmp_path_factory.mktemp("ids") / "ids.index64"
    ids.astype("<u8").tofile(f)
    return f


def test_trace_under_mglru_and_lru_equals_the_cli_json(syn, cli_json):
    want = cli_json("--trace", syn, "--capacity", "1000", "--policy", "mglru,lru")
    res = lrugen.run(syn, policy=["mglru", "lru"], capacity=1000)
    assert res.json == want
    assert res.policies == ["mglru", "lru"]
    assert res["lru"] == want[1]
    assert res.workload == "trace synthetic.lis.zst"
    # the runs differ (MGLRU on the machine, LRU a plain cache), and both count every access
    assert want[0]["hits"] != want[1]["hits"]
    assert want[0]["vmstat"] is not None and want[1]["vmstat"] is None


def test_dataframe_columns_and_values_are_the_cli_json(syn, cli_json):
    want = cli_json("--trace", syn, "--capacity", "1000", "--policy", "mglru,lru")
    df = lrugen.run(syn, policy="mglru,lru", capacity=1000).dataframe()
    scalars = [k for k, v in want[0].items() if k not in MAPS and not isinstance(v, (list, dict))]
    counters = [f"{m}.{k}" for m in MAPS for k in want[0][m]]
    assert list(df.columns) == scalars + counters
    assert "vmstat.pgscan_direct" in df.columns and "memory_stat.nr_file_pages" in df.columns
    assert len(df) == 2 and list(df["policy"]) == ["mglru", "lru"]
    for i, run in enumerate(want):
        for k in scalars:
            if run[k] is None:
                assert pd.isna(df.at[i, k]), k
            else:
                assert df.at[i, k] == run[k], k
        for m in MAPS:
            for k in want[0][m]:
                v = df.at[i, f"{m}.{k}"]
                if run[m] is None:
                    assert v is pd.NA, (m, k)
                else:
                    assert v == run[m][k], (m, k)
    assert all(str(df[c].dtype) == "Int64" for c in counters)
    # accesses = hits + minor faults + misses, as the README says
    assert (df.accesses == df.hits + df.minor_faults + df.misses).all()


def test_numpy_array_as_trace_equals_the_cli_on_the_same_ids(ids, ids_file, cli_json):
    want = cli_json("--trace", ids_file, "--capacity", "500", "--policy", "mglru,lru,opt")
    got = lrugen.run(ids, trace_name="ids.index64", capacity=500, policy=["mglru", "lru", "opt"])
    assert got.json == want
    assert [r["accesses"] for r in want] == [len(ids)] * 3
    # uint32, read-only and memory-mapped arrays are read the same way
    assert lrugen.run(ids.astype(np.uint32), trace_name="ids.index64", capacity=500, policy="mglru,lru,opt").json == want
    ro = ids.copy()
    ro.flags.writeable = False
    assert lrugen.run(ro, trace_name="ids.index64", capacity=500, policy="mglru,lru,opt").json == want
    mm = np.memmap(ids_file, dtype="<u8", mode="r")
    assert lrugen.run(mm, trace_name="ids.index64", capacity=500, policy="mglru,lru,opt").json == want
    # read in place, not changed
    assert (ids == np.asarray(mm)).all()


def test_array_named_by_default(ids):
    assert lrugen.run(ids, capacity=500, policy="lru").workload == "trace array"


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.arange(100, dtype=np.float64), "expected dtype uint32 or uint64 (little-endian), found float64"),
        (np.arange(100, dtype=np.int64), "found int64"),
        (np.arange(100, dtype=">u8"), "found >u8"),
        (np.zeros((10, 10), dtype=np.uint32), "expected a 1-D array, found 2 dimensions [10, 10]"),
        (np.arange(100, dtype=np.uint64)[::2], "expected a contiguous array (strides (8,)), found strides [16]"),
        (np.array([], dtype=np.uint32), "the trace holds no request"),
        ([1, 2, 3], "expected a numpy array of page ids (uint32 or uint64), found list"),
    ],
)
def test_bad_arrays_raise_value_error(bad, message):
    with pytest.raises(ValueError) as e:
        lrugen.run(bad, capacity=10, policy="lru")
    assert str(e.value).startswith("trace array: ")
    assert message in str(e.value)


def test_array_refuses_a_format(ids):
    with pytest.raises(ValueError, match="a trace given as page ids"):
        lrugen.run(ids, capacity=10, policy="lru", format="arc")


def test_errors_carry_the_cli_message(syn, tmp_path, cli_error):
    # an unknown policy
    want = cli_error("--trace", syn, "--policy", "lfu")
    with pytest.raises(ValueError) as e:
        lrugen.run(syn, policy="lfu")
    assert str(e.value) == want and "unknown policy 'lfu'" in want
    # an unknown profile
    want = cli_error("--trace", syn, "--profile", "5.4")
    with pytest.raises(ValueError) as e:
        lrugen.run(syn, profile="5.4")
    assert str(e.value) == want
    # a malformed trace line
    bad = tmp_path / "bad.lis"
    bad.write_text("1 1 0 0\n7 x 0 0\n")
    want = cli_error("--trace", bad, "--policy", "lru")
    with pytest.raises(ValueError) as e:
        lrugen.run(bad, policy="lru")
    assert str(e.value) == want and "bad.lis" in want
    # a missing file: FileNotFoundError, with the same message
    missing = tmp_path / "missing.lis"
    want = cli_error("--trace", missing)
    with pytest.raises(FileNotFoundError) as e:
        lrugen.run(missing)
    assert e.value.args[1] == want and e.value.errno == 2
    # a negative count, refused by the command line's own option parser
    with pytest.raises(ValueError, match="invalid value '-5' for '--capacity <PAGES>'"):
        lrugen.run(syn, capacity=-5)
    # an option lrugen run does not have
    with pytest.raises(ValueError, match="unexpected argument '--bogus'"):
        lrugen.run(syn, bogus=1)


def test_same_call_and_seed_same_results_other_seed_other_results(cli_json):
    opts = dict(workload="file-read", files=2, size="2M", accesses=20_000, capacity=256, policy="mglru,classic,lru")
    a = lrugen.run(**opts, seed=5)
    b = lrugen.run(**opts, seed=5)
    c = lrugen.run(**opts, seed=6)
    assert a.json == b.json
    assert [r["hits"] for r in a.json] != [r["hits"] for r in c.json]
    assert c.json == cli_json(
        "--workload", "file-read", "--files", "2", "--size", "2M", "--accesses", "20000",
        "--capacity", "256", "--policy", "mglru,classic,lru", "--seed", "6",
    )


def test_profiles_switches_and_machine_settings_by_the_cli_names(cli_json):
    want = cli_json(
        "--workload", "anon", "--size", "8M", "--memcg-max", "4M", "--swap", "16M", "--memory", "64M",
        "--swappiness", "100", "--accesses", "20000", "--policy", "mglru@6.1,mglru-fg,classic",
        "--switch", "vma_has_recency=false", "--no-hw-young",
    )
    res = lrugen.run(
        workload="anon", size="8M", memcg_max="4M", swap="16M", memory="64M", swappiness=100,
        accesses=20_000, policy=["mglru@6.1", "mglru-fg", "classic"],
        switch={"vma_has_recency": False}, no_hw_young=True,
    )
    assert res.json == want
    assert res.policies == [r["policy"] for r in want]
    assert res.policies[0].startswith("mglru-6.1")
    assert want[0]["vmstat"]["pswpout"] > 0  # the memcg is half the region: anon is swapped


def test_every_zoo_policy_and_profile_by_name(ids, ids_file, cli_json):
    names = lrugen.names()
    assert {"mglru", "classic", "lru", "opt"} <= set(names["policies"])
    assert {"fifo", "clock", "sieve", "s3fifo", "arc", "2q", "lirs"} <= set(names["zoo"])
    assert names["mainline"] in names["profiles"] and "mainline" in names["profiles"]
    assert "vma_has_recency" in names["switches"] and names["switches"]["vma_has_recency"]["6.1"] is False
    assert "index64" in names["trace_formats"] and "kernel-build" in names["workload_presets"]
    zoo = ",".join(names["zoo"])
    want = cli_json("--trace", ids_file, "--capacity", "500", "--policy", zoo)
    got = lrugen.run(ids, trace_name="ids.index64", capacity=500, policy=names["zoo"])
    assert got.json == want and got.policies == names["zoo"]
    profiles = ",".join(f"mglru@{p}" for p in names["profiles"] if p != "mainline")
    want = cli_json("--trace", ids_file, "--capacity", "500", "--policy", profiles)
    assert lrugen.run(ids, trace_name="ids.index64", capacity=500, policy=profiles).json == want


def test_cache_ext_policies_by_name_equal_the_cli(cli_json):
    ext = lrugen.names()["cache_ext"]
    assert {"cache_ext:mru", "cache_ext:s3fifo", "cache_ext:lhd", "cache_ext:get_scan"} <= set(ext)
    policies = ["classic"] + ext
    want = cli_json(
        "--workload", "file-read", "--files", "2", "--size", "4M", "--memcg-max", "3M",
        "--accesses", "20000", "--policy", ",".join(policies),
    )
    res = lrugen.run(
        workload="file-read", files=2, size="4M", memcg_max="3M", accesses=20_000, policy=policies,
    )
    assert res.json == want and res.policies == policies
    # under pressure, the file pages each policy chose were reclaimed
    assert all(r["vmstat"]["pgsteal_file"] > 0 for r in want)
    with pytest.raises(ValueError, match="cache_ext:get_scan"):
        lrugen.run(workload="file-read", accesses=10, policy="cache_ext:nope")


def test_counters_per_window(syn, cli_json):
    want = cli_json("--trace", syn, "--capacity", "1000", "--policy", "mglru,classic")
    res = lrugen.run(syn, policy=["mglru", "classic"], capacity=1000, sample_every=10_000)
    assert res.json == want  # sampling changes nothing
    w = res.windows()
    for run in want:
        rows = w[w.policy == run["policy"]]
        # every 10,000 steps (a trace's steps are its accesses) and at the end
        assert list(rows.step) == [10_000, 20_000, 30_000, 40_000, run["accesses"]]
        assert list(rows.window) == [0, 1, 2, 3, 4]
        assert rows.window_steps.sum() == run["accesses"]
        assert rows.window_hits.sum() == run["hits"] and rows.hits.iloc[-1] == run["hits"]
        assert rows.window_misses.sum() == run["misses"]
        vm = run["vmstat"]
        assert rows.window_refaults.sum() == vm["workingset_refault_anon"] + vm["workingset_refault_file"]
        ms = run["memory_stat"]
        assert rows.usage.iloc[-1] == ms["nr_file_pages"] + ms["nr_anon_pages"]
        assert (rows.window_hits + rows.window_misses == rows.window_steps).all()
    assert (w[w.policy == "mglru"].nr_gens >= 2).all() and (w[w.policy == "classic"].nr_gens == 0).all()


def test_lru_gen_histograms_per_window_are_the_cli_captures(syn, cli):
    code, out, err = cli(
        "run", "--trace", syn, "--capacity", "1000", "--policy", "mglru", "--debugfs", "--debugfs-every", "20000"
    )
    assert code == 0, err
    res = lrugen.run(syn, policy="mglru", capacity=1000, debugfs_every=20_000)
    caps = res.details[0]["debugfs"]
    assert [c["step"] for c in caps] == [20_000, 40_000, res.json[0]["accesses"]]
    df = res.lru_gen()
    assert list(df.columns) == ["policy", "step", "memcg_id", "memcg", "node", "seq", "age_ms", "anon", "file"]
    for c in caps:
        assert f"--- mglru: /sys/kernel/debug/lru_gen after {c['step']} accesses ---\n{c['lru_gen']}" in out
        assert f"--- mglru: /sys/kernel/debug/lru_gen_full after {c['step']} accesses ---\n{c['lru_gen_full']}" in out
        # each row is a generation line of the text: seq, age, anon and file pages
        lines = {tuple(map(int, l.split())) for l in c["lru_gen"].splitlines() if re.match(r"^\s+\d+\s+\d+\s+\d+\s+\d+\s*$", l)}
        rows = df[df.step == c["step"]]
        assert {(r.seq, r.age_ms, r.anon, r.file) for r in rows.itertuples()} == lines
        assert set(rows.memcg) == {"/", "/t"}
    # the workload memcg's histogram is the generations the run's samples record at the same steps
    series = lrugen.run(syn, policy="mglru", capacity=1000, debugfs_every=20_000, sample_every=20_000).details[0]["series"]
    assert [s["step"] for s in series] == [c["step"] for c in caps]
    for s in series:
        rows = df[(df.step == s["step"]) & (df.memcg == "/t")]
        hist = [(r.seq, r.anon, r.file) for r in rows.itertuples()]
        assert hist == [tuple(g) for g in s["generations"]]
        assert sum(a + f for _, a, f in hist) > 900  # the memcg's 1,000 pages, but a batch not yet added


def test_latencies_of_a_run_in_virtual_time_are_the_cli_report(cli):
    args = ["--workload", "fio", "--size", "8M", "--memcg-max", "4M", "--accesses", "20000", "--jobs", "2",
            "--device", "nvme", "--policy", "mglru"]
    code, out, err = cli("run", *args)
    assert code == 0, err
    res = lrugen.run(workload="fio", size="8M", memcg_max="4M", accesses=20_000, jobs=2, device="nvme", policy="mglru")
    lat = res.latencies()
    assert list(lat.kind) == ["clat"]
    row = lat.iloc[0]
    assert row["count"] == res.json[0]["accesses"] == 40_000
    # fio's percentiles as the command line prints them (usec, truncated)
    printed = {float(p): int(v) for p, v in re.findall(r"(\d+\.\d+)th=\[\s*(\d+)\]", out)}
    assert len(printed) == 17
    for p, us in printed.items():
        assert row[f"p{p:g}"] // 1000 == us, p
    m = re.search(r"clat \(usec\): min=(\d+), max=(\d+)", out)
    assert (row["min_ns"] // 1000, row["max_ns"] // 1000) == (int(m[1]), int(m[2]))
    assert row["min_ns"] <= row["p50"] <= row["p99"] <= row["max_ns"]
    # a run without the engine has none
    assert lrugen.run(workload="file-read", size="1M", files=1, accesses=1000, policy="lru").latencies().empty


def test_experiment_file_equals_lrugen_exp(repo, cli, tmp_path, monkeypatch):
    out = tmp_path / "out"
    code, _, err = cli("exp", "examples/fio-uniform.toml", "--out", out, "--no-plots", "--threads", "2")
    assert code == 0, err
    monkeypatch.chdir(repo)  # the file as the command line was given it: results.json records it
    e = lrugen.experiment("examples/fio-uniform.toml", threads=2)
    assert e.json == json.loads((out / "results.json").read_text())
    assert e.results_csv == (out / "results.csv").read_text()
    assert e.summary_csv == (out / "summary.csv").read_text()
    cells = e.cells()
    assert len(cells) == 2 * 4 * 3  # sweep points x policies x repetitions
    assert list(cells.columns) == (out / "results.csv").read_text().splitlines()[0].split(",")
    first = e.json["cells"][0]
    assert cells.loc[0, "hit_ratio"] == first["metrics"]["hit_ratio"]
    assert cells.loc[0, "misses"] == first["metrics"]["misses"]
    s = e.summary()
    assert {"point", "policy", "metric", "mean", "ci95", "diff", "diff_ci95"} <= set(s.columns)
    # threads do not change the results
    assert lrugen.experiment("examples/fio-uniform.toml", threads=1).json == e.json


def test_experiment_errors_carry_the_cli_message(tmp_path, cli):
    missing = tmp_path / "none.toml"
    with pytest.raises(FileNotFoundError) as e:
        lrugen.experiment(missing)
    code, _, err = cli("exp", missing, "--out", tmp_path / "o1")
    assert code != 0 and err == f"lrugen: error: {e.value.args[1]}\n"
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\npolicies = ["lfu"]\n[workload]\nkind = "file-read"\nfiles = 1\nfile_pages = "1M"\naccesses = 1000\n')
    with pytest.raises(ValueError) as e:
        lrugen.experiment(bad)
    code, _, err = cli("exp", bad, "--out", tmp_path / "o2")
    assert code != 0 and err == f"lrugen: error: {e.value}\n" and "lfu" in str(e.value)


def test_help_is_the_cli_help(cli):
    code, out, _ = cli("run", "--help")
    assert code == 0
    ours = lrugen.run_help()
    assert ours[ours.index("Options:"):].rstrip() == out[out.index("Options:"):].rstrip()
    assert "--memcg-max <SIZE>" in ours


def test_args_words_and_keywords_agree(syn):
    a = lrugen.run_args(["--trace", str(syn), "--capacity", "1000", "--policy", "mglru,lru"])
    b = lrugen.run(syn, capacity=1000, args=["--policy", "mglru,lru"])
    assert a.json == b.json

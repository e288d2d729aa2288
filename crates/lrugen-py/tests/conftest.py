# SPDX-License-Identifier: GPL-2.0-only
"""Fixtures of the Python package's tests: the repository, and the `lrugen` command line whose
JSON the package's results are checked against (`$LRUGEN_BIN`, else target/release/lrugen, else
target/debug/lrugen)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def cli_bin() -> str:
    given = os.environ.get("LRUGEN_BIN")
    candidates = [Path(given)] if given else [REPO / "target/release/lrugen", REPO / "target/debug/lrugen"]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    pytest.fail(
        f"the lrugen command line is needed to compare with: none of {', '.join(map(str, candidates))} "
        "(cargo build --release -p lrugen-cli, or set LRUGEN_BIN)"
    )


@pytest.fixture(scope="session")
def cli(cli_bin):
    """Run `lrugen ARGS...` in the repository: (exit code, stdout, stderr)."""

    def run(*args: str):
        p = subprocess.run([cli_bin, *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=600)
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    """`lrugen run ARGS... --json`, decoded; the run must succeed."""

    def run(*args: str):
        code, out, err = cli("run", *args, "--json")
        assert code == 0, err
        return json.loads(out)

    return run


@pytest.fixture(scope="session")
def cli_error(cli):
    """The message of a `lrugen run ARGS...` that fails (stderr's `lrugen: error: MESSAGE`)."""

    def run(*args: str) -> str:
        code, _, err = cli("run", *args)
        assert code != 0, "expected the command line to refuse it"
        prefix = "lrugen: error: "
        assert err.startswith(prefix), err
        return err[len(prefix):].rstrip("\n")

    return run

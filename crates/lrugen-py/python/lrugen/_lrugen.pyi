# SPDX-License-Identifier: GPL-2.0-only
"""Type stubs of the extension module `lrugen._lrugen` (crates/lrugen-py/src/lib.rs). Use the
package's functions (`lrugen.run`, ...): these return JSON text that they decode."""

from typing import Any, List, Optional

__version__: str

def run(args: List[str], trace_ids: Optional[Any] = None, sample_every: Optional[int] = None) -> str:
    """`lrugen run` with its options as words; `trace_ids`, a 1-D uint32/uint64 array of page ids
    read in place for `--trace`. JSON text: `runs` (as `lrugen run --json`), `details`,
    `workload`, `memory_pages`, `memcg_max_pages`, `swap_pages`, `swappiness`, `note`."""

def run_help() -> str:
    """`lrugen run --help`."""

def experiment(path: str, threads: Optional[int] = None, full: bool = False, memory_budget: Optional[str] = None) -> str:
    """`lrugen exp FILE` without an output directory: JSON text of `results` (`results.json`),
    `results_csv` and `summary_csv` (the two files' texts)."""

def names() -> str:
    """The names the options take, as JSON text."""

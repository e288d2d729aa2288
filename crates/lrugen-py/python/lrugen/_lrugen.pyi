# SPDX-License-Identifier: GPL-2.0-only
"""Type stubs of the extension module `lrugen._lrugen` (crates/lrugen-py/src/lib.rs). Use the
package's functions (`lrugen.run`, ...): these return JSON text that they decode."""

from typing import Any, Callable, List, Optional

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

def run_cache_ext(args: List[str], policy: Any, trace_ids: Optional[Any] = None, sample_every: Optional[int] = None) -> str:
    """`run` with a cache_ext-shaped policy object (`lrugen.cache_ext.Policy`) choosing the file
    pages the workload's memcg evicts, over the classic LRU (`args` must plan `--policy classic`).
    An exception a hook raised is raised here. JSON text as `run`'s."""

CACHE_EXT_CONTINUE: int
CACHE_EXT_EVICT: int
CACHE_EXT_STOP: int
CACHE_EXT_DONE_ITER: int
CACHE_EXT_MAX_ITER_REACHED: int
CACHE_EXT_EVICT_ARRAY_FILLED: int

class Folio:
    """A folio's fields when it was handed over (`struct folio` as cache_ext reads it)."""
    id: int
    ino: int
    index: int
    file_pages: int
    uptodate: bool
    lru: bool
    dirty: bool
    writeback: bool
    locked: bool
    last_page_in_file: bool

class Ectx:
    """One eviction request (`struct cache_ext_eviction_ctx`), valid during `evict_folios`."""
    @property
    def request_nr_folios_to_evict(self) -> int: ...
    @property
    def nr_folios_to_evict(self) -> int: ...
    def push(self, folio: int, score: int = 0) -> bool: ...
    def candidates(self) -> List[int]: ...

class Ctx:
    """cache_ext's list kfuncs and helpers, valid during the hook call that received it. List
    functions return 0 or a negative errno."""
    def new_list(self, memcg: int) -> int: ...
    def list_add(self, list: int, folio: int) -> int: ...
    def list_add_tail(self, list: int, folio: int) -> int: ...
    def list_move(self, list: int, folio: int, tail: bool = False) -> int: ...
    def list_del(self, folio: int) -> int: ...
    def list_len(self, list: int) -> int: ...
    def folio(self, id: int) -> Folio: ...
    def is_valid(self, id: int) -> bool: ...
    def current_task(self) -> Optional[int]: ...
    def memcg_pages(self, memcg: int) -> int: ...
    def ktime_ns(self) -> int: ...
    def nr_folios(self) -> int: ...
    def list_iterate(
        self,
        memcg: int,
        list: int,
        fn_: Callable[[int, Folio], int],
        ectx: Ectx,
        continue_list: Optional[int] = None,
        continue_mode: str = "skip",
        evict_list: Optional[int] = None,
        evict_mode: str = "skip",
    ) -> int: ...
    def list_sample(self, memcg: int, list: int, score_fn: Callable[[Folio], int], ectx: Ectx, sample_size: int = 1) -> int: ...

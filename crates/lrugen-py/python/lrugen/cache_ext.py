# SPDX-License-Identifier: GPL-2.0-only
"""cache_ext-shaped page-cache eviction policies written in Python (docs/cache-ext.md).

cache_ext (SOSP 2025) lets an eBPF program choose which page-cache folios a cgroup evicts,
through a few hooks and lists the program owns. A :class:`Policy` here has the same hooks and
calls the same list functions on a :class:`Ctx`, so a policy prototyped in Python ports to
cache_ext (and to lrugen's Rust trait ``reclaim::ext::CacheExtOps``) and back. It runs inside
the kernel model's page cache, over the classic LRU (anon memory, other memcgs, and the
fallback when the policy proposes nothing valid), with the kernel's reclaim, shadow entries,
refaults and counters::

    import lrugen
    from lrugen import cache_ext

    class Mru(cache_ext.Policy):
        name = "py_mru"

        def init(self, ctx, memcg):
            self.list = ctx.new_list(memcg)

        def folio_added(self, ctx, folio):
            ctx.list_add(self.list, folio)        # the head: most recent first

        def folio_accessed(self, ctx, folio):
            ctx.list_move(self.list, folio)       # back to the head

        def evict_folios(self, ctx, ectx, memcg):
            ctx.list_iterate(memcg, self.list, lambda i, f: cache_ext.EVICT, ectx)

    res = lrugen.run(policy=[Mru(), "classic"], workload="file-read", memcg_max="16M")

Hooks (every one but ``init`` and ``evict_folios`` optional):

* ``init(ctx, memcg)``: create the lists (``ctx.new_list(memcg)``); raising refuses the policy.
* ``folio_added(ctx, folio)``: a folio (its id) joined the memcg's page cache, on no list yet.
* ``folio_accessed(ctx, folio)``: ``folio_mark_accessed`` (a buffered read or write).
* ``folio_evicted(ctx, folio)``: it is leaving the page cache; the kernel takes it off its list
  after the hook.
* ``evict_folios(ctx, ectx, memcg)``: propose up to ``ectx.request_nr_folios_to_evict``
  candidates, with ``ectx.push(folio)`` or the list functions.

A :class:`Ctx` is valid only during the hook call that received it. Inside a ``list_iterate``
or ``list_sample`` callback only the :class:`Folio` given may be read. List functions return
0 or a negative errno, as cache_ext's kfuncs do. An exception raised by a hook ends the run
with that exception. Each hook is a Python call, so a run is about as fast as the Python code
in it: prototype on small workloads.
"""

from __future__ import annotations

from typing import Any

from . import _lrugen

#: ``list_iterate`` callback answers.
CONTINUE: int = _lrugen.CACHE_EXT_CONTINUE
EVICT: int = _lrugen.CACHE_EXT_EVICT
STOP: int = _lrugen.CACHE_EXT_STOP
#: ``list_iterate`` results.
DONE_ITER: int = _lrugen.CACHE_EXT_DONE_ITER
MAX_ITER_REACHED: int = _lrugen.CACHE_EXT_MAX_ITER_REACHED
EVICT_ARRAY_FILLED: int = _lrugen.CACHE_EXT_EVICT_ARRAY_FILLED

Ctx = _lrugen.Ctx
Ectx = _lrugen.Ectx
Folio = _lrugen.Folio

__all__ = [
    "Policy",
    "Ctx",
    "Ectx",
    "Folio",
    "CONTINUE",
    "EVICT",
    "STOP",
    "DONE_ITER",
    "MAX_ITER_REACHED",
    "EVICT_ARRAY_FILLED",
]


class Policy:
    """A cache_ext-shaped policy: subclass it and define the hooks (the optional ones default
    to doing nothing). ``name`` names the run ``cache_ext:<name>`` (default: the class name)."""

    name: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("name"):
            cls.name = cls.__name__

    def init(self, ctx: Ctx, memcg: int) -> None:  # pragma: no cover - overridden
        raise NotImplementedError("a cache_ext policy creates its lists in init(ctx, memcg)")

    def evict_folios(self, ctx: Ctx, ectx: Ectx, memcg: int) -> None:  # pragma: no cover
        raise NotImplementedError("a cache_ext policy proposes candidates in evict_folios")

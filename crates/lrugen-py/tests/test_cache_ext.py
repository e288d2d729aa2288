# SPDX-License-Identifier: GPL-2.0-only
"""cache_ext-shaped policies written in Python (lrugen.cache_ext): the same algorithm in Python
and in the shipped Rust policy gives the same run, counter for counter; the hooks are called as
the kernel calls them; misuse and exceptions raise, with no result."""

import pytest

import lrugen
from lrugen import cache_ext

# a small file workload under memcg pressure (as test_lrugen's cache_ext test)
WORKLOAD = dict(workload="file-read", files=2, size="4M", memcg_max="3M", accesses=20_000)


def busy(f):
    """Skipped by the shipped FIFO (policies.rs `busy`)."""
    return not f.uptodate or not f.lru or f.dirty or f.writeback


class Fifo(cache_ext.Policy):
    """cache_ext's FIFO, as the shipped `cache_ext:fifo` is written in Rust."""

    name = "py_fifo"

    def init(self, ctx, memcg):
        self.list = ctx.new_list(memcg)

    def folio_added(self, ctx, folio):
        ctx.list_add_tail(self.list, folio)

    def evict_folios(self, ctx, ectx, memcg):
        ctx.list_iterate(memcg, self.list, lambda i, f: cache_ext.CONTINUE if busy(f) else cache_ext.EVICT, ectx)


class Mru(cache_ext.Policy):
    """cache_ext's MRU, as the shipped `cache_ext:mru`."""

    def init(self, ctx, memcg):
        self.list = ctx.new_list(memcg)

    def folio_added(self, ctx, folio):
        ctx.list_add(self.list, folio)

    def folio_accessed(self, ctx, folio):
        ctx.list_move(self.list, folio)

    def folio_evicted(self, ctx, folio):
        ctx.list_del(folio)

    def evict_folios(self, ctx, ectx, memcg):
        def pick(i, f):
            return cache_ext.CONTINUE if i < 200 and (not f.uptodate or not f.lru) else cache_ext.EVICT

        ctx.list_iterate(memcg, self.list, pick, ectx)


def without_name(run):
    return {k: v for k, v in run.items() if k != "policy"}


@pytest.mark.parametrize("policy, shipped", [(Fifo, "cache_ext:fifo"), (Mru, "cache_ext:mru")])
def test_python_policy_equals_the_shipped_rust_policy(policy, shipped):
    res = lrugen.run(policy=[shipped, policy(), "classic"], **WORKLOAD)
    assert res.policies == [shipped, f"cache_ext:{policy.name}", "classic"]
    rust, py, classic = res.json
    assert without_name(py) == without_name(rust)
    # and the policy mattered: under pressure it chose other pages than the classic LRU
    assert py["vmstat"]["pgsteal_file"] > 0
    assert py["misses"] != classic["misses"]


class Counting(cache_ext.Policy):
    """FIFO that counts its hooks and checks what the kernel hands it."""

    def __init__(self):
        self.calls = {"init": 0, "added": 0, "accessed": 0, "evicted": 0, "evict": 0}
        self.on_list = set()

    def init(self, ctx, memcg):
        self.calls["init"] += 1
        self.list = ctx.new_list(memcg)
        self.memcg = memcg
        assert ctx.memcg_pages(memcg) == 3 * 256  # memory.max 3M in pages
        assert ctx.list_len(self.list) == 0

    def folio_added(self, ctx, folio):
        self.calls["added"] += 1
        assert ctx.is_valid(folio) and folio not in self.on_list
        assert ctx.list_add_tail(self.list, folio) == 0
        # a folio already on a list: -EEXIST, as cache_ext's kfunc
        assert ctx.list_add(self.list, folio) == -17
        self.on_list.add(folio)

    def folio_accessed(self, ctx, folio):
        self.calls["accessed"] += 1
        assert folio in self.on_list

    def folio_evicted(self, ctx, folio):
        self.calls["evicted"] += 1
        self.on_list.remove(folio)

    def evict_folios(self, ctx, ectx, memcg):
        self.calls["evict"] += 1
        assert memcg == self.memcg and 0 < ectx.request_nr_folios_to_evict <= 32
        assert ctx.list_len(self.list) == len(self.on_list)
        ret = ctx.list_iterate(memcg, self.list, lambda i, f: cache_ext.EVICT, ectx)
        assert ret in (cache_ext.DONE_ITER, cache_ext.EVICT_ARRAY_FILLED)
        assert ectx.nr_folios_to_evict == len(ectx.candidates()) > 0
        # no such list: -ENOENT
        assert ctx.list_iterate(memcg, 10**6, lambda i, f: cache_ext.EVICT, ectx) in (-2, cache_ext.EVICT_ARRAY_FILLED)


def test_hooks_are_called_as_the_kernel_calls_them():
    p = Counting()
    res = lrugen.run(policy=p, **WORKLOAD)
    (r,) = res.json
    v = r["vmstat"]
    c = p.calls
    assert c["init"] == 1 and c["evict"] > 0
    # every miss brought a folio in (and read-ahead more), every reclaimed one left
    assert c["added"] >= r["misses"] > 0
    assert c["evicted"] == v["pgsteal_file"] > 0
    assert len(p.on_list) == c["added"] - c["evicted"] == v["nr_file_pages"]
    assert c["accessed"] > 0


def test_a_context_kept_past_its_hook_raises():
    class Keeps(Fifo):
        def init(self, ctx, memcg):
            super().init(ctx, memcg)
            self.ctx = ctx

    p = Keeps()
    lrugen.run(policy=p, **WORKLOAD)
    with pytest.raises(RuntimeError, match="only during the hook call"):
        p.ctx.list_len(p.list)


def test_the_context_inside_an_iterate_callback_raises():
    class Reenters(Fifo):
        def evict_folios(self, ctx, ectx, memcg):
            ctx.list_iterate(memcg, self.list, lambda i, f: ctx.list_del(f.id), ectx)

    with pytest.raises(RuntimeError, match="callback only reads the folio"):
        lrugen.run(policy=Reenters(), **WORKLOAD)


def test_an_exception_in_a_hook_is_the_run_s_exception():
    class Fails(Fifo):
        def folio_evicted(self, ctx, folio):
            raise KeyError("policy bug")

    with pytest.raises(KeyError, match="policy bug"):
        lrugen.run(policy=Fails(), **WORKLOAD)


@pytest.mark.parametrize(
    "make, exc, message",
    [
        (lambda: object(), TypeError, "not iterable"),
        (lambda: type("NoInit", (), {"evict_folios": lambda *a: None})(), ValueError, "no method 'init'"),
        (lambda: type("BadName", (Fifo,), {"name": "a b"})(), ValueError, "expected letters, digits"),
    ],
)
def test_bad_policies_are_refused(make, exc, message):
    with pytest.raises(exc, match=message):
        lrugen.run(policy=make(), **WORKLOAD)


def test_reading_a_folio_the_policy_was_not_given_raises():
    class ReadsAny(Fifo):
        def evict_folios(self, ctx, ectx, memcg):
            ctx.folio(ctx.nr_folios() - 1)

    with pytest.raises(ValueError, match="not in the valid-folio registry"):
        lrugen.run(policy=ReadsAny(), **WORKLOAD)

    class ReadsOwn(Fifo):
        def folio_added(self, ctx, folio):
            super().folio_added(ctx, folio)
            f = ctx.folio(folio)
            assert f.id == folio and f.uptodate and f.index < f.file_pages

    lrugen.run(policy=ReadsOwn(), **WORKLOAD)


def test_a_bad_callback_answer_raises():
    class Answers7(Fifo):
        def evict_folios(self, ctx, ectx, memcg):
            ctx.list_iterate(memcg, self.list, lambda i, f: 7, ectx)

    with pytest.raises(ValueError, match="answered 7: expected CONTINUE"):
        lrugen.run(policy=Answers7(), **WORKLOAD)


def test_refusals_of_the_run():
    with pytest.raises(ValueError, match="an op file"):
        lrugen.run(policy=Fifo(), ops="x.ops", memcg_max="3M")
    with pytest.raises(ValueError, match="no method 'init'"):
        lrugen.run(policy=[type("E", (), {"evict_folios": None})()], **WORKLOAD)

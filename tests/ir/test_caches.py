"""The cache policy: bounded LRU caches, bounded memo tables, weak intern tables."""

from __future__ import annotations

import functools
import gc
import threading
import weakref

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from plait.ir import Literal, ShapedArray
from plait.ir.caches import BoundedDict, LRUCache, WeakInternTable, cache_info, clear_caches


def test_lru_evicts_the_least_recently_used_and_counts() -> None:
    c: LRUCache[str, int] = LRUCache("test", maxsize=2)
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a") == 1  # "a" is now the most recent
    c.put("c", 3)
    assert "b" not in c and "a" in c and "c" in c
    assert c.get("b") is None
    assert (c.hits, c.misses, len(c)) == (1, 1, 2)
    calls: list[int] = []

    def compute(value: int) -> int:
        calls.append(1)
        return value
    assert c.get_or_compute("d", lambda: compute(4)) == 4
    assert c.get_or_compute("d", lambda: compute(5)) == 4
    assert calls == [1]
    assert cache_info()["test"] == (c.hits, c.misses, 2, 2)


@given(st.lists(st.integers(0, 20), max_size=200), st.integers(1, 8))
def test_lru_matches_a_model(keys: list[int], maxsize: int) -> None:
    c: LRUCache[int, int] = LRUCache("model", maxsize)
    order: list[int] = []  # least recent first
    for k in keys:
        if c.get(k) is None:
            c.put(k, k)
        if k in order:
            order.remove(k)
        order.append(k)
        order = order[-maxsize:]
        assert sorted(c._data) == sorted(order)
        assert list(c._data) == order


def test_lru_is_safe_under_threads() -> None:
    c: LRUCache[int, int] = LRUCache("threads", maxsize=16)

    def work(seed: int) -> None:
        for i in range(2000):
            c.get_or_compute((seed * 7 + i) % 40, functools.partial(int, i))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(c) <= 16 and c.hits + c.misses == 8000


def test_bounded_dict_empties_when_full_and_clear_caches_reaches_it() -> None:
    d: BoundedDict[int, int] = BoundedDict("memo", maxsize=3)
    for i in range(3):
        d[i] = i
    d[3] = 3
    assert d.data == {3: 3} and 3 in d and d[3] == 3 and list(d) == [3]
    d[4] = 4
    clear_caches()
    assert len(d) == 0


def test_intern_tables_hold_objects_weakly() -> None:
    table = WeakInternTable("test", recent_size=4)

    class Obj:
        pass

    o = Obj()
    table.put("k", o)
    table.put("alias", o)
    assert table.get("k") is o and table.get("alias") is o
    alive = weakref.ref(o)
    del o
    gc.collect()
    assert alive() is not None  # still among the recently used (strong, bounded)
    for i in range(4):  # pushed out of the recent set: only weak references remain
        table.put(i, Obj())
    gc.collect()
    assert alive() is None and table.get("k") is None and len(table.recent) <= 4
    clear_caches()  # drops the recent set too
    gc.collect()
    assert len(table) == 0 and table.recent == {}


def test_literals_and_avals_are_interned_while_alive_and_then_freed() -> None:
    f32 = ShapedArray((), np.float32)
    lit = Literal(123.25, f32)
    assert Literal(123.25, f32) is lit and Literal(np.float32(123.25), f32) is lit
    assert ShapedArray((7, 3), np.float32) is ShapedArray([7, 3], "float32")
    before = len(Literal._table)
    made = [Literal(i + 0.5, f32) for i in range(1000)]
    assert len(Literal._table) >= before + 1000
    del made
    clear_caches()  # the recently used ones are held strongly until then
    gc.collect()
    assert len(Literal._table) <= before + 2
    # Type tags still apart: 1, 1.0 and True are three literals.
    i32, b = ShapedArray((), np.int32), ShapedArray((), np.bool_)
    three = [Literal(1, i32), Literal(1.0, f32), Literal(True, b)]
    assert len({id(x) for x in three}) == 3

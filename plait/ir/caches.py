"""The one cache policy: bounded LRU caches, registered so that one call empties them all.

Every cache that grows with the programs a user runs (transformations keyed by
the interned jaxpr, compiled executables, eager single-operation programs) is a
:class:`LRUCache`: it holds at most ``maxsize`` entries (JAX bounds its
transformation caches at 2048 too), evicts the least recently used one, and
counts its hits and misses.  :func:`clear_caches` (public as
``plait.clear_caches``) empties every registered cache; :func:`cache_info`
reports them.  Interned literals and avals are held weakly (see
:class:`WeakInternTable`), so a value nothing uses any more is freed.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["LRUCache", "BoundedDict", "WeakInternTable", "register_cache", "clear_caches",
           "cache_info",
           "CacheInfo", "DEFAULT_MAXSIZE"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

DEFAULT_MAXSIZE = 2048
"""The bound of a transformation cache, as JAX's."""


class _Clearable(Protocol):
    name: str

    def clear(self) -> None: ...


_registry: list[weakref.ref[Any]] = []


def register_cache(cache: _Clearable) -> None:
    """Make ``cache`` (anything with ``name`` and ``clear()``) part of :func:`clear_caches`.

    Held weakly: a cache that belongs to a function (``jit``'s traces) goes with it.
    """
    _registry.append(weakref.ref(cache))
    if len(_registry) % 1024 == 0:
        _live()  # drop the references to caches that are gone


def _live() -> list[Any]:
    caches = [r() for r in _registry]
    _registry[:] = [r for r, c in zip(_registry, caches) if c is not None]
    return [c for c in caches if c is not None]


def clear_caches() -> None:
    """Empty every registered cache (transformations, executables, eager operations)."""
    for c in _live():
        c.clear()


class CacheInfo(tuple[int, int, int, int]):
    """``(hits, misses, size, maxsize)`` of one cache."""

    __slots__ = ()

    @property
    def hits(self) -> int:
        """Lookups that found an entry."""
        return self[0]

    @property
    def misses(self) -> int:
        """Lookups that did not."""
        return self[1]

    @property
    def size(self) -> int:
        """Entries held now."""
        return self[2]

    @property
    def maxsize(self) -> int:
        """The bound."""
        return self[3]


def cache_info() -> dict[str, CacheInfo]:
    """Hits, misses, size and bound of every registered :class:`LRUCache`, by name."""
    return {c.name: c.info() for c in _live() if isinstance(c, LRUCache)}


class LRUCache(Generic[K, V]):
    """A bounded map that evicts its least recently used entry; thread-safe.

    ``get``/``put`` (or ``cache[key]``, ``key in cache``) as a dict, and
    :meth:`get_or_compute` for the usual look-up-else-compute.
    """

    __slots__ = ("name", "maxsize", "hits", "misses", "_data", "_lock", "__weakref__")

    def __init__(self, name: str, maxsize: int = DEFAULT_MAXSIZE) -> None:
        self.name = name
        """What the cache holds, for :func:`cache_info`."""
        self.maxsize = maxsize
        """At most this many entries are kept."""
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        register_cache(self)

    def get(self, key: K) -> V | None:
        """The value for ``key`` (now the most recently used), or ``None``."""
        with self._lock:
            try:
                value = self._data[key]
            except KeyError:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return value

    def put(self, key: K, value: V) -> None:
        """Store ``value``, evicting the least recently used entry when full."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)

    __setitem__ = put

    def __getitem__(self, key: K) -> V:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def get_or_compute(self, key: K, compute: Callable[[], V]) -> V:
        """The cached value for ``key``, else ``compute()``, stored."""
        value = self.get(key)
        if value is None:
            value = compute()
            self.put(key, value)
        return value

    def clear(self) -> None:
        """Drop every entry (the counters stay)."""
        with self._lock:
            self._data.clear()

    def info(self) -> CacheInfo:
        """``(hits, misses, size, maxsize)``."""
        return CacheInfo((self.hits, self.misses, len(self._data), self.maxsize))

    def __repr__(self) -> str:
        return f"LRUCache({self.name!r}, size={len(self._data)}, maxsize={self.maxsize})"


class BoundedDict(dict[K, V]):
    """A memo table for cheap entries on hot paths (MLIR type strings, source lines):
    a plain dict, so a lookup costs what a dict's does, emptied whole when it would
    pass ``maxsize`` entries; registered with :func:`clear_caches`."""

    __slots__ = ("name", "maxsize", "__weakref__")

    def __init__(self, name: str, maxsize: int = 4096) -> None:
        super().__init__()
        self.name = name
        """What the table holds."""
        self.maxsize = maxsize
        """It is emptied before it would hold more entries than this."""
        register_cache(self)

    def __setitem__(self, key: K, value: V) -> None:
        if len(self) >= self.maxsize:
            self.clear()
        super().__setitem__(key, value)


class WeakInternTable:
    """An intern table that does not keep its objects alive.

    ``table.get(key)`` is the live object interned under ``key`` or ``None``;
    ``table.put(key, obj)`` interns it.  An entry goes away with its object.  A
    plain dict of weak references: a lookup is two C calls (a
    ``WeakValueDictionary`` costs several Python-level ones, on the tracing path).
    """

    __slots__ = ("refs",)

    def __init__(self) -> None:
        self.refs: dict[Any, weakref.ref[Any]] = {}
        """The weak references by key.  Hot paths (interning an aval or a literal on
        every traced equation) look up here directly, saving :meth:`get`'s call."""

    def get(self, key: Any) -> Any:
        """The live object interned under ``key``, or ``None``.

        Raises:
          TypeError: ``key`` is unhashable.
        """
        ref = self.refs.get(key)
        return None if ref is None else ref()

    def put(self, key: Any, obj: Any) -> None:
        """Intern ``obj`` under ``key`` (it may be interned under several keys)."""
        refs = self.refs

        def drop(r: weakref.ref[Any], key: Any = key) -> None:
            if refs.get(key) is r:
                del refs[key]

        refs[key] = weakref.ref(obj, drop)

    def __len__(self) -> int:
        return len(self.refs)

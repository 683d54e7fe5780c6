"""The one cache policy: bounded LRU caches, registered so that one call empties them all.

Every cache that grows with the programs a user runs (transformations keyed by
the interned jaxpr, compiled executables, eager single-operation programs) is a
:class:`LRUCache`: it holds at most ``maxsize`` entries (JAX bounds its
transformation caches at 2048 too), evicts the least recently used one, and
counts its hits and misses.  :func:`clear_caches` (public as
``plait.clear_caches``) empties every registered cache; :func:`cache_info`
reports them.  Interned literals and avals are held weakly (see
:class:`WeakInternTable`; only the few hundred most recently used are also held
strongly), so a value nothing uses any more is freed.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

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


class CacheInfo(NamedTuple):
    """``(hits, misses, size, maxsize)`` of one cache."""

    hits: int
    """Lookups that found an entry."""
    misses: int
    """Lookups that did not."""
    size: int
    """Entries held now."""
    maxsize: int
    """The bound."""


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
        return CacheInfo(self.hits, self.misses, len(self._data), self.maxsize)

    def __repr__(self) -> str:
        return f"LRUCache({self.name!r}, size={len(self._data)}, maxsize={self.maxsize})"


class BoundedDict(Generic[K, V]):
    """A memo table for cheap entries on hot paths (MLIR type strings, source lines),
    emptied whole when it would pass ``maxsize`` entries; registered with
    :func:`clear_caches`.

    Lookups on hot paths read :attr:`data`, a plain ``dict`` (CPython specializes
    subscripts of exact dicts only, so a dict subclass would cost ~15 ns a lookup);
    stores go through ``table[key] = value``, which enforces the bound.
    """

    __slots__ = ("name", "maxsize", "data", "__weakref__")

    def __init__(self, name: str, maxsize: int = 4096) -> None:
        self.name = name
        """What the table holds."""
        self.maxsize = maxsize
        """It is emptied before it would hold more entries than this."""
        self.data: dict[K, V] = {}
        """The entries (emptied in place, never replaced: hot paths may keep it)."""
        register_cache(self)

    def get(self, key: K) -> V | None:
        """The entry for ``key``, or ``None``."""
        return self.data.get(key)

    def __getitem__(self, key: K) -> V:
        return self.data[key]

    def __setitem__(self, key: K, value: V) -> None:
        data = self.data
        if len(data) >= self.maxsize:
            data.clear()
        data[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self.data

    def __len__(self) -> int:
        return len(self.data)

    def __iter__(self) -> Iterator[K]:
        return iter(self.data)

    def clear(self) -> None:
        """Drop every entry."""
        self.data.clear()


class WeakInternTable:
    """An intern table that does not keep its objects alive, for long.

    ``table.get(key)`` is the live object interned under ``key`` or ``None``;
    ``table.put(key, obj)`` interns it.  The canonical table is a plain dict of weak
    references (a ``WeakValueDictionary`` costs several Python-level calls a lookup,
    on the tracing path): an entry goes away with its object.  In front of it,
    :attr:`recent` holds the last few hundred objects looked up or interned
    strongly, so that the hot path (the same avals and literals on every traced
    equation) is one exact-dict subscript.  Identity is kept: ``recent`` only holds
    objects that are canonical, and emptying it only lets them die.
    """

    __slots__ = ("name", "refs", "recent", "recent_size", "__weakref__")

    def __init__(self, name: str, recent_size: int = 256) -> None:
        self.name = name
        """What the table interns."""
        self.refs: dict[Any, weakref.ref[Any]] = {}
        """The canonical entries, by key: weak references."""
        self.recent: dict[Any, Any] = {}
        """Strong references to recently used objects, by key; hot paths read it first."""
        self.recent_size = recent_size
        """``recent`` is emptied when it would hold more entries than this."""
        register_cache(self)  # clear_caches() drops the strong references

    def get(self, key: Any) -> Any:
        """The live object interned under ``key``, or ``None``.

        Raises:
          TypeError: ``key`` is unhashable.
        """
        hit = self.recent.get(key)
        if hit is not None:
            return hit
        ref = self.refs.get(key)
        hit = None if ref is None else ref()
        if hit is not None:
            self._remember(key, hit)
        return hit

    def put(self, key: Any, obj: Any) -> None:
        """Intern ``obj`` under ``key`` (it may be interned under several keys)."""
        refs = self.refs

        def drop(r: weakref.ref[Any], key: Any = key) -> None:
            if refs.get(key) is r:
                del refs[key]

        refs[key] = weakref.ref(obj, drop)
        self._remember(key, obj)

    def _remember(self, key: Any, obj: Any) -> None:
        recent = self.recent
        if len(recent) >= self.recent_size:
            recent.clear()
        recent[key] = obj

    def clear(self) -> None:
        """Drop the strong references (the canonical weak entries stay while alive)."""
        self.recent.clear()

    def __len__(self) -> int:
        return len(self.refs)

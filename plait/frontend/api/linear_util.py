"""Wrapped functions with a stack of transformations, as JAX's ``jax.extend.linear_util``.

A :class:`WrappedFun` is a Python function ``f`` with transformations applied on top of
it, each a function ``gen(inner, *static_args, *args, **kwargs)`` that calls ``inner``
(the function below it) once.  A transformation may leave an auxiliary output in a
:class:`Store` (``flatten_fun`` stores the output tree there), read after the call through
the thunk :func:`transformation_with_aux2` returns.  Two wrapped functions are equal when
they wrap the same ``f`` with the same transformations and params, so that :func:`cache`
can memoize on them.  Libraries written against JAX's internals (numpyro's provenance
tracking) build functions this way; plait's own transformations do not use it.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from plait.frontend.core.arguments import fun_name
from plait.ir import config
from plait.ir.caches import BoundedDict
from plait.ir.debug_info import DebugInfo

__all__ = ["EqualStore", "Store", "StoreException", "WrappedFun", "cache", "merge_linear_aux",
           "transformation", "transformation2", "transformation_with_aux",
           "transformation_with_aux2", "wrap_init"]


class StoreException(Exception):
    """A store read while empty, or written while full (JAX's exception of that name)."""


_EMPTY: Any = object()


class Store:
    """One auxiliary output of a transformation: written once, then read."""

    __slots__ = ("_val",)

    def __init__(self) -> None:
        self._val = _EMPTY

    def store(self, val: Any) -> None:
        """Write the value; raises :class:`StoreException` if one is there already."""
        if self._val is not _EMPTY:
            raise StoreException("Store occupied: a transformation's auxiliary output was "
                                 "stored twice (was the wrapped function called twice?)")
        self._val = val

    def reset(self) -> None:
        """Empty the store (for debugging: a wrapped function is meant to be called once)."""
        self._val = _EMPTY

    @property
    def val(self) -> Any:
        """The value stored; raises :class:`StoreException` before the function ran."""
        if self._val is _EMPTY:
            raise StoreException("Store empty: the auxiliary output is known only after "
                                 "the wrapped function has been called")
        return self._val

    def __bool__(self) -> bool:
        return self._val is not _EMPTY


class EqualStore(Store):
    """A store that accepts a second value equal to the first (a function traced twice)."""

    __slots__ = ()

    def store(self, val: Any) -> None:
        """Write the value, or check it equals the one there already."""
        if self._val is _EMPTY:
            self._val = val
            return
        try:
            same = bool(self._val == val)
        except Exception:  # (a value whose == is not a truth value)
            same = False
        if not same:
            raise StoreException("Store occupied with not-equal value")


Transform = tuple[Callable[..., Any], tuple[Hashable, ...]]


class WrappedFun:
    """``f`` with the transformations ``transforms`` (outermost first) applied on top.

    ``f_transformed`` is the composed function :meth:`call_wrapped` calls; ``stores``
    holds one :class:`Store` (or ``None``) per transformation; ``params`` are keyword
    arguments passed to ``f``; ``debug_info`` is plait's
    :class:`~plait.ir.debug_info.DebugInfo` of ``f``.
    """

    __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type",
                 "debug_info")

    def __init__(self, f: Callable[..., Any], f_transformed: Callable[..., Any],
                 transforms: tuple[Transform, ...], stores: tuple[Store | None, ...],
                 params: tuple[tuple[str, Any], ...], in_type: tuple[Any, ...] | None,
                 debug_info: DebugInfo) -> None:
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self) -> str:
        return fun_name(self.f)

    def wrap(self, gen: Callable[..., Any], gen_static_args: tuple[Hashable, ...],
             out_store: Store | None) -> WrappedFun:
        """This function with one more transformation on top (and its store, if any)."""
        lead = () if out_store is None else (out_store,)
        inner = functools.partial(gen, self.f_transformed, *lead, *gen_static_args)
        return WrappedFun(self.f, inner, ((gen, gen_static_args),) + self.transforms,
                          (out_store,) + self.stores, self.params, None, self.debug_info)

    def populate_stores(self, stores: Sequence[Store | None]) -> None:
        """Copy the values of ``stores`` (of an equal function already called) into ours."""
        for mine, theirs in zip(self.stores, stores):
            if mine is not None and theirs is not None:
                mine.store(theirs.val)

    def call_wrapped(self, *args: Any, **kwargs: Any) -> Any:
        """Call the transformed function."""
        return self.f_transformed(*args, **kwargs)

    def replace_debug_info(self, debug_info: DebugInfo) -> WrappedFun:
        """The same function, with other debug info."""
        return WrappedFun(self.f, self.f_transformed, self.transforms, self.stores,
                          self.params, self.in_type, debug_info)

    def with_unknown_names(self) -> WrappedFun:
        """The same function, its argument names and result paths unknown."""
        unknown = DebugInfo(self.debug_info.func_name, (), (), self.debug_info.func_src_info)
        return self.replace_debug_info(unknown)

    def __repr__(self) -> str:
        lines = [f"{i}   : {fun_name(gen)}   {args}"
                 for i, (gen, args) in enumerate(self.transforms)]
        return "Wrapped function:\n" + "\n".join(lines) + f"\nCore: {fun_name(self.f)}\n"

    def __hash__(self) -> int:
        return hash((self.f, self.transforms, self.params, self.in_type, self.debug_info))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WrappedFun):
            return NotImplemented
        return (self.f == other.f and self.transforms == other.transforms
                and self.params == other.params and self.in_type == other.in_type
                and self.debug_info == other.debug_info)


def wrap_init(f: Callable[..., Any], params: dict[str, Any] | None = None, *,
              debug_info: DebugInfo | None = None) -> WrappedFun:
    """``f`` as a :class:`WrappedFun` without transformations; ``params`` are keyword
    arguments every call passes to ``f``.  Without ``debug_info`` (build one with
    ``plait.api_util.debug_info``) a ``DeprecationWarning`` is issued, as JAX does."""
    if debug_info is None:
        warnings.warn("linear_util.wrap_init is missing a DebugInfo object: pass "
                      "debug_info=plait.api_util.debug_info(...)", DeprecationWarning,
                      stacklevel=2)
        debug_info = DebugInfo(fun_name(f), (), ())
    elif not isinstance(debug_info, DebugInfo):
        raise TypeError(f"wrap_init: expected debug_info to be a DebugInfo (from "
                        f"api_util.debug_info), but got {debug_info!r}")
    given = dict(params or {})
    return WrappedFun(f, functools.partial(f, **given), (), (), tuple(sorted(given.items())),
                      None, debug_info.with_result_paths(()))


def _add_transformation(gen: Callable[..., Any], fun: WrappedFun,
                        *gen_static_args: Hashable) -> WrappedFun:
    return fun.wrap(gen, gen_static_args, None)


def transformation2(gen: Callable[..., Any], *args: Any) -> Callable[..., Any]:
    """``gen(inner, *static_args, *call_args, **call_kwargs)`` as a transformation: the
    result, called with ``(fun, *static_args)``, adds it on top of the WrappedFun ``fun``
    (curried as JAX's: used as a decorator)."""
    return functools.partial(_add_transformation, gen, *args)


def _with_aux(gen: Callable[..., Any], fun: WrappedFun, *gen_static_args: Hashable,
              use_eq_store: bool = False,
              unk_names: bool = False) -> tuple[WrappedFun, Callable[[], Any]]:
    store = EqualStore() if use_eq_store else Store()
    out = fun.wrap(gen, gen_static_args, store)
    return (out.with_unknown_names() if unk_names else out), lambda: store.val


def transformation_with_aux2(gen: Callable[..., Any], *args: Any) -> Callable[..., Any]:
    """As :func:`transformation2`, for ``gen(inner, store, *static_args, *call_args)``
    that leaves an auxiliary output in ``store``: called with ``(fun, *static_args)``
    (and optionally ``use_eq_store=``, ``unk_names=``), it returns the new WrappedFun and
    a thunk reading the auxiliary output once the function has run."""
    return functools.partial(_with_aux, gen, *args)


def _generator_call(gen: Callable[..., Any], inner: Callable[..., Any], *args: Any,
                    **kwargs: Any) -> Any:
    # An old-style transformation is a generator: it yields the arguments for the inner
    # call, is sent its result and yields the answer.
    coroutine = gen(*args, **kwargs)
    inner_args, inner_kwargs = next(coroutine)
    return coroutine.send(inner(*inner_args, **inner_kwargs))


def _generator_call_with_aux(gen: Callable[..., Any], inner: Callable[..., Any],
                             store: Store, *args: Any, **kwargs: Any) -> Any:
    answer, aux = _generator_call(gen, inner, *args, **kwargs)
    store.store(aux)
    return answer


def _add_generator(gen: Callable[..., Any], fun: WrappedFun,
                   *gen_static_args: Hashable) -> WrappedFun:
    return fun.wrap(functools.partial(_generator_call, gen), gen_static_args, None)


def transformation(gen: Callable[..., Any], *args: Any) -> Callable[..., Any]:
    """The generator form of :func:`transformation2` (JAX keeps it for compatibility):
    ``gen(*static_args, *args, **kwargs)`` yields ``(args, kwargs)`` for the inner call,
    receives its result and yields the answer.  Curried as :func:`transformation2`."""
    return functools.partial(_add_generator, gen, *args)


def _add_generator_with_aux(gen: Callable[..., Any], fun: WrappedFun,
                            *gen_static_args: Hashable) -> tuple[WrappedFun, Callable[[], Any]]:
    return _with_aux(functools.partial(_generator_call_with_aux, gen), fun, *gen_static_args)


def transformation_with_aux(gen: Callable[..., Any], *args: Any) -> Callable[..., Any]:
    """The generator form of :func:`transformation_with_aux2`: ``gen`` finally yields
    ``(answer, aux)``.  Curried as :func:`transformation2`."""
    return functools.partial(_add_generator_with_aux, gen, *args)


def merge_linear_aux(aux1: Callable[[], Any], aux2: Callable[[], Any]) -> tuple[bool, Any]:
    """Of two auxiliary-output thunks exactly one of which was written, ``(True, value)``
    if it is the first, ``(False, value)`` if the second; :class:`StoreException` if
    neither or both were written."""
    try:
        first = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
    try:
        aux2()
    except StoreException:
        return True, first
    raise StoreException("both stores occupied")


def cache(call: Callable[..., Any], *,
          explain: Callable[..., None] | None = None) -> Callable[..., Any]:
    """Memoize ``call(fun, *args)`` (``fun`` a WrappedFun, ``args`` hashable) on ``fun``'s
    transformations and params, ``args`` and the options that change tracing; a hit fills
    ``fun``'s stores from the first call's.  ``explain(fun, first_use, cache, key, secs)``
    is called on a miss when the ``explain_cache_misses`` option is on."""
    Entry = tuple[Any, tuple[Store | None, ...]]
    caches: weakref.WeakKeyDictionary[Any, BoundedDict[Any, Entry]] = weakref.WeakKeyDictionary()

    def memoized(fun: WrappedFun, *args: Any) -> Any:
        table = caches.get(fun.f)
        if table is None:  # (bounded: a function called with ever new arguments)
            table = caches[fun.f] = BoundedDict(f"linear_util.cache of {fun_name(fun.f)}", 1024)
        key = (fun.transforms, fun.params, fun.in_type, args, config.values.trace_context)
        hit = table.get(key)
        if hit is not None:
            fun.populate_stores(hit[1])
            return hit[0]
        answer = call(fun, *args)
        if explain is not None and config.values.explain_cache_misses:
            explain(fun, len(table) == 0, table.data, key, 0.0)
        table[key] = (answer, fun.stores)
        return answer

    memoized.cache_clear = caches.clear  # type: ignore[attr-defined]  # (as JAX's, on the function)
    memoized.evict_function = lambda f: caches.pop(f, None)  # type: ignore[attr-defined]  # (same)
    return memoized

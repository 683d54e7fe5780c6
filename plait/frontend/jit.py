"""``plait.jit``: trace once per input signature, compile once per program.

Calling a jitted function outside any trace looks the call's signature (pytree
structure, avals including weak types, static values) up in a trace cache,
traces on a miss, and runs the executable of the traced jaxpr (executables are
cached by jaxpr structure).  Inside a trace it stages a ``jit`` equation
carrying the sub-jaxpr, which transformations later rewrite.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, cast

import attrs
import numpy as np

from plait.errors import ArgumentError
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray, shaped_avals
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives import jit_p
from plait.lowering import runtime
from plait.lowering.lower import usable_donations
from plait.lowering.runtime import Executable
from plait.frontend import cache_log
from plait.frontend.api import static_args
from plait.config import values as _config
from plait.frontend.api_util import abstractify, arg_path, mark_static
from plait.frontend.array_impl import ArrayImpl, wrap_output
from plait.frontend.compile_cache import executable_for
from plait.frontend.trace_fun import FlatCall, TracedFunction, flatten_call, trace_function
from plait.frontend.traceback_util import hide_plait_frames
from plait.frontend.tracing import Tracer, _state, bind
from plait.frontend.tree_util import tree_flatten, tree_unflatten

if TYPE_CHECKING:
    from plait.frontend.stages import Lowered, Traced

__all__ = ["jit", "Jitted", "consts_as_invars"]

P = ParamSpec("P")
R = TypeVar("R")


def consts_as_invars(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, tuple[Any, ...]]:
    """``closed`` with its constvars turned into leading invars, and the const values."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, ()
    moved = j.replace(constvars=(), invars=j.constvars + j.invars)
    return ClosedJaxpr(moved, ()), closed.consts


@attrs.define
class _Entry:
    """A trace-cache entry: the traced function, and its executable once compiled."""

    traced: TracedFunction
    donated: tuple[bool, ...]
    executable: Executable | None = None
    out_avals: tuple[ShapedArray, ...] = ()
    any_donated: bool = False
    wrap: Callable[[ShapedArray, Any], Any] = ArrayImpl
    """Makes a result of a buffer: ``ArrayImpl`` unless some result is float0."""


_NO_STATICS: tuple[Any, ...] = ((), ())
_SCALAR_AVALS = {float: ShapedArray((), np.dtype(np.float32), True),
                 int: ShapedArray((), np.dtype(np.int32), True),
                 bool: ShapedArray((), np.dtype(np.bool_))}


def _quick_aval(x: Any) -> Any:
    # Types for the cache lookup; anything unusual takes the slow, checked path.
    t = type(x)
    if t is ArrayImpl:
        return x._aval
    if t in _SCALAR_AVALS and not _config.enable_x64 and (t is not int or -2**31 <= x < 2**31):
        return _SCALAR_AVALS[t]
    return None


def _has_tracers(consts: Sequence[Any]) -> bool:
    return any(type(c) is Tracer for c in consts)


class Jitted(Generic[P, R]):
    """A jit-compiled function; call it like the original, or use the AOT stages."""

    def __init__(self, fun: Callable[P, R], static_argnums: tuple[int, ...],
                 static_argnames: tuple[str, ...], donate_argnums: tuple[int, ...]) -> None:
        # First: update_wrapper copies fun.__dict__, which may hold a `fun` of its own
        # (a custom_jvp, or a wrapper of one) that must not replace ours.
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.static_argnums = static_argnums
        self.static_argnames = static_argnames
        self.donate_argnums = donate_argnums
        self._cache: dict[tuple[Any, ...], _Entry] = {}
        self._has_statics = bool(static_argnums or static_argnames)

    def __repr__(self) -> str:
        return f"<jitted {getattr(self.fun, '__name__', self.fun)!r}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # Methods: bind the instance like a function would.
        return self if obj is None else functools.partial(self, obj)

    # -- tracing ------------------------------------------------------------
    def _flat(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> FlatCall:
        return flatten_call(self.fun, args, kwargs, self.static_argnums, self.static_argnames)

    def _donated(self, call: FlatCall) -> tuple[bool, ...]:
        # Every leaf of a donated positional argument is donated.
        if not self.donate_argnums:
            return (False,) * len(call.leaves)
        return tuple(p[0].idx == 0 and p[1].idx in self.donate_argnums for p in call.paths)

    def _entry(self, call: FlatCall, names: Sequence[str]) -> tuple[_Entry, tuple[ShapedArray, ...]]:
        avals = tuple(x._aval if type(x) is ArrayImpl else abstractify(x, arg_path(names, i), "jit")
                      for i, x in enumerate(call.leaves))
        key = (call.in_tree, avals, call.static_key, _config.trace_context)
        entry = self._cache.get(key)
        if entry is None:
            self._explain_miss(key, names)
            traced = trace_function(self.fun, call, "jit")
            donated = self._donated(call)
            entry = _Entry(traced, donated, any_donated=any(donated))
            if not _has_tracers(traced.closed.consts):
                self._cache[key] = entry
        return entry, avals

    def _explain_miss(self, key: tuple[Any, ...], names: Sequence[str]) -> None:
        if not cache_log.enabled():
            return
        name = getattr(self.fun, "__name__", "function")
        old = cache_log.closest(self._cache, key)
        if old is None:
            cache_log.explain(f"trace cache miss for jit({name}): first call "
                              f"(tracing for {len(key[1])} array arguments)")
        else:
            reasons = cache_log.describe_signature_change(names, old, key)
            cache_log.explain(f"trace cache miss for jit({name}): " + "; ".join(reasons))

    # -- calling -------------------------------------------------------------
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        # The API boundary is inlined (a try costs nothing until something raises), so
        # that neither this frame nor a wrapper's stays in a user's traceback.
        try:
            if not _state.stack and not self._has_statics:
                # The common case first: a cache hit, found without computing names.
                leaves, tree = tree_flatten((args, kwargs))
                entry = self._cache.get((tree, tuple(map(_quick_aval, leaves)), _NO_STATICS,
                                         _config.trace_context))
                if entry is not None and entry.executable is not None:
                    return self._run(entry, leaves)
            return self._call(*args, **kwargs)
        except Exception as e:
            hide_plait_frames(e)
            raise

    def _call(self, *args: P.args, **kwargs: P.kwargs) -> R:
        call = self._flat(args, kwargs)
        entry, _ = self._entry(call, call.debug_info.arg_names)
        if _state.stack:
            return self._stage(call, entry.traced, entry.donated)
        return self._run(entry, call.leaves)

    def _stage(self, call: FlatCall, traced: TracedFunction, donated: tuple[bool, ...]) -> R:
        closed, consts = consts_as_invars(traced.closed)
        outs = bind(jit_p, *consts, *call.leaves, name=traced.debug_info.func_name, jaxpr=closed,
                    donated_invars=(False,) * len(consts) + donated, keep_unused=False,
                    inline=False)
        # The result has fun's structure: R, as jit's signature promises (like jax.jit's,
        # it does not say that the leaves come back as Arrays).
        return cast(R, tree_unflatten(traced.out_tree, outs))

    def _run(self, entry: _Entry, leaves: Sequence[Any]) -> R:
        exe = entry.executable
        if exe is None:
            traced = entry.traced
            exe = entry.executable = executable_for(
                traced.closed, traced.debug_info.func_name, traced.debug_info.result_paths,
                entry.donated)
            entry.out_avals = shaped_avals(traced.closed.out_avals)
            if any(a.dtype == dt.float0 for a in entry.out_avals):
                entry.wrap = wrap_output
            if entry.any_donated:
                # Frames up to the user's call: _run, _call, __call__.
                entry.donated = effective_donations(traced, entry.donated, stacklevel=4)
                entry.any_donated = any(entry.donated)
        traced = entry.traced
        bufs = [x._buf if type(x) is ArrayImpl and x._buf is not None else _buffer(x, a)
                for x, a in zip(leaves, traced.in_avals)]
        outs = exe.loaded.execute_sharded(bufs).consume_with_handlers(exe._handlers)
        if entry.any_donated:
            _delete_donated(leaves, entry.donated)
        # fun's structure with Arrays for leaves: R, as in _stage.
        return cast(R, traced.out_tree.unflatten(map(entry.wrap, entry.out_avals, outs)))

    # -- ahead of time ---------------------------------------------------------
    def trace(self, *args: P.args, **kwargs: P.kwargs) -> Traced:
        """Stage out the function for these arguments (``ShapeDtypeStruct``\\ s allowed)."""
        from plait.frontend.stages import Traced
        call = self._flat(args, kwargs)
        entry, _ = self._entry(call, call.debug_info.arg_names)
        return Traced(entry.traced, entry.donated)

    def lower(self, *args: P.args, **kwargs: P.kwargs) -> Lowered:
        """Trace and lower to StableHLO for these arguments."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        """The output shapes and dtypes, as a pytree of ``ShapeDtypeStruct``\\ s."""
        return self.trace(*args, **kwargs).out_info


def _buffer(x: Any, aval: ShapedArray) -> Any:
    if type(x) is ArrayImpl:
        buf = x._buf
        if buf is None:
            raise RuntimeError("Array has been deleted (it was donated to a jitted call)")
        return buf
    return runtime.device_put(np.asarray(x, aval.dtype), aval)


def effective_donations(traced: TracedFunction, donated: tuple[bool, ...],
                        stacklevel: int) -> tuple[bool, ...]:
    """The donated arguments the executable really reuses; the others stay valid, with
    a warning, as in JAX (a buffer is reusable only by a result of its size)."""
    usable = usable_donations(traced.in_avals, traced.closed.out_avals, donated)
    unused = [a.str_short() for a, d, u in zip(traced.in_avals, donated, usable) if d and not u]
    if unused:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unused)}. "
                      "Donation only helps when a result has the same shape and dtype.",
                      stacklevel=stacklevel + 1)
    return usable


def _delete_donated(leaves: Sequence[Any], donated: Sequence[bool]) -> None:
    for x, d in zip(leaves, donated):
        if d and type(x) is ArrayImpl:
            x._buf = None
            x._npy = None


def execute(exe: Executable, traced: TracedFunction, leaves: Sequence[Any],
            donated: Sequence[bool] = ()) -> Any:
    """Run a compiled traced function on flat argument leaves; returns the result tree."""
    bufs = [_buffer(x, a) for x, a in zip(leaves, traced.in_avals)]
    outs = exe.execute(bufs)
    _delete_donated(leaves, donated)
    out_avals = shaped_avals(traced.closed.out_avals)
    return tree_unflatten(traced.out_tree, [wrap_output(a, b) for a, b in zip(out_avals, outs)])


def jit(fun: Callable[P, R], *, static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        donate_argnums: int | Sequence[int] = ()) -> Jitted[P, R]:
    """Compile ``fun`` with XLA: traced on the first call per input signature.

    ``static_argnums``/``static_argnames`` name arguments passed as Python values
    (hashable; part of the cache key, folded into the program).
    ``donate_argnums`` name arguments whose buffers the call may reuse; donated
    Arrays are deleted by the call.
    """
    if not callable(fun):
        raise ArgumentError(f"jit: expected a callable, but got {type(fun).__name__}")
    nums, names = static_args(static_argnums, static_argnames)
    donate = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
    if set(donate) & set(nums):
        raise ArgumentError(f"jit: arguments {sorted(set(donate) & set(nums))} cannot be both "
                            "static and donated")
    return Jitted(fun, nums, names, donate)

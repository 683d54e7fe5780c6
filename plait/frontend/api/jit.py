"""``plait.jit``: trace once per input signature, compile once per program.

A jitted function is jaxlib's C++ dispatcher (:mod:`plait.frontend.api.dispatch`):
a call whose signature (pytree structure, avals including weak types, static
values, plait's options) it has seen runs the executable without entering
Python.  Other calls come to :meth:`JitFunction.cache_miss`: outside any trace
it looks the signature up in the trace cache, traces on a miss, runs the
executable of the traced jaxpr (executables are cached by jaxpr structure) and
hands the dispatcher the fast path; inside a trace it stages a ``jit`` equation
carrying the sub-jaxpr, which transformations later rewrite.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, Protocol, TypeVar, overload

import attrs
import numpy as np

from plait.frontend.api import dispatch
from plait.frontend.api.compile import compile_traced, compiler_option_pairs, execute
from plait.frontend.api.dispatch import FastPath
from plait.frontend.api.refs import pure_with_refs
from plait.frontend.api.stages import Lowered, Traced
from plait.frontend.core import cache_log
from plait.frontend.core.arguments import (
    ShapeDtypeStruct,
    arg_aval,
    arg_path,
    fun_name,
    infer_static,
    mark_static,
    static_args,
    struct_sharding,
)
from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl, committed_device
from plait.frontend.core.compile_cache import compile_logger
from plait.frontend.core.key_use import check_consumption, record_consumption
from plait.frontend.core.layouts import Format, default_sharding_of
from plait.frontend.core.promotion import python_scalar_dtype
from plait.frontend.core.refs import Ref, check_distinct, read, ref_leaves, write
from plait.frontend.core.spmd import arg_sharding
from plait.frontend.core.trace_to_jaxpr import (
    FlatCall,
    TracedFunction,
    flatten_call,
    trace_function,
)
from plait.frontend.core.traceback_util import hide_plait_frames
from plait.frontend.core.tracing import ForeignRef, Tracer, _state, bind
from plait.frontend.core.tree_util import (
    broadcast_prefix,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_unflatten,
)
from plait.frontend.core.value_checks import check_jit_result
from plait.frontend.lax.parallel import constrain
from plait.ir import dtypes as dt
from plait.ir import monitoring
from plait.ir.avals import AbstractValue, ShapedArray, shaped_avals
from plait.ir.caches import BoundedDict
from plait.ir.config import values as _config
from plait.ir.errors import ArgumentError, RefError
from plait.ir.jaxpr import consts_as_invars
from plait.ir.primitives import jit_p
from plait.ir.sharding import Mesh, NamedSharding, PartitionSpec, current_mesh, resolve
from plait.lowering.runtime import CompilerOptions, Executable, devices, sharding_for
from plait.transforms.key_reuse import jaxpr_signature

__all__ = ["jit", "Jitted", "JitFunction"]

P = ParamSpec("P")
R = TypeVar("R")


@attrs.define
class _Entry:
    """A trace-cache entry: the traced function, and its executable once compiled."""

    traced: TracedFunction
    donated: tuple[bool, ...]
    """Which flat arguments are donated (once compiled: which the executable reuses)."""
    executable: Executable | None = None
    kept: tuple[bool, ...] = ()
    """Which flat arguments the executable takes (the others are unused)."""
    layouts: tuple[NamedSharding | None, ...] = ()
    """Per flat argument, its layout over a mesh (given, or the argument's own)."""
    fast: FastPath | None = None
    """What the C++ dispatcher needs to run the executable itself (``None`` when it
    cannot: a float0 result is NumPy zeros, not a device buffer)."""
    device: Any = None
    """The device the program runs on (``None``: the default one), where its Array
    arguments are (see :func:`~plait.frontend.core.array_impl.committed_device`)."""


def _arg_avals(leaves: Sequence[Any], names: Sequence[str]) -> tuple[AbstractValue, ...]:
    return tuple(x._aval if type(x) is ArrayImpl else arg_aval(x, arg_path(names, i), "jit")
                 for i, x in enumerate(leaves))


def _has_tracers(consts: Sequence[Any]) -> bool:
    return any(type(c) is Tracer for c in consts)


class Jitted(Protocol[P, R]):
    """The type of a jit-compiled function: call it like the original, or use the AOT
    stages.  (At run time it is jaxlib's ``PjitFunction``, see
    :mod:`plait.frontend.api.dispatch`.)"""

    __wrapped__: Callable[P, R]

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...

    def __get__(self, obj: Any, objtype: Any = None) -> Any: ...

    def trace(self, *args: P.args, **kwargs: P.kwargs) -> Traced:
        """Stage out the function for these arguments (``ShapeDtypeStruct``\\ s allowed)."""
        ...

    def lower(self, *args: P.args, **kwargs: P.kwargs) -> Lowered:
        """Trace and lower to StableHLO for these arguments."""
        ...

    def eval_shape(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        """The output shapes and dtypes, as a pytree of ``ShapeDtypeStruct``\\ s."""
        ...

    def clear_cache(self) -> None:
        """Forget the traces and executables of this function."""
        ...


class JitFunction:
    """The Python side of a jitted function: its trace cache, and the path every call
    takes that the C++ dispatcher cannot (the first call of a signature, calls while
    tracing, calls with arguments it cannot convert)."""

    def __init__(self, fun: Callable[..., Any], static_argnums: tuple[int, ...],
                 static_argnames: tuple[str, ...], donate_argnums: tuple[int, ...],
                 keep_unused: bool = False, in_shardings: Any = None,
                 out_shardings: Any = None, donate_argnames: tuple[str, ...] = (),
                 inline: bool = False, device: Any = None,
                 compiler_options: CompilerOptions = ()) -> None:
        self.fun = fun
        self.compiler_options = compiler_options
        """XLA options every compilation of ``fun`` overrides."""
        self.donate_argnames = donate_argnames
        self.device = device
        """The device every call runs on (``jit(device=)``); ``None``: where the
        arguments are."""
        self.inline = inline and in_shardings is None and out_shardings is None and \
            device is None
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.static_argnums = static_argnums
        self.static_argnames = static_argnames
        self.donate_argnums = donate_argnums
        self.keep_unused = keep_unused
        self._cache: BoundedDict[tuple[Any, ...], _Entry] = BoundedDict(
            f"jit traces of {fun_name(fun)}")
        self._closure_refs: tuple[Ref, ...] = ()
        """The Refs the function closes over (found by tracing it)."""
        self._live_refs: list[Ref] = []
        self._pures: BoundedDict[tuple[Any, ...], Any] = BoundedDict(
            f"jit functions of {fun_name(fun)} with Refs")
        # jaxlib's dispatcher takes static argument positions as given; plait counts
        # a negative one from the end of each call's arguments, which it cannot do.  Nor
        # does it see the current mesh, which bare PartitionSpecs among the shardings
        # depend on.
        specs = tree_flatten((in_shardings, out_shardings), is_leaf=_is_sharding)[0]
        self._dispatchable = all(i >= 0 for i in static_argnums) and \
            not any(isinstance(s, PartitionSpec) for s in specs)

    def dispatcher(self) -> Any:
        """The callable ``jit`` returns: jaxlib's dispatcher, with the AOT stages."""
        fun = self.fun
        nums = [i for i in self.static_argnums if i >= 0]
        key = ("plait.jit", self.static_argnums, self.static_argnames, self.donate_argnums,
               self.donate_argnames, self.inline, self.keep_unused,
               _hashable(self.in_shardings), _hashable(self.out_shardings), self.device)
        f = dispatch.make_dispatcher(fun_name(fun), fun, self.cache_miss, nums,
                                     self.static_argnames, key)
        functools.update_wrapper(f, fun)
        f.trace, f.lower, f.eval_shape = self.trace, self.lower, self.eval_shape
        f.clear_cache = functools.partial(self.clear_cache, f)
        f._plait_jit = self  # (export accepts only what jit returns)
        return f

    def clear_cache(self, dispatcher: Any) -> None:
        """Forget this function's traces and the dispatcher's executables."""
        self._cache.clear()
        dispatcher._clear_cache()

    # -- tracing ------------------------------------------------------------
    def _flat(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> FlatCall:
        return flatten_call(self.fun, args, kwargs, self.static_argnums, self.static_argnames)

    def _donated(self, call: FlatCall) -> tuple[bool, ...]:
        # Every leaf of a donated argument is donated.
        nums, names = self.donate_argnums, self.donate_argnames
        if not nums and not names:
            return (False,) * len(call.leaves)
        return tuple(p[1].idx in nums if p[0].idx == 0 else
                     getattr(p[1], "key", None) in names for p in call.paths)

    def _entry(self, call: FlatCall) -> _Entry:
        names = call.debug_info.arg_names
        avals = _arg_avals(call.leaves, names)
        layouts = self._layouts(call.leaves, call)
        device = self._device(call.leaves)
        key = (call.in_tree, avals, call.static_key, _config.trace_context, layouts,
               current_mesh(), device)
        entry = self._cache.get(key)
        if entry is None:
            self._explain_miss(key, names)
            start = time.perf_counter()
            traced = trace_function(self._constrained(call), call, "jit", refs=self)
            end = time.perf_counter()
            monitoring.record_phase(monitoring.TRACE, start, end, fun_name=fun_name(self.fun))
            if _config.log_compiles:
                compile_logger.warning("Finished tracing %s for jit in %.9f sec",
                                       fun_name(self.fun), end - start)
            entry = _Entry(traced, self._donated(call), layouts=layouts, device=device)
            if not _has_tracers(traced.closed.consts):
                self._cache[key] = entry
        return entry

    def _device(self, leaves: Sequence[Any]) -> Any:
        """The device a call on ``leaves`` runs on (``None``: the default device):
        ``jit(device=)``'s, else where the Arrays among ``leaves`` are."""
        if self.device is None:
            return committed_device(leaves)
        return self.device

    def _explicit_in(self, call: FlatCall) -> list[NamedSharding | None]:
        """Per flat argument, the ``in_shardings`` given for it (``None`` if none)."""
        if self.in_shardings is None:
            return [None] * len(call.leaves)
        args, kwargs = tree_unflatten(call.in_tree, call.leaves)
        # As JAX, in_shardings covers the positional arguments that are not static
        # (a static one has no leaves: leaving it out leaves the leaves in order).
        static = {i for i, _ in call.static_key[0]}
        args = tuple(a for i, a in enumerate(args) if i not in static)
        given = self.in_shardings
        if _is_sharding(given) or given is None:
            prefix: Any = (given,) * len(args)
        else:
            prefix = tuple(given)
        per_arg = _resolved(broadcast_prefix(prefix, args, "jit in_shardings",
                                             _is_sharding), "in_shardings")
        return per_arg + [None] * (len(call.leaves) - len(per_arg))

    def _layouts(self, leaves: Sequence[Any], call: FlatCall | None
                 ) -> tuple[NamedSharding | None, ...]:
        """Per flat argument, where the program takes it: the ``in_shardings`` given, else
        the layout of an argument already over a mesh (or a ``ShapeDtypeStruct``'s)."""
        own = tuple(arg_sharding(x) if type(x) is ArrayImpl else
                    _laid_out(struct_sharding(x)) if type(x) is ShapeDtypeStruct else None
                    for x in leaves)
        if self.in_shardings is None or call is None:
            return own
        return tuple(e if e is not None else o for e, o in zip(self._explicit_in(call), own))

    def _constrained(self, call: FlatCall) -> Callable[..., Any]:
        """The function, its arguments and results constrained to the given shardings
        (so that a staged call keeps them)."""
        if self.in_shardings is None and self.out_shardings is None:
            return self.fun
        fun, out_shardings = self.fun, self.out_shardings
        explicit = self._explicit_in(call)

        def constrained(*args: Any, **kwargs: Any) -> Any:
            dyn, kw_tree = tree_flatten((args, kwargs))
            placed = [x if s is None or not isinstance(x, Tracer)
                      else constrain(x, s) for x, s in
                      zip(dyn, explicit + [None] * (len(dyn) - len(explicit)))]
            a, k = tree_unflatten(kw_tree, placed)
            out = fun(*a, **k)
            if out_shardings is None:
                return out
            leaves, tree = tree_flatten(out)
            per = _resolved(broadcast_prefix(out_shardings, out, "jit out_shardings",
                                             _is_sharding), "out_shardings")
            return tree_unflatten(tree, [x if s is None else constrain(x, s)
                                         for x, s in zip(leaves, per)])
        return constrained

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
    def cache_miss(self, *args: Any, **kwargs: Any) -> tuple[Any, FastPath | None, bool]:
        """A call the C++ dispatcher could not serve: the result, and the fast path
        for the call's signature (``None``: this signature stays on this path)."""
        # A try costs nothing until something raises: the API boundary is inlined so
        # that no plait frame stays in a user's traceback.
        try:
            if _config.disable_jit:
                # Never cached: the dispatcher keys on the option, so this path runs
                # for every call made while jit is disabled.
                return self.fun(*args, **kwargs), None, False
            # (Under a library's trace too, the call is staged: bound for it to process,
            # inline=True included, as JAX binds it.)
            staging = bool(_state.stack) or _state.user is not None
            if self.inline and _state.stack and _state.user is None:
                if kwargs or not all(isinstance(a, Array) for a in args):
                    args, kwargs = self._host_leaves_as_arrays(args, kwargs)
                return self.fun(*args, **kwargs), None, False
            hit = None if staging else self._lookup(args, kwargs)
            if hit is not None:
                entry, leaves = hit
            else:
                call = self._flat(args, kwargs)
                if self._closure_refs or ref_leaves(call.leaves):
                    return self._call_with_refs(call), None, False
                try:
                    entry = self._entry(call)
                except ForeignRef as e:
                    if e.claimed_by is not self:
                        raise
                    self._closure_refs += (e.ref,)
                    return self._call_with_refs(call), None, False
                leaves = call.leaves
                if staging:
                    return self._stage(call, entry.traced, entry.donated), None, False
            if _config.debug_key_reuse:
                # Checked on every call: no fast path (the dispatcher keys on the options).
                return self._run_tracking_keys(entry, leaves), None, False
            out = self._run(entry, leaves)
            if _config.check_values:
                # Checked on every call: no fast path (the dispatcher keys on the options).
                check_jit_result(tree_flatten(out)[0], fun_name(self.fun),
                                 lambda: self.fun(*args, **kwargs))
                return out, None, False
            return out, self._fast_path(entry, leaves), False
        except Exception as e:
            hide_plait_frames(e)
            raise

    def _host_leaves_as_arrays(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                               ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The arguments of an inlined call with their Python scalars and NumPy arrays as
        Arrays: the function sees Arrays, as in a call that is not inlined (and in JAX,
        which traces an inlined function too)."""
        n = len(args)
        nums = {i % n for i in self.static_argnums if -n <= i < n}
        return (tuple(a if i in nums else tree_map(_host_as_array, a)
                      for i, a in enumerate(args)),
                {k: v if k in self.static_argnames else tree_map(_host_as_array, v)
                 for k, v in kwargs.items()})

    def _lookup(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                ) -> tuple[_Entry, list[Any]] | None:
        """The compiled entry of a call and its flat arguments, found without naming
        the arguments (which costs far more); ``None`` if there is none yet.

        Signatures the dispatcher cannot run itself come here on every call (Python
        scalars while jaxlib's x64 flag differs from plait's, float0 results).
        """
        try:
            dyn_args, dyn_kwargs, static_key = mark_static(args, kwargs, self.static_argnums,
                                                           self.static_argnames)
            leaves, tree = tree_flatten((dyn_args, dyn_kwargs))
            avals = _arg_avals(leaves, ())
        except (ArgumentError, RefError):
            return None  # the named path raises it again, naming the argument
        if self.in_shardings is not None:
            return None  # (the named path resolves them against the arguments)
        try:
            device = self._device(leaves)
        except ArgumentError:
            return None
        entry = self._cache.get((tree, avals, static_key, _config.trace_context,
                                 self._layouts(leaves, None), current_mesh(), device))
        if entry is None or entry.executable is None:
            return None
        return entry, leaves

    def _call_with_refs(self, call: FlatCall) -> Any:
        """A call of a function that takes or closes over Refs: the jitted function of
        their values (:func:`~plait.frontend.api.refs.pure_with_refs`), run or staged,
        and its final values written back to the Refs."""
        # (a tree of Nones, as flax gives, asks for nothing)
        if tree_leaves(self.in_shardings) or tree_leaves(self.out_shardings) or \
                self.donate_argnums:
            raise RefError(f"jit({fun_name(self.fun)}): in_shardings, out_shardings and "
                           "donate_argnums are not supported for functions that take or "
                           "close over Refs")
        pos = ref_leaves(call.leaves)
        refs = [call.leaves[i] for i in pos] + list(self._closure_refs)
        check_distinct(refs, f"jit({fun_name(self.fun)})")
        key = (call.in_tree, tuple(pos), call.static_key, len(self._closure_refs))
        pure = self._pures.get(key)
        if pure is None:
            fun = pure_with_refs(self.fun, call.in_tree, pos, call.static_key,
                                 lambda: self._live_refs)
            functools.update_wrapper(fun, self.fun)
            pure = self._pures[key] = jit(fun, keep_unused=self.keep_unused)
        others = [x for i, x in enumerate(call.leaves) if i not in pos]
        values = [read(r) for r in refs]
        self._live_refs = refs
        try:
            # (A Ref found while tracing ``pure`` is carried by ``pure``'s own jit.)
            out, finals = pure(values, others)
        finally:
            self._live_refs = []
        for r, v in zip(refs, finals):
            write(r, v)
        return out

    def _run_tracking_keys(self, entry: _Entry, leaves: Sequence[Any]) -> Any:
        """A call checked and recorded for key reuse (``debug_key_reuse``): its
        arguments and closed-over constants are the jaxpr's inputs."""
        closed = entry.traced.closed
        sig = jaxpr_signature(closed)
        inputs = [*leaves, *closed.consts]
        check_consumption(sig, "jit-compiled function", inputs)
        out = self._run(entry, leaves)
        record_consumption(sig, inputs, tree_flatten(out)[0])
        return out

    def _fast_path(self, entry: _Entry, leaves: Sequence[Any]) -> FastPath | None:
        if (entry.fast is None or not self._dispatchable
                or not dispatch.plain_args_ok(leaves, entry.traced.in_avals)):
            return None
        return entry.fast

    def _stage(self, call: FlatCall, traced: TracedFunction, donated: tuple[bool, ...]) -> Any:
        closed, consts = consts_as_invars(traced.closed)
        outs = bind(jit_p, *consts, *call.leaves, name=traced.debug_info.func_name, jaxpr=closed,
                    donated_invars=(False,) * len(consts) + donated,
                    keep_unused=self.keep_unused, inline=self.inline)
        return tree_unflatten(traced.out_tree, outs)

    def _run(self, entry: _Entry, leaves: Sequence[Any]) -> Any:
        if entry.executable is None:
            # Frames up to the user's call: compile_traced, _run, cache_miss (the
            # dispatcher's frame is not a Python one).
            entry.executable, entry.kept, entry.donated = compile_traced(
                entry.traced, entry.donated, self.keep_unused, stacklevel=3,
                in_shardings=entry.layouts, out_shardings=self._out_layouts(entry),
                device=entry.device, compiler_options=self.compiler_options)
            outs = entry.traced.closed.out_avals
            # (A program with host callbacks runs through Executable.execute, which
            # waits for it and reports a callback's exception; float0 and token results
            # are not Arrays.)
            if all(type(a) is ShapedArray and a.dtype != dt.float0 for a in outs) and \
                    entry.executable.callbacks is None:
                entry.fast = dispatch.fast_path(entry.executable, entry.kept,
                                                entry.traced.out_tree, shaped_avals(outs))
        if self.device is not None:
            # (jit(device=) moves the Arrays committed elsewhere, as JAX does.)
            home = sharding_for(self.device)
            leaves = [x.to_device(self.device) if type(x) is ArrayImpl and x.sharding is not home
                      else x for x in leaves]
        return execute(entry.executable, entry.traced, leaves, entry.donated, entry.kept)

    def _out_layouts(self, entry: _Entry) -> tuple[NamedSharding | None, ...]:
        n = len(entry.traced.closed.out_avals)
        if self.out_shardings is None:
            return (None,) * n
        placeholder = tree_unflatten(entry.traced.out_tree, [0] * n)
        return tuple(_resolved(broadcast_prefix(self.out_shardings, placeholder,
                                                "jit out_shardings", _is_sharding),
                               "out_shardings"))

    # -- ahead of time ---------------------------------------------------------
    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """Stage out the function for these arguments (``ShapeDtypeStruct``\\ s allowed)."""
        call = self._flat(args, kwargs)
        if ref_leaves(call.leaves):
            raise RefError(f"jit({fun_name(self.fun)}).trace/lower: Ref arguments are not "
                           "supported ahead of time; call the function instead")
        try:
            entry = self._entry(call)
        except ForeignRef as e:
            if e.claimed_by is not self:
                raise
            raise RefError(f"jit({fun_name(self.fun)}).trace/lower: the function closes over "
                           "a Ref; ahead-of-time stages take only functions without Refs "
                           "(call it instead)") from None
        return Traced(entry.traced, entry.donated, self.keep_unused, entry.layouts,
                      self._out_layouts(entry), self.compiler_options)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Trace and lower to StableHLO for these arguments."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The output shapes and dtypes, as a pytree of ``ShapeDtypeStruct``\\ s."""
        return self.trace(*args, **kwargs).out_info


def _host_as_array(x: Any) -> Any:
    if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
        return ArrayImpl.from_numpy(np.asarray(x, python_scalar_dtype(x)), weak_type=True)
    if isinstance(x, np.ndarray | np.generic):
        return ArrayImpl.from_numpy(np.asarray(x, dt.canonicalize(x.dtype)))
    return x


def _check_device(device: Any, in_shardings: Any, out_shardings: Any) -> None:
    """Validate ``jit(device=)``, which JAX deprecates (and so warns as JAX does)."""
    warnings.warn("jit: the device argument is deprecated (as in JAX): device_put the "
                  "arguments on the device instead; the computation follows them",
                  DeprecationWarning, stacklevel=3)
    if in_shardings is not None or out_shardings is not None:
        raise ValueError("jit: expected device= or in_shardings/out_shardings, but got both: "
                         "give the device through the shardings")
    if device not in devices():
        raise ArgumentError(f"jit device: expected one of plait.devices() {devices()}, but "
                            f"got {device!r}")


def _is_sharding(x: Any) -> bool:
    return isinstance(x, NamedSharding | PartitionSpec | Format)


def _resolved(shardings: Sequence[Any], what: str) -> list[NamedSharding | None]:
    r"""The shardings, bare ``PartitionSpec``\ s laid over the current mesh.

    Raises:
      ArgumentError: an entry that is not a sharding.
    """
    out: list[NamedSharding | None] = []
    for i, s in enumerate(shardings):
        s = resolve(default_sharding_of(s, f"jit {what}"), f"jit {what}")
        if s is not None and not isinstance(s, NamedSharding):
            raise ArgumentError(f"jit {what}: expected a NamedSharding (or None) for leaf {i}, "
                                f"but got {type(s).__name__}: {s!r}")
        out.append(s)
    return out


def _laid_out(s: NamedSharding | None) -> NamedSharding | None:
    """A struct's sharding as the layout ``jit`` takes the argument in: one over an
    abstract mesh (as ``eval_shape`` gives) only types the argument."""
    return s if s is not None and isinstance(s.mesh, Mesh) else None


def _hashable(shardings: Any) -> Any:
    leaves, tree = tree_flatten(shardings, is_leaf=_is_sharding)
    return (tree, tuple(leaves))


@overload
def jit(fun: Callable[P, R], *, static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Sequence[str] | None = None, keep_unused: bool = False,
        in_shardings: Any = None, out_shardings: Any = None, inline: bool = False,
        backend: str | None = None, device: Any = None,
        compiler_options: dict[str, Any] | None = None) -> Jitted[P, R]: ...


@overload
def jit(fun: None = None, *, static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Sequence[str] | None = None, keep_unused: bool = False,
        in_shardings: Any = None, out_shardings: Any = None, inline: bool = False,
        backend: str | None = None, device: Any = None,
        compiler_options: dict[str, Any] | None = None
        ) -> Callable[[Callable[P, R]], Jitted[P, R]]: ...


def jit(fun: Callable[P, R] | None = None, *, static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Sequence[str] | None = None, keep_unused: bool = False,
        in_shardings: Any = None, out_shardings: Any = None, inline: bool = False,
        backend: str | None = None, device: Any = None,
        compiler_options: dict[str, Any] | None = None
        ) -> Jitted[P, R] | Callable[[Callable[P, R]], Jitted[P, R]]:
    """Compile ``fun`` with XLA: traced on the first call per input signature.

    ``static_argnums``/``static_argnames`` name arguments passed as Python values
    (hashable; part of the cache key, folded into the program).
    ``donate_argnums`` name arguments whose buffers the call may reuse; donated
    Arrays are deleted by the call.  Arguments the function does not use are
    left out of the compiled program unless ``keep_unused`` is true.
    ``in_shardings``/``out_shardings`` (a :class:`~plait.sharding.NamedSharding`, or a
    prefix of the positional arguments / of the result of them, ``None`` where left
    open) lay arguments and results out over a mesh: the program is compiled for the
    mesh's devices and partitioned by XLA.  ``donate_argnames`` donates by parameter
    name (completed from the signature, as the static arguments are).  With ``inline``, a
    call made while tracing another function adds ``fun``'s equations to that trace
    instead of a ``jit`` equation.  ``backend`` may only be ``'cpu'``, plait's one
    platform; ``device`` (one of :func:`~plait.devices`) runs every call there (not with
    ``in_shardings``).  ``compiler_options`` (XLA option names to ``str``, ``bool``,
    ``int`` or ``float`` values) override XLA's options when ``fun`` is compiled.  Without
    ``fun``, returns a decorator taking it (``@jit(static_argnums=0)``).
    """
    if fun is None:
        def decorate(f: Callable[P, R]) -> Jitted[P, R]:
            return jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                       donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                       keep_unused=keep_unused, in_shardings=in_shardings,
                       out_shardings=out_shardings, inline=inline, backend=backend,
                       device=device, compiler_options=compiler_options)
        return decorate
    if not callable(fun):
        raise ArgumentError(f"jit: expected a callable, but got {type(fun).__name__}")
    nums, names = static_args(static_argnums, static_argnames)
    nums, names = infer_static(fun, nums, names, static_argnums is not None,
                               static_argnames is not None)
    if backend not in (None, "cpu"):
        raise ArgumentError(f"jit: expected backend None or 'cpu' (plait's one platform), "
                            f"but got {backend!r}")
    if device is not None:
        _check_device(device, in_shardings, out_shardings)
    donate, donate_names = static_args(donate_argnums, donate_argnames, "donate")
    donate, donate_names = infer_static(fun, donate, donate_names, donate_argnums is not None,
                                        donate_argnames is not None, "donate")
    if set(donate) & set(nums):
        raise ArgumentError(f"jit: arguments {sorted(set(donate) & set(nums))} cannot be both "
                            "static and donated")
    jitted: Jitted[P, R] = JitFunction(fun, nums, names, donate, keep_unused, in_shardings,
                                       out_shardings, donate_names, inline, device,
                                       compiler_option_pairs(compiler_options, "jit")
                                       ).dispatcher()
    return jitted

"""jit's fast path: jaxlib's C++ dispatcher (``PjitFunction``), driven by plait.

A jitted function is a ``PjitFunction``.  On each call it flattens the arguments
with :data:`~plait.frontend.core.tree_util.dispatch_registry` (which sees through
concrete Arrays to their device buffers) and computes a signature in C++: the
pytree structure, each leaf's shape, dtype and weak type, the static argument
values, and the values of the jaxlib ``Config`` objects into which plait mirrors
its options (:mod:`plait.ir.config`) and whether a trace is active
(:mod:`plait.frontend.core.tracing`).  On a hit it runs the cached executable and
rebuilds the result, entering Python only to wrap each result buffer in an
Array.  On a miss it calls plait's Python path, which traces, compiles and runs,
and which returns a :class:`FastPath` describing the executable so that the
next call with that signature stays in C++.

jaxlib reads its x64 flag, its disable-jit flag and its post-call hook from
three process-wide ``Config`` slots.  plait fills them when nobody has; when
``jax`` is imported too, JAX owns them, and arguments whose device type depends
on the x64 flag (Python scalars, NumPy arrays) take the Python path whenever
JAX's flag differs from plait's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jaxlib._jax as _jax
import numpy as np

from plait.frontend.core.array_impl import ArrayImpl, result_array
from plait.frontend.core.tree_util import PyTreeDef, dispatch_registry
from plait.ir.avals import ShapedArray
from plait.ir.caches import register_cache
from plait.ir.config import on_update
from plait.ir.config import values as _config
from plait.lowering import multi_device, runtime
from plait.lowering.runtime import Executable

__all__ = ["FastPath", "make_dispatcher", "fast_path", "plain_args_ok"]


class FastPath(NamedTuple):
    """What jaxlib's dispatcher needs to run an executable on its own (the field
    names are the ones it reads)."""

    xla_executable: Any
    """The loaded executable."""
    out_pytree_def: PyTreeDef
    """The result structure, in the dispatch registry (Arrays as nodes)."""
    in_shardings: list[runtime.Sharding]
    """Where each argument must be."""
    out_shardings: list[runtime.Sharding]
    """Where each result is."""
    out_avals: list[ShapedArray]
    """The type of each result buffer."""
    out_committed: list[bool]
    """Whether each result is committed to its device."""
    kept_var_bitvec: list[bool]
    """Which arguments the executable takes."""
    in_device_local_layouts: list[None]
    """Argument layouts (``None``: the default)."""
    const_args: list[Any]
    """Constants passed before the arguments (none: plait folds them into the module)."""


# The dispatcher cannot call back into Python to read plait's options: it keys its
# cache on the values of jaxlib ``Config`` objects made with ``include_in_jit_key``,
# and reads the x64 flag from the one registered as its x64 state.  These mirror
# the options.
_jit_key = _jax.config.Config("plait_trace_context", _config.trace_context,
                              include_in_jit_key=True)
_x64_state = _jax.config.Config("plait_enable_x64", _config.enable_x64)


def _mirror_options() -> None:
    _jit_key.set_global(_config.trace_context)
    _x64_state.set_global(_config.enable_x64)


on_update(_mirror_options)


def _claim_jit_state() -> bool:
    """Fill jaxlib's jit-state slots unless someone (JAX) already has; whether plait did."""
    def miss(*args: Any, **kwargs: Any) -> tuple[None, None, bool]:
        return None, None, False

    probe = _jax.pjit("probe", None, miss, [], [], (), dispatch_registry, miss)
    try:
        probe()
        return False
    except ValueError as e:
        if "is not set" not in str(e):
            raise
    _jax.jax_jit.set_disable_jit_state(_jax.config.Config("plait_disable_jit", False))
    _jax.jax_jit.set_enable_x64_state(_x64_state)
    _jax.jax_jit.set_post_hook_state(_jax.config.Config("plait_post_hook", None))
    return True


_owns_jit_state = _claim_jit_state()
_cache = _jax.PjitFunctionCache(capacity=4096)


class _DispatchCache:
    """The dispatcher's executables, as :func:`plait.clear_caches` sees them."""

    name = "jit dispatch"

    def clear(self) -> None:
        """Forget every jitted function's cached signatures."""
        _cache.clear()


_dispatch_cache = _DispatchCache()
register_cache(_dispatch_cache)


def _shard_arg(x: Any, sharding: Any, layout: Any) -> Any:
    # jaxlib calls this for an argument it cannot place itself: a NumPy value or Python
    # scalar for an SPMD program, or an array laid out otherwise than the program takes it.
    if type(sharding) is multi_device.MeshSharding and sharding.named is not None:
        aval = getattr(x, "aval", None)
        if isinstance(aval, ShapedArray):  # a device buffer: its value, through the host
            return multi_device.reshard(x, aval, sharding, runtime.to_numpy)
        arr = np.asarray(x)
        return multi_device.put_sharded(arr, ShapedArray(arr.shape, arr.dtype), sharding.named)
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):  # a device buffer elsewhere
        return runtime.copy_to_device(x, aval, sharding._device)
    arr = np.asarray(x)
    return runtime.device_put(arr, ShapedArray(arr.shape, arr.dtype), sharding._device)


def make_dispatcher(name: str, fun: Callable[..., Any], cache_miss: Callable[..., Any],
                    static_argnums: Sequence[int], static_argnames: Sequence[str],
                    key: tuple[Any, ...]) -> Any:
    """A ``PjitFunction`` calling ``cache_miss(*args, **kwargs)`` on a miss.

    ``cache_miss`` returns ``(result, FastPath | None, False)``; with ``None`` the
    signature always takes the Python path.  ``key`` holds the jit options: two
    dispatchers of the same ``fun`` with equal keys share their cache.
    """
    return _jax.pjit(name, fun, cache_miss, list(static_argnums), list(static_argnames), key,
                     dispatch_registry, _shard_arg, _cache)


class _Result:
    """One result of an executable, in the structure the dispatcher rebuilds results
    into: a node whose one leaf is the result's buffer, rebuilt as an Array."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval


dispatch_registry.register_node(_Result, lambda r: ((0,), r.aval), result_array)


def fast_path(exe: Executable, kept: Sequence[bool], out_tree: PyTreeDef,
              out_avals: Sequence[ShapedArray]) -> FastPath:
    """The fast path of ``exe``, which takes the ``kept`` flat arguments and returns
    results of types ``out_avals`` in the structure ``out_tree``."""
    tree = dispatch_registry.flatten(out_tree.unflatten(map(_Result, out_avals)), None)[1]
    n_in, n_out = sum(kept), len(out_avals)
    sharding = runtime.sharding_for(exe.device)
    ins = exe.in_shardings if exe.in_shardings is not None else [sharding] * n_in
    return FastPath(exe.loaded, tree, list(ins), list(exe.out_shardings), list(out_avals),
                    [True] * n_out, list(kept), [None] * n_in, [])


def plain_args_ok(leaves: Sequence[Any], avals: Sequence[ShapedArray]) -> bool:
    """Whether jaxlib gives every leaf that is not an Array (a Python scalar, a NumPy
    value) the device type plait gives it: only while the x64 flag jaxlib converts
    with agrees with plait's, and for the types whose conversion both define."""
    plain = [(x, a) for x, a in zip(leaves, avals) if type(x) is not ArrayImpl]
    if not plain:
        return True
    x64 = _config.enable_x64
    if _jaxlib_x64() is not x64:
        return False
    for x, aval in plain:
        if type(x) not in _PLAIN_TYPES and not isinstance(x, np.ndarray | np.generic):
            return False
        try:
            sig = _jax.jax_jit._ArgSignatureOfValue(x, x64)
        except Exception:  # a dtype jaxlib does not know (float0)
            return False
        if sig.dtype != aval.dtype or tuple(sig.shape) != aval.shape:
            return False
    return True


def _jaxlib_x64() -> bool | None:
    """The x64 flag jaxlib converts arguments with: JAX's when JAX is loaded (it takes
    jaxlib's jit state on import; its value is in jaxlib's trace context), else plait's
    if plait holds the state; ``None`` if it cannot be known."""
    ctx = dict(zip(_jax.config.trace_context_names(), _jax.config.trace_context()))
    x64 = ctx.get("jax_enable_x64")
    if x64 is None:
        return _config.enable_x64 if _owns_jit_state else None
    return bool(x64)


_PLAIN_TYPES = (bool, int, float, complex)

"""Host callbacks (JAX's ``pure_callback``, ``io_callback``, ``debug.callback`` and
``debug.print``): Python functions called while a program runs, on NumPy arrays.

Seed 003's table, as JAX 0.10.2 behaves:

============== ============= ==== ============== ========== ============== ===========
callback       returns value jit  vmap           grad       scan/while     always runs
============== ============= ==== ============== ========== ============== ===========
pure_callback  yes           yes  vmap_method    custom_jvp yes            no
io_callback    yes           yes  unordered only no         yes            yes
debug.callback no            yes  yes            yes        yes            yes
============== ============= ==== ============== ========== ============== ===========

The callback gets the arguments' pytrees with NumPy arrays for leaves; results are
checked against ``result_shape_dtypes`` (JAX's messages), and an exception raised in a
callback surfaces as :class:`~plait.errors.CallbackError` from the call that ran it.
"""

from __future__ import annotations

import copy
import logging
import string
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend.core.arguments import fun_name
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.source_lines import user_frame_info
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import bind
from plait.frontend.core.tree_util import tree_flatten, tree_unflatten
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.effects import DEBUG, ORDERED_DEBUG
from plait.ir.errors import ArgumentError
from plait.ir.primitives.callbacks import (
    VMAP_METHODS,
    HostCallback,
    debug_callback_p,
    io_callback_p,
    pure_callback_p,
)
from plait.lowering import guards

__all__ = ["pure_callback", "io_callback", "debug_callback", "debug_print", "debug_log"]

# ``debug.log``'s records go to this logger (JAX's go to ``jax._src.debugging``'s).
logger = logging.getLogger("plait.debug")


def _result_avals(result_shape_dtypes: Any, what: str) -> tuple[Any, tuple[ShapedArray, ...]]:
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            raise ArgumentError(f"{what}: expected result_shape_dtypes to hold objects with "
                                f"shape and dtype (ShapeDtypeStructs), but got {leaf!r}")
        avals.append(ShapedArray(tuple(shape), dt.canonicalize(dtype)))
    return tree, tuple(avals)


def _flat_results(out: Any, tree: Any) -> tuple[np.ndarray, ...]:
    """The callback's results as flat arrays of canonical dtypes (their shapes and dtypes
    are checked where the program calls it: :mod:`plait.lowering.rules.callbacks`)."""
    leaves, got_tree = tree_flatten(out)
    if got_tree != tree:
        raise RuntimeError(f"Mismatched number of outputs from callback. Expected the "
                           f"structure {tree}, Actual: {got_tree}")
    # (float64 results become float32 without 64-bit types, as JAX canonicalizes them.)
    return tuple(np.asarray(x).astype(dt.canonicalize(np.asarray(x).dtype), copy=False)
                 for x in leaves)


def _flat_callback(callback: Callable[..., Any], in_tree: Any, out_tree: Any) -> HostCallback:
    def flat(*arrays: Any) -> Sequence[Any]:
        # plait Arrays, as JAX passes jax Arrays (each a copy, which device_put makes:
        # the buffers XLA hands over live only for the call).
        with guards.explicit_put():  # (JAX device_puts them: explicit transfers)
            leaves = [ArrayImpl.from_numpy(np.asarray(a)) for a in arrays]
        args, kwargs = tree_unflatten(in_tree, leaves)
        out = callback(*args, **kwargs)
        return () if out_tree is None else _flat_results(out, out_tree)
    return HostCallback(flat, f"_FlatCallback(callback_func={fun_name(callback)}, "
                              f"in_tree={in_tree})")


@api_boundary
def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: None = None, vmap_method: str | None = None,
                  **kwargs: Any) -> Any:
    """Call ``callback(*args, **kwargs)`` on the host, as a pure function: its results
    (shaped as ``result_shape_dtypes``) may be cached, reordered or, unused, never
    computed.  ``vmap_method`` says how ``vmap`` applies it (``'sequential'``,
    ``'sequential_unrolled'``, ``'expand_dims'``, ``'broadcast_all'``).

    Raises:
      ValueError: differentiated (give the function a ``custom_jvp``).
    """
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be None or one of {VMAP_METHODS}, but got "
                         f"{vmap_method!r}")
    _no_sharding(sharding, "pure_callback")
    flat, in_tree = tree_flatten((args, kwargs))
    out_tree, avals = _result_avals(result_shape_dtypes, "pure_callback")
    outs = bind(pure_callback_p, *flat, callback=_flat_callback(callback, in_tree, out_tree),
                result_avals=avals, sharding=None, vmap_method=vmap_method)
    return tree_unflatten(out_tree, outs)


@api_boundary
def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: None = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Call ``callback(*args, **kwargs)`` on the host for its side effects (and results
    shaped as ``result_shape_dtypes``): it is never removed; ``ordered`` calls run in
    program order (and cannot be batched).

    Raises:
      ValueError: differentiated with respect to an argument.
    """
    _no_sharding(sharding, "io_callback")
    flat, in_tree = tree_flatten((args, kwargs))
    out_tree, avals = _result_avals(result_shape_dtypes, "io_callback")
    outs = bind(io_callback_p, *flat,
                callback=_flat_callback(callback, in_tree, out_tree),
                result_avals=avals, ordered=bool(ordered), sharding=None)
    return tree_unflatten(out_tree, outs)


@api_boundary
def debug_callback(callback: Callable[..., Any], *args: Any, ordered: bool = False,
                   **kwargs: Any) -> None:
    """Call ``callback(*args, **kwargs)`` on the host for its side effects, whenever the
    program runs (never removed; under ``vmap`` once per element; under ``grad`` with
    the primal values).  ``ordered`` calls run in program order."""
    flat, in_tree = tree_flatten((args, kwargs))
    bind(debug_callback_p, *flat, callback=_flat_callback(callback, in_tree, None),
         effect=ORDERED_DEBUG if ordered else DEBUG, partitioned=False)


@api_boundary
def debug_print(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """Print ``fmt.format(*args, **kwargs)`` with the values the program computes, when
    it runs (``jax.debug.print``).

    Raises:
      ValueError: ``fmt`` is not a format string for these arguments.
    """
    if not isinstance(fmt, str):
        raise ArgumentError(f"debug.print: expected a format string, but got {fmt!r}")
    _check_format(fmt, len(args), kwargs)

    def show(*a: Any, **k: Any) -> None:
        print(fmt.format(*a, **k))
    debug_callback(show, *args, ordered=ordered, **kwargs)


@api_boundary
def debug_log(fmt: str, *args: Any, ordered: bool = False, **kwargs: Any) -> None:
    """Like :func:`debug_print`, but the text goes to the ``plait.debug`` logger as an
    ``INFO`` record of the line that called ``debug_log`` (``jax.debug.log``); the
    record is handled whatever the logger's level, as JAX handles it.

    Raises:
      ValueError: ``fmt`` is not a format string for these arguments.
    """
    if not isinstance(fmt, str):
        raise ArgumentError(f"debug.log: expected a format string, but got {fmt!r}")
    _check_format(fmt, len(args), kwargs)
    where = user_frame_info()
    record = logger.makeRecord(logger.name, logging.INFO,
                               where.file if where else "(unknown file)",
                               where.line if where else 0, "", (), None)

    def emit(*a: Any, **k: Any) -> None:
        out = copy.copy(record)
        out.msg = fmt.format(*a, **k)
        logger.handle(out)
    debug_callback(emit, *args, ordered=ordered, **kwargs)


def _check_format(fmt: str, n_args: int, kwargs: dict[str, Any]) -> None:
    # (Checked when staged, so that a typo is found at trace time, not in the callback.)
    auto = 0
    for _, name, _, _ in string.Formatter().parse(fmt):
        if name is None:
            continue
        key = name.split(".")[0].split("[")[0]
        if key == "":
            auto += 1
            if auto > n_args:
                raise ValueError(f"debug.print: the format string {fmt!r} has more {{}} "
                                 f"fields than the {n_args} positional arguments")
        elif key.isdigit():
            if int(key) >= n_args:
                raise ValueError(f"debug.print: the format string {fmt!r} refers to argument "
                                 f"{key}, but only {n_args} were given")
        elif key not in kwargs:
            raise ValueError(f"debug.print: the format string {fmt!r} refers to {key!r}, "
                             f"which is not among the keyword arguments {sorted(kwargs)}")


def _no_sharding(sharding: Any, what: str) -> None:
    if sharding is not None:
        raise NotImplementedError(f"{what}: sharding= is not supported yet (plait runs on "
                                  "one device)")

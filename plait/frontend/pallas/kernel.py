"""What a Pallas kernel calls besides its Refs: ``when``, ``loop``, ``run_scoped``,
Triton's atomics and ``dot``, and the hints that change nothing on the CPU
(``multiple_of``, ``max_contiguous``).  Atomics are read-modify-writes: a kernel's grid
points run one after another.  See ``docs/pallas.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from plait.frontend import lax
from plait.frontend.api.callbacks import debug_print as _debug_print
from plait.frontend.api.control_flow import cond, fori_loop
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.tree_util import tree_flatten, tree_map, tree_unflatten
from plait.frontend.numpy import broadcast_to, maximum, minimum, promote_types, where
from plait.frontend.numpy._core import as_array
from plait.frontend.pallas.call import fresh_buffers_zero
from plait.frontend.pallas.refs import BlockRef, as_view, load, store
from plait.frontend.pallas.specs import uninitialized
from plait.frontend.pallas.tpu import Semaphore, fresh_semaphore, is_semaphore_type
from plait.ir import dtypes as dt
from plait.ir.errors import PallasError
from plait.ir.primitives.linalg import Precision

__all__ = ["align_to", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min",
           "atomic_or", "atomic_xchg", "atomic_xor", "broadcast_to", "cdiv", "debug_barrier",
           "debug_print", "dot", "empty", "empty_like", "loop", "max_contiguous", "multiple_of",
           "next_power_of_2", "reciprocal", "run_scoped", "run_state", "strides_from_shape",
           "when", "with_scoped"]

T = TypeVar("T")


def when(condition: Any, /) -> Callable[[Callable[[], None]], None]:
    """A decorator: run the function (which writes Refs) only when ``condition`` holds."""
    def run(f: Callable[[], None]) -> None:
        if isinstance(condition, bool | np.bool_):
            if condition:
                f()
            return
        cond(condition, f, lambda: None)
    return run


def loop(lower: Any, upper: Any, *, init_carry: Any = None, step: Any = 1,
         unroll: int | bool | None = None) -> Callable[[Callable[..., Any]], Any]:
    """A decorator: run ``body(i)`` (or ``body(i, carry) -> carry`` given ``init_carry``)
    for ``i`` from ``lower`` to ``upper`` by ``step``; returns the final carry."""
    def run(body: Callable[..., Any]) -> Any:
        count = (upper - lower + step - 1) // step
        if isinstance(count, int):
            count = max(0, count)

        def each(k: Any, carry: Any) -> Any:
            i = lower + k * step
            if init_carry is None:
                body(i)
                return carry
            return body(i, carry)
        return fori_loop(0, count, each, init_carry, unroll=unroll)
    return run


def run_scoped(f: Callable[..., T], *types: Any, collective_axes: Any = (),
               **kw_types: Any) -> T:
    """``f`` called with a fresh, uninitialized Ref of each of ``types`` (objects with a
    ``shape`` and a ``dtype``, such as ``pltpu.VMEM((8,), f32)``; or a semaphore type),
    as positional and keyword arguments."""
    def fresh(t: Any) -> BlockRef | Semaphore:
        if is_semaphore_type(t):
            return fresh_semaphore(t)
        if not (hasattr(t, "shape") and hasattr(t, "dtype")):
            raise PallasError(f"run_scoped: expected a type with a shape and a dtype, but got "
                              f"{t!r}")
        return BlockRef(uninitialized(tuple(t.shape), dt.canonicalize(t.dtype),
                                      fresh_buffers_zero()))
    return f(*[fresh(t) for t in types], **{k: fresh(t) for k, t in kw_types.items()})


def with_scoped(*types: Any, collective_axes: Any = (),
                **kw_types: Any) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """A decorator: the function, called with some arguments, gets them followed by fresh
    buffers of ``types`` (and ``kw_types`` by keyword), as :func:`run_scoped` makes them."""
    def decorator(f: Callable[..., T]) -> Callable[..., T]:
        def run(*args: Any) -> T:
            return run_scoped(lambda *refs, **kw: f(*args, *refs, **kw), *types,
                              collective_axes=collective_axes, **kw_types)
        return run
    return decorator


def run_state(f: Callable[..., None]) -> Callable[[T], T]:
    """``f`` (which writes Refs) as a function of values: it gets a Ref of each leaf of
    its argument, and the function returns their final values, in the same structure."""
    def run(values: T) -> T:
        leaves, tree = tree_flatten(values)
        refs = [BlockRef(as_array(x)) for x in leaves]
        f(tree_unflatten(tree, refs))
        out: T = tree_unflatten(tree, [r[...] for r in refs])
        return out
    return run


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: None = None) -> Any:
    """An array whose values do not matter (zeros, as ``lax.empty`` gives them, in a
    kernel too)."""
    return lax.empty(tuple(shape), dt.canonicalize(dtype))


def empty_like(x: Any) -> Any:
    """:func:`empty` arrays of the shapes and dtypes of the leaves of ``x``."""
    return tree_map(lambda v: empty(value_aval(v).shape, value_aval(v).dtype), x)


def reciprocal(x: Any, *, approx: bool = False, full_range: bool = True) -> Any:
    """``1 / x`` (``approx`` allows a faster estimate; on the CPU it is exact)."""
    return lax.div(lax.full_like(x, 1), x)


def strides_from_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The row-major strides, in elements, of an array of ``shape``."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def align_to(a: Any, alignment: Any) -> Any:
    """``a`` rounded up to a multiple of ``alignment``."""
    return cdiv(a, alignment) * alignment


def _atomic(name: str, combine: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def atomic(x_ref_or_view: Any, idx: Any, val: Any, *, mask: Any = None) -> Any:
        view = as_view(x_ref_or_view, name)
        if not (idx is None or (type(idx) is tuple and not idx)):
            view = view.at[idx]
        old = load(view, mask=mask)
        store(view, combine(old, val), mask=mask)
        return old
    atomic.__name__ = atomic.__qualname__ = name
    atomic.__doc__ = (f"Triton's ``{name}``: combine ``val`` into ``x_ref_or_view[idx]`` "
                      "where ``mask`` holds; returns the old values.")
    return atomic


atomic_add = _atomic("atomic_add", lambda old, v: old + v)
atomic_max = _atomic("atomic_max", maximum)
atomic_min = _atomic("atomic_min", minimum)
atomic_and = _atomic("atomic_and", lambda old, v: old & v)
atomic_or = _atomic("atomic_or", lambda old, v: old | v)
atomic_xor = _atomic("atomic_xor", lambda old, v: old ^ v)
atomic_xchg = _atomic("atomic_xchg", lambda old, v: broadcast_to(v, value_aval(old).shape))


def atomic_cas(ref: Any, cmp: Any, val: Any) -> Any:
    """Triton's compare-and-swap: where the Ref holds ``cmp``, write ``val``; returns the
    old values."""
    view = as_view(ref, "atomic_cas")
    old = view[...]
    view[...] = where(old == cmp, val, old).astype(value_aval(old).dtype)
    return old


def dot(a: Any, b: Any, trans_a: bool = False, trans_b: bool = False,
        allow_tf32: bool | None = None, precision: Any = None) -> Any:
    """``a @ b`` of 2-d blocks (either transposed first), accumulated in float32 (int32
    for integers, float64 for float64), as Triton's ``dot``."""
    if value_aval(a).ndim != 2 or value_aval(b).ndim != 2:
        raise ValueError("`a` and `b` must be 2D arrays.")
    if allow_tf32 is not None:
        if precision is not None:
            raise ValueError("Only one of allow_tf32 and precision can be specified")
        precision = Precision.HIGH if allow_tf32 else Precision.HIGHEST
    dtype = promote_types(value_aval(a).dtype, value_aval(b).dtype)
    out = dt.int32 if dt.is_integer(dtype) else dt.float64 if dtype == dt.float64 \
        else dt.float32
    dims = (((0 if trans_a else 1,), (1 if trans_b else 0,)), ((), ()))
    return lax.dot_general(a, b, dims, precision=precision, preferred_element_type=out)


def cdiv(a: Any, b: Any) -> Any:
    """``ceil(a / b)`` of integers."""
    return (a + b - 1) // b


def next_power_of_2(x: int) -> int:
    """The least power of 2 at least ``x``."""
    if x < 0:
        raise ValueError("`next_power_of_2` requires a non-negative integer.")
    return 1 if x == 0 else 1 << (x - 1).bit_length()


def multiple_of(x: Any, values: Any) -> Any:
    """``x``: a hint that it is a multiple of ``values`` (unused on the CPU)."""
    return x


def max_contiguous(x: Any, values: Any) -> Any:
    """``x``: a hint that its values are contiguous (unused on the CPU)."""
    return x


def debug_barrier() -> None:
    """A barrier between a program's threads: nothing to do when points run in turn."""


def debug_print(fmt: str, *args: Any) -> None:
    """Print ``fmt`` formatted with ``args`` (``{}`` placeholders) when the kernel runs."""
    _debug_print(fmt, *args)


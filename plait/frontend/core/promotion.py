"""Type promotion: the lattice of JAX's "Type promotion semantics".

A value's type for promotion is its dtype plus whether it is weak (a Python
scalar, or derived only from Python scalars).  Weak types are the nodes
``i*``, ``f*``, ``c*`` of the lattice; the promotion of two types is their
least upper bound, then canonicalized (64-bit narrows unless x64 is on).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from typing import Any, Final

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.ir import config
from plait.ir import dtypes as dt
from plait.ir.atoms import Literal
from plait.ir.errors import TypePromotionError

__all__ = ["promote_types", "result_type", "weak_dtype_for", "numpy_dtype_promotion",
           "is_weak_scalar", "python_scalar_dtype"]

# Lattice nodes: NumPy dtypes for strong types, these markers for weak ones.
_I, _F, _C = "i*", "f*", "c*"
Node = Any

_EDGES: Final[dict[Node, list[Node]]] = {
    dt.bool_: [_I],
    dt.uint8: [dt.int16, dt.uint16], dt.uint16: [dt.int32, dt.uint32],
    dt.uint32: [dt.int64, dt.uint64], dt.uint64: [_F],
    _I: [dt.uint8, dt.int8, *dt.NARROW_INTS], dt.int8: [dt.int16], dt.int16: [dt.int32],
    dt.int32: [dt.int64], dt.int64: [_F],
    _F: [dt.bfloat16, dt.float16, _C, *dt.NARROW_FLOATS], dt.bfloat16: [dt.float32],
    dt.float16: [dt.float32],
    dt.float32: [dt.float64, dt.complex64], dt.float64: [dt.complex128],
    _C: [dt.complex64], dt.complex64: [dt.complex128], dt.complex128: [],
    # The narrow types (int4, the float8s, ...) are dead ends: a weak scalar of their
    # kind, or bool, promotes to them, but they join nothing else (JAX refuses to widen
    # them implicitly, so that no program silently leaves its narrow format).
    **{d: [] for d in (*dt.NARROW_INTS, *dt.NARROW_FLOATS)},
}


def _upper_sets(edges: dict[Node, list[Node]]) -> dict[Node, frozenset[Node]]:
    ups: dict[Node, frozenset[Node]] = {}

    def up(n: Node) -> frozenset[Node]:
        if n not in ups:
            s = {n}
            for m in edges[n]:
                s |= up(m)
            ups[n] = frozenset(s)
        return ups[n]

    for n in edges:
        up(n)
    return ups


_UP: Final = _upper_sets(_EDGES)
# Without x64, JAX's lattice never forms a 64-bit type from narrower inputs: its one
# such edge, uint32 with int32 joining at int64, joins at int32 instead.
_UP_X32: Final = _upper_sets({**_EDGES, dt.uint32: [dt.int32, dt.uint64]})

_WEAK_DEFAULT: Final[dict[str, np.dtype[Any]]] = {_I: dt.int64, _F: dt.float64, _C: dt.complex128}
_KIND_OF_WEAK: Final[dict[str, str]] = {"i": _I, "u": _I, "f": _F, "V": _F, "c": _C, "b": _I}


def _node(dtype: np.dtype[Any], weak: bool) -> Node:
    if not weak:
        return dtype
    if dtype == dt.bool_:
        return dt.bool_
    # NumPy's kind says nothing of the ml_dtypes types ('V' for int4 and most float8s).
    if dt.is_float(dtype):
        return _F
    if dt.is_integer(dtype):
        return _I
    return _KIND_OF_WEAK[dtype.kind]


def _join(a: Node, b: Node) -> Node | None:
    """The least upper bound of two nodes, or None where they have no common bound
    (a narrow type with any type but itself, its weak kind and bool)."""
    return _join_in(a, b, config.enable_x64())


@functools.cache
def _join_in(a: Node, b: Node, x64: bool) -> Node | None:
    ups = _UP if x64 else _UP_X32
    common = ups[a] & ups[b]
    least = [n for n in common if all(m in ups[n] for m in common)]
    assert len(least) <= 1, (a, b, least)
    return least[0] if least else None


_WEAK_TYPE_OF: Final[dict[Node, type]] = {_I: int, _F: float, _C: complex}


def _node_name(n: Node) -> str:
    # As JAX names its nodes: the dtype's name, or the weak kind's Python type.
    return n.name if isinstance(n, np.dtype) else str(_WEAK_TYPE_OF[n])


def _no_path_error(nodes: Sequence[Node]) -> TypePromotionError:
    """JAX's refusal to join a narrow type with another: the message names the narrow
    kind involved (float8s before float4 before the small integers, as JAX checks)."""
    names = tuple(_node_name(n) for n in nodes)
    head = (f"Input dtypes {names} have no available implicit dtype promotion path.")
    if any(n in dt.FLOAT8 for n in nodes):
        what, cast = "8-bit floats", "float32"
    elif any(n == dt.float4_e2m1fn for n in nodes):
        what, cast = "4-bit floats", "float32"
    elif any(n in dt.NARROW_INTS for n in nodes):
        what, cast = "1-bit, 2-bit and 4-bit integers", "int32"
    else:
        return TypePromotionError(
            f"{head} Try explicitly casting inputs to the desired output type.")
    return TypePromotionError(
        f"{head} To avoid unintended promotion, {what} do not support implicit promotion. "
        f"If you'd like your inputs to be promoted to another type, you can do so "
        f"explicitly using e.g. x.astype('{cast}')")


def _join_all(nodes: Sequence[Node]) -> Node:
    """The least upper bound of ``nodes`` (at least one).

    Raises:
      TypePromotionError: the nodes have no common upper bound.
    """
    out: Node | None = nodes[0]
    for n in nodes[1:]:
        out = _join(out, n)
        if out is None:
            raise _no_path_error(nodes)
    return out


def _strict_ok(nodes: Sequence[Node]) -> bool:
    strong = {n for n in nodes if isinstance(n, np.dtype)}
    if len(strong) > 1:
        return False
    weak = [n for n in nodes if not isinstance(n, np.dtype)]
    if not strong:
        return True
    s = strong.pop()
    # Weak scalars may only join a strong type of their own kind or higher.
    return all(_join(s, w) == s for w in weak)


_PYTHON_WEAK: Final[dict[type, Node]] = {int: _I, float: _F, complex: _C}


def _promote_node(x: Any) -> Node:
    if isinstance(x, type) and x in _PYTHON_WEAK:
        return _PYTHON_WEAK[x]
    d = dt._to_dtype(x)
    if d not in _UP:
        raise TypeError(f"expected a dtype plait can promote, but got {x!r}")
    return d


def promote_types(a: Any, b: Any) -> np.dtype[Any]:
    """The dtype two dtypes promote to, as ``jnp.promote_types``.

    As in JAX, the result is not canonicalized: ``promote_types('float64',
    'float32')`` is ``float64`` even with x64 mode off (only the lattice differs:
    ``uint32`` with ``int32`` gives ``int32`` then).  The Python types ``int``,
    ``float`` and ``complex`` are weak: ``promote_types('uint8', int)`` is ``uint8``.

    Raises:
      TypeError: an argument is not a dtype plait supports.
      TypePromotionError: promotion is ``'strict'`` and the dtypes differ, or a narrow
        dtype (``int4``, the float8s, ...) meets another type than itself, its weak
        kind or ``bool``: as in JAX, those never promote implicitly.
    """
    nodes = [_promote_node(a), _promote_node(b)]
    if config.numpy_dtype_promotion() == "strict" and not _strict_ok(nodes):
        raise _strict_error(tuple(str(n) if isinstance(n, np.dtype) else n for n in nodes))
    out = _join_all(nodes)
    return out if isinstance(out, np.dtype) else _WEAK_DEFAULT[out]


def _strict_error(names: tuple[str, ...]) -> TypePromotionError:
    return TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path when "
        "numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
        "output type, or set numpy_dtype_promotion=standard.")


def result_type_info(types: Sequence[tuple[np.dtype[Any], bool]]) -> tuple[np.dtype[Any], bool]:
    """The (dtype, weak) the given (dtype, weak) types promote to.

    Raises:
      TypePromotionError: promotion is ``'strict'`` and the types differ, or they have
        no common type (a narrow dtype with a wider one).
    """
    keys = {d for d, _ in types if dt.is_key(d)}
    if keys:  # PRNG keys combine only with keys of their own implementation
        if len(keys) == 1 and len(keys) == len({d for d, _ in types}):
            return keys.pop(), False
        raise TypeError(f"expected PRNG key arrays to be combined only with keys of the same "
                        f"implementation, but got dtypes "
                        f"{', '.join(dt.short_name(d) for d, _ in types)}")
    nodes = [_node(d, w) for d, w in types]
    if config.numpy_dtype_promotion() == "strict" and not _strict_ok(nodes):
        raise _strict_error(tuple(d.name for d, _ in types))
    out = _join_all(nodes)
    if isinstance(out, np.dtype):
        return dt.canonicalize(out), False
    # A weak result keeps the precision of the weak inputs (float32 stays float32).
    weak_dtypes = [d for (d, w), n in zip(types, nodes) if n == out and w]
    d = weak_dtypes[0] if weak_dtypes else _WEAK_DEFAULT[out]
    return dt.canonicalize(d), True


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype values or dtypes promote to (``jnp.result_type``), canonical.

    As in JAX, a 64-bit dtype *specifier* (``'float64'``, ``np.int64``) narrows with
    JAX's warning when x64 mode is off, while 64-bit NumPy data narrows silently;
    ``None`` stands for the default float; a weakly typed result is the default
    dtype of its kind.  With ``return_weak_type_flag``, returns ``(dtype, weak)``.

    Raises:
      ValueError: no arguments.
      TypePromotionError: promotion is ``'strict'`` and the types differ.
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    d, weak = result_type_info([_result_type_operand(a) for a in args])
    if weak:
        d = dt.canonicalize(_WEAK_DEFAULT[_node(d, True)])
    return (d, weak) if return_weak_type_flag else d


def _result_type_operand(x: Any) -> tuple[np.dtype[Any], bool]:
    if x is None:
        return dt.canonicalize(dt.float64), False
    if isinstance(x, type) and x in _PYTHON_WEAK:
        return python_scalar_dtype(x()), True
    if isinstance(x, str | np.dtype | type):  # dtype specifiers (scalar types included)
        return check_user_dtype(x, "dtype"), False
    return dtype_and_weak(x)


def python_scalar_dtype(x: bool | int | float | complex) -> np.dtype[Any]:
    """The dtype a Python scalar gets: bool, or canonical int, float, complex."""
    if isinstance(x, bool):
        return dt.bool_
    if isinstance(x, int):
        return dt.canonicalize(dt.int64)
    if isinstance(x, float):
        return dt.canonicalize(dt.float64)
    return dt.canonicalize(dt.complex128)


def is_weak_scalar(x: Any) -> bool:
    """True for Python ``int``, ``float`` and ``complex`` (not ``bool``)."""
    return type(x) in (int, float, complex)


def dtype_and_weak(x: Any) -> tuple[np.dtype[Any], bool]:
    """The (dtype, weak) of a value, a dtype, or a Python scalar type."""
    if isinstance(x, Array) or type(x) is Literal:
        return x.aval.dtype, x.aval.weak_type
    if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
        return python_scalar_dtype(x), type(x) is not bool
    if x is int or x is float or x is complex:
        return python_scalar_dtype(x()), True
    if isinstance(x, np.ndarray | np.generic):
        return dt.canonicalize(x.dtype), False
    if hasattr(type(x), "__jax_array__"):  # (a value standing for an array: its array's)
        return dtype_and_weak(x.__jax_array__())
    return dt.canonicalize(x), False


def weak_dtype_for(x: Any) -> np.dtype[Any]:
    """The dtype of ``x`` where ``x`` is a Python scalar or a typed value."""
    return dtype_and_weak(x)[0]


@contextlib.contextmanager
def numpy_dtype_promotion(mode: str) -> Iterator[None]:
    """Within the block, use ``'standard'`` or ``'strict'`` dtype promotion."""
    previous = config.numpy_dtype_promotion()
    config.update("numpy_dtype_promotion", mode)
    try:
        yield
    finally:
        config.update("numpy_dtype_promotion", previous)

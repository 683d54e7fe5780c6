"""Products: ``dot``, ``matmul`` (``@``), ``vdot``, ``inner``, ``outer``, ``tensordot``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.errors import ArgumentError
from plait.frontend import lax
from plait.frontend.array_base import Array
from plait.frontend.numpy._core import canonical_axis, ndim, promote_dtypes as promote, shape
from plait.frontend.numpy.manipulation import broadcast_shapes, broadcast_to, ravel, reshape
from plait.frontend.numpy.ufuncs import multiply

__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot"]


def _dot_general(a: Any, b: Any, contract: tuple[Sequence[int], Sequence[int]],
                 batch: tuple[Sequence[int], Sequence[int]] = ((), ())) -> Any:
    return lax.dot_general(a, b, (contract, batch), preferred_element_type=a.dtype)


def dot(a: Any, b: Any) -> Array:
    """NumPy ``dot``: the last axis of ``a`` with the second-to-last of ``b``."""
    a, b = promote("dot", a, b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        return multiply(a, b)
    cb = 0 if nb == 1 else nb - 2
    if shape(a)[-1] != shape(b)[cb]:
        raise ArgumentError(f"dot: shapes {shape(a)} and {shape(b)} are not aligned: "
                            f"{shape(a)[-1]} (dim {na - 1}) != {shape(b)[cb]} (dim {cb})")
    # dot_general orders the result as a's free dims, then b's: NumPy's order.
    return _dot_general(a, b, ((na - 1,), (cb,)))  # type: ignore[no-any-return]


def matmul(a: Any, b: Any) -> Array:
    """Matrix product with broadcasting of batch dimensions (the ``@`` operator)."""
    a, b = promote("matmul", a, b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        raise ArgumentError("matmul: expected arrays of at least one dimension, but got a scalar")
    a2 = reshape(a, (1,) + shape(a)) if na == 1 else a
    b2 = reshape(b, shape(b) + (1,)) if nb == 1 else b
    if shape(a2)[-1] != shape(b2)[-2]:
        raise ArgumentError(f"matmul: expected the last dimension of a ({shape(a)}) to equal the "
                            f"second-to-last of b ({shape(b)})")
    batch = broadcast_shapes(shape(a2)[:-2], shape(b2)[:-2])
    nbatch = len(batch)
    if shape(a2)[:-2] != batch:
        a2 = broadcast_to(a2, batch + shape(a2)[-2:])
    if shape(b2)[:-2] != batch:
        b2 = broadcast_to(b2, batch + shape(b2)[-2:])
    bdims = tuple(range(nbatch))
    out = _dot_general(a2, b2, ((nbatch + 1,), (nbatch,)), (bdims, bdims))
    if na == 1:
        out = lax.squeeze(out, (nbatch,))
    if nb == 1:
        out = lax.squeeze(out, (ndim(out) - 1,))
    return out  # type: ignore[no-any-return]


def vdot(a: Any, b: Any) -> Array:
    """Dot product of the flattened arrays (``a`` conjugated)."""
    from plait.frontend.numpy.ufuncs import conj
    return dot(conj(ravel(a)), ravel(b))


def inner(a: Any, b: Any) -> Array:
    """Inner product over the last axes."""
    a, b = promote("inner", a, b)
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    return _dot_general(a, b, ((ndim(a) - 1,), (ndim(b) - 1,)))  # type: ignore[no-any-return]


def outer(a: Any, b: Any) -> Array:
    """Outer product of the flattened arrays."""
    a, b = promote("outer", ravel(a), ravel(b))
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def tensordot(a: Any, b: Any, axes: int | Sequence[Any] = 2) -> Array:
    """Contract ``axes`` of ``a`` with ``axes`` of ``b``."""
    a, b = promote("tensordot", a, b)
    na, nb = ndim(a), ndim(b)
    if isinstance(axes, int):
        ca, cb = list(range(na - axes, na)), list(range(axes))
    else:
        xa, xb = axes
        ca = [xa] if isinstance(xa, int) else list(xa)
        cb = [xb] if isinstance(xb, int) else list(xb)
    ca = [canonical_axis(x, na) for x in ca]
    cb = [canonical_axis(x, nb) for x in cb]
    return _dot_general(a, b, (ca, cb))  # type: ignore[no-any-return]

"""Products: ``dot``, ``matmul`` (``@``), ``vdot``, ``inner``, ``outer``, ``tensordot``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.frontend import lax
from plait.frontend.api.explicit_sharding import reshard
from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import dtype_and_weak, result_type_info
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy._core import (
    as_array,
    aval_of,
    canonical_axis,
    check_arraylike,
    convert,
    ndim,
    shape,
)
from plait.frontend.numpy.manipulation import ravel
from plait.frontend.numpy.ufuncs import conj, multiply
from plait.ir.errors import ArgumentError
from plait.ir.sharding import NamedSharding, PartitionSpec, type_sharding_of

__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot"]


def _dot_general(a: Any, b: Any, contract: tuple[Sequence[int], Sequence[int]],
                 batch: tuple[Sequence[int], Sequence[int]] = ((), ()),
                 precision: Any = None, preferred_element_type: Any = None,
                 out_sharding: Any = None) -> Array:
    return lax.dot_general(a, b, (contract, batch), precision=precision,
                           preferred_element_type=preferred_element_type or a.dtype,
                           out_sharding=out_sharding)


def _pet(preferred_element_type: Any, name: str) -> Any:
    # A 64-bit preferred type narrows with JAX's warning when x64 is off.
    if preferred_element_type is None:
        return None
    return check_user_dtype(preferred_element_type, name)


def promote(name: str, a: Any, b: Any) -> list[Array]:
    """Operands in their common dtype.  As in JAX, a weakly typed operand that already
    has that dtype is not cast (the product's type comes from ``preferred_element_type``)."""
    check_arraylike(name, a, b)
    dtype, weak = result_type_info([dtype_and_weak(x) for x in (a, b)])
    out = []
    for x in (a, b):
        xa = aval_of(x)
        out.append(as_array(x if xa is not None and xa.dtype == dtype else
                            convert(x, dtype, weak)))
    return out


def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None,
        out_sharding: Any = None) -> Array:
    """NumPy ``dot``: the last axis of ``a`` with the second-to-last of ``b`` (the
    result's type sharded by ``out_sharding`` if given)."""
    a, b = promote("dot", a, b)
    preferred_element_type = _pet(preferred_element_type, "dot")
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        out = multiply(a, b)
        return out if out_sharding is None else reshard(out, out_sharding)
    cb = 0 if nb == 1 else nb - 2
    if shape(a)[-1] != shape(b)[cb]:
        raise ArgumentError(f"dot: shapes {shape(a)} and {shape(b)} are not aligned: "
                            f"{shape(a)[-1]} (dim {na - 1}) != {shape(b)[cb]} (dim {cb})")
    # dot_general orders the result as a's free dims, then b's: NumPy's order.
    return _dot_general(a, b, ((na - 1,), (cb,)), precision=precision,
                        preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def matmul(a: Any, b: Any, *, precision: Any = None,
           preferred_element_type: Any = None, out_sharding: Any = None) -> Array:
    """Matrix product with broadcasting of batch dimensions (the ``@`` operator).

    One ``dot_general``: batch dimensions both operands have are its batch
    dimensions, a batch dimension only one operand has (or has with size 1
    against a larger one) is a free dimension of that operand; a transpose
    then puts the result in NumPy's order.
    """
    a, b = promote("matmul", a, b)
    preferred_element_type = _pet(preferred_element_type, "matmul")
    requested = None if out_sharding is None else type_sharding_of(out_sharding, "matmul")
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        raise ValueError(f"matmul: expected arrays of at least one dimension, but got shapes "
                         f"{sa} and {sb}")
    ca, cb = len(sa) - 1, (len(sb) - 2 if len(sb) > 1 else 0)
    if sa[ca] != sb[cb]:
        raise ArgumentError(f"matmul: expected the last dimension of a ({sa}) to equal the "
                            f"second-to-last of b ({sb})")
    batch_a, batch_b = sa[:-2], sb[:-2]
    n = max(len(batch_a), len(batch_b))
    ka, kb = n - len(batch_a), n - len(batch_b)  # leading batch positions one side lacks
    squeeze_a: list[int] = []
    squeeze_b: list[int] = []
    batch: list[tuple[int, int, int]] = []   # (output position, dim of a, dim of b)
    free_a: list[tuple[int, int]] = []       # (output position, dim of a)
    free_b: list[tuple[int, int]] = []
    for i in range(n):
        da = batch_a[i - ka] if i >= ka else None
        db = batch_b[i - kb] if i >= kb else None
        if da is None or (da == 1 and db is not None and db != 1):
            if da is not None:
                squeeze_a.append(i - ka)
            free_b.append((i, i - kb))
        elif db is None or db == 1:
            if db is not None:
                squeeze_b.append(i - kb)
            free_a.append((i, i - ka))
        elif da == db:
            batch.append((i, i - ka, i - kb))
        else:
            raise ValueError(f"matmul: incompatible batch dimensions {sa[:-2]} and {sb[:-2]} "
                             f"of operands with shapes {sa} and {sb}")
    if len(sa) > 1:
        free_a.append((n, len(sa) - 2))
    if len(sb) > 1:
        free_b.append((n + (len(sa) > 1), len(sb) - 1))
    a, ma = _squeezed(a, squeeze_a)
    b, mb = _squeezed(b, squeeze_b)
    # dot_general's order: batch dims, a's free dims, b's free dims (each ascending).
    order = ([p for p, _, _ in batch] + [p for p, _ in sorted(free_a, key=lambda t: t[1])]
             + [p for p, _ in sorted(free_b, key=lambda t: t[1])])
    dg_sharding = None
    if requested is not None:  # the requested result sharding in dot_general's order
        spec = requested.spec.padded(len(order))
        dg_sharding = NamedSharding(requested.mesh, PartitionSpec(*(spec[p] for p in order)))
    out = _dot_general(a, b, ((ma[ca],), (mb[cb],)),
                       ([ma[x] for _, x, _ in batch], [mb[y] for _, _, y in batch]),
                       precision, preferred_element_type, dg_sharding)
    perm = sorted(range(len(order)), key=lambda k: order[k])
    return out if perm == list(range(len(perm))) else lax.transpose(out, perm)


def _squeezed(x: Array, dims: Sequence[int]) -> tuple[Array, list[int]]:
    """``x`` without the size-1 ``dims``, and each old dimension's new index."""
    if not dims:
        return x, list(range(ndim(x)))
    new_index, k = [], 0
    for d in range(ndim(x)):
        new_index.append(k)
        k += d not in dims
    return lax.squeeze(x, tuple(dims)), new_index


def vdot(a: Any, b: Any, *, precision: Any = None,
         preferred_element_type: Any = None) -> Array:
    """Dot product of the flattened arrays (``a`` conjugated)."""
    return dot(conj(ravel(a)), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def inner(a: Any, b: Any, *, precision: Any = None,
          preferred_element_type: Any = None) -> Array:
    """Inner product over the last axes."""
    preferred_element_type = _pet(preferred_element_type, "tensordot")
    a, b = promote("inner", a, b)
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    return _dot_general(a, b, ((ndim(a) - 1,), (ndim(b) - 1,)), precision=precision,
                        preferred_element_type=preferred_element_type)


def outer(a: Any, b: Any, out: None = None) -> Array:
    """Outer product of the flattened arrays (``out`` is refused, as in JAX)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = promote("outer", ravel(a), ravel(b))
    return multiply(a[:, None], b[None, :])


def tensordot(a: Any, b: Any, axes: int | Sequence[Any] = 2, *, precision: Any = None,
              preferred_element_type: Any = None, out_sharding: Any = None) -> Array:
    """Contract ``axes`` of ``a`` with ``axes`` of ``b`` (the result's type sharded by
    ``out_sharding`` if given)."""
    preferred_element_type = _pet(preferred_element_type, "tensordot")
    a, b = promote("tensordot", a, b)
    na, nb = ndim(a), ndim(b)
    if isinstance(axes, int):
        ca, cb = list(range(na - axes, na)), list(range(axes))
    else:
        xa, xb = axes
        ca = [xa] if isinstance(xa, int) else list(xa)
        cb = [xb] if isinstance(xb, int) else list(xb)
    if len(ca) != len(cb):
        raise TypeError(f"tensordot: expected as many axes of a as of b, but got {ca} and {cb}")
    if len(ca) > min(na, nb) or any(not -n <= x < n for xs, n in ((ca, na), (cb, nb))
                                    for x in xs):
        raise TypeError(f"tensordot: axes {axes} are out of range for arrays of shapes "
                        f"{shape(a)} and {shape(b)}")
    ca = [canonical_axis(x, na) for x in ca]
    cb = [canonical_axis(x, nb) for x in cb]
    for x, y in zip(ca, cb):
        if shape(a)[x] != shape(b)[y]:
            raise TypeError(f"tensordot: shape mismatch: dimension {x} of a {shape(a)} and "
                            f"dimension {y} of b {shape(b)} differ")
    return _dot_general(a, b, (ca, cb), precision=precision,
                        preferred_element_type=preferred_element_type, out_sharding=out_sharding)

"""JVP, transpose and batching of ``cholesky`` and ``triangular_solve``.

The derivatives are JAX 0.10.2's.  For ``x = L L^H``, the tangent of the factor is
``L Φ(L^{-1} ẋ L^{-H})``, ``Φ`` taking the lower triangle with the diagonal halved
(Murray, arXiv:1602.07527), computed with two triangular solves.  ``triangular_solve``
is linear in ``b``; in ``a``, ``∂X = -op(a)^{-1} op(∂a) X`` (or its right-side mirror),
multiplied in whichever order is cheaper.  Both primitives take leading batch
dimensions natively, so batching moves the mapped dimension to the front.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import shaped
from plait.ir.primitives.linalg import Precision
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import Tangent, defjvp2, jvp_rules, tangent_aval
from plait.transforms.transpose import (
    Cotangent,
    UndefPrimal,
    check_linear_inputs,
    transpose_rules,
)
from plait.transforms.vmap import Dim, batching_rules, bdim_to_front, move_axis

__all__ = ["triangular_solve", "tril", "triu"]

_HIGHEST = (Precision.HIGHEST, Precision.HIGHEST)


def triangular_solve(e: Emitter, a: Atom, b: Atom, *, left_side: bool, lower: bool,
                     transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> Var:
    """Emit ``triangular_solve``, ``conjugate_a`` dropped for real ``a`` (as JAX's
    ``lax.linalg.triangular_solve`` does)."""
    conjugate_a = conjugate_a and dt.is_complex(shaped(a.aval).dtype)
    return e.bind1(P.triangular_solve_p, a, b, left_side=left_side, lower=lower,
                   transpose_a=transpose_a, conjugate_a=conjugate_a,
                   unit_diagonal=unit_diagonal)


def _tri_mask(e: Emitter, n: int, m: int, k: int) -> Var:
    """``n`` by ``m`` booleans, true on and below diagonal ``k`` (JAX's ``lax._tri``:
    the offset in the default integer type, added even when zero)."""
    idx = dt.canonicalize(np.dtype(np.int64))
    rows = e.bind1(P.iota_p, dtype=idx, shape=(n, m), dimension=0, sharding=None)
    cols = e.bind1(P.iota_p, dtype=idx, shape=(n, m), dimension=1, sharding=None)
    return e.bind1(P.ge_p, e.add(rows, e.literal(k, idx)), cols)


def _masked(e: Emitter, x: Atom, k: int, keep_lower: bool) -> Var:
    a = shaped(x.aval)
    n, m = a.shape[-2:]
    mask: Atom = _tri_mask(e, n, m, k if keep_lower else k - 1)
    if a.ndim > 2:
        mask = e.broadcast_in_dim(mask, a.shape, (a.ndim - 2, a.ndim - 1))
    zero = e.broadcast_in_dim(e.literal(0, a.dtype), a.shape, ())
    return e.select_n(mask, zero, x) if keep_lower else e.select_n(mask, x, zero)


def tril(e: Emitter, x: Atom, k: int = 0) -> Var:
    """``x`` with zeros above diagonal ``k`` of its trailing matrices."""
    return _masked(e, x, k, keep_lower=True)


def triu(e: Emitter, x: Atom, k: int = 0) -> Var:
    """``x`` with zeros below diagonal ``k`` of its trailing matrices."""
    return _masked(e, x, k, keep_lower=False)


def _matmul(e: Emitter, x: Atom, y: Atom) -> Var:
    """Products of the trailing matrices, batched over the leading dimensions."""
    nd = shaped(x.aval).ndim
    batch = tuple(range(nd - 2))
    return e.dot_general(x, y, (((nd - 1,), (nd - 2,)), (batch, batch)), precision=_HIGHEST)


def _swap_last(e: Emitter, x: Atom) -> Atom:
    nd = shaped(x.aval).ndim
    return e.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


# -- cholesky -------------------------------------------------------------------------


def _phi(e: Emitter, x: Atom) -> Var:
    """The lower triangle of ``x`` with its diagonal halved."""
    a = shaped(x.aval)
    n = a.shape[-1]
    i32 = np.dtype(np.int32)  # JAX's ``lax._eye`` counts in int32
    rows = e.bind1(P.iota_p, dtype=i32, shape=(n, n), dimension=0, sharding=None)
    cols = e.bind1(P.iota_p, dtype=i32, shape=(n, n), dimension=1, sharding=None)
    eye = e.convert(e.bind1(P.eq_p, e.add(rows, e.literal(0, i32)), cols), a.dtype)
    scale: Atom = e.add(e.literal(1, a.dtype), eye)
    if a.ndim > 2:
        scale = e.broadcast_in_dim(scale, (1,) * (a.ndim - 2) + (n, n), (a.ndim - 2, a.ndim - 1))
    return e.div(tril(e, x), scale)


def _cholesky_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent]
                  ) -> tuple[list[Atom], list[Tangent]]:
    (x,), (dx,) = primals, tangents
    factor = tril(e, e.bind1(P.cholesky_p, x))
    if type(dx) is Zero:
        return [factor], [Zero(tangent_aval(factor.aval))]
    # L^{-1} ẋ L^{-H}, by a right solve with L^H and a left solve with L.
    tmp = triangular_solve(e, factor, dx, left_side=False, lower=True, transpose_a=True,
                           conjugate_a=True, unit_diagonal=False)
    inner = triangular_solve(e, factor, tmp, left_side=True, lower=True, transpose_a=False,
                             conjugate_a=False, unit_diagonal=False)
    return [factor], [_matmul(e, factor, _phi(e, inner))]


# -- triangular_solve -----------------------------------------------------------------


def _solve_jvp_a(e: Emitter, g_a: Atom, ans: Atom, a: Atom, b: Atom, *, left_side: bool,
                 lower: bool, transpose_a: bool, conjugate_a: bool,
                 unit_diagonal: bool) -> Atom:
    params: dict[str, Any] = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                                  conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    m, n = shaped(b.aval).shape[-2:]
    k = 1 if unit_diagonal else 0  # a unit diagonal is not read, so it has no tangent
    g: Atom = tril(e, g_a, -k) if lower else triu(e, g_a, k)
    g = e.neg(g)
    if transpose_a:
        g = _swap_last(e, g)
    if conjugate_a and dt.is_complex(shaped(g.aval).dtype):
        g = e.conj(g)

    def a_inverse(rhs: Atom) -> Var:
        return triangular_solve(e, a, rhs, **params)

    # A solve costs about a product: order them so the cheaper product comes first.
    if left_side:
        return a_inverse(_matmul(e, g, ans)) if m > n else _matmul(e, a_inverse(g), ans)
    return a_inverse(_matmul(e, ans, g)) if m < n else _matmul(e, ans, a_inverse(g))


def _solve_jvp_b(e: Emitter, g_b: Atom, ans: Atom, a: Atom, b: Atom, **params: Any) -> Atom:
    return triangular_solve(e, a, g_b, **params)


def _solve_transpose(e: Emitter, cts: Sequence[Atom | Zero], a: Atom | UndefPrimal,
                     b: Atom | UndefPrimal, *, left_side: bool, lower: bool,
                     transpose_a: bool, conjugate_a: bool,
                     unit_diagonal: bool) -> Sequence[Cotangent]:
    # Linear in b only; the transpose of op(a)^{-1} is op(a)^{-T}: transpose_a flips.
    check_linear_inputs("triangular_solve", [a, b], [1])
    (ct,) = cts
    assert type(a) is not UndefPrimal
    if type(ct) is Zero:
        return [None, None]
    return [None, triangular_solve(e, a, ct, left_side=left_side, lower=lower,
                                   transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                   unit_diagonal=unit_diagonal)]


# -- batching -------------------------------------------------------------------------


def _cholesky_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim]
                   ) -> tuple[list[Var], list[Dim]]:
    return [e.bind1(P.cholesky_p, bdim_to_front(e, vals[0], dims[0], size))], [0]


def _solve_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim],
                **params: Any) -> tuple[list[Atom], list[Dim]]:
    (a, b), (da, db) = vals, dims
    if da is None and db is not None:
        return _solve_vmap_b(e, a, b, db, params)
    a, b = bdim_to_front(e, a, da, size), bdim_to_front(e, b, db, size)
    return [triangular_solve(e, a, b, **params)], [0]


def _solve_vmap_b(e: Emitter, a: Atom, b: Atom, db: int,
                  params: dict[str, Any]) -> tuple[list[Atom], list[Dim]]:
    """Only ``b`` mapped: its instances become more right-hand sides, as in JAX (more
    columns of ``b`` for a left solve, more rows for a right one)."""
    nd = shaped(b.aval).ndim
    moved = move_axis(e, b, db, nd - 1 if params["left_side"] else nd - 2)
    shape = shaped(moved.aval).shape
    if params["left_side"]:
        flat = shape[:-2] + (shape[-2] * shape[-1],)
        out_dim = nd - 1
    else:
        flat = shape[:-3] + (shape[-3] * shape[-2], shape[-1])
        out_dim = nd - 2
    out = triangular_solve(e, a, e.reshape(moved, flat), **params)
    return [e.reshape(out, shape)], [out_dim]


jvp_rules[P.cholesky_p] = _cholesky_jvp
defjvp2(P.triangular_solve_p, _solve_jvp_a, _solve_jvp_b)
transpose_rules[P.triangular_solve_p] = _solve_transpose
batching_rules[P.cholesky_p] = _cholesky_vmap
batching_rules[P.triangular_solve_p] = _solve_vmap

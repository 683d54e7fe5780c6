"""JVP and batching of the matrix factorizations (``lu``, ``qr``, ``eigh``, ``svd``).

The derivatives are JAX 0.10.2's:

* ``lu``: from ``L U = P A``, ``L^{-1} dL + dU U^{-1} = L^{-1} P dA U^{-1}``, whose
  strictly lower part gives ``dL`` and upper part ``dU`` (de Hoog, Anderssen and Lukas).
* ``qr``: ``dQ`` and ``dR`` from ``Q^H dA R^{-1}``, with its skew-Hermitian part fixed by
  ``R`` staying upper triangular with a real diagonal (J. Townsend's note); wide matrices
  split ``A = [A1 A2]``; full ``Q`` of tall matrices completed as in arXiv:2409.13374;
  with pivoting, the same for the permuted columns (the pivots have zero tangents).
* ``eigh``: first-order perturbation theory for distinct eigenvalues.
* ``svd``: the same for distinct nonzero singular values (reduced matrices only, unless
  square).

``geqrf``, ``geqp3`` and ``householder_product`` have no derivatives (nor in JAX).  All of
them take leading batch dimensions natively, so batching moves the mapped dimension to the
front.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import ShapedArray, shaped
from plait.ir.primitives.linalg import Precision
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import Tangent, defjvp_zero, jvp_rules, tangent_aval
from plait.transforms.linalg_rules import triangular_solve, tril, triu
from plait.transforms.vmap import Dim, batching_rules, bdim_to_front

_HIGHEST = (Precision.HIGHEST, Precision.HIGHEST)


# -- small matrix helpers ---------------------------------------------------------------------


def _aval(x: Atom) -> ShapedArray:
    return shaped(x.aval)


def _mm(e: Emitter, x: Atom, y: Atom) -> Var:
    """Products of the trailing matrices, batched over the leading dimensions."""
    nd = _aval(x).ndim
    batch = tuple(range(nd - 2))
    return e.dot_general(x, y, (((nd - 1,), (nd - 2,)), (batch, batch)), precision=_HIGHEST)


def _t(e: Emitter, x: Atom) -> Atom:
    nd = _aval(x).ndim
    return e.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _conj(e: Emitter, x: Atom) -> Atom:
    return e.conj(x) if dt.is_complex(_aval(x).dtype) else x


def _h(e: Emitter, x: Atom) -> Atom:
    """The conjugate transpose of the trailing matrices."""
    return _conj(e, _t(e, x))


def _real(e: Emitter, x: Atom) -> Atom:
    return e.bind1(P.real_p, x) if dt.is_complex(_aval(x).dtype) else x


def _eye(e: Emitter, n: int, m: int, dtype: np.dtype[Any], batch_rank: int = 0) -> Atom:
    """The ``n`` by ``m`` identity, with ``batch_rank`` leading dimensions of size 1."""
    rows = e.bind1(P.iota_p, dtype=dt.int32, shape=(n, m), dimension=0, sharding=None)
    cols = e.bind1(P.iota_p, dtype=dt.int32, shape=(n, m), dimension=1, sharding=None)
    eye: Atom = e.convert(e.bind1(P.eq_p, rows, cols), dtype)
    if batch_rank:
        eye = e.reshape(eye, (1,) * batch_rank + (n, m))
    return eye


def _slice(e: Emitter, x: Atom, rows: tuple[int, int], cols: tuple[int, int]) -> Atom:
    """``x[..., rows[0]:rows[1], cols[0]:cols[1]]``."""
    a = _aval(x)
    if (rows, cols) == ((0, a.shape[-2]), (0, a.shape[-1])):
        return x
    start = (0,) * (a.ndim - 2) + (rows[0], cols[0])
    limit = a.shape[:-2] + (rows[1], cols[1])
    return e.bind1(P.slice_p, x, start_indices=start, limit_indices=limit, strides=None)


def _pad(e: Emitter, x: Atom, rows: tuple[int, int], cols: tuple[int, int]) -> Var:
    """``x`` padded with zeros: ``rows``/``cols`` give (before, after) sizes."""
    a = _aval(x)
    config = ((0, 0, 0),) * (a.ndim - 2) + ((*rows, 0), (*cols, 0))
    return e.bind1(P.pad_p, x, e.literal(0, a.dtype), padding_config=config)


def _concat(e: Emitter, xs: Sequence[Atom], axis: int) -> Var:
    return e.bind1(P.concatenate_p, *xs, dimension=_aval(xs[0]).ndim + axis)


def _bmul(e: Emitter, x: Atom, y: Atom) -> Var:
    """Elementwise product, size-1 dimensions of either side broadcast."""
    shape = tuple(np.broadcast_shapes(_aval(x).shape, _aval(y).shape))
    return e.mul(e.broadcast_to(x, shape), e.broadcast_to(y, shape))


def _diagonal(e: Emitter, x: Atom) -> Atom:
    """The diagonal of the trailing (square) matrices, by masking and summing."""
    a = _aval(x)
    n = a.shape[-1]
    return e.reduce_sum(_bmul(e, x, _eye(e, n, n, a.dtype, a.ndim - 2)), (a.ndim - 1,))


def _diag_matrix(e: Emitter, v: Atom) -> Var:
    """Matrices with ``v`` on the diagonal."""
    a = _aval(v)
    n = a.shape[-1]
    col = e.broadcast_in_dim(v, a.shape + (n,), tuple(range(a.ndim)))
    return _bmul(e, col, _eye(e, n, n, a.dtype, a.ndim - 1))


def _permute_rows(e: Emitter, perm: Atom, x: Atom, inverse: bool = False) -> Var:
    """``x[..., perm, :]`` (or the inverse permutation), as a product with the 0/1 matrix
    (exact: each entry is one product by one plus zeros)."""
    pa, xa = _aval(perm), _aval(x)
    m = pa.shape[-1]
    cols = e.bind1(P.iota_p, dtype=dt.int32, shape=pa.shape + (m,), dimension=pa.ndim,
                   sharding=None)
    rows = e.broadcast_in_dim(perm, pa.shape + (m,), tuple(range(pa.ndim)))
    onehot: Atom = e.convert(e.bind1(P.eq_p, rows, cols), xa.dtype)
    if inverse:
        onehot = _t(e, onehot)
    return _mm(e, onehot, x)


def _zeros_like(e: Emitter, outs: Sequence[Atom]) -> list[Tangent]:
    return [Zero(tangent_aval(o.aval)) for o in outs]


# -- lu -----------------------------------------------------------------------------------------


def _lu_factors(e: Emitter, lu: Atom) -> tuple[Atom, Atom]:
    """``L`` (``m`` by ``m``, unit diagonal) and ``U`` (``n`` by ``n``, completed with the
    identity) of a packed factorization."""
    a = _aval(lu)
    m, n = a.shape[-2:]
    k = min(m, n)
    nb = a.ndim - 2
    lower = _pad(e, tril(e, _slice(e, lu, (0, m), (0, k)), -1), (0, 0), (0, m - k))
    l_mat = e.add(lower, e.broadcast_to(_eye(e, m, m, a.dtype, nb), _aval(lower).shape))
    upper = _pad(e, triu(e, _slice(e, lu, (0, k), (0, n))), (0, n - k), (0, 0))
    u_eye = _pad(e, _eye(e, n - k, n - k, a.dtype, nb), (k, 0), (k, 0))
    u_mat = e.add(upper, e.broadcast_to(u_eye, _aval(upper).shape))
    return l_mat, u_mat


def _lu_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent]
            ) -> tuple[list[Atom], list[Tangent]]:
    (x,), (dx,) = primals, tangents
    outs: list[Atom] = list(e.bind(P.lu_p, x))
    lu, _, perm = outs
    if type(dx) is Zero:
        return outs, _zeros_like(e, outs)
    l_mat, u_mat = _lu_factors(e, lu)
    la = triangular_solve(e, l_mat, _permute_rows(e, perm, dx), left_side=True, lower=True,
                          transpose_a=False, conjugate_a=False, unit_diagonal=True)
    lau = triangular_solve(e, u_mat, la, left_side=False, lower=False, transpose_a=False,
                           conjugate_a=False, unit_diagonal=False)
    dlu = e.add(_mm(e, l_mat, tril(e, lau, -1)), _mm(e, triu(e, lau), u_mat))
    return outs, [dlu, *_zeros_like(e, outs[1:])]


# -- qr -----------------------------------------------------------------------------------------


def _thin_qr_jvp(e: Emitter, q: Atom, r: Atom, dx: Atom) -> tuple[Atom, Atom]:
    """Tangents of ``Q`` (``m`` by ``n``) and ``R`` (``n`` by ``n``) for ``m >= n``."""
    dx_rinv = triangular_solve(e, r, dx, left_side=False, lower=False, transpose_a=False,
                               conjugate_a=False, unit_diagonal=False)
    qt_dx_rinv = _mm(e, _h(e, q), dx_rinv)
    low = tril(e, qt_dx_rinv, -1)
    do: Atom = e.sub(low, _h(e, low))  # skew-Hermitian
    a = _aval(qt_dx_rinv)
    if dt.is_complex(a.dtype):
        # R's diagonal stays real: the imaginary part of the diagonal goes to dO.
        imag = e.sub(qt_dx_rinv, e.convert(_real(e, qt_dx_rinv), a.dtype))
        n = a.shape[-1]
        do = e.add(do, _bmul(e, _eye(e, n, n, a.dtype, a.ndim - 2), imag))
    dq = e.add(_mm(e, q, e.sub(do, qt_dx_rinv)), dx_rinv)
    dr = _mm(e, e.sub(qt_dx_rinv, do), r)
    return dq, dr


def _solve_adjoint(e: Emitter, a: Atom, b: Atom) -> Atom:
    """``X`` solving ``A^H X = B``, by an LU factorization of ``A`` (``P A = L U``, so
    ``A^H = U^H L^H P``)."""
    lu, _, perm = e.bind(P.lu_p, a)
    y = triangular_solve(e, lu, b, left_side=True, lower=False, transpose_a=True,
                         conjugate_a=True, unit_diagonal=False)
    z = triangular_solve(e, lu, y, left_side=True, lower=True, transpose_a=True,
                         conjugate_a=True, unit_diagonal=True)
    return _permute_rows(e, perm, z, inverse=True)


def _full_qr_tangents(e: Emitter, q: Atom, dq_mn: Atom, dr_nn: Atom) -> tuple[Atom, Atom]:
    """The tangent of the ``m - n`` completing columns of a full ``Q`` (``m > n``)."""
    a = _aval(q)
    m, n = a.shape[-2], _aval(dr_nn).shape[-1]
    q_mn, q_mp = _slice(e, q, (0, m), (0, n)), _slice(e, q, (0, m), (n, m))
    q_nn, q_pn = _slice(e, q_mn, (0, n), (0, n)), _slice(e, q_mn, (n, m), (0, n))
    dq_nn, dq_pn = _slice(e, dq_mn, (0, n), (0, n)), _slice(e, dq_mn, (n, m), (0, n))
    shifted = e.sub(q_nn, e.broadcast_to(_eye(e, n, n, a.dtype, a.ndim - 2), _aval(q_nn).shape))
    z_pn_h = _solve_adjoint(e, shifted, _h(e, q_pn))
    z_pn = _h(e, z_pn_h)
    rhs = _h(e, e.sub(dq_pn, _mm(e, z_pn, dq_nn)))
    dq_mp = e.sub(_mm(e, dq_mn, z_pn_h), _mm(e, e.add(q_mn, _mm(e, q_mp, z_pn)), rhs))
    dq = _concat(e, [dq_mn, dq_mp], -1)
    zeros = e.zeros(ShapedArray(a.shape[:-2] + (m - n, n), a.dtype))
    return dq, _concat(e, [dr_nn, zeros], -2)


def _qr_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
            pivoting: bool, full_matrices: bool, use_magma: bool | None
            ) -> tuple[list[Atom], list[Tangent]]:
    (x,), (dx,) = primals, tangents
    outs: list[Atom] = list(e.bind(P.qr_p, x, pivoting=pivoting, full_matrices=full_matrices,
                                   use_magma=use_magma))
    q, r = outs[:2]
    if type(dx) is Zero:
        return outs, _zeros_like(e, outs)
    m, n = _aval(x).shape[-2:]
    if pivoting:
        # x[..., :, p] = Q R: the tangents of the factorization of the permuted columns
        # (the pivots are piecewise constant: a zero tangent).  JAX keeps the unpermuted
        # x in R2's tangent below (wrong for wide matrices); the permuted one is used here.
        dx = _t(e, _permute_rows(e, outs[2], _t(e, dx)))
        if m < n:
            x = _t(e, _permute_rows(e, outs[2], _t(e, x)))
    if m < n:
        dq, dr1 = _thin_qr_jvp(e, q, _slice(e, r, (0, m), (0, m)), _slice(e, dx, (0, m), (0, m)))
        x2, dx2 = _slice(e, x, (0, m), (m, n)), _slice(e, dx, (0, m), (m, n))
        dr2 = e.add(_mm(e, _h(e, dq), x2), _mm(e, _h(e, q), dx2))
        return outs, [dq, _concat(e, [dr1, dr2], -1), *_zeros_like(e, outs[2:])]
    q_mn = _slice(e, q, (0, m), (0, n))
    r_nn = _slice(e, r, (0, n), (0, n))
    dq_t, dr_t = _thin_qr_jvp(e, q_mn, r_nn, dx)
    if full_matrices and m > n:
        dq_t, dr_t = _full_qr_tangents(e, q, dq_t, dr_t)
    return outs, [dq_t, dr_t, *_zeros_like(e, outs[2:])]


# -- eigh ---------------------------------------------------------------------------------------


def _symmetrize(e: Emitter, x: Atom) -> Var:
    return _bdiv(e, e.add(x, _h(e, x)), e.literal(2, _aval(x).dtype))


def _eigh_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
              lower: bool, sort_eigenvalues: bool, subset_by_index: tuple[int, int] | None,
              algorithm: Any) -> tuple[list[Atom], list[Tangent]]:
    (a,), (da,) = primals, tangents
    aval = _aval(a)
    n = aval.shape[-1]
    if subset_by_index is not None and subset_by_index != (0, n):
        raise NotImplementedError("the derivative of eigh with subset_by_index (as in JAX)")
    # As JAX: the decomposition of the symmetrized operand (the same, for Hermitian a).
    v, w_real = e.bind(P.eigh_p, _symmetrize(e, a), lower=lower,
                       sort_eigenvalues=sort_eigenvalues, subset_by_index=subset_by_index,
                       algorithm=algorithm)
    if type(da) is Zero:
        return [v, w_real], _zeros_like(e, [v, w_real])
    w = e.convert(w_real, aval.dtype)
    nb = aval.ndim - 2
    eye = _eye(e, n, n, aval.dtype, nb)
    full_eye = e.broadcast_to(eye, aval.shape)
    w_j = e.broadcast_in_dim(w, aval.shape, (*range(nb), nb + 1))
    w_i = e.broadcast_in_dim(w, aval.shape, tuple(range(nb + 1)))
    # 1 / (w_j - w_i) off the diagonal, 0 on it, without dividing by zero (JAX's order of
    # operations, which the diagonal's rounding depends on).
    shifted = e.sub(e.add(full_eye, w_j), w_i)
    f_mat = e.sub(e.bind1(P.integer_pow_p, shifted, y=-1), full_eye)
    vdag_da_v = _mm(e, _mm(e, _h(e, v), da), v)
    dv = _mm(e, v, e.mul(f_mat, vdag_da_v))
    dw = _diagonal(e, _real(e, vdag_da_v))
    return [v, w_real], [dv, dw]


# -- svd ----------------------------------------------------------------------------------------


def _reciprocal_or_zero(e: Emitter, x: Atom, zero_where: Atom) -> Var:
    """``1 / x`` where ``zero_where`` (0 or 1, ``x``'s dtype) is 0, and 0 where it is 1."""
    return e.sub(e.div(e.full(_aval(x), 1), e.add(x, zero_where)), zero_where)


def _svd_tangents(e: Emitter, da: Atom, s: Atom, u: Atom, vt: Atom, m: int, n: int
                  ) -> tuple[Atom, Atom]:
    """Tangents of ``U`` and ``V`` (not ``V^H``) for distinct nonzero singular values."""
    dtype = _aval(u).dtype
    sa = _aval(s)
    k, nb = sa.shape[-1], sa.ndim - 1
    v = _h(e, vt)
    s_row = e.reshape(s, sa.shape[:-1] + (1, k))
    ds_mat = _mm(e, _mm(e, _h(e, u), da), v)
    full = sa.shape[:-1] + (k, k)
    s_r = e.broadcast_to(s_row, full)  # [i, j] = s_j
    s_c = _t(e, s_r)  # [i, j] = s_i
    s_diffs = e.mul(e.add(s_r, s_c), e.sub(s_r, s_c))
    eye = e.broadcast_to(_eye(e, k, k, sa.dtype, nb), full)
    f_mat = e.convert(_reciprocal_or_zero(e, s_diffs, eye), dtype)
    s_row_c = e.convert(s_row, dtype)
    dss = _bmul(e, s_row_c, ds_mat)
    sds = _bmul(e, _t(e, s_row_c), ds_mat)
    s_zeros = e.convert(e.bind1(P.eq_p, s, e.literal(0, sa.dtype)), sa.dtype)
    s_inv_mat = e.convert(_diag_matrix(e, _reciprocal_or_zero(e, s, s_zeros)), dtype)
    half = e.literal(0.5, dtype)
    du_dv_diag = e.mul(_bmul(e, half, e.sub(ds_mat, _h(e, ds_mat))), s_inv_mat)
    du: Atom = _mm(e, u, e.add(e.mul(f_mat, e.add(dss, _h(e, dss))), du_dv_diag))
    dv: Atom = _mm(e, v, e.mul(f_mat, e.add(sds, _h(e, sds))))
    if m > n:
        dav = _mm(e, da, v)
        du = e.add(du, _bdiv(e, e.sub(dav, _mm(e, u, _mm(e, _h(e, u), dav))), s_row_c))
    if n > m:
        dahu = _mm(e, _h(e, da), u)
        dv = e.add(dv, _bdiv(e, e.sub(dahu, _mm(e, v, _mm(e, vt, dahu))), s_row_c))
    return du, dv


def _bdiv(e: Emitter, x: Atom, y: Atom) -> Var:
    shape = tuple(np.broadcast_shapes(_aval(x).shape, _aval(y).shape))
    return e.div(e.broadcast_to(x, shape), e.broadcast_to(y, shape))


def _svd_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
             full_matrices: bool, compute_uv: bool, subset_by_index: tuple[int, int] | None,
             algorithm: Any) -> tuple[list[Atom], list[Tangent]]:
    (a,), (da,) = primals, tangents
    m, n = _aval(a).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "the derivative of svd with full_matrices=True of a non-square matrix (as in JAX)")
    s, u, vt = e.bind(P.svd_p, a, full_matrices=False, compute_uv=True,
                      subset_by_index=subset_by_index, algorithm=algorithm)
    outs: list[Atom] = [s, u, vt] if compute_uv else [s]
    if type(da) is Zero:
        return outs, _zeros_like(e, outs)
    ds = _diagonal(e, _real(e, _mm(e, _mm(e, _h(e, u), da), _h(e, vt))))
    if not compute_uv:
        return outs, [ds]
    du, dv = _svd_tangents(e, da, s, u, vt, m, n)
    return outs, [ds, du, _h(e, dv)]


# -- no derivative ------------------------------------------------------------------------------


def _not_differentiable(prim: Any) -> Any:
    """The JVP of a primitive JAX defines no derivative for: zero tangents pass, others
    raise (as JAX's missing differentiation rule does)."""
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Atom], list[Tangent]]:
        if any(type(t) is not Zero for t in tangents):
            raise NotImplementedError(f"Differentiation rule for '{prim.name}' not "
                                      f"implemented (nor in JAX 0.10.2)")
        outs: list[Atom] = list(e.bind(prim, *primals, **params))
        return outs, _zeros_like(e, outs)
    return rule


# -- batching -----------------------------------------------------------------------------------


def _front(prim: Any) -> Any:
    """Batching of a primitive whose leading dimensions are batch dimensions."""
    def rule(e: Emitter, size: int, vals: list[Atom], dims: list[Dim],
             **params: Any) -> tuple[list[Atom], list[Dim]]:
        args = [bdim_to_front(e, v, d, size) for v, d in zip(vals, dims)]
        outs = e.bind(prim, *args, **params)
        return list(outs), [0] * len(outs)
    return rule


jvp_rules[P.lu_p] = _lu_jvp
defjvp_zero(P.lu_pivots_to_permutation_p)
jvp_rules[P.qr_p] = _qr_jvp
jvp_rules[P.eigh_p] = _eigh_jvp
jvp_rules[P.svd_p] = _svd_jvp
jvp_rules[P.geqrf_p] = _not_differentiable(P.geqrf_p)
jvp_rules[P.geqp3_p] = _not_differentiable(P.geqp3_p)
jvp_rules[P.householder_product_p] = _not_differentiable(P.householder_product_p)
jvp_rules[P.ormqr_p] = _not_differentiable(P.ormqr_p)
for _prim in (P.lu_p, P.lu_pivots_to_permutation_p, P.geqrf_p, P.geqp3_p,
              P.householder_product_p, P.ormqr_p, P.qr_p, P.eigh_p, P.svd_p):
    batching_rules[_prim] = _front(_prim)

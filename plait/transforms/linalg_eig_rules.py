"""JVP, transpose and batching of ``eig`` and ``tridiagonal_solve``, as JAX 0.10.2 has them.

* ``eig``: first-order perturbation theory for distinct eigenvalues.  With ``V`` the
  right eigenvectors, ``dw = diag(V^{-1} dA V)``.  The eigenvectors' tangents exist only
  with ``enable_eigvec_derivs`` (otherwise, as in JAX, asking for them raises):
  ``dV = U + V diag(c)`` with ``U = V (F * V^{-1} dA V)``, ``F[i, j] = 1 / (w_j - w_i)``
  off the diagonal, and ``c`` keeping LAPACK's normalization (unit norm, the largest
  component real); the left eigenvectors are the right ones of ``A^H``.
* ``tridiagonal_solve``: linear in ``b``; in the diagonals,
  ``dX = A^{-1} (db - dA X)``.  Its transpose solves with ``A^T`` (the sub- and
  superdiagonals swapped and shifted).

Both take leading batch dimensions natively.  As in JAX, a ``tridiagonal_solve`` whose
diagonals are not mapped gets its mapped ``b`` as more right-hand sides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import ShapedArray, shaped
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import Tangent, jvp_rules, tangent_aval
from plait.transforms.linalg_factorization_rules import (
    _conj,
    _diagonal,
    _eye,
    _h,
    _mm,
    _pad,
    _permute_rows,
    _slice,
    _t,
)
from plait.transforms.linalg_rules import triangular_solve
from plait.transforms.transpose import Cotangent, UndefPrimal, check_linear_inputs, transpose_rules
from plait.transforms.vmap import Dim, batching_rules, bdim_to_front, move_axis


def _aval(x: Atom) -> ShapedArray:
    return shaped(x.aval)


def _zeros(outs: Sequence[Atom]) -> list[Tangent]:
    return [Zero(tangent_aval(o.aval)) for o in outs]


# -- eig ------------------------------------------------------------------------------------


def _solve(e: Emitter, a: Atom, b: Atom) -> Atom:
    """``X`` solving ``A X = B`` by an LU factorization of ``A`` (``P A = L U``); linear
    in ``B``."""
    lu, _, perm = e.bind(P.lu_p, a)
    y = triangular_solve(e, lu, _permute_rows(e, perm, b), left_side=True, lower=True,
                         transpose_a=False, conjugate_a=False, unit_diagonal=True)
    return triangular_solve(e, lu, y, left_side=True, lower=False, transpose_a=False,
                            conjugate_a=False, unit_diagonal=False)


def _except_rows(nd: int) -> tuple[int, ...]:
    """The dimensions of a ``[..., n, n]`` array but the rows (``nd - 2``)."""
    return (*range(nd - 2), nd - 1)


def _eigvec_jvp(e: Emitter, w: Atom, v: Atom, da: Atom) -> tuple[Atom, Atom]:
    """Tangents of the eigenvalues ``w`` and (LAPACK-normalized) eigenvectors ``v``."""
    va = _aval(v)
    full, nd, n = va.shape, va.ndim, va.shape[-1]
    eye = e.broadcast_to(_eye(e, n, n, va.dtype, nd - 2), full)
    w_j = e.broadcast_in_dim(w, full, _except_rows(nd))
    w_i = e.broadcast_in_dim(w, full, tuple(range(nd - 1)))
    # 1 / (w_j - w_i) off the diagonal, 0 on it (JAX's order of operations).
    f_mat = e.sub(e.bind1(P.integer_pow_p, e.sub(e.add(eye, w_j), w_i), y=-1), eye)
    p_mat = _mm(e, _solve(e, v, da), v)
    dw = _diagonal(e, p_mat)
    u = _mm(e, v, e.mul(f_mat, p_mat))
    # dv_j = u_j + c_j v_j, c_j fixed by the unit norm and the real largest component.
    k = e.bind1(P.argmax_p, e.bind1(P.abs_p, v), axes=(nd - 2,), index_dtype=dt.int32)
    rows = e.bind1(P.iota_p, dtype=dt.int32, shape=full, dimension=nd - 2, sharding=None)
    mask = e.convert(e.bind1(P.eq_p, rows, e.broadcast_in_dim(k, full, _except_rows(nd))),
                     va.dtype)
    re = e.neg(e.bind1(P.real_p, e.reduce_sum(e.mul(_conj(e, v), u), (nd - 2,))))
    im = e.div(e.neg(e.bind1(P.imag_p, e.reduce_sum(e.mul(mask, u), (nd - 2,)))),
               e.bind1(P.real_p, e.reduce_sum(e.mul(mask, v), (nd - 2,))))
    c = e.bind1(P.complex_p, re, im)
    return dw, e.add(u, e.mul(v, e.broadcast_in_dim(c, full, _except_rows(nd))))


def _eig_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
             compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
             enable_eigvec_derivs: bool, implementation: Any
             ) -> tuple[list[Atom], list[Tangent]]:
    (a,), (da,) = primals, tangents
    vectors = compute_left_eigenvectors or compute_right_eigenvectors
    if vectors and not enable_eigvec_derivs and type(da) is not Zero:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
            "the input that cannot be checked (see the enable_eigvec_derivs argument of "
            "lax.linalg.eig). Pass enable_eigvec_derivs=True to lax.linalg.eig to opt in "
            "(as in JAX: https://github.com/jax-ml/jax/issues/2748).")
    outs = e.bind(P.eig_p, a, compute_left_eigenvectors=compute_left_eigenvectors,
                  compute_right_eigenvectors=True, enable_eigvec_derivs=enable_eigvec_derivs,
                  implementation=implementation)
    w, vr = outs[0], outs[-1]
    primal: list[Atom] = [w]
    if compute_left_eigenvectors:
        primal.append(outs[1])
    if compute_right_eigenvectors:
        primal.append(vr)
    if type(da) is Zero:
        return primal, _zeros(primal)
    da_c = e.convert(da, _aval(vr).dtype)
    if not vectors:
        # diag(V^{-1} dA V), as a sum of products.
        nd = _aval(vr).ndim
        return primal, [e.reduce_sum(e.mul(_solve(e, vr, da_c), _t(e, vr)), (nd - 1,))]
    dw, dvr = _eigvec_jvp(e, w, vr, da_c)
    tangents_out: list[Tangent] = [dw]
    if compute_left_eigenvectors:
        _, dvl = _eigvec_jvp(e, _conj(e, w), outs[1], _h(e, da_c))
        tangents_out.append(dvl)
    if compute_right_eigenvectors:
        tangents_out.append(dvr)
    return primal, tangents_out


def _eig_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim],
              **params: Any) -> tuple[list[Atom], list[Dim]]:
    outs = e.bind(P.eig_p, bdim_to_front(e, vals[0], dims[0], size), **params)
    return list(outs), [0] * len(outs)


# -- tridiagonal_solve ------------------------------------------------------------------------


def _tridiagonal_product(e: Emitter, dl: Atom, d: Atom, du: Atom, x: Atom) -> Atom:
    """``A X`` for the tridiagonal ``A`` of ``dl, d, du`` (JAX's order of the sums)."""
    xa = _aval(x)
    m, k = xa.shape[-2:]
    nd = xa.ndim

    def col(v: Atom) -> Atom:  # [..., m] -> [..., m, k]
        return e.broadcast_in_dim(v, xa.shape, tuple(range(nd - 1)))

    y: Atom = e.mul(col(d), x)
    if m > 1:
        low = e.mul(_slice(e, col(dl), (1, m), (0, k)), _slice(e, x, (0, m - 1), (0, k)))
        y = e.add(y, _pad(e, low, (1, 0), (0, 0)))
        up = e.mul(_slice(e, col(du), (0, m - 1), (0, k)), _slice(e, x, (1, m), (0, k)))
        y = e.add(y, _pad(e, up, (0, 1), (0, 0)))
    return y


def _tridiagonal_solve_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
                           *, perturb_singular: bool) -> tuple[list[Atom], list[Tangent]]:
    dl, d, du, b = primals
    *diag_dots, b_dot = tangents
    ans = e.bind1(P.tridiagonal_solve_p, dl, d, du, b, perturb_singular=perturb_singular)
    rhs: Tangent = b_dot
    if not all(type(t) is Zero for t in diag_dots):
        dl_t, d_t, du_t = (e.instantiate(t) for t in diag_dots)
        matvec = _tridiagonal_product(e, dl_t, d_t, du_t, ans)
        rhs = e.neg(matvec) if type(b_dot) is Zero else e.sub(b_dot, matvec)
    if type(rhs) is Zero:
        return [ans], _zeros([ans])
    return [ans], [e.bind1(P.tridiagonal_solve_p, dl, d, du, rhs,
                           perturb_singular=perturb_singular)]


def _shift(e: Emitter, x: Atom, up: bool) -> Var:
    """``x[..., 1:]`` then a zero (``up``), or a zero then ``x[..., :-1]``."""
    a = _aval(x)
    m, nd = a.shape[-1], a.ndim
    start = (0,) * (nd - 1) + ((1,) if up else (0,))
    limit = a.shape[:-1] + ((m,) if up else (m - 1,))
    part = e.bind1(P.slice_p, x, start_indices=start, limit_indices=limit, strides=None)
    config = ((0, 0, 0),) * (nd - 1) + (((0, 1, 0),) if up else ((1, 0, 0),))
    return e.bind1(P.pad_p, part, e.literal(0, a.dtype), padding_config=config)


def _tridiagonal_solve_transpose(e: Emitter, cts: Sequence[Atom | Zero],
                                 dl: Atom | UndefPrimal, d: Atom | UndefPrimal,
                                 du: Atom | UndefPrimal, b: Atom | UndefPrimal, *,
                                 perturb_singular: bool) -> Sequence[Cotangent]:
    check_linear_inputs("tridiagonal_solve", [dl, d, du, b], [3])
    assert type(dl) is not UndefPrimal and type(d) is not UndefPrimal \
        and type(du) is not UndefPrimal
    (ct,) = cts
    if type(ct) is Zero or _aval(d).shape[-1] == 0:
        return [None, None, None, None if type(ct) is Zero else e.zeros(_aval(ct))]
    # A^T: its subdiagonal is A's superdiagonal shifted down, and the other way round.
    dl_t, du_t = _shift(e, du, up=False), _shift(e, dl, up=True)
    return [None, None, None, e.bind1(P.tridiagonal_solve_p, dl_t, d, du_t, ct,
                                      perturb_singular=perturb_singular)]


def _tridiagonal_solve_vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                            perturb_singular: bool) -> tuple[list[Atom], list[Dim]]:
    dl, d, du, b = vals
    if all(x is None for x in dims[:3]):
        bdim = dims[3]
        assert bdim is not None
        nd = _aval(b).ndim
        moved = move_axis(e, b, bdim, nd - 2)  # [..., m, B, k]
        shape = _aval(moved).shape
        flat = e.reshape(moved, shape[:-2] + (shape[-2] * shape[-1],))
        out = e.bind1(P.tridiagonal_solve_p, dl, d, du, flat, perturb_singular=perturb_singular)
        return [e.reshape(out, shape)], [nd - 2]
    args = [bdim_to_front(e, v, dim, size) for v, dim in zip(vals, dims)]
    return [e.bind1(P.tridiagonal_solve_p, *args, perturb_singular=perturb_singular)], [0]


jvp_rules[P.eig_p] = _eig_jvp
batching_rules[P.eig_p] = _eig_vmap
jvp_rules[P.tridiagonal_solve_p] = _tridiagonal_solve_jvp
transpose_rules[P.tridiagonal_solve_p] = _tridiagonal_solve_transpose
batching_rules[P.tridiagonal_solve_p] = _tridiagonal_solve_vmap

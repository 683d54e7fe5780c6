"""Lowering of the matrix factorizations to jaxlib's LAPACK kernels, as JAX 0.10.2 lowers
them on CPU.

``lu`` calls ``?getrf`` (pivots made 0-based, then turned into a permutation by a
``stablehlo.while`` loop of row swaps); ``geqrf``, ``geqp3``, ``householder_product`` and
``ormqr`` call ``?geqrf``, ``?geqp3``, ``?orgqr``/``?ungqr`` and ``?ormqr``/``?unmqr``;
``qr`` is ``geqrf`` (``geqp3`` with pivoting, its pivots made 0-based) and
``householder_product`` with the padding, slicing and upper-triangular mask JAX emits;
``eigh`` calls ``?syevd``/``?heevd`` and ``svd`` ``?gesdd`` (or ``?gesvd``); matrices
without entries get JAX's constant answers.  Results of a factorization whose ``info``
reports a failure are NaN, as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.ir.primitives.linalg_factorizations import EighImplementation, SvdAlgorithm
from plait.lowering.emitter import FuncEmitter, Value, i64_array, tensor_type
from plait.lowering.lapack import target_name
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import compare, register, scalar_type
from plait.lowering.rules.linalg_decompositions import lapack_call

__all__ = ["permutation_from_pivots"]

_I32 = dt.int32


def _splat(fn: FuncEmitter, value: Any, aval: ShapedArray) -> Value:
    """``value`` broadcast to ``aval`` (a scalar constant and a broadcast, as JAX)."""
    scalar = fn.constant(value, ShapedArray((), aval.dtype))
    return fn.op1("stablehlo.broadcast_in_dim", [scalar], tensor_type(aval),
                  f"broadcast_dimensions = {i64_array(())}")


def _info_ok(fn: FuncEmitter, info: Value, batch: tuple[int, ...], direction: str) -> Value:
    """Which factorizations succeeded: ``info == 0`` (``info >= 0`` for LU, whose positive
    codes only report a singular matrix)."""
    zeros = _splat(fn, 0, ShapedArray(batch, _I32))
    return compare(fn, direction, info, zeros, _I32, batch)


def _nan_unless(fn: FuncEmitter, ok: Value, x: Value, aval: ShapedArray,
                batch: tuple[int, ...]) -> Value:
    """``x``, each batch member's array all NaN where ``ok`` is false."""
    ones = (1,) * (aval.ndim - len(batch))
    ok_b = fn.op1("stablehlo.broadcast_in_dim", [ok], tensor_type((batch + ones, dt.bool_)),
                  f"broadcast_dimensions = {i64_array(range(len(batch)))}")
    nan = complex(np.nan, np.nan) if dt.is_complex(aval.dtype) else np.nan
    nans = _splat(fn, nan, aval)
    which = fn.op1("stablehlo.broadcast_in_dim", [ok_b], tensor_type((aval.shape, dt.bool_)),
                   f"broadcast_dimensions = {i64_array(range(aval.ndim))}")
    return fn.op1("stablehlo.select", [which, x, nans], tensor_type(aval))


# -- lu ---------------------------------------------------------------------------------------


def _swap_step(fn: FuncEmitter, i: Value, pivots: Value, perm: Value, b: int, k: int,
               m: int) -> Value:
    """One row swap of the permutation loop on ``[b, m]`` permutations: entries ``i`` and
    ``pivots[:, i]`` exchanged."""
    zero = fn.constant(0, ShapedArray((), _I32))
    col = tensor_type(((b, 1), _I32))
    j = fn.op1("stablehlo.dynamic_slice", [pivots, zero, i], col,
               f"slice_sizes = {i64_array((b, 1))}")
    x = fn.op1("stablehlo.dynamic_slice", [perm, zero, i], col,
               f"slice_sizes = {i64_array((b, 1))}")
    # y[r] = perm[r, j[r]]: a gather batched over the rows.
    y = fn.op1("stablehlo.gather", [perm, j], col,
               "dimension_numbers = #stablehlo.gather<offset_dims = [1], "
               "operand_batching_dims = [0], start_indices_batching_dims = [0], "
               "start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, "
               f"slice_sizes = {i64_array((1, 1))}")
    perm_type = tensor_type(((b, m), _I32))
    perm = fn.op1("stablehlo.dynamic_update_slice", [perm, y, zero, i], perm_type)
    # perm[r, j[r]] = x[r]: the matching batched scatter (the update replaces).
    st = scalar_type(_I32)
    region = fn.region([st, st])
    fn.close(region)
    x_flat = fn.op1("stablehlo.reshape", [x], tensor_type(((b,), _I32)))
    return fn.op1("stablehlo.scatter", [perm, j, x_flat], perm_type,
                  "scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [1], "
                  "input_batching_dims = [0], scatter_indices_batching_dims = [0], "
                  "scatter_dims_to_operand_dims = [1], index_vector_dim = 1>, "
                  "indices_are_sorted = false, unique_indices = false",
                  [region.text([region.args[1]])])


def permutation_from_pivots(fn: FuncEmitter, pivots: Value, pivots_aval: ShapedArray,
                            size: int) -> Value:
    """The permutation of ``range(size)`` made by the row swaps ``pivots`` (0-based,
    ``[..., k]``): a while loop over the swaps, the batch flattened to one dimension."""
    batch, k = pivots_aval.shape[:-1], pivots_aval.shape[-1]
    out_type = tensor_type((batch + (size,), _I32))
    b = int(np.prod(batch, dtype=np.int64))
    if b == 0 or k == 0 or size == 0:
        return fn.op1("stablehlo.iota", [], out_type, f"iota_dimension = {len(batch)} : i64")
    flat_piv = fn.op1("stablehlo.reshape", [pivots], tensor_type(((b, k), _I32)))
    perm_type = tensor_type(((b, size), _I32))
    perm0 = fn.op1("stablehlo.iota", [], perm_type, "iota_dimension = 1 : i64")
    start = fn.constant(0, ShapedArray((), _I32))
    types = [scalar_type(_I32), flat_piv.type, perm_type]
    cond = fn.region(types)
    bound = fn.constant(k, ShapedArray((), _I32))
    pred = compare(fn, "LT", cond.args[0], bound, _I32, ())
    fn.close(cond)
    body = fn.region(types)
    i, piv, perm = body.args
    new_perm = _swap_step(fn, i, piv, perm, b, k, size)
    one = fn.constant(1, ShapedArray((), _I32))
    i1 = fn.op1("stablehlo.add", [i, one], scalar_type(_I32))
    fn.close(body)
    outs = fn.op("stablehlo.while", [start, flat_piv, perm0], types,
                 regions=[cond.text([pred]), body.text([i1, piv, new_perm])])
    return fn.op1("stablehlo.reshape", [outs[2]], out_type)


@register(P.lu_p)
def _lu(ctx: LoweringContext, x: Value) -> Sequence[Value]:
    fn = ctx.fn
    aval = shaped(ctx.avals_in[0])
    _, piv_aval, _ = (shaped(a) for a in ctx.avals_out)
    batch, m = aval.shape[:-2], aval.shape[-2]
    info_aval = ShapedArray(batch, _I32)
    lu, piv, info = lapack_call(fn, target_name("getrf", aval.dtype), [x], [aval],
                                [aval, piv_aval, info_aval], {}, {0: 0})
    piv = fn.op1("stablehlo.subtract", [piv, _splat(fn, 1, piv_aval)], tensor_type(piv_aval))
    ok = _info_ok(fn, info, batch, "GE")
    lu = _nan_unless(fn, ok, lu, aval, batch)
    return [lu, piv, permutation_from_pivots(fn, piv, piv_aval, m)]


@register(P.lu_pivots_to_permutation_p)
def _lu_pivots_to_permutation(ctx: LoweringContext, pivots: Value, *,
                              permutation_size: int) -> Sequence[Value]:
    return [permutation_from_pivots(ctx.fn, pivots, shaped(ctx.avals_in[0]), permutation_size)]


# -- qr ---------------------------------------------------------------------------------------


def _geqrf_call(fn: FuncEmitter, x: Value, aval: ShapedArray) -> list[Value]:
    m, n = aval.shape[-2:]
    taus = ShapedArray(aval.shape[:-2] + (min(m, n),), aval.dtype)
    return lapack_call(fn, target_name("geqrf", aval.dtype), [x], [aval], [aval, taus], {},
                       {0: 0})


def _householder_call(fn: FuncEmitter, a: Value, taus: Value, a_aval: ShapedArray,
                      taus_aval: ShapedArray) -> Value:
    routine = "ungqr" if dt.is_complex(a_aval.dtype) else "orgqr"
    (q,) = lapack_call(fn, target_name(routine, a_aval.dtype), [a, taus], [a_aval, taus_aval],
                       [a_aval], {}, {0: 0})
    return q


@register(P.ormqr_p)
def _ormqr(ctx: LoweringContext, a: Value, taus: Value, c: Value, *, left: bool,
           transpose: bool) -> Sequence[Value]:
    avals = [shaped(v) for v in ctx.avals_in]
    routine = "unmqr" if dt.is_complex(avals[0].dtype) else "ormqr"
    return lapack_call(ctx.fn, target_name(routine, avals[0].dtype), [a, taus, c], avals,
                       [avals[2]], {"left": left, "transpose": transpose}, {2: 0})


def _geqp3_call(fn: FuncEmitter, a: Value, jpvt: Value, aval: ShapedArray,
                jpvt_aval: ShapedArray) -> list[Value]:
    m, n = aval.shape[-2:]
    taus = ShapedArray(aval.shape[:-2] + (min(m, n),), aval.dtype)
    if 0 in aval.shape:
        # jaxlib's kernel divides by zero on an empty batch or matrix (JAX crashes);
        # LAPACK returns at once there, jpvt untouched.
        return [a, jpvt, _splat(fn, 0, taus)]
    return lapack_call(fn, target_name("geqp3", aval.dtype), [a, jpvt], [aval, jpvt_aval],
                       [aval, jpvt_aval, taus], {}, {0: 0, 1: 1})


@register(P.geqp3_p)
def _geqp3(ctx: LoweringContext, a: Value, jpvt: Value, *,
           use_magma: bool | None) -> Sequence[Value]:
    a_aval, jpvt_aval = (shaped(v) for v in ctx.avals_in)
    return _geqp3_call(ctx.fn, a, jpvt, a_aval, jpvt_aval)


@register(P.geqrf_p)
def _geqrf(ctx: LoweringContext, x: Value) -> Sequence[Value]:
    return _geqrf_call(ctx.fn, x, shaped(ctx.avals_in[0]))


@register(P.householder_product_p)
def _householder_product(ctx: LoweringContext, a: Value, taus: Value) -> Sequence[Value]:
    a_aval, taus_aval = (shaped(v) for v in ctx.avals_in)
    return [_householder_call(ctx.fn, a, taus, a_aval, taus_aval)]


def _slice(fn: FuncEmitter, x: Value, aval: ShapedArray, rows: int, cols: int) -> Value:
    """The leading ``rows`` by ``cols`` block of each matrix."""
    nd = aval.ndim
    limit = aval.shape[:-2] + (rows, cols)
    if limit == aval.shape:  # (JAX's slicing emits nothing then)
        return x
    return fn.op1("stablehlo.slice", [x], tensor_type((limit, aval.dtype)),
                  f"start_indices = {i64_array((0,) * nd)}, limit_indices = {i64_array(limit)}, "
                  f"strides = {i64_array((1,) * nd)}")


def _triu(fn: FuncEmitter, x: Value, aval: ShapedArray) -> Value:
    """Zeros below the diagonal, with JAX's mask: ``row - 1 >= col`` in iotas of the
    default integer type."""
    rows, cols = aval.shape[-2:]
    idx = dt.canonicalize(np.dtype(np.int64))
    mat = ((rows, cols), idx)
    r = fn.op1("stablehlo.iota", [], tensor_type(mat), "iota_dimension = 0 : i64")
    r = fn.op1("stablehlo.add", [r, _splat(fn, -1, ShapedArray(*mat))], tensor_type(mat))
    c = fn.op1("stablehlo.iota", [], tensor_type(mat), "iota_dimension = 1 : i64")
    below = compare(fn, "GE", r, c, idx, (rows, cols))
    if aval.ndim > 2:
        below = fn.op1("stablehlo.broadcast_in_dim", [below],
                       tensor_type((aval.shape, dt.bool_)),
                       f"broadcast_dimensions = {i64_array((aval.ndim - 2, aval.ndim - 1))}")
    zeros = _splat(fn, 0, aval)
    return fn.op1("stablehlo.select", [below, zeros, x], tensor_type(aval))


@register(P.qr_p)
def _qr(ctx: LoweringContext, x: Value, *, pivoting: bool, full_matrices: bool,
        use_magma: bool | None) -> Sequence[Value]:
    fn = ctx.fn
    aval = shaped(ctx.avals_in[0])
    q_aval, r_aval = (shaped(a) for a in ctx.avals_out[:2])
    batch, (m, n) = aval.shape[:-2], aval.shape[-2:]
    piv_aval = ShapedArray(batch + (n,), _I32)
    if m == 0 or n == 0:
        empty = _empty_qr(fn, q_aval, r_aval)
        return empty + [_splat(fn, 0, piv_aval)] if pivoting else empty
    pivots: list[Value] = []
    if pivoting:
        # As JAX: geqp3 with every column free, its 1-based pivots made 0-based.
        jpvt = _splat(fn, 0, piv_aval)
        r, piv, taus = _geqp3_call(fn, x, jpvt, aval, piv_aval)
        pivots = [fn.op1("stablehlo.subtract", [piv, _splat(fn, 1, piv_aval)],
                         tensor_type(piv_aval))]
    else:
        r, taus = _geqrf_call(fn, x, aval)
    taus_aval = ShapedArray(batch + (min(m, n),), aval.dtype)
    if m < n:
        q_in = _slice(fn, r, aval, m, m)
        q = _householder_call(fn, q_in, taus, q_aval, taus_aval)
    elif full_matrices:
        zero = fn.constant(0, ShapedArray((), aval.dtype))
        nd = aval.ndim
        q_in = fn.op1("stablehlo.pad", [r, zero], tensor_type(q_aval),
                      f"edge_padding_low = {i64_array((0,) * nd)}, "
                      f"edge_padding_high = {i64_array((0,) * (nd - 1) + (m - n,))}, "
                      f"interior_padding = {i64_array((0,) * nd)}")
        q = _householder_call(fn, q_in, taus, q_aval, taus_aval)
    else:
        q = _householder_call(fn, r, taus, aval, taus_aval)
        r = _slice(fn, r, aval, n, n)
    return [q, _triu(fn, r, r_aval), *pivots]


def _eye(fn: FuncEmitter, aval: ShapedArray) -> Value:
    """Identity matrices (their leading columns), built as JAX's ``lax._eye``: int32 iotas
    compared, converted, and broadcast over the batch dimensions."""
    mat = (aval.shape[-2:], _I32)
    rows = fn.op1("stablehlo.iota", [], tensor_type(mat), "iota_dimension = 0 : i64")
    rows = fn.op1("stablehlo.add", [rows, _splat(fn, 0, ShapedArray(*mat))], tensor_type(mat))
    cols = fn.op1("stablehlo.iota", [], tensor_type(mat), "iota_dimension = 1 : i64")
    eye = fn.op1("stablehlo.convert", [compare(fn, "EQ", rows, cols, _I32, mat[0])],
                 tensor_type((mat[0], aval.dtype)))
    if aval.ndim == 2:
        return eye
    nd = aval.ndim
    return fn.op1("stablehlo.broadcast_in_dim", [eye], tensor_type(aval),
                  f"broadcast_dimensions = {i64_array((nd - 2, nd - 1))}")


def _empty_qr(fn: FuncEmitter, q_aval: ShapedArray, r_aval: ShapedArray) -> list[Value]:
    """An empty matrix: ``Q`` the identity's leading columns, ``R`` zeros (as JAX)."""
    return [_eye(fn, q_aval), _splat(fn, 0, r_aval)]


# -- eigh and svd -----------------------------------------------------------------------------


@register(P.eigh_p)
def _eigh(ctx: LoweringContext, x: Value, *, lower: bool, sort_eigenvalues: bool,
          subset_by_index: tuple[int, int] | None,
          algorithm: EighImplementation | None) -> Sequence[Value]:
    fn = ctx.fn
    aval = shaped(ctx.avals_in[0])
    v_aval, w_aval = (shaped(a) for a in ctx.avals_out)
    n, batch = aval.shape[-1], aval.shape[:-2]
    if subset_by_index is not None and subset_by_index != (0, n):
        raise NotImplementedError("eigh: subset_by_index is not supported on CPU (as in JAX)")
    if algorithm in (EighImplementation.QDWH, EighImplementation.JACOBI):
        raise NotImplementedError(f"eigh: {algorithm} is not supported on CPU (as in JAX)")
    routine = "heevd" if dt.is_complex(aval.dtype) else "syevd"
    config = {"mode": ord("V"), "uplo": ord("L" if lower else "U")}
    v, w, info = lapack_call(fn, target_name(routine, aval.dtype), [x], [aval],
                             [v_aval, w_aval, ShapedArray(batch, _I32)], config, {0: 0})
    ok = _info_ok(fn, info, batch, "EQ")
    return [_nan_unless(fn, ok, v, v_aval, batch), _nan_unless(fn, ok, w, w_aval, batch)]


def _empty_svd(fn: FuncEmitter, aval: ShapedArray, outs: Sequence[ShapedArray],
               full_matrices: bool) -> list[Value]:
    """JAX's answer for matrices without entries: no singular values and, with
    ``full_matrices``, the identity as the one nonempty factor (in JAX's order: the
    larger factor first, then the ``0 x 0`` one)."""
    s = _splat(fn, 0, outs[0])
    if len(outs) == 1:
        return [s]
    m, n = aval.shape[-2:]
    u_aval, vt_aval = outs[1:]
    big_aval, small_aval = (vt_aval, u_aval) if m < n else (u_aval, vt_aval)
    big = _eye(fn, big_aval) if full_matrices else _splat(fn, 0, big_aval)
    small = _splat(fn, 0, small_aval)
    return [s, small, big] if m < n else [s, big, small]


def _svd_routine(algorithm: SvdAlgorithm | None) -> str:
    if algorithm in (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.DIVIDE_AND_CONQUER):
        return "gesdd"
    if algorithm == SvdAlgorithm.QR:
        return "gesvd"
    raise NotImplementedError(f"svd: {algorithm} is not implemented on CPU (as in JAX)")


@register(P.svd_p)
def _svd(ctx: LoweringContext, x: Value, *, full_matrices: bool, compute_uv: bool,
         subset_by_index: tuple[int, int] | None,
         algorithm: SvdAlgorithm | None) -> Sequence[Value]:
    fn = ctx.fn
    aval = shaped(ctx.avals_in[0])
    outs = [shaped(a) for a in ctx.avals_out]
    batch, (m, n) = aval.shape[:-2], aval.shape[-2:]
    k = min(m, n)
    if subset_by_index is not None and subset_by_index != (0, k):
        raise NotImplementedError("svd: subset_by_index is not supported on CPU (as in JAX)")
    if m == 0 or n == 0:
        return _empty_svd(fn, aval, outs, full_matrices)
    mode = "N" if not compute_uv else ("A" if full_matrices else "S")
    u_aval = ShapedArray(batch + (m, m if full_matrices else k), aval.dtype)
    vt_aval = ShapedArray(batch + (n if full_matrices else k, n), aval.dtype)
    avals_out = [aval, outs[0], u_aval, vt_aval, ShapedArray(batch, _I32)]
    _, s, u, vt, info = lapack_call(fn, target_name(_svd_routine(algorithm), aval.dtype), [x],
                                    [aval], avals_out, {"mode": ord(mode)}, {0: 0})
    ok = _info_ok(fn, info, batch, "EQ")
    results = [_nan_unless(fn, ok, s, outs[0], batch)]
    if compute_uv:
        results += [_nan_unless(fn, ok, u, u_aval, batch), _nan_unless(fn, ok, vt, vt_aval, batch)]
    return results

"""Lowering of ``eig`` and ``tridiagonal_solve`` to jaxlib's LAPACK kernels, as JAX 0.10.2
lowers them on CPU.

``eig`` calls ``?geev`` (``compute_left``/``compute_right`` as ``'V'`` or ``'N'``): the
kernel itself assembles complex eigenvectors from a real matrix's packed pairs, and the
real and imaginary parts of a real matrix's eigenvalues (two results) are joined with
``stablehlo.complex``.  ``tridiagonal_solve`` calls ``?gtsv``, each of its four results
reusing its operand's buffer (or, with ``perturb_singular``, jaxlib's
``tridiagonal_solve_perturbed_ffi``).  Results whose ``info`` reports a failure are NaN.
"""

from __future__ import annotations

from collections.abc import Sequence

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.ir.primitives.linalg_eig import EigImplementation
from plait.lowering.emitter import Value, tensor_type
from plait.lowering.lapack import ensure_registered, target_name
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import register
from plait.lowering.rules.linalg_decompositions import lapack_call
from plait.lowering.rules.linalg_factorizations import _info_ok, _nan_unless

_I32 = dt.int32


@register(P.eig_p)
def _eig(ctx: LoweringContext, x: Value, *, compute_left_eigenvectors: bool,
         compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
         implementation: EigImplementation | None) -> Sequence[Value]:
    if implementation not in (None, EigImplementation.LAPACK):
        raise ValueError("Only the lapack implementation is supported on CPU.")
    fn = ctx.fn
    aval = shaped(ctx.avals_in[0])
    outs = [shaped(a) for a in ctx.avals_out]
    batch = aval.shape[:-2]
    real = not dt.is_complex(aval.dtype)
    w_aval = ShapedArray(aval.shape[:-1], aval.dtype)
    v_aval = ShapedArray(aval.shape, outs[0].dtype)
    avals_out = [w_aval] * (2 if real else 1) + [v_aval, v_aval, ShapedArray(batch, _I32)]
    config = {"compute_left": ord("V" if compute_left_eigenvectors else "N"),
              "compute_right": ord("V" if compute_right_eigenvectors else "N")}
    *w, vl, vr, info = lapack_call(fn, target_name("geev", aval.dtype), [x], [aval],
                                   avals_out, config, {})
    w_c = fn.op1("stablehlo.complex", w, tensor_type(outs[0])) if real else w[0]
    ok = _info_ok(fn, info, batch, "EQ")
    results = [_nan_unless(fn, ok, w_c, outs[0], batch)]
    if compute_left_eigenvectors:
        results.append(_nan_unless(fn, ok, vl, v_aval, batch))
    if compute_right_eigenvectors:
        results.append(_nan_unless(fn, ok, vr, v_aval, batch))
    return results


@register(P.tridiagonal_solve_p)
def _tridiagonal_solve(ctx: LoweringContext, dl: Value, d: Value, du: Value, b: Value, *,
                       perturb_singular: bool) -> Sequence[Value]:
    fn = ctx.fn
    avals_in = [shaped(a) for a in ctx.avals_in]
    b_aval = avals_in[-1]
    batch = b_aval.shape[:-2]
    if perturb_singular:
        ensure_registered()
        return lapack_call(fn, "tridiagonal_solve_perturbed_ffi", [dl, d, du, b], avals_in,
                           [b_aval], {}, {})
    *_, x, info = lapack_call(fn, target_name("gtsv", b_aval.dtype), [dl, d, du, b], avals_in,
                              [*avals_in, ShapedArray(batch, _I32)], {},
                              {0: 0, 1: 1, 2: 2, 3: 3})
    ok = _info_ok(fn, info, batch, "EQ")
    return [_nan_unless(fn, ok, x, b_aval, batch)]

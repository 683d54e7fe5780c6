"""Lowering of ``bessel_i0e``: Cephes' Chebyshev series, evaluated with the operations
in the order JAX 0.10.2 uses (so the results agree to the bit); float16 and bfloat16
are computed in float32, whose coefficients suffice for them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray, shaped
from plait.lowering import cephes
from plait.lowering.emitter import FuncEmitter, Value, tensor_type
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import compare, convert, register


def _chebyshev(fn: FuncEmitter, x: Value, aval: ShapedArray,
               coefficients: Sequence[float]) -> Value:
    """Clenshaw's recurrence ``b0 = x b1 - b2 + c`` from zeros, then ``(b0 - b2) / 2``."""
    ty = tensor_type(aval)

    def const(v: float) -> Value:
        return fn.constant(v, aval)

    b0, b1, b2 = const(0.0), const(0.0), const(0.0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = fn.op1("stablehlo.add", [fn.op1("stablehlo.subtract", [
            fn.op1("stablehlo.multiply", [x, b1], ty), b2], ty), const(c)], ty)
    return fn.op1("stablehlo.multiply", [const(0.5), fn.op1("stablehlo.subtract", [b0, b2], ty)],
                  ty)


@register(P.bessel_i0e_p)
def _bessel_i0e(ctx: LoweringContext, x: Value) -> Sequence[Value]:
    fn = ctx.fn
    a = shaped(ctx.avals_in[0])
    work = a.update(dtype=np.dtype(np.float64) if a.dtype == dt.float64 else
                    np.dtype(np.float32), weak_type=False)
    coeffs_a, coeffs_b = ((cephes.I0E_A_F64, cephes.I0E_B_F64) if work.dtype == dt.float64
                          else (cephes.I0E_A_F32, cephes.I0E_B_F32))
    ty = tensor_type(work)
    ax = fn.op1("stablehlo.abs", [convert(fn, x, a, work.dtype)], ty)
    small = _chebyshev(fn, fn.op1("stablehlo.subtract", [
        fn.op1("stablehlo.multiply", [fn.constant(0.5, work), ax], ty), fn.constant(2.0, work)],
        ty), work, coeffs_a)
    big = fn.op1("stablehlo.divide", [
        _chebyshev(fn, fn.op1("stablehlo.subtract", [
            fn.op1("stablehlo.divide", [fn.constant(32.0, work), ax], ty),
            fn.constant(2.0, work)], ty), work, coeffs_b),
        fn.op1("stablehlo.sqrt", [ax], ty)], ty)
    le8 = compare(fn, "LE", ax, fn.constant(8.0, work), work.dtype, work.shape)
    out = fn.op1("stablehlo.select", [le8, small, big], ty)
    return [convert(fn, out, work, a.dtype)]

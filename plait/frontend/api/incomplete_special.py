"""The decompositions that lower ``igamma``, ``igammac``, ``igamma_grad_a``,
``random_gamma_grad`` and ``regularized_incomplete_beta`` (registered in
:mod:`plait.ir.decompositions` at import), written with ``plait.lax`` and loops.

They follow the algorithms JAX 0.10.2 lowers these primitives with (Cephes' and
XLA's): for ``P(a, x)`` the power series where ``x < a`` or ``x < 1``, else the
continued fraction of ``Q(a, x)``, each also carrying its derivative in ``a`` for the
two derivative primitives; for ``I_x(a, b)`` the continued fraction of DLMF 8.17.22 by
the modified Lentz method, after the symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)`` where
it converges faster.  Every element iterates until all have converged, as in JAX.
float16 and bfloat16 are computed in float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from plait.frontend import lax
from plait.frontend.api.control_flow import while_loop
from plait.frontend.core.array_base import Array
from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.tree_util import tree_structure
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.avals import ShapedArray
from plait.ir.decompositions import register_decomposition
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitive import Primitive

__all__ = ["random_gamma_grad"]

_VALUE, _DERIVATIVE, _SAMPLE_DERIVATIVE = "value", "derivative", "sample_derivative"

# ml_dtypes.finfo (np.finfo extended to bfloat16) is not annotated.
_finfo: Callable[[Any], Any] = ml_dtypes.finfo


def _c(x: Array, value: float) -> Array:
    return lax.full_like(x, value)


def _any(x: Array) -> Array:
    return lax.reduce_or(x, tuple(range(x.ndim)))


def _series(ax: Array, x: Array, a: Array, enabled: Array, mode: str) -> Array:
    """``P(a, x)`` (or a derivative in ``a``) by ``sum_n x^n / ((a+1)...(a+n))``."""
    eps = float(_finfo(x.dtype).eps)

    def body(vals: tuple[Array, ...]) -> tuple[Array, ...]:
        on, r, c, ans, dc_da, dans_da = vals
        r = r + 1
        dc_da = dc_da * (x / r) - (c * x) / (r * r)
        dans_da = dans_da + dc_da
        c = c * (x / r)
        ans = ans + c
        small = c / ans if mode == _VALUE else lax.abs(dc_da / dans_da)
        new = (r, c, ans, dc_da, dans_da)
        return (lax.bitwise_and(on, small > eps),
                *(lax.select(on, n, o) for n, o in zip(new, vals[1:])))

    init = (enabled, a, _c(a, 1), _c(a, 1), _c(a, 0), _c(a, 0))
    vals: tuple[Array, ...] = while_loop(lambda v: _any(v[0]), body, init)
    ans, dans_da = vals[3], vals[5]
    if mode == _VALUE:
        return (ans * ax) / a
    dlogax_da = lax.log(x) - lax.digamma(a + 1)
    if mode == _DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da) / a
    return -(dans_da + ans * dlogax_da) * x / a


def _continued_fraction(ax: Array, x: Array, a: Array, enabled: Array, mode: str) -> Array:
    """``Q(a, x)`` (or minus a derivative in ``a``) by its continued fraction, with the
    convergents' recurrences differentiated in ``a`` alongside; at most 2000 steps."""
    eps = float(_finfo(x.dtype).eps)

    def cond(vals: tuple[Array, ...]) -> Array:
        return lax.bitwise_and(vals[5] < 2000, _any(vals[0]))

    def body(vals: tuple[Array, ...]) -> tuple[Array, ...]:
        (on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2,
         dpkm2, dqkm2, dpkm1, dqkm1, dans) = vals
        c, y, z = c + 1, y + 1, z + 2
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        nonzero = qk != 0
        r = pk / qk
        t = lax.select(nonzero, lax.abs((ans - r) / r), _c(r, 1))
        ans = lax.select(nonzero, r, ans)
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
        dans_new = lax.select(nonzero, (dpk - ans * dqk) / qk, dans)
        change = lax.select(nonzero, lax.abs(dans_new - dans), _c(dans, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2, dqkm2, dpkm1, dqkm1 = dpkm1, dqkm1, dpk, dqk
        # Rescale the convergents before they overflow.
        big = lax.abs(pk) > 1 / eps
        pkm2, pkm1, qkm2, qkm1, dpkm2, dqkm2, dpkm1, dqkm1 = (
            lax.select(big, v * eps, v)
            for v in (pkm2, pkm1, qkm2, qkm1, dpkm2, dqkm2, dpkm1, dqkm1))
        going = lax.bitwise_and(on, (t if mode == _VALUE else change) > eps)
        new = (ans, t, y, z)
        rest = (pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans_new)
        return (going, *(lax.select(on, n, o) for n, o in zip(new, vals[1:5])), c,
                *(lax.select(on, n, o) for n, o in zip(rest, vals[6:])))

    y = 1 - a
    z = x + y + 1
    pkm1 = x + 1
    qkm1 = z * x
    ans = pkm1 / qkm1
    dqkm1 = -x
    init = (enabled, ans, _c(x, 1), y, z, lax.full((), 0, x.dtype), pkm1, qkm1, _c(x, 1), x,
            _c(x, 0), _c(x, 0), _c(x, 0), dqkm1, (0 - ans * dqkm1) / qkm1)
    vals: tuple[Array, ...] = while_loop(cond, body, init)
    ans = vals[1]
    if mode == _VALUE:
        return ans * ax
    dans_da = vals[14]
    dlogax_da = lax.log(x) - lax.digamma(a)
    if mode == _DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da)
    return -(dans_da + ans * dlogax_da) * x


def _prefactor(a: Array, x: Array) -> tuple[Array, Array]:
    """``x^a e^-x / Gamma(a)`` and whether it underflows."""
    log_ax = a * lax.log(x) - x - lax.lgamma(a)
    underflow = log_ax < -float(np.log(_finfo(x.dtype).max))
    return lax.exp(log_ax), underflow


def _igamma(a: Array, x: Array) -> Array:
    nan = lax.bitwise_or(a != a, x != x)
    x_inf = x == float("inf")
    x_zero = x == 0
    domain = _or(x < 0, a < 0, lax.bitwise_and(a == 0, x_zero), nan)
    use_q = lax.bitwise_and(x >= 1, x > a)
    ax, underflow = _prefactor(a, x)
    on = lax.bitwise_not(_or(x_zero, domain, underflow, x_inf))
    out = lax.select(use_q,
                     1 - _continued_fraction(ax, x, a, lax.bitwise_and(on, use_q), _VALUE),
                     _series(ax, x, a, lax.bitwise_and(on, lax.bitwise_not(use_q)), _VALUE))
    out = lax.select(x_zero, _c(a, 0), out)
    out = lax.select(x_inf, _c(a, 1), out)
    return lax.select(domain, _c(a, float("nan")), out)


def _igammac(a: Array, x: Array) -> Array:
    nan = lax.bitwise_or(a != a, x != x)
    a_zero = a == 0
    x_inf = x == float("inf")
    domain = _or(x < 0, a < 0, lax.bitwise_and(a_zero, x == 0), nan)
    use_p = lax.bitwise_or(x < 1, x < a)
    ax, underflow = _prefactor(a, x)
    on = lax.bitwise_not(_or(domain, underflow, x_inf, a_zero))
    out = lax.select(use_p,
                     1 - _series(ax, x, a, lax.bitwise_and(on, use_p), _VALUE),
                     _continued_fraction(ax, x, a, lax.bitwise_and(on, lax.bitwise_not(use_p)),
                                         _VALUE))
    out = lax.select(lax.bitwise_or(x_inf, a_zero), _c(out, 0), out)
    return lax.select(domain, _c(a, float("nan")), out)


def _derivative(mode: str) -> Callable[..., Array]:
    def impl(a: Array, x: Array) -> Array:
        nan = lax.bitwise_or(a != a, x != x)
        x_zero = x == 0
        domain = lax.bitwise_or(x < 0, a <= 0)
        use_q = lax.bitwise_and(x > 1, x > a)
        ax, underflow = _prefactor(a, x)
        on = lax.bitwise_not(_or(x_zero, domain, underflow, nan))
        out = lax.select(
            use_q, -_continued_fraction(ax, x, a, lax.bitwise_and(on, use_q), mode),
            _series(ax, x, a, lax.bitwise_and(on, lax.bitwise_not(use_q)), mode))
        out = lax.select(x_zero, _c(out, 0), out)
        return lax.select(lax.bitwise_or(domain, nan), _c(a, float("nan")), out)
    return impl


def _or(*masks: Array) -> Array:
    out = masks[0]
    for m in masks[1:]:
        out = lax.bitwise_or(out, m)
    return out


def _betainc(a: Array, b: Array, x: Array) -> Array:
    finfo = _finfo(x.dtype)
    a_zero = lax.bitwise_or(a == 0, b == float("inf"))
    b_zero = lax.bitwise_or(b == 0, a == float("inf"))
    x_zero, x_one = x == 0, x == 1
    nan = _or(a != a, b != b, x != x)
    is_zero = lax.bitwise_or(lax.bitwise_and(b_zero, lax.bitwise_not(x_one)),
                             lax.bitwise_and(a_zero, x_zero))
    is_one = lax.bitwise_or(lax.bitwise_and(a_zero, lax.bitwise_not(x_zero)),
                            lax.bitwise_and(b_zero, x_one))
    is_nan = _or(a < 0, b < 0, x < 0, x > 1, lax.bitwise_and(a_zero, b_zero), nan)
    # The fraction converges fast for x < (a + 1) / (a + b + 2); else use the symmetry.
    direct = x < (a + 1) / (a + b + 2)
    a, b, x = lax.select(direct, a, b), lax.select(direct, b, a), lax.select(direct, x, 1 - x)
    fraction = _lentz(a, b, x, 200 if x.dtype == dt.float32 else 600,
                      float(finfo.eps) / 2)
    lbeta_small_a = lax.lgamma(b) - lax.lgamma(a + b)
    lbeta = lax.lgamma(a) + lbeta_small_a
    factor = lax.select(a < float(finfo.tiny) * 2,  # a Gamma(a) -> 1 as a -> 0
                        lax.exp(lax.log1p(-x) * b - lbeta_small_a),
                        lax.exp(lax.log(x) * a + lax.log1p(-x) * b - lbeta) / a)
    out = fraction * factor
    out = lax.select(direct, out, 1 - out)
    out = lax.select(is_zero, _c(a, 0), out)
    out = lax.select(is_one, _c(a, 1), out)
    return lax.select(is_nan, _c(a, float("nan")), out)


def _lentz(a: Array, b: Array, x: Array, steps: int, small: float) -> Array:
    """``1 / (1 + d1 / (1 + d2 / (1 + ...)))`` with DLMF 8.17.22's ``d_n``, by the
    modified Lentz method (values below ``small`` replaced by it)."""

    def numerator(n: Array) -> Array:
        k = lax.broadcast_in_dim(n, a.shape, ())
        m = lax.convert_element_type(lax.div(k - 1, 2), x.dtype)
        even = lax.select(m == 0, -(a + b) * x / (a + 1),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)))
        odd = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        return lax.select(k == 1, _c(x, 1), lax.select(lax.rem(k, 2) == 0, even, odd))

    def clip(v: Array) -> Array:
        return lax.select(lax.abs(v) < small, _c(v, small), v)

    def body(vals: tuple[Array, ...]) -> tuple[Array, ...]:
        n, _, c, d, h = vals
        num = numerator(n)
        c = clip(1 + num / c)
        d = 1 / clip(1 + num * d)
        delta = c * d
        return n + 1, _any(lax.abs(delta - 1) >= small), c, d, h * delta

    h = _c(x, small)  # the zeroth denominator, 0, replaced
    init = (np.int32(1), lax.full((), True, dt.bool_), h, _c(x, 0), h)
    vals: tuple[Array, ...] = while_loop(lambda v: lax.bitwise_and(v[0] < steps, v[1]),
                                         body, init)
    return vals[4]


def _build(impl: Callable[..., Array]) -> Callable[..., ClosedJaxpr]:
    """The decomposition builder of ``impl``: operands broadcast to one shape, and
    float16/bfloat16 computed in float32."""
    def build(*avals: ShapedArray) -> ClosedJaxpr:
        shape = np.broadcast_shapes(*(a.shape for a in avals))
        dtype = avals[0].dtype
        work = dtype if dtype in (dt.float32, dt.float64) else np.dtype(np.float32)

        def fn(*xs: Array) -> Array:
            xs = tuple(lax.convert_element_type(
                x if x.shape == shape else lax.broadcast_in_dim(
                    x, shape, tuple(range(len(shape) - x.ndim, len(shape)))), work) for x in xs)
            return lax.convert_element_type(impl(*xs), dtype)
        avals = tuple(a.update(weak_type=False) for a in avals)
        return trace_to_jaxpr(fn, tree_structure((0,) * len(avals)), avals,
                              "decomposition").closed
    return build


_IMPLS: list[tuple[Primitive, Callable[..., Array]]] = [
    (P.igamma_p, _igamma), (P.igammac_p, _igammac),
    (P.igamma_grad_a_p, _derivative(_DERIVATIVE)),
    (P.regularized_incomplete_beta_p, _betainc)]
for _prim, _impl in _IMPLS:
    register_decomposition(_prim, _build(_impl))


def random_gamma_grad(a: Any, x: Any) -> Array:
    """The derivative of a Gamma(``a``) sample ``x`` with respect to ``a`` at a fixed
    quantile, ``-(d/da P(a, x)) / (d/dx P(a, x))``: traced inline (JAX 0.10.2 has no
    primitive for it), by the series and continued fraction of ``igamma_grad_a``."""
    a, x = (lax.convert_element_type(v, dt.canonicalize(np.result_type(v)))
            if lax.ops._aval(v) is None else v
            for v in lax.ops._operands("random_gamma_grad", a, x))
    dtype = a.dtype
    if dtype != x.dtype or not dt.is_float(dtype):
        raise TypeError(f"random_gamma_grad: expected two operands of one floating dtype, "
                        f"but got {a.dtype} and {x.dtype}")
    shape = np.broadcast_shapes(a.shape, x.shape)
    work = dtype if dtype in (dt.float32, dt.float64) else np.dtype(np.float32)
    a, x = (lax.convert_element_type(lax.broadcast_in_dim(
        v, shape, tuple(range(len(shape) - v.ndim, len(shape)))), work) for v in (a, x))
    return lax.convert_element_type(_derivative(_SAMPLE_DERIVATIVE)(a, x), dtype)

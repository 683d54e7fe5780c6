"""``plait.scipy.linalg.expm`` and ``plait.scipy.linalg.expm_frechet``, computed as JAX
0.10.2's ``jax.scipy.linalg`` computes them.

The matrix exponential is Higham's scaling and squaring with Padé approximants
(SciPy's and JAX's choice of degrees and thresholds): with ``|A|_1`` the largest column
sum, ``A`` is scaled by ``2^-s`` (``s = max(0, floor(log2(|A|_1 / maxnorm)))``), a
diagonal Padé approximant ``r_m = q_m^{-1} p_m`` of degree 3, 5, 7 (float32, complex64)
or up to 13 (float64, complex128) is chosen by ``|A|_1``, and ``r_m`` is squared ``s``
times.  It is written in plait operations (a ``switch`` over the degrees, a solve, a
``scan`` of conditional squarings), so it stages under ``jit``, batches under ``vmap``
and differentiates; more than ``max_squarings`` squarings give NaNs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.api.autodiff import jvp
from plait.frontend.api.control_flow import cond, scan, switch
from plait.frontend.core.array_base import Array
from plait.frontend.lax import linalg as lax_linalg
from plait.frontend.numpy import linalg as np_linalg
from plait.frontend.numpy._core import promote_dtypes_inexact
from plait.ir import dtypes as dt
from plait.ir.primitives import Precision

__all__ = ["expm", "expm_frechet"]

# Padé coefficients b_0 .. b_m of degree m (Higham 2005, table 10.4).
_PADE: dict[int, tuple[float, ...]] = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# Per precision: the largest norm a Padé approximant handles unscaled, and the norms up to
# which each lower degree suffices (the last degree takes the rest).
_Scheme = tuple[float, tuple[float, ...], tuple[int, ...]]
_DOUBLE: _Scheme = (5.371920351148152,
                    (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                     2.097847961257068e+000),
                    (3, 5, 7, 9, 13))
_SINGLE: _Scheme = (3.925724783138660, (4.258730016922831e-001, 1.880152677804762e+000),
                    (3, 5, 7))


def _dot(a: Any, b: Any) -> Array:
    return pnp.dot(a, b, precision=Precision.HIGHEST)


def _pade(m: int, a: Array) -> tuple[Array, Array]:
    """``(U, V)`` with ``p_m(A) = V + U`` and ``q_m(A) = V - U`` (odd and even parts), in
    JAX's order of operations."""
    b = _PADE[m]
    ident = pnp.eye(a.shape[0], a.shape[1], dtype=a.dtype)
    a2 = _dot(a, a)
    if m == 3:
        return _dot(a, b[3] * a2 + b[1] * ident), b[2] * a2 + b[0] * ident
    a4 = _dot(a2, a2)
    if m == 5:
        return (_dot(a, b[5] * a4 + b[3] * a2 + b[1] * ident),
                b[4] * a4 + b[2] * a2 + b[0] * ident)
    a6 = _dot(a4, a2)
    if m == 7:
        return (_dot(a, b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident),
                b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident)
    if m == 9:
        a8 = _dot(a6, a2)
        return (_dot(a, b[9] * a8 + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident),
                b[8] * a8 + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident)
    u = _dot(a, _dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = (_dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
         + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident)
    return u, v


def _calc_p_q(a: Array) -> tuple[Array, Array, Array]:
    """The Padé numerator ``P`` and denominator ``Q`` of the scaled ``A``, and the number
    of squarings ``s`` (a float of ``|A|_1``'s dtype)."""
    if a.dtype in (dt.float64, dt.complex128):
        maxnorm, bounds, degrees = _DOUBLE
    elif a.dtype in (dt.float32, dt.complex64):
        maxnorm, bounds, degrees = _SINGLE
    else:
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    norm = np_linalg.norm(a, 1)
    n_squarings = pnp.maximum(0, pnp.floor(pnp.log2(norm / maxnorm)))
    a = a / 2 ** n_squarings.astype(a.dtype)
    index = pnp.digitize(norm, pnp.array(bounds, dtype=norm.dtype))
    branches: list[Callable[[Array], tuple[Array, Array]]] = [
        partial(_pade, m) for m in degrees]
    u, v = switch(index, branches, a)
    return u + v, -u + v, n_squarings


def _squaring(r: Array, n_squarings: Array, max_squarings: int) -> Array:
    """``r`` squared ``n_squarings`` times: a scan of ``max_squarings`` conditional
    squarings (so that the loop's length is static)."""
    def step(c: Array, i: Array) -> tuple[Array, None]:
        return cond(i < n_squarings, lambda x: _dot(x, x), lambda x: x, c), None

    out, _ = scan(step, r, pnp.arange(max_squarings, dtype=n_squarings.dtype))
    result: Array = out
    return result


def _expm_2d(a: Array, upper_triangular: bool, max_squarings: int) -> Array:
    p, q, n_squarings = _calc_p_q(a)

    def nan(args: tuple[Array, Array, Array]) -> Array:
        return pnp.full_like(args[0], np.nan)

    def compute(args: tuple[Array, Array, Array]) -> Array:
        _, p_, q_ = args
        if upper_triangular:  # (scipy.linalg.solve_triangular's default: upper, no transpose)
            r = lax_linalg.triangular_solve(q_, p_, left_side=True, lower=False)
        else:
            r = np_linalg.solve(q_, p_)
        return _squaring(r, n_squarings, max_squarings)

    out: Array = cond(n_squarings > max_squarings, nan, compute, (a, p, q))
    return out


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Array:
    """The matrix exponential of each square matrix of ``A`` (``[..., n, n]``).

    Scaling and squaring with Padé approximants (see the module docstring): the number of
    squarings needed is about ``max(0, ceil(log2(|A|_1)) - c)`` (``c`` 2.42 in double,
    1.97 in single precision); more than ``max_squarings`` give NaNs.  With
    ``upper_triangular`` the Padé denominator is solved as upper triangular (``A`` must
    be).  Integer matrices become floating.

    Raises:
      ValueError: ``A`` is not a (batch of) square matrices.
      TypeError: ``A``'s dtype is not float32, float64, complex64 or complex128 (after
        promotion: float16, for one, is refused, as in JAX).
    """
    (a,) = promote_dtypes_inexact("expm", pnp.asarray(A))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={a.shape}.")
    fn = partial(_expm_2d, upper_triangular=upper_triangular, max_squarings=max_squarings)
    if a.ndim > 2:
        out: Array = pnp.vectorize(fn, signature="(n,n)->(n,n)")(a)
        return out
    return fn(a)


def expm_frechet(A: Any, E: Any, *, method: str | None = None,
                 compute_expm: bool = True) -> Array | tuple[Array, Array]:
    """The Fréchet derivative of the matrix exponential at ``A`` in the direction ``E``
    (both ``[..., n, n]``): the JVP of :func:`expm`.  Returns ``(expm(A), L(A, E))``, or
    ``L(A, E)`` alone without ``compute_expm``; ``method`` is ignored (as in JAX).

    Raises:
      ValueError: ``A`` or ``E`` is not a (batch of) square matrices, or their shapes
        differ.
    """
    a, e = pnp.asarray(A), pnp.asarray(E)
    if a.ndim < 2 or a.shape[-2] != a.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a.shape}")
    if e.ndim < 2 or e.shape[-2] != e.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e.shape}")
    if a.shape != e.shape:
        raise ValueError("expected A and E to be the same shape, got "
                         f"A.shape={a.shape} E.shape={e.shape}")
    expm_a, frechet = jvp(partial(expm, upper_triangular=False, max_squarings=16), (a,), (e,))
    return (expm_a, frechet) if compute_expm else frechet

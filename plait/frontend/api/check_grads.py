"""``check_grads``: derivatives checked against central finite differences, with
``jax.test_util.check_grads``'s signature and semantics.

Forward mode compares ``jvp`` along a random tangent with the finite difference
``(f(x + eps t) - f(x - eps t)) / 2 eps``; reverse mode checks the ``vjp`` of a random
cotangent ``c`` against that difference through ``<vjp(c), t> = <c, jvp(t)>``.  Order
``n`` repeats both for the derivative functions themselves, up to the ``n``-th
derivative.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from plait.frontend.api.autodiff import jvp, vjp
from plait.frontend.core.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = ["check_grads", "check_jvp", "check_vjp"]

_EPS = 1e-4
_TOL: dict[np.dtype[Any], float] = {
    np.dtype(np.float16): 1e-2, np.dtype(ml_dtypes.bfloat16): 1e-1,
    np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5,
}


def _tol(tol: float | None, leaves: Sequence[Any]) -> float:
    if tol is not None:
        return tol
    return max((_TOL.get(np.dtype(np.asarray(x).dtype), 2e-3) for x in leaves), default=2e-3)


def _random_like(rng: np.random.RandomState, tree: Any) -> Any:
    def draw(x: Any) -> np.ndarray:
        a = np.asarray(x)
        v = rng.standard_normal(a.shape)
        if a.dtype.kind == "c":
            v = v + 1j * rng.standard_normal(a.shape)
        return np.asarray(v, a.dtype)
    return tree_map(draw, tree)


def _axpy(a: float, x: Any, y: Any) -> Any:
    return tree_map(lambda u, v: np.asarray(np.asarray(v) + a * np.asarray(u), np.asarray(v).dtype),
                    x, y)


def _inner(xs: Any, ys: Any) -> complex:
    return complex(sum(np.vdot(np.asarray(x, np.complex128), np.asarray(y, np.complex128))
                       for x, y in zip(tree_leaves(xs), tree_leaves(ys))))


def _numerical_jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
                   eps: float) -> Any:
    hi = f(*_axpy(eps, tangents, primals))
    lo = f(*_axpy(-eps, tangents, primals))
    return tree_map(lambda h, lw: (np.asarray(h, np.complex128 if np.iscomplexobj(h)
                                              else np.float64)
                                   - np.asarray(lw)) / (2 * eps), hi, lo)


def _close(name: str, actual: Any, expected: Any, atol: float, rtol: float) -> None:
    for a, e in zip(tree_leaves(actual), tree_leaves(expected)):
        np.testing.assert_allclose(np.asarray(a, np.complex128), np.asarray(e, np.complex128),
                                   atol=atol, rtol=rtol, err_msg=f"{name} mismatch")


def check_jvp(f: Callable[..., Any], f_jvp: Callable[..., Any], args: Sequence[Any],
              atol: float | None = None, rtol: float | None = None,
              eps: float | None = None) -> None:
    """Check ``f_jvp(primals, tangents)`` against central finite differences of ``f``."""
    eps = _EPS if eps is None else eps
    rng = np.random.RandomState(0)
    tangents = _random_like(rng, tuple(args))
    out, tangent_out = f_jvp(tuple(args), tangents)
    expected = _numerical_jvp(f, args, tangents, eps)
    leaves = tree_leaves(out)
    _close("JVP tangent", tangent_out, expected, _tol(atol, leaves), _tol(rtol, leaves))


def check_vjp(f: Callable[..., Any], f_vjp: Callable[..., Any], args: Sequence[Any],
              atol: float | None = None, rtol: float | None = None,
              eps: float | None = None) -> None:
    """Check ``f_vjp(*primals) -> (out, vjp_fn)`` by the identity
    ``<vjp_fn(c), t> = <c, (f(x + eps t) - f(x - eps t)) / 2 eps>``."""
    eps = _EPS if eps is None else eps
    rng = np.random.RandomState(0)
    tangents = _random_like(rng, tuple(args))
    out, vjp_fn = f_vjp(*args)
    cotangents = _random_like(rng, out)
    pulled = vjp_fn(cotangents)
    expected = _inner(_numerical_jvp(f, args, tangents, eps), cotangents)
    actual = _inner(tangents, pulled)
    leaves = tree_leaves(out)
    _close("VJP", actual, expected, _tol(atol, leaves), _tol(rtol, leaves))


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, eps: float | None = None) -> None:
    """Check the derivatives of ``f`` at ``args`` up to ``order``, in forward mode
    (``'fwd'``) and/or reverse mode (``'rev'``), against finite differences.

    Raises:
      AssertionError: a derivative differs from its finite difference by more than
        the tolerance (by default, per dtype: 2e-3 for float32, 1e-5 for float64).
      ValueError: an unknown mode.
    """
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"Unrecognized mode: {sorted(unknown)[0]}")
    args = tuple(args)

    def check(fn: Callable[..., Any], xs: tuple[Any, ...], level: int) -> None:
        if "fwd" in modes:
            check_jvp(fn, lambda p, t: jvp(fn, p, t), xs, atol, rtol, eps)
            if level > 1:
                tangents = _random_like(np.random.RandomState(1), xs)
                check(lambda *p: jvp(fn, p, tangents)[1], xs, level - 1)
        if "rev" in modes:
            check_vjp(fn, lambda *p: vjp(fn, *p), xs, atol, rtol, eps)
            if level > 1:
                out = fn(*xs)
                flat, tree = tree_flatten(out)
                cts = tree_unflatten(tree, [np.asarray(c) for c in tree_leaves(
                    _random_like(np.random.RandomState(2), flat))])
                check(lambda *p: vjp(fn, *p)[1](cts), xs, level - 1)

    check(f, args, order)

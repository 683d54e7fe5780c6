"""``odeint``: adaptive Runge--Kutta integration of ordinary differential equations,
differentiated by the adjoint method, as JAX 0.10.2's ``jax.experimental.ode`` (public
as :mod:`plait.experimental.ode`).

The state (any pytree) is raveled into one vector.  Each step is the embedded 5(4)
pair of Dormand and Prince: seven stages give a fifth-order solution and an error
estimate (JAX's: the difference from DOPRI5's alternative fourth-order weights).  A
step is accepted when the root-mean-square of the error over the tolerance
``atol + rtol * max(|y|, |y_next|)`` is at most one; either way the ratio sets the
next step size (safety 0.9, growth at most 10x, shrinking at most 5x on a rejection).
The first step size is Hairer, Norsett and Wanner's heuristic (*Solving Ordinary
Differential Equations I*, II.4).  The solution at a requested time comes from the
quartic through the last accepted step's ends and its midpoint (Shampine's dense
output) matching the slopes at the ends.  ``mxstep`` bounds the steps (accepted or
not) taken to reach each requested time; when it runs out the quartic is evaluated
where it was left, which extrapolates, as JAX's does.

Reverse-mode derivatives come from the adjoint system (Chen et al., *Neural Ordinary
Differential Equations*, 2018, appendix C): between consecutive requested times,
``(y, y_bar, t_bar, args_bar)`` is integrated backwards by ``odeint`` itself, so second
derivatives differentiate that solve by the adjoint method again, as JAX's do.  Each
operation is the one JAX performs, in JAX's order, so solutions agree with JAX's to the
last bit on CPU, except under ``vmap`` (XLA rounds JAX's batched dots differently);
gradients too, except where plait's own reverse mode of ``func`` rounds differently
(adding a value's cotangents in another order), which the adaptive steps amplify.

This sits with the SciPy-like algorithms (JAX's ``odeint`` mirrors
``scipy.integrate.odeint``) because it is written on ``plait.numpy``, which the
``api`` sub-layer may not import.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from plait.frontend import numpy as pnp
from plait.frontend.api.autodiff import vjp
from plait.frontend.api.contexts import default_matmul_precision
from plait.frontend.api.control_flow import fori_loop, scan, while_loop
from plait.frontend.api.custom_derivatives import custom_vjp
from plait.frontend.api.custom_gradient import closure_convert
from plait.frontend.api.jit import jit
from plait.frontend.api.vmap import vmap
from plait.frontend.core.arguments import abstractify
from plait.frontend.core.array_base import Array
from plait.frontend.core.promotion import result_type_info
from plait.frontend.core.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
)
from plait.frontend.numpy._core import as_array, aval_of, is_scalar, promote_dtypes_inexact
from plait.frontend.numpy.flatten_util import ravel_pytree
from plait.frontend.numpy.linalg import norm
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.caches import LRUCache
from plait.ir.config import values as _config
from plait.ir.errors import ArgumentError, IncompatibleShapesError

__all__ = ["odeint"]

# The Dormand--Prince tableau: the stage times (as fractions of the step) and the
# weights of the earlier stages' slopes in each stage's state.
_NODES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1., 0.)
_STAGE_WEIGHTS = (
    (1 / 5, 0, 0, 0, 0, 0, 0),
    (3 / 40, 9 / 40, 0, 0, 0, 0, 0),
    (44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0),
    (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0),
)
# The fifth-order solution's weights (the last stage's row: DOPRI5 is "first same as
# last"), and the alternative fourth-order weights JAX's error estimate subtracts.
_FIFTH = (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0)
_FOURTH = (1951 / 21600, 0, 22642 / 50085, 451 / 720, -12231 / 42400, 649 / 6300, 1 / 60)
# Differences taken in float64 before rounding to the state's dtype, as JAX's constants.
_ERROR = tuple(a - b for a, b in zip(_FIFTH, _FOURTH))
# The midpoint of the step as a combination of the stages' slopes (Shampine's dense
# output), halved because the step's midpoint is half a step away.
_MIDPOINT = (6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
             -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
             -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)

_Func = Callable[..., Array]  # the raveled dynamics: (y, t, *args) -> dy/dt, all vectors


def _quartic(y0: Array, y1: Array, k: Array, dt: Array) -> Array:
    """The coefficients (highest power first, as ``polyval`` takes them) of the quartic
    in the step's fraction ``s`` through ``y0`` (s=0), the midpoint and ``y1`` (s=1),
    with slopes ``dt * k[0]`` and ``dt * k[-1]`` at the ends."""
    h = dt.astype(y0.dtype)
    y_mid = y0 + h * pnp.dot(pnp.array(_MIDPOINT, dtype=y0.dtype), k)
    dy0, dy1 = k[0], k[-1]
    a = -2. * h * dy0 + 2. * h * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid
    b = 5. * h * dy0 - 3. * h * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid
    c = -4. * h * dy0 + h * dy1 - 11. * y0 - 5. * y1 + 16. * y_mid
    return pnp.stack([a, b, c, h * dy0, y0])


def _first_step(fun: Callable[[Array, Array], Array], t0: Array, y0: Array, f0: Array,
                rtol: float, atol: float) -> Array:
    """Hairer, Norsett and Wanner's guess at a first step for a fourth-order method:
    small enough that an explicit Euler step changes ``y`` and ``dy/dt`` by about 1%
    of the tolerance scale."""
    y0, f0 = (as_array(x) for x in promote_dtypes_inexact("odeint", y0, f0))
    scale = atol + pnp.abs(y0) * rtol
    d0 = norm(y0 / scale.astype(y0.dtype))
    d1 = norm(f0 / scale.astype(y0.dtype))
    h0 = pnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = norm((f1 - f0) / scale.astype(y0.dtype)) / h0
    h1 = pnp.where((d1 <= 1e-15) & (d2 <= 1e-15), pnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / pnp.maximum(d1, d2)) ** (1. / 5.))
    return pnp.minimum(100. * h0, h1)


def _dopri_step(fun: Callable[[Array, Array], Array], y0: Array, f0: Array, t0: Array,
                dt: Array) -> tuple[Array, Array, Array, Array]:
    """One Dormand--Prince step: ``(y1, dy/dt at y1, error estimate, stage slopes)``."""
    nodes = pnp.array(_NODES, dtype=dt.dtype)
    weights = pnp.array(_STAGE_WEIGHTS, dtype=f0.dtype)

    def stage(i: Array, k: Array) -> Array:
        yi = y0 + dt.astype(f0.dtype) * pnp.dot(weights[i - 1, :], k)
        return k.at[i, :].set(fun(yi, t0 + dt * nodes[i - 1]))

    # A loop over the stages, as JAX's: unrolled, XLA would round some sums differently.
    k = fori_loop(1, 7, stage, pnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0))
    h = dt.astype(f0.dtype)
    y1 = h * pnp.dot(pnp.array(_FIFTH, dtype=f0.dtype), k) + y0
    error = h * pnp.dot(pnp.array(_ERROR, dtype=f0.dtype), k)
    return y1, k[-1], error, k


def _error_ratio(error: Array, rtol: float, atol: float, y0: Array, y1: Array) -> Array:
    """The root-mean-square of the error estimate relative to the tolerance."""
    tolerance = atol + rtol * pnp.maximum(pnp.abs(y0), pnp.abs(y1))
    ratio = error / tolerance.astype(error.dtype)
    squares = ratio.real ** 2 + ratio.imag ** 2 if pnp.iscomplexobj(ratio) else ratio ** 2
    return pnp.sqrt(pnp.mean(squares))


def _next_step(dt: Array, ratio: Array) -> Array:
    """The step size for an error ratio: ``0.9 * ratio**(-1/5)`` times the last, at most
    10 times it, and at least a fifth of it after a rejected step (``ratio > 1``)."""
    shrink = pnp.where(ratio < 1, 1.0, 0.2)
    factor = pnp.minimum(10.0, pnp.maximum(ratio ** (-1.0 / 5.0) * 0.9, shrink))
    return pnp.where(ratio == 0, dt * 10.0, dt * factor)


def _integrate(func: _Func, rtol: float, atol: float, mxstep: float, hmax: float, y0: Array,
               ts: Array, *args: Any) -> Array:
    """The raveled solution at each time of ``ts``, stacked (:data:`_solve`'s primal)."""
    with default_matmul_precision("highest"):
        def fun(y: Array, t: Array) -> Array:
            return func(y, t, *args)

        def to_time(carry: list[Any], target: Array) -> tuple[list[Any], Array]:
            def unfinished(state: list[Array]) -> Array:
                i, _, _, t, dt, _, _ = state
                return (t < target) & (i < mxstep) & (dt > 0)

            def attempt(state: list[Array]) -> list[Array]:
                i, y, f, t, dt, last_t, coeffs = state
                y1, f1, error, k = _dopri_step(fun, y, f, t, dt)
                t1 = t + dt
                ratio = _error_ratio(error, rtol, atol, y, y1)
                new_coeffs = _quartic(y, y1, k, dt)
                # The next step size comes from this attempt whether it is kept or not.
                dt = pnp.clip(_next_step(dt, ratio), min=0., max=hmax)
                kept = [i + 1, y1, f1, t1, dt, t, new_coeffs]
                dropped = [i + 1, y, f, t, dt, last_t, coeffs]
                return [pnp.where(ratio <= 1., a, b) for a, b in zip(kept, dropped)]

            _, *carry = while_loop(unfinished, attempt, [0, *carry])
            _, _, t, _, last_t, coeffs = carry
            s = (target - last_t) / (t - last_t)
            return carry, pnp.polyval(coeffs, s.astype(coeffs.dtype))

        if ts.shape[0] == 1:  # plait's scan cannot lower zero iterations
            return y0[None]
        f0 = fun(y0, ts[0])
        dt = pnp.clip(_first_step(fun, ts[0], y0, f0, rtol, atol), min=0., max=hmax)
        # The carry: state, slope, time and step size, the time the last accepted step
        # started at, and its quartic (a constant one before any step).
        init = [y0, f0, ts[0], dt, ts[0], pnp.array([y0] * 5)]
        _, ys = scan(to_time, init, ts[1:])
        return pnp.concatenate((y0[None], ys))


def _integrate_fwd(func: _Func, rtol: float, atol: float, mxstep: float, hmax: float,
                   y0: Array, ts: Array, *args: Any) -> tuple[Array, tuple[Any, ...]]:
    # _solve, not the plain solver, as JAX's fwd calls its custom function: the solve
    # holds while loops, so a derivative of this rule (a second derivative of odeint)
    # must use the adjoint again.  plait traces rules when the function is called, not
    # when differentiated; so only the outermost solve's fwd does, which is what a
    # second derivative needs (a third fails on the loops), and each call traces 7
    # solves rather than 15.
    solve = _solve if _solve.rule_depth <= 1 else _integrate
    ys = solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _integrate_bwd(func: _Func, rtol: float, atol: float, mxstep: float, hmax: float,
                   res: tuple[Any, ...], g: Array) -> tuple[Any, ...]:
    """The adjoint method: from the last time back to the first, integrate ``y``
    backwards together with the cotangents of ``y``, the first time and ``args``, adding
    ``g``'s row at each output time on the way."""
    ys, ts, args = res
    with default_matmul_precision("highest"):
        def augmented(state: tuple[Any, ...], minus_t: Array, *args: Any) -> list[Any]:
            # Integrated in negated time (increasing, as odeint requires), so the
            # derivatives change sign.
            y, y_bar, *_ = state
            y_dot, pullback = vjp(func, y, -minus_t, *args)
            return [_like(d, s) for d, s in zip(tree_leaves((-y_dot, *pullback(y_bar))),
                                                tree_leaves(state))]

        def back_to(carry: tuple[Any, ...], i: Array) -> tuple[tuple[Any, ...], Array]:
            y_bar, t0_bar, args_bar = carry
            # Moving output time i moves the output by the slope there.
            t_bar = pnp.dot(func(ys[i], ts[i], *args), g[i]).real
            t0_bar = t0_bar - t_bar
            _, y_bar, t0_bar, args_bar = odeint(
                augmented, (ys[i], y_bar, t0_bar, args_bar), pnp.array([-ts[i], -ts[i - 1]]),
                *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
            y_bar, t0_bar, args_bar = tree_map(lambda x: x[1], (y_bar, t0_bar, args_bar))
            return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

        init = (g[-1], 0., tree_map(pnp.zeros_like, args))
        if ts.shape[0] == 1:  # plait's scan cannot lower zero iterations
            (y_bar, t0_bar, args_bar), ts_bar = init, pnp.zeros(0, ys.real.dtype)
        else:
            (y_bar, t0_bar, args_bar), ts_bar = scan(back_to, init,
                                                     pnp.arange(len(ts) - 1, 0, -1))
        ts_bar = pnp.concatenate([pnp.array([t0_bar]), ts_bar[::-1]])
        return (y_bar, _like(ts_bar, ts), *args_bar)


def _like(x: Array, like: Any) -> Array:
    """``x`` in ``like``'s dtype: zeros for the float0 cotangent of an integer, a cast
    where a cotangent's dtype differs from its state's (a time wider than the state).

    JAX's adjoint fails in these cases; plait traces the adjoint whenever ``odeint``
    runs (custom_vjp rules are traced with the function), so it must not fail where the
    solve itself works.
    """
    if x.dtype == like.dtype:
        return x
    if x.dtype == dt.float0:
        return pnp.zeros_like(like)
    return x.astype(like.dtype)


_solve = custom_vjp(_integrate, nondiff_argnums=(0, 1, 2, 3, 4))
_solve.defvjp(_integrate_fwd, _integrate_bwd)


def _solve_tree(func: Callable[..., Any], rtol: float, atol: float, mxstep: float,
                hmax: float, y0: Any, ts: Array, *args: Any) -> Any:
    """:data:`_solve` for a pytree state: ravel it, and rebuild each output row."""
    flat, unravel = ravel_pytree(y0)

    def raveled(y: Array, t: Array, *args: Any) -> Array:
        out = func(unravel(y), t, *args)
        dy, _ = ravel_pytree(out)
        # Only the sizes must agree: the structures may differ (as in JAX, where the
        # adjoint dynamics return a flatter tuple than their state).
        if dy.shape != y.shape:
            raise IncompatibleShapesError(
                f"odeint: expected func(y, t, *args) to return as many numbers as y0 holds "
                f"({y.shape[0]}), but got {dy.shape[0]}: {_types(out)}")
        return dy

    return vmap(unravel)(_solve(raveled, rtol, atol, mxstep, hmax, flat, ts, *args))


_solve_tree_jit = jit(_solve_tree, static_argnums=(0, 1, 2, 3, 4))


def _types(tree: Any) -> str:
    """The leaves' types, with their paths when the tree is not a single leaf."""
    pairs = tree_flatten_with_path(tree)[0]
    if len(pairs) == 1 and not pairs[0][0]:
        return _aval(pairs[0][1], "").str_short(short_dtypes=False)
    return "{" + ", ".join(f"{keystr(p)}: {_aval(x, keystr(p)).str_short(short_dtypes=False)}"
                           for p, x in pairs) + "}"


def _aval(x: Any, path: str) -> ShapedArray:
    return abstractify(x, path, "odeint")


def _check_arrays(tree: Any, name: str, what: str) -> list[tuple[str, ShapedArray]]:
    """``(path, aval)`` of each leaf of ``tree``.

    Raises:
      ArgumentError: a leaf is not an array or scalar (a string, a ShapeDtypeStruct).
    """
    out = []
    for p, x in tree_flatten_with_path(tree)[0]:
        path = name + keystr(p)
        if aval_of(x) is None and not is_scalar(x) and not isinstance(x, np.ndarray | np.generic):
            raise ArgumentError(f"odeint: expected {what}, but got {type(x).__name__} ({x!r}) "
                                f"at {path}")
        out.append((path, _aval(x, path)))
    return out


def _check_times(t: Any) -> None:
    """Raises as JAX does for a bad ``t``, with a clearer message.

    Raises:
      ArgumentError: ``t`` is not an array, not of floats, or has two or more axes.
      IndexError: ``t`` is a scalar or empty (JAX fails taking its first element).
    """
    if aval_of(t) is None and not isinstance(t, np.ndarray | np.generic):
        raise ArgumentError(f"odeint: expected t to be an array of floats, but got "
                            f"{type(t).__name__} ({t!r})")
    aval = _aval(t, "t")
    if not dt.is_float(aval.dtype):
        raise ArgumentError(f"odeint: expected t to be an array of floats, but got "
                            f"{aval.str_short(short_dtypes=False)}")
    if aval.ndim == 0:
        raise IndexError(f"odeint: expected t to be a 1-D array of times, but got a scalar "
                         f"({aval.str_short(short_dtypes=False)})")
    if aval.ndim > 1:
        raise ArgumentError(f"odeint: expected t to be a 1-D array of times, but got "
                            f"{aval.str_short(short_dtypes=False)}")
    if aval.shape[0] == 0:
        raise IndexError("odeint: expected t to hold at least one time, but got an empty array")


def odeint(func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = math.inf, hmax: float = math.inf) -> Any:
    """The solution of ``dy/dt = func(y, t, *args)``, ``y(t[0]) = y0``, at the times
    ``t``: a pytree of ``y0``'s structure whose leaves gain a leading axis of
    ``len(t)``.  Adaptive Dormand--Prince steps keep the local error within
    ``atol + rtol * |y|``; at most ``mxstep`` steps are taken towards each time (past
    that, the last step's interpolant is extrapolated), each at most ``hmax`` long.
    Compiled (``func``, the tolerances, ``mxstep`` and ``hmax`` are static), and
    reverse-differentiable in ``y0``, ``t`` and ``args`` by the adjoint method.

    Args:
      func: the time derivative, ``func(y, t, *args)``, returning ``y``'s structure.
      y0: the initial state, an array or pytree of float (or complex) arrays.
      t: the strictly increasing float times, a 1-D array.
      *args: extra arguments of ``func``: arrays, scalars, or pytrees of them.
      rtol: the relative tolerance of each step's error.
      atol: the absolute tolerance of each step's error.
      mxstep: the most steps taken from one time of ``t`` to the next.
      hmax: the longest step.

    Raises:
      ArgumentError: a leaf of ``args`` or ``y0`` is not an array or scalar, ``y0``'s
        leaves are not floats or complex, or ``t`` is not a 1-D float array.
      IndexError: ``t`` is a scalar or empty.
      IncompatibleShapesError: ``func`` returns a different number of values than
        ``y0`` holds (a ``TypeError``, as JAX's).
      StaticArgumentError: a tolerance, ``mxstep`` or ``hmax`` is not hashable.
    """
    _check_arrays(args, "args", "*args to hold arrays or scalars")
    _check_times(t)
    leaves = _check_arrays(y0, "y0", "y0 to hold float or complex arrays")
    # ravel_pytree joins the leaves in the dtype they promote to (as strong types).
    if leaves and not dt.is_inexact(result_type_info([(a.dtype, False) for _, a in leaves])[0]):
        got = ", ".join(f"{a.str_short(short_dtypes=False)} at {p}" for p, a in leaves)
        raise ArgumentError(f"odeint: expected y0 to hold float or complex arrays, but got "
                            f"{got}")
    converted, consts = _convert(func, (y0, t[0], *args))
    return _solve_tree_jit(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


# As JAX's closure_convert, conversions are cached per function and argument types, so
# that calling odeint again with the same func finds the solver jit traced for it.  So,
# as in JAX, a func that reads globals or arrays changed since its first call still sees
# their old values.  A func closing over traced values is not cached: those values
# belong to one trace.
_converted: LRUCache[tuple[Any, ...], Callable[..., Any]] = LRUCache("odeint dynamics", 256)


def _convert(func: Callable[..., Any], example: tuple[Any, ...]
             ) -> tuple[Callable[..., Any], list[Any]]:
    """``closure_convert(func, *example)``, from the cache when it can be."""
    leaves, tree = tree_flatten(example)
    key = (func, tree, tuple(_aval(x, "") for x in leaves), _config.trace_context)
    try:
        cached = _converted.get(key)
    except TypeError:  # an unhashable callable
        return closure_convert(func, *example)
    if cached is not None:
        return cached, []
    converted, consts = closure_convert(func, *example)
    if not consts:
        _converted.put(key, converted)
    return converted, consts

"""plait.scipy.optimize.minimize against jax.scipy.optimize.minimize 0.10.2: BFGS and the
experimental L-BFGS on Rosenbrock, quadratics and other test functions, float32 and
float64 (x64), under jit and vmap and eagerly, with options; every field of the result
(values, dtypes, weak types, iteration and evaluation counts, status) must agree; and
the error cases.

Each distinct call compiles its nested loops in both libraries (a second or two each),
so the default run keeps to a few problems; the rest are marked slow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jjnp
import jax.scipy.optimize as jopt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.numpy as pnp
import plait.scipy.optimize as popt
from tests.frontend.jax_oracle import both_x64, raised

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def _weak(x: Any) -> bool:
    return bool(x.aval.weak_type) if isinstance(x, plait.Array) else bool(x.weak_type)


def same_results(got: Any, want: Any, rtol: float = 0.0, atol: float = 0.0) -> None:
    """Equal fields: shapes, dtypes, weak types; counts and flags exactly, floating
    values up to the tolerances (exactly by default)."""
    assert isinstance(got, popt.OptimizeResults)
    assert got._fields == want._fields
    for name in want._fields:
        g, w = getattr(got, name), getattr(want, name)
        if w is None:
            assert g is None, name
            continue
        ga, wa = np.asarray(g), np.asarray(w)
        assert ga.shape == wa.shape and ga.dtype == wa.dtype, (name, g, w)
        assert _weak(g) == _weak(w), (name, g, w)
        if np.issubdtype(wa.dtype, np.inexact):
            np.testing.assert_allclose(ga, wa, rtol=rtol, atol=atol, err_msg=name)
        else:
            np.testing.assert_array_equal(ga, wa, err_msg=name)


# Test functions, written once against a numpy namespace.

def rosenbrock(np_: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return np_.sum(100.0 * (x[1:] - x[:-1] ** 2.0) ** 2.0 + (1 - x[:-1]) ** 2.0)
    return f


def quadratic(np_: Any) -> Callable[[Any], Any]:
    a = np.array([[3.0, 1.0, 0.0], [1.0, 4.0, 0.5], [0.0, 0.5, 2.0]])
    b = np.array([1.0, -2.0, 0.5])

    def f(x: Any) -> Any:
        am, bv = np_.asarray(a, x.dtype), np_.asarray(b, x.dtype)
        return 0.5 * x @ (am @ x) - bv @ x
    return f


def quartic(np_: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return np_.sum((x - 0.5) ** 2 * np_.arange(1.0, x.shape[0] + 1.0, dtype=x.dtype)) \
            + 0.1 * np_.sum(x ** 4)
    return f


def himmelblau(np_: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return (x[0] ** 2 + x[1] - 11.) ** 2 + (x[0] + x[1] ** 2 - 7.) ** 2
    return f


def beale(np_: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return ((1.5 - x[0] + x[0] * x[1]) ** 2 + (2.25 - x[0] + x[0] * x[1] ** 2) ** 2
                + (2.625 - x[0] + x[0] * x[1] ** 3) ** 2)
    return f


def with_args(np_: Any) -> Callable[..., Any]:
    def f(x: Any, c: Any, scale: Any) -> Any:
        return scale * np_.sum((x - c) ** 2) + np_.sum(np_.cos(x))
    return f


PROBLEMS: dict[str, tuple[Callable[[Any], Callable[[Any], Any]], list[float]]] = {
    "rosenbrock2": (rosenbrock, [-1.2, 1.0]),
    "rosenbrock4": (rosenbrock, [-1.2, 1.0, 0.5, 2.0]),
    "rosenbrock_near": (rosenbrock, [0.9, 0.8, 0.7]),
    "quadratic": (quadratic, [1.0, 1.0, 1.0]),
    "quartic": (quartic, [1.0, 2.0, 3.0, -1.0]),
    "himmelblau": (himmelblau, [0.0, 0.0]),
    "beale": (beale, [1.0, 1.0]),
}
# The default run: BFGS here is covered by the eager, vmap and x64 tests below, L-BFGS
# by the random quadratics.
FAST: set[tuple[str, str]] = set()


def _minimize_both(problem: str, method: str, dtype: Any, options: Any = None
                   ) -> tuple[Any, Any]:
    make, start = PROBLEMS[problem]
    x0 = np.array(start, dtype)
    got = plait.jit(lambda x: popt.minimize(make(pnp), x, method=method, options=options))(x0)
    want = jax.jit(lambda x: jopt.minimize(make(jjnp), x, method=method, options=options))(x0)
    return got, want


CASES = [pytest.param(m, p, marks=() if (m, p) in FAST else pytest.mark.slow)
         for m in ("BFGS", LBFGS) for p in sorted(PROBLEMS)]


@pytest.mark.parametrize("method,problem", CASES)
def test_float32_under_jit_matches_jax(method: str, problem: str) -> None:
    got, want = _minimize_both(problem, method, np.float32)
    # The same steps: the same counts and status, and the same values up to rounding
    # (plait's compiled gradient of an objective can differ from JAX's in the last bit,
    # XLA fusing differently structured programs; the difference grows over iterations).
    same_results(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("method,problem", [
    pytest.param(m, p, marks=() if (m, p) == ("BFGS", "beale") else pytest.mark.slow)
    for m in ("BFGS", LBFGS) for p in sorted(PROBLEMS)])
def test_float64_under_x64_matches_jax(method: str, problem: str) -> None:
    with both_x64(True):
        got, want = _minimize_both(problem, method, np.float64)
        same_results(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["BFGS", LBFGS])
def test_float32_start_under_x64_matches_jax(method: str) -> None:
    # Python-scalar constants are float64 here while the iterates are float32: the
    # loops carry JAX's promoted types.
    with both_x64(True):
        got, want = _minimize_both("rosenbrock4", method, np.float32)
        same_results(got, want, rtol=1e-6, atol=1e-7)


def test_eager_quadratic_matches_jax() -> None:
    # Eagerly (the loops still run compiled); JAX's jitted result is the same.
    x0 = np.array([1.0, 1.0, 1.0], np.float32)
    got = popt.minimize(quadratic(pnp), pnp.asarray(x0), method="bfgs")
    want = jax.jit(lambda x: jopt.minimize(quadratic(jjnp), x, method="bfgs"))(x0)
    same_results(got, want, rtol=1e-6, atol=1e-7)


def test_vmap_over_starting_points_and_args() -> None:
    x0 = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [-1.0, 5.0, 2.0], [0.4, 0.5, 0.6]],
                  np.float32)
    c = np.array([0.5, -1.0, 2.0, 0.0], np.float32)

    def run(lib: Any, opt: Any) -> Callable[[Any, Any], Any]:
        return lambda x, ci: opt.minimize(with_args(lib), x, (ci, 2.0), method="BFGS")

    got = plait.jit(plait.vmap(run(pnp, popt)))(x0, c)
    want = jax.jit(jax.vmap(run(jjnp, jopt)))(x0, c)
    same_results(got, want, rtol=1e-6, atol=1e-7)
    assert len(set(np.asarray(want.nit).tolist())) > 1  # the members stop at different times


@pytest.mark.slow
def test_vmap_lbfgs_eagerly() -> None:
    x0 = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [-1.0, 5.0, 2.0]], np.float32)
    got = plait.vmap(lambda x: popt.minimize(quartic(pnp), x, method=LBFGS))(x0)
    want = jax.vmap(lambda x: jopt.minimize(quartic(jjnp), x, method=LBFGS))(x0)
    same_results(got, want, rtol=1e-6, atol=1e-7)


OPTIONS = [
    ("BFGS", {"maxiter": 3}),
    ("BFGS", {"gtol": 1e-2, "norm": 2}),
    ("BFGS", {"line_search_maxiter": 1}),
    (LBFGS, {"maxcor": 2}),
    (LBFGS, {"maxiter": 4}),
    (LBFGS, {"maxfun": 6}),
    (LBFGS, {"maxgrad": 6, "maxls": 3}),
    (LBFGS, {"ftol": 1e-3, "gtol": 1e-3}),
]


@pytest.mark.parametrize("method,options", [
    pytest.param(m, o, marks=pytest.mark.slow) for m, o in OPTIONS])
def test_options_match_jax(method: str, options: dict[str, Any]) -> None:
    got, want = _minimize_both("rosenbrock4", method, np.float32, options)
    same_results(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.slow
def test_forward_mode_derivative_of_the_minimizer() -> None:
    # d x*(c) / d c through the while loops (forward mode, as JAX supports it).
    def solve(opt: Any, lib: Any) -> Callable[[Any], Any]:
        return lambda c: opt.minimize(with_args(lib), lib.zeros(3, lib.float32), (c, 2.0),
                                      method="BFGS").x

    c = np.float32(0.5)
    got = plait.jvp(solve(popt, pnp), (c,), (np.float32(1.0),))
    want = jax.jvp(solve(jopt, jjnp), (c,), (np.float32(1.0),))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def _spd_problem(lib: Any, opt: Any, method: str) -> Callable[[Any, Any, Any], Any]:
    def run(a: Any, b: Any, x0: Any) -> Any:
        m = a @ a.T + 0.5 * lib.eye(a.shape[0], dtype=a.dtype)
        return opt.minimize(lambda x: 0.5 * x @ (m @ x) - b @ x, x0, method=method)
    return run


_P_SPD = {m: plait.jit(_spd_problem(pnp, popt, m)) for m in ("BFGS", LBFGS)}
_J_SPD = {m: jax.jit(_spd_problem(jjnp, jopt, m)) for m in ("BFGS", LBFGS)}
_FLOATS = st.floats(-2.0, 2.0, width=32)


_SPD_INPUTS = (hnp.arrays(np.float32, (3, 3), elements=_FLOATS),
               hnp.arrays(np.float32, (3,), elements=_FLOATS),
               hnp.arrays(np.float32, (3,), elements=_FLOATS))


def _check_spd(a: np.ndarray, b: np.ndarray, x0: np.ndarray, method: str) -> None:
    # One compiled program per method: the examples only change the values.
    got, want = _P_SPD[method](a, b, x0), _J_SPD[method](a, b, x0)
    same_results(got, want, rtol=1e-5, atol=1e-6)


@settings(max_examples=8, deadline=None)
@given(*_SPD_INPUTS)
def test_random_convex_quadratics_lbfgs_match_jax(a: np.ndarray, b: np.ndarray,
                                                  x0: np.ndarray) -> None:
    _check_spd(a, b, x0, LBFGS)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(*_SPD_INPUTS, st.sampled_from(["BFGS", LBFGS]))
def test_random_convex_quadratics_match_jax_exhaustive(a: np.ndarray, b: np.ndarray,
                                                       x0: np.ndarray, method: str) -> None:
    _check_spd(a, b, x0, method)


def test_results_type() -> None:
    assert popt.OptimizeResults._fields == jopt.OptimizeResults._fields
    assert issubclass(popt.OptimizeResults, tuple)


def test_errors_match_jax() -> None:
    f_p, f_j = quadratic(pnp), quadratic(jjnp)
    x0, jx0 = pnp.ones(3, pnp.float32), jjnp.ones(3, jjnp.float32)
    e = raised(lambda: popt.minimize(f_p, x0, method="Nelder-Mead"))
    je = raised(lambda: jopt.minimize(f_j, jx0, method="Nelder-Mead"))
    assert type(e) is type(je) is ValueError
    assert str(e).startswith(str(je))  # "Method Nelder-Mead not recognized", and the choices
    args: Any = [2.0]  # not a tuple
    e = raised(lambda: popt.minimize(lambda x, c: f_p(x) * c, x0, args, method="BFGS"))
    je = raised(lambda: jopt.minimize(lambda x, c: f_j(x) * c, jx0, args, method="BFGS"))
    assert type(e) is type(je) is TypeError
    assert "must be a tuple" in str(e) and "list" in str(e)
    e = raised(lambda: popt.minimize(f_p, x0, method="BFGS", options={"maxcor": 3}))
    je = raised(lambda: jopt.minimize(f_j, jx0, method="BFGS", options={"maxcor": 3}))
    assert type(e) is type(je) is TypeError
    assert "maxcor" in str(e) and "gtol" in str(e)
    # method is keyword-only, as in JAX.
    positional: Any = popt.minimize
    assert isinstance(raised(lambda: positional(f_p, x0, (), "BFGS")), TypeError)

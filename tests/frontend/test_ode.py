"""plait.experimental.ode.odeint against jax.experimental.ode.odeint 0.10.2: values (to
a few ulps: the operations are JAX's, in JAX's order) in float32 and float64, pytree
states and arguments, rtol/atol/hmax, the mxstep limit, gradients with respect to y0, t
and args (against JAX's and against finite differences), jit, vmap and jacrev, a
property against the closed form of a linear ODE, and the errors for bad input."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.experimental.ode import odeint as jax_odeint

import plait
import plait.numpy as pnp
from plait.errors import ArgumentError, IncompatibleShapesError
from plait.experimental.ode import odeint as plait_odeint
from tests.frontend.jax_oracle import assert_close, both_x64


class Lib:
    """What a program is written against: plait's or JAX's ``numpy`` (``L.np``),
    ``odeint`` and transformations."""

    def __init__(self, np_: Any, odeint: Callable[..., Any], lib: Any) -> None:
        self.np, self.odeint = np_, odeint
        self.jit, self.grad, self.vmap, self.jacrev = lib.jit, lib.grad, lib.vmap, lib.jacrev
        self.tree_map = lib.tree_util.tree_map


P = Lib(pnp, plait_odeint, plait)
J = Lib(jjnp, jax_odeint, jax)


def check(got: Any, want: Any, ulps: float = 4) -> None:
    """Equal structures and dtypes; values within ``ulps`` units in the last place of
    the largest value of each leaf (non-finite values equal)."""
    g_leaves, g_tree = jax.tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert str(g_tree) == str(w_tree), (g_tree, w_tree)
    for g, w in zip(g_leaves, w_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g, w)
        if not np.issubdtype(w.dtype, np.inexact):
            np.testing.assert_array_equal(g, w)
            continue
        eps = np.finfo(w.dtype).eps
        scale = np.max(np.abs(w[np.isfinite(w)]), initial=1.0)
        np.testing.assert_allclose(g, w, rtol=ulps * eps, atol=ulps * eps * scale)


def both(program: Callable[[Lib], Any]) -> tuple[Any, Any]:
    """``program``'s results with plait and with JAX (as NumPy values)."""
    return (jax.tree_util.tree_map(np.asarray, program(P)),
            jax.tree_util.tree_map(np.asarray, program(J)))


# -- the dynamics: module-level functions, so that the solver odeint compiles for each
# is found again by later calls; each takes the numpy of the array type it is given.

def decay(y: Any, t: Any) -> Any:
    return -y


def forced(y: Any, t: Any, a: Any) -> Any:
    return -a * y + (pnp if isinstance(y, plait.Array) else jjnp).sin(3. * t)


def pendulum(y: Any, t: Any, m: Any, g: Any) -> Any:
    np_ = pnp if isinstance(y, plait.Array) else jjnp
    return np_.stack([y[1], -m * y[1] - g * np_.sin(y[0])])


def tree_dynamics(y: Any, t: Any, p: Any) -> Any:
    """A dict state, a dict-and-tuple argument."""
    return {"u": -p["k"] * y["u"] + p["c"][0] * t, "v": (y["u"][0] * p["c"][1], -y["v"][1])}


def linear(y: Any, t: Any, a: Any) -> Any:
    return a * y


def time_dependent(y: Any, t: Any) -> Any:
    np_ = pnp if isinstance(y, plait.Array) else jjnp
    return np_.stack([y[1] * -t, -1 * y[1] - 9.8 * np_.sin(y[0])])


TREE_Y0 = {"u": np.array([1.0, -0.5]), "v": (np.array(0.2), np.array(0.7))}
TREE_ARGS = {"k": np.array([0.7, 1.3]), "c": (np.array([0.1, 0.2]), 2.0)}


def _cast(tree: Any, dtype: Any) -> Any:
    return jax.tree_util.tree_map(lambda x: np.asarray(x, dtype), tree)


# ``(dynamics, y0, t, args, kwargs)`` for each case; y0, t and args are cast to the dtype.
CASES: dict[str, tuple[Callable[..., Any], Any, Any, tuple[Any, ...], dict[str, Any]]] = {
    "scalar": (decay, 1.0, np.linspace(0., 2., 5), (), {}),
    "vector_args": (forced, np.array([1., 2., -3.]), np.linspace(0., 1.5, 7), (1.5,), {}),
    "pendulum": (pendulum, np.array([np.pi - 0.1, 0.]), np.linspace(0., 1., 11),
                 (0.25, 9.8), {}),
    "pytree": (tree_dynamics, TREE_Y0, np.linspace(0., 1., 4), (TREE_ARGS,), {}),
    "time_dependent": (time_dependent, np.array([np.pi - 0.1, 0.]), np.linspace(0., 1., 6),
                       (), {}),
    "loose": (pendulum, np.array([2., 0.]), np.linspace(0., 3., 4), (0.1, 9.8),
              {"rtol": 1e-3, "atol": 1e-4}),
    "hmax": (forced, np.array([1., 2.]), np.linspace(0., 1., 3), (0.5,), {"hmax": 0.05}),
    "one_time": (decay, np.array([1., 2.]), np.array([0.5]), (), {}),
    "uneven_times": (forced, np.array([1.]), np.array([0., 0.01, 0.02, 1.5, 4.]), (2.,), {}),
}
FAST = {("loose", "float32")}


def _case(name: str, dtype: str) -> tuple[Callable[..., Any], Any, Any, tuple[Any, ...],
                                            dict[str, Any]]:
    fun, y0, t, args, kwargs = CASES[name]
    # A Python scalar stays one in float64 (with float32 times it would be a float64
    # state stepped in float32 time, which JAX refuses too).
    y0 = y0 if isinstance(y0, float) and dtype == "float64" else _cast(y0, dtype)
    return fun, y0, np.asarray(t, dtype), _cast(args, dtype), kwargs


def _params() -> list[Any]:
    return [pytest.param(name, dtype, id=f"{name}-{dtype}",
                         marks=() if (name, dtype) in FAST else pytest.mark.slow)
            for name in CASES for dtype in ("float32", "float64")]


@pytest.mark.parametrize("name,dtype", _params())
def test_values_match_jax(name: str, dtype: str) -> None:
    with both_x64():
        fun, y0, t, args, kwargs = _case(name, dtype)
        got, want = both(lambda L: L.odeint(fun, y0, t, *args, **kwargs))
        check(got, want)


def _finite_differences(f: Callable[..., Any], args: tuple[Any, ...],
                        h: float = 1e-6) -> tuple[Any, ...]:
    """The central differences of the scalar ``f`` with respect to each leaf of each
    argument (float64)."""
    flat, tree = jax.tree_util.tree_flatten(args)
    flat = [np.asarray(x, np.float64) for x in flat]
    grads = []
    for k, x in enumerate(flat):
        g = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            step = np.zeros_like(x)
            step[i] = h
            hi = flat[:k] + [x + step] + flat[k + 1:]
            lo = flat[:k] + [x - step] + flat[k + 1:]
            g[i] = (float(f(*jax.tree_util.tree_unflatten(tree, hi)))
                    - float(f(*jax.tree_util.tree_unflatten(tree, lo)))) / (2 * h)
        grads.append(g)
    return tuple(jax.tree_util.tree_unflatten(tree, grads))


@pytest.mark.parametrize("name,dtype", [
    pytest.param("pytree", "float64"),
    pytest.param("pendulum", "float64", marks=pytest.mark.slow),
    pytest.param("time_dependent", "float64", marks=pytest.mark.slow),
    pytest.param("hmax", "float64", marks=pytest.mark.slow),
    pytest.param("one_time", "float64", marks=pytest.mark.slow),
    pytest.param("vector_args", "float32", marks=pytest.mark.slow),
])
def test_gradients_match_jax_and_finite_differences(name: str, dtype: str) -> None:
    """Gradients with respect to y0, every time and every argument, of a weighted sum of
    the solution (so that every row of the cotangent differs): JAX's to a few ulps in
    float64, and central differences of plait's solution."""
    with both_x64():
        fun, y0, t, args, kwargs = _case(name, dtype)

        def loss(L: Lib, y0: Any, t: Any, *args: Any) -> Any:
            ys = L.odeint(fun, y0, t, *args, **kwargs)
            weights = L.np.arange(1., t.shape[0] + 1, dtype=t.dtype)
            return sum((L.np.tensordot(weights, L.np.cos(y), 1).sum()
                        for y in jax.tree_util.tree_leaves(ys)), start=0.)

        argnums = tuple(range(2 + len(args)))
        got, want = both(lambda L: L.grad(partial(loss, L), argnums=argnums)(y0, t, *args))
        check(got, want, ulps=4 if dtype == "float64" else 64)
        if dtype == "float64":
            numeric = _finite_differences(partial(loss, P), (y0, t, *args))
            assert_close(got, numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mxstep", [1, pytest.param(3, marks=pytest.mark.slow),
                                     pytest.param(2.5, marks=pytest.mark.slow)])
def test_mxstep_limit_matches_jax(mxstep: float) -> None:
    """Past ``mxstep`` steps towards a time, the last accepted step's quartic is
    extrapolated to it, as JAX's (far from the solution, even non-finite)."""
    t = np.array([0., 0.5, 4., 10.], np.float32)
    y0 = np.array([1., 0.], np.float32)
    got, want = both(lambda L: L.odeint(pendulum, y0, t, 0.1, 9.8, mxstep=mxstep))
    check(got, want)


@pytest.mark.slow
def test_degenerate_times_match_jax() -> None:
    """A repeated time gives NaN at it and a decreasing one NaN from there on, as in JAX
    (``t`` must increase strictly); so does ``hmax=0``."""
    y0 = np.array([1., 2.], np.float32)
    for t, kwargs in [(np.array([0., 0., 1.], np.float32), {}),
                      (np.array([0., 1., 0.5], np.float32), {}),
                      (np.array([0., 1.], np.float32), {"hmax": 0.})]:
        got, want = both(partial(lambda L, t, kwargs: L.odeint(decay, y0, t, **kwargs),
                                 t=t, kwargs=kwargs))
        check(got, want)


@pytest.mark.slow
def test_vmap_over_y0_and_args_matches_jax() -> None:
    """Batched, JAX's XLA dots round some sums differently from its unbatched ones, so
    only a few dozen ulps agree (plait's batched results are its unbatched ones)."""
    t = np.linspace(0., 1., 4).astype(np.float32)
    ys = np.array([[1., 2.], [0.5, -1.], [2., 0.]], np.float32)
    a = np.array([0.5, 1., 2.], np.float32)
    got, want = both(lambda L: L.vmap(lambda y0, a: L.odeint(forced, y0, t, a))(ys, a))
    check(got, want, ulps=64)


@pytest.mark.slow
@pytest.mark.parametrize("transform", ["jit", "vmap_y0", "vmap_args", "jacrev_y0", "jacrev_t",
                                       "vmap_grad", "grad_closure"])
def test_transformations_match_jax(transform: str) -> None:
    t = np.linspace(0., 1., 4).astype(np.float32)
    y0 = np.array([1., 2.], np.float32)
    batch = np.array([0.5, 1., 2.], np.float32)

    def program(L: Lib) -> Any:
        if transform == "jit":
            return L.jit(lambda y0, a: L.odeint(forced, y0, t, a))(y0, 1.5)
        if transform == "vmap_y0":
            return L.vmap(lambda y0: L.odeint(forced, y0, t, 1.5))(batch[:, None] * y0)
        if transform == "vmap_args":
            return L.vmap(lambda a: L.odeint(forced, y0, t, a))(batch)
        if transform == "jacrev_y0":
            return L.jacrev(lambda y0: L.odeint(forced, y0, t, 1.5))(y0)
        if transform == "jacrev_t":
            return L.jacrev(lambda t: L.odeint(forced, y0, t, 1.5))(t)
        if transform == "vmap_grad":
            return L.vmap(L.grad(lambda a: L.odeint(forced, y0, t, a)[-1].sum()))(batch)

        # A closure over the differentiated value (JAX's issue 2718).
        def experiment(x: Any) -> Any:
            return L.odeint(lambda y, t: -x * y, 1., np.arange(0., 2., 0.25,
                                                              dtype=np.float32))[-1]
        return L.vmap(L.grad(L.jit(experiment)))(batch)

    got, want = both(program)
    check(got, want, ulps=4 if transform in ("jit", "jacrev_y0", "jacrev_t") else 64)
    if transform == "vmap_args":
        for i, a in enumerate(batch):
            np.testing.assert_array_equal(got[i], np.asarray(plait_odeint(forced, y0, t, a)))


@pytest.mark.slow
def test_complex_and_mixed_states_match_jax() -> None:
    t = np.linspace(0., 1., 5).astype(np.float32)
    got, want = both(lambda L: L.odeint(
        lambda y, t, al: al * y * L.np.exp(-t).astype(y.dtype), np.complex64(1 + 2j), t,
        np.complex64(3 + 4j)))
    check(got, want)
    mixed = (np.float32(1.), np.array([1., 2.], np.float16), np.int32(3))
    got, want = both(lambda L: L.odeint(lambda y, t: L.tree_map(lambda v: -v, y), mixed, t))
    check(got, want)


@settings(max_examples=30, deadline=None)
@given(a=st.floats(-2., 1.), y0=st.floats(-10., 10.), end=st.floats(0.1, 3.))
def test_linear_ode_matches_closed_form(a: float, y0: float, end: float) -> None:
    """``y' = a y`` has the solution ``y0 exp(a t)``; with the default tolerances
    (1.4e-8, on each step's error) the error at the output times stays below 1e-6
    relative plus 1e-7 absolute."""
    with both_x64():
        t = np.linspace(0., end, 5)
        ys = plait_odeint(linear, np.array([y0]), t, np.float64(a))
        np.testing.assert_allclose(np.asarray(ys)[:, 0], y0 * np.exp(a * t), rtol=1e-6,
                                   atol=1e-7)


# -- errors ---------------------------------------------------------------------------

T = np.linspace(0., 1., 3).astype(np.float32)


def _raises(program: Callable[[Lib], Any]) -> tuple[BaseException, BaseException]:
    errors = []
    for L in (P, J):
        with pytest.raises(Exception) as info:
            program(L)
        errors.append(info.value)
    return errors[0], errors[1]


@pytest.mark.parametrize("arg,shown", [("abc", "str ('abc') at args[0]"),
                                       ({"w": object()}, "object (<object object"),
                                       (jax.ShapeDtypeStruct((), np.float32),
                                        "ShapeDtypeStruct (ShapeDtypeStruct(")])
def test_non_array_args_raise_type_error(arg: Any, shown: str) -> None:
    got, want = _raises(lambda L: L.odeint(lambda y, t, a: -y, 1.0, T, arg))
    assert isinstance(got, ArgumentError) and isinstance(want, TypeError)
    assert "odeint: expected *args to hold arrays or scalars, but got " + shown in str(got)
    if isinstance(arg, dict):
        assert "at args[0]['w']" in str(got)


@pytest.mark.parametrize("y0,shown", [
    (1, "int32[] at y0"), (np.array([1, 2]), "int32[2] at y0"),
    ((np.int32(1), np.array([True])), "int32[] at y0[0], bool[1] at y0[1]"),
    ({"a": "x"}, "str ('x') at y0['a']")])
def test_non_float_y0_raises_type_error(y0: Any, shown: str) -> None:
    got, want = _raises(lambda L: L.odeint(lambda y, t: y, y0, T))
    assert isinstance(got, ArgumentError) and isinstance(want, TypeError)
    assert str(got).startswith("odeint: expected y0 to hold float or complex arrays, but got "
                               + shown)


@pytest.mark.parametrize("t,error,match", [
    (np.arange(3), ArgumentError, r"expected t to be an array of floats, but got int32\[3\]"),
    (np.ones((2, 2), np.float32), ArgumentError,
     r"expected t to be a 1-D array of times, but got float32\[2,2\]"),
    (np.float32(1.), IndexError, r"expected t to be a 1-D array of times, but got a scalar"),
    (np.zeros(0, np.float32), IndexError, "expected t to hold at least one time"),
])
def test_bad_times_raise_as_jax(t: Any, error: type[Exception], match: str) -> None:
    got, want = _raises(lambda L: L.odeint(decay, 1.0, t))
    assert isinstance(got, error) and type(want) in error.__mro__
    assert re.search(match, str(got)), got


def test_times_as_a_list_raise_type_error() -> None:
    """JAX fails reading ``t.dtype`` (an AttributeError); plait says what it expected."""
    with pytest.raises(ArgumentError, match=r"expected t to be an array of floats, but got "
                                            r"list \(\[0.0, 1.0\]\)"):
        plait_odeint(decay, 1.0, [0., 1.])


@pytest.mark.parametrize("dynamics,shown", [
    (lambda np_: lambda y, t: np_.ones(3), r"\(2\), but got 3: float32\[3\]"),
    (lambda np_: lambda y, t: None, r"\(2\), but got 0: \{\}"),
    (lambda np_: lambda y, t: {"a": y, "b": y[0]},
     r"\(2\), but got 3: \{\['a'\]: float32\[2\], \['b'\]: float32\[\]\}"),
])
def test_dynamics_of_another_size_raise_type_error(dynamics: Any, shown: str) -> None:
    got, want = _raises(lambda L: L.odeint(dynamics(L.np), np.ones(2, np.float32), T))
    assert isinstance(got, IncompatibleShapesError) and isinstance(want, TypeError)
    assert re.match(r"odeint: expected func\(y, t, \*args\) to return as many numbers as y0 "
                    r"holds " + shown, str(got)), got


@pytest.mark.slow
def test_dynamics_of_another_structure_but_the_same_size_work_as_jax() -> None:
    """Only the sizes must agree: JAX ravels the derivative whatever its structure."""
    got, want = both(lambda L: L.odeint(lambda y, t: (-y[0], -y[1]), np.ones(2, np.float32), T))
    check(got, want)


def test_unhashable_options_raise_value_error() -> None:
    got, want = _raises(lambda L: L.odeint(decay, 1.0, T, rtol=L.np.float32(1e-3)))
    assert isinstance(got, ValueError) and isinstance(want, ValueError)
    assert "Non-hashable static arguments are not supported" in str(got)


@pytest.mark.slow
def test_forward_mode_is_refused() -> None:
    """JAX refuses forward mode through a custom_vjp function (a TypeError); plait would
    transpose the backward rule, which the adaptive adjoint solve is not linear enough
    for (a ForwardModeError, a TypeError too)."""
    f = lambda k: plait_odeint(lambda x, t: k * x, 1., T).sum()  # noqa: E731
    with pytest.raises(TypeError, match="needs the transpose of its backward function"):
        plait.jacfwd(f)(3.)
    with pytest.raises(TypeError, match="can't apply forward-mode"):
        jax.jacfwd(lambda k: jax_odeint(lambda x, t: k * x, 1., T).sum())(3.)


@pytest.mark.slow
def test_dynamics_without_reverse_derivative_fail_even_undifferentiated() -> None:
    """plait traces the adjoint with the solve (JAX, only when differentiating), so a
    func holding a while_loop with a state-dependent trip count fails at once."""
    def halve(y: Any, t: Any) -> Any:
        return -plait.lax.while_loop(lambda c: pnp.abs(c).sum() > 10., lambda c: c * 0.5,
                                     y * 100.)

    with pytest.raises(plait.errors.TransformError, match="Reverse-mode differentiation "
                                                          "does not work for lax.while_loop"):
        plait_odeint(halve, np.ones(2, np.float32), T)


@pytest.mark.slow
def test_second_order_reverse_mode() -> None:
    def f(L: Lib) -> Callable[[Any], Any]:
        return lambda a: L.odeint(forced, np.ones(1, np.float32), T, a).sum()
    got = plait.grad(plait.grad(f(P)))(2.)
    want = jax.grad(jax.grad(f(J)))(2.)
    assert_close(got, want, rtol=1e-5, atol=1e-6)

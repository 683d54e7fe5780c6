"""``plait.experimental.jet.jet`` against ``jax.experimental.jet.jet``, nested ``jvp``,
and its composition with the other transformations."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.experimental import jet as jax_jet

import plait
import plait.numpy as pnp
from plait.errors import ArgumentError, RuleNotImplementedError
from plait.experimental.jet import jet
from tests.frontend.jax_oracle import both_x64


def _close(a: Any, b: Any, rtol: float = 1e-5) -> None:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=rtol)


# Programs written twice, once per library (the same operations).
PROGRAMS: dict[str, tuple[Any, Any, tuple[Any, ...]]] = {
    "sin_of_cube": (lambda x: jnp.sin(x ** 3), lambda x: pnp.sin(x ** 3), (0.5,)),
    "mlp": (lambda w, x: jnp.tanh(w @ x).sum(), lambda w, x: pnp.tanh(w @ x).sum(),
            (np.linspace(-1, 1, 12).reshape(3, 4), np.linspace(0, 1, 4))),
    "softplus_div": (lambda x, y: jnp.log(1 + jnp.exp(x)) / (1 + y ** 2),
                     lambda x, y: pnp.log(1 + pnp.exp(x)) / (1 + y ** 2),
                     (np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.2, -0.7]))),
    "exp_log_sqrt": (lambda x: jnp.exp(-x) * jnp.log1p(x) + jnp.sqrt(x) - x ** -1.5,
                     lambda x: pnp.exp(-x) * pnp.log1p(x) + pnp.sqrt(x) - x ** -1.5,
                     (np.array([0.4, 1.1, 3.0]),)),
    "sigmoid_erf_max": (lambda x: jax.nn.sigmoid(x) + jax.scipy.special.erf(x)
                        + jnp.maximum(x, 0.5) + jnp.abs(x).max(),
                        lambda x: plait.nn.sigmoid(x) + plait.scipy.special.erf(x)
                        + pnp.maximum(x, 0.5) + pnp.abs(x).max(),
                        (np.array([-0.8, 0.1, 0.9]),)),
    "trig_pow_atan2": (lambda x, y: jnp.cos(x) * jnp.sinh(y) + jnp.arctan2(x, y) + x ** y,
                       lambda x, y: pnp.cos(x) * pnp.sinh(y) + pnp.arctan2(x, y) + x ** y,
                       (np.array([0.5, 1.5]), np.array([1.2, 0.4]))),
    "indexing_and_sum": (lambda x: (x[::2] * x[1::2]).sum() + jnp.cumsum(x)[-1],
                         lambda x: (x[::2] * x[1::2]).sum() + pnp.cumsum(x)[-1],
                         (np.linspace(0.1, 1, 6),)),
    # (JAX's jet has no rule for prod: its side multiplies the elements.)
    "products": (lambda x: jnp.cumprod(x[::-1]).sum() + x[0] * x[1] * x[2],
                 lambda x: pnp.cumprod(x[::-1]).sum() + pnp.prod(x),
                 (np.array([0.5, -1.5, 2.0]),)),
    "jitted_inner": (lambda x: jax.jit(lambda y: jnp.exp(y) * y)(x) ** 2,
                     lambda x: plait.jit(lambda y: pnp.exp(y) * y)(x) ** 2, (0.3,)),
}


def _series(primals: tuple[Any, ...], order: int, seed: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [[rng.uniform(-1, 1, np.shape(p)) for _ in range(order)] for p in primals]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("order", [1, 3])
def test_matches_jax_jet_in_float64(name: str, order: int) -> None:
    jf, pf, primals = PROGRAMS[name]
    series = _series(primals, order, seed=order)
    with both_x64():
        p64 = tuple(np.asarray(p, np.float64) for p in primals)
        want = jax_jet.jet(jf, p64, series)
        got = jet(pf, p64, series)
    _close(got, want, rtol=1e-9)


@pytest.mark.parametrize("name", ["mlp", "trig_pow_atan2"])
def test_float32_and_taylor_coefficients_match_jax(name: str) -> None:
    jf, pf, primals = PROGRAMS[name]
    p32 = tuple(np.asarray(p, np.float32) for p in primals)
    series = [[t.astype(np.float32) for t in s] for s in _series(primals, 2, seed=5)]
    _close(jet(pf, p32, series), jax_jet.jet(jf, p32, series), rtol=2e-5)
    _close(jet(pf, p32, series, factorial_scaled=False),
           jax_jet.jet(jf, p32, series, factorial_scaled=False), rtol=2e-5)


def test_the_docstring_example_of_jax() -> None:
    h0, h1, h2 = 0.5 ** 3., 3. * 0.5 ** 2., 6. * 0.5
    f0, (f1, f2) = jet(pnp.sin, (h0,), ((h1, h2),))
    np.testing.assert_allclose(f0, np.sin(h0), rtol=1e-6)
    np.testing.assert_allclose(f1, np.cos(h0) * h1, rtol=1e-6)
    np.testing.assert_allclose(f2, -np.sin(h0) * h1 ** 2 + np.cos(h0) * h2, rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(x=st.floats(-2, 2), t=st.floats(-2, 2))
def test_first_order_term_is_the_jvp(x: float, t: float) -> None:
    def f(x: Any) -> Any:
        return pnp.sin(x) * pnp.exp(x / 3) + x ** 3

    primal, (term,) = jet(f, (np.float32(x),), ((np.float32(t),),))
    p2, t2 = plait.jvp(f, (np.float32(x),), (np.float32(t),))
    np.testing.assert_allclose(primal, p2, rtol=1e-6)
    np.testing.assert_allclose(term, t2, rtol=1e-5, atol=1e-5)


def test_a_polynomial_has_exact_series() -> None:
    # p(x(t)) with x(t) = x + t: the k-th derivative of p at x, zero past its degree.
    def p(x: Any) -> Any:
        return 2 * x ** 3 - x ** 2 + 4

    x = 1.5
    _, terms = jet(p, (x,), ((1.0, 0.0, 0.0, 0.0),))
    np.testing.assert_allclose(terms, [6 * x ** 2 - 2 * x, 12 * x - 2, 12.0, 0.0], rtol=1e-6)


def test_composes_with_jit_grad_vmap_and_itself() -> None:
    def third(f: Any, exp: Any) -> Any:
        return lambda x: f(exp, (x,), ((x, 2 * x, x),))[1][2]

    x = np.float32(0.7)
    pl, jx = third(jet, plait.numpy.exp), third(jax_jet.jet, jnp.exp)
    _close(plait.jit(pl)(x), jax.jit(jx)(x))
    _close(plait.grad(pl)(x), jax.grad(jx)(x))
    xs = np.linspace(0.1, 1, 4, dtype=np.float32)
    _close(plait.vmap(pl)(xs), jax.vmap(jx)(xs))

    def nested(f: Any, sin: Any) -> Any:
        return lambda x: f(lambda y: f(sin, (y,), ((1.0, 0.5),))[1][1], (x,), ((1.0, 0.0),))

    _close(nested(jet, pnp.sin)(x), nested(jax_jet.jet, jnp.sin)(x))


def test_pytrees_integer_arguments_and_constant_outputs() -> None:
    def f(params: dict[str, Any], n: Any) -> Any:
        return {"a": params["w"] * params["b"] ** n, "const": pnp.float32(3.0), "n": n * 2}

    params = {"b": np.float32(1.5), "w": np.float32(2.0)}
    terms = [{"b": np.float32(1.0), "w": np.float32(0.5)}, {"b": np.float32(0.2),
                                                              "w": np.float32(0.0)}]
    out, series = jet(f, (params, 3), (terms, [0, 0]))
    # The same through JAX, one leaf at a time (its jet takes arrays only).
    want_out, want = jax_jet.jet(lambda w, b: w * b ** 3, (params["w"], params["b"]),
                                 ([np.float32(0.5), np.float32(0.0)],
                                  [np.float32(1.0), np.float32(0.2)]))
    _close(out["a"], want_out)
    _close(series["a"], want)
    assert [float(t) for t in series["const"]] == [0.0, 0.0]
    assert series["n"][0].dtype == np.dtype(np.int32) and int(out["n"]) == 6


def test_custom_rules_are_ignored_as_in_jax() -> None:
    # JAX's jet calls the function of a custom_jvp or custom_vjp, not its rules (in JAX
    # 0.10.2 that leaks a tracer, so the oracle is the jet of the plain function).
    @plait.custom_jvp
    def f(x: Any) -> Any:
        return pnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 100.0 * t[0]))

    @plait.custom_vjp
    def g(x: Any) -> Any:
        return pnp.sin(x)

    g.defvjp(lambda x: (g(x), None), lambda _, ct: (100.0 * ct,))
    want = jax_jet.jet(jnp.sin, (0.3,), ((1.0, 0.5),))
    _close(jet(f, (0.3,), ((1.0, 0.5),)), want)
    _close(jet(g, (0.3,), ((1.0, 0.5),)), want)


def test_bad_input_errors() -> None:
    with pytest.raises(ValueError, match="jet terms have inconsistent lengths for different "
                                         r"arguments: \[1, 2\]"):
        jet(lambda a, b: a * b, (1.0, 2.0), ((1.0,), (1.0, 2.0)))
    with pytest.raises(ValueError, match=r"expected one series per primal \(2\), but got 1"):
        jet(lambda a, b: a * b, (1.0, 2.0), ((1.0,),))
    with pytest.raises(ArgumentError, match=r"expected term series\[0\]\[1\] to have the type "
                                            r"of its primal, float32\[3\], but got float32\[2\]"):
        jet(pnp.sin, (np.ones(3, np.float32),), ((np.ones(3, np.float32),
                                                  np.ones(2, np.float32)),))
    with pytest.raises(ValueError, match=r"term series\[0\]\[0\] must have the structure"):
        jet(lambda d: d["a"], ({"a": 1.0},), ((1.0,),))
    # (JAX raises a KeyError: 'igamma'.)
    with pytest.raises(RuleNotImplementedError,
                       match="Jet rule for 'igamma' not implemented") as info:
        jet(lambda x: plait.scipy.special.gammainc(2.0, x), (1.0,), ((1.0,),))
    assert isinstance(info.value, NotImplementedError)


def test_the_jaxpr_of_a_series_is_checked_and_cached() -> None:
    from plait.transforms.jet import jet_jaxpr

    jaxpr = plait.make_jaxpr(lambda x: pnp.tanh(x) * x)(np.float32(1.0)).jaxpr
    a = jet_jaxpr(jaxpr, 3, [True], factorial_scaled=True)
    assert jet_jaxpr(jaxpr, 3, [True], factorial_scaled=True) is a
    plait.ir.check_jaxpr(a)
    assert len(a.invars) == 4 and len(a.outvars) == 4
    # t tanh(t) = t^2 - t^4 / 3 + ...: derivatives 0, 2, 0 at t = 0.
    outs = plait.ir.eval_jaxpr(a, [], np.float32(0.0), np.float32(1.0), np.float32(0.0),
                               np.float32(0.0))
    np.testing.assert_allclose([float(o) for o in outs[1:]], [0.0, 2.0, 0.0], atol=1e-6)


def test_where_jaxs_jet_is_wrong_the_values_are_the_exact_ones() -> None:
    # JAX's jet gives rem(-1, 3) = 2 (it computes x - y floor(x / y)) and a NaN derivative
    # of (-2.) ** 2. (through exp(y log x)); numpy and the derivatives are the oracle.
    out, (d1, d2) = jet(lambda x: plait.lax.rem(x, 3.0), (-1.0,), ((1.0, 0.5),))
    assert (float(out), float(d1), float(d2)) == (float(np.fmod(-1.0, 3.0)), 1.0, 0.5)
    out, (d1, d2) = jet(lambda x: x ** 2.0, (-2.0,), ((1.0, 0.0),))
    assert (float(out), float(d1), float(d2)) == (4.0, -4.0, 2.0)


def _loop_programs() -> dict[str, tuple[Any, Any]]:
    """Programs with control flow, for plait, and the same unrolled, for JAX's jet (which
    has no rules for cond, scan and while)."""
    xs = np.linspace(0.0, 1.0, 5)

    def fori(x: Any) -> Any:
        return plait.lax.fori_loop(0, 4, lambda i, c: pnp.sin(c) * x + i, x)

    def fori_j(x: Any) -> Any:
        c = x
        for i in range(4):
            c = jnp.sin(c) * x + i
        return c

    def while_(x: Any) -> Any:
        return plait.lax.while_loop(lambda c: c[0] < 3,
                                    lambda c: (c[0] + 1, c[1] * x + 1.0), (0, x))[1]

    def while_j(x: Any) -> Any:
        c = x
        for _ in range(3):
            c = c * x + 1.0
        return c

    def cond(x: Any) -> Any:
        return plait.lax.cond(x > 0.5, lambda y: pnp.exp(y) * y, lambda y: y ** 2, x)

    def scan(x: Any) -> Any:
        # (a scanned operand with a series, scanned from the end)
        return plait.lax.scan(lambda c, a: (c * a + x, pnp.tanh(c) * a), x, xs * x,
                              reverse=True)[1].sum()

    def scan_j(x: Any) -> Any:
        c, total = x, 0.0
        for a in (xs * x)[::-1]:
            total, c = total + jnp.tanh(c) * a, c * a + x
        return total

    return {"fori_loop": (fori, fori_j), "while_loop": (while_, while_j),
            "cond": (cond, lambda x: jnp.exp(x) * x), "scan": (scan, scan_j)}


@pytest.mark.parametrize("name", sorted(_loop_programs()))
def test_control_flow_matches_jax_jet_of_the_unrolled_program(name: str) -> None:
    pf, jf = _loop_programs()[name]
    series = ((1.0, 0.3, -0.2),)
    with both_x64():
        _close(jet(pf, (0.7,), series), jax_jet.jet(jf, (0.7,), series), rtol=1e-9)
        _close(plait.jit(lambda x: jet(pf, (x,), series))(0.7),
               jax_jet.jet(jf, (0.7,), series), rtol=1e-9)

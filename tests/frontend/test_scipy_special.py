"""plait.scipy.special against jax.scipy.special 0.10.2: values (edge values included),
dtypes and weak types, jit, grad (JAX's custom rules included), vmap, and errors."""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import jax.numpy as jjnp
import jax.scipy.special as jsp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.errors
import plait.numpy as pnp
import plait.scipy
import plait.scipy.special as psp
from tests.frontend.jax_oracle import assert_close, f32

# Inputs share one shape (16,) where they can: eager execution compiles each primitive
# once per shape, so this keeps the file fast.
EDGE = f32(-np.inf, -3.5, -2.0, -1.0, -0.5, -0.0, 0.0, 1e-6, 0.3, 1.0, 2.5, 7.0, 30.0,
           100.0, np.inf, np.nan)
UNIT = f32(0.0, 1e-7, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-7, 1.0, -0.5, 1.5, np.nan, 0.2, 0.4,
           0.6, 0.8)
TAILS = f32(-np.inf, -60.0, -25.0, -12.0, -10.0, -9.5, -3.0, 0.0, 2.0, 5.0, 5.5, 9.0,
            np.inf, np.nan, -1.0, 1.0)
POS = f32(0.05, 0.3, 1.0, 2.5, 7.0, 9.0, 30.0, 0.7, 1.5, 3.0, 4.0, 5.0, 6.0, 8.0, 12.0, 20.0)
# All pairs of four values, flattened to (16,).
PAIR_A = np.repeat(f32(0.3, 1.0, 2.5, 9.0), 4)
PAIR_B = np.tile(f32(0.5, 1.0, 7.0, 20.0), 4)

UNARY = {
    "erf": EDGE, "erfc": EDGE, "erfinv": UNIT * 2 - 1, "gammaln": EDGE, "gamma": EDGE,
    "gammasgn": EDGE, "loggamma": EDGE, "digamma": EDGE, "expit": EDGE, "logit": UNIT,
    "entr": EDGE, "ndtr": TAILS, "ndtri": UNIT, "log_ndtr": TAILS, "i0": EDGE, "i0e": EDGE,
    "i1": EDGE, "i1e": EDGE, "factorial": EDGE,
}


def _weak(x: Any) -> bool:
    return bool(x.aval.weak_type) if isinstance(x, plait.Array) else bool(x.weak_type)


def check(name: str, *args: Any, rtol: float = 2e-5, atol: float = 1e-6, **kw: Any) -> None:
    """Eager and jitted values of ``name`` equal JAX's (dtype included)."""
    ours, theirs = getattr(psp, name), getattr(jsp, name)
    want = jax.jit(lambda *a: theirs(*a, **kw))(*args)
    assert_close(ours(*args, **kw), want, rtol=rtol, atol=atol)
    assert_close(plait.jit(lambda *a: ours(*a, **kw))(*args), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_dtypes_and_weak_types(name: str) -> None:
    check(name, UNARY[name], rtol=5e-5 if name in ("gamma", "i0", "i1") else 2e-5)
    ours, theirs = getattr(psp, name)(0.5), getattr(jsp, name)(0.5)
    assert_close(ours, theirs)
    assert _weak(ours) == _weak(theirs)


@pytest.mark.parametrize("name", sorted(set(UNARY) - {"ndtr", "ndtri", "log_ndtr"}))
def test_integers_and_bools_become_float32(name: str) -> None:
    ours = getattr(psp, name)(np.arange(-1, 3, dtype=np.int16))
    assert_close(ours, getattr(jsp, name)(np.arange(-1, 3, dtype=np.int16)))
    assert getattr(psp, name)(np.array([True, False])).dtype == np.float32


def test_binary_values_match() -> None:
    a, b = PAIR_A, PAIR_B
    for name in ("betaln", "beta", "gammainc", "gammaincc", "xlogy", "xlog1py", "rel_entr",
                 "kl_div", "comb", "boxcox", "boxcox1p"):
        # (Under jit XLA may round the two x log x of rel_entr(p, p) apart: not exactly 0.)
        check(name, a, b, rtol=1e-4, atol=1e-5)
    check("beta", a - 3.5, b - 3.5, rtol=1e-4)
    check("zeta", a + 1.5, b, rtol=1e-4)
    check("polygamma", np.arange(16) % 4, POS, rtol=1e-4)
    check("betainc", a, b, UNIT, rtol=1e-4)
    check("multigammaln", POS + 2, d=3, rtol=1e-5)
    check("factorial", EDGE - 1)


def test_arguments_broadcast() -> None:
    check("betaln", POS[:4, None], POS[None, :3], rtol=1e-4)
    check("xlogy", POS[:4, None], 2.0)
    check("betainc", 2.0, POS[:4, None], UNIT[None, :3])


def test_xlogy_xlog1py_zero_cases() -> None:
    x = EDGE
    y = np.roll(EDGE, 3)
    for name in ("xlogy", "xlog1py", "rel_entr", "kl_div"):
        check(name, x, y)
        check(name, y, x)


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.float32, 6, elements=st.floats(-5, 5, width=32)),
       hnp.arrays(np.float32, 6, elements=st.floats(0, 5, width=32)))
def test_xlogy_and_xlog1py_match_jax(x: np.ndarray, y: np.ndarray) -> None:
    assert_close(psp.xlogy(x, y), jsp.xlogy(x, y), rtol=1e-5)
    assert_close(psp.xlog1py(x, y), jsp.xlog1py(x, y), rtol=1e-5)


@settings(max_examples=15, deadline=None)
@given(hnp.arrays(np.float32, (2, 3), elements=st.floats(-30, 30, width=32)),
       st.sampled_from([None, 0, 1, -1, (0, 1)]), st.booleans(),
       st.sampled_from(["none", "b", "where"]))
def test_logsumexp_matches_jax(a: np.ndarray, axis: Any, keepdims: bool, extra: str) -> None:
    kw: dict[str, Any] = {"axis": axis, "keepdims": keepdims}
    if extra == "b":
        kw["b"] = np.array([[1.0, -0.5, 0.0]], np.float32)
    elif extra == "where":
        kw["where"] = a > 0
    assert_close(psp.logsumexp(a, **kw), jsp.logsumexp(a, **kw), rtol=1e-5)
    assert_close(psp.logsumexp(a, return_sign=True, **kw),
                 jsp.logsumexp(a, return_sign=True, **kw), rtol=1e-5)


def test_logsumexp_edge_values_and_jit() -> None:
    a = f32(-np.inf, -np.inf, 1.0, np.inf, 2.0, np.nan).reshape(3, 2)
    for axis in (None, 0, 1):
        check("logsumexp", a, axis=axis)
        check("logsumexp", a, axis=axis, b=f32(1.0, -1.0))
    check("logsumexp", np.arange(4))  # integers are promoted


def test_softmax_and_log_softmax() -> None:
    m = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32) * 5
    for axis in (None, 0, 1, (0, 1)):
        check("softmax", m, axis=axis)
        check("log_softmax", m, axis=axis)
    check("softmax", f32(-np.inf, 0.0, 1.0))
    with np.errstate(invalid="ignore"):  # JAX casts -inf to an integer here
        check("softmax", np.arange(3))
    for name in ("softmax", "log_softmax"):
        def loss(lib: Any, x: Any, name: str = name) -> Any:
            return (getattr(lib, name)(x, axis=1) * m).sum()
        g = plait.grad(lambda x: loss(psp, x))(m)
        want = jax.jit(jax.grad(lambda x: loss(jsp, x)))(m)
        assert_close(g, want, rtol=1e-4, atol=1e-5)


GRAD_ARGS = {
    "erf": f32(-2, -0.3, 0, 0.7, 3), "erfc": f32(-2, -0.3, 0, 0.7, 3),
    "erfinv": f32(-0.9, -0.2, 0, 0.5, 0.99), "gammaln": f32(-1.5, 0.3, 1, 2.5, 30),
    "gamma": f32(-1.5, 0.3, 1, 2.5, 6), "digamma": f32(-1.5, 0.3, 1, 2.5, 30),
    "expit": f32(-30, -1, 0, 2, 30), "logit": f32(0.01, 0.3, 0.5, 0.9, 0.999),
    "entr": f32(0.0, 0.01, 0.5, 1.0, 4.0), "ndtr": f32(-12, -3, 0, 2, 8),
    "ndtri": f32(1e-6, 0.1, 0.5, 0.9, 0.999), "log_ndtr": f32(-60, -11, -3, 0, 6),
    # (Not at 0 for i0: JAX's abs has derivative 1 at 0, plait's 0, so JAX's i0'(0) is 1.)
    "i0": f32(-3, -1e-3, 0.5, 7, 20), "i0e": f32(-3, 0, 0.5, 7, 20),
    "i1": f32(-3, 0, 0.5, 7, 20), "i1e": f32(-3, 0, 0.5, 7, 20),
    "factorial": f32(0.5, 1, 2.5, 6, 10),
}


@pytest.mark.parametrize("name", sorted(GRAD_ARGS))
def test_vmap_grad_matches_jax(name: str) -> None:
    x = GRAD_ARGS[name]
    ours = plait.vmap(plait.grad(getattr(psp, name)))(x)
    assert_close(ours, jax.jit(jax.vmap(jax.grad(getattr(jsp, name))))(x), rtol=1e-4, atol=1e-6)


def test_custom_derivatives_of_xlogy_family_match_jax() -> None:
    # At x == 0 JAX's rules give log(y) (finite) where the plain product rule gives NaN.
    xs, ys = f32(0, 0, 0, 1, 2), f32(0, 2, 0.5, 0, 3)
    for name in ("xlogy", "xlog1py"):
        for argnums in (0, 1):
            ours = plait.vmap(plait.grad(getattr(psp, name), argnums))(xs, ys)
            want = jax.jit(jax.vmap(jax.grad(getattr(jsp, name), argnums)))(xs, ys)
            assert_close(ours, want)
    p, q = f32(0.0, 0.2, 0.5, 1.0), f32(0.3, 0.2, 0.1, 2.0)
    for name in ("rel_entr", "kl_div"):
        assert_close(plait.vmap(plait.grad(getattr(psp, name), (0, 1)))(p, q),
                     jax.jit(jax.vmap(jax.grad(getattr(jsp, name), (0, 1))))(p, q), rtol=1e-5)


def test_derivatives_of_binary_functions_match_jax() -> None:
    a, b = f32(0.5, 1.0, 2.5, 7.0, 12.0), f32(3.0, 0.4, 9.0, 1.5, 20.0)
    for name in ("betaln", "beta", "zeta"):
        args = (a + 1.5, b) if name == "zeta" else (a, b)
        ours = plait.vmap(plait.value_and_grad(getattr(psp, name), (0, 1)))(*args)
        want = jax.jit(jax.vmap(jax.value_and_grad(getattr(jsp, name), (0, 1))))(*args)
        assert_close(ours, want, rtol=2e-4, atol=1e-6)
    x = f32(0.1, 0.3, 0.5, 0.7, 0.9)
    assert_close(plait.vmap(plait.grad(psp.betainc, 2))(a, b, x),
                 jax.jit(jax.vmap(jax.grad(jsp.betainc, 2)))(a, b, x), rtol=1e-4)
    n = np.arange(5)
    assert_close(plait.vmap(plait.grad(psp.polygamma, 1))(n, a),
                 jax.jit(jax.vmap(jax.grad(jsp.polygamma, 1)))(n, a), rtol=1e-4)
    assert_close(plait.grad(lambda v: psp.multigammaln(v, 4).sum())(a + 2),
                 jax.grad(lambda v: jsp.multigammaln(v, 4).sum())(a + 2), rtol=1e-5)
    m = np.outer(a, b) / 10
    for axis in (None, 0, 1):
        def lse(lib: Any, v: Any, axis: Any = axis) -> Any:
            return lib.logsumexp(v, axis=axis, b=m).sum()
        assert_close(plait.grad(lambda v: lse(psp, v))(m), jax.grad(lambda v: lse(jsp, v))(m),
                     rtol=1e-5)


def test_log_ndtr_series_order_and_jvp() -> None:
    x = f32(-40, -15, -10.5, -2)
    for order in (0, 1, 2, 5):
        check("log_ndtr", x, series_order=order)
    ours = plait.jvp(psp.log_ndtr, (x,), (np.ones_like(x),))
    assert_close(ours, jax.jvp(jsp.log_ndtr, (x,), (np.ones_like(x),)), rtol=1e-5)


def test_errors_match_jax() -> None:
    with pytest.raises(TypeError, match=r"x.dtype=int32 is not supported"):
        psp.ndtr(np.arange(3))
    with pytest.raises(TypeError, match=r"x.dtype=float16 is not supported"):
        psp.ndtri(np.float16(0.5))
    with pytest.raises(TypeError, match=r"x.dtype=int32 is not supported\.$"):
        psp.log_ndtr(1)
    with pytest.raises(TypeError, match="series_order must be a Python integer"):
        psp.log_ndtr(1.0, series_order=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="series_order must be non-negative"):
        psp.log_ndtr(1.0, series_order=-1)
    with pytest.raises(ValueError, match="series_order must be <= 30"):
        psp.log_ndtr(1.0, series_order=31)
    with pytest.raises(ValueError, match="Argument `n` to polygamma must be of integer type"):
        psp.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="Riemann zeta function not implemented"):
        psp.zeta(2.0)
    with pytest.raises(NotImplementedError, match="factorial with exact=True"):
        psp.factorial(3, exact=True)
    with pytest.raises(ValueError, match="beta does not support complex-valued inputs"):
        psp.beta(np.complex64(1j), 2.0)
    with pytest.raises(TypeError, match="erf requires ndarray or scalar arguments"):
        psp.erf([1.0, 2.0])
    with pytest.raises(plait.errors.ConcretizationTypeError):
        plait.jit(psp.multigammaln)(2.0, 3)


def test_under_jit_the_values_are_traced_once() -> None:
    f = plait.jit(lambda x: psp.gammaln(x) + psp.xlogy(x, x) + psp.ndtri(x / 10))
    want = jsp.gammaln(POS) + jsp.xlogy(POS, POS) + jsp.ndtri(POS / 10)
    assert_close(f(POS), want, rtol=1e-4)
    assert "custom_jvp_call" in str(plait.make_jaxpr(psp.xlogy)(POS, POS))


def test_public_facade() -> None:
    assert plait.scipy.special is psp
    assert psp.erf is not None and set(psp.__all__) <= set(dir(jsp))
    x = pnp.asarray(POS)
    assert_close(plait.scipy.special.expit(x), jsp.expit(jjnp.asarray(POS)))

"""plait.lax's special functions against jax.lax 0.10.2 beyond the spec table: the
derivatives that exist in one operand only, higher derivatives, vmap, and errors."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax import lax as jlax

import plait
import plait.lax as plax

X = np.array([0.3, 1.0, 2.5, 6.0], np.float32)


def test_derivative_chains_match_jax() -> None:
    # lgamma' = digamma, digamma' = polygamma(1, .), polygamma(m, .)' = polygamma(m + 1, .)
    for name in ("lgamma", "digamma", "erf", "erfc"):
        ours = plait.vmap(plait.grad(plait.grad(getattr(plax, name))))(X)
        theirs = jax.vmap(jax.grad(jax.grad(getattr(jlax, name))))(X)
        np.testing.assert_allclose(ours, theirs, rtol=2e-5, err_msg=name)
    y = np.array([-0.9, -0.2, 0.4, 0.8], np.float32)
    np.testing.assert_allclose(plait.vmap(plait.grad(plax.erf_inv))(y),
                               jax.vmap(jax.grad(jlax.erf_inv))(y), rtol=2e-5)
    m = np.float32(2.0)
    np.testing.assert_allclose(plait.vmap(plait.grad(lambda x: plax.polygamma(m, x)))(X),
                               jax.vmap(jax.grad(lambda x: jlax.polygamma(m, x)))(X), rtol=1e-4)


def test_zeta_derivative_in_q_is_minus_s_zeta_s_plus_1() -> None:
    # JAX defines no derivative of zeta; d/dq zeta(s, q) = -s zeta(s + 1, q).
    s, q = np.float32(3.0), np.array([0.7, 1.5, 4.0], np.float32)
    g = plait.vmap(plait.grad(lambda v: plax.zeta(s, v)))(q)
    np.testing.assert_allclose(g, -s * np.asarray(jlax.zeta(s + 1, q)), rtol=1e-5)
    h = 1e-3
    fd = (np.asarray(jlax.zeta(s, q + h), np.float64)
          - np.asarray(jlax.zeta(s, q - h), np.float64)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-2)


def test_derivatives_that_do_not_exist_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="polygamma gradient with respect to m is not supported"):
        plait.grad(lambda m: plax.polygamma(m, np.float32(2.0)))(np.float32(1.0))
    with pytest.raises(ValueError, match="zeta gradient with respect to s is not supported"):
        plait.grad(lambda s: plax.zeta(s, np.float32(2.0)))(np.float32(3.0))


def test_jaxprs_and_integer_inputs() -> None:
    assert str(plait.make_jaxpr(lambda x: plax.erf_inv(plax.erf(x)))(X)) == \
        str(jax.make_jaxpr(lambda x: jlax.erf_inv(jlax.erf(x)))(X))
    with pytest.raises(TypeError, match="erf"):
        plax.erf(np.arange(3))


@pytest.mark.parametrize("name", ["bessel_i0e", "bessel_i1e"])
def test_bessel_functions_match_jax_to_the_bit(name: str) -> None:
    x = np.array([0.0, -0.0, 1e-7, -0.5, 3.0, 7.999, 8.0, 8.001, -30.0, 1e4, np.inf, np.nan],
                 np.float32)
    ours, theirs = getattr(plax, name), getattr(jlax, name)
    for d in (np.float32, jax.numpy.float16, jax.numpy.bfloat16):
        got = np.asarray(plait.jit(ours)(x.astype(d))).astype(np.float32)
        want = np.asarray(theirs(x.astype(d))).astype(np.float32)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} {d}")
    np.testing.assert_allclose(np.asarray(ours(x)), np.asarray(theirs(x)), rtol=1e-6)
    v = x[:10]
    np.testing.assert_allclose(plait.vmap(plait.grad(ours))(v), jax.vmap(jax.grad(theirs))(v),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(plait.vmap(plait.grad(plait.grad(ours)))(v),
                               jax.vmap(jax.grad(jax.grad(theirs)))(v), rtol=1e-4, atol=1e-6)
    assert str(plait.make_jaxpr(ours)(x)) == str(jax.make_jaxpr(theirs)(x))
    with pytest.raises(TypeError, match="floating"):
        ours(np.arange(3, dtype=np.int32))


GAMMA_A = np.array([0.3, 1.0, 2.5, 6.0, 20.0, 0.5, 3.0, 1.5], np.float32)
GAMMA_X = np.array([0.05, 1.0, 2.0, 9.0, 18.0, 3.0, 0.2, 1.5], np.float32)


@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"])
def test_incomplete_gamma_family_matches_jax(name: str) -> None:
    ours, theirs = getattr(plax, name), getattr(jlax, name)
    for d in (np.float32, jax.numpy.float16, jax.numpy.bfloat16):
        a, x = GAMMA_A.astype(d), GAMMA_X.astype(d)
        got, want = np.asarray(plait.jit(ours)(a, x)), np.asarray(theirs(a, x))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=2e-5 if d == np.float32 else 1e-2, err_msg=str(d))
    np.testing.assert_allclose(ours(GAMMA_A, GAMMA_X), theirs(GAMMA_A, GAMMA_X), rtol=2e-5)
    stacked = np.stack([GAMMA_X, GAMMA_X * 2])
    np.testing.assert_allclose(plait.vmap(ours, (None, 0))(GAMMA_A, stacked),
                               jax.vmap(theirs, (None, 0))(GAMMA_A, stacked), rtol=2e-5)
    if name != "random_gamma_grad":  # (JAX traces that one's loops inline, not a primitive)
        assert str(plait.make_jaxpr(ours)(GAMMA_A, GAMMA_X)) == \
            str(jax.make_jaxpr(theirs)(GAMMA_A, GAMMA_X))


def test_incomplete_gamma_edges_and_derivatives_match_jax() -> None:
    a = np.array([0.0, 0.0, 2.0, 2.0, -1.0, 2.0, np.nan, 3.0], np.float32)
    x = np.array([0.0, 1.0, 0.0, np.inf, 1.0, -1.0, 1.0, 1e-30], np.float32)
    for name in ("igamma", "igammac", "igamma_grad_a", "random_gamma_grad"):
        np.testing.assert_allclose(getattr(plax, name)(a, x), getattr(jlax, name)(a, x),
                                   rtol=1e-6, err_msg=name)
    for name in ("igamma", "igammac"):
        for argnum in (0, 1):
            ours = plait.vmap(plait.grad(getattr(plax, name), argnum))(GAMMA_A, GAMMA_X)
            theirs = jax.vmap(jax.grad(getattr(jlax, name), argnum))(GAMMA_A, GAMMA_X)
            np.testing.assert_allclose(ours, theirs, rtol=5e-5, atol=1e-7,
                                       err_msg=f"{name} d/d{'ax'[argnum]}")
    with pytest.raises(NotImplementedError, match="JVP rule for 'igamma_grad_a'"):
        plait.grad(plax.igamma_grad_a)(2.0, 1.0)


def test_betainc_matches_jax() -> None:
    a = np.array([0.5, 1.0, 2.5, 8.0, 0.2, 30.0], np.float32)
    b = np.array([0.5, 3.0, 2.5, 1.0, 4.0, 30.0], np.float32)
    x = np.array([0.1, 0.5, 0.9, 0.3, 0.99, 0.5], np.float32)
    np.testing.assert_allclose(np.asarray(plait.jit(plax.betainc)(a, b, x)),
                               np.asarray(jlax.betainc(a, b, x)), rtol=2e-5)
    np.testing.assert_allclose(plait.vmap(plait.grad(plax.betainc, 2))(a, b, x),
                               jax.vmap(jax.grad(jlax.betainc, 2))(a, b, x), rtol=5e-5)
    edges = [(0.0, 1.0, 0.5), (1.0, 0.0, 0.5), (2.0, 3.0, 0.0), (2.0, 3.0, 1.0),
             (2.0, 3.0, 1.5), (-1.0, 2.0, 0.5), (np.inf, 2.0, 0.5)]
    ea, eb, ex = (np.array(v, np.float32) for v in zip(*edges))
    np.testing.assert_allclose(np.asarray(plax.betainc(ea, eb, ex)),
                               np.asarray(jlax.betainc(ea, eb, ex)))
    assert str(plait.make_jaxpr(plax.betainc)(a, b, x)) == \
        str(jax.make_jaxpr(jlax.betainc)(a, b, x))
    with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
        plait.grad(plax.betainc)(2.0, 3.0, 0.5)

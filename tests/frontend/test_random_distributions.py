"""plait.random's distributions (permutation, choice, the gamma family, Poisson,
binomial, multivariate normal, orthogonal ...) against jax.random 0.10.2: equal bit for
bit for the same key, eagerly, under jit, under vmap over split keys, with raw keys and
with 64-bit dtypes; the gamma family's derivatives; JAX's errors for bad arguments."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.random as jr
import ml_dtypes
import numpy as np
import pytest

import plait
import plait.random as pr

jax.config.update("jax_platforms", "cpu")

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.float32
COV = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.5]], F32)
SINGULAR = np.array([[1.0, 1.0], [1.0, 1.0]], F32)
ALPHAS = np.array([0.05, 0.3, 1.0, 2.5, 10.0], F32)


def assert_same(ours: Any, theirs: Any) -> None:
    """Equal dtypes, shapes and bits."""
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


@contextlib.contextmanager
def x64() -> Iterator[None]:
    """64-bit dtypes in both libraries."""
    before = plait.config.read("enable_x64"), jax.config.read("jax_enable_x64")
    plait.config.update("enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        plait.config.update("enable_x64", before[0])
        jax.config.update("jax_enable_x64", before[1])


# Each case: fn(random_module, key) -> result, the same code for both libraries.
CASES: dict[str, Callable[[Any, Any], Any]] = {
    "permutation_int": lambda r, k: r.permutation(k, 10),
    "permutation_int_one": lambda r, k: r.permutation(k, 1),
    "permutation_1d": lambda r, k: r.permutation(k, np.arange(7.0, dtype=F32)),
    "permutation_axis": lambda r, k: r.permutation(k, np.arange(12.0, dtype=F32).reshape(3, 4),
                                                   axis=1),
    "permutation_independent": lambda r, k: r.permutation(
        k, np.arange(12, dtype=np.int32).reshape(3, 4), axis=-1, independent=True),
    "permutation_two_rounds": lambda r, k: r.permutation(k, 2000),
    "choice": lambda r, k: r.choice(k, 5, (3,)),
    "choice_array_axis": lambda r, k: r.choice(k, np.arange(12, dtype=np.int32).reshape(3, 4),
                                               (2, 2), axis=1),
    "choice_no_replace": lambda r, k: r.choice(k, 10, (4,), replace=False),
    "choice_no_replace_array": lambda r, k: r.choice(k, np.arange(6.0, dtype=F32), (2, 2),
                                                     replace=False),
    "choice_p": lambda r, k: r.choice(k, 4, (6,), p=np.array([0.1, 0.2, 0.3, 0.4], F32)),
    "choice_p_no_replace": lambda r, k: r.choice(k, np.arange(4.0, dtype=F32), (3,),
                                                 replace=False,
                                                 p=np.array([0.1, 0.2, 0.3, 0.4], F32)),
    "choice_empty": lambda r, k: r.choice(k, 4, (0,)),
    "gamma": lambda r, k: r.gamma(k, ALPHAS),
    "gamma_shape": lambda r, k: r.gamma(k, np.array([0.5, 4.0], F32), (3, 2)),
    "gamma_scalar": lambda r, k: r.gamma(k, 1.5),
    "gamma_f16": lambda r, k: r.gamma(k, 2.0, (4,), np.float16),
    "gamma_bf16": lambda r, k: r.gamma(k, 0.7, (4,), BF16),
    "loggamma": lambda r, k: r.loggamma(k, ALPHAS),
    "loggamma_tiny": lambda r, k: r.loggamma(k, 1e-4, (3,)),
    "beta": lambda r, k: r.beta(k, 0.5, np.array([1.0, 2.0, 3.0], F32), (2, 3)),
    "beta_scalar": lambda r, k: r.beta(k, 2.0, 3.0),
    "dirichlet": lambda r, k: r.dirichlet(k, np.array([0.5, 1.0, 2.0], F32)),
    "dirichlet_shape": lambda r, k: r.dirichlet(k, np.array([0.1, 5.0], F32), (3,)),
    "t": lambda r, k: r.t(k, 3.0, (4,)),
    "t_df": lambda r, k: r.t(k, np.array([1.0, 10.0], F32)),
    "chisquare": lambda r, k: r.chisquare(k, 3.0, (4,)),
    "f": lambda r, k: r.f(k, 3.0, np.array([5.0, 7.0], F32)),
    "f_shape": lambda r, k: r.f(k, 3.0, 5.0, (2, 2)),
    "generalized_normal": lambda r, k: r.generalized_normal(k, 1.5, (4,)),
    "ball": lambda r, k: r.ball(k, 3, 2, (2,)),
    "ball_p1": lambda r, k: r.ball(k, 2, 1.0),
    "poisson": lambda r, k: r.poisson(k, np.array([0.5, 3.0, 12.0, 100.0, 0.0], F32)),
    "poisson_shape_i16": lambda r, k: r.poisson(k, 4.0, (3, 2), np.int16),
    "binomial": lambda r, k: r.binomial(k, np.array([5.0, 20.0, 100.0, 1000.0], F32),
                                        np.array([0.1, 0.5, 0.7, 0.3], F32)),
    "binomial_invalid": lambda r, k: r.binomial(k, np.array([-1.0, np.inf, 10.0], F32),
                                                np.array([0.1, 0.5, np.nan], F32)),
    "binomial_f16": lambda r, k: r.binomial(k, 10.0, 0.3, (4,), np.float16),
    "multinomial": lambda r, k: r.multinomial(k, 20.0, np.array([0.2, 0.3, 0.5], F32)),
    "multinomial_shape": lambda r, k: r.multinomial(k, np.array([10.0, 100.0], F32),
                                                    np.array([0.2, 0.3, 0.5], F32),
                                                    shape=(2, 3)),
    "geometric": lambda r, k: r.geometric(k, 0.3, (6,)),
    "geometric_p": lambda r, k: r.geometric(k, np.array([0.01, 0.9], F32), dtype=np.int16),
    "mvn_cholesky": lambda r, k: r.multivariate_normal(k, np.zeros(3, F32), COV, (4,)),
    "mvn_eigh": lambda r, k: r.multivariate_normal(k, np.ones(3, F32), COV, (2,),
                                                   method="eigh"),
    "mvn_svd": lambda r, k: r.multivariate_normal(k, np.ones(3, F32), COV, method="svd"),
    "mvn_singular": lambda r, k: r.multivariate_normal(k, np.zeros(2, F32), SINGULAR, (3,),
                                                       method="eigh"),
    "mvn_batched_cov": lambda r, k: r.multivariate_normal(k, np.zeros(3, F32),
                                                          np.stack([COV, 2 * COV])),
    "orthogonal": lambda r, k: r.orthogonal(k, 4),
    "orthogonal_wide": lambda r, k: r.orthogonal(k, 3, (2,), m=5),
    "orthogonal_tall": lambda r, k: r.orthogonal(k, 5, (), m=2),
    "pareto": lambda r, k: r.pareto(k, 2.0, (5,)),
    "maxwell": lambda r, k: r.maxwell(k, (5,)),
    "double_sided_maxwell": lambda r, k: r.double_sided_maxwell(k, 1.0, np.array([1.0, 2.0], F32),
                                                                (3,)),
    "weibull_min": lambda r, k: r.weibull_min(k, 1.0, 2.0, (5,)),
    "rayleigh": lambda r, k: r.rayleigh(k, np.array([1.0, 2.0], F32), (3, 2)),
    "wald": lambda r, k: r.wald(k, 2.0, (5,)),
    "triangular": lambda r, k: r.triangular(k, 0.0, 0.3, 1.0, (5,)),
    "lognormal": lambda r, k: r.lognormal(k, 0.5, (5,)),
    "lognormal_default": lambda r, k: r.lognormal(k),
}

# Under vmap over keys, one case of each kind of loop and sampler is enough.
VMAP_CASES = ["permutation_axis", "choice_no_replace", "choice_p", "gamma", "loggamma", "beta",
              "dirichlet", "t", "poisson", "binomial", "multinomial", "mvn_cholesky",
              "orthogonal", "double_sided_maxwell", "geometric", "ball"]


# Variants of a sampler already covered by its main case run with -m slow.
_EAGER_SLOW = {"permutation_int_one", "permutation_1d", "permutation_independent",
               "permutation_two_rounds", "choice_array_axis", "choice_no_replace_array",
               "choice_p_no_replace", "gamma_shape", "gamma_bf16", "loggamma_tiny",
               "beta_scalar", "dirichlet_shape", "t_df", "f_shape", "ball_p1",
               "multinomial_shape", "geometric_p", "mvn_eigh", "mvn_svd", "mvn_batched_cov",
               "orthogonal_wide", "lognormal_default"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in _EAGER_SLOW
                                  else n for n in sorted(CASES)])
def test_eager_matches_jax(name: str) -> None:
    fn = CASES[name]
    assert_same(fn(pr, pr.key(3)), fn(jr, jr.key(3)))


# Under jit, the samplers run the same jitted workers as eagerly: one case of each kind
# by default, all with -m slow.
_JIT_DEFAULT = {"permutation_axis", "choice_p", "choice_no_replace", "gamma", "beta",
                "poisson", "binomial", "mvn_cholesky", "orthogonal", "triangular"}


@pytest.mark.parametrize("name", [n if n in _JIT_DEFAULT else pytest.param(
    n, marks=pytest.mark.slow) for n in sorted(CASES)])
def test_jit_matches_jax(name: str) -> None:
    fn = CASES[name]
    assert_same(plait.jit(lambda k: fn(pr, k))(pr.key(5)), jax.jit(lambda k: fn(jr, k))(jr.key(5)))


@pytest.mark.parametrize("name", VMAP_CASES)
def test_vmap_over_keys_matches_jax(name: str) -> None:
    fn = CASES[name]
    ours = plait.vmap(lambda k: fn(pr, k))(pr.split(pr.key(4), 3))
    assert_same(ours, jax.vmap(lambda k: fn(jr, k))(jr.split(jr.key(4), 3)))


@pytest.mark.parametrize("name", ["permutation_int", "gamma_scalar", "poisson", "choice_p"])
def test_raw_keys_match_jax(name: str) -> None:
    fn = CASES[name]
    assert_same(fn(pr, pr.PRNGKey(11)), fn(jr, jr.PRNGKey(11)))


def test_vmap_over_parameters_matches_jax() -> None:
    # One key for all: the batch elements share it, as JAX's batching rule does.
    assert_same(plait.vmap(lambda a: pr.gamma(pr.key(1), a, (2,)))(ALPHAS),
                jax.vmap(lambda a: jr.gamma(jr.key(1), a, (2,)))(ALPHAS))
    lam = np.array([1.0, 20.0, 3.0], F32)
    assert_same(plait.vmap(lambda x: pr.poisson(pr.key(1), x, (2,)))(lam),
                jax.vmap(lambda x: jr.poisson(jr.key(1), x, (2,)))(lam))
    ps = np.array([0.2, 0.9], F32)
    assert_same(plait.vmap(lambda p: pr.binomial(pr.key(1), 30.0, p))(ps),
                jax.vmap(lambda p: jr.binomial(jr.key(1), 30.0, p))(ps))


# Parameters traced by jit: fn(random_module, key, x) with x = PARAMS.
PARAMS = np.array([0.5, 2.0, 7.0], F32)
TRACED: dict[str, Callable[[Any, Any, Any], Any]] = {
    "gamma": lambda r, k, x: r.gamma(k, x),
    "beta": lambda r, k, x: r.beta(k, x, x),
    "dirichlet": lambda r, k, x: r.dirichlet(k, x),
    "poisson": lambda r, k, x: r.poisson(k, x * 5),
    "binomial": lambda r, k, x: r.binomial(k, x * 10, 0.3),
    "multinomial": lambda r, k, x: r.multinomial(k, 10.0, x / x.sum()),
    "choice_p": lambda r, k, x: r.choice(k, 3, (4,), p=x),
    "multivariate_normal": lambda r, k, x: r.multivariate_normal(k, x, np.eye(3, dtype=F32)),
    "triangular": lambda r, k, x: r.triangular(k, 0.0, x, 10.0),
    "geometric": lambda r, k, x: r.geometric(k, x / 10),
}


@pytest.mark.parametrize("name", sorted(TRACED))
def test_traced_parameters_match_jax(name: str) -> None:
    fn = TRACED[name]
    assert_same(plait.jit(lambda k, x: fn(pr, k, x))(pr.key(1), PARAMS),
                jax.jit(lambda k, x: fn(jr, k, x))(jr.key(1), PARAMS))


@pytest.mark.parametrize("name", ["permutation_int", "pareto", "rayleigh", "wald",
                                  "weibull_min"])
def test_printed_jaxpr_matches_jax(name: str) -> None:
    # The workers are jitted and computed as JAX's, so they print alike (where the
    # numpy functions they call print alike too).
    fn = CASES[name]
    assert (str(plait.make_jaxpr(lambda k: fn(pr, k))(pr.key(0)))
            == str(jax.make_jaxpr(lambda k: fn(jr, k))(jr.key(0))))


@pytest.mark.parametrize("name", ["gamma_x64", "beta_x64", "poisson_x64", "binomial_x64",
                                  "choice_x64", "mvn_x64", "orthogonal_x64"])
def test_64_bit_dtypes_match_jax(name: str) -> None:
    fns: dict[str, Callable[[Any, Any], Any]] = {
        "gamma_x64": lambda r, k: r.gamma(k, ALPHAS.astype(np.float64)),
        "beta_x64": lambda r, k: r.beta(k, 0.5, 2.0, (3,)),
        "poisson_x64": lambda r, k: r.poisson(k, np.array([2.0, 30.0])),
        "binomial_x64": lambda r, k: r.binomial(k, 50.0, np.array([0.1, 0.6])),
        "choice_x64": lambda r, k: r.choice(k, 5, (4,), p=np.array([0.1, 0.2, 0.3, 0.2, 0.2])),
        "mvn_x64": lambda r, k: r.multivariate_normal(k, np.zeros(3), COV.astype(np.float64),
                                                      (2,)),
        "orthogonal_x64": lambda r, k: r.orthogonal(k, 3),
    }
    with x64():
        assert_same(fns[name](pr, pr.key(7)), fns[name](jr, jr.key(7)))


@pytest.mark.parametrize("sampler", ["gamma", "loggamma"])
def test_gamma_derivative_matches_jax(sampler: str) -> None:
    ours = plait.grad(lambda a: getattr(pr, sampler)(pr.key(1), a).sum())(ALPHAS)
    theirs = jax.grad(lambda a: getattr(jr, sampler)(jr.key(1), a).sum())(ALPHAS)
    # The same samples and the same implicit-reparameterization formula: equal bits.
    assert_same(ours, theirs)


@pytest.mark.parametrize("name", ["beta", "chisquare", "dirichlet", "t"])
def test_derivatives_of_gamma_family_match_jax(name: str) -> None:
    a = np.array([0.5, 2.0, 7.0], F32)
    weights = np.array([1.0, 2.0, 3.0], F32)
    cases: dict[str, Callable[[Any, Any, Any], Any]] = {
        "beta": lambda r, k, x: r.beta(k, x, 2.0),
        "chisquare": lambda r, k, x: r.chisquare(k, x),
        "dirichlet": lambda r, k, x: r.dirichlet(k, x) * weights,
        "t": lambda r, k, x: r.t(k, x),
    }
    fn = cases[name]
    ours = plait.grad(lambda x: fn(pr, pr.key(2), x).sum())(a)
    theirs = jax.grad(lambda x: fn(jr, jr.key(2), x).sum())(a)
    if name in ("beta", "chisquare"):
        assert_same(ours, theirs)
    else:
        # The samples are equal, but the chain rule runs through the derivative rules of
        # sqrt, div, exp and softmax's sum, whose operations plait orders differently:
        # the last bits may differ.
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-6)


def test_samples_have_the_right_moments() -> None:
    # Not against JAX: the samplers draw from the distributions they claim to.
    key = pr.key(0)
    g = np.asarray(pr.gamma(key, 3.0, (20000,)))
    assert abs(g.mean() - 3.0) < 0.06 and abs(g.var() - 3.0) < 0.2
    p = np.asarray(pr.poisson(key, 25.0, (20000,)))
    assert abs(p.mean() - 25.0) < 0.2
    perm = np.asarray(pr.permutation(key, 100))
    np.testing.assert_array_equal(np.sort(perm), np.arange(100))
    q = np.asarray(pr.orthogonal(key, 5, (3,)))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(5), q.shape),
                               atol=1e-5)


def _raises(exc: type[BaseException], fn: Callable[[Any, Any], Any]) -> None:
    """Both libraries raise ``exc`` (the same type, or a subclass in plait)."""
    with pytest.raises(exc):
        fn(jr, jr.key(0))
    with pytest.raises(exc):
        fn(pr, pr.key(0))


ERRORS: dict[str, tuple[type[BaseException], Callable[[Any, Any], Any]]] = {
    "permutation_float_scalar": (TypeError, lambda r, k: r.permutation(k, 3.0)),
    "permutation_axis": (ValueError, lambda r, k: r.permutation(k, np.zeros((2, 3)), axis=2)),
    "permutation_list": (TypeError, lambda r, k: r.permutation(k, [1, 2, 3])),
    "choice_shape_not_sequence": (TypeError, lambda r, k: r.choice(k, 5, 3)),
    "choice_too_many": (ValueError, lambda r, k: r.choice(k, 3, (4,), replace=False)),
    "choice_empty_population": (ValueError, lambda r, k: r.choice(k, 0, (2,))),
    "choice_bad_p": (ValueError, lambda r, k: r.choice(k, 3, (2,), p=np.ones(4) / 4)),
    "gamma_int_dtype": (ValueError, lambda r, k: r.gamma(k, 1.0, dtype=np.int32)),
    "gamma_bad_shape": (ValueError, lambda r, k: r.gamma(k, np.ones(3, F32), (2,))),
    "loggamma_int_dtype": (ValueError, lambda r, k: r.loggamma(k, 1.0, dtype=np.int32)),
    "beta_int_dtype": (ValueError, lambda r, k: r.beta(k, 1.0, 1.0, dtype=np.int32)),
    "beta_bad_shape": (ValueError, lambda r, k: r.beta(k, np.ones(3), 1.0, (2,))),
    "dirichlet_scalar_alpha": (ValueError, lambda r, k: r.dirichlet(k, 1.0)),
    "dirichlet_int_dtype": (ValueError, lambda r, k: r.dirichlet(k, np.ones(2), dtype=int)),
    "t_int_dtype": (ValueError, lambda r, k: r.t(k, 2.0, dtype=np.int32)),
    "chisquare_bad_shape": (ValueError, lambda r, k: r.chisquare(k, np.ones(3, F32), (2,))),
    "poisson_bad_shape": (ValueError, lambda r, k: r.poisson(k, np.ones(3, F32), (2,))),
    "binomial_int_dtype": (ValueError, lambda r, k: r.binomial(k, 3.0, 0.5, dtype=np.int32)),
    "geometric_float_dtype": (ValueError, lambda r, k: r.geometric(k, 0.5, dtype=F32)),
    "mvn_bad_method": (ValueError, lambda r, k: r.multivariate_normal(k, np.zeros(2), np.eye(2),
                                                                      method="lu")),
    "mvn_scalar_mean": (ValueError, lambda r, k: r.multivariate_normal(k, 0.0, np.eye(2))),
    "mvn_bad_cov": (ValueError, lambda r, k: r.multivariate_normal(k, np.zeros(2), np.eye(3))),
    "mvn_int_dtype": (ValueError, lambda r, k: r.multivariate_normal(k, np.zeros(2), np.eye(2),
                                                                     dtype=np.int32)),
    "pareto_int_dtype": (ValueError, lambda r, k: r.pareto(k, 2.0, dtype=np.int32)),
    "maxwell_int_dtype": (ValueError, lambda r, k: r.maxwell(k, dtype=np.int32)),
    "rayleigh_bad_shape": (ValueError, lambda r, k: r.rayleigh(k, np.ones(3, F32), (2,))),
    "batched_key": (ValueError, lambda r, k: r.gamma(r.split(k), 1.0)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name: str) -> None:
    exc, fn = ERRORS[name]
    _raises(exc, fn)


def test_unsafe_parameter_casts_are_refused_like_jax() -> None:
    # A float64 parameter for a float32 sample, under x64: each library's
    # TypePromotionError (a ValueError).
    from jax._src.dtypes import TypePromotionError as JaxTypePromotionError

    from plait.errors import TypePromotionError
    with x64():
        for name in ["beta", "t", "pareto", "rayleigh"]:
            args = (np.ones(2), np.ones(2)) if name == "beta" else (np.ones(2),)
            with pytest.raises(JaxTypePromotionError):
                getattr(jr, name)(jr.key(0), *args, dtype=F32)
            with pytest.raises(TypePromotionError):
                getattr(pr, name)(pr.key(0), *args, dtype=F32)

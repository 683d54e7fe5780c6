"""plait.scipy.stats against jax.scipy.stats 0.10.2: every function of every distribution
on edge values with loc/scale broadcasting, eagerly and under jit, gradients, vmap,
multivariate_normal, and errors."""

from __future__ import annotations

import types
from typing import Any

import jax
import jax.scipy.stats as jst
import numpy as np
import pytest

import plait
import plait.scipy.stats as pst
from plait.scipy.stats import norm
from tests.frontend.jax_oracle import assert_close, f32

# One shape (16,) for all x and q: eager execution compiles each primitive per shape.
X = f32(-np.inf, -30.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.2, 0.5, 0.9, 1.0, 2.5, 12.0, np.inf,
        np.nan, 0.7)
Q = f32(0.0, 1e-6, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0, -0.1, 1.1, np.nan, 0.3, 0.6, 0.8)
K = f32(-1, 0, 1, 2, 3, 5, 10, 0.5, 1.5, np.nan, np.inf, 4, 6, 7, 8, 20)

# distribution -> (its functions of x, its functions of a probability, shape parameters)
DISTS: dict[str, tuple[list[str], list[str], tuple[Any, ...]]] = {
    "norm": (["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], ["ppf", "isf"], ()),
    "cauchy": (["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], ["ppf", "isf"], ()),
    "logistic": (["logpdf", "pdf", "cdf", "sf"], ["ppf", "isf"], ()),
    "laplace": (["logpdf", "pdf", "cdf"], [], ()),
    "uniform": (["logpdf", "pdf", "cdf"], ["ppf"], ()),
    "t": (["logpdf", "pdf"], [], (np.float32(3.5),)),
    "gamma": (["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], [], (np.float32(2.5),)),
    "beta": (["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], [],
             (np.float32(2.5), np.float32(1.5))),
    "poisson": (["logpmf", "pmf", "cdf"], [], (np.float32(2.5),)),
    "bernoulli": (["logpmf", "pmf", "cdf"], ["ppf"], (np.float32(0.3),)),
}
LOC_SCALE = {"norm", "cauchy", "logistic", "laplace", "uniform", "t", "gamma", "beta"}


def check(ours: Any, theirs: Any, *args: Any, rtol: float = 2e-5, atol: float = 1e-6) -> None:
    """Eager and jitted values equal JAX's (dtypes included).  Each is compared with its
    JAX counterpart: XLA rounds some singular points differently when it compiles a
    whole function (cauchy.logcdf(-inf) is -inf eagerly, -18.9 under jit, in both)."""
    assert_close(ours(*args), theirs(*args), rtol=rtol, atol=atol)
    assert_close(plait.jit(ours)(*args), jax.jit(theirs)(*args), rtol=rtol, atol=atol)


def _all_functions(lib: Any, dist: str) -> Any:
    """All functions of ``dist`` at once, as a dict (one compilation under jit: the
    incomplete gamma and beta functions take long to compile)."""
    of_x, of_q, _ = DISTS[dist]
    mod = getattr(lib, dist)

    def f(x: Any, q: Any, *shape_args: Any) -> dict[str, Any]:
        return {name: getattr(mod, name)(q if name in of_q else x, *shape_args)
                for name in of_x + of_q}
    return f


@pytest.mark.parametrize("dist", sorted(DISTS))
def test_values_on_edge_values(dist: str) -> None:
    shape_args = DISTS[dist][2]
    x = K if dist in ("poisson", "bernoulli") else X
    check(_all_functions(pst, dist), _all_functions(jst, dist), x, Q, *shape_args, rtol=5e-5)


@pytest.mark.parametrize("dist", sorted(LOC_SCALE))
def test_loc_and_scale_broadcast(dist: str) -> None:
    of_x, of_q, shape_args = DISTS[dist]
    loc, scale = f32(-1.0, 0.0, 0.5)[:, None], f32(0.5, 2.0)[:, None, None]
    x, q = X[:5][None, None, :], Q[:5]
    for name in of_x[::2] + of_q:
        ours, theirs = getattr(getattr(pst, dist), name), getattr(getattr(jst, dist), name)
        first = q if name in of_q else x
        want = theirs(first, *shape_args, loc, scale)
        assert_close(ours(first, *shape_args, loc, scale), want, rtol=5e-5, atol=1e-6)


def test_integer_and_scalar_arguments() -> None:
    for dist in ("norm", "cauchy", "laplace", "logistic"):
        ours = getattr(pst, dist).logpdf(np.arange(3), 1, 2)
        theirs = getattr(jst, dist).logpdf(np.arange(3), 1, 2)
        assert_close(ours, theirs)
        s_ours, s_theirs = getattr(pst, dist).cdf(0.5), getattr(jst, dist).cdf(0.5)
        assert_close(s_ours, s_theirs)
        assert s_ours.aval.weak_type == s_theirs.weak_type
    assert_close(pst.poisson.pmf(np.arange(5), 2), jst.poisson.pmf(np.arange(5), 2))
    assert_close(pst.bernoulli.pmf(np.arange(3), 0.25), jst.bernoulli.pmf(np.arange(3), 0.25))
    assert_close(norm.ppf(0.3, 1, 2), jst.norm.ppf(0.3, 1, 2))


GRADS = [("norm", "logpdf"), ("norm", "logcdf"), ("norm", "logsf"), ("norm", "ppf"),
         ("cauchy", "logpdf"), ("cauchy", "cdf"), ("logistic", "logpdf"), ("logistic", "ppf"),
         ("laplace", "logpdf"), ("t", "logpdf"), ("gamma", "logpdf"), ("gamma", "cdf"),
         ("beta", "logpdf"), ("beta", "cdf"), ("uniform", "cdf")]


@pytest.mark.parametrize(("dist", "name"), GRADS)
def test_gradients_match_jax(dist: str, name: str) -> None:
    shape_args = DISTS[dist][2]
    ours, theirs = getattr(getattr(pst, dist), name), getattr(getattr(jst, dist), name)
    first = f32(0.1, 0.3, 0.5, 0.8) if name == "ppf" or dist == "beta" else f32(-2, 0.3, 1, 4)
    if dist == "gamma":
        first = f32(0.2, 0.5, 1.5, 4.0)
    loc, scale = np.float32(0.05), np.float32(1.5)
    if dist == "beta":
        loc, scale = np.float32(0.0), np.float32(1.0)
    # (plait's betainc has no derivative in a and b yet.)
    argnums = (0, 3, 4) if (dist, name) == ("beta", "cdf") else tuple(range(len(shape_args) + 3))
    args = (first, *shape_args, loc, scale)
    axes = (0,) + (None,) * (len(args) - 1)
    got = plait.vmap(plait.grad(ours, argnums), in_axes=axes)(*args)
    want = jax.jit(jax.vmap(jax.grad(theirs, argnums), in_axes=axes))(*args)
    assert_close(got, want, rtol=2e-4, atol=1e-5)


def test_discrete_gradients_in_the_parameter() -> None:
    k = f32(0, 1, 2, 5)
    got = plait.vmap(plait.grad(pst.poisson.logpmf, 1), (0, None))(k, np.float32(2.5))
    want = jax.jit(jax.vmap(jax.grad(jst.poisson.logpmf, 1), (0, None)))(k, np.float32(2.5))
    assert_close(got, want)
    k = f32(0, 1, 0, 1)
    got = plait.vmap(plait.grad(pst.bernoulli.logpmf, 1))(k, f32(0.0, 0.3, 0.5, 1.0))
    want = jax.jit(jax.vmap(jax.grad(jst.bernoulli.logpmf, 1)))(k, f32(0.0, 0.3, 0.5, 1.0))
    assert_close(got, want)


def _spd(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    a = np.random.default_rng(n).normal(size=(*batch, n, n)).astype(np.float32)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)


def test_multivariate_normal_matches_jax() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 3)).astype(np.float32)
    mean, cov = f32(0.1, -0.2, 0.3), _spd(3)
    cases: list[tuple[Any, ...]] = [(x, mean, cov), (x[0], mean, cov), (x, mean, np.float32(2.0)),
             (x[:, 0], np.float32(0.5), np.float32(2.0)), (x[:2, None], mean, _spd(3, (2,))),
             (np.arange(3), np.zeros(3, np.int32), np.eye(3, dtype=np.int32))]
    for args in cases:
        assert_close(pst.multivariate_normal.logpdf(*args),
                     jst.multivariate_normal.logpdf(*args), rtol=1e-5)
    check(pst.multivariate_normal.pdf, jst.multivariate_normal.pdf, x, mean, cov, rtol=1e-5)
    f = lambda lib, x, m: lib.multivariate_normal.logpdf(x, m, cov).sum()  # noqa: E731
    assert_close(plait.grad(lambda v, m: f(pst, v, m), (0, 1))(x, mean),
                 jax.grad(lambda v, m: f(jst, v, m), (0, 1))(x, mean), rtol=1e-5)
    got = plait.vmap(pst.multivariate_normal.logpdf, (0, None, None))(x, mean, cov)
    assert_close(got, jst.multivariate_normal.logpdf(x, mean, cov), rtol=1e-5)


def test_vmap_over_parameters() -> None:
    loc = f32(-1.0, 0.0, 2.0)
    got = plait.vmap(norm.logcdf, (None, 0))(X, loc)
    assert_close(got, jax.vmap(jst.norm.logcdf, (None, 0))(X, loc), rtol=5e-5, atol=1e-6)
    got = plait.vmap(pst.gamma.cdf, (None, 0))(f32(0.5, 1.0, 4.0), f32(0.5, 1.0, 3.0))
    want = jax.vmap(jst.gamma.cdf, (None, 0))(f32(0.5, 1.0, 4.0), f32(0.5, 1.0, 3.0))
    assert_close(got, want, rtol=1e-5)


def test_errors() -> None:
    with pytest.raises(TypeError, match=r"x.dtype=int32 is not supported"):
        norm.ppf(np.arange(3))
    with pytest.raises(TypeError, match=r"x.dtype=int32 is not supported"):
        norm.isf(1)
    with pytest.raises(TypeError, match="norm.logpdf requires ndarray or scalar arguments"):
        norm.logpdf([0.0, 1.0])
    with pytest.raises(ValueError, match="multivariate_normal.logpdf got incompatible shapes"):
        pst.multivariate_normal.logpdf(f32(0, 0), f32(0, 0), _spd(3))
    with pytest.raises(NotImplementedError, match="allow_singular=True"):
        pst.multivariate_normal.logpdf(f32(0, 0), f32(0, 0), _spd(2), allow_singular=True)


def test_public_modules() -> None:
    import plait.scipy as psp
    assert psp.stats.norm is norm and psp.stats.norm.logpdf is norm.logpdf
    assert set(pst.__all__) == {n for n in dir(jst) if not n.startswith("_")}
    for name in pst.__all__:
        ours = getattr(pst, name)
        if isinstance(ours, types.ModuleType):  # a distribution: a module of functions
            assert set(ours.__all__) <= set(dir(getattr(jst, name))), name

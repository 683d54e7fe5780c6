"""The rest of jax.scipy.stats 0.10.2 against plait.scipy.stats: the distributions betabinom,
binom, chi2, dirichlet, expon, gennorm, geom, gumbel_l, gumbel_r, multinomial, nbinom,
pareto, truncnorm, vonmises and wrapcauchy (every function, on edge values and out of the
support, parameters in and out of range and broadcast, eagerly, under jit and under x64,
gradients and vmap), gaussian_kde (every method, weights, bandwidths, as a pytree through
jit), mode, rankdata and sem; errors, and the public names and signatures."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any

import jax
import jax.scipy.stats as jst
import numpy as np
import pytest
import scipy.stats as sst  # type: ignore[import-untyped]  # scipy ships no stubs

import plait
import plait.scipy.stats as pst
from tests.frontend.jax_oracle import assert_close, both_x64, f32

# One shape (16,) for all x, q and k: eager execution compiles each primitive per shape.
X = f32(-np.inf, -30.0, -3.0, -1.0, -0.5, -0.0, 0.0, 0.2, 0.5, 0.9, 1.0, 2.5, 12.0, np.inf,
        np.nan, 0.7)
Q = f32(0.0, 1e-6, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0, -0.1, 1.1, np.nan, 0.3, 0.6, 0.8)
K = f32(-1, 0, 1, 2, 3, 5, 10, 0.5, 1.5, np.nan, np.inf, 4, 6, 7, 8, 20)

CONTINUOUS_6 = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
# distribution -> (its functions of x, its functions of a probability, shape parameters)
DISTS: dict[str, tuple[list[str], list[str], tuple[float, ...]]] = {
    "expon": (CONTINUOUS_6, ["ppf"], ()),
    "chi2": (CONTINUOUS_6, [], (3.0,)),
    "gennorm": (["logpdf", "pdf", "cdf"], [], (1.5,)),
    "gumbel_l": (CONTINUOUS_6, ["ppf"], ()),
    "gumbel_r": (CONTINUOUS_6, ["ppf"], ()),
    "pareto": (CONTINUOUS_6, ["ppf"], (2.5,)),
    "truncnorm": (CONTINUOUS_6, [], (-1.0, 2.0)),
    "vonmises": (["logpdf", "pdf"], [], (2.0,)),
    "wrapcauchy": (["logpdf", "pdf"], [], (0.4,)),
    "binom": (["logpmf", "pmf"], [], (10.0, 0.3)),
    "betabinom": (["logpmf", "pmf"], [], (10.0, 2.5, 1.5)),
    "nbinom": (["logpmf", "pmf"], [], (3.0, 0.4)),
    "geom": (["logpmf", "pmf"], [], (0.3,)),
}
DISCRETE = {"binom", "betabinom", "nbinom", "geom"}
LOC_SCALE = {"expon", "chi2", "gumbel_l", "gumbel_r", "pareto", "truncnorm"}

# Parameter values in range, on its edges and out of it, one tuple per case.
PARAMS: dict[str, list[tuple[float, ...]]] = {
    "expon": [()],
    "chi2": [(0.5,), (1.0,), (2.0,), (10.0,), (0.0,), (-1.0,)],
    "gennorm": [(0.5,), (1.0,), (2.0,), (8.0,), (0.0,), (-1.0,)],
    "gumbel_l": [()],
    "gumbel_r": [()],
    "pareto": [(0.5,), (1.0,), (3.0,), (0.0,), (-1.0,)],
    "truncnorm": [(-np.inf, np.inf), (0.5, 3.0), (-3.0, -0.5), (5.0, 8.0), (-8.0, -5.0),
                  (-np.inf, 0.0), (0.0, np.inf), (2.0, 1.0), (1.0, 1.0)],
    "vonmises": [(0.01,), (1.0,), (10.0,), (100.0,), (0.0,), (-1.0,)],
    "wrapcauchy": [(0.01,), (0.5,), (0.99,), (0.0,), (1.0,), (-0.5,)],
    "binom": [(0.0, 0.3), (1.0, 0.0), (5.0, 1.0), (10.0, 0.5), (4.5, 0.2), (3.0, 1.2)],
    "betabinom": [(0.0, 1.0, 1.0), (5.0, 0.5, 0.5), (-1.0, 2.0, 2.0), (5.0, 0.0, 1.0),
                  (5.0, 1.0, -1.0), (3.5, 2.0, 3.0)],
    "nbinom": [(1.0, 0.2), (3.5, 0.9), (2.0, 1.0), (0.0, 0.5), (2.0, 0.0)],
    "geom": [(0.2,), (1.0,), (0.0,), (1.5,)],
}


def check(ours: Any, theirs: Any, *args: Any, rtol: float = 5e-5, atol: float = 1e-6,
          eager: bool = True, jit: bool = True) -> None:
    """Jitted and/or eager values equal JAX's, dtypes included.  (Each is compared with its
    JAX counterpart: XLA may round differently when it compiles a whole function.)"""
    if eager:
        assert_close(ours(*args), theirs(*args), rtol=rtol, atol=atol)
    if jit:
        assert_close(plait.jit(ours)(*args), jax.jit(theirs)(*args), rtol=rtol, atol=atol)


def _all_functions(lib: Any, dist: str, names: tuple[str, ...] | None = None) -> Any:
    """All functions of ``dist`` (or those ``names``) at once, as a dict: one compilation
    under jit (compiling dominates these tests' time)."""
    of_x, of_q, _ = DISTS[dist]
    mod = getattr(lib, dist)
    chosen = of_x + of_q if names is None else list(names)

    def f(x: Any, q: Any, *shape_args: Any) -> dict[str, Any]:
        return {name: getattr(mod, name)(q if name in of_q else x, *shape_args)
                for name in chosen}
    return f


def _params(values: Any, fast: Any, unpack: bool = False) -> list[Any]:
    """``values`` as parameters (tuples of several with ``unpack``), those not in ``fast``
    marked slow: the default run keeps a representative share, compiling being slow (the
    incomplete gamma and log-ndtr programs take seconds)."""
    return [v if v in fast else pytest.param(*(v if unpack else (v,)), marks=pytest.mark.slow)
            for v in values]


x64 = both_x64


def _shape_args(dist: str, dtype: Any = np.float32) -> tuple[Any, ...]:
    return tuple(np.asarray(v, dtype) for v in DISTS[dist][2])


# -- values -----------------------------------------------------------------------------

# The default run covers each distribution in at least one of the value tests below.
@pytest.mark.parametrize("dist", _params(sorted(DISTS), {
    "expon", "chi2", "gennorm", "vonmises", "wrapcauchy", "binom", "betabinom", "nbinom",
    "gumbel_r"}))
def test_values_on_edge_values_under_jit(dist: str) -> None:
    x = K if dist in DISCRETE else X
    check(_all_functions(pst, dist), _all_functions(jst, dist), x, Q, *_shape_args(dist),
          eager=False)


@pytest.mark.parametrize("dist", _params(sorted(DISTS), {"gumbel_l", "geom"}))
def test_values_on_edge_values_eagerly(dist: str) -> None:
    x = K if dist in DISCRETE else X
    check(_all_functions(pst, dist), _all_functions(jst, dist), x, Q, *_shape_args(dist),
          jit=False)


@pytest.mark.parametrize("dist", _params(sorted(DISTS), {"gumbel_r"}))
def test_values_under_x64(dist: str) -> None:
    with x64():
        x = (K if dist in DISCRETE else X).astype(np.float64)
        q = Q.astype(np.float64)
        check(_all_functions(pst, dist), _all_functions(jst, dist), x, q,
              *_shape_args(dist, np.float64), rtol=1e-11, atol=1e-13, eager=False)


PARAM_CASES = [(d, None) for d in sorted(PARAMS)] + [("truncnorm", ("logcdf",))]


@pytest.mark.parametrize(("dist", "names"),
                         _params(PARAM_CASES, {("truncnorm", ("logcdf",))},
                                 unpack=True),
                         ids=[d + ("" if n is None else "-" + "-".join(n))
                              for d, n in PARAM_CASES])
def test_parameters_in_and_out_of_range_broadcast(dist: str,
                                                  names: tuple[str, ...] | None) -> None:
    # x down the rows, one parameter case per column.
    x = (K if dist in DISCRETE else X)[::2][:, None]
    q = Q[::2][:, None]
    cases = PARAMS[dist]
    columns = tuple(f32(*values)[None, :] for values in zip(*cases)) if cases[0] else ()
    check(_all_functions(pst, dist, names), _all_functions(jst, dist, names), x, q, *columns,
          eager=False)


@pytest.mark.parametrize("dist", _params(sorted(LOC_SCALE | DISCRETE), {"pareto"}))
def test_loc_and_scale_broadcast(dist: str) -> None:
    of_x, of_q, _ = DISTS[dist]
    shape_args = _shape_args(dist)
    loc, scale = f32(-1.0, 0.0, 0.5)[:, None], f32(0.5, 2.0)[:, None, None]
    x = (K if dist in DISCRETE else X)[:6][None, None, :]
    extra = (loc,) if dist in DISCRETE else (loc, scale)

    def run(lib: Any) -> Any:
        mod = getattr(lib, dist)
        return lambda x, q, *extra: {
            name: getattr(mod, name)(q if name in of_q else x, *shape_args, *extra)
            for name in of_x + of_q}
    check(run(pst), run(jst), x, Q[:6], *extra, eager=False)


@pytest.mark.parametrize("dist", _params(sorted(LOC_SCALE - {"truncnorm"}), {"gumbel_l"}))
def test_non_positive_scale(dist: str) -> None:
    # Eagerly: jaxlib 0.10.2's XLA:CPU compiles exp(select(p, y, nan)) over some broadcast
    # shapes (x (1, 1, 6), loc (3, 1), scale (4, 1, 1)) into a program that returns
    # uninitialized memory, in JAX as in plait.
    of_x, of_q, _ = DISTS[dist]
    x, scale = X[::2][:, None], f32(-1.0, 0.0)
    for name in of_x + of_q:
        first = Q[::2][:, None] if name in of_q else x
        ours = getattr(getattr(pst, dist), name)(first, *_shape_args(dist), 0.5, scale)
        theirs = getattr(getattr(jst, dist), name)(first, *_shape_args(dist), 0.5, scale)
        assert_close(ours, theirs, rtol=5e-5, atol=1e-6)


# (distribution, function, arguments): integers become float32, Python scalars stay weak.
PROMOTIONS: list[tuple[str, str, tuple[Any, ...]]] = [
    ("expon", "logpdf", (np.arange(3), 1, 2)), ("expon", "sf", (0.5,)),
    ("chi2", "cdf", (np.arange(3), 3)), ("gennorm", "logpdf", (np.arange(3), 2)),
    ("gennorm", "cdf", (0.5, 2)), ("gumbel_l", "cdf", (np.arange(3), 1, 2)),
    ("gumbel_r", "ppf", (0.25, 1, 2)), ("gumbel_r", "logpdf", (0.5,)),
    ("pareto", "logpdf", (np.arange(3), 1)), ("pareto", "ppf", (0.5, 2)),
    ("truncnorm", "logpdf", (np.arange(3), -1, 2)), ("vonmises", "pdf", (np.arange(3), 1)),
    ("wrapcauchy", "pdf", (1, 0.5)), ("binom", "pmf", (np.arange(5), 4, 0.5)),
    ("betabinom", "pmf", (np.arange(5), 4, 2, 3)), ("nbinom", "pmf", (np.arange(5), 2, 0.5)),
    ("geom", "pmf", (np.arange(5), 0.5)), ("geom", "logpmf", (2, 0.5)),
]
FAST_PROMOTIONS = {1, 7, 9, 13, 17}


@pytest.mark.parametrize("case", _params(range(len(PROMOTIONS)), FAST_PROMOTIONS),
                         ids=[f"{d}.{n}" for d, n, _ in PROMOTIONS])
def test_integer_and_scalar_arguments(case: int) -> None:
    dist, name, args = PROMOTIONS[case]
    ours = getattr(getattr(pst, dist), name)(*args)
    theirs = getattr(getattr(jst, dist), name)(*args)
    assert_close(ours, theirs)
    assert ours.aval.weak_type == theirs.weak_type


@pytest.mark.slow
def test_16_bit_floats_stay_16_bit() -> None:
    h = np.array([0.5, 1.5], np.float16)
    assert_close(pst.expon.cdf(h), jst.expon.cdf(h), rtol=1e-3)
    assert_close(pst.gumbel_l.logpdf(h), jst.gumbel_l.logpdf(h), rtol=1e-3)


@pytest.mark.slow
def test_agrees_with_scipy() -> None:
    x = np.linspace(0.1, 4.0, 7)
    k = np.arange(6)
    with x64():
        pairs = [(pst.expon.logpdf(x, 0.1, 2.0), sst.expon.logpdf(x, 0.1, 2.0)),
                 (pst.chi2.sf(x, 3.5), sst.chi2.sf(x, 3.5)),
                 (pst.gennorm.cdf(x - 2, 1.3), sst.gennorm.cdf(x - 2, 1.3)),
                 (pst.gumbel_l.logsf(x, 1.0, 2.0), sst.gumbel_l.logsf(x, 1.0, 2.0)),
                 (pst.gumbel_r.logsf(x, 1.0, 2.0), sst.gumbel_r.logsf(x, 1.0, 2.0)),
                 (pst.pareto.logcdf(x + 1, 2.5), sst.pareto.logcdf(x + 1, 2.5)),
                 (pst.truncnorm.logcdf(x, 0.5, 3.0), sst.truncnorm.logcdf(x, 0.5, 3.0)),
                 (pst.truncnorm.logsf(x + 10, 9.0, 20.0), sst.truncnorm.logsf(x + 10, 9.0, 20.0)),
                 (pst.vonmises.logpdf(x, 40.0), sst.vonmises.logpdf(x, 40.0)),
                 (pst.wrapcauchy.pdf(x, 0.3), sst.wrapcauchy.pdf(x, 0.3)),
                 (pst.binom.logpmf(k, 5, 0.3), sst.binom.logpmf(k, 5, 0.3)),
                 (pst.nbinom.pmf(k, 2.5, 0.4), sst.nbinom.pmf(k, 2.5, 0.4)),
                 (pst.geom.logpmf(k + 1, 0.3), sst.geom.logpmf(k + 1, 0.3))]
        for got, want in pairs:
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9)
        # (JAX's betaln, and so plait's, is good to about 1e-6 here.)
        np.testing.assert_allclose(np.asarray(pst.betabinom.pmf(k, 5, 2, 3)),
                                   sst.betabinom.pmf(k, 5, 2, 3), rtol=1e-5)


# -- gradients and vmap -----------------------------------------------------------------

# (distribution, function, its first argument, the argnums to differentiate)
GRADS: list[tuple[str, str, Any, tuple[int, ...]]] = [
    ("expon", "logpdf", f32(0.2, 1.0, 3.0), (0, 1, 2)),
    ("expon", "cdf", f32(0.2, 1.0, 3.0), (0, 1, 2)),
    ("expon", "logsf", f32(0.2, 1.0, 3.0), (0, 1, 2)),
    ("expon", "ppf", f32(0.1, 0.5, 0.9), (0, 1, 2)),
    ("chi2", "logpdf", f32(0.5, 1.0, 4.0), (0, 1, 2, 3)),
    ("chi2", "cdf", f32(0.5, 1.0, 4.0), (0, 1, 2, 3)),
    ("gennorm", "logpdf", f32(-1.5, 0.3, 2.0), (0, 1)),
    ("gennorm", "cdf", f32(-1.5, 0.3, 2.0), (0, 1)),
    ("gumbel_l", "logcdf", f32(-1.0, 0.3, 2.0), (0, 1, 2)),
    ("gumbel_l", "logsf", f32(-1.0, 0.3, 2.0), (0, 1, 2)),
    ("gumbel_r", "logcdf", f32(-1.0, 0.3, 2.0), (0, 1, 2)),
    ("gumbel_r", "logsf", f32(-1.0, 0.3, 2.0), (0, 1, 2)),
    ("gumbel_r", "sf", f32(-1.0, 0.3, 2.0), (0, 1, 2)),
    ("pareto", "logpdf", f32(1.5, 2.0, 5.0), (0, 1, 2, 3)),
    ("pareto", "cdf", f32(1.5, 2.0, 5.0), (0, 1, 2, 3)),
    ("pareto", "ppf", f32(0.1, 0.5, 0.9), (0, 1, 2, 3)),
    ("truncnorm", "logpdf", f32(-0.5, 0.3, 1.5), (0, 1, 2, 3, 4)),
    ("truncnorm", "logcdf", f32(-0.5, 0.3, 1.5), (0, 1, 2, 3, 4)),
    ("vonmises", "logpdf", f32(-1.0, 0.3, 2.0), (0, 1)),
    ("wrapcauchy", "logpdf", f32(0.5, 2.0, 4.0), (0, 1)),
    ("binom", "logpmf", f32(0, 2, 5), (2,)),
    ("betabinom", "logpmf", f32(0, 2, 5), (2, 3)),
    ("nbinom", "logpmf", f32(0, 2, 5), (1, 2)),
    ("geom", "logpmf", f32(1, 2, 5), (1,)),
]
FAST_GRADS = {("expon", "logpdf"), ("gumbel_r", "logsf"), ("truncnorm", "logpdf"),
              ("wrapcauchy", "logpdf"), ("geom", "logpmf")}
GRAD_PARAMS: dict[str, tuple[float, ...]] = {
    "expon": (0.05, 1.5), "chi2": (3.0, 0.05, 1.5), "gennorm": (1.5,), "gumbel_l": (0.05, 1.5),
    "gumbel_r": (0.05, 1.5), "pareto": (2.5, 0.05, 1.2), "truncnorm": (-1.0, 2.0, 0.05, 1.5),
    "vonmises": (2.0,), "wrapcauchy": (0.4,), "binom": (6.0, 0.3), "betabinom": (6.0, 2.5, 1.5),
    "nbinom": (3.0, 0.4), "geom": (0.3,),
}


def _grad_case(case: tuple[str, str, Any, tuple[int, ...]]) -> Any:
    if case[:2] in FAST_GRADS:
        return case
    return pytest.param(*case, marks=pytest.mark.slow)


@pytest.mark.parametrize(("dist", "name", "first", "argnums"), [_grad_case(c) for c in GRADS],
                         ids=[f"{d}.{n}" for d, n, _, _ in GRADS])
def test_gradients_match_jax(dist: str, name: str, first: Any, argnums: tuple[int, ...]) -> None:
    ours, theirs = getattr(getattr(pst, dist), name), getattr(getattr(jst, dist), name)
    args = (first, *(np.float32(v) for v in GRAD_PARAMS[dist]))
    axes = (0,) + (None,) * (len(args) - 1)
    got = plait.vmap(plait.grad(ours, argnums), in_axes=axes)(*args)
    want = jax.jit(jax.vmap(jax.grad(theirs, argnums), in_axes=axes))(*args)
    assert_close(got, want, rtol=2e-4, atol=1e-5)


# JAX 0.10.2 cannot differentiate these (they call xlogy(-1, s) / xlog1py(-1, -p), whose
# custom derivative multiplies by the float0 tangent of the integer -1): plait gives the
# derivative of the same formula, checked against JAX on that formula written out.
_JNP = jax.numpy
GUMBEL_FORMULAS: dict[tuple[str, str], Any] = {
    ("gumbel_l", "logpdf"): lambda x, m, s: -_JNP.log(s) + ((x - m) / s - _JNP.exp((x - m) / s)),
    ("gumbel_r", "logpdf"): lambda x, m, s: -_JNP.log(s) - ((x - m) / s
                                                           + _JNP.exp(-(x - m) / s)),
    ("gumbel_l", "ppf"): lambda p, m, s: m + s * _JNP.log(-_JNP.log1p(-p)),
    ("gumbel_r", "ppf"): lambda p, m, s: m - s * _JNP.log(-_JNP.log(p)),
}


@pytest.mark.parametrize(("dist", "name"), _params(list(GUMBEL_FORMULAS),
                                                   {("gumbel_l", "logpdf")}, unpack=True))
def test_gumbel_gradients_where_jax_s_fail(dist: str, name: str) -> None:
    first = f32(0.1, 0.5, 0.9) if name == "ppf" else f32(-1.0, 0.3, 2.0)
    args = (first, np.float32(0.05), np.float32(1.5))
    theirs = getattr(getattr(jst, dist), name)
    with pytest.raises(TypeError, match="float0"):
        jax.grad(theirs, (0, 1, 2))(first[0], *args[1:])
    ours = plait.vmap(plait.grad(getattr(getattr(pst, dist), name), (0, 1, 2)),
                      (0, None, None))(*args)
    want = jax.vmap(jax.grad(GUMBEL_FORMULAS[dist, name], (0, 1, 2)), (0, None, None))(*args)
    assert_close(ours, want, rtol=2e-4, atol=1e-5)


VMAP_CASES: list[tuple[str, str, Any, tuple[Any, ...]]] = [
    ("vonmises", "logpdf", f32(0.5, 3.0, 30.0), ()),
    ("nbinom", "logpmf", f32(1.0, 2.5, 6.0), (np.float32(0.4),)),
    ("chi2", "sf", f32(1.0, 2.5, 6.0), ()),
    ("truncnorm", "cdf", f32(-2.0, -1.0, 0.0), (np.float32(2.0),)),
]


@pytest.mark.parametrize("case", _params(range(len(VMAP_CASES)), {0}),
                         ids=[f"{d}.{n}" for d, n, _, _ in VMAP_CASES])
def test_vmap_over_parameters(case: int) -> None:
    dist, name, params, extra = VMAP_CASES[case]
    x = f32(0.5, 1.0, 4.0)
    ours, theirs = getattr(getattr(pst, dist), name), getattr(getattr(jst, dist), name)
    axes = (None, 0) + (None,) * len(extra)
    got = plait.vmap(ours, axes)(x, params, *extra)
    assert_close(got, jax.vmap(theirs, axes)(x, params, *extra), rtol=5e-5)


# -- dirichlet and multinomial ----------------------------------------------------------

ALPHA = f32(0.5, 2.0, 3.5)
POINTS = np.random.default_rng(0).dirichlet(np.ones(3), size=4).T.astype(np.float32)  # (3, 4)
DIRICHLET_CASES: list[tuple[Any, Any]] = [
    (POINTS, ALPHA), (POINTS[:2, 0], ALPHA), (POINTS.reshape(3, 2, 2), ALPHA),
    (f32(0.2, 0.3, 0.6), ALPHA), (f32(0.0, 0.5, 0.5), ALPHA), (f32(-0.1, 0.6, 0.5), ALPHA),
    (POINTS[:, 0], ALPHA), (POINTS[:2], ALPHA), (f32(0.2, 0.3, 0.5), np.array([1, 2, 3])),
    (POINTS, f32(1.0, 1.0, 1.0)), (np.float64(POINTS[:, 0]), ALPHA),
]


@pytest.mark.parametrize("case", _params(range(len(DIRICHLET_CASES)), {0, 4}))
def test_dirichlet_values(case: int) -> None:
    x, alpha = DIRICHLET_CASES[case]
    assert_close(pst.dirichlet.logpdf(x, alpha), jst.dirichlet.logpdf(x, alpha), rtol=1e-5)


@pytest.mark.slow
def test_dirichlet_pdf_grad_vmap_and_x64() -> None:
    check(pst.dirichlet.pdf, jst.dirichlet.pdf, POINTS, ALPHA, rtol=1e-5, eager=False)
    got = plait.grad(lambda x, a: pst.dirichlet.logpdf(x, a).sum(), (0, 1))(POINTS, ALPHA)
    want = jax.grad(lambda x, a: jst.dirichlet.logpdf(x, a).sum(), (0, 1))(POINTS, ALPHA)
    assert_close(got, want, rtol=1e-5)
    got = plait.vmap(pst.dirichlet.logpdf, (1, None))(POINTS, ALPHA)
    assert_close(got, jax.vmap(jst.dirichlet.logpdf, (1, None))(POINTS, ALPHA), rtol=1e-5)
    with x64():
        check(pst.dirichlet.logpdf, jst.dirichlet.logpdf, np.float64(POINTS), np.float64(ALPHA),
              rtol=1e-12, eager=False)


P3 = f32(0.2, 0.3, 0.5)
MULTINOMIAL_CASES: list[tuple[Any, ...]] = [
    (np.array([1, 2, 3]), 6, P3), (np.array([1, 2, 3]), 5, P3),
    (np.array([0, 2, 3]), 5, f32(0.0, 0.5, 0.5)), (np.array([[1, 2, 3], [2, 2, 2]]), 6, P3),
    (np.array([True, False]), 1, f32(0.2, 0.8)), (np.array([0, 0, 4]), 4, P3),
    (np.array([1, 2, 3]), np.int32(6), P3),
    (np.array([1, 2, 3]), 6, np.array([0.2, 0.3, 0.5], np.float16)),
    (np.array([1, 2, 3]), 6, np.array([1, 1, 1])),
]


@pytest.mark.parametrize("case", _params(range(len(MULTINOMIAL_CASES)), {0, 2, 3}))
def test_multinomial_values(case: int) -> None:
    args = MULTINOMIAL_CASES[case]
    assert_close(pst.multinomial.logpmf(*args), jst.multinomial.logpmf(*args), rtol=1e-5)


@pytest.mark.slow
def test_multinomial_pmf_grad_and_vmap() -> None:
    x = np.array([1, 2, 3])
    check(pst.multinomial.pmf, jst.multinomial.pmf, x, 6, P3, rtol=1e-5, eager=False)
    assert_close(plait.grad(pst.multinomial.logpmf, 2)(x, 6, P3),
                 jax.grad(jst.multinomial.logpmf, 2)(x, 6, P3))
    xs = np.array([[1, 2, 3], [2, 2, 2], [0, 6, 0]])
    got = plait.vmap(pst.multinomial.logpmf, (0, None, None))(xs, 6, P3)
    assert_close(got, jax.vmap(jst.multinomial.logpmf, (0, None, None))(xs, 6, P3), rtol=1e-5)


# -- mode, rankdata, sem ----------------------------------------------------------------

GRID = np.array([[1, 2, 2], [3, 3, 1], [1, 2, 3]])
MODE_CASES: list[tuple[Any, dict[str, Any]]] = [
    (np.array([3, 1, 1, 3, 2]), {}), (GRID, {"axis": 1, "keepdims": True}),
    (f32(0.5, np.nan, np.nan, 2.0, 2.0), {}), (np.zeros((0, 3), np.float32), {"axis": 0}),
    (5, {}),
    (np.array([3, 1, 1, 3, 2]), {"axis": None, "keepdims": True}), (GRID, {"axis": 0}),
    (GRID, {"axis": -1}), (np.arange(24).reshape(2, 3, 4) % 3, {"axis": 1}),
    (np.arange(24).reshape(2, 3, 4) % 3, {"axis": None}), (f32(-0.0, 0.0, 1.0), {}),
    (np.array([True, False, True]), {}), (2.5, {"keepdims": True}),
    (np.zeros((0,), np.float32), {}), (np.zeros((3, 0), np.float32), {"axis": 0}),
]


@pytest.mark.parametrize("case", _params(range(len(MODE_CASES)), {0, 2}))
def test_mode_matches_jax(case: int) -> None:
    a, kw = MODE_CASES[case]
    got, want = pst.mode(a, **kw), jst.mode(a, **kw)
    assert type(got).__name__ == "ModeResult" and got._fields == want._fields
    for g, w in zip(got, want):
        assert_close(g, w)
        assert g.aval.weak_type == w.weak_type
    if "axis" in kw:  # axis by position, too
        assert_close(tuple(pst.mode(a, kw["axis"])), tuple(jst.mode(a, kw["axis"])))


@pytest.mark.slow
def test_mode_under_jit_and_vmap() -> None:
    got = plait.jit(lambda v: tuple(pst.mode(v, axis=1)))(GRID)
    assert_close(got, jax.jit(lambda v: tuple(jst.mode(v, axis=1)))(GRID))
    got = plait.vmap(lambda v: tuple(pst.mode(v)))(GRID)
    assert_close(got, jax.vmap(lambda v: tuple(jst.mode(v)))(GRID))


RANK_INPUTS: list[Any] = [
    f32(3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0), f32(1.0, np.nan, 2.0),
    np.array([[3, 1, 2], [1, 1, 2]]), np.array([2]), 7, np.zeros((0,), np.float32),
    f32(-0.0, 0.0, -1.0),
]


@pytest.mark.parametrize("method", _params(["average", "min", "max", "dense", "ordinal"],
                                           {"average"}))
def test_rankdata_matches_jax_and_scipy(method: str) -> None:
    # (The default run ranks the two vectors with ties and with a NaN, average ranks.)
    for a in RANK_INPUTS[:2] if method == "average" else RANK_INPUTS:
        got = pst.rankdata(a, method)
        assert_close(got, jst.rankdata(a, method))
        np.testing.assert_allclose(np.asarray(got), sst.rankdata(a, method))


@pytest.mark.parametrize("method", _params(["average", "min", "max", "dense", "ordinal"],
                                           set()))
def test_rankdata_along_an_axis_under_jit_and_vmap(method: str) -> None:
    for a in RANK_INPUTS[2:] if method == "average" else ():
        assert_close(pst.rankdata(a, method), jst.rankdata(a, method))
    grid = np.array([[3, 1, 2], [1, 1, 2], [2, 2, 2]])
    for axis in (0, -1):
        assert_close(pst.rankdata(grid, method, axis=axis), jst.rankdata(grid, method, axis=axis))
    got = plait.jit(lambda v: pst.rankdata(v, method))(RANK_INPUTS[0])
    assert_close(got, jax.jit(lambda v: jst.rankdata(v, method))(RANK_INPUTS[0]))
    rows = np.array([[3.0, 1.0, 2.0], [1.0, 1.0, np.nan]], np.float32)
    got = plait.vmap(lambda v: pst.rankdata(v, method))(rows)
    assert_close(got, jax.vmap(lambda v: jst.rankdata(v, method))(rows))


A23 = np.array([[1.0, 2.0, 4.0], [3.0, 7.0, 9.0]], np.float32)
SEM_CASES: list[tuple[Any, tuple[Any, ...], dict[str, Any]]] = [
    (A23, (), {}), (A23, (1,), {"keepdims": True}), (A23, (None,), {}),
    (f32(1.0, np.nan, 3.0, 4.0), (), {"nan_policy": "omit"}), (np.arange(4), (), {"ddof": 0}),
    (np.arange(5.0, dtype=np.float32), (), {}), (A23, (-1, 0), {}),
    (f32(1.0, np.nan, 3.0, 4.0), (), {}), (f32(2.0), (), {"axis": None}),
    (np.array([[1.0, np.nan], [3.0, 5.0], [2.0, 2.0]], np.float32), (0, 1, "omit"),
     {"keepdims": True}), (f32(1.0, 2.0), (), {"ddof": 2}),
]


@pytest.mark.parametrize("case", _params(range(len(SEM_CASES)), {1, 3}))
def test_sem_matches_jax(case: int) -> None:
    a, args, kw = SEM_CASES[case]
    assert_close(pst.sem(a, *args, **kw), jst.sem(a, *args, **kw))


@pytest.mark.slow
def test_sem_scipy_grad_vmap_and_x64() -> None:
    np.testing.assert_allclose(np.asarray(pst.sem(A23, 1)), sst.sem(A23, 1), rtol=1e-6)
    assert_close(plait.grad(lambda v: pst.sem(v).sum())(A23),
                 jax.grad(lambda v: jst.sem(v).sum())(A23))
    assert_close(plait.vmap(pst.sem)(A23), jax.vmap(jst.sem)(A23))
    with x64():
        assert_close(pst.sem(np.float64(A23), 1), jst.sem(np.float64(A23), 1), rtol=1e-14)
        assert_close(pst.sem(np.arange(4)), jst.sem(np.arange(4)), rtol=1e-14)


# -- gaussian_kde -----------------------------------------------------------------------

_RNG = np.random.default_rng(3)
DATA_1D = _RNG.normal(size=12).astype(np.float32)
DATA_2D = (_RNG.normal(size=(2, 15)) * f32(1.0, 0.5)[:, None]).astype(np.float32)
WEIGHTS_2D = _RNG.uniform(0.5, 2.0, size=15).astype(np.float32)
POINTS_2D = _RNG.normal(size=(2, 5)).astype(np.float32)
X_1D = f32(-3.0, -0.5, 0.0, 0.4, 2.0, 40.0)
KDES: dict[str, Any] = {
    "1d_weighted": lambda lib: lib.gaussian_kde(DATA_1D, 0.4, weights=np.arange(1, 13)),
    "2d_weighted": lambda lib: lib.gaussian_kde(DATA_2D, weights=WEIGHTS_2D),
    "1d_scott": lambda lib: lib.gaussian_kde(DATA_1D),
    "1d_silverman": lambda lib: lib.gaussian_kde(DATA_1D, "silverman"),
    "1d_callable": lambda lib: lib.gaussian_kde(DATA_1D, lambda k: 0.5 * k.neff ** -0.2),
    "2d_silverman": lambda lib: lib.gaussian_kde(DATA_2D, "silverman"),
    "2d_array_bandwidth": lambda lib: lib.gaussian_kde(DATA_2D, np.float32(0.3)),
}


@pytest.mark.parametrize("name", _params(list(KDES), {"2d_weighted"}))
def test_gaussian_kde_densities_match_jax(name: str) -> None:
    o, t = KDES[name](pst), KDES[name](jst)
    assert (o.d, o.n) == (t.d, t.n)
    assert_close(o.tree_flatten()[0], t.tree_flatten()[0], rtol=1e-5)
    pts = POINTS_2D if o.d == 2 else X_1D
    for method in ("evaluate", "__call__", "pdf"):
        assert_close(getattr(o, method)(pts), getattr(t, method)(pts), rtol=1e-5, atol=1e-7)
    assert_close(o.logpdf(pts), t.logpdf(pts), rtol=1e-5)
    if name == "2d_weighted":  # the estimate is scipy's, too
        want = sst.gaussian_kde(DATA_2D.astype(np.float64), weights=WEIGHTS_2D)(POINTS_2D)
        np.testing.assert_allclose(np.asarray(o.evaluate(POINTS_2D)), want, rtol=1e-4)


@pytest.mark.parametrize("name", _params(list(KDES), {"1d_weighted"}))
def test_gaussian_kde_integrals_match_jax(name: str) -> None:
    o, t = KDES[name](pst), KDES[name](jst)
    if o.d == 1:
        assert_close(o.integrate_box_1d(-0.5, 1.0), t.integrate_box_1d(-0.5, 1.0), rtol=1e-5)
        if name == "1d_weighted":
            return  # (the rest in the slow run)
    pts = POINTS_2D if o.d == 2 else X_1D
    assert_close(o.evaluate(pts[..., 0]), t.evaluate(pts[..., 0]), rtol=1e-5, atol=1e-7)
    mean, cov = (f32(0.1, -0.2), np.eye(2, dtype=np.float32) * 0.3) if o.d == 2 else (0.2, 0.5)
    assert_close(o.integrate_gaussian(mean, cov), t.integrate_gaussian(mean, cov), rtol=1e-5)
    other = KDES["2d_weighted" if o.d == 2 else "1d_weighted"]
    assert_close(o.integrate_kde(other(pst)), t.integrate_kde(other(jst)), rtol=1e-5)


RESAMPLES = [("2d_weighted", (7,)), ("1d_weighted", (7,)), ("1d_weighted", ()),
             ("2d_weighted", (3,))]


@pytest.mark.parametrize(("name", "shape"), _params(RESAMPLES, {RESAMPLES[0]}, unpack=True))
def test_gaussian_kde_resample_is_jax_s(name: str, shape: tuple[int, ...]) -> None:
    got = KDES[name](pst).resample(plait.random.key(4), shape)
    want = KDES[name](jst).resample(jax.random.key(4), shape)
    assert_close(got, want, rtol=1e-5, atol=1e-6)


def test_gaussian_kde_is_a_pytree() -> None:
    o, t = pst.gaussian_kde(DATA_2D), jst.gaussian_kde(DATA_2D)
    leaves, treedef = plait.tree_util.tree_flatten(o)
    assert len(leaves) == 5
    again = plait.tree_util.tree_unflatten(treedef, leaves)
    assert type(again) is pst.gaussian_kde and again.d == 2
    got = plait.jit(lambda k, p: k.logpdf(p))(o, POINTS_2D)
    assert_close(got, jax.jit(lambda k, p: k.logpdf(p))(t, POINTS_2D), rtol=1e-5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.neff = 1.0  # type: ignore[misc]  # (the estimate is frozen, as JAX's)


@pytest.mark.slow
def test_gaussian_kde_built_under_jit_grad_and_vmap() -> None:
    got = plait.jit(lambda d: pst.gaussian_kde(d).evaluate(POINTS_2D))(DATA_2D)
    want = jax.jit(lambda d: jst.gaussian_kde(d).evaluate(POINTS_2D))(DATA_2D)
    assert_close(got, want, rtol=1e-5)
    f = lambda lib, d, p: lib.gaussian_kde(d).logpdf(p).sum()  # noqa: E731
    got = plait.grad(lambda d, p: f(pst, d, p), (0, 1))(DATA_2D, POINTS_2D)
    want = jax.grad(lambda d, p: f(jst, d, p), (0, 1))(DATA_2D, POINTS_2D)
    assert_close(got, want, rtol=1e-4, atol=1e-6)
    batch = np.stack([DATA_1D, DATA_1D * 2])
    got = plait.vmap(lambda d: pst.gaussian_kde(d).pdf(f32(0.0, 1.0)))(batch)
    want = jax.vmap(lambda d: jst.gaussian_kde(d).pdf(f32(0.0, 1.0)))(batch)
    assert_close(got, want, rtol=1e-5)


@pytest.mark.slow
def test_gaussian_kde_under_x64() -> None:
    with x64():
        data = DATA_2D.astype(np.float64)
        o = pst.gaussian_kde(data, weights=WEIGHTS_2D)
        t = jst.gaussian_kde(data, weights=WEIGHTS_2D)
        assert_close(o.logpdf(POINTS_2D), t.logpdf(POINTS_2D), rtol=1e-12)
        assert_close(o.integrate_kde(o), t.integrate_kde(t), rtol=1e-12)
        o, t = pst.gaussian_kde(np.arange(6)), jst.gaussian_kde(np.arange(6))
        assert_close(o.integrate_box_1d(1, 3), t.integrate_box_1d(1, 3), rtol=1e-12)


# -- errors -----------------------------------------------------------------------------

def _same_error(make: Any, match: str, *args: Any) -> None:
    """``make(plait.scipy.stats, *args)`` raises what ``make(jax.scipy.stats, *args)``
    raises, with a message matching ``match``."""
    with pytest.raises(Exception) as got:
        make(pst, *args)
    with pytest.raises(Exception) as want:
        make(jst, *args)
    # (numpy's AxisError, which plait raises for a bad axis, is a ValueError.)
    assert isinstance(got.value, type(want.value)), (got.value, want.value)
    assert got.match(match)


def _first_function(lib: Any, dist: str, *args: Any) -> Any:
    return getattr(getattr(lib, dist), DISTS[dist][0][0])(*args)


def test_errors_match_jax() -> None:
    for dist in DISTS:
        _same_error(_first_function, "requires ndarray or scalar arguments", dist, [0.5],
                    *[0.5] * len(DISTS[dist][2]))
    alpha = f32(1.0, 2.0, 3.0)
    dirichlet = lambda lib, x, a: lib.dirichlet.logpdf(x, a)  # noqa: E731
    _same_error(dirichlet, "must be one-dimensional", f32(0.5, 0.5), np.float32(2.0))
    _same_error(dirichlet, "one entry fewer", f32(0.5), alpha)
    _same_error(dirichlet, "at least one dimension", np.float32(0.5), alpha)
    _same_error(dirichlet, "", [0.5, 0.5], [1.0, 2.0])
    multinomial = lambda lib, x, n: lib.multinomial.logpmf(x, n, f32(0.5, 0.5))  # noqa: E731
    _same_error(multinomial, "must be of integer type", f32(1, 1), 2)
    _same_error(multinomial, "integer type", np.array([1, 1]), 2.0)
    _same_error(multinomial, "requires ndarray", [1, 1], 2)
    for fn in ("mode", "rankdata"):
        for policy, match in [("skip", "Illegal nan_policy"), ("omit", "not implemented"),
                              ("raise", "cannot know whether")]:
            _same_error(lambda lib, f, p: getattr(lib, f)(f32(1, 2), nan_policy=p), match,
                        fn, policy)
        _same_error(lambda lib, f: getattr(lib, f)([1, 2]), "requires ndarray", fn)
    _same_error(lambda lib: lib.rankdata(f32(1, 2), "mean"), "unknown method 'mean'")
    _same_error(lambda lib: lib.mode(f32(1, 2), axis=3), "")
    _same_error(lambda lib: lib.sem(f32(1, 2), nan_policy="raise"), "raise is not supported")


KDE_ERRORS: list[tuple[Any, str]] = [
    (lambda lib: lib.gaussian_kde([1.0, 2.0]), "requires ndarray"),
    (lambda lib: lib.gaussian_kde(f32(1.0)), "multiple elements"),
    (lambda lib: lib.gaussian_kde(np.array([1 + 1j, 2j])), "complex data"),
    (lambda lib: lib.gaussian_kde(DATA_1D, weights=np.ones((2, 6))), "one-dimensional"),
    (lambda lib: lib.gaussian_kde(DATA_1D, weights=np.ones(5)), "of length n"),
    (lambda lib: lib.gaussian_kde(DATA_1D, "wide"), "`bw_method` should be"),
    (lambda lib: lib.gaussian_kde(DATA_2D).evaluate(np.zeros((3, 2), np.float32)),
     "points have dimension 3, dataset has dimension 2"),
    (lambda lib: lib.gaussian_kde(DATA_2D).logpdf(np.zeros(2, np.complex64)),
     "complex coordinates"),
    (lambda lib: lib.gaussian_kde(DATA_2D).integrate_gaussian(f32(0, 0, 0), np.eye(2)),
     "mean does not have dimension 2"),
    (lambda lib: lib.gaussian_kde(DATA_2D).integrate_gaussian(f32(0, 0), np.eye(3)),
     "covariance does not have dimension 2"),
    (lambda lib: lib.gaussian_kde(DATA_2D).integrate_box_1d(0.0, 1.0), "only handles 1D"),
    (lambda lib: lib.gaussian_kde(DATA_1D).integrate_box_1d(f32(0, 1), 1.0),
     "must be scalars"),
    (lambda lib: lib.gaussian_kde(DATA_1D).integrate_kde(lib.gaussian_kde(DATA_2D)),
     "not the same dimensionality"),
    (lambda lib: lib.gaussian_kde(DATA_1D).integrate_box(0.0, 1.0), "integrate_box_1d"),
    (lambda lib: lib.gaussian_kde(DATA_1D).set_bandwidth("scott"), "not supported"),
]


@pytest.mark.parametrize("case", _params(range(len(KDE_ERRORS)), {0, 1, 2, 3, 4, 5, 6}))
def test_gaussian_kde_errors_match_jax(case: int) -> None:
    make, match = KDE_ERRORS[case]
    _same_error(make, match)


# -- names and signatures ---------------------------------------------------------------

NEW_MODULES = ["betabinom", "binom", "chi2", "dirichlet", "expon", "gennorm", "geom",
               "gumbel_l", "gumbel_r", "multinomial", "nbinom", "pareto", "truncnorm",
               "vonmises", "wrapcauchy"]


def _signature(fn: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_names_and_signatures_are_jax_s() -> None:
    public = {n for n in dir(jst) if not n.startswith("_")}
    assert public <= {n for n in dir(pst) if not n.startswith("_")}
    for name in NEW_MODULES:
        ours = importlib.import_module(f"plait.scipy.stats.{name}")
        assert ours is getattr(pst, name)
        theirs = importlib.import_module(f"jax.scipy.stats.{name}")
        jax_names = {n for n in dir(theirs) if not n.startswith("_")}
        assert set(ours.__all__) == jax_names, name
        for fn in ours.__all__:
            assert _signature(getattr(ours, fn)) == _signature(getattr(theirs, fn)), (name, fn)
            assert getattr(ours, fn).__doc__, (name, fn)
    for fn in ("mode", "rankdata", "sem", "gaussian_kde"):
        assert _signature(getattr(pst, fn)) == _signature(getattr(jst, fn)), fn
    for method in ("evaluate", "logpdf", "pdf", "integrate_gaussian", "integrate_box_1d",
                   "integrate_kde", "resample", "integrate_box", "set_bandwidth",
                   "tree_flatten", "__call__"):
        ours_m, theirs_m = getattr(pst.gaussian_kde, method), getattr(jst.gaussian_kde, method)
        assert _signature(ours_m) == _signature(theirs_m), method


@pytest.mark.parametrize("fn", ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"])
def test_truncnorm_equals_jax_bit_for_bit(fn: str) -> None:
    # JAX compiles these with an omitted loc and scale as constants (XLA folds them);
    # plait once passed them as traced arguments, 1 ulp off in 32 of 1000 logpdfs.
    rng = np.random.default_rng(0)
    x = rng.normal(size=1000).astype(np.float32)
    a = (rng.normal(size=1000) - 1).astype(np.float32)
    b = a + rng.uniform(0.1, 3, size=1000).astype(np.float32)
    for kw in ({}, {"loc": 0.5, "scale": 2.0}):
        np.testing.assert_array_equal(np.asarray(getattr(pst.truncnorm, fn)(x, a, b, **kw)),
                                      np.asarray(getattr(jst.truncnorm, fn)(x, a, b, **kw)))

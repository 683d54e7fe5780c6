"""NaN-aware functions, polynomials, differences, integrals and spaced samples
(``nan_functions.py``, ``polynomials.py``, ``calculus.py``) against jax.numpy."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp

COVERED = {"fmax", "fmin", "nanargmax", "nanargmin", "nancumsum", "nancumprod", "nanstd",
           "nanvar", "logspace", "geomspace", "ediff1d", "trapezoid", "polyval", "polyadd",
           "polysub", "polymul", "polyder", "polyint", "vander", "spacing", "diagflat",
           "fill_diagonal", "unwrap", "gradient"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

NAN = np.nan
F = np.array([[3, NAN, 4, 5], [NAN, 2, NAN, 7], [2, 1, 6, NAN]], np.float32)
MASK = np.array([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 1]], bool)
INTS = np.array([[3, -1, 4], [1, 5, -9]], np.int32)
G = np.array([[1.0, 2.5, 6.0, 6.5], [3.0, 4.0, 5.0, -1.0], [0.5, 0.0, 2.0, 9.0]], np.float32)


def assert_same(ours: Any, theirs: Any, what: str, rtol: float = 0.0) -> None:
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), what
        for o, t in zip(ours, theirs):
            assert_same(o, t, what, rtol)
        return
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), \
        f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
    if rtol:
        wide = np.complex128 if np.iscomplexobj(o) else np.float64
        np.testing.assert_allclose(o.astype(wide), t.astype(wide), rtol=rtol, atol=rtol,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(o, t, err_msg=what)


def check(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], rtol: float,
          jit: bool) -> None:
    """``pnp.name`` against ``jnp.name``, eagerly and (if ``jit``) under jit with the
    positional arguments traced."""
    what = f"{name}{tuple(np.shape(a) for a in args)} {kwargs}"
    theirs = getattr(jnp, name)(*args, **kwargs)
    assert_same(getattr(pnp, name)(*args, **kwargs), theirs, what, rtol)
    if jit:
        def f(*a: Any) -> Any:
            return getattr(pnp, name)(*a, **kwargs)
        assert_same(plait.jit(f)(*args), theirs, what + " jit", rtol)


# (name, positional arguments, keyword arguments, relative tolerance)
Case = tuple[str, tuple[Any, ...], dict[str, Any], float]


def params(cases: list[Case]) -> list[Any]:
    """The cases as pytest parameters; every third one is also run under jit (for time)."""
    return [pytest.param(*c, i % 3 == 0, id=f"{c[0]}-{i}") for i, c in enumerate(cases)]

NAN_CASES: list[Case] = [
    ("fmax", (F, np.float32(4)), {}, 0), ("fmin", (F, F.T[:3, :1]), {}, 0),
    ("fmax", (F.astype(np.float16), np.array([NAN, 1, np.inf, -np.inf], np.float16)), {}, 0),
    ("fmin", (INTS, np.int32(2)), {}, 0), ("fmax", (INTS, 2.5), {}, 0),
    ("fmin", (np.array([NAN, -np.inf]), np.array([np.inf, NAN])), {}, 0),
    ("nanargmax", (F,), {}, 0), ("nanargmax", (F,), {"axis": 0}, 0),
    ("nanargmin", (F,), {"axis": 1, "keepdims": True}, 0),
    ("nanargmin", (np.array([[NAN, NAN], [1, NAN]], np.float16),), {"axis": 1}, 0),
    ("nanargmax", (INTS,), {"axis": -1}, 0), ("nanargmin", (INTS,), {}, 0),
    ("nancumsum", (F,), {}, 0), ("nancumsum", (F,), {"axis": 1}, 0),
    ("nancumsum", (F.astype(np.float16),), {"axis": 0, "dtype": np.float32}, 0),
    ("nancumsum", (INTS,), {"axis": 0}, 0), ("nancumprod", (F,), {"axis": -1}, 0),
    ("nancumprod", (INTS,), {"dtype": np.float32}, 0),
    ("nancumprod", (np.array([True, False]),), {}, 0),
    ("nanvar", (F,), {}, 1e-6), ("nanvar", (F,), {"axis": 0}, 1e-6),
    ("nanvar", (F,), {"axis": 1, "ddof": 1, "keepdims": True}, 1e-6),
    ("nanvar", (F,), {"axis": 0, "where": MASK}, 1e-6),
    ("nanvar", (F,), {"axis": (0, 1), "ddof": 9}, 0),
    ("nanvar", (F.astype(np.float16),), {"axis": 1}, 1e-3),
    ("nanvar", (INTS,), {"axis": 1}, 1e-6), ("nanvar", (INTS,), {"dtype": np.float16}, 1e-3),
    ("nanvar", (F,), {"axis": 1, "mean": np.float32(3)}, 1e-6),
    ("nanvar", (np.array([1 + 2j, NAN, 3j], np.complex64),), {}, 1e-6),
    ("nanstd", (F,), {"axis": 0, "keepdims": True}, 1e-6),
    ("nanstd", (F,), {"axis": 1, "where": MASK, "ddof": 1}, 1e-6),
    ("nanstd", (INTS,), {}, 1e-6), ("nanstd", (F.astype(np.float16),), {}, 1e-3)]


@pytest.mark.parametrize("name, args, kwargs, rtol, jit", params(NAN_CASES))
def test_nan_functions_match_jax(name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                                 rtol: float, jit: bool) -> None:
    check(name, args, kwargs, rtol, jit)


P = np.array([3, -2, 1, 4], np.int32)

POLY_CASES: list[Case] = [
    ("polyval", (P, INTS), {}, 0), ("polyval", (P.astype(np.float32), G), {}, 1e-6),
    ("polyval", (P.astype(np.float16), np.float16(0.5)), {"unroll": 2}, 0),
    ("polyval", (np.ones((3, 2), np.float32), np.array([1.5, -2], np.float32)), {}, 0),
    ("polyval", (np.array([], np.float32), np.float32(2)), {}, 0),
    ("polyadd", (P, np.array([1, 2], np.int32)), {}, 0),
    ("polyadd", (np.array([1.5, 2], np.float32), P), {}, 0),
    ("polyadd", (np.ones((2, 3), np.float16), np.ones((3, 3), np.float16)), {}, 0),
    ("polysub", (P, np.array([1, 2], np.int8)), {}, 0),
    ("polysub", (np.array([1, 2], np.float16), P), {}, 0),
    ("polymul", (P, np.array([1, 2], np.int32)), {}, 0),
    ("polymul", (np.array([0.5, 2, -1], np.float32), G[0]), {}, 1e-6),
    ("polymul", (np.array([1 + 1j, 2], np.complex64), P), {}, 1e-6),
    ("polymul", (np.array([1, 2], np.float16), np.array([3], np.float16)), {}, 0),
    ("polyder", (P,), {}, 0), ("polyder", (P,), {"m": 2}, 0), ("polyder", (P,), {"m": 0}, 0),
    ("polyder", (P,), {"m": 6}, 0), ("polyder", (G[1].astype(np.float16),), {"m": 3}, 0),
    ("polyint", (P,), {}, 1e-6), ("polyint", (P,), {"m": 3}, 1e-6),
    ("polyint", (P,), {"m": 0}, 0), ("polyint", (G[0],), {"m": 2, "k": 3.0}, 1e-6),
    ("polyint", (G[0],), {"m": 2, "k": np.array([1.0, -2.0], np.float32)}, 1e-6),
    ("polyint", (G[0].astype(np.float16),), {"k": 1}, 1e-3),
    ("vander", (np.array([1, 2, 3], np.int32),), {}, 0),
    ("vander", (np.array([1.5, -2, 3], np.float32),), {"N": 4, "increasing": True}, 1e-6),
    ("vander", (np.array([1, 2, 3], np.int8),), {"N": 0}, 0),
    ("vander", (np.array([1.5, -2, 0], np.float16),), {"N": 5}, 0)]


@pytest.mark.parametrize("name, args, kwargs, rtol, jit", params(POLY_CASES))
def test_polynomials_match_jax(name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                               rtol: float, jit: bool) -> None:
    check(name, args, kwargs, rtol, jit)


def test_polymul_trims_leading_zeros_of_concrete_inputs() -> None:
    a, b = np.array([0, 0, 1.0, 2], np.float32), np.array([0, 3, 1], np.int32)
    for x, y in ((a, b), (np.zeros(3, np.float32), b), (np.zeros(1), np.zeros(1))):
        assert_same(pnp.polymul(x, y, trim_leading_zeros=True),
                    jnp.polymul(x, y, trim_leading_zeros=True), f"{x} {y}")
    with pytest.raises(plait.errors.ConcretizationTypeError, match="trim_leading_zeros"):
        plait.jit(lambda x: pnp.polymul(x, b, trim_leading_zeros=True))(a)


TH = np.array([0.1, 3.0, 6.5, -3.0, 12.0, 2.0, 2.0 - np.pi], np.float32)

CALCULUS_CASES: list[Case] = [
    ("ediff1d", (INTS,), {}, 0), ("ediff1d", (G,), {"to_begin": np.array([-99.5])}, 0),
    ("ediff1d", (P,), {"to_begin": np.array([[1, 2]]), "to_end": np.float32(8.7)}, 0),
    ("ediff1d", (G.astype(np.float16),), {"to_end": 3}, 0),
    ("gradient", (G,), {}, 1e-6), ("gradient", (G,), {"axis": 1}, 1e-6),
    ("gradient", (G, 2.0), {"axis": (-1, 0)}, 1e-6), ("gradient", (INTS, 0.5), {}, 1e-6),
    ("gradient", (G, np.array([0, 1.5, 2], np.float32), np.array([1, 2, 4, 8.0])), {}, 1e-6),
    ("gradient", (P, np.array([0, 1, 3, 4])), {}, 1e-6),
    ("gradient", (G.astype(np.float16),), {"axis": -1}, 1e-3),
    ("gradient", (G,), {"axis": ()}, 0),
    ("trapezoid", (G,), {}, 1e-6), ("trapezoid", (G,), {"dx": 0.5, "axis": 0}, 1e-6),
    ("trapezoid", (G,), {"x": np.array([0, 1, 3, 3.5])}, 1e-6),
    ("trapezoid", (G,), {"x": G[::-1] * 2, "axis": 0}, 1e-6),
    ("trapezoid", (G,), {"dx": np.array([1.0, 2.0, 0.5], np.float32)}, 1e-6),
    ("trapezoid", (INTS,), {}, 0), ("trapezoid", (G.astype(np.float16),), {"axis": 0}, 1e-3),
    ("unwrap", (TH,), {}, 1e-6), ("unwrap", (TH,), {"discont": 4.0}, 1e-6),
    ("unwrap", (TH,), {"period": 4.0}, 1e-6), ("unwrap", (G,), {"axis": 0}, 1e-6),
    ("unwrap", (np.array([0, 5, 9, 2, 7, 3], np.int32),), {"period": 6}, 0),
    ("unwrap", (np.array([0, 5, 9, 2, 7, 3], np.int32),), {}, 1e-6),
    ("unwrap", (TH.astype(np.float16),), {}, 1e-3), ("unwrap", (np.zeros((2, 0)),), {}, 0),
    ("logspace", (0, 3), {"num": 4}, 1e-6),
    ("logspace", (0.0, 2), {"num": 5, "endpoint": False, "base": 2}, 1e-6),
    ("logspace", (np.array([0, 1], np.int32), 3), {"num": 4, "axis": 1}, 1e-6),
    ("logspace", (0, 3), {"num": 4, "dtype": np.int32}, 0),
    ("logspace", (np.float16(0), np.float16(2)), {"num": 5}, 1e-3),
    ("logspace", (np.float32(1), np.float32(-1)), {"num": 3, "base": np.float32(3)}, 1e-6),
    ("geomspace", (1, 16), {"num": 5}, 1e-6),
    ("geomspace", (np.array([1, 1000]), np.array([27, 1])), {"num": 4, "axis": -1}, 1e-6),
    ("geomspace", (-1.0, -16.0), {"num": 5, "endpoint": False}, 1e-6),
    ("geomspace", (np.float16(2), np.float16(50)), {"num": 3}, 1e-3),
    ("spacing", (np.array([0, 1, -1, 1e30, np.inf, NAN, 1e-45, -3e38], np.float32),), {}, 0),
    ("spacing", (np.array([0, 1, -1, 65504, -2.5], np.float16),), {}, 0),
    ("spacing", (np.array([1, -2, 300], np.int32),), {}, 0),
    ("diagflat", (np.array([[1, 2], [3, 4]], np.int32),), {}, 0),
    ("diagflat", (np.array([1.5, 2], np.float32),), {"k": 2}, 0),
    ("diagflat", (np.array([1, 2], np.float16),), {"k": -1}, 0),
    ("diagflat", (np.float32(5),), {}, 0),
    ("fill_diagonal", (np.zeros((3, 5), np.float32), 2), {"inplace": False}, 0),
    ("fill_diagonal", (np.zeros((3, 3, 3), np.int32), np.array([1, 2])), {"inplace": False}, 0),
    ("fill_diagonal", (np.ones((4, 3), np.float16), np.array([[1.5, 2], [3, 4]], np.float16)),
     {"inplace": False}, 0)]


@pytest.mark.parametrize("name, args, kwargs, rtol, jit", params(CALCULUS_CASES))
def test_calculus_and_spacing_match_jax(name: str, args: tuple[Any, ...],
                                        kwargs: dict[str, Any], rtol: float,
                                        jit: bool) -> None:
    check(name, args, kwargs, rtol, jit)


V = np.array([0.5, -1.5, 2.0, 3.0], np.float32)

GRADS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("fmax", lambda np_, x: np_.fmax(x, np.float32(1.0)).sum()),
    ("fmin", lambda np_, x: np_.fmin(x, x[::-1]).sum()),
    ("nancumsum", lambda np_, x: (np_.nancumsum(np_.where(x > 2, np.nan, x)) ** 2).sum()),
    ("nancumprod", lambda np_, x: np_.nancumprod(x).sum()),
    ("nanvar", lambda np_, x: np_.nanvar(np_.where(x > 2, np.nan, x), ddof=1)),
    ("nanstd", lambda np_, x: np_.nanstd(x * x)),
    ("logspace", lambda np_, x: np_.logspace(x[0], x[2], 4, base=2.0).sum()),
    ("geomspace", lambda np_, x: np_.geomspace(x[2], x[3], 3).sum()),
    ("ediff1d", lambda np_, x: (np_.ediff1d(x * x, to_end=x[0]) ** 2).sum()),
    ("trapezoid", lambda np_, x: np_.trapezoid(x * x, x=np_.cumsum(x * x))),
    ("gradient", lambda np_, x: (np_.gradient(x * x, x.cumsum() * 1.0) ** 2).sum()),
    ("unwrap", lambda np_, x: (np_.unwrap(x * 3.0) ** 2).sum()),
    ("polyval", lambda np_, x: np_.polyval(x, x[1] * 2)),
    ("polyadd", lambda np_, x: (np_.polyadd(x, x[:2] * x[:2]) ** 2).sum()),
    ("polysub", lambda np_, x: (np_.polysub(x[:3], x * x) ** 2).sum()),
    ("polymul", lambda np_, x: (np_.polymul(x, x[1:] * 2) ** 2).sum()),
    ("polyder", lambda np_, x: (np_.polyder(x * x, 2) ** 2).sum()),
    ("polyint", lambda np_, x: (np_.polyint(x, 2, k=x[0]) ** 2).sum()),
    ("vander", lambda np_, x: np_.vander(x, 3).sum()),
    ("diagflat", lambda np_, x: (np_.diagflat(x * x, 1) ** 2).sum()),
    ("fill_diagonal", lambda np_, x: (np_.fill_diagonal(
        np_.outer(x, x), x[:2] * 3, inplace=False) ** 2).sum())]


@pytest.mark.parametrize("name, f", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_match_jax(name: str, f: Callable[[Any, Any], Any]) -> None:
    assert_same(plait.grad(lambda x: f(pnp, x))(V), jax.grad(lambda x: f(jnp, x))(V), name,
                rtol=1e-5)


def test_bad_inputs() -> None:
    for name in ("nanargmax", "nancumsum", "nanvar", "nanstd"):
        with pytest.raises(NotImplementedError, match=f"'out' argument to .*{name}"):
            getattr(pnp, name)(F, out=F)
    with pytest.raises(TypeError, match="nanvar requires ndarray or scalar arguments"):
        pnp.nanvar([1.0, 2.0])
    with pytest.raises(ValueError, match="where must be None or a boolean array"):
        pnp.nanstd(F, where=np.ones(F.shape))
    with pytest.raises(ValueError, match="does not yet support real dtype parameters"):
        pnp.nanvar(np.ones(2, np.complex64), dtype=np.float32)
    with pytest.raises(ValueError, match="Order of derivative must be positive"):
        pnp.polyder(P, -1)
    with pytest.raises(ValueError, match=r"Order of integral must be positive \(see polyder\)"):
        pnp.polyint(P, -1)
    with pytest.raises(ValueError, match="k must be a scalar or a rank-1 array of length 1 or m"):
        pnp.polyint(P, 2, k=np.ones(3))
    with pytest.raises(ValueError, match="convolve\\(\\) only support 1-dimensional inputs"):
        pnp.polymul(np.ones((2, 2)), P)
    with pytest.raises(ValueError, match="x must be a one-dimensional array"):
        pnp.vander(np.ones((2, 2)))
    with pytest.raises(ValueError, match="N must be nonnegative"):
        pnp.vander(P, -1)
    with pytest.raises(NotImplementedError, match="'edge_order' argument to jnp.gradient"):
        pnp.gradient(G, edge_order=1)
    with pytest.raises(ValueError, match="at least 2 elements are required"):
        pnp.gradient(np.ones((1, 3)))
    with pytest.raises(ValueError, match="Spacing arrays must have the same length"):
        pnp.gradient(P, np.ones(3))
    with pytest.raises(ValueError, match="Spacing arrays must be 1D arrays or scalars"):
        pnp.gradient(P, np.ones((2, 2)))
    with pytest.raises(TypeError, match="Invalid number of spacing arguments 3"):
        pnp.gradient(G, 1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="jnp.unwrap does not support complex inputs"):
        pnp.unwrap(np.ones(3, np.complex64))
    with pytest.raises(ValueError, match="jnp.spacing is not defined for complex inputs"):
        pnp.spacing(np.ones(3, np.complex64))
    with pytest.raises(NotImplementedError, match="must use inplace=False"):
        pnp.fill_diagonal(np.zeros((2, 2)), 1)
    with pytest.raises(NotImplementedError, match="must use wrap=False"):
        pnp.fill_diagonal(np.zeros((2, 2)), 1, wrap=True, inplace=False)
    with pytest.raises(ValueError, match="array must be at least 2-d"):
        pnp.fill_diagonal(np.zeros(2), 1, inplace=False)
    with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
        pnp.fill_diagonal(np.zeros((2, 2, 3)), 1, inplace=False)
    with pytest.raises(TypeError, match="ediff1d requires ndarray or scalar arguments"):
        pnp.ediff1d([1, 2, 3])


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_derivatives_match_jax(name: str) -> None:
    # JAX's custom derivative: exp(x - out), so equal inputs share it (1/2 each), and
    # infinite inputs give finite (zero or one) derivatives instead of NaNs.
    ours, theirs = getattr(pnp, name), getattr(jnp, name)
    for x, y in [(0.0, 0.0), (1.0, 2.0), (np.inf, 1.0), (-np.inf, -np.inf), (np.inf, np.inf)]:
        got = plait.grad(ours, (0, 1))(x, y)
        want = jax.grad(theirs, (0, 1))(x, y)
        np.testing.assert_allclose(np.array(got, np.float64), np.array(want, np.float64),
                                   rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("make", [
    lambda m, s: m.numpy.zeros_like(s), lambda m, s: m.numpy.ones_like(s),
    lambda m, s: m.numpy.empty_like(s), lambda m, s: m.numpy.full_like(s, 3),
    lambda m, s: m.numpy.full_like(s, np.arange(3.0)),
    lambda m, s: m.numpy.zeros_like(s, dtype=np.int8, shape=(4, 1, 3))])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.bool_])
def test_like_functions_take_a_shape_dtype_struct_as_jax(make: Callable[..., Any],
                                                         dtype: Any) -> None:
    # optax's MultiSteps builds its state this way.
    ours = make(plait, plait.ShapeDtypeStruct((2, 3), dtype))
    theirs = make(jax, jax.ShapeDtypeStruct((2, 3), dtype))
    assert str(plait.typeof(ours)) == str(jax.typeof(theirs))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


class _Wrapped:
    """An object converting itself with JAX's ``__jax_array__`` protocol."""

    def __init__(self, np_: Any, value: Any) -> None:
        self.np_, self.value = np_, value

    def __jax_array__(self) -> Any:
        return self.np_.asarray(self.value)


def test_asarray_and_array_take_jax_array_objects_as_jax() -> None:
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    for make in (lambda np_: np_.asarray(_Wrapped(np_, v)),
                 lambda np_: np_.array([_Wrapped(np_, v[0]), _Wrapped(np_, v[1])]),
                 lambda np_: np_.asarray((_Wrapped(np_, 1.5), 2.0), np_.float16),
                 lambda np_: np_.array(_Wrapped(np_, v), dtype=np_.int32)):
        ours, theirs = make(pnp), make(jnp)
        assert (ours.dtype, ours.shape, ours.weak_type) == \
            (theirs.dtype, theirs.shape, theirs.weak_type)
        np.testing.assert_array_equal(ours, theirs)
    jitted = plait.jit(lambda x: pnp.asarray(_Wrapped(pnp, x)) * 2)(v)
    np.testing.assert_array_equal(jitted, v * 2)


class _Variable:
    """A pytree of one leaf that converts itself with ``__jax_array__`` (as flax's
    ``nnx.Param``; JAX takes such objects in its numpy functions only when they are
    pytrees)."""

    def __init__(self, np_: Any, value: Any) -> None:
        self.np_, self.value = np_, value

    def __jax_array__(self) -> Any:
        return self.np_.asarray(self.value)


for _lib, _np in ((plait, pnp), (jax, jnp)):
    _lib.tree_util.register_pytree_node(
        _Variable, lambda v: ((v.value,), v.np_),
        lambda np_, leaves: _Variable(np_, leaves[0]))


def test_numpy_functions_take_jax_array_pytrees_as_jax() -> None:
    # (flax's nnx.Param passed to jnp.dot; under jit, its value is a tracer)
    v = np.arange(6, dtype=np.float32).reshape(2, 3)

    def run(lib: Any, np_: Any) -> list[Any]:
        w = np.ones((3, 2), np.float32)
        return [np_.dot(v, _Variable(np_, w)), np_.add(_Variable(np_, v), 1),
                np_.where(np_.greater(_Variable(np_, v), 2), _Variable(np_, v), 0.0),
                lib.jit(lambda x: np_.dot(_Variable(np_, x), w) + np_.sum(_Variable(np_, x)))(v),
                lib.grad(lambda x: np_.sum(np_.sin(_Variable(np_, x))))(v)]
    for o, t in zip(run(plait, pnp), run(jax, jnp)):
        assert o.dtype == t.dtype
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)


_M = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) % 7
SIGNATURE_CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("argmax out=None", lambda L: L.argmax(_M, 1, None, True)),
    ("argmin out=None", lambda L: L.argmin(_M, axis=None, out=None)),
    ("cumsum out=None", lambda L: L.cumsum(_M, 2, None, None)),
    ("cumprod out=None", lambda L: L.cumprod(_M, axis=0, out=None)),
    ("outer out=None", lambda L: L.outer(_M[0], _M[1, 0], None)),
    ("stack out=None dtype", lambda L: L.stack([_M, _M], 1, None, np.int32)),
    ("round out=None", lambda L: L.round(_M / 3, 1, None)),
    ("around", lambda L: L.around(_M / 3, decimals=2)),
    ("ravel F", lambda L: L.ravel(_M, order="F")),
    ("ravel C", lambda L: L.ravel(_M, "C")),
    # (Of Arrays: JAX's reshape of a NumPy array returns a NumPy array.)
    ("reshape F", lambda L: L.reshape(L.asarray(_M), (4, -1), order="F")),
    ("reshape F of 1-d", lambda L: L.reshape(L.asarray(_M.ravel()), (3, 8), "F")),
    ("reshape F to 1-d", lambda L: L.reshape(L.asarray(_M), -1, order="F")),
    ("method reshape F", lambda L: L.asarray(_M).reshape((6, 4), order="F")),
    ("JAX's keyword names", lambda L: (
        L.flip(m=_M, axis=1), L.split(ary=_M, indices_or_sections=2), L.tile(A=_M[0], reps=2),
        L.hstack(tup=[_M, _M]), L.vstack(tup=[_M[0]]), L.round(a=_M / 3), L.around(a=_M / 3),
        L.empty_like(prototype=_M).shape, L.array(object=[1, 2]), L.ndim(a=_M),
        L.shape(a=_M))),
    ("sort kind=None order=None", lambda L: (L.sort(_M, kind=None, order=None),
                                             L.argsort(_M, 0, kind=None, order=None))),
    ("ravel_multi_index dtype", lambda L: (
        L.ravel_multi_index((L.asarray([1]), L.asarray([2])), (3, 4), dtype=L.int16),
        L.ravel_multi_index((L.asarray([1], L.int8), L.asarray([2], L.int8)), (3, 4)),
        L.ravel_multi_index((1, 2), (3, 4)))),
    ("item of size 1", lambda L: L.asarray(_M[:1, :1, 1:2]).item()),
    ("item flat index", lambda L: L.asarray(_M).item(7)),
    ("item per axis", lambda L: L.asarray(_M).item(1, 2, 3)),
    ("size axis", lambda L: (L.size(_M, 1), L.size(_M, (0, -1)), L.size(_M))),
    ("broadcast_to array=", lambda L: L.broadcast_to(array=_M[0, 0], shape=(2, 4)))]


@pytest.mark.parametrize("what, make", SIGNATURE_CASES, ids=[c[0] for c in SIGNATURE_CASES])
def test_jax_signatures_accepted(what: str, make: Callable[[Any], Any]) -> None:
    """Arguments JAX's functions take (``out=None``, ``order=``, ``axis=``) by position
    and keyword, with JAX's results."""
    ours, theirs = make(pnp), make(jnp)
    assert repr(ours) == repr(theirs)


def test_reshape_f_composes_as_jax() -> None:
    """A column-major reshape under ``jit``, ``grad`` and ``vmap``, against JAX."""
    def f(L: Any, x: Any) -> Any:
        return (L.reshape(x, (-1, 4), order="F") * L.arange(4.0)).sum()

    pairs: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = [
        (plait.jit(partial(f, pnp)), jax.jit(partial(f, jnp))),
        (plait.grad(partial(f, pnp)), jax.grad(partial(f, jnp))),
        (plait.vmap(partial(f, pnp)), jax.vmap(partial(f, jnp)))]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours(_M), theirs(_M), rtol=1e-6)


@pytest.mark.parametrize("make, error", [
    (lambda L: L.reshape(L.asarray(_M), (4, 6), order="A"), NotImplementedError),
    (lambda L: L.reshape(L.asarray(_M), (4, 6), order="X"), ValueError),
    (lambda L: L.asarray(_M).item(), ValueError),
    (lambda L: L.sort(_M, kind="stable"), TypeError),
    (lambda L: L.argsort(_M, order="x"), TypeError),
    (lambda L: L.ravel_multi_index((L.asarray([1], L.int8),) * 2, (30, 40)), ValueError),
    (lambda L: L.ravel_multi_index((1, 2), (3, 4), dtype=L.float32), ValueError),
    (lambda L: L.asarray(_M).item(24), IndexError)])
def test_reshape_and_item_errors_as_jax(make: Callable[[Any], Any], error: type) -> None:
    with pytest.raises(error):
        make(jnp)
    with pytest.raises(error):
        make(pnp)


def test_item_of_a_key_array_is_refused() -> None:
    with pytest.raises(TypeError, match="expected an array of numbers, but got a key array"):
        plait.random.key(0).item()


@pytest.mark.parametrize("make", [lambda L: L.argmax(_M, out=_M), lambda L: L.cumsum(_M, out=_M),
                                  lambda L: L.outer(_M, _M, out=_M),
                                  lambda L: L.round(_M, out=_M),
                                  lambda L: L.stack([_M], out=_M)])
def test_out_arrays_are_refused_as_jax(make: Callable[[Any], Any]) -> None:
    with pytest.raises(NotImplementedError, match="out"):
        make(pnp)
    with pytest.raises(Exception):  # noqa: B017  (JAX's types vary: its jit hashes out)
        make(jnp)


_MATMUL_SHAPES = [(1, 1), (1, 1, 1), (2, 1, 1), (1, 2, 1, 1), (1,), (2, 1, 1, 1)]


@pytest.mark.parametrize("sa", _MATMUL_SHAPES)
@pytest.mark.parametrize("sb", _MATMUL_SHAPES)
def test_matmul_broadcasts_size_one_batch_dimensions_as_jax(sa: tuple[int, ...],
                                                           sb: tuple[int, ...]) -> None:
    """A size-1 batch dimension against no batch dimension at all (dynamax's
    ``H @ covs @ H.T``) was taken for one against a larger one."""
    a = np.arange(1.0, 1.0 + np.prod(sa), dtype=np.float32).reshape(sa)
    b = np.arange(2.0, 2.0 + np.prod(sb), dtype=np.float32).reshape(sb)
    try:
        theirs = np.asarray(jax.jit(jnp.matmul)(a, b))
    except Exception:  # noqa: BLE001  (JAX refuses: so must plait)
        with pytest.raises(Exception):  # noqa: B017
            plait.jit(pnp.matmul)(a, b)
        return
    np.testing.assert_allclose(np.asarray(plait.jit(pnp.matmul)(a, b)), theirs)
    np.testing.assert_allclose(np.asarray(pnp.asarray(a) @ b), theirs)

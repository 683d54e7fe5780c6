"""vectorize, apply_along_axis, apply_over_axes, piecewise, frompyfunc and fromfunction
(``functional.py``) against jax.numpy 0.10.2."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp

COVERED = {"vectorize", "apply_along_axis", "apply_over_axes", "piecewise", "frompyfunc",
           "ufunc", "fromfunction"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

RNG = np.random.default_rng(5)
X = RNG.normal(size=(2, 3)).astype(np.float32)
M = RNG.normal(size=(4, 2, 3)).astype(np.float32)
INTS = RNG.integers(-5, 6, (3, 4)).astype(np.int32)


def _same(ours: Any, theirs: Any, what: str, rtol: float = 1e-5) -> None:
    if isinstance(theirs, tuple | list):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), what
        for o, t in zip(ours, theirs):
            _same(o, t, what, rtol)
        return
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), \
        f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
    assert getattr(ours, "weak_type", False) == getattr(theirs, "weak_type", False), what
    np.testing.assert_allclose(o, t, rtol=rtol, atol=rtol, err_msg=what)


def _both(make: Callable[[Any], Any], *args: Any, what: str = "", jit: bool = True,
          **kwargs: Any) -> None:
    """``make(L)(*args, **kwargs)`` for L = plait.numpy and jax.numpy, eagerly and under jit."""
    theirs = make(jnp)(*args, **kwargs)
    _same(make(pnp)(*args, **kwargs), theirs, what)
    if jit:
        _same(plait.jit(lambda *a: make(pnp)(*a, **kwargs))(*args), theirs, what + " jit")


# ---------------------------------------------------------------------------------------------
# vectorize

def _matvec(L: Any) -> Any:
    return L.vectorize(lambda m, v: m @ v, signature="(m,n),(n)->(m)")


def _stats(L: Any) -> Any:
    return L.vectorize(lambda v: (v.sum(), v.max()), signature="(n)->(),()")


VECTORIZE: list[tuple[str, Callable[[Any], Any], tuple[Any, ...]]] = [
    ("elementwise", lambda L: L.vectorize(lambda a, b: a * 2 + b), (X, X[0])),
    ("unit dims", lambda L: L.vectorize(lambda a, b: a - b), (X[:, None, :1], X[0])),
    ("ints", lambda L: L.vectorize(lambda a: a // 2), (INTS,)),
    ("scalar", lambda L: L.vectorize(lambda a: a * 2), (np.float32(3),)),
    ("matvec", _matvec, (M, X[0])),
    ("matvec broadcast", _matvec, (M[:, None], np.stack([X[0], X[1], X[0]]))),
    ("dot", lambda L: L.vectorize(lambda a, b: (a * b).sum(), signature="(n),(n)->()"),
     (M, X[1])),
    ("two outputs", _stats, (M,)),
    ("outer", lambda L: L.vectorize(lambda a, b: L.outer(a, b), signature="(n),(k)->(n,k)"),
     (X, M[:, :1, :2])),
    ("no core", lambda L: L.vectorize(lambda a: a.sum(), signature="()->()"), (X,)),
    ("empty", lambda L: L.vectorize(lambda a: a * 3), (np.zeros((0, 2), np.float32),)),
    ("empty core", lambda L: L.vectorize(lambda a: a.sum(), signature="(n)->()"),
     (np.zeros((3, 0), np.float32),)),
    ("excluded position", lambda L: L.vectorize(lambda a, n, b: a * n + b, excluded={1}),
     (X, 3, X[1])),
    ("none", lambda L: L.vectorize(lambda a, b: a if b is None else a + b), (X, None))]


@pytest.mark.parametrize("what, make, args", VECTORIZE, ids=[c[0] for c in VECTORIZE])
def test_vectorize_matches_jax(what: str, make: Callable[[Any], Any],
                               args: tuple[Any, ...]) -> None:
    jit = all(a is not None and not isinstance(a, int) for a in args)
    _both(make, *args, what=what, jit=jit)


def test_vectorize_keywords_grad_vmap() -> None:
    def scaled(L: Any) -> Any:
        return L.vectorize(lambda a, *, scale, shift: a * scale + shift,
                           excluded={"scale", "shift"})
    _both(scaled, X, what="excluded keywords", scale=2.0, shift=np.float32(1))
    # (JAX drops keyword arguments that are not excluded; plait passes them on.)
    ours = pnp.vectorize(lambda a, b=1.0: a + b)(X, b=np.float32(5))
    _same(ours, X + np.float32(5), "keyword passed on")

    def loss(L: Any) -> Any:
        f = L.vectorize(lambda m, v: L.tanh(m @ v), signature="(m,n),(n)->(m)")
        return lambda m, v: (f(m, v) ** 2).sum()

    for argnums in (0, 1):
        _same(plait.grad(loss(pnp), argnums=argnums)(M, X[0]),
              jax.grad(loss(jnp), argnums=argnums)(M, X[0]), f"grad {argnums}")
    _same(plait.vmap(_matvec(pnp), (None, 0))(M, X), jax.vmap(_matvec(jnp), (None, 0))(M, X),
          "vmap")
    f = pnp.vectorize(lambda a: a)
    assert f.__name__ == "<lambda>"


def test_vectorize_errors() -> None:
    def dot(a: Any, b: Any) -> Any:
        return (a * b).sum()

    bad: list[tuple[Callable[[Any], Any], tuple[Any, ...], type[Exception], str]] = [
        (lambda L: L.vectorize(dot, signature="(n),(n)->()"), (X, M[:, :, :2]), ValueError,
         "inconsistent size for core dimension 'n': 2 vs 3 on vectorized function with "
         "excluded=frozenset()"),
        (lambda L: L.vectorize(dot, signature="(n),(n)->()"), (X,), TypeError,
         "wrong number of positional arguments: expected 2, got 1"),
        (lambda L: L.vectorize(lambda a: a, signature="(n)->()"), (X,), ValueError,
         r"output shape \(3,\) does not match core dimensions \(\)"),
        (lambda L: L.vectorize(lambda a: (a, a), signature="(n)->(n)"), (X,), TypeError,
         "wrong number of output arguments: expected 1, got 2"),
        (lambda L: L.vectorize(lambda a: a, signature="(n)->(n),(n)"), (X,), TypeError,
         "output must be a tuple when multiple outputs are expected"),
        (lambda L: L.vectorize(lambda a: a, signature="(n)->()x"), (X,), ValueError,
         r"not a valid gufunc signature: \(n\)->\(\)x"),
        (lambda L: L.vectorize(lambda a: a.sum(), signature="(n)->()"), (np.float32(1),),
         ValueError, "does not have enough dimensions for all core dimensions"),
        (lambda L: L.vectorize(dot), (np.ones((2, 3)), np.ones((4, 3))), ValueError,
         "Incompatible shapes for broadcasting"),
        (lambda L: L.vectorize(lambda a, b: a, signature="(n),()->()"), (None, X), ValueError,
         "Cannot pass None at locations"),
        (lambda L: L.vectorize(lambda a: a, excluded={1.5}), (X,), TypeError,
         "can only exclude integer or string arguments"),
        (lambda L: L.vectorize(lambda a: a, excluded={-1}), (X,), ValueError,
         "contains negative numbers")]
    for make, args, exc, msg in bad:
        with pytest.raises(exc):
            make(jnp)(*args)
        with pytest.raises(exc, match=msg):
            make(pnp)(*args)


# ---------------------------------------------------------------------------------------------
# apply_along_axis, apply_over_axes

ALONG: list[tuple[Callable[[Any], Any], int, Any, tuple[Any, ...]]] = [
    (lambda L: L.sum, 0, M, ()), (lambda L: L.sum, -1, M, ()), (lambda L: L.sum, 1, X, ()),
    (lambda L: lambda v: v * 2, 1, M, ()),
    (lambda L: lambda v: L.outer(v, v), 1, M, ()),
    (lambda L: lambda v, k: L.sort(v)[k], 0, INTS, (1,)),
    (lambda L: lambda v: v.sum(), 0, X[0], ()),
    (lambda L: L.cumsum, 2, INTS.reshape(3, 2, 2), ())]


@pytest.mark.parametrize("make, axis, arr, extra", ALONG, ids=range(len(ALONG)))
def test_apply_along_axis_matches_jax(make: Callable[[Any], Any], axis: int, arr: Any,
                                      extra: tuple[Any, ...]) -> None:
    _both(lambda L: lambda a: L.apply_along_axis(make(L), axis, a, *extra), arr,
          what=f"axis {axis}")


def test_apply_along_axis_grad_kwargs_and_errors() -> None:
    def loss(L: Any) -> Any:
        return lambda a: L.apply_along_axis(lambda v: L.sin(v) @ v, 1, a).sum()

    _same(plait.grad(loss(pnp))(M), jax.grad(loss(jnp))(M), "grad")
    _both(lambda L: lambda a: L.apply_along_axis(lambda v, *, p: v ** p, 0, a, p=2), X)
    with pytest.raises(ValueError):
        jnp.apply_along_axis(jnp.sum, 3, X)
    with pytest.raises(ValueError, match="out of bounds"):
        pnp.apply_along_axis(pnp.sum, 3, X)
    with pytest.raises(TypeError):
        pnp.apply_along_axis(pnp.sum, 0, [1.0, 2.0])


@pytest.mark.parametrize("axes", [[0], [0, 2], [2, 1, 0], []], ids=str)
def test_apply_over_axes_matches_jax(axes: list[int]) -> None:
    _both(lambda L: lambda a: L.apply_over_axes(L.sum, a, axes), M, what=str(axes))
    _both(lambda L: lambda a: L.apply_over_axes(
        lambda x, ax: L.max(x, axis=ax, keepdims=True), a, axes), M.astype(np.int32),
          what=str(axes))


def test_apply_over_axes_errors() -> None:
    with pytest.raises(ValueError):
        jnp.apply_over_axes(lambda x, ax: x.sum(), M, [0])
    with pytest.raises(ValueError, match="function is not returning an array of the correct "
                                         "shape"):
        pnp.apply_over_axes(lambda x, ax: x.sum(), M, [0])


# ---------------------------------------------------------------------------------------------
# piecewise

XS = np.linspace(-2, 2, 9).astype(np.float32)
PIECEWISE: list[tuple[Any, Callable[[Any], Any], Callable[[Any], Any]]] = [
    (XS, lambda L: lambda x: [x < 0, x >= 0], lambda L: [lambda v: -v, lambda v: v ** 2]),
    (XS, lambda L: lambda x: [x < -1, x > 1], lambda L: [lambda v: v * 2, 7, lambda v: -v]),
    (XS, lambda L: lambda x: [x < 0], lambda L: [0.5]),
    (XS, lambda L: lambda x: [x < 0, x < 1], lambda L: [1, 2]),
    (INTS, lambda L: lambda x: [x < 0], lambda L: [lambda v: v * 2.5, 7.7]),
    (XS.reshape(3, 3), lambda L: lambda x: [x > 0.5], lambda L: [L.sin, L.cos]),
    (np.float32(1.5), lambda L: lambda x: [x > 1], lambda L: [lambda v: v * 2, 1]),
    (np.zeros(0, np.float32), lambda L: lambda x: [x > 1], lambda L: [lambda v: v * 2])]


@pytest.mark.parametrize("x, conds, funcs", PIECEWISE, ids=range(len(PIECEWISE)))
def test_piecewise_matches_jax(x: Any, conds: Callable[[Any], Any],
                               funcs: Callable[[Any], Any]) -> None:
    _both(lambda L: lambda v: L.piecewise(v, conds(L)(v), funcs(L)), x)


def test_piecewise_args_grad_and_errors() -> None:
    def f(L: Any) -> Any:
        return lambda v: L.piecewise(v, [v < 0, v > 1],
                                     [lambda u, k: u * k, lambda u, k: L.exp(u) + k,
                                      lambda u, k: u ** 3], 3.0)

    _both(f, XS)
    _same(plait.grad(lambda v: f(pnp)(v).sum())(XS), jax.grad(lambda v: f(jnp)(v).sum())(XS),
          "grad")
    _same(plait.vmap(f(pnp))(XS.reshape(3, 3)), jax.vmap(f(jnp))(XS.reshape(3, 3)), "vmap")
    with pytest.raises(ValueError):
        jnp.piecewise(XS, [XS < 0], [1, 2, 3])
    with pytest.raises(ValueError, match=r"with 1 condition\(s\), either 1 or 2 functions are "
                                         r"expected; got 3"):
        pnp.piecewise(XS, [XS < 0], [1, 2, 3])
    with pytest.raises(TypeError):
        pnp.piecewise([1.0, 2.0], [True, False], [1, 2])


# ---------------------------------------------------------------------------------------------
# frompyfunc

def _mul_add(a: Any, b: Any) -> Any:
    return a * b + 1


def _ufunc(L: Any) -> Any:
    return L.frompyfunc(_mul_add, 2, 1, identity=0)


UFUNC: list[tuple[str, Callable[[Any], Any], tuple[Any, ...]]] = [
    ("call", lambda u: u, (X, X[0])),
    ("call ints", lambda u: u, (INTS, np.int32(2))),
    ("reduce", lambda u: u.reduce, (M,)),
    ("reduce axis", lambda u: lambda a: u.reduce(a, axis=-1, keepdims=True), (M,)),
    ("reduce none", lambda u: lambda a: u.reduce(a, axis=None), (X,)),
    ("reduce none keep", lambda u: lambda a: u.reduce(a, axis=None, keepdims=True), (X,)),
    ("reduce initial", lambda u: lambda a: u.reduce(a, axis=1, initial=2.0), (X,)),
    ("reduce where", lambda u: lambda a, w: u.reduce(a, axis=0, where=w), (X, X > 0)),
    ("reduce empty", lambda u: lambda a: u.reduce(a, axis=0), (np.zeros((0, 2), np.float32),)),
    ("reduce dtype", lambda u: lambda a: u.reduce(a, axis=1, dtype=np.float32), (INTS,)),
    ("accumulate", lambda u: u.accumulate, (M,)),
    ("accumulate axis", lambda u: lambda a: u.accumulate(a, axis=2), (M,)),
    ("accumulate ints", lambda u: lambda a: u.accumulate(a, axis=1), (INTS,)),
    ("accumulate empty", lambda u: u.accumulate, (np.zeros((0, 2), np.float32),)),
    ("outer", lambda u: u.outer, (X, INTS[0])),
    ("at", lambda u: lambda a, b: u.at(a, np.array([0, 0, 2]), b, inplace=False),
     (X[0], np.float32(3))),
    ("at 2d", lambda u: lambda a, b: u.at(a, (np.array([0, 1, 0]), np.array([[2], [2]])), b,
                                          inplace=False), (X, X[0])),
    ("at scalar index", lambda u: lambda a: u.at(a, 1, 2.0, inplace=False), (X[0],)),
    ("reduceat", lambda u: lambda a: u.reduceat(a, np.array([0, 2, 1, 3])), (INTS.T,)),
    ("reduceat axis", lambda u: lambda a: u.reduceat(a, np.array([0, 1]), axis=1), (X,))]


@pytest.mark.parametrize("what, method, args", UFUNC, ids=[c[0] for c in UFUNC])
def test_frompyfunc_matches_jax(what: str, method: Callable[[Any], Any],
                                args: tuple[Any, ...]) -> None:
    _both(lambda L: method(_ufunc(L)), *args, what=what, jit=what.startswith(("call", "red")))


def test_ufunc_properties_and_errors() -> None:
    u, uj = _ufunc(pnp), _ufunc(jnp)
    assert (u.nin, u.nout, u.nargs, u.identity, u.__name__) == (
        uj.nin, uj.nout, uj.nargs, uj.identity, uj.__name__)
    assert isinstance(u, pnp.ufunc) and u == _ufunc(pnp) and hash(u) == hash(_ufunc(pnp))
    assert repr(u) == repr(uj)
    pair = pnp.frompyfunc(lambda a: (a + 1, a * 2), 1, 2)
    _same(pair(X), jnp.frompyfunc(lambda a: (a + 1, a * 2), 1, 2)(X), "two outputs")
    no_identity = pnp.frompyfunc(_mul_add, 2, 1)
    cases: list[tuple[Callable[[Any], Any], type[Exception], str]] = [
        (lambda L: L.frompyfunc(lambda a: a, 1, 1).reduce(X), ValueError,
         "reduce only supported for binary ufuncs"),
        (lambda L: L.frompyfunc(lambda a, b: (a, b), 2, 2).outer(X, X), ValueError,
         "outer only supported for functions returning a single value"),
        (lambda L: L.frompyfunc(_mul_add, 2, 1).reduce(X, where=X > 0), ValueError,
         "does not have an identity, so to use a where mask one has to specify 'initial'"),
        (lambda L: _ufunc(L).reduce(X, where=X), ValueError, "where argument must have "
                                                               "dtype=bool"),
        (lambda L: L.frompyfunc(_mul_add, 2, 1).reduce(np.zeros((0,), np.float32)),
         ValueError, "zero-size array to reduction operation"),
        (lambda L: _ufunc(L).reduce(X, axis=(0, 1)), NotImplementedError, "tuple of axes"),
        (lambda L: _ufunc(L).accumulate(X, axis=None), ValueError,
         "accumulate does not allow multiple axes"),
        (lambda L: _ufunc(L).at(X, 0, 1.0), NotImplementedError, "cannot operate inplace"),
        (lambda L: _ufunc(L)(X, X, out=X), NotImplementedError, "out argument"),
        (lambda L: _ufunc(L)(X, X, where=X > 0), NotImplementedError, "where argument"),
        (lambda L: _ufunc(L).reduceat(X, np.ones((2, 2), np.int32)), ValueError,
         "indices must be one-dimensional"),
        (lambda L: _ufunc(L)([1.0], X), TypeError, "")]
    for make, exc, msg in cases:
        with pytest.raises(exc):
            make(jnp)
        with pytest.raises(exc, match=msg or None):
            make(pnp)
    assert no_identity.identity is None


# ---------------------------------------------------------------------------------------------
# NumPy's built-in ufuncs

BUILTIN = ["add", "subtract", "multiply", "negative", "maximum", "minimum", "bitwise_and",
           "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor", "logaddexp",
           "logaddexp2"]
BITS = RNG.integers(0, 64, (3, 4)).astype(np.uint8)
MASK = np.array([True, False, True])

BUILTIN_METHODS: list[tuple[str, Callable[[Any], Any], tuple[Any, ...]]] = [
    ("add.reduce", lambda L: L.add.reduce, (M,)),
    ("add.reduce axes", lambda L: lambda a: L.add.reduce(a, axis=(0, 2), keepdims=True), (M,)),
    ("add.reduce ints", lambda L: lambda a: L.add.reduce(a, axis=None), (INTS.astype(np.int8),)),
    ("add.reduce bools", lambda L: L.add.reduce, (INTS > 0,)),
    ("add.reduce where", lambda L: lambda a: L.add.reduce(a, axis=1, where=MASK, initial=1.0),
     (X,)),
    ("multiply.reduce", lambda L: lambda a: L.multiply.reduce(a, axis=1, dtype=np.float32),
     (INTS,)),
    ("maximum.reduce", lambda L: lambda a: L.maximum.reduce(a, axis=None, keepdims=True), (M,)),
    ("minimum.reduce where", lambda L: lambda a: L.minimum.reduce(a, axis=1, where=MASK,
                                                                  initial=0.0), (X,)),
    ("bitwise_and.reduce", lambda L: lambda a: L.bitwise_and.reduce(a, axis=1), (BITS,)),
    ("bitwise_or.reduce", lambda L: lambda a: L.bitwise_or.reduce(a, axis=None, initial=128),
     (BITS,)),
    ("bitwise_xor.reduce", lambda L: lambda a: L.bitwise_xor.reduce(a, keepdims=True), (INTS,)),
    ("bitwise_and.reduce bools", lambda L: L.bitwise_and.reduce, (INTS > 0,)),
    ("bitwise_xor.reduce where", lambda L: lambda a: L.bitwise_xor.reduce(
        a, axis=1, where=np.array([True, False, True, True])), (INTS,)),
    ("logical_and.reduce", lambda L: lambda a: L.logical_and.reduce(a, axis=1), (INTS,)),
    ("logical_or.reduce", lambda L: L.logical_or.reduce, (X > 0.5,)),
    ("logical_xor.reduce", lambda L: lambda a: L.logical_xor.reduce(a, axis=None), (INTS,)),
    ("logaddexp.reduce", lambda L: L.logaddexp.reduce, (M,)),
    ("logaddexp.reduce axes", lambda L: lambda a: L.logaddexp.reduce(
        a, axis=(1, 2), keepdims=True, initial=0.5), (M * 30,)),
    ("logaddexp.reduce where", lambda L: lambda a: L.logaddexp.reduce(a, axis=1, where=MASK),
     (X,)),
    ("logaddexp.reduce ints", lambda L: lambda a: L.logaddexp.reduce(a, axis=None), (INTS,)),
    ("logaddexp.reduce -inf", lambda L: L.logaddexp.reduce,
     (np.full((3, 2), -np.inf, np.float32),)),
    ("logaddexp2.reduce", lambda L: lambda a: L.logaddexp2.reduce(a, axis=1, initial=1.0),
     (X,)),
    ("add.accumulate", lambda L: lambda a: L.add.accumulate(a, axis=1, dtype=np.float32),
     (INTS,)),
    ("multiply.accumulate", lambda L: L.multiply.accumulate, (M,)),
    ("maximum.accumulate", lambda L: lambda a: L.maximum.accumulate(a, axis=1), (INTS,)),
    ("logaddexp.accumulate", lambda L: lambda a: L.logaddexp.accumulate(a, axis=2), (M,)),
    ("logical_or.accumulate", lambda L: L.logical_or.accumulate, (INTS > 2,)),
    ("add.at", lambda L: lambda a: L.add.at(a, np.array([0, 0, 2]), 1.0, inplace=False),
     (X[0],)),
    ("add.at bools", lambda L: lambda a: L.add.at(a, np.array([0, 0]), 1, inplace=False),
     (np.zeros(3, bool),)),
    ("multiply.at", lambda L: lambda a: L.multiply.at(a, (np.array([0, 1, 0]), 2), 3,
                                                      inplace=False), (INTS,)),
    ("multiply.at bools", lambda L: lambda a: L.multiply.at(a, np.array([1, 1]), False,
                                                            inplace=False), (INTS[0] > 0,)),
    ("subtract.at", lambda L: lambda a, b: L.subtract.at(a, np.array([1, 1, 0]), b,
                                                         inplace=False), (X[0], X[1])),
    ("negative.at", lambda L: lambda a: L.negative.at(a, np.array([1, 2]), inplace=False),
     (INTS[0],)),
    ("maximum.at", lambda L: lambda a: L.maximum.at(a, np.array([0, 0]), 0.5, inplace=False),
     (X[0],)),
    ("multiply.outer", lambda L: L.multiply.outer, (INTS[0], X[0])),
    ("logaddexp.outer", lambda L: L.logaddexp.outer, (X, X[0])),
    ("add.reduceat", lambda L: lambda a: L.add.reduceat(a, np.array([0, 2, 1])), (INTS.T,)),
    ("call", lambda L: L.logaddexp2, (X, X[0])),
    ("call python scalars", lambda L: L.add, (1, 2))]


@pytest.mark.parametrize("what, method, args", BUILTIN_METHODS,
                         ids=[c[0] for c in BUILTIN_METHODS])
def test_builtin_ufunc_methods_match_jax(what: str, method: Callable[[Any], Any],
                                         args: tuple[Any, ...]) -> None:
    _both(method, *args, what=what)


def test_builtin_ufuncs_are_jax_s() -> None:
    assert sorted(BUILTIN) == [n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc)]
    assert sorted(BUILTIN) == [n for n in dir(pnp) if isinstance(getattr(pnp, n), pnp.ufunc)]
    for name in BUILTIN:
        u, uj = getattr(pnp, name), getattr(jnp, name)
        assert isinstance(u, pnp.ufunc), name
        assert (u.nin, u.nout, u.nargs, u.__name__, repr(u)) == (
            uj.nin, uj.nout, uj.nargs, uj.__name__, repr(uj)), name
        assert u.identity == uj.identity or (np.isneginf(u.identity)
                                             and np.isneginf(uj.identity)), name


def test_builtin_ufunc_gradients_match_jax() -> None:
    def loss(L: Any) -> Any:
        return lambda a: (L.logaddexp.reduce(a, axis=1).sum() + L.add.reduce(a ** 2)
                          .sum() + L.multiply.at(a, (0, np.array([1, 1])), 2.0,
                                                 inplace=False).sum())
    _same(plait.grad(loss(pnp))(X), jax.grad(loss(jnp))(X), "grad")
    _same(plait.vmap(pnp.logaddexp.reduce)(M), jax.vmap(jnp.logaddexp.reduce)(M), "vmap")


def test_builtin_ufunc_errors() -> None:
    cases: list[tuple[Callable[[Any], Any], type[Exception], str]] = [
        (lambda L: L.bitwise_or.reduce(X), ValueError,
         r"bitwise_or.reduce: integer argument required; got dtype=float32"),
        (lambda L: L.negative.reduce(X), ValueError, "reduce only supported for binary ufuncs"),
        (lambda L: L.minimum.reduce(X, where=X > 0), ValueError,
         "reduction operation 'minimum' does not have an identity"),
        (lambda L: L.maximum.reduce(np.zeros((0, 2))), ValueError,
         "zero-size array to reduction operation max which has no identity"),
        (lambda L: L.add.at(X, 0, 1.0), NotImplementedError,
         r"pass inplace=False and capture the result; e.g. arr = jnp.add.at"),
        (lambda L: L.add.reduce([1.0, 2.0]), TypeError, "add.reduce"),
        (lambda L: L.add(X, X, out=X), NotImplementedError, "out argument"),
        (lambda L: L.logaddexp.accumulate(X, out=X), NotImplementedError, "out argument")]
    for make, exc, msg in cases:
        with pytest.raises(exc):
            make(jnp)
        with pytest.raises(exc, match=msg):
            make(pnp)


# ---------------------------------------------------------------------------------------------
# fromfunction

FROMFUNCTION: list[tuple[Callable[[Any], Any], Any, dict[str, Any]]] = [
    (lambda L: lambda i, j: i * 10 + j, (2, 3), {}),
    (lambda L: lambda i, j: i * 10 + j, (2, 3), {"dtype": int}),
    (lambda L: lambda i: L.sin(i), 4, {}),
    (lambda L: lambda i, j, k: (i == j) | (k > 0), (2, 2, 3), {"dtype": np.int32}),
    (lambda L: lambda i, j: i + j, (0, 3), {}),
    (lambda L: lambda i: (i, i * 2), (3,), {"dtype": np.float16})]


@pytest.mark.parametrize("make, shape, kwargs", FROMFUNCTION, ids=range(len(FROMFUNCTION)))
def test_fromfunction_matches_jax(make: Callable[[Any], Any], shape: Any,
                                  kwargs: dict[str, Any]) -> None:
    theirs = jnp.fromfunction(make(jnp), shape, **kwargs)
    _same(pnp.fromfunction(make(pnp), shape, **kwargs), theirs, f"{shape} {kwargs}")
    _same(plait.jit(lambda: pnp.fromfunction(make(pnp), shape, **kwargs))(), theirs, "jit")


def test_fromfunction_errors() -> None:
    with pytest.raises(TypeError):
        jnp.fromfunction(lambda i: i, (2.5,))
    with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values of "
                                        "integer type"):
        pnp.fromfunction(lambda i: i, (2.5,))
    # Keyword arguments are mapped along their first axis (as vmap maps them): a scalar
    # one is an error in both.
    with pytest.raises(ValueError):
        jnp.fromfunction(lambda i, s: i * s, (2,), s=2.0)
    with pytest.raises(ValueError):
        pnp.fromfunction(lambda i, s: i * s, (2,), s=2.0)

"""convolve, correlate and the window functions (``signal.py``) against jax.numpy 0.10.2."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.errors import ConcretizationTypeError

COVERED = {"convolve", "correlate", "bartlett", "blackman", "hamming", "hanning", "kaiser", "i0"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

RNG = np.random.default_rng(7)


def _same(ours: Any, theirs: Any, what: str, rtol: float = 1e-5) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), \
        f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
    assert getattr(ours, "weak_type", False) == getattr(theirs, "weak_type", False), what
    np.testing.assert_allclose(o, t, rtol=rtol, atol=rtol, err_msg=what)


def _vec(n: int, dtype: Any) -> np.ndarray:
    if np.dtype(dtype) == np.bool_:
        return RNG.random(n) > 0.5
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.normal(size=n) + 1j * RNG.normal(size=n)).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-4, 5, n).astype(dtype)
    return RNG.normal(size=n).astype(dtype)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_conv_matches_jax(name: str, mode: str, dtype: Any) -> None:
    shapes = ((5, 3), (3, 5), (4, 4), (1, 6)) if dtype == np.float32 else ((5, 3), (2, 4))
    for n, m in shapes:
        a, v = _vec(n, dtype), _vec(m, dtype)
        theirs = getattr(jnp, name)(a, v, mode)
        _same(getattr(pnp, name)(a, v, mode), theirs, f"{name} {mode} {n},{m}")
    if dtype in (np.float32, np.complex64):
        ours = plait.jit(lambda x, y: getattr(pnp, name)(x, y, mode=mode))(a, v)
        _same(ours, getattr(jnp, name)(a, v, mode=mode), f"{name} {mode} jit")


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_conv_mixed_dtypes_and_preferred_element_type(name: str) -> None:
    f, i = _vec(4, np.float32), _vec(3, np.int32)
    cases: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((f, i), {}), ((i, i.astype(np.int8)), {}), ((f.astype(np.float16), i.astype(np.int8)), {}),
        ((i, i), {"preferred_element_type": np.int32}),
        ((i, i), {"preferred_element_type": np.float32}),
        ((f.astype(np.float16), f.astype(np.float16)), {"preferred_element_type": np.float32}),
        ((_vec(4, np.bool_), _vec(3, np.bool_)), {"preferred_element_type": np.int32}),
        ((f, _vec(2, np.complex64)), {"mode": "full"}),
        ((f, i), {"precision": "highest"}), ((f, i), {"precision": ("high", "default")}),
        ((f, i), {"precision": jax.lax.Precision.HIGHEST})]
    for args, kwargs in cases:
        what = f"{name} {[a.dtype for a in args]} {kwargs}"
        _same(getattr(pnp, name)(*args, **kwargs), getattr(jnp, name)(*args, **kwargs), what,
              1e-2)


@pytest.mark.parametrize("name, mode", [("convolve", "full"), ("convolve", "valid"),
                                        ("correlate", "same"), ("correlate", "full")])
def test_conv_grad_and_vmap(name: str, mode: str) -> None:
    a, v = _vec(5, np.float32), _vec(3, np.float32)
    w = _vec(jnp.convolve(a, v, mode).shape[0], np.float32)

    def loss(L: Any) -> Any:
        return lambda x, y: (getattr(L, name)(x, y, mode) * w).sum()

    for argnums in (0, 1):
        _same(plait.grad(loss(pnp), argnums=argnums)(a, v),
              jax.grad(loss(jnp), argnums=argnums)(a, v), f"grad {argnums}")
    c, cv = _vec(5, np.complex64), _vec(2, np.complex64)

    def closs(L: Any) -> Any:
        return lambda x, y: L.real(getattr(L, name)(x, y, mode) * L.conj(y[0])).sum()

    if mode == "valid":
        return
    _same(plait.grad(closs(pnp))(a.astype(np.complex64), cv),
          jax.grad(closs(jnp))(a.astype(np.complex64), cv), "complex grad")
    _same(plait.grad(closs(pnp), argnums=1)(c, cv), jax.grad(closs(jnp), argnums=1)(c, cv),
          "complex grad v")
    batch = RNG.normal(size=(3, 4)).astype(np.float32)
    _same(plait.vmap(lambda x: getattr(pnp, name)(x, v, mode))(batch),
          jax.vmap(lambda x: getattr(jnp, name)(x, v, mode))(batch), "vmap")
    _same(plait.vmap(lambda x, y: getattr(pnp, name)(x, y, mode))(batch, batch[:, :2]),
          jax.vmap(lambda x, y: getattr(jnp, name)(x, y, mode))(batch, batch[:, :2]), "vmap 2")


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_conv_errors(name: str) -> None:
    ours, theirs = getattr(pnp, name), getattr(jnp, name)
    one = np.ones(3, np.float32)
    bad: list[tuple[tuple[Any, ...], dict[str, Any], type[Exception], str]] = [
        ((one, np.ones((2, 2))), {}, ValueError, rf"{name}\(\) only support 1-dimensional"),
        ((np.float32(1), one), {}, ValueError, "only support 1-dimensional"),
        ((np.zeros(0, np.float32), one), {}, ValueError,
         rf"{name}: inputs cannot be empty, got shapes \(0,\) and \(3,\)"),
        ((one, one), {"mode": "middle"}, ValueError, r"mode must be one of \['full', 'same', "
                                                     r"'valid'\]"),
        (([1.0, 2.0], one), {}, TypeError, "convolve|correlate"),
        ((one, one), {"precision": "bad"}, ValueError, "Precision argument must be one of"),
        ((one, one), {"precision": 3}, ValueError, "Precision argument must be one of")]
    for args, kwargs, exc, msg in bad:
        with pytest.raises(exc):
            theirs(*args, **kwargs)
        with pytest.raises(exc, match=msg):
            ours(*args, **kwargs)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows_match_jax(name: str) -> None:
    for m in (0, 1, 6, np.int32(5), 4.7):
        _same(getattr(pnp, name)(m), getattr(jnp, name)(m), f"{name}({m})", 1e-6)
    _same(plait.jit(lambda: getattr(pnp, name)(5))(), getattr(jnp, name)(5), "jit", 1e-6)
    with pytest.raises(TypeError):
        getattr(jnp, name)(-1)
    with pytest.raises(TypeError, match="nonnegative"):
        getattr(pnp, name)(-1)
    with pytest.raises(ConcretizationTypeError):
        plait.jit(getattr(pnp, name))(3)


def test_kaiser_and_i0_match_jax() -> None:
    cases: list[tuple[Any, float]] = [(0, 2.0), (1, 2.0), (6, 0.0), (7, 5.0),
                                      (np.int32(5), 14.0)]
    for m, beta in cases:
        _same(pnp.kaiser(m, beta), jnp.kaiser(m, beta), f"kaiser({m}, {beta})", 1e-6)
    _same(plait.jit(lambda b: pnp.kaiser(8, b))(3.0), jnp.kaiser(8, 3.0), "jit", 1e-6)
    x = np.array([-30.0, -2.0, 0.0, 0.5, 3.0, 9.0, 40.0], np.float32)
    for v in (x, x.astype(jnp.bfloat16), np.arange(4, dtype=np.int32), 1.5):
        _same(pnp.i0(v), jnp.i0(v), f"i0({v!r})", 1e-6)
    _same(plait.vmap(plait.grad(pnp.i0))(x), jax.vmap(jax.grad(jnp.i0))(x), "grad", 1e-5)
    _same(plait.grad(lambda b: pnp.kaiser(6, b).sum())(4.0),
          jax.grad(lambda b: jnp.kaiser(6, b).sum())(4.0), "kaiser grad", 1e-5)
    with pytest.raises(NotImplementedError, match="complex"):
        pnp.i0(np.ones(2, np.complex64))

"""plait.numpy.fft and lax.fft against jax 0.10.2 (and NumPy in float64): every function
with its n/s, axis/axes and norm arguments, eagerly and under jit, gradients (both
modes) through each transform kind, vmap, and bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.lax as plax
import plait.numpy as pnp

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(3)


def _real(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape).astype(np.float32)


def _complex(*shape: int) -> np.ndarray:
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(np.complex64)


def _check(ours: Any, theirs: Any, tol: float = 1e-5) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.shape == t.shape and o.dtype == t.dtype, (o.shape, o.dtype, t.shape, t.dtype)
    scale = float(np.abs(t).max(initial=1.0))
    np.testing.assert_allclose(o, t, rtol=tol, atol=tol * scale)


_ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
_REAL_INPUT = {"rfft", "ihfft", "rfft2", "rfftn"}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(_ONE_D), st.integers(1, 9), st.integers(1, 7),
       st.one_of(st.none(), st.integers(1, 12)), st.integers(-2, 1),
       st.sampled_from([None, "backward", "ortho", "forward"]))
def test_one_dimensional_transforms_match_jax(name: str, rows: int, cols: int, n: int | None,
                                              axis: int, norm: str | None) -> None:
    x = _real(rows, cols) if name in _REAL_INPUT else _complex(rows, cols)
    ours = getattr(pnp.fft, name)(x, n=n, axis=axis, norm=norm)
    theirs = getattr(jnp.fft, name)(x, n=n, axis=axis, norm=norm)
    _check(ours, theirs)
    _check(plait.jit(lambda x: getattr(pnp.fft, name)(x, n=n, axis=axis, norm=norm))(x),
           theirs)
    if np.asarray(ours).size == 0:
        return  # irfft of one frequency has 0 points: NumPy refuses, JAX and plait agree
    # NumPy, in double precision (its hfft takes the same conventions).
    _check(ours, getattr(np.fft, name)(x.astype(np.complex128 if x.dtype.kind == "c"
                                                else np.float64), n=n, axis=axis, norm=norm)
           .astype(np.asarray(ours).dtype), tol=1e-4)


_N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(_N_D), st.lists(st.integers(1, 5), min_size=2, max_size=5),
       st.data(), st.sampled_from([None, "ortho", "forward"]))
def test_multi_dimensional_transforms_match_jax(name: str, shape: list[int], data: Any,
                                                norm: str | None) -> None:
    x = _real(*shape) if name in _REAL_INPUT else _complex(*shape)
    nd = len(shape)
    if name.endswith("2"):
        axes: Any = tuple(data.draw(st.permutations(range(-nd, 0)))[:2])
    else:
        axes = data.draw(st.one_of(st.none(), st.lists(st.integers(0, nd - 1), min_size=1,
                                                          max_size=nd, unique=True)))
    k = 2 if axes is None and name.endswith("2") else (nd if axes is None else len(axes))
    s = data.draw(st.one_of(st.none(), st.lists(st.integers(1, 6), min_size=k, max_size=k)))
    if name.endswith("n") and axes is None and s is not None:
        k = len(s)
    ours = getattr(pnp.fft, name)(x, s=s, axes=axes, norm=norm) if axes is not None \
        else getattr(pnp.fft, name)(x, s=s, norm=norm)
    theirs = getattr(jnp.fft, name)(x, s=s, axes=axes, norm=norm) if axes is not None \
        else getattr(jnp.fft, name)(x, s=s, norm=norm)
    _check(ours, theirs, tol=2e-5)


def test_four_and_five_dimensional_transforms() -> None:
    for name in ("fftn", "ifftn", "rfftn", "irfftn"):
        x = _real(2, 3, 2, 3, 4) if name == "rfftn" else _complex(2, 3, 2, 3, 4)
        for axes in (None, (0, 1, 2, 3)):
            _check(getattr(pnp.fft, name)(x, axes=axes), getattr(jnp.fft, name)(x, axes=axes))


def test_shifts_and_frequencies() -> None:
    x = _real(4, 5, 3)
    for axes in (None, 1, (0, 2), [-1]):
        _check(pnp.fft.fftshift(x, axes), jnp.fft.fftshift(x, axes))
        _check(pnp.fft.ifftshift(x, axes), jnp.fft.ifftshift(x, axes))
    for n, d in ((1, 1.0), (6, 0.1), (7, 2.0)):
        _check(pnp.fft.fftfreq(n, d), jnp.fft.fftfreq(n, d))
        _check(pnp.fft.rfftfreq(n, d), jnp.fft.rfftfreq(n, d))
    for dtype in (np.float16, np.complex64, np.int32):
        _check(pnp.fft.fftfreq(5, dtype=dtype), jnp.fft.fftfreq(5, dtype=dtype))


def _loss(ns: Any, name: str) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        y = getattr(ns.fft, name)(x)
        return ns.sum(ns.real(y * ns.conj(y))) + ns.sum(ns.imag(y) * ns.arange(y.shape[-1]))
    return f


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2",
                                  "rfftn", "irfftn"])
def test_gradients_match_jax(name: str) -> None:
    x = _real(3, 6) if name in _REAL_INPUT else _complex(3, 6)
    # A real loss of complex input: the gradient in JAX's convention (conjugated).
    _check(plait.grad(_loss(pnp, name))(x), jax.grad(_loss(jnp, name))(x), tol=1e-4)
    t = _real(3, 6) if name in _REAL_INPUT else _complex(3, 6)
    o_out, o_t = plait.jvp(lambda x: getattr(pnp.fft, name)(x), (x,), (t,))
    j_out, j_t = jax.jvp(lambda x: getattr(jnp.fft, name)(x), (x,), (t,))
    _check(o_out, j_out)
    _check(o_t, j_t)


def test_vmap_over_any_axis_matches_jax() -> None:
    x = _complex(3, 4, 5)
    for in_axes in (0, 1, 2):
        _check(plait.vmap(pnp.fft.fft, in_axes)(x), jax.vmap(jnp.fft.fft, in_axes)(x))
        _check(plait.vmap(pnp.fft.irfft, in_axes)(x), jax.vmap(jnp.fft.irfft, in_axes)(x))
        _check(plait.vmap(lambda r: pnp.fft.rfft2(r.real), in_axes)(x),
               jax.vmap(lambda r: jnp.fft.rfft2(r.real), in_axes)(x))


def test_lax_fft_prints_the_primitive_and_converts_operands() -> None:
    x = _real(2, 8)
    # JAX's lax.fft is a jit around the primitive: its body is what plait stages.
    (call,) = jax.make_jaxpr(lambda x: jax.lax.fft(x, "rfft", (8,)))(x).eqns
    assert str(plait.make_jaxpr(lambda x: plax.fft(x, "rfft", (8,)))(x)) == \
        str(call.params["jaxpr"])
    # Real input to a complex transform is converted first; integers become floats.
    _check(plax.fft(x, plax.FftType.FFT, (8,)), jax.lax.fft(x, jax.lax.FftType.FFT, (8,)))
    xi = np.arange(8, dtype=np.int32)
    _check(plax.fft(xi, "RFFT", (8,)), jax.lax.fft(xi, "RFFT", (8,)))


def test_bad_arguments() -> None:
    x = _complex(4, 5)
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        plax.fft(x, "rfft", (5,))
    with pytest.raises(ValueError, match="Unknown FFT type 'dft'"):
        plax.fft(x, "dft", (5,))
    with pytest.raises(ValueError, match="Shape should be positive"):
        pnp.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        pnp.fft.fftn(x, s=(2, 3), axes=(0,))
    with pytest.raises(ValueError, match="does not support repeated axes"):
        pnp.fft.fftn(x, axes=(0, 0))
    with pytest.raises(ValueError, match="does not support multiple axes. Please use"):
        pnp.fft.fft(x, axis=(0, 1))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only supports 2 axes"):
        pnp.fft.fft2(x, axes=(0,))
    with pytest.raises(ValueError, match='Invalid norm value "half"|Invalid norm value half'):
        pnp.fft.fft(x, norm="half")
    with pytest.raises(TypeError, match="fft requires ndarray or scalar arguments"):
        pnp.fft.fft([1.0, 2.0])
    with pytest.raises(ValueError, match="only takes an int"):
        pnp.fft.fftfreq([4])  # type: ignore[arg-type]

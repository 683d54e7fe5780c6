"""plait.scipy.fft (the type-2 DCT and its inverse) against jax.scipy.fft 0.10.2 and
scipy.fft: norms, lengths, axes, dtypes (x64 included), jit, grad, vmap and errors."""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import jax
import jax.scipy.fft as jfft
import numpy as np
import pytest
import scipy.fft as sfft  # type: ignore[import-untyped]  # scipy ships no stubs
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.scipy.fft as pfft
from tests.frontend.jax_oracle import assert_close, both_x64, raised

RNG = np.random.default_rng(5)
NAMES = ["dct", "idct", "dctn", "idctn"]


def _x(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-4, 5, shape).astype(dtype)
    return RNG.normal(size=shape).astype(dtype)


def _same(name: str, cases: list[tuple[np.ndarray, dict[str, Any]]], rtol: float = 2e-5,
          atol: float = 2e-5) -> None:
    """``pfft.name`` equals ``jfft.name`` on each ``(x, kwargs)``, all cases in one jitted
    program per library."""
    def program(module: Any) -> Any:
        fn = getattr(module, name)
        return lambda xs: [fn(x, **kw) for x, (_, kw) in zip(xs, cases)]
    xs = [x for x, _ in cases]
    assert_close(plait.jit(program(pfft))(xs), jax.jit(program(jfft))(xs), rtol=rtol,
                 atol=atol)


@pytest.mark.parametrize("name", ["dct", "idct"])
def test_1d_transforms_match_jax(name: str) -> None:
    cases: list[tuple[np.ndarray, dict[str, Any]]] = []
    for n in (1, 2, 3, 4, 7, 8):
        x = _x(3, n)
        for norm in (None, "backward", "ortho"):
            cases.append((x, {"norm": norm}))
            cases.append((x, {"norm": norm, "axis": 0, "n": 5}))
        cases.append((x, {"n": max(1, n - 1)}))
    cases += [(_x(4, 6, dtype=np.complex64), {"norm": "ortho"}),
              (_x(5, 4, dtype=np.int32), {"axis": 0})]
    _same(name, cases, rtol=1e-4, atol=1e-4)
    # float16 gives float32 (the FFT's precision); JAX scales idct's input in float16
    # first, plait in float32: they agree to float16's precision.
    _same(name, [(_x(6, dtype=np.float16), {"norm": norm}) for norm in (None, "ortho")],
          rtol=5e-3, atol=5e-3)


@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_nd_transforms_match_jax(name: str) -> None:
    x = _x(3, 4, 5)
    cases: list[tuple[np.ndarray, dict[str, Any]]] = [
        (x, {}), (x, {"axes": (0, 2)}), (x, {"axes": [1]}), (x, {"axes": (-1, 0, 1)}),
        (x, {"s": (6, 3)}), (x, {"s": (2, 6, 3), "norm": "ortho"}),
        (x, {"s": (6, 3), "axes": (0, 1), "norm": "ortho"}), (x, {"axes": 1}),
        (_x(3, 4, 5, dtype=np.complex64), {"axes": (0, 2)}), (_x(2, 3, dtype=np.int32), {})]
    _same(name, cases, rtol=1e-4, atol=1e-4)


def test_values_are_scipys() -> None:
    x = _x(4, 6)
    for norm in (None, "ortho"):
        np.testing.assert_allclose(np.asarray(pfft.dct(x, norm=norm)),
                                   sfft.dct(x.astype(np.float64), norm=norm),
                                   rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(np.asarray(pfft.idct(x, norm=norm, axis=0)),
                                   sfft.idct(x.astype(np.float64), norm=norm, axis=0),
                                   rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(np.asarray(pfft.dctn(x, norm=norm)),
                                   sfft.dctn(x.astype(np.float64), norm=norm),
                                   rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(np.asarray(pfft.idctn(x, norm=norm, s=(5, 7))),
                                   sfft.idctn(x.astype(np.float64), norm=norm, s=(5, 7)),
                                   rtol=1e-4, atol=1e-4)


@settings(max_examples=10, deadline=None)
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                  elements=st.floats(-10, 10, width=32)),
       st.sampled_from([None, "ortho"]))
def test_idctn_inverts_dctn(x: np.ndarray, norm: str | None) -> None:
    back = plait.jit(lambda a: pfft.idctn(pfft.dctn(a, norm=norm), norm=norm))(x)
    np.testing.assert_allclose(np.asarray(back), x, rtol=1e-4, atol=1e-4)


def test_grad_and_vmap() -> None:
    x = _x(5, 8)

    def program(fft: Any, lib: Any) -> Any:
        def run(x: Any) -> Any:
            out = []
            for name in NAMES:
                f = getattr(fft, name)
                out.append(lib.grad(lambda a, f=f: (f(a, norm="ortho") ** 3).sum())(x))
                out.append(lib.vmap(f)(x))
            return out
        return lib.jit(run)
    assert_close(program(pfft, plait)(x), program(jfft, jax)(x), rtol=1e-4, atol=1e-4)


def test_eager_dtypes_and_shapes() -> None:
    for name, x in (("dct", np.arange(4)), ("idctn", _x(3, 4, dtype=np.complex64))):
        got, want = getattr(pfft, name)(x), getattr(jfft, name)(x)
        assert_close(got, want, rtol=1e-4, atol=1e-4)
    ints = np.arange(3)
    assert pfft.dctn(ints, axes=()).dtype == jfft.dctn(ints, axes=()).dtype  # type: ignore[arg-type]


def test_x64() -> None:
    with both_x64():
        x = RNG.normal(size=(5, 8))
        for name in NAMES:
            _same(name, [(x, {}), (x, {"norm": "ortho"}), (x.astype(np.complex128), {}),
                         (np.arange(6).reshape(2, 3), {})], rtol=1e-10, atol=1e-10)


ERRORS: list[tuple[str, dict[str, Any]]] = [
    ("dct", {"type": 1}), ("idct", {"type": 3}), ("dctn", {"type": 4}), ("idctn", {"type": 1}),
    ("dct", {"norm": "forward"}), ("idct", {"norm": "bad"}), ("dctn", {"norm": "forward"}),
    ("idctn", {"norm": "forward"}), ("dct", {"axis": 2}), ("dctn", {"axes": (0, 0)}),
    ("idctn", {"axes": (0, -2)}), ("dctn", {"s": (1, 2, 3)}), ("idctn", {"axes": (3,)}),
]


@pytest.mark.parametrize("name,kw", ERRORS, ids=str)
def test_errors_match_jax(name: str, kw: dict[str, Any]) -> None:
    x = np.ones((2, 3), np.float32)
    want = raised(lambda: getattr(jfft, name)(x, **kw))
    got = raised(lambda: getattr(pfft, name)(x, **kw))
    assert isinstance(got, type(want)), (got, want)
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        getattr(pfft, name)([1.0, 2.0])

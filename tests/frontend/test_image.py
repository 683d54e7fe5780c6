"""plait.image against jax.image 0.10.2: ``resize`` and ``scale_and_translate`` for every
method (values, which plait computes with JAX's contraction order and so rounds alike;
dtypes, x64 included), under jit, grad and vmap, and their errors."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.image as pim
import plait.numpy as pnp
from tests.frontend.jax_oracle import assert_close, raised

METHODS = ["nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"]
ALIASES = {
    "nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR", "trilinear": "LINEAR",
    "triangle": "LINEAR", "lanczos3": "LANCZOS3", "lanczos5": "LANCZOS5", "cubic": "CUBIC",
    "bicubic": "CUBIC", "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
    "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA",
}
RNG = np.random.default_rng(0)
IMAGE = RNG.standard_normal((2, 6, 9, 3)).astype(np.float32)
# Upsampling, downsampling, both, a size-1 dimension, the identity, and an empty output.
SHAPES = [(2, 12, 20, 3), (2, 3, 4, 3), (2, 10, 5, 3), (2, 1, 9, 2), (2, 6, 9, 3),
          (2, 0, 4, 3)]


@contextlib.contextmanager
def both_x64(on: bool) -> Iterator[None]:
    """x64 mode ``on`` in JAX and plait within the block (restored after it)."""
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", on)
    try:
        with plait.enable_x64(on):
            yield
    finally:
        jax.config.update("jax_enable_x64", previous)


def exact(got: Any, want: Any) -> None:
    """Same shape and dtype, and (up to an ulp or so) the same values."""
    assert_close(got, want, rtol=1e-6, atol=1e-6)


# -- ResizeMethod ------------------------------------------------------------------------

def test_resize_method_members_and_names() -> None:
    assert [m.name for m in pim.ResizeMethod] == [m.name for m in jax.image.ResizeMethod]
    assert [m.value for m in pim.ResizeMethod] == [m.value for m in jax.image.ResizeMethod]
    for name, member in ALIASES.items():
        assert pim.ResizeMethod.from_string(name) is pim.ResizeMethod[member]
        assert jax.image.ResizeMethod.from_string(name).name == member
    e = raised(lambda: pim.ResizeMethod.from_string("bogus"))
    assert isinstance(e, ValueError) and 'Unknown resize method "bogus"' in str(e)


# -- resize ------------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_resize_matches_jax(method: str) -> None:
    for shape, antialias in [(SHAPES[1], True), (SHAPES[2], False)]:
        want = jax.image.resize(IMAGE, shape, method, antialias=antialias)
        exact(pim.resize(IMAGE, shape, method, antialias=antialias), want)


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("antialias", [True, False])
def test_resize_matches_jax_all_shapes(method: str, antialias: bool) -> None:
    for shape in SHAPES:
        want = jax.image.resize(IMAGE, shape, method, antialias=antialias)
        exact(pim.resize(IMAGE, shape, method, antialias=antialias), want)


def test_size_one_and_empty_outputs() -> None:
    for shape in SHAPES[3:]:
        exact(pim.resize(IMAGE, shape, "linear"), jax.image.resize(IMAGE, shape, "linear"))


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_every_name_and_member_resizes_as_jax(name: str) -> None:
    # (JAX compiles once per name: it is asked by the member's canonical name.)
    x = IMAGE[0, :, :, 0]
    member = pim.ResizeMethod[ALIASES[name]]
    want = jax.image.resize(x, (4, 13), jax.image.ResizeMethod[member.name])
    exact(pim.resize(x, (4, 13), name), want)
    exact(pim.resize(x, (4, 13), member), want)


def test_identity_returns_the_image() -> None:
    for method in METHODS:
        np.testing.assert_array_equal(pim.resize(IMAGE, IMAGE.shape, method), IMAGE)


def test_three_to_five_resized_dimensions() -> None:
    x = RNG.standard_normal((3, 4, 5, 6)).astype(np.float32)
    for shape, method in [((5, 6, 7, 8), "linear"), ((2, 8, 10, 3), "lanczos3")]:
        exact(pim.resize(x, shape, method), jax.image.resize(x, shape, method))
    # Six operands: JAX's einsum orders them by its branch-and-bound search.
    y = RNG.standard_normal((3, 4, 2, 5, 3)).astype(np.float32)
    for shape5 in [(5, 2, 4, 3, 6), (2, 7, 3, 2, 4)]:
        exact(pim.resize(y, shape5, "cubic"), jax.image.resize(y, shape5, "cubic"))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.bool_, np.float16,
                                   jjnp.bfloat16, np.complex64])
def test_dtypes(dtype: Any) -> None:
    x = (IMAGE[0, :, :, 0] * 40).astype(dtype)
    for method in ("nearest", "cubic"):
        want = jax.image.resize(x, (4, 13), method)
        got = pim.resize(x, (4, 13), method)
        assert got.dtype == want.dtype  # NEAREST keeps the dtype, the rest are inexact
        rtol = 1e-2 if np.dtype(want.dtype).itemsize <= 2 else 1e-6
        np.testing.assert_allclose(np.asarray(got, np.complex128),
                                   np.asarray(want, np.complex128), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_x64(dtype: Any) -> None:
    with both_x64(True):
        x = (IMAGE[0, :, :, 0] * 10).astype(dtype)
        for method in ("nearest", "lanczos5"):
            want = jax.image.resize(x, (5, 4), method)
            assert_close(pim.resize(x, (5, 4), method), want, rtol=1e-12, atol=1e-12)


def test_jit_grad_vmap() -> None:
    x = IMAGE[0, :, :, 0]
    for method in ("linear", "cubic-pytorch", "area"):
        def ours(v: Any, m: str = method) -> Any:
            return (pim.resize(v, (4, 13), m) ** 2).sum()

        def theirs(v: Any, m: str = method) -> Any:
            return (jax.image.resize(v, (4, 13), m) ** 2).sum()
        exact(plait.jit(ours)(x), jax.jit(theirs)(x))
        assert_close(plait.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-5, atol=1e-5)
    want = jax.vmap(lambda v: jax.image.resize(v, (3, 4), "cubic"))(IMAGE[..., 0])
    exact(plait.vmap(lambda v: pim.resize(v, (3, 4), "cubic"))(IMAGE[..., 0]), want)
    want = jax.vmap(lambda v: jax.image.resize(v, (2, 3, 4), "nearest"), 3, 2)(IMAGE)
    exact(plait.vmap(lambda v: pim.resize(v, (2, 3, 4), "nearest"), 3, 2)(IMAGE), want)


def test_precision_and_numpy_shapes() -> None:
    x = IMAGE[0, :, :, 0]
    # An int is a one-dimensional shape, as in JAX.
    exact(pim.resize(x[0], 13, "linear"),
          jax.image.resize(x[0], 13, "linear"))  # type: ignore[arg-type]  # (JAX's hint)
    shape = np.array([4, 13])
    for precision in (plait.lax.Precision.DEFAULT, "highest", None):
        exact(pim.resize(x, shape, "linear", precision=precision),  # type: ignore[arg-type]
              jax.image.resize(x, (4, 13), "linear"))


@pytest.mark.slow
@settings(deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.integers(0, 12), st.integers(0, 12),
       st.sampled_from(METHODS), st.booleans())
def test_random_sizes(h: int, w: int, oh: int, ow: int, method: str, antialias: bool) -> None:
    x = RNG.standard_normal((h, w)).astype(np.float32)
    want = jax.image.resize(x, (oh, ow), method, antialias=antialias)
    exact(pim.resize(x, (oh, ow), method, antialias=antialias), want)


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 7), st.integers(0, 12), st.sampled_from(METHODS), st.booleans())
def test_random_sizes_1d(n: int, m: int, method: str, antialias: bool) -> None:
    x = RNG.standard_normal((n,)).astype(np.float32)
    want = jax.image.resize(x, (m,), method, antialias=antialias)
    exact(pim.resize(x, (m,), method, antialias=antialias), want)


def test_resize_errors() -> None:
    x = IMAGE[0, :, :, 0]
    e = raised(lambda: pim.resize(x, (4, 13), "bogus"))
    assert isinstance(e, ValueError) and "Unknown resize method" in str(e)
    e = raised(lambda: pim.resize(x, (4, 13, 2), "linear"))
    assert isinstance(e, ValueError) and "shape must have length" in str(e)
    assert isinstance(raised(lambda: jax.image.resize(x, (4, 13, 2), "linear")), ValueError)
    e = raised(lambda: pim.resize(x, (4.0, 13), "linear"))  # type: ignore[arg-type]
    assert isinstance(e, TypeError) and "integer type" in str(e)
    assert isinstance(raised(lambda: jax.image.resize(x, (4.0, 13), "linear")), TypeError)
    e = raised(lambda: pim.resize(x, 5, "linear"))
    assert isinstance(e, ValueError) and "shape must have length" in str(e)
    e = raised(lambda: pim.resize(x, (-1, 13), "linear"))
    assert isinstance(e, TypeError) and "negative dimensions are not allowed" in str(e)
    e = raised(lambda: pim.resize(x, (4, 13), 3))  # type: ignore[arg-type]
    assert isinstance(e, TypeError) and "but got 3" in str(e)
    e = raised(lambda: pim.resize([[1.0, 2.0]], (2, 3), "linear"))
    assert isinstance(e, TypeError)
    # JAX divides by zero here; plait says why.
    e = raised(lambda: pim.resize(np.ones((0, 3), np.float32), (2, 3), "linear"))
    assert isinstance(e, ValueError) and "empty" in str(e)
    exact(pim.resize(np.ones((0, 3), np.float32), (0, 5), "linear"),
          jax.image.resize(np.ones((0, 3), np.float32), (0, 5), "linear"))


# -- scale_and_translate -----------------------------------------------------------------

SCALES = [((1.7, 0.6), (0.3, -1.2)), ((0.4, 2.0), (2.0, 0.0)), ((1.0, 1.0), (0.5, -0.5)),
          ((-1.0, 3.0), (9.0, -4.0))]


def _st_pair(shape: tuple[int, ...], dims: tuple[int, ...], method: str,
             antialias: bool = True) -> tuple[Any, Any]:
    """scale_and_translate with the static arguments bound, jitted in plait and JAX."""
    def ours(x: Any, s: Any, t: Any) -> Any:
        return pim.scale_and_translate(x, shape, dims, s, t, method, antialias)

    def theirs(x: Any, s: Any, t: Any) -> Any:
        return jax.image.scale_and_translate(x, shape, dims, s, t, method, antialias)
    return plait.jit(ours), jax.jit(theirs)


@pytest.mark.parametrize("method", [m for m in METHODS if m != "nearest"])
def test_scale_and_translate_matches_jax(method: str) -> None:
    x = IMAGE[..., 0]
    for antialias in (True, False):
        ours, theirs = _st_pair((2, 8, 6), (1, -1), method, antialias)
        for scale, translation in SCALES:
            s, t = np.array(scale, np.float32), np.array(translation, np.float32)
            exact(ours(x, s, t), theirs(x, s, t))


def test_scale_and_translate_eagerly() -> None:
    x = IMAGE[0, ..., 0]
    s, t = np.array([1.7, 0.6], np.float32), np.array([0.3, -1.2], np.float32)
    exact(pim.scale_and_translate(x, (8, 6), (0, 1), s, t, "cubic"),
          jax.jit(jax.image.scale_and_translate, static_argnums=(1, 2, 5))(
              x, (8, 6), (0, 1), s, t, "cubic"))


def test_scale_and_translate_dtypes_and_x64() -> None:
    s, t = np.array([1.5], np.float32), np.array([0.25], np.float32)
    x = np.arange(6, dtype=np.int32)
    ours, theirs = _st_pair((8,), (0,), "linear")
    exact(ours(x, s, t), theirs(x, s, t))  # an integer image becomes float32
    # Integer scales and translations become float32.
    exact(ours(x, np.array([2]), np.array([1])), theirs(x, np.array([2]), np.array([1])))
    with both_x64(True):
        ours, theirs = _st_pair((9,), (0,), "lanczos3")
        for dtype in (np.float32, np.float64):
            args = (x.astype(dtype), np.array([1.3], dtype), np.array([-0.7], dtype))
            assert_close(ours(*args), theirs(*args), rtol=1e-6, atol=1e-12)
    # No spatial dimensions: the image, made inexact.
    exact(pim.scale_and_translate(x, (6,), (), np.zeros(0), np.zeros(0), "linear"),
          jax.image.scale_and_translate(x, (6,), (), np.zeros(0), np.zeros(0), "linear"))
    # An empty input dimension gives zeros.
    ours, theirs = _st_pair((4, 3), (0,), "linear")
    e = np.ones((0, 3), np.float32)
    exact(ours(e, s, t), theirs(e, s, t))


def test_scale_and_translate_grad_and_vmap() -> None:
    x = IMAGE[0, ..., 0]
    s, t = np.array([1.7, 0.6], np.float32), np.array([0.3, -1.2], np.float32)

    def ours(x: Any, s: Any, t: Any) -> Any:
        return (pim.scale_and_translate(x, (8, 6), (0, 1), s, t, "cubic") ** 2).sum()

    def theirs(x: Any, s: Any, t: Any) -> Any:
        return (jax.image.scale_and_translate(x, (8, 6), (0, 1), s, t, "cubic") ** 2).sum()
    assert_close(plait.jit(plait.grad(ours, argnums=(0, 1, 2)))(x, s, t),
                 jax.jit(jax.grad(theirs, argnums=(0, 1, 2)))(x, s, t), rtol=1e-4, atol=1e-4)
    scales = np.array([[1.7, 0.6], [0.5, 2.5], [1.0, 1.0]], np.float32)
    assert_close(plait.jit(plait.vmap(ours, (None, 0, None)))(x, scales, t),
                 jax.jit(jax.vmap(theirs, (None, 0, None)))(x, scales, t),
                 rtol=1e-5, atol=1e-5)
    assert_close(plait.jit(plait.vmap(ours, (0, None, 0)))(IMAGE[..., 0], s, scales[:2]),
                 jax.jit(jax.vmap(theirs, (0, None, 0)))(IMAGE[..., 0], s, scales[:2]),
                 rtol=1e-5, atol=1e-5)


def test_scale_and_translate_errors() -> None:
    x = IMAGE[0, ..., 0]
    s = np.array([2.0, 2.0], np.float32)
    t = np.zeros(2, np.float32)
    e = raised(lambda: pim.scale_and_translate(x, (8, 6), (0, 1), s, t, "nearest"))
    assert isinstance(e, ValueError) and "Nearest neighbor" in str(e)
    assert isinstance(
        raised(lambda: jax.image.scale_and_translate(x, (8, 6), (0, 1), s, t, "nearest")),
        ValueError)
    e = raised(lambda: pim.scale_and_translate(x, (8, 6), (0, 2), s, t, "linear"))
    assert isinstance(e, ValueError) and "out of bounds" in str(e)
    e = raised(lambda: pim.scale_and_translate(x, (8, 6), (0,), s, t, "linear"))
    assert isinstance(e, ValueError) and "expected scale of shape (1,)" in str(e)
    e = raised(lambda: pim.scale_and_translate(x, (8,), (0,), s[:1], t[:1], "linear"))
    assert isinstance(e, ValueError) and "shape must have length" in str(e)
    # Lists are not arrays, in JAX too.
    e = raised(lambda: pim.scale_and_translate(x, (8, 6), (0, 1), [2.0, 2.0], t, "linear"))
    assert isinstance(e, TypeError)
    assert isinstance(raised(lambda: jax.image.scale_and_translate(
        x, (8, 6), (0, 1), [2.0, 2.0], t, "linear")), TypeError)


def test_traced_under_an_outer_jit() -> None:
    def ours(x: Any, s: Any) -> Any:
        return pim.scale_and_translate(pim.resize(x, (4, 4), "bilinear"), (6, 6), (0, 1),
                                       s, pnp.zeros(2), "lanczos5")

    def theirs(x: Any, s: Any) -> Any:
        return jax.image.scale_and_translate(jax.image.resize(x, (4, 4), "bilinear"),
                                             (6, 6), (0, 1), s, jjnp.zeros(2), "lanczos5")
    s = np.array([1.5, 1.5], np.float32)
    exact(plait.jit(ours)(IMAGE[0, ..., 0], s), jax.jit(theirs)(IMAGE[0, ..., 0], s))

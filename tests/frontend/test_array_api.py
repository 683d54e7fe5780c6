"""The array API namespace: ``__array_namespace__``, ``__array_namespace_info__``, the
2024.12 functions' presence and signatures, the helpers ``jax.numpy`` adds, DLPack.

Every answer is compared with jax 0.10.2's ``jax.numpy`` (or NumPy for DLPack).
"""

from __future__ import annotations

import inspect
import itertools
import warnings
from collections.abc import Callable
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.frontend.core.array_impl import ArrayImpl

# The names of plait.numpy this file compares with jax.numpy (for test_numpy's coverage).
COVERED = {
    "__array_namespace_info__", "array_repr", "array_str", "can_cast", "character",
    "complexfloating", "flexible", "floating", "from_dlpack", "generic", "get_printoptions",
    "inexact", "integer", "iscomplexobj", "isdtype", "isrealobj", "isscalar", "iterable",
    "matvec", "number", "object_", "printoptions", "set_printoptions", "signedinteger",
    "unsignedinteger", "unstack", "vecmat"}


def _result(f: Callable[[], object]) -> object:
    """``f()``: the value of a method annotated as returning ``None``, to compare it."""
    return f()


# The functions of the 2024.12 standard (the stubs of data-apis/array-api, less
# ``__eq__`` of the dtype objects).
SPEC_2024_12 = """
arange asarray empty empty_like eye from_dlpack full full_like linspace meshgrid ones ones_like
tril triu zeros zeros_like astype can_cast finfo iinfo isdtype result_type abs acos acosh add
asin asinh atan atan2 atanh bitwise_and bitwise_left_shift bitwise_invert bitwise_or
bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh divide equal exp expm1 floor
floor_divide greater greater_equal hypot imag isfinite isinf isnan less less_equal log log1p
log2 log10 logaddexp logical_and logical_not logical_or logical_xor maximum minimum multiply
negative nextafter not_equal positive pow real reciprocal remainder round sign signbit sin sinh
square sqrt subtract tan tanh trunc take take_along_axis matmul matrix_transpose tensordot
vecdot broadcast_arrays broadcast_to concat expand_dims flip moveaxis permute_dims repeat
reshape roll squeeze stack tile unstack argmax argmin count_nonzero nonzero searchsorted where
unique_all unique_counts unique_inverse unique_values argsort sort cumulative_prod
cumulative_sum max mean min prod std sum var all any diff
""".split()

# Where plait's parameters differ from jax.numpy's on purpose: JAX's ufunc objects take
# ``*args, out, where``; plait's plain functions name their two operands.  Keyword-only
# parameters JAX has for sharding (``out_sharding``) are absent from plait.
JAX_ONLY = {"out_sharding", "out", "where", "total_repeat_length", "kind", "order",
            "method", "mode", "fill_value", "wrap_negative_indices", "precision",
            "preferred_element_type"}


def _params(f: Any) -> list[str]:
    return [p.name for p in inspect.signature(f).parameters.values()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in JAX_ONLY]


def test_every_2024_12_function_exists_with_jax_keyword_names() -> None:
    missing = [n for n in SPEC_2024_12 if not callable(getattr(pnp, n, None))]
    assert missing == []
    differ = []
    for n in SPEC_2024_12:
        try:
            theirs = _params(getattr(jnp, n))
        except (TypeError, ValueError):
            continue  # a ufunc object without a signature
        if any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(getattr(jnp, n))
               .parameters.values()):
            continue  # JAX's ufuncs: ``add(*args, out=None, where=None)``
        ours = _params(getattr(pnp, n))
        # Every keyword JAX accepts where the standard lets callers use keywords is
        # accepted by plait too (plait may accept more, as concat's dtype=).
        keywords = {"axis", "keepdims", "dtype", "device", "copy", "shape", "stable",
                    "descending", "include_initial", "side", "correction", "n", "k", "num",
                    "endpoint", "sorter", "append", "prepend"}
        if not {p for p in theirs if p in keywords} <= set(ours):
            differ.append((n, ours, theirs))
    assert differ == []


def test_array_namespace() -> None:
    x = pnp.ones(3)
    assert x.__array_namespace__() is pnp
    assert x.__array_namespace__(api_version="2024.12") is pnp
    with pytest.raises(ValueError, match="not available"):
        x.__array_namespace__(api_version="2021.12")
    assert pnp.__array_api_version__ == jnp.__array_api_version__ == "2024.12"
    traced = plait.make_jaxpr(lambda v: v.__array_namespace__().sin(v))(x)
    assert "sin" in str(traced)


@pytest.mark.parametrize("x64", [False, True])
def test_namespace_info_matches_jax(x64: bool) -> None:
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", x64)
    try:
        with plait.enable_x64(x64):
            ours, theirs = pnp.__array_namespace_info__(), jnp.__array_namespace_info__()
            assert ours.capabilities() == theirs.capabilities()
            assert _result(ours.default_device) is _result(theirs.default_device) is None
            assert ours.default_dtypes() == theirs.default_dtypes()
            kinds: list[Any] = [None, "bool", "signed integer", "unsigned integer", "integral",
                                "real floating", "complex floating", "numeric",
                                ("bool", "real floating")]
            for kind in kinds:
                assert ours.dtypes(kind=kind) == theirs.dtypes(kind=kind), kind
            assert ours.devices()[0] is None and len(ours.devices()) == len(theirs.devices())
    finally:
        jax.config.update("jax_enable_x64", previous)


DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
KINDS: list[Any] = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
                    "complex floating", "numeric", "float32", ("bool", "integral"),
                    (np.int8, "complex floating")]


def test_isdtype_and_can_cast_match_jax() -> None:
    for d, kind in itertools.product(DTYPES, KINDS):
        assert pnp.isdtype(getattr(pnp, d), kind) == jnp.isdtype(getattr(jnp, d), kind), (d, kind)
    for a, b in itertools.product(DTYPES, DTYPES):
        assert pnp.can_cast(a, b) == jnp.can_cast(a, b)
    with pytest.raises(ValueError, match="Unrecognized kind"):
        pnp.isdtype(pnp.float32, "floating")
    with pytest.raises(TypeError):
        pnp.isdtype(pnp.float32, 3.5)


def test_unstack_matvec_vecmat_match_jax() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 3, 4)).astype(np.float32)
    for axis in (0, 1, -1):
        ours, theirs = pnp.unstack(a, axis=axis), jnp.unstack(a, axis=axis)
        assert type(ours) is tuple and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o, t)
    m = (rng.normal(size=(5, 2, 3)) + 1j * rng.normal(size=(5, 2, 3))).astype(np.complex64)
    v = rng.normal(size=(3,)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(pnp.matvec(m, v)), np.asarray(jnp.matvec(m, v)),
                               rtol=1e-6)
    w = (rng.normal(size=(5, 2)) + 1j).astype(np.complex64)
    np.testing.assert_allclose(np.asarray(pnp.vecmat(w, m[:, :, :])),
                               np.asarray(jnp.vecmat(w, m)), rtol=1e-6)
    with pytest.raises(ValueError):
        pnp.unstack(pnp.float32(1))


def test_numpy_helpers_and_scalar_hierarchy_are_jaxs() -> None:
    for name in ("number", "inexact", "floating", "integer", "signedinteger",
                 "unsignedinteger", "complexfloating", "generic", "character", "flexible",
                 "object_", "can_cast", "iterable", "array_repr", "array_str"):
        assert getattr(pnp, name) is getattr(jnp, name), name
    assert pnp.issubdtype(pnp.bfloat16, pnp.floating) and pnp.issubdtype(pnp.int8,
                                                                          pnp.signedinteger)
    values = [1, 1.5, 1j, True, None, "s", np.float32(1), np.complex64(1), np.ones(2),
              np.ones(()), [1, 2], (), slice(3)]
    for v in values:
        assert pnp.isscalar(v) == jnp.isscalar(v), v
        if v is not None and not isinstance(v, str | slice):
            assert pnp.iscomplexobj(v) == jnp.iscomplexobj(v), v
            assert pnp.isrealobj(v) == jnp.isrealobj(v), v
    assert pnp.isscalar(pnp.ones(())) and not pnp.isscalar(pnp.ones(2))
    assert pnp.iscomplexobj(pnp.ones(2, pnp.complex64)) and pnp.isrealobj(pnp.ones(2))
    with pnp.printoptions(precision=2):
        assert np.get_printoptions()["precision"] == 2
    assert pnp.bool is pnp.bool_ and np.dtype(pnp.bool) == np.bool_


def test_dlpack_round_trips() -> None:
    x = pnp.arange(6.0).reshape(2, 3)
    # (jax's Array stub lacks the __dlpack_device__ its implementation has)
    theirs = cast(Any, jnp.ones(1)).__dlpack_device__()
    assert x.__dlpack_device__() == (1, 0) == tuple(theirs)
    back = np.from_dlpack(x)
    np.testing.assert_array_equal(back, np.arange(6.0).reshape(2, 3))
    for data in (np.arange(5, dtype=np.int32), np.array([True, False]),
                 np.ones((2, 2), np.complex64), np.arange(4, dtype=np.uint8)):
        y = pnp.from_dlpack(data)
        assert y.dtype == data.dtype and isinstance(y, plait.Array)
        np.testing.assert_array_equal(y, data)
    with plait.enable_x64(False):
        narrowed = pnp.from_dlpack(np.arange(3.0))
    assert narrowed.dtype == np.float32  # as jnp.from_dlpack without x64
    z = pnp.from_dlpack(pnp.ones(3))  # plait to plait
    np.testing.assert_array_equal(z, np.ones(3))
    with pytest.raises(TypeError, match="__dlpack__"):
        pnp.from_dlpack([1, 2])
    with pytest.raises(TypeError, match="concrete"):
        plait.jit(lambda v: v.__dlpack__())(x)


def test_array_api_keywords_on_creation_and_arrays() -> None:
    dev = plait.devices()[0]
    # (device is a property of concrete arrays, ArrayImpl, not of plait.Array)
    assert cast(ArrayImpl, pnp.zeros(shape=(2,), dtype=pnp.int32, device=dev)).device == dev
    assert pnp.ones((2,), device=None).shape == (2,)
    assert pnp.full(shape=3, fill_value=2.0).tolist() == [2.0, 2.0, 2.0]
    assert pnp.arange(3, device=dev).tolist() == [0, 1, 2]
    assert pnp.eye(2, device=dev).shape == (2, 2)
    assert pnp.reshape(pnp.arange(6), shape=(2, 3), copy=None).shape == (2, 3)
    assert pnp.broadcast_to(pnp.ones(3), shape=(2, 3)).shape == (2, 3)
    x = pnp.ones(3, pnp.int32)
    assert pnp.astype(x, pnp.float32, copy=True, device=dev).dtype == np.float32
    assert pnp.asarray(x, copy=True) is not x
    assert pnp.array(1.0, ndmin=2).shape == (1, 1)
    out, step = pnp.linspace(0.0, 1.0, 5, retstep=True)
    theirs, their_step = jnp.linspace(0.0, 1.0, 5, retstep=True)
    np.testing.assert_array_equal(out, theirs)
    assert float(step) == float(their_step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX's warning for x64 off
        assert np.isnan(float(pnp.linspace(0.0, 1.0, 1, retstep=True)[1]))
    assert (x << 2).tolist() == [4, 4, 4] and (x >> 1).tolist() == [0, 0, 0]
    assert (2 << x).tolist() == [4, 4, 4] and (8 >> x).tolist() == [4, 4, 4]
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 2
    assert x.to_device(dev) is x

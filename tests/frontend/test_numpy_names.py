"""The last jax.numpy names and Array methods (angle, fabs, iscomplex, isreal, ptp, poly,
trim_zeros, frombuffer, fromstring, load/save, the scalar-type aliases; Array.sort, .take,
.view, ...), against JAX 0.10.2."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp

COVERED = {"angle", "fabs", "iscomplex", "isreal", "ptp", "poly", "trim_zeros", "frombuffer",
           "fromstring", "fromfile", "fromiter", "load", "save", "savez", "ndarray"}
"""The plait.numpy functions these tests check against jax.numpy."""

RNG = np.random.default_rng(7)
C = (RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))).astype(np.complex64)
C[0, :2] = [-2.0, 0.0]  # a negative real (angle pi) and zero
F = RNG.normal(size=(3, 4)).astype(np.float32)
N = RNG.integers(-5, 5, size=(3, 4)).astype(np.int32)


def _same(ours: Any, theirs: Any, exact: bool = True) -> None:
    la, lb = plait.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(la) == len(lb)
    for a, b in zip(la, lb):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


FUNCTIONS: list[tuple[str, Callable[[Any], Any], bool]] = [
    ("angle_complex", lambda np_: np_.angle(C), True),
    ("angle_degrees", lambda np_: np_.angle(C, deg=True), False),
    ("angle_int", lambda np_: np_.angle(N), True),
    ("angle_float_scalar", lambda np_: np_.angle(np.float16(-2.0)), True),
    ("angle_float16_array", lambda np_: np_.angle(F.astype(np.float16)), True),
    ("fabs", lambda np_: np_.fabs(N), True),
    ("iscomplex", lambda np_: (np_.iscomplex(C), np_.iscomplex(F)), True),
    ("isreal", lambda np_: (np_.isreal(C), np_.isreal(N)), True),
    ("ptp", lambda np_: (np_.ptp(F), np_.ptp(N, axis=0), np_.ptp(F, axis=1, keepdims=True)),
     True),
    ("poly_roots", lambda np_: np_.poly(np.array([1.0, -2.0, 3.5], np.float32)), False),
    ("poly_complex_roots", lambda np_: np_.poly(C[0]), False),
    ("poly_int_roots", lambda np_: np_.poly(np.array([1, 2])), False),
    ("poly_empty", lambda np_: np_.poly(np.zeros((0,), np.float32)), True),
    ("poly_matrix", lambda np_: np_.poly(np.array([[2.0, 1.0], [0.0, 3.0]], np.float32)),
     False),
    ("trim_zeros", lambda np_: (np_.trim_zeros(np.array([0, 0, 2, 0, 1, 0])),
                                np_.trim_zeros(np.array([0, 0, 2, 0, 1, 0]), "f"),
                                np_.trim_zeros(np.array([0, 0, 2, 0, 1, 0]), "b"),
                                np_.trim_zeros(np.zeros(3))), True),
    ("trim_zeros_2d", lambda np_: np_.trim_zeros(np.pad(np.ones((2, 3)), 1)), True),
    ("frombuffer", lambda np_: np_.frombuffer(np.arange(4, dtype=np.int32).tobytes(),
                                              np.int32, count=2, offset=4), True),
    ("fromstring", lambda np_: np_.fromstring("1 2 3.5", dtype=np.float32, sep=" "), True),
    ("euler_gamma", lambda np_: np_.asarray(np_.euler_gamma), True),
]


@pytest.mark.parametrize("name,fn,exact", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_function_matches_jax(name: str, fn: Callable[[Any], Any], exact: bool) -> None:
    _same(fn(pnp), fn(jnp), exact)


def test_functions_under_jit_match_jax() -> None:
    def f(np_: Any, z: Any, x: Any) -> Any:
        return np_.angle(z), np_.iscomplex(z), np_.ptp(x, axis=0), np_.fabs(x), np_.poly(x[0])

    _same(plait.jit(lambda z, x: f(pnp, z, x))(C, F), jax.jit(lambda z, x: f(jnp, z, x))(C, F),
          exact=False)


def test_angle_gradient_matches_jax() -> None:
    ours = plait.grad(lambda x: pnp.angle(x * (1 + 1j)).real)(0.7)
    theirs = jax.grad(lambda x: jnp.angle(x * (1 + 1j)).real)(0.7)
    np.testing.assert_allclose(ours, theirs)


def test_errors_match_jax() -> None:
    cases: list[Callable[[Any], Any]] = [
        lambda np_: np_.fabs(C),
        lambda np_: np_.poly(np.ones((2, 3))),
        lambda np_: np_.ptp(F, out=np.zeros(4)),
    ]
    for case in cases:
        with pytest.raises(Exception) as theirs:
            case(jnp)
        with pytest.raises(type(theirs.value)) as ours:
            case(pnp)
        assert str(ours.value).replace("plait", "jax") == str(theirs.value), str(ours.value)
    for name in ("fromfile", "fromiter"):
        with pytest.raises(NotImplementedError, match=f"plait.numpy.{name}.. is not implemented"):
            getattr(pnp, name)([1.0])
    with pytest.raises(plait.errors.ConcretizationTypeError):
        plait.jit(pnp.trim_zeros)(np.array([0.0, 1.0]))


@pytest.mark.parametrize("dtype", [np.float32, np.int8, "bfloat16"])
def test_save_and_load_round_trip(dtype: Any) -> None:
    x = pnp.arange(6).astype(dtype).reshape(2, 3)
    buf = io.BytesIO()
    pnp.save(buf, x)
    buf.seek(0)
    ours = pnp.load(buf)
    buf.seek(0)
    theirs = jnp.load(buf)
    _same(ours, theirs)
    assert isinstance(ours, plait.Array)


def test_scalar_type_aliases_are_jax_s() -> None:
    for name in ("double", "single", "csingle", "cdouble", "float_", "complex_", "int_", "uint"):
        assert np.dtype(getattr(pnp, name)) == np.dtype(getattr(jnp, name)), name
    with pytest.warns(UserWarning, match="float64 requested in asarray is not available"):
        ours = pnp.float_(1.5)
    with pytest.warns(UserWarning):
        theirs = jnp.float_(1.5)
    _same(ours, theirs)
    assert isinstance(pnp.ones(2), pnp.ndarray)


A = np.arange(12, dtype=np.int16).reshape(3, 4)[::-1]

METHODS: list[tuple[str, Callable[[Any], Any]]] = [
    ("sort", lambda a: (a.sort(), a.sort(axis=0, descending=True), a.sort(axis=None))),
    ("argsort", lambda a: (a.argsort(), a.argsort(axis=0, stable=True, descending=True))),
    ("argpartition", lambda a: a.argpartition(1, axis=0)),
    ("searchsorted", lambda a: a[0].searchsorted(np.array([8, 9, 20]), side="right")),
    ("nonzero", lambda a: (a - 4).nonzero()),
    ("nonzero_size", lambda a: (a - 4).nonzero(size=13, fill_value=-1)),
    ("take", lambda a: (a.take(np.array([0, 5, 11])), a.take(np.array([2, 0]), axis=1),
                        a.take(np.array([9]), axis=0, mode="fill", fill_value=-7))),
    ("compress", lambda a: a.compress(np.array([True, False, True]), axis=0)),
    ("repeat", lambda a: (a.repeat(2), a.repeat(np.array([1, 0, 2]), axis=0))),
    ("diagonal", lambda a: (a.diagonal(), a.diagonal(1), a.diagonal(0, 1, 0))),
    ("trace", lambda a: (a.trace(), a.trace(1), a.trace(dtype=np.float32))),
    ("ptp", lambda a: (a.ptp(), a.ptp(axis=1, keepdims=True))),
    ("copy_conjugate", lambda a: (a.copy(), a.conjugate())),
    ("view_narrower", lambda a: a.view(np.int8)),
    ("view_wider", lambda a: a.view(np.int32)),
    ("view_same_width", lambda a: a.view(np.float16)),
    ("view_float_to_complex", lambda a: a.astype(np.float32).view(np.complex64)),
    ("view_complex_to_float", lambda a: (a.astype(np.complex64) * 1j).view(np.float32)),
    ("view_bool", lambda a: (a % 2).astype(np.int8).view(np.bool_)),
    ("view_from_bool", lambda a: (a > 3).view(np.uint8)),
    ("view_scalar", lambda a: a[0, 0].view(np.uint16)),
    ("view_none", lambda a: a.view()),
    ("sizes", lambda a: np.array([a.itemsize, a.nbytes, a.astype(np.float32).nbytes])),
]


@pytest.mark.parametrize("name,method", METHODS, ids=[m[0] for m in METHODS])
def test_method_matches_jax(name: str, method: Callable[[Any], Any]) -> None:
    _same(method(pnp.asarray(A)), method(jnp.asarray(A)))


def test_choose_method_matches_jax() -> None:
    index = np.array([0, 1, 0, 1])
    _same(pnp.asarray(index).choose([A[0], A[1]]), jnp.asarray(index).choose([A[0], A[1]]))


def test_methods_under_jit_and_vmap_match_jax() -> None:
    def f(a: Any) -> Any:
        return a.sort(), a.view(np.uint16), a.take(np.array([1, 0])), a.ptp(), a.argsort()

    _same(plait.jit(f)(A), jax.jit(f)(A))
    _same(plait.vmap(f)(A), jax.vmap(f)(A))
    _same(plait.jit(lambda a: a.trace(1))(A), jax.jit(lambda a: a.trace(1))(A))


def test_view_errors_and_host_methods() -> None:
    a = pnp.asarray(A)
    for bad in (lambda x: x[0, 0].view(np.int8), lambda x: x[:, :3].view(np.float32)):
        with pytest.raises(ValueError) as theirs:
            bad(jnp.asarray(A))
        with pytest.raises(ValueError) as ours:
            bad(a)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(NotImplementedError, match="`type` argument of array.view"):
        a.view(np.int8, type=np.ndarray)  # type: ignore[arg-type]  # the error under test
    with pytest.raises(NotImplementedError, match="do not implement the arr.flat property"):
        getattr(a, "flat")  # noqa: B009  (a property that raises)
    assert a.tobytes() == jnp.asarray(A).tobytes() == A.tobytes()
    assert a.is_ready() and a.addressable_data(0) is a
    assert a.on_device_size_in_bytes() == jnp.asarray(A).on_device_size_in_bytes()
    assert a.unsafe_buffer_pointer() != 0
    a.copy_to_host_async()
    np.testing.assert_array_equal(a, A)
    with pytest.raises(IndexError, match=r"expected a shard index in \[0, 1\)"):
        a.addressable_data(1)

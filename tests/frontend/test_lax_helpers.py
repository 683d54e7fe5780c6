"""Small plait.lax helpers against jax.lax 0.10.2: shape computations of convolutions,
broadcast_shapes, broadcast_to_rank and batch_matmul."""

from __future__ import annotations

from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
from jax import lax as jlax

import plait
import plait.lax as plax

jax.config.update("jax_platforms", "cpu")


@pytest.mark.parametrize("args", [
    ((2, 3, 8, 8), (4, 3, 3, 3), (2, 2), ((1, 1), (1, 1))),
    ((2, 3, 8, 8), (4, 3, 3, 3), (2, 1), "SAME"),
    ((4, 3, 7), (6, 3, 2), (1,), "VALID", 2)], ids=["explicit", "same", "batch_groups"])
def test_conv_shape_tuple(args: tuple[Any, ...]) -> None:
    assert plax.conv_shape_tuple(*args) == tuple(int(d) for d in jlax.conv_shape_tuple(*args))


@pytest.mark.parametrize("args", [
    ((2, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC")),
    ((2, 8, 7, 3), (3, 2, 3, 4), (2, 1), ((1, 0), (2, 2)), ("NHWC", "HWIO", "NCHW")),
    ((1, 5, 9, 2), (3, 3, 2, 6), (3, 2), "VALID", ("NHWC", "HWIO", "NHWC"))],
    ids=["same", "explicit_nchw_out", "valid"])
def test_conv_general_and_transpose_shape_tuples(args: tuple[Any, ...]) -> None:
    for name in ("conv_general_shape_tuple", "conv_transpose_shape_tuple"):
        assert getattr(plax, name)(*args) == tuple(int(d) for d in getattr(jlax, name)(*args))
    specs = args[-1]
    assert plax.conv_general_permutations(specs) == jlax.conv_general_permutations(specs)


def test_broadcast_helpers_and_batch_matmul() -> None:
    assert plax.broadcast_shapes((2, 1, 3), (4, 1), ()) == jlax.broadcast_shapes((2, 1, 3),
                                                                                 (4, 1), ())
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: "
                                         r"shapes=\[\(2, 3\), \(4,\)\]"):
        plax.broadcast_shapes((2, 3), (4,))
    x = np.arange(4.0, dtype=np.float32)
    f = lambda L: (lambda v: L.broadcast_to_rank(v, 3))  # noqa: E731
    assert str(plait.make_jaxpr(f(plax))(x)) == str(jax.make_jaxpr(f(jlax))(x))
    assert plax.broadcast_to_rank(x, 1).shape == (4,)
    rng = np.random.default_rng(0)
    a = jax.numpy.asarray(rng.normal(size=(2, 5, 3, 4)).astype(np.float32))
    b = jax.numpy.asarray(rng.normal(size=(2, 5, 4, 6)).astype(np.float32))
    np.testing.assert_allclose(np.asarray(plax.batch_matmul(a, b)),
                               np.asarray(jlax.batch_matmul(a, b)), rtol=1e-5)
    g = plait.grad(lambda u: plax.batch_matmul(u, b).sum())(a)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(
        lambda u: jlax.batch_matmul(u, b).sum())(a)), rtol=1e-5)
    with pytest.raises(ValueError, match="same number of dimensions, got 4 and 3"):
        plax.batch_matmul(a, b[0])


PRECISIONS = [None, "highest", "float32", "high", "tensorfloat32", "bfloat16", "fastest",
              ("highest", "default"), "HIGHEST"]


@pytest.mark.parametrize("precision", PRECISIONS, ids=repr)
def test_precision_is_carried_as_jax_carries_it(precision: Any) -> None:
    def lib_precision(L: Any) -> Any:
        if isinstance(precision, str) and precision.isupper():
            return getattr(L.Precision, precision)
        return precision
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    x = np.ones((1, 5, 5, 2), np.float32)
    w = np.ones((3, 3, 2, 4), np.float32)
    cases = [
        (lambda L, N: (lambda u, v: N.dot(u, v, precision=lib_precision(L))), (a, b)),
        (lambda L, N: (lambda u, v: N.matmul(u, v, precision=lib_precision(L))), (a, b)),
        (lambda L, N: (lambda u, v: N.einsum("ij,jk->ik", u, v, precision=lib_precision(L))),
         (a, b)),
        (lambda L, N: (lambda u, v: L.conv_general_dilated(
            u, v, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
            precision=lib_precision(L))), (x, w)),
    ]
    for make, args in cases:
        ours, theirs = make(plax, plait.numpy), make(jlax, jax.numpy)
        assert str(plait.make_jaxpr(ours)(*args)) == str(jax.make_jaxpr(theirs)(*args))
        loss = lambda f, N: (lambda *v: N.sum(f(*v) ** 2))  # noqa: E731
        ours_grad = plait.grad(loss(ours, plait.numpy), (0, 1))(*args)
        theirs_grad = jax.grad(loss(theirs, jax.numpy), (0, 1))(*args)
        for o, t in zip(ours_grad, theirs_grad):
            np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-5)
    text = plait.jit(cases[0][0](plax, plait.numpy)).lower(a, b).as_text()
    want = jax.jit(cases[0][0](jlax, jax.numpy)).lower(a, b).as_text()
    assert ("precision = " in text) == ("precision = " in want)


def test_bad_precision_is_jax_error() -> None:
    a = np.ones((2, 2), np.float32)
    with pytest.raises(ValueError, match="Precision argument must be one of") as ours:
        plax.dot(a, a, precision="bogus")
    with pytest.raises(ValueError) as theirs:
        jlax.dot(a, a, precision="bogus")
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


_A, _X = np.float32(2.5), np.float32(1.5)


@pytest.mark.parametrize("call", [
    lambda L: L.igamma(a=_A, x=_X), lambda L: L.igammac(a=_A, x=_X),
    lambda L: L.igamma_grad_a(a=_A, x=_X), lambda L: L.polygamma(m=np.float32(1), x=_X),
    lambda L: L.zeta(x=_A, q=_X), lambda L: L.nextafter(x1=_A, x2=_X),
    lambda L: L.dot(np.ones((2, 3, 4), np.float32), np.ones((2, 4), np.float32),
                    dimension_numbers=(((2,), (1,)), ((0,), (0,)))),
    lambda L: L.switch(1, [lambda v: v, lambda v: v * 2], operand=_X),
], ids=["igamma", "igammac", "igamma_grad_a", "polygamma", "zeta", "nextafter", "dot",
        "switch operand="])
def test_jax_keyword_arguments(call: Any) -> None:
    """lax functions called with JAX's parameter names, as programs call them."""
    ours, theirs = call(plax), call(jlax)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype


def test_switch_refuses_operand_and_operands_as_jax() -> None:
    for L in (plax, jlax):
        with pytest.raises(TypeError, match="if 'operand' keyword is passed then no positional"):
            L.switch(0, [lambda v: v], 1.0, operand=2.0)


def test_mul_out_dtype_as_jax() -> None:
    """``lax.mul(..., out_dtype=)``: the product in a wider dtype (no int8 overflow), and
    its gradient back in the operands' dtype."""
    big = np.full(3, 100, np.int8)
    ours, theirs = plax.mul(big, big, out_dtype=np.int32), jlax.mul(big, big, out_dtype=np.int32)
    assert ours.dtype == theirs.dtype and np.array_equal(np.asarray(ours), np.asarray(theirs))
    bf = np.linspace(1, 2, 3).astype(ml_dtypes.bfloat16)

    def loss(lib: Any, lax: Any) -> Any:
        return lib.grad(lambda x, y: lax.mul(x, y, out_dtype=np.float32).sum(), (0, 1))

    for o, t in zip(loss(plait, plax)(bf, bf * 2), loss(jax, jlax)(bf, bf * 2)):
        assert o.dtype == t.dtype
        np.testing.assert_array_equal(np.asarray(o, np.float32), np.asarray(t, np.float32))

"""``lax.dot_general`` of operands of different dtypes, against JAX 0.10.2: the result
takes the more precise dtype (XLA's order), eagerly, under ``jit``, ``grad`` and ``vmap``;
the printed gradient matches JAX's; ties and narrow preferred types are refused."""

from __future__ import annotations

from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import plait
from plait.ir import eval_closed_jaxpr
from tests.frontend.jax_oracle import assert_close, raised

DN = (((1,), (0,)), ((), ()))

PAIRS = [("float32", "int32"), ("int32", "float32"), ("bfloat16", "float32"),
         ("float16", "bfloat16"), ("int8", "int32"), ("uint8", "int8"), ("uint32", "int32"),
         ("int32", "bool"), ("bool", "uint8"), ("complex64", "float32"),
         ("float32", "float16"), ("int4", "int8")]


def _operands(a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(len(a) * 7 + len(b))
    x = rng.integers(-3, 4, (2, 3)) if a != "bool" else rng.integers(0, 2, (2, 3))
    y = rng.integers(0, 4, (3, 4)) if b != "bool" else rng.integers(0, 2, (3, 4))
    return x.astype(np.dtype(a)), y.astype(np.dtype(b))


@pytest.mark.parametrize("a,b", PAIRS)
def test_result_dtype_and_values_as_jax(a: str, b: str) -> None:
    x, y = _operands(a, b)
    want = jax.lax.dot_general(x, y, DN)
    for fn in (plait.lax.dot_general, plait.jit(plait.lax.dot_general, static_argnums=2)):
        got = fn(x, y, DN)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_reference_interpreter_agrees() -> None:
    x, y = _operands("bfloat16", "float32")
    jaxpr = plait.make_jaxpr(lambda x, y: plait.lax.dot_general(x, y, DN))(x, y)
    got = eval_closed_jaxpr(jaxpr, x, y)[0]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.asarray(jax.lax.dot_general(x, y, DN)))


def _loss(L: Any) -> Any:
    return lambda x, w: L.numpy.sum(L.numpy.sin(L.lax.dot_general(x, w, DN)))


@pytest.mark.parametrize("a,b", [("bfloat16", "float32"), ("float32", "float16")])
def test_gradients_and_printed_jaxpr_as_jax(a: str, b: str) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3)).astype(np.dtype(a))
    w = rng.standard_normal((3, 4)).astype(np.dtype(b))
    got = plait.grad(_loss(plait), argnums=(0, 1))(x, w)
    want = jax.grad(_loss(jax), argnums=(0, 1))(x, w)
    for g, v in zip(got, want):
        assert g.dtype == v.dtype
        assert_close(np.asarray(g, np.float32), np.asarray(v, np.float32), rtol=1e-2, atol=1e-2)
    # The backward pass contracts the operands as they are (no conversions), as JAX's.
    def backward(L: Any) -> list[tuple[str, str, Any]]:
        closed = L.make_jaxpr(L.grad(lambda x, w: L.lax.dot_general(x, w, DN).sum(),
                                     argnums=(0, 1)))(x, w)
        return [(e.primitive.name, str(e.outvars[0].aval.str_short(short_dtypes=True)),
                 e.params.get("preferred_element_type")) for e in closed.jaxpr.eqns
                if e.primitive.name not in ("reduce_sum",)][-5:]
    assert backward(plait) == backward(jax)


def test_int_operand_gradient_and_vmap() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    w = rng.integers(-3, 3, (3, 4)).astype(np.int32)
    assert_close(plait.grad(_loss(plait))(x[0], w), jax.grad(_loss(jax))(x[0], w))
    got = plait.vmap(lambda x: plait.lax.dot_general(x, w, DN))(x)
    np.testing.assert_array_equal(np.asarray(got),
                                  np.asarray(jax.vmap(lambda x: jax.lax.dot_general(x, w, DN))(x)))
    ws = np.stack([w, -w])
    got = plait.vmap(lambda w: plait.lax.dot_general(x[0], w, DN))(ws)
    np.testing.assert_array_equal(
        np.asarray(got), np.asarray(jax.vmap(lambda w: jax.lax.dot_general(x[0], w, DN))(ws)))
    t = plait.jvp(lambda x: plait.lax.dot_general(x, w, DN), (x[0],), (x[1],))[1]
    assert_close(t, jax.jvp(lambda x: jax.lax.dot_general(x, w, DN), (x[0],), (x[1],))[1])


def test_equally_precise_dtypes_are_refused() -> None:
    x = np.ones((2, 3), ml_dtypes.float8_e5m2)
    y = np.ones((3, 4), ml_dtypes.float8_e5m2fnuz)
    assert isinstance(raised(lambda: jax.lax.dot_general(x, y, DN)), TypeError)
    with pytest.raises(TypeError, match="expected operands of equal dtypes, or one more "
                       "precise than the other, but got float8_e5m2 and float8_e5m2fnuz"):
        plait.lax.dot_general(x, y, DN)


def test_narrower_preferred_integer_type_is_refused() -> None:
    x = np.ones((2, 3), np.int32)
    y = np.ones((3, 4), np.int8)
    assert isinstance(raised(lambda: jax.lax.dot_general(x, y, DN, preferred_element_type=np.int8)),
                      TypeError)
    with pytest.raises(TypeError, match="expected a preferred_element_type at least as wide as "
                       "the operands' int32, but got int8"):
        plait.lax.dot_general(x, y, DN, preferred_element_type=np.int8)
    # A narrower float is a rounding the user asked for: allowed, as in JAX.
    f = np.ones((2, 3), np.float32)
    got = plait.lax.dot_general(f, f.T, DN, preferred_element_type=ml_dtypes.bfloat16)
    assert got.dtype == jax.lax.dot_general(f, f.T, DN,
                                            preferred_element_type=ml_dtypes.bfloat16).dtype


@pytest.mark.parametrize("pet", [None, "float32", "float16"])
@pytest.mark.parametrize("weak", [(True, True), (True, False)])
def test_weak_type_of_the_result_as_jax(pet: str | None, weak: tuple[bool, bool]) -> None:
    """Weak when both operands are, whatever ``preferred_element_type`` (``jnp.vdot`` of
    two Python floats is weak)."""
    def f(L: Any, lax: Any) -> Any:
        x, y = (L.ravel(2.0) if w else L.ones(1) for w in weak)
        return lax.dot_general(x, y, (((0,), (0,)), ((), ())), preferred_element_type=pet)

    ours, theirs = f(plait.numpy, plait.lax), f(jax.numpy, jax.lax)
    assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type)
    assert plait.numpy.vdot(2.0, 3.0).weak_type == jax.numpy.vdot(2.0, 3.0).weak_type

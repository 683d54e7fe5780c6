"""``lax.bitcast_convert_type``, ``reduce_precision``, ``mulhi``, ``optimization_barrier``,
``rng_bit_generator`` and ``rng_uniform`` against real JAX: values eager and under jit,
printed jaxprs, derivatives, vmap and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import plait
from plait import lax

jax.config.update("jax_platforms", "cpu")

_X = np.array([1.5, -2.25, 3.0, 1e-3, 65519.0], np.float32)
_KEY = np.array([1, 2, 3, 0xFFFFFFFF], np.uint32)
BF16 = np.dtype(ml_dtypes.bfloat16)


def _same_jaxpr(f: Callable[..., Any], g: Callable[..., Any], *args: Any) -> None:
    assert str(plait.make_jaxpr(f)(*args)) == str(jax.make_jaxpr(g)(*args))


def _same_values(f: Callable[..., Any], g: Callable[..., Any], *args: Any) -> None:
    want = jax.tree_util.tree_leaves(g(*args))
    for got in (f(*args), plait.jit(f)(*args)):
        leaves = jax.tree_util.tree_leaves(got)
        assert len(leaves) == len(want)
        for a, b in zip(leaves, want):
            a, b = np.asarray(a), np.asarray(b)
            assert (a.dtype, a.shape) == (b.dtype, b.shape)
            assert a.tobytes() == b.tobytes()


# ----------------------------------------------------------------------------- bitcast

@pytest.mark.parametrize("src,dst,shape", [
    (np.float32, np.int32, (2, 3)), (np.float32, np.uint8, (3,)), (np.uint8, np.float32, (2, 4)),
    (np.int16, BF16, (3,)), (np.float16, np.int8, ()), (np.uint16, np.uint32, (5, 2)),
    (np.int32, np.uint32, ())])
def test_bitcast_convert_type_matches_jax(src: Any, dst: Any, shape: tuple[int, ...]) -> None:
    x = np.arange(1, 1 + int(np.prod(shape, dtype=int))).reshape(shape).astype(src)
    _same_values(lambda v: lax.bitcast_convert_type(v, dst),
                 lambda v: jax.lax.bitcast_convert_type(v, dst), x)
    _same_jaxpr(lambda v: lax.bitcast_convert_type(v, dst),
                lambda v: jax.lax.bitcast_convert_type(v, dst), x)


def test_bitcast_convert_type_has_zero_derivative_and_vmaps() -> None:
    def f(v: Any, m: Any) -> Any:
        return m.bitcast_convert_type(v, np.float32) * 2.0
    assert np.array_equal(plait.grad(lambda v: f(v, lax).sum())(_X),
                          jax.grad(lambda v: f(v, jax.lax).sum())(_X))
    x = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    for axis, dst in [(0, np.uint32), (1, np.uint32), (2, np.int8), (0, np.float16)]:
        v = x if dst != np.float16 else x.view(np.uint16)
        got = plait.vmap(lambda v, d=dst: lax.bitcast_convert_type(v, d), axis)(v)
        want = jax.vmap(lambda v, d=dst: jax.lax.bitcast_convert_type(v, d), axis)(v)
        assert np.array_equal(np.asarray(got), want)
    # Widening with the batch dimension last (JAX's rule would consume it): per example.
    y = np.moveaxis(x, 1, 2).copy()  # (2, 4, 3): examples (2, 4) along axis 2
    wide = plait.vmap(lambda v: lax.bitcast_convert_type(v, np.uint32), 2)(y)
    assert np.array_equal(np.asarray(wide), np.stack([y[:, :, i].copy().view(np.uint32)[:, 0]
                                          for i in range(3)]))


def test_bitcast_convert_type_errors() -> None:
    with pytest.raises(TypeError, match="expected bool or complex operands"):
        lax.bitcast_convert_type(np.ones(3, bool), np.uint8)
    with pytest.raises(TypeError, match="expected a trailing dimension of 4"):
        lax.bitcast_convert_type(np.ones(3, np.uint8), np.float32)
    with pytest.raises(TypeError, match="expected a trailing dimension"):
        lax.bitcast_convert_type(np.uint8(1), np.uint16)


# ----------------------------------------------------------------------------- reduce_precision

@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16])
@pytest.mark.parametrize("bits", [(5, 10), (8, 7), (4, 3), (2, 0), (11, 52)])
def test_reduce_precision_matches_jax(dtype: Any, bits: tuple[int, int]) -> None:
    x = np.concatenate([_X, [np.inf, -np.inf, np.nan, 0.0, -0.0, 6e-5, 1e-8]]).astype(dtype)
    _same_values(lambda v: lax.reduce_precision(v, *bits),
                 lambda v: jax.lax.reduce_precision(v, *bits), x)


def test_reduce_precision_jaxpr_derivatives_and_vmap() -> None:
    _same_jaxpr(lambda v: lax.reduce_precision(v, 5, 10),
                lambda v: jax.lax.reduce_precision(v, 5, 10), _X)
    _same_jaxpr(lambda v: lax.reduce_precision(v, 5, 10),
                lambda v: jax.lax.reduce_precision(v, 5, 10), 1.0)
    t = _X[::-1].copy()
    got = plait.jvp(lambda v: lax.reduce_precision(v, 5, 10), (_X,), (t,))
    want = jax.jvp(lambda v: jax.lax.reduce_precision(v, 5, 10), (_X,), (t,))
    assert all(np.array_equal(np.asarray(a), b) for a, b in zip(got, want))
    _same_jaxpr(lambda v, s: plait.jvp(lambda w: lax.reduce_precision(w, 5, 10), (v,), (s,)),
                lambda v, s: jax.jvp(lambda w: jax.lax.reduce_precision(w, 5, 10), (v,), (s,)),
                _X, t)
    g = plait.grad(lambda v: (lax.reduce_precision(v * 3.0, 5, 2) * t).sum())(_X)
    assert np.array_equal(g, jax.grad(lambda v: (jax.lax.reduce_precision(v * 3.0, 5, 2)
                                                 * t).sum())(_X))
    xs = np.stack([_X, t])
    assert np.array_equal(np.asarray(plait.vmap(lambda v: lax.reduce_precision(v, 4, 3), 1)(xs)),
                          jax.vmap(lambda v: jax.lax.reduce_precision(v, 4, 3), 1)(xs))


def test_reduce_precision_errors() -> None:
    with pytest.raises(TypeError, match="expected a floating dtype"):
        lax.reduce_precision(np.ones(3, np.int32), 5, 10)
    with pytest.raises(TypeError, match="expected a positive int exponent_bits"):
        lax.reduce_precision(_X, 0, 10)
    with pytest.raises(TypeError, match="expected a non-negative int mantissa_bits"):
        lax.reduce_precision(_X, 5, -1)


# ----------------------------------------------------------------------------- mulhi

@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.uint16])
def test_mulhi_matches_jax(dtype: Any) -> None:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    x, y = (rng.integers(info.min, info.max, 20, endpoint=True).astype(dtype) for _ in "xy")
    x[:2], y[:2] = info.min, info.max
    _same_values(lax.mulhi, jax.lax.mulhi, x, y)
    _same_jaxpr(lax.mulhi, jax.lax.mulhi, x, y)
    if dtype == np.int32:  # (JAX refuses a Python int with narrower integer arrays)
        _same_values(lambda a: lax.mulhi(a, 3), lambda a: jax.lax.mulhi(a, 3), x)
    xs = np.stack([x, y])
    assert np.array_equal(np.asarray(plait.vmap(lax.mulhi, (0, None))(xs, y)),
                          jax.vmap(jax.lax.mulhi, (0, None))(xs, y))


def test_mulhi_errors() -> None:
    with pytest.raises(TypeError, match="expected an integer dtype"):
        lax.mulhi(_X, _X)
    with pytest.raises(TypeError, match="expected operands of equal dtypes"):
        lax.mulhi(np.ones(3, np.int32), np.ones(3, np.uint32))


# ----------------------------------------------------------------------------- barrier

def test_optimization_barrier_matches_jax() -> None:
    def f(m: Any) -> Callable[..., Any]:
        return lambda x, i: m.optimization_barrier({"a": (x * 2.0, i), "b": [x]})
    i = np.arange(3, dtype=np.int32)
    _same_values(f(lax), f(jax.lax), _X, i)
    _same_jaxpr(f(lax), f(jax.lax), _X, i)
    assert lax.optimization_barrier(()) == ()


def test_optimization_barrier_derivatives_and_vmap() -> None:
    t = _X * 0.5

    def h(m: Any) -> Callable[..., Any]:
        return lambda v: m.optimization_barrier((jnp.sin(v) if m is jax.lax else
                                                 plait.numpy.sin(v), v * 2.0))
    _same_jaxpr(lambda v, s: plait.jvp(h(lax), (v,), (s,)),
                lambda v, s: jax.jvp(h(jax.lax), (v,), (s,)), _X, t)
    got = plait.jvp(h(lax), (_X,), (t,))
    want = jax.jvp(h(jax.lax), (_X,), (t,))
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    g = plait.grad(lambda v: sum(o.sum() for o in h(lax)(v)))(_X)
    np.testing.assert_allclose(g, jax.grad(lambda v: sum(o.sum() for o in h(jax.lax)(v)))(_X),
                               rtol=1e-6)
    xs = np.stack([_X, t])
    for a, b in zip(plait.vmap(h(lax), 1)(xs), jax.vmap(h(jax.lax), 1)(xs)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


# ----------------------------------------------------------------------------- rng

@pytest.mark.parametrize("algorithm", list(jax.lax.RandomAlgorithm))
@pytest.mark.parametrize("dtype", [np.uint32, np.uint8, np.uint16])
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 5), (0,)])
def test_rng_bit_generator_equals_jax_bit_for_bit(algorithm: Any, dtype: Any,
                                                  shape: tuple[int, ...]) -> None:
    alg = lax.RandomAlgorithm(int(algorithm))
    _same_values(lambda k: lax.rng_bit_generator(k, shape, dtype, alg),
                 lambda k: jax.lax.rng_bit_generator(k, shape, dtype, algorithm), _KEY)


def test_rng_bit_generator_jaxpr_and_algorithm_printing() -> None:
    for alg in lax.RandomAlgorithm:
        jalg = jax.lax.RandomAlgorithm(int(alg))
        assert str(alg) == str(jalg)
        _same_jaxpr(lambda k, a=alg: lax.rng_bit_generator(k, (2, 3), np.uint8, a),
                    lambda k, a=jalg: jax.lax.rng_bit_generator(k, (2, 3), np.uint8, a), _KEY)
    _same_jaxpr(lambda k: lax.rng_bit_generator(k, (4,)),
                lambda k: jax.lax.rng_bit_generator(k, (4,)), _KEY)


def test_rng_bit_generator_vmap_is_jaxs_first_key_rule() -> None:
    keys = np.stack([_KEY, _KEY + 1, _KEY + 7])
    for axis in (0, 1):
        ks = np.moveaxis(keys, 0, axis)
        got = plait.vmap(lambda k: lax.rng_bit_generator(k, (2, 3)), axis)(ks)
        want = jax.vmap(lambda k: jax.lax.rng_bit_generator(k, (2, 3)), axis)(ks)
        for a, b in zip(got, want):
            assert np.array_equal(np.asarray(a), b)


def test_rng_bit_generator_has_no_derivative_and_checks_its_arguments() -> None:
    def f(m: Any) -> Callable[..., Any]:
        return lambda v: (m.rng_bit_generator(_KEY, (5,))[1].astype(np.float32) * v).sum()
    np.testing.assert_allclose(plait.grad(f(lax))(_X), jax.grad(f(jax.lax))(_X), rtol=1e-6)
    with pytest.raises(TypeError, match="unsupported dtype"):
        lax.rng_bit_generator(_KEY, (3,), np.int32)
    with pytest.raises(TypeError, match=r"expected a u32\[4\] or u64\[2\] key"):
        lax.rng_bit_generator(_KEY[:3], (3,))


def test_rng_uniform() -> None:
    _same_jaxpr(lambda: lax.rng_uniform(0.0, 1.0, (3,)),
                lambda: jax.lax.rng_uniform(0.0, 1.0, (3,)))
    for dtype, lo, hi in [(np.float32, -2.0, 3.0), (np.float16, 1.0, 2.0), (np.int32, -5, 9),
                          (np.uint32, 3, 7)]:
        a, b = np.array(lo, dtype), np.array(hi, dtype)
        for res in (lax.rng_uniform(a, b, (200,)), plait.jit(lax.rng_uniform,
                                                             static_argnums=2)(a, b, (200,))):
            out = np.asarray(res)
            assert out.dtype == dtype and out.shape == (200,)
            assert (out >= lo).all() and (out <= hi).all() and len(np.unique(out)) > 1
    same = np.array(2.5, np.float32)
    assert np.array_equal(np.asarray(lax.rng_uniform(same, same, (4,))),
                          np.full(4, 2.5, np.float32))
    with pytest.raises(TypeError, match="expected scalar bounds"):
        lax.rng_uniform(np.zeros(2, np.float32), np.float32(1), (3,))
    with pytest.raises(TypeError, match="expected a float or a 32- or 64-bit integer"):
        lax.rng_uniform(np.int8(0), np.int8(3), (3,))
    with pytest.raises(NotImplementedError, match="Batching rule for 'rng_uniform'"):
        plait.vmap(lambda a: lax.rng_uniform(a, 1.0, (3,)))(np.zeros(2, np.float32))

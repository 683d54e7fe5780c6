"""plait.random's keys and samplers against jax.random 0.10.2: equal bit for bit for the
same key, eagerly, under jit and under vmap over keys; the printed jaxprs; the key
primitives' reference rules; JAX's errors for bad keys."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import jax.random as jr
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings

import plait
import plait.numpy as pnp
import plait.random as pr
from plait.errors import JaxprTypeError
from plait.ir import check_jaxpr, eval_jaxpr
from plait.transforms import physicalize

jax.config.update("jax_platforms", "cpu")

BF16 = np.dtype(ml_dtypes.bfloat16)


def assert_same(ours: Any, theirs: Any) -> None:
    """Equal dtypes, shapes and bits (key arrays compared by their data)."""
    if hasattr(ours, "dtype") and str(getattr(theirs, "dtype", "")).startswith("key<"):
        ours, theirs = pr.key_data(ours), jr.key_data(theirs)
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


# Each case: a name and fn(random_module, key) -> result, the same code for both libraries.
CASES: dict[str, Callable[[Any, Any], Any]] = {
    "split": lambda r, k: r.split(k),
    "split_shape": lambda r, k: r.split(k, (2, 3)),
    "fold_in": lambda r, k: r.fold_in(k, 12345),
    "fold_in_big": lambda r, k: r.fold_in(k, 2 ** 32 - 1),
    "clone": lambda r, k: r.clone(k),
    "bits_u32": lambda r, k: r.bits(k, (4, 5)),
    "bits_u8": lambda r, k: r.bits(k, (7,), np.uint8),
    "bits_u16": lambda r, k: r.bits(k, (3, 2), np.uint16),
    "bits_scalar": lambda r, k: r.bits(k),
    "uniform": lambda r, k: r.uniform(k, (3, 4)),
    "uniform_bf16": lambda r, k: r.uniform(k, (9,), BF16),
    "uniform_f16": lambda r, k: r.uniform(k, (9,), np.float16),
    "uniform_bounds": lambda r, k: r.uniform(k, (2, 3), minval=np.array([-1.0, 0.0, 2.0]),
                                             maxval=5.0),
    "uniform_empty": lambda r, k: r.uniform(k, (0, 3)),
    "normal": lambda r, k: r.normal(k, (5, 2)),
    "normal_scalar": lambda r, k: r.normal(k),
    "normal_bf16": lambda r, k: r.normal(k, (6,), BF16),
    "normal_c64": lambda r, k: r.normal(k, (4,), np.complex64),
    "randint": lambda r, k: r.randint(k, (6,), 0, 10),
    "randint_negative": lambda r, k: r.randint(k, (6,), -50, 50),
    "randint_u8_full": lambda r, k: r.randint(k, (9,), 0, 256, np.uint8),
    "randint_i8": lambda r, k: r.randint(k, (9,), -100, 100, np.int8),
    "randint_empty_range": lambda r, k: r.randint(k, (4,), 5, 5),
    "randint_array_bounds": lambda r, k: r.randint(k, (2, 3), np.array([0, 10, 20]), 30),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.3, (10,)),
    "bernoulli_p_array": lambda r, k: r.bernoulli(k, np.array([0.1, 0.5, 0.9], np.float32)),
    "bernoulli_high": lambda r, k: r.bernoulli(k, 0.3, (10,), mode="high"),
    "categorical": lambda r, k: r.categorical(k, np.linspace(-1, 1, 20, dtype=np.float32)
                                              .reshape(4, 5)),
    "categorical_axis0": lambda r, k: r.categorical(
        k, np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5), axis=0, shape=(3, 5)),
    "categorical_no_replace": lambda r, k: r.categorical(
        k, np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5), shape=(2, 4),
        replace=False),
    "gumbel": lambda r, k: r.gumbel(k, (6,)),
    "gumbel_high": lambda r, k: r.gumbel(k, (6,), mode="high"),
    "exponential": lambda r, k: r.exponential(k, (6,)),
    "laplace": lambda r, k: r.laplace(k, (6,)),
    "logistic": lambda r, k: r.logistic(k, (6,)),
    "cauchy": lambda r, k: r.cauchy(k, (6,)),
    "truncated_normal": lambda r, k: r.truncated_normal(k, -1.0, 2.0, (6,)),
    "truncated_normal_bounds": lambda r, k: r.truncated_normal(
        k, np.array([-2.0, 0.0], np.float32), 1.0),
    "rademacher": lambda r, k: r.rademacher(k, (6,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1701])
def test_eager_matches_jax(name: str, seed: int) -> None:
    fn = CASES[name]
    assert_same(fn(pr, pr.key(seed)), fn(jr, jr.key(seed)))


@pytest.mark.parametrize("name", ["split", "fold_in", "bits_u8", "uniform", "normal", "randint",
                                  "bernoulli", "categorical", "truncated_normal"])
def test_jit_matches_jax(name: str) -> None:
    fn = CASES[name]
    assert_same(plait.jit(lambda k: fn(pr, k))(pr.key(3)), jax.jit(lambda k: fn(jr, k))(jr.key(3)))


@pytest.mark.parametrize("name", ["split", "fold_in", "bits_u16", "uniform", "normal_c64",
                                  "randint", "bernoulli", "gumbel"])
def test_vmap_over_keys_matches_jax(name: str) -> None:
    fn = CASES[name]
    ours = plait.vmap(lambda k: fn(pr, k))(pr.split(pr.key(4), 3))
    assert_same(ours, jax.vmap(lambda k: fn(jr, k))(jr.split(jr.key(4), 3)))


@pytest.mark.parametrize("name", ["split", "normal", "randint"])
def test_raw_keys_match_jax(name: str) -> None:
    fn = CASES[name]
    ours, theirs = fn(pr, pr.PRNGKey(9)), fn(jr, jr.PRNGKey(9))
    assert_same(ours, theirs)
    assert ours.dtype == theirs.dtype  # raw keys in, raw keys out


@given(seed=st.integers(-2 ** 31, 2 ** 31 - 1),
       shape=st.lists(st.integers(0, 4), max_size=3).map(tuple))
@settings(max_examples=15, deadline=None)
def test_keys_and_bits_match_jax_for_any_seed_and_shape(seed: int, shape: tuple[int, ...]
                                                        ) -> None:
    assert_same(pr.PRNGKey(seed), jr.PRNGKey(seed))
    assert_same(pr.bits(pr.key(seed), shape), jr.bits(jr.key(seed), shape))
    assert_same(pr.split(pr.key(seed), shape), jr.split(jr.key(seed), shape))


def test_vmap_of_fold_in_and_split_over_keys_and_messages() -> None:
    keys, jkeys = pr.split(pr.key(0), 5), jr.split(jr.key(0), 5)
    msgs = np.arange(5, dtype=np.uint32)
    assert_same(plait.vmap(pr.fold_in)(keys, msgs), jax.vmap(jr.fold_in)(jkeys, msgs))
    assert_same(plait.vmap(pr.fold_in, (None, 0))(pr.key(1), msgs),
                jax.vmap(jr.fold_in, (None, 0))(jr.key(1), msgs))
    assert_same(plait.vmap(pr.split)(keys), jax.vmap(jr.split)(jkeys))
    assert_same(plait.vmap(pr.key_data)(keys), jax.vmap(jr.key_data)(jkeys))
    data = np.asarray(jr.key_data(jkeys))
    assert_same(plait.vmap(pr.wrap_key_data)(pnp.asarray(data)),
                jax.vmap(jr.wrap_key_data)(jnp.asarray(data)))


def test_key_arrays_index_reshape_and_combine_like_jax() -> None:
    keys, jkeys = pr.split(pr.key(2), 6), jr.split(jr.key(2), 6)
    idx = np.array([5, 0, 3])
    a, b = pr.split(pr.key(2))
    ja, jb = jr.split(jr.key(2))
    assert_same(b, jb)
    assert_same(keys[2], jkeys[2])
    assert_same(keys[1:5:2], jkeys[1:5:2])
    assert_same(keys[::-1], jkeys[::-1])
    assert_same(keys[idx], jkeys[idx])
    assert_same(keys.reshape(2, 3).T, jkeys.reshape(2, 3).T)
    assert_same(keys.at[idx].set(keys[:3]), jkeys.at[idx].set(jkeys[:3]))
    assert_same(pnp.stack([a, b]), jnp.stack([ja, jb]))
    assert_same(pnp.concatenate([keys, keys[:2]]), jnp.concatenate([jkeys, jkeys[:2]]))
    assert_same(pnp.where(np.array([True, False, True, False, True, False]), keys, keys[::-1]),
                jnp.where(np.array([True, False, True, False, True, False]), jkeys, jkeys[::-1]))
    assert_same(pnp.broadcast_to(a, (2, 3)), jnp.broadcast_to(ja, (2, 3)))
    assert_same(plait.jit(lambda ks, i: ks[i])(keys, 4), jkeys[4])


def test_keys_flow_through_jit_and_loops() -> None:
    key, jkey = pr.key(5), jr.key(5)
    same = plait.jit(lambda k: k)(key)
    assert same.dtype == key.dtype and same.shape == ()
    assert_same(same, jkey)

    def body(r: Any) -> Callable[[Any, Any], Any]:
        def step(carry: Any, k: Any) -> Any:
            k1, k2 = r.split(k)
            return carry + r.normal(k1), k2
        return step

    ours = plait.lax.scan(body(pr), 0.0, pr.split(key, 4))
    theirs = jax.lax.scan(body(jr), 0.0, jr.split(jkey, 4))
    assert_same(ours[0], theirs[0])
    assert_same(ours[1], theirs[1])
    loop = plait.jit(lambda k: plait.lax.fori_loop(0, 3, lambda i, k: pr.split(k)[0], k))
    jloop = jax.jit(lambda k: jax.lax.fori_loop(0, 3, lambda i, k: jr.split(k)[0], k))
    assert_same(loop(key), jloop(jkey))
    # A key closed over by a traced function is a constant of the program.
    assert_same(plait.jit(lambda x: x + pr.normal(key, (3,)))(1.0),
                jax.jit(lambda x: x + jr.normal(jkey, (3,)))(1.0))


def test_samples_are_constants_under_grad() -> None:
    ours = plait.grad(lambda x: (x * pr.normal(pr.key(0), (3,))).sum())(1.0)
    theirs = jax.grad(lambda x: (x * jr.normal(jr.key(0), (3,))).sum())(1.0)
    # (The sum of the samples: XLA may add them in another order than JAX's program.)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    out, tangent = plait.jvp(lambda x: x + pr.uniform(pr.key(1), (2,)), (1.0,), (1.0,))
    np.testing.assert_array_equal(np.asarray(tangent), np.ones(2, np.float32))


@pytest.mark.parametrize("fn", [
    lambda r: r.key(0),
    lambda r: r.PRNGKey(0),
    lambda r: r.split(r.key(0)),
    lambda r: r.split(r.key(0), 4)[1:3],
    lambda r: r.fold_in(r.key(0), 3),
    lambda r: r.bits(r.PRNGKey(0), (3,)),
    lambda r: r.normal(r.key(0), (3,)),
    lambda r: r.bernoulli(r.key(0), 0.3, (3,)),
], ids=["key", "PRNGKey", "split", "slice", "fold_in", "raw_bits", "normal", "bernoulli"])
def test_printed_jaxpr_matches_jax(fn: Callable[[Any], Any]) -> None:
    assert str(plait.make_jaxpr(lambda: fn(pr))()) == str(jax.make_jaxpr(lambda: fn(jr))())


def test_key_arrays_print_like_jax() -> None:
    assert repr(pr.key(0)) == repr(jr.key(0))
    assert repr(pr.split(pr.key(0), 3)) == repr(jr.split(jr.key(0), 3))
    assert str(pr.key(1)) == str(jr.key(1))
    assert f"{pr.key(2)}" == f"{jr.key(2)}" and f"{pr.split(pr.key(2))}" == f"{jr.split(jr.key(2))}"
    assert pr.key_impl(pr.key(0)) == jr.key_impl(jr.key(0)) == "threefry2x32"


@pytest.mark.parametrize("fn", [
    lambda k: pr.key_data(pr.split(k, (2, 3))),
    lambda k: pr.key_data(pr.fold_in(k, 7)),
    lambda k: pr.bits(k, (3, 2), np.uint16),
    lambda k: pr.bits(k, (4,)),
    lambda k: pr.uniform(k, (5,)),
    lambda k: pr.randint(k, (5,), 0, 100),
    lambda k: pr.key_data(pr.split(k)[1]),
    lambda k: pr.split(k, 3) == pr.split(k, 3)[::-1],
    lambda k: pr.split(k, (2, 3))[0, 1] != pr.split(k, (2, 3)),
], ids=["split", "fold_in", "bits16", "bits32", "uniform", "randint", "index", "eq", "ne"])
def test_reference_interpreter_matches_compiled(fn: Callable[[Any], Any]) -> None:
    key = pr.key(11)
    closed = plait.make_jaxpr(fn)(key)
    physical = physicalize(closed)
    check_jaxpr(physical.jaxpr)
    assert not any("key<" in str(v.aval) for v in physical.jaxpr.invars)
    ref = eval_jaxpr(closed.jaxpr, closed.consts, np.asarray(key))
    np.testing.assert_array_equal(ref[0], np.asarray(fn(key)))


@pytest.mark.parametrize("fn", [
    lambda R, k: R.split(k, 3) == R.split(k, 3)[::-1],
    lambda R, k: R.split(k, (2, 3))[0, 1] != R.split(k, (2, 3)),
    lambda R, k: R.fold_in(k, 1) == k,
    lambda R, k: (R.split(k, 2) == R.split(k, 2)).all(),
], ids=["eq", "ne broadcast", "eq scalar", "all"])
def test_keys_compare_as_jax(fn: Callable[[Any, Any], Any]) -> None:
    """``==`` and ``!=`` of key arrays (chex compares trees holding keys): eagerly, under
    ``jit`` and ``vmap``."""
    assert_same(fn(pr, pr.key(3)), fn(jr, jr.key(3)))
    assert_same(plait.jit(partial(fn, pr))(pr.key(3)), jax.jit(partial(fn, jr))(jr.key(3)))
    assert_same(plait.vmap(partial(fn, pr))(pr.split(pr.key(5), 4)),
                jax.vmap(partial(fn, jr))(jr.split(jr.key(5), 4)))


def test_key_comparisons_print_as_jax() -> None:
    def f(a: Any, b: Any) -> Any:
        return a == b, a[0] != b

    assert str(plait.make_jaxpr(f)(pr.split(pr.key(0)), pr.split(pr.key(1)))) == \
        str(jax.make_jaxpr(f)(jr.split(jr.key(0)), jr.split(jr.key(1))))


def test_keys_of_two_implementations_do_not_compare() -> None:
    with pytest.raises(TypeError):
        pr.key(0) == pr.key(0, impl="rbg")  # noqa: B015


def test_physicalize_leaves_programs_without_keys_alone() -> None:
    closed = plait.make_jaxpr(lambda x: pnp.sin(x) * 2)(1.0)
    assert physicalize(closed) is closed


def test_bad_keys_raise_jax_errors() -> None:
    with pytest.raises(TypeError, match=r"expected key_data.shape to end with \(2,\); got "
                                        r"shape=\(3,\)"):
        pr.normal(np.zeros(3, np.uint32), (2,))
    with pytest.raises(TypeError, match="expected key_data.dtype = uint32; got dtype=float32"):
        pr.normal(np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"normal accepts a single key, but was given a key "
                                         r"array of shape \(2,\) != \(\)\. Use plait.vmap"):
        pr.normal(pr.split(pr.key(0)))
    with pytest.raises(TypeError, match="key accepts a scalar seed, but was given an array"):
        pr.key(np.arange(2))
    with pytest.raises(TypeError, match="key accepts a scalar seed, but was given a PRNG key"):
        pr.key(pr.key(0))
    with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
        pr.key(1.5)
    with pytest.raises(TypeError, match="fold_in accepts a scalar"):
        pr.fold_in(pr.key(0), np.arange(3))
    with pytest.raises(TypeError, match="unexpected PRNG key type"):
        pr.split("key")
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        pr.key(0, impl="mersenne")
    with pytest.raises(ValueError, match="must be a float dtype"):
        pr.uniform(pr.key(0), (2,), np.int32)
    with pytest.raises(TypeError, match="randint only accepts integer dtypes"):
        pr.randint(pr.key(0), (2,), 0, 3, np.float32)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(2,\), "
                                         r"\(3,\), \(\)\]"):
        pr.randint(pr.key(0), (2,), np.zeros(3, np.int32), 5)
    with pytest.raises(ValueError, match=r"randint parameter shapes must be broadcast-compatible "
                                         r"with shape argument.*result \(3, 2\) for shape "
                                         r"argument \(2,\)"):
        pr.randint(pr.key(0), (2,), np.zeros((3, 2), np.int32), 5)


def test_arithmetic_on_keys_is_refused() -> None:
    key = pr.key(0)
    with pytest.raises(TypeError, match="PRNG key arrays to be combined only with keys"):
        key + 1
    with pytest.raises(TypeError, match="PRNG key arrays to be combined only with keys"):
        plait.jit(lambda k: k * 2.0)(key)
    with pytest.raises(JaxprTypeError, match="no conversion to or from PRNG keys"):
        pnp.sin(key)


def test_keys_copy_as_jax() -> None:
    # (flax copies its Rngs' keys with jnp.copy, under jit and vmap too)
    def run(lib: Any) -> list[Any]:
        np_ = lib.numpy
        k = lib.random.key(3)
        ks = lib.random.split(k, 3)
        return [np_.copy(k), np_.array(k, copy=True), lib.jit(np_.copy)(ks),
                lib.vmap(np_.copy)(ks), lib.jit(lambda x: lib.random.normal(np_.copy(x)))(k)]
    for o, t in zip(run(plait), run(jax)):
        if jax.dtypes.issubdtype(t.dtype, jax.dtypes.prng_key):
            o, t = plait.random.key_data(o), jax.random.key_data(t)
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))


def test_keys_are_close_when_equal_as_in_jax() -> None:
    def run(lib: Any) -> list[Any]:
        k0, k1 = lib.random.key(0), lib.random.key(1)
        return [lib.numpy.allclose(k0, k1), lib.numpy.allclose(k0, k0),
                lib.numpy.isclose(lib.random.split(k0), k0)]
    for o, t in zip(run(plait), run(jax)):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))

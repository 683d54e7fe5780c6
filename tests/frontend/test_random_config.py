"""plait.random's PRNG configuration against jax.random 0.10.2: both
``jax_threefry_partitionable`` modes, the ``rbg`` and ``unsafe_rbg`` implementations
(``impl=``, ``jax_default_prng_impl``), ``jax_legacy_prng_key`` and
``jax_enable_custom_prng``: equal bits eagerly, under jit and under vmap, JAX's
warnings and errors, and the options' context managers."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np
import pytest
from hypothesis import given, settings

import plait
import plait.random as pr
from plait.ir import check_jaxpr, eval_jaxpr
from plait.ir.dtypes import short_name
from plait.transforms import physicalize

jax.config.update("jax_platforms", "cpu")

IMPLS = ["threefry2x32", "rbg", "unsafe_rbg"]


def assert_same(ours: Any, theirs: Any) -> None:
    """Equal dtypes, shapes and bits (key arrays compared by their data)."""
    if str(getattr(theirs, "dtype", "")).startswith("key<"):
        assert pr.key_impl(ours) == jr.key_impl(theirs)
        ours, theirs = pr.key_data(ours), jr.key_data(theirs)
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


@contextlib.contextmanager
def both(option: str, value: Any) -> Iterator[None]:
    """Option ``jax_<option>`` set to ``value`` in both libraries, restored after."""
    before = plait.config.read(option), getattr(jax.config, f"jax_{option}")
    plait.config.update(option, value)
    jax.config.update(f"jax_{option}", value)
    try:
        yield
    finally:
        plait.config.update(option, before[0])
        jax.config.update(f"jax_{option}", before[1])


# Each case: fn(random_module, key) -> result, the same code for both libraries.
CASES: dict[str, Callable[[Any, Any], Any]] = {
    "split": lambda r, k: r.split(k, 3),
    "split_shape": lambda r, k: r.split(k, (2, 3)),
    "fold_in": lambda r, k: r.fold_in(k, 2 ** 32 - 1),
    "bits_u32_odd": lambda r, k: r.bits(k, (3, 3)),
    "bits_u8": lambda r, k: r.bits(k, (7,), np.uint8),
    "bits_u16": lambda r, k: r.bits(k, (3,), np.uint16),
    "bits_scalar": lambda r, k: r.bits(k),
    "bits_empty": lambda r, k: r.bits(k, (0, 2)),
    "normal": lambda r, k: r.normal(k, (2, 3)),
    "randint": lambda r, k: r.randint(k, (6,), -50, 50),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.3, (10,)),
    "permutation": lambda r, k: r.permutation(k, 10),
}
JIT_CASES = ["split_shape", "fold_in", "bits_u32_odd", "bits_u8", "normal", "randint",
             "permutation"]
VMAP_CASES = ["split", "fold_in", "bits_u16", "bernoulli"]
EAGER_CASES = ["split", "fold_in", "bits_u8", "bits_scalar", "bits_empty"]
# (unsafe_rbg reads the threefry mode nowhere: one mode is enough for it)
IMPL_MODES = [("threefry2x32", True), ("threefry2x32", False), ("rbg", True), ("rbg", False),
              ("unsafe_rbg", True)]


def run_all(r: Any, names: list[str]) -> Callable[[Any], dict[str, Any]]:
    """One function computing the named cases (one program to compile, not many)."""
    return lambda k: {name: CASES[name](r, k) for name in names}


def jit_and_vmap(r: Any, api: Any) -> Callable[[Any, Any], Any]:
    """The jit cases of one key and the vmap cases over keys, in one jitted program."""
    return api.jit(lambda k, ks: (run_all(r, JIT_CASES)(k), api.vmap(run_all(r, VMAP_CASES))(ks)))


def assert_all_same(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    for name in theirs:
        assert_same(ours[name], theirs[name])


@pytest.mark.parametrize(("impl", "mode"), IMPL_MODES)
def test_jit_and_vmap_match_jax(impl: str, mode: bool) -> None:
    # (rbg's bits under vmap come from the first key only, in JAX and in plait alike)
    with both("threefry_partitionable", mode):
        ours = jit_and_vmap(pr, plait)(pr.key(1701, impl=impl), pr.split(pr.key(4, impl=impl), 3))
        theirs = jit_and_vmap(jr, jax)(jr.key(1701, impl=impl), jr.split(jr.key(4, impl=impl), 3))
    assert_all_same(ours[0], theirs[0])
    assert_all_same(ours[1], theirs[1])


@pytest.mark.parametrize("impl", IMPLS)
def test_eager_matches_jax_with_the_original_counters(impl: str) -> None:
    with both("threefry_partitionable", False):
        ours = run_all(pr, EAGER_CASES)(pr.key(3, impl=impl))
        assert_all_same(ours, run_all(jr, EAGER_CASES)(jr.key(3, impl=impl)))


def test_gamma_with_rbg_keys_matches_jax() -> None:
    # JAX draws each element's sample in turn (a map) for these keys, and under vmap all
    # the batch's elements in one map: drawn in a batched loop, they would all come from
    # the first key.
    def fn(r: Any) -> Callable[[Any], Any]:
        return lambda k: r.gamma(k, np.array([0.5, 9.0], np.float32))
    assert_same(fn(pr)(pr.key(2, impl="rbg")), fn(jr)(jr.key(2, impl="rbg")))
    assert_same(plait.vmap(fn(pr))(pr.split(pr.key(2, impl="unsafe_rbg"), 3)),
                jax.vmap(fn(jr))(jr.split(jr.key(2, impl="unsafe_rbg"), 3)))


@pytest.mark.parametrize("impl", IMPLS)
def test_vmap_of_fold_in_over_keys_and_messages_matches_jax(impl: str) -> None:
    def folds(r: Any, api: Any) -> Callable[[Any, Any], list[Any]]:
        # Keys and messages mapped together, keys only, messages only, and nested.
        return api.jit(lambda ks, ms: [
            api.vmap(r.fold_in)(ks, ms), api.vmap(r.fold_in, (0, None))(ks, 5),
            api.vmap(r.fold_in, (None, 0))(ks[1], ms),
            api.vmap(api.vmap(r.fold_in, (None, 0)), (0, None))(ks, ms)])
    msgs = np.arange(3, dtype=np.uint32)
    ours = folds(pr, plait)(pr.split(pr.key(0, impl=impl), 3), msgs)
    theirs = folds(jr, jax)(jr.split(jr.key(0, impl=impl), 3), msgs)
    for a, b in zip(ours, theirs, strict=True):
        assert_same(a, b)


@given(seed=st.integers(-2 ** 31, 2 ** 31 - 1),
       shape=st.lists(st.integers(0, 5), max_size=2).map(tuple),
       dtype=st.sampled_from([np.uint8, np.uint16, np.uint32]))
@settings(max_examples=8, deadline=None)
def test_original_mode_bits_and_keys_match_jax(seed: int, shape: tuple[int, ...],
                                               dtype: Any) -> None:
    with both("threefry_partitionable", False):
        assert_same(pr.bits(pr.key(seed), shape, dtype), jr.bits(jr.key(seed), shape, dtype))
        assert_same(pr.split(pr.PRNGKey(seed), shape), jr.split(jr.PRNGKey(seed), shape))


@pytest.mark.parametrize(("impl", "mode"), IMPL_MODES)
def test_64_bit_bits_match_jax(impl: str, mode: bool) -> None:
    with both("enable_x64", True), both("threefry_partitionable", mode):
        assert_same(pr.bits(pr.key(5, impl=impl), (3,), np.uint64),
                    jr.bits(jr.key(5, impl=impl), (3,), np.uint64))
        assert_same(pr.key(2 ** 40 + 3, impl=impl), jr.key(2 ** 40 + 3, impl=impl))


def test_switching_modes_between_calls_of_one_jitted_function() -> None:
    fn = plait.jit(lambda k: (pr.uniform(k, (4,)), pr.key_data(pr.split(k))))
    for mode in (True, False, True):
        with both("threefry_partitionable", mode):
            u, keys = fn(pr.key(8))
            assert_same(u, jr.uniform(jr.key(8), (4,)))
            assert_same(keys, jr.key_data(jr.split(jr.key(8))))
    with plait.threefry_partitionable(False), jax.threefry_partitionable(False):
        assert_same(fn(pr.key(8))[0], jr.uniform(jr.key(8), (4,)))
    # A jaxpr records its mode (JAX prints no param: it reads the option when lowering).
    with plait.threefry_partitionable(False):
        assert "partitionable=False" in str(plait.make_jaxpr(lambda: pr.split(pr.key(0)))())
    assert "partitionable" not in str(plait.make_jaxpr(lambda: pr.split(pr.key(0)))())


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_rbg_keys_print_and_convert_like_jax(impl: str) -> None:
    key, jkey = pr.key(3, impl=impl), jr.key(3, impl=impl)
    assert repr(key) == repr(jkey) and str(pr.split(key, 2)) == str(jr.split(jkey, 2))
    assert pr.key_impl(key) == jr.key_impl(jkey) == impl
    assert pr.key_dtype(impl) == key.dtype != pr.key_dtype()
    assert short_name(key.dtype) == str(jr.key_dtype(impl)) == str(jkey.dtype)
    assert_same(pr.PRNGKey(3, impl=impl), jr.PRNGKey(3, impl=impl))
    data = np.arange(8, dtype=np.uint32).reshape(2, 4)
    assert_same(pr.wrap_key_data(data, impl=impl), jr.wrap_key_data(jnp.asarray(data), impl=impl))
    assert_same(pr.key(3, dtype=pr.key_dtype(impl)), jkey)
    jaxpr = str(plait.make_jaxpr(lambda: pr.normal(pr.key(0, impl=impl), (2,)))())
    assert jaxpr == str(jax.make_jaxpr(lambda: jr.normal(jr.key(0, impl=impl), (2,)))())
    with pytest.raises(TypeError, match=r"expected key_data.shape to end with \(4,\); got "
                                        r"shape=\(2,\)"):
        pr.wrap_key_data(np.zeros(2, np.uint32), impl=impl)


def test_default_prng_impl_makes_and_reads_keys() -> None:
    with plait.default_prng_impl("rbg"), jax.default_prng_impl("rbg"):
        assert pr.key(1).dtype == pr.key_dtype("rbg")
        raw, jraw = pr.PRNGKey(1), jr.PRNGKey(1)
        assert_same(raw, jraw)  # uint32[4]
        assert_same(pr.normal(raw, (3,)), jr.normal(jraw, (3,)))
        assert_same(pr.split(raw), jr.split(jraw))
        assert_same(plait.jit(lambda k: pr.uniform(k, (2,)))(raw),
                    jax.jit(lambda k: jr.uniform(k, (2,)))(jraw))
    assert plait.config.read("default_prng_impl") == "threefry2x32"
    with both("default_prng_impl", "unsafe_rbg"):
        assert_same(pr.fold_in(pr.PRNGKey(2), 9), jr.fold_in(jr.PRNGKey(2), 9))
    assert pr.key(1).dtype == pr.key_dtype()


def test_reference_interpreter_matches_compiled() -> None:
    def fns(k: Any) -> list[Any]:
        keys = pr.split(k, 3)
        return [pr.key_data(pr.split(k, (2, 3))), pr.key_data(pr.fold_in(k, 7)),
                pr.bits(k, (3, 3), np.uint8), plait.vmap(lambda k: pr.bits(k, (2,)))(keys),
                pr.key_data(plait.vmap(pr.fold_in, (None, 0))(k, np.arange(3, dtype=np.uint32))),
                pr.key_data(plait.vmap(pr.split)(keys))]
    for impl, mode in IMPL_MODES:
        with plait.threefry_partitionable(mode):
            key = pr.key(11, impl=impl)
            closed = plait.make_jaxpr(fns)(key)
            check_jaxpr(physicalize(closed).jaxpr)
            ref = eval_jaxpr(closed.jaxpr, closed.consts, np.asarray(key))
            for r, out in zip(ref, plait.jit(fns)(key), strict=True):
                np.testing.assert_array_equal(np.asarray(r), np.asarray(out))


def _warnings(fn: Callable[..., Any], *args: Any) -> list[tuple[type[Warning], str]]:
    """The warnings ``fn(*args)`` raises: their categories and texts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)
    return [(w.category, str(w.message)) for w in caught]


def test_legacy_prng_key_modes_match_jax() -> None:
    raw = np.zeros(2, np.uint32)
    calls: list[Callable[[Any, Any], Any]] = [
        lambda r, k: r.split(k), lambda r, k: r.normal(k), lambda r, k: r.key_data(k)]
    with both("legacy_prng_key", "warn"):
        for call in calls:
            assert _warnings(call, pr, raw) == _warnings(call, jr, raw)
            assert _warnings(call, pr, raw)[0][0] is UserWarning
        assert _warnings(pr.PRNGKey, 0) == []
    with plait.legacy_prng_key("error"), jax.legacy_prng_key("error"):
        for call in calls:
            with pytest.raises(ValueError) as theirs:
                call(jr, raw)
            with pytest.raises(ValueError, match="Legacy uint32 key array passed as key") as ours:
                call(pr, raw)
            assert str(ours.value) == str(theirs.value)
        assert_same(pr.normal(pr.key(0)), jr.normal(jr.key(0)))  # typed keys are fine
    assert _warnings(pr.normal, raw) == []


def test_enable_custom_prng_returns_typed_keys_as_jax() -> None:
    raw = np.zeros(2, np.uint32)
    with both("enable_custom_prng", True):
        assert_same(pr.PRNGKey(4), jr.PRNGKey(4))  # typed keys
        assert_same(plait.jit(lambda: pr.PRNGKey(1))(), jax.jit(lambda: jr.PRNGKey(1))())
        assert _warnings(pr.split, raw) == _warnings(jr.split, raw)
        assert _warnings(pr.split, raw)[0][0] is FutureWarning
        with pytest.warns(FutureWarning, match="Raw arrays as random keys"):
            ours = pr.split(raw)
        with pytest.warns(FutureWarning):
            assert_same(ours, jr.split(raw))
    assert pr.PRNGKey(4).dtype == np.uint32


def test_bad_options_and_names_raise_jax_errors() -> None:
    with pytest.raises(ValueError) as theirs:
        jr.key(0, impl="mersenne")
    with pytest.raises(ValueError, match=r'unrecognized PRNG implementation "mersenne"\. Did you '
                                         r'mean one of: "threefry2x32", "rbg", "unsafe_rbg"\?'):
        pr.key(0, impl="mersenne")
    assert "unrecognized PRNG implementation" in str(theirs.value)
    with pytest.raises(TypeError, match="unrecognized type <class 'int'> for specifying PRNG "
                                        "implementation"):
        pr.key(0, impl=3)
    with pytest.raises(NotImplementedError, match="'philox2x32' PRNG implementation is not "
                                                  "available in plait"):
        pr.key(0, impl="philox2x32")
    with pytest.raises(NotImplementedError, match="'threefry4x32' PRNG implementation"):
        plait.config.update("jax_default_prng_impl", "threefry4x32")
    with pytest.raises(ValueError, match=r"expected one of \['threefry2x32', 'rbg', "
                                         r"'unsafe_rbg'\] for config option 'default_prng_impl'"
                                         r", but got 'fry'"):
        plait.default_prng_impl("fry")
    with pytest.raises(ValueError, match=r"expected one of \['allow', 'warn', 'error'\] for "
                                         r"config option 'legacy_prng_key', but got 'never'"):
        plait.config.update("jax_legacy_prng_key", "never")
    with pytest.raises(ValueError, match="invalid value 'yes' for config option "
                                         "'threefry_partitionable'"):
        plait.config.update("jax_threefry_partitionable", "yes")
    assert plait.config.read("default_prng_impl") == "threefry2x32"
    with pytest.raises(NotImplementedError, match="`poisson` is only implemented for the "
                                                  "threefry2x32 RNG, not rbg"):
        pr.poisson(pr.key(0, impl="rbg"), 2.0)
    with pytest.raises(TypeError, match=r"expected key_data.shape to end with \(2,\); got "
                                        r"shape=\(4,\)"):
        pr.normal(pr.PRNGKey(0, impl="rbg"))  # a raw rbg key read as a threefry one

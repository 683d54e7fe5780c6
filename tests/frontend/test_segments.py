"""``plait.ops`` (segment reductions) against ``jax.ops``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
import plait.numpy as pnp
import plait.ops

NAMES = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _both(name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    ours = getattr(plait.ops, name)(*args, **kwargs)
    theirs = getattr(jax.ops, name)(*args, **kwargs)
    return ours, theirs


def _same(ours: Any, theirs: Any) -> None:
    assert str(plait.typeof(ours)) == str(jax.typeof(theirs))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


def test_the_namespace_is_jaxs() -> None:
    assert sorted(plait.ops.__all__) == sorted(n for n in dir(jax.ops) if not n.startswith("_"))


# (Complex max and min: test_complex_max_min_agree_with_jax.)
@pytest.mark.parametrize("name, dtype", [
    (n, d) for n in NAMES for d in (np.float32, np.int32, np.uint8, np.complex64)
    if d != np.complex64 or n in ("segment_sum", "segment_prod")])
def test_segments_match_jax(name: str, dtype: Any) -> None:
    rng = np.random.default_rng(0)
    data = (rng.integers(1, 4, size=(7, 3)) * (1 + 1j if dtype == np.complex64 else 1)
            ).astype(dtype)
    ids = np.array([2, 0, 2, 5, -1, 0, 9])  # an empty segment, one negative, one too big
    for kwargs in ({}, {"num_segments": 4}, {"num_segments": 8, "bucket_size": 3},
                   {"num_segments": 3, "indices_are_sorted": False, "mode": "clip"}):
        _same(*_both(name, data, ids, **kwargs))


def test_complex_max_min_agree_with_jax() -> None:
    data = np.array([1 + 2j, 3j], np.complex64)
    for name in ("segment_max", "segment_min"):
        outcomes: list[Any] = []
        for lib in (plait, jax):
            try:
                outcomes.append(np.asarray(getattr(lib.ops, name)(data, np.array([0, 0]), 2)))
            except TypeError:
                outcomes.append("TypeError")
        if isinstance(outcomes[1], str):
            assert outcomes[0] == outcomes[1]
        else:
            np.testing.assert_array_equal(outcomes[0], outcomes[1])


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(-2, 6), min_size=1, max_size=12), st.integers(0, 8),
       st.sampled_from(NAMES))
def test_segments_match_jax_on_any_ids(ids: list[int], n: int, name: str) -> None:
    data = np.arange(1.0, len(ids) + 1, dtype=np.float32)
    _same(*_both(name, data, np.array(ids), num_segments=n))
    if all(i >= 0 for i in ids):
        _same(*_both(name, data, np.array(ids)))  # num_segments from the ids


@pytest.mark.parametrize("name", NAMES)
def test_segments_under_jit_vmap_and_grad_match_jax(name: str) -> None:
    data = np.linspace(0.5, 2.0, 12, dtype=np.float32).reshape(6, 2)
    ids = np.array([0, 1, 1, 3, 0, 1])

    def f(lib: Any, np_: Any) -> Any:
        op = getattr(lib.ops, name)

        def loss(d: Any) -> Any:
            return np_.sum(np_.sin(op(d, ids, num_segments=4, bucket_size=4)) ** 2)
        out = [lib.jit(op, static_argnums=2)(data, ids, 4),
               lib.vmap(lambda d: op(d, ids, 4), in_axes=1)(data)]
        try:
            out.append(lib.jit(lib.grad(loss))(data))
        except NotImplementedError as e:  # both refuse segment_prod's (scatter_mul's)
            out.append(str(e).splitlines()[0])
        return out

    ours, theirs = f(plait, pnp), f(jax, jnp)
    for o, t in zip(ours, theirs):
        if isinstance(t, str):
            assert o == t == ("scatter_mul gradients are only implemented if "
                              "`unique_indices=True`")
        else:
            _same(o, t)


def test_bad_input_is_refused_as_jax_refuses() -> None:
    data, ids = np.ones(3, np.float32), np.array([0, 1, 1])
    with pytest.raises(plait.errors.ConcretizationTypeError,
                       match=r"segment_sum\(\) needs num_segments .* \(int32\[3\]\) is traced"):
        plait.jit(lambda d, s: plait.ops.segment_sum(d, s))(data, ids)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda d, s: jax.ops.segment_sum(d, s))(data, ids)
    with pytest.raises(ValueError) as theirs:
        jax.ops.segment_sum(data, ids, num_segments=-1)
    with pytest.raises(ValueError) as ours:
        plait.ops.segment_sum(data, ids, num_segments=-1)
    assert str(ours.value) == str(theirs.value)
    for args in ((data, ids.astype(np.float32), 2), (np.ones(2, bool), np.array([0, 0]), 1),
                 ("a", ids, 2)):
        with pytest.raises(TypeError):
            jax.ops.segment_sum(*args)
        with pytest.raises(TypeError):
            plait.ops.segment_sum(*args)

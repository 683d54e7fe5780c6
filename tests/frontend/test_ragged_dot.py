"""``lax.ragged_dot`` against JAX 0.10.2: values, gradients in both arguments, dtypes,
group sizes that leave rows out or are zero, and errors."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import plait
from plait.errors import ArgumentError
from tests.frontend.jax_oracle import assert_close


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=4), st.integers(0, 3),
       st.integers(1, 4), st.integers(1, 3))
def test_values_and_gradients_match_jax(sizes: list[int], spare: int, k: int, n: int) -> None:
    rng = np.random.default_rng(len(sizes) * 100 + spare * 10 + k)
    m = sum(sizes) + spare  # rows past the groups give zeros
    lhs: Any = rng.standard_normal((m, k)).astype(np.float32)
    rhs: Any = rng.standard_normal((len(sizes), k, n)).astype(np.float32)
    gs: Any = np.array(sizes, np.int32)
    assert_close(plait.jit(plait.lax.ragged_dot)(lhs, rhs, gs), jax.lax.ragged_dot(lhs, rhs, gs),
                 rtol=1e-5, atol=1e-6)

    def loss(L: Any) -> Any:
        return lambda a, b: (L.lax.ragged_dot(a, b, gs) ** 2).sum()
    assert_close(plait.grad(loss(plait), argnums=(0, 1))(lhs, rhs),
                 jax.grad(loss(jax), argnums=(0, 1))(lhs, rhs), rtol=1e-4, atol=1e-5)


def test_dtypes_as_jax() -> None:
    lhs: Any = np.ones((5, 3))
    rhs: Any = np.ones((2, 3, 4))
    gs: Any = np.array([2, 3], np.int64)
    for a, b, pet in [(np.int8, np.int8, np.int32), (np.float16, np.float16, None),
                      (np.float16, np.float32, None), (np.float32, np.float32, np.float32)]:
        got = plait.lax.ragged_dot(lhs.astype(a), rhs.astype(b), gs, preferred_element_type=pet)
        want = jax.lax.ragged_dot(lhs.astype(a), rhs.astype(b), gs, preferred_element_type=pet)
        assert got.dtype == want.dtype
        assert_close(got, want)


def test_errors() -> None:
    with pytest.raises(ArgumentError, match=r"expected lhs \[m, k\], rhs \[groups, k, n\] and "
                                            r"group_sizes \[groups\], but got lhs \[5, 3\], "
                                            r"rhs \[2, 4, 4\]"):
        plait.lax.ragged_dot(np.ones((5, 3)), np.ones((2, 4, 4)), np.array([2, 3]))
    with pytest.raises(ArgumentError, match="expected integer group_sizes, but got float32"):
        plait.lax.ragged_dot(np.ones((5, 3)), np.ones((2, 3, 4)), np.array([2.0, 3.0],
                                                                             np.float32))
    with pytest.raises(NotImplementedError, match="group_offset"):
        plait.lax.ragged_dot(np.ones((5, 3)), np.ones((2, 3, 4)), np.array([2, 3]),
                             group_offset=np.array([0]))


class Case(NamedTuple):
    """One ``ragged_dot_general`` problem, with its axes labelled: lhs axes from
    ``b`` (batch), ``x`` (outer free), ``m`` (free), ``k`` (contracted); rhs axes from
    ``b``, ``k``, ``n`` (free) and ``g`` (the group dimension)."""

    lhs: Any
    rhs: Any
    sizes: Any
    dims: tuple[Any, tuple[int, ...], tuple[int, ...]]
    lhs_axes: str
    rhs_axes: str
    ragged: str
    prefix: str  # the lhs axes that index the sets of group sizes


@st.composite
def cases(draw: Any) -> Case:
    ragged = draw(st.sampled_from("mkb"))
    groups = draw(st.integers(1, 3))
    extent = {"b": 2, "x": draw(st.integers(1, 2)), "m": draw(st.integers(1, 5)),
              "k": draw(st.integers(1, 5)), "n": draw(st.integers(1, 3)), "g": groups}
    batched = ragged == "b" or draw(st.booleans())
    lhs_axes = "".join(draw(st.permutations("b" * batched + "x" * draw(st.booleans()) + "mk")))
    rhs_axes = "".join(draw(st.permutations("b" * batched + "kn" + "g" * (ragged == "m"))))
    dn = (((lhs_axes.index("k"),), (rhs_axes.index("k"),)),
          ((lhs_axes.index("b"),), (rhs_axes.index("b"),)) if batched else ((), ()))
    dims = (dn, (lhs_axes.index(ragged),), (rhs_axes.index("g"),) if ragged == "m" else ())
    # JAX's order: the batch axes, then the free (or contracted) axes before the ragged one
    prefix = "" if ragged == "b" else "b" * batched + (
        "x" if ragged == "m" and "x" in lhs_axes[:lhs_axes.index("m")] else "")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = [extent[a] for a in prefix] + [groups]
    cuts = np.sort(rng.integers(0, extent[ragged] + 1, size=shape), axis=-1)
    sizes = np.diff(cuts, axis=-1, prepend=0).astype(np.int32)  # some slices left out
    if draw(st.booleans()):
        sizes = sizes.reshape(-1, groups)[0]  # one set of sizes, broadcast
    return Case(rng.standard_normal([extent[a] for a in lhs_axes]).astype(np.float32),
                rng.standard_normal([extent[a] for a in rhs_axes]).astype(np.float32),
                sizes, dims, lhs_axes, rhs_axes, ragged, prefix)


def general(L: Any, case: Case) -> Any:
    dims = L.lax.RaggedDotDimensionNumbers(*case.dims)
    return lambda a, b: L.lax.ragged_dot_general(a, b, case.sizes, dims)


def by_masks(case: Case) -> Any:
    """The oracle for the gradients JAX lacks (contracting and batch modes): one
    NumPy mask of the lhs per group, built index by index, then JAX's ``einsum``."""
    out = "b" * ("b" in case.lhs_axes) + "".join(a for a in case.lhs_axes if a in "xm") + "n"
    spec = f"{case.lhs_axes},{case.rhs_axes.replace('g', '')}->{out}"
    if case.ragged == "b":
        return lambda a, b: jnp.einsum(spec, a, b)
    groups = case.sizes.shape[-1]
    sizes = np.broadcast_to(case.sizes, [case.lhs.shape[case.lhs_axes.index(a)]
                                         for a in case.prefix] + [groups])
    ends = np.cumsum(sizes, axis=-1)
    masks = np.zeros((groups, *case.lhs.shape), bool)
    for at in np.ndindex(*sizes.shape):
        *outer, g = at
        where = [slice(None)] * case.lhs.ndim
        for a, i in zip(case.prefix, outer):
            where[case.lhs_axes.index(a)] = i
        where[case.lhs_axes.index(case.ragged)] = slice(ends[at] - sizes[at], ends[at])
        masks[g][tuple(where)] = True

    def f(a: Any, b: Any) -> Any:
        parts = [jnp.einsum(spec, jnp.where(masks[g], a, 0),
                            jnp.take(b, g, case.rhs_axes.index("g")) if "g" in case.rhs_axes
                            else b) for g in range(groups)]
        return sum(parts) if case.ragged == "m" else jnp.stack(parts)
    return f


@settings(max_examples=25, deadline=None)
@given(cases())
def test_general_values_and_derivatives_match_jax(case: Case) -> None:
    got = plait.jit(general(plait, case))(case.lhs, case.rhs)
    assert_close(got, general(jax, case)(case.lhs, case.rhs), rtol=1e-5, atol=1e-5)
    assert_close(got, by_masks(case)(case.lhs, case.rhs), rtol=1e-5, atol=1e-5)
    tangents = (np.ones_like(case.lhs), np.cos(case.rhs))
    assert_close(plait.jvp(general(plait, case), (case.lhs, case.rhs), tangents),
                 jax.jvp(general(jax, case), (case.lhs, case.rhs), tangents),
                 rtol=1e-4, atol=1e-5)

    def loss(L: Any, f: Any) -> Any:
        return lambda a, b: (f(a, b) ** 2).sum()
    # JAX's transpose exists for the non-contracting mode only
    oracle = general(jax, case) if case.ragged == "m" else by_masks(case)
    assert_close(plait.grad(loss(plait, general(plait, case)), argnums=(0, 1))(case.lhs, case.rhs),
                 jax.grad(loss(jax, oracle), argnums=(0, 1))(case.lhs, case.rhs),
                 rtol=1e-4, atol=1e-4)


def test_general_vmap_matches_jax() -> None:
    rng = np.random.default_rng(0)
    lhs: Any = rng.standard_normal((4, 6, 3)).astype(np.float32)
    rhs: Any = rng.standard_normal((4, 3, 2, 3)).astype(np.float32)
    sizes: Any = np.array([[1, 2, 3], [0, 6, 0], [3, 3, 0], [2, 2, 1]], np.int32)
    dims = ((((1,), (0,)), ((), ())), (0,), (2,))

    def f(L: Any) -> Any:
        d = L.lax.RaggedDotDimensionNumbers(*dims)
        return L.vmap(lambda a, b, g: L.lax.ragged_dot_general(a, b, g, d))
    assert_close(f(plait)(lhs, rhs, sizes), f(jax)(lhs, rhs, sizes))


def test_general_dtypes_as_jax() -> None:
    lhs: Any = np.ones((3, 5))
    rhs: Any = np.ones((5, 4))
    gs: Any = np.array([2, 3], np.int32)
    for a, b, pet in [(np.int8, np.int8, np.int32), (np.float16, np.float32, None),
                      (np.float32, np.float32, np.float16)]:
        got, want = (L.lax.ragged_dot_general(
            lhs.astype(a), rhs.astype(b), gs,
            L.lax.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), (1,), ()),
            preferred_element_type=pet) for L in (plait, jax))
        assert got.dtype == want.dtype
        assert_close(got, want)


@pytest.mark.parametrize("shapes, dims, message", [
    (((7, 3), (3, 3, 4), (3,)), ((((1,), (1,)), ((), ())), (0,), ()),
     r"expected exactly one rhs group dimension when the lhs ragged dimension is "
     r"non-contracting, but got \[\]"),
    (((7, 3), (2, 3, 4), (3,)), ((((1,), (1,)), ((), ())), (0,), (0,)),
     r"expected rhs group dimension 0 of size 3 \(the number of groups\), but got 2"),
    (((7, 3), (3, 3, 4), (3,)), ((((1,), (1,)), ((), ())), (0,), (1,)),
     r"expected the rhs group dimension to be a free dimension of the rhs \(rank 3, batch \[\], "
     r"contracting \[1\]\), but got 1"),
    (((4, 7), (7, 5), (3,)), ((((1,), (0,)), ((), ())), (1,), (0,)),
     r"expected no rhs group dimension when the lhs ragged dimension is contracting, "
     r"but got \[0\]"),
    (((2, 4, 7), (2, 7, 5), (3, 3)), ((((2,), (1,)), ((0,), (0,))), (2,), ()),
     r"expected group_sizes of shape \[2, 3\] \(the batch and outer dimensions before the "
     r"ragged one, then the groups\), but got \[3, 3\]"),
    (((7, 3), (3, 3, 4), (3,)), ((((1,), (1,)), ((), ())), (5,), (0,)),
     r"expected the lhs ragged dimension in \[0, 2\) for an lhs of rank 2, but got 5"),
    (((7, 3), (3, 3, 4), (3,)), ((((1,), (1,)), ((), ())), (0, 1), (0,)),
     r"expected exactly one lhs ragged dimension, but got \[0, 1\]"),
    (((7, 3), (3, 4, 4), (3,)), ((((1,), (1,)), ((), ())), (0,), (0,)),
     r"expected contracting dimensions of equal sizes, but got lhs \[7, 3\] dimension 1 "
     r"and rhs \[3, 4, 4\] dimension 1"),
    (((7, 3), (3, 3, 4), ()), ((((1,), (1,)), ((), ())), (0,), (0,)),
     r"expected group_sizes of rank 1 or more, but got a scalar"),
])
def test_general_errors(shapes: Any, dims: Any, message: str) -> None:
    lhs, rhs = (np.ones(s, np.float32) for s in shapes[:2])
    gs: Any = np.ones(shapes[2], np.int32)
    with pytest.raises(ArgumentError, match="ragged_dot_general: " + message):
        plait.lax.ragged_dot_general(lhs, rhs, gs, plait.lax.RaggedDotDimensionNumbers(*dims))
    with pytest.raises(TypeError):  # JAX refuses the same (its words differ)
        jax.lax.ragged_dot_general(jnp.asarray(lhs), jnp.asarray(rhs), gs,
                                   jax.lax.RaggedDotDimensionNumbers(*dims))


def test_general_refuses_bad_arguments() -> None:
    lhs, rhs, gs = np.ones((4, 7)), np.ones((7, 5)), np.array([2, 3])
    raw: Any = ((((1,), (0,)), ((), ())), (1,), ())
    with pytest.raises(ArgumentError, match="expected a lax.RaggedDotDimensionNumbers, but got "
                                            "tuple"):
        plait.lax.ragged_dot_general(lhs, rhs, gs, raw)
    dims = plait.lax.RaggedDotDimensionNumbers(*raw)
    with pytest.raises(ArgumentError, match="expected integer group_sizes, but got float32"):
        plait.lax.ragged_dot_general(lhs, rhs, np.array([2.0, 5.0], np.float32), dims)
    with pytest.raises(NotImplementedError, match="group_offset"):
        plait.lax.ragged_dot_general(lhs, rhs, gs, dims, group_offset=np.array([0]))

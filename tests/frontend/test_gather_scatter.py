"""Indexing with arrays and ``.at[]`` against jax.numpy 0.10.2: values eagerly and under
jit, gradients (repeated indices too), vmap over operand, indices or both, printed
jaxprs, the StableHLO ops, and ``lax.gather``/``scatter`` on random configurations."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax as jlax

import plait
import plait.lax as plax
import plait.numpy as pnp
from plait.ir import check_jaxpr, eval_jaxpr

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(7)
X = RNG.normal(size=(4, 5, 6)).astype(np.float32)
I1 = np.array([0, 3, -1, 2], np.int32)
I2 = np.array([[1, 0], [4, -5]], np.int32)
MASK = RNG.random((4, 5)) > 0.5

Fn = Callable[[Any], Any]

GETS: dict[str, Fn] = {
    "rows": lambda x: x[I1], "middle": lambda x: x[:, I2], "separated": lambda x: x[I1, :, I1 % 6],
    "broadcast": lambda x: x[I1[:, None], I1[None, :3] % 5], "then_slice": lambda x: x[I2, 1:3],
    "ellipsis": lambda x: x[..., I1], "int_and_strided": lambda x: x[1, I2, ::2],
    "none_and_reversed": lambda x: x[I1[:2], None, ::-1, 2], "mask": lambda x: x[MASK],
    "mask_then_int": lambda x: x[MASK, 1], "list_in_tuple": lambda x: x[[[0], [3]], [1, 2]],
    "out_of_bounds": lambda x: x[np.array([9, -9])], "scalar_true": lambda x: x[True],
    "scalar_false": lambda x: x[:, False], "around_ellipsis": lambda x: x[I1, ..., I1[:3, None]],
    "zero_d_array": lambda x: x[np.array(2), I1], "empty": lambda x: x[np.zeros((0,), np.int32)],
    "uint8": lambda x: x[np.array([1, 3], np.uint8)], "mask_1d_row": lambda x: x[1:3, MASK[0]],
}


def _check(ours: Any, theirs: Any, what: str, tol: float = 0.0) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.shape == t.shape and o.dtype == t.dtype, (what, o.shape, t.shape, o.dtype, t.dtype)
    np.testing.assert_allclose(o, t, rtol=tol, atol=tol, err_msg=what)


@pytest.mark.parametrize("name", sorted(GETS))
def test_getitem_matches_jax(name: str) -> None:
    f = GETS[name]
    want = f(jnp.asarray(X))
    _check(f(pnp.asarray(X)), want, "eager")
    _check(plait.jit(f)(X), want, "jit")
    g: Callable[[Any], Fn] = lambda L: (lambda x: L.sum(L.sin(f(x)) ** 2))  # noqa: E731
    _check(plait.grad(g(pnp))(X), jax.grad(g(jnp))(X), "grad", 1e-5)


# The printed jaxprs equal JAX's, except where JAX converts a weakly typed scalar index
# (an extra convert_element_type) or computes a constant in the program.
SAME_JAXPR = ["rows", "middle", "separated", "broadcast", "then_slice", "ellipsis",
              "mask", "out_of_bounds", "list_in_tuple"]


@pytest.mark.parametrize("name", SAME_JAXPR)
def test_getitem_jaxpr_matches_jax(name: str) -> None:
    f = GETS[name]
    closed = plait.make_jaxpr(f)(X)
    check_jaxpr(closed.jaxpr)
    assert str(closed) == str(jax.make_jaxpr(f)(X))


def test_jitted_getitem_lowers_to_stablehlo_gather() -> None:
    text = plait.jit(lambda x, i: x[i]).lower(X, I1).as_text()
    assert "stablehlo.gather" in text
    text = plait.jit(lambda x, i: x.at[i].add(1.0)).lower(X, I1).as_text()
    assert "stablehlo.scatter" in text


def _sin(x: Any) -> Any:
    return (jnp if isinstance(x, jax.Array) or "jax" in type(x).__module__ else pnp).sin(x)


UPDATES: dict[str, Fn] = {
    "set": lambda x: x.at[I1].set(2.0),
    "add_repeated": lambda x: x.at[np.array([1, 1, 2])].add(1.5),
    "add_row": lambda x: x.at[I1, 2].add(np.arange(6, dtype=np.float32)),
    "subtract": lambda x: x.at[:, np.array([1, 1])].subtract(1.0),
    "multiply": lambda x: x.at[I1].multiply(2.0), "divide": lambda x: x.at[1].divide(4.0),
    "power": lambda x: x.at[1, 1:3].power(2.0), "min": lambda x: x.at[I1].min(0.0),
    "max_mask": lambda x: x.at[MASK].max(0.5), "get_fill": lambda x: x.at[np.array([0, 9])].get(
        mode="fill", fill_value=-1.0),
    "set_clip": lambda x: x.at[np.array([0, 9])].set(5.0, mode="clip"),
    "set_dropped": lambda x: x.at[np.array([0, 9])].set(5.0),
    "basic": lambda x: x.at[1:3, ::2].set(0.0), "scalar": lambda x: x.at[2, 3].add(10.0),
    "newaxis": lambda x: x.at[None, 1].set(3.0), "ellipsis": lambda x: x.at[..., -1].set(3.0),
    "reversed": lambda x: x.at[::-1, 0, 0].set(np.arange(4, dtype=np.float32)),
}


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_at_matches_jax(name: str) -> None:
    f = UPDATES[name]
    want = f(jnp.asarray(X))
    _check(f(pnp.asarray(X)), want, "eager", 1e-6)
    _check(plait.jit(f)(X), want, "jit", 1e-6)
    g: Callable[[Any], Fn] = lambda L: (lambda x: L.sum(L.sin(f(x)) ** 2))  # noqa: E731
    _check(plait.grad(g(pnp))(X), jax.grad(g(jnp))(X), "grad", 1e-5)


def test_at_apply_matches_jax_and_refuses_jvp_like_jax() -> None:
    _check(pnp.asarray(X).at[I1].apply(pnp.sin), jnp.asarray(X).at[I1].apply(jnp.sin), "apply")
    with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
        plait.grad(lambda x: pnp.sum(x.at[I1].apply(pnp.sin)))(X)


def test_at_on_integers_and_repeated_adds() -> None:
    xi = np.arange(10, dtype=np.int32)
    idx = np.array([1, 1, 1, 4, 12])
    for op in ("add", "multiply", "min", "max", "set"):
        _check(getattr(pnp.asarray(xi).at[idx], op)(3), getattr(jnp.asarray(xi).at[idx], op)(3),
               op)


@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0)], ids=str)
def test_vmap_of_indexing_and_at(axes: tuple[int | None, int | None]) -> None:
    xs = RNG.normal(size=(3, 5, 6)).astype(np.float32)
    ids = RNG.integers(-5, 5, size=(3, 4)).astype(np.int32)
    x = xs if axes[0] == 0 else xs[0]
    i = ids if axes[1] == 0 else ids[0]
    for f in (lambda a, j: a[j], lambda a, j: a[:, j % 6], lambda a, j: a.at[j].add(1.0),
              lambda a, j: a.at[j, 0].set(-1.0)):
        _check(plait.vmap(f, axes)(pnp.asarray(x), i), jax.vmap(f, axes)(jnp.asarray(x), i),
               str(axes))


def test_out_of_bounds_and_mode_errors() -> None:
    with pytest.raises(IndexError, match="too many indices"):
        pnp.asarray(X)[I1, I1, I1, I1]
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(4,\), "
                       r"\(2, 2\)\]"):
        pnp.asarray(X)[I1, I2]
    with pytest.raises(IndexError, match="boolean index did not match"):
        pnp.asarray(X)[np.array([True, False])]
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type"):
        jnp.asarray(X)[np.array([0.5])]
    with pytest.raises(TypeError, match="expected integer or boolean indexers, but index 0 has "
                       "dtype float64"):
        pnp.asarray(X)[np.array([0.5])]
    with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
        pnp.asarray(X).at[I1].get(mode="wrap")


# -- lax.gather and the scatters on random configurations -------------------------------

@st.composite
def gather_configs(draw: st.DrawFn) -> tuple[Any, ...]:
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    k = draw(st.integers(1, rank))
    start_map = tuple(draw(st.permutations(range(rank)))[:k])
    collapsed = tuple(sorted(d for d in start_map if draw(st.booleans())))
    sizes = tuple(1 if d in collapsed else draw(st.integers(0 if d not in start_map else 1, n))
                  for d, n in enumerate(shape))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    out_rank = len(batch) + rank - len(collapsed)
    offset = tuple(sorted(draw(st.permutations(range(out_rank)))[:rank - len(collapsed)]))
    mode = draw(st.sampled_from(["clip", "fill", "promise_in_bounds"]))
    seed = draw(st.integers(0, 2**16))
    return shape, start_map, collapsed, sizes, batch, offset, mode, seed


@settings(max_examples=25, deadline=None)
@given(gather_configs())
def test_lax_gather_and_scatter_add_agree_with_jax(cfg: tuple[Any, ...]) -> None:
    shape, start_map, collapsed, sizes, batch, offset, mode, seed = cfg
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape).astype(np.float32)
    hi = max(shape) + 2
    idx = rng.integers(-2, hi, size=batch + (len(start_map),)).astype(np.int32)
    pdn = plax.GatherDimensionNumbers(offset, collapsed, start_map)
    jdn = jlax.GatherDimensionNumbers(offset, collapsed, start_map)
    want = jlax.gather(x, idx, jdn, sizes, mode=mode, fill_value=-7.0)
    got = plax.gather(x, idx, pdn, sizes, mode=mode, fill_value=-7.0)
    _check(got, want, "gather")
    closed = plait.make_jaxpr(lambda a: plax.gather(a, idx, pdn, sizes, mode=mode,
                                                    fill_value=-7.0))(x)
    _check(eval_jaxpr(closed.jaxpr, closed.consts, x)[0], want, "reference gather")
    # Scatter-add the gathered windows back (the transpose of the gather).
    u = rng.integers(-3, 3, size=np.shape(want)).astype(np.float32)
    sdn_p = plax.ScatterDimensionNumbers(offset, collapsed, start_map)
    sdn_j = jlax.ScatterDimensionNumbers(offset, collapsed, start_map)
    smode = "clip" if mode == "clip" else "fill"
    want_s = jlax.scatter_add(x, idx, u, sdn_j, mode=smode)
    _check(plax.scatter_add(x, idx, u, sdn_p, mode=smode), want_s, "scatter_add", 1e-6)
    closed = plait.make_jaxpr(lambda a, v: plax.scatter_add(a, idx, v, sdn_p, mode=smode))(x, u)
    _check(eval_jaxpr(closed.jaxpr, closed.consts, x, u)[0], want_s, "reference scatter", 1e-6)


def test_lax_helpers_match_jax() -> None:
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    i, j = np.array([0, -1, 2]), np.array([4, 1, -5])
    _check(plax.index_take(x, (i, j), (0, 1)),
           jlax.index_take(jnp.asarray(x), (jnp.asarray(i), jnp.asarray(j)),  # type: ignore[arg-type]  # jax annotates idxs as one Array
                           (0, 1)), "index_take")
    _check(plax.dynamic_update_index_in_dim(x, np.ones(5, np.float32), 2, 0),
           jlax.dynamic_update_index_in_dim(x, np.ones(5, np.float32), 2, 0), "dynamic_update")
    sdn = plax.ScatterDimensionNumbers((1,), (0,), (0,))
    jsdn = jlax.ScatterDimensionNumbers((1,), (0,), (0,))
    ids = np.array([[1], [1]], np.int32)
    _check(plax.scatter_apply(x, ids, pnp.exp, sdn, update_shape=(2, 5)),
           jlax.scatter_apply(jnp.asarray(x), jnp.asarray(ids), jnp.exp, jsdn, update_shape=(2, 5)),
           "scatter_apply", 1e-6)


def test_lax_gather_refuses_bad_dimension_numbers() -> None:
    x = np.zeros((3, 4), np.float32)
    idx = np.zeros((2, 1), np.int32)
    with pytest.raises(TypeError, match="expected GatherDimensionNumbers"):
        plax.gather(x, idx, ((1,), (0,), (0,)), (1, 4))  # type: ignore[arg-type]  # the point
    with pytest.raises(plait.errors.JaxprTypeError,
                       match=r"expected slice_sizes within the operand shape \(3, 4\)"):
        plax.gather(x, idx, plax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 5))
    with pytest.raises(plait.errors.JaxprTypeError, match="expected the last dimension of the "
                       "indices to have size len"):
        plax.gather(x, np.zeros((2, 2), np.int32), plax.GatherDimensionNumbers((1,), (0,), (0,)),
                    (1, 4))


# The printed jaxprs of these updates equal JAX's (the others differ by a weak-scalar
# convert, JAX's unused placeholder of scatter_apply, or an equation JAX repeats that
# plait's builder merges).
SAME_UPDATE_JAXPR = ["set", "add_repeated", "subtract", "multiply", "divide", "min",
                     "max_mask", "get_fill", "set_clip", "set_dropped", "basic", "scalar",
                     "newaxis", "ellipsis"]


@pytest.mark.parametrize("name", SAME_UPDATE_JAXPR)
def test_at_jaxpr_matches_jax(name: str) -> None:
    f = UPDATES[name]
    closed = plait.make_jaxpr(f)(X)
    check_jaxpr(closed.jaxpr)
    assert str(closed) == str(jax.make_jaxpr(f)(X))


@st.composite
def random_indices(draw: st.DrawFn) -> tuple[Any, ...]:
    """An index for an array of shape (4, 5, 6): ints, slices, None, ..., int arrays."""
    out: list[Any] = []
    dims = iter((4, 5, 6))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["int", "slice", "array", "none", "ellipsis"]))
        if kind == "none":
            out.append(None)
            continue
        if kind == "ellipsis":
            if not any(x is Ellipsis for x in out):
                out.append(Ellipsis)
            continue
        n = next(dims, None)
        if n is None:
            break
        if kind == "int":
            out.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            start, stop = draw(st.integers(-n, n)), draw(st.integers(-n, n))
            out.append(slice(start, stop, draw(st.sampled_from([None, 1, 2, -1, -2]))))
        else:
            shape = draw(st.sampled_from([(2,), (2, 1), (1, 3)]))
            out.append(np.array(draw(st.lists(st.integers(-n, n - 1), min_size=math.prod(shape),
                                              max_size=math.prod(shape)))).reshape(shape))
    return tuple(out)


@settings(max_examples=60, deadline=None)
@given(random_indices())
def test_random_indices_match_jax(index: tuple[Any, ...]) -> None:
    try:
        want = jnp.asarray(X)[index]
    except (IndexError, TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            pnp.asarray(X)[index]
        return
    _check(pnp.asarray(X)[index], want, f"getitem {index}")
    _check(plait.jit(lambda x: x[index])(X), want, f"jit {index}")
    _check(pnp.asarray(X).at[index].add(1.0), jnp.asarray(X).at[index].add(1.0),
           f"at.add {index}", 1e-6)


def test_at_methods_have_jax_signatures_and_wrap_negative_indices() -> None:
    import inspect
    ours, theirs = pnp.zeros(3).at[0], jnp.zeros(3).at[0]
    for name in ("get", "set", "add", "subtract", "multiply", "divide", "power", "min", "max",
                 "apply"):
        assert list(inspect.signature(getattr(ours, name)).parameters) == \
            list(inspect.signature(getattr(theirs, name)).parameters), name
    x, idx = np.arange(5.0, dtype=np.float32), np.array([-1, 2])
    for name, args in (("get", ()), ("set", (9.0,)), ("add", (9.0,))):
        _check(getattr(pnp.asarray(x).at[idx], name)(*args, wrap_negative_indices=False),
               getattr(jnp.asarray(x).at[idx], name)(*args, wrap_negative_indices=False), name)
    with pytest.raises(NotImplementedError, match="out_sharding= is not supported"):
        pnp.asarray(x).at[idx].set(1.0, out_sharding=object())  # type: ignore[arg-type]  # the point

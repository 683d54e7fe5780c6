"""Many devices (8 CPU devices, see tests/conftest.py): pmap, shard_map, the collectives,
sharded arrays and sharded jit, against JAX 0.10.2 on the same devices."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import hypothesis
import hypothesis.strategies as st
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.sharding import AxisType as JAxisType
from jax.sharding import NamedSharding as JNamedSharding
from jax.sharding import PartitionSpec as JP

import plait
import plait.lax as plax
import plait.numpy as pjnp
from plait.sharding import AxisType, Mesh, NamedSharding
from plait.sharding import PartitionSpec as P
from tests.frontend.jax_oracle import assert_close, raised

pytestmark = pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices "
                                "(XLA_FLAGS=--xla_force_host_platform_device_count=8)")

N = 8


def _meshes(shape: tuple[int, ...], names: tuple[str, ...]) -> tuple[Mesh, Any]:
    ours = plait.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))
    theirs = jax.make_mesh(shape, names, axis_types=(JAxisType.Auto,) * len(shape))
    return ours, theirs


def _x(*shape: int) -> np.ndarray:
    return (np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 7) / 10


# -- pmap ---------------------------------------------------------------------------------

def _func13(L: Any, pmap: Any, lax: Any) -> Callable[..., Any]:
    def func13(arr: Any, extra: Any) -> Any:
        def inner(x: Any) -> Any:
            return (x + extra + L.ones(1)) / lax.psum(x, axis_name="rows")
        return pmap(inner, axis_name="rows")(arr)
    return func13


def test_seed_func13_prints_and_computes_as_jax() -> None:
    ours, theirs = _func13(pjnp, plait.pmap, plax), _func13(jjnp, jax.pmap, jax.lax)
    for n in (1, N):
        x = np.ones((n, 3), np.float32)
        assert str(plait.make_jaxpr(ours)(x, 5.0)) == str(jax.make_jaxpr(theirs)(x, 5.0))
        assert_close(ours(x, 5.0), theirs(x, 5.0))


# Per collective: the function over one device's value, and the per-device input shape.
COLLECTIVES: dict[str, tuple[Callable[[Any, Any], Any], tuple[int, ...]]] = {
    "psum": (lambda lax, v: lax.psum(v, "i"), (3,)),
    "pmean": (lambda lax, v: lax.pmean(v, "i"), (3,)),
    "pmax": (lambda lax, v: lax.pmax(v, "i"), (3,)),
    "pmin": (lambda lax, v: lax.pmin(v, "i"), (3,)),
    "psum_tree": (lambda lax, v: lax.psum({"a": v, "b": (v * 2,)}, ("i",)), (3,)),
    "all_gather": (lambda lax, v: lax.all_gather(v, "i"), (2, 3)),
    "all_gather_axis1": (lambda lax, v: lax.all_gather(v, "i", axis=1), (2, 3)),
    "all_gather_tiled": (lambda lax, v: lax.all_gather(v, "i", tiled=True), (2, 3)),
    "all_gather_tiled1": (lambda lax, v: lax.all_gather(v, "i", axis=1, tiled=True), (2, 3)),
    "psum_scatter": (lambda lax, v: lax.psum_scatter(v, "i"), (8, 3)),
    "psum_scatter_tiled": (lambda lax, v: lax.psum_scatter(v, "i", tiled=True), (16, 3)),
    "psum_scatter_tiled1": (lambda lax, v: lax.psum_scatter(v, "i", scatter_dimension=1,
                                                           tiled=True), (3, 16)),
    "ppermute": (lambda lax, v: lax.ppermute(v, "i", [(i, (i + 1) % N) for i in range(N)]),
                 (3,)),
    "ppermute_partial": (lambda lax, v: lax.ppermute(v, "i", [(0, 1), (1, 2), (7, 0)]), (3,)),
    "pshuffle": (lambda lax, v: lax.pshuffle(v, "i", [3, 2, 1, 0, 7, 6, 5, 4]), (3,)),
    "axis_index": (lambda lax, v: v * lax.axis_index("i"), (3,)),
    "all_to_all": (lambda lax, v: lax.all_to_all(v, "i", 0, 0), (8, 3)),
    "all_to_all_tiled": (lambda lax, v: lax.all_to_all(v, "i", 0, 1, tiled=True), (8, 2)),
    "all_to_all_tiled_same": (lambda lax, v: lax.all_to_all(v, "i", 1, 1, tiled=True),
                              (2, 8)),
    "pswapaxes": (lambda lax, v: lax.pswapaxes(v, "i", 1), (3, 8)),
}


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collective_under_pmap_prints_and_computes_as_jax(name: str) -> None:
    f, shape = COLLECTIVES[name]
    x = _x(N, *shape)
    ours = plait.pmap(lambda v: f(plax, v), axis_name="i")
    theirs = jax.pmap(lambda v: f(jax.lax, v), axis_name="i")
    assert str(plait.make_jaxpr(ours)(x)) == str(jax.make_jaxpr(theirs)(x))
    assert_close(ours(x), theirs(x))


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_collective_under_vmap_computes_as_jax(name: str) -> None:
    f, shape = COLLECTIVES[name]
    x = _x(N, *shape)
    ours = plait.vmap(lambda v: f(plax, v), axis_name="i")
    # (JAX's vmap takes only permutations of the whole axis: pmap is the oracle then.)
    theirs = jax.vmap(lambda v: f(jax.lax, v), axis_name="i") if name != "ppermute_partial" \
        else jax.pmap(lambda v: f(jax.lax, v), axis_name="i")
    assert_close(ours(x), theirs(x))
    assert_close(plait.jit(ours)(x), theirs(x))


@pytest.mark.parametrize("name", ["psum", "pmean", "pmax", "pmin"])
def test_reductions_under_vmap_print_as_jax(name: str) -> None:
    f, shape = COLLECTIVES[name]
    x = _x(N, *shape)
    ours = plait.make_jaxpr(plait.vmap(lambda v: f(plax, v), axis_name="i"))(x)
    theirs = jax.make_jaxpr(jax.vmap(lambda v: f(jax.lax, v), axis_name="i"))(x)
    # (JAX writes the broadcast's dimensions as NumPy ints.)
    assert str(ours) == str(theirs).replace("np.int64(1)", "1")


LINEAR = ["psum", "all_gather", "all_gather_axis1", "all_gather_tiled", "psum_scatter",
          "psum_scatter_tiled1", "ppermute", "ppermute_partial", "all_to_all_tiled",
          "all_to_all_tiled_same", "pmean", "all_to_all"]


@pytest.mark.parametrize("name", LINEAR)
def test_gradients_through_collectives_match_jax(name: str) -> None:
    f, shape = COLLECTIVES[name]
    x = _x(N, *shape)

    def loss(lax: Any, v: Any) -> Any:
        y = f(lax, v)
        leaves = jax.tree_util.tree_leaves(y) if lax is jax.lax else \
            plait.tree_util.tree_leaves(y)
        return sum((leaf * leaf * 1.5).sum() + leaf.sum() for leaf in leaves)

    def ours_loss(v: Any) -> Any:
        return loss(plax, v)

    def theirs_loss(v: Any) -> Any:
        return loss(jax.lax, v)

    ours = plait.pmap(plait.grad(ours_loss), axis_name="i")(x)
    theirs = jax.pmap(jax.grad(theirs_loss), axis_name="i")(x)
    assert_close(ours, theirs)
    assert_close(plait.vmap(plait.grad(ours_loss), axis_name="i")(x), theirs)


@pytest.mark.parametrize("name", ["pmax", "pmin"])
def test_extremum_gradients_match_jax_reductions(name: str) -> None:
    # (JAX has no derivative of pmax/pmin; plait's is reduce_max's: ties share it.)
    x = np.array([[1.0, 5.0, 2.0], [3.0, 5.0, -1.0]] * 4, np.float32)
    red = jjnp.max if name == "pmax" else jjnp.min
    want = jax.grad(lambda a: N * red(a, axis=0).sum())(x)
    f = getattr(plax, name)

    def per_device(v: Any) -> Any:
        return f(v, "i").sum()

    def batched(a: Any) -> Any:
        return plait.vmap(lambda v: f(v, "i"), axis_name="i")(a).sum()

    assert_close(plait.pmap(plait.grad(per_device), axis_name="i")(x), want)
    assert_close(plait.grad(batched)(x), want)


@pytest.mark.parametrize("name", sorted(COLLECTIVES))
def test_reference_interpreter_runs_pmap_programs(name: str) -> None:
    f, shape = COLLECTIVES[name]
    x = _x(N, *shape)
    fn = plait.pmap(lambda v: f(plax, v), axis_name="i")
    closed = plait.make_jaxpr(fn)(x)
    got = plait.ir.eval_jaxpr(closed.jaxpr, closed.consts, x)
    assert_close(got, plait.tree_util.tree_leaves(fn(x)))
    # The per-device body prints and parses back.
    body = closed.jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns[0].params["jaxpr"].jaxpr
    assert plait.ir.parse_jaxpr(str(body)) == body


def _mlp_loss(L: Any, params: Any, batch: Any) -> Any:
    (w1, b1), (w2, b2) = params
    x, y = batch
    h = L.tanh(x @ w1 + b1)
    return L.mean((h @ w2 + b2 - y) ** 2)


def _mlp_data() -> tuple[Any, Any]:
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(5, 16)).astype(np.float32) * 0.3, np.zeros(16, np.float32)),
              (rng.normal(size=(16, 2)).astype(np.float32) * 0.3, np.zeros(2, np.float32))]
    x = rng.normal(size=(N * 4, 5)).astype(np.float32)
    y = rng.normal(size=(N * 4, 2)).astype(np.float32)
    return params, (x, y)


def test_data_parallel_gradient_with_pmean_equals_single_device_gradient() -> None:
    params, (x, y) = _mlp_data()
    shards = (x.reshape(N, 4, 5), y.reshape(N, 4, 2))

    def step(L: Any, lax: Any, grad: Any) -> Callable[..., Any]:
        return lambda p, b: lax.pmean(grad(lambda q: _mlp_loss(L, q, b))(p), "batch")

    ours = plait.pmap(step(pjnp, plax, plait.grad), axis_name="batch",
                      in_axes=(None, 0))(params, shards)
    theirs = jax.pmap(step(jjnp, jax.lax, jax.grad), axis_name="batch",
                      in_axes=(None, 0))(params, shards)
    single = plait.grad(lambda q: _mlp_loss(pjnp, q, (x, y)))(params)
    for o, t, s in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs),
                       jax.tree_util.tree_leaves(single)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-5, atol=1e-6)
        for k in range(N):  # every device holds the same, full-batch gradient
            np.testing.assert_allclose(np.asarray(o)[k], np.asarray(s), rtol=1e-5, atol=1e-6)


def test_pmap_variants_match_jax() -> None:
    a, b = _x(N, 3), _x(3)
    cases: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (lambda p: p(lambda u, v: u * v, axis_name="i", in_axes=(0, None), out_axes=1),
         lambda f: f(a, b)),
        (lambda p: p(lambda u: u + 1, axis_name="i", in_axes=1), lambda f: f(a.T)),
        (lambda p: p(lambda u, n: u * n, axis_name="i", static_broadcasted_argnums=1),
         lambda f: f(a, 2)),
        (lambda p: p(lambda u: {"s": u.sum(), "t": (u, u * 2)}, axis_name="i"),
         lambda f: f(a)),
        (lambda p: p(lambda u: u * 2), lambda f: f(a[:4])),
        # (Keyword arguments are mapped over their first axis, whatever in_axes says.)
        (lambda p: p(lambda u, v, w=1.0: u * v - w, in_axes=(0, None)),
         lambda f: f(a, b, w=a * 3)),
        (lambda p: p(lambda u, v: {"d": u - v["x"]}, axis_name="i"),
         lambda f: f(a, v={"x": a.T.T})),
        # (Python scalar results are stacked like arrays.)
        (lambda p: p(lambda u: (u, 3, 2.5)), lambda f: f(a)),
    ]
    for make, call in cases:
        ours, theirs = make(plait.pmap), make(jax.pmap)
        r, s = call(ours), call(theirs)
        assert_close(r, s)
        for x, y in zip(plait.tree_util.tree_leaves(r), jax.tree_util.tree_leaves(s)):
            assert repr(x.sharding) == repr(y.sharding)
    in_axes_1 = cases[1][0]
    assert str(plait.make_jaxpr(in_axes_1(plait.pmap))(a.T)) == \
        str(jax.make_jaxpr(in_axes_1(jax.pmap))(a.T))


def test_pmap_results_are_laid_out_as_jax_lays_them_out() -> None:
    x = _x(N, 3)
    ours = plait.pmap(lambda v: v * 2, axis_name="i")(x)
    theirs = jax.pmap(lambda v: v * 2, axis_name="i")(x)
    assert repr(ours.sharding) == repr(theirs.sharding)
    assert [(s.device.id, s.index) for s in ours.addressable_shards] == \
        [(s.device.id, s.index) for s in theirs.addressable_shards]
    four = plait.pmap(lambda v: v, devices=plait.devices()[4:])(x[:4])
    assert sorted(d.id for d in four.devices()) == [4, 5, 6, 7]
    assert_close(four, x[:4])


def test_pmap_errors() -> None:
    f = plait.pmap(lambda u, v: u + v)
    e = raised(lambda: f(np.ones((8, 3)), np.ones((4, 3))))
    assert isinstance(e, ValueError) and "inconsistent sizes" in str(e) and "[4, 8]" in str(e)
    e = raised(lambda: plait.pmap(lambda u: u)(np.ones((9, 3))))
    assert isinstance(e, ValueError) and "requires 9 logical devices" in str(e)
    e = raised(lambda: plait.pmap(lambda u, v: u, in_axes=(None, None))(np.ones(3), np.ones(3)))
    assert str(e) == "pmap requires at least one argument with a mapped axis."
    e = raised(lambda: plait.pmap(lambda u: plax.psum(u, "j"), axis_name="i")(np.ones((8, 3))))
    assert isinstance(e, NameError)
    assert str(e) == str(raised(lambda: jax.pmap(lambda u: jax.lax.psum(u, "j"),
                                                 axis_name="i")(np.ones((8, 3))))
                         ).replace("jax.shard_map", "plait.shard_map")
    e = raised(lambda: plait.pmap(lambda u: u, in_axes=2)(np.ones((8, 3))))
    assert isinstance(e, ValueError) and "out of bounds" in str(e)


def test_unbound_axis_is_a_name_error_as_in_jax() -> None:
    fns: list[Callable[[Any, Any], Any]] = [lambda lax, v: lax.psum(v, "i"),
                                           lambda lax, v: lax.axis_index("i")]
    for fn in fns:
        ours = raised(lambda: plait.make_jaxpr(lambda v: fn(plax, v))(np.ones(3)))  # noqa: B023
        theirs = raised(lambda: jax.make_jaxpr(lambda v: fn(jax.lax, v))(np.ones(3)))  # noqa: B023
        assert type(ours) is type(theirs) is NameError
        assert str(ours) == str(theirs).replace("jax.shard_map", "plait.shard_map")


# -- shard_map ----------------------------------------------------------------------------

SHARD_BODIES: dict[str, tuple[Callable[[Any, Any], Any], Any, Any, tuple[int, ...]]] = {
    "psum_x": (lambda lax, v: lax.psum(v, "x"), ("x", "y"), (None, "y"), (8, 4)),
    "psum_y": (lambda lax, v: lax.psum(v, "y"), ("x", "y"), ("x",), (8, 4)),
    "psum_xy": (lambda lax, v: lax.psum(v, ("x", "y")), ("x", "y"), (), (8, 4)),
    "psum_yx": (lambda lax, v: lax.psum(v, ("y", "x")), ("x", "y"), (), (8, 4)),
    "axis_index": (lambda lax, v: v + lax.axis_index("x") * 10 + lax.axis_index("y"),
                   ("x", "y"), ("x", "y"), (8, 4)),
    "axis_index_xy": (lambda lax, v: v + lax.axis_index(("x", "y")), ("x", "y"), ("x", "y"),
                      (8, 4)),
    "all_gather_x": (lambda lax, v: lax.all_gather(v, "x", tiled=True), ("x", "y"),
                     (None, "y"), (8, 4)),
    "all_gather_y": (lambda lax, v: lax.all_gather(v, "y", axis=1, tiled=True), ("x", "y"),
                     ("x",), (8, 4)),
    "ppermute_x": (lambda lax, v: lax.ppermute(v, "x", [(0, 1), (1, 2), (2, 3), (3, 0)]),
                   ("x", "y"), ("x", "y"), (8, 4)),
    "ppermute_y": (lambda lax, v: lax.ppermute(v, "y", [(0, 1), (1, 0)]), ("x", "y"),
                   ("x", "y"), (8, 4)),
    "psum_scatter_x": (lambda lax, v: lax.psum_scatter(v, "x", tiled=True), ("x", "y"),
                       ("x", "y"), (32, 4)),
    "all_to_all_x": (lambda lax, v: lax.all_to_all(v, "x", 0, 0, tiled=True), ("x", "y"),
                     ("x", "y"), (16, 4)),
    "replicated_in": (lambda lax, v: v * 2, (), (), (8, 4)),
    "matmul_rows": (lambda lax, v: v @ v.T, ("x",), ("x",), (8, 4)),
}


def _shard_fns(name: str) -> tuple[Any, Any, np.ndarray]:
    body, ins, outs, shape = SHARD_BODIES[name]
    ours_mesh, theirs_mesh = _meshes((4, 2), ("x", "y"))
    ours = plait.shard_map(lambda v: body(plax, v), mesh=ours_mesh, in_specs=P(*ins),
                           out_specs=P(*outs), check_vma=False)
    theirs = jax.shard_map(lambda v: body(jax.lax, v), mesh=theirs_mesh, in_specs=JP(*ins),
                           out_specs=JP(*outs), check_vma=False)
    return ours, theirs, _x(*shape)


@pytest.mark.parametrize("name", sorted(SHARD_BODIES))
def test_shard_map_matches_jax(name: str) -> None:
    ours, theirs, x = _shard_fns(name)
    assert_close(ours(x), theirs(x))
    closed = plait.make_jaxpr(ours)(x)
    assert_close(plait.ir.eval_jaxpr(closed.jaxpr, closed.consts, x)[0], theirs(x))
    assert_close(plait.jit(ours)(x), theirs(x))
    assert str(plait.make_jaxpr(ours)(x)) == str(jax.make_jaxpr(theirs)(x))


@pytest.mark.parametrize("name", ["psum_x", "psum_xy", "all_gather_x", "ppermute_x",
                                  "psum_scatter_x", "all_to_all_x", "replicated_in",
                                  "matmul_rows"])
def test_shard_map_gradients_match_jax(name: str) -> None:
    ours, theirs, x = _shard_fns(name)
    g_ours = plait.grad(lambda v: (plait.numpy.sin(ours(v)) ** 2).sum())(x)
    g_theirs = jax.grad(lambda v: (jjnp.sin(theirs(v)) ** 2).sum())(x)
    assert_close(g_ours, g_theirs)
    assert_close(plait.jit(plait.grad(lambda v: (plait.numpy.sin(ours(v)) ** 2).sum()))(x),
                 g_theirs)
    _, lin = plait.linearize(ours, x)
    assert_close(lin(np.cos(x)), jax.jvp(theirs, (x,), (np.cos(x),))[1])


@pytest.mark.parametrize("name", ["psum_x", "axis_index", "all_gather_y", "matmul_rows"])
def test_vmap_of_shard_map_matches_jax(name: str) -> None:
    ours, theirs, x = _shard_fns(name)
    xs = np.stack([x, x * 2, -x])
    assert_close(plait.vmap(ours)(xs), jax.vmap(theirs)(xs))
    assert_close(plait.vmap(ours, in_axes=1, out_axes=1)(xs.transpose(1, 0, 2)),
                 jax.vmap(theirs, in_axes=1, out_axes=1)(xs.transpose(1, 0, 2)))


def test_shard_map_lowers_to_shardy_as_jax() -> None:
    ours, theirs, x = _shard_fns("psum_x")
    text = plait.jit(ours).lower(x).as_text()
    expected = jax.jit(theirs).lower(x).as_text()
    ours_lines = [ln.strip() for ln in text.splitlines() if "all_reduce" in ln
                  or "manual_computation" in ln or "sdy.mesh" in ln]
    theirs_lines = [ln.strip() for ln in expected.splitlines() if "all_reduce" in ln
                    or "manual_computation" in ln or "sdy.mesh" in ln]
    assert ours_lines[1:] == theirs_lines[1:]
    assert ours_lines[0].startswith("sdy.mesh @mesh = <[\"x\"=4, \"y\"=2]>")
    assert "mhlo.num_partitions = 8 : i32" in text


def test_shard_map_errors() -> None:
    mesh, _ = _meshes((4, 2), ("x", "y"))
    f = plait.shard_map(lambda v: v, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    e = raised(lambda: f(np.ones((6, 2), np.float32)))
    assert isinstance(e, ValueError) and "does not divide" in str(e) and "f32[6,2]" in str(e)
    e = raised(lambda: plait.shard_map(lambda v: v, mesh=mesh, in_specs=P("z"),
                                       out_specs=P())(np.ones(8)))
    assert isinstance(e, Exception) and "'z'" in str(e)
    e = raised(lambda: plait.shard_map(lambda v: v, mesh=mesh, in_specs=(P("x"), P("x")),
                                       out_specs=P())(np.ones(8)))
    assert isinstance(e, ValueError) and "in_specs" in str(e)
    ours_e = raised(lambda: plait.shard_map(lambda v: v, mesh=mesh, out_specs=P())(np.ones(8)))
    _, theirs_mesh = _meshes((4, 2), ("x", "y"))
    theirs_e = raised(lambda: jax.shard_map(lambda v: v, mesh=theirs_mesh,
                                            out_specs=JP())(np.ones(8)))
    assert type(ours_e) is type(theirs_e) is TypeError
    def normal(e: BaseException) -> str:  # (a frozenset prints in hash order)
        return re.sub(r"frozenset\(\{[^}]*\}\)", "S", str(e)).replace("jax.", "plait.")
    assert normal(ours_e) == normal(theirs_e)
    explicit = plait.make_mesh((8,), ("i",), axis_types=AxisType.Auto)
    assert explicit.axis_types == (AxisType.Auto,)
    explicit = plait.make_mesh((8,), ("i",), axis_types=AxisType.Explicit)
    assert explicit.axis_types == (AxisType.Explicit,)


# -- sharded arrays and sharded jit ----------------------------------------------------------

def test_mesh_and_specs_print_as_jax() -> None:
    ours, theirs = _meshes((4, 2), ("x", "y"))
    assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
    assert ours.shape == dict(theirs.shape) and ours.size == theirs.size
    assert ours.devices.shape == theirs.devices.shape
    assert [d.id for d in ours.devices.flat] == [d.id for d in theirs.devices.flat]
    for parts in [("x", None), (("x", "y"),), (), (None,), ("x",), (None, "y")]:
        assert repr(P(*parts)) == repr(JP(*parts))
        assert (P(*parts) == P("x", None)) == (JP(*parts) == JP("x", None))
    for spec in [P("x", "y"), P(), P(("x", "y"),)]:
        theirs_s = JNamedSharding(theirs, JP(*spec))
        assert repr(NamedSharding(ours, spec)) == repr(theirs_s)
        for shape in [(8, 4), (16, 6)]:
            assert NamedSharding(ours, spec).shard_shape(shape) == theirs_s.shard_shape(shape)
            ours_map = NamedSharding(ours, spec).devices_indices_map(shape)
            theirs_map = theirs_s.devices_indices_map(shape)
            assert {d.id: i for d, i in ours_map.items()} == \
                {d.id: i for d, i in theirs_map.items()}  # type: ignore[attr-defined]  # (no stub)


@pytest.mark.parametrize("spec", [("x", "y"), ("y", None), (None, "x"), (("x", "y"),), ()])
def test_device_put_lays_out_as_jax(spec: tuple[Any, ...]) -> None:
    ours_mesh, theirs_mesh = _meshes((4, 2), ("x", "y"))
    x = _x(8, 8)
    a = plait.device_put(x, NamedSharding(ours_mesh, P(*spec)))
    b = jax.device_put(x, JNamedSharding(theirs_mesh, JP(*spec)))
    assert repr(a.sharding) == repr(b.sharding)
    assert a.sharding.memory_kind == b.sharding.memory_kind
    assert NamedSharding(ours_mesh, P(), memory_kind=None).memory_kind == b.sharding.memory_kind
    with pytest.raises(ValueError, match="expected memory_kind None or 'device', but got "
                                         "'pinned_host'"):
        NamedSharding(ours_mesh, P(), memory_kind="pinned_host")
    theirs_dev = b.sharding.with_memory_kind("device")
    assert repr(a.sharding.with_memory_kind("device")) == repr(theirs_dev)
    with pytest.raises(ValueError, match="device memory only"):
        a.sharding.with_memory_kind("pinned_host")
    one = plait.sharding.SingleDeviceSharding(plait.devices()[0], memory_kind="device")
    assert repr(one.with_memory_kind("device")) == repr(
        jax.sharding.SingleDeviceSharding(jax.devices()[0], memory_kind="device"))
    with pytest.raises(ValueError, match="device memory only"):
        one.with_memory_kind("unpinned_host")
    assert [(s.device.id, s.index, s.replica_id) for s in a.addressable_shards] == \
        [(s.device.id, s.index, s.replica_id) for s in b.addressable_shards]
    for s in a.addressable_shards:
        np.testing.assert_array_equal(np.asarray(s.data), x[s.index])
    first, theirs_first = a.addressable_shards[0], b.addressable_shards[0]
    assert repr(first) == repr(theirs_first)
    assert type(first.data.sharding).__name__ == type(theirs_first.data.sharding).__name__
    assert {d.id for d in first.data.sharding.device_set} == \
        {d.id for d in theirs_first.data.sharding.device_set}
    np.testing.assert_array_equal(np.asarray(a), x)
    assert a.is_fully_replicated == b.is_fully_replicated
    assert {d.id for d in a.devices()} == {d.id for d in b.devices()}
    assert_close(a * 2 + 1, b * 2 + 1)  # eager operations on a sharded array
    assert_close(pjnp.sum(a), jjnp.sum(b))


def test_transformations_outside_jit_of_sharded_arguments_match_jax() -> None:
    # grad, vjp and jacrev outside jit run their programs over the arguments' mesh (they
    # once compiled for one device and failed in the runtime).
    ours_mesh, theirs_mesh = _meshes((4, 2), ("x", "y"))
    x, w = _x(8, 4), _x(4, 2)

    def run(lib: Any, np_: Any, mesh: Any, sharding: Any, p: Any) -> Any:
        xs = lib.device_put(x, sharding(mesh, p("x", None)))
        ws = lib.device_put(w, sharding(mesh, p()))

        def loss(w_: Any, x_: Any) -> Any:
            return np_.sum((x_ @ w_) ** 2)
        y, pull = lib.vjp(loss, ws, xs)
        return (lib.grad(loss, argnums=(0, 1))(ws, xs), pull(np_.float32(1.)),
                lib.jacrev(lambda v: v @ ws)(xs[0]), lib.value_and_grad(loss)(ws, xs))
    got = run(plait, pjnp, ours_mesh, NamedSharding, P)
    want = run(jax, jjnp, theirs_mesh, JNamedSharding, JP)
    assert_close(got, want)


def test_sharded_matmul_equals_unsharded_and_uses_collectives() -> None:
    mesh, _ = _meshes((4, 2), ("x", "y"))
    rng = np.random.default_rng(1)
    a_np = rng.normal(size=(16, 8)).astype(np.float32)
    b_np = rng.normal(size=(8, 6)).astype(np.float32)
    a = plait.device_put(a_np, NamedSharding(mesh, P("x", "y")))
    b = plait.device_put(b_np, NamedSharding(mesh, P("y", None)))
    mm = plait.jit(lambda u, v: u @ v)
    c = mm(a, b)
    np.testing.assert_allclose(np.asarray(c), a_np @ b_np, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(c), np.asarray(plait.jit(lambda u, v: u @ v)(
        a_np, b_np)), rtol=1e-5, atol=1e-6)
    hlo = mm.lower(a, b).compile().as_text()
    assert "all-reduce" in hlo  # the contraction over 'y' sums partial products
    assert isinstance(c.sharding, NamedSharding) and c.sharding.mesh == mesh
    # in_shardings/out_shardings given to jit
    mm2 = plait.jit(lambda u, v: u @ v, in_shardings=(NamedSharding(mesh, P("x", "y")),
                                                       NamedSharding(mesh, P("y", None))),
                    out_shardings=NamedSharding(mesh, P()))
    c2 = mm2(a_np, b_np)
    assert repr(c2.sharding) == repr(NamedSharding(mesh, P()))
    np.testing.assert_allclose(np.asarray(c2), a_np @ b_np, rtol=1e-5, atol=1e-5)
    assert "all-gather" in mm2.lower(a_np, b_np).compile().as_text() or \
        "all-reduce" in mm2.lower(a_np, b_np).compile().as_text()


def test_jit_shardings_match_jax() -> None:
    ours_mesh, theirs_mesh = _meshes((4, 2), ("x", "y"))
    x = _x(8, 4)
    ours = plait.jit(lambda v: plax.with_sharding_constraint(
        pjnp.sin(v) * 2, NamedSharding(ours_mesh, P(None, "y"))),
        in_shardings=NamedSharding(ours_mesh, P("x", "y")),
        out_shardings=NamedSharding(ours_mesh, P("x")))
    theirs = jax.jit(lambda v: jax.lax.with_sharding_constraint(
        jjnp.sin(v) * 2, JNamedSharding(theirs_mesh, JP(None, "y"))),
        in_shardings=JNamedSharding(theirs_mesh, JP("x", "y")),
        out_shardings=JNamedSharding(theirs_mesh, JP("x")))
    r, s = ours(x), theirs(x)
    assert_close(r, s)
    assert repr(r.sharding) == repr(s.sharding)
    assert "sdy.sharding_constraint" in ours.lower(x).as_text()
    g = plait.grad(lambda v: ours(v).sum())(x)
    assert_close(g, jax.grad(lambda v: theirs(v).sum())(x))
    e = raised(lambda: plait.jit(lambda v: v, in_shardings=NamedSharding(
        ours_mesh, P("x")))(np.ones((6, 2))))
    assert isinstance(e, Exception) and "divisible" in str(e)


def test_make_array_helpers_match_jax() -> None:
    ours_mesh, theirs_mesh = _meshes((4, 2), ("x", "y"))
    x = _x(8, 4)
    ours_s, theirs_s = NamedSharding(ours_mesh, P("x", "y")), \
        JNamedSharding(theirs_mesh, JP("x", "y"))
    a = plait.make_array_from_callback(x.shape, ours_s, lambda idx: x[idx])
    b = jax.make_array_from_callback(x.shape, theirs_s, lambda idx: x[idx])
    assert_close(a, b)
    assert repr(a.sharding) == repr(b.sharding)
    parts = [plait.device_put(x[s.index], s.device) for s in a.addressable_shards]
    c = plait.make_array_from_single_device_arrays(x.shape, ours_s, parts)
    assert_close(c, x)
    d = plait.make_array_from_process_local_data(ours_s, x)
    assert_close(d, x)
    assert plait.process_index() == 0 and plait.process_count() == 1
    assert len(plait.local_devices()) == plait.device_count() == N


def test_repeated_sharded_calls_take_the_fast_path_with_any_arguments() -> None:
    mesh, _ = _meshes((4, 2), ("x", "y"))
    rows = NamedSharding(mesh, P("x"))
    f = plait.jit(lambda u, v: u * 2 + v)
    x = _x(8, 4)
    a = plait.device_put(x, rows)
    for _ in range(3):  # (the second call onwards is served by jaxlib's dispatcher)
        r = f(a, 1.0)
        assert repr(r.sharding) == repr(NamedSharding(mesh, P("x")))
        np.testing.assert_allclose(np.asarray(r), x * 2 + 1)
    other = plait.device_put(x, NamedSharding(mesh, P(None, "y")))
    for arg in (other, x, plait.device_put(x)):  # other layouts, host data, one device
        np.testing.assert_allclose(np.asarray(f(a, arg)), x * 3)
        np.testing.assert_allclose(np.asarray(f(a, arg)), x * 3)


def test_one_device_export_runs_on_sharded_arguments() -> None:
    # As the seed's device-polymorphic export: an artifact exported for one device and
    # without sharding annotations is partitioned over the arguments' mesh.
    exp = plait.export.export(plait.jit(pjnp.cos))(np.arange(4.0, dtype=np.float32))
    mesh = Mesh(plait.devices()[:4], ("x",))
    arg = plait.device_put(np.arange(4.0, dtype=np.float32), NamedSharding(mesh, P("x")))
    r = exp.call(arg)
    np.testing.assert_allclose(np.asarray(r), np.cos(np.arange(4.0)), rtol=1e-6)
    assert repr(r.sharding) == repr(NamedSharding(mesh, P("x")))


def _seed_export(lib: Any, Mesh_: Any, NS: Any, spec: Any) -> tuple[Any, Any, Any]:
    # Seed 003's device-polymorphic export: f exported for the first 4 devices.
    mesh = Mesh_(lib.devices()[:4], ("a",))
    arg = np.arange(32, dtype=np.int32)
    exp = lib.export.export(lib.jit(lambda x: x.T, in_shardings=(NS(mesh, spec("a")),)))(arg)
    return exp, mesh, arg


def test_device_polymorphic_export_behaves_as_jax() -> None:
    import jax.export  # noqa: F401  (jax.export is a submodule)
    from jax.sharding import Mesh as JMesh
    ours, o_mesh, arg = _seed_export(plait, Mesh, NamedSharding, P)
    theirs, t_mesh, _ = _seed_export(jax, JMesh, JNamedSharding, JP)
    assert ours.nr_devices == theirs.nr_devices == 4
    assert ours.in_shardings_hlo == theirs.in_shardings_hlo
    layouts = [(ours, Mesh, NamedSharding, P, plait), (theirs, JMesh, JNamedSharding, JP, jax)]
    seen: list[Any] = []
    for exp, Mesh_, NS, spec, lib in layouts:
        same = Mesh_(lib.devices()[:4], ("a",))
        other = Mesh_(np.array(lib.devices()[2:6]).reshape(2, 2), ("b", "c"))
        r1 = exp.call(lib.device_put(arg, NS(same, spec("a"))))
        r2 = exp.call(lib.device_put(arg, NS(other, spec("b"))))
        seen.append([(repr(r.sharding), [(s.device.id, s.index) for s in r.addressable_shards],
                      np.asarray(r).tolist()) for r in (r1, r2)])
        def call_one_device(exp: Any = exp) -> Any:
            return exp.call(arg)

        def lay_over_other(exp: Any = exp, other: Any = other) -> Any:
            return exp.in_shardings_jax(other)

        e = raised(call_one_device)
        seen.append((type(e).__name__, str(e)))
        seen.append(repr(exp.in_shardings_jax(Mesh_(lib.devices()[4:], ("a",)))))
        e = raised(lay_over_other)
        seen.append((type(e).__name__, str(e).split(" does not match")[0]))
    half = len(seen) // 2
    assert seen[:half] == seen[half:]
    del o_mesh, t_mesh


def test_multi_device_artifacts_cross_between_plait_and_jax() -> None:
    import jax.export  # noqa: F401  (jax.export is a submodule)
    from jax.sharding import Mesh as JMesh
    x = _x(8, 4)
    jm, pm = JMesh(jax.devices()[:4], ("a",)), Mesh(plait.devices()[:4], ("a",))
    other = Mesh(np.array(plait.devices()[4:]).reshape(2, 2), ("b", "c"))
    theirs = jax.export.export(jax.jit(lambda v: jjnp.sin(v).T * 2, in_shardings=(
        JNamedSharding(jm, JP("a")),)))(x)
    ours = plait.export.deserialize(theirs.serialize())
    assert ours.nr_devices == 4
    # The export layouts travel in the artifact, both ways.
    assert repr(ours.in_shardings_jax(pm)) == repr(theirs.in_shardings_jax(jm))
    assert repr(ours.out_shardings_jax(pm)) == repr(theirs.out_shardings_jax(jm))
    for mesh, spec in ((pm, P("a")), (other, P("b"))):
        r = ours.call(plait.device_put(x, NamedSharding(mesh, spec)))
        np.testing.assert_allclose(np.asarray(r), np.sin(x).T * 2, rtol=1e-6)
    mine = plait.export.export(plait.jit(lambda v: pjnp.sin(v).T * 2, in_shardings=(
        NamedSharding(pm, P("a")),)))(x)
    back = jax.export.deserialize(mine.serialize())
    assert back.nr_devices == 4
    assert repr(back.in_shardings_jax(jm)) == repr(theirs.in_shardings_jax(jm))
    assert repr(plait.export.deserialize(mine.serialize()).in_shardings_jax(pm)) == \
        repr(mine.in_shardings_jax(pm))
    r = back.call(jax.device_put(x, JNamedSharding(jm, JP("a"))))
    np.testing.assert_allclose(np.asarray(r), np.sin(x).T * 2, rtol=1e-6)


def test_plait_never_imports_jax_with_sharded_arrays(tmp_path: Any) -> None:
    import subprocess
    import sys
    script = tmp_path / "no_jax.py"
    script.write_text(
        "import os, sys\n"
        "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8'\n"
        "import numpy as np, plait, plait.numpy as jnp\n"
        "from plait.sharding import NamedSharding, PartitionSpec as P\n"
        "mesh = plait.make_mesh((4, 2), ('x', 'y'))\n"
        "a = plait.device_put(np.arange(32.).reshape(8, 4), NamedSharding(mesh, P('x', 'y')))\n"
        "b = plait.jit(lambda v: v * 2)(a)\n"
        "assert np.asarray(b).sum() == 992.0\n"
        "assert [s.data.shape for s in b.addressable_shards] == [(2, 2)] * 8\n"
        "r = plait.pmap(lambda v: plait.lax.psum(v, 'i'), axis_name='i')(np.ones((8, 2)))\n"
        "assert np.asarray(r).tolist() == [[8.0, 8.0]] * 8\n"
        "assert 'jax' not in sys.modules, [m for m in sys.modules if m.startswith('jax.')]\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "ok"


# -- properties ----------------------------------------------------------------------------

_MESH_SHAPES = [((8,), ("a",)), ((4, 2), ("a", "b")), ((2, 4), ("a", "b")),
                ((2, 2, 2), ("a", "b", "c"))]


@st.composite
def _layouts(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[str, ...], tuple[Any, ...],
                                       tuple[int, ...]]:
    shape, names = draw(st.sampled_from(_MESH_SHAPES))
    ndim = draw(st.integers(1, 3))
    free = list(names)
    parts: list[Any] = []
    for _ in range(draw(st.integers(0, ndim))):
        k = draw(st.integers(0, min(2, len(free))))
        chosen = draw(st.permutations(free))[:k] if free else []
        free = [n for n in free if n not in chosen]
        parts.append(None if not chosen else chosen[0] if len(chosen) == 1 else tuple(chosen))
    sizes = dict(zip(names, shape))
    dims = []
    for d in range(ndim):
        p = parts[d] if d < len(parts) else None
        split = 1 if p is None else int(np.prod([sizes[n] for n in ((p,) if isinstance(p, str)
                                                                    else p)]))
        dims.append(split * draw(st.integers(1, 2)))
    return shape, names, tuple(parts), tuple(dims)


@hypothesis.given(_layouts())
@hypothesis.settings(max_examples=25)
def test_layouts_match_jax(layout: tuple[Any, ...]) -> None:
    shape, names, parts, dims = layout
    ours_mesh, theirs_mesh = _meshes(shape, names)
    ours_s, theirs_s = NamedSharding(ours_mesh, P(*parts)), JNamedSharding(theirs_mesh, JP(*parts))
    x = np.arange(int(np.prod(dims)), dtype=np.float32).reshape(dims)
    a, b = plait.device_put(x, ours_s), jax.device_put(x, theirs_s)
    assert repr(a.sharding) == repr(b.sharding)
    assert ours_s.shard_shape(dims) == theirs_s.shard_shape(dims)
    assert [(s.device.id, s.index, s.replica_id) for s in a.addressable_shards] == \
        [(s.device.id, s.index, s.replica_id) for s in b.addressable_shards]
    np.testing.assert_array_equal(np.asarray(a), x)
    # A jitted function keeps the layout of an argument it returns transformed.
    r = plait.jit(lambda v: v * 2)(a)
    np.testing.assert_array_equal(np.asarray(r), x * 2)


def test_set_mesh_lets_bare_specs_lay_out_values_as_in_jax() -> None:
    ours_mesh, theirs_mesh = _meshes((4, 2), ("x", "y"))
    x = _x(8, 4)
    results = []
    for lib, lax, mesh, spec in ((plait, plax, ours_mesh, P), (jax, jax.lax, theirs_mesh, JP)):
        with lib.set_mesh(mesh):
            f = lib.shard_map(lambda v, lax=lax: lax.psum(v, "x"), in_specs=spec("x", "y"),
                              out_specs=spec(None, "y"))
            g = lib.jit(lambda v, lax=lax, spec=spec: lax.with_sharding_constraint(
                v * 2, spec("x")))
            a = lib.device_put(x, spec("x"))
            results.append((f(x), g(x), a, g(a)))
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)
        assert repr(ours.sharding) == repr(theirs.sharding)
    assert plait.sharding.get_mesh() is None
    e = raised(lambda: plait.device_put(x, P("x")))
    assert isinstance(e, ValueError) and "plait.set_mesh" in str(e)
    with ours_mesh:  # (a mesh is a context manager too)
        assert plait.sharding.get_mesh() is ours_mesh


def test_programs_over_two_meshes_are_refused_clearly() -> None:
    a_mesh = Mesh(plait.devices()[:4], ("x",))
    b_mesh = Mesh(plait.devices()[4:], ("x",))
    a = plait.device_put(np.ones(8, np.float32), NamedSharding(a_mesh, P("x")))
    b = plait.device_put(np.ones(8, np.float32), NamedSharding(b_mesh, P("x")))
    e = raised(lambda: plait.jit(lambda u, v: u + v)(a, b))
    assert isinstance(e, plait.errors.ArgumentError) and "incompatible devices" in str(e)


def test_donation_of_sharded_arguments() -> None:
    mesh, _ = _meshes((4, 2), ("x", "y"))
    s = NamedSharding(mesh, P("x", "y"))
    a = plait.device_put(_x(8, 4), s)
    r = plait.jit(lambda u: u * 2, donate_argnums=0)(a)
    np.testing.assert_allclose(np.asarray(r), _x(8, 4) * 2)
    assert a.is_deleted() and repr(r.sharding) == repr(s)


def test_bare_specs_follow_the_current_mesh_from_call_to_call() -> None:
    f = plait.jit(lambda u: u + 1, out_shardings=P("m"))
    x = np.zeros(8, np.float32)
    for devices in (plait.devices()[:4], plait.devices()[4:], plait.devices()[:2]):
        mesh = Mesh(devices, ("m",))
        with plait.set_mesh(mesh):
            for _ in range(2):
                r = f(x)
                assert r.sharding.mesh == mesh and r.devices() == set(devices)


def test_shard_map_without_mesh_uses_the_mesh_current_at_each_call_as_jax() -> None:
    # (Defined under an 8-device mesh, called under a 2-device one: the blocks are the
    # 2-device mesh's, as in JAX's pipeline-parallel tutorial.)
    results = []
    for lib, spec in ((plait, P), (jax, JP)):
        big = lib.make_mesh((8,), ("s",), axis_types=(
            AxisType.Auto if lib is plait else JAxisType.Auto,))
        with lib.set_mesh(big):
            f = lib.shard_map(lambda v: v.reshape(2, -1).sum(0) * v.shape[0],
                              in_specs=spec("s"), out_specs=spec("s"))
        small_mesh = (Mesh if lib is plait else jax.sharding.Mesh)(
            np.array(lib.devices()[:2]), ("s",))
        with lib.set_mesh(small_mesh):
            results.append(np.asarray(lib.jit(f)(np.arange(16.0, dtype=np.float32))))
    np.testing.assert_array_equal(results[0], results[1])


# -- check_vma: results claimed replicated must be ------------------------------------------

def _replication_cases(L: Any) -> dict[str, tuple[Callable[[Any], Any], Any, Any]]:
    P_ = P if L is plait else JP
    lax = L.lax
    return {
        "plain": (lambda x: x * 2, P_("i"), P_()),
        "psum": (lambda x: lax.psum(x, "i"), P_("i"), P_()),
        "named": (lambda x: x * 2, P_("i"), P_("i")),
        "pmax": (lambda x: lax.pmax(x, ("i",)), P_("i"), P_()),
        "axis_index": (lambda x: x * lax.axis_index("j"), P_("i"), P_("i")),
        "jit_psum": (lambda x: L.jit(lambda y: lax.psum(y, "i"))(x), P_("i"), P_()),
        "cond": (lambda x: lax.cond(x[0] > 0, lambda y: y, lambda y: -y,
                                    x.sum(keepdims=True)), P_("i"), P_()),
        "ppermute": (lambda x: lax.ppermute(x, "i", [(0, 1), (1, 0)]), P_("i"), P_()),
        "while": (lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2),
                                           (0, lax.psum(x, "i")))[1], P_("i"), P_()),
        "psum_scatter": (lambda x: lax.psum_scatter(x, "i", tiled=True), P_("i"), P_()),
    }


@pytest.mark.parametrize("case", sorted(_replication_cases(plait)))
def test_out_specs_claiming_replication_are_checked_as_jax(case: str) -> None:
    # A result whose out_specs leaves out an axis it varies over would silently be one
    # device's block: JAX refuses it (check_vma), and so does plait.
    ours_mesh, theirs_mesh = _meshes((2, 2), ("i", "j"))
    x = _x(8)
    f, i, o = _replication_cases(plait)[case]
    g, ji, jo = _replication_cases(jax)[case]
    run = lambda: plait.shard_map(f, mesh=ours_mesh, in_specs=i, out_specs=o)(x)  # noqa: E731
    try:
        want = jax.shard_map(g, mesh=theirs_mesh, in_specs=ji, out_specs=jo)(x)
    except ValueError as e:
        assert "require replication" in str(e)
        with pytest.raises(ValueError, match="out_specs which require replication which "
                                             "can't be statically inferred"):
            run()
        # Unchecked, it runs (the user vouches for the replication).
        plait.shard_map(f, mesh=ours_mesh, in_specs=i, out_specs=o, check_vma=False)(x)
    else:
        assert_close(run(), want)


def test_replication_error_names_the_axes() -> None:
    mesh, _ = _meshes((2, 2), ("i", "j"))
    with pytest.raises(ValueError, match=re.escape(
            "out_specs is P('i',) which implies that the corresponding output "
            "value is only varying across mesh axes {i} and not {j}, but it was inferred "
            "to be possibly varying over {i, j}")):
        plait.shard_map(lambda x: x * plax.axis_index("j"), mesh=mesh, in_specs=P("i"),
                        out_specs=P("i"))(_x(8))


def _fsdp_loss(lib: Any, np_: Any, mesh: Any, spec: Any) -> Callable[..., Any]:
    # JAX's shard_map tutorial's FSDP step: gather each layer's weights just before use,
    # and again on the backward pass (a remat policy that saves no all_gather). The last
    # layer's activation is dead: its partial evaluation leaves unused residuals.

    def predict(params: Any, x: Any) -> Any:
        for w, b in params:
            out = np_.dot(x, lib.lax.all_gather(w, "batch", tiled=True)) + \
                lib.lax.all_gather(b, "batch", tiled=True)
            x = lib.nn.relu(out)
        return out
    predict = lib.remat(predict, policy=lambda prim, *_, **__: str(prim) != "all_gather")

    def loss(params: Any, batch: Any) -> Any:
        x, y = batch
        local = np_.mean(np_.sum((predict(params, x) - y) ** 2, axis=-1))
        return lib.lax.pmean(local, "batch")
    return lib.shard_map(loss, mesh=mesh, in_specs=spec("batch"), out_specs=spec())


@pytest.mark.parametrize("layers", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_fsdp_gradients_through_remat_in_shard_map_match_jax(layers: int) -> None:
    ours_mesh = plait.make_mesh((4,), ("batch",), axis_types=(AxisType.Explicit,))
    theirs_mesh = jax.make_mesh((4,), ("batch",), axis_types=(JAxisType.Explicit,))
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(8, 8)).astype(np.float32) / 3,
               rng.normal(size=(8,)).astype(np.float32)) for _ in range(layers)]
    batch = (rng.normal(size=(16, 8)).astype(np.float32),
             rng.normal(size=(16, 8)).astype(np.float32))
    ours = _fsdp_loss(plait, pjnp, ours_mesh, P)
    theirs = _fsdp_loss(jax, jjnp, theirs_mesh, JP)
    args = (params, batch)
    expected = jax.jit(jax.grad(theirs))(
        *jax.device_put(args, JNamedSharding(theirs_mesh, JP("batch"))))
    args = plait.device_put(args, NamedSharding(ours_mesh, P("batch")))
    assert_close(plait.jit(plait.grad(ours))(*args), expected)
    assert_close(plait.grad(ours)(*args), expected)


def test_shard_map_takes_and_returns_key_arrays_as_jax() -> None:
    # flax's randomness guide splits a key per device inside shard_map.
    out = []
    for lib in (plait, jax):
        mesh = lib.make_mesh((8,), ("data",), axis_types=(
            AxisType.Auto if lib is plait else JAxisType.Auto,))
        spec = P("data") if lib is plait else JP("data")

        def body(k: Any, lib: Any = lib) -> Any:
            return lib.random.normal(k[0], (2,)), lib.random.split(k[0], 1)
        f = lib.shard_map(body, mesh=mesh, in_specs=spec, out_specs=(spec, spec))
        keys = lib.random.split(lib.random.key(0), 8)
        values, new_keys = f(keys)
        out.append((np.asarray(values), np.asarray(lib.random.key_data(new_keys)),
                    np.asarray(lib.jit(f)(keys)[0])))
    for ours, theirs in zip(out[0], out[1]):
        np.testing.assert_array_equal(ours, theirs)


def test_mesh_queries_and_update_as_jax() -> None:
    def describe(L: Any, mesh_type: Any, axis_type: Any) -> list[Any]:
        m = mesh_type(np.array(L.devices()).reshape(4, 2), ("x", "y"))
        return [m.shape_tuple, m.empty, m.is_multi_process, [d.id for d in m.local_devices],
                m.local_mesh == m, m.update(axis_names=("a", "b")).axis_names,
                str(m.update(axis_types=(axis_type.Explicit,) * 2).axis_types),
                m.update(devices=np.array(L.devices()[:4]).reshape(2, 2)).shape_tuple]
    assert describe(plait, Mesh, AxisType) == describe(jax, jax.sharding.Mesh, JAxisType)


def test_shard_map_none_results_and_arguments_are_empty_subtrees_as_jax() -> None:
    """A ``None`` argument or result is an empty pytree with no spec of its own
    (``out_specs=None`` for a function returning ``None``), as in JAX."""
    ours_mesh, theirs_mesh = _meshes((8,), ("i",))

    def run(L: Any, mesh: Any, P_: Any) -> Any:
        g = L.shard_map(lambda x, n, y: (x * 2, None, {"a": y}), mesh=mesh,
                        in_specs=(P_("i"), None, P_()), out_specs=(P_("i"), None, P_()))
        nothing = L.shard_map(lambda x: None, mesh=mesh, in_specs=P_(), out_specs=None)
        return g(np.arange(8.0, dtype=np.float32), None, np.ones(2, np.float32)), \
            nothing(np.ones(3, np.float32))

    (ours, ours_none), (theirs, theirs_none) = run(plait, ours_mesh, P), run(jax, theirs_mesh, JP)
    assert ours_none is None and theirs_none is None and ours[1] is None
    assert_close(ours[0], theirs[0])
    assert_close(ours[2]["a"], theirs[2]["a"])


def test_pmap_takes_arguments_laid_out_over_its_devices_under_other_axis_names() -> None:
    """chex puts pmap's arguments over ``Mesh(devices, ('_device_put_replicated',))``: the
    same devices in the same order as pmap's mesh, so JAX takes them as they are."""
    def run(L: Any, P_: Any) -> Any:
        mesh = L.sharding.Mesh(np.array(L.local_devices()), ("_r",))
        x = L.device_put(np.stack([np.arange(3.0, dtype=np.float32) + i for i in range(N)]),
                         L.sharding.NamedSharding(mesh, P_("_r")))
        return L.pmap(lambda v: L.lax.pmean(v, "i") * 2, axis_name="i")(x)

    ours, theirs = run(plait, P), run(jax, JP)
    assert_close(ours, theirs)
    assert repr(ours.sharding) == repr(theirs.sharding)

"""Sharding in types (meshes with ``Explicit`` axes) against JAX 0.10.2 on the same 8 CPU
devices: each program is written once and run under both libraries; the result types
(``typeof``, shardings included), the values, the result layouts and the refusals
(``ShardingTypeError``) must agree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.sharding import AxisType as JAxisType

import plait
import plait.numpy as pjnp
from plait import lax as plax
from plait.errors import ShardingTypeError
from plait.ir import ShapedArray, check_jaxpr, parse_jaxpr
from plait.sharding import AbstractMesh, AxisType, NamedSharding, use_abstract_mesh
from plait.sharding import PartitionSpec as P
from tests.frontend.jax_oracle import raised

pytestmark = pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices "
                                "(XLA_FLAGS=--xla_force_host_platform_device_count=8)")

X = np.arange(32.0, dtype=np.float32).reshape(8, 4)


def _libs() -> list[tuple[Any, Any, Any]]:
    """(library, numpy namespace, lax) for plait and JAX, each with an Explicit mesh."""
    return [(plait, pjnp, plax), (jax, jjnp, jax.lax)]


def _mesh(lib: Any) -> Any:
    types = (AxisType.Explicit,) * 2 if lib is plait else (JAxisType.Explicit,) * 2
    return lib.make_mesh((4, 2), ("X", "Y"), types)


def _run(make: Callable[[Any, Any, Any], Any]) -> list[Any]:
    """``make(lib, jnp, lax)`` under each library's Explicit mesh: its result, or the
    name of the exception it raised and its message."""
    out = []
    for lib, jnp, lax in _libs():
        with lib.set_mesh(_mesh(lib)):
            try:
                out.append(make(lib, jnp, lax))
            except Exception as e:  # the refusal is compared, not raised
                out.append((type(e).__name__, str(e)))
    return out


def _same_typed(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, tuple) and len(theirs) == 2 and isinstance(theirs[0], str):
        assert isinstance(ours, tuple) and ours[0] == theirs[0], (ours, theirs)
        return
    ol, tl = plait.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ol) == len(tl)
    for o, t in zip(ol, tl):
        assert str(plait.typeof(o)) == str(jax.typeof(t))
        pad = (None,) * o.ndim
        assert (tuple(o.sharding.spec) + pad)[:o.ndim] == (tuple(t.sharding.spec) + pad)[:o.ndim]
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=2e-6, atol=1e-5)


def _put(lib: Any, a: np.ndarray, *spec: Any) -> Any:
    return lib.device_put(a, lib.P(*spec))


# (name, program over x: f32[8@X,4@Y] and y: f32[8@X,4] and w: f32[4@Y,2]): each runs
# eagerly and under jit.
CASES: dict[str, Callable[[Any, Any, Any, Any, Any, Any], Any]] = {
    "sin": lambda lib, jnp, lax, x, y, w: jnp.sin(x),
    "add replicated dims": lambda lib, jnp, lax, x, y, w: x + y,
    "scalar": lambda lib, jnp, lax, x, y, w: x * 2 + 1,
    "sum 0": lambda lib, jnp, lax, x, y, w: x.sum(0),
    "sum all": lambda lib, jnp, lax, x, y, w: x.sum(),
    "max 1": lambda lib, jnp, lax, x, y, w: jnp.max(x, axis=1),
    "argmax": lambda lib, jnp, lax, x, y, w: jnp.argmax(x, 0),
    "mean": lambda lib, jnp, lax, x, y, w: x.mean(0),
    "transpose": lambda lib, jnp, lax, x, y, w: x.T,
    "reshape merge": lambda lib, jnp, lax, x, y, w: x.reshape(32),
    "reshape split": lambda lib, jnp, lax, x, y, w: x.reshape(8, 2, 2),
    "reshape ambiguous": lambda lib, jnp, lax, x, y, w: x.reshape(4, 8),
    "expand": lambda lib, jnp, lax, x, y, w: x[None],
    "expand_dims": lambda lib, jnp, lax, x, y, w: jnp.expand_dims(x, 1),
    "broadcast_to": lambda lib, jnp, lax, x, y, w: jnp.broadcast_to(x[:, None, :], (8, 3, 4)),
    "dot": lambda lib, jnp, lax, x, y, w: y @ jnp.ones((4, 3)),
    "dot contracting sharded": lambda lib, jnp, lax, x, y, w: x @ w,
    "dot out_sharding": lambda lib, jnp, lax, x, y, w: jnp.dot(x, w, out_sharding=lib.P("X")),
    "matmul out_sharding": lambda lib, jnp, lax, x, y, w: jnp.matmul(
        x, w, out_sharding=lib.P("X", None)),
    "einsum out_sharding": lambda lib, jnp, lax, x, y, w: jnp.einsum(
        "ij,jk->ik", x, w, out_sharding=lib.P("X")),
    "where": lambda lib, jnp, lax, x, y, w: jnp.where(x > 3, x, 0.0),
    "clip": lambda lib, jnp, lax, x, y, w: jnp.clip(x, 1, 5),
    "rev": lambda lib, jnp, lax, x, y, w: x[::-1],
    "concat": lambda lib, jnp, lax, x, y, w: jnp.concatenate([x, x], 0),
    "concat mismatched": lambda lib, jnp, lax, x, y, w: jnp.concatenate([x, y], 0),
    "cumsum sharded axis": lambda lib, jnp, lax, x, y, w: jnp.cumsum(x, 0),
    "cumsum whole axis": lambda lib, jnp, lax, x, y, w: jnp.cumsum(y, 1),
    "sort sharded axis": lambda lib, jnp, lax, x, y, w: jnp.sort(x, 0),
    "softmax": lambda lib, jnp, lax, x, y, w: lib.nn.softmax(y),
    "incompatible add": lambda lib, jnp, lax, x, y, w: x + lib.reshard(x, lib.P("Y", "X")),
    "reshard": lambda lib, jnp, lax, x, y, w: lib.reshard(x, lib.P(None, "X")),
    "reshard replicated": lambda lib, jnp, lax, x, y, w: lib.reshard(x, lib.P()),
    "zeros out_sharding": lambda lib, jnp, lax, x, y, w: jnp.zeros(
        (8, 4), out_sharding=lib.P("X")) + x,
    "reshape ambiguous out_sharding": lambda lib, jnp, lax, x, y, w: jnp.reshape(
        x, (4, 8), out_sharding=lib.P("X", "Y")),
    "lax.reshape out_sharding": lambda lib, jnp, lax, x, y, w: lax.reshape(
        x, (4, 8), out_sharding=lib.P("X")),
    "ravel out_sharding": lambda lib, jnp, lax, x, y, w: jnp.ravel(y, out_sharding=lib.P("X")),
    "broadcast_to out_sharding": lambda lib, jnp, lax, x, y, w: jnp.broadcast_to(
        y[:, None, :], (8, 2, 4), out_sharding=lib.P("X", "Y")),
    "zeros_like out_sharding": lambda lib, jnp, lax, x, y, w: jnp.zeros_like(
        y, out_sharding=lib.P(None, "Y")),
    "full_like out_sharding": lambda lib, jnp, lax, x, y, w: jnp.full_like(
        y, 2.0, out_sharding=lib.P("Y")),
    "arange out_sharding": lambda lib, jnp, lax, x, y, w: jnp.arange(
        8.0, out_sharding=lib.P("X")) + y[:, 0],
    "asarray out_sharding": lambda lib, jnp, lax, x, y, w: jnp.asarray(
        y, out_sharding=lib.P(None, "Y")),
    "repeat out_sharding": lambda lib, jnp, lax, x, y, w: jnp.repeat(
        y, 2, axis=1, out_sharding=lib.P("X", "Y")),
    "tensordot out_sharding": lambda lib, jnp, lax, x, y, w: jnp.tensordot(
        x, w, 1, out_sharding=lib.P("X")),
    "iota out_sharding": lambda lib, jnp, lax, x, y, w: lax.broadcasted_iota(
        jnp.int32, (8, 4), 1, out_sharding=lib.P("X", "Y")),
    "lax.full sharding": lambda lib, jnp, lax, x, y, w: lax.full(
        (8, 4), 1.0, sharding=lib.NamedSharding(lib.sharding.get_abstract_mesh(),
                                                lib.P("X"))),
    "reduce_sum out_sharding": lambda lib, jnp, lax, x, y, w: lax.reduce_sum(
        x, (1,), out_sharding=lib.P("X")),
    "cond": lambda lib, jnp, lax, x, y, w: lax.cond(True, lambda z: z * 2, lambda z: z, x),
    "fori": lambda lib, jnp, lax, x, y, w: lax.fori_loop(0, 3, lambda i, z: z * 2, x),
    "scan sharded xs": lambda lib, jnp, lax, x, y, w: lax.scan(
        lambda c, r: (c + r, r * 2), jnp.zeros(4), x),
    "scan split inside": lambda lib, jnp, lax, x, y, w: lax.scan(
        lambda c, r: (c + r, r * 2), jnp.zeros(4, out_sharding=lib.P("X")),
        lib.reshard(y, lib.P(None, "X"))),
    "grad": lambda lib, jnp, lax, x, y, w: lib.grad(lambda z: (jnp.sin(z) * z).sum())(x),
    "grad dot": lambda lib, jnp, lax, x, y, w: lib.grad(
        lambda a, b: jnp.tanh(a @ b).sum(), argnums=(0, 1))(y, jnp.ones((4, 3))),
    "vmap": lambda lib, jnp, lax, x, y, w: lib.vmap(lambda r: r * 2)(x),
    "vmap sum": lambda lib, jnp, lax, x, y, w: lib.vmap(lambda r: r.sum())(x),
    "slice sharded dim": lambda lib, jnp, lax, x, y, w: x[1:3],
    "slice whole dim": lambda lib, jnp, lax, x, y, w: y[:, 1:3],
    "embedding lookup": lambda lib, jnp, lax, x, y, w: jnp.arange(40.0).reshape(10, 4)[
        (y[:, 0] % 10).astype(jnp.int32)],
    "take whole axis": lambda lib, jnp, lax, x, y, w: jnp.take(y, jnp.array([0, 2]), axis=1),
    "take sharded axis": lambda lib, jnp, lax, x, y, w: jnp.take(y, jnp.array([0, 2]), axis=0),
    "at set": lambda lib, jnp, lax, x, y, w: y.at[:, 1].set(0.0),
    "fft last axis": lambda lib, jnp, lax, x, y, w: jnp.fft.fft(y).real,
    "conv": lambda lib, jnp, lax, x, y, w: lax.conv_general_dilated(
        y[:, None, :], jnp.ones((2, 1, 3)), (1,), "SAME"),
    "sort whole axis": lambda lib, jnp, lax, x, y, w: jnp.argsort(y, 1),
    "top_k": lambda lib, jnp, lax, x, y, w: lax.top_k(y, 2)[0],
    "max pool": lambda lib, jnp, lax, x, y, w: lax.reduce_window(
        y, -jnp.inf, lax.max, (1, 2), (1, 2), "VALID"),
    "one_hot": lambda lib, jnp, lax, x, y, w: lib.nn.one_hot(y[:, 0].astype(jnp.int32) % 5, 5),
    "take_along_axis": lambda lib, jnp, lax, x, y, w: jnp.take_along_axis(
        y, jnp.zeros((8, 1), jnp.int32), axis=1),
    "logsumexp": lambda lib, jnp, lax, x, y, w: lib.nn.logsumexp(y, axis=1),
    "var": lambda lib, jnp, lax, x, y, w: jnp.var(y, axis=1),
    "concat whole axis": lambda lib, jnp, lax, x, y, w: jnp.concatenate([y, y], 1),
    "pad whole axis": lambda lib, jnp, lax, x, y, w: jnp.pad(y, ((0, 0), (1, 1))),
    "split": lambda lib, jnp, lax, x, y, w: lax.split(y, (2, 2), axis=1),
    "value_and_grad mlp": lambda lib, jnp, lax, x, y, w: lib.value_and_grad(
        lambda p, a: jnp.mean((jnp.tanh(a @ p["w"]) + p["b"]) ** 2))(
        {"w": jnp.ones((4, 3)), "b": jnp.zeros(3)}, y),
}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", list(CASES))
def test_result_types_values_and_refusals_match_jax(name: str, jit: bool) -> None:
    case = CASES[name]

    def make(lib: Any, jnp: Any, lax: Any) -> Any:
        x, y = _put(lib, X, "X", "Y"), _put(lib, X, "X", None)
        w = _put(lib, np.ones((4, 2), np.float32), "Y", None)
        def f(*a: Any) -> Any:
            return case(lib, jnp, lax, *a)
        return (lib.jit(f) if jit else f)(x, y, w)
    ours, theirs = _run(make)
    _same_typed(ours, theirs)


def test_typeof_prints_the_sharding_in_the_type_as_jax() -> None:
    def make(lib: Any, jnp: Any, lax: Any) -> Any:
        x = _put(lib, X, "X", "Y")
        seen: list[str] = []

        def record(a: Any) -> Any:
            seen.append(str(lib.typeof(a)))
            return a
        lib.jit(record)(x)
        return (str(lib.typeof(x)), repr(lib.typeof(x).sharding.spec), seen,
                str(lib.typeof(_put(lib, X, ("X", "Y")))), str(lib.typeof(jnp.ones(3))))
    ours, theirs = _run(make)
    assert ours == theirs


def test_jaxprs_print_sharded_types_and_parse_back() -> None:
    def make(lib: Any, jnp: Any, lax: Any) -> Any:
        x = _put(lib, X, "X", "Y")
        w = _put(lib, np.ones((4, 2), np.float32), "Y", None)
        return lib.make_jaxpr(lambda a, b: (jnp.sin(a).sum(0) * 2, a.reshape(32),
                                            jnp.dot(a, b, out_sharding=lib.P("X")),
                                            lib.reshard(a, lib.P(None, "X"))))(x, w)
    ours, theirs = _run(make)
    for line in ("a:f32[8@X,4@Y] b:f32[4@Y,2]", "f32[4@Y] = reduce_sum", "f32[32@(X,Y)] = reshape",
                 "f32[8@X,2] = dot_general", "f32[8,4@X] = reshard a"):
        assert line in str(ours) and line in str(theirs), line
    with plait.set_mesh(_mesh(plait)):
        check_jaxpr(ours.jaxpr)
        again = parse_jaxpr(str(ours.jaxpr))
        assert again == ours.jaxpr


def test_lowered_program_constrains_every_sharded_result_as_jax() -> None:
    def make(lib: Any, jnp: Any, lax: Any) -> Any:
        x = _put(lib, X, "X", "Y")
        return lib.jit(lambda a: jnp.sin(a).sum(0)).lower(x).as_text()
    ours, theirs = _run(make)
    for text in (ours, theirs):
        assert 'sdy.sharding_constraint %1 <@mesh, [{"Y"}]>' in text.replace(
            "%0 ", "%0 ") or '<@mesh, [{"Y"}]>' in text
        assert text.count("sdy.sharding_constraint") == 2, text


def test_typed_shardings_need_explicit_axes_and_even_splits() -> None:
    mesh = AbstractMesh((4, 2), ("X", "Y"), (AxisType.Explicit, AxisType.Auto))
    aval = ShapedArray((8, 4), np.float32, False, NamedSharding(mesh, plait.P("X", "Y")))
    assert str(aval) == "float32[8@X,4]"  # the Auto axis is not part of the type
    assert ShapedArray((8, 4), np.float32, False, NamedSharding(mesh, plait.P(None, "Y"))) \
        is ShapedArray((8, 4), np.float32)
    with pytest.raises(TypeError, match="does not evenly divide the dimension size 6"):
        ShapedArray((6, 4), np.float32, False, NamedSharding(mesh, plait.P("X")))
    with plait.set_mesh(_mesh(plait)):
        x = _put(plait, X, "X", "Y")
        with pytest.raises(ValueError, match="reshard: .*dimension size 4"):
            plait.reshard(x, plait.P(None, ("X", "Y")))
        with pytest.raises(ShardingTypeError, match="sharding rule for 'tile' not implemented"):
            plait.ir.primitives.tile_p.bind(x, reps=(1, 2))


def test_use_abstract_mesh_sets_the_mesh_types_name() -> None:
    m = AbstractMesh((8,), ("A",), (AxisType.Explicit,))
    with use_abstract_mesh(m):
        assert plait.sharding.get_abstract_mesh() is m
        text = "{ lambda ; a:f32[8@A,4]. let b:f32[8@A,4] = sin a in (b,) }"
        assert str(parse_jaxpr(text).invars[0].aval) == "float32[8@A,4]"
    with pytest.raises(Exception, match="Explicit axes of the current mesh"):
        parse_jaxpr(text)


def test_auto_axes_lets_the_partitioner_choose_inside_as_jax() -> None:
    def make(lib: Any, jnp: Any, lax: Any) -> Any:
        x = _put(lib, np.arange(16.0, dtype=np.float32).reshape(4, 4), "X", None)
        y = _put(lib, np.arange(16.0, dtype=np.float32).reshape(4, 4), None, "X")
        seen: list[str] = []

        @lib.sharding.auto_axes
        def add2(a: Any, b: Any) -> Any:
            seen.append(f"{lib.typeof(a)} {lib.sharding.get_abstract_mesh().axis_types}")
            return a + b
        eager = add2(x, y, out_sharding=lib.P("X", None))
        jitted = lib.jit(lambda a, b: add2(a, b, out_sharding=lib.P(None, "X")))(x, y)
        fixed = lib.sharding.auto_axes(lambda a: a * 2, axes="X", out_sharding=lib.P("X"))(x)
        return eager, jitted, fixed, seen
    ours, theirs = _run(make)
    _same_typed(ours[:3], theirs[:3])
    assert ours[3] == [s.replace("Explicit", "Explicit") for s in theirs[3]]


def test_explicit_axes_types_values_inside_an_auto_mesh_as_jax() -> None:
    def make(lib: Any, jnp: Any, lax: Any) -> Any:
        seen: list[str] = []

        @lib.sharding.explicit_axes
        def g(a: Any) -> Any:
            z = a * 2
            seen.append(f"{lib.typeof(a)} {lib.typeof(z)}")
            return z
        types = (AxisType.Auto,) * 2 if lib is plait else (JAxisType.Auto,) * 2
        with lib.set_mesh(lib.make_mesh((4, 2), ("X", "Y"), types)):
            x = _put(lib, np.arange(16.0, dtype=np.float32).reshape(4, 4), "X", "Y")
            out = lib.jit(lambda a: g(jnp.sin(a), in_sharding=lib.P("X", "Y")) + 1)(x)
            return out, seen
    ours, theirs = _run(make)
    np.testing.assert_allclose(np.asarray(ours[0]), np.asarray(theirs[0]), rtol=1e-6)
    assert str(plait.typeof(ours[0])) == str(jax.typeof(theirs[0]))
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("sampler", ["normal", "uniform", "bits", "randint", "gumbel"])
def test_random_out_sharding_reshards_the_same_values_as_jax(sampler: str) -> None:
    def make(lib: Any, jnp: Any, lax: Any) -> Any:
        key = lib.random.key(3)
        args: tuple[Any, ...] = (key, (8, 4)) if sampler != "randint" else (key, (8, 4), 0, 9)
        fn = getattr(lib.random, sampler)
        return (fn(*args, out_sharding=lib.P("X", "Y")),
                lib.jit(lambda k: fn(k, *args[1:], out_sharding=lib.P(None, "Y")))(key))
    ours, theirs = _run(make)
    _same_typed(ours, theirs)


def test_random_samplers_take_out_sharding_as_jax() -> None:
    import inspect

    for name in dir(jax.random):
        f = getattr(jax.random, name)
        if callable(f) and "out_sharding" in getattr(inspect.signature(f), "parameters", {}):
            ours = inspect.signature(getattr(plait.random, name))
            assert "out_sharding" in ours.parameters, name
            assert ours.parameters["out_sharding"].kind is inspect.Parameter.KEYWORD_ONLY


def test_make_mesh_defaults_to_explicit_axes_as_jax() -> None:
    ours, theirs = plait.make_mesh((4, 2), ("X", "Y")), jax.make_mesh((4, 2), ("X", "Y"))
    assert str(ours) == str(theirs)
    assert repr(plait.sharding.Mesh(np.array(plait.devices()), ("i",)).axis_types) == \
        repr(jax.sharding.Mesh(np.array(jax.devices()), ("i",)).axis_types)


def test_every_layout_is_a_sharding_as_in_jax() -> None:
    # optax annotates with jax.sharding.Sharding; library code tests isinstance on it.
    def layouts(lib: Any, jnp: Any, lax: Any) -> list[bool]:
        mesh = lib.make_mesh((4, 2), ("X", "Y"), (lib.sharding.AxisType.Auto,) * 2)
        named = lib.sharding.NamedSharding(mesh, lib.P("X"))
        spread = lib.device_put(jnp.ones((8, 4)), named)
        chosen = lib.jit(lambda a: a.sum(0))(spread)  # a layout XLA chose
        one = jnp.ones(3)
        return [isinstance(s, lib.sharding.Sharding) for s in (
            one.sharding, lib.sharding.SingleDeviceSharding(lib.devices()[1]), named,
            spread.sharding, chosen.sharding, plait.typeof(spread).sharding
            if lib is plait else jax.typeof(spread).sharding)] + [
            isinstance(lib.P("X"), lib.sharding.Sharding)]

    ours, theirs = (layouts(lib, jnp, lax) for lib, jnp, lax in _libs())
    assert ours == theirs == [True] * 6 + [False]


def test_reshard_onto_a_named_sharding_needs_no_current_mesh() -> None:
    # JAX's SPMD MNIST example reshards its NumPy datasets this way, outside set_mesh.
    out = []
    for lib in (plait, jax):
        mesh = _mesh(lib)
        y = lib.reshard(X, lib.sharding.NamedSharding(mesh, lib.P("X")))
        out.append((str(lib.typeof(y)), np.asarray(y), y.sharding.spec))
    assert out[0][0] == out[1][0] == "float32[8@X,4]"
    np.testing.assert_array_equal(out[0][1], out[1][1])
    assert tuple(out[0][2]) == tuple(out[1][2])


def test_reshard_drops_unused_trailing_spec_entries_as_jax() -> None:
    # flax's sharding guide reshards a whole model with P(None, None), biases included.
    def make(lib: Any, jnp: Any, lax: Any) -> Any:
        params = {"w": jnp.ones((8, 4)), "b": jnp.ones(4)}
        moved = lib.jit(lambda p: lib.reshard(p, lib.P("X", None, None)))(params)
        return moved, lib.jit(lambda p: lib.reshard(p, lib.P(None, None)))(params)
    ours, theirs = _run(make)
    ol, tl = plait.tree.leaves(ours), jax.tree.leaves(theirs)
    assert [str(plait.typeof(o)) for o in ol] == [str(jax.typeof(t)) for t in tl]
    for o, t in zip(ol, tl):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))
    refused = _run(lambda lib, jnp, lax: lib.reshard(jnp.ones(8), lib.P(None, "X")))
    assert isinstance(refused[0], tuple) and refused[0][0] == "ValueError", refused


def test_partition_specs_answer_as_jaxs() -> None:
    ours, theirs = P("a", ("b", "c"), None), jax.sharding.PartitionSpec("a", ("b", "c"), None)
    for spec in (ours, theirs):
        assert (spec.index(("b", "c")), spec.index("a"), spec.count(None)) == (1, 0, 1)
        assert spec.partitions == ("a", ("b", "c"), None)
        assert spec.reduced == spec.unreduced == frozenset()
    with pytest.raises(ValueError):
        ours.index("z")


def test_a_constraint_on_explicit_axes_is_refused_as_jax() -> None:
    def run(lib: Any) -> BaseException | None:
        mesh = lib.make_mesh((2,), ("x",))
        s = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("x"))
        return raised(lambda: lib.jit(lambda v: lib.lax.with_sharding_constraint(v, s))(
            np.arange(4.0, dtype=np.float32)))
    ours, theirs = run(plait), run(jax)
    assert type(ours) is type(theirs) is ValueError
    assert str(ours).split(" Got")[0] == str(theirs).split(" Got")[0]


def test_key_arrays_take_sharding_constraints_as_jax() -> None:
    def run(lib: Any) -> Any:
        auto = lib.sharding.AxisType.Auto
        mesh = lib.make_mesh((2,), ("x",), axis_types=(auto,))
        s = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("x"))
        keys = lib.jit(lambda k: lib.lax.with_sharding_constraint(lib.random.split(k, 4), s))(
            lib.random.key(0))
        return lib.random.key_data(keys)
    ours, theirs = run(plait), run(jax)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_jit_in_shardings_leave_out_static_arguments_as_jax() -> None:
    def run(lib: Any) -> tuple[Any, BaseException | None]:
        mesh = lib.make_mesh((4,), ("d",))
        s = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("d"))

        def fn(x: Any, scale: Any, relu: bool) -> Any:
            return (lib.numpy.maximum(x, 0) if relu else x * scale).sum()
        ok = lib.jit(fn, in_shardings=(s, None), static_argnums=2)(np.ones((4, 4)), 0.5, False)
        bad = raised(lambda: lib.jit(fn, in_shardings=(s, None, None), static_argnums=2)(
            np.ones((4, 4)), 0.5, True))
        return ok, bad
    ours, theirs = run(plait), run(jax)
    np.testing.assert_allclose(np.asarray(ours[0]), np.asarray(theirs[0]))
    assert isinstance(ours[1], ValueError) and isinstance(theirs[1], ValueError)


def test_a_sharding_over_the_abstract_mesh_lays_out_over_the_current_mesh() -> None:
    # (flax builds its variables' shardings from get_abstract_mesh())
    def run(lib: Any) -> list[Any]:
        auto = lib.sharding.AxisType.Auto
        mesh = lib.make_mesh((4,), ("data",), axis_types=(auto,))
        with lib.set_mesh(mesh):
            s = lib.sharding.NamedSharding(lib.sharding.get_abstract_mesh(),
                                           lib.sharding.PartitionSpec("data", None))
            eager = lib.lax.with_sharding_constraint(lib.numpy.ones((8, 4)), s)
            staged = lib.jit(lambda x: lib.lax.with_sharding_constraint(x * 2, s))(
                lib.numpy.ones((8, 4)))
        return [eager, staged]
    for o, t in zip(run(plait), run(jax)):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))
        assert [s.index for s in o.addressable_shards] == [s.index for s in t.addressable_shards]


def test_like_functions_keep_a_committed_arrays_layout_as_jax() -> None:
    # (optax's adam state, zeros_like of sharded parameters, is sharded as they are)
    def run(lib: Any) -> list[Any]:
        auto = lib.sharding.AxisType.Auto
        mesh = lib.make_mesh((2, 2), ("r", "c"), axis_types=(auto, auto))
        s = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("r", "c"))
        x = lib.device_put(np.ones((8, 2), np.float32), s)
        np_ = lib.numpy
        made = [np_.zeros_like(x), np_.ones_like(x), np_.full_like(x, 3.0),
                lib.lax.full_like(x, 2.0), np_.zeros_like(x, shape=(4,)),
                np_.zeros_like(np_.ones((8, 2))), lib.lax.full_like(x, 1.0, sharding=s)]
        return [(np.asarray(m), [sh.index for sh in m.addressable_shards]) for m in made]
    for (o, oi), (t, ti) in zip(run(plait), run(jax)):
        np.testing.assert_array_equal(o, t)
        assert oi == ti

"""``custom_partitioning``, ``shard_alike``, ``smap`` and ``make_single_device_sharding``,
against JAX 0.10.2 (8 CPU devices, see tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental.custom_partitioning import custom_partitioning as jax_custom_partitioning
from jax.experimental.shard_alike import shard_alike as jax_shard_alike
from jax.sharding import AxisType as JAxisType

import plait
import plait.numpy as pjnp
from plait.experimental.custom_partitioning import custom_partitioning
from plait.experimental.shard_alike import shard_alike
from plait.sharding import AxisType
from tests.frontend.jax_oracle import assert_close

pytestmark = pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices "
                                "(XLA_FLAGS=--xla_force_host_platform_device_count=8)")

X = np.linspace(-1.0, 2.0, 12, dtype=np.float32).reshape(3, 4)


def _partitioned(wrap: Any, np_: Any) -> Any:
    """A function with partitioning rules, written as JAX's documentation writes them."""
    @wrap
    def scaled_softmax(x: Any, scale: float = 2.0) -> Any:
        e = np_.exp(scale * (x - x.max(axis=-1, keepdims=True)))
        return e / e.sum(axis=-1, keepdims=True)

    def partition(mesh: Any, arg_shapes: Any, result_shape: Any) -> Any:
        raise AssertionError("plait does not call the partition rule")

    def infer(mesh: Any, arg_shapes: Any, result_shape: Any) -> Any:
        raise AssertionError("plait does not call the inference rule")

    returned = scaled_softmax.def_partition(partition=partition,
                                            infer_sharding_from_operands=infer,
                                            sharding_rule="i j -> i j")
    assert returned is partition
    return scaled_softmax


def test_custom_partitioning_computes_the_function() -> None:
    ours, theirs = _partitioned(custom_partitioning, pjnp), _partitioned(jax_custom_partitioning,
                                                                          jjnp)
    assert_close(ours(X), theirs(X))
    assert_close(plait.jit(ours)(X), jax.jit(theirs)(X))
    assert_close(ours(X, scale=0.5), theirs(X, scale=0.5))
    # (JAX's primitive has no derivative or batching rule; plait's are the function's.)
    assert_close(plait.grad(lambda x: ours(x)[:, 0].sum())(X),
                 jax.grad(lambda x: theirs.fun(x)[:, 0].sum())(X))
    assert_close(plait.vmap(ours)(np.stack([X, -X])), jax.vmap(theirs.fun)(np.stack([X, -X])))
    assert ours.__name__ == "scaled_softmax"
    assert ours.partition is not None and ours.sharding_rule == "i j -> i j"


def test_custom_partitioning_static_arguments_and_errors() -> None:
    def power(x: Any, n: int) -> Any:
        return x ** n
    ours = custom_partitioning(power, static_argnums=(1,))
    assert_close(plait.jit(ours, static_argnums=1)(X, 3), X ** 3)
    with pytest.raises(ValueError, match=r"Unknown keyword arguments: \{'i': 4\}"):
        ours.def_partition(lambda *a: None, i=4)
    with pytest.raises(ValueError, match="Unknown keyword arguments"):
        jax_custom_partitioning(power).def_partition(lambda *a: None, i=4)
    with pytest.raises(TypeError, match="custom_partitioning: expected a callable"):
        custom_partitioning(3)  # type: ignore[arg-type]  # the error is the point


def test_shard_alike_returns_its_operands() -> None:
    tree = {"a": X, "b": (X[0], np.float32(1.0))}
    other = {"a": X * 2, "b": (X[1], np.float32(2.0))}
    ours, theirs = shard_alike(tree, other), jax_shard_alike(tree, other)
    assert_close(ours, theirs)
    got = plait.jit(lambda t, o: shard_alike(t, o))(tree, other)
    assert_close(got, theirs)
    with pytest.raises(ValueError, match=r"The leaves shapes of `x` and `y` should match. Got "
                                         r"`x` leaf shape: \(3, 4\) and `y` leaf shape: \(4,\)"):
        shard_alike(X, X[0])
    with pytest.raises(ValueError, match="Trees should be equal"):
        shard_alike((X,), [X])
    for bad in ((X, X[0]), ((X,), [X])):
        with pytest.raises(ValueError):
            jax_shard_alike(*bad)


def _smap_pair(**kw: Any) -> tuple[Any, Any]:
    def body(lib: Any) -> Any:
        return lambda a, b: (lib.lax.psum(a.sum(), "i") + b, a * 2)
    ours_mesh = plait.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    their_mesh = jax.make_mesh((4,), ("i",), axis_types=(JAxisType.Auto,))
    y = np.arange(3.0, dtype=np.float32)
    with plait.set_mesh(ours_mesh):
        ours = plait.smap(body(plait), axis_name="i", **kw)(X, y)
    with jax.set_mesh(their_mesh):
        theirs = jax.smap(body(jax), axis_name="i", **kw)(X, y)
    return ours, theirs


def test_smap_matches_jax() -> None:
    ours, theirs = _smap_pair(in_axes=(1, None), out_axes=(None, 1))
    assert_close(ours, theirs)
    mesh = plait.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    with plait.set_mesh(mesh):
        doubled = plait.smap(in_axes=0, out_axes=0, axis_name="i")(lambda r: r * 2)(X.T)
    assert_close(doubled, X.T * 2)


@pytest.mark.parametrize("kw, message", [
    ({"axis_name": ("i",)}, r"smap axis_name should be a `str` or a `Hashable`, but got \('i',\)"),
    ({"in_axes": [0]}, r"smap in_axes must be an int, None, Infer, or a tuple of entries"),
    ({"in_axes": ("a",)}, r"smap in_axes must be an int, None, Infer, or \(nested\) container"),
    ({"out_axes": "a"}, r"smap out_axes must be an int, None, or \(nested\) container with "
                        r"those types as leaves, but got a\."),
])
def test_smap_errors(kw: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"in_axes": 0, "out_axes": 0, "axis_name": "i"} | kw
    with pytest.raises(TypeError, match=message):
        plait.smap(lambda a: a, **args)
    with pytest.raises(TypeError):
        jax.smap(lambda a: a, **args)


def test_smap_over_a_mesh_with_other_axes_is_refused() -> None:
    mesh = plait.make_mesh((4, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
    with plait.set_mesh(mesh), pytest.raises(NotImplementedError,
                                             match="shard_map over some of the mesh axes"):
        plait.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="i")(X)


def test_make_single_device_sharding() -> None:
    ours = plait.sharding.make_single_device_sharding(plait.devices()[1])
    theirs = jax.sharding.make_single_device_sharding(jax.devices()[1])
    assert repr(ours) == repr(theirs)
    assert ours == plait.sharding.SingleDeviceSharding(plait.devices()[1])
    assert plait.device_put(X, ours).sharding == ours
    with pytest.raises(ValueError, match="pinned_host"):
        plait.sharding.make_single_device_sharding(plait.devices()[0], memory_kind="pinned_host")

"""plait's top-level conveniences (devices, typeof, enable_x64, jit as a decorator
factory, jacobian), plait.tree, plait.dtypes and plait.test_util, against JAX 0.10.2's
names of the same meaning."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import jax.random as jr
import ml_dtypes
import numpy as np
import pytest

import plait
import plait.dtypes as pdt
import plait.numpy as pnp
import plait.random as pr
import plait.tree as ptree
from plait.test_util import check_grads

jax.config.update("jax_platforms", "cpu")


def test_devices_and_backend_match_jax() -> None:
    assert plait.device_count() == jax.device_count()
    assert plait.local_device_count() == jax.local_device_count()
    assert plait.default_backend() == jax.default_backend() == "cpu"
    with pytest.raises(RuntimeError, match="Unknown backend 'gpu'"):
        plait.device_count("gpu")
    assert [d.id for d in plait.devices("cpu")] == [d.id for d in jax.devices("cpu")]
    assert len(plait.devices(backend="cpu")) == len(jax.devices(backend="cpu"))
    with pytest.raises(RuntimeError, match="Unknown backend 'gpu'"):
        plait.devices("gpu")


@pytest.mark.parametrize("value", [1.0, 2, True, np.float32(1), np.ones((2, 3), np.int8),
                                   1 + 2j], ids=repr)
def test_typeof_matches_jax(value: Any) -> None:
    ours, theirs = plait.typeof(value), jax.typeof(value)
    assert (ours.shape, ours.dtype, ours.weak_type) == (theirs.shape, theirs.dtype,
                                                      theirs.weak_type)


def test_block_until_ready_and_device_get_keep_the_tree() -> None:
    tree = {"a": pnp.ones(2), "b": [pnp.arange(3), 4]}
    assert plait.block_until_ready(tree) is tree
    host = plait.device_get(tree)
    assert isinstance(host["a"], np.ndarray) and host["b"][1] == 4
    np.testing.assert_array_equal(host["b"][0], jax.device_get(jnp.arange(3)))


@pytest.mark.parametrize("J", [plait, jax], ids=["plait", "jax"])
def test_device_get_passes_traced_values_and_keys_through(J: Any) -> None:
    """As JAX's: a traced value is returned as it is (chex's ``without_device`` variant
    calls it inside ``grad``), and so is a typed key; a raw key's bits are copied."""
    assert J.grad(lambda x: J.device_get(x) * 3.0)(1.0) == 3.0
    assert J.jit(lambda x: J.device_get({"x": x})["x"] * 3.0)(1.0) == 3.0
    key = J.random.key(0)
    got = J.device_get(key)
    assert type(got) is type(key) and got.dtype == key.dtype
    np.testing.assert_array_equal(J.random.key_data(got), J.random.key_data(key))
    assert type(J.device_get(J.random.PRNGKey(0))) is np.ndarray


def test_enable_x64_is_a_context_manager() -> None:
    with plait.enable_x64():
        assert pnp.ones(1).dtype == np.float64
        with plait.enable_x64(False):
            assert pnp.ones(1).dtype == np.float32
        assert pnp.arange(2).dtype == np.int64
    assert pnp.ones(1).dtype == np.float32


def test_jit_without_a_function_is_a_decorator() -> None:
    @plait.jit(static_argnums=1)
    def scale(x: Any, n: int) -> Any:
        return x * n

    assert float(scale(2.0, 3)) == 6.0
    assert plait.make_jaxpr(scale, static_argnums=1)(2.0, 3).jaxpr.eqns[0].primitive.name \
        == "jit"


def test_jacobian_is_jacrev() -> None:
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(plait.jacobian(lambda v: pnp.sin(v) * v)(x),
                               jax.jacobian(lambda v: jnp.sin(v) * v)(x), rtol=1e-6)


def test_tree_module_matches_jax_tree() -> None:
    tree = {"w": [1, 2], "b": (3, {"c": 4})}
    assert ptree.leaves(tree) == jax.tree.leaves(tree)
    assert ptree.map(lambda x: x * 10, tree) == jax.tree.map(lambda x: x * 10, tree)
    assert ptree.reduce(lambda a, b: a + b, tree) == jax.tree.reduce(lambda a, b: a + b, tree)
    assert ptree.all([1, True, (2,)]) == jax.tree.all([1, True, (2,)])
    leaves, treedef = ptree.flatten(tree)
    assert ptree.unflatten(treedef, leaves) == tree
    assert str(ptree.structure(tree)) == str(jax.tree.structure(tree))
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree.leaves_with_path(tree)]
    assert [plait.tree_util.keystr(p) for p, _ in ptree.leaves_with_path(tree)] == paths
    assert ptree.map_with_path(lambda p, x: x, tree) == tree
    outer, inner = ptree.structure([0, 0]), ptree.structure((0, 0, 0))
    grid = [(1, 2, 3), (4, 5, 6)]
    assert ptree.transpose(outer, inner, grid) == jax.tree.transpose(
        jax.tree.structure([0, 0]), jax.tree.structure((0, 0, 0)), grid)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int8, np.uint32,
                                   np.complex64, np.bool_], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", [np.floating, np.integer, np.inexact, np.number,
                                  np.signedinteger, np.generic], ids=lambda k: k.__name__)
def test_issubdtype_matches_jax(dtype: Any, kind: Any) -> None:
    assert pdt.issubdtype(dtype, kind) == jax.dtypes.issubdtype(dtype, kind)
    assert pnp.issubdtype(dtype, kind) == jnp.issubdtype(dtype, kind)


def test_key_dtypes_are_prng_keys() -> None:
    ours, theirs = pr.key(0).dtype, jr.key(0).dtype
    for kind in (np.integer, np.generic):
        assert pdt.issubdtype(ours, kind) == jax.dtypes.issubdtype(theirs, kind)
    assert pdt.issubdtype(ours, pdt.prng_key) and jax.dtypes.issubdtype(theirs,
                                                                          jax.dtypes.prng_key)
    assert pdt.issubdtype(ours, pdt.extended)
    assert not pdt.issubdtype(np.uint32, pdt.prng_key)
    assert pdt.issubdtype(ours, ours)


def test_dtype_helpers_match_jax() -> None:
    for d in ("float64", "int64", "uint8", "bfloat16", float, int):
        assert pdt.canonicalize_dtype(d) == jax.dtypes.canonicalize_dtype(d)
    assert pdt.finfo(pdt.bfloat16).eps == jax.dtypes.finfo(jax.dtypes.bfloat16).eps
    assert pdt.iinfo(np.int8).min == jax.dtypes.iinfo(np.int8).min
    assert pdt.itemsize_bits(np.float16) == jax.dtypes.itemsize_bits(np.float16)
    assert pdt.scalar_type_of(pnp.ones(2)) is jax.dtypes.scalar_type_of(jnp.ones(2))
    assert pdt.result_type(np.int8, 1.0) == jax.dtypes.result_type(np.int8, 1.0)
    assert pdt.float0 == jax.dtypes.float0 and plait.float0 == jax.float0


def test_check_grads_accepts_true_derivatives() -> None:
    check_grads(lambda x, y: pnp.sin(x) * y, (np.float32(0.5), np.array([1.0, 2.0], np.float32)),
                order=2)
    check_grads(lambda x: {"t": pnp.tanh(x)}, (np.linspace(-1.0, 1.0, 4),), order=3,
                modes=["rev"])


def test_check_grads_catches_wrong_derivatives() -> None:
    @plait.custom_jvp
    def wrong(x: Any) -> Any:
        return pnp.sin(x)

    wrong.defjvp(lambda p, t: (pnp.sin(p[0]), 2 * t[0]))
    with pytest.raises(AssertionError, match="JVP tangent mismatch"):
        check_grads(wrong, (np.float32(1.0),), 1, modes=["fwd"])
    with pytest.raises(AssertionError, match="VJP mismatch"):
        check_grads(wrong, (np.float32(1.0),), 1, modes=["rev"])
    with pytest.raises(ValueError, match="Unrecognized mode: sideways"):
        check_grads(wrong, (np.float32(1.0),), 1, modes=["sideways"])


def test_print_environment_info_names_the_versions() -> None:
    text = plait.print_environment_info(return_string=True)
    assert text is not None
    assert f"plait:  {plait.__version__}" in text and "jaxlib: 0.10.2" in text
    n = plait.device_count()
    assert f"device info: cpu-{n}, {n} local devices" in text


def test_sharding_names_at_top_level_are_jax_s() -> None:
    """``NamedSharding`` and ``P`` (``PartitionSpec``) are top-level names, as in JAX."""
    import plait.sharding
    assert plait.NamedSharding is plait.sharding.NamedSharding
    assert plait.P is plait.sharding.PartitionSpec
    assert jax.NamedSharding is jax.sharding.NamedSharding
    assert jax.P is jax.sharding.PartitionSpec
    ours = plait.make_mesh((2,), ("i",), axis_types=(plait.sharding.AxisType.Auto,))
    theirs = jax.make_mesh((2,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    assert repr(plait.NamedSharding(ours, plait.P("i"))) == repr(
        jax.NamedSharding(theirs, jax.P("i")))


@pytest.mark.parametrize("J", [plait, jax], ids=["plait", "jax"])
def test_deprecated_reduce_axes_takes_only_its_default(J: Any) -> None:
    f = J.numpy.sin
    assert float(J.grad(f, reduce_axes=())(0.0)) == 1.0
    assert float(J.value_and_grad(f, reduce_axes=())(0.0)[1]) == 1.0
    assert float(J.vjp(f, 0.0, reduce_axes=())[1](1.0)[0]) == 1.0
    assert float(J.linear_transpose(lambda x: 2 * x, 1.0, reduce_axes=())(1.0)[0]) == 2.0
    for call in (lambda: J.grad(f, reduce_axes=("i",)), lambda: J.vjp(f, 0.0, reduce_axes=("i",)),
                 lambda: J.linear_transpose(f, 1.0, reduce_axes=("i",))):
        with pytest.raises(NotImplementedError, match="reduce_axes argument to"):
            call()


@pytest.mark.parametrize("J", [plait, jax], ids=["plait", "jax"])
def test_removed_and_renamed_keywords_as_jax(J: Any) -> None:
    with pytest.raises(NotImplementedError, match="`concrete` option to `jax.checkpoint`"):
        J.checkpoint(J.numpy.sin, concrete=True)
    with pytest.warns(UserWarning, match="renamed from `host_id` to `process_index`"):
        assert J.local_devices(host_id=0) == J.local_devices()
    assert J.custom_derivatives.zero_from_primal(val=1.0).shape == ()


@pytest.mark.parametrize("J", [plait, jax], ids=["plait", "jax"])
def test_aux_leaves_not_traced_are_passed_through(J: Any) -> None:
    """``has_aux``: a leaf that is no function of the differentiated arguments (a Python
    object, a string, an int, a constant array, a value of an enclosing jit) is returned
    as it is; the traced ones are computed (haiku returns such aux values)."""
    marker, const = object(), J.numpy.ones(2)

    def f(x: Any) -> Any:
        return x * 2, {"o": marker, "s": "str", "i": 3, "c": const, "x": x * 3, "n": None}

    (value, aux), g = J.value_and_grad(f, has_aux=True)(1.0)
    assert (float(value), float(g)) == (2.0, 2.0)
    assert aux["o"] is marker and aux["s"] == "str" and aux["i"] == 3 and type(aux["i"]) is int
    assert aux["n"] is None and float(aux["x"]) == 3.0
    np.testing.assert_array_equal(aux["c"], np.ones(2))
    assert J.grad(f, has_aux=True)(1.0)[1]["o"] is marker
    assert J.vjp(f, 1.0, has_aux=True)[2]["o"] is marker
    seen = []

    def inner(y: Any) -> Any:
        g, (aux_y, aux_marker) = J.grad(lambda x: (x * y, (y, marker)), has_aux=True)(1.0)
        seen.append(aux_marker)
        return g, aux_y

    assert [float(v) for v in J.jit(inner)(3.0)] == [3.0, 3.0] and seen == [marker]


def test_every_equation_of_a_gradient_has_source_info() -> None:
    """A value returned twice sums its cotangents in an equation that, like every other,
    names where it comes from (haiku's jaxpr_info reads eqn.source_info.name_stack)."""
    def loss(x: Any) -> Any:
        y = pnp.sin(x).sum()
        return y, y

    jaxpr = plait.make_jaxpr(plait.grad(loss, has_aux=True))(pnp.ones(3)).jaxpr
    assert all(e.source_info is not None for e in jaxpr.eqns)

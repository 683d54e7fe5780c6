"""plait.export against jax.export 0.10.2: the seed's examples, artifacts exchanged in
both directions, metadata and error messages compared with JAX's, and untrusted bytes."""

from __future__ import annotations

import collections
import functools
import re
from collections.abc import Callable
from typing import Any

import hypothesis.strategies as st
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from jax import export as jexport
from jax import lax as jlax

import plait
import plait.numpy as pnp
from plait import export as pexport
from plait import lax as plax
from plait.errors import JaxprParseError, UnsupportedTransformError
from plait.ir import parse_jaxpr
from tests.frontend.jax_oracle import raised

jax.config.update("jax_platforms", "cpu")

F32 = np.float32
X3 = np.linspace(-1.0, 2.0, 3).astype(F32)
M = (np.eye(3) * 2 + 0.5).astype(F32)


def _same(ours: Any, theirs: Any, rtol: float = 1e-6) -> None:
    la, lb = plait.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert plait.tree_util.tree_structure(ours).num_leaves == len(lb)
    for a, b in zip(la, lb):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-6)


# -- the seed's examples (seed 003, "Exporting and serializing staged-out computations") --

def test_seed_export_serialize_call() -> None:
    def f(x: Any) -> Any:
        return 2 * x * x

    exported = pexport.export(plait.jit(f))(plait.ShapeDtypeStruct((), F32))
    theirs = jexport.export(jax.jit(f))(jax.ShapeDtypeStruct((), F32))
    assert exported.fun_name == theirs.fun_name == "f"
    assert str(exported.in_avals) == str(theirs.in_avals) == "(ShapedArray(float32[]),)"
    main = re.compile(r".*@main.*")
    ours_main, theirs_main = main.search(exported.mlir_module()), main.search(theirs.mlir_module())
    assert ours_main is not None and theirs_main is not None
    assert ours_main.group(0) == theirs_main.group(0)
    rehydrated = pexport.deserialize(exported.serialize())
    assert str(rehydrated.in_avals) == "(ShapedArray(float32[]),)"

    def callee(y: Any) -> Any:
        return 3.0 * rehydrated.call(y * 4.0)
    for out in (callee(1.0), plait.jit(callee)(1.0)):
        assert np.asarray(out).dtype == F32 and float(out) == 96.0


def test_seed_vjp_order_3() -> None:
    def f(x: Any) -> Any:
        return 7 * x * x * x

    blob = pexport.export(plait.jit(f))(1.0).serialize(vjp_order=3)
    g = pexport.deserialize(blob).call
    jg = jexport.deserialize(jexport.export(jax.jit(f))(1.0).serialize(vjp_order=3)).call
    _same(g(0.1), jg(0.1))
    ours, theirs = g, jg
    for expected in (0.21000001, 4.2, 42.0):
        ours, theirs = plait.grad(ours), jax.grad(theirs)
        _same(ours(0.1), theirs(0.1))
        np.testing.assert_allclose(float(ours(0.1)), expected, rtol=1e-6)
    err = raised(lambda: plait.grad(ours)(0.1))
    assert isinstance(err, ValueError) and str(err) == "No VJP is available"
    assert str(raised(lambda: jax.grad(theirs)(0.1))) == str(err)


def test_seed_platforms() -> None:
    exp = pexport.export(plait.jit(plax.cos), platforms=["tpu"])(1.0)
    jexp = jexport.export(jax.jit(jlax.cos), platforms=["tpu"])(1.0)
    err, jerr = raised(lambda: exp.call(1.0)), raised(lambda: jexp.call(1.0))
    assert isinstance(err, ValueError) and str(err) == str(jerr)
    assert str(err) == "Function 'cos' was exported for platforms '('tpu',)' but it is used " \
                       "on '('cpu',)'."
    unsafe = pexport.export(plait.jit(plax.cos), platforms=["tpu"],
                            disabled_checks=[pexport.DisabledSafetyCheck.platform()])(1.0)
    assert np.asarray(unsafe.call(1.0)) == F32(0.5403023)
    multi = pexport.export(plait.jit(plax.cos), platforms=["tpu", "cpu", "cuda"])(1.0)
    assert np.asarray(multi.call(1.0)) == F32(0.5403023)
    # The platform index argument, as JAX's calling convention has it.
    assert '%arg0: tensor<i32> {jax.global_constant = "_platform_index"}' in multi.mlir_module()
    assert pexport.default_export_platform() == jexport.default_export_platform() == "cpu"
    with pytest.raises(TypeError, match="lowering_platforms"):
        pexport.export(plait.jit(plax.cos), lowering_platforms=["tpu"])  # type: ignore[call-arg]  # the seed's old keyword is refused


def test_multi_platform_module_size_within_2_percent() -> None:
    def f(x: Any) -> Any:
        for _ in range(1000):
            x = pnp.cos(x)
        return x

    single = len(pexport.export(plait.jit(f))(1.0).mlir_module_serialized)
    multi = len(pexport.export(plait.jit(f), platforms=["cpu", "tpu", "cuda"])(1.0)
                .mlir_module_serialized)
    assert single <= multi <= 1.02 * single


# -- artifacts exchanged with JAX ---------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


def _cases() -> list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]]:
    """(name, make(numpy namespace) -> function, arguments)."""
    return [
        ("scalar_poly", lambda np_: lambda x: 3 * x ** 2 - x, (F32(1.5),)),
        ("sin_vector", lambda np_: lambda x: np_.sin(x) * 2, (X3,)),
        ("two_results", lambda np_: lambda x, y: (x @ y, np_.tanh(y)), (M, M)),
        ("dict_in_out", lambda np_: lambda d: {"s": d["a"] + d["b"], "p": [d["a"] * 2]},
         ({"a": X3, "b": X3 + 1},)),
        ("kwargs", lambda np_: lambda x, *, scale: x * scale, (X3,)),
        ("int_in_out", lambda np_: lambda i, x: (i * 2 + 1, x * i), (np.arange(3, dtype=np.int32),
                                                                    X3)),
        ("bool_out", lambda np_: lambda x: (x > 0, np_.where(x > 0, x, 0.0)), (X3,)),
        ("unused_arg", lambda np_: lambda x, unused: np_.exp(x), (X3, np.ones(2, F32))),
        ("reduce_reshape", lambda np_: lambda x: np_.sum(x.reshape(2, 6), axis=1),
         (np.arange(12, dtype=F32),)),
        ("cholesky", lambda np_: lambda a: np_.linalg.cholesky(a @ a.T + np_.eye(3)), (M,)),
        ("none_and_tuple", lambda np_: lambda t: (t[0] * 2, None), ((X3, None),)),
        ("float64_off_int8", lambda np_: lambda x: (x.astype(np.int8) * 3).astype(np.int16), (X3,)),
    ]


CASES = _cases()
KWARGS = {"kwargs": {"scale": F32(2.5)}}


@pytest.mark.parametrize("name, make, args", CASES, ids=[c[0] for c in CASES])
def test_metadata_matches_jax(name: str, make: Callable[[Any], Callable[..., Any]],
                              args: tuple[Any, ...]) -> None:
    kw = KWARGS.get(name, {})
    ours = pexport.export(plait.jit(make(pnp)))(*args, **kw)
    theirs = jexport.export(jax.jit(make(jnp)))(*args, **kw)
    for field in ("in_tree", "out_tree", "in_avals", "out_avals", "module_kept_var_idx",
                  "platforms", "calling_convention_version", "nr_devices",
                  "uses_global_constants"):
        assert str(getattr(ours, field)) == str(getattr(theirs, field)), field


@pytest.mark.parametrize("name, make, args", CASES, ids=[c[0] for c in CASES])
def test_plait_artifact_runs_in_jax(name: str, make: Callable[[Any], Callable[..., Any]],
                                    args: tuple[Any, ...]) -> None:
    kw = KWARGS.get(name, {})
    blob = pexport.export(plait.jit(make(pnp)))(*args, **kw).serialize(vjp_order=1)
    loaded = jexport.deserialize(blob)
    _same(loaded.call(*args, **kw), jax.jit(make(jnp))(*args, **kw), rtol=1e-5)
    _check_grad(jax.grad, lambda *a: loaded.call(*a, **kw), jax.jit(make(jnp)), args, kw)


@pytest.mark.parametrize("name, make, args", CASES, ids=[c[0] for c in CASES])
def test_jax_artifact_runs_in_plait(name: str, make: Callable[[Any], Callable[..., Any]],
                                    args: tuple[Any, ...]) -> None:
    kw = KWARGS.get(name, {})
    blob = jexport.export(jax.jit(make(jnp)))(*args, **kw).serialize(vjp_order=1)
    loaded = pexport.deserialize(blob)
    expected = jax.jit(make(jnp))(*args, **kw)
    _same(loaded.call(*args, **kw), expected, rtol=1e-5)
    _same(plait.jit(lambda *a: loaded.call(*a, **kw))(*args), expected, rtol=1e-5)
    _check_grad(plait.grad, lambda *a: loaded.call(*a, **kw), jax.jit(make(jnp)), args, kw)


def _first_float_path(args: tuple[Any, ...]) -> int | None:
    for i, a in enumerate(args):
        leaves = jax.tree_util.tree_leaves(a)
        if leaves and all(np.asarray(x).dtype == F32 for x in leaves):
            return i
    return None


def _check_grad(grad: Any, call: Callable[..., Any], reference: Callable[..., Any],
                args: tuple[Any, ...], kw: dict[str, Any]) -> None:
    """The gradient of the sum of the float results with respect to the first float
    argument, through the loaded artifact's VJP, against JAX's own gradient."""
    i = _first_float_path(args)
    if i is None:
        return

    def loss(f: Callable[..., Any], ns: Any) -> Callable[[Any], Any]:
        def fn(x: Any) -> Any:
            full = list(args)
            full[i] = x
            outs = jax.tree_util.tree_leaves(f(*full)) if ns is jnp else \
                plait.tree_util.tree_leaves(f(*full))
            floats = [o for o in outs if o is not None and np.dtype(o.dtype) == F32]
            return sum(ns.sum(o) for o in floats) if floats else ns.zeros((), F32)
        return fn
    ns = jnp if grad is jax.grad else pnp
    ours = grad(loss(call, ns))(args[i])
    theirs = jax.grad(loss(lambda *a: reference(*a, **kw), jnp))(args[i])
    _same(ours, theirs, rtol=1e-5)


def test_namedtuple_trees_need_registration() -> None:
    f = plait.jit(lambda p: Point(p.y, p.x * 2))
    exp = pexport.export(f)(Point(X3, X3))
    err = raised(exp.serialize)
    assert isinstance(err, ValueError) and "unregistered type" in str(err)
    pexport.register_namedtuple_serialization(Point, serialized_name="test_export.Point")
    jexport.register_namedtuple_serialization(Point, serialized_name="test_export.Point")
    blob = exp.serialize()
    out = jexport.deserialize(blob).call(Point(X3, X3 + 1))
    assert isinstance(out, Point)
    _same(tuple(out), (X3 + 1, X3 * 2))
    back = pexport.deserialize(blob).call(Point(X3, X3 + 1))
    assert isinstance(back, Point)
    _same(tuple(back), (X3 + 1, X3 * 2))


def test_disabled_checks_round_trip() -> None:
    checks = [pexport.DisabledSafetyCheck.platform(),
              pexport.DisabledSafetyCheck.custom_call("my_target")]
    exp = pexport.export(plait.jit(pnp.sin), disabled_checks=checks)(X3)
    theirs = jexport.deserialize(exp.serialize())
    assert [str(c) for c in theirs.disabled_safety_checks] == \
        [str(c) for c in jexport.export(jax.jit(jnp.sin), disabled_checks=[
            jexport.DisabledSafetyCheck.platform(),
            jexport.DisabledSafetyCheck.custom_call("my_target")])(X3).disabled_safety_checks]
    assert pexport.deserialize(exp.serialize()).disabled_safety_checks == tuple(checks)


def test_multi_platform_jax_artifact_runs_in_plait() -> None:
    blob = jexport.export(jax.jit(jnp.cos), platforms=["cuda", "cpu", "tpu"])(X3).serialize()
    _same(pexport.deserialize(blob).call(X3), jnp.cos(X3))


# -- calls: inside traces, composition, refusals ---------------------------------------

def test_call_inside_jit_grad_and_nested_export() -> None:
    exp = pexport.export(plait.jit(lambda x: pnp.sin(x) ** 2))(X3)
    g = plait.jit(plait.grad(lambda x: pnp.sum(exp.call(x) * x)))
    np.testing.assert_allclose(np.asarray(g(X3)), np.asarray(jax.grad(
        lambda x: jnp.sum(jnp.sin(x) ** 2 * x))(X3)), rtol=1e-6)
    # An export calling an exported function: the callee's module is inlined.
    outer = pexport.export(plait.jit(lambda x: exp.call(x) + 1))(X3)
    _same(jexport.deserialize(outer.serialize()).call(X3), jnp.sin(X3) ** 2 + 1)
    assert "call_exported_" in outer.mlir_module()


def test_printed_equation() -> None:
    exp = pexport.export(plait.jit(lambda x: (x, x > 0)))(X3)
    text = str(plait.make_jaxpr(exp.call)(X3))
    assert "call_exported[\n      exported=Exported(fun_name=<lambda>, ...)\n    ] a" in text
    # The text omits the module's bytes: it does not parse back.
    with pytest.raises(JaxprParseError, match="bytes are not part of the printed jaxpr"):
        parse_jaxpr(text)


def test_argument_errors_as_jax() -> None:
    def f(x: Any, y: Any) -> Any:
        return x * y
    args = (np.arange(3, dtype=np.int32), 2)
    ours = pexport.export(plait.jit(f))(*args)
    theirs = jexport.export(jax.jit(f))(*args)
    for bad in [(np.ones(4, np.int32), 2), (np.ones(3, F32), 2), (np.ones((3, 1), np.int32), 2),
                (np.ones(3, np.int32),), (np.ones(3, np.int32), 2, 3)]:
        err, jerr = raised(functools.partial(ours.call, *bad)), \
            raised(functools.partial(theirs.call, *bad))
        assert isinstance(err, ValueError) and str(err) == str(jerr)
    err = raised(lambda: pexport.export(f))
    jerr = raised(lambda: jexport.export(f))  # type: ignore[arg-type]  # not jitted, on purpose
    assert isinstance(err, ValueError)
    assert str(err).split(" but is:")[0] == str(jerr).split(" but is:")[0]


def test_transformations_other_than_reverse_mode_are_refused() -> None:
    call = pexport.deserialize(pexport.export(plait.jit(pnp.sin))(X3).serialize()).call
    with pytest.raises(UnsupportedTransformError, match="vmap of the exported function 'sin'"):
        plait.vmap(call)(np.ones((2, 3), F32))
    with pytest.raises(UnsupportedTransformError, match="forward-mode differentiation"):
        plait.jvp(call, (X3,), (X3,))
    with pytest.raises(UnsupportedTransformError, match="forward-mode differentiation"):
        plait.jacfwd(call)(X3)
    # jacrev is reverse mode: it needs the VJP, which was not serialized.
    with pytest.raises(ValueError, match="No VJP is available"):
        plait.jacrev(call)(X3)


def test_export_refusals() -> None:
    with pytest.raises(ValueError, match="CPU kernels .*lapack_spotrf_ffi"):
        pexport.export(plait.jit(pnp.linalg.cholesky), platforms=["cpu", "tpu"])(M)
    with pytest.raises(ValueError, match="expected distinct platforms"):
        pexport.export(plait.jit(pnp.sin), platforms=["cpu", "gpu3"])
    with pytest.raises(ValueError, match="does not have vjps of high-enough order"):
        pexport.deserialize(pexport.export(plait.jit(pnp.sin))(X3).serialize()).serialize(1)


def test_custom_call_check() -> None:
    from plait.lowering.exporting import check_custom_calls
    from plait.lowering.runtime import parse_module

    def module(target: str) -> Any:
        return parse_module(
            "func.func public @main(%x: tensor<f32>) -> tensor<f32> {\n"
            f'  %y = stablehlo.custom_call @{target}(%x) : (tensor<f32>) -> tensor<f32>\n'
            "  return %y : tensor<f32>\n}")
    with pytest.raises(ValueError, match="(?s)no compatibility guarantees.*my_new_prim"):
        check_custom_calls(module("my_new_prim"), frozenset(), ["cpu"])
    check_custom_calls(module("my_new_prim"), frozenset({"my_new_prim"}), ["cpu"])
    check_custom_calls(module("my_new_prim"), frozenset({"ALL"}), ["cpu"])
    check_custom_calls(module("lapack_sgetrf_ffi"), frozenset(), ["cpu"])
    with pytest.raises(ValueError, match="calls back into Python"):
        check_custom_calls(module("xla_ffi_python_cpu_callback"), frozenset({"ALL"}), ["cpu"])


# -- untrusted bytes ------------------------------------------------------------------

def _valid_blob() -> bytes:
    f = plait.jit(lambda d, i: {"y": pnp.sin(d["x"]) * i, "n": [i + 1]})
    return bytes(pexport.export(f)({"x": X3}, np.int32(2)).serialize(vjp_order=1))


_BLOB = _valid_blob()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_metadata_raises_only_value_error(data: st.DataObject) -> None:
    blob = bytearray(_BLOB)
    # Mutate outside the module's bytes (checked below): the flatbuffer's tables.
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        blob = blob[:data.draw(st.integers(0, len(blob)))]
    try:
        exp = pexport.deserialize(bytes(blob))
    except ValueError:
        return
    # What deserializes is well-formed: its metadata is consistent.
    assert exp.in_tree.num_leaves == len(exp.in_avals)
    assert exp.out_tree.num_leaves == len(exp.out_avals)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_module_raises_only_value_error(data: st.DataObject) -> None:
    exp = pexport.deserialize(_BLOB)
    module = bytearray(exp.mlir_module_serialized)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(module) - 1))
        module[i] = data.draw(st.integers(0, 255))
    import attrs
    bad = attrs.evolve(exp, mlir_module_serialized=bytes(module))
    # MLIR's reader may crash on such bytes: plait reads them in a child process first.
    try:
        bad.call({"x": X3}, np.int32(2))
    except ValueError:
        pass


@pytest.mark.parametrize("blob, message", [
    (b"", "truncated"),
    (b"\x00" * 3, "truncated"),
    (_BLOB[:len(_BLOB) // 2], "truncated"),
])
def test_truncated_bytes(blob: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pexport.deserialize(blob)


def test_unknown_version_is_refused() -> None:
    import flatbuffers  # type: ignore[import-untyped]  # no stubs

    b = flatbuffers.Builder(64)
    b.StartObject(26)
    b.PrependUint16Slot(0, 99, 0)
    b.Finish(b.EndObject())
    with pytest.raises(ValueError, match="serialization version 99"):
        pexport.deserialize(bytes(b.Output()))


def test_deserialize_takes_bytes() -> None:
    with pytest.raises(TypeError, match="expected bytes"):
        pexport.deserialize("not bytes")  # type: ignore[arg-type]  # the wrong type, on purpose


def test_calling_convention_version_option() -> None:
    assert pexport.export(plait.jit(pnp.sin))(X3).calling_convention_version == 10
    plait.config.update("jax_export_calling_convention_version", 9)
    try:
        exp = pexport.export(plait.jit(pnp.sin))(X3)
    finally:
        plait.config.update("jax_export_calling_convention_version", 10)
    assert exp.calling_convention_version == 9
    loaded = jexport.deserialize(exp.serialize())
    assert loaded.calling_convention_version == 9
    _same(loaded.call(X3), jnp.sin(X3))
    with pytest.raises(ValueError, match="export_calling_convention_version"):
        plait.config.update("jax_export_calling_convention_version", 11)
    assert (pexport.minimum_supported_calling_convention_version,
            pexport.maximum_supported_calling_convention_version) == \
        (jexport.minimum_supported_calling_convention_version,
         jexport.maximum_supported_calling_convention_version)

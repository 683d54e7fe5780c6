"""``plait.ffi`` against ``jax.ffi`` 0.10.2: native handlers compiled from
``ffi_handlers.cc`` (and jaxlib's own LAPACK handlers) called from both libraries, with
their values, printed jaxprs, lowered custom calls, vmap methods and errors compared."""

from __future__ import annotations

import ctypes
import pathlib
import re
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import hypothesis.strategies as st
import jax
import numpy as np
import pytest
from hypothesis import given
from jax._src.interpreters import mlir as jax_mlir
from jax.extend.core import Primitive as JaxPrimitive
from jax.interpreters import mlir as jmlir
from jaxlib.mlir import ir

import plait
from plait.errors import ArgumentError, JaxRuntimeError
from plait.extend.core import Primitive
from plait.interpreters import mlir as pmlir
from plait.ir import eval_jaxpr
from plait.ir.primitives.composite import HashableArray
from plait.ir.primitives.foreign import FfiAttributes, FrozenDict
from plait.lowering.attributes import mlir_attribute
from plait.lowering.runtime import mlir_context
from tests.frontend.jax_oracle import raised

jax.config.update("jax_platforms", "cpu")

F32 = np.float32
HANDLERS = ("Scale", "SumProd", "Affine", "Ratio", "Count", "RawCopy", "Increment")


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    """The handlers of ffi_handlers.cc, compiled and registered (once per process: the
    registry is jaxlib's, which plait and JAX share)."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler to build the FFI handlers with")
    so = tmp_path_factory.mktemp("ffi") / "libhandlers.so"
    src = pathlib.Path(__file__).with_name("ffi_handlers.cc")
    subprocess.run([cxx, "-O1", "-std=c++17", "-shared", "-fPIC", "-w",
                    f"-I{plait.ffi.include_dir()}", str(src), "-o", str(so)], check=True)
    handlers = ctypes.cdll.LoadLibrary(str(so))
    for name in HANDLERS:
        plait.ffi.register_ffi_target(f"test_{name.lower()}",
                                      plait.ffi.pycapsule(getattr(handlers, name)))
    return handlers


def _both(make: Callable[[Any], Callable[..., Any]], *args: Any) -> tuple[Any, Any]:
    return make(jax)(*args), make(plait)(*args)


def _same(make: Callable[[Any], Callable[..., Any]], *args: Any) -> None:
    want, got = _both(make, *args)
    for w, g in zip(jax.tree.leaves(want), plait.tree.leaves(got)):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def _jaxprs(make: Callable[[Any], Callable[..., Any]], *args: Any) -> None:
    assert str(plait.make_jaxpr(make(plait))(*args)) == str(jax.make_jaxpr(make(jax))(*args))


def _custom_calls(text: str) -> list[str]:
    """The module's custom calls, their operands' and results' names left out."""
    return [re.sub(r"%[\w#]+", "%_", line.strip()) for line in text.splitlines()
            if "stablehlo.custom_call" in line]


def _lowered(make: Callable[[Any], Callable[..., Any]], *args: Any) -> None:
    want = jax.jit(make(jax)).lower(*args).as_text()
    got = plait.jit(make(plait)).lower(*args).as_text()
    assert _custom_calls(got) == _custom_calls(want)
    assert _custom_calls(want)


# -- handlers compiled from ffi_handlers.cc ----------------------------------------------

def _scale(method: str | None = "expand_dims") -> Callable[[Any], Callable[..., Any]]:
    def make(L: Any) -> Callable[..., Any]:
        def f(x: Any) -> Any:
            return L.ffi.ffi_call("test_scale", L.ShapeDtypeStruct(x.shape, x.dtype),
                                  vmap_method=method)(x, factor=F32(2.5))
        return f
    return make


X = np.arange(6, dtype=F32).reshape(2, 3)


def test_a_compiled_handler_runs_eagerly_and_jitted_as_in_jax(lib: ctypes.CDLL) -> None:
    _same(_scale(), X)
    _same(lambda L: L.jit(_scale()(L)), X)
    _jaxprs(_scale(), X)
    _lowered(_scale(), X)


def _sum_prod(method: str | None) -> Callable[[Any], Callable[..., Any]]:
    def make(L: Any) -> Callable[..., Any]:
        def f(x: Any, y: Any) -> Any:
            out = L.ShapeDtypeStruct(x.shape, x.dtype)
            return L.ffi.ffi_call("test_sumprod", (out, out), vmap_method=method)(x, y)
        return f
    return make


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "broadcast_all",
                                    "legacy_vectorized"])
def test_vmap_methods_give_jaxs_values_and_jaxprs(lib: ctypes.CDLL, method: str) -> None:
    with plait.enable_x64(), jax.enable_x64(True):
        x = np.arange(9.0).reshape(3, 3)
        y = np.arange(3.0) + 0.5
        # (legacy_vectorized passes an unbatched operand as it is: SumProd would see
        # operands of different sizes.)
        cases: list[tuple[Any, np.ndarray]] = [((0, 0), np.stack([y, 2 * y, 3 * y]))]
        if method != "legacy_vectorized":
            cases += [((0, None), y), ((1, None), y)]
        for axes, b in cases:
            def make(L: Any, axes: Any = axes) -> Callable[..., Any]:
                return L.vmap(_sum_prod(method)(L), in_axes=axes)
            _same(make, x, b)
            _jaxprs(make, x, b)
            _lowered(make, x, b)


def test_expand_dims_passes_a_size_one_batch_and_the_handler_sees_it(
        lib: ctypes.CDLL) -> None:
    _same(lambda L: L.vmap(_scale("expand_dims")(L)), X)
    _jaxprs(lambda L: L.vmap(_scale("expand_dims")(L)), X)
    # An unbatched operand gets a batch of one: SumProd sees sizes 6 and 3, and fails
    # in both libraries.
    with plait.enable_x64(), jax.enable_x64(True):
        x, y = np.ones((2, 3)), np.ones(3)
        want = raised(lambda: jax.vmap(_sum_prod("expand_dims")(jax), (0, None))(x, y))
        got = raised(lambda: plait.vmap(_sum_prod("expand_dims")(plait), (0, None))(x, y))
    assert type(got) is type(want) is JaxRuntimeError
    assert "sum_prod: operands of different sizes" in str(got)


def test_vmap_without_a_method_is_jaxs_error(lib: ctypes.CDLL) -> None:
    want = raised(lambda: jax.vmap(_scale(None)(jax))(X))
    got = raised(lambda: plait.vmap(_scale(None)(plait))(X))
    assert type(got) is type(want) is NotImplementedError
    assert str(got) == str(want)


def _affine(L: Any, **attrs: Any) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        return L.ffi.ffi_call("test_affine", L.ShapeDtypeStruct(x.shape, x.dtype))(x, **attrs)
    return f


AFFINE = {"a": 1.5, "b": 2, "twice": True, "mode": "sub",
          "offsets": np.array([10, 20, 30], np.int64)}


def test_attributes_of_every_kind_reach_the_handler(lib: ctypes.CDLL) -> None:
    x = np.arange(5, dtype=F32)
    _same(lambda L: _affine(L, **AFFINE), x)
    _same(lambda L: L.jit(_affine(L, **dict(AFFINE, mode="add", twice=False))), x)
    _jaxprs(lambda L: _affine(L, **AFFINE), x)
    _lowered(lambda L: _affine(L, **AFFINE), x)
    ratio = {"scale": {"num": np.int32(3), "den": np.int32(4)}}
    _same(lambda L: lambda x: L.ffi.ffi_call("test_ratio", L.ShapeDtypeStruct(x.shape,
                                                                              x.dtype))(
        x, **ratio), x)
    _lowered(lambda L: lambda x: L.ffi.ffi_call("test_ratio", L.ShapeDtypeStruct(x.shape,
                                                                                 x.dtype))(
        x, **ratio), x)


def test_an_error_returned_by_the_handler_is_raised_with_its_message(
        lib: ctypes.CDLL) -> None:
    x = np.arange(3, dtype=F32)
    bad = dict(AFFINE, b=-1)
    want = raised(lambda: jax.jit(_affine(jax, **bad))(x))
    got = raised(lambda: plait.jit(_affine(plait, **bad))(x))
    assert type(got) is type(want) is JaxRuntimeError
    assert "affine: b must not be negative" in str(got)
    # A wrongly typed attribute: the handler's binding refuses it, in both.
    wrong = dict(AFFINE, b=2.0)
    want = raised(lambda: jax.jit(_affine(jax, **wrong))(x))
    got = raised(lambda: plait.jit(_affine(plait, **wrong))(x))
    assert type(got) is type(want) is JaxRuntimeError


def _count(L: Any, side_effect: bool) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        L.ffi.ffi_call("test_count", L.ShapeDtypeStruct((), np.int32),
                       has_side_effect=side_effect)(x)
        return x * 2
    return f


def test_a_call_with_side_effects_runs_even_when_unused(lib: ctypes.CDLL) -> None:
    lib.count_calls.restype = ctypes.c_int32
    x = np.ones(3, F32)
    runs = []
    for L in (jax, plait):
        for side_effect in (False, True):
            before = lib.count_calls()
            L.block_until_ready(L.jit(_count(L, side_effect))(x))
            runs.append(lib.count_calls() - before)
    assert runs[:2] == [0, 1]
    assert runs[2:] == runs[:2]
    assert "FFI" not in str(plait.make_jaxpr(_count(plait, False))(x))


def _raw(L: Any, layout: Any) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        return L.ffi.ffi_call("test_rawcopy", L.ShapeDtypeStruct((x.size,), x.dtype))(x)
    def g(x: Any) -> Any:
        return L.ffi.ffi_call("test_rawcopy", L.ShapeDtypeStruct((x.size,), x.dtype),
                              input_layouts=[layout])(x)
    return f if layout is None else g


@pytest.mark.parametrize("layout", [None, (0, 1), (1, 0)])
def test_input_layouts_order_the_handlers_memory(lib: ctypes.CDLL, layout: Any) -> None:
    _same(lambda L: L.jit(_raw(L, layout)), X)
    _lowered(lambda L: _raw(L, layout), X)
    if layout == (1, 0):  # column-major: the handler reads the transpose
        np.testing.assert_array_equal(np.asarray(plait.jit(_raw(plait, layout))(X)),
                                      X.T.ravel())


def test_an_aliased_result_reuses_its_operand(lib: ctypes.CDLL) -> None:
    def make(L: Any) -> Callable[..., Any]:
        return L.jit(lambda x: L.ffi.ffi_call(
            "test_increment", L.ShapeDtypeStruct(x.shape, x.dtype), vmap_method="sequential",
            input_output_aliases={0: 0})(x))
    _same(make, X)
    _same(lambda L: L.vmap(make(L)), X)
    _lowered(make, X)


def test_differentiating_a_call_is_jaxs_error_and_zero_tangents_pass(
        lib: ctypes.CDLL) -> None:
    x = np.arange(3, dtype=F32)
    want = raised(lambda: jax.grad(lambda x: _scale()(jax)(x).sum())(x))
    got = raised(lambda: plait.grad(lambda x: _scale()(plait)(x).sum())(x))
    assert type(got) is type(want) is ValueError
    assert str(got) == str(want)
    # Not differentiated: an FFI call of a constant inside a differentiated function.
    c = np.arange(3, dtype=F32)
    _same(lambda L: L.grad(lambda x: (x * _scale()(L)(c)).sum()), x)


def test_a_user_primitive_lowers_to_a_handler_with_ffi_lowering(lib: ctypes.CDLL) -> None:
    def make(L: Any, prim: Any, mlir: Any) -> Callable[..., Any]:
        prim.def_impl(lambda x, factor: x)  # (never used: the lowering runs)
        prim.def_abstract_eval(lambda x, factor: x)
        mlir.register_lowering(prim, L.ffi.ffi_lowering("test_scale"))
        return L.jit(lambda x: prim.bind(x, factor=F32(4.0)))
    want = make(jax, JaxPrimitive("ffi_scale"), jmlir)(X)
    got = make(plait, Primitive("ffi_scale"), pmlir)(X)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(got), 4 * X)


# -- jaxlib's LAPACK handlers (no compiler needed) --------------------------------------

M = np.array([[4.0, 2.0, 0.4], [2.0, 5.0, 1.0], [0.4, 1.0, 3.0]], F32)


def _potrf(method: str | None = "sequential") -> Callable[[Any], Callable[..., Any]]:
    def make(L: Any) -> Callable[..., Any]:
        call = L.ffi.ffi_call("lapack_spotrf_ffi", (L.ShapeDtypeStruct((3, 3), F32),
                                                    L.ShapeDtypeStruct((), np.int32)),
                              vmap_method=method, input_output_aliases={0: 0},
                              input_layouts=[(1, 0)], output_layouts=[(1, 0), ()])
        return lambda m: call(m, uplo=np.uint8(ord("L")))
    return make


@pytest.fixture(scope="module")
def jax_lapack() -> None:
    """JAX initializes jaxlib's LAPACK when it first lowers a factorization; plait does
    when a program names a ``lapack_`` handler."""
    jax.block_until_ready(jax.jit(jax.lax.linalg.cholesky)(M))


def test_jaxlibs_lapack_handler_is_called_as_jax_calls_it(jax_lapack: None) -> None:
    _same(_potrf(), M)
    _same(lambda L: L.jit(_potrf()(L)), M)
    _jaxprs(_potrf(), M)
    _lowered(_potrf(), M)
    batch = np.stack([M, 2 * M, 3 * M])
    _same(lambda L: L.vmap(_potrf()(L)), batch)
    _jaxprs(lambda L: L.vmap(_potrf()(L)), batch)
    factor, info = plait.jit(_potrf()(plait))(M)
    low = np.tril(np.asarray(factor))  # (LAPACK leaves the upper triangle as it was)
    np.testing.assert_allclose(low @ low.T, M, rtol=1e-5)
    assert int(info) == 0


def test_the_reference_interpreter_refuses_native_code(jax_lapack: None) -> None:
    closed = plait.make_jaxpr(_potrf()(plait))(M)
    with pytest.raises(NotImplementedError, match="cannot run the FFI handler "
                       "'lapack_spotrf_ffi' \\(native code"):
        eval_jaxpr(closed.jaxpr, closed.consts, M)


# -- bad input ---------------------------------------------------------------------------

S = plait.ShapeDtypeStruct((3,), F32)
JS = jax.ShapeDtypeStruct((3,), F32)


@pytest.mark.parametrize("case", [
    lambda L, s: L.ffi.ffi_call("t", s, vmap_method="parallel"),
    lambda L, s: L.ffi.ffi_call("t", [s, 3]),
    lambda L, s: L.ffi.ffi_call("t", s, legacy_backend_config="cfg"),
    lambda L, s: L.ffi.ffi_call("t", s, input_layouts=[(0,), (0,)])(np.ones(3, F32)),
    lambda L, s: L.ffi.ffi_call("t", [s], output_layouts=[(0,), (0,)])(np.ones(3, F32)),
    lambda L, s: L.ffi.ffi_call("t", s, input_output_aliases={1: 0})(np.ones(3, F32)),
    lambda L, s: L.ffi.ffi_call("t", s, input_output_aliases={0: 1})(np.ones(3, F32)),
    lambda L, s: L.ffi.ffi_call("t", s, input_output_aliases={0: 0})(np.ones(4, F32)),
    lambda L, s: L.ffi.register_ffi_type_id("t", None),
], ids=["vmap_method", "result", "legacy_config", "input_layouts", "output_layouts",
        "alias_input", "alias_output", "alias_type", "type_id"])
def test_bad_options_raise_jaxs_errors(case: Callable[[Any, Any], Any]) -> None:
    want = raised(lambda: case(jax, JS))
    got = raised(lambda: case(plait, S))
    assert type(got) is type(want) is ValueError
    assert str(got) == str(want)


def test_a_layout_that_is_no_order_of_the_dimensions_is_refused_at_the_call() -> None:
    # (JAX's lowering refuses it later, as a module that does not verify.)
    call = plait.ffi.ffi_call("t", S, output_layouts=[(0,), (0,)])
    with pytest.raises(ValueError, match=r"ffi_call: expected the layout of output 0 to order "
                       r"its 1 dimensions \(major to minor\), but got \[\(0,\), \(0,\)\]"):
        call(np.ones(3, F32))
    assert type(raised(lambda: jax.jit(lambda x: jax.ffi.ffi_call(
        "t", JS, output_layouts=[(0,), (0,)])(x)).lower(np.ones(3, F32)))) is ValueError


def test_bad_arguments_and_attributes_say_which() -> None:
    call = plait.ffi.ffi_call("t", S)
    with pytest.raises(ArgumentError, match=r"ffi_call\('t'\): args\[1\] cannot be passed "
                       r"to a handler: expected an array"):
        call(np.ones(3, F32), "text")
    with pytest.raises(TypeError, match=r"the attribute z=\(1\+2j\) cannot be passed to a "
                       r"handler: No attribute handler defined for type: <class 'complex'>"):
        call(np.ones(3, F32), z=1 + 2j)
    with pytest.raises(TypeError, match=r"the attribute z=np.complex64\(1\+0j\) cannot be "
                       r"passed to a handler: Unsupported scalar attribute type: complex64"):
        call(np.ones(3, F32), z=np.complex64(1))
    with pytest.raises(TypeError, match=r"the attribute f=<built-in function print> cannot be "
                       r"passed to a handler: No attribute handler defined for type: "
                       r"<class 'builtin_function_or_method'>"):
        call(np.ones(3, F32), f=print)


# -- attributes: their MLIR form and their equality -------------------------------------

_scalars = st.one_of(
    st.booleans(), st.integers(-2**63, 2**63 - 1),
    st.floats(allow_nan=False, width=64), st.text(max_size=8),
    st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.uint32]).flatmap(
        lambda t: st.integers(int(np.iinfo(t).min), int(np.iinfo(t).max)).map(t)),  # type: ignore[type-var]  # (every sampled type is an integer type)
    st.sampled_from([np.float16, np.float32, np.float64]).flatmap(
        lambda t: st.floats(allow_nan=False, allow_infinity=False, width=16).map(t)),
    st.lists(st.integers(-1000, 1000), max_size=5).map(lambda v: np.array(v, np.int64)),
    st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=4).map(
        lambda v: np.array(v, np.float32)),
)
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True), inner, max_size=3),
    st.lists(inner, max_size=3)), max_leaves=6)


@given(_values)
def test_mlir_attribute_is_the_attribute_jax_builds(value: Any) -> None:
    with jax_mlir.make_ir_context(), ir.Location.unknown():
        want = str(jax_mlir.ir_attribute(value))
    with mlir_context():
        got = str(ir.Attribute.parse(mlir_attribute(value)))
    assert got == want


@given(st.sampled_from([1, 1.0, True, np.int32(1), np.float32(1), "1"]),
       st.sampled_from([1, 1.0, True, np.int32(1), np.float32(1), "1"]))
def test_attributes_compare_with_their_types(a: Any, b: Any) -> None:
    same = type(a) is type(b)
    assert (FfiAttributes((("k", a),)) == FfiAttributes((("k", b),))) is same
    assert (FrozenDict({"k": a}) == FrozenDict({"k": b})) is same
    if same:
        assert hash(FfiAttributes((("k", a),))) == hash(FfiAttributes((("k", b),)))


def test_array_attributes_compare_by_dtype_shape_and_elements() -> None:
    a = np.arange(3)
    assert HashableArray(a) == HashableArray(a.copy())
    assert HashableArray(a) != HashableArray(a.astype(np.int32))
    assert HashableArray(a) != HashableArray(a.reshape(3, 1))
    held = HashableArray(a)
    a[0] = 7  # (a copy is held: the caller's array may change)
    assert held.val[0] == 0


def test_export_refuses_a_handler_unless_told_and_the_artifact_runs_in_jax(
        lib: ctypes.CDLL) -> None:
    x = np.arange(4, dtype=F32)
    want = raised(lambda: jax.export.export(jax.jit(_scale()(jax)))(x))
    got = raised(lambda: plait.export.export(plait.jit(_scale()(plait)))(x))
    assert type(got) is type(want) is ValueError
    assert "test_scale" in str(got) and "test_scale" in str(want)
    exported = plait.export.export(
        plait.jit(_scale()(plait)),
        disabled_checks=[plait.export.DisabledSafetyCheck.custom_call("test_scale")])(x)
    np.testing.assert_array_equal(np.asarray(exported.call(x)), 2.5 * x)
    in_jax = jax.export.deserialize(exported.serialize())
    np.testing.assert_array_equal(np.asarray(in_jax.call(x)), 2.5 * x)

"""Small public names of JAX's modules, against ``jax``: ``lax`` types and helpers
(``Tolerance``/``AccuracyMode`` in lowering), ``debug.log`` and the debug effects,
``Shard``, ``stages.CompilerOptions``, ``core.eval_context``."""

from __future__ import annotations

import logging
import types
import typing
from typing import Any

import jax
import numpy as np
import pytest

import plait
from plait import export as pexport
from plait import lax


def _text(alias: Any) -> set[str]:
    """The names of the types in a type alias (a Union's members, or the alias)."""
    unions = (typing.Union, types.UnionType)
    args = typing.get_args(alias) if typing.get_origin(alias) in unions else (alias,)
    return {getattr(a, "__name__", str(a)).split(".")[-1].split("[")[0] for a in args}


@pytest.mark.parametrize("name", ["DotDimensionNumbers", "ConvGeneralDilatedDimensionNumbers",
                                  "PrecisionLike"])
def test_type_aliases_name_jax_types(name: str) -> None:
    assert _text(getattr(lax, name)) == _text(getattr(jax.lax, name))


def test_conv_dimension_numbers_instances() -> None:
    mine = lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
    classes = tuple(a for a in typing.get_args(lax.ConvGeneralDilatedDimensionNumbers)
                    if isinstance(a, type))
    assert isinstance(mine, classes)
    assert tuple(mine) == tuple(jax.lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3),
                                                             (0, 1, 2, 3)))


def test_ragged_dot_dimension_numbers() -> None:
    args = ([[[2], [1]], [[], []]], [1], [0])
    mine, theirs = lax.RaggedDotDimensionNumbers(*args), jax.lax.RaggedDotDimensionNumbers(*args)
    assert repr(mine) == repr(theirs)
    assert mine == lax.RaggedDotDimensionNumbers((((2,), (1,)), ((), ())), (1,), (0,))
    assert hash(mine) == hash(lax.RaggedDotDimensionNumbers(*args))
    with pytest.raises(Exception, match="cannot assign"):
        mine.lhs_ragged_dimensions = (0,)  # type: ignore[misc]  # frozen, on purpose


@pytest.mark.parametrize("value", [1, 2.0, True, 1j, int, float, np.float32, np.int8,
                                   np.ones(2, np.int16), np.float32(1), "float32",
                                   np.dtype("uint8"), np.ones(2)])
def test_dtype(value: Any) -> None:
    assert lax.dtype(value) == jax.lax.dtype(value)


def test_dtype_of_arrays_and_errors() -> None:
    assert lax.dtype(plait.numpy.ones(2, "bfloat16")) == jax.lax.dtype(
        jax.numpy.ones(2, "bfloat16"))
    with pytest.raises(ValueError, match="Invalid argument to dtype: None"):
        lax.dtype(None)
    with pytest.raises(TypeError, match="Cannot determine dtype of"):
        lax.dtype(object())
    with pytest.raises(TypeError, match="is not a valid JAX array type"):
        lax.dtype("U3")


@pytest.mark.parametrize("arr,like", [((3,), (2, 3)), ((1, 3), (4, 3)), ((), (2, 2)),
                                      ((2, 1), (5, 2, 4))])
def test_broadcast_like(arr: tuple[int, ...], like: tuple[int, ...]) -> None:
    x = np.arange(int(np.prod(arr)), dtype=np.float32).reshape(arr)
    np.testing.assert_array_equal(lax.broadcast_like(x, np.zeros(like)),
                                  jax.lax.broadcast_like(x, np.zeros(like)))


def test_broadcast_like_incompatible() -> None:
    x, like = np.ones((2, 3), np.float32), np.ones((4, 3, 2), np.float32)
    with pytest.raises(ValueError) as want:
        jax.lax.broadcast_like(x, like)
    with pytest.raises(ValueError) as got:
        lax.broadcast_like(x, like)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("shape", [(), (2, 3), (2**31, 1)])
def test_shape_as_value(shape: tuple[int, ...]) -> None:
    mine, theirs = lax.shape_as_value(shape), jax.lax.shape_as_value(shape)
    assert np.asarray(mine).dtype == np.asarray(theirs).dtype
    np.testing.assert_array_equal(mine, theirs)


def test_shape_as_value_symbolic() -> None:
    mine = plait.make_jaxpr(lambda x: lax.shape_as_value(x.shape))(
        plait.ShapeDtypeStruct(pexport.symbolic_shape("b, 3"), np.float32))
    theirs = jax.make_jaxpr(lambda x: jax.lax.shape_as_value(x.shape))(
        jax.ShapeDtypeStruct(jax.export.symbolic_shape("b, 3"), np.float32))
    assert str(list(mine.out_avals)) == str(list(theirs.out_avals))
    assert "dim_as_value[dim=b]" in str(mine) and "dim_as_value[dim=b]" in str(theirs)


_ACCURATE = ["exp", "exp2", "log", "log1p", "expm1", "tanh", "sin", "cos", "tan", "sqrt",
             "rsqrt", "cbrt"]


def _accuracy_line(module: str, op: str) -> str:
    lines = [ln.strip() for ln in module.splitlines() if "result_accuracy" in ln]
    return lines[-1].split("{", 1)[1] if lines else ""


@pytest.mark.parametrize("name", _ACCURATE)
@pytest.mark.parametrize("which", [0, 1, 2, 3])
def test_accuracy_lowers_as_jax(name: str, which: int) -> None:
    def make(mod: Any) -> Any:
        return [None, mod.AccuracyMode.HIGHEST, mod.Tolerance(atol=1e-3),
                mod.Tolerance(rtol=1e-5, ulps=3)][which]
    mine = plait.jit(lambda x: getattr(lax, name)(x, accuracy=make(lax)))
    theirs = jax.jit(lambda x: getattr(jax.lax, name)(x, accuracy=make(jax.lax)))
    x = np.float32(0.5)
    assert _accuracy_line(mine.lower(x).as_text(), name) == \
        _accuracy_line(theirs.lower(x).as_text(), name)
    np.testing.assert_allclose(mine(x), theirs(x), rtol=1e-6)


def test_accuracy_in_jaxprs_and_errors() -> None:
    def f(mod: Any) -> Any:
        return lambda x: mod.exp(x, accuracy=mod.AccuracyMode.HIGHEST)
    assert str(plait.make_jaxpr(f(lax))(1.0)) == str(jax.make_jaxpr(f(jax.lax))(1.0))
    assert plait.grad(f(lax))(1.0) == pytest.approx(float(jax.grad(f(jax.lax))(1.0)))
    bads: list[dict[str, Any]] = [{"atol": -1.0}, {}]
    for bad in bads:
        with pytest.raises(ValueError) as want:
            jax.lax.Tolerance(**bad)
        with pytest.raises(ValueError, match=str(want.value)):
            lax.Tolerance(**bad)
    with pytest.raises(NotImplementedError, match="Accuracy high not supported"):
        lax.exp(1.0, accuracy="high")


def test_debug_log_emits_an_info_record(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        plait.jit(lambda x: plait.debug.log("x={x} y={}", x + 1, x=x))(np.float32(2.0))
        jax.jit(lambda x: jax.debug.log("x={x} y={}", x + 1, x=x))(np.float32(2.0))
    mine, theirs = [r for r in caplog.records if r.name == "plait.debug"], [
        r for r in caplog.records if r.name == "jax._src.debugging"]
    assert [r.getMessage() for r in mine] == [r.getMessage() for r in theirs] == ["x=2.0 y=3.0"]
    assert mine[0].levelno == theirs[0].levelno and mine[0].pathname == __file__
    with pytest.raises(ValueError, match="refers to 'z'"):
        plait.debug.log("{z}", 1)


@pytest.mark.parametrize("ordered", [False, True])
def test_debug_effects(ordered: bool) -> None:
    def f(mod: Any) -> Any:
        return lambda x: mod.debug.print("{}", x, ordered=ordered)
    (mine,), (theirs,) = plait.make_jaxpr(f(plait))(1.0).effects, jax.make_jaxpr(f(jax))(
        1.0).effects
    kind = "OrderedDebugEffect" if ordered else "DebugEffect"
    assert isinstance(mine, getattr(plait.debug, kind))
    assert isinstance(theirs, getattr(jax.debug, kind))
    assert mine == getattr(plait.debug, kind)() and mine.name == str(theirs)


def test_shard_class_and_small_names() -> None:
    x = plait.numpy.arange(4.0)
    assert all(isinstance(s, plait.Shard) for s in x.addressable_shards)
    assert all(isinstance(s, jax.Shard) for s in jax.numpy.arange(4.0).addressable_shards)
    assert plait.stages.CompilerOptions == dict[str, str | bool]
    assert typing.get_args(jax.stages.CompilerOptions)[0] is str
    with plait.core.eval_context():
        assert plait.core.ensure_compile_time_eval is plait.ensure_compile_time_eval
        np.testing.assert_array_equal(plait.numpy.ones(2), jax.numpy.ones(2))


@pytest.mark.parametrize("value", [2.0, 3, True, 1j, np.float16(2), np.ones((2, 3), np.int8)])
def test_stage_lifts_constants_as_jax(value: Any) -> None:
    mine, theirs = lax.stage(value), jax.lax.stage(value)
    assert repr(mine) == repr(theirs)
    assert str(plait.make_jaxpr(lambda x: lax.stage(value) + x)(1.0)) == \
        str(jax.make_jaxpr(lambda x: jax.lax.stage(value) + x)(1.0))
    x = plait.numpy.ones(2)
    assert lax.stage(x) is x
    with pytest.raises(TypeError, match="expected an array of a supported dtype"):
        lax.stage("a")

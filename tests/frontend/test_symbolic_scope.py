"""``export.SymbolicScope``, constraints and ``is_symbolic_dim``, against ``jax.export``."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest
from jax import export as jexport

import plait
from plait import export as pexport
from plait.errors import InconclusiveDimensionOperation
from plait.ir.dims import DimExpr


def _outcome(f: Callable[[], Any]) -> str:
    try:
        return str(f())
    except Exception as e:  # plait's or JAX's InconclusiveDimensionOperation
        assert type(e).__name__ == "InconclusiveDimensionOperation", e
        return "inconclusive"


def _ids(text: str) -> str:
    """A scope's text without its id and place of creation."""
    return re.sub(r"\d+ created at \S+ \([^)]*\)", "SCOPE", text)


_CONSTRAINTS = ["a >= 8", "b <= a - 2", "c == a + 1", "2*d >= 3", "e >= b"]
# Comparisons over the variables a, b, c, d, e of _CONSTRAINTS.
_COMPARISONS: list[Callable[..., Any]] = [
    lambda a, b, c, d, e: a >= 8,
    lambda a, b, c, d, e: a > 8,
    lambda a, b, c, d, e: a - b >= 2,
    lambda a, b, c, d, e: b < a,
    lambda a, b, c, d, e: b >= 3,
    lambda a, b, c, d, e: c - a,
    lambda a, b, c, d, e: c >= 9,
    lambda a, b, c, d, e: d >= 2,
    lambda a, b, c, d, e: e >= b,
    lambda a, b, c, d, e: a * d >= 16,
    lambda a, b, c, d, e: a + e > b,
    lambda a, b, c, d, e: 2 * a <= 15,
]


@pytest.mark.parametrize("i", range(len(_COMPARISONS)))
def test_comparisons_under_constraints(i: int) -> None:
    mine = pexport.symbolic_shape("a, b, c, d, e",
                                  scope=pexport.SymbolicScope(_CONSTRAINTS))
    theirs = jexport.symbolic_shape("a, b, c, d, e",
                                    scope=jexport.SymbolicScope(_CONSTRAINTS))
    assert _outcome(lambda: _COMPARISONS[i](*mine)) == \
        _outcome(lambda: _COMPARISONS[i](*theirs))


@pytest.mark.parametrize("constraints,spec", [
    (["b == 3*c"], "a, b, b + 1, 2*b"),
    (["2*k == n"], "k, 4*k, 3*k, k*m"),
    (["mod(a, 4) == 0"], "a, 4*floordiv(a, 4), mod(a, 4)"),
    (["a*b == c"], "a*b, 2*a*b*d, c"),
])
def test_equalities_rewrite_terms(constraints: list[str], spec: str) -> None:
    mine = pexport.symbolic_shape(spec, constraints=constraints)
    theirs = jexport.symbolic_shape(spec, constraints=constraints)
    assert str(mine) == str(theirs)


def test_scope_text_and_inconclusive_message() -> None:
    constraints = ["a >= 8", "mod(b, 2) == 0"]
    mine, theirs = pexport.SymbolicScope(constraints), jexport.SymbolicScope(constraints)
    assert _ids(str(mine)) == _ids(str(theirs))
    b, jb = pexport.symbolic_shape("b", scope=mine)[0], jexport.symbolic_shape(
        "b", scope=theirs)[0]
    with pytest.raises(InconclusiveDimensionOperation) as got:
        assert b >= 3
    with pytest.raises(Exception, match="inconclusive") as want:
        assert jb >= 3
    assert _ids(str(got.value)) == _ids(str(want.value))


def test_scope_records_where_it_was_made() -> None:
    scope = pexport.SymbolicScope()
    assert re.fullmatch(rf"{id(scope)} created at .*test_symbolic_scope.py:\d+:\d+ "
                        r"\(test_scope_records_where_it_was_made\)", str(scope))


def _both(make: Callable[[Any], Any]) -> tuple[str, str]:
    """The errors (type and text, scopes elided) ``make`` raises with plait's and JAX's
    ``export`` module."""
    out = []
    for mod in (pexport, jexport):
        with pytest.raises(Exception) as info:
            make(mod)
        out.append(f"{type(info.value).__name__}: {_ids(str(info.value))}")
    return out[0], out[1]


@pytest.mark.parametrize("make", [
    lambda m: m.SymbolicScope("a >= 2"),
    lambda m: m.SymbolicScope(["a > 2"]),
    lambda m: m.SymbolicScope(["3 >= 4"]),
    lambda m: m.SymbolicScope([5]),
    lambda m: m.SymbolicScope(["a + 1 == 5"]),
    lambda m: m.SymbolicScope(["a == 5", "a == 6"]),
    lambda m: m.symbolic_shape("a", scope=m.SymbolicScope(), constraints=["a >= 2"]),
    lambda m: m.symbolic_args_specs(np.ones(3), "a", constraints=["a >= 2"],
                                    scope=m.SymbolicScope()),
    lambda m: m.symbolic_shape("a")[0] + m.symbolic_shape("a")[0],
    lambda m: m.symbolic_shape("a")[0] * m.symbolic_shape("b")[0],
    lambda m: m.symbolic_shape("a")[0] >= m.symbolic_shape("b")[0],
])
def test_errors_match_jax(make: Callable[[Any], Any]) -> None:
    mine, theirs = _both(make)
    assert mine == theirs


def test_dimensions_of_different_scopes_are_not_equal() -> None:
    (a,), (a2,) = pexport.symbolic_shape("a"), pexport.symbolic_shape("a")
    (ja,), (ja2,) = jexport.symbolic_shape("a"), jexport.symbolic_shape("a")
    assert (a == a2) == (ja == ja2) and (a == a) == (ja == ja)


def test_export_rejects_mixed_scopes() -> None:
    def make(m: Any) -> Any:
        lib = plait if m is pexport else jax
        a, = m.symbolic_shape("a", constraints=["a >= 2"])
        b, = m.symbolic_shape("b")

        def two(x: Any, y: Any, *, z: Any) -> Any:
            return x
        return m.export(lib.jit(two))(lib.ShapeDtypeStruct((a,), np.float32),
                                      [lib.ShapeDtypeStruct((3,), np.float32)],
                                      z=lib.ShapeDtypeStruct((b,), np.float32))
    mine, theirs = _both(make)
    assert mine == theirs


def test_symbolic_args_specs_share_one_scope() -> None:
    args = (np.ones((4, 3)), {"y": np.ones(4)})
    for m in (pexport, jexport):
        specs = m.symbolic_args_specs(args, ("n, _", {"y": "n"}), constraints=["n >= 4"])
        assert specs[0].shape[0] == specs[1]["y"].shape[0]
        assert specs[0].shape[0] >= 4


@pytest.mark.parametrize("shape", [(9, 6), (3, 3), (9, 4), (10, 9)])
def test_constraints_checked_at_call(shape: tuple[int, int]) -> None:
    constraints = ["a >= b + 2", "b == 3*c"]
    results = []
    for m, lib in ((pexport, plait), (jexport, jax)):
        a, b = m.symbolic_shape("a, b", constraints=constraints)
        exp = m.export(lib.jit(lambda x: x * 2))(lib.ShapeDtypeStruct((a, b), np.float32))
        assert str(exp.in_avals[0].shape) == "(a, 3*c)"
        try:
            results.append(np.asarray(exp.call(np.ones(shape, np.float32))).tolist())
        except ValueError as e:
            results.append(str(e))
    assert results[0] == results[1]


def test_constraints_are_in_the_module() -> None:
    # The deserialized artifact forgets the constraints, but its module checks them.
    b, = pexport.symbolic_shape("b", constraints=["b >= 4"])
    exp = pexport.export(plait.jit(lambda x: x + 1))(plait.ShapeDtypeStruct((b,),
                                                                            np.float32))
    assert "symbolic shape constraint b >= 4" in exp.mlir_module()
    restored = pexport.deserialize(exp.serialize())
    dim = restored.in_avals[0].shape[0]
    assert isinstance(dim, DimExpr) and dim.scope.constraints == []
    np.testing.assert_array_equal(restored.call(np.ones(4, np.float32)), np.full(4, 2.0))
    with pytest.raises(Exception, match="Expected 'b - 4' to be greater or equal to 0, "
                                        "but found -1"):
        restored.call(np.ones(3, np.float32))
    theirs = jexport.deserialize(bytearray(exp.serialize()))
    np.testing.assert_array_equal(theirs.call(np.ones(5, np.float32)), np.full(5, 2.0))


@pytest.mark.parametrize("value", [3, np.int32(3), "b", None])
def test_is_symbolic_dim(value: Any) -> None:
    mine = pexport.symbolic_shape("b")[0] if value == "b" else value
    theirs = jexport.symbolic_shape("b")[0] if value == "b" else value
    assert pexport.is_symbolic_dim(mine) == jexport.is_symbolic_dim(theirs)

"""The prologue of a shape-polymorphic ``@main``: the values of the dimension
variables, computed from the arguments' sizes, and the shape assertions that check
the sizes fit the specification (calling convention 7 and later).

An assertion is a ``stablehlo.custom_call @shape_assertion(%ok, %values...)`` whose
``error_message`` has ``{0}``, ``{1}`` ... for the values; XLA raises it when the
module's shapes are refined for a call.  The messages are JAX's (and those of
:func:`plait.ir.dim_solve.solve`, which checks the same statically when plait calls the
module).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from plait.ir.avals import ShapedArray
from plait.ir.dim_solve import (
    MISMATCH,
    assertion_messages,
    constraint_message,
    scope_constraints,
)
from plait.lowering.emitter import I64_TYPE as _I64_T
from plait.lowering.emitter import FuncEmitter, Value

__all__ = ["bind_dim_vars"]

_I64: Final = ShapedArray((), np.dtype(np.int64))
_BOOL_T: Final = "tensor<i1>"


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _assert(fn: FuncEmitter, ok: Value, values: Sequence[Value], message: str) -> None:
    fn.op("stablehlo.custom_call", [ok, *values], [],
          'call_target_name = "shape_assertion", has_side_effect = true, '
          'api_version = 2 : i32',
          discardable=f'error_message = "{_escape(message)}"')


def _compare(fn: FuncEmitter, a: Value, b: Value, direction: str) -> Value:
    return fn.op1("stablehlo.compare", [a, b], _BOOL_T,
                  f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                  "compare_type = #stablehlo<comparison_type SIGNED>")


def bind_dim_vars(fn: FuncEmitter, args: Sequence[Value], avals: Sequence[ShapedArray],
                  names: Sequence[str]) -> dict[str, Value]:
    """Emit the computation of the dimension variables from ``args``' sizes, and the
    assertions on them; returns their values.

    Raises:
      ValueError: a variable cannot be computed from the arguments' sizes.
    """
    steps, checks, specs, trailer = assertion_messages([a.shape for a in avals], names)
    fn.dims = dims = {}

    def size(arg: int, dim: int) -> Value:
        s = fn.op1("stablehlo.get_dimension_size", [args[arg]], "tensor<i32>",
                   f"dimension = {dim} : i64")
        return fn.op1("stablehlo.convert", [s], _I64_T)

    obtained = " Obtained dimension variables: "
    shown: list[Value] = []  # the values the obtained-variables text refers to
    for s in steps:
        n = size(s.arg, s.dim)
        num = n if s.rest == 0 else fn.op1("stablehlo.subtract", [n, fn.dim_value(s.rest)],
                                             _I64_T)
        if s.k == 1:
            value = num
        else:
            k = fn.constant(s.k, _I64)
            value = fn.op1("stablehlo.divide", [num, k], _I64_T)
            rem = fn.op1("stablehlo.remainder", [num, k], _I64_T)
            ok = _compare(fn, rem, fn.constant(0, _I64), "EQ")
            _assert(fn, ok, [rem, *shown],
                    f"{MISMATCH}Division had remainder {{0}} when computing the value of "
                    f"'{s.var}'.{specs}{_shift(obtained, 1)}{trailer}")
        base = len(shown)
        obtained += (f"'{s.var}' = {{{base}}} from specification '{s.spec}' for dimension "
                     f"{names[s.arg]}.shape[{s.dim}] (= {{{base + 1}}}), ")
        shown += [value, n]
        ok = _compare(fn, value, fn.constant(1, _I64), "GE")
        _assert(fn, ok, shown, f"{MISMATCH}Expected value >= 1 for dimension variable "
                               f"'{s.var}'.{specs}{obtained}{trailer}")
        dims[s.var] = value
    for c in checks:
        n, want = size(c.arg, c.dim), fn.dim_value(c.expr)
        ok = _compare(fn, n, want, "EQ")
        _assert(fn, ok, [n, want, *shown],
                f"{MISMATCH}Found inconsistency between dimension size "
                f"{names[c.arg]}.shape[{c.dim}] (= {{0}}) and the specification '{c.expr}' "
                f"(= {{1}}).{specs}{_shift(obtained, 2)}{trailer}")
    for con in scope_constraints([a.shape for a in avals]):
        got = fn.dim_value(con.resolved)
        ok = _compare(fn, got, fn.constant(0, _I64), "EQ" if con.cmp == "==" else "GE")
        _assert(fn, ok, [got, *shown],
                f"{constraint_message(con)}{{0}}. {specs}{_shift(obtained, 1)}{trailer}")
    return dims


def _shift(text: str, by: int) -> str:
    """``text`` with its placeholders ``{i}`` renumbered ``{i + by}``."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "{":
            j = text.index("}", i)
            out.append("{" + str(int(text[i + 1:j]) + by) + "}")
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)

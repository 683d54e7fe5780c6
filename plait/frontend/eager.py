"""Eager execution: running a primitive outside any trace.

For now each primitive runs through the reference interpreter's NumPy rule;
the lowering issue replaces this with cached single-primitive executables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.errors import RuleNotImplementedError, UnexpectedTracerError
from plait.ir.atoms import Literal
from plait.ir.avals import ShapedArray
from plait.ir.interpreter import impl_rules
from plait.ir.primitive import Primitive
from plait.frontend.array_impl import ArrayImpl
from plait.frontend.tracing import Tracer, _as_numpy, _leak_message, scalar_literal, set_eager_impl

__all__ = ["eager_bind"]


def _operand(x: Any) -> tuple[np.ndarray, ShapedArray]:
    t = type(x)
    if t is ArrayImpl:
        return x._value, x._aval
    if t is Literal:
        return np.asarray(x.value, x.aval.dtype), x.aval
    if t is Tracer:
        raise UnexpectedTracerError(_leak_message(x))
    if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
        lit = scalar_literal(x)
        return np.asarray(lit.value, lit.aval.dtype), lit.aval
    arr = _as_numpy(x)
    return arr, ShapedArray(arr.shape, arr.dtype)


def eager_bind(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Run ``prim`` on concrete operands and wrap the results as Arrays."""
    full = prim.complete_params(params)
    vals, avals = zip(*[_operand(a) for a in args]) if args else ((), ())
    out_avals = prim.abstract_eval(avals, full)
    rule = impl_rules.get(prim)
    if rule is None:
        raise RuleNotImplementedError("Eager evaluation", prim.name)
    outs = rule(*vals, **full)
    results = []
    for aval, out in zip(out_avals, outs, strict=True):
        arr = np.asarray(out)
        if arr.dtype != aval.dtype:  # type: ignore[attr-defined]
            arr = arr.astype(aval.dtype)  # type: ignore[attr-defined]
        arr.flags.writeable = False
        results.append(ArrayImpl(aval, arr))  # type: ignore[arg-type]
    return results if prim.multiple_results else results[0]


set_eager_impl(eager_bind)

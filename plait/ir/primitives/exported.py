"""Calls of exported (serialized) StableHLO functions.

``call_exported`` applies a function given as a StableHLO portable artifact,
with the metadata needed to call it (:class:`ExportedModule`); it is opaque to
every transformation but reverse-mode differentiation, which replaces it by a
call of the artifact's exported VJP.  ``call_exported_lin`` is the linear map
such a call contributes to a JVP: reverse mode transposes it into that call;
nothing can evaluate it forward (exported functions have no forward mode).

Printed as JAX 0.10.2 prints it: ``call_exported[exported=Exported(fun_name=f, ...)]``.
The module's bytes are not part of the text, so the parser cannot restore them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from plait.ir import dtypes as dt
from plait.ir.avals import AbstractValue, ShapedArray, shaped
from plait.ir.dim_solve import solve
from plait.ir.dims import evaluate, is_constant_shape
from plait.ir.errors import UnsupportedTransformError
from plait.ir.params import ParamDef
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail

__all__ = ["ExportedModule", "call_exported_p", "call_exported_lin_p", "FixedVjp",
           "forward_mode_error", "concrete_avals"]


@attrs.frozen(cache_hash=True)
class FixedVjp:
    """A VJP known when the module is built (read from a serialized artifact)."""

    module: ExportedModule | None
    """The VJP's module, or ``None`` when the artifact holds none."""

    def __call__(self) -> ExportedModule | None:
        return self.module


@attrs.frozen(cache_hash=True)
class ExportedModule:
    """A serialized StableHLO function and what calling it needs.

    The function's ``@main`` takes, in order: the platform index (when exported
    for several platforms), then the arguments listed in ``kept_var_idx``.
    """

    fun_name: str
    """The exported function's name (for messages)."""
    in_avals: tuple[ShapedArray, ...]
    """Types of all flat arguments, kept or not."""
    out_avals: tuple[ShapedArray, ...]
    """Types of the flat results."""
    platforms: tuple[str, ...]
    """The platforms the module was lowered for (``'cpu'``, ``'tpu'``, ``'cuda'`` ...)."""
    kept_var_idx: tuple[int, ...]
    """Which flat arguments ``@main`` takes (the others were unused)."""
    serialized: bytes = attrs.field(repr=False)
    """The StableHLO portable artifact."""
    calling_convention_version: int
    """The version of the calling convention ``@main`` follows."""
    platform_check: bool = True
    """Whether calling on a platform not in ``platforms`` is an error."""
    nr_devices: int = 1
    """How many devices the module was lowered for."""
    uses_global_constants: bool = False
    """Whether ``@main`` computes global constants (platform index, dimension variables)."""
    arg_names: tuple[str, ...] = ()
    """How messages name the flat arguments (``args[0]``, ``kwargs['w']``)."""
    vjp: Callable[[], ExportedModule | None] = attrs.field(default=FixedVjp(None), repr=False)
    """Gives the exported VJP (inputs: the primal arguments then one cotangent per
    result; results: one cotangent per argument), or ``None`` when there is none.
    Compared by identity unless a :class:`FixedVjp`."""

    def __str__(self) -> str:
        return f"Exported(fun_name={self.fun_name}, ...)"


def forward_mode_error(exported: ExportedModule) -> UnsupportedTransformError:
    """Raised where forward mode would have to evaluate an exported function's JVP."""
    return UnsupportedTransformError(
        f"forward-mode differentiation (jvp, jacfwd, hessian) of the exported function "
        f"'{exported.fun_name}' is not supported: an exported function can only be "
        "differentiated in reverse mode (grad, vjp, jacrev), up to the vjp_order it was "
        "serialized with; export the JVP itself instead")


def _decode_exported(value: Any) -> ExportedModule:
    if not isinstance(value, ExportedModule):
        raise ValueError("expected an exported module, but got text: an exported module's "
                         "bytes are not part of the printed jaxpr and cannot be parsed back")
    return value


def _matches(a: AbstractValue, expected: ShapedArray) -> bool:
    # A float0 argument carries no data: a bool array (the type it travels as) stands in.
    return (isinstance(a, ShapedArray) and a.shape == expected.shape
            and (a.dtype == expected.dtype
                 or (expected.dtype == dt.float0 and a.dtype == dt.bool_)))


def _check_operands(avals: tuple[AbstractValue, ...], expected: tuple[ShapedArray, ...],
                    what: str) -> None:
    if len(avals) != len(expected) or not all(map(_matches, avals, expected)):
        fail(f"expected operands of types ({', '.join(a.str_short() for a in expected)}) for "
             f"{what}, but got ({', '.join(a.str_short() for a in avals)})")


def concrete_avals(exported: ExportedModule, avals: Sequence[AbstractValue]
                   ) -> tuple[tuple[ShapedArray, ...], tuple[ShapedArray, ...]]:
    """The argument and result types of a call with operands of types ``avals``: for a
    shape-polymorphic function, with its dimension variables solved from their shapes.

    Raises:
      ValueError: the shapes do not fit the function's (JAX's messages).
    """
    ins, outs = exported.in_avals, exported.out_avals
    if all(is_constant_shape(a.shape) for a in ins):
        return ins, outs
    shapes = [shaped(a).shape for a in avals]
    if not all(is_constant_shape(s) for s in shapes):
        raise NotImplementedError(
            f"calling the shape-polymorphic exported function '{exported.fun_name}' with "
            "symbolic shapes is not supported yet")
    names = exported.arg_names or tuple(f"args[{i}]" for i in range(len(avals)))
    env = solve([a.shape for a in ins], shapes, names)

    def concrete(a: ShapedArray) -> ShapedArray:
        return a.update(shape=tuple(evaluate(d, env) for d in a.shape))
    return tuple(map(concrete, ins)), tuple(map(concrete, outs))


def _ranks_match(avals: Sequence[AbstractValue], expected: Sequence[ShapedArray]) -> bool:
    return len(avals) == len(expected) and all(
        isinstance(a, ShapedArray) and len(a.shape) == len(e.shape)
        for a, e in zip(avals, expected))


def _call_exported_rule(*avals: AbstractValue, exported: ExportedModule
                        ) -> tuple[AbstractValue, ...]:
    what = f"the exported function {exported.fun_name!r}"
    if not _ranks_match(avals, exported.in_avals):
        _check_operands(avals, exported.in_avals, what)
    ins, outs = concrete_avals(exported, avals)
    _check_operands(avals, ins, what)
    return outs


call_exported_p = Primitive("call_exported", _call_exported_rule, (
    ParamDef("exported", decode=_decode_exported),
), multiple_results=True)


def _inexact(avals: tuple[ShapedArray, ...]) -> tuple[ShapedArray, ...]:
    return tuple(a.strip_weak_type() for a in avals if dt.is_inexact(a.dtype))


def _call_exported_lin_rule(*avals: AbstractValue, exported: ExportedModule
                            ) -> tuple[AbstractValue, ...]:
    n = len(exported.in_avals)
    what = f"the exported function {exported.fun_name!r}"
    if not _ranks_match(avals[:n], exported.in_avals):
        _check_operands(avals[:n], exported.in_avals, what)
    ins, outs = concrete_avals(exported, avals[:n])
    _check_operands(avals[:n], ins, what)
    _check_operands(avals[n:], _inexact(ins), f"the tangents of {what}")
    return _inexact(outs)


call_exported_lin_p = Primitive("call_exported_lin", _call_exported_lin_rule, (
    ParamDef("exported", decode=_decode_exported),
), multiple_results=True)
"""Operands: the primal arguments, then the tangents of the inexact ones; results:
the tangents of the inexact results."""

"""Higher-order control-flow primitives: ``cond``, ``while``, ``scan``.

Their bodies are closed jaxprs without consts: values a body closes over are
passed as leading operands (``cond``: all branches take the same operands;
``while``: ``cond_nconsts`` then ``body_nconsts`` consts before the carry;
``scan``: ``num_consts`` consts, ``num_carry`` carries, then the scanned
arrays).  Params print as in JAX 0.10.2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import dtypes as dt
from plait.ir.avals import AbstractValue, ShapedArray, leading_slice, shaped, stacked
from plait.ir.effects import Effect
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.params import ParamDef, Params, decode_bool, decode_int
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail

__all__ = ["cond_p", "while_p", "scan_p", "same_types", "join_weak", "platform_index_p",
           "body_effects", "Platforms", "platform_branch"]

Platforms = tuple[tuple[str, ...] | None, ...]
"""Per branch of a platform-dependent ``cond``, the platforms it serves (``None``: the
default branch, for every platform the others do not name)."""


def same_types(a: Sequence[AbstractValue], b: Sequence[AbstractValue]) -> bool:
    """Equal types up to weak-typedness."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, ShapedArray) and isinstance(y, ShapedArray):
            if x.strip_weak_type() is not y.strip_weak_type():
                return False
        elif x != y:
            return False
    return True


def join_weak(*groups: Sequence[AbstractValue]) -> tuple[AbstractValue, ...]:
    """Per position, the type that is weak only if weak in every group."""
    out = []
    for avals in zip(*groups):
        a0 = avals[0]
        if isinstance(a0, ShapedArray):
            out.append(a0.update(weak_type=all(getattr(a, "weak_type", False) for a in avals)))
        else:
            out.append(a0)
    return tuple(out)


def _types(avals: Sequence[AbstractValue]) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _check_closed(name: str, j: Any) -> ClosedJaxpr:
    if not isinstance(j, ClosedJaxpr) or j.consts:
        fail(f"expected a closed jaxpr without consts for {name}, but got {type(j).__name__}")
    return j


def _decode_jaxpr(value: Any) -> ClosedJaxpr:
    if not isinstance(value, ClosedJaxpr):
        raise ValueError(f"expected a jaxpr, but got {value!r}")
    return value


def _decode_jaxprs(value: Any) -> tuple[ClosedJaxpr, ...]:
    if not isinstance(value, tuple | list) or not all(isinstance(v, ClosedJaxpr) for v in value):
        raise ValueError(f"expected a tuple of jaxprs, but got {value!r}")
    return tuple(value)


def _decode_platforms(value: Any) -> Platforms | None:
    if value is None:
        return None
    if isinstance(value, tuple | list) and all(
            v is None or (isinstance(v, tuple | list) and v and all(isinstance(p, str) for p in v))
            for v in value):
        return tuple(None if v is None else tuple(v) for v in value)
    raise ValueError(f"expected a tuple of platform-name tuples or None, but got {value!r}")


def platform_branch(platforms: Platforms, platform: str) -> int:
    """The index of the branch serving ``platform``: the one naming it, else the default.

    Raises:
      NotImplementedError: no branch serves ``platform``.
    """
    for i, ps in enumerate(platforms):
        if ps is not None and platform in ps:
            return i
    for i, ps in enumerate(platforms):
        if ps is None:
            return i
    raise NotImplementedError(
        f"platform_dependent: expected a branch for platform {platform} or a default, but "
        f"got branches for {', '.join(p for ps in platforms if ps for p in ps)} only")


def _platform_index_rule(*, platforms: Platforms) -> tuple[ShapedArray, ...]:
    if not platforms or sum(ps is None for ps in platforms) > 1:
        fail(f"expected platform lists with at most one default (None), but got {platforms}")
    return (ShapedArray((), dt.int32),)


platform_index_p = Primitive("platform_index", _platform_index_rule, (
    ParamDef("platforms", decode=_decode_platforms),
))
"""The index of the entry of ``platforms`` serving the platform the program is lowered
for: known at compile time, it selects the branch of a platform-dependent ``cond``."""


def body_effects(params: Params) -> frozenset[Effect]:
    """The effects of the jaxprs among ``params`` (a higher-order equation's)."""
    effs: set[Effect] = set()
    for v in params.values():
        if isinstance(v, ClosedJaxpr):
            effs |= v.effects
        elif isinstance(v, tuple):
            for j in v:
                if isinstance(j, ClosedJaxpr):
                    effs |= j.effects
    return frozenset(effs)


def _cond_rule(index: ShapedArray, *ops: ShapedArray, branches: tuple[ClosedJaxpr, ...],
               branches_platforms: Platforms | None) -> tuple[AbstractValue, ...]:
    if not branches:
        fail("expected at least one branch, but got none")
    if branches_platforms is not None and len(branches_platforms) != len(branches):
        fail(f"expected platforms for each of the {len(branches)} branches, but got "
             f"{branches_platforms}")
    if index.shape != () or index.dtype != dt.int32:
        fail(f"expected an i32[] branch index, but got {index.str_short()}")
    outs = []
    for i, b in enumerate(branches):
        _check_closed(f"branch {i}", b)
        if not same_types(b.in_avals, ops):
            fail(f"expected branch {i} to take the operands' types {_types(ops)}, but it takes "
                 f"{_types(b.in_avals)}")
        outs.append(b.out_avals)
    for i, o in enumerate(outs[1:], 1):
        if not same_types(o, outs[0]):
            fail(f"expected all branches to return {_types(outs[0])}, but branch {i} returns "
                 f"{_types(o)}")
    return join_weak(*outs)


cond_p = Primitive("cond", _cond_rule, (
    ParamDef("branches", decode=_decode_jaxprs),
    ParamDef("branches_platforms", None, show="nondefault", decode=_decode_platforms),
), multiple_results=True, effects_rule=body_effects)
"""With ``branches_platforms``, the index is a ``platform_index`` and only the branch for
the lowering platform is compiled."""


def _while_rule(*args: ShapedArray, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                cond_nconsts: int, body_nconsts: int) -> tuple[AbstractValue, ...]:
    _check_closed("cond_jaxpr", cond_jaxpr)
    _check_closed("body_jaxpr", body_jaxpr)
    if cond_nconsts + body_nconsts > len(args):
        fail(f"expected at least {cond_nconsts + body_nconsts} operands, but got {len(args)}")
    cconsts = args[:cond_nconsts]
    bconsts = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = args[cond_nconsts + body_nconsts:]
    if not same_types(cond_jaxpr.in_avals, cconsts + carry):
        fail(f"expected cond_jaxpr to take {_types(cconsts + carry)}, but it takes "
             f"{_types(cond_jaxpr.in_avals)}")
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or not isinstance(pred[0], ShapedArray) or pred[0].shape != () \
            or pred[0].dtype != dt.bool_:
        fail(f"expected cond_jaxpr to return a bool[] predicate, but it returns {_types(pred)}")
    if not same_types(body_jaxpr.in_avals, bconsts + carry):
        fail(f"expected body_jaxpr to take {_types(bconsts + carry)}, but it takes "
             f"{_types(body_jaxpr.in_avals)}")
    if not same_types(body_jaxpr.out_avals, carry):
        fail(f"expected body_jaxpr to return the carry types {_types(carry)}, but it returns "
             f"{_types(body_jaxpr.out_avals)}")
    return join_weak(carry, body_jaxpr.out_avals)


# Declared in JAX's bind order: the printer names shared jaxprs in declaration
# order, so ``cond_jaxpr`` must come first to print as JAX does.
while_p = Primitive("while", _while_rule, (
    ParamDef("cond_nconsts", decode=decode_int),
    ParamDef("cond_jaxpr", decode=_decode_jaxpr),
    ParamDef("body_nconsts", decode=decode_int),
    ParamDef("body_jaxpr", decode=_decode_jaxpr),
), multiple_results=True, effects_rule=body_effects)


def _decode_unroll(value: Any) -> int | bool:
    if type(value) is int or type(value) is bool:
        return value
    raise ValueError(f"expected an int or bool unroll, but got {value!r}")


def _scan_rule(*args: ShapedArray, jaxpr: ClosedJaxpr, length: int, reverse: bool,
               num_consts: int, num_carry: int, unroll: int | bool) -> tuple[AbstractValue, ...]:
    _check_closed("scan jaxpr", jaxpr)
    if num_consts + num_carry > len(args) or length < 0:
        fail(f"expected {num_consts} consts and {num_carry} carries among {len(args)} operands "
             f"and a non-negative length, but got length={length}")
    consts = args[:num_consts]
    carry = args[num_consts:num_consts + num_carry]
    xs = args[num_consts + num_carry:]
    for x in xs:
        if x.ndim == 0 or x.shape[0] != length:
            fail(f"expected scanned operands with leading dimension {length}, but got "
                 f"{x.str_short()}")
    try:
        x_avals = tuple(leading_slice(x) for x in xs)
    except ValueError as e:
        fail(f"scan: {e}")
    if not same_types(jaxpr.in_avals, consts + carry + x_avals):
        fail(f"expected the scan body to take {_types(consts + carry + x_avals)}, but it takes "
             f"{_types(jaxpr.in_avals)}")
    outs = jaxpr.out_avals
    if not same_types(outs[:num_carry], carry):
        fail(f"expected the scan body to return the carry types {_types(carry)}, but it returns "
             f"{_types(outs[:num_carry])}")
    ys = tuple(stacked(y, length) for y in map(shaped, outs[num_carry:]))
    return join_weak(carry, outs[:num_carry]) + ys


scan_p = Primitive("scan", _scan_rule, (
    ParamDef("jaxpr", decode=_decode_jaxpr),
    ParamDef("length", decode=decode_int),
    ParamDef("num_carry", decode=decode_int),
    ParamDef("num_consts", decode=decode_int),
    ParamDef("reverse", False, decode=decode_bool),
    ParamDef("unroll", 1, decode=_decode_unroll),
), multiple_results=True, effects_rule=body_effects)

"""Transformation rules of ``custom_vmap_call``.

Batching asks the equation's :class:`~plait.ir.primitives.VmapRule` for the
batched computation and inlines it.  Forward mode differentiates ``call`` and
carries a :class:`JvpVmapRule`: batching the JVP equation batches the user's
rule on the values whose primal and tangent are both batched, differentiates
that, and maps the result over the values only one of which is batched (JAX's
``custom_vmap_jvp``).  Reverse mode is refused, as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import ShapedArray, shaped
from plait.ir.errors import TransformError
from plait.ir.jaxpr import ClosedJaxpr, Eqn
from plait.ir.lists import fill_in
from plait.ir.primitives.custom_batching import VmapRule
from plait.transforms.emit import Emitter, Zero
from plait.transforms.inline import inline_jaxpr
from plait.transforms.jvp import Tangent, jvp_jaxpr, jvp_rules, zero_tangent
from plait.transforms.partial_eval import pe_rules
from plait.transforms.transpose import Cotangent, transpose_rules
from plait.transforms.vmap import Dim, batched_outputs, batching_rules, move_axis, vmap_jaxpr

__all__ = ["JvpVmapRule", "MAX_EMBEDDED_CONST", "embed_const"]

MAX_EMBEDDED_CONST = 1 << 14
"""The largest array constant (in elements) a vmap rule's trace may create.

The batched computation is inlined into a jaxpr whose constants are already
fixed, so an array the rule creates (``np.arange(n)``, ``jnp.array([...])``) is
rebuilt from scalar literals there: a broadcast when its elements are all equal,
else a concatenation of its elements."""


def _inexact(aval: Any) -> bool:
    return dt.is_inexact(shaped(aval).dtype)


def embed_const(e: Emitter, value: Any, aval: ShapedArray, where: str) -> Atom:
    """The concrete array ``value`` (of type ``aval``) built from literals in ``e``."""
    arr = np.ascontiguousarray(np.asarray(value).astype(aval.dtype, copy=False))
    flat = arr.reshape(-1)
    if flat.size == 0 or bool(np.all(flat.view(np.uint8).reshape(flat.size, -1)
                                     == flat[:1].view(np.uint8))):
        return e.full(aval, flat[0] if flat.size else 0)
    if flat.size > MAX_EMBEDDED_CONST:
        raise TransformError(
            f"{where} creates an array constant of {flat.size} elements "
            f"(type {aval.str_short(short_dtypes=False)}); plait rebuilds the constants a vmap "
            f"rule creates from literals, up to {MAX_EMBEDDED_CONST} elements: pass a larger "
            "array to the custom_vmap function as an argument instead")
    one = aval.update(shape=(1,))
    pieces = [e.full(one, v.item()) for v in flat]
    joined = e.bind1(P.concatenate_p, *pieces, dimension=0)
    return e.reshape(joined, aval.shape)


# -- batching ----------------------------------------------------------------

def _custom_vmap_batch(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                       call: ClosedJaxpr, rule: VmapRule,
                       num_consts: int) -> tuple[list[Atom], list[Dim]]:
    args = [x if d is None else move_axis(e, x, d, 0) for x, d in zip(vals, dims)]
    in_batched = tuple(d is not None for d in dims)
    batched, out_batched = rule.batch(size, in_batched)
    j = batched.jaxpr
    if (len(j.invars) != len(args) or len(out_batched) != len(j.outvars)
            or len(j.outvars) != len(call.jaxpr.outvars)):
        raise TransformError(f"the vmap rule {rule} gave a computation of {len(j.invars)} "
                             f"inputs and {len(j.outvars)} outputs ({len(out_batched)} flags) "
                             f"for an equation of {len(args)} operands and "
                             f"{len(call.jaxpr.outvars)} outputs")
    consts = [embed_const(e, c, shaped(v.aval), f"the vmap rule {rule}")
              for v, c in zip(j.constvars, batched.consts)]
    outs = inline_jaxpr(e, j, consts, args)
    return outs, [0 if b else None for b in out_batched]


batching_rules[P.custom_vmap_call_p] = _custom_vmap_batch


# -- forward mode -------------------------------------------------------------

@attrs.frozen
class JvpVmapRule(VmapRule):
    """The batching rule of a ``custom_vmap_call`` differentiated in forward mode.

    Its equation's operands are the original operands (the primals) then the
    tangents of the inexact ones; its outputs, the original outputs then the tangents
    of the inexact ones.
    """

    base: VmapRule
    """The rule of the differentiated equation."""
    inexact: tuple[bool, ...]
    """Per primal operand, whether it has a tangent operand."""

    def batch(self, axis_size: int, in_batched: Sequence[bool]
              ) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
        n = len(self.inexact)
        pb = list(in_batched[:n])
        t_iter = iter(in_batched[n:])
        tb = [next(t_iter) if ok else False for ok in self.inexact]
        mutual = [p and t for p, t in zip(pb, tb)]
        extra_p = [p and not t for p, t in zip(pb, tb)]
        extra_t = [t and not p for p, t, ok in zip(pb, tb, self.inexact) if ok]
        base, base_out = self.base.batch(axis_size, tuple(mutual))
        n_out = len(base_out)
        jj, out_nz = jvp_jaxpr(base.jaxpr, list(self.inexact), instantiate=True)
        n_t = sum(out_nz)
        extra = extra_p + extra_t
        if any(extra):
            dep = batched_outputs(jj, extra)
            out_dims: list[Dim] = [0 if d else None for d in dep]
            jj = vmap_jaxpr(jj, axis_size, [0 if x else None for x in extra], out_dims)
        else:
            dep = [False] * (n_out + n_t)
        base_t = [b for b, nz in zip(base_out, out_nz) if nz]
        out_b = tuple(b or d for b, d in zip(list(base_out) + base_t, dep))
        return ClosedJaxpr(jj, base.consts), out_b

    def __str__(self) -> str:
        return f"jvp_of_rule({self.base})"

    __repr__ = __str__


def _custom_vmap_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
                     call: ClosedJaxpr, rule: VmapRule,
                     num_consts: int) -> tuple[list[Atom], list[Tangent]]:
    # As JAX: the tangents of every (inexact) operand, zeros instantiated.
    inexact = [_inexact(p.aval) for p in primals]
    ts = [e.instantiate(t) for t, ok in zip(tangents, inexact) if ok]
    jc, out_nz = jvp_jaxpr(call.jaxpr, inexact, instantiate=True)
    outs = e.bind(P.custom_vmap_call_p, *primals, *ts, call=ClosedJaxpr(jc),
                  rule=JvpVmapRule(rule, tuple(inexact)), num_consts=0)
    n = len(call.jaxpr.outvars)
    touts: list[Tangent] = fill_in(list(out_nz), outs[n:], call.jaxpr.outvars, zero_tangent)
    return list(outs[:n]), touts


jvp_rules[P.custom_vmap_call_p] = _custom_vmap_jvp


# -- reverse mode ---------------------------------------------------------------

def _reverse_mode_error(rule: VmapRule) -> TransformError:
    return TransformError(
        "Linearization failed to produce known values for all output primals: reverse-mode "
        "differentiation (grad, vjp, jacrev, linearize) of a custom_vmap function is not "
        f"supported (its vmap rule is {rule}), as in JAX. To customize both vmap and "
        "reverse-mode autodiff, wrap the custom_vmap function in a custom_vjp.")


def _custom_vmap_partial_eval(eqn: Eqn, unknowns: Sequence[bool]
                              ) -> tuple[Eqn | None, Eqn | None, list[bool], list[Var]]:
    rule = eqn.params["rule"]
    if isinstance(rule, JvpVmapRule):
        n = len(rule.inexact)
        if not any(unknowns[:n]) and any(unknowns[n:]):
            # Linearization: the primal outputs would depend on the unknown tangents.
            raise _reverse_mode_error(rule.base)
    # Otherwise as any primitive: wholly unknown.
    res = [a for a, u in zip(eqn.invars, unknowns) if not u and type(a) is Var]
    return None, eqn, [True] * len(eqn.outvars), res


pe_rules[P.custom_vmap_call_p] = _custom_vmap_partial_eval


def _custom_vmap_transpose(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any,
                           call: ClosedJaxpr, rule: VmapRule,
                           num_consts: int) -> Sequence[Cotangent]:
    raise _reverse_mode_error(rule.base if isinstance(rule, JvpVmapRule) else rule)


transpose_rules[P.custom_vmap_call_p] = _custom_vmap_transpose

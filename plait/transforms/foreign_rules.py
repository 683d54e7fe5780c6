"""Differentiation and batching of foreign function calls (``ffi_call``), as JAX 0.10.2.

JVP: a native handler has no derivative; a nonzero tangent is an error naming the
handler (``custom_jvp`` gives it one), and zero tangents pass it unchanged.

vmap follows the call's ``vmap_method``: ``sequential``/``sequential_unrolled`` apply it
to one element at a time in a ``scan`` (the unbatched operands as its constants);
``expand_dims`` gives the unbatched operands a leading dimension of size 1 and
``broadcast_all`` broadcasts them, for one call that sees the whole batch;
``legacy_vectorized`` passes the operands as they are, batched ones with their batch
first.  Without a method, an error listing them.  The layouts gain the batch dimension
as the most major one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir.atoms import Atom, Var
from plait.ir.avals import ShapedArray, shaped
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives import control_flow as _control_flow
from plait.ir.primitives.foreign import FFI_VMAP_METHODS, ffi_call_p
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import Tangent, jvp_rules, zero_tangent
from plait.transforms.vmap import Dim, batching_rules, move_axis

__all__: list[str] = []


def _no_derivative(target_name: str) -> ValueError:
    return ValueError(f"The FFI call to `{target_name}` cannot be differentiated. You can use "
                      "`jax.custom_jvp` or `jax.custom_jvp` to add support.")


def _jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
         **params: Any) -> tuple[list[Atom], list[Tangent]]:
    if any(type(t) is not Zero for t in tangents):
        raise _no_derivative(params["target_name"])
    outs: list[Atom] = list(e.bind(ffi_call_p, *primals, **params))
    return outs, [zero_tangent(o) for o in outs]


jvp_rules[ffi_call_p] = _jvp


def _outer(layout: tuple[int, ...]) -> tuple[int, ...]:
    """A layout (minor to major) with a new leading dimension as the most major."""
    return tuple(n + 1 for n in layout) + (0,)


def _sequential(e: Emitter, size: int, args: Sequence[Atom], dims: Sequence[Dim],
                unroll: bool, params: dict[str, Any]) -> list[Var]:
    consts = [x for x, d in zip(args, dims) if d is None]
    xs = [move_axis(e, x, d, 0) for x, d in zip(args, dims) if d is not None]
    body = Emitter()
    const_vars = [Var(shaped(x.aval)) for x in consts]
    x_vars = [Var(ShapedArray(shaped(x.aval).shape[1:], shaped(x.aval).dtype)) for x in xs]
    it_c, it_x = iter(const_vars), iter(x_vars)
    operands = [next(it_c) if d is None else next(it_x) for d in dims]
    outs = body.bind(ffi_call_p, *operands, **params)
    jaxpr = body.builder.build([*const_vars, *x_vars], outs)
    return e.bind(_control_flow.scan_p, *consts, *xs, jaxpr=ClosedJaxpr(jaxpr), length=size,
                  reverse=False, num_consts=len(consts), num_carry=0,
                  unroll=max(size, 1) if unroll else 1)


def _vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
          vmap_method: str | None, result_avals: tuple[ShapedArray, ...],
          **params: Any) -> tuple[list[Atom], list[Dim]]:
    batched_avals = tuple(a.update(shape=(size, *a.shape)) for a in result_avals)
    if vmap_method in ("sequential", "sequential_unrolled"):
        outs = _sequential(e, size, vals, dims, vmap_method == "sequential_unrolled",
                           dict(params, vmap_method=vmap_method, result_avals=result_avals))
        return list(outs), [0] * len(outs)
    if vmap_method is None or vmap_method not in FFI_VMAP_METHODS:
        methods = ", ".join(repr(m) for m in FFI_VMAP_METHODS[:-1])
        raise NotImplementedError(
            f"vmap is only supported for the ffi_call primitive when vmap_method is one of "
            f"{methods}, or {FFI_VMAP_METHODS[-1]!r}. Got vmap_method={vmap_method!r}.")
    params["output_layouts"] = tuple(_outer(lay) for lay in params["output_layouts"])
    if vmap_method == "legacy_vectorized":
        args = [x if d is None else move_axis(e, x, d, 0) for x, d in zip(vals, dims)]
        params["input_layouts"] = tuple(lay if d is None else _outer(lay)
                                        for lay, d in zip(params["input_layouts"], dims))
    else:
        lead = size if vmap_method == "broadcast_all" else 1
        args = [move_axis(e, x, d, 0) if d is not None else
                e.broadcast_in_dim(x, (lead, *shaped(x.aval).shape),
                                   range(1, shaped(x.aval).ndim + 1))
                for x, d in zip(vals, dims)]
        params["input_layouts"] = tuple(_outer(lay) for lay in params["input_layouts"])
    outs = e.bind(ffi_call_p, *args, vmap_method=vmap_method, result_avals=batched_avals,
                  **params)
    return list(outs), [0] * len(outs)


batching_rules[ffi_call_p] = _vmap

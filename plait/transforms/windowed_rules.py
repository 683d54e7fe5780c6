"""JVP, transpose and batching rules of the windowed reductions, as JAX defines them.

- ``reduce_window_sum`` is linear; its transpose spreads each cotangent over its
  window: the cotangent, dilated by the strides and padded, summed over windows.
- ``reduce_window_max``/``min`` differentiate to ``select_and_gather_add`` (the
  tangent at each window's winner), which is linear in the tangents and
  transposes to ``select_and_scatter_add``, and back.
- ``reduce_window`` with a computation differentiates to a ``reduce_window``
  over (primal, tangent) pairs whose computation is the computation's JVP; like
  JAX, plait has no transpose for it.
- ``cumlogsumexp``'s tangent is a linear recurrence, evaluated by doubling.
- ``reduce`` with a computation differentiates, as in JAX, by a pairwise tree of the
  computation's JVP (so it also has a reverse-mode derivative).
- Batching adds a window dimension of size 1 for the batch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import shaped
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.primitive import Primitive
from plait.transforms.emit import Emitter, Zero
from plait.transforms.inline import inline_jaxpr
from plait.transforms.jvp import Tangent, defjvp, deflinear, jvp_jaxpr, jvp_rules, tangent_aval
from plait.transforms.transpose import Cotangent, UndefPrimal
from plait.transforms.transpose_rules import deflinear_transpose
from plait.transforms.vmap import Dim, batching_rules, bdim_to_front, move_axis, vmap_jaxpr

Pairs = tuple[tuple[int, int], ...]
Result = tuple[Sequence[Atom], Sequence[Dim]]


def _dilate(shape: Sequence[int], factors: Sequence[int]) -> list[int]:
    return [0 if s == 0 else (s - 1) * d + 1 for s, d in zip(shape, factors)]


# -- reduce_window_sum --------------------------------------------------------------------

deflinear(P.reduce_window_sum_p)


def _sum_t(e: Emitter, ct: Atom, x: Any, *, window_dimensions: tuple[int, ...],
           window_strides: tuple[int, ...], padding: Pairs, base_dilation: tuple[int, ...],
           window_dilation: tuple[int, ...]) -> Sequence[Cotangent]:
    # Each input element receives the cotangents of the windows covering it: pad the
    # stride-dilated cotangent so that a window sum at every (base-dilated) input
    # position collects exactly those.
    in_shape = shaped(x.aval).shape
    out_shape = shaped(ct.aval).shape
    span = _dilate(window_dimensions, window_dilation)
    before = [w - lo - 1 for w, (lo, _) in zip(span, padding)]
    after = [n + w - 1 - o - b for n, w, o, b in zip(
        _dilate(in_shape, base_dilation), span, _dilate(out_shape, window_strides), before)]
    config = tuple((b, a, s - 1) for b, a, s in zip(before, after, window_strides))
    padded = e.bind1(P.pad_p, ct, e.scalar_like(ct, 0), padding_config=config)
    ones = (1,) * len(in_shape)
    return [e.bind1(P.reduce_window_sum_p, padded, window_dimensions=window_dimensions,
                    window_strides=base_dilation, padding=((0, 0),) * len(in_shape),
                    base_dilation=ones, window_dilation=window_dilation)]


deflinear_transpose(P.reduce_window_sum_p, _sum_t)


# -- reduce_window_max / min and their derivatives ----------------------------------------

def _chooser_jvp(prim: Primitive, select_prim: Primitive) -> Any:
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Var], list[Tangent]]:
        x, = primals
        t, = tangents
        out = e.bind(prim, x, **params)
        if isinstance(t, Zero):
            return out, [Zero(tangent_aval(out[0].aval))]
        return out, [e.bind1(P.select_and_gather_add_p, t, x, select_prim=select_prim,
                             **params)]
    return rule


jvp_rules[P.reduce_window_max_p] = _chooser_jvp(P.reduce_window_max_p, P.ge_p)
jvp_rules[P.reduce_window_min_p] = _chooser_jvp(P.reduce_window_min_p, P.le_p)

defjvp(P.select_and_gather_add_p,
       lambda e, t, tangents, operand, **params: e.bind1(P.select_and_gather_add_p, t,
                                                         operand, **params),
       None)
defjvp(P.select_and_scatter_add_p,
       lambda e, t, source, operand, **params: e.bind1(P.select_and_scatter_add_p, t,
                                                       operand, **params),
       None)


def _check_operand_known(name: str, operand: Any) -> None:
    if type(operand) is UndefPrimal:
        raise NotImplementedError(f"transpose of {name} with respect to its operand "
                                      "(it is linear only in its first argument)")


def _select_and_gather_add_t(e: Emitter, ct: Atom, t: Any, operand: Any, *,
                             select_prim: Primitive, window_dimensions: tuple[int, ...],
                             window_strides: tuple[int, ...], padding: Pairs,
                             base_dilation: tuple[int, ...],
                             window_dilation: tuple[int, ...]) -> Sequence[Cotangent]:
    _check_operand_known("select_and_gather_add", operand)
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(
            f"VJP of select_and_gather_add (a max or min pool's derivative) with window "
            f"dilation {window_dilation}: XLA's select_and_scatter has no window dilation; "
            "JAX does not implement it either")
    xa = shaped(operand.aval)
    dilated = any(d != 1 for d in base_dilation)
    if dilated:  # the holes of the dilation hold the identity, which is never selected
        ident = e.literal(_identity(select_prim, xa.dtype), xa.dtype)
        operand = e.bind1(P.pad_p, operand, ident,
                          padding_config=tuple((0, 0, d - 1) for d in base_dilation))
    out: Atom = e.bind1(P.select_and_scatter_add_p, ct, operand, select_prim=select_prim,
                        window_dimensions=window_dimensions, window_strides=window_strides,
                        padding=padding)
    if dilated:
        shape = shaped(out.aval).shape
        out = e.bind1(P.slice_p, out, start_indices=(0,) * len(shape), limit_indices=shape,
                      strides=base_dilation)
    return [out, None]


def _identity(select_prim: Primitive, dtype: Any) -> Any:
    return dt.max_identity(dtype) if select_prim is P.ge_p else dt.min_identity(dtype)


deflinear_transpose(P.select_and_gather_add_p, _select_and_gather_add_t)


def _select_and_scatter_add_t(e: Emitter, ct: Atom, source: Any, operand: Any, *,
                              select_prim: Primitive, window_dimensions: tuple[int, ...],
                              window_strides: tuple[int, ...],
                              padding: Pairs) -> Sequence[Cotangent]:
    _check_operand_known("select_and_scatter_add", operand)
    ones = (1,) * len(window_dimensions)
    return [e.bind1(P.select_and_gather_add_p, ct, operand, select_prim=select_prim,
                    window_dimensions=window_dimensions, window_strides=window_strides,
                    padding=padding, base_dilation=ones, window_dilation=ones), None]


deflinear_transpose(P.select_and_scatter_add_p, _select_and_scatter_add_t)


# -- reduce_window with a computation, and cumlogsumexp ------------------------------------

def _pair_computation(jaxpr: Jaxpr, diff: Sequence[bool]) -> Jaxpr:
    """The computation over (primals, tangents of the ``diff`` operands): ``jaxpr``'s JVP
    with its binders reordered from (accs, elements, acc tangents, element tangents) to
    (accs, acc tangents, elements, element tangents), the order reduce_window passes."""
    n, m = len(diff), sum(diff)
    jvp, _ = jvp_jaxpr(jaxpr, list(diff) * 2, instantiate=list(diff))
    v = jvp.invars
    accs, xs, acc_ts, x_ts = v[:n], v[n:2 * n], v[2 * n:2 * n + m], v[2 * n + m:]
    return jvp.replace(invars=(*accs, *acc_ts, *xs, *x_ts))


def _differentiable(atoms: Sequence[Atom]) -> list[bool]:
    return [dt.is_inexact(shaped(a.aval).dtype) for a in atoms]


def _reduce_window_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
                       jaxpr: Jaxpr, consts: tuple[()],
                       **params: Any) -> tuple[list[Var], list[Tangent]]:
    n = len(primals) // 2
    outs = e.bind(P.reduce_window_p, *primals, jaxpr=jaxpr, consts=consts, **params)
    diff = _differentiable(primals[:n])
    zeros: list[Tangent] = [Zero(tangent_aval(v.aval)) for v in outs]
    if not any(diff) or all(isinstance(t, Zero) for t in tangents):
        return outs, zeros
    picked = [i for i in range(n) if diff[i]]
    ts = [e.instantiate(tangents[i]) for i in picked]
    t_inits = [e.instantiate(tangents[n + i]) for i in picked]
    pair = _pair_computation(jaxpr, diff)
    res = e.bind(P.reduce_window_p, *primals[:n], *ts, *primals[n:], *t_inits, jaxpr=pair,
                 consts=(), **params)
    for k, i in enumerate(picked):
        zeros[i] = res[n + k]
    return outs, zeros


jvp_rules[P.reduce_window_p] = _reduce_window_jvp


def _shift(e: Emitter, x: Atom, k: int, axis: int, reverse: bool, fill: float = 0) -> Atom:
    """``x`` moved ``k`` places along ``axis`` (towards the end, or the start when
    ``reverse``), ``fill`` filling in."""
    a = shaped(x.aval)
    n = a.shape[axis]
    start = [0] * a.ndim
    limit = list(a.shape)
    if reverse:
        start[axis] = k
    else:
        limit[axis] = n - k
    kept = e.bind1(P.slice_p, x, start_indices=tuple(start), limit_indices=tuple(limit),
                   strides=None)
    config = [(0, 0, 0)] * a.ndim
    config[axis] = (0, k, 0) if reverse else (k, 0, 0)
    return e.bind1(P.pad_p, kept, e.scalar_like(x, fill), padding_config=tuple(config))


def _linear_recurrence(e: Emitter, a: Atom, u: Atom, axis: int, reverse: bool) -> Atom:
    """``y[i] = a[i] * y[i-1] + u[i]`` along ``axis`` (``i+1`` when ``reverse``), by
    doubling: log2(n) rounds of shifted multiply-adds.  Linear in ``u`` through
    primitives that all transpose, so the result can be differentiated in reverse."""
    n = shaped(u.aval).shape[axis]
    y, k = u, 1
    while k < n:
        y = e.add_any(y, e.mul(a, _shift(e, y, k, axis, reverse)))
        if 2 * k < n:
            a = e.mul(a, _shift(e, a, k, axis, reverse))
        k *= 2
    return y


def _cumlogsumexp_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
                      axis: int, reverse: bool) -> tuple[list[Var], list[Tangent]]:
    # The tangent is sum over j <= i of exp(x[j] - out[i]) * t[j]: the recurrence
    # T[i] = exp(out[i-1] - out[i]) * T[i-1] + exp(x[i] - out[i]) * t[i], whose
    # coefficients lie in [0, 1] (where out[i] is -inf, both are taken as 0).
    x, = primals
    t, = tangents
    out, = e.bind(P.cumlogsumexp_p, x, axis=axis, reverse=reverse)
    if isinstance(t, Zero) or shaped(x.aval).shape[axis] == 0:
        return [out], [t]
    empty = e.bind1(P.eq_p, out, e.scalar_like(out, float("-inf")))
    zero = e.zeros(shaped(out.aval))

    def weight(lhs: Atom) -> Atom:
        return e.select_n(empty, e.unary(P.exp_p, e.sub(lhs, out)), zero)

    a = weight(_shift(e, out, 1, axis, reverse, float("-inf")))
    return [out], [_linear_recurrence(e, a, e.mul(weight(x), t), axis, reverse)]


jvp_rules[P.cumlogsumexp_p] = _cumlogsumexp_jvp


# -- reduce with a computation --------------------------------------------------------------

def _elementwise(jaxpr: Jaxpr, shape: Sequence[int]) -> Jaxpr:
    """``jaxpr`` (over scalars) mapped over arrays of ``shape``."""
    for size in reversed(shape):
        jaxpr = vmap_jaxpr(jaxpr, size, [0] * len(jaxpr.invars), [0] * len(jaxpr.outvars))
    return jaxpr


def _reduce_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
                jaxpr: ClosedJaxpr, dimensions: tuple[int, ...]
                ) -> tuple[list[Var], list[Tangent]]:
    # As JAX: the reduced elements are combined pairwise in a tree, the computation's
    # JVP mapped over each level, so that the tangent is built from linear primitives.
    n = len(primals) // 2
    outs = e.bind(P.reduce_p, *primals, jaxpr=jaxpr, dimensions=dimensions)
    result: list[Tangent] = [Zero(tangent_aval(v.aval)) for v in outs]
    if any(not isinstance(t, Zero) for t in tangents[n:]):
        raise NotImplementedError("Gradient of general lax.reduce with non-zero tangents for "
                                  "initial values to reduction not implemented")
    diff = _differentiable(primals[:n])
    picked = [i for i in range(n) if diff[i] and not isinstance(tangents[i], Zero)]
    if not picked:
        return outs, result
    diff = [i in picked for i in range(n)]
    shape = shaped(primals[0].aval).shape
    kept = [d for d in range(len(shape)) if d not in dimensions]
    rest = [shape[d] for d in kept]
    k = math.prod(shape[d] for d in dimensions)

    def flat(x: Atom) -> Atom:
        return e.reshape(e.transpose(x, [*dimensions, *kept]), [k, *rest])

    def rows(x: Atom, lo: int, hi: int) -> Atom:
        return e.bind1(P.slice_p, x, start_indices=(lo,) + (0,) * len(rest),
                       limit_indices=(hi, *rest), strides=None)

    def pad_one(x: Atom, value: Atom) -> Atom:
        return e.bind1(P.pad_p, x, value, padding_config=((0, 1, 0),) + ((0, 0, 0),) * len(rest))

    xs = [flat(x) for x in primals[:n]]
    ts = [flat(e.instantiate(tangents[i])) for i in picked]
    pair, _ = jvp_jaxpr(jaxpr.jaxpr, diff * 2, instantiate=diff)
    while k > 1:
        half = (k + 1) // 2
        lx, rx = [rows(x, 0, half) for x in xs], [rows(x, half, k) for x in xs]
        lt, rt = [rows(t, 0, half) for t in ts], [rows(t, half, k) for t in ts]
        if k % 2:
            rx = [pad_one(x, init) for x, init in zip(rx, primals[n:])]
            rt = [pad_one(t, e.scalar_like(t, 0)) for t in rt]
        res = inline_jaxpr(e, _elementwise(pair, [half, *rest]), [], [*lx, *rx, *lt, *rt])
        xs, ts, k = res[:n], res[n:], half
    for j, i in enumerate(picked):
        result[i] = e.reshape(ts[j], rest) if k else e.zeros(tangent_aval(outs[i].aval))
    return outs, result


jvp_rules[P.reduce_p] = _reduce_jvp


# -- batching --------------------------------------------------------------------------------

def _unit_window(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with a leading window dimension of size 1 (the batch)."""
    out = dict(params)
    out["window_dimensions"] = (1, *params["window_dimensions"])
    out["window_strides"] = (1, *params["window_strides"])
    out["padding"] = ((0, 0), *params["padding"])
    for k in ("base_dilation", "window_dilation"):
        if k in params:
            out[k] = (1, *params[k])
    return out


def _batch_windowed(prim: Primitive) -> Any:
    def rule(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], **params: Any) -> Result:
        xs = [bdim_to_front(e, x, d, size) for x, d in zip(vals, dims)]
        return e.bind(prim, *xs, **_unit_window(params)), [0] * (
            len(vals) if prim.multiple_results else 1)
    return rule


for _p in (P.reduce_window_sum_p, P.reduce_window_max_p, P.reduce_window_min_p,
           P.select_and_gather_add_p, P.select_and_scatter_add_p):
    batching_rules[_p] = _batch_windowed(_p)


def _batch_reduce_window(e: Emitter, size: int, vals: list[Atom], dims: list[Dim],
                         **params: Any) -> Result:
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("batching of reduce_window over batched init values "
                                      "(JAX does not batch them either)")
    xs = [bdim_to_front(e, x, d, size) for x, d in zip(vals[:n], dims[:n])]
    outs = e.bind(P.reduce_window_p, *xs, *vals[n:], **_unit_window(params))
    return outs, [0] * n


batching_rules[P.reduce_window_p] = _batch_reduce_window


def _batch_reduce(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                  jaxpr: ClosedJaxpr, dimensions: tuple[int, ...]) -> Result:
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("batching of reduce over batched init values (JAX does not "
                                  "batch them either)")
    xs = [bdim_to_front(e, x, d, size) for x, d in zip(vals[:n], dims[:n])]
    outs = e.bind(P.reduce_p, *xs, *vals[n:], jaxpr=jaxpr,
                  dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * n


batching_rules[P.reduce_p] = _batch_reduce


def _batch_cumlogsumexp(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                        axis: int, reverse: bool) -> Result:
    x = move_axis(e, vals[0], cast(int, dims[0]), 0)
    return e.bind(P.cumlogsumexp_p, x, axis=axis + 1, reverse=reverse), [0]


batching_rules[P.cumlogsumexp_p] = _batch_cumlogsumexp

"""Sharding rules of indexing, convolution, FFTs, windowed reductions and batched linear
algebra (the families of :mod:`plait.ir.sharding_rules` cover the rest).

Each rule keeps the sharding of the dimensions an operation maps one to one (batch
dimensions, gathered slices' untouched dimensions) and asks for a reshard where a split
dimension would be indexed, contracted or transformed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import primitives as P
from plait.ir.avals import AbstractValue
from plait.ir.errors import ShardingTypeError
from plait.ir.primitives.convolution import ConvDimensionNumbers
from plait.ir.primitives.indexing import GatherDimensionNumbers, ScatterDimensionNumbers
from plait.ir.sharding_rules import (
    SHARDING_RULES,
    Spec,
    _elementwise_spec,
    _requested_or,
    _spec,
)

__all__: list[str] = []


def _whole(name: str, aval: AbstractValue, spec: Spec, dims: Sequence[int], why: str) -> None:
    split = [d for d in dims if spec[d] is not None]
    if split:
        raise ShardingTypeError(
            f"{name}: expected the dimensions it {why} ({', '.join(map(str, split))}) of "
            f"{aval.str_short()} unsharded: reshard the operand first "
            "(plait.reshard(x, P(...))), or compute it under plait.sharding.auto_axes")


def _gather(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
            in_specs: Sequence[Spec], *, dimension_numbers: GatherDimensionNumbers,
            slice_sizes: tuple[int, ...], **_: Any) -> list[Spec]:
    """JAX's rule: indexed operand dimensions whole (or wholly sliced), index dimensions
    other than batching ones whole, batching dimensions agreeing; the result's offset
    dimensions take the operand's sharding, its others the indices'."""
    dn = dimension_numbers
    ops, idx = in_specs[0], list(in_specs[1])
    shape = getattr(in_avals[0], "shape", ())
    ok = all(slice_sizes[d] == shape[d] or ops[d] is None for d in dn.start_index_map)
    ok &= all(idx[i] == ops[o] or None in (idx[i], ops[o])
              for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
    ok &= all(s is None for i, s in enumerate(idx) if i not in dn.start_indices_batching_dims)
    if not ok:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the "
            "gather indexing as out sharding could not be resolved unambiguously (or would "
            f"require collectives on inputs). Got operand={in_avals[0]!r}, "
            f"indices={in_avals[1]!r}")
    for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
        idx[i] = idx[i] or ops[o]
    offsets = iter(d for d in range(len(ops)) if d not in dn.collapsed_slice_dims
                   and d not in dn.operand_batching_dims)
    batches = iter(idx)
    return [tuple(ops[next(offsets)] if d in dn.offset_dims else next(batches)
                  for d in range(len(_spec(outs[0]))))]


def _agree(*entries: Any) -> bool:
    return len({e for e in entries if e is not None}) <= 1


def _scatter(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], *, dimension_numbers: ScatterDimensionNumbers,
             **_: Any) -> list[Spec]:
    """JAX's rule: batching dimensions agreeing over operand, indices and updates;
    window dimensions split alike in operand and updates (or whole); the dimensions
    updates overlap on whole."""
    dn = dimension_numbers
    ops, idx, upd = in_specs[0], in_specs[1], in_specs[2]
    op_shape = getattr(in_avals[0], "shape", ())
    up_shape = getattr(in_avals[2], "shape", ())
    vec = len(idx) - 1
    scattered = [d for d in range(len(upd)) if d not in dn.update_window_dims]
    upd_of_idx = dict(zip([d for d in range(len(idx)) if d != vec], scattered))
    upd_batch = [upd_of_idx[i] for i in dn.scatter_indices_batching_dims]
    windows = [d for d in range(len(ops)) if d not in dn.inserted_window_dims
               and d not in dn.operand_batching_dims]
    ok = all(_agree(ops[o], idx[i], upd[u]) for o, i, u in
             zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, upd_batch))
    # (An unsplit updates window takes the operand's split, as an unsplit operand of a
    # binary operation does: JAX's broadcasts split it already.)
    ok &= all((up_shape[u] == op_shape[o] and _agree(upd[u], ops[o]))
              or (upd[u] is None and ops[o] is None)
              for u, o in zip(dn.update_window_dims, windows))
    ok &= all(ops[d] is None for d in dn.inserted_window_dims)
    ok &= all(upd[d] is None for d in scattered if d not in upd_batch)
    ok &= all(idx[d] is None for d in range(vec + 1)
              if d not in dn.scatter_indices_batching_dims)
    if not ok:
        raise ShardingTypeError(
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec "
            "for the scatter update as out sharding could not be resolved unambiguously (or "
            f"would require collectives on inputs). Got operand={in_avals[0]!r}, "
            f"indices={in_avals[1]!r}, updates={in_avals[2]!r}")
    out = list(ops)
    for o, i, u in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, upd_batch):
        out[o] = out[o] or idx[i] or upd[u]
    for u, o in zip(dn.update_window_dims, windows):
        out[o] = out[o] or upd[u]
    return [tuple(out)]


def _conv(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
          in_specs: Sequence[Spec], *, dimension_numbers: ConvDimensionNumbers,
          **_: Any) -> list[Spec]:
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    ls, rs = in_specs
    _whole("conv_general_dilated", in_avals[0], ls, [lhs_spec[1], *lhs_spec[2:]],
           "contracts or slides over")
    _whole("conv_general_dilated", in_avals[1], rs, [rhs_spec[1], *rhs_spec[2:]],
           "contracts or slides over")
    out: list[Any] = [None] * len(out_spec)
    out[out_spec[0]] = ls[lhs_spec[0]]
    out[out_spec[1]] = rs[rhs_spec[0]]
    return [tuple(out)]


def _fft(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
         in_specs: Sequence[Spec], *, fft_lengths: tuple[int, ...], **_: Any) -> list[Spec]:
    spec = in_specs[0]
    n = len(fft_lengths)
    _whole("fft", in_avals[0], spec, range(len(spec) - n, len(spec)), "transforms")
    return [spec]


def _windowed(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
              in_specs: Sequence[Spec], *, window_dimensions: tuple[int, ...],
              window_strides: tuple[int, ...], padding: tuple[tuple[int, int], ...],
              **_: Any) -> list[Spec]:
    spec = _elementwise_spec("reduce_window", in_specs, len(in_specs[0]))
    moving = [d for d, (w, s, p) in enumerate(zip(window_dimensions, window_strides, padding))
              if w != 1 or s != 1 or p != (0, 0)]
    _whole("reduce_window", in_avals[0], spec, moving, "slides a window over")
    return [spec] * len(outs)


def _batched_matrices(name: str) -> Any:
    def rule(in_avals: Sequence[AbstractValue], outs: Sequence[AbstractValue],
             in_specs: Sequence[Spec], **_: Any) -> list[Spec]:
        rank = len(in_specs[0])
        for a, s in zip(in_avals, in_specs):
            _whole(name, a, s, range(len(s) - 2, len(s)), "factors or solves over")
        batch = _elementwise_spec(name, [s[:-2] for s in in_specs if len(s) == rank],
                                  rank - 2)
        return [batch + (None,) * (len(_spec(o)) - len(batch)) for o in outs]
    return rule


def _register() -> None:
    SHARDING_RULES[P.gather_p] = _gather
    for p in (P.scatter_p, P.scatter_add_p, P.scatter_mul_p, P.scatter_min_p,
              P.scatter_max_p, P.scatter_sub_p):
        SHARDING_RULES[p] = _scatter
    SHARDING_RULES[P.conv_general_dilated_p] = _requested_or(lambda *a, **k: _conv(*a, **k)[0])
    SHARDING_RULES[P.fft_p] = _fft
    for p in (P.reduce_window_sum_p, P.reduce_window_max_p, P.reduce_window_min_p,
              P.reduce_window_p, P.select_and_gather_add_p, P.select_and_scatter_add_p):
        SHARDING_RULES[p] = _windowed
    for p in (P.cholesky_p, P.triangular_solve_p, P.lu_p, P.qr_p, P.eigh_p, P.svd_p,
              P.eig_p, P.schur_p, P.hessenberg_p, P.geqrf_p, P.geqp3_p,
              P.householder_product_p, P.ormqr_p):
        SHARDING_RULES[p] = _batched_matrices(p.name)
    SHARDING_RULES[P.random_wrap_p] = lambda ins, outs, specs, **_: [specs[0][:-1]]
    SHARDING_RULES[P.random_unwrap_p] = lambda ins, outs, specs, **_: [specs[0] + (None,)]


_register()

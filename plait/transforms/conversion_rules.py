"""JVP, transpose and batching rules of ``bitcast_convert_type``, ``reduce_precision``,
``mulhi``, ``optimization_barrier``, ``rng_bit_generator`` and ``rng_uniform``, as
JAX 0.10.2 defines them:

- bitcasts, ``mulhi`` and the random primitives have zero derivatives;
- ``reduce_precision`` is linear: its tangent and cotangent are reduced too;
- ``optimization_barrier``'s JVP is a barrier over the primals and another over
  the (instantiated) tangents, and its transpose a barrier over the cotangents;
- ``vmap`` of ``rng_bit_generator`` uses the first key only: it draws
  ``(batch, *shape)`` bits from it and writes the new key into row 0 of the keys
  (JAX's rule: the other keys pass through unchanged); ``rng_uniform`` has no
  batching rule (JAX has none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.avals import shaped
from plait.ir.errors import RuleNotImplementedError
from plait.transforms.batching_rules import defbroadcasting, defvectorized
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import Tangent, defjvp_zero, deflinear, jvp_rules
from plait.transforms.transpose import Cotangent, UndefPrimal, transpose_rules
from plait.transforms.transpose_rules import deflinear_transpose
from plait.transforms.vmap import Dim, batching_rules, move_axis

Result = tuple[Sequence[Atom], Sequence[Dim]]

for _p in (P.bitcast_convert_type_p, P.mulhi_p, P.rng_bit_generator_p, P.rng_uniform_p):
    defjvp_zero(_p)

deflinear(P.reduce_precision_p)
deflinear_transpose(P.reduce_precision_p, lambda e, ct, x, **params: [
    e.bind1(P.reduce_precision_p, ct, **params)])
defvectorized(P.reduce_precision_p)
defbroadcasting(P.mulhi_p)


def _batch_bitcast(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                   new_dtype: Any) -> Result:
    x, d = vals[0], cast(int, dims[0])
    a = shaped(x.aval)
    if new_dtype.itemsize > a.dtype.itemsize and d == a.ndim - 1:
        x, d = move_axis(e, x, d, 0), 0  # widening consumes the trailing dimension
    return [e.bind1(P.bitcast_convert_type_p, x, new_dtype=new_dtype)], [d]


batching_rules[P.bitcast_convert_type_p] = _batch_bitcast


# -- optimization_barrier -------------------------------------------------------------------

def _has_tangent_space(x: Atom | Zero) -> bool:
    return dt.is_inexact(shaped(x.aval).dtype)


def _barrier_jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent]
                 ) -> tuple[list[Var], list[Tangent]]:
    outs = e.bind(P.optimization_barrier_p, *primals)
    live = [i for i, t in enumerate(tangents) if _has_tangent_space(t)]
    touts: list[Tangent] = list(tangents)
    if live:
        barred = e.bind(P.optimization_barrier_p, *[e.instantiate(tangents[i]) for i in live])
        for i, t in zip(live, barred):
            touts[i] = t
    return outs, touts


def _barrier_t(e: Emitter, cts: Sequence[Atom | Zero], *ins: Any) -> Sequence[Cotangent]:
    live = [i for i, c in enumerate(cts) if _has_tangent_space(c)]
    outs: list[Cotangent] = [None] * len(ins)
    if live:
        barred = e.bind(P.optimization_barrier_p, *[e.instantiate(cts[i]) for i in live])
        for i, c in zip(live, barred):
            outs[i] = c
    return [c if type(x) is UndefPrimal else None for c, x in zip(outs, ins)]


def _batch_barrier(e: Emitter, size: int, vals: list[Atom], dims: list[Dim]) -> Result:
    return e.bind(P.optimization_barrier_p, *vals), dims


jvp_rules[P.optimization_barrier_p] = _barrier_jvp
transpose_rules[P.optimization_barrier_p] = _barrier_t
batching_rules[P.optimization_barrier_p] = _batch_barrier


# -- rng --------------------------------------------------------------------------------------

def _batch_rng_bit_generator(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                             shape: tuple[int, ...], **params: Any) -> Result:
    keys = move_axis(e, vals[0], cast(int, dims[0]), 0)
    n = shaped(keys.aval).shape[1]
    first = e.bind1(P.slice_p, keys, start_indices=(0, 0), limit_indices=(1, n), strides=None)
    key = e.bind1(P.squeeze_p, first, dimensions=(0,))
    new_key, bits = e.bind(P.rng_bit_generator_p, key, shape=(size, *shape), **params)
    row = e.broadcast_in_dim(new_key, (1, n), (1,))
    zero = e.literal(0, dt.int32)
    new_keys = e.bind1(P.dynamic_update_slice_p, keys, row, zero, zero)
    return [new_keys, bits], [0, 0]


def _batch_rng_uniform(e: Emitter, size: int, vals: list[Atom], dims: list[Dim],
                       **params: Any) -> Result:
    raise RuleNotImplementedError("Batching", "rng_uniform")


batching_rules[P.rng_bit_generator_p] = _batch_rng_bit_generator
batching_rules[P.rng_uniform_p] = _batch_rng_uniform

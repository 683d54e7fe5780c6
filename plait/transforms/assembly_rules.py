"""JVP, transpose and batching rules of ``split``, ``stack``, ``unstack`` and ``tile``.

All four are linear.  ``split`` and ``concatenate`` transpose into each other, as
do ``stack`` and ``unstack``; the transpose of ``tile`` sums the copies (a reshape
that separates them, then a ``reduce_sum``).  Batching moves the batch dimension
first and shifts ``axis`` (or prepends a rep of 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from plait.ir import primitives as P
from plait.ir.atoms import Atom
from plait.ir.avals import shaped
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import deflinear
from plait.transforms.transpose import Cotangent, UndefPrimal, transpose_rules
from plait.transforms.transpose_rules import deflinear_transpose
from plait.transforms.vmap import Dim, batching_rules, bdim_to_front, move_axis

Result = tuple[Sequence[Atom], Sequence[Dim]]

for _p in (P.split_p, P.stack_p, P.unstack_p, P.tile_p):
    deflinear(_p)


def _instantiate_all(e: Emitter, cts: Sequence[Atom | Zero]) -> list[Atom]:
    return [e.instantiate(c) for c in cts]


def _split_t(e: Emitter, cts: Sequence[Atom | Zero], x: Any, *, sizes: tuple[int, ...],
             axis: int) -> Sequence[Cotangent]:
    return [e.bind1(P.concatenate_p, *_instantiate_all(e, cts), dimension=axis)]


def _unstack_t(e: Emitter, cts: Sequence[Atom | Zero], x: Any, *,
               axis: int) -> Sequence[Cotangent]:
    return [e.bind1(P.stack_p, *_instantiate_all(e, cts), axis=axis)]


transpose_rules[P.split_p] = _split_t
transpose_rules[P.unstack_p] = _unstack_t


def _stack_t(e: Emitter, ct: Atom, *xs: Any, axis: int) -> Sequence[Cotangent]:
    parts = e.bind(P.unstack_p, ct, axis=axis)
    return [p if type(x) is UndefPrimal else None for p, x in zip(parts, xs)]


def _tile_t(e: Emitter, ct: Atom, x: Any, *, reps: tuple[int, ...]) -> Sequence[Cotangent]:
    shape = shaped(x.aval).shape
    apart = e.reshape(ct, [d for r, s in zip(reps, shape) for d in (r, s)])
    return [e.reduce_sum(apart, range(0, 2 * len(shape), 2))]


deflinear_transpose(P.stack_p, _stack_t)
deflinear_transpose(P.tile_p, _tile_t)


def _batch_split(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                 sizes: tuple[int, ...], axis: int) -> Result:
    x = move_axis(e, vals[0], cast(int, dims[0]), 0)
    return e.bind(P.split_p, x, sizes=sizes, axis=axis + 1), [0] * len(sizes)


def _batch_stack(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                 axis: int) -> Result:
    xs = [bdim_to_front(e, x, d, size) for x, d in zip(vals, dims)]
    return e.bind(P.stack_p, *xs, axis=axis + 1), [0]


def _batch_unstack(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                   axis: int) -> Result:
    x = move_axis(e, vals[0], cast(int, dims[0]), 0)
    outs = e.bind(P.unstack_p, x, axis=axis + 1)
    return outs, [0] * len(outs)


def _batch_tile(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
                reps: tuple[int, ...]) -> Result:
    x = move_axis(e, vals[0], cast(int, dims[0]), 0)
    return e.bind(P.tile_p, x, reps=(1, *reps)), [0]


batching_rules[P.split_p] = _batch_split
batching_rules[P.stack_p] = _batch_stack
batching_rules[P.unstack_p] = _batch_unstack
batching_rules[P.tile_p] = _batch_tile

"""JVP and batching rules of the PRNG key primitives and ``threefry2x32``, as JAX 0.10.2
defines them: none is differentiable (zero tangents; keys' tangents are float0), and all
work on keys of any shape, so a batch of keys maps to a batch of results.
``random_wrap`` moves the batch dimension first, away from the key data dimension."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from plait.ir import primitives as P
from plait.ir.atoms import Atom
from plait.transforms.batching_rules import defbroadcasting, defvectorized
from plait.transforms.emit import Emitter
from plait.transforms.jvp import defjvp_zero
from plait.transforms.vmap import Dim, batching_rules, move_axis

for _p in (P.random_seed_p, P.random_wrap_p, P.random_unwrap_p, P.random_split_p,
           P.random_fold_in_p, P.random_bits_p, P.random_clone_p, P.threefry2x32_p):
    defjvp_zero(_p)

for _p in (P.random_seed_p, P.random_unwrap_p, P.random_split_p, P.random_bits_p,
           P.random_clone_p):
    defvectorized(_p)
for _p in (P.random_fold_in_p, P.threefry2x32_p):
    defbroadcasting(_p)


def _batch_wrap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim],
                **params: Any) -> tuple[Sequence[Atom], Sequence[Dim]]:
    data = move_axis(e, vals[0], cast(int, dims[0]), 0)
    return e.bind(P.random_wrap_p, data, **params), [0]


batching_rules[P.random_wrap_p] = _batch_wrap

"""Reference rules of ``split``, ``stack``, ``unstack`` and ``tile``."""

from __future__ import annotations

import numpy as np

from plait.ir import primitives as P
from plait.ir.interpreter import impl_rules
from plait.ir.reference.elementwise import _def


def _split(x: np.ndarray, *, sizes: tuple[int, ...], axis: int) -> tuple[np.ndarray, ...]:
    return tuple(np.split(x, np.cumsum(sizes)[:-1].astype(int), axis=axis))


def _unstack(x: np.ndarray, *, axis: int) -> tuple[np.ndarray, ...]:
    return tuple(np.moveaxis(x, axis, 0))


impl_rules[P.split_p] = _split
impl_rules[P.unstack_p] = _unstack
_def(P.stack_p, lambda *xs, axis: np.stack(xs, axis=axis))
_def(P.tile_p, lambda x, *, reps: np.tile(x, reps) if x.ndim else np.asarray(x))

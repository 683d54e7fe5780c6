"""``bitcast_convert_type``, ``reduce_precision``, ``mulhi``, ``optimization_barrier``,
``rng_bit_generator`` and ``rng_uniform``, with ``jax.lax``'s signatures."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import bind1, bind_n
from plait.frontend.core.tree_util import tree_flatten, tree_unflatten
from plait.frontend.lax.ops import _operands
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.primitives.rng import RNG_BIT_DTYPES, RandomAlgorithm

__all__ = ["bitcast_convert_type", "reduce_precision", "mulhi", "optimization_barrier",
           "rng_bit_generator", "rng_uniform", "RandomAlgorithm"]


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Array:
    """The bits of ``operand`` read as ``new_dtype`` (canonicalized).

    To a narrower dtype, a trailing dimension of ``old_bits // new_bits`` is added;
    to a wider one, the trailing dimension, which must hold ``new_bits // old_bits``
    elements, is removed.  Bool and complex operands only convert to their own dtype.
    """
    return bind1(P.bitcast_convert_type_p, *_operands("bitcast_convert_type", operand),
                 new_dtype=dt.canonicalize(new_dtype))


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Array:
    """``operand`` rounded as if to a float with ``exponent_bits`` and ``mantissa_bits``
    (XLA's ``ReducePrecision``: round to nearest even, overflow to infinity, values
    below the reduced normal range flushed to zero, NaNs kept)."""
    return bind1(P.reduce_precision_p, *_operands("reduce_precision", operand),
                 exponent_bits=operator.index(exponent_bits),
                 mantissa_bits=operator.index(mantissa_bits))


def mulhi(x: Any, y: Any, /) -> Array:
    """The high half of the double-width product of two integer arrays."""
    return bind1(P.mulhi_p, *_operands("mulhi", x, y))


def optimization_barrier(operand: Any, /) -> Any:
    """``operand`` (any pytree of arrays) unchanged, through a barrier that the compiler
    may not move computations across, fuse through, or deduplicate."""
    leaves, tree = tree_flatten(operand)
    if not leaves:
        return tree_unflatten(tree, [])
    return tree_unflatten(tree, list(bind_n(P.optimization_barrier_p, *leaves)))


def rng_bit_generator(key: Any, shape: Sequence[int], dtype: Any = np.uint32,
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding: None = None) -> tuple[Array, Array]:
    """XLA's stateless ``RngBitGenerator``: the next key and ``shape`` random unsigned
    integers of ``dtype`` from ``key`` (``uint32[4]``), by ``algorithm``.  The results
    equal JAX's on CPU bit for bit."""
    shape = tuple(operator.index(d) for d in shape)
    d = dt.canonicalize(dtype)
    if d not in RNG_BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {d}")
    if out_sharding is not None:
        raise TypeError(f"rng_bit_generator: expected out_sharding=None (plait has no "
                        f"shardings), but got {out_sharding!r}")
    new_key, bits = bind_n(P.rng_bit_generator_p, key, shape=shape, dtype=d,
                           algorithm=RandomAlgorithm(algorithm), out_sharding=None)
    return new_key, bits


def rng_uniform(a: Any, b: Any, shape: Sequence[int]) -> Array:
    """XLA's stateful ``Rng``: ``shape`` values uniform in ``[a, b)`` (scalars of one
    dtype), from a seed XLA picks: not reproducible, and not equal to JAX's."""
    return bind1(P.rng_uniform_p, *_operands("rng_uniform", a, b),
                 shape=tuple(operator.index(d) for d in shape))

"""Random bits, as JAX 0.10.2's primitives:

- ``rng_bit_generator(key)`` is XLA's stateless ``RngBitGenerator``: from a key
  (``uint32[4]``, or ``uint64[2]`` with x64) it returns the next key and an
  array of ``shape`` random unsigned integers of ``dtype``, made by the
  ``algorithm`` (:class:`RandomAlgorithm`; the default is Philox on CPU).
- ``rng_uniform(a, b)`` is XLA's stateful ``Rng``: ``shape`` values uniform in
  ``[a, b)``, from a seed XLA picks per compilation (not reproducible).
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_dtype, decode_ints, decode_none
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import check_same_dtypes, fail

__all__ = ["RandomAlgorithm", "rng_bit_generator_p", "rng_uniform_p", "RNG_BIT_DTYPES",
           "RNG_UNIFORM_DTYPES"]


class RandomAlgorithm(enum.IntEnum):
    """Which algorithm ``rng_bit_generator`` uses (printed by name, as JAX prints it)."""

    RNG_DEFAULT = 0
    """The platform's default (Philox on CPU)."""
    RNG_THREE_FRY = 1
    """Threefry-2x32."""
    RNG_PHILOX = 2
    """Philox-4x32."""

    def __str__(self) -> str:
        return self.name


def _decode_algorithm(value: Any) -> RandomAlgorithm:
    if isinstance(value, str) and value in RandomAlgorithm.__members__:
        return RandomAlgorithm[value]
    if type(value) is int or isinstance(value, RandomAlgorithm):
        try:
            return RandomAlgorithm(value)
        except ValueError:
            pass
    raise ValueError(f"expected a RandomAlgorithm ({', '.join(RandomAlgorithm.__members__)}), "
                     f"but got {value!r}")


RNG_BIT_DTYPES = frozenset({dt.uint8, dt.uint16, dt.uint32, dt.uint64})
"""The dtypes ``rng_bit_generator`` makes (those of ``jax.lax.rng_bit_generator``)."""
RNG_UNIFORM_DTYPES = frozenset({dt.float16, dt.bfloat16, dt.float32, dt.float64, dt.int32,
                                dt.uint32, dt.int64, dt.uint64})
"""The dtypes XLA's CPU compiler takes for ``rng_uniform`` (it aborts on narrower integers)."""


def _check_shape(shape: Any) -> tuple[int, ...]:
    if not isinstance(shape, tuple) or any(type(d) is not int or d < 0 for d in shape):
        fail(f"expected a shape of non-negative ints, but got {shape!r}")
    return shape


def _rng_bit_generator_rule(key: ShapedArray, *, shape: tuple[int, ...], dtype: np.dtype[Any],
                            algorithm: RandomAlgorithm,
                            out_sharding: None) -> tuple[ShapedArray, ...]:
    if (key.shape, key.dtype) not in (((4,), dt.uint32), ((2,), dt.uint64)):
        fail(f"expected a u32[4] or u64[2] key, but got {key.str_short()}")
    if dtype not in RNG_BIT_DTYPES:
        fail(f"expected dtype uint8, uint16, uint32 or uint64, but got {dtype!r}")
    if not isinstance(algorithm, RandomAlgorithm):
        fail(f"expected a RandomAlgorithm, but got {algorithm!r}")
    return (key, ShapedArray(_check_shape(shape), dtype))


rng_bit_generator_p = Primitive("rng_bit_generator", _rng_bit_generator_rule, (
    ParamDef("algorithm", RandomAlgorithm.RNG_DEFAULT, decode=_decode_algorithm),
    ParamDef("dtype", dt.uint32, decode=decode_dtype),
    ParamDef("out_sharding", None, decode=decode_none),
    ParamDef("shape", decode=decode_ints)), multiple_results=True)


def _rng_uniform_rule(a: ShapedArray, b: ShapedArray, *,
                      shape: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    check_same_dtypes([a, b])
    if a.shape or b.shape:
        fail(f"expected scalar bounds, but got {a.str_short()} and {b.str_short()}")
    if a.dtype not in RNG_UNIFORM_DTYPES:
        fail("expected a float or a 32- or 64-bit integer dtype for the bounds, but got "
             f"{a.str_short()}")
    return (ShapedArray(_check_shape(shape), a.dtype, a.weak_type and b.weak_type),)


rng_uniform_p = Primitive("rng_uniform", _rng_uniform_rule,
                          (ParamDef("shape", decode=decode_ints),))

"""Typed PRNG keys and the threefry hash, as JAX 0.10.2's primitives.

A typed key array has the dtype ``key<fry>`` (:func:`plait.ir.dtypes.key_dtype`):
each element is one key, whose data are two ``uint32`` words.  Its primitives
work on keys of any shape (a batch of keys maps to a batch of results):

- ``random_seed[impl=fry](seeds)``: one key per integer seed;
- ``random_wrap[impl=fry](data)`` and ``random_unwrap(keys)``: between key data
  (``u32[..., 2]``) and typed keys, at no cost;
- ``random_split[shape=(2,)](keys)``: ``shape`` new keys per key;
- ``random_fold_in(keys, msgs)``: a key per key and ``uint32`` message
  (broadcasting);
- ``random_bits[bit_width=32 shape=(3,)](keys)``: random unsigned integers;
- ``random_clone(keys)``: the same keys (JAX's marker for reuse);
- ``threefry2x32(k1, k2, x1, x2)``: the Threefry-2x32 block cipher of two 32-bit
  counter words under a two-word key, elementwise with broadcasting.

The key primitives are defined by the implementation's functions over key data
(:mod:`plait.ir.decompositions`, registered by the frontend): to run them, the
physicalizing rewrite (:mod:`plait.transforms.physicalize`) replaces key arrays by
their data and the key primitives by those functions.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.params import ParamDef, decode_int, decode_ints
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import broadcast_shapes, fail

__all__ = ["PRNGImpl", "random_seed_p", "random_wrap_p", "random_unwrap_p", "random_split_p",
           "random_fold_in_p", "random_bits_p", "random_clone_p", "threefry2x32_p",
           "KEY_FRY"]


class PRNGImpl(enum.Enum):
    """A PRNG implementation, printed by its tag as JAX prints it (``impl=fry``)."""

    THREEFRY2X32 = "fry"
    """Threefry-2x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"), JAX's
    default."""

    def __str__(self) -> str:
        return self.value

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of this implementation's typed keys (``key<fry>``)."""
        return dt.key_dtype(self.value)

    @property
    def impl_name(self) -> str:
        """The implementation's name as JAX spells it (``threefry2x32``)."""
        return self.name.lower()


KEY_FRY = PRNGImpl.THREEFRY2X32.dtype
"""The dtype of threefry2x32 keys, ``key<fry>``."""


def impl_of(dtype: np.dtype[Any]) -> PRNGImpl:
    """The implementation whose keys have ``dtype``."""
    return PRNGImpl(dt.key_tag(dtype))


def _decode_impl(value: Any) -> PRNGImpl:
    if isinstance(value, PRNGImpl):
        return value
    for impl in PRNGImpl:
        if value in (impl.value, impl.impl_name):
            return impl
    raise ValueError(f"expected a PRNG implementation ({', '.join(i.value for i in PRNGImpl)}), "
                     f"but got {value!r}")


_IMPL = ParamDef("impl", decode=_decode_impl)


def _check_keys(keys: ShapedArray, what: str = "operand") -> None:
    if not dt.is_key(keys.dtype):
        fail(f"expected a typed key array (key<fry>) as {what}, but got {keys.str_short()}")


def _seed_rule(seeds: ShapedArray, *, impl: PRNGImpl) -> tuple[ShapedArray, ...]:
    if not dt.is_integer(seeds.dtype):
        fail(f"expected integer seeds, but got {seeds.str_short()}")
    return (ShapedArray(seeds.shape, impl.dtype),)


def _wrap_rule(data: ShapedArray, *, impl: PRNGImpl) -> tuple[ShapedArray, ...]:
    if data.dtype != dt.uint32 or data.shape[-1:] != dt.KEY_SHAPE:
        fail(f"expected key data of dtype uint32 whose shape ends with {dt.KEY_SHAPE}, but got "
             f"{data.str_short()}")
    return (ShapedArray(data.shape[:-1], impl.dtype),)


def _unwrap_rule(keys: ShapedArray) -> tuple[ShapedArray, ...]:
    _check_keys(keys)
    return (ShapedArray(keys.shape + dt.KEY_SHAPE, dt.uint32),)


def _split_rule(keys: ShapedArray, *, shape: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    _check_keys(keys)
    return (ShapedArray(keys.shape + shape, keys.dtype),)


def _fold_in_rule(keys: ShapedArray, msgs: ShapedArray) -> tuple[ShapedArray, ...]:
    _check_keys(keys, "first operand")
    if msgs.dtype != dt.uint32:
        fail(f"expected uint32 messages, but got {msgs.str_short()}")
    return (ShapedArray(broadcast_shapes([keys, msgs]), keys.dtype),)


_BIT_WIDTHS: dict[int, np.dtype[Any]] = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}


def _bits_rule(keys: ShapedArray, *, bit_width: int,
               shape: tuple[int, ...]) -> tuple[ShapedArray, ...]:
    _check_keys(keys)
    if bit_width not in _BIT_WIDTHS:
        fail(f"expected a bit width of 8, 16, 32 or 64, but got {bit_width!r}")
    return (ShapedArray(keys.shape + shape, _BIT_WIDTHS[bit_width]),)


def _clone_rule(keys: ShapedArray) -> tuple[ShapedArray, ...]:
    _check_keys(keys)
    return (keys,)


def _threefry_rule(*args: ShapedArray) -> tuple[ShapedArray, ...]:
    if any(a.dtype != dt.uint32 for a in args):
        fail("expected uint32 operands, but got "
             + ", ".join(a.str_short() for a in args))
    out = ShapedArray(broadcast_shapes(args), dt.uint32)
    return (out, out)


random_seed_p = Primitive("random_seed", _seed_rule, (_IMPL,))
random_wrap_p = Primitive("random_wrap", _wrap_rule, (_IMPL,))
random_unwrap_p = Primitive("random_unwrap", _unwrap_rule)
random_split_p = Primitive("random_split", _split_rule, (ParamDef("shape", decode=decode_ints),))
random_fold_in_p = Primitive("random_fold_in", _fold_in_rule)
random_bits_p = Primitive("random_bits", _bits_rule, (
    ParamDef("bit_width", decode=decode_int), ParamDef("shape", decode=decode_ints)))
random_clone_p = Primitive("random_clone", _clone_rule)
threefry2x32_p = Primitive("threefry2x32", _threefry_rule, multiple_results=True)

"""Typed PRNG keys and the threefry hash, as JAX 0.10.2's primitives.

A typed key array has the dtype of its implementation (:class:`PRNGImpl`):
``key<fry>`` (threefry2x32: each key's data are two ``uint32`` words), ``key<rbg>``
or ``key<urbg>`` (rbg and unsafe_rbg: four words; :func:`plait.ir.dtypes.key_dtype`).
Its primitives work on keys of any shape (a batch of keys maps to a batch of results):

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

``random_split`` and ``random_bits`` carry ``partitionable`` (printed only when
``False``): the ``jax_threefry_partitionable`` option at trace time, which selects how
threefry (and rbg's split) numbers its counters.  JAX reads the option when it lowers
the program instead; recording it here keeps a program's bits fixed once traced, and
makes programs traced in the two modes differ, so no cache confuses them.

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
from plait.ir.params import ParamDef, decode_bool, decode_int, decode_ints
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import broadcast_shapes, fail

__all__ = ["PRNGImpl", "random_seed_p", "random_wrap_p", "random_unwrap_p", "random_split_p",
           "random_fold_in_p", "random_bits_p", "random_clone_p", "threefry2x32_p",
           "KEY_FRY", "KEY_DTYPES", "impl_of"]


class PRNGImpl(enum.Enum):
    """A PRNG implementation, printed by its tag as JAX prints it (``impl=fry``)."""

    THREEFRY2X32 = "fry"
    """Threefry-2x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"), JAX's
    default."""
    RBG = "rbg"
    """XLA's ``RngBitGenerator`` for bits, threefry on each half of the key to split and
    fold in."""
    UNSAFE_RBG = "urbg"
    """``RngBitGenerator`` for bits and, cheaper but without guarantees, to split and fold
    in."""

    def __str__(self) -> str:
        return self.value

    @property
    def key_shape(self) -> tuple[int, ...]:
        """The shape of one key's data: ``(2,)`` ``uint32`` words, ``(4,)`` for rbg's."""
        return dt.KEY_SHAPE if self is PRNGImpl.THREEFRY2X32 else (4,)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of this implementation's typed keys (``key<fry>``)."""
        return dt.key_dtype(self.value, self.key_shape)

    @property
    def impl_name(self) -> str:
        """The implementation's name as JAX spells it (``threefry2x32``)."""
        return self.name.lower()


KEY_FRY = PRNGImpl.THREEFRY2X32.dtype
"""The dtype of threefry2x32 keys, ``key<fry>``."""
KEY_DTYPES: dict[PRNGImpl, np.dtype[Any]] = {impl: impl.dtype for impl in PRNGImpl}
"""Every implementation's key dtype (made here, so that the parser knows their names)."""


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
        fail(f"expected a typed key array (key<fry>, key<rbg>...) as {what}, but got "
             f"{keys.str_short()}")


def _seed_rule(seeds: ShapedArray, *, impl: PRNGImpl) -> tuple[ShapedArray, ...]:
    if not dt.is_integer(seeds.dtype):
        fail(f"expected integer seeds, but got {seeds.str_short()}")
    return (ShapedArray(seeds.shape, impl.dtype),)


def _wrap_rule(data: ShapedArray, *, impl: PRNGImpl) -> tuple[ShapedArray, ...]:
    if data.dtype != dt.uint32 or data.shape[-1:] != impl.key_shape:
        fail(f"expected key data of dtype uint32 whose shape ends with {impl.key_shape}, but "
             f"got {data.str_short()}")
    return (ShapedArray(data.shape[:-1], impl.dtype),)


def _unwrap_rule(keys: ShapedArray) -> tuple[ShapedArray, ...]:
    _check_keys(keys)
    return (ShapedArray(keys.shape + dt.key_shape(keys.dtype), dt.uint32),)


def _split_rule(keys: ShapedArray, *, shape: tuple[int, ...],
                partitionable: bool) -> tuple[ShapedArray, ...]:
    _check_keys(keys)
    return (ShapedArray(keys.shape + shape, keys.dtype),)


def _fold_in_rule(keys: ShapedArray, msgs: ShapedArray) -> tuple[ShapedArray, ...]:
    _check_keys(keys, "first operand")
    if msgs.dtype != dt.uint32:
        fail(f"expected uint32 messages, but got {msgs.str_short()}")
    return (ShapedArray(broadcast_shapes([keys, msgs]), keys.dtype),)


_BIT_WIDTHS: dict[int, np.dtype[Any]] = {8: dt.uint8, 16: dt.uint16, 32: dt.uint32, 64: dt.uint64}


def _bits_rule(keys: ShapedArray, *, bit_width: int, shape: tuple[int, ...],
               partitionable: bool) -> tuple[ShapedArray, ...]:
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
_PARTITIONABLE = ParamDef("partitionable", True, show="nondefault", decode=decode_bool)
random_split_p = Primitive("random_split", _split_rule, (ParamDef("shape", decode=decode_ints),
                                                         _PARTITIONABLE))
random_fold_in_p = Primitive("random_fold_in", _fold_in_rule)
random_bits_p = Primitive("random_bits", _bits_rule, (
    ParamDef("bit_width", decode=decode_int), ParamDef("shape", decode=decode_ints),
    _PARTITIONABLE))
random_clone_p = Primitive("random_clone", _clone_rule)
threefry2x32_p = Primitive("threefry2x32", _threefry_rule, multiple_results=True)

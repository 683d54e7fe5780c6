"""The emitter: how transformation rules write IR.

Rules never call the NumPy namespace; they emit equations through a
:class:`~plait.ir.Builder`, with the typed helpers of :class:`Emitter` for the
operations rules need most.  Operands are atoms (``Var`` or ``Literal``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, final

import numpy as np

from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractValue, ShapedArray, shaped
from plait.ir.builder import Builder
from plait.ir.primitive import Primitive
from plait.ir.primitives.random import impl_of
from plait.ir.sharding import NamedSharding, PartitionSpec

__all__ = ["Emitter", "Zero", "is_zero", "target_sharding"]


@final
class Zero:
    """A symbolic zero of a given type: no equation computes it."""

    __slots__ = ("aval",)

    def __init__(self, aval: AbstractValue) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


def is_zero(x: object) -> bool:
    """Whether ``x`` is a symbolic :class:`Zero`."""
    return type(x) is Zero


def target_sharding(aval: ShapedArray, *others: AbstractValue) -> NamedSharding | None:
    """The sharding to ask for a result of ``aval``'s type: its own, or replicated over
    the mesh of ``others``' (if some is sharded), else ``None``."""
    if aval.explicit_sharding is not None:
        return aval.explicit_sharding
    for o in others:
        if type(o) is ShapedArray and o.explicit_sharding is not None:
            return NamedSharding(o.explicit_sharding.mesh, PartitionSpec())
    return None


class Emitter:
    """Typed helpers over a :class:`Builder`; rules receive one."""

    __slots__ = ("builder",)

    def __init__(self, builder: Builder | None = None) -> None:
        self.builder = builder if builder is not None else Builder()

    # -- generic -------------------------------------------------------------
    def bind(self, prim: Primitive, *args: Atom, **params: Any) -> list[Var]:
        """Emit ``prim`` and return all its outputs."""
        return list(self.builder.bind(prim, args, params))

    def bind1(self, prim: Primitive, *args: Atom, **params: Any) -> Var:
        """Emit a single-result ``prim``."""
        return self.builder.bind(prim, args, params)[0]

    # -- constants -----------------------------------------------------------
    def literal(self, value: Any, dtype: np.dtype[Any], weak: bool = False) -> Literal:
        """A scalar literal of ``dtype``."""
        if dtype == dt.bool_:
            v: Any = bool(value)
        elif dt.is_integer(dtype):
            v = int(value)
        elif dt.is_complex(dtype):
            v = complex(value)
        elif dtype == dt.float0:
            v = False  # (float0's one value)
        else:
            v = float(value)
        return Literal(v, ShapedArray((), dtype, weak))

    def full(self, aval: ShapedArray, value: Any) -> Atom:
        """An array of type ``aval`` filled with ``value``."""
        lit = self.literal(value, aval.dtype, aval.weak_type)
        if not aval.shape:
            return lit
        return self.broadcast_in_dim(lit, aval.shape, ())

    def zeros(self, aval: AbstractValue) -> Atom:
        """Zeros of type ``aval``; for a key type, keys whose data is zeros (a
        placeholder, such as an unfilled checkify payload)."""
        aval = shaped(aval)
        if aval.dtype == dt.float0:
            raise TypeError("cannot materialize float0 zeros")
        if dt.is_key(aval.dtype):
            data = self.full(ShapedArray(aval.shape + dt.key_shape(aval.dtype), dt.uint32), 0)
            return self.bind1(P.random_wrap_p, data, impl=impl_of(aval.dtype))
        return self.full(aval, 0)

    def instantiate(self, x: Atom | Zero) -> Atom:
        """``x``, with a symbolic zero materialized."""
        return self.zeros(x.aval) if type(x) is Zero else x

    # -- elementwise ---------------------------------------------------------
    def add(self, x: Atom, y: Atom) -> Var:
        """``x + y``."""
        return self.bind1(P.add_p, x, y)

    def add_any(self, x: Atom, y: Atom) -> Var:
        """Accumulate two cotangents (``add_any``)."""
        return self.bind1(P.add_any_p, x, y)

    def like_sharding(self, x: Atom, target: AbstractValue) -> Atom:
        """``x`` resharded to the sharding in ``target``'s type, if that differs (a
        cotangent takes its primal's sharding, as in JAX)."""
        a, t = x.aval, target
        if type(a) is not ShapedArray or type(t) is not ShapedArray or \
                a.explicit_sharding is t.explicit_sharding or a.shape != t.shape:
            return x
        dst = target_sharding(t, a)
        return x if dst is None else self.bind1(P.reshard_p, x, dst_sharding=dst)

    def sub(self, x: Atom, y: Atom) -> Var:
        """``x - y``."""
        return self.bind1(P.sub_p, x, y)

    def mul(self, x: Atom, y: Atom) -> Var:
        """``x * y``."""
        return self.bind1(P.mul_p, x, y)

    def div(self, x: Atom, y: Atom) -> Var:
        """``x / y``."""
        return self.bind1(P.div_p, x, y)

    def neg(self, x: Atom) -> Var:
        """``-x``."""
        return self.bind1(P.neg_p, x)

    def unary(self, prim: Primitive, x: Atom, **params: Any) -> Var:
        """A unary primitive with its default params."""
        return self.bind1(prim, x, **params)

    def conj(self, x: Atom) -> Var:
        """The complex conjugate of ``x`` (``input_dtype`` its dtype)."""
        return self.bind1(P.conj_p, x, input_dtype=shaped(x.aval).dtype)

    def select_n(self, which: Atom, *cases: Atom) -> Var:
        """``cases[which]`` elementwise."""
        return self.bind1(P.select_n_p, which, *cases)

    def convert(self, x: Atom, dtype: np.dtype[Any], weak: bool = False) -> Atom:
        """``x`` cast to ``dtype`` (no equation when the type already matches)."""
        a = shaped(x.aval)
        if a.dtype == dtype and a.weak_type == weak:
            return x
        return self.bind1(P.convert_element_type_p, x, new_dtype=dtype, weak_type=weak,
                          sharding=None)

    def to_dtype(self, x: Atom, dtype: np.dtype[Any]) -> Atom:
        """``x`` in ``dtype``: itself (weak type kept) when it has it already."""
        return x if shaped(x.aval).dtype == dtype else self.convert(x, dtype)

    def scalar_like(self, x: Atom, value: Any) -> Literal:
        """A scalar literal of ``x``'s dtype."""
        a = shaped(x.aval)
        return self.literal(value, a.dtype, a.weak_type)

    # -- structure -----------------------------------------------------------
    def broadcast_in_dim(self, x: Atom, shape: Sequence[int], dims: Sequence[int]) -> Var:
        """``broadcast_in_dim``."""
        return self.bind1(P.broadcast_in_dim_p, x, shape=tuple(shape),
                          broadcast_dimensions=tuple(dims), sharding=None)

    def broadcast_to(self, x: Atom, shape: Sequence[int]) -> Atom:
        """``x`` (rank 0, or same rank with size-1 dims) broadcast to ``shape``."""
        a = shaped(x.aval)
        if a.shape == tuple(shape):
            return x
        dims = () if a.ndim == 0 else tuple(range(len(shape)))
        return self.broadcast_in_dim(x, shape, dims)

    def reduce_sum(self, x: Atom, axes: Sequence[int]) -> Atom:
        """Sum over ``axes`` (no equation for no axes)."""
        if not axes:
            return x
        return self.bind1(P.reduce_sum_p, x, axes=tuple(axes), out_sharding=None)

    def reshape(self, x: Atom, shape: Sequence[int]) -> Atom:
        """``x`` reshaped (no equation when the shape already matches)."""
        if shaped(x.aval).shape == tuple(shape):
            return x
        return self.bind1(P.reshape_p, x, new_sizes=tuple(shape), dimensions=None, sharding=None)

    def transpose(self, x: Atom, perm: Sequence[int]) -> Atom:
        """``x`` with dimensions permuted (no equation for the identity)."""
        if tuple(perm) == tuple(range(len(perm))):
            return x
        return self.bind1(P.transpose_p, x, permutation=tuple(perm))

    def unbroadcast(self, x: Atom, aval: ShapedArray) -> Atom:
        """Sum ``x`` down to ``aval``'s shape: undo rank-0/size-1 broadcasting."""
        xa = shaped(x.aval)
        if xa.shape == aval.shape:
            return self.convert(x, aval.dtype, aval.weak_type) if xa.dtype != aval.dtype else x
        if aval.ndim == 0:
            out = self.reduce_sum(x, range(xa.ndim))
        else:
            axes = [i for i, (a, b) in enumerate(zip(aval.shape, xa.shape)) if a == 1 and b != 1]
            out = self.reshape(self.reduce_sum(x, axes), aval.shape)
        return self.convert(out, aval.dtype, aval.weak_type) if xa.dtype != aval.dtype else out

    def dot_general(self, x: Atom, y: Atom, dims: Any, preferred: Any = None,
                    precision: Any = None, out_sharding: NamedSharding | None = None) -> Var:
        """``dot_general`` (with default precision unless given)."""
        return self.bind1(P.dot_general_p, x, y, dimension_numbers=dims, precision=precision,
                          preferred_element_type=preferred, out_sharding=out_sharding)

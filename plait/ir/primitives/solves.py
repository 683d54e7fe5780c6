"""``custom_linear_solve``: a linear solve whose derivatives are solves too.

The equation carries four jaxprs, each taking its own constants then the
vector ``b`` (a flat list of arrays): ``matvec`` (the operator ``A``),
``vecmat`` (its transpose), ``solve`` (``b -> A⁻¹ b``) and ``transpose_solve``
(``b -> A⁻ᵀ b``).  Its value is ``solve``'s; its JVP solves again (implicit
differentiation through ``matvec``, never through ``solve``), and its transpose
is the same equation with the roles swapped, so reverse mode needs
``transpose_solve``.  ``vecmat`` and ``transpose_solve`` are ``None`` when the
user gave no transpose solve.
"""

from __future__ import annotations

from typing import Any, Generic, NamedTuple, TypeVar

from plait.ir.avals import AbstractValue, shaped
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.params import ParamDef, ParsedCall
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail

__all__ = ["LinearSolveTuple", "custom_linear_solve_p"]

T = TypeVar("T")

_FIELDS = ("matvec", "vecmat", "solve", "transpose_solve")


class LinearSolveTuple(NamedTuple, Generic[T]):
    """One entry per function of a ``custom_linear_solve`` (JAX's ``_LinearSolveTuple``):
    their constant counts in ``const_lengths``, their jaxprs in ``jaxprs``."""

    matvec: T
    """``x -> A x``."""
    vecmat: T
    """``x -> Aᵀ x`` (``None`` among the jaxprs when there is no ``transpose_solve``)."""
    solve: T
    """``b -> A⁻¹ b``, and any auxiliary outputs after it."""
    transpose_solve: T
    """``b -> A⁻ᵀ b``, or ``None``."""

    def transpose(self) -> LinearSolveTuple[T]:
        """The entries of the transposed system: ``A`` and ``Aᵀ`` swapped."""
        return LinearSolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _encode(value: LinearSolveTuple[Any]) -> str:
    # JAX prints the namedtuple, each jaxpr as str() of its own (fresh names, own lets).
    return "_LinearSolveTuple(" + ", ".join(f"{k}={v}" for k, v in zip(_FIELDS, value)) + ")"


def _decode(check: Any) -> Any:
    def decode(value: Any) -> LinearSolveTuple[Any]:
        if isinstance(value, LinearSolveTuple):
            return value
        if (not isinstance(value, ParsedCall) or value.name != "_LinearSolveTuple"
                or tuple(k for k, _ in value.kwargs) != _FIELDS):
            raise ValueError(f"expected _LinearSolveTuple({'=..., '.join(_FIELDS)}=...), "
                             f"but got {value!r}")
        return LinearSolveTuple(*(check(v) for _, v in value.kwargs))
    return decode


def _count(v: Any) -> int:
    if type(v) is not int or v < 0:
        raise ValueError(f"expected a non-negative int, but got {v!r}")
    return v


def _optional_jaxpr(v: Any) -> ClosedJaxpr | None:
    if v is not None and not isinstance(v, ClosedJaxpr):
        raise ValueError(f"expected a jaxpr or None, but got {v!r}")
    return v


def _types(avals: Any) -> str:
    return "(" + ", ".join(shaped(a).str_short() for a in avals) + ")"


def _same(a: AbstractValue, b: AbstractValue) -> bool:
    return shaped(a).strip_weak_type() is shaped(b).strip_weak_type()


def _rule(*avals: AbstractValue, const_lengths: LinearSolveTuple[int],
          jaxprs: LinearSolveTuple[ClosedJaxpr | None]) -> tuple[AbstractValue, ...]:
    if jaxprs.solve is None or jaxprs.matvec is None:
        fail("expected matvec and solve jaxprs, but got None")
    if (jaxprs.vecmat is None) != (jaxprs.transpose_solve is None):
        fail("expected vecmat and transpose_solve both given or both None")
    n_consts = sum(const_lengths)
    if len(avals) <= n_consts:
        fail(f"expected more than {n_consts} operands (the constants, then b), "
             f"but got {len(avals)}")
    b = avals[n_consts:]
    start = 0
    for name, n, j in zip(_FIELDS, const_lengths, jaxprs):
        consts = avals[start:start + n]
        start += n
        if j is None:
            if n:
                fail(f"expected no constants for the missing {name}, but got {n}")
            continue
        want = list(consts) + list(b)
        if len(j.in_avals) != len(want) or not all(map(_same, j.in_avals, want)):
            fail(f"expected {name} to take {_types(want)}, but it takes {_types(j.in_avals)}")
        outs = j.out_avals[:len(b)]
        if len(j.out_avals) < len(b) or not all(map(_same, outs, b)):
            fail(f"expected {name} to return b's types {_types(b)}, "
                 f"but it returns {_types(j.out_avals)}")
    n_aux = len(jaxprs.solve.out_avals) - len(b)
    return tuple(b) + tuple(jaxprs.solve.out_avals[len(b):len(b) + n_aux])


custom_linear_solve_p = Primitive("custom_linear_solve", _rule, (
    ParamDef("const_lengths", decode=_decode(_count), encode=_encode),
    ParamDef("jaxprs", decode=_decode(_optional_jaxpr), encode=_encode),
), multiple_results=True)
"""Operands: each function's constants (in field order), then ``b``; results: ``x``,
then ``solve``'s auxiliary outputs."""

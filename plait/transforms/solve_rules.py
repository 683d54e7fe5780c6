"""JVP, transpose and batching of ``custom_linear_solve``.

The JVP differentiates ``A x = b`` implicitly: ``A ẋ = ḃ - Ȧ x``, one more
solve, with ``Ȧ x`` the tangent of ``matvec`` in its constants (``solve`` itself
is never differentiated).  The tangent solve is linear in its right-hand side;
its transpose solves the transposed system.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from plait.ir import primitives as P
from plait.ir.atoms import Atom, Var
from plait.ir.errors import MissingTransposeError, TransformError
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives import LinearSolveTuple
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import Tangent, jvp_eqns, jvp_rules, tangent_aval, zero_tangent
from plait.transforms.transpose import Cotangent, UndefPrimal, transpose_rules
from plait.transforms.vmap import Dim, batching_rules, bdim_to_front, vmap_jaxpr

Lengths = LinearSolveTuple[int]
Jaxprs = LinearSolveTuple[ClosedJaxpr | None]
T = TypeVar("T")


def _groups(xs: Sequence[T], const_lengths: Lengths) -> list[list[T]]:
    """The operands split into each function's constants, then ``b``."""
    out, start = [], 0
    for n in const_lengths:
        out.append(list(xs[start:start + n]))
        start += n
    out.append(list(xs[start:]))
    return out


def _minus(e: Emitter, b: Tangent, m: Tangent) -> Tangent:
    if type(m) is Zero:
        return b
    return e.neg(m) if type(b) is Zero else e.sub(b, m)


def _jvp(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent], *,
         const_lengths: Lengths, jaxprs: Jaxprs) -> tuple[list[Atom], list[Tangent]]:
    outs: list[Atom] = list(e.bind(P.custom_linear_solve_p, *primals,
                                   const_lengths=const_lengths, jaxprs=jaxprs))
    n = sum(const_lengths)
    rhs: list[Tangent] = list(tangents[n:])
    x = outs[:len(rhs)]
    mv_dots = tangents[:const_lengths.matvec]
    if any(type(t) is not Zero for t in mv_dots):
        assert jaxprs.matvec is not None
        _, ax = jvp_eqns(e, jaxprs.matvec.jaxpr, jaxprs.matvec.consts,
                         [*primals[:const_lengths.matvec], *x],
                         [*mv_dots, *(Zero(tangent_aval(v.aval)) for v in x)])
        rhs = [_minus(e, b, m) for b, m in zip(rhs, ax)]
    aux_dots: list[Tangent] = [zero_tangent(a) for a in outs[len(x):]]
    if all(type(t) is Zero for t in rhs):
        return outs, [zero_tangent(v) for v in x] + aux_dots
    x_dot = e.bind(P.custom_linear_solve_p, *primals[:n], *(e.instantiate(t) for t in rhs),
                   const_lengths=const_lengths, jaxprs=jaxprs)
    return outs, list(x_dot[:len(x)]) + aux_dots


def _transpose(e: Emitter, cts: Sequence[Atom | Zero], *ins: Atom | UndefPrimal,
               const_lengths: Lengths, jaxprs: Jaxprs) -> Sequence[Cotangent]:
    if jaxprs.transpose_solve is None:
        raise MissingTransposeError(
            "transpose_solve required for backwards mode automatic differentiation of "
            "custom_linear_solve: pass transpose_solve= (or symmetric=True when the "
            "operator is symmetric)")
    n = sum(const_lengths)
    if any(type(x) is UndefPrimal for x in ins[:n]):
        raise TransformError("custom_linear_solve is linear in b only: its operator's "
                             "constants must be known when it is transposed")
    nb = len(ins) - n
    if any(type(c) is not Zero for c in cts[nb:]):
        raise TransformError("derivatives of auxiliary outputs are not supported in "
                             "custom_linear_solve")
    x_cts = cts[:nb]
    if all(type(c) is Zero for c in x_cts):
        return [None] * len(ins)
    consts = [x for x in ins[:n] if type(x) is not UndefPrimal]
    mv, vm, sv, ts, _ = _groups(consts, const_lengths)
    ct_b = e.bind(P.custom_linear_solve_p, *vm, *mv, *ts, *sv, *(e.instantiate(c) for c in x_cts),
                  const_lengths=const_lengths.transpose(), jaxprs=jaxprs.transpose())
    return [None] * n + list(ct_b[:nb])


def _vmap(e: Emitter, size: int, vals: list[Atom], dims: list[Dim], *,
          const_lengths: Lengths, jaxprs: Jaxprs) -> tuple[list[Var], list[Dim]]:
    # Every vector is batched (a batched operator maps unbatched vectors to batched ones);
    # constants keep their batching.
    n = sum(const_lengths)
    consts = [x if d is None else bdim_to_front(e, x, d, size) for x, d in zip(vals[:n], dims)]
    b = [bdim_to_front(e, x, d, size) for x, d in zip(vals[n:], dims[n:])]
    const_dims = _groups([None if d is None else 0 for d in dims[:n]], const_lengths)
    new: list[ClosedJaxpr | None] = []
    for j, cdims in zip(jaxprs, const_dims):
        if j is None:
            new.append(None)
            continue
        in_dims = list(cdims) + [0] * len(b)
        bj = vmap_jaxpr(j.jaxpr, size, in_dims, [0] * len(j.jaxpr.outvars))
        new.append(ClosedJaxpr(bj, j.consts))
    outs = e.bind(P.custom_linear_solve_p, *consts, *b, const_lengths=const_lengths,
                  jaxprs=LinearSolveTuple(*new))
    return outs, [0] * len(outs)


jvp_rules[P.custom_linear_solve_p] = _jvp
transpose_rules[P.custom_linear_solve_p] = _transpose
batching_rules[P.custom_linear_solve_p] = _vmap

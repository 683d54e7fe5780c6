"""JVP and batching of ``hessenberg``, ``tridiagonal`` and ``schur``.

JAX 0.10.2 defines no derivative for any of them: zero tangents pass through, and a
nonzero one raises the uniform "JVP rule for 'schur' not implemented" (as a missing rule
does).  All take leading batch dimensions natively, so batching moves the mapped
dimension to the front (JAX's ``expand_dims_batcher``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait.ir import primitives as P
from plait.ir.atoms import Atom
from plait.ir.errors import RuleNotImplementedError
from plait.ir.primitive import Primitive
from plait.transforms.emit import Emitter, Zero
from plait.transforms.jvp import Tangent, jvp_rules, tangent_aval
from plait.transforms.linalg_factorization_rules import _front
from plait.transforms.vmap import batching_rules


def _no_derivative(prim: Primitive) -> Any:
    """The JVP of a primitive without a derivative: zero tangents give zero tangents,
    any other raises :class:`RuleNotImplementedError` (only where a tangent flows)."""
    def rule(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Tangent],
             **params: Any) -> tuple[list[Atom], list[Tangent]]:
        if any(type(t) is not Zero for t in tangents):
            raise RuleNotImplementedError("JVP", prim.name)
        outs: list[Atom] = list(e.bind(prim, *primals, **params))
        return outs, [Zero(tangent_aval(o.aval)) for o in outs]
    return rule


for _prim in (P.hessenberg_p, P.tridiagonal_p, P.schur_p):
    jvp_rules[_prim] = _no_derivative(_prim)
    batching_rules[_prim] = _front(_prim)

"""The function ``vjp`` returns: a pytree whose leaves are the residuals, so that it
can be returned from ``jit``, passed through ``tree_map`` or carried in a ``scan``,
as JAX's (``jax.vjp``'s ``VJP`` object)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from plait.frontend import lax
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.arguments import abstractify
from plait.frontend.core.tree_util import (
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_unflatten,
)
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.errors import ArgumentError
from plait.ir.jaxpr import Jaxpr
from plait.ir.lists import fill_in

__all__ = ["Pullback", "PullbackSpec", "float0_zeros", "zeros_for"]


@attrs.frozen(cache_hash=True)  # (jit's dispatch hashes it on every call taking one)
class PullbackSpec:
    """What a pullback knows besides its residuals (its static node data)."""

    bwd: Jaxpr
    """Residuals and used cotangents to the cotangents of the differentiated inputs."""
    out_tree: PyTreeDef
    """The structure of the cotangent it takes."""
    out_avals: tuple[ShapedArray, ...]
    """The types of the function's outputs (the aux outputs after them)."""
    out_tangent: tuple[bool, ...]
    """Which outputs' cotangents the backward jaxpr reads."""
    n_main: int
    """How many outputs are not aux."""
    in_tree: PyTreeDef
    """The structure of the primal inputs (of the cotangents returned)."""
    in_avals: tuple[ShapedArray, ...]
    """The types of the primal inputs."""
    diff: tuple[bool, ...]
    """Which inputs are differentiated (the others get float0 cotangents)."""


class Pullback:
    """``f_vjp(ct)``: the cotangents of ``fun``'s inputs for the cotangent ``ct`` of its
    output.  A pytree whose children are the residuals."""

    def __init__(self, spec: PullbackSpec, residuals: Sequence[Any]) -> None:
        self.spec = spec
        self.residuals = list(residuals)

    def __repr__(self) -> str:
        return f"Pullback({len(self.residuals)} residuals)"

    def __call__(self, *cts: Any) -> Any:
        s = self.spec
        ct = cts[0] if len(cts) == 1 else cts
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != s.out_tree:
            raise ArgumentError(f"vjp function: expected a cotangent of structure {s.out_tree}, "
                                f"but got {ct_tree}")
        for i, (c, a) in enumerate(zip(ct_leaves, s.out_avals)):
            ca = abstractify(c, f"cotangent[{i}]", "vjp")
            if ca.shape != a.shape:
                raise ArgumentError(f"vjp function: expected a cotangent of shape {a.shape} "
                                    f"for output {i}, but got "
                                    f"{ca.str_short(short_dtypes=False)}")
        used = [c for c, has in zip(ct_leaves, s.out_tangent[:s.n_main]) if has]
        used += [zeros_for(a) for a, has in zip(s.out_avals[s.n_main:], s.out_tangent[s.n_main:])
                 if has]
        grads = apply_jaxpr(s.bwd, (), [*self.residuals, *used], "vjp_backward")
        return tree_unflatten(s.in_tree, fill_in(s.diff, grads, s.in_avals, float0_zeros))


def float0_zeros(aval: ShapedArray) -> np.ndarray:
    """The zero tangent of a value without a tangent space (JAX's float0 zeros)."""
    return np.zeros(aval.shape, dt.float0)


def zeros_for(aval: Any) -> Any:
    """A zero tangent or cotangent of type ``aval`` (float0 where it has none)."""
    if not dt.is_inexact(aval.dtype):
        return float0_zeros(aval)
    return lax.full(aval.shape, 0, aval.dtype)


register_pytree_node(Pullback, lambda p: (p.residuals, p.spec),
                     lambda spec, residuals: Pullback(spec, list(residuals)))

"""The functions ``vjp`` and ``linearize`` return: pytrees whose leaves are the
residuals, so that they can be returned from ``jit`` or ``vmap``, passed through
``tree_map`` or carried in a ``scan``, as JAX's (``jax.vjp``'s ``VJP`` object,
``jax.linearize``'s ``Partial``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from plait.frontend import lax
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.arguments import abstractify
from plait.frontend.core.refs import Ref, addupdate
from plait.frontend.core.tree_util import (
    PyTreeDef,
    broadcast_prefix,
    register_pytree_node,
    tree_flatten,
    tree_unflatten,
)
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.errors import ArgumentError
from plait.ir.jaxpr import Jaxpr
from plait.ir.lists import fill_in
from plait.transforms.dce import dce_jaxpr

__all__ = ["Pullback", "PullbackSpec", "Linearized", "leaf_routes", "float0_zeros",
           "zeros_for", "GradValue", "DontWant", "GradRef", "DidntWant", "NotNeeded"]


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
    res_from: tuple[int | None, ...] = ()
    """Per residual, the input (flat index) it is verbatim, or ``None`` (computed)."""


class _Marker:
    """A ``with_refs`` entry or placeholder (compared by type, printed as constructed)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class GradValue(_Marker):
    """A ``with_refs`` entry: return this argument's cotangent as a value (the default)."""


class DontWant(_Marker):
    """A ``with_refs`` entry: do not compute this argument's cotangent at all."""


class GradRef(_Marker):
    """What a pullback returns for an argument whose cotangent went into a Ref."""


class DidntWant(_Marker):
    """What a pullback returns for an argument marked :class:`DontWant`."""


def leaf_routes(entries: Sequence[Any], in_tree: PyTreeDef) -> list[Any]:
    """One ``with_refs`` route per leaf of the differentiated function's arguments
    (``in_tree``, their tuple), each entry a pytree prefix of its argument.

    Raises:
      ArgumentError: not one entry per argument, or an entry of another kind.
    """
    args = tree_unflatten(in_tree, [0] * in_tree.num_leaves)
    if len(entries) != len(args):
        raise ArgumentError(f"with_refs: expected one entry per argument of the "
                            f"differentiated function ({len(args)}), but got {len(entries)}")
    routes: list[Any] = []
    for i, (entry, arg) in enumerate(zip(entries, args)):
        per_leaf = broadcast_prefix(entry, arg, f"with_refs entry {i}",
                                    is_leaf=lambda x: isinstance(x, _Marker | Ref))
        for r in per_leaf:
            if not isinstance(r, GradValue | DontWant | Ref):
                raise ArgumentError(f"with_refs entry {i}: expected a Ref, GradValue() or "
                                    f"DontWant() for each leaf of the argument, but got "
                                    f"{type(r).__name__}: {r!r}")
        routes.extend(per_leaf)
    return routes


class NotNeeded(_Marker):
    """In ``args_res``: an argument (leaf) the backward pass does not need."""


def _per_argument(in_tree: PyTreeDef, entries: list[Any]) -> list[Any]:
    """One entry per argument: the leaf's entry, or a tuple of one per leaf."""
    out, k = [], 0
    for child in in_tree.children():
        n = child.num_leaves
        out.append(entries[k] if n == 1 and child.num_nodes == 1 else tuple(entries[k:k + n]))
        k += n
    return out


def _per_leaf(in_tree: PyTreeDef, per_argument: Sequence[Any]) -> list[Any]:
    """Inverse of :func:`_per_argument` (an argument given whole is flattened)."""
    out: list[Any] = []
    for child, entry in zip(in_tree.children(), per_argument, strict=True):
        if child.num_leaves == 1 and child.num_nodes == 1:
            out.append(entry)
        elif isinstance(entry, tuple) and len(entry) == child.num_leaves:
            out.extend(entry)
        else:
            out.extend(tree_flatten(entry, is_leaf=lambda x: isinstance(x, NotNeeded))[0])
    return out


class Pullback:
    """``f_vjp(ct)``: the cotangents of ``fun``'s inputs for the cotangent ``ct`` of its
    output.  A pytree whose children are the residuals."""

    def __init__(self, spec: PullbackSpec, residuals: Sequence[Any]) -> None:
        self.spec = spec
        self.residuals = list(residuals)
        self._args_res: list[Any] | None = None

    @property
    def args_res(self) -> list[Any]:
        """The arguments the backward pass needs as they were, one entry per argument
        (a leaf's value, or a tuple of one per leaf), :class:`NotNeeded` where it
        needs none; assigning an entry (``f_vjp.args_res[0] = W``) replaces that
        argument's residuals, as JAX's."""
        if self._args_res is None:
            s = self.spec
            by_leaf: dict[int, Any] = {j: r for j, r in zip(s.res_from, self.residuals)
                                       if j is not None}
            entries = [by_leaf.get(j, NotNeeded()) for j in range(s.in_tree.num_leaves)]
            self._args_res = _per_argument(s.in_tree, entries)
        return self._args_res

    @property
    def opaque_residuals(self) -> list[Any]:
        """The residuals the forward pass computed (not arguments)."""
        return [r for j, r in zip(self.spec.res_from, self.residuals) if j is None]

    def _current_residuals(self, strict: bool = True) -> list[Any]:
        """The residuals, with the entries of ``args_res`` as they are now."""
        if self._args_res is None:
            return self.residuals
        flat = _per_leaf(self.spec.in_tree, self._args_res)
        out = []
        for j, r in zip(self.spec.res_from, self.residuals):
            if j is None:
                out.append(r)
            elif isinstance(flat[j], NotNeeded):
                if not strict:
                    out.append(r)
                    continue
                raise ArgumentError(f"vjp function: argument leaf {j} is needed by the backward "
                                    "pass but args_res holds NotNeeded() for it; restore it "
                                    "(f_vjp.args_res[i] = value) first")
            else:
                out.append(flat[j])
        return out

    def __repr__(self) -> str:
        return f"Pullback({len(self.residuals)} residuals)"

    def __call__(self, *cts: Any) -> Any:
        return self._pull(cts, None)

    def with_refs(self, *entries: Any) -> Callable[..., Any]:
        """The pullback with each argument's cotangent routed by ``entries`` (one per
        argument of the differentiated function, each a pytree prefix of it): a
        :class:`~plait.Ref` accumulates the cotangent into the Ref (``ref[...] +=``) and
        returns :class:`GradRef` in its place, :class:`GradValue` returns it as usual,
        :class:`DontWant` skips computing it and returns :class:`DidntWant`.

        Raises:
          ArgumentError: not one entry per argument, or an entry of another kind.
        """
        routes = leaf_routes(entries, self.spec.in_tree)
        return lambda *cts: self._pull(cts, routes)

    def _pull(self, cts: tuple[Any, ...], routes: list[Any] | None) -> Any:
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
        if routes is None:
            grads = apply_jaxpr(s.bwd, (), [*self._current_residuals(), *used],
                                "vjp_backward")
            return tree_unflatten(s.in_tree, fill_in(s.diff, grads, s.in_avals, float0_zeros))
        # Cotangents not wanted are not computed: their part of the backward program is
        # dead code.
        wanted = [not isinstance(r, DontWant) for r, d in zip(routes, s.diff) if d]
        bwd = dce_jaxpr(s.bwd, wanted)[0] if not all(wanted) else s.bwd
        it = iter(apply_jaxpr(bwd, (), [*self._current_residuals(), *used], "vjp_backward"))
        out: list[Any] = []
        for r, d, a in zip(routes, s.diff, s.in_avals):
            if isinstance(r, DontWant):
                out.append(DidntWant())
                continue
            g = next(it) if d else float0_zeros(a)
            if isinstance(r, Ref):
                if d:
                    addupdate(r, Ellipsis, g)
                out.append(GradRef())
            else:
                out.append(g)
        return tree_unflatten(s.in_tree, out)


@attrs.frozen(cache_hash=True)
class Linearized:
    """The linear function ``linearize`` returns, taking its residuals first: the
    static node data of a :class:`~plait.tree_util.Partial` whose children are the
    residuals."""

    linear: Jaxpr
    """Residuals and tangents of the differentiated inputs to the nonzero output
    tangents."""
    in_tree: PyTreeDef
    """The structure of the primal inputs (of the tangents it takes)."""
    diff: tuple[bool, ...]
    """Which input leaves are differentiated (the others' tangents are ignored)."""
    out_tree: PyTreeDef
    """The structure of the function's result."""
    out_nonzero: tuple[bool, ...]
    """Which outputs' tangents ``linear`` computes (the others are zeros)."""
    out_avals: tuple[ShapedArray, ...]
    """The types of the function's outputs."""
    first_only: bool = False
    """Whether only the first element of the result is returned (the rest is aux)."""

    def __call__(self, residuals: Sequence[Any], *tangents: Any) -> Any:
        """The output tangents for ``tangents`` (structured as the primal inputs)."""
        t_leaves, t_tree = tree_flatten(tuple(tangents))
        if t_tree != self.in_tree:
            raise ArgumentError(f"linearized function: expected tangents of structure "
                                f"{self.in_tree}, but got {t_tree}")
        args = [t for t, d in zip(t_leaves, self.diff) if d]
        touts = iter(apply_jaxpr(self.linear, (), [*residuals, *args], "linearized"))
        out = tree_unflatten(self.out_tree, [next(touts) if nz else zeros_for(a)
                                             for nz, a in zip(self.out_nonzero, self.out_avals)])
        return out[0] if self.first_only else out


def float0_zeros(aval: ShapedArray) -> np.ndarray:
    """The zero tangent of a value without a tangent space (JAX's float0 zeros)."""
    return np.zeros(aval.shape, dt.float0)


def zeros_for(aval: Any) -> Any:
    """A zero tangent or cotangent of type ``aval`` (float0 where it has none)."""
    if not dt.is_inexact(aval.dtype):
        return float0_zeros(aval)
    return lax.full(aval.shape, 0, aval.dtype)


register_pytree_node(Pullback, lambda p: (p._current_residuals(strict=False), p.spec),
                     lambda spec, residuals: Pullback(spec, list(residuals)))
# The placeholders a pullback returns are empty pytrees, as JAX's: a result holding
# them can leave jit and pass through tree_map.
register_pytree_node(GradRef, lambda x: ((), None), lambda _, __: GradRef())
register_pytree_node(DidntWant, lambda x: ((), None), lambda _, __: DidntWant())

"""Solves with implicit derivatives: ``lax.custom_linear_solve`` and ``lax.custom_root``.

Both let the user's solver run as written (an iterative method, a factorization)
while derivatives come from the equations the solution satisfies, never from
differentiating the solver's steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from plait.frontend.api.autodiff import jvp, linear_transpose, linearize
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.arguments import abstractify
from plait.frontend.core.trace_to_jaxpr import TracedFunction, trace_to_jaxpr
from plait.frontend.core.tracing import bind
from plait.frontend.core.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten_with_path,
    tree_structure,
    tree_unflatten,
    treedef_children,
)
from plait.frontend.lax import full_like, neg
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.primitives import LinearSolveTuple, custom_linear_solve_p

__all__ = ["custom_linear_solve", "custom_root"]


def _flat(tree: Any, what: str, purpose: str) -> tuple[list[Any], PyTreeDef, list[ShapedArray]]:
    pairs, treedef = tree_flatten_with_path(tree)
    avals = [abstractify(x, what + keystr(p), purpose) for p, x in pairs]
    return [x for _, x in pairs], treedef, avals


def _types(avals: Sequence[ShapedArray]) -> str:
    return "[" + ", ".join(a.str_short(short_dtypes=False) for a in avals) + "]"


def _check(purpose: str, name: str, what: str, t: TracedFunction, tree: PyTreeDef,
           avals: Sequence[ShapedArray], has_aux: bool) -> PyTreeDef | None:
    """Check that ``t`` returned a value shaped like ``what`` (and an aux value when
    ``has_aux``); return the aux value's structure."""
    out_tree, aux_tree = t.out_tree, None
    if has_aux:
        kids = treedef_children(out_tree)
        if len(kids) != 2 or out_tree.num_leaves != kids[0].num_leaves + kids[1].num_leaves:
            raise ValueError(f"{purpose}: {name}() produced a pytree with structure {out_tree}, "
                             "but a pair (solution, auxiliary output) was expected because "
                             "has_aux=True")
        out_tree, aux_tree = kids
    if out_tree != tree:
        raise TypeError(f"{purpose}: {name}() output pytree structure must match {what}: "
                        f"expected {tree}, but got {out_tree}")
    outs = t.out_avals[:len(avals)]
    if [a.shape for a in outs] != [a.shape for a in avals] or any(
            a.dtype != b.dtype for a, b in zip(outs, avals)):
        raise ValueError(f"{purpose}: {name}() output types must match {what}: expected "
                         f"{_types(avals)}, but got {_types(outs)}")
    return aux_tree


def _lifted(t: TracedFunction) -> tuple[ClosedJaxpr, list[Any]]:
    j, consts = t.consts_as_invars()
    return ClosedJaxpr(j.replace(debug_info=None)), list(consts)


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any,
                        solve: Callable[[Callable[[Any], Any], Any], Any],
                        transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """``x`` with ``matvec(x) == b``, computed as ``solve(matvec, b)`` but differentiated
    implicitly: tangents and cotangents take one more solve each (``transpose_solve`` for
    reverse mode; with ``symmetric=True`` the operator is its own transpose).  ``b`` is a
    pytree of arrays; with ``has_aux``, ``solve`` returns ``(x, aux)`` and so does this."""
    purpose = "custom_linear_solve"
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    leaves, tree, avals = _flat(b, "b", purpose)
    in_tree = tree_structure((b,))

    def traced(fn: Callable[[Any], Any], name: str, aux: bool) -> tuple[TracedFunction,
                                                                         PyTreeDef | None]:
        t = trace_to_jaxpr(fn, in_tree, avals, purpose)
        return t, _check(purpose, name, "b", t, tree, avals, aux)

    mv, _ = traced(matvec, "matvec", False)
    sv, aux_tree = traced(partial(solve, matvec), "solve", has_aux)
    vm = ts = None
    if transpose_solve is not None:
        vecmat = matvec if symmetric else _transposed(matvec, b)
        vm = mv if symmetric else traced(vecmat, "vecmat", False)[0]
        ts = traced(partial(transpose_solve, vecmat), "transpose_solve", has_aux)[0]
    lifted = [None if t is None else _lifted(t) for t in (mv, vm, sv, ts)]
    consts = [c for x in lifted if x is not None for c in x[1]]
    outs = bind(custom_linear_solve_p, *consts, *leaves,
                const_lengths=LinearSolveTuple(*(0 if x is None else len(x[1]) for x in lifted)),
                jaxprs=LinearSolveTuple(*(None if x is None else x[0] for x in lifted)))
    x = tree_unflatten(tree, outs[:len(leaves)])
    if aux_tree is None:
        return x
    return x, tree_unflatten(aux_tree, outs[len(leaves):])


def _transposed(matvec: Callable[[Any], Any], b: Any) -> Callable[[Any], Any]:
    vecmat = linear_transpose(matvec, b)
    return lambda x: vecmat(x)[0]


def custom_root(f: Callable[[Any], Any], initial_guess: Any,
                solve: Callable[[Callable[[Any], Any], Any], Any],
                tangent_solve: Callable[[Callable[[Any], Any], Any], Any],
                has_aux: bool = False) -> Any:
    """A root of ``f`` found by ``solve(f, initial_guess)``, differentiated implicitly:
    the tangent of the root solves ``∂f/∂x ẋ = -∂f/∂θ θ̇`` with
    ``tangent_solve(g, y)``, ``g`` the linearization of ``f`` at the root (for a scalar
    ``f``, ``lambda g, y: y / g(1.0)``).  With ``has_aux``, ``solve`` returns
    ``(root, aux)`` and so does this."""
    purpose = "custom_root"
    leaves, tree, avals = _flat(initial_guess, "initial_guess", purpose)
    in_tree = tree_structure((initial_guess,))
    f_t = trace_to_jaxpr(f, in_tree, avals, purpose)
    _check(purpose, "f", "initial_guess", f_t, tree, avals, False)
    s_t = trace_to_jaxpr(partial(solve, f), in_tree, avals, purpose)
    aux_tree = _check(purpose, "solve", "initial_guess", s_t, tree, avals, has_aux)

    def linearize_and_solve(x: Any, rhs: Any) -> Any:
        return tangent_solve(linearize(f, x)[1], rhs)

    l_t = trace_to_jaxpr(linearize_and_solve, tree_structure((initial_guess, initial_guess)),
                         avals * 2, purpose)
    _check(purpose, "tangent_solve", "x", l_t, tree, avals, False)
    (f_j, f_c), (s_j, s_c), (l_j, l_c) = map(_lifted, (f_t, s_t, l_t))
    root = _root_function(f_j.jaxpr, s_j.jaxpr, l_j.jaxpr, len(f_c), len(s_c), len(leaves))
    outs = root(*f_c, *s_c, *l_c, *leaves)
    x = tree_unflatten(tree, outs[:len(leaves)])
    if aux_tree is None:
        return x
    return x, tree_unflatten(aux_tree, outs[len(leaves):])


def _root_function(f: Jaxpr, solve: Jaxpr, l_and_s: Jaxpr, nf: int, ns: int,
                   nx: int) -> Callable[..., list[Any]]:
    """The root as a ``custom_jvp`` function of (f's, solve's and linearize_and_solve's
    constants, the initial guess), as JAX stages it."""
    def _custom_root(*args: Any) -> list[Any]:
        return apply_jaxpr(solve, (), [*args[nf:nf + ns], *args[-nx:]], "custom_root")

    root = custom_jvp(_custom_root)

    def _root_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        sol = root(*primals)
        solution, aux = sol[:nx], sol[nx:]
        params = list(primals[:nf])
        diff = [i for i, p in enumerate(params) if dt.is_inexact(abstractify(p, "", "").dtype)]

        def f_at_solution(*ps: Any) -> list[Any]:
            full = list(params)
            for i, p in zip(diff, ps):
                full[i] = p
            return apply_jaxpr(f, (), [*full, *solution], "custom_root")

        _, rhs = jvp(f_at_solution, [params[i] for i in diff], [tangents[i] for i in diff])
        l_consts = primals[nf + ns:len(primals) - nx]
        sol_dot = apply_jaxpr(l_and_s, (), [*l_consts, *solution, *rhs], "custom_root")
        return sol, [neg(t) for t in sol_dot] + [full_like(a, 0) for a in aux]

    root.defjvp(_root_jvp)
    return root

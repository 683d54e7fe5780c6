"""``jet``: Taylor-mode higher-order differentiation, as ``jax.experimental.jet``.

The function is traced once; :func:`plait.transforms.jet.jet_jaxpr` rewrites the
jaxpr to propagate truncated Taylor series, and the result is applied like any
other transformed jaxpr: inlined into an enclosing trace (so ``jet`` composes with
``jit``, ``grad``, ``vmap`` and itself), or compiled and run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.frontend.api.autodiff import _trace
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.arguments import abstractify
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tree_util import tree_flatten, tree_unflatten
from plait.frontend.lax.ops import convert_element_type
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.errors import ArgumentError
from plait.transforms.jet import jet_jaxpr

__all__ = ["jet"]


@api_boundary
def jet(fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Sequence[Any]],
        factorial_scaled: bool = True) -> tuple[Any, Any]:
    """The truncated Taylor series of ``fun`` along a curve through ``primals``.

    Args:
      fun: the function; it may return any pytree of arrays.
      primals: one value per positional argument of ``fun`` (arrays, scalars, or
        pytrees of them).
      series: one list of terms per primal, all of the same length ``K`` (the order);
        term ``k`` of ``series[i]`` has the structure and types of ``primals[i]``.
      factorial_scaled: as JAX's default, term ``k`` (from 1) is the ``k``-th derivative
        of the curve at 0, ``x^(k)``; with ``False``, it is the Taylor coefficient
        ``x^(k) / k!``.  The output series follows the same convention.

    Returns:
      ``(fun(*primals), series_out)``: ``series_out`` has the structure of
      ``fun``'s output, each array replaced by the list of its ``K`` terms, the
      derivatives (or coefficients) of ``fun`` along the curve.

    Integer and boolean arguments have no series: their terms are checked for shape
    and otherwise ignored, and integer outputs have zero terms.

    Raises:
      ValueError: ``series`` does not give one list of terms per primal, the lists have
        different lengths, or a term's structure differs from its primal's.
      TypeError: a term's shape or dtype differs from its primal's.
      NotImplementedError: ``fun`` uses a primitive without a Taylor rule
        (``"Jet rule for 'igamma' not implemented"``).
    """
    if not isinstance(primals, tuple | list) or not isinstance(series, tuple | list):
        raise ArgumentError("jet: primals and series must be tuples or lists, but got "
                            f"{type(primals).__name__} and {type(series).__name__}")
    if len(series) != len(primals):
        raise ValueError(f"jet: expected one series per primal ({len(primals)}), "
                         f"but got {len(series)}")
    if any(not isinstance(s, tuple | list) for s in series):
        raise ArgumentError("jet: each series must be a tuple or list of terms, but got "
                            f"{[type(s).__name__ for s in series]}")
    orders = {len(s) for s in series}
    if len(orders) > 1:
        raise ValueError("jet terms have inconsistent lengths for different arguments: "
                         f"{[len(s) for s in series]}")
    order = orders.pop() if orders else 0
    traced, jaxpr, consts = _trace(fun, tuple(primals), "jet")
    nonzeros, terms = _terms(primals, series, traced.in_avals, order)
    jj = jet_jaxpr(jaxpr, order, [False] * len(consts) + nonzeros, factorial_scaled)
    p_leaves = tree_flatten(tuple(primals))[0]
    outs = apply_jaxpr(jj, (), [*consts, *p_leaves, *terms],
                       f"jet_{traced.debug_info.func_name}")
    n_out = len(jaxpr.outvars)
    out_terms = outs[n_out:]
    per_leaf = [list(out_terms[i * order:(i + 1) * order]) for i in range(n_out)]
    return (tree_unflatten(traced.out_tree, outs[:n_out]),
            tree_unflatten(traced.out_tree, per_leaf))


def _terms(primals: Sequence[Any], series: Sequence[Sequence[Any]],
           in_avals: Sequence[ShapedArray], order: int) -> tuple[list[bool], list[Any]]:
    """Per primal leaf, whether it carries a series; and the terms of those that do,
    leaf by leaf, each converted to its primal's dtype."""
    nonzeros: list[bool] = []
    terms: list[Any] = []
    avals = iter(in_avals)
    for i, (p, s) in enumerate(zip(primals, series)):
        p_tree = tree_flatten(p)[1]
        leaf_avals = [next(avals) for _ in range(p_tree.num_leaves)]
        per_term = []
        for k, term in enumerate(s):
            t_leaves, t_tree = tree_flatten(term)
            if t_tree != p_tree:
                raise ValueError(f"jet: term series[{i}][{k}] must have the structure of "
                                 f"primals[{i}], {p_tree}, but got {t_tree}")
            per_term.append(t_leaves)
        for j, aval in enumerate(leaf_avals):
            carries = dt.is_inexact(aval.dtype)
            nonzeros.append(carries and order > 0)
            for k in range(order):
                t = per_term[k][j]
                where = f"series[{i}][{k}]" + (f" leaf {j}" if p_tree.num_leaves > 1 else "")
                ta = abstractify(t, where, "jet")
                if ta.shape != aval.shape or (ta.dtype != aval.dtype and not ta.weak_type):
                    raise ArgumentError(
                        f"jet: expected term {where} to have the type of its primal, "
                        f"{aval.str_short(short_dtypes=False)}, but got "
                        f"{ta.str_short(short_dtypes=False)}")
                if carries:
                    terms.append(t if ta.dtype == aval.dtype and not ta.weak_type
                                 else convert_element_type(t, aval.dtype))
    return nonzeros, terms

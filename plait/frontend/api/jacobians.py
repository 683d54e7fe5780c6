"""Jacobians: ``jacfwd`` (one JVP per input element, batched with ``vmap``), ``jacrev``
(one VJP per output element) and ``hessian``, each traced once and applied as one
program."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ParamSpec

import numpy as np

from plait.frontend import lax
from plait.frontend.api.autodiff import (
    _argnums_tuple,
    _check_grad_inputs,
    _check_jacrev_output,
    _is_float0,
    _trace,
    jvp,
    vjp,
)
from plait.frontend.api.refs import with_finals, write_finals
from plait.frontend.api.vmap import vmap
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.arguments import abstractify, wraps
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.refs import Ref, carrying_refs
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tree_util import (
    PyTreeDef,
    tree_flatten,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.errors import ArgumentError

__all__ = ["jacfwd", "jacrev", "hessian"]

P = ParamSpec("P")


def _basis_leaves(avals: Sequence[ShapedArray]) -> list[np.ndarray]:
    """The standard basis over the flattened leaves, as one block per leaf: block ``k``
    has shape ``(total,) + shape_k`` and row ``start_k + j`` is the ``j``-th unit vector
    of leaf ``k`` (NumPy constants: the basis depends on the types only)."""
    total = sum(a.size for a in avals)
    out, start = [], 0
    for a in avals:
        rows = np.eye(total, a.size, -start, dtype=a.dtype)
        out.append(rows.reshape((total,) + a.shape))
        start += a.size
    return out


def _unravel(j: Any, axis: int, avals: Sequence[ShapedArray], tree: PyTreeDef) -> Any:
    """Split axis ``axis`` (of size ``sum(a.size)``) of ``j`` into one array per aval,
    that axis reshaped to the aval's shape, assembled into ``tree``."""
    shape = tuple(j.shape)
    parts, start = [], 0
    for a in avals:
        piece = j
        if a.size != shape[axis]:
            piece = lax.slice_in_dim(j, start, start + a.size, axis=axis)
        parts.append(lax.reshape(piece, shape[:axis] + a.shape + shape[axis + 1:]))
        start += a.size
    return tree_unflatten(tree, parts)


def _apply_traced(fun: Callable[..., Any], args: tuple[Any, ...], name: str) -> Any:
    """``fun(*args)``, traced once and applied as one program (one compile when not
    tracing, however many operations assembling the result takes)."""
    def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
        f = with_finals(fun, refs, False) if refs else fun
        traced, jaxpr, consts = _trace(f, args, name, refs=token)
        outs = apply_jaxpr(jaxpr, (), [*consts, *tree_flatten(args)[0]], name)
        out = tree_unflatten(traced.out_tree, outs)
        if not refs:
            return out
        write_finals(refs, out[1], False)
        return out[0]
    return carrying_refs(attempt)


def _dyn_args(args: tuple[Any, ...], nums: Sequence[int], what: str) -> tuple[Any, ...]:
    n = len(args)
    for i in nums:
        if not -n <= i < n:
            raise ArgumentError(f"{what}: argnums={tuple(nums)} requires at least {max(nums) + 1} "
                                f"positional arguments, but the function was called with {n}")
    return tuple(args[i] for i in nums)


def _substitute(fun: Callable[..., Any], args: tuple[Any, ...], nums: Sequence[int],
                kwargs: dict[str, Any]) -> Callable[..., Any]:
    """``fun`` of the differentiated arguments only; the others (and ``kwargs``) are fixed."""
    n = len(args)

    def partial_fun(*d: Any) -> Any:
        full = list(args)
        for i, v in zip(nums, d):
            full[i % n] = v
        return fun(*full, **kwargs)
    return partial_fun


def jacfwd(fun: Callable[P, Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[P, Any]:
    """The Jacobian of ``fun`` by forward mode (one JVP per input element, batched).

    The result has the structure of the output, each leaf replaced by the
    structure of the differentiated argument(s) (a tuple of them when
    ``argnums`` is a sequence), with leaves of shape ``out.shape + in.shape``.
    """
    nums, single = _argnums_tuple(argnums)

    @wraps(fun)
    @api_boundary
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        dyn = _dyn_args(args, nums, "jacfwd")
        leaves, dyn_tree = tree_flatten(dyn)
        avals = [abstractify(x, f"argument {i}", "jacfwd") for i, x in enumerate(leaves)]
        for a in avals:
            if holomorphic and not dt.is_complex(a.dtype):
                raise TypeError("jacfwd with holomorphic=True requires inputs with complex "
                                f"dtype, but got {a.dtype.name}.")
            if not holomorphic and not dt.is_float(a.dtype):
                raise TypeError(
                    "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
                    f"np.floating), but got {a.dtype.name}. For holomorphic differentiation, "
                    "pass holomorphic=True. For differentiation of non-holomorphic functions "
                    "involving complex inputs or integer inputs, use plait.jvp directly.")
        basis = tree_unflatten(dyn_tree, _basis_leaves(avals))
        example = tree_structure(dyn[0] if single else dyn)

        def whole(*d: Any) -> Any:
            partial_fun = _substitute(fun, args, nums, kwargs)

            out_avals: list[ShapedArray] = []

            def push(t: Any) -> Any:
                res = jvp(partial_fun, d, t, has_aux=has_aux)
                out_avals[:] = [value_aval(y) for y in tree_flatten(res[0])[0]]
                # Integer outputs have float0 tangents: their Jacobian is integer zeros.
                tan = tree_map(lambda o, tt: np.zeros(np.shape(o), o.dtype) if _is_float0(tt)
                               else tt, res[0], res[1])
                return (tan, res[2]) if has_aux else tan

            out = vmap(push, out_axes=(-1, None) if has_aux else -1)(basis)
            jac, aux = out if has_aux else (out, None)
            # As JAX: each block takes its output's dtype and weak type.
            j_leaves, j_tree = tree_flatten(jac)
            jac = tree_unflatten(j_tree, [_unravel(_like(j, a), len(j.shape) - 1, avals, example)
                                          for j, a in zip(j_leaves, out_avals, strict=True)])
            return (jac, aux) if has_aux else jac

        return _apply_traced(whole, dyn, "jacfwd")

    return jacfun


def jacrev(fun: Callable[P, Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable[P, Any]:
    """The Jacobian of ``fun`` by reverse mode (one VJP per output element, batched).

    Same result structure as :func:`jacfwd`.
    """
    nums, single = _argnums_tuple(argnums)

    @wraps(fun)
    @api_boundary
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        dyn = _dyn_args(args, nums, "jacrev")
        leaves, _ = tree_flatten(dyn)
        avals = [abstractify(x, f"argument {i}", "jacrev") for i, x in enumerate(leaves)]
        _check_grad_inputs(avals, [True] * len(avals), allow_int, holomorphic,
                           [f"argument {i}" for i in range(len(avals))], "jacrev")
        example = tree_structure(dyn[0] if single else dyn)

        def whole(*d: Any) -> Any:
            partial_fun = _substitute(fun, args, nums, kwargs)
            res = vjp(partial_fun, *d, has_aux=has_aux)
            y, f_vjp = res[0], res[1]
            y_leaves, y_tree = tree_flatten(y)
            y_avals = [abstractify(o, f"output {i}", "jacrev") for i, o in enumerate(y_leaves)]
            for a in y_avals:
                _check_jacrev_output(a, holomorphic)
            basis = tree_unflatten(y_tree, _basis_leaves(y_avals))

            def pull(ct: Any) -> list[Any]:
                # float0 cotangents (integer inputs, allow_int) stay out of the batch.
                return [None if _is_float0(g) else g for g in tree_flatten(f_vjp(ct))[0]]

            cols = vmap(pull)(basis)
            # As JAX: each block takes its input's dtype and weak type.
            cols = [np.zeros((sum(a.size for a in y_avals),) + a.shape, dt.float0) if c is None
                    else _like(c, a) for c, a in zip(cols, avals)]
            per_out = [_unravel_rows(cols, start, a) for start, a in _offsets(y_avals)]
            jac = tree_unflatten(y_tree, [tree_unflatten(example, p) for p in per_out])
            return (jac, res[2]) if has_aux else jac

        return _apply_traced(whole, dyn, "jacrev")

    return jacfun


def _offsets(avals: Sequence[ShapedArray]) -> list[tuple[int, ShapedArray]]:
    out, start = [], 0
    for a in avals:
        out.append((start, a))
        start += a.size
    return out


def _like(x: Any, aval: ShapedArray) -> Any:
    """``x`` with the dtype and weak type of ``aval`` (its real part for a real one)."""
    if dt.is_complex(np.dtype(x.dtype)) and not dt.is_complex(aval.dtype):
        x = lax.real(x)
    return lax.convert_element_type(x, aval.dtype, aval.weak_type)


def _unravel_rows(cols: Sequence[Any], start: int, out: ShapedArray) -> list[Any]:
    """The rows ``start:start + out.size`` of each column block, reshaped to
    ``out.shape + in.shape``."""
    parts: list[Any] = []
    for c in cols:
        if _is_float0(c):
            parts.append(np.zeros(out.shape + c.shape[1:], dt.float0))
            continue
        piece = c if out.size == c.shape[0] else lax.slice_in_dim(c, start, start + out.size)
        parts.append(lax.reshape(piece, out.shape + tuple(c.shape[1:])))
    return parts


def hessian(fun: Callable[P, Any], argnums: int | Sequence[int] = 0,
            has_aux: bool = False, holomorphic: bool = False) -> Callable[P, Any]:
    """The Hessian: ``jacfwd(jacrev(fun))``."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)

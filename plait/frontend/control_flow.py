"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``, ``map``.

Bodies are traced to closed sub-jaxprs; values they close over become
leading operands (for ``cond``, every branch takes every branch's consts, as
seed 000's ``func8`` shows).  Branch outputs and loop carries must agree in
structure and type; a weakly typed carry that the body makes strong is
promoted and the body traced again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.errors import ArgumentError
from plait.ir import dtypes as dt
from plait.ir.atoms import Literal, Var
from plait.ir.avals import ShapedArray
from plait.ir.debug_info import DebugInfo
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.primitives import cond_p, scan_p, while_p
from plait.ir.primitives.control_flow import same_types
from plait.frontend import lax
from plait.frontend.api_util import abstractify, flatten_outputs, fun_name
from plait.frontend.tracing import Tracer, bind, scalar_literal, trace_flat
from plait.frontend.tree_util import PyTreeDef, keystr, tree_flatten_with_path, tree_unflatten

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map"]


class _Body:
    """A traced body: its jaxpr (consts as leading invars), const values, output structure."""

    def __init__(self, jaxpr: Jaxpr, consts: list[Any], out_tree: PyTreeDef) -> None:
        self.jaxpr = jaxpr
        self.consts = consts
        self.out_tree = out_tree

    @property
    def out_avals(self) -> tuple[Any, ...]:
        return self.jaxpr.out_avals


def _trace_body(fun: Callable[..., Any], in_tree: PyTreeDef, avals: Sequence[ShapedArray],
                purpose: str, unpack: bool = True) -> _Body:
    """Trace ``fun`` on arguments of structure ``in_tree`` (a tuple spread into
    positional arguments when ``unpack``, else passed whole)."""
    box: list[PyTreeDef] = []

    def flat(*tracers: Any) -> list[Any]:
        args = tree_unflatten(in_tree, tracers)
        leaves, tree, _ = flatten_outputs(fun(*args) if unpack else fun(args), purpose)
        box.append(tree)
        return leaves

    debug = DebugInfo(fun_name(fun), ("",) * len(avals), ())
    closed, _ = trace_flat(flat, avals, purpose, debug)
    j = closed.jaxpr
    moved = j.replace(constvars=(), invars=j.constvars + j.invars, debug_info=None)
    return _Body(moved, list(closed.consts), box[0])


def _leaves(tree: Any, what: str) -> tuple[list[Any], PyTreeDef, list[str]]:
    pairs, treedef = tree_flatten_with_path(tree)
    return [x for _, x in pairs], treedef, [what + keystr(p) for p, _ in pairs]


def _avals(leaves: Sequence[Any], paths: Sequence[str], purpose: str) -> list[ShapedArray]:
    return [abstractify(x, p, purpose) for x, p in zip(leaves, paths)]


def _types(avals: Sequence[Any]) -> str:
    return ", ".join(a.str_short() for a in avals)


def _with_common_consts(bodies: Sequence[_Body]) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Each body's jaxpr taking every body's consts (its own in its slot, the rest unused)."""
    consts = [c for b in bodies for c in b.consts]
    out = []
    start = 0
    for b in bodies:
        n = len(b.consts)
        j = b.jaxpr
        fillers = [Var(_aval_of(c)) for c in consts]
        own = list(j.invars[:n])
        invars = fillers[:start] + own + fillers[start + n:] + list(j.invars[n:])
        out.append(ClosedJaxpr(j.replace(invars=tuple(invars))))
        start += n
    return out, consts


def _aval_of(x: Any) -> ShapedArray:
    a = getattr(x, "aval", None)
    if isinstance(a, ShapedArray):
        return a
    arr = np.asarray(x)
    return ShapedArray(arr.shape, arr.dtype)


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged as one
    ``cond``.  Both branches are traced; their outputs must agree in structure and type."""
    p_aval = abstractify(pred, "pred", "cond")
    if p_aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred!r} of shape {p_aval.shape}.")
    if not (dt.is_bool(p_aval.dtype) or dt.is_integer(p_aval.dtype) or dt.is_float(p_aval.dtype)):
        raise TypeError(f"Pred type must be either boolean or number, got {p_aval.dtype}.")
    if not dt.is_bool(p_aval.dtype):
        pred = lax.ne(pred, 0)
    index = lax.convert_element_type(pred, np.int32)
    return _switch(index, [false_fun, true_fun], operands, ("false_fun", "true_fun"))


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[index](*operands)``, the index clamped into range, staged as one ``cond``."""
    if not branches:
        raise ArgumentError("switch: expected at least one branch, but got none")
    i_aval = abstractify(index, "index", "switch")
    if i_aval.shape != () or not dt.is_integer(i_aval.dtype):
        raise TypeError(f"switch: expected an integer scalar index, but got {i_aval.str_short()}")
    if len(branches) == 1:
        return branches[0](*operands)
    index = lax.convert_element_type(index, np.int32)
    index = lax.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    return _switch(index, list(branches), operands, tuple(f"branches[{i}]" for i in range(len(branches))))


def _switch(index: Any, branches: Sequence[Callable[..., Any]], operands: tuple[Any, ...],
            names: Sequence[str]) -> Any:
    leaves, in_tree, paths = _leaves(operands, "operands")
    avals = _avals(leaves, paths, "cond")
    bodies = [_trace_body(b, in_tree, avals, "cond") for b in branches]
    first = bodies[0]
    for name, b in zip(names[1:], bodies[1:]):
        if b.out_tree != first.out_tree:
            raise TypeError(f"{names[0]} and {name} output must have same type structure, got "
                            f"{first.out_tree} and {b.out_tree}.")
        if not same_types(b.out_avals, first.out_avals):
            raise TypeError(f"{names[0]} and {name} output must have identical types, got\n"
                            f"({_types(first.out_avals)}) and ({_types(b.out_avals)}).")
    jaxprs, consts = _with_common_consts(bodies)
    outs = bind(cond_p, index, *consts, *leaves, branches=tuple(jaxprs))
    return tree_unflatten(first.out_tree, outs)


def _check_carry(what: str, in_avals: Sequence[ShapedArray], body: _Body, in_tree: PyTreeDef,
                 paths: Sequence[str], out_avals: Sequence[Any]) -> list[int]:
    """Fail unless the body returns the carry's structure and types; returns the
    positions whose weak type the body made strong."""
    if body.out_tree != in_tree and what != "scan":
        raise TypeError(f"{what} body_fun output and input must have identical types, but the "
                        f"input carry has structure {in_tree} and the output {body.out_tree}")
    promote = []
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(f"{what} body_fun output and input must have identical types: the "
                            f"carry {paths[k]} enters as {a.str_short()} and leaves as "
                            f"{b.str_short()}")
        if a.weak_type and not b.weak_type:
            promote.append(k)
    return promote


def _strong(leaves: list[Any], avals: list[ShapedArray], positions: Sequence[int]) -> None:
    # As JAX does: the initial value is made strong (a Python scalar becomes a
    # strong literal, no equation); the body traced with the weak type is kept,
    # the carry types being equal up to weak types.
    for k in positions:
        x = leaves[k]
        if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
            leaves[k] = Literal(scalar_literal(x, avals[k].dtype).value, avals[k].strip_weak_type())
        else:
            leaves[k] = lax.convert_element_type(x, avals[k].dtype, False)


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)``; staged as one ``while``.

    Forward-mode differentiable; reverse mode needs ``scan`` or a ``fori_loop``
    with static bounds.
    """
    leaves, in_tree, paths = _leaves(init_val, "init_val")
    avals = _avals(leaves, paths, "while_loop")
    body = _trace_body(body_fun, in_tree, avals, "while_loop", unpack=False)
    _strong(leaves, avals, _check_carry("while_loop", avals, body, in_tree, paths, body.out_avals))
    cond_b = _trace_body(cond_fun, in_tree, avals, "while_loop", unpack=False)
    p = cond_b.out_avals
    if len(p) != 1 or p[0].shape != () or p[0].dtype != dt.bool_:
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{_types(p)}].")
    outs = bind(while_p, *cond_b.consts, *body.consts, *leaves,
                cond_jaxpr=ClosedJaxpr(cond_b.jaxpr), body_jaxpr=ClosedJaxpr(body.jaxpr),
                cond_nconsts=len(cond_b.consts), body_nconsts=len(body.consts))
    return tree_unflatten(in_tree, outs)


def _concrete_int(x: Any) -> int | None:
    if type(x) is Tracer:
        return None
    if isinstance(x, int | np.integer) and not isinstance(x, bool):
        return int(x)
    a = getattr(x, "aval", None)
    if a is not None and a.shape == () and dt.is_integer(a.dtype):
        return int(np.asarray(x))
    return None


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any,
              unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    With concrete bounds this is a ``scan`` (reverse-differentiable); with traced
    bounds, a ``while``.
    """
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    if lo is not None and hi is not None:
        def step(carry: Any, _: Any) -> Any:
            i, x = carry
            return (lax.add(i, 1), body_fun(i, x)), None
        (_, result), _ = scan(step, (lower, init_val), None, length=max(hi - lo, 0),
                              unroll=1 if unroll is None else unroll)
        return result

    def while_cond(carry: Any) -> Any:
        i, n, _ = carry
        return lax.lt(i, n)

    def while_body(carry: Any) -> Any:
        i, n, x = carry
        return lax.add(i, 1), n, body_fun(i, x)

    _, _, result = while_loop(while_cond, while_body, (lower, upper, init_val))
    return result


def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1) -> Any:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(final carry, stacked ys)``.  Staged as one ``scan``."""
    c_leaves, c_tree, c_paths = _leaves(init, "init")
    x_leaves, x_tree, x_paths = _leaves(xs, "xs")
    x_avals = _avals(x_leaves, x_paths, "scan")
    lengths = {a.shape[0] if a.ndim else None for a in x_avals}
    if None in lengths:
        raise ValueError("scan got value with no leading axis to scan over: "
                         + ", ".join(f"{p} of type {a.str_short()}" for p, a in zip(x_paths, x_avals)
                                     if not a.ndim))
    if length is not None:
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         + ", ".join(f"{p} of size {a.shape[0]}" for p, a in zip(x_paths, x_avals))
                         + (f" and length={length}" if length is not None else ""))
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    n = lengths.pop()
    assert n is not None
    c_avals = _avals(c_leaves, c_paths, "scan")
    slice_avals = [a.update(shape=a.shape[1:]) for a in x_avals]
    in_tree = _pair_tree(c_tree, x_tree, len(c_leaves), len(x_leaves))

    def traced() -> tuple[_Body, list[Any]]:
        body = _trace_body(lambda c, x: _pair_out(f(c, x)), in_tree, c_avals + slice_avals, "scan")
        kids = body.out_tree.children()
        if kids[0] != c_tree:
            raise TypeError(f"scan body function carry input and carry output must have the same "
                            f"pytree structure, but they are {c_tree} and {kids[0]}")
        return body, list(body.out_avals[:len(c_leaves)])

    body, outs_c = traced()
    _strong(c_leaves, c_avals, _check_carry("scan", c_avals, body, c_tree, c_paths, outs_c))
    outs = bind(scan_p, *body.consts, *c_leaves, *x_leaves, jaxpr=ClosedJaxpr(body.jaxpr),
                length=n, reverse=bool(reverse), num_consts=len(body.consts),
                num_carry=len(c_leaves), unroll=unroll)
    y_tree = body.out_tree.children()[1]
    carry = tree_unflatten(c_tree, outs[:len(c_leaves)])
    return carry, tree_unflatten(y_tree, outs[len(c_leaves):])


def _pair_out(out: Any) -> tuple[Any, Any]:
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError(f"scan body function must return a pair (carry, y), but got "
                        f"{type(out).__name__}")
    return out


def _pair_tree(c_tree: PyTreeDef, x_tree: PyTreeDef, nc: int, nx: int) -> PyTreeDef:
    from plait.frontend.tree_util import tree_structure
    carry = tree_unflatten(c_tree, [0] * nc)
    xs = tree_unflatten(x_tree, [0] * nx)
    return tree_structure((carry, xs))


def map(f: Callable[[Any], Any], xs: Any) -> Any:
    """``f`` applied to each slice of ``xs`` along the leading axis, stacked."""
    _, ys = scan(lambda _, x: ((), f(x)), (), xs)
    return ys

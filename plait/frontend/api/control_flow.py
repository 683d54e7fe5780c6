"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``, ``map``.

Bodies are traced to closed sub-jaxprs; values they close over become
leading operands (for ``cond``, every branch takes every branch's consts, as
the ``func8`` example of JAX's "Understanding Jaxprs" shows).  Branch outputs
and loop carries must agree in structure and type; a weakly typed carry that
the body makes strong is promoted and the body traced again.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.device_put import device_put
from plait.frontend.api.vmap import vmap
from plait.frontend.core.arguments import abstractify, fun_name
from plait.frontend.core.array_base import Array
from plait.frontend.core.host_values import scalar_literal, value_aval
from plait.frontend.core.promotion import result_type_info
from plait.frontend.core.refs import Ref, borrowed, carrying_refs, read, write
from plait.frontend.core.trace_to_jaxpr import TracedFunction, trace_to_jaxpr
from plait.frontend.core.tracing import Tracer, bind, current_trace, is_concretizable
from plait.frontend.core.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from plait.ir import dtypes as dt
from plait.ir.atoms import Literal, Var
from plait.ir.avals import ShapedArray, leading_slice
from plait.ir.config import values as _config
from plait.ir.debug_info import DebugInfo
from plait.ir.errors import ArgumentError, ConcretizationTypeError
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.primitives import cond_p, platform_index_p, scan_p, while_p
from plait.ir.primitives.control_flow import Platforms, platform_branch, same_types
from plait.transforms.dce import dce_jaxpr

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "platform_dependent"]


def _lifted(body: TracedFunction) -> tuple[Jaxpr, tuple[Any, ...]]:
    """A traced body's jaxpr with its consts as leading invars, and the const values."""
    j, consts = body.consts_as_invars()
    return j.replace(debug_info=None), consts


def _leaves(tree: Any, what: str) -> tuple[list[Any], PyTreeDef, list[str]]:
    pairs, treedef = tree_flatten_with_path(tree)
    return [x for _, x in pairs], treedef, [what + keystr(p) for p, _ in pairs]


def _avals(leaves: Sequence[Any], paths: Sequence[str], purpose: str) -> list[ShapedArray]:
    return [abstractify(x, p, purpose) for x, p in zip(leaves, paths)]


def _types(avals: Sequence[Any]) -> str:
    return ", ".join(a.str_short(short_dtypes=False) for a in avals)


def _const_key(c: Any) -> Any:
    # The same traced value may be wrapped by several Tracer objects: key on its variable.
    return ("var", id(c._var)) if type(c) is Tracer else ("obj", id(c))


def _with_common_consts(bodies: Sequence[TracedFunction], order: Sequence[int]
                        ) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Each body's jaxpr taking every body's consts, as JAX merges them: concatenated in
    tracing ``order``, a value closed over by several bodies passed once."""
    keys: dict[Any, int] = {}
    consts: list[Any] = []
    for k in order:
        for c in bodies[k].closed.consts:
            if keys.setdefault(_const_key(c), len(consts)) == len(consts):
                consts.append(c)
    out = []
    for b in bodies:
        j, b_consts = _lifted(b)
        n = len(b_consts)
        slots = [Var(value_aval(c)) for c in consts]  # unused by this body
        for v, c in zip(j.invars[:n], b_consts):
            slots[keys[_const_key(c)]] = v
        out.append(ClosedJaxpr(j.replace(invars=tuple(slots) + j.invars[n:])))
    return out, consts


_NO_OPERAND: Any = object()


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged as one
    ``cond``.  Both branches are traced; their outputs must agree in structure and type.

    As JAX's, it also takes the single operand as ``operand=``, and the older form
    ``cond(pred, true_operand, true_fun, false_operand, false_fun)``.

    Raises:
      TypeError: a branch is not callable, ``pred`` is not a boolean or number scalar,
        or ``operand=`` comes with positional operands.
    """
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: expected callable true_fun and false_fun, but got "
                        f"{type(true_fun).__name__} and {type(false_fun).__name__}")
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("lax.cond: expected the operands either positionally or as "
                            "operand=, but got both")
        operands = (operand,)
    if pred is None:
        raise TypeError("cond predicate is None")
    p_aval = abstractify(pred, "pred", "cond")
    if p_aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred!r} of shape {p_aval.shape}.")
    if not (dt.is_bool(p_aval.dtype) or dt.is_integer(p_aval.dtype) or dt.is_float(p_aval.dtype)):
        raise TypeError(f"Pred type must be either boolean or number, got {p_aval.dtype}.")
    take = _python_value(pred, bool)
    if take is not None:
        return (true_fun if take else false_fun)(*operands)
    if not dt.is_bool(p_aval.dtype):
        pred = lax.ne(pred, 0)
    index = lax.convert_element_type(pred, np.int32)
    # Branch 0 is false_fun; JAX traces (and orders consts) true_fun first.
    return _switch("cond", index, [false_fun, true_fun], operands, ("false_fun", "true_fun"),
                   order=(1, 0))


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any,
           operand: Any = _NO_OPERAND) -> Any:
    """``branches[index](*operands)``, the index clamped into range, staged as one ``cond``
    (``operand=x``, JAX's older keyword, stands for one positional operand).

    Raises:
      TypeError: both ``operand`` and positional operands are given.
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError(f"if 'operand' keyword is passed then no positional operands can "
                            f"be passed, got operand={operand!r} and positional operands "
                            f"{operands!r}")
        operands = (operand,)
    if not branches:
        raise ArgumentError("switch: expected at least one branch, but got none")
    i_aval = abstractify(index, "index", "switch")
    if i_aval.shape != () or not dt.is_integer(i_aval.dtype):
        raise TypeError("switch: expected an integer scalar index, but got "
                        f"{i_aval.str_short(short_dtypes=False)}")
    if len(branches) == 1:
        return branches[0](*operands)
    i = _python_value(index, int)
    if i is not None:
        return branches[min(max(i, 0), len(branches) - 1)](*operands)
    index = lax.convert_element_type(index, np.int32)
    index = lax.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    n = len(branches)
    return _switch("switch", index, list(branches), operands,
                   tuple(f"branches[{i}]" for i in range(n)), order=tuple(range(n)))


def platform_dependent(*args: Any, default: Callable[..., Any] | None = None,
                       **per_platform: Callable[..., Any]) -> Any:
    """``per_platform[p](*args)`` for the platform ``p`` the program runs on (``cpu``,
    ``cuda``, ``rocm``, ``tpu``), else ``default(*args)``.  Staged, it is a ``cond`` on a
    ``platform_index`` of which only the branch for the lowering platform is compiled."""
    groups: list[tuple[list[str], Callable[..., Any]]] = []
    for name, fn in per_platform.items():
        if not callable(fn):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable, "
                            f"got {fn}")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        same = next((ps for ps, b in groups if b == fn), None)
        if same is not None:
            same.append(name)  # one branch serving several platforms, as JAX joins them
        else:
            groups.append(([name], fn))
    platforms = tuple(tuple(ps) for ps, _ in groups) + ((None,) if default is not None else ())
    branches = [b for _, b in groups] + ([default] if default is not None else [])
    if current_trace() is None:
        return branches[platform_branch(platforms, "cpu")](*args)
    index = bind(platform_index_p, platforms=platforms)
    names = [f"{'default' if ps is None else ps[0]} branch" for ps in platforms]
    return _switch("platform_dependent", index, branches, args, names,
                   order=tuple(range(len(branches))), branches_platforms=platforms)


def _switch(what: str, index: Any, branches: Sequence[Callable[..., Any]],
            operands: tuple[Any, ...], names: Sequence[str], order: Sequence[int],
            branches_platforms: Platforms | None = None) -> Any:
    def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
        if not refs:
            return _switch_traced(what, index, branches, operands, names, order,
                                  branches_platforms, token)
        # The Refs the branches use: their values go in as operands, out as results.
        wrapped = [_with_refs(b, refs) for b in branches]
        out, finals = _switch_traced(what, index, wrapped, ([read(r) for r in refs],
                                                          *operands),
                                     names, order, branches_platforms, token)
        _write_all(refs, finals)
        return out
    return carrying_refs(attempt)


def _with_refs(fun: Callable[..., Any], refs: Sequence[Ref]) -> Callable[..., Any]:
    """``fun`` taking the values of ``refs`` first and returning their final values too."""
    def wrapped(values: list[Any], *args: Any) -> Any:
        with borrowed(refs, values):
            out = fun(*args)
            return out, [read(r) for r in refs]
    return wrapped


def _write_all(refs: Sequence[Ref], values: Sequence[Any]) -> None:
    for r, v in zip(refs, values, strict=True):
        write(r, v)


def _switch_traced(what: str, index: Any, branches: Sequence[Callable[..., Any]],
                   operands: tuple[Any, ...], names: Sequence[str], order: Sequence[int],
                   branches_platforms: Platforms | None, token: object) -> Any:
    leaves, in_tree, paths = _leaves(operands, "operands")
    avals = _avals(leaves, paths, "cond")
    by_k: dict[int, Any] = {}
    for k in order:
        # (A function given for several branches is traced once, as JAX traces it.)
        same = next((j for j in by_k if branches[j] is branches[k]), None)
        by_k[k] = by_k[same] if same is not None else trace_to_jaxpr(
            branches[k], in_tree, avals, "cond", refs=token)
    traced = [by_k[k] for k in range(len(branches))]
    ref = order[0]
    for k in order[1:]:
        _check_branch(what, names[ref], traced[ref], names[k], traced[k])
    jaxprs, consts = _with_common_consts(traced, order)
    # An operand every branch returns unchanged is passed on, not made a result, as in
    # JAX (under vmap, an unbatched operand stays unbatched when the index is batched).
    ins = [*consts, *leaves]
    fwd = [p[0] if all(q == p[0] for q in p) else None
           for p in zip(*[_forwarding(j.jaxpr) for j in jaxprs])]
    if any(f is not None for f in fwd):
        jaxprs = [j.replace(jaxpr=j.jaxpr.replace(outvars=tuple(
            v for v, f in zip(j.jaxpr.outvars, fwd) if f is None))) for j in jaxprs]
    outs = iter(bind(cond_p, index, *ins, branches=tuple(jaxprs),
                     branches_platforms=branches_platforms))
    return tree_unflatten(traced[ref].out_tree, [next(outs) if f is None else
                                                 _as_array(ins[f]) for f in fwd])


def _python_value(x: Any, kind: Callable[[Any], Any]) -> Any:
    """``kind(x)`` (``bool`` or ``int``) when jit is disabled and ``x`` is concrete, so that
    control flow runs as Python, as in JAX; ``None`` otherwise."""
    if not (_config.disable_jit and is_concretizable(x)):
        return None
    try:
        return kind(x)
    except ConcretizationTypeError:
        return None


def _check_branch(what: str, name_a: str, a: TracedFunction, name_b: str, b: TracedFunction
                  ) -> None:
    """Fail unless branch ``b`` returns the structure and types of branch ``a``."""
    if a.out_tree != b.out_tree:
        raise TypeError(f"{what} branch outputs must have the same pytree structure, but "
                        f"{name_a} returns {a.out_tree} and {name_b} returns {b.out_tree}")
    if same_types(a.out_avals, b.out_avals):
        return
    paths = [keystr(p) for p, _ in
             tree_flatten_with_path(tree_unflatten(a.out_tree, [0] * len(a.out_avals)))[0]]
    for path, x, y in zip(paths, a.out_avals, b.out_avals):
        if x.shape != y.shape or x.dtype != y.dtype:
            differ = "shapes" if x.shape != y.shape else "dtypes"
            where = f"output{path}" if path else "the output"
            raise TypeError(f"{what} branch outputs must have identical types, but {name_a} "
                            f"returns {x.str_short(short_dtypes=False)} and {name_b} returns "
                            f"{y.str_short(short_dtypes=False)} at "
                            f"{where}: the {differ} differ")


def _check_carry(what: str, in_avals: Sequence[ShapedArray], body: TracedFunction,
                 in_tree: PyTreeDef,
                 paths: Sequence[str], out_avals: Sequence[Any]) -> list[int]:
    """Fail unless the body returns the carry's structure and types; returns the
    positions whose weak type the body made strong."""
    if body.out_tree != in_tree and what != "scan":
        raise TypeError(f"{what} body_fun output and input must have identical types, but the "
                        f"input carry has structure {in_tree} and the output {body.out_tree}")
    promote = []
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.shape != b.shape or a.dtype != b.dtype:
            differ = "shapes" if a.shape != b.shape else "dtypes"
            raise TypeError(f"{what} body_fun output and input must have identical types, but "
                            f"the carry {paths[k]} enters as {a.str_short(short_dtypes=False)} and "
                            "leaves as "
                            f"{b.str_short(short_dtypes=False)}: the {differ} differ")
        if a.weak_type and not b.weak_type:
            promote.append(k)
    return promote


def _strong(leaves: list[Any], avals: list[ShapedArray], positions: Sequence[int]) -> None:
    # As JAX does: the initial value is made strong (a Python scalar becomes a
    # strong literal, no equation); the body traced with the weak type is kept,
    # the carry types being equal up to weak types.
    for k in positions:
        leaves[k] = _as_type(leaves[k], avals[k].strip_weak_type())


def _as_type(x: Any, aval: ShapedArray) -> Any:
    if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
        return Literal(scalar_literal(x, aval.dtype).val, aval)
    return lax.convert_element_type(x, aval.dtype, aval.weak_type)


def _retype_weak(leaves: list[Any], avals: list[ShapedArray],
                 out_avals: Sequence[ShapedArray]) -> bool:
    """Give a weakly typed initial carry whose dtype the body changes the dtype both
    promote to (``0.`` carrying float32 sums under x64 becomes float32), as JAX does;
    whether any changed (then the body is traced again)."""
    changed = False
    for k, (a, b) in enumerate(zip(avals, out_avals)):
        if a.weak_type and a.shape == b.shape and a.dtype != b.dtype:
            dtype, _ = result_type_info([(a.dtype, True), (b.dtype, b.weak_type)])
            if dtype != a.dtype:
                avals[k] = a.update(dtype=dtype, weak_type=False)
                leaves[k] = _as_type(leaves[k], avals[k])
                changed = True
    return changed


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """Repeat ``val = body_fun(val)`` while ``cond_fun(val)``; staged as one ``while``.

    Forward-mode differentiable; reverse mode needs ``scan`` or a ``fori_loop``
    with static bounds.
    """
    if _config.disable_jit:
        try:
            val = tree_map(_as_array, init_val)
            while cond_fun(val):
                val = tree_map(_as_array, body_fun(val))
            return val
        except ConcretizationTypeError:
            pass  # a traced predicate (under vmap, say): stage the loop after all

    def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
        if not refs:
            return _while_traced(cond_fun, body_fun, init_val, token)

        # The Refs the loop uses are part of its state.
        def cond_r(carry: Any) -> Any:
            with borrowed(refs, carry[1]):
                return cond_fun(carry[0])

        def body_r(carry: Any) -> Any:
            with borrowed(refs, carry[1]):
                out = body_fun(carry[0])
                return out, [read(r) for r in refs]
        out, finals = _while_traced(cond_r, body_r, (init_val, [read(r) for r in refs]), token)
        _write_all(refs, finals)
        return out
    return carrying_refs(attempt)


def _while_traced(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
                  init_val: Any, token: object) -> Any:
    leaves, in_tree, paths = _leaves(init_val, "init_val")
    avals = _avals(leaves, paths, "while_loop")
    body = trace_to_jaxpr(body_fun, in_tree, avals, "while_loop", unpack=False, refs=token)
    if _retype_weak(leaves, avals, body.out_avals):
        body = trace_to_jaxpr(body_fun, in_tree, avals, "while_loop", unpack=False, refs=token)
    _strong(leaves, avals, _check_carry("while_loop", avals, body, in_tree, paths, body.out_avals))
    cond_b = trace_to_jaxpr(cond_fun, in_tree, avals, "while_loop", unpack=False, refs=token)
    p = cond_b.out_avals
    if len(p) != 1 or p[0].shape != () or p[0].dtype != dt.bool_:
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) "
                        f"[{_types(p)}].")
    # As JAX does: a carry the body passes through unchanged and the predicate does
    # not read is a body const, not loop state.
    cond_j, cond_consts = _lifted(cond_b)
    body_j, body_consts = _lifted(body)
    nb = len(body_consts)
    cond_used = dce_jaxpr(cond_j, prune_invars=False)[1][len(cond_consts):]
    move = [f == nb + i and not u
            for i, (f, u) in enumerate(zip(_forwarding(body_j), cond_used))]
    if any(move):
        cond_j = _drop_invars(dce_jaxpr(cond_j)[0], [False] * len(cond_consts) + move)
        body_j = _move_to_front(_drop_outvars(body_j, move), [False] * nb + move)
    moved, kept = _partition(leaves, move)
    outs = bind(while_p, *cond_consts, *moved, *body_consts, *kept,
                cond_jaxpr=ClosedJaxpr(cond_j), body_jaxpr=ClosedJaxpr(body_j),
                cond_nconsts=len(cond_consts), body_nconsts=len(moved) + nb)
    return tree_unflatten(in_tree, _merge(move, moved, outs))


def _as_array(x: Any) -> Any:
    """A passed-through operand as the Array a result is (a Python or NumPy value too)."""
    return x if isinstance(x, Array) else device_put(x)


def _forwarding(j: Jaxpr) -> list[int | None]:
    """Per output of ``j``, the position of the input it returns as is, if any."""
    pos = {v: i for i, v in reversed(list(enumerate(j.invars)))}
    return [pos.get(a) if type(a) is Var else None for a in j.outvars]


def _drop_outvars(j: Jaxpr, drop: Sequence[bool]) -> Jaxpr:
    return j.replace(outvars=tuple(a for a, d in zip(j.outvars, drop) if not d))


def _drop_invars(j: Jaxpr, drop: Sequence[bool]) -> Jaxpr:
    return j.replace(invars=tuple(v for v, d in zip(j.invars, drop) if not d))


def _move_to_front(j: Jaxpr, front: Sequence[bool]) -> Jaxpr:
    moved, kept = _partition(list(j.invars), front)
    return j.replace(invars=tuple(moved + kept))


def _partition(xs: Sequence[Any], mask: Sequence[bool]) -> tuple[list[Any], list[Any]]:
    """(the ``xs`` where ``mask``, the others)."""
    return ([x for x, m in zip(xs, mask, strict=True) if m],
            [x for x, m in zip(xs, mask, strict=True) if not m])


def _merge(mask: Sequence[bool], where: Sequence[Any], others: Sequence[Any]) -> list[Any]:
    """Inverse of :func:`_partition` (``others`` may run on past ``mask``)."""
    a, b = iter(where), iter(others)
    return [next(a) if m else next(b) for m in mask] + list(b)


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
    lower, upper = _same_bound_types(lower, upper)
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    if _config.disable_jit and lo is not None and hi is not None and hi <= lo:
        return init_val  # the Python scan cannot run zero steps (JAX returns init_val too)
    if lo is not None and hi is not None:
        def step(carry: Any, _: Any) -> Any:
            i, x = carry
            return (lax.add(i, 1), body_fun(i, x)), None
        # As JAX does, the counter starts from a Python int (a weakly typed carry).
        (_, result), _ = scan(step, (lo, init_val), None, length=max(hi - lo, 0),
                              unroll=False if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")

    def while_cond(carry: Any) -> Any:
        i, n, _ = carry
        return lax.lt(i, n)

    def while_body(carry: Any) -> Any:
        i, n, x = carry
        return lax.add(i, 1), n, body_fun(i, x)

    _, _, result = while_loop(while_cond, while_body, (lower, upper, init_val))
    return result


def _same_bound_types(lower: Any, upper: Any) -> tuple[Any, Any]:
    """The loop bounds with one dtype: a weakly typed integer bound takes the other's."""
    la, ua = abstractify(lower, "lower", "fori_loop"), abstractify(upper, "upper", "fori_loop")
    if la.dtype == ua.dtype:
        return lower, upper
    if dt.is_signed(la.dtype) and dt.is_signed(ua.dtype):
        if la.weak_type and not ua.weak_type:
            return lax.convert_element_type(lower, ua.dtype), upper
        if ua.weak_type and not la.weak_type:
            return lower, lax.convert_element_type(upper, la.dtype)
    raise TypeError(f"lower and upper arguments to fori_loop must have equal types, got "
                    f"{la.dtype.name} and {ua.dtype.name}")


def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1, _split_transpose: bool = False) -> Any:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(final carry, stacked ys)``.  Staged as one ``scan``.  ``_split_transpose`` (JAX's
    private scheduling option for the transposed loop, which flax passes) is accepted and
    changes nothing: the values are the same either way."""
    _leaves(init, "init")  # (checked first; _scan_traced flattens it)
    x_leaves, x_tree, x_paths = _leaves(xs, "xs")
    x_avals = _avals(x_leaves, x_paths, "scan")
    lengths = {a.shape[0] if a.ndim else None for a in x_avals}
    if None in lengths:
        raise ValueError("scan got value with no leading axis to scan over: "
                         + ", ".join(f"{p} of type {a.str_short(short_dtypes=False)}"
                                     for p, a in zip(x_paths, x_avals)
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
    if _config.disable_jit:
        return _python_scan(f, init, x_leaves, x_tree, n, reverse)

    def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
        if not refs:
            return _scan_traced(f, init, x_leaves, x_tree, x_avals, n, reverse, unroll, token)

        # The Refs the body uses are part of the carry.
        def body(carry: Any, x: Any) -> Any:
            with borrowed(refs, carry[1]):
                c, y = _pair_out(f(carry[0], x))
                return (c, [read(r) for r in refs]), y
        (c, finals), ys = _scan_traced(body, (init, [read(r) for r in refs]), x_leaves,
                                       x_tree, x_avals, n, reverse, unroll, token)
        _write_all(refs, finals)
        return c, ys
    return carrying_refs(attempt)


def _scan_traced(f: Callable[[Any, Any], Any], init: Any, x_leaves: list[Any],
                 x_tree: PyTreeDef, x_avals: list[ShapedArray], n: int, reverse: bool,
                 unroll: int | bool, token: object) -> Any:
    c_leaves, c_tree, c_paths = _leaves(init, "init")
    c_avals = _avals(c_leaves, c_paths, "scan")
    slice_avals = [leading_slice(a) for a in x_avals]
    in_tree = _pair_tree(c_tree, x_tree, len(c_leaves), len(x_leaves))

    def traced() -> tuple[TracedFunction, list[Any]]:
        in_avals = c_avals + slice_avals  # (c_avals as they are now: see _retype_weak)
        body = trace_to_jaxpr(lambda c, x: _pair_out(f(c, x)), in_tree, in_avals, "scan",
                              DebugInfo(fun_name(f), ("",) * len(in_avals), ()), refs=token)
        kids = body.out_tree.children()
        if kids[0] != c_tree:
            raise TypeError(f"scan body function carry input and carry output must have the same "
                            f"pytree structure, but they are {c_tree} and {kids[0]}")
        return body, list(body.out_avals[:len(c_leaves)])

    body, outs_c = traced()
    if _retype_weak(c_leaves, c_avals, outs_c):
        body, outs_c = traced()
    _strong(c_leaves, c_avals, _check_carry("scan", c_avals, body, c_tree, c_paths, outs_c))
    body_j, body_consts = _lifted(body)
    nk, nc = len(body_consts), len(c_leaves)
    j, move, x_fwd = _scan_forwarding(body_j, nk, nc)
    moved, kept = _partition(c_leaves, move)
    outs = bind(scan_p, *moved, *body_consts, *kept, *x_leaves, jaxpr=ClosedJaxpr(j), length=n,
                reverse=bool(reverse), num_consts=len(moved) + nk, num_carry=len(kept),
                unroll=_unroll(unroll, n))
    carry_out, ys = outs[:len(kept)], iter(outs[len(kept):])
    ys_all = [next(ys) if f is None else _maybe_put(x_leaves[f]) for f in x_fwd]
    y_tree = body.out_tree.children()[1]
    carry = tree_unflatten(c_tree, _merge(move, moved, carry_out))
    return carry, tree_unflatten(y_tree, ys_all)


def _python_scan(f: Callable[[Any, Any], Any], init: Any, x_leaves: Sequence[Any],
                 x_tree: PyTreeDef, n: int, reverse: bool) -> tuple[Any, Any]:
    """``scan`` as a Python loop (jit disabled), as JAX runs it."""
    if n == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    carry, ys = init, []
    for i in reversed(range(n)) if reverse else range(n):
        x = tree_unflatten(x_tree, [lax.index_in_dim(v, i, keepdims=False) for v in x_leaves])
        carry, y = _pair_out(f(carry, x))
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, tree_map(lambda *y: lax.concatenate([lax.expand_dims(v, (0,)) for v in y], 0),
                           *ys)


def _maybe_put(x: Any) -> Any:
    # A forwarded scanned input is returned as an array, as the loop would (JAX too).
    return device_put(x) if isinstance(x, np.ndarray | np.generic) else x


def _scan_forwarding(j: Jaxpr, nk: int, nc: int) -> tuple[Jaxpr, list[bool], list[int | None]]:
    """As JAX does: a carry the body passes through unchanged becomes a const, and a
    stacked output that is a scanned input is that input (not copied by the loop).

    Returns the body without those, which carries moved, and per stacked output the
    position among the scanned inputs it forwards (or ``None``).
    """
    fwd = _forwarding(j)
    move = [f == nk + i for i, f in enumerate(fwd[:nc])]
    x_fwd = [f - nk - nc if f is not None and f >= nk + nc else None for f in fwd[nc:]]
    j = _drop_outvars(j, move + [f is not None for f in x_fwd])
    nx = len(j.invars) - nk - nc
    return _move_to_front(j, [False] * nk + move + [False] * nx), move, x_fwd


def _unroll(unroll: int | bool, length: int) -> int:
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    if _concrete_int(unroll) is None or int(unroll) < 0:
        raise ValueError(f"expected a bool or a non-negative int unroll, but got {unroll!r}")
    return int(unroll)


def _pair_out(out: Any) -> tuple[Any, Any]:
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError(f"scan body function must return a pair (carry, y), but got "
                        f"{type(out).__name__}")
    return out


def _pair_tree(c_tree: PyTreeDef, x_tree: PyTreeDef, nc: int, nx: int) -> PyTreeDef:
    carry = tree_unflatten(c_tree, [0] * nc)
    xs = tree_unflatten(x_tree, [0] * nx)
    return tree_structure((carry, xs))


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:
    """``f`` applied to each slice of ``xs`` along the leading axis, stacked.

    With ``batch_size``, ``vmap(f)`` runs on batches of that many slices in a
    ``scan`` (the remainder in one more call), trading memory for parallelism.
    """
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    return _batched_map(f, xs, operator.index(batch_size))


def _batched_map(f: Callable[[Any], Any], xs: Any, batch_size: int) -> Any:
    leaves, tree = tree_flatten(xs)
    if not leaves:
        return map(f, xs)
    n = leaves[0].shape[0]
    num, rest = divmod(n, batch_size) if batch_size else (0, n)
    elems = num * batch_size
    ys = rest_ys = None
    if num:
        batches = [x[:elems].reshape(num, batch_size, *x.shape[1:]) for x in leaves]
        _, ys = scan(lambda _, x: ((), vmap(f)(x)), (), tree_unflatten(tree, batches))
        ys = tree_map(lambda y: y.reshape(-1, *y.shape[2:]), ys)
    if rest:
        rest_ys = vmap(f)(tree_unflatten(tree, [x[elems:] for x in leaves]))
    if ys is None:
        return rest_ys
    if rest_ys is None:
        return ys
    return tree_map(lambda a, b: lax.concatenate([a, b], 0), ys, rest_ys)

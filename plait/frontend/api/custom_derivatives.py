"""``custom_jvp`` and ``custom_vjp``: functions with user-defined derivatives.

At each call the function and its rule are traced to jaxprs and bound as one
``custom_jvp_call``/``custom_vjp_call`` equation carrying both, so the IR is
self-contained.  Values the function or its rule close over become leading
operands, treated as constants: differentiating with respect to them is an
error.  Forward mode through a ``custom_vjp`` function transposes its
backward function, which must then be linear in the cotangents.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Final, Generic, ParamSpec, TypeVar, cast

import attrs

from plait.frontend import lax
from plait.frontend.api.pullback import float0_zeros, zeros_for
from plait.frontend.api.symbolic_zeros import CustomVJPPrimal, SymbolicZero
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.arguments import abstractify, fun_name
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.trace_queries import perturbed
from plait.frontend.core.trace_to_jaxpr import TracedFunction, trace_to_jaxpr
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import bind, current_trace, is_concretizable, user_trace
from plait.frontend.core.tree_util import (
    PyTreeDef,
    broadcast_prefix,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from plait.ir import dtypes as dt
from plait.ir.atoms import Var
from plait.ir.avals import ShapedArray, shaped_avals
from plait.ir.debug_info import DebugInfo
from plait.ir.errors import ArgumentError, TreePrefixError
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr, convert_constvars
from plait.ir.lists import fill_in
from plait.ir.primitives import (
    custom_jvp_call_p,
    custom_vjp_call_p,
    io_callback_p,
    pure_callback_p,
    while_p,
)
from plait.ir.primitives.custom import defer_rule_error
from plait.transforms.dce import dce_jaxpr
from plait.transforms.jvp import tangent_aval

__all__ = ["custom_jvp", "custom_vjp"]

P = ParamSpec("P")
R = TypeVar("R")

MAX_RULE_DEPTH = 4
"""How deeply a rule that calls its own function on other arguments is traced.

The documented pattern, a rule calling its function on its own primal arguments
(``log1pexp_jvp`` calling ``log1pexp(x)``, ``f_fwd`` calling ``f(x)``), reuses the
jaxpr just traced for the call (see :class:`_SelfCall`), so the user's function runs
once, as in JAX.  Any other call from a rule to its own function binds the custom
function again; JAX traces rules lazily, plait carries them in the IR, so that
recursion is cut at this depth, past which the function is inlined as is."""


@attrs.define
class _SelfCall:
    """The custom function's call whose rule is being traced: the rule's primal inputs
    (tracers of the rule's trace) and the call's traced jaxpr.  A call from the rule to
    the function on exactly these inputs is that same computation: the jaxpr is
    inlined instead of calling the user's function again (and of tracing the rule
    once more), which is what makes plait call user code as often as JAX does."""

    static: list[Any]
    traced: TracedFunction
    inputs: tuple[Any, ...] = ()


def _trace(fun: Callable[..., Any], avals: Sequence[ShapedArray], in_tree: PyTreeDef,
           purpose: str, name: str, known: Sequence[Any] | None = None) -> TracedFunction:
    """Trace a custom function or rule; with ``known`` values (``None`` where unknown),
    the rule may branch on them, as JAX's rules see concrete primals."""
    return trace_to_jaxpr(fun, in_tree, avals, purpose, DebugInfo(name, ("",) * len(avals), ()),
                          known=known)


def _replay(f: TracedFunction) -> Callable[..., Any]:
    """``f``'s traced function, applied again without running the user's code (a
    stand-in rule's primal outputs)."""
    def call(*args: Any) -> Any:
        closed = f.closed
        outs = apply_jaxpr(closed.jaxpr, closed.consts, tree_flatten(args)[0],
                           f.debug_info.func_name)
        return tree_unflatten(f.out_tree, outs)
    return call


def _zero_tangents(f: TracedFunction) -> Callable[..., Any]:
    """A stand-in JVP rule (for one that could not be traced): ``f``'s outputs and
    zero tangents."""
    def rule(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        out = _replay(f)(*primals)
        return out, tree_map(lambda o: lax.full_like(o, 0), out)
    return rule


def _with_consts(t: TracedFunction, all_consts: Sequence[Any], start: int) -> ClosedJaxpr:
    """``t``'s jaxpr taking every const (its own at ``start``), then its inputs."""
    j = t.closed.jaxpr
    n = len(t.closed.consts)
    fillers = [Var(value_aval(c)) for c in all_consts]
    invars = fillers[:start] + list(j.constvars) + fillers[start + n:] + list(j.invars)
    return ClosedJaxpr(j.replace(constvars=(), invars=tuple(invars), debug_info=None))


def _resolve(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
             nondiff: tuple[int, ...] = ()) -> tuple[Any, ...]:
    """The arguments by position, keyword arguments and defaults filled in (as JAX, so
    that a ``nondiff_argnums`` position left to its default is an argument)."""
    if not kwargs and all(i < len(args) for i in nondiff):
        return args
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise ArgumentError(f"{fun_name(fun)}: {e}") from None
    bound.apply_defaults()
    return tuple(bound.args) + tuple(bound.kwargs.values())


def _split(args: tuple[Any, ...], nondiff: tuple[int, ...]) -> tuple[list[Any], list[Any]]:
    return ([a for i, a in enumerate(args) if i in nondiff],
            [a for i, a in enumerate(args) if i not in nondiff])


def _merge(nondiff: tuple[int, ...], static: Sequence[Any], dyn: Sequence[Any]) -> list[Any]:
    s, d = iter(static), iter(dyn)
    return [next(s) if i in nondiff else next(d) for i in range(len(static) + len(dyn))]


def _check_same(what: str, a: Sequence[Any], b: Sequence[Any], ta: Any, tb: Any) -> None:
    if ta != tb:
        raise TypeError(f"{what}: expected equal pytree structures, but got {ta} and {tb}")
    for i, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape or x.dtype != y.dtype:
            raise TypeError(f"{what}: expected output {i} of type "
                            f"{x.str_short(short_dtypes=False)}, but got "
                            f"{y.str_short(short_dtypes=False)}")


class _CustomFunction(Generic[P, R]):
    """What custom_jvp and custom_vjp share: the call, guarded against a rule that calls
    the function itself (JAX's documented pattern), which would otherwise recurse."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int]) -> None:
        functools.update_wrapper(self, fun)  # first: it copies fun.__dict__ over ours
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.symbolic_zeros = False
        self._depth = 0  # rules of this function being traced (see MAX_RULE_DEPTH)
        self._self_calls: list[_SelfCall] = []

    @property
    def rule_depth(self) -> int:
        """How many calls of this function are having their rules traced, one inside
        another (0 when none is)."""
        return self._depth

    def _missing_rule(self) -> str | None:
        raise NotImplementedError

    def _bind(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def __getattr__(self, name: str) -> Any:
        # Attributes of the wrapped function (a custom_vmap's def_vmap, say) read
        # through, as in JAX; only called for names the instance lacks.
        if name == "fun":
            raise AttributeError(name)
        return getattr(self.fun, name)

    @api_boundary
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        missing = self._missing_rule()
        if missing is not None:
            raise AttributeError(missing)
        # Outside any trace only the function's value is needed: JAX runs it, and
        # no rule, too.  (Rules are traced only where a derivative may be taken; a
        # library's trace gets both, as JAX's process_custom_jvp_call does.)
        if self._depth >= MAX_RULE_DEPTH or (current_trace() is None
                                             and user_trace() is None):
            return cast(R, self.fun(*args, **kwargs))
        if self._self_calls:
            again = self._same_call(args, kwargs)
            if again is not None:
                return cast(R, again)
        self._depth += 1
        try:
            return cast(R, self._bind(fun_name(self.fun), args, kwargs))
        finally:
            self._depth -= 1


    def _same_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any | None:
        """The outputs of the call whose rule is being traced, if this call is on the
        rule's own primal inputs; else ``None``."""
        frame = self._self_calls[-1]
        nd = self.nondiff_argnums
        static, dyn = _split(_resolve(self.fun, args, kwargs, nd), nd)
        leaves, in_tree = tree_flatten(tuple(dyn))
        if (in_tree != frame.traced.in_tree or len(leaves) != len(frame.inputs)
                or any(a is not b for a, b in zip(leaves, frame.inputs))
                or not _same_static(static, frame.static)):
            return None
        closed = frame.traced.closed
        if _opaque(closed.jaxpr):
            # Its computation has no reverse derivative (a host callback, a while
            # loop): a custom call again, so that a derivative of the rule uses the
            # rule (as JAX's lazily traced rules do), up to MAX_RULE_DEPTH.
            return None
        outs = apply_jaxpr(closed.jaxpr, closed.consts, leaves, frame.traced.debug_info.func_name)
        return tree_unflatten(frame.traced.out_tree, outs)


_OPAQUE: Final = frozenset({pure_callback_p, io_callback_p, while_p})


def _opaque(jaxpr: Jaxpr) -> bool:
    """Whether ``jaxpr`` has a host callback or a while loop, which reverse mode cannot
    differentiate (at any depth)."""
    for eqn in jaxpr.eqns:
        if eqn.primitive in _OPAQUE:
            return True
        for v in eqn.params.values():
            for j in (v if isinstance(v, tuple) else (v,)):
                if isinstance(j, ClosedJaxpr) and _opaque(j.jaxpr):
                    return True
    return False


def _same_static(a: Sequence[Any], b: Sequence[Any]) -> bool:
    try:
        return len(a) == len(b) and all(x is y or bool(x == y) for x, y in zip(a, b))
    except Exception:  # an __eq__ that does not give a bool: not the same call
        return False


class custom_jvp(_CustomFunction[P, R]):
    """A function with a custom JVP rule (``defjvp``/``defjvps``)."""

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """Set the rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """Set the rule from one function per argument: ``jvps[i](t_i, primal_out, *primals)``."""
        # primals are this function's positional arguments, a tuple that P cannot express.
        call: Callable[..., R] = self

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
            out = call(*primals)
            terms = [f(t, out, *primals) for f, t in zip(jvps, tangents)
                     if f is not None and getattr(t, "dtype", None) != dt.float0]
            if not terms:
                return out, tree_map(lambda o: lax.full_like(o, 0), out)
            return out, functools.reduce(lambda a, b: tree_map(lambda x, y: x + y, a, b), terms)
        self.defjvp(jvp)

    def _missing_rule(self) -> str | None:
        if self.jvp is None:
            return f"No JVP defined for custom_jvp function {fun_name(self.fun)} using defjvp."
        return None

    def _bind(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        assert self.jvp is not None
        full = _resolve(self.fun, args, kwargs, self.nondiff_argnums)
        static, dyn = _split(full, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(tuple(dyn))
        avals = [abstractify(x, f"args[{i}]", "custom_jvp") for i, x in enumerate(leaves)]
        fun = lambda *d: self.fun(*_merge(self.nondiff_argnums, static, d))  # noqa: E731
        known = leaves if all(map(is_concretizable, leaves)) else None
        f = _trace(fun, avals, in_tree, "custom_jvp", name, known)
        t_avals = [tangent_aval(a) for a in avals if dt.is_inexact(a.dtype)]
        rule = self.jvp
        rule_error = None
        try:
            # With symbolic zeros, the tangent of an input that cannot carry one (a
            # constant, or a value computed from constants) is a SymbolicZero, as in JAX.
            zeros = [not p for p in perturbed(leaves, ever=True)] if self.symbolic_zeros \
                else [False] * len(leaves)
            rj = self._traced_rule(rule, f, static, avals, t_avals, in_tree, name, known,
                                   zeros)
        except Exception as exc:  # noqa: BLE001  (any error of the user's rule)
            # JAX calls a JVP rule only when differentiating: the call must still work,
            # and the rule's error is raised when a JVP is taken.
            rule_error = defer_rule_error(exc, f"the custom_jvp rule {fun_name(rule)} of "
                                               f"{name}")
            rj = self._traced_rule(_zero_tangents(f), f, (), avals, t_avals, in_tree, name,
                                   known, [False] * len(leaves))
        consts = f.closed.consts + rj.closed.consts
        call = _with_consts(f, consts, 0)
        jvp_j = _with_consts(rj, consts, len(f.closed.consts))
        outs_ = bind(custom_jvp_call_p, *consts, *leaves, name=name, call_jaxpr=call,
                     jvp_jaxpr=jvp_j, num_consts=len(consts), symbolic_zeros=self.symbolic_zeros,
                     rule_error=rule_error)
        return tree_unflatten(f.out_tree, outs_)

    def _traced_rule(self, rule: Callable[..., Any], f: TracedFunction, static: Any,
                     avals: list[ShapedArray], t_avals: list[ShapedArray], in_tree: PyTreeDef,
                     name: str, known: Sequence[Any] | None, zeros: Sequence[bool]
                     ) -> TracedFunction:
        """``rule`` traced on the primals and tangents (a ``SymbolicZero`` for the
        inputs marked in ``zeros``), its outputs checked, and the tangents of non-inexact
        outputs dropped."""
        inexact = [dt.is_inexact(a.dtype) for a in avals]
        frame = _SelfCall(static, f)

        def jvp_flat(*flat: Any) -> Any:
            primals = flat[:len(avals)]
            frame.inputs = primals
            tangents = fill_in(inexact, flat[len(avals):], avals, float0_zeros)
            tangents = [SymbolicZero(a.to_tangent_aval()) if z else t
                        for t, a, z in zip(tangents, avals, zeros)]
            p = tree_unflatten(in_tree, primals)
            t = tree_unflatten(in_tree, tangents)
            try:
                out = rule(*static, p, t)
            finally:
                frame.inputs = ()  # (not kept past the trace: no tracer outlives it)
            if isinstance(out, tuple | list) and len(out) == 2:
                # A rule may return JAX's SymbolicZero for a tangent (equinox's do).
                out = (out[0], tree_map(_instantiated, out[1],
                                        is_leaf=lambda x: type(x) is SymbolicZero))
            return out

        self._self_calls.append(frame)
        try:
            rj = _trace(jvp_flat, avals + t_avals,
                        tree_structure((0,) * (len(avals) + len(t_avals))), "custom_jvp rule", name,
                        None if known is None else [*known, *[None] * len(t_avals)])
        finally:
            self._self_calls.pop()
        kids = rj.out_tree.children() if rj.out_tree.num_nodes > 1 else []
        if len(kids) != 2:
            raise TypeError(f"Custom JVP rule {fun_name(rule)} for function {name} must produce a "
                            "pair (list or tuple of length two) representing primal and tangent "
                            f"outputs, but got {rj.out_tree}.")
        n_out = kids[0].num_leaves
        outs = shaped_avals(rj.closed.jaxpr.out_avals)
        _check_same(f"Custom JVP rule {fun_name(rule)} primal outputs vs {name}",
                    f.closed.jaxpr.out_avals, outs[:n_out], f.out_tree, kids[0])
        if kids[1] != kids[0]:
            raise TypeError(f"Custom JVP rule {fun_name(rule)} for function {name} must produce "
                            f"primal and tangent outputs with equal container (pytree) structures, "
                            f"but got {kids[0]} and {kids[1]}.")
        out_inexact = [dt.is_inexact(a.dtype) for a in shaped_avals(f.closed.jaxpr.out_avals)]
        for i, (p_a, t_a, ok) in enumerate(zip(outs[:n_out], outs[n_out:], out_inexact)):
            if ok and (t_a.shape != p_a.shape or t_a.dtype != p_a.dtype):
                raise TypeError(f"Custom JVP rule {fun_name(rule)} for function {name} must "
                                f"produce tangents of the primal outputs' types: output {i} is "
                                f"{p_a.str_short(short_dtypes=False)} but its tangent is "
                                f"{t_a.str_short(short_dtypes=False)}")
        # Keep the tangents of inexact outputs only; drop what then goes unused.
        keep = [True] * n_out + out_inexact
        rj = attrs.evolve(rj, closed=rj.closed.replace(jaxpr=dce_jaxpr(rj.closed.jaxpr, keep)[0]))
        return rj


class custom_vjp(_CustomFunction[P, R]):
    """A function with a custom VJP (``defvjp(fwd, bwd)``)."""

    def __init__(self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()) -> None:
        super().__init__(fun, nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any],
               symbolic_zeros: bool = False) -> None:
        """``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff_args, residuals, ct) -> cts``
        (a tuple with one entry per differentiable argument; ``None`` for zero)."""
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros

    def _missing_rule(self) -> str | None:
        if self.fwd is None or self.bwd is None:
            return f"No VJP defined for custom_vjp function {fun_name(self.fun)} using defvjp."
        return None

    def _bind(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        assert self.fwd is not None and self.bwd is not None
        full = _resolve(self.fun, args, kwargs, self.nondiff_argnums)
        static, dyn = _split(full, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(tuple(dyn))
        avals = [abstractify(x, f"args[{i}]", "custom_vjp") for i, x in enumerate(leaves)]
        nd = self.nondiff_argnums
        known = leaves if all(map(is_concretizable, leaves)) else None
        def fun(*d: Any) -> Any:
            return self.fun(*_merge(nd, static, d))
        f = _trace(fun, avals, in_tree, "custom_vjp", name, known)
        rule_error = None
        flags = perturbed(leaves, ever=True) if self.symbolic_zeros else None
        try:
            fw, bw = self._traced_rules(self.fwd, self.bwd, f, nd, static, avals, in_tree, name,
                                        known, flags)
        except Exception as exc:  # noqa: BLE001  (any error of the user's rules)
            # As for custom_jvp: JAX runs the rules only when differentiating.
            rule_error = defer_rule_error(exc, f"the custom_vjp rules {fun_name(self.fwd)} and "
                                               f"{fun_name(self.bwd)} of {name}")
            fw, bw = self._traced_rules(lambda *d: (_replay(f)(*d), ()),
                                        lambda res, ct: (None,) * len(in_tree.children()),
                                        f, (), (), avals, in_tree, name, known, None)
        consts = f.closed.consts + fw.closed.consts + bw.closed.consts
        call = _with_consts(f, consts, 0)
        fwd_j = _with_consts(fw, consts, len(f.closed.consts))
        # bwd's own consts lead its inputs: they travel with the residuals.
        bwd_j = ClosedJaxpr(convert_constvars(bw.closed.jaxpr).replace(debug_info=None))
        outs = bind(custom_vjp_call_p, *consts, *leaves, name=name, call_jaxpr=call,
                    fwd_jaxpr=fwd_j, bwd_jaxpr=bwd_j, num_consts=len(consts),
                    symbolic_zeros=self.symbolic_zeros, rule_error=rule_error)
        return tree_unflatten(f.out_tree, outs)

    def _traced_rules(self, fwd_fun: Callable[..., Any], bwd_fun: Callable[..., Any],
                      f: TracedFunction, nd: tuple[int, ...], static: Any,
                      avals: list[ShapedArray], in_tree: PyTreeDef, name: str,
                      known: Sequence[Any] | None, perturbed: Sequence[bool] | None
                      ) -> tuple[TracedFunction, TracedFunction]:
        """``fwd_fun`` and ``bwd_fun`` traced (bwd on fwd's residuals and the output
        cotangents) and their outputs checked; with symbolic zeros, fwd's arguments are
        ``CustomVJPPrimal``s marked ``perturbed`` as given."""
        frame = _SelfCall(static, f)

        def fwd_flat(*d: Any) -> Any:
            frame.inputs = d
            try:
                if perturbed is not None:
                    wrapped = [CustomVJPPrimal(x, p)
                               for x, p in zip(tree_flatten(tuple(d))[0], perturbed)]
                    return fwd_fun(*_merge(nd, static, tree_unflatten(in_tree, wrapped)))
                return fwd_fun(*_merge(nd, static, d))
            finally:
                frame.inputs = ()  # (not kept past the trace: no tracer outlives it)

        self._self_calls.append(frame)
        try:
            fw = _trace(fwd_flat, avals, in_tree, "custom_vjp fwd", name, known)
        finally:
            self._self_calls.pop()
        kids = fw.out_tree.children() if fw.out_tree.num_nodes > 1 else []
        if len(kids) != 2:
            raise TypeError(f"Custom VJP fwd rule {fun_name(fwd_fun)} for function {name} must "
                            f"produce a pair (out, residuals), but got {fw.out_tree}.")
        n_out = kids[0].num_leaves
        _check_same(f"Custom VJP fwd rule {fun_name(fwd_fun)} primal outputs vs {name}",
                    f.closed.jaxpr.out_avals, fw.closed.jaxpr.out_avals[:n_out], f.out_tree,
                    kids[0])
        res_tree = kids[1]
        res_avals = list(shaped_avals(fw.closed.jaxpr.out_avals[n_out:]))
        out_avals = list(shaped_avals(f.closed.jaxpr.out_avals))
        out_inexact = [dt.is_inexact(a.dtype) for a in out_avals]
        in_inexact = [dt.is_inexact(a.dtype) for a in avals]
        ct_avals = [a for a, ok in zip(out_avals, out_inexact) if ok]

        # Python scalars among the residuals reach bwd as they are, as in JAX (equinox's
        # bwd rules branch on Python bools fwd returns).
        py_res = {i: r for i, r in enumerate(fw.outs[n_out:])
                  if type(r) in (bool, int, float, complex)}

        def bwd_flat(*flat: Any) -> list[Any]:
            res = tree_unflatten(res_tree, [py_res.get(i, x)
                                            for i, x in enumerate(flat[:len(res_avals)])])
            cts = fill_in(out_inexact, flat[len(res_avals):], out_avals, float0_zeros)
            ct = tree_unflatten(f.out_tree, cts)
            out = bwd_fun(*static, res, ct)
            return _bwd_leaves(out, in_tree, avals, in_inexact, name, bwd_fun)

        # bwd may branch on the residuals' values (fwd's outputs know them), not the cotangents'.
        res_known = fw.outs[n_out:] if known is not None else None
        bw = _trace(bwd_flat, res_avals + ct_avals,
                    tree_structure((0,) * (len(res_avals) + len(ct_avals))), "custom_vjp bwd", name,
                    None if res_known is None else [*res_known, *[None] * len(ct_avals)])
        return fw, bw


def _instantiated(t: Any) -> Any:
    return zeros_for(t.aval) if type(t) is SymbolicZero else t


def _bwd_leaves(out: Any, in_tree: PyTreeDef, avals: Sequence[ShapedArray],
                inexact: Sequence[bool], name: str, bwd: Callable[..., Any]) -> list[Any]:
    """The bwd rule's cotangents, one per inexact input leaf (``None`` means zeros)."""
    n_args = len(in_tree.children())
    if not isinstance(out, tuple | list) or len(out) != n_args:
        raise TypeError(f"Custom VJP bwd rule {fun_name(bwd)} for function {name} must produce a "
                        f"tuple of length equal to the number of differentiable arguments "
                        f"({n_args}), but got {type(out).__name__}"
                        + (f" of length {len(out)}" if isinstance(out, tuple | list) else ""))
    leaves: list[Any] = []
    where: list[str] = []
    for k, (sub, ct) in enumerate(zip(in_tree.children(), out)):
        n = sub.num_leaves
        where += [f"output[{k}]{keystr(p)}"
                  for p, _ in tree_flatten_with_path(tree_unflatten(sub, [0] * n))[0]]
        if ct is None:
            leaves += [None] * n
            continue
        try:
            # As JAX: the cotangent is a prefix of the argument, each of its leaves
            # standing for the leaves of its subtree there (a None for zeros; a leaf
            # where the argument has an empty subtree, such as None, for nothing).
            leaves += broadcast_prefix(ct, tree_unflatten(sub, [0] * n), "bwd")
            continue
        except TreePrefixError:
            pass
        # Failing that, any container of the argument's leaves, one for one.
        ct_leaves, ct_tree = tree_flatten(ct, is_leaf=lambda x: x is None)
        if len(ct_leaves) != n:
            raise TypeError(f"Custom VJP bwd rule {fun_name(bwd)} for function {name} must "
                            f"produce cotangents of the arguments' structure {sub}, but got "
                            f"{ct_tree}")
        leaves += ct_leaves
    result = []
    for ct, a, ok, w in zip(leaves, avals, inexact, where):
        if not ok:
            continue
        if ct is None or type(ct) is SymbolicZero or getattr(ct, "dtype", None) == dt.float0:
            result.append(lax.full(a.shape, 0, a.dtype))
            continue
        ca = abstractify(ct, "cotangent", "custom_vjp bwd")
        if ca.shape != a.shape or ca.dtype != a.dtype:
            # ValueError, as JAX raises here.
            raise ValueError(f"Custom VJP bwd rule {fun_name(bwd)} for function {name} must "
                             f"produce cotangents of the arguments' types, but at {w} it "
                             f"produced {ca.str_short(short_dtypes=False)} for an argument of type "
                             f"{a.str_short(short_dtypes=False)}")
        result.append(ct)
    return result

"""Tracing: one staging mechanism behind every transformation.

A thread-local stack of :class:`Trace`\\ s, each recording into a
:class:`~plait.ir.Builder`.  :func:`bind` stages every primitive application
into the innermost trace (omnistaging), and runs it eagerly when no trace is
active.  Tracers of an outer trace used inside an inner one are captured as
constvars of the inner jaxpr; constants (NumPy arrays, concrete Arrays) are
hoisted to constvars and scalars become literals.  A tracer used after its
trace ended raises :class:`~plait.errors.UnexpectedTracerError`.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast

import jaxlib._jax as _jax
import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.host_values import as_host_array, scalar_literal
from plait.frontend.core.leaks import check_leaks
from plait.frontend.core.run_guards import check_tracing
from plait.frontend.core.source_lines import scopes, user_frame_info
from plait.frontend.core.tokens import Token
from plait.frontend.core.trace_base import BaseTrace, BaseTracer
from plait.frontend.core.tracer_messages import (
    concrete_message,
    differentiated_message,
    leak_message,
)
from plait.frontend.core.tracer_reprs import tracer_repr
from plait.ir import config
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractValue, ShapedArray
from plait.ir.builder import Builder
from plait.ir.debug_info import DebugInfo
from plait.ir.dims import DimExpr, set_value_hook
from plait.ir.errors import (
    ConcretizationTypeError,
    RefError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr
from plait.ir.primitive import Primitive, set_bind_hook
from plait.transforms.key_reuse import check_key_reuse_jaxpr

__all__ = ["Trace", "Tracer", "bind", "bind1", "bind_n", "current_trace", "user_trace", "new_trace",
           "trace_flat", "is_traced", "is_concretizable"]


class _TraceState(threading.local):
    def __init__(self) -> None:
        self.stack: list[Trace] = []
        self.user: BaseTrace | None = None
        """The current trace when it is not a staging one: a library's trace (see
        :mod:`plait.frontend.api.user_traces`), or eager evaluation made current inside
        a staging trace; else ``None`` (the innermost staging trace, or none)."""


_state = _TraceState()

# Inside a trace a jitted call is staged, never run.  jit's C++ dispatcher cannot see
# the trace stack: it keys its cache on this thread-local flag, so that a call made
# while tracing never finds an executable cached by a call made outside.
_tracing_flag = _jax.config.Config("plait_tracing", False, include_in_jit_key=True)


def current_trace() -> Trace | None:
    """The innermost staging trace when it is the current one, else ``None`` (running
    eagerly, or under a library's trace: see :func:`user_trace`)."""
    stack = _state.stack
    return stack[-1] if stack and _state.user is None else None


def user_trace() -> BaseTrace | None:
    """The current trace when it is not a staging trace (a library's, or eager evaluation
    made current inside a staging trace), else ``None``.  Under it, an operation that
    would run eagerly binds its primitive instead, for that trace to process."""
    return _state.user


class Trace(BaseTrace):
    """A staging trace: the builder it records into and what it captured."""

    __slots__ = ("builder", "active", "invars", "debug_info", "purpose",
                 "_const_index", "consts", "known", "_producers", "_scanned", "differentiated",
                 "saved_user", "batch")

    def __init__(self, purpose: str, debug_info: DebugInfo | None) -> None:
        self._invalidated = False
        self.saved_user: BaseTrace | None = None
        """The current library trace this trace was entered under (restored when it ends)."""
        self.builder = Builder()
        self.known: dict[Var, Any] | None = None
        """For a trace of concrete arguments (autodiff outside ``jit``): the values known
        so far, by variable (a concrete array, or an outer tracer to ask); else ``None``."""
        self.batch: tuple[int, dict[Var, int]] | None = None
        """For a ``vmap`` trace: the batch size and each argument's batch dimension (what
        its tracers print; see :mod:`~plait.frontend.core.tracer_reprs`)."""
        self.differentiated = True
        """Whether the known arguments are being differentiated: conversions that would
        drop a derivative (``float`` ...) are then refused (not for partial evaluation)."""
        self._producers: dict[Var, Eqn] = {}
        self._scanned = 0  # how many of the builder's equations _producers covers
        self.active = True
        self.invars: list[Var] = []
        self.debug_info = debug_info
        self.purpose = purpose
        # By id, with the object itself: kept alive, its id cannot be reused by another.
        self._const_index: dict[int, tuple[Var, Any]] = {}
        self.consts: list[tuple[Var, Any]] = []
        """(constvar, value) in first-use order; a value is an array or an outer Tracer."""

    def __repr__(self) -> str:
        return f"Trace({self.purpose}{'' if self.active else ', ended'})"

    def process_primitive(self, primitive: Primitive, tracers: Sequence[Any],
                          params: dict[str, Any], /) -> Any:
        """``primitive`` staged into this trace (for a library's trace whose parent it is)."""
        if not _state.stack or _state.stack[-1] is not self:
            raise NotImplementedError(f"process_primitive: expected the innermost staging "
                                      f"trace, but got {self!r}")
        saved = enter_user_trace(None)
        try:
            return bind(primitive, *tracers, **params)
        finally:
            leave_user_trace(saved)

    def stage_value(self, val: Any) -> Any:
        """``val`` as a value of this trace."""
        if type(val) is Tracer and val._trace is self:
            return val
        a = self.to_atom(val)
        return Tracer(self, a) if type(a) is Var else val

    def new_arg(self, aval: AbstractValue) -> Tracer:
        """A fresh input of this trace."""
        v = Var(aval)
        self.invars.append(v)
        return Tracer(self, v)

    def to_atom(self, x: Any) -> Atom:
        """The atom standing for ``x`` in this trace (capturing or hoisting as needed)."""
        if type(x) is Tracer:
            if x._trace is self:
                return x._var
            return self._capture(x)
        if type(x) is Literal:
            return x
        if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
            return scalar_literal(x)
        if type(x) is DimExpr:  # a symbolic size used as a number
            return self.builder.bind(P.dim_as_value_p, (), {"dim": x}, None)[0]
        if isinstance(x, BaseTracer):
            return self._capture(x)
        return self._hoist(x)

    def _capture(self, t: BaseTracer) -> Var:
        """A tracer of an enclosing trace, or of a library's trace, used here: a constvar
        (the equation that will hold this jaxpr takes the tracer as an operand)."""
        staged = type(t) is Tracer
        if staged and not cast(Tracer, t)._trace.active:
            raise UnexpectedTracerError(leak_message(cast(Tracer, t)))
        hit = self._const_index.get(id(t))
        if hit is not None:
            return hit[0]
        aval = t.aval  # (an outer trace's may be a token's)
        if not staged and not isinstance(aval, ShapedArray):
            raise TypeError(f"expected a tracer with an array type (a ShapedArray aval), "
                            f"but got {type(t).__name__} with aval {aval!r}")
        v = Var(aval)
        self._const_index[id(t)] = (v, t)
        self.consts.append((v, t))
        if staged and self.known is not None:  # (a library's tracer has no value to ask)
            self.known[v] = t
        return v

    def _hoist(self, x: Any) -> Atom:
        if type(x) is Token:
            # A token carries no data, and orders nothing across programs: a captured one
            # is a fresh token of this program.
            return self.builder.bind(P.create_token_p, (), {}, None)[0]
        aval = getattr(x, "aval", None)
        if not isinstance(aval, ShapedArray):  # host data (or another library's array)
            arr = as_host_array(x)
            aval = ShapedArray(arr.shape, arr.dtype)
        else:
            arr = x
        # float0 (the tangent type of integers) and keys have no scalar value to write
        # inline (both are record dtypes).
        if aval.shape == () and aval.dtype.names is None:
            return Literal(np.asarray(arr).item(), aval)
        hit = self._const_index.get(id(x))
        if hit is not None:
            return hit[0]
        v = Var(aval)
        self._const_index[id(x)] = (v, x)
        self.consts.append((v, arr))
        if self.known is not None:
            self.known[v] = arr
        return v

    def close(self) -> None:
        """Mark the trace ended: its tracers may no longer be used."""
        self.active = False
        self._invalidated = True

    def value_of(self, var: Var) -> Any | None:
        """The concrete value of ``var``, computed on demand from the known arguments
        (each equation it depends on run eagerly, once); ``None`` when not knowable.

        This is how autodiff outside ``jit`` lets Python branch on values, as JAX's
        tracers that carry their primal value do: nothing is computed until a value
        is asked for.
        """
        known = self.known
        if known is None:
            return None
        producers = self._producers
        eqns = self.builder.eqns
        for e in eqns[self._scanned:]:
            for o in e.outvars:
                producers[o] = e
        self._scanned = len(eqns)
        stack = [var]
        while stack:
            v = stack[-1]
            if v in known:
                stack.pop()
                continue
            eqn = producers.get(v)
            if eqn is None:
                return None
            missing = [a for a in eqn.invars if type(a) is Var and a not in known]
            if missing:
                stack.extend(missing)
                continue
            args = []
            for a in eqn.invars:
                x = a if type(a) is Literal else _resolved(known, a)
                if x is None:
                    return None
                args.append(x)
            assert _eager_impl is not None
            outs = _eager_impl(eqn.primitive, args, eqn.params)
            for o, x in zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]):
                known[o] = x
            stack.pop()
        return _resolved(known, var)

    @property
    def main(self) -> Trace:
        """The trace itself (JAX's ``Trace.main``, which libraries compare by identity)."""
        return self

    def depend_on_inputs(self, vars: Sequence[Var], captured: Sequence[Var] | None = None
                         ) -> list[bool]:
        """Whether each of ``vars`` depends on an input with a tangent space (a value
        being differentiated) or on a captured outer traced value (those of ``captured``;
        by default all), through values that carry tangents: inexact ones, not through
        ``stop_gradient`` (as JAX's symbolic zeros)."""
        live = {v for v in self.invars if _has_tangents(v)}
        live.update(captured if captured is not None else
                    [v for v, c in self.consts if type(c) is Tracer])
        _propagate(self.builder.eqns, live)
        return [v in live for v in vars]


def _propagate(eqns: Sequence[Eqn], live: set[Var]) -> None:
    """Add to ``live`` the outputs of ``eqns`` that carry tangents from a live value; a
    call's outputs each from the inputs its body uses for it (as JAX's per-output
    symbolic zeros)."""
    for eqn in eqns:
        if eqn.primitive is P.stop_gradient_p or \
                not any(type(a) is Var and a in live for a in eqn.invars):
            continue
        body = _CALL_BODIES.get(eqn.primitive)
        if body is None:
            live.update(v for v in eqn.outvars if _has_tangents(v))
            continue
        inner: Jaxpr = eqn.params[body].jaxpr
        inner_live = {v for v, a in zip(inner.invars, eqn.invars) if type(a) is Var and a in live}
        _propagate(inner.eqns, inner_live)
        live.update(v for v, a in zip(eqn.outvars, inner.outvars)
                    if type(a) is Var and a in inner_live and _has_tangents(v))


_CALL_BODIES = {P.jit_p: "jaxpr", P.remat_p: "jaxpr"}
"""Call primitives whose body maps the equation's inputs to its outputs one to one, by
the name of the body's param."""


def _has_tangents(v: Var) -> bool:
    return type(v.aval) is ShapedArray and dt.is_inexact(v.aval.dtype)


def _resolved(known: dict[Var, Any], v: Var) -> Any | None:
    """``known[v]``, asking an outer tracer for its value (and remembering it)."""
    x = known[v]
    if type(x) is Tracer:
        x = x._trace.value_of(x._var)
        if x is not None:
            known[v] = x
    return x


_values = config.values
_eager_impl: Callable[[Primitive, Sequence[Any], dict[str, Any]], Any] | None = None
_user_bind: Callable[[BaseTrace, Primitive, Sequence[Any], dict[str, Any]], Any] | None = None


def set_eager_impl(impl: Callable[[Primitive, Sequence[Any], dict[str, Any]], Any]) -> None:
    """Install the function that runs a primitive outside any trace."""
    global _eager_impl
    _eager_impl = impl


def set_user_bind(fn: Callable[[BaseTrace, Primitive, Sequence[Any], dict[str, Any]], Any]
                  ) -> None:
    """Install the function that hands a primitive to the current library trace."""
    global _user_bind
    _user_bind = fn


def enter_user_trace(trace: BaseTrace | None) -> BaseTrace | None:
    """Make ``trace`` (a library's, or eager evaluation; ``None``: the innermost staging
    trace) the current one; returns the one it replaces, for :func:`leave_user_trace`."""
    saved, _state.user = _state.user, trace
    _tracing_flag.set_local(bool(_state.stack) or trace is not None)
    return saved


def leave_user_trace(saved: BaseTrace | None) -> None:
    """Restore the current trace :func:`enter_user_trace` replaced."""
    _state.user = saved
    _tracing_flag.set_local(bool(_state.stack) or saved is not None)


def bind(prim: Primitive, /, *args: Any, **params: Any) -> Any:
    """Apply ``prim``: staged into the innermost trace, or run eagerly, or processed by the
    current library trace."""
    state = _state
    if state.user is not None:
        assert _user_bind is not None
        return _user_bind(state.user, prim, args, params)
    stack = state.stack
    if not stack:
        assert _eager_impl is not None
        return _eager_impl(prim, args, params)
    if _values.eager_constant_folding and not any(type(a) is Tracer for a in args):
        # ensure_compile_time_eval: nothing traced flows in, so compute it now.
        assert _eager_impl is not None
        return _eager_impl(prim, args, params)
    trace = stack[-1]
    atoms = tuple([a._var if type(a) is Tracer and a._trace is trace else trace.to_atom(a)
                   for a in args])
    if prim is P.convert_element_type_p and type(atoms[0]) is Literal and \
            params.get("sharding") is None and params["new_dtype"].names is None and \
            atoms[0].aval.dtype.names is None:  # (not float0, nor keys)
        # A scalar constant converted: folded now, as JAX folds it (the trace gets the
        # converted literal, not a convert_element_type of one).
        assert _eager_impl is not None
        return _eager_impl(prim, args, params)
    src = user_frame_info() if _values.source_info else None
    outs = trace.builder.bind(prim, atoms, params, src)
    if prim.multiple_results:
        return [Tracer(trace, v) for v in outs]
    return Tracer(trace, outs[0])


set_bind_hook(lambda prim, args, params: bind(prim, *args, **params))


class _BindOne(Protocol):
    def __call__(self, prim: Primitive, /, *args: Any, **params: Any) -> Array: ...


class _BindMany(Protocol):
    def __call__(self, prim: Primitive, /, *args: Any, **params: Any) -> list[Array]: ...


bind1: _BindOne = bind
""":func:`bind` of a primitive with one result (``not prim.multiple_results``), typed:
it returns a Tracer or, run eagerly, a concrete Array."""

bind_n: _BindMany = bind
""":func:`bind` of a primitive with ``multiple_results``, typed: it returns a list of Arrays."""


def is_traced(x: Any) -> bool:
    """Whether ``x`` is a tracer (an abstract value of an active or ended trace)."""
    return type(x) is Tracer


class Tracer(BaseTracer):
    """A value inside a trace: it knows its type, not its contents.

    Tracers support the array API of :mod:`plait.numpy` through operators
    and methods.  Converting one to a concrete Python value (``bool``,
    ``int``, ``float``, a NumPy array) is an error naming the line.
    """

    __slots__ = ("_var",)
    __array_priority__ = 100
    _trace: Trace

    def __init__(self, trace: Trace, var: Var) -> None:
        self._trace = trace
        self._var = var

    @property
    def aval(self) -> ShapedArray:
        """The abstract value (type) of the traced value."""
        # A trace's variables have array types, but for tokens (lax.create_token), which
        # only lax.after_all, jit and returning them take: array code never sees one.
        return cast(ShapedArray, self._var.aval)

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape."""
        return cast(ShapedArray, self._var.aval).shape  # (an array type: see aval)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype."""
        return cast(ShapedArray, self._var.aval).dtype  # (an array type: see aval)

    @property
    def weak_type(self) -> bool:
        """Whether the dtype is weak (derived from Python scalars only)."""
        return cast(ShapedArray, self._var.aval).weak_type  # (an array type: see aval)

    def __repr__(self) -> str:
        return tracer_repr(self)

    def _known(self, what: str, cls: type[TracerError], keeps_derivative: bool = True) -> Any:
        """The concrete value, where one is known (autodiff outside ``jit`` on concrete
        arguments, as in JAX); else the error ``cls`` naming the line.

        Conversions that would silently drop a derivative (``float``, ``complex``,
        ``tolist``, NumPy) are refused for values being differentiated, as JAX refuses
        them; ``bool``, ``int``, indexing and ``item`` are allowed.
        """
        trace = self._trace
        if trace.known is not None:
            value = trace.value_of(self._var)
            if value is not None:
                if not keeps_derivative and trace.differentiated and \
                        trace.depend_on_inputs([self._var])[0]:
                    raise cls(differentiated_message(self, what))
                return value
        raise cls(concrete_message(self, what))

    def __bool__(self) -> bool:
        return bool(self._known("boolean conversion (if, while, and, or, not, assert)",
                                TracerBoolConversionError))

    def __index__(self) -> int:
        return operator.index(self._known("conversion to a Python int (an index, range or "
                                          "shape)", TracerIntegerConversionError))

    def __int__(self) -> int:
        return int(self._known("conversion with int()", ConcretizationTypeError))

    def __float__(self) -> float:
        return float(self._known("conversion with float()", ConcretizationTypeError, False))

    def __complex__(self) -> complex:
        return complex(self._known("conversion with complex()", ConcretizationTypeError, False))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self._known("conversion to a NumPy array (np.asarray, a NumPy function)",
                            TracerArrayConversionError, False)
        return np.asarray(value, dtype)

    def tolist(self) -> Any:
        """The contents as nested lists; only for a value known during tracing."""
        return np.asarray(self._known("conversion with tolist()", ConcretizationTypeError,
                                      False)).tolist()

    def item(self, *args: int) -> Any:
        """An element as a Python scalar (the only one, or the one ``args`` index); only
        for a value known during tracing."""
        known = self._known("conversion with item()", ConcretizationTypeError)
        return np.asarray(known).item(*args)


class ForeignRef(BaseException):
    """Internal signal: ``ref`` (a :class:`~plait.frontend.core.refs.Ref`) was used in
    ``trace``, which it does not belong to.

    A ``BaseException``, so that a user's ``except Exception`` inside a traced
    function cannot swallow it.  :func:`trace_flat` marks it claimed by the token
    its caller passed, or turns it into a :class:`~plait.errors.RefError` when the
    caller cannot carry Refs.
    """

    def __init__(self, ref: Any, trace: Trace) -> None:
        super().__init__("a Ref used in a trace it does not belong to")
        self.ref = ref
        self.trace = trace
        self.claimed_by: object = None


def new_trace(purpose: str, debug_info: DebugInfo | None) -> Trace:
    """Push a fresh trace; pair with :func:`pop_trace`."""
    t = Trace(purpose, debug_info)
    if not _state.stack:
        _tracing_flag.set_local(True)
    _state.stack.append(t)
    if _state.user is not None:  # (the new trace is current until it ends)
        t.saved_user, _state.user = _state.user, None
    return t


def pop_trace(trace: Trace) -> None:
    """Pop ``trace`` (the innermost) and mark it ended."""
    popped = _state.stack.pop()
    assert popped is trace, "trace stack corrupted"
    _state.user = trace.saved_user
    if not _state.stack and trace.saved_user is None:
        _tracing_flag.set_local(False)
    trace.close()


def trace_flat(fun: Callable[..., Sequence[Any]], in_avals: Sequence[AbstractValue],
               purpose: str, debug_info: DebugInfo | None,
               known_args: Sequence[Any] | None = None, refs: object = None,
               differentiated: bool = True) -> tuple[ClosedJaxpr, list[Any]]:
    """Trace ``fun`` (flat list of inputs to flat list of outputs) to a closed jaxpr.

    With ``known_args`` (one value per input, ``None`` where unknown), the trace
    knows concrete values and ``bool(x)``, ``int(x)`` ... work on the tracers (see
    :meth:`Trace.value_of`); the jaxpr is then specialized to the branches taken.  Unless
    ``differentiated`` is false, ``float(x)`` and other conversions that would drop a
    derivative are refused on values computed from the arguments.

    ``refs`` is the token of a caller that carries Refs (see
    :func:`~plait.frontend.core.refs.carrying_refs`): a Ref of an enclosing trace used
    here raises :class:`ForeignRef` claimed by it; without a token, a
    :class:`~plait.errors.RefError`.

    Returns the closed jaxpr, whose consts may include tracers of enclosing
    traces (captured values), and the raw outputs ``fun`` returned.
    """
    check_tracing(purpose, debug_info.func_name if debug_info is not None else "function")
    trace = new_trace(purpose, debug_info)
    # The equations' name stacks are relative to this jaxpr, as JAX's (the equation that
    # will hold it has the enclosing stack); a cached jaxpr then fits every caller.
    outer_scopes, scopes.name_stack = scopes.name_stack, ""
    try:
        args = [trace.new_arg(a) for a in in_avals]
        if known_args is not None:
            trace.known = {t._var: x for t, x in zip(args, known_args, strict=True)
                           if x is not None}
            trace.differentiated = differentiated
        outs = list(fun(*args))
        out_atoms = [trace.to_atom(o) for o in outs]
    except ForeignRef as e:
        if e.trace is not trace:
            raise
        if refs is None:
            raise RefError(f"a Ref created outside this {purpose} is used inside it, which "
                           f"{purpose} does not support; read its value outside "
                           "(ref[...]) and pass that in, or return the new value and write "
                           "it to the Ref after the call. jit, scan, fori_loop, while_loop "
                           "and cond carry Refs they close over; jit and vmap take Refs as "
                           "arguments") from None
        e.claimed_by = refs
        raise
    finally:
        pop_trace(trace)
        scopes.name_stack = outer_scopes
    constvars = [v for v, _ in trace.consts]
    jaxpr: Jaxpr = trace.builder.build(trace.invars, out_atoms, constvars, debug_info)
    if config.values.debug_key_reuse:
        check_key_reuse_jaxpr(jaxpr)
    if config.values.check_tracer_leaks:
        del args
        kept = {id(o) for o in outs}
        check_leaks(trace, lambda o: type(o) is Tracer and o._trace is trace and id(o) not in kept,
                    debug_info.func_name if debug_info else "a function", purpose)
    return ClosedJaxpr(jaxpr, tuple(c for _, c in trace.consts)), outs


def is_concretizable(x: Any) -> bool:
    """Whether ``x`` has (or may have, on demand) a concrete value: a concrete array or
    scalar, or a tracer of a trace of concrete arguments."""
    return type(x) is not Tracer or x._trace.known is not None


def has_value(x: Any) -> bool:
    """Whether ``x``'s concrete value is known now: not a tracer, or a tracer whose value
    its trace can compute (inside ``vmap``, one computed from constants alone)."""
    return type(x) is not Tracer or x._trace.value_of(x._var) is not None


def _dimension_value(d: DimExpr) -> Any:
    """A symbolic dimension as a traced integer scalar (``dim_as_value``)."""
    if not _state.stack:
        raise TypeError(f"the symbolic dimension {d} is a number only inside a traced "
                        "function (export a jitted function with symbolic shapes)")
    return bind(P.dim_as_value_p, dim=d)


set_value_hook(_dimension_value)

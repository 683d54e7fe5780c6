"""Primitives defined the way JAX code defines them (``plait.extend.core.Primitive``).

A JAX library defines an operation with ``Primitive("name")`` and registers its
rules afterwards: ``def_impl``, ``def_abstract_eval``, ``ad.primitive_jvps``,
``ad.primitive_transposes``, ``batching.primitive_batchers`` and
``mlir.register_lowering``.  Those rules are ordinary traceable Python (they call
``bind`` and ``plait.numpy``), while plait's own rule tables hold rules that emit IR
through an :class:`~plait.transforms.emit.Emitter`.  This module bridges the two:
each registered rule becomes a table entry that traces the Python rule at the
equation's types and inlines the traced equations.

The primitive itself is an ordinary IR primitive (``open_params``: it takes any
hashable params), so its equations print, parse, check and transform like any
other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping, Sequence
from typing import Any

import numpy as np

from plait.frontend.api.hijax import Zero, instantiate_zeros
from plait.frontend.api.user_traces import EvalTrace
from plait.frontend.core.array_base import Array
from plait.frontend.core.tracing import Tracer, current_trace, trace_flat, user_trace
from plait.frontend.lax.ops import broadcast_in_dim, transpose
from plait.ir import dtypes as dt
from plait.ir import primitive as ir_primitive
from plait.ir.atoms import Atom, Literal
from plait.ir.avals import AbstractValue, ShapedArray, shaped
from plait.ir.caches import clear_caches
from plait.ir.config import values as _config
from plait.ir.errors import TransformError, missing_rule
from plait.transforms.custom_batching_rules import embed_const
from plait.transforms.emit import Emitter
from plait.transforms.emit import Zero as IRZero
from plait.transforms.inline import inline_jaxpr
from plait.transforms.jvp import jvp_rules, tangent_aval
from plait.transforms.transpose import UndefPrimal, transpose_rules
from plait.transforms.vmap import Dim, batching_rules, vmapped_axis

__all__ = ["Primitive", "UndefinedPrimal", "is_undefined_primal", "RuleTable",
           "primitive_jvps", "primitive_transposes", "primitive_batchers",
           "axis_primitive_batchers",
           "check_user_primitive", "trace_rule", "defjvp", "deflinear", "defvectorized"]


class Primitive(ir_primitive.Primitive):
    """An operation defined outside plait, as ``jax.extend.core.Primitive``.

    ``Primitive("name")``, then ``def_impl`` (run on concrete values),
    ``def_abstract_eval`` (the output types), and rules in the tables of
    ``plait.interpreters``.  ``multiple_results`` may be set after creation.
    """

    _impl: Callable[..., Any] | None
    _abstract_eval: Callable[..., Any] | None

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"Primitive: expected a non-empty name, but got {name!r}")
        object.__setattr__(self, "_impl", None)
        object.__setattr__(self, "_abstract_eval", None)
        super().__init__(name, self._typing, open_params=True)

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "multiple_results":
            raise AttributeError(f"Primitive {self.name!r}: only multiple_results can be set; "
                                 "rules are registered with def_impl, def_abstract_eval and "
                                 "the tables of plait.interpreters")
        object.__setattr__(self, name, bool(value))

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """Run ``impl(*args, **params)`` when the primitive is applied outside any trace."""
        object.__setattr__(self, "_impl", impl)
        return impl

    def def_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """``rule(*avals, **params)`` gives the output type (a list of them with
        ``multiple_results``)."""
        object.__setattr__(self, "_abstract_eval", rule)
        clear_caches()  # (programs traced with an earlier rule would be stale)
        return rule

    def def_effectful_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """Refused: plait's IR has no user-defined effects."""
        raise NotImplementedError(f"Primitive {self.name!r}: effectful primitives are not "
                                  "supported; use plait.experimental.io_callback for effects")

    @property
    def impl(self) -> Callable[..., Any] | None:
        """The implementation given to :meth:`def_impl` (``None`` before)."""
        return self._impl

    def bind(self, /, *args: Any, **params: Any) -> Any:
        """Apply the primitive: staged into the current trace, else run by its impl."""
        user = user_trace()
        if (current_trace() is None and (user is None or type(user) is EvalTrace)) or (
                _config.eager_constant_folding and not any(type(a) is Tracer for a in args)):
            impl = self._impl
            if impl is None:
                raise missing_rule("Evaluation", self.name, True)
            return impl(*[_operand(self.name, i, a) for i, a in enumerate(args)], **params)
        return super().bind(*args, **params)

    def _typing(self, *avals: AbstractValue, **params: Any) -> tuple[AbstractValue, ...]:
        rule = self._abstract_eval
        if rule is None:
            raise missing_rule("Abstract evaluation", self.name, True)
        out = rule(*avals, **params)
        if not self.multiple_results:
            return (_as_aval(self.name, out),)
        if not isinstance(out, list | tuple):
            raise TypeError(f"{self.name}: the abstract evaluation rule of a primitive with "
                            f"multiple_results must return a list of types, but got {out!r}")
        return tuple(_as_aval(self.name, o) for o in out)


def _operand(name: str, i: int, x: Any) -> Any:
    """An operand for an impl: arrays and scalars as given, a NumPy value in the dtype
    plait computes in (float32 while x64 is off), as JAX passes them."""
    if type(x) is Literal:  # (an operand of an equation run operation by operation)
        return np.asarray(x.val, x.aval.dtype)
    if isinstance(x, np.ndarray | np.generic):
        dtype = dt.canonicalize(x.dtype)
        return x if x.dtype == dtype else x.astype(dtype)
    if isinstance(x, bool | int | float | complex | Array):
        return x
    raise TypeError(f"{name}: expected an array or a scalar at position {i}, but got a "
                    f"{type(x).__name__} ({x!r})")


def _as_aval(name: str, x: Any) -> ShapedArray:
    if isinstance(x, ShapedArray):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):  # (ShapeDtypeStruct and the like)
        return ShapedArray(tuple(x.shape), x.dtype, getattr(x, "weak_type", False))
    raise TypeError(f"{name}: expected the abstract evaluation rule to return a "
                    f"plait.core.ShapedArray, but got {x!r}")


def check_user_primitive(prim: object, table: str) -> Primitive:
    """``prim``, refused unless made with ``plait.extend.core.Primitive`` (plait's own
    primitives' rules are part of plait and fixed)."""
    if not isinstance(prim, Primitive):
        raise TypeError(f"{table}: expected a primitive made with "
                        f"plait.extend.core.Primitive, but got {prim!r}; the rules of "
                        "plait's own primitives cannot be replaced")
    return prim


UndefinedPrimal = UndefPrimal
"""A linear input of a transpose rule: only its type is known (``ad.UndefinedPrimal``)."""


def is_undefined_primal(x: object) -> bool:
    """Whether ``x`` is a linear input of a transpose rule."""
    return type(x) is UndefPrimal


def trace_rule(fun: Callable[..., list[Any]], avals: Sequence[ShapedArray], what: str,
               e: Emitter, args: Sequence[Atom]) -> list[Atom]:
    """Trace ``fun`` (flat inputs to flat outputs) at ``avals`` and emit its equations
    into ``e`` applied to ``args``; returns the output atoms."""
    closed, _ = trace_flat(fun, avals, what, None)
    consts = [embed_const(e, c, shaped(v.aval), what)
              for v, c in zip(closed.jaxpr.constvars, closed.consts)]
    return inline_jaxpr(e, closed.jaxpr, consts, args)


def _check_aval(prim: ir_primitive.Primitive, what: str, got: AbstractValue,
                want: AbstractValue) -> None:
    g, w = shaped(got), shaped(want)
    if (g.shape, g.dtype) != (w.shape, w.dtype):
        raise TransformError(f"{prim.name}: expected the {what} to be of type "
                             f"{w.str_short()}, but got {g.str_short()}")


def _listed(prim: Primitive, x: Any, what: str) -> list[Any]:
    if not prim.multiple_results:
        return [x]
    if not isinstance(x, list | tuple):
        raise TypeError(f"{prim.name}: expected the {what} of a primitive with "
                        f"multiple_results to be a list, but got {x!r}")
    return list(x)


# -- forward mode ------------------------------------------------------------

def _jvp_bridge(prim: Primitive, rule: Callable[..., Any]) -> Callable[..., Any]:
    def emit(e: Emitter, primals: Sequence[Atom], tangents: Sequence[Atom | IRZero],
             **params: Any) -> tuple[list[Atom], list[Atom | IRZero]]:
        n = len(primals)
        nonzero = [type(t) is not IRZero for t in tangents]
        zero_out: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            it = iter(xs[n:])
            ts = [next(it) if nz else Zero(shaped(t.aval)) for t, nz in zip(tangents, nonzero)]
            out, t_out = rule(tuple(xs[:n]), tuple(ts), **params)
            outs, t_outs = _listed(prim, out, "primal output"), _listed(prim, t_out, "tangent")
            zero_out[:] = [t if type(t) is Zero else None for t in t_outs]
            return [*outs, *[t for t in t_outs if type(t) is not Zero]]

        avals = [*[shaped(p.aval) for p in primals],
                 *[shaped(t.aval) for t, nz in zip(tangents, nonzero) if nz]]
        args = [*primals, *[t for t in tangents if type(t) is not IRZero]]
        res = trace_rule(flat, avals, f"the JVP rule of {prim.name}", e, args)
        k = len(zero_out)
        outs, rest = res[:k], iter(res[k:])
        t_outs: list[Atom | IRZero] = []
        for o, z in zip(outs, zero_out):
            t = IRZero(tangent_aval(o.aval)) if z is not None else next(rest)
            _check_aval(prim, "tangent output", t.aval, tangent_aval(o.aval))
            t_outs.append(t)
        return outs, t_outs
    return emit


def _transpose_bridge(prim: ir_primitive.Primitive, rule: Callable[..., Any]) -> Callable[..., Any]:
    def emit(e: Emitter, cts_out: Sequence[Atom | IRZero], *inputs: Atom | UndefPrimal,
             **params: Any) -> list[Atom | IRZero | None]:
        ct_nz = [type(c) is not IRZero for c in cts_out]
        defined = [type(x) is not UndefPrimal for x in inputs]
        result: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            it = iter(xs)
            cts = [next(it) if nz else Zero(shaped(c.aval)) for c, nz in zip(cts_out, ct_nz)]
            args = [next(it) if d else x for x, d in zip(inputs, defined)]
            got = rule(cts if prim.multiple_results else cts[0], *args, **params)
            if not isinstance(got, list | tuple) or len(got) != len(inputs):
                raise TypeError(f"{prim.name}: expected the transpose rule to return one "
                                f"cotangent (or None) per operand, {len(inputs)} in all, but "
                                f"got {got!r}")
            result[:] = [None if d or g is None or type(g) is Zero else True
                         for g, d in zip(got, defined)]
            return [g for g, r in zip(got, result) if r]

        avals = [*[shaped(c.aval) for c, nz in zip(cts_out, ct_nz) if nz],
                 *[shaped(x.aval) for x, d in zip(inputs, defined) if d]]
        args = [*[c for c in cts_out if type(c) is not IRZero],
                *[x for x in inputs if type(x) is not UndefPrimal]]
        res = iter(trace_rule(flat, avals, f"the transpose rule of {prim.name}", e, args))
        cts: list[Atom | IRZero | None] = []
        for x, r in zip(inputs, result):
            if type(x) is not UndefPrimal:
                cts.append(None)
            elif r is None:
                cts.append(IRZero(x.aval))
            else:
                ct = next(res)
                _check_aval(prim, "cotangent", ct.aval, x.aval)
                cts.append(ct)
        return cts
    return emit


# -- batching ----------------------------------------------------------------

def _batching_bridge(prim: Primitive, rule: Callable[..., Any]) -> Callable[..., Any]:
    def emit(e: Emitter, size: int, operands: Sequence[Atom], dims: Sequence[Dim],
             **params: Any) -> tuple[list[Atom], list[Dim]]:
        out_dims: list[Dim] = []

        def flat(*xs: Any) -> list[Any]:
            out, d = rule(tuple(xs), tuple(dims), **params)
            outs = _listed(prim, out, "batched output")
            ds = _listed(prim, d, "output batch dimension")
            if len(ds) != len(outs):
                raise TypeError(f"{prim.name}: expected one output batch dimension per "
                                f"output, but got {ds!r} for {len(outs)} outputs")
            out_dims[:] = [None if x is None else int(x) for x in ds]
            return outs

        avals = [shaped(x.aval) for x in operands]
        outs = trace_rule(flat, avals, f"the batching rule of {prim.name}", e, operands)
        for o, d in zip(outs, out_dims):
            if d is not None and not (0 <= d < len(shaped(o.aval).shape)
                                      and shaped(o.aval).shape[d] == size):
                raise TransformError(f"{prim.name}: the batching rule returned an output of "
                                     f"type {shaped(o.aval).str_short()} batched along "
                                     f"axis {d}, which is not of size {size}")
        return outs, out_dims
    return emit


def _axis_batching_bridge(prim: Primitive, rule: Callable[..., Any]) -> Callable[..., Any]:
    # (JAX's older form: the rule is told the axis's size and name first.)
    def emit(e: Emitter, size: int, operands: Sequence[Atom], dims: Sequence[Dim],
             **params: Any) -> tuple[list[Atom], list[Dim]]:
        name = vmapped_axis()
        told = _batching_bridge(prim, lambda vals, ds, **p: rule(size, name, None, vals, ds,
                                                                   **p))
        result: tuple[list[Atom], list[Dim]] = told(e, size, operands, dims, **params)
        return result
    return emit


# -- the tables users write to -------------------------------------------------

class RuleTable(MutableMapping[Any, Callable[..., Any]]):
    """A table of user rules keyed by primitive (``ad.primitive_jvps`` and the like):
    setting an entry installs the bridged rule in plait's own table."""

    def __init__(self, name: str, target: dict[Any, Any],
                 bridge: Callable[[Primitive, Callable[..., Any]], Callable[..., Any]]) -> None:
        self._name, self._target, self._bridge = name, target, bridge
        self._rules: dict[ir_primitive.Primitive, Callable[..., Any]] = {}

    def __getitem__(self, prim: Any) -> Callable[..., Any]:
        return self._rules[prim]

    def __setitem__(self, prim: Any, rule: Callable[..., Any]) -> None:
        # A rule plait lacks for one of its own primitives may be added (lineax gives
        # stop_gradient a transpose rule, as it does JAX's); one plait has is fixed.
        fills_gap = (type(prim) is ir_primitive.Primitive and prim not in self._target)
        p = prim if fills_gap else check_user_primitive(prim, self._name)
        if not callable(rule):
            raise TypeError(f"{self._name}: expected a callable rule for {p.name!r}, but got "
                            f"{rule!r}")
        self._rules[p] = rule
        self._target[p] = self._bridge(p, rule)
        clear_caches()  # (transformations cached with an earlier rule would be stale)

    def __delitem__(self, prim: Any) -> None:
        del self._rules[prim]
        del self._target[prim]
        clear_caches()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def __repr__(self) -> str:
        return f"<{self._name}: {len(self)} rules>"


primitive_jvps = RuleTable("ad.primitive_jvps", jvp_rules, _jvp_bridge)
"""``rule(primals, tangents, **params) -> (primal_out, tangent_out)``, a tangent
possibly :class:`~plait.frontend.api.hijax.Zero`."""
primitive_transposes = RuleTable("ad.primitive_transposes", transpose_rules, _transpose_bridge)
"""``rule(ct, *args, **params) -> cts``, a linear arg an :class:`UndefinedPrimal`, and
``None`` for the cotangent of each other arg."""
primitive_batchers = RuleTable("batching.primitive_batchers", batching_rules, _batching_bridge)
"""``rule(args, dims, **params) -> (out, out_dim)``, a dim ``None`` for an unbatched
operand."""
axis_primitive_batchers = RuleTable("batching.axis_primitive_batchers", batching_rules,
                                    _axis_batching_bridge)
"""``rule(axis_size, axis_name, None, args, dims, **params) -> (out, out_dim)``: a batching
rule told the size and name of the ``vmap``'s axis (``None``: unnamed)."""


def defjvp(prim: Primitive, *jvprules: Callable[..., Any] | None) -> None:
    """The JVP of ``prim`` as a sum of one term per operand: ``jvprules[i](t_i, *primals,
    **params)`` (``None``: the output does not depend differentiably on operand ``i``)."""
    check_user_primitive(prim, "ad.defjvp")

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        terms = [r(t, *primals, **params) for r, t in zip(jvprules, tangents)
                 if r is not None and type(t) is not Zero]
        if not terms:
            return out, Zero(tangent_aval(out.aval))
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return out, total
    primitive_jvps[prim] = rule


def deflinear(prim: Primitive, transpose_rule: Callable[..., Sequence[Any]]) -> None:
    """``prim`` is linear in all its operands: its JVP applies it to the tangents, and its
    transpose is ``transpose_rule(ct, **params)`` (one cotangent per operand)."""
    check_user_primitive(prim, "ad.deflinear")

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        ts = [instantiate_zeros(t) for t in tangents]
        return prim.bind(*primals, **params), prim.bind(*ts, **params)

    def transpose(ct: Any, *args: Any, **params: Any) -> Sequence[Any]:
        if type(ct) is Zero:
            return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
        return transpose_rule(ct, **params)
    primitive_jvps[prim] = jvp
    primitive_transposes[prim] = transpose


def defvectorized(prim: Primitive) -> None:
    """Batch ``prim`` (elementwise, one operand) by applying it to the batched operand."""
    check_user_primitive(prim, "batching.defvectorized")

    def rule(vals: Sequence[Any], dims: Sequence[Dim], **params: Any) -> Any:
        if len(vals) != 1:
            raise TypeError(f"batching.defvectorized: {prim.name} takes {len(vals)} "
                            "operands; a vectorized primitive takes one")
        return prim.bind(*vals, **params), dims[0]
    primitive_batchers[prim] = rule


def broadcast(x: Any, sz: int, axis: int, mesh_axis: Any = None) -> Any:
    """``x`` with a new axis of size ``sz`` at ``axis`` (a batching rule's unbatched
    operand made batched; ``mesh_axis`` is JAX's, and must be ``None`` here)."""
    if mesh_axis is not None:
        raise NotImplementedError("batching.broadcast: a mesh_axis is not supported by plait")
    shape = list(np.shape(x))
    shape.insert(axis, sz)
    kept = [d for d in range(len(shape)) if d != axis]
    return broadcast_in_dim(x, tuple(shape), tuple(kept))


def bdim_at_front(x: Any, bdim: int | None, size: int, mesh_axis: Any = None) -> Any:
    """``x`` with its batch dimension ``bdim`` moved first, or (``None``: unbatched) a new
    first axis of size ``size``."""
    if bdim is None:
        return broadcast(x, size, 0, mesh_axis)
    rest = [d for d in range(np.ndim(x)) if d != bdim]
    return transpose(x, (bdim, *rest))

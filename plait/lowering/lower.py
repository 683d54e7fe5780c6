"""Lowering a closed jaxpr to a StableHLO module (as MLIR text).

One rule per primitive (:data:`lowering_rules`), each the same shape:
``rule(ctx, *operands, **params) -> results``, where operands are
:class:`~plait.lowering.emitter.Value`\\ s and ``ctx`` carries the equation's
types and the function being emitted.  The module is ``module @jit_<name>``
with a public ``@main`` whose results carry ``jax.result_info`` paths.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs

from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import AbstractValue, ShapedArray, buffer_avals, shaped, shaped_avals
from plait.ir.dims import dim_vars, is_constant_shape
from plait.ir.errors import missing_rule
from plait.ir.jaxpr import ClosedJaxpr, Jaxpr
from plait.ir.notes import note_equation
from plait.ir.primitive import Primitive
from plait.ir.primitives.calls import jit_p
from plait.ir.sharding import EXPLICIT, Mesh, NamedSharding, PartitionSpec
from plait.lowering.emitter import FuncEmitter, Value, tensor_type
from plait.lowering.shape_poly import bind_dim_vars
from plait.lowering.shardy import sharding_attr

__all__ = ["LoweringContext", "LoweringRule", "lowering_rules", "lower_closed_jaxpr",
           "ModuleText", "lower_sub_jaxpr", "module_name", "symbol", "private_function",
           "usable_donations"]


@attrs.define
class ModuleEmitter:
    """The functions of a module being lowered."""

    counter: list[int] = attrs.field(factory=lambda: [0])
    functions: list[str] = attrs.field(factory=list)
    used: set[str] = attrs.field(factory=lambda: {"main"})
    renames: list[int] = attrs.field(factory=lambda: [0])
    callees: dict[Any, str] = attrs.field(factory=dict)
    platforms: tuple[str, ...] = ("cpu",)
    """The platforms the module is lowered for (several only when exporting)."""
    host_callbacks: list[Callable[..., Any]] = attrs.field(factory=list)
    """The Python functions the module's host-callback custom calls call, by index."""
    mesh: Mesh | None = None
    """The devices of an SPMD program (``None``: one device)."""
    manual: frozenset[str] = frozenset()
    meshes: dict[str, str] = attrs.field(factory=dict)
    """Further ``sdy.mesh`` declarations the ops need, by symbol name (a host callback's
    one device: ``maximal_mesh_0``)."""
    """The mesh axes of the ``shard_map`` body being lowered (empty outside one)."""
    scope_prefix: str = ""
    """Put before the name stack of an equation in a ``named_scope`` to name its ops
    (``jit(f)/``, as JAX does)."""

    def unique(self, name: str) -> str:
        """A function name not used yet in this module.

        As MLIR's symbol table renames a clash (what JAX's modules show): the
        suffix ``_<n>`` counts renames in the whole module, not per name.
        """
        while name in self.used:
            candidate = f"{name}_{self.renames[0]}"
            self.renames[0] += 1
            if candidate not in self.used:
                name = candidate
        self.used.add(name)
        return name


_BARE_SYMBOL = re.compile(r"[A-Za-z_][\w$.]*", re.ASCII)


def symbol(name: str) -> str:
    """``@name`` as MLIR writes a symbol reference: quoted unless a bare identifier."""
    return f"@{name}" if _BARE_SYMBOL.fullmatch(name) else f'@"{_escape(name)}"'


class LoweringContext:
    """What a lowering rule sees of its equation (one object reused along a function)."""

    __slots__ = ("fn", "module", "avals_in", "avals_out")

    def __init__(self, fn: FuncEmitter, module: ModuleEmitter) -> None:
        self.fn = fn
        """The function receiving the ops."""
        self.module = module
        """The module (to add private functions for calls)."""
        self.avals_in: Sequence[AbstractValue] = ()
        """Types of the equation's operands."""
        self.avals_out: Sequence[AbstractValue] = ()
        """Types of the equation's results."""


LoweringRule = Callable[..., Sequence[Value]]
lowering_rules: dict[Primitive, LoweringRule] = {}
"""The StableHLO lowering of each primitive."""


def lower_body(module: ModuleEmitter, fn: FuncEmitter, jaxpr: Jaxpr,
               consts: Sequence[Value], args: Sequence[Value]) -> list[Value]:
    """Emit ``jaxpr``'s equations into ``fn``; returns the values of its outputs."""
    env: dict[Atom, Value] = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))
    literal = fn.literal
    ctx = LoweringContext(fn, module)
    rules = lowering_rules
    outer_loc = fn.loc  # (a branch or loop body lowered while its equation's ops are)
    # Name stacks are relative to their jaxpr: a nested jaxpr's ops are named under the
    # stack of the equation that holds it (the prefix its rule lowers them with).
    prefix = module.scope_prefix
    typed = EXPLICIT.seen and module.mesh is not None and not module.manual
    for eqn in jaxpr.eqns:
        try:
            rule = rules.get(eqn.primitive)
            if rule is None:
                raise missing_rule("Lowering", eqn.primitive.name, eqn.primitive.open_params)
            src = eqn.source_info
            if src is not None and src.name_stack:
                scope = module.scope_prefix = f"{prefix}{_escape(src.name_stack)}/"
                # (A call is named after its function, as JAX names it: XLA prefixes the
                # names of the callee's ops, which are relative to it, with the call's.)
                op = (eqn.primitive.name if eqn.primitive is not jit_p else
                      f"jit({_escape(eqn.params['name'])})")
                fn.loc = f' loc("{scope}{op}")'
            else:
                module.scope_prefix = prefix
                fn.loc = outer_loc
            inputs = eqn.invars
            ctx.avals_in = [a.aval for a in inputs]
            ctx.avals_out = [v.aval for v in eqn.outvars]
            # (The read of autodidax's env/read/write loop, inlined: this is the hot loop.)
            outs = rule(ctx, *[literal(a) if type(a) is Literal else env[a] for a in inputs],
                        **eqn.params)
            if typed:
                outs = _constrain_typed(fn, eqn.outvars, outs)
            for v, out in zip(eqn.outvars, outs, strict=True):  # (faster than dict.update)
                env[v] = out
        except Exception as exc:
            module.scope_prefix = prefix
            note_equation(exc, jaxpr, eqn, "lowering to StableHLO")
            raise
    fn.loc = outer_loc
    module.scope_prefix = prefix
    return [literal(a) if type(a) is Literal else env[a] for a in jaxpr.outvars]


def _constrain_typed(fn: FuncEmitter, outvars: Sequence[Var], outs: Sequence[Value]
                     ) -> Sequence[Value]:
    """``outs`` held to the shardings in their types, as JAX 0.10.2 lowers every result
    sharded over ``Explicit`` axes (an ``sdy.sharding_constraint`` each)."""
    new = list(outs)
    for i, v in enumerate(outvars):
        aval = v.aval
        if type(aval) is ShapedArray and aval.explicit_sharding is not None:
            spec = aval.explicit_sharding.spec
            new[i] = fn.op1("sdy.sharding_constraint", [outs[i]], outs[i].type,
                            f"sharding = #sdy.sharding{sharding_attr(spec, aval.ndim)}")
    return new


def _return(outs: Sequence[Value]) -> str:
    return (f'"func.return"({", ".join(o.name for o in outs)}) : '
            f"({', '.join(o.type for o in outs)}) -> ()")


def _signature(args: Sequence[Value], result_types: Sequence[str],
               result_attrs: Sequence[str] | None, arg_attrs: Sequence[str] = ()) -> str:
    attrs_ = list(arg_attrs) or [""] * len(args)
    params = ", ".join(f"{a.name}: {a.type}" + (f" {{{x}}}" if x else "")
                       for a, x in zip(args, attrs_))
    if result_attrs is None:
        results = ", ".join(result_types)
        results = f"({results})" if len(result_types) != 1 else results
    else:
        results = "(" + ", ".join(f"{t} {{{a}}}" if a else t
                                  for t, a in zip(result_types, result_attrs)) + ")"
    return f"({params}) -> {results}"


def _emit_function(module: ModuleEmitter, name: str, visibility: str, jaxpr: Jaxpr,
                   const_values: Sequence[Any], result_attrs: Sequence[str] | None,
                   arg_attrs: Sequence[str] = (), leading: Sequence[tuple[str, str]] = (),
                   dim_names: Sequence[str] = ()) -> None:
    """Emit ``jaxpr`` as a function; its ``leading`` arguments (type, attributes) come
    first, the last of them the values of the dimension variables ``dim_names``."""
    slot = len(module.functions)
    module.functions.append("")  # callees lowered below come after this function, as in JAX
    fn = FuncEmitter(module.counter)
    extra = [fn.fresh(t) for t, _ in leading]
    args = [fn.fresh(tensor_type(v.aval)) for v in jaxpr.invars]
    if dim_names:
        fn.dims = dict(zip(dim_names, extra[len(extra) - len(dim_names):]))
    consts = [fn.constant(c, shaped(v.aval)) for v, c in zip(jaxpr.constvars, const_values)]
    outs = lower_body(module, fn, jaxpr, consts, args)
    ret = _return(outs)
    if leading:
        arg_attrs = [a for _, a in leading] + (list(arg_attrs) or [""] * len(args))
        args = extra + args
    sig = _signature(args, [tensor_type(a.aval) for a in jaxpr.outvars], result_attrs, arg_attrs)
    body = "\n".join(fn.lines + [ret])
    module.functions[slot] = f"func.func {visibility} {symbol(name)}{sig} {{\n{body}\n}}"


def _emit_polymorphic_main(module: ModuleEmitter, jaxpr: Jaxpr, const_values: Sequence[Any],
                           result_attrs: Sequence[str], arg_attrs: Sequence[str],
                           leading: Sequence[tuple[str, str]], arg_names: Sequence[str]) -> None:
    """A shape-polymorphic ``@main``, as JAX's calling convention has it: it computes the
    dimension variables from the arguments' sizes, asserts the shapes, and calls
    ``@_wrapped_jax_export_main``, which takes the dimension values first (so that XLA
    checks the assertions before it refines the shapes of the computation)."""
    avals = shaped_avals(jaxpr.in_avals)
    names = list(arg_names) or [f"args[{i}]" for i in range(len(avals))]
    dim_names = dim_vars([a.shape for a in avals])
    slot = len(module.functions)
    module.functions.append("")
    fn = FuncEmitter(module.counter)
    extra = [fn.fresh(t) for t, _ in leading]
    args = [fn.fresh(tensor_type(a)) for a in avals]
    dims = bind_dim_vars(fn, args, avals, names)
    inner = module.unique("_wrapped_jax_export_main")
    dim_args = [("tensor<i64>", f'jax.global_constant = "{_escape(v)}"') for v in dim_names]
    _emit_function(module, inner, "private", jaxpr, const_values, result_attrs, arg_attrs,
                   [*leading, *dim_args], dim_names)
    out_types = [tensor_type(a.aval) for a in jaxpr.outvars]
    outs = fn.op("func.call", [*extra, *(dims[v] for v in dim_names), *args], out_types,
                 f"callee = {symbol(inner)}")
    ret = _return(outs)
    sig = _signature([*extra, *args], out_types, result_attrs,
                     [a for _, a in leading] + (list(arg_attrs) or [""] * len(args)))
    body = "\n".join(fn.lines + [ret])
    module.functions[slot] = f"func.func public @main{sig} {{\n{body}\n}}"


def private_function(module: ModuleEmitter, name: str, key: Any, avals_in: Sequence[AbstractValue],
                     avals_out: Sequence[AbstractValue],
                     body: Callable[[FuncEmitter, list[Value]], Sequence[Value]]) -> str:
    """A private function of the module emitted by ``body(fn, args)`` (once per ``key``);
    returns its name."""
    existing = module.callees.get(key)
    if existing is not None:
        return existing
    fname = module.callees[key] = module.unique(name)
    slot = len(module.functions)
    module.functions.append("")
    fn = FuncEmitter(module.counter)
    args = [fn.fresh(tensor_type(a)) for a in avals_in]
    # A function shared by its calls: its ops are named relative to it (see lower_body).
    prefix, module.scope_prefix = module.scope_prefix, ""
    try:
        outs = body(fn, args)
    finally:
        module.scope_prefix = prefix
    ret = _return(outs)
    sig = _signature(args, [tensor_type(a) for a in avals_out], None)
    body_text = "\n".join(fn.lines + [ret])
    module.functions[slot] = f"func.func private {symbol(fname)}{sig} {{\n{body_text}\n}}"
    return fname


def lower_sub_jaxpr(module: ModuleEmitter, name: str, closed: ClosedJaxpr) -> str:
    """Emit ``closed`` as a private function (once per distinct jaxpr); returns its name."""
    existing = module.callees.get(closed)
    if existing is not None:
        return existing
    fname = module.unique(name)
    module.callees[closed] = fname
    # A function shared by its calls: its ops are named relative to it (see lower_body).
    prefix, module.scope_prefix = module.scope_prefix, ""
    try:
        _emit_function(module, fname, "private", closed.jaxpr, closed.consts, None)
    finally:
        module.scope_prefix = prefix
    return fname


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


@attrs.frozen
class ModuleText:
    """A lowered module: its MLIR text and the signature it was lowered for."""

    text: str
    """MLIR in generic syntax (parse it for the pretty form)."""
    name: str
    """The module's symbol name, ``jit_<function name>``."""
    in_avals: tuple[ShapedArray, ...]
    """Types of ``@main``'s arguments."""
    out_avals: tuple[ShapedArray, ...]
    """Types of ``@main``'s results."""
    host_callbacks: tuple[Callable[..., Any], ...] = ()
    """The Python functions its host callbacks call (passed to the compiler by index)."""


_NOT_IN_MODULE_NAMES = re.compile(r"[^\w.-]")


def module_name(fun_name: str) -> str:
    """The module's name for a function, as JAX makes it: ``jit(<name>)`` with the
    characters XLA would alter replaced by ``_``, trailing ``_`` removed."""
    return _NOT_IN_MODULE_NAMES.sub("_", f"jit({fun_name})").rstrip("_")


def _donation_attrs(in_avals: Sequence[Any], out_avals: Sequence[Any],
                    donated: Sequence[bool], in_layouts: Sequence[Any] = (),
                    out_layouts: Sequence[Any] = ()) -> list[str]:
    """The argument attributes of donated arguments, matched to results as JAX does.

    A donated argument aliases the first unclaimed result of its shape, dtype and
    layout over the devices (``tf.aliasing_output``); failing that, if a result of its
    element count is left, XLA may reuse it (``jax.buffer_donor``); otherwise it is
    not donated at all.  Layouts (shardings, given for a program over several devices)
    must be known to alias: each device's part must be the same.
    """
    def key(a: Any, layouts: Sequence[Any], i: int) -> Any:
        if not layouts:
            return (a.shape, a.dtype)
        return (a.shape, a.dtype, layouts[i]) if layouts[i] is not None else object()
    by_type: dict[Any, deque[int]] = defaultdict(deque)
    for i, (a, d) in enumerate(zip(in_avals, donated)):
        if d:
            by_type[key(a, in_layouts, i)].append(i)
    attrs = [""] * len(in_avals)
    by_size: dict[int, deque[int]] = defaultdict(deque)
    for j, o in enumerate(out_avals):
        waiting = by_type.get(key(o, out_layouts, j))
        if waiting:
            attrs[waiting.popleft()] = f"tf.aliasing_output = {j} : i32"
        else:
            by_size[o.size].append(j)
    for i, (a, d) in enumerate(zip(in_avals, donated)):
        if d and not attrs[i] and by_size.get(a.size):
            by_size[a.size].popleft()
            attrs[i] = "jax.buffer_donor = true"
    return attrs


def usable_donations(in_avals: Sequence[Any], out_avals: Sequence[Any],
                     donated: Sequence[bool]) -> tuple[bool, ...]:
    """Which donated arguments the module really donates (the others stay valid, as in
    JAX, which warns "Some donated buffers were not usable")."""
    return tuple(bool(a) for a in _donation_attrs(in_avals, out_avals, donated))


def _with_shardings(attrs_: Sequence[str], atoms: Sequence[Atom],
                    shardings: Sequence[NamedSharding | None], replicate: bool) -> list[str]:
    """``attrs_`` with Shardy's ``sdy.sharding`` of each value added (replicated where
    ``shardings`` has ``None``, if ``replicate``)."""
    out = []
    for i, (a, atom) in enumerate(zip(attrs_, atoms)):
        s = shardings[i] if i < len(shardings) else None
        spec = s.spec if s is not None else (PartitionSpec() if replicate else None)
        if spec is not None:
            attr = f"sdy.sharding = #sdy.sharding{sharding_attr(spec, shaped(atom.aval).ndim)}"
            a = f"{a}, {attr}" if a else attr
        out.append(a)
    return out


PLATFORM_INDEX_ARG: Final = ("tensor<i32>", 'jax.global_constant = "_platform_index"')
"""The leading argument of a module exported for several platforms: the index of the
platform it is compiled for (JAX's calling convention)."""


def lower_closed_jaxpr(closed: ClosedJaxpr, fun_name: str, result_paths: Sequence[str] = (),
                       donated: Sequence[bool] = (), *, platforms: Sequence[str] = ("cpu",),
                       module_attrs: Sequence[str] = (), arg_names: Sequence[str] = (),
                       mesh: Mesh | None = None,
                       in_shardings: Sequence[NamedSharding | None] = (),
                       out_shardings: Sequence[NamedSharding | None] = ()) -> ModuleText:
    """Lower ``closed`` to a module whose ``@main`` takes the jaxpr's invars.

    Consts are embedded as ``stablehlo.constant``\\ s.  Arguments flagged in
    ``donated`` alias a result of their type, or are left for XLA to reuse,
    as in JAX (:func:`_donation_attrs`).  Lowered for several ``platforms`` (when
    exporting), ``@main`` takes :data:`PLATFORM_INDEX_ARG` first; ``module_attrs`` are
    added to the module's.  Arguments of symbolic shapes make ``@main`` compute the
    dimension variables and assert the shapes (messages naming ``arg_names``).  With a
    ``mesh``, the module is an SPMD program over its devices (Shardy's ``sdy.mesh``),
    its arguments and results laid out by ``in_shardings``/``out_shardings`` (``None``:
    replicated arguments, results as the partitioner chooses).

    Raises:
      RuleNotImplementedError: a primitive has no lowering rule.
    """
    module = ModuleEmitter(platforms=tuple(platforms), scope_prefix=f"jit({_escape(fun_name)})/",
                           mesh=mesh)
    jaxpr = closed.jaxpr
    paths = list(result_paths) or [""] * len(jaxpr.outvars)
    attrs_ = [f'jax.result_info = "{_escape(p)}"' if p else "" for p in paths]
    layouts = (list(in_shardings) or [None] * len(jaxpr.invars),
               list(out_shardings) or [None] * len(jaxpr.outvars)) if mesh is not None else ((), ())
    arg_attrs = _donation_attrs(buffer_avals(jaxpr.in_avals), buffer_avals(jaxpr.out_avals),
                                donated, *layouts) if any(donated) else []
    if mesh is not None:
        arg_attrs = _with_shardings(arg_attrs or [""] * len(jaxpr.invars), jaxpr.invars,
                                    in_shardings, replicate=True)
        attrs_ = _with_shardings(attrs_, jaxpr.outvars, out_shardings, replicate=False)
    leading = [PLATFORM_INDEX_ARG] if len(platforms) > 1 else []
    if all(is_constant_shape(a.shape) for a in buffer_avals(jaxpr.in_avals)):
        _emit_function(module, "main", "public", jaxpr, closed.consts, attrs_, arg_attrs,
                       leading)
    else:
        _emit_polymorphic_main(module, jaxpr, closed.consts, attrs_, arg_attrs, leading,
                               arg_names)
    name = module_name(fun_name)
    mattrs = ", ".join([*module_attrs,
                        f"mhlo.num_partitions = {mesh.size if mesh else 1} : i32",
                        "mhlo.num_replicas = 1 : i32"])
    functions = module.functions
    if mesh is not None:
        axes = ", ".join(f'"{n}"={s}' for n, s in zip(mesh.axis_names, mesh.axis_sizes))
        meshes = {"mesh": f"[{axes}]", **module.meshes}
        functions = [*(f'"sdy.mesh"() <{{mesh = #sdy.mesh<{m}>, sym_name = "{n}"}}> : () -> ()'
                       for n, m in meshes.items()), *functions]
    text = (f"module {symbol(name)} attributes {{{mattrs}}} {{\n"
            + "\n".join(functions) + "\n}\n")
    # (A token travels as a data-less buffer: see buffer_avals.)
    return ModuleText(text, name, buffer_avals(jaxpr.in_avals), buffer_avals(jaxpr.out_avals),
                      tuple(module.host_callbacks))

"""Ahead-of-time stages (JAX docs: "Ahead-of-time lowering and compilation").

``jit(f).trace(...)`` -> :class:`Traced`, ``.lower()`` -> :class:`Lowered`,
``.compile()`` -> :class:`Compiled`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from plait.frontend.api.compile import (
    compile_traced,
    compiler_option_pairs,
    execute,
    lowerable,
)
from plait.frontend.core.apply_jaxpr import eval_jaxpr_bind
from plait.frontend.core.arguments import arg_aval, arg_path, struct_of
from plait.frontend.core.layouts import Format, Layout
from plait.frontend.core.spmd import spmd_layout
from plait.frontend.core.trace_to_jaxpr import TracedFunction
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import Tracer
from plait.frontend.core.tree_util import PyTreeDef, tree_flatten, tree_map, tree_unflatten
from plait.ir.avals import ShapedArray, buffer_avals, shaped_avals
from plait.ir.errors import ArgumentError
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.sharding import NamedSharding
from plait.lowering import lower_closed_jaxpr, runtime
from plait.lowering.lower import ModuleText
from plait.lowering.runtime import CompilerOptions, Executable, sharding_for
from plait.transforms.physicalize import physicalize

__all__ = ["ArgInfo", "Traced", "Lowered", "Compiled"]


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """One (dynamic) argument of a staged function: its type and whether it is donated,
    as ``jax.stages.ArgInfo``."""

    _aval: ShapedArray
    donated: bool

    @property
    def shape(self) -> tuple[int, ...]:
        """The argument's shape."""
        return self._aval.shape

    @property
    def dtype(self) -> Any:
        """The argument's dtype."""
        return self._aval.dtype


class _Stage:
    """What every stage knows of the function's signature (as JAX's ``Stage``): its
    dynamic arguments as ``(args, kwargs)`` (static ones left out) and its results."""

    traced: TracedFunction
    _donated: tuple[bool, ...]

    @property
    def args_info(self) -> Any:
        """``(args, kwargs)`` with an :class:`ArgInfo` per array argument."""
        infos = [ArgInfo(a, d) for a, d in zip(self.traced.in_avals, self._donated)]
        args, kwargs = tree_unflatten(self.traced.in_tree, infos)
        static_pos, static_kw = self.traced.static_key
        skip = {i for i, _ in static_pos}
        names = {k for k, _ in static_kw}
        return (tuple(a for i, a in enumerate(args) if i not in skip),
                {k: v for k, v in kwargs.items() if k not in names})

    @property
    def in_tree(self) -> PyTreeDef:
        """The structure of ``(args, kwargs)``, static arguments left out."""
        return tree_flatten(self.args_info)[1]

    @property
    def in_avals(self) -> Any:
        """``(args, kwargs)`` with the type of each array argument."""
        return tree_map(lambda info: info._aval, self.args_info)

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """The flat indices of the donated arguments."""
        return tuple(i for i, d in enumerate(self._donated) if d)

    @property
    def out_tree(self) -> PyTreeDef:
        """The structure of the result."""
        return self.traced.out_tree

    @property
    def out_info(self) -> Any:
        """The result, as ``ShapeDtypeStruct``\\ s."""
        return self.traced.out_tree.unflatten(
            struct_of(a) for a in shaped_avals(self.traced.closed.out_avals))


class Traced(_Stage):
    """A function staged out for one signature: its jaxpr and pytree structure."""

    def __init__(self, traced: TracedFunction, donated: tuple[bool, ...],
                 keep_unused: bool = False,
                 in_shardings: tuple[NamedSharding | None, ...] = (),
                 out_shardings: tuple[NamedSharding | None, ...] = (),
                 compiler_options: CompilerOptions = ()) -> None:
        if any(type(c) is Tracer for c in traced.closed.consts):
            raise ArgumentError("cannot lower a function that closes over traced values")
        self.traced = traced
        self._donated = donated
        self._keep_unused = keep_unused
        self._shardings = (in_shardings, out_shardings)
        self._compiler_options = compiler_options

    @property
    def shardings(self) -> tuple[Any, Any]:
        """Per flat argument and per result, the layout the program was traced for
        (empty when it runs on one device)."""
        return self._shardings

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The staged program."""
        return self.traced.closed

    @api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Evaluate the jaxpr on ``args`` (static arguments left out), equation by
        equation, as JAX's ``Traced`` does.

        Raises:
          TypeError: the arguments do not have the traced structure.
        """
        leaves, tree = tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise TypeError(f"Traced: expected arguments of structure {self.in_tree} (static "
                            f"arguments left out), but got {tree}")
        closed = self.jaxpr
        return self.traced.out_tree.unflatten(
            eval_jaxpr_bind(closed.jaxpr, closed.consts, leaves))

    @property
    def fun_name(self) -> str:
        """The traced function's name."""
        return self.traced.debug_info.func_name

    @property
    def out_avals(self) -> Any:
        """The result, with the type of each array."""
        return self.traced.out_tree.unflatten(shaped_avals(self.jaxpr.out_avals))

    def lower(self) -> Lowered:
        """Lower to StableHLO (unused arguments left out, as ``jit`` compiles it)."""
        info = self.traced.debug_info
        closed, kept = lowerable(self.traced, self._keep_unused)
        donated = tuple(d for d, k in zip(self._donated, kept) if k)
        ins, outs = self._shardings
        kept_in = tuple(s for s, k in zip(ins, kept) if k) if ins else (None,) * sum(kept)
        spmd = spmd_layout(closed.jaxpr, buffer_avals(closed.in_avals), kept_in,
                           outs or (None,) * len(closed.jaxpr.outvars))
        module = lower_closed_jaxpr(
            physicalize(closed), info.func_name, info.result_paths, donated,
            mesh=spmd.mesh if spmd else None, in_shardings=spmd.in_shardings if spmd else (),
            out_shardings=spmd.out_shardings if spmd else ())
        return Lowered(self.traced, module, self._donated, self._keep_unused, self._shardings,
                       self._compiler_options)


def _dialect(dialect: str | None) -> str:
    if dialect not in (None, "stablehlo", "hlo"):
        raise ValueError(f"unknown dialect: {dialect}; expected 'stablehlo' or 'hlo'")
    return dialect or "stablehlo"


class Lowered(_Stage):
    """A StableHLO module for one signature, ready to compile."""

    def __init__(self, traced: TracedFunction, module: ModuleText,
                 donated: tuple[bool, ...], keep_unused: bool = False,
                 shardings: tuple[Any, Any] = ((), ()),
                 compiler_options: CompilerOptions = ()) -> None:
        self.traced = traced
        self.module = module
        self._shardings = shardings
        self._donated = donated
        self._keep_unused = keep_unused
        self._compiler_options = compiler_options

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The module as a ``jaxlib.mlir.ir.Module`` (``dialect`` ``"stablehlo"``, the
        default) or as XLA's HLO, a jaxlib ``XlaComputation`` (``"hlo"``)."""
        if _dialect(dialect) == "hlo":
            return runtime.hlo_computation(self.module.text)
        return runtime.parse_module(self.module.text)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The module in MLIR's pretty syntax, or (``dialect="hlo"``) as HLO text; with
        ``debug_info``, with source locations."""
        if _dialect(dialect) == "hlo":
            return runtime.hlo_text(self.module.text, debug_info)
        op = self.compiler_ir().operation
        return str(op.get_asm(enable_debug_info=debug_info))

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimates of the module before optimization (``flops``,
        ``transcendentals``, ``bytes accessed`` ...), as JAX's; ``compile().cost_analysis()``
        estimates the optimized program."""
        return runtime.hlo_cost_analysis(self.module.text)

    def compile(self, compiler_options: Mapping[str, Any] | None = None) -> Compiled:
        """Compile for the default device; ``compiler_options`` (XLA option names to
        values) override XLA's options, in place of those given to ``jit``.

        Raises:
          TypeError: ``compiler_options`` is not a mapping of names to ``str``, ``bool``,
            ``int`` or ``float`` values.
        """
        options = self._compiler_options if compiler_options is None else \
            compiler_option_pairs(compiler_options, "Lowered.compile")
        # Frames up to the user's call: compile_traced, compile.
        ins, outs = self._shardings
        exe, kept, donated = compile_traced(self.traced, self._donated, self._keep_unused,
                                            stacklevel=2, in_shardings=ins, out_shardings=outs,
                                            compiler_options=options)
        return Compiled(self.traced, exe, donated, kept)


def _type_str(aval: ShapedArray) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


class Compiled(_Stage):
    """An executable for one signature; calling it with other types is an error."""

    def __init__(self, traced: TracedFunction, exe: Executable, donated: tuple[bool, ...],
                 kept: tuple[bool, ...]) -> None:
        self.traced = traced
        self.executable = exe
        self._donated = donated
        self._kept = kept

    @api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Static arguments were folded into the program: the call omits them.
        static_pos, static_kw = self.traced.static_key
        full = list(args)
        for i, _ in static_pos:
            full.insert(i, None)
        kw = dict(kwargs)
        for k, _ in static_kw:
            kw[k] = None
        leaves, tree = tree_flatten((tuple(full), kw))
        for x in leaves:
            if isinstance(x, Tracer):
                raise TypeError(
                    "Cannot apply transformations to a function lowered and compiled for a "
                    f"particular signature. Detected argument of Tracer type {type(x)}")
        expected = self.traced.in_tree
        if tree != expected:
            raise TypeError(f"Function compiled for arguments of structure {expected} was called "
                            f"with arguments of structure {tree}")
        names = self.traced.debug_info.arg_names
        mismatches = []
        for i, (x, want) in enumerate(zip(leaves, self.traced.in_avals)):
            (got,) = buffer_avals([arg_aval(x, arg_path(names, i), "compiled call")])
            if got.shape != want.shape or got.dtype != want.dtype:
                name = names[i] if i < len(names) and names[i] else f"{i}"
                mismatches.append(f"Argument '{name}' compiled with {_type_str(want)} and "
                                  f"called with {_type_str(got)}")
        if mismatches:
            raise TypeError("Argument types differ from the types for which this computation "
                            "was compiled. The mismatches are:\n" + "\n".join(mismatches))
        return execute(self.executable, self.traced, leaves, self._donated, self._kept)

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimates; ``['flops']`` counts floating-point operations."""
        return self.executable.cost_analysis()

    def memory_analysis(self) -> Any:
        """XLA's memory statistics (argument, output, temporary sizes)."""
        return self.executable.memory_analysis()

    def as_text(self) -> str:
        """The optimized HLO XLA compiled."""
        return self.executable.hlo_text()

    def runtime_executable(self) -> Any:
        """jaxlib's loaded executable (for debugging; not a serialization)."""
        return self.executable.loaded

    @property
    def input_shardings(self) -> Any:
        """``(args, kwargs)`` with the sharding each array argument is taken in
        (``None`` for an argument the program does not use)."""
        return self._args_like(self._flat_input_shardings())

    def _flat_input_shardings(self) -> list[Any]:
        exe = self.executable
        kept_shardings = iter(exe.in_shardings or [sharding_for(exe.device)] * sum(self._kept))
        return [next(kept_shardings) if k else None for k in self._kept]

    @property
    def output_shardings(self) -> Any:
        """The result, with the sharding of each array."""
        return self.traced.out_tree.unflatten(self.executable.out_shardings)

    @property
    def input_formats(self) -> Any:
        """``(args, kwargs)`` with each array argument's :class:`Format` (XLA's default
        layout and its sharding; an empty one for an unused argument)."""
        return self._args_like([Format() if s is None else Format(Layout.default(a.ndim), s)
                                for a, s in zip(self.traced.in_avals,
                                                self._flat_input_shardings())])

    @property
    def output_formats(self) -> Any:
        """The result, with each array's :class:`Format`."""
        return self.traced.out_tree.unflatten(
            Format(Layout.default(a.ndim), s)
            for a, s in zip(self.executable.out_avals, self.executable.out_shardings))

    def _args_like(self, flat: list[Any]) -> Any:
        """``flat`` (one per dynamic argument) arranged as :attr:`args_info`."""
        return tree_unflatten(self.in_tree, flat)

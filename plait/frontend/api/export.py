"""Exporting and serializing staged computations (JAX's ``jax.export``).

``export(jit(f))(*args)`` lowers ``f`` for the arguments' types (arrays or
``ShapeDtypeStruct``\\ s) into an :class:`Exported`: the StableHLO module as a
portable artifact plus what calling it needs.  ``Exported.serialize()`` gives
bytes in JAX's flatbuffer layout, which ``deserialize`` (plait's or JAX's) reads
back, in another process or another library.  ``Exported.call`` applies the
function, eagerly or inside a trace (a ``call_exported`` equation); reverse-mode
differentiation uses the VJPs exported beside it (``serialize(vjp_order=n)``),
no other transformation applies.
"""

from __future__ import annotations

import collections
import functools
import json
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeGuard

import attrs
import numpy as np

from plait.frontend.api.autodiff import vjp as _vjp
from plait.frontend.api.compile import lowerable
from plait.frontend.api.jit import JitFunction, jit
from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.arguments import ShapeDtypeStruct, abstractify
from plait.frontend.core.spmd import spmd_layout
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import bind
from plait.frontend.core.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_structure,
    tree_unflatten,
    unflatten_functions,
)
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray, shaped_avals
from plait.ir.config import values as _config
from plait.ir.dim_scope import SymbolicScope
from plait.ir.dims import DimExpr, Scope, is_constant_shape, is_symbolic, parse_dims
from plait.ir.errors import ArgumentError
from plait.ir.primitives.exported import ExportedModule, FixedVjp, call_exported_p
from plait.ir.sharding import AxisType, Mesh, NamedSharding, PartitionSpec
from plait.lowering import export_format as fmt
from plait.lowering.exporting import (
    check_custom_calls,
    module_text,
    serialize_module,
    set_locations,
)
from plait.lowering.lower import lower_closed_jaxpr
from plait.lowering.runtime import parse_module
from plait.transforms.jvp import tangent_aval
from plait.transforms.physicalize import physicalize

__all__ = ["export", "Exported", "deserialize", "DisabledSafetyCheck",
           "default_export_platform", "symbolic_shape", "symbolic_args_specs",
           "minimum_supported_calling_convention_version",
           "maximum_supported_calling_convention_version", "register_pytree_node_serialization",
           "register_namedtuple_serialization", "SymbolicScope", "is_symbolic_dim"]

minimum_supported_calling_convention_version: Final = 9
maximum_supported_calling_convention_version: Final = 10
_CALLING_CONVENTION: Final = 10
_PLATFORMS: Final = ("cpu", "cuda", "rocm", "tpu")
_MAX_DIM_TEXT: Final = 200


@attrs.frozen
class DisabledSafetyCheck:
    """A safety check of export or call to skip (build with the class methods)."""

    _kind: int
    _target: str = ""

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Allow calling on a platform the function was not exported for."""
        return cls(fmt.CHECK_PLATFORM)

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allow exporting custom calls to ``target_name`` (``"ALL"``: any target),
        whose implementation may change incompatibly."""
        return cls(fmt.CHECK_CUSTOM_CALL, target_name)

    @classmethod
    def shape_assertions(cls) -> DisabledSafetyCheck:
        """Skip the shape assertions of shape-polymorphic modules."""
        return cls(fmt.CHECK_SHAPE_ASSERTIONS)

    def is_custom_call(self) -> str | None:
        """The target, for a custom-call check; else ``None``."""
        return self._target if self._kind == fmt.CHECK_CUSTOM_CALL else None

    def __str__(self) -> str:
        if self._kind == fmt.CHECK_CUSTOM_CALL:
            return f"custom_call:{self._target}"
        return "platform" if self._kind == fmt.CHECK_PLATFORM else "shape_assertions"


def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (),
                   scope: SymbolicScope | None = None,
                   like: Sequence[int | None] | None = None) -> tuple[Any, ...]:
    """The shape ``shape_spec`` describes (``"b, 4"``, ``"(2*b, b + 1)"``): symbolic
    dimensions for its dimension variables, ints for its constants; ``_`` takes the
    size at its position from ``like``.  The dimensions live in ``scope``, or in a new
    :class:`SymbolicScope` with ``constraints`` (``"b >= 4"``, ``"2*c == b"``).

    Raises:
      ValueError: a syntax error, a bad constraint, or both ``scope`` and ``constraints``.
    """
    if shape_spec is None:
        return tuple(d for d in (like or ()))
    if not isinstance(shape_spec, str):
        raise ArgumentError(f"symbolic_shape: expected a string such as 'b, 4', but got "
                            f"{shape_spec!r}")
    return parse_dims(shape_spec, like, _scope(
        scope, constraints, "Cannot specify both a `scope` and `constraints`."))


def _scope(scope: SymbolicScope | None, constraints: Sequence[str], both: str
           ) -> SymbolicScope:
    if scope is None:
        return SymbolicScope(constraints)
    if constraints:
        raise ValueError(both)
    if not isinstance(scope, SymbolicScope):
        raise ArgumentError(f"symbolic_shape: expected a SymbolicScope for scope, but got "
                            f"{scope!r}")
    return scope


def symbolic_args_specs(args: Any, shapes_specs: Any, constraints: Sequence[str] = (),
                        scope: SymbolicScope | None = None) -> Any:
    """``ShapeDtypeStruct``\\ s like ``args`` (arrays, or anything with shape and dtype),
    with the shapes ``shapes_specs`` gives (a spec string, or a pytree of them), all in
    ``scope`` (or one new scope with ``constraints``)."""
    leaves, tree = tree_flatten(args)
    specs = ([shapes_specs] * len(leaves) if isinstance(shapes_specs, str) or
             shapes_specs is None else tree.flatten_up_to(shapes_specs))
    shared = _scope(scope, constraints, "Cannot use both `scope` and `constraints`")
    return tree_unflatten(tree, [
        ShapeDtypeStruct(symbolic_shape(s, like=np.shape(x), scope=shared),
                         np.asarray(x).dtype if not hasattr(x, "dtype") else x.dtype)
        for x, s in zip(leaves, specs)])


def is_symbolic_dim(p: object) -> TypeGuard[DimExpr]:
    """Whether ``p`` is a symbolic dimension (not an int)."""
    return is_symbolic(p)


def default_export_platform() -> str:
    """The platform functions are exported for by default: this machine's, ``'cpu'``."""
    return "cpu"


@attrs.frozen(eq=False, slots=False)
class Exported:
    """A function lowered for export, and what calling it needs.

    ``mlir_module_serialized`` is the StableHLO portable artifact; ``in_avals``
    lists the types of all flat arguments, of which ``@main`` takes those in
    ``module_kept_var_idx`` (after the platform index when exported for several
    ``platforms``).
    """

    fun_name: str
    """The exported function's name."""
    in_tree: PyTreeDef
    """The structure of ``(args, kwargs)``."""
    in_avals: tuple[ShapedArray, ...]
    """Types of the flat arguments."""
    out_tree: PyTreeDef
    """The structure of the result."""
    out_avals: tuple[ShapedArray, ...]
    """Types of the flat results."""
    platforms: tuple[str, ...]
    """The platforms the module was lowered for."""
    mlir_module_serialized: bytes = attrs.field(repr=False)
    """The StableHLO portable artifact."""
    module_kept_var_idx: tuple[int, ...]
    """Which flat arguments the module takes (unused ones are dropped)."""
    disabled_safety_checks: tuple[DisabledSafetyCheck, ...] = ()
    """The safety checks disabled at export."""
    calling_convention_version: int = _CALLING_CONVENTION
    """The version of the calling convention the module follows."""
    nr_devices: int = 1
    """The number of devices the module was lowered for."""
    uses_global_constants: bool = False
    """Whether the module computes global constants (platform index, dimension sizes)."""
    ordered_effects: tuple[Any, ...] = ()
    """Effects the module orders (none yet)."""
    unordered_effects: tuple[Any, ...] = ()
    """Effects the module has, unordered (none yet)."""
    in_named_shardings: tuple[NamedSharding | None, ...] = ()
    """Per argument, the layout it was exported with over the export mesh (empty: none)."""
    out_named_shardings: tuple[NamedSharding | None, ...] = ()
    """Per result, the layout it was exported with (empty: none)."""
    _get_vjp: Callable[[], Exported | None] | None = attrs.field(default=None, repr=False)

    @property
    def in_shardings_hlo(self) -> tuple[None, ...]:
        """Shardings of the arguments: none (one device)."""
        return (None,) * len(self.in_avals)

    @property
    def out_shardings_hlo(self) -> tuple[None, ...]:
        """Shardings of the results: none (one device)."""
        return (None,) * len(self.out_avals)

    def in_shardings_jax(self, mesh: Mesh) -> tuple[NamedSharding | None, ...]:
        """The arguments' export layouts laid over ``mesh`` (of the export mesh's axes), to
        place the arguments of a call.

        Raises:
          ValueError: ``mesh`` differs from the export mesh in its axes.
        """
        return self._over(mesh, self.in_named_shardings, len(self.in_avals))

    def out_shardings_jax(self, mesh: Mesh) -> tuple[NamedSharding | None, ...]:
        """The results' export layouts laid over ``mesh`` (see :meth:`in_shardings_jax`)."""
        return self._over(mesh, self.out_named_shardings, len(self.out_avals))

    @staticmethod
    def _over(mesh: Mesh, shardings: tuple[NamedSharding | None, ...], n: int
              ) -> tuple[NamedSharding | None, ...]:
        out: list[NamedSharding | None] = []
        for s in shardings or (None,) * n:
            if s is None:
                out.append(None)
                continue
            old = s.mesh
            if (old.axis_names, old.axis_sizes) != (mesh.axis_names, mesh.axis_sizes):
                raise ValueError(f"NamedSharding new mesh {mesh} does not match the mesh used "
                                 f"for export {old}.")
            out.append(NamedSharding(mesh, s.spec))
        return tuple(out)

    def __str__(self) -> str:
        return f"Exported(fun_name={self.fun_name}, ...)"

    def mlir_module(self) -> str:
        """The module, as text (MLIR's pretty syntax, with locations)."""
        return module_text(self.mlir_module_serialized, debug_info=True)

    def has_vjp(self) -> bool:
        """Whether a VJP is available (always for a fresh export; for a deserialized
        one, if serialized with ``vjp_order`` > 0)."""
        return self._get_vjp is not None and self._vjp() is not None

    @functools.cached_property
    def _vjp_cache(self) -> list[Exported | None]:
        return [self._get_vjp() if self._get_vjp is not None else None]

    def _vjp(self) -> Exported | None:
        return self._vjp_cache[0]

    def vjp(self) -> Exported:
        """The exported VJP: takes the primal arguments then one cotangent per result,
        returns one cotangent per argument.

        Raises:
          ValueError: ``No VJP is available``.
        """
        v = self._vjp()
        if v is None:
            raise ValueError("No VJP is available")
        return v

    @functools.cached_property
    def module(self) -> ExportedModule:
        """The IR's view of this function (the parameter of ``call_exported``)."""
        return ExportedModule(
            self.fun_name, self.in_avals, self.out_avals, self.platforms,
            self.module_kept_var_idx, self.mlir_module_serialized,
            self.calling_convention_version,
            platform_check=DisabledSafetyCheck.platform() not in self.disabled_safety_checks,
            nr_devices=self.nr_devices, uses_global_constants=self.uses_global_constants,
            arg_names=tuple(_arg_names(self.in_tree)), vjp=_vjp_source(self))

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The flatbuffer bytes (JAX's layout), with ``vjp_order`` levels of VJPs for
        reverse-mode differentiation of the deserialized function.

        Raises:
          ValueError: a VJP of that order is not available.
        """
        return fmt.write_exported(_record(self, vjp_order))

    @api_boundary
    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Apply the function (eagerly, or staged into the current trace).

        Raises:
          ValueError: the arguments' structure, shapes or dtypes differ from the export's.
        """
        leaves, tree = tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise ValueError(_structure_message(self, tree))
        names = self.module.arg_names  # (the structure is the export's: so are the names)
        for name, x, want in zip(names, leaves, self.in_avals):
            got = abstractify(x, name, "Exported.call")
            if got.shape != want.shape or got.dtype != want.dtype:
                _check_arg(name, got, want)
        outs = bind(call_exported_p, *leaves, exported=self.module)
        return tree_unflatten(self.out_tree, outs)


def _arg_names(in_tree: PyTreeDef) -> list[str]:
    """How messages name the flat arguments: ``args[0]``, ``kwargs['w']``."""
    placeholder = in_tree.unflatten([0] * in_tree.num_leaves)
    return [_arg_name(keystr(p)) for p, _ in tree_flatten_with_path(placeholder)[0]]


def _arg_name(path: str) -> str:
    # keystr of ``(args, kwargs)`` paths: ``[0][1]`` is ``args[1]``, ``[1]['k']`` is
    # ``kwargs['k']``.
    if path.startswith("[0]"):
        return "args" + path[3:]
    if path.startswith("[1]"):
        return "kwargs" + path[3:]
    return path


def _check_arg(name: str, got: ShapedArray, want: ShapedArray) -> None:
    if len(got.shape) != len(want.shape):
        raise ValueError(f"Rank mismatch for {name}: expected {want.shape} and called with "
                         f"{got.shape}")
    if got.dtype != want.dtype:
        raise ValueError(f"Dtype mismatch for {name}: expected {want.dtype} and called with "
                         f"{got.dtype}")
    for d, (w, g) in enumerate(zip(want.shape, got.shape)):
        if not is_symbolic(w) and w != g:  # (symbolic sizes are solved by the call)
            raise ValueError(f"Shape mismatch for {name}.shape[{d}] (expected same constant): "
                             f"expected {want.shape} and called with {got.shape}")


def _describe_tree(t: Any) -> str:
    if isinstance(t, tuple):
        return f"a tuple of length {len(t)}"
    if isinstance(t, list):
        return f"a list of length {len(t)}"
    if isinstance(t, dict):
        return f"a dict with keys {sorted(t, key=str)}"
    return "a leaf" if t == 0 else type(t).__name__


def _differences(got: Any, want: Any, path: str) -> list[str]:
    if type(got) is not type(want):
        return [f"   - {path} is {_describe_tree(got)} in the invocation and "
                f"{_describe_tree(want)} when exported, so their Python types differ.\n"]
    if isinstance(got, tuple | list):
        if len(got) != len(want):
            return [f"   - {path} is {_describe_tree(got)} in the invocation and "
                    f"{_describe_tree(want)} when exported, so the lengths do not match.\n"]
        return [m for i, (g, w) in enumerate(zip(got, want))
                for m in _differences(g, w, f"{path}[{i}]")]
    if isinstance(got, dict):
        if set(got) != set(want):
            return [f"   - {path} is {_describe_tree(got)} in the invocation and "
                    f"{_describe_tree(want)} when exported, so the keys do not match.\n"]
        return [m for k in sorted(got, key=str) for m in _differences(got[k], want[k],
                                                                      f"{path}[{k!r}]")]
    return []


def _structure_message(exp: Exported, tree: PyTreeDef) -> str:
    got = tree.unflatten([0] * tree.num_leaves)
    want = exp.in_tree.unflatten([0] * exp.in_tree.num_leaves)
    diffs = (_differences(got[0], want[0], "args") + _differences(got[1], want[1], "kwargs")
             if isinstance(got, tuple) and isinstance(want, tuple) and len(got) == len(want) == 2
             else [])
    return ("The invocation args and kwargs must have the same pytree structure as when the "
            f"function '{exp.fun_name}' was exported, but they have the following structural "
            "differences:\n" + ("".join(diffs) or f"   - got {tree}, expected {exp.in_tree}\n"))


def _vjp_source(exp: Exported) -> Callable[[], ExportedModule | None]:
    """The IR's handle on ``exp``'s VJP: resolved (exported, for a fresh export) only
    when reverse mode transposes a call."""
    if exp._get_vjp is None:
        return FixedVjp(None)

    def resolve() -> ExportedModule | None:
        v = exp._vjp()
        return v.module if v is not None else None
    return resolve


# -- export -----------------------------------------------------------------------

def _check_platforms(platforms: Sequence[str] | None) -> tuple[str, ...]:
    if platforms is None:
        return (default_export_platform(),)
    if isinstance(platforms, str):
        raise ArgumentError(f"export: expected a sequence of platform names for platforms=, "
                            f"but got the string {platforms!r}; write [{platforms!r}]")
    ps = tuple(p.lower() for p in platforms)
    bad = [p for p in ps if p not in _PLATFORMS]
    if bad or not ps or len(set(ps)) != len(ps):
        raise ValueError(f"export: expected distinct platforms among {list(_PLATFORMS)}, but "
                         f"got {list(platforms)}")
    return ps


def export(fun_jit: Any, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = ()) -> Callable[..., Exported]:
    """Export a ``jit``-wrapped function: ``export(jit(f))(*args)`` lowers ``f`` for the
    arguments' shapes and dtypes (arrays or ``ShapeDtypeStruct``\\ s).

    ``platforms`` (default: :func:`default_export_platform`) lists where the module may
    run; ``disabled_checks`` skips safety checks (:class:`DisabledSafetyCheck`).

    Raises:
      ValueError: ``fun_jit`` is not the result of ``jit``; the module calls custom
        targets without compatibility guarantees or back into Python.
    """
    jf = getattr(fun_jit, "_plait_jit", None)
    if not isinstance(jf, JitFunction):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: "
                         f"{fun_jit!r}")
    ps = _check_platforms(platforms)
    checks = tuple(disabled_checks)
    for c in checks:
        if not isinstance(c, DisabledSafetyCheck):
            raise ArgumentError(f"export: expected DisabledSafetyCheck objects in "
                                f"disabled_checks, but got {c!r}")

    @api_boundary
    def do_export(*args: Any, **kwargs: Any) -> Exported:
        _check_scopes(getattr(fun_jit, "__name__", "<unnamed function>"), args, kwargs)
        staged = fun_jit.trace(*args, **kwargs)
        return _export_traced(staged.traced, jf.keep_unused, ps, checks, staged.shardings)
    return do_export


def _check_scopes(fun_name: str, args: Any, kwargs: Any) -> None:
    """Raise unless the symbolic dimensions of all arguments share one scope (JAX's
    error names the first argument with one, and the one that differs)."""
    first: tuple[Scope, str] | None = None
    for path, leaf in tree_flatten_with_path((args, kwargs))[0]:
        for d in getattr(leaf, "shape", ()):
            if not isinstance(d, DimExpr):
                continue
            where = _args_kwargs_path(path)
            if first is None:
                first = (d.scope, where)
            elif d.scope is not first[0]:
                first[0].check_same(d, f"when exporting {fun_name}",
                                    f"current (from {first[1]}) ", where)


def _args_kwargs_path(path: Any) -> str:
    return ("args" if path[0].idx == 0 else "kwargs") + keystr(path[1:])


def _export_traced(traced: Any, keep_unused: bool, platforms: tuple[str, ...],
                   checks: tuple[DisabledSafetyCheck, ...],
                   shardings: tuple[Any, Any] = ((), ())) -> Exported:
    closed, kept = lowerable(traced, keep_unused)
    ins, outs = shardings
    ins = tuple(ins) or (None,) * len(traced.in_avals)
    outs = tuple(outs) or (None,) * len(closed.out_avals)
    spmd = spmd_layout(closed.jaxpr, shaped_avals(closed.in_avals),
                       tuple(s for s, k in zip(ins, kept) if k), outs)
    if spmd is not None and len(platforms) > 1:
        raise NotImplementedError("plait.export: a program over several devices exported for "
                                  "several platforms is not supported yet")
    info = traced.debug_info
    symbolic = not all(is_constant_shape(a.shape) for a in traced.in_avals)
    globals_ = symbolic or len(platforms) > 1
    names = _arg_names(traced.in_tree)
    text = lower_closed_jaxpr(
        physicalize(closed), info.func_name, info.result_paths, platforms=platforms,
        module_attrs=[f"jax.uses_shape_polymorphism = {str(globals_).lower()}"],
        arg_names=[n for n, k in zip(names, kept) if k],
        mesh=spmd.mesh if spmd else None,
        in_shardings=tuple(s for s, k in zip(ins, kept) if k) if spmd else (),
        out_shardings=outs if spmd else ()).text
    module = parse_module(text)
    locs = info.arg_names
    set_locations(module, [locs[i] if i < len(locs) else "" for i, k in enumerate(kept) if k])
    allowed = frozenset(t for c in checks if (t := c.is_custom_call()) is not None)
    check_custom_calls(module, allowed, platforms)
    in_avals = tuple(traced.in_avals)
    out_avals = tuple(shaped_avals(closed.out_avals))

    def get_vjp() -> Exported:
        return _export_vjp(traced, platforms, checks)
    return Exported(
        fun_name=info.func_name, in_tree=traced.in_tree, in_avals=in_avals,
        out_tree=traced.out_tree, out_avals=out_avals, platforms=platforms,
        mlir_module_serialized=serialize_module(module),
        module_kept_var_idx=tuple(i for i, k in enumerate(kept) if k),
        disabled_safety_checks=checks, uses_global_constants=globals_,
        calling_convention_version=_config.export_calling_convention_version,
        nr_devices=spmd.mesh.size if spmd else 1,
        in_named_shardings=ins if spmd else (), out_named_shardings=outs if spmd else (),
        get_vjp=get_vjp)


def _export_vjp(traced: Any, platforms: tuple[str, ...],
                checks: tuple[DisabledSafetyCheck, ...]) -> Exported:
    """Export the VJP of a traced function: primal arguments and output cotangents in,
    input cotangents out (``float0`` for integer and boolean arguments)."""
    closed = traced.closed
    n = len(traced.in_avals)

    def primal(*xs: Any) -> list[Any]:
        return apply_jaxpr(closed.jaxpr, closed.consts, xs, traced.debug_info.func_name)

    def fun_vjp(*args: Any) -> tuple[Any, ...]:
        _, pullback = _vjp(primal, *args[:n])
        return tuple(pullback(list(args[n:])))
    fun_vjp.__name__ = f"vjp_{traced.debug_info.func_name}"
    cts = [tangent_aval(a) for a in shaped_avals(closed.out_avals)]
    specs = [ShapeDtypeStruct(a.shape, a.dtype) for a in (*traced.in_avals, *cts)]
    return export(jit(fun_vjp), platforms=platforms, disabled_checks=checks)(*specs)


# -- serialization ------------------------------------------------------------------

_serializers: dict[type, tuple[str, Callable[[Any], bytes]]] = {}
_deserializers: dict[str, tuple[type, Callable[[bytes], Any], Callable[[Any, Any], Any]]] = {}


def register_pytree_node_serialization(
        nodetype: type, *, serialized_name: str, serialize_auxdata: Callable[[Any], bytes],
        deserialize_auxdata: Callable[[bytes], Any],
        from_children: Callable[[Any, Any], Any] | None = None) -> type:
    """Make a registered pytree node type serializable in exported in/out trees.

    ``serialized_name`` names it in the bytes; ``serialize_auxdata`` and
    ``deserialize_auxdata`` convert its auxiliary data to and from bytes;
    ``from_children(aux, children)`` rebuilds a node (default: the type's unflatten).

    Raises:
      ValueError: the type or the name is registered already.
    """
    if nodetype in _serializers:
        raise ValueError(f"Duplicate serialization registration for type `{nodetype}`. "
                         f"Previous registration was with serialized_name "
                         f"`{_serializers[nodetype][0]}`.")
    if serialized_name in _deserializers:
        raise ValueError(f"Duplicate serialization registration for serialized_name "
                         f"`{serialized_name}`. Previous registration was for type "
                         f"`{_deserializers[serialized_name][0]}`.")
    if from_children is None:
        if nodetype not in unflatten_functions:
            raise ValueError(f"register_pytree_node_serialization: {nodetype} is not a "
                             "registered pytree node; register it first or give from_children")
        from_children = unflatten_functions[nodetype]
    _serializers[nodetype] = (serialized_name, serialize_auxdata)
    _deserializers[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Make a namedtuple type serializable in exported in/out trees under
    ``serialized_name`` (its fields are its children)."""
    if not (issubclass(nodetype, tuple) and hasattr(nodetype, "_fields")):
        raise ValueError("Use `plait.export.register_pytree_node_serialization` for types "
                         f"other than namedtuple. {nodetype} is not a namedtuple.")
    fields = list(nodetype._fields)

    def serialize_aux(aux: Any) -> bytes:
        # The field names, as JSON (JAX's encoding).
        return json.dumps(fields).encode("utf-8")

    def deserialize_aux(data: bytes) -> Any:
        return json.loads(data.decode("utf-8"))

    def build(keys: Any, children: Any) -> Any:
        if not isinstance(keys, list) or len(keys) != len(children):
            raise ValueError(f"expected {len(children)} field names, but got {keys!r}")
        return nodetype(**dict(zip(keys, children)))
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name, serialize_auxdata=serialize_aux,
        deserialize_auxdata=deserialize_aux, from_children=build)


def _ordered_dict_keys(keys: Any) -> bytes:
    if not all(isinstance(k, str) for k in keys):
        raise NotImplementedError("Serialization of collections.OrderedDict is supported only "
                                  f"when the keys are strings. Found keys: {list(keys)}.")
    return json.dumps(list(keys)).encode("utf-8")


def _ordered_dict(keys: Any, children: Any) -> Any:
    if not isinstance(keys, list) or len(keys) != len(children):
        raise ValueError(f"expected {len(children)} keys, but got {keys!r}")
    return collections.OrderedDict(zip(keys, children))


register_pytree_node_serialization(
    collections.OrderedDict, serialized_name="collections.OrderedDict",
    serialize_auxdata=_ordered_dict_keys,
    deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")), from_children=_ordered_dict)


def _tree_record(t: PyTreeDef) -> fmt.TreeNode:
    data = t.node_data()  # type: ignore[attr-defined]  # jaxlib's PyTreeDef, no stubs
    children = tuple(_tree_record(c) for c in t.children())
    if data is None:
        return fmt.TreeNode(fmt.TREE_LEAF)
    kind, aux = data
    if kind is type(None):
        return fmt.TreeNode(fmt.TREE_NONE)
    if kind is tuple:
        return fmt.TreeNode(fmt.TREE_TUPLE, children)
    if kind is list:
        return fmt.TreeNode(fmt.TREE_LIST, children)
    if kind is dict:
        keys = tuple(aux)
        for k in keys:
            if not isinstance(k, str):
                raise TypeError("Serialization is supported only for dictionaries with string "
                                f"keys. Found key {k!r} of type {type(k)}.")
        return fmt.TreeNode(fmt.TREE_DICT, children, keys)
    if kind in _serializers:
        name, ser = _serializers[kind]
        aux_bytes = ser(aux)
        if not isinstance(aux_bytes, bytes | bytearray):
            raise ValueError("The custom serialization function for `node_type` must return a "
                             f"`bytes` object. It returned a {type(aux_bytes)}.")
        return fmt.TreeNode(fmt.TREE_CUSTOM, children, custom_name=name,
                            custom_auxdata=bytes(aux_bytes))
    raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type `{kind}`. "
                     "Use `plait.export.register_pytree_node_serialization` or "
                     "`plait.export.register_namedtuple_serialization`.")


def _aval_record(a: ShapedArray) -> fmt.AvalRecord:
    name = ("float0" if a.dtype == dt.float0 else
            dt.key_field(a.dtype) if dt.is_key(a.dtype) else a.dtype.name)
    if name not in fmt.DTYPE_CODES:
        raise ValueError(f"Cannot serialize an exported function with values of dtype {name}")
    return fmt.AvalRecord(tuple(str(d) for d in a.shape), name)


def _record(exp: Exported, vjp_order: int) -> fmt.ExportedRecord:
    vjp = None
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError("serialization of an Exported that does not have vjps of "
                             "high-enough order")
        vjp = _record(exp.vjp(), vjp_order - 1)
    checks = tuple((c._kind, c._target) for c in exp.disabled_safety_checks)
    return fmt.ExportedRecord(
        fun_name=exp.fun_name, in_tree=_tree_record(exp.in_tree),
        in_avals=tuple(map(_aval_record, exp.in_avals)), out_tree=_tree_record(exp.out_tree),
        out_avals=tuple(map(_aval_record, exp.out_avals)), nr_devices=exp.nr_devices,
        platforms=exp.platforms, ordered_effects=(), unordered_effects=(),
        disabled_checks=checks, module=exp.mlir_module_serialized,
        calling_convention_version=exp.calling_convention_version,
        kept_var_idx=exp.module_kept_var_idx, uses_global_constants=exp.uses_global_constants,
        vjp=vjp, in_shardings=tuple(map(_sharding_record, exp.in_named_shardings)),
        out_shardings=tuple(map(_sharding_record, exp.out_named_shardings)))


_AXIS_CODES: Final = {AxisType.Auto: fmt.AXIS_AUTO, AxisType.Explicit: fmt.AXIS_EXPLICIT,
                      AxisType.Manual: fmt.AXIS_MANUAL}


def _sharding_record(s: NamedSharding | None) -> fmt.ShardingRecord | None:
    if s is None:
        return None
    m = s.mesh
    mesh = fmt.MeshRecord(m.axis_names, m.axis_sizes, tuple(_AXIS_CODES[t] for t in m.axis_types))
    spec = tuple(() if p is None else (p,) if isinstance(p, str) else tuple(p) for p in s.spec)
    return fmt.ShardingRecord(mesh, spec)


def _sharding_from_record(r: fmt.ShardingRecord | None) -> NamedSharding | None:
    """A named sharding over the export mesh (as an abstract mesh: logical devices)."""
    if r is None:
        return None
    m = r.mesh
    types = {v: k for k, v in _AXIS_CODES.items()}
    ids = np.arange(int(np.prod(m.axis_sizes, dtype=np.int64))).reshape(m.axis_sizes)
    mesh = Mesh(ids, m.axis_names, axis_types=tuple(types[t] for t in m.axis_types))
    return NamedSharding(mesh, PartitionSpec(*[None if not a else a[0] if len(a) == 1 else a
                                               for a in r.spec]))


def _tree_from_record(node: fmt.TreeNode) -> Any:
    children = [_tree_from_record(c) for c in node.children]
    if node.kind == fmt.TREE_LEAF:
        return 0
    if node.kind == fmt.TREE_NONE:
        return None
    if node.kind == fmt.TREE_TUPLE:
        return tuple(children)
    if node.kind == fmt.TREE_LIST:
        return children
    if node.kind == fmt.TREE_DICT:
        return dict(zip(node.keys, children))
    if node.custom_name not in _deserializers:
        raise ValueError(f"Cannot deserialize a PyTreeDef containing an unregistered type "
                         f"`{node.custom_name}`. Use "
                         "`plait.export.register_pytree_node_serialization` or "
                         "`plait.export.register_namedtuple_serialization`.")
    _, deser, build = _deserializers[node.custom_name]
    try:
        return build(deser(node.custom_auxdata), children)
    except Exception as exc:  # (the registered functions' errors, on untrusted bytes)
        raise ValueError(f"Cannot rebuild the pytree node `{node.custom_name}` from its "
                         f"serialized data: {exc}") from exc


def _aval_from_record(a: fmt.AvalRecord, where: str, scope: Scope) -> ShapedArray:
    if any(len(d) > _MAX_DIM_TEXT for d in a.shape):
        raise ValueError(f"the serialized exported function is corrupted: {where} has a "
                         f"dimension longer than {_MAX_DIM_TEXT} characters")
    shape = tuple(d for text in a.shape for d in parse_dims(text, scope=scope))
    if len(shape) != len(a.shape):
        raise ValueError(f"the serialized exported function is corrupted: {where} has the "
                         f"dimensions {a.shape}")
    if any(type(d) is int and d < 0 for d in shape):
        raise ValueError(f"the serialized exported function is corrupted: {where} has the "
                         f"shape {shape}")
    name = a.dtype
    if name.startswith("key<"):
        return ShapedArray(shape, dt.from_name(name))
    return ShapedArray(shape, np.dtype(getattr(dt, name) if hasattr(dt, name) else name))


def _from_record(r: fmt.ExportedRecord) -> Exported:
    scope = SymbolicScope()  # (JAX serializes no constraints either)
    in_avals = tuple(_aval_from_record(a, f"argument {i}", scope)
                     for i, a in enumerate(r.in_avals))
    out_avals = tuple(_aval_from_record(a, f"result {i}", scope)
                      for i, a in enumerate(r.out_avals))
    in_tree = tree_structure(_tree_from_record(r.in_tree))
    out_tree = tree_structure(_tree_from_record(r.out_tree))
    if in_tree.num_leaves != len(in_avals) or out_tree.num_leaves != len(out_avals):
        raise ValueError(
            f"the serialized exported function is corrupted: its pytrees have "
            f"{in_tree.num_leaves} and {out_tree.num_leaves} leaves for {len(in_avals)} "
            f"arguments and {len(out_avals)} results")
    if any(not 0 <= i < len(in_avals) for i in r.kept_var_idx) or \
            list(r.kept_var_idx) != sorted(set(r.kept_var_idx)):
        raise ValueError(f"the serialized exported function is corrupted: its kept argument "
                         f"indices {r.kept_var_idx} do not fit its {len(in_avals)} arguments")
    v = r.calling_convention_version
    if not minimum_supported_calling_convention_version <= v <= \
            maximum_supported_calling_convention_version:
        raise ValueError(f"The exported function uses calling convention version {v}; plait "
                         f"supports versions {minimum_supported_calling_convention_version} to "
                         f"{maximum_supported_calling_convention_version}")
    if r.ordered_effects or r.unordered_effects:
        effects = r.ordered_effects + r.unordered_effects
        raise ValueError(f"The exported function has effects {effects}; plait cannot call "
                         "exported functions with effects yet")
    if not r.platforms:
        raise ValueError("the serialized exported function is corrupted: it lists no platforms")
    checks = tuple(DisabledSafetyCheck(k, t) for k, t in r.disabled_checks)
    vjp = _from_record(r.vjp) if r.vjp is not None else None
    return Exported(
        fun_name=r.fun_name, in_tree=in_tree, in_avals=in_avals, out_tree=out_tree,
        out_avals=out_avals, platforms=r.platforms, mlir_module_serialized=r.module,
        module_kept_var_idx=r.kept_var_idx, disabled_safety_checks=checks,
        calling_convention_version=v, nr_devices=r.nr_devices,
        uses_global_constants=r.uses_global_constants,
        in_named_shardings=tuple(map(_sharding_from_record, r.in_shardings)),
        out_named_shardings=tuple(map(_sharding_from_record, r.out_shardings)),
        get_vjp=None if vjp is None else (lambda: vjp))


def deserialize(blob: bytes | bytearray | memoryview) -> Exported:
    """Read an :class:`Exported` from :meth:`Exported.serialize`'s (or JAX's) bytes.

    Safe on untrusted bytes: nothing is unpickled or run.

    Raises:
      ValueError: the bytes are truncated, corrupted, or of a version plait does not know.
    """
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise TypeError(f"deserialize: expected bytes, but got {type(blob).__name__}")
    return _from_record(fmt.read_exported(blob))

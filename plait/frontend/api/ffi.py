"""Foreign function calls (``jax.ffi``): run native handlers registered with XLA.

A handler is compiled code, written against XLA's FFI headers (``include_dir()``) and
registered by name (``register_ffi_target``, with ``pycapsule`` wrapping a ``ctypes``
function pointer).  ``ffi_call(name, result_shape_dtypes)`` returns a function whose
call stages an ``ffi_call`` equation: jitted, vmapped (by its ``vmap_method``) and run
eagerly as any other, never differentiated.  ``ffi_lowering`` and
``build_ffi_lowering_function`` give a user primitive a lowering that calls a handler.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict, cast

import jaxlib
import numpy as np
from jaxlib import xla_client
from jaxlib.mlir import ir

from plait.frontend.api.user_lowering import RuleContext, aval_to_ir_type
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.layouts import Layout
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import bind_n
from plait.ir.avals import AbstractToken, ShapedArray
from plait.ir.errors import ArgumentError
from plait.ir.primitives.composite import HashableArray
from plait.ir.primitives.foreign import (
    FFI_VMAP_METHODS,
    FfiAttributes,
    FrozenDict,
    ffi_call_p,
)
from plait.lowering.attributes import aliases_attr, layouts_attr, mlir_attribute

__all__ = ["ffi_call", "register_ffi_target", "register_ffi_type", "register_ffi_type_id",
           "register_ffi_target_as_batch_partitionable", "pycapsule", "include_dir",
           "ffi_lowering", "build_ffi_lowering_function", "TypeRegistration"]

LayoutOption = Sequence[int] | Layout | None
"""A layout as ``ffi_call`` takes it: ``None`` (row-major), a :class:`Layout`, or the
dimensions in major-to-minor order."""


def register_ffi_target(name: str, fn: Any, platform: str = "cpu", api_version: int = 1,
                        **kwargs: Any) -> None:
    """Register the handler ``fn`` (a ``PyCapsule``, or a dict of them by FFI stage) as
    the target ``name`` on ``platform``; ``api_version`` 1 is XLA's typed FFI, 0 its
    older custom-call API."""
    xla_client.register_custom_call_target(name, fn, platform, api_version, **kwargs)


class TypeRegistration(TypedDict):
    """A user type for FFI handlers: ``type_id`` (and ``type_info``) are ``PyCapsule``\\ s
    of the handler library's ``XLA_FFI_TypeId`` (and ``XLA_FFI_TypeInfo``)."""

    type_id: Any
    type_info: NotRequired[Any]


def register_ffi_type(name: str, type_registration: TypeRegistration,
                      platform: str = "cpu") -> None:
    """Register a user type that handlers take or return (``name`` unique in the process)."""
    xla_client.register_custom_type(name, type_registration, platform=platform)


def register_ffi_type_id(name: str, obj: Any, platform: str = "cpu") -> None:
    """Removed by JAX (as in JAX 0.10.2, always an error): use :func:`register_ffi_type`."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Let the partitioner split calls of ``name`` along their batch dimensions."""
    xla_client.register_custom_call_as_batch_partitionable(name)


def pycapsule(funcptr: Any) -> Any:
    """A ``PyCapsule`` holding a ``ctypes`` function pointer (a handler loaded from a
    shared library), as :func:`register_ffi_target` takes it."""
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    builder = ctypes.pythonapi.PyCapsule_New
    builder.restype = ctypes.py_object
    builder.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    return builder(funcptr, None, destructor(0))


def include_dir() -> str:
    """The directory of the C and C++ headers shipped with jaxlib (``xla/ffi/api/ffi.h``)."""
    return os.path.join(os.path.dirname(os.path.abspath(jaxlib.__file__)), "include")


def _minor_to_major(ndim: int, layout: LayoutOption, what: str) -> tuple[int, ...]:
    if layout is None:
        return tuple(range(ndim - 1, -1, -1))
    if isinstance(layout, Layout):
        if layout.tiling is not None:
            raise ValueError("The FFI does not support layouts with tiling")
        order = tuple(layout.major_to_minor)
    else:
        order = tuple(layout)
    if sorted(order) != list(range(ndim)) or not all(type(d) is int for d in order):
        raise ValueError(f"ffi_call: expected the layout of {what} to order its {ndim} "
                         f"dimensions (major to minor), but got {layout!r}")
    return order[::-1]


def _result_avals(results: Sequence[Any]) -> tuple[ShapedArray, ...]:
    avals = []
    for idx, r in enumerate(results):
        if isinstance(r, AbstractToken):
            raise NotImplementedError("ffi_call: token results (core.abstract_token) are not "
                                      "supported by plait; return an array instead")
        if not hasattr(r, "shape") or not hasattr(r, "dtype"):
            raise ValueError("All elements of result_shape_dtypes must have 'shape' and "
                             f"'dtype' attributes. Got {r} at position {idx}.")
        avals.append(ShapedArray(tuple(r.shape), np.dtype(r.dtype)))
    return tuple(avals)


def _attribute(name: str, value: Any) -> Any:
    """``value`` as an attribute parameter (hashable), checked to have an MLIR form."""
    held = (HashableArray(value) if isinstance(value, np.ndarray) else
            FrozenDict(value) if isinstance(value, dict) else value)
    try:
        hash(held)
        mlir_attribute(held)
    except TypeError as e:
        raise TypeError(f"ffi_call: the attribute {name}={value!r} cannot be passed to a "
                        f"handler: {e}") from None
    return held


def _aliases(aliases: Mapping[int, int] | None, in_avals: Sequence[ShapedArray],
             out_avals: Sequence[ShapedArray], in_layouts: Sequence[tuple[int, ...]],
             out_layouts: Sequence[tuple[int, ...]]) -> tuple[tuple[int, int], ...]:
    pairs = []
    for i, o in sorted((int(i), int(o)) for i, o in (aliases or {}).items()):
        if i >= len(in_avals):
            raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with input "
                             f"index {i} outside the range [0, {len(in_avals)}).")
        if o >= len(out_avals):
            raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                             f"output index {o} outside the range [0, {len(out_avals)}).")
        a, b = in_avals[i], out_avals[o]
        if a.shape != b.shape or a.dtype != b.dtype:
            raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' referring "
                             f"to an input with abstract value {a.str_short(short_dtypes=False)} "
                             f"and an output with a different abstract value "
                             f"{b.str_short(short_dtypes=False)}.")
        if in_layouts[i] != out_layouts[o]:
            raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' referring "
                             f"to an input with layout {in_layouts[i]} and an output with a "
                             f"different layout {out_layouts[o]}.")
        pairs.append((i, o))
    return tuple(pairs)


def ffi_call(target_name: str, result_shape_dtypes: Any, *, has_side_effect: bool = False,
             vmap_method: str | None = None,
             input_layouts: Sequence[LayoutOption] | None = None,
             output_layouts: LayoutOption | Sequence[LayoutOption] | None = None,
             input_output_aliases: dict[int, int] | None = None,
             custom_call_api_version: int = 4,
             legacy_backend_config: str | None = None) -> Callable[..., Any]:
    """A function calling the registered handler ``target_name`` on its positional array
    arguments, with its keyword arguments as the handler's attributes; it returns arrays
    shaped as ``result_shape_dtypes`` (one object with ``shape`` and ``dtype``, or a
    sequence of them).

    ``vmap_method`` says how ``vmap`` applies it (``'sequential'``,
    ``'sequential_unrolled'``, ``'expand_dims'``, ``'broadcast_all'``,
    ``'legacy_vectorized'``); ``has_side_effect`` keeps unused calls;
    ``input_layouts``/``output_layouts`` give the memory order the handler expects
    (major to minor); ``input_output_aliases`` maps inputs to the results reusing their
    buffers.

    Raises:
      ValueError: a bad option, or differentiated (give the function a ``custom_jvp``).
    """
    if vmap_method is not None and vmap_method not in FFI_VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods "
                         f"{[*FFI_VMAP_METHODS, None]}, but got: {vmap_method}")
    multiple = isinstance(result_shape_dtypes, Sequence)
    results = list(result_shape_dtypes) if multiple else [result_shape_dtypes]
    result_avals = _result_avals(results)
    # One result: ``output_layouts`` is its layout; several: one layout each (or None).
    out_opts = (cast("Sequence[LayoutOption] | None", output_layouts) if multiple else
                (cast(LayoutOption, output_layouts),))
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError("The use of the legacy_backend_config parameter requires "
                         f"custom_call_api_version < 4; got {custom_call_api_version}.")

    @api_boundary
    def call(*args: Any, **kwargs: Any) -> Any:
        in_avals = []
        for i, x in enumerate(args):
            try:
                in_avals.append(value_aval(x))
            except TypeError as e:
                raise ArgumentError(f"ffi_call({target_name!r}): args[{i}] cannot be passed "
                                    f"to a handler: {e}") from None
        if input_layouts is not None and len(input_layouts) != len(args):
            raise ValueError(f"The number of input arguments ({len(args)}) must equal the "
                             f"number of input layouts ({len(input_layouts)}).")
        if out_opts is not None and len(out_opts) != len(result_avals):
            raise ValueError(f"The number of outputs ({len(result_avals)}) must equal the "
                             f"number of output layouts ({len(out_opts)}).")
        in_lay = tuple(_minor_to_major(a.ndim, None if input_layouts is None else
                                       input_layouts[i], f"input {i}")
                       for i, a in enumerate(in_avals))
        out_lay = tuple(_minor_to_major(a.ndim, None if out_opts is None else out_opts[i],
                                        f"output {i}") for i, a in enumerate(result_avals))
        attributes = FfiAttributes(sorted((k, _attribute(k, v)) for k, v in kwargs.items()))
        outs = bind_n(ffi_call_p, *args, attributes=attributes,
                      custom_call_api_version=int(custom_call_api_version),
                      has_side_effect=bool(has_side_effect), input_layouts=in_lay,
                      input_output_aliases=_aliases(input_output_aliases, in_avals,
                                                    result_avals, in_lay, out_lay),
                      legacy_backend_config=legacy_backend_config, output_layouts=out_lay,
                      result_avals=result_avals, target_name=target_name,
                      vmap_method=vmap_method)
        if not multiple:
            return outs[0]
        return tuple(outs) if isinstance(result_shape_dtypes, tuple) else list(outs)
    return call


def build_ffi_lowering_function(call_target_name: str, *,
                                operand_layouts: Sequence[LayoutOption] | None = None,
                                result_layouts: Sequence[LayoutOption] | None = None,
                                backend_config: Mapping[str, Any] | str | None = None,
                                skip_ffi_layout_processing: bool = False,
                                **lowering_args: Any) -> Callable[..., Any]:
    """A function building the ``stablehlo.custom_call`` of the handler
    ``call_target_name`` inside a lowering rule (``fn(ctx, *operands, **params)``, the
    params becoming attributes); layouts here are minor to major, as XLA reads them.
    ``lowering_args`` may set ``api_version``, ``has_side_effect`` and
    ``operand_output_aliases``."""
    def build(ctx: RuleContext, *operands: Any, **params: Any) -> Any:
        return _custom_call_op(call_target_name, ctx, operands, params, operand_layouts,
                               result_layouts, backend_config, skip_ffi_layout_processing,
                               dict(lowering_args))
    return build


def ffi_lowering(call_target_name: str, *,
                 operand_layouts: Sequence[LayoutOption] | None = None,
                 result_layouts: Sequence[LayoutOption] | None = None,
                 backend_config: Mapping[str, Any] | str | None = None,
                 skip_ffi_layout_processing: bool = False,
                 **lowering_args: Any) -> Callable[..., Sequence[Any]]:
    """A lowering rule (for ``mlir.register_lowering``) calling the handler
    ``call_target_name`` with the equation's operands, its params as attributes."""
    build = build_ffi_lowering_function(
        call_target_name, operand_layouts=operand_layouts, result_layouts=result_layouts,
        backend_config=backend_config, skip_ffi_layout_processing=skip_ffi_layout_processing,
        **lowering_args)

    def rule(ctx: RuleContext, *operands: Any, **params: Any) -> Sequence[Any]:
        return list(build(ctx, *operands, **params).results)
    return rule


def _lowering_layouts(avals: Sequence[Any], layouts: Sequence[LayoutOption] | None
                      ) -> list[tuple[int, ...]]:
    """Minor-to-major layouts (given ones taken as they are, as JAX's lowering does)."""
    out = []
    for i, a in enumerate(avals):
        lay = None if layouts is None else layouts[i]
        nd = len(getattr(a, "shape", ()))
        if lay is None:
            out.append(tuple(range(nd - 1, -1, -1)))
        elif isinstance(lay, Layout):
            out.append(_minor_to_major(nd, lay, f"value {i}"))
        else:
            out.append(tuple(int(d) for d in lay))
    return out


def _custom_call_op(target: str, ctx: RuleContext, operands: Sequence[Any],
                    params: dict[str, Any], operand_layouts: Sequence[LayoutOption] | None,
                    result_layouts: Sequence[LayoutOption] | None,
                    backend_config: Mapping[str, Any] | str | None, skip_layouts: bool,
                    kwargs: dict[str, Any]) -> Any:
    api_version = int(kwargs.pop("api_version", 4))
    if api_version >= 4:
        if backend_config is not None and not isinstance(backend_config, Mapping):
            raise ValueError("When api_version > 4, backend_config must be a dictionary.")
        config: Any = dict(backend_config or {}, **params)
    else:
        if params:
            raise ValueError("The use of ffi_call attributes requires a custom call API "
                             f"version of at least 4; got api_version={api_version}.")
        config = backend_config
    result_types = kwargs.pop("result_types", None) or [aval_to_ir_type(a)
                                                        for a in ctx.avals_out]
    attrs: dict[str, Any] = {
        "call_target_name": ir.StringAttr.get(target),
        "has_side_effect": ir.BoolAttr.get(bool(kwargs.pop("has_side_effect", False))),
        "called_computations": ir.ArrayAttr.get([]),
    }
    if isinstance(config, dict):
        attrs["backend_config"] = ir.StringAttr.get("")
        attrs["api_version"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1)
        attrs["mhlo.backend_config"] = ir.DictAttr.get({
            k: v if isinstance(v, ir.Attribute) else ir.Attribute.parse(mlir_attribute(v))
            for k, v in config.items()})
    else:
        attrs["backend_config"] = ir.StringAttr.get(config or "")
        attrs["api_version"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32),
                                                  api_version)
    aliases = kwargs.pop("operand_output_aliases", None) or {}
    if aliases:
        attrs["output_operand_aliases"] = ir.Attribute.parse(
            aliases_attr(aliases.items(), len(result_types) == 1))
    if not skip_layouts:
        for key, avals, given in (("operand_layouts", ctx.avals_in, operand_layouts),
                                  ("result_layouts", ctx.avals_out, result_layouts)):
            attrs[key] = ir.Attribute.parse(layouts_attr(_lowering_layouts(avals, given)))
    if kwargs:
        raise TypeError(f"build_ffi_lowering_function: unexpected arguments {sorted(kwargs)}")
    return ir.Operation.create("stablehlo.custom_call", results=result_types,
                               operands=list(operands), attributes=attrs)

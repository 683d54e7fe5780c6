"""Lowering of ``ffi_call``: a ``stablehlo.custom_call`` of the named handler.

As JAX 0.10.2 lowers it: for the typed FFI (``custom_call_api_version`` 4) the attributes
go in an ``mhlo.backend_config`` dictionary, with ``api_version = 1`` on the op (MLIR's
custom call keeps a string ``backend_config``); an older API version takes the opaque
``legacy_backend_config`` string.  Layouts are minor to major, as XLA reads them.
jaxlib's own LAPACK handlers (``lapack_*``) are registered when first named, as JAX
registers them when imported.
"""

from __future__ import annotations

from collections.abc import Sequence

from plait.ir.avals import ShapedArray
from plait.ir.primitives.foreign import FfiAttributes, ffi_call_p
from plait.lowering.attributes import aliases_attr, layouts_attr, mlir_attribute, mlir_string
from plait.lowering.emitter import Value, tensor_type
from plait.lowering.lapack import ensure_registered
from plait.lowering.lower import LoweringContext
from plait.lowering.rules._util import register

__all__: list[str] = []


@register(ffi_call_p)
def _ffi_call(ctx: LoweringContext, *args: Value, attributes: FfiAttributes,
              custom_call_api_version: int, has_side_effect: bool,
              input_layouts: tuple[tuple[int, ...], ...],
              input_output_aliases: tuple[tuple[int, int], ...],
              legacy_backend_config: str | None, output_layouts: tuple[tuple[int, ...], ...],
              result_avals: tuple[ShapedArray, ...], target_name: str,
              vmap_method: str | None) -> Sequence[Value]:
    if target_name.startswith("lapack_"):
        ensure_registered()
    if custom_call_api_version >= 4:
        api_version, config = 1, '""'
        discardable = f"mhlo.backend_config = {mlir_attribute(dict(attributes))}"
    else:
        if attributes:
            raise ValueError("The use of ffi_call attributes requires a custom call API "
                             f"version of at least 4; got api_version={custom_call_api_version}.")
        api_version, config = custom_call_api_version, mlir_string(legacy_backend_config or "")
        discardable = ""
    props = (f'api_version = {api_version} : i32, backend_config = {config}, '
             f'call_target_name = {mlir_string(target_name)}, called_computations = [], '
             f"has_side_effect = {'true' if has_side_effect else 'false'}, "
             f"operand_layouts = {layouts_attr(input_layouts)}, "
             f"output_operand_aliases = "
             f"{aliases_attr(input_output_aliases, len(result_avals) == 1)}, "
             f"result_layouts = {layouts_attr(output_layouts)}")
    return ctx.fn.op("stablehlo.custom_call", list(args), [tensor_type(a) for a in result_avals],
                     props, discardable=discardable)

"""Lowering to StableHLO and the PJRT runtime.

:func:`lower_closed_jaxpr` turns a jaxpr into a StableHLO module (MLIR
text); :mod:`plait.lowering.runtime` compiles and runs it on the CPU.
Depends only on :mod:`plait.ir` (and ``jaxlib``).
"""

from plait.lowering import rules as _rules  # noqa: F401  (registers the lowering rules)
from plait.lowering.lower import (
                                  LoweringContext,
                                  ModuleText,
                                  lower_closed_jaxpr,
                                  lowering_rules,
                                  module_name,
)
from plait.lowering.runtime import (
                                  Executable,
                                  compile_count,
                                  compile_text,
                                  default_device,
                                  device_put,
                                  devices,
                                  parse_module,
                                  to_numpy,
)

__all__ = [
    "LoweringContext", "ModuleText", "lower_closed_jaxpr", "lowering_rules", "module_name",
    "Executable", "compile_count", "compile_text", "default_device", "device_put", "devices",
    "parse_module", "to_numpy",
]

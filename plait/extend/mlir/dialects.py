"""``plait.extend.mlir.dialects``: the MLIR dialects a lowering rule uses; ``hlo`` is
``stablehlo`` (JAX code imports it under that name)."""

from jaxlib.mlir.dialects import chlo as chlo
from jaxlib.mlir.dialects import func as func
from jaxlib.mlir.dialects import stablehlo as hlo
from jaxlib.mlir.dialects import stablehlo as stablehlo

__all__ = ["chlo", "func", "hlo", "stablehlo"]

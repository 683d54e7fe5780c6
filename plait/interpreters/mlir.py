"""``plait.interpreters.mlir``: lowering rules of user primitives, as
``jax.interpreters.mlir``."""

# ``name as name`` marks a re-export for mypy --strict users.
from jaxlib.mlir import ir as ir

from plait.frontend.api.user_lowering import RuleContext as LoweringRuleContext
from plait.frontend.api.user_lowering import aval_to_ir_type as aval_to_ir_type
from plait.frontend.api.user_lowering import ir_constant as ir_constant
from plait.frontend.api.user_lowering import lower_fun as lower_fun
from plait.frontend.api.user_lowering import register_lowering as register_lowering

__all__ = ["LoweringRuleContext", "aval_to_ir_type", "ir_constant", "lower_fun",
           "ir", "register_lowering"]

"""``plait.custom_derivatives``: functions with their own differentiation rules, as
``jax.custom_derivatives`` (the same objects as ``plait.custom_jvp`` and the others)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.custom_derivatives import custom_jvp as custom_jvp
from plait.frontend.api.custom_derivatives import custom_vjp as custom_vjp
from plait.frontend.api.custom_gradient import closure_convert as closure_convert
from plait.frontend.api.custom_gradient import custom_gradient as custom_gradient
from plait.frontend.api.symbolic_zeros import CustomVJPPrimal as CustomVJPPrimal
from plait.frontend.api.symbolic_zeros import SymbolicZero as SymbolicZero
from plait.frontend.api.symbolic_zeros import zero_from_primal as zero_from_primal
from plait.ir.primitives import custom_jvp_call_p as custom_jvp_call_p
from plait.ir.primitives import custom_vjp_call_p as custom_vjp_call_p

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient",
           "custom_jvp", "custom_jvp_call_p", "custom_vjp", "custom_vjp_call_p",
           "zero_from_primal"]

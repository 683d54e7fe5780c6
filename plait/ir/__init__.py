"""plait's IR: a typed, immutable, hash-consed jaxpr language with a text format.

This package is the stable, documented core the rest of plait is built on
and imports nothing from the other layers.  Its pieces:

* types: :class:`ShapedArray` (interned), dtypes;
* atoms: :class:`Var`, :class:`Literal` (interned);
* programs: :class:`Eqn`, :class:`Jaxpr`, :class:`ClosedJaxpr` (structural equality);
* :class:`Primitive` with typing rules, and the primitives themselves;
* :class:`Builder`, the one way to make IR (hash-consing pure equations);
* :func:`check_jaxpr`, the printer and :func:`parse_jaxpr`;
* :func:`eval_jaxpr`, the reference interpreter;
* :class:`JaxprRewriter`, the base of jaxpr-to-jaxpr rewrites.
"""

from plait.ir import dtypes, primitives
from plait.ir import reference as _reference  # noqa: F401  (registers the NumPy rules)
from plait.ir import sharding_rules as _sharding_rules  # noqa: F401  (installs the sharding rules)
from plait.ir import sharding_rules_more as _sharding_rules_more  # noqa: F401  (and the others)
from plait.ir.atoms import Atom, Literal, Var
from plait.ir.avals import (
    AbstractToken,
    AbstractValue,
    ShapedArray,
    abstract_token,
    shaped,
    shaped_avals,
)
from plait.ir.builder import Builder, new_vars
from plait.ir.caches import cache_info, clear_caches
from plait.ir.check import check_jaxpr
from plait.ir.debug_info import DebugInfo, SourceInfo
from plait.ir.effects import NO_EFFECTS, Effect
from plait.ir.interpreter import eval_closed_jaxpr, eval_jaxpr, impl_rules
from plait.ir.jaxpr import ClosedJaxpr, Eqn, Jaxpr, consts_as_invars, convert_constvars, subjaxprs
from plait.ir.notes import note_equation
from plait.ir.params import EMPTY_PARAMS, REQUIRED, Derived, ParamDef, Params
from plait.ir.parser import parse_jaxpr
from plait.ir.primitive import PRIMITIVES, Primitive, lookup_primitive
from plait.ir.printer import pp_eqn_in, pp_jaxpr
from plait.ir.rewriter import JaxprRewriter, RewriteRule

__all__ = [
    "dtypes", "primitives", "cache_info", "clear_caches", "Atom", "Literal", "Var",
    "AbstractValue", "ShapedArray", "AbstractToken", "abstract_token", "shaped", "shaped_avals",
    "Builder", "new_vars",
    "check_jaxpr", "DebugInfo", "SourceInfo", "NO_EFFECTS", "Effect", "eval_closed_jaxpr",
    "eval_jaxpr", "impl_rules", "ClosedJaxpr", "Eqn", "Jaxpr", "subjaxprs", "convert_constvars",
    "consts_as_invars", "EMPTY_PARAMS", "REQUIRED", "Derived", "ParamDef", "Params",
    "parse_jaxpr", "PRIMITIVES", "Primitive", "lookup_primitive", "pp_eqn_in", "pp_jaxpr",
    "note_equation", "JaxprRewriter", "RewriteRule",
]

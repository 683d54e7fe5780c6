"""``plait.experimental.key_reuse``: detecting the reuse of PRNG keys, as
``jax.experimental.key_reuse``.

Turn checking on with ``plait.debug_key_reuse(True)`` (a context manager) or the option
``jax_debug_key_reuse``; a key consumed twice then raises ``plait.errors.KeyReuseError``.
This module holds the analysis itself, which works on any jaxpr: the signatures, the
rule table (register rules for primitives of your own), and static checks of functions.
See ``docs/random.md``.
"""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.key_reuse import check_key_reuse as check_key_reuse
from plait.frontend.api.key_reuse import function_type_signature as function_type_signature
from plait.ir.errors import KeyReuseError as KeyReuseError
from plait.transforms.key_reuse import Forward as Forward
from plait.transforms.key_reuse import KeyReuseRule as KeyReuseRule
from plait.transforms.key_reuse import KeyReuseSignature as KeyReuseSignature
from plait.transforms.key_reuse import Sink as Sink
from plait.transforms.key_reuse import Source as Source
from plait.transforms.key_reuse import check_key_reuse_jaxpr as check_key_reuse_jaxpr
from plait.transforms.key_reuse import defforward as defforward
from plait.transforms.key_reuse import jaxpr_signature as jaxpr_signature
from plait.transforms.key_reuse import key_reuse_rules as key_reuse_rules

jaxpr_type_signature = jaxpr_signature
"""JAX's name for :func:`jaxpr_signature`."""
key_reuse_signatures = key_reuse_rules
"""JAX's name for :data:`key_reuse_rules`."""

__all__ = ["KeyReuseError", "KeyReuseRule", "KeyReuseSignature", "Sink", "Source", "Forward",
           "check_key_reuse", "check_key_reuse_jaxpr", "function_type_signature",
           "jaxpr_signature", "jaxpr_type_signature", "defforward", "key_reuse_rules",
           "key_reuse_signatures"]

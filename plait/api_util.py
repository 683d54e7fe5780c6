"""``plait.api_util``: the helpers of JAX's ``jax.api_util``, for code that builds its own
transformations on ``plait.extend.linear_util``'s wrapped functions.  ``debug_info``
returns plait's :class:`~plait.ir.debug_info.DebugInfo`.  See ``docs/compat.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.api_util import argnums_partial as argnums_partial
from plait.frontend.api.api_util import debug_info as debug_info
from plait.frontend.api.api_util import donation_vector as donation_vector
from plait.frontend.api.api_util import flatten_axes as flatten_axes
from plait.frontend.api.api_util import flatten_fun as flatten_fun
from plait.frontend.api.api_util import flatten_fun_nokwargs as flatten_fun_nokwargs
from plait.frontend.api.api_util import infer_argnums_and_argnames as infer_argnums_and_argnames
from plait.frontend.api.api_util import rebase_donate_argnums as rebase_donate_argnums
from plait.frontend.api.api_util import safe_map as safe_map
from plait.frontend.api.api_util import shaped_abstractify as shaped_abstractify

__all__ = ["argnums_partial", "debug_info", "donation_vector", "flatten_axes", "flatten_fun",
           "flatten_fun_nokwargs", "infer_argnums_and_argnames", "rebase_donate_argnums",
           "safe_map", "shaped_abstractify"]

"""``plait.compat``: running code written for JAX on plait.

``alias_jax()`` makes ``import jax`` give plait in this process, so that a library
written against JAX's public API (optax, say) runs on plait unchanged;
``python -m plait run script.py`` runs a script that way.  See ``docs/compat.md``.
"""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.jax_alias import JAX_API_VERSION as JAX_API_VERSION
from plait.frontend.api.jax_alias import alias_jax as alias_jax
from plait.frontend.api.jax_alias import jax_alias_installed as jax_alias_installed

__all__ = ["JAX_API_VERSION", "alias_jax", "jax_alias_installed"]

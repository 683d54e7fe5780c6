"""``plait.extend.source_info_util``: which code counts as the user's, as
``jax.extend.source_info_util``.  See ``docs/compat.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.core.traceback_util import register_exclusion as register_exclusion

__all__ = ["register_exclusion"]

"""``plait.ad``: how a pullback routes each cotangent (``f_vjp.with_refs(...)``), as
``jax.ad``.  See ``docs/refs.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.pullback import DidntWant as DidntWant
from plait.frontend.api.pullback import DontWant as DontWant
from plait.frontend.api.pullback import GradRef as GradRef
from plait.frontend.api.pullback import GradValue as GradValue

__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue"]

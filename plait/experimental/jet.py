"""``plait.experimental.jet``: ``jet``, Taylor-mode higher-order differentiation, as
``jax.experimental.jet``.  See ``docs/autodiff.md``; the rules are in
:mod:`plait.transforms.jet_rules`."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.jet import jet as jet

__all__ = ["jet"]

"""``plait.test_util``: helpers for testing code written with plait, as
``jax.test_util``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.check_grads import check_grads as check_grads
from plait.frontend.api.check_grads import check_jvp as check_jvp
from plait.frontend.api.check_grads import check_vjp as check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]

"""``plait.experimental.ode``: ``odeint``, adaptive Dormand--Prince integration of
ordinary differential equations with adjoint-method gradients, as
``jax.experimental.ode``.  See ``docs/optimize.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.scipy.ode import odeint as odeint

__all__ = ["odeint"]

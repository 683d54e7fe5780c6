"""``plait.scipy.optimize``: ``minimize`` (BFGS, and JAX's experimental L-BFGS) and
``OptimizeResults``, as JAX 0.10.2's ``jax.scipy.optimize`` (see
:mod:`plait.frontend.scipy.optimize`)."""

from plait.frontend.scipy.optimize import OptimizeResults as OptimizeResults
from plait.frontend.scipy.optimize import minimize as minimize

__all__ = ["OptimizeResults", "minimize"]

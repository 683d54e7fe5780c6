"""``plait.experimental.sparse.ad``: sparse-aware differentiation, as JAX 0.10.2's
``jax.experimental.sparse.ad`` (see :mod:`plait.frontend.sparse.ad`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.sparse.ad import grad as grad
from plait.frontend.sparse.ad import jacfwd as jacfwd
from plait.frontend.sparse.ad import jacobian as jacobian
from plait.frontend.sparse.ad import jacrev as jacrev
from plait.frontend.sparse.ad import value_and_grad as value_and_grad
from plait.frontend.sparse.base import JAXSparse as JAXSparse

__all__ = ["JAXSparse", "grad", "jacfwd", "jacobian", "jacrev", "value_and_grad"]

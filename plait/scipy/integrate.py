"""``plait.scipy.integrate``: ``trapezoid``, as JAX 0.10.2's ``jax.scipy.integrate``
(see :mod:`plait.frontend.scipy.integrate`)."""

from plait.frontend.scipy.integrate import trapezoid as trapezoid

__all__ = ["trapezoid"]

"""``plait.scipy.interpolate``: ``RegularGridInterpolator``, as JAX 0.10.2's
``jax.scipy.interpolate`` (see :mod:`plait.frontend.scipy.interpolate`)."""

from plait.frontend.scipy.interpolate import RegularGridInterpolator as RegularGridInterpolator

__all__ = ["RegularGridInterpolator"]

"""``plait.scipy.spatial``: as JAX 0.10.2's ``jax.scipy.spatial``, rotations
(:mod:`plait.scipy.spatial.transform`)."""

from plait.scipy.spatial import transform as transform

__all__ = ["transform"]

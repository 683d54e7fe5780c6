"""``plait.flatten_util``: ``ravel_pytree``, a pytree of arrays as one flat vector, as
JAX 0.10.2's ``jax.flatten_util`` (see :mod:`plait.frontend.numpy.flatten_util`)."""

from plait.frontend.numpy.flatten_util import ravel_pytree as ravel_pytree

__all__ = ["ravel_pytree"]

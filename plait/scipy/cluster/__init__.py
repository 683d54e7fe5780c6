"""``plait.scipy.cluster``: as JAX 0.10.2's ``jax.scipy.cluster``, vector quantization
(:mod:`plait.scipy.cluster.vq`)."""

from plait.scipy.cluster import vq as vq

__all__ = ["vq"]

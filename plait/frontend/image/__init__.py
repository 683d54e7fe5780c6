"""``plait.image``'s functions: resampling an image by a scale and a translation, as JAX
0.10.2's ``jax.image`` (``resize``, ``scale_and_translate``, ``ResizeMethod``).  The
public facade is :mod:`plait.image`."""

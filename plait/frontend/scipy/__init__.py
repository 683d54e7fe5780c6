"""``plait.scipy``'s functions: ``special`` (special functions over the lax primitives)
and ``stats`` (one module per distribution), with the signatures, dtypes and values of
JAX 0.10.2's ``jax.scipy``.  The public facade is :mod:`plait.scipy`."""

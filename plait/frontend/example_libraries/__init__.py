"""Example libraries: ``stax`` (neural-network layers) and ``optimizers``, as JAX 0.10.2's
``jax.example_libraries``.  Public as :mod:`plait.example_libraries`."""

"""``plait.example_libraries``: the small neural-network (:mod:`~plait.example_libraries.stax`)
and optimizer (:mod:`~plait.example_libraries.optimizers`) libraries of JAX's
``jax.example_libraries``, with the same functions and the same numbers.  As in JAX,
they are examples to learn from and to run old code on, not a framework."""

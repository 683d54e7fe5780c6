"""``plait.nn``'s functions, as JAX 0.10.2's ``jax.nn``: activations
(:mod:`~plait.frontend.nn.activations`), softmax and normalization
(:mod:`~plait.frontend.nn.softmax`), ``one_hot`` and ``dot_product_attention``; and
parameter initializers (:mod:`~plait.frontend.nn.initializers`).  The public facade is
:mod:`plait.nn`."""

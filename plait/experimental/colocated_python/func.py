"""``jax.experimental.colocated_python.func``, JAX's private module of the colocated
function object: plait serves none of its names (a colocated function is called where it
is; see :mod:`plait.experimental.colocated_python`).  The module exists for code that
imports it (orbax's transport for Pathways does)."""

__all__: list[str] = []

"""``plait.scipy.sparse``: as JAX 0.10.2's ``jax.scipy.sparse``, only the iterative
solvers of :mod:`plait.scipy.sparse.linalg`."""

from plait.scipy.sparse import linalg as linalg

__all__ = ["linalg"]

"""``plait.lax.linalg``: the linear-algebra primitives' functions (``cholesky``, ``qr``,
``eigh``, ``svd``, ``lu``, ``triangular_solve``...), as ``jax.lax.linalg``.  See
``docs/numpy.md``."""

# (Each module star-imported by name, so that mypy sees every function.)
from plait.frontend.api.linalg_updates import *  # noqa: F401,F403
from plait.frontend.api.linalg_updates import __all__ as _updates_all
from plait.frontend.lax.linalg import *  # noqa: F401,F403
from plait.frontend.lax.linalg import __all__ as _linalg_all
from plait.frontend.lax.linalg_eig import *  # noqa: F401,F403
from plait.frontend.lax.linalg_factorizations import *  # noqa: F401,F403
from plait.frontend.lax.linalg_schur import *  # noqa: F401,F403
from plait.frontend.scipy.linalg_polar import qdwh as qdwh

__all__ = [*_linalg_all, *_updates_all, "qdwh"]

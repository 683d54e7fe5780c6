"""``plait.scipy.sparse.linalg``: the Krylov solvers ``cg``, ``gmres`` and ``bicgstab``
(see :mod:`plait.frontend.scipy.sparse_linalg`)."""

from plait.frontend.scipy.sparse_linalg import *  # noqa: F401,F403
from plait.frontend.scipy.sparse_linalg import __all__ as __all__

"""``plait.experimental.sparse.coo``: the COO format's module, as JAX 0.10.2's
``jax.experimental.sparse.coo`` (see :mod:`plait.frontend.sparse.coo`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.sparse.base import JAXSparse as JAXSparse
from plait.frontend.sparse.coo import COO as COO
from plait.frontend.sparse.coo import COOInfo as COOInfo
from plait.frontend.sparse.coo import coo_fromdense as coo_fromdense
from plait.frontend.sparse.coo import coo_matmat as coo_matmat
from plait.frontend.sparse.coo import coo_matvec as coo_matvec
from plait.frontend.sparse.coo import coo_todense as coo_todense
from plait.frontend.sparse.layout import CuSparseEfficiencyWarning as CuSparseEfficiencyWarning

__all__ = ["COO", "COOInfo", "CuSparseEfficiencyWarning", "JAXSparse", "coo_fromdense",
           "coo_matmat", "coo_matvec", "coo_todense"]

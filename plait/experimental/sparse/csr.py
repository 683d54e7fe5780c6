"""``plait.experimental.sparse.csr``: the CSR and CSC formats' module, as JAX 0.10.2's
``jax.experimental.sparse.csr`` (see :mod:`plait.frontend.sparse.csr`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.sparse.base import JAXSparse as JAXSparse
from plait.frontend.sparse.coo import COOInfo as COOInfo
from plait.frontend.sparse.csr import CSC as CSC
from plait.frontend.sparse.csr import CSR as CSR
from plait.frontend.sparse.csr import csr_fromdense as csr_fromdense
from plait.frontend.sparse.csr import csr_matmat as csr_matmat
from plait.frontend.sparse.csr import csr_matvec as csr_matvec
from plait.frontend.sparse.csr import csr_todense as csr_todense
from plait.frontend.sparse.layout import CuSparseEfficiencyWarning as CuSparseEfficiencyWarning

__all__ = ["COOInfo", "CSC", "CSR", "CuSparseEfficiencyWarning", "JAXSparse", "csr_fromdense",
           "csr_matmat", "csr_matvec", "csr_todense"]

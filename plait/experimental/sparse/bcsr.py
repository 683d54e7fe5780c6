"""``plait.experimental.sparse.bcsr``: the BCSR format's module, as JAX 0.10.2's
``jax.experimental.sparse.bcsr`` (see :mod:`plait.frontend.sparse.bcsr`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.sparse.base import JAXSparse as JAXSparse
from plait.frontend.sparse.bcsr import BCSR as BCSR
from plait.frontend.sparse.bcsr import bcsr_broadcast_in_dim as bcsr_broadcast_in_dim
from plait.frontend.sparse.bcsr import bcsr_concatenate as bcsr_concatenate
from plait.frontend.sparse.bcsr import bcsr_dot_general as bcsr_dot_general
from plait.frontend.sparse.bcsr import bcsr_eliminate_zeros as bcsr_eliminate_zeros
from plait.frontend.sparse.bcsr import bcsr_extract as bcsr_extract
from plait.frontend.sparse.bcsr import bcsr_fromdense as bcsr_fromdense
from plait.frontend.sparse.bcsr import bcsr_sum_duplicates as bcsr_sum_duplicates
from plait.frontend.sparse.bcsr import bcsr_todense as bcsr_todense
from plait.frontend.sparse.bcsr_layout import BCSRLayout as BCSRProperties
from plait.frontend.sparse.layout import CuSparseEfficiencyWarning as CuSparseEfficiencyWarning
from plait.frontend.sparse.layout import SparseEfficiencyWarning as SparseEfficiencyWarning
from plait.frontend.sparse.layout import SparseInfo as SparseInfo
from plait.frontend.sparse.layout import nfold_vmap as nfold_vmap

__all__ = ["BCSR", "BCSRProperties", "CuSparseEfficiencyWarning", "JAXSparse",
           "SparseEfficiencyWarning", "SparseInfo", "bcsr_broadcast_in_dim",
           "bcsr_concatenate", "bcsr_dot_general", "bcsr_eliminate_zeros",
           "bcsr_extract", "bcsr_fromdense", "bcsr_sum_duplicates", "bcsr_todense",
           "nfold_vmap"]

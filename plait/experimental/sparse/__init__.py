"""``plait.experimental.sparse``: sparse arrays (BCOO, BCSR, COO, CSR, CSC),
``sparsify``, sparse-aware differentiation and ``sparse.linalg``, as JAX 0.10.2's
``jax.experimental.sparse`` (see :mod:`plait.frontend.sparse` and ``docs/sparse.md``)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.experimental.sparse import linalg as linalg
from plait.frontend.sparse.ad import grad as grad
from plait.frontend.sparse.ad import jacfwd as jacfwd
from plait.frontend.sparse.ad import jacobian as jacobian
from plait.frontend.sparse.ad import jacrev as jacrev
from plait.frontend.sparse.ad import value_and_grad as value_and_grad
from plait.frontend.sparse.base import JAXSparse as JAXSparse
from plait.frontend.sparse.bcoo import BCOO as BCOO
from plait.frontend.sparse.bcoo import bcoo_fromdense as bcoo_fromdense
from plait.frontend.sparse.bcoo import bcoo_sort_indices as bcoo_sort_indices
from plait.frontend.sparse.bcoo import bcoo_sum_duplicates as bcoo_sum_duplicates
from plait.frontend.sparse.bcoo import bcoo_todense as bcoo_todense
from plait.frontend.sparse.bcoo import bcoo_transpose as bcoo_transpose
from plait.frontend.sparse.bcoo import bcoo_update_layout as bcoo_update_layout
from plait.frontend.sparse.bcoo import sparsify as sparsify
from plait.frontend.sparse.bcoo import todense as todense
from plait.frontend.sparse.bcsr import BCSR as BCSR
from plait.frontend.sparse.bcsr import bcsr_broadcast_in_dim as bcsr_broadcast_in_dim
from plait.frontend.sparse.bcsr import bcsr_concatenate as bcsr_concatenate
from plait.frontend.sparse.bcsr import bcsr_dot_general as bcsr_dot_general
from plait.frontend.sparse.bcsr import bcsr_extract as bcsr_extract
from plait.frontend.sparse.bcsr import bcsr_fromdense as bcsr_fromdense
from plait.frontend.sparse.bcsr import bcsr_sum_duplicates as bcsr_sum_duplicates
from plait.frontend.sparse.bcsr import bcsr_todense as bcsr_todense
from plait.frontend.sparse.coo import COO as COO
from plait.frontend.sparse.coo import coo_fromdense as coo_fromdense
from plait.frontend.sparse.coo import coo_matmat as coo_matmat
from plait.frontend.sparse.coo import coo_matvec as coo_matvec
from plait.frontend.sparse.coo import coo_todense as coo_todense
from plait.frontend.sparse.csr import CSC as CSC
from plait.frontend.sparse.csr import CSR as CSR
from plait.frontend.sparse.csr import csr_fromdense as csr_fromdense
from plait.frontend.sparse.csr import csr_matmat as csr_matmat
from plait.frontend.sparse.csr import csr_matvec as csr_matvec
from plait.frontend.sparse.csr import csr_todense as csr_todense
from plait.frontend.sparse.layout import CuSparseEfficiencyWarning as CuSparseEfficiencyWarning
from plait.frontend.sparse.layout import SparseEfficiencyError as SparseEfficiencyError
from plait.frontend.sparse.layout import SparseEfficiencyWarning as SparseEfficiencyWarning
from plait.frontend.sparse.operations import bcoo_broadcast_in_dim as bcoo_broadcast_in_dim
from plait.frontend.sparse.operations import bcoo_concatenate as bcoo_concatenate
from plait.frontend.sparse.operations import (
    bcoo_conv_general_dilated as bcoo_conv_general_dilated,
)
from plait.frontend.sparse.operations import bcoo_dot_general as bcoo_dot_general
from plait.frontend.sparse.operations import (
    bcoo_dot_general_sampled as bcoo_dot_general_sampled,
)
from plait.frontend.sparse.operations import bcoo_dynamic_slice as bcoo_dynamic_slice
from plait.frontend.sparse.operations import bcoo_eliminate_zeros as bcoo_eliminate_zeros
from plait.frontend.sparse.operations import bcoo_extract as bcoo_extract
from plait.frontend.sparse.operations import bcoo_gather as bcoo_gather
from plait.frontend.sparse.operations import bcoo_multiply_dense as bcoo_multiply_dense
from plait.frontend.sparse.operations import bcoo_multiply_sparse as bcoo_multiply_sparse
from plait.frontend.sparse.operations import bcoo_reduce_sum as bcoo_reduce_sum
from plait.frontend.sparse.operations import bcoo_reshape as bcoo_reshape
from plait.frontend.sparse.operations import bcoo_rev as bcoo_rev
from plait.frontend.sparse.operations import bcoo_slice as bcoo_slice
from plait.frontend.sparse.operations import bcoo_squeeze as bcoo_squeeze
from plait.frontend.sparse.operations import empty as empty
from plait.frontend.sparse.operations import eye as eye
from plait.frontend.sparse.operations import random_bcoo as random_bcoo
from plait.frontend.sparse.sparsify import todense_p as todense_p

__all__ = ["BCOO", "BCSR", "COO", "CSC", "CSR", "CuSparseEfficiencyWarning", "JAXSparse",
           "SparseEfficiencyError", "SparseEfficiencyWarning", "bcoo_broadcast_in_dim",
           "bcoo_concatenate", "bcoo_conv_general_dilated", "bcoo_dot_general",
           "bcoo_dot_general_sampled", "bcoo_dynamic_slice", "bcoo_eliminate_zeros",
           "bcoo_extract", "bcoo_fromdense", "bcoo_gather", "bcoo_multiply_dense",
           "bcoo_multiply_sparse", "bcoo_reduce_sum", "bcoo_reshape", "bcoo_rev", "bcoo_slice",
           "bcoo_sort_indices", "bcoo_squeeze", "bcoo_sum_duplicates", "bcoo_todense",
           "bcoo_transpose", "bcoo_update_layout", "bcsr_broadcast_in_dim", "bcsr_concatenate",
           "bcsr_dot_general", "bcsr_extract", "bcsr_fromdense", "bcsr_sum_duplicates",
           "bcsr_todense", "coo_fromdense", "coo_matmat", "coo_matvec", "coo_todense",
           "csr_fromdense", "csr_matmat", "csr_matvec", "csr_todense", "empty", "eye", "grad",
           "jacfwd", "jacobian", "jacrev", "linalg", "random_bcoo", "sparsify", "todense",
           "todense_p", "value_and_grad"]

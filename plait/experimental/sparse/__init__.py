"""``plait.experimental.sparse``: BCOO sparse arrays and ``sparsify``, as JAX 0.10.2's
``jax.experimental.sparse`` (see :mod:`plait.frontend.sparse` and ``docs/sparse.md``).
Of JAX's formats only BCOO is here (no BCSR, COO, CSR), and no ``sparse.linalg``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.sparse.bcoo import BCOO as BCOO
from plait.frontend.sparse.bcoo import bcoo_fromdense as bcoo_fromdense
from plait.frontend.sparse.bcoo import bcoo_sort_indices as bcoo_sort_indices
from plait.frontend.sparse.bcoo import bcoo_sum_duplicates as bcoo_sum_duplicates
from plait.frontend.sparse.bcoo import bcoo_todense as bcoo_todense
from plait.frontend.sparse.bcoo import bcoo_transpose as bcoo_transpose
from plait.frontend.sparse.bcoo import bcoo_update_layout as bcoo_update_layout
from plait.frontend.sparse.bcoo import sparsify as sparsify
from plait.frontend.sparse.bcoo import todense as todense
from plait.frontend.sparse.layout import CuSparseEfficiencyWarning as CuSparseEfficiencyWarning
from plait.frontend.sparse.layout import SparseEfficiencyError as SparseEfficiencyError
from plait.frontend.sparse.layout import SparseEfficiencyWarning as SparseEfficiencyWarning
from plait.frontend.sparse.operations import bcoo_broadcast_in_dim as bcoo_broadcast_in_dim
from plait.frontend.sparse.operations import bcoo_concatenate as bcoo_concatenate
from plait.frontend.sparse.operations import bcoo_dot_general as bcoo_dot_general
from plait.frontend.sparse.operations import (
    bcoo_dot_general_sampled as bcoo_dot_general_sampled,
)
from plait.frontend.sparse.operations import bcoo_extract as bcoo_extract
from plait.frontend.sparse.operations import bcoo_multiply_dense as bcoo_multiply_dense
from plait.frontend.sparse.operations import bcoo_multiply_sparse as bcoo_multiply_sparse
from plait.frontend.sparse.operations import bcoo_reduce_sum as bcoo_reduce_sum
from plait.frontend.sparse.operations import bcoo_reshape as bcoo_reshape
from plait.frontend.sparse.operations import bcoo_slice as bcoo_slice
from plait.frontend.sparse.operations import bcoo_squeeze as bcoo_squeeze
from plait.frontend.sparse.operations import empty as empty
from plait.frontend.sparse.operations import eye as eye
from plait.frontend.sparse.operations import random_bcoo as random_bcoo
from plait.frontend.sparse.sparsify import todense_p as todense_p

__all__ = ["BCOO", "CuSparseEfficiencyWarning", "SparseEfficiencyError",
           "SparseEfficiencyWarning", "bcoo_broadcast_in_dim", "bcoo_concatenate",
           "bcoo_dot_general", "bcoo_dot_general_sampled", "bcoo_extract", "bcoo_fromdense",
           "bcoo_multiply_dense", "bcoo_multiply_sparse", "bcoo_reduce_sum", "bcoo_reshape",
           "bcoo_slice", "bcoo_sort_indices", "bcoo_squeeze", "bcoo_sum_duplicates",
           "bcoo_todense", "bcoo_transpose", "bcoo_update_layout", "empty", "eye",
           "random_bcoo", "sparsify", "todense", "todense_p"]

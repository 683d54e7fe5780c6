"""``plait.experimental.sparse.bcoo``: the BCOO format's module, as JAX 0.10.2's
``jax.experimental.sparse.bcoo`` (the same names as :mod:`plait.experimental.sparse`
serves for BCOO)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.experimental.sparse import BCOO as BCOO
from plait.experimental.sparse import CuSparseEfficiencyWarning as CuSparseEfficiencyWarning
from plait.experimental.sparse import JAXSparse as JAXSparse
from plait.experimental.sparse import SparseEfficiencyError as SparseEfficiencyError
from plait.experimental.sparse import SparseEfficiencyWarning as SparseEfficiencyWarning
from plait.experimental.sparse import bcoo_broadcast_in_dim as bcoo_broadcast_in_dim
from plait.experimental.sparse import bcoo_concatenate as bcoo_concatenate
from plait.experimental.sparse import bcoo_conv_general_dilated as bcoo_conv_general_dilated
from plait.experimental.sparse import bcoo_dot_general as bcoo_dot_general
from plait.experimental.sparse import bcoo_dot_general_sampled as bcoo_dot_general_sampled
from plait.experimental.sparse import bcoo_dynamic_slice as bcoo_dynamic_slice
from plait.experimental.sparse import bcoo_eliminate_zeros as bcoo_eliminate_zeros
from plait.experimental.sparse import bcoo_extract as bcoo_extract
from plait.experimental.sparse import bcoo_fromdense as bcoo_fromdense
from plait.experimental.sparse import bcoo_gather as bcoo_gather
from plait.experimental.sparse import bcoo_multiply_dense as bcoo_multiply_dense
from plait.experimental.sparse import bcoo_multiply_sparse as bcoo_multiply_sparse
from plait.experimental.sparse import bcoo_reduce_sum as bcoo_reduce_sum
from plait.experimental.sparse import bcoo_reshape as bcoo_reshape
from plait.experimental.sparse import bcoo_rev as bcoo_rev
from plait.experimental.sparse import bcoo_slice as bcoo_slice
from plait.experimental.sparse import bcoo_sort_indices as bcoo_sort_indices
from plait.experimental.sparse import bcoo_squeeze as bcoo_squeeze
from plait.experimental.sparse import bcoo_sum_duplicates as bcoo_sum_duplicates
from plait.experimental.sparse import bcoo_todense as bcoo_todense
from plait.experimental.sparse import bcoo_transpose as bcoo_transpose
from plait.experimental.sparse import bcoo_update_layout as bcoo_update_layout
from plait.frontend.sparse.layout import Layout as BCOOProperties
from plait.frontend.sparse.layout import SparseInfo as SparseInfo
from plait.frontend.sparse.layout import nfold_vmap as nfold_vmap

__all__ = ["BCOO", "BCOOProperties", "CuSparseEfficiencyWarning", "JAXSparse",
           "SparseEfficiencyError", "SparseEfficiencyWarning", "SparseInfo",
           "bcoo_broadcast_in_dim", "bcoo_concatenate", "bcoo_conv_general_dilated",
           "bcoo_dot_general", "bcoo_dot_general_sampled", "bcoo_dynamic_slice",
           "bcoo_eliminate_zeros", "bcoo_extract", "bcoo_fromdense", "bcoo_gather",
           "bcoo_multiply_dense", "bcoo_multiply_sparse", "bcoo_reduce_sum", "bcoo_reshape",
           "bcoo_rev", "bcoo_slice", "bcoo_sort_indices", "bcoo_squeeze",
           "bcoo_sum_duplicates", "bcoo_todense", "bcoo_transpose", "bcoo_update_layout",
           "nfold_vmap"]

"""``plait.experimental.sparse.util``: the warnings, errors and helpers of JAX 0.10.2's
``jax.experimental.sparse.util``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.sparse.layout import CuSparseEfficiencyWarning as CuSparseEfficiencyWarning
from plait.frontend.sparse.layout import SparseEfficiencyError as SparseEfficiencyError
from plait.frontend.sparse.layout import SparseEfficiencyWarning as SparseEfficiencyWarning
from plait.frontend.sparse.layout import SparseInfo as SparseInfo
from plait.frontend.sparse.layout import broadcasting_vmap as broadcasting_vmap
from plait.frontend.sparse.layout import nfold_vmap as nfold_vmap

__all__ = ["CuSparseEfficiencyWarning", "SparseEfficiencyError", "SparseEfficiencyWarning",
           "SparseInfo", "broadcasting_vmap", "nfold_vmap"]

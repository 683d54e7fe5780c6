"""``plait.experimental.sparse.api``: the format-generic functions of JAX 0.10.2's
``jax.experimental.sparse.api`` (``empty``, ``eye``, ``todense``) and the formats."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.sparse.base import JAXSparse as JAXSparse
from plait.frontend.sparse.bcoo import BCOO as BCOO
from plait.frontend.sparse.bcoo import todense as todense
from plait.frontend.sparse.bcsr import BCSR as BCSR
from plait.frontend.sparse.coo import COO as COO
from plait.frontend.sparse.csr import CSC as CSC
from plait.frontend.sparse.csr import CSR as CSR
from plait.frontend.sparse.operations import empty as empty
from plait.frontend.sparse.operations import eye as eye

__all__ = ["BCOO", "BCSR", "COO", "CSC", "CSR", "JAXSparse", "empty", "eye", "todense"]

"""``plait.dlpack``: exchanging arrays with other libraries through DLPack, as
``jax.dlpack`` (see :mod:`plait.frontend.core.dlpack`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.core.dlpack import from_dlpack as from_dlpack
from plait.frontend.core.dlpack import is_supported_dtype as is_supported_dtype

__all__ = ["from_dlpack", "is_supported_dtype"]

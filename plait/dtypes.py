"""``plait.dtypes``: dtype utilities, as ``jax.dtypes``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.core.dtype_queries import canonicalize_dtype as canonicalize_dtype
from plait.frontend.core.dtype_queries import extended as extended
from plait.frontend.core.dtype_queries import finfo as finfo
from plait.frontend.core.dtype_queries import iinfo as iinfo
from plait.frontend.core.dtype_queries import issubdtype as issubdtype
from plait.frontend.core.dtype_queries import itemsize_bits as itemsize_bits
from plait.frontend.core.dtype_queries import prng_key as prng_key
from plait.frontend.core.dtype_queries import scalar_type_of as scalar_type_of
from plait.frontend.core.promotion import result_type as result_type
from plait.ir.dtypes import bfloat16 as _bfloat16_dtype
from plait.ir.dtypes import float0 as float0
from plait.ir.errors import TypePromotionError as TypePromotionError

bfloat16 = _bfloat16_dtype.type
"""The ``bfloat16`` scalar type (``ml_dtypes.bfloat16``)."""

__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo",
           "float0", "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type",
           "scalar_type_of"]

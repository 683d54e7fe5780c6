"""``plait.extend.linear_util``: functions with a stack of transformations
(``WrappedFun``), as JAX's ``jax.extend.linear_util``.  See ``docs/compat.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.linear_util import StoreException as StoreException
from plait.frontend.api.linear_util import WrappedFun as WrappedFun
from plait.frontend.api.linear_util import cache as cache
from plait.frontend.api.linear_util import merge_linear_aux as merge_linear_aux
from plait.frontend.api.linear_util import transformation as transformation
from plait.frontend.api.linear_util import transformation2 as transformation2
from plait.frontend.api.linear_util import transformation_with_aux as transformation_with_aux
from plait.frontend.api.linear_util import transformation_with_aux2 as transformation_with_aux2
from plait.frontend.api.linear_util import wrap_init as wrap_init

__all__ = ["StoreException", "WrappedFun", "cache", "merge_linear_aux", "transformation",
           "transformation2", "transformation_with_aux", "transformation_with_aux2",
           "wrap_init"]

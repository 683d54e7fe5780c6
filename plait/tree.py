"""``plait.tree``: the pytree functions under JAX's short names (``plait.tree.map`` is
``plait.tree_util.tree_map``, and so on), as ``jax.tree``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.core.tree_nodes import static_field as static
from plait.frontend.core.tree_util import tree_all as all  # noqa: A004  (JAX's name)
from plait.frontend.core.tree_util import tree_broadcast as broadcast
from plait.frontend.core.tree_util import tree_flatten as flatten
from plait.frontend.core.tree_util import tree_flatten_with_path as flatten_with_path
from plait.frontend.core.tree_util import tree_leaves as leaves
from plait.frontend.core.tree_util import tree_leaves_with_path as leaves_with_path
from plait.frontend.core.tree_util import tree_map as map  # noqa: A004
from plait.frontend.core.tree_util import tree_map_with_path as map_with_path
from plait.frontend.core.tree_util import tree_reduce as reduce
from plait.frontend.core.tree_util import tree_reduce_associative as reduce_associative
from plait.frontend.core.tree_util import tree_structure as structure
from plait.frontend.core.tree_util import tree_transpose as transpose
from plait.frontend.core.tree_util import tree_unflatten as unflatten

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]

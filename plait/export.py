"""``plait.export``: exporting and serializing staged computations, as ``jax.export``.

``export(jit(f))(*args)`` gives an :class:`Exported`; ``serialize()`` its bytes in
JAX's layout; ``deserialize`` reads them (plait's or JAX's) back; ``call`` applies it.
"""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.export import DisabledSafetyCheck as DisabledSafetyCheck
from plait.frontend.api.export import Exported as Exported
from plait.frontend.api.export import SymbolicScope as SymbolicScope
from plait.frontend.api.export import default_export_platform as default_export_platform
from plait.frontend.api.export import deserialize as deserialize
from plait.frontend.api.export import export as export
from plait.frontend.api.export import is_symbolic_dim as is_symbolic_dim
from plait.frontend.api.export import (
    maximum_supported_calling_convention_version as maximum_supported_calling_convention_version,
)
from plait.frontend.api.export import (
    minimum_supported_calling_convention_version as minimum_supported_calling_convention_version,
)
from plait.frontend.api.export import (
    register_namedtuple_serialization as register_namedtuple_serialization,
)
from plait.frontend.api.export import (
    register_pytree_node_serialization as register_pytree_node_serialization,
)
from plait.frontend.api.export import symbolic_args_specs as symbolic_args_specs
from plait.frontend.api.export import symbolic_shape as symbolic_shape

__all__ = ["export", "Exported", "deserialize", "DisabledSafetyCheck", "default_export_platform",
           "minimum_supported_calling_convention_version",
           "maximum_supported_calling_convention_version", "register_pytree_node_serialization",
           "register_namedtuple_serialization", "symbolic_shape", "symbolic_args_specs",
           "SymbolicScope", "is_symbolic_dim"]

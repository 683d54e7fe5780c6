"""``plait.experimental.mesh_utils``: device grids for meshes, as
``jax.experimental.mesh_utils`` (see :mod:`plait.frontend.api.mesh_utils`)."""

from plait.frontend.api.mesh_utils import *  # noqa: F401,F403
from plait.frontend.api.mesh_utils import __all__ as __all__

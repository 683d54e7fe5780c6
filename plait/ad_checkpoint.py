"""``plait.ad_checkpoint``: what reverse mode saves, and how to choose it, as
``jax.ad_checkpoint``: :func:`checkpoint_name`, :data:`checkpoint_policies`,
:func:`print_saved_residuals` (see :mod:`plait.frontend.api.checkpoint`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.checkpoint import checkpoint as checkpoint
from plait.frontend.api.checkpoint import checkpoint_name as checkpoint_name
from plait.frontend.api.checkpoint import checkpoint_policies as checkpoint_policies
from plait.frontend.api.checkpoint import remat as remat
from plait.frontend.api.saved_residuals import print_saved_residuals as print_saved_residuals
from plait.frontend.api.saved_residuals import saved_residuals as saved_residuals
from plait.ir.primitives.remat_policies import Offloadable as Offloadable
from plait.ir.primitives.remat_policies import Recompute as Recompute
from plait.ir.primitives.remat_policies import Saveable as Saveable

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat",
           "print_saved_residuals", "saved_residuals", "Offloadable", "Recompute", "Saveable"]

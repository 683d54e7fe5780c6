"""``plait.scipy``: SciPy-compatible functions, as ``jax.scipy`` (see
:mod:`plait.frontend.scipy`): ``linalg``, ``special`` and ``stats``."""

from plait.scipy import linalg as linalg
from plait.scipy import special as special
from plait.scipy import stats as stats

__all__ = ["linalg", "special", "stats"]

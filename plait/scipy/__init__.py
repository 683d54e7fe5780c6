"""``plait.scipy``: SciPy-compatible functions, as ``jax.scipy`` (see
:mod:`plait.frontend.scipy`): ``fft``, ``integrate``, ``interpolate``, ``linalg``,
``ndimage``, ``optimize``, ``signal``, ``special`` and ``stats``."""

from plait.scipy import fft as fft
from plait.scipy import integrate as integrate
from plait.scipy import interpolate as interpolate
from plait.scipy import linalg as linalg
from plait.scipy import ndimage as ndimage
from plait.scipy import optimize as optimize
from plait.scipy import signal as signal
from plait.scipy import special as special
from plait.scipy import stats as stats

__all__ = ["fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal",
           "special", "stats"]

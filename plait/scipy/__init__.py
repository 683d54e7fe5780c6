"""``plait.scipy``: SciPy-compatible functions, as ``jax.scipy`` (see
:mod:`plait.frontend.scipy`): ``cluster``, ``fft``, ``integrate``, ``interpolate``,
``linalg``, ``ndimage``, ``optimize``, ``signal``, ``sparse``, ``spatial``, ``special`` and
``stats``."""

from plait.scipy import cluster as cluster
from plait.scipy import fft as fft
from plait.scipy import integrate as integrate
from plait.scipy import interpolate as interpolate
from plait.scipy import linalg as linalg
from plait.scipy import ndimage as ndimage
from plait.scipy import optimize as optimize
from plait.scipy import signal as signal
from plait.scipy import sparse as sparse
from plait.scipy import spatial as spatial
from plait.scipy import special as special
from plait.scipy import stats as stats

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "sparse", "spatial", "special", "stats"]

"""``plait.scipy.signal``: convolutions, ``detrend`` and spectral analysis, as JAX 0.10.2's
``jax.scipy.signal`` (see :mod:`plait.frontend.scipy.signal` and
:mod:`plait.frontend.scipy.signal_spectral`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.scipy.signal import convolve as convolve
from plait.frontend.scipy.signal import convolve2d as convolve2d
from plait.frontend.scipy.signal import correlate as correlate
from plait.frontend.scipy.signal import correlate2d as correlate2d
from plait.frontend.scipy.signal import detrend as detrend
from plait.frontend.scipy.signal import fftconvolve as fftconvolve
from plait.frontend.scipy.signal_spectral import csd as csd
from plait.frontend.scipy.signal_spectral import istft as istft
from plait.frontend.scipy.signal_spectral import stft as stft
from plait.frontend.scipy.signal_spectral import welch as welch

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve",
           "csd", "istft", "stft", "welch"]

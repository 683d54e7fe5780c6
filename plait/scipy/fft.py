"""``plait.scipy.fft``: the discrete cosine transform of type 2 and its inverse, as JAX
0.10.2's ``jax.scipy.fft`` (see :mod:`plait.frontend.scipy.fft`)."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.scipy.fft import dct as dct
from plait.frontend.scipy.fft import dctn as dctn
from plait.frontend.scipy.fft import idct as idct
from plait.frontend.scipy.fft import idctn as idctn

__all__ = ["dct", "dctn", "idct", "idctn"]

"""The von Mises distribution (``jax.scipy.stats.vonmises``) on the circle: density
``exp(kappa cos x) / (2 pi I0(kappa))``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, kappa: Any) -> Array:
    """The log of the probability density at ``x`` (NaN for non-positive ``kappa``),
    through the exponentially scaled Bessel function ``i0e`` so large ``kappa`` is exact."""
    x, kappa = promote("vonmises.logpdf", x, kappa)
    value = kappa * (pnp.cos(x) - 1) - pnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return pnp.where(kappa > const(kappa, 0), value, np.nan)


def pdf(x: Any, kappa: Any) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, kappa))

"""The wrapped Cauchy distribution (``jax.scipy.stats.wrapcauchy``) on ``[0, 2 pi]``:
density ``(1 - c^2) / (2 pi (1 + c^2 - 2 c cos x))`` for ``0 < c < 1``."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, c: Any) -> Array:
    """The log of the probability density at ``x`` (``-inf`` outside ``[0, 2 pi]``, NaN
    for ``c`` outside ``(0, 1)``)."""
    x, c = promote("wrapcauchy.logpdf", x, c)
    c2 = c * c
    value = (pnp.log(1 - c2) - pnp.log(2 * np.pi)
             - pnp.log(1 + c2 - 2 * c * pnp.cos(x)))
    on_circle = (x >= const(x, 0)) & (x <= const(x, 2 * np.pi))
    valid = (c > const(c, 0)) & (c < const(c, 1))
    return pnp.where(valid, pnp.where(on_circle, value, -np.inf), np.nan)


def pdf(x: Any, c: Any) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, c))

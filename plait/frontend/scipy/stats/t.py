"""Student's t distribution (``jax.scipy.stats.t``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.array_base import Array
from plait.frontend.scipy._util import const, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The log of the probability density at ``x`` with ``df`` degrees of freedom."""
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    two = const(x, 2)
    scaled_x = (x - loc) / scale
    df_over_two = df / two
    df_plus_one_over_two = df_over_two + const(x, 0.5)
    normalize_const = scale * scale * const(x, np.pi)
    normalize = (lax.lgamma(df_over_two) + lax.log(normalize_const * df) / two
                 - lax.lgamma(df_plus_one_over_two))
    quadratic = scaled_x * scaled_x / df
    return lax.neg(lax.add(normalize, lax.mul(df_plus_one_over_two, lax.log1p(quadratic))))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Array:
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, df, loc, scale))

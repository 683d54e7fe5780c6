"""``interp``: piecewise-linear interpolation, as ``jax.numpy`` computes it (a binary
search for each point's interval, and gathers of its ends)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import (
    as_array,
    check_arraylike,
    ndim,
    promote_dtypes_inexact,
    shape,
)
from plait.frontend.numpy.manipulation import concatenate
from plait.frontend.numpy.searching import searchsorted
from plait.frontend.numpy.ufuncs import abs as abs_
from plait.frontend.numpy.ufuncs import clip, where
from plait.ir import dtypes as dt

__all__ = ["interp"]


def _extrapolates(side: Any, name: str) -> bool:
    if not isinstance(side, str):
        return False
    if side != "extrapolate":
        raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', but "
                         f"got: {side!r}")
    return True


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Array:
    """The piecewise-linear function through ``(xp[i], fp[i])`` (``xp`` increasing) at
    ``x``; below and above the ends it is ``left`` and ``right`` (the end values by
    default, or ``'extrapolate'``); ``period`` makes ``x`` periodic."""
    check_arraylike("interp", x, xp, fp)
    if np.shape(xp) != np.shape(fp) or ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    extrapolate_left = _extrapolates(left, "left")
    extrapolate_right = _extrapolates(right, "right")
    return _interp(x, xp, fp, None if extrapolate_left else left,
                   None if extrapolate_right else right, period,
                   extrapolate_left=extrapolate_left, extrapolate_right=extrapolate_right)


@compiled_when_eager(("extrapolate_left", "extrapolate_right"))
def _interp(x: Any, xp: Any, fp: Any, left: Any, right: Any, period: Any, *,
            extrapolate_left: bool, extrapolate_right: bool) -> Array:
    xs, xps = (as_array(a) for a in promote_dtypes_inexact("interp", x, xp))
    fps = as_array(promote_dtypes_inexact("interp", fp)[0])
    if dt.is_complex(xs.dtype):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = abs_(period)
        xs, xps = xs % period, xps % period
        xps, fps = lax.sort_key_val(xps, fps)
        xps = concatenate([xps[-1:] - period, xps, xps[:1] + period])
        fps = concatenate([fps[-1:], fps, fps[:1]])
    i = clip(searchsorted(xps, xs, side="right"), 1, shape(xps)[0] - 1)
    df = fps[i] - fps[i - 1]
    dx = xps[i] - xps[i - 1]
    delta = xs - xps[i - 1]
    # Where dx vanishes, the left end's value (and no NaN gradient from 0/0).
    flat = abs_(dx) <= np.spacing(np.finfo(xps.dtype).eps)
    f = where(flat, fps[i - 1], fps[i - 1] + (delta / where(flat, 1, dx)) * df)
    if not extrapolate_left and period is None:
        f = where(xs < xps[0], fps[0] if left is None else left, f)
    if not extrapolate_right and period is None:
        f = where(xs > xps[-1], fps[-1] if right is None else right, f)
    return f

"""``plait.scipy.integrate``: numerical integration of sampled data, as JAX 0.10.2's
``jax.scipy.integrate``."""

from __future__ import annotations

from typing import Any

from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.numpy.calculus import trapezoid as _np_trapezoid

__all__ = ["trapezoid"]


def _trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Array:
    return _np_trapezoid(y, x, dx, axis)


_jitted = jit(_trapezoid, static_argnames=("axis",))


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Array:
    """The integral of the samples ``y`` along ``axis`` by the composite trapezoidal
    rule: at the sample points ``x`` when given, else with the constant spacing ``dx``
    (a scalar, or an array broadcast against ``y``).  Integers and bools become the
    default float; compiled, as JAX's (``axis`` is static).

    Raises:
      TypeError: ``y`` or ``x`` is not an array or scalar (a list, say).
    """
    return _jitted(y, x, dx, axis=axis)

"""What the functions of plait.scipy share: argument promotion and constants."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.numpy._core import as_array, check_arraylike, promote_to_inexact
from plait.frontend.numpy.creation import zeros_like
from plait.frontend.numpy.ufuncs import _lax_const
from plait.ir.atoms import Literal

__all__ = ["promote", "const", "horner"]


def promote(name: str, *args: Any) -> list[Array]:
    """The arguments as Arrays of their common inexact dtype and rank (JAX's
    ``promote_args_inexact``).

    Raises:
      TypeError: an argument is not an array or scalar (a list, a string).
    """
    check_arraylike(name, *args)
    return [as_array(a) for a in promote_to_inexact(name, *args)]


def const(x: Any, value: Any) -> Literal:
    """``value`` as a scalar of ``x``'s dtype, weakly typed when ``x`` is a weakly typed
    scalar (JAX's ``lax._const``)."""
    return _lax_const(x, value)


def horner(coeffs: Sequence[float], x: Array) -> Array:
    """The polynomial with ``coeffs`` (highest power first) at ``x``, in ``x``'s dtype,
    starting from zero as ``jnp.polyval`` does (so an infinite ``x`` gives NaN, too)."""
    return _polyval(np.asarray(coeffs, x.dtype), x)


# As ``jnp.polyval``, which JAX's special functions call: compiled when eager (XLA
# then fuses each multiply-add), with the coefficients as an argument.
@compiled_when_eager(())
def _polyval(c: Any, x: Array) -> Array:
    y = zeros_like(x)
    for i in range(c.shape[0]):
        y = y * x + c[i]
    return y

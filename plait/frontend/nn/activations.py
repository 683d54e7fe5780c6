"""Activation functions, as JAX 0.10.2's ``jax.nn``: the same formulas (so the same
primitives, values, dtypes and weak types), the same ``jit`` wrappers (a call traces to
``jit[name=relu]``-style equations, as JAX's), and JAX's custom derivatives: ``relu``'s
at 0 is 0, ``relu6``'s at 0 and 6 is 0, and ``log1mexp``'s is ``g / expm1(x)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend import numpy as pnp
from plait.frontend.api.custom_derivatives import custom_jvp
from plait.frontend.api.jit import jit
from plait.frontend.core.array_base import Array
from plait.frontend.nn._util import jit_as
from plait.frontend.numpy._core import as_array, check_arraylike, promote_to_inexact
from plait.frontend.numpy.ufuncs import tanh

__all__ = ["identity", "relu", "relu6", "squareplus", "softplus", "sparse_plus", "soft_sign",
           "sigmoid", "sparse_sigmoid", "silu", "swish", "mish", "log_sigmoid", "elu",
           "leaky_relu", "hard_tanh", "celu", "selu", "gelu", "glu", "hard_sigmoid",
           "hard_silu", "hard_swish", "log1mexp", "tanh"]


def _arraylike(name: str, x: Any) -> Array:
    # JAX's ensure_arraylike: refuse lists and other non-arrays, naming the function.
    check_arraylike(name, x)
    return as_array(x)


@jit
def identity(x: Any) -> Array:
    """The identity activation: ``x`` unchanged (as an array)."""
    return _arraylike("identity", x)


def _relu(x: Any) -> Array:
    """The rectified linear unit ``max(x, 0)``, whose derivative at 0 is taken to be 0
    (see `Numerical influence of ReLU'(0) on backpropagation
    <https://dl.acm.org/doi/10.5555/3540261.3540297>`_)."""
    return pnp.maximum(x, 0)


relu = custom_jvp(jit_as("relu", _relu))
# At the kink the derivative is 0, not maximum's 1/2: JAX's rule, for the same reason.
relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


def _relu6(x: Any) -> Array:
    """The rectified linear unit 6, ``min(max(x, 0), 6)``; its derivative at 0 and at 6
    is taken to be 0."""
    return pnp.minimum(pnp.maximum(x, 0), 6.)


relu6 = custom_jvp(jit_as("relu6", _relu6))
relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


@jit
def squareplus(x: Any, b: Any = 4) -> Array:
    """Squareplus, ``(x + sqrt(x**2 + b)) / 2`` (https://arxiv.org/abs/2112.11687)."""
    check_arraylike("squareplus", x, b)
    y: Array = x + pnp.sqrt(pnp.square(x) + b)
    return y / 2


@jit
def softplus(x: Any) -> Array:
    """Softplus, ``log(1 + exp(x))``, computed as ``logaddexp(x, 0)``."""
    return pnp.logaddexp(x, 0)


@jit
def sparse_plus(x: Any) -> Array:
    """Sparse plus: 0 for ``x <= -1``, ``(x + 1)**2 / 4`` between, ``x`` for ``x >= 1``
    (softplus's twin with exact zeros and a linear tail)."""
    x = _arraylike("sparse_plus", x)
    return pnp.where(x <= -1.0, 0.0, pnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jit
def soft_sign(x: Any) -> Array:
    """Soft sign, ``x / (|x| + 1)``."""
    x_arr = _arraylike("soft_sign", x)
    return x_arr / (pnp.abs(x_arr) + 1)


def sigmoid(x: Any) -> Array:
    """The logistic sigmoid ``1 / (1 + exp(-x))`` (the ``logistic`` primitive).

    Raises:
      TypeError: ``x`` is not floating-point (as JAX's ``lax.logistic``).
    """
    # JAX's sigmoid is jit(inline=True): it traces to the bare primitive.
    return lax.logistic(x)


@jit
def sparse_sigmoid(x: Any) -> Array:
    """Sparse sigmoid: 0 for ``x <= -1``, ``(x + 1) / 2`` between, 1 for ``x >= 1``
    (the derivative of :func:`sparse_plus`)."""
    return 0.5 * pnp.clip(x + 1.0, 0.0, 2.0)


@jit
def silu(x: Any) -> Array:
    """SiLU (swish), ``x * sigmoid(x)``."""
    x_arr = _arraylike("silu", x)
    return x_arr * sigmoid(x_arr)


swish = silu


@jit
def mish(x: Any) -> Array:
    """Mish, ``x * tanh(softplus(x))`` (https://arxiv.org/abs/1908.08681)."""
    x_arr = _arraylike("mish", x)
    return x_arr * pnp.tanh(softplus(x_arr))


@jit
def log_sigmoid(x: Any) -> Array:
    """``log(sigmoid(x))``, computed as ``-softplus(-x)``."""
    x_arr = _arraylike("log_sigmoid", x)
    return -softplus(-x_arr)


@jit
def elu(x: Any, alpha: Any = 1.0) -> Array:
    """Exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""
    x_arr = _arraylike("elu", x)
    # The inner where keeps expm1 of large positive x (unused) from overflowing, which
    # would give NaN derivatives.
    return pnp.where(x_arr > 0, x_arr, alpha * pnp.expm1(pnp.where(x_arr > 0, 0., x_arr)))


@jit
def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Array:
    """Leaky ReLU: ``x`` for ``x >= 0``, ``negative_slope * x`` otherwise."""
    x_arr = _arraylike("leaky_relu", x)
    return pnp.where(x_arr >= 0, x_arr, negative_slope * x_arr)


@jit
def hard_tanh(x: Any) -> Array:
    """Hard tanh: ``x`` clipped to ``[-1, 1]``."""
    x_arr = _arraylike("hard_tanh", x)
    return pnp.where(x_arr > 1, 1, pnp.where(x_arr < -1, -1, x_arr))


@jit
def celu(x: Any, alpha: Any = 1.0) -> Array:
    """Continuously-differentiable ELU: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``
    (https://arxiv.org/abs/1704.07483)."""
    out: Array = pnp.maximum(x, 0.0) + alpha * pnp.expm1(pnp.minimum(x, 0.0) / alpha)
    return out


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@jit
def selu(x: Any) -> Array:
    """Scaled ELU, ``scale * elu(x, alpha)`` with the self-normalizing constants
    ``scale = 1.0507...`` and ``alpha = 1.6732...`` (https://arxiv.org/abs/1706.02515)."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x: Any, approximate: bool = True) -> Array:
    """Gaussian error linear unit: ``x * Phi(x)``, or with ``approximate`` (the default)
    its tanh form ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))``
    (https://arxiv.org/abs/1606.08415).  Integers and bools become the default float."""
    # Not jitted, as JAX's (its jit was found to change numerics).
    x_arr, = promote_to_inexact("gelu", as_array(_arraylike("gelu", x)))
    if approximate:
        # The constants in x's dtype, so they do not promote a narrower float.
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x_arr.dtype)
        cdf = 0.5 * (1.0 + pnp.tanh(sqrt_2_over_pi * (x_arr + 0.044715 * (x_arr ** 3))))
        out: Array = x_arr * cdf
        return out
    sqrt_half = np.sqrt(0.5).astype(x_arr.dtype)
    return pnp.array(0.5 * x_arr * lax.erfc(-x_arr * sqrt_half), dtype=x_arr.dtype)


def _glu(x: Any, axis: int) -> Array:
    x_arr = _arraylike("glu", x)
    size = x_arr.shape[axis]
    if size % 2 != 0:
        raise ValueError(f"glu: expected the size of axis {axis} to be divisible by 2, but "
                         f"got {size}")
    x1, x2 = pnp.split(x_arr, 2, axis)
    return x1 * sigmoid(x2)


_glu_jit = jit_as("glu", _glu, static_argnames=("axis",))


def glu(x: Any, axis: int = -1) -> Array:
    """Gated linear unit: ``x`` split in two halves ``a, b`` along ``axis``, then
    ``a * sigmoid(b)``.

    Raises:
      ValueError: the size of ``axis`` is odd.
    """
    return _glu_jit(x, axis=axis)


@jit
def hard_sigmoid(x: Any) -> Array:
    """Hard sigmoid, ``relu6(x + 3) / 6``."""
    return relu6(x + 3.) / 6.


@jit
def hard_silu(x: Any) -> Array:
    """Hard SiLU (hard swish), ``x * hard_sigmoid(x)``."""
    x_arr = _arraylike("hard_silu", x)
    return x_arr * hard_sigmoid(x_arr)


hard_swish = hard_silu


def _log1mexp(x: Any) -> Array:
    """``log(1 - exp(-x))`` for ``x >= 0``, computed stably (Mächler's two branches,
    split at ``log 2``); its derivative is ``1 / expm1(x)``."""
    x = _arraylike("log1mexp", x)
    c = pnp.log(2.0)
    return pnp.where(x < c, pnp.log(-pnp.expm1(-x)), pnp.log1p(-pnp.exp(-x)))


log1mexp = custom_jvp(jit_as("log1mexp", _log1mexp))
log1mexp.defjvps(lambda g, ans, x: g / pnp.expm1(x))

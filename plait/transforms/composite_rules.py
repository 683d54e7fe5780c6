"""JVP, transpose and batching of ``composite``: none, as in JAX 0.10.2.

JAX refuses to differentiate a composite (a compiler may replace it by a kernel the
decomposition does not describe), with the messages below; ``jax.custom_jvp`` or
``jax.custom_vjp`` around it add a derivative.  It has no batching rule either, so vmap
raises the uniform "Batching rule for 'composite' not implemented".  The rules here
exist to raise those errors; they run only where a tangent, a cotangent or a mapped
axis actually reaches the equation (equations off those paths are copied).
"""

from __future__ import annotations

from typing import Any, NoReturn

from plait.ir.errors import RuleNotImplementedError
from plait.ir.primitives import composite_p
from plait.transforms.jvp import jvp_rules
from plait.transforms.transpose import transpose_rules
from plait.transforms.vmap import batching_rules


def _jvp(*args: Any, **params: Any) -> NoReturn:
    raise ValueError(
        "JVP rule for composite not implemented. You can use `jax.custom_jvp` to add "
        "support. See https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _transpose(*args: Any, **params: Any) -> NoReturn:
    # (JAX's message, missing space included.)
    raise ValueError(
        "Transpose rule for composite not implemented. You can use`jax.custom_jvp` or "
        "`jax.custom_vjp` to add support. See "
        "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _batch(*args: Any, **params: Any) -> NoReturn:
    raise RuleNotImplementedError("Batching", composite_p.name)


jvp_rules[composite_p] = _jvp
transpose_rules[composite_p] = _transpose
batching_rules[composite_p] = _batch

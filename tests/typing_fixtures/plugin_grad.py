"""grad and value_and_grad under the plugin: return types and check-time errors."""

import numpy as np

import plait
import plait.numpy as pnp
from plait.typing import Array


def loss(w: Array, x: float) -> Array:
    return pnp.sum(pnp.sin(w) * x)


def loss_aux(params: dict[str, Array], x: Array) -> tuple[Array, list[int]]:
    return pnp.sum(params["w"] * x), [1]


def to_str(x: float) -> str:
    return str(x)


def floats(x: float, y: np.ndarray) -> float:
    return x


reveal_type(plait.grad(loss))  # N: Revealed type is "def (w: plait.frontend.core.array_base.Array, x: float) -> plait.frontend.core.array_base.Array"
reveal_type(plait.grad(loss, argnums=1)(pnp.ones(3), 2.0))  # N: Revealed type is "plait.frontend.core.array_base.Array"
reveal_type(plait.grad(loss, argnums=(1, 0)))  # N: Revealed type is "def (w: plait.frontend.core.array_base.Array, x: float) -> tuple[plait.frontend.core.array_base.Array, plait.frontend.core.array_base.Array]"
reveal_type(plait.grad(loss, -1))  # N: Revealed type is "def (w: plait.frontend.core.array_base.Array, x: float) -> plait.frontend.core.array_base.Array"
reveal_type(plait.grad(floats, argnums=(0, 1)))  # N: Revealed type is "def (x: float, y: numpy.ndarray[tuple[Any, ...], numpy.dtype[Any]]) -> tuple[plait.frontend.core.array_base.Array, plait.frontend.core.array_base.Array]"
reveal_type(plait.grad(loss_aux, has_aux=True))  # N: Revealed type is "def (params: dict[str, plait.frontend.core.array_base.Array], x: plait.frontend.core.array_base.Array) -> tuple[dict[str, plait.frontend.core.array_base.Array], list[int]]"
reveal_type(plait.value_and_grad(loss))  # N: Revealed type is "def (w: plait.frontend.core.array_base.Array, x: float) -> tuple[plait.frontend.core.array_base.Array, plait.frontend.core.array_base.Array]"
reveal_type(plait.value_and_grad(loss_aux, has_aux=True))  # N: Revealed type is "def (params: dict[str, plait.frontend.core.array_base.Array], x: plait.frontend.core.array_base.Array) -> tuple[tuple[plait.frontend.core.array_base.Array, list[int]], dict[str, plait.frontend.core.array_base.Array]]"
reveal_type(plait.grad(plait.jit(loss)))  # N: Revealed type is "def (w: plait.frontend.core.array_base.Array, x: float) -> plait.frontend.core.array_base.Array"
reveal_type(plait.grad(plait.grad(floats)))  # N: Revealed type is "def (x: float, y: numpy.ndarray[tuple[Any, ...], numpy.dtype[Any]]) -> plait.frontend.core.array_base.Array"

plait.grad(to_str)(1.0)  # E: grad: expected a function returning a scalar array or float, but "to_str" returns "str"; grad differentiates scalar outputs only (use jacrev or vjp for others)  [plait-transform]
plait.value_and_grad(loss_aux)  # E: value_and_grad: expected a function returning a scalar array or float, but "loss_aux" returns "tuple[Array, list[int]]"; value_and_grad differentiates scalar outputs only (use jacrev or vjp for others)  [plait-transform]
plait.grad(loss, has_aux=True)  # E: grad(..., has_aux=True): expected a function returning a pair (output, aux), but "loss" returns "Array"  [plait-transform]
plait.grad(loss, argnums=2)  # E: grad: argnums=2 is out of range: the function has 2 positional parameters, so argnums must be in [-2, 2)  [plait-transform]
plait.value_and_grad(loss, argnums=(0, -3))  # E: value_and_grad: argnums=-3 is out of range: the function has 2 positional parameters, so argnums must be in [-2, 2)  [plait-transform]
plait.grad(loss)(pnp.ones(3), "x")  # E: Argument 2 has incompatible type "str"; expected "float"  [arg-type]

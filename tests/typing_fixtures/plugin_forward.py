"""jvp, vjp and linearize under the plugin follow the function's types."""

import plait
import plait.numpy as pnp
from plait.typing import Array


def f(x: Array, y: float) -> Array:
    return pnp.sin(x) * y


def f_aux(x: Array) -> tuple[Array, str]:
    return x * 2.0, "aux"


def scalar(x: float) -> float:
    return x * 2.0


x = pnp.ones(3)
reveal_type(plait.jvp(f, (x, 2.0), (x, 1.0)))  # N: Revealed type is "tuple[plait.frontend.core.array_base.Array, plait.frontend.core.array_base.Array]"
reveal_type(plait.jvp(scalar, (1.0,), (1.0,)))  # N: Revealed type is "tuple[plait.frontend.core.array_base.Array, plait.frontend.core.array_base.Array]"
reveal_type(plait.jvp(f_aux, (x,), (x,), has_aux=True))  # N: Revealed type is "tuple[plait.frontend.core.array_base.Array, plait.frontend.core.array_base.Array, str]"
reveal_type(plait.vjp(f, x, 2.0))  # N: Revealed type is "tuple[plait.frontend.core.array_base.Array, def (plait.frontend.core.array_base.Array) -> tuple[plait.frontend.core.array_base.Array, plait.frontend.core.array_base.Array]]"
reveal_type(plait.vjp(f_aux, x, has_aux=True))  # N: Revealed type is "tuple[plait.frontend.core.array_base.Array, def (plait.frontend.core.array_base.Array) -> tuple[plait.frontend.core.array_base.Array], str]"
reveal_type(plait.linearize(f, x, 2.0))  # N: Revealed type is "tuple[plait.frontend.core.array_base.Array, def (plait.frontend.core.array_base.Array, plait.frontend.core.array_base.Array) -> plait.frontend.core.array_base.Array]"

out, pullback = plait.vjp(f, x, 2.0)
pullback("ct")  # E: Argument 1 has incompatible type "str"; expected "Array"  [arg-type]

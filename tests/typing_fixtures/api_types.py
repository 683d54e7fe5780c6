"""The typed public API without the plugin's help: ParamSpec keeps signatures."""

import numpy as np

import plait
import plait.numpy as pnp
from plait.typing import Array, ArrayLike, DTypeLike, Shape


def predict(w: Array, x: Array, *, scale: float = 1.0) -> Array:
    return pnp.dot(x, w) * scale


def make(shape: Shape, dtype: DTypeLike, fill: ArrayLike) -> Array:
    return pnp.full(shape, fill, dtype)


fast = plait.jit(predict)
reveal_type(fast(pnp.ones(2), pnp.ones((3, 2)), scale=2.0))  # N: Revealed type is "plait.frontend.core.array_base.Array"
reveal_type(fast.lower(pnp.ones(2), pnp.ones((3, 2))))  # N: Revealed type is "plait.frontend.api.stages.Lowered"
reveal_type(fast.lower(pnp.ones(2), pnp.ones((3, 2))).compile())  # N: Revealed type is "plait.frontend.api.stages.Compiled"
reveal_type(fast.trace(pnp.ones(2), pnp.ones((3, 2))))  # N: Revealed type is "plait.frontend.api.stages.Traced"
fast(pnp.ones(2), pnp.ones((3, 2)), scale="big")  # E: Argument "scale" to "__call__" of "Jitted" has incompatible type "str"; expected "float"  [arg-type]
fast(pnp.ones(2))  # E: Missing positional argument "x" in call to "__call__" of "Jitted"  [call-arg]
reveal_type(plait.checkpoint(predict))  # N: Revealed type is "def (w: plait.frontend.core.array_base.Array, x: plait.frontend.core.array_base.Array, *, scale: float =) -> plait.frontend.core.array_base.Array"
reveal_type(plait.vmap(predict, in_axes=(None, 0)))  # N: Revealed type is "def (w: plait.frontend.core.array_base.Array, x: plait.frontend.core.array_base.Array, *, scale: float =) -> plait.frontend.core.array_base.Array"
plait.vmap(predict)(w=pnp.ones(2), y=pnp.ones(2))  # E: Unexpected keyword argument "y"  [call-arg]
make((2, 3), np.float32, 1.5)
make((2, 3), "int32", pnp.ones(()))
make("23", np.float32, 1.0)  # E: Argument 1 to "make" has incompatible type "str"; expected "Sequence[int]"  [arg-type]
reveal_type(plait.make_jaxpr(predict)(pnp.ones(2), pnp.ones((3, 2))))  # N: Revealed type is "plait.ir.jaxpr.ClosedJaxpr"
reveal_type(plait.make_jaxpr(predict, return_shape=True)(pnp.ones(2), pnp.ones((3, 2))))  # N: Revealed type is "tuple[plait.ir.jaxpr.ClosedJaxpr, Any]"
plait.make_jaxpr(predict)(pnp.ones(2), pnp.ones((3, 2)), scale=None)  # E: Argument "scale" has incompatible type "None"; expected "float"  [arg-type]

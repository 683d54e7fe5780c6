"""``out_sharding=`` of the samplers: the drawn values resharded, as in JAX.

Every sampler of ``jax.random`` takes ``out_sharding`` (the sharding of its result's
type, over ``Explicit`` mesh axes).  The values do not depend on it; plait draws them
as it always does and then reshards them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec

from plait.frontend.api.explicit_sharding import reshard
from plait.frontend.core.array_base import Array

__all__ = ["takes_out_sharding"]

_P = ParamSpec("_P")


def takes_out_sharding(sampler: Callable[_P, Array]) -> Callable[_P, Array]:
    """``sampler``, its ``out_sharding`` keyword (declared in its signature, unused by
    its body) applied to the result."""
    @functools.wraps(sampler)
    def sample(*args: _P.args, **kwargs: _P.kwargs) -> Array:
        sharding = kwargs.pop("out_sharding", None)
        out = sampler(*args, **kwargs)
        return out if sharding is None else reshard(out, sharding)
    return sample

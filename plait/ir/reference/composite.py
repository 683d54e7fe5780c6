"""The reference rule of ``composite``: evaluate the decomposition."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait.ir.interpreter import eval_jaxpr, impl_rules
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives import composite_p


def _composite(*args: np.ndarray, jaxpr: ClosedJaxpr, **_: Any) -> list[np.ndarray]:
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


impl_rules[composite_p] = _composite

"""``debug_nans`` and ``debug_infs``: results checked for invalid values, as JAX's.

An eager operation whose result has a NaN (or an infinity) raises at once,
naming its primitive.  A jitted call whose result has one is run again with jit
disabled, operation by operation, so that the error names the operation that
made the value (JAX calls this the de-optimized function).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_impl import ArrayImpl
from plait.ir import config as _config
from plait.ir import dtypes as dt
from plait.ir.config import values as _values

__all__ = ["invalid_value", "check_result", "check_jit_result"]

_log = logging.getLogger("plait")


def invalid_value(outs: Sequence[Any]) -> str | None:
    """``'nan'`` or ``'inf'`` if a checked kind of invalid value is among the arrays
    ``outs`` (per the options), else ``None``."""
    for x in outs:
        if type(x) is not ArrayImpl or not dt.is_inexact(x.dtype):
            continue
        value = np.asarray(x)
        if _values.debug_nans and np.isnan(value).any():
            return "nan"
        if _values.debug_infs and np.isinf(value).any():
            return "inf"
    return None


def check_result(outs: Sequence[Any], name: str) -> None:
    """Raise for an invalid value among an eager operation's results.

    Raises:
      FloatingPointError: ``invalid value (nan) encountered in log``.
    """
    kind = invalid_value(outs)
    if kind is not None:
        raise FloatingPointError(f"invalid value ({kind}) encountered in {name}")


def check_jit_result(outs: Sequence[Any], name: str, rerun: Callable[[], Any]) -> None:
    """Raise for an invalid value among a jitted call's results, after running it again
    operation by operation (``rerun``) to name the operation that made it.

    Raises:
      FloatingPointError: the operation's error from the re-run, or, if the re-run
        made no invalid value, one naming the jitted function.
    """
    kind = invalid_value(outs)
    if kind is None:
        return
    _log.warning("Invalid %s value encountered in the output of a plait.jit function. "
                 "Calling the de-optimized version.", kind)
    previous = _values.disable_jit
    _config.update("disable_jit", True)
    try:
        rerun()
    finally:
        _config.update("disable_jit", previous)
    raise FloatingPointError(
        f"invalid value ({kind}) encountered in jit({name}). Because debug_nans and/or "
        "debug_infs is set, the de-optimized function (the function as if the jit decorator "
        "were removed) was called to find the operation that made it; it did not produce "
        "invalid values, so the difference comes from the compiled program (fusion, "
        "reordering); look for operations whose rounding differs.")

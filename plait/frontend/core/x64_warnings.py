"""Explicitly requested dtypes: narrowed to 32 bits with JAX's warning when x64 is off.

``jnp.zeros(3, 'float64')`` with x64 mode off gives a ``float32`` array and a
``UserWarning`` that names the function; every function of ``plait.numpy`` and
``plait.random`` that takes a ``dtype=`` goes through :func:`check_user_dtype`
so that the text and the cases that warn are JAX's.  The Python types ``int``,
``float``, ``complex`` and ``bool`` stand for the default dtypes and never warn;
neither does data that merely *has* a 64-bit dtype (``asarray(np.ones(2))``).
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType
from typing import Any, Final

import numpy as np

from plait.ir import config
from plait.ir import dtypes as dt

__all__ = ["check_user_dtype", "truncation_message", "warn_truncated"]

_PYTHON_TYPES: Final[dict[type, np.dtype[Any]]] = {
    bool: dt.bool_, int: dt.int64, float: dt.float64, complex: dt.complex128}


def truncation_message(requested: np.dtype[Any], fun_name: str | None) -> str:
    """JAX's text for a 64-bit ``requested`` dtype narrowed in ``fun_name``."""
    where = f" requested in {fun_name}" if fun_name else ""
    return (f"Explicitly requested dtype {requested}{where} is not available, and will be "
            f"truncated to dtype {dt.canonicalize(requested).name}. To enable more dtypes, "
            "set the jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
            "environment variable. See https://github.com/jax-ml/jax#current-gotchas for more.")


def _user_stacklevel() -> int:
    # The warning points at the first frame outside plait (the user's call), as
    # JAX's fixed stacklevel does for its own call depth.
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("plait."):
        frame = frame.f_back
        level += 1
    return level


def warn_truncated(requested: np.dtype[Any], fun_name: str | None) -> None:
    """Emit JAX's ``UserWarning`` for a 64-bit dtype narrowed in ``fun_name``."""
    warnings.warn(truncation_message(requested, fun_name), UserWarning,
                  stacklevel=_user_stacklevel())


def check_user_dtype(dtype: Any, fun_name: str | None = None) -> np.dtype[Any]:
    """The dtype plait computes in for a ``dtype=`` argument of ``fun_name``.

    With x64 mode off, a 64-bit dtype narrows to its 32-bit counterpart with
    JAX's ``UserWarning`` (``fun_name=None`` leaves the function out of the text,
    as ``jax.random`` does); the Python types ``int``, ``float``, ``complex`` and
    ``bool`` give the default dtypes silently.

    Raises:
      TypeError: ``dtype`` is not a dtype plait supports.
      ValueError: ``dtype`` is ``None``.
    """
    if dtype is None:
        raise ValueError("dtype must be specified.")
    if isinstance(dtype, type) and dtype in _PYTHON_TYPES:
        return dt.canonicalize(_PYTHON_TYPES[dtype])
    d = dtype if isinstance(dtype, np.dtype) else dt._to_dtype(dtype)
    canonical = dt.canonicalize(d)
    if canonical != d and not config.enable_x64() and not dt.is_key(d):
        warn_truncated(d, fun_name)
    return canonical

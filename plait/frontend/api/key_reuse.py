"""Key-reuse analysis of Python functions (``plait.experimental.key_reuse``): trace,
then apply :mod:`plait.transforms.key_reuse` to the jaxpr."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.frontend.api.make_jaxpr import make_jaxpr
from plait.transforms.key_reuse import KeyReuseSignature, jaxpr_signature

__all__ = ["function_type_signature", "check_key_reuse"]


def function_type_signature(fun: Callable[..., Any], *args: Any) -> KeyReuseSignature:
    """The key-reuse signature of ``fun`` traced on ``args`` (positional, pytrees), over
    its flattened arguments and results.

    Raises:
      KeyReuseError: ``fun`` consumes a key twice.
    """
    return jaxpr_signature(make_jaxpr(fun)(*args))


def check_key_reuse(fun: Callable[..., Any], /, *args: Any) -> None:
    """Raise ``KeyReuseError`` if ``fun``, traced on ``args``, consumes a key twice (a
    static check: nothing runs, and the ``debug_key_reuse`` option need not be on)."""
    function_type_signature(fun, *args)

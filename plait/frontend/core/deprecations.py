"""Names a module keeps for old code, read through the module's ``__getattr__`` with a
``DeprecationWarning``, as JAX keeps its deprecated names."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["deprecated_getattr"]


def deprecated_getattr(module: str, names: Mapping[str, tuple[str, Any]]
                       ) -> Callable[[str], Any]:
    """A module ``__getattr__`` giving ``names[name] = (warning, value)``'s value after
    warning; any other name is missing from ``module``."""
    def __getattr__(name: str) -> Any:
        if name in names:
            message, value = names[name]
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return value
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__

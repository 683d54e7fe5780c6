"""``set_cache_dir`` and ``reset_cache``, as
``jax.experimental.compilation_cache.compilation_cache``: the same as setting the
option ``jax_compilation_cache_dir`` (see :mod:`plait.lowering.compilation_cache`)."""

from __future__ import annotations

import os

from plait.ir.config import update
from plait.lowering.compilation_cache import reset_cache as _reset_counts

__all__ = ["set_cache_dir", "reset_cache"]


def set_cache_dir(path: str | os.PathLike[str]) -> None:
    """Keep compiled programs in the directory ``path`` (created when first written)."""
    update("compilation_cache_dir", os.fspath(path))


def reset_cache() -> None:
    """Forget this process's use of the cache, as JAX's ``reset_cache``; the option and
    the files stay (delete the directory to empty the cache)."""
    _reset_counts()

"""Explaining cache misses (``plait.config.update('explain_cache_misses', True)``).

Every cache layer (jit's trace cache, the executable cache, the eager-op
cache) reports its misses here; with the option on, each miss is logged on
the ``plait.cache`` logger at WARNING level with the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from plait.config import values as _config
from plait.ir.avals import ShapedArray

__all__ = ["explain", "enabled", "describe_signature_change", "logger"]

logger = logging.getLogger("plait.cache")


def enabled() -> bool:
    """Whether misses are being explained."""
    return bool(_config.explain_cache_misses)


def explain(message: str) -> None:
    """Log a cache miss (only when the option is on)."""
    if _config.explain_cache_misses:
        logger.warning(message)


def _aval_change(path: str, old: ShapedArray, new: ShapedArray) -> list[str]:
    out = []
    if old.shape != new.shape:
        out.append(f"{path}: shape changed from {old.str_short()} to {new.str_short()}")
    if old.dtype != new.dtype:
        out.append(f"{path}: dtype changed from {old.dtype.name} to {new.dtype.name}")
    if old.weak_type != new.weak_type:
        out.append(f"{path}: weak type changed from {old.weak_type} to {new.weak_type}")
    return out


def describe_signature_change(names: Sequence[str], old: tuple[Any, ...],
                              new: tuple[Any, ...]) -> list[str]:
    """Differences between two trace-cache keys ``(treedef, avals, static key)``."""
    old_tree, old_avals, old_static = old
    new_tree, new_avals, new_static = new
    reasons = []
    if old_tree != new_tree:
        reasons.append(f"pytree structure changed from {old_tree} to {new_tree}")
    elif old_avals != new_avals:
        for i, (a, b) in enumerate(zip(old_avals, new_avals)):
            if a is not b:
                path = names[i] if i < len(names) and names[i] else f"flat argument {i}"
                reasons += _aval_change(path, a, b)
    if old_static != new_static:
        reasons.append(f"static arguments changed from {old_static!r} to {new_static!r}")
    return reasons


def closest(keys: Iterable[tuple[Any, ...]], new: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The cached key that differs least from ``new`` (same structure preferred)."""
    best, best_score = None, -1
    for k in keys:
        score = (k[0] == new[0]) * 4 + (k[2] == new[2]) * 2 + sum(
            a is b for a, b in zip(k[1], new[1])) / (len(new[1]) + 1)
        if score > best_score:
            best, best_score = k, score
    return best

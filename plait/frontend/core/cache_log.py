"""Explaining cache misses (``plait.config.update('explain_cache_misses', True)``).

Every cache layer (jit's trace cache, the executable cache, the eager-op
cache) reports its misses here; with the option on, each miss is logged on
the ``plait.cache`` logger at WARNING level with the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from plait.ir.avals import ShapedArray
from plait.ir.config import values as _config

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
        out.append(f"{path}: shape changed from {old.str_short(short_dtypes=False)} to "
                   f"{new.str_short(short_dtypes=False)}")
    if old.dtype != new.dtype:
        out.append(f"{path}: dtype changed from {old.dtype.name} to {new.dtype.name}")
    if old.weak_type != new.weak_type:
        out.append(f"{path}: weak type changed from {old.weak_type} to {new.weak_type}")
    return out


def describe_signature_change(names: Sequence[str], old: tuple[Any, ...],
                              new: tuple[Any, ...]) -> list[str]:
    """Differences between two trace-cache keys ``(treedef, avals, static key, config,
    layouts)``."""
    old_tree, old_avals, old_static, old_config = old[:4]
    new_tree, new_avals, new_static, new_config = new[:4]
    reasons = []
    if old_tree != new_tree:
        reasons.append(f"pytree structure changed from {old_tree} to {new_tree}")
    elif old_avals != new_avals:
        for i, (a, b) in enumerate(zip(old_avals, new_avals)):
            if a is not b:
                path = names[i] if i < len(names) and names[i] else f"flat argument {i}"
                reasons += _aval_change(path, a, b)
    if old_static != new_static:
        reasons += _static_changes(old_static, new_static)
    for name, a, b in zip(("enable_x64", "numpy_dtype_promotion"), old_config, new_config):
        if a != b:
            reasons.append(f"config option {name} changed from {a!r} to {b!r}")
    for i, (a, b) in enumerate(zip(old[4:5] and old[4], new[4:5] and new[4])):
        if a != b:
            path = names[i] if i < len(names) and names[i] else f"flat argument {i}"
            reasons.append(f"the layout of {path} changed from {a} to {b}")
    return reasons


def closest(keys: Iterable[tuple[Any, ...]], new: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The cached key that differs least from ``new`` (same structure preferred)."""
    best, best_score = None, -1
    for k in keys:
        score = (k[0] == new[0]) * 4 + (k[2] == new[2]) * 2 + sum(
            a is b for a, b in zip(k[1], new[1])) / (len(new[1]) + 1)
        if score >= best_score:  # ties: the most recent key
            best, best_score = k, score
    return best


def _static_changes(old: tuple[Any, ...], new: tuple[Any, ...]) -> list[str]:
    """Per static argument: ``static argument 'mode' changed from 'a' to 'b'``."""
    def by_name(key: tuple[Any, ...]) -> dict[str, Any]:
        positional, keyword = key
        return {**{f"args[{i}]": v for i, v in positional}, **{repr(k): v for k, v in keyword}}
    a, b = by_name(old), by_name(new)
    missing = object()
    out = []
    for name in sorted(set(a) | set(b)):
        x, y = a.get(name, missing), b.get(name, missing)
        if x is missing or y is missing or x != y:
            x_text = "(not passed)" if x is missing else repr(x)
            y_text = "(not passed)" if y is missing else repr(y)
            out.append(f"static argument {name} changed from {x_text} to {y_text}")
    return out

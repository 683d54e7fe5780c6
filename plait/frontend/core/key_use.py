"""Key-reuse checking of concrete keys (the ``debug_key_reuse`` option).

Inside a trace, :mod:`plait.transforms.key_reuse` finds a key consumed twice by the
program's equations.  Between calls, a concrete key array remembers which of its
elements a call consumed (its ``_key_use`` slot, set only while the option is on), so
that passing it again to something that consumes it raises ``KeyReuseError``, where
the first use happened.  Every entry point that runs code on concrete values applies a
signature here: an eager primitive, a jitted call, a transformation's program (run
operation by operation while the option is on).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.eager import eager_bind
from plait.frontend.core.source_lines import user_frame_info
from plait.frontend.core.tracing import set_eager_impl
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.config import on_update
from plait.ir.config import values as _values
from plait.ir.debug_info import SourceInfo
from plait.ir.errors import KeyReuseError
from plait.ir.primitive import Primitive
from plait.transforms.key_reuse import KeyReuseSignature, Mask, primitive_signature

__all__ = ["check_consumption", "record_consumption", "is_concrete_key"]


def is_concrete_key(x: Any) -> bool:
    """Whether ``x`` is a concrete typed-key array."""
    return type(x) is ArrayImpl and dt.is_key(x._aval.dtype)


def _state(x: ArrayImpl) -> tuple[Mask, SourceInfo | None]:
    return getattr(x, "_key_use", (False, None))


def check_consumption(sig: KeyReuseSignature, funcname: str, args: Sequence[Any]) -> None:
    """Raise ``KeyReuseError`` if ``args`` holds, where ``sig`` consumes, a key that an
    earlier call consumed."""
    for s in sig.sinks:
        if s.idx >= len(args) or not is_concrete_key(args[s.idx]):
            continue
        mask, where = _state(args[s.idx])
        if np.any(np.logical_and(mask, s.mask)):
            first = f" (first consumed at {where})" if where is not None else ""
            raise KeyReuseError(
                f"Previously-consumed key passed to {funcname} at index {s.idx}{first}.\n"
                "expected a PRNG key that no earlier call consumed. Split the key "
                "(plait.random.split) for independent draws, or clone it "
                "(plait.random.clone) to reuse it on purpose.")


def record_consumption(sig: KeyReuseSignature, args: Sequence[Any],
                       outs: Sequence[Any]) -> None:
    """Mark what a call of signature ``sig`` consumed in ``args``, and the consumption of
    its key results ``outs``: fresh where ``sig`` sources them, their input's where it
    forwards one, else consumed."""
    where = user_frame_info()
    for s in sig.sinks:
        if s.idx < len(args) and is_concrete_key(args[s.idx]):
            a = args[s.idx]
            a._key_use = (np.logical_or(_state(a)[0], s.mask), where)
    for o in outs:
        if is_concrete_key(o):
            o._key_use = (True, where)
    for src in sig.sources:
        if is_concrete_key(outs[src.idx]):
            outs[src.idx]._key_use = (np.logical_not(src.mask), None)
    for f in sig.forwards:
        a, o = args[f.in_idx], outs[f.out_idx]
        if is_concrete_key(a) and is_concrete_key(o):
            mask, at = _state(a)
            if np.shape(mask) not in ((), np.shape(o)):
                mask = bool(np.any(mask))  # (elements picked from a partly used array)
            o._key_use = (mask, at)


_OTHER = ShapedArray((), dt.int32)
"""The type given a non-Array operand (its type matters to no key-reuse rule)."""


def _checked_bind(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """An eager primitive, checked and recorded when it takes keys."""
    if not any(is_concrete_key(a) for a in args):
        return eager_bind(prim, args, params)
    avals = [a._aval if type(a) is ArrayImpl else _OTHER for a in args]
    sig = primitive_signature(prim, avals, prim.complete_params(params))
    check_consumption(sig, prim.name, args)
    out = eager_bind(prim, args, params)
    record_consumption(sig, args, out if prim.multiple_results else [out])
    return out


def _install() -> None:
    # The check costs nothing while off: eager operations run eager_bind itself.
    set_eager_impl(_checked_bind if _values.debug_key_reuse else eager_bind)


on_update(_install)
_install()

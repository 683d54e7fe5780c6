"""Eager elementwise operations on concrete Arrays through jaxlib's C++ dispatcher.

``pnp.sin(x)`` on an Array runs one compiled primitive (see
:mod:`plait.frontend.core.eager`).  Reaching it from Python costs several frames
per call: the ufunc, ``bind``, the eager cache lookup and the wrapping of the
result.  JAX's ``jnp`` functions are jitted, so a repeated call stays in C++.
Here each elementwise ufunc of :mod:`plait.numpy` gets a ``PjitFunction`` too:
its cache maps the operands' signature straight to the primitive's executable,
and a repeated call on concrete Arrays enters Python only to build the result.

A call gets a fast path only when it is the primitive applied to its Array
operands as they are, all on one device (the default one or another):
promotion, tracing, NaN checks, operands over a mesh or on several devices, and
programs with host callbacks keep taking the ufunc's own path (jaxlib keys its
cache on the operand types and placements and on plait's options, so such a call
never hits an entry made for another).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.frontend.api.dispatch import fast_path, make_dispatcher
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.eager import op_executable
from plait.frontend.core.tree_util import dispatch_registry
from plait.ir.config import values as _config
from plait.ir.primitive import Primitive
from plait.lowering import runtime

__all__ = ["dispatched"]

_ONE_RESULT = dispatch_registry.flatten(0, None)[1]


def dispatched(name: str, prim: Primitive, fallback: Callable[..., Any],
               direct: Callable[..., bool]) -> Callable[..., Any]:
    """``fallback`` (a ufunc's own path), as a dispatcher that runs ``prim``'s eager
    executable in C++ for the operand signatures where ``direct(*args)`` says the
    ufunc binds ``prim`` straight to its operands."""
    def miss(*args: Any) -> tuple[Any, Any, bool]:
        out = fallback(*args)
        return out, _fast_path(prim, args, out) if direct(*args) else None, False
    f: Callable[..., Any] = make_dispatcher(name, fallback, miss, [], [], ("plait.eager", prim))
    return f


def _fast_path(prim: Primitive, args: tuple[Any, ...], out: Any) -> Any:
    if type(out) is not ArrayImpl or _config.check_values:
        return None
    place = args[0]._buf._sharding
    if type(place) is not runtime.Sharding or any(a._buf._sharding is not place for a in args):
        return None  # operands over a mesh, or on several devices
    device = None if place is runtime.sharding_for(runtime.default_device()) else place._device
    exe = op_executable(prim, tuple(a._aval for a in args), device)
    if exe is None or exe.callbacks is not None:
        return None
    return fast_path(exe, [True] * len(args), _ONE_RESULT, [out._aval])

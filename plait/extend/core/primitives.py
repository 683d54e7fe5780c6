"""``plait.extend.core.primitives``: plait's primitives (``add_p``, ``scan_p`` ...), as
``jax.extend.core.primitives``; they are the primitives of ``plait.ir.primitives``.

``call_p`` and ``closed_call_p`` are JAX's call primitives, which plait's IR does not have:
their ``bind`` evaluates the call by inlining it, and a jaxpr plait traces never holds
them (``plait.frontend.api.call_primitives``)."""

from plait.frontend.api.call_primitives import call_p as call_p
from plait.frontend.api.call_primitives import closed_call_p as closed_call_p
from plait.ir.primitives import *  # noqa: F401,F403
from plait.ir.primitives import __all__ as _ir_all

__all__ = [*_ir_all, "call_p", "closed_call_p"]

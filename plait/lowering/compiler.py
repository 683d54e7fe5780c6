"""The one call through which plait compiles a StableHLO module with XLA.

Every compilation (single-device, SPMD, with host callbacks) goes through
:func:`backend_compile_and_load`, looked up on this module at each call, so that a tool
that wraps it (chex's ``restrict_backends``, which patches JAX's function of this name)
sees every compilation.  Under ``plait.compat.alias_jax`` this module also serves as
``jax._src.compiler``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["backend_compile_and_load"]


def backend_compile_and_load(backend: Any, module: Any, executable_devices: Any,
                             options: Any, host_callbacks: Sequence[Any] = ()) -> Any:
    """Compile ``module`` (text, bytecode or a parsed module) with ``backend`` (a jaxlib
    client) for ``executable_devices`` and load it; ``host_callbacks`` are the Python
    callables its host-callback custom calls call (a parsed module only)."""
    if host_callbacks:
        return backend.compile_and_load(module, executable_devices, options,
                                        host_callbacks=list(host_callbacks))
    return backend.compile_and_load(module, executable_devices, options)

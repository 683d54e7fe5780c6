"""The LAPACK kernels shipped in ``jaxlib``, made callable from StableHLO.

``jaxlib.cpu._lapack`` holds XLA FFI handlers (``lapack_spotrf_ffi``, ...) for the
dense linear algebra of the CPU backend.  A module reaches them through a
``stablehlo.custom_call`` to the handler's name, which the CPU platform must know
before it compiles the module: :func:`ensure_registered` registers every handler
once per process, the first time a lowering rule needs one.  It also initializes
the library (binding the LAPACK routines, taken from SciPy's LAPACK), without which
running a kernel crashes the process.
"""

from __future__ import annotations

import threading
from typing import Any, Final

import numpy as np

from plait.ir import dtypes as dt

__all__ = ["ensure_registered", "target_name"]

_lock = threading.Lock()
_registered = [False]

_PREFIX: Final[dict[np.dtype[Any], str]] = {
    dt.float32: "s", dt.float64: "d", dt.complex64: "c", dt.complex128: "z",
}


def ensure_registered() -> None:
    """Initialize jaxlib's LAPACK and register its FFI handlers with the CPU platform
    (once; later calls return at once)."""
    if _registered[0]:
        return
    with _lock:
        if _registered[0]:
            return
        from jaxlib import xla_client
        from jaxlib.cpu import _lapack  # type: ignore[attr-defined]  # a compiled module

        _lapack.initialize()
        for name, capsule in _lapack.registrations().items():
            # The ``_ffi`` handlers use XLA's typed FFI (API version 1); any others
            # the legacy custom-call API (version 0), as JAX registers them.
            xla_client.register_custom_call_target(
                name, capsule, platform="cpu", api_version=int(name.endswith("_ffi")))
        _registered[0] = True


def target_name(routine: str, dtype: np.dtype[Any]) -> str:
    """The handler of a LAPACK routine for ``dtype``: ``target_name("potrf", float32)``
    is ``"lapack_spotrf_ffi"``.  Registers the handlers first (see
    :func:`ensure_registered`)."""
    ensure_registered()
    return f"lapack_{_PREFIX[dtype]}{routine}_ffi"

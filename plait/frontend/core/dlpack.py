"""DLPack exchange (``x.__dlpack__()``, ``x.__dlpack_device__()``, ``from_dlpack``) over
jaxlib's DLPack support, as ``jax.dlpack`` does it.

plait runs on the CPU: an array is exported as a DLPack capsule over its device buffer
(no copy unless asked), and an object with ``__dlpack__`` is imported as a buffer on
the CPU device, then narrowed to the canonical dtype (64-bit types without x64 mode).
"""

from __future__ import annotations

import enum
from typing import Any, Final

import jaxlib._jax as _jax
import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.lowering import runtime

__all__ = ["DLDeviceType", "to_dlpack", "dlpack_device", "from_dlpack", "is_supported_dtype"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device type codes (those of the platforms jaxlib knows)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10


_MIN_VERSION: Final = (0, 5)

_EXCHANGED: Final = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, dt.bfloat16, np.float32, np.float64, np.complex64, np.complex128))


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of ``dtype`` can be exchanged through DLPack (the narrow float and
    integer types cannot)."""
    return np.dtype(dtype) in _EXCHANGED


def _concrete(x: Array, what: str) -> ArrayImpl:
    if not isinstance(x, ArrayImpl):
        raise TypeError(f"{what}: expected a concrete array, but got a traced value "
                        f"{x.aval.str_short()}")
    return x


def to_dlpack(x: Array, *, stream: Any = None, max_version: tuple[int, int] | None = None,
              dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
    """A DLPack capsule over ``x``'s buffer (``Array.__dlpack__``).

    Raises:
      BufferError: a DLPack version older than 0.5, or a device other than the CPU.
      TypeError: ``x`` is traced.
    """
    arr = _concrete(x, "__dlpack__")
    if max_version is not None and tuple(max_version) < _MIN_VERSION:
        raise BufferError(f"plait does not support any DLPack version below {_MIN_VERSION} "
                          f"but version ({max_version}) was requested.")
    if dl_device is not None and dl_device[0] != DLDeviceType.kDLCPU:
        raise BufferError(f"expected a CPU dl_device (plait runs on the CPU), but got "
                          f"{dl_device}")
    if copy:
        arr = ArrayImpl.from_numpy(np.array(arr._value), arr.aval.weak_type)
    return _jax.buffer_to_dlpack_managed_tensor(arr.buffer(), stream=stream)


def dlpack_device(x: Array) -> tuple[DLDeviceType, int]:
    """``(device type, device id)`` of ``x`` in DLPack's terms (``__dlpack_device__``)."""
    _concrete(x, "__dlpack_device__")
    return DLDeviceType.kDLCPU, 0


def from_dlpack(external: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """An Array over the data of ``external``, an object with ``__dlpack__`` and
    ``__dlpack_device__`` (shared with it unless ``copy``), as ``jnp.from_dlpack``.

    Raises:
      TypeError: ``external`` has no DLPack methods, lives on a device other than the
        CPU, or has a dtype plait does not support.
    """
    if not hasattr(external, "__dlpack__") or not hasattr(external, "__dlpack_device__"):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                        "__dlpack_device__ methods.")
    dl_type, _ = external.__dlpack_device__()
    if int(dl_type) != DLDeviceType.kDLCPU:
        raise TypeError(f"Array passed to from_dlpack is on unsupported device type "
                        f"(DLDeviceType: {dl_type}, array: {external!r}")
    cpu = runtime.default_device() if device is None else device
    capsule = external.__dlpack__(stream=None)
    buf = _jax.dlpack_managed_tensor_to_buffer(capsule, cpu, None, copy,
                                               int(DLDeviceType.kDLCPU))
    d = np.dtype(buf.dtype)
    if d not in dt.SUPPORTED:
        raise TypeError(f"from_dlpack: expected data of a dtype plait supports, but got {d}")
    out = ArrayImpl(ShapedArray(tuple(buf.shape), d, False), buf)
    canonical = dt.canonicalize(d)
    if canonical != d:
        # As JAX: data of a 64-bit dtype narrows (a copy) when x64 mode is off.
        out = ArrayImpl.from_numpy(np.asarray(out._value).astype(canonical))
    return out

"""A compiled program's bytes: what ``serialize_executable`` writes and reads back.

PJRT serializes a loaded executable (its machine code and compile options); loading
the bytes needs the device to run on and the results' types, which the caller keeps.
Programs with host callbacks (Python functions) and SPMD programs over several
devices are not serialized.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jaxlib import xla_client as _xc

from plait.ir.avals import ShapedArray
from plait.lowering.runtime import Executable, client, single_device_options

__all__ = ["deserialize", "serialize"]


def serialize(exe: Executable) -> bytes:
    """The bytes of a one-device executable without host callbacks.

    Raises:
      NotImplementedError: the program calls Python functions, or runs over a mesh.
    """
    if exe.callbacks is not None:
        raise NotImplementedError("cannot serialize a program with host callbacks "
                                  "(pure_callback, io_callback, debug.print): their Python "
                                  "functions are not part of the compiled code")
    if exe.in_shardings is not None:
        raise NotImplementedError("cannot serialize an SPMD program over several devices yet; "
                                  "serialize a one-device program, or use plait.export")
    data: bytes = client().serialize_executable(exe.loaded)
    return data


def deserialize(data: bytes, device: Any, in_avals: Sequence[ShapedArray],
                out_avals: Sequence[ShapedArray]) -> Executable:
    """The executable of ``serialize``'s bytes, loaded on ``device``."""
    loaded = client().deserialize_executable(data, _xc.DeviceList((device,)),
                                             single_device_options(device))
    return Executable(loaded, device, out_avals, in_avals=in_avals)

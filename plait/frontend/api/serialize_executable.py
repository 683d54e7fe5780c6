"""``serialize`` and ``deserialize_and_load``: a compiled function as bytes and back, as
``jax.experimental.serialize_executable``.  See ``docs/export.md``.

The bytes hold the machine code, the program's jaxpr (in plait's text format), its
argument types and names, and which arguments it keeps and donates; the pytree
structures of its arguments and results are returned beside them, as in JAX, for the
caller to keep (they may hold Python classes).  The bytes are a pickle: load only bytes
you made.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.api.stages import Compiled
from plait.frontend.core.trace_to_jaxpr import TracedFunction
from plait.frontend.core.tree_util import PyTreeDef
from plait.ir import ClosedJaxpr
from plait.ir.avals import ShapedArray
from plait.ir.debug_info import DebugInfo
from plait.ir.parser import parse_jaxpr
from plait.lowering import executable_io, runtime

__all__ = ["deserialize_and_load", "serialize"]

_FORMAT = "plait serialized executable, version 1"


def _types(avals: Sequence[Any]) -> list[tuple[tuple[int, ...], np.dtype[Any], bool]]:
    return [(tuple(a.shape), np.dtype(a.dtype), bool(a.weak_type)) for a in avals]


def _avals(types: Sequence[tuple[tuple[int, ...], np.dtype[Any], bool]]
           ) -> tuple[ShapedArray, ...]:
    return tuple(ShapedArray(shape, dtype, weak) for shape, dtype, weak in types)


def serialize(compiled: Compiled) -> tuple[bytes, PyTreeDef, PyTreeDef]:
    """``compiled`` as bytes, with the structures of its arguments and results.

    Raises:
      NotImplementedError: the program closes over arrays (constants), calls Python
        functions (host callbacks), runs over several devices, or has equations whose
        parameters plait's text format cannot carry.
    """
    traced = compiled.traced
    if traced.closed.consts:
        raise NotImplementedError(
            "cannot serialize a program that closes over arrays (its jaxpr has "
            f"{len(traced.closed.consts)} constants); pass them as arguments")
    exe = compiled.executable
    code = executable_io.serialize(exe)
    text = str(traced.closed.jaxpr)
    try:
        same = parse_jaxpr(text) == traced.closed.jaxpr
    except ValueError:
        same = False
    if not same:
        raise NotImplementedError("cannot serialize this program: its jaxpr's text does not "
                                  "read back as the same jaxpr (a parameter has no text form)")
    info = traced.debug_info
    positions, names = traced.static_key
    payload = {
        "format": _FORMAT, "executable": code,
        "device": exe.device.id, "jaxpr": text, "in_avals": _types(traced.in_avals),
        "exe_in_avals": _types(exe.in_avals), "exe_out_avals": _types(exe.out_avals),
        "debug": (info.func_name, info.arg_names, info.result_paths, info.func_src_info),
        "static": ([i for i, _ in positions], [k for k, _ in names]),
        "donated": compiled._donated, "kept": compiled._kept}
    return pickle.dumps(payload), traced.in_tree, traced.out_tree


def deserialize_and_load(serialized: bytes, in_tree: PyTreeDef, out_tree: PyTreeDef,
                         backend: Any = None,
                         execution_devices: Sequence[Any] | None = None) -> Compiled:
    """The compiled function ``serialize`` wrote, loaded on ``execution_devices[0]`` (by
    default the device it was compiled for, if this process has it, else the default
    device).  Only load bytes you made: they are a pickle.

    Raises:
      ValueError: the bytes are not ``serialize``'s.
    """
    payload = pickle.loads(serialized)  # noqa: S301  (documented: trusted input only)
    if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
        raise ValueError("expected the bytes plait.experimental.serialize_executable."
                         "serialize wrote, but got something else")
    func_name, arg_names, result_paths, src = payload["debug"]
    positions, names = payload["static"]
    traced = TracedFunction(
        ClosedJaxpr(parse_jaxpr(payload["jaxpr"]), ()), in_tree, out_tree,
        _avals(payload["in_avals"]), DebugInfo(func_name, arg_names, result_paths, src),
        (tuple((i, None) for i in positions), tuple((k, None) for k in names)))
    if execution_devices:
        device = execution_devices[0]
    else:
        device = next((d for d in runtime.devices() if d.id == payload["device"]),
                      runtime.default_device())
    exe = executable_io.deserialize(payload["executable"], device,
                                    _avals(payload["exe_in_avals"]),
                                    _avals(payload["exe_out_avals"]))
    return Compiled(traced, exe, payload["donated"], payload["kept"])

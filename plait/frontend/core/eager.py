"""Eager execution: running a primitive outside any trace.

Each primitive application runs a compiled single-equation executable,
cached by ``(primitive, params, operand types)``; results stay on the device.
Because eager ops and jitted code run the same lowering, their results agree
bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.core import cache_log
from plait.frontend.core.array_impl import (
    ArrayImpl,
    committed_device,
    device_buffer,
    scalar_buffer,
)
from plait.frontend.core.bind_eval import uncompilable_call
from plait.frontend.core.compile_cache import executable_for
from plait.frontend.core.host_values import as_host_array, scalar_literal
from plait.frontend.core.run_guards import refuse_execution
from plait.frontend.core.spmd import arg_sharding
from plait.frontend.core.tracer_messages import leak_message
from plait.frontend.core.tracing import Tracer, set_eager_impl
from plait.frontend.core.value_checks import check_result
from plait.ir.atoms import Literal, Var
from plait.ir.avals import ShapedArray, shaped, shaped_avals
from plait.ir.builder import Builder
from plait.ir.caches import BoundedDict
from plait.ir.config import on_update
from plait.ir.config import values as _values
from plait.ir.errors import UnexpectedTracerError
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.params import Params
from plait.ir.primitive import Primitive
from plait.ir.sharding import NamedSharding
from plait.lowering import runtime
from plait.lowering.runtime import Executable

__all__ = ["eager_bind", "op_executable"]

class _Op:
    """A compiled single-primitive program, ready to run on buffers."""

    __slots__ = ("exe", "home", "run", "handlers", "out_avals")

    def __init__(self, exe: Executable, out_avals: tuple[ShapedArray, ...]) -> None:
        self.exe = exe
        self.home = runtime.sharding_for(exe.device)
        # (A program with host callbacks runs through Executable.execute, which waits for
        # it and reports a callback's exception; the others straight through jaxlib.)
        # So does an SPMD program (a result sharded by its type, of operands on one
        # device), which places its operands first.
        self.run = (exe.loaded.execute_sharded
                    if exe.callbacks is None and exe.in_shardings is None else _Waiting(exe))
        self.handlers = exe.handlers
        self.out_avals = out_avals


class _Waiting:
    """``execute_sharded`` for a program with host callbacks or over a mesh (see
    :class:`_Op`)."""

    __slots__ = ("exe", "buffers")

    def __init__(self, exe: Executable) -> None:
        self.exe = exe
        self.buffers: list[Any] = []

    def __call__(self, buffers: list[Any]) -> _Waiting:
        self.buffers = buffers
        return self

    def consume_with_handlers(self, handlers: Any) -> list[Any]:
        buffers, self.buffers = self.buffers, []
        return self.exe.execute(buffers)


_ops: BoundedDict[tuple[Any, ...], _Op] = BoundedDict("eager operations")
"""Keyed by ``(primitive, params, *operand avals)``."""


def op_executable(prim: Primitive, avals: tuple[ShapedArray, ...],
                  device: Any = None) -> Executable | None:
    """The program eager execution compiled for ``prim`` (default params) on operands
    of types ``avals``, if it has run (``device``: on that device, not the default)."""
    key = (prim, prim.complete_params({}), *avals)
    op = _ops.data.get(key if device is None else (key, device))
    return op.exe if op is not None else None


def _operand(x: Any) -> tuple[Any, ShapedArray]:
    """The buffer and type of an operand that is not an Array (eager_bind reads those
    itself)."""
    t = type(x)
    if t is Literal:
        return scalar_buffer(x), x.aval
    if t is Tracer:
        raise UnexpectedTracerError(leak_message(x))
    if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
        lit = scalar_literal(x)
        return scalar_buffer(lit), lit.aval
    arr = as_host_array(x)
    aval = ShapedArray(arr.shape, arr.dtype)
    return runtime.device_put(arr, aval), aval


def _compile(prim: Primitive, params: Params, avals: tuple[ShapedArray, ...],
             device: Any = None) -> _Op:
    cache_log.explain(f"eager op cache miss: {prim.name} with params {dict(params)} for "
                      f"({', '.join(a.str_short(short_dtypes=False) for a in avals)})")
    b = Builder()
    invars = [Var(a) for a in avals]
    outs = b.bind(prim, tuple(invars), params)
    closed = ClosedJaxpr(b.build(invars, outs))
    return _Op(executable_for(closed, prim.name, device=device),
               shaped_avals([v.aval for v in outs]))


def _run_spmd(prim: Primitive, params: Params, avals: tuple[ShapedArray, ...],
              bufs: list[Any], layouts: list[NamedSharding | None]) -> Any:
    b = Builder()
    invars = [Var(a) for a in avals]
    outs = b.bind(prim, tuple(invars), params)
    exe = executable_for(ClosedJaxpr(b.build(invars, outs)), prim.name, in_shardings=layouts)
    results = [ArrayImpl(shaped(v.aval), buf) for v, buf in zip(outs, exe.execute(bufs))]
    return results if prim.multiple_results else results[0]


def eager_bind(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Run ``prim`` on concrete operands; the results are device-backed Arrays.

    Raises:
      RuntimeError: the ``no_execution`` option is set.
    """
    if _values.no_execution:
        refuse_execution(f"jit({prim.name})")
    full = prim.complete_params(params)
    bufs = []
    key: list[Any] = [prim, full]
    placed: Any = None  # the Array operands' one placement (False: several)
    for a in args:
        if type(a) is ArrayImpl:
            buf = a._buf
            bufs.append(buf)
            key.append(a._aval)
            s = buf._sharding
            placed = s if placed is None or placed is s else False
        else:
            buf, aval = _operand(a)
            bufs.append(buf)
            key.append(aval)
    op_key = tuple(key)
    op = _ops.data.get(op_key)
    if op is None:  # (never cached: looked for on the miss path only)
        called = uncompilable_call(prim, full, args)
        if called is not None:
            return called if prim.multiple_results else called[0]
    if placed is not None and placed is not (
            op.home if op is not None else runtime.sharding_for(runtime.default_device())):
        return _run_elsewhere(op_key, args, bufs)
    try:
        if op is None:
            op = _ops[op_key] = _compile(prim, full, op_key[2:])
        outs = op.run(bufs).consume_with_handlers(op.handlers)
    except Exception:
        for a in args:
            if type(a) is ArrayImpl:
                a.buffer()  # raises the clearer error for a deleted (donated) Array
        raise
    return _results(prim, op, outs)


def _run_elsewhere(op_key: tuple[Any, ...], args: Sequence[Any], bufs: list[Any]) -> Any:
    """Run an operation whose Array operands are not (all) on the default device: as
    an SPMD program over their mesh, or on their device."""
    prim, full, avals = op_key[0], op_key[1], op_key[2:]
    layouts = [arg_sharding(a) for a in args]
    if any(s is not None for s in layouts):  # operands over a mesh: an SPMD program
        return _run_spmd(prim, full, avals, bufs, layouts)
    dev = committed_device(args)
    if dev is None:  # (Arrays on the default device only)
        dev = runtime.default_device()
    op = _ops.data.get((op_key, dev))
    if op is None:
        op = _ops[op_key, dev] = _compile(prim, full, avals, dev)
    bufs = [device_buffer(a.val if type(a) is Literal else a, aval, False, dev)
            for a, aval in zip(args, avals)]
    return _results(prim, op, op.run(bufs).consume_with_handlers(op.handlers))


def _results(prim: Primitive, op: _Op, outs: list[Any]) -> Any:
    if prim.multiple_results:
        results = [ArrayImpl(aval, buf) for aval, buf in zip(op.out_avals, outs)]
        if _values.check_values:
            check_result(results, prim.name)
        return results
    result = ArrayImpl(op.out_avals[0], outs[0])
    if _values.check_values:
        check_result([result], prim.name)
    return result


def _typing_options() -> tuple[bool, bool]:
    # The options that change what a primitive's typing rule says.
    return _values.allow_f16_reductions, _values.remove_size_one_mesh_axis_from_type


_typed_with = [_typing_options()]


def _retype_ops() -> None:
    # Cached operations typed under other options are compiled (and checked) again.
    if _typing_options() != _typed_with[0]:
        _ops.clear()
        _typed_with[0] = _typing_options()


on_update(_retype_ops)
set_eager_impl(eager_bind)

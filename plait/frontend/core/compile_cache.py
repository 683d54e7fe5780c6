"""The executable cache: keyed by a jaxpr's structure, its consts and the device.

Re-tracing a function gives a structurally equal jaxpr, so it never compiles
again; different functions computing the same program share an executable.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.core import cache_log
from plait.frontend.core.spmd import spmd_layout
from plait.ir import monitoring
from plait.ir.avals import buffer_avals
from plait.ir.caches import LRUCache
from plait.ir.config import values as _values
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.sharding import NamedSharding
from plait.lowering import lower_closed_jaxpr, runtime
from plait.lowering.runtime import Executable, SpmdLayout
from plait.transforms.physicalize import physicalize

__all__ = ["executable_for", "const_key"]

_cache: LRUCache[Any, Executable] = LRUCache("executables", 512)
"""Compiled programs by (jaxpr structure, constants, donation, device)."""


def const_key(consts: Sequence[Any]) -> tuple[Any, ...]:
    """A hashable fingerprint of constant values (shape, dtype, content digest)."""
    out = []
    for c in consts:
        arr = np.ascontiguousarray(np.asarray(c))
        out.append((arr.shape, arr.dtype, hashlib.blake2b(arr.tobytes(), digest_size=16).digest()))
    return tuple(out)


def executable_for(closed: ClosedJaxpr, name: str, result_paths: Sequence[str] = (),
                   donated: Sequence[bool] = (), device: Any = None,
                   in_shardings: Sequence[NamedSharding | None] = (),
                   out_shardings: Sequence[NamedSharding | None] = (),
                   compiler_options: runtime.CompilerOptions = ()) -> Executable:
    """The compiled executable of ``closed`` (compiled on the first request only).

    ``in_shardings``/``out_shardings`` (per argument and result, ``None`` where
    unspecified) lay the values out over a mesh; a program with a mesh (in them or in
    its equations) is compiled for the mesh's devices, ``device`` ignored.
    ``compiler_options`` override XLA's options (part of the cache key).
    """
    dev = device if device is not None else runtime.default_device()
    donated = tuple(donated) if any(donated) else ()
    ins = tuple(in_shardings) or (None,) * len(closed.jaxpr.invars)
    outs = tuple(out_shardings) or (None,) * len(closed.jaxpr.outvars)
    spmd = spmd_layout(closed.jaxpr, buffer_avals(closed.in_avals), ins, outs)
    if spmd is not None:
        return _spmd_executable(closed, name, result_paths, donated, spmd, compiler_options)
    key = (closed.jaxpr, const_key(closed.consts), donated, dev, compiler_options)
    exe = _cache.get(key)
    if exe is None:
        cache_log.explain(
            f"executable cache miss: compiling {name} ({len(closed.jaxpr.eqns)} equations); "
            f"no structurally equal program was compiled before for {dev}")
        exe = _cache[key] = _compile(closed, name, result_paths, donated, dev,
                                     compiler_options=compiler_options)
    return exe


def _spmd_executable(closed: ClosedJaxpr, name: str, result_paths: Sequence[str],
                     donated: tuple[bool, ...], spmd: SpmdLayout,
                     compiler_options: runtime.CompilerOptions) -> Executable:
    key = (closed.jaxpr, const_key(closed.consts), donated, spmd, compiler_options)
    exe = _cache.get(key)
    if exe is None:
        cache_log.explain(f"executable cache miss: compiling {name} "
                          f"({len(closed.jaxpr.eqns)} equations) over {spmd.mesh}")
        exe = _cache[key] = _compile(closed, name, result_paths, donated, None, spmd,
                                     compiler_options)
    return exe


compile_logger = logging.getLogger("plait.compiles")
"""Where ``log_compiles`` reports each compilation."""


def _compile(closed: ClosedJaxpr, name: str, result_paths: Sequence[str],
             donated: tuple[bool, ...], dev: Any, spmd: SpmdLayout | None = None,
             compiler_options: runtime.CompilerOptions = ()) -> Executable:
    """Lower and compile ``closed``, on ``dev`` or over ``spmd``'s mesh; each step is
    reported to the monitoring listeners and, with ``log_compiles``, logged as JAX logs
    it."""
    what = f"jit({name})"
    if _values.log_compiles:
        compile_logger.warning("Compiling %s with global shapes and types %r.", what,
                               tuple(closed.jaxpr.in_avals))
    start = time.perf_counter()
    if spmd is None:
        module = lower_closed_jaxpr(physicalize(closed), name, result_paths, donated)
    else:
        module = lower_closed_jaxpr(physicalize(closed), name, result_paths, donated,
                                    mesh=spmd.mesh, in_shardings=spmd.in_shardings,
                                    out_shardings=spmd.out_shardings)
    lowered = time.perf_counter()
    monitoring.record_phase(monitoring.LOWER, start, lowered, fun_name=what)
    if _values.log_compiles:
        compile_logger.warning("Finished jaxpr to MLIR module conversion %s in %.9f sec", what,
                               lowered - start)
    if spmd is None:
        exe = runtime.compile_text(module.text, module.out_avals, dev, module.host_callbacks,
                                   compiler_options=compiler_options)
    else:
        exe = runtime.compile_text(module.text, module.out_avals,
                                   host_callbacks=module.host_callbacks, spmd=spmd,
                                   compiler_options=compiler_options)
    done = time.perf_counter()
    monitoring.record_phase(monitoring.COMPILE, lowered, done, fun_name=what)
    if _values.log_compiles:
        compile_logger.warning("Finished XLA compilation of %s in %.9f sec", what,
                               done - lowered)
    return exe

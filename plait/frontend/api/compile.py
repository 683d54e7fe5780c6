"""Compiling and running a traced function as ``jit`` does: pruning unused inputs,
donation, and executing with the results wrapped into the output tree.

Shared by :mod:`plait.frontend.api.jit` and its ahead-of-time stages.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_impl import ArrayImpl, device_buffer, wrap_output
from plait.frontend.core.compile_cache import executable_for
from plait.frontend.core.run_guards import refuse_execution
from plait.frontend.core.trace_to_jaxpr import TracedFunction, prune_unused
from plait.frontend.core.tree_util import tree_unflatten
from plait.ir.avals import ShapedArray, buffer_avals
from plait.ir.config import values as _config
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.sharding import NamedSharding
from plait.lowering import multi_device, runtime
from plait.lowering.lower import usable_donations
from plait.lowering.runtime import Executable

__all__ = ["lowerable", "compile_traced", "effective_donations", "execute"]


def lowerable(traced: TracedFunction, keep_unused: bool) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    """The program jit lowers for ``traced``, and which flat arguments it takes."""
    if keep_unused:
        return traced.closed, (True,) * len(traced.in_avals)
    return prune_unused(traced.closed)


def compiler_option_pairs(options: Mapping[str, Any] | None,
                          where: str) -> runtime.CompilerOptions:
    """``compiler_options`` (option names to values) as the sorted pairs compilation
    takes.

    Raises:
      TypeError: not a mapping of ``str`` names to ``str``, ``bool``, ``int`` or ``float``.
    """
    if options is None:
        return ()
    if not isinstance(options, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str | bool | int | float)
            for k, v in options.items()):
        raise TypeError(f"{where}: expected compiler_options to map option names to str, "
                        f"bool, int or float values, but got {options!r}")
    return tuple(sorted(options.items()))


def compile_traced(traced: TracedFunction, donated: tuple[bool, ...], keep_unused: bool,
                   stacklevel: int, in_shardings: Sequence[NamedSharding | None] = (),
                   out_shardings: Sequence[NamedSharding | None] = (), device: Any = None,
                   compiler_options: runtime.CompilerOptions = ()
                   ) -> tuple[Executable, tuple[bool, ...], tuple[bool, ...]]:
    """Compile ``traced`` as jit does: the executable, which flat arguments it takes, and
    which of them it really reuses of ``donated``.  ``in_shardings`` (per flat argument)
    and ``out_shardings`` (per result) lay them out over a mesh; otherwise the program
    runs on ``device`` (the default device if None).  ``compiler_options`` override
    XLA's."""
    closed, kept = lowerable(traced, keep_unused)
    info = traced.debug_info
    kept_donated = tuple(d for d, k in zip(donated, kept) if k)
    kept_in = tuple(s for s, k in zip(in_shardings, kept) if k) if in_shardings else ()
    exe = executable_for(closed, info.func_name, info.result_paths, kept_donated, device,
                         in_shardings=kept_in, out_shardings=out_shardings,
                         compiler_options=compiler_options)
    if any(kept_donated):
        usable = iter(effective_donations(buffer_avals(closed.in_avals), closed.out_avals,
                                          kept_donated, stacklevel + 1))
        # (A donated argument the program does not use is not donated, as in JAX.)
        donated = tuple(next(usable) if k else False for k in kept)
    else:
        donated = (False,) * len(kept)
    return exe, kept, donated


def effective_donations(in_avals: Sequence[ShapedArray], out_avals: Sequence[Any],
                        donated: tuple[bool, ...], stacklevel: int) -> tuple[bool, ...]:
    """The donated arguments the executable really reuses; the others stay valid, with
    a warning, as in JAX (a buffer is reusable only by a result of its size)."""
    usable = usable_donations(in_avals, out_avals, donated)
    unused = [a.str_short(short_dtypes=False)
              for a, d, u in zip(in_avals, donated, usable) if d and not u]
    if unused:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unused)}. "
                      "Donation only helps when a result has the same shape and dtype.",
                      stacklevel=stacklevel + 1)
    return usable


def _delete_donated(leaves: Sequence[Any], donated: Sequence[bool]) -> None:
    for x, d in zip(leaves, donated):
        if d and type(x) is ArrayImpl:
            x.delete()


def _donated_in_place(exe: Executable, leaves: Sequence[Any], donated: Sequence[bool],
                      kept: Sequence[bool]) -> list[bool]:
    """The donated Arrays an SPMD program consumes: one laid out otherwise is copied to
    the program's layout, and the copy is donated (the Array stays valid, as in JAX)."""
    assert exe.in_shardings is not None
    layouts = iter(exe.in_shardings)
    out = []
    for x, d, k in zip(leaves, donated, kept):
        s = next(layouts) if k else None
        out.append(d and type(x) is ArrayImpl and s is not None
                   and multi_device.same_layout(x._buf._sharding, s))
    return out


def _spmd_buffers(exe: Executable, args: Sequence[tuple[Any, ShapedArray]]) -> list[Any]:
    assert exe.in_shardings is not None
    out = []
    for (x, a), s in zip(args, exe.in_shardings):
        if type(x) is ArrayImpl or s.named is None:
            out.append(device_buffer(x, a))
        else:
            out.append(multi_device.put_sharded(np.asarray(x, a.dtype), a, s.named))
    return out


def execute(exe: Executable, traced: TracedFunction, leaves: Sequence[Any],
            donated: Sequence[bool], kept: Sequence[bool]) -> Any:
    """Run a compiled traced function on flat argument leaves (passing the ``kept``
    ones); returns the result tree.

    Raises:
      RuntimeError: the ``no_execution`` option is set.
    """
    if _config.no_execution:
        refuse_execution(f"jit({traced.debug_info.func_name})")
    if exe.in_shardings is not None:  # an SPMD program: host data goes to its layout
        bufs = _spmd_buffers(exe, [(x, a) for x, a, k in zip(leaves, traced.in_avals, kept)
                                   if k])
        donated = _donated_in_place(exe, leaves, donated, kept)
    else:
        # (Looked up once: device_buffer copies to a device other than the default.)
        dev = exe.device if exe.device != runtime.default_device() else None
        bufs = [device_buffer(x, a, not d, dev)
                for x, a, d, k in zip(leaves, traced.in_avals, donated, kept) if k]
    outs = exe.execute(bufs)
    _delete_donated(leaves, donated)
    return tree_unflatten(traced.out_tree,
                          [wrap_output(a, b) for a, b in zip(traced.closed.out_avals, outs)])

"""``pallas_call``: a Pallas kernel run over a grid, as JAX's interpret mode runs it.

plait runs on the CPU, where JAX runs Pallas kernels only in interpret mode; so does
plait, in ordinary primitives.  The call is a ``jit`` of a loop over the grid's points
(row-major, the last axis fastest).  At each point the loop takes each operand's block
(``BlockSpec``), gives the kernel Refs of the blocks, and writes back what the kernel
wrote: outputs and scratch buffers persist across points, so a kernel may accumulate
into a block it meets again.  Outputs start as NaN (floats), the least integer, or
False; operands are padded to whole blocks with the same values.  Because it is made of
primitives, every transformation applies (``grad`` too, which JAX refuses).  See
``docs/pallas.md``.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from plait.frontend import lax
from plait.frontend.api.control_flow import fori_loop
from plait.frontend.api.jit import jit
from plait.frontend.core import refs as R
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)
from plait.frontend.pallas.refs import BlockRef
from plait.frontend.pallas.specs import (
    BlockMapping,
    GridSpec,
    block_mapping,
    no_block_spec,
    uninitialized,
)
from plait.frontend.pallas.tpu import (
    InterpretParams,
    PrefetchScalarGridSpec,
    fresh_semaphore,
    is_semaphore_type,
)
from plait.ir import dtypes as dt
from plait.ir.errors import PallasError

__all__ = ["num_programs", "pallas_call", "program_id"]


class _Point(NamedTuple):
    grid: tuple[int, ...]
    indices: tuple[Any, ...]
    zero: bool  # whether fresh buffers hold zeros (else NaN, as JAX's interpreter)


class _Kernel(threading.local):
    """The grid point of the kernel being traced (innermost last)."""

    def __init__(self) -> None:
        self.stack: list[_Point] = []


_kernel = _Kernel()


def fresh_buffers_zero() -> bool:
    """Whether a buffer the current kernel allocates starts as zeros (else NaN)."""
    return bool(_kernel.stack) and _kernel.stack[-1].zero


def _current(what: str, axis: int) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    if not _kernel.stack:
        raise PallasError(f"{what}({axis}) is only meaningful inside a Pallas kernel "
                          "(a function pallas_call runs)")
    grid, indices, _ = _kernel.stack[-1]
    if not -len(grid) <= axis < len(grid):
        raise PallasError(f"{what}: expected an axis of the grid {grid} (0 to "
                          f"{len(grid) - 1}), but got {axis}")
    return grid, indices


def program_id(axis: int) -> Any:
    """The index of the current point of the grid along ``axis`` (an int32 scalar)."""
    return _current("program_id", axis)[1][axis]


def num_programs(axis: int) -> int:
    """The size of the grid along ``axis``."""
    return _current("num_programs", axis)[0][axis]


def _grid(grid: Any) -> tuple[int, ...]:
    g = (grid,) if isinstance(grid, int | np.integer) else tuple(grid)
    for n in g:
        if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 0:
            raise PallasError(f"expected a grid of static non-negative ints, but got {grid!r} "
                              "(plait does not support dynamic grid sizes)")
    return tuple(int(n) for n in g)


def _leaf_shape(x: Any, what: str) -> tuple[tuple[int, ...], np.dtype[Any]]:
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
        raise PallasError(f"expected {what} to have a shape and a dtype (a ShapeDtypeStruct "
                          f"or an array), but got {x!r}")
    return tuple(int(n) for n in x.shape), dt.canonicalize(x.dtype)


def _paths(tree: Any, root: str) -> list[str]:
    """The path of each leaf of ``tree``: ``args[1]['w']``."""
    return [root + keystr(p) for p, _ in tree_flatten_with_path(tree)[0]]


def _specs(specs: Any, leaves: Sequence[Any], tree: Any, what: str, of: str,
           names: list[str]) -> list[BlockMapping]:
    """One block mapping per leaf; ``specs`` must have the leaves' structure."""
    shapes = [_leaf_shape(x, n)[0] for x, n in zip(leaves, names)]
    if specs is no_block_spec:
        return [block_mapping(no_block_spec, s, n) for s, n in zip(shapes, names)]
    if isinstance(specs, list):
        specs = tuple(specs)
    flat, spec_tree = tree_flatten(specs)  # (a None input has a None spec, as in JAX)
    if spec_tree != tree:
        raise PallasError(f"expected `{what}` to have the structure of `{of}`, {tree}, but "
                          f"got {spec_tree}")
    return [block_mapping(sp, s, n) for sp, s, n in zip(flat, shapes, names)]


def _indices(step: Any, grid: tuple[int, ...]) -> tuple[Any, ...]:
    """Row-major grid indices of the flat ``step`` (int32 scalars)."""
    out = []
    for n in reversed(grid):
        out.append(lax.rem(step, np.int32(n)))
        step = lax.div(step, np.int32(n))
    return tuple(reversed(out))


def _check_aliases(aliases: Mapping[int, int], ins: Sequence[Any],
                   outs: Sequence[tuple[tuple[int, ...], np.dtype[Any]]]) -> None:
    for i, o in aliases.items():
        if not (0 <= i < len(ins) and 0 <= o < len(outs)):
            raise PallasError(f"expected input_output_aliases to map inputs 0 to {len(ins) - 1} "
                              f"to outputs 0 to {len(outs) - 1}, but got {i}: {o}")
        a = value_aval(ins[i])
        if (tuple(a.shape), a.dtype) != outs[o]:
            raise PallasError(
                f"input_output_aliases maps input {i} to output {o}: expected input {i} to "
                f"have output {o}'s type {outs[o][1]}{list(outs[o][0])}, but got "
                f"{a.dtype}{list(a.shape)}")


class _Call:
    """What one ``pallas_call`` was given."""

    def __init__(self, kernel: Callable[..., None], out_shape: Any, grid: tuple[int, ...],
                 in_specs: Any, out_specs: Any, scratch_shapes: Any,
                 aliases: Mapping[int, int], prefetch: int, zero: bool) -> None:
        self.kernel = kernel
        if isinstance(out_shape, list):  # (a list of outputs comes back a tuple, as in JAX)
            out_shape = tuple(out_shape)
        self.out_leaves, self.out_tree = tree_flatten(out_shape)
        self.out_names = _paths(out_shape, "out_shape")
        self.outs = [_leaf_shape(x, n) for x, n in zip(self.out_leaves, self.out_names)]
        self.grid = grid
        self.in_specs = in_specs
        self.out_specs = tuple(out_specs) if isinstance(out_specs, list) else out_specs
        self.scratch_types, self.scratch_tree = tree_flatten(tuple(scratch_shapes))
        self.buffers = [_leaf_shape(t, f"scratch_shapes leaf {k}")
                        for k, t in enumerate(self.scratch_types) if not is_semaphore_type(t)]
        # The kernel's arguments: the inputs' Refs in the inputs' structure, then each
        # output's (one argument per entry of a tuple of outputs), then the scratch Refs.
        self.kernel_out_tree = tree_flatten(
            out_shape if isinstance(out_shape, tuple) else (out_shape,))[1]
        self.aliases = dict(aliases)
        self.prefetch = prefetch
        self.zero = zero

    def __call__(self, *args: Any) -> Any:
        pre, pre_tree = tree_flatten(args[:self.prefetch])
        ins, in_tree = tree_flatten(args[self.prefetch:])
        _check_aliases(self.aliases, [*pre, *ins], self.outs)
        names = _paths(args, "args")
        in_maps = [block_mapping(no_block_spec, tuple(value_aval(x).shape), n)
                   for x, n in zip(pre, names)]
        in_maps += _specs(self.in_specs, ins, in_tree, "in_specs", "inputs", names[len(pre):])
        out_maps = _specs(self.out_specs, self.out_leaves, self.out_tree, "out_specs",
                          "out_shape", self.out_names)
        padded_in = [m.pad(x) for m, x in zip(in_maps, [*pre, *ins])]
        outs = [out_maps[o].pad(self._initial(o, [*pre, *ins])) for o in range(len(self.outs))]
        scratch = [uninitialized(s, d, self.zero) for s, d in self.buffers]
        carry = (padded_in, outs, scratch)
        step = functools.partial(self._step, in_maps + out_maps, (pre_tree, in_tree))
        n = math.prod(self.grid)
        if n == 1:
            carry = step(np.int32(0), carry)
        elif n:
            carry = fori_loop(np.int32(0), np.int32(n), step, carry)
        results = [m.unpad(x) for m, x in zip(out_maps, carry[1])]
        return tree_unflatten(self.out_tree, results)

    def _initial(self, out: int, ins: Sequence[Any]) -> Any:
        """Output ``out`` before the kernel runs: its aliased input, or uninitialized."""
        for i, o in self.aliases.items():
            if o == out:
                return ins[i]
        return uninitialized(*self.outs[out], self.zero)

    def _step(self, maps: list[BlockMapping], trees: tuple[Any, Any], step: Any,
              carry: Any) -> Any:
        ins, outs, buffers = carry
        pre_tree, in_tree = trees
        indices = _indices(lax.convert_element_type(step, dt.int32), self.grid)
        n_pre = pre_tree.num_leaves
        pre_refs = [BlockRef(x) for x in ins[:n_pre]]  # (whole, and given to index maps)
        prefetched = tree_unflatten(pre_tree, pre_refs)
        arrays = [*ins, *outs]
        starts = [m.starts(indices, prefetched) for m in maps]
        blocks = [*ins[:n_pre], *(m.take(x, s) for m, x, s in
                                  zip(maps[n_pre:], arrays[n_pre:], starts[n_pre:]))]
        refs = [*pre_refs, *(BlockRef(b) for b in [*blocks[n_pre:], *buffers])]
        _kernel.stack.append(_Point(self.grid, indices, self.zero))
        try:
            self.kernel(*prefetched, *self._arguments(refs[n_pre:], in_tree, len(ins) - n_pre,
                                                      len(outs)))
        finally:
            _kernel.stack.pop()
        finals = [R.read(r) for r in refs]
        written = [x if f is b else m.put(x, f, s)
                   for m, x, b, f, s in zip(maps, arrays, blocks, finals, starts)]
        return written[:len(ins)], written[len(ins):], finals[len(blocks):]

    def _arguments(self, refs: list[BlockRef], in_tree: Any, n_in: int,
                   n_out: int) -> list[Any]:
        """The kernel's arguments after the prefetched scalars: inputs, outputs, scratch
        (a semaphore where the scratch type is one)."""
        buffers = iter(refs[n_in + n_out:])
        scratch = [fresh_semaphore(t) if is_semaphore_type(t) else next(buffers)
                   for t in self.scratch_types]
        return [*tree_unflatten(in_tree, refs[:n_in]),
                *tree_unflatten(self.kernel_out_tree, refs[n_in:n_in + n_out]),
                *tree_unflatten(self.scratch_tree, scratch)]


def pallas_call(kernel: Callable[..., None], out_shape: Any, *,
                grid_spec: GridSpec | None = None, grid: Any = (),
                in_specs: Any = no_block_spec, out_specs: Any = no_block_spec,
                scratch_shapes: Any = (), input_output_aliases: Mapping[int, int] | None = None,
                debug: bool = False, interpret: Any = False, name: str | None = None,
                compiler_params: Any = None, cost_estimate: Any = None,
                metadata: dict[str, str] | None = None) -> Callable[..., Any]:
    """A function running ``kernel`` over ``grid``: it takes the inputs (a pytree each)
    and returns outputs of ``out_shape`` (a pytree of ``ShapeDtypeStruct``s).

    ``kernel(*input_refs, *output_refs, *scratch_refs)`` reads its inputs' blocks and
    writes its outputs' through Refs; ``program_id(axis)`` says where in the grid it
    is.  As on JAX's CPU backend, ``interpret=True`` (or ``InterpretParams``) is
    required.  A ``PrefetchScalarGridSpec`` gives its first inputs whole to the kernel
    (first) and to the index maps (after the grid indices).

    Raises:
      PallasError: specs whose structure or shapes do not fit the operands, a grid
        that is not static, aliases between operands of different types.
      ValueError: ``interpret`` is false.
    """
    if grid_spec is not None:
        if grid != () or in_specs is not no_block_spec or out_specs is not no_block_spec \
                or scratch_shapes != ():
            raise PallasError("expected either grid_spec or grid, in_specs, out_specs and "
                              "scratch_shapes, but got both")
        grid, in_specs, out_specs = grid_spec.grid, grid_spec.in_specs, grid_spec.out_specs
        scratch_shapes = grid_spec.scratch_shapes
    prefetch = grid_spec.num_scalar_prefetch if isinstance(grid_spec,
                                                           PrefetchScalarGridSpec) else 0
    if not isinstance(in_specs, tuple | list) and in_specs is not no_block_spec:
        raise PallasError(f"expected `in_specs` to be a tuple or a list, one entry per "
                          f"input, but got {in_specs!r}")
    zero = isinstance(interpret, InterpretParams) and interpret.uninitialized_memory == "zero"
    call = _Call(kernel, out_shape, _grid(grid), in_specs, out_specs, scratch_shapes,
                 input_output_aliases or {}, prefetch, zero)
    kernel_name = str(name or getattr(kernel, "__name__", "kernel"))

    def run_kernel(*args: Any) -> Any:
        return call(*args)

    run_kernel.__name__ = kernel_name  # (the name of the jit in jaxprs and compiled ops)
    run = jit(run_kernel)

    @functools.wraps(kernel)
    def wrapped(*args: Any) -> Any:
        if not interpret:
            raise ValueError("Only interpret mode is supported on CPU backend.")
        return run(*args)

    return wrapped

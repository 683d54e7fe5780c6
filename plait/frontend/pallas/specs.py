"""How a Pallas kernel sees its operands: ``BlockSpec``, ``GridSpec`` and the block
dimensions (``Blocked``, ``Element``, ``Squeezed``), as ``jax.experimental.pallas``
names them, and :class:`BlockMapping`, which takes an operand's block for one point of
the grid and writes it back.  See ``docs/pallas.md``.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.core.host_values import value_aval
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.errors import PallasError

__all__ = ["ANY", "HOST", "BlockMapping", "BlockSpec", "Blocked", "Buffered", "CompilerParams",
           "CostEstimate", "Element", "GridSpec", "MemoryRef", "MemorySpace", "Squeezed",
           "block_mapping", "no_block_spec", "squeezed", "uninitialized"]


@dataclasses.dataclass(frozen=True)
class Blocked:
    """A block dimension of ``block_size``; the index map gives the block's index."""

    block_size: int
    """The size of the block along this dimension."""


@dataclasses.dataclass(frozen=True)
class Element:
    """A block dimension of ``block_size``; the index map gives the first element's
    index, into the operand padded by ``padding`` (before, after)."""

    block_size: int
    """The size of the block along this dimension."""
    padding: tuple[int, int] = (0, 0)
    """Elements added before and after the operand along this dimension."""


@dataclasses.dataclass(frozen=True)
class Squeezed:
    """A block dimension of size 1 that the kernel does not see (``None`` in a
    ``block_shape`` means the same)."""


squeezed = Squeezed()
"""The :class:`Squeezed` block dimension."""


class MemorySpace(enum.Enum):
    """Where an operand lives.  plait runs kernels on the CPU, where every operand is in
    memory: only ``ANY`` (the kernel sees the whole operand) changes what it sees."""

    ANY = "any"
    DEFAULT = "default"
    HOST = "host"


ANY = MemorySpace.ANY
"""The memory space in which the kernel sees the whole operand, unblocked."""
HOST = MemorySpace.HOST
"""Host memory (on the CPU, the same memory)."""


@dataclasses.dataclass(frozen=True)
class MemoryRef:
    """The type of a buffer in a memory space: a scratch buffer's, or ``run_scoped``'s
    (``pltpu.VMEM((8, 128), jnp.float32)`` makes one)."""

    inner_aval: ShapedArray
    """The buffer's shape and dtype."""
    memory_space: Any
    """Where it lives (unused on the CPU)."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The buffer's shape."""
        return tuple(self.inner_aval.shape)

    @property
    def dtype(self) -> np.dtype[Any]:
        """The buffer's dtype."""
        return self.inner_aval.dtype


@dataclasses.dataclass(frozen=True)
class Buffered:
    """How many buffers a pipeline uses for an operand (a hint plait does not need)."""

    buffer_count: int
    """The number of buffers."""
    use_lookahead: bool = False
    """Whether to fetch ahead (a hint)."""


@dataclasses.dataclass(frozen=True)
class CostEstimate:
    """The cost of a kernel, for XLA's scheduler (plait does not use it)."""

    flops: int
    """Floating-point operations."""
    transcendentals: int
    """Transcendental operations."""
    bytes_accessed: int
    """Bytes read and written."""
    remote_bytes_transferred: int = 0
    """Bytes sent to other devices."""


@dataclasses.dataclass(frozen=True)
class CompilerParams:
    """Triton's compiler parameters (plait does not compile with Triton: kept, unused)."""

    num_warps: int | None = None
    """Warps per program."""
    num_stages: int | None = None
    """Software pipelining stages."""


@dataclasses.dataclass(frozen=True)
class BlockSpec:
    """Which block of an operand the kernel sees at each point of the grid.

    ``block_shape`` has one entry per dimension of the operand: an int (or
    :class:`Blocked`), ``None`` (or :class:`Squeezed`: a dimension of size 1 the kernel
    does not see) or :class:`Element`.  ``index_map`` takes the grid indices and returns
    one index per dimension: the block's (``Blocked``, ``Squeezed``) or the first
    element's (``Element``).  ``None`` for either means the whole operand.
    """

    block_shape: Sequence[Any] | None = None
    """The block's dimensions; ``None``: the operand's shape."""
    index_map: Callable[..., Any] | None = None
    """Grid indices to block indices; ``None``: the first block."""
    pipeline_mode: Buffered | None = None
    """A pipelining hint (unused)."""
    memory_space: Any = None
    """``ANY``: the kernel sees the whole operand."""


class _NoBlockSpec:
    def __repr__(self) -> str:
        return "NoBlockSpec"


no_block_spec: Any = _NoBlockSpec()
"""Every operand whole: ``pallas_call``'s default ``in_specs`` and ``out_specs``."""


@dataclasses.dataclass(frozen=True)
class GridSpec:
    """A grid with the block specs of its inputs and outputs and its scratch shapes."""

    grid: Any = ()
    """The grid: a tuple of sizes, or one int."""
    in_specs: Any = no_block_spec
    """One ``BlockSpec`` per input leaf (a tuple or list), or ``no_block_spec``."""
    out_specs: Any = no_block_spec
    """The outputs' ``BlockSpec``s, in ``out_shape``'s structure, or ``no_block_spec``."""
    scratch_shapes: Any = ()
    """Buffers the kernel gets after its outputs, kept across the grid."""


def uninitialized(shape: tuple[int, ...], dtype: np.dtype[Any], zero: bool = False) -> Any:
    """What an output holds before a kernel writes it: NaN, the least integer, or False
    (with ``zero``, zeros)."""
    if zero:
        fill: Any = 0
    elif dt.is_float(dtype) or dt.is_complex(dtype):
        fill = np.nan
    elif dt.is_integer(dtype):
        fill = np.iinfo(dtype).min
    else:
        fill = False
    return lax.full(shape, fill, dtype)


# A block dimension, canonical: ("blocked", size), ("squeezed", 1), ("element", size, pad).
_Dim = tuple[Any, ...]


@dataclasses.dataclass(frozen=True)
class BlockMapping:
    """One operand's blocks: their dimensions and index map, over the operand padded to
    whole blocks."""

    what: str
    """The operand, for errors: ``args[1]``, ``outputs[0]``."""
    shape: tuple[int, ...]
    """The operand's shape."""
    dims: tuple[_Dim, ...]
    """The block's dimensions."""
    index_map: Callable[..., Any]
    """Grid indices to block indices."""

    @property
    def block_shape(self) -> tuple[int, ...]:
        """The block the kernel sees (squeezed dimensions left out)."""
        return tuple(d[1] for d in self.dims if d[0] != "squeezed")

    def pad(self, x: Any) -> Any:
        """``x`` padded to whole blocks with :func:`uninitialized` values."""
        config = []
        for (kind, size, *rest), n in zip(self.dims, self.shape):
            lo, hi = rest[0] if kind == "element" else (0, 0)
            if kind == "blocked" and size:
                hi = -n % size
            config.append((lo, hi, 0))
        if all(c == (0, 0, 0) for c in config):
            return x
        fill = uninitialized((), value_aval(x).dtype)
        return lax.pad(x, fill, config)

    def unpad(self, x: Any) -> Any:
        """The operand's own elements of a padded ``x``."""
        starts = [d[2][0] if d[0] == "element" else 0 for d in self.dims]
        if value_aval(x).shape == self.shape:
            return x
        return lax.slice(x, starts, [s + n for s, n in zip(starts, self.shape)])

    def starts(self, grid_indices: Sequence[Any], prefetched: Sequence[Any] = ()) -> list[Any]:
        """The block's first element for these grid indices (int32 scalars); the index
        map also gets the Refs of prefetched scalars."""
        idx = self.index_map(*grid_indices, *prefetched)
        idx = tuple(idx) if isinstance(idx, tuple | list) else (idx,)
        if len(idx) != len(self.dims):
            raise PallasError(
                f"expected the index map of {self.what} to return {len(self.dims)} values, one "
                f"per dimension of its block shape {self.block_shape_text()}, but it returned "
                f"{len(idx)}: {idx!r}")
        out = []
        for i, (kind, size, *_) in zip(idx, self.dims):
            i = lax.convert_element_type(i, dt.int32)
            out.append(lax.mul(i, np.int32(size)) if kind == "blocked" else i)
        return out

    def block_shape_text(self) -> str:
        """The block shape as the user wrote it."""
        return repr(tuple(None if k == "squeezed" else s for k, s, *_ in self.dims))

    def take(self, x: Any, starts: Sequence[Any]) -> Any:
        """The block of the padded operand ``x`` at ``starts``."""
        sizes = [d[1] for d in self.dims]
        block = lax.dynamic_slice(x, starts, sizes)
        squeeze = [k for k, d in enumerate(self.dims) if d[0] == "squeezed"]
        return lax.squeeze(block, squeeze) if squeeze else block

    def put(self, x: Any, block: Any, starts: Sequence[Any]) -> Any:
        """The padded operand ``x`` with ``block`` written at ``starts``."""
        squeeze = [k for k, d in enumerate(self.dims) if d[0] == "squeezed"]
        if squeeze:
            block = lax.expand_dims(block, squeeze)
        return lax.dynamic_update_slice(x, block, starts)


def _dim(d: Any, what: str, spec: BlockSpec) -> _Dim:
    if d is None or isinstance(d, Squeezed):
        return ("squeezed", 1)
    if isinstance(d, Blocked):
        d = d.block_size
    if isinstance(d, Element):
        return ("element", int(d.block_size), tuple(d.padding))
    if isinstance(d, int | np.integer) and not isinstance(d, bool) and d > 0:
        return ("blocked", int(d))
    raise PallasError(f"expected the block shape of {what} to hold positive ints, None, "
                      f"Blocked, Element or Squeezed, but got {d!r} in {spec.block_shape!r}")


def _zeros(n: int) -> Callable[..., tuple[int, ...]]:
    def index_map(*grid_indices: Any) -> tuple[int, ...]:
        return (0,) * n
    return index_map


def block_mapping(spec: Any, shape: tuple[int, ...], what: str) -> BlockMapping:
    """The blocks ``spec`` (a ``BlockSpec`` or ``no_block_spec``) makes of an operand."""
    whole = BlockMapping(what, shape, tuple(("blocked", n) for n in shape), _zeros(len(shape)))
    if spec is no_block_spec:
        return whole
    if not isinstance(spec, BlockSpec):
        raise PallasError(f"expected a BlockSpec for {what}, but got {spec!r}")
    if spec.memory_space is ANY or spec.block_shape is None:
        return whole
    dims = tuple(_dim(d, what, spec) for d in spec.block_shape)
    if len(dims) != len(shape):
        raise PallasError(f"expected the block shape of {what} to have {len(shape)} "
                          f"dimensions, as its shape {shape} has, but got "
                          f"{tuple(spec.block_shape)!r}")
    return BlockMapping(what, shape, dims, spec.index_map or _zeros(len(shape)))


def grid_size(grid: tuple[int, ...]) -> int:
    """How many points the grid has."""
    return math.prod(grid)

"""What TPU-style Pallas kernels use (``jax.experimental.pallas.tpu``), run in interpret
mode as JAX runs them on the CPU: memory spaces that size scratch buffers (``VMEM((8,
128), f32)``), semaphores, DMAs (``make_async_copy``, ``sync_copy``: a copy when
started), scalar prefetch (``PrefetchScalarGridSpec``), ``roll`` and ``bitcast``, and the
compiler and interpreter parameters.  See ``docs/pallas.md``.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any

from plait.frontend import lax
from plait.frontend.core.host_values import value_aval
from plait.frontend.core.refs import Ref
from plait.frontend.core.tree_util import tree_map
from plait.frontend.numpy import concatenate, reshape, split, swapaxes
from plait.frontend.numpy import roll as _roll
from plait.frontend.pallas.refs import RefView, as_view
from plait.frontend.pallas.specs import GridSpec, MemoryRef
from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray

__all__ = ["ARBITRARY", "CORE_PARALLEL", "PARALLEL", "SUBCORE_PARALLEL", "AsyncCopyDescriptor",
           "CompilerParams", "GridDimensionSemantics", "InterpretParams", "MemorySpace",
           "PrefetchScalarGridSpec", "Semaphore", "SemaphoreType", "async_copy", "bitcast",
           "make_async_copy", "roll", "sync_copy"]


class MemorySpace(enum.Enum):
    """A TPU memory space; called with a shape and a dtype, the type of a scratch buffer
    there (on the CPU every buffer is in memory alike)."""

    VMEM = "vmem"
    VMEM_SHARED = "vmem_shared"
    SMEM = "smem"
    CMEM = "cmem"
    SEMAPHORE = "semaphore_mem"
    HBM = "hbm"

    def __call__(self, shape: Sequence[int], dtype: Any) -> MemoryRef:
        return MemoryRef(ShapedArray(tuple(shape), dt.canonicalize(dtype)), self)


class Semaphore:
    """A semaphore (or an array of them) a kernel gets: DMAs complete when started, so
    there is nothing to count; ``sem.at[i]`` is one of the array."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    @property
    def at(self) -> Any:
        """One semaphore of the array."""
        return _SemaphoreIndex()


class _SemaphoreIndex:
    def __getitem__(self, index: Any) -> Semaphore:
        return Semaphore(())


@dataclasses.dataclass(frozen=True)
class SemaphoreArray:
    """The type of an array of semaphores: ``SemaphoreType.DMA((2,))``."""

    shape: tuple[int, ...]
    """The array's shape."""
    kind: SemaphoreType
    """The semaphores' type."""


class SemaphoreType(enum.Enum):
    """The type of a semaphore scratch buffer; called with a shape, of an array of them."""

    REGULAR = "regular"
    DMA = "dma"
    BARRIER = "barrier"

    def __call__(self, shape: Sequence[int]) -> SemaphoreArray:
        return SemaphoreArray(tuple(shape), self)


def is_semaphore_type(t: Any) -> bool:
    """Whether a scratch type is a semaphore (or an array of them)."""
    return isinstance(t, SemaphoreType | SemaphoreArray)


def fresh_semaphore(t: Any) -> Semaphore:
    """The semaphore a kernel gets for the scratch type ``t``."""
    return Semaphore(t.shape if isinstance(t, SemaphoreArray) else ())


class GridDimensionSemantics(enum.Enum):
    """How a grid axis may be run (a hint: plait runs the grid's points in order)."""

    PARALLEL = "parallel"
    CORE_PARALLEL = "core_parallel"
    SUBCORE_PARALLEL = "subcore_parallel"
    ARBITRARY = "arbitrary"


PARALLEL = GridDimensionSemantics.PARALLEL
CORE_PARALLEL = GridDimensionSemantics.CORE_PARALLEL
SUBCORE_PARALLEL = GridDimensionSemantics.SUBCORE_PARALLEL
ARBITRARY = GridDimensionSemantics.ARBITRARY


@dataclasses.dataclass(frozen=True)
class CompilerParams:
    """Mosaic's compiler parameters (kept, unused: plait does not compile for TPUs)."""

    dimension_semantics: Sequence[Any] | None = None
    """Per grid axis: parallel or arbitrary."""
    allow_input_fusion: Sequence[bool] | None = None
    """Per input: whether XLA may fuse into it."""
    vmem_limit_bytes: int | None = None
    """The VMEM budget."""
    collective_id: int | None = None
    """A barrier semaphore's id."""
    has_side_effects: Any = False
    """Whether the kernel must run even if its outputs are unused."""
    flags: Mapping[str, Any] | None = None
    """Mosaic's flags."""
    internal_scratch_in_bytes: int | None = None
    """Mosaic's internal scratch."""
    serialization_format: int = 1
    """Mosaic's serialization version."""
    disable_bounds_checks: bool = False
    """Whether to skip bounds checks."""


@dataclasses.dataclass(frozen=True)
class InterpretParams:
    """JAX's TPU interpreter's parameters.  plait interprets every kernel the same way;
    ``uninitialized_memory`` (``"nan"`` or ``"zero"``) sets what unwritten outputs and
    scratch buffers hold."""

    detect_races: bool = False
    """(Unused: points run in order.)"""
    out_of_bounds_reads: str = "raise"
    """(Unused.)"""
    skip_floating_point_ops: bool = False
    """(Unused.)"""
    uninitialized_memory: str = "nan"
    """What unwritten memory holds: ``"nan"`` (and the least integer) or ``"zero"``."""
    num_cores_or_threads: int = 1
    """(Unused.)"""
    dma_execution_mode: str = "on_wait"
    """(Unused: a DMA copies when started.)"""
    random_seed: int | None = None
    """(Unused.)"""


@dataclasses.dataclass(frozen=True)
class PrefetchScalarGridSpec(GridSpec):
    """A grid spec whose first ``num_scalar_prefetch`` inputs are given whole to the
    kernel (first) and to every index map (after the grid indices), as Refs."""

    num_scalar_prefetch: int = 0
    """How many leading inputs are prefetched scalars."""


class AsyncCopyDescriptor:
    """A copy between Refs (or views): ``start`` copies, ``wait`` has nothing to wait for."""

    def __init__(self, src_ref: Any, dst_ref: Any) -> None:
        self.src = as_view(src_ref, "make_async_copy")
        self.dst = as_view(dst_ref, "make_async_copy")

    def start(self, priority: int = 0, add: bool = False) -> None:
        """Copy (or with ``add``, add) the source into the destination."""
        value = self.src[...]
        self.dst[...] = self.dst[...] + value if add else value

    def wait(self) -> None:
        """Wait for the copy (done already)."""

    def wait_send(self) -> None:
        """Wait for the copy to be sent (done already)."""

    def wait_recv(self) -> None:
        """Wait for the copy to arrive (done already)."""


def make_async_copy(src_ref: Any, dst_ref: Any, sem: Any) -> AsyncCopyDescriptor:
    """A copy from ``src_ref`` to ``dst_ref``, to ``start`` and ``wait`` for."""
    return AsyncCopyDescriptor(src_ref, dst_ref)


def async_copy(src_ref: Any, dst_ref: Any, sem: Any, *, priority: int = 0,
               add: bool = False) -> AsyncCopyDescriptor:
    """A copy from ``src_ref`` to ``dst_ref``, started."""
    copy = make_async_copy(src_ref, dst_ref, sem)
    copy.start(priority=priority, add=add)
    return copy


def sync_copy(src_ref: Any, dst_ref: Any, *, add: bool = False) -> None:
    """Copy each Ref of the pytree ``src_ref`` into the matching one of ``dst_ref``."""
    def copy(s: Any, d: Any) -> None:
        make_async_copy(s, d, None).start(add=add)
    tree_map(copy, src_ref, dst_ref, is_leaf=lambda x: isinstance(x, Ref | RefView))


def roll(x: Any, shift: Any, axis: int, *, stride: int | None = None,
         stride_axis: int | None = None) -> Any:
    """``jnp.roll(x, shift, axis)``; with ``stride``, slice ``k`` along ``stride_axis``
    rolls by ``shift + k * stride``."""
    if isinstance(shift, int) and shift < 0:
        raise ValueError("shift must be non-negative.")
    if not 0 <= axis < len(value_aval(x).shape):
        raise ValueError("axis is out of range.")
    if (stride is None) != (stride_axis is None):
        raise ValueError("stride and stride_axis must be both specified or not.")
    if stride is None or stride_axis is None:
        return _roll(x, shift, axis)
    n = value_aval(x).shape[stride_axis]
    parts = split(x, n, stride_axis)
    return concatenate([_roll(p, shift + k * stride, axis) for k, p in enumerate(parts)],
                       stride_axis)


def bitcast(x: Any, ty: Any) -> Any:
    """``x``'s bits as dtype ``ty``; a narrower type packs (a wider one unpacks) along the
    second-minor axis, as Mosaic lays them out."""
    ty = dt.canonicalize(ty)
    shape = value_aval(x).shape
    if len(shape) < 2:
        raise ValueError("Not implemented: bitcast 1D")
    src, dst = dt.bit_width(value_aval(x).dtype), dt.bit_width(ty)
    if shape[-2] * src % dst:
        raise ValueError("Not implemented: the 2nd minor dim can not be perfectly packed or"
                         " unpacked")
    if src < dst:
        *lead, m, n = shape
        packed = swapaxes(reshape(x, (*lead, m // (dst // src), dst // src, n)), -1, -2)
        return lax.bitcast_convert_type(packed, ty)
    if src > dst:
        y = lax.bitcast_convert_type(x, ty)
        *lead, m, n, k = value_aval(y).shape
        return reshape(swapaxes(y, -1, -2), (*lead, m * k, n))
    return lax.bitcast_convert_type(x, ty)


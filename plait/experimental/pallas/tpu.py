"""``plait.experimental.pallas.tpu``: what TPU-style Pallas kernels use (memory spaces,
semaphores and DMAs, scalar prefetch, ``roll``, ``bitcast``), run in interpret mode as
JAX runs them on the CPU.  See ``docs/pallas.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.pallas.refs import load as load
from plait.frontend.pallas.refs import store as store
from plait.frontend.pallas.tpu import ARBITRARY as ARBITRARY
from plait.frontend.pallas.tpu import CORE_PARALLEL as CORE_PARALLEL
from plait.frontend.pallas.tpu import PARALLEL as PARALLEL
from plait.frontend.pallas.tpu import SUBCORE_PARALLEL as SUBCORE_PARALLEL
from plait.frontend.pallas.tpu import CompilerParams as CompilerParams
from plait.frontend.pallas.tpu import GridDimensionSemantics as GridDimensionSemantics
from plait.frontend.pallas.tpu import InterpretParams as InterpretParams
from plait.frontend.pallas.tpu import MemorySpace as MemorySpace
from plait.frontend.pallas.tpu import PrefetchScalarGridSpec as PrefetchScalarGridSpec
from plait.frontend.pallas.tpu import SemaphoreType as SemaphoreType
from plait.frontend.pallas.tpu import async_copy as async_copy
from plait.frontend.pallas.tpu import bitcast as bitcast
from plait.frontend.pallas.tpu import make_async_copy as make_async_copy
from plait.frontend.pallas.tpu import roll as roll
from plait.frontend.pallas.tpu import sync_copy as sync_copy

VMEM = MemorySpace.VMEM
"""Vector memory: ``VMEM(shape, dtype)`` is a scratch buffer's type."""
VMEM_SHARED = MemorySpace.VMEM_SHARED
"""Vector memory shared by cores."""
SMEM = MemorySpace.SMEM
"""Scalar memory."""
CMEM = MemorySpace.CMEM
"""Common memory."""
HBM = MemorySpace.HBM
"""High-bandwidth memory (the device's main memory)."""
SEMAPHORE = MemorySpace.SEMAPHORE
"""Semaphore memory."""

__all__ = ["ARBITRARY", "CMEM", "CORE_PARALLEL", "CompilerParams", "GridDimensionSemantics",
           "HBM", "InterpretParams", "MemorySpace", "PARALLEL", "PrefetchScalarGridSpec",
           "SEMAPHORE", "SMEM", "SUBCORE_PARALLEL", "SemaphoreType", "VMEM", "VMEM_SHARED",
           "async_copy", "bitcast", "load", "make_async_copy", "roll", "store", "sync_copy"]

"""``plait.experimental.pallas``: Pallas kernels run in interpret mode, as
``jax.experimental.pallas`` runs them on the CPU.  See ``docs/pallas.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.experimental.pallas import tpu as tpu
from plait.experimental.pallas import triton as triton
from plait.frontend.core.slices import Slice as Slice
from plait.frontend.core.slices import ds as ds
from plait.frontend.core.slices import dslice as dslice
from plait.frontend.pallas.call import num_programs as num_programs
from plait.frontend.pallas.call import pallas_call as pallas_call
from plait.frontend.pallas.call import program_id as program_id
from plait.frontend.pallas.kernel import align_to as align_to
from plait.frontend.pallas.kernel import broadcast_to as broadcast_to
from plait.frontend.pallas.kernel import cdiv as cdiv
from plait.frontend.pallas.kernel import debug_print as debug_print
from plait.frontend.pallas.kernel import empty as empty
from plait.frontend.pallas.kernel import empty_like as empty_like
from plait.frontend.pallas.kernel import loop as loop
from plait.frontend.pallas.kernel import multiple_of as multiple_of
from plait.frontend.pallas.kernel import next_power_of_2 as next_power_of_2
from plait.frontend.pallas.kernel import reciprocal as reciprocal
from plait.frontend.pallas.kernel import run_scoped as run_scoped
from plait.frontend.pallas.kernel import run_state as run_state
from plait.frontend.pallas.kernel import strides_from_shape as strides_from_shape
from plait.frontend.pallas.kernel import when as when
from plait.frontend.pallas.kernel import with_scoped as with_scoped
from plait.frontend.pallas.specs import ANY as ANY
from plait.frontend.pallas.specs import HOST as HOST
from plait.frontend.pallas.specs import Blocked as Blocked
from plait.frontend.pallas.specs import BlockSpec as BlockSpec
from plait.frontend.pallas.specs import Buffered as Buffered
from plait.frontend.pallas.specs import CostEstimate as CostEstimate
from plait.frontend.pallas.specs import Element as Element
from plait.frontend.pallas.specs import GridSpec as GridSpec
from plait.frontend.pallas.specs import MemoryRef as MemoryRef
from plait.frontend.pallas.specs import MemorySpace as MemorySpace
from plait.frontend.pallas.specs import Squeezed as Squeezed
from plait.frontend.pallas.specs import no_block_spec as no_block_spec
from plait.frontend.pallas.specs import squeezed as squeezed

__all__ = ["ANY", "HOST", "BlockSpec", "Blocked", "Buffered", "CostEstimate", "Element",
           "GridSpec", "MemoryRef", "MemorySpace", "Slice", "Squeezed", "align_to",
           "broadcast_to", "cdiv", "debug_print", "ds", "dslice", "empty", "empty_like", "loop",
           "multiple_of", "next_power_of_2", "no_block_spec", "num_programs", "pallas_call",
           "program_id", "reciprocal", "run_scoped", "run_state", "squeezed",
           "strides_from_shape", "tpu", "triton", "when", "with_scoped"]

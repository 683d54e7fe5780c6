"""``plait.experimental.pallas.triton``: Triton's kernel operations (masked ``load`` and
``store``, atomics, ``dot``), run in interpret mode as JAX runs them on the CPU.  See
``docs/pallas.md``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.pallas.kernel import atomic_add as atomic_add
from plait.frontend.pallas.kernel import atomic_and as atomic_and
from plait.frontend.pallas.kernel import atomic_cas as atomic_cas
from plait.frontend.pallas.kernel import atomic_max as atomic_max
from plait.frontend.pallas.kernel import atomic_min as atomic_min
from plait.frontend.pallas.kernel import atomic_or as atomic_or
from plait.frontend.pallas.kernel import atomic_xchg as atomic_xchg
from plait.frontend.pallas.kernel import atomic_xor as atomic_xor
from plait.frontend.pallas.kernel import debug_barrier as debug_barrier
from plait.frontend.pallas.kernel import dot as dot
from plait.frontend.pallas.kernel import max_contiguous as max_contiguous
from plait.frontend.pallas.refs import load as load
from plait.frontend.pallas.refs import store as store
from plait.frontend.pallas.specs import CompilerParams as CompilerParams

__all__ = ["CompilerParams", "atomic_add", "atomic_and", "atomic_cas", "atomic_max",
           "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor", "debug_barrier", "dot",
           "load", "max_contiguous", "store"]

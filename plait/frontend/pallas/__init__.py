"""``plait.experimental.pallas``'s implementation: Pallas kernels run in interpret mode,
made of ordinary primitives.  The public facade is :mod:`plait.experimental.pallas`.

Bottom to top: :mod:`.specs` (block specs and how they map an operand's blocks),
:mod:`.refs` (the Refs and views a kernel gets; Triton's masked ``load`` and ``store``),
:mod:`.tpu` (memory spaces, semaphores and DMAs, scalar prefetch), :mod:`.call`
(``pallas_call``, ``program_id``), :mod:`.kernel` (``when``, ``loop``, ``run_scoped``,
atomics, ``dot``).  See ``docs/pallas.md``.
"""

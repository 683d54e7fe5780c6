"""``plait.experimental.pallas``'s implementation: Pallas kernels run in interpret mode,
made of ordinary primitives.  The public facade is :mod:`plait.experimental.pallas`.

Bottom to top: :mod:`.specs` (block specs and how they map an operand's blocks),
:mod:`.refs` (the Refs and views a kernel gets; Triton's masked ``load`` and ``store``),
:mod:`.kernel` (``when``, ``loop``, atomics, ``dot``), :mod:`.call` (``pallas_call``,
``program_id``).  See ``docs/pallas.md``.
"""

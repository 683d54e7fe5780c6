"""NumPy implementations of every primitive, registered in :data:`plait.ir.impl_rules`."""

from plait.ir.reference import calls, control_flow, elementwise, structural  # noqa: F401

"""Lowering rules, one per primitive, registered in :data:`plait.lowering.lower.lowering_rules`."""

from plait.lowering.rules import calls, control_flow, elementwise, structural  # noqa: F401

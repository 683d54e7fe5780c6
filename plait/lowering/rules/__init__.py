"""Lowering rules, one per primitive, registered in :data:`plait.lowering.lower.lowering_rules`."""

from plait.lowering.rules import calls, elementwise, structural  # noqa: F401

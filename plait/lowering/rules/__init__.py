"""Lowering rules, one per primitive, registered in :data:`plait.lowering.lower.lowering_rules`."""

from plait.lowering.rules import (  # noqa: F401
    assembly,
    callbacks,
    calls,
    composite,
    control_flow,
    conversions,
    convolution,
    decomposed,
    elementwise,
    exported,
    fft,
    indexing,
    linalg_decompositions,
    linalg_eig,
    linalg_factorizations,
    linalg_schur,
    parallel,
    special,
    structural,
    windowed,
)

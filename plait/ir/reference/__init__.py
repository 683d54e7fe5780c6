"""NumPy implementations of every primitive, registered in :data:`plait.ir.impl_rules`."""

from plait.ir.reference import (  # noqa: F401
    assembly,
    bits,
    calls,
    composite,
    control_flow,
    conversions,
    convolution,
    elementwise,
    fft,
    indexing,
    linalg_decompositions,
    linalg_eig,
    linalg_factorizations,
    linalg_schur,
    parallel,
    random,
    rng,
    special,
    structural,
    windowed,
)

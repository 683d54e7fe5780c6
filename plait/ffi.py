"""``plait.ffi``: call native handlers registered with XLA, as ``jax.ffi``."""

# ``name as name`` marks a re-export for mypy --strict users.
from plait.frontend.api.ffi import TypeRegistration as TypeRegistration
from plait.frontend.api.ffi import build_ffi_lowering_function as build_ffi_lowering_function
from plait.frontend.api.ffi import ffi_call as ffi_call
from plait.frontend.api.ffi import ffi_lowering as ffi_lowering
from plait.frontend.api.ffi import include_dir as include_dir
from plait.frontend.api.ffi import pycapsule as pycapsule
from plait.frontend.api.ffi import register_ffi_target as register_ffi_target
from plait.frontend.api.ffi import (
    register_ffi_target_as_batch_partitionable as register_ffi_target_as_batch_partitionable,
)
from plait.frontend.api.ffi import register_ffi_type as register_ffi_type
from plait.frontend.api.ffi import register_ffi_type_id as register_ffi_type_id

__all__ = ["ffi_call", "register_ffi_target", "register_ffi_type", "register_ffi_type_id",
           "register_ffi_target_as_batch_partitionable", "pycapsule", "include_dir",
           "ffi_lowering", "build_ffi_lowering_function", "TypeRegistration"]

"""plait: composable transformations of numerical programs over a typed, printable IR.

``plait.make_jaxpr`` traces a Python function over arrays into a jaxpr
(:mod:`plait.ir`); :mod:`plait.numpy` and :mod:`plait.lax` are the array
namespaces; :mod:`plait.tree_util` handles pytrees.
"""

import os as _os

# PJRT logs at INFO level when the client starts; JAX hides that too.  Must be
# set before jaxlib is first imported.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from plait import (
    ad,
    ad_checkpoint,
    api_util,
    compat,
    config,
    core,
    custom_batching,
    custom_derivatives,
    debug,
    distributed,
    dlpack,
    dtypes,
    errors,
    experimental,
    export,
    ffi,
    flatten_util,
    image,
    interpreters,
    ir,
    lax,
    monitoring,
    nn,
    numpy,
    ops,
    profiler,
    random,
    ref,
    scipy,
    sharding,
    stages,
    test_util,
    transforms,
    tree,
    tree_util,
    typing,
)
from plait.frontend.api import incomplete_special as _incomplete_special  # noqa: F401  (registers)
from plait.frontend.api.autodiff import (
    grad,
    jvp,
    linear_transpose,
    linearize,
    value_and_grad,
    vjp,
)
from plait.frontend.api.callbacks import pure_callback
from plait.frontend.api.checkpoint import checkpoint, checkpoint_policies, remat
from plait.frontend.api.contexts import (
    allow_f16_reductions,
    auto_pcast,
    check_tracer_leaks,
    checking_leaks,
    debug_infs,
    debug_key_reuse,
    debug_nans,
    default_device,
    default_matmul_precision,
    disable_jit,
    enable_checks,
    ensure_compile_time_eval,
    explain_cache_misses,
    jax2tf_associative_scan_reductions,
    log_compiles,
    named_call,
    named_scope,
    numpy_rank_promotion,
    remove_size_one_mesh_axis_from_type,
    softmax_custom_jvp,
)
from plait.frontend.api.custom_derivatives import custom_jvp, custom_vjp
from plait.frontend.api.custom_gradient import closure_convert, custom_gradient
from plait.frontend.api.device_put import device_put
from plait.frontend.api.devices import (
    Device,
    copy_to_host_async,
    host_count,
    host_id,
    host_ids,
    local_devices,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
    process_count,
    process_index,
    process_indices,
)
from plait.frontend.api.environment import (
    block_until_ready,
    default_backend,
    device_count,
    device_get,
    devices,
    effects_barrier,
    enable_x64,
    live_arrays,
    local_device_count,
    print_environment_info,
    typeof,
)
from plait.frontend.api.explicit_sharding import reshard
from plait.frontend.api.fwd_and_bwd import fwd_and_bwd
from plait.frontend.api.guards import (
    array_garbage_collection_guard,
    no_execution,
    no_tracing,
    thread_guard,
    transfer_guard,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)
from plait.frontend.api.jacobians import hessian, jacfwd, jacrev
from plait.frontend.api.jit import jit
from plait.frontend.api.make_jaxpr import eval_shape, make_jaxpr
from plait.frontend.api.pmap import pmap
from plait.frontend.api.prng_contexts import (
    default_prng_impl,
    enable_custom_prng,
    legacy_prng_key,
    threefry_partitionable,
)
from plait.frontend.api.refs import Ref, empty_ref, free_ref, freeze, new_ref
from plait.frontend.api.shard_map import shard_map, smap
from plait.frontend.api.stages import Compiled, Lowered, Traced
from plait.frontend.api.vmap import vmap
from plait.frontend.core import eager as _eager  # noqa: F401  (installs eager execution)
from plait.frontend.core.arguments import ShapeDtypeStruct
from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import Shard
from plait.frontend.core.promotion import numpy_dtype_promotion
from plait.frontend.core.slices import ds
from plait.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Primitive, ShapedArray, Var
from plait.ir.caches import cache_info, clear_caches
from plait.ir.dtypes import float0
from plait.ir.sharding import NamedSharding, set_mesh
from plait.ir.sharding import PartitionSpec as P

jacobian = jacrev
"""``jacrev`` (JAX's alias)."""

__all__ = [
    "ad", "ad_checkpoint", "api_util", "compat", "config", "core", "custom_batching",
    "custom_derivatives", "debug", "dlpack", "dtypes", "errors", "experimental", "export",
    "ffi", "flatten_util", "image", "interpreters", "ir", "lax", "monitoring", "nn", "numpy", "ops",
    "profiler", "random", "ref", "scipy", "stages", "test_util", "transforms", "tree",
    "tree_util", "typing",
    "block_until_ready", "default_backend", "device_count", "device_get", "enable_x64",
    "local_device_count", "print_environment_info", "effects_barrier",
    "typeof", "float0", "jacobian", "disable_jit", "ensure_compile_time_eval", "named_call",
    "named_scope", "live_arrays", "default_matmul_precision", "default_device",
    "check_tracer_leaks", "checking_leaks", "debug_key_reuse", "explain_cache_misses",
    "numpy_rank_promotion", "threefry_partitionable", "default_prng_impl", "legacy_prng_key",
    "enable_custom_prng",
    "custom_gradient", "closure_convert", "pure_callback", "debug_nans", "debug_infs",
    "log_compiles",
    "make_jaxpr", "eval_shape", "jit", "device_put", "devices",
    "grad", "hessian", "jacfwd", "jacrev", "jvp", "linear_transpose", "linearize",
    "value_and_grad", "vjp", "vmap", "checkpoint", "checkpoint_policies", "remat", "custom_jvp",
    "custom_vjp",
    "Traced", "Lowered", "Compiled", "ShapeDtypeStruct", "Array", "Shard",
    "numpy_dtype_promotion", "ds",
    "clear_caches", "cache_info", "ClosedJaxpr", "Eqn", "Jaxpr", "Literal", "Primitive",
    "ShapedArray", "Var",
    "distributed", "sharding", "pmap", "shard_map", "smap", "make_mesh", "local_devices",
    "process_index", "process_count", "make_array_from_callback",
    "make_array_from_single_device_arrays", "make_array_from_process_local_data", "set_mesh",
    "NamedSharding", "P", "Device", "copy_to_host_async", "host_count", "host_id", "host_ids",
    "process_indices", "fwd_and_bwd", "Ref", "new_ref", "empty_ref", "free_ref", "freeze",
    "reshard",
    "transfer_guard", "transfer_guard_host_to_device", "transfer_guard_device_to_host",
    "transfer_guard_device_to_device", "no_tracing", "no_execution",
    "array_garbage_collection_guard", "thread_guard", "enable_checks",
    "allow_f16_reductions", "softmax_custom_jvp", "remove_size_one_mesh_axis_from_type",
    "auto_pcast", "jax2tf_associative_scan_reductions",
]
__version__ = "0.1.0"

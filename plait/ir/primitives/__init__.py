"""The primitives of plait's IR, with their typing rules.

Each ``*_p`` object is a :class:`~plait.ir.Primitive`; all are registered by
name in :data:`plait.ir.PRIMITIVES`.
"""

from plait.ir.primitives.assembly import split_p, stack_p, tile_p, unstack_p
from plait.ir.primitives.barriers import optimization_barrier_p
from plait.ir.primitives.bits import (
                                             clz_p,
                                             population_count_p,
                                             shift_left_p,
                                             shift_right_arithmetic_p,
                                             shift_right_logical_p,
)
from plait.ir.primitives.callbacks import (
                                             HostCallback,
                                             debug_callback_p,
                                             io_callback_p,
                                             pure_callback_p,
)
from plait.ir.primitives.calls import jit_p
from plait.ir.primitives.checks import CheckMessage, check_p
from plait.ir.primitives.composite import HashableArray, composite_p
from plait.ir.primitives.control_flow import cond_p, platform_index_p, scan_p, while_p
from plait.ir.primitives.conversions import bitcast_convert_type_p, mulhi_p, reduce_precision_p
from plait.ir.primitives.convolution import ConvDimensionNumbers, conv_general_dilated_p
from plait.ir.primitives.custom import (
                                             custom_jvp_call_p,
                                             custom_lin_p,
                                             custom_vjp_call_p,
                                             remat_p,
)
from plait.ir.primitives.custom_batching import VmapRule, custom_vmap_call_p
from plait.ir.primitives.elementwise import (
                                             AccuracyMode,
                                             RoundingMethod,
                                             Tolerance,
                                             abs_p,
                                             acos_p,
                                             acosh_p,
                                             add_any_p,
                                             add_p,
                                             and_p,
                                             asin_p,
                                             asinh_p,
                                             atan2_p,
                                             atan_p,
                                             atanh_p,
                                             cbrt_p,
                                             ceil_p,
                                             clamp_p,
                                             complex_p,
                                             conj_p,
                                             convert_element_type_p,
                                             copy_p,
                                             cos_p,
                                             cosh_p,
                                             div_p,
                                             eq_p,
                                             exp2_p,
                                             exp_p,
                                             expm1_p,
                                             floor_p,
                                             ge_p,
                                             gt_p,
                                             imag_p,
                                             integer_pow_p,
                                             is_finite_p,
                                             le_p,
                                             log1p_p,
                                             log_p,
                                             logistic_p,
                                             lt_p,
                                             max_p,
                                             min_p,
                                             mul_p,
                                             ne_p,
                                             neg_p,
                                             nextafter_p,
                                             not_p,
                                             or_p,
                                             pow_p,
                                             real_p,
                                             rem_p,
                                             round_p,
                                             rsqrt_p,
                                             select_n_p,
                                             sign_p,
                                             sin_p,
                                             sinh_p,
                                             sqrt_p,
                                             square_p,
                                             stop_gradient_p,
                                             sub_p,
                                             tan_p,
                                             tanh_p,
                                             xor_p,
)
from plait.ir.primitives.exported import ExportedModule, call_exported_lin_p, call_exported_p
from plait.ir.primitives.fft import FftType, fft_p
from plait.ir.primitives.foreign import FFI, FfiAttributes, FrozenDict, ffi_call_p
from plait.ir.primitives.indexing import (
                                             SCATTERS,
                                             GatherDimensionNumbers,
                                             GatherScatterMode,
                                             ScatterDimensionNumbers,
                                             gather_p,
                                             scatter_add_p,
                                             scatter_max_p,
                                             scatter_min_p,
                                             scatter_mul_p,
                                             scatter_p,
                                             scatter_sub_p,
)
from plait.ir.primitives.linalg import (
                                             DotAlgorithm,
                                             DotAlgorithmPreset,
                                             Precision,
                                             dot_general_dtype,
                                             dot_general_p,
)
from plait.ir.primitives.linalg_decompositions import cholesky_p, triangular_solve_p
from plait.ir.primitives.linalg_eig import *  # noqa: F403
from plait.ir.primitives.linalg_factorizations import *  # noqa: F403
from plait.ir.primitives.linalg_schur import *  # noqa: F403
from plait.ir.primitives.parallel import (
                                             all_gather_p,
                                             all_to_all_p,
                                             axis_index_p,
                                             pbroadcast_p,
                                             pmax_p,
                                             pmin_p,
                                             ppermute_p,
                                             psum_p,
                                             pvary_p,
                                             reduce_scatter_p,
                                             reshard_p,
                                             shard_map_p,
                                             sharding_constraint_p,
)
from plait.ir.primitives.random import (
                                             KEY_FRY,
                                             PRNGImpl,
                                             random_bits_p,
                                             random_clone_p,
                                             random_fold_in_p,
                                             random_seed_p,
                                             random_split_p,
                                             random_unwrap_p,
                                             random_wrap_p,
                                             threefry2x32_p,
)
from plait.ir.primitives.reductions import (
                                             argmax_p,
                                             argmin_p,
                                             cumlogsumexp_p,
                                             cummax_p,
                                             cummin_p,
                                             cumprod_p,
                                             cumsum_p,
                                             reduce_and_p,
                                             reduce_max_p,
                                             reduce_min_p,
                                             reduce_or_p,
                                             reduce_p,
                                             reduce_prod_p,
                                             reduce_sum_p,
                                             reduce_xor_p,
)
from plait.ir.primitives.remat_policies import (
                                             POLICIES,
                                             POLICY_CONSTRUCTORS,
                                             Offloadable,
                                             RematPolicy,
                                             custom_policy,
                                             name_p,
)
from plait.ir.primitives.rng import RandomAlgorithm, rng_bit_generator_p, rng_uniform_p
from plait.ir.primitives.solves import LinearSolveTuple, custom_linear_solve_p
from plait.ir.primitives.sorting import approx_top_k_p, sort_p, top_k_p
from plait.ir.primitives.special import (
                                             bessel_i0e_p,
                                             bessel_i1e_p,
                                             digamma_p,
                                             erf_inv_p,
                                             erf_p,
                                             erfc_p,
                                             igamma_grad_a_p,
                                             igamma_p,
                                             igammac_p,
                                             lgamma_p,
                                             polygamma_p,
                                             regularized_incomplete_beta_p,
                                             zeta_p,
)
from plait.ir.primitives.structural import (
                                             broadcast_in_dim_p,
                                             concatenate_p,
                                             dim_as_value_p,
                                             dynamic_slice_p,
                                             dynamic_update_slice_p,
                                             empty_p,
                                             iota_p,
                                             pad_p,
                                             reshape_p,
                                             rev_p,
                                             slice_p,
                                             squeeze_p,
                                             transpose_p,
)
from plait.ir.primitives.tokens import after_all_p, create_token_p
from plait.ir.primitives.windowed import (
                                             reduce_window_max_p,
                                             reduce_window_min_p,
                                             reduce_window_p,
                                             reduce_window_sum_p,
                                             select_and_gather_add_p,
                                             select_and_scatter_add_p,
)

__all__ = [
    "CheckMessage", "check_p",
    "HostCallback", "debug_callback_p", "io_callback_p", "pure_callback_p",
    "FFI", "FfiAttributes", "FrozenDict", "HashableArray", "ffi_call_p",
    "dim_as_value_p",
    "ExportedModule", "call_exported_p", "call_exported_lin_p",
    "RoundingMethod", "AccuracyMode", "Tolerance",
    "abs_p", "acos_p", "acosh_p", "add_any_p", "add_p", "and_p", "asin_p",
    "asinh_p",
    "atan2_p", "atan_p", "atanh_p", "cbrt_p", "ceil_p", "clamp_p", "convert_element_type_p",
    "copy_p", "cos_p", "cosh_p", "div_p", "eq_p", "exp2_p", "exp_p", "expm1_p", "floor_p",
    "ge_p", "gt_p", "integer_pow_p", "is_finite_p", "le_p", "log1p_p", "log_p", "logistic_p",
    "lt_p", "max_p", "min_p", "mul_p", "ne_p", "neg_p", "nextafter_p", "not_p", "or_p",
    "pow_p", "rem_p", "round_p", "rsqrt_p", "select_n_p", "sign_p", "sin_p", "sinh_p",
    "sqrt_p", "sub_p", "tan_p", "tanh_p", "xor_p", "dot_general_p", "dot_general_dtype",
    "Precision", "argmax_p", "argmin_p",
    "cummax_p", "cummin_p", "cumprod_p", "cumsum_p", "reduce_and_p", "reduce_max_p",
    "reduce_min_p", "reduce_or_p", "reduce_prod_p", "reduce_sum_p", "reduce_xor_p", "sort_p",
    "complex_p", "conj_p", "imag_p", "real_p", "broadcast_in_dim_p", "concatenate_p",
    "dynamic_slice_p", "dynamic_update_slice_p",
    "iota_p", "pad_p", "reshape_p", "rev_p", "slice_p", "squeeze_p", "transpose_p", "jit_p",
    "cond_p", "scan_p", "while_p", "POLICIES", "POLICY_CONSTRUCTORS", "RematPolicy",
    "Offloadable", "custom_policy", "name_p", "custom_jvp_call_p", "custom_lin_p",
    "custom_vjp_call_p", "remat_p", "GatherDimensionNumbers", "GatherScatterMode",
    "VmapRule", "custom_vmap_call_p",
    "ScatterDimensionNumbers", "SCATTERS", "gather_p", "scatter_p", "scatter_add_p",
    "scatter_sub_p", "scatter_mul_p", "scatter_min_p", "scatter_max_p", "top_k_p",
    "approx_top_k_p",
    "shift_left_p", "shift_right_arithmetic_p", "shift_right_logical_p", "population_count_p",
    "clz_p", "stop_gradient_p", "erf_p", "erfc_p", "erf_inv_p", "lgamma_p", "digamma_p",
    "polygamma_p", "zeta_p", "bessel_i0e_p", "bessel_i1e_p", "ConvDimensionNumbers",
    "igamma_p", "igammac_p", "igamma_grad_a_p", "regularized_incomplete_beta_p",
    "conv_general_dilated_p",
    "cumlogsumexp_p", "reduce_p", "square_p", "split_p", "stack_p", "unstack_p",
    "tile_p", "reduce_window_sum_p", "reduce_window_max_p",
    "reduce_window_min_p", "reduce_window_p", "select_and_scatter_add_p",
    "select_and_gather_add_p",
    "bitcast_convert_type_p", "reduce_precision_p", "mulhi_p", "optimization_barrier_p",
    "RandomAlgorithm", "rng_bit_generator_p", "rng_uniform_p", "KEY_FRY", "PRNGImpl",
    "random_bits_p", "random_clone_p", "random_fold_in_p", "random_seed_p", "random_split_p",
    "random_unwrap_p", "random_wrap_p", "threefry2x32_p",
    "cholesky_p", "triangular_solve_p",
    "LinearSolveTuple", "custom_linear_solve_p", "empty_p",
    "platform_index_p", "FftType", "fft_p",
    "DotAlgorithm", "DotAlgorithmPreset", "composite_p",
    "all_gather_p", "all_to_all_p", "axis_index_p", "pbroadcast_p", "pvary_p", "pmax_p", "pmin_p",
    "ppermute_p", "psum_p", "reduce_scatter_p", "shard_map_p", "sharding_constraint_p",
    "reshard_p", "create_token_p", "after_all_p",
]

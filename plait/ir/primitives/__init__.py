"""The primitives of plait's IR, with their typing rules.

Each ``*_p`` object is a :class:`~plait.ir.Primitive`; all are registered by
name in :data:`plait.ir.PRIMITIVES`.
"""

from plait.ir.primitives.elementwise import (RoundingMethod, abs_p, acos_p, acosh_p, add_any_p,
                                             add_p, and_p,
                                             asin_p, asinh_p, atan2_p, atan_p, atanh_p, cbrt_p,
                                             ceil_p, clamp_p, complex_p, conj_p,
                                             convert_element_type_p, copy_p,
                                             cos_p, cosh_p, div_p, eq_p, exp2_p, exp_p, expm1_p,
                                             floor_p, ge_p, gt_p, imag_p, integer_pow_p,
                                             is_finite_p, real_p,
                                             le_p, log1p_p, log_p, logistic_p, lt_p, max_p, min_p,
                                             mul_p, ne_p, neg_p, nextafter_p, not_p, or_p, pow_p,
                                             rem_p, round_p, rsqrt_p, select_n_p, sign_p, sin_p,
                                             sinh_p, sqrt_p, sub_p, tan_p, tanh_p, xor_p)
from plait.ir.primitives.calls import jit_p
from plait.ir.primitives.control_flow import cond_p, scan_p, while_p
from plait.ir.primitives.custom import (POLICIES, RematPolicy, custom_jvp_call_p, custom_lin_p,
                                       custom_vjp_call_p, remat_p)
from plait.ir.primitives.linalg import dot_general_p
from plait.ir.primitives.reductions import (argmax_p, argmin_p, cummax_p, cummin_p, cumprod_p,
                                            cumsum_p, reduce_and_p, reduce_max_p, reduce_min_p,
                                            reduce_or_p, reduce_prod_p, reduce_sum_p,
                                            reduce_xor_p)
from plait.ir.primitives.sorting import sort_p
from plait.ir.primitives.structural import (broadcast_in_dim_p, concatenate_p,
                                            dynamic_slice_p, dynamic_update_slice_p, iota_p,
                                            pad_p, reshape_p, rev_p, slice_p, squeeze_p,
                                            transpose_p)

__all__ = [
    "RoundingMethod", "abs_p", "acos_p", "acosh_p", "add_any_p", "add_p", "and_p", "asin_p", "asinh_p",
    "atan2_p", "atan_p", "atanh_p", "cbrt_p", "ceil_p", "clamp_p", "convert_element_type_p",
    "copy_p", "cos_p", "cosh_p", "div_p", "eq_p", "exp2_p", "exp_p", "expm1_p", "floor_p",
    "ge_p", "gt_p", "integer_pow_p", "is_finite_p", "le_p", "log1p_p", "log_p", "logistic_p",
    "lt_p", "max_p", "min_p", "mul_p", "ne_p", "neg_p", "nextafter_p", "not_p", "or_p",
    "pow_p", "rem_p", "round_p", "rsqrt_p", "select_n_p", "sign_p", "sin_p", "sinh_p",
    "sqrt_p", "sub_p", "tan_p", "tanh_p", "xor_p", "dot_general_p", "argmax_p", "argmin_p",
    "cummax_p", "cummin_p", "cumprod_p", "cumsum_p", "reduce_and_p", "reduce_max_p",
    "reduce_min_p", "reduce_or_p", "reduce_prod_p", "reduce_sum_p", "reduce_xor_p", "sort_p",
    "complex_p", "conj_p", "imag_p", "real_p", "broadcast_in_dim_p", "concatenate_p", "dynamic_slice_p", "dynamic_update_slice_p",
    "iota_p", "pad_p", "reshape_p", "rev_p", "slice_p", "squeeze_p", "transpose_p", "jit_p",
    "cond_p", "scan_p", "while_p", "POLICIES", "RematPolicy", "custom_jvp_call_p", "custom_lin_p",
    "custom_vjp_call_p", "remat_p",
]

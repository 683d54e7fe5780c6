"""Test configuration: every jaxpr a transformation produces is type-checked."""

from __future__ import annotations

import gc
import os
import sys
from collections import defaultdict
from collections.abc import Iterator

# Eight CPU devices for the multi-device tests (set before any runtime starts, plait's
# or JAX's); every other test runs on the first.
_DEVICES = "--xla_force_host_platform_device_count=8"
if _DEVICES not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_DEVICES}".strip()

import hypothesis  # noqa: E402
import pytest  # noqa: E402

import plait  # noqa: E402
from plait.ir import PRIMITIVES  # noqa: E402

plait.config.update("check_jaxprs", True)

# (40 examples by default keep CI within its time; the slow profile runs 600.)
hypothesis.settings.register_profile("default", deadline=None, max_examples=40)
hypothesis.settings.register_profile("slow", deadline=None, max_examples=600)
hypothesis.settings.load_profile(os.environ.get("PLAIT_HYPOTHESIS_PROFILE", "default"))


def _memory_maps() -> int:
    """How many memory mappings the process has (Linux); a large number elsewhere."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 1 << 30


@pytest.fixture(autouse=True, scope="module")
def _release_executables() -> Iterator[None]:
    """Free the compiled programs when a module ends, once there are many.

    Every XLA:CPU executable holds a few dozen memory mappings; a full run keeps
    thousands alive in plait's and JAX's caches, passes Linux's
    ``vm.max_map_count`` (65530) and XLA's compiler dies with SIGSEGV when its
    next ``mmap`` fails.  (Clearing after every module would recompile the
    programs many modules share.)
    """
    yield
    if _memory_maps() < 20000:
        return
    plait.clear_caches()
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()
    gc.collect()


@pytest.fixture(autouse=True, scope="module")
def _forget_test_primitives() -> Iterator[None]:
    """Unregister the primitives a test module defined (``plait.extend.core.Primitive``),
    so that the tests that check every primitive has its rules see plait's own only,
    whichever modules ran before them in their worker."""
    before = set(PRIMITIVES)
    yield
    for name in [n for n in PRIMITIVES if n not in before]:
        del PRIMITIVES[name]


# Parametrized tests with many slow cases (figures from ``--junitxml`` of a full run): the
# default run keeps this many cases of each, spread evenly over its parameter list (so
# every dtype, shape and flag family appears); ``-m slow`` runs every case.
REPRESENTATIVE: dict[str, int] = {
    "tests/frontend/test_transfer_guard.py::test_guard_matches_jax": 25,
    "tests/frontend/test_random_config.py::test_jit_and_vmap_match_jax": 3,
    "tests/transforms/test_jet_rules.py::test_jet_rule_matches_jax_curve_derivatives": 8,
    "tests/frontend/test_sparse_indexing.py::test_indexing_matches_jax": 7,
    "tests/frontend/test_rnn.py::test_lstm_matches_jaxs_reference_bit_for_bit": 2,
    "tests/frontend/test_sparse_indexing.py::test_rev_matches_jax": 2,
    "tests/frontend/test_sparse_indexing.py::test_dynamic_slice_matches_jax": 2,
    "tests/frontend/test_sparse_indexing.py::test_conv_matches_jax": 2,
    "tests/frontend/test_scipy_stats_more.py::test_truncnorm_equals_jax_bit_for_bit": 2,
    "tests/transforms/test_rules.py::test_vmap_matches_stacked_examples": 60,
    "tests/frontend/test_eager_programs.py::test_numpy_eager_rounds_as_jax": 9,
    "tests/frontend/test_eager_programs.py::test_special_eager_rounds_as_jax": 2,
    "tests/transforms/test_rules.py::test_jvp_matches_jax_and_finite_differences": 13,
    "tests/frontend/test_random_distributions.py::test_eager_matches_jax": 2,
    "tests/frontend/test_lax_linalg_factorizations.py::test_svd_jvp_and_grad": 2,
    "tests/frontend/test_scipy_expm.py::test_jvp_and_grad_match_jax": 2,
    "tests/frontend/test_take_put.py::test_matches_jax": 3,
    "tests/frontend/test_quantiles.py::test_quantile_matches_jax": 3,
    "tests/frontend/test_random_distributions.py::test_vmap_over_keys_matches_jax": 2,
    "tests/frontend/test_special.py::test_incomplete_gamma_family_matches_jax": 2,
    "tests/transforms/test_ad_corpus.py::test_values": 3,
    "tests/frontend/test_scipy_stats.py::test_values_on_edge_values": 3,
    "tests/frontend/test_random.py::test_eager_matches_jax": 4,
    "tests/frontend/test_numpy_extras.py::test_calculus_and_spacing_match_jax": 6,
    "tests/frontend/test_scipy_stats.py::test_loc_and_scale_broadcast": 2,
    "tests/frontend/test_initializers.py::test_eager_matches_jax": 5,
    "tests/frontend/test_lax_linalg_factorizations.py::test_lu_jvp": 3,
    "tests/frontend/test_nn.py::test_activation_values_eager_and_jit": 9,
    "tests/frontend/test_concrete_autodiff.py::test_value_dependent_python_matches_jax": 2,
    "tests/frontend/test_interp_histograms.py::test_matches_jax": 2,
    "tests/frontend/test_gather_scatter.py::test_getitem_matches_jax": 3,
    "tests/frontend/test_nn.py::test_attention_values_and_grads": 3,
    "tests/frontend/test_initializers.py::test_jit_and_vmap_over_keys_match_jax": 2,
    "tests/frontend/test_windowed.py::test_reduce_window_matches_jax": 2,
    "tests/frontend/test_random_distributions.py::test_derivatives_of_gamma_family_match_jax": 2,
    "tests/frontend/test_lax_linalg_factorizations.py::test_svd_values": 4,
    "tests/frontend/test_initializers.py::test_out_sharding_lays_out_the_same_values_as_jax": 3,
    "tests/frontend/test_optimizers.py::test_float64_steps_match_jax": 2,
    "tests/frontend/test_windowed.py::test_reduce_with_a_computation_matches_jax": 2,
    "tests/transforms/test_ad_corpus.py::test_jacfwd_and_jacrev": 6,
    "tests/frontend/test_convolution.py::test_matches_jax": 2,
    "tests/frontend/test_random_distributions.py::test_traced_parameters_match_jax": 3,
    "tests/transforms/test_ad_corpus.py::test_compositions": 6,
    "tests/frontend/test_setops.py::test_edge_cases_match_jax": 3,
    "tests/frontend/test_scipy_expm.py::test_values_match_jax_and_scipy": 2,
    "tests/frontend/test_conversions.py::test_rng_bit_generator_equals_jax_bit_for_bit": 6,
    "tests/frontend/test_reduction_where.py::test_reductions_with_where_match_jax": 7,
    "tests/frontend/test_random_distributions.py::test_jit_matches_jax": 2,
    "tests/frontend/test_lax_linalg.py::test_triangular_solve_jvp_and_grad": 2,
    "tests/frontend/test_linalg_empty.py::test_square": 2,
    "tests/frontend/test_numpy_extras.py::test_gradients_match_jax": 3,
    "tests/transforms/test_ad_corpus.py::test_vmap": 6,
    "tests/transforms/test_ad_corpus.py::test_api_matches_jax": 3,
    "tests/frontend/test_lax_linalg.py::test_triangular_solve_every_flag": 2,
    "tests/frontend/test_numpy_extras.py::test_nan_functions_match_jax": 9,
    "tests/frontend/test_lax_linalg_factorizations.py::test_qr_jvp": 2,
    "tests/frontend/test_random_distributions.py::test_64_bit_dtypes_match_jax": 2,
    "tests/frontend/test_gather_scatter.py::test_at_matches_jax": 3,
    "tests/frontend/test_windowed.py::test_cumlogsumexp_matches_jax": 2,
    "tests/frontend/test_linalg_empty.py::test_rectangular": 3,
    "tests/frontend/test_x64.py::test_explicit_64_bit_dtypes_warn_as_jax": 13,
    "tests/frontend/test_qr_pivoting.py::test_values": 5,
    "tests/frontend/test_scipy_special.py::test_unary_values_dtypes_and_weak_types": 3,
    "tests/frontend/test_custom_derivatives.py::test_matches_jax": 6,
    "tests/frontend/test_control_flow.py::test_matches_jax": 4,
    "tests/frontend/test_nn.py::test_softmax_values_and_grads": 2,
    "tests/frontend/test_lax_linalg_factorizations.py::test_eigh_jvp_and_grad": 2,
    "tests/frontend/test_signal.py::test_conv_matches_jax": 3,
    "tests/transforms/test_ad_corpus.py::test_grad_and_jvp_match_finite_differences": 6,
    "tests/frontend/test_convolution.py::test_conv_general_dilated_local_matches_jax": 2,
    "tests/frontend/test_searching.py::test_isin_matches_jax": 3,
    "tests/frontend/test_qr_pivoting.py::test_jvp_matches_jax": 2,
    "tests/frontend/test_numpy.py::test_composite_functions": 7,
    "tests/frontend/test_quantiles.py::test_median_matches_jax": 4,
    "tests/frontend/test_lax_linalg.py::test_cholesky_values": 2,
    "tests/frontend/test_nn.py::test_activation_grad_matches_at_and_off_the_kinks": 3,
    "tests/frontend/test_random.py::test_vmap_over_keys_matches_jax": 2,
    "tests/frontend/test_numpy_extras.py::test_polynomials_match_jax": 8,
    "tests/frontend/test_signal.py::test_conv_grad_and_vmap": 2,
    "tests/frontend/test_counting.py::test_histogram_matches_jax": 2,
    "tests/frontend/test_polydiv.py::test_polydiv_matches_jax": 3,
    "tests/frontend/test_scipy_stats.py::test_gradients_match_jax": 4,
    "tests/frontend/test_take_put.py::test_gradients_match_jax": 2,
    "tests/frontend/test_setops.py::test_array_api_unique_functions_match_jax": 3,
    "tests/frontend/test_nn.py::test_softmax_dtypes_jit_and_vmap": 2,
    "tests/frontend/test_lax_linalg_factorizations.py::test_eigh_values": 2,
    "tests/frontend/test_linalg_schur.py::test_scipy_hessenberg_reconstructs": 3,
    "tests/frontend/test_linalg_eig.py::test_eig_jvp_of_eigenvectors_when_enabled": 2,
    "tests/transforms/test_ad_corpus.py::test_grad": 6,
    "tests/frontend/test_associative_scan.py::test_jaxpr_and_dtypes_match_jax": 2,
    "tests/frontend/test_lax_linalg_factorizations.py::test_qr_values": 8,
    "tests/frontend/test_nn.py::test_standardize": 3,
    "tests/frontend/test_numpy.py::test_binary": 4,
    "tests/frontend/test_reduction_where.py::test_grad_and_vmap_with_where": 2,
    "tests/frontend/test_convolution.py::test_conv_transpose_matches_jax": 2,
    "tests/frontend/test_fft.py::test_gradients_match_jax": 3,
    "tests/frontend/test_functional.py::test_frompyfunc_matches_jax": 5,
    "tests/frontend/test_scipy_special.py::test_integers_and_bools_become_float32": 4,
    "tests/frontend/test_lax_linalg_factorizations.py::test_lu_values": 4,
    "tests/test_typing.py::test_fixture_reports_exactly_the_expected_messages": 2,
    "tests/frontend/test_control_flow.py::test_map_batch_size_matches_jax": 2,
    "tests/frontend/test_linalg_schur.py::test_tridiagonal_values": 6,
    "tests/frontend/test_numpy.py::test_unary": 7,
    "tests/frontend/test_packing.py::test_packbits_matches_jax": 4,
    "tests/frontend/test_linalg_eig.py::test_eig_jvp_of_eigenvalues": 2,
    "tests/frontend/test_lax_helpers.py::test_precision_is_carried_as_jax_carries_it": 3,
    "tests/frontend/test_convolution.py::test_conv_general_dilated_patches_matches_jax": 2,
    "tests/frontend/test_scipy_special.py::test_vmap_grad_matches_jax": 5,
    "tests/frontend/test_index_tricks.py::test_constructors_match_jax": 4,
    "tests/frontend/test_nn.py::test_activation_jvp": 6,
    "tests/frontend/test_numpy.py::test_choose_matches_jax": 2,
    "tests/frontend/test_nn.py::test_logmeanexp": 2,
    "tests/frontend/test_random.py::test_jit_matches_jax": 3,
    "tests/frontend/test_signal.py::test_windows_match_jax": 2,
    "tests/frontend/test_lax_linalg.py::test_cholesky_jvp": 2,
    "tests/frontend/test_numpy.py::test_reductions": 4,
    "tests/frontend/test_nn.py::test_activation_on_integers": 5,
    "tests/frontend/test_qr_pivoting.py::test_jvp_matches_finite_differences": 2,
    "tests/frontend/test_functional.py::test_piecewise_matches_jax": 2,
    "tests/frontend/test_reduction_where.py::test_array_methods_take_where_like_jax": 3,
    "tests/lowering/test_module_text.py::"
    "test_each_primitive_lowers_to_the_text_jax_lowers_it_to": 40,
    "tests/frontend/test_dot_algorithm.py::test_cpu_presets_match_jax": 4,
    "tests/transforms/test_rules.py::test_vjp_matches_jax": 25,
    "tests/frontend/test_narrow_dtypes.py::test_arithmetic_matches_jax_eagerly_and_under_jit": 3,
    "tests/frontend/test_narrow_dtypes.py::test_conversions_match_jax": 3,
    "tests/frontend/test_numpy_names.py::test_method_matches_jax": 4,
    "tests/frontend/test_scipy_stats_more.py::test_values_on_edge_values_under_jit": 3,
    "tests/frontend/test_scipy_stats_more.py::test_integer_and_scalar_arguments": 2,
    "tests/frontend/test_scipy_spatial_cluster.py::test_conversions_match_jax": 3,
    "tests/frontend/test_scipy_spatial_cluster.py::test_constructors_match_jax": 4,
    "tests/frontend/test_scipy_spatial_cluster.py::test_slerp_matches_jax": 2,
    "tests/frontend/test_scipy_spatial_cluster.py::test_euler_angles_match_jax_and_round_trip": 2,
    "tests/frontend/test_scipy_spatial_cluster.py::test_bad_input_raises_like_jax": 5,
    "tests/frontend/test_scipy_sparse_linalg.py::test_solution_matches_jax": 2,
    "tests/frontend/test_scipy_sparse_linalg.py::test_grad_matches_jax": 2,
    "tests/frontend/test_scipy_stats_more.py::test_dirichlet_values": 1,
    "tests/frontend/test_scipy_stats_more.py::test_multinomial_values": 1,
    "tests/frontend/test_scipy_stats_more.py::test_values_on_edge_values_eagerly": 1,
    "tests/frontend/test_segments.py::test_segments_match_jax": 3,
    "tests/frontend/test_segments.py::test_segments_under_jit_vmap_and_grad_match_jax": 2,
    "tests/transforms/test_ad_corpus.py::test_hessian": 3,
    "tests/ir/test_reference.py::test_reference_matches_jax": 6,
    "tests/lowering/test_primitives.py::test_compiled_matches_jax_and_reference": 4,
    "tests/lowering/test_primitives.py::test_eager_equals_compiled_bit_for_bit": 7,
    "tests/frontend/test_explicit_sharding.py::test_result_types_values_and_refusals_match_jax": 20,
    "tests/frontend/test_optimizers.py::test_steps_match_jax": 4,
    "tests/frontend/test_stax.py::test_layer_matches_jax": 2,
    "tests/frontend/test_checkify.py::test_the_same_errors_as_jax": 5,
    "tests/frontend/test_multi_device.py::test_shard_map_matches_jax": 3,
    "tests/frontend/test_multi_device.py::test_shard_map_gradients_match_jax": 3,
    "tests/frontend/test_export.py::test_jax_artifact_runs_in_plait": 3,
    "tests/frontend/test_numpy_names.py::test_function_matches_jax": 6,
    "tests/frontend/test_scipy_ndimage.py::test_matches_jax": 2,
    "tests/frontend/test_scipy_special_more.py::test_unary_values_and_dtypes": 3,
    "tests/frontend/test_numpy_linalg.py::test_solve_inv_det_match_jax": 1,
    "tests/frontend/test_numpy_linalg.py::test_decompositions_match_jax": 1,
    "tests/frontend/test_qr_pivoting.py::test_grad": 1,
    "tests/frontend/test_scipy_expm.py::test_batched_and_vmapped": 1,
    "tests/frontend/test_scipy_linalg_more.py::test_static_constructors": 1,
    # (halved at stop 43 to keep CI within its 20 minutes; -m slow runs every case)
    "tests/frontend/test_key_reuse.py::test_reuse_found_as_jax_finds_it": 19,
    "tests/frontend/test_jet.py::test_matches_jax_jet_in_float64": 9,
    "tests/frontend/test_stax.py::test_combinator_matches_jax": 5,
    "tests/frontend/test_scipy_linalg_more.py::test_polar": 2,
    "tests/frontend/test_scipy_linalg_more.py::test_convolution_matrix": 3,
    "tests/frontend/test_scipy_linalg_more.py::test_array_builders": 4,
    "tests/frontend/test_explicit_sharding.py::"
    "test_random_out_sharding_reshards_the_same_values_as_jax": 3,
    "tests/frontend/test_image.py::test_scale_and_translate_matches_jax": 3,
    "tests/frontend/test_ad_checkpoint.py::"
    "test_each_policy_saves_what_jax_saves_and_gives_jax_gradient": 6,
    "tests/frontend/test_image.py::test_resize_matches_jax": 4,
    "tests/frontend/test_rnn.py::test_packed_weights_match_jax": 2,
    "tests/frontend/test_random_distributions.py::test_raw_keys_match_jax": 2,
    "tests/frontend/test_sparse_bcsr.py::test_transformations_match_jax": 3,
    "tests/frontend/test_scipy_special_more.py::test_vmap_grad_matches_jax": 3,
    "tests/frontend/test_scipy_special_more.py::test_integers_become_float32": 2,
    "tests/frontend/test_sparse_indexing.py::test_empty_and_eye_in_every_format_match_jax": 3,
    "tests/frontend/test_image.py::test_dtypes": 4,
    "tests/frontend/test_flatten_util.py::test_ravel_and_unravel_match_jax": 7,
    "tests/frontend/test_sparse_bcoo.py::test_structure_matches_jax": 4,
    "tests/transforms/test_residuals.py::test_saves_no_more_than_jax": 4,
    "tests/frontend/test_stax.py::test_pooling_matches_jax": 8,
    "tests/frontend/test_nn.py::test_gelu": 3,
    "tests/frontend/test_sparse_coo_csr.py::test_derivatives_match_jax": 4,
    "tests/frontend/test_scipy_integrate_interpolate.py::"
    "test_interpolator_2d_matches_jax_and_scipy": 3,
    "tests/frontend/test_export.py::test_plait_artifact_runs_in_jax": 6,
    "tests/frontend/test_multi_device.py::test_vmap_of_shard_map_matches_jax": 2,
    "tests/frontend/test_sparse_bcsr.py::test_dot_general_matches_jax": 3,
    "tests/frontend/test_sparse_products.py::test_matmul_matches_jax": 2,
    "tests/frontend/test_eager_dispatch.py::test_binary_repeated_calls_match_jax": 11,
    "tests/frontend/test_multi_device.py::test_gradients_through_collectives_match_jax": 6,
    "tests/frontend/test_narrow_dtypes.py::test_scalar_types_and_arrays_print_as_in_jax": 7,
    "tests/frontend/test_sparse_products.py::test_sparsify_matches_jax": 5,
    "tests/frontend/test_scipy_stats_more.py::test_gradients_match_jax": 3,
    "tests/frontend/test_multi_device.py::"
    "test_out_specs_claiming_replication_are_checked_as_jax": 5,
    "tests/frontend/test_eager_programs.py::"
    "test_statistics_of_integers_take_jax_float_dtype_under_x64": 3,
    "tests/frontend/test_multi_device.py::"
    "test_collective_under_pmap_prints_and_computes_as_jax": 10,
    "tests/frontend/test_api_names.py::test_accuracy_lowers_as_jax": 24,
    "tests/frontend/test_jet.py::test_control_flow_matches_jax_jet_of_the_unrolled_program": 2,
    "tests/frontend/test_narrow_dtypes.py::test_every_bit_pattern_crosses_the_device": 7,
    "tests/frontend/test_numpy.py::test_under_jit": 14,
    "tests/frontend/test_packing.py::test_unpackbits_matches_jax": 6,
    "tests/frontend/test_sparse_bcoo.py::test_constructors_match_jax": 2,
    "tests/frontend/test_sparse_coo_csr.py::test_products_match_jax": 2,
    "tests/frontend/test_lax_linalg_factorizations.py::test_lowered_modules_match_jax": 6,
    "tests/frontend/test_scipy_spatial_cluster.py::test_euler_at_gimbal_lock_matches_jax": 2,
    "tests/frontend/test_windowed.py::test_integer_bool_and_half_operands": 3,
    "tests/frontend/test_numpy.py::test_out_of_bounds_static_indices_are_clamped_as_in_jax": 7,
    "tests/frontend/test_linalg_eig.py::test_tridiagonal_solve_values": 6,
    "tests/frontend/test_numpy.py::test_products": 3,
    "tests/frontend/test_scipy_sparse_linalg.py::test_truncated_iterations_match_jax": 2,
    "tests/frontend/test_promotion.py::test_python_ints_wrap_into_narrow_dtypes": 3,
    "tests/frontend/test_random_config.py::test_64_bit_bits_match_jax": 3,
    "tests/frontend/test_linalg_schur.py::test_schur_values": 6,
    "tests/frontend/test_contexts.py::test_control_flow_under_disable_jit_matches_jax": 5,
    "tests/frontend/test_nn.py::test_activation_dtypes_and_weak_types_of_scalars": 12,
    "tests/frontend/test_platform_dependent.py::test_matches_jax": 3,
}


def _spread(n: int, keep: int) -> set[int]:
    """``keep`` of the indices ``0..n-1``, evenly spaced, the first and last included."""
    if keep >= n:
        return set(range(n))
    if keep == 1:
        return {0}
    return {round(i * (n - 1) / (keep - 1)) for i in range(keep)}


HYPOTHESIS_SHARE = 8
"""The default run (``-m 'not slow'``) draws an eighth of each property test's examples (at
least 5): a representative share, each test still drawing fresh ones; any other ``-m``
(``-m ''``: everything) draws them all."""


def _fewer_examples(items: list[pytest.Item]) -> None:
    for item in items:
        fn = getattr(item, "obj", None)
        current = getattr(fn, "_hypothesis_internal_use_settings", None)
        if current is not None and not getattr(fn, "_plait_share", False):
            fewer = max(5, current.max_examples // HYPOTHESIS_SHARE)
            fn._hypothesis_internal_use_settings = hypothesis.settings(  # type: ignore[union-attr]  # (a hypothesis test)
                current, max_examples=min(fewer, current.max_examples))
            fn._plait_share = True  # type: ignore[union-attr]  # (once per function)


@pytest.hookimpl(tryfirst=True)  # before the ``-m`` deselection reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark all but the representative cases of the :data:`REPRESENTATIVE` tests slow;
    in the default run, property tests draw a share of their examples."""
    if "not slow" in (config.getoption("markexpr") or ""):
        _fewer_examples(items)
    groups: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        base = item.nodeid.split("[", 1)[0]
        if base in REPRESENTATIVE and item.get_closest_marker("slow") is None:
            groups[base].append(item)
    for base, group in groups.items():
        kept = _spread(len(group), REPRESENTATIVE[base])
        for i, item in enumerate(group):
            if i not in kept:
                item.add_marker(pytest.mark.slow)

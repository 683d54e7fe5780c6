"""plait.nn.initializers against jax.nn.initializers 0.10.2: equal bit for bit for the same
key (eagerly, under jit, under vmap over split keys, with raw keys), the default dtypes,
and JAX's errors for shapes an initializer cannot fill."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.nn.initializers as ji
import jax.random as jr
import ml_dtypes
import numpy as np
import pytest

import plait
import plait.nn.initializers as pi
import plait.random as pr

jax.config.update("jax_platforms", "cpu")

BF16 = np.dtype(ml_dtypes.bfloat16)


def assert_same(ours: Any, theirs: Any) -> None:
    """Equal dtypes, shapes and bits."""
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


# Each case: (make(initializers_module) -> init, shape, dtype).
CASES: dict[str, tuple[Callable[[Any], Any], tuple[int, ...], Any]] = {
    "zeros": (lambda m: m.zeros, (3, 4), None),
    "zeros_bf16": (lambda m: m.zeros, (2,), BF16),
    "ones_int": (lambda m: m.ones, (3,), np.int32),
    "constant": (lambda m: m.constant(0.5), (2, 3), None),
    "constant_dtype": (lambda m: m.constant(-3, np.float16), (2,), None),
    "uniform": (lambda m: m.uniform(), (4, 5), None),
    "uniform_scale_f16": (lambda m: m.uniform(0.3), (4, 5), np.float16),
    "normal": (lambda m: m.normal(), (4, 5), None),
    "normal_c64": (lambda m: m.normal(1.0), (3,), np.complex64),
    "normal_bf16": (lambda m: m.normal(2.0, BF16), (6,), None),
    "truncated_normal": (lambda m: m.truncated_normal(0.3, lower=-1.0, upper=3.0), (4, 5),
                         None),
    "glorot_uniform": (lambda m: m.glorot_uniform(), (4, 5), None),
    "glorot_normal_conv": (lambda m: m.glorot_normal(), (3, 3, 4, 5), None),
    "xavier_uniform": (lambda m: m.xavier_uniform(), (7, 2), None),
    "xavier_normal": (lambda m: m.xavier_normal(), (3, 3, 4, 5), None),
    "he_uniform": (lambda m: m.he_uniform(), (4, 5), None),
    "he_normal": (lambda m: m.he_normal(), (4, 5), np.float16),
    "kaiming_uniform": (lambda m: m.kaiming_uniform(), (4, 5), None),
    "kaiming_normal": (lambda m: m.kaiming_normal(), (4, 5), None),
    "lecun_uniform": (lambda m: m.lecun_uniform(), (4, 5), None),
    "lecun_normal": (lambda m: m.lecun_normal(), (4, 5), None),
    "lecun_normal_1d": (lambda m: m.lecun_normal(in_axis=0, out_axis=()), (6,), None),
    "vs_fan_out_normal": (lambda m: m.variance_scaling(1.0, "fan_out", "normal"), (4, 5),
                          None),
    "vs_fan_geo_avg_axes": (lambda m: m.variance_scaling(0.5, "fan_geo_avg", "normal",
                                                         in_axis=0, out_axis=(1, 2)),
                            (3, 4, 5), None),
    "vs_batch_axis": (lambda m: m.variance_scaling(1.0, "fan_out", "uniform", batch_axis=0),
                      (2, 4, 5), None),
    "vs_complex_uniform": (lambda m: m.variance_scaling(1.0, "fan_in", "uniform"), (4, 5),
                           np.complex64),
    "vs_complex_truncated": (lambda m: m.variance_scaling(1.0, "fan_in", "truncated_normal"),
                             (4, 5), np.complex64),
    "vs_dtype_default": (lambda m: m.variance_scaling(2.0, "fan_avg", "uniform",
                                                      dtype=np.float16), (3, 3), None),
    "orthogonal": (lambda m: m.orthogonal(), (4, 6), None),
    "orthogonal_tall": (lambda m: m.orthogonal(0.5), (6, 4), None),
    "orthogonal_column_axis": (lambda m: m.orthogonal(2.0, column_axis=0), (3, 2, 5), None),
    "orthogonal_empty": (lambda m: m.orthogonal(), (0, 5), None),
    "delta_orthogonal_3d": (lambda m: m.delta_orthogonal(), (3, 4, 4), None),
    "delta_orthogonal_4d": (lambda m: m.delta_orthogonal(1.5), (3, 3, 2, 4), None),
    "delta_orthogonal_5d": (lambda m: m.delta_orthogonal(), (3, 3, 3, 2, 2), None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_matches_jax(name: str) -> None:
    make, shape, dtype = CASES[name]
    assert_same(make(pi)(pr.key(2), shape, dtype), make(ji)(jr.key(2), shape, dtype))


@pytest.mark.parametrize("name", ["uniform", "glorot_normal_conv", "he_uniform",
                                  "vs_complex_truncated", "orthogonal", "delta_orthogonal_4d"])
def test_jit_and_vmap_over_keys_match_jax(name: str) -> None:
    make, shape, dtype = CASES[name]
    assert_same(plait.jit(lambda k: make(pi)(k, shape, dtype))(pr.key(9)),
                jax.jit(lambda k: make(ji)(k, shape, dtype))(jr.key(9)))
    theirs = jax.vmap(lambda k: make(ji)(k, shape, dtype))
    if name == "vs_complex_truncated":
        # plait.vmap compiles the whole function, where XLA folds the constant
        # exp(-4 + 0j) at compile time (1 ulp off the run-time exp that JAX's eager
        # vmap calls): the oracle is then JAX's vmap compiled whole too.
        theirs = jax.jit(theirs)
    assert_same(plait.vmap(lambda k: make(pi)(k, shape, dtype))(pr.split(pr.key(4), 3)),
                theirs(jr.split(jr.key(4), 3)))


def test_raw_keys_match_jax() -> None:
    assert_same(pi.glorot_uniform()(pr.PRNGKey(1), (3, 4)),
                ji.glorot_uniform()(jr.PRNGKey(1), (3, 4)))


def test_initializers_are_initializers() -> None:
    for init in (pi.zeros, pi.ones, pi.constant(1.0), pi.he_normal(), pi.orthogonal()):
        assert isinstance(init, pi.Initializer)


def test_the_variance_is_the_scaled_fan() -> None:
    # Not against JAX: he_normal draws with variance 2 / fan_in.
    w = np.asarray(pi.he_normal()(pr.key(0), (400, 300)))
    assert abs(w.var() * 400 / 2 - 1) < 0.02


ERRORS: dict[str, tuple[type[BaseException], Callable[[Any], Any], tuple[int, ...]]] = {
    "fans_of_1d": (ValueError, lambda m: m.glorot_uniform(), (5,)),
    "bad_mode": (ValueError, lambda m: m.variance_scaling(1.0, "fan_max", "normal"), (2, 2)),
    "bad_distribution": (ValueError, lambda m: m.variance_scaling(1.0, "fan_in", "cauchy"),
                         (2, 2)),
    "orthogonal_1d": (ValueError, lambda m: m.orthogonal(), (4,)),
    "delta_orthogonal_2d": (ValueError, lambda m: m.delta_orthogonal(), (4, 4)),
    "delta_orthogonal_fan": (ValueError, lambda m: m.delta_orthogonal(), (3, 5, 4)),
    "uniform_int_dtype": (ValueError, lambda m: lambda k, s: m.uniform()(k, s, np.int32),
                          (2,)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name: str) -> None:
    exc, make, shape = ERRORS[name]
    with pytest.raises(exc):
        make(ji)(jr.key(0), shape)
    with pytest.raises(exc):
        make(pi)(pr.key(0), shape)


@pytest.mark.skipif(len(plait.devices()) < 8, reason="needs 8 CPU devices (XLA_FLAGS="
                    "--xla_force_host_platform_device_count=8)")
@pytest.mark.parametrize("name", ["zeros", "constant", "normal", "lecun_normal",
                                  "glorot_normal_conv", "vs_batch_axis"])
def test_out_sharding_lays_out_the_same_values_as_jax(name: str) -> None:
    # flax's sharding guide draws parameters sharded (out_sharding=P(...), explicit axes).
    make, shape, dtype = CASES[name]
    spec = tuple("data" if d == 0 and n % 2 == 0 else None for d, n in enumerate(shape))
    out = []
    for lib, m, r in ((plait, pi, pr), (jax, ji, jr)):
        types = (lib.sharding.AxisType.Explicit,) * 2
        init, p = make(m), lib.P(*spec)
        with lib.set_mesh(lib.make_mesh((2, 1), ("data", "model"), types)):
            w = init(r.key(3), shape, dtype, out_sharding=p)
            v = lib.jit(lambda k, init=init, p=p: init(k, shape, dtype, p))(r.key(3))
            out.append((str(lib.typeof(w)), str(lib.typeof(v)), w, v))
    assert out[0][:2] == out[1][:2]
    assert_same(out[0][2], out[1][2])
    assert_same(out[0][3], out[1][3])

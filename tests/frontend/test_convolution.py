"""lax.conv_general_dilated and its wrappers against jax.lax 0.10.2: values eagerly and
under jit, gradients in both operands, vmap over either or both, printed jaxprs, and
bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest
from jax import lax as jlax

import plait
import plait.lax as plax

RNG = np.random.default_rng(3)

CASES: dict[str, tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = {
    "nhwc_same_strided": ((2, 8, 8, 3), (3, 3, 3, 4), dict(
        window_strides=(2, 2), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "1d_dilated_negative_pad": ((2, 3, 9), (4, 3, 2), dict(
        window_strides=(1,), padding=((1, -1),), lhs_dilation=(2,), rhs_dilation=(3,))),
    "feature_groups": ((2, 6, 7, 5), (4, 3, 2, 2), dict(
        window_strides=(1, 2), padding=((1, 1), (0, 2)), feature_group_count=2)),
    "batch_groups": ((4, 3, 7), (6, 3, 2), dict(window_strides=(1,), padding="VALID",
                                                batch_group_count=2)),
    "same_lower_rhs_dilation": ((1, 5, 5, 2), (2, 2, 2, 4), dict(
        window_strides=(1, 1), padding="SAME_LOWER", rhs_dilation=(2, 1),
        dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "depthwise": ((2, 4, 6), (4, 1, 3), dict(window_strides=(2,), padding="SAME",
                                             feature_group_count=4)),
    "3d": ((1, 2, 4, 4, 4), (3, 2, 2, 2, 2), dict(window_strides=(1, 2, 1), padding="SAME")),
}


def _fn(L: Any, kw: dict[str, Any]) -> Callable[[Any, Any], Any]:
    return lambda x, w: L.conv_general_dilated(x, w, **kw)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name: str) -> None:
    xs, ws, kw = CASES[name]
    x = RNG.normal(size=xs).astype(np.float32)
    w = RNG.normal(size=ws).astype(np.float32)
    want = np.asarray(_fn(jlax, kw)(x, w))
    np.testing.assert_allclose(np.asarray(_fn(plax, kw)(x, w)), want, atol=1e-4)
    np.testing.assert_allclose(np.asarray(plait.jit(_fn(plax, kw))(x, w)), want, atol=1e-4)

    def loss(L: Any) -> Callable[[Any, Any], Any]:
        return lambda a, b: (L.conv_general_dilated(a, b, **kw) ** 2).sum()
    for ours, theirs in zip(plait.grad(loss(plax), (0, 1))(x, w),
                            jax.grad(loss(jlax), (0, 1))(x, w)):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-3)
    xb = RNG.normal(size=(3, *xs)).astype(np.float32)
    wb = RNG.normal(size=(3, *ws)).astype(np.float32)
    for axes in ((0, 0), (0, None), (None, 0)):
        a, b = (xb if axes[0] == 0 else x), (wb if axes[1] == 0 else w)
        np.testing.assert_allclose(np.asarray(plait.vmap(_fn(plax, kw), axes)(a, b)),
                                   np.asarray(jax.vmap(_fn(jlax, kw), axes)(a, b)), atol=1e-4)


def test_jaxpr_and_wrappers_match_jax() -> None:
    xs, ws, kw = CASES["nhwc_same_strided"]
    x, w = np.ones(xs, np.float32), np.ones(ws, np.float32)
    assert str(plait.make_jaxpr(_fn(plax, kw))(x, w)) == str(jax.make_jaxpr(_fn(jlax, kw))(x, w))
    a = jax.numpy.asarray(RNG.normal(size=(2, 3, 6, 6)).astype(np.float32))
    k = jax.numpy.asarray(RNG.normal(size=(4, 3, 3, 3)).astype(np.float32))
    np.testing.assert_allclose(np.asarray(plax.conv(a, k, (1, 2), "SAME")),
                               np.asarray(jlax.conv(a, k, (1, 2), "SAME")), atol=1e-4)
    np.testing.assert_allclose(
        np.asarray(plax.conv_with_general_padding(a, k, (1, 1), ((1, 0), (2, 1)), (1, 2), None)),
        np.asarray(jlax.conv_with_general_padding(a, k, (1, 1), ((1, 0), (2, 1)), (1, 2), None)),
        atol=1e-4)
    assert tuple(plax.conv_dimension_numbers(a.shape, k.shape, ("NHWC", "OIHW", "NCHW"))) == \
        tuple(jlax.conv_dimension_numbers(a.shape, k.shape, ("NHWC", "OIHW", "NCHW")))
    assert plax.padtype_to_pads((7, 8), (3, 2), (2, 3), "SAME") == \
        list(jlax.padtype_to_pads((7, 8), (3, 2), (2, 3), "SAME"))


def test_bad_arguments_are_clear_errors() -> None:
    x, w = np.ones((1, 4, 5), np.float32), np.ones((2, 3, 2), np.float32)
    with pytest.raises(plait.errors.JaxprTypeError,
                       match=r"expected lhs features \(4\) = rhs input features \(3\)"):
        plax.conv_general_dilated(x, w, (1,), "VALID")
    with pytest.raises(TypeError, match="must contain the characters 'N' and 'C' exactly once"):
        plax.conv_general_dilated(x, w, (1,), "VALID", dimension_numbers=("NWH", "OIW", "NCW"))
    with pytest.raises(RuntimeError, match="Unrecognized padding type"):
        plax.conv_general_dilated(x, np.ones((2, 4, 2), np.float32), (1,), "FULL")
    with pytest.raises(ValueError, match="String padding is not implemented for transposed"):
        plax.conv_general_dilated(x, np.ones((2, 4, 2), np.float32), (1,), "SAME",
                                  lhs_dilation=(2,))


TRANSPOSES: dict[str, tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = {
    "same_strided": ((2, 5, 6, 3), (3, 3, 3, 4), dict(strides=(2, 2), padding="SAME")),
    "valid": ((2, 5, 6, 3), (3, 2, 3, 4), dict(strides=(2, 1), padding="VALID")),
    "explicit": ((1, 4, 4, 2), (3, 3, 2, 2), dict(strides=(2, 2), padding=((1, 0), (2, 1)))),
    "transpose_kernel_dilated": ((2, 5, 6, 3), (3, 3, 4, 3), dict(
        strides=(1, 2), padding="SAME", transpose_kernel=True, rhs_dilation=(2, 1))),
    "consistent_padding": ((2, 5, 6, 3), (3, 3, 3, 4), dict(
        strides=(3, 2), padding=((1, 1), (0, 2)), use_consistent_padding=True)),
    "1d_nchw": ((2, 3, 7), (4, 3, 3), dict(strides=(2,), padding="SAME",
                                           dimension_numbers=("NCH", "OIH", "NCH"))),
}


@pytest.mark.parametrize("name", sorted(TRANSPOSES))
def test_conv_transpose_matches_jax(name: str) -> None:
    xs, ws, kw = TRANSPOSES[name]
    x = RNG.normal(size=xs).astype(np.float32)
    w = RNG.normal(size=ws).astype(np.float32)
    f = lambda L: (lambda a, b: L.conv_transpose(a, b, **kw))  # noqa: E731
    want = np.asarray(f(jlax)(x, w))
    np.testing.assert_allclose(np.asarray(f(plax)(x, w)), want, atol=1e-4)
    np.testing.assert_allclose(np.asarray(plait.jit(f(plax))(x, w)), want, atol=1e-4)
    assert str(plait.make_jaxpr(f(plax))(x, w)) == str(jax.make_jaxpr(f(jlax))(x, w))
    loss = lambda L: (lambda a, b: (f(L)(a, b) ** 2).sum())  # noqa: E731
    for ours, theirs in zip(plait.grad(loss(plax), (0, 1))(x, w),
                            jax.grad(loss(jlax), (0, 1))(x, w)):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-3)
    xb = np.stack([x, -x])
    np.testing.assert_allclose(np.asarray(plait.vmap(f(plax), (0, None))(xb, w)),
                               np.asarray(jax.vmap(f(jlax), (0, None))(xb, w)), atol=1e-4)


@pytest.mark.parametrize("kw", [
    dict(filter_shape=(2, 3), window_strides=(1, 2), padding="SAME"),
    dict(filter_shape=(3, 2), window_strides=(2, 1), padding="VALID",
         dimension_numbers=("NHWC", "OIHW", "NCHW")),
    dict(filter_shape=(2, 2), window_strides=(1, 1), padding=((1, 0), (0, 1)),
         lhs_dilation=(2, 1), rhs_dilation=(1, 2), dimension_numbers=("NHWC", "HWIO", "NHWC")),
], ids=["nchw_same", "nhwc_to_nchw", "dilated"])
def test_conv_general_dilated_patches_matches_jax(kw: dict[str, Any]) -> None:
    x = RNG.normal(size=(2, 5, 6, 3)).astype(np.float32)
    x = x if "dimension_numbers" in kw else x.transpose(0, 3, 1, 2)
    f = lambda L: (lambda a: L.conv_general_dilated_patches(a, **kw))  # noqa: E731
    np.testing.assert_allclose(np.asarray(f(plax)(x)), np.asarray(f(jlax)(x)), atol=1e-6)
    assert str(plait.make_jaxpr(f(plax))(x)) == str(jax.make_jaxpr(f(jlax))(x))
    g = plait.grad(lambda a: (f(plax)(a) ** 2).sum())(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(
        lambda a: (f(jlax)(a) ** 2).sum())(x)), rtol=1e-5)


def test_conv_transpose_bad_arguments() -> None:
    with pytest.raises(TypeError, match="expected operands of equal rank"):
        plax.conv_transpose(np.ones((1, 4, 4, 2)), np.ones((3, 2, 2)), (1, 1), "SAME")
    with pytest.raises(ValueError, match="Invalid padding mode: FULL"):
        plax.conv_transpose(np.ones((1, 4, 4, 2)), np.ones((3, 3, 2, 2)), (1, 1), "FULL",
                            use_consistent_padding=True)


LOCAL: dict[str, tuple[tuple[int, ...], dict[str, Any], Any]] = {
    "nchw_same": ((2, 3, 6, 5), dict(window_strides=(1, 1), padding="SAME",
                                     filter_shape=(3, 2)), None),
    "nhwc_oihw_strided": ((2, 6, 5, 3), dict(window_strides=(2, 1), padding="VALID",
                                             filter_shape=(2, 2),
                                             dimension_numbers=("NHWC", "OIHW", "NHWC")), None),
    "to_nchw_highest": ((1, 7, 4, 2), dict(window_strides=(1, 2), padding=((1, 0), (0, 1)),
                                           filter_shape=(3, 1),
                                           dimension_numbers=("NHWC", "HWIO", "NCHW")),
                        "highest"),
}


@pytest.mark.parametrize("name", sorted(LOCAL))
def test_conv_general_dilated_local_matches_jax(name: str) -> None:
    xs, kw, precision = LOCAL[name]
    x = RNG.normal(size=xs).astype(np.float32)
    dn = jlax.conv_dimension_numbers(xs, (1, 1, *kw["filter_shape"]),
                                     kw.get("dimension_numbers"))
    patches = jlax.conv_general_dilated_patches(x, kw["filter_shape"], kw["window_strides"],
                                                kw["padding"],
                                                dimension_numbers=kw.get("dimension_numbers"))
    kernel = [0] * 4
    kernel[dn.rhs_spec[0]] = 4
    kernel[dn.rhs_spec[1]] = xs[dn.lhs_spec[1]] * int(np.prod(kw["filter_shape"]))
    for i, d in enumerate(dn.rhs_spec[2:]):
        kernel[d] = patches.shape[dn.out_spec[2 + i]]
    w = RNG.normal(size=kernel).astype(np.float32)

    def fn(L: Any) -> Callable[[Any, Any], Any]:
        return lambda a, b: L.conv_general_dilated_local(a, b, precision=precision, **kw)
    np.testing.assert_allclose(np.asarray(fn(plax)(x, w)), np.asarray(fn(jlax)(x, w)),
                               rtol=1e-5, atol=1e-5)
    assert str(plait.make_jaxpr(fn(plax))(x, w)) == str(jax.make_jaxpr(fn(jlax))(x, w))
    loss = lambda L: (lambda a, b: (fn(L)(a, b) ** 2).sum())  # noqa: E731
    for ours, theirs in zip(plait.grad(loss(plax), (0, 1))(x, w),
                            jax.grad(loss(jlax), (0, 1))(x, w)):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-4)
    xb = np.stack([x, -x])
    np.testing.assert_allclose(np.asarray(plait.vmap(fn(plax), (0, None))(xb, w)),
                               np.asarray(jax.vmap(fn(jlax), (0, None))(xb, w)), atol=1e-5)

"""``lax.DotAlgorithm`` and ``lax.DotAlgorithmPreset`` as the ``precision`` of
contractions, against JAX 0.10.2: the printed jaxprs, the lowered StableHLO (the
``algorithm`` attribute, the conversions around it), the values, the errors of the
algorithms XLA:CPU cannot carry out, and the derivatives and batching."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import plait
from plait.ir import parse_jaxpr
from tests.frontend.jax_oracle import JAX, PLAIT, Lib, assert_close

jax.config.update("jax_platforms", "cpu")

_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal((2, 3)).astype(np.float32)
_B = _RNG.standard_normal((3, 4)).astype(np.float32)

# The presets XLA:CPU carries out (JAX checks them when lowering for CPU).
CPU_PRESETS = ["DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64", "BF16_BF16_F32",
               "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"]
OTHER_PRESETS = ["ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
                 "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F32", "BF16_BF16_BF16",
                 "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3"]


def _preset(L: Lib, name: str) -> Any:
    return getattr(L.lax.DotAlgorithmPreset, name)


def _both(make: Callable[[Lib], Callable[..., Any]], *args: Any) -> None:
    """Same printed jaxpr, same lowered module, same values; the jaxpr reads back."""
    fj, fp = make(JAX), make(PLAIT)
    jj, jp = jax.make_jaxpr(fj)(*args), plait.make_jaxpr(fp)(*args)
    assert str(jp) == str(jj)
    assert parse_jaxpr(str(jp.jaxpr)) == jp.jaxpr
    assert str(parse_jaxpr(str(jp.jaxpr))) == str(jp.jaxpr)
    assert plait.jit(fp).lower(*args).as_text() == jax.jit(fj).lower(*args).as_text()
    assert_close(plait.jit(fp)(*args), jax.jit(fj)(*args), rtol=1e-2, atol=1e-2)
    assert_close(fp(*args), fj(*args), rtol=1e-2, atol=1e-2)


def test_members_and_printed_names() -> None:
    assert [m.name for m in plait.lax.DotAlgorithmPreset] == [
        m.name for m in jax.lax.DotAlgorithmPreset]
    assert plait.lax.DotAlgorithm._fields == jax.lax.DotAlgorithm._fields
    assert plait.lax.DotAlgorithm(np.float32, np.float32, np.float32) == (
        np.float32, np.float32, np.float32, 1, 1, 1, False)
    for m in plait.lax.DotAlgorithmPreset:
        j = _preset(JAX, m.name)
        assert (str(m), repr(m)) == (str(j), repr(j))
        assert m.supported_lhs_types == j.supported_lhs_types
        assert m.supported_rhs_types == j.supported_rhs_types
        assert m.accumulation_type == j.accumulation_type
        for d in (np.float16, np.float32, ml_dtypes.bfloat16):
            mine, theirs = m.supported_output_types(d, d), j.supported_output_types(d, d)
            assert (mine is None) == (theirs is None)
            if mine is not None:
                assert [np.dtype(t) for t in mine] == [np.dtype(t) for t in theirs]


@pytest.mark.parametrize("name", CPU_PRESETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_cpu_presets_match_jax(name: str, dtype: Any) -> None:
    a, b = _A.astype(dtype), _B.astype(dtype)
    _both(lambda L: lambda x, y: L.lax.dot(x, y, precision=_preset(L, name)), a, b)


def test_preset_given_by_name_and_with_preferred_element_type() -> None:
    a, b = _A.astype(np.float16), _B.astype(np.float16)
    _both(lambda L: lambda x, y: L.lax.dot_general(
        x, y, (((1,), (0,)), ((), ())), precision="F32_F32_F32",
        preferred_element_type=np.float32), a, b)
    _both(lambda L: lambda x, y: L.lax.dot_general(
        x, y, (((1,), (0,)), ((), ())), precision="BF16_BF16_F32"), _A, _B)


@pytest.mark.parametrize("fn", [
    lambda L, p: lambda x, y: L.np.dot(x, y, precision=p),
    lambda L, p: lambda x, y: L.np.matmul(x, y, precision=p),
    lambda L, p: lambda x, y: L.np.einsum("ij,jk->ik", x, y, precision=p),
    lambda L, p: lambda x, y: L.np.tensordot(x, y, 1, precision=p),
    lambda L, p: lambda x, y: L.np.inner(x, y.T, precision=p),
], ids=["dot", "matmul", "einsum", "tensordot", "inner"])
def test_numpy_contractions_take_algorithms(fn: Any) -> None:
    _both(lambda L: fn(L, _preset(L, "BF16_BF16_F32_X3")), _A, _B)
    _both(lambda L: fn(L, "F32_F32_F32"), _A, _B)


def _jax_error(f: Callable[[], Any]) -> str:
    with pytest.raises(ValueError) as info:
        f()
    return str(info.value)


@pytest.mark.parametrize("name", OTHER_PRESETS)
def test_presets_cpu_cannot_carry_out_fail_as_in_jax(name: str) -> None:
    fj = lambda x, y: jax.lax.dot(x, y, precision=_preset(JAX, name))  # noqa: E731
    fp = lambda x, y: plait.lax.dot(x, y, precision=_preset(PLAIT, name))  # noqa: E731
    # Traced and printed alike; refused when lowered, and so when run.
    assert str(plait.make_jaxpr(fp)(_A, _B)) == str(jax.make_jaxpr(fj)(_A, _B))
    want = _jax_error(lambda: jax.jit(fj).lower(_A, _B))
    with pytest.raises(ValueError, match="not supported by dot_general on CPU") as info:
        plait.jit(fp).lower(_A, _B)
    assert str(info.value).startswith(want)
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        plait.jit(fp)(_A, _B)
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        fp(_A, _B)


def test_custom_dot_algorithm_prints_as_in_jax_and_fails_on_cpu() -> None:
    def make(L: Lib) -> Callable[..., Any]:
        alg = L.lax.DotAlgorithm(np.float32, np.float32, np.float32, 1, 1, 1, False)
        return lambda x, y: L.lax.dot(x, y, precision=alg)
    jj = jax.make_jaxpr(make(JAX))(_A, _B)
    jp = plait.make_jaxpr(make(PLAIT))(_A, _B)
    assert str(jp) == str(jj)
    assert parse_jaxpr(str(jp.jaxpr)) == jp.jaxpr
    assert str(parse_jaxpr(str(jj.jaxpr))) == str(jj.jaxpr)  # JAX's text reads back
    want = _jax_error(lambda: jax.jit(make(JAX)).lower(_A, _B))
    with pytest.raises(ValueError) as info:
        plait.jit(make(PLAIT)).lower(_A, _B)
    assert str(info.value).startswith(want)


def test_jax_values_are_accepted() -> None:
    # JAX's own enum and named tuple, as plait takes JAX's Precision.
    f = lambda p: plait.make_jaxpr(  # noqa: E731
        lambda x, y: plait.lax.dot(x, y, precision=p))(_A, _B)
    assert str(f(jax.lax.DotAlgorithmPreset.F32_F32_F32)) == str(f("F32_F32_F32"))
    assert str(f(jax.lax.DotAlgorithm(np.float16, np.float16, np.float32))) == str(
        f(plait.lax.DotAlgorithm(np.float16, np.float16, np.float32)))


@pytest.mark.parametrize("bad", ["HIGHEST_X", ("highest", 1), ("HIGHEST", "highest"), 3])
def test_invalid_precisions_fail_with_jax_message(bad: Any) -> None:
    want = _jax_error(lambda: jax.lax.dot(_A, _B, precision=bad))
    with pytest.raises(ValueError) as info:
        plait.lax.dot(_A, _B, precision=bad)
    assert str(info.value) == want


def test_names_are_case_sensitive_as_in_jax() -> None:
    # "DEFAULT" names the preset; "default" the Precision.
    for p in ("DEFAULT", "default", "highest"):
        fj = lambda x, y, p=p: jax.lax.dot(x, y, precision=p)  # noqa: E731
        fp = lambda x, y, p=p: plait.lax.dot(x, y, precision=p)  # noqa: E731
        assert str(plait.make_jaxpr(fp)(_A, _B)) == str(jax.make_jaxpr(fj)(_A, _B))


def test_precision_pairs_print_as_before() -> None:
    p = (plait.lax.Precision.HIGHEST, plait.lax.Precision.DEFAULT)
    jp = plait.make_jaxpr(lambda x, y: plait.lax.dot(x, y, precision=p))(_A, _B)
    jj = jax.make_jaxpr(lambda x, y: jax.lax.dot(
        x, y, precision=(jax.lax.Precision.HIGHEST, jax.lax.Precision.DEFAULT)))(_A, _B)
    assert str(jp) == str(jj)


@pytest.mark.parametrize("transform", ["vmap", "jvp"])
def test_transforms_keep_the_algorithm(transform: str) -> None:
    def make(L: Lib) -> Callable[..., Any]:
        def f(x: Any, y: Any) -> Any:
            return L.lax.dot(x, y, precision=_preset(L, "BF16_BF16_F32_X3"))
        if transform == "vmap":
            return L.vmap(f, in_axes=(0, None))
        return lambda x, y: L.jvp(f, (x, y), (2 * x, 3 * y))
    args = (np.stack([_A, _A + 1]), _B) if transform == "vmap" else (_A, _B)
    _both(make, *args)


def test_grad_keeps_the_algorithm() -> None:
    # (JAX's jaxpr keeps the unused primal product, plait's does not: compare the
    # contractions and the values.)
    def make(L: Lib) -> Callable[..., Any]:
        return L.grad(lambda x, y: L.lax.dot(
            x, y, precision=_preset(L, "BF16_BF16_F32_X3")).sum(), argnums=(0, 1))
    fj, fp = make(JAX), make(PLAIT)
    tp = plait.jit(fp).lower(_A, _B).as_text()
    tj = jax.jit(fj).lower(_A, _B).as_text()
    dots = [line.split("algorithm = ")[1] for line in tp.splitlines() if "dot_general" in line]
    assert dots == [line.split("algorithm = ")[1] for line in tj.splitlines()
                    if "dot_general" in line] and len(dots) == 2
    assert_close(plait.jit(fp)(_A, _B), jax.jit(fj)(_A, _B), rtol=1e-2, atol=1e-2)

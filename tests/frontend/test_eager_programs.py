"""Composite functions called eagerly round as JAX's: JAX runs them as one compiled
program, in which XLA multiplies by a constant's reciprocal and fuses multiply-adds,
so plait does the same (``plait/frontend/api/eager_programs.py``).

The oracle is JAX 0.10.2 called eagerly on the same inputs; results must be equal bit
for bit, in float32 and float64.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jjnp
import jax.scipy.special as jspecial
import numpy as np
import pytest

import plait
import plait.numpy as pjnp
import plait.scipy.special as pspecial
from tests.frontend.jax_oracle import both_x64

Case = Callable[[Any, dict[str, np.ndarray]], Any]

# Each case takes a namespace (jax.numpy or plait.numpy) and the inputs.  Sizes of 100
# and 7 make the divisors' reciprocals inexact, where rounding differs.
NUMPY_CASES: dict[str, Case] = {
    "mean": lambda m, a: m.mean(a["x"]),
    "mean_axis": lambda m, a: m.mean(a["x"], axis=1),
    "mean_bool": lambda m, a: m.mean(a["x"] > 0.3),
    "mean_int": lambda m, a: m.mean(a["i"], axis=0),
    "mean_where": lambda m, a: m.mean(a["x"], axis=1, where=a["x"] > -1),
    "mean_keepdims_list_axis": lambda m, a: m.mean(a["x"], axis=[0, 1], keepdims=True),
    "var": lambda m, a: m.var(a["x"], axis=0),
    "var_ddof": lambda m, a: m.var(a["x"], axis=1, ddof=1),
    "var_correction_float": lambda m, a: m.var(a["x"], correction=1.5),
    "var_where": lambda m, a: m.var(a["x"], axis=1, where=a["x"] > -1),
    "var_complex": lambda m, a: m.var(a["x"] + 1j * a["y"], axis=1),
    "var_no_dof": lambda m, a: m.var(a["x"][:1], axis=0, ddof=1),
    "std": lambda m, a: m.std(a["x"], axis=0, ddof=1),
    "average": lambda m, a: m.average(a["x"], axis=1, weights=a["w"]),
    "nanmean": lambda m, a: m.nanmean(a["xn"], axis=0),
    "nanvar": lambda m, a: m.nanvar(a["xn"], axis=0, ddof=1),
    "nanstd": lambda m, a: m.nanstd(a["xn"]),
    "cov": lambda m, a: m.cov(a["x"]),
    "corrcoef": lambda m, a: m.corrcoef(a["x"], a["y"]),
    "hypot": lambda m, a: m.hypot(a["x"], a["y"]),
    "logaddexp": lambda m, a: m.logaddexp(a["x"], a["y"]),
    "logaddexp2": lambda m, a: m.logaddexp2(a["x"], a["y"]),
    "polyval": lambda m, a: m.polyval(a["x"][0, :5], a["y"]),
    "polyfit": lambda m, a: m.polyfit(a["p"][0, :20], a["x"][0, :20], 3),
    "interp": lambda m, a: m.interp(a["y"], np.sort(a["x"][0]), a["w"][0]),
    "interp_extrapolate": lambda m, a: m.interp(a["y"], np.sort(a["x"][0]), a["w"][0],
                                                left="extrapolate", right=2.5),
    "linspace": lambda m, a: m.linspace(0.1, 7.3, 37),
    "linspace_retstep": lambda m, a: m.linspace(a["x"][0, :3], 7.3, 9, retstep=True),
    "logspace": lambda m, a: m.logspace(0.1, 2.3, 37),
    "geomspace": lambda m, a: m.geomspace(0.1, 7.3, 37),
    "gradient": lambda m, a: m.gradient(a["x"], 0.3, axis=1),
    "cross": lambda m, a: m.cross(a["x"][:, :3], a["y"][:, :3]),
    "norm_p": lambda m, a: m.linalg.norm(a["x"], ord=3, axis=1),
    "slogdet": lambda m, a: m.linalg.slogdet(a["x"][:5, :5]),
    "einsum_chain": lambda m, a: m.einsum("ij,kj,k->i", a["x"], a["y"], a["w"][:, 0]),
    "einsum_diagonal_sum": lambda m, a: m.einsum("ij,ij,i->", a["x"], a["y"], a["p"][:, 0]),
}

SPECIAL_CASES: dict[str, Case] = {
    "ndtri": lambda m, a: m.ndtri(a["p"]),
    "expn": lambda m, a: m.expn(2, a["w"]),
    "exp1": lambda m, a: m.exp1(a["w"]),
    "spence": lambda m, a: m.spence(a["w"]),
}


def _inputs(dtype: type, shape: tuple[int, int]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    x: np.ndarray = rng.standard_normal(shape).astype(dtype)
    xn = x.copy()
    xn[1, 3] = xn[-1, -2] = np.nan
    return {"x": x, "y": rng.standard_normal(shape).astype(dtype), "xn": xn,
            "p": rng.uniform(0.05, 0.95, shape).astype(dtype),
            "w": rng.uniform(0.1, 2.0, shape).astype(dtype),
            "i": rng.integers(0, 10, shape).astype(np.int32)}


def _assert_bit_equal(got: Any, want: Any) -> None:
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes(), f"max difference {np.max(np.abs(g - w))}"


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("shape", [(7, 33), (10, 100)])
@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_numpy_eager_rounds_as_jax(name: str, shape: tuple[int, int], x64: bool) -> None:
    case = NUMPY_CASES[name]
    with both_x64() if x64 else _nothing():
        a = _inputs(np.float64 if x64 else np.float32, shape)
        _assert_bit_equal(case(pjnp, a), case(jjnp, a))


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("name", sorted(SPECIAL_CASES))
def test_special_eager_rounds_as_jax(name: str, x64: bool) -> None:
    case = SPECIAL_CASES[name]
    with both_x64() if x64 else _nothing():
        a = _inputs(np.float64 if x64 else np.float32, (10, 100))
        _assert_bit_equal(case(pspecial, a), case(jspecial, a))


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_traced_calls_inline_their_equations() -> None:
    # Inside a trace, the composite leaves plain equations (no nested jit), so the
    # printed jaxprs of programs that call it are unchanged.
    jaxpr = plait.make_jaxpr(lambda x: pjnp.var(pjnp.mean(x, axis=0), ddof=1))(
        np.ones((4, 3), np.float32))
    prims = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert "jit" not in prims
    assert prims.count("reduce_sum") == 3


def test_results_agree_under_jit_grad_and_vmap() -> None:
    x = _inputs(np.float32, (10, 100))["x"]

    def f(lib: Any, v: Any) -> Any:
        return lib.var(v, axis=0, ddof=1).sum() + lib.hypot(v, 1.5).mean()

    for transform in (lambda lib, g: lib.jit(g), lambda lib, g: lib.grad(g),
                      lambda lib, g: lib.vmap(g)):
        got = transform(plait, lambda v: f(pjnp, v))(x)
        want = transform(jax, lambda v: f(jjnp, v))(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=1e-7)


def test_bad_input_keeps_its_error() -> None:
    # A list, or a string where an array belongs, is refused by the function's own
    # checks (not by jit's argument handling), with JAX's exception type.
    with pytest.raises(TypeError, match="mean requires ndarray or scalar arguments"):
        pjnp.mean([1.0, 2.0])
    with pytest.raises(TypeError):
        jjnp.mean([1.0, 2.0])  # type: ignore[arg-type]  # the refused input
    with pytest.raises(ValueError, match="ddof and correction can't be provided"):
        pjnp.var(np.ones(3), ddof=1, correction=1)
    with pytest.raises(ValueError, match="the only valid string value of `left`"):
        pjnp.interp(np.ones(2), np.arange(3.0), np.arange(3.0), left="nearest")


def test_eager_call_reuses_its_program() -> None:
    # A second eager call with the same signature runs the compiled program: it
    # does not trace the function again.
    calls = []
    from plait.frontend.api.eager_programs import compiled_when_eager

    @compiled_when_eager(("axis",))
    def scaled_sum(x: Any, axis: int) -> Any:
        calls.append(axis)
        return pjnp.sum(x, axis=axis) / 3.0

    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    first = scaled_sum(x, 1)
    second = scaled_sum(x + 1, 1)
    np.testing.assert_array_equal(np.asarray(first), np.sum(x, 1) / np.float32(3))
    np.testing.assert_array_equal(np.asarray(second), np.sum(x + 1, 1) / np.float32(3))
    assert calls == [1]
    scaled_sum(x, 0)
    assert calls == [1, 0]
    with pytest.raises(TypeError, match="got list"):
        scaled_sum([[1.0]], 0)  # not an array: runs directly, and its checks refuse it
    assert calls == [1, 0, 0]


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int32, np.int64, np.uint32])
def test_statistics_of_integers_take_jax_float_dtype_under_x64(dtype: type) -> None:
    # JAX 0.10.2 averages bools and integers narrower than 64 bits in float32, even
    # with x64 on (its to_inexact_dtype), and 64-bit integers in float64.
    a: np.ndarray = np.arange(6).astype(dtype)
    with both_x64():
        for name in ("mean", "var", "std", "nanmean", "nanvar", "nanstd", "average"):
            got, want = getattr(pjnp, name)(a), getattr(jjnp, name)(a)
            assert got.dtype == want.dtype, name
            _assert_bit_equal(got, want)
        assert pjnp.mean(True).dtype == jjnp.mean(True).dtype
        assert pjnp.mean(3).dtype == jjnp.mean(3).dtype

"""64-bit mode as JAX 0.10.2 has it: narrowing warnings, promote_types/result_type with
x64 on and off, and strict promotion in every code path.

The oracle is jax 0.10.2: each case runs in both libraries with the same x64 mode and
the warnings both emit are compared word for word.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.errors import TypePromotionError
from tests.frontend.jax_oracle import both_x64


def outcome(f: Callable[[], Any]) -> tuple[str, list[str]]:
    """The result's dtype (or the exception's type) and the warnings' texts."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = f()
            result = str(getattr(r, "dtype", r))
        except Exception as e:  # noqa: BLE001  (compared with JAX's)
            result = type(e).__name__
    return result, [str(w.message) for w in caught]


def deferred(lib: Any, name: str, *args: Any) -> Callable[[], Any]:
    """``lib.<name>(*args)``, called when ``outcome`` calls it."""
    return lambda: getattr(lib, name)(*args)


F64, I64 = np.float64, "int64"


def creation_cases(L: Any) -> dict[str, Callable[[], Any]]:
    """Calls with an explicit 64-bit dtype (and a few that must not warn)."""
    x = L.ones(3, "float32")
    m = L.ones((2, 3), "float32")
    return {
        "zeros": lambda: L.zeros(2, F64), "ones": lambda: L.ones(2, "float64"),
        "full": lambda: L.full(2, 1.0, F64), "full_array": lambda: L.full(2, x[:1], F64),
        "empty": lambda: L.empty(2, F64),
        "array": lambda: L.array([1, 2], F64), "asarray": lambda: L.asarray([1, 2], F64),
        "array_scalar": lambda: L.array(1.0, F64), "asarray_of_array": lambda: L.asarray(x, F64),
        "asarray_numpy_data": lambda: L.asarray(np.ones(2)),
        "array_numpy_data": lambda: L.array(np.arange(3)),
        "arange": lambda: L.arange(3, dtype=I64), "linspace": lambda: L.linspace(0, 1, 3,
                                                                               dtype=F64),
        "logspace": lambda: L.logspace(0, 1, 3, dtype=F64),
        "geomspace": lambda: L.geomspace(1, 2, 3, dtype=F64),
        "eye": lambda: L.eye(2, dtype=F64), "identity": lambda: L.identity(2, F64),
        "astype": lambda: L.astype(x, F64), "method_astype": lambda: x.astype(F64),
        "zeros_like": lambda: L.zeros_like(x, F64), "ones_like": lambda: L.ones_like(x, F64),
        "full_like": lambda: L.full_like(x, 1, F64), "empty_like": lambda: L.empty_like(x, F64),
        "python_float_type": lambda: L.zeros(2, float), "python_int_type": lambda: L.zeros(2, int),
        "scalar_type_float64": lambda: L.float64(1.0), "scalar_type_int64": lambda: L.int64(1),
        "sum": lambda: L.sum(x, dtype=F64), "mean": lambda: L.mean(x, dtype=F64),
        "cumsum": lambda: L.cumsum(x, dtype=F64), "cumprod": lambda: L.cumprod(x, dtype=F64),
        "var": lambda: L.var(x, dtype=F64), "std": lambda: L.std(x, dtype=F64),
        "nanmean": lambda: L.nanmean(x, dtype=F64), "nanvar": lambda: L.nanvar(x, dtype=F64),
        "nanstd": lambda: L.nanstd(x, dtype=F64),
        "cumulative_sum": lambda: L.cumulative_sum(x, dtype=F64),
        "cumulative_prod": lambda: L.cumulative_prod(x, dtype=F64),
        "tri": lambda: L.tri(2, dtype=F64), "trace": lambda: L.trace(m[:, :2], dtype=F64),
        "indices": lambda: L.indices((2,), dtype=I64),
        "dot": lambda: L.dot(x, x, preferred_element_type=F64),
        "matmul": lambda: L.matmul(m, x, preferred_element_type=F64),
        "einsum": lambda: L.einsum("i,i", x, x, preferred_element_type=F64),
        "tensordot": lambda: L.tensordot(x, x, 1, preferred_element_type=F64),
        "stack": lambda: L.stack([x, x], dtype=F64),
        "cov": lambda: L.cov(m, dtype=F64),
        "no_dtype": lambda: L.ones(2) + L.arange(3.0)[:2],
        "result_type_f64": lambda: L.result_type(F64),
        "result_type_numpy_data": lambda: L.result_type(np.ones(2)),
        "promote_types": lambda: L.promote_types(F64, "float32"),
    }


CASES = sorted(creation_cases(pnp))


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("name", CASES)
def test_explicit_64_bit_dtypes_warn_as_jax(name: str, x64: bool) -> None:
    with both_x64(x64):
        theirs = outcome(creation_cases(jnp)[name])
        ours = outcome(creation_cases(pnp)[name])
    # JAX warns twice for sum/prod (again in convert_element_type): the first is the one.
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1][:len(ours[1])] and bool(ours[1]) == bool(theirs[1]), name


def test_warning_text_and_location() -> None:
    with plait.enable_x64(False):
        with pytest.warns(UserWarning) as record:
            pnp.zeros(3, "float64")
    assert str(record[0].message) == (
        "Explicitly requested dtype float64 requested in zeros is not available, and will be "
        "truncated to dtype float32. To enable more dtypes, set the jax_enable_x64 "
        "configuration option or the JAX_ENABLE_X64 shell environment variable. See "
        "https://github.com/jax-ml/jax#current-gotchas for more.")
    assert record[0].filename == __file__  # points at the user's line, not at plait's


DTYPE_SPECS: list[Any] = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128", int, float,
    complex, bool]


@pytest.mark.parametrize("mode", ["standard", "strict"])
@pytest.mark.parametrize("x64", [False, True])
def test_promote_types_and_result_type_match_jax_for_every_pair(x64: bool, mode: str) -> None:
    mismatches: list[tuple[Any, ...]] = []
    with both_x64(x64), jax.numpy_dtype_promotion(mode), plait.numpy_dtype_promotion(mode):
        for a, b in itertools.product(DTYPE_SPECS, DTYPE_SPECS):
            for fn in ("promote_types", "result_type"):
                theirs = outcome(deferred(jnp, fn, a, b))
                ours = outcome(deferred(pnp, fn, a, b))
                if ours != theirs:
                    mismatches.append((fn, a, b, ours, theirs))
        values = [None, 1, 1.0, 1j, True, np.ones(2), np.float64(1), np.int64(2),
                  np.arange(3, dtype=np.uint64)]
        for a in DTYPE_SPECS + values:
            if outcome(deferred(pnp, "result_type", a)) != outcome(deferred(jnp, "result_type", a)):
                mismatches.append(("result_type", a))
    assert mismatches == []


def test_promote_types_does_not_narrow() -> None:
    with both_x64(False):
        assert pnp.promote_types("float64", "float32") == jnp.promote_types("float64",
                                                                           "float32") == F64
        assert pnp.promote_types("uint32", "int32") == np.int32  # the x32 lattice
    with both_x64(True):
        assert pnp.promote_types("uint32", "int32") == np.int64
    assert pnp.result_type(1.0, return_weak_type_flag=True) == (np.dtype(np.float32), True)
    with pytest.raises(ValueError, match="at least one array or dtype"):
        pnp.result_type()


STRICT_PATHS: dict[str, Callable[[Any, Any], Any]] = {
    "eager": lambda a, b: pnp.add(a, b),
    "operator": lambda a, b: a + b,
    "reflected_operator": lambda a, b: np.int32(1) + a,
    "make_jaxpr": lambda a, b: plait.make_jaxpr(lambda u, v: u * v)(a, b),
    "jit": lambda a, b: plait.jit(lambda u, v: u - v)(a, b),
    "jit_lower": lambda a, b: plait.jit(lambda u, v: u - v).lower(a, b),
    "grad": lambda a, b: plait.grad(lambda u: (u * b).sum())(a),
    "vmap": lambda a, b: plait.vmap(lambda u, v: u / v)(a, b),
    "where": lambda a, b: pnp.where(True, a, b),
    "concatenate": lambda a, b: pnp.concatenate([a, b]),
    "matmul": lambda a, b: a @ b,
    "at_add": lambda a, b: a.at[0].add(b[0]),
}


@pytest.mark.parametrize("path", sorted(STRICT_PATHS))
def test_strict_promotion_refuses_float32_with_int32_everywhere(path: str) -> None:
    a, b = pnp.ones(3, pnp.float32), pnp.ones(3, pnp.int32)
    f = plait.jit(lambda u, v: u + v)
    assert f(a, b).dtype == np.float32  # cached under standard promotion ...
    with plait.numpy_dtype_promotion("strict"):
        with pytest.raises(TypePromotionError, match="no available implicit dtype promotion"):
            STRICT_PATHS[path](a, b)
        with pytest.raises(TypePromotionError):
            f(a, b)  # ... and traced again under strict promotion
        assert (a + 1).dtype == np.float32  # a weak int joins a float
    # JAX refuses the same operations.
    ja, jb = jnp.ones(3, jnp.float32), jnp.ones(3, jnp.int32)
    with jax.numpy_dtype_promotion("strict"):
        with pytest.raises(Exception) as info:
            jax.jit(lambda u, v: u + v)(ja, jb)
        assert type(info.value).__name__ == "TypePromotionError"
        with pytest.raises(ValueError, match="no available implicit dtype promotion"):
            ja.at[0].add(jb[0])

"""The ``where``/``initial``/``out`` arguments of the reductions (``reductions.py``,
``statistics.py``) against jax.numpy 0.10.2."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp

COVERED = {"sum", "prod", "mean", "max", "min", "amax", "amin", "all", "any", "var", "std",
           "nansum", "nanprod", "nanmean", "nanmax", "nanmin"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

RNG = np.random.default_rng(11)
F = RNG.normal(size=(2, 3, 4)).astype(np.float32)
INTS = RNG.integers(-4, 5, (2, 3, 4)).astype(np.int32)
B = RNG.random((2, 3, 4)) > 0.5
W = RNG.random((2, 3, 4)) > 0.4
W_ROW = np.array([True, False, True, True])
W_NONE = np.zeros((2, 3, 4), bool)
C = (F + 1j * F[::-1]).astype(np.complex64)
FN = F.copy()
FN[0, 1, 2] = FN[1, 0, 0] = np.nan


def _same(ours: Any, theirs: Any, what: str, rtol: float = 1e-5) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), \
        f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
    assert getattr(ours, "weak_type", False) == getattr(theirs, "weak_type", False), what
    if o.dtype == np.float16:
        o, t = o.astype(np.float32), t.astype(np.float32)
    np.testing.assert_allclose(o, t, rtol=rtol, atol=rtol, err_msg=what)


Case = tuple[str, Any, dict[str, Any]]
CASES: list[Case] = [
    ("sum", F, {"where": W}), ("sum", F, {"axis": 1, "where": W_ROW}),
    ("sum", INTS, {"axis": (0, 2), "where": W, "keepdims": True}),
    ("sum", B, {"axis": -1, "where": W}), ("sum", F.astype(np.float16), {"where": W}),
    ("sum", C, {"axis": 0, "where": W}), ("sum", F, {"where": W, "initial": 2.5}),
    ("sum", INTS.astype(np.int8), {"where": W, "promote_integers": False}),
    ("sum", F, {"axis": 2, "where": W_NONE}),
    ("sum", INTS, {"axis": 1, "dtype": np.float32, "where": W}),
    ("prod", F, {"axis": 1, "where": W}), ("prod", INTS, {"where": W_ROW, "initial": 2}),
    ("prod", B, {"axis": 0, "where": W}), ("prod", B, {"axis": 0, "dtype": bool, "where": W}),
    ("max", F, {"where": W, "initial": -10.0}),
    ("max", INTS, {"axis": (1, 2), "where": W, "initial": -100}),
    ("max", B, {"axis": 2, "where": W, "initial": False}),
    ("max", F, {"axis": 0, "where": W_NONE, "initial": 1.5}),
    ("max", np.zeros((2, 0), np.float32), {"axis": 1, "initial": 3.0}),
    ("max", INTS.astype(np.uint8), {"axis": 0, "where": W, "initial": 7}),
    ("min", F, {"where": W, "initial": 10.0}), ("min", INTS, {"axis": 2, "initial": 0}),
    ("min", F.astype(np.float16), {"axis": -1, "where": W, "initial": 5.0}),
    ("amax", F, {"axis": 2, "where": W, "initial": -1.0}),
    ("all", B, {"where": W}), ("all", F, {"axis": 1, "where": W_ROW}),
    ("all", B, {"axis": 2, "where": W_NONE, "keepdims": True}),
    ("any", B, {"axis": (0, 1), "where": W}), ("any", INTS, {"where": W_NONE}),
    ("mean", F, {"where": W}), ("mean", F, {"axis": 1, "where": W_ROW}),
    ("mean", B, {"where": W}),
    ("mean", F.astype(np.float16), {"axis": 0, "where": W}), ("mean", C, {"where": W}),
    ("mean", F, {"axis": 2, "where": W_NONE}),
    ("mean", INTS, {"axis": 1, "dtype": np.float16, "where": W}),
    ("var", F, {"where": W}), ("var", F, {"axis": 1, "where": W, "ddof": 1}),
    ("var", F, {"axis": 2, "where": W_ROW, "keepdims": True}),
    ("var", INTS, {"axis": 0, "where": W}), ("var", C, {"axis": 1, "where": W}),
    ("var", F.astype(np.float16), {"axis": 2, "where": W}),
    ("var", F, {"axis": 2, "where": W, "correction": 1.5}),
    ("var", F, {"axis": 0, "where": W, "mean": np.float32(0.5)}),
    ("var", F, {"axis": 0, "ddof": 3}),
    ("std", F, {"where": W}), ("std", F, {"axis": 1, "where": W, "ddof": 1}),
    ("std", INTS, {"axis": 2, "where": W_ROW, "dtype": np.float32}),
    ("nansum", FN, {"axis": 1, "where": W}), ("nanprod", FN, {"where": W, "initial": 2.0}),
    ("nanmax", FN, {"axis": 2, "where": W, "initial": -5.0}),
    ("nanmin", FN, {"axis": 0, "where": W, "initial": 5.0}),
    ("nanmean", FN, {"axis": 1, "where": W}), ("nanmean", INTS, {"axis": 2, "where": W})]


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in
                                                      enumerate(CASES)])
def test_reductions_with_where_match_jax(i: int) -> None:
    name, x, kwargs = CASES[i]
    rtol = 2e-3 if np.float16 in (x.dtype, kwargs.get("dtype")) else 1e-5
    theirs = getattr(jnp, name)(x, **kwargs)
    _same(getattr(pnp, name)(x, **kwargs), theirs, f"{name} {kwargs}", rtol)
    if i % 4 == 0:
        mask = kwargs.get("where")
        rest = {k: v for k, v in kwargs.items() if k != "where"}
        ours = plait.jit(lambda a, w: getattr(pnp, name)(a, where=w, **rest))(x, mask)
        _same(ours, theirs, f"{name} {kwargs} jit", rtol)


@pytest.mark.parametrize("name, kwargs", [
    ("sum", {"axis": 1}), ("prod", {}), ("mean", {"axis": (0, 2)}), ("std", {"ddof": 1}),
    ("max", {"axis": 1, "initial": -1.0}), ("nanmean", {"axis": 2})])
def test_grad_and_vmap_with_where(name: str, kwargs: dict[str, Any]) -> None:
    def loss(L: Any) -> Any:
        return lambda a: (getattr(L, name)(a, where=W, **kwargs) ** 2).sum()

    _same(plait.grad(loss(pnp))(F), jax.grad(loss(jnp))(F), f"grad {name}")
    batched = {k: v for k, v in kwargs.items() if k != "axis"}

    def per_row(L: Any) -> Any:
        return lambda a, w: getattr(L, name)(a, where=w, **batched)

    _same(plait.vmap(per_row(pnp))(F[0], W[0]), jax.vmap(per_row(jnp))(F[0], W[0]),
          f"vmap {name}")


def test_errors() -> None:
    bad: list[tuple[str, Any, dict[str, Any], type[Exception], str]] = [
        ("max", F, {"where": W}, ValueError, "reduction operation max does not have an "
                                             "identity, so to use a where mask one has to "
                                             "specify 'initial'"),
        ("min", F, {"axis": 0, "where": W}, ValueError, "reduction operation min does not"),
        ("nanmax", FN, {"where": W}, ValueError, "does not have an identity"),
        ("max", np.zeros((2, 0)), {"axis": 1}, ValueError, "zero-size array to reduction "
                                                           "operation max"),
        ("sum", F, {"where": W.astype(np.float32)}, ValueError,
         r"jnp.sum: where must be None or a boolean array; got where.dtype=dtype\('float32'\)"),
        ("mean", F, {"where": W.astype(np.int32)}, ValueError, "jnp.mean: where must be None"),
        ("var", F, {"where": 1}, ValueError, "jnp.var: where must be None"),
        ("all", F, {"where": [True, False]}, TypeError, "all"),
        ("sum", F, {"out": F}, NotImplementedError, "The 'out' argument to jnp.sum is not "
                                                    "supported."),
        ("max", F, {"out": F}, NotImplementedError, "'out' argument to jnp.max"),
        ("any", F, {"out": F}, NotImplementedError, "'out' argument to jnp.any"),
        ("mean", F, {"out": F}, NotImplementedError, "'out' argument to jnp.mean"),
        ("std", F, {"out": F}, NotImplementedError, "'out' argument to jnp.std"),
        ("var", F, {"ddof": 1, "correction": 1}, ValueError,
         "ddof and correction can't be provided simultaneously."),
        ("std", F, {"dtype": np.int32}, ValueError,
         "dtype argument to jnp.std must be inexact; got int32"),
        ("sum", F, {"initial": np.ones(2)}, ValueError,
         r"initial value must be a scalar. Got array of shape \(2,\)"),
        ("var", C, {"dtype": np.float32}, ValueError, "does not yet support real dtype"),
        ("sum", F, {"where": np.ones((4, 2), bool)}, ValueError, "")]
    for name, x, kwargs, exc, msg in bad:
        with pytest.raises(exc):
            getattr(jnp, name)(x, **kwargs)
        with pytest.raises(exc, match=msg or None):
            getattr(pnp, name)(x, **kwargs)


@pytest.mark.parametrize("name, kwargs", [
    ("sum", {"axis": 1, "where": True, "initial": 1.0}), ("prod", {"where": True}),
    ("mean", {"axis": 0, "where": True}), ("var", {"where": True, "correction": 1}),
    ("std", {"axis": 1, "where": True}), ("max", {"where": True, "initial": -9.0}),
    ("min", {"axis": 0, "where": True, "initial": 9.0}), ("any", {"where": True}),
    ("all", {"axis": 1, "where": True})])
def test_array_methods_take_where_like_jax(name: str, kwargs: dict[str, Any]) -> None:
    # (Against the jnp functions: JAX 0.10.2's x.sum(initial=1.0) ignores initial.)
    x = np.random.default_rng(3).normal(size=(3, 4)).astype(np.float32)
    mask = x > -0.5
    kw = {k: (mask if v is True and k == "where" else v) for k, v in kwargs.items()}
    ours = getattr(pnp.asarray(x), name)(**kw)
    theirs = getattr(jnp, name)(jnp.asarray(x), **kw)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    assert ours.dtype == theirs.dtype

"""packbits and unpackbits (``packing.py``) against jax.numpy 0.10.2."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp

COVERED = {"packbits", "unpackbits"}
"""The functions this file tests (the namespace coverage test of test_numpy.py reads it)."""

RNG = np.random.default_rng(3)
BOOLS = RNG.random((3, 10)) > 0.5
INTS = RNG.integers(-2, 3, (2, 3, 9)).astype(np.int32)
BYTES = RNG.integers(0, 256, (3, 2)).astype(np.uint8)


def _same(ours: Any, theirs: Any, what: str) -> None:
    o, t = np.asarray(ours), np.asarray(theirs)
    assert (o.dtype, o.shape) == (t.dtype, t.shape), \
        f"{what}: {o.dtype}{o.shape} vs {t.dtype}{t.shape}"
    np.testing.assert_array_equal(o, t, err_msg=what)


PACK_CASES: list[tuple[Any, dict[str, Any]]] = [
    (BOOLS, {}), (BOOLS, {"axis": 1}), (BOOLS, {"axis": 0, "bitorder": "little"}),
    (INTS, {"axis": -1}), (INTS, {"axis": 1, "bitorder": "little"}), (INTS, {}),
    (INTS.astype(np.uint16), {"axis": 2}), (INTS.astype(np.int8), {"axis": 0}),
    (np.zeros((2, 0), bool), {"axis": 1}), (np.zeros((0,), np.int32), {}),
    (np.int32(3), {}), (True, {}), (5, {}), (np.ones(8, bool), {"bitorder": "little"})]


@pytest.mark.parametrize("x, kwargs", PACK_CASES, ids=range(len(PACK_CASES)))
def test_packbits_matches_jax(x: Any, kwargs: dict[str, Any]) -> None:
    theirs = jnp.packbits(x, **kwargs)
    _same(pnp.packbits(x, **kwargs), theirs, f"packbits {kwargs}")
    if np.ndim(x) > 1:
        _same(plait.jit(lambda v: pnp.packbits(v, **kwargs))(x), theirs, "jit")


UNPACK_CASES: list[tuple[Any, dict[str, Any]]] = [
    (BYTES, {}), (BYTES, {"axis": 0}), (BYTES, {"axis": 1, "bitorder": "little"}),
    (BYTES, {"axis": -1, "count": 5}), (BYTES, {"axis": 0, "count": 30}),
    (BYTES, {"count": -3}), (BYTES, {"count": -100}), (BYTES, {"axis": 1, "count": 0}),
    (np.uint8(129), {}), (np.zeros((0, 2), np.uint8), {"axis": 0}),
    (np.zeros((0,), np.uint8), {"count": 3})]


@pytest.mark.parametrize("x, kwargs", UNPACK_CASES, ids=range(len(UNPACK_CASES)))
def test_unpackbits_matches_jax(x: Any, kwargs: dict[str, Any]) -> None:
    theirs = jnp.unpackbits(x, **kwargs)
    _same(pnp.unpackbits(x, **kwargs), theirs, f"unpackbits {kwargs}")
    if "count" in kwargs:
        _same(plait.jit(lambda v: pnp.unpackbits(v, **kwargs))(x), theirs, "jit")


def test_round_trip_and_vmap() -> None:
    packed = pnp.packbits(BOOLS, axis=1)
    _same(pnp.unpackbits(packed, axis=1, count=10), BOOLS.astype(np.uint8), "round trip")
    _same(plait.vmap(pnp.packbits)(INTS), jax.vmap(jnp.packbits)(INTS), "vmap packbits")
    _same(plait.vmap(lambda b: pnp.unpackbits(b, bitorder="little"))(BYTES),
          jax.vmap(lambda b: jnp.unpackbits(b, bitorder="little"))(BYTES), "vmap unpackbits")


def test_errors() -> None:
    bad: list[tuple[str, Any, dict[str, Any], type[Exception], str]] = [
        ("packbits", np.ones(3, np.float32), {}, TypeError, "integer or boolean data type"),
        ("packbits", INTS, {"bitorder": "middle"}, ValueError,
         "'order' must be either 'little' or 'big'"),
        ("packbits", INTS, {"axis": 3}, IndexError, "out of bounds"),
        ("packbits", INTS, {"axis": 1.0}, IndexError, "valid indices"),
        ("packbits", [1, 0], {}, TypeError, "packbits"),
        ("unpackbits", INTS.astype(np.int8), {}, TypeError, "unsigned byte data type"),
        ("unpackbits", BYTES, {"bitorder": "x"}, ValueError, "'order' must be"),
        ("unpackbits", BYTES, {"axis": -3}, IndexError, "out of bounds"),
        ("unpackbits", BYTES, {"count": 2.0}, TypeError, "integer"),
        ("unpackbits", np.uint8(3), {"axis": 0}, IndexError, "out of bounds")]
    for name, x, kwargs, exc, msg in bad:
        with pytest.raises(exc):
            getattr(jnp, name)(x, **kwargs)
        with pytest.raises(exc, match=msg):
            getattr(pnp, name)(x, **kwargs)

"""The narrow dtypes of ml_dtypes (the float8s, ``float4_e2m1fn``, ``int4``, ``uint4``,
``int2``, ``uint2``) against JAX 0.10.2: scalar types, arrays and their printing,
conversions, every bit pattern through the device, ``finfo``/``iinfo``/``issubdtype``,
the promotion lattice (these types join nothing but themselves, their weak kind and
bool), arithmetic eager and under ``jit``, the printed jaxpr and its parser, and the
MLIR element types.

JAX's float6 types are not here: XLA's CPU client refuses their buffers ("Invalid XLA
PrimitiveType"), in JAX as in plait.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import plait
import plait.lax as plax
import plait.numpy as pnp
from plait.errors import TypePromotionError
from plait.ir.parser import parse_jaxpr

FLOAT8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
          "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu"]
FLOATS = [*FLOAT8, "float4_e2m1fn"]
INTS = ["int4", "uint4", "int2", "uint2"]
NARROW = FLOATS + INTS
# The dtypes of the promotion table: the narrow ones, every other one, and the weak kinds.
OTHERS = ["bool", "uint8", "uint16", "uint32", "int8", "int16", "int32", "bfloat16", "float16",
          "float32", "complex64"]
WEAK: dict[str, type] = {"i*": int, "f*": float, "c*": complex}


def dtype(name: str) -> np.dtype[Any]:
    return np.dtype(getattr(ml_dtypes, name, None) or name)


def bits(x: Any) -> np.ndarray:
    """The bytes of an array's elements (ml_dtypes stores each narrow element in one)."""
    a = np.ascontiguousarray(np.asarray(x))
    return a.view(np.uint8).reshape(a.shape + (-1,))


def assert_same(p: Any, j: Any) -> None:
    """Same dtype, weak type, shape and bits (NaNs included) as JAX's result."""
    assert p.dtype == j.dtype, (p.dtype, j.dtype)
    assert p.weak_type == j.weak_type
    assert p.shape == j.shape
    np.testing.assert_array_equal(bits(p), bits(j), err_msg=f"{np.asarray(p)} != {np.asarray(j)}")


def outcome(f: Callable[[], Any]) -> Any:
    """A callable's value, or the type of what it raised."""
    try:
        return f()
    except Exception as e:  # noqa: BLE001  (the exception is the outcome compared)
        return type(e)


# Sample values: in range, rounded, out of range (wrapped, saturated or NaN).
SAMPLES: dict[str, list[Any]] = {
    **{n: [0.0, 1.0, -1.5, 0.3, 2.75, 1e3, -1e3, 0.5] for n in FLOATS},
    "int4": [0, 1, -8, 7, 5, -3], "uint4": [0, 1, 15, 9, 4, 2],
    "int2": [0, 1, -2, -1, 1, 0], "uint2": [0, 1, 3, 2, 1, 0],
}


@pytest.mark.parametrize("name", NARROW)
def test_scalar_types_and_arrays_print_as_in_jax(name: str) -> None:
    p, j = getattr(pnp, name), getattr(jnp, name)
    assert np.dtype(p) == np.dtype(j) == dtype(name)
    assert p == dtype(name).type and p.dtype == dtype(name)
    assert repr(p) == f"<class 'plait.numpy.{name}'>"
    assert repr(p(3)) == repr(j(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ml_dtypes warns converting out-of-range values
        xp, xj = pnp.array(SAMPLES[name], dtype=p), jnp.array(SAMPLES[name], dtype=j)
    assert repr(xp) == repr(xj)
    assert str(xp) == str(xj)
    assert repr(pnp.zeros((2, 2), p)) == repr(jnp.zeros((2, 2), j))
    assert_same(xp, xj)
    assert np.asarray(xp).dtype == dtype(name)


@pytest.mark.parametrize("name", NARROW)
def test_every_bit_pattern_crosses_the_device(name: str) -> None:
    # Each element's value bits, from 0 to all ones: NaNs, negative zeros and (for the
    # sub-byte types, which devices may pack) every nibble.
    d = dtype(name)
    v = np.arange(1 << plait.dtypes.itemsize_bits(d), dtype=np.uint8).view(d)
    assert plait.dtypes.itemsize_bits(d) == jax.dtypes.itemsize_bits(d)
    through = plait.jit(lambda x: plax.rev(plax.rev(x, (0,)), (0,)))(pnp.asarray(v))
    const = plait.jit(lambda: pnp.asarray(v))()  # a dense constant in the module
    np.testing.assert_array_equal(bits(through), bits(v))
    np.testing.assert_array_equal(bits(const), bits(v))
    # A splat constant.  (Not a NaN: a scalar becomes a literal, which holds a Python
    # float; a float8 NaN's payload does not survive that, though JAX keeps it.)
    assert_same(plait.jit(lambda: pnp.full((3,), v[3]))(),
                jax.jit(lambda: jnp.full((3,), v[3]))())


@pytest.mark.parametrize("name", NARROW)
def test_conversions_match_jax(name: str) -> None:
    # Floats round to nearest even and saturate or become NaN as XLA converts; integers
    # wrap; floats to integers truncate and saturate.
    src = np.array([0.3, -1.7, 2.5, 1e6, -1e6, np.nan, np.inf, 6.0], np.float32)
    ints = np.array([1, -3, 7, 8, 17, -9], np.int32)
    targets = ("float32", "int32", "bool", "bfloat16", "float8_e5m2", "int4", "uint4")

    def f(lib: Any) -> Callable[[Any, Any], tuple[Any, ...]]:
        def g(x: Any, i: Any) -> tuple[Any, ...]:
            n = x.astype(getattr(lib, name))
            return (n, i.astype(getattr(lib, name)),
                    *(n.astype(getattr(lib, to)) for to in targets))
        return g

    for p, j in zip(plait.jit(f(pnp))(src, ints), jax.jit(f(jnp))(src, ints), strict=True):
        assert_same(p, j)
    # Eagerly (a conversion of concrete data runs on the host) both ways.
    xp, xj = pnp.asarray(src).astype(getattr(pnp, name)), jnp.asarray(src).astype(
        getattr(jnp, name))
    assert_same(xp, xj)
    assert_same(xp.astype(pnp.float32), xj.astype(jnp.float32))


def test_python_ints_wrap_into_the_small_ints_as_in_jax() -> None:
    # JAX wraps Python ints into 2- and 4-bit ints, but refuses them for int8.
    assert_same(pnp.int4(9), jnp.int4(9))
    assert_same(pnp.array([100, -9], pnp.int4), jnp.array([100, -9], jnp.int4))
    assert_same(pnp.zeros(2, pnp.int4) + 20, jnp.zeros(2, jnp.int4) + 20)
    assert_same(pnp.zeros(2, pnp.uint2) - 1, jnp.zeros(2, jnp.uint2) - 1)
    with pytest.raises(OverflowError):
        pnp.array([300], pnp.int8)


@pytest.mark.parametrize("name", NARROW)
def test_finfo_iinfo_issubdtype(name: str) -> None:
    p, j = getattr(pnp, name), getattr(jnp, name)
    if name in FLOATS:
        fp, fj = pnp.finfo(p), jnp.finfo(j)
        for field in ("bits", "eps", "max", "min", "tiny", "smallest_subnormal", "nmant",
                      "nexp"):
            assert getattr(fp, field) == getattr(fj, field), field
        assert plait.dtypes.finfo(p).max == fj.max
        assert outcome(lambda: pnp.iinfo(p)) is outcome(lambda: jnp.iinfo(j)) is ValueError
    else:
        ip, ij = pnp.iinfo(p), jnp.iinfo(j)
        assert (ip.min, ip.max, ip.bits) == (ij.min, ij.max, ij.bits)
        assert plait.dtypes.iinfo(p).max == ij.max
        assert outcome(lambda: pnp.finfo(p)) is outcome(lambda: jnp.finfo(j)) is ValueError
    for cls in ("floating", "inexact", "number", "generic", "integer", "signedinteger",
                "unsignedinteger", "complexfloating", "bool_"):
        assert pnp.issubdtype(p, getattr(np, cls)) == jnp.issubdtype(j, getattr(np, cls)), cls
        assert plait.dtypes.issubdtype(p, getattr(np, cls)) == \
            jax.dtypes.issubdtype(j, getattr(np, cls)), cls
    for other in ("float32", "int8", "bfloat16", *NARROW):
        assert pnp.issubdtype(p, getattr(pnp, other)) == jnp.issubdtype(j, getattr(jnp, other))


def promotion_operands(name: str) -> tuple[Any, Any]:
    """The promote_types operand (a dtype or weak Python type) and a result_type operand
    (an array or Python scalar) of the node ``name``."""
    if name in WEAK:
        return WEAK[name], WEAK[name](1)
    return dtype(name), np.ones((), dtype(name))


def promotion_outcome(f: Callable[..., Any], *args: Any) -> Any:
    try:
        return np.dtype(f(*args))
    except (TypePromotionError, jax.errors.JAXTypeError, ValueError) as e:
        # JAX lists the dtypes from a set, in no fixed order: compare the rest.
        text = re.sub(r"\(.*?\) have", "(...) have", str(e)).replace("jax_numpy", "numpy")
        return type(e).__name__, text


@pytest.fixture
def strict() -> Iterator[None]:
    with plait.numpy_dtype_promotion("strict"), jax.numpy_dtype_promotion("strict"):
        yield


def _check_promotion_table() -> None:
    nodes = NARROW + OTHERS + list(WEAK)
    outcomes: set[str] = set()
    for a, b in itertools.product(nodes, nodes):
        if a not in NARROW and b not in NARROW:
            continue  # test_promotion.py has the rest of the lattice
        (ta, va), (tb, vb) = promotion_operands(a), promotion_operands(b)
        ours = promotion_outcome(pnp.promote_types, ta, tb)
        theirs = promotion_outcome(jnp.promote_types, ta, tb)
        assert ours == theirs, (a, b, ours, theirs)
        ours = promotion_outcome(pnp.result_type, va, vb)
        theirs = promotion_outcome(jnp.result_type, va, vb)
        assert ours == theirs, (a, b, ours, theirs)
        outcomes.add(str(ours))
    # Both kinds of outcome were met: narrow results, and refusals of each narrow kind.
    assert {"float8_e4m3fn", "int4", "uint2", "float4_e2m1fn"} <= outcomes
    assert any("have no available implicit dtype promotion path" in o for o in outcomes)


def test_promotion_table_matches_jax() -> None:
    _check_promotion_table()


def test_strict_promotion_table_matches_jax(strict: None) -> None:
    _check_promotion_table()


def test_promotion_errors_name_the_narrow_kind() -> None:
    with pytest.raises(TypePromotionError, match=r"8-bit floats do not support implicit "
                       r"promotion.*x\.astype\('float32'\)"):
        pnp.ones(2, pnp.float8_e4m3fn) + pnp.ones(2, pnp.float32)
    with pytest.raises(TypePromotionError, match="4-bit floats do not support"):
        pnp.promote_types(pnp.float4_e2m1fn, pnp.bfloat16)
    with pytest.raises(TypePromotionError, match=r"\('int4', \"<class 'float'>\"\) have no "
                       r"available.*4-bit integers do not support.*x\.astype\('int32'\)"):
        pnp.ones(2, pnp.int4) + 1.5
    with pytest.raises(TypePromotionError, match="8-bit floats"):
        plait.jit(lambda x, y: x * y)(pnp.ones(2, pnp.float8_e5m2), pnp.ones(2, pnp.int4))
    # Those of one type, with its weak kind or bool, are fine.
    assert_same(pnp.ones(2, pnp.int4) + True, jnp.ones(2, jnp.int4) + True)
    assert_same(pnp.ones(2, pnp.float8_e5m2) * 3, jnp.ones(2, jnp.float8_e5m2) * 3)


def ops(lib: Any, name: str) -> Callable[[Any], tuple[Any, ...]]:
    """Elementwise arithmetic, comparisons and reductions on one narrow dtype."""
    def f(x: Any) -> tuple[Any, ...]:
        common: tuple[Any, ...] = (x * 2, x - 1, -x if name not in ("uint4", "uint2") else x, x < 1,
                  lib.maximum(x, x[::-1]), x.max(), x.min(), lib.where(x > 0, x, 0))
        if name not in ("int2", "uint2"):
            # XLA's CPU compiler fails on the variadic reduction of argmax over 2-bit
            # ints (a RET_CHECK on layouts), in JAX as in plait.
            common += (lib.argmax(x), lib.argmin(x))
        if name in INTS:
            # (Not x.sum(): JAX 0.10.2 fails there, "Invalid integer data type 'V'".)
            common += (x // 2, x % 3, x & 1, x | 2, x >> 1, x / 2)
            # JAX widens int4 to float32 for sin, but not int2 (see below).
            return (*common, lib.sin(x)) if name in ("int4", "uint4") else common
        return (*common, x / 3, lib.sin(x), lib.exp(x), lib.sqrt(lib.abs(x)), x * 0.3,
                x.sum(), x.mean(), lib.isnan(x))
    return f


@pytest.mark.parametrize("name", NARROW)
def test_arithmetic_matches_jax_eagerly_and_under_jit(name: str) -> None:
    xs = np.array([1, 2, 3, 0, 1, 2] if name in INTS else [0.5, -1.5, 2.0, 3.0, 0.25, 1.0],
                  dtype(name))
    if name in ("uint2", "int2"):
        xs = np.array([1, 0, 1, 1, 0, 1], dtype(name))
    fp, fj = ops(pnp, name), ops(jnp, name)
    for p, j in zip(plait.jit(fp)(xs), jax.jit(fj)(xs), strict=True):
        assert_same(p, j)
    # Eagerly, each operation compiles on its own: a few of them.
    xp, xj = pnp.asarray(xs), jnp.asarray(xs)
    assert_same(xp * 2 + xp, xj * 2 + xj)


@pytest.mark.parametrize("name", ["int2", "uint2"])
def test_two_bit_ints_stay_integers_where_jax_keeps_them(name: str) -> None:
    # JAX 0.10.2 widens bool and the other integers (int4 included) to a float for sin
    # and true division, but not int2 and uint2: sin refuses them, and x / y divides
    # as integers.
    x = np.array([1, 0, 1], dtype(name))
    assert_same(pnp.true_divide(x, x), jnp.true_divide(x, x))
    assert outcome(lambda: jnp.sin(x)) is TypeError
    with pytest.raises(TypeError, match=rf"sin: expected a floating or complex dtype for the "
                       rf"operand, but got {name[0]}2\[3\]"):
        pnp.sin(x)


def test_reductions_over_float8s_without_infinities() -> None:
    # float8_e4m3fn has no infinity (inf converts to NaN): max and min start from its
    # finite extremes, as in JAX.
    for name in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz"):
        xs = np.array([[1.0, -2.0], [3.0, 0.5]], dtype(name))

        def f(lib: Any, lax: Any) -> Callable[[Any], tuple[Any, ...]]:
            return lambda x: (lib.max(x, axis=0), lib.min(x), lib.argmax(x, axis=1),
                              lib.argmin(x), lax.cummax(x, axis=0),
                              lax.reduce_window(x, -np.inf, lax.max, (2, 1), (1, 1), "VALID"))

        for p, j in zip(plait.jit(f(pnp, plax))(xs), jax.jit(f(jnp, jax.lax))(xs), strict=True):
            assert_same(p, j)
    assert_same(pnp.max(pnp.asarray(xs)), jnp.max(jnp.asarray(xs)))  # eagerly too


def test_grad_and_vmap() -> None:
    x = np.array([1.5, 2.0], ml_dtypes.float8_e4m3fn)
    assert_same(plait.grad(lambda v: (pnp.sin(v) * v).sum())(x),
                jax.grad(lambda v: (jnp.sin(v) * v).sum())(x))
    i = np.array([[1, -2], [3, 4]], ml_dtypes.int4)
    assert_same(plait.vmap(lambda v: v * 2 - v[0])(i), jax.vmap(lambda v: v * 2 - v[0])(i))


def test_bitcasts_count_the_bits_of_sub_byte_types() -> None:
    i8 = np.array([1, -1, 0x5A], np.int8)
    for to in ("int4", "uint4", "uint2", "float4_e2m1fn"):
        p = plax.bitcast_convert_type(i8, getattr(pnp, to))
        assert_same(p, jax.lax.bitcast_convert_type(i8, getattr(jnp, to)))
        assert_same(plax.bitcast_convert_type(p, pnp.int8), jnp.asarray(i8))
    f8 = np.array([1.5, -2.0], ml_dtypes.float8_e5m2)
    assert_same(plax.bitcast_convert_type(f8, pnp.uint8),
                jax.lax.bitcast_convert_type(f8, jnp.uint8))


@pytest.mark.parametrize("name", NARROW)
def test_printed_jaxpr_is_jaxs_and_parses_back(name: str) -> None:
    def f(lib: Any) -> Callable[[Any], Any]:
        return lambda x: (x * 2, x.astype(lib.float32), lib.maximum(x, 1), x < 1)

    x = np.ones(3, dtype(name))
    ours = plait.make_jaxpr(f(pnp))(x)
    text = str(ours)
    assert text == str(jax.make_jaxpr(f(jnp))(x))
    short = {"int4": "i4", "uint4": "u4", "int2": "i2", "uint2": "u2"}.get(
        name, name.replace("float", "f"))
    assert f"a:{short}[3]" in text
    parsed = parse_jaxpr(text)
    assert parsed == ours.jaxpr
    assert str(parsed) == str(ours.jaxpr)


ELEMENT = {"float8_e4m3fn": "f8E4M3FN", "float8_e5m2": "f8E5M2",
           "float8_e4m3b11fnuz": "f8E4M3B11FNUZ", "float8_e4m3fnuz": "f8E4M3FNUZ",
           "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e3m4": "f8E3M4", "float8_e4m3": "f8E4M3",
           "float8_e8m0fnu": "f8E8M0FNU", "float4_e2m1fn": "f4E2M1FN", "int4": "i4",
           "uint4": "ui4", "int2": "i2", "uint2": "ui2"}


@pytest.mark.parametrize("name", NARROW)
def test_lowered_types_and_constants_are_jaxs(name: str) -> None:
    x = np.ones(3, dtype(name))
    ours = plait.jit(lambda v: v + 1).lower(x).as_text()
    theirs = jax.jit(lambda v: v + 1).lower(x).as_text()

    def types(text: str) -> set[str]:
        return set(re.findall(r"tensor<[^>]*>", text))

    assert types(ours) == types(theirs) == {f"tensor<{ELEMENT[name]}>",
                                            f"tensor<3x{ELEMENT[name]}>"}
    consts = [ln.strip() for ln in ours.splitlines() if "constant" in ln]
    assert consts == [ln.strip() for ln in theirs.splitlines() if "constant" in ln]


def test_bad_dtypes_are_refused_clearly() -> None:
    with pytest.raises(TypeError, match="expected a dtype, but got 'f8_e4m3fn'"):
        pnp.zeros(2, "f8_e4m3fn")  # the printed short name is no dtype name, as in JAX
    with pytest.raises(ValueError, match="Invalid integer data type"):
        pnp.iinfo(pnp.float8_e4m3fn)

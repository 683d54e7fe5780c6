"""Type promotion (seed 003, "类型提升语义"): plait's lattice against JAX and the seed's table.

The 18 types of the lattice are represented by values: a typed NumPy array
(or a plait/JAX array) for a strong type, a Python scalar for ``i*``, ``f*``
and ``c*``.  With x64 off, ``plait.numpy.result_type`` and the dtype and weak
type of an actual ``add`` must equal JAX's for every pair.  The binary table
printed in the seed describes x64 mode; it is parsed from the seed and checked
against plait with ``enable_x64`` on.  Strict promotion is checked against
``jax.numpy_dtype_promotion('strict')`` for every pair.
"""

from __future__ import annotations

import itertools
import pathlib
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.errors import TypePromotionError
from plait.frontend.core.promotion import result_type_info
from plait.ir import shaped

NAMES = "b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c8 c16 i* f* c*".split()
DTYPES: dict[str, Any] = dict(
    b1=np.bool_, u1=np.uint8, u2=np.uint16, u4=np.uint32, u8=np.uint64, i1=np.int8, i2=np.int16,
    i4=np.int32, i8=np.int64, bf=ml_dtypes.bfloat16, f2=np.float16, f4=np.float32, f8=np.float64,
    c8=np.complex64, c16=np.complex128)
WEAK_VALUES: dict[str, Any] = {"i*": 1, "f*": 1.0, "c*": 1j}
PAIRS = list(itertools.product(NAMES, NAMES))

SEED = next(pathlib.Path(__file__).resolve().parents[3].glob("shared/seeds/003_*.txt"), None)
if SEED is None:  # the repository may be checked out elsewhere
    SEED = next(pathlib.Path("/work/shared/seeds").glob("003_*.txt"), None)


def host_value(name: str) -> Any:
    """A value of lattice type ``name``: a Python scalar or a 0-d NumPy array."""
    if name in WEAK_VALUES:
        return WEAK_VALUES[name]
    return np.ones((), DTYPES[name])


def lib_value(lib: Any, name: str) -> Any:
    """The same as an array of ``lib`` (Python scalars stay scalars)."""
    v = host_value(name)
    return v if name in WEAK_VALUES else lib.asarray(v)


@pytest.fixture
def x64() -> Iterator[None]:
    previous = plait.config.read("enable_x64")
    plait.config.update("enable_x64", True)
    try:
        yield
    finally:
        plait.config.update("enable_x64", previous)


def test_result_type_matches_jax_for_every_pair() -> None:
    mismatches = []
    for a, b in PAIRS:
        ours = pnp.result_type(host_value(a), host_value(b))
        theirs = jnp.result_type(host_value(a), host_value(b))
        if ours != theirs:
            mismatches.append((a, b, ours, theirs))
    assert mismatches == []


def test_addition_dtype_and_weak_type_match_jax_for_every_pair() -> None:
    """The dtype and weak type of an eager ``add`` on every pair (JAX's through
    ``eval_shape``, which does not compile), and its value."""
    mismatches = []
    for a, b in PAIRS:
        ours = pnp.add(lib_value(pnp, a), lib_value(pnp, b))
        theirs = jax.eval_shape(jnp.add, lib_value(jnp, a), lib_value(jnp, b))
        expected = np.add(np.asarray(host_value(a)), np.asarray(host_value(b)))
        if (ours.dtype, ours.weak_type) != (theirs.dtype, theirs.weak_type) or not np.array_equal(
                np.asarray(ours), expected.astype(ours.dtype)):
            mismatches.append((a, b, ours, theirs))
    assert mismatches == []


@pytest.mark.slow
def test_addition_matches_jax_eager_for_every_pair() -> None:
    mismatches = []
    for a, b in PAIRS:
        ours = pnp.add(lib_value(pnp, a), lib_value(pnp, b))
        theirs = jnp.add(lib_value(jnp, a), lib_value(jnp, b))
        if repr(ours) != repr(theirs):
            mismatches.append((a, b, ours, theirs))
    assert mismatches == []


@pytest.mark.parametrize("op", ["multiply", "where"] + [
    pytest.param(op, marks=pytest.mark.slow) for op in ("subtract", "maximum", "true_divide",
                                                        "less")])
def test_other_binary_ops_promote_alike(op: str) -> None:
    mismatches = []
    for a, b in PAIRS:
        if op == "subtract" and a == b == "b1":
            continue  # bool subtraction is an error in both

        def call(lib: Any, x: Any, y: Any) -> Any:
            return lib.where(True, x, y) if op == "where" else getattr(lib, op)(x, y)
        ours = call(pnp, lib_value(pnp, a), lib_value(pnp, b))
        theirs = jax.eval_shape(lambda x, y: call(jnp, x, y), lib_value(jnp, a),
                                lib_value(jnp, b))
        if (ours.dtype, ours.weak_type) != (theirs.dtype, theirs.weak_type):
            mismatches.append((a, b, ours.dtype, ours.weak_type, theirs.dtype, theirs.weak_type))
    assert mismatches == []


def test_power_promotes_alike() -> None:
    """``power`` by a concrete integer exponent is ``integer_pow`` (the base's dtype);
    by a traced one, the operands promote."""
    mismatches = []
    for a, b in PAIRS:
        try:
            ours: Any = plait.make_jaxpr(pnp.power)(host_value(a), host_value(b)).out_avals[0]
            ours = (ours.dtype, ours.weak_type)
        except TypeError as e:
            ours = type(e).__name__
        try:
            theirs: Any = jax.eval_shape(jnp.power, host_value(a), host_value(b))
            theirs = (theirs.dtype, theirs.weak_type)
        except TypeError as e:
            theirs = type(e).__name__
        if ours != theirs:
            mismatches.append((a, b, ours, theirs))
    assert mismatches == []
    for a, b in [("u1", "u2"), ("f2", "i4"), ("i*", "b1"), ("f4", "i*"), ("i1", "i*"),
                 ("bf", "u1"), ("i4", "i4")]:
        ours = pnp.power(lib_value(pnp, a), lib_value(pnp, b))
        theirs = jnp.power(lib_value(jnp, a), lib_value(jnp, b))
        assert repr(ours) == repr(theirs), (a, b)


def test_promotion_inside_traces_matches_jax() -> None:
    """Traced arguments keep their weak types: promotion agrees under jit too."""
    mismatches = []
    for a, b in PAIRS:
        x, y = host_value(a), host_value(b)
        ours = shaped(plait.make_jaxpr(lambda u, v: u + v)(x, y).out_avals[0])
        theirs = jax.make_jaxpr(lambda u, v: u + v)(x, y).out_avals[0]
        if (ours.dtype, ours.weak_type) != (theirs.dtype, theirs.weak_type):
            mismatches.append((a, b, ours, theirs))
    assert mismatches == []


def test_weak_types_keep_the_typed_precision() -> None:
    """The seed's examples: ``jnp.int16(1) + 1`` stays int16, ``2 * x`` stays int8."""
    x = pnp.arange(5, dtype="int8")
    assert repr(2 * x) == repr(2 * jnp.arange(5, dtype="int8")) == \
        "Array([0, 2, 4, 6, 8], dtype=int8)"
    assert repr(pnp.int32(2) * x) == "Array([0, 2, 4, 6, 8], dtype=int32)"
    assert (pnp.int16(1) + 1).dtype == np.int16
    assert (pnp.int16(1) + np.array(1)).dtype == jnp.result_type(jnp.int16(1), np.array(1))
    assert repr(pnp.asarray(2)) == "Array(2, dtype=int32, weak_type=True)"
    assert repr(pnp.asarray(2, dtype="int32")) == "Array(2, dtype=int32)"
    assert pnp.promote_types(pnp.bfloat16, pnp.float16) == np.float32
    assert pnp.promote_types("bfloat16", np.float16) == jnp.promote_types("bfloat16", np.float16)


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")
def test_result_type_of_dtypes_and_python_types() -> None:
    cases = [(np.int8, int), (np.float16, float), (np.int8, np.uint8), (np.int32, float),
             ("bfloat16", 1.0), (np.bool_, int), (int, float), (float, complex),
             (np.uint32, np.int32), (pnp.float32, pnp.int8), (np.int8, 2**20)]
    for args in cases:
        assert pnp.result_type(*args) == jnp.result_type(*args), args
    assert pnp.result_type(np.float32) == np.float32
    assert pnp.result_type(np.float64) == jnp.result_type(np.float64) == np.float32


def _parse_seed_table() -> dict[tuple[str, str], str]:
    assert SEED is not None, "seed 003 not found"
    lines = [ln.split() for ln in SEED.read_text(encoding="utf-8").splitlines()]
    start = next(i for i, ln in enumerate(lines) if ln == NAMES)
    table = {}
    for row in lines[start + 1:start + 1 + len(NAMES)]:
        assert row[0] in NAMES and len(row) == len(NAMES) + 1, row
        for col, cell in zip(NAMES, row[1:]):
            table[(row[0], col)] = cell
    assert len(table) == len(NAMES) ** 2
    return table


def _lattice_name(dtype: np.dtype[Any], weak: bool) -> str:
    if weak:
        return {"i": "i*", "u": "i*", "f": "f*", "c": "c*"}[dtype.kind]
    for name, d in DTYPES.items():
        if np.dtype(d) == dtype:
            return name
    raise AssertionError(dtype)


def test_the_seed_table_is_symmetric_and_has_the_seed_examples() -> None:
    table = _parse_seed_table()
    assert all(table[a, b] == table[b, a] for a, b in PAIRS)
    assert table["bf", "f2"] == "f4"  # "bfloat16 promotes with float16 to float32"
    assert table["i2", "i*"] == "i2"  # "jnp.int16(1) + 1 returns int16"
    assert table["u8", "i1"] == "f*"


def test_lattice_matches_the_seed_table_in_x64_mode(x64: None) -> None:
    table = _parse_seed_table()
    mismatches = []
    for a, b in PAIRS:
        types = [(np.dtype(DTYPES[n]) if n in DTYPES else
                  {"i*": np.dtype(np.int64), "f*": np.dtype(np.float64),
                   "c*": np.dtype(np.complex128)}[n], n in WEAK_VALUES) for n in (a, b)]
        got = _lattice_name(*result_type_info(types))
        if got != table[a, b]:
            mismatches.append((a, b, got, table[a, b]))
    assert mismatches == []


def test_values_follow_the_seed_table_in_x64_mode(x64: None) -> None:
    """The same table through the public API: ``result_type``, and the type of an
    ``add`` traced on values of each pair."""
    table = _parse_seed_table()
    mismatches = []
    for a, b in PAIRS:
        out = shaped(plait.make_jaxpr(pnp.add)(host_value(a), host_value(b)).out_avals[0])
        dtype = pnp.result_type(host_value(a), host_value(b))
        got = _lattice_name(out.dtype, out.weak_type)
        if got != table[a, b] or dtype != out.dtype:
            mismatches.append((a, b, got, table[a, b]))
    assert mismatches == []
    assert pnp.add(1, 1).dtype == np.int64 and pnp.asarray(1.5).dtype == np.float64
    assert repr(pnp.add(pnp.ones(2, pnp.uint64), pnp.int8(1))) == \
        "Array([2., 2.], dtype=float64, weak_type=True)"


def test_x64_is_restored() -> None:
    assert not plait.config.read("enable_x64")
    assert pnp.asarray(1.0).dtype == np.float32


@pytest.mark.slow
def test_lattice_matches_jax_in_x64_mode(x64: None) -> None:
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        for a, b in PAIRS:
            ours = pnp.add(lib_value(pnp, a), lib_value(pnp, b))
            theirs = jnp.add(lib_value(jnp, a), lib_value(jnp, b))
            assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type), (a, b)
    finally:
        jax.config.update("jax_enable_x64", previous)


STRICT_MESSAGE = (r"Input dtypes \('float32', 'int32'\) have no available implicit dtype "
                  r"promotion path when (jax_)?numpy_dtype_promotion=strict\. Try explicitly "
                  r"casting inputs to the desired output type, or set "
                  r"(jax_)?numpy_dtype_promotion=standard\.")


def test_strict_mode_seed_example() -> None:
    x, y = pnp.float32(1), pnp.int32(1)
    with plait.numpy_dtype_promotion("strict"):
        with pytest.raises(TypePromotionError, match=STRICT_MESSAGE):
            x + y
        z = x + 1
    assert str(z) == "2.0"
    assert plait.config.numpy_dtype_promotion() == "standard"
    # JAX says the same (up to the option's prefix).
    with jax.numpy_dtype_promotion("strict"):
        with pytest.raises(Exception, match=STRICT_MESSAGE.replace(
                r"\('float32', 'int32'\)", r"\('(float|int)32', '(int|float)32'\)")) as info:
            jnp.float32(1) + jnp.int32(1)
    assert type(info.value).__name__ == "TypePromotionError"
    for base in (ValueError, TypeError):
        assert issubclass(TypePromotionError, base) == isinstance(info.value, base)


def test_strict_mode_matches_jax_for_every_pair() -> None:
    mismatches = []
    for a, b in PAIRS:
        with jax.numpy_dtype_promotion("strict"):
            try:
                theirs: Any = jnp.result_type(host_value(a), host_value(b))
            except Exception as e:  # noqa: BLE001
                theirs = type(e).__name__
        with plait.numpy_dtype_promotion("strict"):
            try:
                ours: Any = pnp.result_type(host_value(a), host_value(b))
            except TypePromotionError:
                ours = "TypePromotionError"
        if str(ours) != str(theirs):
            mismatches.append((a, b, ours, theirs))
    assert mismatches == []


def test_strict_mode_in_operations_and_global_config() -> None:
    a = pnp.ones(3, pnp.float32)
    with plait.numpy_dtype_promotion("strict"):
        assert (a * 2).dtype == np.float32
        assert (a + a).dtype == np.float32
        with pytest.raises(TypePromotionError):
            pnp.add(a, pnp.ones(3, pnp.float16))
        with pytest.raises(TypePromotionError):
            plait.make_jaxpr(lambda u, v: u * v)(a, np.ones(3, np.int32))
    plait.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        with pytest.raises(TypePromotionError):
            a + pnp.ones(3, pnp.int32)
    finally:
        plait.config.update("numpy_dtype_promotion", "standard")
    assert (a + pnp.ones(3, pnp.int32)).dtype == np.float32
    with pytest.raises(ValueError):
        plait.config.update("numpy_dtype_promotion", "loose")


def test_numpy_arrays_are_strong_and_python_scalars_weak() -> None:
    x = pnp.ones(2, pnp.int16)
    assert (x + 1).dtype == np.int16
    assert (x + np.int32(1)).dtype == np.int32  # NumPy scalars are strongly typed
    assert (x + np.array(1)).dtype == jnp.result_type(jnp.int16, np.array(1))
    # i2 + f* is f*: a weakly typed float (the seed's table).
    y, jy = x + 1.5, jnp.ones(2, jnp.int16) + 1.5
    assert (y.dtype, y.weak_type) == (jy.dtype, jy.weak_type) == (np.dtype(np.float32), True)
    w = pnp.asarray(3)  # weakly typed
    assert w.weak_type and (w + pnp.ones(2, pnp.uint8)).dtype == np.uint8



@pytest.mark.parametrize("dtype, k", [(np.uint8, 300), (np.int8, 200), (np.uint8, -1),
                                      (np.uint8, -300), (np.int32, 2**31 - 1), (np.float16, 70000)])
@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_python_ints_wrap_into_narrow_dtypes(dtype: Any, k: int) -> None:
    ours, theirs = pnp.ones(2, dtype) + k, jnp.ones(2, dtype) + k
    assert repr(ours) == repr(theirs)
    traced = plait.jit(lambda x: x + k)(np.ones(2, dtype))
    assert repr(traced) == repr(jax.jit(lambda x: x + k)(np.ones(2, dtype)))


@pytest.mark.parametrize("dtype, k", [(np.int32, 2**40), (np.uint32, 2**31 + 5),
                                      (np.float16, 2**40), (np.float32, -2**32)])
def test_python_ints_beyond_the_default_int_overflow(dtype: Any, k: int) -> None:
    with pytest.raises(OverflowError):
        jnp.ones(2, dtype) + k
    with pytest.raises(OverflowError, match=str(k)):
        pnp.ones(2, dtype) + k

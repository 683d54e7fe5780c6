"""``dot_general``: contraction with batch dimensions, and :class:`Precision`, the
``precision`` of ``dot_general`` and ``conv_general_dilated`` (one per operand), or
instead a :class:`DotAlgorithm` / :class:`DotAlgorithmPreset`."""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

from plait.ir import dtypes as dt
from plait.ir.avals import ShapedArray
from plait.ir.params import (
    ParamDef,
    ParsedCall,
    decode_nested_ints,
    decode_none,
    decode_optional_dtype,
)
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import ANY, check_axes, check_dtype, fail


class Precision(enum.IntEnum):
    """XLA's operand precision for contractions (JAX's ``lax.Precision``): how many
    bfloat16 passes accelerators spend; on CPU every one computes in full precision."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __repr__(self) -> str:  # as params print it: (Precision.HIGHEST, Precision.HIGHEST)
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __bool__(self) -> bool:  # (every one is true, as JAX's: code tests `if precision`)
        return True


PrecisionPair = tuple[Precision, Precision] | None
"""``None`` (the default for both operands) or one precision per operand."""


class DotAlgorithm(NamedTuple):
    """The algorithm of a dot product (JAX's ``lax.DotAlgorithm``), a ``precision``:
    the types the operands are rounded to, the accumulation type, how many components
    and operations emulate a higher precision, and whether accumulation may be imprecise.
    As ``precision`` param, the three types are NumPy scalar types (``np.float32``), so
    that it prints as JAX prints the usual spelling."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False

    def hlo_fields(self) -> tuple[np.dtype[Any], np.dtype[Any], np.dtype[Any], int, int, int,
                                  bool]:
        """The fields of StableHLO's ``#stablehlo.dot_algorithm``, types as dtypes."""
        return (np.dtype(self.lhs_precision_type), np.dtype(self.rhs_precision_type),
                np.dtype(self.accumulation_type), self.lhs_component_count,
                self.rhs_component_count, self.num_primitive_operations,
                self.allow_imprecise_accumulation)


_F16, _F32, _F64 = np.float16, np.float32, np.float64
_BF16 = ml_dtypes.bfloat16
_F8 = (ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
       ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e3m4,
       ml_dtypes.float8_e4m3, ml_dtypes.float8_e8m0fnu)
_TF32 = "tf32"  # no NumPy type: only the StableHLO attribute names it


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms (JAX's ``lax.DotAlgorithmPreset``), usually
    ``LHS_RHS_ACCUMULATION``; ``_X3``/``_X6``/``_X9`` emulate a higher precision with
    that many operations.  A ``precision`` by itself or by name (``"F32_F32_F32"``)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self) -> str:  # as params print it: precision=F32_F32_F32
        return self.name

    @property
    def supported_lhs_types(self) -> tuple[type[Any], ...] | None:
        """The operand types the algorithm takes as they are (others are converted to
        the first); ``None``: any."""
        if self is DotAlgorithmPreset.DEFAULT or self.name.startswith("ANY_F8"):
            return None
        if self.name.startswith("F16_"):
            return (_F16,)
        if self in (DotAlgorithmPreset.BF16_BF16_BF16, DotAlgorithmPreset.BF16_BF16_F32):
            return (_BF16, _F32)
        return (_F64,) if self is DotAlgorithmPreset.F64_F64_F64 else (_F32,)

    @property
    def supported_rhs_types(self) -> tuple[type[Any], ...] | None:
        """As :attr:`supported_lhs_types`."""
        return self.supported_lhs_types

    @property
    def accumulation_type(self) -> type[Any] | None:
        """The accumulation type; ``None``: the result type."""
        if self in (DotAlgorithmPreset.DEFAULT, DotAlgorithmPreset.ANY_F8_ANY_F8_ANY,
                    DotAlgorithmPreset.ANY_F8_ANY_F8_ANY_FAST_ACCUM):
            return None
        table: dict[DotAlgorithmPreset, type[Any]] = {
            DotAlgorithmPreset.F16_F16_F16: _F16, DotAlgorithmPreset.BF16_BF16_BF16: _BF16,
            DotAlgorithmPreset.F64_F64_F64: _F64}
        return table.get(self, _F32)

    def supported_output_types(self, lhs_dtype: Any, rhs_dtype: Any
                               ) -> tuple[type[Any], ...] | None:
        """The result types computed directly (others are converted from the first);
        ``None``: any."""
        if self.name.startswith("ANY_F8_ANY_F8_F32"):
            return (_F32, _F16, _BF16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
                    ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e4m3fnuz,
                    ml_dtypes.float8_e4m3b11fnuz)
        lo = {DotAlgorithmPreset.F16_F16_F32: _F16, DotAlgorithmPreset.BF16_BF16_F32: _BF16}
        if self in lo:
            same = np.dtype(lhs_dtype) == np.dtype(rhs_dtype) == np.dtype(lo[self])
            return (_F32, lo[self]) if same else (_F32,)
        acc = self.accumulation_type
        return None if acc is None else (acc,)

    def hlo_fields(self, lhs_dtype: np.dtype[Any], rhs_dtype: np.dtype[Any]
                   ) -> tuple[Any, Any, Any, int, int, int, bool] | None:
        """The fields of StableHLO's ``#stablehlo.dot_algorithm`` for operands of these
        (converted) types; ``None`` for ``DEFAULT``.

        Raises:
          ValueError: an ``ANY_F8`` preset with operands that are not float8.
        """
        if self is DotAlgorithmPreset.DEFAULT:
            return None
        name = self.name
        if name.startswith("ANY_F8"):
            f8 = [np.dtype(t) for t in _F8]
            if lhs_dtype not in f8 or rhs_dtype not in f8:
                raise ValueError(f"The dot algorithm '{self}' requires both inputs to have "
                                 f"float8 dtypes. Got {lhs_dtype} and {rhs_dtype} instead.")
            return (lhs_dtype, rhs_dtype, np.dtype(_F32), 1, 1, 1,
                    self is DotAlgorithmPreset.ANY_F8_ANY_F8_F32_FAST_ACCUM)
        parts = name.split("_")
        ops = int(parts[3][1:]) if len(parts) > 3 else 1
        types = {"F16": np.dtype(_F16), "F32": np.dtype(_F32), "F64": np.dtype(_F64),
                 "BF16": np.dtype(_BF16), "TF32": _TF32}
        return (types[parts[0]], types[parts[1]], types[parts[2]], 1, 1, ops, False)


Algorithm = DotAlgorithm | DotAlgorithmPreset
PrecisionParam = PrecisionPair | Algorithm
"""The ``precision`` param of ``dot_general``: a :data:`PrecisionPair` or an algorithm."""

CPU_ALGORITHMS: frozenset[Any] = frozenset({
    DotAlgorithmPreset.DEFAULT, DotAlgorithmPreset.F16_F16_F16, DotAlgorithmPreset.F32_F32_F32,
    DotAlgorithmPreset.F64_F64_F64, DotAlgorithmPreset.BF16_BF16_F32,
    DotAlgorithmPreset.BF16_BF16_F32_X3, DotAlgorithmPreset.BF16_BF16_F32_X6})
"""The algorithms XLA:CPU carries out (JAX refuses the others when lowering for CPU)."""


def algorithm_compute_types(algorithm: Algorithm, lhs: np.dtype[Any], rhs: np.dtype[Any],
                            out: np.dtype[Any]) -> tuple[np.dtype[Any], np.dtype[Any],
                                                         np.dtype[Any]]:
    """The types ``algorithm`` computes in for operands ``lhs``, ``rhs`` and result
    ``out``: the operands' (converted if need be) and the accumulation type."""
    if isinstance(algorithm, DotAlgorithm):
        return algorithm.hlo_fields()[:3]

    def pick(t: np.dtype[Any], supported: tuple[type[Any], ...] | None) -> np.dtype[Any]:
        if supported is None or t in [np.dtype(s) for s in supported]:
            return t
        return np.dtype(supported[0])
    lhs_t = pick(lhs, algorithm.supported_lhs_types)
    rhs_t = pick(rhs, algorithm.supported_rhs_types)
    return lhs_t, rhs_t, pick(out, algorithm.supported_output_types(lhs_t, rhs_t))


def _scalar_type(value: Any) -> type[Any]:
    """The NumPy scalar type of a dtype-like or of its printed ``<class '...'>`` form."""
    if isinstance(value, str) and value.startswith("<class '") and value.endswith("'>"):
        value = value[len("<class '"):-2].rsplit(".", 1)[-1]
    try:
        scalar: type[Any] = np.dtype(value).type
    except TypeError:
        raise ValueError(f"expected a dtype, but got {value!r}") from None
    return scalar


def as_dot_algorithm(value: Any) -> DotAlgorithm:
    """A :class:`DotAlgorithm` with NumPy scalar types, from one of any library
    (anything with its seven fields)."""
    try:
        fields = [getattr(value, f) for f in DotAlgorithm._fields]
    except AttributeError:
        raise ValueError(f"expected a DotAlgorithm, but got {value!r}") from None
    lhs, rhs, acc = (_scalar_type(t) for t in fields[:3])
    return DotAlgorithm(lhs, rhs, acc, int(fields[3]), int(fields[4]), int(fields[5]),
                        bool(fields[6]))


def _decode_algorithm(value: Any) -> Algorithm | None:
    if isinstance(value, DotAlgorithmPreset | DotAlgorithm):
        return value
    if isinstance(value, str) and value in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[value]
    if isinstance(value, ParsedCall) and value.name == "DotAlgorithm":
        kwargs = dict(value.kwargs)
        if set(kwargs) <= set(DotAlgorithm._fields):
            try:
                return as_dot_algorithm(DotAlgorithm(**kwargs))
            except TypeError:
                pass
    return None


def decode_precision(value: Any) -> PrecisionParam:
    """``None``, two :class:`Precision` values (or their printed names), or an
    algorithm (a :class:`DotAlgorithmPreset` or its name, a :class:`DotAlgorithm`)."""
    if value is None:
        return None
    algorithm = _decode_algorithm(value)
    if algorithm is not None:
        return algorithm
    if isinstance(value, tuple | list) and len(value) == 2:
        out = []
        for v in value:
            name = v[len("Precision."):] if isinstance(v, str) and v.startswith(
                "Precision.") else v
            if isinstance(v, Precision):
                out.append(v)
            elif isinstance(name, str) and name in Precision.__members__:
                out.append(Precision[name])
            else:
                break
        else:
            return (out[0], out[1])
    raise ValueError(f"expected None, two Precision values or a dot algorithm, but got "
                     f"{value!r}")


DimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]],
                         tuple[tuple[int, ...], tuple[int, ...]]]


def _encode_dimension_numbers(dn: DimensionNumbers) -> str:
    # JAX prints the four index tuples as lists, which is shorter.
    (lc, rc), (lb, rb) = dn
    return str(((list(lc), list(rc)), (list(lb), list(rb))))


def _dot_general_rule(lhs: ShapedArray, rhs: ShapedArray, *, dimension_numbers: DimensionNumbers,
                      precision: PrecisionParam, preferred_element_type: np.dtype[Any] | None,
                      out_sharding: None) -> tuple[ShapedArray, ...]:
    check_dtype(lhs, ANY, "lhs")  # bool too, as JAX: or of ands
    check_dtype(rhs, ANY, "rhs")
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        fail(f"expected dimension_numbers ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), "
             f"but got {dimension_numbers!r}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        fail(f"expected contracting and batch dimensions in pairs, but got {dimension_numbers}")
    check_axes(tuple(lc) + tuple(lb), lhs.ndim, "lhs contracting and batch dimensions")
    check_axes(tuple(rc) + tuple(rb), rhs.ndim, "rhs contracting and batch dimensions")
    for kind, ls, rs in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, b in zip(ls, rs):
            if lhs.shape[a] != rhs.shape[b]:
                fail(f"expected equal sizes for {kind} dimensions, but got lhs dimension {a} of "
                     f"{lhs.str_short()} and rhs dimension {b} of {rhs.str_short()}")
    batch = tuple(lhs.shape[a] for a in lb)
    lfree = tuple(d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb)
    rfree = tuple(d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb)
    dtype = dot_general_dtype(lhs.dtype, rhs.dtype, preferred_element_type,
                              isinstance(precision, DotAlgorithm | DotAlgorithmPreset))
    weak = lhs.weak_type and rhs.weak_type  # (as JAX: whatever preferred_element_type)
    return (ShapedArray(batch + lfree + rfree, dtype, weak),)


def _precision_rank(dtype: np.dtype[Any]) -> tuple[bool, int, int, int, bool]:
    """How XLA orders element types when a dot mixes two (its ``HigherPrecisionType``):
    complex over real, then exponent range, mantissa, width, and signed over unsigned."""
    real = dt.real_dtype(dtype)
    if dt.is_float(real):
        info = ml_dtypes.finfo(real)  # type: ignore[no-untyped-call]  # ml_dtypes is untyped
        return dt.is_complex(dtype), int(info.maxexp), int(info.nmant), _bit_width(real), True
    return False, -1, -1, _bit_width(real), not dt.is_unsigned(real)


def _bit_width(dtype: np.dtype[Any]) -> int:
    # As JAX counts: a bool is one bit.
    return 1 if dt.is_bool(dtype) else dt.bit_width(dtype)


def dot_general_dtype(lhs: np.dtype[Any], rhs: np.dtype[Any],
                      preferred: np.dtype[Any] | None = None,
                      has_algorithm: bool = False) -> np.dtype[Any]:
    """The result dtype of ``dot_general``. Operands of different dtypes are allowed, as
    in JAX 0.10.2 and XLA: the result takes the more precise one (or the preferred type)."""
    if lhs == rhs:
        result = lhs
    else:
        lrank, rrank = _precision_rank(lhs), _precision_rank(rhs)
        if lrank == rrank:
            fail(f"expected operands of equal dtypes, or one more precise than the other, "
                 f"but got {lhs.name} and {rhs.name}")
        result = lhs if lrank > rrank else rhs
    if preferred is None or preferred == result:
        return result
    if (not has_algorithm and not dt.is_float(result)
            and _bit_width(preferred) < _bit_width(result)):
        fail(f"expected a preferred_element_type at least as wide as the operands' "
             f"{result.name}, but got {preferred.name}")
    return preferred


dot_general_p = Primitive("dot_general", _dot_general_rule, (
    ParamDef("dimension_numbers", decode=decode_nested_ints, encode=_encode_dimension_numbers),
    ParamDef("precision", None, show="nondefault", decode=decode_precision),
    ParamDef("preferred_element_type", None, show="nondefault", decode=decode_optional_dtype),
    ParamDef("out_sharding", None, show="never", decode=decode_none),
))

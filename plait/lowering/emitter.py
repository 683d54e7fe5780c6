"""Emitting StableHLO as MLIR text.

Lowering writes MLIR in the generic op syntax (``"stablehlo.add"(%0, %1) :
(...) -> ...``), which is uniform for every op and cheap to produce; the
MLIR parser turns it into a module whose printed form is the familiar pretty
syntax.  Values are SSA names carried with their types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, cast

import numpy as np

from plait.ir import dtypes as dt
from plait.ir.atoms import Literal
from plait.ir.avals import AbstractToken, AbstractValue, ShapedArray
from plait.ir.caches import BoundedDict
from plait.ir.dims import is_constant_shape

__all__ = ["Value", "FuncEmitter", "tensor_type", "element_type", "dense_attr", "i64_array",
           "Region"]

TOKEN_TYPE: Final = "!stablehlo.token"
"""The type of the tokens that order effects."""
_I64: Final = np.dtype(np.int64)
I64_TYPE: Final = "tensor<i64>"
"""The type of dimension values in shape-polymorphic lowering."""

_ELEMENT: Final[dict[np.dtype[Any], str]] = {
    dt.bool_: "i1", dt.int8: "i8", dt.int16: "i16", dt.int32: "i32", dt.int64: "i64",
    dt.uint8: "ui8", dt.uint16: "ui16", dt.uint32: "ui32", dt.uint64: "ui64",
    dt.bfloat16: "bf16", dt.float16: "f16", dt.float32: "f32", dt.float64: "f64",
    dt.complex64: "complex<f32>", dt.complex128: "complex<f64>",
    dt.float8_e4m3fn: "f8E4M3FN", dt.float8_e5m2: "f8E5M2",
    dt.float8_e4m3b11fnuz: "f8E4M3B11FNUZ", dt.float8_e4m3fnuz: "f8E4M3FNUZ",
    dt.float8_e5m2fnuz: "f8E5M2FNUZ", dt.float8_e3m4: "f8E3M4", dt.float8_e4m3: "f8E4M3",
    dt.float8_e8m0fnu: "f8E8M0FNU", dt.float4_e2m1fn: "f4E2M1FN",
    dt.int2: "i2", dt.int4: "i4", dt.uint2: "ui2", dt.uint4: "ui4",
    # float0 carries no data; like JAX, it travels as bool.
    dt.float0: "i1",
}


def element_type(dtype: np.dtype[Any]) -> str:
    """The MLIR element type of a dtype (``f32``, ``i1``, ``ui8``, ``complex<f32>``)."""
    try:
        return _ELEMENT[dtype]
    except KeyError:
        raise NotImplementedError(f"lowering of dtype {dtype} is not supported") from None


_TypeKey = tuple[tuple[int, ...], np.dtype[Any]]
_type_cache: BoundedDict[AbstractValue | _TypeKey, str] = BoundedDict("MLIR tensor types")


def tensor_type(aval: AbstractValue | _TypeKey) -> str:
    """``tensor<2x3xf32>`` for an aval (or a (shape, dtype) pair); ``!stablehlo.token``
    for the token type."""
    # Avals are interned: the aval itself is the cheapest key (this runs per equation).
    t = _type_cache.data.get(aval)
    if t is None:
        if type(aval) is AbstractToken:
            return TOKEN_TYPE
        # ShapedArray is the only array type: anything else is (meant to be) a pair.
        shape, dtype = ((aval.shape, aval.dtype) if isinstance(aval, ShapedArray)
                        else cast(_TypeKey, aval))
        dims = "".join(f"{d}x" if type(d) is int else "?x" for d in shape)
        text = f"tensor<{dims}{element_type(dtype)}>"
        # A symbolic dimension is dynamic (``?``); the type remembers the shape, from
        # which :meth:`FuncEmitter.op1` computes the sizes ops of static shape need.
        t = _type_cache[aval] = text if is_constant_shape(shape) else SymbolicType(text, shape)
    return t


class SymbolicType(str):
    """A tensor type with dynamic dimensions, and the symbolic shape it stands for."""

    shape: tuple[Any, ...]

    def __new__(cls, text: str, shape: tuple[Any, ...]) -> SymbolicType:
        t = super().__new__(cls, text)
        t.shape = shape
        return t


_DYNAMIC_FORMS: Final = {"stablehlo.broadcast_in_dim": "stablehlo.dynamic_broadcast_in_dim",
                         "stablehlo.reshape": "stablehlo.dynamic_reshape",
                         "stablehlo.iota": "stablehlo.dynamic_iota"}
"""Ops whose result shape is an attribute or the result type, and their forms taking
the shape as an operand (for results of symbolic shape)."""


def i64_array(xs: Sequence[int]) -> str:
    """An ``array<i64: ...>`` attribute."""
    return f"array<i64{': ' if xs else ''}{', '.join(str(int(x)) for x in xs)}>"


def _float_hex(x: float, dtype: np.dtype[Any]) -> str:
    # Exact bit patterns: no decimal rounding, and inf/nan need no spelling.
    bits = np.asarray(x, dtype).view(f"u{dtype.itemsize}").item()
    return f"0x{bits:0{dtype.itemsize * 2}X}"


def _scalar_text(x: Any, dtype: np.dtype[Any]) -> str:
    if dtype == dt.bool_:
        return "true" if x else "false"
    if dt.is_integer(dtype):
        return str(int(x))
    if dt.is_complex(dtype):
        part = np.dtype(np.float32) if dtype == dt.complex64 else np.dtype(np.float64)
        c = complex(x)
        return f"({_float_hex(c.real, part)}, {_float_hex(c.imag, part)})"
    return _float_hex(float(x), dtype)


def dense_attr(value: Any, aval: ShapedArray) -> str:
    """A ``dense<...> : tensor<...>`` attribute holding ``value`` (scalar or array)."""
    if aval.dtype == dt.float0:
        return f"dense<false> : {tensor_type(aval)}"
    arr = np.asarray(value, aval.dtype) if not isinstance(value, np.ndarray) else value
    ty = tensor_type(aval)
    if arr.size == 0:
        return f"dense<> : {ty}" if aval.shape else f"dense<{_scalar_text(0, aval.dtype)}> : {ty}"
    flat = np.ravel(np.asarray(arr, aval.dtype))
    if _splat(flat):
        return f"dense<{_scalar_text(flat[0], aval.dtype)}> : {ty}"
    if aval.dtype == dt.bool_:
        data = flat.astype(np.uint8).tobytes()
    else:
        data = np.ascontiguousarray(flat).astype(flat.dtype.newbyteorder("<")).tobytes()
    return f'dense<"0x{data.hex().upper()}"> : {ty}'


def _splat(flat: np.ndarray) -> bool:
    # Bitwise equality, so that -0.0, 0.0 and NaN payloads are kept apart.
    rows = np.ascontiguousarray(flat).view(np.uint8).reshape(len(flat), -1)
    return bool((rows == rows[0]).all())


class Value:
    """An SSA value: its name in the text and its type."""

    __slots__ = ("name", "type")

    def __init__(self, name: str, type_: str) -> None:
        self.name = name
        self.type = type_

    def __repr__(self) -> str:
        return f"{self.name}:{self.type}"


class Region:
    """A single-block region being emitted (a reduction body, a comparator, a branch)."""

    def __init__(self, parent: FuncEmitter, arg_types: Sequence[str]) -> None:
        self.fn = parent
        self.args = [parent.fresh(t) for t in arg_types]
        self.lines: list[str] = []

    def text(self, results: Sequence[Value], terminator: str = "stablehlo.return") -> str:
        header = ", ".join(f"{a.name}: {a.type}" for a in self.args)
        ret = (f'"{terminator}"({", ".join(r.name for r in results)}) : '
               f"({', '.join(r.type for r in results)}) -> ()")
        body = "\n".join(self.lines + [ret])
        label = f"^bb0({header}):\n" if self.args else ""
        return f"{{\n{label}{body}\n}}"


class FuncEmitter:
    """Accumulates the body of one ``func.func``."""

    def __init__(self, counter: list[int]) -> None:
        self._counter = counter
        self.lines: list[str] = []
        self._regions: list[Region] = []
        self._sink = self.lines
        """Where ops go: the innermost open region's lines, else the body's."""
        # Values worth reusing (literal constants, broadcasts), per open region: a value
        # defined inside a region is not visible outside it.
        self._memos: list[dict[Any, Value]] = [{}]
        self.dims: dict[str, Value] | None = None
        """The values (``tensor<i64>``) of the dimension variables, in a function lowered
        shape-polymorphically."""
        self.loc = ""
        """Appended to every op: `` loc("scope/sin")`` for an equation traced inside a
        ``named_scope`` (XLA turns it into the op's ``op_name``), else empty."""

    @property
    def memo(self) -> dict[Any, Value]:
        """Reusable values of the innermost open region, keyed by how they were made."""
        return self._memos[-1]

    def fresh(self, type_: str) -> Value:
        """A new SSA name of the given type."""
        self._counter[0] += 1
        return Value(f"%v{self._counter[0]}", type_)

    def token(self, effect: Any) -> Value:
        """The token ordering the operations with ``effect`` in the innermost open region
        (a new one at the first)."""
        key = ("token", effect)
        t = self.memo.get(key)
        if t is None:
            t = self.memo[key] = self.op1("stablehlo.after_all", [], TOKEN_TYPE)
        return t

    def set_token(self, effect: Any, token: Value) -> None:
        """The token the next operation with ``effect`` must follow."""
        self.memo[("token", effect)] = token

    def region(self, arg_types: Sequence[str]) -> Region:
        """Open a region; ops emitted until :meth:`close` go into it."""
        r = Region(self, arg_types)
        self._regions.append(r)
        self._memos.append({})
        self._sink = r.lines
        return r

    def close(self, region: Region) -> None:
        """Stop emitting into ``region`` (it must be the innermost open one)."""
        assert self._regions.pop() is region
        self._memos.pop()
        self._sink = self._regions[-1].lines if self._regions else self.lines

    def op(self, name: str, operands: Sequence[Value], result_types: Sequence[str],
           attrs: str = "", regions: Sequence[str] = (), discardable: str = "") -> list[Value]:
        """Emit a generic-syntax op and return its results: ``attrs`` are its properties,
        ``discardable`` its other attributes (``mhlo.backend_config``, which MLIR drops
        from the properties)."""
        results = [self.fresh(t) for t in result_types]
        lhs = ""
        if len(results) == 1:
            lhs = f"{results[0].name} = "
        elif results:
            base = self.fresh("")
            lhs = f"{base.name}:{len(results)} = "
            results = [Value(f"{base.name}#{i}", t) for i, t in enumerate(result_types)]
        props = f" <{{{attrs}}}>" if attrs else ""
        regs = " (" + ", ".join(regions) + ")" if regions else ""
        extra = f" {{{discardable}}}" if discardable else ""
        sig = (f"({', '.join(o.type for o in operands)}) -> "
               + (result_types[0] if len(result_types) == 1 else f"({', '.join(result_types)})"))
        self._sink.append(
            f'{lhs}"{name}"({", ".join(o.name for o in operands)}){props}{regs}{extra} : {sig}'
            f'{self.loc}')
        return results

    def op1(self, name: str, operands: Sequence[Value], result_type: str, attrs: str = "",
            regions: Sequence[str] = ()) -> Value:
        """Emit a single-result op."""
        if type(result_type) is SymbolicType and name in _DYNAMIC_FORMS:
            shape = self.shape_value(result_type.shape)
            return self.op1(_DYNAMIC_FORMS[name], [*operands, shape], str(result_type), attrs)
        if regions:
            return self.op(name, operands, [result_type], attrs, regions)[0]
        # The common case, kept short: it runs once per lowered equation.
        self._counter[0] += 1
        res = Value(f"%v{self._counter[0]}", result_type)
        props = f" <{{{attrs}}}>" if attrs else ""
        self._sink.append(
            f'{res.name} = "{name}"({", ".join([o.name for o in operands])}){props} : '
            f'({", ".join([o.type for o in operands])}) -> {result_type}{self.loc}')
        return res

    def dim_value(self, d: Any) -> Value:
        """The value of a dimension (``tensor<i64>``), computed from the values of the
        dimension variables (:attr:`dims`)."""
        if type(d) is int:
            return self.constant(d, ShapedArray((), _I64))
        memo = self.memo  # (a value made inside a region is not visible outside it)
        key = ("dim", d)
        v = memo.get(key)
        if v is not None:
            return v
        if self.dims is None:
            raise NotImplementedError(
                f"the dimension {d} is needed in a function that does not know the values of "
                "the dimension variables: this operation cannot be lowered shape-"
                "polymorphically yet")
        total: Value | None = None
        for term, coeff in d.terms.items():
            value = self.constant(coeff, ShapedArray((), _I64)) if coeff != 1 or not term \
                else None
            for factor, power in term:
                f = self._factor_value(factor)
                for _ in range(power):
                    value = f if value is None else self.op1("stablehlo.multiply", [value, f],
                                                             I64_TYPE)
            assert value is not None
            total = value if total is None else self.op1("stablehlo.add", [total, value], I64_TYPE)
        assert total is not None
        memo[key] = total
        return total

    def _factor_value(self, factor: Any) -> Value:
        if isinstance(factor, str):
            assert self.dims is not None
            if factor not in self.dims:
                raise NotImplementedError(f"no value for the dimension variable {factor!r}")
            return self.dims[factor]
        op, expr, k = factor
        inner = self.dim_value(expr)
        kv = self.constant(k, ShapedArray((), _I64))
        # Dimensions are non-negative: truncating division is floor division.
        return self.op1("stablehlo.divide" if op == "floordiv" else "stablehlo.remainder",
                        [inner, kv], I64_TYPE)

    def shape_value(self, shape: Sequence[Any]) -> Value:
        """A ``tensor<Nxi64>`` holding the sizes of ``shape``."""
        one = f"tensor<1x{I64_TYPE[7:]}"
        parts = [self.op1("stablehlo.reshape", [self.dim_value(d)], one) for d in shape]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return self.constant(np.zeros(0, np.int64), ShapedArray((0,), _I64))
        return self.op1("stablehlo.concatenate", parts, f"tensor<{len(parts)}xi64>",
                        "dimension = 0 : i64")

    def constant(self, value: Any, aval: ShapedArray) -> Value:
        """Emit ``stablehlo.constant``."""
        return self.op1("stablehlo.constant", [], tensor_type(aval),
                        f"value = {dense_attr(value, aval)}")

    def literal(self, lit: Literal) -> Value:
        """The constant of an (interned) literal: emitted once per region, its attribute
        text cached across modules."""
        memo = self._memos[-1]
        v = memo.get(lit)
        if v is None:
            attr = _literal_attrs.get(lit)
            if attr is None:
                attr = dense_attr(lit.val, lit.aval)
                if len(_literal_attrs) < 65536:
                    _literal_attrs[lit] = attr
            v = memo[lit] = self.op1("stablehlo.constant", [], tensor_type(lit.aval),
                                     f"value = {attr}")
        return v


_literal_attrs: dict[Literal, str] = {}

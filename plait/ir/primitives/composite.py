"""``composite``: a named operation together with its decomposition (JAX's
``lax.composite``), lowered to ``stablehlo.composite`` so that a compiler may recognize
it by name and otherwise run the decomposition.

Params, as JAX 0.10.2 prints them: ``attributes`` (one ``(name, leaves, structure)``
triple per keyword argument of the call, the structure printed as a ``PyTreeDef``),
``jaxpr`` (the decomposition, closed, without consts), ``name`` and ``version``::

    c:f32[3] = composite[
      attributes=(('k', (2.0,), PyTreeDef(*)),)
      jaxpr={ lambda ; d:f32[3]. let e:f32[3] = mul d 2.0:f32[] in (e,) }
      name=my.scale
      version=0
    ] a
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import attrs
import numpy as np

from plait.ir import dtypes
from plait.ir.avals import AbstractValue
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.params import ParamDef, ParsedCall, decode_int, decode_str
from plait.ir.primitive import Primitive
from plait.ir.primitives._typing import fail
from plait.ir.primitives.calls import check_call_operands

__all__ = ["composite_p", "AttributeTree", "HashableArray", "Attribute",
           "flatten_attribute", "attribute_value", "decode_attribute_leaf"]


class HashableArray:
    """A NumPy array as an (immutable, hashable) attribute leaf; printed as JAX prints
    it: ``HashableArray(array([1, 2], dtype=int32))``."""

    __slots__ = ("val",)

    def __init__(self, val: np.ndarray) -> None:
        val = np.array(val)  # a private copy, read-only
        val.flags.writeable = False
        self.val: np.ndarray = val

    def __repr__(self) -> str:
        return f"HashableArray({self.val!r})"

    def __hash__(self) -> int:
        return hash((self.val.shape, self.val.dtype, self.val.tobytes()))

    def __eq__(self, other: object) -> bool:
        # Bitwise, so that NaN equals itself and the equality is an equivalence.
        return (isinstance(other, HashableArray) and self.val.shape == other.val.shape
                and self.val.dtype == other.val.dtype
                and self.val.tobytes() == other.val.tobytes())


@attrs.frozen
class AttributeTree:
    """The structure of an attribute value (JAX keeps a ``PyTreeDef``): a leaf, ``None``,
    or a tuple, list or dict (string keys, sorted) of structures.  Printed as jaxlib
    prints a ``PyTreeDef``: ``PyTreeDef((*, [*, None]))``."""

    kind: str
    """``"leaf"``, ``"none"``, ``"tuple"``, ``"list"`` or ``"dict"``."""
    children: tuple[AttributeTree, ...] = ()
    keys: tuple[str, ...] = ()
    """The keys of a dict, sorted."""

    @property
    def num_leaves(self) -> int:
        """How many leaves the structure holds."""
        return 1 if self.kind == "leaf" else sum(c.num_leaves for c in self.children)

    def _body(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(c._body() for c in self.children)
        if self.kind == "tuple":
            return f"({inner},)" if len(self.children) == 1 else f"({inner})"
        if self.kind == "list":
            return f"[{inner}]"
        return "{" + ", ".join(f"{k!r}: {c._body()}"
                               for k, c in zip(self.keys, self.children)) + "}"

    def __str__(self) -> str:
        return f"PyTreeDef({self._body()})"

    __repr__ = __str__

    def unflatten(self, leaves: Sequence[Any]) -> Any:
        """The value of this structure with these leaves."""
        it = iter(leaves)
        out = self._build(it)
        if next(it, None) is not None:
            raise ValueError(f"expected {self.num_leaves} leaves for {self}, but got more")
        return out

    def _build(self, it: Iterator[Any]) -> Any:
        if self.kind == "leaf":
            return next(it)
        if self.kind == "none":
            return None
        kids = [c._build(it) for c in self.children]
        if self.kind == "tuple":
            return tuple(kids)
        if self.kind == "list":
            return kids
        return dict(zip(self.keys, kids))


_LEAF = AttributeTree("leaf")

Attribute = tuple[str, tuple[Any, ...], AttributeTree]
"""One attribute: its name, its leaves and their structure."""

_SCALAR_TYPES = (bool, int, float, str, np.bool_, np.integer, np.floating)


def _check_leaf(name: str, x: Any) -> Any:
    """``x`` as an attribute leaf: a Python or NumPy boolean, integer, float or string, a
    dtype, or a NumPy array (kept as a :class:`HashableArray`)."""
    if isinstance(x, np.ndarray):
        if x.dtype not in dtypes.SUPPORTED or dtypes.is_complex(x.dtype):
            raise TypeError(f"composite: expected attribute {name!r} to hold arrays of a "
                            f"real or boolean dtype, but got {x.dtype}")
        return HashableArray(x)
    if isinstance(x, (HashableArray, np.dtype, *_SCALAR_TYPES)):
        if isinstance(x, np.generic) and np.dtype(x.dtype) not in dtypes.SUPPORTED:
            raise TypeError(f"composite: expected attribute {name!r} to hold NumPy scalars "
                            f"of a supported dtype, but got {x.dtype}")
        return x
    raise TypeError(
        f"composite: expected attribute {name!r} to be built of None, tuples, lists, dicts "
        "with string keys, booleans, integers, floats, strings, dtypes and NumPy arrays, "
        f"but got a value of type {type(x).__name__}")


def flatten_attribute(name: str, value: Any) -> Attribute:
    """``value`` of keyword argument ``name`` as an attribute triple.

    Raises:
      TypeError: a part of ``value`` that ``stablehlo.composite`` cannot carry.
    """
    leaves: list[Any] = []

    def walk(v: Any) -> AttributeTree:
        if v is None:
            return AttributeTree("none")
        if type(v) in (tuple, list):
            return AttributeTree("tuple" if type(v) is tuple else "list",
                                 tuple(walk(c) for c in v))
        if type(v) is dict:
            if not all(isinstance(k, str) for k in v):
                raise TypeError(f"composite: expected string keys in the dicts of attribute "
                                f"{name!r}, but got {list(v)}")
            keys = tuple(sorted(v))
            return AttributeTree("dict", tuple(walk(v[k]) for k in keys), keys)
        leaves.append(_check_leaf(name, v))
        return _LEAF
    tree = walk(value)
    return (name, tuple(leaves), tree)


def attribute_value(attribute: Attribute) -> Any:
    """The value an attribute triple stands for (arrays as NumPy arrays)."""
    _, leaves, tree = attribute
    return tree.unflatten([x.val if isinstance(x, HashableArray) else x for x in leaves])


# -- decoding the printed form ---------------------------------------------------------

def _decode_tree(value: Any) -> AttributeTree:
    if value is Ellipsis:
        return _LEAF
    if value is None:
        return AttributeTree("none")
    if isinstance(value, tuple | list):
        return AttributeTree("tuple" if isinstance(value, tuple) else "list",
                             tuple(_decode_tree(v) for v in value))
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        keys = tuple(sorted(value))
        return AttributeTree("dict", tuple(_decode_tree(value[k]) for k in keys), keys)
    raise ValueError(f"expected a PyTreeDef of None, tuples, lists and dicts, but got {value!r}")


def _nan_inf(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return [_nan_inf(x) for x in v]
    return float(v) if v in ("nan", "inf") else v


def decode_attribute_leaf(value: Any) -> Any:
    """An attribute leaf as the parser reads it: a scalar, a string, a dtype or a
    ``HashableArray`` of a printed array (``composite``'s and ``ffi_call``'s)."""
    if isinstance(value, ParsedCall):
        args = dict(value.kwargs)
        if value.name == "HashableArray" and set(args) == {""}:
            inner = args[""]
            if isinstance(inner, ParsedCall) and inner.name == "array":
                arr = dict(inner.kwargs)
                dtype = dtypes.from_name(arr["dtype"]) if "dtype" in arr else None
                return HashableArray(np.array(_nan_inf(arr[""]), dtype))
        if value.name == "dtype" and set(args) == {""} and isinstance(args[""], str):
            return dtypes.from_name(args[""])
    elif isinstance(value, np.generic | bool | int | float | str):
        # Words the parser reads as strings: float('inf') prints bare, np.True_ too.  (A
        # string attribute 'inf' reads back as the float: the text does not tell.)
        words = {"inf": float("inf"), "nan": float("nan"), "np.True_": np.True_,
                 "np.False_": np.False_}
        return words.get(value, value) if isinstance(value, str) else value
    raise ValueError(f"expected an attribute leaf, but got {value!r}")


def _decode_attributes(value: Any) -> tuple[Attribute, ...]:
    if not isinstance(value, tuple | list):
        raise ValueError(f"expected a tuple of attributes, but got {value!r}")
    out = []
    for a in value:
        if not (isinstance(a, tuple) and len(a) == 3 and isinstance(a[0], str)
                and isinstance(a[1], tuple) and isinstance(a[2], ParsedCall)
                and a[2].name == "PyTreeDef" and len(a[2].kwargs) == 1):
            raise ValueError(f"expected an attribute ('name', (leaves...), PyTreeDef(...)), "
                             f"but got {a!r}")
        tree = _decode_tree(a[2].kwargs[0][1])
        leaves = tuple(decode_attribute_leaf(x) for x in a[1])
        if len(leaves) != tree.num_leaves:
            raise ValueError(f"expected {tree.num_leaves} leaves for attribute {a[0]!r}, but "
                             f"got {len(leaves)}")
        out.append((a[0], leaves, tree))
    return tuple(out)


def _decode_jaxpr(value: object) -> ClosedJaxpr:
    if not isinstance(value, ClosedJaxpr):
        raise ValueError(f"expected a jaxpr, but got {value!r}")
    return value


def _composite_rule(*avals: AbstractValue, name: str, attributes: tuple[Attribute, ...],
                    jaxpr: ClosedJaxpr, version: int) -> tuple[AbstractValue, ...]:
    if not isinstance(jaxpr, ClosedJaxpr) or jaxpr.consts:
        fail(f"expected a closed jaxpr without consts for composite {name!r}, but got "
             f"{type(jaxpr).__name__}")
    check_call_operands(f"composite {name!r}", jaxpr, avals)
    return jaxpr.out_avals


composite_p = Primitive("composite", _composite_rule, (
    ParamDef("name", decode=decode_str),
    ParamDef("attributes", (), decode=_decode_attributes, numpy_scalars=True),
    ParamDef("jaxpr", decode=_decode_jaxpr),
    ParamDef("version", 0, decode=decode_int),
), multiple_results=True)

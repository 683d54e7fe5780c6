"""The serialized form of an exported function: JAX's ``Exported`` flatbuffer.

The layout is JAX's (``jax/_src/export/serialization.fbs``, as JAX 0.10.2 writes
it), so artifacts move between plait and JAX in both directions.  Writing uses the
``flatbuffers`` package; reading is plait's own, checked at every step, because
the bytes may come from anywhere: an offset outside the buffer, a vector longer
than the buffer, bad UTF-8, an unknown enum value or nesting past
:data:`MAX_DEPTH` raise :class:`FormatError` (a ``ValueError``) naming what is
wrong, never anything else.

The records here are neutral: shapes are dimension strings, trees are
:class:`TreeNode`\\ s; the frontend turns them into avals and pytrees.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any, Final

import attrs
import flatbuffers  # type: ignore[import-untyped]  # the package ships no type stubs

__all__ = ["FormatError", "TreeNode", "AvalRecord", "ExportedRecord", "write_exported",
           "read_exported", "TREE_LEAF", "TREE_NONE", "TREE_TUPLE", "TREE_LIST", "TREE_DICT",
           "TREE_CUSTOM", "CHECK_PLATFORM", "CHECK_CUSTOM_CALL", "CHECK_SHAPE_ASSERTIONS",
           "DTYPE_CODES", "MAX_DEPTH"]

# Enums of the schema.
TREE_LEAF, TREE_NONE, TREE_TUPLE, TREE_LIST, TREE_DICT, TREE_CUSTOM = range(6)
CHECK_PLATFORM, CHECK_CUSTOM_CALL, CHECK_SHAPE_ASSERTIONS = range(3)
_SHAPED_ARRAY = 0
_MEMORY_DEVICE = 1

DTYPE_CODES: Final[dict[str, int]] = {
    "bool": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "uint8": 5, "uint16": 6,
    "uint32": 7, "uint64": 8, "float16": 9, "float32": 10, "float64": 11, "complex64": 12,
    "complex128": 13, "bfloat16": 14, "int4": 15, "uint4": 16, "float8_e4m3b11fnuz": 17,
    "float8_e4m3fn": 18, "float8_e4m3fnuz": 19, "float8_e5m2": 20, "float8_e5m2fnuz": 21,
    "float0": 22, "float8_e4m3": 23, "float8_e3m4": 24, "float8_e8m0fnu": 25,
    "float4_e2m1fn": 26, "key<fry>": 27, "key<rbg>": 28, "key<urbg>": 29,
}
"""The schema's ``DType`` codes, by dtype name."""

MAX_DEPTH: Final = 100
"""How deeply pytrees (and chains of exported VJPs) may nest in an artifact."""

# The version JAX 0.10.2 writes in the flatbuffer: older readers accept only 2 and 3, so
# JAX still writes 3 for its newer (compatible) layouts.
_WRITTEN_VERSION: Final = 3
_KNOWN_VERSIONS: Final = range(1, 12)


class FormatError(ValueError):
    """The bytes are not a well-formed serialized exported function."""


@attrs.frozen
class TreeNode:
    """One node of a serialized pytree structure."""

    kind: int
    """``TREE_LEAF``, ``TREE_NONE``, ``TREE_TUPLE``, ``TREE_LIST``, ``TREE_DICT`` or
    ``TREE_CUSTOM``."""
    children: tuple[TreeNode, ...] = ()
    """The child structures."""
    keys: tuple[str, ...] = ()
    """A dict's keys, one per child."""
    custom_name: str = ""
    """A custom node's registered serialization name."""
    custom_auxdata: bytes = b""
    """A custom node's serialized auxiliary data."""


@attrs.frozen
class AvalRecord:
    """A serialized abstract value."""

    shape: tuple[str, ...]
    """Each dimension as text: ``"3"``, or an expression of dimension variables."""
    dtype: str
    """The dtype's name (a key of :data:`DTYPE_CODES`)."""


@attrs.frozen
class MeshRecord:
    """A serialized abstract mesh: axis names, sizes and types (no devices)."""

    axis_names: tuple[str, ...]
    axis_sizes: tuple[int, ...]
    axis_types: tuple[int, ...]
    """Per axis: ``AXIS_AUTO``, ``AXIS_EXPLICIT`` or ``AXIS_MANUAL``."""


@attrs.frozen
class ShardingRecord:
    """A serialized named sharding: its abstract mesh and, per dimension, the mesh axes
    splitting it (empty: not split)."""

    mesh: MeshRecord
    spec: tuple[tuple[str, ...], ...]


AXIS_AUTO, AXIS_EXPLICIT, AXIS_MANUAL = 1, 2, 3
MAX_DEVICES: Final = 1 << 20
"""The most devices a serialized mesh may have (a bound for untrusted bytes)."""


@attrs.frozen
class ExportedRecord:
    """Everything a serialized exported function holds that plait reads."""

    fun_name: str
    in_tree: TreeNode
    in_avals: tuple[AvalRecord, ...]
    out_tree: TreeNode
    out_avals: tuple[AvalRecord, ...]
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple[str, ...]
    unordered_effects: tuple[str, ...]
    disabled_checks: tuple[tuple[int, str], ...]
    """``(kind, custom call target)`` pairs."""
    module: bytes = attrs.field(repr=False)
    calling_convention_version: int
    kept_var_idx: tuple[int, ...]
    uses_global_constants: bool
    vjp: ExportedRecord | None = None
    in_shardings: tuple[ShardingRecord | None, ...] = ()
    """Per argument, its export layout (empty, or ``None`` entries: unspecified)."""
    out_shardings: tuple[ShardingRecord | None, ...] = ()
    """Per result, its export layout."""


# -- writing -------------------------------------------------------------------

def _vector(b: Any, items: Sequence[int]) -> int:
    b.StartVector(4, len(items), 4)
    for off in reversed(items):
        b.PrependUOffsetTRelative(off)
    end: int = b.EndVector()
    return end


def _scalars(b: Any, values: Sequence[int], size: int, prepend: str) -> int:
    b.StartVector(size, len(values), size)
    put = getattr(b, prepend)
    for v in reversed(values):
        put(v)
    end: int = b.EndVector()
    return end


def _strings(b: Any, values: Sequence[str]) -> int:
    return _vector(b, [b.CreateString(v) for v in values])


def _write_tree(b: Any, t: TreeNode) -> int:
    children = _vector(b, [_write_tree(b, c) for c in t.children]) if t.children else None
    keys = _strings(b, t.keys) if t.kind == TREE_DICT else None
    name = b.CreateString(t.custom_name) if t.kind == TREE_CUSTOM else None
    aux = b.CreateByteVector(t.custom_auxdata) if t.kind == TREE_CUSTOM else None
    b.StartObject(5)
    b.PrependInt8Slot(0, t.kind, 0)
    for slot, off in ((1, children), (2, keys), (3, name), (4, aux)):
        if off:
            b.PrependUOffsetTRelativeSlot(slot, off, 0)
    end: int = b.EndObject()
    return end


def _write_aval(b: Any, a: AvalRecord) -> int:
    shape = _strings(b, a.shape)
    b.StartObject(4)
    b.PrependInt8Slot(0, _SHAPED_ARRAY, 0)
    b.PrependUOffsetTRelativeSlot(1, shape, 0)
    b.PrependInt8Slot(2, DTYPE_CODES[a.dtype], 0)
    b.PrependInt8Slot(3, _MEMORY_DEVICE, 0)
    end: int = b.EndObject()
    return end


def _write_mesh(b: Any, m: MeshRecord) -> int:
    sizes = _scalars(b, m.axis_sizes, 4, "PrependUint32")
    names = _strings(b, m.axis_names)
    types = _scalars(b, m.axis_types, 1, "PrependByte")
    kind, platform = b.CreateString("cpu"), b.CreateString("cpu")
    b.StartObject(3)  # the abstract device
    b.PrependUOffsetTRelativeSlot(0, kind, 0)
    b.PrependUOffsetTRelativeSlot(2, platform, 0)
    device = b.EndObject()
    b.StartObject(4)
    for slot, off in ((0, sizes), (1, names), (2, types), (3, device)):
        b.PrependUOffsetTRelativeSlot(slot, off, 0)
    end: int = b.EndObject()
    return end


def _write_spec(b: Any, spec: tuple[tuple[str, ...], ...]) -> int:
    parts = []
    for axes in spec:
        names = _strings(b, axes)
        b.StartObject(1)
        b.PrependUOffsetTRelativeSlot(0, names, 0)
        parts.append(b.EndObject())
    partitions = _vector(b, parts)
    reduced, unreduced = _strings(b, ()), _strings(b, ())
    b.StartObject(3)
    for slot, off in ((0, partitions), (1, reduced), (2, unreduced)):
        b.PrependUOffsetTRelativeSlot(slot, off, 0)
    end: int = b.EndObject()
    return end


def _write_named(b: Any, s: ShardingRecord, mesh_idx: int) -> int:
    mesh, spec = _write_mesh(b, s.mesh), _write_spec(b, s.spec)
    b.StartObject(4)
    b.PrependUOffsetTRelativeSlot(0, mesh, 0)
    b.PrependUOffsetTRelativeSlot(1, spec, 0)
    b.PrependUint32Slot(3, mesh_idx, 0)
    end: int = b.EndObject()
    return end


def _write_sharding(b: Any, s: ShardingRecord | None, meshes: dict[MeshRecord, int]) -> int:
    named = _write_named(b, s, meshes[s.mesh]) if s is not None else None
    b.StartObject(3)
    if named is not None:
        b.PrependInt8Slot(0, _NAMED_SHARDING, 0)
        b.PrependUOffsetTRelativeSlot(2, named, 0)
    end: int = b.EndObject()
    return end


_NAMED_SHARDING: Final = 2


def _write_effect(b: Any, name: str) -> int:
    off = b.CreateString(name)
    b.StartObject(1)
    b.PrependUOffsetTRelativeSlot(0, off, 0)
    end: int = b.EndObject()
    return end


def _write_check(b: Any, check: tuple[int, str]) -> int:
    kind, target = check
    off = b.CreateString(target) if kind == CHECK_CUSTOM_CALL else None
    b.StartObject(2)
    b.PrependInt8Slot(0, kind, 0)
    if off is not None:
        b.PrependUOffsetTRelativeSlot(1, off, 0)
    end: int = b.EndObject()
    return end


def _write(b: Any, e: ExportedRecord) -> int:
    # Bottom-up, in the order JAX writes the fields.
    fun_name = b.CreateString(e.fun_name)
    # Each distinct aval is one table, referred to from every vector that lists it (a
    # flatbuffer may point to a table many times; readers see the same values).
    aval_tables: dict[AvalRecord, int] = {}

    def aval(a: AvalRecord) -> int:
        off = aval_tables.get(a)
        if off is None:
            off = aval_tables[a] = _write_aval(b, a)
        return off
    in_tree = _write_tree(b, e.in_tree)
    in_avals = _vector(b, [aval(a) for a in e.in_avals])
    out_tree = _write_tree(b, e.out_tree)
    out_avals = _vector(b, [aval(a) for a in e.out_avals])
    ins = e.in_shardings or (None,) * len(e.in_avals)
    outs = e.out_shardings or (None,) * len(e.out_avals)
    meshes: dict[MeshRecord, int] = {}
    named: dict[ShardingRecord, int] = {}
    for s in (*ins, *outs):
        if s is not None:
            meshes.setdefault(s.mesh, len(meshes))
            named.setdefault(s, len(named))
    in_shardings = _vector(b, [_write_sharding(b, s, meshes) for s in ins])
    out_shardings = _vector(b, [_write_sharding(b, s, meshes) for s in outs])
    ordered = _vector(b, [_write_effect(b, x) for x in e.ordered_effects])
    unordered = _vector(b, [_write_effect(b, x) for x in e.unordered_effects])
    checks = _vector(b, [_write_check(b, c) for c in e.disabled_checks])
    platforms = _strings(b, e.platforms)
    module = b.CreateByteVector(e.module)
    kept = _scalars(b, e.kept_var_idx, 2, "PrependUint16")
    vjp = _write(b, e.vjp) if e.vjp is not None else None
    # The newer layout's tables: each distinct aval once, referred to by index.
    uniques: dict[AvalRecord, int] = {}
    for a in (*e.in_avals, *e.out_avals):
        uniques.setdefault(a, len(uniques))
    unique_avals = _vector(b, [aval(a) for a in uniques])
    unique_meshes = _vector(b, [_write_mesh(b, m) for m in meshes])
    unique_named = _vector(b, [_write_named(b, s, meshes[s.mesh]) for s in named])
    in_idx = _scalars(b, [uniques[a] for a in e.in_avals], 4, "PrependUint32")
    out_idx = _scalars(b, [uniques[a] for a in e.out_avals], 4, "PrependUint32")
    in_sh = _scalars(b, [0 if s is None else 1 + named[s] for s in ins], 4, "PrependUint32")
    out_sh = _scalars(b, [0 if s is None else 1 + named[s] for s in outs], 4, "PrependUint32")
    b.StartObject(26)
    b.PrependUint16Slot(0, _WRITTEN_VERSION, 0)
    for slot, off in ((1, fun_name), (2, in_tree), (3, in_avals), (4, out_tree), (5, out_avals)):
        b.PrependUOffsetTRelativeSlot(slot, off, 0)
    b.PrependUint32Slot(18, e.nr_devices, 0)
    for slot, off in ((7, in_shardings), (8, out_shardings), (9, platforms), (10, ordered),
                      (11, unordered), (12, checks), (13, module)):
        b.PrependUOffsetTRelativeSlot(slot, off, 0)
    b.PrependUint16Slot(14, e.calling_convention_version, 0)
    b.PrependUOffsetTRelativeSlot(15, kept, 0)
    b.PrependBoolSlot(16, e.uses_global_constants, False)
    if vjp is not None:
        b.PrependUOffsetTRelativeSlot(17, vjp, 0)
    for slot, off in ((19, unique_avals), (20, unique_meshes), (21, unique_named), (22, in_idx),
                      (23, out_idx), (24, in_sh), (25, out_sh)):
        b.PrependUOffsetTRelativeSlot(slot, off, 0)
    end: int = b.EndObject()
    return end


def write_exported(e: ExportedRecord) -> bytearray:
    """The flatbuffer bytes of ``e`` (with its chain of VJPs)."""
    b = flatbuffers.Builder(1024)
    b.Finish(_write(b, e))
    out: bytearray = b.Output()
    return out


# -- reading -------------------------------------------------------------------

_U8, _I8, _U16, _I16, _U32, _I32 = (struct.Struct(f"<{c}") for c in "BbHhIi")


class _Reader:
    """Bounds-checked access to a flatbuffer."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def _get(self, s: struct.Struct, pos: int, what: str) -> int:
        if pos < 0 or pos + s.size > len(self.data):
            raise FormatError(f"the serialized exported function is truncated or corrupted: "
                              f"{what} at byte {pos} lies outside its {len(self.data)} bytes")
        value: int = s.unpack_from(self.data, pos)[0]
        return value

    def table(self, pos: int, what: str) -> _Table:
        vtable = pos - self._get(_I32, pos, what)
        size = self._get(_U16, vtable, f"the field table of {what}")
        if size < 4 or size % 2:
            raise FormatError(f"the serialized exported function is corrupted: the field "
                              f"table of {what} has a size of {size} bytes")
        self._get(_U16, vtable + size - 2, f"the field table of {what}")
        return _Table(self, pos, vtable, size, what)

    def deref(self, pos: int, what: str) -> int:
        off = self._get(_U32, pos, what)
        if off == 0:
            raise FormatError(f"the serialized exported function is corrupted: {what} "
                              "refers to itself")
        return pos + off

    def vector(self, pos: int, elem_size: int, what: str) -> tuple[int, int]:
        """``(start, length)`` of the vector at ``pos``."""
        start = self.deref(pos, what)
        n = self._get(_U32, start, f"the length of {what}")
        if start + 4 + n * elem_size > len(self.data):
            raise FormatError(f"the serialized exported function is truncated: {what} has "
                              f"{n} elements, more than its bytes hold")
        return start + 4, n


class _Table:
    __slots__ = ("r", "pos", "vtable", "size", "what")

    def __init__(self, r: _Reader, pos: int, vtable: int, size: int, what: str) -> None:
        self.r, self.pos, self.vtable, self.size, self.what = r, pos, vtable, size, what

    def _field(self, slot: int) -> int:
        voff = 4 + 2 * slot
        if voff >= self.size:
            return 0
        off = self.r._get(_U16, self.vtable + voff, self.what)
        return self.pos + off if off else 0

    def scalar(self, slot: int, s: struct.Struct, name: str) -> int:
        at = self._field(slot)
        return self.r._get(s, at, f"{self.what}.{name}") if at else 0

    def table(self, slot: int, name: str) -> _Table | None:
        at = self._field(slot)
        if not at:
            return None
        what = f"{self.what}.{name}"
        return self.r.table(self.r.deref(at, what), what)

    def string(self, slot: int, name: str) -> str | None:
        raw = self.bytes(slot, name)
        if raw is None:
            return None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"the serialized exported function is corrupted: "
                              f"{self.what}.{name} is not UTF-8 text") from None

    def bytes(self, slot: int, name: str) -> bytes | None:
        at = self._field(slot)
        if not at:
            return None
        start, n = self.r.vector(at, 1, f"{self.what}.{name}")
        return bytes(self.r.data[start:start + n])

    def scalars(self, slot: int, s: struct.Struct, name: str) -> list[int]:
        at = self._field(slot)
        if not at:
            return []
        what = f"{self.what}.{name}"
        start, n = self.r.vector(at, s.size, what)
        return [self.r._get(s, start + i * s.size, what) for i in range(n)]

    def tables(self, slot: int, name: str) -> list[_Table]:
        at = self._field(slot)
        if not at:
            return []
        start, n = self.r.vector(at, 4, f"{self.what}.{name}")
        return [self.r.table(self.r.deref(start + 4 * i, f"{self.what}.{name}[{i}]"),
                             f"{self.what}.{name}[{i}]") for i in range(n)]

    def strings(self, slot: int, name: str) -> list[str]:
        at = self._field(slot)
        if not at:
            return []
        what = f"{self.what}.{name}"
        start, n = self.r.vector(at, 4, what)
        out = []
        for i in range(n):
            s_start, s_len = self.r.vector(start + 4 * i, 1, f"{what}[{i}]")
            try:
                out.append(bytes(self.r.data[s_start:s_start + s_len]).decode("utf-8"))
            except UnicodeDecodeError:
                raise FormatError(f"the serialized exported function is corrupted: "
                                  f"{what}[{i}] is not UTF-8 text") from None
        return out


def _corrupt(what: str) -> FormatError:
    return FormatError(f"the serialized exported function is corrupted: {what}")


def _read_tree(t: _Table, depth: int) -> TreeNode:
    if depth > MAX_DEPTH:
        raise FormatError(f"the serialized pytree nests deeper than {MAX_DEPTH} levels")
    kind = t.scalar(0, _I8, "kind")
    if kind not in range(6):
        raise _corrupt(f"{t.what} has the unknown pytree kind {kind}")
    children = tuple(_read_tree(c, depth + 1) for c in t.tables(1, "children"))
    if kind == TREE_LEAF and children or kind == TREE_NONE and children:
        raise _corrupt(f"{t.what}: a {'leaf' if kind == TREE_LEAF else 'None'} node has "
                       "children")
    keys: tuple[str, ...] = ()
    if kind == TREE_DICT:
        keys = tuple(t.strings(2, "children_names"))
        if len(keys) != len(children):
            raise _corrupt(f"{t.what}: a dict node has {len(children)} children and "
                           f"{len(keys)} keys")
    name, aux = "", b""
    if kind == TREE_CUSTOM:
        name = t.string(3, "custom_name") or ""
        aux = t.bytes(4, "custom_auxdata") or b""
    return TreeNode(kind, children, keys, name, aux)


_DTYPE_NAMES: Final = {code: name for name, code in DTYPE_CODES.items()}


def _read_aval(t: _Table) -> AvalRecord:
    kind = t.scalar(0, _I8, "kind")
    if kind != _SHAPED_ARRAY:
        raise FormatError(f"{t.what} is an abstract value of kind {kind}; plait reads arrays "
                          "(kind 0) only")
    code = t.scalar(2, _I8, "dtype")
    if code not in _DTYPE_NAMES:
        raise _corrupt(f"{t.what} has the unknown dtype code {code}")
    memory = t.scalar(3, _I8, "memory_space")
    if memory not in (0, _MEMORY_DEVICE):
        raise FormatError(f"{t.what} lives in memory space {memory}; plait reads device "
                          "memory (1) only")
    return AvalRecord(tuple(t.strings(1, "shape")), _DTYPE_NAMES[code])


def _avals(t: _Table, old: int, unique: list[AvalRecord], idx: int, name: str
           ) -> tuple[AvalRecord, ...]:
    idxs = t.scalars(idx, _U32, f"{name}_idxs")
    if idxs:
        for i in idxs:
            if i >= len(unique):
                raise _corrupt(f"{t.what}.{name}_idxs refers to aval {i} of {len(unique)}")
        return tuple(unique[i] for i in idxs)
    return tuple(_read_aval(a) for a in t.tables(old, name))


def _read_mesh(t: _Table) -> MeshRecord:
    sizes = tuple(t.scalars(0, _U32, "axis_sizes"))
    names = tuple(t.strings(1, "axis_names"))
    types = tuple(t.scalars(2, _U8, "axis_types"))
    if not len(sizes) == len(names) == len(types) or any(s < 1 for s in sizes) \
            or any(x not in (AXIS_AUTO, AXIS_EXPLICIT, AXIS_MANUAL) for x in types) \
            or len(set(names)) != len(names) or math.prod(sizes) > MAX_DEVICES:
        raise _corrupt(f"{t.what} is not a mesh: axis names {names}, sizes {sizes}, "
                       f"types {types}")
    return MeshRecord(names, sizes, types)


def _read_named(t: _Table, meshes: list[MeshRecord]) -> ShardingRecord:
    if meshes:
        i = t.scalar(3, _U32, "abstract_mesh_idx")
        if i >= len(meshes):
            raise _corrupt(f"{t.what} refers to mesh {i} of {len(meshes)}")
        mesh = meshes[i]
    else:
        mt = t.table(0, "mesh")
        if mt is None:
            raise _corrupt(f"{t.what} has no mesh")
        mesh = _read_mesh(mt)
    st = t.table(1, "spec")
    if st is None:
        raise _corrupt(f"{t.what} has no partition spec")
    if st.strings(1, "reduced") or st.strings(2, "unreduced"):
        raise FormatError(f"{t.what} has reduced or unreduced axes, which plait does not "
                          "support")
    spec = tuple(tuple(p.strings(0, "axes")) for p in st.tables(0, "partitions"))
    used = [n for axes in spec for n in axes]
    if any(n not in mesh.axis_names for n in used) or len(set(used)) != len(used):
        raise _corrupt(f"{t.what} splits over axes {spec} of a mesh of axes {mesh.axis_names}")
    return ShardingRecord(mesh, spec)


def _shardings(t: _Table, old: int, idx: int, named: list[ShardingRecord],
               meshes: list[MeshRecord], n: int, name: str) -> tuple[ShardingRecord | None, ...]:
    idxs = t.scalars(idx, _U32, f"{name}_idxs")
    if idxs:
        if len(idxs) != n or any(i > len(named) for i in idxs):
            raise _corrupt(f"{t.what}.{name}_idxs does not index {len(named)} shardings for "
                           f"{n} values")
        return tuple(None if i == 0 else named[i - 1] for i in idxs)
    out: list[ShardingRecord | None] = []
    for s in t.tables(old, name):  # (older artifacts: a table per value)
        nt = s.table(2, "named_sharding")
        out.append(_read_named(nt, meshes) if nt is not None else None)
    return tuple(out)


def _read_check(t: _Table) -> tuple[int, str]:
    kind = t.scalar(0, _I8, "kind")
    if kind not in (CHECK_PLATFORM, CHECK_CUSTOM_CALL, CHECK_SHAPE_ASSERTIONS):
        raise FormatError(f"Cannot deserialize DisabledSafetyCheck with unknown kind: {kind}")
    return kind, (t.string(1, "custom_call_target") or "") if kind == CHECK_CUSTOM_CALL else ""


def _read(t: _Table, depth: int) -> ExportedRecord:
    if depth > MAX_DEPTH:
        raise FormatError(f"the serialized VJPs nest deeper than {MAX_DEPTH} levels")
    version = t.scalar(0, _U16, "serialization_version")
    if version not in _KNOWN_VERSIONS:
        raise FormatError(f"the serialized exported function has serialization version "
                          f"{version}; plait reads versions {_KNOWN_VERSIONS.start} to "
                          f"{_KNOWN_VERSIONS.stop - 1}")
    in_tree_t, out_tree_t = t.table(2, "in_tree"), t.table(4, "out_tree")
    if in_tree_t is None or out_tree_t is None:
        raise _corrupt("the input or output pytree structure is missing")
    module = t.bytes(13, "mlir_module_serialized")
    if not module:
        raise _corrupt("the StableHLO module is missing")
    unique = [_read_aval(a) for a in t.tables(19, "unique_avals")]
    meshes = [_read_mesh(m) for m in t.tables(20, "unique_abstract_meshes")]
    named = [_read_named(s, meshes) for s in t.tables(21, "unique_named_shardings")]
    in_avals = _avals(t, 3, unique, 22, "in_avals")
    out_avals = _avals(t, 5, unique, 23, "out_avals")
    vjp_t = t.table(17, "vjp")
    return ExportedRecord(
        fun_name=t.string(1, "function_name") or "",
        in_tree=_read_tree(in_tree_t, 0),
        in_avals=in_avals,
        out_tree=_read_tree(out_tree_t, 0),
        out_avals=out_avals,
        nr_devices=t.scalar(18, _U32, "nr_devices") or t.scalar(6, _I16, "nr_devices_short"),
        platforms=tuple(t.strings(9, "platforms")),
        ordered_effects=tuple(e.string(0, "type_name") or ""
                              for e in t.tables(10, "ordered_effects")),
        unordered_effects=tuple(e.string(0, "type_name") or ""
                                for e in t.tables(11, "unordered_effects")),
        disabled_checks=tuple(_read_check(c) for c in t.tables(12, "disabled_checks")),
        module=module,
        calling_convention_version=t.scalar(14, _U16, "calling_convention_version"),
        kept_var_idx=tuple(t.scalars(15, _U16, "module_kept_var_idx")),
        uses_global_constants=bool(t.scalar(16, _U8, "uses_global_constants")),
        vjp=_read(vjp_t, depth + 1) if vjp_t is not None else None,
        in_shardings=_shardings(t, 7, 24, named, meshes, len(in_avals), "in_shardings"),
        out_shardings=_shardings(t, 8, 25, named, meshes, len(out_avals), "out_shardings"),
    )


def read_exported(data: bytes | bytearray | memoryview) -> ExportedRecord:
    """Read a serialized exported function.

    Raises:
      FormatError: the bytes are truncated, corrupted, or of an unknown version.
    """
    raw = bytes(data)
    r = _Reader(raw)
    return _read(r.table(r.deref(0, "the root"), "Exported"), 0)


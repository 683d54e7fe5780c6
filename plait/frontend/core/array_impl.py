"""``ArrayImpl``: a concrete array living in a device buffer.

Arrays are immutable.  They print like JAX's (``Array([1., 2.], dtype=float32)``),
convert to NumPy with ``np.asarray`` (one copy to the host, then cached), and
support every operator and method of :class:`plait.Array`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.layouts import Format, Layout
from plait.frontend.core.tokens import Token
from plait.frontend.core.tree_util import dispatch_registry
from plait.ir import dtypes as dt
from plait.ir.atoms import Literal
from plait.ir.avals import AbstractToken, AbstractValue, ShapedArray, shaped
from plait.ir.caches import BoundedDict
from plait.ir.config import values as _config
from plait.ir.errors import ArgumentError
from plait.ir.sharding import NamedSharding
from plait.lowering import multi_device, runtime

__all__ = ["ArrayImpl", "Shard", "device_buffer", "scalar_buffer", "wrap_output",
           "cached_scalar_buffers", "result_array", "committed_device"]


class Shard:
    """One device's part of an array: the device, the index of the part in the whole
    array, which replica of that part it is, and the data (an Array on the device)."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device: Any, index: tuple[slice, ...], replica_id: int,
                 data: ArrayImpl) -> None:
        self.device = device
        self.index = index
        self.replica_id = replica_id
        self.data = data

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")  # (JAX's: the values)


class ArrayImpl(Array):
    """A concrete array: an abstract value and the device buffer holding it.

    The buffer is a jaxlib array.  Donating it to a jitted call deletes it (jaxlib
    marks it deleted), after which the Array may no longer be used.
    """

    # (``_key_use``: a key array's consumption, set only while ``debug_key_reuse`` is on;
    # see plait.frontend.core.key_use. Arrays can be weakly referenced, as JAX's: libraries
    # cache by them, TensorFlow Probability among them.)
    __slots__ = ("_aval", "_buf", "_npy", "_key_use", "__weakref__")

    def __init__(self, aval: ShapedArray, buf: Any, npy: np.ndarray | None = None) -> None:
        self._aval = aval
        self._buf = buf
        self._npy = npy

    @classmethod
    def from_numpy(cls, value: np.ndarray, weak_type: bool = False,
                   device: Any = None) -> ArrayImpl:
        """Copy a NumPy array (of a canonical dtype) to the device, or (``device`` a
        :class:`NamedSharding`) to a mesh's devices, each getting its part."""
        value = np.asarray(value)
        aval = ShapedArray(value.shape, value.dtype, weak_type)
        if isinstance(device, NamedSharding):
            buf = multi_device.put_sharded(value, aval, device)
            return cls(aval.update(sharding=device), buf)
        return cls(aval, runtime.device_put(value, aval, device))

    @property
    def aval(self) -> ShapedArray:
        """The abstract value: shape, dtype and weak type."""
        return self._aval

    def buffer(self) -> Any:
        """The device buffer.

        Raises:
          RuntimeError: the array was deleted (donated to a jitted call).
        """
        buf = self._buf
        if buf.is_deleted():
            raise RuntimeError("Array has been deleted (it was donated to a jitted call)")
        return buf

    @property
    def _value(self) -> np.ndarray:
        buf = self.buffer()
        npy = self._npy
        if npy is None:
            npy = runtime.to_numpy(buf, self._aval)
            npy.flags.writeable = False
            self._npy = npy
        return npy

    def block_until_ready(self) -> ArrayImpl:
        """Wait until the value is computed; returns ``self``."""
        self.buffer().block_until_ready()
        return self

    def is_ready(self) -> bool:
        """Whether the value is computed (a call would not wait)."""
        return bool(self.buffer().is_ready())

    def copy_to_host_async(self) -> None:
        """Start copying the value to the host, so that a later ``np.asarray`` is quick."""
        if self._npy is None:
            runtime.copy_to_host_async(self.buffer())

    def on_device_size_in_bytes(self) -> int:
        """The bytes the buffer takes on its device."""
        return int(self.buffer().on_device_size_in_bytes())

    def unsafe_buffer_pointer(self) -> int:
        """The address of the device buffer (valid while the Array lives)."""
        return int(self.buffer().unsafe_buffer_pointer())

    def addressable_data(self, index: int) -> ArrayImpl:
        """The data on the ``index``-th addressable device (an array on one device).

        Raises:
          IndexError: no such shard.
        """
        shards = self.addressable_shards
        if not -len(shards) <= index < len(shards):
            raise IndexError(f"expected a shard index in [0, {len(shards)}), but got {index}")
        return shards[index].data

    @property
    def sharding(self) -> Any:
        """Where the array lives: a ``SingleDeviceSharding``, or a
        :class:`~plait.sharding.NamedSharding` over a mesh."""
        s = self._buf._sharding
        if type(s) is multi_device.MeshSharding:
            return s.named if s.named is not None else s
        if type(s) is not runtime.Sharding and hasattr(s, "_device"):
            # A shard of a multi-device array: its buffer has jaxlib's own class.
            return runtime.sharding_for(s._device)
        return s

    @property
    def committed(self) -> bool:
        """Whether the array is held where it is (JAX's committed arrays): laid out over
        several devices, or on a device other than the default one.  plait moves an
        array on the default device to where a computation's other operands are, so it
        counts those as uncommitted (see :func:`committed_device`)."""
        s = self._buf._sharding
        return type(s) is not runtime.Sharding or s is not runtime.sharding_for(
            runtime.default_device())

    @property
    def format(self) -> Format:
        """The array's layout (XLA's default, row-major: plait uses no other) and
        sharding."""
        return Format(Layout.default(self.ndim), self.sharding)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        return bool(self._buf._sharding.is_fully_replicated)

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process holds every part of the array."""
        return bool(self._buf._sharding.is_fully_addressable)

    @property
    def addressable_shards(self) -> list[Shard]:
        """The parts of the array held by this process's devices, with their indices."""
        buf = self.buffer()
        s = buf._sharding
        if type(s) is not multi_device.MeshSharding:
            full = tuple(slice(None) for _ in self.shape)
            return [Shard(self.device, full, 0, self)]
        pieces = multi_device.pieces(buf)
        positions = multi_device.shard_positions(buf)
        if s.named is None:
            raise NotImplementedError(f"addressable_shards of an array laid out as {s}")
        indices = s.named.position_indices(self.shape)
        shape = s.named.shard_shape(self.shape)
        aval = self._aval.update(shape=shape)
        seen: dict[Any, int] = {}
        out = []
        for piece, p in zip(pieces, positions):
            idx = indices[p]
            key = tuple((i.start, i.stop) for i in idx)
            replica = seen[key] = seen.get(key, -1) + 1
            out.append(Shard(multi_device.piece_device(piece), idx, replica,
                             ArrayImpl(aval, piece)))
        return out

    @property
    def global_shards(self) -> list[Shard]:
        """Every part of the array (here: the addressable ones; all of them in one
        process)."""
        return self.addressable_shards

    def is_deleted(self) -> bool:
        """Whether the buffer was deleted (donated to a jitted call, or by :meth:`delete`)."""
        return bool(self._buf.is_deleted())

    def delete(self) -> None:
        """Release the device buffer."""
        self._buf.delete()
        self._npy = None

    @property
    def device(self) -> Any:
        """The device holding the buffer (a property, as in JAX).

        Raises:
          ValueError: the array spans several devices.
        """
        s = self._buf._sharding
        if type(s) is multi_device.MeshSharding:
            if len(s._devices) != 1:
                raise ValueError("Length of devices is greater than 1. Please use `.devices()`.")
            return s._devices[0]
        return s._device

    def devices(self) -> set[Any]:
        """The set of devices holding the array."""
        s = self._buf._sharding
        if type(s) is multi_device.MeshSharding:
            return set(s._devices)
        return {s._device}

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        v = self._value
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        return v.copy() if copy else v

    def _scalar(self, kind: str) -> Any:
        # As JAX 0.10.2: only a 0-d array converts (NumPy deprecates size-1 arrays).
        if self.shape != ():
            raise TypeError(f"only scalar (0-d) arrays can be converted to Python {kind}s, "
                            f"but this array has shape {self.shape}")
        return self._value.item()

    def __bool__(self) -> bool:
        if self.size == 0:  # ValueErrors, as NumPy's and JAX's
            raise ValueError("The truth value of an empty array is ambiguous. Use "
                             "`array.size > 0` to check that an array is not empty.")
        if self.size != 1:
            raise ValueError(f"The truth value of an array with more than one element is "
                             f"ambiguous (this array has shape {self.shape}). Use a.any() "
                             f"or a.all()")
        return bool(self._value.reshape(()).item())

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if not (dt.is_integer(self.dtype) or dt.is_bool(self.dtype)) or self.shape != ():
            raise TypeError(f"only integer scalar arrays can be converted to an index, "
                            f"but got {self.aval.str_short(short_dtypes=False)}")
        return int(self._value)

    def item(self, *args: int) -> Any:
        """An element as a Python scalar: the only one, or the one ``args`` picks (a flat
        index, or one index per axis), as NumPy's ``item``.

        Raises:
          ValueError: no ``args`` and more than one element.
          IndexError: ``args`` out of bounds.
          TypeError: a key array (its elements are no Python scalars).
        """
        if dt.is_key(self.dtype):
            raise TypeError(f"item: expected an array of numbers, but got a key array "
                            f"({self.dtype}); use random.key_data for its bits")
        return self._value.item(*args)

    def tolist(self) -> Any:
        """The elements as nested Python lists."""
        return self._value.tolist()

    def __format__(self, spec: str) -> str:
        if dt.is_key(self.dtype):  # (JAX formats a key array as its str)
            return format(str(self), spec)
        if self.shape == ():
            return format(self._value.item(), spec)
        return format(self._value, spec)

    def __repr__(self) -> str:
        if dt.is_key(self.dtype):  # as JAX prints key arrays: the type, then the key data
            data = self._value[dt.key_field(self.dtype)]
            return (f"Array({self.shape}, dtype={dt.short_name(self.dtype)}) overlaying:\n"
                    f"{data}")
        prefix = "Array("
        weak = ", weak_type=True" if self.weak_type else ""
        dtype_str = f"dtype={self.dtype.name}{weak})"
        width = int(np.get_printoptions()["linewidth"])
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(self._value, prefix=prefix, suffix=",", separator=", ",
                                   max_line_width=width)
        last = len(body) - body.rfind("\n") + 1
        # As JAX does: a long last line pushes the dtype further right, not down.
        sep = " " * len(prefix) if last + len(dtype_str) + 1 > width else " "
        return f"{prefix}{body},{sep}{dtype_str}"

    def __str__(self) -> str:
        return repr(self) if dt.is_key(self.dtype) else str(self._value)

    def __reduce__(self) -> tuple[Any, ...]:
        return (ArrayImpl.from_numpy, (np.array(self._value), self.weak_type))

    def __copy__(self) -> ArrayImpl:
        return self

    def __deepcopy__(self, memo: Any) -> ArrayImpl:
        return self


def wrap_output(aval: AbstractValue, buf: Any) -> Any:
    """A compiled program's result as the user sees it: an Array, except that float0
    values (integer tangents, which carry no data) are NumPy zeros, as in JAX, and a
    token is a :class:`~plait.frontend.core.tokens.Token`."""
    if type(aval) is AbstractToken:
        return Token(buf)
    aval = shaped(aval)
    return np.zeros(aval.shape, dt.float0) if aval.dtype == dt.float0 else ArrayImpl(aval, buf)


_new = object.__new__


def result_array(aval: ShapedArray, bufs: Sequence[Any]) -> ArrayImpl:
    """The Array of a result of jit's fast path, ``bufs`` holding its one buffer.

    Called by jaxlib's C++ once per result of every cached call: built in one
    Python frame (a lambda calling the class takes two, about 30 ns more).
    """
    a = _new(ArrayImpl)
    a._aval = aval
    a._buf = bufs[0]
    a._npy = None
    return a


def device_buffer(x: Any, aval: ShapedArray, reuse: bool = True, device: Any = None) -> Any:
    """The device buffer of an argument of type ``aval``: an Array's own, a copy of a
    NumPy array, or (``reuse``: unless it is donated) the cached buffer of a scalar.
    With ``device`` (a program placed on a device other than the default one), values
    elsewhere are copied there.  A token's buffer is passed as it is."""
    if type(x) is Token:
        return x._buf
    if device is not None:
        buf = x.buffer() if type(x) is ArrayImpl else None
        if buf is not None and buf._sharding is runtime.sharding_for(device):
            return buf
        if buf is not None:
            return runtime.copy_to_device(buf, aval, device)
        return runtime.device_put(np.asarray(x, aval.dtype), aval, device)
    if type(x) is ArrayImpl:
        return x.buffer()
    if reuse and type(x) in _SCALAR_TYPES:
        return scalar_buffer(Literal(x, aval))
    return runtime.device_put(np.asarray(x, aval.dtype), aval)


def committed_device(args: Sequence[Any]) -> Any:
    """The device a computation on ``args`` runs on, or None for the default device.

    As in JAX, a computation follows the data placed on a device.  plait counts
    Arrays on the default device as movable (JAX's uncommitted arrays), so this is
    the one other device the single-device Arrays among ``args`` live on.

    Raises:
      ArgumentError: Arrays on two different devices other than the default one.
    """
    home = runtime.sharding_for(runtime.default_device())
    found = None
    for a in args:
        if type(a) is ArrayImpl:
            s = a._buf._sharding
            if s is not home and type(s) is runtime.Sharding and s is not found:
                if found is not None:
                    raise ArgumentError(
                        "expected the arguments of one computation on one device, but got "
                        f"arrays on {found._device} and on {s._device}: move them to one "
                        "device with plait.device_put")
                found = s
    return None if found is None else found._device


_SCALAR_TYPES = frozenset((bool, int, float, complex))
_scalar_buffers: BoundedDict[Literal, Any] = BoundedDict("scalar device buffers")


def scalar_buffer(lit: Literal) -> Any:
    """A device buffer holding ``lit``, cached: a program's constant scalar arguments
    (hyperparameters, literals of eager ops) are copied to the device once, and a
    buffer that has been on the device for a while is ready when a program runs."""
    buf = _scalar_buffers.data.get(lit)
    # (Under a host-to-device guard, transferred again: JAX transfers it on every use.)
    if buf is None or _config.guard_host_to_device:
        buf = runtime.device_put(np.asarray(lit.val, lit.aval.dtype), lit.aval)
        _scalar_buffers[lit] = buf
    return buf


def cached_scalar_buffers() -> list[Any]:
    """The buffers :func:`scalar_buffer` keeps (plait's, not any Array's)."""
    return list(_scalar_buffers.data.values())


# jit's C++ dispatcher sees through Arrays to their buffers, reading the slot itself
# (a Python flatten function would cost a call per Array per jitted call).  Results
# come back as Arrays through plait.frontend.api.dispatch's result nodes.
dispatch_registry.register_dataclass_node(ArrayImpl, ["_buf"], ["_aval"])


"""Arrays from host bytes, strings and files: ``frombuffer``, ``fromstring``, ``load``,
``save``, ``savez``; and ``fromfile``/``fromiter``, refused as JAX refuses them (reading
a file or consuming an iterator is a side effect a trace would not repeat)."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.numpy.creation import asarray

__all__ = ["frombuffer", "fromstring", "fromfile", "fromiter", "load", "save", "savez"]



def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Array:
    """The bytes of ``buffer`` read as a 1-d array of ``dtype`` (``numpy.frombuffer``),
    copied to the device."""
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Array:
    """The numbers written in ``string``, separated by ``sep`` (``numpy.fromstring``)."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def _impure(name: str, effect: str) -> NotImplementedError:
    return NotImplementedError(
        f"plait.numpy.{name}() is not implemented because it may be non-pure and thus "
        "unsafe for use with jit and other plait transformations. Consider using "
        f"plait.numpy.asarray(np.{name}(...)) instead, outside transformed functions: "
        f"{effect} is a side effect a trace does not repeat.")


def fromfile(*args: Any, **kwargs: Any) -> Array:
    """Not implemented; use ``asarray(numpy.fromfile(...))`` outside transformations."""
    raise _impure("fromfile", "reading the file")


def fromiter(*args: Any, **kwargs: Any) -> Array:
    """Not implemented; use ``asarray(numpy.fromiter(...))`` outside transformations."""
    raise _impure("fromiter", "consuming the iterable")


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``numpy.load``, an array result copied to the device (``bfloat16`` arrays, which
    NumPy saves as two-byte voids, come back as ``bfloat16``); other results (``.npz``
    archives, pickled objects) are returned as NumPy gives them."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == np.dtype("V2"):
            out = out.view(ml_dtypes.bfloat16)
        if out.dtype != object:
            return asarray(out)
    return out


def save(file: Any, arr: Any, allow_pickle: bool = True) -> None:
    """``numpy.save`` of ``arr`` (an Array is copied to the host)."""
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file: Any, *args: Any, allow_pickle: bool = True, **kwds: Any) -> None:
    """``numpy.savez`` of the arrays (Arrays are copied to the host)."""
    named: dict[str, Any] = {k: np.asarray(v) for k, v in kwds.items()}
    np.savez(file, *[np.asarray(a) for a in args], allow_pickle=allow_pickle, **named)

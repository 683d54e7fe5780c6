"""The Python array API standard's namespace metadata and the functions it adds to NumPy's.

``plait.numpy`` is an array API namespace (version 2024.12), as ``jax.numpy`` is:
``x.__array_namespace__()`` returns it, ``__array_namespace_info__()`` describes
it.  This module also holds the dtype queries and small NumPy helpers that
``jax.numpy`` takes from NumPy or defines beside them (``isdtype``, ``can_cast``,
``isscalar``, the abstract scalar types ``number``, ``floating`` ...).
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.dlpack import dlpack_device as dlpack_device
from plait.frontend.core.dlpack import from_dlpack
from plait.frontend.core.dlpack import to_dlpack as to_dlpack
from plait.frontend.numpy._core import aval_of, canonical_axis, check_arraylike
from plait.frontend.numpy.creation import asarray
from plait.frontend.numpy.functional import vectorize
from plait.frontend.numpy.linalg_ops import matmul
from plait.frontend.numpy.manipulation import moveaxis
from plait.frontend.numpy.ufuncs import conj
from plait.ir import config
from plait.ir import dtypes as dt
from plait.lowering import runtime

__all__ = ["__array_api_version__", "__array_namespace_info__", "ArrayNamespaceInfo",
           "isdtype", "can_cast", "unstack", "matvec", "vecmat", "iscomplexobj", "isrealobj",
           "isscalar", "iterable", "array_repr", "array_str", "printoptions",
           "set_printoptions", "get_printoptions", "from_dlpack", "number", "inexact",
           "floating", "integer", "signedinteger", "unsignedinteger", "complexfloating",
           "generic", "character", "flexible", "object_"]

__array_api_version__: Final = "2024.12"

# NumPy's own helpers and abstract scalar types, which jax.numpy re-exports as they are.
can_cast = np.can_cast
iterable = np.iterable
array_repr = np.array_repr
array_str = np.array_str
printoptions = np.printoptions
set_printoptions = np.set_printoptions
get_printoptions = np.get_printoptions
number = np.number
inexact = np.inexact
floating = np.floating
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
complexfloating = np.complexfloating
generic = np.generic
character = np.character
flexible = np.flexible
object_ = np.object_

_SIGNED: Final = (dt.int8, dt.int16, dt.int32, dt.int64)
_UNSIGNED: Final = (dt.uint8, dt.uint16, dt.uint32, dt.uint64)
_FLOATS: Final = (dt.bfloat16, dt.float16, dt.float32, dt.float64)
_COMPLEX: Final = (dt.complex64, dt.complex128)

_KINDS: Final[dict[str, tuple[np.dtype[Any], ...]]] = {
    "bool": (dt.bool_,),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED + _UNSIGNED,
    "real floating": _FLOATS,
    "complex floating": _COMPLEX,
    "numeric": _SIGNED + _UNSIGNED + _FLOATS + _COMPLEX,
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a kind name (``'bool'``, ``'signed integer'``,
    ``'unsigned integer'``, ``'integral'``, ``'real floating'``, ``'complex floating'``,
    ``'numeric'``), a dtype, or a tuple of those (any matches).

    Raises:
      ValueError: an unknown kind name.
      TypeError: a kind that is neither a name, a dtype nor a tuple.
    """
    the_dtype = np.dtype(dtype)
    options: set[np.dtype[Any]] = set()
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str) and k in _KINDS:
            options.update(_KINDS[k])
            continue
        try:
            options.add(np.dtype(k))
        except TypeError as e:
            if isinstance(k, str):
                raise ValueError(f"Unrecognized kind={k!r} expected one of {list(_KINDS)}, "
                                 "or a compatible input for jnp.dtype()") from None
            raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={k!r}") \
                from e
    return the_dtype in options


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``, as a tuple (the inverse of ``stack``)."""
    check_arraylike("unstack", x)
    arr = asarray(x)
    if arr.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array "
                         "was passed.")
    ax = canonical_axis(axis, arr.ndim)
    moved = moveaxis(arr, ax, 0)
    return tuple(moved[i] for i in range(moved.shape[0]))


def matvec(x1: Any, x2: Any, /) -> Array:
    """Batched matrix-vector product: ``x1`` of shape ``(..., N, M)`` with ``x2`` of
    shape ``(..., M)`` gives ``(..., N)`` (leading dimensions broadcast)."""
    check_arraylike("matvec", x1, x2)
    out: Array = vectorize(matmul, signature="(n,m),(m)->(n)")(x1, x2)
    return out


def vecmat(x1: Any, x2: Any, /) -> Array:
    """Batched conjugate vector-matrix product: ``conj(x1)`` of shape ``(..., M)`` with
    ``x2`` of shape ``(..., M, N)`` gives ``(..., N)``."""
    check_arraylike("matvec", x1, x2)
    out: Array = vectorize(matmul, signature="(n),(n,m)->(m)")(conj(x1), x2)
    return out


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (or is a complex scalar)."""
    if isinstance(x, complex | np.complexfloating):
        return True
    if x is None or isinstance(x, bool | int | float | str | np.generic):
        return False
    av = aval_of(x)
    d = av.dtype if av is not None else getattr(x, "dtype", None)
    if d is None:
        d = asarray(x).dtype
    return bool(np.issubdtype(np.dtype(d), np.complexfloating))


def isrealobj(x: Any) -> bool:
    """``not iscomplexobj(x)``."""
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar: a Python or NumPy scalar, or (unlike NumPy, as
    in JAX, so that the answer does not change under ``jit``) an array with no
    dimensions."""
    if np.isscalar(element):
        return True
    if isinstance(element, np.ndarray | Array):
        return element.ndim == 0
    return False


def _dtype_dict(kind: str) -> dict[str, np.dtype[Any]]:
    # The array API's dtypes: bfloat16 and float16 are not among them, nor are the
    # 64-bit types without x64 mode.
    allowed = {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32",
               "complex64"}
    if config.enable_x64():
        allowed |= {"int64", "uint64", "float64", "complex128"}
    return {d.name: d for d in _KINDS[kind] if d.name in allowed}


class ArrayNamespaceInfo:
    """The array API's inspection object (``__array_namespace_info__()``)."""

    _capabilities: Final = {
        "boolean indexing": False,  # not within transformations: shapes must be static
        "data-dependent shapes": False,
        "max dimensions": 64,  # XLA's limit
    }

    def capabilities(self) -> dict[str, Any]:
        """What the namespace supports (as ``jax.numpy``'s answer)."""
        return dict(self._capabilities)

    def default_device(self) -> None:
        """``None``: arrays are placed on the default device unless told otherwise."""
        return None

    def devices(self) -> list[Any]:
        """``None`` (meaning "uncommitted", as in JAX) followed by the CPU devices."""
        return [None, *runtime.client().devices()]

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype[Any]]:
        """The default dtypes of each kind (32-bit unless x64 mode is on)."""
        del device
        return {"real floating": dt.canonicalize(dt.float64),
                "complex floating": dt.canonicalize(dt.complex128),
                "integral": dt.canonicalize(dt.int64),
                "indexing": dt.canonicalize(dt.int64)}

    def dtypes(self, *, device: Any = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, np.dtype[Any]]:
        """The array API dtypes available, of ``kind`` (a name, a tuple of names, or
        ``None`` for the numeric ones and ``bool``).

        Raises:
          KeyError: an unknown kind name.
        """
        del device
        if kind is None:
            return _dtype_dict("numeric") | _dtype_dict("bool")
        out: dict[str, np.dtype[Any]] = {}
        for k in kind if isinstance(kind, tuple) else (kind,):
            out |= _dtype_dict(k)
        return out


def to_device(x: Array, device: Any, /, *, stream: Any = None) -> Array:
    """``x`` on ``device`` (``x`` itself when it is there already): ``x.to_device``.

    Raises:
      NotImplementedError: a ``stream``, or a traced ``x`` asked to move.
    """
    if stream is not None:
        raise NotImplementedError("to_device: streams are not supported (plait runs on the "
                                  "CPU); leave stream=None")
    if device is None:
        return x
    if not isinstance(x, ArrayImpl):
        raise NotImplementedError(f"to_device needs a concrete array, but got a traced value "
                                  f"of type {x.aval.str_short(short_dtypes=False)}")
    if device in x.devices():
        return x
    return ArrayImpl.from_numpy(np.asarray(x), x.weak_type, device)


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The array API's inspection object for ``plait.numpy``."""
    return ArrayNamespaceInfo()

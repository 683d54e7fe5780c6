"""Array creation: ``zeros``, ``ones``, ``full``, ``arange``, ``linspace``, ``eye``, ``asarray``,
``copy``, ``meshgrid``."""

from __future__ import annotations

import math
import operator
from typing import Any, cast, overload
from typing import Literal as Static

import numpy as np

from plait.frontend import lax
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.api.explicit_sharding import reshard
from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.promotion import dtype_and_weak, result_type_info
from plait.frontend.core.tracing import Tracer
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.lax.ops import placed_like
from plait.frontend.numpy._core import (
    _host,
    as_array,
    aval_of,
    check_arraylike,
    convert,
    dtype_of,
    is_scalar,
)
from plait.frontend.numpy._core import shape as shape_of
from plait.frontend.numpy.manipulation import broadcast_shapes, broadcast_to, reshape
from plait.ir import dtypes as dt
from plait.ir.atoms import Literal

__all__ = ["zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
           "empty_like", "arange", "linspace", "eye", "identity", "asarray", "array", "astype",
           "copy", "meshgrid"]


def _shape_arg(shape_: Any) -> tuple[int, ...]:
    """A shape: an int or a sequence of ints.

    Raises:
      TypeError: not ints (``2.5``, a traced value), or a negative dimension
        (``TypeError`` as in ``jax.numpy``).
    """
    dims: tuple[int, ...]
    try:
        dims = (operator.index(shape_),)
    except TypeError:
        try:
            dims = tuple(operator.index(d) for d in shape_)
        except TypeError:
            raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                            f"but got {shape_!r}") from None
    if any(d < 0 for d in dims):
        raise TypeError(f"negative dimensions are not allowed, but got shape {dims}")
    return dims


def _user_dtype(dtype: Any, name: str) -> np.dtype[Any]:
    # A 64-bit dtype narrows with JAX's warning (naming ``name``) when x64 is off.
    return check_user_dtype(dtype, name)


def _default_float() -> np.dtype[Any]:
    return dt.canonicalize(dt.float64)


def _place(x: Array, device: Any, out_sharding: Any = None) -> Array:
    """``x`` on ``device`` or with its type sharded by ``out_sharding``, if given."""
    if out_sharding is not None:
        if device is not None:
            raise ValueError("pass only one of device= and out_sharding=")
        return reshard(x, out_sharding)  # type: ignore[no-any-return]  # (one array in)
    # ``device=``: a concrete result moves there; a traced one is left to its trace.
    if device is None or not isinstance(x, ArrayImpl):
        return x
    return x.to_device(device)


def _place_like(x: Array, like: Any, device: Any, out_sharding: Any) -> Array:
    """``x`` placed as asked, else laid out as ``like`` is (see
    :func:`~plait.frontend.lax.ops.placed_like`)."""
    if device is not None or out_sharding is not None:
        return _place(x, device, out_sharding)
    return placed_like(x, like)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None,
         out_sharding: Any = None) -> Array:
    """An array of ``shape`` filled with ``fill_value`` (broadcast if it is an array),
    on ``device`` if given, its type sharded by ``out_sharding`` if given.

    Without ``dtype``, a Python scalar fill value gives a weakly typed result.
    """
    check_arraylike("full", fill_value)
    dims = _shape_arg(shape)
    if np.ndim(fill_value) != 0 if aval_of(fill_value) is None else shape_of(fill_value) != ():
        out = _place(broadcast_to(
            _asarray(fill_value, None if dtype is None else _user_dtype(dtype, "full")), dims),
            device)
        return out if out_sharding is None else reshard(out, out_sharding)
    if dtype is None:
        d, weak = _type_of(fill_value)
    else:
        d, weak = _user_dtype(dtype, "full"), False
    if d == dt.float0:
        return _float0(dims)
    value = convert(fill_value, d, weak, rounded=False)
    return _place(lax.broadcast_in_dim(value, dims, (), out_sharding=out_sharding), device)


def _float0(shape: tuple[int, ...]) -> Array:
    # float0 has no values and no device representation: JAX makes a host array of it
    # (a NumPy array, though typed as the functions' results are).
    return cast(Array, np.zeros(shape, dt.float0))


def _type_of(x: Any) -> tuple[np.dtype[Any], bool]:
    if aval_of(x) is not None or is_scalar(x):
        return dtype_and_weak(x)
    return dtype_of(x), False


def zeros(shape: Any, dtype: Any = None, *, device: Any = None,
          out_sharding: Any = None) -> Array:
    """An array of zeros (the default float dtype unless ``dtype`` is given)."""
    return full(shape, 0, _default_float() if dtype is None else _user_dtype(dtype, "zeros"),
                device=device, out_sharding=out_sharding)


def ones(shape: Any, dtype: Any = None, *, device: Any = None,
         out_sharding: Any = None) -> Array:
    """An array of ones (the default float dtype unless ``dtype`` is given)."""
    return full(shape, 1, _default_float() if dtype is None else _user_dtype(dtype, "ones"),
                device=device, out_sharding=out_sharding)


def empty(shape: Any, dtype: Any = None, *, device: Any = None,
          out_sharding: Any = None) -> Array:
    """An array of the given shape; plait fills it with zeros."""
    return full(shape, 0, _default_float() if dtype is None else _user_dtype(dtype, "empty"),
                device=device, out_sharding=out_sharding)


def _like(name: str, a: Any, fill: Any, dtype: Any, shape_: Any) -> Array:
    if _is_spec(a):
        # As JAX's: anything with a shape and a dtype (a ShapeDtypeStruct) describes one.
        like_shape = tuple(a.shape)
        like = dt.canonicalize(np.dtype(a.dtype)), bool(getattr(a, "weak_type", False))
    else:
        check_arraylike(name, a, fill)
        like_shape, like = shape_of(a), _type_of(a)
    s = like_shape if shape_ is None else _shape_arg(shape_)
    if np.ndim(fill) != 0 if aval_of(fill) is None else shape_of(fill) != ():
        d = like[0] if dtype is None else _user_dtype(dtype, name)
        return broadcast_to(asarray(fill, d), s)
    # The result keeps the dtype and the weak type of ``a`` unless ``dtype`` is given.
    d, weak = like if dtype is None else (_user_dtype(dtype, name), False)
    if d == dt.float0:
        return _float0(s)
    value = convert(fill, d, weak)
    if aval_of(value) is not None and value.aval.weak_type != weak:
        value = lax.convert_element_type(value, d, weak)
    return lax.broadcast_in_dim(value, s, ())


def _is_spec(a: Any) -> bool:
    return aval_of(a) is None and not isinstance(a, np.ndarray | np.generic) and \
        hasattr(a, "shape") and hasattr(a, "dtype")


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
               out_sharding: Any = None) -> Array:
    """Zeros with the shape, dtype and weak type of ``a``."""
    return _place_like(_like("zeros_like", a, 0, dtype, shape), a, device, out_sharding)


def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
              out_sharding: Any = None) -> Array:
    """Ones with the shape, dtype and weak type of ``a``."""
    return _place_like(_like("ones_like", a, 1, dtype, shape), a, device, out_sharding)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *,
              device: Any = None, out_sharding: Any = None) -> Array:
    """``fill_value`` with the shape, dtype and weak type of ``a``."""
    return _place_like(_like("full_like", a, fill_value, dtype, shape), a, device, out_sharding)


def empty_like(prototype: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
               out_sharding: Any = None) -> Array:
    """An array like ``prototype``; plait fills it with zeros."""
    # JAX 0.10.2's warning for a narrowed dtype names ones_like here; so does plait's.
    return _place(_like("ones_like", prototype, 0, dtype, shape), device, out_sharding)


def _concrete_scalar(name: str, what: str, v: Any) -> Any:
    if aval_of(v) is not None:
        if isinstance(v, Tracer):
            raise TypeError(f"{name}: expected a concrete {what}, but got a traced value "
                            f"{v.aval.str_short(short_dtypes=False)}; the length of the result "
                            "must be known "
                            "when tracing")
        v = v.item() if v.aval.shape == () else v
    if np.ndim(v) != 0:
        raise ValueError(f"{name}: arguments must be scalars, but got {what}={v!r}")
    return v


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *,
           device: Any = None, out_sharding: Any = None) -> Array:
    """Evenly spaced values ``start, start + step, ...`` below ``stop`` (static bounds).

    Computed as ``start + step * iota`` in the result dtype (in ``float32`` for
    16-bit floats), as JAX does, so float results may differ from NumPy's in
    the last bit.

    Raises:
      TypeError: a traced bound, or a bool dtype.
      ValueError: a complex or non-scalar bound.
    """
    return _place(_arange(start, stop, step, dtype), device, out_sharding)


def _arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Array:
    check_arraylike("arange", *[v for v in (start, stop, step) if v is not None])
    start_name = "stop" if stop is None and step is None else "start"
    start = _concrete_scalar("arange", start_name, start)
    stop = None if stop is None else _concrete_scalar("arange", "stop", stop)
    step = None if step is None else _concrete_scalar("arange", "step", step)
    bounds = [v for v in (start, stop, step) if v is not None]
    if any(np.iscomplexobj(v) for v in bounds):
        raise ValueError("arange: complex start/stop/step are not supported")
    if dtype is None:
        d = result_type_info([_type_of(v) for v in bounds])[0]
    else:
        d = _user_dtype(dtype, "arange")
    if d == dt.bool_:
        raise TypeError("arange: a bool dtype is not supported (iota does not accept bool)")
    if stop is None:
        start, stop = 0, start
    if step is not None:
        working = dt.float32 if d in (dt.float16, dt.bfloat16) else d
        size = max(0, math.ceil((stop - start) / step))
        iota = lax.iota(working, size)
        out = lax.add(lax.convert_element_type(start, working),
                      lax.mul(lax.convert_element_type(step, working), iota))
        return lax.convert_element_type(out, d)
    size = max(0, math.ceil(stop - start))
    if start == 0:
        return lax.iota(d, size)
    return lax.add(lax.convert_element_type(start, d), lax.iota(d, size))


@overload
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: Static[False] = False, dtype: Any = None, axis: int = 0, *,
             device: Any = None) -> Array: ...
@overload
def linspace(start: Any, stop: Any, num: int, endpoint: bool, retstep: Static[True],
             dtype: Any = None, axis: int = 0, *, device: Any = None) -> tuple[Array, Array]: ...
@overload
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, *,
             retstep: Static[True], dtype: Any = None, axis: int = 0,
             device: Any = None) -> tuple[Array, Array]: ...
@compiled_when_eager(("num", "endpoint", "retstep", "dtype", "axis", "device"))
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0, *, device: Any = None
             ) -> Array | tuple[Array, Array]:
    """``num`` evenly spaced values from ``start`` to ``stop`` (arrays broadcast; the
    samples run along ``axis``).

    Raises:
      ValueError: a negative ``num``.
    """
    out, delta = _linspace(start, stop, num, endpoint, dtype, axis)
    out = _place(out, device)
    return (out, delta) if retstep else out


def _linspace(start: Any, stop: Any, num: int, endpoint: bool, dtype: Any,
              axis: int) -> tuple[Array, Array]:
    # The samples and the step between them (NaN when it is undefined, as in JAX).
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: number of samples, {num}, must be non-negative")
    check_arraylike("linspace", start, stop)
    start, stop = as_array(start), as_array(stop)
    if dtype is None:
        d = result_type_info([_type_of(start), _type_of(stop)])[0]
        d = d if dt.is_inexact(d) else _default_float()
    else:
        d = _user_dtype(dtype, "linspace")
    fd = d if dt.is_inexact(d) else _default_float()
    start = lax.convert_element_type(start, fd)
    stop = lax.convert_element_type(stop, fd)
    bshape = list(broadcast_shapes(start.shape, stop.shape))
    start, stop = broadcast_to(start, bshape), broadcast_to(stop, bshape)
    ax = len(bshape) + axis + 1 if axis < 0 else axis
    bshape.insert(ax, 1)
    div = (num - 1) if endpoint else num
    delta: Array
    if num > 1:
        delta = lax.div(lax.sub(stop, start), lax.convert_element_type(div, fd))
        real = {dt.complex64: dt.float32, dt.complex128: dt.float64}.get(fd, fd)
        iota_shape = [1] * len(bshape)
        iota_shape[ax] = div
        step = lax.div(reshape(lax.iota(real, div), iota_shape),
                       lax.convert_element_type(div, real))
        step = lax.convert_element_type(step, fd)
        one_minus = lax.sub(lax.convert_element_type(1, fd), step)
        out = lax.add(lax.mul(reshape(start, bshape), one_minus),
                      lax.mul(reshape(stop, bshape), step))
        if endpoint:
            out = lax.concatenate([out, reshape(stop, bshape)], ax)
    elif num == 1:
        delta = full((), np.nan, fd) if endpoint else lax.sub(stop, start)
        out = reshape(start, bshape)
    else:
        delta = full((), np.nan, fd)
        bshape[ax] = 0
        out = zeros(bshape, fd)
    if dt.is_integer(d):
        out = lax.floor(out)
    return lax.convert_element_type(out, d), delta


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None, *,
        device: Any = None) -> Array:
    """A 2-d array with ones on the ``k``-th diagonal (the default float dtype).

    Raises:
      ValueError: a negative dimension.
    """
    return _place(_eye(N, M, k, dtype), device)


def _eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Array:
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    if n < 0 or m < 0:
        raise ValueError(f"eye: negative dimensions are not allowed, but got {N} and {M}")
    d = _default_float() if dtype is None else _user_dtype(dtype, "eye")
    k = operator.index(k)
    rows = lax.broadcasted_iota(dt.int32, (n, m), 0)
    cols = lax.broadcasted_iota(dt.int32, (n, m), 1)
    # (The offset is added even when 0, as JAX's _eye adds it.)
    on = lax.eq(lax.add(rows, np.int32(min(max(k, -2**31), 2**31 - 1))), cols)
    return lax.convert_element_type(on, d)


def identity(n: int, dtype: Any = None) -> Array:
    """The ``n`` by ``n`` identity matrix."""
    return eye(n, dtype=None if dtype is None else _user_dtype(dtype, "identity"))


def _check_int_range(x: Any, d: np.dtype[Any]) -> None:
    # Python ints must fit the (canonical) integer dtype they become, except the 2- and
    # 4-bit ones, into which JAX (converting as ml_dtypes does) wraps them silently.
    if dt.is_integer(d) and d not in dt.NARROW_INTS:
        lo, hi = dt.int_range(d)
        for v in _flat(x):
            if type(v) is int and not lo <= v <= hi:
                raise OverflowError(f"Python int {v} too large to convert to {d}")


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: bool | None = None,
            device: Any = None, out_sharding: Any = None) -> Array:
    """``a`` as an array (a no-op for arrays of the right dtype).

    Python scalars give weakly typed arrays; nested lists and tuples may mix
    scalars and arrays.

    Raises:
      TypeError: data of an unsupported type (strings, objects), or a complex
        Python scalar with a real ``dtype``.
      ValueError: ragged nested sequences, or ``None`` among the data.
      OverflowError: a Python int that does not fit the result dtype.
    """
    out = _asarray(a, None if dtype is None else _user_dtype(dtype, "asarray"))
    if copy and out is a:
        out = lax.copy(out)  # an Array asked to be copied: a new buffer
    return _place(out, device, out_sharding)


def _assemble(rows: list[Array]) -> Array:
    # As JAX's: each element gets a leading axis of 1, and the rows are concatenated, in a
    # tree of concatenations of 16 (so the printed jaxpr is JAX's).
    while len(rows) > 16:
        rows = [lax.concatenate(rows[i:i + 16], 0) for i in range(0, len(rows), 16)]
    return lax.concatenate(rows, 0)


_PLAIN = frozenset((bool, int, float, complex, np.ndarray))


def _jax_arrays(a: Any) -> Any:
    """``a`` with each object defining ``__jax_array__`` (in nested lists and tuples too)
    replaced by what that method returns: the conversion protocol JAX's ``asarray`` and
    ``array`` accept (other functions refuse such objects, as JAX's do)."""
    if isinstance(a, list | tuple):
        return type(a)(_jax_arrays(x) for x in a) if type(a) in (list, tuple) else a
    convert = getattr(a, "__jax_array__", None)
    return convert() if convert is not None and not isinstance(a, Array) else a


def _asarray(a: Any, dtype: np.dtype[Any] | None) -> Array:
    if isinstance(a, Array):
        return astype(a, dtype) if dtype is not None else a
    if type(a) is Literal:
        a = as_array(a)
        return astype(a, dtype) if dtype is not None else a
    leaves = _flat(a) if isinstance(a, list | tuple) else [a]
    if any(type(x) not in _PLAIN and hasattr(x, "__jax_array__") for x in leaves):
        # (Rebuilt only when something converts: most lists hold numbers.)
        a = _jax_arrays(a)
        if isinstance(a, Array):
            return astype(a, dtype) if dtype is not None else a
        leaves = _flat(a) if isinstance(a, list | tuple) else [a]
    if a is None or any(x is None for x in leaves):
        # A ValueError, as JAX's (NumPy would make an object array).
        raise ValueError(f"None is not a valid value for an array, but got {a!r}; use a "
                         "number (nan for a missing value) or an array")
    if any(isinstance(x, Array) for x in leaves):
        # The dtype is that of all the leaves together (Python scalars weakly typed).
        target = (result_type_info([_type_of(v) for v in leaves])[0]
                  if dtype is None else dtype)
        return _assemble([lax.expand_dims(_asarray(x, target), (0,)) for x in a])
    if is_scalar(a):
        sd, weak = dtype_and_weak(a)
        if dtype is not None:
            sd, weak = dtype, False
            if isinstance(a, complex) and not (dt.is_complex(sd) or sd == dt.bool_):
                raise TypeError(f"asarray: cannot convert the complex value {a!r} to {sd}")
        _check_int_range(a, sd)
        return ArrayImpl.from_numpy(np.asarray(a).astype(sd), weak)
    if isinstance(a, str | bytes):
        raise TypeError(f"asarray: expected array-like data, but got {type(a).__name__} {a!r}")
    if isinstance(a, list | tuple):
        # Python scalars in a list take JAX's (canonical) dtypes: [1, 2.5] is float32.
        d: np.dtype[Any] | None = None
        if dtype is not None:
            d = dtype
        elif leaves and all(is_scalar(v) or isinstance(v, np.generic | np.ndarray)
                            for v in leaves):
            d = result_type_info([_type_of(v) for v in leaves])[0]
        if d is not None:
            _check_int_range(a, d)
        try:
            arr = np.asarray(a, dtype=d)
        except ValueError as e:
            raise ValueError(f"asarray: cannot convert a ragged {type(a).__name__} to an "
                             f"array: {e}") from None
        except TypeError as e:
            raise TypeError(f"asarray: cannot convert {type(a).__name__} to an array: "
                            f"{e}") from None
    else:
        try:
            arr = np.asarray(a, dtype=dtype)
        except (ValueError, TypeError) as e:
            raise TypeError(f"asarray: cannot convert {type(a).__name__} to an array: "
                            f"{e}") from None
    if arr.dtype == object or arr.dtype not in dt._SHORT:
        raise TypeError(f"asarray: expected array-like data of a supported dtype, but got "
                        f"{type(a).__name__} with dtype {arr.dtype}")
    return ArrayImpl.from_numpy(_host(arr), False)


def _flat(a: Any) -> list[Any]:
    if isinstance(a, list | tuple):
        return [y for x in a for y in _flat(x)]
    return [a]


def array(object: Any, dtype: Any = None, *, copy: bool = True, order: str | None = "K",
          ndmin: int = 0, device: Any = None, out_sharding: Any = None) -> Array:
    """A copy of ``object`` as an array (see :func:`asarray`) with at least ``ndmin``
    dimensions (leading ones added); arrays are immutable, so with ``copy=False``
    the result is ``object`` itself when no conversion is needed."""
    out = _asarray(object, None if dtype is None else _user_dtype(dtype, "array"))
    if copy and out is object:
        out = lax.copy(out)
    if out.ndim < ndmin:
        out = reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return _place(out, device, out_sharding)


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Array:
    """``x`` cast to ``dtype`` (strongly typed), on ``device`` if given; with ``copy``,
    a new array even when the dtype is already ``dtype``."""
    d = _user_dtype(dtype, "astype")
    a = as_array(x) if aval_of(x) is not None or is_scalar(x) else asarray(x)
    if a.dtype == d and not a.weak_type:
        return _place(lax.copy(a) if copy and a is x else a, device)
    return _place(lax.convert_element_type(a, d), device)


def copy(a: Any, order: str | None = None) -> Array:
    """A copy of ``a`` as an array (dtype and weak type kept)."""
    check_arraylike("copy", a)
    if order not in (None, "K", "C", "A"):
        raise NotImplementedError(f"copy: only C order is supported, but got order={order!r}")
    if aval_of(a) is not None and type(a) is not Literal:
        return lax.copy(a)
    return asarray(a)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Array]:
    """Coordinate arrays of the grid of the 1-d ``xi`` (``indexing='xy'``: the first two
    axes exchanged, as for plotting; ``'ij'``: matrix order).  With ``sparse``, each
    keeps size 1 on the other axes.

    Raises:
      ValueError: ``copy=False``, an unknown ``indexing``, or an argument that is not 1-d.
    """
    check_arraylike("meshgrid", *xi)
    args = [asarray(x) for x in xi]
    if not copy:
        raise ValueError("meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    if any(a.ndim != 1 for a in args):
        raise ValueError("Arguments to meshgrid must be 1D, got shapes "
                         f"{[a.shape for a in args]}")
    if indexing == "xy" and len(args) >= 2:
        args[0], args[1] = args[1], args[0]
    dims = [1 if sparse else a.shape[0] for a in args]
    out = []
    for i, a in enumerate(args):
        target = [*dims[:i], a.shape[0], *dims[i + 1:]] if sparse else dims
        out.append(lax.broadcast_in_dim(a, target, (i,)))
    if indexing == "xy" and len(args) >= 2:
        out[0], out[1] = out[1], out[0]
    return out

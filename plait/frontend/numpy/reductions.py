"""Reductions of the NumPy namespace: ``sum``, ``max``, ``mean``, ``argmax``; cumulative
ops and differences (``cumsum``, ``cumulative_prod``, ``diff``).

Results are strongly typed (as in JAX, a reduction of a weakly typed value
is not weak).  Small integers and bools are summed in the default integer
type; ``float16``/``bfloat16`` sums are computed in ``float32``.  The
reductions take JAX's ``where`` mask (the elements where it is false act as the
identity; ``mean``/``var``/``std`` count only the selected elements) and
``sum``/``prod``/``max``/``min`` an ``initial`` value.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.core.x64_warnings import check_user_dtype
from plait.frontend.numpy._core import (
    _to_inexact,
    as_array,
    canonical_axes,
    canonical_axis,
    check_arraylike,
    shape,
)
from plait.frontend.numpy.manipulation import broadcast_to, concatenate
from plait.frontend.numpy.ufuncs import (
    _const_like,
    _to_bool,
    not_equal,
    subtract,
)
from plait.frontend.numpy.ufuncs import where as _where
from plait.ir import dtypes as dt
from plait.ir.dims import is_symbolic

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "any", "all",
           "argmax", "argmin", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
           "count_nonzero", "diff"]


def _input(name: str, a: Any) -> Array:
    check_arraylike(name, a)
    return as_array(a)


def _axes(name: str, axis: Any, nd: int) -> tuple[int, ...]:
    if isinstance(axis, list):
        axis = tuple(axis)
    if isinstance(axis, tuple) and len(set(canonical_axis(a, nd) for a in axis)) != len(axis):
        raise ValueError(f"{name}: duplicate value in 'axis': {axis}")
    return canonical_axes(axis, nd)


def _user_dtype(dtype: Any, name: str) -> np.dtype[Any]:
    # A 64-bit dtype narrows with JAX's warning (naming ``name``) when x64 is off.
    return check_user_dtype(dtype, name)


def _default_int() -> np.dtype[Any]:
    return dt.canonicalize(dt.int64)


def _default_float() -> np.dtype[Any]:
    return dt.canonicalize(dt.float64)


def _promote_integer(d: np.dtype[Any]) -> np.dtype[Any]:
    # Bools and integers narrower than the default integer widen to it (JAX uses
    # the default width where NumPy always uses 64 bits).
    if d == dt.bool_:
        return _default_int()
    if dt.is_unsigned(d):
        u = dt.canonicalize(dt.uint64)
        return u if d.itemsize < u.itemsize else d
    if dt.is_signed(d):
        i = _default_int()
        return i if d.itemsize < i.itemsize else d
    return d


def _upcast_f16(d: np.dtype[Any]) -> np.dtype[Any]:
    return dt.float32 if d in (dt.float16, dt.bfloat16) else d


def _cast(x: Any, d: np.dtype[Any]) -> Array:
    """``x`` as a strongly typed array of dtype ``d``."""
    a = as_array(x)
    if a.dtype == d and not a.weak_type:
        return a
    return lax.convert_element_type(a, d)


def _keep(x: Array, axes: tuple[int, ...], in_ndim: int, keepdims: bool) -> Array:
    if not keepdims:
        return x
    out_shape = list(shape(x))
    for a in axes:
        out_shape.insert(a, 1)
    kept = [i for i in range(in_ndim) if i not in axes]
    return lax.broadcast_in_dim(x, out_shape, kept)


def _check_where(name: str, mask: Any) -> Array | None:
    """The ``where`` mask of a reduction as an array, or ``None``.

    Raises:
      ValueError: a mask that is not boolean (JAX's message).
      TypeError: a mask that is not an array (a list).
    """
    if mask is None:
        return None
    check_arraylike(name, mask)
    m = as_array(mask)
    if m.dtype != dt.bool_:
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                         f"where.dtype={m.dtype!r}.")
    return m


def _no_out(name: str, out: None) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def _identity(kind: str, d: np.dtype[Any]) -> Any:
    """The identity of the reduction ``kind`` in dtype ``d`` (a NumPy scalar): the
    extreme values of ``d`` stand in for infinities where it has none."""
    if kind in ("max", "min"):
        value = dt.max_identity(d) if kind == "max" else dt.min_identity(d)
    else:
        value = {"sum": 0, "prod": 1}[kind]
    if d == dt.bool_:
        return np.bool_(value)
    return np.asarray(value).astype(d)[()]


def _masked(x: Array, mask: Array | None, fill: Any) -> Array:
    """``x`` with ``fill`` where the (broadcast) ``mask`` is false."""
    if mask is None:
        return x
    m = mask if mask.shape == x.shape else broadcast_to(mask, x.shape)
    return lax.select_n(m, lax.full(x.shape, fill, x.dtype), x)


def _selected_count(x: Array, axes: tuple[int, ...], keepdims: bool, mask: Array | None,
                    d: np.dtype[Any]) -> Array | int:
    """How many elements each result reduces: a static count without a mask, else the
    number of true mask elements (in dtype ``d``)."""
    if mask is None:
        return _count(x, axes)
    m = mask if mask.shape == x.shape else broadcast_to(mask, x.shape)
    return sum(m, axis=axes, dtype=d, keepdims=keepdims)


# The reduction, its boolean form, and the matching binary op (to fold in ``initial``).
_KINDS: dict[str, tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any],
                        Callable[..., Any]]] = {
    "sum": (lax.reduce_sum, lax.reduce_or, lax.add, lax.bitwise_or),
    "prod": (lax.reduce_prod, lax.reduce_and, lax.mul, lax.bitwise_and),
    "max": (lax.reduce_max, lax.reduce_or, lax.max, lax.bitwise_or),
    "min": (lax.reduce_min, lax.reduce_and, lax.min, lax.bitwise_and)}


def _reduction(name: str, kind: str, a: Any, axis: Any, dtype: Any, out: None, keepdims: bool,
               initial: Any, where_: Any, promote_integers: bool = True) -> Array:
    """``sum``/``prod``/``max``/``min`` of ``a`` over ``axis``, skipping the elements where
    ``where_`` is false and folding in ``initial`` (JAX's ``_reduction``).

    Raises:
      ValueError: a non-boolean mask; for ``max``/``min``, a mask without ``initial``
        or an empty reduction without ``initial``; a non-scalar ``initial``.
    """
    _no_out(name, out)
    arr = _input(name, a)
    mask = _check_where(name, where_)
    has_identity = kind in ("sum", "prod")
    if initial is None and not has_identity and mask is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    if has_identity and arr.dtype == dt.bool_:
        arr = _cast(arr, _default_int())
    nd = arr.ndim
    axes = _axes(name, axis, nd)
    if initial is None and not has_identity and builtins.any(arr.shape[i] == 0 for i in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype is not None:
        result = computation = _user_dtype(dtype, name)
    else:
        result = _promote_integer(arr.dtype) if has_identity and promote_integers else arr.dtype
        computation = _upcast_f16(result) if has_identity else result
    x = _masked(_cast(arr, computation), mask, _identity(kind, computation))
    reduce_op, bool_reduce, combine, bool_combine = _KINDS[kind]
    boolean = computation == dt.bool_
    r = (bool_reduce if boolean else reduce_op)(x, axes)
    if initial is not None:
        init = lax.convert_element_type(initial, computation)
        if init.shape != ():
            raise ValueError(f"initial value must be a scalar. Got array of shape {init.shape}")
        r = (bool_combine if boolean else combine)(init, r)
    return _cast(_keep(r, axes, nd, keepdims), result)


@compiled_when_eager(("axis", "dtype", "out", "keepdims", "promote_integers"))
def sum(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None, promote_integers: bool = True) -> Array:
    """Sum over ``axis`` (all axes when ``None``) of the elements selected by the boolean
    ``where`` mask, plus ``initial``; bools and small integers accumulate in the default
    integer type unless ``promote_integers`` is false."""
    return _reduction("sum", "sum", a, axis, dtype, out, keepdims, initial, where,
                      promote_integers)


@compiled_when_eager(("axis", "dtype", "out", "keepdims", "promote_integers"))
def prod(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
         initial: Any = None, where: Any = None, promote_integers: bool = True) -> Array:
    """Product over ``axis`` of the elements selected by ``where``, times ``initial``."""
    return _reduction("prod", "prod", a, axis, dtype, out, keepdims, initial, where,
                      promote_integers)


@compiled_when_eager(("axis", "out", "keepdims"))
def max(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Array:
    """Maximum over ``axis`` (all axes when ``None``) of the elements selected by
    ``where`` and ``initial``.

    Raises:
      ValueError: ``where`` without ``initial``, or an empty reduction without it.
    """
    return _reduction("max", "max", a, axis, None, out, keepdims, initial, where)


@compiled_when_eager(("axis", "out", "keepdims"))
def min(a: Any, axis: Any = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Array:
    """Minimum over ``axis`` of the elements selected by ``where`` and ``initial``.

    Raises:
      ValueError: ``where`` without ``initial``, or an empty reduction without it.
    """
    return _reduction("min", "min", a, axis, None, out, keepdims, initial, where)


amax = max
amin = min


def _as_bool(a: Array) -> Array:
    if dt.is_complex(a.dtype):
        return lax.ne(a, _const_like(a, 0))
    return _cast(a, dt.bool_)


def _logical_reduction(name: str, a: Any, axis: Any, out: None, keepdims: bool,
                       where_: Any) -> Array:
    _no_out(name, out)
    b = _as_bool(_input(name, a))
    mask = _check_where(name, where_)
    axes = _axes(name, axis, b.ndim)
    b = _masked(b, mask, name == "all")
    r = (lax.reduce_or if name == "any" else lax.reduce_and)(b, axes)
    return _keep(r, axes, b.ndim, keepdims)


@compiled_when_eager(("axis", "out", "keepdims"))
def any(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *,
        where: Any = None) -> Array:
    """Whether any element along ``axis`` (among those selected by ``where``) is true
    (nonzero)."""
    return _logical_reduction("any", a, axis, out, keepdims, where)


@compiled_when_eager(("axis", "out", "keepdims"))
def all(a: Any, axis: Any = None, out: None = None, keepdims: bool = False, *,
        where: Any = None) -> Array:
    """Whether every element along ``axis`` (among those selected by ``where``) is true
    (nonzero)."""
    return _logical_reduction("all", a, axis, out, keepdims, where)


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Array:
    """The number of nonzero elements along ``axis``."""
    a = _input("count_nonzero", a)
    return sum(_to_bool(a), axis=axis, dtype=_default_int(), keepdims=keepdims)


def _count(a: Any, axes: tuple[int, ...]) -> int:
    n = 1
    for i in axes:
        n *= shape(a)[i]
    return n


@compiled_when_eager(("axis", "dtype", "out", "keepdims"))
def mean(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False,
         *, where: Any = None) -> Array:
    """Arithmetic mean along ``axis`` of the elements selected by ``where`` (bools and
    integers average in the default float; NaN where nothing is selected)."""
    _no_out("mean", out)
    a = _input("mean", a)
    mask = _check_where("mean", where)
    axes = _axes("mean", axis, a.ndim)
    if dtype is None:
        result = _to_inexact(a.dtype)
        computation = _upcast_f16(result)
    else:
        result = computation = _user_dtype(dtype, "mean")
    total = sum(a, axis=axes, dtype=computation, keepdims=keepdims, where=mask)
    count = _selected_count(a, axes, keepdims, mask, computation)
    divisor = (_const_like(total, count) if isinstance(count, int) else
               # (a symbolic count: its value, in the result's dtype, as JAX computes it)
               lax.convert_element_type(count, total.dtype) if is_symbolic(count) else count)
    return _cast(lax.div(total, divisor), result)


_mean = mean


def _var_dtypes(a_dtype: np.dtype[Any], dtype: Any,
                name: str = "var") -> tuple[np.dtype[Any], np.dtype[Any]]:
    """The computation and result dtypes of a variance (as JAX's ``_var_promote_types``)."""
    if dtype is not None:
        d = _user_dtype(dtype, name)
        if dt.is_complex(a_dtype) and not dt.is_complex(d):
            raise ValueError("jax.numpy.var does not yet support real dtype parameters when "
                             "computing the variance of an array of complex values.")
        return _upcast_f16(d), d
    if not dt.is_inexact(a_dtype):
        return _to_inexact(a_dtype), _to_inexact(a_dtype)
    return _upcast_f16(a_dtype), dt.real_dtype(a_dtype)


def _correction(ddof: Any, correction: Any) -> Any:
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: int | float | None = None) -> Array:
    """Variance along ``axis`` of the elements selected by ``where``, with ``ddof`` (or
    ``correction``) delta degrees of freedom; ``mean`` replaces the computed mean.  NaN
    where that leaves no degrees of freedom.

    Raises:
      ValueError: both ``ddof`` and ``correction``, or a real ``dtype`` for a complex
        array.
    """
    corr = _correction(ddof, correction)
    arr = _input("var", a)
    mask = _check_where("var", where)
    computation, result = _var_dtypes(arr.dtype, dtype)
    _no_out("var", out)
    axes = _axes("var", axis, arr.ndim)
    if mean is not None:
        check_arraylike("var", mean)
    return _var(arr, corr, mask, mean, axes=axes, computation=computation, result=result,
                keepdims=keepdims)


# ``corr`` is traced in an eager call, as in JAX: XLA then divides by the count minus
# the correction, instead of multiplying by the reciprocal of a constant.
@compiled_when_eager(("axes", "computation", "result", "keepdims"))
def _var(arr: Array, corr: Any, mask: Array | None, mean: Any, *, axes: tuple[int, ...],
         computation: np.dtype[Any], result: np.dtype[Any], keepdims: bool) -> Array:
    x = _cast(arr, computation)
    if mean is None:
        centre = _mean(x, axis=axes, dtype=computation, keepdims=True, where=mask)
    else:
        centre = _cast(as_array(mean), computation)
    centered = subtract(x, centre)
    if dt.is_complex(computation):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        computation = centered.dtype
    else:
        centered = lax.integer_pow(centered, 2)
    total = sum(centered, axis=axes, dtype=computation, keepdims=keepdims, where=mask)
    count = _selected_count(x, axes, keepdims, mask, computation)
    if isinstance(count, int) and isinstance(corr, int | float):
        n = count - corr
        out_ = _cast(lax.div(total, _const_like(total, n)), result)
        return _where(False, out_, float("nan")) if n <= 0 else out_
    counted = _const_like(total, count) if isinstance(count, int) else count
    corr = (lax.convert_element_type(corr, total.dtype) if isinstance(corr, Array) else
            _const_like(total, corr))
    normalizer = lax.sub(counted, corr)
    out_ = _cast(lax.div(total, normalizer), result)
    return _where(lax.gt(normalizer, _const_like(normalizer, 0)), out_, float("nan"))


@compiled_when_eager(("axis", "dtype", "out", "keepdims"))
def std(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: int | float | None = None) -> Array:
    """Standard deviation along ``axis`` of the elements selected by ``where`` (see
    :func:`var`).

    Raises:
      ValueError: a non-inexact ``dtype``, or as :func:`var`.
    """
    corr = _correction(ddof, correction)
    _input("std", a)
    _check_where("std", where)
    if dtype is not None:
        requested, dtype = dtype, _user_dtype(dtype, "std")
        if not dt.is_inexact(dtype):
            raise ValueError(f"dtype argument to jnp.std must be inexact; got "
                             f"{np.dtype(requested)}")
    _no_out("std", out)
    return lax.sqrt(var(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where, mean=mean,
                        correction=corr))


def _arg(name: str, op: Callable[[Any, int, Any], Any]) -> Callable[..., Array]:
    def arg(a: Any, axis: int | None = None, out: None = None, keepdims: bool = False) -> Array:
        _no_out(name, out)
        a = _input(name, a)
        nd = a.ndim
        if axis is None:
            dims = tuple(range(nd))
            a = lax.reshape(a, (a.size,)) if nd != 1 else a
            ax = 0
        else:
            ax = canonical_axis(axis, nd)
            dims = (ax,)
        if shape(a)[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        found = op(a, ax, _default_int())
        return _keep(found, dims, nd, keepdims)
    arg.__name__ = arg.__qualname__ = name
    arg.__doc__ = (f"Index of the first {name[3:]}imum along ``axis`` (of the flattened "
                   "array when ``None``).")
    return arg


argmax = _arg("argmax", lax.argmax)
argmin = _arg("argmin", lax.argmin)


def _cumulative(name: str, op: Callable[..., Any], promote_integers: bool = False
                ) -> Callable[..., Array]:
    def cumulative(a: Any, axis: int | None = None, dtype: Any = None,
                   out: None = None) -> Array:
        _no_out(name, out)
        a = _input(name, a)
        if axis is None or a.ndim == 0:
            a = lax.reshape(a, (a.size,)) if a.ndim != 1 else a
        ax = canonical_axis(0 if axis is None else axis, a.ndim)
        if dtype is None:
            result = _promote_integer(a.dtype) if promote_integers or a.dtype == dt.bool_ \
                else a.dtype
            computation = result
        else:
            result = _user_dtype(dtype, name)
            if result == dt.bool_:
                if a.dtype != dt.bool_:
                    a = _to_bool(a)
                computation = _promote_integer(result)
            else:
                computation = result
        x = _cast(a, computation)
        # (An empty array is its own cumulative result.)
        return _cast(op(x, ax) if x.size else x, result)
    cumulative.__name__ = cumulative.__qualname__ = name
    cumulative.__doc__ = (f"Cumulative {name[3:]} along ``axis`` (of the flattened array "
                          "when ``None``).")
    return cumulative


cumsum = _cumulative("cumsum", lax.cumsum)
cumprod = _cumulative("cumprod", lax.cumprod)
_cumsum_promoted = _cumulative("cumulative_sum", lax.cumsum, promote_integers=True)


def _cumulative_axis(name: str, x: Array, axis: int | None) -> int:
    if x.ndim == 0:
        raise ValueError(f"{name}: the input must be non-scalar, but got a scalar")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: the input array has rank {x.ndim}, but axis was not "
                             "set; it is only optional for one-dimensional arrays")
        axis = 0
    return canonical_axis(axis, x.ndim)


def _with_initial(out: Array, ax: int, value: int) -> Array:
    """``out`` with a slice of ``value`` put first along ``ax``."""
    shape_ = list(out.shape)
    shape_[ax] = 1
    first = lax.broadcast_in_dim(_const_like(out, value), shape_, ())
    return lax.concatenate([first, out], ax)


def cumulative_sum(x: Any, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Array:
    """Cumulative sum (the array API's ``cumulative_sum``): ``axis`` is required for
    arrays of more than one dimension; integers accumulate in the default integer."""
    x = _input("cumulative_sum", x)
    ax = _cumulative_axis("cumulative_sum", x, axis)
    # JAX's warning for a narrowed dtype names no function here.
    dtype = None if dtype is None else check_user_dtype(dtype, None)
    out = _cumsum_promoted(x, axis=ax, dtype=dtype)
    return _with_initial(out, ax, 0) if include_initial else out


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Array:
    """Cumulative product (the array API's ``cumulative_prod``): ``axis`` is required for
    arrays of more than one dimension; with ``include_initial``, a leading 1."""
    x = _input("cumulative_prod", x)
    ax = _cumulative_axis("cumulative_prod", x, axis)
    # JAX's warning for a narrowed dtype names no function here.
    dtype = None if dtype is None else check_user_dtype(dtype, None)
    out = cumprod(x, axis=ax, dtype=dtype)
    return _with_initial(out, ax, 1) if include_initial else out


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Array:
    """The ``n``-th discrete difference along ``axis`` (``not_equal`` for bools), after
    joining ``prepend`` before and ``append`` after (scalars broadcast).

    Raises:
      ValueError: a negative ``n``, or a 0-d array.
    """
    arr = _input("diff", a)
    n = operator.index(n)
    axis = operator.index(axis)
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if arr.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    ax = canonical_axis(axis, arr.ndim)
    def edge(extra: Any) -> Array:
        e = _input("diff", extra)
        if e.ndim:
            return e
        shape_ = list(arr.shape)
        shape_[ax] = 1
        return lax.broadcast_in_dim(e, shape_, ())

    parts = ([] if prepend is None else [edge(prepend)]) + [arr] + (
        [] if append is None else [edge(append)])
    if len(parts) > 1:
        arr = concatenate(parts, ax)
    later = tuple(slice(1, None) if i == ax else slice(None) for i in range(arr.ndim))
    earlier = tuple(slice(None, -1) if i == ax else slice(None) for i in range(arr.ndim))
    op = not_equal if arr.dtype == dt.bool_ else subtract
    for _ in range(n):
        arr = op(arr[later], arr[earlier])
    return arr

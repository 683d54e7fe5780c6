"""NumPy's built-in ufuncs as :class:`~plait.frontend.numpy.functional.ufunc` objects,
as ``jax.numpy`` has them: ``add``, ``subtract``, ``multiply``, ``negative``,
``maximum``, ``minimum``, the bitwise and logical ``and``/``or``/``xor``,
``logaddexp`` and ``logaddexp2``.

Calling one is calling the plain function; its methods take the fast routes JAX
takes: ``add.reduce`` is ``sum``, ``add.accumulate`` is ``cumsum``, ``add.at`` a
scatter-add, ``logaddexp.reduce`` a log-sum-exp, the bitwise and logical reductions
single ``reduce_and``/``reduce_or``/``reduce_xor`` equations.  The other methods
(``outer``, ``reduceat``, ``maximum.accumulate``...) are the generic ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait.frontend import lax
from plait.frontend.api.eager_programs import compiled_when_eager
from plait.frontend.core.array_base import Array
from plait.frontend.numpy import arithmetic, composite_ufuncs, reductions, ufuncs
from plait.frontend.numpy._core import as_array, check_arraylike, promote_to_inexact
from plait.frontend.numpy.functional import ufunc
from plait.ir import dtypes as dt

__all__ = ["add", "subtract", "multiply", "negative", "maximum", "minimum", "bitwise_and",
           "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
           "logaddexp", "logaddexp2"]

_LN2 = float(np.log(2))

# reduce_{and,or,xor} and the binary op that folds ``initial`` into their result
_BITWISE: dict[str, tuple[Callable[..., Array], Callable[..., Array]]] = {
    "and": (lax.reduce_and, lax.bitwise_and),
    "or": (lax.reduce_or, lax.bitwise_or),
    "xor": (lax.reduce_xor, lax.bitwise_xor)}


def _bitwise_reduce(op: str, logical: bool) -> Callable[..., Array]:
    """``{bitwise,logical}_{op}.reduce``: one ``reduce_{op}`` over ``axis``, the
    elements ``where`` is false taken as the identity, ``initial`` folded in."""
    name = f"{'logical' if logical else 'bitwise'}_{op}.reduce"
    reduce_op, combine = _BITWISE[op]

    def reduce(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Array:
        arr = reductions._input(name, a)
        if logical:
            arr = ufuncs._to_bool(arr)
        elif not (dt.is_integer(arr.dtype) or arr.dtype == dt.bool_):
            raise ValueError(f"{name}: integer argument required; got dtype={arr.dtype}")
        d = arr.dtype if dtype is None else reductions._user_dtype(dtype, name)
        arr = reductions._cast(arr, d)
        mask = reductions._check_where(name, where)
        axes = reductions._axes(name, axis, arr.ndim)
        # -1 has every bit set: the identity of "and" (True for bools)
        identity = np.array(-1 if op == "and" else 0).astype(d)[()]
        r = reduce_op(reductions._masked(arr, mask, identity), axes)
        if initial is not None:
            r = combine(lax.convert_element_type(initial, d), r)
        return reductions._keep(r, axes, arr.ndim, keepdims)
    return reduce


def _extremum_reduce(kind: str) -> Callable[..., Array]:
    """``maximum.reduce``/``minimum.reduce``: ``max``/``min`` (in ``dtype``, if given;
    JAX's fails on a ``dtype``)."""
    def reduce(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Array:
        return reductions._reduction(kind, kind, a, axis, dtype, None, keepdims, initial, where)
    return reduce


@compiled_when_eager(("axis", "dtype", "keepdims"))
def _logsumexp(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Array:
    """``logaddexp.reduce``: log of the sum of exponentials, shifted by the (finite)
    maximum so that nothing overflows; ``dtype`` is checked and, as in JAX, unused."""
    if dtype is not None:
        reductions._user_dtype(dtype, "logaddexp.reduce")
    check_arraylike("logaddexp.reduce", a)
    arr = as_array(promote_to_inexact("logaddexp.reduce", a)[0])
    mask = reductions._check_where("logaddexp.reduce", where)
    axes = reductions._axes("logaddexp.reduce", axis, arr.ndim)
    real = ufuncs.real(arr)
    top = reductions.max(real, axis=axes, keepdims=keepdims, where=mask, initial=-np.inf)
    top = lax.stop_gradient(lax.select(lax.is_finite(top), top, lax.full_like(top, 0)))
    shift = top if keepdims else lax.expand_dims(top, axes)
    total = reductions.sum(lax.exp(lax.sub(arr, lax.convert_element_type(shift, arr.dtype))),
                           axis=axes, keepdims=keepdims, where=mask)
    result = lax.add(lax.log(total), lax.convert_element_type(top, total.dtype))
    return result if initial is None else arithmetic.logaddexp(initial, result)


def _logsumexp2(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
                initial: Any = None, where: Any = None) -> Array:
    """``logaddexp2.reduce``: :func:`_logsumexp` in base 2."""
    check_arraylike("logaddexp2.reduce", a)
    scaled_initial = None if initial is None else ufuncs.multiply(initial, _LN2)
    return ufuncs.true_divide(_logsumexp(ufuncs.multiply(a, _LN2), axis=axis, dtype=dtype,
                                         keepdims=keepdims, initial=scaled_initial,
                                         where=where), _LN2)


class _Unary(ufunc):
    """A built-in ufunc of one array (``negative``), typed as one."""

    def __init__(self, func: Callable[[Any], Array], name: str, **methods: Any) -> None:
        super().__init__(func, 1, 1, name=name, call=func, **methods)
        self._typed = func

    def __call__(self, x: Any, /, *,  # type: ignore[override]  # (narrower: one array)
                 out: None = None, where: None = None) -> Array:
        """The function applied elementwise to ``x``.

        Raises:
          NotImplementedError: an ``out`` or ``where`` argument.
        """
        if out is None and where is None:
            return self._typed(x)
        self._refuse_out_or_where(out, where)


class _Binary(ufunc):
    """A built-in ufunc of two arrays, typed as one."""

    def __init__(self, func: Callable[[Any, Any], Array], name: str, **methods: Any) -> None:
        super().__init__(func, 2, 1, name=name, call=func, **methods)
        self._typed = func

    def __call__(self, x: Any, y: Any, /, *,  # type: ignore[override]  # (narrower: two arrays)
                 out: None = None, where: None = None) -> Array:
        """The function applied elementwise (with broadcasting) to ``x`` and ``y``.

        Raises:
          NotImplementedError: an ``out`` or ``where`` argument.
        """
        if out is None and where is None:  # (the fast path: every call of pnp.add(x, y))
            return self._typed(x, y)
        self._refuse_out_or_where(out, where)


def _scatter_at(method: str) -> Callable[..., Array]:
    """``add.at``/``multiply.at``/``subtract.at``: one scatter (repeated indices
    accumulate); bools are added and multiplied as 0/1 integers, as in JAX."""
    def at(a: Any, indices: Any, b: Any) -> Array:
        check_arraylike(f"{method}.at", a, b)
        arr = as_array(a)
        if arr.dtype == dt.bool_ and method != "subtract":
            ints = lax.convert_element_type(arr, np.int32)
            b = lax.convert_element_type(lax.convert_element_type(b, dt.bool_), np.int32)
            return lax.convert_element_type(getattr(ints.at[indices], method)(b), dt.bool_)
        return getattr(arr.at[indices], method)(b)  # type: ignore[no-any-return]  # (.at)
    return at


add = _Binary(ufuncs.add, "add", identity=0, reduce=reductions.sum,
              accumulate=reductions.cumsum, at=_scatter_at("add"))
multiply = _Binary(ufuncs.multiply, "multiply", identity=1, reduce=reductions.prod,
                   accumulate=reductions.cumprod, at=_scatter_at("multiply"))
subtract = _Binary(ufuncs.subtract, "subtract", at=_scatter_at("subtract"))
negative = _Unary(ufuncs.negative, "negative")
maximum = _Binary(ufuncs.maximum, "maximum", reduce=_extremum_reduce("max"))
minimum = _Binary(ufuncs.minimum, "minimum", reduce=_extremum_reduce("min"))
bitwise_and = _Binary(ufuncs.bitwise_and, "bitwise_and", identity=-1,
                      reduce=_bitwise_reduce("and", logical=False))
bitwise_or = _Binary(ufuncs.bitwise_or, "bitwise_or", identity=0,
                     reduce=_bitwise_reduce("or", logical=False))
bitwise_xor = _Binary(ufuncs.bitwise_xor, "bitwise_xor", identity=0,
                      reduce=_bitwise_reduce("xor", logical=False))
logical_and = _Binary(ufuncs.logical_and, "logical_and", identity=True,
                      reduce=_bitwise_reduce("and", logical=True))
logical_or = _Binary(ufuncs.logical_or, "logical_or", identity=False,
                     reduce=_bitwise_reduce("or", logical=True))
logical_xor = _Binary(ufuncs.logical_xor, "logical_xor", identity=False,
                      reduce=_bitwise_reduce("xor", logical=True))
logaddexp = _Binary(arithmetic.logaddexp, "logaddexp", identity=-np.inf, reduce=_logsumexp)
logaddexp2 = _Binary(composite_ufuncs.logaddexp2, "logaddexp2", identity=-np.inf,
                     reduce=_logsumexp2)

"""Functional programming over arrays, built on :func:`plait.vmap`: ``vectorize`` (with
generalized-ufunc signatures such as ``'(n),(n)->()'``), ``apply_along_axis``,
``apply_over_axes``, ``piecewise``, ``frompyfunc`` (a :class:`ufunc` with ``reduce``,
``accumulate``, ``outer``, ``at`` and ``reduceat``) and ``fromfunction``.

As in JAX, the Python functions are traced once over an abstract element (or core
block), not called per element.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any, NoReturn

from plait.frontend import lax
from plait.frontend.api.control_flow import fori_loop, scan, switch
from plait.frontend.api.make_jaxpr import eval_shape
from plait.frontend.api.vmap import vmap
from plait.frontend.core.array_base import Array
from plait.frontend.core.tree_util import tree_map
from plait.frontend.numpy._core import as_array, canonical_axis, check_arraylike, ndim, shape
from plait.frontend.numpy.creation import arange, array, asarray, full, zeros_like
from plait.frontend.numpy.manipulation import (
    broadcast_shapes,
    broadcast_to,
    concatenate,
    expand_dims,
    moveaxis,
    reshape,
)
from plait.frontend.numpy.reductions import argmax, cumsum
from plait.frontend.numpy.ufuncs import where as _where

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "piecewise", "frompyfunc",
           "fromfunction", "ufunc"]

# Generalized-ufunc signatures (NumPy's grammar): "(m,n),(n)->(m)".
_NAME = r"\w+"
_CORE = rf"\((?:{_NAME}(?:,{_NAME})*)?\)"
_CORES = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_CORES}->{_CORES}$")

CoreDims = tuple[str, ...]


def _parse_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
    """The core dimension names of each input and each output of a signature."""
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = signature.split("->")
    return ([tuple(re.findall(_NAME, c)) for c in re.findall(_CORE, ins)],
            [tuple(re.findall(_NAME, c)) for c in re.findall(_CORE, outs)])


def _record_sizes(sizes: dict[str, int], shape_: tuple[int, ...], core: CoreDims,
                  context: str, is_input: bool) -> None:
    """Bind the core dimensions of one argument (or output) to its trailing sizes.

    Raises:
      ValueError: too few dimensions (an input), a different number (an output), or a
        size that disagrees with an earlier binding of the same name.
    """
    if is_input and len(shape_) < len(core):
        raise ValueError(f"input with shape {shape_!r} does not have enough dimensions for "
                         f"all core dimensions {core!r} {context}")
    if not is_input and len(shape_) != len(core):
        raise ValueError(f"output shape {shape_!r} does not match core dimensions {core!r} "
                         f"{context}")
    for name, size in zip(core, shape_[len(shape_) - len(core):]):
        known = sizes.setdefault(name, size)
        if known != size:
            raise ValueError(f"inconsistent size for core dimension {name!r}: {size!r} vs "
                             f"{known!r} {context}")


def _checking_outputs(func: Callable[..., Any], sizes: dict[str, int],
                      out_cores: list[CoreDims], context: str) -> Callable[..., Any]:
    """``func``, checking that its outputs have the signature's core dimensions."""
    def checked(*args: Any) -> Any:
        out = func(*args)
        outs = list(out) if isinstance(out, tuple) else [out]
        if len(out_cores) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, "
                            f"got: {out!r}\n{context}")
        if len(outs) != len(out_cores):
            raise TypeError(f"wrong number of output arguments: expected {len(out_cores)!r}, "
                            f"got {len(outs)!r} {context}")
        bound = dict(sizes)
        for o, core in zip(outs, out_cores):
            _record_sizes(bound, shape(o), core, context, is_input=False)
        return out
    return checked


def _bind_excluded(func: Callable[..., Any], excluded: Collection[int | str],
                   args: Sequence[Any], kwargs: dict[str, Any]
                   ) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    """``func`` with the excluded positional and keyword arguments bound, and the rest."""
    if not excluded:
        return func, list(args), kwargs
    fixed = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
             if i < len(args)]
    fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}

    def bound(*rest: Any, **kw: Any) -> Any:
        full_args = list(rest)
        for i, a in fixed:
            full_args.insert(i, a)
        return func(*full_args, **kw, **fixed_kw)

    return (bound, [a for i, a in enumerate(args) if i not in excluded],
            {k: v for k, v in kwargs.items() if k not in excluded})


def vectorize(pyfunc: Callable[..., Any], *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` (written for single elements, or for the core blocks of a
    generalized-ufunc ``signature`` like ``'(m,n),(n)->(m)'``) made to broadcast over
    leading dimensions with :func:`plait.vmap`.  Positional indices and keyword names in
    ``excluded`` are passed through unchanged, as are ``None`` arguments and (unlike
    JAX, which drops them) keyword arguments.

    Raises:
      TypeError: an ``excluded`` entry that is not an int or a str; when called, a
        wrong number of arguments or outputs.
      ValueError: a negative ``excluded`` index; when called, an invalid signature or
        arguments and outputs that do not fit it.
    """
    if any(not isinstance(e, str | int) for e in excluded):
        raise TypeError(f"jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, dynamic, dynamic_kw = _bind_excluded(pyfunc, excluded, args, kwargs)
        if dynamic_kw:
            func = functools.partial(func, **dynamic_kw)
        out_cores: list[CoreDims] | None = None
        if signature is None:
            in_cores: list[CoreDims] = [()] * len(dynamic)
        else:
            in_cores, out_cores = _parse_signature(signature)
        nones = {i for i, a in enumerate(dynamic) if a is None}
        if nones:
            if any(i < len(in_cores) and in_cores[i] != () for i in nones):
                raise ValueError(f"Cannot pass None at locations {nones} with {signature=}")
            func, dynamic, _ = _bind_excluded(func, nones, dynamic, {})
            in_cores = [c for i, c in enumerate(in_cores) if i not in nones]
        arrays = [asarray(a) for a in dynamic]
        if len(arrays) != len(in_cores):
            raise TypeError(f"wrong number of positional arguments: expected {len(in_cores)!r}"
                            f", got {len(arrays)!r} {context}")
        sizes: dict[str, int] = {}
        loops = []
        for a, core in zip(arrays, in_cores):
            _record_sizes(sizes, a.shape, core, context, is_input=True)
            loops.append(a.shape[:a.ndim - len(core)])
        loop = broadcast_shapes(*loops)
        body = func if out_cores is None else _checking_outputs(func, sizes, out_cores, context)
        # Size-1 loop dimensions are squeezed away (and put back at the end); every other
        # loop dimension is one vmap, innermost for the last.
        operands, padded = [], []
        for a, lp in zip(arrays, loops):
            padded.append((1,) * (len(loop) - len(lp)) + lp)
            ones = tuple(i for i, d in enumerate(lp) if d == 1)
            operands.append(lax.squeeze(a, ones) if ones else a)
        unit_dims = []
        for k in reversed(range(len(loop))):
            in_axes = tuple(None if p[k] == 1 else 0 for p in padded)
            if all(ax is None for ax in in_axes):
                unit_dims.append(k)
            else:
                body = vmap(body, in_axes=in_axes)
        out = body(*operands)
        if not unit_dims:
            return out
        return tree_map(lambda r: expand_dims(r, unit_dims), out)

    return wrapped


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Any:
    """``func1d(slice, *args, **kwargs)`` applied to every 1-d slice of ``arr`` along
    ``axis`` (vectorized with :func:`plait.vmap`); the dimensions of its result take
    the place of ``axis``.

    Raises:
      TypeError: ``arr`` not an array.
      numpy.exceptions.AxisError: ``axis`` out of range.
    """
    check_arraylike("apply_along_axis", arr)
    nd = ndim(arr)
    ax = canonical_axis(axis, nd)

    def f(x: Any) -> Any:
        return func1d(x, *args, **kwargs)

    for i in range(1, nd - ax):
        f = vmap(f, in_axes=i, out_axes=-1)
    for _ in range(ax):
        f = vmap(f, in_axes=0, out_axes=0)
    return f(arr)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Array:
    """``func(a, axis)`` applied repeatedly for each axis in ``axes``; a result with one
    dimension fewer gets ``axis`` back (as length 1).

    Raises:
      ValueError: ``func`` returning an array of another number of dimensions.
    """
    check_arraylike("apply_over_axes", a)
    arr = as_array(a)
    for axis in axes:
        b = asarray(func(arr, axis))
        if b.ndim == arr.ndim:
            arr = b
        elif b.ndim == arr.ndim - 1:
            arr = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return arr


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Array:
    """Evaluate ``funclist[k]`` (a function of an element, called as
    ``f(x, *args, **kw)``, or a constant) where ``condlist[k]`` holds, the last true
    condition winning; an extra last entry of ``funclist`` is the value where no
    condition holds (zero otherwise).  The result has the dtype of ``x``.

    Raises:
      ValueError: ``funclist`` of another length than ``condlist`` or one more.
    """
    check_arraylike("piecewise", x)
    x_arr = asarray(x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funcs = [funclist[-1], *funclist[:-1]]
    elif nf == nc:
        funcs = [0, *funclist]
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    conds = asarray(condlist, dtype=bool)
    # The index of the last true condition (0: none is), elementwise.
    hits = cumsum(concatenate([zeros_like(conds[:1]), conds], 0), axis=0)
    index = argmax(hits, axis=0)
    d = x_arr.dtype

    def branch(f: Any) -> Callable[[Any], Array]:
        if callable(f):
            return lambda v: lax.convert_element_type(asarray(f(v, *args, **kw)), d)
        return lambda v: array(f, dtype=d)

    branches = [branch(f) for f in funcs]
    return as_array(vectorize(lambda i, v: switch(i, branches, v))(index, x_arr))


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float,
                 **kwargs: Any) -> Any:
    """``function`` called on grids of indices (one ``arange`` per dimension of
    ``shape``, in ``dtype``), vectorized with :func:`plait.vmap` so that it sees
    one index per argument; ``kwargs`` are mapped along their first axis, as
    ``vmap`` maps keyword arguments.

    Raises:
      TypeError: ``shape`` not an int or a sequence of ints.
    """
    dims: tuple[int, ...]
    try:
        dims = (operator.index(shape),)
    except TypeError:
        try:
            dims = tuple(operator.index(s) for s in shape)
        except TypeError:
            raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                            f"got {shape}. shape argument of fromfunction().") from None
    f = function
    for i in range(len(dims)):
        f = vmap(f, in_axes=tuple(0 if j == len(dims) - 1 - i else None
                                  for j in range(len(dims))))
    return f(*(arange(n, dtype=dtype) for n in dims), **kwargs)


class ufunc:  # noqa: N801  (NumPy's name)
    """A universal function made from a Python function of ``nin`` elements giving
    ``nout`` results (see :func:`frompyfunc`): calling it vectorizes the function;
    binary single-output ufuncs also have ``reduce``, ``accumulate``, ``outer``,
    ``reduceat``; every ufunc has ``at``."""

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *,
                 name: str | None = None, nargs: int | None = None, identity: Any = None,
                 call: Callable[..., Any] | None = None,
                 reduce: Callable[..., Array] | None = None,
                 accumulate: Callable[..., Array] | None = None,
                 at: Callable[..., Array] | None = None,
                 reduceat: Callable[..., Array] | None = None) -> None:
        # call, reduce, accumulate, at and reduceat: faster versions of the generic
        # methods (NumPy's built-in ufuncs have them: add.reduce is sum)
        self._func = func
        self.__name__: str = name or str(getattr(func, "__name__", "ufunc"))
        self.__doc__ = func.__doc__
        self._nin = operator.index(nin)
        self._nout = operator.index(nout)
        self._nargs = operator.index(nargs or nin)
        self._identity = identity
        self._call = call
        self._special: dict[str, Callable[..., Array] | None] = {
            "reduce": reduce, "accumulate": accumulate, "at": at, "reduceat": reduceat}

    @property
    def nin(self) -> int:
        """The number of inputs."""
        return self._nin

    @property
    def nout(self) -> int:
        """The number of outputs."""
        return self._nout

    @property
    def nargs(self) -> int:
        """The number of arguments (``nin`` unless given)."""
        return self._nargs

    @property
    def identity(self) -> Any:
        """The identity of the (binary) operation, or ``None``."""
        return self._identity

    def _key(self) -> tuple[Any, ...]:
        return (self._func, self.__name__, self._identity, self._nin, self._nout, self._nargs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        """The function applied elementwise (with broadcasting) to ``args``.

        Raises:
          NotImplementedError: an ``out`` or ``where`` argument.
        """
        if out is not None or where is not None:
            self._refuse_out_or_where(out, where)
        if self._call is not None:  # (it checks its arguments itself)
            return self._call(*args)
        check_arraylike(self.__name__, *args)
        return vectorize(self._func)(*args)

    def _refuse_out_or_where(self, out: None, where: None) -> NoReturn:
        """Raise for NumPy's ``out`` or ``where`` (one of them given)."""
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        raise NotImplementedError(f"where argument of {self}")

    def _binary(self, method: str) -> None:
        if self._nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self._nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def _result_dtype(self, *args: Array) -> Any:
        ones = [lax.full((), 1, a.dtype) for a in args]
        return eval_shape(self._func, *ones).dtype

    def reduce(self, a: Any, axis: int | None = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: Any = None) -> Array:
        """The binary function folded over ``axis`` (of the flattened array when
        ``None``), starting from ``initial`` (else the identity, else the first slice),
        skipping the elements where ``where`` is false.

        Raises:
          ValueError: a non-binary ufunc, ``where`` without an identity or
            ``initial``, a non-boolean ``where``, or an empty axis without either.
          NotImplementedError: ``out``, or a tuple of axes.
        """
        name = f"{self.__name__}.reduce"
        check_arraylike(name, a)
        self._binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {name}()")
        if initial is not None:
            check_arraylike(name, initial)
        mask = None
        if where is not None:
            check_arraylike(name, where)
            if self._identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 "identity, so to use a where mask one has to specify "
                                 "'initial'.")
            mask = as_array(where)
            if mask.dtype != bool:
                raise ValueError(f"where argument must have dtype=bool; got "
                                 f"dtype={mask.dtype}")
        special = self._special["reduce"]
        if special is not None:
            return special(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                           where=where)
        arr = as_array(a)
        initial = self._identity if initial is None else initial
        d = self._result_dtype(arr, arr) if dtype is None else dtype
        if mask is not None:
            mask = broadcast_to(mask, arr.shape)
        if isinstance(axis, tuple):
            for ax_ in axis:
                canonical_axis(ax_, arr.ndim)
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final: tuple[int, ...] = (1,) * arr.ndim if keepdims else ()
            arr = reshape(arr, (-1,))
            mask = None if mask is None else reshape(mask, (-1,))
            ax = 0
        else:
            ax = canonical_axis(axis, arr.ndim)
            rest = arr.shape[:ax] + arr.shape[ax + 1:]
            final = arr.shape[:ax] + (1,) + arr.shape[ax + 1:] if keepdims else rest
        if ax:
            arr = moveaxis(arr, ax, 0)
            mask = None if mask is None else moveaxis(mask, ax, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            return full(final, initial, d)
        m = mask

        def step(i: Any, acc: Any) -> Any:
            new = self(acc, lax.convert_element_type(arr[i], d))
            return new if m is None else _where(m[i], new, acc)

        start = arr[0] if initial is None else asarray(initial)
        start = broadcast_to(lax.convert_element_type(start, d), arr.shape[1:])
        result = fori_loop(1 if initial is None else 0, arr.shape[0], step, start)
        return reshape(result, final) if keepdims else as_array(result)

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Array:
        """The running fold of the binary function along ``axis``.

        Raises:
          ValueError: a non-binary ufunc, or ``axis`` None or a tuple.
          NotImplementedError: ``out``.
        """
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        special = self._special["accumulate"]
        if special is not None:
            return special(a, axis=axis, dtype=dtype)
        check_arraylike(f"{self.__name__}.accumulate", a)
        arr = as_array(a)
        d = self._result_dtype(arr, arr) if dtype is None else dtype
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        ax = canonical_axis(axis, arr.ndim)
        if arr.size == 0:
            return full(arr.shape, 0, d)
        arr = moveaxis(arr, ax, 0)
        first = lax.convert_element_type(arr[0], d)

        def step(acc: Any, x: Any) -> tuple[Any, Any]:
            new = lax.convert_element_type(
                asarray(self(lax.convert_element_type(acc, d),
                             lax.convert_element_type(x, d))), d)
            return new, new

        if arr.shape[0] > 1:
            _, rest = scan(step, first, arr[1:])
            result = concatenate([expand_dims(first, 0), rest], 0)
        else:
            result = expand_dims(first, 0)
        return moveaxis(result, 0, ax)

    def outer(self, A: Any, B: Any, /) -> Array:
        """The binary function of every pair of elements of ``A`` and ``B``; the result
        has shape ``A.shape + B.shape``.

        Raises:
          ValueError: a non-binary ufunc.
        """
        self._binary("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        a, b = as_array(A), as_array(B)
        pairs = vmap(vmap(self, (None, 0)), (0, None))(reshape(a, (-1,)), reshape(b, (-1,)))
        return reshape(pairs, a.shape + b.shape)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Array:
        """``a`` with the function applied at ``indices`` (with ``b`` as second operand
        for binary ufuncs), one index at a time so repeated indices accumulate; a new
        array (pass ``inplace=False``: arrays are immutable).

        Raises:
          NotImplementedError: ``inplace=True``.
        """
        if inplace:
            raise NotImplementedError(
                "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like "
                "np.ufunc.at(). Instead, you can pass inplace=False and capture the result; "
                f"e.g. arr = jnp.{self.__name__}.at(arr, ind, val, inplace=False)")
        extra = () if b is None else (b,)
        special = self._special["at"]
        if special is not None:
            return special(a, indices, *extra)
        check_arraylike(f"{self.__name__}.at", a, *extra)
        arr = as_array(a)
        ops = [as_array(x) for x in extra]
        d = self._result_dtype(arr, *ops)
        arr = lax.convert_element_type(arr, d)
        ops = [lax.convert_element_type(x, d) for x in ops]
        idx = indices if isinstance(indices, tuple) else (indices,)
        if not idx:
            return arr
        shapes = [shape(i) for i in idx if not isinstance(i, slice)]
        bshape = broadcast_shapes(*shapes) if shapes else ()
        if not bshape:
            return arr.at[idx].set(self(arr[idx], *ops))
        n = math.prod(bshape)
        if ops:
            tail = ops[0].shape[len(bshape):]
            ops = [reshape(broadcast_to(ops[0], bshape + tail), (n,) + tail)]
        flat = [i if isinstance(i, slice) else reshape(broadcast_to(asarray(i), bshape), (n,))
                for i in idx]

        def step(k: Any, acc: Array) -> Array:
            at = tuple(i if isinstance(i, slice) else i[k] for i in flat)
            return acc.at[at].set(self(acc[at], *(o[k] for o in ops)))

        return as_array(fori_loop(0, n, step, arr))

    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None,
                 out: None = None) -> Array:
        """Reductions of the slices ``a[indices[i]:indices[i+1]]`` along ``axis`` (just
        ``a[indices[i]]`` where the next index is not larger, as in NumPy); ``dtype`` is
        accepted and, as in JAX, not used.

        Raises:
          ValueError: a non-binary ufunc, a 0-d ``a``, non-1-d ``indices``, or an
            ``axis`` that is None or a sequence.
          NotImplementedError: ``out``.
        """
        self._binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        special = self._special["reduceat"]
        if special is not None:
            return special(a, indices, axis=axis, dtype=dtype)
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        arr, ind = as_array(a), as_array(indices)
        if arr.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape="
                             f"{arr.shape}")
        if ind.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got indices.shape="
                             f"{ind.shape}")
        if axis is None or isinstance(axis, tuple | list):
            raise ValueError("reduceat requires a single integer axis.")
        ax = canonical_axis(axis, arr.ndim)
        moved = moveaxis(arr, ax, 0)
        result = moved[ind]
        bounds = concatenate([ind, asarray([arr.shape[ax]], dtype=ind.dtype)])
        lo = reshape(bounds[:-1], (-1,) + (1,) * (arr.ndim - 1))
        hi = reshape(bounds[1:], (-1,) + (1,) * (arr.ndim - 1))

        def step(i: Any, acc: Any) -> Any:
            inside = (i > lo) & (i < hi)
            return _where(inside, self(acc, moved[i][None]), acc)

        result = fori_loop(0, arr.shape[ax], step, result)
        return moveaxis(as_array(result), 0, ax)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *,
               identity: Any = None) -> ufunc:
    """A :class:`ufunc` from a Python function of ``nin`` elements giving ``nout``
    results (a tuple when ``nout > 1``); ``identity`` is used by ``reduce``."""
    return ufunc(func, nin, nout, identity=identity)

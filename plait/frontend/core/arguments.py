"""Helpers of the user API: argument flattening, abstraction, debug info, statics."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import DTypeLike

from plait.frontend.core.array_likes import aval_mappings
from plait.frontend.core.layouts import default_sharding_of
from plait.frontend.core.promotion import python_scalar_dtype
from plait.frontend.core.refs import Ref
from plait.frontend.core.tokens import Token
from plait.frontend.core.tree_util import KeyPath, PyTreeDef, keystr, tree_flatten_with_path
from plait.ir import dtypes as dt
from plait.ir.avals import AbstractValue, ShapedArray, abstract_token
from plait.ir.debug_info import DebugInfo
from plait.ir.dims import dimension_value, is_symbolic
from plait.ir.errors import ArgumentError, RefError, StaticArgumentError
from plait.ir.sharding import NamedSharding

C = TypeVar("C", bound=Callable[..., Any])

__all__ = ["ShapeDtypeStruct", "static_args", "abstractify", "arg_aval", "debug_info_for",
           "result_paths", "mark_static", "unmark_static", "arg_path", "fun_name",
           "flatten_outputs"]


def _to_shape(shape: Any) -> tuple[int, ...]:
    # (Symbolic dimensions stay symbolic: shape-polymorphic export.)
    return tuple(d if is_symbolic(d) else int(d) for d in shape)


def _to_dtype(dtype: DTypeLike) -> np.dtype[Any]:
    return np.dtype(dtype)


class ShapeDtypeStruct:
    """A stand-in for an array argument: only its shape and dtype (as ``jax.ShapeDtypeStruct``).

    Immutable; equal when the fields are.  A plain class, as JAX's (not an attrs class:
    tree libraries such as dm-tree take attrs instances for containers of their fields).
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding")
    shape: tuple[int, ...]
    """The dimensions."""
    dtype: np.dtype[Any]
    """The element type."""
    weak_type: bool
    """Whether the dtype is weak."""
    sharding: Any
    """The layout the argument takes (a ``NamedSharding`` or ``Format``), or ``None``."""

    def __init__(self, shape: Any, dtype: DTypeLike, weak_type: bool = False,
                 sharding: Any = None) -> None:
        for name, value in (("shape", _to_shape(shape)), ("dtype", _to_dtype(dtype)),
                            ("weak_type", weak_type), ("sharding", sharding)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        # (JAX's class raises a RuntimeError.)
        raise RuntimeError(f"Cannot reassign attributes ({name}) of immutable "
                           "ShapeDtypeStruct objects; use .update() for a changed copy")

    def _fields(self) -> tuple[Any, ...]:
        return (self.shape, self.dtype, self.weak_type, self.sharding)

    def __eq__(self, other: object) -> bool:
        return type(other) is ShapeDtypeStruct and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self) -> tuple[Any, ...]:
        return (ShapeDtypeStruct, self._fields())

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self.shape))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        layout = "" if self.sharding is None else f", sharding={self.sharding}"
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{layout}{weak})"

    def update(self, **changes: Any) -> ShapeDtypeStruct:
        """A copy with the fields given changed (``shape``, ``dtype``, ``weak_type``,
        ``sharding``), as ``jax.ShapeDtypeStruct.update``.

        Raises:
          TypeError: a field it does not have.
        """
        unknown = sorted(set(changes) - {"shape", "dtype", "weak_type", "sharding"})
        if unknown:
            raise TypeError(f"ShapeDtypeStruct.update: expected fields among ['dtype', "
                            f"'sharding', 'shape', 'weak_type'], but got {unknown}")
        return ShapeDtypeStruct(**{**dict(zip(self.__slots__, self._fields())), **changes})

    @classmethod
    def like(cls, x: Any) -> ShapeDtypeStruct:
        """The shape, dtype and weak type of ``x`` (an array, a scalar, a tracer or a
        ShapeDtypeStruct); as ``jax.ShapeDtypeStruct.like``, for the result types of
        callbacks (``ShapeDtypeStruct.like(x)``).

        Raises:
          ArgumentError: ``x`` is not an array-like value.
        """
        try:
            aval = abstractify(x, "x", "ShapeDtypeStruct.like")
        except ArgumentError:
            raise ArgumentError(f"ShapeDtypeStruct.like: expected an array, a scalar or a "
                                f"ShapeDtypeStruct, but got {type(x).__name__} ({x!r})"
                                ) from None
        return cls(aval.shape, aval.dtype, weak_type=aval.weak_type)


def struct_sharding(x: ShapeDtypeStruct) -> NamedSharding | None:
    """The ``NamedSharding`` a struct stands for (its ``sharding``, or its ``Format``'s,
    whose layout must be the default), else ``None``."""
    s = default_sharding_of(x.sharding, "ShapeDtypeStruct sharding")
    return s if isinstance(s, NamedSharding) else None


def struct_of(aval: ShapedArray) -> ShapeDtypeStruct:
    """The ``ShapeDtypeStruct`` of a type (its sharding over ``Explicit`` mesh axes too,
    as JAX's ``eval_shape`` gives it)."""
    return ShapeDtypeStruct(aval.shape, aval.dtype, aval.weak_type,
                            sharding=aval.explicit_sharding)


def fun_name(fun: Any) -> str:
    """The name of a callable, as JAX reports it."""
    name = getattr(fun, "__name__", None)
    if name is None:
        f = getattr(fun, "func", None)
        name = getattr(f, "__name__", None) if f is not None else None
    return name if isinstance(name, str) else type(fun).__name__


def wraps(fun: Any) -> Callable[[C], C]:
    """``functools.wraps(fun)`` for any callable: when ``fun``'s attributes cannot be
    copied (a callable object whose ``__name__`` is missing or not a string), the wrapper
    takes :func:`fun_name`'s name, as JAX's transformations do."""
    def apply(wrapper: C) -> C:
        try:
            functools.update_wrapper(wrapper, fun)
            return wrapper
        except (TypeError, AttributeError):
            name = fun_name(fun)
            wrapper.__name__ = wrapper.__qualname__ = name
            wrapper.__doc__ = getattr(fun, "__doc__", None)
            wrapper.__wrapped__ = fun  # type: ignore[attr-defined]  # (as functools sets it)
            return wrapper
    return apply


def _src_info(fun: Any) -> str:
    try:
        code = inspect.unwrap(fun).__code__
    except (AttributeError, ValueError):
        return ""
    return f"{fun_name(fun)} at {code.co_filename}:{code.co_firstlineno}"


def arg_path(names: Sequence[str], i: int) -> str:
    """The printable path of flat argument ``i`` (``args[1]['w']`` when unnamed)."""
    return names[i] if i < len(names) and names[i] else f"flat argument {i}"


def abstractify(x: Any, path: str, what: str) -> ShapedArray:
    """The abstract value of an argument leaf.

    Raises:
      ArgumentError: the leaf is not an array, a scalar or a ShapeDtypeStruct;
        the message names its path.
    """
    if type(x) is Ref:
        raise RefError(f"{what}: got a Ref at {path}, which {what} does not take; pass its "
                       "value (ref[...]) instead. jit and vmap take Ref arguments")
    if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
        if type(x) is int:
            info = np.iinfo(python_scalar_dtype(x))
            if not info.min <= x <= info.max:
                raise ArgumentError(f"{what}: Python int {x} at {path} is too large to convert "
                                    f"to {python_scalar_dtype(x)}")
        return ShapedArray((), python_scalar_dtype(x), type(x) is not bool)
    aval = getattr(x, "aval", None)
    if isinstance(aval, ShapedArray):
        return aval
    if isinstance(x, ShapeDtypeStruct):
        aval = ShapedArray(x.shape, dt.canonicalize(x.dtype), x.weak_type)
        # (A mesh's Explicit axes in its sharding enter the type, as an array's do.)
        layout = struct_sharding(x)
        return aval.update(sharding=layout) if layout is not None else aval
    if isinstance(x, np.ndarray | np.generic):
        if x.dtype not in dt._SHORT:
            raise ArgumentError(f"{what}: expected an array of a supported dtype at {path}, "
                                f"but got dtype {x.dtype}")
        return ShapedArray(np.shape(x), dt.canonicalize(x.dtype))
    registered = aval_mappings.get(type(x))
    if registered is not None:
        return registered(x)
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(x, type):
        return ShapedArray(tuple(shape), dt.canonicalize(dtype))
    raise ArgumentError(
        f"{what}: expected arrays, scalars or ShapeDtypeStructs as arguments, but got "
        f"{type(x).__name__} ({x!r}) at {path}. Mark non-array arguments static with "
        "static_argnums/static_argnames.")


def arg_aval(x: Any, path: str, what: str) -> AbstractValue:
    """The abstract value of an argument leaf of ``jit`` (or of a trace of it): the
    token type for a :class:`~plait.frontend.core.tokens.Token`, else
    :func:`abstractify`'s."""
    return abstract_token if type(x) is Token else abstractify(x, path, what)


def _signature_names(fun: Callable[..., Any], args: Sequence[Any],
                     kwargs: dict[str, Any]) -> tuple[list[str], dict[str, str]] | None:
    try:
        sig = inspect.signature(fun)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    pos: list[str] = []
    kw: dict[str, str] = {}
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            pos += [f"{name}[{i}]" for i in range(len(value))]
        elif kind is inspect.Parameter.VAR_KEYWORD:
            for k in value:
                kw[k] = k
        elif name in kwargs:
            kw[name] = name
        else:
            pos.append(name)
    return pos, kw


def debug_info_for(fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
                   leaf_paths: Sequence[KeyPath]) -> DebugInfo:
    """Debug info for tracing ``fun`` on ``(args, kwargs)``: one name per flat leaf.

    ``leaf_paths`` are the key paths of the flattened ``(args, kwargs)`` pair.
    """
    names = _signature_names(fun, args, kwargs)
    arg_names = []
    for path in leaf_paths:
        which, key = path[0], path[1] if len(path) > 1 else None
        rest = keystr(path[2:])
        if names is None or key is None:
            arg_names.append("")
            continue
        pos, kw = names
        if getattr(which, "idx", None) == 0:
            i = key.idx
            arg_names.append((pos[i] if i < len(pos) else f"args[{i}]") + rest)
        else:
            arg_names.append(kw.get(key.key, str(key.key)) + rest)
    return DebugInfo(fun_name(fun), tuple(arg_names), (), _src_info(fun))


def result_paths(out_tree_paths: Sequence[KeyPath]) -> tuple[str, ...]:
    """``("result",)`` for a single leaf, else ``"result" + path`` per leaf (JAX's result paths)."""
    return tuple("result" + keystr(p) for p in out_tree_paths)


def flatten_outputs(out: Any, what: str) -> tuple[list[Any], PyTreeDef, tuple[str, ...]]:
    """Flatten a traced function's result, checking every leaf is array-like.

    Raises:
      ArgumentError: a leaf is not an array or scalar; the message names its
        path (``result[1]``).
    """
    pairs, tree = tree_flatten_with_path(out)
    leaves = []
    for path, leaf in pairs:
        if type(leaf) is Ref:
            raise RefError(f"{what}: cannot return a Ref (at result{keystr(path)}) from a "
                           f"transformed function; return its value (plait.freeze(ref) or "
                           "ref[...]) instead")
        if is_symbolic(leaf):  # a symbolic size returned: its value
            leaf = dimension_value(leaf)
        if not (hasattr(leaf, "aval") or isinstance(leaf, bool | int | float | complex | np.ndarray
                                                   | np.generic)):
            raise ArgumentError(f"{what}: expected the function to return arrays, but got "
                                f"{type(leaf).__name__} ({leaf!r}) at result{keystr(path)}")
        leaves.append(leaf)
    return leaves, tree, result_paths([p for p, _ in pairs])


def mark_static(args: Sequence[Any], kwargs: dict[str, Any], static_argnums: tuple[int, ...],
                static_argnames: tuple[str, ...], hashable: bool = True
                ) -> tuple[tuple[Any, ...], dict[str, Any], tuple[Any, ...]]:
    """Replace static arguments with ``None`` (no leaves) and collect them as a key,
    which must be hashable when ``hashable`` (a cache key).

    Raises:
      StaticArgumentError: a static argument is unhashable (with ``hashable``).
    """
    if not static_argnums and not static_argnames:
        return tuple(args), kwargs, ((), ())
    n = len(args)
    nums = set()
    for i in static_argnums:
        # As JAX: a static position the call does not reach (an argument left to its
        # default, or passed by keyword) is not an error; its value is a Python value.
        if -n <= i < n:
            nums.add(i % n)
    dyn_args = tuple(None if i in nums else a for i, a in enumerate(args))
    dyn_kwargs = {k: (None if k in static_argnames else v) for k, v in kwargs.items()}
    key = (tuple((i, args[i]) for i in sorted(nums)),
           tuple(sorted((k, v) for k, v in kwargs.items() if k in static_argnames)))
    for value in [v for _, v in key[0]] + [v for _, v in key[1]] if hashable else ():
        try:
            hash(value)
        except TypeError as e:
            # JAX's words, which jit's C++ dispatcher also uses.
            raise StaticArgumentError(
                "Non-hashable static arguments are not supported. An error occurred while "
                f"trying to hash an object of type {type(value)}, {value!r}. The error "
                f"was:\nTypeError: {e}\n") from None
    return dyn_args, dyn_kwargs, key


def unmark_static(args: Sequence[Any], kwargs: dict[str, Any], key: tuple[Any, ...]
                  ) -> tuple[list[Any], dict[str, Any]]:
    """Put back the static arguments :func:`mark_static` replaced."""
    static_pos, static_kw = key
    full = list(args)
    for i, v in static_pos:
        full[i] = v
    kw = dict(kwargs)
    kw.update(static_kw)
    return full, kw


def static_args(static_argnums: int | Sequence[int] | None,
                static_argnames: str | Sequence[str] | None, what: str = "static"
                ) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Normalize ``static_argnums``/``static_argnames`` (or the ``what`` pair, such as
    ``donate_argnums``/``donate_argnames``) to tuples.

    Raises:
      ArgumentError: an entry has the wrong type.
    """
    nums: tuple[int, ...]
    if static_argnums is None:
        nums = ()
    elif isinstance(static_argnums, int):
        nums = (static_argnums,)
    else:
        nums = tuple(static_argnums)
    if not all(isinstance(i, int) for i in nums):
        raise ArgumentError(f"{what}_argnums must be ints, but got {static_argnums!r}")
    names: tuple[str, ...]
    if static_argnames is None:
        names = ()
    elif isinstance(static_argnames, str):
        names = (static_argnames,)
    else:
        names = tuple(static_argnames)
    return nums, names


def _validate_static(params: list[inspect.Parameter], nums: tuple[int, ...],
                     names: tuple[str, ...], what: str) -> None:
    # JAX's checks (and words) against the signature, where it bounds the arguments.
    kinds = {p.kind for p in params}
    if inspect.Parameter.VAR_POSITIONAL not in kinds:
        positional = sum(p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                    inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params)
        if any(not -positional <= i < positional for i in nums):
            raise ValueError(f"Jitted function has {what}_argnums={nums}, but only accepts "
                             f"{positional} positional arguments.")
    if inspect.Parameter.VAR_KEYWORD not in kinds:
        known = {p.name for p in params if p.kind != inspect.Parameter.POSITIONAL_ONLY}
        invalid = set(names) - known
        if invalid:
            raise ValueError(f"Jitted function has invalid argnames {invalid} in "
                             f"{what}_argnames. Function does not take these args.")


def infer_static(fun: Callable[..., Any], nums: tuple[int, ...], names: tuple[str, ...],
                 nums_given: bool, names_given: bool, what: str = "static"
                 ) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """JAX's completion of static arguments from ``fun``'s signature: given only
    positions, the names of those parameters are static too (so passing them by keyword
    works), and given only names, their positions.  Both given, or no signature: as is.

    Raises:
      ValueError: a position or name ``fun``'s signature does not have (JAX's error).
    """
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    _validate_static(params, nums, names, what)
    if nums_given == names_given:
        return nums, names
    either = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if nums_given:
        n = len(params)
        named = tuple(params[i].name for i in nums
                      if -n <= i < n and params[i].kind == either)
        return nums, names + named
    positions = tuple(i for i, p in enumerate(params) if p.name in names and p.kind == either)
    return nums + positions, names

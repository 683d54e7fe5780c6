"""``plait.new_ref`` and the :mod:`plait.ref` functions: creating, reading, writing
and freezing mutable arrays (:class:`~plait.frontend.core.refs.Ref`).

How transformations carry Refs is in :mod:`plait.frontend.core.refs`; here are the
user-facing operations and :func:`pure_with_refs`, the function a transformation
traces in place of one that uses Refs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.frontend.core import refs as _refs
from plait.frontend.core.arguments import abstractify, unmark_static
from plait.frontend.core.refs import AbstractRef, Ref, borrowed, read, write
from plait.frontend.core.tree_util import PyTreeDef, tree_unflatten
from plait.frontend.lax.ops import convert_element_type, full
from plait.ir.errors import RefError

__all__ = ["new_ref", "empty_ref", "freeze", "free_ref", "get", "set", "swap", "addupdate",
           "Ref", "AbstractRef", "pure_with_refs", "with_finals", "write_finals"]


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """A new mutable array holding ``init_val`` (an array or scalar; a Python scalar
    gives a weakly typed Ref, as in JAX).

    ``memory_space`` and ``kind`` are accepted for JAX compatibility and must be
    ``None`` (plait has one memory space).

    Raises:
      RefError: ``init_val`` is itself a Ref (no Refs of Refs).
      TypeError: ``init_val`` is not array-like.
    """
    if type(init_val) is Ref:
        raise RefError("new_ref: expected an array as the initial value, but got a Ref "
                       "(a Ref cannot hold a Ref); pass ref[...] to copy its value")
    if memory_space is not None or kind is not None:
        raise NotImplementedError("new_ref: memory_space and kind are not supported by plait; "
                                  "leave them None")
    aval = abstractify(init_val, "init_val", "new_ref")
    return Ref(convert_element_type(init_val, aval.dtype, aval.weak_type))


def empty_ref(ty: Any, memory_space: Any = None) -> Ref:
    """A new mutable array of the type ``ty`` (a ``ShapeDtypeStruct`` or an abstract
    array), holding zeros.  (JAX leaves the contents undefined.)"""
    if memory_space is not None:
        raise NotImplementedError("empty_ref: memory_space is not supported by plait")
    return Ref(full(tuple(ty.shape), 0, ty.dtype))


def freeze(ref: Ref) -> Any:
    """The final value of ``ref``, as an Array."""
    _check_ref(ref, "freeze")
    return read(ref)


def free_ref(ref: Ref) -> None:
    """Mark ``ref`` freed: using it afterwards raises :class:`~plait.errors.RefError`."""
    _check_ref(ref, "free_ref")
    read(ref)  # (a Ref of an enclosing trace is carried like any other use)
    ref._freed = True


def get(ref: Ref, idx: Any = None) -> Any:
    """``ref[idx]`` (``idx=None``: the whole value)."""
    _check_ref(ref, "get")
    return _refs.get(ref, Ellipsis if idx is None else idx)


def swap(ref: Ref, idx: Any, value: Any) -> Any:
    """Write ``value`` to ``ref[idx]`` and return what it replaced."""
    _check_ref(ref, "swap")
    return _refs.swap(ref, Ellipsis if idx is None else idx, value)


def set(ref: Ref, idx: Any, value: Any) -> None:  # noqa: A001 (JAX's name)
    """``ref[idx] = value``."""
    _check_ref(ref, "set")
    _refs.set_(ref, Ellipsis if idx is None else idx, value)


def addupdate(ref: Ref, idx: Any, x: Any) -> None:
    """``ref[idx] += x``."""
    _check_ref(ref, "addupdate")
    _refs.addupdate(ref, Ellipsis if idx is None else idx, x)


def _check_ref(ref: Any, what: str) -> None:
    if type(ref) is not Ref:
        raise TypeError(f"{what}: expected a Ref, but got {type(ref).__name__}")


def pure_with_refs(fun: Callable[..., Any], in_tree: PyTreeDef, ref_positions: Sequence[int],
                   static_key: tuple[Any, ...] | None,
                   live: Callable[[], Sequence[Ref]]) -> Callable[[list[Any], list[Any]], Any]:
    """``fun`` with its Refs made explicit: ``pure(values, others)`` returns
    ``(out, final_values)``.

    ``others`` are the call's array leaves (``in_tree``'s leaves without the Refs at
    ``ref_positions``); ``values`` the values of the Refs ``live()`` names when the
    trace runs: the argument Refs, then those the function closes over.  The Refs
    are looked up at trace time only, so one traced program serves every call with
    the same structure, whichever Refs it is given.  With a ``static_key``,
    ``in_tree`` is ``(args, kwargs)`` with the static arguments marked.
    """
    pos = list(ref_positions)

    def pure(values: list[Any], others: list[Any]) -> Any:
        refs = list(live())
        it = iter(others)
        arg_refs = iter(refs[:len(pos)])
        leaves = [next(arg_refs) if i in pos else next(it)
                  for i in range(len(pos) + len(others))]
        args, kwargs = tree_unflatten(in_tree, leaves)
        if static_key is not None:
            args, kwargs = unmark_static(args, kwargs, static_key)
        with borrowed(refs, values):
            out = fun(*args, **kwargs)
            finals = [read(r) for r in refs]
        return out, finals
    return pure


def with_finals(fun: Callable[..., Any], refs: Sequence[Ref], has_aux: bool
                 ) -> Callable[..., Any]:
    """``fun`` with the Refs it uses carried as plumbing: their values come in as they
    are now, their final values go out as (part of) an auxiliary result, not
    differentiated.  Pair with :func:`write_finals`."""
    values = [read(r) for r in refs]

    def fun_r(*args: Any, **kwargs: Any) -> Any:
        with borrowed(refs, values):
            out = fun(*args, **kwargs)
            finals = [read(r) for r in refs]
        return (out[0], (out[1], finals)) if has_aux else (out, finals)
    fun_r.__name__ = getattr(fun, "__name__", "fun")
    return fun_r


def write_finals(refs: Sequence[Ref], aux: Any, has_aux: bool) -> Any:
    """Write the final values :func:`with_finals` returned; the user's own aux."""
    user_aux, finals = aux if has_aux else (None, aux)
    for r, v in zip(refs, finals):
        write(r, v)
    return user_aux

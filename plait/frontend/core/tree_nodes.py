"""More kinds of pytree node: dataclasses (:func:`register_dataclass`), static values
(:func:`register_static`) and partially applied functions (:class:`Partial`)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar, overload

from plait.frontend.core.tree_util import (
    _registry,
    dispatch_registry,
    register_pytree_node,
    register_pytree_with_keys,
    unflatten_functions,
)

__all__ = ["register_dataclass", "register_static", "Partial", "static_field"]

T = TypeVar("T")
H = TypeVar("H", bound=Hashable)


def _fields_of(nodetype: type[Any], drop: Sequence[str]) -> tuple[list[str], list[str]]:
    """A dataclass's data and meta fields: those marked ``metadata={'static': True}``
    are meta (JAX's convention), the others data.  Fields with ``init=False`` and
    those in ``drop`` are left out (JAX 0.10.2 includes them, then refuses them)."""
    if not dataclasses.is_dataclass(nodetype):
        raise TypeError("register_dataclass: expected a dataclass when data_fields and "
                        f"meta_fields are not given, but got {nodetype!r}; decorate it with "
                        "@dataclasses.dataclass first or name its fields")
    fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop]
    return ([f.name for f in fields if not f.metadata.get("static", False)],
            [f.name for f in fields if f.metadata.get("static", False)])


def _check_fields(nodetype: type[Any], data: tuple[str, ...], meta: tuple[str, ...],
                  drop: Sequence[str]) -> None:
    if overlap := set(data) & set(meta):
        raise ValueError(f"register_dataclass: expected data_fields and meta_fields not to "
                         f"overlap, but both name {sorted(overlap)}")
    if not dataclasses.is_dataclass(nodetype):
        return
    init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop)
    given = set(data) | set(meta)
    if given != init:
        msg = ("register_dataclass: expected data_fields and meta_fields to name every "
               "dataclass field with init=True and only those")
        if missing := sorted(init - given):
            msg += f"; missing {missing} (add them to drop_fields to leave them out)"
        if unexpected := sorted(given - init):
            msg += f"; unexpected {unexpected}"
        raise ValueError(msg)


@overload
def register_dataclass(nodetype: type[T], data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type[T]: ...
@overload
def register_dataclass(nodetype: None = None, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> Callable[[type[T]], type[T]]: ...
def register_dataclass(nodetype: type[T] | None = None, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None, drop_fields: Sequence[str] = ()
                       ) -> type[T] | Callable[[type[T]], type[T]]:
    """Make ``nodetype`` a pytree node whose children are its ``data_fields`` and whose
    ``meta_fields`` are static node data (hashable; part of jit's cache key).  For a
    dataclass both lists may be left out: fields declared with
    ``field(metadata={'static': True})`` (or :func:`plait.tree.static`) are meta, the
    rest data.  Returns ``nodetype``, so it works as a class decorator.

    Raises:
      TypeError: only one of the field lists is given, or neither for a class that is
        not a dataclass.
      ValueError: the lists overlap, or miss or add a dataclass field with ``init=True``
        (other than those in ``drop_fields``).
    """
    if nodetype is None:
        return functools.partial(register_dataclass, data_fields=data_fields,
                                 meta_fields=meta_fields, drop_fields=drop_fields)
    if (data_fields is None) != (meta_fields is None):
        raise TypeError("register_dataclass: expected both data_fields and meta_fields or "
                        f"neither, but got data_fields={data_fields!r}, "
                        f"meta_fields={meta_fields!r}")
    if data_fields is None or meta_fields is None:
        data_fields, meta_fields = _fields_of(nodetype, drop_fields)
    data, meta = tuple(data_fields), tuple(meta_fields)
    _check_fields(nodetype, data, meta, drop_fields)

    def unflatten(aux: Iterable[Any], children: Iterable[Any]) -> T:
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))

    for registry in (_registry, dispatch_registry):
        registry.register_dataclass_node(nodetype, list(data), list(meta))
    unflatten_functions[nodetype] = unflatten
    return nodetype


def register_static(cls: type[H]) -> type[H]:
    """Make ``cls`` a pytree node with no children: its instances are node data, so
    ``jit`` treats them as static arguments (they must be hashable).  Returns ``cls``.
    """
    register_pytree_with_keys(cls, lambda obj: ((), obj), lambda obj, _: obj)
    return cls


def static_field(**kwargs: Any) -> Any:
    """``dataclasses.field`` marking the field static (``metadata={'static': True}``),
    for :func:`register_dataclass` (``jax.tree.static``)."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


class _CallableShim:
    """A callable standing for a ``functools.partial`` inside a :class:`Partial`, so that
    ``functools.partial`` does not merge the two (the pytree must keep exactly the
    outer arguments as its children); it compares and hashes as the function it wraps."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        return bool(self.fun == (other.fun if isinstance(other, _CallableShim) else other))

    def __repr__(self) -> str:
        return f"_CallableShim({self.fun!r})"


class Partial(functools.partial[T]):
    """``functools.partial`` as a pytree: the bound positional and keyword arguments
    are its children, the function its (static) node data, so a ``Partial`` can be
    passed to and returned from ``jit``-compiled functions (as ``jax.tree_util.Partial``).
    """

    def __new__(cls, func: Callable[..., T], /, *args: Any, **kwargs: Any) -> Partial[T]:
        if isinstance(func, functools.partial):
            return super().__new__(cls, _CallableShim(func), *args, **kwargs)
        return super().__new__(cls, func, *args, **kwargs)


def _unflatten_partial(func: Callable[..., Any], children: Iterable[Any]) -> Partial[Any]:
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func), _unflatten_partial)

"""The auxiliary values of ``grad``/``value_and_grad``/``vjp`` with ``has_aux=True``.

As in JAX, only the leaves of ``aux`` that the transformation traces (values computed
from the differentiated arguments) become results of the traced program; any other
leaf (a Python object, a string, an ``int``, an array that does not depend on the
arguments, a value of an enclosing trace) is handed back as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.frontend.core.tracing import Tracer, current_trace
from plait.frontend.core.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["AuxPassThrough"]


class AuxPassThrough:
    """Wraps a ``has_aux`` function for one transformation call: :meth:`wrap` returns
    ``(out, traced aux leaves)`` from it, :meth:`merge` puts the others back."""

    def __init__(self) -> None:
        self._tree: PyTreeDef | None = None
        self._leaves: list[Any] = []
        self._traced: list[bool] = []

    def wrap(self, fun: Callable[..., Any]) -> Callable[..., Any]:
        """``fun`` returning only the traced leaves of its ``aux`` (a result that is not a
        pair is returned as it is, for the caller's error)."""
        def split(*args: Any, **kwargs: Any) -> Any:
            out = fun(*args, **kwargs)
            if not isinstance(out, tuple | list) or len(out) != 2:
                return out
            main, aux = out
            trace = current_trace()
            self._leaves, self._tree = tree_flatten(aux)
            self._traced = [type(x) is Tracer and x._trace is trace for x in self._leaves]
            return main, [x for x, t in zip(self._leaves, self._traced) if t]
        split.__name__ = getattr(fun, "__name__", "fun")
        return split

    def merge(self, traced: list[Any]) -> Any:
        """The user's ``aux``: the traced leaves' values and the other leaves as given."""
        assert self._tree is not None
        values = iter(traced)
        return tree_unflatten(self._tree, [next(values) if t else x
                                           for x, t in zip(self._leaves, self._traced)])

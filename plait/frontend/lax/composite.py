"""``composite``: stage a Python function as one named operation (``stablehlo.composite``)
whose semantics its decomposition defines, as JAX's ``lax.composite``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from plait.frontend.core.apply_jaxpr import eval_jaxpr_bind
from plait.frontend.core.arguments import abstractify
from plait.frontend.core.array_base import Array
from plait.frontend.core.trace_to_jaxpr import trace_to_jaxpr
from plait.frontend.core.tracing import Tracer, bind, current_trace
from plait.frontend.core.tree_util import tree_flatten, tree_unflatten
from plait.ir.errors import UnexpectedTracerError
from plait.ir.jaxpr import ClosedJaxpr
from plait.ir.primitives import composite_p
from plait.ir.primitives.composite import flatten_attribute

__all__ = ["composite"]

F = TypeVar("F", bound=Callable[..., Any])

_PASS_EXPLICITLY = ("Any values that aren't explicitly known at compile time must be "
                    "explicitly passed as arguments to the composite.")


def _attribute_leaves(value: Any) -> list[Any]:
    if isinstance(value, tuple | list):
        return [x for v in value for x in _attribute_leaves(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _attribute_leaves(v)]
    return [value]


def _check_attribute(name: str, composite_name: str, value: Any) -> None:
    for leaf in _attribute_leaves(value):
        if isinstance(leaf, Tracer):
            raise UnexpectedTracerError(
                "Found a plait Tracer as an attribute in the decomposition for the composite "
                f"op '{composite_name}'. This means that the decomposition function closes "
                "over a value that is involved in a plait transformation. " + _PASS_EXPLICITLY
                + "\n\nNote: If you are passing plait arrays as attributes, use numpy arrays "
                "instead.")
        if isinstance(leaf, Array):
            raise TypeError(f"composite: expected attribute {name!r} of '{composite_name}' to "
                            "hold NumPy arrays (attributes are compile-time constants), but got "
                            "a plait Array; pass np.asarray(...) of it instead")


def composite(decomposition: F, name: str, version: int = 0) -> F:
    """``decomposition`` as a composite operation called ``name``: calling the result
    stages one ``composite`` equation (lowered to ``stablehlo.composite``) whose
    semantics are those of ``decomposition``, so that a compiler may recognize the
    operation by name, version, attributes and types, and otherwise compiles the
    decomposition.

    Positional arguments of the call (pytrees of arrays) are the operands; keyword
    arguments are the operation's attributes (``None`` ones are left out of the
    lowered attributes): booleans, integers, floats, strings, NumPy scalars, dtypes,
    NumPy arrays, and tuples, lists and dicts (string keys) of those.

    Use it as a decorator: ``@functools.partial(lax.composite, name="my.tangent")``.
    Composites have no derivative and no batching rule (as in JAX): wrap one in
    :func:`plait.custom_jvp` or :func:`plait.custom_vjp` to differentiate it.

    Raises:
      UnexpectedTracerError: an attribute, or a value ``decomposition`` closes over, is
        traced by an enclosing transformation (pass it as an operand instead).
      TypeError: an attribute of a kind ``stablehlo.composite`` cannot carry.
    """
    @functools.wraps(decomposition)
    def call(*args: Any, **kwargs: Any) -> Any:
        for k, v in kwargs.items():
            _check_attribute(k, name, v)
        attributes = tuple(flatten_attribute(k, v) for k, v in kwargs.items())
        leaves, in_tree = tree_flatten(args)
        in_avals = [abstractify(x, f"args[{i}]", "composite") for i, x in enumerate(leaves)]
        traced = trace_to_jaxpr(functools.partial(decomposition, **kwargs), in_tree, in_avals,
                                "composite")
        jaxpr, consts = traced.consts_as_invars()
        if any(isinstance(c, Tracer) for c in consts):
            raise UnexpectedTracerError(
                "Found a plait Tracer as a constant in the decomposition for the composite op "
                f"'{name}'. This means that the decomposition function closes over a value "
                "that is involved in a plait transformation. " + _PASS_EXPLICITLY)
        consts = tuple(np.asarray(c) if isinstance(c, np.generic) else c for c in consts)
        if current_trace() is None:
            # Run eagerly, as JAX's impl does: the decomposition, equation by equation.
            outs = eval_jaxpr_bind(jaxpr, (), (*consts, *leaves))
            return tree_unflatten(traced.out_tree, outs)
        outs = bind(composite_p, *consts, *leaves, name=name, attributes=attributes,
                    jaxpr=ClosedJaxpr(jaxpr.replace(debug_info=None)), version=int(version))
        return tree_unflatten(traced.out_tree, outs)
    return call  # type: ignore[return-value]  # (same signature, as functools.wraps says)

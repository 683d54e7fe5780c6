"""``checkify``: functions whose run-time errors come back as values
(``plait.experimental.checkify``, as ``jax.experimental.checkify``).

``check(pred, msg, *fmt_args)`` records an assertion; ``checkify(f, errors)`` turns
``f`` into a function returning ``(err, out)``, where ``err`` is an :class:`Error`
(a pytree, so it leaves ``jit`` and ``vmap``) holding the first failure.  The
rewrite is :func:`~plait.transforms.checkify.checkify_jaxpr`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.arguments import wraps
from plait.frontend.core.array_base import Array
from plait.frontend.core.array_impl import ArrayImpl
from plait.frontend.core.trace_to_jaxpr import flatten_call, trace_function
from plait.frontend.core.tracing import Tracer, bind_n, current_trace
from plait.frontend.core.tree_util import (
    register_pytree_node,
    tree_flatten,
    tree_unflatten,
)
from plait.frontend.lax import ops as lax
from plait.ir import primitives as P
from plait.ir.errors import CheckifyRuntimeError
from plait.transforms.checkify import Site, checkify_jaxpr

JaxRuntimeError = CheckifyRuntimeError
"""JAX's name for a failed check's exception (a ``ValueError``)."""

__all__ = ["checkify", "check", "debug_check", "Error", "JaxRuntimeError", "FailedCheckError",
           "NaNError", "OOBError", "DivisionByZeroError", "user_checks", "nan_checks",
           "index_checks", "div_checks", "float_checks", "automatic_checks", "all_checks",
           "check_error", "init_error", "ErrorCategory"]


class JaxException(Exception):
    """The kinds of error ``checkify`` checks for (members of the ``errors`` sets)."""


class FailedCheckError(JaxException):
    """A ``check`` whose predicate was false."""


class NaNError(JaxException):
    """An operation that produced a NaN."""


class OOBError(JaxException):
    """An index out of bounds (dynamic slices and gathers)."""


class DivisionByZeroError(JaxException):
    """An integer division by zero."""


ErrorCategory = type[JaxException]
"""The type of the members of the ``errors`` sets (``FailedCheckError``, ``NaNError``
...), as ``jax.experimental.checkify.ErrorCategory``."""

_KINDS: Final = {FailedCheckError: "user", NaNError: "nan", OOBError: "oob",
                 DivisionByZeroError: "div"}
user_checks: Final = frozenset({FailedCheckError})
nan_checks: Final = frozenset({NaNError})
index_checks: Final = frozenset({OOBError})
div_checks: Final = frozenset({DivisionByZeroError})
float_checks: Final = nan_checks | div_checks
automatic_checks: Final = float_checks | index_checks
all_checks: Final = automatic_checks | user_checks


class Error:
    """What a checkified function's run found: nothing, or its first failure.

    Returned by ``jit`` and ``vmap`` like any pytree; under ``vmap`` it holds one
    error state per mapped element and reports the first that failed.
    """

    def __init__(self, flag: Any, code: Any, payloads: Sequence[Any],
                 sites: tuple[Site, ...]) -> None:
        self._flag, self._code, self._payloads, self._sites = flag, code, list(payloads), sites

    def get(self) -> str | None:
        """The failure's message, or ``None`` if no check failed."""
        flag = np.asarray(self._flag)
        if not flag.any():
            return None
        if not flag.ndim:
            return self._message_at(())
        # (Under vmap: one line per mapped element that failed.)
        return "\n".join(f"at mapped index {', '.join(map(str, where))}: "
                         f"{self._message_at(where)}"
                         for where in (tuple(int(i) for i in w) for w in np.argwhere(flag)))

    def _message_at(self, where: tuple[int, ...]) -> str:
        code = int(np.asarray(self._code)[where])
        site = self._sites[code]
        start = sum(len(s.payload) for s in self._sites[:code])
        values = [_payload_value(p, where)
                  for p in self._payloads[start:start + len(site.payload)]]
        return _message(site, values)

    def get_exception(self) -> CheckifyRuntimeError | None:
        """The failure as an exception (not raised), or ``None``."""
        msg = self.get()
        return None if msg is None else CheckifyRuntimeError(msg)

    def throw(self) -> None:
        """Raise the failure as a :class:`JaxRuntimeError` (a ``ValueError``); nothing if no
        check failed."""
        exc = self.get_exception()
        if exc is not None:
            raise exc

    def __repr__(self) -> str:
        if current_trace() is not None or any(type(x) is Tracer for x in
                                              (self._flag, self._code)):
            return "Error(<traced>)"
        return f"Error({self.get()!r})"

    __str__ = __repr__


def _unflatten_error(sites: tuple[Site, ...], leaves: Any) -> Error:
    flag, code, *payloads = leaves
    return Error(flag, code, payloads, sites)


register_pytree_node(Error, lambda e: ((e._flag, e._code, *e._payloads), e._sites),
                     _unflatten_error)


init_error: Final = Error(np.bool_(False), np.int32(0), [], ())
"""The error of a run where nothing failed (``init_error.get()`` is ``None``)."""


def _payload_value(payload: Any, where: tuple[int, ...]) -> Any:
    """A failed check's value, as an Array (JAX formats a message with Arrays:
    ``Array(nan, dtype=float32)``); ``where`` picks a mapped element."""
    x = payload[where] if where else payload
    return x if isinstance(x, Array) else ArrayImpl.from_numpy(np.asarray(x))


def _message(site: Site, values: list[Any]) -> str:
    if site.kind == "user":
        args, kwargs = tree_unflatten(site.detail.fmt_tree, values)
        return f"{site.detail.text.format(*args, **kwargs)} (`check` failed)"
    if site.kind == "nan":
        return f"nan generated by primitive: {site.detail}."
    if site.kind == "div":
        return "division by zero"
    shape, (index, axis) = site.detail, (int(values[0]), int(values[1]))
    return (f"out-of-bounds indexing for array of shape {shape}: index {index} is out of "
            f"bounds for axis {axis} with size {shape[axis]}. ")


def _kinds(errors: Any) -> frozenset[str]:
    if not isinstance(errors, frozenset | set) or not all(e in _KINDS for e in errors):
        raise TypeError(f"checkify: expected errors to be a set of checkify error kinds "
                        f"(user_checks, nan_checks, index_checks, div_checks, or their "
                        f"unions), but got {errors!r}")
    return frozenset(_KINDS[e] for e in errors)


def checkify(fun: Callable[..., Any], errors: frozenset[type[JaxException]] = user_checks
             ) -> Callable[..., tuple[Error, Any]]:
    """``fun`` returning ``(err, out)``: ``out`` its result, ``err`` the first of its
    checks of the ``errors`` kinds that failed (``err.get()`` is ``None`` if none did)."""
    kinds = _kinds(errors)

    @wraps(fun)
    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        call = flatten_call(fun, args, kwargs, (), ())
        traced = trace_function(fun, call, "checkify")
        result = checkify_jaxpr(traced.closed.jaxpr, kinds)
        values = apply_jaxpr(result.jaxpr, traced.closed.consts, call.leaves, "checkify")
        n = 2 + sum(len(s.payload) for s in result.sites)
        err = Error(values[0], values[1], values[2:n], result.sites)
        return err, tree_unflatten(traced.out_tree, values[n:])
    return checked


def check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Assert ``pred``: under ``checkify`` a failure becomes its error, formatted as
    ``msg.format(*fmt_args, **fmt_kwargs)``; run directly, it raises at once."""
    _check(pred, msg, fmt_args, fmt_kwargs, debug=False)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Like :func:`check`, but ignored (not an error) outside ``checkify``."""
    _check(pred, msg, fmt_args, fmt_kwargs, debug=True)


def _check(pred: Any, msg: str, fmt_args: tuple[Any, ...], fmt_kwargs: dict[str, Any],
           debug: bool) -> None:
    if not isinstance(msg, str):
        raise TypeError(f"check: expected a message string, but got {msg!r}")
    leaves, tree = tree_flatten((fmt_args, fmt_kwargs))
    for x in leaves:
        if not isinstance(x, Array | np.ndarray | np.generic):
            raise TypeError(f"Formatting arguments to checkify.check need to be PyTrees of "
                            f"arrays, but got {x!r} of type {type(x)}.")
    if np.ndim(pred) != 0 or np.result_type(getattr(pred, "dtype", type(pred))) != np.bool_:
        # (JAX's words, and what to do.)
        raise TypeError(f"check takes a scalar pred as argument, got "
                        f"{getattr(pred, 'aval', pred)}: reduce it with jnp.all or jnp.any")
    if current_trace() is None:  # (run directly: the values are known)
        if not debug and not bool(pred):
            args, kwargs = tree_unflatten(tree, leaves)
            raise CheckifyRuntimeError(f"{msg.format(*args, **kwargs)} (`check` failed)")
        return
    bind_n(P.check_p, pred, *leaves, message=P.CheckMessage(msg, tree), debug=debug)


def check_error(error: Error) -> None:
    """Raise ``error``'s failure as a ``JaxRuntimeError`` (nothing if none); under
    ``checkify`` the failure becomes the checkified function's error instead, so a
    checkified, jitted function's error can be checked again.

    Raises:
      TypeError: ``error`` is not an :class:`Error` (JAX's message).
    """
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} "
                        "instead.")
    leaves = [error._flag, error._code, *error._payloads]
    if current_trace() is None and not any(type(x) is Tracer for x in leaves):
        error.throw()
        return
    flag, code, payloads = error._flag, error._code, error._payloads
    if np.ndim(flag):  # (from vmap: the first element that failed)
        n = int(np.prod(np.shape(flag)))

        def first(x: Any) -> Any:
            rows = lax.reshape(x, (n, *np.shape(x)[np.ndim(error._flag):]))
            return lax.dynamic_index_in_dim(rows, at, keepdims=False)
        at = lax.argmax(lax.reshape(flag, (n,)), 0, np.int32)
        flag, code, payloads = first(flag), first(code), [first(p) for p in payloads]
    start = 0
    for i, site in enumerate(error._sites):
        values = payloads[start:start + len(site.payload)]
        start += len(site.payload)
        text, args, kwargs = _site_format(site, values)
        _check(~(flag & (code == i)), text, args, kwargs, debug=False)


def _braced(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _site_format(site: Site, values: list[Any]
                 ) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """A site's message as a ``check`` format and its arguments (a failure that was not
    a user check becomes one, with the same message)."""
    if site.kind == "user":
        args, kwargs = tree_unflatten(site.detail.fmt_tree, values)
        return site.detail.text, tuple(args), dict(kwargs)
    if site.kind == "oob":
        shape = site.detail
        size = lax.dynamic_index_in_dim(np.asarray(shape, np.int32), values[1], keepdims=False)
        return (f"out-of-bounds indexing for array of shape {_braced(str(shape))}: index {{}} "
                "is out of bounds for axis {} with size {}. ", (values[0], values[1], size), {})
    return _braced(_message(site, values)), (), {}

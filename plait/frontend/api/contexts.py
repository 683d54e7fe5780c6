"""Context managers that change how code is traced: ``disable_jit``,
``ensure_compile_time_eval``, ``default_matmul_precision``, ``numpy_rank_promotion``,
``debug_nans``, ``debug_infs``, ``log_compiles``, ``default_device``, ``check_tracer_leaks``
(``checking_leaks``), ``debug_key_reuse``, ``explain_cache_misses``, ``named_scope`` and
``named_call``, as JAX's; and JAX's ``enable_checks``, ``allow_f16_reductions``,
``softmax_custom_jvp``, ``remove_size_one_mesh_axis_from_type``, ``auto_pcast`` and
``jax2tf_associative_scan_reductions`` (the last two change nothing in plait).  The
guards are in :mod:`plait.frontend.api.guards`.

All but ``named_scope`` and ``named_call`` set the option of their name
(``ensure_compile_time_eval``: ``eager_constant_folding``; ``enable_checks``:
``check_jaxprs``) for the duration of a block;
their values are part of every trace and dispatch key, so a program traced or
compiled outside the block is never reused inside it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from plait.frontend.core.source_lines import scopes
from plait.ir import config as _config

__all__ = ["disable_jit", "ensure_compile_time_eval", "named_scope", "named_call",
           "default_matmul_precision", "numpy_rank_promotion", "debug_nans", "debug_infs",
           "log_compiles", "default_device", "check_tracer_leaks", "checking_leaks",
           "debug_key_reuse", "explain_cache_misses", "enable_checks", "allow_f16_reductions",
           "softmax_custom_jvp", "remove_size_one_mesh_axis_from_type", "auto_pcast",
           "jax2tf_associative_scan_reductions"]

F = TypeVar("F", bound=Callable[..., Any])


def _option(name: str, value: Any) -> contextlib.AbstractContextManager[None]:
    _config.check(name, value)  # (at once, as JAX: not when the block is entered)
    return _set(name, value)


@contextlib.contextmanager
def _set(name: str, value: Any) -> Iterator[None]:
    previous = _config.read(name)
    _config.update(name, value)
    try:
        yield
    finally:
        _config.update(name, previous)


def disable_jit(disable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, ``jit``-decorated functions run as plain Python, operation by
    operation, and ``cond``, ``switch``, ``while_loop``, ``fori_loop`` and ``scan`` with
    concrete predicates and bounds run as Python control flow (for ``print`` and
    debuggers).  ``vmap``, ``grad`` and the other transformations still apply."""
    return _option("disable_jit", bool(disable))


def ensure_compile_time_eval() -> contextlib.AbstractContextManager[None]:
    """Within the block, an operation none of whose operands is traced is computed at
    once, even while tracing for ``jit``: its result is a concrete array that Python
    control flow may branch on.  Operations on traced values are staged as usual."""
    return _option("eager_constant_folding", True)


def default_matmul_precision(precision: str | None) -> contextlib.AbstractContextManager[None]:
    """Within the block, contractions called with ``precision=None`` (``dot``,
    ``matmul``, ``einsum``, ``dot_general``, convolutions) take ``precision``
    (``'highest'``, ``'float32'``, ``'bfloat16'``, a ``DotAlgorithmPreset`` name...).

    Raises:
      ValueError: ``precision`` is neither ``None`` nor one of JAX's names for it.
    """
    return _option("default_matmul_precision", precision)


def numpy_rank_promotion(mode: str) -> contextlib.AbstractContextManager[None]:
    """Within the block, ``plait.numpy`` broadcasts operands of different ranks as NumPy
    (``'allow'``), with a ``UserWarning`` (``'warn'``), or not at all (``'raise'``: a
    ``ValueError``).

    Raises:
      ValueError: ``mode`` is not one of the three.
    """
    return _option("numpy_rank_promotion", mode)


def default_device(device: Any) -> contextlib.AbstractContextManager[None]:
    """Within the block, arrays are created on ``device`` (``None`` or ``'cpu'``: the
    first device) and computations on data not committed to another device run there.

    Raises:
      ValueError: ``device`` is not a device of this process (``plait.devices()``).
    """
    return _option("default_device", device)


def check_tracer_leaks(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, every trace ends with a search for its tracers that are still
    alive (other than its results): a tracer stored in a global, an attribute or a
    closure raises ``UnexpectedTracerError`` at once, naming what holds it, rather than
    when it is next used.  Slow (a garbage collection per trace): for debugging."""
    return _option("check_tracer_leaks", bool(enable))


def checking_leaks() -> contextlib.AbstractContextManager[None]:
    """:func:`check_tracer_leaks` turned on (JAX's other name for it)."""
    return check_tracer_leaks(True)


def debug_key_reuse(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, using a typed PRNG key (``plait.random.key``) twice raises
    ``KeyReuseError``: traced programs are analysed for keys consumed twice, and concrete
    keys remember the calls that consumed them (the ``debug_key_reuse`` option; see
    ``plait.experimental.key_reuse``)."""
    return _option("debug_key_reuse", bool(enable))


def explain_cache_misses(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, each miss of a trace, compile or eager-operation cache is logged
    with what differed from the entries there (the ``explain_cache_misses`` option)."""
    return _option("explain_cache_misses", bool(enable))


def log_compiles(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, each compilation is logged (WARNING level, logger
    ``plait.compiles``) with its argument types and the time of lowering and of XLA's
    compilation, in JAX's words."""
    return _option("log_compiles", bool(enable))


def debug_nans(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, an operation producing a NaN raises ``FloatingPointError``
    naming it (a jitted call is run again operation by operation to find it)."""
    return _option("debug_nans", bool(enabled))


def debug_infs(enabled: bool = True) -> contextlib.AbstractContextManager[None]:
    """As :func:`debug_nans`, for infinities."""
    return _option("debug_infs", bool(enabled))


def enable_checks(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, every jaxpr a transformation produces is type-checked (JAX's
    name for its internal checks; plait's option ``check_jaxprs``).  Slow: for
    debugging a transformation."""
    return _option("check_jaxprs", bool(enable))


def allow_f16_reductions(allow: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within a ``allow_f16_reductions(False)`` block, ``lax.reduce_sum`` of a
    ``float16`` or ``bfloat16`` operand over a dimension longer than 1 raises
    ``ValueError`` (``plait.numpy``'s sums accumulate in ``float32`` and still work)."""
    return _option("allow_f16_reductions", bool(allow))


def softmax_custom_jvp(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Within the block, ``nn.softmax`` is differentiated by a custom JVP rule,
    ``y * (t - sum(y * t))``, rather than through its operations (JAX 0.10.2's
    default, which cuts the derivative of the maximum it subtracts)."""
    return _option("softmax_custom_jvp", bool(enable))


def remove_size_one_mesh_axis_from_type(enable: bool = True
                                        ) -> contextlib.AbstractContextManager[None]:
    """Within the block, array types made leave mesh axes of size 1 out of their
    shardings: over a mesh ``{'x': 4, 'y': 1}``, ``float32[4@x,2]`` rather than
    ``float32[4@x,2@y]`` (types made before keep theirs)."""
    return _option("remove_size_one_mesh_axis_from_type", bool(enable))


def auto_pcast(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """Accepted for JAX's switch of automatic ``pvary`` insertion in ``shard_map``
    bodies; plait's values carry no varying-axes type, so there is nothing to insert
    and the block changes nothing."""
    return _option("auto_pcast", bool(enable))


def jax2tf_associative_scan_reductions(enable: bool = True
                                       ) -> contextlib.AbstractContextManager[None]:
    """Accepted for JAX's option of this name, a switch of jax2tf that JAX 0.10.2 does
    not read: the block changes nothing."""
    return _option("jax2tf_associative_scan_reductions", bool(enable))


class named_scope(contextlib.ContextDecorator):
    """Name the operations traced within the block (or within a function it decorates)
    ``name/...``: the jaxpr's source info (``pretty_print(source_info=True)``) and the
    compiled program's op names (``op_name`` in the HLO; profilers show them) say which
    scope each operation came from.  Scopes nest.

    Raises:
      TypeError: ``name`` is not a string.
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError("named_scope name argument must be a string.")
        self.name = name
        """The scope's name."""
        self._outer: list[str] = []  # (one entry per active use: a decorated function may recurse)

    def __enter__(self) -> None:
        outer = scopes.name_stack
        self._outer.append(outer)
        scopes.name_stack = f"{outer}/{self.name}" if outer else self.name

    def __exit__(self, *exc: object) -> None:
        scopes.name_stack = self._outer.pop()


def named_call(fun: F, *, name: str | None = None) -> F:
    """``fun``, its operations traced inside ``named_scope(name)`` (``name`` defaults
    to ``fun.__name__``)."""
    return named_scope(fun.__name__ if name is None else name)(fun)

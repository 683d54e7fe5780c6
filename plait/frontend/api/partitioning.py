"""Partitioning hints that leave values alone: ``custom_partitioning`` (a function with
its own SPMD partitioning rule) and ``shard_alike`` (two values sharded the same way),
as ``jax.experimental.custom_partitioning`` and ``jax.experimental.shard_alike``.

Both only tell XLA's partitioner how to split a computation over devices; the values
are those of the function (of the operands) either way.  plait runs the function
itself and lets the partitioner split it, as JAX does on one device and inside a
``shard_map`` over every axis; the partition rules a program defines are accepted,
and kept on the wrapper, but not called.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from plait.frontend.core.host_values import value_aval
from plait.frontend.core.tree_util import tree_flatten

__all__ = ["custom_partitioning", "shard_alike"]


class custom_partitioning:  # noqa: N801  (JAX's name)
    """A function whose SPMD partitioning the program defines with
    :meth:`def_partition` (``partition``, ``infer_sharding_from_operands``,
    ``propagate_user_sharding``, or a Shardy ``sharding_rule``), as JAX's.

    Calling it calls the function (``static_argnums`` name arguments that are Python
    values); its values, derivatives and batching are the function's.  The rules are
    kept but not called: plait lets XLA partition the function's own operations
    (values agree with JAX's, which calls them over several devices).
    """

    def __init__(self, fun: Callable[..., Any], static_argnums: Sequence[int] = ()) -> None:
        if not callable(fun):
            raise TypeError(f"custom_partitioning: expected a callable, but got {fun!r}")
        self.fun = fun
        """The function."""
        self.static_argnums = tuple(static_argnums)
        """The positions of the arguments that are not arrays."""
        self.partition: Callable[..., Any] | None = None
        """The partitioning rule :meth:`def_partition` was given (not called by plait)."""
        self.infer_sharding_from_operands: Callable[..., Any] | None = None
        """The rule giving the result's sharding from the operands' (not called by plait)."""
        self.propagate_user_sharding: Callable[..., Any] | None = None
        """The rule giving the operands' sharding from a user's (not called by plait)."""
        self.sharding_rule: Any = None
        """The Shardy sharding rule (an einsum-like string or a callable), if given."""
        self.decode_shardings = True
        """Whether the rules take shardings as ``NamedSharding`` s (JAX's flag)."""
        functools.update_wrapper(self, fun)

    def __getattr__(self, name: str) -> Any:
        # (As JAX's: other attributes are the function's, e.g. ``__name__`` of a partial.)
        fun = self.__dict__.get("fun")
        if fun is None:
            raise AttributeError(name)
        return getattr(fun, name)

    def def_partition(self, partition: Callable[..., Any],
                      infer_sharding_from_operands: Callable[..., Any] | None = None,
                      propagate_user_sharding: Callable[..., Any] | None = None,
                      decode_shardings: bool = True, sharding_rule: Any = None, *,
                      reduction_factors: Sequence[str] = (),
                      need_replication_factors: Sequence[str] = (),
                      permutation_factors: Sequence[str] = (),
                      **factor_sizes: int) -> Callable[..., Any]:
        """Set the partitioning rules (kept, not called; see the class) and return
        ``partition``.

        Raises:
          ValueError: factor keywords without a string ``sharding_rule``.
        """
        if not isinstance(sharding_rule, str):
            extra = dict(factor_sizes)
            for key, value in (("reduction_factors", reduction_factors),
                               ("need_replication_factors", need_replication_factors),
                               ("permutation_factors", permutation_factors)):
                if value:
                    extra[key] = value  # type: ignore[assignment]  # (JAX's message lists them)
            if extra:
                raise ValueError(f"Unknown keyword arguments: {extra}")
        self.partition = partition
        self.infer_sharding_from_operands = infer_sharding_from_operands
        self.propagate_user_sharding = propagate_user_sharding
        self.decode_shardings = decode_shardings
        self.sharding_rule = sharding_rule
        return partition

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:  # (as JAX: bound to positions first, so static_argnums still apply)
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            bound.apply_defaults()
            if bound.kwargs:
                raise TypeError("custom_partitioning functions take positional arguments "
                                f"(and keywords naming them), but got {sorted(bound.kwargs)}")
            args = bound.args
        return self.fun(*args)


def shard_alike(x: Any, y: Any) -> tuple[Any, Any]:
    """``x`` and ``y`` (pytrees of the same structure, leaves of equal shapes), asking
    that each pair of leaves be sharded alike; plait returns them unchanged (their
    shardings are XLA's to choose, as any intermediate's).

    Raises:
      ValueError: the structures or a pair of leaf shapes differ.
    """
    x_leaves, x_tree = tree_flatten(x)
    y_leaves, y_tree = tree_flatten(y)
    if x_tree != y_tree:
        raise ValueError(f"Trees should be equal. Got x_tree: {x_tree}, y_tree: {y_tree}")
    for a, b in zip(x_leaves, y_leaves):
        sa, sb = value_aval(a).shape, value_aval(b).shape
        if sa != sb:
            raise ValueError(f"The leaves shapes of `x` and `y` should match. Got `x` leaf "
                             f"shape: {sa} and `y` leaf shape: {sb}.")
    return x, y

"""Sparse-aware differentiation (JAX 0.10.2's ``jax.experimental.sparse.grad``,
``value_and_grad``, ``jacfwd``, ``jacrev`` and ``jacobian``).

Differentiating with respect to a sparse array means with respect to its stored values
only: the derivative lives in the subspace of its sparsity pattern, and comes back as a
sparse array of the same format and indices.  Each function here flattens the arguments
to buffers, differentiates the ordinary transformation with respect to the ``data``
buffer of each sparse argument (and every leaf of a dense one), and wraps each ``data``
derivative back with the argument's other buffers.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from plait.frontend.api.autodiff import grad as dense_grad
from plait.frontend.api.autodiff import value_and_grad as dense_value_and_grad
from plait.frontend.api.jacobians import jacfwd as dense_jacfwd
from plait.frontend.api.jacobians import jacrev as dense_jacrev
from plait.frontend.api.vmap import vmap
from plait.frontend.core.tree_util import PyTreeDef, tree_flatten, tree_leaves, tree_unflatten
from plait.frontend.sparse.base import JAXSparse
from plait.ir.errors import ArgumentError

__all__ = ["grad", "value_and_grad", "jacfwd", "jacrev", "jacobian"]


def _is_sparse(x: Any) -> bool:
    return isinstance(x, JAXSparse)


class _Flattened:
    """The arguments of one call as buffers, which buffers to differentiate, and how to
    give each derivative back the shape of its argument."""

    def __init__(self, args: tuple[Any, ...], argnums: int | Sequence[int]) -> None:
        nums = [argnums] if isinstance(argnums, int) else list(argnums)
        selected = {self._normalize(n, len(args)) for n in nums}
        self.leaves, self.tree = tree_flatten(args, is_leaf=_is_sparse)
        # Per argument, its sparse-or-dense leaves: which of them are differentiated.
        counts = [len(tree_leaves(a, is_leaf=_is_sparse)) for a in args]
        owner = [i for i, c in enumerate(counts) for _ in range(c)]
        self.chosen = [i for i in range(len(self.leaves)) if owner[i] in selected]
        self.buffers: list[Any] = []
        self.buffer_trees: list[PyTreeDef] = []
        self.diff_positions: list[int] = []
        for i, leaf in enumerate(self.leaves):
            bufs, tree = tree_flatten(leaf)
            if i in self.chosen:
                # Only a sparse array's values are differentiated, not its indices.
                self.diff_positions.append(len(self.buffers))
            self.buffers.extend(bufs)
            self.buffer_trees.append(tree)

    @staticmethod
    def _normalize(argnum: Any, count: int) -> int:
        n = operator.index(argnum)
        if not -count <= n < count:
            raise ArgumentError(f"differentiating with respect to argnums={n} requires at "
                                f"least {n + 1 if n >= 0 else -n} positional arguments, but "
                                f"the function was called with {count}")
        return n % count

    def function(self, fun: Callable[..., Any], kwargs: dict[str, Any]) -> Callable[..., Any]:
        """``fun`` as a function of the buffers."""
        def flat_fun(*buffers: Any) -> Any:
            leaves, start = [], 0
            for tree in self.buffer_trees:
                leaves.append(tree_unflatten(tree, buffers[start:start + tree.num_leaves]))
                start += tree.num_leaves
            return fun(*tree_unflatten(self.tree, leaves), **kwargs)
        return flat_fun

    def _rebuild(self, leaf_index: int, derivative: Any) -> Any:
        leaf = self.leaves[leaf_index]
        if not _is_sparse(leaf):
            return derivative
        bufs, tree = tree_flatten(leaf)

        def with_data(d: Any) -> Any:
            return tree_unflatten(tree, [d, *bufs[1:]])
        # A Jacobian has the output's dimensions in front of the data's: the sparse
        # derivative gets them as batch dimensions.
        for _ in range(derivative.ndim - bufs[0].ndim):
            with_data = vmap(with_data)
        return with_data(derivative)

    def derivatives(self, flat: Sequence[Any]) -> Any:
        """The derivatives of the differentiated buffers, as JAX gives them: one entry per
        differentiated argument, a lone one unwrapped."""
        per_leaf: list[Any] = [None] * len(self.leaves)
        for leaf_index, d in zip(self.chosen, flat):
            per_leaf[leaf_index] = self._rebuild(leaf_index, d)
        per_arg = tree_unflatten(self.tree, per_leaf)
        kept = tuple(a for a in per_arg if tree_leaves(a))
        return kept[0] if len(kept) == 1 else kept


def _sparse_aware(transform: Callable[..., Callable[..., Any]], name: str) -> Callable[
        ..., Callable[..., Any]]:
    """The sparse-aware version of a transformation whose result is the derivatives (or,
    with ``has_aux``, the pair of derivatives and auxiliary data)."""
    def sparse_transform(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
                         has_aux: bool = False, **options: Any) -> Callable[..., Any]:
        @functools.wraps(fun)
        def transformed(*args: Any, **kwargs: Any) -> Any:
            flat = _Flattened(args, argnums)
            out = transform(flat.function(fun, kwargs), argnums=tuple(flat.diff_positions),
                            has_aux=has_aux, **options)(*flat.buffers)
            if has_aux:
                return flat.derivatives(out[0]), out[1]
            return flat.derivatives(out)
        return transformed
    sparse_transform.__name__ = sparse_transform.__qualname__ = name
    return sparse_transform


grad = _sparse_aware(dense_grad, "grad")
grad.__doc__ = """:func:`plait.grad` for functions of sparse arrays: the gradient with
respect to a sparse argument is taken in the subspace of its sparsity pattern (with
respect to its stored values) and returned as a sparse array of the same format and
indices.  Arguments are those of :func:`plait.grad`."""

jacfwd = _sparse_aware(dense_jacfwd, "jacfwd")
jacfwd.__doc__ = """:func:`plait.jacfwd` for functions of sparse arrays (see :func:`grad`):
the Jacobian with respect to a sparse argument is a sparse array whose batch dimensions
are the output's.  Outputs must be dense."""

jacrev = _sparse_aware(dense_jacrev, "jacrev")
jacrev.__doc__ = """:func:`plait.jacrev` for functions of sparse arrays (see
:func:`jacfwd`)."""

jacobian = jacrev


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, **options: Any) -> Callable[..., tuple[Any, Any]]:
    """:func:`plait.value_and_grad` for functions of sparse arrays (see :func:`grad`)."""
    @functools.wraps(fun)
    def transformed(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        flat = _Flattened(args, argnums)
        value, flat_grads = dense_value_and_grad(
            flat.function(fun, kwargs), argnums=tuple(flat.diff_positions), has_aux=has_aux,
            **options)(*flat.buffers)
        return value, flat.derivatives(flat_grads)
    return transformed

"""``checkpoint`` (alias ``remat``): recompute a function's intermediates in reverse mode.

The function is traced and bound as one ``remat2`` equation.  When it is
differentiated, the backward pass recomputes the intermediates instead of
saving them, except those the ``policy`` allows saving
(:data:`checkpoint_policies`).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar, cast

from plait.frontend.core.arguments import static_args
from plait.frontend.core.trace_to_jaxpr import flatten_call, trace_function
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import bind
from plait.frontend.core.tree_util import tree_unflatten
from plait.ir.jaxpr import consts_as_invars
from plait.ir.primitives import POLICIES, RematPolicy, remat_p

__all__ = ["checkpoint", "remat", "checkpoint_policies"]

P = ParamSpec("P")
R = TypeVar("R")

checkpoint_policies = types.SimpleNamespace(**POLICIES)
"""The saving policies: ``nothing_saveable``, ``everything_saveable``, ``dots_saveable``."""


def checkpoint(fun: Callable[P, R], *, prevent_cse: bool = True,
               policy: RematPolicy | None = None,
               static_argnums: int | Sequence[int] = ()) -> Callable[P, R]:
    """``fun``, recomputed rather than saved when differentiated (see the module doc)."""
    nums, _ = static_args(static_argnums, None)

    @functools.wraps(fun)
    @api_boundary
    def remat_f(*args: P.args, **kwargs: P.kwargs) -> R:
        call = flatten_call(fun, args, kwargs, nums, ())
        traced = trace_function(fun, call, "checkpoint")
        closed, consts = consts_as_invars(traced.closed)
        outs = bind_remat(closed, consts, call.leaves, prevent_cse, policy)
        # out_tree is the structure of fun's own result, so the rebuilt value is an R.
        return cast(R, tree_unflatten(traced.out_tree, outs))

    return remat_f


def bind_remat(closed: Any, consts: Sequence[Any], leaves: Sequence[Any], prevent_cse: bool,
               policy: RematPolicy | None) -> Any:
    """Bind ``remat2`` over a traced function."""
    return bind(remat_p, *consts, *leaves, jaxpr=closed, prevent_cse=prevent_cse,
                differentiated=False, policy=policy)


remat = checkpoint

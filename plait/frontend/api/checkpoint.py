"""``checkpoint`` (alias ``remat``): recompute a function's intermediates in reverse mode.

The function is traced and bound as one ``remat2`` equation.  When it is
differentiated, the backward pass recomputes the intermediates instead of
saving them, except those the ``policy`` allows saving
(:data:`checkpoint_policies`, or a function of the primitive, the operand types
and the parameters, as in JAX).  :func:`checkpoint_name` labels a value for the
policies that select values by name.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any, Final, ParamSpec, TypeVar, cast

from plait.frontend.api.refs import with_finals, write_finals
from plait.frontend.core.arguments import static_args, wraps
from plait.frontend.core.refs import Ref, carrying_refs
from plait.frontend.core.trace_to_jaxpr import flatten_call, trace_function
from plait.frontend.core.traceback_util import api_boundary
from plait.frontend.core.tracing import bind, current_trace
from plait.frontend.core.tree_util import tree_map, tree_unflatten
from plait.ir.jaxpr import consts_as_invars
from plait.ir.primitives import (
    POLICIES,
    POLICY_CONSTRUCTORS,
    RematPolicy,
    custom_policy,
    name_p,
    remat_p,
)

__all__ = ["checkpoint", "remat", "checkpoint_policies", "checkpoint_name"]

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

checkpoint_policies = types.SimpleNamespace(
    **POLICIES, **POLICY_CONSTRUCTORS,
    checkpoint_dots=POLICIES["dots_saveable"],
    checkpoint_dots_with_no_batch_dims=POLICIES["dots_with_no_batch_dims_saveable"])
"""The saving policies, under JAX's names: ``nothing_saveable``,
``everything_saveable``, ``dots_saveable`` (``checkpoint_dots``),
``dots_with_no_batch_dims_saveable`` (``checkpoint_dots_with_no_batch_dims``), and
the constructors ``save_only_these_names(*names)``, ``save_any_names_but_these``,
``save_anything_except_these_names``, ``save_from_both_policies(p1, p2)``,
``save_and_offload_only_these_names`` and ``offload_dot_with_no_batch_dims``."""


def _policy(policy: RematPolicy | Callable[..., Any] | None) -> RematPolicy | None:
    if policy is None or isinstance(policy, RematPolicy):
        return policy
    if callable(policy):
        return custom_policy(policy)
    raise TypeError(f"checkpoint: expected a policy (checkpoint_policies.*, or a function of "
                    f"the primitive, operand types and params), but got {policy!r}")


_NOT_GIVEN: Final = object()


def checkpoint(fun: Callable[P, R], *, prevent_cse: bool = True,
               policy: RematPolicy | Callable[..., Any] | None = None,
               static_argnums: int | Sequence[int] = (),
               static_argnames: str | Sequence[str] = (),
               concrete: Any = _NOT_GIVEN) -> Callable[P, R]:
    """``fun``, recomputed rather than saved when differentiated (see the module doc).

    Raises:
      NotImplementedError: ``concrete`` is given (removed in JAX 0.10, as in JAX).
    """
    if concrete is not _NOT_GIVEN:
        raise NotImplementedError(
            "The `concrete` option to `jax.checkpoint` was deprecated in JAX v0.8.2, and "
            "removed in JAX v0.10.0. In its place please use `static_argnums`; for details "
            "refer to https://docs.jax.dev/en/latest/jep/11830-new-remat-checkpoint.html.")
    nums, names = static_args(static_argnums, static_argnames)
    rule = _policy(policy)

    @wraps(fun)
    @api_boundary
    def remat_f(*args: P.args, **kwargs: P.kwargs) -> R:
        def attempt(token: object, refs: tuple[Ref, ...]) -> Any:
            # Refs the function uses are plumbing: their final values are results of
            # the checkpointed call, written back after it.
            f = with_finals(fun, refs, False) if refs else fun
            # (Unhashable static arguments are taken, as in JAX: nothing caches them.)
            call = flatten_call(f, args, kwargs, nums, names, hashable=False)
            traced = trace_function(f, call, "checkpoint", refs=token)
            closed, consts = consts_as_invars(traced.closed)
            outs = bind_remat(closed, consts, call.leaves, prevent_cse, rule)
            out = tree_unflatten(traced.out_tree, outs)
            if not refs:
                return out
            write_finals(refs, out[1], False)
            return out[0]
        # The rebuilt value has the structure of fun's own result, so it is an R.
        return cast(R, carrying_refs(attempt))

    return remat_f


def bind_remat(closed: Any, consts: Sequence[Any], leaves: Sequence[Any], prevent_cse: bool,
               policy: RematPolicy | None) -> Any:
    """Bind ``remat2`` over a traced function."""
    return bind(remat_p, *consts, *leaves, jaxpr=closed, prevent_cse=prevent_cse,
                differentiated=False, policy=policy)


def checkpoint_name(x: T, name: str) -> T:
    """``x`` (a pytree), each leaf labelled ``name`` for the policies of
    :data:`checkpoint_policies` that select values by name.  The identity outside
    any transformation."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: expected a str name, but got {name!r}")
    if current_trace() is None:
        return x
    return cast(T, tree_map(lambda leaf: bind(name_p, leaf, name=name), x))


remat = checkpoint

"""First-order optimizers over pytrees of parameters, as ``jax.example_libraries.optimizers``.

An optimizer is a triple of functions, :class:`Optimizer`: ``init_fn(params)`` makes
an :class:`OptimizerState`, ``update_fn(step, grads, state)`` takes one step, and
``params_fn(state)`` reads the parameters back.  Each optimizer below is written
for a single array and lifted to pytrees by :func:`optimizer`; its state for a
parameter is a small pytree of arrays (the parameter, then moments).  The update
rules perform JAX's arithmetic in JAX's order, so the same gradients give the
same parameters.  Step sizes are a number or a schedule ``step -> number``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeAlias

from plait.frontend import numpy as pnp
from plait.frontend.core.tree_util import (
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_map,
    tree_unflatten,
)

__all__ = ["Optimizer", "OptimizerState", "Schedule", "Step", "optimizer", "sgd", "momentum",
           "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3",
           "constant", "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "make_schedule", "l2_norm", "clip_grads", "JoinPoint",
           "unpack_optimizer_state", "pack_optimizer_state"]

Step: TypeAlias = int
"""The index of an update, counting from 0."""
Schedule: TypeAlias = Callable[[Any], Any]
"""A step size as a function of the step index."""
Params: TypeAlias = Any
"""A pytree of parameter arrays."""
InitFn: TypeAlias = Callable[[Params], "OptimizerState"]
UpdateFn: TypeAlias = Callable[[Step, Params, "OptimizerState"], "OptimizerState"]
ParamsFn: TypeAlias = Callable[["OptimizerState"], Params]


class OptimizerState(NamedTuple):
    """An optimizer's state for a whole pytree of parameters, kept flat: a pytree whose
    leaves are the state arrays (so it passes through ``jit`` and ``device_put``)."""

    packed_state: tuple[list[Any], ...]
    """For each parameter leaf, the leaves of its state."""
    tree_def: PyTreeDef
    """The structure of the parameters."""
    subtree_defs: tuple[PyTreeDef, ...]
    """For each parameter leaf, the structure of its state."""


# The structures are auxiliary data, not leaves: only the arrays are children.
register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(next(iter(children)), aux[0], aux[1]))


class Optimizer(NamedTuple):
    """The three functions of an optimizer over pytrees."""

    init_fn: InitFn
    """``params -> state``."""
    update_fn: UpdateFn
    """``(step, grads, state) -> state``."""
    params_fn: ParamsFn
    """``state -> params``."""


ArrayRules: TypeAlias = tuple[Callable[[Any], Any], Callable[[Any, Any, Any], Any],
                              Callable[[Any], Any]]
"""``(init, update, get_params)`` for one array (what :func:`optimizer` lifts)."""


def optimizer(make: Callable[..., ArrayRules]) -> Callable[..., Optimizer]:
    """Decorator: ``make(*hyperparameters)`` returns ``(init, update, get_params)`` for
    one array; the decorated function returns the :class:`Optimizer` for pytrees."""
    @functools.wraps(make)
    def make_tree_optimizer(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = make(*args, **kwargs)
        return Optimizer(_tree_init(init), _tree_update(update), _tree_params(get_params))
    return make_tree_optimizer


def _flatten_states(states: list[Any]) -> tuple[tuple[list[Any], ...], tuple[PyTreeDef, ...]]:
    pairs = [tree_flatten(s) for s in states]
    return tuple(leaves for leaves, _ in pairs), tuple(tree for _, tree in pairs)


def _unflatten_states(state: OptimizerState) -> list[Any]:
    return [tree_unflatten(t, leaves) for t, leaves in zip(state.subtree_defs,
                                                           state.packed_state, strict=True)]


def _tree_init(init: Callable[[Any], Any]) -> InitFn:
    @functools.wraps(init)
    def init_fn(params: Params) -> OptimizerState:
        leaves, tree = tree_flatten(params)
        packed, subtrees = _flatten_states([init(x) for x in leaves])
        return OptimizerState(packed, tree, subtrees)
    return init_fn


def _tree_update(update: Callable[[Any, Any, Any], Any]) -> UpdateFn:
    @functools.wraps(update)
    def update_fn(i: Step, grads: Params, state: OptimizerState) -> OptimizerState:
        g_leaves, g_tree = tree_flatten(grads)
        if g_tree != state.tree_def:
            raise TypeError(f"optimizer update function was passed a gradient tree that did "
                            f"not match the parameter tree structure with which it was "
                            f"initialized: parameter tree {state.tree_def} and grad tree "
                            f"{g_tree}.")
        new = [update(i, g, s) for g, s in zip(g_leaves, _unflatten_states(state))]
        packed, subtrees = _flatten_states(new)
        for before, after in zip(state.subtree_defs, subtrees):
            if before != after:
                raise TypeError(f"optimizer update function produced an output structure "
                                f"that did not match its input structure: input {before} "
                                f"and output {after}.")
        return OptimizerState(packed, state.tree_def, state.subtree_defs)
    return update_fn


def _tree_params(get_params: Callable[[Any], Any]) -> ParamsFn:
    @functools.wraps(get_params)
    def params_fn(state: OptimizerState) -> Params:
        return tree_unflatten(state.tree_def, [get_params(s) for s in _unflatten_states(state)])
    return params_fn


def _first(state: tuple[Any, ...]) -> Any:
    return state[0]


def _with_zeros(count: int) -> Callable[[Any], tuple[Any, ...]]:
    """``init`` for a state of the parameter and ``count`` zero moments like it."""
    def init(x0: Any) -> tuple[Any, ...]:
        return (x0, *(pnp.zeros_like(x0) for _ in range(count)))
    return init


@optimizer
def sgd(step_size: float | Schedule) -> ArrayRules:
    """Stochastic gradient descent: ``x - step_size(i) * g``."""
    lr = make_schedule(step_size)

    def update(i: Any, g: Any, x: Any) -> Any:
        return x - lr(i) * g
    return (lambda x0: x0), update, (lambda x: x)


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> ArrayRules:
    """Gradient descent with momentum ``mass`` (heavy ball)."""
    lr = make_schedule(step_size)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        return x - lr(i) * velocity, velocity
    return _with_zeros(1), update, _first


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> ArrayRules:
    """Nesterov's accelerated gradient with momentum ``mass``."""
    lr = make_schedule(step_size)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        return x - lr(i) * (mass * velocity + g), velocity
    return _with_zeros(1), update, _first


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> ArrayRules:
    """Adagrad (Duchi et al. 2011), with momentum on the scaled gradient."""
    lr = make_schedule(step_size)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, g_sq, m = state
        g_sq = g_sq + pnp.square(g)
        inv_root = pnp.where(g_sq > 0, 1. / pnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * inv_root) + momentum * m
        return x - lr(i) * m, g_sq, m
    return _with_zeros(2), update, _first


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> ArrayRules:
    """RMSProp: the gradient over the root of a decaying mean of its square."""
    lr = make_schedule(step_size)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, avg_sq = state
        avg_sq = avg_sq * gamma + pnp.square(g) * (1. - gamma)
        return x - lr(i) * g / pnp.sqrt(avg_sq + eps), avg_sq
    return _with_zeros(1), update, _first


@optimizer
def rmsprop_momentum(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> ArrayRules:
    """RMSProp with momentum on the scaled step."""
    lr = make_schedule(step_size)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, avg_sq, mom = state
        avg_sq = avg_sq * gamma + pnp.square(g) * (1. - gamma)
        mom = momentum * mom + lr(i) * g / pnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom
    return _with_zeros(2), update, _first


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8) -> ArrayRules:
    """Adam (Kingma and Ba 2014): bias-corrected first and second moment estimates."""
    lr = make_schedule(step_size)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * pnp.square(g) + b2 * v
        # The decay rates in the moments' dtype, so that x32 and x64 correct alike.
        m_hat = m / (1 - pnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - pnp.asarray(b2, m.dtype) ** (i + 1))
        return x - lr(i) * m_hat / (pnp.sqrt(v_hat) + eps), m, v
    return _with_zeros(2), update, _first


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999,
           eps: float = 1e-8) -> ArrayRules:
    """AdaMax: Adam with the infinity norm in place of the second moment."""
    lr = make_schedule(step_size)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = pnp.maximum(b2 * u, pnp.abs(g))
        x = x - (lr(i) / (1 - pnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u
    return _with_zeros(2), update, _first


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9) -> ArrayRules:
    """SM3 (Anil et al. 2019): Adagrad whose accumulator is covered by one vector per
    axis (the maximum over the other axes), so its memory is the sum of the dimensions."""
    lr = make_schedule(step_size)

    def init(x0: Any) -> Any:
        x = pnp.atleast_1d(x0)
        return x, pnp.zeros_like(x), [pnp.zeros(n, dtype=x.dtype) for n in x.shape], x0.shape

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, covers, shape = state
        nd = g.ndim
        # Each axis's vector, broadcast along the other axes; their minimum bounds the
        # full accumulator from above.
        spread = [v[tuple(slice(None) if d == axis else None for d in range(nd))]
                  for axis, v in enumerate(covers)]
        accum = functools.reduce(pnp.minimum, spread) + pnp.square(g)
        inv_root = pnp.where(accum > 0, 1. / pnp.sqrt(accum), 0)
        m = (1. - momentum) * (g * inv_root) + momentum * m
        x = x - lr(i) * m
        covers = [accum.max(tuple(d for d in range(x.ndim) if d != axis))
                  for axis in range(x.ndim)]
        return x, m, covers, shape

    def get_params(state: Any) -> Any:
        return state[0].reshape(state[3])
    return init, update, get_params


# -- step-size schedules ----------------------------------------------------------------------

def constant(step_size: Any) -> Schedule:
    """The same step size at every step."""
    return lambda i: step_size


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    """``step_size * decay_rate ** (i / decay_steps)``."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size: Any, decay_steps: Any, decay_rate: Any,
                       staircase: bool = False) -> Schedule:
    """``step_size / (1 + decay_rate * i / decay_steps)``; with ``staircase``, the ratio
    ``i / decay_steps`` is floored."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * pnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size: Any, decay_steps: Any, final_step_size: Any,
                     power: float = 1.0) -> Schedule:
    """From ``step_size`` down to ``final_step_size`` over ``decay_steps`` steps along
    ``(1 - i / decay_steps) ** power``, then constant."""
    def schedule(i: Any) -> Any:
        done = pnp.minimum(i, decay_steps) / decay_steps
        return (1 - done) ** power * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[k]`` for steps after ``k`` of the ``boundaries`` (one fewer than values).

    Raises:
      ValueError: either is not a sequence, or the lengths do not fit.
    """
    bounds, vals = pnp.array(boundaries), pnp.array(values)
    if not bounds.ndim == vals.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if bounds.shape[0] != vals.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: vals[pnp.sum(i > bounds)]


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as it is, or a scalar as the :func:`constant` schedule.

    Raises:
      TypeError: neither a callable nor a scalar (the message is its type).
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if pnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# -- utilities --------------------------------------------------------------------------------

def l2_norm(tree: Any) -> Any:
    """The l2 norm of all the arrays of a pytree together."""
    leaves, _ = tree_flatten(tree)
    return pnp.sqrt(sum(pnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """The gradients scaled down together to l2 norm ``max_norm`` if it is above that."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: pnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """A leaf of the parameter structure holding that parameter's state (a pytree): what
    :func:`unpack_optimizer_state` marks, for serializing a state with ``pickle``."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree
        """The state of one parameter."""

    def __iter__(self) -> Iterator[Any]:
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """The state as the parameters' pytree with a :class:`JoinPoint` per parameter."""
    return tree_unflatten(opt_state.tree_def,
                          [JoinPoint(s) for s in _unflatten_states(opt_state)])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of :func:`unpack_optimizer_state`.

    Raises:
      TypeError: a leaf of ``marked_pytree`` is not a :class:`JoinPoint`.
    """
    marks, tree = tree_flatten(marked_pytree)
    for k, m in enumerate(marks):
        if not isinstance(m, JoinPoint):
            raise TypeError(f"pack_optimizer_state: expected a JoinPoint at every leaf, but "
                            f"got {type(m).__name__} at leaf {k}")
    packed, subtrees = _flatten_states([m.subtree for m in marks])
    return OptimizerState(packed, tree, subtrees)

"""``checkpoint``/``remat`` and its policies against JAX 0.10.2.

The gradient never changes; what a policy changes is which values reverse mode
saves between the forward and the backward pass (the residuals) and what the
backward pass recomputes.  plait's residuals are counted in
:func:`plait.transforms.ad.vjp_jaxprs`; JAX's come from
``jax.ad_checkpoint.print_saved_residuals`` (one line per residual).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np
import pytest
from jax.ad_checkpoint import print_saved_residuals

import plait
from plait.ir import Jaxpr
from plait.transforms.ad import linearize_jaxpr, vjp_jaxprs
from tests.frontend.jax_oracle import JAX, PLAIT, Lib, assert_close, f32
from tests.ir.jaxpr_corpus import Case, jax_oracle_text, trace_plait

W = (np.arange(9, dtype=np.float32).reshape(3, 3) - 4.0) / 10.0
X = f32(0.1, -0.2, 0.3)


def mlp(L: Lib) -> Callable[[Any, Any], Any]:
    """Two matrix products, each followed by sin: residuals of both kinds."""
    def f(w, x):
        h = L.np.sin(w @ x)
        h = L.np.sin(w @ h)
        return L.np.sum(L.np.cos(h))
    return f


POLICIES = [None, "nothing_saveable", "everything_saveable", "dots_saveable"]


def ckpt(L: Lib, policy: str | None, f: Callable[..., Any] | None = None) -> Callable[..., Any]:
    f = mlp(L) if f is None else f
    return L.checkpoint(f, policy=None if policy is None else getattr(L.policies, policy))


# -- Gradients are unchanged ----------------------------------------------------------

@pytest.mark.parametrize("policy", POLICIES)
def test_grad_of_checkpoint_equals_grad(policy: str | None) -> None:
    want = jax.grad(ckpt(JAX, policy), argnums=(0, 1))(W, X)
    plain = plait.grad(mlp(PLAIT), argnums=(0, 1))(W, X)
    got = plait.grad(ckpt(PLAIT, policy), argnums=(0, 1))(W, X)
    assert_close(got, plain, rtol=1e-6, atol=1e-7)
    assert_close(got, want)
    assert_close(jax.grad(mlp(JAX), argnums=(0, 1))(W, X), want)
    assert_close(ckpt(PLAIT, policy)(W, X), mlp(JAX)(W, X))


@pytest.mark.parametrize("policy", ["nothing_saveable", "dots_saveable"])
def test_checkpoint_composes_with_jit_vmap_and_higher_order(policy: str) -> None:
    ws = np.stack([W, -W, 2.0 * W])

    def run(L: Lib) -> Any:
        g = L.grad(ckpt(L, policy))
        return (L.jit(g)(W, X), L.vmap(g, in_axes=(0, None))(ws, X),
                L.grad(lambda x: L.np.sum(L.grad(ckpt(L, policy), argnums=1)(W, x)))(X),
                L.jvp(lambda x: ckpt(L, policy)(W, x), (X,), (X,)))
    assert_close(run(PLAIT), run(JAX), rtol=1e-4, atol=1e-5)


def test_remat_is_checkpoint_and_static_argnums() -> None:
    assert plait.remat is plait.checkpoint

    def f(L: Lib) -> Callable[..., Any]:
        return L.checkpoint(lambda x, n: L.np.sin(x) ** n, static_argnums=(1,))
    assert_close(plait.grad(lambda x: plait.numpy.sum(f(PLAIT)(x, 3)))(X),
                 jax.grad(lambda x: jax.numpy.sum(f(JAX)(x, 3)))(X))


def test_static_arguments_need_not_be_hashable() -> None:
    # (as in JAX, nothing caches them; equinox passes its pytree of statics as one)
    def f(L: Lib) -> Callable[..., Any]:
        return L.checkpoint(lambda cfg, x: L.np.sin(x) * cfg["scale"], static_argnums=(0,))
    cfg = {"scale": 3.0}
    assert_close(plait.grad(lambda x: plait.numpy.sum(f(PLAIT)(cfg, x)))(X),
                 jax.grad(lambda x: jax.numpy.sum(f(JAX)(cfg, x)))(X))
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        plait.jit(lambda cfg, x: x, static_argnums=(0,))(cfg, X)


def test_checkpointed_scan_body() -> None:
    # The classic use: remat each step of a loop.
    def f(L: Lib) -> Callable[[Any], Any]:
        step = L.checkpoint(lambda c, x: (L.np.tanh(c * x + 1.0), L.np.sum(c)),
                            policy=L.policies.nothing_saveable)
        return lambda xs: L.np.sum(L.lax.scan(step, X, xs)[1])
    xs = np.stack([X, 2 * X, -X, X + 1])
    assert_close(plait.grad(f(PLAIT))(xs), jax.grad(f(JAX))(xs))


# -- Residuals: what is saved, what is recomputed ----------------------------------------

def saved_residuals(f: Callable[..., Any], *args: Any) -> list[str]:
    """JAX's residuals of ``f`` at ``args``, as printed by its public API."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_saved_residuals(f, *args)
    return out.getvalue().splitlines()


def _num_res(f: Callable[..., Any], *args: Any) -> int:
    closed = plait.make_jaxpr(f)(*args)
    return vjp_jaxprs(closed.jaxpr, [True] * len(args)).num_res


def _count(j: Jaxpr, name: str) -> int:
    """Equations of primitive ``name`` in ``j``, sub-jaxprs included."""
    def walk(j: Jaxpr) -> Iterator[str]:
        for eqn in j.eqns:
            yield eqn.primitive.name
            for v in eqn.params.values():
                if isinstance(v, plait.ClosedJaxpr):
                    yield from walk(v.jaxpr)
    return sum(n == name for n in walk(j))


@pytest.mark.parametrize("policy", POLICIES)
def test_residual_count_matches_jax(policy: str | None) -> None:
    want = len(saved_residuals(ckpt(JAX, policy), W, X))
    assert _num_res(ckpt(PLAIT, policy), W, X) == want


def test_residual_counts_follow_the_policy() -> None:
    plain = _num_res(mlp(PLAIT), W, X)
    n = {p: _num_res(ckpt(PLAIT, p), W, X) for p in POLICIES}
    assert len(saved_residuals(mlp(JAX), W, X)) == plain == 6
    # Nothing saveable: only the inputs (w, x) are saved; everything else is recomputed.
    assert n["nothing_saveable"] == n[None] == 2
    # Dots saveable: the inputs and the two matrix products.
    assert n["dots_saveable"] == 4
    # Everything saveable: as without checkpoint.
    assert n["everything_saveable"] == plain


def test_nothing_saveable_recomputes_rather_than_saves() -> None:
    def bwd(policy: str | None) -> Jaxpr:
        f = mlp(PLAIT) if policy == "plain" else ckpt(PLAIT, policy)
        return vjp_jaxprs(plait.make_jaxpr(f)(W, X).jaxpr, [True, True]).bwd
    plain, nothing, dots, everything = (bwd(p) for p in
                                        ("plain", "nothing_saveable", "dots_saveable",
                                         "everything_saveable"))
    # Without checkpoint the backward pass reads sin/cos values saved by the forward.
    assert _count(plain, "sin") == 0 and _count(plain, "cos") == 0
    assert _count(everything, "sin") == 0 and _count(everything, "cos") == 0
    # nothing_saveable: both products and both sin layers run again, with the
    # values their derivatives need (cos of each product, sin of the last layer).
    assert _count(nothing, "sin") == 3 and _count(nothing, "cos") == 2
    assert _count(nothing, "dot_general") == _count(plain, "dot_general") + 2
    # dots_saveable: the products are saved, what follows them is recomputed.
    assert _count(dots, "dot_general") == _count(plain, "dot_general")
    assert _count(dots, "sin") == 3 and _count(dots, "cos") == 2


def test_linearize_residuals_under_checkpoint() -> None:
    # linearize_jaxpr is the split reverse mode starts from: its residuals are the
    # values passed from the primal to the linear jaxpr.
    closed = plait.make_jaxpr(ckpt(PLAIT, "nothing_saveable"))(W, X)
    primal, linear, nres, _ = linearize_jaxpr(closed.jaxpr, [True, True])
    assert nres == 2
    assert [v.aval for v in primal.outvars[1:]] == [v.aval for v in closed.jaxpr.invars]
    assert len(linear.invars) == nres + 2


# -- Printing ---------------------------------------------------------------------------

def _ckpt_case(np_, lax_, jit_):
    checkpoint = jax.checkpoint if np_ is jax.numpy else plait.checkpoint
    return checkpoint(lambda x: np_.sum(np_.sin(np_.sin(x)) * 2.0))


def test_printed_jaxpr_matches_jax() -> None:
    case = Case("checkpoint", _ckpt_case, (X,))
    _, expected = jax_oracle_text(case)
    assert str(trace_plait(case)) == expected
    assert "remat2[" in expected and "policy=None" in expected

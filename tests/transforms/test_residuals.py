"""What reverse mode saves between the forward and the backward pass of control flow.

Partial evaluation of ``scan`` keeps loop-invariant residuals (a weight matrix,
anything computed from the loop's consts alone) as single values instead of
stacking one copy per iteration, and passes on residuals that are scanned inputs
instead of copying them; ``cond`` merges its branches' residuals by type and does
not copy known operands out.  Each test compares the values a program's
``grad`` saves (the outputs of its forward loops and branches, in the printed
jaxpr) with what JAX 0.10.2 saves for the same program: plait's are a
sub-multiset of JAX's, and the gradients are equal.

Top-level ``vjp`` and ``linearize`` run their forward half as a compiled program
of its own: a residual that is one of its inputs (a weight) is not returned by
that program, which would copy it on every call, but taken from the caller.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

from tests.frontend.jax_oracle import JAX, PLAIT, Lib, assert_close

T, B, H = 12, 3, 8
rng = np.random.default_rng(0)
W = (rng.normal(size=(H, H)) / np.sqrt(H)).astype(np.float32)
U = (rng.normal(size=(H, H)) / np.sqrt(H)).astype(np.float32)
BIAS = rng.normal(size=H).astype(np.float32)
XS = rng.normal(size=(T, B, H)).astype(np.float32)
H0 = rng.normal(size=(B, H)).astype(np.float32)


def rnn(L: Lib) -> Callable[..., Any]:
    def loss(params: Any, xs: Any, h0: Any) -> Any:
        w, u, b = params

        def step(h: Any, x: Any) -> Any:
            h = L.np.tanh(h @ w + x @ u + b)
            return h, h.sum()
        h, ys = L.lax.scan(step, h0, xs)
        return L.np.sum(h ** 2) + ys.sum()
    return loss


def rnn_invariant_work(L: Lib) -> Callable[..., Any]:
    # exp(w) and w.T depend on the consts only: computed once, saved once.
    def loss(params: Any, xs: Any, h0: Any) -> Any:
        w, u, b = params

        def step(h: Any, x: Any) -> Any:
            h = L.np.tanh(h @ L.np.exp(w) + x @ u.T + b)
            return h, None
        h, _ = L.lax.scan(step, h0, xs)
        return L.np.sum(h ** 2)
    return loss


def nested(L: Lib) -> Callable[..., Any]:
    def loss(params: Any, xs: Any, h0: Any) -> Any:
        w, u, b = params

        def outer(h: Any, x: Any) -> Any:
            def inner(c: Any, _: Any) -> Any:
                return L.np.tanh(c @ w + x @ u), None
            c, _ = L.lax.scan(inner, h, None, length=4)
            return c * 0.5 + b, c.sum()
        h, ys = L.lax.scan(outer, h0, xs)
        return h.sum() + ys.sum()
    return loss


def fori(L: Lib) -> Callable[..., Any]:
    def loss(params: Any, xs: Any, h0: Any) -> Any:
        w, u, b = params
        return L.lax.fori_loop(0, T, lambda i, h: L.np.sin(h @ w + b * i), h0).sum()
    return loss


def cond_in_scan(L: Lib) -> Callable[..., Any]:
    def loss(params: Any, xs: Any, h0: Any) -> Any:
        w, u, b = params

        def step(h: Any, x: Any) -> Any:
            h = L.lax.cond(x.sum() > 0, lambda h: L.np.tanh(h @ w), lambda h: L.np.sin(h @ u),
                           h)
            return h + x, None
        h, _ = L.lax.scan(step, h0, xs)
        return L.np.sum(h ** 2)
    return loss


def remat_in_scan(L: Lib) -> Callable[..., Any]:
    def loss(params: Any, xs: Any, h0: Any) -> Any:
        w, u, b = params

        @L.checkpoint
        def cell(h: Any, x: Any) -> Any:
            return L.np.tanh(L.np.tanh(h @ w + x @ u) @ w + b)

        h, _ = L.lax.scan(lambda h, x: (cell(h, x), None), h0, xs)
        return L.np.sum(h ** 2)
    return loss


def custom_vjp_in_scan(L: Lib) -> Callable[..., Any]:
    @L.custom_vjp
    def matmul(h: Any, w: Any) -> Any:
        return h @ w

    def fwd(h: Any, w: Any) -> Any:
        return h @ w, (h, w)

    def bwd(res: Any, g: Any) -> Any:
        h, w = res
        return g @ w.T, h.T @ g
    matmul.defvjp(fwd, bwd)

    def loss(params: Any, xs: Any, h0: Any) -> Any:
        w, u, b = params
        h, _ = L.lax.scan(lambda h, x: (L.np.tanh(matmul(h, w) + x), None), h0, xs)
        return L.np.sum(h ** 2)
    return loss


def cond_alone(L: Lib) -> Callable[..., Any]:
    def loss(params: Any, xs: Any, h0: Any) -> Any:
        w, u, b = params
        return L.lax.cond(h0.sum() > 0, lambda h: L.np.sin(h @ w).sum(),
                          lambda h: L.np.cos(h).sum() * L.np.tanh(h @ u).sum(), h0)
    return loss


PROGRAMS = [rnn, rnn_invariant_work, nested, fori, cond_in_scan, remat_in_scan,
            custom_vjp_in_scan, cond_alone]
ARGS = ((W, U, BIAS), XS, H0)


def saved(jaxpr: Any) -> Counter[tuple[tuple[int, ...], str]]:
    """The types of the outputs of the top-level forward loops and branches of a
    ``grad`` jaxpr (its first ``scan``/``cond``/``while``: what reverse mode keeps)."""
    eqns = [e for e in jaxpr.eqns if e.primitive.name in ("scan", "cond", "while")]
    return Counter((tuple(v.aval.shape), str(v.aval.dtype)) for v in eqns[0].outvars)


@pytest.mark.parametrize("make", PROGRAMS, ids=lambda m: m.__name__)
def test_saves_no_more_than_jax(make: Callable[[Lib], Callable[..., Any]]) -> None:
    ours = saved(PLAIT.make_jaxpr(PLAIT.grad(make(PLAIT)))(*ARGS).jaxpr)
    theirs = saved(JAX.make_jaxpr(JAX.grad(make(JAX)))(*ARGS).jaxpr)
    assert ours <= theirs, f"plait saves {ours - theirs} that JAX does not (JAX: {theirs})"
    assert_close(PLAIT.jit(PLAIT.grad(make(PLAIT)))(*ARGS),
                 jax.jit(jax.grad(make(JAX)))(*ARGS), rtol=1e-4, atol=1e-5)


def test_rnn_weights_are_not_stacked() -> None:
    """The issue's figure: the forward scan of an RNN's gradient saved its weight
    matrix once per step (``f32[T,H,H]``); now the weight goes to the backward scan
    as a const, and the scanned inputs are read from the caller's array."""
    closed = PLAIT.make_jaxpr(PLAIT.grad(rnn(PLAIT)))(*ARGS)
    fwd, bwd = [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]
    # The carry, then per step: the previous state, tanh's result and 1 - it (tanh's
    # derivative is JAX's (g + g*ans) * (1 - ans)).  JAX saves the same three, and more.
    ours = [tuple(v.aval.shape) for v in fwd.outvars]
    assert ours == [(B, H), (T, B, H), (T, B, H), (T, B, H)]
    theirs_closed = JAX.make_jaxpr(JAX.grad(rnn(JAX)))(*ARGS)
    theirs_fwd = next(e for e in theirs_closed.jaxpr.eqns if e.primitive.name == "scan")
    theirs = [tuple(v.aval.shape) for v in theirs_fwd.outvars]
    assert all(theirs.count(s) >= ours.count(s) for s in ours), (ours, theirs)
    assert bwd.params["num_consts"] == 1 and bwd.invars[0] is closed.jaxpr.invars[0]
    assert closed.jaxpr.invars[3] in bwd.invars  # xs, not a copy of it


def test_invariant_work_is_hoisted_out_of_the_forward_loop() -> None:
    closed = PLAIT.make_jaxpr(PLAIT.grad(rnn_invariant_work(PLAIT)))(*ARGS)
    fwd = next(e for e in closed.jaxpr.eqns if e.primitive.name == "scan")
    body_prims = {e.primitive.name for e in fwd.params["jaxpr"].jaxpr.eqns}
    assert "exp" not in body_prims and "transpose" not in body_prims
    outside = {e.primitive.name for e in closed.jaxpr.eqns[:closed.jaxpr.eqns.index(fwd)]}
    assert {"exp", "transpose"} <= outside


def test_effects_stay_in_the_loop() -> None:
    """A loop body with effects is not split into hoisted and looped parts: every
    iteration's callback still runs, in order."""
    import plait
    import plait.numpy as pnp
    seen: list[float] = []

    def loss(w: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            plait.debug.callback(lambda v: seen.append(float(v)), w.sum())
            return pnp.tanh(h @ pnp.exp(w) + x), None
        return pnp.sum(plait.lax.scan(step, H0, xs)[0])

    g = plait.jit(plait.grad(loss))(W, XS)

    def jax_loss(w: Any) -> Any:
        def step(h: Any, x: Any) -> tuple[Any, None]:
            return jax.numpy.tanh(h @ jax.numpy.exp(w) + x), None
        return jax.numpy.sum(jax.lax.scan(step, jax.numpy.asarray(H0), XS)[0])
    want = jax.grad(jax_loss)(W)
    assert_close(g, want, rtol=1e-4, atol=1e-5)
    assert len(seen) == T


def _mlp(L: Lib) -> Callable[..., Any]:
    def f(w: Any, u: Any, x: Any) -> Any:
        return L.np.tanh(L.np.tanh(x @ w) @ u)
    return f


def test_forward_program_does_not_return_its_inputs() -> None:
    from plait.ir import check_jaxpr, eval_jaxpr
    from plait.transforms.ad import split_forwarded, vjp_jaxprs

    closed = PLAIT.make_jaxpr(_mlp(PLAIT))(W, U, H0)
    fwd = vjp_jaxprs(closed.jaxpr, [True, True, True]).fwd
    pruned, res_from = split_forwarded(fwd, 1)
    check_jaxpr(pruned)
    assert sorted(i for i in res_from if i is not None) == [0, 1, 2]  # w, u and x
    assert not set(pruned.outvars) & set(pruned.invars)
    full, part = eval_jaxpr(fwd, [], W, U, H0), eval_jaxpr(pruned, [], W, U, H0)
    assert len(part) == 1 + res_from.count(None)
    computed = [r for r, i in zip(full[1:], res_from) if i is None]
    for got, want in zip(part, [full[0], *computed]):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    for r, i in zip(full[1:], res_from):
        if i is not None:
            np.testing.assert_array_equal(np.asarray(r), (W, U, H0)[i])


def test_vjp_and_linearize_with_forwarded_residuals_match_jax() -> None:
    f_p, f_j = _mlp(PLAIT), _mlp(JAX)
    ct = np.ones((B, H), np.float32)
    out, pull = PLAIT.vjp(f_p, W, U, H0)
    want_out, want_pull = JAX.vjp(f_j, W, U, H0)
    assert_close(out, want_out)
    assert_close(pull(ct), want_pull(ct), rtol=1e-5, atol=1e-6)
    import plait
    out, push = plait.linearize(f_p, W, U, H0)
    want_out, want_push = jax.linearize(f_j, W, U, H0)
    assert_close(push(U, W, H0), want_push(U, W, H0), rtol=1e-5, atol=1e-6)
    # Inside jit the forward half is inlined: the same numbers.
    jitted = PLAIT.jit(lambda w, u, x: PLAIT.vjp(f_p, w, u, x)[1](ct))
    assert_close(jitted(W, U, H0), want_pull(ct), rtol=1e-5, atol=1e-6)


def test_forwarded_numpy_input_is_copied_once() -> None:
    """A NumPy input that is a residual goes to the device when ``vjp`` runs: changing
    the NumPy array afterwards does not change the pullback (nor JAX's)."""
    w = W.copy()
    scale = 2.0  # a Python scalar residual, weakly typed
    _, pull = PLAIT.vjp(lambda w, s, x: PLAIT.np.tanh(x @ w) * s, w, scale, H0)
    _, want = JAX.vjp(lambda w, s, x: JAX.np.tanh(x @ w) * s, W.copy(), scale, H0)
    w[:] = 0.0
    ct = np.ones((B, H), np.float32)
    assert_close(pull(ct), want(ct), rtol=1e-5, atol=1e-6)


"""The function ``vjp`` returns, against JAX 0.10.2: ``with_refs`` (cotangents into
Refs, as values, or not computed), differentiation with respect to Refs, and its
``args_res``/``opaque_residuals``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pjnp
from plait.errors import RefError
from plait.frontend.api.pullback import NotNeeded
from tests.frontend.test_refs import LIBS, _assert_equal, _host, _same


def test_with_refs_routes_each_cotangent_as_jax() -> None:
    def program(m: Any, jnp: Any) -> Any:
        _, sin_vjp = m.vjp(jnp.sin, 1.0)
        acc = m.new_ref(0.)
        placeholder = sin_vjp.with_refs(acc)(1.0)

        def predict(w: Any, x: Any) -> Any:
            return w @ x
        w, x = jnp.ones((4, 4)), jnp.arange(4.)
        _, f_vjp = m.vjp(predict, w, x)
        w_bar, x_bar = f_vjp.with_refs(m.ad.GradValue(), m.ad.DontWant())(jnp.ones(4))
        both = m.make_jaxpr(lambda: f_vjp(jnp.ones(4)))()
        only_w = m.make_jaxpr(lambda: f_vjp.with_refs(m.ad.GradValue(), m.ad.DontWant())(
            jnp.ones(4)))()
        counts = (str(both).count("dot_general"), str(only_w).count("dot_general"))

        take = m.jit(lambda v, i: v[i])
        sparse = m.new_ref(jnp.zeros(10))
        for i in [3, 5, 3]:
            _, take_vjp = m.vjp(take, jnp.arange(10.), i)
            take_vjp.with_refs(sparse, m.ad.GradValue())(1.0)

        tree_acc = m.new_ref(0.)
        tree_out = m.vjp(lambda d: d["a"] * 2, {"a": 1.})[1].with_refs({"a": tree_acc})(1.)
        return (repr(placeholder), acc, w_bar, repr(x_bar), counts, sparse, repr(tree_out),
                tree_acc)
    got, want = (program(m, n) for m, n in LIBS)
    assert got[0] == want[0] == "(GradRef(),)"
    assert got[3] == want[3] == "DidntWant()"
    assert got[4] == want[4] == (2, 1)
    assert got[6] == want[6]
    for i in (1, 2, 5, 7):
        _assert_equal(_host(got[i]), _host(want[i]))


def test_gradient_accumulation_over_microbatches() -> None:
    def program(m: Any, jnp: Any) -> Any:
        def mubatch_loss(ws: Any, xs: Any) -> Any:
            act, _ = m.lax.scan(lambda x, w: (jnp.dot(x, w), None), xs, ws)
            return jnp.mean(act)

        def process_batch(ws: Any, xs_batch: Any) -> Any:
            grad_acc = m.new_ref(jnp.zeros_like(ws))

            def process_mubatch(_: Any, xs: Any) -> Any:
                loss, f_vjp = m.vjp(lambda ws: mubatch_loss(ws, xs), ws)
                f_vjp.with_refs(grad_acc)(jnp.ones_like(loss))
                return (), loss
            (), losses = m.lax.scan(process_mubatch, (), xs_batch.reshape(5, 7, -1))
            return m.freeze(grad_acc), losses
        ws = jnp.ones((3, 4, 4)) * 0.5
        xs = jnp.arange(35 * 4.).reshape(35, 4) / 100
        return process_batch(ws, xs), m.jit(process_batch)(ws, xs)
    got = _same(program)
    xs = np.arange(35 * 4.).reshape(35, 4) / 100
    whole = plait.grad(lambda ws: sum(plait.numpy.mean(
        plait.lax.scan(lambda x, w: (x @ w, None), xb, ws)[0])
        for xb in xs.reshape(5, 7, 4)))(pjnp.ones((3, 4, 4)) * 0.5)
    np.testing.assert_allclose(got[0][0][0], np.asarray(whole), rtol=1e-5)


def test_vjp_with_respect_to_a_ref_accumulates_into_a_ref() -> None:
    # (JAX 0.10.2 runs the forward pass but fails in the pullback; later JAX
    # documents what plait does.)
    def g(x_ref: Any) -> Any:
        x_ref[...] = pjnp.sin(x_ref[...])
        return x_ref[...] ** 2
    x_ref = plait.new_ref(2.)
    vjp: Any = plait.vjp  # (the pullback's with_refs is not in vjp's static type)
    _, g_vjp = vjp(g, x_ref)
    assert float(x_ref[...]) == pytest.approx(np.sin(2.), rel=1e-6)  # the write happened
    grad_ref = plait.new_ref(100.)
    assert g_vjp.with_refs(grad_ref)(1.0) == (plait.ad.GradRef(),)
    assert float(grad_ref[...]) == pytest.approx(100. + 2 * np.sin(2.) * np.cos(2.), rel=1e-6)
    with pytest.raises(RefError, match="must be accumulated into a Ref"):
        g_vjp(1.0)
    with pytest.raises(RefError, match="leaf 0 of the arguments is a Ref"):
        g_vjp.with_refs(plait.ad.GradValue())(1.0)
    r, gr = plait.new_ref(2.), plait.new_ref(0.)
    out = vjp(lambda a, b: a[...] * b, r, 3.)[1].with_refs(gr, plait.ad.GradValue())(1.)
    assert out[0] == plait.ad.GradRef() and float(out[1]) == 2. and float(gr[...]) == 3.


def test_with_refs_errors() -> None:
    vjp: Any = plait.vjp  # (the pullback's with_refs is not in vjp's static type)
    _, f_vjp = vjp(lambda a, b: a * b, 1., 2.)
    with pytest.raises(plait.errors.ArgumentError, match=r"one entry per argument .*\(2\), "
                       "but got 1"):
        f_vjp.with_refs(plait.ad.GradValue())
    with pytest.raises(plait.errors.ArgumentError, match="expected a Ref, GradValue.. or "
                       "DontWant.. for each leaf of the argument, but got int: 3"):
        f_vjp.with_refs(3, plait.ad.GradValue())


def test_pullback_args_res_and_opaque_residuals_as_jax() -> None:
    def program(m: Any, jnp: Any) -> Any:
        def layer(w: Any, x: Any) -> Any:
            return jnp.tanh(w @ x)
        w, x = jnp.arange(6.).reshape(3, 2) / 6, jnp.ones(2)
        y, f_vjp = m.vjp(layer, w, x)
        args_res = [np.asarray(a) for a in f_vjp.args_res]
        _, g_vjp = m.vjp(lambda a, b: jnp.sin(a) + b, 1., 2.)
        f_vjp.args_res[0] = w * 2  # the backward pass uses what args_res holds
        return args_res, repr(g_vjp.args_res), f_vjp(jnp.ones(3))
    got, want = (program(m, n) for m, n in LIBS)
    for a, b in zip(got[0], want[0]):
        np.testing.assert_array_equal(a, b)
    assert got[1] == want[1] == "[NotNeeded(), NotNeeded()]"
    for a, b in zip(got[2], want[2]):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    vjp: Any = plait.vjp  # (args_res is not in vjp's static type)
    _, f = vjp(lambda w, x: w @ x, pjnp.ones((2, 2)), pjnp.ones(2))
    assert len(f.opaque_residuals) == 0  # both residuals are arguments
    f.args_res[1] = NotNeeded()
    with pytest.raises(plait.errors.ArgumentError, match="leaf 1 is needed by the backward "
                       "pass but args_res holds NotNeeded"):
        f(pjnp.ones(2))

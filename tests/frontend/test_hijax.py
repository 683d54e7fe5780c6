"""``plait.experimental.hijax.VJPHiPrimitive`` against ``jax.experimental.hijax`` 0.10.2:
the same classes, written once against either library, give the same values and
derivatives under every transformation."""

from __future__ import annotations

from collections import namedtuple
from functools import partial
from typing import Any

import jax
import jax.experimental.hijax as jhijax
import jax.numpy as jjnp
import numpy as np
import pytest

import plait
import plait.experimental.hijax as phijax
import plait.numpy as pjnp
from plait.ir import check_jaxpr

LIBS = [(plait, pjnp, phijax), (jax, jjnp, jhijax)]
Point = namedtuple("Point", ["x", "y"])


def _classes(m: Any, jnp: Any, hj: Any) -> dict[str, Any]:
    """The operations of JAX's hijax tutorial, written against ``m``."""
    class SinTimesY(hj.VJPHiPrimitive):  # type: ignore[misc]  # (hj: either library)
        def __init__(self, x_aval: Any, y_aval: Any) -> None:
            self.in_avals = (x_aval, y_aval)
            self.out_aval = x_aval
            self.params = dict[str, Any]()
            super().__init__()

        def expand(self, x: Any, y: Any) -> Any:
            return jnp.sin(x) * y

        def vjp_fwd(self, nzs_in: Any, x: Any, y: Any) -> Any:
            return self(x, y), (jnp.cos(x), jnp.sin(x), y)

        def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
            cos_x, sin_x, y = res
            return (cos_x * g * y, sin_x * g)

        def jvp(self, primals: Any, tangents: Any) -> Any:
            (x, y), (x_dot, y_dot) = primals, tangents
            return self(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot

        def batch_dim_rule(self, axis_data: Any, in_dims: Any) -> Any:
            return in_dims[0] if in_dims[0] is not None else in_dims[1]

    class Log1pExp(hj.VJPHiPrimitive):  # type: ignore[misc]  # (hj: either library)
        def __init__(self, x_aval: Any) -> None:
            self.in_avals = (x_aval,)
            self.out_aval = x_aval
            self.params = dict[str, Any]()
            super().__init__()

        def expand(self, x: Any) -> Any:
            return jnp.log(1. + jnp.exp(x))

        def vjp_fwd(self, nzs_in: Any, x: Any) -> Any:
            return self(x), x

        def vjp_bwd_retval(self, x: Any, g: Any) -> Any:
            return ((1 - 1 / (1 + jnp.exp(x))) * g,)

        def batch_dim_rule(self, axis_data: Any, in_dims: Any) -> Any:
            return in_dims[0]

    class ClipGradient(hj.VJPHiPrimitive):  # type: ignore[misc]  # (hj: either library)
        def __init__(self, lo: Any, hi: Any, x: Any) -> None:
            self.in_avals = (lo, hi, x)
            self.out_aval = x
            self.params = dict[str, Any]()
            super().__init__()

        def expand(self, lo: Any, hi: Any, x: Any) -> Any:
            return x

        def vjp_fwd(self, nzs_in: Any, lo: Any, hi: Any, x: Any) -> Any:
            return x, (lo, hi)

        def vjp_bwd_retval(self, res: Any, g: Any) -> Any:
            lo, hi = res
            return (None, None, jnp.clip(g, lo, hi))

        def batch_dim_rule(self, axis_data: Any, in_dims: Any) -> Any:
            return in_dims[2]

    class Scale(hj.VJPHiPrimitive):  # type: ignore[misc]  # (hj: either library)
        def __init__(self, x_aval: Any, *, k: float) -> None:
            self.in_avals = (x_aval,)
            self.out_aval = x_aval
            self.params = dict(k=k)
            super().__init__()

        def expand(self, x: Any) -> Any:
            return self.k * x

        def vjp_fwd(self, nzs_in: Any, x: Any) -> Any:
            return self(x), None

        def vjp_bwd(self, res: Any, g: Any, x_acc: Any) -> None:
            x_acc.accum(self.k * g)

        def batch_dim_rule(self, axis_data: Any, in_dims: Any) -> Any:
            return in_dims[0]

    class FPt(hj.VJPHiPrimitive):  # type: ignore[misc]  # (hj: either library)
        def __init__(self, pt_aval: Any) -> None:
            self.in_avals = (pt_aval,)
            self.out_aval = {"a": pt_aval.x, "b": (pt_aval.x, pt_aval.y)}
            self.params = dict[str, Any]()
            super().__init__()

        def expand(self, pt: Any) -> Any:
            return {"a": pt.x ** 2, "b": (jnp.sin(pt.x), jnp.cos(pt.y))}

        def vjp_fwd(self, nzs_in: Any, pt: Any) -> Any:
            return self(pt), pt

        def vjp_bwd_retval(self, pt: Any, g: Any) -> Any:
            g = m.tree_util.tree_map(hj.instantiate_zeros, g,
                                     is_leaf=lambda x: isinstance(x, hj.Zero))
            a_bar, (b0_bar, b1_bar) = g["a"], g["b"]
            return (Point(2 * pt.x * a_bar + jnp.cos(pt.x) * b0_bar,
                          -jnp.sin(pt.y) * b1_bar),)

    class JvpOnly(hj.VJPHiPrimitive):  # type: ignore[misc]  # (hj: either library)
        def __init__(self, x_aval: Any) -> None:
            self.in_avals = (x_aval,)
            self.out_aval = x_aval
            self.params = dict[str, Any]()
            super().__init__()

        def expand(self, x: Any) -> Any:
            return jnp.sin(x)

        def jvp(self, primals: Any, tangents: Any) -> Any:
            (x,), (t,) = primals, tangents
            return self(x), 2. * jnp.cos(x) * t  # (deliberately twice the derivative)

    return dict(SinTimesY=SinTimesY, Log1pExp=Log1pExp, ClipGradient=ClipGradient, Scale=Scale,
                FPt=FPt, JvpOnly=JvpOnly)


def _results(m: Any, jnp: Any, hj: Any) -> list[Any]:
    c = _classes(m, jnp, hj)

    def stx(x: Any, y: Any) -> Any:
        return c["SinTimesY"](m.typeof(x), m.typeof(y))(x, y)

    def l1pe(x: Any) -> Any:
        return c["Log1pExp"](m.typeof(x))(x)

    def clip(x: Any) -> Any:
        lo, hi = jnp.float32(-0.5), jnp.float32(0.5)
        return c["ClipGradient"](m.typeof(lo), m.typeof(hi), m.typeof(x))(lo, hi, x)

    def scale(x: Any) -> Any:
        return c["Scale"](m.typeof(x), k=3.0)(x)

    def fpt(pt: Any) -> Any:
        d = c["FPt"](m.tree_util.tree_map(m.typeof, pt))(pt)
        return d["a"] + d["b"][0]

    def jvp_only(x: Any) -> Any:
        return c["JvpOnly"](m.typeof(x))(x)

    xs = jnp.linspace(-2., 2., 5)
    return [
        stx(2., 3.), m.jvp(stx, (2., 3.), (1., 0.)), m.grad(stx, argnums=(0, 1))(2., 3.),
        m.jit(m.grad(stx))(2., 3.), m.vmap(m.grad(stx))(xs, xs + 1.),
        l1pe(3.), m.grad(l1pe)(100.), m.jit(m.grad(l1pe))(3.), m.vmap(m.jit(m.grad(l1pe)))(xs),
        m.grad(lambda x: 4. * clip(jnp.sin(x)))(1.), m.vmap(m.grad(lambda x: 3. * clip(x)))(xs),
        m.grad(scale)(2.), m.jit(m.vmap(m.grad(lambda x: scale(x) ** 2)))(xs),
        m.grad(fpt)(Point(1., 2.)), m.jvp(jvp_only, (1.,), (1.,)),
        m.grad(m.grad(stx))(2., 3.),
    ]


def test_operations_match_jax() -> None:
    got, want = (_results(*lib) for lib in LIBS)
    for i, (g, w) in enumerate(zip(got, want)):
        gl, wl = plait.tree_util.tree_leaves(g), jax.tree_util.tree_leaves(w)
        assert len(gl) == len(wl), i
        for a, b in zip(gl, wl):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=1e-6,
                                       err_msg=f"result {i}")


def test_a_jvp_rule_alone_serves_reverse_mode_too() -> None:
    # (JAX 0.10.2 asks for vjp_fwd; plait transposes the linear part of the jvp rule,
    # as it does for custom_jvp.)
    c = _classes(plait, pjnp, phijax)
    g = plait.grad(lambda x: c["JvpOnly"](plait.typeof(x))(x))(1.)
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(1.), rtol=1e-6)


def test_a_rule_calling_its_own_class_again_terminates() -> None:
    # A fixed point whose backward pass is a fixed point, as in JAX's tutorial: plait
    # traces rules when the call is traced, so the recursion must stop by itself.
    def lib_fixed_point(m: Any, jnp: Any, hj: Any) -> Any:
        class FixedPoint(hj.VJPHiPrimitive):  # type: ignore[misc]  # (hj: either library)
            def __init__(self, a_aval: Any, x_aval: Any, *, f: Any) -> None:
                self.in_avals = (a_aval, x_aval)
                self.out_aval = x_aval
                self.params = dict(f=f)
                super().__init__()

            def expand(self, a: Any, x_guess: Any) -> Any:
                def body(carry: Any) -> Any:
                    return carry[1], self.f(a, carry[1])
                return m.lax.while_loop(lambda c: jnp.abs(c[0] - c[1]) > 1e-6, body,
                                        (x_guess, self.f(a, x_guess)))[1]

            def vjp_fwd(self, nzs_in: Any, a: Any, x_guess: Any) -> Any:
                x_star = self(a, x_guess)
                return x_star, (a, x_star)

            def vjp_bwd_retval(self, res: Any, x_star_bar: Any) -> Any:
                a, x_star = res
                _, vjp_a = m.vjp(lambda a: self.f(a, x_star), a)
                a_bar, = vjp_a(fixed_point(partial(rev_iter, self.f), (a, x_star, x_star_bar),
                                           x_star_bar))
                return a_bar, jnp.zeros_like(x_star)

        def rev_iter(f: Any, packed: Any, u: Any) -> Any:
            a, x_star, x_star_bar = packed
            _, vjp_x = m.vjp(lambda x: f(a, x), x_star)
            return x_star_bar + vjp_x(u)[0]

        def fixed_point(f: Any, a: Any, x_guess: Any) -> Any:
            return FixedPoint(m.tree_util.tree_map(m.typeof, a),
                              m.tree_util.tree_map(m.typeof, x_guess), f=f)(a, x_guess)

        def newton_sqrt(a: Any) -> Any:
            return fixed_point(lambda a, z: 0.5 * (z + a / z), a, a)
        return [newton_sqrt(2.), m.grad(newton_sqrt)(2.), m.grad(m.grad(newton_sqrt))(2.)]

    got, want = (lib_fixed_point(*lib) for lib in LIBS)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got[1]), 0.5 / np.sqrt(2.), rtol=1e-5)


def test_a_call_stages_a_named_custom_rule() -> None:
    c = _classes(plait, pjnp, phijax)
    x = pjnp.float32(1.)
    closed = plait.make_jaxpr(lambda x: c["Log1pExp"](plait.typeof(x))(x))(x)
    check_jaxpr(closed.jaxpr)
    assert "custom_vjp_call[\n      name=Log1pExp" in str(closed)
    g = plait.make_jaxpr(plait.grad(lambda x: c["JvpOnly"](plait.typeof(x))(x)))(x)
    check_jaxpr(g.jaxpr)
    s = c["Scale"](plait.typeof(x), k=2.0)
    assert s.k == 2.0 and repr(s) == "Scale[{'k': 2.0}]"
    assert s == c["Scale"](plait.typeof(x), k=2.0) and s != c["Scale"](plait.typeof(x), k=3.0)


def _refuse_bad_subclasses(hj: Any) -> None:
    class NoAvals(hj.VJPHiPrimitive):  # type: ignore[misc]  # (hj: either library)
        def __init__(self) -> None:
            self.params = dict[str, Any]()
            super().__init__()
    with pytest.raises(AttributeError, match="should set `self.in_avals`"):
        NoAvals()

    class Both(hj.VJPHiPrimitive):  # type: ignore[misc]  # (hj: either library)
        def __init__(self) -> None:
            self.in_avals, self.out_aval, self.params = (), None, dict[str, Any]()
            super().__init__()

        def vjp_bwd(self, res: Any, g: Any, *accs: Any) -> None: ...

        def vjp_bwd_retval(self, res: Any, g: Any) -> Any: ...
    with pytest.raises(AttributeError, match="should not override both"):
        Both()


def test_bad_subclasses_are_refused_as_in_jax() -> None:
    _refuse_bad_subclasses(phijax)
    _refuse_bad_subclasses(jhijax)
    c = _classes(plait, pjnp, phijax)
    with pytest.raises(plait.errors.ArgumentError, match="expected 1 arguments, but got 2"):
        c["Log1pExp"](plait.typeof(1.))(1., 2.)

"""``custom_jvp`` and ``custom_vjp`` against JAX 0.10.2 (and closed forms).

Each function is written once against a namespace ``L`` (plait's or JAX's).
Forward mode through a ``custom_vjp`` function, which JAX refuses, is checked
against JAX's reverse mode of the same function: with a backward function
linear in its cotangent, the Jacobian is the same either way.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import jax
import numpy as np
import pytest

import plait
import plait.numpy as pjnp
from plait.errors import TransformError
from tests.frontend.jax_oracle import JAX, PLAIT, Lib, assert_close, f32

X = f32(0.3, -1.2, 2.0)
Y = np.float32(1.5)


# -- custom_jvp functions ----------------------------------------------------------

def log1pexp(L: Lib) -> Callable[[Any], Any]:
    """The JAX documentation's example: the rule calls the function itself."""
    @L.custom_jvp
    def log1pexp(x):
        return L.np.log1p(L.np.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + L.np.exp(x)))
    return log1pexp


def defjvps_product(L: Lib) -> Callable[..., Any]:
    @L.custom_jvp
    def f(x, y):
        return L.np.sin(x) * y

    f.defjvps(lambda x_dot, ans, x, y: L.np.cos(x) * x_dot * y,
              lambda y_dot, ans, x, y: L.np.sin(x) * y_dot)
    return f


def straight_through_round(L: Lib) -> Callable[[Any], Any]:
    """A rule that is not the derivative of the function: round's would be zero."""
    @L.custom_jvp
    def f(x):
        return L.np.round(x * 2.0) * x

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return f(x), 2.0 * x * t + L.np.round(x * 2.0) * t
    return f


def nondiff_callable(L: Lib) -> Callable[[Any], Any]:
    @partial(L.custom_jvp, nondiff_argnums=(0,))
    def apply(g, x):
        return g(x)

    @apply.defjvp
    def apply_jvp(g, primals, tangents):
        x, = primals
        t, = tangents
        return apply(g, x), 3.0 * t  # deliberately not g's derivative
    return lambda x: apply(L.np.tanh, x)


def nondiff_int_power(L: Lib) -> Callable[..., Any]:
    @partial(L.custom_jvp, nondiff_argnums=(1,))
    def power(x, n):
        return x ** n

    @power.defjvp
    def power_jvp(n, primals, tangents):
        x, = primals
        t, = tangents
        return power(x, n), n * x ** (n - 1) * t
    return lambda x, y: power(x, 3) * y


def pytree_jvp(L: Lib) -> Callable[..., Any]:
    @L.custom_jvp
    def f(d):
        return {"s": L.np.sum(d["a"] * d["b"][0]), "v": d["a"] * d["b"][1]}

    @f.defjvp
    def f_jvp(primals, tangents):
        d, = primals
        t, = tangents
        a, (b0, b1) = d["a"], d["b"]
        ta, (tb0, tb1) = t["a"], t["b"]
        out = f(d)
        return out, {"s": L.np.sum(ta * b0 + a * tb0), "v": ta * b1 + a * tb1}
    return lambda x, y: f({"a": x, "b": (L.np.cos(x), y)})


# -- custom_vjp functions ----------------------------------------------------------

def sin_times(L: Lib) -> Callable[..., Any]:
    """The JAX documentation's example: residuals, fwd calling the function itself."""
    @L.custom_vjp
    def f(x, y):
        return L.np.sin(x) * y

    def f_fwd(x, y):
        return f(x, y), (L.np.cos(x), L.np.sin(x), y)

    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return cos_x * g * y, L.np.sum(sin_x * g)
    f.defvjp(f_fwd, f_bwd)
    return f


def clip_gradient(L: Lib) -> Callable[..., Any]:
    @partial(L.custom_vjp, nondiff_argnums=(0, 1))
    def clip_gradient(lo, hi, x):
        return x

    def fwd(lo, hi, x):
        return x, None

    def bwd(lo, hi, _, g):
        return (L.np.clip(g, lo, hi),)
    clip_gradient.defvjp(fwd, bwd)
    return clip_gradient


def clipped_square(L: Lib) -> Callable[..., Any]:
    clip = clip_gradient(L)
    return lambda x, y: clip(-1.0, 1.0, x * x) * y


def pytree_vjp(L: Lib) -> Callable[..., Any]:
    """Dict arguments, a pytree of residuals, a tuple output."""
    @L.custom_vjp
    def layer(p, x):
        return L.np.tanh(p["w"] * x + p["b"]), L.np.sum(x)

    def fwd(p, x):
        out = layer(p, x)
        return out, {"p": p, "x": x, "y": out[0]}

    def bwd(res, cts):
        g, gs = cts
        dz = g * (1.0 - res["y"] ** 2)
        return {"w": dz * res["x"], "b": dz}, dz * res["p"]["w"] + gs
    layer.defvjp(fwd, bwd)
    return lambda x, y: layer({"w": x * y, "b": L.np.sin(x)}, x)


def doubled_gradient(L: Lib) -> Callable[..., Any]:
    """A bwd that is not the derivative (twice it): the rule must be what is used."""
    @L.custom_vjp
    def f(x, y):
        return x * L.np.exp(y)

    def fwd(x, y):
        return f(x, y), (x, L.np.exp(y))

    def bwd(res, g):
        x, ey = res
        return 2.0 * g * ey, 2.0 * L.np.sum(g * x * ey)
    f.defvjp(fwd, bwd)
    return f


class Fn(NamedTuple):
    name: str
    make: Callable[[Lib], Callable[..., Any]]
    args: tuple[Any, ...]


FUNCTIONS = [
    Fn("log1pexp", log1pexp, (f32(-3.0, 0.5, 30.0),)),
    Fn("defjvps_product", defjvps_product, (X, Y)),
    Fn("straight_through_round", straight_through_round, (X,)),
    Fn("nondiff_callable", nondiff_callable, (X,)),
    Fn("nondiff_int_power", nondiff_int_power, (X, Y)),
    Fn("pytree_jvp", pytree_jvp, (X, Y)),
    Fn("sin_times", sin_times, (X, Y)),
    Fn("clipped_square", clipped_square, (X, Y)),
    Fn("pytree_vjp", pytree_vjp, (X, Y)),
    Fn("doubled_gradient", doubled_gradient, (X, Y)),
]
CUSTOM_VJP = {"sin_times", "clipped_square", "pytree_vjp", "doubled_gradient"}


def _scalar(L: Lib, f: Callable[..., Any]) -> Callable[..., Any]:
    def s(*args: Any) -> Any:
        return sum(L.np.sum(L.np.sin(y) + y) for y in jax.tree_util.tree_leaves(f(*args)))
    return s


def _batched(x: np.ndarray) -> np.ndarray:
    return np.stack([x, -x, 0.5 * x, x + 1.0])


def _vmap(L: Lib, f: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return L.vmap(f, in_axes=(0,) + (None,) * (len(args) - 1))(_batched(args[0]), *args[1:])


def _vjp(L: Lib, f: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    out, pullback = L.vjp(f, *args)
    return out, pullback(jax.tree_util.tree_map(lambda y: np.ones(np.shape(y), np.float32) * 0.7,
                                                 jax.tree_util.tree_map(np.asarray, out)))


TRANSFORMS: dict[str, Callable[[Lib, Callable[..., Any], tuple[Any, ...]], Any]] = {
    "value": lambda L, f, a: f(*a),
    "jit": lambda L, f, a: L.jit(f)(*a),
    "grad": lambda L, f, a: L.grad(_scalar(L, f), argnums=tuple(range(len(a))))(*a),
    "jit_grad": lambda L, f, a: L.jit(L.grad(_scalar(L, f)))(*a),
    "vjp": lambda L, f, a: _vjp(L, f, a),
    "vmap": lambda L, f, a: _vmap(L, f, a),
    "jit_vmap": lambda L, f, a: L.jit(L.vmap(f, in_axes=(0,) + (None,) * (len(a) - 1)))(
        _batched(a[0]), *a[1:]),
    "jit_of_function": lambda L, f, a: L.grad(_scalar(L, L.jit(f)))(*a),
    "vmap_grad": lambda L, f, a: _vmap(L, L.grad(_scalar(L, f)), a),
    "grad_vmap_sum": lambda L, f, a: L.grad(
        lambda xb: L.np.sum(L.vmap(lambda x: _scalar(L, f)(x, *a[1:]))(xb)))(_batched(a[0])),
    "jacrev": lambda L, f, a: L.jacrev(f)(*a),
    # Forward mode: JAX refuses it for custom_vjp (compared separately below).
    "jvp": lambda L, f, a: L.jvp(lambda x: f(x, *a[1:]), (a[0],), (np.cos(a[0]),)),
    "jit_jvp": lambda L, f, a: L.jit(lambda *a: L.jvp(lambda x: f(x, *a[1:]), (a[0],),
                                                     (L.np.cos(a[0]),)))(*a),
    "jacfwd": lambda L, f, a: L.jacfwd(f)(*a),
    "vmap_jvp": lambda L, f, a: L.vmap(lambda x: L.jvp(lambda x: f(x, *a[1:]), (x,), (x,)))(
        _batched(a[0])),
    "hessian": lambda L, f, a: L.hessian(_scalar(L, f))(*a),
}
FORWARD = {"jvp", "jit_jvp", "jacfwd", "vmap_jvp", "hessian"}
DEFAULT = {"value", "grad", "jit_of_function", "vmap_grad", "jvp"}  # the rest is marked slow

_PARAMS = [pytest.param(fn, t, id=f"{fn.name}-{t}",
                        marks=[] if t in DEFAULT else [pytest.mark.slow])
           for fn in FUNCTIONS for t in TRANSFORMS
           if not (fn.name in CUSTOM_VJP and t in FORWARD)]


@pytest.mark.parametrize("fn, transform", _PARAMS)
def test_matches_jax(fn: Fn, transform: str) -> None:
    apply = TRANSFORMS[transform]
    want = apply(JAX, fn.make(JAX), fn.args)
    got = apply(PLAIT, fn.make(PLAIT), fn.args)
    assert_close(got, want, rtol=1e-4, atol=1e-5)


# -- custom_jvp: the motivating example --------------------------------------------

def test_custom_jvp_gives_finite_gradients_where_plain_autodiff_gives_nan() -> None:
    def plain(L):
        return lambda x: L.np.log1p(L.np.exp(x))
    for L in (JAX, PLAIT):
        assert np.isnan(float(L.grad(plain(L))(100.0)))
    assert float(plait.grad(log1pexp(PLAIT))(100.0)) == 1.0
    xs = f32(-100.0, -1.0, 0.0, 1.0, 100.0)
    got = plait.vmap(plait.grad(log1pexp(PLAIT)))(xs)
    assert np.all(np.isfinite(np.asarray(got)))
    assert_close(got, jax.vmap(jax.grad(log1pexp(JAX)))(xs))
    assert_close(got, (1.0 / (1.0 + np.exp(-xs.astype(np.float64)))).astype(np.float32))
    assert_close(plait.jit(plait.grad(log1pexp(PLAIT)))(100.0), np.float32(1.0))


def test_second_derivative_uses_the_rule_of_the_nested_call() -> None:
    # The rule calls log1pexp again; differentiating the rule uses that call's rule.
    x = f32(-2.0, 0.5, 80.0)
    def f(L):
        return lambda x: L.grad(log1pexp(L))(x)
    got = plait.vmap(plait.grad(f(PLAIT)))(x)
    assert_close(got, jax.vmap(jax.grad(f(JAX)))(x))
    s = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    assert_close(got, (s * (1 - s)).astype(np.float32), atol=1e-6)


def fixed_point(L: Lib) -> Callable[..., Any]:
    """The JAX documentation's implicit-function example: a while loop whose custom_vjp
    rule calls the function again, once on the rule's own primals (fwd) and once on
    others (bwd)."""
    @partial(L.custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f, a, x_guess):
        def body(carry):
            return carry[1], f(a, carry[1])
        return L.lax.while_loop(lambda c: L.np.abs(c[0] - c[1]) > 1e-6, body,
                                (x_guess, f(a, x_guess)))[1]

    def fwd(f, a, x_init):
        x_star = fixed_point(f, a, x_init)
        return x_star, (a, x_star)

    def rev_iter(f, packed, u):
        a, x_star, x_star_bar = packed
        _, vjp_x = L.vjp(lambda x: f(a, x), x_star)
        return x_star_bar + vjp_x(u)[0]

    def bwd(f, res, x_star_bar):
        a, x_star = res
        _, vjp_a = L.vjp(lambda a: f(a, x_star), a)
        w = fixed_point(partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar)
        return vjp_a(w)[0], L.np.zeros_like(x_star)

    fixed_point.defvjp(fwd, bwd)
    return lambda a: fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)


@pytest.mark.parametrize("order", [1, 2, 3])
def test_higher_derivatives_of_a_while_loop_use_the_rule_of_the_nested_call(order: int) -> None:
    # Differentiating the rules must reach the nested call's rule, never the while
    # loop, which reverse mode cannot transpose.
    def derivative(L: Lib) -> Callable[[Any], Any]:
        f = fixed_point(L)
        for _ in range(order):
            f = L.grad(f)
        return f
    for x in (2.0, 5.0):
        want = derivative(JAX)(x)
        assert_close(derivative(PLAIT)(x), want, rtol=1e-4)
        assert_close(plait.jit(derivative(PLAIT))(x), want, rtol=1e-4)
    # and the closed form of sqrt's derivatives at 2
    closed = {1: 0.5 * 2 ** -0.5, 2: -0.25 * 2 ** -1.5, 3: 0.375 * 2 ** -2.5}[order]
    assert_close(derivative(PLAIT)(2.0), np.float32(closed), rtol=1e-4)


def test_wrapping_a_custom_function_in_jit_keeps_its_rule() -> None:
    # jit(f) and jit(grad(f)) must run the custom rule, not differentiate f's body.
    f = log1pexp(PLAIT)
    assert float(plait.grad(plait.jit(f))(100.0)) == 1.0
    assert float(plait.jit(plait.grad(f))(100.0)) == 1.0
    assert float(plait.jit(plait.jit(plait.grad(f)))(100.0)) == 1.0
    g = plait.custom_jvp(plait.jit(lambda x: pjnp.log1p(pjnp.exp(x))))
    g.defjvp(lambda p, t: (g(*p), t[0] * 0.5))
    assert float(plait.grad(g)(100.0)) == 0.5
    assert float(plait.jit(plait.grad(g))(3.0)) == 0.5


# -- custom_vjp: gradient clipping -------------------------------------------------

@pytest.mark.parametrize("x, scale, expected", [(1.0, 10.0, 0.5), (2.0, -10.0, -0.5),
                                                (-0.3, 0.2, 0.2)])
def test_custom_vjp_clips_the_gradient(x: float, scale: float, expected: float) -> None:
    # The cotangent reaching clip_gradient is `scale`; its bwd clips it into [-0.5, 0.5].
    def g(L: Lib) -> Callable[[Any], Any]:
        clip = clip_gradient(L)
        return lambda x: clip(-0.5, 0.5, x) * scale
    assert float(plait.grad(lambda x: x * scale)(x)) == pytest.approx(scale)
    got = float(plait.grad(g(PLAIT))(x))
    assert got == pytest.approx(expected)
    assert got == pytest.approx(float(jax.grad(g(JAX))(x)))
    assert float(g(PLAIT)(x)) == pytest.approx(x * scale)  # the value is untouched
    # Elementwise, under vmap and jit too.
    xs = f32(-3.0, 0.5, 4.0)
    assert_close(plait.jit(plait.vmap(plait.grad(g(PLAIT))))(xs), np.full(3, expected, np.float32))


# -- custom_vjp: forward mode by transposing the backward function ------------------

LINEAR_BWD = ["sin_times", "pytree_vjp", "doubled_gradient"]


@pytest.mark.parametrize("name", LINEAR_BWD)
def test_jacfwd_of_custom_vjp_equals_jacrev(name: str) -> None:
    fn = next(f for f in FUNCTIONS if f.name == name)
    for argnums in (0, 1):
        want = jax.jacrev(fn.make(JAX), argnums=argnums)(*fn.args)
        assert_close(plait.jacfwd(fn.make(PLAIT), argnums=argnums)(*fn.args), want, rtol=1e-4)
        assert_close(plait.jacrev(fn.make(PLAIT), argnums=argnums)(*fn.args), want, rtol=1e-4)


@pytest.mark.parametrize("name", [
    "sin_times", "clipped_square",
    *[pytest.param(n, marks=pytest.mark.slow) for n in LINEAR_BWD[1:]]])
def test_hessian_of_custom_vjp_equals_jacfwd_of_jacrev(name: str) -> None:
    fn = next(f for f in FUNCTIONS if f.name == name)
    def s(L):
        return _scalar(L, fn.make(L))
    # JAX 0.10.2 refuses jacfwd(jacrev(f)) of most custom_vjp functions (forward mode
    # over the fwd rule: see test_jax_refuses_forward_mode); reverse over reverse
    # differentiates the same fwd and bwd.  (plait's hessian differentiates the reverse
    # pass, whose bwd need not be linear in its cotangent: clipped_square works too.)
    want = jax.jacrev(jax.jacrev(s(JAX)))(*fn.args)
    assert_close(plait.hessian(s(PLAIT))(*fn.args), want, rtol=1e-4, atol=1e-4)
    assert_close(plait.jacfwd(plait.jacrev(s(PLAIT)))(*fn.args), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["sin_times", *[pytest.param(n, marks=pytest.mark.slow)
                                                  for n in LINEAR_BWD[1:]]])
def test_forward_over_forward_of_custom_vjp_equals_reverse_over_reverse(name: str) -> None:
    # Both forward passes go through the transposed bwd (the second one differentiates it).
    fn = next(f for f in FUNCTIONS if f.name == name)
    def f(L):
        return lambda x: fn.make(L)(x, *fn.args[1:])
    want = jax.jacrev(jax.jacrev(f(JAX)))(fn.args[0])
    assert_close(plait.jacfwd(plait.jacfwd(f(PLAIT)))(fn.args[0]), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", LINEAR_BWD)
def test_jax_refuses_forward_mode(name: str) -> None:
    # What the comparisons above stand in for: JAX has no forward mode here.
    fn = next(f for f in FUNCTIONS if f.name == name)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jacfwd(fn.make(JAX))(*fn.args)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jacfwd(jax.jacrev(_scalar(JAX, fn.make(JAX))))(*fn.args)


def test_forward_mode_of_custom_vjp_matches_closed_form() -> None:
    # sin_times' bwd is the true derivative: J = diag(cos(x) * y), dy -> sin(x).
    f = sin_times(PLAIT)
    t = f32(1.0, 2.0, -1.0)
    out, tangent = plait.jvp(f, (X, Y), (t, np.float32(0.5)))
    assert_close(out, np.sin(X) * Y)
    assert_close(tangent, np.cos(X) * Y * t + np.sin(X) * 0.5, rtol=1e-5)
    jac = plait.vmap(lambda t: plait.jvp(lambda x: f(x, Y), (X,), (t,))[1])
    assert_close(jac(np.eye(3, dtype=np.float32)), np.diag(np.cos(X) * Y))


@pytest.mark.parametrize("how", ["jvp", "jacfwd", "jit_jvp", "linearize", "jacfwd_jacfwd"])
def test_forward_mode_through_a_nonlinear_bwd_is_a_clear_error(how: str) -> None:
    f = clipped_square(PLAIT)
    run = {"jvp": lambda: plait.jvp(lambda x: f(x, Y), (X,), (X,)),
           "jacfwd": lambda: plait.jacfwd(f)(X, Y),
           "jit_jvp": lambda: plait.jit(lambda x: plait.jvp(lambda x: f(x, Y), (x,), (x,)))(X),
           "linearize": lambda: plait.linearize(lambda x: f(x, Y), X)[1](X),
           "jacfwd_jacfwd": lambda: plait.jacfwd(plait.jacfwd(lambda x: pjnp.sum(f(x, Y))))(X)}
    with pytest.raises(TransformError) as info:
        run[how]()
    assert isinstance(info.value, TypeError)  # JAX's refusal is a TypeError
    msg = str(info.value)
    assert "clip_gradient" in msg and "not linear" in msg and "reverse mode" in msg
    # Reverse mode of the same function works, and agrees with JAX.
    assert_close(plait.grad(lambda x: pjnp.sum(f(x, Y)))(X),
                 jax.grad(lambda x: jax.numpy.sum(clipped_square(JAX)(x, Y)))(X))
    # JAX refuses forward mode through any custom_vjp function.
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jacfwd(clipped_square(JAX))(X, Y)


# -- Misuse: errors at least as informative as JAX's ---------------------------------

def _closure_diff(L: Lib, which: str) -> Any:
    def outer(y: Any) -> Any:
        if which == "jvp":
            @L.custom_jvp
            def f(x):
                return x * y

            f.defjvp(lambda p, t: (f(*p), t[0] * y))
        else:
            @L.custom_vjp
            def f(x):
                return x * y

            f.defvjp(lambda x: (f(x), None), lambda _, g: (g * y,))
        return f(2.0)
    return L.grad(outer)(3.0)


def _bad_jvp_output(L: Lib) -> Any:
    @L.custom_jvp
    def f(x):
        return x * 2.0

    f.defjvp(lambda p, t: (f(*p), t[0][:2]))
    return L.jvp(f, (X,), (X,))


def _bad_bwd_shape(L: Lib) -> Any:
    @L.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (f(x, y), (x, y)), lambda res, g: (g * res[1], g * res[0]))
    return L.grad(lambda x, y: L.np.sum(f(x, y)), argnums=1)(X, Y)


def _bad_bwd_arity(L: Lib) -> Any:
    @L.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (f(x, y), y), lambda y, g: (g * y,))
    return L.grad(lambda x: L.np.sum(f(x, Y)))(X)


def _no_rule(L: Lib) -> Any:
    return L.custom_jvp(lambda x: x)(1.0)


MISUSES: dict[str, tuple[Callable[[Lib], Any], type[Exception], list[str]]] = {
    # name: (misuse, the exception plait raises, what its message must mention).
    # JAX raises the same type, except for closed-over values: there its error is an
    # UnexpectedTracerError about a leaked LinearizeTracer, which names no cause.
    "closed_over_jvp": (lambda L: _closure_diff(L, "jvp"), TransformError,
                        ["closed-over", "custom_jvp", "(f)", "argument"]),
    "closed_over_vjp": (lambda L: _closure_diff(L, "vjp"), TransformError,
                        ["closed-over", "custom_vjp", "(f)", "argument"]),
    "jvp_rule_tangent_shape": (_bad_jvp_output, TypeError, ["float32[3]", "float32[2]", "tangent"]),
    "bwd_cotangent_shape": (_bad_bwd_shape, ValueError, ["output[1]", "float32[]", "float32[3]"]),
    "bwd_arity": (_bad_bwd_arity, TypeError, ["tuple", "(2)", "length 1"]),
    "no_rule": (_no_rule, AttributeError, ["defjvp"]),
}


@pytest.mark.parametrize("name", sorted(MISUSES))
def test_misuse_errors(name: str) -> None:
    misuse, kind, parts = MISUSES[name]
    with pytest.raises(Exception) as theirs:
        misuse(JAX)
    with pytest.raises(kind) as ours:
        misuse(PLAIT)
    if not name.startswith("closed_over"):
        assert isinstance(theirs.value, kind)
    for part in parts:
        assert part in str(ours.value), f"{part!r} missing from: {ours.value}"


def test_symbolic_zeros_fwd_sees_custom_vjp_primals_as_in_jax() -> None:
    def define(lib: Any) -> Any:
        CustomVJPPrimal = lib.custom_derivatives.CustomVJPPrimal

        @lib.custom_vjp
        def f(x: Any, y: Any) -> Any:
            return lib.numpy.sin(x["a"]) * y

        def fwd(x: Any, y: Any) -> Any:
            assert isinstance(x["a"], CustomVJPPrimal) and isinstance(y, CustomVJPPrimal)
            a, b = x["a"].value, y.value
            return f({"a": a}, b), (a, b)

        def bwd(res: Any, g: Any) -> Any:
            a, b = res
            return {"a": g * lib.numpy.cos(a) * b}, g * lib.numpy.sin(a)
        f.defvjp(fwd, bwd, symbolic_zeros=True)
        return f

    results = []
    for lib in (plait, jax):
        f = define(lib)
        loss = lambda a, b, f=f: f({"a": a}, b) ** 2  # noqa: E731
        results.append([float(v) for v in (*lib.grad(loss, (0, 1))(0.7, 3.0),
                                           lib.jit(lib.grad(loss))(0.7, 3.0),
                                           f({"a": 0.7}, 3.0))])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)
    z = plait.custom_derivatives.zero_from_primal(pjnp.ones(2), symbolic_zeros=True)
    zj = jax.custom_derivatives.zero_from_primal(jax.numpy.ones(2), symbolic_zeros=True)
    assert (repr(z), z.shape, z.dtype) == (repr(zj), zj.shape, zj.dtype)
    np.testing.assert_array_equal(plait.custom_derivatives.zero_from_primal(pjnp.ones(2)),
                                  jax.custom_derivatives.zero_from_primal(jax.numpy.ones(2)))


# -- A JVP rule is needed only when differentiating -------------------------------------

def _unwritten_rule(L: Lib) -> Any:
    @L.custom_jvp
    def f(x: Any) -> Any:
        return L.np.sin(x)

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        raise NotImplementedError("jvp rule not written yet")
    return f


def _branching_rule(L: Lib) -> Any:
    @L.custom_jvp
    def h(x: Any) -> Any:
        return L.np.sin(x)

    @h.defjvp
    def h_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        if x > 0:  # needs a concrete x: fails when traced abstractly
            return h(x), L.np.cos(x) * t
        return h(x), -L.np.cos(x) * t
    return h


@pytest.mark.parametrize("how", ["jit", "vmap", "jit_vmap", "make_jaxpr"])
def test_a_rule_that_cannot_be_traced_does_not_stop_the_call(how: str) -> None:
    # JAX calls the rule only when differentiating (the custom_derivatives tutorial).
    def run(L: Lib, module: Any) -> Any:
        f, h = _unwritten_rule(L), _branching_rule(L)
        g = {"jit": L.jit, "vmap": L.vmap, "jit_vmap": lambda g: L.jit(L.vmap(g)),
             "make_jaxpr": lambda g: lambda x: module.core.eval_jaxpr(
                 module.make_jaxpr(g)(x).jaxpr, [], x)[0]}[how]
        return g(f)(X), g(h)(X)
    assert_close(run(PLAIT, plait), run(JAX, jax))


@pytest.mark.parametrize("how", ["grad", "jit_grad", "vmap_grad", "jvp"])
def test_the_rules_error_is_raised_when_differentiating(how: str) -> None:
    def run(L: Lib) -> Any:
        f = _unwritten_rule(L)
        return {"grad": lambda: L.grad(f)(1.0), "jit_grad": lambda: L.jit(L.grad(f))(1.0),
                "vmap_grad": lambda: L.vmap(L.grad(f))(X),
                "jvp": lambda: L.jvp(f, (1.0,), (1.0,))}[how]()
    with pytest.raises(NotImplementedError, match="jvp rule not written yet"):
        run(JAX)
    with pytest.raises(NotImplementedError, match="jvp rule not written yet"):
        run(PLAIT)


def test_a_branching_rule_works_on_concrete_values_only_as_in_jax() -> None:
    assert_close(plait.grad(_branching_rule(PLAIT))(1.0), jax.grad(_branching_rule(JAX))(1.0))
    with pytest.raises(plait.errors.TracerBoolConversionError):
        plait.jit(plait.grad(_branching_rule(PLAIT)))(1.0)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(jax.grad(_branching_rule(JAX)))(1.0)


def test_a_deferred_rule_error_prints_and_parses_back() -> None:
    jaxpr = plait.make_jaxpr(_unwritten_rule(PLAIT))(1.0).jaxpr
    assert ("rule_error='the custom_jvp rule f_jvp of f raised NotImplementedError: jvp rule "
            "not written yet'") in str(jaxpr)
    parsed = plait.ir.parse_jaxpr(str(jaxpr))
    assert parsed == jaxpr
    # A parsed jaxpr's rule error (no exception object behind it) is a TransformError.
    with pytest.raises(TransformError, match="NotImplementedError: jvp rule never written"):
        plait.transforms.jvp_jaxpr(
            plait.ir.parse_jaxpr(str(jaxpr).replace("not written yet", "never written")),
            [True])


def _unwritten_bwd(L: Lib) -> Any:
    @L.custom_vjp
    def g(x: Any) -> Any:
        return L.np.sin(x)

    def g_fwd(x: Any) -> Any:
        return g(x), L.np.cos(x)

    def g_bwd(c: Any, y: Any) -> Any:
        raise NotImplementedError("bwd not written yet")
    g.defvjp(g_fwd, g_bwd)
    return g


@pytest.mark.parametrize("how", ["jit", "vmap", "grad", "jit_grad", "vjp"])
def test_custom_vjp_rules_that_cannot_be_traced_fail_only_when_differentiating(
        how: str) -> None:
    def run(L: Lib) -> Any:
        g = _unwritten_bwd(L)
        return {"jit": lambda: L.jit(g)(X), "vmap": lambda: L.vmap(g)(X),
                "grad": lambda: L.grad(g)(1.0), "jit_grad": lambda: L.jit(L.grad(g))(1.0),
                "vjp": lambda: L.vjp(g, 1.0)[1](1.0)}[how]()
    if how in ("jit", "vmap"):
        assert_close(run(PLAIT), run(JAX))
        return
    with pytest.raises(NotImplementedError, match="bwd not written yet"):
        run(JAX)
    with pytest.raises(NotImplementedError, match="bwd not written yet"):
        run(PLAIT)


def test_a_stand_in_rule_does_not_run_the_function_again() -> None:
    # As in JAX, jit(f) runs f's Python code once, whether or not its rule could be traced.
    def count(L: Lib) -> list[str]:
        calls: list[str] = []

        @L.custom_jvp
        def f(x: Any) -> Any:
            calls.append("f")
            return L.np.sin(x)

        @f.defjvp
        def f_jvp(primals: Any, tangents: Any) -> Any:
            raise NotImplementedError("jvp rule not written yet")

        @L.custom_vjp
        def g(x: Any) -> Any:
            calls.append("g")
            return L.np.sin(x)
        g.defvjp(lambda x: (g(x), x), lambda r, c: 1 / 0)
        L.jit(f)(1.0)
        L.jit(g)(1.0)
        return calls
    assert count(PLAIT) == count(JAX) == ["f", "g"]

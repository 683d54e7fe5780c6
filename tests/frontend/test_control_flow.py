"""Control flow (``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``, ``map``)
against JAX 0.10.2: printed jaxprs, values, and every transformation and their
compositions (``grad``, ``jvp``, ``vmap``, ``jacfwd``, ``jacrev``, ``jit``).

Each program is written once against a namespace ``L`` (plait's or JAX's), so
the same source runs in both; JAX's result is the oracle.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import jax
import numpy as np
import pytest

import plait
import plait.lax as plax
import plait.numpy as pjnp
from plait.errors import TransformError
from plait.ir.check import check_jaxpr
from plait.transforms.dce import dce_jaxpr
from tests.frontend.jax_oracle import JAX, PLAIT, Lib, assert_close, f32, tree_map
from tests.ir.jaxpr_corpus import Case, jax_oracle_text, trace_plait

# -- Printed jaxprs ---------------------------------------------------------------
# Reuses the corpus oracle (JAX's text with duplicate pure equations merged).

def _case(*args: Any) -> Callable[[Callable[..., Any]], Case]:
    return lambda make: Case(make.__name__, make, args)


@_case(1, 5.)
def one_of_three(np_, lax_, jit_):  # seed 000 / 003
    return lambda index, arg: lax_.switch(
        index, [lambda x: x + 1., lambda x: x - 2., lambda x: x + 3.], arg)


@_case(5.)
def func7(np_, lax_, jit_):
    return lambda arg: lax_.cond(arg >= 0., lambda xt: xt + 3., lambda xf: xf - 3., arg)


@_case(5., (np.zeros(1, np.float32), 2.))
def func8(np_, lax_, jit_):
    return lambda a1, a2: lax_.cond(a1 >= 0., lambda xt: xt[0],
                                    lambda xf: np_.array([1]) + xf[1], a2)


@_case(np.ones(16, np.float32), 5)
def func10(np_, lax_, jit_):
    def func10(arg, n):
        ones = np_.ones(arg.shape)
        return lax_.fori_loop(0, n, lambda i, carry: carry + ones * 3. + arg, arg + ones)
    return func10


@_case(np.ones(16, np.float32), 5.)
def func11(np_, lax_, jit_):
    def func11(arr, extra):
        ones = np_.ones(arr.shape)

        def body(carry, aelems):
            ae1, ae2 = aelems
            return (carry + ae1 * ae2 + extra, carry)
        return lax_.scan(body, 0., (arr, ones))
    return func11


@_case(1.)
def func12(np_, lax_, jit_):
    def func12(arg):
        @jit_
        def inner(x):
            return x + arg * np_.ones(1)
        return arg + inner(arg - 2.)
    return func12


@_case(f32(1, 2, 3))
def cond_without_operands(np_, lax_, jit_):
    return lambda x: lax_.cond(x[0] > 0, lambda: np_.sin(x), lambda: x * 2.0)


@_case(f32(1, 2), {"a": np.float32(3), "b": f32(4, 5)})
def cond_pytree_operands(np_, lax_, jit_):
    def f(x, d):
        return lax_.cond(x[0] < 2, lambda a, e: (a * e["a"], {"s": e["b"]}),
                         lambda a, e: (a + 1.0, {"s": e["b"] * a}), x, d)
    return f


@_case(f32(1, 2, 3), np.float32(2))
def cond_branch_consts(np_, lax_, jit_):
    # Consts of the true branch come first; a value both branches close over is passed once.
    def f(x, y):
        z = x * y
        c = np.arange(3, dtype=np.float32)
        return lax_.cond(y > 0, lambda a: a * z + c, lambda a: a - z * y, x)
    return f


@_case(f32(1, 2, 3), np.float32(2))
def cond_weak_and_strong_outputs(np_, lax_, jit_):
    return lambda x, y: lax_.cond(y > 0, lambda a: (1.0, a[0]), lambda a: (a[1], 2.0), x)


@_case(np.int32(2), f32(1, 2))
def cond_integer_predicate(np_, lax_, jit_):
    return lambda n, x: lax_.cond(n, lambda a: a * 2.0, lambda a: -a, x)


@_case(np.int32(7), f32(1, 2))
def switch_closures(np_, lax_, jit_):
    def f(i, x):
        c = np.arange(2, dtype=np.float32)
        return lax_.switch(i, [lambda a: a + c, lambda a: a * x, np_.sin], x)
    return f


@_case(f32(1, 2, 3), np.int32(4))
def fori_loop_pytree_carry(np_, lax_, jit_):
    return lambda x, n: lax_.fori_loop(1, n, lambda i, c: (c[0] * 2.0, c[1] + i), (x, 0))


@_case(f32(1, 2), np.int16(5), np.int32(1))
def fori_loop_bound_types(np_, lax_, jit_):
    # A weakly typed bound takes the other bound's type; a concrete NumPy bound
    # still gives a scan counting from a Python int.
    return lambda x, n, m: (lax_.fori_loop(0, n, lambda i, c: c * 2.0, x),
                            lax_.fori_loop(np.int32(1), 4, lambda i, c: c + i, x),
                            lax_.fori_loop(m, 3, lambda i, c: c + i, x))


@_case(f32(1, 2, 3))
def fori_loop_static_unrolled(np_, lax_, jit_):
    return lambda x: lax_.fori_loop(0, 4, lambda i, c: c * 2.0 + i, x, unroll=2)


@_case(f32(1, 2, 3), np.ones((5, 3), np.float32))
def scan_options(np_, lax_, jit_):
    def f(x, xs):
        def body(c, a):
            return c * a, np_.sum(c)
        return (lax_.scan(body, x, xs, reverse=True, unroll=2),
                lax_.scan(body, x, xs, length=5, unroll=True))
    return f


@_case(f32(1, 2, 3))
def scan_xs_none(np_, lax_, jit_):
    return lambda x: lax_.scan(lambda c, _: (c * 0.5, np_.sum(c)), x, None, length=4)


@_case({"h": f32(1, 2), "n": (np.float32(1), np.int32(0))}, np.ones((3, 2), np.float32))
def scan_pytree_carry(np_, lax_, jit_):
    def f(c0, xs):
        def body(c, a):
            h, (s, k) = c["h"], c["n"]
            return {"h": h * a + s, "n": (s * 2.0, k + 1)}, {"y": h[0], "z": (k, a)}
        return lax_.scan(body, c0, {"a": xs}["a"])
    return f


@_case(f32(1, 2), np.ones((3, 2), np.float32))
def scan_forwarded_carry_and_xs(np_, lax_, jit_):
    # A carry passed through is a const; a stacked output that is a scanned input
    # is that input.
    return lambda x, xs: lax_.scan(lambda c, a: ((c[0] * a, c[1]), (a, c[1], c[0])), (x, x), xs)


@_case(f32(1, 2))
def while_forwarded_carry(np_, lax_, jit_):
    # Passed through and unread by the predicate: a body const.  Passed through but
    # read by the predicate: stays in the loop state.
    return lambda x: lax_.while_loop(lambda c: c[0] < c[2],
                                     lambda c: (c[0] + 1, c[1] * c[3], c[2], c[3]), (0, x, 5, x))


@_case(f32(1, 2), np.ones((3, 2), np.float32))
def nested_fori_in_cond_in_scan(np_, lax_, jit_):
    def f(x, xs):
        def body(c, a):
            c = lax_.cond(np_.sum(a) > 0,
                          lambda v: lax_.fori_loop(0, 3, lambda i, w: w * 0.5 + a, v),
                          lambda v: v - a, c)
            return c, np_.sum(c)
        return lax_.scan(body, x, xs)
    return f


@_case(f32(1, 2), np.ones((3, 2), np.float32))
def nested_while_in_cond_in_scan(np_, lax_, jit_):
    def f(x, xs):
        def body(c, a):
            c = lax_.cond(np_.sum(a) > 0,
                          lambda v: lax_.while_loop(lambda w: np_.sum(w) < 10.0,
                                                    lambda w: w * 2.0 + a, v),
                          lambda v: v, c)
            return c, None
        return lax_.scan(body, x, xs)[0]
    return f


@_case(f32(1, 2, 3))
def weak_typed_carry_promoted(np_, lax_, jit_):
    return lambda x: (lax_.fori_loop(0, 3, lambda i, c: c + x[0], 1.0),
                      lax_.while_loop(lambda c: c < 5.0, lambda c: c + x[1], 0.0))


PRINT_CASES = [one_of_three, func7, func8, func10, func11, func12, cond_without_operands,
               cond_pytree_operands, cond_branch_consts, cond_weak_and_strong_outputs,
               cond_integer_predicate, switch_closures,
               fori_loop_pytree_carry, fori_loop_bound_types, fori_loop_static_unrolled,
               scan_options, scan_xs_none,
               scan_pytree_carry, scan_forwarded_carry_and_xs, while_forwarded_carry,
               nested_fori_in_cond_in_scan, nested_while_in_cond_in_scan,
               weak_typed_carry_promoted]


@pytest.mark.parametrize("case", PRINT_CASES, ids=[c.name for c in PRINT_CASES])
def test_printed_jaxpr_matches_jax(case: Case) -> None:
    _, expected = jax_oracle_text(case)
    assert str(trace_plait(case)) == expected


def _top_primitives(L: Lib, f: Callable[..., Any], *args: Any) -> list[str]:
    return [e.primitive.name for e in L.make_jaxpr(f)(*args).jaxpr.eqns]


def _fori_primitives(L: Lib, x: Any) -> tuple[list[str], list[str], list[str]]:
    def body(i: Any, c: Any) -> Any:
        return c * 2.0 + i
    return (_top_primitives(L, lambda x: L.lax.fori_loop(0, 3, body, x), x),
            _top_primitives(L, lambda x, n: L.lax.fori_loop(0, n, body, x), x, 3),
            _top_primitives(L, lambda x, n: L.lax.fori_loop(n, 5, body, x), x, 3))


def test_fori_loop_is_a_scan_with_static_bounds_and_a_while_otherwise() -> None:
    x = f32(1, 2)
    for L in (JAX, PLAIT):
        static, dynamic, dynamic_lower = _fori_primitives(L, x)
        assert "scan" in static and "while" not in static
        assert "while" in dynamic and "scan" not in dynamic
        assert "while" in dynamic_lower and "scan" not in dynamic_lower


# -- Differential tests: values and transformations -------------------------------

class Prog(NamedTuple):
    name: str
    make: Callable[[Lib], Callable[..., Any]]
    args: tuple[Any, ...]
    reverse: bool = True
    """Reverse mode applies (no ``while`` with a data-dependent trip count)."""


PROGS: list[Prog] = []


def prog(*args: Any, reverse: bool = True) -> Callable[[Callable[[Lib], Any]], Any]:
    def register(make: Callable[[Lib], Any]) -> Any:
        PROGS.append(Prog(make.__name__, make, args, reverse))
        return make
    return register


X3 = f32(0.3, -0.2, 0.7)
XS = np.array([[0.5, -1.0, 0.2], [1.5, 0.3, -0.4], [-0.7, 0.8, 1.1], [0.1, 0.2, 0.3]],
              np.float32)


@prog(X3, np.float32(0.5))
def cond_bool_pred(L):
    return lambda x, y: L.lax.cond(L.np.sum(x) > y, lambda a: L.np.sin(a) * y,
                                   lambda a: L.np.cos(a) + a * a, x)


@prog(X3)
def cond_operandless_closure(L):
    # No operands: the branches close over x, which becomes a const of the cond.
    return lambda x: L.lax.cond(x[2] > 0.4, lambda: L.np.sin(x) * x[0], lambda: x ** 3)


@prog(X3, {"s": np.float32(2.0), "w": f32(1.0, -1.0)})
def cond_pytree(L):
    def f(x, d):
        def t(ops):
            a, e = ops
            return {"u": a * e["s"], "v": (L.np.sum(a * a), e["w"])}

        def fl(ops):
            a, e = ops
            return {"u": L.np.tanh(a) + 1.0, "v": (L.np.max(a), e["w"] * a[0])}
        return L.lax.cond(x[1] < 0.0, t, fl, (x, d))
    return f


@prog(X3, np.int32(1))
def switch_three_branches(L):
    return lambda x, i: L.lax.switch(
        i, [L.np.sin, lambda a: a * a * x[0], lambda a: L.np.exp(-a)], x)


@prog(X3, np.int32(9))
def switch_index_above_range(L):
    return lambda x, i: L.lax.switch(i, [L.np.sin, lambda a: a * a, L.np.cos], x)


@prog(X3, reverse=False)
def while_data_dependent(L):
    def f(x):
        def cond(c):
            i, v = c
            return (i < 6) & (L.np.sum(v * v) < 4.0)

        def body(c):
            i, v = c
            return i + 1, v * 1.3 + L.np.sin(v) * x[0]
        return L.lax.while_loop(cond, body, (0, x))
    return f


@prog(X3, reverse=False)
def while_counter_pred(L):
    # The predicate reads only the counter: unbatched under vmap of x.
    def f(x):
        return L.lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, L.np.cos(c[1]) * x),
                                (0, x))[1]
    return f


@prog(X3)
def fori_static(L):
    return lambda x: L.lax.fori_loop(0, 4, lambda i, c: c * L.np.cos(c) + i * x, x)


@prog(X3, np.int32(3), reverse=False)
def fori_dynamic(L):
    def f(x, n):
        # Under jit the bound is traced: a while loop, whatever the outer transform.
        def loop(x, n):
            return L.lax.fori_loop(0, n, lambda i, c: L.np.sin(c) * 1.5 + x, x)
        return L.jit(loop)(x, n)
    return f


@prog(X3, XS)
def scan_basic(L):
    def f(x, xs):
        def body(c, a):
            c = L.np.sin(c) * a + c * x
            return c, c * a
        return L.lax.scan(body, x, xs)
    return f


@prog(XS, X3)
def scan_over_first_argument(L):
    def f(xs, c0):
        return L.lax.scan(lambda c, a: (L.np.tanh(c * a + 1.0), L.np.sum(c * a)), c0, xs)
    return f


@prog(X3, XS)
def scan_reverse_unroll(L):
    def f(x, xs):
        def body(c, a):
            return c * L.np.cos(a) + a, L.np.sin(c)
        return (L.lax.scan(body, x, xs, reverse=True, unroll=3),
                L.lax.scan(body, x * 2.0, xs, unroll=True))
    return f


@prog(X3, (XS, {"k": f32(1.0, 2.0, -1.0, 0.5)}))
def scan_pytrees(L):
    def f(x, xs):
        def body(c, a):
            row, k = a[0], a[1]["k"]
            h, (s, n) = c["h"], c["n"]
            h = h * L.np.cos(row) + s * k
            return {"h": h, "n": (s + L.np.sum(h), n + 1)}, {"y": h * k, "n": n}
        return L.lax.scan(body, {"h": x, "n": (x[0], 0)}, xs)
    return f


# A program of the second table, named as the golden case above (both are registered).
@prog(X3)  # type: ignore[no-redef]  # see the comment above
def scan_xs_none(L):
    return lambda x: L.lax.scan(lambda c, _: (c * L.np.sin(c) + 1.0, L.np.sum(c)), x, None,
                                length=5)


@prog(XS)
def lax_map(L):
    return lambda xs: L.lax.map(lambda r: L.np.sin(r) * L.np.sum(r * r), xs)


@prog(X3, XS)
def nested_fori_cond_scan(L):
    def f(x, xs):
        def body(c, a):
            def t(v):
                return L.lax.fori_loop(0, 3, lambda i, w: w * L.np.cos(w) + a * x, v)
            c = L.lax.cond(L.np.sum(a) > 0.0, t, lambda v: v * a - 1.0, c)
            return c, L.np.sum(c)
        return L.lax.scan(body, x, xs)
    return f


@prog(X3, XS)
def nested_scan_in_scan(L):
    def f(x, xs):
        def outer(c, a):
            def inner(d, b):
                return d * L.np.cos(b) + c, d * b
            d, ys = L.lax.scan(inner, c, L.np.stack([a, a * 2.0]))
            return d, ys
        return L.lax.scan(outer, x, xs)
    return f


@prog(X3, XS, reverse=False)
def nested_while_cond_scan(L):
    def f(x, xs):
        def body(c, a):
            def t(v):
                return L.lax.while_loop(lambda w: L.np.sum(w * w) < 9.0,
                                        lambda w: w * 1.5 + a * x, v)
            c = L.lax.cond(L.np.sum(a) > 0.0, t, lambda v: v * a, c)
            return c, c[0]
        return L.lax.scan(body, x, xs)
    return f


def _batched(x: Any) -> Any:
    """Three lanes that take different branches and trip counts."""
    return tree_map(lambda a: np.stack([a, -a, 0.5 * a]) if a.dtype.kind == "f"
                    else np.stack([a, a + 1, a + 2]), x)


def _tangent(x: Any) -> Any:
    rng = np.random.default_rng(0)
    return tree_map(lambda a: rng.normal(size=a.shape).astype(a.dtype), x)


def _scalar(L: Lib, f: Callable[..., Any]) -> Callable[..., Any]:
    """A scalar function of all of ``f``'s inexact outputs."""
    def s(*args: Any) -> Any:
        leaves = [y for y in jax.tree_util.tree_leaves(f(*args))
                  if np.issubdtype(y.dtype, np.inexact)]
        return sum(L.np.sum(L.np.sin(y) + y) for y in leaves)
    return s


def _floats(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` keeping only its inexact outputs (Jacobians need real-valued outputs)."""
    return lambda *args: [y for y in jax.tree_util.tree_leaves(f(*args))
                          if np.issubdtype(y.dtype, np.inexact)]


def _in_axes(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return (0,) + (None,) * (len(args) - 1)


def _jvp(L: Lib, f: Callable[..., Any], args: tuple[Any, ...], t: Any) -> Any:
    x, *rest = args
    return L.jvp(lambda x: f(x, *rest), (x,), (t,))


def _vmap(L: Lib, f: Callable[..., Any], args: tuple[Any, ...], xb: Any) -> Any:
    return L.vmap(f, in_axes=_in_axes(args))(xb, *args[1:])


def _grad_vmap_sum(L: Lib, f: Callable[..., Any], args: tuple[Any, ...], xb: Any) -> Any:
    s = L.vmap(_scalar(L, f), in_axes=_in_axes(args))
    return L.grad(lambda xb, *r: L.np.sum(s(xb, *r)))(xb, *args[1:])


Transform = Callable[[Lib, Callable[..., Any], tuple[Any, ...], Any, Any], Any]

TRANSFORMS: dict[str, tuple[bool, Transform]] = {
    # name: (needs reverse mode, apply(L, f, args, batched first arg, tangent of it))
    "value": (False, lambda L, f, a, xb, t: f(*a)),
    "jit": (False, lambda L, f, a, xb, t: L.jit(f)(*a)),
    "jvp": (False, lambda L, f, a, xb, t: _jvp(L, f, a, t)),
    "jit_jvp": (False, lambda L, f, a, xb, t: L.jit(lambda a, t: _jvp(L, f, a, t))(a, t)),
    "vmap": (False, lambda L, f, a, xb, t: _vmap(L, f, a, xb)),
    "jit_vmap": (False, lambda L, f, a, xb, t: L.jit(lambda a, xb: _vmap(L, f, a, xb))(a, xb)),
    "jacfwd": (False, lambda L, f, a, xb, t: L.jacfwd(_floats(f))(*a)),
    "vmap_jacfwd": (False, lambda L, f, a, xb, t: _vmap(L, L.jacfwd(_scalar(L, f)), a, xb)),
    "grad": (True, lambda L, f, a, xb, t: L.grad(_scalar(L, f))(*a)),
    "jit_grad": (True, lambda L, f, a, xb, t: L.jit(L.grad(_scalar(L, f)))(*a)),
    "jacrev": (True, lambda L, f, a, xb, t: L.jacrev(_floats(f))(*a)),
    "vmap_grad": (True, lambda L, f, a, xb, t: _vmap(L, L.grad(_scalar(L, f)), a, xb)),
    "jit_vmap_grad": (True, lambda L, f, a, xb, t: L.jit(
        lambda a, xb: _vmap(L, L.grad(_scalar(L, f)), a, xb))(a, xb)),
    "grad_vmap_sum": (True, lambda L, f, a, xb, t: _grad_vmap_sum(L, f, a, xb)),
}


def run(L: Lib, p: Prog, transform: str) -> Any:
    apply = TRANSFORMS[transform][1]
    f = p.make(L)
    inputs = (p.args, _batched(p.args[0]), _tangent(p.args[0]))
    if L is JAX:  # the oracle as one compiled program: JAX's eager dispatch is slow
        return jax.jit(lambda a, xb, t: apply(L, f, a, xb, t))(*inputs)
    return apply(L, f, *inputs)


# Run by default: each construct under the transformations that exercise its rules
# (the full matrix is marked slow).
DEFAULT = {
    "cond_bool_pred": {"grad", "vmap", "jit_vmap_grad"},
    "cond_operandless_closure": {"grad"},
    "cond_pytree": {"value", "jacrev"},
    "switch_three_branches": {"vmap_grad"},
    "switch_index_above_range": {"value"},
    "while_data_dependent": {"jvp", "vmap", "jacfwd"},
    "while_counter_pred": {"vmap"},
    "fori_static": {"grad"},
    "fori_dynamic": {"jit_jvp", "vmap"},
    "scan_basic": {"grad", "vmap", "jvp"},
    "scan_over_first_argument": {"grad_vmap_sum"},
    "scan_reverse_unroll": {"grad"},
    "scan_pytrees": {"grad", "vmap"},
    "scan_xs_none": {"jacrev"},
    "lax_map": {"vmap_grad"},
    "nested_fori_cond_scan": {"grad", "vmap_grad", "jit_grad"},
    "nested_scan_in_scan": {"grad"},
    "nested_while_cond_scan": {"jvp", "vmap"},
}
_PARAMS = [pytest.param(p, t, id=f"{p.name}-{t}",
                        marks=[] if t in DEFAULT.get(p.name, ()) else [pytest.mark.slow])
           for p in PROGS for t, (rev, _) in TRANSFORMS.items() if p.reverse or not rev]


@pytest.mark.parametrize("p, transform", _PARAMS)
def test_matches_jax(p: Prog, transform: str) -> None:
    assert_close(run(PLAIT, p, transform), run(JAX, p, transform))


@pytest.mark.parametrize("name", ["fori_static", *[pytest.param(n, marks=pytest.mark.slow) for n in
                                                   ("cond_bool_pred", "scan_basic",
                                                    "nested_fori_cond_scan")]])
def test_hessian_matches_jax(name: str) -> None:
    p = next(q for q in PROGS if q.name == name)
    want = JAX.hessian(_scalar(JAX, p.make(JAX)))(*p.args)
    got = PLAIT.hessian(_scalar(PLAIT, p.make(PLAIT)))(*p.args)
    assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_grad_matches_finite_differences() -> None:
    # An oracle independent of JAX: central differences in float64.
    p = next(q for q in PROGS if q.name == "nested_fori_cond_scan")
    s = _scalar(PLAIT, p.make(PLAIT))
    x, xs = p.args
    g = np.asarray(PLAIT.grad(s)(x, xs))
    eps = 1e-3
    for k in range(x.size):
        d = np.zeros_like(x)
        d[k] = eps
        fd = (float(s(x + d, xs)) - float(s(x - d, xs))) / (2 * eps)
        np.testing.assert_allclose(g[k], fd, rtol=2e-2, atol=2e-2)


# -- Specific behaviors ---------------------------------------------------------------

def test_switch_clamps_the_index_on_both_sides() -> None:
    def f(L: Lib) -> Callable[..., Any]:
        return lambda i, x: L.lax.switch(i, [lambda a: a + 1.0, lambda a: a * 3.0, lambda a: -a], x)
    oracle, staged = jax.jit(f(JAX)), plait.jit(f(PLAIT))
    for index in (-7, -1, 0, 1, 2, 3, 100):
        want = oracle(np.int32(index), X3)
        assert_close(staged(np.int32(index), X3), want)  # traced index
        assert_close(f(PLAIT)(index, X3), want)  # Python int index


@pytest.mark.parametrize("batch_size", [None, 0, 2, 7, 10])
def test_map_batch_size_matches_jax(batch_size: int | None) -> None:
    # Batches of vmap(f) in a scan, the remainder after: same values and gradients.
    def f(L: Lib) -> Callable[[Any], Any]:
        def g(r):
            return {"s": L.np.sin(r) * r[0], "n": L.np.sum(r * r)}
        return lambda xs: L.lax.map(g, xs, batch_size=batch_size)
    xs = np.linspace(-1.0, 1.0, 14, dtype=np.float32).reshape(7, 2)
    assert_close(f(PLAIT)(xs), f(JAX)(xs))
    def s(L: Lib) -> Callable[[Any], Any]:
        return lambda xs: L.np.sum(f(L)(xs)["s"]) + L.np.sum(f(L)(xs)["n"])
    assert_close(plait.grad(s(PLAIT))(xs), jax.grad(s(JAX))(xs))


def test_cond_with_a_batched_predicate_becomes_select_n() -> None:
    def f(L: Lib) -> Callable[..., Any]:
        return L.vmap(lambda x: L.lax.cond(x[0] > 0, L.np.sin, L.np.cos, x))
    xb = _batched(X3)
    for L in (JAX, PLAIT):
        text = str(L.make_jaxpr(f(L))(xb))
        assert "select_n" in text and "cond[" not in text
    assert_close(f(PLAIT)(xb), f(JAX)(xb))
    # An unbatched predicate keeps the cond.
    for L in (JAX, PLAIT):
        lib = L
        g = L.vmap(lambda x, p, lib=lib: lib.lax.cond(p > 0, lib.np.sin, lib.np.cos, x),
                   in_axes=(0, None))
        assert "cond[" in str(L.make_jaxpr(g)(xb, 1.0))


def test_switch_with_a_batched_index_selects_per_lane() -> None:
    def f(L: Lib) -> Any:
        return L.vmap(lambda i, x: L.lax.switch(i, [L.np.sin, L.np.cos, lambda a: a * 2.0], x))
    idx = np.array([-3, 0, 1, 2, 5], np.int32)
    xs = np.stack([X3] * 5) + np.arange(5, dtype=np.float32)[:, None]
    assert_close(f(PLAIT)(idx, xs), f(JAX)(idx, xs))
    assert "select_n" in str(plait.make_jaxpr(f(PLAIT))(idx, xs))


def test_while_with_a_batched_predicate_runs_lanes_to_their_own_ends() -> None:
    def f(L: Lib) -> Any:
        def loop(x: Any) -> Any:
            return L.lax.while_loop(lambda c: c[1] < x, lambda c: (c[0] * 2.0, c[1] + 1.0),
                                    (1.0 + 0.0 * x, 0.0 * x))
        return L.vmap(loop)
    bounds = f32(0.0, 1.0, 3.0, 5.5, 2.0)
    got, want = f(PLAIT)(bounds), f(JAX)(bounds)
    assert_close(got, want)
    np.testing.assert_array_equal(np.asarray(got[0]), [1.0, 2.0, 8.0, 64.0, 4.0])


JAX_WHILE_GRAD_MESSAGE = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static start/stop.")


@pytest.mark.parametrize("how", ["while_loop", "fori_loop_traced_bound", "vjp", "jacrev"])
def test_reverse_mode_through_while_is_a_clear_error(how: str) -> None:
    def make(L: Lib) -> Callable[[], Any]:
        def f(x):
            return L.lax.while_loop(lambda c: L.np.all(c < 10.0), lambda c: c * 2.0, x)
        fori = L.jit(lambda x, n: L.lax.fori_loop(0, n, lambda i, c: c * 2.0, x))
        return {"while_loop": lambda: L.grad(f)(1.0),
                "fori_loop_traced_bound": lambda: L.grad(fori)(1.0, 3),
                "vjp": lambda: L.vjp(f, 1.0)[1](1.0),
                "jacrev": lambda: L.jacrev(f)(X3)}[how]
    with pytest.raises(ValueError) as theirs:
        make(JAX)()
    with pytest.raises(TransformError) as ours:
        make(PLAIT)()
    assert isinstance(ours.value, ValueError)
    assert str(theirs.value) == JAX_WHILE_GRAD_MESSAGE
    assert str(ours.value) == JAX_WHILE_GRAD_MESSAGE


def _scan_of_while(L: Lib) -> Callable[[Any], Any]:
    # The while's body reads a const whose tangent is unknown to the known half.
    def f(a: Any) -> Any:
        def body(c: Any, _: Any) -> Any:
            c = L.lax.while_loop(lambda s: s[1] < 3,
                                 lambda s: (s[0] * L.np.sin(a) + 0.1, s[1] + 1), (c, 0))[0]
            return c, c
        c, ys = L.lax.scan(body, a, None, length=3)
        return c + ys.sum()
    return f


def test_while_inside_scan_forward_mode_and_reverse_mode_error_as_jax() -> None:
    # The known loop of the split while once kept every body const, the unknown
    # tangent among them (a KeyError in partial evaluation).
    f, g = _scan_of_while(PLAIT), _scan_of_while(JAX)
    assert_close(plait.linearize(f, 0.5)[1](1.0), jax.linearize(g, 0.5)[1](1.0))
    assert_close(plait.jacfwd(plait.jacfwd(f))(0.5), jax.jacfwd(jax.jacfwd(g))(0.5))
    with pytest.raises(TransformError, match=re.escape(JAX_WHILE_GRAD_MESSAGE)):
        plait.grad(f)(0.5)
    with pytest.raises(ValueError, match=re.escape(JAX_WHILE_GRAD_MESSAGE)):
        jax.grad(g)(0.5)


def test_jit_of_jvp_with_integer_outputs() -> None:
    def f(L: Lib) -> Callable[[Any], Any]:
        def g(x):
            return x * 2.0, x.astype(L.np.int32), L.np.int32(3)
        return L.jit(lambda x: L.jvp(g, (x,), (x,)))
    assert_close(f(PLAIT)(X3), f(JAX)(X3))


def test_forward_mode_through_while_matches_jax() -> None:
    def f(L: Lib) -> Callable[[Any], Any]:
        def body(c):
            return c * 1.5 + 1.0 + 0.1 * L.np.sin(c)
        return lambda x: L.lax.while_loop(lambda c: L.np.all(c < 10.0), body, x)
    assert_close(plait.jvp(f(PLAIT), (1.0,), (1.0,)), jax.jvp(f(JAX), (1.0,), (1.0,)))
    assert_close(plait.jacfwd(f(PLAIT))(X3), jax.jacfwd(f(JAX))(X3))


# -- Type errors: at least as informative as JAX's ---------------------------------

ERRORS: dict[str, Callable[[Lib], Any]] = {
    "cond_dtype": lambda L: L.lax.cond(True, lambda x: x, lambda x: x.astype(L.np.int32), X3),
    "cond_shape": lambda L: L.lax.cond(True, lambda x: x, lambda x: x[:2], X3),
    "cond_structure": lambda L: L.lax.cond(True, lambda x: (x, x), lambda x: x, X3),
    "cond_second_output": lambda L: L.lax.cond(True, lambda x: (x, x), lambda x: (x, x[0]), X3),
    "switch_dtype": lambda L: L.lax.switch(1, [lambda x: x, lambda x: x,
                                               lambda x: x.astype(L.np.int32)], X3),
    "while_dtype": lambda L: L.lax.while_loop(lambda c: c[0] < 3,
                                              lambda c: (c * 2).astype(L.np.int32), X3),
    "while_shape": lambda L: L.lax.while_loop(lambda c: c[0] < 3, lambda c: c[:2], X3),
    "while_structure": lambda L: L.lax.while_loop(lambda c: c[0][0] < 3, lambda c: c[0], (X3, X3)),
    "while_pred": lambda L: L.lax.while_loop(lambda c: c, lambda c: c, X3),
    "scan_carry_dtype": lambda L: L.lax.scan(lambda c, a: (c.astype(L.np.int32), a), X3, XS),
    "scan_carry_structure": lambda L: L.lax.scan(lambda c, a: ((c, c), a), X3, XS),
    "fori_carry_dtype": lambda L: L.lax.fori_loop(0, 3, lambda i, c: c.astype(L.np.int32), X3),
    "scan_lengths": lambda L: L.lax.scan(lambda c, a: (c, a), X3, (XS, X3)),
    "cond_vector_pred": lambda L: L.lax.cond(X3 > 0, lambda x: x, lambda x: x, X3),
    "fori_bound_types": lambda L: L.lax.fori_loop(np.int32(0), np.int16(3), lambda i, c: c, X3),
    "fori_unroll_dynamic": lambda L: L.jit(
        lambda n: L.lax.fori_loop(0, n, lambda i, c: c, X3, unroll=2))(3),
}

# What a reader needs from the message: the parts involved and the mismatching types.
MUST_MENTION = {
    "cond_dtype": ["true_fun", "false_fun", "float32[3]", "int32[3]", "dtype"],
    "cond_shape": ["true_fun", "false_fun", "float32[3]", "float32[2]", "shape"],
    "cond_structure": ["true_fun", "false_fun", "structure"],
    "cond_second_output": ["true_fun", "false_fun", "[1]", "float32[3]", "float32[]", "shape"],
    "switch_dtype": ["branches[0]", "branches[2]", "float32[3]", "int32[3]", "dtype"],
    "while_dtype": ["carry", "float32[3]", "int32[3]", "dtype"],
    "while_shape": ["carry", "float32[3]", "float32[2]", "shape"],
    "while_structure": ["carry", "structure"],
    "while_pred": ["cond_fun", "boolean scalar", "float32[3]"],
    "scan_carry_dtype": ["carry", "float32[3]", "int32[3]", "dtype"],
    "scan_carry_structure": ["carry", "structure"],
    "fori_carry_dtype": ["carry", "float32[3]", "int32[3]", "dtype"],
    "scan_lengths": ["leading axis", "4", "3"],
    "cond_vector_pred": ["scalar", "(3,)"],
    "fori_bound_types": ["equal types", "int32", "int16"],
    "fori_unroll_dynamic": ["unroll", "statically known"],
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_mismatch_errors_name_the_mismatch(name: str) -> None:
    with pytest.raises(Exception) as theirs:
        ERRORS[name](JAX)
    with pytest.raises(Exception) as ours:
        ERRORS[name](PLAIT)
    assert isinstance(ours.value, type(theirs.value))
    msg = str(ours.value)
    for part in MUST_MENTION[name]:
        assert part in msg, f"{part!r} missing from: {msg}"


# -- Lowering: loops stay loops -------------------------------------------------------

def test_jit_of_a_long_fori_loop_is_one_while_whose_size_does_not_grow() -> None:
    def make(n: int) -> Callable[[Any], Any]:
        return lambda x: plax.fori_loop(0, n, lambda i, c: c * 0.999 + 0.001 * i, x)
    texts = {n: plait.jit(make(n)).lower(X3).as_text() for n in (10, 10_000)}
    for text in texts.values():
        assert len(re.findall(r"\bstablehlo\.while\b", text)) == 1
    # Only the trip count's digits differ.
    assert len(texts[10_000]) - len(texts[10]) == len("10000") - len("10")
    assert_close(plait.jit(make(10_000))(X3),
                 jax.jit(lambda x: jax.lax.fori_loop(0, 10_000, lambda i, c: c * 0.999 + 0.001 * i,
                                                     x))(X3), rtol=1e-4)


def test_cond_takes_operand_keyword_and_the_five_argument_form() -> None:
    def run(lib: Any, x: Any) -> Any:
        a = lib.lax.cond(x > 0, lambda v: v * 2.0, lambda v: v - 1.0, operand=x)
        b = lib.lax.cond(x > 0, (x, 3.0), lambda t: t[0] * t[1], x, lambda v: -v)
        return lib.jit(lambda y: lib.lax.cond(y < 0, y, jnp_abs(lib), 2 * y, lambda z: z))(x), a, b

    def jnp_abs(lib: Any) -> Callable[[Any], Any]:
        return lambda z: lib.numpy.abs(z)

    for x in (1.5, -2.0):
        assert_close(run(plait, x), run(jax, x))
    for lib in (plait, jax):
        with pytest.raises(TypeError, match="callable"):
            lib.lax.cond(True, 1.0, 2.0)
        with pytest.raises(TypeError, match="operand"):
            lib.lax.cond(True, lambda v: v, lambda v: v, 1.0, operand=2.0)
        with pytest.raises(TypeError, match="cond predicate is None"):
            lib.lax.cond(None, lambda: 1.0, lambda: 2.0)


def test_cond_lowers_to_case_and_while_to_while() -> None:
    text = plait.jit(lambda x: plax.cond(x[0] > 0, pjnp.sin, pjnp.cos, x)).lower(X3).as_text()
    assert "stablehlo.case" in text
    text = plait.jit(lambda x: plax.while_loop(lambda c: c[0] < 9.0, lambda c: c * 2.0, x)
                     ).lower(X3).as_text()
    assert len(re.findall(r"\bstablehlo\.while\b", text)) == 1


@pytest.fixture
def x64() -> Iterator[None]:
    previous = plait.config.read("enable_x64")
    plait.config.update("enable_x64", True)
    try:
        yield
    finally:
        plait.config.update("enable_x64", previous)


@pytest.mark.parametrize("loop", ["while_loop", "fori_loop", "scan"])
def test_weak_initial_carry_takes_the_body_dtype_under_x64(loop: str, x64: None) -> None:
    # A Python 0. carrying float32 sums: JAX retypes the carry to float32 and retraces.
    x32 = np.ones(2, np.float32)

    def run(L: Any) -> Any:
        if loop == "while_loop":
            return L.lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] + x32[0]),
                                    (0, 0.0))
        if loop == "fori_loop":
            return L.lax.fori_loop(0, 3, lambda i, s: s + x32[0], 0.0)
        return L.lax.scan(lambda c, _: (c + x32[0], None), 0.0, None, length=3)[0]
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        want = run(jax)
    finally:
        jax.config.update("jax_enable_x64", previous)
    got = run(plait)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert (g.dtype, g.weak_type) == (w.dtype, w.weak_type)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("mode", ["eager", "jit", "grad", "vmap"])
def test_scan_of_zero_iterations(mode: str) -> None:
    # The carry passes through and the stacked outputs are empty, as in JAX (plait's
    # lowering once sliced the empty inputs and was refused by StableHLO).
    def run(L: Lib) -> Any:
        def f(c: Any, xs: Any) -> Any:
            return L.lax.scan(lambda c, x: (c * 2.0 + x.sum(), (c * x, x > 0)), c, xs)

        xs = np.zeros((0, 3), np.float32)
        c = np.float32(1.5)
        if mode == "eager":
            return f(c, xs)
        if mode == "jit":
            return L.jit(f)(c, xs)
        if mode == "grad":
            return L.grad(lambda c: f(c, xs)[0])(c)
        return L.vmap(f, in_axes=(0, 1))(np.ones(2, np.float32), np.zeros((0, 2, 3), np.float32))

    assert_close(run(PLAIT), run(JAX))


def test_linearize_of_while_whose_body_loops() -> None:
    # The known half of the linearized while keeps only the primal carries of the
    # inner scan: DCE drops a scan carry nothing kept reads (it once kept them all, and
    # the known loop read the tangent it no longer had).
    def run(L: Lib, module: Any) -> Any:
        def f(x: Any) -> Any:
            def body(s: Any) -> Any:
                i, y = s
                y = L.lax.fori_loop(0, 3, lambda j, v: v * 0.9 + L.np.sin(v), y)
                return i + 1, y
            return L.lax.while_loop(lambda s: s[0] < 4, body, (0, x))[1].sum()

        x = np.array([1.0, -0.5, 2.0], np.float32)
        return L.jvp(f, (x,), (x,)), module.linearize(f, x)[1](x)

    assert_close(run(PLAIT, plait), run(JAX, jax))


def test_dce_drops_scan_carries_no_output_reads() -> None:
    def run(L: Lib) -> Any:
        def f(x: Any) -> Any:
            y, z = x * 3.0, x + 1.0  # a const and a carry computed before the loop

            def step(c: Any, _: Any) -> Any:
                n, b, a = c  # (the dropped carries first)
                return (n + 1, b + a, a * y), None
            return L.lax.scan(step, (0, x, z), None, length=4)[0][2]
        return f

    jaxpr = plait.make_jaxpr(run(PLAIT))(np.float32(1.0))
    (scan_eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scan"]
    assert scan_eqn.params["num_carry"] == 3  # make_jaxpr keeps what the user wrote
    pruned, _ = dce_jaxpr(jaxpr.jaxpr)
    check_jaxpr(pruned)
    (scan_eqn,) = [e for e in pruned.eqns if e.primitive.name == "scan"]
    assert scan_eqn.params["num_carry"] == 1 and scan_eqn.params["num_consts"] == 1
    assert_close(plait.jit(run(PLAIT))(np.float32(1.5)), jax.jit(run(JAX))(np.float32(1.5)))


@pytest.mark.parametrize("L", [plait, jax], ids=["plait", "jax"])
def test_a_function_given_for_several_branches_is_traced_once(L: Any) -> None:
    """haiku's stateful cond counts how often its branches are traced, against JAX."""
    calls = []

    def f(x: Any) -> Any:
        calls.append(x)
        return x ** 2

    L.lax.cond(False, f, f, 0)
    assert len(calls) == 1
    calls.clear()
    assert float(L.lax.switch(1, [f, f, lambda x: x + 1.0], 3.0)) == 9.0 and len(calls) == 1
    assert float(L.jit(lambda p: L.lax.cond(p, f, f, 2.0))(True)) == 4.0


def _passthrough(lib: Any) -> tuple[str, Any]:
    def f(p: Any, x: Any, y: Any) -> Any:
        return lib.lax.cond(p, lambda a, b: (a, b + 1), lambda a, b: (a, b * 2), x, y)
    batched = lib.vmap(f, in_axes=(0, None, 0), out_axes=(None, 0))(
        np.array([True, False]), np.float32(1.0), np.array([2.0, 3.0], np.float32))
    return str(lib.make_jaxpr(f)(True, 1.0, 2.0)), batched


def test_an_operand_every_branch_returns_is_passed_on_as_in_jax() -> None:
    # (flax's nnx.cond under nnx.vmap: a variable not mapped must stay unmapped)
    ours, theirs = _passthrough(plait), _passthrough(jax)
    assert ours[0] == theirs[0]
    for o, t in zip(ours[1], theirs[1]):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))
    out = plait.lax.cond(True, lambda a: a, lambda a: a, 1.0)
    assert repr(out) == repr(jax.lax.cond(True, lambda a: a, lambda a: a, 1.0))

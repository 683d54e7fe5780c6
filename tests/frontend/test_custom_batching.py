"""``custom_batching.custom_vmap`` and ``sequential_vmap`` against JAX 0.10.2.

Each program is written once against a namespace (``L`` for numpy/jit/vmap...,
``CB`` for the ``custom_batching`` module) and run on plait and on JAX; results,
the rules' calls (axis size, batching pattern) and errors are compared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import hypothesis.strategies as st
import jax
import jax.custom_batching
import numpy as np
import pytest
from hypothesis import given, settings

import plait
import plait.custom_batching
from plait.errors import TransformError
from plait.ir import check_jaxpr, eval_jaxpr, parse_jaxpr
from tests.frontend.jax_oracle import JAX, PLAIT, Lib, assert_close, both_x64, f32, raised

BOTH = [(JAX, jax.custom_batching), (PLAIT, plait.custom_batching)]
IDS = ["jax", "plait"]

XS = f32(0.3, -1.2, 2.0)
YS = f32(1.5, 0.5, -2.0)


def both(program: Callable[[Lib, Any], Any]) -> None:
    """Run ``program`` on JAX and on plait and compare the results."""
    want = program(JAX, jax.custom_batching)
    got = program(PLAIT, plait.custom_batching)
    assert_close(got, want)


@pytest.fixture
def x64() -> Iterator[None]:
    with both_x64():
        yield


# -- functions -----------------------------------------------------------------------

def sin_times(L: Lib, CB: Any, log: list[Any] | None = None) -> Any:
    """``sin(x) * y``, whose vmap rule computes ``cos(x) * y`` instead (so it shows)."""
    @CB.custom_vmap
    def f(x, y):
        return L.np.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        if log is not None:
            log.append((axis_size, in_batched))
        xs = xs if in_batched[0] else L.np.broadcast_to(L.np.asarray(xs),
                                                        (axis_size,) + L.np.shape(xs))
        ys = ys if in_batched[1] else L.np.broadcast_to(L.np.asarray(ys),
                                                        (axis_size,) + L.np.shape(ys))
        return L.np.cos(xs) * ys, True
    return f


def tree_fun(L: Lib, CB: Any, log: list[Any] | None = None) -> Any:
    """Pytrees in and out; the rule leaves one output unbatched."""
    @CB.custom_vmap
    def f(d, z):
        return {"s": d["a"] + d["b"] * z, "t": (L.np.sum(z), z * 2.0)}

    @f.def_vmap
    def rule(axis_size, in_batched, d, z):
        if log is not None:
            log.append((axis_size, in_batched))
        a = d["a"] if in_batched[0]["a"] else L.np.broadcast_to(d["a"], (axis_size,) + d["a"].shape)
        s = a - d["b"] * z if in_batched[0]["b"] or in_batched[1] else a - d["b"] * z
        return ({"s": s, "t": (L.np.sum(z) * 10.0, z * 3.0)},
                {"s": True, "t": (False, in_batched[1])})
    return f


# -- vmap uses the rule ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
def test_vmap_uses_the_rule(dtype: Any) -> None:
    def program(L: Lib, CB: Any) -> Any:
        @CB.custom_vmap
        def f(x, y):
            return x + y

        @f.def_vmap
        def rule(axis_size, in_batched, xs, ys):
            assert all(in_batched)
            assert xs.shape[0] == axis_size and ys.shape[0] == axis_size
            return xs * ys, True
        xs = np.arange(4).astype(dtype)
        return L.vmap(f)(xs, xs + 1), f(xs, xs), L.jit(L.vmap(f))(xs, xs)
    both(program)


def test_vmap_float64(x64: None) -> None:
    def program(L: Lib, CB: Any) -> Any:
        f = sin_times(L, CB)
        return L.vmap(f)(XS.astype(np.float64), YS.astype(np.float64)), f(1.0, 2.0)
    both(program)


@pytest.mark.parametrize("in_axes,args", [
    ((0, 0), (XS, YS)),
    ((0, None), (XS, np.float32(2.0))),
    ((None, 0), (np.float32(0.5), YS)),
    ((1, 0), (np.stack([XS, YS]), np.ones((3, 2), np.float32))),
    ((0, 1), (np.ones((2, 3), np.float32), np.ones((3, 2), np.float32))),
], ids=["both", "x", "y", "axis1", "y-axis1"])
def test_rule_sees_the_batching_pattern(in_axes: Any, args: Any) -> None:
    logs: dict[str, list[Any]] = {}

    def program(L: Lib, CB: Any) -> Any:
        log: list[Any] = []
        f = sin_times(L, CB, log)
        out = L.vmap(f, in_axes=in_axes)(*args)
        logs[L.vmap.__module__.split(".")[0]] = log
        return out
    both(program)
    assert logs["plait"] == logs["jax"]


def test_out_axes_and_jit_compositions() -> None:
    def program(L: Lib, CB: Any) -> Any:
        f = sin_times(L, CB)
        m = np.stack([XS, YS, XS])
        return (L.vmap(f, out_axes=1)(m, m),
                L.jit(L.vmap(f))(XS, YS),
                L.vmap(L.jit(f))(XS, YS),
                L.vmap(L.vmap(f))(m, m),
                L.vmap(L.vmap(f), in_axes=(0, None))(m, YS),
                L.vmap(lambda x, y: f(x, y) + f(y, x))(XS, YS))
    both(program)


def test_outside_vmap_the_function_runs() -> None:
    def program(L: Lib, CB: Any) -> Any:
        f = sin_times(L, CB)
        return f(XS, YS), L.jit(f)(XS, YS), f(1.0, 2.0), f(x=XS, y=YS)
    both(program)


def test_pytrees_in_and_out() -> None:
    logs: dict[str, list[Any]] = {}

    def program(L: Lib, CB: Any) -> Any:
        log: list[Any] = []
        f = tree_fun(L, CB, log)
        d: dict[str, Any] = {"a": np.ones((3, 2), np.float32), "b": np.float32(2.0)}
        z = np.arange(6, dtype=np.float32).reshape(3, 2)
        outs = (L.vmap(f, in_axes=({"a": 0, "b": None}, 0))(d, z),
                L.vmap(f, in_axes=({"a": 0, "b": None}, None))(d, z[0]),
                f({"a": d["a"][0], "b": d["b"]}, z[0]))
        logs[L.vmap.__module__.split(".")[0]] = log
        return outs
    both(program)
    assert logs["plait"] == logs["jax"]


def test_sequential_vmap() -> None:
    def program(L: Lib, CB: Any) -> Any:
        @CB.sequential_vmap
        def f(x, y):
            return {"a": x * 2.0, "b": L.np.sum(y) * x}
        xs = np.arange(3, dtype=np.float32)
        ys = np.ones((3, 2), np.float32)
        return (L.vmap(f)(xs, ys), L.vmap(f, in_axes=(0, None))(xs, ys[0]),
                L.jit(L.vmap(L.vmap(f)))(np.ones((2, 3), np.float32), np.ones((2, 3, 4),
                                                                             np.float32)),
                L.jvp(L.vmap(f), (xs, ys), (xs, ys)), f(1.0, ys[0]))
    both(program)


def test_sequential_vmap_loops() -> None:
    for L, CB in BOTH:
        @CB.sequential_vmap
        def f(x):
            return x + 1
        text = str(L.make_jaxpr(L.vmap(f))(XS))
        assert "scan" in text and "custom_vmap_call" in text


def test_sequential_vmap_of_a_host_callback() -> None:
    # The use case: a function that cannot batch (pure_callback without a vmap_method).
    def program(L: Lib, CB: Any) -> Any:
        cb = plait.pure_callback if L is PLAIT else jax.pure_callback

        @CB.sequential_vmap
        def f(x):
            return cb(lambda v: np.asarray(np.sort(v) * 2), jax.ShapeDtypeStruct(
                (3,), np.float32), x)
        return L.vmap(f)(np.stack([XS, YS]))
    both(program)


# -- constants and closures --------------------------------------------------------

def test_closed_over_constants() -> None:
    c = f32(1.0, 2.0, 3.0)

    def program(L: Lib, CB: Any) -> Any:
        @CB.sequential_vmap
        def g(x):
            return x * c

        @CB.custom_vmap
        def h(x):
            return x + 1.0

        @h.def_vmap
        def h_rule(n, b, xs):
            # A constant the rule itself creates, and a call of the function.
            return h(xs) + np.arange(xs.shape[-1], dtype=np.float32), True
        m = np.ones((4, 3), np.float32)
        return (L.vmap(g)(m), L.jit(lambda z: L.vmap(CB.sequential_vmap(lambda x: x * z))(m))(c),
                L.vmap(h)(m), L.jit(L.vmap(h))(m))
    both(program)


def test_a_large_constant_made_by_the_rule_is_refused() -> None:
    @plait.custom_batching.custom_vmap
    def f(x):
        return x

    f.def_vmap(lambda n, b, xs: (xs + np.linspace(0.0, 1.0, 1 << 15, dtype=np.float32), True))
    e = raised(lambda: plait.vmap(f)(np.ones((2, 1 << 15), np.float32)))
    assert isinstance(e, TransformError) and "pass a larger array" in str(e)


def test_a_value_batched_by_an_outer_vmap_in_the_closure_is_refused() -> None:
    # JAX fails with a bare AssertionError.
    def g(x: Any, y: Any) -> Any:
        @plait.custom_batching.custom_vmap
        def f(a: Any) -> Any:
            return a * x
        f.def_vmap(lambda n, b, a: (a * x, True))
        return f(y)
    e = raised(lambda: plait.vmap(g)(XS, YS))
    assert isinstance(e, TransformError) and "closes over a value" in str(e)
    assert_close(plait.vmap(g, (None, 0))(np.float32(2.0), YS),
                 jax.vmap(lambda x, y: x * y, (None, 0))(np.float32(2.0), YS))


def test_a_rule_closing_over_a_tracer_is_refused() -> None:
    # A difference from JAX, which runs rules during its trace.
    def g(x: Any, z: Any) -> Any:
        @plait.custom_batching.custom_vmap
        def f(a: Any) -> Any:
            return a
        f.def_vmap(lambda n, b, a: (a * z, True))
        return plait.vmap(f)(x)
    e = raised(lambda: plait.jit(g)(XS, np.float32(2.0)))
    assert isinstance(e, TransformError) and "traced value" in str(e)


# -- differentiation -------------------------------------------------------------------

def test_jvp_differentiates_the_function() -> None:
    def program(L: Lib, CB: Any) -> Any:
        f = sin_times(L, CB)
        return (L.jvp(f, (XS, YS), (YS, XS)), L.jvp(f, (1.0, 2.0), (1.0, 0.0)),
                L.jit(lambda x, y: L.jvp(f, (x, y), (y, x)))(XS, YS))
    both(program)


def test_vmap_of_jvp_differentiates_the_rule() -> None:
    def program(L: Lib, CB: Any) -> Any:
        f = sin_times(L, CB)
        return (L.vmap(lambda x, y: L.jvp(f, (x, y), (x, y)))(XS, YS),
                L.jvp(L.vmap(f), (XS, YS), (YS, XS)),
                L.vmap(lambda x, y: L.jvp(f, (x, y), (y, x)))(XS, YS))
    both(program)


@pytest.mark.parametrize("case", ["mixed", "tangent_only", "primal_only"])
def test_vmap_of_jvp_with_partly_batched_pairs(case: str) -> None:
    # Where only one of a primal and its tangent is batched, JAX maps the JVP of the rule
    # over it (and the rule's own batched outputs gain a second mapped axis): the same.
    def program(L: Lib, CB: Any) -> Any:
        f = sin_times(L, CB)
        if case == "mixed":
            return L.vmap(lambda x, y: L.jvp(f, (x, y), (x, 1.0)))(XS, YS)
        if case == "tangent_only":
            return L.vmap(lambda t: L.jvp(f, (1.0, 2.0), (t, 1.0)))(XS)
        return L.vmap(lambda p: L.jvp(f, (p, 2.0), (1.0, 1.0)))(XS)
    both(program)


def test_jvp_with_integer_inputs_and_pytrees() -> None:
    def program(L: Lib, CB: Any) -> Any:
        @CB.custom_vmap
        def f(x, n):
            return {"y": x * n, "n": n + 1}

        @f.def_vmap
        def rule(axis_size, in_batched, xs, ns):
            return ({"y": L.np.asarray(xs) * ns + 1.0, "n": L.np.asarray(ns) + 1},
                    {"y": True, "n": in_batched[1]})
        ns = np.arange(3, dtype=np.int32)
        p, t = L.vmap(lambda x, n: L.jvp(lambda x: f(x, n)["y"], (x,), (x,)))(XS, ns)
        return p, t, L.vmap(f)(XS, ns)
    both(program)


@pytest.mark.parametrize("lib", BOTH, ids=IDS)
@pytest.mark.parametrize("how", ["grad", "vjp", "vmap_grad", "jacrev"])
def test_reverse_mode_is_refused(lib: tuple[Lib, Any], how: str) -> None:
    L, CB = lib
    f = sin_times(L, CB)
    run = {"grad": lambda: L.grad(f)(1.0, 2.0),
           "vjp": lambda: L.vjp(f, XS, YS),
           "vmap_grad": lambda: L.vmap(L.grad(f))(XS, YS),
           "jacrev": lambda: L.jacrev(f)(XS, YS)}[how]
    e = raised(run)
    assert isinstance(e, ValueError), e
    assert "Linearization failed to produce known values" in str(e)


def test_custom_vjp_around_custom_vmap() -> None:
    # The combination JAX documents for reverse mode.
    def program(L: Lib, CB: Any) -> Any:
        @CB.custom_vmap
        def f(x, y):
            return L.np.sin(x) * y

        @f.def_vmap
        def f_vmap_rule(axis_size, in_batched, xs, ys):
            return L.np.cos(xs) * ys, True
        f = L.custom_vjp(f)

        def f_fwd(x, y):
            return f(x, y), (L.np.cos(x), L.np.sin(x), y)

        def f_bwd(res, g):
            cos_x, sin_x, y = res
            return (cos_x * g * y, sin_x * g)
        f.defvjp(f_fwd, f_bwd)
        z, o = np.zeros(3, np.float32), np.ones(3, np.float32)
        return (L.vmap(f)(z, o), L.grad(f)(np.float32(0.3), np.float32(1.0)),
                L.vmap(L.grad(f))(XS, YS), L.jit(L.vmap(f))(XS, YS))
    both(program)


# -- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("name,out", [
    ("list_spec", lambda xs: (xs, [True])),
    ("none_spec", lambda xs: (xs, None)),
    ("tuple_out", lambda xs: ((xs, xs), (True, True))),
])
def test_rule_output_structure_errors(name: str, out: Callable[[Any], Any]) -> None:
    def error(L: Lib, CB: Any) -> BaseException:
        @CB.custom_vmap
        def f(x):
            return x * 2.0
        f.def_vmap(lambda n, b, xs: out(xs))
        return raised(lambda: L.vmap(f)(XS))
    want, got = error(JAX, jax.custom_batching), error(PLAIT, plait.custom_batching)
    assert type(want) is ValueError and type(got) is ValueError, (want, got)
    assert str(got) == str(want)


@pytest.mark.parametrize("lib", BOTH, ids=IDS)
@pytest.mark.parametrize("out", [lambda xs: xs, lambda xs: (xs, True, 1)],
                         ids=["single", "triple"])
def test_rule_must_return_a_pair(lib: tuple[Lib, Any], out: Callable[[Any], Any]) -> None:
    L, CB = lib

    @CB.custom_vmap
    def f(x):
        return x
    f.def_vmap(lambda n, b, xs: out(xs))
    e = raised(lambda: L.vmap(f)(np.ones((3, 2), np.float32)))
    assert isinstance(e, ValueError), e
    if L is PLAIT:
        assert "expected a pair (out, out_batched)" in str(e)


def test_rule_outputs_pass_through_as_in_jax() -> None:
    # JAX does not check the rule's output types: an unbatched output of the wrong
    # shape is broadcast, a dtype change kept, a truthy flag taken as batched.
    def program(L: Lib, CB: Any) -> Any:
        res = []
        for rule in [lambda n, b, xs: (xs, False), lambda n, b, xs: (xs.astype(np.int32), True),
                     lambda n, b, xs: (xs, 1), lambda n, b, xs: (xs[:, None], True)]:
            @CB.custom_vmap
            def f(x):
                return L.np.sin(x)
            f.def_vmap(rule)
            res.append(L.vmap(f)(XS))
        return res
    both(program)


@pytest.mark.parametrize("CB", [jax.custom_batching, plait.custom_batching], ids=IDS)
def test_missing_rule_and_bad_arguments(CB: Any) -> None:
    @CB.custom_vmap
    def h(x, y):
        return x

    e = raised(lambda: h(1.0, 2.0))
    assert type(e) is AttributeError
    assert str(e) == "No batching rule defined for custom_vmap function h using def_vmap."
    h.def_vmap(lambda n, b, x, y: (x, True))
    for bad in [lambda: h(1.0, 2.0, 3.0), lambda: h(1.0, z=2.0)]:
        e = raised(bad)
        assert type(e) is TypeError
        assert "could not be resolved to positional-only arguments" in str(e)
    assert h.__name__ == "h"


# -- IR ------------------------------------------------------------------------------------

def test_the_equation_in_the_ir() -> None:
    f = sin_times(PLAIT, plait.custom_batching)
    j = plait.make_jaxpr(f)(XS, YS)
    text = str(j)
    assert "custom_vmap_call[" in text and "rule=<function sin_times.<locals>.rule" in text
    check_jaxpr(j.jaxpr)
    assert j == plait.make_jaxpr(f)(XS, YS)  # equal traces, equal jaxprs
    np.testing.assert_allclose(eval_jaxpr(j.jaxpr, j.consts, XS, YS)[0], np.sin(XS) * YS,
                               rtol=1e-6)
    for jj in [plait.make_jaxpr(plait.vmap(f))(XS, YS),
               plait.make_jaxpr(lambda x, y: plait.jvp(f, (x, y), (y, x)))(XS, YS),
               plait.make_jaxpr(plait.vmap(lambda x, y: plait.jvp(f, (x, y), (y, x))))(XS, YS)]:
        check_jaxpr(jj.jaxpr)
    with pytest.raises(Exception, match="unexpected character"):
        parse_jaxpr(text)


# -- properties ------------------------------------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 4), shape=st.lists(st.integers(1, 3), max_size=2),
       batch_y=st.booleans())
def test_rule_result_matches_jax_for_any_shape(n: int, shape: list[int], batch_y: bool) -> None:
    rng = np.random.default_rng(n)
    xs = rng.normal(size=(n, *shape)).astype(np.float32)
    y = rng.normal(size=((n,) if batch_y else ()) + tuple(shape)).astype(np.float32)

    def program(L: Lib, CB: Any) -> Any:
        f = sin_times(L, CB)
        return L.vmap(f, in_axes=(0, 0 if batch_y else None))(xs, y)
    both(program)


def test_custom_vjp_over_custom_vmap_in_jax_documented_order() -> None:
    # custom_vjp reads def_vmap through to the custom_vmap it wraps, as in JAX.
    def make(L: Lib, cb: Any) -> Callable[[Any], Any]:
        @L.custom_vjp
        @cb.custom_vmap
        def f(x: Any) -> Any:
            return L.np.sin(x)

        @f.def_vmap
        def rule(axis_size: int, in_batched: Any, x: Any) -> Any:
            return L.np.sin(x) * 2.0, in_batched[0]
        f.defvjp(lambda x: (f(x), L.np.cos(x)), lambda c, g: (g * c,))
        return f
    xs = f32(0.0, 1.0, 2.0)
    for fn in (lambda L, f: L.vmap(f)(xs), lambda L, f: L.grad(f)(1.0)):
        assert_close(fn(PLAIT, make(PLAIT, plait.custom_batching)),
                     fn(JAX, make(JAX, jax.custom_batching)))

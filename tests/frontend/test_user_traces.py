"""Library-defined traces (subclasses of ``plait.core.Trace`` and ``Tracer``), against JAX
0.10.2: the same trace classes, written once over either library's API, see the same
primitives and give the same values, inside and around plait's transformations; Haiku's
``to_dot`` (a trace of its own) draws JAX's graph; misuse raises JAX's errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jax
import jax._src.core as jax_src_core
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jax.extend import core as jcore

import plait
import plait.core as plait_core
import plait.numpy as pjnp
from plait.errors import TracerBoolConversionError, UnexpectedTracerError
from plait.extend import core as pcore

X = np.array([0.5, -1.0, 2.0], np.float32)
Y = np.array([1.5, 0.25, -0.75], np.float32)

Api = SimpleNamespace


def _api(lib: str) -> Api:
    if lib == "jax":
        return Api(lib=jax, jnp=jjnp, lax=jax.lax, Trace=jax_src_core.Trace,
                   Tracer=jax_src_core.Tracer, take=jcore.take_current_trace,
                   set=jcore.set_current_trace, jaxpr_as_fun=jcore.jaxpr_as_fun)
    return Api(lib=plait, jnp=pjnp, lax=plait.lax, Trace=plait_core.Trace,
               Tracer=plait_core.Tracer, take=pcore.take_current_trace,
               set=pcore.set_current_trace, jaxpr_as_fun=pcore.jaxpr_as_fun)


APIS = {"jax": _api("jax"), "plait": _api("plait")}


def _log_classes(api: Api) -> tuple[type, type]:
    """A trace that records each primitive's name and computes under its parent."""
    class LogTracer(api.Tracer):  # type: ignore[misc, name-defined]  # (either library's)
        def __init__(self, trace: Any, val: Any) -> None:
            super().__init__(trace, api.lib.typeof(val))
            self.val = val

    class LogTrace(api.Trace):  # type: ignore[misc, name-defined]  # (either library's)
        def __init__(self, parent: Any, log: list[str]) -> None:
            super().__init__()
            self.parent, self.log = parent, log

        def lower(self, x: Any) -> Any:
            return x.val if isinstance(x, LogTracer) and x._trace is self else x

        def process_primitive(self, prim: Any, tracers: Any, params: Any) -> Any:
            inline = " inline" if str(prim) == "jit" and params["inline"] else ""
            self.log.append(str(prim) + inline)
            with api.set(self.parent):
                out = prim.bind(*[self.lower(t) for t in tracers], **params)
            if prim.multiple_results:
                return [LogTracer(self, o) for o in out]
            return LogTracer(self, out)

        def stage_value(self, val: Any) -> Any:  # (JAX's .at[] asks for it)
            return LogTracer(self, self.parent.stage_value(val))

        def process_custom_jvp_call(self, prim: Any, fun: Any, jvp: Any, tracers: Any, *,
                                    symbolic_zeros: bool) -> Any:
            self.log.append("custom_jvp")
            with api.set(self.parent):
                outs = fun.call_wrapped(*[self.lower(t) for t in tracers])
            return [LogTracer(self, o) for o in outs]

        def process_custom_vjp_call(self, prim: Any, fun: Any, fwd: Any, bwd: Any,
                                    tracers: Any, *, out_trees: Any,
                                    symbolic_zeros: bool) -> Any:
            self.log.append("custom_vjp")
            with api.set(self.parent):
                outs = fun.call_wrapped(*[self.lower(t) for t in tracers])
            return [LogTracer(self, o) for o in outs]

    return LogTrace, LogTracer


def _logged(api: Api, f: Callable[..., Any]) -> Callable[..., tuple[Any, list[str]]]:
    LogTrace, LogTracer = _log_classes(api)

    def g(*args: Any) -> tuple[Any, list[str]]:
        log: list[str] = []
        with api.take() as parent:
            trace = LogTrace(parent, log)
            with api.set(trace):
                out = f(*[LogTracer(trace, a) for a in args])
            return api.lib.tree_util.tree_map(trace.lower, out), log
    return g


def _programs(api: Api) -> dict[str, Callable[..., Any]]:
    lax = api.lax

    @api.lib.custom_jvp
    def softish(x: Any) -> Any:
        return lax.log1p(lax.exp(x))

    @softish.defjvp
    def softish_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return softish(x), lax.mul(t, lax.logistic(x))

    @api.lib.custom_vjp
    def clipped(x: Any) -> Any:
        return lax.sin(x)

    clipped.defvjp(lambda x: (lax.sin(x), x), lambda x, g: (lax.mul(g, lax.cos(x)),))
    return {
        "elementwise": lambda x, y: lax.add(lax.mul(lax.sin(x), y), lax.cos(y)),
        "jit": lambda x, y: api.lib.jit(lambda a, b: lax.sub(lax.mul(a, b), a))(x, y),
        "jit_inline": lambda x, y: api.lib.jit(lambda a: lax.exp(a), inline=True)(x),
        "fori_loop": lambda x, y: lax.fori_loop(0, 3, lambda i, c: lax.mul(c, x), y),
        "while_loop": lambda x, y: lax.while_loop(
            lambda c: lax.lt(c[0], 4), lambda c: (lax.add(c[0], 1), lax.mul(c[1], x)),
            (0, y))[1],
        "cond": lambda x, y: lax.cond(lax.gt(lax.reduce_max(x, (0,)), 0.0), lax.sin,
                                      lax.cos, y),
        "custom_jvp": lambda x, y: softish(lax.mul(x, y)),
        "custom_vjp": lambda x, y: clipped(lax.add(x, y)),
        "nested": lambda x, y: _logged(api, lambda a: lax.mul(lax.exp(a), y))(x)[0],
    }


@pytest.mark.parametrize("name", list(_programs(APIS["jax"])))
def test_a_trace_sees_jaxs_primitives_and_gives_jaxs_values(name: str) -> None:
    ours, our_log = _logged(APIS["plait"], _programs(APIS["plait"])[name])(X, Y)
    theirs, their_log = _logged(APIS["jax"], _programs(APIS["jax"])[name])(X, Y)
    assert our_log == their_log and our_log
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    assert isinstance(ours, plait.Array) and not isinstance(ours, plait_core.Tracer)


def _numpy_programs(api: Api) -> dict[str, Callable[..., Any]]:
    jnp = api.jnp
    return {
        "where": lambda x, y: jnp.where(x > 0, x * y, -y),
        "index": lambda x, y: x[1:] * y[0] + x[::-1][:2],
        "at": lambda x, y: x.at[1].set(y[2]).at[0].add(1.0),
        "reshape_dot": lambda x, y: jnp.dot(jnp.outer(x, y).reshape(9), jnp.tile(y, 3)),
        "reductions": lambda x, y: jnp.stack([jnp.mean(x), jnp.max(y), jnp.linalg.norm(x)]),
        "concatenate": lambda x, y: jnp.concatenate([x, jnp.sort(y), jnp.cumsum(x)]),
    }


@pytest.mark.parametrize("name", list(_numpy_programs(APIS["jax"])))
def test_numpy_functions_of_a_traces_values_give_jaxs(name: str) -> None:
    ours, our_log = _logged(APIS["plait"], _numpy_programs(APIS["plait"])[name])(X, Y)
    theirs, their_log = _logged(APIS["jax"], _numpy_programs(APIS["jax"])[name])(X, Y)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    # (JAX wraps some of these functions in a jit of their own, which its log names.)
    assert our_log and their_log


@pytest.mark.parametrize("where", ["jit", "grad", "vmap", "make_jaxpr"])
def test_a_trace_runs_under_transformations(where: str) -> None:
    def values(api: Api) -> Any:
        f = _logged(api, _programs(api)["elementwise"])
        lib = api.lib
        if where == "jit":
            return lib.jit(lambda x, y: f(x, y)[0])(X, Y)
        if where == "grad":
            return lib.grad(lambda x, y: api.jnp.sum(f(x, y)[0]), argnums=(0, 1))(X, Y)
        if where == "vmap":
            return lib.vmap(lambda x, y: f(x, y)[0])(np.stack([X, Y]), np.stack([Y, X]))
        return [e.primitive.name for e in lib.make_jaxpr(lambda x, y: f(x, y)[0])(X, Y).eqns]
    ours, theirs = values(APIS["plait"]), values(APIS["jax"])
    if where == "make_jaxpr":
        assert ours == theirs == ["sin", "mul", "cos", "add"]
    else:
        for a, b in zip(plait.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs),
                        strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


@pytest.mark.parametrize("where", ["grad", "vmap", "jvp"])
def test_transformations_run_under_a_trace(where: str) -> None:
    def values(api: Api) -> Any:
        lax, lib = api.lax, api.lib

        def g(a: Any, b: Any) -> Any:
            return api.jnp.sum(lax.mul(lax.sin(a), b))

        def f(x: Any, y: Any) -> Any:
            if where == "grad":
                return lib.grad(g)(x, y)
            if where == "vmap":
                return lib.vmap(lambda a: lax.mul(a, y), in_axes=0)(lax.broadcast(x, (2,)))
            return lib.jvp(lambda a: g(a, y), (x,), (y,))[1]
        return _logged(api, f)(X, Y)[0]
    np.testing.assert_allclose(np.asarray(values(APIS["plait"])),
                               np.asarray(values(APIS["jax"])), rtol=1e-6)


def _dual_classes(api: Api) -> tuple[type, type]:
    """Forward mode as a trace (autodidax's JVPTrace), with rules for a few primitives
    and for ``jit`` (its jaxpr applied under this trace)."""
    lax = api.lax

    class DualTracer(api.Tracer):  # type: ignore[misc, name-defined]  # (either library's)
        def __init__(self, trace: Any, primal: Any, tangent: Any) -> None:
            super().__init__(trace, api.lib.typeof(primal))
            self.primal, self.tangent = primal, tangent

    class DualTrace(api.Trace):  # type: ignore[misc, name-defined]  # (either library's)
        def __init__(self, parent: Any) -> None:
            super().__init__()
            self.parent = parent

        def split(self, x: Any) -> tuple[Any, Any]:
            if isinstance(x, DualTracer) and x._trace is self:
                return x.primal, x.tangent
            return x, api.jnp.zeros_like(x)

        def process_primitive(self, prim: Any, tracers: Any, params: Any) -> Any:
            name = str(prim)
            if name == "jit":  # (its equations, processed here: this trace made current)
                with api.set(self):
                    return api.jaxpr_as_fun(params["jaxpr"])(*tracers)
            with api.set(self.parent):
                (xs, ts) = zip(*map(self.split, tracers))
                out = prim.bind(*xs, **params)
                if name == "sin":
                    t = lax.mul(ts[0], lax.cos(xs[0]))
                elif name == "cos":
                    t = lax.neg(lax.mul(ts[0], lax.sin(xs[0])))
                elif name == "mul":
                    t = lax.add(lax.mul(ts[0], xs[1]), lax.mul(xs[0], ts[1]))
                elif name in ("add", "sub"):
                    t = prim.bind(ts[0], ts[1])
                else:
                    raise NotImplementedError(name)
            return DualTracer(self, out, t)

    return DualTrace, DualTracer


def test_a_forward_mode_trace_gives_jaxs_derivatives() -> None:
    def run(api: Api) -> tuple[Any, Any]:
        DualTrace, DualTracer = _dual_classes(api)
        lax = api.lax

        def f(x: Any) -> Any:
            inner = api.lib.jit(lambda a: lax.sub(lax.sin(a), lax.mul(a, a)))
            return lax.add(lax.mul(inner(x), lax.cos(x)), x)
        with api.take() as parent:
            trace = DualTrace(parent)
            with api.set(trace):
                out = f(DualTracer(trace, X, Y))
            return trace.split(out)
    ours, theirs = run(APIS["plait"]), run(APIS["jax"])
    _, expected = jax.jvp(lambda x: jax.lax.add(jax.lax.mul(
        jax.lax.sub(jax.lax.sin(x), x * x), jax.lax.cos(x)), x), (X,), (Y,))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ours[1]), np.asarray(expected), rtol=1e-6)


UNARY = ["sin", "cos", "exp", "tanh", "neg", "abs"]


@given(st.lists(st.sampled_from(UNARY), min_size=1, max_size=6))
def test_random_chains_are_logged_as_jaxs_and_as_their_jaxpr(ops: list[str]) -> None:
    def chain(api: Api) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            for op in ops:
                x = getattr(api.lax, op)(x)
            return x
        return f
    ours, our_log = _logged(APIS["plait"], chain(APIS["plait"]))(X)
    theirs, their_log = _logged(APIS["jax"], chain(APIS["jax"]))(X)
    jaxpr = plait.make_jaxpr(chain(APIS["plait"]))(X)
    assert our_log == their_log == [e.primitive.name for e in jaxpr.jaxpr.eqns] == ops
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


def test_take_current_trace_outside_everything_is_eager_evaluation() -> None:
    with pcore.take_current_trace() as ours, jcore.take_current_trace() as theirs:
        assert type(ours).__name__ == type(theirs).__name__ == "EvalTrace"
        assert isinstance(ours, plait_core.Trace)
        with pcore.set_current_trace(ours):  # (eager here: the same)
            assert np.asarray(plait.lax.sin(X)).tolist() == np.asarray(jax.lax.sin(X)).tolist()


@pytest.mark.parametrize("under_jit", [False, True], ids=["eager", "jit"])
def test_a_trace_may_hand_primitives_to_its_parent_directly(under_jit: bool) -> None:
    def run(api: Api) -> Any:
        class Forward(api.Trace):  # type: ignore[misc, name-defined]  # (either library's)
            def __init__(self, parent: Any) -> None:
                super().__init__()
                self.parent = parent

            def process_primitive(self, prim: Any, tracers: Any, params: Any) -> Any:
                values = [self.parent.stage_value(t) for t in tracers]
                return self.parent.process_primitive(prim, values, params)

        def f(x: Any) -> Any:
            with api.take() as parent:
                with api.set(Forward(parent)):
                    return api.lax.mul(api.lax.sin(x), x)
        return api.lib.jit(f)(X) if under_jit else f(X)
    np.testing.assert_allclose(np.asarray(run(APIS["plait"])), np.asarray(run(APIS["jax"])),
                               rtol=1e-6)


def test_taking_the_current_trace_leaves_eager_evaluation_current_as_jaxs() -> None:
    def seen(api: Api) -> list[str]:
        names: list[str] = []

        def f(x: Any) -> Any:
            with api.take() as outer:
                with api.take() as inner:
                    names.extend([type(outer).__name__, type(inner).__name__])
                with api.set(outer):
                    return x * 2
        api.lib.jit(f)(X)
        return names
    ours, theirs = seen(APIS["plait"]), seen(APIS["jax"])
    assert ours[1] == theirs[1] == "EvalTrace"
    assert (ours[0], theirs[0]) == ("Trace", "DynamicJaxprTrace")


def test_a_trace_without_process_primitive_raises_jaxs_error() -> None:
    for api in APIS.values():
        class Bare(api.Trace):  # type: ignore[misc, name-defined]  # (either library's)
            pass
        with pytest.raises(NotImplementedError, match="^must override$"):
            with api.set(Bare()):
                api.lax.sin(X)


def test_a_tracers_value_is_refused_as_jaxs() -> None:
    def branch(api: Api, error: type[Exception]) -> str:
        def f(x: Any) -> Any:
            return api.lax.sin(x) if x[0] > 0 else x
        with pytest.raises(error) as info:
            _logged(api, f)(X)
        return type(info.value).__name__
    assert branch(APIS["plait"], TracerBoolConversionError) == branch(
        APIS["jax"], jax.errors.TracerBoolConversionError)


def test_a_leaked_tracer_raises_jaxs_error() -> None:
    def leak(api: Api, error: type[Exception]) -> str:
        kept: list[Any] = []

        def keep(x: Any) -> Any:
            kept.append(x)
            return x
        _logged(api, keep)(X)
        with pytest.raises(error) as info:
            api.lax.sin(kept[0])
        return type(info.value).__name__
    ours = leak(APIS["plait"], UnexpectedTracerError)
    assert ours == leak(APIS["jax"], jax.errors.UnexpectedTracerError)


def test_set_current_trace_refuses_what_is_not_a_trace() -> None:
    with pytest.raises(TypeError, match=r"set_current_trace: expected a trace \(a subclass "
                       r"of plait.core.Trace\) or None, but got 3"):
        with pcore.set_current_trace(3):  # type: ignore[arg-type]  # (the point)
            pass


_DOT_PROGRAM = """
import haiku as hk, jax, jax.numpy as jnp, numpy as np

def f(x):
    h = hk.nets.MLP([4, 3], activation=jnp.tanh)(jax.jit(jnp.sin)(x))
    return h + jax.lax.fori_loop(0, 2, lambda i, c: c * 2.0, 1.0)

t = hk.transform(f)
x = np.ones((2, 5), np.float32)
params = t.init(jax.random.PRNGKey(0), x)
print(hk.experimental.to_dot(t.apply)(params, None, x))
"""


def _normal_dot(text: str) -> str:
    """The graph without what differs by run: object ids (numbered by first appearance),
    and JAX's typed literals shown as their values."""
    ids: dict[str, str] = {}
    text = re.sub(r"\d{8,}", lambda m: ids.setdefault(m.group(), f"N{len(ids)}"), text)
    return re.sub(r"Typed(?:Int|Float)\((.*?), dtype=\w+\)", r"\1", text)


def test_haikus_to_dot_draws_jaxs_graph(tmp_path: Path) -> None:
    program = tmp_path / "dot.py"
    program.write_text(textwrap.dedent(_DOT_PROGRAM))
    env = dict(os.environ, PYTHONPATH=str(Path(plait.__file__).parent.parent))
    runs = [subprocess.run([sys.executable, *launcher, str(program)], capture_output=True,
                           text=True, env=env, timeout=600)
            for launcher in (["-m", "plait", "run"], [])]
    for run in runs:
        assert run.returncode == 0, run.stderr
    ours, theirs = (_normal_dot(r.stdout) for r in runs)
    assert ours == theirs and "<b>scan</b>" in ours and "cluster_N" in ours

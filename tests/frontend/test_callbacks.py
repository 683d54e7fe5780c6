"""Host callbacks against JAX 0.10.2: every cell of seed 003's callback table, the seed's
examples (values and printed lines), errors, and exceptions raised by callbacks."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special  # type: ignore[import-untyped]  # scipy ships no stubs
from jax.experimental import io_callback as jax_io_callback

import plait
import plait.numpy as pnp
from plait import export as pexport
from plait.errors import CallbackError, JaxprParseError
from plait.experimental import io_callback
from plait.ir import parse_jaxpr
from tests.frontend.jax_oracle import raised

jax.config.update("jax_platforms", "cpu")

F32 = np.float32
X = np.arange(5.0, dtype=F32)


def _jax_lines(capsys: pytest.CaptureFixture[str], fn: Callable[[], Any]) -> list[str]:
    jax.block_until_ready(fn())
    jax.effects_barrier()
    return capsys.readouterr().out.splitlines()


def _lines(capsys: pytest.CaptureFixture[str], fn: Callable[[], Any]) -> list[str]:
    plait.block_until_ready(fn())
    return capsys.readouterr().out.splitlines()


# -- pure_callback -------------------------------------------------------------------

def _f_host(x: np.ndarray) -> np.ndarray:
    return np.sin(x).astype(x.dtype)


def _pure(lib: Any, vmap_method: str | None = None) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return lib.pure_callback(_f_host, lib.ShapeDtypeStruct(x.shape, x.dtype), x,
                                 vmap_method=vmap_method)
    return f


def test_pure_callback_returns_values_under_jit_vmap_scan() -> None:
    want = np.sin(X)
    f = _pure(plait, "sequential")
    for out in (f(X), plait.jit(f)(X), plait.vmap(f)(X),
                plait.lax.scan(lambda c, x: (c, f(x)), None, X)[1]):
        np.testing.assert_array_equal(np.asarray(out), want)


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims",
                                    "broadcast_all"])
def test_pure_callback_vmap_methods_match_jax(method: str) -> None:
    calls: dict[str, list[tuple[int, ...]]] = {"plait": [], "jax": []}

    def host(name: str) -> Callable[..., np.ndarray]:
        def h(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            calls[name].append((x.shape, y.shape))  # type: ignore[arg-type]  # shapes pair
            return (x + y).astype(np.float32)
        return h

    def f(lib: Any, name: str) -> Callable[[Any, Any], Any]:
        def g(x: Any, y: Any) -> Any:
            shape = np.broadcast_shapes(x.shape, y.shape)
            return lib.pure_callback(host(name), lib.ShapeDtypeStruct(shape, F32), x, y,
                                     vmap_method=method)
        return g
    x, y = np.arange(6, dtype=F32).reshape(2, 3), np.ones(3, F32)
    ours = plait.vmap(f(plait, "plait"), in_axes=(0, None))(x, y)
    theirs = jax.vmap(f(jax, "jax"), in_axes=(0, None))(x, y)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    # The callback sees what JAX's sees: per element, or once with expanded/broadcast arrays.
    assert calls["plait"] == calls["jax"]


def test_pure_callback_refusals_as_jax() -> None:
    err = raised(lambda: plait.grad(lambda x: _pure(plait)(x).sum())(X))
    jerr = raised(lambda: jax.grad(lambda x: _pure(jax)(x).sum())(X))
    assert isinstance(err, ValueError) and str(err) == str(jerr)
    # A non-scalar output too: JAX differentiates before it checks the output's shape.
    err = raised(lambda: plait.grad(_pure(plait))(X))
    assert isinstance(err, ValueError) and str(err) == str(raised(lambda: jax.grad(_pure(jax))(X)))
    err = raised(lambda: plait.grad(lambda x: x * 2.0)(X))
    jerr = raised(lambda: jax.grad(lambda x: x * 2.0)(X))
    assert isinstance(err, TypeError) and str(err) == str(jerr)
    err = raised(lambda: plait.vmap(_pure(plait))(X))
    assert isinstance(err, NotImplementedError)
    assert str(err).startswith("vmap is only supported for the pure_callback primitive when "
                               "vmap_method is one of 'sequential', 'sequential_unrolled', "
                               "'expand_dims', or 'broadcast_all'. Got vmap_method=None.")


def test_pure_callback_is_removed_when_unused(capsys: pytest.CaptureFixture[str]) -> None:
    def print_something() -> Any:
        print("printing something")
        return np.int32(0)

    def f1(lib: Any) -> Callable[[], Any]:
        return lib.jit(lambda: lib.pure_callback(print_something, np.int32(0)))

    def f2(lib: Any) -> Callable[[], Any]:
        def f() -> Any:
            lib.pure_callback(print_something, np.int32(0))
            return 1.0
        return lib.jit(f)
    assert _lines(capsys, f1(plait)) == _jax_lines(capsys, f1(jax)) == ["printing something"]
    assert _lines(capsys, f2(plait)) == _jax_lines(capsys, f2(jax)) == []


def test_result_checks(capsys: pytest.CaptureFixture[str]) -> None:
    def bad_shape(x: Any) -> Any:
        return plait.pure_callback(lambda a: np.ones(4, F32), plait.ShapeDtypeStruct((3,), F32),
                                   x)

    def bad_dtype(x: Any) -> Any:
        return plait.pure_callback(lambda a: np.ones(3, np.int32),
                                   plait.ShapeDtypeStruct((3,), F32), x)
    for f, msg in ((bad_shape, "Incorrect output shape for return value #0: Expected: (3,), "
                               "Actual: (4,)"),
                   (bad_dtype, "Incorrect output dtype for return value #0: Expected: float32, "
                               "Actual: int32")):
        for g in (f, plait.jit(f)):
            err = raised(lambda: g(np.ones(3, F32)))  # noqa: B023  (called at once)
            assert isinstance(err, CallbackError) and isinstance(err.__cause__, RuntimeError)
            assert str(err.__cause__) == msg


def test_raising_callback_leaves_the_runtime_usable() -> None:
    def host(x: np.ndarray) -> np.ndarray:
        if x[0] > 10:
            raise KeyError("too big")
        return x * 2

    f = plait.jit(lambda x: plait.pure_callback(host, plait.ShapeDtypeStruct((3,), F32), x))
    np.testing.assert_array_equal(np.asarray(f(np.ones(3, F32))), np.full(3, 2.0, F32))
    err = raised(lambda: f(np.full(3, 20.0, F32)))
    assert isinstance(err, CallbackError) and isinstance(err.__cause__, KeyError)
    assert "KeyError" in str(err) and "too big" in str(err)
    # (JAX raises its JaxRuntimeError, naming the callback's error: equinox catches that)
    theirs = raised(lambda: jax.jit(lambda x: jax.pure_callback(
        host, jax.ShapeDtypeStruct((3,), F32), x))(np.full(3, 20.0, F32)))
    assert isinstance(err, plait.errors.JaxRuntimeError)
    assert isinstance(theirs, jax.errors.JaxRuntimeError) and "KeyError" in str(theirs)
    assert type(err).__name__ == "CallbackError"
    np.testing.assert_array_equal(np.asarray(f(np.ones(3, F32))), np.full(3, 2.0, F32))
    np.testing.assert_allclose(np.asarray(plait.jit(pnp.sin)(X)), np.sin(X), rtol=1e-6)


# -- io_callback ---------------------------------------------------------------------

def _random_like(lib: Any, io: Any, ordered: bool) -> tuple[Callable[[Any], Any], list[str]]:
    rng = np.random.default_rng(0)
    log: list[str] = []

    def host_side_random_like(x: np.ndarray) -> np.ndarray:
        log.append(f"generating {x.dtype}{list(x.shape)}")
        return rng.uniform(size=x.shape).astype(x.dtype)

    return lib.jit(lambda x: io(host_side_random_like, x, x, ordered=ordered)), log


def test_io_callback_seed_example_as_jax() -> None:
    x = np.zeros(5, F32)
    for make in (lambda lib, io: _random_like(lib, io, False)[0],):
        del make
    ours, our_log = _random_like(plait, io_callback, False)
    theirs, their_log = _random_like(jax, jax_io_callback, False)
    np.testing.assert_array_equal(np.asarray(ours(x)), np.asarray(theirs(x)))
    np.testing.assert_array_equal(np.asarray(plait.vmap(ours)(x)), np.asarray(jax.vmap(theirs)(x)))
    assert our_log == their_log == ["generating float32[5]"] + ["generating float32[]"] * 5
    ours, our_log = _random_like(plait, io_callback, True)
    theirs, their_log = _random_like(jax, jax_io_callback, True)
    err, jerr = raised(lambda: plait.vmap(ours)(x)), raised(lambda: jax.vmap(theirs)(x))
    assert isinstance(err, ValueError) and str(err) == str(jerr)
    # scan runs ordered and unordered io callbacks alike.
    a = plait.lax.scan(lambda c, v: (c, ours(v)), None, X)[1]
    b = jax.lax.scan(lambda c, v: (c, theirs(v)), None, X)[1]
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert our_log == their_log
    err = raised(lambda: plait.grad(lambda v: ours(v).sum())(x))
    jerr = raised(lambda: jax.grad(lambda v: theirs(v).sum())(x))
    assert isinstance(err, ValueError) and str(err) == str(jerr)


def test_io_callback_runs_when_not_differentiated_and_unused(
        capsys: pytest.CaptureFixture[str]) -> None:
    def f(lib: Any, io: Any) -> Callable[[Any], Any]:
        def g(x: Any) -> Any:
            io(lambda: print("hello"), None)
            return x
        return lib.jit(g)
    assert _lines(capsys, lambda: plait.grad(f(plait, io_callback))(1.0)) == ["hello"]
    assert _jax_lines(capsys, lambda: jax.grad(f(jax, jax_io_callback))(1.0)) == ["hello"]


def test_ordered_io_callback_in_a_fori_loop_keeps_order() -> None:
    log: list[int] = []

    def body(i: Any, c: Any) -> Any:
        io_callback(lambda v: log.append(int(v)), None, i, ordered=True)
        return c + 1
    f = plait.jit(lambda: plait.lax.fori_loop(0, 100, body, 0))
    assert int(f()) == 100
    assert log == list(range(100))
    assert int(f()) == 100 and log == list(range(100)) * 2
    # In a while_loop too, with ordered callbacks in program order within each iteration.
    events: list[str] = []

    def step(c: Any) -> Any:
        io_callback(lambda v: events.append(f"a{int(v)}"), None, c, ordered=True)
        io_callback(lambda v: events.append(f"b{int(v)}"), None, c, ordered=True)
        return c + 1
    plait.jit(lambda: plait.lax.while_loop(lambda c: c < 3, step, 0))()
    assert events == ["a0", "b0", "a1", "b1", "a2", "b2"]


# -- debug.callback and debug.print ---------------------------------------------------

def _logged(lib: Any, debug: Any) -> Callable[[Any], Any]:
    def log_value(x: Any) -> None:
        print("log:", x)

    @lib.jit
    def f(x: Any) -> Any:
        debug.callback(log_value, x)
        return x
    return f


def test_debug_callback_seed_examples(capsys: pytest.CaptureFixture[str]) -> None:
    ours, theirs = _logged(plait, plait.debug), _logged(jax, jax.debug)
    assert _lines(capsys, lambda: ours(1.0)) == _jax_lines(capsys, lambda: theirs(1.0)) == \
        ["log: 1.0"]
    assert _lines(capsys, lambda: plait.vmap(ours)(X)) == \
        _jax_lines(capsys, lambda: jax.vmap(theirs)(X)) == [f"log: {v}" for v in X]
    assert _lines(capsys, lambda: plait.grad(ours)(1.0)) == \
        _jax_lines(capsys, lambda: jax.grad(theirs)(1.0)) == ["log: 1.0"]
    # In a scan, once per iteration; never removed though it returns nothing.
    assert _lines(capsys, lambda: plait.lax.scan(lambda c, v: (c + ours(v), None), 0.0, X)) == \
        [f"log: {v}" for v in X]


def test_debug_print(capsys: pytest.CaptureFixture[str]) -> None:
    def f(lib: Any, debug: Any, ordered: bool) -> Callable[[Any], Any]:
        def g(x: Any) -> Any:
            debug.print("x={x} y={}", x * 2, x=x, ordered=ordered)
            return x + 1
        return lib.jit(g)
    for ordered in (False, True):
        assert _lines(capsys, lambda: f(plait, plait.debug, ordered)(X)) == \
            _jax_lines(capsys, lambda: f(jax, jax.debug, ordered)(X))  # noqa: B023
    # Under vmap, one line per element (JAX: in any order).
    ours = _lines(capsys, lambda: plait.vmap(f(plait, plait.debug, False))(X))
    theirs = _jax_lines(capsys, lambda: jax.vmap(f(jax, jax.debug, False))(X))
    assert sorted(ours) == sorted(theirs) and len(ours) == 5
    with pytest.raises(ValueError, match="refers to 'z'"):
        plait.debug.print("{z}", x=X)


# -- composition with the rest ----------------------------------------------------------

def test_callbacks_are_refused_by_export() -> None:
    with pytest.raises(ValueError, match="calls back into Python"):
        pexport.export(plait.jit(_pure(plait)))(X)


def test_printed_callbacks_do_not_parse_back() -> None:
    text = str(plait.make_jaxpr(_pure(plait))(X))
    assert "pure_callback[\n      callback=_FlatCallback(callback_func=_f_host" in text
    with pytest.raises(JaxprParseError, match="cannot be parsed back"):
        parse_jaxpr(text)


def test_reference_interpreter_calls_the_callback() -> None:
    closed = plait.make_jaxpr(_pure(plait))(X)
    (out,) = plait.ir.eval_jaxpr(closed.jaxpr, closed.consts, X)
    np.testing.assert_array_equal(out, np.sin(X))


# -- the seed's pure_callback + custom_jvp example (scipy.special.jv) ----------------------

def _jv(lib: Any, np_: Any) -> Any:
    def jv(v: Any, z: Any) -> Any:
        v, z = np_.asarray(v), np_.asarray(z)
        assert np_.issubdtype(v.dtype, np_.integer)
        z = z.astype(np_.result_type(float, z.dtype))

        def _scipy_jv(v: Any, z: Any) -> Any:
            return scipy.special.jv(v, z).astype(z.dtype)
        result = lib.ShapeDtypeStruct(shape=np_.broadcast_shapes(v.shape, z.shape),
                                      dtype=z.dtype)
        # (JAX 0.10.2 spells the seed's vectorized=True as vmap_method="expand_dims".)
        return lib.pure_callback(_scipy_jv, result, v, z, vmap_method="expand_dims")

    jv_custom: Any = lib.custom_jvp(jv)
    jv = jv_custom

    @jv_custom.defjvp
    def _jv_jvp(primals: Any, tangents: Any) -> Any:
        v, z = primals
        _, z_dot = tangents
        jv_minus_1, jv_plus_1 = jv(v - 1, z), jv(v + 1, z)
        djv_dz = np_.where(v == 0, -jv_plus_1, 0.5 * (jv_minus_1 - jv_plus_1))
        return jv(v, z), z_dot * djv_dz
    return jv


def test_seed_bessel_example() -> None:
    j1 = functools.partial(_jv(plait, pnp), 1)
    jj1 = functools.partial(_jv(jax, jnp), 1)
    z = np.arange(5.0, dtype=F32)
    for ours, theirs in ((j1(z), jj1(z)), (plait.jit(j1)(z), jax.jit(jj1)(z)),
                         (plait.vmap(j1)(z), jax.vmap(jj1)(z))):
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    np.testing.assert_allclose(np.asarray(j1(z)), [0.0, 0.44005057, 0.5767248, 0.33905897,
                                                   -0.06604332], rtol=1e-6)
    assert np.asarray(plait.grad(j1)(2.0)) == F32(-0.06447162)
    assert np.asarray(plait.hessian(j1)(2.0)) == F32(-0.4003078)
    assert np.asarray(plait.hessian(j1)(2.0)) == np.asarray(jax.hessian(jj1)(2.0))


def test_ordered_callbacks_keep_program_order_across_control_flow() -> None:
    events: list[tuple[str, int]] = []

    def rec(tag: str) -> Callable[[Any], None]:
        return lambda v: events.append((tag, int(v)))

    @plait.jit
    def f(x: Any) -> Any:
        io_callback(rec("before"), None, x, ordered=True)

        def body(c: Any) -> Any:
            io_callback(rec("loop"), None, c, ordered=True)
            return c + 1
        y = plait.lax.while_loop(lambda c: c < 3, body, x)

        def step(c: Any, v: Any) -> Any:
            io_callback(rec("scan"), None, v, ordered=True)
            return c, None
        plait.lax.scan(step, 0, pnp.arange(2))
        plait.lax.cond(x > -1, lambda: io_callback(rec("cond"), None, x, ordered=True),
                       lambda: None)
        plait.jit(lambda v: io_callback(rec("jit"), None, v, ordered=True))(x)
        io_callback(rec("after"), None, y, ordered=True)
        return y
    assert int(f(0)) == 3
    assert events == [("before", 0), ("loop", 0), ("loop", 1), ("loop", 2), ("scan", 0),
                      ("scan", 1), ("cond", 0), ("jit", 0), ("after", 3)]
    # The tokens chain the callbacks in the compiled program.
    text = f.lower(0).as_text()
    assert text.count("!stablehlo.token") >= 6 and "stablehlo.after_all" in text


def test_callback_beside_a_shape_polymorphic_exported_call() -> None:
    # The module needs shape refinement (into bytecode) and host callbacks both.
    exp = pexport.export(plait.jit(lambda v: v * 2))(
        plait.ShapeDtypeStruct(pexport.symbolic_shape("b"), F32))
    f = plait.jit(lambda v: _pure(plait)(exp.call(v)))
    np.testing.assert_allclose(np.asarray(f(X)), np.sin(X * 2), rtol=1e-6)


@pytest.mark.parametrize("value", [np.ones((2, 3), F32), 1.0, 3, np.int8(3), True,
                                   np.arange(4, dtype=np.float16)])
def test_shape_dtype_struct_like_as_jax(value: Any) -> None:
    assert repr(plait.ShapeDtypeStruct.like(value)) == repr(jax.ShapeDtypeStruct.like(value))

    def f(lib: Any) -> Any:
        return lambda x: lib.pure_callback(np.cos, lib.ShapeDtypeStruct.like(x), x)
    x = np.linspace(0.0, 1.0, 5, dtype=F32)
    np.testing.assert_array_equal(np.asarray(plait.jit(f(plait))(x)),
                                  np.asarray(jax.jit(f(jax))(x)))
    assert plait.jit(f(plait))(2.0).weak_type == jax.jit(f(jax))(2.0).weak_type
    with pytest.raises(TypeError, match="expected an array, a scalar or a ShapeDtypeStruct, "
                                        "but got str"):
        plait.ShapeDtypeStruct.like("a")


def test_callbacks_receive_arrays_as_jax() -> None:
    # Under jit both libraries hand the callback their own Array type, strongly typed.
    seen: dict[str, list[str]] = {"plait": [], "jax": []}
    for name, lib in (("plait", plait), ("jax", jax)):
        def show(*vals: Any, name: str = name) -> Any:
            seen[name].extend(repr(v) for v in vals)
            return vals[0]
        f32 = lib.ShapeDtypeStruct((), np.float32)

        def prog(x: Any, i: Any, lib: Any = lib, show: Any = show, f32: Any = f32) -> Any:
            lib.debug.callback(show, x, i, 2.0)
            return lib.pure_callback(show, f32, x) + io_or(lib)(show, f32, x)
        lib.jit(prog)(1.0, np.int8(3))
    assert seen["plait"] == [r.replace("jax", "plait") for r in seen["jax"]]
    assert seen["plait"][0] == "Array(1., dtype=float32)"


def io_or(lib: Any) -> Any:
    return io_callback if lib is plait else jax_io_callback

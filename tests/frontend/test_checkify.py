"""``plait.experimental.checkify`` against ``jax.experimental.checkify`` 0.10.2: the same
programs, written once against either library, report the same errors (or none) with
the same messages, under ``jit``, ``vmap``, ``grad`` and control flow."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import hypothesis.strategies as st
import jax
import jax.experimental.checkify as jcheckify
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given, settings

import plait
import plait.experimental.checkify as pcheckify
import plait.numpy as pjnp
from plait.errors import CheckError, TransformError
from plait.ir import check_jaxpr, eval_jaxpr

PLAIT = SimpleNamespace(m=plait, jnp=pjnp, ck=pcheckify)
JAX = SimpleNamespace(m=jax, jnp=jjnp, ck=jcheckify)
NAN = float("nan")


def _both(program: Callable[[Any], Any]) -> tuple[Any, Any]:
    return program(PLAIT), program(JAX)


def _positive(L: Any) -> Callable[..., Any]:
    def f(x: Any, i: Any) -> Any:
        L.ck.check(x > 0, "x must be positive, got {x}", x=x)
        y = L.jnp.sin(x) / x
        return L.jnp.log(y) + L.jnp.arange(3.)[i]
    return f


CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("user checks", lambda L: [L.ck.checkify(_positive(L))(L.jnp.float32(x), i)[0].get()
                               for x, i in [(1., 0), (-1., 0), (0., 1)]]),
    ("all checks", lambda L: [L.ck.checkify(_positive(L), errors=L.ck.all_checks)(
        L.jnp.float32(x), i)[0].get() for x, i in [(1., 0), (-1., 0), (1., 5), (0., 1)]]),
    ("jit", lambda L: L.m.jit(L.ck.checkify(_positive(L)))(L.jnp.float32(-2.), 0)[0].get()),
    ("vmap of checkify", lambda L: L.m.vmap(L.ck.checkify(_positive(L), errors=L.ck.all_checks))(
        L.jnp.array([1., -1., 3.]), L.jnp.array([0, 0, 7]))[0].get()),
    ("checkify of vmap", lambda L: L.ck.checkify(L.m.vmap(_positive(L)), errors=L.ck.all_checks)(
        L.jnp.array([1., -1., 3.]), L.jnp.array([0, 0, 7]))[0].get()),
    ("payload reprs", lambda L: [L.ck.checkify(f)(L.jnp.float32(NAN))[0].get() for f in [
        lambda x: L.ck.check(x > 0, "in {}", {"a": x * 0, "b": (x, 2.0 * x)}),
        lambda x: L.ck.check(x > 0, "in {t!r} {u}", t=[x, L.jnp.arange(2)], u=x),
        lambda x: L.m.jit(lambda y: L.ck.check(y > 0, "{}", {"y": y}))(x)]]),
    ("key payloads", lambda L: [L.m.jit(L.ck.checkify(
        lambda k, j: L.ck.check(L.jnp.all(k == j), "keys {} {}", k, j[0])))(
            L.m.random.split(L.m.random.key(1)), L.m.random.split(L.m.random.key(i)))[0].get()
        for i in (1, 2)]),
    ("nested vmap", lambda L: L.m.vmap(L.m.vmap(L.ck.checkify(
        lambda x: L.ck.check(x < 3, "x={}", x))))(L.jnp.arange(6.).reshape(2, 3))[0].get()),
    ("checkify of grad", lambda L: L.ck.checkify(L.m.grad(L.jnp.sqrt),
                                                 errors=L.ck.float_checks)(-1.)[0].get()),
    ("integer division", lambda L: L.ck.checkify(lambda x: x // 0, errors=L.ck.div_checks)(
        L.jnp.int32(3))[0].get()),
    ("float division", lambda L: L.ck.checkify(lambda x: x / 0., errors=L.ck.div_checks)(
        L.jnp.float32(3))[0].get()),
    ("rem is not checked", lambda L: L.ck.checkify(lambda x: L.m.lax.rem(x, 0),
                                                   errors=L.ck.div_checks)(L.jnp.int32(3))[0].get()),
    ("division unchecked", lambda L: L.ck.checkify(lambda x: x // 0)(L.jnp.int32(3))[0].get()),
    ("nan from div", lambda L: L.ck.checkify(lambda x: L.jnp.float32(0) / x,
                                             errors=L.ck.nan_checks)(L.jnp.float32(0))[0].get()),
    ("nan moved, not made", lambda L: [_nans(L, f, x) for f, x in [
        (lambda x: L.jnp.max(x), L.jnp.array([1., NAN])),
        (lambda x: L.jnp.maximum(x, 1.), L.jnp.float32(NAN)),
        (lambda x: L.jnp.where(x > 0, x, NAN), L.jnp.float32(1)),
        (lambda x: x.astype(L.jnp.float16), L.jnp.float32(NAN)),
        (lambda x: L.jnp.array([x, x]), L.jnp.float32(NAN)),
        (lambda x: -x, L.jnp.float32(NAN))]]),
    ("nan made", lambda L: [_nans(L, f, x) for f, x in [
        (lambda x: x * 2 + 1, L.jnp.float32(NAN)),
        (lambda x: L.jnp.sum(x), L.jnp.array([1., NAN])),
        (lambda x: x - x, L.jnp.float32(np.inf)),
        (lambda x: L.m.jit(lambda y: L.jnp.log(y) * 2)(x), L.jnp.float32(-1.))]]),
    ("indexing", lambda L: [L.ck.checkify(f, errors=L.ck.index_checks)(*a)[0].get() for f, a in [
        (lambda x, i: x[i], (L.jnp.arange(4.), L.jnp.array([1, 9, 2]))),
        (lambda x, i: x[i], (L.jnp.arange(4.), L.jnp.array([-9]))),
        (lambda x, i: L.jnp.take(x, i, mode="clip"), (L.jnp.arange(4.), L.jnp.array([5]))),
        (lambda x, i: L.jnp.take(x, i), (L.jnp.arange(4.), L.jnp.array([5]))),
        (lambda x, i: x.at[i].set(1.), (L.jnp.arange(4.), 7)),
        (lambda x, i: x.at[i].add(1.), (L.jnp.arange(4.), L.jnp.array([[0], [5]]))),
        (lambda x, i: L.m.lax.dynamic_update_slice(x, L.jnp.ones(2), (i,)),
         (L.jnp.arange(4.), 3)),
        (lambda x, i, j: L.m.lax.dynamic_slice(x, (i, j), (2, 2)),
         (L.jnp.ones((4, 5)), 1, 4)),
        (lambda x, i: x[i], (L.jnp.arange(4.), 2))]]),
    ("cond", lambda L: [L.ck.checkify(_branches(L))(L.jnp.float32(x), p)[0].get()
                        for x, p in [(1., True), (11., True), (-11., False), (-11., True)]]),
    ("while_loop", lambda L: [L.ck.checkify(_counting(L))(n)[0].get() for n in (5, 10)]),
    ("fori_loop nan", lambda L: L.ck.checkify(
        lambda x: L.m.lax.fori_loop(0, 5, lambda i, c: c / (c - 3.), x),
        errors=L.ck.nan_checks)(L.jnp.float32(0.))[0].get()),
    ("scan", lambda L: L.ck.checkify(lambda xs: L.m.lax.scan(
        lambda c, x: (L.ck.check(x < 3, "x={}", x), (c + x, x * 2))[1], 0., xs))(
        L.jnp.arange(5.))[0].get()),
    ("debug_check", lambda L: [
        L.ck.checkify(lambda x: L.ck.debug_check(x > 0, "dbg {}", x))(L.jnp.float32(-1.))[0].get(),
        float(L.m.jit(lambda x: (L.ck.debug_check(x > 0, "dbg"), x)[1])(1.))]),
    ("pytree arguments", lambda L: L.ck.checkify(lambda d: L.ck.check(
        d["a"].sum() < 0, "a={a} b={b[0]}", **d))(
        {"a": L.jnp.arange(3.), "b": (L.jnp.int32(7),)})[0].get()),
    ("throw", lambda L: _raised(lambda: L.m.jit(L.ck.checkify(_positive(L)))(
        L.jnp.float32(-2.), 0)[0].throw())),
    ("check run directly", lambda L: [_raised(lambda: _positive(L)(L.jnp.float32(-1.), 0)),
                                      L.ck.check(L.jnp.float32(1) > 0, "fine")]),
    ("check not functionalized", lambda L: _raised(lambda: L.m.jit(_positive(L))(1., 0))),
    ("predicate not scalar", lambda L: _raised(lambda: L.ck.checkify(
        lambda x: L.ck.check(x > 0, "m"))(L.jnp.ones(3)), message=False)),
    ("formatting with a float", lambda L: _raised(lambda: L.ck.check(
        L.jnp.float32(1) > 0, "m {}", 1.0))),
]


def _nans(L: Any, f: Callable[[Any], Any], x: Any) -> Any:
    return L.ck.checkify(f, errors=L.ck.nan_checks)(x)[0].get()


def _branches(L: Any) -> Callable[..., Any]:
    def t(x: Any) -> Any:
        L.ck.check(x < 10, "t {x}", x=x)
        return x + 1

    def f(x: Any) -> Any:
        L.ck.check(x > -10, "e {x}", x=x)
        return x - 1
    return lambda x, p: L.m.lax.cond(p, t, f, x)


def _counting(L: Any) -> Callable[..., Any]:
    def body(c: Any) -> Any:
        i, s = c
        L.ck.check(s < 20, "s={s} at i={i}", s=s, i=i)
        return i + 1, s + i
    return lambda n: L.m.lax.while_loop(lambda c: c[0] < n, body, (0, 0))


def _raised(fn: Callable[[], Any], message: bool = True) -> str:
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the exception is the result compared)
        return f"{type(e).__name__}: {e}" if message else type(e).__name__
    return "no exception"


@pytest.mark.parametrize("name, program", CASES, ids=[c[0] for c in CASES])
def test_the_same_errors_as_jax(name: str, program: Callable[[Any], Any]) -> None:
    ours, theirs = _both(program)
    assert ours == theirs


def test_a_checkified_program_differentiates_as_the_program() -> None:
    def f(L: Any) -> Callable[[Any], Any]:
        def g(x: Any) -> Any:
            L.ck.check(L.jnp.all(x > 0), "bad {}", x)
            return L.jnp.sum(L.jnp.log(x))
        return lambda x: L.ck.checkify(g)(x)[1]
    ours, theirs = _both(lambda L: np.asarray(L.m.grad(f(L))(L.jnp.array([1., 2.]))))
    np.testing.assert_allclose(ours, theirs)


def test_the_checkified_jaxpr_is_well_typed_and_its_state_first() -> None:
    closed = plait.make_jaxpr(pcheckify.checkify(_positive(PLAIT), errors=pcheckify.all_checks))(
        pjnp.float32(1.), 0)
    check_jaxpr(closed.jaxpr)
    assert [str(v.aval) for v in closed.jaxpr.outvars[:2]] == ["bool[]", "int32[]"]
    assert "check" not in [e.primitive.name for e in closed.jaxpr.eqns]


def test_the_check_equation_prints_and_the_reference_interpreter_evaluates_it() -> None:
    closed = plait.make_jaxpr(lambda x: pcheckify.check(x > 0, "x={}", x))(1.0)
    assert "check[message='x={}'] b a" in str(closed.jaxpr).replace("\n", " ")
    assert eval_jaxpr(closed.jaxpr, [], np.float32(1.0)) == []
    with pytest.raises(CheckError, match="check failed: x={}"):
        eval_jaxpr(closed.jaxpr, [], np.float32(-1.0))


def test_bad_input_is_named() -> None:
    with pytest.raises(TypeError, match=r"checkify: expected errors to be a set of checkify "
                                        r"error kinds .*, but got \{'nan'\}"):
        pcheckify.checkify(lambda x: x, errors={"nan"})  # type: ignore[arg-type]  # (tested)
    with pytest.raises(TypeError, match="check: expected a message string, but got 3"):
        pcheckify.check(pjnp.bool_(True), 3)  # type: ignore[arg-type]  # (the error tested)

    def in_condition(n: Any) -> Any:
        def cond(c: Any) -> Any:
            pcheckify.check(c < 100, "big")
            return c < n
        return plait.lax.while_loop(cond, lambda c: c + 1, 0)
    with pytest.raises(TransformError, match="checkify: checks in a while_loop's condition "
                                             "are not supported yet"):
        pcheckify.checkify(in_condition)(5)


@settings(max_examples=20, deadline=None)
@given(xs=st.lists(st.floats(-4, 4, width=32), min_size=1, max_size=6),
       # (no subnormal limit: XLA's CPU flushes it to zero, in JAX too, unlike NumPy)
       limit=st.floats(-4, 4, width=32, allow_subnormal=False))
def test_the_first_failure_in_a_loop_is_reported_with_its_values(xs: list[float],
                                                                 limit: float) -> None:
    """Property, against a Python loop: the scan reports the first element over ``limit``."""
    def body(c: Any, x: Any) -> Any:
        pcheckify.check(x <= limit, "x={x} at step {c}", x=x, c=c)
        return c + 1, x
    err, _ = plait.jit(pcheckify.checkify(lambda v: plait.lax.scan(body, 0, v)))(
        np.asarray(xs, np.float32))
    values = np.asarray(xs, np.float32)
    first = next((i for i, x in enumerate(values) if not x <= np.float32(limit)), None)
    want = None if first is None else \
        f"x={values[first]} at step {first} (`check` failed)"
    assert err.get() == want


# ----------------------------------------------------------------------------- check_error


def _rechecked(L: Any, x: float, outer: bool, jit_outer: bool = False) -> Any:
    def f(y: Any) -> Any:
        L.ck.check(y > 0, "must be positive! {} and {k}", y, k=y * 2)
        return y

    def g(y: Any) -> Any:
        err, out = L.m.jit(L.ck.checkify(f))(y)
        L.ck.check_error(err)
        return out

    if not outer:
        return g(x)
    checked = L.ck.checkify(g)
    return (L.m.jit(checked) if jit_outer else checked)(x)[0].get()


@pytest.mark.parametrize(("x", "jit_outer"), [(1.0, False), (-1.0, False), (-2.0, True)])
def test_check_error_is_functionalized_by_an_outer_checkify_as_jax(x: float,
                                                                   jit_outer: bool) -> None:
    ours, theirs = _both(lambda L: _rechecked(L, x, True, jit_outer))
    assert ours == theirs


def test_check_error_raises_outside_checkify_as_jax() -> None:
    assert _rechecked(PLAIT, 3.0, False) == _rechecked(JAX, 3.0, False) == 3.0
    # (JAX's checkify.JaxRuntimeError is a ValueError, which chex, for one, catches.)
    with pytest.raises(ValueError, match=r"must be positive! -1.0 and -2.0 \(`check` failed\)"):
        _rechecked(JAX, -1.0, False)
    assert issubclass(pcheckify.JaxRuntimeError, ValueError)
    with pytest.raises(pcheckify.JaxRuntimeError,
                       match=r"must be positive! -1.0 and -2.0 \(`check` failed\)"):
        _rechecked(PLAIT, -1.0, False)


def test_check_error_of_a_vmapped_error_reports_the_first_failure() -> None:
    def f(y: Any) -> Any:
        pcheckify.check(y > 0, "bad {}", y)
        return y

    def g(ys: Any) -> Any:
        err, _ = plait.vmap(pcheckify.checkify(f))(ys)
        pcheckify.check_error(err)
        return ys

    err, _ = pcheckify.checkify(g)(np.array([1.0, -3.0, -4.0], np.float32))
    assert err.get() == "bad -3.0 (`check` failed)"


def test_init_error_and_error_category_as_jax() -> None:
    assert pcheckify.init_error.get() is jcheckify.init_error.get() is None
    pcheckify.check_error(pcheckify.init_error)
    jcheckify.check_error(jcheckify.init_error)
    assert str(pcheckify.init_error) == str(jcheckify.init_error) == "Error(None)"
    base = pcheckify.FailedCheckError.__mro__[1]
    assert pcheckify.ErrorCategory == type[base]
    assert str(jcheckify.ErrorCategory) == "type['JaxException']"
    assert base.__name__ == "JaxException"
    assert all(issubclass(e, base) for e in pcheckify.all_checks)


def test_check_error_refuses_other_values_as_jax() -> None:
    for ck in (jcheckify, pcheckify):
        with pytest.raises(TypeError, match="check_error takes an Error as argument, got type "
                           "<class 'int'> instead."):
            ck.check_error(1)


def test_check_run_directly_formats_the_values_as_given() -> None:
    def fail(L: Any) -> str:
        with pytest.raises(ValueError) as info:
            L.ck.check(L.jnp.array(False), "x {} {y}", {"a": L.jnp.float32(1)},
                       y=np.array(2, np.int8))
        return str(info.value)

    assert fail(PLAIT) == fail(JAX) == "x {'a': Array(1., dtype=float32)} 2 (`check` failed)"


def _per_device(L: Any, which: str, v: np.ndarray) -> tuple[Any, Any]:
    def f(x: Any) -> Any:
        L.ck.check(L.jnp.all(x > 0), "bad {}", x)
        return L.jnp.log(x)

    if which == "pmap":
        g = L.m.pmap(f, axis_name="i")
    else:
        auto = (L.m.sharding.AxisType.Auto,) * 2
        mesh = L.m.make_mesh((2, 4), ("a", "b"), axis_types=auto)
        spec = L.m.sharding.PartitionSpec(("a", "b"))
        g = L.m.shard_map(f, mesh=mesh, in_specs=spec, out_specs=spec)
    err, out = L.m.jit(L.ck.checkify(g))(v)
    return err.get(), out


@pytest.mark.parametrize("which, size", [("pmap", 8), ("shard_map", 16)])
def test_checks_on_several_devices_report_the_first_failing_device(which: str,
                                                                   size: int) -> None:
    """Checks inside ``pmap`` and ``shard_map``: plait reports the first failing device's
    failure, where JAX reports each failing device's (``at mapped index i: ...``); the
    message is JAX's first, without the device index."""
    for bad in ([], [2, 5], [size - 1]):
        v = np.arange(1.0, size + 1, dtype=np.float32)
        v[bad] *= -1
        (ours, out), (theirs, expected) = _per_device(PLAIT, which, v), \
            _per_device(JAX, which, v)
        np.testing.assert_allclose(out, expected, rtol=1e-6)
        if theirs is None:
            assert ours is None
        else:
            assert ours == theirs.splitlines()[0].split(": ", 1)[1]


def test_checks_inside_shard_map_over_explicit_axes() -> None:
    mesh = plait.make_mesh((2, 4), ("a", "b"))
    spec = plait.sharding.PartitionSpec(("a", "b"))
    x = plait.device_put(np.array([1, 2, 3, -4, 5, 6, 7, 8], np.float32),
                         plait.sharding.NamedSharding(mesh, spec))
    def body(v: Any) -> Any:
        pcheckify.check(v[0] > 0, "bad {}", v)
        return v

    g = plait.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec)
    err, out = plait.jit(pcheckify.checkify(g))(x)
    assert err.get() == "bad [-4.] (`check` failed)"
    np.testing.assert_array_equal(out, x)

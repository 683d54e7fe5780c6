"""Primitives defined the JAX way (``plait.extend.core.Primitive`` and the tables of
``plait.interpreters``) against JAX 0.10.2: the same definitions, written once against
either library, give the same values, derivatives and batched results, and fail the
same way while a rule is missing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import hypothesis.strategies as st
import jax
import jax.extend.core as jcore
import jax.interpreters.ad as jad
import jax.interpreters.batching as jbatching
import jax.interpreters.mlir as jmlir
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given, settings
from jaxlib.mlir.dialects import stablehlo as hlo

import plait
import plait.extend.core as pcore
import plait.interpreters.ad as pad
import plait.interpreters.batching as pbatching
import plait.interpreters.mlir as pmlir
import plait.numpy as pjnp
from plait.errors import JaxprTypeError, TransformError
from plait.ir import PRIMITIVES, check_jaxpr, parse_jaxpr

PLAIT = SimpleNamespace(m=plait, jnp=pjnp, core=pcore, ad=pad, batching=pbatching,
                        mlir=pmlir, ShapedArray=plait.core.ShapedArray)
JAX = SimpleNamespace(m=jax, jnp=jjnp, core=jcore, ad=jad, batching=jbatching, mlir=jmlir,
                      ShapedArray=jax.core.ShapedArray)
LIBS = [PLAIT, JAX]


@pytest.fixture(autouse=True)
def _forget_primitives() -> Iterator[None]:
    """Other tests check every registered primitive has plait's rules: drop ours."""
    before = set(PRIMITIVES)
    yield
    for name in set(PRIMITIVES) - before:
        del PRIMITIVES[name]


def multiply_add(L: Any, name: str = "multiply_add", rules: str = "ajtbl") -> Any:
    """JAX's primitives tutorial, written against library ``L``, registering the rules
    named in ``rules``: a(bstract eval), j(vp), t(ranspose), b(atching), l(owering)."""
    p = L.core.Primitive(name)

    def prim(x: Any, y: Any, z: Any) -> Any:
        return p.bind(x, y, z)

    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    if "a" in rules:
        p.def_abstract_eval(lambda xs, ys, zs: L.ShapedArray(xs.shape, xs.dtype))
    if "l" in rules:
        L.mlir.register_lowering(
            p, lambda ctx, x, y, z: [hlo.AddOp(hlo.MulOp(x, y).result, z).result], platform="cpu")

    def zero_as(x: Any, t: Any) -> Any:
        return L.m.lax.full_like(x, 0) if type(t) is L.ad.Zero else t

    def jvp(primals: Any, tangents: Any) -> Any:
        x, y, z = primals
        xt, yt, zt = tangents
        return prim(x, y, z), prim(zero_as(x, xt), y, prim(x, zero_as(x, yt), zero_as(x, zt)))

    def transpose(ct: Any, x: Any, y: Any, z: Any) -> Any:
        if not L.ad.is_undefined_primal(x):
            ct_y = (L.ad.Zero(y.aval) if type(ct) is L.ad.Zero
                    else prim(x, ct, L.m.lax.full_like(x, 0)))
            return None, ct_y, ct
        ct_x = (L.ad.Zero(x.aval) if type(ct) is L.ad.Zero
                else prim(ct, y, L.m.lax.full_like(y, 0)))
        return ct_x, None, ct

    def batch(vals: Any, dims: Any) -> Any:
        vals = [L.jnp.moveaxis(v, d, 0) if d is not None else v
                for v, d in zip(vals, dims)]
        n = next(v.shape[0] for v, d in zip(vals, dims) if d is not None)
        vals = [v if d is not None else L.jnp.broadcast_to(v, (n, *np.shape(v)))
                for v, d in zip(vals, dims)]
        return prim(*vals), 0

    if "j" in rules:
        L.ad.primitive_jvps[p] = jvp
    if "t" in rules:
        L.ad.primitive_transposes[p] = transpose
    if "b" in rules:
        L.batching.primitive_batchers[p] = batch
    return p, prim


def _both(fn: Any) -> list[Any]:
    return [fn(L) for L in LIBS]


def test_the_tutorial_program_gives_jaxs_values() -> None:
    def run(L: Any) -> list[Any]:
        _, prim = multiply_add(L)
        m = L.m

        def square_add(a: Any, b: Any) -> Any:
            return prim(a, a, b)
        x, y = np.array([2., 3.], np.float32), np.array([10., 20.], np.float32)
        return [square_add(2., 10.),
                m.jit(square_add)(2., 10.),
                m.jit(square_add, static_argnums=1)(2., 10.),
                *m.jvp(square_add, (2., 10.), (1., 1.)),
                *m.jit(lambda a, t: m.jvp(square_add, a, t))((2., 10.), (1., 1.)),
                m.grad(square_add)(2., 10.),
                m.jit(m.grad(square_add))(2., 10.),
                m.grad(square_add, argnums=1)(2., 10.),
                m.vmap(square_add)(x, y),
                m.jit(m.vmap(square_add))(x, y),
                m.vmap(square_add, in_axes=(0, None))(x, 10.),
                m.vmap(m.grad(lambda a: square_add(a, 1.) * 3.))(x),
                m.jacfwd(m.grad(lambda a: square_add(a, 1.)))(2.),
                m.hessian(lambda a: prim(a, a, a) * a)(1.5)]
    ours, theirs = _both(run)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)


def test_the_gradient_program_is_jaxs() -> None:
    _, prim = multiply_add(PLAIT)
    closed = plait.make_jaxpr(plait.grad(lambda a, b: prim(a, a, b)))(2., 10.)
    check_jaxpr(closed.jaxpr)
    assert [e.primitive.name for e in closed.jaxpr.eqns].count("multiply_add") == 2
    assert parse_jaxpr(str(closed.jaxpr)) == closed.jaxpr
    batched = plait.make_jaxpr(plait.vmap(lambda a, b: prim(a, a, b)))(np.ones(3), np.ones(3))
    check_jaxpr(batched.jaxpr)


def test_without_a_lowering_transformations_outside_jit_run_the_impl_as_jax() -> None:
    def run(L: Any) -> list[Any]:
        _, prim = multiply_add(L, "ma_eager", "ajtb")
        m = L.m

        def f(a: Any, b: Any) -> Any:
            return prim(a, a, b)
        return [*m.jvp(f, (2., 10.), (1., 1.)), m.grad(f)(3., 1.),
                m.vmap(f)(np.array([1., 2.]), np.array([3., 4.]))]
    ours, theirs = _both(run)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)


@pytest.mark.parametrize("missing, call, message", [
    ("a", lambda m, f: m.jit(f)(2., 10.), "Abstract evaluation rule for 'ma' not implemented"),
    ("l", lambda m, f: m.jit(f)(2., 10.), "Lowering rule for 'ma' not implemented"),
    ("j", lambda m, f: m.jvp(f, (2., 10.), (1., 1.)), "JVP rule for 'ma' not implemented"),
    ("t", lambda m, f: m.grad(f)(2., 10.), "Transpose rule for 'ma' not implemented"),
    ("b", lambda m, f: m.vmap(f)(np.ones(2), np.ones(2)),
     "Batching rule for 'ma' not implemented"),
])
def test_a_missing_rule_raises_not_implemented_as_jax(missing: str, call: Any,
                                                      message: str) -> None:
    for L in LIBS:
        _, prim = multiply_add(L, "ma", "ajtbl".replace(missing, ""))
        with pytest.raises(NotImplementedError) as info:
            call(L.m, lambda a, b, prim=prim: prim(a, a, b))
        # (Exactly NotImplementedError, as JAX's: its primitives tutorial checks
        # ``type is NotImplementedError``.)
        assert type(info.value) is NotImplementedError
        if L is PLAIT:
            assert message in str(info.value)
            assert (info.value.transform, info.value.primitive) == (  # type: ignore[attr-defined]
                message.split(" rule")[0], "ma")


def test_without_an_impl_eager_application_raises_as_jax() -> None:
    for L in LIBS:
        p = L.core.Primitive("no_impl")
        with pytest.raises(NotImplementedError, match="Evaluation rule for 'no_impl' not "
                                                      "implemented") as info:
            p.bind(1.0)
        assert type(info.value) is NotImplementedError


def test_the_impl_receives_the_arguments_as_jaxs_does() -> None:
    for L in LIBS:
        p = L.core.Primitive("echo")
        p.def_impl(lambda *args, **params: (args, params))
        (x, y, z), params = p.bind(1.5, np.ones(2), L.jnp.ones(2), k=3)
        assert x == 1.5 and params == {"k": 3}
        assert y.dtype == np.float32 and isinstance(z, L.m.Array)
        with pytest.raises(TypeError, match="echo"):
            p.bind(1.5, "x")


def _sincos(L: Any) -> Any:
    """A primitive of two results with params, lowered by ``lower_fun``, its JVP by hand."""
    p = L.core.Primitive("sincos")
    p.multiple_results = True

    def impl(x: Any, *, scale: float) -> list[Any]:
        return [L.jnp.sin(x) * scale, L.jnp.cos(x) * scale]
    p.def_impl(impl)
    p.def_abstract_eval(lambda x, *, scale: [L.ShapedArray(x.shape, x.dtype)] * 2)
    L.mlir.register_lowering(p, L.mlir.lower_fun(impl, multiple_results=True))

    def jvp(primals: Any, tangents: Any, *, scale: float) -> Any:
        (x,), (t,) = primals, tangents
        s, c = p.bind(x, scale=scale)
        return [s, c], [c * t, -s * t]
    L.ad.primitive_jvps[p] = jvp

    def batch(vals: Any, dims: Any, *, scale: float) -> Any:
        return p.bind(vals[0], scale=scale), [dims[0], dims[0]]
    L.batching.primitive_batchers[p] = batch
    return p


def test_multiple_results_params_and_lower_fun_as_jax() -> None:
    def run(L: Any) -> list[Any]:
        p = _sincos(L)
        m = L.m

        def f(x: Any) -> Any:
            s, c = p.bind(x, scale=2.0)
            return (s * c).sum()
        x = np.linspace(-1, 1, 5, dtype=np.float32)
        return [*p.bind(x, scale=2.0), *m.jit(lambda x: p.bind(x, scale=2.0))(x),
                m.grad(f)(x), m.jit(m.grad(f))(x), m.vmap(m.grad(f))(x.reshape(5, 1)),
                *m.jit(m.vmap(lambda x: p.bind(x, scale=3.0), in_axes=1))(x.reshape(1, 5))]
    ours, theirs = _both(run)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)


def test_params_print_parse_and_check() -> None:
    p = _sincos(PLAIT)
    closed = plait.make_jaxpr(lambda x: p.bind(x, scale=2.0))(np.ones(3, np.float32))
    assert "sincos[scale=2.0]" in str(closed.jaxpr)
    assert parse_jaxpr(str(closed.jaxpr)) == closed.jaxpr
    check_jaxpr(plait.make_jaxpr(plait.grad(lambda x: p.bind(x, scale=2.0)[0].sum()))(
        np.ones(3, np.float32)).jaxpr)


def test_defjvp_and_deflinear_as_jax() -> None:
    def run(L: Any) -> list[Any]:
        cube = L.core.Primitive("cube")
        cube.def_impl(lambda x: x ** 3)
        cube.def_abstract_eval(lambda x: L.ShapedArray(x.shape, x.dtype))
        L.mlir.register_lowering(cube, L.mlir.lower_fun(lambda x: x * x * x, False))
        L.ad.defjvp(cube, lambda t, x: 3 * x * x * t)
        twice = L.core.Primitive("twice")
        twice.def_impl(lambda x: 2 * x)
        twice.def_abstract_eval(lambda x: L.ShapedArray(x.shape, x.dtype))
        L.mlir.register_lowering(twice, L.mlir.lower_fun(lambda x: 2 * x, False))
        L.ad.deflinear(twice, lambda ct: [twice.bind(ct)])
        for p in (cube, twice):
            L.batching.defvectorized(p)
        m = L.m

        def f(x: Any) -> Any:
            return twice.bind(cube.bind(x)).sum()
        x = np.array([0.5, -1.0, 2.0], np.float32)
        return [m.grad(f)(x), m.jit(m.grad(f))(x), m.jvp(f, (x,), (np.ones(3, np.float32),))[1],
                m.hessian(f)(x)]
    ours, theirs = _both(run)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 3), max_size=3),
       axis=st.integers(0, 3), seed=st.integers(0, 2 ** 16))
def test_transformations_agree_with_the_same_program_in_numpy_terms(
        shape: list[int], axis: int, seed: int) -> None:
    """Rule agreement: a user primitive under jit/grad/vmap gives what ``x * y + z``
    written with plait.numpy gives."""
    _, prim = multiply_add(PLAIT, "ma_prop")
    rng = np.random.default_rng(seed)
    x, y, z = (rng.normal(size=(2, *shape)).astype(np.float32) for _ in range(3))
    axis = axis % (len(shape) + 1)
    xs, ys, zs = (np.moveaxis(a, 0, axis) for a in (x, y, z))

    def loss(f: Any) -> Any:
        return lambda a, b, c: (f(a, b, c) ** 2).sum()

    def ref(a: Any, b: Any, c: Any) -> Any:
        return a * b + c
    cases: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (plait.jit, (x, y, z)),
        (lambda f: plait.vmap(f, in_axes=axis), (xs, ys, zs)),
        (lambda f: plait.jit(plait.vmap(f, in_axes=(axis, None, axis))), (xs, y[0], zs)),
        (lambda f: plait.grad(loss(f), argnums=(0, 1, 2)), (x, y, z))]
    for tr, args in cases:
        np.testing.assert_allclose(_flat(tr(prim)(*args)), _flat(tr(ref)(*args)),
                                   rtol=1e-5, atol=1e-6)


def _flat(x: Any) -> np.ndarray[Any, Any]:
    leaves = plait.tree.leaves(x)
    return np.concatenate([np.ravel(np.asarray(a)) for a in leaves])


# -- bad input -----------------------------------------------------------------

def test_rules_of_plaits_own_primitives_cannot_be_replaced() -> None:
    with pytest.raises(TypeError, match="expected a primitive made with "
                                        "plait.extend.core.Primitive, but got sin"):
        pad.primitive_jvps[plait.lax.sin_p] = lambda p, t: (p, t)
    with pytest.raises(TypeError, match="mlir.register_lowering: expected a primitive"):
        pmlir.register_lowering(plait.lax.exp_p, lambda ctx, x: [x])


def test_a_user_primitive_may_not_take_a_builtin_name() -> None:
    with pytest.raises(ValueError, match="a primitive named 'sin' already exists"):
        pcore.Primitive("sin")
    pcore.Primitive("redefined")
    again = pcore.Primitive("redefined")  # (a notebook cell run twice)
    assert PRIMITIVES["redefined"] is again


def test_unhashable_params_are_refused_with_the_fix() -> None:
    p = _sincos(PLAIT)
    with pytest.raises(JaxprTypeError, match=r"sincos: expected hashable parameters, but "
                                             r"scale=\[2.0\] is a list: pass a tuple"):
        plait.jit(lambda x: p.bind(x, scale=[2.0]))(np.ones(2, np.float32))


def test_a_wrong_tangent_type_is_named() -> None:
    p = pcore.Primitive("badjvp")
    p.def_abstract_eval(lambda x: plait.core.ShapedArray(x.shape, x.dtype))
    pad.primitive_jvps[p] = lambda ps, ts: (p.bind(*ps), pjnp.zeros(4))
    with pytest.raises(TransformError, match=r"badjvp: expected the tangent output to be of "
                                             r"type f32\[3\], but got f32\[4\]"):
        plait.make_jaxpr(lambda x: plait.jvp(lambda y: p.bind(y), (x,), (x,)))(pjnp.ones(3))


def test_a_lowering_rule_of_the_wrong_type_is_named() -> None:
    p = pcore.Primitive("badlower")
    p.def_abstract_eval(lambda x: plait.core.ShapedArray(x.shape, x.dtype))
    pmlir.register_lowering(p, lambda ctx, x: [hlo.ConvertOp(
        pmlir.aval_to_ir_type(plait.core.ShapedArray(x.type.shape, np.int32)), x).result])
    with pytest.raises(TransformError, match=r"badlower: expected the lowering rule to "
                                             r"return values of types \(tensor<3xf32>\), "
                                             r"but got \(tensor<3xi32>\)"):
        plait.jit(lambda x: p.bind(x))(pjnp.ones(3))


def test_ir_constant_and_aval_to_ir_type_build_ops_in_a_rule() -> None:
    def run(L: Any) -> Any:
        p = L.core.Primitive("plus_one")
        p.def_abstract_eval(lambda x: L.ShapedArray(x.shape, x.dtype))
        L.mlir.register_lowering(p, lambda ctx, x: [hlo.AddOp(x, L.mlir.ir_constant(
            np.ones((3,), np.float32))).result])
        return np.asarray(L.m.jit(lambda x: p.bind(x))(np.arange(3, dtype=np.float32)))
    ours, theirs = _both(run)
    np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(TypeError, match="expected the abstract evaluation rule"):
        p = pcore.Primitive("not_a_type")
        p.def_abstract_eval(lambda x: "f32[3]")
        plait.make_jaxpr(lambda x: p.bind(x))(pjnp.ones(3))


def test_only_multiple_results_can_be_set() -> None:
    p = pcore.Primitive("frozen_rest")
    with pytest.raises(AttributeError, match="only multiple_results can be set"):
        p.name = "other"  # type: ignore[misc]  # (the error under test)


def test_an_abstract_eval_returning_something_else_is_named() -> None:
    p = pcore.Primitive("bad_aval")
    p.def_abstract_eval(lambda x: (3,))
    with pytest.raises(TypeError, match=r"bad_aval: expected the abstract evaluation rule to "
                                        r"return a plait.core.ShapedArray, but got \(3,\)"):
        plait.make_jaxpr(lambda x: p.bind(x))(1.0)


def test_jaxpr_as_fun_applies_a_jaxpr_under_transformations() -> None:
    closed = plait.make_jaxpr(lambda x: pjnp.sin(x) * 2.0)(1.0)
    f = pcore.jaxpr_as_fun(closed)
    np.testing.assert_allclose(f(0.5)[0], 2 * np.sin(0.5), rtol=1e-6)
    np.testing.assert_allclose(plait.grad(lambda x: f(x)[0])(0.5), 2 * np.cos(0.5), rtol=1e-6)
    with pytest.raises(TypeError, match="jaxpr_as_fun: expected a ClosedJaxpr"):
        pcore.jaxpr_as_fun(closed.jaxpr)  # type: ignore[arg-type]  # (the error under test)


def _rebind_each_equation(lib: Any, core: Any, np_: Any) -> Any:
    # (equinox's finalise_jaxpr re-applies a jaxpr's equations this way)
    def f(x: Any) -> Any:
        return lib.lax.cond(x > 0, np_.sin, np_.cos, x) * 2.0
    closed = lib.make_jaxpr(f)(0.5)

    def apply(x: Any) -> Any:
        env = dict(zip(closed.jaxpr.invars, [x]))
        for eqn in closed.jaxpr.eqns:
            params = eqn.primitive.get_bind_params(eqn.params)
            args = [a.val if isinstance(a, core.Literal) else env[a] for a in eqn.invars]
            outs = eqn.primitive.bind(*args, **params)
            env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
        return env[closed.jaxpr.outvars[0]]
    return [apply(0.5), apply(-0.5), lib.grad(apply)(0.5), lib.jit(apply)(-0.5)]


def test_equations_rebind_with_their_bind_params_as_jaxs() -> None:
    ours = _rebind_each_equation(plait, pcore, pjnp)
    theirs = _rebind_each_equation(jax, jcore, jjnp)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-6)


def test_in_loops_and_branches_with_captured_constants() -> None:
    """Against the same program with ``*``: the primitive in a scan body under grad and
    vmap (its MLIR-bindings lowering inside a loop's region), and lower_fun capturing an
    array, in a cond branch."""
    p = pcore.Primitive("times")
    p.def_abstract_eval(lambda x, y: plait.core.ShapedArray(x.shape, x.dtype))
    pmlir.register_lowering(p, lambda ctx, x, y: [hlo.MulOp(x, y).result])
    pad.defjvp(p, lambda t, x, y: p.bind(t, y), lambda t, x, y: p.bind(x, t))
    pad.primitive_transposes[p] = lambda ct, x, y: (
        p.bind(ct, y) if pad.is_undefined_primal(x) else None,
        p.bind(x, ct) if pad.is_undefined_primal(y) else None)

    def batch(vals: Any, dims: Any) -> Any:
        # (as JAX, a loop's rule probes its body with the carry unmapped first)
        n = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
        return p.bind(*[pjnp.moveaxis(v, d, 0) if d is not None else
                        pjnp.broadcast_to(v, (n, *v.shape)) for v, d in zip(vals, dims)]), 0
    pbatching.primitive_batchers[p] = batch

    def loop(times: Any) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            return plait.lax.scan(lambda c, xi: (times(c, xi) + 1., c), pjnp.ones(3), x)[0].sum()
        return f
    x = np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 10
    cases: list[tuple[Callable[..., Any], Any]] = [
        (plait.jit, x[0]), (lambda f: plait.jit(plait.grad(f)), x[0]),
        (lambda f: plait.jit(plait.vmap(plait.grad(f))), x)]
    for tr, arg in cases:
        np.testing.assert_allclose(np.asarray(tr(loop(p.bind))(arg)),
                                   np.asarray(tr(loop(lambda a, b: a * b))(arg)), rtol=1e-6)
    w = np.arange(3.0, dtype=np.float32)
    q = pcore.Primitive("plus_w")
    q.def_abstract_eval(lambda x: plait.core.ShapedArray(x.shape, x.dtype))
    pmlir.register_lowering(q, pmlir.lower_fun(lambda x: x + w, multiple_results=False))
    got = plait.jit(lambda v: plait.lax.cond(v.sum() > 0, q.bind, lambda u: u, v))(pjnp.ones(3))
    np.testing.assert_array_equal(np.asarray(got), 1 + w)


def _scaled_by_axis(L: Any) -> Any:
    """A primitive batched by an axis rule (JAX's ``axis_primitive_batchers``, which
    equinox registers): the rule is told the axis's size and name."""
    p = L.core.Primitive("scaled_by_axis")
    p.def_impl(lambda x: x * 2)
    p.def_abstract_eval(lambda a: L.ShapedArray(a.shape, a.dtype))
    p.def_impl(lambda x: np.multiply(x, 2))
    L.mlir.register_lowering(p, L.mlir.lower_fun(lambda x: x * 2, multiple_results=False))
    seen: list[Any] = []

    def rule(size: Any, name: Any, trace_type: Any, args: Any, dims: Any) -> Any:
        seen.append((int(size), name, trace_type, tuple(dims)))
        (x,), (d,) = args, dims
        return p.bind(x) + size, d
    L.batching.axis_primitive_batchers[p] = rule
    return p, seen


@pytest.mark.parametrize("axis_name", [None, "i"])
def test_axis_batching_rules_are_told_the_axis_as_jaxs(axis_name: str | None) -> None:
    results = []
    for L in LIBS:
        p, seen = _scaled_by_axis(L)
        out = L.m.vmap(p.bind, in_axes=1, axis_name=axis_name)(
            np.arange(6.0, dtype=np.float32).reshape(2, 3))
        results.append((np.asarray(out).tolist(), seen))
    (ours, our_seen), (theirs, their_seen) = results
    assert ours == theirs
    # (Without a name JAX passes a fresh sentinel object, plait None.)
    assert [s[:1] + s[2:] for s in our_seen] == [s[:1] + s[2:] for s in their_seen]
    assert [s[1] for s in our_seen] == [axis_name] * len(our_seen)


def test_mapped_and_unmapped_avals_are_jaxs() -> None:
    shape = (3, 5, 4)
    for axis in (None, 0, 2):
        size = 4 if axis is None else shape[axis]
        ours = pcore.mapped_aval(size, axis, plait.core.ShapedArray(shape, np.float32))
        theirs: Any = jcore.mapped_aval(size, axis, jax.core.ShapedArray(shape, np.float32))
        assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)
        up = pcore.unmapped_aval(7, axis, plait.core.ShapedArray((3, 5), np.int32))
        jup: Any = jcore.unmapped_aval(7, axis, jax.core.ShapedArray((3, 5), np.int32))
        assert (up.shape, up.dtype) == (jup.shape, jup.dtype)
    for dtype in (np.int32, np.float32):
        t: Any = plait.core.ShapedArray((2,), dtype).to_tangent_aval()
        jt: Any = jax.core.ShapedArray((2,), dtype).to_tangent_aval()
        assert (t.shape, t.dtype) == (jt.shape, jt.dtype)
    with pytest.raises(ValueError, match=r"mapped_aval: expected a dimension 1 of size 4"):
        pcore.mapped_aval(4, 1, plait.core.ShapedArray((3, 5), np.float32))
    with pytest.raises(ValueError, match=r"unmapped_aval: expected an axis in \[0, 2\]"):
        pcore.unmapped_aval(4, 3, plait.core.ShapedArray((3, 5), np.float32))


def _impl_only_calls(L: Any, prim: Any) -> tuple[Any, Any]:
    @L.m.custom_jvp
    def g(x: Any) -> Any:
        return prim.bind(x) + 1

    g.defjvp(lambda p, t: (g(p[0]), t[0] * 3))
    f = L.m.checkpoint(lambda x: prim.bind(x) * L.jnp.sin(x) + g(x))
    return f(2.0), L.m.grad(f)(2.0)


def test_an_impl_without_lowering_runs_inside_calls_outside_jit() -> None:
    """A primitive with an impl and no lowering, under ``checkpoint`` and a
    ``custom_jvp`` function, differentiated outside ``jit``: the calls' bodies are
    evaluated operation by operation, as JAX's are (haiku's stateful remat test)."""
    results = []
    for L in LIBS:
        prim = L.core.Primitive("impl_only")
        prim.def_impl(lambda x: x * 3)
        prim.def_abstract_eval(lambda x: x)
        L.ad.deflinear(prim, lambda ct: (ct * 3,))

        results.append(_impl_only_calls(L, prim))
    (o_val, o_grad), (t_val, t_grad) = results
    np.testing.assert_allclose(o_val, t_val, rtol=1e-6)
    np.testing.assert_allclose(o_grad, t_grad, rtol=1e-6)

"""What diffrax, lineax and optimistix (built on equinox) need of JAX's API, each
against JAX 0.10.2 without the libraries: ``linearize(has_aux=)``, ``eval_shape`` of a
function returning ``ShapeDtypeStruct``, ``custom_vjp``'s ``perturbed`` flags,
transposing a ``custom_jvp`` function, primitive parameters named ``prim``, a transpose
rule for ``stop_gradient``, ``find_top_trace``/``JVPTracer`` and ``zero_from_primal``."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.extend import core as jcore
from jax.interpreters import ad as jad

import plait
import plait.numpy as pjnp
from plait.extend import core as pcore
from plait.interpreters import ad as pad
from plait.ir.primitives import stop_gradient_p

X = np.array([0.3, -1.2, 2.0], np.float32)


def _both(f: Any) -> tuple[Any, Any]:
    return f(plait, pjnp), f(jax, jjnp)


def test_linearize_with_aux_is_jaxs() -> None:
    def run(lib: Any, np_: Any) -> Any:
        out, f_jvp, aux = lib.linearize(lambda x: (np_.sin(x) * x, (np_.argmax(x), x ** 2)),
                                        X, has_aux=True)
        return out, f_jvp(np.ones(3, np.float32)), aux
    ours, theirs = _both(run)
    for o, t in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)
    assert np.asarray(ours[2][0]).dtype == np.int32


def test_eval_shape_passes_returned_structs_through() -> None:
    def run(lib: Any, np_: Any) -> Any:
        return lib.eval_shape(lambda x: (x, lib.ShapeDtypeStruct((2,), np.int32, weak_type=True),
                                         {"s": 3.0}), np_.ones(3))
    ours, theirs = _both(run)
    assert repr(ours) == repr(theirs)


def _perturbed_flags(lib: Any, np_: Any) -> list[bool]:
    seen: list[bool] = []

    @lib.custom_vjp
    def f(x: Any, y: Any, z: Any, n: Any) -> Any:
        return x * y + z

    def fwd(x: Any, y: Any, z: Any, n: Any) -> Any:
        seen.extend([x.perturbed, y.perturbed, z.perturbed, n.perturbed])
        return f(x.value, y.value, z.value, n.value), (x.value, y.value)

    def bwd(res: Any, g: Any) -> Any:
        return g * res[1], g * res[0], g, None

    f.defvjp(fwd, bwd, symbolic_zeros=True)

    def loss(x: Any, c: Any) -> Any:
        # y depends on x only through stop_gradient, z on the constant, n is an integer
        return f(x, lib.lax.stop_gradient(x) + 1.0, c * 2.0, np_.int32(3)).sum()

    lib.grad(loss)(X, X)
    lib.jit(lib.grad(loss))(X, X)
    return seen


def test_custom_vjp_fwd_sees_perturbed_flags_as_jaxs() -> None:
    # (equinox's custom_vjps assert that their non-differentiated arguments are unperturbed)
    ours, theirs = _both(_perturbed_flags)
    assert ours == theirs == [True, False, False, False] * 2


def _clip_rule_program(lib: Any, np_: Any) -> Any:
    @lib.custom_jvp
    def as_float(x: Any) -> Any:
        return np_.asarray(x, np.float32)

    @as_float.defjvp
    def as_float_jvp(primals: Any, tangents: Any) -> Any:
        # (optimistix's rule: the function applied to the tangent, so that the linear
        # program holds a call of it)
        return as_float(primals[0]), as_float(tangents[0])

    def f(x: Any) -> Any:
        return np_.sum(as_float(x * 2.0) * np_.cos(x))

    transposed = lib.linear_transpose(lambda t: as_float(t * 3.0), X)(np.ones(3, np.float32))
    return lib.grad(f)(X), lib.jit(lib.grad(f))(X), transposed


def test_custom_jvp_function_of_tangents_transposes_as_jaxs() -> None:
    ours, theirs = _both(_clip_rule_program)
    for o, t in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)


def test_primitive_parameters_may_be_named_prim() -> None:
    # (equinox's batching rule binds its primitive with a parameter named prim)
    results = []
    for core in (pcore, jcore):
        p = core.Primitive("named_params")
        p.def_impl(lambda x, *, prim: x * prim)
        p.def_abstract_eval(lambda x, *, prim: x)
        lib = plait if core is pcore else jax
        staged = lib.make_jaxpr(functools.partial(p.bind, prim=3.0))(2.0)
        results.append([float(p.bind(2.0, prim=3.0)), staged.eqns[0].params["prim"]])
    assert results[0] == results[1] == [6.0, 3.0]


def test_a_missing_transpose_rule_of_plaits_own_may_be_added() -> None:
    # (lineax gives stop_gradient a transpose rule; plait, as JAX, has none)
    def f(t: Any) -> Any:
        return plait.lax.stop_gradient(t) * 2.0

    with pytest.raises(plait.errors.RuleNotImplementedError,
                       match="Transpose rule for 'stop_gradient' not implemented"):
        plait.linear_transpose(f, X)(X)
    pad.primitive_transposes[stop_gradient_p] = lambda ct, x: (ct,)
    try:
        np.testing.assert_array_equal(np.asarray(plait.linear_transpose(f, X)(X)[0]), X * 2)
    finally:
        del pad.primitive_transposes[stop_gradient_p]
    with pytest.raises(plait.errors.RuleNotImplementedError, match="stop_gradient"):
        plait.linear_transpose(f, X)(X)
    with pytest.raises(TypeError, match="the rules of plait's own primitives cannot be replaced"):
        pad.primitive_transposes[plait.extend.core.primitives.neg_p] = lambda ct, x: (ct,)


def _tracer_kinds(lib: Any, np_: Any, core: Any, ad: Any) -> list[bool]:
    kinds: list[bool] = []

    def f(x: Any, k: Any) -> Any:
        main = core.find_top_trace([x, k]).main
        values = [x, x * 2.0, lib.lax.stop_gradient(x), np_.argmax(x), k * 2.0, np_.float32(1.0)]
        # A jit's results, each as it depends on the jit's arguments
        values += lib.jit(lambda a, b: (a * 2.0, b + 1.0, a * b))(x, np_.ones(3))
        kinds.extend(isinstance(v, ad.JVPTracer) and v._trace.main is main for v in values)
        return x

    lib.jvp(f, (X, X), (X, X * 0))
    return kinds


def test_find_top_trace_and_jvp_tracers_answer_as_jaxs() -> None:
    # (equinox's filter_jvp keeps as differentiated the results that are JVP tracers of
    # its trace)
    ours = _tracer_kinds(plait, pjnp, pcore, pad)
    theirs = _tracer_kinds(jax, jjnp, jcore, jad)
    assert ours == theirs == [True, True, False, False, True, False, True, False, True]
    assert pcore.find_top_trace([1.0]) is None


def test_zero_from_primal_is_jaxs() -> None:
    tree = (np.int32(1), (np.ones(2, np.float32), 3.0))
    for symbolic in (True, False):
        ours = plait.custom_derivatives.zero_from_primal(tree, symbolic_zeros=symbolic)
        theirs = jax.custom_derivatives.zero_from_primal(tree, symbolic_zeros=symbolic)
        assert str(jax.tree_util.tree_structure(ours)) == str(jax.tree_util.tree_structure(theirs))
        for o, t in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
            assert repr(o) == repr(t) if symbolic else np.asarray(o).dtype == np.asarray(t).dtype


def _custom_vjp_after_jit(lib: Any) -> list[Any]:
    seen: list[Any] = []

    @lib.custom_vjp
    def f(x: Any, y: Any) -> Any:
        return x * y

    def fwd(x: Any, y: Any) -> Any:
        seen.append((x.perturbed, y.perturbed))
        return f(x.value, y.value), (x.value, y.value, x.perturbed, y.perturbed)

    def bwd(res: Any, g: Any) -> Any:
        x, y, px, py = res
        return (g * y if px else None, g * x if py else None)

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    g = lib.jit(lambda x, y: f(x, y))
    # The program traced by the eager call is then differentiated in both arguments.
    return [float(g(2.0, 3.0)), float(lib.grad(g)(2.0, 3.0)), float(lib.grad(g, 1)(2.0, 3.0)),
            float(lib.grad(lambda x: lib.jit(lambda y: f(y, 3.0))(x))(2.0)), seen]


def test_custom_vjp_traced_outside_autodiff_differentiates_later() -> None:
    # (plait traced fwd with every input unperturbed under the eager jit, reused that
    # program under grad and gave zero gradients)
    ours = _custom_vjp_after_jit(plait)
    theirs = _custom_vjp_after_jit(jax)
    assert ours[:4] == theirs[:4] == [6.0, 3.0, 2.0, 3.0]
    # plait traces fwd once for the jit's program, with both inputs perturbed: JAX
    # calls it per differentiation (the closed-over constant 3.0 is unperturbed in both)
    assert ours[4] == [(True, True), (True, False)]
    assert theirs[4] == [(True, False), (False, True), (True, False)]


def _symbolic_zero_tangents(lib: Any) -> list[Any]:
    seen: list[Any] = []
    one = np.float32(1.0)

    @lib.custom_jvp
    def f(x: Any, y: Any) -> Any:
        return x * y

    @functools.partial(f.defjvp, symbolic_zeros=True)
    def f_jvp(primals: Any, tangents: Any) -> Any:
        seen.append([type(t).__name__ for t in tangents])
        x, y = primals
        tx, ty = tangents
        zero = type(tx).__name__ == "SymbolicZero"
        return f(x, y), (0.0 * x if zero else tx * y) + (
            0.0 * y if type(ty).__name__ == "SymbolicZero" else x * ty)

    out = lib.jvp(lambda x: f(x, lib.numpy.asarray(one) * 2.0), (3.0,), (1.0,))
    return [float(out[0]), float(out[1]), seen[-1]]


def test_custom_jvp_symbolic_zeros_mark_constant_inputs_as_jaxs() -> None:
    # (equinox's filter_custom_jvp asserts that a non-differentiated input's tangent is
    # None, its translation of a SymbolicZero)
    ours = _symbolic_zero_tangents(plait)
    theirs = _symbolic_zero_tangents(jax)
    assert ours[:2] == theirs[:2] == [6.0, 2.0]
    assert ours[2][1] == theirs[2][1] == "SymbolicZero"
    assert ours[2][0] != "SymbolicZero" and theirs[2][0] != "SymbolicZero"

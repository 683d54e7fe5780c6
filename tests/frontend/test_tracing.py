"""Tracing with make_jaxpr: pytrees, debug info, constants, closures, weak types, errors."""

from __future__ import annotations

import collections
import re
import traceback
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import errors
from plait.ir import Literal, shaped


def test_pytree_arguments_flatten_in_order_and_are_named() -> None:
    def f(x, params, *rest, scale=1.0):
        return x * params["w"] + params["b"] + rest[0] * scale

    closed = plait.make_jaxpr(f)(np.ones(3, np.float32), {"w": np.ones(3, np.float32),
                                                           "b": np.zeros(3, np.float32)},
                                 np.ones(3, np.float32), scale=2.0)
    jaxpr = closed.jaxpr
    assert len(jaxpr.invars) == 5
    assert jaxpr.debug_info is not None
    assert jaxpr.debug_info.arg_names == ("x", "params['b']", "params['w']", "rest[0]", "scale")
    assert jaxpr.debug_info.func_name == "f"


@pytest.mark.parametrize("out, paths", [
    (lambda x: x, ("result",)),
    (lambda x: (x, x + 1), ("result[0]", "result[1]")),
    (lambda x: {"k": x, "a": [x]}, ("result['a'][0]", "result['k']")),
])
def test_result_paths_follow_seed_004(out, paths) -> None:
    closed = plait.make_jaxpr(out)(1.0)
    assert closed.jaxpr.debug_info is not None
    assert closed.jaxpr.debug_info.result_paths == paths
    # JAX 0.10.2 agrees on the convention.
    jax_paths = jax.make_jaxpr(out)(1.0).jaxpr.debug_info.result_paths
    assert tuple(jax_paths) == paths


def test_arg_names_match_jax() -> None:
    def f(x, params, *rest):
        return x + params["w"] + rest[0]

    args = (1.0, {"w": 2.0, "b": 3.0}, 4.0)
    ours_info = plait.make_jaxpr(f)(*args).jaxpr.debug_info
    assert ours_info is not None
    ours = ours_info.arg_names
    theirs = jax.make_jaxpr(f)(*args).jaxpr.debug_info.arg_names
    assert tuple(ours) == tuple(theirs)


def test_shape_dtype_struct_arguments() -> None:
    spec = plait.ShapeDtypeStruct((2, 3), np.float32)
    closed = plait.make_jaxpr(lambda x: pnp.sum(x, axis=0))(spec)
    assert closed.in_avals == (plait.ShapedArray((2, 3), np.dtype(np.float32)),)
    assert closed.out_avals == (plait.ShapedArray((3,), np.dtype(np.float32)),)


def test_return_shape() -> None:
    closed, shape = plait.make_jaxpr(lambda x: (x, x[0]), return_shape=True)(
        np.ones((2, 3), np.float32))
    assert shape[0] == plait.ShapeDtypeStruct((2, 3), np.float32)
    assert shape[1] == plait.ShapeDtypeStruct((3,), np.float32)


def test_python_scalars_are_weak_and_keep_array_dtypes() -> None:
    closed = plait.make_jaxpr(lambda x: x * 3.0)(np.ones(2, np.float16))
    assert str(closed) == str(jax.make_jaxpr(lambda x: x * 3.0)(np.ones(2, np.float16)))
    weak = plait.make_jaxpr(lambda x: x * 3.0)(1.0)
    assert shaped(weak.out_avals[0]).weak_type
    strong = plait.make_jaxpr(lambda x: x * 3.0)(np.float32(1.0))
    assert not shaped(strong.out_avals[0]).weak_type


def test_closed_over_arrays_become_constvars_once() -> None:
    c = np.arange(3, dtype=np.float32)
    closed = plait.make_jaxpr(lambda x: x * c + c)(np.ones(3, np.float32))
    assert len(closed.jaxpr.constvars) == 1
    assert closed.consts[0] is c
    assert str(closed) == str(jax.make_jaxpr(lambda x: x * c + c)(np.ones(3, np.float32)))


def test_scalar_constants_are_inlined_as_literals() -> None:
    s = np.float32(2.5)
    closed = plait.make_jaxpr(lambda x: x * s)(np.ones(3, np.float32))
    assert not closed.jaxpr.constvars
    lit = closed.jaxpr.eqns[0].invars[1]
    assert isinstance(lit, Literal) and lit.val == 2.5


def test_closed_over_outer_tracers_become_consts_of_the_inner_jaxpr() -> None:
    inner_jaxprs = []

    def outer(x):
        y = pnp.sin(x)
        inner = plait.make_jaxpr(lambda z: z * y)(1.0)
        inner_jaxprs.append(inner)
        return y

    plait.make_jaxpr(outer)(np.ones((), np.float32))
    inner, = inner_jaxprs
    assert len(inner.jaxpr.constvars) == 1
    assert isinstance(inner.consts[0], plait.Array)  # the outer tracer itself


def test_hash_consing_merges_duplicate_pure_equations() -> None:
    closed = plait.make_jaxpr(lambda x: pnp.sin(x) + pnp.sin(x))(1.0)
    assert [e.primitive.name for e in closed.eqns] == ["sin", "add"]


def test_without_merging_every_operation_is_kept_as_in_jax() -> None:
    def f(np_: Any, x: Any, s: Any) -> Any:
        # exp(s) twice: merged, the gradient sums cotangents before exp's rule, not after.
        return np_.sum(np_.exp(s) * x + np_.exp(s) ** 2)

    x, s = np.array([0.3, -0.2], np.float32), np.array([0.1, 0.4], np.float32)
    want = jax.make_jaxpr(jax.grad(lambda x, s: f(jnp, x, s), argnums=1))(x, s)
    want_grad = jax.grad(lambda x, s: f(jnp, x, s), argnums=1)(x, s)
    jf = plait.jit(plait.grad(lambda x, s: f(pnp, x, s), argnums=1))
    merged = plait.make_jaxpr(plait.grad(lambda x, s: f(pnp, x, s), argnums=1))(x, s)
    assert [e.primitive.name for e in merged.eqns].count("exp") == 1
    # (at these values the merged program rounds one element differently)
    assert np.asarray(jf(x, s)).tobytes() != np.asarray(want_grad).tobytes()
    plait.config.update("merge_equations", False)
    try:
        kept = plait.make_jaxpr(plait.grad(lambda x, s: f(pnp, x, s), argnums=1))(x, s)
        got = jf(x, s)  # (a jit traced with merging on is traced again)
    finally:
        plait.config.update("merge_equations", True)
    names = [e.primitive.name for e in kept.eqns]
    assert names.count("exp") == [e.primitive.name for e in want.eqns].count("exp") == 2
    assert np.asarray(got).tobytes() == np.asarray(want_grad).tobytes()
    with pytest.raises(ValueError, match="invalid value 1 for config option 'merge_equations'"):
        plait.config.update("merge_equations", 1)


def test_two_traces_are_structurally_equal() -> None:
    def f(x, y):
        return pnp.sum(pnp.tanh(x) * y, axis=0)

    args = (np.ones((2, 3), np.float32), np.ones(3, np.float32))
    a, b = plait.make_jaxpr(f)(*args), plait.make_jaxpr(f)(*args)
    assert a is not b and a == b and hash(a) == hash(b)
    assert a != plait.make_jaxpr(lambda x, y: pnp.sum(pnp.tanh(x) + y, axis=0))(*args)


def test_static_argnums() -> None:
    closed = plait.make_jaxpr(lambda n, x: x * n, static_argnums=0)(7, np.ones(2, np.float32))
    assert len(closed.jaxpr.invars) == 1
    assert "mul a 7.0:f32[]" in str(closed)


def test_bool_of_tracer_names_line_and_suggests_fixes() -> None:
    def f(x):
        if x > 0:  # the offending line
            return x
        return -x

    with pytest.raises(errors.TracerBoolConversionError) as info:
        plait.make_jaxpr(f)(1.0)
    msg = str(info.value)
    line = f.__code__.co_firstlineno + 1
    assert f"test_tracing.py:{line}" in msg
    assert "depends on the value of x" in msg
    assert "lax.cond" in msg and "static_argnums" in msg


@pytest.mark.parametrize("convert, exc", [
    (int, errors.ConcretizationTypeError),
    (float, errors.ConcretizationTypeError),
    (np.asarray, errors.TracerArrayConversionError),
    (lambda t: range(t), errors.TracerIntegerConversionError),
])
def test_concretization_errors(convert, exc) -> None:
    with pytest.raises(exc, match="traced value of type"):
        plait.make_jaxpr(lambda x: convert(x))(np.int32(3))


def test_vmap_knows_values_computed_from_constants_as_jax() -> None:
    # JAX's vmap evaluates operations on unbatched values, so Python may read them.
    table = np.array([0.0, 2.0, 0.0, 5.0], np.float32)

    def f(L: Any) -> Any:
        def g(x: Any) -> Any:
            n = int(L.numpy.asarray(table).sum())
            if L.numpy.asarray(table)[1] > 1:  # a branch on a constant
                x = x * 2
            idx = L.numpy.nonzero(L.numpy.asarray(table))[0]  # needs a concrete size
            return x[idx].sum() * n + float(L.numpy.max(L.numpy.asarray(table)))
        return g

    xs = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(plait.vmap(f(plait))(xs)),
                                  np.asarray(jax.vmap(f(jax))(xs)))
    # Under grad, inside vmap: the constant stays known, the batched value does not.
    np.testing.assert_array_equal(
        np.asarray(plait.vmap(plait.grad(lambda x: f(plait)(x)))(xs)),
        np.asarray(jax.vmap(jax.grad(lambda x: f(jax)(x)))(xs)))


def test_vmap_refuses_python_values_of_batched_values() -> None:
    with pytest.raises(errors.ConcretizationTypeError,
                       match=r"conversion with float\(\) of a traced value of type "
                             r"float32\[\] .*while tracing <lambda> for vmap. Its value is not "
                             r"known during tracing. It depends on the value of x"):
        plait.vmap(lambda x: x * float(x.sum()))(np.ones((2, 3), np.float32))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.vmap(lambda x: x * float(x.sum()))(np.ones((2, 3), np.float32))


def test_vmap_of_a_data_dependent_size_keeps_its_specific_error() -> None:
    # Values computed from batched arguments stay unknown: nonzero asks for size=.
    xs = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    with pytest.raises(errors.ConcretizationTypeError, match="The size argument of "
                                                             "jnp.nonzero must be statically"):
        plait.vmap(lambda v: pnp.nonzero(v))(xs)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.vmap(lambda v: jnp.nonzero(v))(xs)


def test_leaked_tracer_is_a_clear_error() -> None:
    leaked = []

    def f(x):
        leaked.append(x)
        return x

    plait.make_jaxpr(f)(1.0)
    with pytest.raises(errors.UnexpectedTracerError, match="leaked out of the trace of f for "
                                                           "make_jaxpr, which has ended"):
        plait.make_jaxpr(lambda y: y + leaked[0])(1.0)
    with pytest.raises(errors.UnexpectedTracerError):
        pnp.sin(leaked[0])


def test_bad_argument_names_its_path() -> None:
    with pytest.raises(errors.ArgumentError, match=r"str .* at params\['w'\]"):
        plait.make_jaxpr(lambda x, params: x)(1.0, {"w": "nope"})


def test_bad_result_names_its_path() -> None:
    with pytest.raises(errors.ArgumentError, match=r"at result\[1\]"):
        plait.make_jaxpr(lambda x: (x, "nope"))(1.0)


def _frames(exc: BaseException) -> list[str]:
    return [f.filename for f in traceback.extract_tb(exc.__traceback__)]


def test_tracebacks_hide_plait_internals_unless_asked() -> None:
    def f(x):
        return pnp.reshape(x, (7,))

    with pytest.raises(errors.IncompatibleShapesError) as info:
        plait.make_jaxpr(f)(np.ones(3, np.float32))
    internal = [p for p in _frames(info.value) if "/plait/" in p]
    assert internal == []
    plait.config.update("traceback_filtering", "off")
    try:
        with pytest.raises(errors.IncompatibleShapesError) as info:
            plait.make_jaxpr(f)(np.ones(3, np.float32))
        assert any("/plait/frontend/numpy" in p for p in _frames(info.value))
    finally:
        plait.config.update("traceback_filtering", "on")


def test_frames_of_every_layer_are_internal() -> None:
    # A typing rule (plait/ir) raises: its frames are plait's too, not only the frontend's.
    def f(x, n):
        return plait.lax.add(x, n)

    with pytest.raises(errors.JaxprTypeError) as info:
        plait.make_jaxpr(f)(np.ones(3, np.float32), np.ones(3, np.int32))
    assert [p for p in _frames(info.value) if "/plait/" in p] == []


def test_source_info_is_the_user_line_for_every_layer() -> None:
    def f(x):
        y = pnp.sin(x)  # through plait.numpy
        return plait.lax.cos(y)  # through plait.lax

    closed = plait.make_jaxpr(f)(1.0)
    infos = [e.source_info for e in closed.jaxpr.eqns]
    assert all(i is not None for i in infos)
    lines = [i.line for i in infos if i is not None]
    first = f.__code__.co_firstlineno
    assert [i.file for i in infos if i is not None] == [__file__] * 2
    assert lines == [first + 1, first + 2]


def test_pytree_containers() -> None:
    Point = collections.namedtuple("Point", "x y")
    arg = (Point(1.0, 2.0), collections.OrderedDict(b=3.0, a=4.0), None, [5.0])
    closed = plait.make_jaxpr(lambda t: t[0].x + t[1]["a"] + t[3][0])(arg)
    assert len(closed.jaxpr.invars) == 5
    assert re.search(r"add a d", str(closed))


def test_eval_shape_matches_jax() -> None:
    def f(np_):
        return lambda x, y, s: {"a": np_.matmul(x, y) * s, "b": (x.sum(), y.astype(np_.int32))}

    ours = plait.eval_shape(f(pnp), plait.ShapeDtypeStruct((2, 3), np.float32),
                            np.ones((3, 4), np.float32), 2.0)
    theirs = jax.eval_shape(f(jnp), jax.ShapeDtypeStruct((2, 3), np.float32),
                            np.ones((3, 4), np.float32), 2.0)
    flat_o, tree_o = plait.tree_util.tree_flatten(ours)
    flat_t, tree_t = jax.tree_util.tree_flatten(theirs)
    assert str(tree_o) == str(tree_t)
    assert [(o.shape, o.dtype) for o in flat_o] == [(t.shape, t.dtype) for t in flat_t]


def test_temporary_constants_are_not_mistaken_for_each_other() -> None:
    # Each index array is a temporary converted (int64 -> int32) when hoisted; the next
    # temporary may get its id, which must not bring back the first one's constant.
    p = np.arange(10.0, dtype=np.float32)

    def f(x: Any) -> Any:
        return x[np.array([1, 2, 3])], x[np.array([0, 1, 2])], x[np.array([7, 8, 9])]
    for got, want in zip(plait.jit(f)(p), (p[[1, 2, 3]], p[[0, 1, 2]], p[[7, 8, 9]])):
        np.testing.assert_array_equal(np.asarray(got), want)


def _printed(lib: Any, np_: Any) -> list[str]:
    seen: list[str] = []

    def show(x: Any) -> Any:
        seen.append(repr(x))
        seen.append(f"{x}")
        return x
    lib.jit(show)(1)
    lib.jit(show)(np_.ones((2, 3), np_.bfloat16))
    lib.vmap(show)(np_.ones((4, 2), np_.int8))
    lib.vmap(show, in_axes=1)(np_.ones((2, 5)))
    lib.grad(show)(np.float32(1.5))
    lib.vjp(show, 2.0)
    lib.linearize(show, 2.0)
    lib.jit(lib.grad(show))(2.0)
    lib.grad(lambda x: show(x * 3.0))(2.0)
    lib.lax.scan(lambda c, x: (show(c), show(x)), 0.0, np_.ones(3))
    lib.lax.cond(True, show, lambda x: show(x + 1), np_.int32(3))
    return seen


def test_traced_values_print_as_jaxs_tracers() -> None:
    assert _printed(plait, pnp) == _printed(jax, jnp)


def test_jvp_tracers_print_the_primal_and_the_tangent_type() -> None:
    # (JAX prints the tangent's value, which plait's trace does not compute.)
    seen: list[str] = []

    def show(x: Any) -> Any:
        seen.append(repr(x))
        return x
    plait.jvp(show, (2.0,), (1.0,))
    plait.jvp(show, (np.arange(3),), (np.zeros(3, jax.dtypes.float0),))
    assert seen == ["JVPTracer(primal=2.0, typeof(tangent)=f32[])",
                    "JVPTracer(primal=[0 1 2], typeof(tangent)=float0[3])"]

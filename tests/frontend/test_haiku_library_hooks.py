"""What Haiku, distrax and TensorFlow Probability's JAX substrate need of JAX's API, each
against JAX 0.10.2 without the libraries: ``jax.extend.core``'s ``TraceTag``,
``take_current_trace``/``set_current_trace``, ``DropVar`` and ``valid_jaxtype``; the names
``jax.core`` still serves with a deprecation warning; array-like types registered in
``pytype_aval_mappings`` and ``jax.interpreters.xla.canonicalize_dtype_handlers``.  (Library-defined
traces, Haiku's ``to_dot`` among them, are tested in ``test_user_traces.py``.)"""

from __future__ import annotations

import gc
import warnings
import weakref
from typing import Any

import jax
import jax.core as jax_core
import jax.interpreters.xla as jax_xla
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.extend import core as jcore

import plait
import plait.core as plait_core
import plait.interpreters.xla as plait_xla
import plait.numpy as pjnp
from plait.extend import core as pcore

X = np.array([0.5, -1.0, 2.0], np.float32)


def _candidates(lib: Any, np_: Any) -> list[Any]:
    return [1, 1.5, True, 2j, np.float32(1), np.int16(3), X, np.ones(2, np.float16),
            np_.ones(2), lib.random.key(0), lib.ShapeDtypeStruct((2,), np.float32),
            lib.new_ref(np_.ones(2)), "a", None, [1.0], (1.0,), object(),
            np.array(["a"]), np.ones(2, dtype=object), lib.ShapeDtypeStruct]


def test_valid_jaxtype_answers_as_jaxs() -> None:
    ours = [pcore.valid_jaxtype(x) for x in _candidates(plait, pjnp)]
    theirs = [jcore.valid_jaxtype(x) for x in _candidates(jax, jjnp)]
    assert ours == theirs
    assert ours.count(True) == 12


def test_trace_tags_are_all_equal_as_jaxs() -> None:
    for core in (pcore, jcore):
        a, b = core.TraceTag(), core.TraceTag()
        assert a is not b and a == b and len({a, b}) == 1 and a != object()


def test_take_current_trace_gives_the_innermost_trace() -> None:
    seen: list[Any] = []

    def f(x: Any) -> Any:
        with pcore.take_current_trace() as t:
            seen.append(t)
            with pcore.set_current_trace(t):  # (the trace it is under: allowed)
                return x * 2
    with pcore.take_current_trace() as eager, jcore.take_current_trace() as jax_eager:
        assert type(eager).__name__ == type(jax_eager).__name__ == "EvalTrace"
    assert np.asarray(plait.jit(f)(X)).tolist() == (X * 2).tolist()
    assert seen and seen[0] is not None and not seen[0].active
    assert repr(seen[0]) == "Trace(jit, ended)"


def test_switching_to_another_trace_is_refused() -> None:
    outer: list[Any] = []

    def inner(x: Any) -> Any:
        with pytest.raises(NotImplementedError, match=r"set_current_trace: expected the "
                           r"innermost staging trace \(Trace\(vmap\)\) or a library's trace, "
                           r"but got Trace\(jit\): plait's transformations enter and leave "
                           r"their own traces"):
            with pcore.set_current_trace(outer[0]):
                pass
        return x

    def f(x: Any) -> Any:
        with pcore.take_current_trace() as t:
            outer.append(t)
        return plait.vmap(inner)(x)
    plait.jit(f)(X)


def test_no_atom_is_a_dropvar() -> None:
    closed = plait.make_jaxpr(lambda x: plait.lax.sort_key_val(x, x)[0])(X)
    atoms = [*closed.jaxpr.invars, *(v for e in closed.jaxpr.eqns for v in e.outvars)]
    assert atoms and not any(isinstance(a, pcore.DropVar) for a in atoms)
    assert "_:f32[3]" in str(closed)  # (the unused output, printed as JAX prints a DropVar)
    with pytest.raises(TypeError, match="plait's jaxprs have no dropped variables"):
        pcore.DropVar()


@pytest.mark.parametrize("name", ["valid_jaxtype", "DropVar", "find_top_trace", "check_jaxpr",
                                  "get_opaque_trace_state", "Effect", "JaxprTypeError"])
def test_jax_core_serves_moved_names_with_jaxs_warning(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"jax.core.{name} is deprecated. Use "):
        theirs = getattr(jax_core, name)
    with pytest.warns(DeprecationWarning, match=rf"jax.core.{name} is deprecated. Use "
                      rf"plait.extend.core.{name} \(jax.extend.core.{name}\)"):
        ours = getattr(plait_core, name)
    assert ours is getattr(pcore, name)
    assert theirs is getattr(jcore, name) or name == "JaxprTypeError"


def test_jax_core_refuses_a_name_it_does_not_have() -> None:
    with pytest.raises(AttributeError, match="module 'plait.core' has no attribute 'nothing'"):
        _ = plait_core.nothing  # type: ignore[attr-defined]  # (the point of the test)


class _Wrapped:
    """An array-like with neither shape nor dtype: only registered, it is an argument."""

    def __init__(self, a: Any) -> None:
        self.a = a

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.a, dtype)


class _OurWrapped(_Wrapped):
    pass


class _TheirWrapped(_Wrapped):
    pass


def _register(core: Any, xla: Any, cls: type) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mappings = core.pytype_aval_mappings
    mappings[cls] = lambda x: core.ShapedArray(np.shape(np.asarray(x)), np.float32)
    xla.canonicalize_dtype_handlers[cls] = lambda x: np.asarray(x, np.float32)


def test_registered_array_like_types_are_arguments_as_in_jax() -> None:
    data = np.array([1.0, 2.0, 3.0])
    outs = []
    for lib, core, xla, cls, error in (
            (plait, plait_core, plait_xla, _OurWrapped, r"expected arrays, scalars or "
             r"ShapeDtypeStructs as arguments, but got _OurWrapped"),
            (jax, jax_core, jax_xla, _TheirWrapped, "Error interpreting argument")):
        f = lib.jit(lambda x: x * 2)
        with pytest.raises(TypeError, match=error):
            f(cls(data))
        _register(core, xla, cls)
        outs.append(f(cls(data)))
        assert f(cls(data)).dtype == np.float32  # (canonicalized: x64 is off)
    np.testing.assert_array_equal(np.asarray(outs[0]), np.asarray(outs[1]))


def test_the_tables_start_with_numpys_and_pythons_types() -> None:
    core: Any = plait_core  # (a name mypy is not shown: it is deprecated)
    with pytest.warns(DeprecationWarning, match="jax.core.pytype_aval_mappings is deprecated"):
        ours = core.pytype_aval_mappings
    with warnings.catch_warnings():  # (JAX warns once: another test may have asked first)
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs: Any = jax_core.pytype_aval_mappings
    for t in (np.ndarray, np.float32, np.int8, np.bool_, int, float, bool, complex):
        assert t in ours and t in theirs, t
        value = t(1) if t is not np.ndarray else np.ones((2, 1), np.float64)
        a, b = ours[t](value), theirs[t](value)
        assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type), t
        canon = plait_xla.canonicalize_dtype_handlers[t](value)
        assert np.asarray(canon).dtype == np.asarray(
            jax_xla.canonicalize_dtype_handlers[t](value)).dtype, t


def test_arrays_and_traced_values_are_weakly_referenced_as_in_jax() -> None:
    # TensorFlow Probability caches by weak references to both.
    for lib, np_ in ((plait, pjnp), (jax, jjnp)):
        x = np_.ones(2)
        ref = weakref.ref(x)
        assert ref() is x
        del x
        gc.collect()
        assert ref() is None
        seen: list[bool] = []

        def f(t: Any, seen: list[bool] = seen) -> Any:
            seen.append(weakref.ref(t)() is t)
            return t
        lib.jit(f)(X)
        assert seen == [True]


def _collectives(lax: Any) -> Any:
    def f(x: Any) -> Any:
        total = lax.psum(x, "i") * lax.axis_index("i")
        return lax.pmax(total, ("i", "j")), lax.all_gather(x, "j")
    return f


def test_make_jaxpr_with_an_axis_env_prints_jaxs_jaxpr() -> None:
    # (Haiku's experimental.jaxpr_info.make_model_info passes axis_env.)
    env = [("i", 4), ("j", 2)]
    ours = plait.make_jaxpr(_collectives(plait.lax), axis_env=env)(X)
    theirs = jax.make_jaxpr(_collectives(jax.lax), axis_env=env)(X)
    assert str(ours) == str(theirs)
    assert str(ours.out_avals[1]) == "float32[2,3]"
    with pytest.raises(NameError, match="unbound axis name: j"):
        plait.make_jaxpr(_collectives(plait.lax), axis_env=[("i", 4)])(X)


def test_a_closed_jaxpr_answers_for_its_jaxprs_variables_as_jaxs() -> None:
    # (Haiku's jaxpr_info reads a custom_jvp_call's call_jaxpr, a ClosedJaxpr, that way.)
    for lib in (plait, jax):
        closed = lib.make_jaxpr(lambda x, nn=lib.nn: nn.relu(x) * 2.0)(X)
        call_jaxpr = closed.eqns[0].params["call_jaxpr"]
        inner = call_jaxpr.jaxpr
        assert (call_jaxpr.constvars, call_jaxpr.invars, call_jaxpr.outvars) == \
            (inner.constvars, inner.invars, inner.outvars)
        assert closed.debug_info is closed.jaxpr.debug_info is not None
        assert closed.debug_info.func_name == "<lambda>"

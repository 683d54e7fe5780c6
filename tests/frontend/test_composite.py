"""``lax.composite`` against JAX 0.10.2: printed jaxprs (and their round trip through the
parser), lowered ``stablehlo.composite`` modules, values eager and under ``jit``, the
attribute kinds, and the errors of differentiation, batching and closed-over tracers."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import numpy as np
import pytest

import plait
from plait.errors import UnexpectedTracerError
from plait.ir import check_jaxpr, eval_jaxpr, parse_jaxpr
from tests.frontend.jax_oracle import JAX, PLAIT, Lib, assert_close

jax.config.update("jax_platforms", "cpu")

_X = np.array([0.5, -1.0, 2.0], np.float32)
_Y = np.array([1.0, 2.0, 3.0], np.float32)


def _scale(L: Lib, name: str = "my.scale", version: int = 0) -> Callable[..., Any]:
    @partial(L.lax.composite, name=name, version=version)
    def scale(x: Any, y: Any, **kw: Any) -> Any:
        return L.np.sin(x) * 2.0 + y
    return scale


def _compare(make: Callable[[Lib], Callable[..., Any]], *args: Any) -> None:
    fj, fp = make(JAX), make(PLAIT)
    jj, jp = jax.make_jaxpr(fj)(*args), plait.make_jaxpr(fp)(*args)
    assert str(jp) == str(jj)
    text = str(jp.jaxpr)
    parsed = parse_jaxpr(text)
    check_jaxpr(parsed)
    assert str(parsed) == text and parsed == jp.jaxpr and hash(parsed) == hash(jp.jaxpr)
    assert plait.jit(fp).lower(*args).as_text() == jax.jit(fj).lower(*args).as_text()
    want = jax.jit(fj)(*args)
    assert_close(plait.jit(fp)(*args), want)
    assert_close(fp(*args), want)
    assert_close(eval_jaxpr(jp.jaxpr, jp.consts, *args), jax.tree_util.tree_leaves(want))


ATTRIBUTES: dict[str, dict[str, Any]] = {
    "none": {},
    "python": dict(k=2.0, n=-3, b=True, s="hi", big=1e-5, inf=float("inf")),
    "numpy_scalars": dict(a=np.float32(1.5), c=np.int8(3), q=np.uint8(7), r=np.bool_(True),
                          h=np.float16(0.5)),
    "dtype": dict(d=np.dtype("float32")),
    "arrays": dict(v=np.array([1, 2], np.int32), m=np.ones((2, 2), np.float32),
                   z=np.array(2.0), t=np.array([True, False])),
    "containers": dict(t=(1, 2.5), lst=[np.int32(1), "x"], d={"z": 1, "y": [2, 3.0]},
                       nested=((1,), {"a": (2.0, [])}), empty=()),
    "none_values": dict(n=None),
}


@pytest.mark.parametrize("kind", list(ATTRIBUTES))
def test_attributes_print_lower_and_run_as_in_jax(kind: str) -> None:
    kw = ATTRIBUTES[kind]
    _compare(lambda L: lambda x, y: _scale(L)(x, y, **kw), _X, _Y)


@pytest.mark.parametrize("version", [0, 3])
def test_version(version: int) -> None:
    _compare(lambda L: lambda x, y: _scale(L, version=version)(x, y), _X, _Y)


def test_pytree_operands_and_results_and_closed_over_constants() -> None:
    c = np.arange(3.0, dtype=np.float32)

    def make(L: Lib) -> Callable[..., Any]:
        @partial(L.lax.composite, name="my.tree")
        def tree(d: Any, t: Any) -> Any:
            return {"s": d["a"] * t[0] + c, "p": (t[1] * 2.0,)}
        return lambda x, y: tree({"a": x}, (y, 2.0))
    _compare(make, _X, _Y)


def test_several_composites_get_one_function_each() -> None:
    # (Different decompositions: plait merges equal equations and prints an equal jaxpr
    # used twice once, where JAX keeps the copies its separate traces make.)
    def make(L: Lib) -> Callable[..., Any]:
        @partial(L.lax.composite, name="my.scale")
        def s(x: Any, y: Any, k: float = 2.0) -> Any:
            return L.np.sin(x) * k + y
        return lambda x, y: s(x, y) + s(y, x, k=1.0) + s(x, x, k=3.0)
    _compare(make, _X, _Y)


def test_none_inside_an_attribute_fails_when_lowered_as_in_jax() -> None:
    fj = lambda x, y: _scale(JAX)(x, y, k=(1, None))  # noqa: E731
    fp = lambda x, y: _scale(PLAIT)(x, y, k=(1, None))  # noqa: E731
    assert str(plait.make_jaxpr(fp)(_X, _Y)) == str(jax.make_jaxpr(fj)(_X, _Y))
    with pytest.raises(TypeError, match="No attribute handler defined for type"):
        jax.jit(fj).lower(_X, _Y)
    with pytest.raises(TypeError, match="No attribute handler defined for type"):
        plait.jit(fp).lower(_X, _Y)


def test_composite_inside_jit_and_control_flow() -> None:
    def make(L: Lib) -> Callable[..., Any]:
        s = _scale(L)
        inner = L.jit(lambda x, y: s(x, y, k=1.0))
        return lambda x, y: L.lax.cond(x[0] > 0, inner, lambda a, b: a - b, x, y)
    _compare(make, _X, _Y)


def test_decorator_keeps_the_function_name() -> None:
    assert _scale(PLAIT).__name__ == _scale(JAX).__name__ == "scale"


def test_invalid_name_fails_when_lowered_as_in_jax() -> None:
    fj = lambda x, y: _scale(JAX, name="scale")(x, y)  # noqa: E731
    fp = lambda x, y: _scale(PLAIT, name="scale")(x, y)  # noqa: E731
    assert str(plait.make_jaxpr(fp)(_X, _Y)) == str(jax.make_jaxpr(fj)(_X, _Y))
    with pytest.raises(ValueError, match="valid namespaced op name"):
        jax.jit(fj).lower(_X, _Y)
    with pytest.raises(ValueError, match="valid namespaced op name"):
        plait.jit(fp)(_X, _Y)
    # Eagerly, both evaluate the decomposition, which needs no name.
    assert_close(fp(_X, _Y), fj(_X, _Y))


_NO_JVP = "JVP rule for composite not implemented"
_NO_TRANSPOSE = "Transpose rule for composite not implemented"


@pytest.mark.parametrize("lib", [JAX, PLAIT], ids=["jax", "plait"])
def test_no_derivatives_and_no_batching(lib: Lib) -> None:
    s = _scale(lib)
    with pytest.raises(ValueError, match=_NO_JVP):
        lib.grad(lambda x: s(x, _Y).sum())(_X)
    with pytest.raises(ValueError, match=_NO_JVP):
        lib.jvp(lambda x: s(x, _Y), (_X,), (_X,))
    with pytest.raises(ValueError, match=_NO_TRANSPOSE):
        (jax.linear_transpose if lib is JAX else plait.linear_transpose)(
            lambda x: s(x, _Y), _X)(_X)
    with pytest.raises(NotImplementedError, match="Batching rule for 'composite' not "
                                                  "implemented"):
        lib.vmap(lambda x: s(x, _Y))(np.stack([_X, _X]))


def test_derivative_through_custom_jvp() -> None:
    def make(L: Lib) -> Callable[..., Any]:
        s = _scale(L)

        @L.custom_jvp
        def f(x: Any) -> Any:
            return s(x, x)

        @f.defjvp
        def f_jvp(primals: Any, tangents: Any) -> Any:
            (x,), (t,) = primals, tangents
            return f(x), (2.0 * L.np.cos(x) + 1.0) * t
        return L.grad(lambda x: f(x).sum())
    assert_close(make(PLAIT)(_X), make(JAX)(_X))
    assert_close(plait.jit(make(PLAIT))(_X), jax.jit(make(JAX))(_X))


def test_differentiating_other_inputs_is_fine() -> None:
    def make(L: Lib) -> Callable[..., Any]:
        s = _scale(L)
        return L.grad(lambda x, y: (s(_X, y) * x).sum())
    assert_close(make(PLAIT)(_X, _Y), make(JAX)(_X, _Y))


def test_closed_over_tracer_is_an_error() -> None:
    def make(L: Lib) -> Callable[..., Any]:
        def f(x: Any) -> Any:
            return L.lax.composite(lambda y: y + x, name="my.closure")(x)
        return f
    with pytest.raises(jax.errors.UnexpectedTracerError, match="as a constant"):
        jax.jit(make(JAX))(_X)
    with pytest.raises(UnexpectedTracerError, match="as a constant"):
        plait.jit(make(PLAIT))(_X)


def test_traced_attribute_is_an_error() -> None:
    f = lambda L, exc: lambda x: _scale(L)(x, x, k=x)  # noqa: E731
    with pytest.raises(jax.errors.UnexpectedTracerError, match="as an attribute"):
        jax.jit(f(JAX, None))(_X)
    with pytest.raises(UnexpectedTracerError, match="as an attribute"):
        plait.jit(f(PLAIT, None))(_X)


@pytest.mark.parametrize("bad", [object(), 1j, b"bytes", {1: 2}, plait.numpy.ones(2)],
                         ids=["object", "complex", "bytes", "int_keys", "plait_array"])
def test_unsupported_attributes_are_clear_errors(bad: Any) -> None:
    with pytest.raises(TypeError, match="attribute 'k'"):
        plait.make_jaxpr(lambda x: _scale(PLAIT)(x, x, k=bad))(_X)


def test_jax_printed_form_reads_back() -> None:
    kw = dict(k=2.0, v=np.array([[1, 2], [3, 4]], np.int8), d={"a": (None, [1])},
              f=np.float32(0.25), t=np.dtype("int32"), s="text")
    closed = jax.make_jaxpr(lambda x, y: _scale(JAX)(x, y, **kw))(_X, _Y)
    text = str(closed)
    parsed = parse_jaxpr(text)
    check_jaxpr(parsed)
    assert str(parsed) == text

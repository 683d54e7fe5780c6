"""An array's operators with operands they do not take: as JAX's, they return
NotImplemented, so Python tries the other operand's reflected method and otherwise
raises its own "unsupported operand" TypeError."""

from __future__ import annotations

import operator
import re
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import plait
import plait.numpy as pjnp
from tests.frontend.jax_oracle import raised

OPS = {name: getattr(operator, name) for name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_",
    "xor", "lshift", "rshift")}


@pytest.mark.parametrize("name", sorted(OPS))
def test_unknown_operand_gets_the_operation(name: str) -> None:
    op = OPS[name]
    other = type("R", (), {f"__r{name.rstrip('_')}__": lambda self, o: "reflected"})()
    assert op(pjnp.ones(3), other) == op(jjnp.ones(3), other) == "reflected"


@pytest.mark.parametrize("bad", ["a", [1.0, 2.0, 3.0], (1, 2, 3), object()])
def test_unsupported_operands_raise_pythons_error(bad: Any) -> None:
    for op in (operator.add, operator.mul, operator.matmul, operator.lt):
        got = raised(lambda op=op: op(pjnp.ones(3), bad))  # type: ignore[misc]  # bound
        want = raised(lambda op=op: op(jjnp.ones(3), bad))  # type: ignore[misc]  # bound
        assert type(got) is type(want) is TypeError
        if op is operator.mul and isinstance(bad, str):
            continue  # (str * x repeats the string: x.__index__ refuses, in its own words)
        # (JAX's class is jaxlib._jax.ArrayImpl; plait's is named ArrayImpl too.)
        assert re.sub(r"'[\w.]*ArrayImpl'", "A", str(got)) == re.sub(r"'[\w.]*ArrayImpl'", "A",
                                                                      str(want))


def test_equality_with_unknown_operands_is_identity() -> None:
    for bad in ("a", None, object()):
        assert (pjnp.ones(2) == bad) is (jjnp.ones(2) == bad) is False  # type: ignore[comparison-overlap]  # Python's fallback
        assert (pjnp.ones(2) != bad) is (jjnp.ones(2) != bad) is True  # type: ignore[comparison-overlap]  # Python's fallback


@pytest.mark.parametrize("expr", ["[1.0, 1.0] + x", "(1,) * x", "x & [1]", "x - {}"])
def test_containers_are_refused_as_jax_refuses_them(expr: str) -> None:
    got = raised(lambda: eval(expr, {"x": pjnp.ones(2)}))
    want = raised(lambda: eval(expr, {"x": jjnp.ones(2)}))
    assert type(got) is type(want) is TypeError
    assert re.sub(r"'[\w.]*ArrayImpl'", "A", str(got)) == re.sub(r"'[\w.]*ArrayImpl'", "A",
                                                                  str(want))


def test_known_operands_still_compute() -> None:
    x = np.arange(1.0, 4.0, dtype=np.float32)
    for other in (2, 2.5, True, np.float32(3), np.ones(3, np.float32), pjnp.ones(3)):
        for op in OPS.values():
            if op in (operator.and_, operator.or_, operator.xor, operator.lshift,
                      operator.rshift, operator.matmul):
                continue
            np.testing.assert_allclose(np.asarray(op(pjnp.asarray(x), other)),
                                       np.asarray(op(jjnp.asarray(x), np.asarray(other))),
                                       rtol=1e-6)


@pytest.mark.parametrize("convert", [bool, int, float, complex])
@pytest.mark.parametrize("shape", [(2,), (0,), (1, 1), ()])
def test_python_scalar_conversions_raise_as_jax(convert: Any, shape: tuple[int, ...]) -> None:
    # bool() of a multi-element or empty array is NumPy's and JAX's ValueError (so
    # `except ValueError` code keeps working); int(), float(), complex() of anything but
    # a 0-d array a TypeError.
    data = np.ones(shape, np.float32)
    try:
        want = convert(jjnp.asarray(data))
    except (ValueError, TypeError) as e:
        theirs: BaseException = e
    else:
        assert convert(pjnp.asarray(data)) == want
        return
    assert type(theirs) in (ValueError, TypeError)
    ours = raised(lambda: convert(pjnp.asarray(data)))
    assert isinstance(ours, type(theirs)), (ours, theirs)
    if convert is bool:
        assert "ambiguous" in str(ours) and "ambiguous" in str(theirs)


@pytest.mark.parametrize("data", [None, [1.0, None], [[None, 2.0]]])
def test_none_among_the_data_is_a_value_error_as_jax(data: Any) -> None:
    assert isinstance(raised(lambda: jjnp.array(data)), ValueError)
    with pytest.raises(ValueError, match="None is not a valid value for an array"):
        pjnp.array(data)
    with pytest.raises(ValueError, match="None is not a valid value for an array"):
        pjnp.asarray(data)


class _Delegating:
    """A wrapper that forwards attribute lookups to its value (as flax nnx's Variables
    do: it appears to have ``__array__``) and converts itself with ``__jax_array__``."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __getattr__(self, name: str) -> Any:
        return getattr(self.value, name)

    def __jax_array__(self) -> Any:
        return self.value


class _Reflecting:
    """No conversion protocol, only a reflected operator."""

    def __radd__(self, other: Any) -> str:
        return "radd"


def test_operators_take_other_objects_as_jax() -> None:
    # JAX converts an operand with __jax_array__ first (before the __array__ a delegating
    # wrapper also seems to have), takes arrays and scalars, and leaves an object without
    # either to Python (NotImplemented), which calls its reflected operator.
    for lib, np_ in ((plait, pjnp), (jax, jjnp)):
        w = np_.ones((2, 3))
        got = lib.jit(lambda x, v: x @ _Delegating(v))(np_.ones((1, 2)), w)
        np.testing.assert_array_equal(got, np.full((1, 3), 2.0, np.float32))
        assert np_.ones(1) + _Reflecting() == "radd"
        with pytest.raises(TypeError, match="unsupported operand"):
            np_.ones(1) * object()


DUNDERS: list[tuple[str, Any]] = [
    ("divmod", lambda np_: divmod(np_.array([1.5, -2.5, 3.0]), 2)),
    ("rdivmod", lambda np_: divmod(7, np_.array([2, 3]))),
    ("divmod ints", lambda np_: divmod(np_.array([-7, 7]), np_.array([2, -3]))),
    ("round", lambda np_: round(np_.array(2.5))),
    ("round ndigits", lambda np_: round(np_.array(2.567), 2)),
    ("round array", lambda np_: round(np_.array([1.5, -2.5, 3.7]))),
    ("round ndigits array", lambda np_: round(np_.array([1.25, 3.14159]), 3)),
    ("in", lambda np_: (3.0 in np_.array([1.0, 3.0]), 5 in np_.array([1.0, 3.0]))),
    ("atleast_1d many", lambda np_: np_.atleast_1d(1.0, np_.ones(2))),
    ("atleast_2d many", lambda np_: np_.atleast_2d(1.0, np_.ones(2), np_.ones((1, 2, 3)))),
    ("atleast_1d none", lambda np_: np_.atleast_1d()),
    ("round weak", lambda np_: np_.round(2.567, 2)),
    ("round complex", lambda np_: np_.round(np.complex64(2.567 + 1.3333j), 2))]


@pytest.mark.parametrize("what, expr", DUNDERS, ids=[d[0] for d in DUNDERS])
def test_python_builtins_on_arrays_as_jax(what: str, expr: Any) -> None:
    got, want = expr(pjnp), expr(jjnp)
    assert repr(got) == repr(want)


@pytest.mark.parametrize("expr", [lambda np_: 1.0 in np_.ones((2, 2)),
                                  lambda np_: np_.ones(2) in np_.ones(2),
                                  lambda np_: "a" in np_.ones(2)])
def test_contains_refuses_as_jax(expr: Any) -> None:
    got, want = raised(lambda: expr(pjnp)), raised(lambda: expr(jjnp))
    assert type(got) is type(want) and str(got) == str(want)


def test_divmod_and_round_under_jit_as_jax() -> None:
    x = np.array([1.5, -2.5, 3.25], np.float32)
    for f in (lambda a: divmod(a, 2.0), lambda a: round(a, 1), lambda a: divmod(2.0, a)):
        for g, w in zip(plait.tree.leaves(plait.jit(f)(x)), jax.tree.leaves(jax.jit(f)(x))):
            assert repr(g) == repr(w)

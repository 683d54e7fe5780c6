"""The IR's core data: interning, immutability, structural equality and hashing,
``replace``, the builder and ``check_jaxpr``.  Device-free: nothing here compiles."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import attrs
import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plait.errors import JaxprTypeError, UnboundVariableError
from plait.ir import (
    Builder,
    ClosedJaxpr,
    DebugInfo,
    Eqn,
    Jaxpr,
    Literal,
    Params,
    ShapedArray,
    SourceInfo,
    Var,
    check_jaxpr,
)
from plait.ir import dtypes as dt
from plait.ir import primitives as P

F32 = ShapedArray((), np.dtype("float32"))
F32W = ShapedArray((), np.dtype("float32"), True)
I32 = ShapedArray((), np.dtype("int32"))
V3 = ShapedArray((3,), np.dtype("float32"))


def _chain(aval: ShapedArray = V3, scale: float = 2.0) -> Jaxpr:
    b = Builder()
    x = Var(aval)
    y = b.bind1(P.sin_p, x)
    z = b.bind1(P.mul_p, y, Literal(scale, F32))
    return b.build([x], [b.bind1(P.add_p, z, x)])


# -- interning ----------------------------------------------------------------

def test_shaped_arrays_are_interned() -> None:
    assert ShapedArray((2, 3), np.dtype("float32")) is ShapedArray((2, 3), np.float32)
    assert ShapedArray((), np.float32, True) is not ShapedArray((), np.float32)
    assert F32W.strip_weak_type() is F32


@given(st.one_of(st.booleans(), st.integers(-2**31, 2**31 - 1),
                 st.floats(allow_nan=True, width=32)))
def test_literals_are_interned_by_type_tagged_value(v: bool | int | float) -> None:
    dtype = {bool: "bool", int: "int32", float: "float32"}[type(v)]
    aval = ShapedArray((), np.dtype(dtype))
    assert Literal(v, aval) is Literal(v, aval)
    assert copy.deepcopy(Literal(v, aval)) is Literal(v, aval)
    assert pickle.loads(pickle.dumps(Literal(v, aval))) is Literal(v, aval)


def test_literal_keys_are_type_tagged() -> None:
    one_f = Literal(1.0, F32)
    assert Literal(1, F32) is one_f                       # normalized to the dtype's kind
    assert Literal(1, I32) is not Literal(True, ShapedArray((), np.bool_))
    assert Literal(0.0, F32) is not Literal(-0.0, F32)    # signed zeros differ
    assert Literal(float("nan"), F32) is Literal(float("nan"), F32)
    assert Literal(1.0, F32) is not Literal(1.0, F32W)    # weak type is part of the type
    assert type(Literal(1, F32).val) is float
    assert type(Literal(np.int32(3), I32).val) is int
    assert Literal(2.5, F32).value is Literal(2.5, F32).val  # the documented alias


@pytest.mark.parametrize("value, aval, message", [
    (True, I32, "expected an int for a i32[] Literal, but got True"),
    (2**40, I32, "expected an int in [-2147483648, 2147483647] for a i32[] Literal, but got "
                 "1099511627776"),
    (1.5, ShapedArray((), np.bool_), "expected a bool for a bool[] Literal, but got 1.5"),
    (1.0, V3, "expected a scalar ShapedArray for a Literal"),
    (True, ShapedArray((), dt.float0), "expected False for a float0[] Literal, but got True"),
])
def test_bad_literals_are_type_errors(value: Any, aval: ShapedArray, message: str) -> None:
    with pytest.raises(TypeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Literal(value, aval)


# -- immutability and replace -------------------------------------------------------

def test_ir_objects_are_frozen() -> None:
    j = _chain()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        j.eqns = ()  # type: ignore[misc]  # the point: assignment must fail at run time
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        j.eqns[0].params = Params()  # type: ignore[misc]  # as above
    with pytest.raises(TypeError, match="Params are immutable"):
        j.eqns[1].params["x"] = 1


def test_replace_returns_the_same_object_when_nothing_changes() -> None:
    j = _chain()
    e = j.eqns[0]
    assert j.replace(eqns=j.eqns) is j
    assert e.replace(params=e.params, invars=e.invars) is e
    assert ClosedJaxpr(j).replace(jaxpr=j).jaxpr is j
    assert e.params.replace() is e.params
    changed = j.replace(outvars=(j.eqns[0].outvars[0],))
    assert changed is not j and changed != j


# -- structural equality ---------------------------------------------------------------

def test_equality_is_structural_modulo_renaming() -> None:
    a, b = _chain(), _chain()
    assert a is not b and a == b and hash(a) == hash(b)
    assert a != _chain(scale=3.0)
    assert a != _chain(ShapedArray((4,), np.float32))
    assert len({a, b, _chain(scale=3.0)}) == 2


def test_debug_and_source_info_stay_out_of_equality() -> None:
    j = _chain()
    info = DebugInfo("f", ("x",), ("result",))
    assert j.replace(debug_info=info) == j
    e = j.eqns[0]
    with_src = e.replace(source_info=SourceInfo("f.py", 3, "f"))
    assert j.replace(eqns=(with_src,) + j.eqns[1:]) == j


@pytest.mark.parametrize("stack, transform, expected, shown", [
    ("a/b", "jvp", "jvp(a)/b", True),
    ("", "jvp", "jvp()", False),
    ("jvp()", "transpose", "transpose(jvp())", False),
    ("jvp(a)/b", "transpose", "transpose(jvp(a))/b", True),
    ("block", "vmap", "vmap(block)", True),
])
def test_a_transformation_wraps_the_outermost_scope_as_jax_names_it(
        stack: str, transform: str, expected: str, shown: bool) -> None:
    src = SourceInfo("f.py", 3, "f", stack).transformed(transform)
    assert src.name_stack == expected
    # (Printed with its stack unless the stack names no scope.)
    assert str(src) == (f"[{expected}] f.py:3 (f)" if shown else "f.py:3 (f)")
    # (A caller's scope above it is a name.)
    assert str(src.under("outer")) == f"[outer/{expected}] f.py:3 (f)"


def test_weak_types_are_ignored_by_equality_but_not_by_the_typed_key() -> None:
    strong, weak = _chain(F32), _chain(F32W)
    assert strong == weak
    assert strong.typed_key() != weak.typed_key()


def test_literal_and_variable_operands_never_compare_equal() -> None:
    b1 = Builder()
    x = Var(I32)
    j1 = b1.build([x], [b1.bind1(P.add_p, x, Literal(0, I32))])
    b2 = Builder()
    y = Var(I32)
    j2 = b2.build([y], [b2.bind1(P.add_p, y, y)])
    assert j1 != j2


# -- builder ---------------------------------------------------------------------------

def test_builder_hash_conses_pure_equations_only_when_enabled() -> None:
    b = Builder()
    x = Var(V3)
    assert b.bind1(P.sin_p, x) is b.bind1(P.sin_p, x)
    assert len(b.eqns) == 1
    nb = Builder(cse=False)
    assert nb.bind1(P.sin_p, x) is not nb.bind1(P.sin_p, x)
    assert len(nb.eqns) == 2


def test_builder_fills_in_default_params_and_types_outputs() -> None:
    b = Builder()
    x = Var(V3)
    out = b.bind1(P.reduce_sum_p, x, axes=(0,))
    assert out.aval is F32
    assert b.eqns[0].params == P.reduce_sum_p.complete_params(Params(axes=(0,)))


def test_builder_reports_typing_errors_with_the_primitive() -> None:
    b = Builder()
    with pytest.raises(JaxprTypeError, match="add"):
        b.bind1(P.add_p, Var(V3), Var(I32))


# -- check_jaxpr -------------------------------------------------------------------------

def _sin(ins: tuple[Var, ...], outs: tuple[Var, ...]) -> Eqn:
    """A ``sin`` equation made directly, bypassing the builder's checks."""
    return Eqn(P.sin_p, ins, P.sin_p.complete_params(Params()), outs)


def test_check_jaxpr_accepts_built_and_transformed_programs() -> None:
    check_jaxpr(_chain())
    check_jaxpr(ClosedJaxpr(_chain()))


def test_check_jaxpr_rejects_an_unbound_operand_and_prints_it() -> None:
    x, free, out = Var(F32), Var(F32), Var(F32)
    j = Jaxpr((), (x,), (_sin((free,), (out,)),), (out,))
    # Ill-formed, yet printable and hashable, so that the error can show it.
    assert str(j) == "{ lambda ; a:f32[]. let b:f32[] = sin c in (b,) }"
    assert hash(j) == hash(j)
    with pytest.raises(UnboundVariableError) as info:
        check_jaxpr(j)
    assert str(info.value) == ("expected operands bound before use, but operand 0 (f32[]) is not "
                               "bound\nin equation:\n  b:f32[] = sin c")


def test_check_jaxpr_rejects_a_variable_bound_twice() -> None:
    x = Var(F32)
    j = Jaxpr((), (x,), (_sin((x,), (x,)),), (x,))
    with pytest.raises(UnboundVariableError, match="expected each variable to be bound once, "
                                                   "but a variable of type f32\\[\\] is bound "
                                                   "again by this equation"):
        check_jaxpr(j)


def test_check_jaxpr_rejects_a_wrong_output_type() -> None:
    x, out = Var(V3), Var(I32)
    j = Jaxpr((), (x,), (_sin((x,), (out,)),), (out,))
    with pytest.raises(JaxprTypeError, match=r"sin: expected an output of type f32\[3\], but got "
                                             r"i32\[\]"):
        check_jaxpr(j)


def test_check_jaxpr_rejects_an_unbound_output() -> None:
    x = Var(F32)
    j = Jaxpr((), (x,), (), (Var(F32),))
    with pytest.raises(UnboundVariableError, match="expected outputs bound before use, but "
                                                   "output 0"):
        check_jaxpr(j)


def test_variables_repr_as_jaxs() -> None:
    # JAX's Var repr: its id and its type with the dtype's full name.
    ours = Var(ShapedArray((2, 3), dt.int32))
    theirs = jax.make_jaxpr(lambda x: x)(np.zeros((2, 3), np.int32)).jaxpr.invars[0]
    assert repr(ours) == f"Var(id={id(ours)}):int32[2,3]"
    assert repr(theirs).split(":", 1)[1] == repr(ours).split(":", 1)[1]

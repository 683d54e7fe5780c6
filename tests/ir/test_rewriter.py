"""plait.ir.JaxprRewriter: copy-through, per-primitive rules, recursion, reverse walks.

Oracles: the reference interpreter (``eval_jaxpr``) against NumPy for what a
rewritten program computes, and structural equality for what a copy is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import plait
import plait.lax as lax
import plait.numpy as pnp
from plait.errors import JaxprTypeError, RuleNotImplementedError, UnboundVariableError
from plait.ir import (
    Atom,
    Builder,
    ClosedJaxpr,
    Eqn,
    JaxprRewriter,
    Literal,
    Primitive,
    Var,
    check_jaxpr,
    convert_constvars,
    eval_jaxpr,
    parse_jaxpr,
    shaped,
)
from plait.ir import primitives as P
from tests.ir.jaxpr_corpus import CASES, trace_plait


class SinToCos(JaxprRewriter):
    """Every sin becomes a cos."""


@SinToCos.rule(P.sin_p)
def _sin_to_cos(rw: JaxprRewriter, b: Builder, eqn: Eqn, invars: Sequence[Atom]) -> list[Atom]:
    return list(b.bind(P.cos_p, tuple(invars)))


def _run(closed: ClosedJaxpr, *args: Any) -> list[np.ndarray]:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


@settings(max_examples=len(CASES), deadline=None)
@given(st.sampled_from(CASES))
def test_copy_through_is_identity_on_the_corpus(case: Any) -> None:
    closed = trace_plait(case)
    assert JaxprRewriter().rewrite(closed.jaxpr) is closed.jaxpr
    assert JaxprRewriter().rewrite_closed(closed) is closed
    # Copying every equation explicitly still gives back a structurally equal program.
    class Copy(JaxprRewriter):
        def rewrite_eqn(self, b: Builder, eqn: Eqn, atoms: Sequence[Atom]) -> Sequence[Atom]:
            return self.copy_eqn(b, eqn, atoms)
    assert Copy().rewrite(closed.jaxpr) is closed.jaxpr


UNARY: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "sin": (pnp.sin, np.sin), "exp": (pnp.exp, np.exp), "tanh": (pnp.tanh, np.tanh),
    "neg": (lambda x: -x, np.negative), "double": (lambda x: x * 2.0, lambda x: x * 2.0)}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(sorted(UNARY)), min_size=1, max_size=6),
       st.lists(st.floats(-2, 2, width=32), min_size=3, max_size=3))
def test_sin_to_cos_on_random_chains(ops: list[str], xs: list[float]) -> None:
    def f(x: Any) -> Any:
        for op in ops:
            x = UNARY[op][0](x)
        return x

    x = np.array(xs, np.float32)
    closed = plait.make_jaxpr(f)(x)
    new = SinToCos().rewrite_closed(closed)
    check_jaxpr(new.jaxpr)
    assert (new is closed) == ("sin" not in ops)
    want = x.astype(np.float64)
    for op in ops:
        # Keep float32 far from overflow, where exp amplifies rounding errors unboundedly.
        assume(np.all(np.abs(want) < 10.0))
        want = np.cos(want) if op == "sin" else UNARY[op][1](want)
    np.testing.assert_allclose(_run(new, x)[0], want, rtol=1e-4, atol=1e-6)


def _programs() -> dict[str, tuple[Any, Any]]:
    """Programs whose only sin sits inside a sub-jaxpr, with their NumPy meaning after
    sin -> cos."""
    def in_cond(x: Any) -> Any:
        return lax.cond(x[0] > 0, lambda v: pnp.sin(v) + 1.0, lambda v: v * 2.0, x)

    def in_scan(x: Any) -> Any:
        return lax.scan(lambda c, v: (c + pnp.sin(v), c), 0.0, x)[0]

    def in_while(x: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, pnp.sin(c[1])), (0, x))[1]

    def in_jit(x: Any) -> Any:
        return plait.jit(lambda v: pnp.sin(v) * 3.0)(x) + 1.0

    def in_cond_in_scan(x: Any) -> Any:
        def body(c: Any, v: Any) -> Any:
            return lax.cond(v > 0, lambda u: c + pnp.sin(u), lambda u: c - u, v), None
        return lax.scan(body, 0.0, x)[0]

    def in_remat(x: Any) -> Any:
        return plait.checkpoint(lambda v: pnp.sin(v) * 2.0)(x)

    @plait.custom_jvp
    def custom_fn(v: Any) -> Any:
        return pnp.sin(v)

    custom_fn.defjvp(lambda p, t: (custom_fn(p[0]), t[0]))

    def cos3(x: np.ndarray) -> np.ndarray:
        return np.cos(np.cos(np.cos(x)))

    def cond_scan(x: np.ndarray) -> np.ndarray:
        return np.where(x > 0, np.cos(x), -x).sum()

    return {"cond": (in_cond, lambda x: np.cos(x) + 1.0 if x[0] > 0 else x * 2.0),
            "scan": (in_scan, lambda x: np.cos(x).sum()),
            "while": (in_while, cos3),
            "jit": (in_jit, lambda x: np.cos(x) * 3.0 + 1.0),
            "cond_in_scan": (in_cond_in_scan, cond_scan),
            "remat": (in_remat, lambda x: np.cos(x) * 2.0),
            "custom_jvp": (custom_fn, np.cos)}


@pytest.mark.parametrize("name", sorted(_programs()))
def test_rules_apply_inside_sub_jaxprs(name: str) -> None:
    f, meaning = _programs()[name]
    x = np.array([0.5, -1.0, 2.0], np.float32)
    closed = plait.make_jaxpr(f)(x)
    new = SinToCos().rewrite_closed(closed)
    check_jaxpr(new.jaxpr)
    assert "sin" not in str(new) and "cos" in str(new)
    np.testing.assert_allclose(_run(new, x)[0], meaning(x.astype(np.float64)), rtol=2e-5)
    # Without recursion the sub-jaxprs are left alone: nothing changes.
    assert SinToCos(recurse=False).rewrite_closed(closed) is closed


def test_rules_belong_to_their_class() -> None:
    class Other(JaxprRewriter):
        pass
    assert SinToCos.rule_for(P.sin_p) is _sin_to_cos
    assert JaxprRewriter.rule_for(P.sin_p) is None and Other.rule_for(P.sin_p) is None

    class Child(SinToCos):
        pass

    @Child.rule(P.exp_p)
    def _exp(rw: JaxprRewriter, b: Builder, eqn: Eqn, invars: Sequence[Atom]) -> list[Atom]:
        return list(b.bind(P.log_p, tuple(invars)))
    assert Child.rule_for(P.sin_p) is _sin_to_cos and Child.rule_for(P.exp_p) is _exp
    assert SinToCos.rule_for(P.exp_p) is None

    # A rule registered on a base after the subclass was made is inherited all the same,
    # and the subclass's own rule wins.
    @SinToCos.rule(P.tanh_p)
    def _tanh(rw: JaxprRewriter, b: Builder, eqn: Eqn, invars: Sequence[Atom]) -> list[Atom]:
        return list(invars)

    @Child.rule(P.tanh_p)
    def _tanh2(rw: JaxprRewriter, b: Builder, eqn: Eqn, invars: Sequence[Atom]) -> list[Atom]:
        return list(b.bind(P.neg_p, tuple(invars)))
    try:
        assert Child.rule_for(P.tanh_p) is _tanh2
        x = np.array([0.5, 1.5], np.float32)
        jaxpr = plait.make_jaxpr(lambda v: pnp.tanh(pnp.exp(v)))(x).jaxpr
        np.testing.assert_allclose(eval_jaxpr(Child().rewrite(jaxpr), (), x)[0], -np.log(x),
                                   rtol=1e-6)
        np.testing.assert_allclose(eval_jaxpr(SinToCos().rewrite(jaxpr), (), x)[0], np.exp(x),
                                   rtol=1e-6)
    finally:
        del SinToCos.rules[P.tanh_p]


def test_rules_cannot_be_registered_on_the_base_class() -> None:
    with pytest.raises(TypeError, match="expected a subclass of JaxprRewriter"):
        JaxprRewriter.rule(P.sin_p)


class Scale(JaxprRewriter):
    """Multiplies every exp by the rewriter's factor: a rule reads its own rewriter."""

    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor


@Scale.rule(P.exp_p)
def _scaled_exp(rw: Scale, b: Builder, eqn: Eqn, invars: Sequence[Atom]) -> list[Atom]:
    (y,) = b.bind(P.exp_p, tuple(invars))
    return list(b.bind(P.mul_p, (y, _literal(rw.factor, y))))


def _literal(value: float, like: Atom) -> Atom:
    return Literal(value, shaped(like.aval).update(shape=()))


def test_a_rule_reads_its_rewriter() -> None:
    x = np.array([0.25, 1.0], np.float32)
    closed = plait.make_jaxpr(lambda v: pnp.exp(v) + 1.0)(x)
    for factor in [0.5, 3.0]:
        np.testing.assert_allclose(_run(Scale(factor).rewrite(closed), x)[0],
                                   np.exp(x) * factor + 1.0, rtol=1e-6)


def test_rewritten_equations_keep_the_source_line() -> None:
    closed = plait.make_jaxpr(lambda x: pnp.sin(x) * 2.0)(1.0)
    new = SinToCos().rewrite(closed.jaxpr)
    assert new.eqns[0].primitive is P.cos_p
    assert new.eqns[0].source_info == closed.jaxpr.eqns[0].source_info is not None


def test_a_rule_returning_the_wrong_number_of_atoms() -> None:
    class Bad(JaxprRewriter):
        pass

    @Bad.rule(P.sin_p)
    def _two(rw: JaxprRewriter, b: Builder, eqn: Eqn, invars: Sequence[Atom]) -> list[Atom]:
        return [invars[0], invars[0]]

    closed = plait.make_jaxpr(pnp.sin)(1.0)
    with pytest.raises(JaxprTypeError) as info:
        Bad().rewrite(closed.jaxpr)
    assert str(info.value) == "sin: expected a rule to return one atom per result (1), but got 2"
    assert any(n.startswith("While rewriting (Bad) the equation\n  b:f32[] = sin a")
               for n in info.value.__notes__)


def test_an_ill_typed_rule_is_refused_by_the_builder() -> None:
    class Bad(JaxprRewriter):
        pass

    @Bad.rule(P.sin_p)
    def _int(rw: JaxprRewriter, b: Builder, eqn: Eqn, invars: Sequence[Atom]) -> list[Atom]:
        return list(b.bind(P.not_p, tuple(invars)))  # not of a float

    with pytest.raises(JaxprTypeError, match="not"):
        Bad().rewrite(plait.make_jaxpr(pnp.sin)(1.0).jaxpr)


# -- reverse: the inverse interpreter of JAX's custom-interpreter tutorial -------

class Inverse(JaxprRewriter):
    """f -> f⁻¹ for chains of invertible primitives."""
    reverse = True


def _apply(inverse: Primitive) -> Callable[[JaxprRewriter, Builder, Eqn, Sequence[Atom]],
                                          list[Atom]]:
    def rule(rw: JaxprRewriter, b: Builder, eqn: Eqn, outs: Sequence[Atom]) -> list[Atom]:
        return list(b.bind(inverse, tuple(outs)))
    return rule


INVERSES = {P.exp_p: P.log_p, P.tanh_p: P.atanh_p, P.log_p: P.exp_p, P.neg_p: P.neg_p}
for _prim, _inv in INVERSES.items():
    Inverse.rule(_prim)(_apply(_inv))


def test_inverse_of_exp_tanh() -> None:
    closed = plait.make_jaxpr(lambda x: pnp.exp(pnp.tanh(x)))(pnp.ones(5))
    inverse = Inverse().rewrite(closed.jaxpr)
    assert [e.primitive for e in inverse.eqns] == [P.log_p, P.atanh_p]
    x = np.linspace(-1.0, 1.0, 5, dtype=np.float32)
    y = np.exp(np.tanh(x))
    np.testing.assert_allclose(eval_jaxpr(inverse, (), y)[0], x, rtol=1e-5, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["exp", "tanh", "neg"]), min_size=1, max_size=4))
def test_inverse_composes_to_identity(ops: list[str]) -> None:
    assume(ops.count("exp") <= 2)  # exp(exp(exp(exp(0.5)))) overflows float32
    fns = {"exp": pnp.exp, "tanh": pnp.tanh, "neg": lambda x: -x}

    def f(x: Any) -> Any:
        for op in ops:
            x = fns[op](x)
        return x

    x = np.linspace(-0.5, 0.5, 4, dtype=np.float32)
    jaxpr = convert_constvars(plait.make_jaxpr(f)(x).jaxpr)
    y = eval_jaxpr(jaxpr, (), x)[0]
    back = eval_jaxpr(Inverse().rewrite(jaxpr), (), y)[0]
    np.testing.assert_allclose(back, x, rtol=1e-4, atol=1e-4)


def test_reverse_rule_missing() -> None:
    jaxpr = plait.make_jaxpr(lambda x: pnp.exp(pnp.sin(x)))(1.0).jaxpr
    with pytest.raises(RuleNotImplementedError) as info:
        Inverse().rewrite(jaxpr)
    assert str(info.value) == "Inverse rule for 'sin' not implemented"
    assert any("b:f32[] = sin a" in n for n in info.value.__notes__)


def test_reverse_rules_can_invert_a_callee() -> None:
    # In a reverse rewrite rewrite_params reverses the sub-jaxprs: inv(jit(f)) = jit(inv(f)).
    class InverseWithJit(Inverse):
        pass

    @InverseWithJit.rule(P.jit_p)
    def _jit(rw: JaxprRewriter, b: Builder, eqn: Eqn, outs: Sequence[Atom]) -> list[Atom]:
        return list(b.bind(P.jit_p, tuple(outs), rw.rewrite_params(eqn.params)))

    x = np.linspace(-0.5, 0.5, 4, dtype=np.float32)
    jaxpr = plait.make_jaxpr(lambda v: pnp.exp(plait.jit(pnp.tanh)(v)))(x).jaxpr
    inverse = InverseWithJit().rewrite(jaxpr)
    assert [e.primitive for e in inverse.eqns] == [P.log_p, P.jit_p]
    assert [e.primitive for e in inverse.eqns[1].params["jaxpr"].eqns] == [P.atanh_p]
    np.testing.assert_allclose(eval_jaxpr(inverse, (), np.exp(np.tanh(x)))[0], x,
                               rtol=1e-5, atol=1e-6)


# -- copies are faithful ------------------------------------------------------------

def test_repeated_equations_are_copied_not_merged() -> None:
    # A parsed (or hand-built) jaxpr may repeat a pure equation; a copy keeps both,
    # and only a rewriter asked to merge them does.
    jaxpr = parse_jaxpr("{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = sin a; "
                        "d:f32[] = add b c in (d,) }")
    assert JaxprRewriter().rewrite(jaxpr) is jaxpr
    cosines = SinToCos().rewrite(jaxpr)
    assert [e.primitive for e in cosines.eqns] == [P.cos_p, P.cos_p, P.add_p]
    merged = JaxprRewriter(cse=True).rewrite(jaxpr)
    assert [e.primitive for e in merged.eqns] == [P.sin_p, P.add_p]
    assert eval_jaxpr(merged, (), np.float32(0.5))[0] == np.float32(2 * np.sin(np.float32(0.5)))


_ELEMENTWISE = {"sin": np.sin, "cos": np.cos, "neg": np.negative, "add": np.add, "mul": np.multiply}


@st.composite
def _elementwise_programs(draw: st.DrawFn) -> tuple[str, list[tuple[str, list[int]]]]:
    """The text of a random elementwise jaxpr (repeated equations allowed) and its
    equations as (primitive name, operand indices)."""
    n = draw(st.integers(1, 8))
    eqns: list[tuple[str, list[int]]] = []
    for i in range(n):
        op = draw(st.sampled_from(sorted(_ELEMENTWISE)))
        arity = 2 if op in ("add", "mul") else 1
        eqns.append((op, draw(st.lists(st.integers(0, i + 1), min_size=arity,
                                       max_size=arity))))
    lines = [f"v{i + 2}:f32[3] = {op} " + " ".join(f"v{j}" for j in args)
             for i, (op, args) in enumerate(eqns)]
    outs = draw(st.lists(st.integers(0, n + 1), min_size=1, max_size=3))
    text = ("{ lambda ; v0:f32[3] v1:f32[3]. let " + "; ".join(lines) + " in ("
            + ", ".join(f"v{j}" for j in outs) + ",) }")
    return text, eqns + [("out", outs)]


@settings(max_examples=60, deadline=None)
@given(_elementwise_programs())
def test_copy_through_of_random_programs(program: tuple[str, list[tuple[str, list[int]]]]) -> None:
    text, eqns = program
    jaxpr = parse_jaxpr(text)

    class Copy(JaxprRewriter):
        def rewrite_eqn(self, b: Builder, eqn: Eqn, atoms: Sequence[Atom]) -> Sequence[Atom]:
            return self.copy_eqn(b, eqn, atoms)
    assert JaxprRewriter().rewrite(jaxpr) is jaxpr
    assert Copy().rewrite(jaxpr) is jaxpr
    # What sin -> cos computes, against NumPy on the equations themselves.
    x = np.array([0.1, -0.7, 1.3], np.float32)
    y = np.array([2.0, 0.3, -0.4], np.float32)
    vals = [x, y]
    for op, args in eqns[:-1]:
        vals.append(_ELEMENTWISE["cos" if op == "sin" else op](*[vals[j] for j in args]))
    got = eval_jaxpr(SinToCos().rewrite(jaxpr), (), x, y)
    for g, j in zip(got, eqns[-1][1], strict=True):
        np.testing.assert_allclose(g, vals[j], rtol=1e-5)


def test_closed_jaxprs_keep_their_consts() -> None:
    c = np.array([1.0, 2.0, 3.0], np.float32)
    closed = plait.make_jaxpr(lambda v: pnp.sin(v) * c)(c)
    assert closed.consts
    new = SinToCos().rewrite(closed)
    assert isinstance(new, ClosedJaxpr) and new.consts is closed.consts
    np.testing.assert_allclose(_run(new, c)[0], np.cos(c) * c, rtol=1e-6)
    assert JaxprRewriter().rewrite(closed) is closed


# -- errors -------------------------------------------------------------------------

def test_a_sub_jaxpr_of_another_type_is_refused_by_the_outer_equation() -> None:
    class ToInt(JaxprRewriter):
        pass

    @ToInt.rule(P.sin_p)
    def _int(rw: JaxprRewriter, b: Builder, eqn: Eqn, invars: Sequence[Atom]) -> list[Atom]:
        return list(b.bind(P.convert_element_type_p, tuple(invars),
                           {"new_dtype": np.dtype(np.int32), "weak_type": False}))

    closed = plait.make_jaxpr(lambda x: lax.cond(x > 0, pnp.sin, pnp.cos, x))(1.0)
    with pytest.raises(JaxprTypeError, match="cond"):
        ToInt().rewrite(closed)


def test_results_are_checked() -> None:
    class Dangling(JaxprRewriter):
        pass

    @Dangling.rule(P.sin_p)
    def _free(rw: JaxprRewriter, b: Builder, eqn: Eqn, invars: Sequence[Atom]) -> list[Atom]:
        return [Var(eqn.outvars[0].aval)]  # bound by no equation

    jaxpr = plait.make_jaxpr(pnp.sin)(1.0).jaxpr
    with pytest.raises(UnboundVariableError):
        Dangling().rewrite(jaxpr)
    unchecked = Dangling(check=False).rewrite(jaxpr)
    assert unchecked.eqns == () and unchecked.outvars[0] not in unchecked.invars

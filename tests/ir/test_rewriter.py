"""plait.ir.JaxprRewriter: copy-through, per-primitive rules, recursion, reverse walks.

Oracles: the reference interpreter (``eval_jaxpr``) against NumPy for what a
rewritten program computes, and structural equality for what a copy is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import plait
import plait.lax as lax
import plait.numpy as pnp
from plait.errors import JaxprTypeError, RuleNotImplementedError
from plait.ir import (
    Atom,
    Builder,
    ClosedJaxpr,
    Eqn,
    JaxprRewriter,
    check_jaxpr,
    convert_constvars,
    eval_jaxpr,
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


UNARY = {"sin": (pnp.sin, np.sin), "exp": (pnp.exp, np.exp), "tanh": (pnp.tanh, np.tanh),
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
        want = np.cos(want) if op == "sin" else UNARY[op][1](want)
    np.testing.assert_allclose(_run(new, x)[0], want, rtol=2e-5, atol=1e-6)


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

    def cos3(x: np.ndarray) -> np.ndarray:
        return np.cos(np.cos(np.cos(x)))

    return {"cond": (in_cond, lambda x: np.cos(x) + 1.0 if x[0] > 0 else x * 2.0),
            "scan": (in_scan, lambda x: np.cos(x).sum()),
            "while": (in_while, cos3),
            "jit": (in_jit, lambda x: np.cos(x) * 3.0 + 1.0)}


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
    assert P.sin_p in SinToCos.rules
    assert P.sin_p not in JaxprRewriter.rules and P.sin_p not in Other.rules

    class Child(SinToCos):
        pass

    @Child.rule(P.exp_p)
    def _exp(rw: JaxprRewriter, b: Builder, eqn: Eqn, invars: Sequence[Atom]) -> list[Atom]:
        return list(b.bind(P.log_p, tuple(invars)))
    assert set(Child.rules) == {P.sin_p, P.exp_p} and P.exp_p not in SinToCos.rules


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


INVERSES = {P.exp_p: P.log_p, P.tanh_p: P.atanh_p, P.log_p: P.exp_p, P.neg_p: P.neg_p}
for _prim, _inv in INVERSES.items():
    Inverse.rule(_prim)(lambda rw, b, eqn, outs, _inv=_inv: list(b.bind(_inv, tuple(outs))))


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

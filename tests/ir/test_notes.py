"""Errors raised while a rule runs name the equation and the user's source line.

Each skeleton that applies rules (reference evaluation, jvp, transpose, vmap,
partial evaluation, lowering) is made to fail, once with a missing rule and once
with a rule that raises, and the exception must carry a note with the printed
equation and this file's line that emitted it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import numpy as np
import pytest

import plait
import plait.lax as lax
import plait.numpy as pnp
from plait.errors import RuleNotImplementedError
from plait.ir import eval_jaxpr, impl_rules
from plait.ir import primitives as P
from plait.ir.notes import EQUATION_NOTE_ATTR, note_equation
from plait.lowering import lowering_rules
from plait.transforms import batching_rules, jvp_rules, pe_rules, transpose_rules


def _line_of(fun: Callable[..., Any], text: str) -> str:
    """``line:column`` of ``text`` in this file, inside ``fun`` (as source lines print)."""
    lines, first = inspect.getsourcelines(fun)
    i = next(i for i, line in enumerate(lines) if text in line)
    return f"{first + i}:{lines[i].index(text)}"


def f_sin_cos(x: Any) -> Any:
    y = pnp.sin(x)
    return pnp.cos(y) * 2.0


def f_cond(x: Any) -> Any:
    return lax.cond(x.sum() > 0, lambda v: pnp.cos(v) * v, lambda v: v, x)


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    # Transforms are cached on the interned jaxpr: a rule replaced by a test must run.
    plait.clear_caches()
    yield
    plait.clear_caches()


def _boom(*args: Any, **params: Any) -> Any:
    raise ValueError("boom from the rule")


def _run_with_rule(table: MutableMapping[Any, Any], prim: Any, rule: Any | None,
                   run: Callable[[], Any]) -> BaseException:
    """Run ``run`` with ``table[prim]`` replaced by ``rule`` (removed when ``None``)."""
    saved = table.pop(prim)
    if rule is not None:
        table[prim] = rule
    try:
        with pytest.raises(Exception) as info:
            run()
    finally:
        table[prim] = saved
    return info.value


def _notes(exc: BaseException) -> list[str]:
    return [n for n in getattr(exc, "__notes__", []) if n.startswith("While ")]


def _assert_note(exc: BaseException, action: str, eqn_text: str, fun: Callable[..., Any],
                 line_text: str, function: str | None = None) -> None:
    notes = _notes(exc)
    assert len(notes) == 1, notes  # the innermost skeleton only
    note = notes[0]
    assert note.startswith(f"While {action} the equation\n"), note
    assert eqn_text in note, note
    where = f"{__file__}:{_line_of(fun, line_text)} ({function or fun.__name__})"
    assert note.endswith(f"\nwhich was traced from {where}"), note


CASES = [
    # (skeleton, table, primitive, run, action, printed equation, function, its line)
    ("jvp", jvp_rules, P.cos_p, lambda: plait.grad(f_sin_cos)(1.0),
     "computing the JVP of", "= cos b", f_sin_cos, "pnp.cos(y)"),
    ("transpose", transpose_rules, P.mul_p, lambda: plait.grad(f_sin_cos)(1.0),
     "transposing", "= mul f 2.0", f_sin_cos, "pnp.cos(y) * 2.0"),
    ("vmap", batching_rules, P.cos_p, lambda: plait.vmap(f_sin_cos)(pnp.ones(3)),
     "batching (vmap)", "= cos b", f_sin_cos, "pnp.cos(y)"),
    ("lowering", lowering_rules, P.cos_p, lambda: plait.jit(f_sin_cos)(1.0),
     "lowering to StableHLO", "= cos b", f_sin_cos, "pnp.cos(y)"),
]


@pytest.mark.parametrize("missing", [True, False], ids=["missing", "raising"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rule_failure_names_equation_and_user_line(case: tuple[Any, ...], missing: bool) -> None:
    name, table, prim, run, action, eqn_text, fun, line_text = case
    exc = _run_with_rule(table, prim, None if missing else _boom, run)
    if missing:
        assert isinstance(exc, RuleNotImplementedError)
        assert str(exc).startswith(f"{exc.transform} rule for '{prim.name}' not implemented")
    else:
        assert isinstance(exc, ValueError) and str(exc) == "boom from the rule"
    _assert_note(exc, action, eqn_text, fun, line_text)


@pytest.mark.parametrize("missing", [True, False], ids=["missing", "raising"])
def test_reference_interpreter_notes(missing: bool) -> None:
    closed = plait.make_jaxpr(f_sin_cos)(1.0)
    exc = _run_with_rule(impl_rules, P.cos_p, None if missing else _boom,
                         lambda: eval_jaxpr(closed.jaxpr, closed.consts, np.float32(1.0)))
    assert isinstance(exc, RuleNotImplementedError if missing else ValueError)
    _assert_note(exc, "evaluating (reference interpreter)", "= cos b", f_sin_cos, "pnp.cos(y)")


def test_nested_jaxpr_noted_once_at_the_inner_equation() -> None:
    # vmap of a cond whose predicate is batched: the failing equation is inside a branch.
    exc = _run_with_rule(batching_rules, P.cos_p, _boom,
                         lambda: plait.vmap(f_cond)(pnp.ones((3, 2))))
    _assert_note(exc, "batching (vmap)", "= cos", f_cond, "pnp.cos(v)", "f_cond.<locals>.<lambda>")


def test_partial_eval_notes() -> None:
    exc = _run_with_rule(pe_rules, P.cond_p, _boom, lambda: plait.grad(
        lambda x: f_cond(x).sum())(pnp.ones(2)))
    notes = _notes(exc)
    assert len(notes) == 1 and notes[0].startswith("While partially evaluating the equation\n")
    assert "cond[" in notes[0]
    assert f"{__file__}:{_line_of(f_cond, 'lax.cond')} (f_cond)" in notes[0]


def test_note_is_added_once_and_names_the_equation() -> None:
    closed = plait.make_jaxpr(f_sin_cos)(1.0)
    first, second = closed.jaxpr.eqns[0], closed.jaxpr.eqns[1]
    exc = ValueError("x")
    note_equation(exc, closed.jaxpr, first, "testing")
    note_equation(exc, closed.jaxpr, second, "testing")
    assert getattr(exc, EQUATION_NOTE_ATTR) is first
    assert exc.__notes__ == [
        "While testing the equation\n  b:f32[] = sin a\n"
        f"which was traced from {__file__}:{_line_of(f_sin_cos, 'pnp.sin(x)')} (f_sin_cos)"]


def test_equation_without_source_info_has_no_line() -> None:
    plait.config.update("source_info", False)
    try:
        closed = plait.make_jaxpr(f_sin_cos)(1.0)
    finally:
        plait.config.update("source_info", True)
    exc = ValueError("x")
    note_equation(exc, closed.jaxpr, closed.jaxpr.eqns[0], "testing")
    assert exc.__notes__ == ["While testing the equation\n  b:f32[] = sin a"]

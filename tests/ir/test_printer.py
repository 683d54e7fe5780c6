"""Golden tests of the printer: plait's text against ``jax.make_jaxpr``'s (JAX 0.10.2).

Every function of ``jaxpr_corpus`` is traced by plait and by JAX from the
same source; the texts must be equal character for character, except that
JAX's duplicate pure equations are merged first (plait hash-conses them).
The layout engine is checked against JAX's own pretty printer on random
documents.
"""

from __future__ import annotations

import warnings
from typing import Any

import hypothesis.strategies as st
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given
from jax._src import core as jcore
from jax._src import pretty_printer as jpp

import plait
import plait.numpy as pjnp
from plait.ir import pp_eqn_in
from plait.ir import pretty as pp
from plait.ir.printer import pp_eqn_text, var_name
from tests.ir.jaxpr_corpus import (
    CASES,
    KNOWN_DIFFERENCES,
    Case,
    jax_oracle_text,
    merge_duplicates,
    trace_jax,
    trace_plait,
)

_BY_NAME = {c.name: c for c in CASES}


@pytest.fixture(autouse=True)
def _quiet_numpy() -> None:
    warnings.simplefilter("ignore", RuntimeWarning)  # JAX's own overflow warnings


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_text_matches_jax(case: Case) -> None:
    _, expected = jax_oracle_text(case)
    closed = trace_plait(case)
    assert str(closed) == expected
    theirs = trace_jax(case).consts
    assert len(closed.consts) == len(theirs)
    for mine, their in zip(closed.consts, theirs):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(their), strict=True)


@pytest.mark.parametrize("case", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True,
                                            reason=f"frontend differs from JAX: {why}"))
    for c, why in KNOWN_DIFFERENCES], ids=[c.name for c, _ in KNOWN_DIFFERENCES])
def test_known_frontend_differences(case: Case) -> None:
    _, expected = jax_oracle_text(case)
    assert str(trace_plait(case)) == expected


def test_func6_differs_from_jax_only_by_the_merged_broadcast() -> None:
    raw, merged = jax_oracle_text(_BY_NAME["func6"])
    got = str(trace_plait(_BY_NAME["func6"]))
    jax_lines, plait_lines = raw.splitlines(), got.splitlines()
    assert sum("= broadcast_in_dim 1.0:f32[]" in line for line in jax_lines) == 2
    assert sum("= broadcast_in_dim 1.0:f32[]" in line for line in plait_lines) == 1
    assert len(jax_lines) == len(plait_lines) + 1
    assert got == merged


def test_merging_keeps_texts_without_duplicates() -> None:
    closed = trace_jax(_BY_NAME["func1"])
    assert str(merge_duplicates(closed)) == str(closed)


@pytest.mark.parametrize("fn, args, text", [
    # Printed in seed 001 (jax.make_jaxpr of JAX 0.10.2's era).
    (lambda x: x + 1, (5,), "{ lambda ; a:i32[]. let b:i32[] = add a 1:i32[] in (b,) }"),
    (lambda x: pjnp.exp(pjnp.tanh(x)), (np.ones(5, np.float32),),
     "{ lambda ; a:f32[5]. let b:f32[5] = tanh a; c:f32[5] = exp b in (c,) }"),
])
def test_seed_001_texts(fn, args, text) -> None:
    assert str(plait.make_jaxpr(fn)(*args)) == text


@pytest.mark.parametrize("name", ["bar", "very_many_inputs_wrap", "many_binders_wrap",
                                  "long_types_wrap", "jit_nested", "jit_shared_callee"])
@pytest.mark.parametrize("width", [10, 40, 60, 100, 200])
def test_widths_match_jax(name: str, width: int) -> None:
    case = _BY_NAME[name]
    expected = merge_duplicates(trace_jax(case)).pretty_print(width=width, use_color=False)
    assert trace_plait(case).pretty_print(width=width) == expected


def test_two_dropped_callee_results_are_not_both_named_underscore() -> None:
    # JAX names both callee results ``_`` (the text no longer says which is
    # which); plait keeps the first ``_`` and names the second afresh.
    def f(np_, jit_):
        return lambda x: jit_(lambda y: (np_.sin(y), np_.cos(y), y * 2))(x)[2]
    x = np.ones(3, np.float32)
    theirs = str(jax.make_jaxpr(f(jjnp, jax.jit))(x))
    assert "_:f32[3] = sin a\n          _:f32[3] = cos a" in theirs and "in (_, _, b) }" in theirs
    expected = (theirs.replace("_:f32[3] = cos a", "c:f32[3] = cos a")
                .replace("in (_, _, b)", "in (_, c, b)"))
    assert str(plait.make_jaxpr(f(pjnp, plait.jit))(x)) == expected


def test_variable_names_match_jax() -> None:
    for n in range(30000):
        assert var_name(n) == jcore._encode_digits_alphabetic(n)


def test_eqn_text_uses_the_jaxprs_names() -> None:
    closed = trace_plait(_BY_NAME["func1"])
    jaxpr = closed.jaxpr
    lines = str(jax.make_jaxpr(_BY_NAME["func1"].make(jjnp, jax.lax, jax.jit))(
        *_BY_NAME["func1"].args)).splitlines()[1:-1]
    assert [pp_eqn_in(jaxpr, e) for e in jaxpr.eqns] == [line.strip() for line in lines]
    # A lone equation names its variables in order of appearance (outputs first).
    assert pp_eqn_text(jaxpr.eqns[2]) == "a:f32[8] = add b c"
    assert repr(jaxpr.eqns[0]) == "a:f32[8] = sin b"


# -- The layout engine against JAX's pretty printer ----------------------------

def _docs() -> st.SearchStrategy[tuple[object, pp.Doc]]:
    """Pairs (JAX doc, plait doc) built alike."""
    leaves = st.one_of(
        st.text("xyz", max_size=12).map(lambda s: (jpp.text(s), pp.text(s))),
        st.sampled_from(["", " ", "; ", ", "]).map(lambda s: (jpp.brk(s), pp.brk(s))),
    )

    def extend(children: st.SearchStrategy[tuple[Any, pp.Doc]]
               ) -> st.SearchStrategy[tuple[Any, pp.Doc]]:
        many = st.lists(children, max_size=4)
        return st.one_of(
            many.map(lambda ds: (jpp.concat([a for a, _ in ds]), pp.concat([b for _, b in ds]))),
            st.tuples(st.integers(0, 4), children).map(
                lambda nd: (jpp.nest(nd[0], nd[1][0]), pp.nest(nd[0], nd[1][1]))),
            children.map(lambda d: (jpp.group(d[0]), pp.group(d[1]))),
            st.tuples(leaves, many).map(lambda sd: (
                jpp.join(sd[0][0], [a for a, _ in sd[1]]),
                pp.join(sd[0][1], [b for _, b in sd[1]]))),
        )
    return st.recursive(leaves, extend, max_leaves=40)


@given(_docs(), st.integers(0, 90))
def test_layout_matches_jax_pretty_printer(docs: tuple[Any, pp.Doc], width: int) -> None:
    jax_doc, doc = docs
    assert pp.format_doc(doc, width) == jax_doc.format(width=width, use_color=False)


def test_layout_examples() -> None:
    doc = pp.group(pp.nest(2, pp.concat([pp.text("f["), pp.brk(""), pp.text("a=1"), pp.brk(),
                                         pp.text("b=2")])) + pp.brk("") + pp.text("]"))
    assert pp.format_doc(doc, 80) == "f[a=1 b=2]"
    assert pp.format_doc(doc, 9) == "f[\n  a=1\n  b=2\n]"
    # A group is flat iff it fits by itself: text after it does not count.
    after = pp.concat([pp.group(pp.text("ab") + pp.brk() + pp.text("cd")), pp.text("efghij")])
    assert pp.format_doc(after, 6) == "ab cdefghij"
    assert pp.format_doc(pp.join(pp.text(","), [pp.text("x")] * 3), 1) == "x,x,x"
    assert pp.format_doc(pp.NIL) == ""

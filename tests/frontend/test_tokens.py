"""Tokens (``lax.create_token``, ``lax.after_all``) against JAX 0.10.2: their jaxprs,
their lowering, and jit taking and returning them."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from jax import lax as jlax

import plait
from plait import lax
from plait.ir import abstract_token, parse_jaxpr


def _module_body(text: str) -> str:
    """The lines of ``@main`` (names of the module aside)."""
    lines = text.strip().splitlines()
    return "\n".join(line.strip() for line in lines[1:])


def test_create_token_outside_a_trace_is_a_token_as_in_jax() -> None:
    t, jt = lax.create_token(), jlax.create_token()
    assert type(t).__name__ == type(jt).__name__ == "Token"
    assert t.aval is abstract_token
    assert t.block_until_ready() is t
    assert jax.tree_util.tree_leaves(jt) == [jt] and plait.tree_util.tree_leaves(t) == [t]


def test_after_all_outside_a_trace_joins_tokens() -> None:
    t = lax.after_all(lax.create_token(), lax.create_token())
    assert type(t) is type(lax.create_token())
    assert type(lax.after_all()) is type(t)  # no operands: a fresh token, as JAX's


@pytest.mark.parametrize(("theirs", "ours"), [
    (lambda: jlax.create_token(), lambda: lax.create_token()),
    (lambda: jlax.after_all(), lambda: lax.after_all()),
    (lambda: jlax.after_all(jlax.create_token()), lambda: lax.after_all(lax.create_token())),
])
def test_jaxprs_print_as_jax_prints_them(theirs: Any, ours: Any) -> None:
    expected = str(jax.make_jaxpr(theirs)())
    assert str(plait.make_jaxpr(ours)()) == expected
    assert str(parse_jaxpr(expected)) == expected


def test_jit_takes_and_returns_tokens_lowered_as_jax() -> None:
    def f(t: Any) -> Any:
        return lax.after_all(t)

    def jf(t: Any) -> Any:
        return jlax.after_all(t)

    ours = plait.jit(f).lower(lax.create_token()).as_text()
    theirs = jax.jit(jf).lower(jlax.create_token()).as_text()
    assert _module_body(ours) == _module_body(theirs)
    out = plait.jit(f)(lax.create_token())
    again = plait.jit(f)(out)  # (a second call: the same program)
    assert type(out) is type(again) is type(lax.create_token())


def test_jit_result_mixing_arrays_and_a_token() -> None:
    def ours(x: Any) -> Any:
        return x * 2, lax.create_token()

    def theirs(x: Any) -> Any:
        return x * 2, jlax.create_token()

    assert _module_body(plait.jit(ours).lower(1.5).as_text()) == \
        _module_body(jax.jit(theirs).lower(1.5).as_text())
    for _ in range(2):
        y, t = plait.jit(ours)(np.float32(1.5))
        np.testing.assert_array_equal(np.asarray(y), np.asarray(jax.jit(theirs)(1.5)[0]))
        assert t.aval is abstract_token


def test_jaxpr_with_a_token_input_round_trips() -> None:
    jaxpr = plait.make_jaxpr(lambda t, x: (lax.after_all(t, t), x + 1))(lax.create_token(), 1.0)
    expected = str(jax.make_jaxpr(lambda t, x: (jlax.after_all(t, t), x + 1))(
        jlax.create_token(), 1.0))
    assert str(jaxpr) == expected
    assert parse_jaxpr(str(jaxpr)) == jaxpr.jaxpr


def test_a_captured_token_and_a_token_aux_output_as_in_jax() -> None:
    t = lax.create_token()
    y, t2 = plait.jit(lambda x: (x, lax.after_all(t)))(1.0)
    jy, _ = jax.jit(lambda x: (x, jlax.after_all(jlax.create_token())))(1.0)
    assert float(y) == float(jy) and t2.aval is abstract_token

    def f(x: Any) -> Any:
        return x * x, lax.after_all(lax.create_token())

    (v, tok), g = plait.value_and_grad(f, has_aux=True)(3.0)
    (jv, _), jg = jax.value_and_grad(lambda x: (x * x, jlax.create_token()), has_aux=True)(3.0)
    assert (float(v), float(g)) == (float(jv), float(jg)) and tok.aval is abstract_token


@pytest.mark.parametrize("bad", [1.0, np.ones(2, np.float32)])
def test_after_all_refuses_arrays_as_jax(bad: Any) -> None:
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        jlax.after_all(bad)
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens, but got"):
        lax.after_all(bad)
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        plait.jit(lambda x: lax.after_all(x))(bad)

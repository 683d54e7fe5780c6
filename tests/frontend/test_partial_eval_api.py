"""``plait.interpreters.partial_eval`` (``PartialVal``, ``trace_to_jaxpr_nounits``,
``trace_to_jaxpr_dynamic``), compared with JAX's ``jax.interpreters.partial_eval``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax.extend import linear_util as jlu
from jax.interpreters import partial_eval as jpe

import plait
import plait.numpy as pjnp
from plait.extend import linear_util as plu
from plait.interpreters import partial_eval as ppe
from plait.ir import check_jaxpr

A = np.array([0.5, -1.0, 2.0], np.float32)
B = np.array([1.5, 0.25, -3.0], np.float32)
C = np.float32(0.75)


def _wrap(lu: Any, f: Any, nargs: int) -> Any:
    api_util = jax.api_util if lu is jlu else plait.api_util
    return lu.wrap_init(f, debug_info=api_util.debug_info("test", f, (0,) * nargs, {}))


def _program(np_: Any) -> Any:
    def f(a: Any, b: Any, c: Any) -> list[Any]:
        return [a * 2.0, a * b, np_.sin(a) + c, b, np_.ones(3) * 4.0, np_.sum(a * c)]
    return f


def _split(lib: str, known: tuple[bool, ...], instantiate: bool = False
           ) -> tuple[list[bool], list[Any], Any, list[Any]]:
    """Which outputs are known, their values, and the jaxpr with its consts."""
    np_, lu, pe = (jjnp, jlu, jpe) if lib == "jax" else (pjnp, plu, ppe)
    avals: list[Any] = [jax.core.ShapedArray(v.shape, v.dtype) if lib == "jax" else
                        plait.core.ShapedArray(v.shape, v.dtype) for v in (A, B, C)]
    pvals = [pe.PartialVal.known(v) if k else pe.PartialVal.unknown(a)
             for v, a, k in zip((A, B, C), avals, known)]
    fun = _wrap(lu, _program(np_), 3)
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(fun, pvals, instantiate=instantiate)
    return ([pv.is_known() for pv in out_pvals],
            [np.asarray(pv.get_known()) for pv in out_pvals if pv.is_known()], jaxpr, consts)


@settings(max_examples=8, deadline=None)
@given(st.tuples(st.booleans(), st.booleans(), st.booleans()))
def test_known_outputs_and_their_values_are_jaxs(known: tuple[bool, bool, bool]) -> None:
    ours, our_values, jaxpr, consts = _split("plait", known)
    theirs, their_values, _, _ = _split("jax", known)
    assert ours == theirs
    for x, y in zip(our_values, their_values):
        np.testing.assert_allclose(x, y, rtol=1e-6)
    # The jaxpr computes the unknown outputs from its consts and the unknown inputs.
    check_jaxpr(jaxpr)
    unknown_in = [v for v, k in zip((A, B, C), known) if not k]
    outs = plait.core.eval_jaxpr(jaxpr, consts, *unknown_in)
    expected = [o for o, k in zip(_program(np)(A, B, C), theirs) if not k]
    assert len(outs) == len(expected)
    for x, y in zip(outs, expected):
        np.testing.assert_allclose(np.asarray(x), y, rtol=1e-6)


def test_instantiate_keeps_every_output_in_the_jaxpr() -> None:
    ours = _split("plait", (True, False, True), instantiate=True)
    theirs = _split("jax", (True, False, True), instantiate=True)
    assert ours[0] == theirs[0] == [False] * 6
    assert len(ours[2].outvars) == 6


def test_outputs_independent_of_every_input_are_known() -> None:
    # flax's lifted scan asks which results of a body do not depend on its inputs.
    ours = _split("plait", (False, False, False))
    theirs = _split("jax", (False, False, False))
    assert ours[0] == theirs[0] == [False, False, False, False, True, False]
    np.testing.assert_array_equal(ours[1][0], theirs[1][0])


def test_python_control_flow_reads_known_values() -> None:
    def f(a: Any, b: Any) -> list[Any]:
        return [b * 2.0 if float(a[0]) > 0 else b - 1.0, a + 1.0]

    for pe, lu, shaped in ((ppe, plu, plait.core.ShapedArray),
                           (jpe, jlu, jax.core.ShapedArray)):
        wrapped = _wrap(lu, f, 2)
        _, out_pvals, _ = pe.trace_to_jaxpr_nounits(
            wrapped, [pe.PartialVal.known(A), pe.PartialVal.unknown(shaped((3,), np.float32))])
        assert [pv.is_known() for pv in out_pvals] == [False, True]
        np.testing.assert_allclose(np.asarray(out_pvals[1].get_known()), A + 1.0)


def test_known_values_under_jit_are_the_enclosing_traces() -> None:
    def split(pe: Any, lu: Any, shaped: Any, a: Any) -> Any:
        def f(x: Any, y: Any) -> list[Any]:
            return [x * 3.0, x + y]
        wrapped = _wrap(lu, f, 2)
        _, out_pvals, consts = pe.trace_to_jaxpr_nounits(
            wrapped, [pe.PartialVal.known(a), pe.PartialVal.unknown(shaped((3,), np.float32))])
        return out_pvals[0].get_known(), consts

    ours, our_consts = plait.jit(lambda a: split(ppe, plu, plait.core.ShapedArray, a))(A)
    theirs, _ = jax.jit(lambda a: split(jpe, jlu, jax.core.ShapedArray, a))(A)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs))
    np.testing.assert_allclose(np.asarray(our_consts[0]), A)


def test_trace_to_jaxpr_dynamic_gives_jaxs_types_and_consts() -> None:
    captured = np.arange(3.0, dtype=np.float32)

    def f(x: Any) -> list[Any]:
        return [x * captured, (x.sum() > 0).astype(np.int32)]

    jaxpr, out_avals, consts = ppe.trace_to_jaxpr_dynamic(
        _wrap(plu, f, 1), [plait.core.ShapedArray((3,), np.float32)])
    _, their_avals, _ = jpe.trace_to_jaxpr_dynamic(_wrap(jlu, f, 1),
                                                   [jax.core.ShapedArray((3,), np.float32)])
    ours: list[Any] = out_avals
    assert [(a.shape, a.dtype) for a in ours] == [(a.shape, a.dtype) for a in their_avals]
    outs = plait.core.eval_jaxpr(jaxpr, consts, A)
    np.testing.assert_allclose(np.asarray(outs[0]), A * captured)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="expected pvals\\[1\\] to be a PartialVal"):
        ppe.trace_to_jaxpr_nounits(_wrap(plu, lambda a, b: [a], 2),
                                   [ppe.PartialVal.known(A), A])  # type: ignore[list-item]  # (the error tested)
    with pytest.raises(TypeError, match="expected a WrappedFun"):
        ppe.trace_to_jaxpr_nounits(lambda a: [a], [ppe.PartialVal.known(A)])  # type: ignore[arg-type]  # (the error tested)
    with pytest.raises(TypeError, match="expected an abstract value"):
        ppe.PartialVal.unknown(A)  # type: ignore[arg-type]  # (the error tested)
    with pytest.raises(TypeError, match="expected in_avals\\[0\\] to be an abstract value"):
        ppe.trace_to_jaxpr_dynamic(_wrap(plu, lambda a: [a], 1), [A])  # type: ignore[list-item]  # (the error tested)

"""The reference interpreter against real JAX, primitive by primitive.

Every spec of ``tests/primitive_specs.py`` runs as a one-equation jaxpr under
:func:`plait.ir.eval_jaxpr` and is compared, values and types, with the same
operation in JAX on CPU.  Also: the typing rules against JAX's (accepted
dtypes, result types, weak types), and random chains of elementwise
primitives against NumPy.

The default run covers the (dtype, shape) product of each spec with JAX's
results computed in a dozen batches (see ``tests/spec_cases.py``); ``-m slow``
runs every case.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import hypothesis
import hypothesis.strategies as st
import jax
import numpy as np
import pytest

from plait.errors import JaxprTypeError
from plait.ir import (
    PRIMITIVES,
    Builder,
    ClosedJaxpr,
    Literal,
    ShapedArray,
    Var,
    check_jaxpr,
    eval_jaxpr,
    impl_rules,
    shaped,
)
from plait.ir import primitives as P
from plait.transforms.physicalize import PHYSICALIZED
from tests.primitive_specs import ALL_DTYPES, SPECS, UNSPECIFIED, DType, PrimSpec, Shape
from tests.spec_cases import CHUNK_OF, Case, default_run, eval_jax, mismatch

jax.config.update("jax_platforms", "cpu")


def _eval_plait(spec: PrimSpec, case: Case) -> tuple[list[np.ndarray], list[ShapedArray]]:
    invars = [Var(ShapedArray(a.shape, a.dtype)) for a in case.args]
    b = Builder()
    outvars = b.bind(spec.primitive, tuple(invars), case.params)
    jaxpr = b.build(invars, outvars)
    check_jaxpr(jaxpr)
    avals = [shaped(v.aval) for v in outvars]
    # The rule itself must produce the declared types: eval_jaxpr would cast silently.
    raw = impl_rules[spec.primitive](*case.args, **jaxpr.eqns[0].params)
    for r, aval in zip(raw, avals, strict=True):
        r = np.asarray(r)
        assert (r.shape, r.dtype) == (aval.shape, aval.dtype), (
            f"{case.label()}: the reference rule returned {r.dtype}{list(r.shape)}, "
            f"its typing rule says {aval.str_short()}")
    return eval_jaxpr(jaxpr, [], *case.args), avals


def _check_spec(spec: PrimSpec, cases: Sequence[Case], expected: Any) -> None:
    if isinstance(expected, BaseException):
        raise expected
    failures = []
    for case, exp in zip(cases, expected):
        outs, avals = _eval_plait(spec, case)
        if len(outs) != len(exp):
            failures.append(f"{case.label()}: {len(outs)} results, JAX {len(exp)}")
            continue
        for k, (out, aval, (val, weak)) in enumerate(zip(outs, avals, exp)):
            if aval.weak_type != weak:
                failures.append(
                    f"{case.label()} result {k}: weak_type {aval.weak_type}, JAX {weak}")
            why = mismatch(out, val, spec.tol_for(case.dtype))
            if why:
                arg_text = "; ".join(np.array2string(a.reshape(-1)[:12], precision=9)
                                     for a in case.args)
                failures.append(f"{case.label()} result {k}: {why}\n      args: {arg_text}")
    assert not failures, f"{spec.name} params={cases[0].params}:\n  " + "\n  ".join(failures)


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_reference_matches_jax(spec: PrimSpec) -> None:
    cases, expected = default_run(CHUNK_OF[spec.name])[spec.name]
    _check_spec(spec, cases, expected)


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_reference_matches_jax_all_cases(spec: PrimSpec) -> None:
    cases = [Case(spec, d, s) for d, s in spec.cases()]
    _check_spec(spec, cases, eval_jax([(spec, cases)])[0])


def test_every_primitive_has_a_reference_rule_and_a_spec() -> None:
    specified = {s.primitive for s in SPECS}
    for name, prim in PRIMITIVES.items():
        assert prim in impl_rules, f"{name} has no reference rule"
        # The key primitives take key arrays, which specs cannot feed: their reference
        # rules are checked against JAX in tests/frontend/test_random.py.
        assert prim in specified or prim in PHYSICALIZED or prim in UNSPECIFIED, \
            f"{name} has no spec in tests/primitive_specs.py"


def test_spec_flags_are_consistent() -> None:
    for s in SPECS:
        d, shape = s.dtypes[0], s.shapes[0]
        n = len(s.args_for(d, shape))
        assert all(0 <= i < n for i in s.linear_in), s.name
        assert not s.multilinear or len(s.linear_in) > 1, s.name
        assert s.tol >= 0, s.name


# ----------------------------------------------------------------------------- typing vs JAX

# Where plait's typing rules knowingly disagree with JAX's (keys as in the failure messages).
_KNOWN_TYPING_DIFFERENCES: dict[str, str] = {
    "conj:float32": "JAX's conj takes real operands (to a complex result); plait's conj is "
                    "complex-only (its input_dtype is the operand's)",
    "add_any:bool": "JAX's typing rule takes anything; its lowering refuses bool",
    "argmax_first_int32:complex64": "JAX's typing rule takes complex; its lowering refuses it",
    "argmin_first_int32:complex64": "JAX's typing rule takes complex; its lowering refuses it",
    "clamp:complex64": "JAX's typing rule takes complex, but XLA's complex clamp on CPU is "
                       "neither lexicographic nor documented (clamp(0, 3j, 3j) is 0)",
    "add_any:float32 with weak operands (True, False)":
        "JAX's add_any has the first operand's type; plait's is weak only if both are",
    "select_and_gather_add_ge:complex64": "JAX's typing rule takes complex, which GE does "
                                          "not order; plait refuses it",
    "select_and_scatter_add_ge:complex64": "JAX's typing rule takes complex, which GE does "
                                           "not order; plait refuses it",
    "select_and_scatter_add_ge:bool": "JAX's typing rule takes a bool source (to be summed); "
                                      "plait takes numbers",
    **{f"cumlogsumexp_first:{d}": "JAX's typing rule takes integers, then fails to lower "
                                  "them (its -inf initial value)"
       for d in ("int8", "int16", "int32", "uint8", "uint16", "uint32")},
    **{f"rng_uniform:{d}": "JAX's typing rule takes any dtype, but XLA's CPU compiler aborts "
                           "the process on these (rng_expander.cc: Check failed)"
       for d in ("bool", "int8", "int16", "uint8", "uint16", "complex64")},
    **{f"{name}:{d}": "JAX's typing rule takes half-precision floats, then fails to lower "
                      "them (LAPACK has no such kernels); plait refuses them when tracing"
       for name in ("cholesky", "triangular_solve_left_lower", "lu", "geqrf",
                    "householder_product", "qr_full", "eigh", "svd_values", "eig",
                    "tridiagonal_solve", "hessenberg", "tridiagonal_lower", "schur", "geqp3",
                    "svd_empty_uv_full", "ormqr_left", "ormqr_left_t", "ormqr_right",
                    "ormqr_right_t")
       for d in ("float16", "bfloat16")},
}


Probe = tuple[DType, tuple[bool, ...]]
"""A dtype for the case, and which operands are weakly typed."""


def _weak(probe: Probe, i: int) -> bool:
    return probe[1][i] if i < len(probe[1]) else False


def _plait_types(spec: PrimSpec, shape: Shape, probe: Probe) -> Any:
    """plait's result types for the case, or None where its typing rule refuses."""
    try:
        params = spec.params_for(probe[0], shape)
        args = [np.asarray(a) for a in spec.args_for(probe[0], shape)]
        invars = tuple(Var(ShapedArray(a.shape, a.dtype, _weak(probe, i)))
                       for i, a in enumerate(args))
        return [v.aval for v in Builder().bind(spec.primitive, invars, params)]
    except JaxprTypeError:
        return None


def _jax_types(spec: PrimSpec, shape: Shape, probes: Sequence[Probe]) -> list[Any]:
    """JAX's result types for each case (None where it refuses), from one trace."""
    cases = []
    for probe in probes:
        try:
            params: Any = spec.params_for(probe[0], shape)
        except JaxprTypeError:
            params = None  # plait could not even build the params (a nested jaxpr)
        args = [np.asarray(a) for a in spec.args_for(probe[0], shape)]
        cases.append((params, [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=_weak(probe, i))
                               for i, a in enumerate(args)]))

    def run(arglists: Any) -> Any:
        outs = []
        for (params, _), args in zip(cases, arglists):
            try:
                outs.append(None if params is None else spec.run_jax(args, params))
            except (TypeError, ValueError):
                outs.append(None)
        return outs
    return jax.eval_shape(run, [args for _, args in cases])


def _typing_problems(spec: PrimSpec, probes: Sequence[Probe]) -> list[str]:
    shape = max(spec.shapes, key=len)
    problems = []
    for probe, theirs in zip(probes, _jax_types(spec, shape, probes)):
        mine = _plait_types(spec, shape, probe)
        weak = f" with weak operands {probe[1]}" if any(probe[1]) else ""
        key = f"{spec.name}:{probe[0].name}{weak}"
        if key in _KNOWN_TYPING_DIFFERENCES:
            continue
        if (mine is None) != (theirs is None):
            problems.append(f"{key}: plait {'accepts' if mine else 'refuses'}, "
                            f"JAX {'accepts' if theirs else 'refuses'}")
        elif mine is not None:
            got = [(a.shape, a.dtype, a.weak_type) for a in mine]
            want = [(tuple(t.shape), np.dtype(t.dtype), bool(t.weak_type)) for t in theirs]
            if got != want:
                problems.append(f"{key}: plait gives {got}, JAX {want}")
    return problems


_FIRST_SPECS = list({s.primitive: s for s in reversed(SPECS)}.values())[::-1]


def test_typing_rules_accept_the_dtypes_jax_accepts() -> None:
    """One spec per primitive, each dtype: accepted by both or refused by both, same types."""
    problems = []
    for spec in _FIRST_SPECS:
        problems += _typing_problems(spec, [(d, ()) for d in ALL_DTYPES])
    assert not problems, "\n".join(problems)


def test_typing_rules_give_weak_types_as_jax() -> None:
    """Weakly typed operands (Python scalars): the results are weak exactly when JAX's are."""
    problems = []
    for spec in _FIRST_SPECS:
        d, shape = spec.dtypes[0], max(spec.shapes, key=len)
        if any(isinstance(v, ClosedJaxpr) or isinstance(v, tuple) and v
               and isinstance(v[0], ClosedJaxpr) for v in spec.params_for(d, shape).values()):
            continue  # the nested jaxprs fix the types (the frontend traces them weak or not)
        n = len(spec.args_for(d, shape))
        masks = {(True,) * n} | {tuple(i == j for j in range(n)) for i in range(n)}
        problems += _typing_problems(spec, [(d, m) for m in sorted(masks) if n])
    assert not problems, "\n".join(problems)


# ----------------------------------------------------------------------------- random chains

_UNARY = [(P.sin_p, np.sin), (P.cos_p, np.cos), (P.tanh_p, np.tanh), (P.exp_p, np.exp),
          (P.log1p_p, np.log1p), (P.sqrt_p, np.sqrt), (P.atan_p, np.arctan),
          (P.abs_p, np.abs), (P.neg_p, np.negative), (P.floor_p, np.floor),
          (P.logistic_p, lambda x: 1 / (1 + np.exp(-x))), (P.expm1_p, np.expm1),
          (P.sinh_p, np.sinh), (P.cbrt_p, np.cbrt)]
_BINARY = [(P.add_p, np.add), (P.sub_p, np.subtract), (P.mul_p, np.multiply),
           (P.div_p, np.divide), (P.max_p, np.maximum), (P.min_p, np.minimum),
           (P.atan2_p, np.arctan2), (P.pow_p, np.power)]


@st.composite
def _chains(draw: st.DrawFn) -> tuple[list[Any], int, tuple[int, ...]]:
    shape = draw(st.sampled_from([(), (3,), (2, 3)]))
    n_inputs = draw(st.integers(1, 3))
    steps: list[tuple[Any, ...]] = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            steps.append(("u", draw(st.integers(0, len(_UNARY) - 1)), draw(st.integers(0, 99))))
        else:
            lit = draw(st.none() | st.floats(-3, 3, width=32))
            steps.append(("b", draw(st.integers(0, len(_BINARY) - 1)), draw(st.integers(0, 99)),
                          draw(st.integers(0, 99)), lit))
    return steps, n_inputs, shape


@hypothesis.given(_chains(), st.integers(0, 2**32 - 1))
def test_random_elementwise_chains_match_numpy(chain: Any, seed: int) -> None:
    steps, n_inputs, shape = chain
    rng = np.random.default_rng(seed)
    inputs = [np.asarray(rng.uniform(-2, 2, shape)).astype(np.float32) for _ in range(n_inputs)]
    aval = ShapedArray(shape, np.float32)
    invars = [Var(aval) for _ in inputs]
    b = Builder()
    atoms: list[Any] = list(invars)
    values = list(inputs)
    f32 = np.float32
    acc = {"accuracy": None}
    for step in steps:
        if step[0] == "u":
            prim, fn = _UNARY[step[1]]
            i = step[2] % len(atoms)
            params = acc if "accuracy" in prim.params_by_name else {}
            atoms.append(b.bind1(prim, atoms[i], **params))
            with np.errstate(all="ignore"):
                values.append(np.asarray(fn(values[i])).astype(f32))
        else:
            prim, fn = _BINARY[step[1]]
            i, j, lit = step[2] % len(atoms), step[3] % len(atoms), step[4]
            rhs = atoms[j] if lit is None else Literal(float(lit), ShapedArray((), np.float32))
            rhs_val = values[j] if lit is None else np.float32(lit)
            params = {"out_dtype": None} if prim is P.mul_p else {}
            atoms.append(b.bind1(prim, atoms[i], rhs, **params))
            with np.errstate(all="ignore"):
                values.append(np.asarray(fn(values[i], rhs_val)).astype(f32))
    jaxpr = b.build(invars, [atoms[-1]])
    got, = eval_jaxpr(jaxpr, [], *inputs)
    want = np.broadcast_to(values[-1], got.shape)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True)

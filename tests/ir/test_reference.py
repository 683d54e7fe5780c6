"""The reference interpreter against real JAX, primitive by primitive.

Every spec of ``tests/primitive_specs.py`` is run as a one-equation jaxpr
under :func:`plait.ir.eval_jaxpr` and compared, value and type, with the same
operation in JAX on CPU.  XLA compiles are the cost here, so all the cases of
one spec are compiled as one JAX program, and elementwise cases of one dtype
are packed into a single flat operand.  The default run covers every dtype
and every shape of every spec without their full product; ``-m slow`` runs
the product.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import hypothesis
import hypothesis.strategies as st
import jax
import ml_dtypes
import numpy as np
import pytest

from plait.errors import JaxprTypeError
from plait.ir import (PRIMITIVES, Builder, Literal, ShapedArray, Var, check_jaxpr, eval_jaxpr,
                      impl_rules)
from plait.ir import primitives as P
from tests.primitive_specs import ALL_DTYPES, BF16, SPECS, DType, PrimSpec, Shape

jax.config.update("jax_platforms", "cpu")

# LLVM's optimization level does not change IEEE results (XLA emits no
# fast-math flags on CPU) but halves compile times.
_COMPILER_OPTIONS = {"xla_backend_optimization_level": 0}

_ELEMENTWISE = {p for p in PRIMITIVES.values() if p.typing_rule.__module__ in (
    "plait.ir.primitives._typing", "plait.ir.primitives.elementwise")}


class Case:
    """One (dtype, shape) of a spec: its params, operands, and plait's results."""

    def __init__(self, spec: PrimSpec, dtype: DType, shape: Shape) -> None:
        self.dtype, self.shape = dtype, shape
        self.params = spec.params_for(dtype, shape)
        self.args = [np.asarray(a) for a in spec.args_for(dtype, shape)]

    def label(self) -> str:
        return f"{self.dtype.name}{list(self.shape)}"


def _fast_cases(spec: PrimSpec, primary: bool = True) -> list[tuple[DType, Shape]]:
    """Each shape with the first dtype; for the first spec of a primitive, also
    each dtype with the largest shape."""
    big = max(spec.shapes, key=lambda s: (math.prod(s) > 0, len(s), math.prod(s)))
    pairs = [(spec.dtypes[0], s) for s in spec.shapes]
    if primary or spec.primitive in _ELEMENTWISE:  # elementwise dtypes pack: nearly free
        pairs += [(d, big) for d in spec.dtypes]
    return list(dict.fromkeys(pairs))


def _eval_plait(spec: PrimSpec, case: Case) -> tuple[list[np.ndarray], list[ShapedArray]]:
    invars = [Var(ShapedArray(a.shape, a.dtype)) for a in case.args]
    b = Builder()
    outvars = b.bind(spec.primitive, tuple(invars), case.params)
    jaxpr = b.build(invars, outvars)
    check_jaxpr(jaxpr)
    avals = [v.aval for v in outvars]
    # The rule itself must produce the declared types: eval_jaxpr would cast silently.
    raw = impl_rules[spec.primitive](*case.args, **jaxpr.eqns[0].params)
    for r, aval in zip(raw, avals, strict=True):
        r = np.asarray(r)
        assert (r.shape, r.dtype) == (aval.shape, aval.dtype), (
            f"{case.label()}: the reference rule returned {r.dtype}{list(r.shape)}, "
            f"its typing rule says {aval.str_short()}")
    return eval_jaxpr(jaxpr, [], *case.args), avals


Results = list[list[tuple[np.ndarray, bool]]]
"""Per case, per result: JAX's value and weak_type."""


def _eval_jax(entries: Sequence[tuple[PrimSpec, Sequence[Case]]]) -> list[Results]:
    """JAX's results for the cases of several specs, from one compiled program.

    XLA spends ~15 ms per kernel even at -O0, so elementwise cases that share
    a JAX function, params and operand dtypes are concatenated into one flat
    operand whatever spec and shape they come from.
    """
    jobs: dict[Any, list[tuple[int, int]]] = {}
    for si, (spec, cases) in enumerate(entries):
        for ci, c in enumerate(cases):
            if spec.primitive in _ELEMENTWISE and all(a.shape == c.shape for a in c.args):
                key: Any = (spec.jax_fn, repr(sorted(c.params.items())),
                            tuple(a.dtype for a in c.args))
            else:
                key = (si, ci)
            jobs.setdefault(key, []).append((si, ci))
    members = list(jobs.values())
    calls = []
    for m in members:
        spec, c = entries[m[0][0]][0], entries[m[0][0]][1][m[0][1]]
        args = c.args if len(m) == 1 else [
            np.concatenate([entries[si][1][ci].args[k].reshape(-1) for si, ci in m])
            for k in range(len(c.args))]
        calls.append((spec, c.params, args))

    def program(arglists: Any) -> Any:
        return [spec.run_jax(a, p) for (spec, p, _), a in zip(calls, arglists)]

    arglists = [a for _, _, a in calls]
    outs = jax.jit(program).lower(arglists).compile(compiler_options=_COMPILER_OPTIONS)(arglists)
    results: list[Results] = [[[] for _ in cases] for _, cases in entries]
    for m, mouts in zip(members, outs):
        offset = 0
        for si, ci in m:
            shape = entries[si][1][ci].shape
            n = math.prod(shape)
            for o in mouts:
                val = np.asarray(o)
                if len(m) > 1:
                    val = val[offset:offset + n].reshape(shape)
                results[si][ci].append((val, bool(o.weak_type)))
            offset += n
    return results


def _chunks(specs: Sequence[PrimSpec], size: int = 24) -> list[list[PrimSpec]]:
    """Specs in compile batches that keep each primitive's specs together."""
    by_prim: dict[Any, list[PrimSpec]] = {}
    for s in specs:
        by_prim.setdefault(s.primitive, []).append(s)
    chunks: list[list[PrimSpec]] = [[]]
    for group in by_prim.values():
        if chunks[-1] and len(chunks[-1]) + len(group) > size:
            chunks.append([])
        chunks[-1].extend(group)
    return chunks


_PRIMARY = {s.name for s in {s.primitive: s for s in reversed(SPECS)}.values()}
_CHUNK_OF = {s.name: i for i, chunk in enumerate(_chunks(SPECS)) for s in chunk}


@functools.cache
def _default_run(chunk: int) -> dict[str, tuple[list[Case], list[Results] | BaseException]]:
    """The default cases of one chunk of specs and JAX's results for them."""
    entries = [(s, [Case(s, d, sh) for d, sh in _fast_cases(s, s.name in _PRIMARY)])
               for s in _chunks(SPECS)[chunk]]
    try:
        results: list[Any] = _eval_jax(entries)
    except Exception:  # find the culprit: each spec on its own
        results = []
        for e in entries:
            try:
                results.append(_eval_jax([e])[0])
            except Exception as exc:
                results.append(exc)
    return {s.name: (cases, r) for (s, cases), r in zip(entries, results)}


def _eps(dtype: DType) -> float:
    real = np.dtype(np.float32) if dtype == np.complex64 else dtype
    return float(ml_dtypes.finfo(real).eps)


def _mismatch(actual: np.ndarray, expected: np.ndarray, tol: float) -> str | None:
    """Why ``actual`` differs from ``expected``, or None when they agree."""
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return f"got {actual.dtype}{list(actual.shape)}, JAX {expected.dtype}{list(expected.shape)}"
    d = actual.dtype
    if not (d.kind in "fc" or d == BF16):
        bad = actual != expected
    else:
        wide = np.complex128 if d.kind == "c" else np.float64
        a, e = actual.astype(wide), expected.astype(wide)
        parts = [(a.real, e.real), (a.imag, e.imag)] if d.kind == "c" else [(a, e)]
        with np.errstate(invalid="ignore"):
            bound = tol * _eps(d) * np.maximum(np.abs(e), 1.0)  # complex: relative to |e|
        bad = np.zeros(a.shape, bool)
        for x, y in parts:
            same = (x == y) | (np.isnan(x) & np.isnan(y))
            if tol == 0:
                same &= (np.signbit(x) == np.signbit(y)) | np.isnan(x)
            else:
                with np.errstate(invalid="ignore"):
                    close = np.abs(x - y) <= bound
                same |= close & np.isfinite(x) & np.isfinite(y)
            bad |= ~same
    if not np.any(bad):
        return None
    idx = np.argwhere(bad)[:4] if actual.ndim else [()]
    shown = ", ".join(f"at {tuple(int(j) for j in i)}: {actual[tuple(i)]!r} vs {expected[tuple(i)]!r}"
                      for i in idx)
    return f"{int(np.sum(bad))} of {actual.size} values differ (plait vs JAX) {shown}"


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
                failures.append(f"{case.label()} result {k}: weak_type {aval.weak_type}, JAX {weak}")
            why = _mismatch(out, val, spec.tol_for(case.dtype))
            if why:
                arg_text = "; ".join(np.array2string(a.reshape(-1)[:12], precision=9)
                                     for a in case.args)
                failures.append(f"{case.label()} result {k}: {why}\n      args: {arg_text}")
    assert not failures, f"{spec.name} params={cases[0].params}:\n  " + "\n  ".join(failures)


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_reference_matches_jax(spec: PrimSpec) -> None:
    cases, expected = _default_run(_CHUNK_OF[spec.name])[spec.name]
    _check_spec(spec, cases, expected)


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_reference_matches_jax_all_cases(spec: PrimSpec) -> None:
    cases = [Case(spec, d, s) for d, s in spec.cases()]
    _check_spec(spec, cases, _eval_jax([(spec, cases)])[0])


def test_every_primitive_has_a_reference_rule_and_a_spec() -> None:
    specified = {s.primitive for s in SPECS}
    for name, prim in PRIMITIVES.items():
        assert prim in impl_rules, f"{name} has no reference rule"
        assert prim in specified, f"{name} has no spec in tests/primitive_specs.py"


def test_spec_flags_are_consistent() -> None:
    for s in SPECS:
        d, shape = s.dtypes[0], s.shapes[0]
        n = len(s.args_for(d, shape))
        assert all(0 <= i < n for i in s.linear_in), s.name
        assert not s.multilinear or len(s.linear_in) > 1, s.name
        assert s.tol >= 0, s.name


# ----------------------------------------------------------------------------- typing vs JAX

# Where plait's typing rules knowingly disagree with JAX's about accepted dtypes.
_KNOWN_TYPING_DIFFERENCES: dict[str, str] = {}


def _accepts_plait(spec: PrimSpec, dtype: DType, shape: Shape) -> Any:
    try:
        params = spec.params_for(dtype, shape)
        args = [np.asarray(a) for a in spec.args_for(dtype, shape)]
        invars = tuple(Var(ShapedArray(a.shape, a.dtype)) for a in args)
        return [v.aval for v in Builder().bind(spec.primitive, invars, params)]
    except JaxprTypeError:
        return None


def _accepts_jax(spec: PrimSpec, dtype: DType, shape: Shape) -> Any:
    try:
        params = spec.params_for(dtype, shape)
    except JaxprTypeError:
        params = None  # plait could not even build the params (a nested jaxpr)
    args = [np.asarray(a) for a in spec.args_for(dtype, shape)]
    structs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    try:
        if params is None:
            raise TypeError
        return jax.eval_shape(functools.partial(spec.run_jax, params=params), structs)
    except (TypeError, ValueError):
        return None


def test_typing_rules_accept_the_dtypes_jax_accepts() -> None:
    """For one spec per primitive, each dtype: accepted by both or refused by both, same result type."""
    first: dict[Any, PrimSpec] = {}
    for s in SPECS:
        first.setdefault(s.primitive, s)
    problems = []
    for spec in first.values():
        shape = max(spec.shapes, key=len)
        for d in ALL_DTYPES:
            mine, theirs = _accepts_plait(spec, d, shape), _accepts_jax(spec, d, shape)
            key = f"{spec.name}:{d.name}"
            if (mine is None) != (theirs is None):
                if key not in _KNOWN_TYPING_DIFFERENCES:
                    problems.append(f"{key}: plait {'accepts' if mine else 'refuses'}, "
                                    f"JAX {'accepts' if theirs else 'refuses'}")
            elif mine is not None:
                got = [(a.shape, a.dtype, a.weak_type) for a in mine]
                want = [(tuple(t.shape), np.dtype(t.dtype), bool(t.weak_type)) for t in theirs]
                if got != want:
                    problems.append(f"{key}: plait gives {got}, JAX {want}")
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
    steps = []
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
            atoms.append(b.bind1(prim, atoms[i], **(acc if "accuracy" in prim.params_by_name else {})))
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

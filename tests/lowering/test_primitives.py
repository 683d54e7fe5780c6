"""Every primitive lowered to StableHLO, compiled and run, against JAX and the reference
interpreter.

Each spec of ``tests/primitive_specs.py`` runs through plait's compile path
(:func:`plait.frontend.core.apply_jaxpr.apply_jaxpr`: lower, compile, execute) and is
compared with real JAX on CPU and with the reference interpreter
(:func:`plait.ir.eval_jaxpr`).  Eager execution (``bind`` outside any trace,
a single-equation executable per operation) must equal the compiled results
bit for bit.

Compiles dominate the time, so the default run puts a whole batch of specs
(``tests/spec_cases.py``'s chunks, the same cases JAX computes there, with
elementwise cases packed flat) into one jaxpr and compiles it once; eager
execution, which compiles per operation, runs one case of each primitive's
first spec, against compiled results of the same shapes.
``-m slow`` runs every case of every spec in its own shape, eagerly too.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import jax
import numpy as np
import pytest

from plait.frontend.core.apply_jaxpr import apply_jaxpr
from plait.frontend.core.tracing import bind
from plait.ir import PRIMITIVES, Builder, ClosedJaxpr, Literal, ShapedArray, Var, eval_jaxpr
from plait.ir import primitives as P
from plait.ir.atoms import Atom
from plait.lowering import lower_closed_jaxpr, lowering_rules, runtime
from plait.transforms.physicalize import PHYSICALIZED
from tests.primitive_specs import ALL_DTYPES, SPECS, UNSPECIFIED, PrimSpec, specials
from tests.spec_cases import (
    CHUNK_OF,
    CHUNKS,
    ELEMENTWISE,
    PRIMARY,
    Case,
    Packing,
    Results,
    default_run,
    eval_jax,
    mismatch,
)

Outputs = list[list[np.ndarray]]
"""Per case, per result: a value."""


def _run_compiled(entries: Sequence[tuple[PrimSpec, Sequence[Case]]], name: str,
                  pack: bool = True) -> list[Outputs]:
    """plait's compiled results for the cases of several specs, from one executable.

    With ``pack``, elementwise cases are packed into flat operands as for JAX
    (one kernel per operation and dtypes); otherwise each keeps its shape.
    """
    packing = Packing(entries, pack)
    b = Builder()
    invars: list[Var] = []
    outvars: list[Atom] = []
    counts = []
    for spec, params, args in packing.jobs:
        vs = [Var(ShapedArray(a.shape, a.dtype)) for a in args]
        invars += vs
        outs = b.bind(spec.primitive, tuple(vs), params)
        outvars += outs
        counts.append(len(outs))
    flat = [a for _, _, args in packing.jobs for a in args]
    values = iter(apply_jaxpr(b.build(invars, outvars), [], flat, name))
    per_job = [[next(values) for _ in range(n)] for n in counts]
    return [[[v for v, _ in case] for case in spec_results]
            for spec_results in packing.unpack(per_job)]


def _run_compiled_or_errors(entries: Sequence[tuple[PrimSpec, Sequence[Case]]], name: str,
                            pack: bool = True) -> list[Outputs | BaseException]:
    """As :func:`_run_compiled`; if the batch fails, each spec alone (to name the culprit)."""
    try:
        return list(_run_compiled(entries, name, pack))
    except Exception:
        out: list[Outputs | BaseException] = []
        for e in entries:
            try:
                out.append(_run_compiled([e], e[0].name, pack)[0])
            except Exception as exc:
                out.append(exc)
        return out


@functools.cache
def _compiled_run(chunk: int) -> dict[str, Outputs | BaseException]:
    """plait's compiled results for the default cases of one chunk (JAX's cases)."""
    run = default_run(chunk)
    entries = [(s, run[s.name][0]) for s in CHUNKS[chunk]]
    outs = _run_compiled_or_errors(entries, f"chunk{chunk}")
    return {s.name: o for s, o in zip(CHUNKS[chunk], outs)}


def _reference(spec: PrimSpec, case: Case) -> list[np.ndarray]:
    invars = [Var(ShapedArray(a.shape, a.dtype)) for a in case.args]
    b = Builder()
    outvars = b.bind(spec.primitive, tuple(invars), case.params)
    return eval_jaxpr(b.build(invars, outvars), [], *case.args)


def _args_text(case: Case) -> str:
    return "; ".join(np.array2string(a.reshape(-1)[:12], precision=9) for a in case.args)


def _check(spec: PrimSpec, cases: Sequence[Case], got: Outputs | BaseException,
           expected: Results | BaseException) -> None:
    """Compiled results against JAX's and the reference interpreter's."""
    if isinstance(expected, BaseException):
        raise AssertionError(f"JAX failed on {spec.name}") from expected
    if isinstance(got, BaseException):
        raise got
    failures = []
    for case, outs, exp in zip(cases, got, expected, strict=True):
        ref = _reference(spec, case)
        if not len(outs) == len(exp) == len(ref):
            failures.append(f"{case.label()}: {len(outs)} results, JAX {len(exp)}, "
                            f"reference {len(ref)}")
            continue
        tol = spec.tol_for(case.dtype)
        for k, (out, (val, _), r) in enumerate(zip(outs, exp, ref)):
            # XLA computes both plait's and JAX's results; the reference is NumPy, so it is
            # the "actual" side whose subnormals may be flushed, and may be off by tol twice.
            for why in (mismatch(out, val, tol), mismatch(r, out, 2 * tol, "reference vs plait")):
                if why:
                    failures.append(f"{case.label()} result {k}: {why}\n      args: "
                                    f"{_args_text(case)}")
    assert not failures, f"{spec.name} params={cases[0].params}:\n  " + "\n  ".join(failures)


def _eager(spec: PrimSpec, case: Case) -> list[np.ndarray]:
    out = bind(spec.primitive, *case.args, **case.params)
    return [np.asarray(o) for o in (out if spec.primitive.multiple_results else [out])]


def _check_eager(spec: PrimSpec, cases: Sequence[Case], compiled: Outputs) -> None:
    """Eager results equal the compiled ones, bit for bit."""
    failures = []
    for case, outs in zip(cases, compiled, strict=True):
        for k, (e, c) in enumerate(zip(_eager(spec, case), outs, strict=True)):
            if (e.dtype, e.shape) != (c.dtype, c.shape) or e.tobytes() != c.tobytes():
                failures.append(f"{case.label()} result {k}: eager {e!r}, compiled {c!r}")
    assert not failures, f"{spec.name} params={cases[0].params}:\n  " + "\n  ".join(failures)


_IDS = [s.name for s in SPECS]


@pytest.mark.parametrize("spec", SPECS, ids=_IDS)
def test_compiled_matches_jax_and_reference(spec: PrimSpec) -> None:
    chunk = CHUNK_OF[spec.name]
    cases, expected = default_run(chunk)[spec.name]
    _check(spec, cases, _compiled_run(chunk)[spec.name], expected)


def _eager_cases(spec: PrimSpec, n: int) -> list[int]:
    # Eager execution compiles per operation: only the first spec of each primitive, on one
    # case: if elementwise its first (the first dtype, usually a scalar: the packed run has
    # not tried that shape), else its last (the largest shape, with the last dtype).
    if spec.name not in PRIMARY:
        return []
    return [0] if spec.primitive in ELEMENTWISE else [n - 1]


_EAGER_SPECS = [s for s in SPECS if s.name in PRIMARY]


@functools.cache
def _shaped_run(chunk: int) -> dict[str, Outputs]:
    """The eager test's elementwise cases of one chunk, compiled in their own shapes.

    XLA's results may depend on where an element falls in its vector loop
    (``log`` differs in the last bit), so eager results are compared with
    compiled ones of the same shapes, not with the flat packed run.
    """
    run = default_run(chunk)
    entries = []
    for spec in CHUNKS[chunk]:
        cases = run[spec.name][0]
        if spec.primitive in ELEMENTWISE and _eager_cases(spec, len(cases)):
            entries.append((spec, [cases[i] for i in _eager_cases(spec, len(cases))]))
    outs = _run_compiled(entries, f"shaped{chunk}", pack=False) if entries else []
    return {spec.name: o for (spec, _), o in zip(entries, outs)}


@pytest.mark.parametrize("spec", _EAGER_SPECS, ids=[s.name for s in _EAGER_SPECS])
def test_eager_equals_compiled_bit_for_bit(spec: PrimSpec) -> None:
    """Eager results, compiled results of the same shapes (also against JAX), bit for bit."""
    chunk = CHUNK_OF[spec.name]
    all_cases, all_expected = default_run(chunk)[spec.name]
    idx = _eager_cases(spec, len(all_cases))
    cases = [all_cases[i] for i in idx]
    if spec.primitive in ELEMENTWISE:
        compiled = _shaped_run(chunk)[spec.name]
        assert not isinstance(all_expected, BaseException)
        _check(spec, cases, compiled, [all_expected[i] for i in idx])
    else:  # the default run did not pack these: they have their own shapes already
        packed = _compiled_run(chunk)[spec.name]
        if isinstance(packed, BaseException):
            raise packed
        compiled = [packed[i] for i in idx]
    _check_eager(spec, cases, compiled)


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=_IDS)
def test_all_cases_compiled_eager_jax_reference(spec: PrimSpec) -> None:
    cases = [Case(spec, d, s) for d, s in spec.cases()]
    compiled = _run_compiled_or_errors([(spec, cases)], spec.name, pack=False)[0]
    _check(spec, cases, compiled, eval_jax([(spec, cases)])[0])
    assert not isinstance(compiled, BaseException)
    _check_eager(spec, cases, compiled)


def test_every_primitive_has_a_lowering_rule_and_a_spec() -> None:
    specified = {s.primitive for s in SPECS}
    for name, prim in PRIMITIVES.items():
        if prim in PHYSICALIZED:
            continue  # replaced before lowering; tests/frontend/test_random.py checks them
        assert prim in lowering_rules, f"{name} has no lowering rule"
        assert prim in specified or prim in UNSPECIFIED, \
            f"{name} has no spec in tests/primitive_specs.py"


# ----------------------------------------------------------------------------- broadcasting

# The n-ary elementwise primitives broadcast rank-0 operands, and size-1 dimensions, as
# JAX 0.10.2's do; a rank-0 operand may also be a literal in the jaxpr.  (Not select_n and
# clamp, whose operands have rules of their own, nor add_any, whose operands have one type.)
_NARY_SPECS = [s for s in SPECS if s.name in PRIMARY and s.primitive in ELEMENTWISE
               and s.primitive not in (P.select_n_p, P.clamp_p, P.add_any_p)
               and len(s.args_for(s.dtypes[0], (2, 3, 4))) > 1]


def _variants(spec: PrimSpec) -> list[tuple[str, list[np.ndarray], list[bool]]]:
    """(label, operands, which operands are literals): the first operand rank-0, the last
    with size-1 dimensions, the last a literal (each kernel costs a compile: not more)."""
    full = [np.asarray(a) for a in spec.args_for(spec.dtypes[0], (2, 3, 4))]
    last = len(full) - 1
    out = []
    for k, label, narrow, lit in [(0, "rank0", full[0].reshape(-1)[0], False),
                                  (last, "size1", full[last][:1, :, :1], False),
                                  (last, "literal", full[last].reshape(-1)[-1], True)]:
        args = list(full)
        args[k] = np.asarray(narrow)
        out.append((f"operand {k} {label}", args, [lit and i == k for i in range(len(full))]))
    return out


def test_broadcasting_and_literal_operands_match_jax() -> None:
    cases = [(s, *v) for s in _NARY_SPECS for v in _variants(s)]
    b = Builder()
    invars: list[Var] = []
    flat: list[np.ndarray] = []
    outvars: list[Atom] = []
    for spec, _, args, lits in cases:
        atoms: list[Atom] = []
        for a, lit in zip(args, lits):
            if lit:
                atoms.append(Literal(a.item(), ShapedArray((), a.dtype)))
            else:
                v = Var(ShapedArray(a.shape, a.dtype))
                atoms.append(v)
                invars.append(v)
                flat.append(a)
        outvars += b.bind(spec.primitive, tuple(atoms), spec.params_for(spec.dtypes[0], ()))
    jaxpr = b.build(invars, outvars)
    got = [np.asarray(v) for v in apply_jaxpr(jaxpr, [], flat, "broadcasting")]
    ref = eval_jaxpr(jaxpr, [], *flat)
    want = jax.jit(lambda arglists: [s.run_jax(a, s.params_for(s.dtypes[0], ()))[0]
                                     for (s, _, _, _), a in zip(cases, arglists)])(
        [args for _, _, args, _ in cases])
    failures = []
    for (spec, label, _, _), g, r, w in zip(cases, got, ref, want, strict=True):
        tol = spec.tol_for(spec.dtypes[0])
        # XLA divides by a broadcast scalar as a multiplication by its reciprocal (JAX's
        # results agree bit for bit), an ulp or so from NumPy's quotient.
        ref_tol = max(2 * tol, 2.0)
        for why in (mismatch(g, np.asarray(w), tol), mismatch(r, g, ref_tol, "reference vs plait")):
            if why:
                failures.append(f"{spec.name} {label}: {why}")
    assert not failures, "\n".join(failures)


# ----------------------------------------------------------------------------- constants


def test_constants_and_literals_of_every_dtype_round_trip_bit_for_bit() -> None:
    """Consts (embedded as ``stablehlo.constant``) and literals come back with the exact
    bits NumPy gave them: NaNs, signed zeros, extremes, splats, empty arrays."""
    consts: list[np.ndarray] = []
    for d in ALL_DTYPES:
        sp = specials(d)
        consts += [sp, sp[:1].reshape(()), np.full((2, 3), sp[-1], d), np.zeros((0, 2), d),
                   np.resize(sp, (2, 3))]
    literals = [Literal(v.item(), ShapedArray((), v.dtype)) for d in ALL_DTYPES
                for v in specials(d)]
    constvars = [Var(ShapedArray(c.shape, c.dtype)) for c in consts]
    jaxpr = Builder().build([], [*constvars, *literals]).replace(constvars=tuple(constvars))
    module = lower_closed_jaxpr(ClosedJaxpr(jaxpr, tuple(consts)), "constants")
    outs = runtime.compile_text(module.text, module.out_avals).execute([])
    expected = consts + [np.asarray(lit.value, lit.aval.dtype) for lit in literals]
    bad = [f"{e.dtype}{list(e.shape)}: {e.reshape(-1)[:6]} came back as {o.reshape(-1)[:6]}"
           for e, o in zip(expected, (np.asarray(o) for o in outs), strict=True)
           if (e.dtype, e.shape) != (o.dtype, o.shape) or e.tobytes() != o.tobytes()]
    assert not bad, "\n".join(bad)

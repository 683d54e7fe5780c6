"""Cases of the primitive specs, JAX's results for them, and how results are compared.

Shared by the tests that hold an evaluator of jaxprs against JAX one
primitive at a time: the reference interpreter (``tests/ir/test_reference.py``)
and the compiled and eager paths (``tests/lowering/test_primitives.py``).

XLA compiles dominate the time (~25 ms per distinct kernel, even for an
``add``), so the default run computes JAX's results in a dozen batches
(:func:`default_run`, cached for the whole session), packs elementwise cases
that share an operation and dtypes into one flat operand (:class:`Packing`),
and covers the (dtype, shape) product of each spec rather than running all of
it (:func:`fast_cases`).
JAX compiles with its default options: lower optimization levels change
results (complex arithmetic loses its fused multiply-adds).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import ml_dtypes
import numpy as np

from plait.ir import PRIMITIVES
from plait.ir import primitives as P
from tests.primitive_specs import BF16, BOOL, C64, SPECS, DType, PrimSpec, Shape

jax.config.update("jax_platforms", "cpu")

__all__ = ["ELEMENTWISE", "Case", "Results", "fast_cases", "Packing", "eval_jax", "chunks",
           "PRIMARY", "CHUNKS", "CHUNK_OF", "default_run", "mismatch"]

ELEMENTWISE = {p for p in PRIMITIVES.values() if p.typing_rule.__module__ in (
    "plait.ir.primitives._typing", "plait.ir.primitives.elementwise")}
"""The elementwise primitives (their typing rules come from the elementwise factories)."""


class Case:
    """One (dtype, shape) of a spec: its params and operands."""

    def __init__(self, spec: PrimSpec, dtype: DType, shape: Shape) -> None:
        self.dtype, self.shape = dtype, shape
        self.params = spec.params_for(dtype, shape)
        self.args = [np.asarray(a) for a in spec.args_for(dtype, shape)]

    def label(self) -> str:
        return f"{self.dtype.name}{list(self.shape)}"


_DATA_MOVEMENT = {P.broadcast_in_dim_p, P.reshape_p, P.transpose_p, P.squeeze_p, P.rev_p,
                  P.concatenate_p, P.pad_p, P.slice_p, P.dynamic_slice_p, P.dynamic_update_slice_p,
                  P.copy_p}
# Dtypes that only the slow run tries: their kernels take XLA ~0.3 s each to compile.
_SLOW_ONLY: set[tuple[Any, DType]] = {(p, C64) for p in (P.asin_p, P.acos_p, P.asinh_p, P.acosh_p)}


def fast_cases(spec: PrimSpec, primary: bool) -> list[tuple[DType, Shape]]:
    """The cases of the default run: a cover of the (dtype, shape) product.

    The first spec of a primitive (and every ``convert_element_type`` spec,
    whose subject is the dtype): each shape with the first dtype, and each
    dtype with the largest shape (for data movement, one dtype per width).
    Later specs, which vary the params: the first dtype, with all shapes if
    elementwise (they pack into one kernel), else with the largest shape.
    """
    big = max(spec.shapes, key=lambda s: (math.prod(s) > 0, len(s), math.prod(s)))
    first = spec.dtypes[0]
    pairs = [(first, s) for s in spec.shapes]
    if primary or spec.primitive is P.convert_element_type_p:
        dtypes = spec.dtypes
        if spec.primitive in _DATA_MOVEMENT:  # bytes are bytes: one of each width suffices
            dtypes = tuple(d for d in (first, BOOL, BF16, C64) if d in spec.dtypes)
        pairs += [(d, big) for d in dtypes]
    elif spec.primitive not in ELEMENTWISE:
        pairs = [(first, big)]
    return [p for p in dict.fromkeys(pairs) if (spec.primitive, p[0]) not in _SLOW_ONLY]


Results = list[list[tuple[np.ndarray, bool]]]
"""Per case, per result: JAX's value and weak_type."""


Job = tuple[PrimSpec, dict[str, Any], list[np.ndarray]]
"""One operation to run: a spec, its params and operands (maybe several cases packed)."""


class Packing:
    """The cases of several specs as fewer operations (see :func:`eval_jax`).

    Elementwise cases that share a JAX function, params and operand dtypes are
    concatenated into one flat operand whatever spec and shape they come from:
    XLA spends ~25 ms per distinct kernel, even for an ``add``.  With ``pack``
    false, every case is an operation of its own.
    """

    def __init__(self, entries: Sequence[tuple[PrimSpec, Sequence[Case]]],
                 pack: bool = True) -> None:
        self.entries = entries
        groups: dict[Any, list[tuple[int, int]]] = {}
        for si, (spec, cases) in enumerate(entries):
            for ci, c in enumerate(cases):
                if (pack and spec.primitive in ELEMENTWISE
                        and all(a.shape == c.shape for a in c.args)):
                    key: Any = (spec.jax_fn, repr(sorted(c.params.items())),
                                tuple(a.dtype for a in c.args))
                else:
                    key = (si, ci)
                groups.setdefault(key, []).append((si, ci))
        self.members = list(groups.values())
        self.jobs: list[Job] = []
        for m in self.members:
            spec, c = entries[m[0][0]][0], entries[m[0][0]][1][m[0][1]]
            args = c.args if len(m) == 1 else [
                np.concatenate([entries[si][1][ci].args[k].reshape(-1) for si, ci in m])
                for k in range(len(c.args))]
            self.jobs.append((spec, c.params, args))

    def unpack(self, outs: Sequence[Sequence[Any]]) -> list[list[list[tuple[np.ndarray, Any]]]]:
        """Per spec, per case, per result: (value, the job's result it was cut from)."""
        results: list[list[list[tuple[np.ndarray, Any]]]] = [
            [[] for _ in cases] for _, cases in self.entries]
        for m, mouts in zip(self.members, outs, strict=True):
            offset = 0
            for si, ci in m:
                shape = self.entries[si][1][ci].shape
                n = math.prod(shape)
                for o in mouts:
                    val = np.asarray(o)
                    if len(m) > 1:
                        val = val[offset:offset + n].reshape(shape)
                    results[si][ci].append((val, o))
                offset += n
        return results


def eval_jax(entries: Sequence[tuple[PrimSpec, Sequence[Case]]]) -> list[Results]:
    """JAX's results for the cases of several specs, from one compiled program."""
    packing = Packing(entries)

    def program(arglists: Any) -> Any:
        return [spec.run_jax(a, p) for (spec, p, _), a in zip(packing.jobs, arglists)]

    outs = jax.jit(program)([a for _, _, a in packing.jobs])
    return [[[(v, bool(o.weak_type)) for v, o in case] for case in spec_results]
            for spec_results in packing.unpack(outs)]


def chunks(specs: Sequence[PrimSpec], size: int = 24) -> list[list[PrimSpec]]:
    """Specs in compile batches that keep each primitive's specs together."""
    by_prim: dict[Any, list[PrimSpec]] = {}
    for s in specs:
        by_prim.setdefault(s.primitive, []).append(s)
    out: list[list[PrimSpec]] = [[]]
    for group in by_prim.values():
        if out[-1] and len(out[-1]) + len(group) > size:
            out.append([])
        out[-1].extend(group)
    return out


PRIMARY = {s.name for s in {s.primitive: s for s in reversed(SPECS)}.values()}
"""Names of the first spec of each primitive."""
CHUNKS = chunks(SPECS)
"""The specs in the compile batches of the default run."""
CHUNK_OF = {s.name: i for i, chunk in enumerate(CHUNKS) for s in chunk}
"""Spec name -> index of its batch in :data:`CHUNKS`."""


@functools.cache
def default_run(chunk: int) -> dict[str, tuple[list[Case], Results | BaseException]]:
    """The default cases of one chunk of specs and JAX's results for them."""
    entries = [(s, [Case(s, d, sh) for d, sh in fast_cases(s, s.name in PRIMARY)])
               for s in CHUNKS[chunk]]
    try:
        results: list[Any] = eval_jax(entries)
    except Exception:  # find the culprit: each spec on its own
        results = []
        for e in entries:
            try:
                results.append(eval_jax([e])[0])
            except Exception as exc:
                results.append(exc)
    return {s.name: (cases, r) for (s, cases), r in zip(entries, results)}


def _eps(dtype: DType) -> float:
    real = np.dtype(np.float32) if dtype == np.complex64 else dtype
    return float(ml_dtypes.finfo(real).eps)


def mismatch(actual: np.ndarray, expected: np.ndarray, tol: float,
             who: str = "plait vs JAX") -> str | None:
    """Why ``actual`` differs from ``expected``, or None when they agree.

    ``tol`` is in units of the dtype's epsilon (see :attr:`PrimSpec.tol`).
    ``expected`` must come from XLA: where it has a zero, a subnormal of the
    same sign in ``actual`` counts as equal (XLA on CPU flushes them).
    """
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return (f"got {actual.dtype}{list(actual.shape)}, expected "
                f"{expected.dtype}{list(expected.shape)} ({who})")
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
        tiny = float(ml_dtypes.finfo(np.float32 if d.kind == "c" else d).tiny)
        for x, y in parts:
            same = (x == y) | (np.isnan(x) & np.isnan(y))
            # XLA on CPU flushes subnormal results to zero; the reference does not.
            same |= (y == 0) & (np.abs(x) < tiny) & (np.signbit(x) == np.signbit(y))
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
    shown = ", ".join(f"at {tuple(int(j) for j in i)}: {actual[tuple(i)]!r} vs "
                      f"{expected[tuple(i)]!r}" for i in idx)
    return f"{int(np.sum(bad))} of {actual.size} values differ ({who}) {shown}"

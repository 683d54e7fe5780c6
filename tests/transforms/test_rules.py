"""The transformation rules, primitive by primitive, against JAX and finite differences.

Every spec of ``tests/primitive_specs.py`` becomes a one-equation jaxpr.  For
the differentiable ones, its JVP (:func:`plait.transforms.jvp_jaxpr`) and its
VJP (:func:`plait.transforms.ad.vjp_jaxprs`: JVP, partial evaluation,
transposition) are evaluated with the reference interpreter and compared with
``jax.jvp``/``jax.vjp`` of the same operation, and the JVP with central finite
differences computed in float64.  Specs linear in some operands have their
transpose checked by the dot-product identity ``<ct, f(x)> = <f^T(ct), x>``.
Every spec is batched (:func:`plait.transforms.vmap_jaxpr`) with its operands
mapped and unmapped at several axes and compared with the per-example results
stacked.  The JAX side of each spec is compiled once, for all its cases.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import plait
from plait.errors import JaxprTypeError, RuleNotImplementedError
from plait.ir import (
    PRIMITIVES,
    Builder,
    Jaxpr,
    Primitive,
    ShapedArray,
    Var,
    check_jaxpr,
    eval_jaxpr,
    shaped,
)
from plait.ir import dtypes as dt
from plait.ir import primitives as P
from plait.transforms import (
    batching_rules,
    jvp_jaxpr,
    jvp_rules,
    transpose_jaxpr,
    transpose_rules,
    vmap_jaxpr,
)
from plait.transforms.ad import vjp_jaxprs
from tests.primitive_specs import C64, F32, SPECS, DType, PrimSpec, Shape

jax.config.update("jax_platforms", "cpu")

_COMPILER_OPTIONS: dict[str, Any] = {"xla_backend_optimization_level": 0}
_F64, _C128 = np.dtype(np.float64), np.dtype(np.complex128)

DIFF_SPECS = [s for s in SPECS if s.differentiable]

# Where the spec's JAX function cannot be differentiated by JAX itself, the same
# function written so that it can (JAX bugs or API limits, not plait's business).
_JAX_AD_FN: dict[str, Any] = {
    # JAX fails to differentiate select_n with a single case (IndexError).
    "select_n_one_case": lambda which, x: x,
    # JAX fails to differentiate clamp with scalar bounds ("select cases must have the
    # same shapes").
    "clamp_scalar_bounds": lambda lo, x, hi: lax.clamp(
        jnp.broadcast_to(lo, jnp.shape(x)), x, jnp.broadcast_to(hi, jnp.shape(x))),
}
# JAX refuses forward mode through custom_vjp functions.
_NO_JAX_JVP = {P.custom_vjp_call_p}
# Custom derivative rules need not be the true derivative (the specs' are not).
_NO_FD = {P.custom_jvp_call_p, P.custom_vjp_call_p}
LINEAR_SPECS = [s for s in SPECS if s.linear_in]
# Primitives JAX does not batch either (vmap raises "Batching rule ... not implemented").
_NO_BATCHING = {P.composite_p}
BATCHED_SPECS = [s for s in SPECS if s.primitive not in _NO_BATCHING]


# ----------------------------------------------------------------------------- helpers


def _inexact(d: Any) -> bool:
    return dt.is_inexact(np.dtype(d))


def one_eqn(prim: Primitive, args: Sequence[np.ndarray], params: dict[str, Any]) -> Jaxpr:
    """The jaxpr ``invars -> prim[params](invars)``."""
    invars = [Var(ShapedArray(np.shape(a), np.asarray(a).dtype)) for a in args]
    b = Builder()
    outs = b.bind(prim, tuple(invars), params)
    j = b.build(invars, list(outs))
    check_jaxpr(j)
    return j


def _eps(dtype: Any) -> float:
    d = np.dtype(dtype)
    if d.kind == "c":
        d = np.dtype(np.float32) if d == C64 else np.dtype(np.float64)
    return float(ml_dtypes.finfo(d).eps)


def assert_close(actual: Any, expected: Any, rtol: float, what: str) -> None:
    """``|actual - expected| <= rtol * max(1, |expected|)`` elementwise, same shape and dtype."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    assert a.dtype == e.dtype, f"{what}: dtype {a.dtype} != {e.dtype}"
    if not _inexact(a.dtype):
        np.testing.assert_array_equal(a, e, err_msg=what)
        return
    a64 = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    e64 = e.astype(a64.dtype)
    both_nan = np.isnan(a64) & np.isnan(e64)
    same_inf = np.isinf(e64) & (a64 == e64)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, and same_inf covers it
        err = np.abs(a64 - e64) / np.maximum(1.0, np.abs(e64))
    bad = ~(both_nan | same_inf | (err <= rtol))
    if bad.any():
        i = tuple(np.argwhere(bad)[0]) if a.ndim else ()
        raise AssertionError(f"{what}: {bad.sum()} of {a.size} elements differ beyond "
                             f"rtol={rtol:g}; e.g. at {i}: {a[i]!r} vs expected {e[i]!r}")


def _random_like(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    d = np.asarray(x).dtype
    if d.kind == "c":
        return (rng.normal(size=np.shape(x)) + 1j * rng.normal(size=np.shape(x))).astype(d)
    return np.asarray(rng.normal(size=np.shape(x))).astype(d)


def _ad_dtypes(spec: PrimSpec, slow: bool) -> list[DType]:
    inexact = [d for d in spec.dtypes if _inexact(d)]
    if slow:
        return inexact
    fast = [d for d in inexact if d in (F32, C64)]
    return fast or inexact[:1]


class AdCase:
    """One (dtype, shape) of a differentiable spec: operands, tangents, cotangents."""

    def __init__(self, spec: PrimSpec, dtype: DType, shape: Shape) -> None:
        self.spec, self.dtype, self.shape = spec, dtype, shape
        self.params = spec.params_for(dtype, shape)
        self.args = [np.asarray(a) for a in spec.args_for(dtype, shape)]
        self.jaxpr = one_eqn(spec.primitive, self.args, self.params)
        self.diff = [_inexact(a.dtype) for a in self.args]
        rng = np.random.default_rng(len(self.args) + 17 * len(shape))
        self.tangents = [_random_like(rng, a) for a, d in zip(self.args, self.diff) if d]
        self.out_avals = [shaped(v.aval) for v in self.jaxpr.outvars]
        self.diff_out = [_inexact(a.dtype) for a in self.out_avals]
        self.cts = [_random_like(rng, np.zeros(a.shape, a.dtype))
                    for a, d in zip(self.out_avals, self.diff_out) if d]

    def tame(self) -> bool:
        """Whether the float operands are finite and moderate (finite differences work)."""
        return all(np.all(np.abs(a.astype(np.complex128)) < 1e4) for a in self.args
                   if _inexact(a.dtype))

    def label(self) -> str:
        return f"{self.spec.name}:{np.dtype(self.dtype).name}{list(self.shape)}"

    def rtol(self, factor: float = 64.0) -> float:
        # Derivative formulas chain a few roundings of the working precision.
        dts = [a.dtype for a in self.args if _inexact(a.dtype)] + [
            a.dtype for a in self.out_avals if _inexact(a.dtype)]
        return factor * max(_eps(d) for d in dts)

    def jax_fn(self) -> Any:
        """The operation as a function of the differentiable operands only."""
        spec, params, args, diff = self.spec, self.params, self.args, self.diff

        override = _JAX_AD_FN.get(spec.name)

        def f(*dargs: Any) -> list[Any]:
            it = iter(dargs)
            full = [next(it) if d else a for a, d in zip(args, diff)]
            outs = [override(*full)] if override else spec.run_jax(full, dict(params))
            return [o for o, d in zip(outs, self.diff_out) if d]
        return f


def _ad_cases(spec: PrimSpec, slow: bool = False) -> list[AdCase]:
    return [AdCase(spec, d, s) for d in _ad_dtypes(spec, slow) for s in spec.shapes]


@functools.cache
def _jax_ad(spec_name: str, slow: bool = False) -> tuple[list[AdCase], list[Any]]:
    """The cases of a spec and, per case, JAX's ``(jvp tangents, vjp cotangents)``."""
    spec = next(s for s in DIFF_SPECS if s.name == spec_name)
    cases = _ad_cases(spec, slow)

    def program(all_args: Any, all_tans: Any, all_cts: Any) -> Any:
        res = []
        for c, args, tans, cts in zip(cases, all_args, all_tans, all_cts):
            f = c.jax_fn()
            dargs = [a for a, d in zip(args, c.diff) if d]
            touts = [] if spec.primitive in _NO_JAX_JVP else jax.jvp(f, tuple(dargs),
                                                                     tuple(tans))[1]
            _, pull = jax.vjp(f, *dargs)
            res.append((touts, list(pull(list(cts)))))
        return res

    inputs = ([c.args for c in cases], [c.tangents for c in cases], [c.cts for c in cases])
    compiled = jax.jit(program).lower(*inputs).compile(compiler_options=_COMPILER_OPTIONS)
    outs = compiled(*inputs)
    return cases, [([np.asarray(t) for t in tj], [np.asarray(g) for g in gj]) for tj, gj in outs]


def _eval_jvp(c: AdCase) -> list[np.ndarray]:
    jj, out_nz = jvp_jaxpr(c.jaxpr, c.diff, instantiate=True)
    check_jaxpr(jj)
    outs = eval_jaxpr(jj, [], *c.args, *c.tangents)
    n = len(c.out_avals)
    primals, touts = outs[:n], iter(outs[n:])
    for p, aval in zip(primals, c.out_avals):
        assert (p.shape, p.dtype) == (aval.shape, aval.dtype), c.label()
    result = []
    for aval, nz, d in zip(c.out_avals, out_nz, c.diff_out):
        if not d:
            assert not nz, f"{c.label()}: a tangent for a non-differentiable output"
            continue
        assert nz, f"{c.label()}: instantiate=True gave no tangent for {aval.str_short()}"
        result.append(next(touts))
    return result


def _eval_vjp(c: AdCase) -> list[np.ndarray]:
    pieces = vjp_jaxprs(c.jaxpr, c.diff)
    check_jaxpr(pieces.fwd)
    check_jaxpr(pieces.bwd)
    outs = eval_jaxpr(pieces.fwd, [], *c.args)
    n = len(c.out_avals)
    residuals = outs[n:]
    cts_it = iter(c.cts)
    cts = []
    for has, d in zip(pieces.out_tangent, c.diff_out):
        ct = next(cts_it) if d else None
        if has:
            assert ct is not None, f"{c.label()}: cotangent wanted for a non-float output"
            cts.append(ct)
    return eval_jaxpr(pieces.bwd, [], *residuals, *cts)


# ----------------------------------------------------------------------------- finite differences


def _wide(a: np.ndarray) -> np.ndarray:
    d = a.dtype
    if d.kind == "c":
        return a.astype(_C128)
    if _inexact(d):
        return a.astype(_F64)
    return a


def _fd_jvp(c: AdCase) -> tuple[list[np.ndarray], float] | None:
    """Central differences of the operation along the tangents, and their tolerance.

    In float64 when the equation can be rebuilt there; otherwise (params pin
    the types: nested jaxprs, dtypes) in the working precision, float32 only.
    ``None`` where the derivative is not the true one (custom rules, tied sort keys).
    """
    if c.spec.primitive in _NO_FD:
        return None
    if c.spec.primitive is P.sort_p:
        # Tied keys: a perturbation reorders them, the sort is not differentiable there.
        dim, nk = c.params["dimension"], c.params["num_keys"]
        for k in c.args[:nk] if c.args[0].size else ():
            rows = np.moveaxis(np.real(k), dim, -1).reshape(-1, k.shape[dim])
            if any(len(set(r.tolist())) < len(r) for r in rows):
                return None
    if not c.tame():
        return None
    wide = [_wide(a) for a in c.args]
    # Dtype params (convert's new_dtype, widening multiplies) widen along.
    wide_params = {k: _wide(np.zeros((), v)).dtype if isinstance(v, np.dtype) else v
                   for k, v in c.params.items()}
    h = 1e-6
    tol = max([2e-4] + [8 * _eps(a.dtype) for a in c.out_avals if _inexact(a.dtype)])
    try:
        j = one_eqn(c.spec.primitive, wide, wide_params)
        if any(_inexact(shaped(v.aval).dtype) and shaped(v.aval).dtype not in (_F64, _C128)
               for v in j.outvars):
            raise JaxprTypeError("narrow results")
    except JaxprTypeError:
        if np.dtype(c.dtype) not in (F32, C64):
            return None
        wide, j, h, tol = c.args, c.jaxpr, 1e-3, 5e-3
    tans = iter(c.tangents)
    dirs = [next(tans).astype(a.dtype) if d else None for a, d in zip(wide, c.diff)]

    def at(s: float) -> list[np.ndarray]:
        xs = [a if v is None else (a + s * v).astype(a.dtype) for a, v in zip(wide, dirs)]
        return eval_jaxpr(j, [], *xs)
    hi, lo = at(h), at(-h)
    with np.errstate(invalid="ignore", over="ignore"):  # infinite values: NaN differences
        return [(p.astype(np.complex128) - m) / (2 * h) if p.dtype.kind == "c" else
                (p.astype(np.float64) - m) / (2 * h)
                for p, m, d in zip(hi, lo, c.diff_out) if d], tol


# ----------------------------------------------------------------------------- rule coverage


_ALL_PRIMS = sorted(PRIMITIVES.values(), key=lambda p: p.name)


@pytest.mark.parametrize("prim", _ALL_PRIMS, ids=lambda p: p.name)
def test_every_primitive_has_a_jvp_rule(prim: Primitive) -> None:
    assert prim in jvp_rules, f"no JVP rule (nor a zero-derivative registration) for {prim.name}"


@pytest.mark.parametrize("prim", _ALL_PRIMS, ids=lambda p: p.name)
def test_every_primitive_with_operands_has_a_batching_rule(prim: Primitive) -> None:
    # iota, empty and platform_index take no operands: an equation without mapped operands
    # is copied as it is, so its batching rule could never be called (nor after_all's,
    # whose operands are tokens, which vmap never maps).
    assert prim in batching_rules or prim in (P.iota_p, P.empty_p, P.platform_index_p,
                                              P.dim_as_value_p, P.create_token_p,
                                              P.after_all_p), \
        f"no batching rule for {prim.name}"


def test_every_linear_primitive_has_a_transpose_rule() -> None:
    missing = sorted({s.primitive.name for s in LINEAR_SPECS if s.primitive not in transpose_rules})
    assert not missing, f"no transpose rule for {missing}"


def test_missing_jvp_rule_raises_a_clear_error() -> None:
    # Shapes no other test uses: transformed jaxprs are cached by structure, and a cache
    # hit needs no rule.
    x = Var(ShapedArray((7, 11), F32))
    b = Builder()
    y, = b.bind(P.sin_p, (x,), {"accuracy": None})
    j = b.build([x], [y])
    saved = jvp_rules.pop(P.sin_p)
    try:
        with pytest.raises(RuleNotImplementedError, match="JVP rule for 'sin' not implemented"):
            jvp_jaxpr(j, [True])
        # Nothing differentiated: the equation is copied, no rule needed.
        jvp_jaxpr(j, [False])
    finally:
        jvp_rules[P.sin_p] = saved
    # Through the API too (a function of a structure no other test makes: transformed
    # jaxprs are cached by structure).
    saved = jvp_rules.pop(P.sinh_p)
    try:
        with pytest.raises(NotImplementedError, match="JVP rule for 'sinh' not implemented"):
            plait.grad(lambda v: plait.numpy.sum(plait.lax.sinh(v) * 3.375))(
                np.full((7, 13), 0.5, np.float32))
    finally:
        jvp_rules[P.sinh_p] = saved


def test_missing_transpose_and_batching_rules_raise_clear_errors() -> None:
    x = Var(ShapedArray((7, 11), F32))  # a shape no other test uses (no cache hit)
    b = Builder()
    y, = b.bind(P.cumsum_p, (x,), {"axis": 0, "reverse": False})
    j = b.build([x], [y])
    saved = transpose_rules.pop(P.cumsum_p)
    try:
        with pytest.raises(RuleNotImplementedError, match="Transpose rule for 'cumsum' not"):
            transpose_jaxpr(j, [True])
    finally:
        transpose_rules[P.cumsum_p] = saved
    saved_b = batching_rules.pop(P.cumsum_p)
    try:
        with pytest.raises(RuleNotImplementedError, match="Batching rule for 'cumsum' not"):
            vmap_jaxpr(j, 2, [0], [0])
    finally:
        batching_rules[P.cumsum_p] = saved_b


# ----------------------------------------------------------------------------- JVP and VJP


@pytest.mark.parametrize("spec", DIFF_SPECS, ids=lambda s: s.name)
def test_jvp_matches_jax_and_finite_differences(spec: PrimSpec) -> None:
    cases, jax_results = _jax_ad(spec.name)
    fd_checked = 0
    for c, (jax_touts, _) in zip(cases, jax_results):
        touts = _eval_jvp(c)
        assert len(touts) == len(jax_touts) or spec.primitive in _NO_JAX_JVP, c.label()
        for k, (t, jt) in enumerate(zip(touts, jax_touts)):
            assert_close(t, jt, c.rtol(), f"{c.label()} jvp output {k} vs jax.jvp")
        fd = _fd_jvp(c)
        if fd is None or np.dtype(c.dtype) not in (F32, C64):
            continue
        fd_checked += 1
        for k, (t, f) in enumerate(zip(touts, fd[0])):
            assert_close(t.astype(f.dtype), f, fd[1], f"{c.label()} jvp output {k} vs finite "
                         "differences")
    if spec.primitive not in _NO_FD | {P.sort_p} and any(
            c.tame() and np.dtype(c.dtype) in (F32, C64) for c in cases):
        assert fd_checked, f"{spec.name}: no case was checked against finite differences"


@pytest.mark.parametrize("spec", DIFF_SPECS, ids=lambda s: s.name)
def test_vjp_matches_jax(spec: PrimSpec) -> None:
    cases, jax_results = _jax_ad(spec.name)
    for c, (_, jax_grads) in zip(cases, jax_results):
        grads = _eval_vjp(c)
        assert len(grads) == len(jax_grads), c.label()
        for k, (g, jg) in enumerate(zip(grads, jax_grads)):
            assert_close(g, jg, c.rtol(), f"{c.label()} vjp cotangent {k} vs jax.vjp")


def _pair(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> tuple[float, float]:
    """JAX's pairing of cotangents with tangents, ``Re(sum(a * b))`` (no conjugation),
    and the sum of the magnitudes of its terms."""
    total, scale = 0.0, 0.0
    for x, y in zip(a, b, strict=True):
        prod = x.astype(np.complex128) * y.astype(np.complex128)
        total += float(prod.real.sum())
        scale += float(np.abs(prod).sum())
    return total, scale


# A custom_jvp/custom_vjp pair of rules need not be consistent: those are left out.
@pytest.mark.parametrize("spec", [s for s in DIFF_SPECS if s.primitive not in _NO_FD],
                         ids=lambda s: s.name)
def test_jvp_and_vjp_agree_by_the_dot_product_identity(spec: PrimSpec) -> None:
    # <ct, J t> == <J^T ct, t>: forward and reverse mode are transposes.
    for c in _ad_cases(spec):
        if not c.cts or any(a.size == 0 for a in c.args):
            continue
        lhs, s1 = _pair(c.cts, _eval_jvp(c))
        rhs, s2 = _pair(_eval_vjp(c), c.tangents)
        assert abs(lhs - rhs) <= c.rtol(256) * (max(s1, s2) + 1), f"{c.label()}: {lhs} != {rhs}"


@pytest.mark.slow
@pytest.mark.parametrize("spec", DIFF_SPECS, ids=lambda s: s.name)
def test_jvp_and_vjp_all_dtypes(spec: PrimSpec) -> None:
    cases, jax_results = _jax_ad(spec.name, slow=True)
    for c, (jax_touts, jax_grads) in zip(cases, jax_results):
        for k, (t, jt) in enumerate(zip(_eval_jvp(c), jax_touts)):
            assert_close(t, jt, c.rtol(), f"{c.label()} jvp output {k} vs jax.jvp")
        for k, (g, jg) in enumerate(zip(_eval_vjp(c), jax_grads)):
            assert_close(g, jg, c.rtol(), f"{c.label()} vjp cotangent {k} vs jax.vjp")


# ----------------------------------------------------------------------------- transposition


def _linear_cases(spec: PrimSpec) -> list[tuple[DType, Shape]]:
    dts = [d for d in spec.dtypes if np.dtype(d) in (F32,)] or [
        d for d in spec.dtypes if _inexact(d) and np.dtype(d).kind != "c"][:1]
    return [(d, s) for d in dts for s in spec.shapes]


@pytest.mark.parametrize("spec", LINEAR_SPECS, ids=lambda s: s.name)
def test_transpose_by_the_dot_product_identity(spec: PrimSpec) -> None:
    """``<ct, f(x)> == <f^T(ct), x>`` for the operands the op is linear in."""
    groups = [[i] for i in spec.linear_in] if spec.multilinear else [list(spec.linear_in)]
    for dtype, shape in _linear_cases(spec):
        params = spec.params_for(dtype, shape)
        args = [np.asarray(a) for a in spec.args_for(dtype, shape)]
        j = one_eqn(spec.primitive, args, params)
        rng = np.random.default_rng(3)
        for lin in groups:
            linear = [i in lin for i in range(len(args))]
            if not all(_inexact(args[i].dtype) for i in lin):
                continue
            # The linear operands' values do not matter: plain random ones (the
            # spec's may hold NaNs and infinities).
            xs = [_random_like(rng, a) if lin else a for a, lin in zip(args, linear)]
            t = transpose_jaxpr(j, linear)
            check_jaxpr(t)
            outs = eval_jaxpr(j, [], *xs)
            cts = [_random_like(rng, o) for o in outs]
            nonlin = [a for a, lin in zip(xs, linear) if not lin]
            cts_in = eval_jaxpr(t, [], *nonlin, *cts)
            assert len(cts_in) == len(lin)
            for i, g in zip(lin, cts_in):
                assert (g.shape, g.dtype) == (args[i].shape, args[i].dtype), (spec.name, i)
            keep = [k for k, o in enumerate(outs) if _inexact(o.dtype)]
            lhs, s1 = _pair([cts[k] for k in keep], [outs[k] for k in keep])
            rhs, s2 = _pair(cts_in, [xs[i] for i in lin])
            tol = 16 * max(_eps(o.dtype) for o in [*outs, *xs] if _inexact(o.dtype))
            assert abs(lhs - rhs) <= tol * (max(s1, s2) + 1), (
                f"{spec.name} {dtype}{list(shape)} linear in {lin}: {lhs} != {rhs}")


# ----------------------------------------------------------------------------- batching

_B = 3


def _vmap_cases(spec: PrimSpec, slow: bool) -> list[tuple[DType, Shape]]:
    if slow:
        return list(spec.cases())
    big = max(spec.shapes, key=lambda s: (math.prod(s) > 0, len(s), math.prod(s)))
    pairs = [(d, big) for d in spec.dtypes] + [(spec.dtypes[0], s) for s in spec.shapes]
    return list(dict.fromkeys(pairs))


def _in_dim_choices(args: Sequence[np.ndarray],
                    unmapped: Sequence[int] = ()) -> list[list[int | None]]:
    n = len(args)
    choices: list[list[int | None]] = [[0] * n, [np.ndim(a) for a in args]]
    for i in range(n):
        mid = np.ndim(args[i]) // 2 if np.ndim(args[i]) else 0
        choices.append([mid if k == i else None for k in range(n)])
        if n > 1:  # everything mapped except operand i
            choices.append([None if k == i else 0 for k in range(n)])
    choices = [[None if k in unmapped else d for k, d in enumerate(c)] for c in choices]
    return [list(c) for c in dict.fromkeys(tuple(c) for c in choices)]  # unique, in order


def _check_vmap(spec: PrimSpec, dtype: DType, shape: Shape) -> None:
    params = spec.params_for(dtype, shape)
    examples = [[np.asarray(a) for a in spec.args_for(dtype, shape, seed=k)] for k in range(_B)]
    j = one_eqn(spec.primitive, examples[0], params)
    for in_dims in _in_dim_choices(examples[0], spec.unmapped) or [[]]:
        per_ex = [[ex[i] if d is not None else examples[0][i] for i, d in enumerate(in_dims)]
                  for ex in examples]
        expected_rows = [eval_jaxpr(j, [], *a) for a in per_ex]
        batched_args = [np.stack([per_ex[k][i] for k in range(_B)], axis=d) if d is not None
                        else examples[0][i] for i, d in enumerate(in_dims)]
        for out_pos in ("first", "last"):
            out_dims = [0 if out_pos == "first" else shaped(v.aval).ndim for v in j.outvars]
            bj = vmap_jaxpr(j, _B, list(in_dims), out_dims)
            check_jaxpr(bj)
            got = eval_jaxpr(bj, [], *batched_args)
            for k, (g, od) in enumerate(zip(got, out_dims)):
                want = np.stack([row[k] for row in expected_rows], axis=od)
                what = (f"{spec.name}:{np.dtype(dtype).name}{list(shape)} in_dims={in_dims} "
                        f"out_dims={out_dims} output {k}")
                tol = spec.tol_for(dtype) * _eps(want.dtype) if _inexact(want.dtype) else 0.0
                assert_close(g, want, tol, what)


@pytest.mark.parametrize("spec", BATCHED_SPECS, ids=lambda s: s.name)
def test_vmap_matches_stacked_examples(spec: PrimSpec) -> None:
    for dtype, shape in _vmap_cases(spec, slow=False):
        _check_vmap(spec, dtype, shape)


@pytest.mark.slow
@pytest.mark.parametrize("spec", BATCHED_SPECS, ids=lambda s: s.name)
def test_vmap_all_cases(spec: PrimSpec) -> None:
    for dtype, shape in _vmap_cases(spec, slow=True):
        _check_vmap(spec, dtype, shape)


def test_vmap_of_an_operandless_equation_broadcasts() -> None:
    b = Builder()
    y, = b.bind(P.iota_p, (), {"dtype": F32, "shape": (4,), "dimension": 0, "sharding": None})
    j = b.build([], [y])
    bj = vmap_jaxpr(j, 3, [], [1])
    check_jaxpr(bj)
    np.testing.assert_array_equal(eval_jaxpr(bj, [])[0], np.tile(np.arange(4.0)[:, None], 3))

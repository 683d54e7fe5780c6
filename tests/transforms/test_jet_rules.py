"""The Taylor-mode (``jet``) rules, primitive by primitive, against JAX.

The oracle is independent of any jet implementation: the derivatives at ``t = 0`` of
``t -> prim(x(t))`` along the curve ``x(t) = x + sum_k x_k t^k / k!``, computed by real
JAX with nested ``jvp``.  plait's side runs on the reference interpreter (no device).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from plait.errors import RuleNotImplementedError
from plait.ir import PRIMITIVES, check_jaxpr, eval_jaxpr
from plait.ir import primitives as P
from plait.transforms.jet import jet_jaxpr, jet_rules
from tests.transforms.test_rules import (
    _COMPILER_OPTIONS,
    _JAX_AD_FN,
    DIFF_SPECS,
    AdCase,
    _ad_cases,
    assert_close,
    one_eqn,
)

ORDER = 3

# Custom rules are ignored by jet (as by JAX's), so the derivative JAX's nested jvp takes
# through them is not the one jet propagates.
_CUSTOM = {P.custom_jvp_call_p, P.custom_vjp_call_p}
JET_SPECS = [s for s in DIFF_SPECS if s.primitive in jet_rules and s.primitive not in _CUSTOM]

# Primitives without a Taylor rule (JAX 0.10.2's jet has none for these either); changing
# this set is deliberate.
# (cond, scan and while have rules: see tests/frontend/test_jet.py.)
NO_JET_RULE = {
    # calls that cannot be inlined, callbacks
    "shard_map", "call_exported", "call_exported_lin", "custom_lin",
    "custom_linear_solve", "io_callback", "pure_callback", "ffi_call",
    # reductions and scans that are not (piecewise) linear
    "cumlogsumexp", "reduce", "reduce_window", "scatter-mul",
    # special functions
    "bessel_i0e", "bessel_i1e", "igamma", "igamma_grad_a", "igammac",
    "regularized_incomplete_beta", "zeta",
    # linear algebra
    "cholesky", "eig", "eigh", "geqp3", "geqrf", "hessenberg", "householder_product", "lu",
    "lu_pivots_to_permutation", "ormqr", "qr", "schur", "svd", "triangular_solve", "tridiagonal",
    "tridiagonal_solve", "todense",
    # no floating operands (never reached with a series)
    "axis_index", "dim_as_value", "empty", "iota", "mulhi", "platform_index", "random_bits",
    "random_clone", "random_fold_in", "random_seed", "random_split", "random_unwrap",
    "random_wrap", "rng_bit_generator", "rng_uniform", "threefry2x32",
}


def _terms(c: AdCase) -> list[list[np.ndarray]]:
    """``ORDER`` terms per differentiable operand, of moderate size (higher derivatives of
    ``tan`` or ``lgamma`` grow fast)."""
    rng = np.random.default_rng(len(c.args) * 31 + len(c.shape))
    out = []
    for a, d in zip(c.args, c.diff):
        if not d:
            continue
        draw = [rng.uniform(-0.5, 0.5, np.shape(a)) for _ in range(2 * ORDER)]
        if a.dtype.kind == "c":
            out.append([(draw[k] + 1j * draw[ORDER + k]).astype(a.dtype) for k in range(ORDER)])
        else:
            out.append([draw[k].astype(a.dtype) for k in range(ORDER)])
    return out


def _curve_derivatives(c: AdCase, args: list[Any], terms: list[list[Any]]) -> list[list[Any]]:
    """JAX: per differentiable output, its derivatives 1..ORDER along the curve."""
    override = _JAX_AD_FN.get(c.spec.name)

    def f(*dargs: Any) -> list[Any]:
        it = iter(dargs)
        full = [next(it) if d else a for a, d in zip(args, c.diff)]
        outs = [override(*full)] if override else c.spec.run_jax(full, dict(c.params))
        return [o for o, d in zip(outs, c.diff_out) if d]

    dargs = [a for a, d in zip(args, c.diff) if d]
    t_dtype = np.float32

    def g(t: Any) -> Any:
        xs = [x + sum(tk * t ** (k + 1) / math.factorial(k + 1) for k, tk in enumerate(ts))
              for x, ts in zip(dargs, terms)]
        return f(*[jnp.asarray(x, a.dtype) for x, a in zip(xs, dargs)])

    derivs = []
    fn = g
    for _ in range(ORDER):
        fn = functools.partial(lambda h, t: jax.jvp(h, (t,), (jnp.ones((), t_dtype),))[1], fn)
        derivs.append(fn(jnp.zeros((), t_dtype)))
    return [[derivs[k][j] for k in range(ORDER)] for j in range(len(derivs[0]))]


@functools.cache
def _jax_oracle(spec_name: str) -> tuple[list[AdCase], list[Any]]:
    spec = next(s for s in JET_SPECS if s.name == spec_name)
    cases = _ad_cases(spec)
    terms = [_terms(c) for c in cases]

    def program(all_args: Any, all_terms: Any) -> Any:
        return [_curve_derivatives(c, list(args), ts)
                for c, args, ts in zip(cases, all_args, all_terms)]

    args = [c.args for c in cases]
    outs = jax.jit(program).lower(args, terms).compile(
        compiler_options=_COMPILER_OPTIONS)(args, terms)
    return cases, [(t, [[np.asarray(x) for x in ks] for ks in o]) for t, o in zip(terms, outs)]


def _plait_series(c: AdCase, terms: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    jaxpr = one_eqn(c.spec.primitive, c.args, c.params)
    jj = jet_jaxpr(jaxpr, ORDER, c.diff, factorial_scaled=True)
    check_jaxpr(jj)
    outs = eval_jaxpr(jj, [], *c.args, *[t for ts in terms for t in ts])
    n = len(c.out_avals)
    series = outs[n:]
    return [series[i * ORDER:(i + 1) * ORDER] for i, d in enumerate(c.diff_out) if d]


@pytest.mark.parametrize("spec", JET_SPECS, ids=lambda s: s.name)
def test_jet_rule_matches_jax_curve_derivatives(spec: Any) -> None:
    cases, oracle = _jax_oracle(spec.name)
    for c, (terms, expected) in zip(cases, oracle):
        got = _plait_series(c, terms)
        assert len(got) == len(expected), c.label()
        for j, (g, e) in enumerate(zip(got, expected)):
            for k in range(ORDER):
                # (Third derivatives chain many roundings; for float16 the bound is
                # capped so that it still means something.)
                assert_close(g[k], e[k], min(c.rtol(factor=2048.0), 0.02),
                             f"{c.label()} output {j} term {k + 1}")


def test_every_primitive_has_a_jet_rule_or_is_listed() -> None:
    missing = {p.name for p in PRIMITIVES.values() if p not in jet_rules}
    assert missing == NO_JET_RULE


def test_missing_jet_rule_raises_the_uniform_error() -> None:
    c = AdCase(next(s for s in DIFF_SPECS if s.primitive is P.igamma_p), np.dtype(np.float32),
               (5,))
    with pytest.raises(RuleNotImplementedError, match=r"Jet rule for 'igamma' not "
                       r"implemented") as info:
        jet_jaxpr(c.jaxpr, 2, c.diff)
    assert "igamma" in "".join(getattr(info.value, "__notes__", []))

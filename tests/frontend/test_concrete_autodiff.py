"""Autodiff outside ``jit`` on concrete arguments: Python may branch on values, as in JAX.

JAX's autodiff tracers carry their primal values, so ``if x > 0:``, ``while err > tol:``,
``int(n)`` and ``x.item()`` work inside functions given to ``grad`` & co. when nothing
encloses them in ``jit``; ``float(x)`` of a value being differentiated is refused (its
derivative would be lost), and so is everything under ``jit``.  Each case runs the same
function with plait and with JAX 0.10.2 and compares.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import plait
from plait.errors import ConcretizationTypeError, TracerBoolConversionError
from tests.frontend.jax_oracle import JAX, PLAIT, Lib, assert_close


def branchy(L: Lib) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        if x > 0:
            return L.np.sin(x) * 2.0
        return L.np.cos(x) ** 2
    return f


def newton_sqrt(L: Lib) -> Callable[..., Any]:
    """A while loop on a value: Newton's iteration until converged."""
    def f(x: Any) -> Any:
        y, steps = x, 0
        while L.np.abs(y * y - x) > 1e-5 and steps < 50:
            y = 0.5 * (y + x / y)
            steps += 1
        return y * steps
    return f


def counted_loop(L: Lib) -> Callable[..., Any]:
    """int() and item() of values: a trip count and a test on a reduction."""
    def f(x: Any, n: Any) -> Any:
        for _ in range(int(n)):
            if x.sum().item() < 10.0:
                x = x * 1.5
        return (x ** 2).sum()
    return f


def vector_branch(L: Lib) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        out = L.np.zeros(())
        for i in range(x.shape[0]):
            out = out + (x[i] ** 3 if x[i] > 0.5 else -x[i])
        return out
    return f


def scan_then_branch(L: Lib) -> Callable[..., Any]:
    """Equations with several results (scan) before the value asked for."""
    def f(x: Any) -> Any:
        c, ys = L.lax.scan(lambda c, v: (c + v, c * v), 0.0, x)
        if c > 1.0:
            return (ys ** 2).sum() + c
        return ys.sum()
    return f


FUNS = {"branchy": branchy, "newton_sqrt": newton_sqrt, "vector_branch": vector_branch,
        "scan_then_branch": scan_then_branch}
CASES = [("branchy", np.float32(1.3)), ("branchy", np.float32(-0.7)),
         ("newton_sqrt", np.float32(2.0)), ("newton_sqrt", np.float32(0.3)),
         ("vector_branch", np.array([0.2, 0.9, 1.4], np.float32)),
         ("scan_then_branch", np.array([0.2, 0.9, 1.4], np.float32)),
         ("scan_then_branch", np.array([0.1, 0.2, 0.3], np.float32))]


def _scalar_apis(L: Lib, f: Callable[..., Any], x: Any) -> dict[str, Any]:
    lib = plait if L is PLAIT else jax
    out, f_vjp = lib.vjp(f, x)
    y, f_jvp = lib.linearize(f, x)
    return {
        "grad": lib.grad(f)(x),
        "value_and_grad": lib.value_and_grad(f)(x),
        "jvp": lib.jvp(f, (x,), (np.ones_like(x),)),
        "vjp": (out, f_vjp(np.ones_like(np.asarray(out)))),
        "linearize": (y, f_jvp(np.ones_like(x))),
        "jacfwd": lib.jacfwd(f)(x),
        "jacrev": lib.jacrev(f)(x),
        "hessian": lib.hessian(f)(x),
        "grad_of_grad": lib.grad(lib.grad(f))(x) if np.ndim(x) == 0 else None,
    }


@pytest.mark.parametrize("name, arg", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_value_dependent_python_matches_jax(name: str, arg: Any) -> None:
    want = _scalar_apis(JAX, FUNS[name](JAX), arg)
    got = _scalar_apis(PLAIT, FUNS[name](PLAIT), arg)
    for api in want:
        assert_close(got[api], want[api], rtol=1e-4, atol=1e-5)


def test_int_and_item_with_a_non_differentiated_argument() -> None:
    x = np.ones(3, np.float32)
    for n in (0, 2, 5):
        assert_close(plait.grad(counted_loop(PLAIT))(x, n), jax.grad(counted_loop(JAX))(x, n))
        # The trip count may also be a traced integer argument of jvp.
        assert_close(plait.jvp(counted_loop(PLAIT), (x, np.int32(n)),
                               (x, np.zeros((), jax.dtypes.float0)))[1],
                     jax.jvp(counted_loop(JAX), (x, np.int32(n)),
                             (x, np.zeros((), jax.dtypes.float0)))[1])


def test_the_jaxpr_follows_the_branch_taken() -> None:
    f = branchy(PLAIT)
    # Each call traces again: a program specialized to one branch is not reused for another.
    for x, want in [(1.0, 2 * np.cos(1.0)), (-1.0, -2 * np.cos(-1.0) * np.sin(-1.0)),
                    (2.0, 2 * np.cos(2.0))]:
        np.testing.assert_allclose(np.asarray(plait.grad(f)(x)), want, rtol=1e-5)


@pytest.mark.parametrize("api", ["grad", "jacfwd", "jacrev", "hessian"])
def test_under_jit_branching_on_values_still_raises(api: str) -> None:
    with pytest.raises(TracerBoolConversionError, match="boolean conversion"):
        plait.jit(getattr(plait, api)(branchy(PLAIT)))(1.0)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(getattr(jax, api)(branchy(JAX)))(1.0)


def test_float_of_a_differentiated_value_is_refused_as_in_jax() -> None:
    def uses_float_of_x(x: Any) -> Any:
        return x * float(x)

    with pytest.raises(ConcretizationTypeError, match=r"float\(\) of a value being "
                       r"differentiated, of type float32\[\]"):
        plait.grad(uses_float_of_x)(2.0)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.grad(uses_float_of_x)(2.0)
    # float() of an argument that is not differentiated is a plain Python float.
    assert_close(plait.grad(lambda x, y: x * float(y))(2.0, 3.0),
                 jax.grad(lambda x, y: x * float(y))(2.0, 3.0))
    with pytest.raises(ConcretizationTypeError, match="tolist"):
        plait.grad(lambda x: x * len(x.tolist()))(2.0)


def test_unknown_values_still_name_the_argument() -> None:
    # Inside vmap the values are per-example and unknown, in plait as in JAX.
    with pytest.raises(TracerBoolConversionError, match="boolean conversion"):
        plait.vmap(plait.grad(branchy(PLAIT)))(np.ones(3, np.float32))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.vmap(jax.grad(branchy(JAX)))(np.ones(3, np.float32))


# -- custom derivatives ---------------------------------------------------------------

def _custom_jvp(L: Lib, counts: dict[str, int]) -> Any:
    @L.custom_jvp
    def h(x: Any) -> Any:
        counts["f"] += 1
        return L.np.sin(x) if x > 0 else L.np.cos(x)

    @h.defjvp
    def h_jvp(primals: Any, tangents: Any) -> Any:
        counts["rule"] += 1
        (x,), (t,) = primals, tangents
        return h(x), (2.0 if x > 0 else 3.0) * t
    return h


def _custom_vjp(L: Lib, counts: dict[str, int]) -> Any:
    @L.custom_vjp
    def k(x: Any) -> Any:
        counts["f"] += 1
        return L.np.sin(x) if x > 0 else L.np.cos(x)

    def fwd(x: Any) -> Any:
        counts["rule"] += 1
        return k(x), x

    def bwd(r: Any, g: Any) -> Any:
        counts["rule"] += 1
        return ((2.0 if r > 0 else 3.0) * g,)
    k.defvjp(fwd, bwd)
    return k


CUSTOM = {"custom_jvp": _custom_jvp, "custom_vjp": _custom_vjp}


@pytest.mark.parametrize("kind", sorted(CUSTOM))
@pytest.mark.parametrize("x", [0.8, -0.8])
def test_custom_rules_branch_on_primal_values(kind: str, x: float) -> None:
    for api in ("grad", "value_and_grad"):
        want = getattr(jax, api)(CUSTOM[kind](JAX, {"f": 0, "rule": 0}))(x)
        got = getattr(plait, api)(CUSTOM[kind](PLAIT, {"f": 0, "rule": 0}))(x)
        assert_close(got, want)
    assert_close(CUSTOM[kind](PLAIT, {"f": 0, "rule": 0})(x),
                 CUSTOM[kind](JAX, {"f": 0, "rule": 0})(x))


@pytest.mark.parametrize("kind", sorted(CUSTOM))
def test_custom_function_called_outside_any_trace_runs_once_as_in_jax(kind: str) -> None:
    want = {"f": 0, "rule": 0}
    got = {"f": 0, "rule": 0}
    CUSTOM[kind](JAX, want)(0.5)
    CUSTOM[kind](PLAIT, got)(0.5)
    assert got == want == {"f": 1, "rule": 0}


def _run_api(lib: Any, api: str, fun: Any) -> None:
    x = 0.5
    if api == "grad":
        lib.grad(fun)(x)
    elif api == "value_and_grad":
        lib.value_and_grad(fun)(x)
    elif api == "jvp":
        lib.jvp(fun, (x,), (1.0,))
    elif api == "vjp":
        _, pullback = lib.vjp(fun, x)
        pullback(1.0)
    else:
        _, lin = lib.linearize(fun, x)
        lin(1.0)


@pytest.mark.parametrize("api", ["grad", "value_and_grad", "jvp", "vjp", "linearize"])
@pytest.mark.parametrize("kind", sorted(CUSTOM))
def test_custom_function_calls_under_autodiff_equal_jax(kind: str, api: str) -> None:
    # A rule that calls its own function on its primal inputs (JAX's documented pattern)
    # reuses the traced call: user code runs as often as in JAX.
    want = {"f": 0, "rule": 0}
    got = {"f": 0, "rule": 0}
    if kind == "custom_vjp" and api in ("jvp", "linearize"):
        # JAX refuses forward mode over custom_vjp; plait transposes bwd (docs: "Forward
        # mode through custom_vjp"), calling fwd and bwd once each, as JAX's grad does.
        with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
            _run_api(jax, api, CUSTOM[kind](JAX, {"f": 0, "rule": 0}))
        _run_api(jax, "grad", CUSTOM[kind](JAX, want))
    else:
        _run_api(jax, api, CUSTOM[kind](JAX, want))
    _run_api(plait, api, CUSTOM[kind](PLAIT, got))
    assert got == want


@pytest.mark.parametrize("kind", sorted(CUSTOM))
def test_custom_function_calls_under_second_order_no_more_than_jax(kind: str) -> None:
    # JAX runs the rule again for each order; plait traces it once and differentiates
    # the traced rule.
    want = {"f": 0, "rule": 0}
    got = {"f": 0, "rule": 0}
    assert_close(plait.grad(plait.grad(CUSTOM[kind](PLAIT, got)))(0.5),
                 jax.grad(jax.grad(CUSTOM[kind](JAX, want)))(0.5))
    assert got["f"] <= want["f"] and got["rule"] <= want["rule"], (got, want)

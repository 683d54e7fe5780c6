"""diffrax, lineax and optimistix programs, written for JAX: ``python diffrax_models.py
[name ...]`` prints, per use (all of them unless named), numbers to compare as JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import lineax  # type: ignore[import-untyped]  # (no type information)
import numpy as np
import optax
import optimistix as optx

_Y0 = jnp.array([1.0, 0.5])
_TS = jnp.linspace(0.0, 2.0, 6)


def _flat(tree: Any) -> list[float]:
    return [float(v) for leaf in jax.tree_util.tree_leaves(tree)
            for v in np.ravel(np.asarray(leaf, np.float64))]


def _damped(t: Any, y: Any, args: Any) -> Any:
    k, c = args
    return jnp.stack([y[1], -k * y[0] - c * y[1] + jnp.sin(t)])


def _adaptive_ode() -> list[float]:
    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(_damped), diffrax.Tsit5(), t0=0.0, t1=2.0, dt0=0.1, y0=_Y0,
        args=(2.0, 0.3), saveat=diffrax.SaveAt(ts=_TS, dense=True),
        stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-8))
    dense = jax.vmap(sol.evaluate)(jnp.linspace(0.1, 1.9, 4))
    return [*_flat(sol.ys), *_flat(dense), float(sol.stats["num_steps"]),
            float(sol.stats["num_accepted_steps"])]


def _gradients_and_vmap() -> list[float]:
    def final(args: Any, y0: Any, adjoint: Any) -> Any:
        sol = diffrax.diffeqsolve(diffrax.ODETerm(_damped), diffrax.Dopri5(), 0.0, 1.5, 0.05,
                                  y0, args=args, adjoint=adjoint)
        return jnp.sum(sol.ys[-1] ** 2)

    args = (jnp.array(2.0), jnp.array(0.3))
    checkpointed = jax.jit(jax.grad(final))(args, _Y0, diffrax.RecursiveCheckpointAdjoint())
    backsolve = jax.grad(final)(args, _Y0, diffrax.BacksolveAdjoint())
    direct = jax.jit(jax.grad(final, argnums=1))(args, _Y0, diffrax.DirectAdjoint())
    batch = jax.vmap(lambda y0: final(args, y0, diffrax.RecursiveCheckpointAdjoint()))(
        jnp.stack([_Y0, 2 * _Y0, -_Y0]))
    return [*_flat(checkpointed), *_flat(backsolve), *_flat(direct), *_flat(batch)]


def _stiff_and_events() -> list[float]:
    def robertson(t: Any, y: Any, args: Any) -> Any:
        a, b, c = y
        return jnp.stack([-0.04 * a + 1e4 * b * c, 0.04 * a - 1e4 * b * c - 3e7 * b ** 2,
                          3e7 * b ** 2])

    stiff = diffrax.diffeqsolve(
        diffrax.ODETerm(robertson), diffrax.Kvaerno5(), 0.0, 10.0, 1e-4,
        jnp.array([1.0, 0.0, 0.0]), saveat=diffrax.SaveAt(ts=jnp.array([1.0, 5.0, 10.0])),
        stepsize_controller=diffrax.PIDController(rtol=1e-4, atol=1e-7))

    def fall(t: Any, y: Any, args: Any) -> Any:
        return jnp.stack([y[1], -9.81])

    event = diffrax.Event(lambda t, y, args, **kw: y[0],
                          root_finder=optx.Newton(rtol=1e-6, atol=1e-6))
    landed = diffrax.diffeqsolve(diffrax.ODETerm(fall), diffrax.Tsit5(), 0.0, 5.0, 0.01,
                                 jnp.array([10.0, 0.0]), event=event)
    return [*_flat(stiff.ys), float(stiff.stats["num_steps"]), *_flat(landed.ts),
            *_flat(landed.ys)]


def _sde() -> list[float]:
    key = jax.random.key(3)
    brownian = diffrax.VirtualBrownianTree(0.0, 1.0, tol=1e-3, shape=(2,), key=key)
    terms: Any = diffrax.MultiTerm(diffrax.ODETerm(lambda t, y, args: -y),
                              diffrax.ControlTerm(lambda t, y, args: 0.2 * jnp.diag(y),
                                                  brownian))
    em = diffrax.diffeqsolve(terms, diffrax.Euler(), 0.0, 1.0, 0.01, _Y0,
                             saveat=diffrax.SaveAt(ts=jnp.linspace(0, 1, 5)))
    heun = diffrax.diffeqsolve(terms, diffrax.Heun(), 0.0, 1.0, 0.05, _Y0)
    increment = brownian.evaluate(0.2, 0.7)
    return [*_flat(em.ys), *_flat(heun.ys), *_flat(increment)]


def _neural_ode() -> list[float]:
    class Func(eqx.Module):
        mlp: eqx.nn.MLP

        def __call__(self, t: Any, y: Any, args: Any) -> Any:
            return self.mlp(y)

    model = Func(eqx.nn.MLP(2, 2, 8, 2, activation=jnp.tanh, key=jax.random.key(4)))
    targets = jnp.stack([jnp.cos(_TS), -jnp.sin(_TS)], axis=1)
    optimizer = optax.adam(3e-3)
    state = optimizer.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_jit
    def step(model: Func, state: Any) -> tuple[Func, Any, Any]:
        def loss(model: Func) -> Any:
            sol = diffrax.diffeqsolve(diffrax.ODETerm(model), diffrax.Tsit5(), 0.0, 2.0, 0.1,
                                      jnp.array([1.0, 0.0]), saveat=diffrax.SaveAt(ts=_TS))
            return jnp.mean((sol.ys - targets) ** 2)
        value, grads = eqx.filter_value_and_grad(loss)(model)
        updates, state = optimizer.update(grads, state)
        return eqx.apply_updates(model, updates), state, value

    losses = []
    for _ in range(3):
        model, state, value = step(model, state)
        losses.append(float(value))
    return [*losses, *_flat(eqx.filter(model, eqx.is_array))]


def _linear_solves() -> list[float]:
    matrix = jnp.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    b = jnp.array([1.0, -2.0, 0.5])
    spd = lineax.MatrixLinearOperator(matrix, lineax.positive_semidefinite_tag)
    general = lineax.MatrixLinearOperator(matrix)
    out = []
    for operator, solver in ((general, lineax.LU()), (general, lineax.QR()),
                             (spd, lineax.Cholesky()), (general, lineax.SVD()),
                             (spd, lineax.CG(rtol=1e-6, atol=1e-6)),
                             (general, lineax.GMRES(rtol=1e-6, atol=1e-6))):
        out += _flat(lineax.linear_solve(operator, b, solver).value)
    wide = lineax.MatrixLinearOperator(matrix[:2])
    out += _flat(lineax.linear_solve(wide, b[:2], lineax.AutoLinearSolver(well_posed=None)).value)

    def through(m: Any) -> Any:
        return jnp.sum(lineax.linear_solve(lineax.MatrixLinearOperator(m), b).value ** 2)

    out += _flat(jax.grad(through)(matrix))
    fn = lineax.FunctionLinearOperator(lambda x: matrix @ x,
                                       jax.ShapeDtypeStruct((3,), jnp.float32))
    out += _flat(lineax.linear_solve(fn, b).value)
    return out


def _nonlinear_solves() -> list[float]:
    def residual(y: Any, args: Any) -> Any:
        return jnp.stack([y[0] ** 2 + y[1] - args, y[0] - jnp.sin(y[1])])

    newton: Any = optx.root_find(residual, optx.Newton(rtol=1e-6, atol=1e-6), jnp.array([1.0, 1.0]),
                            args=2.0)
    chord: Any = optx.root_find(residual, optx.Chord(rtol=1e-6, atol=1e-6), jnp.array([1.0, 1.0]),
                           args=2.0)

    def rosenbrock(y: Any, args: Any) -> Any:
        return (1 - y[0]) ** 2 + args * (y[1] - y[0] ** 2) ** 2

    bfgs: Any = optx.minimise(rosenbrock, optx.BFGS(rtol=1e-6, atol=1e-6), jnp.array([-1.0, 1.0]),
                         args=10.0, max_steps=256)

    def model_residuals(p: Any, args: Any) -> Any:
        xs, ys = args
        return p[0] * jnp.exp(-p[1] * xs) - ys

    xs = jnp.linspace(0.0, 3.0, 12)
    ys = 2.0 * jnp.exp(-0.7 * xs) + 0.01 * jnp.sin(5 * xs)
    lm: Any = optx.least_squares(model_residuals, optx.LevenbergMarquardt(rtol=1e-6, atol=1e-6),
                            jnp.array([1.0, 1.0]), args=(xs, ys))
    fixed: Any = optx.fixed_point(lambda y, args: jnp.cos(y), optx.FixedPointIteration(
        rtol=1e-6, atol=1e-6), jnp.array(1.0), max_steps=256)
    sensitivity = jax.grad(lambda a: optx.root_find(
        residual, optx.Newton(rtol=1e-6, atol=1e-6), jnp.array([1.0, 1.0]), args=a).value[0])(2.0)
    return [*_flat(newton.value), *_flat(chord.value), *_flat(bfgs.value),
            float(bfgs.stats["num_steps"]), *_flat(lm.value), *_flat(fixed.value),
            float(sensitivity)]


def uses() -> dict[str, Callable[[], list[float]]]:
    """Each use's numbers."""
    return {"adaptive_ode": _adaptive_ode, "gradients": _gradients_and_vmap,
            "stiff_events": _stiff_and_events, "sde": _sde, "neural_ode": _neural_ode,
            "linear_solves": _linear_solves, "nonlinear_solves": _nonlinear_solves}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    return {name: run() for name, run in uses().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

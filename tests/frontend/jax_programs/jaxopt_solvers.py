"""Solvers of jaxopt, written for JAX: ``python jaxopt_solvers.py [name ...]`` prints, per
solver (all of them unless named), its solution of a fixed small problem as JSON."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

with warnings.catch_warnings():  # ("JAXopt is no longer maintained")
    warnings.simplefilter("ignore", DeprecationWarning)
    import jaxopt
    from jaxopt import objective
    from jaxopt.projection import projection_box
    from jaxopt.prox import prox_lasso

_rng = np.random.RandomState(0)
_X = _rng.randn(40, 5).astype(np.float32)
_Y = (_X @ _rng.randn(5).astype(np.float32) + 0.1 * _rng.randn(40)).astype(np.float32)
_W0 = np.zeros(5, np.float32)


def _ridge(w: Any, l2: Any) -> Any:
    return jnp.mean((_X @ w - _Y) ** 2) + l2 * jnp.sum(w ** 2)


def _residual(w: Any) -> Any:
    return _X @ w - _Y


def _implicit_jacobian() -> Any:
    def solution(l2: Any) -> Any:
        return jaxopt.LBFGS(_ridge, maxiter=100, tol=1e-6).run(_W0, l2=l2).params
    return jax.jacobian(solution)(0.1)


def _osqp() -> Any:
    q, c = jnp.eye(2) * 2.0, jnp.array([-2.0, -5.0])
    g, h = jnp.array([[1.0, 2.0], [-1.0, 2.0]]), jnp.array([6.0, 2.0])
    return jaxopt.OSQP(maxiter=200).run(params_obj=(q, c), params_ineq=(g, h)).params.primal


def solvers() -> dict[str, Callable[[], Any]]:
    """A spread of jaxopt's solvers, each a function giving numbers to compare."""
    return {
        "gradient_descent": lambda: jaxopt.GradientDescent(_ridge, maxiter=50).run(
            _W0, l2=0.1).params,
        "lbfgs": lambda: jaxopt.LBFGS(_ridge, maxiter=50).run(_W0, l2=0.1).params,
        "bfgs": lambda: jaxopt.BFGS(_ridge, maxiter=50).run(_W0, l2=0.1).params,
        "nonlinear_cg": lambda: jaxopt.NonlinearCG(_ridge, maxiter=30).run(_W0, l2=0.1).params,
        "scipy_minimize": lambda: jaxopt.ScipyMinimize(fun=_ridge, method="L-BFGS-B",
                                                       maxiter=50).run(_W0, l2=0.1).params,
        "implicit_jacobian": _implicit_jacobian,
        "lasso": lambda: jaxopt.ProximalGradient(
            fun=lambda w, d: jnp.mean((_X @ w - _Y) ** 2), prox=prox_lasso, maxiter=100).run(
            _W0, hyperparams_prox=0.05, d=None).params,
        "box": lambda: jaxopt.ProjectedGradient(fun=lambda w: _ridge(w, 0.0),
                                                projection=projection_box, maxiter=50).run(
            _W0, hyperparams_proj=(-0.5, 0.5)).params,
        "logreg": lambda: jaxopt.LBFGS(objective.binary_logreg, maxiter=50).run(
            _W0, data=(_X, (_Y > 0).astype(np.int32))).params,
        "bisection": lambda: jaxopt.Bisection(lambda x: x ** 3 - 2.0, lower=0.0,
                                              upper=2.0).run().params,
        "osqp": _osqp,
        "gauss_newton": lambda: jaxopt.GaussNewton(_residual, maxiter=10).run(_W0).params,
        "levenberg_marquardt": lambda: jaxopt.LevenbergMarquardt(_residual, maxiter=10).run(
            _W0).params,
        "polyak_sgd": lambda: jaxopt.PolyakSGD(lambda w, d: _ridge(w, 0.1), maxiter=30).run(
            _W0, d=None).params,
        "anderson": lambda: jaxopt.AndersonAcceleration(
            lambda x, theta: 0.5 * jnp.cos(x) + theta, maxiter=50, tol=1e-6).run(
            jnp.zeros(3), jnp.ones(3)).params,
    }


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The solutions of the solvers named (all by default)."""
    return {name: np.ravel(np.asarray(run(), np.float64)).tolist()
            for name, run in solvers().items() if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))

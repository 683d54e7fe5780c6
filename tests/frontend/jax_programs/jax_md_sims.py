"""Molecular dynamics with jax-md (periodic spaces, pair potentials, neighbor lists, FIRE
minimization, NVE and Nose-Hoover NVT integrators): ``python jax_md_sims.py [name ...]``
prints, per use (all of them unless named), numbers to compare as JSON."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax_md import energy, minimize, quantity, simulate, space

_N = 32
_BOX = 6.0


def _positions(seed: int) -> Any:
    key = jax.random.PRNGKey(seed)
    return jax.random.uniform(key, (_N, 2), minval=0.0, maxval=_BOX)


def _fire() -> list[float]:
    # Soft spheres relaxed by FIRE descent under jit, in a periodic box.
    displacement, shift = space.periodic(_BOX)
    energy_fn = energy.soft_sphere_pair(displacement, sigma=1.0)
    init, apply = minimize.fire_descent(energy_fn, shift, dt_start=0.01, dt_max=0.05)
    state = init(_positions(0))
    step = jax.jit(apply)
    energies = []
    for _ in range(60):
        state = step(state)
        energies.append(float(energy_fn(state.position)))
    return [*energies[::10], *np.ravel(state.position)[:8].tolist()]


def _nve_neighbors() -> list[float]:
    # Lennard-Jones with a neighbor list, integrated by velocity Verlet in a fori_loop.
    displacement, shift = space.periodic(_BOX)
    neighbor_fn, energy_fn = energy.lennard_jones_neighbor_list(
        displacement, _BOX, sigma=0.8, epsilon=0.5, r_onset=1.5, r_cutoff=2.0)
    pos = jnp.stack(jnp.meshgrid(jnp.arange(6.0), jnp.arange(6.0)), -1).reshape(-1, 2)[:_N]
    nbrs = neighbor_fn.allocate(pos)
    init, apply = simulate.nve(energy_fn, shift, dt=1e-3)
    state = init(jax.random.PRNGKey(1), pos, kT=0.1, neighbor=nbrs)

    @jax.jit
    def run(state: Any, nbrs: Any) -> Any:
        def body(_: Any, carry: Any) -> Any:
            state, nbrs = carry
            state = apply(state, neighbor=nbrs)
            return state, nbrs.update(state.position)
        return jax.lax.fori_loop(0, 40, body, (state, nbrs))
    state, nbrs = run(state, nbrs)
    e_pot = energy_fn(state.position, neighbor=nbrs)
    e_kin = quantity.kinetic_energy(momentum=state.momentum, mass=state.mass)
    return [float(e_pot), float(e_kin), float(nbrs.did_buffer_overflow),
            *np.ravel(state.position)[:6].tolist()]


def _nvt() -> list[float]:
    # Morse pairs under a Nose-Hoover thermostat, with the temperature logged by scan.
    displacement, shift = space.periodic(_BOX)
    energy_fn = energy.morse_pair(displacement, sigma=1.0, epsilon=1.0, alpha=3.0)
    init, apply = simulate.nvt_nose_hoover(energy_fn, shift, dt=5e-3, kT=0.5)
    pos = jnp.stack(jnp.meshgrid(jnp.arange(6.0), jnp.arange(6.0)), -1).reshape(-1, 2)[:_N]
    state = init(jax.random.PRNGKey(2), pos)

    def step(state: Any, _: Any) -> Any:
        state = apply(state)
        return state, quantity.temperature(momentum=state.momentum, mass=state.mass)
    state, temps = jax.jit(lambda s: jax.lax.scan(step, s, None, length=50))(state)
    return [*np.asarray(temps)[::10].tolist(), float(energy_fn(state.position))]


def _forces() -> list[float]:
    # Forces are minus the energy's gradient; the stress of a free box, by autodiff.
    displacement, _ = space.free()
    energy_fn = energy.soft_sphere_pair(displacement, sigma=1.2)
    pos = _positions(3) * 0.5
    force_fn = quantity.force(energy_fn)
    hess = jax.hessian(energy_fn)(pos[:4])
    return [*np.ravel(force_fn(pos))[:12].tolist(), *np.ravel(hess)[:12].tolist()]


def uses() -> dict[str, Callable[[], list[float]]]:
    """One use of each part of jax-md."""
    return {"fire": _fire, "nve_neighbors": _nve_neighbors, "nvt": _nvt, "forces": _forces}


def main(names: list[str] | None = None) -> dict[str, list[float]]:
    """The numbers of the uses named (all by default)."""
    with warnings.catch_warnings():
        # (jax-md sums in float64, which is float32 without x64: JAX and plait warn.)
        warnings.filterwarnings("ignore", "Explicitly requested dtype float64")
        return {name: [float(v) for v in run()] for name, run in uses().items()
                if not names or name in names}


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "results": main(sys.argv[1:])}))
